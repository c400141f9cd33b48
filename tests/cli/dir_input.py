"""A directory is an input wherever a trace is: every file below it,
recursively, recognised as a trace by its content (not its name), in path
order (then printed in rank order, as any inputs); other files skipped with one note counting them by kind; an error
(exit 3) saying what a directory holds when it holds no trace. Checked on a
generated tree (nested folders, gzip and zstd, a trace without a .json name, a
trace opening with 20 KB of metadata, a snapshot, a config, a log, an Ascend
communication.json, text, a FIFO, a link loop, a link to a listed file, a
temporary output, a hidden folder) and on ../shared/data when present: the
files found, the note's counts, kernels/diff/merge/mem on a directory equal
to the same on its files."""
import gzip
import json
import os
import pickle
import re
import shutil
import stat
import subprocess

from common import TRAINPROF, check, finish, run, scratch, testdata

tmp = scratch("tprof_dir_")
ZSTD = shutil.which("zstd")


def trace(rank, kernels, big_metadata=False):
    ev, ts = [], 1000
    for step in range(2):
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
                   "ts": ts, "dur": 400})
        for i, (name, dur) in enumerate(kernels):
            corr = step * 100 + i + 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": ts + 10 + i * 20, "dur": 5, "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts + 20 + i * 40,
                       "dur": dur, "args": {"device": 0, "stream": 7, "correlation": corr}})
        ts += 500
    doc = {}
    if big_metadata:  # as TraceLens writes: its traceEvents key 20 KB in
        doc["metadata"] = {"notes": ["x" * 100 for _ in range(200)]}
    doc["traceEvents"] = ev
    doc["distributedInfo"] = {"rank": rank, "world_size": 8}
    return json.dumps(doc).encode()


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def zstd(path, data):
    write(path + ".plain", data)
    subprocess.run([ZSTD, "-q", "-f", "--rm", path + ".plain", "-o", path], check=True)
    return path


def note_lines(err):
    return [l for l in err.splitlines() if l.startswith("trainprof: note: ")]


def files_of(out):
    return [t["file"] for t in json.loads(out)]


def name_rank(path):
    m = re.search(r"rank[-_]?(\d+)", os.path.basename(path), re.I)
    return int(m.group(1)) if m else None


def in_rank_order(out, listed):
    """LISTED (the inputs in the order they were expanded) in rank order, the
    rule every command prints in: distributedInfo.rank (from info's rows in
    OUT), else rank<N> in the name, else the place in LISTED."""
    rank = {t["file"]: t["rank"] for t in json.loads(out)}
    def key(ip):
        i, p = ip
        r = rank.get(p, -1)
        if r is None or r < 0:
            r = name_rank(p)
        return (i if r is None else r, i)
    return [p for _, p in sorted(enumerate(listed), key=key)]


# ---- the tree ----
R = os.path.join(tmp, "run")
traces = [
    write(os.path.join(R, "big_meta.json"), trace(4, [("gemm_a", 50)], big_metadata=True)),
    write(os.path.join(R, "rank0.pt.trace.json"), trace(0, [("gemm_a", 100), ("ncclAllReduce", 60)])),
]
if ZSTD:
    traces.append(zstd(os.path.join(R, "sub", "deeper", "rank2.json.zst"), trace(2, [("gemm_a", 90), ("relu", 5)])))
else:
    print("SKIP (partly): no zstd command, no zstd trace in the tree")
traces += [
    write(os.path.join(R, "sub", "rank1.json.gz"), gzip.compress(trace(1, [("gemm_a", 110), ("ncclAllReduce", 70)]))),
    write(os.path.join(R, "sub", "worker3"), trace(3, [("gemm_b", 80)])),  # no .json: found by its content
]
write(os.path.join(R, "snap.pkl"), pickle.dumps({"segments": [], "device_traces": []}, protocol=2))
write(os.path.join(R, "config.json"), json.dumps({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
                                                  "model_type": "llama", "vocab_size": 128}).encode())
