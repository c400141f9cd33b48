"""Progress on stderr (issue 16): only on a terminal (TPROF_PROGRESS=always
draws it here, where stderr is a pipe); a share against the known size of
files, the bytes read and the pace on stdin (never "0% 83.6 MiB / 0 B");
merge shows both of its reads. Runs on generated data only."""
import os
import re
import subprocess

from common import GENTRACE, TRAINPROF, check, finish, run, scratch

tmp = scratch("tprof_progress_")
trace = os.path.join(tmp, "t.json")
rc, _, err = run([GENTRACE, "--size", "4M", "--seed", "5", "--rank", "0", "--world", "1", "-o", trace])
assert rc == 0, err
size = os.path.getsize(trace)
data = open(trace, "rb").read()


def run_env(args, env_progress, stdin=None):
    env = dict(os.environ)
    env.pop("TPROF_PROGRESS", None)
    if env_progress:
        env["TPROF_PROGRESS"] = env_progress
    p = subprocess.run(args, input=stdin, capture_output=True, timeout=300, env=env)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def bars(err):
    """The progress lines drawn (each begins with a carriage return), without padding."""
    return [l.strip() for l in err.split("\r") if l.strip() and not l.startswith("trainprof:")]


# a file: the share, its size, the file count
rc, out, err = run_env([TRAINPROF, "kernels", "--threads", "1", trace], "always")
b = bars(err)
check(rc == 0 and b and all(re.match(r"\[[#.]{30}\] +\d+% [0-9.]+ (B|KiB|MiB) / [0-9.]+ MiB", l) for l in b)
      and all(l.endswith("(1 file)") for l in b), f"a file's progress: {b!r}")
check(err.endswith("\r") or "\r" + " " * 72 + "\r" in err, "the progress line is cleared at the end")
# stdin: the size is not known, so the bytes read and no share
rc, out, err = run_env([TRAINPROF, "kernels", "--threads", "1", "-"], "always", stdin=data)
b = bars(err)
check(rc == 0 and b and all(re.match(r"[0-9.]+ (B|KiB|MiB) read(, [0-9.]+ (B|KiB|MiB)/s)? \(1 file\)$", l) for l in b),
      f"stdin's progress has no share: {b!r}")
check("%" not in err and "/ 0 B" not in err, f"stdin: no percentage of an unknown size: {err!r}")
# merge: both reads, named
rc, out, err = run_env([TRAINPROF, "merge", "-o", os.path.join(tmp, "m.json"), trace], "always")
b = bars(err)
check(rc == 0 and any(l.endswith("(1 file, reading)") for l in b) and any(l.endswith("(1 file, rewriting)") for l in b),
      f"merge's progress shows both reads: {b!r}")
check("trainprof: wrote" in err and re.search(r"\rtrainprof: wrote|\ntrainprof: wrote|^trainprof: wrote", err),
      f"the wrote line starts a line of its own: {err!r}")
# several files: one line for all
rc, out, err = run_env([TRAINPROF, "temporal", "--threads", "1", trace, trace], "always")
b = bars(err)
check(rc == 0 and b and all(l.endswith("(2 files)") for l in b), f"two files: {b!r}")
# a snapshot (mem) and a training log: their reads show progress too
snap = os.path.join(tmp, "s.pickle")
subprocess.run(["python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "gen_snapshot.py"),
                "--events", "2000", snap, os.path.join(tmp, "s.truth")], check=True, capture_output=True)
log = os.path.join(tmp, "train.log")
with open(log, "w") as f:
    f.writelines(f"step {i}: loss={2.0 - i / 5000:.4f} lr=3e-4\n" for i in range(3000))
for args, path in ((["mem"], snap), (["log"], log)):
    rc, out, err = run_env([TRAINPROF, *args, path], "always")
    b = bars(err)
    check(rc == 0 and b and all(l.endswith("(1 file)") for l in b)
          and any(re.search(r" 100% ", l) or l.startswith("[#") for l in b), f"{args[0]}'s progress: {b!r}")
    rc, out, err = run_env([TRAINPROF, *args, path], None)
    check(rc == 0 and "\r" not in err, f"{args[0]} draws nothing off a terminal: {err!r}")
# not a terminal (the tests' stderr), or =never: nothing drawn
for mode in (None, "never"):
    for args in (["kernels", trace], ["merge", "-o", os.path.join(tmp, "m2.json"), trace]):
        rc, out, err = run_env([TRAINPROF] + args, mode)
        check(rc == 0 and "\r" not in err and not bars(err), f"{args[0]} with TPROF_PROGRESS={mode}: {err!r}")

finish("progress: shares of known sizes, bytes and pace on stdin, merge's two reads, mem and log, terminals only")
