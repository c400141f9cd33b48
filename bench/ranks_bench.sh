#!/usr/bin/env bash
# Many-rank benchmark driver (not a test): `trainprof summary` over N
# generated ranks, and over the 1 GiB trace when bench/out has it.
#
#   bench/ranks_bench.sh [RANKS] [SIZE_PER_RANK] [BUILD_DIR] [OTHER_BUILD_DIR]
#       default: 1000 4M build
#   SIZE "1step": one ProfilerStep of one layer per rank (~330 KiB), for
#   10,000 ranks on one disk.
#
# With OTHER_BUILD_DIR, the two builds run in alternating rounds (PAIRS,
# default 9) and the median per-round ratio is printed: how issue 15's
# redesign is held to "no speed loss" on this machine, whose speed drifts.
# Wall seconds from date +%s%N, peak RSS from /usr/bin/time -f %M.
set -u -o pipefail
N=${1:-1000}
SIZE=${2:-4M}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
A=$(cd "$ROOT" && cd "${3:-build}" && pwd) || { echo "no build dir ${3:-build}" >&2; exit 2; }
B=""
if [[ -n "${4:-}" ]]; then B=$(cd "$ROOT" && cd "$4" && pwd) || { echo "no build dir $4" >&2; exit 2; }; fi
PAIRS=${PAIRS:-9}
COMMAND=${COMMAND:-summary} # the command timed: summary, or another trace command
OUT="$ROOT/bench/out/ranks-$N-$SIZE"
mkdir -p "$OUT"
if [[ ! -f "$OUT/done" ]]; then
    echo "generating $N ranks of $SIZE in $OUT" >&2
    for ((r = 0; r < N; r++)); do
        if [[ $SIZE == 1step ]]; then gen=(--steps 1 --layers 1); else gen=(--size "$SIZE"); fi
        "$A/bench/trainprof-gentrace" "${gen[@]}" --rank "$r" --world "$N" --seed $((r + 1)) \
            -o "$OUT/rank$r.pt.trace.json" || exit 1
    done
    touch "$OUT/done"
fi

# run BUILD LABEL INPUTS...: prints "secs rss_mib"
run() {
    local build=$1 t0 t1
    shift
    t0=$(date +%s%N)
    /usr/bin/time -f %M -o "$OUT/time.txt" "$build/trainprof" "$COMMAND" "$@" >/dev/null 2>"$OUT/err.txt" ||
        { echo "FAILED: $build $COMMAND" >&2; tail -3 "$OUT/err.txt" >&2; }
    t1=$(date +%s%N)
    awk -v ns=$((t1 - t0)) -v kb="$(tail -1 "$OUT/time.txt")" 'BEGIN{printf "%.3f %.0f\n", ns/1e9, kb/1024}'
}

inputs_ranks=("$OUT"/rank*.pt.trace.json)
big="$ROOT/bench/out/trace-1G.json"
echo "| input | build | wall s | peak RSS MiB |"
echo "|---|---|---|---|"
read -r s m < <(run "$A" "${inputs_ranks[@]}")
echo "| $N ranks x $SIZE | $A | $s | $m |"
if [[ -f "$big" ]]; then
    read -r s m < <(run "$A" "$big")
    echo "| 1 GiB trace | $A | $s | $m |"
fi
[[ -z "$B" ]] && exit 0

# alternating rounds: A then B, the ratio B/A per round
for label in ranks big; do
    [[ $label == big && ! -f "$big" ]] && continue
    ratios=()
    for ((i = 0; i < PAIRS; i++)); do
        if [[ $label == ranks ]]; then
            read -r sa _ < <(run "$A" "${inputs_ranks[@]}")
            read -r sb mb < <(run "$B" "${inputs_ranks[@]}")
        else
            read -r sa _ < <(run "$A" "$big")
            read -r sb mb < <(run "$B" "$big")
        fi
        ratios+=("$(awk -v a="$sa" -v b="$sb" 'BEGIN{printf "%.4f", b/a}')")
    done
    sorted=$(printf '%s\n' "${ratios[@]}" | sort -n | tr '\n' ' ')
    median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}')
    echo "$label: $B / $A over $PAIRS alternating rounds: median ${median}x (sorted: $sorted); last RSS of B ${mb} MiB"
done
