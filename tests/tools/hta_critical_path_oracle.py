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
file writes it)."""
import argparse
import contextlib
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
    out["events"] = sorted(evs, key=lambda x: (x[1], x[0]))
    return out


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
        r = run(os.path.join(DATA, trace), ann, inst)
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
