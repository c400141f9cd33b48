"""trainprof comm against an independent computation (Python, exact
decimals) of communication time, overlap with compute and exposed time,
per trace and per collective type, on real traces."""
import glob
import json
import os

from common import scratch, merge, overlap, TRAINPROF, check, dur_ns, finish, gpu_class, gpu_events, load_exact, need_testdata, run, us_to_ns

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
# recorded calls (record_param_comms) joined to their kernels, on a hand-made trace:
# allreduce of 1e6 Float (4 MB) in a group of 4, its RING kernel 1000 us -> 4 GB/s, bus 4 x 2*3/4 = 6 GB/s;
# all_gather of 2e6 BFloat16 out (4 MB), kernel 500 us -> 8 GB/s, bus 8 x 3/4 = 6 GB/s;
# a second allreduce with no kernel (4 MB counted in bytes, not in bandwidth); a kernel launched outside any call
tmp = scratch("tprof_calls_")


def rpc(ts, dur, name, dtype, n_in, n_out, ext):
    return {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": {"External id": ext, "Collective name": name, "dtype": dtype, "In msg nelems": n_in,
                     "Out msg nelems": n_out, "Group size": 4}}


def launch(ts, corr, tid=1):
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": tid, "ts": ts, "dur": 2,
            "args": {"correlation": corr}}


def kern(name, ts, dur, corr):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 9, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 9, "correlation": corr}}


