"""trainprof-mpi against trainprof: `mpirun -np 3 trainprof-mpi COMMAND`
prints byte for byte what `trainprof COMMAND` prints, over 200 generated
ranks (made here by trainprof-gentrace, not real data) and the real
multi-rank sets of ../shared/data (the 8 DLRM ranks, HTA's critical-path
ranks), merge's output too (identical after decompression), report's page;
a usage error
or --help is said once; a corrupt rank in the middle gives the same
messages and exit code (merge too);
a process killed mid-run makes mpirun exit non-zero within seconds."""
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import GENTRACE, SRC, SKIP, TRAINPROF, check, finish, testdata  # noqa: E402

MPI_TP = os.environ.get("TRAINPROF_MPI", "")
MPIEXEC = os.environ.get("MPIEXEC") or shutil.which("mpirun") or ""
if not MPI_TP or not os.path.exists(MPI_TP) or not MPIEXEC or not os.path.exists(MPIEXEC):
    print("SKIP: no trainprof-mpi (CMake found no MPI) or no mpirun")
    sys.exit(SKIP)

# root in CI containers, more processes than cores; shared memory without CMA (tiny_gpt_mpi.py says why)
env = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")
if os.environ.get("TPROF_SANITIZED"):
    env["ASAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "fast_unwind_on_malloc=0"]))
    env["LSAN_OPTIONS"] = ":".join(filter(None, [os.environ.get("LSAN_OPTIONS"), "print_suppressions=0",
                                                 "suppressions=" + os.path.join(SRC, "tests/lsan-openmpi.supp")]))
MPIRUN = [MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", "3"]
tmp = tempfile.mkdtemp(prefix="tprof_mpi_cli_")


def one(args):
    p = subprocess.run([TRAINPROF] + args, capture_output=True, env=env, timeout=600)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def spread(args, extra_env=None):
    e = dict(env, **(extra_env or {}))
    fwd = [x for k in (extra_env or {}) for x in ("-x", k)]
    p = subprocess.run(MPIRUN + fwd + [MPI_TP] + args, capture_output=True, env=e, timeout=600)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def ours(err):
    """trainprof's own lines of stderr (mpirun adds banners), sorted: each
    process says its files' lines as they come."""
    return sorted(ln for ln in err.splitlines() if ln.startswith("trainprof"))


def same(label, args):
    a, b = one(args), spread(args)
    check(a[0] == b[0] == 0, f"{label} {args[:3]}: exit {a[0]} alone, {b[0]} under MPI: {b[2][-800:]}")
    check(a[1] == b[1] and a[1], f"{label} {args[:3]}: the output differs under MPI ({len(a[1])} vs {len(b[1])} bytes)")
    check(ours(a[2]) == ours(b[2]), f"{label} {args[:3]}: messages differ:\n{ours(a[2])}\n{ours(b[2])}")


# 200 generated ranks, one step each, with collectives matched by group and Seq
gen = os.path.join(tmp, "gen")
os.makedirs(gen)
for r in range(200):
    subprocess.run([GENTRACE, "--steps", "1", "--layers", "1", "--rank", str(r), "--world", "200", "--seed", str(r + 1),
                    "-o", os.path.join(gen, f"rank{r}.json")], check=True, capture_output=True)
for cmd in ("summary", "kernels", "ranks", "collectives"):
    same("200 generated ranks", [cmd, "--format", "json", gen])
same("200 generated ranks", ["summary", gen])
same("200 generated ranks", ["kernels", "--format", "csv", gen])
# every rank's results through the store's temporary file (TPROF_STORE_MEMORY=0: nothing kept in memory),
# alone and under MPI (the root's store and every process's outbox): the same bytes as through memory
for cmd in ("summary", "kernels"):
    a = one([cmd, "--format", "json", gen])
    p = subprocess.run([TRAINPROF, cmd, "--format", "json", gen], capture_output=True, timeout=600,
                       env=dict(env, TPROF_STORE_MEMORY="0"))
    b = spread([cmd, "--format", "json", gen], {"TPROF_STORE_MEMORY": "0"})
    check(a[0] == p.returncode == b[0] == 0 and a[1] == p.stdout == b[1] and a[1],
          f"{cmd} through the store's file: the same output alone and under MPI ({p.returncode}, {b[0]}): {b[2][-300:]}")
# diff: each side's traces read where they are placed, each made into its part there; the root compares.
# The same output in every format, also with every part through the store's file
ranks_of = [os.path.join(gen, f"rank{r}.json") for r in range(40)]
for fmt in ("json", "csv", "table"):
    same("diff of 20 generated ranks against 20", ["diff", "--format", fmt, *ranks_of[:20], "--vs", *ranks_of[20:]])
a = one(["diff", "--format", "json", *ranks_of[:20], "--vs", *ranks_of[20:]])
b = spread(["diff", "--format", "json", *ranks_of[:20], "--vs", *ranks_of[20:]],
           {"TPROF_STORE_MEMORY": "0", "TPROF_MPI_STATS": "1"})
check(a[0] == b[0] == 0 and a[1] == b[1], f"diff through the store's file: the same output ({b[0]}): {b[2][-300:]}")
got = re.findall(r"root: (\d+) outcomes, (\d+) bytes from 2 other processes", b[2])
check(got and int(got[0][0]) == 40 and int(got[0][1]) > 10 ** 4,
      f"diff spread: every trace's part came to the root, the others' as bytes: {got}")
x = re.findall(r"collectives matched by group: (\d+) bytes received in exchanges", b[2])
check(x and int(x[0]) > 0, f"diff spread: each side's collectives matched by group among the processes: {x}")
runs = json.loads(a[1]).get("collectives_run") or []
check(len(runs) == 2 and all(r["matched"] > 0 for r in runs), f"diff: each side's collectives are matched: {runs}")
# a trace of unknown rank on a side: the side's collectives matched in the order diff lists the side (a rank
# unknown placed by its place among the side's traces, not among all the inputs)
with open(os.path.join(gen, "rank5.json")) as f:
    doc = json.load(f)
doc.pop("distributedInfo", None)
norank = os.path.join(tmp, "unknown.json")
with open(norank, "w") as f:
    json.dump(doc, f)
same("diff with a trace of unknown rank", ["diff", "--format", "json", *ranks_of[:3], "--vs", ranks_of[2], norank])
# a rank on both sides, a regression gate: the same verdict and exit code
args = ["diff", "--fail-above", "0", "--metric", "kernel_time", *ranks_of[:3], "--vs", *ranks_of[1:5]]
a, b = one(args), spread(args)
check(a[0] == b[0] and a[1] == b[1] and ours(a[2]) == ours(b[2]),
      f"diff --fail-above: exit {a[0]} / {b[0]}:\n{ours(a[2])}\n{ours(b[2])}")
# the commands that fold every rank's table into one as each is read back
for cmd in ("ops", "critical-path"):
    same("200 generated ranks", [cmd, "--format", "json", gen])
# report: its summary of the traces spread, the page written by the root alone, the same bytes
pages = [os.path.join(tmp, f"report-{k}.html") for k in ("alone", "spread")]
a, b = one(["report", "-o", pages[0], gen]), spread(["report", "-o", pages[1], gen])
if a[0] == 2 and "no charting library" in a[2]:
    print("SKIP (visible): this build has no charting library: report is not compared")
else:
    with open(pages[0], "rb") as fa, open(pages[1], "rb") as fb:
        pa, pb = fa.read(), fb.read()
    check(a[0] == b[0] == 0 and pa == pb and len(pa) > 10 ** 5,
          f"report: the same page alone and under MPI ({len(pa)} vs {len(pb)} bytes, exit {a[0]} {b[0]}): {b[2][-400:]}")
    check(ours(b[2]).count(f"trainprof: wrote {pages[1]}") == 1 or sum("wrote" in ln for ln in ours(b[2])) == 1,
          f"report under MPI: the page said written once: {ours(b[2])}")
# merge: each process rewrites its share, the root merges the streams and writes the file


def merged(args):
    """merge alone and under MPI into the same file name (the report names it): their results and files."""
    out, got = os.path.join(tmp, "merged.json"), []
    for run in (one, spread):
        if os.path.exists(out):
            os.remove(out)
        r = run(["merge"] + args + ["-o", out])
        got.append((r, open(out, "rb").read() if os.path.exists(out) else b""))
    return got


def same_merge(label, args):
    (a, fa), (b, fb) = merged(args)
    check(a[0] == b[0] == 0 and a[1] == b[1] and ours(a[2]) == ours(b[2]),
          f"{label} merge {args}: exit {a[0]} {b[0]}, the same report: {b[2][-600:]}")
    check(fa == fb and len(fa) > 10 ** 5, f"{label} merge {args}: the same file ({len(fa)} vs {len(fb)} bytes)")


same_merge("200 generated ranks", [gen])
same_merge("200 generated ranks", ["--ranks", "3-150", gen])
rc, _, err = one(["merge", "-o", "-", gen])
check(rc == 2 and "not to stdout" in err, f"merge -o -: a usage error, not a file named '-' ({rc}): {err[-200:]}")
same("200 generated ranks", ["merge", "--steps", "0..3", "--format", "json", "-o", os.path.join(tmp, "steps.json"), gen])
for out in ("alone.json.gz", "spread.json.gz"):
    if os.path.exists(os.path.join(tmp, out)):
        os.remove(os.path.join(tmp, out))
a = one(["merge", "-o", os.path.join(tmp, "alone.json.gz"), gen])
b = spread(["merge", "-o", os.path.join(tmp, "spread.json.gz"), gen])
with gzip.open(os.path.join(tmp, "alone.json.gz")) as fa, gzip.open(os.path.join(tmp, "spread.json.gz")) as fb:
    za, zb = fa.read(), fb.read()
check(a[0] == b[0] == 0 and za == zb and len(za) > 10 ** 6,
      f"merge to .gz: the same trace after decompression ({len(za)} vs {len(zb)} bytes, exit {a[0]} {b[0]}): {b[2][-400:]}")
# a rank on stdin among files: mpirun gives stdin to the first process, which reads it
with open(os.path.join(gen, "rank1.json"), "rb") as f:
    stdin_args = ["kernels", "--format", "json", os.path.join(gen, "rank0.json"), "-", os.path.join(gen, "rank2.json")]
    a = subprocess.run([TRAINPROF] + stdin_args, stdin=f, capture_output=True, env=env, timeout=600)
    f.seek(0)
    b = subprocess.run(MPIRUN + [MPI_TP] + stdin_args, stdin=f, capture_output=True, env=env, timeout=600)
check(a.returncode == b.returncode == 0 and a.stdout == b.stdout and a.stdout,
      f"a rank on stdin: exit {a.returncode} alone, {b.returncode} under MPI, the same output: {a.stdout == b.stdout}")


# collectives matched by group where they were read (each group's instances go to the process that owns
# it, by a hash of its name; only the owners' partials reach the root): nine generated ranks, given out of
# rank order, with groups matched by Seq ("dp") and by order ("tp0", "tp1", "pp"), an all-to-all-v with
# split sizes ("ep"), clocks offset and drifting, rank 4 late, one rank without the last step
def fnv_owner(group, procs=3):
    h = 1469598103934665603
    for c in group.encode():
        h = ((h ^ c) * 1099511628211) % (1 << 64)
    return h % procs


groups_dir = os.path.join(tmp, "groups")
os.makedirs(groups_dir)
group_names = ["dp", "tp0", "tp1", "pp", "ep"]
check(len({fnv_owner(g) for g in group_names}) == 3, "the groups are spread over all three processes")
for r in range(9):
    ev, t0, off = [], 0, r * 37.0 + r * r * 0.5
    for s in range(3 if r == 6 else 4):
        base = s * 100000.0 + off
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{s}", "pid": 1, "tid": 1,
                   "ts": base, "dur": 90000})
        calls = [("dp", s * 4 + j, "allreduce", 1000 + j * 5000) for j in range(4)]
        calls += [(f"tp{r // 5}", None, "allgather", 22000 + j * 3000) for j in range(2)]
        calls += [("pp", None, "sendrecv", 40000), ("ep", s, "all_to_allv", 50000)]
        for k, (g, seq, name, at) in enumerate(calls):
            late = 300.0 if r == 4 else 0.0
            ts = base + at + late + (r * 7919 + s * 31 + k * 17) % 200
            dur = 400.0 + (r * 131 + k * 71 + s * 13) % 900 + (0 if r == 4 else 300.0 - late)
            args = {"Collective name": name, "dtype": "BFloat16", "In msg nelems": 1 << 18,
                    "Out msg nelems": 1 << 18, "Group size": 9 if g in ("dp", "ep") else 5 if g == "tp0" else 4,
                    "Process Group Name": g}
            if seq is not None:
                args["Seq"] = seq
            if g == "ep":
                rows = [1 + (r * 3 + d * 5 + s) % 7 for d in range(9)]
                args["In msg nelems"] = sum(rows) * 256
                args["In split size"] = "[" + ", ".join(map(str, rows)) + "]"
                args["Process Group Ranks"] = "[" + ", ".join(map(str, range(9))) + "]"
            cid = s * 100 + k + 1
            ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1,
                       "ts": ts - 20, "dur": 10, "args": args})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": ts - 19, "dur": 5, "args": {"correlation": cid}})
            ev.append({"ph": "X", "cat": "kernel", "name": f"ncclDevKernel_{name}_RING_LL(ncclDevKernelArgs)",
                       "pid": 0, "tid": 7, "ts": ts, "dur": dur, "args": {"correlation": cid, "stream": 7}})
    with open(os.path.join(groups_dir, f"rank{(r * 4) % 9}.json"), "w") as f:
        json.dump({"distributedInfo": {"rank": (r * 4) % 9, "world_size": 9}, "traceEvents": ev}, f)
