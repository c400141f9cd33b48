"""trainprof diff against an independent computation (Python, exact decimals):
the real pairs trace_diff (control vs test) and trace_compare (base vs test),
several ranks per side on generated traces (files and directories), a trace
without steps, --fail-above both ways, the csv and json forms and bad input.
Collectives: each side's matching equals `trainprof collectives` on that side
(whose numbers tests/cli/collectives.py checks independently), on generated
ranks with another straggler on each side and on the 8 real DLRM ranks
against themselves.
Kernel names are normalised by a Python restatement of docs/METRICS.md's rules."""
import csv
import io
import json
import math
import os
import re

from common import (GENTRACE, TRAINPROF, check, dur_ns, finish, gpu_class, gpu_events, load_exact, merge,
                    need_testdata, overlap, run, scratch, steps_of, union, us_to_ns)

data = need_testdata()
H = os.path.join(data, "traces", "HolisticTraceAnalysis", "tests", "data")
PAIRS = [
    ([os.path.join(H, "trace_diff", "control", "control.json.gz")], [os.path.join(H, "trace_diff", "test", "test.json.gz")]),
    ([os.path.join(H, "trace_compare", "base", "base.json.gz")], [os.path.join(H, "trace_compare", "test", "test.json.gz")]),
]

# ---- the documented name rules, restated ----
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def skip_group(s, i, op, cl):
    depth = 0
    while i < len(s):
        if s[i] == op:
            depth += 1
        elif s[i] == cl:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def normalize(name):
    s = name[5:] if name.startswith("void ") else name
    out, i = "", 0
    while i < len(s):
        if s[i] == "<":
            out += "<>"
            i = skip_group(s, i, "<", ">")
        elif s[i] == "(" and out and (out[-1] in ALNUM or out[-1] in "_>)"):
            out += "()"
            i = skip_group(s, i, "(", ")")
        else:
            out += s[i]
            i += 1
    out = out.rstrip(" ")
    out = re.sub(r"^(?:maxwell|pascal|volta|turing|ampere|ada|hopper|blackwell|sm[0-9]+)_", "{arch}_", out)
    out = re.sub(r"(?<![A-Za-z0-9])[0-9]+(?:x[0-9]+)+(?![A-Za-z0-9])", "{tile}", out)
    return re.sub(r"(?<![A-Za-z0-9])align[0-9]+(?![A-Za-z0-9])", "align{n}", out)


# ---- one side, from the JSON ----
def trace_figures(path):
    doc = load_exact(path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    steps = steps_of(events)
    if steps:
        nsteps, step_time = len(steps), sum(d for _, d, _ in steps) // len(steps)
    else:  # one step: the trace's time span
        timed = [e for e in events if isinstance(e, dict) and e.get("ph") != "M" and "ts" in e]
        t0 = min(us_to_ns(e["ts"]) for e in timed)
        t1 = max(us_to_ns(e["ts"]) + (dur_ns(e) if "dur" in e else 0) for e in timed)
        nsteps, step_time = 1, t1 - t0
    work, comp, comm, ktotal = [], [], [], 0
    kernels = {}  # raw name -> [class, count, total]
    for e in gpu_events(doc):
        k, d = gpu_class(e), dur_ns(e)
        ktotal += d
        row = kernels.setdefault(e["name"], [k, 0, 0])
        row[1] += 1
        row[2] += d
        if k == "other":
            continue
        s = us_to_ns(e["ts"])
        work.append((s, s + d))
        if k == "compute":
            comp.append((s, s + d))
        elif k == "communication":
            comm.append((s, s + d))
    span = max(e for _, e in work) - min(s for s, _ in work) if work else 0
    busy, compute = union(work), union(comp)
    mc, mk = merge(comm), merge(comp)
    comm_ns = sum(e - s for s, e in mc)
    per = {"step_time": step_time, "kernel_time": ktotal / nsteps, "gpu_busy": busy / nsteps,
           "gpu_idle": (span - busy) / nsteps, "compute": compute / nsteps, "non_compute": (busy - compute) / nsteps,
           "comm": comm_ns / nsteps, "comm_exposed": (comm_ns - overlap(mc, mk)) / nsteps}
    return nsteps, per, kernels, len(steps) == 0


def side_figures(paths):
    metrics, steps, noste, norm = {}, 0, 0, {}
    for p in paths:
        n, per, kernels, nost = trace_figures(p)
        steps += n
        noste += nost
        for k, v in per.items():
            metrics[k] = metrics.get(k, 0) + v / len(paths)
        for raw, (cls, cnt, tot) in kernels.items():
            row = norm.setdefault(normalize(raw), {"count": 0, "total": 0, "variants": {}})
            row["count"] += cnt
            row["total"] += tot
            row["variants"][raw] = row["variants"].get(raw, 0) + tot
    return dict(metrics=metrics, steps=steps, no_steps=noste, kernels=norm, traces=len(paths))


def close(a, b):
    return a == b or (a is not None and b is not None and abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b)))


