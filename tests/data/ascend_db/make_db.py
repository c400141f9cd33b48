#!/usr/bin/python3
"""Write a small, deterministic, self-consistent synthetic torch_npu "db" export.

Layout produced (default: ./cluster next to this script), the same layout
torch_npu.profiler writes with export_type=Db and msprof-analyze expects:

  cluster/
    rank{R}_{pid}_{ts}_ascend_pt/
      profiler_info_{R}.json            # text-mode rank detection only
      profiler_metadata.json            # distributed_args / parallel_group_info
      ASCEND_PROFILER_OUTPUT/
        ascend_pytorch_profiler_{R}.db  # msprof unified db + torch_npu tables
        analysis.db                     # CommAnalyzerTime/Bandwidth/Matrix, StepTraceTime

Usage:  /usr/bin/python3 make_db.py [--out DIR] [--ranks N]

The schema follows SCHEMA.md (same directory). No randomness: every value is
derived from fixed tables below, so re-running gives byte-identical content
(sqlite page layout aside).
"""
import argparse
import json
import os
import shutil
import sqlite3

# ---------------------------------------------------------------------------
# constants
# ---------------------------------------------------------------------------
T0 = 1_700_000_000_000_000_000          # ns, local unix time (2023-11-14)
STEP_NS = 10_000_000                      # host ProfilerStep#N length: 10 ms
N_STEPS = 2
PREPARE_NS = 200_000                      # host step start -> first device task
GAP_NS = 20_000                           # gap between consecutive kernels
LAUNCH_LEAD_NS = 150_000                  # CANN launch API precedes device task
INVALID = 4294967295                      # msprof "invalid" id (contextId/modelId)
US = 1_000
MS = 1_000_000
MB = 1024 * 1024

START_STRING_ID_FWK_API = 1 << 28         # torch_npu: PYTORCH_API strings
START_STRING_ID_MEMORY = 2 << 28          # torch_npu: memory strings

ENUM_API_TYPE = [(20000, "acl"), (15000, "model"), (10000, "node"), (5500, "hccl"),
                 (5000, "runtime"), (50001, "op"), (50002, "queue"), (50003, "trace"),
                 (50004, "mstx")]
ENUM_HCCL_DATA_TYPE = [(0, "INT8"), (1, "INT16"), (2, "INT32"), (3, "FP16"), (4, "FP32"),
                       (5, "INT64"), (6, "UINT64"), (7, "UINT8"), (8, "UINT16"), (9, "UINT32"),
                       (10, "FP64"), (11, "BFP16"), (12, "INT128"), (65534, "N/A"),
                       (65535, "INVALID_TYPE")]
ENUM_HCCL_LINK_TYPE = [(0, "ON_CHIP"), (1, "HCCS"), (2, "PCIE"), (3, "ROCE"), (4, "SIO"),
                       (5, "HCCS_SW"), (6, "STANDARD_ROCE"), (7, "RESERVED"), (65534, "N/A"),
                       (65535, "INVALID_TYPE")]
ENUM_HCCL_TRANSPORT_TYPE = [(0, "SDMA"), (1, "RDMA"), (2, "LOCAL"), (65534, "N/A"),
                            (65535, "INVALID_TYPE")]
ENUM_HCCL_RDMA_TYPE = [(0, "RDMA_SEND_NOTIFY"), (1, "RDMA_SEND_PAYLOAD"),
                       (2, "RDMA_PAYLOAD_PREPARE"), (3, "RDMA_PAYLOAD_CHECK"),
                       (4, "RDMA_PAYLOAD_ACK"), (5, "RDMA_SEND_OP"), (65534, "N/A"),
                       (65535, "INVALID_TYPE")]
ENUM_MSTX_EVENT_TYPE = [(0, "marker"), (1, "push/pop"), (2, "start/end"), (3, "marker_ex")]
ENUM_MODULE = [(0, "SLOG"), (3, "HCCL"), (4, "FMK"), (7, "RUNTIME"), (22, "DEVMM"),
               (33, "APP"), (45, "GE")]
ENUM_MEMCPY_OPERATION = [(0, "host to host"), (1, "host to device"), (2, "device to host"),
                         (3, "device to device"), (4, "managed memory"),
                         (5, "addr device to device"), (6, "host to device ex"),
                         (7, "device to host ex"), (65535, "other")]

