/* Collectives across ranks: each rank's collective instances, the same
 * instance matched across the ranks of its group, what each rank waited
 * for the others, what the transfer itself took, and the rank that holds
 * the others up (docs/METRICS.md, "trainprof collectives"). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "alltoall.h"
#include "coll_layout.h"
#include "comm_calls.h"
#include "hccl.h"
#include "intervals.h"
#include "launch.h"
#include "../util/grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- one rank's instances ---- */

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
const tprof_table_desc tprof_coll_inst_rows = { .name = "instances", .doc = "the rank's collectives, in start order",
                                               .cols = inst_cols, .ncols = C_NCOLS };
static const tprof_table_desc inst_steps = { .name = "steps", .doc = "the rank's ProfilerStep numbers",
                                             .cols = step_cols, .ncols = P_NCOLS };
static const tprof_table_desc *const inst_tables[IT_NTABLES] = {
    [IT_INSTANCES] = &tprof_coll_inst_rows,      [IT_STEPS] = &inst_steps,
    [IT_HCCL_TOTALS] = &tprof_hccl_totals_desc,  [IT_HCCL_MATRIX] = &tprof_hccl_matrix_desc,
    [IT_MATCH] = &tprof_coll_match_table,        [IT_MATCH_GROUPS] = &tprof_coll_groups_table,
    [IT_MATCH_RANKS] = &tprof_coll_sums_table,   [IT_MATCH_A2A] = &tprof_a2a_pairs_desc,
};
const tprof_result_desc tprof_coll_instances_desc = {
    .name = "collective_instances", .version = 6, .top = &inst_top, .tables = inst_tables, .ntables = IT_NTABLES,
    .internal = 1,
    .doc = "What `collectives` keeps of each rank's trace: its collective instances and steps; the trace is "
           "freed and the matching across ranks runs on these. The matching's outcome (match, collectives, "
           "rank_sums, alltoall_pairs: tprof_coll_join) is on the first rank's only, where trainprof-mpi matched "
           "the instances spread by group; empty elsewhere.",
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
enum { R_RANK, R_INSTANCES, R_WAIT, R_WAIT_STEP, R_LAST, R_COST, R_OFFSET, R_DRIFT, R_RESIDUAL, R_LATE, R_A2A_SENT,
       R_A2A_RECEIVED, R_STRAGGLER, R_LATE_BEFORE, R_LATE_HOST, R_LATE_COMPUTE, R_LATE_DATA, R_NCOLS };


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


/* The straggler's cause from its summed excesses (the S_WHY_* of its
 * sums): its host called the collectives later than the others' did (data
 * when its data loading is most of that, else host), or its GPU started
 * them later after the call (compute: the work queued ahead of them); NULL
 * when neither part is longer. */
static const char *late_cause(const tprof_rows *sums, size_t k)
{
    double n = (double)coll_int_or(sums, k, S_WHY_N, 0);
    if (!n) return NULL;
    double before = (double)coll_int_or(sums, k, S_WHY_BEFORE, 0), host = (double)coll_int_or(sums, k, S_WHY_HOST, 0);
    double data = (double)coll_int_or(sums, k, S_WHY_DATA, 0) / n, queue = (before - host) / n;
    host /= n;
    if (host <= 0 && queue <= 0) return NULL;
    if (queue > host) return "compute";
    return data >= host / 2 ? "data" : "host";
}

/* The result from the matching's outcome on CARRIER (tprof_coll_join), the
 * ranks' own tables (RANKS[0..N), in rank order) and the plan. */
static int collectives_result(const tprof_result *const *ranks, size_t n, const tprof_coll_plan *p,
                              const tprof_result *carrier, tprof_result **out)
{
    const tprof_rows *mt = tprof_result_table_c(carrier, IT_MATCH), *sums = tprof_result_table_c(carrier, IT_MATCH_RANKS);
    if (!tprof_rows_count(mt) || tprof_rows_count(sums) != n) return TPROF_EFORMAT;
    for (size_t k = 0; k < n; k++)
        if (coll_int_or(sums, k, S_K, -1) != (int64_t)k) return TPROF_EFORMAT;
    size_t ncommon = tprof_coll_plan_common(p);
    int64_t steps = (int64_t)(ncommon ? ncommon : 1);
    tprof_result *res = tprof_result_new(&tprof_collectives_desc);
    if (!res) return TPROF_ENOMEM;
    int rc = TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res), *gt = tprof_result_table(res, 0), *rt = tprof_result_table(res, 1);
    int64_t matched = coll_int_or(mt, 0, M_MATCHED, 0);
    int seq_used = matched && coll_int_or(mt, 0, M_SEQ_USED, 0), order_used = matched && coll_int_or(mt, 0, M_ORDER_USED, 0);
    tprof_rows_set_i(top, 0, T_RANKS, (int64_t)n);
    tprof_rows_set_i(top, 0, T_MATCHED, matched);
    tprof_rows_set_i(top, 0, T_UNMATCHED, coll_int_or(mt, 0, M_UNMATCHED, 0));
    tprof_rows_set_i(top, 0, T_COMMON, (int64_t)ncommon);
    if (tprof_rows_set_s(top, 0, T_MATCHING, seq_used && order_used ? "both" : seq_used ? "sequence"
                                                                  : order_used ? "order" : "none"))
        goto out;
    /* the clocks: skew was computed where every rank's fitted within the limit */
    double worst = 0;
    int all_fit = n > 1;
    for (size_t k = 0; k < n; k++) {
        int fitted = (int)coll_int_or(sums, k, S_FITTED, 0);
        all_fit &= fitted;
        if (fitted && tprof_rows_cell(sums, k, S_RESIDUAL)->v.d > worst) worst = tprof_rows_cell(sums, k, S_RESIDUAL)->v.d;
    }
    int skew_ok = all_fit && worst <= TPROF_COLL_SKEW_MAX_RESIDUAL_NS;
    if (all_fit || coll_int_or(mt, 0, M_PAIRS, 0)) tprof_rows_set_i(top, 0, T_RESIDUAL, llround(worst));
    tprof_rows_set_i(top, 0, T_SKEW, skew_ok);
    { /* all-to-all balance: the busiest rank's bytes over the mean, sent or received */
        double most = 0, sum_s = 0, sum_r = 0, most_r = 0;
        size_t sized = 0;
        for (size_t k = 0; k < n; k++) {
            int64_t s = coll_int_or(sums, k, S_SENT, -1), r = coll_int_or(sums, k, S_RECEIVED, -1);
            if (s < 0 && r < 0) continue;
            double x = s > 0 ? (double)s : 0, y = r > 0 ? (double)r : 0;
            sum_s += x, sum_r += y, sized++;
            if (x > most) most = x;
            if (y > most_r) most_r = y;
        }
        double imb = 0;
        if (sized && sum_s > 0) imb = most / (sum_s / (double)sized);
        if (sized && sum_r > 0 && most_r / (sum_r / (double)sized) > imb) imb = most_r / (sum_r / (double)sized);
        if (imb > 0) tprof_rows_set_d(top, 0, T_A2A_IMBALANCE, imb);
        tprof_a2a *a2a = tprof_a2a_new();
        double pair_imb = 0;
        int e = !a2a || tprof_a2a_add_rows(a2a, tprof_result_table_c(carrier, IT_MATCH_A2A)) ||
                tprof_a2a_rows(a2a, tprof_result_table(res, 7), &pair_imb);
        tprof_a2a_free(a2a);
        if (e) goto out;
        if (pair_imb > 0) tprof_rows_set_d(top, 0, T_A2A_PAIR_IMBALANCE, pair_imb);
        tprof_rows_set_i(top, 0, T_A2A_UNREAD, coll_int_or(mt, 0, M_A2A_UNREAD, 0));
    }
    size_t straggler = n;
    for (size_t k = 0; k < n; k++) {
        int64_t cost = coll_int_or(sums, k, S_COST, 0);
        if (cost > 0 && (straggler == n || cost > coll_int_or(sums, straggler, S_COST, 0))) straggler = k;
    }
    if (straggler < n) {
        int64_t with_waits = coll_int_or(mt, 0, M_WITH_WAITS, 0);
        tprof_rows_set_i(top, 0, T_STRAGGLER, tprof_coll_plan_rank(p, straggler));
        tprof_rows_set_i(top, 0, T_COST, coll_int_or(sums, straggler, S_COST, 0));
        tprof_rows_set_d(top, 0, T_LAST_SHARE,
                         with_waits ? (double)coll_int_or(sums, straggler, S_LAST, 0) / (double)with_waits : 0.0);
        const char *cause = late_cause(sums, straggler);
        if (cause && tprof_rows_set_s(top, 0, T_CAUSE, cause)) goto out;
    }
    if (tprof_rows_append(gt, tprof_result_table_c(carrier, IT_MATCH_GROUPS))) goto out;
    for (size_t k = 0; k < n; k++) {
        long i = tprof_rows_add(rt);
        if (i < 0) goto out;
        int64_t wait = coll_int_or(sums, k, S_WAIT, 0), late_n = coll_int_or(sums, k, S_LATE_N, 0);
        tprof_rows_set_i(rt, (size_t)i, R_RANK, tprof_coll_plan_rank(p, k));
        tprof_rows_set_i(rt, (size_t)i, R_INSTANCES, coll_int_or(sums, k, S_MATCHED_ON, 0));
        tprof_rows_set_i(rt, (size_t)i, R_WAIT, wait);
        tprof_rows_set_i(rt, (size_t)i, R_WAIT_STEP, wait / steps);
        tprof_rows_set_i(rt, (size_t)i, R_LAST, coll_int_or(sums, k, S_LAST, 0));
        tprof_rows_set_i(rt, (size_t)i, R_COST, coll_int_or(sums, k, S_COST, 0));
        if (coll_int_or(sums, k, S_FITTED, 0)) {
            tprof_rows_set_i(rt, (size_t)i, R_OFFSET, llround(tprof_rows_cell(sums, k, S_OFFSET)->v.d));
            tprof_rows_set_d(rt, (size_t)i, R_DRIFT, tprof_rows_cell(sums, k, S_DRIFT)->v.d * 1e6);
            tprof_rows_set_i(rt, (size_t)i, R_RESIDUAL, llround(tprof_rows_cell(sums, k, S_RESIDUAL)->v.d));
        }
        if (skew_ok && late_n)
            tprof_rows_set_i(rt, (size_t)i, R_LATE, llround((double)coll_int_or(sums, k, S_LATE, 0) / (double)late_n));
        if (coll_int_or(sums, k, S_SENT, -1) >= 0) tprof_rows_set_i(rt, (size_t)i, R_A2A_SENT, coll_int_or(sums, k, S_SENT, 0));
        if (coll_int_or(sums, k, S_RECEIVED, -1) >= 0)
            tprof_rows_set_i(rt, (size_t)i, R_A2A_RECEIVED, coll_int_or(sums, k, S_RECEIVED, 0));
        tprof_rows_set_i(rt, (size_t)i, R_STRAGGLER, k == straggler);
        for (size_t q = 0; coll_int_or(sums, k, S_WHY_N, 0) && q < 4; q++)
            tprof_rows_set_i(rt, (size_t)i, R_LATE_BEFORE + q,
                             llround((double)coll_int_or(sums, k, S_WHY_BEFORE + q, 0) / (double)steps));
    }
    { /* Ascend's communication summaries across the ranks */
        const tprof_rows **tt = malloc((n ? n : 1) * sizeof *tt);
        int64_t *rank_of = malloc((n ? n : 1) * sizeof *rank_of);
        rc = tt && rank_of ? 0 : TPROF_ENOMEM;
        for (size_t k = 0; !rc && k < n; k++)
            tt[k] = tprof_result_table_c(ranks[k], IT_HCCL_TOTALS), rank_of[k] = tprof_coll_plan_rank(p, k);
        if (!rc)
            rc = tprof_hccl_cluster(tt, rank_of, n, tprof_result_table(res, 2), tprof_result_table(res, 3),
                                    tprof_result_table(res, 4), tprof_result_table(res, 5));
        size_t unmapped = 0;
        for (size_t k = 0; !rc && k < n; k++) tt[k] = tprof_result_table_c(ranks[k], IT_HCCL_MATRIX);
        if (!rc) rc = tprof_hccl_cluster_links(tt, rank_of, n, tprof_result_table(res, 6), &unmapped);
        tprof_rows_set_i(top, 0, T_LINKS_UNMAPPED, (int64_t)unmapped);
        free(tt);
        free(rank_of);
        if (rc) goto out;
    }
    *out = res;
    res = NULL;
    rc = 0;
out:
    tprof_result_free(res);
    return rc;
}

