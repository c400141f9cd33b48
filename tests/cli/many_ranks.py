"""Output that reads at many ranks (issue 17): rows in rank order by one rule
(distributedInfo.rank, then rank<N> in the file name, then argument order);
past 8 traces the text is the across-ranks view (distribution, worst ranks)
and `summary` of 1,000 ranks fits one screen (<= 80 lines); --all-ranks
prints every rank; JSON keeps every rank; advice groups one rule's findings
across ranks into one line. Runs on generated traces only (no ../shared).
Under the sanitizers 200 ranks instead of 1,000 (the view is the same past 8)."""
import json
import os
import random
import re

from common import GENTRACE, TRAINPROF, check, finish, run, scratch

N = 200 if os.environ.get("TPROF_SANITIZED") else 1000
SCREEN = 80  # lines: one terminal screen
tmp = scratch("tprof_many_")
paths = []
for r in range(N):
    p = os.path.join(tmp, f"rank{r}.pt.trace.json")
    rc, _, err = run([GENTRACE, "--steps", "1", "--layers", "1", "--rank", str(r), "--world", str(N),
                      "--seed", str(r + 1), "-o", p])
    assert rc == 0, err
    paths.append(p)
shuffled = paths[:]
random.Random(17).shuffle(shuffled)

# ---- summary of N ranks: one screen, every section, says what it left out ----
rc, out, err = run([TRAINPROF, "summary", "--threads", "2", *shuffled], timeout=900)
lines = out.splitlines()
check(rc == 0, f"summary of {N} ranks: exit {rc}: {err[-300:]}")
check(len(lines) <= SCREEN, f"summary of {N} ranks fits {SCREEN} lines (has {len(lines)})")
for section in ("== run ==", "== steps ==", "== phases", "== GPU time", "== communication ==", "== top kernels",
                "== ranks ==", "== advice =="):
    check(section in out, f"summary of {N} ranks has its section {section}")
check("--all-ranks prints every rank" in out, "summary says what it left out and how to see it")
check(f"ranks 0-{N - 1}" in out, "summary's run section names the rank set")
per_rank = [l for l in lines if re.match(r"  rank \d+: ", l)]
check(not per_rank, f"summary has no per-rank lines past 8 ranks (has {per_rank[:2]})")
check(re.search(r"mean step time: min .* \(rank \d+\), p50 .*, p90 .*, max .* \(rank \d+\)", out),
      "steps: the distribution with the ranks holding the extremes")
advice = [l for l in lines if l.startswith("- [")]
rules = {re.match(r"- \[([^\]]+)\]", l).group(1) for l in advice}
check(advice and len(advice) == len(rules), f"advice: one line per rule across ranks ({advice[:3]})")
grouped = [l for l in advice if re.match(r"- \[[^\]]+\] ranks ", l)]
check(grouped and all(re.match(r"- \[[^\]]+\] ranks [0-9][-0-9, ]*(\.\.\.)?( except [0-9, ]+)? \(\d+ ranks; the figures of rank \d+, "
                               r"the highest\): ", l) for l in grouped),
      f"advice: each grouped finding names the ranks it holds for ({grouped[:2]})")

rc, out_all, _ = run([TRAINPROF, "summary", "--threads", "2", "--all-ranks", *shuffled], timeout=900)
ranks_listed = [int(m) for m in re.findall(r"^  rank (\d+): /", out_all, re.M)]
check(ranks_listed == list(range(N)), "summary --all-ranks: every rank, in rank order")

rc, js, _ = run([TRAINPROF, "summary", "--threads", "2", "--format", "json", *shuffled], timeout=900)
doc = json.loads(js)
traces = doc["traces"]
check(len(traces) == N, f"summary JSON keeps every rank ({len(traces)})")
check([t["rank"] for t in traces] == list(range(N)), "summary JSON: traces in rank order")
check(len(doc["advice"]) >= N, "summary JSON: every rank's findings, not grouped")

# ---- the per-trace commands: the across view past 8, every row in JSON/CSV ----
for cmd in ("temporal", "steps", "launch", "comm", "idle", "kernels", "ops", "info"):
    rc, out, err = run([TRAINPROF, cmd, "--threads", "2", *shuffled], timeout=900)
    check(rc == 0, f"{cmd} of {N}: exit {rc}: {err[-200:]}")
    check(f"across {N}" in out and "--all-ranks" in out, f"{cmd} of {N}: the across-ranks view")
    check(len(out.splitlines()) <= 120, f"{cmd} of {N}: a short text ({len(out.splitlines())} lines)")
    rc, js, _ = run([TRAINPROF, cmd, "--threads", "2", "--format", "json", *shuffled], timeout=900)
    d = json.loads(js)
    rows = d["traces"] if isinstance(d, dict) else d
    labels = [t.get("label") or t.get("file") for t in rows]
    want = [f"rank {r}" for r in range(N)] if cmd != "info" else [paths[r] for r in range(N)]
    check(labels == want, f"{cmd} JSON: every rank, in rank order")
rc, csv, _ = run([TRAINPROF, "temporal", "--format", "csv", *shuffled], timeout=900)
check([l.split(",")[0] for l in csv.splitlines()[1:]] == [f"rank {r}" for r in range(N)], "temporal CSV: rank order")
rc, out, _ = run([TRAINPROF, "temporal", "--all-ranks", *shuffled], timeout=900)
check(len(out.splitlines()) == N + 2, "temporal --all-ranks: a row per rank")

