#!/usr/bin/env bash
# Operator-view benchmark driver (not a test).
#
#   bench/ops_bench.sh [SIZE] [BUILD_DIR]        default: 1G build
#
# On a generated trace of SIZE with nn.Module frames (trainprof-gentrace
# --modules: per kernel three cpu_ops and a runtime call, frames four deep,
# shapes on every cpu_op), in alternating rounds (BENCH_PAIRS, default 5):
# `trainprof kernels` and `trainprof ops` (by name) and `ops --by module`,
# the median wall time of each, the ratio ops / kernels, and peak RSS;
# instruction counts from `perf stat` when it works. Then the same on two
# real traces of ../shared/data: TraceLens's resnet_act_checkpoint (modules,
# shapes, backward) and timesformer (with_stack) and, when TRACELENS names a checkout
# of TraceLens (tests/tools/tracelens_oracle.py says which commit; Debian's
# python3-pandas), TraceLens on a BENCH_TL_SIZE (default 50M) generated
# trace beside `trainprof ops` on the same file, with the two tables'
# direct-time totals compared. The markdown report goes to stdout.
set -u -o pipefail
SIZE=${1:-1G}
BUILD_ARG=${2:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "$ROOT" && cd "$BUILD_ARG" && pwd) || { echo "no build dir $BUILD_ARG" >&2; exit 2; }
TP="$BUILD/trainprof"
GEN="$BUILD/bench/trainprof-gentrace"
OUT="$ROOT/bench/out/ops"
PAIRS=${BENCH_PAIRS:-5}
mkdir -p "$OUT"
say() { printf '%s\n' "$*" >&2; }
now_ns() { date +%s%N; }

# run_one OUTVAR-prefix cmd...: sets SECS and RSS (MiB) of one run
run_one() {
    local t0 t1
    t0=$(now_ns)
    if [[ -x /usr/bin/time ]]; then
        /usr/bin/time -f %M -o "$OUT/time.txt" "$@" >/dev/null 2>"$OUT/err.txt" || { say "FAILED: $*"; cat "$OUT/err.txt" >&2; }
        RSS=$(( $(tail -1 "$OUT/time.txt") / 1024 ))
    else
        "$@" >/dev/null 2>"$OUT/err.txt" || say "FAILED: $*"
        RSS=n/a
    fi
    t1=$(now_ns)
    SECS=$(awk -v ns=$((t1 - t0)) 'BEGIN{printf "%.3f", ns/1e9}')
}

median() { sort -n | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

instructions() {
    if command -v perf >/dev/null 2>&1 && perf stat -x, -e instructions true >/dev/null 2>&1; then
        perf stat -x, -e instructions -o "$OUT/perf.txt" "$@" >/dev/null 2>&1
        awk -F, '/instructions/ { if ($1 ~ /^[0-9.]+$/) printf "%.2f", $1/1e9; else printf "n/a" }' "$OUT/perf.txt"
    else
        echo n/a
    fi
}

# compare FILE LABEL: alternating rounds of kernels, ops, ops --by module
compare() {
    local file=$1 label=$2
    cat "$file" >/dev/null
    : >"$OUT/k.txt"; : >"$OUT/o.txt"; : >"$OUT/m.txt"
    local rk=0 ro=0 rm=0
    for ((i = 0; i < PAIRS; i++)); do
        run_one "$TP" kernels --format csv "$file"; echo "$SECS" >>"$OUT/k.txt"; rk=$RSS
        run_one "$TP" ops --format csv "$file"; echo "$SECS" >>"$OUT/o.txt"; ro=$RSS
        run_one "$TP" ops --by module --format csv "$file"; echo "$SECS" >>"$OUT/m.txt"; rm=$RSS
    done
    local k o m
    k=$(median <"$OUT/k.txt"); o=$(median <"$OUT/o.txt"); m=$(median <"$OUT/m.txt")
    echo
    echo "### $label"
    echo
    echo "| command | median s ($PAIRS alternating rounds) | / kernels | peak RSS MiB | / kernels | G instructions |"
    echo "|---|---:|---:|---:|---:|---:|"
    printf '| trainprof kernels | %s | 1.00 | %s | 1.00 | %s |\n' "$k" "$rk" "$(instructions "$TP" kernels --format csv "$file")"
    printf '| trainprof ops | %s | %s | %s | %s | %s |\n' "$o" "$(awk -v a="$o" -v b="$k" 'BEGIN{printf "%.2f", a/b}')" \
        "$ro" "$(awk -v a="$ro" -v b="$rk" 'BEGIN{printf "%.2f", a/b}')" "$(instructions "$TP" ops --format csv "$file")"
    printf '| trainprof ops --by module | %s | %s | %s | %s | %s |\n' "$m" "$(awk -v a="$m" -v b="$k" 'BEGIN{printf "%.2f", a/b}')" \
        "$rm" "$(awk -v a="$rm" -v b="$rk" 'BEGIN{printf "%.2f", a/b}')" \
        "$(instructions "$TP" ops --by module --format csv "$file")"
}

TRACE="$OUT/trace-$SIZE-modules.json"
if [[ ! -s "$TRACE" || "$GEN" -nt "$TRACE" ]]; then
    say "generating $TRACE ..."
    "$GEN" --size "$SIZE" --modules --seed 1 -o "$TRACE" || { say "generator failed"; exit 2; }
fi
echo "## trainprof ops (bench/ops_bench.sh $SIZE)"
echo
echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo); input $(stat -c %s "$TRACE") bytes."
compare "$TRACE" "generated, $SIZE, with nn.Module frames"

