"""A file of another kind given to a command: the error keeps its details
(file, byte, what was expected) and a second line, `trainprof: hint:`, says
what the file is and which command reads it, recognised from its first
bytes after decompression (issue 16)."""
import gzip
import os
import pickle

from common import scratch, TRAINPROF, check, finish, run, testdata

tmp = scratch("tprof_kinds_")


def write(name, data):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return p


def expect(args, hint, *needles, code=3, stdin=None):
    rc, out, err = run([TRAINPROF] + args, stdin=stdin, timeout=60)
    what = " ".join(os.path.basename(a) for a in args)
    lines = [l for l in err.splitlines() if l.strip()]
    hints = [l for l in lines if l.startswith("trainprof: hint: ")]
    check(rc == code, f"{what}: exit {rc}, expected {code} ({err.strip()!r})")
    check(len(hints) == 1 and hint in hints[0], f"{what}: expected one hint line with {hint!r}, got {lines!r}")
    # the hint follows the error it explains
    check(bool(lines) and lines.index(hints[0]) > 0 if hints else False, f"{what}: hint before its error: {lines!r}")
    for n in needles:
        check(n in err, f"{what}: stderr lacks {n!r}: {err.strip()!r}")


def expect_no_hint(args):
    rc, out, err = run([TRAINPROF] + args, timeout=60)
    check("hint:" not in err, f"{' '.join(args)}: unexpected hint {err.strip()!r}")


SNAP = "this is a CUDA memory snapshot (pickle): use trainprof mem"
TRACE = "this is a Chrome/PyTorch profiler trace:"
ET = "this is a PyTorch execution trace (not a profiler trace)"
CSV = ("this is an Ascend profiler CSV (like op_statistic.csv): not read yet; give the run's "
       "kernel_details.csv or trace_view.json")
STEPS = ("this is Ascend's step split (step_trace_time.csv or msprof-analyze's cluster_step_trace_time.csv): use "
         "trainprof steps, ranks or advice")
KCSV = "this is an Ascend kernel table (kernel_details.csv): use trainprof kernels, summary or another trace command"
LOG = "this looks like a training log: use trainprof log"
CONFIG = "this is a model config: use trainprof flops or mfu"

# a snapshot's layout (a dict of segments and device traces), as PyTorch pickles it
snap = pickle.dumps({"segments": [], "device_traces": [[]]}, protocol=4)
snap_path = write("snapshot.pickle", snap)
snap_gz = write("snapshot.pickle.gz", gzip.compress(snap))
trace = write("trace.json", '{"schemaVersion":1,"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,'
                            '"tid":7,"ts":1,"dur":2,"args":{"stream":7}}]}')
trace_gz = write("trace.json.gz", gzip.compress(open(trace, "rb").read()))
et = write("et.json.gz", gzip.compress(b'{\n  "schema": "1.0.1", "pid": 5, "time": "2023-07-14",\n'
                                       b'  "nodes": [{"name": "[pytorch|profiler|execution_trace|thread]", "id": 2}]}'))
steps_csv = write("step_trace_time.csv", "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,"
                                         "Stage,Bubble\n1,80309.6,683731.2,5524.5,689255.8,990605.1,1754645.75,0.0\n")
op_csv = write("op_statistic.csv", "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),"
                                   "Max Time(us),Ratio(%)\n0,MatMul,AI_CORE,12,120.5,9.1,10.04,11.2,42.5\n")
csv = write("kernel_details.csv", "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),"
                                  "Duration(us)\n1,4294967295,12,2,MatMul,MatMul,AI_CORE,\"1695054582608213.0\",9.5\n")
log = write("train.log", "step 1/100 | train loss 2.5012 | lr 1.00e-04\nstep 2/100 | train loss 2.4807 | lr 1.00e-04\n")
jsonl = write("metrics.jsonl", '{"step": 1, "loss": 2.5}\n{"step": 2, "loss": 2.4}\n')
config = write("config.json", '{\n  "architectures": ["LlamaForCausalLM"],\n  "hidden_size": 64,\n'
                              '  "model_type": "llama",\n  "num_hidden_layers": 2\n}\n')

