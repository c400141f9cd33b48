#!/usr/bin/env python3
"""Sanity checks for traces written by trainprof-gentrace.

usage: check_trace.py TRACE.json [TRUTH.csv]

Checks: the document parses; every flow pair is complete; GPU work starts
after its launch; activities on one stream never overlap; CPU ops nest
properly per thread; ProfilerStep spans advance in time; and, if a truth CSV
is given, that it matches the GPU events in the trace exactly (ns integers).
Meant for small traces (it loads everything with json.load).
"""
import collections
import csv
import gzip
import json
import sys


def ns(x):
    # "ts"/"dur" have exactly 3 decimals; go through the repr to stay exact
    s = repr(x)
    if "." in s:
        ip, fp = s.split(".")
        fp = (fp + "000")[:3]
    else:
        ip, fp = s, "000"
    return int(ip) * 1000 + int(fp)


def main():
    path = sys.argv[1]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    errors = []

    def err(msg):
        if len(errors) < 20:
            errors.append(msg)

    cats = collections.Counter(e.get("cat", e.get("ph")) for e in ev)
    runtime = {}
    gpu = {}
    flows_s, flows_f = {}, {}
    streams = collections.defaultdict(list)
    threads = collections.defaultdict(list)
    steps = []
    truth = collections.defaultdict(lambda: [0, 0, None, 0])
    for e in ev:
        cat = e.get("cat")
        ph = e.get("ph")
        if ph == "s":
            flows_s[e["id"]] = e
        elif ph == "f":
            if e.get("bp") != "e":
                err("flow f without bp=e: %r" % e)
            flows_f[e["id"]] = e
        elif cat == "cuda_runtime":
            runtime[e["args"]["correlation"]] = e
        elif cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            gpu[e["args"]["correlation"]] = e
            t0, d = ns(e["ts"]), ns(e["dur"])
            streams[(e["pid"], e["tid"])].append((t0, t0 + d, e["name"]))
            t = truth[e["name"]]
            t[0] += 1
            t[1] += d
            t[2] = d if t[2] is None else min(t[2], d)
            t[3] = max(t[3], d)
        elif cat in ("cpu_op", "user_annotation"):
            t0 = ns(e["ts"])
            threads[(e["pid"], e["tid"])].append((t0, t0 + ns(e["dur"]), e["name"]))
            if e["name"].startswith("ProfilerStep#"):
                steps.append((t0, t0 + ns(e["dur"])))
    for c, k in gpu.items():
        r = runtime.get(c)
        if r is None:
            err("GPU event without runtime call: corr %s" % c)
            continue
        if ns(k["ts"]) < ns(r["ts"]):
            err("GPU work starts before its launch: corr %s" % c)
        if c not in flows_s or c not in flows_f:
            err("missing flow for corr %s" % c)
    for key, lst in streams.items():
        lst.sort()
        for a, b in zip(lst, lst[1:]):
            if b[0] < a[1]:
                err("overlap on stream %s: %s / %s" % (key, a, b))
                break
    for key, lst in threads.items():
        lst.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, e_, name in lst:
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack and e_ > stack[-1][1]:
                err("bad nesting on thread %s: %s inside %s" % (key, name, stack[-1][2]))
                break
            stack.append((s, e_, name))
    steps.sort()
    for a, b in zip(steps, steps[1:]):
        if b[0] < a[1]:
            err("ProfilerStep spans overlap")
    if len(sys.argv) > 2:
        with open(sys.argv[2], newline="") as f:
            rows = list(csv.reader(f))
        if rows[0] != ["name", "count", "total_ns", "min_ns", "max_ns"]:
            err("bad truth header %r" % rows[0])
        seen = set()
        for r in rows[1:]:
            name = r[0]
            seen.add(name)
            want = [int(x) for x in r[1:]]
            got = truth.get(name)
            if got is None or list(got) != want:
                err("truth mismatch for %s: csv %s trace %s" % (name[:60], want, got))
        for name in truth:
            if name not in seen:
                err("name missing from truth: %s" % name[:60])
    n = len(ev)
    print("events %d, steps %d, streams %d, cpu threads %d" % (n, len(steps), len(streams), len(threads)))
    for c, k in cats.most_common():
        print("  %-22s %8d  %5.1f%%" % (c, k, 100.0 * k / n))
    if errors:
        print("FAIL")
        for m in errors:
            print("  " + m)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
