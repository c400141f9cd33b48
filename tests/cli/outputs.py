"""Outputs that cannot be written, and writes that are interrupted.

- stdout on /dev/full: every command says so and exits 5, never 0;
- a full disk (simulated with RLIMIT_FSIZE, so no mount is needed): no
  partial file under the final name, and the message names the file and the
  reason;
- SIGINT / SIGTERM during merge's write: the temporary file is removed and
  the process dies of the signal;
- a temporary file a killed run left (its pid gone, this host) is removed by
  the next run, with a note; one of a live process or another host is kept;
- every file written is named on stderr (`trainprof: wrote FILE (SIZE)`)
  once it is in place.
Runs on generated data only."""
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import GENTRACE, TRAINPROF, check, finish, run, scratch  # noqa: E402

tmp = scratch("tprof-outputs-")
trace = os.path.join(tmp, "t.pt.trace.json")
rc, _, se = run([GENTRACE, "--size", "2M", "--rank", "0", "--world", "2", "--seed", "3", "-o", trace])
assert rc == 0, se

log = os.path.join(tmp, "train.log")
with open(log, "w") as f:
    for s in range(1, 4001):
        f.write('{"step": %d, "loss": %.4f, "lr": 3e-4, "mfu": 0.41, "tokens_per_second": 123456}\n' % (s, 3 - s / 4000))


def to_dev_full(args):
    with open("/dev/full", "w") as full:
        p = subprocess.run(args, stdout=full, stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stderr.decode("utf-8", "replace")


# 5: stdout on a full device
for cmd in (["kernels", trace], ["summary", trace], ["info", trace], ["steps", trace], ["temporal", trace],
            ["log", log], ["log", "--series", "--format", "csv", log], ["--help"], ["--version"]):
    rc, se = to_dev_full([TRAINPROF, *cmd])
    check(rc == 5, f"{' '.join(cmd[:3])} > /dev/full exits 5 (got {rc})")
    check("standard output" in se and "ENOSPC" in se, f"{cmd[0]} > /dev/full says why: {se.strip()[-200:]}")


def limited(limit):
    """A child's file-size limit: writes past it fail with EFBIG, as on a full disk."""
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


def run_limited(args, limit):
    p = subprocess.run(args, capture_output=True, timeout=300, preexec_fn=limited(limit))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def leftovers(d, stem):
    return [f for f in os.listdir(d) if f.startswith(stem) and ".tmp." in f]


# '-' twice is a usage error, said once, for a command that prints through results and one that does not
for cmd in ("temporal", "kernels"):
    rc, out, se = run([TRAINPROF, cmd, "-", "-"], stdin=b"")
    check(rc == 2 and se.count("error:") == 1 and "only once" in se and out == "",
          f"{cmd} - -: one usage error ({rc}: {se.strip()})")

# 4: log --svg on a full disk leaves nothing under the final name, says which file and why
svg = os.path.join(tmp, "plot.svg")
rc, _, se = run_limited([TRAINPROF, "log", "--svg", svg, log], 4096)
check(rc == 5, f"log --svg on a full disk exits 5 (got {rc}: {se.strip()[-200:]})")
check(not os.path.exists(svg), "log --svg on a full disk leaves no partial SVG")
check(svg in se and "EFBIG" in se, f"log --svg names the file and the reason: {se.strip()[-200:]}")
check(not leftovers(tmp, "plot.svg"), "log --svg leaves no temporary file")
rc, _, se = run([TRAINPROF, "log", "--svg", svg, log])
check(rc == 0 and open(svg).read().rstrip().endswith("</svg>"), f"log --svg writes the whole SVG ({rc} {se[-200:]})")

# merge to a full disk: exit 5, the output path and the reason
out = os.path.join(tmp, "merged.json")
rc, _, se = run_limited([TRAINPROF, "merge", trace, "-o", out], 65536)
check(rc == 5, f"merge on a full disk exits 5 (got {rc})")
check(out in se and "EFBIG" in se, f"merge on a full disk names the file and the reason: {se.strip()[-200:]}")
check(not os.path.exists(out) and not leftovers(tmp, "merged.json"), "merge on a full disk leaves nothing")

# mem --timeline on a full disk: exit 5, nothing left under either name
snap = os.path.join(tmp, "snap.pickle")
subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                "gen_snapshot.py"), snap, snap + ".truth.json", "--events", "200"], check=True, capture_output=True)
prefix = os.path.join(tmp, "timeline")
rc, _, se = run_limited([TRAINPROF, "mem", "--timeline", prefix, snap], 100)
check(rc == 5 and "EFBIG" in se and prefix in se, f"mem --timeline on a full disk exits 5 with the reason ({rc}: "
      f"{se.strip()[-200:]})")
