"""trainprof summary gives the same numbers as the analysis commands (each
checked independently in its own test), on several ranks and on traces that
lack parts (no GPU, no steps, no rank, Ascend bare array)."""
import csv
import json
import os

from common import TRAINPROF, check, finish, need_testdata, run

data = need_testdata()
T = os.path.join(data, "traces")
H = os.path.join(T, "HolisticTraceAnalysis", "tests", "data")
dlrm_dir = os.path.join(T, "param/et_replay/tests/inputs/dlrm_kineto")
sets = [sorted(os.path.join(dlrm_dir, f) for f in os.listdir(dlrm_dir)),
        [os.path.join(H, "trace_filter", f"sampled_rank-{i}.json.gz") for i in (0, 1)],
        [os.path.join(H, "trace_diff", "control", "control.json.gz")],
        [os.path.join(H, "ns_resolution_trace", "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")]]


def js(cmd, files):
    rc, out, err = run([TRAINPROF, cmd, "--format", "json"] + files)
    check(rc == 0, f"{cmd} exit {rc}: {err.strip()}")
    return json.loads(out) if rc == 0 else None


for files in sets:
    s = js("summary", files)
    steps = {r["file"]: r for r in js("steps", files)}
    temporal = {r["file"]: r for r in js("temporal", files)}
    comm = {r["file"]: r for r in js("comm", files)}
    for t in s["traces"]:
        f = t["file"]
        for k in ("mean_ns", "p50_ns", "min_ns", "max_ns"):
            check(t["steps"][k] == steps[f][k], f"{os.path.basename(f)}: steps {k}")
        check(t["steps"]["count"] == steps[f]["steps_count"], f"{os.path.basename(f)}: step count")
        want = None
        if steps[f]["phases_found"]:
            want = {p: dict(cpu_ns=sum(x["phases"][p]["cpu_ns"] for x in steps[f]["steps"]),
                            gpu_ns=sum(x["phases"][p]["gpu_ns"] for x in steps[f]["steps"]))
                    for p in ("data", "forward", "backward", "optimizer", "other")}
        check(t["phases"] == want, f"{os.path.basename(f)}: phases")
        for k in ("span_ns", "idle_ns", "compute_ns", "non_compute_ns"):
            check(t["temporal"][k] == temporal[f][k], f"{os.path.basename(f)}: temporal {k}")
        for k in ("comm_ns", "overlap_ns", "exposed_ns"):
            check(t["communication"][k] == comm[f][k], f"{os.path.basename(f)}: comm {k}")
        check([(c["name"], c["calls"], c["bytes"]) for c in t["communication"]["calls"]] ==
              [(c["name"], c["calls"], c["bytes"]) for c in comm[f]["calls"]], f"{os.path.basename(f)}: calls")
    k = js("kernels", ["--top", "10"] + files)
    combined = k["combined"] if len(files) > 1 else k["traces"][0]
    check([r["name"] for r in s["top_kernels"]] == [r["key"] for r in combined["rows"]], "top kernels")
    check([r["total_ns"] for r in s["top_kernels"]] == [r["total_ns"] for r in combined["rows"]], "top kernel times")
    check(s["advice"] == js("advice", files), "advice")
    if len(files) > 1:
        r = js("ranks", files)
        check(s["ranks"]["straggler"] == r["straggler"] and s["ranks"]["skew_max_ns"] == r["skew_max_ns"], "ranks")

# traces that lack parts still give the parts that apply
for f in [os.path.join(H, "cpu_only", "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"),
          os.path.join(H, "rank_non_gpu", "rank_non_gpu.json.gz"),
          os.path.join(H, "amd_trace", "mi250_minitoy_train_ROCm6_2_kineto.json.gz"),
          os.path.join(H, "mtia_trace_single_rank", "mtia_rank_0.json.gz"),
          os.path.join(T, "msprof-analyze/test/ut/advisor/advisor_backend/timeline_advice/trace_view.json"),
          os.path.join(T, "param/et_replay/tests/inputs/resnet_kineto.json.gz")]:
    rc, out, err = run([TRAINPROF, "summary", f])
    check(rc == 0, f"{os.path.basename(f)}: summary exit {rc}: {err.strip()}")
    # a trace without ProfilerSteps has no steps section: it says so instead
    check("== run ==" in out and "== advice ==" in out and
          ("== steps ==" in out or "no ProfilerStep spans in the trace: steps and phases left out" in out),
          f"{os.path.basename(f)}: sections")
# sections with nothing to say are left out, and the run section says why
rc, out, _ = run([TRAINPROF, "summary", os.path.join(H, "cpu_only", "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")])
check("no GPU events in the trace: GPU time, communication and kernels left out" in out and
      "== GPU time" not in out and "== communication ==" not in out and "== top kernels" not in out and
      "== steps ==" in out, "cpu_only: says what is missing, prints no empty section")
rc, out, _ = run([TRAINPROF, "summary", os.path.join(T, "param/et_replay/tests/inputs/resnet_kineto.json.gz")])
check("no ProfilerStep spans in the trace: steps and phases left out" in out and "== steps ==" not in out,
      "resnet: says there are no steps, prints no steps section")

# --format csv (documented in --help and the README): every table after "# table: NAME", the same
# values as JSON; a trace's parts after its label
for files in sets[:1]:
    rc, out, err = run([TRAINPROF, "summary", "--format", "csv", "--top", "5", *files])
    check(rc == 0, f"summary --format csv: exit {rc}: {err.strip()}")
    blocks, cur = {}, None
    for row in csv.reader(out.splitlines()):
        if row and row[0].startswith("# table: "):
            cur = blocks.setdefault(row[0][9:], [])
        elif cur is not None:
            cur.append(row)
    check(list(blocks)[:2] == ["traces", "traces.steps"] and "top_kernels" in blocks and "advice" in blocks
          and "traces.communication.calls" in blocks, f"summary csv tables: {list(blocks)}")
    s = js("summary", files)

    def dicts(name):
        rows = blocks.get(name, [[]])
        return [dict(zip(rows[0], r)) for r in rows[1:]]
    tr = dicts("traces")
    check([r["file"] for r in tr] == [t["file"] for t in s["traces"]], "summary csv: the traces")
    top = dicts("top_kernels")
    check([(r["name"], int(r["total_ns"])) for r in top] == [(k["name"], k["total_ns"]) for k in s["top_kernels"]][:5]
          and len(top) == 5, "summary csv: the top kernels (full names, --top)")
    steps = dicts("traces.steps")
    check([(r["label"], int(r["count"])) for r in steps] == [(t["label"], t["steps"]["count"]) for t in s["traces"]],
          "summary csv: each trace's steps after its label")
    calls = dicts("traces.communication.calls")
    check(all(r["label"] and r["name"] and r["bytes"] == "" for r in calls) and calls,
          f"summary csv: calls without sizes have empty bytes: {calls[:2]}")
rc, out, _ = run([TRAINPROF, "summary", "--help"])
check("--format csv" in out and "# table:" in out, "summary --help says what its CSV is")
finish("summary agrees with the analysis commands")
