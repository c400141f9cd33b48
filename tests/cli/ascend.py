"""Ascend kernel tables (kernel_details.csv, msprof's op_summary) read as
traces, checked against an independent reading with Python's csv module.

Real data: the two kernel_details.csv files of msprof-analyze's own tests
(../shared/data/traces/msprof-analyze; one has tabs inside its quoted
timestamps, the other HCCL rows with N/A streams) and its
cluster_step_trace_time.csv (a table not read yet: a clear error). Made
here: small tables with a byte order mark, CRLF, quoted commas, newlines
and quotes in names, op_summary's column names, cut files, a malformed
row, a 20 MB table (read through the large-file path), gzip, and a
profiler output directory holding both the timeline and the table."""
import collections
import csv
import gzip
import io
import json
import os
import shutil

from common import SRC, TRAINPROF, check, device_split, finish, run, scratch, testdata, us_to_ns

tmp = scratch("tprof-ascend-")


def model(text):
    """Per kernel name: [count, total ns]; per step: [lo, hi]; as the documented rules read the table."""
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"), newline="")))
    head = [h.strip() for h in rows[0]]

    def col(*names):
        for n in names:
            if n in head:
                return head.index(n)
        return None
    ci, cs, cd, cstep = col("Name", "Op Name"), col("Start Time(us)", "Task Start Time(us)"), \
        col("Duration(us)", "Task Duration(us)"), col("Step Id")
    kernels, steps, tasks = collections.defaultdict(lambda: [0, 0]), {}, []
    for r in rows[1:]:
        if not r:
            continue
        name, ts, dur = r[ci].strip(" \t"), us_to_ns(r[cs].strip(" \t")), us_to_ns(r[cd].strip(" \t"))
        kernels[name][0] += 1
        kernels[name][1] += dur
        tasks.append((ts, ts + dur, "communication" if name.startswith("hcom_") else "compute", name))
        if cstep is not None and r[cstep].strip() not in ("", "N/A"):
            s = int(r[cstep])
            lo, hi, n = steps.get(s, (ts, ts + dur, 0))
            steps[s] = (min(lo, ts), max(hi, ts + dur), n + 1)
    return kernels, steps, tasks


def kernels_json(path, *extra):
    rc, out, err = run([TRAINPROF, "kernels", "--format", "json", "--top", "0", *extra, path])
    return rc, (json.loads(out) if rc in (0, 4) and out else None), err


def check_table(path, text, label):
    rc, doc, err = kernels_json(path)
    check(rc == 0, f"{label}: kernels exits 0 (rc {rc}: {err.strip()[:300]})")
    if not doc:
        return None
    want, steps, tasks = model(text)
    t = doc["traces"][0]
    got = {r["key"]: [r["count"], r["total_ns"]] for r in t["rows"]}
    check(got == {k: v for k, v in want.items()}, f"{label}: per-kernel counts and totals equal Python's csv reading "
          f"({len(got)} vs {len(want)} names; first differing: "
          f"{next((k for k in set(got) | set(want) if got.get(k) != want.get(k)), None)})")
    check(t["count"] == sum(v[0] for v in want.values()), f"{label}: every row is a task ({t['count']})")
    if steps:
        rc, out, err = run([TRAINPROF, "steps", "--format", "json", path])
        got_steps = {s["number"]: s for s in json.loads(out)[0]["steps"]} if rc == 0 else {}
        check(sorted(got_steps) == sorted(steps), f"{label}: the steps are the Step Id values {sorted(steps)} "
              f"(got {sorted(got_steps)})")
        for n, (lo, hi, count) in steps.items():
            s = got_steps.get(n)
            check(s is not None and (s["ts_ns"], s["dur_ns"], s["gpu_events"]) == (lo, hi - lo, count),
                  f"{label}: step {n} spans its {count} tasks from {lo}, {hi - lo} ns "
                  f"(got {s and (s['ts_ns'], s['dur_ns'], s['gpu_events'])})")
            split = device_split(tasks, lo, hi - lo)
            check(s is not None and all(s[k] == v for k, v in split.items()),
                  f"{label}: step {n}'s device split {split} (got {s and {k: s[k] for k in split}})")
    return doc


