"""Ascend's step split: torch_npu's step_trace_time.csv and msprof-analyze's
cluster_step_trace_time.csv read by steps, ranks and advice, checked against
msprof-analyze itself.

- MADE: tests/data/ascend_comm/cluster, four rank directories whose
  step_trace_time.csv gen_cluster.py wrote (rank 2 computes slowly, rank 3
  has a pipeline bubble). expected/cluster_step_trace_time.csv is
  msprof-analyze's cluster_analyse gathering them; expected/advisor_slow_rank.txt
  its advisor's SlowRankAnalyzer on them (tests/data/ascend_comm/ORACLE.md).
- REAL: msprof-analyze's own test resource cluster_step_trace_time.csv (8
  ranks, no step schedule) in ../shared/data; expected/advisor_slow_rank_real.txt
  is its advisor on that file.
- MADE here: a rank directory with a kernel table and its step table beside
  it, and broken step tables."""
import csv
import json
import os
import re
import shutil

from common import SRC, TRAINPROF, check, finish, run, scratch, testdata

DATA = os.path.join(SRC, "tests", "data", "ascend_comm")
CLUSTER = os.path.join(DATA, "cluster")
DIMS = {"Computing": "computing", "Communication": "communication", "Free": "free"}
ORACLE_DIMS = {"compute(us)": "computing", "communication(us)": "communication", "free(us)": "free"}


def ns(us_text):
    """A time in us as written, in ns (the digits, not a float)."""
    whole, _, frac = us_text.strip().partition(".")
    frac = (frac + "000")[:3] if len(frac) <= 3 else frac
    v = int(whole or "0") * 1000 + int(frac[:3] or "0")
    return v + (1 if len(frac) > 3 and int(frac[3]) >= 5 else 0)


def oracle(path):
    """msprof-analyze's SlowRankAnalyzer output: per dimension its spread
    (5 places, as printed), flagged, and the max/min (rank, step) or None."""
    text = open(path).read()
    out = {}
    for m in re.finditer(r"^  (\w+)\s*: max=\S+ min=\S+ \(max-min\)/mean_total=([0-9.]+) -> (FLAGGED|ok)", text, re.M):
        out[DIMS[m.group(1)]] = {"spread": float(m.group(2)), "flagged": m.group(3) == "FLAGGED"}
    for m in re.finditer(r"^get_global_step_rank\('([^']+)'\) = (.*)$", text, re.M):
        g = json.loads(m.group(2))
        out[ORACLE_DIMS[m.group(1)]]["at"] = (
            (g["maximum"]["rank_id"], g["maximum"]["step"], g["minimum"]["rank_id"], g["minimum"]["step"]) if g else None)
    total = re.search(r"mean_total_time = mean\(Computing\+CNO\+Free\) = ([0-9.]+) us", text)
    return out, float(total.group(1))


def ranks_json(*paths):
    rc, out, err = run([TRAINPROF, "ranks", "--format", "json", *paths])
    return rc, json.loads(out) if rc == 0 else None, err


def check_spread(doc, path, what):
    want, mean_total = oracle(path)
    got = {r["dimension"]: r for r in doc.get("split_spread", [])} if doc else {}
    check(set(got) == set(want), f"{what}: the three dimensions ({sorted(got)})")
    check(doc and abs(doc["split_mean_total_ns"] / 1e3 - mean_total) < 0.01,
          f"{what}: the mean step {doc and doc['split_mean_total_ns']} ns against msprof's {mean_total} us")
    for dim, w in want.items():
        g = got.get(dim, {})
        at = (g.get("max_rank"), g.get("max_step"), g.get("min_rank"), g.get("min_step"))
        check(round(g.get("spread", -1), 5) == w["spread"] and g.get("flagged") == w["flagged"] and
              (at if g.get("max_rank") is not None else None) == w["at"],
              f"{what}: {dim} spread {g.get('spread')} flagged {g.get('flagged')} at {at} against msprof's {w}")
    return want


# ---- the made cluster: steps per rank against msprof-analyze's cluster table ----
cols = ["Computing", "Communication(Not Overlapped)", "Overlapped", "Communication", "Free", "Stage", "Bubble",
        "Communication(Not Overlapped and Exclude Receive)", "Preparing"]
ours = ["computing_ns", "comm_not_overlapped_ns", "overlapped_ns", "communication_ns", "free_ns", "stage_ns",
        "bubble_ns", "comm_not_overlapped_exclude_receive_ns", "preparing_ns"]
