"""trainprof steps against an independent computation (Python, exact
decimals) on real traces: step spans, the GPU work launched in each step,
the device time in each step's window as Ascend's step_trace_time.csv
splits it, and the step-time statistics."""
import json
import os

from common import (GPU_CATS, RUNTIME_CATS, TRAINPROF, check, device_split, dur_ns, finish, gpu_class, gpu_events,
                    launch_times, load_exact, need_testdata, run, steps_of, union, us_to_ns)

data = need_testdata()
T = os.path.join(data, "traces")
H = os.path.join(T, "HolisticTraceAnalysis", "tests", "data")
files = [os.path.join(H, "trace_diff", "control", "control.json.gz"),
         os.path.join(H, "trace_diff", "test", "test.json.gz"),
         os.path.join(H, "trace_filter", "sampled_rank-0.json.gz"),
         os.path.join(H, "ns_resolution_trace", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"),
         os.path.join(T, "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json"),
         os.path.join(T, "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"),
         os.path.join(T, "param/et_replay/tests/inputs/resnet_kineto.json.gz")]


PRIORITY = ["data", "optimizer", "backward", "forward"]


def phase_of(n):
    """docs/METRICS.md's phase rules, restated."""
    if n in ("## forward ##", "forward", "DistributedDataParallel.forward", "FullyShardedDataParallel.forward") or \
            n.startswith("nn.Module: "):
        return "forward"
    if n in ("## backward ##", "backward") or n.startswith("autograd::engine::evaluate_function"):
        return "backward"
    if n in ("## optimizer ##", "## zero_grad ##", "optimizer", "optimizer_step") or \
            n.startswith(("Optimizer.step#", "Optimizer.zero_grad#")):
        return "optimizer"
    if n in ("## load_batch ##", "## data_load ##", "## wait_for_batch ##", "## copy_batch_to_gpu ##", "data",
             "data_loading") or n.startswith("enumerate(DataLoader)"):
        return "data"
    return None


def split(step, markers):
    """CPU time per phase over [t0, t1), and the phase at each instant (as a function)."""
    t0, t1 = step
    pts = sorted({t0, t1} | {x for s, e, _ in markers for x in (s, e) if t0 < x < t1})
    segs, cpu = [], dict.fromkeys(PRIORITY + ["other"], 0)
    for a, b in zip(pts, pts[1:]):
        active = {ph for s, e, ph in markers if s <= a and e > a}
        ph = next((p for p in PRIORITY if p in active), "other")
        cpu[ph] += b - a
        segs.append((a, ph))
    def at(x):
        ph = "other"
        for a, p in segs:
            if a <= x:
                ph = p
        return ph
    return cpu, at


def expected(path):
    doc = load_exact(path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    steps = steps_of(events)
    launch = launch_times(events)
    rows = [dict(number=int(n.split("#")[1]), ts_ns=s, dur_ns=d, gpu_events=0, gpu_total_ns=0, gpu_end_ns=0, iv=[])
            for s, d, n in steps]
    markers = [[] for _ in rows]
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e and e.get("cat") not in GPU_CATS | RUNTIME_CATS | \
                {"gpu_user_annotation"} and not ("Task Type" in (e.get("args") or {})):
            ph = phase_of(str(e.get("name", "")))
            if ph is None:
                continue
            s0 = us_to_ns(e["ts"])
            own = [i for i, r in enumerate(rows) if r["ts_ns"] <= s0 < r["ts_ns"] + r["dur_ns"]]
            if own:
                r = rows[own[-1]]
                markers[own[-1]].append((s0, min(s0 + (dur_ns(e) if "dur" in e else 0), r["ts_ns"] + r["dur_ns"]), ph))
    phase_at = []
    for r, mk in zip(rows, markers):
        cpu, at = split((r["ts_ns"], r["ts_ns"] + r["dur_ns"]), mk)
        r["phases"] = {p: dict(cpu_ns=cpu[p], gpu_ns=0) for p in ["data", "forward", "backward", "optimizer", "other"]}
        phase_at.append(at)
    for e in gpu_events(doc):
        if gpu_class(e) == "other":
            continue
        s = us_to_ns(e["ts"])
        at = launch.get((e.get("args") or {}).get("correlation"), s)
        owner = None
        for r in rows:  # the latest-starting step whose span holds the launch
            if r["ts_ns"] <= at < r["ts_ns"] + r["dur_ns"]:
                owner = r
        if owner is None:
            continue
        d = dur_ns(e)
        owner["gpu_events"] += 1
        owner["phases"][phase_at[rows.index(owner)](at)]["gpu_ns"] += d
        owner["gpu_total_ns"] += d
        owner["gpu_end_ns"] = max(owner["gpu_end_ns"], s + d)
        owner["iv"].append((s, s + d))
    tasks = [(us_to_ns(e["ts"]), us_to_ns(e["ts"]) + dur_ns(e), gpu_class(e), e.get("name", "")) for e in gpu_events(doc)]
    for r in rows:
        r["gpu_busy_ns"] = union(r.pop("iv"))
        r.update(device_split(tasks, r["ts_ns"], r["dur_ns"]))
        r["phases"] = r.pop("phases")  # keep the key order of the JSON output
    durs = sorted(r["dur_ns"] for r in rows)
    stats = {}
    if durs:
        mean = sum(durs) // len(durs)
        stats = dict(mean_ns=mean, p50_ns=durs[(len(durs) - 1) // 2], min_ns=durs[0], max_ns=durs[-1])
    return rows, stats


rc, out, err = run([TRAINPROF, "steps", "--format", "json"] + files)
check(rc == 0, f"steps exit {rc}: {err.strip()}")
got = {r["file"]: r for r in json.loads(out)}
for f in files:
    rows, stats = expected(f)
    g = got[f]
    check(g["steps_count"] == len(rows), f"{os.path.basename(f)}: {g['steps_count']} steps, expected {len(rows)}")
    check(g["steps"] == rows, f"{os.path.basename(f)}: step rows differ" + "".join(
        f"\n  step {a['number']} {k}: {a.get(k)} != {b.get(k)}" for a, b in zip(g["steps"], rows) for k in b
        if a.get(k) != b.get(k)))
    for k, v in stats.items():
        check(g[k] == v, f"{os.path.basename(f)}: {k} {g[k]} != {v}")
check(got[files[0]]["steps_count"] == 6 and got[files[5]]["steps_count"] == 6, "HTA control and TB sample: 6 steps")
check(got[files[6]]["steps_count"] == 0, "resnet_kineto has no ProfilerStep")
check(got[files[3]]["phases_found"] and got[files[0]]["phases_found"], "phase markers found in ns_resolution and control")
finish(f"steps of {len(files)} traces")
