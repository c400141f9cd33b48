"""trainprof launch against an independent computation (Python, exact
decimals) of launch delays, kernels shorter than their launch, GPU work per
step, the launch queue and the CPU-bound rule, on real traces."""
import json
import os

from common import (RUNTIME_CATS, TRAINPROF, check, dur_ns, finish, gpu_class, gpu_events, load_exact, need_testdata,
                    run, steps_of, union, us_to_ns)

data = need_testdata()
T = os.path.join(data, "traces")
H = os.path.join(T, "HolisticTraceAnalysis", "tests", "data")
files = [os.path.join(H, "trace_diff", "control", "control.json.gz"),
         os.path.join(T, "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json"),
         os.path.join(T, "param/et_replay/tests/inputs/resnet_kineto.json.gz"),
         os.path.join(H, "ns_resolution_trace", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"),
         os.path.join(H, "critical_path", "alexnet", "benchmark_result_2869224_1695835535_trace.json.gz")]


def expected(path):
    doc = load_exact(path)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    calls = {}
    for e in events:
        if isinstance(e, dict) and e.get("cat") in RUNTIME_CATS and "correlation" in (e.get("args") or {}):
            calls[e["args"]["correlation"]] = (us_to_ns(e["ts"]), dur_ns(e) if "dur" in e else 0)
    steps = steps_of(events)
    delays, shorter, unmatched, q, work, per_step, streams = [], 0, 0, [], [], 0, {}
    for e in gpu_events(doc):
        if gpu_class(e) == "other":
            continue
        s, d = us_to_ns(e["ts"]), dur_ns(e)
        a = e.get("args") or {}
        c = calls.get(a.get("correlation"))
        # the headline idle: the work launched in the last of two or more steps left out
        if len(steps) < 2 or (c[0] if c else s) < steps[-1][0]:
            work.append((s, s + d))
        key = (int(a.get("device", e.get("pid"))), int(a.get("stream", e.get("tid"))))
        c = calls.get(a.get("correlation"))
        launch = c[0] if c else s
        streams.setdefault(key, []).append((s, s + d, launch))
        owner = [st for st in steps if st[0] <= launch < st[0] + st[1]]
        per_step += 1 if owner and owner[-1][0] == max(x[0] for x in steps if x[0] <= launch) else 0
        if not c:
            unmatched += 1
            continue
        delays.append(s - c[0])
        shorter += d < c[1]
        q += [(c[0], 1), (s + d, -1)]
    delays.sort()
    n = len(delays)
    out = dict(launched=n, unmatched=unmatched, shorter_than_launch=shorter)
    if n:
        out.update(delay_mean_ns=sum(delays) // n, delay_p50_ns=delays[(n - 1) // 2],
                   delay_p90_ns=delays[-(-9 * n // 10) - 1], delay_max_ns=delays[-1])
        q.sort()
        depth, area, qmax = 0, 0, 0
        for i, (t, dlt) in enumerate(q):
            if i:
                area += depth * (t - q[i - 1][0])
            depth += dlt
            qmax = max(qmax, depth)
        out.update(queue_max=qmax, queue_mean=area / (q[-1][0] - q[0][0]) if q[-1][0] > q[0][0] else 0.0)
        # the queue over 32 equal windows: overlap of each constant-depth piece with each window
        t0, t1 = q[0][0], q[-1][0]
        width = (t1 - t0) / 32
        series, depth = [0.0] * 32, 0
        for i, (t, dlt) in enumerate(q):
            if i and depth > 0 and width > 0:
                a, b = q[i - 1][0] - t0, t - t0
                for w in range(32):
                    lo, hi = w * width, (w + 1) * width if w < 31 else float("inf")
                    series[w] += depth * max(0.0, min(b, hi) - max(a, lo))
            depth += dlt
        out.update(queue_start_ns=t0, queue_end_ns=t1, queue_series=[x / width if width else 0.0 for x in series])
    out["kernels_per_step"] = per_step / len(steps) if steps else 0.0
    span = max(e for _, e in work) - min(s for s, _ in work) if work else 0
    idle = span - union(work)
    stream_idle = host = 0
    for w in streams.values():
        w.sort(key=lambda x: (x[0], x[1]))
        drained = w[0][1]
        for s, e, l in w[1:]:
            if s > drained:
                stream_idle += s - drained
                host += s - drained if l >= drained else 0
            drained = max(drained, e)
    out.update(span_ns=span, idle_ns=idle, stream_idle_ns=stream_idle, host_wait_ns=host,
               cpu_bound=span > 0 and idle * 5 >= span and host * 2 >= stream_idle and stream_idle > 0)
    return out


rc, out, err = run([TRAINPROF, "launch", "--format", "json"] + files)
check(rc == 0, f"launch exit {rc}: {err.strip()}")
got = {r["file"]: r for r in json.loads(out)}
for f in files:
    for k, v in expected(f).items():
        g = got[f][k]
        if isinstance(v, list):
            same = len(g) == len(v) and all(abs(x - y) < 1e-6 * max(1.0, abs(y)) for x, y in zip(g, v))
        else:
            same = abs(g - v) < 1e-9 * max(1.0, abs(v)) if isinstance(v, float) else g == v
        check(same, f"{os.path.basename(f)}: {k} {g} != {v}")
# resnet says no rank: "trace N", N its place in rank order (its argument index 2 puts it after the
# three rank-0 traces, before rank 3)
check(got[files[0]]["label"] == "rank 3" and got[files[2]]["label"] == "trace 3", "labels of the traces")
check([r["file"] for r in json.loads(out)] == [files[1], files[3], files[4], files[2], files[0]], "rows in rank order")
finish(f"launch overhead of {len(files)} traces")
