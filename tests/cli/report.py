"""trainprof report: the page holds, unchanged, the JSON that summary, mem
and log print for the same inputs (a number in the report is the number
the CLI prints); it is one file with nothing to fetch; and opened in Debian's
headless Chromium from file:// with the network off (tests/tools/
report_browser.mjs, playwright-core) it draws every chart, shows the expected
number on hover, sorts and filters its tables, with no console error.
Screenshots of each section are kept in BUILD/report-screenshots/ for people
to look at. Inputs: the demo's (two generated GPU ranks, the tiny trainer's
memory snapshot and log) and, with ../shared/data, real traces of 8 ranks and
real snapshots, one with an OOM. Bad inputs: each says which file and why,
with the exit code the other commands use, and never leaves a partial page."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import GENTRACE, SRC, TRAINPROF, check, finish, run, scratch, testdata  # noqa: E402

tmp = scratch("tprof-report-")
BUILD = os.environ.get("TPROF_BUILD_DIR", os.path.join(SRC, "build"))
SHOTS = os.path.join(BUILD, "report-screenshots")
TINY = os.environ.get("TINY_GPT", os.path.join(BUILD, "examples", "tiny_gpt"))
BROWSER = os.path.join(SRC, "tests", "tools", "report_browser.mjs")
shutil.rmtree(SHOTS, ignore_errors=True)


def page_data(path):
    """The data element of a page, as the page's script reads it."""
    html = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="trainprof-data">(.*?)</script>', html, re.S)
    check(m is not None, f"{path}: a data element")
    return json.loads(m.group(1)) if m else {}, html


def cli_json(args):
    rc, out, err = run([TRAINPROF] + args)
    check(rc in (0, 4), f"trainprof {' '.join(args[:3])}: rc {rc}: {err[-300:]}")
    return json.loads(out) if out.strip() else None


def pct1(part, whole):
    return f"{100 * part / whole:.1f}%"


def browse(page, checks, name):
    """The page in headless Chromium: every check of CHECKS must pass."""
    cfile = os.path.join(tmp, name + ".checks.json")
    with open(cfile, "w") as f:
        json.dump(checks, f)
    out = os.path.join(SHOTS, name)
    p = subprocess.run(["node", BROWSER, page, cfile, out], capture_output=True, text=True, timeout=300)
    print(p.stdout.strip())
    check(p.returncode == 0, f"{name}: the page in headless Chromium: rc {p.returncode}: {p.stdout[-1500:]} {p.stderr[-1500:]}")
    return p.stdout


# ---- the demo's inputs: two generated GPU ranks, the recorded snapshot and log ----
ranks = []
for r in range(2):
    path = os.path.join(tmp, f"demo_rank{r}.pt.trace.json")
    subprocess.run([GENTRACE, "--size", "3M", "--rank", str(r), "--world", "2", "--seed", str(r + 1), "-o", path],
                   check=True)
    ranks.append(path)
rec = os.path.join(tmp, "recorded")
log = os.path.join(tmp, "tiny_gpt.log")
with open(log, "w") as lf:
    p = subprocess.run([TINY, os.path.join(SRC, "configs/tiny.yaml"), "--model.n_layer=1", "--model.n_embd=32",
                        "--model.n_head=2", "--model.intermediate=64", "--model.seq_len=32", "--train.batch_size=2",
                        "--train.data=" + os.path.join(SRC, "examples/tiny_gpt/corpus.txt"), "--train.max_steps=6",
                        "--train.profile.enable", "--train.profile.start_step=1", "--train.profile.end_step=3",
                        "--train.profile.with_stack=true", "--train.profile.trace_dir=" + rec],
                       stdout=lf, stderr=subprocess.PIPE, text=True, timeout=300)
check(p.returncode == 0, f"tiny_gpt ran: {p.stderr[-500:]}")
snaps = sorted(os.path.join(rec, f) for f in os.listdir(rec) if f.endswith(".pkl")) if os.path.isdir(rec) else []
check(len(snaps) == 1, f"tiny_gpt wrote one snapshot: {snaps}")
demo = os.path.join(tmp, "demo.html")
rc, out, err = run([TRAINPROF, "report", *ranks, *snaps, log, "-o", demo, "--title", "demo run"])
check(rc == 0, f"report of the demo inputs: rc {rc}: {err}")
check(f"wrote {demo}" in err, f"says what it wrote: {err}")
data, html = page_data(demo)

