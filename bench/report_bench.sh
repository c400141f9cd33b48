#!/usr/bin/env bash
# Report benchmark driver (not a test): `trainprof report` against the
# commands that compute the same numbers (summary --top 20 --format json
# over the traces, mem --timeline over the snapshot, log and log --series
# over the log), in alternating rounds (PAIRS, default 5), on
#   - the 1 GiB generated trace (SIZE, default 1G) with a snapshot and a log;
#   - RANKS generated ranks (default 1000) of one ProfilerStep each.
# Prints the median wall time of each side, their ratio, peak RSS and the
# page's size, as markdown.
#
#   bench/report_bench.sh [BUILD_DIR] [SIZE] [RANKS]
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=$(cd "$ROOT" && cd "${1:-build}" && pwd) || { echo "no build dir ${1:-build}" >&2; exit 2; }
SIZE=${2:-1G}
N=${3:-1000}
PAIRS=${PAIRS:-5}
TP=$B/trainprof
OUT=$ROOT/bench/out/report
mkdir -p "$OUT/ranks"

# inputs: the trace, the ranks, a snapshot and a log the tiny trainer records
[[ -s $OUT/trace-$SIZE.json ]] || "$B/bench/trainprof-gentrace" --size "$SIZE" --seed 1 -o "$OUT/trace-$SIZE.json"
if [[ ! -f $OUT/ranks/done ]]; then
    for ((r = 0; r < N; r++)); do
        "$B/bench/trainprof-gentrace" --steps 1 --layers 1 --rank "$r" --world "$N" --seed $((r + 1)) \
            -o "$OUT/ranks/rank$r.pt.trace.json" || exit 1
    done
    touch "$OUT/ranks/done"
fi
if [[ ! -s $OUT/tiny.log ]]; then
    "$B/examples/tiny_gpt" "$ROOT/configs/tiny.yaml" --train.data="$ROOT/examples/tiny_gpt/corpus.txt" \
        --train.max_steps=20 --train.profile.enable --train.profile.start_step=2 --train.profile.end_step=4 \
        --train.profile.trace_dir="$OUT/rec" >"$OUT/tiny.log" 2>&1 || { echo "tiny_gpt failed" >&2; exit 1; }
fi
SNAP=$(ls "$OUT"/rec/*.pkl | head -1)

now() { date +%s%N; }
# the commands that compute the page's numbers, one after another; prints "secs max_rss_mib"
commands() {
    local t0 t1 rss=0 r
    t0=$(now)
    for cmd in "summary --top 20 --format json $*" "mem --format json --top 0 --timeline $OUT/tl $SNAP" \
               "log --format json $OUT/tiny.log" "log --series --format json $OUT/tiny.log"; do
        # shellcheck disable=SC2086
        /usr/bin/time -f %M -o "$OUT/time.txt" "$TP" $cmd >/dev/null 2>&1
        r=$(tail -1 "$OUT/time.txt")
        ((r > rss)) && rss=$r
    done
    t1=$(now)
    echo "$(awk -v ns=$((t1 - t0)) 'BEGIN{printf "%.3f", ns/1e9}') $((rss / 1024))"
}
report() {
    local t0 t1
    t0=$(now)
    /usr/bin/time -f %M -o "$OUT/time.txt" "$TP" report "$@" "$SNAP" "$OUT/tiny.log" -o "$OUT/page.html" >/dev/null 2>&1
    t1=$(now)
    echo "$(awk -v ns=$((t1 - t0)) 'BEGIN{printf "%.3f", ns/1e9}') $(($(tail -1 "$OUT/time.txt") / 1024))"
}
median() { sort -n | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

bench() {
    local label=$1
    shift
    : >"$OUT/c.txt"
    : >"$OUT/r.txt"
    for ((i = 0; i < PAIRS; i++)); do
        commands "$@" >>"$OUT/c.txt"
        report "$@" >>"$OUT/r.txt"
    done
    local c r
    c=$(cut -d' ' -f1 "$OUT/c.txt" | median)
    r=$(cut -d' ' -f1 "$OUT/r.txt" | median)
    printf '| %s | %s s / %s MiB | %s s / %s MiB | %s | %s |\n' "$label" "$c" "$(cut -d' ' -f2 "$OUT/c.txt" | median)" \
        "$r" "$(cut -d' ' -f2 "$OUT/r.txt" | median)" "$(awk -v a="$r" -v b="$c" 'BEGIN{printf "%.2fx", a/b}')" \
        "$(du -k "$OUT/page.html" | cut -f1) KiB"
}

echo "| inputs (+ a snapshot and a log) | summary + mem + log | report | ratio | page |"
echo "|---|---|---|---|---|"
bench "$SIZE generated trace" "$OUT/trace-$SIZE.json"
bench "$N ranks, one step each" "$OUT/ranks"