write(os.path.join(R, "train.log"), b"step 1 | loss 2.50 | lr 1e-4\nstep 2 | loss 2.41 | lr 1e-4\n")
write(os.path.join(R, "notes.txt"), b"nothing to see here\n")
write(os.path.join(R, "ascend", "communication.json"), json.dumps({"step1": {"collective": {"hcom_allReduce_1": {
    "Communication Time Info": {"Elapse Time(ms)": 1.5}, "Communication Bandwidth Info": {}}}}}).encode())
write(os.path.join(R, "rank5.json.gz.tmp.host.123.abcdef"), trace(5, [("gemm_a", 1)]))  # a merge being written
write(os.path.join(R, ".hidden", "rank9.json"), trace(9, [("gemm_a", 1)]))  # not looked at
os.makedirs(os.path.join(R, "emptydir"))
os.symlink(".", os.path.join(R, "loop"))  # a loop: each directory is walked once
os.symlink("rank0.pt.trace.json", os.path.join(R, "zz_link.json"))  # the same file: listed once
os.mkfifo(os.path.join(R, "fifo"))  # never opened (a read would block)

# path order, restated: names byte-wise, a folder's files where its name falls, dot-names left out
def walk(d):
    out = []
    for name in sorted(os.listdir(d), key=os.fsencode):
        p = os.path.join(d, name)
        if name.startswith(".") or os.path.islink(p) and os.path.isdir(p):
            continue
        out += walk(p) if os.path.isdir(p) else [p]
    return out


expected = [p for p in walk(R) if p in traces]
check(sorted(expected) == sorted(traces), f"the restated walk finds the traces: {expected}")

rc, out, err = run([TRAINPROF, "info", "--format", "json", R], timeout=60)
check(rc == 0, f"info on the tree: exit {rc}: {err}")
if rc == 0:
    # found in path order, printed in rank order
    check(files_of(out) == in_rank_order(out, expected), f"the traces in path order:\n{files_of(out)}\n{expected}")
n = len(traces)
want = (f"trainprof: note: {R}: {n} traces; skipped 8 files (1 memory snapshot, 1 training log, 1 model config, "
        "1 Ascend communication summary, 1 not recognised, 1 not a regular file, 1 temporary output, "
        "1 link to a file already listed)")
check(note_lines(err) == [want], f"one note with the counts:\n{note_lines(err)}\n{[want]}")

# a trailing slash: the same files, named without a double slash
rc, out, err = run([TRAINPROF, "info", "--format", "json", R + "/"], timeout=60)
check(rc == 0 and files_of(out) == in_rank_order(out, expected), f"DIR/ lists the same files: {out[:300]}")

# kernels on the directory is kernels on its files, in every format
for fmt in ("table", "csv", "json"):
    rc1, out1, err1 = run([TRAINPROF, "kernels", "--format", fmt, R])
    rc2, out2, err2 = run([TRAINPROF, "kernels", "--format", fmt] + expected)
    check(rc1 == rc2 == 0 and out1 == out2, f"kernels --format {fmt}: DIR equals its files ({rc1}, {rc2})")
    check(not note_lines(err2), f"files alone: no note ({err2!r})")
# a directory among files and stdin, each kept where it is given
with open(traces[0], "rb") as f:
    rc, out, err = run([TRAINPROF, "info", "--format", "json", "-", os.path.join(R, "sub"), traces[1]], stdin=f.read())
sub = [p for p in expected if p.startswith(os.path.join(R, "sub") + os.sep)]
check(rc == 0 and files_of(out) == in_rank_order(out, ["-"] + sub + [traces[1]]),
      f"stdin, a directory, a file in argument order: {rc} {out[:400]} {err}")
# a file given as itself stays, whatever it is: the reader's own error
rc, out, err = run([TRAINPROF, "kernels", os.path.join(R, "config.json")])
check(rc == 3 and "not a trace" in err and "flops" in err, f"a config given as a file: the usual error ({rc}: {err})")