events = [rpc(100, 50, "allreduce", "Float", 1000000, 1000000, 1), launch(120, 11),
          kern("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 200, 1000, 11),
          rpc(2000, 50, "all_gather", "BFloat16", 500000, 2000000, 2), launch(2010, 12),
          kern("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 2100, 500, 12),
          rpc(3000, 50, "allreduce", "Float", 1000000, 1000000, 3),
          launch(4000, 13), kern("ncclDevKernel_AllReduce_Sum_f32_TREE_LL(...)", 4100, 300, 13),
          launch(130, 14, tid=2), kern("ncclDevKernel_AllReduce_Sum_f32_TREE_LL(...)", 1300, 100, 14)]
p = os.path.join(tmp, "calls.json")
with open(p, "w") as f:
    json.dump({"traceEvents": events}, f)
rc, out, err = run([TRAINPROF, "comm", "--format", "json", p])
calls = {c["name"]: c for c in json.loads(out)[0]["calls"]} if rc == 0 else {}
ar, ag = calls.get("allreduce", {}), calls.get("all_gather", {})
check(ar.get("calls") == 2 and ar.get("matched") == 1 and ar.get("bytes") == 8000000 and ar.get("matched_bytes") == 4000000
      and ar.get("kernel_ns") == 1000000 and ar.get("algorithm") == "RING", f"allreduce: {ar}")
check(abs(ar.get("algbw_gbps", 0) - 4.0) < 1e-12 and abs(ar.get("busbw_gbps", 0) - 6.0) < 1e-12, f"allreduce bw: {ar}")
check(ag.get("calls") == 1 and ag.get("bytes") == 4000000 and ag.get("kernel_ns") == 500000 and
      abs(ag.get("algbw_gbps", 0) - 8.0) < 1e-12 and abs(ag.get("busbw_gbps", 0) - 6.0) < 1e-12, f"all_gather: {ag}")
rc, out, err = run([os.environ.get("PATH_DIFF", "build/tests/path_diff"), p])
check(out.startswith("same "), f"calls: read paths agree: {out}")

# the real recorded calls: counts and message sizes against Python
SIZES = {"Float": 4, "Double": 8, "Half": 2, "BFloat16": 2, "Int": 4, "Long": 8, "Byte": 1, "Char": 1, "Bool": 1}
ns = os.path.join(H, "ns_resolution_trace", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
exp = {}
for e in load_exact(ns)["traceEvents"]:
    if e.get("name") == "record_param_comms" and e.get("ph") == "X":
        a = e["args"]
        x = exp.setdefault(a.get("Collective name", ""), [0, None])
        x[0] += 1
        n = max(a.get("In msg nelems", -1), a.get("Out msg nelems", -1))
        if n > 0 and SIZES.get(a.get("dtype", ""), 0):  # else its size is not recorded: null when none is
            x[1] = (x[1] or 0) + n * SIZES[a["dtype"]]
rc, out, err = run([TRAINPROF, "comm", "--format", "json", ns])
got = {c["name"]: [c["calls"], c["bytes"]] for c in json.loads(out)[0]["calls"]}
check(got == exp and sum(v[0] for v in exp.values()) == 45, f"ns_resolution calls: {got} != {exp}")

# calls recorded without a collective name or sizes (issue 16): named by their kernels, sizes and
# bandwidth unknown (null, '-'), never an empty name with 0 B and 0.0 GB/s
def bare(ts, dur, ext):
    return {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": {"External id": ext, "Input Dims": [[], []], "Input type": ["TensorList", "Scalar"]}}


events = [bare(100, 50, 1), launch(120, 11), kern("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 200, 1000, 11),
          bare(2000, 50, 2), launch(2010, 12), kern("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", 2100, 500, 12),
          bare(3000, 50, 3), rpc(5000, 50, "broadcast", "Float", 1000, 1000, 4)]
p = os.path.join(tmp, "bare.json")
with open(p, "w") as f:
    json.dump({"traceEvents": events}, f)
rc, out, err = run([TRAINPROF, "comm", "--format", "json", p])
calls = {c["name"]: c for c in json.loads(out)[0]["calls"]} if rc == 0 else {}
check(sorted(calls) == ["[AllReduce]", "[SendRecv]", "[no kernels]", "broadcast"], f"unnamed calls: {sorted(calls)}")
for name in ("[AllReduce]", "[SendRecv]", "[no kernels]"):
    c = calls.get(name, {})
    check(c.get("calls") == 1 and c.get("bytes", 0) is None and c.get("matched_bytes", 0) is None
          and c.get("algbw_gbps", 0) is None and c.get("busbw_gbps", 0) is None, f"{name}: {c}")
check(calls.get("[AllReduce]", {}).get("kernel_ns") == 1000000, f"[AllReduce] kernel time: {calls.get('[AllReduce]')}")
bc = calls.get("broadcast", {})
check(bc.get("bytes") == 4000 and bc.get("algbw_gbps", 0) is None, f"a sized call without kernels: no bandwidth: {bc}")
rc, out, err = run([TRAINPROF, "comm", p])
rows = out.split("recorded collective calls")[1].splitlines()[3:] if rc == 0 else []
check(rc == 0 and not any(r.startswith(" ") for r in rows if r.strip()), f"comm: a nameless row: {out}")
check(" 0 B" not in out and "0.00" not in out, f"comm: unknown sizes shown as measured: {out}")
check(out.count("sizes not recorded") == 1 and "[TYPE]:" in out, f"comm: no note on unknown sizes: {out}")
rc, out, err = run([TRAINPROF, "summary", p])
check(rc == 0 and ": : " not in out and " 0 B" not in out and "busbw 0.0" not in out and
      "[AllReduce]: 1 calls, sizes not recorded" in out, f"summary: unknown sizes shown as measured: {out}")
dlrm = os.path.join(T, "param", "et_replay", "tests", "inputs", "dlrm_kineto")
for f in glob.glob(os.path.join(dlrm, "worker0_*.json"))[:1]:
    for cmd in ("comm", "summary"):
        rc, out, err = run([TRAINPROF, cmd, f])
        check(rc == 0 and ": : " not in out and " 0 B" not in out and "busbw 0.0" not in out and
              "[AllReduce]" in out, f"dlrm {cmd}: {out}")
finish(f"communication of {len(files)} traces and recorded calls")
