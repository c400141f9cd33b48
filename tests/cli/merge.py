"""trainprof merge against an independent model of the documented rules
(docs/METRICS.md, merge), written here in Python: every event of every
input is predicted (process name, ts shifted by the rank's offset, ids made
unique, args) and compared with the output as a multiset, on the 8 DLRM
ranks and on generated traces. Also: ordering, flows within their rank,
filters, alignment modes, spilled runs, codecs, ranks from names, gaps and
duplicates, truncated and bad inputs, and the never-overwrite rule."""
import collections
import gzip
import json
import os
import shutil
import zlib

from common import (GENTRACE, TRAINPROF, check, finish, gpu_class, load_exact, need_testdata, run, scratch,
                    us_to_ns, GPU_CATS)

data = need_testdata()
dlrm_dir = os.path.join(data, "traces/param/et_replay/tests/inputs/dlrm_kineto")
dlrm = sorted(os.path.join(dlrm_dir, f) for f in os.listdir(dlrm_dir))
tmp = scratch("tprof-merge-")
STRIDE, ID_STRIDE = 100000, 10**12


def load_any(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    elif raw[:4] == b"\x28\xb5\x2f\xfd":
        import subprocess
        raw = subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout
    import decimal
    return json.loads(raw, parse_float=decimal.Decimal)


def rank_of(doc, path, index):
    di = doc.get("distributedInfo") if isinstance(doc, dict) else None
    if di and "rank" in di:
        return di["rank"]
    import re
    m = re.search(r"rank[-_]?(\d+)", os.path.basename(path), re.I)
    return int(m.group(1)) if m else index


def first_collectives(events):
    out = []
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") in GPU_CATS and "dur" in e \
                and gpu_class(e) == "communication" and us_to_ns(e["dur"]) > 0:
            s = us_to_ns(e["ts"])
            out.append((s, s + us_to_ns(e["dur"]), e["name"]))
    return sorted(out)


def offsets(docs, mode):
    """Per input (in rank order): ns added to its timestamps."""
    if mode == "none" or len(docs) == 1:
        return [0] * len(docs)
    if mode == "collective":
        cs = [first_collectives(d["traceEvents"]) for d in docs]
        for k in range(min(len(c) for c in cs)):
            if len({c[k][2] for c in cs}) == 1:
                return [cs[0][k][1] - c[k][1] for c in cs]
        raise AssertionError("no common collective")
    if mode == "base-time":
        return [docs[0]["baseTimeNanoseconds"] - d["baseTimeNanoseconds"] for d in docs]
    if mode == "first-step":
        steps = [{e["name"]: us_to_ns(e["ts"]) for e in d["traceEvents"]
                  if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")
                  and e.get("cat") not in GPU_CATS | {"gpu_user_annotation"}} for d in docs]
        common = sorted(set.intersection(*(set(s) for s in steps)), key=lambda n: int(n.split("#")[1]))
        return [steps[0][common[0]] - s[common[0]] for s in steps]
    raise AssertionError(mode)


def canon(rank, proc, e, ts_ns):
    d = dict(e)
    d.pop("pid", None)
    d["ts"] = ts_ns
    return json.dumps([rank, proc, d], sort_keys=True, default=str)


def predict(paths, mode="collective", drop_cats=(), min_dur_ns=0, ranks=None):
    """The events the merge should write, as canonical strings, and the offsets."""
    docs = [load_any(p) for p in paths]
    order = sorted(range(len(paths)), key=lambda i: (rank_of(docs[i], paths[i], i), i))
    order = [i for i in order if ranks is None or rank_of(docs[i], paths[i], i) in ranks]
    offs = offsets([docs[i] for i in order], mode)
    want = collections.Counter()
    for pos_in_kept, i in enumerate(order):
        doc, rank = docs[i], rank_of(docs[i], paths[i], i)
        pos = sorted(range(len(paths)), key=lambda j: (rank_of(docs[j], paths[j], j), j)).index(i)
        events = doc["traceEvents"]
        tracks = {(e["pid"], e["tid"]) for e in events if isinstance(e, dict) and e.get("cat") in GPU_CATS
                  and isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int)}
        devices = {p for p, _ in tracks}
        cpu_numeric = []
        for e in events:
            if not isinstance(e, dict):
                continue
            pid, tid = e.get("pid"), e.get("tid")
            gpu = isinstance(pid, int) and isinstance(tid, int) and pid in devices
            if e.get("ph") == "M":
                if str(e.get("name", "")).startswith("process_") or (gpu and (pid, tid) not in tracks):
                    continue
            else:
                if e.get("cat") in drop_cats:
                    continue
                if e.get("ph") == "X" and "dur" in e and us_to_ns(e["dur"]) < min_dur_ns:
                    continue
            if gpu:
                proc = f"rank {rank} / GPU {pid} / stream {tid}"
            elif isinstance(pid, int):
                if pid not in cpu_numeric:
                    cpu_numeric.append(pid)
                proc = f"rank {rank} / CPU" if cpu_numeric[0] == pid else f"rank {rank} / CPU (pid {pid})"
            else:
                proc = f"rank {rank} / {pid if pid else '(no pid)'}"
            d = dict(e)
            if "id" in d and isinstance(d["id"], int):
                d["id"] = pos * ID_STRIDE + d["id"]
            if isinstance(d.get("args"), dict):
                a = dict(d["args"])
                for k in ("correlation", "External id", "external id"):
                    if isinstance(a.get(k), int):
                        a[k] = pos * ID_STRIDE + a[k]
                d["args"] = a
            ts = us_to_ns(e["ts"]) + offs[pos_in_kept] if "ts" in e else None
            want[canon(rank, proc, d, ts)] += 1
    return want, offs