def pct(b, c):
    return 0.0 if b == 0 and c == 0 else math.inf if b == 0 else (c - b) / abs(b) * 100


def compare(base, cand, args=(), top=10, what=""):
    rc, out, err = run([TRAINPROF, "diff", "--format", "json", "--top", str(top)] + list(args))
    check(rc == 0, f"{what}: exit {rc}: {err.strip()}")
    if rc:
        return None
    g = json.loads(out)
    sides = [side_figures(base), side_figures(cand)]
    for s, key in ((0, "base"), (1, "candidate")):
        check(g[key]["steps"] == sides[s]["steps"], f"{what}: {key} steps {g[key]['steps']} != {sides[s]['steps']}")
        check(g[key]["traces"] == sides[s]["traces"], f"{what}: {key} traces")
        check(g[key]["traces_without_steps"] == sides[s]["no_steps"], f"{what}: {key} traces without steps")
    metrics = {m["name"]: m for m in g["metrics"]}
    for name, v in sides[0]["metrics"].items():
        m, w = metrics[name], sides[1]["metrics"][name]
        check(close(m["base"], v) and close(m["candidate"], w), f"{what}: {name} {m['base']}/{m['candidate']} != {v}/{w}")
        p = pct(v, w)
        check((m["delta_pct"] is None and math.isinf(p)) or close(m["delta_pct"], p), f"{what}: {name} delta_pct")
    # the phases split the step time: their CPU times add up to it (within the mean's rounding)
    if g["base"]["phases_found"]:
        for s in ("base", "candidate"):
            tot = sum(metrics[f"cpu_{p}"][s] for p in ("data", "forward", "backward", "optimizer", "other"))
            check(abs(tot - metrics["step_time"][s]) <= 1, f"{what}: {s} phases add up to {tot}, step {metrics['step_time'][s]}")
    # kernels, per normalised name
    rows = {r["name"]: r for r in g["kernels"]["rows"]}
    names = set(sides[0]["kernels"]) | set(sides[1]["kernels"])
    check(set(rows) == names, f"{what}: kernel names differ: {sorted(set(rows) ^ names)[:5]}")
    deltas = {}
    for name in names & set(rows):
        r = rows[name]
        per = []
        for s, key in ((0, "base"), (1, "candidate")):
            k = sides[s]["kernels"].get(name, {"count": 0, "total": 0, "variants": {}})
            st = sides[s]["steps"]
            got = r[key]
            check(got["count"] == k["count"] and got["total_ns"] == k["total"], f"{what}: {name} {key} count/total")
            check(close(got["total_per_step_ns"], k["total"] / st), f"{what}: {name} {key} total per step")
            check(close(got["count_per_step"], k["count"] / st), f"{what}: {name} {key} count per step")
            check(got["variants"] == len(k["variants"]), f"{what}: {name} {key} variants {got['variants']}")
            if k["variants"]:
                best = max(k["variants"].values())
                check(k["variants"].get(got["top_variant"]) == best, f"{what}: {name} {key} top variant")
            per.append(k["total"] / st)
        deltas[name] = per[1] - per[0]
        check(close(r["delta_per_step_ns"], deltas[name]), f"{what}: {name} delta")
    want_reg = sorted((n for n in deltas if deltas[n] > 0), key=lambda n: (-deltas[n], n))[:top or None]
    want_imp = sorted((n for n in deltas if deltas[n] < 0), key=lambda n: (deltas[n], n))[:top or None]
    check([r["name"] for r in g["kernels"]["regressions"]] == want_reg, f"{what}: regressions list")
    check([r["name"] for r in g["kernels"]["improvements"]] == want_imp, f"{what}: improvements list")
    only_b = [n for n in names if n not in sides[1]["kernels"]]
    only_c = [n for n in names if n not in sides[0]["kernels"]]
    check(g["kernels"]["only_base"] == len(only_b) and g["kernels"]["only_candidate"] == len(only_c),
          f"{what}: one-side counts")
    for key, names_, s in (("only_in_base", only_b, 0), ("only_in_candidate", only_c, 1)):
        want = sorted(names_, key=lambda n: (-sides[s]["kernels"][n]["total"] / sides[s]["steps"], n))[:top or None]
        check([r["name"] for r in g["kernels"][key]] == want, f"{what}: {key} list")
    return g, sides


