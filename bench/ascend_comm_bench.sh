#!/usr/bin/env bash
# Ascend communication summaries across ranks: a made cluster of RANKS rank
# directories (default 16), each a communication.json of STEPS steps with
# OPS collective ops a step (default 50 x 40: 2,000 ops a rank, every one
# with its times and four transports' bytes and packet sizes), read by
# `trainprof collectives DIR` (every rank's Total Op Info per step and group,
# the groups, the slow links) and, where MSPROF_SRC names msprof-analyze's
# source, by its `cluster -m communication_time` (cluster_communication.json,
# the same Total Op Info); PAIRS alternating rounds, /usr/bin/time.
#
#   MSPROF_SRC=path/to/msprof-analyze bench/ascend_comm_bench.sh [BUILD]   (BENCH_RANKS, BENCH_STEPS, BENCH_OPS, BENCH_PAIRS)
set -euo pipefail
build=${1:-build}
ranks=${BENCH_RANKS:-16}
steps=${BENCH_STEPS:-50}
ops=${BENCH_OPS:-40}
pairs=${BENCH_PAIRS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/cluster" "$ranks" "$steps" "$ops" <<'PY'
import json, os, random, sys
out, ranks, steps, ops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
random.seed(7)
group = "9775572425051679007"
for r in range(ranks):
    d = os.path.join(out, f"node{r // 8}_{r}_ascend_pt")
    os.makedirs(os.path.join(d, "ASCEND_PROFILER_OUTPUT"))
    open(os.path.join(d, f"profiler_info_{r}.json"), "w").write("{}")
    doc = {}
    for s in range(1, steps + 1):
        coll = {}
        for k in range(ops):
            transit, wait, idle = random.uniform(0.5, 3), random.uniform(0, 5), random.uniform(0, 0.2)
            sync = wait * random.uniform(0.5, 1)
            bw = {}
            for tr, rate in (("RDMA", 12), ("HCCS", 20), ("PCIE", 5), ("SDMA", 20)):
                size = round(transit * rate * random.uniform(0.8, 1.2), 6)
                bw[tr] = {"Transit Size(MB)": size, "Transit Time(ms)": round(transit, 6),
                          "Bandwidth(GB/s)": round(size / transit, 4), "Large Packet Ratio": 1.0,
                          "Size Distribution": {"2.0": [int(size // 2), round(transit, 6)]}}
            coll[f"hcom_allReduce__007_{(s - 1) * ops + k}_1@{group}"] = {
                "Communication Time Info": {"Start Timestamp(us)": 1.7e15 + s * 1e5 + k * 100,
                                            "Elapse Time(ms)": transit + wait + idle, "Transit Time(ms)": transit,
                                            "Wait Time(ms)": wait, "Synchronization Time(ms)": sync,
                                            "Idle Time(ms)": idle, "Wait Time Ratio": round(wait / (wait + transit), 4),
                                            "Synchronization Time Ratio": round(sync / (sync + transit), 4)},
                "Communication Bandwidth Info": bw}
        doc[f"step{s}"] = {"collective": coll, "p2p": {}}
    json.dump(doc, open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication.json"), "w"))
PY
echo "cluster: $(du -sm "$work/cluster" | cut -f1) MB, $ranks ranks x $steps steps x $ops ops"
for ((r = 0; r < pairs; r++)); do
  /usr/bin/time -f "trainprof collectives: %e s wall, %U s user, %M KB peak" \
    "$build/trainprof" collectives --format json "$work/cluster" >/dev/null 2>"$work/t.err" || true
  grep "trainprof collectives" "$work/t.err"
  if [ -n "${MSPROF_SRC:-}" ]; then
    rm -rf "$work/out"
    (cd "$MSPROF_SRC" && /usr/bin/time -f "msprof-analyze cluster -m communication_time: %e s wall, %U s user, %M KB peak" \
      /usr/bin/python3 -c "from msprof_analyze.cli.entrance import msprof_analyze_cli; msprof_analyze_cli()" \
      cluster -d "$work/cluster" -m communication_time -o "$work/out" --force >/dev/null 2>"$work/m.err") || true
    grep "msprof-analyze" "$work/m.err" || tail -3 "$work/m.err"
  fi
done
