#!/usr/bin/env bash
# The test command (CI runs it through .ci/run): installs what is missing, builds, and
# runs every test. Exits non-zero on any failure.
#
#   1. dev build of the shipped binaries (agent-operator, kube-sim), the benchmarks and
#      the scale test, and the tests of those artifacts: container image and manifests
#      (deploy), tools/demo.sh (demo), kubectl and the official clients against kube-sim
#      (fidelity), the 10,000-namespace telegraf run (scale)
#   2. asan preset (AddressSanitizer + UndefinedBehaviorSanitizer): every other test
#      (labels unit, sim, integration, golden, lint), the runs on a real kube-apiserver
#      (integration-real) included. Each test binary is compiled once, sanitized.
#   3. tsan preset (ThreadSanitizer): the net and runtime tests
#   4. fuzz smoke: every libFuzzer target over its seed corpus, regression seeds
#      included, then a fixed number of mutations from a fixed random seed
#      (tools/fuzz.sh all smoke: the same inputs on every run of one build; longer
#      exploration is tools/fuzz.sh all SECONDS, see fuzz/FUZZING.md)
#
# Extra arguments, or AOP_TEST_QUICK=1, run the developer's loop instead: the whole dev
# build and every test on it, unsanitized, with the arguments passed to ctest
# (tools/test.sh -R informer, tools/test.sh -L unit); stages 2-4 are skipped.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
full=1
if [ $# -gt 0 ] || [ "${AOP_TEST_QUICK:-0}" = 1 ]; then full=0; fi
jobs=$(nproc)

stage() { echo "== tools/test.sh: $* ($(date +%T))"; }

# The labels of the artifact tests stage 1 runs in CI, and what they need built.
artifact_labels='fidelity|deploy|demo|scale'
artifact_targets=(agent-operator kube-sim telegraf_scale_sim_test benchmarks)

setup_args=(--preset dev --with-js)
if [ "$full" -eq 1 ]; then
  setup_args+=(--with-fuzz)
  for t in "${artifact_targets[@]}"; do setup_args+=(--target "$t"); done
  stage "1/4 dev build of the shipped binaries, and their tests"
else
  stage "dev build and every test"
fi
"$root/tools/setup.sh" "${setup_args[@]}"
cd "$root"
# The real API server (tests/k8s/control_plane.hpp): the integration tests run a second
# time on kube-apiserver with etcd (ctest label integration-real) when one is at hand.
# KUBEBUILDER_ASSETS or AOP_KUBE_APISERVER set by the caller win; otherwise
# ../shared/envtest/kube-apiserver beside the repository is used, with etcd from Debian.
# Without any, those runs report Skipped with the reason (see README, "Testing against a
# real API server").
if [ -z "${KUBEBUILDER_ASSETS:-}" ] && [ -z "${AOP_KUBE_APISERVER:-}" ] &&
   [ -x "$root/../shared/envtest/kube-apiserver" ]; then
  export AOP_KUBE_APISERVER
  AOP_KUBE_APISERVER=$(cd "$root/../shared/envtest" && pwd)/kube-apiserver
fi
if [ -n "${AOP_KUBE_APISERVER:-}" ] && [ -z "${KUBEBUILDER_ASSETS:-}" ] &&
   ! command -v etcd >/dev/null 2>&1 && [ ! -x /usr/bin/etcd ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "test: installing etcd-server (etcd for the real-API-server tests)"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
fi

if [ "$full" -eq 0 ]; then
  ctest --test-dir build --output-on-failure --no-tests=error -j "$jobs" "$@"
  echo "tools/test.sh: the sanitizer and fuzz stages are skipped (CI runs them)" >&2
  exit 0
fi
ctest --test-dir build --output-on-failure --no-tests=error -j "$jobs" -L "$artifact_labels"

# Sanitizer reports fail the run: UBSan aborts (-fno-sanitize-recover), ASan's leak check
# is on, TSan exits non-zero on any report.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan.supp"

stage "2/4 asan build and every other test, sanitized"
"$root/tools/setup.sh" --preset asan --build-log "$root/build/asan-build.log"
ctest --test-dir build/asan --output-on-failure --no-tests=error -j "$jobs" -LE "$artifact_labels"

stage "3/4 tsan build, net and runtime tests"
tsan_tests=(net_unit_test net_http_test runtime_unit_test runtime_sim_test)
targets=()
for t in "${tsan_tests[@]}" kube-sim; do targets+=(--target "$t"); done
"$root/tools/setup.sh" --preset tsan --build-log "$root/build/tsan-build.log" "${targets[@]}"
for t in "${tsan_tests[@]}"; do
  echo "-- $t"
  "$root/build/tsan/tests/$t" --gtest_brief=1
done

stage "4/4 fuzz smoke: every seed, then fixed-seed mutations, of every target"
"$root/tools/fuzz.sh" all smoke
stage "done"