# ---- a directory without a trace ----
N = os.path.join(tmp, "nothing")
write(os.path.join(N, "a.pkl"), pickle.dumps({"segments": [], "device_traces": []}, protocol=4))
write(os.path.join(N, "b.pkl"), pickle.dumps({"segments": []}, protocol=2))
shutil.copy(os.path.join(R, "config.json"), os.path.join(N, "config.json"))
for cmd in (["kernels"], ["summary"], ["ranks"], ["merge", "-o", os.path.join(tmp, "never.json")], ["diff", N, R]):
    args = [TRAINPROF] + cmd + ([N] if cmd[0] != "diff" else [])
    rc, out, err = run(args)
    kinds = "trace or Ascend step table" if cmd[0] == "ranks" else "trace"  # ranks also reads step_trace_time.csv
    check(rc == 3 and f"{N}: no {kinds} below the directory; it holds 3 files (2 memory snapshots, 1 model config)" in err
          and "hint: the memory snapshots are read by trainprof mem" in err and not out,
          f"{cmd[0]} on a folder without traces: exit {rc}, says what it holds: {err!r}")
check(not os.path.exists(os.path.join(tmp, "never.json")), "merge wrote nothing")
rc, out, err = run([TRAINPROF, "steps", os.path.join(R, "emptydir")])
check(rc == 3 and "no trace or Ascend step table below the directory: it holds no files" in err,
      f"an empty folder: {rc} {err!r}")
rc, out, err = run([TRAINPROF, "kernels", os.path.join(tmp, "missing_dir")])
check(rc == 3 and "missing_dir" in err and "cannot open" in err, f"a missing path: the reader's error ({rc}: {err})")
if os.geteuid() != 0:  # root reads any folder
    L = os.path.join(tmp, "locked")
    write(os.path.join(L, "t.json"), trace(0, [("k", 1)]))
    os.chmod(L, 0)
    rc, out, err = run([TRAINPROF, "kernels", L])
    os.chmod(L, stat.S_IRWXU)
    check(rc == 3 and "cannot list the directory" in err, f"an unreadable folder: {rc} {err!r}")

# ---- diff: a directory per side ----
A, B = os.path.join(tmp, "a"), os.path.join(tmp, "b")
fa = [write(os.path.join(A, f"r{r}", "trace"), trace(r, [("gemm_a", 100 + r), ("ncclAllReduce", 50)])) for r in range(2)]
fb = [write(os.path.join(B, f"rank{r}.json.gz"), gzip.compress(trace(r, [("gemm_a", 120 + r), ("relu", 9)])))
      for r in range(3)]
write(os.path.join(B, "config.json"), open(os.path.join(R, "config.json"), "rb").read())
rc1, out1, err1 = run([TRAINPROF, "diff", "--format", "json", A, B])
rc2, out2, _ = run([TRAINPROF, "diff", "--format", "json"] + fa + ["--vs"] + fb)
check(rc1 == rc2 == 0 and out1 == out2, f"diff A B on folders equals the files with --vs ({rc1}, {rc2}: {err1})")
if rc1 == 0:
    d = json.loads(out1)
    check(len(d["base"]["files"]) == 2 and len(d["candidate"]["files"]) == 3, "two base ranks, three candidate ranks")
check(note_lines(err1) == [f"trainprof: note: {A}: 2 traces",
                           f"trainprof: note: {B}: 3 traces; skipped 1 file (1 model config)"],
      f"a note per side: {note_lines(err1)}")
rc3, out3, _ = run([TRAINPROF, "diff", "--format", "json", A, "--vs", B])
check(rc3 == 0 and out3 == out1, "diff A --vs B: the same")
rc, out, err = run([TRAINPROF, "diff", A, fb[0], fb[1]])
check(rc == 2 and "--vs" in err, f"three arguments without --vs: usage ({rc})")

