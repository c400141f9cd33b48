#!/usr/bin/python3
"""Runs the real Holistic Trace Analysis over traces, each loaded alone, and
prints what it computes, as JSON: the oracle that trainprof's `hta_*` figures
are checked against (developer side; CI holds the recorded values in
tests/cli/hta_expected.json and needs no HTA).

  tests/tools/hta_oracle.py --hta DIR TRACE...        print {trace: figures}
  tests/tools/hta_oracle.py --hta DIR --record [TRACE...]
        run over the traces of ../shared/data, tests/data and generated ones
        (GENTRACE: the generator), or over TRACE... only, and write their
        figures into tests/cli/hta_expected.json

DIR is a checkout of HTA's source (github:facebookresearch/HolisticTraceAnalysis,
the commit in PINNED below). It runs on Debian's python3-pandas,
python3-networkx, python3-psutil and python3-yaml (older than HTA's stated
minimums; the parts used here run on them). plotly is not packaged: the
figures are never drawn (visualize=False), so a stand-in module that only
imports is put first on the path."""
import contextlib
import io
import json
import logging
import os
import sys
import tempfile

PINNED = "f4d0062"  # HTA v0.6.0 + one commit
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))


def plotly_stand_in():
    """A plotly that imports and draws nothing (HTA imports it at the top)."""
    d = tempfile.mkdtemp(prefix="hta_plotly_")
    pkg = os.path.join(d, "plotly")
    os.mkdir(pkg)
    stub = ("def _not_drawn(*args, **kwargs):\n"
            "    raise RuntimeError('plotly is not installed: figures are not drawn')\n"
            "def __getattr__(name):\n"
            "    return _not_drawn\n")
    for mod in ("__init__", "express", "graph_objects", "subplots", "io"):
        with open(os.path.join(pkg, mod + ".py"), "w") as f:
            f.write(stub)
    return d


def analyse(path):
    """HTA's temporal breakdown and comm/comp overlap of PATH loaded alone."""
    from hta.trace_analysis import TraceAnalysis

    d = tempfile.mkdtemp(prefix="hta_one_")
    os.symlink(os.path.abspath(path), os.path.join(d, os.path.basename(path)))
    out = {}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        ta = TraceAnalysis(trace_dir=d)
        df = ta.get_temporal_breakdown(visualize=False)
        row = df.iloc[0]
        out["idle_us"] = float(row["idle_time(us)"])
        out["compute_us"] = float(row["compute_time(us)"])
        out["non_compute_us"] = float(row["non_compute_time(us)"])
        out["span_us"] = float(row["kernel_time(us)"])
        for k in ("idle", "compute", "non_compute"):
            out[k + "_pct"] = 100.0 * out[k + "_us"] / out["span_us"] if out["span_us"] else 0.0
        try:
            ov = ta.get_comm_comp_overlap(visualize=False)
            v = float(ov.iloc[0]["comp_comm_overlap_pctg"])  # HTA rounds it to 0.01
            out["comm_overlap_pct"] = None if v != v else v  # NaN: no communication
        except Exception as e:  # no communication kernels: HTA divides by zero or fails
            out["comm_overlap_pct"] = None
            out["comm_overlap_error"] = type(e).__name__
    return out


# Traces trainprof's generator writes (bench/gen_trace.c, deterministic): the
# test writes them again with the same arguments. The recorder's own traces
# (examples/tiny_gpt) hold no GPU events: HTA stops on them with an error.
GENERATED = {
    "gen:rank0": ["--size", "2M", "--rank", "0", "--world", "2", "--seed", "1"],
    "gen:rank1-kineto": ["--size", "3M", "--rank", "1", "--world", "2", "--seed", "7", "--layout", "kineto"],
    "gen:steps3": ["--steps", "3", "--layers", "4", "--seed", "3"],
}


# The recording library's own trace: examples/tiny_gpt (TINY_GPT: the
# program) profiling steps 2-3 of a 4-step run on the CPU, as `make run` does.
RECORDED = {"recorder:tiny_gpt": ["--train.max_steps=4", "--train.profile.enable", "--train.profile.start_step=2",
                                  "--train.profile.end_step=4"]}


def generate(gentrace, name, d):
    import glob
    import subprocess
    if name in RECORDED:
        out = os.path.join(d, "recorder")
        tiny = os.path.abspath(os.environ.get("TINY_GPT", os.path.join(SRC, "build", "examples", "tiny_gpt")))
        # from the source folder: the config names its corpus relative to it
        subprocess.run([tiny, os.path.join(SRC, "configs", "tiny.yaml"), *RECORDED[name],
                        f"--train.profile.trace_dir={out}"], check=True, capture_output=True, cwd=SRC)
        return sorted(glob.glob(os.path.join(out, "*.pt.trace.json*")))[0]
    path = os.path.join(d, name.replace(":", "_") + ".json")
    subprocess.run([gentrace, *GENERATED[name], "-o", path], check=True)
    return path


# Written for this check (tests/data): each of HTA's rules at work in one
# small trace (fractional epoch times, a GPU-side ProfilerStep annotation
# after the CPU's, a kernel without its launch, a sync wait on a stream, a
# Triton host launch with a stream, hip* and *Sync* names).
FIXTURES = ["tests/data/hta_edges.pt.trace.json"]


def default_traces():
    """The traces of ../shared/data that HTA reads as a GPU trace."""
    data = os.path.join(SRC, "..", "shared", "data", "traces")
    found = []
    for root, _, files in os.walk(data):
        for f in files:
            if f.endswith((".json", ".json.gz")):
                found.append(os.path.relpath(os.path.join(root, f), os.path.join(SRC, "..", "shared", "data")))
    return sorted(found)


def main():
    args = sys.argv[1:]
    if "--hta" not in args:
        sys.exit(__doc__)
    i = args.index("--hta")
    hta_dir = args[i + 1]
    del args[i:i + 2]
    record = "--record" in args
    args = [a for a in args if a != "--record"]
    sys.path[:0] = [plotly_stand_in(), hta_dir]
    logging.disable(logging.CRITICAL)
    base = os.path.join(SRC, "..", "shared", "data")
    names = args or default_traces() + FIXTURES + sorted(GENERATED) + sorted(RECORDED)
    gentrace = os.environ.get("GENTRACE", os.path.join(SRC, "build", "bench", "trainprof-gentrace"))
    gen_dir = tempfile.mkdtemp(prefix="hta_gen_")
    result = {}
    for name in names:
        if name in GENERATED or name in RECORDED:
            path = generate(gentrace, name, gen_dir)
        elif name in FIXTURES:
            path = os.path.join(SRC, name)
        else:
            path = name if os.path.exists(name) else os.path.join(base, name)
        try:
            result[name] = analyse(path)
        except Exception as e:  # HTA cannot read it (CPU-only, execution trace, ...)
            result[name] = {"error": f"{type(e).__name__}: {str(e)[:120]}"}
        print(f"{name}: {result[name]}", file=sys.stderr)
    if record:
        out = os.path.join(SRC, "tests", "cli", "hta_expected.json")
        if args and os.path.exists(out):  # named traces: recorded again, the others kept
            with open(out) as f:
                result = {**json.load(f)["traces"], **result}
        with open(out, "w") as f:
            json.dump({"hta_commit": PINNED, "traces": result}, f, indent=1, sort_keys=True)
            f.write("\n")
    else:
        json.dump(result, sys.stdout, indent=1, sort_keys=True)
        print()


if __name__ == "__main__":
    main()
