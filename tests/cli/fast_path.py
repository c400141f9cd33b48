"""Three ways of reading a trace agree, event by event and on every piece of
metadata: the generic token path in one pass, the fast event path in one
pass, and the fast path over parallel chunks (256-byte chunks, 3 threads).
On every real trace, generated traces in several layouts and malformed
variants; the layouts that can be cut must really be read in chunks."""
import glob
import os

from common import scratch, GENTRACE, check, finish, run, testdata

PATH_DIFF = os.environ.get("PATH_DIFF", "build/tests/path_diff")
tmp = scratch("tprof_fast_")
files = []
gen = os.path.join(tmp, "gen.json")
rc, _, err = run([GENTRACE, "--size", "3M", "--seed", "7", "-o", gen])
check(rc == 0, f"gentrace failed: {err}")
files.append(gen)
text = open(gen, "rb").read()


def every_nth(data, old, new, first, step):
    """DATA with occurrences first, first + step, ... (counting from 1) of OLD
    replaced by NEW."""
    parts = data.split(old)
    out = [parts[0]]
    for i, part in enumerate(parts[1:], 1):
        out.append(new if i >= first and (i - first) % step == 0 else old)
        out.append(part)
    return b"".join(out)


def nth_replace(data, old, new, n):
    """DATA with the Nth occurrence of OLD (counting from 1) replaced."""
    at = -1
    for _ in range(n):
        at = data.index(old, at + 1)
    return data[:at] + new + data[at + len(old):]


