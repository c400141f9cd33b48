"""trainprof advice: every rule fires on input built to cross its threshold
and stays silent just below it, with the numbers worked out by hand; and on
real traces its values agree with an independent computation."""
import json
import os

from common import (scratch, TRAINPROF, check, dur_ns, finish, gpu_class, gpu_events, load_exact, merge, overlap, run,
                    steps_of, testdata, us_to_ns)

tmp = scratch("tprof_advice_")


def trace(events, rank=0):
    p = os.path.join(tmp, f"t{len(os.listdir(tmp))}.json")
    with open(p, "w") as f:
        json.dump({"distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": events}, f)
    return p


def k(name, ts, dur, corr, stream=7, cat="kernel"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": stream, "correlation": corr}}


def launch(ts, corr, dur=1):
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": {"correlation": corr}}


def step(n, ts, dur):
    return {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}", "pid": 1, "tid": 1, "ts": ts, "dur": dur}


def advice(paths):
    rc, out, err = run([TRAINPROF, "advice", "--format", "json"] + paths)
    check(rc == 0, f"advice exit {rc}: {err.strip()}")
    return {(a["rule"], a["rank"]): a for a in json.loads(out)} if rc == 0 else {}


# the op rules, on hand-built ops (cpu_op spans holding their launches)
def op(name, ts, dur, tid=1):
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": {}}


def rt(name, ts, corr=None):
    return {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 1,
            "args": {} if corr is None else {"correlation": corr}}


# attention-math: bmm 20 + softmax 10 of 100 us of the ops' time -> 30% >= 10%; a flash op instead: silent
ev = [step(1, 0, 1000), op("aten::bmm", 10, 5), launch(11, 1), k("gemm", 20, 20, 1),
      op("aten::_softmax", 40, 5), launch(41, 2), k("softmax_kernel", 50, 10, 2),
      op("aten::mm", 70, 5), launch(71, 3), k("gemm2", 80, 70, 3)]
a = advice([trace(ev)])
check(("attention-math", 0) in a and abs(a[("attention-math", 0)]["value"] - 0.30) < 1e-12, f"attention-math: {a}")
ev2 = ev + [op("aten::_flash_attention_forward", 200, 5), launch(201, 4), k("flash_fwd_kernel", 210, 1, 4)]
check(("attention-math", 0) not in advice([trace(ev2)]), "attention-math: silent beside a fused attention op")
# bmm + softmax at 9.1% (10 of 110): below the threshold
ev3 = [step(1, 0, 1000), op("aten::bmm", 10, 5), launch(11, 1), k("gemm", 20, 5, 1),
       op("aten::_softmax", 40, 5), launch(41, 2), k("softmax_kernel", 50, 5, 2),
       op("aten::mm", 70, 5), launch(71, 3), k("gemm2", 80, 100, 3)]
check(("attention-math", 0) not in advice([trace(ev3)]), "attention-math: 9% is below 10%")

# slow-network: 4 ranks reach a 64 MiB bf16 AllReduce together each 40 ms step; its transfer D sets the busbw,
# 64 MiB x 2(n-1)/n / D: D = 10 ms -> 10.07 GB/s, fires; D = 5298 us -> 19.0 GB/s, fires; D = 4793 us -> 21.0:
# silent; 10 ms in a 400 ms step (2.5% of it): silent; rank 1 arriving 5 ms late: its waits, not the network
def net_ranks(dur_us, step_us=40000, late_rank=None, late_us=0):
    paths = []
    for r in range(4):
        ev, corr = [], 1
        for s_ in range(3):
            t0 = 1000 + s_ * step_us
            ev.append(step(s_ + 1, t0, step_us - 10))
            ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": t0 + 10,
                       "dur": 20, "args": {"Collective name": "allreduce", "dtype": "BFloat16",
                                           "In msg nelems": 32 << 20, "Out msg nelems": 32 << 20, "Group size": 4,
                                           "Process Group Name": "0", "Seq": s_}})
            ev.append(launch(t0 + 15, corr))
            start = t0 + 100 + (late_us if r == late_rank else 0)
            end = t0 + 100 + late_us + dur_us
            ev.append(k("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", start, end - start, corr))
            corr += 1
        p = os.path.join(tmp, f"net{len(os.listdir(tmp))}_r{r}.json")
        with open(p, "w") as f:
            json.dump({"distributedInfo": {"rank": r, "world_size": 4}, "traceEvents": ev}, f)
        paths.append(p)
    return paths


