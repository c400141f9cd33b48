#!/usr/bin/env python3
"""Generate a small synthetic PyTorch-Ascend (torch_npu, text export) cluster profiling tree.

Layout produced (one dir per rank, as msprof-analyze cluster_analyse expects for text data):
  cluster/node{n}_{pid}_{timestamp}_ascend_pt/
      profiler_info_{rank}.json         <- rank id is taken from this FILE NAME only
      profiler_metadata.json            <- distributed_args + parallel_group_info (optional)
      ASCEND_PROFILER_OUTPUT/
          communication.json
          communication_matrix.json
          step_trace_time.csv

Topology: 4 ranks on 2 nodes (node0: ranks 0,1; node1: ranks 2,3), Megatron tp=2, pp=2, dp=1.
  group A  world (0,1,2,3)  hcom_allReduce x2 per step  (HCCS intra-node + RDMA inter-node)
  group B  tp    (0,1)      hcom_broadcast x1 per step  (HCCS + a little PCIE)
  group C  tp    (2,3)      hcom_broadcast x1 per step  (HCCS + a little PCIE)  -- NOT in parallel_group_info
  group P  pp    (1,3)      hcom_send on rank 1 / hcom_receive on rank 3, x1 per step (RDMA)
Anomalies: rank 3 has a slow RDMA NIC (~3 GB/s vs ~12 GB/s); rank 2 computes slowly, so the other
ranks wait in allReduce, rank 0 the most (large Wait Time); rank 3 sees pipeline bubble (hcom_receive wait).

Values are synthetic but self-consistent:
  Elapse = Transit + Wait + Idle;  Sync <= Wait
  Wait Time Ratio = round(Wait/(Wait+Transit), 4); Synchronization Time Ratio = round(Sync/(Sync+Transit), 4)
  per transport: Transit Size = sum(size*count), Transit Time = sum(time) over Size Distribution,
                 Bandwidth(GB/s) = round(Transit Size(MB)/Transit Time(ms), 4), SDMA = HCCS + PCIE
  Communication Time Info Transit Time = SDMA time + RDMA time (synthetic convention)
"""
import csv
import json
import os
import random
import re
import shutil
import sys
from collections import defaultdict

OUT = sys.argv[1] if len(sys.argv) > 1 else "./cluster"
random.seed(20250101)

RANKS = [0, 1, 2, 3]
NODE = {0: 0, 1: 0, 2: 1, 3: 1}
STEPS = [1, 2]
T0_US = 1735000000000000.0          # step1 start, us
STEP_US = 130000.0                   # step length, us


def dhash(s):
    """msprof-analyze double_hash: two 32-bit polynomial hashes (primes 29, 131) packed hi|lo."""
    h0 = h1 = 0
    for ch in s:
        h0 = (h0 * 29 + ord(ch)) & 0xFFFFFFFF
        h1 = (h1 * 131 + ord(ch)) & 0xFFFFFFFF
    return (h0 << 32) | h1


GROUPS = {
    "A": dict(hccl="10.0.0.1%enp189s0f0_60000_0_1735000000000001", pg="default_group", ranks=[0, 1, 2, 3],
              kind="collective", op="hcom_allReduce", per_step=2, in_meta=True),
    "B": dict(hccl="10.0.0.1%enp189s0f0_60001_0_1735000000000002", pg="tp", ranks=[0, 1],
              kind="collective", op="hcom_broadcast", per_step=1, in_meta=True),
    "C": dict(hccl="10.0.0.2%enp189s0f0_60002_0_1735000000000003", pg="tp", ranks=[2, 3],
              kind="collective", op="hcom_broadcast", per_step=1, in_meta=False),
    "P": dict(hccl="10.0.0.1%enp189s0f0_60003_0_1735000000000004", pg="pp", ranks=[1, 3],
              kind="p2p", op=None, per_step=1, in_meta=True),
}
for g in GROUPS.values():
    g["hash"] = str(dhash(g["hccl"]))

MB_4M, MB_1M, MB_256K = 4.194304, 1.048576, 0.262144


def r6(x):
    return round(x, 6)


