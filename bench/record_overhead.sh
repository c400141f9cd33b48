#!/usr/bin/env bash
# The recording library's overhead (docs/PERFORMANCE.md, "Recording"):
#   1. ns per range begin/end pair, profiling on and off, 1 and 2 threads;
#   2. the tiny trainer's step time with and without profiling: steps 3-12
#      recorded vs the same steps unprofiled, runs alternated; the medians
#      and the fastest steps are compared (the fastest are the least disturbed
#      by other work on a shared machine).
# usage: bench/record_overhead.sh [BUILD_DIR] [RUNS]
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-5}
"$BUILD/bench/trainprof-recbench" 1000000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
step_times() { # median of steps 3..12 (the window) of one run; every step time to $tmp/all.$1
  local tag=$1; shift
  TPROF_QUIET=1 "$BUILD/examples/tiny_gpt" configs/tiny.yaml --train.max_steps=13 "$@" \
    | awk '/^step /{n=$2; sub(":","",n); n+=0; if (n>=3 && n<=12) { for(i=1;i<=NF;i++) if ($i=="step_time(s):") { v=$(i+1); sub(",","",v); print v } } }' \
    | tee -a "$tmp/all.$tag" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'
}
off=(); on=()
for r in $(seq "$RUNS"); do
  off+=("$(step_times off)")
  on+=("$(step_times on --train.profile.enable --train.profile.start_step=3 --train.profile.end_step=13 \
          --train.profile.trace_dir="$tmp" --train.profile.with_stack=false)")
done
med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
mo=$(med "${off[@]}"); mn=$(med "${on[@]}")
echo "tiny_gpt step time (median of $RUNS runs of the per-run medians of steps 3-12):"
echo "  profiling off: ${mo} s   runs: ${off[*]}"
echo "  profiling on:  ${mn} s   runs: ${on[*]}"
awk -v a="$mo" -v b="$mn" 'BEGIN{printf "  overhead (medians): %+.2f%%\n", (b-a)/a*100}'
fo=$(sort -g "$tmp/all.off" | head -1); fn=$(sort -g "$tmp/all.on" | head -1)
awk -v a="$fo" -v b="$fn" 'BEGIN{printf "  fastest step: off %s s, on %s s, overhead %+.2f%%\n", a, b, (b-a)/a*100}'
# 3. steps after the trace was written run as fast as before it (ISA-L's gzip
#    once left the AVX state dirty and doubled the step time after the write;
#    lib/io/avx.h clears it): a benchmark, not a test, since it is a timing
echo "steps before and after the trace is written (window 2-3, steps 2-9):"
TPROF_QUIET=1 "$BUILD/examples/tiny_gpt" configs/tiny.yaml --train.max_steps=9 --train.profile.enable \
  --train.profile.start_step=2 --train.profile.end_step=4 --train.profile.trace_dir="$tmp/after" \
  | awk '/^step /{for(i=1;i<=NF;i++) if ($i=="step_time(s):") { v=$(i+1); sub(",","",v); t[++n]=v } }
         END{ printf "  before the write (steps 2-4): %s %s %s s\n  after (steps 5-9): %s %s %s %s %s s\n", t[2],t[3],t[4],t[5],t[6],t[7],t[8],t[9] }'
