"""The recording library end to end, through the tiny trainer: file names,
the trace read back by Python's json and by `trainprof info`, the snapshot by
Python's pickle, the window (fresh and resumed), ranks, config errors, the
flush on SIGTERM, and that the library links no analysis code."""
import glob
import gzip
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import TRAINPROF, SRC, check, finish, run  # noqa: E402

TINY = os.environ.get("TINY_GPT", "build/examples/tiny_gpt")
LIB = os.environ.get("RECORD_LIB", "build/libtrainprof_record.a")
SO = os.environ.get("RECORD_SO", "build/libtrainprof_record.so")
SMALL = ["--model.n_layer=1", "--model.n_embd=32", "--model.n_head=2", "--model.intermediate=64",
         "--model.seq_len=32", "--train.batch_size=2", "--train.data=" + os.path.join(SRC, "examples/tiny_gpt/corpus.txt")]
CONFIG = os.path.join(SRC, "configs/tiny.yaml")
tmp = tempfile.mkdtemp(prefix="tprof_record_")
# the recorder names frames through libdw when built with it (CMake found libdw-dev)
WITH_LIBDW = " U dwfl_begin" in subprocess.run(["nm", TINY], capture_output=True, text=True).stdout


def tiny(args, env=None, timeout=600):
    e = dict(os.environ)
    e.pop("RANK", None)
    e.pop("WORLD_SIZE", None)
    e.update(env or {})
    p = subprocess.run([TINY, CONFIG] + SMALL + args, capture_output=True, timeout=timeout, env=e)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def traces(d):
    return sorted(glob.glob(os.path.join(d, "*.pt.trace.json.gz")))


def steps_in(path):
    with gzip.open(path, "rb") as f:
        doc = json.load(f)
    return doc, sorted(int(e["name"].split("#")[1]) for e in doc["traceEvents"] if e.get("name", "").startswith("ProfilerStep#"))


# 1. a fresh run, window [3, 5): warm-up step 2, ProfilerStep#2..#3
d = os.path.join(tmp, "fresh")
rc, out, err = tiny(["--train.max_steps=6", "--train.profile.enable", "--train.profile.start_step", "3",
                     "--train.profile.end_step=5", "--train.profile.trace_dir", d, "--train.profile.with_stack=true"])
