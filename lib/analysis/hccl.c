/* Ascend's communication summaries (communication.json,
 * communication_matrix.json; lib/trace/ascend_comm.c) as comm's tables:
 * each HCCL op's times, msprof-analyze's "Total Op Info" per step and group
 * (what its cluster_communication.json holds for each rank), the bytes per
 * transport and the rank-to-rank links. Definitions: docs/METRICS.md,
 * "Ascend communication". */
#include "hccl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"

/* Times in ms and sizes in MB (10^6 bytes) as ns and bytes. */
int64_t tprof_hccl_ns_of_ms(double ms) { return isfinite(ms) && fabs(ms) < 9e12 ? llround(ms * 1e6) : 0; }
int64_t tprof_hccl_bytes_of_mb(double mb) { return isfinite(mb) && fabs(mb) < 9e12 ? llround(mb * 1e6) : 0; }

/* ---- the tables ---------------------------------------------------------------- */

#define TIME_COLS(P)                                                                                             \
    [P##_ELAPSE] = TPROF_COL("elapse_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "elapse",                        \
                             "\"Elapse Time(ms)\": the op's time on this rank, transit + wait + idle"),          \
    [P##_TRANSIT] = TPROF_COL("transit_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "transit",                     \
                              "\"Transit Time(ms)\": moving data"),                                             \
    [P##_WAIT] = TPROF_COL("wait_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "wait",                              \
                           "\"Wait Time(ms)\": waiting on the peers (synchronisation and handshakes)",          \
                           .flags = TPROF_COLF_METRIC),                                                          \
    [P##_SYNC] = TPROF_COL("sync_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "sync",                              \
                           "\"Synchronization Time(ms)\": the wait before the first transfer"),                \
    [P##_IDLE] = TPROF_COL("idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "idle",                              \
                           "\"Idle Time(ms)\": neither moving data nor waiting"),                               \
    [P##_WAIT_RATIO] = TPROF_COL("wait_ratio", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "wait ratio",              \
                                 "wait / (wait + transit), msprof's Wait Time Ratio (it rounds to 4 places)",   \
                                 .num = "wait_ns", .den = "wait_transit_ns"),                                    \
    [P##_SYNC_RATIO] = TPROF_COL("sync_ratio", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "sync ratio",              \
                                 "sync / (sync + transit), msprof's Synchronization Time Ratio", .num = "sync_ns", \
                                 .den = "sync_transit_ns"),                                                      \
    [P##_WT] = TPROF_COL("wait_transit_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "wait + transit",         \
                         .flags = TPROF_COLF_NO_TABLE | TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV),                   \
    [P##_ST] = TPROF_COL("sync_transit_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "sync + transit",         \
                         .flags = TPROF_COLF_NO_TABLE | TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV)

/* The two transports msprof-analyze's checks read: RDMA (between
 * machines) and SDMA (within one: HCCS, PCIe, SIO together). */
#define LINK_COLS(P)                                                                                             \
    [P##_RDMA_BYTES] = TPROF_COL("rdma_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "RDMA",                       \
                                 "bytes moved over RDMA (\"Transit Size(MB)\", 10^6 bytes)"),                   \
    [P##_RDMA_NS] = TPROF_COL("rdma_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "RDMA transit time",       \
                              .flags = TPROF_COLF_NO_TABLE),                                                     \
    [P##_RDMA_BW] = TPROF_COL("rdma_gbps", TPROF_COL_RATE, TPROF_COMBINE_DERIVED, "RDMA GB/s",                   \
                              "rdma_bytes / rdma_ns (10^9 bytes per second; null without RDMA traffic)",        \
                              .num = "rdma_bytes", .den = "rdma_ns"),                                            \
    [P##_SDMA_BYTES] = TPROF_COL("sdma_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "SDMA",                       \
                                 "bytes moved within the machine (SDMA: HCCS, PCIe and SIO together)"),        \
    [P##_SDMA_NS] = TPROF_COL("sdma_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "SDMA transit time",       \
                              .flags = TPROF_COLF_NO_TABLE),                                                     \
    [P##_SDMA_BW] = TPROF_COL("sdma_gbps", TPROF_COL_RATE, TPROF_COMBINE_DERIVED, "SDMA GB/s",                   \
                              "sdma_bytes / sdma_ns (null without SDMA traffic)", .num = "sdma_bytes",            \
                              .den = "sdma_ns")

