"""trainprof critical-path against Holistic Trace Analysis's critical path
analysis, run for real by tests/tools/hta_critical_path_oracle.py on HTA's
own critical-path traces (in ../shared/data) and recorded in
hta_critical_path.json: per case the graph's nodes and edges, the path's
length, its breakdown by what bounds it, and the set of events on it must be
HTA's. On a generated trace (always): the path is a chain of edges whose
weights add up to its length and to its breakdown, each edge's weight the
time between its two points (launch delays and gaps forward in time), and
the options' errors. --overlay (generated, HTA's alexnet, cut and array-form
inputs, several traces): the copy holds every original event and member
unchanged, the added segments add up to the path's breakdown, and every
arrow binds to an original event of its thread."""
import decimal
import gzip
import hashlib
import json
import os

from common import GENTRACE, TRAINPROF, check, finish, run, scratch, testdata, us_to_ns

HERE = os.path.dirname(os.path.abspath(__file__))

# HTA's bound_by -> trainprof's columns that make it up
HTA_BOUNDS = {
    "cpu_bound": ("cpu_op_ns", "runtime_ns"),
    "gpu_compute_bound": ("compute_ns", "memory_ns"),
    "gpu_communication_bound": ("comm_ns",),
    "gpu_kernel_launch_overhead": ("launch_ns",),
    "gpu_kernel_kernel_overhead": ("kernel_gap_ns",),
}
BOUNDS = ("cpu_op_ns", "runtime_ns", "launch_ns", "kernel_gap_ns", "compute_ns", "memory_ns", "comm_ns")


def critical_path(path, *opts):
    rc, out, err = run([TRAINPROF, "critical-path", "--format", "json", "--path", *opts, path])
    check(rc == 0, f"critical-path {path} {opts}: exit {rc}: {err[-300:]}")
    return json.loads(out) if rc == 0 else None


def check_chain(r, what):
    """The path table: each window's edges join end to end, add up to its length."""
    by_step = {}
    for e in r.get("path", []):
        by_step.setdefault(e["step"], []).append(e)
    for s in r["steps"]:
        edges = by_step.get(s["step"], [])
        check(len(edges) == s["path_edges"], f"{what} step {s['step']}: {len(edges)} path rows, {s['path_edges']} edges")
        check(sum(e["weight_ns"] for e in edges) == s["path_ns"], f"{what} step {s['step']}: weights add up")
        check(sum(s[b] for b in BOUNDS) == s["path_ns"], f"{what} step {s['step']}: breakdown adds up")
        for a, b in zip(edges, edges[1:]):
            check((a["to"], a["to_ts"], a["to_point"]) == (b["from"], b["from_ts"], b["from_point"]),
                  f"{what} step {s['step']}: edges join ({a['to']} then {b['from']})")
        for e in edges:
            check(e["weight_ns"] >= 0, f"{what}: an edge of negative weight")
            if e["type"] in ("dependency", "sync_dependency"):
                check(e["weight_ns"] == 0, f"{what}: a {e['type']} edge has weight {e['weight_ns']}")
            if e["type"] == "kernel_launch_delay":
                check(e["bound"] == "launch" and e["to_point"] == "start" and e["from_point"] == "start",
                      f"{what}: a launch delay joins two starts")
                check(e["weight_ns"] == e["to_ts"] - e["from_ts"], f"{what}: launch delay is start to start")
            if e["type"] == "kernel_kernel_delay":
                check(e["bound"] == "kernel_gap" and e["weight_ns"] < 1_500_000, f"{what}: a gap under 1.5 ms")
    top = sum(r[b] for b in BOUNDS)
    check(top == r["path_ns"], f"{what}: the top breakdown adds up")
    check(r["path_ns"] == sum(s["path_ns"] for s in r["steps"]), f"{what}: path_ns is the windows' sum")