def write(name, text, encoding="utf-8"):
    path = os.path.join(tmp, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding=encoding, newline="") as f:
        f.write(text)
    return path


# ---- made: the CSV rules ----------------------------------------------------------------------

HEAD = "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim\r\n"
made = ("\ufeff" + HEAD +
        '1,4294967295,10,2,"aclnnMatmul_MatMulV2",MatMulV2,AI_CORE,"1736413971558972.912\t",185.504,1.087,16\r\n'
        '1,4294967295,11,2,"Add, fused",Add,AI_VECTOR_CORE,"1736413971559200.5\t",10.25,0,48\r\n'
        '1,4294967295,12,2,"say ""hi""\nthere",Cast,AI_CPU,1736413971559300,3.001,0,1\r\n'
        '2,4294967295,N/A,N/A,hcom_allReduce__445_5,hcom_allReduce_,HCCL,1736413971560000.25,300,2,0\r\n'
        '2,4294967295,13,2,"Add, fused",Add,AI_VECTOR_CORE,1736413971560400,9.75,0,48\r\n'
        '2,4294967295,N/A,N/A,hcom_receive__12_0,hcom_receive_,HCCL,1736413971560405,20,0,0\r\n'
        '2,4294967295,14,2,MatMul,MatMul,AI_CORE,1736413971560450,5,0,8\r\n')
p = write("made/kernel_details.csv", made)
doc = check_table(p, made, "made table")
if doc:
    keys = {r["key"]: r for r in doc["traces"][0]["rows"]}
    check('say "hi"\nthere' in keys, f"a quoted name keeps its newline and its doubled quotes ({list(keys)})")
    check(keys.get("hcom_allReduce__445_5", {}).get("class") == "communication", "HCCL's task is communication")
rc, out, err = run([TRAINPROF, "steps", "--format", "json", p])
st = json.loads(out)[0]["steps"] if rc == 0 else []
check(len(st) == 2 and st[1]["bubble_ns"] == 20000 and st[1]["overlapped_ns"] > 0 and st[1]["free_ns"] > 0,
      f"the made table's step 2 has a receive, an overlap and free time: the split is exercised ({st[1:]})")
rc, out, err = run([TRAINPROF, "comm", "--format", "json", p])
check(rc == 0 and '"AllReduce"' in out, f"comm names hcom_allReduce an AllReduce ({out[:300]} {err[:200]})")
rc, out, err = run([TRAINPROF, "advice", "--format", "json", p])
rules = {f["rule"]: f for f in json.loads(out)} if rc == 0 else {}
check(rc == 0 and "cpu-bound" not in rules, f"no cpu-bound finding without launch records ({rules})")
check("ai-cpu" not in rules, "no ai-cpu finding: the made table's AI CPU task lasts 3 us, under 20 us")
_, steps, tasks = model(made)
free = sum(device_split(tasks, lo, hi - lo)["free_ns"] for lo, hi, _ in steps.values())
dur = sum(hi - lo for lo, hi, _ in steps.values())
check(("free-time" in rules) == (free / dur >= 0.2) and
      (not rules.get("free-time") or abs(rules["free-time"]["value"] - free / dur) < 1e-9),
      f"free-time fires exactly when the device is free 20% of step time ({free / dur:.3f}: {rules.get('free-time')})")

rc, out, err = run([TRAINPROF, "report", p, "-o", os.path.join(tmp, "made.html")])
check(rc == 0 and os.path.getsize(os.path.join(tmp, "made.html")) > 10000, f"report takes a table as a trace ({rc}: {err[:300]})")
rc, out, err = run([TRAINPROF, "diff", p, p])
check(rc == 0, f"diff of a table with itself ({rc}: {err[:300]})")

# gzip, and msprof's op_summary column names with a device column
pg = os.path.join(tmp, "made/kernel_details.csv.gz")
with open(pg, "wb") as f:
    f.write(gzip.compress(made.encode()))
check_table(pg, made, "gzip table")
summary = ("Device_id,Model Name,Model ID,Task ID,Stream ID,Infer ID,Op Name,OP Type,OP State,Task Type,"
           "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim\n"
           "3,m,1,5,7,0,MatMul_1,MatMul,static,AI_CORE,100.5,20.25,0,8\n"
           "3,m,1,6,7,0,MatMul_1,MatMul,static,AI_CORE,130.5,19.75,0,8\n")