enum { O_STEP, O_OP, O_TYPE, O_GROUP, O_RANK, O_START, O_ELAPSE, O_TRANSIT, O_WAIT, O_SYNC, O_IDLE, O_WAIT_RATIO,
       O_SYNC_RATIO, O_WT, O_ST, O_RDMA_BYTES, O_RDMA_NS, O_RDMA_BW, O_SDMA_BYTES, O_SDMA_NS, O_SDMA_BW, O_NCOLS };
static const tprof_col_desc op_cols[O_NCOLS] = {
    [O_STEP] = TPROF_COL("step", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "step", "the step key (\"step1\")",
                         .flags = TPROF_COLF_KEY),
    [O_OP] = TPROF_COL("op", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "op",
                       "the HCCL op as written, its group after the last '@'", .flags = TPROF_COLF_KEY, .width = 48),
    [O_TYPE] = TPROF_COL("type", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, "type", "collective or p2p"),
    [O_GROUP] = TPROF_COL("group", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                          "the communication group (the op's name after '@')", .flags = TPROF_COLF_NO_TABLE),
    [O_RANK] = TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "rank",
                         "the rank a cluster file names for the row (null: the file's own)",
                         .flags = TPROF_COLF_KEY | TPROF_COLF_OMIT_NULL),
    [O_START] = TPROF_COL("start_us", TPROF_COL_REAL, TPROF_COMBINE_MIN, NULL,
                          "\"Start Timestamp(us)\" as written (null when absent)",
                          .flags = TPROF_COLF_NO_TABLE | TPROF_COLF_SHORTEST),
    TIME_COLS(O),
    LINK_COLS(O),
};

enum { S_GROUP_RANKS, S_STEP, S_GROUP, S_RANK, S_TYPE, S_OPS, S_ELAPSE, S_TRANSIT, S_WAIT, S_SYNC, S_IDLE,
       S_WAIT_RATIO, S_SYNC_RATIO, S_WT, S_ST, S_RDMA_BYTES, S_RDMA_NS, S_RDMA_BW, S_SDMA_BYTES, S_SDMA_NS, S_SDMA_BW,
       S_NCOLS };
static const tprof_col_desc total_cols[S_NCOLS] = {
    [S_GROUP_RANKS] = TPROF_COL("group_ranks", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "ranks",
                                "the group's ranks, \"(0, 1)\" as msprof-analyze names a group: across ranks "
                                "(collectives), or as a cluster file says; null for one rank's file",
                                .flags = TPROF_COLF_OMIT_NULL),
    [S_STEP] = TPROF_COL("step", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "step", "the step key",
                         .flags = TPROF_COLF_KEY),
    [S_GROUP] = TPROF_COL("group", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "group", "the communication group",
                          .flags = TPROF_COLF_KEY, .width = 24),
    [S_RANK] = TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "rank",
                         "the rank: a cluster file's, or across ranks (collectives) the trace's; null in one "
                         "rank's own",
                         .flags = TPROF_COLF_KEY | TPROF_COLF_OMIT_NULL),
    [S_TYPE] = TPROF_COL("type", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "collective or p2p",
                         .flags = TPROF_COLF_NO_TABLE),
    [S_OPS] = TPROF_COL("ops", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "ops", "HCCL ops in the step and group"),
    TIME_COLS(S),
    LINK_COLS(S),
};