def ratio(a, b):
    return 0 if abs(b) < 1e-15 else round(a / b, 4)


def empty_transport():
    return {"Transit Size(MB)": 0, "Transit Time(ms)": 0, "Bandwidth(GB/s)": 0,
            "Large Packet Ratio": 0, "Size Distribution": {}}


def transport(packets, bw_gbs):
    """packets: {size_MB: count}; bw_gbs: effective per-packet bandwidth (MB/ms == GB/s)."""
    dist = {}
    tot_size = tot_time = 0.0
    n = big = 0
    for size, cnt in packets.items():
        if cnt <= 0:
            continue
        t = r6(size * cnt / (bw_gbs * random.uniform(0.97, 1.03)))
        dist[str(size)] = [cnt, t]
        tot_size += size * cnt
        tot_time += t
        n += cnt
        big += cnt if size >= 1.0 else 0
    if not dist:
        return empty_transport()
    tot_size, tot_time = r6(tot_size), r6(tot_time)
    return {"Transit Size(MB)": tot_size, "Transit Time(ms)": tot_time,
            "Bandwidth(GB/s)": ratio(tot_size, tot_time),
            "Large Packet Ratio": ratio(big, n), "Size Distribution": dist}


def sdma_of(hccs, pcie):
    s = r6(hccs["Transit Size(MB)"] + pcie["Transit Size(MB)"])
    t = r6(hccs["Transit Time(ms)"] + pcie["Transit Time(ms)"])
    if t == 0:
        return empty_transport()
    return {"Transit Size(MB)": s, "Transit Time(ms)": t, "Bandwidth(GB/s)": ratio(s, t),
            "Large Packet Ratio": 0, "Size Distribution": {}}


def rdma_bw(rank):
    return 2.9 if rank == 3 else 11.8   # rank 3: slow RDMA link


def hccs_bw(rank):
    return 19.5 + 0.4 * rank


def op_entry(start_us, rdma, hccs, pcie, wait, sync, idle):
    sdma = sdma_of(hccs, pcie)
    transit = r6(sdma["Transit Time(ms)"] + rdma["Transit Time(ms)"])
    wait, sync, idle = r6(wait), r6(min(sync, wait)), r6(idle)
    elapse = r6(transit + wait + idle)
    return {
        "Communication Time Info": {
            "Start Timestamp(us)": round(start_us, 3),
            "Elapse Time(ms)": elapse,
            "Transit Time(ms)": transit,
            "Wait Time(ms)": wait,
            "Synchronization Time(ms)": sync,
            "Idle Time(ms)": idle,
            "Wait Time Ratio": ratio(wait, wait + transit),
            "Synchronization Time Ratio": ratio(sync, sync + transit),
        },
        "Communication Bandwidth Info": {"RDMA": rdma, "HCCS": hccs, "PCIE": pcie, "SDMA": sdma},
    }


def allreduce_wait(rank, k):
    base = {0: 11.5, 1: 3.2, 2: 0.04, 3: 2.6}[rank]     # rank 2 is the slow (late) rank
    return base * random.uniform(0.85, 1.15) + 0.3 * k


# ---------------------------------------------------------------------------------------------
# build per-rank raw (CANN-level) per-op data: comm[rank][step][op_name] and matrix[rank][step][op_name]
comm = {r: {s: {} for s in STEPS} for r in RANKS}
matrix = {r: {s: {} for s in STEPS} for r in RANKS}
recv_elapse_us = defaultdict(float)     # (rank, step) -> sum of hcom_receive elapse (us), "Bubble"
seq = defaultdict(int)


def local(gkey, rank):
    return GROUPS[gkey]["ranks"].index(rank)


def link(ttype, size, time_ms):
    size, time_ms = r6(size), r6(time_ms)
    return {"Transport Type": ttype, "Transit Size(MB)": size, "Transit Time(ms)": time_ms,
            "Bandwidth(GB/s)": ratio(size, time_ms)}


