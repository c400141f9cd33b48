"""HTA's figures (`hta_*` of `temporal`, `summary`'s GPU-time line, `comm`'s
overlap) equal what Holistic Trace Analysis itself computes, to 0.1 pp, on
every trace of ../shared/data it reads and on generated ones. The expected
values were recorded by running the real HTA (tests/tools/hta_oracle.py, at
the commit named in tests/cli/hta_expected.json), so CI needs no HTA."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import GENTRACE, SRC, TRAINPROF, check, finish, run, scratch, testdata  # noqa: E402

sys.path.insert(0, os.path.join(SRC, "tests", "tools"))
from hta_oracle import FIXTURES, GENERATED, RECORDED, generate  # noqa: E402

with open(os.path.join(SRC, "tests", "cli", "hta_expected.json")) as f:
    expected = json.load(f)["traces"]
data = testdata()
tmp = scratch("tprof_hta_")


def path_of(name):
    if name in RECORDED:  # the recorder's trace, written now (the oracle's way)
        if not os.environ.get("TINY_GPT") and not os.path.exists(os.path.join(SRC, "build", "examples", "tiny_gpt")):
            return None
        return generate(GENTRACE, name, tmp)
    if name in GENERATED:
        p = os.path.join(tmp, name.replace(":", "_") + ".json")
        if not os.path.exists(p):
            subprocess.run([GENTRACE, *GENERATED[name], "-o", p], check=True)
        return p
    if name in FIXTURES:
        return os.path.join(SRC, name)
    return os.path.join(data, name) if data else None


def pct(part, whole):
    return 100.0 * part / whole if whole else 0.0


compared = no_figures = 0
for name, want in sorted(expected.items()):
    path = path_of(name)
    if path is None:
        continue
    rc, out, err = run([TRAINPROF, "temporal", "--format", "json", path])
    if "error" in want:
        # HTA stops on it (no GPU events, not a trace): trainprof either says
        # why it has no HTA figures or does not read the file as a trace
        if rc == 0:
            got = json.loads(out)[0]
            check(got["hta_span_ns"] is None and got["hta_not_computed"],
                  f"{name}: HTA gives no figures ({want['error']}), trainprof has {got['hta_span_ns']}")
        no_figures += 1
        continue
    check(rc == 0, f"{name}: temporal failed: {err[-200:]}")
    if rc:
        continue
    got = json.loads(out)[0]
    span = got["hta_span_ns"]
    check(span is not None, f"{name}: no HTA figures: {got.get('hta_not_computed')}")
    if span is None:
        continue
    for k in ("idle", "compute", "non_compute"):
        mine = pct(got[f"hta_{k}_ns"], span)
        check(abs(mine - want[f"{k}_pct"]) <= 0.1,
              f"{name}: HTA's {k} {want[f'{k}_pct']:.3f}%, trainprof's hta_{k} {mine:.3f}%")
    check(abs(span / 1000.0 - want["span_us"]) <= 1.0, f"{name}: span {span / 1000.0} us, HTA {want['span_us']} us")
    ov, want_ov = got["hta_comm_overlap"], want.get("comm_overlap_pct")
    if want_ov is None:
        check(ov is None, f"{name}: HTA has no comm overlap, trainprof {ov}")
    else:
        # HTA rounds its percentage to 0.01
        check(ov is not None and abs(100.0 * ov - want_ov) <= 0.006,
              f"{name}: HTA's comm overlap {want_ov}%, trainprof's {None if ov is None else 100.0 * ov}")
    compared += 1
check(compared >= len(GENERATED) + len(FIXTURES), f"only {compared} traces compared")
# comm and summary carry the same overlap as temporal
edges = path_of(FIXTURES[0])
rc, tout, _ = run([TRAINPROF, "temporal", "--format", "json", edges])
rc2, cout, _ = run([TRAINPROF, "comm", "--format", "json", edges])
rc3, sout, _ = run([TRAINPROF, "summary", "--format", "json", edges])
t0, c0 = json.loads(tout)[0], json.loads(cout)[0]
s0 = json.loads(sout)["traces"][0]
check(t0["hta_comm_overlap"] == c0["hta_overlap"] == s0["communication"]["hta_overlap"],
      f"one HTA overlap: temporal {t0['hta_comm_overlap']}, comm {c0['hta_overlap']}, summary {s0['communication']}")
check(s0["temporal"]["hta_idle_ns"] == t0["hta_idle_ns"], f"summary's HTA idle is temporal's: {s0['temporal']}")
rc, out, _ = run([TRAINPROF, "temporal", edges])
for reason in ("1 GPU event (80 us) whose launch is not in the trace", "1 sync wait as busy", "with a stream arg",
               "2 kernels otherwise", "whole us"):
    check(reason in out, f"the note names why HTA differs ({reason}):\n{out}")
print(f"{compared} traces equal to HTA's figures, {no_figures} where HTA gives none"
      + ("" if data else " (generated inputs only: ../shared/data not found)"))

if data:
    # where the definitions differ, the table says so and why; --definition
    # hta makes HTA's the headline and trainprof's the note
    act = os.path.join(data, "traces/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz")
    rc, out, err = run([TRAINPROF, "temporal", act])
    check(rc == 0 and "HTA: idle 2.7%" in out and "968 GPU events" in out and "launch is not in the trace" in out,
          f"the table names HTA's idle and why it differs:\n{out}")
    rc, hout, err = run([TRAINPROF, "temporal", "--definition", "hta", act])
    check(rc == 0 and " 2.7%" in hout.splitlines()[2] and "trainprof: idle 3.6%" in hout,
          f"--definition hta shows HTA's figures first:\n{hout}")
    rc, jout, _ = run([TRAINPROF, "temporal", "--format", "json", act])
    rc2, jhta, _ = run([TRAINPROF, "temporal", "--format", "json", "--definition", "hta", act])
    check(jout == jhta, "--definition changes the table only, not JSON")
    # summary and comm take --definition too: HTA's figures first, the JSON the same
    rc, out, _ = run([TRAINPROF, "summary", "--definition", "hta", act])
    check(rc == 0 and "HTA: idle 2.7%" in out and "trainprof: idle 3.6%" in out
          and out.index("HTA: idle 2.7%") < out.index("trainprof: idle 3.6%"), f"summary --definition hta:\n{out}")
    rc, j1, _ = run([TRAINPROF, "summary", "--format", "json", act])
    rc2, j2, _ = run([TRAINPROF, "summary", "--format", "json", "--definition", "hta", act])
    check(j1 == j2, "summary --definition changes the text only")
    test = os.path.join(data, "traces/HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz")
    rc, out, _ = run([TRAINPROF, "comm", "--definition", "hta", test])
    check(rc == 0 and out.splitlines()[1] == "HTA's comp/comm overlap for this trace: 68.8%"
          and "trainprof: communication" in out, f"comm --definition hta:\n{out}")
    rc, out, _ = run([TRAINPROF, "comm", test])
    check(rc == 0 and "HTA's comp/comm overlap for this trace: 68.8% (see" in out, f"comm names HTA's overlap:\n{out}")
    # traces where both agree carry no note about HTA
    same = os.path.join(data, "traces/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")
    rc, out, _ = run([TRAINPROF, "temporal", same])
    check(rc == 0 and "HTA" not in out, f"no note where HTA agrees:\n{out}")
# with --keep-last-step trainprof counts the last step and HTA does not: the note says so
rc, out, _ = run([TRAINPROF, "temporal", "--keep-last-step", edges])
check(rc == 0 and "GPU event launched in the last step" in out and not out.rstrip().endswith(":"),
      f"the --keep-last-step note names HTA's last-step cut:\n{out}")
rc, _, err = run([TRAINPROF, "temporal", "--definition", "pandas", path_of("gen:rank0")])
check(rc == 2 and "trainprof or hta" in err, f"a bad --definition is a usage error: {rc} {err}")
finish("HTA's figures")
