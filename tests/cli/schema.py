"""Every result type survives its text form (tests/tools/result_roundtrip on
the generated traces and, when present, every real trace: read back equal,
and the same JSON). docs/SCHEMA.md is what the result descriptions say (regenerate it with
build/tests/schema_doc > docs/SCHEMA.md), and each command that prints
through result tables gives JSON of exactly that shape: per trace object,
label and file, then the documented JSON columns in order, each of its kind
(an integer, a number, a string, or null). Generated traces only."""
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
        current = columns.setdefault(m.group(1), {})
        table = None
        continue
    m = re.match(r"CSV: (?:the rows of table `(\w+)`|one row per trace)", line)
    if m and current is not None:
        current["csv"] = m.group(1) or "trace"
        continue
    m = re.match(r"### `([^`]+)`", line)
    if m and current is not None:
        table = current.setdefault(m.group(1), [])
        if "(not in JSON)" in line:
            current.setdefault("no_json", set()).add(m.group(1))
        continue
    m = re.match(r"\| `(\w+)`(?: \(CSV: `(\w+)`\))?[^|]*\| ([^|]+) \| [^|]+ \| ([^|]*) \|", line)
    if m and current is not None:
        # (JSON key, kind, in JSON, in CSV, CSV header)
        table.append((m.group(1), m.group(3).strip(), "JSON" in m.group(4), "CSV" in m.group(4),
                      m.group(2) or m.group(1)))

INT_KINDS = ("count", "duration (ns)", "bytes", "timestamp (ns)", "rank", "integer")
tmp = scratch("tprof-schema-")
traces = []
for rank in (0, 1):
    p = os.path.join(tmp, f"r{rank}.json")
    subprocess.run([GENTRACE, "--size", "1M", "--rank", str(rank), "--world", "2", "--seed", str(rank + 5), "-o", p],
                   check=True, capture_output=True)
    traces.append(p)
for name, tables in columns.items():
    rc, out, err = run([TRAINPROF, name, "--format", "json", *traces])
    check(rc == 0, f"{name} --format json: exit {rc} {err[-200:]}")
    if rc:
        continue
    doc = json.loads(out)
    check(isinstance(doc, list) and len(doc) == 2, f"{name}: one object per trace")
    want = ["label", "file"] + [c for c, _, js, _, _ in tables["(top)"] if js]
    for obj in doc:
        got = [k for k in obj.keys() if not isinstance(obj[k], list)]
        check(got == want, f"{name}: JSON keys {got} are the documented {want}")
        for col, kind, js, _, _ in tables["(top)"]:
            if not js or col not in obj or obj[col] is None:
                continue
            v = obj[col]
            ok = isinstance(v, int) if kind in INT_KINDS else isinstance(v, str) if kind in ("string", "enum") \
                else isinstance(v, (int, float))
            check(ok, f"{name}: {col} = {v!r} is a {kind}")
        for tname, cols in tables.items():
            if tname in ("(top)", "csv", "no_json") or "[]" in tname or tname in tables.get("no_json", ()):
                check(tname not in tables.get("no_json", ()) or tname not in obj, f"{name}: {tname} is not in JSON")
                continue
            if isinstance(obj.get(tname), list) and all(not isinstance(v, dict) for v in obj[tname]):
                continue  # a series: an array of the values of its one column
            check(isinstance(obj.get(tname), list), f"{name}: table {tname} is an array")
            for row in obj.get(tname) or []:
                keys = [k for k in row if not isinstance(row[k], (list, dict))]
                check(keys == [c for c, _, js, _, _ in cols if js], f"{name}: {tname} row keys {keys}")
    rc, out, err = run([TRAINPROF, name, "--format", "csv", *traces])
    header = out.splitlines()[0].split(",") if rc == 0 and out else []
    csv_table = tables["csv"] if tables["csv"] != "trace" else "(top)"
    want_csv = ["trace", "file"] + [h for _, _, _, csv, h in tables[csv_table] if csv]
    check(header == want_csv, f"{name}: the CSV header {header} is the documented {want_csv}")
    if csv_table == "(top)":
        check(len(out.splitlines()) == 3, f"{name}: a CSV row per trace")
roundtrip = os.environ.get("RESULT_ROUNDTRIP", "build/tests/result_roundtrip")
inputs = list(traces)
data = testdata()
if data:
    import glob
    inputs += sorted(p for p in glob.glob(os.path.join(data, "traces", "**", "*.json*"), recursive=True)
                     if p.endswith((".json", ".json.gz")))
rc, out, err = run([roundtrip, *inputs], timeout=900)
check(rc == 0 and out.count("\nsame ") + out.startswith("same ") >= 5 * len(traces),
      f"result round trip: {[ln for ln in out.splitlines() if not ln.startswith(('same', 'skip'))][:5]} {err[-200:]}")
print(f"round trip: {out.count('same ')} results on {len(inputs)} traces")
finish(f"the schema of {len(columns)} result type(s) is generated and the JSON follows it")
