#!/usr/bin/env python3
"""Python peer for the benchmark: the straightforward way to answer
"where did GPU time go" from a Kineto trace with the standard library.

usage: py_kernels.py TRACE.json[.gz] [--top N] [--csv OUT.csv]

json.load()s the whole trace (gzip.open for .gz), then sums "dur" per name
over events whose cat is kernel, gpu_memcpy or gpu_memset.  Durations are
converted to integer nanoseconds (the traces carry exactly 3 decimals of a
microsecond), so totals can be compared exactly with a truth CSV.
"""
import argparse
import gzip
import json
import sys

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--csv", help="write name,count,total_ns,min_ns,max_ns for every name")
    a = ap.parse_args()

    opener = gzip.open if a.trace.endswith(".gz") else open
    with opener(a.trace, "rb") as f:
        doc = json.load(f)

    agg = {}
    for e in doc["traceEvents"]:
        if e.get("cat") in GPU_CATS:
            d = int(round(e.get("dur", 0) * 1000))
            s = agg.get(e["name"])
            if s is None:
                agg[e["name"]] = [1, d, d, d]
            else:
                s[0] += 1
                s[1] += d
                if d < s[2]:
                    s[2] = d
                if d > s[3]:
                    s[3] = d

    rows = sorted(agg.items(), key=lambda kv: (-kv[1][1], kv[0]))
    total = sum(v[1] for v in agg.values())
    count = sum(v[0] for v in agg.values())
    print("gpu_events %d names %d total_ns %d" % (count, len(agg), total))
    for name, (n, tot, _, _) in rows[: a.top]:
        short = name if len(name) <= 90 else name[:87] + "..."
        print("%12.3f ms %8d  %5.1f%%  %s" % (tot / 1e6, n, 100.0 * tot / total if total else 0.0, short))
    if a.csv:
        with open(a.csv, "w", encoding="utf-8", newline="") as f:
            f.write("name,count,total_ns,min_ns,max_ns\n")
            for name, v in rows:
                f.write('"%s",%d,%d,%d,%d\n' % ((name.replace('"', '""'),) + tuple(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