# kernel kinds: (opName, opType, COMPUTE_TASK_INFO.taskType, TASK.taskType,
#                dur_us on rank 0, rank-1 slowdown, inputShapes, aten op, blockDim)
KERNELS = {
    "MM":  ("aclnnMatmul_MatMulCommon_MatMulV2", "MatMulV2", "AI_CORE", "KERNEL_AICORE",
            420, 1.10, "4096,4096;4096,4096", "aten::matmul", 24),
    "ADD": ("aclnnAdd_AddAiCore_Add", "Add", "AI_VECTOR_CORE", "KERNEL_AIVEC",
            60, 1.00, "4096,4096;4096,4096", "aten::add", 48),
    "SM":  ("aclnnSoftmax_SoftmaxV2AiCore_SoftmaxV2", "SoftmaxV2", "AI_VECTOR_CORE",
            "KERNEL_AIVEC", 90, 1.00, "32,4096,4096", "aten::softmax", 48),
    "MUL": ("aclnnMul_MulAiCore_Mul", "Mul", "AI_VECTOR_CORE", "KERNEL_AIVEC",
            55, 1.00, "4096,4096;4096,4096", "aten::mul", 48),
    "NZ":  ("aclnnNonzero_NonZeroAiCpu_NonZero", "NonZero", "AI_CPU", "KERNEL_AICPU",
            150, 1.00, "4096", "aten::nonzero", 1),
}
# per step: kernels before comm A, kernels after comm A; comm B is issued on the
# HCCL stream right after kernel index B_AFTER of the second part (overlaps compute)
PART1 = ["MM", "ADD", "SM", "MM", "MUL", "MM", "ADD"]
PART2 = ["NZ", "MM", "SM", "MM", "ADD", "MUL", "MM", "ADD"]
B_AFTER = 2

# HCCL groups: raw comm name (what STRING_IDS / parallel_group_info keys hold)
GROUPS = [
    ("10.0.0.1%eth0_60000_0_1700000000000000", "default_group"),
    ("10.0.0.1%eth0_60001_0_1700000000000001", "tp"),
]
# comm ops per step: (group index, count of BFP16 elements, algType)
COMM_OPS = {"A": (0, 4 * MB, "MESH-RING"), "B": (1, 2 * MB, "MESH-RING")}
HCCS_GBPS = 20.0         # GB/s (== MB/ms) achieved on HCCS
LOCAL_GBPS = 160.0       # GB/s for the src==dst (LOCAL) copy in the matrix
NOTIFY_NS = 10_000       # every rank waits at least this long for the peer notify
IDLE_NS = 30_000         # tail of the op not spent waiting or transferring
PACKET_MB = 2.0          # SDMA/HCCS packet size used for the size distribution

STREAM_COMPUTE = 2
STREAM_HCCL = 8
STREAM_MEMCPY = 3


def double_hash(data):
    """Same hash msprof-analyze / torch_npu use to turn a raw HCCL group name
    into the numeric group_name of analysis.db (see SCHEMA.md)."""
    h0 = h1 = 0
    for d in data:
        h0 = (h0 * 29 + ord(d)) & 0xFFFFFFFF
        h1 = (h1 * 131 + ord(d)) & 0xFFFFFFFF
    return (h0 << 32) | h1


class Strings:
    """STRING_IDS interning; separate id ranges like msprof / torch_npu."""

    def __init__(self):
        self.ids = {}
        self.next = {"cann": 1, "fwk": START_STRING_ID_FWK_API, "mem": START_STRING_ID_MEMORY}

    def __call__(self, s, space="cann"):
        if s not in self.ids:
            self.ids[s] = self.next[space]
            self.next[space] += 1
        return self.ids[s]

    def rows(self):
        return sorted((i, s) for s, i in self.ids.items())


# ---------------------------------------------------------------------------
# timeline simulation (shared by both ranks so cross-rank values agree)
# ---------------------------------------------------------------------------
def kernel_dur(kind, rank):
    k = KERNELS[kind]
    return int(round(k[4] * US * (k[5] if rank == 1 else 1.0)))


def comm_bytes(op_key):
    return COMM_OPS[op_key][1] * 2          # BFP16 = 2 bytes


def transit_ns(op_key):
    # 2-rank ring allreduce: each rank sends size/2 (reduce-scatter) + size/2 (allgather)
    size_mb = comm_bytes(op_key) / MB
    return int(round(size_mb / HCCS_GBPS * MS))