int tprof_collectives_reduce(const tprof_result *const *per_rank, size_t n, tprof_result **out)
{
    *out = NULL;
    for (size_t i = 0; i < n; i++)
        if (tprof_result_desc_of(per_rank[i]) != &tprof_coll_instances_desc) return TPROF_EUSAGE;
    tprof_coll_plan *p = tprof_coll_plan_new(per_rank, n, 1);
    const tprof_result **ranks = malloc((n ? n : 1) * sizeof *ranks);
    tprof_result *here = NULL;
    int rc = p && ranks ? 0 : TPROF_ENOMEM;
    const tprof_result *carrier = NULL;
    for (size_t i = 0; !rc && i < n; i++) {
        ranks[tprof_coll_plan_place(p, i)] = per_rank[i];
        if (tprof_coll_matched(per_rank[i])) carrier = per_rank[i]; /* matched already, spread by group */
    }
    if (!rc && !carrier) { /* matched here, as the one owner of every group */
        here = tprof_result_new(&tprof_coll_instances_desc);
        rc = here ? tprof_coll_match_here(per_rank, n, here) : TPROF_ENOMEM;
        carrier = here;
    }
    if (!rc) rc = collectives_result(ranks, n, p, carrier, out);
    tprof_result_free(here);
    free(ranks);
    tprof_coll_plan_free(p);
    return rc;
}