check(rc == 0, f"fresh run exit {rc}: {err}")
check("profiling result saved at" in err, "the trace is announced on stderr")
t = traces(d)
check(len(t) == 1, f"one trace written, got {t}")
if t:
    name = os.path.basename(t[0])
    m = re.fullmatch(r"tiny_gpt_rank0_(\d+)\.pt\.trace\.json\.gz", name)
    check(m is not None, f"file name {name}")
    if m:
        check(abs(int(m.group(1)) - time.time()) < 120, "unix seconds in the file name")
        pkl = os.path.join(d, name.replace(".pt.trace.json.gz", ".pkl"))
        check(os.path.exists(pkl), "the snapshot shares the stem")
        with open(pkl, "rb") as f:
            snap = pickle.load(f)
        check(set(snap) >= {"segments", "device_traces"}, f"snapshot keys {list(snap)}")
        tr = snap["device_traces"][0]
        acts = {e["action"] for e in tr}
        check({"alloc", "free_completed", "segment_alloc"} <= acts, f"snapshot actions {acts}")
        check(all(isinstance(e["frames"], list) for e in tr), "frames are lists")
        check(any(e["frames"] for e in tr), "with_stack: allocation frames recorded")
        names = {f["name"] for e in tr for f in e["frames"]}
        if WITH_LIBDW:
            # libdw: static functions named (dladdr named none of them), with file:line
            check({"arena_floats", "model_init", "train_step"} <= names, f"the trainer's functions by name: {names}")
            raw = sorted(n for n in names if n.startswith("tiny_gpt+0x"))
            check(not raw, f"no raw offsets into tiny_gpt, which has symbols: {raw}")
            own = [f for e in tr for f in e["frames"] if f["name"] == "train_step"]
            check(own and all(f["filename"].endswith("tiny_gpt/tiny_gpt.c") and f["line"] > 0 for f in own),
                  f"train_step's frames carry tiny_gpt.c:line: {own[:1]}")
        else:
            print("built without libdw: frames named through dladdr (exported names only)")
        segs = snap["segments"]
        check(len(segs) == 2, f"two arenas as segments, got {len(segs)}")
        for s in segs:
            check(sum(b["size"] for b in s["blocks"]) == s["total_size"], "blocks tile the segment")
            check(s["allocated_size"] == sum(b["size"] for b in s["blocks"] if b["state"] == "active_allocated"),
                  "allocated_size is the active blocks")
            # PyTorch's memory viewer shows a block without frames as <non-python>
            active = [b for b in s["blocks"] if b["state"] == "active_allocated"]
            check(all(b["frames"] for b in active), f"live blocks carry their allocation's frames: {active[:2]}")
            check(s["frames"], "the segment carries its allocation's frames")
        check(any(b["state"] == "active_allocated" for s in segs for b in s["blocks"]), "live blocks in the snapshot")
    doc, steps = steps_in(t[0])
    check(steps == [2, 3], f"ProfilerStep#2..#3 for window [3,5), got {steps}")
    for k in ("schemaVersion", "deviceProperties", "distributedInfo", "baseTimeNanoseconds", "traceEvents"):
        check(k in doc, f"top-level key {k}")
    check(doc["distributedInfo"] == {"backend": "none", "rank": 0, "world_size": 1}, f"{doc['distributedInfo']}")
    check(doc["deviceProperties"] == [], "no devices on the CPU")
    check(abs(doc["baseTimeNanoseconds"] / 1e9 - time.time()) < 300, "baseTimeNanoseconds is wall-clock ns")
    ev = doc["traceEvents"]
    cats = {e.get("cat") for e in ev}
    check({"cpu_op", "user_annotation", "cpu_instant_event"} <= cats, f"categories {cats}")
    meta = {e["name"] for e in ev if e.get("ph") == "M"}
    check({"process_name", "thread_name"} <= meta, f"metadata {meta}")
    check(any(e.get("ph") == "M" and e["name"] == "thread_name" and e["args"]["name"] == "trainer" for e in ev),
          "the trainer's thread name")
    phases = {e["name"] for e in ev if e.get("cat") == "user_annotation"}
    check({"data", "forward", "backward", "optimizer"} <= phases, f"phase ranges {phases}")
    mm = [e for e in ev if e.get("cat") == "cpu_op" and e["name"] == "aten::mm"]
    check(mm and mm[0]["args"]["Input Dims"] == [[64, 32], [32, 32]], f"record_shapes: {mm[:1]}")
    check(all("Call stack" in e["args"] for e in mm), "with_stack: a call stack per range")
    if WITH_LIBDW and mm:
        stack = mm[0]["args"]["Call stack"]
        check(re.search(r"(^|;)train_step \(tiny_gpt\.c:\d+\);", stack) is not None,
              f"the call stack names train_step with file:line: {stack}")
    mem = [e for e in ev if e.get("name") == "[memory]"]
    check(mem, "[memory] events")
    if mem:
        check(set(mem[0]["args"]) >= {"Addr", "Bytes", "Total Allocated", "Total Reserved", "Device Id"},
              f"memory args {mem[0]['args']}")
        check(any(e["args"]["Bytes"] < 0 for e in mem), "frees are negative Bytes")
    # spans nest inside their step
    st = [e for e in ev if e.get("name", "").startswith("ProfilerStep#")]
    for e in ev:
        if e.get("ph") == "X" and not e["name"].startswith("ProfilerStep#"):
            inside = any(s["ts"] <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 0.002 for s in st)
            if not inside:
                check(False, f"range {e['name']} at {e['ts']} outside the recorded steps")
                break
    rc, out, err = run([TRAINPROF, "info", t[0]])
    check(rc == 0, f"trainprof info exit {rc}: {err}")
    check("steps        2 (ProfilerStep#2 .. #3)" in out, f"info sees the steps: {out}")
    rc, out, err = run([TRAINPROF, "summary", t[0]])
    check(rc == 0 and "forward" in out, f"trainprof summary: {rc} {err}")

# 2. resumed at global step 4: window [3, 7) still records steps 5 and 6
d = os.path.join(tmp, "resume")
rc, out, err = tiny(["--train.max_steps=4", "--train.resume_step=4", "--train.profile.enable", "--train.profile.start_step=3",
                     "--train.profile.end_step=7", "--train.profile.trace_dir=" + d, "--train.profile.profile_memory=false"])