def against_hta(data):
    with open(os.path.join(HERE, "hta_critical_path.json")) as f:
        cases = json.load(f)
    compared = 0
    for c in cases:
        if "valid" not in c:  # HTA has no answer (an instance past its steps), or a GPU-side window
            continue
        compared += 1
        path = os.path.join(data, "traces", c["trace"])
        if "step" in c:
            opts = ["--steps", str(c["step"])]
        elif not c["annotation"]:
            opts = ["--whole"]
        else:
            opts = ["--annotation", c["annotation"], "--instance", str(c["instance"])]
        what = f"{os.path.basename(os.path.dirname(c['trace']))} {c['annotation'] or 'whole'} {c['instance']}"
        d = critical_path(path, *opts)
        if d is None:
            continue
        r = d["traces"][0] if "traces" in d else d
        s = r["steps"][0]
        check(s["valid"] == c["valid"], f"{what}: valid {s['valid']}, HTA {c['valid']}")
        if c["rounded"]:
            # HTA rounds starts below the microsecond (up) and ends (down): its graph is another one, of
            # nearly the same path; trainprof keeps the ns (docs/METRICS.md)
            near = max(1, c["length_us"]) * 1000
            check(abs(s["path_ns"] - c["length_us"] * 1000) <= near * 0.005,
                  f"{what} (rounded by HTA): length {s['path_ns']} ns, HTA {c['length_us']} us")
            for hb, cols in HTA_BOUNDS.items():
                mine = sum(s[k] for k in cols)
                check(abs(mine - c["bound_us"].get(hb, 0) * 1000) <= near * 0.02,
                      f"{what} (rounded by HTA): {hb} {mine} ns, HTA {c['bound_us'].get(hb, 0)} us")
            check_chain(r, what)
            continue
        check((s["nodes"], s["edges"]) == (c["nodes"], c["edges"]),
              f"{what}: graph {s['nodes']} nodes {s['edges']} edges, HTA {c['nodes']} {c['edges']}")
        if not c["valid"]:
            continue
        check(s["path_ns"] == c["length_us"] * 1000, f"{what}: length {s['path_ns']} ns, HTA {c['length_us']} us")
        for hb, cols in HTA_BOUNDS.items():
            mine = sum(s[k] for k in cols)
            check(mine == c["bound_us"].get(hb, 0) * 1000, f"{what}: {hb} {mine} ns, HTA {c['bound_us'].get(hb, 0)} us")
        events = set()
        for e in r["path"]:
            events.add((e["from"], e["from_ts"]))
            events.add((e["to"], e["to_ts"]))
        if "events" in c:
            hta = {(n, us_to_ns(ts)) for n, ts in c["events"]}
            check(events == hta, f"{what}: {len(events)} events on the path, HTA {len(hta)}; "
                                 f"only trainprof's: {sorted(events - hta)[:3]}, only HTA's: {sorted(hta - events)[:3]}")
        else:
            digest = hashlib.sha1("\n".join(sorted(f"{n}\t{ts}" for n, ts in events)).encode()).hexdigest()
            check((len(events), digest) == (c["nevents"], c["events_sha1"]),
                  f"{what}: {len(events)} events on the path (digest {digest}), HTA {c['nevents']}")
        check_chain(r, what)
    check(compared >= 20, f"{compared} windows compared with HTA's")


def generated():
    d = scratch("critical_path")
    t = os.path.join(d, "gen.json")
    rc, _, err = run([GENTRACE, "--steps", "4", "--layers", "2", "-o", t])
    check(rc == 0, f"gentrace: {err[-200:]}")
    r = critical_path(t)
    if r is None:
        return
    r = r["traces"][0] if "traces" in r else r
    check(r["window"] == "steps" and r["windows"] == 4, f"generated: {r['windows']} windows of {r['window']}")
    check(r["path_ns"] > 0 and r["compute_ns"] > 0, "generated: a path through GPU compute")
    check_chain(r, "generated")
    one = critical_path(t, "--steps", str(r["steps"][1]["step"]))
    if one:
        one = one["traces"][0] if "traces" in one else one
        check(one["steps"] == [r["steps"][1]], "generated: --steps N gives that step's window alone")
    rc, out, err = run([TRAINPROF, "critical-path", "--steps", "900..", t])
    check(rc == 2 and "ProfilerStep" in err, f"--steps past the trace: exit {rc}: {err[-200:]}")
    rc, out, err = run([TRAINPROF, "critical-path", "--annotation", "no such thing", t])
    check(rc == 2 and "no such thing" in err, f"--annotation matching nothing: exit {rc}: {err[-200:]}")
    rc, out, err = run([TRAINPROF, "critical-path", t])
    check(rc == 0 and "critical path of 4 steps" in out and "GPU compute" in out, f"table: {out[:300]}")



