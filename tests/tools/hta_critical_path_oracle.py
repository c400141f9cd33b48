#!/usr/bin/python3
"""Runs Holistic Trace Analysis's critical path analysis on the traces of
../shared/data and records what it finds, so that CI checks trainprof's
critical-path against HTA without HTA (tests/cli/critical_path.py reads the
record).

    /usr/bin/python3 tests/tools/hta_critical_path_oracle.py --hta DIR [--record]

DIR is a checkout of github.com/facebookresearch/HolisticTraceAnalysis
(pinned: commit f4d0062). It runs on Debian's python3-pandas, -numpy,
-networkx, -psutil and -yaml; plotly is not packaged, so a stand-in that
draws nothing is put first on the path (HTA imports it at the top). Without
--record it prints the cases and says whether they equal the record.

Per case (a trace, HTA's annotation and instance): whether HTA built a valid
graph, its nodes and edges (networkx's counts: points some edge joins), the
path's length (the sum of its edges' weights, us) and its breakdown by
HTA's bound_by, and the events on the path as (name, start in us as the
file writes it; past 500 events their digest). `rounded`: the trace has
starts below the microsecond, which HTA rounds (so its graph differs).
`step`: for "ProfilerStep" windows, the step HTA's instance is."""
import argparse
import contextlib
import decimal
import hashlib
import io
import json
import logging
import os
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(os.path.dirname(SRC), "shared", "data", "traces")
RECORD = os.path.join(SRC, "tests", "cli", "hta_critical_path.json")
PARAM = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
CP = "HolisticTraceAnalysis/tests/data/critical_path/"

# (trace under ../shared/data/traces, annotation, instance); "" = the whole trace
CASES = [
    (CP + "cuda_event_sync/event_sync_trace.json.gz", "ProfilerStep", 0),
    (CP + "cuda_event_sync_multi_stream/event_sync_trace.json.gz", "", None),
    (CP + "alexnet/benchmark_result_2869224_1695835535_trace.json.gz", PARAM, 0),
    (CP + "alexnet/benchmark_result_2869224_1695835535_trace.json.gz", PARAM, 1),
    (CP + "alexnet/benchmark_result_2869224_1695835535_trace.json.gz", "", None),
    (CP + "simple_add/benchmark_result_493459_1694039959_trace.json.gz", PARAM, 0),
    (CP + "simple_add/benchmark_result_493459_1694039959_trace.json.gz", PARAM, 1),
    (CP + "simple_add/benchmark_result_493459_1694039959_trace.json.gz", "", None),
]
# traces with steps: every ProfilerStep HTA keeps (it drops the last one's work)
STEPPED = [
    "HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz",
    "HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz",
    "HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz",
    "HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz",
    "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json",
]
for _t in STEPPED:
    for _i in range(4):
        CASES.append((_t, "ProfilerStep", _i))


def plotly_stand_in():
    d = tempfile.mkdtemp(prefix="hta_plotly_")
    pkg = os.path.join(d, "plotly")
    os.mkdir(pkg)
    stub = "def _no(*a, **k):\n    raise RuntimeError('no plotly')\ndef __getattr__(name):\n    return _no\n"
    for mod in ("__init__", "express", "graph_objects", "subplots", "io"):
        with open(os.path.join(pkg, mod + ".py"), "w") as f:
            f.write(stub)
    return d


def run(path, annotation, instance):
    from hta.trace_analysis import TraceAnalysis

    d = tempfile.mkdtemp(prefix="hta_cp_")
    os.symlink(os.path.abspath(path), os.path.join(d, os.path.basename(path)))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        ta = TraceAnalysis(trace_dir=d)
        rank = ta.t.get_ranks()[0]
        g, ok = ta.critical_path_analysis(rank=rank, annotation=annotation, instance_id=instance)
        out = {"valid": bool(ok), "nodes": g.number_of_nodes(), "edges": g.number_of_edges()}
        if not ok:
            return out
        edges = g.critical_path_edges_set
        out["length_us"] = int(sum(e.weight for e in edges))
        bd = g.get_critical_path_breakdown()
    by = bd.groupby("bound_by").duration.sum()
    out["bound_us"] = {k: int(v) for k, v in by.items() if k}
    raw = ta.t.get_raw_trace_for_one_rank(rank=rank)["traceEvents"]
    names = ta.t.symbol_table.get_sym_table()
    evs = []
    for ev_idx in sorted(g.critical_path_events_set):
        r = raw[ev_idx]
        # HTA's event index is the event's place in the file: checked by name
        assert r["name"] == names[int(g.trace_df.name.loc[ev_idx])], (path, ev_idx)
        evs.append([r["name"], r["ts"]])
    # as (name, start) pairs: two events of one name and start are one pair
    evs = sorted({(n, ts) for n, ts in evs}, key=lambda x: (x[1], x[0]))
    evs = [list(e) for e in evs]
    out["rounded"] = any(isinstance(e["ts"], float) for e in raw if "ts" in e and e.get("ph") != "M") or \
        any("ts" not in e for e in raw)
    if annotation == "ProfilerStep":  # which step HTA's instance is: trainprof runs it with --steps N
        df = ta.t.get_trace(rank)
        ids = [v for k, v in ta.t.symbol_table.get_sym_id_map().items() if annotation in k]
        row = df[df.name.isin(ids)].iloc[instance]
        name, cat = names[int(row["name"])], names[int(row["cat"])]
        if cat != "user_annotation" or not name.startswith("ProfilerStep#"):
            return {"hta_window": f"instance {instance} is {cat} {name}, not a host ProfilerStep"}
        out["step"] = int(name.split("#")[1])
    if len(evs) > 500:  # large sets as a digest: tests/cli/critical_path.py makes the same one
        out["events_sha1"] = events_digest(evs)
        out["nevents"] = len(evs)
    else:
        out["events"] = evs
    return out


def events_digest(evs):
    """SHA-1 of the events, one "name<TAB>start in ns" line each, sorted."""
    lines = sorted(f"{n}\t{round(decimal.Decimal(str(ts)) * 1000)}" for n, ts in evs)
    return hashlib.sha1("\n".join(lines).encode()).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hta", required=True)
    ap.add_argument("--record", action="store_true")
    a = ap.parse_args()
    sys.path[:0] = [plotly_stand_in(), os.path.abspath(a.hta)]
    logging.disable(logging.WARNING)
    warnings.filterwarnings("ignore")
    got = []
    for trace, ann, inst in CASES:
        try:
            r = run(os.path.join(DATA, trace), ann, inst)
        except Exception as e:  # HTA fails on this window: recorded, so trainprof's answer is not compared
            r = {"hta_failed": f"{type(e).__name__}: {e}"[:200]}
        r.update({"trace": trace, "annotation": ann, "instance": inst})
        print(trace, repr(ann), inst, {k: v for k, v in r.items() if k != "events"})
        got.append(r)
    if a.record:
        with open(RECORD, "w") as f:
            json.dump(got, f, indent=1)
            f.write("\n")
        print("recorded", RECORD)
    else:
        with open(RECORD) as f:
            print("record agrees" if json.load(f) == got else "record differs: run with --record and review")


if __name__ == "__main__":
    main()