want = {}
with open(os.path.join(DATA, "expected", "cluster_step_trace_time.csv"), newline="") as f:
    for row in csv.DictReader(f):
        if row["Type"] == "rank":
            want[(int(row["Index"]), int(row["Step"]))] = [ns(row[c]) for c in cols]
rc, out, err = run([TRAINPROF, "steps", "--format", "json", CLUSTER])
got = {}
if rc == 0:
    for t in json.loads(out):
        for s in t["steps"]:
            got[(int(t["label"].split()[-1]), s["number"])] = [s[c] for c in ours]
check(rc == 0 and got == want and len(want) == 8,
      f"steps over the rank directories: every (rank, step) split equals msprof-analyze's cluster table ({rc} {err})")
check("4 Ascend step tables" in err, f"the directory line counts the step tables: {err.strip()}")

# ---- ranks: msprof-analyze's slow-rank check, made and real ----
rc, doc, err = ranks_json(CLUSTER)
check(rc == 0 and doc["split_points"] == 8 and doc["split_recorded"] == 8, f"ranks on the made cluster ({rc} {err})")
if doc:
    check_spread(doc, os.path.join(DATA, "expected", "advisor_slow_rank.txt"), "made cluster")
    check(doc["slow_rank"] == 2 and doc["slow_rank_step"] == 2, f"the slow rank is 2, step 2 ({doc['slow_rank']})")
    steps = {r["rank"]: r["steps"] for r in doc["ranks"]}
    check(steps == {0: 2, 1: 2, 2: 2, 3: 2}, f"each rank's steps from its step table ({steps})")
rc, out, err = run([TRAINPROF, "advice", "--format", "json", CLUSTER])
found = {f["rule"]: f["rank"] for f in json.loads(out)} if rc == 0 else {}
check(found.get("slow-rank") == 2 and found.get("uneven-communication") == 3 and found.get("uneven-free") == 1,
      f"advice names msprof's slow rank and the ranks of the other flagged dimensions ({found})")

data = testdata()
if data:
    real = os.path.join(data, "traces", "msprof-analyze", "test", "resource", "advisor", "cluster_analysis_output",
                        "cluster_step_trace_time.csv")
    rc, doc, err = ranks_json(real)
    check(rc == 0 and doc["split_points"] == 8, f"ranks on the real cluster table ({rc} {err})")
    if doc:
        check_spread(doc, os.path.join(DATA, "expected", "advisor_slow_rank_real.txt"), "real cluster table")
        check(doc["slow_rank"] is None, f"no slow rank where computing is even ({doc['slow_rank']})")
    rc, out, err = run([TRAINPROF, "advice", "--format", "json", real])
    found = {f["rule"]: f["rank"] for f in json.loads(out)} if rc == 0 else {}
    check("slow-rank" not in found and found.get("uneven-communication") == 5 and found.get("uneven-free") == 1,
          f"advice on the real table: msprof's flagged communication and free ({found})")
    rc, out, err = run([TRAINPROF, "steps", real])
    check(rc == 0 and "8 rows of many ranks" in out, f"steps on a cluster table points to ranks ({rc} {out[:200]})")
else:
    print("SKIP (visible): the real cluster_step_trace_time.csv needs ../shared/data")

tmp = scratch("tprof-ascend-steps-")

