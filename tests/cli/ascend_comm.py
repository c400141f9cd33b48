#!/usr/bin/env python3
"""trainprof comm on Ascend communication summaries (communication.json,
communication_matrix.json, cluster_communication.json).

Data, made and real:
- tests/data/ascend_comm/cluster: MADE. Four torch_npu rank directories
  (profiler_info_N.json, ASCEND_PROFILER_OUTPUT/communication.json and
  communication_matrix.json) from gen_cluster.py beside it, in the formats of
  msprof-analyze's parsers. expected/cluster_communication.json is what
  msprof-analyze's own cluster_analyse (run from its public source,
  `cluster -m all`) made of them: its "Total Op Info@group" per step and rank
  is the oracle for hccl_totals, its per-rank op entries for hccl_ops.
- ../shared/data/traces/msprof-analyze/.../cluster_communication.json: REAL
  (msprof-analyze's test resource): read as input, every op's times as written.
- Everything else here (cut, broken, beside a trace) is made in a temporary
  directory from the above.
"""
import json
import os
import shutil

import common
from common import SRC, TRAINPROF, check, finish, scratch, testdata

DATA = os.path.join(SRC, "tests", "data", "ascend_comm")
CLUSTER = os.path.join(DATA, "cluster")
EXPECTED = os.path.join(DATA, "expected", "cluster_communication.json")
SHARED = testdata()
REAL = SHARED and os.path.join(SHARED, "traces", "msprof-analyze", "test", "resource", "advisor",
                               "cluster_analysis_output", "cluster_communication.json")
TRACE_VIEW = SHARED and os.path.join(SHARED, "traces", "msprof-analyze", "test", "ut", "advisor",
                                     "advisor_backend", "timeline_advice", "trace_view.json")


def run(*args):
    return common.run([TRAINPROF, *args])


def comm_json(*paths):
    rc, out, err = run("comm", "--format", "json", *paths)
    check(rc == 0, f"comm {paths}: rc {rc}: {err}")
    return json.loads(out) if rc == 0 else []


def close(a, b, tol):
    return abs(a - b) <= tol


def rank_dirs():
    out = {}
    for d in sorted(os.listdir(CLUSTER)):
        for f in os.listdir(os.path.join(CLUSTER, d)):
            if f.startswith("profiler_info_"):
                out[int(f[len("profiler_info_"):-len(".json")])] = os.path.join(CLUSTER, d)
    return out


def check_against_msprof():
    """Each rank's hccl_totals equal to cluster_analyse's Total Op Info@group,
    hccl_ops equal to its per-rank op entries."""
    expected = json.load(open(EXPECTED))
    results = comm_json(CLUSTER)
    check(len(results) == 4, f"4 ranks from the cluster directory, got {len(results)}")
    by_rank = {}
    for r in results:
        check(r["label"].startswith("rank "), f"rank from profiler_info_N.json: {r['label']}")
        by_rank[int(r["label"].split()[1])] = r
    check(sorted(by_rank) == [0, 1, 2, 3], f"ranks 0-3: {sorted(by_rank)}")
    totals = ops = 0
    ms = {"elapse_ns": "Elapse Time(ms)", "transit_ns": "Transit Time(ms)", "wait_ns": "Wait Time(ms)",
          "sync_ns": "Synchronization Time(ms)", "idle_ns": "Idle Time(ms)"}
    for group in expected.values():
        for step, step_ops in group.items():
            for op, per_rank in step_ops.items():
                for rank, info in per_rank.items():
                    t = info["Communication Time Info"]
                    bw = info["Communication Bandwidth Info"]
                    res = by_rank[int(rank)]
                    if op.startswith("Total Op Info@"):
                        gid = op.split("@")[1]
                        rows = [x for x in res.get("hccl_totals", []) if x["step"] == step and x["group"] == gid]
                        check(len(rows) == 1, f"rank {rank} {step} {gid}: one totals row")
                        if not rows:
                            continue
                        row = rows[0]
                        totals += 1
                        n = row["ops"]
                        for col, key in ms.items():  # each op's ms rounded to the ns once
                            check(close(row[col] / 1e6, t[key], 1e-6 * n),
                                  f"rank {rank} {step} {gid} {col}: {row[col]} vs {t[key]} ms")
                        # msprof rounds its ratios and bandwidths to 4 places
                        check(close(row["wait_ratio"], t["Wait Time Ratio"], 6e-5),
                              f"rank {rank} {step} {gid} wait ratio {row['wait_ratio']} vs {t['Wait Time Ratio']}")
                        check(close(row["sync_ratio"], t["Synchronization Time Ratio"], 6e-5),
                              f"rank {rank} {step} {gid} sync ratio")
                        for tr in ("RDMA", "SDMA"):
                            got = row[tr.lower() + "_gbps"]
                            want = bw.get(tr, {}).get("Bandwidth(GB/s)", 0)
                            if want:
                                check(got is not None and close(got, want, 6e-5 + 1e-6 * want),
                                      f"rank {rank} {step} {gid} {tr} bandwidth {got} vs {want}")
                            else:
                                check(got is None, f"rank {rank} {step} {gid} {tr}: no traffic, no bandwidth")
                        continue
                    rows = [x for x in res.get("hccl_ops", []) if x["step"] == step and x["op"] == op]
                    check(len(rows) == 1, f"rank {rank} {step} {op}: one op row")
                    if rows:
                        ops += 1
                        for col, key in ms.items():
                            check(close(rows[0][col] / 1e6, t[key], 1e-6), f"rank {rank} {op} {col}")
    check(totals == 20 and ops == 28, f"compared 20 totals and 28 ops: {totals}, {ops}")
    return by_rank