enum { X_TRANSPORT, X_BYTES, X_NS, X_BW, X_PACKETS, X_PACKET, X_LARGE, X_OPS, X_NCOLS };
static const tprof_col_desc transport_cols[X_NCOLS] = {
    [X_TRANSPORT] = TPROF_COL("transport", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, "transport",
                              "RDMA, HCCS, PCIE, SDMA (HCCS + PCIE + SIO), SIO", .flags = TPROF_COLF_KEY),
    [X_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "bytes", "\"Transit Size(MB)\" summed"),
    [X_NS] = TPROF_COL("time_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "time", "\"Transit Time(ms)\" summed"),
    [X_BW] = TPROF_COL("bandwidth_gbps", TPROF_COL_RATE, TPROF_COMBINE_DERIVED, "GB/s",
                       "bytes / time_ns (10^9 bytes per second)", .num = "bytes", .den = "time_ns",
                       .flags = TPROF_COLF_METRIC | TPROF_COLF_LOW_WORST),
    [X_PACKETS] = TPROF_COL("packets", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "packets",
                            "the counts of \"Size Distribution\" summed"),
    [X_PACKET] = TPROF_COL("mean_packet_bytes", TPROF_COL_REAL, TPROF_COMBINE_DERIVED, "mean packet B",
                           "bytes / packets (null without packets)", .num = "bytes", .den = "packets", .decimals = 0),
    [X_LARGE] = TPROF_COL("large_packet_ratio", TPROF_COL_RATIO, TPROF_COMBINE_WMEAN, "large packets",
                          "the ops' \"Large Packet Ratio\", weighted by their packets (null where never written)",
                          .weight = "packets"),
    [X_OPS] = TPROF_COL("ops", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "ops",
                        "ops with bytes or packets over it"),
};

enum { L_SRC, L_DST, L_TRANSPORT, L_OPS, L_BYTES, L_NS, L_BW, L_NCOLS };
static const tprof_col_desc link_cols[L_NCOLS] = {
    [L_SRC] = TPROF_COL("src", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "src", "sending rank", .flags = TPROF_COLF_KEY),
    [L_DST] = TPROF_COL("dst", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "dst", "receiving rank", .flags = TPROF_COLF_KEY),
    [L_TRANSPORT] = TPROF_COL("transport", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "transport",
                              "\"Transport Type\" as written (HCCS, RDMA, PCIE, SIO, LOCAL)", .flags = TPROF_COLF_KEY),
    [L_OPS] = TPROF_COL("ops", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "entries",
                        "matrix entries summed: per op, or per op type and step (\"allreduce-total\"); the "
                        "top/middle/bottom statistics entries left out"),
    [L_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "bytes", "\"Transit Size(MB)\" summed"),
    [L_NS] = TPROF_COL("time_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "time", "\"Transit Time(ms)\" summed"),
    [L_BW] = TPROF_COL("bandwidth_gbps", TPROF_COL_RATE, TPROF_COMBINE_DERIVED, "GB/s", "bytes / time_ns",
                       .num = "bytes", .den = "time_ns", .flags = TPROF_COLF_METRIC | TPROF_COLF_LOW_WORST),
};

const tprof_table_desc tprof_hccl_ops_desc = {
    .name = "hccl_ops", .title = "HCCL ops (communication.json)", .doc = "Ascend: each HCCL op of each step",
    .cols = op_cols, .ncols = O_NCOLS, .json_omit_empty = 1, .limited = 1,
};
const tprof_table_desc tprof_hccl_totals_desc = {
    .name = "hccl_totals", .title = "per step and group (msprof-analyze's Total Op Info)",
    .doc = "Ascend: the HCCL ops of each step and group summed, as msprof-analyze's Total Op Info",
    .cols = total_cols, .ncols = S_NCOLS, .json_omit_empty = 1,
};
const tprof_table_desc tprof_hccl_transports_desc = {
    .name = "hccl_transports", .title = "per transport", .doc = "Ascend: bytes and bandwidth per transport",
    .cols = transport_cols, .ncols = X_NCOLS, .json_omit_empty = 1,
};
const tprof_table_desc tprof_hccl_links_desc = {
    .name = "hccl_links", .title = "rank-to-rank links (communication_matrix.json)",
    .doc = "Ascend: bytes and bandwidth per link and transport, over every op", .cols = link_cols,
    .ncols = L_NCOLS, .json_omit_empty = 1, .limited = 1,
};

/* ---- filling them ---------------------------------------------------------------- */

/* The time and link cells of one op, added to row K (columns from FIRST:
 * elapse, and the RDMA/SDMA block from LINK). */
