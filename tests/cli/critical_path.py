"""trainprof critical-path against Holistic Trace Analysis's critical path
analysis, run for real by tests/tools/hta_critical_path_oracle.py on HTA's
own critical-path traces (in ../shared/data) and recorded in
hta_critical_path.json: per case the graph's nodes and edges, the path's
length, its breakdown by what bounds it, and the set of events on it must be
HTA's. On a generated trace (always): the path is a chain of edges whose
weights add up to its length and to its breakdown, each edge's weight the
time between its two points (launch delays and gaps forward in time), and
the options' errors."""
import decimal
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


generated()
data = testdata()
if data:
    against_hta(data)
else:
    print("../shared/data is not here: HTA's cases not checked")
finish("critical-path")