# malformed and unusual variants: escapes in keys and values, odd types, cuts
variants = {
    "esc_key.json": text.replace(b'"name"', b'"n\\u0061me"', 50),
    "esc_val.json": text.replace(b'"cat": "kernel"', b'"cat": "k\\u0065rnel"', 20),
    "types.json": text.replace(b'"dur": ', b'"dur": [1], "x": ', 30).replace(b'"ts": ', b'"ts": true, "y": ', 10),
    "nums.json": text.replace(b'"pid": ', b'"pid": 1.5e2, "z": -0.0e-0, "w": ', 40),
    "cut.json": text[: len(text) // 3],
    "bad.json": text[: len(text) // 2] + b"}}" + text[len(text) // 2:],
    "crlf.json": text.replace(b"\n", b"\r\n"),
    # events of one op whose layouts differ (shapes, event_fast.c): in the args,
    # at the event's level, in the spaces, and an error after many that fit
    "shape_args.json": text.replace(b'"correlation": ', b'"correlatioN": ', 300),
    "shape_args_len.json": text.replace(b'"Record function id"', b'"Record fn id"', 300),
    "shape_event.json": text.replace(b'"args": {"External id"', b'"x": [1], "args": {"External id"', 300),
    "shape_ws.json": text.replace(b', "tid": ', b',"tid":', 300).replace(b'}},', b'} },', 200),
    "shape_scalar_args.json": text.replace(b'"args": {"External id": ', b'"args": 7, "a2": {"External id": ', 50),
    "shape_bad.json": nth_replace(text, b'"dur": ', b'"dur": 01', 4000),
    # constant values (shape.h) that change after many events of their op:
    # longer with the same prefix, a container, an integer written otherwise,
    # and an arg whose key alone sets a flag
    "konst_longer.json": every_nth(text, b'"stream": 7,', b'"stream": 71,', 200, 5)
    .replace(b'"tid": 7,', b'"tid": 7.5,', 40),
    "konst_container.json": every_nth(text, b'"grid": [', b'"grid": [1', 100, 3)
    .replace(b'"Input Dims": [[', b'"Input Dims": [[7, ', 60),
    "konst_int_forms.json": every_nth(text, b'"device": 0,', b'"device": 0e0,', 150, 4)
    .replace(b'"pid": 0,', b'"pid": -0,', 300).replace(b'"pid": 0,', b'"pid": 1,', 50),
    "konst_task.json": text.replace(b'"cbid": ', b'"Task Type": [0], "cbid": '),
    # containers under args keys that take an integer: skipped, never a
    # constant 0 (a review found the fast path set the field); pid and tid
    # written twice, a name and a number in either order
    "slot_container.json": every_nth(text, b'"stream": 7,', b'"stream": [7],', 1, 3)
    .replace(b'"device": 0,', b'"device": {"d": 0},', 200),
    "pid_names.json": every_nth(text, b'"pid": 2148000,', b'"pid": "Spans", "pid": 2148000,', 1, 4)
    .replace(b'"tid": 7,', b'"tid": 7, "tid": "stream 7",', 100),
    # an op in two and three layouts (a shape per layout, two per op), and
    # the older Kineto layout, a line per few members
    "layouts.json": every_nth(every_nth(text, b'"args": {"External id"', b'"args": {"a0": 1, "External id"', 1, 2),
                              b'"args": {"External id"', b'"args": {"a1": [2], "External id"', 1, 3),
    "multiline.json": text.replace(b'  {"ph": ', b'  {\n    "ph": ')
    .replace(b', "args": {', b',\n    "args": {\n      '),
    # the event head Kineto writes, read with fixed compares, and near misses of it
    "head.json": text.replace(b'"ph": "X", "cat"', b'"ph": "XY", "cat"', 30)
    .replace(b'"ph": "X", "cat"', b'"ph": "\\u0058", "cat"', 30)
    .replace(b'"ph": "X", "cat"', b'"ph": "\\t", "cat"', 30)
    .replace(b'"ph": "X", "cat"', b'"ph": 5, "cat"', 30)
    .replace(b', "name": ', b',"name": ', 30),
    "meta_after.json": text.replace(b'"traceEvents": [', b'"traceEvents": [', 1).replace(
        b'"schemaVersion": 1,', b'"schemaVersion": 1, "note": "\\"traceEvents\\": [",', 1),
}
# an event's '{' as the last byte of the reader's first 1 MiB window (a
# review found a read one byte past it, which ASan reports)
window = 1 << 20
plain_ev = b'{"ph": "X", "cat": "cpu_op", "name": "aten::to", "pid": 1, "tid": 1, "ts": 1000.5, "dur": 2.5, "args": {}}'
edge = bytearray(b'{"traceEvents": [\n')
while len(edge) + 2 * len(plain_ev) + 400 < window:
    edge += plain_ev + b',\n'
pad = window - 1 - len(edge) - len(plain_ev) - len(b', "pad": ""') - 2
edge += plain_ev.replace(b'"args": {}', b'"args": {}, "pad": "' + b'x' * pad + b'"') + b',\n'
check(len(edge) == window - 1, f"window edge file: the event starts at {len(edge)}")
edge += b',\n'.join([plain_ev] * 50) + b'\n]}\n'
variants["window_edge.json"] = bytes(edge)
# a crafted Kineto head whose shape key equalled that of an event's start
# (a review found it): the fast path then took "{," for the stretch ", "
collide = os.path.join(tmp, "shape_collide.json")
with open(collide, "wb") as f:
    pad = b'{"ph": "i", "cat": "other", "name": "pad", "ts": 1, "pid": 1, "tid": 1, "s": "t"}'
    f.write(b'{"traceEvents": [\n' + pad + b',\n'
            b'{"ph": "X", "cat": "kernel", "name": "xxxxxxxxP1Mq0YRrHYVatwqdNvVO27jR3`weeU*", "ts": 1234, "dur": 5},\n'
            b'{, "ts": 1234, "dur": 5},\n' + pad + b',\n' + pad + b'\n]}\n')
files.append(collide)
kineto = os.path.join(tmp, "kineto.json")
rc, _, err = run([GENTRACE, "--size", "2M", "--seed", "8", "--layout", "kineto", "-o", kineto])
check(rc == 0, f"gentrace --layout kineto failed: {err}")
files.append(kineto)
import json as _json
bare = os.path.join(tmp, "bare.json")  # a bare array, one event per line, string timestamps
with open(bare, "w") as f:
    evs = _json.load(open(gen))["traceEvents"][:3000]
    f.write("[\n" + ",\n".join(_json.dumps(dict(e, ts=str(e["ts"])) if "ts" in e else e) for e in evs) + "\n]\n")
files.append(bare)
must_chunk = {gen, kineto, bare, os.path.join(tmp, "crlf.json"), os.path.join(tmp, "meta_after.json"),
              os.path.join(tmp, "esc_key.json"), os.path.join(tmp, "multiline.json")}
for name, data in variants.items():
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    files.append(p)
data = testdata()
if data:
    files += sorted(glob.glob(os.path.join(data, "traces", "**", "*.json*"), recursive=True))
else:
    print("SKIP (visible): real traces not compared, ../shared/data absent")
rc, out, err = run([PATH_DIFF] + files)
for line in out.splitlines():
    check(line.startswith("same "), line)
    name, chunks = line[5:].rsplit(" (", 1) if line.startswith("same ") else (line, "0 chunks)")
    if name in must_chunk:
        check(int(chunks.split()[0]) > 1, f"{name}: expected a parallel read, got {chunks[:-1]}")
check(len(out.splitlines()) == len(files), f"path_diff reported {len(out.splitlines())} of {len(files)} files")
finish(f"one-pass generic, one-pass fast and parallel reads agree on {len(files)} files")