static void add_times(tprof_rows *t, size_t k, size_t first, size_t link, const tprof_hccl_op *op)
{
    const double ms[] = { op->elapse_ms, op->transit_ms, op->wait_ms, op->sync_ms, op->idle_ms };
    for (size_t c = 0; c < 5; c++)
        tprof_rows_set_i(t, k, first + c, tprof_sat_add(tprof_rows_cell(t, k, first + c)->v.i, tprof_hccl_ns_of_ms(ms[c])));
    const size_t wt = first + 7, st = first + 8; /* after the two ratios */
    tprof_rows_set_i(t, k, wt, tprof_sat_add(tprof_rows_cell(t, k, wt)->v.i, tprof_sat_add(tprof_hccl_ns_of_ms(op->wait_ms), tprof_hccl_ns_of_ms(op->transit_ms))));
    tprof_rows_set_i(t, k, st, tprof_sat_add(tprof_rows_cell(t, k, st)->v.i, tprof_sat_add(tprof_hccl_ns_of_ms(op->sync_ms), tprof_hccl_ns_of_ms(op->transit_ms))));
    const tprof_hccl_bandwidth *b[2] = { &op->bw[TPROF_HCCL_RDMA], &op->bw[TPROF_HCCL_SDMA] };
    for (size_t i = 0; i < 2; i++) {
        size_t cb = link + 3 * i, cn = cb + 1;
        tprof_rows_set_i(t, k, cb, tprof_sat_add(tprof_rows_cell(t, k, cb)->v.i, tprof_hccl_bytes_of_mb(b[i]->size_mb)));
        tprof_rows_set_i(t, k, cn, tprof_sat_add(tprof_rows_cell(t, k, cn)->v.i, tprof_hccl_ns_of_ms(b[i]->time_ms)));
    }
}

/* A new row with zero counts in the summed columns FIRST..LAST. */
static long zero_row(tprof_rows *t, size_t first, size_t last)
{
    long k = tprof_rows_add(t);
    for (size_t c = first; k >= 0 && c <= last; c++) tprof_rows_set_i(t, (size_t)k, c, 0);
    return k;
}

static int op_rows(const tprof_trace *t, tprof_rows *rows)
{
    const tprof_hccl_op *ops = tprof_trace_hccl_ops(t);
    for (size_t i = 0; i < tprof_trace_nhccl_ops(t); i++) {
        const tprof_hccl_op *op = &ops[i];
        long k = zero_row(rows, O_ELAPSE, O_SDMA_NS);
        if (k < 0 || tprof_rows_set_s(rows, (size_t)k, O_STEP, tprof_trace_str(t, op->step)) ||
            tprof_rows_set_s(rows, (size_t)k, O_OP, tprof_trace_str(t, op->op)) ||
            tprof_rows_set_s(rows, (size_t)k, O_TYPE, op->p2p ? "p2p" : "collective") ||
            tprof_rows_set_s(rows, (size_t)k, O_GROUP, tprof_trace_str(t, op->group)))
            return TPROF_ENOMEM;
        if (op->rank >= 0) tprof_rows_set_i(rows, (size_t)k, O_RANK, op->rank);
        tprof_rows_set_null(rows, (size_t)k, O_WAIT_RATIO);
        tprof_rows_set_null(rows, (size_t)k, O_SYNC_RATIO);
        tprof_rows_set_null(rows, (size_t)k, O_RDMA_BW);
        if (isfinite(op->start_us)) tprof_rows_set_d(rows, (size_t)k, O_START, op->start_us);
        add_times(rows, (size_t)k, O_ELAPSE, O_RDMA_BYTES, op);
    }
    return 0;
}

/* Rows by a key of three integers, through an open-addressing table. */
typedef struct {
    int64_t a, b, c;
    long row; /* -1: empty */
} key_slot;
typedef struct {
    key_slot *slot;
    size_t cap;
} key_table;

static int keys_init(key_table *k, size_t n)
{
    k->cap = 16;
    while (k->cap < 2 * n) k->cap *= 2;
    k->slot = malloc(k->cap * sizeof *k->slot);
    if (!k->slot) return TPROF_ENOMEM;
    for (size_t i = 0; i < k->cap; i++) k->slot[i].row = -1;
    return 0;
}

