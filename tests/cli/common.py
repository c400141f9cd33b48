"""Shared helpers for trainprof's CLI tests (run by ctest, one script each).

Python's json module is the independent reference these tests compare with.
Tests that need ../shared/data report themselves skipped (exit 77) when it is
absent; TRAINPROF_TESTDATA overrides where it is looked for."""
import decimal
import gzip
import json
import os
import subprocess
import sys

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
