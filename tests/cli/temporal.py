"""trainprof temporal against an independent computation (Python, exact
decimals) of the definitions in docs/METRICS.md on real traces."""
import json
import os

from common import (TRAINPROF, check, finish, gpu_class, gpu_events, launch_times, load_exact, need_testdata, run,
                    steps_of, union, us_to_ns, dur_ns)

data = need_testdata()
T = os.path.join(data, "traces")
H = os.path.join(T, "HolisticTraceAnalysis", "tests", "data")
files = sorted(os.path.join(T, "param/et_replay/tests/inputs/dlrm_kineto", f)
               for f in os.listdir(os.path.join(T, "param/et_replay/tests/inputs/dlrm_kineto")))
files += [os.path.join(H, "trace_filter", "sampled_rank-0.json.gz"), os.path.join(H, "trace_filter", "sampled_rank-1.json.gz"),
          os.path.join(H, "trace_diff", "control", "control.json.gz"),
          os.path.join(H, "df_index_resolver", "df_index_resolver.json.gz"),
          os.path.join(H, "ns_resolution_trace", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"),
          os.path.join(H, "critical_path", "cuda_event_sync", "event_sync_trace.json.gz"),
          os.path.join(H, "cpu_only", "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")]


def expected(path, keep_last):
    doc = load_exact(path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    steps = steps_of(events)
    cutoff = steps[-1][0] if len(steps) >= 2 and not keep_last else None
    launch = launch_times(events) if cutoff is not None else {}
    allv, comp = [], []
    for e in gpu_events(doc):
        k = gpu_class(e)
        if k == "other":
            continue
        s = us_to_ns(e["ts"])
        corr = (e.get("args") or {}).get("correlation")
        if cutoff is not None and launch.get(corr, s) >= cutoff:
            continue
        iv = (s, s + dur_ns(e))
        allv.append(iv)
        if k == "compute":
            comp.append(iv)
    if not allv:
        return dict(events=0, span_ns=0, busy_ns=0, idle_ns=0, compute_ns=0, non_compute_ns=0)
    span = max(e for _, e in allv) - min(s for s, _ in allv)
    busy, c = union(allv), union(comp)
    return dict(events=len(allv), span_ns=span, busy_ns=busy, idle_ns=span - busy, compute_ns=c,
                non_compute_ns=busy - c)


for keep in (False, True):
    args = [TRAINPROF, "temporal", "--format", "json"] + (["--keep-last-step"] if keep else []) + files
    rc, out, err = run(args)
    check(rc == 0, f"temporal exit {rc}: {err.strip()}")
    got = {r["file"]: r for r in json.loads(out)}
    for f in files:
        exp = expected(f, keep)
        g = got.get(f, {})
        for k, v in exp.items():
            check(g.get(k) == v, f"{os.path.basename(f)} keep_last={keep}: {k} {g.get(k)} != {v}")
# the last step is left out only with two or more steps
rc, out, _ = run([TRAINPROF, "temporal", "--format", "json", files[8]])
check(json.loads(out)[0]["last_step_excluded"] == 552, "sampled_rank-0: ProfilerStep#552 left out")
rc, out, _ = run([TRAINPROF, "temporal", "--format", "json", files[0]])
check(json.loads(out)[0]["last_step_excluded"] is None, "DLRM (one step): nothing left out")
finish(f"temporal breakdown of {len(files)} traces")
