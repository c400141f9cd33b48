"""Every result type survives its text form (tests/tools/result_roundtrip on
the generated traces and, when present, every real trace: read back equal,
and the same JSON). docs/SCHEMA.md is what the result descriptions say (regenerate it with
build/tests/schema_doc > docs/SCHEMA.md), and each command that prints
through result tables gives JSON of exactly that shape: per trace object,
label and file, then the documented JSON columns in order, each of its kind
(an integer, a number, a string, or null). Generated traces only."""
import csv
import glob
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import GENTRACE, SRC, TRAINPROF, check, finish, run, scratch, testdata  # noqa: E402

SCHEMA_DOC = os.environ.get("SCHEMA_DOC", "build/tests/schema_doc")
doc_path = os.path.join(SRC, "docs", "SCHEMA.md")
made = subprocess.run([SCHEMA_DOC], capture_output=True, text=True, check=True).stdout
check(open(doc_path).read() == made, "docs/SCHEMA.md is the descriptions' output (build/tests/schema_doc > docs/SCHEMA.md)")

# the documented columns per result, from the generated text
columns = {}
current = None
for line in made.splitlines():
    m = re.match(r"## `(\w+)` \(version \d+\)", line)
    if m:
        current = columns.setdefault(m.group(1), {"no_json": set(), "keyed": set(), "single": set(), "keyed_values": set(), "wide": set(),
                                                     "inline": set(), "optional": set()})
        table = None
        continue
    if line.startswith("Each trace is named by its file alone") and current is not None:
        current["no_label"] = True
        continue
    if line.startswith("Not printed by a command") and current is not None:
        current["internal"] = True
        continue
    if line.startswith("One result for all traces; no CSV form") and current is not None:
        current["csv"], current["whole_run"] = None, True
        continue
    if line.startswith("One result for all traces. CSV: every table in turn") and current is not None:
        current["csv"], current["whole_run"] = "tables", True
        continue
    m = re.match(r"(One result for all traces\. )?CSV: (?:the rows of table `(\w+)`|one row per trace)", line)
    if m and current is not None:
        current["csv"] = m.group(2) or "trace"
        current["whole_run"] = bool(m.group(1))
        current["json_rows"] = "JSON: an array of them" in line
        continue
    m = re.match(r"### `([^`]+)`", line)
    if m and current is not None:
        table = current.setdefault(m.group(1), [])
        if "(not in JSON)" in line:
            current["no_json"].add(m.group(1))
        if "(JSON: an object keyed" in line:
            current["keyed"].add(m.group(1))
        if "(JSON: wide" in line:
            current["wide"].add(m.group(1))
        if "(JSON: an object of values keyed" in line:
            current["keyed_values"].add(m.group(1))
        if "(JSON: an object, null when empty)" in line or "(JSON: an object, left out when empty)" in line:
            current["single"].add(m.group(1))
        if "(JSON: members of the parent row" in line:
            current["inline"].add(m.group(1))
        if "(JSON: left out when empty" in line:
            current["optional"].add(m.group(1))
        continue
    m = re.match(r"\| `([^`]+)`(?: \(CSV: `(\w+)`\))?[^|]*\| ([^|]+) \| [^|]+ \| ([^|]*) \|", line)
    if m and current is not None:
        # (JSON key, kind, in JSON, in CSV, CSV header, left out of JSON when null)
        table.append((m.group(1), m.group(3).strip(), "JSON" in m.group(4), "CSV" in m.group(4),
                      m.group(2) or m.group(1), "JSON (if set)" in m.group(4)))

INT_KINDS = ("count", "duration (ns)", "bytes", "timestamp (ns)", "rank", "integer")
SPECIAL = ("wide", "keyed_values", "no_label", "csv", "no_json", "keyed", "single", "inline", "internal", "whole_run", "json_rows",
           "optional")


def of_kind(v, kind):
    if kind in INT_KINDS:
        return isinstance(v, int)
    if kind in ("string", "enum"):
        return isinstance(v, str)
    if kind == "boolean":
        return isinstance(v, bool)
    return isinstance(v, (int, float)) or v in ("nan", "inf", "-inf")  # named where JSON has no number