for dur, fires in ((10000, True), (5298, True), (4793, False)):
    got = advice(net_ranks(dur)).get(("slow-network", None))
    want = (32 << 20) * 2 * 1.5 / (dur * 1000)
    if fires:
        check(got is not None and abs(got["value"] - want) < 1e-9 and got["threshold"] == 20,
              f"slow-network at {want:.2f} GB/s: {got}")
        check(got is not None and "arrive together" in got["evidence"] and "64 MiB" in got["evidence"],
              f"slow-network evidence: {got and got['evidence']}")
    else:
        check(got is None, f"slow-network silent at {want:.2f} GB/s: {got}")
check(("slow-network", None) not in advice(net_ranks(10000, step_us=400000)), "slow-network: 2.5% of the step is silent")
a = advice(net_ranks(10000, late_rank=1, late_us=5000))
check(("slow-network", None) not in a and ("late-rank", 1) in a, f"a late rank is not the network: {sorted(a)}")
rc, out, _ = run([TRAINPROF, "summary"] + net_ranks(10000))
check(rc == 0 and "slow-network" in out, "summary's advice names the slow network")

# the critical path's rules: each value is the share `trainprof critical-path` gives for the step
# (tests/cli/critical_path.py holds that command to HTA's numbers)
LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync",
            "cudaMemsetAsync", "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemsetAsync", "hipMemcpyAsync")


def path_of(p):
    rc, out, err = run([TRAINPROF, "critical-path", "--format", "json", "--top", "0", p])
    check(rc == 0, f"critical-path: {err[-200:]}")
    r = json.loads(out) if rc == 0 else None
    return r["traces"][0] if r and "traces" in r else r


def path_shares(p):
    r = path_of(p)
    if not r:
        return {}
    on = r["on_path"]
    launch = r["launch_ns"] + sum(x["time_ns"] for x in on if x["kind"] == "runtime" and x["name"] in LAUNCHES)
    runtime = sum(x["time_ns"] for x in on if x["kind"] == "runtime" and x["name"] not in LAUNCHES)
    return {"path-launch": launch / r["path_ns"], "path-runtime": runtime / r["path_ns"],
            "path-comm": r["comm_ns"] / r["path_ns"]}


def launch_bound(gap_us):
    """40 launches of 1 us kernels, each GAP_US after its 20 us call: the GPU waits for the launches."""
    ev, t = [step(1, 0, 40 * 40 + 100)], 10
    for i in range(40):
        ev += [op("aten::add", t, 22), launch(t + 1, i + 1, dur=20), k("tiny_kernel", t + 1 + gap_us, 1, i + 1)]
        t += 40
    return trace(ev)


def long_kernel(name, dur_us, malloc_us=0):
    """One op: a cudaMalloc of MALLOC_US, then a launch of a DUR_US kernel NAME."""
    ev = [step(1, 0, dur_us + malloc_us + 100), op("aten::op", 5, malloc_us + 10)]
    if malloc_us:
        ev.append(rt("cudaMalloc", 6) | {"dur": malloc_us})
    ev += [launch(8 + malloc_us, 1), k(name, 12 + malloc_us, dur_us, 1)]
    return trace(ev)


