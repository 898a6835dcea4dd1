#!/usr/bin/env bash
# Installs what building and testing agent-operator needs on Debian 12, then configures
# and builds. Idempotent and quiet when nothing is missing. Sourced by tools/test.sh and
# tools/demo.sh; run it directly to only set up and build.
#
#   tools/setup.sh [--preset dev|release|asan|tsan|fuzz] [--no-build] [--with-js]
#                  [--with-fuzz] [--target T]... [--build-log FILE]
#
# --with-fuzz also installs clang and its libFuzzer/sanitizer runtimes (tools/fuzz.sh,
# and the fuzz smoke of tools/test.sh). --target limits the build to those targets; --build-log sends the build's output to
# FILE and prints its last lines only when the build fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
preset=dev
build=1
with_js=0
with_fuzz=0
targets=()
build_log=""
while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --with-js) with_js=1; shift ;;
    --with-fuzz) with_fuzz=1; shift ;;
    --target) targets+=(--target "$2"); shift 2 ;;
    --build-log) build_log=$2; shift 2 ;;
    *) echo "setup.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

# Debian packages. Boost 1.81 is the first Debian Boost with Boost.JSON; the default
# libboost-dev (1.74) has none. python3-kubernetes is the official Python client, used
# by the fidelity tests and benchmarks (import it with /usr/bin/python3). umoci and runc
# build and run the container image (tools/image.sh, tests/deploy/check_image.py).
packages=(
  g++ cmake ninja-build ccache pkg-config git ca-certificates curl openssl procps
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libssl-dev libyaml-cpp-dev zlib1g-dev libdeflate-dev libtomlplusplus-dev libre2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-kubernetes python3-yaml
  binutils umoci runc
)
# clang 14 with libFuzzer and the sanitizer runtimes (about 300 MB): only when fuzzing.
[ "$with_fuzz" -eq 0 ] || packages+=(clang libclang-rt-14-dev)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The official JavaScript client, into a project-local folder (never global).
if [ "$with_js" -eq 1 ]; then
  js="$root/tests/js"
  if [ ! -d "$js/node_modules/@kubernetes/client-node" ]; then
    echo "setup: installing @kubernetes/client-node into tests/js/node_modules"
    (cd "$js" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
fi

if [ "$build" -eq 1 ]; then
  cd "$root"
  case "$preset" in
    dev) dir=build ;;
    *) dir=build/$preset ;;
  esac
  if [ ! -f "$dir/build.ninja" ]; then
    cmake --preset "$preset" >/dev/null
  fi
  if [ -z "$build_log" ]; then
    cmake --build --preset "$preset" "${targets[@]}"
  elif ! cmake --build --preset "$preset" "${targets[@]}" >"$build_log" 2>&1; then
    tail -n 40 "$build_log" >&2
    echo "setup: the build failed (full log: $build_log)" >&2
    exit 1
  fi
fi