# ---- the real pairs ----
for base, cand in PAIRS:
    res = compare(base, cand, base + cand, what=os.path.basename(os.path.dirname(os.path.dirname(base[0]))))
ctl, tst = PAIRS[0]
g, sides = compare(ctl, tst, [os.path.dirname(ctl[0]), "--vs", os.path.dirname(tst[0])], top=0, what="trace_diff dirs")
step = {m["name"]: m for m in g["metrics"]}["step_time"]
print(f"trace_diff: step time {step['base'] / 1e6:.2f} ms -> {step['candidate'] / 1e6:.2f} ms ({step['delta_pct']:+.1f}%)")
for r in g["kernels"]["regressions"][:3]:
    print(f"  regression {r['name'][:60]}: {r['delta_per_step_ns'] / 1e6:+.2f} ms/step")
# known facts of this pair: A100 control vs V100 test, the candidate is about 60% slower per step
check(55 < step["delta_pct"] < 65, f"trace_diff step-time delta {step['delta_pct']}")
names = {r["name"] for r in g["kernels"]["rows"]}
check("{arch}_sgemm_{tile}_tn" in names, "ampere_/volta_ sgemm folded into {arch}_sgemm_{tile}_tn")
sg = [r for r in g["kernels"]["rows"] if r["name"] == "{arch}_sgemm_{tile}_tn"]
check(sg and sg[0]["base"]["count"] > 0 and sg[0]["candidate"]["count"] > 0, "sgemm matched across A100/V100")

# ---- --fail-above, both ways ----
rc, out, err = run([TRAINPROF, "diff", "--fail-above", "5"] + ctl + tst)
check(rc == 1 and "check failed: step_time" in err, f"fail-above 5 on a 60% regression: exit {rc}, {err.strip()}")
rc, out, err = run([TRAINPROF, "diff", "--fail-above", "70"] + ctl + tst)
check(rc == 0 and "check passed" in out, f"fail-above 70: exit {rc}")
rc, out, err = run([TRAINPROF, "diff", "--fail-above", "5"] + tst + ctl)  # the other way: an improvement
check(rc == 0, f"fail-above on an improvement: exit {rc}")
rc, out, err = run([TRAINPROF, "diff", "--fail-above", "10", "--metric", "comm_exposed", "--format", "json"] + ctl + tst)
check(rc == 0 and json.loads(out)["check"]["failed"] is False, f"comm_exposed shrank: exit {rc}")
rc, out, err = run([TRAINPROF, "diff", "--fail-above", "10", "--metric", "comm_exposed"] + tst + ctl)
check(rc == 1, f"comm_exposed grew: exit {rc}")
rc, out, err = run([TRAINPROF, "diff", "--fail-above", "0"] + ctl + ctl)
check(rc == 0, f"a run against itself never fails: exit {rc}")
for bad in (["--fail-above", "x"], ["--metric", "nope", "--fail-above", "1"], ["--metric", "comm"], ["--top", "-1"]):
    rc, _, err = run([TRAINPROF, "diff"] + bad + ctl + tst)
    check(rc == 2 and "error" in err, f"{bad}: exit {rc}")