# ---- a kernel table with its step table beside it: the profiler's split is the one shown ----
d = os.path.join(tmp, "node0_1_2_ascend_pt", "ASCEND_PROFILER_OUTPUT")
os.makedirs(d)
T0 = 1736413971558000
with open(os.path.join(d, "kernel_details.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["Step Id", "Name", "Type", "Accelerator Core", "Start Time(us)", "Duration(us)", "Stream ID"])
    for step in (1, 2):
        for k in range(4):
            w.writerow([step, "MatMulV2", "MatMulV2", "AI_CORE", f"{T0 + step * 1000 + k * 100}.5\t", "80.0", 2])
        w.writerow([step, "hcom_allReduce__123_0_1", "hcom_allReduce_", "COMMUNICATION", f"{T0 + step * 1000 + 450}\t",
                    "200.0", 3])
split = [["0", "1", "320.0", "200.0", "0.0", "200.0", "130.5", "650.5", "0.0", "200.0", "12.25"],
         ["0", "2", "330.0", "190.0", "0.0", "190.0", "140.0", "660.0", "0.0", "190.0", "11.0"]]
header = ["Device_id", "Step"] + cols
with open(os.path.join(d, "step_trace_time.csv"), "w", newline="") as f:
    csv.writer(f).writerows([header] + split)
rc, out, err = run([TRAINPROF, "steps", "--format", "json", os.path.dirname(d)])
doc = json.loads(out)[0] if rc == 0 else {}
got = [[s[c] for c in ours] for s in doc.get("steps", [])]
check(rc == 0 and doc.get("split_recorded") == 2 and got == [[ns(v) for v in r[2:]] for r in split],
      f"beside a kernel table the step table's split replaces the one made from the tasks ({rc} {err} {got})")
check(doc.get("steps") and doc["steps"][0]["gpu_events"] == 5, "the timeline's own columns stay")
rc, out, err = run([TRAINPROF, "kernels", os.path.dirname(d)])
check(rc == 0 and "skipped 1 file (1 Ascend step table)" in err, f"kernels leaves the step table ({err.strip()})")
os.remove(os.path.join(d, "kernel_details.csv"))

# an old version: no Device_id, no Preparing; an empty Step (no schedule) is step -1
old = os.path.join(tmp, "old.csv")
with open(old, "w", newline="") as f:
    csv.writer(f).writerows([["Step"] + cols[:-1], ["", "10.5", "2.0", "1.0", "3.0", "4.0", "16.5", "0", "2.0"]])
rc, out, err = run([TRAINPROF, "steps", "--format", "json", old])
doc = json.loads(out)[0] if rc == 0 else {}
s = doc.get("steps", [{}])[0]
check(rc == 0 and s.get("number") == -1 and s.get("dur_ns") == 16500 and s.get("ts_ns") is None and
      s.get("preparing_ns") == 0, f"an old step table without a step schedule ({rc} {err} {s})")

# one rank's own steps are not ranks: no slow-rank finding from a single step table (a warm-up step is slower)
one = os.path.join(tmp, "one_rank.csv")
with open(one, "w", newline="") as f:
    csv.writer(f).writerows([header, ["0", "1", "120000", "1000", "0", "1000", "5000", "126000", "0", "1000", "0"],
                             ["0", "2", "100000", "1000", "0", "1000", "5000", "106000", "0", "1000", "0"]])
rc, out, err = run([TRAINPROF, "advice", "--format", "json", one])
found = [f["rule"] for f in json.loads(out)] if rc == 0 else None
check(found is not None and not {"slow-rank", "uneven-communication", "uneven-free"} & set(found),
      f"a single rank's step table: no cross-rank finding ({rc} {found})")
# times that add up past int64: no overflow (UBSan watches the sanitizer runs)
huge = os.path.join(tmp, "huge")
for r in (0, 1):
    os.makedirs(os.path.join(huge, f"r{r}_ascend_pt", "ASCEND_PROFILER_OUTPUT"))
    open(os.path.join(huge, f"r{r}_ascend_pt", f"profiler_info_{r}.json"), "w").write("{}")
    with open(os.path.join(huge, f"r{r}_ascend_pt", "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"), "w") as f:
        csv.writer(f).writerows([header, ["0", "1", "9000000000000000", "9000000000000000", "0", "0",
                                          str(9000000000000000 - r), "0", "0", "0", "0"]])
rc, out, err = run([TRAINPROF, "ranks", "--format", "json", huge])
check(rc == 0 and json.loads(out)["split_points"] == 2, f"huge step times: ranks runs ({rc} {err[-300:]})")

# ---- bad and cut step tables ----
def bad(name, text, code, *words):
    p = os.path.join(tmp, name)
    with open(p, "w") as f:
        f.write(text)
    rc, out, err = run([TRAINPROF, "steps", p])
    check(rc == code and all(w in err for w in words), f"{name}: exit {code} and {words} ({rc}: {err.strip()[:300]})")
    return out


head = ",".join(header) + "\n"
bad("number.csv", head + "0,1,12x,1,1,1,1,1,1,1,1\n", 3, "number.csv", "line 2 (byte", "Computing is a time in us",
    "12x")
bad("step.csv", head + "0,one,1,1,1,1,1,1,1,1,1\n", 3, "line 2", "Step is a step number")
out = bad("cut.csv", head + ",".join(split[0]) + "\n0,2,330.0,19", 4, "cut.csv", "the file ends inside this row",
          "results cover the 1 step rows read before the cut")
check("#1" in out and "#2" not in out, f"a cut step table: the whole rows are analysed ({out[-300:]})")
bad("noindex.csv", "Step,Type,Computing,Communication(Not Overlapped),Free\n1,rank,1,1,1\n", 3,
    "without its Index column")
bad("rank.csv", "Step,Type,Index,Computing,Communication(Not Overlapped),Free\n1,rank,x,1,1,1\n", 3,
    "a rank row's Index is its rank")
shutil.rmtree(tmp)
finish("Ascend step tables (step_trace_time.csv, cluster_step_trace_time.csv)")
