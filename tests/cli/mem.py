"""trainprof mem: memory snapshots.

- every real snapshot in ../shared/data/snapshots against tests/tools/viewer_peak.py
  (the viewer's definition restated in Python over Python's pickle; skipped,
  and said so, where ../shared is absent: the generated snapshots still run);
- the synthetic ones against their *.expected.json (exact);
- snapshots generated here (tests/tools/gen_snapshot.py) against the
  simulation's own ground truth, in every layout and protocol 2-5;
- malicious, bad and truncated pickles: exit codes and messages, nothing run;
- --timeline, --compare, csv/json forms."""
import gzip
import json
import os
import pickle
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import SRC, TRAINPROF, check, finish, run, scratch, testdata  # noqa: E402

GEN = os.path.join(SRC, "tests", "tools", "gen_snapshot.py")
VIEWER = os.path.join(SRC, "tests", "tools", "viewer_peak.py")
tmp = scratch("tprof-mem-")


def mem_json(path, *extra):
    rc, out, err = run([TRAINPROF, "mem", "--format", "json", *extra, path])
    return rc, (json.loads(out) if out.strip() else None), err


def viewer(path):
    p = subprocess.run([sys.executable, VIEWER, path], capture_output=True, check=True)
    return json.loads(p.stdout)


def by_device(doc):
    return {str(d["device"]): d for d in doc[0]["devices"]}


# --- generated snapshots: every layout, protocols 2-5, rings, OOMs, gzip -------
configs = [
    ("basic", ["--seed", "3"]),
    ("multi_oom_p2", ["--seed", "4", "--devices", "3", "--oom", "--protocol", "2"]),
    ("ring_p5", ["--seed", "5", "--ring", "300", "--events", "1500", "--protocol", "5"]),
    ("traces_gz", ["--seed", "6", "--form", "traces", "--gzip"]),
    ("history", ["--seed", "7", "--form", "history"]),
    ("list", ["--seed", "8", "--form", "list"]),
    ("p3", ["--seed", "9", "--protocol", "3", "--events", "800"]),
    # a stack without Python frames (autograd's thread) and CPython's frames
    # between the Python ones: the unwinder, allocator, dispatcher, libc and
    # interpreter frames are left out of call sites as PyTorch's viewer does
    ("native", ["--seed", "10", "--native"]),
]
for name, args in configs:
    pk, tr = os.path.join(tmp, name + ".pickle"), os.path.join(tmp, name + ".truth.json")
    subprocess.run([sys.executable, GEN, pk, tr, *args], check=True)
    truth = json.load(open(tr))["devices"]
    rc, doc, err = mem_json(pk)
    check(rc == 0, f"{name}: exit {rc}: {err}")
    if rc != 0:
        continue
    got = by_device(doc)
    check(sorted(got) == sorted(truth), f"{name}: devices {sorted(got)} != {sorted(truth)}")
    for d, t in truth.items():
        g = got.get(d, {})
        for k in ("peak_active_bytes", "peak_index", "active_at_end_bytes", "reserved_at_end_bytes",
                  "reserved_peak_bytes", "retries", "events"):
            if k in t:
                check(g.get(k) == t[k], f"{name} device {d}: {k} {g.get(k)} != truth {t[k]}")
        if "sites_at_peak" in t:
            sites = {s["site"]: s["bytes"] for s in g.get("sites_at_peak", [])}
            check(sites == t["sites_at_peak"], f"{name} device {d}: call sites at the peak differ")
        if "actions" in t:
            check(g.get("actions") == t["actions"], f"{name} device {d}: action counts differ")
        if t.get("ooms"):
            check(len(g.get("ooms", [])) == t["ooms"], f"{name} device {d}: OOMs")
    # and the viewer restated in Python agrees on the same file
    v = viewer(pk)
    for d, vv in v.items():
        check(got[d]["peak_active_bytes"] == vv["peak_active_bytes"], f"{name} device {d}: peak vs viewer_peak.py")

# --- real and shared synthetic snapshots ---------------------------------------
data = testdata()
real = []
if data is None:
    print("SKIP (partly): ../shared/data not found; generated snapshots only")