def simulate(n_ranks):
    """Returns {rank: [event dicts]} with absolute ns times."""
    ev = {r: [] for r in range(n_ranks)}
    seq = {"A": 0, "B": 0}
    for step in range(1, N_STEPS + 1):
        s0 = T0 + (step - 1) * STEP_NS
        # part 1 kernels
        t = {r: s0 + PREPARE_NS for r in range(n_ranks)}
        for r in range(n_ranks):
            for kind in PART1:
                d = kernel_dur(kind, r)
                ev[r].append(dict(kind="kernel", k=kind, start=t[r], end=t[r] + d, step=step))
                t[r] += d + GAP_NS
        # comm A: blocking for compute stream
        ready = {r: t[r] for r in range(n_ranks)}
        a_end = comm_event(ev, "A", seq, step, ready)
        t = {r: a_end + GAP_NS for r in range(n_ranks)}
        # part 2 kernels, comm B issued async after kernel B_AFTER
        b_ready = {}
        for r in range(n_ranks):
            for i, kind in enumerate(PART2):
                d = kernel_dur(kind, r)
                ev[r].append(dict(kind="kernel", k=kind, start=t[r], end=t[r] + d, step=step))
                t[r] += d + GAP_NS
                if i == B_AFTER:
                    b_ready[r] = t[r]
        comm_event(ev, "B", seq, step, b_ready)
        # one H2D memcpy per step at the very end (TASK only, MEMCPY_ASYNC)
        for r in range(n_ranks):
            last = max(e["end"] for e in ev[r] if e["step"] == step)
            ev[r].append(dict(kind="memcpy", start=last + GAP_NS, end=last + GAP_NS + 40 * US,
                              step=step, size=8 * MB))
    for r in ev:
        ev[r].sort(key=lambda e: (e["start"], e["end"]))
    return ev


def comm_event(ev, key, seq, step, ready):
    gidx, count, alg = COMM_OPS[key]
    raw_group = GROUPS[gidx][0]
    suffix = str(double_hash(raw_group))[-3:]
    name = f"hcom_allReduce__{suffix}_{seq[key]}_1"
    seq[key] += 1
    last_ready = max(ready.values())
    tr = transit_ns(key)
    end = last_ready + NOTIFY_NS + tr + IDLE_NS
    for r, rd in ready.items():
        wait = (last_ready - rd) + NOTIFY_NS
        sync = wait - NOTIFY_NS // 2           # synchronization <= wait
        ev[r].append(dict(kind="comm", key=key, name=name, group=raw_group, count=count,
                          alg=alg, start=rd, end=end, wait=wait, sync=sync, transit=tr,
                          idle=end - rd - wait - tr, step=step))
    return end