for step in STEPS:
    t_step = T0_US + (step - 1) * STEP_US
    # ---- group A allReduce
    g = GROUPS["A"]
    for k in range(g["per_step"]):
        idx = seq["A"]; seq["A"] += 1
        name = f"{g['op']}__{g['hash'][-3:]}_{idx}_1@{g['hash']}"
        start = t_step + 60000.0 + k * 25000.0
        for r in g["ranks"]:
            hccs = transport({MB_4M: 4 + k, MB_1M: 2}, hccs_bw(r))
            pcie = transport({MB_256K: 1}, 5.5) if r in (0, 2) else empty_transport()
            rdma = transport({MB_4M: 2 + k, MB_1M: 3}, rdma_bw(r))
            e = op_entry(start + r * 1.5, rdma, hccs, pcie, allreduce_wait(r, k),
                         allreduce_wait(r, k) * 0.8, random.uniform(0.05, 0.4))
            comm[r][step][name] = e
            # matrix: rank reports its outgoing links (local src -> every local dst, incl. self)
            l = local("A", r)
            links = {}
            peers_rdma = [x for x in g["ranks"] if NODE[x] != NODE[r]]
            for x in g["ranks"]:
                lx = local("A", x)
                if x == r:
                    buf = hccs["Transit Size(MB)"] + rdma["Transit Size(MB)"]
                    links[f"{l}-{lx}"] = link("LOCAL", buf, buf / random.uniform(580, 650))
                elif NODE[x] == NODE[r]:
                    links[f"{l}-{lx}"] = link("HCCS", hccs["Transit Size(MB)"], hccs["Transit Time(ms)"])
                else:
                    n = len(peers_rdma)
                    links[f"{l}-{lx}"] = link("RDMA", rdma["Transit Size(MB)"] / n,
                                              rdma["Transit Time(ms)"] / n * random.uniform(0.95, 1.05))
            matrix[r][step][name] = links
    # ---- groups B and C broadcast (scatter + allgather: both ranks send over HCCS)
    for gk in ("B", "C"):
        g = GROUPS[gk]
        idx = seq[gk]; seq[gk] += 1
        name = f"{g['op']}__{g['hash'][-3:]}_{idx}_1@{g['hash']}"
        start = t_step + 20000.0 + (0 if gk == "B" else 400.0)
        for r in g["ranks"]:
            hccs = transport({MB_4M: 2, MB_256K: 3 + r}, hccs_bw(r) * 0.9)
            pcie = transport({MB_256K: 1}, 6.0) if local(gk, r) == 0 else empty_transport()
            wait = random.uniform(0.5, 1.5) if local(gk, r) == 1 else random.uniform(0.02, 0.2)
            e = op_entry(start + r, empty_transport(), hccs, pcie, wait, wait * 0.7, random.uniform(0.02, 0.2))
            comm[r][step][name] = e
            l = local(gk, r)
            other = 1 - l
            buf = hccs["Transit Size(MB)"]
            matrix[r][step][name] = {
                f"{l}-{l}": link("LOCAL", buf, buf / random.uniform(580, 650)),
                f"{l}-{other}": link("HCCS", hccs["Transit Size(MB)"], hccs["Transit Time(ms)"]),
            }
    # ---- group P: send on rank 1 (local 0) -> receive on rank 3 (local 1), RDMA
    g = GROUPS["P"]
    idx = seq["P"]; seq["P"] += 1
    start = t_step + 40000.0
    size_pk = {MB_4M: 3, MB_1M: 1}
    for r, opn, wait in ((1, "hcom_send", 0.08), (3, "hcom_receive", 6.5 + 1.5 * step)):
        name = f"{opn}__{g['hash'][-3:]}_{idx}_1@{g['hash']}"
        rdma = transport(size_pk, rdma_bw(3))   # the transfer lands on rank 3's slow NIC on both ends
        e = op_entry(start + (0 if r == 1 else 2.0), rdma, empty_transport(), empty_transport(),
                     wait, wait * 0.9, random.uniform(0.01, 0.05))
        comm[r][step][name] = e
        lp = local("P", r)   # CCL-buffer <-> user-buffer copy shows up as a LOCAL self link (also lets
        buf = rdma["Transit Size(MB)"]   # cluster_analyse map local->global rank for this group)
        matrix[r][step][name] = {f"{lp}-{lp}": link("LOCAL", buf, buf / random.uniform(580, 650)),
                                 "0-1": link("RDMA", rdma["Transit Size(MB)"], rdma["Transit Time(ms)"])}
        if opn == "hcom_receive":
            recv_elapse_us[(r, step)] += e["Communication Time Info"]["Elapse Time(ms)"] * 1000.0