else:
    for root, _, files in os.walk(os.path.join(data, "snapshots")):
        real += [os.path.join(root, f) for f in files if f.endswith((".pickle", ".pkl"))]
for path in sorted(real):
    rc, doc, err = mem_json(path)
    check(rc == 0, f"{path}: exit {rc}: {err}")
    if rc != 0:
        continue
    got = by_device(doc)
    v = viewer(path)
    check(sorted(got) == sorted(v), f"{path}: devices {sorted(got)} vs viewer {sorted(v)}")
    for d, vv in v.items():
        g = got.get(d, {})
        for k in ("peak_active_bytes", "active_at_end_bytes", "reserved_at_end_bytes"):
            check(g.get(k) == vv[k], f"{path} device {d}: {k} {g.get(k)} != viewer {vv[k]}")
        if vv["peak_alloc_index"] is not None:
            check(g.get("peak_index") == vv["peak_alloc_index"], f"{path} device {d}: peak index")
        print(f"  {os.path.relpath(path, data)} device {d}: peak {g.get('peak_active_bytes')} (viewer {vv['peak_active_bytes']})")
    exp = path + ".expected.json"
    if os.path.exists(exp):
        e = json.load(open(exp))["devices"]
        for d, t in e.items():
            g = got.get(d, {})
            check(g.get("peak_active_bytes") == t["visible_peak_requested_bytes"], f"{exp} device {d}: visible peak")
            if t["true_peak_in_kept_window"]:
                check(g.get("peak_active_bytes") == t["true_peak_requested_bytes"], f"{exp} device {d}: true peak")
                check(g.get("peak_index") == t["true_peak_trace_index_kept"], f"{exp} device {d}: peak index")
            check(g.get("active_at_end_bytes") == t["live_requested_bytes_at_end"], f"{exp} device {d}: live at end")
            check(g.get("reserved_at_end_bytes") == t["reserved_bytes_at_end"], f"{exp} device {d}: reserved at end")
            if not t["truncated"]:
                check(g.get("reserved_peak_bytes") == t["reserved_peak_bytes_true"], f"{exp} device {d}: reserved peak")
            check(g.get("events") == t["events_kept"], f"{exp} device {d}: events")
            check(g.get("actions") == t["actions_kept"], f"{exp} device {d}: actions {g.get('actions')}")
            check(len(g.get("ooms", [])) == t["actions_kept"].get("oom", 0), f"{exp} device {d}: OOMs")

# --- Kineto traces: the [memory] instant events ---------------------------------
def kineto_memory(path):
    """Per device: peak of Total Allocated (else the running sum of Bytes),
    peak of Total Reserved, and each ProfilerStep's peak allocated."""
    from common import load_exact, steps_of, us_to_ns
    doc = load_exact(path)
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    mem = [e for e in ev if isinstance(e, dict) and e.get("ph") in ("i", "I") and e.get("name") == "[memory]"
           and "ts" in e]
    steps = steps_of(ev)
    out = {}
    order = sorted(range(len(mem)), key=lambda i: (int((mem[i].get("args") or {}).get("Device Id", -1)),
                                                   us_to_ns(mem[i]["ts"]), i))
    run_sum = {}
    for i in order:
        e = mem[i]
        a = e.get("args") or {}
        d = int(a.get("Device Id", -1))
        run_sum[d] = run_sum.get(d, 0) + int(a.get("Bytes", 0))
        alloc = int(a["Total Allocated"]) if "Total Allocated" in a else run_sum[d]
        res = int(a.get("Total Reserved", -1))
        o = out.setdefault(str(d), {"peak_allocated_bytes": -1, "peak_reserved_bytes": -1, "steps": {}})
        o["peak_allocated_bytes"] = max(o["peak_allocated_bytes"], alloc)
        o["peak_reserved_bytes"] = max(o["peak_reserved_bytes"], res)
        t = us_to_ns(e["ts"])
        for ts, dur, name in steps:
            if ts <= t <= ts + dur:
                k = int(name.split("#")[1])
                o["steps"][k] = max(o["steps"].get(k, -1), alloc)
                break
    return out


