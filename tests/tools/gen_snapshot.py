#!/usr/bin/env python3
"""Synthetic CUDA memory snapshots with known ground truth, for trainprof's
tests. A small simulation of the caching allocator (segments, blocks, trace
entries with shared frame lists) is written with Python's pickle in one of
PyTorch's layouts; the truth is computed from the simulation itself (live
requested bytes after every action), not from any viewer logic.

usage: gen_snapshot.py OUT.pickle TRUTH.json [--seed N] [--events N]
       [--devices N] [--protocol P] [--ring K] [--form current|traces|history|list]
       [--oom] [--gzip] [--line-shift N] [--native]

--line-shift N moves every Python frame's line by N (the same code after an
edit above it: for --compare); --native adds a call site whose stack has no
Python frame (PyTorch's autograd thread), with the unwinder, allocator and
libc frames around it that call sites leave out."""
import argparse
import gzip
import json
import pickle
import random

MB = 1 << 20
SEG = 2 * MB


def frames_table(line_shift=0, native=False):
    cpp = [{"name": "torch::unwind::unwind()", "filename": "??", "line": 0},
           {"name": "c10::cuda::CUDACachingAllocator::malloc", "filename": "CUDACachingAllocator.cpp", "line": 1100}]
    # CPython's own frames between the Python ones (a stack recorded with stacks="all")
    interp = [{"name": "_PyEval_EvalFrameDefault", "filename": "/usr/local/src/conda/python-3.11/Python/ceval.c",
               "line": 4769}] if native else []
    sites = []
    for i, (fn, f, line) in enumerate([("forward", "/w/model.py", 54), ("attention", "/w/layers.py", 120),
                                        ("mlp", "/w/layers.py", 200), ("step", "/w/optim.py", 33),
                                        ("collate", "/w/data.py", 2**64 - 1)]):
        shift = line_shift if line < 2**63 else 0
        py = [{"name": fn, "filename": f, "line": line + shift}, *interp,
              {"name": "train", "filename": "/w/train.py", "line": 10 + i + line_shift}, *interp,
              {"name": "<module>", "filename": "/w/train.py", "line": 1 + line_shift}]
        sites.append(cpp + py)
    if native:
        sites.append([{"name": "torch::unwind::unwind()", "filename": "??", "line": 0},
                      {"name": "torch::CapturedTraceback::gather(bool, bool, bool)", "filename": "??", "line": 0},
                      {"name": "torch::cuda::(anonymous namespace)::gather_with_cpp()",
                       "filename": "memory_snapshot.cpp", "line": 0},
                      {"name": "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(int, "
                               "unsigned long, CUstream_st*)", "filename": "CUDACachingAllocator.cpp", "line": 0},
                      {"name": "at::detail::empty_cuda(c10::ArrayRef<long>)", "filename": "??", "line": 0},
                      {"name": "c10::impl::BoxedKernelWrapper<at::Tensor ()>::call", "filename":
                       "/pytorch/aten/src/ATen/core/boxing/impl/boxing.h", "line": 0},
                      {"name": "at::native::mm_backward", "filename": "??", "line": 0},
                      {"name": "torch::autograd::Engine::thread_main", "filename": "??", "line": 0},
                      {"name": "execute_native_thread_routine", "filename": "thread48.o", "line": 0},
                      {"name": "clone", "filename": "??", "line": 0},
                      {"name": "__libc_start_main", "filename": "??", "line": 0},
                      {"name": "_start", "filename": "??", "line": 0}])
    return sites


# PyTorch's memory viewer leaves these out of stacks (a function name or a
# file name holding one of the parts; MemoryViz.js, torch/cuda/_memory_viz.py),
# and trainprof the caching allocator's own frames too (docs/METRICS.md)
OMIT_NAMES = ["unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp", "_start", "__libc_start_main",
              "PyEval_", "PyObject_", "PyFunction_", "CUDACachingAllocator::"]