# ranks: the distribution, the slowest three, the straggler rule
rc, out, _ = run([TRAINPROF, "ranks", "--threads", "2", *shuffled], timeout=900)
check(f"across {N}" in out and len(out.splitlines()) <= 30, f"ranks of {N}: the across view ({len(out.splitlines())} lines)")
rc, js, _ = run([TRAINPROF, "ranks", "--format", "json", *shuffled], timeout=900)
check([r["rank"] for r in json.loads(js)["ranks"]] == list(range(N)), "ranks JSON: every rank, in rank order")
rc, out, _ = run([TRAINPROF, "advice", *shuffled], timeout=900)
check(len(out.splitlines()) <= 12 and f"ranks 0-{N - 1}" in out, "advice of N ranks: grouped")

# diff with many ranks a side: each side's rank set, not a line per trace (the collectives' part adds a
# bounded table, --top rows); no warning for a rank on both sides
half = shuffled[:40]
rc, out, err = run([TRAINPROF, "diff", *half, "--vs", *half], timeout=900)
check(rc == 0 and len(out.splitlines()) <= 80 and "ranks " in out and "claim rank" not in err,
      f"diff of 40 ranks a side: short, no shared-rank warning ({len(out.splitlines())} lines; {err[-200:]})")
rc, js, _ = run([TRAINPROF, "diff", "--format", "json", *half, "--vs", *half], timeout=900)
d = json.loads(js)
files = d["base"][0]["files"] if isinstance(d.get("base"), list) else d["base"]["files"]
check([f["label"] for f in files] == [f"rank {r}" for r in sorted(int(os.path.basename(p)[4:].split(".")[0]) for p in half)],
      "diff JSON: every base trace, in rank order")

# mfu --trace over the folder of N ranks: the distribution of the steps' MFU, the lowest three, the mean
cfg = os.path.join(tmp, "llama.json")
with open(cfg, "w") as f:
    json.dump({"model_type": "llama", "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8,
               "num_hidden_layers": 8, "vocab_size": 32000, "intermediate_size": 2816}, f)
rc, out, err = run([TRAINPROF, "mfu", "--config", cfg, "--seqlens", "4096", "--device", "H100", "--trace", tmp],
                   timeout=900)
lines = out.splitlines()
check(rc == 0 and f"{N} traces, {N} steps" in out and "MFU: min " in out and len(lines) <= 16,
      f"mfu over a folder of {N} ranks: the across view ({rc}, {len(lines)} lines: {err[-200:]})")
rc, out, err = run([TRAINPROF, "mfu", "--config", cfg, "--seqlens", "4096", "--device", "H100", "--trace",
                    paths[10], paths[2], paths[1]])
order = [int(m) for m in re.findall(r"rank(\d+)\.\S* #", out)]  # table cells cut paths at 40 characters
check(order == [1, 2, 10], f"mfu rows in rank order: {order}")

# ---- the rank-order rule on a few traces: distributedInfo, then the name, then argument order ----
few = [paths[10], paths[2], paths[1]]
rc, js, _ = run([TRAINPROF, "temporal", "--format", "json", *few])
check([t["label"] for t in json.loads(js)] == ["rank 1", "rank 2", "rank 10"], "a few traces: rank order, not glob order")
rc, out, _ = run([TRAINPROF, "temporal", *few])
check("across" not in out and len(out.splitlines()) == 5, "up to 8 traces: a row each")
# without distributedInfo: the rank in the file name, else the argument order
nameless = []
for r, name in ((5, "worker_rank12.json"), (6, "rank-3.trace.json"), (7, "other.json")):
    with open(paths[r]) as f:
        d = json.load(f)
    d.pop("distributedInfo", None)
    p = os.path.join(tmp, name)
    with open(p, "w") as f:
        json.dump(d, f)
    nameless.append(p)
rc, js, _ = run([TRAINPROF, "steps", "--format", "json", *nameless])
# other.json has no rank: it stands at its argument index, 2, so before rank 3 (as merge orders inputs)
# it is named "trace N", N its place in rank order, by every command alike
check([t["label"] for t in json.loads(js)] == ["trace 0", "rank 3", "rank 12"],
      f"no distributedInfo: rank<N> in the name, else the argument order ({[t['label'] for t in json.loads(js)]})")
rc, js, _ = run([TRAINPROF, "ranks", "--format", "json", *nameless])
check([r["rank"] for r in json.loads(js)["ranks"]][1:] == [3, 12], "ranks: the same order, ranks from the names")
rc, out, _ = run([TRAINPROF, "ranks", *nameless])
check(re.search(r"^trace 0 ", out, re.M) and re.search(r"^3 ", out, re.M), f"ranks names the unranked trace as the others do:\n{out}")
rc, out, _ = run([TRAINPROF, "summary", *nameless])
check("  trace 0: " in out and "  rank 3: " in out, "summary names it the same")
rc, out, _ = run([TRAINPROF, "advice", *nameless])
check(re.search(r"^- \[[^\]]+\] trace 0: ", out, re.M) and re.search(r"^- \[[^\]]+\] ranks 3, 12 ", out, re.M),
      f"advice names it alone, the ranked traces in a set:\n{out}")

finish(f"{N} ranks: summary in {SCREEN} lines, across views, rank order")