# a small trace of our own (runs without ../shared): totals on device 0, a
# running sum of Bytes on the host, one ProfilerStep around the peak
own = os.path.join(tmp, "own.pt.trace.json")
with open(own, "w") as f:
    def m(ts, dev, b, tot=None, res=None):
        a = {"Device Type": 1 if dev >= 0 else 0, "Device Id": dev, "Bytes": b}
        if tot is not None:
            a.update({"Total Allocated": tot, "Total Reserved": res})
        return {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts, "args": a}
    json.dump({"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 15, "dur": 10},
        m(10, 0, 100, 100, 512), m(20, 0, 200, 300, 1024), m(30, 0, -100, 200, 1024),
        m(11, -1, 4), m(21, -1, 8), m(31, -1, -4)]}, f)
rc, doc, err = mem_json(own)
check(rc == 0, f"own trace: exit {rc}: {err}")
if rc == 0:
    g = by_device(doc)
    check(g["0"]["peak_allocated_bytes"] == 300 and g["0"]["peak_reserved_bytes"] == 1024, f"own trace: {g['0']}")
    check(g["0"]["peak_step"] == 7 and g["0"]["peak_allocated_ts_ns"] == 20000, "own trace: peak step and time")
    check([s["peak_allocated_bytes"] for s in g["0"]["steps"]] == [300], "own trace: step peak")
    check(g["-1"]["peak_allocated_bytes"] == 12 and not g["-1"]["has_totals"], f"own trace: host {g['-1']}")

traces = []
if data is not None:
    for root, _, files in os.walk(os.path.join(data, "traces")):
        for f in files:
            p = os.path.join(root, f)
            if f.endswith((".json", ".json.gz")) and os.path.getsize(p) < 20 << 20:
                raw = open(p, "rb").read()
                if raw[:2] == b"\x1f\x8b":
                    raw = gzip.decompress(raw)
                if b'"[memory]"' in raw:
                    traces.append(p)
for path in sorted(traces):
    rc, doc, err = mem_json(path)
    check(rc == 0, f"{path}: exit {rc}: {err}")
    if rc != 0:
        continue
    got = by_device(doc)
    want = kineto_memory(path)
    check(sorted(got) == sorted(want), f"{path}: devices {sorted(got)} vs {sorted(want)}")
    for d, w in want.items():
        g = got.get(d, {})
        for k in ("peak_allocated_bytes", "peak_reserved_bytes"):
            check(g.get(k) == w[k], f"{path} device {d}: {k} {g.get(k)} != {w[k]}")
        steps = {s["step"]: s["peak_allocated_bytes"] for s in g.get("steps", []) if s["peak_allocated_bytes"] >= 0}
        check(steps == w["steps"], f"{path} device {d}: per-step peaks {steps} != {w['steps']}")
        print(f"  {os.path.relpath(path, data)} device {d}: peak allocated {g.get('peak_allocated_bytes')}")
if traces:
    prefix = os.path.join(tmp, "ktl")
    rc, out, err = run([TRAINPROF, "mem", "--timeline", prefix, traces[0]])
    check(rc == 0 and os.path.exists(prefix + ".svg"), f"trace timeline: {err}")
    if rc == 0:
        ET.parse(prefix + ".svg")

# --- bad, malicious and truncated input ----------------------------------------
class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + os.path.join(tmp, "PWNED"),))


def write(name, data):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


for proto in (2, 4):
    p = write(f"evil{proto}.pickle", pickle.dumps({"segments": [Evil()]}, protocol=proto))
    rc, out, err = run([TRAINPROF, "mem", p])
    check(rc == 3, f"evil pickle protocol {proto}: exit {rc} (expected 3)")
    check("GLOBAL" in err and "refused" in err and "byte " in err and p in err, f"evil pickle: message: {err!r}")
    check(not os.path.exists(os.path.join(tmp, "PWNED")), "evil pickle: the payload ran")