for what, p, rule, fires in (("launch-bound loop", launch_bound(25), "path-launch", True),
                             ("a 50 ms GEMM", long_kernel("sm90_gemm_bf16", 50000), "path-launch", False),
                             ("a 50 ms NCCL kernel", long_kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 50000),
                              "path-comm", True),
                             ("a 50 ms GEMM", long_kernel("sm90_gemm_bf16", 50000), "path-comm", False),
                             ("a 30 ms cudaMalloc", long_kernel("sm90_gemm_bf16", 5000, malloc_us=30000),
                              "path-runtime", True),
                             ("a 1 ms cudaMalloc", long_kernel("sm90_gemm_bf16", 50000, malloc_us=1000),
                              "path-runtime", False)):
    want = path_shares(p).get(rule)
    got = advice([p]).get((rule, 0))
    threshold = {"path-launch": 0.25, "path-runtime": 0.25, "path-comm": 0.10}[rule]
    check(want is not None and (want >= threshold) == fires, f"{rule} on {what}: the path's share {want} vs {threshold}")
    if fires:
        check(got is not None and abs(got["value"] - want) < 1e-12 and got["threshold"] == threshold,
              f"{rule} on {what}: {got} (path share {want})")
    else:
        check(got is None, f"{rule} silent on {what}: {got}")