def observed(path):
    doc = load_any(path)
    events = doc["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    got = collections.Counter()
    generated = 0
    for e in events:
        if e.get("ph") == "M" and e.get("name") in ("process_name", "process_sort_index"):
            generated += 1
            continue
        proc = names.get(e["pid"], "?")
        rank = int(proc.split(" ")[1]) if proc.startswith("rank ") else None
        got[canon(rank, proc, e, us_to_ns(e["ts"]) if "ts" in e else None)] += 1
    return doc, got, names, generated


def merge(args, out):
    return run([TRAINPROF, "merge", *args, "-o", out, "--format", "json"])


# ---- the 8 DLRM ranks: every event predicted ----
out = os.path.join(tmp, "dlrm.json.gz")
rc, so, se = merge(dlrm, out)
check(rc == 0, f"merge DLRM exit {rc}: {se}")
rep = json.loads(so)
want, offs = predict(dlrm)
doc, got, names, generated = observed(out)
check(got == want, f"DLRM: {sum((want - got).values())} events missing, {sum((got - want).values())} unexpected; "
      f"e.g. {list((want - got).elements())[:1]} / {list((got - want).elements())[:1]}")
check([r["offset_ns"] for r in rep["ranks"]] == offs, f"DLRM offsets {[r['offset_ns'] for r in rep['ranks']]} != {offs}")
check(rep["align"] == "collective", "DLRM: auto alignment is collective")
check(rep["events"] == sum(want.values()), "report's event count")
check(generated == 2 * len(names), "one process_name and one sort index per process")
# pid namespaces: disjoint per rank, names readable
for pid, n in names.items():
    check(n.startswith(f"rank {pid // STRIDE - 1} / "), f"pid {pid} named {n}")
check(any(n == "rank 3 / GPU 3 / stream 7" for n in names.values()) or
      any(n.startswith("rank 3 / GPU") for n in names.values()), "GPU stream processes named")
check("rank 3 / CPU" in names.values(), "CPU process named")
# time order (after the metadata head)
ts = [us_to_ns(e["ts"]) for e in doc["traceEvents"] if e.get("ph") != "M" and "ts" in e]
check(all(a <= b for a, b in zip(ts, ts[1:])), "events in time order")
# flows stay within their rank, and every input flow survives
flows = collections.defaultdict(set)
for e in doc["traceEvents"]:
    if e.get("ph") in ("s", "t", "f"):
        flows[e["id"]].add(e["pid"] // STRIDE)
check(all(len(v) == 1 for v in flows.values()), "each flow id within one rank")
nflows_in = sum(1 for p in dlrm for e in load_exact(p)["traceEvents"] if e.get("ph") in ("s", "t", "f"))
check(sum(1 for e in doc["traceEvents"] if e.get("ph") in ("s", "t", "f")) == nflows_in, "every flow event kept")
# per-rank metadata kept
tm = doc.get("trainprofMerge", {})
check([r["metadata"]["distributedInfo"]["rank"] for r in tm.get("ranks", [])] == list(range(8)),
      "distributedInfo of every rank kept under trainprofMerge.ranks")
check(all(len(r["metadata"]["deviceProperties"]) == 8 for r in tm.get("ranks", [])), "deviceProperties kept")
# the project's own reader takes the result
rc, so, se = run([TRAINPROF, "info", out])
check(rc == 0 and "events" in so, f"trainprof info on the merged trace: {rc} {se}")

# ---- the token path (every value re-serialized) writes the same events ----
out_t = os.path.join(tmp, "dlrm-token.json")
rc, so, se = merge(["--token-path", *dlrm], out_t)
check(rc == 0 and observed(out_t)[1] == want, f"--token-path: same events as predicted: {rc} {se}")
check(json.loads(open(out_t).read()) == json.loads(gzip.open(out).read()), "token path and fast path: same JSON")

# ---- spilling sorted runs gives the same bytes ----
out_small = os.path.join(tmp, "dlrm-spill.json")
rc, so, se = run([TRAINPROF, "merge", *dlrm, "-o", out_small, "--mem-budget", "1M", "--format", "json"])
check(rc == 0 and json.loads(so)["runs_spilled"] >= 4, f"small budget spills runs: {rc} {so[:200]}")
check(open(out_small, "rb").read() == gzip.open(out).read(), "spilled merge identical to the in-memory one")
check(not [f for f in os.listdir(tmp) if ".tmp." in f or "merge-run" in f], "no temporary files left")

# ---- the compressed file is the same byte for byte whatever the threads ----
# (gzip: 1 MiB pieces compressed on worker threads, joined into one member;
# the 6 MiB of JSON here make several pieces)
for ext in ("gz", "zst"):
    outs = []
    for threads in (1, 2, 3):
        o = os.path.join(tmp, f"dlrm-t{threads}.json.{ext}")
        rc, so, se = run([TRAINPROF, "merge", *dlrm, "-o", o, "--threads", str(threads)])
        check(rc == 0, f"--threads {threads} .{ext}: {rc} {se}")
        outs.append(open(o, "rb").read())
    check(outs[0] == outs[1] == outs[2], f".{ext} output identical for 1, 2 and 3 threads")
    if ext == "gz":
        d = zlib.decompressobj(31)
        body = d.decompress(outs[1])
        check(d.eof and not d.unused_data and body == gzip.open(out).read(),
              "the threaded gzip output is one member with the same JSON")

# ---- zstd output ----
out_z = os.path.join(tmp, "dlrm.json.zst")
rc, so, se = merge(dlrm, out_z)
check(rc == 0 and open(out_z, "rb").read(4) == b"\x28\xb5\x2f\xfd", "zstd output by extension")
if shutil.which("zstd"):
    check(observed(out_z)[1] == want, "zstd output has the same events")

# ---- filters ----
out_f = os.path.join(tmp, "filtered.json")
rc, so, se = merge(["--ranks", "0-2,5", "--drop-cat", "cuda_runtime,ac2g", "--min-dur", "2us", *dlrm], out_f)
check(rc == 0, f"filtered merge: {se}")
want_f, _ = predict(dlrm, drop_cats=("cuda_runtime", "ac2g"), min_dur_ns=2000, ranks={0, 1, 2, 5})
docf, got_f, names_f, _ = observed(out_f)
check(got_f == want_f, f"filters: {sum((want_f - got_f).values())} missing, {sum((got_f - want_f).values())} unexpected")
check({int(n.split()[1]) for n in names_f.values()} == {0, 1, 2, 5}, "--ranks keeps only those ranks")

# ---- alignment modes ----
for mode in ("none", "collective"):
    o = os.path.join(tmp, f"align-{mode}.json")
    rc, so, se = merge(["--align", mode, *dlrm[:3]], o)
    w, offs_m = predict(dlrm[:3], mode=mode)
    check(rc == 0 and observed(o)[1] == w, f"--align {mode}: events and shifted times")
    check([r["offset_ns"] for r in json.loads(so)["ranks"]] == offs_m, f"--align {mode} offsets")
rc, so, se = merge(["--align", "base-time", *dlrm[:2]], os.path.join(tmp, "bt.json"))
check(rc == 2 and "baseTimeNanoseconds" in se, f"--align base-time without base times is a usage error: {rc} {se}")

gen = []
for r in range(3):
    p = os.path.join(tmp, f"gen_rank{r}.json")
    rc, _, se = run([GENTRACE, "--size", "6M", "--seed", str(11 + r), "--rank", str(r), "--world", "3",
                     "--steps", "4", "--layers", "2", "-o", p])
    check(rc == 0, f"gentrace: {se}")
    gen.append(p)
for mode in ("first-step", "base-time", "collective"):
    o = os.path.join(tmp, f"gen-{mode}.json.gz")
    rc, so, se = merge(["--align", mode, *gen], o)
    w, offs_m = predict(gen, mode=mode)
    check(rc == 0 and observed(o)[1] == w, f"generated, --align {mode}: {rc} {se}")
    if mode == "collective":
        o2 = os.path.join(tmp, "gen-token.json")
        rc, so2, se = merge(["--align", mode, "--token-path", *gen], o2)
        check(rc == 0 and load_any(o2) == load_any(o), "generated: token path and fast path write the same JSON")
    check([r["offset_ns"] for r in json.loads(so)["ranks"]] == offs_m, f"generated --align {mode} offsets")

# ---- --steps: events overlapping the window; GPU work launched in it ----
o = os.path.join(tmp, "steps.json")
rc, so, se = merge(["--steps", "11..12", "--align", "none", *gen], o)
check(rc == 0, f"--steps: {se}")
ds = load_any(o)
for i, p in enumerate(gen):
    src = load_exact(p)["traceEvents"]
    st = {e["name"]: (us_to_ns(e["ts"]), us_to_ns(e["ts"]) + us_to_ns(e["dur"])) for e in src
          if e.get("ph") == "X" and e.get("cat") == "user_annotation" and str(e.get("name")).startswith("ProfilerStep#")}
    if not st:
        st = {e["name"]: (us_to_ns(e["ts"]), us_to_ns(e["ts"]) + us_to_ns(e["dur"])) for e in src
              if e.get("ph") == "X" and str(e.get("name")).startswith("ProfilerStep#") and e.get("cat") not in GPU_CATS}
    lo, hi = st["ProfilerStep#11"][0], st["ProfilerStep#12"][1]
    cpu = [e for e in ds["traceEvents"] if e.get("ph") == "X" and e["pid"] // STRIDE - 1 == i
           and e.get("cat") not in GPU_CATS and e.get("cat") != "gpu_user_annotation"]
    check(cpu and all(us_to_ns(e["ts"]) + us_to_ns(e.get("dur", 0)) >= lo and us_to_ns(e["ts"]) <= hi for e in cpu),
          f"rank {i}: CPU events overlap steps 11..12")
    kept_steps = sorted({e["name"] for e in cpu if str(e.get("name")).startswith("ProfilerStep#")})
    check(kept_steps == ["ProfilerStep#11", "ProfilerStep#12"], f"rank {i}: steps kept {kept_steps}")
    ks = [e for e in ds["traceEvents"] if e.get("cat") == "kernel" and e["pid"] // STRIDE - 1 == i]
    check(ks and min(us_to_ns(e["ts"]) + us_to_ns(e["dur"]) for e in ks) >= lo, f"rank {i}: kernels after the window start")

# ---- ranks from file names, by order, gaps and duplicates ----
d0 = load_exact(dlrm[0])
del d0["distributedInfo"]
named = os.path.join(tmp, "job_rank5_x.json")
plain = os.path.join(tmp, "plain.json")
for p in (named, plain):
    with open(p, "w") as f:
        json.dump(d0, f, default=str)
rc, so, se = merge([named, plain, dlrm[3]], os.path.join(tmp, "names.json"))
r = {x["file"]: x for x in json.loads(so)["ranks"]} if rc == 0 else {}
check(r.get(named, {}).get("rank") == 5 and r[named]["rank_from"] == "file name", "rank from the file name")
check(r.get(plain, {}).get("rank") == 1 and r[plain]["rank_from"] == "argument order", "rank from the argument order")
check("missing" in se and "0,2,4,6,7" in se, f"gaps reported: {se}")
dup = os.path.join(tmp, "copy_of_rank0.json")
shutil.copy(dlrm[0], dup)
rc, so, se = merge([dlrm[0], dup], os.path.join(tmp, "dup.json"))
check(rc == 0 and "appears twice" in se, f"duplicate rank reported: {se}")
pids = {e["pid"] // STRIDE for e in load_any(os.path.join(tmp, "dup.json"))["traceEvents"]}
check(pids == {1, 2}, "duplicates under separate pids")

# ---- truncated input: merged up to the cut, exit 4 ----
cut = os.path.join(tmp, "cut_rank1.json.gz")
raw = gzip.compress(open(dlrm[1], "rb").read())
open(cut, "wb").write(raw[: len(raw) * 2 // 3])
out_c = os.path.join(tmp, "cut.json")
rc, so, se = merge([dlrm[0], cut], out_c)
check(rc == 4 and "ended early" in se, f"truncated input exits 4 with a warning: {rc} {se}")
rcut = [x for x in json.loads(so)["ranks"] if x["file"] == cut][0] if so else {}
check(rcut.get("truncated") == 1 and rcut.get("events_out", 0) > 1000, "the truncated rank's events are merged")
load_any(out_c)  # valid JSON

# ---- a metadata event without a string name is kept; ids out of range counted once each ----
odd = os.path.join(tmp, "odd_rank0.json")
with open(odd, "w") as f:
    f.write('{"traceEvents":[{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"x"}},'
            '{"ph":"M","name":5,"pid":1,"tid":7,"args":{}},'
            '{"ph":"s","id":2000000000000,"pid":1,"tid":1,"ts":1,"cat":"ac2g","name":"ac2g"},'
            '{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":2,"dur":1,'
            '"args":{"correlation":3000000000000,"External id":4}}]}')
rc, so, se = merge([odd], os.path.join(tmp, "odd.json"))
r0 = json.loads(so)["ranks"][0] if rc == 0 else {}
check(rc == 0 and r0.get("events_out") == 3 and r0.get("dropped") == 1,
      f"only the process_name event dropped (a later event without a string name kept): {rc} {r0}")
check(r0.get("ids_unchanged") == 2, f"two ids beyond 10^12 kept and counted once: {r0.get('ids_unchanged')}")

# ---- a file name that is not UTF-8 and a long non-ASCII collective name (its note is cut) ----
def coll_trace(rank, end_us):
    name = "ncclKernel_Ünïcödé_" + "é" * 60
    return json.dumps({"distributedInfo": {"rank": rank, "world_size": 2}, "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": end_us - 5, "dur": 5,
         "args": {"device": 0, "stream": 7}}]})
odd_dir = os.fsencode(tmp)
for r in (0, 1):
    with open(os.path.join(odd_dir, b"r%d_\xff\xfe.json" % r), "w") as f:
        f.write(coll_trace(r, 100 + 7 * r))
odd_out = os.path.join(tmp, "odd-names.json")
rc = __import__("subprocess").run([os.fsencode(TRAINPROF), b"merge", os.path.join(odd_dir, b"r0_\xff\xfe.json"),
                                   os.path.join(odd_dir, b"r1_\xff\xfe.json"), b"-o", os.fsencode(odd_out)],
                                  capture_output=True).returncode
check(rc == 0, f"merge of oddly named files: {rc}")
try:
    dd = json.loads(open(odd_out, "rb").read().decode("utf-8"))
    check(dd["trainprofMerge"]["align"] == "collective" and "\ufffd" in dd["trainprofMerge"]["ranks"][0]["file"],
          "invalid bytes in names become U+FFFD; the output is valid UTF-8 JSON")
except (ValueError, KeyError) as ex:
    check(False, f"output not valid UTF-8 JSON: {ex}")
rc, so, se = run([TRAINPROF, "info", odd_out])
check(rc == 0, f"trainprof info reads it: {se}")

# ---- bad input, never overwriting an input ----
bad = os.path.join(tmp, "bad.json")
open(bad, "w").write('{"traceEvents":[{"ph":"X","ts":1,}]}')
out_b = os.path.join(tmp, "bad-out.json")
rc, so, se = merge([dlrm[0], bad], out_b)
check(rc == 3 and "bad.json" in se and "byte" in se, f"bad input: exit 3 naming file and byte: {rc} {se}")
check(not os.path.exists(out_b), "no output after an error")
before = open(dlrm[0], "rb").read()
copy0 = os.path.join(tmp, "in0.json")
shutil.copy(dlrm[0], copy0)
rc, so, se = merge([copy0, dlrm[1]], copy0)
check(rc == 2 and "never overwritten" in se and open(copy0, "rb").read() == before, "the output may not be an input")
check(not [f for f in os.listdir(tmp) if ".tmp." in f], "no temporary files left after errors")

finish("merge")