# ---------------------------------------------------------------------------
# schema (see SCHEMA.md for provenance of every column)
# ---------------------------------------------------------------------------
PROFILER_DDL = """
CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE ENUM_HCCL_DATA_TYPE (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE ENUM_HCCL_LINK_TYPE (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE ENUM_HCCL_TRANSPORT_TYPE (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE ENUM_HCCL_RDMA_TYPE (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE ENUM_MSTX_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE ENUM_MODULE (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE ENUM_MEMCPY_OPERATION (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE SESSION_TIME_INFO (startTimeNs INTEGER, endTimeNs INTEGER);
CREATE TABLE NPU_INFO (id INTEGER, name TEXT);
CREATE TABLE HOST_INFO (hostUid TEXT, hostName TEXT);
CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);
CREATE TABLE META_DATA (name TEXT, value TEXT);
CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,
    globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER,
    streamId INTEGER, taskId INTEGER, modelId INTEGER);
CREATE INDEX TaskIndex ON TASK (startNs, globalTaskId);
CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY,
    blockDim INTEGER, mixBlockDim INTEGER, taskType INTEGER, opType INTEGER,
    inputFormats INTEGER, inputDataTypes INTEGER, inputShapes INTEGER,
    outputFormats INTEGER, outputDataTypes INTEGER, outputShapes INTEGER,
    attrInfo INTEGER, opState INTEGER, hf32Eligible INTEGER);
CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER,
    connectionId INTEGER, groupName INTEGER, opId INTEGER PRIMARY KEY, relay INTEGER,
    retry INTEGER, dataType INTEGER, algType INTEGER, count NUMERIC, opType INTEGER,
    deviceId INTEGER);
CREATE TABLE COMMUNICATION_TASK_INFO (name INTEGER, globalTaskId INTEGER, taskType INTEGER,
    planeId INTEGER, groupName INTEGER, notifyId INTEGER, rdmaType INTEGER, srcRank INTEGER,
    dstRank INTEGER, transportType INTEGER, size INTEGER, dataType INTEGER, linkType INTEGER,
    opId INTEGER, isMaster INTEGER);
CREATE INDEX CommunicationTaskIndex ON COMMUNICATION_TASK_INFO (globalTaskId);
CREATE TABLE MEMCPY_INFO (globalTaskId NUMERIC PRIMARY KEY, size NUMERIC, memcpyOperation NUMERIC);
CREATE TABLE CANN_API (startNs INTEGER, endNs INTEGER, type INTEGER, globalTid INTEGER,
    connectionId INTEGER PRIMARY KEY, name INTEGER);
CREATE TABLE AICORE_FREQ (deviceId INTEGER, timestampNs NUMERIC, freq INTEGER);
CREATE TABLE NPU_MEM (type INTEGER, ddr NUMERIC, hbm NUMERIC, timestampNs INTEGER, deviceId INTEGER);
CREATE TABLE NPU_MODULE_MEM (moduleId INTEGER, timestampNs INTEGER, totalReserved NUMERIC,
    deviceId INTEGER);
CREATE TABLE NPU_OP_MEM (operatorName INTEGER, addr INTEGER, type INTEGER, size INTEGER,
    timestampNs INTEGER, globalTid INTEGER, totalAllocate NUMERIC, totalReserve NUMERIC,
    component INTEGER, deviceId INTEGER);
CREATE TABLE MSTX_EVENTS (startNs INTEGER, endNs INTEGER, eventType INTEGER, rangeId INTEGER,
    category INTEGER, message INTEGER, globalTid INTEGER, endGlobalTid INTEGER,
    domainId INTEGER, connectionId INTEGER);
CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER,
    name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER,
    inputShapes INTEGER, callchainId INTEGER, type INTEGER);
CREATE TABLE CONNECTION_IDS (id INTEGER, connectionId INTEGER);
CREATE TABLE PYTORCH_CALLCHAINS (id INTEGER, stack INTEGER, stackDepth INTEGER);
CREATE TABLE MEMORY_RECORD (component INTEGER, timestamp INTEGER, totalAllocated INTEGER,
    totalReserved INTEGER, totalActive INTEGER, streamPtr INTEGER, deviceId INTEGER);
CREATE TABLE OP_MEMORY (name INTEGER, size INTEGER, allocationTime INTEGER, releaseTime INTEGER,
    activeReleaseTime INTEGER, duration INTEGER, activeDuration INTEGER,
    allocationTotalAllocated INTEGER, allocationTotalReserved INTEGER,
    allocationTotalActive INTEGER, releaseTotalAllocated INTEGER, releaseTotalReserved INTEGER,
    releaseTotalActive INTEGER, streamPtr INTEGER, deviceId INTEGER);
CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);
CREATE TABLE GC_RECORD (startNs INTEGER, endNs INTEGER, globalTid INTEGER);
"""

ANALYSIS_DDL = """
CREATE TABLE CommAnalyzerBandwidth (hccl_op_name TEXT, group_name TEXT, transport_type TEXT,
    transit_size NUMERIC, transit_time NUMERIC, bandwidth NUMERIC, large_packet_ratio NUMERIC,
    package_size NUMERIC, count NUMERIC, total_duration NUMERIC, step TEXT, type TEXT);
CREATE TABLE CommAnalyzerMatrix (hccl_op_name TEXT, group_name TEXT, src_rank TEXT,
    dst_rank TEXT, transport_type TEXT, transit_size NUMERIC, transit_time NUMERIC,
    bandwidth NUMERIC, step TEXT, type TEXT, op_name TEXT);
CREATE TABLE CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC,
    elapse_time NUMERIC, transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC,
    idle_time NUMERIC, step TEXT, type TEXT);
CREATE TABLE StepTraceTime (deviceId INTEGER, step TEXT, computing NUMERIC,
    communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC,
    free NUMERIC, stage NUMERIC, bubble NUMERIC,
    communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC);
"""


def insert(cur, table, rows):
    rows = list(rows)
    if rows:
        cur.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(rows[0]))})", rows)