def check_transports_and_links(by_rank):
    """Per transport and per link, against a reading of the inputs in Python."""
    for rank, d in rank_dirs().items():
        comm = json.load(open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication.json")))
        want = {}
        for step in comm.values():
            for kind in step.values():
                for op, info in kind.items():
                    if op.startswith("Total"):
                        continue
                    for tr, b in info["Communication Bandwidth Info"].items():
                        size = round(b["Transit Size(MB)"] * 1e6)
                        packets = sum(c for c, _ in b.get("Size Distribution", {}).values())
                        if size <= 0 and not packets:
                            continue
                        w = want.setdefault(tr, [0, 0, 0, 0])
                        w[0] += size
                        w[1] += round(b["Transit Time(ms)"] * 1e6)
                        w[2] += packets
                        w[3] += 1
        got = {x["transport"]: x for x in by_rank[rank]["hccl_transports"]}
        check(sorted(got) == sorted(want), f"rank {rank} transports {sorted(got)} vs {sorted(want)}")
        for tr, (size, ns, packets, n) in want.items():
            g = got.get(tr)
            if not g:
                continue
            check((g["bytes"], g["time_ns"], g["packets"], g["ops"]) == (size, ns, packets, n),
                  f"rank {rank} {tr}: {g} vs {(size, ns, packets, n)}")
            check(close(g["bandwidth_gbps"], size / ns, 1e-9), f"rank {rank} {tr} bandwidth")
        matrix = json.load(open(os.path.join(d, "ASCEND_PROFILER_OUTPUT", "communication_matrix.json")))
        links = {}
        for step in matrix.values():
            for kind in step.values():
                for op, entries in kind.items():
                    stat = op.split("@")[0].rsplit("-", 1)[-1]
                    if stat.startswith(("top", "middle", "bottom")):
                        continue  # statistics over the op type; "-total" has their sum
                    for key, e in entries.items():
                        s, t = (int(v) for v in key.split("-"))
                        w = links.setdefault((s, t, e["Transport Type"]), [0, 0, 0])
                        w[0] += 1
                        w[1] += round(e["Transit Size(MB)"] * 1e6)
                        w[2] += round(e["Transit Time(ms)"] * 1e6)
        got = {(x["src"], x["dst"], x["transport"]): [x["ops"], x["bytes"], x["time_ns"]]
               for x in by_rank[rank]["hccl_links"]}
        check(got == links, f"rank {rank} links {got} vs {links}")


# msprof-analyze's advisor on the same cluster (expected/advisor_findings.txt):
# per transport the step-rank bandwidths' mean (it rounds to 3 places), the
# highest and lowest with their rank and step
ADVISOR_SLOW_LINKS = {
    "RDMA": {"mean": 8.11, "max": (12.0516, 0, "step2"), "min": (2.8767, 3, "step2")},
    "SDMA": {"mean": 19.308, "max": (20.1477, 3, "step2"), "min": (18.3144, 0, "step2")},
}


def check_cluster_view():
    """collectives over the rank directories: the groups, every rank's totals
    with its group's ranks, and the slow links as msprof-analyze's advisor
    finds them."""
    expected = json.load(open(EXPECTED))
    rc, out, err = run("collectives", "--format", "json", CLUSTER)
    check(rc == 0, f"collectives on the cluster: {rc} {err}")
    if rc:
        return
    res = json.loads(out)
    want_groups = {}
    for gr, steps in expected.items():
        for ops in steps.values():
            for op, ranks in ops.items():
                if op.startswith("Total Op Info@"):
                    want_groups[op.split("@")[1]] = gr
                    step = [st for st, o in steps.items() if o is ops][0]
                    for rank, info in ranks.items():
                        rows = [x for x in res.get("hccl_totals", []) if x["group"] == op.split("@")[1] and
                                x["rank"] == int(rank) and x["step"] == step]
                        t, bw = info["Communication Time Info"], info["Communication Bandwidth Info"]
                        ok = len(rows) == 1 and rows[0]["group_ranks"] == gr
                        if ok:  # its values, as comm's per-rank totals are checked above
                            r = rows[0]
                            ok = (close(r["elapse_ns"] / 1e6, t["Elapse Time(ms)"], 1e-6 * r["ops"]) and
                                  close(r["wait_ratio"], t["Wait Time Ratio"], 6e-5) and
                                  all(close(r[tr.lower() + "_gbps"] or 0, bw.get(tr, {}).get("Bandwidth(GB/s)", 0),
                                            6e-5 + 1e-6 * bw.get(tr, {}).get("Bandwidth(GB/s)", 0))
                                      for tr in ("RDMA", "SDMA")))
                        check(ok, f"collectives: the totals of rank {rank} in {op} under {gr}, {step}: {rows}")
    got_groups = {g["group"]: g["ranks"] for g in res.get("hccl_groups", [])}
    check(got_groups == want_groups, f"collectives: the groups' ranks as msprof-analyze's keys: {got_groups}")
    late = {g["ranks"]: g["late_rank"] for g in res.get("hccl_groups", [])}
    check(late.get("(0, 1, 2, 3)") == 2 and late.get("(1, 3)") is None,
          f"the world group's late rank is rank 2 (made slow), none for p2p: {late}")
    slow = {x["transport"]: x for x in res.get("hccl_slow_links", [])}
    for tr, want in ADVISOR_SLOW_LINKS.items():
        x = slow.get(tr)
        check(x is not None, f"slow links: {tr}")
        if not x:
            continue
        check(round(x["mean_gbps"], 3) == want["mean"], f"{tr} mean {x['mean_gbps']} vs {want['mean']}")
        for end in ("max", "min"):
            g, r, st = want[end]
            check(close(x[end + "_gbps"], g, 6e-5) and x[end + "_rank"] == r and x[end + "_step"] == st,
                  f"{tr} {end}: {x[end + '_gbps']} rank {x[end + '_rank']} {x[end + '_step']} vs {want[end]}")
        check(x["slow"] is True, f"{tr}: a gap above 0.05 is a slow link")
    rc, out, _ = run("collectives", CLUSTER)
    check(rc == 0 and "slow link: RDMA of rank 3 in step2 at 2.88 GB/s" in out, f"the text names the slow link: {out}")


# msprof-analyze's packet checker (advisor, PacketChecker) run on each made
# rank directory: per transport the transfers it counts (every op entry with
# bytes, its per-step "Total Op Info" entries included), the small ones
# (SDMA under 16 MB, RDMA under 1 MB) and their transit time in ms
ADVISOR_PACKETS = {  # rank: (SDMA count, small, small ms), (RDMA count, small, small ms)
    0: ((8, 2, 1.129716), (6, 0, 0.0)),
    1: ((8, 2, 1.035846), (10, 0, 0.0)),
    2: ((8, 2, 1.137759), (6, 0, 0.0)),
    3: ((8, 2, 1.083707), (10, 0, 0.0)),
}


def check_advice():
    """advice: small-packets per rank (msprof-analyze's packet rule) and the
    slow link across ranks."""
    rc, out, err = run("advice", "--format", "json", CLUSTER)
    check(rc == 0, f"advice on the cluster: {rc} {err}")
    if rc:
        return
    found = json.loads(out)
    packets = {f["rank"]: f for f in found if f["rule"] == "small-packets"}
    for rank, (sdma, rdma) in ADVISOR_PACKETS.items():
        f = packets.get(rank)
        # trainprof counts the ops, not the Total entries msprof also counts (2 per rank here, none small)
        totals = 2
        want_ratio = sdma[1] / (sdma[0] - totals)
        check(f is not None and close(f["value"], want_ratio, 1e-9) and f"{sdma[1]} of {sdma[0] - totals} SDMA" in
              f["evidence"] and f"{sdma[2]:.3f} ms" in f["evidence"],
              f"rank {rank}: small SDMA transfers as msprof's checker counts them: {f}")
        check(sdma[1] / sdma[0] > 0.2, f"rank {rank}: msprof's checker fires too (its ratio {sdma[1] / sdma[0]})")
    slow = [f for f in found if f["rule"] == "slow-link"]
    check(len(slow) == 1 and slow[0]["rank"] == 3 and "RDMA at 2.88 GB/s in step2" in slow[0]["evidence"],
          f"slow-link names rank 3's RDMA: {slow}")
    rc, out, err = run("advice", "--format", "json", os.path.join(rank_dirs()[0]))
    check(rc == 0 and not [f for f in json.loads(out) if f["rule"] == "slow-link"],
          f"one rank: no slow link (nothing to compare): {rc} {err}")


def check_cluster_matrix():
    """msprof-analyze's cluster_communication_matrix.json: its links under group, step and op."""
    path = os.path.join(DATA, "expected", "cluster_communication_matrix.json")
    m = json.load(open(path))
    want = {}
    for steps in m.values():
        for ops in steps.values():
            for op, links in ops.items():
                stat = op.split("@")[0].rsplit("-", 1)[-1]
                if op.startswith("Total") or stat.startswith(("top", "middle", "bottom")):
                    continue
                for key, e in links.items():
                    s, t = (int(v) for v in key.split("-"))
                    w = want.setdefault((s, t, e["Transport Type"]), [0, 0])
                    w[0] += round(e["Transit Size(MB)"] * 1e6)
                    w[1] += round(e["Transit Time(ms)"] * 1e6)
    res = comm_json(path)
    got = {(x["src"], x["dst"], x["transport"]): [x["bytes"], x["time_ns"]] for x in (res[0].get("hccl_links", []) if res else [])}
    check(got == want and len(got) > 4, f"the cluster matrix's links: {got} vs {want}")


def check_cluster_links():
    """collectives over the rank directories maps each rank's links (ranks within the group) onto global ranks
    and sums them as msprof-analyze's cluster_communication_matrix.json does: every link of every group, step
    and op (the statistics entries and Total Op Info too) equal; the file read back gives itself."""
    m = json.load(open(os.path.join(DATA, "expected", "cluster_communication_matrix.json")))
    want = {(g, st, op, k): (l["Transport Type"], round(l["Transit Size(MB)"] * 1e6), round(l["Transit Time(ms)"] * 1e6),
                             l["Bandwidth(GB/s)"])
            for g, steps in m.items() for st, ops in steps.items() for op, links in ops.items()
            for k, l in links.items()}
    for what, path in (("the rank directories", CLUSTER),
                       ("msprof's cluster matrix read back", os.path.join(DATA, "expected",
                                                                          "cluster_communication_matrix.json"))):
        rc, out, err = run("collectives", "--format", "json", path)
        doc = json.loads(out) if rc == 0 else {}
        got = {(r["ranks"], r["step"], r["op"], f"{r['src']}-{r['dst']}"):
               (r["transport"], r["bytes"], r["time_ns"], round(r["bandwidth_gbps"], 4))
               for r in doc.get("hccl_cluster_links", [])}
        diff = [k for k in set(got) | set(want) if got.get(k) != want.get(k)]
        check(rc == 0 and not diff and len(want) == 310 and doc["hccl_links_unmapped"] == 0,
              f"collectives' cluster links on {what} equal msprof-analyze's cluster matrix ({len(got)} vs {len(want)} "
              f"links; first differing {diff[:2]} {[(got.get(k), want.get(k)) for k in diff[:2]]})")
    rc, out, err = run("collectives", CLUSTER)
    check(rc == 0 and "the slowest links between ranks" in out and "(0, 1, 2, 3)  step1    3    0  RDMA" in out,
          f"the text names rank 3's slow RDMA links first ({out[-600:]})")


def check_real_cluster_file():
    if not REAL or not os.path.exists(REAL):
        print("SKIP (visible): ../shared/data absent: the real cluster_communication.json not read")
        return
    real = json.load(open(REAL))
    res = comm_json(REAL)
    rows = res[0].get("hccl_ops", []) if res else []
    n = 0
    for gr, group in real.items():
        for step, ops in group.items():
            for op, ranks in ops.items():
                for rank, info in ranks.items():
                    t = info["Communication Time Info"]
                    m = [x for x in rows if x["op"] == op and x["rank"] == int(rank) and x["step"] == step]
                    check(len(m) == 1, f"real: {op} rank {rank}")
                    if m:
                        n += 1
                        check(close(m[0]["wait_ns"] / 1e6, t["Wait Time(ms)"], 1e-6), f"real: {op} {rank} wait")
                        check(close(m[0]["elapse_ns"] / 1e6, t["Elapse Time(ms)"], 1e-6), f"real: {op} {rank} elapse")
                        check(close(m[0]["wait_ratio"], t["Wait Time Ratio"], 6e-5), f"real: {op} {rank} ratio")
    check(n == 4 and len(rows) == 4, f"real: 4 op entries, {n} matched of {len(rows)}")
    rc, out, _ = run("comm", REAL)
    check(rc == 0 and "msprof-analyze's Total Op Info" in out and "hcom_broadcast__501_0" in out,
          "real: the text form shows the totals and the ops")


def check_bad_inputs(tmp):
    src = os.path.join(rank_dirs()[0], "ASCEND_PROFILER_OUTPUT", "communication.json")
    text = open(src).read()
    cut = os.path.join(tmp, "cut", "communication.json")
    os.makedirs(os.path.dirname(cut))
    open(cut, "w").write(text[: len(text) // 2])
    rc, out, err = run("comm", "--format", "json", cut)
    check(rc == 4, f"a cut summary: exit 4, got {rc}: {err}")
    if rc == 4:
        ops = json.loads(out)[0].get("hccl_ops", [])
        check(0 < len(ops) < 6 and "ops and" in err and "before the cut" in err,
              f"a cut summary: the ops before the cut ({len(ops)}), said so: {err}")
    bad = os.path.join(tmp, "bad", "communication.json")
    os.makedirs(os.path.dirname(bad))
    open(bad, "w").write('{"step1": {"collective": {"hcom_x@1": {"Communication Time Info": '
                         '{"Elapse Time(ms)": "slow"}}}}}')
    rc, _, err = run("comm", bad)
    check(rc == 3 and "expected a number" in err and "byte " in err,
          f"a string for a time: exit 3 naming the byte: {rc} {err}")
    rc, _, err = run("kernels", src)
    check(rc == 3 and "use trainprof comm" in err, f"kernels on a summary: the hint names comm: {rc} {err}")
    # beside a trace: read with it, one result per rank directory
    rank_dir = os.path.join(tmp, "rank_ascend_pt")
    shutil.copytree(rank_dirs()[2], rank_dir)
    trace = TRACE_VIEW
    if trace and os.path.exists(trace):
        shutil.copy(trace, os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "trace_view.json"))
        rc, out, err = run("comm", "--format", "json", rank_dir)
        res = json.loads(out) if rc == 0 else []
        check(rc == 0 and len(res) == 1 and res[0]["file"].endswith("trace_view.json"),
              f"a rank directory with its trace: one result, the trace's: {rc} {err}")
        comm = json.load(open(os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "communication.json")))
        nops = sum(1 for st in comm.values() for kind in st.values() for op in kind if not op.startswith("Total"))
        check(res and res[0]["label"] == "rank 2" and len(res[0].get("hccl_ops", [])) == nops == 6,
              "the summary beside the trace read with it (rank 2 from profiler_info_2.json, its 6 ops)")
        check("summaries and step tables read with the files beside them" in err, f"the note says so: {err}")
        # a broken summary beside the trace: the trace is still analysed, with a note
        open(os.path.join(rank_dir, "ASCEND_PROFILER_OUTPUT", "communication.json"), "w").write("{\"step1\": 3}")
        rc, out, err = run("comm", "--format", "json", rank_dir)
        check(rc == 0 and "communication.json beside it was not read" in err and
              not json.loads(out)[0].get("hccl_ops"), f"a broken summary beside a trace: a note: {rc} {err}")
        # without the ops' keep, other commands do not read it
        rc, out, err = run("kernels", "--format", "json", rank_dir)
        check(rc == 0 and "hccl" not in out, f"kernels: no HCCL tables: {rc}")
    else:
        print("SKIP (visible): ../shared/data absent: no trace_view.json to put beside a summary")


by_rank = check_against_msprof()
if len(by_rank) == 4:
    check_transports_and_links(by_rank)
check_cluster_view()
check_advice()
check_cluster_matrix()
check_cluster_links()
check_real_cluster_file()
check_bad_inputs(scratch("tprof-ascend-comm-"))
finish("Ascend communication summaries")
