#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, address + undefined sanitizers, in build/fuzz)
# and runs them. See fuzz/FUZZING.md.
#
#   tools/fuzz.sh [TARGET|all] [SECONDS]     default: all, 20 s each
#   tools/fuzz.sh [TARGET|all] replay        run every seed (regression seeds included)
#                                            once
#   tools/fuzz.sh [TARGET|all] smoke         every seed, then a fixed number of mutations
#                                            from a fixed random seed (about 5-10 s per
#                                            target): what CI runs, and the same inputs
#                                            on every run of one build
#   tools/fuzz.sh --list                     the target names
#
# Each target starts from its seed corpus fuzz/corpus/TARGET/ (read only) plus what
# earlier runs found in build/fuzz/corpus/TARGET/ (inputs that reached new code go
# there). A crash, leak, sanitizer report or timeout stops the run, leaves the input in
# build/fuzz/artifacts/TARGET/ and makes the script exit 1: add that input to the seed
# corpus as a regression seed, with a unit test, when fixing it. Extra libFuzzer options
# can be passed in FUZZ_OPTIONS (e.g. FUZZ_OPTIONS="-jobs=2 -workers=2").
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build/fuzz"
targets=(json_stream list_decoder watch_decoder yaml label_selector field_selector kubeconfig
         duration telegraf_annotation http_response)

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${targets[@]}"
  exit 0
fi
which=${1:-all}
seconds=${2:-20}
if [ "$which" != "all" ]; then
  case " ${targets[*]} " in
    *" $which "*) targets=("$which") ;;
    *) echo "fuzz.sh: unknown target $which (tools/fuzz.sh --list)" >&2; exit 2 ;;
  esac
fi

"$root/tools/setup.sh" --no-build --with-fuzz
cd "$root"
if [ ! -f "$build/build.ninja" ]; then
  cmake --preset fuzz >/dev/null
fi
cmake --build --preset fuzz -j "${FUZZ_BUILD_JOBS:-2}" >"$build.log" 2>&1 || {
  tail -n 40 "$build.log" >&2
  echo "fuzz.sh: the fuzz build failed (full log: $build.log)" >&2
  exit 1
}

status=0
printf '%-22s %12s %10s %8s  %s\n' target executions exec/s corpus result
for t in "${targets[@]}"; do
  work="$build/corpus/$t"
  artifacts="$build/artifacts/$t"
  mkdir -p "$work" "$artifacts"
  log="$build/$t.log"
  # -timeout: one input running this long is a hang. -rss_limit_mb: a leak or a
  # quadratic blow-up. -max_len: inputs past it add time, not coverage (the HTTP
  # reader's header limit is 4 KiB in its target; bodies are cut into small reads).
  max_len=65536
  [ "$t" != http_response ] || max_len=8192
  set +e
  # shellcheck disable=SC2086
  if [ "$seconds" = replay ]; then
    mode=(-runs=0)
    corpora=("$root/fuzz/corpus/$t")
  elif [ "$seconds" = smoke ]; then
    # Executions rather than seconds, from a fresh corpus directory: what is tried does
    # not depend on the machine's speed or on earlier runs. The counts give each target
    # 5-10 s at the rates of the long run below (FUZZING.md).
    case "$t" in
      http_response) runs=1500 ;;
      kubeconfig) runs=6000 ;;
      yaml | telegraf_annotation | field_selector) runs=20000 ;;
      *) runs=50000 ;;
    esac
    mode=(-seed=1 -runs="$runs")
    work="$build/smoke/$t"
    rm -rf "$work"
    mkdir -p "$work"
    corpora=("$work" "$root/fuzz/corpus/$t")
  else
    mode=(-max_total_time="$seconds")
    corpora=("$work" "$root/fuzz/corpus/$t")
  fi
  "$build/bin/fuzz_$t" "${mode[@]}" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$artifacts/" ${FUZZ_OPTIONS:-} \
    "${corpora[@]}" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  corpus=$(find "$work" -type f | wc -l)
  if [ "$rc" -eq 0 ]; then
    result=ok
  else
    result="FAILED (log: $log; input in $artifacts/)"
    status=1
  fi
  printf '%-22s %12s %10s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$corpus" "$result"
  if [ "$rc" -ne 0 ]; then
    grep -m 20 -E "ERROR|SUMMARY|runtime error|Test unit written" "$log" >&2 || tail -n 20 "$log" >&2
  fi
done
exit "$status"