for cmd in ("collectives", "ranks", "summary", "advice"):
    same("nine ranks in five groups", [cmd, "--format", "json", groups_dir])
# a process that fails in the matching (TPROF_MPI_TEST_COLL_FAIL: out of memory, say) leaves none waiting:
# the root says so once and the job fails
for failing in ("1", "0"):
    t0 = time.time()
    rc, out, err = spread(["collectives", "--format", "json", groups_dir], {"TPROF_MPI_TEST_COLL_FAIL": failing})
    check(rc == 3 and not out and ours(err).count(
        "trainprof: error: the collectives could not be matched across the processes") == 1 and time.time() - t0 < 60,
        f"process {failing} failing in the matching: exit {rc}, said once: {ours(err)}")
a = json.loads(one(["collectives", "--format", "json", groups_dir])[1])
check(a["matching"] == "both" and len({g["group"] for g in a["collectives"]}) == 5 and a.get("alltoall_pairs"),
      f"nine ranks in five groups: every group matched, by Seq and by order: {a['matching']}, "
      f"{sorted({g['group'] for g in a['collectives']})}")

# real multi-rank sets
d = testdata()
if d is None:
    print("SKIP (visible): ../shared/data not found: the real ranks are not compared")
else:
    dlrm = os.path.join(d, "traces/param/et_replay/tests/inputs/dlrm_kineto")
    hta = os.path.join(d, "traces/HolisticTraceAnalysis/tests/data/critical_path")
    for label, path in (("the 8 real DLRM ranks", dlrm), ("HTA's critical-path ranks", hta)):
        for cmd in ("summary", "kernels", "ranks", "collectives"):
            same(label, [cmd, "--format", "json", path])