# one file, nothing fetched: no external script, style, image or link; under 5 MB
check(html.startswith("<!DOCTYPE html>"), "an HTML5 document")
markup = re.sub(r"(<script[^>]*>).*?</script>", r"\1</script>", html, flags=re.S)  # the tags, not the scripts' text
check(markup.count("<script") == 3, f"three inline scripts: the data, the charting library, the page's ({markup.count('<script')})")
check(not re.search(r"<(script|img|iframe)[^>]*\bsrc=|<link\b", markup), "no external script, image or stylesheet")
check("default-src 'none'" in html, "a content security policy that allows no network")
check(os.path.getsize(demo) < 5 << 20, f"the demo page is under 5 MB ({os.path.getsize(demo)} bytes)")
check("<title>demo run</title>" in html, "the title given")

# the data is the commands' own JSON, unchanged
check(data.get("inputs") == {"traces": ranks, "snapshots": snaps, "logs": [log], "base": []},
      f"inputs told apart by content: {data.get('inputs')}")
check(data.get("summary") == cli_json(["summary", "--format", "json", "--top", "20", *ranks]),
      "the page's summary is trainprof summary --format json --top 20")
steps = cli_json(["steps", "--format", "json", *ranks]) or []
check([[(x["number"], x["dur_ns"]) for x in t["steps"]["each"]] for t in data["summary"]["traces"]] ==
      [[(x["number"], x["dur_ns"]) for x in r["steps"]] for r in steps],
      "each step's time in the page (summary's steps.each) is trainprof steps'")
tl_prefix = os.path.join(tmp, "tl")
mem = cli_json(["mem", "--format", "json", "--top", "0", "--timeline", tl_prefix, snaps[0]]) if snaps else None
check(data.get("memory") and data["memory"][0]["result"] == mem, "the page's memory is trainprof mem --format json")
if os.path.exists(tl_prefix + ".json"):
    check(data["memory"][0]["timeline"] == json.load(open(tl_prefix + ".json")),
          "the page's memory timeline is trainprof mem --timeline's JSON")
check(data.get("log") == cli_json(["log", "--format", "json", log]), "the page's log summary is trainprof log")
check(data.get("log_series") == cli_json(["log", "--series", "--format", "json", log]),
      "the page's log series is trainprof log --series")
check(not [f for f in os.listdir(tmp) if f.startswith("demo.html.tmp")], "no temporary file left")
check(not [d for d in os.listdir("/tmp") if d.startswith("trainprof-report.") and
           os.path.getmtime(os.path.join("/tmp", d)) > os.path.getmtime(demo) - 60],
      "the memory timeline's temporary directory is removed")

# in the browser: one known number on hover (rank 0's compute share, from
# the summary's own nanoseconds), a sort, a filter, every chart drawn
summary = data.get("summary") or {"traces": []}
t0 = summary["traces"][0]["temporal"] if summary["traces"] else {"compute_ns": 0, "span_ns": 1}
anom = {a["metric"] for a in (data.get("log") or {"files": [{}]})["files"][0].get("anomalies", [])}
series_keys = []
for row in (data.get("log_series") or {"files": [{"series": []}]})["files"][0]["series"]:
    for k in row:
        if k != "step" and k not in series_keys:
            series_keys.append(k)
checks = {
    "sections": ["headline", "steps", "gpu", "communication", "critical-path", "ranks", "memory", "logs"],
    "charts": ["chart-steps", "chart-phases", "chart-gpu", "chart-comm", "chart-comm-types", "chart-critical-path",
               "chart-memory-0-0",
               "chart-log-0-loss"] + [f"chart-log-0-m{i}" for i, k in enumerate(series_keys) if k == "mfu"],
    "hover": [{"chart": "chart-gpu", "series": 0, "x": 0, "y": 100 * t0["compute_ns"] / t0["span_ns"] / 2,
               "expect": pct1(t0["compute_ns"], t0["span_ns"])}],
    "sort": [{"table": "table-kernels", "col": "total_ns"}, {"table": "table-ranks", "col": "mean"}],
    "filter": {"table": "table-kernels", "text": "nccl"},
}
browse(demo, checks, "demo")