# ---------------------------------------------------------------------------------------------
# torch_npu-side post-processing (behaviour mirrored from torch_npu CommunicationParser, re-implemented)
P2P_PREFIX = ("hcom_send", "hcom_receive", "hcom_batchsendrecv")
HCCL_PATTERN = re.compile(r"send|reduce|invalid|broadcast|allreduce|receive|allgather|reducescatter|"
                          r"scatter|alltoall|alltoallv|alltoallvc|batchsendrecv")


def split_p2p(ops):
    out = {"p2p": {}, "collective": {}}
    for name, info in ops.items():
        low = name.lower()
        if low.startswith(P2P_PREFIX):
            out["p2p"][name] = info
        elif low.startswith("total"):
            continue
        else:
            out["collective"][name] = info
    return out


def total_op_info(ops):
    """torch_npu per-rank 'Total Op Info': sums over ALL ops of the type (p2p or collective) in the step.
    Time: every key except the two ratios and Start Timestamp is summed; ratios recomputed.
    Bandwidth: per transport, Transit Time/Size summed and Size Distribution merged; NO Bandwidth(GB/s)
    and NO Large Packet Ratio are written (torch_npu computes the bandwidth but discards it)."""
    t = defaultdict(float)
    bw = {}
    for info in ops.values():
        for k, v in info["Communication Time Info"].items():
            if k not in ("Wait Time Ratio", "Synchronization Time Ratio", "Start Timestamp(us)"):
                t[k] += v
        for tt, d in info["Communication Bandwidth Info"].items():
            tot = bw.setdefault(tt, {"Transit Time(ms)": 0, "Transit Size(MB)": 0, "Size Distribution": {}})
            tot["Transit Time(ms)"] += d["Transit Time(ms)"]
            tot["Transit Size(MB)"] += d["Transit Size(MB)"]
            for sz, (c, tm) in d["Size Distribution"].items():
                cur = tot["Size Distribution"].setdefault(sz, [0, 0])
                cur[0] += c
                cur[1] += tm
    t = dict(t)
    t["Wait Time Ratio"] = ratio(t.get("Wait Time(ms)", 0), t.get("Wait Time(ms)", 0) + t.get("Transit Time(ms)", 0))
    t["Synchronization Time Ratio"] = ratio(t.get("Synchronization Time(ms)", 0),
                                            t.get("Transit Time(ms)", 0) + t.get("Synchronization Time(ms)", 0))
    return {"Communication Time Info": t, "Communication Bandwidth Info": bw}


def comm_json(rank):
    out = {}
    for step in STEPS:
        d = split_p2p(comm[rank][step])
        for kind in ("p2p", "collective"):
            if d[kind]:
                d[kind]["Total Op Info"] = total_op_info(d[kind])
        out[f"step{step}"] = d
    return out


