#!/usr/bin/python3
"""Runs the real TraceLens (github:AMD-AGI/TraceLens, the commit in PINNED)
over the traces of ../shared/data/traces/TraceLens and records its operator
tables as the expected values of tests/cli/ops.py (developer side; CI needs
no TraceLens):

  tests/tools/tracelens_oracle.py --tracelens DIR [--record]
  tests/tools/tracelens_oracle.py --tracelens DIR --trace FILE
        one trace's tables as JSON on stdout (bench/ops_bench.sh times it)

DIR is a checkout of TraceLens's source. It runs on Debian's python3-pandas,
python3-numpy, python3-openpyxl, python3-tqdm and python3-tabulate (use
/usr/bin/python3). Every TraceLens option stays at its default (no Python
frames in its tree, unlinked kernels and NCCL kernels left out). Recorded
per trace: the launcher table by op name (count, total direct and subtree
kernel time), the table by unique inputs summed over threads (TraceLens
keys it by thread too; trainprof does not), and the GPU events TraceLens
could not link or left out as NCCL."""
import argparse
import json
import math
import os
import sys
import warnings

PINNED = "171dd74721ca1ec45709e5805b68ae1f65e27811"
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
EXPECTED = os.path.join(SRC, "tests", "cli", "tracelens_expected.json")
TRACES = [
    "traces/TraceLens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
    "traces/TraceLens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
    "traces/TraceLens/tests/traces/inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode.json.gz",
    "traces/TraceLens/tests/traces/perf_model/normalization/normalization_layer_test.json.gz",
    "traces/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz",
    "traces/TraceLens/tests/traces/torch_compile_triton/trace.json.gz",
]
NCCL = ("nccl", "rccl", "cross_device_reduce")


def compact(v):
    """An op arg as trainprof keeps it: compact JSON text, '' when absent."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def plain(v):
    """Tuples (TraceLens makes args hashable) back to lists."""
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def figures(TreePerfAnalyzer, path):
    an = TreePerfAnalyzer.from_file(path)
    kl = an.get_df_kernel_launchers()
    by_name = {}
    by_args = {}
    for r in kl.to_dict(orient="records"):
        n = by_name.setdefault(r["name"], [0, 0.0, 0.0])
        n[0] += 1
        n[1] += float(r["total_direct_kernel_time"])
        n[2] += float(r["total_subtree_kernel_time"])
        key = (r["name"],) + tuple(compact(plain(r.get(c))) for c in
                                   ("Input Dims", "Input type", "Input Strides", "Concrete Inputs"))
        a = by_args.setdefault(key, [0, 0.0])
        a[0] += 1
        a[1] += float(r["total_direct_kernel_time"])
    # the GPU events it left out: without a parent in its tree, or NCCL
    unlinked = [0, 0.0]
    nccl = [0, 0.0]
    for e in an.tree.events:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        if any(k in e.get("name", "").lower() for k in NCCL):
            nccl[0] += 1
            nccl[1] += float(e.get("dur", 0))
        if an.tree.get_parent_event(e) is None:
            unlinked[0] += 1
            unlinked[1] += float(e.get("dur", 0))
    # its performance model: one row per op and inputs it has a model for
    perf = []
    try:
        import tempfile
        from TraceLens.Reporting.generate_perf_report_pytorch import generate_perf_report_pytorch
        with tempfile.TemporaryDirectory() as tmp:
            sheets = generate_perf_report_pytorch(path, output_csvs_dir=tmp, collective_analysis=False)
        for r in sheets["unified_perf_summary"].to_dict(orient="records"):
            if not r.get("has_perf_model", True) or r.get("GFLOPS") is None or r["GFLOPS"] != r["GFLOPS"]:
                continue
            perf.append({"op": r["name"], "input_dims": compact(plain(r.get("Input Dims"))),
                         "input_types": compact(plain(r.get("Input type"))),
                         "concrete_inputs": compact(plain(r.get("Concrete Inputs"))),
                         "count": int(r["operation_count"]), "gflops": float(r["GFLOPS"]),
                         "data_moved_mb": float(r["Data Moved (MB)"]),
                         "tflops_mean": float(r["TFLOPS/s_mean"]) if r["TFLOPS/s_mean"] == r["TFLOPS/s_mean"] else None,
                         "kernel_time_mean_us": float(r["Kernel Time (µs)_mean"])})
    except Exception as e:  # the tables above stand without it
        print(f"{path}: perf model: {e!r}", file=sys.stderr)
    return {
        "perf": perf,
        "by_name": [{"op": k, "count": v[0], "direct_us": v[1], "subtree_us": v[2]}
                    for k, v in sorted(by_name.items(), key=lambda kv: (-kv[1][1], kv[0]))],
        "unique_args": [{"op": k[0], "input_dims": k[1], "input_types": k[2], "input_strides": k[3],
                         "concrete_inputs": k[4], "count": v[0], "direct_us": v[1]}
                        for k, v in sorted(by_args.items(), key=lambda kv: (-kv[1][1], kv[0]))],
        "unlinked_events": unlinked[0], "unlinked_us": unlinked[1],
        "nccl_events": nccl[0], "nccl_us": nccl[1],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tracelens", required=True, help="a checkout of TraceLens's source")
    ap.add_argument("--record", action="store_true", help="write tests/cli/tracelens_expected.json")
    ap.add_argument("--trace", help="one trace: its tables on stdout")
    ap.add_argument("--data", default=os.environ.get("TRAINPROF_TESTDATA") or os.path.join(SRC, "..", "shared", "data"))
    a = ap.parse_args()
    sys.path.insert(0, a.tracelens)
    warnings.filterwarnings("ignore")
    from TraceLens import TreePerfAnalyzer
    if a.trace:
        import contextlib
        with contextlib.redirect_stdout(sys.stderr):  # TraceLens prints its progress
            fig = figures(TreePerfAnalyzer, a.trace)
        json.dump(fig, sys.stdout)
        return
    out = {"tracelens_commit": PINNED, "traces": {}}
    for t in TRACES:
        out["traces"][t] = figures(TreePerfAnalyzer, os.path.join(a.data, t))
        print(f"{t}: {len(out['traces'][t]['by_name'])} ops", file=sys.stderr)
    text = json.dumps(out, indent=1, sort_keys=True) + "\n"
    if a.record:
        with open(EXPECTED, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
