"""trainprof comm against an independent computation (Python, exact
decimals) of communication time, overlap with compute and exposed time,
per trace and per collective type, on real traces."""
import json
import os

from common import merge, overlap, TRAINPROF, check, dur_ns, finish, gpu_class, gpu_events, load_exact, need_testdata, run, us_to_ns

data = need_testdata()
T = os.path.join(data, "traces")
H = os.path.join(T, "HolisticTraceAnalysis", "tests", "data")
dlrm = os.path.join(T, "param/et_replay/tests/inputs/dlrm_kineto")
files = sorted(os.path.join(dlrm, f) for f in os.listdir(dlrm))
files += [os.path.join(H, "trace_diff", "control", "control.json.gz"), os.path.join(H, "trace_diff", "test", "test.json.gz"),
          os.path.join(H, "trace_filter", "sampled_rank-0.json.gz"),
          os.path.join(H, "ns_resolution_trace", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"),
          os.path.join(H, "df_index_resolver", "df_index_resolver.json.gz")]
TYPES = ["ReduceScatter", "AllReduce", "AllGather", "AllToAll", "SendRecv", "Broadcast", "Reduce", "Send", "Recv"]


def ctype(name):
    i = name.find("Kernel_")
    if i >= 0:
        for t in TYPES:
            if name[i + 7:].startswith(t):
                return t
    for t in TYPES:
        if t in name:
            return t
    return "other"


def expected(path):
    comm, comp, by = [], [], {}
    for e in gpu_events(load_exact(path)):
        s = us_to_ns(e["ts"])
        iv = (s, s + dur_ns(e))
        k = gpu_class(e)
        if k == "compute":
            comp.append(iv)
        elif k == "communication":
            comm.append(iv)
            by.setdefault(ctype(e["name"]), []).append(iv)
    mc, mk = merge(comm), merge(comp)
    total = sum(e - s for s, e in mc)
    ov = overlap(mc, mk)
    types = []
    for t, iv in by.items():
        m = merge(iv)
        tm = sum(e - s for s, e in m)
        types.append(dict(type=t, count=len(iv), time_ns=tm, total_ns=sum(e - s for s, e in iv),
                          exposed_ns=tm - overlap(m, mk)))
    types.sort(key=lambda x: (-x["time_ns"], x["type"]))
    return dict(comm_ns=total, compute_ns=sum(e - s for s, e in mk), overlap_ns=ov, exposed_ns=total - ov, types=types)


rc, out, err = run([TRAINPROF, "comm", "--format", "json"] + files)
check(rc == 0, f"comm exit {rc}: {err.strip()}")
got = {r["file"]: r for r in json.loads(out)}
for f in files:
    exp = expected(f)
    g = got[f]
    for k, v in exp.items():
        check(g[k] == v, f"{os.path.basename(f)}: {k} differs: {str(g[k])[:200]} != {str(v)[:200]}")
    if exp["comm_ns"]:
        check(abs(g["overlap"] - exp["overlap_ns"] / exp["comm_ns"]) < 1e-12, f"{os.path.basename(f)}: overlap ratio")
check(any(t["type"] == "SendRecv" for t in got[files[0]]["types"]), "DLRM rank 0 has SendRecv")
finish(f"communication of {len(files)} traces")
