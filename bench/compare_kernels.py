#!/usr/bin/env python3
"""Compare a per-kernel-name CSV with the generator's truth CSV.

usage: compare_kernels.py TRUTH.csv OTHER.csv [LABEL]

Prints one line: "LABEL: OK ..." or "LABEL: MISMATCH ..." (exit 0 / 1), or
"LABEL: n/a ..." (exit 2) when OTHER's columns cannot be recognised.

OTHER may use any header as long as one column holds the name (name,
kernel, kernel_name) and one holds the total time; the unit is taken from
the header (total_ns, total_us, total_ms, ..._s; plain "total" = ns).  Totals
in us/ms are compared with a rounding tolerance, ns exactly.
"""
import csv
import re
import sys

UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def find_total(header):
    for i, h in enumerate(header):
        k = h.strip().lower().replace(" ", "_")
        m = re.match(r"^(total|sum|total_time|total_dur|time_total|dur_total|dur_sum)(?:_?\(?(ns|us|ms|s)\)?)?$", k)
        if m:
            return i, UNITS[m.group(2) or "ns"], m.group(2) or "ns"
    return None


def main():
    truth_path, other_path = sys.argv[1], sys.argv[2]
    label = sys.argv[3] if len(sys.argv) > 3 else other_path
    with open(truth_path, newline="", encoding="utf-8") as f:
        trows = list(csv.reader(f))
    truth = {r[0]: (int(r[1]), int(r[2])) for r in trows[1:]}
    ttotal = sum(v[1] for v in truth.values())

    with open(other_path, newline="", encoding="utf-8", errors="replace") as f:
        orows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    if not orows:
        print("%s: n/a (empty output)" % label)
        return 2
    header = [h.strip().lower() for h in orows[0]]
    name_col = next((i for i, h in enumerate(header) if h in ("name", "kernel", "kernel_name")), None)
    tot = find_total(orows[0])
    cnt_col = next((i for i, h in enumerate(header) if h in ("count", "calls", "n")), None)
    if name_col is None or tot is None:
        print("%s: n/a (unrecognised columns: %s)" % (label, ",".join(orows[0])))
        return 2
    tcol, scale, unit = tot
    other = {}
    for r in orows[1:]:
        if len(r) <= max(name_col, tcol):
            continue
        try:
            v = float(r[tcol]) * scale
        except ValueError:
            continue
        c = int(r[cnt_col]) if cnt_col is not None and r[cnt_col].isdigit() else None
        other[r[name_col]] = (c, v)
    ototal = sum(v[1] for v in other.values())
    bad = []
    for name, (c, t) in truth.items():
        o = other.get(name)
        if o is None:
            bad.append("missing %.50s" % name)
            continue
        tol = 0 if unit == "ns" else scale * (1 + c)  # rounding of each printed total
        if abs(o[1] - t) > tol:
            bad.append("total %.50s: %s vs truth %d ns" % (name, o[1], t))
        if o[0] is not None and o[0] != c:
            bad.append("count %.50s: %d vs truth %d" % (name, o[0], c))
    extra = [n for n in other if n not in truth]
    if extra:
        bad.append("%d names not in truth, e.g. %.50s" % (len(extra), extra[0]))
    if bad:
        print("%s: MISMATCH (%d problems; total %.0f ns vs truth %d ns) %s" % (label, len(bad), ototal, ttotal, "; ".join(bad[:3])))
        return 1
    print("%s: OK (%d names, total %d ns, units %s)" % (label, len(truth), ttotal, unit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
