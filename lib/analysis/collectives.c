/* Collectives across ranks: each rank's collective instances, the same
 * instance matched across the ranks of its group, what each rank waited
 * for the others, what the transfer itself took, and the rank that holds
 * the others up (docs/METRICS.md, "trainprof collectives"). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "alltoall.h"
#include "collectives_tables.h"
#include "comm_calls.h"
#include "hccl.h"
#include "intervals.h"
#include "launch.h"
#include "../util/grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- one rank's instances ---- */

enum { I_RANK, I_FILE, I_NCOLS };
enum { C_GROUP, C_SEQ, C_TYPE, C_NAME, C_DTYPE, C_BYTES, C_GROUP_SIZE, C_START, C_DUR, C_KERNELS, C_STEP, C_IN_BYTES,
       C_OUT_BYTES, C_CALL, C_BEFORE, C_BEFORE_HOST, C_BEFORE_COMPUTE, C_BEFORE_DATA, C_IN_SPLITS, C_GROUP_RANKS,
       C_NCOLS };
enum { P_STEP, P_NCOLS };

static const tprof_col_desc inst_top_cols[I_NCOLS] = {
    [I_RANK] = TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_PER_RANK, NULL,
                         "distributedInfo.rank, else rank<N> in the file name; null when neither says"),
    [I_FILE] = TPROF_COL("file", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "the trace's path"),
};
static const tprof_col_desc inst_cols[C_NCOLS] = {
    [C_GROUP] = TPROF_COL("group", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                          "\"Process Group Name\", \"\" when not recorded"),
    [C_SEQ] = TPROF_COL("seq", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL,
                        "\"Seq\": its number in the group, null when not recorded"),
    [C_TYPE] = TPROF_COL("type", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                         "allreduce, allgather, reduce_scatter, alltoall, broadcast, barrier, sendrecv, send, recv, "
                         "reduce, gather, scatter or other: from the recorded name, else from its kernels'"),
    [C_NAME] = TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                         "\"Collective name\" as recorded (\"\" when not)"),
    [C_DTYPE] = TPROF_COL("dtype", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "as recorded"),
    [C_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL,
                          "the larger of In and Out msg nelems times the dtype's size; null when not recorded"),
    [C_GROUP_SIZE] = TPROF_COL("group_size", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL,
                               "\"Group size\", null when not recorded"),
    [C_START] = TPROF_COL("start_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_FIRST, NULL,
                          "its first kernel's start (the call's, without kernels), on this rank's clock"),
    [C_DUR] = TPROF_COL("dur_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                        "first kernel start to last kernel end (the call's span, without kernels)"),
    [C_KERNELS] = TPROF_COL("kernels", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "its communication kernels"),
    [C_STEP] = TPROF_COL("step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL,
                         "the ProfilerStep it starts in, null when none"),
    [C_IN_BYTES] = TPROF_COL("in_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL,
                             "In msg nelems times the dtype's size (what the rank sends in an all-to-all); null when "
                             "not recorded"),
    [C_OUT_BYTES] = TPROF_COL("out_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL,
                              "Out msg nelems times the dtype's size (what it receives); null when not recorded"),
    [C_CALL] = TPROF_COL("call_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_FIRST, NULL,
                         "the host's call (its record_param_comms span's start), null without one"),
    [C_BEFORE] = TPROF_COL("before_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                           "the stretch before it: from the end of the rank's previous instance in its group to its "
                           "start (0 when they overlap); null for a group's first"),
    [C_BEFORE_HOST] = TPROF_COL("before_host_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                                "the part before the host called it (the rest it waited on the GPU for the work "
                                "queued ahead of it); null without a call"),
    [C_BEFORE_COMPUTE] = TPROF_COL("before_compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                                   "the GPU's compute kernels in the stretch (their union)"),
    [C_BEFORE_DATA] = TPROF_COL("before_data_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                                "the host's data-loading spans in the stretch (phase markers of the data phase)"),
    [C_IN_SPLITS] = TPROF_COL("in_splits", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                              "\"In split size\" as written (an all-to-all's rows per rank of the group), \"\" when "
                              "not recorded"),
    [C_GROUP_RANKS] = TPROF_COL("group_ranks", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                                "\"Process Group Ranks\" as written, \"\" when not recorded"),
};
static const tprof_col_desc step_cols[P_NCOLS] = {
    [P_STEP] = TPROF_COL("step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "a ProfilerStep number"),
};
static const tprof_table_desc inst_top = { .name = "", .cols = inst_top_cols, .ncols = I_NCOLS };
static const tprof_table_desc inst_rows = { .name = "instances", .doc = "the rank's collectives, in start order",
                                            .cols = inst_cols, .ncols = C_NCOLS };
static const tprof_table_desc inst_steps = { .name = "steps", .doc = "the rank's ProfilerStep numbers",
                                             .cols = step_cols, .ncols = P_NCOLS };
static const tprof_table_desc *const inst_tables[] = { &inst_rows, &inst_steps, &tprof_hccl_totals_desc,
                                                        &tprof_hccl_matrix_desc };
const tprof_result_desc tprof_coll_instances_desc = {
    .name = "collective_instances", .version = 5, .top = &inst_top, .tables = inst_tables, .ntables = 4,
    .internal = 1,
    .doc = "What `collectives` keeps of each rank's trace: its collective instances and steps; the trace is "
           "freed and the matching across ranks runs on these.",
};

/* The collective type of a recorded name or a kernel type, lowercase:
 * "_reduce_scatter_base", "ReduceScatter" -> "reduce_scatter". */
static const char *canonical_type(const char *name)
{
    char s[64];
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < sizeof s; p++)
        if (*p != '_') s[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    s[n] = 0;
    static const struct {
        const char *in, *type;
    } types[] = { { "reducescatter", "reduce_scatter" }, { "allreduce", "allreduce" }, { "allgather", "allgather" },
                  { "alltoall", "alltoall" },            { "broadcast", "broadcast" }, { "barrier", "barrier" },
                  { "sendrecv", "sendrecv" },            { "send", "send" },           { "recv", "recv" },
                  { "reduce", "reduce" },                { "gather", "gather" },       { "scatter", "scatter" } };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strstr(s, types[i].in)) return types[i].type;
    return "other";
}

static int add_instance(tprof_rows *rows, const tprof_trace *t, const tprof_collective_call *c, const char *type,
                        int64_t start, int64_t dur, uint32_t kernels)
{
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    long i = tprof_rows_add(rows);
    if (i < 0) return TPROF_ENOMEM;
    size_t r = (size_t)i;
    const char *name = c ? tprof_trace_str(t, c->name) : "", *dtype = c ? tprof_trace_str(t, c->dtype) : "";
    if (tprof_rows_set_s(rows, r, C_GROUP, c ? tprof_trace_str(t, c->group) : "") ||
        tprof_rows_set_s(rows, r, C_TYPE, type) || tprof_rows_set_s(rows, r, C_NAME, name) ||
        tprof_rows_set_s(rows, r, C_DTYPE, dtype) ||
        tprof_rows_set_s(rows, r, C_IN_SPLITS, c ? tprof_trace_str(t, c->in_splits) : "") ||
        tprof_rows_set_s(rows, r, C_GROUP_RANKS, c ? tprof_trace_str(t, c->group_ranks) : ""))
        return TPROF_ENOMEM;
    if (c && c->seq >= 0) tprof_rows_set_i(rows, r, C_SEQ, c->seq);
    int64_t n = c ? (c->in_nelems > c->out_nelems ? c->in_nelems : c->out_nelems) : -1, bytes;
    int64_t esize = tprof_dtype_size(dtype);
    if (n > 0 && esize > 0) tprof_rows_set_i(rows, r, C_BYTES, __builtin_mul_overflow(n, esize, &bytes) ? INT64_MAX : bytes);
    if (c && c->in_nelems >= 0 && esize > 0)
        tprof_rows_set_i(rows, r, C_IN_BYTES, __builtin_mul_overflow(c->in_nelems, esize, &bytes) ? INT64_MAX : bytes);
    if (c && c->out_nelems >= 0 && esize > 0)
        tprof_rows_set_i(rows, r, C_OUT_BYTES, __builtin_mul_overflow(c->out_nelems, esize, &bytes) ? INT64_MAX : bytes);
    if (c && c->group_size > 0) tprof_rows_set_i(rows, r, C_GROUP_SIZE, c->group_size);
    tprof_rows_set_i(rows, r, C_START, start);
    tprof_rows_set_i(rows, r, C_DUR, dur);
    if (c) tprof_rows_set_i(rows, r, C_CALL, tprof_trace_events(t)[c->event].ts);
    tprof_rows_set_i(rows, r, C_KERNELS, kernels);
    long step = tprof_step_at(m->steps, m->nsteps, start);
    if (step >= 0) tprof_rows_set_i(rows, r, C_STEP, m->steps[step].number);
    return 0;
}

/* A merged interval list and the length it covers before each interval:
 * the covered length of any window in O(log n). */
typedef struct {
    tprof_interval *iv;
    int64_t *before; /* covered by iv[0 .. i) */
    size_t n;
} coverage;

/* Merges IV[0..N) (owned from here on) into C. */
static int coverage_of(coverage *c, tprof_interval *iv, size_t n)
{
    c->iv = iv;
    c->n = n ? tprof_interval_merge(iv, n) : 0;
    c->before = malloc((c->n + 1) * sizeof *c->before);
    if (!c->before) return TPROF_ENOMEM;
    c->before[0] = 0;
    for (size_t i = 0; i < c->n; i++) c->before[i + 1] = tprof_sat_add(c->before[i], iv[i].end - iv[i].start);
    return 0;
}

/* What C covers before X. */
static int64_t covered_before(const coverage *c, int64_t x)
{
    size_t lo = 0, hi = c->n; /* the intervals starting before X: [0, lo) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->iv[mid].start < x) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return 0;
    const tprof_interval *l = &c->iv[lo - 1];
    return c->before[lo - 1] + (x < l->end ? x : l->end) - l->start;
}

static int64_t covered(const coverage *c, int64_t a, int64_t b)
{
    return b > a ? covered_before(c, b) - covered_before(c, a) : 0;
}

/* An instance in its group's order. */
typedef struct {
    const char *group;
    int64_t start, end;
    size_t row;
} in_group;

static int cmp_in_group(const void *a, const void *b)
{
    const in_group *x = a, *y = b;
    int c = strcmp(x->group, y->group);
    if (c) return c;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* The stretch before each instance of ROWS (from the end of the rank's
 * previous instance in the same group to its start), the part of it before
 * the host called it, and the GPU compute and host data loading in it.
 * Durations on one rank's clock, so the ranks compare without aligning
 * their clocks: what made a late rank late. */
static int add_stretches(tprof_rows *rows, const tprof_trace *t)
{
    size_t n = tprof_rows_count(rows), ne = tprof_trace_nevents(t), nc = 0, nd = 0;
    if (!n) return 0;
    const tprof_event *ev = tprof_trace_events(t);
    for (size_t i = 0; i < ne; i++) {
        nc += ev[i].kind == TPROF_KIND_GPU && ev[i].klass == TPROF_CLASS_COMPUTE && ev[i].dur > 0;
        nd += (ev[i].flags & TPROF_EV_MARKER) && ev[i].klass == TPROF_PHASE_DATA && ev[i].dur > 0;
    }
    coverage compute = { 0 }, data = { 0 };
    tprof_interval *c = malloc((nc ? nc : 1) * sizeof *c), *d = malloc((nd ? nd : 1) * sizeof *d);
    in_group *g = malloc(n * sizeof *g);
    int rc = c && d && g ? 0 : TPROF_ENOMEM;
    if (!rc) {
        nc = nd = 0;
        for (size_t i = 0; i < ne; i++) {
            tprof_interval x = { ev[i].ts, tprof_end_ns(ev[i].ts, ev[i].dur) };
            if (ev[i].kind == TPROF_KIND_GPU && ev[i].klass == TPROF_CLASS_COMPUTE && ev[i].dur > 0) c[nc++] = x;
            if ((ev[i].flags & TPROF_EV_MARKER) && ev[i].klass == TPROF_PHASE_DATA && ev[i].dur > 0) d[nd++] = x;
        }
    }
    /* the lists own their arrays from here on */
    if (!rc) rc = coverage_of(&compute, c, nc);
    else free(c);
    if (!rc) rc = coverage_of(&data, d, nd);
    else free(d);
    for (size_t i = 0; !rc && i < n; i++) {
        int64_t start = tprof_rows_cell(rows, i, C_START)->v.i;
        g[i] = (in_group){ tprof_rows_cell(rows, i, C_GROUP)->v.s, start,
                           tprof_end_ns(start, tprof_rows_cell(rows, i, C_DUR)->v.i), i };
    }
    if (!rc) qsort(g, n, sizeof *g, cmp_in_group);
    int64_t prev_end = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        if (i == 0 || strcmp(g[i].group, g[i - 1].group)) { /* a group's first: nothing before it to measure from */
            prev_end = g[i].end;
            continue;
        }
        int64_t from = prev_end, to = g[i].start, len = to > from ? to - from : 0;
        tprof_rows_set_i(rows, g[i].row, C_BEFORE, len);
        const tprof_cell *call = tprof_rows_cell(rows, g[i].row, C_CALL);
        if (!call->null) {
            int64_t host = call->v.i - from;
            tprof_rows_set_i(rows, g[i].row, C_BEFORE_HOST, host < 0 ? 0 : host > len ? len : host);
        }
        tprof_rows_set_i(rows, g[i].row, C_BEFORE_COMPUTE, covered(&compute, from, to));
        tprof_rows_set_i(rows, g[i].row, C_BEFORE_DATA, covered(&data, from, to));
        if (g[i].end > prev_end) prev_end = g[i].end;
    }
    free(compute.iv), free(compute.before), free(data.iv), free(data.before);
    free(g);
    return rc;
}

int tprof_coll_instances(const tprof_trace *t, tprof_result **out)
{
    *out = NULL;
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    tprof_result *res = tprof_result_new(&tprof_coll_instances_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res), *rows = tprof_result_table(res, 0), *steps = tprof_result_table(res, 1);
    int64_t rank = tprof_trace_rank(t);
    if (rank >= 0) tprof_rows_set_i(top, 0, I_RANK, rank);
    int rc = tprof_rows_set_s(top, 0, I_FILE, m->path ? m->path : "");
    for (size_t k = 0; !rc && k < m->nsteps; k++) {
        long i = tprof_rows_add(steps);
        if (i < 0) rc = TPROF_ENOMEM;
        else tprof_rows_set_i(steps, (size_t)i, P_STEP, m->steps[k].number);
    }
    size_t nc = tprof_trace_ncalls(t);
    const tprof_collective_call *calls = tprof_trace_calls(t);
    const tprof_event *ev = tprof_trace_events(t);
    if (!rc && nc) { /* the recorded calls, timed by their kernels (by their spans when they launched none) */
        tprof_call_gpu *gpu = malloc(nc * sizeof *gpu);
        rc = gpu ? tprof_call_kernels(t, gpu) : TPROF_ENOMEM;
        for (size_t i = 0; !rc && i < nc; i++) {
            const char *name = tprof_trace_str(t, calls[i].name);
            if (!*name && !gpu[i].kernels) continue; /* nothing says which collective it is */
            const char *type = canonical_type(*name ? name : tprof_collective_type_at(gpu[i].type));
            const tprof_event *e = &ev[calls[i].event];
            rc = gpu[i].kernels ? add_instance(rows, t, &calls[i], type, gpu[i].first,
                                               tprof_span_ns(gpu[i].first, gpu[i].last), gpu[i].kernels)
                                : add_instance(rows, t, &calls[i], type, e->ts, e->dur, 0);
        }
        free(gpu);
    } else if (!rc) { /* no calls recorded: each communication kernel is one */
        for (size_t i = 0, n = tprof_trace_nevents(t); !rc && i < n; i++)
            if (ev[i].kind == TPROF_KIND_GPU && ev[i].klass == TPROF_CLASS_COMM)
                rc = add_instance(rows, t, NULL, canonical_type(tprof_collective_type(tprof_trace_str(t, ev[i].name))),
                                  ev[i].ts, ev[i].dur, 1);
    }
    if (!rc) rc = add_stretches(rows, t);
    if (!rc) rc = tprof_hccl_total_rows(t, tprof_result_table(res, 2)); /* Ascend's summaries, where read */
    if (!rc) rc = tprof_hccl_matrix_rows(t, tprof_result_table(res, 3));
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

/* ---- across ranks ---- */

enum { T_RANKS, T_MATCHED, T_UNMATCHED, T_MATCHING, T_COMMON, T_STRAGGLER, T_COST, T_LAST_SHARE, T_RESIDUAL, T_SKEW,
       T_A2A_IMBALANCE, T_CAUSE, T_LINKS_UNMAPPED, T_A2A_PAIR_IMBALANCE, T_A2A_UNREAD, T_NCOLS };
enum { G_TYPE, G_GROUP, G_DTYPE, G_BYTES, G_RANKS, G_COUNT, G_TRANSFER, G_TRANSFER_P50, G_TRANSFER_P90, G_ALGBW,
       G_BUSBW, G_WAIT, G_SKEW_P50, G_SKEW_P90, G_NCOLS };
enum { R_RANK, R_INSTANCES, R_WAIT, R_WAIT_STEP, R_LAST, R_COST, R_OFFSET, R_DRIFT, R_RESIDUAL, R_LATE, R_A2A_SENT,
       R_A2A_RECEIVED, R_STRAGGLER, R_LATE_BEFORE, R_LATE_HOST, R_LATE_COMPUTE, R_LATE_DATA, R_NCOLS };

/* Past this fit residual a rank's clock is not trusted for arrival skew. */
#define SKEW_MAX_RESIDUAL_NS 50000
/* A drift is fitted when the shared collectives span this long. */
#define DRIFT_MIN_SPAN_NS 1000000000LL

static const tprof_col_desc top_cols[T_NCOLS] = {
    [T_RANKS] = TPROF_COL("traces", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "traces given, one per rank"),
    [T_MATCHED] = TPROF_COL("matched", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                            "instances matched on two or more ranks"),
    [T_UNMATCHED] = TPROF_COL("unmatched", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                              "ranks' instances left out: on one rank only, or past the count the others have"),
    [T_MATCHING] = TPROF_COL("matching", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                             "how instances were matched: sequence (process group and Seq), order (the n-th of "
                             "a group and type on each rank), or both (per group); none without any"),
    [T_COMMON] = TPROF_COL("common_steps", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                           "ProfilerSteps every rank has: only their instances are matched (0 with a rank "
                           "without steps: every instance is; 0 when every rank has steps: none is)"),
    [T_STRAGGLER] = TPROF_COL("straggler", TPROF_COL_RANK, TPROF_COMBINE_FIRST, NULL,
                              "the rank that cost the others the most waiting, null when nobody waited"),
    [T_COST] = TPROF_COL("straggler_cost_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                         "the others' waits in the instances it arrived last"),
    [T_LAST_SHARE] = TPROF_COL("straggler_last_share", TPROF_COL_RATIO, TPROF_COMBINE_FIRST, NULL,
                               "of the matched instances with waits, the share it arrived last"),
    [T_RESIDUAL] = TPROF_COL("clock_residual_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                             "the largest of the ranks' clock-fit residuals, null without a fit"),
    [T_SKEW] = TPROF_COL("skew_computed", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, NULL,
                         "arrival skew was computed: every rank's clock fitted within 50 us"),
    [T_A2A_IMBALANCE] = TPROF_COL("alltoall_imbalance", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                                  "the most bytes a rank sent or received in the matched all-to-alls over the ranks' "
                                  "mean (1: even; MoE routing skew shows here); null without sizes"),
    [T_CAUSE] = TPROF_COL("straggler_cause", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                          "what made the straggler late, from its stretches before the instances it arrived last "
                          "in against the others' (late_*_per_step_ns of its row): host (its host called them later), data "
                          "(the same, mostly its data loading), compute (its GPU started them later after the "
                          "call: the work queued ahead); null when neither part is longer"),
    [T_LINKS_UNMAPPED] = TPROF_COL("hccl_links_unmapped", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                                   "Ascend matrix entries left out of hccl_cluster_links: an endpoint that no rank's "
                                   "self link maps to a global rank (msprof-analyze drops them too)"),
    [T_A2A_PAIR_IMBALANCE] = TPROF_COL("alltoall_pair_imbalance", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                                       "the busiest pair of alltoall_pairs over the mean pair (1: even); null "
                                       "without split sizes"),
    [T_A2A_UNREAD] = TPROF_COL("alltoall_splits_unread", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                               "ranks' sides of matched all-to-alls whose split sizes were recorded but left out "
                               "of alltoall_pairs: the list cut after 30 entries (PyTorch's limit), rows that "
                               "do not divide the elements sent, or a list that is not one row count per rank of "
                               "the group"),
};
static const tprof_col_desc group_cols[G_NCOLS] = {
    [G_TYPE] = TPROF_COL("type", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the collective", .flags = TPROF_COLF_KEY),
    [G_GROUP] = TPROF_COL("group", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "its process group (\"\": not recorded)",
                          .flags = TPROF_COLF_KEY),
    [G_DTYPE] = TPROF_COL("dtype", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "as recorded", .flags = TPROF_COLF_KEY),
    [G_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL,
                          "message size (the largest a rank recorded), null when none did", .flags = TPROF_COLF_KEY),
    [G_RANKS] = TPROF_COL("group_size", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                          "ranks in the group: the recorded Group size, else the most ranks matched in an instance"),
    [G_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "matched instances"),
    [G_TRANSFER] = TPROF_COL("transfer_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                             "the sum over instances of the transfer time: the shortest duration across the ranks",
                             .flags = TPROF_COLF_METRIC),
    [G_TRANSFER_P50] = TPROF_COL("transfer_p50_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                                 "the median transfer time of an instance (nearest rank)"),
    [G_TRANSFER_P90] = TPROF_COL("transfer_p90_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                                 "its 90th percentile"),
    [G_ALGBW] = TPROF_COL("algbw", TPROF_COL_RATE, TPROF_COMBINE_FIRST, "algbw GB/s",
                          "bytes / median transfer time, GB/s; null without a size"),
    [G_BUSBW] = TPROF_COL("busbw", TPROF_COL_RATE, TPROF_COMBINE_FIRST, "busbw GB/s",
                          "algbw times NCCL's bus factor for the collective and group size"),
    [G_WAIT] = TPROF_COL("wait_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                         "the ranks' waits summed (collectives that end together on every rank; 0 for the others)"),
    [G_SKEW_P50] = TPROF_COL("skew_p50_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                             "arrival skew (last start minus first, the clocks aligned): median; null when not computed"),
    [G_SKEW_P90] = TPROF_COL("skew_p90_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "its 90th percentile"),
};
static const tprof_col_desc rank_cols[R_NCOLS] = {
    [R_RANK] = TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_PER_RANK, NULL,
                         "distributedInfo.rank, else rank<N> in the file name, else its place in rank order",
                         .flags = TPROF_COLF_KEY),
    [R_INSTANCES] = TPROF_COL("instances", TPROF_COL_COUNT, TPROF_COMBINE_PER_RANK, NULL, "its matched instances"),
    [R_WAIT] = TPROF_COL("wait_ns", TPROF_COL_DURATION, TPROF_COMBINE_PER_RANK, NULL,
                         "its waits: in each instance its duration minus the instance's shortest"),
    [R_WAIT_STEP] = TPROF_COL("wait_per_step_ns", TPROF_COL_DURATION, TPROF_COMBINE_PER_RANK, NULL,
                              "wait_ns over the common steps (over one, without them)"),
    [R_LAST] = TPROF_COL("arrived_last", TPROF_COL_COUNT, TPROF_COMBINE_PER_RANK, NULL,
                         "instances it arrived last in (its duration the shortest)"),
    [R_COST] = TPROF_COL("cost_ns", TPROF_COL_DURATION, TPROF_COMBINE_PER_RANK, NULL,
                         "the others' waits in those instances: what its lateness cost them",
                         .flags = TPROF_COLF_METRIC),
    [R_OFFSET] = TPROF_COL("clock_offset_ns", TPROF_COL_INT, TPROF_COMBINE_PER_RANK, NULL,
                           "its clock minus the first rank's, fitted on the ends of the collectives they share "
                           "(at their mean end); null without one"),
    [R_DRIFT] = TPROF_COL("clock_drift_ppm", TPROF_COL_REAL, TPROF_COMBINE_PER_RANK, NULL,
                          "the fit's drift, ns per ms (0 with fewer than 3 shared collectives or over less than 1 s)"),
    [R_RESIDUAL] = TPROF_COL("clock_residual_ns", TPROF_COL_DURATION, TPROF_COMBINE_PER_RANK, NULL,
                             "the fit's root-mean-square residual"),
    [R_LATE] = TPROF_COL("late_mean_ns", TPROF_COL_DURATION, TPROF_COMBINE_PER_RANK, NULL,
                         "its mean arrival after the first rank of each instance, clocks aligned; null when not computed"),
    [R_A2A_SENT] = TPROF_COL("alltoall_sent_bytes", TPROF_COL_BYTES, TPROF_COMBINE_PER_RANK, NULL,
                             "what it sent in the matched all-to-alls (their in_bytes); null without sizes"),
    [R_A2A_RECEIVED] = TPROF_COL("alltoall_received_bytes", TPROF_COL_BYTES, TPROF_COMBINE_PER_RANK, NULL,
                                 "what it received in them (out_bytes)"),
    [R_STRAGGLER] = TPROF_COL("straggler", TPROF_COL_BOOL, TPROF_COMBINE_PER_RANK, NULL, "the straggler's row"),
    [R_LATE_BEFORE] = TPROF_COL("late_stretch_per_step_ns", TPROF_COL_DURATION, TPROF_COMBINE_PER_RANK, NULL,
                                "in the instances it arrived last in (with waits): its stretch before the instance "
                                "minus the median of the others', summed, over the common steps (over one without "
                                "them); null when it never arrived last"),
    [R_LATE_HOST] = TPROF_COL("late_host_per_step_ns", TPROF_COL_DURATION, TPROF_COMBINE_PER_RANK, NULL,
                              "the same for the part before its host called the collective (the rest: its GPU "
                              "started it later after the call, behind the work queued ahead)"),
    [R_LATE_COMPUTE] = TPROF_COL("late_compute_per_step_ns", TPROF_COL_DURATION, TPROF_COMBINE_PER_RANK, NULL,
                                 "the same for the GPU compute in the stretch"),
    [R_LATE_DATA] = TPROF_COL("late_data_per_step_ns", TPROF_COL_DURATION, TPROF_COMBINE_PER_RANK, NULL,
                              "the same for the host's data loading in the stretch"),
};
static const tprof_table_desc top_table = { .name = "", .cols = top_cols, .ncols = T_NCOLS };
const tprof_table_desc tprof_coll_groups_table = {
    .name = "collectives", .title = "collectives matched across ranks",
    .doc = "per collective, process group, dtype and size, by transfer time", .cols = group_cols, .ncols = G_NCOLS
};
static const tprof_table_desc rank_table = { .name = "ranks", .title = "waits per rank",
                                             .doc = "one row per rank, in rank order", .cols = rank_cols,
                                             .ncols = R_NCOLS };
static const tprof_table_desc *const coll_tables[] = { &tprof_coll_groups_table,   &rank_table,
                                                        &tprof_hccl_totals_desc,    &tprof_hccl_groups_desc,
                                                        &tprof_hccl_bandwidth_desc, &tprof_hccl_slow_links_desc,
                                                        &tprof_hccl_cluster_links_desc, &tprof_a2a_pairs_desc };
/* The ranks' table as summary holds it (rows copied with tprof_rows_append,
 * which needs the same columns), under a name of its own beside summary's
 * "ranks"; the groups' table is summary's as it is. */
const tprof_table_desc tprof_coll_waits_table = { .name = "collective_waits", .title = "collective waits per rank",
                                                  .doc = "`collectives`' waits per rank, in rank order (null without "
                                                         "collectives matched across ranks)",
                                                  .cols = rank_cols, .ncols = R_NCOLS, .json_omit_empty = 1 };
const tprof_result_desc tprof_collectives_desc = { .name = "collectives", .version = 5, .top = &top_table,
                                                   .tables = coll_tables, .ntables = 8, .csv_table = 1,
                                                   .whole_run = 1, .json_tables_first = 1 };

int tprof_collective_ends_together(const char *type)
{
    return !strcmp(type, "allreduce") || !strcmp(type, "allgather") || !strcmp(type, "reduce_scatter") ||
           !strcmp(type, "broadcast") || !strcmp(type, "barrier");
}

/* One instance on one rank, in the matching. */
typedef struct {
    uint32_t rank;   /* index in rank order */
    uint32_t row;    /* in its rank's instances */
    uint32_t key;    /* its (group, type) */
    int64_t order;   /* its number among the rank's instances of that key, or its Seq */
} inst;

typedef struct {
    const char *group, *type;
    int by_seq;      /* every instance of the group on every rank has a Seq */
} inst_key;

static int cmp_inst(const void *a, const void *b)
{
    const inst *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* A row of the per-collective table while it is summed. */
typedef struct {
    const char *type, *group, *dtype;
    int64_t bytes; /* -1: none recorded */
    uint64_t count, ranks;
    int64_t transfer, wait;
    int64_t *transfers, *skews;
    size_t ntransfers, cap, nskews, skewcap;
} group_row;

/* A matched instance: ALL[a .. a + m), its row in the table G. */
typedef struct {
    size_t a, m, g;
    int together;
} matched_inst;

/* A shared collective's end on a rank and on the first rank (ns, their clocks). */
typedef struct {
    uint32_t rank;
    int64_t ref_end, end;
} clock_pair;

static int cmp_pair(const void *a, const void *b)
{
    const clock_pair *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->ref_end < y->ref_end ? -1 : x->ref_end > y->ref_end;
}

/* A rank's clock against the first rank's: end - ref_end = offset + drift * (ref_end - x0). */
typedef struct {
    int fitted;
    double x0, offset, drift, residual;
} clock_fit;

/* Least squares over P[0..N) (offset alone, the median, below 3 points). */
static clock_fit fit_clock(const clock_pair *p, size_t n)
{
    clock_fit f = { .fitted = n > 0 };
    if (!n) return f;
    double sx = 0, sy = 0;
    for (size_t i = 0; i < n; i++) sx += (double)(p[i].ref_end - p[0].ref_end), sy += (double)(p[i].end - p[i].ref_end);
    double mx = sx / (double)n, my = sy / (double)n, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double x = (double)(p[i].ref_end - p[0].ref_end) - mx, y = (double)(p[i].end - p[i].ref_end) - my;
        sxx += x * x;
        sxy += x * y;
    }
    f.x0 = (double)p[0].ref_end + mx;
    f.offset = my;
    /* a drift only over a second or more: fitted over milliseconds it is the noise of the ends */
    f.drift = n >= 3 && sxx > 0 && p[n - 1].ref_end - p[0].ref_end >= DRIFT_MIN_SPAN_NS ? sxy / sxx : 0;
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        double x = (double)(p[i].ref_end - p[0].ref_end) - mx, y = (double)(p[i].end - p[i].ref_end);
        double e = y - (f.offset + f.drift * x);
        ss += e * e;
    }
    f.residual = sqrt(ss / (double)n);
    return f;
}

/* T on rank K's clock, on the first rank's. */
static double aligned(const clock_fit *f, int64_t t)
{
    return (double)t - (f->offset + f->drift * ((double)t - f->offset - f->x0));
}

/* By transfer time, longest first; then by name, group, dtype, size. */
static int cmp_group(const void *a, const void *b)
{
    const group_row *x = a, *y = b;
    if (x->transfer != y->transfer) return x->transfer > y->transfer ? -1 : 1;
    int c = strcmp(x->type, y->type);
    if (!c) c = strcmp(x->group, y->group);
    if (!c) c = strcmp(x->dtype, y->dtype);
    return c ? c : x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

/* The nearest-rank p50 and p90 of V[0..N) (as every across-ranks figure: tprof_dist_of). */
static int percentiles(const int64_t *v, size_t n, int64_t *p50, int64_t *p90)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (!d) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) d[i] = (double)v[i];
    tprof_col_dist dist;
    int rc = tprof_dist_of(d, NULL, n, &dist);
    free(d);
    *p50 = llround(dist.p50);
    *p90 = llround(dist.p90);
    return rc;
}

static int64_t rows_int_or(const tprof_rows *rows, size_t i, size_t col, int64_t none)
{
    const tprof_cell *c = tprof_rows_cell(rows, i, col);
    return c->null ? none : c->v.i;
}

static const char *rows_str(const tprof_rows *rows, size_t i, size_t col)
{
    const tprof_cell *c = tprof_rows_cell(rows, i, col);
    return c->null ? "" : c->v.s;
}

/* What a late rank's stretches hold more than the others': the stretch,
 * its compute, idle and data-loading parts (C_BEFORE ...), and the count of
 * instances summed, per rank. */
enum { LATE_NPARTS = 4, LATE_STRIDE = LATE_NPARTS + 1 };

/* Instance ALL[a .. a + m), rank ALL[LASTK] the last to arrive: adds to
 * SUM (its rank's LATE_STRIDE slots) its stretch parts minus the others'
 * medians (the lower middle), when it and another rank have them. OTHER:
 * room for M values. */
static int late_stretch(const tprof_result *const *ranks, const inst *all, size_t a, size_t m, size_t lastk,
                        double *sum, int64_t *other)
{
    const tprof_rows *lrows = tprof_result_table_c(ranks[all[lastk].rank], 0);
    double excess[LATE_NPARTS];
    for (size_t p = 0; p < LATE_NPARTS; p++) {
        const tprof_cell *mine = tprof_rows_cell(lrows, all[lastk].row, C_BEFORE + p);
        size_t k = 0;
        for (size_t j = a; j < a + m; j++) {
            if (j == lastk) continue;
            const tprof_cell *c = tprof_rows_cell(tprof_result_table_c(ranks[all[j].rank], 0), all[j].row, C_BEFORE + p);
            if (!c->null) other[k++] = c->v.i;
        }
        if (mine->null || !k) return 0; /* a group's first instance, or no calls: nothing to compare */
        qsort(other, k, sizeof *other, cmp_i64);
        excess[p] = (double)mine->v.i - (double)other[(k - 1) / 2];
    }
    for (size_t p = 0; p < LATE_NPARTS; p++) sum[p] += excess[p];
    sum[LATE_NPARTS] += 1;
    return 0;
}

/* The straggler's cause from its mean excesses (LATE_STRIDE slots): its
 * host called the collectives later than the others' did (data when its
 * data loading is most of that, else host), or its GPU started them later
 * after the call (compute: the work queued ahead of them); NULL when
 * neither part is longer. */
static const char *late_cause(const double *w)
{
    if (!w[LATE_NPARTS]) return NULL;
    double host = w[1] / w[LATE_NPARTS], queue = (w[0] - w[1]) / w[LATE_NPARTS], data = w[3] / w[LATE_NPARTS];
    if (host <= 0 && queue <= 0) return NULL;
    if (queue > host) return "compute";
    return data >= host / 2 ? "data" : "host";
}

int tprof_collectives_reduce(const tprof_result *const *per_rank, size_t n, tprof_result **out)
{
    *out = NULL;
    for (size_t i = 0; i < n; i++)
        if (tprof_result_desc_of(per_rank[i]) != &tprof_coll_instances_desc) return TPROF_EUSAGE;
    int rc = TPROF_ENOMEM;
    int64_t *rank_of = malloc((n ? n : 1) * sizeof *rank_of);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    const tprof_result **ranks = malloc((n ? n : 1) * sizeof *ranks);
    int64_t *wait = calloc(n ? n : 1, sizeof *wait), *cost = calloc(n ? n : 1, sizeof *cost);
    uint64_t *last = calloc(n ? n : 1, sizeof *last), *matched_on = calloc(n ? n : 1, sizeof *matched_on);
    int64_t *sent = malloc((n ? n : 1) * sizeof *sent), *received = malloc((n ? n : 1) * sizeof *received);
    double *why = calloc((n ? n : 1) * LATE_STRIDE, sizeof *why); /* per rank: late_stretch's sums */
    int64_t *other = malloc((n ? n : 1) * sizeof *other);
    inst *all = NULL;
    inst_key *keys = NULL;
    tprof_a2a *a2a = tprof_a2a_new();
    uint64_t a2a_unread = 0;
    uint8_t *gpu_key = NULL; /* per key: some rank's instance has kernels */
    group_row *groups = NULL;
    int64_t *common = NULL, *dur = NULL;
    matched_inst *mi = NULL;
    clock_pair *pairs = NULL;
    clock_fit *fits = NULL;
    double *late = NULL, *starts = NULL; /* STARTS: an instance's aligned starts */
    uint64_t *late_n = NULL;
    size_t nmi = 0, micap = 0, npairs = 0, paircap = 0;
    size_t nall = 0, nkeys = 0, keycap = 0, ngroups = 0, groupcap = 0, ncommon = 0;
    tprof_result *res = NULL;
    if (!rank_of || !order || !ranks || !wait || !cost || !last || !matched_on || !sent || !received || !why || !other ||
        !a2a)
        goto out;
    for (size_t k = 0; k < n; k++) sent[k] = received[k] = -1; /* -1: no size recorded */
    /* rank order: the rank each trace says, else its place */
    for (size_t i = 0; i < n; i++) {
        const tprof_cell *c = tprof_rows_cell(tprof_result_top_c(per_rank[i]), 0, I_RANK);
        rank_of[i] = c->null ? -1 : c->v.i;
    }
    if (tprof_rank_order(rank_of, n, order)) goto out;
    for (size_t k = 0; k < n; k++) ranks[k] = per_rank[order[k]];
    for (size_t k = 0; k < n; k++) { /* in rank order now */
        const tprof_cell *c = tprof_rows_cell(tprof_result_top_c(ranks[k]), 0, I_RANK);
        rank_of[k] = c->null ? (int64_t)k : c->v.i;
    }
    /* the steps every rank has (none: a rank without steps) */
    int all_steps = n > 0;
    for (size_t k = 0; k < n; k++) all_steps &= tprof_rows_count(tprof_result_table_c(ranks[k], 1)) > 0;
    if (all_steps) {
        const tprof_rows *s0 = tprof_result_table_c(ranks[0], 1);
        if (!(common = malloc(tprof_rows_count(s0) * sizeof *common))) goto out;
        for (size_t i = 0; i < tprof_rows_count(s0); i++) {
            int64_t s = tprof_rows_cell(s0, i, P_STEP)->v.i;
            int everywhere = 1;
            for (size_t k = 1; k < n && everywhere; k++) {
                const tprof_rows *sk = tprof_result_table_c(ranks[k], 1);
                int found = 0;
                for (size_t j = 0; j < tprof_rows_count(sk) && !found; j++) found = tprof_rows_cell(sk, j, P_STEP)->v.i == s;
                everywhere = found;
            }
            if (everywhere) common[ncommon++] = s;
        }
        if (ncommon) qsort(common, ncommon, sizeof *common, cmp_i64);
    }
    /* the instances kept: in the common steps; of a key with GPU work anywhere, those with kernels */
    size_t total = 0;
    for (size_t k = 0; k < n; k++) total += tprof_rows_count(tprof_result_table_c(ranks[k], 0));
    if (!(all = malloc((total ? total : 1) * sizeof *all))) goto out;
    for (size_t k = 0; k < n; k++) {
        const tprof_rows *rows = tprof_result_table_c(ranks[k], 0);
        for (size_t i = 0; i < tprof_rows_count(rows); i++) {
            if (all_steps) {
                int64_t s = rows_int_or(rows, i, C_STEP, INT64_MIN);
                if (!bsearch(&s, common, ncommon, sizeof *common, cmp_i64)) continue;
            }
            const char *group = rows_str(rows, i, C_GROUP), *type = rows_str(rows, i, C_TYPE);
            size_t key = 0;
            while (key < nkeys && (strcmp(keys[key].group, group) || strcmp(keys[key].type, type))) key++;
            if (key == nkeys) {
                if (tprof_grow((void **)&keys, &keycap, nkeys + 1, sizeof *keys)) goto out;
                uint8_t *gk = realloc(gpu_key, keycap);
                if (!gk) goto out;
                gpu_key = gk;
                keys[nkeys] = (inst_key){ .group = group, .type = type, .by_seq = 1 };
                gpu_key[nkeys++] = 0;
            }
            if (rows_int_or(rows, i, C_KERNELS, 0) > 0) gpu_key[key] = 1;
            all[nall++] = (inst){ .rank = (uint32_t)k, .row = (uint32_t)i, .key = (uint32_t)key,
                                  .order = rows_int_or(rows, i, C_SEQ, -1) };
        }
    }
    {
        size_t kept = 0;
        for (size_t a = 0; a < nall; a++) {
            const tprof_rows *rows = tprof_result_table_c(ranks[all[a].rank], 0);
            if (gpu_key[all[a].key] && rows_int_or(rows, all[a].row, C_KERNELS, 0) == 0) continue;
            all[kept++] = all[a];
        }
        nall = kept;
    }
    /* matching by Seq where a whole group has it, else by order within the group and type */
    for (size_t a = 0; a < nall; a++)
        if (all[a].order < 0)
            for (size_t j = 0; j < nkeys; j++)
                if (!strcmp(keys[j].group, keys[all[a].key].group)) keys[j].by_seq = 0;
    int seq_used = 0, order_used = 0;
    {
        uint64_t *seen = calloc(nkeys * (n ? n : 1), sizeof *seen); /* instances so far per key and rank */
        if (!seen) goto out;
        for (size_t a = 0; a < nall; a++) {
            if (keys[all[a].key].by_seq) {
                seq_used = 1;
                continue;
            }
            order_used = 1;
            all[a].order = (int64_t)seen[(size_t)all[a].key * n + all[a].rank]++;
        }
        free(seen);
    }
    qsort(all, nall, sizeof *all, cmp_inst);
    if (!(dur = malloc((n ? n : 1) * sizeof *dur))) goto out;
    uint64_t matched = 0, unmatched = 0, with_waits = 0;
    for (size_t a = 0, b; a < nall; a = b) {
        for (b = a + 1; b < nall && all[b].key == all[a].key && all[b].order == all[a].order; b++) {}
        /* one rank twice (a repeated Seq): the first one counts */
        size_t m = 0;
        for (size_t j = a; j < b; j++)
            if (j == a || all[j].rank != all[j - 1].rank) all[a + m++] = all[j];
        unmatched += b - a - m;
        if (m < 2) {
            unmatched += m;
            continue;
        }
        matched++;
        const char *type = keys[all[a].key].type;
        int64_t shortest = INT64_MAX, bytes = -1, size = -1;
        size_t lastk = a;
        const char *dtype = "";
        for (size_t j = a; j < a + m; j++) {
            const tprof_rows *rows = tprof_result_table_c(ranks[all[j].rank], 0);
            dur[j - a] = rows_int_or(rows, all[j].row, C_DUR, 0);
            if (dur[j - a] < shortest) shortest = dur[j - a], lastk = j;
            int64_t by = rows_int_or(rows, all[j].row, C_BYTES, -1), gs = rows_int_or(rows, all[j].row, C_GROUP_SIZE, -1);
            if (by > bytes) bytes = by;
            if (gs > size) size = gs;
            if (!*dtype) dtype = rows_str(rows, all[j].row, C_DTYPE);
            matched_on[all[j].rank]++;
            if (!strcmp(type, "alltoall")) {
                int64_t in = rows_int_or(rows, all[j].row, C_IN_BYTES, -1), ob = rows_int_or(rows, all[j].row, C_OUT_BYTES, -1);
                if (in >= 0) sent[all[j].rank] = tprof_sat_add(sent[all[j].rank] < 0 ? 0 : sent[all[j].rank], in);
                if (ob >= 0) received[all[j].rank] = tprof_sat_add(received[all[j].rank] < 0 ? 0 : received[all[j].rank], ob);
                tprof_a2a_outcome got;
                if (tprof_a2a_add(a2a, keys[all[a].key].group, rank_of[all[j].rank], in, gs,
                                  rows_str(rows, all[j].row, C_IN_SPLITS), rows_str(rows, all[j].row, C_GROUP_RANKS),
                                  &got))
                    goto out;
                a2a_unread += got == TPROF_A2A_CUT || got == TPROF_A2A_UNEVEN;
            }
        }
        int64_t waited = 0;
        if (tprof_collective_ends_together(type)) {
            for (size_t j = a; j < a + m; j++) {
                int64_t w = dur[j - a] - shortest;
                wait[all[j].rank] = tprof_sat_add(wait[all[j].rank], w);
                waited = tprof_sat_add(waited, w);
            }
            if (waited > 0) {
                last[all[lastk].rank]++;
                cost[all[lastk].rank] = tprof_sat_add(cost[all[lastk].rank], waited);
                with_waits++;
                if (late_stretch(ranks, all, a, m, lastk, &why[(size_t)all[lastk].rank * LATE_STRIDE], other)) goto out;
            }
        }
        /* its row: collective, group, dtype, size */
        size_t g = 0;
        while (g < ngroups && (strcmp(groups[g].type, type) || strcmp(groups[g].group, keys[all[a].key].group) ||
                               strcmp(groups[g].dtype, dtype) || groups[g].bytes != bytes))
            g++;
        if (g == ngroups) {
            if (tprof_grow((void **)&groups, &groupcap, ngroups + 1, sizeof *groups)) goto out;
            groups[ngroups++] = (group_row){ .type = type, .group = keys[all[a].key].group, .dtype = dtype, .bytes = bytes };
        }
        group_row *gr = &groups[g];
        if (tprof_grow_items((void **)&gr->transfers, &gr->cap, gr->ntransfers + 1, sizeof *gr->transfers)) goto out;
        gr->transfers[gr->ntransfers++] = shortest;
        gr->count++;
        if (m > gr->ranks) gr->ranks = m;
        if (size > 0 && (uint64_t)size > gr->ranks) gr->ranks = (uint64_t)size; /* the recorded group size */
        gr->transfer = tprof_sat_add(gr->transfer, shortest);
        gr->wait = tprof_sat_add(gr->wait, waited);
        if (tprof_grow_items((void **)&mi, &micap, nmi + 1, sizeof *mi)) goto out;
        mi[nmi++] = (matched_inst){ .a = a, .m = m, .g = g, .together = tprof_collective_ends_together(type) };
        /* the clocks: instances that end together and that the first rank is in */
        if (tprof_collective_ends_together(type) && all[a].rank == 0) {
            const tprof_rows *r0 = tprof_result_table_c(ranks[0], 0);
            int64_t ref_end = tprof_end_ns(rows_int_or(r0, all[a].row, C_START, 0), rows_int_or(r0, all[a].row, C_DUR, 0));
            for (size_t j = a + 1; j < a + m; j++) {
                const tprof_rows *rows = tprof_result_table_c(ranks[all[j].rank], 0);
                int64_t end = tprof_end_ns(rows_int_or(rows, all[j].row, C_START, 0), rows_int_or(rows, all[j].row, C_DUR, 0));
                if (tprof_grow_items((void **)&pairs, &paircap, npairs + 1, sizeof *pairs)) goto out;
                pairs[npairs++] = (clock_pair){ .rank = all[j].rank, .ref_end = ref_end, .end = end };
            }
        }
    }
    /* each rank's clock fitted on the first rank's; the arrival skew where every clock fits */
    fits = calloc(n ? n : 1, sizeof *fits);
    late = calloc(n ? n : 1, sizeof *late);
    late_n = calloc(n ? n : 1, sizeof *late_n);
    starts = malloc((n ? n : 1) * sizeof *starts);
    if (!fits || !late || !late_n || !starts) goto out;
    if (n) fits[0] = (clock_fit){ .fitted = 1 };
    if (npairs) qsort(pairs, npairs, sizeof *pairs, cmp_pair);
    for (size_t p = 0, q; p < npairs; p = q) {
        for (q = p + 1; q < npairs && pairs[q].rank == pairs[p].rank; q++) {}
        fits[pairs[p].rank] = fit_clock(pairs + p, q - p);
    }
    double worst = 0;
    int all_fit = n > 1;
    for (size_t k = 0; k < n; k++) {
        all_fit &= fits[k].fitted;
        if (fits[k].fitted && fits[k].residual > worst) worst = fits[k].residual;
    }
    int skew_ok = all_fit && worst <= SKEW_MAX_RESIDUAL_NS;
    for (size_t i = 0; skew_ok && i < nmi; i++) {
        double lo = INFINITY, hi = -INFINITY;
        double *at = starts;
        for (size_t j = mi[i].a; j < mi[i].a + mi[i].m; j++) {
            const tprof_rows *rows = tprof_result_table_c(ranks[all[j].rank], 0);
            at[j - mi[i].a] = aligned(&fits[all[j].rank], rows_int_or(rows, all[j].row, C_START, 0));
            if (at[j - mi[i].a] < lo) lo = at[j - mi[i].a];
            if (at[j - mi[i].a] > hi) hi = at[j - mi[i].a];
        }
        for (size_t j = mi[i].a; j < mi[i].a + mi[i].m; j++) {
            late[all[j].rank] += at[j - mi[i].a] - lo;
            late_n[all[j].rank]++;
        }
        group_row *gr = &groups[mi[i].g];
        if (tprof_grow_items((void **)&gr->skews, &gr->skewcap, gr->nskews + 1, sizeof *gr->skews)) goto out;
        gr->skews[gr->nskews++] = llround(hi - lo);
    }
    /* the result */
    if (!(res = tprof_result_new(&tprof_collectives_desc))) goto out;
    tprof_rows *top = tprof_result_top(res), *gt = tprof_result_table(res, 0), *rt = tprof_result_table(res, 1);
    tprof_rows_set_i(top, 0, T_RANKS, (int64_t)n);
    tprof_rows_set_i(top, 0, T_MATCHED, (int64_t)matched);
    tprof_rows_set_i(top, 0, T_UNMATCHED, (int64_t)unmatched);
    tprof_rows_set_i(top, 0, T_COMMON, (int64_t)ncommon);
    if (!matched) seq_used = order_used = 0;
    if (tprof_rows_set_s(top, 0, T_MATCHING, seq_used && order_used ? "both" : seq_used ? "sequence"
                                                                  : order_used ? "order" : "none"))
        goto out;
    if (all_fit || npairs) tprof_rows_set_i(top, 0, T_RESIDUAL, llround(worst));
    tprof_rows_set_i(top, 0, T_SKEW, skew_ok);
    { /* all-to-all balance: the busiest rank's bytes over the mean, sent or received */
        double most = 0, sum_s = 0, sum_r = 0, most_r = 0;
        size_t sized = 0;
        for (size_t k = 0; k < n; k++)
            if (sent[k] >= 0 || received[k] >= 0) {
                double x = sent[k] > 0 ? (double)sent[k] : 0, y = received[k] > 0 ? (double)received[k] : 0;
                sum_s += x, sum_r += y, sized++;
                if (x > most) most = x;
                if (y > most_r) most_r = y;
            }
        double imb = 0;
        if (sized && sum_s > 0) imb = most / (sum_s / (double)sized);
        if (sized && sum_r > 0 && most_r / (sum_r / (double)sized) > imb) imb = most_r / (sum_r / (double)sized);
        if (imb > 0) tprof_rows_set_d(top, 0, T_A2A_IMBALANCE, imb);
        double pair_imb;
        if (tprof_a2a_rows(a2a, tprof_result_table(res, 7), &pair_imb)) goto out;
        if (pair_imb > 0) tprof_rows_set_d(top, 0, T_A2A_PAIR_IMBALANCE, pair_imb);
        tprof_rows_set_i(top, 0, T_A2A_UNREAD, (int64_t)a2a_unread);
    }
    size_t straggler = n;
    for (size_t k = 0; k < n; k++)
        if (cost[k] > 0 && (straggler == n || cost[k] > cost[straggler])) straggler = k;
    if (straggler < n) {
        tprof_rows_set_i(top, 0, T_STRAGGLER, rank_of[straggler]);
        tprof_rows_set_i(top, 0, T_COST, cost[straggler]);
        tprof_rows_set_d(top, 0, T_LAST_SHARE, with_waits ? (double)last[straggler] / (double)with_waits : 0.0);
        const char *cause = late_cause(&why[straggler * LATE_STRIDE]);
        if (cause && tprof_rows_set_s(top, 0, T_CAUSE, cause)) goto out;
    }
    if (ngroups) qsort(groups, ngroups, sizeof *groups, cmp_group);
    for (size_t g = 0; g < ngroups; g++) {
        group_row *gr = &groups[g];
        long i = tprof_rows_add(gt);
        if (i < 0 || tprof_rows_set_s(gt, (size_t)i, G_TYPE, gr->type) || tprof_rows_set_s(gt, (size_t)i, G_GROUP, gr->group) ||
            tprof_rows_set_s(gt, (size_t)i, G_DTYPE, gr->dtype))
            goto out;
        int64_t p50, p90;
        if (percentiles(gr->transfers, gr->ntransfers, &p50, &p90)) goto out;
        if (gr->bytes >= 0) tprof_rows_set_i(gt, (size_t)i, G_BYTES, gr->bytes);
        tprof_rows_set_i(gt, (size_t)i, G_RANKS, (int64_t)gr->ranks);
        tprof_rows_set_i(gt, (size_t)i, G_COUNT, (int64_t)gr->count);
        tprof_rows_set_i(gt, (size_t)i, G_TRANSFER, gr->transfer);
        tprof_rows_set_i(gt, (size_t)i, G_TRANSFER_P50, p50);
        tprof_rows_set_i(gt, (size_t)i, G_TRANSFER_P90, p90);
        if (gr->bytes >= 0 && p50 > 0) {
            double algbw = (double)gr->bytes / (double)p50; /* bytes per ns = GB/s */
            tprof_rows_set_d(gt, (size_t)i, G_ALGBW, algbw);
            tprof_rows_set_d(gt, (size_t)i, G_BUSBW, algbw * tprof_bus_factor(gr->type, (int64_t)gr->ranks));
        }
        tprof_rows_set_i(gt, (size_t)i, G_WAIT, gr->wait);
        if (gr->nskews) {
            if (percentiles(gr->skews, gr->nskews, &p50, &p90)) goto out;
            tprof_rows_set_i(gt, (size_t)i, G_SKEW_P50, p50);
            tprof_rows_set_i(gt, (size_t)i, G_SKEW_P90, p90);
        }
    }
    for (size_t k = 0; k < n; k++) {
        long i = tprof_rows_add(rt);
        if (i < 0) goto out;
        tprof_rows_set_i(rt, (size_t)i, R_RANK, rank_of[k]);
        tprof_rows_set_i(rt, (size_t)i, R_INSTANCES, (int64_t)matched_on[k]);
        tprof_rows_set_i(rt, (size_t)i, R_WAIT, wait[k]);
        tprof_rows_set_i(rt, (size_t)i, R_WAIT_STEP, wait[k] / (int64_t)(ncommon ? ncommon : 1));
        tprof_rows_set_i(rt, (size_t)i, R_LAST, (int64_t)last[k]);
        tprof_rows_set_i(rt, (size_t)i, R_COST, cost[k]);
        if (fits[k].fitted) {
            tprof_rows_set_i(rt, (size_t)i, R_OFFSET, llround(fits[k].offset));
            tprof_rows_set_d(rt, (size_t)i, R_DRIFT, fits[k].drift * 1e6);
            tprof_rows_set_i(rt, (size_t)i, R_RESIDUAL, llround(fits[k].residual));
        }
        if (skew_ok && late_n[k]) tprof_rows_set_i(rt, (size_t)i, R_LATE, llround(late[k] / (double)late_n[k]));
        if (sent[k] >= 0) tprof_rows_set_i(rt, (size_t)i, R_A2A_SENT, sent[k]);
        if (received[k] >= 0) tprof_rows_set_i(rt, (size_t)i, R_A2A_RECEIVED, received[k]);
        tprof_rows_set_i(rt, (size_t)i, R_STRAGGLER, k == straggler);
        const double *w = &why[k * LATE_STRIDE];
        for (size_t p = 0; w[LATE_NPARTS] && p < LATE_NPARTS; p++)
            tprof_rows_set_i(rt, (size_t)i, R_LATE_BEFORE + p, llround(w[p] / (double)(ncommon ? ncommon : 1)));
    }
    { /* Ascend's communication summaries across the ranks */
        const tprof_rows **tt = malloc((n ? n : 1) * sizeof *tt);
        rc = TPROF_ENOMEM;
        if (!tt) goto out;
        for (size_t k = 0; k < n; k++) tt[k] = tprof_result_table_c(ranks[k], 2);
        rc = tprof_hccl_cluster(tt, rank_of, n, tprof_result_table(res, 2), tprof_result_table(res, 3),
                                tprof_result_table(res, 4), tprof_result_table(res, 5));
        size_t unmapped = 0;
        for (size_t k = 0; !rc && k < n; k++) tt[k] = tprof_result_table_c(ranks[k], 3);
        if (!rc) rc = tprof_hccl_cluster_links(tt, rank_of, n, tprof_result_table(res, 6), &unmapped);
        tprof_rows_set_i(tprof_result_top(res), 0, T_LINKS_UNMAPPED, (int64_t)unmapped);
        free(tt);
        if (rc) goto out;
    }
    *out = res;
    res = NULL;
    rc = 0;
out:
    tprof_a2a_free(a2a);
    free(gpu_key);
    tprof_result_free(res);
    for (size_t g = 0; g < ngroups; g++) free(groups[g].transfers), free(groups[g].skews);
    free(mi);
    free(pairs);
    free(fits);
    free(late);
    free(late_n);
    free(starts);
    free(groups);
    free(keys);
    free(all);
    free(common);
    free(dur);
    free(rank_of);
    free(order);
    free(ranks);
    free(wait);
    free(cost);
    free(last);
    free(matched_on);
    free(sent);
    free(received);
    free(why);
    free(other);
    return rc;
}