# summary's line: the sampled steps' paths summed (4 of 20: evenly spaced, the warm-up step left out)
gen20 = os.path.join(tmp, "gen20.json")
rc, _, err = run([os.environ.get("GENTRACE", ""), "--steps", "20", "--layers", "2", "-o", gen20])
check(rc == 0, f"gentrace: {err[-200:]}")
full = path_of(gen20)
rc, out, _ = run([TRAINPROF, "summary", "--format", "json", gen20])
sp = json.loads(out)["critical_path"] if rc == 0 else None
if full and sp:
    picked = [full["steps"][1 + (2 * k_ + 1) * 19 // 8] for k_ in range(4)]
    check(sp["windows"] == 4, f"summary samples 4 steps: {sp['windows']}")
    for col in ("path_ns", "span_ns", "compute_ns", "launch_ns", "comm_ns", "cpu_op_ns", "runtime_ns"):
        check(sp[col] == sum(x[col] for x in picked), f"summary's critical path {col}: {sp[col]} vs steps "
              f"{[x['step'] for x in picked]}")
rc, out, _ = run([TRAINPROF, "summary", gen20])
check(rc == 0 and "critical path (4 sampled steps): " in out and "% GPU compute" in out, "summary's critical-path line")

# tiny-elementwise: 1,000 aten::add launches of 2 us in one step -> fires; 999: silent
def adds(n):
    out = [step(1, 0, 10 ** 7)]
    for i in range(n):
        t = 100 + i * 10
        out += [op("aten::add", t, 4), launch(t + 1, 100 + i), k("add_kernel", t + 2, 2, 100 + i)]
    return out


a = advice([trace(adds(1000))])
check(("tiny-elementwise", 0) in a and a[("tiny-elementwise", 0)]["value"] == 1000, f"tiny-elementwise: {a}")
check(("tiny-elementwise", 0) not in advice([trace(adds(999))]), "tiny-elementwise: 999 launches are below 1,000")

# blocking-ops: a nonzero and a cudaStreamSynchronize in each of 2 steps -> 2 per step; half that: 1, still fires;
# none: silent
ev = [step(1, 0, 100), step(2, 100, 100)]
for s0 in (0, 100):
    ev += [op("aten::nonzero", s0 + 10, 5), launch(s0 + 11, s0 + 1), k("nonzero_kernel", s0 + 20, 2, s0 + 1),
           rt("cudaStreamSynchronize", s0 + 30)]
a = advice([trace(ev)])
check(("blocking-ops", 0) in a and a[("blocking-ops", 0)]["value"] == 2.0, f"blocking-ops: {a}")
check(("blocking-ops", 0) not in advice([trace(ev[:2] + [op("aten::add", 10, 5), launch(11, 1), k("a", 20, 2, 1)])]),
      "blocking-ops: silent without them")

# the GEMM rules, on aten::mm ops with their inputs, on an H100 (bf16 989 TFLOP/s, 3.35 TB/s)
def h100_trace(events):
    p = os.path.join(tmp, f"t{len(os.listdir(tmp))}.json")
    with open(p, "w") as f:
        json.dump({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
                   "distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": events}, f)
    return p


def mm(ts, dims, dtype, dur, corr):
    o = op("aten::mm", ts, 5)
    o["args"] = {"Input Dims": dims, "Input type": [dtype, dtype]}
    return [o, launch(ts + 1, corr), k("gemm", ts + 2, dur, corr)]


# 2 x 788 x 768 x 768 FLOPs in 10 us: 93 TFLOP/s, 10.7% of the roof (258 FLOP/B x 3.35 TB/s): poor, 788 unaligned
a = advice([h100_trace([step(1, 0, 100)] + mm(10, [[788, 768], [768, 768]], "c10::BFloat16", 10, 1))])
check(("gemm-shapes", 0) in a and a[("gemm-shapes", 0)]["value"] == 1.0, f"gemm-shapes: {a}")
# the same work with 768 rows: aligned, silent
a = advice([h100_trace([step(1, 0, 100)] + mm(10, [[768, 768], [768, 768]], "c10::BFloat16", 10, 1))])
check(("gemm-shapes", 0) not in a, f"gemm-shapes: aligned GEMMs are not flagged: {a}")
# fp32 GEMM ops beside bf16 ones: 10 of 100 us -> 10% fires, 9 of 100 is silent
for fp32_us, fires in ((10, True), (9, False)):
    ev = [step(1, 0, 1000)] + mm(10, [[1024, 1024], [1024, 1024]], "c10::BFloat16", 100 - fp32_us, 1) + \
        mm(200, [[1024, 1024], [1024, 1024]], "float", fp32_us, 2)
    a = advice([h100_trace(ev)])
    got = a.get(("fp32-gemm-ops", 0))
    check((got is not None) == fires and (not fires or abs(got["value"] - 0.10) < 1e-12), f"fp32-gemm-ops {fp32_us}: {a}")

# attention: softmax 30 of 100 us of kernel time -> 30% >= 10%; with a flash kernel instead: silent
base = [step(1, 0, 1000), launch(1, 1), launch(2, 2), launch(3, 3)]
a = advice([trace(base + [k("softmax_warp_forward", 10, 30, 1), k("gemm", 50, 70, 2)])])
check(("attention", 0) in a and abs(a[("attention", 0)]["value"] - 0.3) < 1e-12, f"attention 30%: {a}")
a = advice([trace(base + [k("flash_fwd_kernel", 10, 30, 1), k("gemm", 50, 70, 2)])])
check(("attention", 0) not in a, "fused attention: no advice")
a = advice([trace(base + [k("softmax_warp_forward", 10, 9, 1), k("gemm", 50, 91, 2)])])
check(("attention", 0) not in a, "9% attention: below the threshold")

# fp32 GEMMs: 60 of 100 us; a bf16 GEMM: silent
a = advice([trace(base + [k("ampere_sgemm_128x64_tn", 10, 60, 1), k("relu", 80, 40, 2)])])
check(("fp32-gemm", 0) in a and abs(a[("fp32-gemm", 0)]["value"] - 0.6) < 1e-12, f"fp32 gemm: {a}")
a = advice([trace(base + [k("sm90_xmma_gemm_bf16bf16_bf16f32", 10, 60, 1), k("relu", 80, 40, 2)])])
check(("fp32-gemm", 0) not in a, "bf16 gemm: no advice")

# exposed communication: nccl 100..300 on stream 9, compute 100..150 -> exposed 150 of 200 = 75%
a = advice([trace(base + [k("gemm", 100, 50, 1), k("ncclDevKernel_AllReduce_Sum_bf16", 100, 200, 2, stream=9)])])
check(("exposed-comm", 0) in a and abs(a[("exposed-comm", 0)]["value"] - 0.75) < 1e-12, f"exposed comm: {a}")
a = advice([trace(base + [k("gemm", 100, 200, 1), k("ncclDevKernel_AllReduce_Sum_bf16", 100, 200, 2, stream=9)])])
check(("exposed-comm", 0) not in a, "fully overlapped communication: no advice")

# data loading: 150 of 1000 us of step time in enumerate(DataLoader) -> 15%
dl = {"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
      "pid": 1, "tid": 1, "ts": 5, "dur": 150}
a = advice([trace(base + [dl, k("gemm", 200, 500, 1)])])
check(("data-loading", 0) in a and abs(a[("data-loading", 0)]["value"] - 0.15) < 1e-12, f"data loading: {a}")
a = advice([trace(base + [dict(dl, dur=90), k("gemm", 200, 500, 1)])])
check(("data-loading", 0) not in a, "9% data loading: below the threshold")

# host syncs: two DtoH copies launched in the one step
dtoh = [k("Memcpy DtoH (Device -> Pageable)", 300, 5, 2, cat="gpu_memcpy"),
        k("Memcpy DtoH (Device -> Pageable)", 400, 5, 3, cat="gpu_memcpy")]
a = advice([trace(base + [k("gemm", 10, 200, 1)] + dtoh)])
check(("host-sync", 0) in a and a[("host-sync", 0)]["value"] == 2.0, f"host sync: {a}")

# CPU-bound: kernels 10 us each, each launched after the previous ended: idle 90%, all host waits
ev = [step(1, 0, 1000)]
for i in range(10):
    ev += [launch(i * 100, i), k("tiny", i * 100 + 5, 10, i)]
a = advice([trace(ev)])
check(("cpu-bound", 0) in a, f"CPU-bound: {a}")
ev = [step(1, 0, 1000)] + [launch(i, i) for i in range(10)] + [k("big", 10 + i * 90, 90, i) for i in range(10)]
a = advice([trace(ev)])
check(("cpu-bound", 0) not in a, "a busy GPU: not CPU-bound")

# uneven ranks: step 1 takes 1000 us on rank 0 and 1300 us on rank 1 -> skew 300 / mean 1150
r0 = trace([step(1, 0, 1000), launch(1, 1), k("gemm", 10, 100, 1)], rank=0)
r1 = trace([step(1, 0, 1300), launch(1, 1), k("gemm", 10, 100, 1)], rank=1)
a = advice([r0, r1])
check(("uneven-ranks", None) in a and abs(a[("uneven-ranks", None)]["value"] - 300 / 1150) < 1e-12, f"uneven: {a}")
r1 = trace([step(1, 0, 1050), launch(1, 1), k("gemm", 10, 100, 1)], rank=1)
check(("uneven-ranks", None) not in advice([r0, r1]), "5% skew: below the threshold")

# real traces: exposed-comm values against an independent computation
data = testdata()
if data:
    dlrm_dir = os.path.join(data, "traces/param/et_replay/tests/inputs/dlrm_kineto")
    dlrm = sorted(os.path.join(dlrm_dir, f) for f in os.listdir(dlrm_dir))
    a = advice(dlrm)
    for p in dlrm:
        doc = load_exact(p)
        comm, comp = [], []
        for e in gpu_events(doc):
            s = us_to_ns(e["ts"])
            (comm if gpu_class(e) == "communication" else comp if gpu_class(e) == "compute" else []).append(
                (s, s + dur_ns(e)))
        mc = merge(comm)
        total = sum(e - s for s, e in mc)
        ex = (total - overlap(mc, merge(comp))) / total
        got = a.get(("exposed-comm", doc["distributedInfo"]["rank"]))
        check(got is not None and abs(got["value"] - ex) < 1e-12, f"{os.path.basename(p)}: exposed {ex}: {got}")
    steps = [steps_of(load_exact(p)["traceEvents"])[0][1] for p in dlrm]
    skew = (max(steps) - min(steps)) / (sum(steps) / len(steps))
    got = a.get(("uneven-ranks", None))
    check(got is not None and abs(got["value"] - skew) < 1e-9, f"DLRM skew {skew}: {got}")
else:
    print("SKIP (visible): real traces not checked, ../shared/data absent")
finish("advice rules")