def matrix_json(rank):
    out = {}
    for step in STEPS:
        d = split_p2p(matrix[rank][step])
        res = {}
        for kind in ("p2p", "collective"):
            grouped = defaultdict(list)     # (type, group, link) -> [link dicts]
            for name, links in d[kind].items():
                m = HCCL_PATTERN.search(name.lower())
                ctype = m.group() if m else name.split("__")[0]
                for lk, ld in links.items():
                    ld = dict(ld)
                    ld["Op Name"] = name.split("@")[0]
                    grouped[(ctype, name.split("@")[-1], lk)].append(ld)
            integ = defaultdict(dict)
            for (ctype, grp, lk), data in grouped.items():
                data.sort(key=lambda x: x["Bandwidth(GB/s)"], reverse=True)
                ts = sum(x["Transit Size(MB)"] for x in data)
                tt = sum(x["Transit Time(ms)"] for x in data)
                integ[f"{ctype}-top1@{grp}"][lk] = data[0]
                integ[f"{ctype}-middle@{grp}"][lk] = data[len(data) // 2]
                integ[f"{ctype}-bottom1@{grp}"][lk] = data[-1]
                integ[f"{ctype}-total@{grp}"][lk] = {"Transport Type": data[0]["Transport Type"],
                                                      "Transit Size(MB)": ts, "Transit Time(ms)": tt,
                                                      "Bandwidth(GB/s)": ratio(ts, tt)}
                if len(data) >= 2:
                    integ[f"{ctype}-bottom2@{grp}"][lk] = data[-2]
                if len(data) >= 3:
                    integ[f"{ctype}-bottom3@{grp}"][lk] = data[-3]
            res[kind] = dict(integ)
        out[f"step{step}"] = res
    return out


STEP_HEADERS = ["Device_id", "Step", "Computing", "Communication(Not Overlapped)", "Overlapped", "Communication",
                "Free", "Stage", "Bubble", "Communication(Not Overlapped and Exclude Receive)", "Preparing"]


def step_rows(rank):
    rows = []
    for step in STEPS:
        comm_us = sum(o["Communication Time Info"]["Elapse Time(ms)"] for o in comm[rank][step].values()) * 1000.0
        overlapped = comm_us * (0.18 + 0.02 * rank)
        cno = comm_us - overlapped
        computing = (96500.0 if rank == 2 else 80200.0 + 350.0 * rank) + 700.0 * step
        e2e = STEP_US - 2000.0
        free = e2e - computing - cno
        assert free > 0, (rank, step, free)
        bubble = recv_elapse_us.get((rank, step), 0.0)
        rows.append([rank, step, round(computing, 3), round(cno, 3), round(overlapped, 3), round(comm_us, 3),
                     round(free, 3), round(e2e - bubble, 3), round(bubble, 3), round(cno - bubble, 3),
                     round(180.0 + 45.0 * rank + 10.0 * step, 3)])
    return rows


def main():
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    meta_groups = {g["hccl"]: {"group_name": g["pg"], "group_rank": None, "global_ranks": g["ranks"]}
                   for g in GROUPS.values() if g["in_meta"]}
    for r in RANKS:
        d = os.path.join(OUT, f"node{NODE[r]}_{31000 + r}_2025010112000{r}123_ascend_pt")
        out = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
        os.makedirs(out)
        with open(os.path.join(d, f"profiler_info_{r}.json"), "w") as f:
            json.dump({"config": {"common_config": {"activities": ["ProfilerActivity.CPU", "ProfilerActivity.NPU"]},
                                  "experimental_config": {"_export_type": ["text"]}},
                       "rank_id": r, "torch_npu_version": "synthetic", "cann_version": "synthetic"}, f, indent=1)
        mg = {}
        for k, v in meta_groups.items():
            if r in v["global_ranks"]:
                mg[k] = dict(v, group_rank=v["global_ranks"].index(r))
        with open(os.path.join(d, "profiler_metadata.json"), "w") as f:
            json.dump({"distributed_args": {"world_size": 4, "tensor_model_parallel_size": 2,
                                            "pipeline_model_parallel_size": 2, "data_parallel_size": 1,
                                            "context_parallel_size": 1, "expert_model_parallel_size": 1,
                                            "sequence_parallel": False},
                       "parallel_group_info": mg}, f, indent=1)
        with open(os.path.join(out, "communication.json"), "w") as f:
            json.dump(comm_json(r), f, indent=1)
        with open(os.path.join(out, "communication_matrix.json"), "w") as f:
            json.dump(matrix_json(r), f, indent=1)
        with open(os.path.join(out, "step_trace_time.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(STEP_HEADERS)
            w.writerows(step_rows(r))
    with open(os.path.join(os.path.dirname(OUT.rstrip("/")), "groups.json"), "w") as f:
        json.dump({k: {kk: vv for kk, vv in g.items()} for k, g in GROUPS.items()}, f, indent=1)
    print("written", OUT)


if __name__ == "__main__":
    main()
