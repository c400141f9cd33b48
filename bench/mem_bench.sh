#!/usr/bin/env bash
# trainprof mem against Python (pickle.load + the viewer's peak, bench/py_mem_peak.py)
# on the largest real snapshot in ../shared/data/snapshots and on generated
# snapshots of EVENTS events each (trainprof-gensnap). Wall time and peak RSS
# from /usr/bin/time; each run checks that both give the same peak.
#
# usage: bench/mem_bench.sh [BUILD] [EVENTS...]   (default: build 5000000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
shift || true
sizes=("${@:-5000000}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tp="$build/trainprof"
gen="$build/bench/trainprof-gensnap"

measure() { # cmd... -> "cpu_seconds maxrss_kib wall_seconds" (CPU time: user + sys, steadier on a
             # shared machine than the wall time; both are single-threaded here)
  /usr/bin/time -f "%U %S %M %e" -o "$work/t" "$@" > "$work/out" 2>/dev/null
  awk '{ printf "%.2f %d %.2f\n", $1 + $2, $3, $4 }' "$work/t"
}

row() {
  local f=$1 label=$2
  local size; size=$(stat -c %s "$f")
  read -r ct cm cw < <(measure "$tp" mem --format json "$f")
  local cpeak; cpeak=$(python3 -c "import json,sys; print(json.load(open('$work/out'))[0]['devices'][0]['peak_active_bytes'])")
  read -r pt pm pw < <(measure python3 "$here/py_mem_peak.py" "$f")
  local ppeak; ppeak=$(python3 -c "import json; d=json.load(open('$work/out')); print(d[sorted(d, key=int)[0]])")
  [ "$cpeak" = "$ppeak" ] || { echo "peak mismatch on $label: trainprof $cpeak, python $ppeak" >&2; exit 1; }
  awk -v l="$label" -v s="$size" -v ct="$ct" -v cw="$cw" -v cm="$cm" -v pt="$pt" -v pw="$pw" -v pm="$pm" -v pk="$cpeak" 'BEGIN {
    printf "| %s | %.1f MiB | %.2f s (%.2f) | %.0f MiB | %.2f s (%.2f) | %.0f MiB | %.1fx | %.1fx | %s |\n",
      l, s / 1048576, ct, cw, cm / 1024, pt, pw, pm / 1024, (ct > 0 ? pt / ct : 0), pm / cm, pk }'
}

echo "| snapshot | size | trainprof CPU (wall) | RSS | Python CPU (wall) | RSS | speed-up (CPU) | memory ratio | peak (both) |"
echo "|---|---|---|---|---|---|---|---|---|"
data="$here/../../shared/data/snapshots"
if [ -d "$data" ]; then
  big=$(find "$data" -name '*.pickle' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
  row "$big" "largest real: $(basename "$(dirname "$big")")/$(basename "$big")"
fi
for n in "${sizes[@]}"; do
  "$gen" "$work/gen.pickle" "$n" 2>/dev/null
  row "$work/gen.pickle" "generated, $n events"
  rm -f "$work/gen.pickle"
done
