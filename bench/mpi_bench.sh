#!/usr/bin/env bash
# trainprof-mpi benchmark driver (not a test).
#
#   bench/mpi_bench.sh [BUILD_DIR]        default: build
#
# 1. The root's share over many tiny ranks (BENCH_MPI_TINY, default 10000
#    copies of one generated one-step rank, each given its own rank): what
#    `mpirun -np 2 trainprof-mpi` sends the root per rank and how long the
#    root takes to read it back, reduce and print (TPROF_MPI_STATS), for
#    kernels, summary and collectives (whose instances the processes match
#    by group among themselves: the bytes each received in those exchanges),
#    and diff of the first 1000 against the next 1000 (each trace's part),
#    beside one rank's read.
# 2. The split's parallel efficiency: BENCH_MPI_BIG (default 64) generated
#    ranks of BENCH_MPI_SIZE (default 64M), `trainprof kernels --threads 2`
#    against `mpirun -np 2 trainprof-mpi kernels --threads 1`, alternating
#    rounds (BENCH_PAIRS, default 3), median wall times and peak RSS.
# 3. merge spread: the first BENCH_MPI_MERGE (default 16) of those ranks
#    merged into one file, `trainprof merge --threads 2` against `mpirun -np
#    2 trainprof-mpi merge --threads 1` (both reads split), the outputs
#    compared byte for byte.
# BENCH_MPI_BIG=0 runs the first part alone. The markdown report goes to
# stdout; inputs stay in bench/out/mpi.
set -u -o pipefail
BUILD_ARG=${1:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "$ROOT" && cd "$BUILD_ARG" && pwd) || { echo "no build dir $BUILD_ARG" >&2; exit 2; }
TP="$BUILD/trainprof"
TPM="$BUILD/trainprof-mpi"
GEN="$BUILD/bench/trainprof-gentrace"
OUT="$ROOT/bench/out/mpi"
TINY=${BENCH_MPI_TINY:-10000}
BIG=${BENCH_MPI_BIG:-64}
SIZE=${BENCH_MPI_SIZE:-64M}
PAIRS=${BENCH_PAIRS:-3}
MPIRUN=(mpirun --allow-run-as-root --oversubscribe -x TPROF_MPI_STATS -x OMPI_MCA_btl_vader_single_copy_mechanism)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
[[ -x "$TPM" ]] || { echo "no $TPM (CMake found no MPI)" >&2; exit 2; }
mkdir -p "$OUT"

