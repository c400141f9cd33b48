"""Every command x format, recorded: the stdout and exit code of each
command in each format on generated traces, logs and configs (always) and on
the real files of ../shared/data (when present), against the digests in
tests/golden/outputs.txt. The redesign of the outputs (issue 15) must keep
JSON and CSV byte-identical; a table that changes on purpose is recorded
again with --record, and the commit says which.

  python3 tests/cli/golden.py            check
  python3 tests/cli/golden.py --record   write tests/golden/outputs.txt anew
  python3 tests/cli/golden.py --record --only 'temporal table'
                                          record again only the cases whose
                                          name holds the text

Outputs are made comparable across machines: relative paths from a fixed
working folder, --threads 2, no terminal. Skipped under sanitizers (the
outputs are the same; the time is not)."""
import glob
import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import GENTRACE, SKIP, SRC, TRAINPROF, scratch, testdata  # noqa: E402

EXPECTED = os.path.join(SRC, "tests", "golden", "outputs.txt")
RECORD = "--record" in sys.argv
ONLY = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
TRACE_COMMANDS = ["summary", "info", "kernels", "ops", "steps", "temporal", "idle", "comm", "launch", "ranks", "advice"]
FORMATS = ["table", "csv", "json"]
TRAINPROF_ABS = os.path.abspath(TRAINPROF)

if os.environ.get("TPROF_SANITIZED") and not RECORD:
    print("SKIP: output digests are checked in the plain build")
    sys.exit(SKIP)


def digest(args, cwd):
    p = subprocess.run([TRAINPROF_ABS, *args], cwd=cwd, capture_output=True, timeout=600)
    return f"{hashlib.sha256(p.stdout).hexdigest()[:20]} {p.returncode}"


cases = []  # (name, args, cwd)


def trace_cases(group, paths, cwd):
    for cmd in TRACE_COMMANDS:
        for fmt in FORMATS:
            cases.append((f"{group} {cmd} {fmt}", [cmd, "--threads", "2", "--format", fmt, *paths], cwd))


# generated inputs, always there
gen = scratch("tprof-golden-")
for rank, seed in ((0, 11), (1, 12)):
    out = os.path.join(gen, f"gen_rank{rank}.pt.trace.json")
    subprocess.run([os.path.abspath(GENTRACE), "--size", "3M", "--rank", str(rank), "--world", "2", "--seed",
                    str(seed), "-o", out], check=True, capture_output=True)
for rank in (0, 1):  # five short steps each, for step windows
    subprocess.run([os.path.abspath(GENTRACE), "--steps", "5", "--layers", "2", "--rank", str(rank), "--world", "2",
                    "--seed", str(rank + 3), "-o", os.path.join(gen, f"steps_rank{rank}.json")], check=True,
                   capture_output=True)
trace_cases("generated", ["gen_rank0.pt.trace.json", "gen_rank1.pt.trace.json"], gen)
trace_cases("generated-one", ["gen_rank0.pt.trace.json"], gen)
for fmt in FORMATS:
    cases.append((f"generated diff {fmt}", ["diff", "--format", fmt, "gen_rank0.pt.trace.json",
                                             "gen_rank1.pt.trace.json"], gen))
    cases.append((f"generated diff check {fmt}", ["diff", "--format", fmt, "--top", "2", "--fail-above", "1",
                                                   "--metric", "kernel_time", "gen_rank0.pt.trace.json",
                                                   "steps_rank0.json", "--vs", "gen_rank1.pt.trace.json"], gen))
    cases.append((f"generated kernels-by-class {fmt}", ["kernels", "--by", "class", "--format", fmt,
                                                        "gen_rank0.pt.trace.json"], gen))
    two = ["gen_rank0.pt.trace.json", "gen_rank1.pt.trace.json"]
    cases.append((f"generated kernels-by-stream {fmt}", ["kernels", "--by", "stream", "--format", fmt, *two], gen))
    cases.append((f"generated kernels-by-class-two {fmt}", ["kernels", "--by", "class", "--format", fmt, *two], gen))
    cases.append((f"generated kernels-steps {fmt}", ["kernels", "--steps", "11..12", "--top", "3", "--format", fmt,
                                                     "steps_rank0.json", "steps_rank1.json"], gen))
    cases.append((f"generated kernels-top-all {fmt}", ["kernels", "--top", "0", "--format", fmt, *two], gen))
    cases.append((f"generated merge {fmt}", ["merge", "-o", f"merged-{fmt}.json", "--format", fmt, *two], gen))
    cases.append((f"generated merge ranks {fmt}", ["merge", "-o", f"merged-r-{fmt}.json.gz", "--ranks", "1",
                                                   "--format", fmt, *two], gen))
GEN_SNAPSHOT = os.path.join(SRC, "tests", "tools", "gen_snapshot.py")
for name, args in (("snap_a", ["--seed", "3"]), ("snap_b", ["--seed", "4", "--devices", "2", "--oom"])):
    subprocess.run([sys.executable, GEN_SNAPSHOT, os.path.join(gen, name + ".pickle"),
                    os.path.join(gen, name + ".truth.json"), *args], check=True, capture_output=True)
