"""Ascend's profiler database (ascend_pytorch_profiler_N.db, SQLite) read as
a trace, checked against Python's own sqlite3 reading of the same file.

All data here is MADE (no profiler database is public): small databases
written with Python's sqlite3 module in the layout msprof-analyze's queries
read (tables STRING_IDS, TASK, COMPUTE_TASK_INFO, COMMUNICATION_OP,
STEP_TIME), then cut, corrupted, compressed, given a view where a table
should be, or stripped of its tables; and a 2-rank cluster made by
tests/data/ascend_db/make_db.py (profiler databases and analysis.db), on
which msprof-analyze itself (run from its source: compute_op_sum, hccl_sum,
communication_time_sum) wrote tests/data/ascend_db/expected/*.csv."""
import csv
import shutil
import subprocess
import sys
import collections
import gzip
import json
import os
import sqlite3

from common import TRAINPROF, check, finish, run, scratch

tmp = scratch("tprof-ascend-db-")
T0 = 1735000000000000000


def make_db(path, steps=2, tasks_per_step=12, page_size=4096):
    """A rank's database: compute tasks of three types, one allReduce per step."""
    if os.path.exists(path):
        os.remove(path)
    c = sqlite3.connect(path)
    c.execute(f"PRAGMA page_size = {page_size}")
    c.executescript("""
    CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
    CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,
      globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER,
      taskId INTEGER, modelId INTEGER);
    CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER, blockDim INTEGER, mixBlockDim INTEGER,
      taskType INTEGER, opType INTEGER, inputFormats INTEGER, inputDataTypes INTEGER, inputShapes INTEGER,
      outputFormats INTEGER, outputDataTypes INTEGER, outputShapes INTEGER, attrInfo INTEGER);
    CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER, connectionId INTEGER,
      groupName INTEGER, opId INTEGER, relay INTEGER, retry INTEGER, dataType INTEGER, algType INTEGER,
      count NUMERIC, opType INTEGER);
    CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);
    """)
    names = ["MatMulV2", "Add", "NonZero", "hcom_allReduce__561_0_1", "hcom_allReduce__561_1_1", "AI_CORE",
             "AI_VECTOR_CORE", "AI_CPU", "10.0.0.1%enp_60000_0_1716", "allreduce"]
    ids = {n: i + 1 for i, n in enumerate(names)}
    c.executemany("INSERT INTO STRING_IDS VALUES (?, ?)", [(v, k) for k, v in ids.items()])
    kinds = [("MatMulV2", "AI_CORE"), ("Add", "AI_VECTOR_CORE"), ("NonZero", "AI_CPU")]
    gid = 0
    for s in range(1, steps + 1):
        base = T0 + s * 10_000_000
        c.execute("INSERT INTO STEP_TIME VALUES (?, ?, ?)", (s, base, base + 9_000_000))
        for i in range(tasks_per_step):
            gid += 1
            name, core = kinds[i % 3]
            start = base + 1000 + i * 400_000
            c.execute("INSERT INTO TASK VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                      (start, start + 50_000 + 997 * i + 13 * s, 0, gid, gid, 7, 0, 0, 2 + i % 2, gid, 0))
            c.execute("INSERT INTO COMPUTE_TASK_INFO VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                      (ids[name], gid, 20, 0, ids[core], ids[name], 0, 0, 0, 0, 0, 0, 0))
        op = ids[f"hcom_allReduce__561_{s - 1}_1"]
        c.execute("INSERT INTO COMMUNICATION_OP VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                  (op, base + 6_000_000, base + 6_750_000 + s, 0, ids["10.0.0.1%enp_60000_0_1716"], s, 0, 0, 0, 0,
                   4096, ids["allreduce"]))
    c.commit()
    c.close()


def python_model(path):
    """Per kernel name [count, total ns], per task type total ns, the steps, as SQL reads the file."""
    c = sqlite3.connect(path)
    per = collections.defaultdict(lambda: [0, 0])
    cores = collections.Counter()
    for name, core, start, end in c.execute(
            "SELECT n.value, t.value, TASK.startNs, TASK.endNs FROM COMPUTE_TASK_INFO c "
            "JOIN TASK ON TASK.globalTaskId = c.globalTaskId LEFT JOIN STRING_IDS n ON n.id = c.name "
            "LEFT JOIN STRING_IDS t ON t.id = c.taskType"):
        per[name][0] += 1
        per[name][1] += end - start
        cores[core] += end - start
    for name, start, end in c.execute("SELECT n.value, o.startNs, o.endNs FROM COMMUNICATION_OP o "
                                      "LEFT JOIN STRING_IDS n ON n.id = o.opName"):
        per[name][0] += 1
        per[name][1] += end - start
        cores["HCCL"] += end - start
    steps = [(i, e - s) for i, s, e in c.execute("SELECT id, startNs, endNs FROM STEP_TIME ORDER BY id")]
    c.close()
    return per, cores, steps


def kernels(path, *extra):
    rc, out, err = run([TRAINPROF, "kernels", "--format", "json", "--top", "0", *extra, path], timeout=60)
    check(rc == 0, f"kernels {path}: exit {rc}: {err.strip()}")
    return json.loads(out)["traces"][0] if rc == 0 else None


db = os.path.join(tmp, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT", "ascend_pytorch_profiler_0.db")
os.makedirs(os.path.dirname(db))
make_db(db)
per, cores, steps = python_model(db)

doc = kernels(db)
if doc:
    got = {k["key"]: [k["count"], k["total_ns"]] for k in doc["rows"]}
    check(got == {k: v for k, v in per.items()}, f"kernels per name as SQL reads them:\n{got}\n{dict(per)}")
    comm = [k for k in doc["rows"] if k["class"] == "communication"]
    check(len(comm) == 2 and all(k["key"].startswith("hcom_allReduce") for k in comm),
          f"the HCCL ops are communication: {comm}")
if doc:  # the task columns per kernel: COMPUTE_TASK_INFO's op type and block dim (no wait, no PMU ratios)
    tasks = {t["kernel"]: t for t in doc.get("ascend_tasks", [])}
    check(set(tasks) == {"MatMulV2", "Add", "NonZero"} and
          all(t["type"] == k and t["block_dim"] == 20 and t["count"] == per[k][0] and t.get("aic_mac_ratio") is None
              for k, t in tasks.items()),
          f"the database's op type and block dim per kernel: {tasks}")
doc = kernels(db, "--by", "category")
if doc:
    got = collections.Counter()
    for k in doc["rows"]:
        got[k["key"]] += k["total_ns"]
    check(got == cores, f"per task type (AI_CORE, AI_VECTOR_CORE, AI_CPU, HCCL): {dict(got)} vs {dict(cores)}")
rc, out, err = run([TRAINPROF, "steps", "--format", "json", db], timeout=60)
if rc == 0:
    got = [(s["number"], s["dur_ns"]) for s in json.loads(out)[0]["steps"]]
    check(got == steps, f"steps from STEP_TIME: {got} vs {steps}")
else:
    check(False, f"steps: exit {rc}: {err}")
rc, out, err = run([TRAINPROF, "info", db], timeout=60)
check(rc == 0 and "Ascend profiler database (SQLite)" in out, f"info names the form: {out}")

# OP State (newer databases: COMPUTE_TASK_INFO.opState, a STRING_IDS id): all dynamic is
# msprof-analyze's dynamic-shape finding, one static op is not; without the column, none
def dynamic_shape_findings(path):
    rc, out, err = run([TRAINPROF, "advice", "--format", "json", path], timeout=60)
    return [f for f in json.loads(out) if f["rule"] == "dynamic-shape"] if rc == 0 else None


check(dynamic_shape_findings(db) == [], "no opState column: no dynamic-shape finding")
dyn = os.path.join(tmp, "dyn", "ascend_pytorch_profiler_0.db")
os.makedirs(os.path.dirname(dyn))
make_db(dyn)
c = sqlite3.connect(dyn)
c.executescript("ALTER TABLE COMPUTE_TASK_INFO ADD COLUMN opState INTEGER;"
                "INSERT INTO STRING_IDS VALUES (100, 'dynamic'), (101, 'static');"
                "UPDATE COMPUTE_TASK_INFO SET opState = 100;")
c.commit()
found = dynamic_shape_findings(dyn)
check(found and "all 24 tasks" in found[0]["evidence"], f"every task dynamic: the finding ({found})")
c.execute("UPDATE COMPUTE_TASK_INFO SET opState = 101 WHERE rowid = 1")
c.commit()
c.close()
check(dynamic_shape_findings(dyn) == [], "one static task: no finding")

# compressed: read whole into memory and opened there (sqlite3_deserialize)
gz = os.path.join(tmp, "rank0.db.gz")
with open(db, "rb") as f, gzip.open(gz, "wb") as g:
    g.write(f.read())
doc = kernels(gz)
check(doc and {k["key"]: [k["count"], k["total_ns"]] for k in doc["rows"]} == dict(per),
      "a gzip-compressed database reads the same")

# a profiler directory with the database and the kernel table: the database is read, the table counted beside it
with open(os.path.join(os.path.dirname(db), "kernel_details.csv"), "w") as f:
    f.write("Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n1,MatMulV2,MatMul,AI_CORE,1.0,2.0\n")
rc, out, err = run([TRAINPROF, "kernels", "--format", "json", os.path.join(tmp, "rank0_ascend_pt")], timeout=60)
res = json.loads(out) if rc == 0 else []
check(rc == 0 and len(res["traces"]) == 1 and res["traces"][0]["file"].endswith(".db") and "beside" in err,
      f"a directory reads its database, the table beside it counted: {rc} {err}")

# not a profiler database
other = os.path.join(tmp, "other.db")
c = sqlite3.connect(other)
c.execute("CREATE TABLE t (x INTEGER)")
c.commit()
c.close()
rc, out, err = run([TRAINPROF, "kernels", other], timeout=60)
check(rc == 3 and "without Ascend's profiler tables" in err, f"another SQLite database: exit 3, said: {rc} {err}")

# another program's SQLite file in a run directory is not taken for a profiler database
run_dir = os.path.join(tmp, "run")
os.makedirs(os.path.join(run_dir, "rank0"))
make_db(os.path.join(run_dir, "rank0", "ascend_pytorch_profiler_0.db"))
shutil.copy(other, os.path.join(run_dir, "mlflow.db"))
rc, out, err = run([TRAINPROF, "kernels", run_dir], timeout=60)
check(rc == 0 and "1 Ascend profiler database" in err and "not recognised" in err,
      f"a directory with another SQLite file: that file skipped: {rc} {err}")

# a relative path starting with "file:" is a file, not an SQLite URI
uri_dir = os.path.join(tmp, "uri")
os.makedirs(uri_dir)
shutil.copy(db, os.path.join(uri_dir, "file:x.db"))
p = subprocess.run([os.path.abspath(TRAINPROF), "kernels", "file:x.db"], cwd=uri_dir, capture_output=True, text=True)
check(p.returncode == 0 and "MatMulV2" in p.stdout, f"a file named file:x.db: {p.returncode} {p.stderr}")

# a view where a table should be: views are off, nothing in the file runs
view = os.path.join(tmp, "view.db")
make_db(view)
c = sqlite3.connect(view)
c.executescript("ALTER TABLE TASK RENAME TO TASK_REAL; CREATE VIEW TASK AS SELECT * FROM TASK_REAL;")
c.commit()
c.close()
doc = kernels(view)
check(doc and doc["count"] == 2, f"a view named TASK is not run: only COMMUNICATION_OP's 2 ops read: {doc and doc['count']}")

# corrupt pages: an error naming the table, never a crash
bad = os.path.join(tmp, "corrupt.db")
data = bytearray(open(db, "rb").read())
for page in range(1, len(data) // 4096):  # every b-tree page but the schema's: an invalid page type
    data[page * 4096] = 0x01
open(bad, "wb").write(bytes(data))
rc, out, err = run([TRAINPROF, "kernels", bad], timeout=60)
check(rc in (3, 4) and "corrupt.db" in err and ("malformed" in err or "not a database" in err or "table" in err),
      f"a corrupt database: a clear error: {rc} {err}")

# cut short: what the pages read hold, said to be cut
cut = os.path.join(tmp, "cut.db")
open(cut, "wb").write(bytes(open(db, "rb").read()[: len(data) * 2 // 3]))
rc, out, err = run([TRAINPROF, "kernels", cut], timeout=60)
check(rc == 4 and "the database is cut short" in err, f"a cut database: exit 4, says it is cut: {rc} {err}")

# msprof-analyze's own reading of a made 2-rank cluster (expected/*.csv)
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "ascend_db")
cluster = os.path.join(tmp, "cluster")
p = subprocess.run([sys.executable, os.path.join(DATA, "make_db.py"), "--out", cluster], capture_output=True, text=True)
check(p.returncode == 0, f"make_db.py: {p.stderr}")


def expected(name):
    with open(os.path.join(DATA, "expected", name), newline="") as f:
        return list(csv.DictReader(f))


rc, out, err = run([TRAINPROF, "kernels", "--format", "json", "--top", "0", cluster], timeout=60)
check(rc == 0, f"kernels on the made cluster: {rc} {err}")
if rc == 0:
    by_rank = {int(t["label"].split()[1]): {k["key"]: k for k in t["rows"]} for t in json.loads(out)["traces"]}
    check(sorted(by_rank) == [0, 1], f"ranks 0 and 1 (RANK_DEVICE_MAP): {sorted(by_rank)}")
    rows = expected("cluster_analysis.ComputeOpPerRankStatsByOpName.csv")
    for r in rows:  # compute_op_sum: per rank and op name, count and summed ns
        k = by_rank.get(int(r["Rank"]), {}).get(r["OpName"])
        check(k is not None and k["count"] == int(r["Count"]) and k["total_ns"] == round(float(r["SumNs"])),
              f"rank {r['Rank']} {r['OpName']}: {k and (k['count'], k['total_ns'])} vs {r['Count']}, {r['SumNs']}")
    check(len(rows) >= 8, f"compute_op_sum rows compared: {len(rows)}")
    for r in expected("cluster_analysis.HcclPerRankStats.csv"):  # hccl_sum: the communication ops per rank
        ops = [k for k in by_rank.get(int(r["Rank"]), {}).values() if k["class"] == "communication"]
        check(sum(k["count"] for k in ops) == int(r["Count"]) and
              sum(k["total_ns"] for k in ops) == round(float(r["SumNs"])),
              f"rank {r['Rank']}: HCCL ops {[(k['key'], k['count'], k['total_ns']) for k in ops]} vs {r}")
rc, out, err = run([TRAINPROF, "comm", "--format", "json", cluster], timeout=60)
check(rc == 0 and "summaries and step tables read with the files beside them" in err,
      f"comm on the made cluster: analysis.db read beside its database: {rc} {err}")
if rc == 0:
    res = {int(t["label"].split()[1]): t for t in json.loads(out)}
    rows = expected("cluster_analysis.ClusterCommunicationTime.csv")
    for r in rows:  # communication_time_sum: each op's times (ms) per rank, and its Total Op Info per group
        rank = res.get(int(r["rank_id"]), {})
        total = r["hccl_op_name"] == "Total Op Info"
        ops = [o for o in rank.get("hccl_totals" if total else "hccl_ops", []) if o["step"] == r["step"] and
               (o["group"] == r["group_name"] if total else o["op"] == f"{r['hccl_op_name']}@{r['group_name']}")]
        check(len(ops) == 1 and all(abs(ops[0][c + "_ns"] / 1e6 - float(r[k])) <= 1e-6 for c, k in
                                    (("elapse", "elapsed_time"), ("transit", "transit_time"), ("wait", "wait_time"),
                                     ("sync", "synchronization_time"), ("idle", "idle_time"))),
              f"rank {r['rank_id']} {r['hccl_op_name']} {r['step']}: {ops} vs {r}")
        if total and ops:  # its ratios, rounded to 4 places (its per-op rows write 0)
            check(abs(ops[0]["wait_ratio"] - float(r["wait_time_ratio"])) <= 6e-5 and
                  abs(ops[0]["sync_ratio"] - float(r["synchronization_time_ratio"])) <= 6e-5,
                  f"rank {r['rank_id']} {r['step']} {r['group_name']}: ratios {ops[0]} vs {r}")
    check(len(rows) == 16, f"8 ops and 8 totals compared: {len(rows)}")
    # a directory holding analysis.db alone: comm reads it
    lone = os.path.join(tmp, "lone")
    os.makedirs(lone)
    shutil.copy([os.path.join(r, f) for r, _, fs in os.walk(cluster) for f in fs if f == "analysis.db"][0], lone)
    rc, out, err = run([TRAINPROF, "comm", "--format", "json", lone], timeout=60)
    check(rc == 0 and len(json.loads(out)[0].get("hccl_ops", [])) == 4, f"comm on a directory of analysis.db: {rc} {err}")
    # analysis.db alone: comm reads its summaries; kernels says who reads it
    alone = [os.path.join(r, f) for r, _, fs in os.walk(cluster) for f in fs if f == "analysis.db"][0]
    rc, out, err = run([TRAINPROF, "comm", "--format", "json", alone], timeout=60)
    check(rc == 0 and len(json.loads(out)[0].get("hccl_ops", [])) == 4, f"comm on analysis.db alone: {rc} {err}")
    rc, out, err = run([TRAINPROF, "kernels", alone], timeout=60)
    check(rc == 3 and "trainprof comm, collectives or advice read it" in err, f"kernels on analysis.db: {rc} {err}")

# the database form's step split: each rank's analysis.db StepTraceTime, as msprof-analyze's ClusterStepTraceTime
rc, out, err = run([TRAINPROF, "steps", "--format", "json", cluster], timeout=60)
got = {}
if rc == 0:
    for t in json.loads(out):
        for st in t["steps"]:
            got[(int(t["label"].split()[1]), st["number"])] = st
cols = ["computing", "communication_not_overlapped", "overlapped", "communication", "free", "stage", "bubble",
        "communication_not_overlapped_and_exclude_receive", "preparing"]
ours = ["computing_ns", "comm_not_overlapped_ns", "overlapped_ns", "communication_ns", "free_ns", "stage_ns",
        "bubble_ns", "comm_not_overlapped_exclude_receive_ns", "preparing_ns"]
rows = [r for r in expected("cluster_analysis.ClusterStepTraceTime.csv") if r["type"] == "rank"]
for r in rows:
    g = got.get((int(r["index"]), int(r["step"])), {})
    check(all(g.get(o) == round(float(r[c]) * 1000) for c, o in zip(cols, ours)) and g.get("gpu_events"),
          f"rank {r['index']} step {r['step']}: the split is analysis.db's, as msprof's ClusterStepTraceTime "
          f"({[g.get(o) for o in ours]} vs {[r[c] for c in cols]})")
check(rc == 0 and len(rows) == 4 and all(json.loads(out)[i]["split_recorded"] == 2 for i in range(2)),
      f"steps on the database cluster: {rc} {err}")
rc, out, err = run([TRAINPROF, "ranks", "--format", "json", cluster], timeout=60)
doc = json.loads(out) if rc == 0 else {}
check(rc == 0 and doc["split_recorded"] == 4 and doc["slow_rank"] == 1,
      f"ranks: msprof's slow-rank check on the databases' split names rank 1, the slower MatMul ({rc} {err} "
      f"{doc.get('split_spread')})")

# an older analysis.db: StepTraceTime without its preparing column is read, preparing 0
old_an = os.path.join(tmp, "old_analysis", "analysis.db")
os.makedirs(os.path.dirname(old_an))
c = sqlite3.connect(old_an)
c.executescript("""CREATE TABLE StepTraceTime (deviceId INTEGER, step TEXT, computing NUMERIC,
  communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC, free NUMERIC, stage NUMERIC,
  bubble NUMERIC, communication_not_overlapped_and_exclude_receive NUMERIC);
INSERT INTO StepTraceTime VALUES (0, '3', 100.5, 20, 5, 25, 10, 130.5, 0, 20);""")
c.commit()
c.close()
rc, out, err = run([TRAINPROF, "steps", "--format", "json", old_an], timeout=60)
st = json.loads(out)[0]["steps"] if rc == 0 else []
check(len(st) == 1 and st[0]["number"] == 3 and st[0]["computing_ns"] == 100500 and st[0]["preparing_ns"] == 0,
      f"an analysis.db without preparing: its StepTraceTime read ({rc} {err} {st})")

# a schema row that hides a virtual table from a text match ("CREATE  VIRTUAL"): no module runs over the file
vt = os.path.join(tmp, "virtual.db")
c = sqlite3.connect(vt)
try:
    c.execute("CREATE VIRTUAL TABLE TASK USING fts5(x)")
    c.executescript("CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);"
                    "CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER);"
                    "INSERT INTO TASK VALUES ('a');")
    c.commit()
    c.execute("PRAGMA writable_schema=ON")
    c.execute("UPDATE sqlite_master SET sql='CREATE  VIRTUAL TABLE TASK USING fts5(x)' WHERE name='TASK'")
    c.commit()
    fts = True
except sqlite3.OperationalError:
    fts = False  # this Python's SQLite has no fts5: nothing to hide
c.close()
if fts:
    rc, out, err = run([TRAINPROF, "kernels", vt], timeout=60)
    check(rc == 3 and "no such module" in err, f"a disguised virtual table: the module is not there to run ({rc} {err})")

finish("Ascend profiler databases read as traces")