# the recorder's own run (trace and snapshot on one clock): its ProfilerSteps
# mark the memory timeline where they start
rec_page = os.path.join(tmp, "recorded.html")
rc, out, err = run([TRAINPROF, "report", rec, "-o", rec_page])
check(rc == 0, f"report of the recorder's directory: rc {rc}: {err}")
if rc == 0:
    d, _ = page_data(rec_page)
    tr = d["summary"]["traces"][0]
    tl = d["memory"][0]["timeline"]["devices"][0]["points"]
    times = [p["time_us"] for p in tl if p["index"] >= 0]
    inside = [s["number"] for s in tr["steps"]["each"]
              if times and times[0] <= (tr["base_time_ns"] + s["ts_ns"]) / 1000 <= times[-1]]
    check(inside, f"the recorder's steps fall inside its snapshot's time span: {tr.get('base_time_ns')}, {times[:1]}")
    browse(rec_page, {"sections": ["memory"], "charts": ["chart-memory-0-0"],
                      "marks": [{"chart": "chart-memory-0-0", "prefix": "step ", "count": len(inside)},
                                {"chart": "chart-memory-0-0", "prefix": "peak", "count": 1}]}, "recorded-run")

# MFU from a model config among the inputs: trainprof mfu at the median
# rank's mean step time (restated here) on the traces' device
llama = os.path.join(tmp, "llama")
os.makedirs(llama)
with open(os.path.join(llama, "config.json"), "w") as f:
    json.dump({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 2048,
               "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32, "num_key_value_heads": 4,
               "vocab_size": 32000, "max_position_embeddings": 2048, "tie_word_embeddings": False}, f)