# wall seconds and peak RSS (MiB) of one run: sets SECS and RSS
timed() {
    /usr/bin/time -f "%e %M" -o "$OUT/time.txt" "$@" >/dev/null 2>"$OUT/err.txt" || { echo "FAILED: $*" >&2; cat "$OUT/err.txt" >&2; }
    read -r SECS KB < <(tail -1 "$OUT/time.txt")
    RSS=$((KB / 1024))
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# ---- 1. the root's share over many tiny ranks ----
tiny="$OUT/tiny-$TINY"
if [[ ! -f "$tiny/rank$((TINY - 1)).json" ]]; then
    mkdir -p "$tiny"
    "$GEN" --steps 1 --layers 1 --rank 0 --world "$TINY" -o "$OUT/tiny-template.json"
    python3 - "$OUT/tiny-template.json" "$tiny" "$TINY" <<'EOF'
import sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
body = open(src, "rb").read()
at = body.index(b'"rank": 0')
for r in range(n):
    with open(f"{out}/rank{r}.json", "wb") as f:
        f.write(body[:at] + b'"rank": %d' % r + body[at + 9:])
EOF
fi
echo "## trainprof-mpi"
echo
echo "### The root's share: $TINY tiny ranks ($(du -sh "$tiny" | cut -f1)), mpirun -np 2"
echo
echo "| command | trainprof | trainprof-mpi -np 2 | root: bytes received per rank | root: read back per rank | root: reduce and print | root: matching exchanges per rank |"
echo "|---|---|---|---|---|---|---|"
# diff: the first DIFF_RANKS of them against the next as many (the root holds every trace's part)
DIFF_RANKS=$((TINY < 2000 ? TINY / 2 : 1000))
diff_args=(diff --format json)
for ((r = 0; r < 2 * DIFF_RANKS; r++)); do
    ((r == DIFF_RANKS)) && diff_args+=(--vs)
    diff_args+=("$tiny/rank$r.json")
done
for cmd in kernels summary collectives diff; do
    args=("$cmd" --format json "$tiny")
    [[ $cmd == diff ]] && args=("${diff_args[@]}")
    timed "$TP" "${args[@]}"
    one="$SECS s / $RSS MiB"
    TPROF_MPI_STATS=1 timed "${MPIRUN[@]}" -np 2 "$TPM" "${args[@]}"
    spread="$SECS s / $RSS MiB"
    stats=$(grep "root: .* outcomes" "$OUT/err.txt")
    bytes=$(sed -E 's/.* ([0-9]+) bytes from.*/\1/' <<<"$stats")
    outcomes=$(sed -E 's/.*root: ([0-9]+) outcomes.*/\1/' <<<"$stats")
    readback=$(sed -E 's/.*reading theirs back ([0-9.]+) s.*/\1/' <<<"$stats")
    reduce=$(sed -E 's/.*printed in ([0-9.]+) s.*/\1/' <<<"$stats")
    xbytes=$(grep -oE "[0-9]+ bytes received in exchanges" "$OUT/err.txt" | cut -d' ' -f1)
    exchanged=$([[ -n "$xbytes" ]] && awk -v b="$xbytes" -v n="$TINY" 'BEGIN {printf "%.2f KiB", b / n / 1024}' || echo "-")
    ranks=$TINY # half of them sent by the other process
    [[ $cmd == diff ]] && ranks=$((2 * DIFF_RANKS)) cmd="diff ($DIFF_RANKS vs $DIFF_RANKS)"
    echo "| $cmd | $one | $spread | $(awk -v b="$bytes" -v n="$((ranks / 2))" 'BEGIN {printf "%.1f KiB", b / n / 1024}') | $(awk -v t="$readback" -v n="$((ranks / 2))" 'BEGIN {printf "%.0f us", t / n * 1e6}') | $reduce s | $exchanged |"
done
timed "$TP" summary --format json "$tiny/rank0.json"
echo
echo "One rank's summary alone (its read and analysis): $SECS s, $RSS MiB. (RSS of mpirun is its own.)"
echo

(( BIG > 0 )) || exit 0

# ---- 2. the split's parallel efficiency ----
big="$OUT/big-$BIG-$SIZE"
if [[ ! -f "$big/rank$((BIG - 1)).json" ]]; then
    mkdir -p "$big"
    for ((r = 0; r < BIG; r++)); do "$GEN" --size "$SIZE" --rank "$r" --world "$BIG" --seed "$((r + 1))" -o "$big/rank$r.json"; done
fi
echo "### The split: $BIG ranks of $SIZE ($(du -sh "$big" | cut -f1)), $PAIRS alternating rounds"
echo
one=() spread=()
for ((p = 0; p < PAIRS; p++)); do
    timed "$TP" kernels --threads 2 --format json "$big"; one+=("$SECS"); rss1=$RSS
    timed "${MPIRUN[@]}" -np 2 "$TPM" kernels --threads 1 --format json "$big"; spread+=("$SECS")
done
m1=$(printf '%s\n' "${one[@]}" | median)
m2=$(printf '%s\n' "${spread[@]}" | median)
echo "| run | median s | rounds |"
echo "|---|---|---|"
echo "| trainprof kernels --threads 2 | $m1 | ${one[*]} |"
echo "| mpirun -np 2 trainprof-mpi kernels --threads 1 | $m2 | ${spread[*]} |"
echo
awk -v a="$m1" -v b="$m2" 'BEGIN {printf "trainprof-mpi / trainprof: %.2fx (peak RSS of trainprof %s MiB)\n", b / a, "'"$rss1"'"}'

# ---- 3. merge spread ----
MERGE=${BENCH_MPI_MERGE:-16}
sel=()
for ((r = 0; r < MERGE && r < BIG; r++)); do sel+=("$big/rank$r.json"); done
echo
echo "### merge: $MERGE ranks of $SIZE into one file, $PAIRS alternating rounds"
echo
one=() spread=()
for ((p = 0; p < PAIRS; p++)); do
    rm -f "$OUT/merged-one.json" "$OUT/merged-spread.json"
    timed "$TP" merge --threads 2 -o "$OUT/merged-one.json" "${sel[@]}"; one+=("$SECS"); rss1=$RSS
    timed "${MPIRUN[@]}" -np 2 "$TPM" merge --threads 1 -o "$OUT/merged-spread.json" "${sel[@]}"; spread+=("$SECS")
done
m1=$(printf '%s\n' "${one[@]}" | median)
m2=$(printf '%s\n' "${spread[@]}" | median)
same=$(cmp -s "$OUT/merged-one.json" "$OUT/merged-spread.json" && echo "identical" || echo "DIFFERENT")
echo "| run | median s | rounds |"
echo "|---|---|---|"
echo "| trainprof merge --threads 2 | $m1 | ${one[*]} |"
echo "| mpirun -np 2 trainprof-mpi merge --threads 1 | $m2 | ${spread[*]} |"
echo
awk -v a="$m1" -v b="$m2" 'BEGIN {printf "trainprof-mpi / trainprof: %.2fx (peak RSS of trainprof %s MiB); the outputs: '"$same"' (%s)\n", b / a, "'"$rss1"'", "'"$(du -h "$OUT/merged-one.json" | cut -f1)"'"}'
rm -f "$OUT/merged-one.json" "$OUT/merged-spread.json"
