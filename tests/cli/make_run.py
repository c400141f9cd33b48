"""`make run`'s story (scripts/demo.sh, run against this test's build: the
directory of TRAINPROF, into a temporary DEMO_DIR): exit 0; every stage's tag
line (the MPI one when tiny_gpt_mpi and mpirun are there, none otherwise); no
empty "no GPU events" sections and no raw offsets for the trainer's frames;
the next-steps block, whose files exist and whose suggested commands run;
and at most LINE_BUDGET lines. Then the quiet build (scripts/quiet-build.sh,
what `make build` runs): nothing printed on success though its log has the
"Built target" lines, and the log's errors on failure."""
import os
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import SRC, TRAINPROF, check, finish, scratch  # noqa: E402

# 156 lines with the MPI stage today (the collectives line in both multi-rank summaries since issue 19, the report
# stage since issue 20): a little room, not a page more
LINE_BUDGET = 160

BUILD = os.path.dirname(os.path.abspath(TRAINPROF))
DEMO = os.path.join(scratch("tprof-make-run-"), "demo")
with_mpi = os.access(os.path.join(BUILD, "examples", "tiny_gpt_mpi"), os.X_OK) and shutil.which("mpirun") is not None

env = dict(os.environ)
if env.get("TPROF_SANITIZED"):
    # as tests/cli/tiny_gpt_mpi.py: OpenMPI's own leaks, matched with the slow unwinder
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "fast_unwind_on_malloc=0"]))
    env["LSAN_OPTIONS"] = ":".join(filter(None, [env.get("LSAN_OPTIONS"), "print_suppressions=0",
                                                 "suppressions=" + os.path.join(SRC, "tests/lsan-openmpi.supp")]))

p = subprocess.run([os.path.join(SRC, "scripts", "demo.sh"), BUILD, DEMO], capture_output=True, text=True,
                   env=env, timeout=850)
out = p.stdout + p.stderr
lines = out.splitlines()
check(p.returncode == 0, f"demo exit {p.returncode}: {out[-2000:]}")
check(len(lines) <= LINE_BUDGET, f"{len(lines)} lines, over the budget of {LINE_BUDGET}")
check(not any("Built target" in ln for ln in lines), "no build noise")
# an empty section reads "rank 0: no GPU events" or a bare "no GPU events" under its heading;
# summary's one line saying which sections it left out is what should be there instead
check(not any(re.search(r"(^|: )no GPU events$", ln.strip()) for ln in lines), "no empty 'no GPU events' sections")

tags = ["recorded: ", "generated: ", "merged: ", "report: "] + (["recorded over MPI: "] if with_mpi else [])
for tag in tags:
    check(any(ln.startswith(tag) for ln in lines), f"the stage tag '{tag.strip()}'")
if not with_mpi:
    check(not any(ln.startswith("recorded over MPI") for ln in lines), "no MPI stage without MPI")
    print("no tiny_gpt_mpi or mpirun: the MPI stage is left out")
recorded = next((ln for ln in lines if ln.startswith("recorded: ")), "")
check("CPU" in recorded and "no GPU" in recorded, f"the recorded stage says it is CPU only: {recorded}")
generated = next((ln for ln in lines if ln.startswith("generated: ")), "")
check("synthetic" in generated and "trainprof-gentrace" in generated and "not a real run" in generated,
      f"the generated stage says it is synthetic: {generated}")

libdw = " U dwfl_begin" in subprocess.run(["nm", os.path.join(BUILD, "examples", "tiny_gpt")],
                                           capture_output=True, text=True).stdout
if libdw:
    check(any(":train_step;" in ln or ":model_init;" in ln for ln in lines), "mem's call sites name the trainer's functions")
    check(not any("tiny_gpt+0x" in ln for ln in lines), "no raw offsets for the trainer's frames")

# the next-steps block: files written, Perfetto, 3-5 commands to try, last
if "next steps" in lines:
    tail = lines[lines.index("next steps"):]
    files = []
    for ln in tail[1:]:
        if ln.startswith("    ") and not ln.startswith("    " + TRAINPROF) and "try:" not in ln:
            files.append(ln.split()[0])
        if ln.startswith("  open "):
            break
    check(len(files) >= 5, f"the files written are listed: {files}")
    for f in files:
        check(os.path.isfile(f), f"a listed file exists: {f}")
    merged = os.path.join(DEMO, "merged.pt.trace.json.gz")
    check(f"  open https://ui.perfetto.dev and load {merged} (or the recorded trace)" in tail,
          "open the merged trace in Perfetto")
    check(os.path.isfile(merged), "the merged trace exists")
    report = os.path.join(DEMO, "report.html")
    check(f"  open {report} in a browser: the demo's ranks, memory and log on one page" in tail, "the report is named")
    check(os.path.isfile(report) and open(report, encoding="utf-8").read(15) == "<!DOCTYPE html>", "the report exists")
    tries = tail[tail.index("  try:") + 1:] if "  try:" in tail else []
    check(3 <= len(tries) <= 5, f"3 to 5 commands to try: {tries}")
    bin_dir = os.path.dirname(os.path.join(BUILD, "trainprof"))
    for t in tries:
        argv = shlex.split(t)
        check(argv and argv[0] == os.path.join(bin_dir, "trainprof"), f"a command of this build: {t}")
        q = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
        check(q.returncode == 0 and q.stdout.strip(), f"the suggested command runs: {t}: exit {q.returncode} {q.stderr}")
else:
    check(False, "a 'next steps' block")

# the quiet build: nothing printed, the log kept; a failure shows the log's errors
qb = os.path.join(SRC, "scripts", "quiet-build.sh")
p = subprocess.run([qb, BUILD, "--target", "tiny_gpt"], capture_output=True, text=True, timeout=600)
log = os.path.join(BUILD, "build.log")
check(p.returncode == 0 and p.stdout == "" and p.stderr == "", f"quiet build: exit {p.returncode}, {p.stdout}{p.stderr}")
check(os.path.isfile(log) and "Built target tiny_gpt" in open(log).read(), "its log has the lines it hid")
p = subprocess.run([qb, BUILD, "--target", "no_such_target_here"], capture_output=True, text=True, timeout=600)
check(p.returncode == 1 and "build failed" in p.stderr and "no_such_target_here" in p.stderr,
      f"a failed build shows why: exit {p.returncode}, {p.stderr[-500:]}")

finish(f"make run: {len(lines)} lines, stages {', '.join(t.strip() for t in tags)}, next steps")