# ---- merge: the folder's traces, the same timeline as its files ----
m1, m2 = os.path.join(tmp, "m1.json.gz"), os.path.join(tmp, "m2.json.gz")
rc1, out1, err1 = run([TRAINPROF, "merge", "--format", "json", R, "-o", m1])
rc2, out2, _ = run([TRAINPROF, "merge", "--format", "json"] + expected + ["-o", m2])
check(rc1 == rc2 == 0, f"merge on the tree and on its files: {rc1} {rc2} {err1}")
if rc1 == rc2 == 0:
    check(gzip.open(m1).read() == gzip.open(m2).read(), "merge: the same merged timeline")
    r1, r2 = json.loads(out1), json.loads(out2)
    check([x["file"] for x in r1["ranks"]] == [x["file"] for x in r2["ranks"]] and len(r1["ranks"]) == n,
          f"merge: the same ranks from the same files: {r1['ranks']}")
    check(len(note_lines(err1)) == 1, f"merge: one note {err1!r}")

# ---- mem: the snapshots and traces below a folder ----
data = testdata()
M = os.path.join(tmp, "mem")
mem_files = [write(os.path.join(M, "t", "rank0.json"), open(traces[1], "rb").read())]
if data:
    snap = os.path.join(data, "snapshots", "synthetic", "protocol2.pickle")
    mem_files.insert(0, os.path.join(M, "a.pickle"))
    shutil.copy(snap, mem_files[0])
write(os.path.join(M, "config.json"), open(os.path.join(R, "config.json"), "rb").read())
rc1, out1, err1 = run([TRAINPROF, "mem", "--format", "json", M])
rc2, out2, _ = run([TRAINPROF, "mem", "--format", "json"] + mem_files)
check(rc1 == rc2 == 0 and out1 == out2, f"mem on a folder equals mem on its files ({rc1}, {rc2}): {err1}")
kinds = (f"1 trace, 1 memory snapshot" if data else "1 trace") + "; skipped 1 file (1 model config)"
check(f"trainprof: note: {M}: {kinds}" in note_lines(err1), f"mem's note: {note_lines(err1)}")

# ---- real files: every subfolder of the shared traces ----
if data:
    T = os.path.join(data, "traces")
    alone = {}
    for sub in sorted(os.listdir(T)):
        d = os.path.join(T, sub)
        if not os.path.isdir(d):
            continue
        rc, out, err = run([TRAINPROF, "info", "--format", "json", d], timeout=600)
        check(rc in (0, 3), f"{sub}: info exit {rc} (no crash): {err[-400:]}")
        notes = [l for l in note_lines(err) if l.startswith(f"trainprof: note: {d}: ")]
        check(len(notes) == 1, f"{sub}: one note: {err[-400:]}")
        if rc != 0 or len(notes) != 1:
            continue
        found = files_of(out)
        regular = walk(d)
        # "1 trace, 2 Ascend kernel tables; skipped ...": every kind kept, summed
        kept = sum(int(k.split(" ")[0]) for k in notes[0].split(": ")[3].split("; ")[0].split(", "))
        skipped = int(notes[0].split("skipped ")[1].split(" ")[0]) if "skipped" in notes[0] else 0
        check(kept == len(found) and kept + skipped == len(regular),
              f"{sub}: {kept} traces + {skipped} skipped = {len(regular)} files ({notes[0]})")
        check(found == in_rank_order(out, [p for p in regular if p in found]), f"{sub}: in path order")
        # no trace missed: every file that info reads on its own is found
        for p in regular:
            if p not in found and os.path.getsize(p) < 64 << 20:
                rc, _, e = run([TRAINPROF, "info", p])
                check(rc != 0, f"{sub}: {os.path.relpath(p, T)} is read alone but not found in the folder")
    print("real data: every trace subfolder walked")
else:
    print("SKIP (visible): ../shared/data absent, real folders not walked")

finish(f"a directory stands for its {n} traces (content, not names), counted notes, clear errors")
