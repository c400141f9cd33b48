#!/usr/bin/env python3
"""A memory snapshot cut short, as Python sees it: the reference for what
`trainprof mem` must recover from a truncated pickle.

Cuts SNAPSHOT (a trusted test file) after PERCENT % of its bytes (or after
--bytes N), runs Python's own pure-Python unpickler (pickle._Unpickler) over
the prefix until it stops, and takes the partly built objects it holds: the
value stack and the stacks under each open MARK. A trace entry (a dict with
an "action" string) is complete when no MARK is still open on it, i.e. its
SETITEMS ran before the cut. Each open container is then closed with the
complete values above its MARK; a value that cannot be a dict key (a list or
dict) where a key would come is the pending single APPEND of the list before
it (Python's pickler writes a one-item list as `item APPEND`), as for a
snapshot's one-device `device_traces`.

Prints one JSON object: the cut, the complete entries per device, and the
memory viewer's numbers over the recovered snapshot (tests/tools/viewer_peak.py:
peak, live at the end, reserved). --out writes the cut file.

usage: cut_snapshot.py SNAPSHOT (PERCENT | --bytes N) [--out CUT.pickle]"""
import argparse
import io
import json
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import viewer_peak  # noqa: E402


def unpickle_prefix(data):
    """Python's unpickler over DATA; returns (result or None, frames): the
    frames are the stacks under each open MARK, bottom first, then the top stack."""
    u = pickle._Unpickler(io.BytesIO(data))
    try:
        return u.load(), []
    except Exception:  # EOFError, UnpicklingError, struct.error: the cut
        return None, u.metastack + [u.stack]


def is_entry(x):
    return isinstance(x, dict) and isinstance(x.get("action"), str)


def close(frames):
    """Closes each open MARK with the values above it; returns the root and
    the set of ids of containers that were still open (partial)."""
    open_ids = {id(f[-1]) for f in frames[:-1] if f}
    top = frames[-1][-1] if frames[-1] else None
    if isinstance(top, (list, dict)) and not top:  # just begun: its items were to come
        open_ids.add(id(top))
    for i in range(len(frames) - 1, 0, -1):
        below, items = frames[i - 1], frames[i]
        if below and isinstance(below[-1], (list, dict)):
            fill(below[-1], items, open_ids)
        else:  # a MARK for a tuple: what was built so far
            below.append(tuple(items))
    bottom = frames[0]
    if not bottom:
        return None, open_ids
    root = bottom[0]
    if len(bottom) > 1 and isinstance(root, (list, dict)):
        open_ids.add(id(root))
        single(root, bottom[1:], open_ids)
    return root, open_ids


def single(c, vals, open_ids):
    """VALS complete C's pending single APPEND (list) or SETITEM (dict)."""
    if isinstance(c, list):
        c.append(vals[0])
        if len(vals) > 1 and isinstance(vals[0], (list, dict)):
            open_ids.add(id(vals[0]))
            single(vals[0], vals[1:], open_ids)
    elif len(vals) >= 2:
        c[vals[0]] = vals[1]
        if len(vals) > 2 and isinstance(vals[1], (list, dict)):
            open_ids.add(id(vals[1]))
            single(vals[1], vals[2:], open_ids)


def fill(c, items, open_ids):
    if isinstance(c, list):
        c.extend(items)
        return
    i = 0
    while i + 1 < len(items):
        k, v = items[i], items[i + 1]
        if isinstance(k, (list, dict)):  # not a key: pending in the value before it
            prev = items[i - 1] if i else None
            if isinstance(prev, (list, dict)):
                open_ids.add(id(prev))
                single(prev, items[i:], open_ids)
            return
        c[k] = v
        i += 2
    if i < len(items) and isinstance(items[i], (list, dict)) and i:
        prev = items[i - 1]
        if isinstance(prev, (list, dict)):
            open_ids.add(id(prev))
            single(prev, items[i:], open_ids)


def reachable_entries(frames, open_ids):
    """Complete trace entries anywhere in Python's stacks (an independent
    count: no closing involved)."""
    seen, n, todo = set(), 0, [x for f in frames for x in f]
    while todo:
        x = todo.pop()
        if id(x) in seen or not isinstance(x, (list, dict, tuple)):
            continue
        seen.add(id(x))
        if is_entry(x) and id(x) not in open_ids:
            n += 1
            continue
        todo.extend(x.values() if isinstance(x, dict) else x)
    return n


def recover(data):
    obj, frames = unpickle_prefix(data)
    if frames == []:
        return obj, set(), None
    open_ids = {id(f[-1]) for f in frames[:-1] if f}
    n_reach = reachable_entries(frames, open_ids)  # (an empty dict is no entry either way)
    root, open_ids = close(frames)
    return root, open_ids, n_reach


def reference(cut):
    """What Python recovers from the pickle prefix CUT: complete entries and
    the viewer's numbers per device."""
    root, open_ids, n_reach = recover(cut)
    snap = viewer_peak.normalise(root if isinstance(root, (dict, list)) else {})
    traces = [[e for e in (t if isinstance(t, list) else []) if is_entry(e) and id(e) not in open_ids]
              for t in snap.get("device_traces", [])]
    # a segment cut inside its block list (its last key) keeps its complete
    # blocks; one cut before it is left out
    segs = [s for s in snap.get("segments", []) if isinstance(s, dict) and (id(s) not in open_ids or "blocks" in s)]
    for s in segs:
        s["blocks"] = [b for b in s.get("blocks", []) if isinstance(b, dict) and id(b) not in open_ids]
    clean = {"segments": segs, "device_traces": traces}
    out = {"cut_bytes": len(cut), "complete_entries": sum(map(len, traces)),
           "complete_entries_reachable": n_reach, "devices": {}}
    try:
        at, sg = viewer_peak.annotate(clean)
        devices = set(range(len(at))) | {s["device"] for s in sg}
        for d in sorted(devices):
            if not (d < len(at) and at[d]) and not any(s["device"] == d for s in sg):
                continue  # as viewer_peak.py: a device with neither events nor segments
            r = viewer_peak.device_report(clean, at, sg, d)
            r["events"] = len(traces[d]) if d < len(traces) else 0
            out["devices"][str(d)] = r
    except (KeyError, TypeError) as e:  # a segment or block cut before its keys
        out["viewer_error"] = repr(e)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("snapshot")
    ap.add_argument("percent", nargs="?", type=float)
    ap.add_argument("--bytes", type=int)
    ap.add_argument("--out")
    a = ap.parse_args()
    data = open(a.snapshot, "rb").read()
    n = a.bytes if a.bytes is not None else int(len(data) * a.percent / 100)
    cut = data[:n]
    if a.out:
        with open(a.out, "wb") as f:
            f.write(cut)
    out = {"file": a.snapshot, "size": len(data), **reference(cut)}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