check(rc == 0, f"resumed run exit {rc}: {err}")
t = traces(d)
check(len(t) == 1, "resumed run writes its trace")
check(not glob.glob(os.path.join(d, "*.pkl")), "no snapshot without profile_memory")
if t:
    doc, steps = steps_in(t[0])
    check(steps == [4, 5], f"resumed: ProfilerStep#4..#5, got {steps}")
    check(not any(e.get("name") == "[memory]" for e in doc["traceEvents"]), "no [memory] events without profile_memory")

# 3. ranks: rank0_only keeps rank 1 silent; rank0_only=false records it under its rank
d = os.path.join(tmp, "ranks")
rc, out, err = tiny(["--train.max_steps=2", "--train.profile.enable", "--train.profile.trace_dir=" + d],
                    env={"RANK": "1", "WORLD_SIZE": "2"})
check(rc == 0 and not traces(d), "rank 1 does not record with rank0_only")
rc, out, err = tiny(["--train.max_steps=2", "--train.profile.enable", "--train.profile.rank0_only=false",
                     "--train.profile.trace_dir=" + d], env={"RANK": "1", "WORLD_SIZE": "2"})
t = traces(d)
check(rc == 0 and len(t) == 1 and "_rank1_" in t[0], f"rank 1 records with rank0_only=false: {t}")
if t:
    doc, _ = steps_in(t[0])
    check(doc["distributedInfo"]["rank"] == 1 and doc["distributedInfo"]["world_size"] == 2, "rank in the trace")

# 4. a run that ends before the window's end still leaves its trace (at exit)
d = os.path.join(tmp, "short")
rc, out, err = tiny(["--train.max_steps=3", "--train.profile.enable", "--train.profile.start_step=2",
                     "--train.profile.end_step=10", "--train.profile.trace_dir=" + d])
t = traces(d)
check(rc == 0 and len(t) == 1, "a short run writes what it recorded")
if t:
    check(steps_in(t[0])[1] == [1, 2], "the short run's steps")

# 5. configuration errors fail at load time, exit 2, naming the key
for args, want in [(["--train.profile.start_step=0"], "start_step = 0: must be >= 1"),
                   (["--train.profile.start_step=4", "--train.profile.end_step=4"], "must be greater than start_step"),
                   (["--train.profile.enable=maybe"], "Boolean value expected"),
                   (["--train.profile.colour=red"], "unknown key train.profile.colour"),
                   (["--train.profile.end_step=ten"], "an integer expected")]:
    rc, out, err = tiny(args)
    check(rc == 2 and want in err, f"{args}: exit {rc}, stderr {err!r}")
bad = os.path.join(tmp, "bad.yaml")
with open(bad, "w") as f:
    f.write("train:\n  profile:\n    enable: true\n    start_stp: 3\n")
p = subprocess.run([TINY, bad], capture_output=True)
check(p.returncode == 2 and b"line 4" in p.stderr and b"unknown key in the profile block" in p.stderr,
      f"unknown YAML key: {p.stderr!r}")