mfu_page = os.path.join(tmp, "mfu.html")
rc, out, err = run([TRAINPROF, "report", *ranks, llama, "--seqlens", "2048x2", "-o", mfu_page])
check(rc == 0, f"report with a model config: rc {rc}: {err}")
if rc == 0:
    d, _ = page_data(mfu_page)
    means = sorted(t["steps"]["mean_ns"] for t in d["summary"]["traces"] if t["steps"]["count"])
    step = means[(len(means) - 1) // 2]
    device = d["summary"]["roofline_device"]["device"]
    want = cli_json(["mfu", "--config", os.path.join(llama, "config.json"), "--seqlens", "2048x2", "--step-time",
                     f"{step / 1e9:.9f}", "--device", device, "--format", "json"])
    check(d.get("mfu_step_time_ns") == step and d.get("mfu") == want,
          f"the page's MFU is trainprof mfu's at the median rank's step time: {d.get('mfu')} vs {want}")
    if want:
        browse(mfu_page, {"sections": ["headline"],
                          "texts": [{"selector": "#mfu", "expect": f"MFU {100 * want['steps'][0]['mfu']:.1f}%"}]}, "mfu")

# before / after: --vs BASE... is trainprof diff BASE... --vs the run's traces
vs_page = os.path.join(tmp, "vs.html")
rc, out, err = run([TRAINPROF, "report", ranks[1], log, "-o", vs_page, "--vs", ranks[0]])
check(rc == 0, f"a before/after report: rc {rc}: {err}")
if rc == 0:
    d, _ = page_data(vs_page)
    check(d["inputs"]["base"] == [ranks[0]] and d["inputs"]["traces"] == [ranks[1]], f"the sides: {d['inputs']}")
    check(d.get("diff") == cli_json(["diff", "--format", "json", ranks[0], "--vs", ranks[1]]),
          "the page's comparison is trainprof diff BASE --vs RUN")
    step = next(m for m in d["diff"]["metrics"] if m["name"] == "step_time")
    browse(vs_page, {"sections": ["headline", "before-after", "logs"], "charts": ["chart-diff"],
                     "hover": [{"chart": "chart-diff", "series": 0, "x": step["delta_pct"] / 2, "y": 0,
                                "expect": f"step_time: "}],
                     "sort": [{"table": "table-diff-metrics", "col": "delta_pct"}]}, "before-after")
rc, out, err = run([TRAINPROF, "report", ranks[1], "-o", vs_page, "--vs"])
check(rc == 2 and "--vs" in err, f"--vs with no base: exit 2 ({rc}): {err}")
rc, out, err = run([TRAINPROF, "report", log, "-o", vs_page, "--vs", ranks[0]])
check(rc == 2 and "--vs" in err, f"--vs without the run's traces: exit 2 ({rc}): {err}")

# many ranks: past 64, the heatmap and bars show bins of consecutive ranks;
# the ranks table keeps every one
many = os.path.join(tmp, "many")
os.makedirs(many)
for r in range(130):
    subprocess.run([GENTRACE, "--steps", "1", "--layers", "1", "--rank", str(r), "--world", "130", "--seed",
                    str(r + 1), "-o", os.path.join(many, f"rank{r}.pt.trace.json")], check=True)
many_page = os.path.join(tmp, "many.html")
rc, out, err = run([TRAINPROF, "report", many, "-o", many_page])
check(rc == 0, f"report of 130 ranks: rc {rc}: {err}")
if rc == 0:
    out = browse(many_page, {"sections": ["steps", "gpu", "ranks"], "charts": ["chart-steps", "chart-gpu"],
                             "categories": [{"chart": "chart-steps", "axis": "yAxis", "min": 33, "max": 64},
                                            {"chart": "chart-gpu", "axis": "xAxis", "min": 33, "max": 64}],
                             "sort": [{"table": "table-ranks", "col": "mean"}]}, "130-ranks")
    check("(130 rows)" in out, "the ranks table keeps all 130 ranks")

# 10,000 ranks (tiny ones written here: a step, a kernel and an AllReduce
# that ends at the same time on every rank; rank 7777 computing six times
# longer, so the others wait for it: the straggler): 64 bins of 157 ranks
# in the heatmap, the bin holding the straggler named so, every rank in the
# ranks table
huge = os.path.join(tmp, "huge")
os.makedirs(huge)
for r in range(10000):
    kernel = 5000 if r == 7777 else 800 + r % 50
    ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 1000, "dur": 7000},
          {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1100, "dur": 5,
           "args": {"correlation": 1}},
          {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_tn", "pid": 0, "tid": 7, "ts": 1120, "dur": kernel,
           "args": {"device": 0, "stream": 7, "correlation": 1}},
          {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1200, "dur": 5,
           "args": {"correlation": 2}},
          {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 0, "tid": 7,
           "ts": 1120 + kernel, "dur": 7000 - kernel, "args": {"device": 0, "stream": 7, "correlation": 2}}]
    with open(os.path.join(huge, f"rank{r}.json"), "w") as f:
        json.dump({"distributedInfo": {"rank": r, "world_size": 10000}, "traceEvents": ev}, f)
huge_page = os.path.join(tmp, "huge.html")
rc, out, err = run([TRAINPROF, "report", huge, "-o", huge_page])
check(rc == 0, f"report of 10,000 ranks: rc {rc}: {err[-300:]}")
if rc == 0:
    dd, _ = page_data(huge_page)
    check(dd["summary"]["ranks"]["collectives_straggler"] == 7777, f"rank 7777 is the straggler: {dd['summary']['ranks']}")
    out = browse(huge_page, {"sections": ["steps", "gpu", "ranks"], "charts": ["chart-steps", "chart-gpu"],
                             "categories": [{"chart": "chart-steps", "axis": "yAxis", "min": 60, "max": 64,
                                             "named": "rank 7693 .. rank 7849 (straggler)"},
                                            {"chart": "chart-gpu", "axis": "xAxis", "min": 60, "max": 64}],
                             "sort": [{"table": "table-ranks", "col": "compute"}]}, "10000-ranks")
    check("(10000 rows)" in out, "the ranks table keeps all 10,000 ranks")
    print(f"10,000 ranks: a page of {os.path.getsize(huge_page) / 2**20:.1f} MiB")

# ---- bad input: which file, why, the usual exit code, no partial page ----
keep = os.path.join(tmp, "kept.html")
with open(keep, "w") as f:
    f.write("before")
rc, out, err = run([TRAINPROF, "report", *ranks])
check(rc == 2 and "-o REPORT.html" in err, f"no output named: exit 2 ({rc}): {err[:200]}")
config = os.path.join(tmp, "config.json")
with open(config, "w") as f:
    json.dump({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
               "vocab_size": 100, "intermediate_size": 128}, f)
