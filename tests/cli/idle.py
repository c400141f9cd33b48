"""trainprof idle against an independent computation (Python, exact decimals)
of the gap classification in docs/METRICS.md on real traces."""
import json
import os

from common import (TRAINPROF, check, dur_ns, finish, gpu_class, gpu_events, launch_times, load_exact,
                    need_testdata, run, us_to_ns)

data = need_testdata()
T = os.path.join(data, "traces")
H = os.path.join(T, "HolisticTraceAnalysis", "tests", "data")
files = [os.path.join(H, "trace_diff", "control", "control.json.gz"),
         os.path.join(H, "df_index_resolver", "df_index_resolver.json.gz"),
         os.path.join(T, "param/et_replay/tests/inputs/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json"),
         os.path.join(H, "critical_path", "cuda_event_sync_multi_stream", "event_sync_trace.json.gz"),
         os.path.join(T, "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")]
LIMITS = [10000, 30000, 100000, 1000000, 10000000]


def expected(path, wait_ns):
    doc = load_exact(path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    launch = launch_times(events)
    streams = {}
    for e in gpu_events(doc):
        if gpu_class(e) == "other":
            continue
        a = e.get("args") or {}
        dev = a.get("device", e.get("pid"))
        st = a.get("stream", a.get("Stream Id", e.get("tid")))
        s = us_to_ns(e["ts"])
        streams.setdefault((int(dev), int(st)), []).append((s, s + dur_ns(e), launch.get(a.get("correlation"), s)))
    out = []
    for (dev, st), w in sorted(streams.items()):
        w.sort(key=lambda x: (x[0], x[1]))
        causes = {k: dict(count=0, total_ns=0, max_ns=0, buckets=[0] * 6) for k in ("host_wait", "kernel_wait", "other")}
        drained, idle = w[0][1], 0
        for s, e, l in w[1:]:
            gap = s - drained
            if gap > 0:
                k = "host_wait" if l >= drained else "kernel_wait" if gap < wait_ns else "other"
                c = causes[k]
                c["count"] += 1
                c["total_ns"] += gap
                c["max_ns"] = max(c["max_ns"], gap)
                c["buckets"][sum(1 for lim in LIMITS if gap >= lim)] += 1
                idle += gap
            drained = max(drained, e)
        out.append(dict(device=dev, stream=st, events=len(w), span_ns=drained - w[0][0], idle_ns=idle, **causes))
    return out


for wait_us, flag in ((30, []), (5, ["--kernel-wait", "5"])):
    rc, out, err = run([TRAINPROF, "idle", "--format", "json"] + flag + files)
    check(rc == 0, f"idle exit {rc}: {err.strip()}")
    got = {r["file"]: r for r in json.loads(out)}
    for f in files:
        exp = expected(f, wait_us * 1000)
        g = got[f]
        check(g["kernel_wait_ns"] == wait_us * 1000, "threshold")
        check(g["streams"] == exp, f"{os.path.basename(f)} (kernel wait < {wait_us} us): streams differ")
finish(f"idle time of {len(files)} traces")