/* The slot of (A, B, C): its row, or -1 to be filled by the caller. */
static key_slot *keys_find(key_table *k, int64_t a, int64_t b, int64_t c)
{
    uint64_t h = ((uint64_t)a * 0x9E3779B97F4A7C15u) ^ ((uint64_t)b * 0xC2B2AE3D27D4EB4Fu) ^ ((uint64_t)c + 0x165667B1u);
    h ^= h >> 29;
    for (size_t i = (size_t)h & (k->cap - 1);; i = (i + 1) & (k->cap - 1)) {
        key_slot *s = &k->slot[i];
        if (s->row < 0) {
            s->a = a, s->b = b, s->c = c;
            return s;
        }
        if (s->a == a && s->b == b && s->c == c) return s;
    }
}

/* msprof-analyze's Total Op Info: per step, group (and a cluster file's
 * rank) the ops' times and bytes summed, in the order each is first met. */
int tprof_hccl_total_rows(const tprof_trace *t, tprof_rows *rows)
{
    size_t n = tprof_trace_nhccl_ops(t);
    const tprof_hccl_op *ops = tprof_trace_hccl_ops(t);
    key_table keys;
    if (!n) return 0;
    if (keys_init(&keys, n)) return TPROF_ENOMEM;
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const tprof_hccl_op *op = &ops[i];
        key_slot *s = keys_find(&keys, op->step, op->group, op->rank * 2 + (op->p2p != 0)); /* p2p and collective apart */
        if (s->row < 0) {
            long k = zero_row(rows, S_OPS, S_SDMA_NS);
            if (k < 0 || tprof_rows_set_s(rows, (size_t)k, S_STEP, tprof_trace_str(t, op->step)) ||
                tprof_rows_set_s(rows, (size_t)k, S_GROUP, tprof_trace_str(t, op->group))) {
                rc = TPROF_ENOMEM;
                break;
            }
            if (op->rank >= 0) tprof_rows_set_i(rows, (size_t)k, S_RANK, op->rank);
            else tprof_rows_set_null(rows, (size_t)k, S_RANK);
            if (tprof_rows_set_s(rows, (size_t)k, S_TYPE, op->p2p ? "p2p" : "collective") ||
                (op->group_ranks &&
                 tprof_rows_set_s(rows, (size_t)k, S_GROUP_RANKS, tprof_trace_str(t, op->group_ranks)))) {
                rc = TPROF_ENOMEM;
                break;
            }
            tprof_rows_set_null(rows, (size_t)k, S_WAIT_RATIO);
            tprof_rows_set_null(rows, (size_t)k, S_SYNC_RATIO);
            tprof_rows_set_null(rows, (size_t)k, S_RDMA_BW);
            s->row = k;
        }
        tprof_rows_set_i(rows, (size_t)s->row, S_OPS, tprof_rows_cell(rows, (size_t)s->row, S_OPS)->v.i + 1);
        add_times(rows, (size_t)s->row, S_ELAPSE, S_RDMA_BYTES, op);
    }
    free(keys.slot);
    return rc;
}