# ---------------------------------------------------------------------------
# interval helpers (same semantics as torch_npu TraceStepTimeDbParser)
# ---------------------------------------------------------------------------
def merge(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def total(iv):
    return sum(e - s for s, e in iv)


def subtract(a, b):
    """a minus b, both merged."""
    out = []
    for s, e in a:
        cur = s
        for bs, be in b:
            if be <= cur or bs >= e:
                continue
            if bs > cur:
                out.append([cur, bs])
            cur = max(cur, be)
        if cur < e:
            out.append([cur, e])
    return out


# ---------------------------------------------------------------------------
# writers
# ---------------------------------------------------------------------------
def build_profiler_db(path, rank, n_ranks, events):
    S = Strings()
    con = sqlite3.connect(path)
    con.execute("PRAGMA page_size=1024")      # keep the many small tables compact
    cur = con.cursor()
    cur.executescript(PROFILER_DDL)
    device = rank
    pid = 40000 + rank
    tid = 40100 + rank
    gtid = (pid << 32) | tid
    gpid = pid

    insert(cur, "ENUM_API_TYPE", ENUM_API_TYPE)
    insert(cur, "ENUM_HCCL_DATA_TYPE", ENUM_HCCL_DATA_TYPE)
    insert(cur, "ENUM_HCCL_LINK_TYPE", ENUM_HCCL_LINK_TYPE)
    insert(cur, "ENUM_HCCL_TRANSPORT_TYPE", ENUM_HCCL_TRANSPORT_TYPE)
    insert(cur, "ENUM_HCCL_RDMA_TYPE", ENUM_HCCL_RDMA_TYPE)
    insert(cur, "ENUM_MSTX_EVENT_TYPE", ENUM_MSTX_EVENT_TYPE)
    insert(cur, "ENUM_MODULE", ENUM_MODULE)
    insert(cur, "ENUM_MEMCPY_OPERATION", ENUM_MEMCPY_OPERATION)
    insert(cur, "SESSION_TIME_INFO", [(T0 - 1 * MS, T0 + N_STEPS * STEP_NS + 1 * MS)])
    insert(cur, "NPU_INFO", [(device, "Ascend910B2")])
    insert(cur, "HOST_INFO", [("1234567890abcdef", "synthetic-host")])
    insert(cur, "RANK_DEVICE_MAP", [(rank, device)])

    ranks = list(range(n_ranks))
    meta = [
        ("SCHEMA_VERSION", "1.1.0"), ("SCHEMA_VERSION_MAJOR", "1"),
        ("SCHEMA_VERSION_MINOR", "1"), ("SCHEMA_VERSION_MICRO", "0"),
        ("ENV_VARIABLES", json.dumps({"ASCEND_GLOBAL_LOG_LEVEL": "3", "HCCL_RDMA_TC": "",
                                      "HCCL_RDMA_SL": "", "ACLNN_CACHE_LIMIT": ""})),
        ("distributed_args", json.dumps({"tensor_model_parallel_size": 1,
                                         "pipeline_model_parallel_size": 1,
                                         "data_parallel_size": n_ranks,
                                         "context_parallel_size": 1,
                                         "expert_model_parallel_size": 1,
                                         "sequence_parallel": False,
                                         "world_size": n_ranks, "rank": rank})),
        ("parallel_group_info", json.dumps({
            raw: {"group_name": pg, "group_rank": rank, "global_ranks": ranks}
            for raw, pg in GROUPS})),
    ]
    insert(cur, "META_DATA", meta)

    # ids
    gtask = 0
    conn_id = 1000
    task_id = 0
    tasks, cti, comm_ops, ctask, cann, memcpy_info = [], [], [], [], [], []
    pyt, conn_ids = [], []
    pyt_conn = 0
    op_id = 0

    def add_pyt(name, start, end, conn=None, seq=None, shapes=None, typ=50001):
        nonlocal pyt_conn
        c = None
        if conn is not None:
            pyt_conn += 1
            c = pyt_conn
            conn_ids.append((c, conn))
        pyt.append((str(start), str(end), gtid, c, S(name, "fwk"), seq, None,
                    S("BFloat16,BFloat16", "fwk") if shapes else None,
                    S(shapes, "fwk") if shapes else None, None, typ))

    # ProfilerStep#N (PYTORCH_API op rows) + STEP_TIME (host time)
    for step in range(1, N_STEPS + 1):
        s0 = T0 + (step - 1) * STEP_NS
        add_pyt(f"ProfilerStep#{step}", s0, s0 + STEP_NS)
        insert(cur, "STEP_TIME", [(step, s0, s0 + STEP_NS)])

    seqno = 0
    for e in events:
        if e["kind"] == "kernel":
            kname, optype, core, rts, _, _, shapes, aten, bdim = KERNELS[e["k"]]
            conn_id += 1
            gtask += 1
            task_id += 1
            launch_s = e["start"] - LAUNCH_LEAD_NS
            # torch op -> CANN node launch -> device task, all share conn_id
            seqno += 1
            add_pyt(aten, launch_s - 30 * US, launch_s + 20 * US, conn=conn_id, seq=seqno,
                    shapes=shapes)
            cann.append((launch_s, launch_s + 15 * US, 10000, gtid, conn_id, S("launch")))
            tasks.append((e["start"], e["end"], device, conn_id, gtask, gpid, S(rts),
                          INVALID, STREAM_COMPUTE, task_id, INVALID))
            out_shape = shapes.split(";")[0]
            cti.append((S(kname), gtask, bdim, 0, S(core), S(optype), S("ND;ND"),
                        S("DT_BF16;DT_BF16"), S(shapes), S("ND"), S("DT_BF16"),
                        S(out_shape), S(""), S("N/A"), S("N/A")))
        elif e["kind"] == "memcpy":
            conn_id += 1
            gtask += 1
            task_id += 1
            launch_s = e["start"] - LAUNCH_LEAD_NS
            cann.append((launch_s, launch_s + 10 * US, 5000, gtid, conn_id,
                         S("aclrtMemcpyAsync")))
            tasks.append((e["start"], e["end"], device, conn_id, gtask, gpid, S("MEMCPY_ASYNC"),
                          INVALID, STREAM_MEMCPY, task_id, INVALID))
            memcpy_info.append((gtask, e["size"], 1))
        elif e["kind"] == "comm":
            conn_id += 1
            launch_s = e["start"] - LAUNCH_LEAD_NS
            seqno += 1
            add_pyt("HcclAllreduce", launch_s - 40 * US, launch_s + 30 * US, conn=conn_id,
                    seq=seqno)
            cann.append((launch_s, launch_s + 25 * US, 10000, gtid, conn_id, S("launch")))
            comm_ops.append((S(e["name"]), e["start"], e["end"], conn_id, S(e["group"]), op_id,
                             0, 0, 11, S(e["alg"]), e["count"], S("hcom_allReduce_"), device))
            peer = 1 - rank if n_ranks > 1 else rank
            size = comm_bytes(e["key"])
            # HCCL device tasks of the op: wait notify, reduce-inline copy, record
            sub = [("Notify_Wait", e["start"], e["start"] + e["wait"], 65534, 0, 65534, 65534,
                    "NOTIFY_WAIT_SQE"),
                   ("Reduce_Inline", e["start"] + e["wait"], e["start"] + e["wait"] + e["transit"],
                    size, 0, 1, 0, "SDMA_SQE"),
                   ("Notify_Record", e["end"] - e["idle"], e["end"] - e["idle"] + 2 * US,
                    65534, 0, 1, 65534, "NOTIFY_RECORD_SQE")]
            for i, (tt, ts, te, sz, plane, link, transport, rts) in enumerate(sub):
                gtask += 1
                task_id += 1
                tasks.append((ts, te, device, conn_id, gtask, gpid, S(rts), INVALID,
                              STREAM_HCCL, task_id, INVALID))
                ctask.append((S(e["name"]), gtask, S(tt), plane, S(e["group"]), 100 + i,
                              65534, rank, peer, transport, sz if sz != 65534 else 0,
                              11 if tt == "Reduce_Inline" else 65534, link, op_id, 1))
            op_id += 1

    insert(cur, "TASK", tasks)
    insert(cur, "COMPUTE_TASK_INFO", cti)
    insert(cur, "COMMUNICATION_OP", comm_ops)
    insert(cur, "COMMUNICATION_TASK_INFO", ctask)
    insert(cur, "MEMCPY_INFO", memcpy_info)
    insert(cur, "CANN_API", cann)
    insert(cur, "PYTORCH_API", pyt)
    insert(cur, "CONNECTION_IDS", conn_ids)

    # AI Core frequency samples
    insert(cur, "AICORE_FREQ", [(device, T0, 1800), (device, T0 + STEP_NS, 1650)])

    # host-only mstx range + mark per step (domain "default"), msg in STRING_IDS.
    # eventType 2 = start/end range, 3 = mark (values msprof-analyze filters on).
    # connectionId 4294967295 = no device-side counterpart; msprof-analyze's
    # mstx_sum only reports ranges/marks that have device TASK rows, so it
    # reports "no mstx data" for these (device-side mstx tasks are not modelled).
    mstx = []
    for s in range(1, N_STEPS + 1):
        b = T0 + (s - 1) * STEP_NS
        mstx.append((b + 50 * US, b + 5 * MS, 2, s, None, S(f"forward_step_{s}"), gtid, gtid,
                     S("default"), INVALID))
        mstx.append((b + 60 * US, b + 60 * US, 3, None, None, S(f"mark_step_{s}"), gtid, gtid,
                     S("default"), INVALID))
    insert(cur, "MSTX_EVENTS", mstx)

    # memory: torch_npu (PTA) MEMORY_RECORD/OP_MEMORY + msprof NPU_MEM/NPU_MODULE_MEM/NPU_OP_MEM
    pta = S("PTA", "mem")
    stream_ptr = 0xFFFF0000 + rank
    mem_rows, opmem = [], []
    allocated = 2 * 1024 * MB
    reserved = 4 * 1024 * MB
    for step in range(1, N_STEPS + 1):
        s0 = T0 + (step - 1) * STEP_NS
        a_t, r_t = s0 + 100 * US, s0 + 6 * MS
        size = 64 * MB * step
        mem_rows.append((pta, a_t, allocated + size, reserved, allocated + size, stream_ptr, device))
        mem_rows.append((pta, r_t, allocated, reserved, allocated, stream_ptr, device))
        opmem.append((S("aten::empty_strided", "mem"), size, a_t, r_t, r_t, r_t - a_t, r_t - a_t,
                      allocated + size, reserved, allocated + size, allocated, reserved,
                      allocated, stream_ptr, device))
    insert(cur, "MEMORY_RECORD", mem_rows)
    insert(cur, "OP_MEMORY", opmem)
    insert(cur, "NPU_MEM", [(S("app"), 0, reserved + 512 * MB, T0 + s * STEP_NS, device)
                            for s in range(N_STEPS)])
    insert(cur, "NPU_MODULE_MEM", [(22, T0 + s * STEP_NS, reserved, device) for s in range(N_STEPS)])
    insert(cur, "NPU_OP_MEM", [
        (S("ge_workspace"), 0x12C0000000, S("malloc"), 16 * MB, T0 + 50 * US, gtid, 16 * MB,
         32 * MB, S("GE"), device),
        (S("ge_workspace"), 0x12C0000000, S("free"), 16 * MB, T0 + 9 * MS, gtid, 0,
         32 * MB, S("GE"), device)])
    insert(cur, "GC_RECORD", [(T0 + 9 * MS, T0 + 9 * MS + 300 * US, gtid)])

    insert(cur, "STRING_IDS", S.rows())
    con.commit()
    con.close()


def build_analysis_db(path, rank, n_ranks, events):
    con = sqlite3.connect(path)
    con.execute("PRAGMA page_size=1024")
    cur = con.cursor()
    cur.executescript(ANALYSIS_DDL)
    peer = 1 - rank if n_ranks > 1 else rank
    time_rows, bw_rows, mx_rows = [], [], []
    by_step = {}
    for e in events:
        if e["kind"] != "comm":
            continue
        step = f"step{e['step']}"
        gname = str(double_hash(e["group"]))
        ms = lambda ns: round(ns / MS, 6)
        time_rows.append((e["name"], gname, round(e["start"] / US, 3), ms(e["end"] - e["start"]),
                          ms(e["transit"]), ms(e["wait"]), ms(e["sync"]), ms(e["idle"]),
                          step, "collective"))
        size_mb = comm_bytes(e["key"]) / MB
        t_ms = ms(e["transit"])
        bw = round(size_mb / t_ms, 4)
        n_pk = int(size_mb / PACKET_MB)
        # one row per (transport, packet size); transit_size/time/bandwidth repeat per row
        for tt in ("HCCS", "SDMA"):
            bw_rows.append((e["name"], gname, tt, size_mb, t_ms, bw, 1.0, PACKET_MB, n_pk,
                            t_ms, step, "collective"))
        for tt in ("RDMA", "PCIE", "SIO"):
            bw_rows.append((e["name"], gname, tt, 0, 0, 0, 0, 0, 0, 0, step, "collective"))
        by_step.setdefault((step, gname), []).append((e, size_mb, t_ms, bw))

    # CommAnalyzerMatrix as torch_npu writes it: per (step, op type, group, link)
    # top1/middle/bottom1..3/total rows; hccl_op_name = "<type>-<rank>", op_name = real op
    for (step, gname), ops in sorted(by_step.items()):
        links = [(str(rank), str(rank), "LOCAL", LOCAL_GBPS)]
        if n_ranks > 1:
            links.append((str(rank), str(peer), "HCCS", None))
        for src, dst, tt, fixed_bw in links:
            data = []
            for e, size_mb, t_ms, bw in ops:
                if fixed_bw:
                    t = round(size_mb / fixed_bw, 6)
                    data.append((size_mb, t, round(size_mb / t, 4), e["name"]))
                else:
                    data.append((size_mb, t_ms, bw, e["name"]))
            data.sort(key=lambda x: x[2], reverse=True)
            picks = [("top1", data[0]), ("middle", data[len(data) // 2]), ("bottom1", data[-1])]
            if len(data) >= 2:
                picks.append(("bottom2", data[-2]))
            if len(data) >= 3:
                picks.append(("bottom3", data[-3]))
            for tag, (sz, t, bw, nm) in picks:
                mx_rows.append((f"allreduce-{tag}", gname, src, dst, tt, sz, t, bw, step,
                                "collective", nm))
            tsz = sum(d[0] for d in data)
            tt_ms = sum(d[1] for d in data)
            mx_rows.append(("allreduce-total", gname, src, dst, tt, tsz, tt_ms,
                            round(tsz / tt_ms, 4), step, "collective", ""))

    # StepTraceTime (us), computed like torch_npu TraceStepTimeDbParser
    st_rows = []
    for step in range(1, N_STEPS + 1):
        s0 = T0 + (step - 1) * STEP_NS
        comp = merge([(e["start"], e["end"]) for e in events
                      if e["kind"] == "kernel" and e["step"] == step])
        comm = merge([(e["start"], e["end"]) for e in events
                      if e["kind"] == "comm" and e["step"] == step])
        pure = subtract(comm, comp)
        busy = merge(comp + comm)
        free_ns = (busy[-1][1] - busy[0][0]) - total(busy)
        comp_t, comm_t, pure_t = total(comp), total(comm), total(pure)
        first = min(comp[0][0], comm[0][0])
        bubble = 0
        stage = (busy[-1][1] - busy[0][0]) - bubble
        us = lambda ns: ns / US
        st_rows.append((rank, str(step), us(comp_t), us(pure_t), us(comm_t - pure_t), us(comm_t),
                        us(free_ns), us(stage), us(bubble), us(max(pure_t - bubble, 0)),
                        us(first - s0)))

    insert(cur, "CommAnalyzerTime", time_rows)
    insert(cur, "CommAnalyzerBandwidth", bw_rows)
    insert(cur, "CommAnalyzerMatrix", mx_rows)
    insert(cur, "StepTraceTime", st_rows)
    con.commit()
    con.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "cluster"))
    ap.add_argument("--ranks", type=int, default=2, choices=[1, 2])
    args = ap.parse_args()
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    events = simulate(args.ranks)
    for rank in range(args.ranks):
        d = os.path.join(args.out, f"rank{rank}_{40000 + rank}_20231114221320000_ascend_pt")
        out = os.path.join(d, "ASCEND_PROFILER_OUTPUT")
        os.makedirs(out)
        build_profiler_db(os.path.join(out, f"ascend_pytorch_profiler_{rank}.db"), rank,
                          args.ranks, events[rank])
        build_analysis_db(os.path.join(out, "analysis.db"), rank, args.ranks, events[rank])
        with open(os.path.join(d, f"profiler_info_{rank}.json"), "w") as f:
            json.dump({"config": {"common_config": {"activities": ["CPU", "NPU"]},
                                  "experimental_config": {"_profiler_level": "Level1",
                                                          "_export_type": ["db"]}},
                       "rank_id": rank}, f, indent=1)
        with open(os.path.join(d, "profiler_metadata.json"), "w") as f:
            json.dump({"distributed_args": {"tensor_model_parallel_size": 1,
                                            "pipeline_model_parallel_size": 1,
                                            "data_parallel_size": args.ranks,
                                            "world_size": args.ranks, "rank": rank},
                       "parallel_group_info": {raw: {"group_name": pg, "group_rank": rank,
                                                     "global_ranks": list(range(args.ranks))}
                                               for raw, pg in GROUPS}}, f, indent=1)
    print(args.out)


if __name__ == "__main__":
    main()