check(not [f for f in os.listdir(tmp) if f.startswith("timeline")], "mem --timeline leaves no partial file")

# every file written is named on stderr once it is in place, with its size; a failed write names none
def wrote(se):
    return [l for l in se.splitlines() if l.startswith("trainprof: wrote ")]


def said(se, path):
    """The one wrote line for PATH, with a size in trainprof's units."""
    return len([l for l in wrote(se) if re.fullmatch(re.escape(f"trainprof: wrote {path} (") + r"[0-9.]+ (B|KiB|MiB)\)", l)]) == 1


rc, _, se = run([TRAINPROF, "log", "--svg", svg, log])
check(rc == 0 and said(se, svg) and len(wrote(se)) == 1, f"log --svg says it wrote the file: {wrote(se)!r}")
out = os.path.join(tmp, "merged.json.gz")
rc, stdout, se = run([TRAINPROF, "merge", trace, "-o", out])
check(rc == 0 and said(se, out) and len(wrote(se)) == 1, f"merge -o says it wrote the file: {wrote(se)!r}")
check("trainprof: wrote" not in stdout, "the wrote line is on stderr, not in the report")
rc, _, se = run([TRAINPROF, "mem", "--timeline", prefix, snap])
check(rc == 0 and len(wrote(se)) == 2 and said(se, prefix + ".csv") and said(se, prefix + ".svg"),
      f"mem --timeline names both files: {wrote(se)!r}")
rc, _, se = run([TRAINPROF, "mem", "--format", "json", "--timeline", prefix, snap])
check(rc == 0 and len(wrote(se)) == 2 and said(se, prefix + ".json") and said(se, prefix + ".svg"),
      f"mem --timeline (json) names both files: {wrote(se)!r}")
rc, _, se = run_limited([TRAINPROF, "log", "--svg", svg + "2", log], 4096)
check(rc == 5 and not wrote(se), f"a failed write is not said written: {se.strip()[-200:]}")
rc, _, se = run([TRAINPROF, "kernels", trace])
check(not wrote(se), "nothing written, nothing said")

# 6: a signal during the write removes the temporary file
big = os.path.join(tmp, "big.pt.trace.json")
rc, _, se = run([GENTRACE, "--size", "48M", "--rank", "0", "--world", "1", "--seed", "4", "-o", big])
assert rc == 0, se
for sig in (signal.SIGINT, signal.SIGTERM):
    out = os.path.join(tmp, f"sig{int(sig)}.json.gz")
    stem = os.path.basename(out)
    p = subprocess.Popen([TRAINPROF, "merge", "--threads", "1", big, "-o", out], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    seen = False
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None:
        if leftovers(tmp, stem):
            p.send_signal(signal.SIGSTOP)  # hold it inside the write phase
            seen = True
            break
        time.sleep(0.001)
    if not seen:
        p.wait()
        check(False, f"merge's temporary file was never seen before it ended ({p.returncode})")
        continue
    p.send_signal(sig)
    p.send_signal(signal.SIGCONT)
    p.wait(timeout=60)
    check(p.returncode == -sig, f"merge dies of signal {int(sig)} (got {p.returncode})")
    check(not leftovers(tmp, stem), f"signal {int(sig)} during merge's write leaves no temporary file: "
          f"{leftovers(tmp, stem)}")
    check(not os.path.exists(out), f"signal {int(sig)} during merge's write leaves no output")

# SIGKILL cannot be caught: the next run removes what it left, and says so
host = socket.gethostname().split(".")[0]
host = "".join(c if c.isalnum() or c == "-" else "_" for c in host)[:63]
dead = subprocess.Popen(["true"])
dead.wait()
out = os.path.join(tmp, "killed.json")
stale = f"{out}.tmp.{host}.{dead.pid}.AbC123"
live = f"{out}.tmp.{host}.{os.getpid()}.XyZ789"  # this test's own pid: alive
other = f"{out}.tmp.otherhost.{dead.pid}.QwE456"  # another machine's, on a shared file system
unrelated = os.path.join(tmp, f"killed.jsonx.tmp.{host}.{dead.pid}.AbC123")
for f in (stale, live, other, unrelated):
    open(f, "w").write("partial")
rc, _, se = run([TRAINPROF, "merge", trace, "-o", out])
check(rc == 0, f"merge after a killed run: {rc} {se[-300:]}")
check(not os.path.exists(stale), "the stale temporary file of a gone process is removed")
check("note:" in se and os.path.basename(stale) in se, f"its removal is said: {se.strip()[-300:]}")
check(os.path.exists(live), "a live process's temporary file is kept")
check(os.path.exists(other), "another host's temporary file is kept")
check(os.path.exists(unrelated), "another output's temporary file is kept")

finish("outputs: /dev/full, full disk, signals during writes, stale temporary files")