# a trace command (cli_run), each kind; the error's own details kept
expect(["kernels", snap_path], SNAP, "snapshot.pickle: byte 0:", "unexpected byte 0x80")
expect(["kernels", snap_gz], SNAP, "byte 0")  # recognised after decompression
expect(["kernels", "-"], SNAP, "byte 0", stdin=snap)  # and on stdin, from the bytes already read
expect(["summary", et], ET, "not a trace", "traceEvents")
expect(["steps", op_csv], CSV, "op_statistic.csv: byte 0: unexpected 'D'")
expect(["kernels", steps_csv], STEPS, "step_trace_time.csv: byte 0: unexpected 'S'")
rc, out, err = run([TRAINPROF, "steps", steps_csv], timeout=60)  # tests/cli/ascend_steps.py
check(rc == 0 and "hint:" not in err, f"steps reads step_trace_time.csv: {rc} {err.strip()!r}")
rc, out, err = run([TRAINPROF, "steps", csv], timeout=60)  # a kernel table is a trace (tests/cli/ascend.py)
check(rc == 0 and "hint:" not in err, f"steps reads kernel_details.csv: {rc} {err.strip()!r}")
expect(["temporal", log], LOG, "byte 0")
expect(["kernels", jsonl], LOG, "metrics.jsonl")
expect(["info", config], CONFIG, "not a trace")
# the commands with their own loops
expect(["diff", trace, snap_path], SNAP, "snapshot.pickle")
expect(["merge", "-o", os.path.join(tmp, "m.json"), trace, csv],  # merge rewrites JSON events: not the tables
       "merge the run's trace_view.json files", "kernel_details.csv: an Ascend kernel table")
expect(["mem", csv], KCSV, "kernel_details.csv: byte 0")
expect(["mem", log], LOG, "train.log: byte 0")
expect(["mem", et], ET, "not a trace")
expect(["mem", "--compare", trace_gz, snap_path], TRACE, "trace.json.gz: byte 0")
expect(["log", trace], TRACE, "trace.json: not a training log")
expect(["log", snap_gz], SNAP, "not a training log")
expect(["log", et], ET, "not a training log")  # its keys are not metrics
expect(["log", config], CONFIG, "not a training log")
expect(["flops", "--seqlens", "128", "--config", snap_path], SNAP, "byte 0")
expect(["flops", "--seqlens", "128", "--config", trace], TRACE, "model_type")
expect(["mfu", "--seqlens", "128", "--peak-tflops", "100", "--config", log, "--trace", trace], LOG,
       "train.log: byte 0")
# a trace given to mem is read for its [memory] events: without any, the
# warning says what the trace is for (exit 0)
expect(["mem", trace], TRACE, "no [memory] events", "use trainprof kernels", code=0)

# the right kind, or bytes of no known kind: no hint
expect_no_hint(["kernels", write("text.json", "hello world\n")])
# source code says "step" and "loss" too, but not as a log writes a metric
expect_no_hint(["kernels", write("code.py", "def steps_of(events):\n    loss = step(x)\n    return {'step': s}\n")])
expect_no_hint(["kernels", write("cut.json", '{"traceEvents":[{"ph":"X",')])
expect_no_hint(["mem", write("cut.pickle", snap[:len(snap) // 2])])
expect_no_hint(["flops", "--seqlens", "128", "--config", write("bad.json", '{"model_type": "nope"}')])

data = testdata()
if data:
    t = os.path.join(data, "traces")
    expect(["kernels", os.path.join(t, "HolisticTraceAnalysis", "tests", "data", "execution_trace",
                                    "benchmark_simple_add_et.json.gz")], ET, "not a trace")
    for root, _, files in os.walk(os.path.join(t, "msprof-analyze")):
        for f in files:
            if f == "cluster_step_trace_time.csv":
                expect(["kernels", os.path.join(root, f)], STEPS, "byte 0")
    s = os.path.join(data, "snapshots", "synthetic", "protocol2.pickle")
    if os.path.exists(s):
        expect(["kernels", s], SNAP, "byte 0")
    c = os.path.join(data, "model-configs", "llama31_toy", "config.json")
    expect(["summary", c], CONFIG, "not a trace")
    expect(["mfu", "--seqlens", "128", "--peak-tflops", "100", "--config", c, "--trace", snap_gz], SNAP, "byte 0")
    rank0 = os.path.join(t, "HolisticTraceAnalysis", "tests", "data", "trace_filter", "sampled_rank-0.json.gz")
    expect(["log", rank0], TRACE, "not a training log")
else:
    print("SKIP (visible): real files of other kinds not checked, ../shared/data absent")

finish("other kinds of file named with the command that reads them")