def keys_are(got, cols, what, first=()):
    """GOT (keys in order) are FIRST and the documented JSON columns; those left out when null may be absent."""
    want = list(first) + [c[0] for c in cols if c[2] and (c[0] in got or not c[5])]
    check(got == want, f"{what}: JSON keys {got} are the documented {want}")


def children_of(tables, tname):
    """The JSON names of TNAME's child tables (documented as TNAME[].CHILD)."""
    return {t[len(tname) + 3:] for t in tables if t.startswith(tname + "[].") and "[]" not in t[len(tname) + 3:]}


def check_rows(name, tables, tname, rows, what):
    """ROWS (objects) have TNAME's documented columns, of their kinds, and its child tables."""
    kids = children_of(tables, tname)
    for row in rows:
        if row is None:
            continue
        keys_are([k for k in row if k not in kids and not isinstance(row[k], (list, dict))], tables[tname], what)
        for col, kind, js, *_ in tables[tname]:
            if js and row.get(col) is not None:
                check(of_kind(row[col], kind), f"{what}.{col} = {row[col]!r} is a {kind}")
        for kid in kids:
            full = f"{tname}[].{kid}"
            if full in tables["inline"]:
                continue  # its rows are members of this row, named by their keys
            if full in tables["no_json"]:
                check(kid not in row, f"{what}: {kid} is not in JSON")
                continue
            v = row.get(kid)
            if full in tables["keyed_values"]:
                check(isinstance(v, dict) and all(not isinstance(x, (dict, list)) for x in v.values()),
                      f"{what}.{kid} is an object of values")
                continue
            if full in tables["single"] or (full in tables["keyed"] and v is None):
                check_rows(name, tables, full, [v], f"{what}.{kid}")
            elif full in tables["keyed"]:
                check(isinstance(v, dict), f"{what}.{kid} is an object")
                for key, sub in (v or {}).items():
                    keys_are([k for k in sub if not isinstance(sub[k], (list, dict))], tables[full][1:],
                             f"{what}.{kid}.{key}")
            elif isinstance(v, list) and all(not isinstance(x, dict) for x in v):
                continue
            else:
                check(isinstance(v, list), f"{what}.{kid} is an array")
                check_rows(name, tables, full, v or [], f"{what}.{kid}[]")


def check_object(name, tables, obj, whole_run=False):
    keys_are([k for k in obj.keys() if k not in tables and not isinstance(obj[k], (list, dict))], tables["(top)"],
             f"{name}",
             () if whole_run else ("file",) if tables.get("no_label") else ("label", "file"))
    for col, kind, js, *_ in tables["(top)"]:
        if js and obj.get(col) is not None:
            check(of_kind(obj[col], kind), f"{name}: {col} = {obj[col]!r} is a {kind}")
    for tname, cols in tables.items():
        if tname in ("(top)",) + SPECIAL or "[]" in tname:
            continue
        if tname in tables["no_json"]:
            check(tname not in obj, f"{name}: {tname} is not in JSON")
            continue
        if tname in tables["keyed"]:
            check(isinstance(obj.get(tname), dict), f"{name}: table {tname} is an object")
            for key, row in (obj.get(tname) or {}).items():
                keys_are([k for k in row if not isinstance(row[k], (list, dict))], cols[1:], f"{name}: {tname}.{key}")
            continue
        if isinstance(obj.get(tname), list) and all(not isinstance(v, dict) for v in obj[tname]):
            continue  # a series: an array of the values of its one column
        if tname in tables["wide"]:  # an object per key, a member per name
            key = cols[0][0]
            check(isinstance(obj.get(tname), list) and all(key in row for row in obj[tname]),
                  f"{name}: {tname} is an array of objects with {key}")
            continue
        if tname in tables["single"]:
            check_rows(name, tables, tname, [obj.get(tname)], f"{name}: {tname}")
            continue
        if tname in tables["keyed_values"]:
            v = obj.get(tname)
            kind = [c[1] for c in cols[1:] if c[2]][0]
            check(isinstance(v, dict) and all(of_kind(x, kind) for x in v.values()),
                  f"{name}: {tname} is an object of {kind} values")
            continue
        if tname in tables["optional"] and tname not in obj:
            continue  # left out when empty
        check(isinstance(obj.get(tname), list), f"{name}: table {tname} is an array")
        check_rows(name, tables, tname, obj.get(tname) or [], f"{name}: {tname} row")


