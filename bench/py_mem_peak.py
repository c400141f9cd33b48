#!/usr/bin/env python3
"""The Python baseline for `trainprof mem`: pickle.load of a memory snapshot,
then the memory viewer's peak (tests/tools/viewer_peak.py's restatement of
MemoryViz.js) per device. Prints {device: peak bytes} as JSON.

usage: py_mem_peak.py SNAPSHOT.pickle"""
import json
import os
import pickle
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "tools"))
import viewer_peak  # noqa: E402

with open(sys.argv[1], "rb") as f:
    snap = viewer_peak.normalise(pickle.load(f))
traces, segs = viewer_peak.annotate(snap)
devices = sorted(set(range(len(traces))) | {s["device"] for s in segs})
print(json.dumps({str(d): viewer_peak.alloc_data(traces, segs, d)[0] for d in devices}))