/* Bytes, time and packets per transport over every op. */
static int transport_rows(const tprof_trace *t, tprof_rows *rows)
{
    size_t n = tprof_trace_nhccl_ops(t);
    const tprof_hccl_op *ops = tprof_trace_hccl_ops(t);
    for (int x = 0; x < TPROF_HCCL_TRANSPORTS; x++) {
        int64_t bytes = 0, ns = 0, packets = 0, nops = 0, weighted = 0;
        double large = 0;
        for (size_t i = 0; i < n; i++) {
            const tprof_hccl_bandwidth *b = &ops[i].bw[x];
            if (tprof_hccl_bytes_of_mb(b->size_mb) <= 0 && b->packets == 0) continue;
            bytes = tprof_sat_add(bytes, tprof_hccl_bytes_of_mb(b->size_mb));
            ns = tprof_sat_add(ns, tprof_hccl_ns_of_ms(b->time_ms));
            packets = tprof_sat_add(packets, b->packets > INT64_MAX ? INT64_MAX : (int64_t)b->packets);
            nops++;
            if (isfinite(b->large_packet_ratio))
                large += b->large_packet_ratio * (double)b->packets,
                    weighted = tprof_sat_add(weighted, b->packets > INT64_MAX ? INT64_MAX : (int64_t)b->packets);
        }
        if (!nops) continue;
        long k = tprof_rows_add(rows);
        if (k < 0 || tprof_rows_set_s(rows, (size_t)k, X_TRANSPORT, tprof_hccl_transport_name(x)))
            return TPROF_ENOMEM;
        tprof_rows_set_i(rows, (size_t)k, X_BYTES, bytes);
        tprof_rows_set_i(rows, (size_t)k, X_NS, ns);
        tprof_rows_set_i(rows, (size_t)k, X_PACKETS, packets);
        tprof_rows_set_i(rows, (size_t)k, X_OPS, nops);
        if (weighted > 0) tprof_rows_set_d(rows, (size_t)k, X_LARGE, large / (double)weighted);
    }
    return 0;
}

/* A matrix entry that is a statistic over the ops of one type
 * ("allreduce-top1", "-middle", "-bottom2": the slowest, median, fastest
 * op), not traffic of its own: the "-total" entry sums them all (as
 * msprof-analyze's check_add_op reads it). Older matrices name each op. */
int tprof_hccl_statistic_entry(const char *op)
{
    const char *at = strrchr(op, '@'), *end = at ? at : op + strlen(op), *dash = NULL;
    for (const char *p = op; p < end; p++)
        if (*p == '-') dash = p;
    if (!dash) return 0;
    dash++;
    return !strncmp(dash, "top", 3) || !strncmp(dash, "middle", 6) || !strncmp(dash, "bottom", 6);
}

/* The matrix's entries summed per (src, dst, transport), in first-met
 * order; the statistics entries left out. */
static int link_rows(const tprof_trace *t, tprof_rows *rows)
{
    size_t n = tprof_trace_nhccl_links(t);
    const tprof_hccl_link *links = tprof_trace_hccl_links(t);
    key_table keys;
    if (!n) return 0;
    if (keys_init(&keys, n)) return TPROF_ENOMEM;
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const tprof_hccl_link *l = &links[i];
        if (tprof_hccl_statistic_entry(tprof_trace_str(t, l->op))) continue;
        key_slot *s = keys_find(&keys, l->src, l->dst, l->transport);
        if (s->row < 0) {
            long k = zero_row(rows, L_OPS, L_NS);
            if (k < 0 || tprof_rows_set_s(rows, (size_t)k, L_TRANSPORT, tprof_trace_str(t, l->transport))) {
                rc = TPROF_ENOMEM;
                break;
            }
            tprof_rows_set_i(rows, (size_t)k, L_SRC, l->src);
            tprof_rows_set_i(rows, (size_t)k, L_DST, l->dst);
            s->row = k;
        }
        size_t r = (size_t)s->row;
        tprof_rows_set_i(rows, r, L_OPS, tprof_rows_cell(rows, r, L_OPS)->v.i + 1);
        tprof_rows_set_i(rows, r, L_BYTES, tprof_sat_add(tprof_rows_cell(rows, r, L_BYTES)->v.i, tprof_hccl_bytes_of_mb(l->size_mb)));
        tprof_rows_set_i(rows, r, L_NS, tprof_sat_add(tprof_rows_cell(rows, r, L_NS)->v.i, tprof_hccl_ns_of_ms(l->time_ms)));
    }
    free(keys.slot);
    return rc;
}

int tprof_hccl_tables(const tprof_trace *t, tprof_rows *ops, tprof_rows *totals, tprof_rows *transports,
                      tprof_rows *links)
{
    int rc = op_rows(t, ops);
    if (!rc) rc = tprof_hccl_total_rows(t, totals);
    if (!rc) rc = transport_rows(t, transports);
    if (!rc) rc = link_rows(t, links);
    tprof_rows *all[] = { ops, totals, transports, links };
    for (size_t i = 0; !rc && i < 4; i++) tprof_rows_derive(all[i]);
    return rc;
}
