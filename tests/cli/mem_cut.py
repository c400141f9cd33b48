"""trainprof mem on memory snapshots cut short (issue 14, defect 2).

Every complete trace entry before the cut is kept and analysed, as Python's
own unpickler holds them (tests/tools/cut_snapshot.py: pickle._Unpickler
over the prefix, its partly built containers closed); the entry the cut fell
inside is left out; exit 4 with a warning that says how many were kept.

- snapshots generated here (tests/tools/gen_snapshot.py: one device, three
  with OOMs in protocol 2, two in protocol 5, the 2023 form, a bare list of
  segments), cut at many points: events, peak, live at the end and reserved
  equal Python's at every cut; one cut's values are also recorded here;
- the real snapshot of the issue (bcrafton_assignment2-systems, 6,486 events)
  at 95%, with the values Python gives recorded, and a sweep of cuts over
  every real snapshot (skipped, and said so, where ../shared is absent)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import SRC, TRAINPROF, check, finish, run, scratch, testdata  # noqa: E402

sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
import cut_snapshot  # noqa: E402

GEN = os.path.join(SRC, "tests", "tools", "gen_snapshot.py")
tmp = scratch("tprof-memcut-")
KEYS = ("events", "peak_active_bytes", "active_at_end_bytes", "reserved_at_end_bytes")


def python_cut(path, nbytes):
    with open(path, "rb") as f:
        return cut_snapshot.reference(f.read(nbytes))


def trainprof_cut(path, nbytes):
    cut = os.path.join(tmp, "cut.pickle")
    with open(path, "rb") as f, open(cut, "wb") as g:
        g.write(f.read(nbytes))
    rc, out, err = run([TRAINPROF, "mem", "--format", "json", cut])
    doc = json.loads(out) if rc in (0, 4) and out.strip() else None
    return rc, doc, err


def compare(label, path, nbytes):
    """trainprof against Python at one cut; returns trainprof's devices."""
    ref = python_cut(path, nbytes)
    rc, doc, err = trainprof_cut(path, nbytes)
    if rc == 3 and ref["complete_entries"] == 0 and not ref["devices"]:
        return {}  # cut before anything of a snapshot: an error, as Python has nothing either
    check(rc == 4, f"{label}: exit {rc} (expected 4): {err[-300:]}")
    if doc is None:
        return {}
    got = {str(d["device"]): d for d in doc[0]["devices"]}
    want = ref["devices"]
    if "viewer_error" in ref:
        return got
    check(sorted(got) == sorted(want), f"{label}: devices {sorted(got)} != Python's {sorted(want)}")
    for d, w in want.items():
        for k in KEYS:
            check(got.get(d, {}).get(k) == w[k], f"{label} device {d}: {k} {got.get(d, {}).get(k)} != Python's {w[k]}")
        if w["peak_alloc_index"] is not None:
            check(got.get(d, {}).get("peak_index") == w["peak_alloc_index"], f"{label} device {d}: peak index")
    kept = sum(d["events"] for d in got.values())
    check(kept == ref["complete_entries"], f"{label}: {kept} events, Python holds {ref['complete_entries']} complete entries")
    if ref["complete_entries"]:
        check(f"{ref['complete_entries']} complete trace entr" in err, f"{label}: the warning does not say how many "
              f"entries were kept: {err[-300:]!r}")
    return got


# --- generated snapshots (no shared data needed) --------------------------------
configs = [
    ("one_device", ["--seed", "11", "--events", "2000"]),
    ("three_oom_p2", ["--seed", "12", "--events", "1500", "--devices", "3", "--oom", "--protocol", "2"]),
    ("two_p5", ["--seed", "13", "--events", "1500", "--devices", "2", "--protocol", "5"]),
    ("history", ["--seed", "15", "--form", "history"]),
    ("list", ["--seed", "14", "--form", "list"]),
]
for name, args in configs:
    pk = os.path.join(tmp, name + ".pickle")
    subprocess.run([sys.executable, GEN, pk, os.path.join(tmp, name + ".truth.json"), *args], check=True)
    size = os.path.getsize(pk)
    for k in range(1, 16):
        compare(f"{name} cut at {k}/16", pk, size * k // 16)

# one cut recorded: the one-device snapshot at 95%, inside device_traces
# (before the fix: events 0 and the peak of the segment state, 1107007092)
pk = os.path.join(tmp, "one_device.pickle")
size = os.path.getsize(pk)
got = compare("one_device at 95%", pk, size * 95 // 100)
check(size == 160562, f"gen_snapshot.py wrote {size} bytes, not 160562: the recorded values below need renewing")
g = got.get("0", {})
check(g.get("events") == 1897 and g.get("peak_active_bytes") == 1535276983 and g.get("peak_index") == 1801,
      f"one_device at 95%: events {g.get('events')}, peak {g.get('peak_active_bytes')} at {g.get('peak_index')}; "
      "recorded from Python: 1897, 1535276983 at 1801")

# --- real snapshots ---------------------------------------------------------------
data = testdata()
if data is None:
    print("SKIP (partly): ../shared/data not found; generated snapshots only")
else:
    issue = os.path.join(data, "snapshots", "bcrafton_assignment2-systems", "memory_snapshot.pickle")
    size = os.path.getsize(issue)
    n = size * 95 // 100
    ref = python_cut(issue, n)
    # Python's unpickler at this cut (recorded): 6,000 entries in the list,
    # 53 more complete ones above their MARK, one cut in half
    check(ref["complete_entries"] == 6053 and ref["devices"]["0"]["peak_active_bytes"] == 3844514048,
          f"Python on the issue's cut: {ref['complete_entries']} entries, peak {ref['devices']['0']['peak_active_bytes']}")
    got = compare("issue's snapshot at 95%", issue, n).get("0", {})
    check(got.get("events") == 6053 and got.get("peak_active_bytes") == 3844514048 and got.get("peak_index") == 1843,
          f"issue's snapshot at 95%: events {got.get('events')} peak {got.get('peak_active_bytes')} (recorded: 6053, "
          "3844514048 at event 1843; the whole file: 6486, 3849232640)")
    print(f"  issue's snapshot at 95%: {got.get('events')} events, peak {got.get('peak_active_bytes')}")
    real = []
    for root, _, files in os.walk(os.path.join(data, "snapshots")):
        real += [os.path.join(root, f) for f in files if f.endswith((".pickle", ".pkl"))]
    for path in sorted(real):
        size = os.path.getsize(path)
        for k in (3, 11, 19):
            compare(f"{os.path.relpath(path, data)} cut at {k}/20", path, size * k // 20)

finish("mem cut")
