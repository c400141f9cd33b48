"""One headline idle figure (docs/METRICS.md, `temporal`): every command that
shows a trace's GPU idle share shows temporal's (the last step's work left
out when the trace has two or more steps), so one summary cannot say "idle
38.6%" in one section and "the GPU idles 49%" in another."""
import json
import os
import re
import subprocess

from common import GENTRACE, TRAINPROF, check, finish, run, scratch, testdata

tmp = scratch("tprof_headline_")
traces = []
for r in range(2):
    p = os.path.join(tmp, f"rank{r}.json")
    subprocess.run([GENTRACE, "--steps", "4", "--layers", "4", "--rank", str(r), "--world", "2", "--seed", str(r + 3),
                    "-o", p], check=True)
    traces.append(p)
data = testdata()
if data:  # a CPU-bound trace of six steps: the advice quotes its idle
    traces.append(os.path.join(data, "traces/kineto/tb_plugin/samples/resnet50_num_workers_0/"
                                     "worker0.1623143089861.pt.trace.json.gz"))


def by_file(args):
    rc, out, err = run([TRAINPROF, *args, "--format", "json", *traces])
    check(rc == 0, f"{args[0]} failed: {err[-300:]}")
    return json.loads(out) if rc == 0 else None


temporal = {r["file"]: r for r in by_file(["temporal"])}
launch = {r["file"]: r for r in by_file(["launch"])}
ranks = {r["file"]: r for r in by_file(["ranks"])["ranks"]}
for f, t in temporal.items():
    check(t["last_step_excluded"] is not None, f"{f}: has steps to leave one out")
    for name, other in (("launch", launch[f]), ("ranks", ranks[f])):
        check((other["idle_ns"], other["span_ns"]) == (t["idle_ns"], t["span_ns"]),
              f"{name} gives {f} idle {other['idle_ns']} of {other['span_ns']}, "
              f"temporal {t['idle_ns']} of {t['span_ns']}")
rc, out, _ = run([TRAINPROF, "summary", *traces])
shown = [float(x) for x in re.findall(r"span [^:]+: idle ([0-9.]+)%", out)]
check(len(shown) == len(traces), f"summary's GPU-time lines: {shown}\n{out}")
for m in re.finditer(r"rank (\d+|\w+): the GPU idles (\d+)% of its span", out):
    check(any(abs(int(m.group(2)) - s) <= 0.5 for s in shown),
          f"advice quotes idle {m.group(2)}%, the GPU-time section {shown}")
if data:
    check("the GPU idles 39% of its span" in out and "idle 39.4%" in out,
          f"the CPU-bound trace: one idle in both sections:\n{out}")
finish("one headline idle")
