#!/usr/bin/env bash
# Runs each fuzz target for SECONDS (default 30) from its seed corpus in
# tests/fuzz/corpus/<target>/ (the repository's files are only read: new
# inputs go to a temporary directory). Prints each target's runs, execs/s
# and coverage (libFuzzer's final cov: and ft:), and fails on any crash,
# leak, timeout or UB report; the input that caused it is saved in
# BUILD/fuzz-artifacts/.
#
#   tests/fuzz/run.sh [BUILD [SECONDS [TARGET...]]]
#
# BUILD defaults to build-fuzz (cmake -DTPROF_FUZZ=ON with clang), TARGET to
# every target. FUZZ_MAX_LEN (default 4096) bounds the inputs; fuzz_log reads
# up to twice that, so that its 5000-deep seed line is whole.
# FUZZ_TRACE_PARALLEL=1 makes fuzz_trace read every input in parallel chunks
# too, not one in 8 (slower: it starts threads).
set -uo pipefail
build=${1:-build-fuzz}
secs=${2:-30}
shift 2 2>/dev/null || shift $#
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_json fuzz_trace fuzz_merge fuzz_log fuzz_pickle fuzz_config fuzz_op_cost fuzz_csv)
max_len=${FUZZ_MAX_LEN:-4096}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
failed=()
summary=()
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/$t"
  seeds="$here/corpus/${t#fuzz_}"
  if [ ! -x "$bin" ]; then echo "fuzz: $bin is not built" >&2; failed+=("$t (not built)"); continue; fi
  len=$max_len
  [ "$t" = fuzz_log ] && len=$((2 * max_len))
  mkdir -p "$work/$t"
  echo "fuzz: $t for ${secs}s (max_len $len, $(ls "$seeds" 2>/dev/null | wc -l) seeds)"
  "$bin" -max_total_time="$secs" -max_len="$len" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$t-" "$work/$t" "$seeds" >"$work/$t.log" 2>&1
  rc=$?
  runs=$(sed -nE "s/^stat::number_of_executed_(runs|units): *//p" "$work/$t.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$t.log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$work/$t.log" | tail -1)
  line=$(printf '%-12s %9s runs %7s execs/s  %s' "$t" "${runs:-?}" "${rate:-?}" "${cov:-no stats}")
  summary+=("$line")
  if [ $rc -ne 0 ]; then
    tail -60 "$work/$t.log"
    saved=$(grep -oE "$artifacts/$t-[a-z]+-[0-9a-f]+" "$work/$t.log" | sort -u | tr '\n' ' ')
    echo "fuzz: $t FAILED (exit $rc); input saved: ${saved:-none}"
    failed+=("$t")
  else
    echo "fuzz: $line"
  fi
done
echo "fuzz: summary (${secs}s each, max_len $max_len):"
printf 'fuzz:   %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: no crash"