ps = write("made/op_summary_0_1.csv", summary)
check_table(ps, summary, "op_summary table")
rc, out, err = run([TRAINPROF, "kernels", "--by", "stream", "--format", "json", ps])
rows = json.loads(out)["traces"][0]["rows"] if rc == 0 else []
check([(r["device"], r["stream"], r["count"]) for r in rows] == [(3, 7, 2)],
      f"op_summary's Device_id and Stream ID are the tasks' ({rows})")
rc, out, err = run([TRAINPROF, "info", ps])
check(rc == 0 and "Ascend kernel table (CSV)" in out, f"info names the form ({out[:200]})")

# cut files: what was read is analysed, and the cut is said (the quoted newline makes the cut row line 6)
cut = made[:made.index("hcom_allReduce") + 40]  # inside the fourth task's row
pc = write("made/cut_row.csv", cut)
rc, doc, err = kernels_json(pc)
check(rc == 4 and doc and doc["traces"][0]["count"] == 3,
      f"a table cut inside a row: exit 4, the 3 whole tasks read (rc {rc}, {doc and doc['traces'][0]['count']})")
check("line 6 (byte " in err and "ends inside this row" in err, f"the cut names its line ({err.strip()[:300]})")
pq = write("made/cut_quote.csv", made[:made.index('there"')])
rc, doc, err = kernels_json(pq)
check(rc == 4 and doc and doc["traces"][0]["count"] == 2 and "quoted field" in err,
      f"a table cut inside a quoted field: exit 4, 2 tasks ({rc}, {err.strip()[:300]})")
bad = HEAD + "1,1,1,1,short\n" + made.split("\r\n", 2)[2]
pb = write("made/bad_row.csv", bad)
rc, out, err = run([TRAINPROF, "kernels", pb])
check(rc == 3 and "line 2 (byte " in err and "5 fields where the header has 11" in err,
      f"a short row in the middle: exit 3, its line, byte and field counts ({rc}: {err.strip()[:300]})")

# a large table goes through the large-file path (sniffed before any chunk is cut)
lines = [HEAD]
for i in range(400000):
    lines.append(f"{i // 100000},1,{i},{i % 3},kernel_{i % 97},T,AI_CORE,{1000000 + i * 10}.{i % 1000:03d},"
                 f"{1 + i % 7}.5,0,8\n")
big = "".join(lines)
pbig = write("made/big/kernel_details.csv", big)
check(os.path.getsize(pbig) > 16 << 20, "the large table is past the parallel reader's threshold")
check_table(pbig, big, "20 MB table")