# a C program's stack (native frames only, as trainprof's recorder writes them): the innermost frames are the site
nat = [{"filename": "/b/prog", "line": 0, "name": "alloc_weights"}, {"filename": "/b/prog", "line": 0, "name": "main"}]
doc = {"segments": [], "device_traces": [[{"action": "alloc", "addr": 4096, "size": 1000, "stream": 0, "frames": nat}]]}
p = write("native.pickle", pickle.dumps(doc, protocol=2))
rc, out, err = run([TRAINPROF, "mem", "--format", "json", p])
sites = json.loads(out)[0]["devices"][0]["sites_at_peak"] if rc == 0 else []
check(sites and sites[0]["site"] == "/b/prog:0:main;/b/prog:0:alloc_weights", f"native frames as the call site: {sites}")

# the recorder's own snapshot (examples/tiny_gpt, with_stack): call sites name
# the trainer's functions with file:line where built with libdw
TINY = os.environ.get("TINY_GPT", "build/examples/tiny_gpt")
if os.path.exists(TINY):
    rec = os.path.join(tmp, "recorded")
    p = subprocess.run([TINY, os.path.join(SRC, "configs/tiny.yaml"), "--model.n_layer=1", "--model.n_embd=32",
                        "--model.n_head=2", "--model.intermediate=64", "--model.seq_len=32", "--train.batch_size=2",
                        "--train.data=" + os.path.join(SRC, "examples/tiny_gpt/corpus.txt"), "--train.max_steps=3",
                        "--train.profile.enable", "--train.profile.start_step=1", "--train.profile.end_step=3",
                        "--train.profile.with_stack=true", "--train.profile.trace_dir=" + rec],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"tiny_gpt recorded a snapshot: {p.stderr[-500:]}")
    pkls = [os.path.join(rec, f) for f in os.listdir(rec) if f.endswith(".pkl")] if p.returncode == 0 else []
    if pkls:
        rc, out, err = run([TRAINPROF, "mem", "--format", "json", pkls[0]])
        sites = [r["site"] for r in json.loads(out)[0]["devices"][0]["sites_at_peak"]] if rc == 0 else []
        check(sites, f"the recorder's snapshot has call sites: {err}")
        libdw = " U dwfl_begin" in subprocess.run(["nm", TINY], capture_output=True, text=True).stdout
        if libdw:
            check(any(re.search(r"tiny_gpt\.c:\d+:arena_floats$", x) for x in sites) and
                  any(re.search(r"tiny_gpt\.c:[1-9]\d*:(train_step|model_init);", x) for x in sites),
                  f"call sites are the trainer's functions at file:line: {sites[:3]}")
            check(not any("tiny_gpt+0x" in x for x in sites), f"no raw offsets into tiny_gpt: {sites[:3]}")
        else:
            print("tiny_gpt built without libdw: its call sites are named through dladdr")
else:
    print(f"{TINY} not built: the recorder's snapshot is not checked")