# --local-files: each process reads only the files on its own disk, here a
# third of them each (TPROF_MPI_TEST_VISIBLE: a hash of the path says which
# process sees a file; a process given a file it does not see says so)
local = dict(TPROF_MPI_TEST_VISIBLE="1")
a = one(["summary", "--format", "json", gen])
b = spread(["summary", "--local-files", "--format", "json", gen], local)
check(a[0] == b[0] == 0 and a[1] == b[1], f"--local-files: the same summary ({b[0]}): {b[2][-600:]}")
check("--local-files: 200 traces on the disks of 3 processes" in b[2], f"--local-files: {b[2][-300:]}")
args = ["diff", "--format", "json", *ranks_of[:20], "--vs", *ranks_of[20:]]
a, b = one(args), spread(args[:1] + ["--local-files"] + args[1:], local)
check(a[0] == b[0] == 0 and a[1] == b[1], f"--local-files: the same diff ({b[0]}): {b[2][-600:]}")
missing = os.path.join(tmp, "nowhere", "rank7.json")
b = spread(["kernels", "--local-files", os.path.join(gen, "rank0.json"), missing], local)
check(b[0] == 3 and f"{missing}: no trace there on any process's disk" in b[2],
      f"--local-files: a rank file on no disk is an error naming it ({b[0]}): {b[2][-300:]}")