# a profiler output directory: the timeline is read, the table of the same tasks beside it is not
out_dir = os.path.join(tmp, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
os.makedirs(out_dir)
shutil.copy(p, os.path.join(out_dir, "kernel_details.csv"))
with open(os.path.join(out_dir, "trace_view.json"), "w") as f:
    json.dump([{"ph": "X", "name": "MatMul", "pid": 1, "tid": 2, "ts": "100.0", "dur": 5,
                "args": {"Task Type": "AI_CORE"}}], f)
rc, doc, err = kernels_json(os.path.join(tmp, "rank0_ascend_pt"))
check(rc == 0 and doc and len(doc["traces"]) == 1 and doc["traces"][0]["file"].endswith("trace_view.json"),
      f"a rank directory: its trace_view.json, once ({rc}, {err.strip()[:300]})")
check("1 Ascend table or database beside its trace" in err, f"the directory line says the table was left ({err.strip()})")
rc, doc, err = kernels_json(os.path.join(tmp, "made", "big"))
check(rc == 0 and doc and len(doc["traces"]) == 1, f"a directory with a table alone reads the table ({rc})")

# dynamic shape: all tasks dynamic is a finding, one static task is not (msprof-analyze's rule)
for states, fires in ((["dynamic", "dynamic", "dynamic"], True), (["dynamic", "static", "dynamic"], False)):
    rows = "".join(f'1,4294967295,{10 + i},2,Op{i},Op,{st},AI_CORE,{1736413971559000 + 100 * i},5,0,8\r\n'
                   for i, st in enumerate(states))
    p = write(f"dyn_{fires}/kernel_details.csv",
              HEAD.replace("Type,Accelerator", "Type,OP State,Accelerator") + rows)
    rc, out, err = run([TRAINPROF, "advice", "--format", "json", p])
    found = [f for f in json.loads(out) if f["rule"] == "dynamic-shape"] if rc == 0 else None
    check(found is not None and bool(found) == fires, f"dynamic-shape with OP States {states}: {found}")

# ---- real: msprof-analyze's files ---------------------------------------------------------------
data = testdata()
if data is None:
    print("SKIP (visible): ../shared/data not found: the real kernel_details.csv checks did not run")
else:
    base = os.path.join(data, "traces/msprof-analyze/test")
    for rel in ("ut/advisor/compute_advice/data/kernel_details.csv",
                "ut/advisor/advisor_backend/compute_advice/kernel_details.csv"):
        path = os.path.join(base, rel)
        with open(path, encoding="utf-8", newline="") as f:
            check_table(path, f.read(), f"real {rel}")
    # the task columns per kernel (kernels' ascend_tasks): op type, largest Block Dim, Wait Time summed, the
    # AI Core pipeline ratios averaged over the tasks that record them, against Python's csv reading
    ratios = ["aic_mac_ratio", "aic_mte2_ratio", "aiv_vec_ratio", "aiv_mte2_ratio"]
    for rel in ("ut/advisor/compute_advice/data/kernel_details.csv",
                "ut/advisor/advisor_backend/compute_advice/kernel_details.csv"):
        path = os.path.join(base, rel)
        rc, doc, err = kernels_json(path, "--top", "0")
        got = {r["kernel"]: r for r in doc["traces"][0].get("ascend_tasks", [])} if doc else {}
        want = {}
        for r in csv.DictReader(open(path, encoding="utf-8", newline="")):
            w = want.setdefault(r["Name"], {"type": r["Type"], "count": 0, "block_dim": None, "wait_ns": 0,
                                            "sums": [0.0] * 4, "ns": [0] * 4})
            w["count"] += 1
            b, wt = r.get("Block Dim", "").strip(), r.get("Wait Time(us)", "").strip()
            if b not in ("", "N/A"):
                w["block_dim"] = max(w["block_dim"] or 0, int(b))
            if wt not in ("", "N/A"):
                w["wait_ns"] += us_to_ns(wt)
            for i, k in enumerate(ratios):
                v = (r.get(k) or "").strip()
                if v not in ("", "N/A"):
                    w["sums"][i] += float(v)
                    w["ns"][i] += 1
        bad = []
        for name, w in want.items():
            g = got.get(name, {})
            means = [w["sums"][i] / w["ns"][i] if w["ns"][i] else None for i in range(4)]
            if (g.get("type"), g.get("count"), g.get("block_dim"), g.get("wait_ns")) != \
                    (w["type"], w["count"], w["block_dim"], w["wait_ns"]) or \
                    any((m is None) != (g.get(k) is None) or (m is not None and abs(m - g[k]) > 1e-12)
                        for m, k in zip(means, ratios)):
                bad.append(name)
        check(rc == 0 and len(got) == len(want) >= 7 and not bad,
              f"{rel}: the task columns per kernel equal Python's reading ({len(got)} vs {len(want)}; differ: {bad[:3]})")

    # dynamic shape: msprof-analyze's advisor finds every op of the first file dynamic, the second records no state
    oracle = open(os.path.join(SRC, "tests/data/ascend_comm/expected/advisor_dynamic_shape_real.txt")).read()
    for rel, fires in (("ut/advisor/compute_advice/data/kernel_details.csv", True),
                       ("ut/advisor/advisor_backend/compute_advice/kernel_details.csv", False)):
        rc, out, err = run([TRAINPROF, "advice", "--format", "json", os.path.join(base, rel)])
        found = [f for f in json.loads(out) if f["rule"] == "dynamic-shape"] if rc == 0 else None
        check(found is not None and bool(found) == fires and
              (not fires or ("all 29 tasks" in found[0]["evidence"] and "Found all operators are dynamic shape" in oracle)),
              f"dynamic-shape on the real {rel}: {'fires as msprof-analyze' if fires else 'no OP State, none'} ({found})")
    path = os.path.join(base, "ut/advisor/advisor_backend/compute_advice/kernel_details.csv")
    rc, out, err = run([TRAINPROF, "comm", "--format", "json", path])
    types = {t["type"] for t in json.loads(out)[0]["types"]} if rc == 0 else set()
    check({"Broadcast", "AllReduce", "AllGather", "ReduceScatter"} <= types, f"HCCL's collectives by type ({types})")
    # kernels --by category: per accelerator core (HCCL's tasks communication, the rest compute)
    path = os.path.join(base, "ut/advisor/advisor_backend/compute_advice/kernel_details.csv")
    cores = collections.defaultdict(lambda: [0, 0])
    for r in csv.DictReader(open(path, encoding="utf-8", newline="")):
        cores[r["Accelerator Core"]][0] += 1
        cores[r["Accelerator Core"]][1] += us_to_ns(r["Duration(us)"].strip())
    rc, doc, err = kernels_json(path, "--by", "category")
    got = {r["key"]: [r["count"], r["total_ns"]] for r in doc["traces"][0]["rows"]} if doc else {}
    check(got == dict(cores) and len(cores) >= 5, f"kernels --by category: per accelerator core ({got} vs {dict(cores)})")
    check(doc and {r["key"]: r["class"] for r in doc["traces"][0]["rows"]}.get("HCCL") == "communication",
          "the HCCL core's tasks are communication")
    # advice's ai-cpu rule against the table read with Python: the AI CPU rows, their total, the longest
    path = os.path.join(base, "ut/advisor/advisor_backend/compute_advice/kernel_details.csv")
    rows = list(csv.DictReader(open(path, encoding="utf-8", newline="")))
    ai = [(us_to_ns(r["Duration(us)"].strip()), r["Name"]) for r in rows if r["Accelerator Core"] == "AI_CPU"]
    rc, out, err = run([TRAINPROF, "advice", "--format", "json", path])
    found = [f for f in json.loads(out) if f["rule"] == "ai-cpu"] if rc == 0 else []
    longest = max(ai)
    check(len(ai) == 7 and len(found) == 1 and abs(found[0]["value"] - longest[0] / 1e3) < 1e-6 and
          f"{len(ai)} AI CPU tasks" in found[0]["evidence"] and longest[1] in found[0]["evidence"],
          f"ai-cpu: the {len(ai)} AI CPU rows, the longest {longest} ({found})")
    # a timeline (trace_view.json): its tasks by their Task Type, and the ai-cpu rule on them
    path = os.path.join(base, "ut/advisor/advisor_backend/timeline_advice/trace_view.json")
    types = collections.defaultdict(lambda: [0, 0])
    for e in json.load(open(path)):
        a = e.get("args") or {}
        if e.get("ph") == "X" and "Task Type" in a:
            types[a["Task Type"]][0] += 1
            types[a["Task Type"]][1] += us_to_ns(e["dur"])
    rc, doc, err = kernels_json(path, "--by", "category")
    got = {r["key"]: [r["count"], r["total_ns"]] for r in doc["traces"][0]["rows"]} if doc else {}
    check(got == dict(types) and "AI_CPU" in types, f"a timeline's tasks by Task Type ({got} vs {dict(types)})")
    rc, out, err = run([TRAINPROF, "advice", "--format", "json", path])
    found = [f for f in json.loads(out) if f["rule"] == "ai-cpu"] if rc == 0 else []
    check(len(found) == 1 and found[0]["evidence"].startswith(f"{types['AI_CPU'][0]} AI CPU tasks"),
          f"ai-cpu on the timeline's AI CPU tasks ({found})")
    path = os.path.join(base, "resource/advisor/cluster_analysis_output/cluster_step_trace_time.csv")
    rc, out, err = run([TRAINPROF, "kernels", path])
    check(rc == 3 and "step split" in err and "use trainprof steps, ranks or advice" in err,
          f"an Ascend table of another kind: exit 3 and a hint ({rc}: {err.strip()[:300]})")

finish("Ascend kernel tables read as traces")
