"""trainprof mem on Ascend's memory view: torch_npu's memory_record.csv and
the operator_memory.csv beside it, checked against a reading with Python's
csv module.

All data here is MADE (no torch_npu memory tables are public): the two
tables with torch_npu's headers (its _memory_view_parser.py: HEADERS_RECORD
and HEADERS_OPERATOR; MB = 2^20 bytes, KB = 2^10, timestamps in us with the
tab torch_npu appends), for components PTA, GE, PTA+GE and APP, then cut,
given alone, or in a directory; and the same rows in torch_npu's database
layout (MEMORY_RECORD, OP_MEMORY) give the same result."""
import csv
import decimal
import io
import json
import os
import sqlite3

from common import TRAINPROF, check, finish, run, scratch

tmp = scratch("tprof-ascend-mem-")
d = os.path.join(tmp, "rank0_ascend_pt", "ASCEND_PROFILER_OUTPUT")
os.makedirs(d)

RECORD = ["Component", "Timestamp(us)", "Total Allocated(MB)", "Total Reserved(MB)", "Total Active(MB)",
          "Stream Ptr", "Device Type"]
OPERATOR = ["Name", "Size(KB)", "Allocation Time(us)", "Release Time(us)", "Active Release Time(us)", "Duration(us)",
            "Active Duration(us)", "Allocation Total Allocated(MB)", "Allocation Total Reserved(MB)",
            "Allocation Total Active(MB)", "Release Total Allocated(MB)", "Release Total Reserved(MB)",
            "Release Total Active(MB)", "Stream Ptr", "Device Type"]
T0 = 1736413971558000

# allocations: (name, KB, start offset us, release offset us or None)
allocs = [("aten::empty_strided", 524288.0, 10, 900), ("aten::mm", 262144.0, 20, 400), ("aten::mm", 131072.0, 30, None),
          ("aten::add", 1024.5, 40, 45), ("aten::softmax", 65536.0, 50, 600), ("aten::mm", 262144.0, 450, 800),
          ("cann::HcclAllreduce", 4096.0, 55, 700)]
events = sorted([(s, +kb) for _, kb, s, _ in allocs] + [(e, -kb) for _, kb, _, e in allocs if e is not None])
rec_rows, total = [], 0.0
for t, kb in events:
    total += kb
    mb = total / 1024
    rec_rows.append(["PTA", f"{T0 + t}.125\t", f"{mb:.6f}", f"{mb + 512:.6f}", f"{mb:.6f}", "281473", "NPU:0"])
    rec_rows.append(["APP", f"{T0 + t}.125\t", f"{mb + 1000:.6f}", f"{mb + 2048:.6f}", "", "", "NPU:0"])