OMIT_FILES = ["core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c", "Objects/call.c",
              "Objects/methodobject.c", "pycore_ceval.h", "ceval.c", "cpython/abstract.h", "CUDACachingAllocator.cpp"]


def site_key(frames, depth=4):
    kept = [f for f in frames if not any(w in f["name"] for w in OMIT_NAMES)
            and not any(w in f["filename"] for w in OMIT_FILES)]
    py = [f for f in kept if f["filename"].endswith(".py")][:depth] or kept[:depth]
    return ";".join(f"{f['filename']}:{f['line']}:{f['name']}" for f in reversed(py))


def simulate(rng, n_events, device, oom, ring, line_shift=0, native=False):
    sites = frames_table(line_shift, native)
    ev, live, cached, segs = [], {}, [], {}  # live: addr -> (req, site); segs: addr -> size
    base = 0x7F0000000000 + device * (1 << 40)
    nxt = [base]
    t = [1_700_000_000_000_000 + device]
    flushes = []  # event index of the segment_alloc that follows a flush

    def emit(action, addr, size, frames, **kw):
        t[0] += rng.randint(1, 50)
        e = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t[0],
             "compile_context": "N/A", "user_metadata": "", "frames": frames}
        e.update(kw)
        ev.append(e)

    while len(ev) < n_events:
        if live and (rng.random() < 0.45 or len(live) > 60):
            addr = rng.choice(sorted(live))
            req, s = live.pop(addr)
            emit("free_requested", addr, req, sites[s])
            emit("free_completed", addr, req, sites[s])
            cached.append(addr)
            continue
        req = rng.choice([512, 4096, 3 * MB + 17, 8 * MB, 40 * MB + 3, rng.randint(1, 64 * MB)])
        s = rng.randrange(len(sites))
        fit = [a for a in cached if segs[a] >= req]
        if fit and rng.random() < 0.7:
            addr = fit[0]
            cached.remove(addr)
        else:
            if cached and rng.random() < 0.15:  # flush the cache, then cudaMalloc again
                for a in list(cached):
                    emit("segment_free", a, segs.pop(a), sites[s])
                cached.clear()
                flushes.append(len(ev))
            size = (req + SEG - 1) // SEG * SEG
            addr = nxt[0]
            nxt[0] += size + SEG
            segs[addr] = size
            emit("segment_alloc", addr, size, sites[s])
        live[addr] = (req, s)
        emit("alloc", addr, req, sites[s])
    if oom:
        emit("oom", 0, 80 << 30, [], device_free=123 * MB)
    return ev, live, cached, segs, sites, flushes


def truth_of(ev, live, segs, sites, keep_from, flushes):
    """Live requested bytes after each alloc/free_completed in the kept
    window, from the simulation's own bookkeeping."""
    cur, reqs = {}, {}
    best, best_i, live_at_best = 0, None, None
    res = 0
    res_at = []
    for i, e in enumerate(ev):
        a = e["action"]
        if a == "segment_alloc":
            res += e["size"]
        elif a == "segment_free":
            res -= e["size"]
        res_at.append(res)
        if a == "alloc":
            cur[e["addr"]] = (e["size"], site_key(e["frames"]))
        elif a == "free_completed":
            cur.pop(e["addr"], None)
        else:
            continue
        if i >= keep_from:
            tot = sum(v[0] for v in cur.values())
            if tot > best:
                best, best_i = tot, i - keep_from
                live_at_best = dict(cur)
    kept = ev[keep_from:]
    res_start = res_at[keep_from - 1] if keep_from else 0
    res_peak = max([res_start] + res_at[keep_from:])
    bysite = {}
    for size, k in (live_at_best or {}).values():
        bysite[k] = bysite.get(k, 0) + size
    counts = {}
    for e in kept:
        counts[e["action"]] = counts.get(e["action"], 0) + 1
    return {"events": len(kept), "peak_active_bytes": best, "peak_index": best_i,
            "active_at_end_bytes": sum(v[0] for v in live.values()),
            "reserved_at_end_bytes": sum(segs.values()), "reserved_peak_bytes": res_peak,
            "retries": sum(1 for f in flushes if f - 1 >= keep_from), "actions": counts,
            "sites_at_peak": bysite, "ooms": counts.get("oom", 0)}