def load_any(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rt") if gz else open(path)) as f:
        return json.load(f)


def check_overlay(src, out, r, what, cut=False):
    """OUT is SRC's document with the path of result R added at the end of traceEvents."""
    a, b = load_any(src) if not cut else None, load_any(out)
    ea = b if isinstance(b, list) else b["traceEvents"]
    if a is not None:
        orig = a if isinstance(a, list) else a["traceEvents"]
        check(ea[:len(orig)] == orig, f"{what}: the original events come first, unchanged")
        if isinstance(a, dict):
            check({k: v for k, v in a.items() if k != "traceEvents"} == {k: v for k, v in b.items() if k != "traceEvents"},
                  f"{what}: the other members are unchanged")
        added = ea[len(orig):]
    else:
        procs = [e for e in ea if e.get("ph") == "M" and e.get("args", {}).get("name") == "critical path (trainprof)"]
        check(len(procs) == 1, f"{what}: one critical-path process")
        added = ea[ea.index(procs[0]):] if procs else []
        orig = ea[:len(ea) - len(added)]
    pid = added[0]["pid"] if added else None
    check(all(e.get("pid") != pid for e in orig), f"{what}: the added process has a pid of its own")
    windows = [e for e in added if e["ph"] == "X" and e["tid"] == 0]
    segments = [e for e in added if e["ph"] == "X" and e["tid"] == 1]
    check(len(windows) == r["windows"], f"{what}: {len(windows)} window slices for {r['windows']} windows")
    for w, s in zip(windows, r["steps"]):
        check(w["args"]["path_ns"] == s["path_ns"], f"{what}: window {s['step']}'s slice says its path")
    by_bound = {}
    for e in segments:
        by_bound[e["cat"]] = by_bound.get(e["cat"], 0) + us_to_ns(e["dur"])
    for b in BOUNDS:
        check(by_bound.get(b[:-3], 0) == r[b], f"{what}: segments of {b[:-3]} add up to {r[b]} (got {by_bound.get(b[:-3], 0)})")
    spans = {}
    for e in orig:
        if e.get("ph") == "X":
            t0 = us_to_ns(e["ts"])
            spans.setdefault((e.get("pid"), e.get("tid")), []).append((t0, t0 + us_to_ns(e.get("dur", 0))))
    flows = [e for e in added if e["ph"] in "sf"]
    ids = {}
    for e in flows:
        ids.setdefault(e["id"], []).append(e["ph"])
        t = us_to_ns(e["ts"])
        check(any(lo <= t <= hi for lo, hi in spans.get((e["pid"], e["tid"]), [])),
              f"{what}: the arrow {e['id']} ({e['ph']}) at {e['ts']} binds to an event of {e['pid']}/{e['tid']}")
    check(all(v == ["s", "f"] for v in ids.values()), f"{what}: every arrow has a start then an end")
    used = {e.get("id") for e in orig if e.get("ph") in ("s", "f", "t")}
    check(not (used & set(ids)), f"{what}: arrow ids the trace does not use")


def overlay_checks(src, what, *opts):
    d = scratch("critical_path_overlay")
    out = os.path.join(d, os.path.basename(src).replace(".json", ".overlay.json"))
    rc, _, err = run([TRAINPROF, "critical-path", "--overlay", out, *opts, src])
    check(rc == 0 and "wrote" in err, f"{what} --overlay: exit {rc}: {err[-300:]}")
    r = critical_path(src, *opts)
    if rc == 0 and r:
        check_overlay(src, out, r["traces"][0] if "traces" in r else r, what)
    return out


def overlay_edges(t):
    """Cut inputs, the array form, several traces, and what cannot be done."""
    d = scratch("critical_path_overlay")
    doc = load_any(t)
    # cut in the middle of traceEvents (a crashed profiler): the complete events, then the path
    text = json.dumps(doc)
    at = text.index('"traceEvents"') + (len(text) - text.index('"traceEvents"')) // 2
    cut_src = os.path.join(d, "cut.json")
    with open(cut_src, "w") as f:
        f.write(text[:at])
    cut_out = os.path.join(d, "cut_overlay.json")
    rc, _, err = run([TRAINPROF, "critical-path", "--overlay", cut_out, cut_src])
    check(rc == 4 and "stops early" in err, f"cut --overlay: exit {rc} (4: a cut input): {err[-300:]}")
    rc, out, err = run([TRAINPROF, "critical-path", "--format", "json", cut_src])
    r = json.loads(out) if rc == 4 else None
    r = r["traces"][0] if r and "traces" in r else r
    if r:
        check_overlay(cut_src, cut_out, r, "cut input", cut=True)
    # the array form: a bare list of events stays a list
    arr_src = os.path.join(d, "array.json")
    with open(arr_src, "w") as f:
        json.dump(doc["traceEvents"], f)
    out = overlay_checks(arr_src, "array form", "--whole")
    check(isinstance(load_any(out), list), "array form: the overlay is a list too")
    # several traces: OUT is a directory of critical_path_<name>
    two = os.path.join(d, "two")
    other = os.path.join(d, "other.json")
    with open(other, "w") as f:
        json.dump(doc, f)
    rc, _, err = run([TRAINPROF, "critical-path", "--overlay", two, t, other])
    check(rc == 0 and sorted(os.listdir(two)) == sorted(["critical_path_" + os.path.basename(t), "critical_path_other.json"]),
          f"two traces --overlay: exit {rc}, {os.listdir(two) if os.path.isdir(two) else 'no directory'}: {err[-300:]}")
    # the same file name in two rank directories: the place in path order tells them apart
    same = []
    for r in ("rank0", "rank1"):
        os.makedirs(os.path.join(d, r), exist_ok=True)
        same.append(os.path.join(d, r, "trace.json"))
        with open(same[-1], "w") as f:
            json.dump(doc, f)
    three = os.path.join(d, "three")
    rc, _, err = run([TRAINPROF, "critical-path", "--overlay", three, same[1], same[0]])
    check(rc == 0 and sorted(os.listdir(three)) == ["critical_path_0_trace.json", "critical_path_1_trace.json"],
          f"two traces of one name: {os.listdir(three) if os.path.isdir(three) else err[-300:]}")
    with open(t, "rb") as f:
        rc, _, err = run([TRAINPROF, "critical-path", "--overlay", os.path.join(d, "x.json"), "-"], stdin=f.read())
    check(rc == 2 and "standard input" in err, f"--overlay from stdin: exit {rc}: {err[-200:]}")
    before = open(other, "rb").read()
    rc, _, err = run([TRAINPROF, "critical-path", "--overlay", other, other])
    check(rc == 2 and "the trace itself" in err and open(other, "rb").read() == before,
          f"--overlay onto its own input: exit {rc}, the input kept: {err[-200:]}")
    rc, _, err = run([TRAINPROF, "critical-path", "--overlay", os.path.join(d, "no", "such", "dir", "x.json"), t])
    check(rc == 5 and "x.json" in err, f"--overlay into a missing directory: exit {rc}: {err[-200:]}")


def overlays(data):
    d = scratch("critical_path_overlay")
    t = os.path.join(d, "gen.json")
    rc, _, err = run([GENTRACE, "--steps", "3", "--layers", "2", "-o", t])
    check(rc == 0, f"gentrace: {err[-200:]}")
    overlay_checks(t, "generated")
    overlay_edges(t)
    if data:
        alexnet = os.path.join(data, "traces/HolisticTraceAnalysis/tests/data/critical_path/alexnet/"
                               "benchmark_result_2869224_1695835535_trace.json.gz")
        overlay_checks(alexnet, "HTA alexnet (real)")


def one_thread():
    """A trace past the size where a second thread builds the host order and half the windows
    (TPROF_CP_ALONE, 200,000 events): --threads 1 keeps to one thread and gives the same paths."""
    d = scratch("critical_path_threads")
    t = os.path.join(d, "big.json")
    rc, _, err = run([GENTRACE, "--size", "80M", "-o", t])
    check(rc == 0, f"gentrace: {err[-200:]}")
    rc, two, err = run([TRAINPROF, "critical-path", "--format", "json", t])
    check(rc == 0, f"critical-path on 80 MB: {err[-300:]}")
    rc, one, err = run([TRAINPROF, "critical-path", "--threads", "1", "--format", "json", t])
    check(rc == 0 and one == two and json.loads(one)["traces"][0]["windows"] >= 3,
          f"critical-path --threads 1: the two threads' paths ({rc}, {len(one)} vs {len(two)} bytes)")


generated()
one_thread()
data = testdata()
overlays(data)
if data:
    against_hta(data)
else:
    print("SKIP (visible): ../shared/data is not here: HTA's cases not checked")
finish("critical-path")
