#!/usr/bin/env bash
# Ascend's profiler database: a made cluster of RANKS rank directories
# (default 2), each an ascend_pytorch_profiler_N.db in torch_npu's layout
# with TASKS compute tasks (default 300,000: TASK x COMPUTE_TASK_INFO, names
# in STRING_IDS) and MEM memory records and allocations (default 200,000:
# MEMORY_RECORD, OP_MEMORY), read by `trainprof kernels DIR` (per rank and
# name: count and total, what msprof-analyze's compute_op_sum gives),
# `trainprof mem DIR` (the peaks and the ops live at the peak) and, where
# MSPROF_SRC names msprof-analyze's source, its `cluster -m compute_op_sum`
# (pandas over the same SQL); PAIRS alternating rounds, /usr/bin/time.
#
#   MSPROF_SRC=path/to/msprof-analyze bench/ascend_db_bench.sh [BUILD]   (BENCH_RANKS, BENCH_TASKS, BENCH_MEM, BENCH_PAIRS)
set -euo pipefail
build=${1:-build}
ranks=${BENCH_RANKS:-2}
tasks=${BENCH_TASKS:-300000}
mem=${BENCH_MEM:-200000}
pairs=${BENCH_PAIRS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/cluster" "$ranks" "$tasks" "$mem" <<'PY'
import os, random, sqlite3, sys
out, ranks, tasks, mem = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
random.seed(11)
names = [f"aclnn{op}_{op}Common_{op}V{v}" for op in ("Matmul", "Add", "Mul", "Softmax", "Cast", "LayerNorm",
                                                       "FlashAttentionScore", "Transpose") for v in range(1, 26)]
cores = ["AI_CORE", "AI_VECTOR_CORE", "AI_CPU", "MIX_AIC"]
T0 = 1_700_000_000_000_000_000
for r in range(ranks):
    d = os.path.join(out, f"rank{r}_{40000 + r}_20231114221320000_ascend_pt", "ASCEND_PROFILER_OUTPUT")
    os.makedirs(d)
    open(os.path.join(os.path.dirname(d), f"profiler_info_{r}.json"), "w").write("{}")
    c = sqlite3.connect(os.path.join(d, f"ascend_pytorch_profiler_{r}.db"))
    c.executescript("""
    CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
    CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, globalTaskId INTEGER,
      globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, taskId INTEGER, modelId INTEGER);
    CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER, blockDim INTEGER, mixBlockDim INTEGER,
      taskType INTEGER, opType INTEGER, inputFormats INTEGER, inputDataTypes INTEGER, inputShapes INTEGER,
      outputFormats INTEGER, outputDataTypes INTEGER, outputShapes INTEGER, attrInfo INTEGER);
    CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);
    CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);
    CREATE TABLE MEMORY_RECORD (component INTEGER, timestamp INTEGER, totalAllocated INTEGER, totalReserved INTEGER,
      totalActive INTEGER, streamPtr INTEGER, deviceId INTEGER);
    CREATE TABLE OP_MEMORY (name INTEGER, size INTEGER, allocationTime INTEGER, releaseTime INTEGER,
      activeReleaseTime INTEGER, duration INTEGER, activeDuration INTEGER, allocationTotalAllocated INTEGER,
      allocationTotalReserved INTEGER, allocationTotalActive INTEGER, releaseTotalAllocated INTEGER,
      releaseTotalReserved INTEGER, releaseTotalActive INTEGER, streamPtr INTEGER, deviceId INTEGER);
    """)
    strings = names + cores + ["PTA", "aten::empty_strided", "aten::mm"]
    ids = {s: i + 1 for i, s in enumerate(strings)}
    c.executemany("INSERT INTO STRING_IDS VALUES (?, ?)", [(v, k) for k, v in ids.items()])
    c.execute("INSERT INTO RANK_DEVICE_MAP VALUES (?, ?)", (r, r))
    t, task_rows, info_rows = T0, [], []
    for g in range(tasks):
        dur = random.randint(2_000, 200_000)
        name = names[g % len(names)]
        task_rows.append((t, t + dur, r, g, g, 7, 0, 0, 2 + g % 3, g, 0))
        info_rows.append((ids[name], g, 20, 0, ids[cores[g % 4]], ids[name], 0, 0, 0, 0, 0, 0, 0))
        t += dur + random.randint(0, 20_000)
    c.executemany("INSERT INTO TASK VALUES (?,?,?,?,?,?,?,?,?,?,?)", task_rows)
    c.executemany("INSERT INTO COMPUTE_TASK_INFO VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", info_rows)
    steps = 10
    span = (t - T0) // steps
    c.executemany("INSERT INTO STEP_TIME VALUES (?, ?, ?)", [(s + 1, T0 + s * span, T0 + (s + 1) * span)
                                                             for s in range(steps)])
    alloc, rec, ops = 0, [], []
    for k in range(mem):
        size = random.randint(1, 64) << 20
        ts = T0 + k * 1000
        alloc += size if k % 3 else -min(alloc, size)
        rec.append((ids["PTA"], ts, alloc, alloc + (1 << 30), alloc, 0, r))
        ops.append((ids["aten::mm" if k % 2 else "aten::empty_strided"], size, ts,
                    ts + random.randint(1000, 5_000_000) if k % 5 else None, None, None, None, None, None, None,
                    None, None, None, 0, r))
    c.executemany("INSERT INTO MEMORY_RECORD VALUES (?,?,?,?,?,?,?)", rec)
    c.executemany("INSERT INTO OP_MEMORY VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", ops)
    c.commit()
    c.close()
PY
echo "cluster: $(du -sm "$work/cluster" | cut -f1) MB, $ranks ranks x $tasks tasks, $mem memory records"
for ((r = 0; r < pairs; r++)); do
  /usr/bin/time -f "trainprof kernels: %e s wall, %U s user, %M KB peak" \
    "$build/trainprof" kernels --format json "$work/cluster" >/dev/null 2>"$work/t.err" || true
  grep "trainprof kernels" "$work/t.err"
  /usr/bin/time -f "trainprof mem: %e s wall, %U s user, %M KB peak" \
    "$build/trainprof" mem --format json "$work/cluster" >/dev/null 2>"$work/t.err" || true
  grep "trainprof mem" "$work/t.err"
  if [ -n "${MSPROF_SRC:-}" ]; then
    rm -rf "$work/out"
    (cd "$MSPROF_SRC" && /usr/bin/time -f "msprof-analyze cluster -m compute_op_sum: %e s wall, %U s user, %M KB peak" \
      /usr/bin/python3 -c "from msprof_analyze.cli.entrance import msprof_analyze_cli; msprof_analyze_cli()" \
      cluster -d "$work/cluster" -m compute_op_sum -o "$work/out" --force >/dev/null 2>"$work/m.err") || true
    grep "msprof-analyze" "$work/m.err" || tail -3 "$work/m.err"
  fi
done
