"""Every real trace in ../shared/data/traces (the test is skipped when absent) loads; info and kernels agree
with an independent computation in Python (exact decimals) on the 8 DLRM
ranks, trace_diff/control and the other Kineto files."""
import csv
import glob
import io
import json
import os

from common import GPU_CATS, TRAINPROF, check, finish, gpu_events, load_exact, need_testdata, run, us_to_ns

data = need_testdata()
traces = os.path.join(data, "traces")
NOT_TRACES = {"benchmark_simple_add_et.json.gz", "memory_timeline.raw.gz", "cluster_communication.json"}

files = []
for root, _, names in os.walk(traces):
    for n in sorted(names):
        if n.endswith(".json") or n.endswith(".json.gz") or n.endswith(".raw.gz"):
            files.append(os.path.join(root, n))

for p in files:
    base = os.path.basename(p)
    rc, out, err = run([TRAINPROF, "info", "--format", "json", p])
    if base in NOT_TRACES:
        check(rc == 3, f"{base}: not a trace, expected exit 3, got {rc}")
        check(p in err and "byte" in err and "not a trace" in err, f"{base}: unclear error {err!r}")
        # one error line, and the hint naming what the file is when it is of a known kind (input_kinds.py)
        lines = [l for l in err.strip().splitlines() if not l.startswith("trainprof: hint: ")]
        check(len(lines) == 1, f"{base}: expected one line on stderr (and a hint), got {err!r}")
        continue
    check(rc == 0, f"{base}: info exit {rc}: {err.strip()}")
    if rc:
        continue
    info = json.loads(out)[0]
    doc = load_exact(p)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    check(info["events"] == len(events), f"{base}: events {info['events']} != {len(events)}")
    steps = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and
             str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") in
             ("user_annotation", "cpu_op", "Operator", None)]
    check(len(info["steps"]) == len(steps), f"{base}: steps {len(info['steps'])} != {len(steps)}")
    if isinstance(doc, dict) and isinstance(doc.get("distributedInfo"), dict) and "rank" in doc["distributedInfo"]:
        check(info["rank"] == doc["distributedInfo"]["rank"], f"{base}: rank")
    if isinstance(doc, dict) and "deviceProperties" in doc:
        check(len(info["devices"]) == len(doc["deviceProperties"]), f"{base}: devices")
    cats = {}
    for e in events:
        if isinstance(e, dict):
            cats[e.get("cat", "")] = cats.get(e.get("cat", ""), 0) + 1
    check(info["categories"] == cats, f"{base}: category counts differ")
    threads = set()
    for e in events:
        if isinstance(e, dict) and e.get("ph") in ("X", "B", "E") and e.get("cat") not in GPU_CATS and \
                e.get("cat") != "gpu_user_annotation" and not ("cat" not in e and "Task Type" in (e.get("args") or {})):
            threads.add((str(e.get("pid", 0)), str(e.get("tid", 0))))
    got_threads = {tuple(t["thread"].split("/", 1)) for t in info["cpu_threads"]}
    check(got_threads == threads, f"{base}: cpu threads {sorted(got_threads)[:5]} != {sorted(threads)[:5]}")
    ts = [us_to_ns(e["ts"]) for e in events if isinstance(e, dict) and "ts" in e and e.get("ph") != "M"]
    if ts:
        check(info["ts_min_ns"] == min(ts), f"{base}: ts_min {info['ts_min_ns']} != {min(ts)}")


def expected_kernels(path):
    """name -> [count, total, min, max] and the union busy time, from Python."""
    rows = {}
    iv = []
    for e in gpu_events(load_exact(path)):
        d = us_to_ns(e["dur"])
        if d < 0 or d > 86400 * 10**9:
            d = 0
        s = us_to_ns(e["ts"])
        r = rows.setdefault(e["name"], [0, 0, None, None])
        r[0] += 1
        r[1] += d
        r[2] = d if r[2] is None else min(r[2], d)
        r[3] = d if r[3] is None else max(r[3], d)
        iv.append((s, s + d))
    iv.sort()
    busy, cs, ce = 0, None, None
    for s, e in iv:
        if cs is None or s > ce:
            if cs is not None:
                busy += ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    if cs is not None:
        busy += ce - cs
    return rows, busy


def check_kernels(paths, label):
    rc, out, err = run([TRAINPROF, "kernels", "--top", "0", "--format", "csv"] + paths)
    check(rc == 0, f"{label}: kernels exit {rc}: {err.strip()}")
    got = {}
    for r in csv.DictReader(io.StringIO(out)):
        got.setdefault(r["file"] or "all", {})[r["kernel"]] = [int(r["count"]), int(r["total_ns"]),
                                                            int(r["min_ns"]), int(r["max_ns"])]
    combined = {}
    for p in paths:
        exp, _ = expected_kernels(p)
        check(got.get(p) == exp, f"{label}: {os.path.basename(p)} per-kernel rows differ "
                                 f"({len(got.get(p, {}))} vs {len(exp)} names)")
        for k, (c, t, mn, mx) in exp.items():
            a = combined.setdefault(k, [0, 0, mn, mx])
            a[0] += c
            a[1] += t
            a[2] = min(a[2], mn)
            a[3] = max(a[3], mx)
    if len(paths) > 1:
        check(got.get("all") == combined, f"{label}: combined rows differ")
    rc, out, err = run([TRAINPROF, "kernels", "--format", "json"] + paths)
    j = json.loads(out)
    for t in j["traces"]:
        _, busy = expected_kernels(t["file"])
        check(t["busy_ns"] == busy, f"{label}: {os.path.basename(t['file'])} busy {t['busy_ns']} != {busy}")


dlrm = sorted(glob.glob(os.path.join(traces, "param/et_replay/tests/inputs/dlrm_kineto/worker*.json")))
check(len(dlrm) == 8, f"expected 8 DLRM ranks, found {len(dlrm)}")
check_kernels(dlrm, "dlrm 8 ranks")
check_kernels([os.path.join(traces, "HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz")], "control")
for rel in ["HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
            "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
            "msprof-analyze/test/ut/advisor/advisor_backend/timeline_advice/trace_view.json",
            "HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
            "HolisticTraceAnalysis/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz"]:
    check_kernels([os.path.join(traces, rel)], os.path.basename(rel))

finish(f"{len(files)} real files checked")