# a usage error and --help: said once, as trainprof says them (each process parses the same arguments)
for args in (["kernels", "--bogus", gen], ["kernels"], ["kernels", "--help"]):
    a, b = one(args), spread(args)
    usage = [x.count("usage: trainprof") for x in (a[2], b[2])]  # the help on stderr, which ours() leaves out
    check(a[0] == b[0] and a[1] == b[1] and ours(a[2]) == ours(b[2]) and usage[0] == usage[1],
          f"{args}: exit {a[0]} / {b[0]}, said once:\n{ours(a[2])}\n{ours(b[2])}\n{a[1][-200:]}\n{b[1][-200:]}")

# a corrupt rank in the middle: the same messages, the same exit code
bad = os.path.join(tmp, "bad")
os.makedirs(bad)
for r in (0, 1, 3, 4):
    shutil.copy(os.path.join(gen, f"rank{r}.json"), os.path.join(bad, f"rank{r}.json"))
with open(os.path.join(gen, "rank2.json"), "rb") as f:
    body = f.read()
half = body.index(b"\n", len(body) // 2) + 1
with open(os.path.join(bad, "rank2.json"), "wb") as f:  # an event spoilt halfway through
    f.write(body[:half] + b'{"ph": "X", "ts": ]' + body[half:])
a, b = one(["kernels", "--format", "json", bad]), spread(["kernels", "--format", "json", bad])
check(a[0] == b[0] == 3, f"a corrupt rank: exit {a[0]} alone, {b[0]} under MPI")
check(ours(a[2]) == ours(b[2]) and any("rank2.json" in ln for ln in ours(a[2])),
      f"a corrupt rank: the same messages:\n{ours(a[2])}\n{ours(b[2])}")
check(a[1] == b[1], "a corrupt rank: the same output of the others")
args = ["diff", "--format", "json", *[os.path.join(bad, f"rank{r}.json") for r in (0, 1, 2)], "--vs",
        os.path.join(bad, "rank3.json"), os.path.join(bad, "rank4.json")]
a, b = one(args), spread(args)
check(a[0] == b[0] == 3 and a[1] == b[1] and a[1] and ours(a[2]) == ours(b[2]),
      f"diff with a corrupt rank: exit {a[0]} / {b[0]}, the same messages:\n{ours(a[2])}\n{ours(b[2])}")

# merge: spilled runs on every process (a 1 MiB budget), the file identical; the peers' events did reach the root
for out in ("alone-spill.json", "spread-spill.json"):
    if os.path.exists(os.path.join(tmp, out)):
        os.remove(os.path.join(tmp, out))
a = one(["merge", "--mem-budget", "1M", "-o", os.path.join(tmp, "alone-spill.json"), gen])
b = spread(["merge", "--mem-budget", "1M", "-o", os.path.join(tmp, "spread-spill.json"), gen],
           {"TPROF_MPI_STATS": "1"})
with open(os.path.join(tmp, "alone-spill.json"), "rb") as fa, open(os.path.join(tmp, "spread-spill.json"), "rb") as fb:
    check(a[0] == b[0] == 0 and fa.read() == fb.read(), f"merge with spilled runs: the same file ({b[0]}): {b[2][-400:]}")
got = [int(x) for x in re.findall(r"merged (\d+) bytes of rewritten events from 2 other", b[2])]
check(got and got[0] > 10 ** 6, f"merge spread: the other processes' events reached the root: {got}")
# the root cannot write its output after the others streamed: the same error, nobody left waiting
a, b = one(["merge", "-o", os.path.join(tmp, "no-such-dir", "x.json"), gen]), \
    spread(["merge", "-o", os.path.join(tmp, "no-such-dir", "x.json"), gen])
check(a[0] == b[0] != 0 and ours(a[2]) == ours(b[2]), f"merge to a missing directory: {a[0]} {b[0]}\n{ours(a[2])}\n{ours(b[2])}")
# a cut rank among them: what was read is merged, the same warning and exit code
cut = os.path.join(tmp, "cut")
os.makedirs(cut, exist_ok=True)
for r in range(6):
    shutil.copy(os.path.join(gen, f"rank{r}.json"), os.path.join(cut, f"rank{r}.json"))
with open(os.path.join(gen, "rank4.json"), "rb") as f:
    body = f.read()
with open(os.path.join(cut, "rank4.json"), "wb") as f:
    f.write(body[:len(body) * 2 // 3])
(a, fa), (b, fb) = merged([cut])
check(a[0] == b[0] == 4 and a[1] == b[1] and ours(a[2]) == ours(b[2]) and fa == fb and fa,
      f"merge of a cut rank: exit {a[0]} {b[0]}, the same file ({len(fa)} vs {len(fb)} bytes)\n{ours(a[2])}\n{ours(b[2])}")

# merge with a corrupt rank: the same error and exit code, no output left behind
out = os.path.join(tmp, "bad-merge.json")
a, b = one(["merge", "-o", out, bad]), spread(["merge", "-o", out, bad])
check(a[0] == b[0] != 0 and ours(a[2]) == ours(b[2]) and not os.path.exists(out),
      f"merge of a corrupt rank: exit {a[0]} alone, {b[0]} under MPI:\n{ours(a[2])}\n{ours(b[2])}")

# a process killed mid-run: mpirun ends the job, non-zero, within seconds
pidfile = os.path.join(tmp, "pid")
e = dict(env, TPROF_MPI_TEST_STALL="1", TPROF_MPI_TEST_PIDFILE=pidfile)
p = subprocess.Popen(MPIRUN + ["-x", "TPROF_MPI_TEST_STALL", "-x", "TPROF_MPI_TEST_PIDFILE", MPI_TP, "kernels", gen],
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=e)
for _ in range(300):
    if os.path.exists(pidfile) and open(pidfile).read().strip():
        break
    time.sleep(0.1)
pid = int(open(pidfile).read()) if os.path.exists(pidfile) else 0
check(pid > 0, "the stalled process wrote its pid")
t0 = time.time()
if pid:
    os.kill(pid, signal.SIGKILL)
try:
    rc = p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
    rc = None
took = time.time() - t0
check(rc not in (None, 0) and took < 15, f"mpirun after a process was killed: exit {rc} in {took:.1f} s")
print(f"a killed process ended the job in {took:.1f} s (exit {rc})")

shutil.rmtree(tmp, ignore_errors=True)
finish("trainprof-mpi over 3 processes: the same output as trainprof on 200 generated and the real ranks, "
       "the same error for a corrupt rank, the job ended when a process dies")