rc, out, err = run([TRAINPROF, "report", ranks[0], config, "-o", keep])
check(rc == 2 and config in err and "--seqlens" in err and "flops" in err,
      f"a model config without --seqlens: exit 2 naming it and what it needs ({rc}): {err}")
rc, out, err = run([TRAINPROF, "report", ranks[0], "--seqlens", "4096", "-o", keep])
check(rc == 2 and "config" in err, f"--seqlens without a config: exit 2 ({rc}): {err}")
check(open(keep).read() == "before", "a failed report leaves the file it would have replaced as it was")
rc, out, err = run([TRAINPROF, "report", "-", "-o", keep])
check(rc == 2 and "standard input" in err, f"stdin: exit 2 ({rc}): {err}")
rc, out, err = run([TRAINPROF, "report", ranks[0], "-o", os.path.join(tmp, "no", "such", "dir", "r.html")])
check(rc == 5, f"an output that cannot be written: exit 5 ({rc}): {err}")
junk = os.path.join(tmp, "junk.bin")
with open(junk, "wb") as f:
    f.write(bytes(range(256)) * 4)
rc, out, err = run([TRAINPROF, "report", junk, "-o", keep])
check(rc == 3 and junk in err, f"a file of no known kind: exit 3 naming it ({rc}): {err}")
# a trace cut short (as a crashed profiler leaves it): the page of what was read, exit 4
cut = os.path.join(tmp, "cut.pt.trace.json")
raw = open(ranks[0], "rb").read()
with open(cut, "wb") as f:
    f.write(raw[: len(raw) * 2 // 3])
cut_page = os.path.join(tmp, "cut.html")
rc, out, err = run([TRAINPROF, "report", cut, "-o", cut_page])
check(rc == 4 and os.path.exists(cut_page), f"a truncated trace: exit 4 with a page ({rc}): {err}")
if os.path.exists(cut_page):
    d, _ = page_data(cut_page)
    check(d["summary"]["traces"][0]["truncated"] is True, "the page says the trace is truncated")
    out = browse(cut_page, {"sections": ["headline", "gpu"], "charts": ["chart-gpu"]}, "truncated")
# an analysis that fails on an input: no page
bad = os.path.join(tmp, "bad.pt.trace.json")
with open(bad, "w") as f:
    f.write('{"traceEvents": [{"ph": "X", "name": 5, "ts": }]}')
rc, out, err = run([TRAINPROF, "report", bad, "-o", keep])
check(rc == 3 and bad in err and open(keep).read() == "before", f"an unreadable trace: exit 3, no page ({rc}): {err}")

# ---- real files of each kind ----
d = testdata()
if d is None:
    print("SKIP (visible): ../shared/data not found: the real traces and snapshots are not reported")
else:
    dlrm = os.path.join(d, "traces/param/et_replay/tests/inputs/dlrm_kineto")
    page = os.path.join(tmp, "dlrm.html")
    rc, out, err = run([TRAINPROF, "report", dlrm, "-o", page])
    check(rc == 0, f"report of the 8 real DLRM ranks (a directory): {rc}: {err}")
    if rc == 0:
        dd, _ = page_data(page)
        check(len(dd["inputs"]["traces"]) == 8, f"8 traces found in the directory: {dd['inputs']}")
        check(dd["summary"] == cli_json(["summary", "--format", "json", "--top", "20", dlrm]),
              "the real ranks' summary is trainprof summary's")
        check(dd["summary"]["collective_waits"] and len(dd["summary"]["collective_waits"]) == 8,
              "each rank's collective waits are in the page")
        browse(page, {"sections": ["headline", "steps", "gpu", "communication", "ranks"],
                      "charts": ["chart-steps", "chart-gpu", "chart-comm", "chart-waits"],
                      "sort": [{"table": "table-ranks", "col": "idle"}, {"table": "table-matched", "col": "wait_ns"}],
                      "texts": [{"selector": "#communication", "expect": "the straggler is rank 4"},
                                {"selector": "#communication", "expect": "late because of its host"}]},
               "dlrm-8-ranks")
    # the same ranks with a real model config (../shared/data/model-configs,
    # Qwen2.5's shape): the headline's MFU is trainprof mfu's at the median
    # rank's mean step time
    qwen = os.path.join(d, "model-configs/qwen25_toy")
    page = os.path.join(tmp, "dlrm-qwen.html")
    rc, out, err = run([TRAINPROF, "report", dlrm, qwen, "--seqlens", "512x4", "--device", "H100", "-o", page])
    check(rc == 0, f"report of the DLRM ranks with a real config: {rc}: {err}")
    if rc == 0:
        dd, _ = page_data(page)
        means = sorted(t["steps"]["mean_ns"] for t in dd["summary"]["traces"] if t["steps"]["count"])
        step = means[(len(means) - 1) // 2]
        want = cli_json(["mfu", "--config", os.path.join(qwen, "config.json"), "--seqlens", "512x4", "--step-time",
                         f"{step / 1e9:.9f}", "--device", "H100", "--format", "json"])
        check(want and dd.get("mfu") == want, f"the real config's MFU is trainprof mfu's: {dd.get('mfu')} vs {want}")
        if want:
            browse(page, {"sections": ["headline"],
                          "texts": [{"selector": "#mfu", "expect": f"MFU {100 * want['steps'][0]['mfu']:.1f}%"}]},
                   "dlrm-qwen-mfu")
    # a real 1.3B model's snapshot, and the simulator's 4 GPUs with an OOM
    # each (no real snapshot here records an OOM action)
    oom = os.path.join(d, "snapshots/synthetic/multi_gpu_oom.pickle")
    big = os.path.join(d, "snapshots/Yiyi-philosophy_LLM-inference/1.3b_snapshot.pickle")
    page = os.path.join(tmp, "snapshots.html")
    rc, out, err = run([TRAINPROF, "report", oom, big, "-o", page])
    check(rc == 0, f"report of two snapshots: {rc}: {err}")
    if rc == 0:
        dd, _ = page_data(page)
        nooms = sum(len(dev.get("ooms", [])) for m in dd["memory"] for dev in m["result"][0]["devices"])
        check(nooms == 4, f"the 4 OOMs are in the page ({nooms})")
        charts = [f"chart-memory-{i}-{j}" for i, m in enumerate(dd["memory"])
                  for j, _ in enumerate(m["result"][0]["devices"]) if m["timeline"]]
        browse(page, {"sections": ["headline", "memory"], "charts": charts}, "real-snapshots")
    tl = os.path.join(d, "traces/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz")
    page = os.path.join(tmp, "tracelens.html")
    rc, out, err = run([TRAINPROF, "report", tl, "-o", page])
    check(rc == 0, f"report of TraceLens's MI300 trace: {rc}: {err}")
    if rc == 0:
        # the roofline: the op with the most direct time among the modelled
        # ones, hovered at its intensity and TFLOP/s, shows its TFLOP/s
        dd, _ = page_data(page)
        modelled = [o for o in dd["summary"]["top_ops"] if o.get("tflops") and o.get("intensity")]
        check(modelled and dd["summary"]["roofline_device"]["device"] == "AMD Instinct MI300X",
              "the MI300X's ops are placed under its roofline")
        top = max(modelled, key=lambda o: o["direct_ns"]) if modelled else {"intensity": 1, "tflops": 1}
        each = dd["summary"]["traces"][0]["steps"]["each"]
        check(each and all(sum(s[p + "_ns"] for p in ("data", "forward", "backward", "optimizer", "other")) == s["dur_ns"]
                           for s in each), f"each step's phases add up to its time: {each[:1]}")
        mods = [m["module"] for m in dd["summary"].get("top_modules", [])]
        check(any(m.startswith("DistributedDataParallel.ResNet.") for m in mods), f"the nn.Modules' table: {mods}")
        browse(page, {"sections": ["headline", "steps", "gpu"],
                      "charts": ["chart-steps", "chart-step-phases", "chart-gpu", "chart-roofline"],
                      "hover": [{"chart": "chart-roofline", "series": 0, "x": top["intensity"], "y": top["tflops"],
                                 "expect": f"{top['tflops']:.1f} TFLOP/s"}],
                      "sort": [{"table": "table-ops", "col": "direct_ns"},
                               {"table": "table-modules", "col": "recompute_direct_ns"}]}, "tracelens-mi300")

finish("report: the commands' JSON in one page that draws in headless Chromium")
