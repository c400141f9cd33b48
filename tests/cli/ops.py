"""`trainprof ops`, the operator view, checked two ways on the real traces of
../shared/data/traces/TraceLens (with op inputs, nn.Module frames, autograd
backward ops, Triton kernels, runtime calls without an op, GPU events
without a launch):

1. against TraceLens itself: its launcher tables by op name and by unique
   inputs, recorded by tests/tools/tracelens_oracle.py at the commit in
   tests/cli/tracelens_expected.json. Equal where TraceLens links every GPU
   event; where it does not (it links through ac2g flow events only, and the
   MI300 traces' memsets have none), trainprof's rows exceed its by exactly
   the time TraceLens could not link and trainprof could (by correlation id).
   Rows TraceLens leaves out on purpose (NCCL launches) are the only extras.
2. against this file's own reading of the definitions in docs/METRICS.md
   ("Operators"), in Python, to the nanosecond, for every grouping (name,
   shape, module with its backward ops) and with a step window."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import GENTRACE, SRC, TRAINPROF, check, finish, load_exact, need_testdata, run, scratch, us_to_ns  # noqa: E402

data = need_testdata()
with open(os.path.join(SRC, "tests", "cli", "tracelens_expected.json")) as f:
    expected = json.load(f)["traces"]
TOL_US = 0.05  # TraceLens sums float32-rounded microseconds


def ops_json(path, *opts):
    rc, out, err = run([TRAINPROF, "ops", "--top", "0", "--format", "json", *opts, path])
    check(rc == 0, f"ops {' '.join(opts)} {path}: exit {rc}: {err[-300:]}")
    return json.loads(out)["traces"][0] if rc == 0 else None


# ---- 1. TraceLens ----------------------------------------------------------------

def compare_tracelens(name, want, got, key_of, tl_rows):
    rows = {key_of(r): r for r in got["rows"]}
    exact = want["unlinked_events"] == 0
    excess = 0.0
    for w in tl_rows:
        k = key_of(w)
        g = rows.get(k)
        if not check(g is not None, f"{name}: TraceLens's row {k} missing") and g is None:
            continue
        check(g["count"] == w["count"], f"{name} {k}: count {g['count']}, TraceLens {w['count']}")
        for col, tl in (("direct_ns", "direct_us"), ("subtree_ns", "subtree_us")):
            if tl not in w:
                continue
            d = g[col] / 1000.0 - w[tl]
            if exact:
                check(abs(d) <= TOL_US, f"{name} {k}: {col} {g[col]} ns, TraceLens {w[tl]} us")
            else:
                check(d >= -TOL_US, f"{name} {k}: {col} {g[col]} ns below TraceLens's {w[tl]} us")
                if col == "direct_ns":
                    excess += d
    # what trainprof linked and TraceLens could not: its unlinked time minus ours
    ours_unlinked = got["unlinked_ns"] / 1000.0
    check(abs(excess - (want["unlinked_us"] - ours_unlinked)) <= TOL_US * max(1, len(tl_rows)),
          f"{name}: rows exceed TraceLens's by {excess:.3f} us, it left {want['unlinked_us']:.3f} us unlinked, "
          f"trainprof {ours_unlinked:.3f} us")
    extra = [k for k in rows if k not in {key_of(w) for w in tl_rows}]
    extra_us = 0.0
    for k in extra:
        op = k if isinstance(k, str) else k[0]
        if op == "(GPU work without a launch in the trace)":
            continue
        check(op == "record_param_comms" or "nccl" in op.lower() or op.startswith("c10d::"),
              f"{name}: row {k} is not in TraceLens's table")
        extra_us += rows[k]["direct_ns"] / 1000.0
    check(extra_us <= want["nccl_us"] + TOL_US, f"{name}: NCCL rows {extra_us} us, the trace has {want['nccl_us']} us")


compared = 0
for rel, want in sorted(expected.items()):
    path = os.path.join(data, rel)
    name = os.path.basename(rel)
    got = ops_json(path)
    if got:
        compare_tracelens(name, want, got, lambda r: r["op"], want["by_name"])
    got = ops_json(path, "--by", "shape")
    if got:
        key = lambda r: (r["op"], r["input_dims"], r["input_types"], r["input_strides"], r["concrete_inputs"])  # noqa: E731
        want_rows = [dict(w, direct_us=w["direct_us"]) for w in want["unique_args"]]
        compare_tracelens(name + " by shape", want, got, key, want_rows)
    compared += 1


# ---- 1b. TraceLens's performance model: FLOPs and bytes per instance -------------

def elems(shape):
    n = 1
    for x in shape:
        n *= x
    return n


BPE = {"double": 8, "long int": 8, "float": 4, "scalar": 4, "int": 4, "half": 2, "bfloat16": 2}
REDUCTIONS = {"aten::sum", "aten::mean", "aten::max", "aten::min", "aten::amax", "aten::amin", "aten::prod"}
perf_rows = 0
for rel, want in sorted(expected.items()):
    got = ops_json(os.path.join(data, rel), "--by", "shape")
    if not got:
        continue
    for t in want["perf"]:
        mine = [r for r in got["rows"] if (r["op"], r["input_dims"], r["input_types"], r["concrete_inputs"]) ==
                (t["op"], t["input_dims"], t["input_types"], t["concrete_inputs"])]
        for r in mine:
            if not r["modelled"]:
                continue  # TraceLens's extension models (sglang's, Triton's), masked norm backwards: not here
            perf_rows += 1
            name = f"{os.path.basename(rel)} {t['op']} {t['input_dims'][:40]}"
            check(r["modelled"] == r["count"], f"{name}: {r['modelled']} of {r['count']} instances modelled")
            f, b = r["flops"] / r["modelled"], r["bytes"] / r["modelled"]
            check(abs(f - t["gflops"] * 1e9) <= 1e-9 * max(1.0, t["gflops"] * 1e9), f"{name}: {f} FLOPs, TraceLens {t['gflops']} G")
            if t["op"] in REDUCTIONS:
                # on purpose: the reduced dims from Concrete Inputs (TraceLens never reads them: one output element)
                dims = json.loads(t["input_dims"])[0]
                ci = json.loads(t["concrete_inputs"])
                red = json.loads(ci[1]) if len(ci) > 1 and ci[1].startswith("[") else []
                out = elems(dims) if red else 1  # no dims: the whole tensor to one element
                for k in red:
                    out //= dims[k]
                e = BPE[json.loads(t["input_types"])[0].lower().replace("c10::", "")]
                check(b == (elems(dims) + out) * e, f"{name}: {b} bytes, the reduced dims give {(elems(dims) + out) * e}")
            else:
                check(abs(b - t["data_moved_mb"] * 2**20) <= 1e-9 * max(1.0, t["data_moved_mb"] * 2**20),
                      f"{name}: {b} bytes, TraceLens {t['data_moved_mb']} MiB")
check(perf_rows >= 100, f"{perf_rows} rows compared with TraceLens's performance model")

# the roofline from the datasheet: H100 (the Falconsai trace's device) BF16 989 TFLOP/s, 3.35 TB/s
fal = ops_json(os.path.join(data, sorted(r for r in expected if "Falconsai" in r)[0]), "--by", "shape")
check(fal["device"].startswith("NVIDIA H100") and fal["peak_source"] == "datasheet", f"device {fal['device']}")
for r in fal["rows"]:
    if not r["modelled"] or not r["bytes"]:
        continue
    tf = r["flops"] / r["modelled_ns"] / 1e3
    check(abs(r["tflops"] - tf) <= 1e-9 * tf, f"{r['op']}: {r['tflops']} TFLOP/s, not {tf}")
    peak = {"bf16": 989, "fp32": 66.9}[r["dtype"]]
    roof = min(peak, r["flops"] / r["bytes"] * 3.35)
    check(r["bound"] == ("compute" if r["flops"] / r["bytes"] * 3.35 >= peak else "memory"), f"{r['op']}: bound {r['bound']}")
    check(abs(r["roofline"] - tf / roof) <= 1e-9, f"{r['op']}: roofline {r['roofline']}, not {tf / roof}")
given = ops_json(os.path.join(data, sorted(r for r in expected if "Falconsai" in r)[0]), "--peak-tflops", "100",
                 "--peak-tbps", "1")
check(given["peak_source"] == "given" and given["peak_tflops_bf16"] == 100 and given["peak_tbps"] == 1, "given peaks")


# ---- 2. the definitions, read independently ---------------------------------------

GPU = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset", "cuda_sync"}
RUNTIME = {"cuda_runtime", "cuda_driver", "Runtime", "mtia_runtime"}
OUTER = {"python_function": 0, "user_annotation": 1, "cpu_op": 3}  # others 2, runtime 4
UNLINKED = "(GPU work without a launch in the trace)"


def union(iv):
    total, end = 0, None
    for s, e in sorted(iv):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def compact(v):
    return "" if v is None else json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def model(path, by="name", depth=0, steps=None):
    doc = load_exact(path)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    host, gpu = [], []
    for i, e in enumerate(evs):
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        ts, dur = us_to_ns(e["ts"]), us_to_ns(e.get("dur", 0))
        cat = e.get("cat", "")
        rec = dict(i=i, ts=ts, end=ts + dur, dur=dur, name=e.get("name", ""), cat=cat, args=e.get("args") or {},
                   pid=e.get("pid"), tid=e.get("tid"))
        if cat in GPU:
            gpu.append(rec)
        elif cat != "gpu_user_annotation":
            rec["runtime"] = cat in RUNTIME
            rec["rank"] = 4 if rec["runtime"] else OUTER.get(cat, 2)
            host.append(rec)
    host.sort(key=lambda r: (str(type(r["pid"])), str(type(r["tid"])), r["pid"], r["tid"], r["ts"], -r["dur"], r["rank"], r["i"]))
    stack = []
    for n, r in enumerate(host):
        r["n"] = n
        same = n > 0 and (host[n - 1]["pid"], host[n - 1]["tid"]) == (r["pid"], r["tid"])
        while stack and not (same and r["end"] <= stack[-1]["end"]):
            stack.pop()
        r["parent"] = stack[-1] if stack else None
        r["children"] = []
        if stack:
            stack[-1]["children"].append(r)
        r["gpu"] = []
        stack.append(r)
    by_corr = {}
    for r in host:
        c = r["args"].get("correlation")
        if r["runtime"] and c is not None:
            by_corr[c] = r
    unlinked = []
    for g in gpu:
        r = by_corr.get(g["args"].get("correlation"))
        (r["gpu"] if r else unlinked).append(g)
    launched = {}  # launcher node -> its runtime calls
    for r in host:
        if not r["runtime"] or not r["gpu"]:
            continue
        p = r["parent"]
        while p and (p["cat"] != "cpu_op" or p["name"] == "execute"):
            p = p["parent"]
        launched.setdefault((p or r)["n"], []).append(r)

    def subtree_gpu(r):
        out = list(r["gpu"])
        for c in r["children"]:
            out += subtree_gpu(c)
        return out

    fwd = {}
    for r in host:
        s = r["args"].get("Sequence number")
        if r["cat"] == "cpu_op" and s is not None and r["args"].get("Fwd thread id", 0) <= 0:
            fwd.setdefault(s, r)

    def classes(r, stop=None):  # the nn.Module classes holding R (up to STOP), outermost first
        frames = []
        while r and r is not stop:
            if r["cat"] == "python_function" and r["name"].startswith("nn.Module: "):
                frames.append(re.sub(r"_\d+$", "", r["name"][len("nn.Module: "):]))
            r = r["parent"]
        return frames[::-1]

    def module_path(r, frames=None):
        frames = classes(r) if frames is None else frames
        if depth:
            frames = frames[:depth]
        return ".".join(frames) if frames else "(outside nn.Modules)"

    def stack_of(r):
        frames = []
        while r:
            n = r["name"]
            if (r["cat"] == "python_function" and not n.startswith("nn.Module: ") and not n.startswith("<")
                    and not n.startswith("torch/") and "/site-packages/torch/" not in n):
                frames.append(n)
            r = r["parent"]
        frames = frames[:depth or 5]
        return " <- ".join(frames) if frames else "(no Python frames)"

    sel = []
    if steps:
        for r in host:
            m = re.fullmatch(r"ProfilerStep#(\d+)", r["name"])
            if r["cat"] != "gpu_user_annotation" and m and steps[0] <= int(m.group(1)) <= steps[1]:
                sel.append((r["ts"], r["end"]))

    def in_window(ts):
        return not steps or any(a <= ts < b for a, b in sel)

    rows = {}

    def add(key, direct, dur_sum, kernels, subtree, cpu_total, cpu_self, backward, launched, recompute=False):
        row = rows.setdefault(key, dict(count=0, kernels=0, direct_ns=0, subtree_ns=0, device_self_ns=0,
                                        cpu_total_ns=0, cpu_self_ns=0, forward_direct_ns=0, backward_direct_ns=0,
                                        recompute_direct_ns=0, by_kernel={}))
        for g in launched:
            k = row["by_kernel"].setdefault(g["name"], [0, 0])
            k[0] += 1
            k[1] += g["dur"]
        row["count"] += 1
        row["kernels"] += kernels
        row["direct_ns"] += direct
        row["subtree_ns"] += subtree
        row["device_self_ns"] += dur_sum
        row["cpu_total_ns"] += cpu_total
        row["cpu_self_ns"] += cpu_self
        row["backward_direct_ns"] += direct if backward else 0
        row["forward_direct_ns"] += 0 if backward else direct
        row["recompute_direct_ns"] += direct if recompute else 0

    for n, calls in launched.items():
        x = host[n]
        if not in_window(x["ts"]):
            continue
        direct = [(g["ts"], g["end"]) for c in calls for g in c["gpu"]]
        sub = [(g["ts"], g["end"]) for g in subtree_gpu(x)]
        back, p, forward_below, module_below, recompute = None, x, False, False, False
        while p:
            module_below |= p["cat"] == "python_function" and p["name"].startswith("nn.Module: ")
            if p["cat"] == "cpu_op" and "Sequence number" in p["args"]:
                if p["args"].get("Fwd thread id", 0) > 0:
                    back = fwd.get(p["args"]["Sequence number"], p)
                    recompute = forward_below and module_below  # a module's forward run again in the backward
                    break
                forward_below = True
            p = p["parent"]
        if by == "module" and recompute:
            # the recomputed module's frames (below the backward op P) continue
            # the path of the forward op's innermost frame of the same class
            own = classes(x, p)
            above = classes(fwd[p["args"]["Sequence number"]]) if p["args"]["Sequence number"] in fwd else []
            at = max((i for i, c in enumerate(above) if c == own[0]), default=None)
            key = module_path(None, (above[:at] if at is not None else []) + own)
        elif by == "module":
            key = module_path(back or x)
        elif by == "stack":
            key = (x["name"], stack_of(back or x))
        elif by == "shape":
            a = x["args"] if x["cat"] == "cpu_op" else {}
            key = (x["name"],) + tuple(compact(a.get(k)) for k in
                                       ("Input Dims", "Input type", "Input Strides", "Concrete Inputs"))
        else:
            key = x["name"]
        def under(r):  # the spans directly under R, Python frames looked through
            for c in r["children"]:
                yield from under(c) if c["cat"] == "python_function" else [c]
        children = sum(c["dur"] for c in under(x))
        add(key, union(direct), sum(b - a for a, b in direct), len(direct), union(sub), x["dur"],
            x["dur"] - min(children, x["dur"]), back is not None, [g for c in calls for g in c["gpu"]], recompute)
    for g in unlinked:
        if in_window(g["ts"]):
            key = (UNLINKED, "", "", "", "") if by == "shape" else (UNLINKED, "") if by == "stack" else UNLINKED
            add(key, g["dur"], g["dur"], 1, g["dur"], 0, 0, False, [g])
    return rows


def key_of(by):
    if by == "stack":
        return lambda r: (r["op"], r["stack"])
    if by == "module":
        return lambda r: r["module"]
    if by == "shape":
        return lambda r: (r["op"], r["input_dims"], r["input_types"], r["input_strides"], r["concrete_inputs"])
    return lambda r: r["op"]


def compare_model(label, path, by="name", depth=0, steps=None):
    opts = ["--by", by] + (["--depth", str(depth)] if depth else []) + (["--steps", f"{steps[0]}..{steps[1]}"] if steps else [])
    got = ops_json(path, *opts)
    if not got:
        return
    want = model(path, by, depth, steps)
    rows = {key_of(by)(r): r for r in got["rows"]}
    check(set(rows) == set(want), f"{label} {opts}: rows {sorted(set(rows) ^ set(want), key=str)[:4]} differ")
    for k, w in want.items():
        g = rows.get(k)
        if g is None:
            continue
        for col, v in w.items():
            if col == "by_kernel":
                got_k = {x["kernel"]: [x["count"], x["total_ns"]] for x in g["by_kernel"]}
                check(got_k == v, f"{label} {opts} {k}: kernels {sorted(got_k)[:3]}, the definition gives {sorted(v)[:3]}")
                top = max(v.items(), key=lambda kv: (kv[1][1], [-ord(ch) for ch in kv[0]]))[0] if v else None
                check(g["top_kernel"] == top, f"{label} {opts} {k}: top kernel {g['top_kernel']}, not {top}")
                continue
            check(g[col] == v, f"{label} {opts} {k}: {col} {g[col]}, the definition gives {v}")
    check(got["direct_ns"] == sum(w["direct_ns"] for w in want.values()), f"{label} {opts}: direct total")
    check(got["gpu_ns"] == sum(w["device_self_ns"] for w in want.values()), f"{label} {opts}: GPU time")


tmp = scratch("tprof_ops_")
gen = os.path.join(tmp, "gen.json")
subprocess.run([GENTRACE, "--steps", "4", "--modules", "-o", gen], check=True, capture_output=True)
# the generator's module frames change nothing else
plain = os.path.join(tmp, "plain.json")
subprocess.run([GENTRACE, "--steps", "4", "-o", plain], check=True, capture_output=True)
kern = [json.loads(run([TRAINPROF, "kernels", "--top", "0", "--format", "json", p])[1])["traces"][0]["rows"] for p in (gen, plain)]
check(kern[0] == kern[1], "gentrace --modules changed the GPU work")
check(ops_json(plain, "--by", "module")["rows"][0]["module"] == "(outside nn.Modules)", "no frames, no modules")
paths = [(os.path.basename(r), os.path.join(data, r)) for r in sorted(expected)] + [("generated", gen)]
for label, path in paths:
    for by in ("name", "shape", "module", "stack"):
        compare_model(label, path, by)
resnet = os.path.join(data, sorted(r for r in expected if "resnet" in r)[0])
compare_model("resnet", resnet, "module", depth=3)
compare_model("resnet", resnet, "module", depth=6)
# activation checkpointing: the recompute counts for the modules run again
# (their whole path), not for the module whose backward op needed them first
rec = {r["module"]: r["recompute_direct_ns"] for r in ops_json(resnet, "--by", "module")["rows"] if r["recompute_direct_ns"]}
check(rec and all(m.startswith("DistributedDataParallel.ResNet.CheckpointWrapper.Sequential.") for m in rec)
      and max(rec, key=rec.get).endswith(".BasicBlock.Conv2d"), f"resnet's recompute by module: {rec}")
compare_model("generated", gen, "name", steps=(11, 12))
compare_model("Falconsai", os.path.join(data, sorted(r for r in expected if "Falconsai" in r)[0]), "stack", depth=2)
compare_model("generated", gen, "module", depth=2, steps=(13, 13))

# every GPU event is in one row, whatever the grouping
for label, path in paths[:2]:
    counts = {by: ops_json(path, "--by", by) for by in ("name", "shape", "module", "category")}
    if all(counts.values()):
        n = {by: sum(r["kernels"] for r in c["rows"]) for by, c in counts.items()}
        check(len(set(n.values())) == 1 and n["name"] == counts["name"]["gpu_events"],
              f"{label}: kernels per grouping {n}, GPU events {counts['name']['gpu_events']}")

# diff matches ops by name and shapes and modules by path, per step: from each side's ops tables
other = os.path.join(tmp, "other.json")
subprocess.run([GENTRACE, "--steps", "4", "--modules", "--seed", "5", "-o", other], check=True, capture_output=True)
rc, out, err = run([TRAINPROF, "diff", "--format", "json", gen, other])
check(rc == 0, f"diff: exit {rc}: {err[-200:]}")
if rc == 0:
    d = json.loads(out)
    for table, by, key in (("ops", "shape", lambda r: (r["op"], r["input_dims"], r["input_types"])),
                           ("modules", "module", lambda r: r["module"])):
        want = {}
        for side, path in enumerate((gen, other)):
            g = ops_json(path, "--by", by)
            for r in g["rows"]:
                w = want.setdefault(key(r), [0, 0, 0, 0])
                w[side] += r["direct_ns"] / 4  # 4 steps a side
                w[2 + side] += r["count"]
        got = {key(r): r for r in d[table]}
        check(set(got) == set(want), f"diff {table}: keys {sorted(set(got) ^ set(want), key=str)[:3]}")
        for k, w in want.items():
            r = got.get(k)
            if r is None:
                continue
            check(abs(r["base_ns"] - w[0]) < 1e-6 and abs(r["candidate_ns"] - w[1]) < 1e-6
                  and abs(r["delta_ns"] - (w[1] - w[0])) < 1e-6, f"diff {table} {k}: {r['base_ns']} -> {r['candidate_ns']}")
            if w[2]:
                check(abs(r["base_mean_ns"] - w[0] * 4 / w[2]) < 1e-6, f"diff {table} {k}: mean {r['base_mean_ns']}")
        deltas = [abs(r["delta_ns"]) for r in d[table]]
        check(deltas == sorted(deltas, reverse=True), f"diff {table}: largest change first")

# advice's recompute rule: the ops' recomputed share on the checkpointed resnet (and none without checkpointing)
for name, fires in (("resnet_act_checkpoint", True), ("normalization_layer_test", False)):
    path = os.path.join(data, sorted(r for r in expected if name in r)[0])
    o = ops_json(path)
    share = sum(r["recompute_direct_ns"] for r in o["rows"]) / o["direct_ns"]
    rc, out, err = run([TRAINPROF, "advice", "--format", "json", path])
    got = [a for a in json.loads(out) if a["rule"] == "recompute"] if rc == 0 else []
    check(bool(got) == fires and (not fires or abs(got[0]["value"] - share) < 1e-12),
          f"advice recompute on {name}: {got}, the ops give {share}")

# a user's rule moves an op into a category: exactly its time
by_name = {r["op"]: r for r in ops_json(gen)["rows"]}
cats = {r["category"]: r for r in ops_json(gen, "--by", "category")["rows"]}
moved = {r["category"]: r for r in ops_json(gen, "--by", "category", "--class-rule", "gemm:aten::mul")["rows"]}
check(moved["gemm"]["direct_ns"] == cats["gemm"]["direct_ns"] + by_name["aten::mul"]["direct_ns"],
      "--class-rule gemm:aten::mul moves aten::mul's time into gemm")
check(moved["elementwise"]["direct_ns"] == cats["elementwise"]["direct_ns"] - by_name["aten::mul"]["direct_ns"],
      "--class-rule gemm:aten::mul takes it out of elementwise")
check(sum(r["direct_ns"] for r in cats.values()) == sum(r["direct_ns"] for r in by_name.values()), "category totals")

finish(f"ops: {compared} traces against TraceLens ({perf_rows} performance-model rows), {len(paths)} against the definitions")