# ---- csv ----
rc, out, err = run([TRAINPROF, "diff", "--format", "csv"] + ctl + tst)
check(rc == 0, f"csv exit {rc}")
rows = list(csv.DictReader(io.StringIO(out)))
check(all(len(r) == 17 for r in rows), "csv: 17 fields per row")
met = {r["name"]: r for r in rows if r["section"] == "metric"}
check(close(float(met["step_time"]["base"]), sides[0]["metrics"]["step_time"]), "csv step_time base")
check(close(float(met["step_time"]["candidate"]), sides[1]["metrics"]["step_time"]), "csv step_time candidate")
krows = {r["name"]: r for r in rows if r["section"] == "kernel"}
check(set(krows) == set(sides[0]["kernels"]) | set(sides[1]["kernels"]), "csv kernel names")
for name, r in krows.items():
    for s, key in ((0, "base"), (1, "candidate")):
        k = sides[s]["kernels"].get(name, {"count": 0, "total": 0})
        check(int(r[f"{key}_count"]) == k["count"], f"csv {name} {key}_count")
        check(abs(float(r[key]) - k["total"] / sides[s]["steps"]) < 1e-3, f"csv {name} {key} total per step")

# ---- several ranks per side, generated; files and directories; different step counts ----
tmp = scratch("tprof_diff_")
for side, seed, steps in (("a", 1, 2), ("b", 2, 3)):
    os.mkdir(os.path.join(tmp, side))
    for rank in (0, 1):
        p = os.path.join(tmp, side, f"rank{rank}.json")
        rc, _, err = run([GENTRACE, "--seed", str(seed), "--rank", str(rank), "--world", "2", "--steps", str(steps),
                          "--layers", "2", "-o", p])
        check(rc == 0, f"gentrace: {err.strip()}")
A = sorted(os.path.join(tmp, "a", f) for f in os.listdir(os.path.join(tmp, "a")))
B = sorted(os.path.join(tmp, "b", f) for f in os.listdir(os.path.join(tmp, "b")))
compare(A, B, A + ["--vs"] + B, what="generated ranks")
g2, _ = compare(A, B, [os.path.join(tmp, "a"), "--vs", os.path.join(tmp, "b")], what="generated dirs")
check(g2["base"]["steps"] == 4 and g2["candidate"]["steps"] == 6, "steps summed over ranks")
rc, _, err = run([TRAINPROF, "diff", A[0], A[1], B[0]])
check(rc == 2 and "--vs" in err, f"three traces without --vs: exit {rc}")
rc, _, err = run([TRAINPROF, "diff", A[0], "--vs"])
check(rc == 2, f"empty candidate side: exit {rc}")

# ---- a trace without steps counts as one step spanning the trace ----
nost = os.path.join(tmp, "nosteps.json")
with open(nost, "w") as f:
    json.dump({"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 50},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5,
         "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "void k<float>(float)", "pid": 0, "tid": 7, "ts": 120, "dur": 200,
         "args": {"device": 0, "stream": 7, "correlation": 1}}]}, f)
g3, _ = compare([nost], [A[0]], [nost, A[0]], what="no steps")
check(g3["base"]["traces_without_steps"] == 1, "trace without steps reported")
check({m["name"]: m for m in g3["metrics"]}["step_time"]["base"] == 220000, "no-step trace: step time = its span")
rc, out, _ = run([TRAINPROF, "diff", nost, A[0]])
check("no ProfilerStep: counted as one step" in out, "the table says a trace had no steps")