tmp = scratch("tprof-schema-")
traces = []
for rank in (0, 1):
    p = os.path.join(tmp, f"r{rank}.json")
    subprocess.run([GENTRACE, "--size", "1M", "--rank", str(rank), "--world", "2", "--seed", str(rank + 5), "-o", p],
                   check=True, capture_output=True)
    traces.append(p)
train_log = os.path.join(tmp, "train.log")
with open(train_log, "w") as f:
    for s in range(1, 40):
        f.write(json.dumps({"step": s, "loss": 3 - s / 40, "mfu": 0.4 + (s % 5) / 100}) + "\n")
    f.write('{"step": 40, "loss": NaN}\n')
snapshot = os.path.join(tmp, "snap.pickle")
subprocess.run([sys.executable, os.path.join(SRC, "tests", "tools", "gen_snapshot.py"), snapshot,
                os.path.join(tmp, "snap.truth.json"), "--seed", "4", "--devices", "2", "--oom"], check=True)
# a trace recorded with profile_memory=True, where the shared data has one
mem_trace = None
if testdata():
    found = glob.glob(os.path.join(testdata(), "traces", "kineto", "tb_plugin", "samples", "resnet50_num_workers_0",
                                   "worker0.*.pt.trace.json.gz"))
    mem_trace = found[0] if found else None