def segments_of(device, live, cached, segs, sites, form):
    out = []
    for addr in sorted(segs):
        size = segs[addr]
        if addr in live:
            req, s = live[addr]
            bsize = (req + 511) // 512 * 512
            blocks = [{"address": addr, "size": bsize, "requested_size": req, "state": "active_allocated",
                       "frames": sites[s]}]
            if size > bsize:
                blocks.append({"address": addr + bsize, "size": size - bsize, "requested_size": 0,
                               "state": "inactive", "frames": []})
        else:
            blocks = [{"address": addr, "size": size, "requested_size": 0, "state": "inactive", "frames": []}]
        if form == "history":
            for b in blocks:
                fr = b.pop("frames")
                b.pop("address")
                if b["state"] != "inactive":
                    b["history"] = [{"addr": addr, "real_size": b["requested_size"], "frames": fr}]
        act = sum(b["size"] for b in blocks if b["state"] != "inactive")
        seg = {"device": device, "address": addr, "total_size": size, "allocated_size": act, "active_size": act,
               "requested_size": sum(b["requested_size"] for b in blocks if b["state"] != "inactive"),
               "stream": 0, "segment_type": "large", "blocks": blocks}
        if form != "history":
            seg.update({"segment_pool_id": (0, 0), "is_expandable": False, "frames": []})
        out.append(seg)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("truth")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--events", type=int, default=500)
    ap.add_argument("--devices", type=int, default=1)
    ap.add_argument("--protocol", type=int, default=4)
    ap.add_argument("--ring", type=int, default=0)
    ap.add_argument("--form", default="current")
    ap.add_argument("--oom", action="store_true")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--line-shift", type=int, default=0)
    ap.add_argument("--native", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    traces, segments, truth = [], [], {}
    for d in range(a.devices):
        ev, live, cached, segs, sites, flushes = simulate(rng, a.events, d, a.oom, a.ring, a.line_shift, a.native)
        keep_from = max(0, len(ev) - a.ring) if a.ring else 0
        t = truth_of(ev, live, segs, sites, keep_from, flushes)
        if a.form == "list":
            # no history: the viewer plots the live blocks, flat
            t = {"events": 0, "peak_active_bytes": t["active_at_end_bytes"], "peak_index": -1,
                 "active_at_end_bytes": t["active_at_end_bytes"], "reserved_at_end_bytes": t["reserved_at_end_bytes"]}
        elif a.form == "history":
            # the 2023 files hold one trace entry: a snapshot marker
            ev, keep_from = [{"action": "snapshot", "addr": 0, "size": t["active_at_end_bytes"], "stream": 0}], 0
            t = {"events": 1, "peak_active_bytes": t["active_at_end_bytes"], "peak_index": -1,
                 "active_at_end_bytes": t["active_at_end_bytes"], "reserved_at_end_bytes": t["reserved_at_end_bytes"]}
        truth[str(d)] = t
        traces.append(ev[keep_from:])
        segments += segments_of(d, live, cached, segs, sites, a.form)
    if a.form == "list":
        snap = segments
    elif a.form in ("traces", "history"):
        snap = {"segments": segments, "device_traces": traces}
    else:
        snap = {"segments": segments, "device_traces": traces,
                "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                       "garbage_collection_threshold": 0.0, "expandable_segments": False},
                "external_annotations": []}
    data = pickle.dumps(snap, protocol=a.protocol)
    if a.gzip:
        data = gzip.compress(data)
    with open(a.out, "wb") as f:
        f.write(data)
    with open(a.truth, "w") as f:
        json.dump({"devices": truth}, f, indent=1)


if __name__ == "__main__":
    main()