rec_rows.append(["GE", f"{T0 + 5}.0\t", "300.5", "1024", "300.5", "0", "NPU:0"])
rec_rows.append(["PTA+GE", f"{T0 + 60}.0\t", "1600", "2400", "1600", "0", "NPU:0"])
with open(os.path.join(d, "memory_record.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(RECORD)
    w.writerows(rec_rows)
with open(os.path.join(d, "operator_memory.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(OPERATOR)
    for name, kb, s, e in allocs:
        w.writerow([name, kb, f"{T0 + s}.0\t", f"{T0 + e}.0\t" if e is not None else "N/A", "", "", "", "", "", "",
                    "", "", "", "281473", "NPU:0"])


def model():
    """Per (component, device): samples, peak allocated bytes and its time (ns), peak reserved, final; the ops
    live at PTA's peak."""
    rows = list(csv.DictReader(io.StringIO(open(os.path.join(d, "memory_record.csv")).read())))
    comps = {}
    for r in rows:
        k = (r["Component"], r["Device Type"])
        ts = int(decimal.Decimal(r["Timestamp(us)"].strip()) * 1000)  # exact: floats lose the ns
        a, res = round(float(r["Total Allocated(MB)"]) * 2 ** 20), round(float(r["Total Reserved(MB)"]) * 2 ** 20)
        c = comps.setdefault(k, {"samples": 0, "alloc": -1, "ts": 0, "reserved": -1, "final": 0})
        c["samples"] += 1
        if a > c["alloc"]:
            c["alloc"], c["ts"] = a, ts
        c["reserved"] = max(c["reserved"], res)
        c["final"] = a
    at = comps[("PTA", "NPU:0")]["ts"]
    live = {}
    for r in csv.DictReader(io.StringIO(open(os.path.join(d, "operator_memory.csv")).read())):
        made = int(decimal.Decimal(r["Allocation Time(us)"].strip()) * 1000)
        rel = r["Release Time(us)"].strip()
        freed = None if rel == "N/A" else int(decimal.Decimal(rel) * 1000)
        if made <= at and (freed is None or freed > at):
            n, b = live.get(r["Name"], (0, 0))
            live[r["Name"]] = (n + 1, b + round(float(r["Size(KB)"]) * 1024))
    return comps, at, live


comps, at, live = model()
rc, out, err = run([TRAINPROF, "mem", "--format", "json", os.path.join(d, "memory_record.csv")])
check(rc == 0, f"mem on memory_record.csv: exit {rc}: {err}")
if rc == 0:
    doc = json.loads(out)[0]
    got = {(c["component"], c["device"]): c for c in doc["components"]}
    check(set(got) == set(comps), f"components {sorted(got)} vs {sorted(comps)}")
    for k, c in comps.items():
        g = got.get(k, {})
        check((g.get("samples"), g.get("peak_allocated_bytes"), g.get("peak_allocated_ts_ns"),
               g.get("peak_reserved_bytes"), g.get("final_allocated_bytes")) ==
              (c["samples"], c["alloc"], c["ts"], c["reserved"], c["final"]), f"{k}: {g} vs {c}")
    check(doc["peak_component"] == "PTA" and doc["peak_ts_ns"] == at, f"the peak is PTA's: {doc}")
    ops = {o["name"]: (o["allocations"], o["bytes"]) for o in doc["peak_ops"]}
    check(ops == live, f"the ops live at the peak: {ops} vs {live}")
    check(doc["live_bytes"] == sum(b for _, b in live.values()) == comps[("PTA", "NPU:0")]["alloc"],
          f"the live allocations add up to the PTA peak: {doc['live_bytes']}")
    check([o["name"] for o in doc["peak_ops"]] == sorted(live, key=lambda n: (-live[n][1], n)), "largest first")
rc, out, err = run([TRAINPROF, "mem", os.path.join(tmp, "rank0_ascend_pt")])
check(rc == 0 and "PTA" in out and "aten::empty_strided" in out and "operator_memory.csv live" in out,
      f"mem on the rank directory (text): {rc} {out} {err}")
check("1 Ascend memory table" in err, f"the directory note counts the table: {err}")
rc, out, err = run([TRAINPROF, "mem", "--format", "csv", os.path.join(d, "memory_record.csv")])
check(rc == 0 and f",0,PTA.peak_allocated_bytes,,{comps[('PTA', 'NPU:0')]['alloc']}" in out and
      ",0,peak_op_bytes,aten::mm," in out, f"mem CSV: the long rows: {out}")

# alone (no operator table beside it): the peaks, and a note that the ops are unknown
alone = os.path.join(tmp, "alone")
os.makedirs(alone)
open(os.path.join(alone, "memory_record.csv"), "w").write(open(os.path.join(d, "memory_record.csv")).read())
rc, out, err = run([TRAINPROF, "mem", os.path.join(alone, "memory_record.csv")])
check(rc == 0 and "no operator_memory.csv beside it" in out, f"alone: {rc} {out}")

# cut in its last row: the rows before it, exit 4
text = open(os.path.join(d, "memory_record.csv")).read()
cut = os.path.join(alone, "cut.csv")
open(cut, "w").write(text[: text.rindex("PTA+GE") + 12])
rc, out, err = run([TRAINPROF, "mem", "--format", "json", cut])
check(rc == 4 and "cut inside its last row" in err and json.loads(out)[0]["components"],
      f"a cut table: exit 4, what was read: {rc} {err}")

# the database form (MADE from the same rows, in torch_npu's db layout: MEMORY_RECORD and OP_MEMORY, bytes
# and ns, names in STRING_IDS): the same components, peak and ops as the CSV tables
def us_ns(text):
    return int(decimal.Decimal(text.strip()) * 1000)


dbdir = os.path.join(tmp, "rank0_db_ascend_pt", "ASCEND_PROFILER_OUTPUT")
os.makedirs(dbdir)
db = os.path.join(dbdir, "ascend_pytorch_profiler_0.db")
c = sqlite3.connect(db)
c.executescript("""CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
CREATE TABLE MEMORY_RECORD (component INTEGER, timestamp INTEGER, totalAllocated INTEGER, totalReserved INTEGER,
  totalActive INTEGER, streamPtr INTEGER, deviceId INTEGER);
CREATE TABLE OP_MEMORY (name INTEGER, size INTEGER, allocationTime INTEGER, releaseTime INTEGER,
  activeReleaseTime INTEGER, duration INTEGER, activeDuration INTEGER, allocationTotalAllocated INTEGER,
  allocationTotalReserved INTEGER, allocationTotalActive INTEGER, releaseTotalAllocated INTEGER,
  releaseTotalReserved INTEGER, releaseTotalActive INTEGER, streamPtr INTEGER, deviceId INTEGER);""")
ids = {}
def sid(v):
    if v not in ids:
        ids[v] = len(ids) + 1
        c.execute("INSERT INTO STRING_IDS VALUES (?, ?)", (ids[v], v))
    return ids[v]
for r in csv.DictReader(io.StringIO(open(os.path.join(d, "memory_record.csv")).read())):
    mb = lambda k: round(float(r[k]) * 2 ** 20) if r[k].strip() else None
    c.execute("INSERT INTO MEMORY_RECORD VALUES (?,?,?,?,?,?,?)",
              (sid(r["Component"]), us_ns(r["Timestamp(us)"]), mb("Total Allocated(MB)"), mb("Total Reserved(MB)"),
               mb("Total Active(MB)"), 281473, int(r["Device Type"].split(":")[1])))
for name, kb, s, e in allocs:
    c.execute("INSERT INTO OP_MEMORY (name, size, allocationTime, releaseTime, deviceId) VALUES (?,?,?,?,?)",
              (sid(name), round(kb * 1024), (T0 + s) * 1000, (T0 + e) * 1000 if e is not None else None, 0))
c.commit()
c.close()
rc, out, err = run([TRAINPROF, "mem", "--format", "json", os.path.dirname(dbdir)])
check(rc == 0, f"mem on a database-only rank directory: exit {rc}: {err}")
if rc == 0:
    got = json.loads(out)[0]
    rc2, out2, _ = run([TRAINPROF, "mem", "--format", "json", os.path.join(d, "memory_record.csv")])
    want = json.loads(out2)[0]
    for k in ("components", "peak_ops", "peak_component", "peak_device", "peak_bytes", "peak_ts_ns", "live_bytes",
              "live_allocations"):
        check(got.get(k) == want.get(k), f"the database's {k} equals the CSV tables' ({got.get(k)} vs {want.get(k)})")
    check(got["operator_memory"].endswith("ascend_pytorch_profiler_0.db:OP_MEMORY"), got["operator_memory"])
plain = os.path.join(tmp, "plain.db")
c = sqlite3.connect(plain)
c.execute("CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT)")
c.commit()
c.close()
rc, out, err = run([TRAINPROF, "mem", plain])
check(rc == 3 and "no MEMORY_RECORD table" in err and "profile_memory=True" in err,
      f"a database without the memory view says so: {rc} {err}")

# the operator table given to mem alone, and the record table to kernels: each says who reads it
rc, out, err = run([TRAINPROF, "kernels", os.path.join(d, "memory_record.csv")])
check(rc == 3 and "use trainprof mem" in err, f"kernels on memory_record.csv: {rc} {err}")
finish("Ascend memory tables (memory_record.csv, operator_memory.csv)")