# 6. SIGTERM during the window: the trace of the steps so far is still written, and valid
d = os.path.join(tmp, "sig")
e = dict(os.environ)
e.pop("RANK", None)
proc = subprocess.Popen([TINY, CONFIG] + SMALL + ["--train.max_steps=100000", "--train.profile.enable",
                        "--train.profile.start_step=2", "--train.profile.end_step=1000000", "--train.profile.trace_dir=" + d],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
seen = 0
for line in proc.stdout:
    if line.startswith(b"step "):
        seen += 1
        if seen == 4:
            break
proc.send_signal(signal.SIGTERM)
try:
    proc.communicate(timeout=120)
except subprocess.TimeoutExpired:
    proc.kill()
    check(False, "SIGTERM did not end the trainer")
check(proc.returncode == -signal.SIGTERM, f"the trainer ends by SIGTERM (status {proc.returncode})")
t = traces(d)
check(len(t) == 1, f"a trace after SIGTERM: {os.listdir(d) if os.path.isdir(d) else 'no dir'}")
if t:
    doc, steps = steps_in(t[0])
    check(len(steps) >= 2 and steps[0] == 1, f"steps recorded before SIGTERM: {steps}")
    rc, out, err = run([TRAINPROF, "info", t[0]])
    check(rc == 0, f"trainprof info reads the interrupted trace: {err}")
check(not [f for f in os.listdir(d) if ".tmp" in f or f.startswith(".")] if os.path.isdir(d) else True,
      "no temporary file left")

# 7. the recording library links no analysis code
for lib in (LIB, SO):
    p = subprocess.run(["nm", "-C", lib], capture_output=True, text=True)
    check(p.returncode == 0, f"nm {lib}")
    defined = {ln.split()[-1] for ln in p.stdout.splitlines() if re.search(r" [TtDdBbRr] ", ln)}
    for sym in ("tprof_kernels", "tprof_trace_read", "tprof_trace_read_many", "tprof_summary"):
        check(not any(s == sym or s.startswith(sym + "_") for s in defined), f"{lib} defines {sym}")
    check("tprof_range_begin" in defined and "tprof_meter_step" in defined, f"{lib} has the recording API and the meter")
p = subprocess.run(["nm", TINY], capture_output=True, text=True)
check("tprof_trace_read" not in p.stdout and "tprof_kernels" not in p.stdout, "tiny_gpt links no analysis code")

# 8. C++: the header compiles as C++ and TPROF_RANGE is an RAII object there
cxx = shutil.which("g++") or shutil.which("clang++")
if os.environ.get("TPROF_SANITIZED"):
    print("the C++ check is skipped in sanitized builds (the library needs the sanitizer runtime)")
elif cxx and os.path.exists(LIB):
    src = os.path.join(tmp, "raii.cpp")
    with open(src, "w") as f:
        f.write("""#include "trainprof/profiler.h"
#include <cstdio>
int main() {
    tprof_profile_config c; tprof_config_default(&c);
    c.enable = true; c.with_stack = false; c.profile_memory = false;
    std::snprintf(c.trace_dir, sizeof c.trace_dir, "%s", TDIR);
    if (tprof_profiler_start(&c, nullptr, 0)) return 1;
    tprof_step_begin(1);
    for (int i = 0; i < 3; i++) { TPROF_RANGE("cxx_scope"); }
    tprof_step_end(1);
    tprof_profiler_stop();
    std::puts(tprof_profiler_trace_path());
}
""")
    exe = os.path.join(tmp, "raii")
    inc = [os.path.join(SRC, "include")]
    pc = subprocess.run(["pkg-config", "--libs", "yaml-0.1", "libzstd", "zlib"], capture_output=True, text=True)
    libs = pc.stdout.split() if pc.returncode == 0 else ["-lyaml", "-lzstd", "-lz"]
    undefined = subprocess.run(["nm", LIB], capture_output=True, text=True).stdout
    isal = ["-lisal"] if " U isal_" in undefined else []
    if " U dwfl_" in undefined:  # built with libdw (frames named with file:line)
        dw = subprocess.run(["pkg-config", "--libs", "libdw"], capture_output=True, text=True)
        isal += dw.stdout.split() if dw.returncode == 0 else ["-ldw"]
    p = subprocess.run([cxx, "-std=c++17", "-Wall", "-Werror", "-I" + inc[0], "-DTDIR=\"" + os.path.join(tmp, "cxx") + "\"",
                        src, "-o", exe, LIB] + isal + libs + os.environ.get("RECORD_EXTRA_LIBS", "").split()
                       + ["-lpthread", "-ldl", "-lm"], capture_output=True, text=True)
    check(p.returncode == 0, f"C++ compile: {p.stderr}")
    if p.returncode == 0:
        q = subprocess.run([exe], capture_output=True, text=True, env=dict(os.environ, TPROF_QUIET="1"))
        check(q.returncode == 0, f"C++ program: {q.stderr}")
        path = q.stdout.strip()
        if q.returncode == 0 and path:
            with gzip.open(path, "rb") as f:
                doc = json.load(f)
            n = sum(1 for e in doc["traceEvents"] if e.get("name") == "cxx_scope")
            check(n == 3, f"3 RAII ranges, got {n}")
else:
    print("no C++ compiler: the C++ check is skipped")

finish("recording: names, trace, snapshot, window, resume, ranks, errors, SIGTERM, link set")
