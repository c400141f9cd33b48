#!/usr/bin/env bash
# Merge benchmark driver (not a test).
#
#   bench/merge_bench.sh [SIZE_PER_RANK] [BUILD_DIR]     default: 250M build
#
# Times `trainprof merge` of (1) the 8 DLRM ranks in ../shared/data and
# (2) 8 generated ranks of SIZE each (gzip -1 inputs, .json.gz output),
# against the peers on the same inputs: decompressing them alone
# (gzip -dc, igzip -dc) and decompressing them plus compressing the
# concatenation at the same level (gzip -dc | gzip -1, igzip -dc | igzip -1;
# trainprof writes gzip level 1 with ISA-L when it is installed, else zlib).
# Wall seconds from date +%s%N; peak RSS from /usr/bin/time -f %M.
# The markdown report goes to stdout.
set -u -o pipefail
SIZE=${1:-250M}
BUILD_ARG=${2:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "$ROOT" && cd "$BUILD_ARG" && pwd) || { echo "no build dir $BUILD_ARG" >&2; exit 2; }
TP="$BUILD/trainprof"
GEN="$BUILD/bench/trainprof-gentrace"
OUT="$ROOT/bench/out/merge"
mkdir -p "$OUT"
have() { command -v "$1" >/dev/null 2>&1; }
now_ns() { date +%s%N; }

# time_cmd LABEL cmd... (a shell string): prints "| LABEL | secs | rss |"
time_cmd() {
    local label=$1 cmd=$2 t0 t1 rss="n/a"
    cat "${INPUTS[@]}" >/dev/null
    t0=$(now_ns)
    if [[ -x /usr/bin/time ]]; then
        /usr/bin/time -f %M -o "$OUT/time.txt" bash -c "$cmd" >/dev/null 2>"$OUT/err.txt" || { echo "FAILED: $label" >&2; cat "$OUT/err.txt" >&2; }
        rss=$(( $(tail -1 "$OUT/time.txt") / 1024 ))
    else
        bash -c "$cmd" >/dev/null 2>"$OUT/err.txt" || echo "FAILED: $label" >&2
    fi
    t1=$(now_ns)
    SECS=$(awk -v ns=$((t1 - t0)) 'BEGIN{printf "%.3f", ns/1e9}')
    printf '| %s | %s | %s |\n' "$label" "$SECS" "$rss"
}

report() {
    local title=$1
    local bytes
    bytes=$(cat "${INPUTS[@]}" | wc -c)
    echo "### $title"
    echo
    echo "Inputs: ${#INPUTS[@]} files, $bytes bytes on disk."
    echo
    echo "| command | seconds | peak RSS MiB |"
    echo "|---|---:|---:|"
    local list="${INPUTS[*]}" dec="gzip -dc" idec="igzip -dc"
    # plain inputs: reading them is all the peers do before compressing
    [[ "${INPUTS[0]}" == *.gz ]] || { dec=cat; idec=cat; }
    time_cmd "trainprof merge -o merged.json.gz" "'$TP' merge $list -o '$OUT/merged.json.gz'"
    local tp=$SECS
    time_cmd "$dec (reading alone)" "$dec $list"
    time_cmd "$dec \\| gzip -1 (read + compress)" "$dec $list | gzip -1 > '$OUT/peer.gz'"
    local gz=$SECS
    if have igzip; then
        [[ "$idec" == cat ]] || time_cmd "$idec (reading alone)" "$idec $list"
        time_cmd "$idec \\| igzip -1 (read + compress)" "$idec $list | igzip -1 > '$OUT/peer.gz'"
        local ig=$SECS
    fi
    echo
    awk -v a="$tp" -v b="$gz" -v d="$dec" 'BEGIN{printf "trainprof merge / (%s | gzip -1): %.2fx\n", d, a/b}'
    [[ -n "${ig:-}" ]] && awk -v a="$tp" -v b="$ig" -v d="$idec" 'BEGIN{printf "\ntrainprof merge / (%s | igzip -1): %.2fx\n", d, a/b}'
    echo
    "$TP" info "$OUT/merged.json.gz" | grep -E "events|size" | sed 's/^/    /'
    echo
}

DLRM="$ROOT/../shared/data/traces/param/et_replay/tests/inputs/dlrm_kineto"
if [[ -d "$DLRM" ]]; then
    INPUTS=("$DLRM"/*.json)
    report "8 DLRM ranks (../shared/data, plain JSON)"
fi

INPUTS=()
for r in 0 1 2 3 4 5 6 7; do
    f="$OUT/gen-$SIZE-rank$r.json.gz"
    if [[ ! -s "$f" || "$GEN" -nt "$f" ]]; then
        echo "generating $f ..." >&2
        "$GEN" --size "$SIZE" --seed $((r + 1)) --rank $r --world 8 -o "$OUT/tmp.json" && gzip -1 -c "$OUT/tmp.json" >"$f"
        rm -f "$OUT/tmp.json"
    fi
    INPUTS+=("$f")
done
report "8 generated ranks of $SIZE each (gzip -1)"
rm -f "$OUT/merged.json.gz" "$OUT/peer.gz"
