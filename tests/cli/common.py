"""Shared helpers for trainprof's CLI tests (run by ctest, one script each).

Python's json module is the independent reference these tests compare with.
Tests that need ../shared/data report themselves skipped (exit 77) when it is
absent; TRAINPROF_TESTDATA overrides where it is looked for."""
import atexit
import decimal
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

TRAINPROF = os.environ.get("TRAINPROF", "build/trainprof")
JSON_DUMP = os.environ.get("JSON_DUMP", "build/tests/json_dump")
GENTRACE = os.environ.get("GENTRACE", "build/bench/trainprof-gentrace")
SRC = os.environ.get("TPROF_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SKIP = 77

failures = []


def testdata():
    """The shared data folder, or None."""
    d = os.environ.get("TRAINPROF_TESTDATA") or os.path.join(SRC, "..", "shared", "data")
    return os.path.abspath(d) if os.path.isdir(os.path.join(d, "traces")) else None


def need_testdata():
    d = testdata()
    if d is None:
        print("SKIP: ../shared/data not found (set TRAINPROF_TESTDATA)")
        sys.exit(SKIP)
    return d


def run(args, stdin=None, timeout=300):
    p = subprocess.run(args, input=stdin, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def finish(passed_label):
    if failures:
        print(f"{len(failures)} failed")
        sys.exit(1)
    print("OK:", passed_label)
    sys.exit(0)


def load_exact(path):
    """A trace loaded with exact decimals (no float rounding)."""
    op = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with op(path, "rb") as f:
        return json.load(f, parse_float=decimal.Decimal)


def us_to_ns(v):
    """Microseconds (int, Decimal or numeric string) to integer ns, rounded half away from zero."""
    d = decimal.Decimal(str(v)) * 1000
    return int(d.to_integral_value(rounding=decimal.ROUND_HALF_UP))


GPU_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset", "cuda_sync"}


def gpu_events(doc):
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = []
    for e in ev:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        gpu = e.get("cat") in GPU_CATS or ("cat" not in e and "Task Type" in (e.get("args") or {}))
        if gpu and "ts" in e and "dur" in e:
            out.append(e)
    return out


RUNTIME_CATS = {"cuda_runtime", "cuda_driver", "Runtime", "mtia_runtime"}
SYNC_NAMES = {"Event Sync", "Context Sync", "Stream Sync", "Stream Wait Event", "Notify_Wait"}


def gpu_class(e):
    """docs/METRICS.md's kernel classes, restated independently."""
    name, cat = e.get("name", ""), e.get("cat", "")
    if cat in ("gpu_memcpy", "gpu_memset", "Memcpy", "Memset") or name.startswith(("Memcpy ", "Memset ")):
        return "memory"
    if cat == "cuda_sync" or name in SYNC_NAMES:
        return "other"
    if any(k in name for k in ("nccl", "NCCL", "rccl", "RCCL", "hccl", "HCCL")) or name.startswith("hcom_"):
        return "communication"
    return "compute"


def dur_ns(e):
    d = us_to_ns(e["dur"])
    return 0 if d < 0 or d > 86400 * 10**9 else d


def union(iv):
    iv = sorted(iv)
    total, cs, ce = 0, None, None
    for s, e in iv:
        if cs is None or s > ce:
            if cs is not None:
                total += ce - cs
            cs, ce = s, e
        else:
            ce = max(ce, e)
    return total + (ce - cs if cs is not None else 0)


def steps_of(events):
    out = []
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#") \
                and e.get("cat") not in GPU_CATS | RUNTIME_CATS | {"gpu_user_annotation"} and "ts" in e:
            out.append((us_to_ns(e["ts"]), dur_ns(e) if "dur" in e else 0, e["name"]))
    return sorted(out)


def launch_times(events):
    m = {}
    for e in events:
        if isinstance(e, dict) and e.get("cat") in RUNTIME_CATS and "correlation" in (e.get("args") or {}):
            m[e["args"]["correlation"]] = us_to_ns(e["ts"])
    return m


def merge(iv):
    """Sorted, merged (disjoint) intervals."""
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def overlap(a, b):
    """Length of the intersection of two merged interval lists."""
    tot, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        tot += max(0, e - s)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tot


def scratch(prefix):
    """A temporary folder, removed when the test ends."""
    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, d, True)
    return d


COLLECTIVES = ["ReduceScatter", "AllReduce", "AllGather", "AllToAll", "SendRecv", "Broadcast", "Reduce", "Send", "Recv"]


def is_receive(name):
    """docs/METRICS.md's collective of a communication kernel is Recv (HCCL's hcom_receive_, NCCL's Recv)."""
    if name.startswith("hcom_"):
        return name[5:].lower().startswith(("receive", "recv"))
    k = name.find("Kernel_")
    if k >= 0:
        for c in COLLECTIVES:
            if name.startswith(c, k + 7):
                return c == "Recv"
    return next((c for c in COLLECTIVES if c in name), None) == "Recv"


def device_split(tasks, ts, dur):
    """A step window's device time as Ascend's step_trace_time.csv splits it (docs/METRICS.md, steps),
    restated: TASKS are (start, end, class, name) of every GPU event."""
    t0, t1 = ts, ts + dur

    def clipped(sel):
        return [[max(s, t0), min(e, t1)] for s, e in merge([(s, e) for s, e, c, n in tasks if sel(c, n)])
                if s < t1 and e > t0]
    comp = clipped(lambda c, n: c == "compute")
    comm = clipped(lambda c, n: c == "communication")
    recv = clipped(lambda c, n: c == "communication" and is_receive(n))
    busy = clipped(lambda c, n: c in ("compute", "communication"))
    length = lambda l: sum(e - s for s, e in l)
    computing, communication, overlapped = length(comp), length(comm), overlap(comp, comm)
    bubble = length(recv)
    preparing = busy[0][0] - t0 if busy else 0
    after = dur - preparing
    cno = communication - overlapped
    return dict(computing_ns=computing, comm_not_overlapped_ns=cno, overlapped_ns=overlapped,
                communication_ns=communication, free_ns=after - length(busy), stage_ns=after - bubble,
                bubble_ns=bubble, comm_not_overlapped_exclude_receive_ns=cno - (bubble - overlap(recv, comp)),
                preparing_ns=preparing)
