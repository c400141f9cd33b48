"""trainprof ranks against an independent computation (Python, exact
decimals) on the 8 DLRM ranks and the two trace_filter ranks: per-rank
values, the straggler rule and step-time skew."""
import json
import os

from common import (merge, overlap, TRAINPROF, check, dur_ns, finish, gpu_class, gpu_events, launch_times, load_exact,
                    need_testdata, run,
                    steps_of, union, us_to_ns)

data = need_testdata()
T = os.path.join(data, "traces")
dlrm_dir = os.path.join(T, "param/et_replay/tests/inputs/dlrm_kineto")
dlrm = sorted(os.path.join(dlrm_dir, f) for f in os.listdir(dlrm_dir))
filt = [os.path.join(T, "HolisticTraceAnalysis/tests/data/trace_filter", f"sampled_rank-{i}.json.gz") for i in (0, 1)]


def per_rank(path):
    doc = load_exact(path)
    events = doc["traceEvents"]
    steps = steps_of(events)
    # temporal's headline: with two or more steps, the work launched in the
    # last one left out (its launch call's start, else its own); the
    # communication figures are over the whole trace
    cut = max(s for s, _, _ in steps) if len(steps) >= 2 else None
    launched = launch_times(events)
    work, comp, comm, comp_all = [], [], [], []
    for e in gpu_events(doc):
        k = gpu_class(e)
        if k == "other":
            continue
        s = us_to_ns(e["ts"])
        iv = (s, s + dur_ns(e))
        if k == "communication":
            comm.append(iv)
        if k == "compute":
            comp_all.append(iv)
        if cut is not None and launched.get((e.get("args") or {}).get("correlation"), s) >= cut:
            continue
        work.append(iv)
        if k == "compute":
            comp.append(iv)
    span = max(e for _, e in work) - min(s for s, _ in work)
    mc, mk = merge(comm), merge(comp_all)
    comm_ns = sum(e - s for s, e in mc)
    return dict(rank=doc["distributedInfo"]["rank"], steps=len(steps),
                step_mean_ns=sum(d for _, d, _ in steps) // len(steps) if steps else 0, span_ns=span,
                idle_ns=span - union(work), compute_ns=union(comp), comm_ns=comm_ns,
                exposed_comm_ns=comm_ns - overlap(mc, mk)), {int(n.split("#")[1]): d for _, d, n in steps}


def expected(paths):
    rows, stepmaps = zip(*(per_rank(p) for p in paths))
    top = max(range(len(rows)), key=lambda i: (rows[i]["compute_ns"], -i))
    others = sorted(r["compute_ns"] for i, r in enumerate(rows) if i != top)
    med = others[(len(others) - 1) // 2]
    exp_mean = sum(r["exposed_comm_ns"] for i, r in enumerate(rows) if i != top) // len(others)
    straggler = rows[top]["rank"] if med > 0 and rows[top]["compute_ns"] / med - 1 >= 0.10 and \
        rows[top]["exposed_comm_ns"] < exp_mean else None
    common = [n for n in stepmaps[0] if all(n in m for m in stepmaps)]
    skews = [max(m[n] for m in stepmaps) - min(m[n] for m in stepmaps) for n in common]
    return rows, dict(compute_median_ns=med, others_exposed_mean_ns=exp_mean, straggler=straggler,
                      common_steps=len(common), skew_max_ns=max(skews) if skews else 0,
                      skew_mean_ns=sum(skews) // len(skews) if skews else 0)


for paths, want in ((dlrm, None), (filt, 1)):
    rc, out, err = run([TRAINPROF, "ranks", "--format", "json"] + paths)
    check(rc == 0, f"ranks exit {rc}: {err.strip()}")
    g = json.loads(out)
    rows, summary = expected(paths)
    for gr, er in zip(g["ranks"], rows):
        for k, v in er.items():
            check(gr[k] == v, f"rank {er['rank']}: {k} {gr[k]} != {v}")
    for k, v in summary.items():
        check(g[k] == v, f"{k}: {g[k]} != {v}")
    check(g["straggler"] == want, f"straggler {g['straggler']}, expected {want}")
finish("ranks of DLRM (8) and trace_filter (2)")