# ---- collectives: each side matched across its ranks, as `collectives` matches them ----
def collectives_of(paths):
    rc, out, err = run([TRAINPROF, "collectives", "--format", "json", *paths])
    check(rc == 0, f"collectives: exit {rc}: {err[-200:]}")
    return json.loads(out) if rc == 0 else None


def coll_key(r):
    return (r["type"], r["group"], r["dtype"], r["bytes"])


def check_collectives(base, cand, what):
    rc, out, err = run([TRAINPROF, "diff", "--format", "json", "--top", "0", *base, "--vs", *cand])
    check(rc == 0, f"{what}: diff exit {rc}: {err[-200:]}")
    if rc:
        return None
    d = json.loads(out)
    sides = [collectives_of(base), collectives_of(cand)]
    check([r["side"] for r in d["collectives_run"]] == ["base", "candidate"], f"{what}: a run row per side")
    for s, (row, c) in enumerate(zip(d["collectives_run"], sides)):
        steps = max(c["common_steps"], 1)
        check(row["matched"] == c["matched"] and row["matching"] == c["matching"], f"{what} side {s}: matched as collectives")
        check(row["straggler"] == c["straggler"], f"{what} side {s}: straggler {row['straggler']} vs {c['straggler']}")
        if c["straggler"] is not None:
            check(abs(row["straggler_cost_per_step_ns"] - c["straggler_cost_ns"] / steps) < 1e-3,
                  f"{what} side {s}: straggler cost per step")
        wait = sum(r["wait_per_step_ns"] for r in c["ranks"]) / len(c["ranks"])
        check(abs(row["wait_per_step_ns"] - wait) < 1e-3, f"{what} side {s}: a rank's wait per step")
    rows = {coll_key(r): r for r in d["collectives"]}
    keys = {coll_key(r) for c in sides for r in c["collectives"]}
    check(set(rows) == keys, f"{what}: every collective of either side, once")
    for s, c in enumerate(sides):
        steps = max(c["common_steps"], 1)
        pre = ("base", "candidate")[s]
        for g in c["collectives"]:
            r = rows.get(coll_key(g))
            if not r:
                continue
            check(abs(r[f"{pre}_ns"] - g["transfer_ns"] / steps) < 1e-3, f"{what}: {coll_key(g)} {pre} transfer per step")
            check(r[f"{pre}_transfer_p50_ns"] == g["transfer_p50_ns"], f"{what}: {coll_key(g)} {pre} p50")
            check(abs(r[f"{pre}_wait_per_step_ns"] - g["wait_ns"] / steps) < 1e-3, f"{what}: {coll_key(g)} {pre} wait")
            check((r[f"{pre}_busbw"] is None) == (g["busbw"] is None) and
                  (g["busbw"] is None or abs(r[f"{pre}_busbw"] - g["busbw"]) < 1e-9), f"{what}: {coll_key(g)} {pre} busbw")
    deltas = [abs(r["delta_ns"]) for r in d["collectives"]]
    check(deltas == sorted(deltas, reverse=True), f"{what}: largest change first")
    return d


slow = {}
for side, rank in (("a", 2), ("b", 1)):
    slow[side] = []
    for r in range(4):
        p = os.path.join(tmp, f"slow_{side}{r}.json")
        rc, _, err = run([GENTRACE, "--steps", "3", "--layers", "2", "--rank", str(r), "--world", "4", "--slow-rank",
                          str(rank), "--slow-us", "5000" if side == "a" else "1000", "-o", p])
        check(rc == 0, f"gentrace: {err.strip()}")
        slow[side].append(p)
d = check_collectives(slow["a"], slow["b"], "generated stragglers (rank 2, 5 ms -> rank 1, 1 ms)")
if d:
    run_rows = d["collectives_run"]
    check(run_rows[0]["straggler"] == 2 and run_rows[1]["straggler"] == 1, "the straggler moved from rank 2 to rank 1")
    check(run_rows[1]["wait_per_step_ns"] < run_rows[0]["wait_per_step_ns"] / 3, "the waiting shrank with the delay")
