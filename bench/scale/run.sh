#!/usr/bin/env bash
# The scale benchmark: the operator's client layer and the operator itself against the
# clients users would otherwise use (the official JavaScript and Python clients,
# kubectl), on one kube-sim loaded with a generated large cluster.
#
#   bench/scale/run.sh [--quick] [--scale F] [--no-setup] [--no-record] [--only LIST]
#                      [--churn-rate N] [--churn-seconds S] [--resync-period S]
#                      [--operator-arg=ARG]...
#
#   --quick        scale 0.05 and 5 s of churn: under two minutes, for development
#   --churn-rate N ServiceMonitor patches per second offered during the churn (default
#                  2000, the rate the change→Secret target is stated at; --rate is the
#                  same). A churn figure is judged against its target only when kube-sim
#                  applied at least 95 % of the offered rate (see bench/scale/scale.py)
#   --scale F      multiplies the data set (default 1: 10,000 namespaces, 50,000 Secrets...)
#   --no-setup     skip tools/setup.sh (Debian packages, the JavaScript client)
#   --no-record    do not append the table to bench/RESULTS.md
#   --only LIST    a subset of operator,operator_metadata,js,python,kubectl,floor,agent-operator
#   --operator-arg=ARG  one more argument for agent-operator (repeatable), e.g.
#                  --operator-arg=--agent-incremental-render=false
#
# Sets up what is missing (tools/setup.sh --with-js: Debian packages and the JavaScript
# client in tests/js/node_modules), builds the release preset (build/release/), then
# runs bench/scale/scale.py, which prints the table, writes build/bench/scale.json and
# appends the table to bench/RESULTS.md. Peers missing from the machine are reported as
# "missing: <why>" and their JSON keys are null. Every process started is stopped on
# exit, Ctrl-C included.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
setup=1
args=()
for a in "$@"; do
  case "$a" in
    -h|--help) sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --no-setup) setup=0 ;;
    *) args+=("$a") ;;
  esac
done

harness=""
cleanup() {
  trap - EXIT INT TERM HUP
  if [ -n "$harness" ] && kill -0 "$harness" 2>/dev/null; then
    kill -TERM -- "-$harness" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$harness" 2>/dev/null || break; sleep 0.1; done
  fi
  # Anything still alive in the harness's group (it normally stops its children itself).
  if [ -n "$harness" ]; then kill -KILL -- "-$harness" 2>/dev/null || true; fi
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM HUP

cd "$root"
for tool in cmake ninja /usr/bin/python3 setsid; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "run.sh: $tool is missing; run tools/setup.sh first (or install it)" >&2
    exit 2
  fi
done

if [ "$setup" -eq 1 ]; then
  # Packages and the JavaScript client; a failure here (no network, no sudo) only
  # makes the peers that need them "missing" in the table.
  if ! tools/setup.sh --no-build --with-js; then
    echo "run.sh: tools/setup.sh failed; continuing, missing peers will be reported" >&2
  fi
fi

echo "run.sh: building the release preset (build/release)" >&2
if [ ! -f build/release/build.ninja ]; then
  cmake --preset release >/dev/null
fi
if ! cmake --build --preset release; then
  # The peers need only kube-sim and scale_client; the operator's rows become
  # "missing" rather than measuring a stale binary.
  echo "run.sh: the release build failed; building kube-sim and scale_client only" >&2
  cmake --build --preset release --target kube-sim scale_client
  args+=(--operator-build-failed)
fi

# The harness runs in its own session so that everything it starts can be stopped as
# one process group, whatever way this script ends.
setsid /usr/bin/python3 "$root/bench/scale/scale.py" --command "bench/scale/run.sh $*" \
  ${args[@]+"${args[@]}"} &
harness=$!
status=0
wait "$harness" || status=$?
exit "$status"