# memo references repeating one list: a small file that would expand to 4e8 blocks (or trace entries)
blk = [{"size": 1, "state": "active_allocated"}] * 20000
for name, doc in (("bomb-blocks", {"segments": [{"device": 0, "blocks": blk}] * 20000, "device_traces": []}),
                  ("bomb-traces", {"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 1}] * 20000] * 20000})):
    p = write(name + ".pickle", pickle.dumps(doc, protocol=4))
    check(os.path.getsize(p) < 300000, f"{name}: a small file ({os.path.getsize(p)} bytes)")
    rc, out, err = run([TRAINPROF, "mem", p], timeout=60)
    check(rc == 3 and "refused" in err and p in err, f"{name}: refused quickly with exit 3: {rc} {err!r}")

cases = [
    ("empty", b"", 3, "empty"),
    ("junk", b"\x00\x01", 3, "not a pickle opcode: 0x00"),
    ("json", b'{"traceEvents": []}', 0, "no [memory] events"),
    ("int", pickle.dumps(42, protocol=4), 3, "not a memory snapshot"),
    ("badmemo", b"\x80\x04h\x05.", 3, "memo index 5"),
    ("badlong", b"\x80\x04\x8a\x0a" + b"\x01" * 10 + b".", 3, "wider than 64 bits"),
    ("nomark", b"\x80\x04]u.", 3, "MARK"),
    ("deep", b"\x80\x04" + b"(" * 5000 + b".", 3, "nesting"),
    ("inst", b"\x80\x02iposix\nsystem\n.", 3, "INST"),
    ("reduce", b"\x80\x04NNR.", 3, "REDUCE"),
    # a list is a snapshot only when its items are segments (issue 14)
    ("list_of_ints", pickle.dumps([1, 2, 3], protocol=4), 3, "list whose item 0 is of type int; expected a list of segments"),
    ("list_of_dicts", pickle.dumps([{"address": 1, "total_size": 2, "blocks": []}, {"a": 1}], protocol=2), 3,
     'list whose item 1 is a dict without "address"; expected a list of segments'),
    ("list_of_lists", pickle.dumps([[]], protocol=4), 3, "item 0 is of type list"),
]
for name, data_, want, msg in cases:
    p = write(name + ".pickle", data_)
    rc, out, err = run([TRAINPROF, "mem", p])
    check(rc == want, f"{name}: exit {rc} (expected {want}): {err}")
    check(msg in err, f"{name}: message {err!r} lacks {msg!r}")
    check(rc == 0 or p in err, f"{name}: the message does not name the file: {err!r}")

rc, out, err = run([TRAINPROF, "mem", os.path.join(tmp, "missing.pickle")])
check(rc == 3, f"missing file: exit {rc}")
rc, out, err = run([TRAINPROF, "mem"])
check(rc == 2, f"no file: exit {rc}")
rc, out, err = run([TRAINPROF, "mem", "--depth", "0", os.path.join(tmp, "basic.pickle")])
check(rc == 2, f"--depth 0: exit {rc}")

# truncated: a pickle cut in half, and a cut gzip stream: exit 4, results kept
src = open(os.path.join(tmp, "multi_oom_p2.pickle"), "rb").read()
for name, blob in (("cut", src[: len(src) // 2]), ("cut_gz", gzip.compress(src)[:-200])):
    p = write(name + ".pickle", blob)
    rc, doc, err = mem_json(p)
    check(rc == 4, f"{name}: exit {rc} (expected 4): {err}")
    check("warning" in err, f"{name}: no warning: {err!r}")
    check(doc is not None and doc[0]["truncated"], f"{name}: not marked truncated")
    check(doc is not None and len(doc[0]["devices"]) >= 1, f"{name}: nothing analysed before the cut")
# a corrupt gzip stream is told as such, even where the corruption first
# decompressed into bytes the pickle decoder refused (the decoder streams)
blob = bytearray(gzip.compress(src))
for k in range(len(blob) // 2, len(blob) // 2 + 64):
    blob[k] ^= 0x55
p = write("corrupt.pickle.gz", bytes(blob))
rc, out, err = run([TRAINPROF, "mem", p])
check(rc == 3 and "corrupt gzip data" in err and p in err, f"corrupt gzip: exit {rc}: {err!r}")
# every prefix of a small pickle: never a crash, always 3 or 4
small = pickle.dumps({"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 5,
                                                          "frames": []}]]}, protocol=4)
for n in range(0, len(small)):
    p = write("prefix.pickle", small[:n])
    rc, out, err = run([TRAINPROF, "mem", p])
    check(rc in (3, 4), f"prefix {n}: exit {rc}: {err}")

# --- output forms, timeline, compare ------------------------------------------
b = os.path.join(tmp, "multi_oom_p2.pickle")
rc, out, err = run([TRAINPROF, "mem", "--format", "csv", b])
check(rc == 0 and out.startswith("file,device,metric,site,value\n"), "csv header")
rc, out, err = run([TRAINPROF, "mem", b])
check(rc == 0 and "peak active" in out and "OOM" in out, "table form")
prefix = os.path.join(tmp, "tl")
rc, out, err = run([TRAINPROF, "mem", "--timeline", prefix, b])
check(rc == 0 and os.path.exists(prefix + ".csv") and os.path.exists(prefix + ".svg"), f"timeline files: {err}")
if rc == 0:
    ET.parse(prefix + ".svg")  # well-formed
    rows = open(prefix + ".csv").read().splitlines()[1:]
    rc2, doc, _ = mem_json(b)
    for d in by_device(doc).values():
        act = max(int(r.split(",")[3]) for r in rows if r.split(",")[0] == str(d["device"]))
        check(act == d["peak_active_bytes"], f"timeline max {act} != peak {d['peak_active_bytes']}")
    check(os.path.getsize(prefix + ".svg") < 2 << 20, "svg is small")
    # ticks and units, the peak and each OOM marked, legends that differ
    sroot = ET.parse(prefix + ".svg").getroot()
    sns = "{http://www.w3.org/2000/svg}"
    stexts = [t.text or "" for t in sroot.iter(f"{sns}text")]
    ndev = len(by_device(doc))
    check(sum(bool(re.fullmatch(r"[0-9.]+ (B|KiB|MiB|GiB)", t)) for t in stexts) >= 3 * ndev, "svg: y ticks in bytes")
    check(sum(t.startswith("peak ") for t in stexts) == ndev, "svg: each device's peak is marked")
    nooms = sum(len(d.get("ooms", [])) for d in by_device(doc).values())
    check(nooms and stexts.count("OOM") == nooms, f"svg: each OOM is marked ({stexts.count('OOM')} of {nooms})")
    for g in sroot.findall(f"{sns}g"):
        legend = [t.find(f"{sns}title").tail for t in g.iter(f"{sns}text") if t.find(f"{sns}title") is not None]
        check(legend and len(set(legend)) == len(legend), f"svg: legend entries differ: {legend}")
rc, out, err = run([TRAINPROF, "mem", "--format", "json", "--timeline", prefix, b])
check(rc == 0 and "points" in json.load(open(prefix + ".json"))["devices"][0], "timeline json")
a = os.path.join(tmp, "basic.pickle")
rc, out, err = run([TRAINPROF, "mem", "--compare", "--format", "json", a, a])
check(rc == 0 and all(r["delta_bytes"] == 0 for r in json.loads(out)["sites"]), "compare A A: no change")
rc, out, err = run([TRAINPROF, "mem", "--compare", "--format", "json", a, b])
if rc == 0:
    c = json.loads(out)
    check(c["peak_delta_bytes"] == c["peak_b_bytes"] - c["peak_a_bytes"], "compare: peak delta")
    check(sum(r["delta_bytes"] for r in c["sites"]) == sum(r["b_bytes"] for r in c["sites"]) - sum(
        r["a_bytes"] for r in c["sites"]), "compare: deltas add up")
else:
    check(False, f"compare: exit {rc}: {err}")
# stdin
rc, out, err = run([TRAINPROF, "mem", "--format", "json", "-"], stdin=open(a, "rb").read())
check(rc == 0 and json.loads(out)[0]["devices"][0]["peak_active_bytes"] == by_device(mem_json(a)[1])["0"][
    "peak_active_bytes"], f"stdin: exit {rc}: {err}")
rc, out, err = run([TRAINPROF, "mem", "--compare", a])
check(rc == 2, "compare with one file: usage")

# --- compare: call sites matched by functions and files, lines a tiebreak ------
# the same program after an edit that moved every line: nothing changed
moved = os.path.join(tmp, "basic_moved.pickle")
subprocess.run([sys.executable, GEN, moved, moved + ".truth.json", "--seed", "3", "--line-shift", "7"], check=True)
rc, out, err = run([TRAINPROF, "mem", "--compare", "--format", "json", a, moved])
if rc == 0:
    c = json.loads(out)
    sites_a = {s["site"] for s in by_device(mem_json(a)[1])["0"]["sites_at_peak"]}
    check(c["peak_delta_bytes"] == 0 and c["sites"] and all(r["delta_bytes"] == 0 for r in c["sites"]),
          f"compare moved lines: no change: {[(r['site'], r['delta_bytes']) for r in c['sites']]}")
    check(len(c["sites"]) == len(sites_a) and {r.get("site_a") for r in c["sites"]} == sites_a and
          all(r["site"] != r["site_a"] for r in c["sites"]), f"compare moved lines: B's sites, A's in site_a: {c['sites']}")
else:
    check(False, f"compare moved lines: exit {rc}: {err}")
rc, out, err = run([TRAINPROF, "mem", "--compare", a, moved])
rows = out.split("call site live at the peak\n", 1)[-1].split("\n\n")[0].splitlines()[1:]
check(rc == 0 and rows and all(r.startswith(" +0 B") and "*train.py:8:<module>" in r for r in rows) and
      "* the same functions and files at other line numbers in A" in out, f"compare moved lines, table: {out}")
rc, out, err = run([TRAINPROF, "mem", "--compare", "--format", "csv", a, moved])
check(rc == 0 and out.splitlines()[0] == "site,a_bytes,b_bytes,delta_bytes,site_a", f"compare csv header: {out[:200]}")


def snapshot(path, allocs):
    """A snapshot whose history is ALLOCS [(bytes, frames innermost first)], never freed."""
    ev, addr = [], 0x7F0000000000
    for i, (size, frames) in enumerate(allocs):
        ev.append({"action": "alloc", "addr": addr, "size": size, "stream": 0, "time_us": 1000 + i,
                   "frames": frames})
        addr += size + 512
    with open(path, "wb") as fh:
        pickle.dump({"segments": [], "device_traces": [ev]}, fh, protocol=4)
    return path


def stack(*frames):  # outermost first, as (file, line, function)
    return [{"filename": f, "line": ln, "name": fn} for f, ln, fn in reversed(frames)]


MiB = 1 << 20
# forward() called from two lines of train(): two sites of the same functions
# and files; after an edit above both, each keeps its bytes (the order of the
# calls decides, not the line numbers)
ta = snapshot(os.path.join(tmp, "twins_a.pickle"), [
    (100 * MiB, stack(("/w/train.py", 10, "train"), ("/w/model.py", 54, "forward"))),
    (300 * MiB, stack(("/w/train.py", 20, "train"), ("/w/model.py", 54, "forward")))])
tb = snapshot(os.path.join(tmp, "twins_b.pickle"), [
    (100 * MiB, stack(("/w/train.py", 15, "train"), ("/w/model.py", 56, "forward"))),
    (300 * MiB, stack(("/w/train.py", 25, "train"), ("/w/model.py", 56, "forward")))])
rc, out, err = run([TRAINPROF, "mem", "--compare", "--format", "json", ta, tb])
if rc == 0:
    rows = {(r.get("site_a"), r["site"]): (r["a_bytes"], r["b_bytes"]) for r in json.loads(out)["sites"]}
    want = {("/w/train.py:10:train;/w/model.py:54:forward", "/w/train.py:15:train;/w/model.py:56:forward"):
            (100 * MiB, 100 * MiB),
            ("/w/train.py:20:train;/w/model.py:54:forward", "/w/train.py:25:train;/w/model.py:56:forward"):
            (300 * MiB, 300 * MiB)}
    check(rows == want, f"compare twins: {rows}")
else:
    check(False, f"compare twins: exit {rc}: {err}")
# one of the two calls removed, the other left where it was: the same line wins
tc = snapshot(os.path.join(tmp, "twins_c.pickle"), [
    (300 * MiB, stack(("/w/train.py", 20, "train"), ("/w/model.py", 54, "forward")))])
rc, out, err = run([TRAINPROF, "mem", "--compare", "--format", "json", ta, tc])
if rc == 0:
    rows = {r["site"]: (r["a_bytes"], r["b_bytes"], r.get("site_a")) for r in json.loads(out)["sites"]}
    check(rows == {"/w/train.py:20:train;/w/model.py:54:forward": (300 * MiB, 300 * MiB, None),
                   "/w/train.py:10:train;/w/model.py:54:forward": (100 * MiB, 0, None)}, f"compare removed call: {rows}")
else:
    check(False, f"compare removed call: exit {rc}: {err}")
# other functions or files are other sites, whatever their lines
td = snapshot(os.path.join(tmp, "other_d.pickle"), [
    (100 * MiB, stack(("/w/train.py", 10, "train"), ("/w/model.py", 54, "forward_v2"))),
    (300 * MiB, stack(("/w/train.py", 20, "train"), ("/w/model2.py", 54, "forward")))])
rc, out, err = run([TRAINPROF, "mem", "--compare", "--format", "json", ta, td])
check(rc == 0 and len(json.loads(out)["sites"]) == 4 and
      all(r["a_bytes"] == 0 or r["b_bytes"] == 0 for r in json.loads(out)["sites"]), f"compare other functions: {out}")

finish("mem")
