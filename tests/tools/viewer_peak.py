#!/usr/bin/env python3
"""An independent restatement of PyTorch's memory viewer (MemoryViz.js:
annotate_snapshot, then process_alloc_data with plot_segments=false) in
Python, for checking `trainprof mem`. Reads trusted test files with Python's
pickle. Prints one JSON object: per device, the viewer's max_size (the peak
of the Active Memory Timeline), the trace index of the action that reached
it, live bytes after the last action, and reserved bytes.

usage: viewer_peak.py SNAPSHOT.pickle[.gz]"""
import gzip
import json
import pickle
import sys


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    op = gzip.open if head == b"\x1f\x8b" else open
    with op(path, "rb") as f:
        return pickle.load(f)


def normalise(snap):
    if isinstance(snap, list):
        snap = {"segments": snap, "device_traces": []}
    return snap


def annotate(snap):
    """annotate_snapshot: free_requested directly followed by free_completed
    of the same address becomes one 'free'; blocks get addresses from their
    segment; legacy blocks get frames and requested_size from history."""
    traces = []
    for dt in snap.get("device_traces", []):
        out = []
        for i, t in enumerate(dt):
            t = dict(t)
            t.setdefault("frames", [])
            if t["action"] == "free_completed" and out:
                prev = out[-1]
                if prev["action"] == "free_requested" and prev["addr"] == t["addr"]:
                    prev["action"] = "free"
                    continue
            t["orig"] = i
            out.append(t)
        traces.append(out)
    segs = []
    for seg in snap.get("segments", []):
        seg = dict(seg)
        addr = seg["address"]
        blocks = []
        for b in seg["blocks"]:
            b = dict(b)
            b["addr"] = addr
            if "frames" not in b:
                if "history" in b:
                    b["frames"] = b["history"][0].get("frames", [])
                    b["requested_size"] = b.get("requested_size") or b["history"][0]["real_size"]
                else:
                    b["frames"] = []
                    b["requested_size"] = b.get("requested_size") or b["size"]
            addr += b["size"]
            blocks.append(b)
        seg["blocks"] = blocks
        segs.append(seg)
    return traces, segs


def alloc_data(traces, segs, device):
    """process_alloc_data: elements, initially allocated ones, actions; the
    maximum of allocated bytes after each action."""
    elements, initially, actions, addr_to_alloc = [], [], [], {}
    where = []  # per action: (original trace index, True when it adds)
    trace = traces[device] if device < len(traces) else []
    for e in trace:
        if e["action"] == "alloc":
            elements.append(e)
            addr_to_alloc[e["addr"]] = len(elements) - 1
            actions.append(len(elements) - 1)
            where.append((e["orig"], True))
        elif e["action"] in ("free", "free_completed"):
            if e["addr"] in addr_to_alloc:
                actions.append(addr_to_alloc.pop(e["addr"]))
            else:
                elements.append(e)
                initially.append(len(elements) - 1)
                actions.append(len(elements) - 1)
            where.append((e["orig"], False))
    for seg in segs:
        if seg["device"] != device:
            continue
        for b in seg["blocks"]:
            if b["state"] == "active_allocated" and b["addr"] not in addr_to_alloc:
                elements.append({"action": "alloc", "addr": b["addr"], "size": b["requested_size"]})
                initially.append(len(elements) - 1)
    initially.reverse()
    if not actions and initially:
        actions.append(initially.pop())
        where.append((-1, True))
    current = set()
    total = 0
    for el in initially:
        current.add(el)
        total += elements[el]["size"]
    max_size, max_at = 0, None
    for k, el in enumerate(actions):
        size = elements[el]["size"]
        if el in current:
            current.discard(el)
            total -= size
        else:
            current.add(el)
            total += size
        if total > max_size:
            max_size = total
            max_at = where[k]
    return max_size, total, max_at


def device_report(snap, traces, segs, device):
    max_size, end_total, max_at = alloc_data(traces, segs, device)
    reserved = sum(s["total_size"] for s in segs if s["device"] == device)
    return {"peak_active_bytes": max_size, "active_at_end_bytes": end_total, "reserved_at_end_bytes": reserved,
            # the index only when an alloc reached the peak: a free's index
            # moves when the viewer merges free_requested + free_completed
            "peak_alloc_index": max_at[0] if max_at and max_at[1] else None}


def main():
    snap = normalise(load(sys.argv[1]))
    traces, segs = annotate(snap)
    devices = set(range(len(traces))) | {s["device"] for s in segs}
    out = {}
    for d in sorted(devices):
        if not (d < len(traces) and traces[d]) and not any(s["device"] == d for s in segs):
            continue
        out[str(d)] = device_report(snap, traces, segs, d)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