for fmt in FORMATS:
    cases.append((f"mem generated {fmt}", ["mem", "--format", fmt, "snap_a.pickle", "snap_b.pickle"], gen))
    cases.append((f"mem compare {fmt}", ["mem", "--compare", "--format", fmt, "snap_a.pickle", "snap_b.pickle"], gen))
with open(os.path.join(gen, "train.log"), "w") as f:
    for s in range(1, 61):
        f.write(json.dumps({"step": s, "loss": round(3 - s / 40, 4), "lr": 3e-4, "mfu": 0.4 + (s % 7) / 100,
                            "tokens_per_second": 120000 + s * 13}) + "\n")
    f.write("step=61: {'loss': 1.2, 'grad_norm': 0.5}\n")
for fmt in FORMATS:
    cases.append((f"log {fmt}", ["log", "--format", fmt, "train.log"], gen))
    cases.append((f"log series {fmt}", ["log", "--series", "--format", fmt, "train.log"], gen))
llama = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000}
with open(os.path.join(gen, "config.json"), "w") as f:
    json.dump(llama, f)
for fmt in FORMATS:
    cases.append((f"flops {fmt}", ["flops", "--format", fmt, "--config", "config.json", "--seqlens", "4096,2048"],
                  gen))
    cases.append((f"mfu {fmt}", ["mfu", "--format", fmt, "--config", "config.json", "--seqlens", "4096x2",
                                 "--step-time", "1.5", "--device", "H100"], gen))
    for n, ranks in (("one", ["gen_rank0.pt.trace.json"]), ("two", ["gen_rank0.pt.trace.json", "steps_rank1.json"])):
        cases.append((f"mfu trace {n} {fmt}", ["mfu", "--format", fmt, "--config", "config.json", "--seqlens",
                                                "4096x2", "--peak-tflops", "989", "--trace", *ranks], gen))

data = testdata()
if data:
    tr = os.path.join(data, "traces")
    files = sorted(os.path.relpath(p, tr) for p in glob.glob(os.path.join(tr, "**", "*.json*"), recursive=True)
                   if p.endswith((".json", ".json.gz")))
    for f in files:
        trace_cases(f, [f], tr)
    dlrm = sorted(f for f in files if "dlrm_kineto" in f)
    trace_cases("dlrm 8 ranks", dlrm, tr)
    ctl = sorted(f for f in files if "trace_diff/control" in f)
    tst = sorted(f for f in files if "trace_diff/test" in f)
    for fmt in FORMATS:
        if ctl and tst:
            cases.append((f"diff control test {fmt}", ["diff", "--format", fmt, *ctl, "--vs", *tst], tr))
        cases.append((f"diff dlrm {fmt}", ["diff", "--format", fmt, dlrm[0], dlrm[1]], tr))
    snaps = sorted(os.path.relpath(p, data) for p in glob.glob(os.path.join(data, "snapshots", "**", "*.pickle"),
                                                                 recursive=True))
    for s in snaps:
        for fmt in FORMATS:
            cases.append((f"mem {s} {fmt}", ["mem", "--format", fmt, s], data))
    # traces recorded with profile_memory=True: their [memory] events
    mem_traces = [f for f in files if "resnet50_num_workers_0/worker0" in f or "Falconsai_nsfw" in f]
    for fmt in FORMATS:
        if mem_traces:
            cases.append((f"mem traces {fmt}", ["mem", "--format", fmt, *mem_traces], tr))
    for cfg in sorted(glob.glob(os.path.join(data, "model-configs", "*", "config.json"))):
        rel = os.path.relpath(cfg, data)
        cases.append((f"flops {rel} json", ["flops", "--format", "json", "--config", rel, "--seqlens", "1024,512"],
                      data))

with ThreadPoolExecutor(max_workers=2) as pool:  # each command also runs --threads 2
    results = dict(zip([c[0] for c in cases], pool.map(lambda c: digest(c[1], c[2]), cases)))
def read_expected():
    out = {}
    with open(EXPECTED) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            h, rc, name = line.rstrip("\n").split(" ", 2)
            out[name] = f"{h} {rc}"
    return out


if RECORD:
    if ONLY:  # the others keep their recorded digests
        kept = read_expected()
        results = {n: (results[n] if ONLY in n else kept.get(n, results[n])) for n in results}
    os.makedirs(os.path.dirname(EXPECTED), exist_ok=True)
    with open(EXPECTED, "w") as f:
        f.write("# sha256 (first 20 hex digits) of stdout, exit code, case; written by tests/cli/golden.py --record\n")
        for name in sorted(results):
            f.write(f"{results[name]} {name}\n")
    print(f"recorded {len(results)} cases in {EXPECTED}")
    sys.exit(0)

expected = read_expected()
bad = [n for n in results if n in expected and results[n] != expected[n]]
missing = [n for n in results if n not in expected]
for n in bad:
    args = next(a for name, a, _ in cases if name == n)
    print(f"FAIL: {n}: {results[n]} (expected {expected[n]}): trainprof {' '.join(args)}")
for n in missing:
    print(f"FAIL: {n}: not recorded (run tests/cli/golden.py --record)")
checked = len(results) - len(missing)
if bad or missing:
    print(f"{len(bad) + len(missing)} of {len(results)} cases differ")
    sys.exit(1)
print(f"OK: {checked} command x format cases give their recorded outputs"
      + ("" if data else " (generated inputs only: ../shared/data not found)"))