config = os.path.join(tmp, "config.json")
with open(config, "w") as f:
    json.dump({"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816, "num_hidden_layers": 4,
               "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 32000}, f)
for name, tables in columns.items():
    if tables.get("internal"):
        continue  # written and read back (the round trip below), not printed
    whole = tables.get("whole_run", False)
    if name in ("mem_timeline", "mem_trace_timeline"):  # files: PREFIX.json / PREFIX.csv
        src = snapshot if name == "mem_timeline" else mem_trace
        if src is None:
            continue
        prefix = os.path.join(tmp, name)
        for fmt in ("json", "csv"):
            rc, out, err = run([TRAINPROF, "mem", "--timeline", prefix, "--format", fmt, src])
            check(rc == 0 and os.path.exists(f"{prefix}.{fmt}"), f"{name} {fmt}: exit {rc} {err[-200:]}")
        check_object(name, tables, json.load(open(prefix + ".json")))
        header = open(prefix + ".csv").readline().rstrip("\n").split(",")
        want_csv = [c[4] for c in tables[tables["csv"]] if c[3]]
        check(header == want_csv, f"{name}: the CSV header {header} is the documented {want_csv}")
        continue
    # a result NAME_by_X is the command NAME --by X; the model commands take a config
    command = name.split("_by_")[0].replace("critical_path", "critical-path")  # the command's name has a hyphen
    args = [command] + (["--by", name.split("_by_")[1]] if "_by_" in name else [])
    inputs = traces
    if command == "mem":
        inputs = [snapshot]
    if command == "mem_trace":
        args = ["mem"]
    if command == "mem_compare":
        args, inputs = ["mem", "--compare"], [snapshot, snapshot]
    if command == "mem_ascend":  # Ascend's memory_record.csv, with its operator_memory.csv
        d = os.path.join(tmp, "ascend_mem")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "memory_record.csv"), "w") as f:
            f.write("Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,"
                    "Device Type\nPTA,1000.5\t,2.5,4,2.5,1,NPU:0\nPTA,1001.5\t,1.5,4,1.5,1,NPU:0\n")
        with open(os.path.join(d, "operator_memory.csv"), "w") as f:
            f.write("Name,Size(KB),Allocation Time(us),Release Time(us),Device Type\n"
                    "aten::mm,2560,1000.5\t,1001.5\t,NPU:0\n")
        args, inputs = ["mem"], [os.path.join(d, "memory_record.csv")]
    if command == "merge":
        args = args + ["-o", os.path.join(tmp, "merged.json")]
    if command in ("log", "log_series"):
        args, inputs = ["log"] + (["--series"] if command == "log_series" else []), [train_log]
    if command == "flops":
        args, inputs = args + ["--config", config, "--seqlens", "1024,512"], []
    elif command == "mfu":
        args = args + ["--config", config, "--seqlens", "1024", "--peak-tflops", "500", "--trace"]
    rc, out, err = run([TRAINPROF, *args, "--format", "json", *inputs])
    check(rc == 0, f"{name} --format json: exit {rc} {err[-200:]}")
    if rc:
        continue
    doc = json.loads(out)
    if whole and tables.get("json_rows"):  # the rows of one table
        check(isinstance(doc, list), f"{name}: an array of {tables['csv']}")
        check_rows(name, tables, tables["csv"], doc if isinstance(doc, list) else [], f"{name}: {tables['csv']}")
        objs = []
    elif whole:  # one object for the run
        check_object(name, tables, doc, True)
        objs = []
    elif isinstance(doc, dict) and list(doc) == ["files"]:  # {"files": [...]}: log
        objs = doc["files"]
        check(len(objs) == len(inputs), f"{name}: one object per file")
        doc = objs
    elif isinstance(doc, dict):  # {"traces": [...], "combined": {...}}
        check(list(doc) == ["traces", "combined"], f"{name}: traces and their combination")
        objs = doc.get("traces", []) + [doc.get("combined", {})]
    else:
        objs = doc
    check(whole or len(objs) == (len(inputs) + 1 if isinstance(doc, dict) else len(inputs)),
          f"{name}: one object per input")
    for obj in objs:
        check_object(name, tables, obj)
    rc, out, err = run([TRAINPROF, *args, "--format", "csv", *inputs])
    if tables["csv"] is None:
        check(rc == 2 and ("no CSV form" in err or "table or JSON" in err), f"{name}: no CSV form, said so: exit {rc}")
        continue
    if tables["csv"] == "tables":  # every table after "# table: NAME", its columns after its parents' keys
        check(rc == 0, f"{name} --format csv: exit {rc} {err[-200:]}")
        blocks, cur = {}, None
        for line in out.splitlines():
            if line.startswith("# table: "):
                cur = blocks.setdefault(line[9:], [])
            elif cur is not None:
                cur.append(next(csv.reader([line])))
        want = [t for t in tables if isinstance(tables[t], list) and t != "(top)"]
        got = [b.replace(".", "[].") for b in blocks]
        check(got == want, f"{name}: CSV tables {got}, documented {want}")
        for b, rows in blocks.items():
            doc_cols = [c[4] for c in tables.get(b.replace(".", "[]."), []) if c[3]]
            header = rows[0] if rows else []
            check(header[len(header) - len(doc_cols):] == doc_cols, f"{name}: CSV table {b}: {header} ends not in {doc_cols}")
            check(all(len(r) == len(header) for r in rows), f"{name}: CSV table {b}: rows of other widths")
        continue
    header = out.splitlines()[0].split(",") if rc == 0 and out else []
    csv_table = tables["csv"] if tables["csv"] != "trace" else "(top)"
    prefix = [] if whole else ["file"] if tables.get("no_label") else ["trace", "file"]
    want_csv = prefix + [c[4] for c in tables[csv_table] if c[3]]
    if csv_table in tables["wide"]:  # its key, then a column per name
        want_csv = (prefix + [want_csv[len(prefix)]] + header[len(prefix) + 1:])
    check(header == want_csv, f"{name}: the CSV header {header} is the documented {want_csv}")
    if csv_table == "(top)":
        check(len(out.splitlines()) == 3, f"{name}: a CSV row per trace")
roundtrip = os.environ.get("RESULT_ROUNDTRIP", "build/tests/result_roundtrip")
inputs = list(traces)
data = testdata()
if data:
    inputs += sorted(p for p in glob.glob(os.path.join(data, "traces", "**", "*.json*"), recursive=True)
                     if p.endswith((".json", ".json.gz")))
rc, out, err = run([roundtrip, *inputs, snapshot], timeout=900)
check(rc == 0 and out.count("\nsame ") + out.startswith("same ") >= 15 * len(traces) + 24,
      f"result round trip: {[ln for ln in out.splitlines() if not ln.startswith(('same', 'skip'))][:5]} {err[-200:]}")
print(f"round trip: {out.count('same ')} results on {len(inputs)} traces")
finish(f"the schema of {len(columns)} result type(s) is generated and the JSON follows it")
