"""trainprof log against an independent Python reading of logs it writes
itself, one per style (JSON lines, VeOmni-style metric dicts and tqdm bars
built from the reference's metric names, llm.c, key-value, Megatron): the
per-step series, the summary statistics and the anomaly rules of
docs/METRICS.md ("trainprof log") recomputed here; CSV, JSON and SVG
validity; exit codes (no metric 3, truncated gzip 4 with results); random
bytes, banners and config dumps are no metrics (exit 3 when nothing else); deep
nesting (a warning, never a crash) and a cut last line (dropped, exit 4)."""
import csv
import gzip
import io
import json
import math
import os
import random
import re
import statistics
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import TRAINPROF, check, finish, run, scratch  # noqa: E402

tmp = scratch("tprof-log-")


def write(name, text, gz=False):
    p = os.path.join(tmp, name)
    data = text.encode()
    with open(p, "wb") as f:
        f.write(gzip.compress(data) if gz else data)
    return p


# ---- the rules, restated -------------------------------------------------

def stats(vals):
    fin = [v for v in vals if math.isfinite(v)]
    out = {"count": len(fin), "nonfinite": len(vals) - len(fin)}
    if fin:
        out.update(mean=sum(fin) / len(fin), p50=statistics.median(fin), min=min(fin), max=max(fin))
    if len(fin) >= 2:
        k = max(1, len(fin) // 10)
        out["warmup"] = k
        out["steady_mean"] = sum(fin[k:]) / (len(fin) - k)
    return out


def role(name):
    low = name.lower()
    last = low.rsplit("/", 1)[-1] if "/" in low and not low.endswith("/s") else low
    if last.startswith("mfu"):
        return "mfu"
    if any(w in low for w in ("tokens_per_second", "tok/s", "tokens/s", "tokens_per_sec")) or \
            last.startswith("throughput"):
        return "throughput"
    if last.startswith("step_time") or "time_per_iteration" in last or "iter_time" in last or last == "dt" \
            or last.startswith("dt("):
        return "step_time"
    if "loss" in last and "scale" not in last:
        return "loss"
    return None


def anomalies(name, series):
    out, win = [], []
    r = role(name)
    for step, v in series:
        if not math.isfinite(v):
            out.append(("nonfinite", name, step))
            continue
        if len(win) >= 5 and r:
            med = statistics.median(win[-20:])
            if med > 0:
                if r == "loss" and v > 1.5 * med:
                    out.append(("loss_spike", name, step))
                if r == "step_time" and v > 2 * med:
                    out.append(("step_time_spike", name, step))
                if r == "mfu" and v < 0.7 * med:
                    out.append(("mfu_drop", name, step))
                if r == "throughput" and v < 0.7 * med:
                    out.append(("throughput_drop", name, step))
        win.append(v)
    return out


def close(a, b):
    if a is None or b is None:
        return a is b
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def compare(path, expect, label):
    """EXPECT: {metric: [(step, value)]}. Checks --series json, the summary
    and the anomalies."""
    rc, out, err = run([TRAINPROF, "log", "--format", "json", "--series", path])
    check(rc == 0, f"{label}: exit {rc} {err}")
    if rc:
        return None
    doc = json.loads(out)
    f = doc["files"][0]
    names = [m["name"] for m in f["metrics"]]
    check(set(names) == set(expect), f"{label}: metrics {sorted(names)} != {sorted(expect)}")
    got = {}
    for row in f["series"]:
        for k, v in row.items():
            if k != "step":
                got.setdefault(k, []).append((row["step"], v))
    for name, pts in expect.items():
        want = [(s, v if math.isfinite(v) else None) for s, v in pts]
        check(got.get(name) == want, f"{label}: series of {name}: {got.get(name)} != {want}")
        m = next((m for m in f["metrics"] if m["name"] == name), None)
        if m is None:
            continue
        st = stats([v for _, v in pts])
        for k in ("count", "nonfinite"):
            check(m[k] == st[k], f"{label}: {name} {k} {m[k]} != {st[k]}")
        for k in ("mean", "p50", "min", "max", "steady_mean"):
            check(close(m[k], st.get(k)), f"{label}: {name} {k} {m[k]} != {st.get(k)}")
    want_an = sorted(a for name, pts in expect.items() for a in anomalies(name, pts))
    got_an = sorted((a["kind"], a["metric"], a["step"]) for a in f["anomalies"])
    check(got_an == want_an, f"{label}: anomalies {got_an} != {want_an}")
    return f


rng = random.Random(7)

# ---- VeOmni style: tqdm bar (postfix "k: v", 2 decimals, \r redraws) and
# the env metrics as the reference's wandb payload, "step=N:" then a dict ----
N = 60
veomni, expect = [], {}
cons_tok, cons_chunk = 0, 0


def put(name, step, v):
    expect.setdefault(name, []).append((step, v))


bar = []
for s in range(1, N + 1):
    dt = 2.0 + rng.uniform(-0.05, 0.05)
    if s == 30:
        dt = 4.5  # a slow step: MFU and tokens/s drop
    tokens = 16384 * 8
    cons_tok += tokens
    cons_chunk += 16
    ach = 215.68 * 8 * 2.0 / dt
    loss = 2.5 * math.exp(-s / 40) + rng.uniform(0, 0.01)
    if s == 40:
        loss = 5.0
    if s == 45:
        loss = float("nan")
    m = {"flops_achieved(T)": ach, "flops_promised(T)": 7912.0, "mfu": ach / 7912.0,
         "training/avg_effective_len": 8192.0, "training/avg_sample_seq_len": 4096.0,
         "tokens_per_second(M)": tokens / dt / 1e6, "consume_tokens(M)": cons_tok / 1e6,
         "consume_tokens(B)": cons_tok / 1e9, "consumed_chunk_num": cons_chunk,
         "max_memory_allocated(GB)": 61.2, "max_memory_reserved(GB)": 70.5, "cpu_used_memory(GB)": 210.3,
         "cpu_available_memory(GB)": 1750.1, "cpu_memory_usage(%)": 10.7, "num_alloc_retries": 0,
         "training/total_loss": loss, "training/foundation_loss": loss, "training/grad_norm": 0.87,
         "training/lr": 1e-05}
    pct = 100 * s // N
    post = f"total_loss: {loss:.2f}, foundation_loss: {loss:.2f}, grad_norm: 0.87, lr: 0.00"
    bar.append(f"Epoch 1/1: {pct:3d}%|#    | {s}/{N} [00:{s:02d}<05:15,  {dt:.2f}s/it, {post}]")
    if s % 10 == 0 or s == N:  # tqdm flushes a line now and then; \r redraws in between
        veomni.append("\r".join(bar))
        bar = []
    veomni.append(f"step={s}:")
    veomni.append("{" + ", ".join(f"'{k}': {v!r}" for k, v in m.items()) + "}")
    for k, v in m.items():
        put(k, s, float(v))
    put("step_time(s)", s, float(f"{dt:.2f}"))
    for k in ("total_loss", "foundation_loss"):
        put(k, s, float(f"{loss:.2f}") if math.isfinite(loss) else loss)
    put("grad_norm", s, 0.87)
    put("lr", s, 0.0)
veomni.append("VRAM usage after epoch 1: cur 61.20GB, max 70.50GB.")
p = write("veomni.log", "\n".join(veomni) + "\n")
f = compare(p, expect, "veomni")
if f:
    kinds = {(a["kind"], a["metric"], a["step"]) for a in f["anomalies"]}
    for want in (("mfu_drop", "mfu", 30), ("throughput_drop", "tokens_per_second(M)", 30),
                 ("step_time_spike", "step_time(s)", 30), ("loss_spike", "training/total_loss", 40),
                 ("nonfinite", "training/total_loss", 45)):
        check(want in kinds, f"veomni: anomaly {want} missing")
    check(f["lines_by_format"]["json"] == N and f["lines_by_format"]["tqdm"] == N,
          f"veomni: formats {f['lines_by_format']}")

# ---- JSON lines ------------------------------------------------------------
lines, expect = [], {}
for s in range(0, 30):
    loss = 3.0 - 0.01 * s
    lines.append(json.dumps({"step": s, "loss": loss, "lr": 3e-4 * (s + 1) / 30, "tag": "x",
                             "eval": {"acc": s / 100}}))
    expect.setdefault("loss", []).append((s, loss))
    expect.setdefault("lr", []).append((s, 3e-4 * (s + 1) / 30))
    expect.setdefault("eval/acc", []).append((s, s / 100))
compare(write("jsonl.log", "\n".join(lines) + "\n"), expect, "jsonl")
# a JSON-lines log whose first record is the run's config is still a log
cfg = json.dumps({"model_type": "llama", "vocab_size": 32000, "hidden_size": 4096})
compare(write("jsonl_cfg.log", cfg + "\n" + "\n".join(lines) + "\n"), expect, "jsonl after a config record")

# ---- llm.c -----------------------------------------------------------------
lines, expect = [], {}
for s in range(1, 41):
    ms = 1234.5 if s != 25 else 3000.0
    mfu = 45.1 if s != 25 else 20.0
    tok = 500000 * 1234.5 / ms
    loss = 10.9 - 0.1 * s
    lines.append(f"step {s:4d}/40 | loss {loss:.6f} (+0.00z)| norm {1.5:6.4f} (+0.00z)| lr {6e-4:.2e} | "
                 f"{ms:.2f} ms | {mfu:.1f}% bf16 MFU | {tok:.0f} tok/s")
    for k, v in (("loss", float(f"{loss:.6f}")), ("norm", 1.5), ("lr", 6e-4), ("step_time(ms)", float(f"{ms:.2f}")),
                 ("mfu", float(f"{mfu:.1f}") / 100), ("tokens_per_second", float(f"{tok:.0f}"))):
        expect.setdefault(k, []).append((s, v))
lines.insert(0, "Using device cuda, 1 GPU")
f = compare(write("llmc.log", "\n".join(lines) + "\n"), expect, "llm.c")

# ---- key-value, with ANSI colours, scientific notation, units, inf -----------
lines, expect = [], {}
for s in range(1, 21):
    loss = 1e-1 * (20 - s) + 0.5
    v = "inf" if s == 7 else repr(loss)
    lines.append(f"\x1b[32m2024-05-01 12:00:{s:02d}\x1b[0m INFO step {s}: loss={v}, time={0.5 * s:.1f}s "
                 f"mem: 3.5e+01GB")
    expect.setdefault("loss", []).append((s, float(v)))
    expect.setdefault("time(s)", []).append((s, float(f"{0.5 * s:.1f}")))
    expect.setdefault("mem(GB)", []).append((s, 35.0))
    lines.append("INFO saving checkpoint to /tmp/x")
compare(write("kv.log", "\n".join(lines) + "\n"), expect, "kv")

# ---- Megatron ----------------------------------------------------------------
lines, expect = [], {}
for s in range(10, 110, 10):
    lines.append(f" iteration {s:8d}/     100 | consumed samples: {s * 512:10d} | elapsed time per iteration (ms): "
                 f"{1200.0 + s:.1f} | learning rate: {1e-4:.6E} | global batch size:   512 | lm loss: "
                 f"{2.0 + 1 / s:.6E} | loss scale: 1.0 |")
    for k, v in (("consumed_samples", s * 512), ("elapsed_time_per_iteration(ms)", float(f"{1200.0 + s:.1f}")),
                 ("learning_rate", float(f"{1e-4:.6E}")), ("global_batch_size", 512),
                 ("lm_loss", float(f"{2.0 + 1 / s:.6E}")), ("loss_scale", 1.0)):
        expect.setdefault(k, []).append((s, float(v)))
compare(write("megatron.log", "\n".join(lines) + "\n"), expect, "megatron")

# ---- CSV summary and series ------------------------------------------------
p_llmc = os.path.join(tmp, "llmc.log")
p_json = os.path.join(tmp, "jsonl.log")
rc, out, err = run([TRAINPROF, "log", "--format", "csv", p_llmc, p_json])
rows = list(csv.DictReader(io.StringIO(out)))
check(rc == 0 and len(rows) == 6 + 3, f"csv summary: rc {rc}, {len(rows)} rows")
r = next(r for r in rows if r["file"] == p_llmc and r["metric"] == "step_time(ms)")
ms = [1234.5] * 39 + [3000.0]
check(float(r["max"]) == 3000.0 and close(float(r["mean"]), sum(ms) / 40) and r["warmup"] == "4",
      f"csv summary row {r}")
rc, out, err = run([TRAINPROF, "log", "--format", "csv", "--series", p_llmc, p_json])
rows = list(csv.reader(io.StringIO(out)))
hdr = rows[0]
check(hdr[:2] == ["file", "step"] and len(hdr) == 2 + 6 + 3, f"csv series header {hdr}")
check(all(len(r) == len(hdr) for r in rows), "csv series: ragged rows")
check(len(rows) == 1 + 40 + 30, f"csv series: {len(rows)} rows")
r5 = next(r for r in rows[1:] if r[0] == p_llmc and r[1] == "5")
check(float(r5[hdr.index("loss")]) == 10.4 and r5[hdr.index("eval/acc")] == "", f"csv series row {r5}")

# ---- table -------------------------------------------------------------------
rc, out, err = run([TRAINPROF, "log", p_llmc])
check(rc == 0 and "step_time_spike" in out and "mfu_drop" in out and "llm.c" in out, f"table: {out[:400]}")

# ---- SVG -------------------------------------------------------------------
svg = os.path.join(tmp, "plot.svg")
rc, out, err = run([TRAINPROF, "log", "--svg", svg, os.path.join(tmp, "veomni.log"), p_llmc])
check(rc == 0, f"svg: exit {rc} {err}")
try:
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    check(root.tag == ns + "svg", f"svg root {root.tag}")
    polys = root.findall(f".//{ns}polyline")
    check(len(polys) == 6, f"svg: {len(polys)} polylines, want 3 panels x 2 logs")
    for pl in polys:
        pts = pl.get("points").split()
        check(all(len(p.split(",")) == 2 for p in pts) and pts, "svg: points")
    texts = [t.text or "" for t in root.iter(f"{ns}text")]
    numeric = [t for t in texts if re.fullmatch(r"-?[0-9.e+-]+", t)]
    check(len(numeric) >= 3 * 5, f"svg: tick labels on both axes of each panel ({len(numeric)})")
    check(texts.count("step") == 3, "svg: each panel's x axis is named")
    check(any(t.startswith("MFU: ") for t in texts) and any(t.startswith("loss: ") for t in texts),
          "svg: the panels name the metric drawn")
    # the anomalies of the metrics drawn, each a ring whose title names it
    rc2, out2, _ = run([TRAINPROF, "log", "--format", "json", os.path.join(tmp, "veomni.log"), p_llmc])
    drawn = [set(re.findall(r"(?:: |, )([^,]+)", t)) for t in texts if t.startswith(os.path.join(tmp, ""))]
    want = sorted((a["kind"], a["step"]) for f, names in zip(json.loads(out2)["files"], drawn)
                  for a in f["anomalies"] if a["metric"] in names)
    rings = sorted((c.find(f"{ns}title").text.split(" at step ")[0], int(c.find(f"{ns}title").text.split(" at step ")[1]))
                   for c in root.iter(f"{ns}circle"))
    check(want and rings == want, f"svg: the anomalies of the metrics drawn are marked: {rings} vs {want}")
except ET.ParseError as e:
    check(False, f"svg does not parse: {e}")
# downsampling: 50000 points become at most 2000 per line, spikes kept
big = "\n".join(f"step {s} loss={(9.0 if s == 31337 else 1.0)}" for s in range(1, 50001)) + "\n"
rc, out, err = run([TRAINPROF, "log", "--svg", svg, write("big.log", big)])
pl = ET.parse(svg).getroot().findall(".//{http://www.w3.org/2000/svg}polyline")
ys = [float(p.split(",")[1]) for p in pl[0].get("points").split()] if pl else []
check(rc == 0 and 0 < len(ys) <= 2000 and len(set(ys)) == 2, f"svg downsampled: {len(ys)} points")

# ---- exit codes ------------------------------------------------------------
rc, out, err = run([TRAINPROF, "log", write("none.log", "hello\nworld 12:00\n")])
check(rc == 3 and "none.log" in err and "no metric" in err, f"no metric: rc {rc} {err}")
rc, out, err = run([TRAINPROF, "log", os.path.join(tmp, "missing.log")])
check(rc == 3 and "missing.log" in err, f"missing: rc {rc} {err}")
rc, out, err = run([TRAINPROF, "log"])
check(rc == 2, f"no file: rc {rc}")
rc, out, err = run([TRAINPROF, "log", "--format", "xml", p_llmc])
check(rc == 2, f"bad format: rc {rc}")
# a good file next to a bad one: the good one is still reported, exit 3
rc, out, err = run([TRAINPROF, "log", "--format", "json", p_llmc, os.path.join(tmp, "none.log")])
check(rc == 3 and len(json.loads(out)["files"]) == 1, f"mixed: rc {rc}")
# truncated gzip: exit 4, results for the lines before the cut
text = "".join(f"step {s} loss={s}\n" for s in range(1, 20001))
gz = gzip.compress(text.encode())
p = os.path.join(tmp, "cut.log.gz")
with open(p, "wb") as fh:
    fh.write(gz[: len(gz) // 2])
rc, out, err = run([TRAINPROF, "log", "--format", "json", p])
check(rc == 4 and "truncated" in err, f"truncated: rc {rc} {err}")
if rc == 4:
    m = json.loads(out)["files"][0]["metrics"][0]
    check(0 < m["count"] < 20000 and m["min"] == 1, f"truncated: {m['count']} points")
# whole gzip and stdin
rc, out, err = run([TRAINPROF, "log", "--format", "json", write("ok.log.gz", text, gz=True)])
check(rc == 0 and json.loads(out)["files"][0]["metrics"][0]["count"] == 20000, f"gzip: rc {rc}")
rc, out, err = run([TRAINPROF, "log", "--format", "json", "-"], stdin=text.encode())
check(rc == 0 and json.loads(out)["files"][0]["metrics"][0]["max"] == 20000, f"stdin: rc {rc}")
# malformed lines among good ones: skipped and counted, never fatal; a log
# that stops in the middle of its last line drops that line (exit 4)
mixed = "".join(f"step {s} loss={s / 10}\n" + ("{\"step\": oops\n" if s % 3 == 0 else "") +
                ("|||| ???\n" if s % 5 == 0 else "") for s in range(1, 31))
p = write("mixed.log", mixed + "step 31 loss=3.1 | step_t")
rc, out, err = run([TRAINPROF, "log", "--format", "json", p])
check(rc == 4 and f"{p}: line 47: the last line was cut" in err, f"malformed lines are not fatal: rc {rc} {err}")
if rc == 4:
    f0 = json.loads(out)["files"][0]
    loss = [m for m in f0["metrics"] if m["name"] == "loss"][0]
    check(loss["count"] == 30 and close(loss["max"], 3.0), f"every good line read, the cut one dropped: {loss}")
    check(f0["lines_without_metric"] == 10 + 6, f"malformed lines counted: {f0['lines_without_metric']}")

# ---- deep nesting: a value nested deeper than 64 levels is a warning ---------
# (a 600 KB line of '[' or '(' under the 1 MiB line limit overflowed the stack)
for ch in "[(":
    text = ("{\"step\": 1, \"loss\": 2.0}\n" + "{\"step\": 2, \"cfg\": " + ch * 600000 + "\n" +
            "{\"step\": 3, \"loss\": 1.5, \"v\": " + ch * 63 + "}\n" +  # not closed: malformed, quietly
            "{\"step\": 4, \"loss\": 1.25}\n")
    p = write(f"deep{ord(ch)}.log", text)
    rc, out, err = run([TRAINPROF, "log", "--format", "json", p])
    check(rc == 0, f"deep {ch}: rc {rc} {err[-300:]}")
    check(f"{p}: line 2: a value nested deeper than 64 levels" in err and err.count("warning") == 1,
          f"deep {ch}: warning {err[-300:]}")
    if rc == 0:
        f0 = json.loads(out)["files"][0]
        loss = [m for m in f0["metrics"] if m["name"] == "loss"][0]
        check(loss["count"] == 2 and loss["min"] == 1.25 and f0["lines_without_metric"] == 2,
              f"deep {ch}: the rest of the log is read: {f0}")
# exactly at the limit: the dict and 63 lists inside it are read
p = write("deep_ok.log", "{\"step\": 1, \"v\": " + "[" * 63 + "]" * 63 + ", \"loss\": 2.5}\n")
rc, out, err = run([TRAINPROF, "log", "--format", "json", p])
check(rc == 0 and not err and json.loads(out)["files"][0]["metrics"][0]["max"] == 2.5, f"depth 64: rc {rc} {err}")

# ---- the last line without a newline: kept when complete, else dropped -------
head = "".join(json.dumps({"step": s, "loss": 2.0 + s / 100, "lr": 2e-05}) + "\n" for s in range(1, 6))
for last, why in (('{"step": 6, "loss": 2.06, "lr": 2.15e', "a JSON value cut in its exponent"),
                  ('{"step": 6, "loss": 2.06, "lr": 2.15', "a JSON number, maybe 2.15e-05"),
                  ('{"step": 6, "lo', "a JSON key")):
    p = write("cut_json.log", head + last)
    rc, out, err = run([TRAINPROF, "log", "--format", "json", "--series", p])
    check(rc == 4 and f"{p}: line 6: the last line was cut" in err and "dropped" in err and "warning" in err,
          f"cut last line ({why}): rc {rc} {err}")
    if out:
        f0 = json.loads(out)["files"][0]
        lr = [m for m in f0["metrics"] if m["name"] == "lr"][0]
        check(f0["lines"] == 5 and lr["count"] == 5 and lr["min"] == 2e-05 and
              [r["step"] for r in f0["series"]] == [1, 2, 3, 4, 5], f"cut last line ({why}): {f0}")
p = write("cut_kv.log", "step 1 loss: 2.5\nstep 2 loss: 2.15e")
rc, out, err = run([TRAINPROF, "log", "--format", "json", p])
check(rc == 4 and f"{p}: line 2: the last line was cut" in err, f"cut key-value: rc {rc} {err}")
if out:
    names = [m["name"] for m in json.loads(out)["files"][0]["metrics"]]
    check(names == ["loss"], f"cut key-value: a cut number is no metric: {names}")
# complete without a newline: kept, exit 0, no warning
for last in ('{"step": 6, "loss": 2.06, "lr": 2e-05}', "step 6 loss=2.06 lr=2e-05 ",
             "Epoch 1/1: 6%|#    | 6/100 [00:06<05:15,  1.00s/it, loss: 2.06]"):
    p = write("whole.log", head + last)
    rc, out, err = run([TRAINPROF, "log", "--format", "json", p])
    check(rc == 0 and not err, f"complete last line '{last}': rc {rc} {err}")
    if rc == 0:
        loss = [m for m in json.loads(out)["files"][0]["metrics"] if m["name"] == "loss"][0]
        check(loss["count"] == 6 and close(loss["max"], 2.06), f"complete last line '{last}': {loss}")
# a cut gzip: its message, and the cut line named
gz = gzip.compress((head * 2000).encode())
p = os.path.join(tmp, "cut2.log.gz")
with open(p, "wb") as fh:
    fh.write(gz[: len(gz) * 3 // 4])
rc, out, err = run([TRAINPROF, "log", "--format", "json", p])
check(rc == 4 and "truncated" in err, f"cut gzip: rc {rc} {err}")
# binary garbage: counted, no crash, no metric -> 3
rc, out, err = run([TRAINPROF, "log", write("bin.log", "".join(chr(rng.randrange(1, 0x2ff)) for _ in range(5000)))])
check(rc == 3, f"garbage: rc {rc}")
# random bytes are no training log: exit 3 naming the file and what a log
# looks like (key=value pairs found by chance, "U=8", are not metrics)
for seed in range(8):
    r = random.Random(seed)
    p = os.path.join(tmp, f"random{seed}.bin")
    with open(p, "wb") as fh:
        fh.write(bytes(r.randrange(256) for _ in range(200000)))
    rc, out, err = run([TRAINPROF, "log", p])
    check(rc == 3 and f"{p}: no metric found" in err and "step record" in err and "expected lines such as" in err
          and "step 10: loss=2.31" in err and not out, f"random bytes {seed}: rc {rc} {out[:200]} {err[-300:]}")
# banners, config dumps and argparse's Namespace are not metrics: only step
# records (lines that name their step, dicts, tqdm bars, llm.c) give them
lines = ["=" * 60, r"  _____ ___    _   ___ _  _ ", r" |_   _| _ \  /_\ |_ _| \| |", "=" * 60,
         "Namespace(lr=0.0001, batch_size=32, model='gpt2', warmup_steps=100, seed=42, max_steps=1000)",
         "lr: 0.0001", "model.hidden_size = 4096", "model.num_layers: 32", "optimizer.betas = (0.9, 0.95)",
         "==== config: dropout=0.1 ====", "Loaded 12345 samples (seq_len=2048)"]
expect = {}
for s in range(1, 13):
    lines.append(f"step {s}: loss={3 - s / 10:.2f} lr=3e-4")
    expect.setdefault("loss", []).append((s, float(f"{3 - s / 10:.2f}")))
    expect.setdefault("lr", []).append((s, 3e-4))
    if s == 6:
        lines += ["=== saving checkpoint: epoch=1 ===", "eval: accuracy=0.5"]
f = compare(write("banner.log", "\n".join(lines) + "\n"), expect, "banner and config lines")
if f:
    check(f["lines_without_metric"] == 13 and f["lines_by_format"]["key-value"] == 12,
          f"banner and config lines: counted as lines without a metric: {f['lines_without_metric']}")
# a file of config lines only: no training log
rc, out, err = run([TRAINPROF, "log", write("config.log", "\n".join(lines[:11]) + "\n")])
check(rc == 3 and "config.log: no metric found: none of its 11 lines" in err, f"config only: rc {rc} {err}")

finish("trainprof log")
