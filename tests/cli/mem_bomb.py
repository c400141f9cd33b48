"""trainprof mem's memory on compressed snapshots that expand enormously
(issue 14, defect 7). The decoder streams the decompressed pickle and keeps
only what it decodes (docs/PERFORMANCE.md, "mem: memory budget"), so:

- a snapshot whose one trace entry holds 1 GiB of zero bytes (BINBYTES8), a
  1 MiB .pickle.gz, is analysed (exit 0) in a few MiB;
- 1 GiB of zeros compressed (not a pickle) is refused at its first byte;
- a valid snapshot followed by 1 GiB of zeros reads to the end in a few MiB;
- values that are all kept (a run of None above a MARK; memo entries) stop
  at --max-memory with a clear error (exit 3) instead of taking the machine.

Peak RSS comes from getrusage(RUSAGE_CHILDREN) in a fresh helper process
that runs trainprof alone. Under sanitizers (shadow memory) only the exit
codes and messages are checked."""
import gzip
import json
import os
import pickle
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import TRAINPROF, check, finish, scratch  # noqa: E402

tmp = scratch("tprof-membomb-")
SANITIZED = bool(os.environ.get("TPROF_SANITIZED"))
MIB = 1 << 20
GIB = 1 << 30

HELPER = """
import json, resource, subprocess, sys
p = subprocess.run(sys.argv[1:], capture_output=True, timeout=600)
print(json.dumps({"rc": p.returncode, "out": p.stdout.decode("utf-8", "replace")[-4000:],
                  "err": p.stderr.decode("utf-8", "replace")[-2000:],
                  "rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def measured(*args):
    """Runs trainprof mem ARGS alone in a fresh process: (rc, stdout, stderr, peak RSS in KiB)."""
    p = subprocess.run([sys.executable, "-c", HELPER, TRAINPROF, "mem", *args], capture_output=True, check=True)
    r = json.loads(p.stdout)
    return r["rc"], r["out"], r["err"], r["rss_kib"]


def gz_file(name, parts):
    """A gzip file of PARTS: bytes, or (bytes, count) repeated as gzip members
    (one member of 1 MiB of zeros is about 1 KiB; readers join members)."""
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        for part in parts:
            blob, count = part if isinstance(part, tuple) else (part, 1)
            member = gzip.compress(blob, compresslevel=9)
            for _ in range(count):
                f.write(member)
    return path


def check_rss(label, kib, limit_mib):
    print(f"  {label}: peak RSS {kib / 1024:.1f} MiB")
    if not SANITIZED:
        check(kib <= limit_mib * 1024, f"{label}: peak RSS {kib / 1024:.1f} MiB, over {limit_mib} MiB")


zeros = bytes(MIB)

# 1. one trace entry whose user_metadata is 1 GiB of zero bytes
snap = {"segments": [], "device_traces": [[{"action": "alloc", "addr": 4096, "size": 5, "stream": 0, "frames": [],
                                            "user_metadata": b"MARKER"}]]}
raw = pickle.dumps(snap, protocol=4)
i = raw.index(b"C\x06MARKER")  # SHORT_BINBYTES of 6 bytes, replaced by BINBYTES8 of 1 GiB
path = gz_file("bytes_bomb.pickle.gz", [raw[:i] + b"\x8e" + struct.pack("<Q", GIB), (zeros, 1024), raw[i + 8:]])
size = os.path.getsize(path)
check(size < 2 * MIB, f"bytes bomb: {size} bytes compressed")
rc, out, err, kib = measured("--format", "json", path)
check(rc == 0, f"bytes bomb: exit {rc} (expected 0): {err}")
if rc == 0:
    doc = json.loads(out)[0]
    check(doc["bytes"] == len(raw) - 8 + 9 + GIB, f"bytes bomb: {doc['bytes']} decompressed bytes")
    check(doc["devices"][0]["events"] == 1 and doc["devices"][0]["peak_active_bytes"] == 5, f"bytes bomb: {doc}")
check_rss(f"bytes bomb ({size >> 10} KiB .gz, 1 GiB inside)", kib, 64)

# 2. 1 GiB of zeros, compressed: not a pickle, said at byte 0
path = gz_file("zeros.pickle.gz", [(zeros, 1024)])
rc, out, err, kib = measured(path)
check(rc == 3 and "byte 0: not a pickle opcode: 0x00" in err and path in err, f"zeros: exit {rc}: {err!r}")
check_rss("1 GiB of zeros", kib, 64)

# 3. a valid snapshot, then 1 GiB of zeros after its STOP (read, counted, ignored as Python would)
small = pickle.dumps({"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 7, "frames": []}]]},
                     protocol=4)
path = gz_file("trailing.pickle.gz", [small, (zeros, 1024)])
rc, out, err, kib = measured("--format", "json", path)
check(rc == 0 and json.loads(out)[0]["devices"][0]["peak_active_bytes"] == 7, f"trailing zeros: exit {rc}: {err}")
check_rss("snapshot + 1 GiB of zeros after STOP", kib, 64)

# 4. values that are kept: 256 Mi None above a MARK (1 GiB of value stack), and
#    64 Mi memo entries (256 MiB of memo): stopped by --max-memory
for name, parts in (("nones", [b"\x80\x04(", (b"N" * MIB, 256)]),
                    ("memo", [b"\x80\x04N", (b"\x94" * MIB, 64)])):
    path = gz_file(name + ".pickle.gz", parts)
    rc, out, err, kib = measured("--max-memory", "64M", path)
    check(rc == 3, f"{name} with --max-memory 64M: exit {rc} (expected 3): {err[:300]}")
    check("memory limit of 64 MiB" in err and "--max-memory" in err and path in err,
          f"{name}: the message does not name the limit: {err[:300]!r}")
    check_rss(f"{name} bomb, --max-memory 64M", kib, 64 + 64)

# the option's forms
for bad in ("", "x", "12Q", "-1"):
    rc, _, err, _ = measured("--max-memory", bad, path)
    check(rc == 2 and "--max-memory" in err, f"--max-memory {bad!r}: exit {rc}: {err[:300]!r}")
ok = os.path.join(tmp, "ok.pickle")
with open(ok, "wb") as f:
    f.write(small)
for good in ("0", "1G", "512m", "1048576", "2GB"):
    rc, _, err, _ = measured("--max-memory", good, ok)
    check(rc == 0, f"--max-memory {good}: exit {rc}: {err[:300]}")
rc, _, err, _ = measured("--max-memory", "1K", ok)
check(rc == 3 and "memory limit of 1 KiB" in err, f"--max-memory 1K on a small snapshot: exit {rc}: {err[:300]!r}")

finish("mem bomb")