rc, out, _ = run([TRAINPROF, "diff", *slow["a"], "--vs", *slow["b"]])
check("straggler rank 2" in out and "straggler rank 1" in out, "the table names each side's straggler")
dlrm_dir = os.path.join(data, "traces/param/et_replay/tests/inputs/dlrm_kineto")
dlrm = sorted(os.path.join(dlrm_dir, f) for f in os.listdir(dlrm_dir))
d = check_collectives(dlrm, dlrm, "the 8 real DLRM ranks against themselves")
if d:
    check(all(r["delta_ns"] == 0 for r in d["collectives"]), "DLRM against itself: no collective changed")
rc, out, _ = run([TRAINPROF, "diff", "--format", "json", A[0], "--vs", B[0]])
check(rc == 0 and json.loads(out)["collectives_run"] == [] and json.loads(out)["collectives"] == [],
      "one trace a side: no collectives matched")
rc, out, _ = run([TRAINPROF, "diff", "--format", "json", *slow["a"], "--vs", slow["b"][0]])
d = json.loads(out) if rc == 0 else {}
check([r["side"] for r in d.get("collectives_run", [])] == ["base"] and d.get("collectives") == [],
      "four ranks against one: the base's matching alone, no keys compared")

# ---- the critical path per sampled step: summary's sample (tests/cli/advice.py holds it to critical-path) ----
def summary_path(path):
    rc, out, _ = run([TRAINPROF, "summary", "--format", "json", path])
    return json.loads(out)["critical_path"] if rc == 0 else None


for base, cand in PAIRS:
    rc, out, err = run([TRAINPROF, "diff", "--format", "json", *base, "--vs", *cand])
    rows = {r["name"]: r for r in json.loads(out)["critical_path"]} if rc == 0 else {}
    for side, p in (("base", base[0]), ("candidate", cand[0])):
        sp = summary_path(p)
        check(sp is not None and rows, f"critical path of {p}: summary and diff both have one")
        if not sp or not rows:
            continue
        for name, col in (("path", "path_ns"), ("step", "span_ns"), ("compute", "compute_ns"),
                          ("runtime", "runtime_ns"), ("cpu_op", "cpu_op_ns"), ("comm", "comm_ns")):
            want = sp[col] / sp["windows"]
            check(abs(rows[name][side] - want) < 1e-6, f"diff critical path {name} {side} of {p}: {rows[name][side]} vs {want}")
rc, out, _ = run([TRAINPROF, "diff", *PAIRS[0][0], "--vs", *PAIRS[0][1]])
check("critical path per sampled step" in out and "GPU compute" in out, "the table has the critical path's section")
rc, out, _ = run([TRAINPROF, "diff", "--format", "json", nost, A[0]])
check(rc == 0, "no-step trace against a stepped one")

# ---- bad input: clear error naming the file, exit 3 ----
bad = os.path.join(tmp, "bad.json")
with open(bad, "w") as f:
    f.write("this is not json")
rc, out, err = run([TRAINPROF, "diff", bad, A[0]])
check(rc == 3 and bad in err, f"bad input: exit {rc}, {err.strip()}")
empty_dir = os.path.join(tmp, "empty")
os.mkdir(empty_dir)
rc, out, err = run([TRAINPROF, "diff", empty_dir, A[0]])
check(rc == 3 and empty_dir in err, f"empty directory: exit {rc}, {err.strip()}")
rc, out, err = run([TRAINPROF, "diff", os.path.join(tmp, "missing.json"), A[0]])
check(rc == 3 and "missing.json" in err, f"missing file: exit {rc}")
cut = os.path.join(tmp, "cut.json")
with open(A[0], "rb") as f, open(cut, "wb") as o:
    o.write(f.read()[: os.path.getsize(A[0]) // 2])
rc, out, err = run([TRAINPROF, "diff", "--format", "json", cut, A[1]])
check(rc == 4 and "results cover" in err and json.loads(out)["base"]["files"][0]["truncated"], f"truncated input: exit {rc}")
finish("diff of trace_diff, trace_compare, generated ranks and a step-less trace")