TL="$ROOT/../shared/data/traces/TraceLens/tests/traces"
REAL="$TL/mi300/resnet_act_checkpoint.json.gz"
[[ -s "$REAL" ]] && compare "$REAL" "real: TraceLens's resnet_act_checkpoint (MI300, modules, shapes, backward)"
STACKS="$TL/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
[[ -s "$STACKS" ]] && compare "$STACKS" "real: TraceLens's timesformer (H100, with_stack: 42 k Python frames of 50 k events)"

if [[ -n "${TRACELENS:-}" && -d "$TRACELENS" ]] && /usr/bin/python3 -c 'import pandas' 2>/dev/null; then
    TL_SIZE=${BENCH_TL_SIZE:-50M}
    SMALL="$OUT/trace-$TL_SIZE-modules.json"
    [[ -s "$SMALL" && ! "$GEN" -nt "$SMALL" ]] || "$GEN" --size "$TL_SIZE" --modules --seed 1 -o "$SMALL"
    cat "$SMALL" >/dev/null
    run_one "$TP" ops --top 0 --format json "$SMALL"; ts=$SECS; trss=$RSS
    "$TP" ops --top 0 --format json "$SMALL" >"$OUT/tp.json"
    run_one /usr/bin/python3 "$ROOT/tests/tools/tracelens_oracle.py" --tracelens "$TRACELENS" --trace "$SMALL"; ls=$SECS; lrss=$RSS
    /usr/bin/python3 "$ROOT/tests/tools/tracelens_oracle.py" --tracelens "$TRACELENS" --trace "$SMALL" >"$OUT/tl.json" 2>/dev/null
    agree=$(/usr/bin/python3 - "$OUT/tp.json" "$OUT/tl.json" <<'PY'
import json, sys
tp = json.load(open(sys.argv[1]))["traces"][0]
tl = json.load(open(sys.argv[2]))
nccl = sum(r["direct_ns"] for r in tp["rows"] if r["op"] == "record_param_comms") / 1e3
ours = tp["direct_ns"] / 1e3 - nccl - tp["unlinked_ns"] / 1e3
theirs = sum(r["direct_us"] for r in tl["by_name"])
print(f"direct time without NCCL launches: trainprof {ours:.1f} us, TraceLens {theirs:.1f} us")
PY
)
    echo
    echo "### against TraceLens ($TL_SIZE generated, one run each)"
    echo
    echo "| tool | s | peak RSS MiB |"
    echo "|---|---:|---:|"
    echo "| trainprof ops | $ts | $trss |"
    echo "| TraceLens TreePerfAnalyzer (launcher tables) | $ls | $lrss |"
    echo
    echo "$agree"
fi
