/* Ranks side by side: per-rank step time, temporal breakdown and exposed
 * communication; the straggler; step-time skew (docs/METRICS.md). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "step_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

void tprof_ranks_free(tprof_ranks_result *r)
{
    if (!r) return;
    for (size_t i = 0; r->ranks && i < r->nranks; i++) free(r->ranks[i].file);
    free(r->ranks);
    free(r);
}

/* ---- per-rank facts: what the cross-rank analyses need of each trace ---- */

enum { F_RANK, F_FILE, F_STEPS, F_STEP_MEAN, F_SPAN, F_IDLE, F_COMPUTE, F_COMM, F_EXPOSED, F_NCOLS };
enum { S_STEP, S_DUR, S_NCOLS };
enum { P_STEP, P_RANK, P_COMPUTING, P_COMM, P_FREE, P_RECORDED, P_NCOLS };

/* A rank's numbers: the facts kept of its trace, and its row in `ranks`. */
#define RANK_NUMBER_COLS                                                                                              \
    [F_FILE] = TPROF_COL("file", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "the trace's path"),               \
    [F_STEPS] = TPROF_COL("steps", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "ProfilerStep spans"),                 \
    [F_STEP_MEAN] = TPROF_COL("step_mean_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,                         \
                              "their mean duration (integer division)"),                                            \
    [F_SPAN] = TPROF_COL("span_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,                                   \
                         "the GPU kernel span, the last step kept"),                                                \
    [F_IDLE] = TPROF_COL("idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "span minus busy"),               \
    [F_COMPUTE] = TPROF_COL("compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "union of compute kernels", \
                            .flags = TPROF_COLF_METRIC),                                                            \
    [F_COMM] = TPROF_COL("comm_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "union of communication kernels"), \
    [F_EXPOSED] = TPROF_COL("exposed_comm_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,                        \
                            "of that, the time no compute kernel ran")

static const tprof_col_desc facts_cols[F_NCOLS] = {
    [F_RANK] = TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_PER_RANK, NULL,
                         "distributedInfo.rank, else rank<N> in the file name; null when neither says"),
    RANK_NUMBER_COLS,
};
static const tprof_col_desc step_time_cols[S_NCOLS] = {
    [S_STEP] = TPROF_COL("step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the ProfilerStep number (-1: none)",
                         .flags = TPROF_COLF_KEY),
    [S_DUR] = TPROF_COL("dur_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "its duration"),
};
static const tprof_col_desc split_cols[P_NCOLS] = {
    [P_STEP] = TPROF_COL("step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the step number (-1: none)"),
    [P_RANK] = TPROF_COL("rank", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL,
                         "a cluster table's rank; -1: the trace's own"),
    [P_COMPUTING] = TPROF_COL("computing_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "Computing"),
    [P_COMM] = TPROF_COL("comm_not_overlapped_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                         "Communication(Not Overlapped)"),
    [P_FREE] = TPROF_COL("free_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "Free"),
    [P_RECORDED] = TPROF_COL("recorded", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, NULL,
                             "the Ascend profiler's (step_trace_time.csv), not made from device events"),
};
static const tprof_table_desc facts_top = { .name = "", .cols = facts_cols, .ncols = F_NCOLS };
static const tprof_table_desc step_times = { .name = "step_times", .doc = "each ProfilerStep, in trace order",
                                             .cols = step_time_cols, .ncols = S_NCOLS };
static const tprof_table_desc step_splits = { .name = "step_splits",
                                              .doc = "the device split of each step (and rank of a cluster table)",
                                              .cols = split_cols, .ncols = P_NCOLS };
static const tprof_table_desc *const facts_tables[] = { &step_times, &step_splits };
const tprof_result_desc tprof_rank_facts_desc = {
    .name = "rank_facts", .version = 2, .top = &facts_top, .tables = facts_tables, .ntables = 2, .internal = 1,
    .doc = "What `ranks`, `advice` and `summary` keep of each rank's trace once it is read: the trace is freed "
           "and the cross-rank analysis runs on these.",
};

int tprof_rank_facts(const tprof_trace *t, tprof_result **out)
{
    *out = NULL;
    tprof_comm_result *c;
    if (tprof_comm(t, &c)) return TPROF_ENOMEM;
    int rc = tprof_rank_facts_from(t, c, NULL, out);
    tprof_comm_free(c);
    return rc;
}

int tprof_rank_facts_from(const tprof_trace *t, const tprof_comm_result *c, const tprof_temporal_result *temporal,
                          tprof_result **out)
{
    *out = NULL;
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    /* the one headline idle, temporal's: the last step's work left out (docs/METRICS.md) */
    tprof_temporal_opts keep = { .skip_hta = 1 };
    tprof_temporal_result tr;
    if (temporal) tr = *temporal;
    else if (tprof_temporal(t, &keep, &tr))
        return TPROF_ENOMEM;
    tprof_result *r = tprof_result_new(&tprof_rank_facts_desc);
    int rc = r ? 0 : TPROF_ENOMEM;
    tprof_rows *top = r ? tprof_result_top(r) : NULL;
    tprof_rows *st = r ? tprof_result_table(r, 0) : NULL;
    int64_t rank = tprof_trace_rank(t);
    if (!rc && rank >= 0) tprof_rows_set_i(top, 0, F_RANK, rank);
    if (!rc) rc = tprof_rows_set_s(top, 0, F_FILE, m->path ? m->path : "");
    int64_t sum = 0;
    for (size_t k = 0; !rc && k < m->nsteps; k++) {
        sum = tprof_sat_add(sum, m->steps[k].dur);
        long i = tprof_rows_add(st);
        if (i < 0) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(st, (size_t)i, S_STEP, m->steps[k].number);
        tprof_rows_set_i(st, (size_t)i, S_DUR, m->steps[k].dur);
    }
    /* a step table (no timeline): its own rows are the steps, their sums the totals */
    size_t nsteps = m->nsteps, nsplits = tprof_trace_nstep_splits(t);
    const tprof_step_split *splits = tprof_trace_step_splits(t);
    int64_t split_sum[TPROF_SPLIT_COLS] = { 0 };
    for (size_t k = 0; !rc && !m->nsteps && k < nsplits; k++) {
        int64_t dur = tprof_split_step_ns(&splits[k]);
        if (splits[k].rank >= 0 || dur < 0) continue; /* a cluster table's ranks are not this trace's */
        long i = tprof_rows_add(st);
        if (i < 0) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(st, (size_t)i, S_STEP, splits[k].step);
        tprof_rows_set_i(st, (size_t)i, S_DUR, dur);
        sum = tprof_sat_add(sum, dur);
        nsteps++;
        for (int k2 = 0; k2 < TPROF_SPLIT_COLS; k2++)
            if (splits[k].ns[k2] != INT64_MIN) split_sum[k2] = tprof_sat_add(split_sum[k2], splits[k].ns[k2]);
    }
    if (nsteps > m->nsteps && tr.span_ns == 0) { /* no device events */
        tr.span_ns = sum;
        tr.idle_ns = split_sum[TPROF_SPLIT_FREE];
        tr.compute_ns = split_sum[TPROF_SPLIT_COMPUTING];
    }
    int64_t comm_ns = nsteps > m->nsteps && c->comm_ns == 0 ? split_sum[TPROF_SPLIT_COMMUNICATION] : c->comm_ns;
    int64_t exposed_ns = nsteps > m->nsteps && c->comm_ns == 0 ? split_sum[TPROF_SPLIT_COMM_NOT_OVERLAPPED] : c->exposed_ns;
    tprof_split_point *pts = NULL;
    size_t npts = 0;
    if (!rc) rc = tprof_split_points(t, &pts, &npts);
    tprof_rows *sp = r ? tprof_result_table(r, 1) : NULL;
    for (size_t k = 0; !rc && k < npts; k++) {
        long i = tprof_rows_add(sp);
        if (i < 0) {
            rc = TPROF_ENOMEM;
            break;
        }
        const int64_t v[P_NCOLS] = { pts[k].step, pts[k].rank, pts[k].ns[0], pts[k].ns[1], pts[k].ns[2], pts[k].recorded };
        for (int col = 0; col < P_NCOLS; col++) tprof_rows_set_i(sp, (size_t)i, (size_t)col, v[col]);
    }
    free(pts);
    if (!rc) {
        tprof_rows_set_i(top, 0, F_STEPS, (int64_t)nsteps);
        tprof_rows_set_i(top, 0, F_STEP_MEAN, nsteps ? sum / (int64_t)nsteps : 0);
        tprof_rows_set_i(top, 0, F_SPAN, tr.span_ns);
        tprof_rows_set_i(top, 0, F_IDLE, tr.idle_ns);
        tprof_rows_set_i(top, 0, F_COMPUTE, tr.compute_ns);
        tprof_rows_set_i(top, 0, F_COMM, comm_ns);
        tprof_rows_set_i(top, 0, F_EXPOSED, exposed_ns);
    }
    if (rc) {
        tprof_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

static int64_t fact(const tprof_result *f, int col) { return tprof_rows_cell(tprof_result_top_c(f), 0, (size_t)col)->v.i; }

/* The duration of step NUMBER in the facts' step times (the first such step), or -1. */
static int64_t step_dur(const tprof_result *f, int64_t number)
{
    const tprof_rows *st = tprof_result_table_c(f, 0);
    for (size_t i = 0, n = tprof_rows_count(st); i < n; i++)
        if (tprof_rows_cell(st, i, S_STEP)->v.i == number) return tprof_rows_cell(st, i, S_DUR)->v.i;
    return -1;
}

/* msprof-analyze's slow-rank check over the (step, rank) splits of every
 * rank's facts: a point's rank is the cluster table's, else its trace's. */
static int split_spread(tprof_ranks_result *r, const tprof_result *const *facts, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += tprof_rows_count(tprof_result_table_c(facts[i], 1));
    tprof_split_point *p = malloc((total ? total : 1) * sizeof *p);
    if (!p) return TPROF_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const tprof_rows *sp = tprof_result_table_c(facts[i], 1);
        for (size_t j = 0, m = tprof_rows_count(sp); j < m; j++) {
            int64_t rank = tprof_rows_cell(sp, j, P_RANK)->v.i;
            p[k++] = (tprof_split_point){ .step = tprof_rows_cell(sp, j, P_STEP)->v.i,
                                          .rank = rank >= 0 ? rank : r->ranks[i].rank,
                                          .ns = { tprof_rows_cell(sp, j, P_COMPUTING)->v.i,
                                                  tprof_rows_cell(sp, j, P_COMM)->v.i,
                                                  tprof_rows_cell(sp, j, P_FREE)->v.i },
                                          .recorded = (int)tprof_rows_cell(sp, j, P_RECORDED)->v.i };
        }
    }
    int rc = tprof_split_spread_of(p, k, r);
    free(p);
    return rc;
}

int tprof_ranks_reduce(const tprof_result *const *facts, size_t n, tprof_ranks_result **out)
{
    *out = NULL;
    tprof_ranks_result *r = calloc(1, sizeof *r);
    int64_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!r || !tmp || !(r->ranks = calloc(n ? n : 1, sizeof *r->ranks))) goto oom;
    r->nranks = n;
    r->straggler = -1;
    r->coll_straggler = -1;
    for (size_t i = 0; i < n; i++) {
        if (tprof_result_desc_of(facts[i]) != &tprof_rank_facts_desc) {
            free(tmp);
            tprof_ranks_free(r);
            return TPROF_EUSAGE;
        }
        tprof_rank_row *row = &r->ranks[i];
        const tprof_cell *rank = tprof_rows_cell(tprof_result_top_c(facts[i]), 0, F_RANK);
        row->rank = rank->null ? (int64_t)i : rank->v.i;
        row->rank_known = !rank->null;
        const tprof_cell *file = tprof_rows_cell(tprof_result_top_c(facts[i]), 0, F_FILE);
        if (!(row->file = strdup(file->null ? "" : file->v.s))) goto oom;
        row->nsteps = (size_t)fact(facts[i], F_STEPS);
        row->step_mean_ns = fact(facts[i], F_STEP_MEAN);
        row->span_ns = fact(facts[i], F_SPAN);
        row->idle_ns = fact(facts[i], F_IDLE);
        row->compute_ns = fact(facts[i], F_COMPUTE);
        row->comm_ns = fact(facts[i], F_COMM);
        row->exposed_comm_ns = fact(facts[i], F_EXPOSED);
    }
    if (n) {
        /* the straggler: the most compute, well above the other ranks' median,
         * while the others wait in collectives longer than it does */
        size_t top = 0;
        for (size_t i = 1; i < n; i++)
            if (r->ranks[i].compute_ns > r->ranks[top].compute_ns) top = i;
        size_t m = 0;
        int64_t others_exposed = 0;
        for (size_t i = 0; i < n; i++)
            if (i != top) {
                tmp[m++] = r->ranks[i].compute_ns;
                others_exposed = tprof_sat_add(others_exposed, r->ranks[i].exposed_comm_ns);
            }
        if (m) {
            qsort(tmp, m, sizeof *tmp, cmp_i64);
            r->compute_median_ns = tmp[(m - 1) / 2];
            r->others_exposed_mean_ns = others_exposed / (int64_t)m;
            double excess = r->compute_median_ns > 0
                                ? (double)r->ranks[top].compute_ns / (double)r->compute_median_ns - 1.0
                                : 0.0;
            if (excess >= TPROF_STRAGGLER_MIN && r->ranks[top].exposed_comm_ns < r->others_exposed_mean_ns) {
                r->straggler = (long)top;
                r->straggler_excess = excess;
            }
        }
        /* skew: the step numbers of the first rank that every rank has */
        const tprof_rows *st0 = tprof_result_table_c(facts[0], 0);
        int64_t total = 0;
        for (size_t k = 0, ns = tprof_rows_count(st0); k < ns; k++) {
            int64_t num = tprof_rows_cell(st0, k, S_STEP)->v.i, lo = INT64_MAX, hi = INT64_MIN;
            size_t have = 0;
            for (size_t i = 0; i < n; i++) {
                int64_t d = step_dur(facts[i], num);
                if (d < 0) break;
                have++;
                if (d < lo) lo = d;
                if (d > hi) hi = d;
            }
            if (have != n || num < 0) continue;
            int64_t skew = hi - lo;
            r->common_steps++;
            total = tprof_sat_add(total, skew);
            if (r->common_steps == 1 || skew > r->skew_max_ns) {
                r->skew_max_ns = skew;
                r->skew_max_step = num;
            }
        }
        r->skew_mean_ns = r->common_steps ? total / (int64_t)r->common_steps : 0;
    }
    free(tmp);
    if (split_spread(r, facts, n)) goto oom_r;
    *out = r;
    return 0;
oom:
    free(tmp);
oom_r:
    tprof_ranks_free(r);
    return TPROF_ENOMEM;
}

int tprof_ranks(const tprof_trace *const *traces, size_t n, tprof_ranks_result **out)
{
    *out = NULL;
    tprof_result **facts = calloc(n ? n : 1, sizeof *facts);
    int rc = facts ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) rc = tprof_rank_facts(traces[i], &facts[i]);
    if (!rc) rc = tprof_ranks_reduce((const tprof_result *const *)facts, n, out);
    for (size_t i = 0; facts && i < n; i++) tprof_result_free(facts[i]);
    free(facts);
    return rc;
}

/* ---- the result tables of `ranks` ---- */

enum { T_MEDIAN, T_OTHERS_EXPOSED, T_STRAGGLER, T_EXCESS, T_COMMON, T_SKEW_MAX, T_SKEW_MEAN, T_SKEW_STEP,
       T_COLL_MATCHED, T_COLL_STRAGGLER, T_COLL_COST, T_COLL_SHARE, T_COLL_CAUSE, T_SPLIT_POINTS, T_SPLIT_RECORDED,
       T_SPLIT_MEAN, T_SLOW_RANK, T_SLOW_STEP, T_NCOLS };
enum { D_DIM, D_MIN, D_MAX, D_MEAN, D_SPREAD, D_FLAGGED, D_MAX_RANK, D_MAX_STEP, D_MIN_RANK, D_MIN_STEP, D_NCOLS };
enum { R_STRAGGLER = F_NCOLS, R_KNOWN, R_NCOLS };

static const tprof_col_desc ranks_top_cols[T_NCOLS] = {
    [T_MEDIAN] = TPROF_COL("compute_median_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                           "the median compute of the ranks other than the busiest (the lower median)"),
    [T_OTHERS_EXPOSED] = TPROF_COL("others_exposed_mean_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                                   "their mean exposed communication"),
    [T_STRAGGLER] = TPROF_COL("straggler", TPROF_COL_RANK, TPROF_COMBINE_FIRST, NULL,
                              "the straggler's rank (docs/METRICS.md), null when none"),
    [T_EXCESS] = TPROF_COL("straggler_excess", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                           "its compute / compute_median_ns - 1 (0 when none)"),
    [T_COMMON] = TPROF_COL("common_steps", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                           "step numbers every rank has"),
    [T_SKEW_MAX] = TPROF_COL("skew_max_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                             "the largest max - min of one step's time across ranks"),
    [T_SKEW_MEAN] = TPROF_COL("skew_mean_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                              "the mean of that over the common steps"),
    [T_SKEW_STEP] = TPROF_COL("skew_max_step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL,
                              "the step of the largest skew, null without common steps"),
    [T_COLL_MATCHED] = TPROF_COL("collectives_matched", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                                 "collectives matched across the ranks (`collectives`)"),
    [T_COLL_STRAGGLER] = TPROF_COL("collectives_straggler", TPROF_COL_RANK, TPROF_COMBINE_FIRST, NULL,
                                   "where collectives are matched, the straggler: the rank whose late arrivals cost "
                                   "the others the most waiting (it replaces `straggler`); null when nobody waited"),
    [T_COLL_COST] = TPROF_COL("collectives_cost_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                              "the others' waits it caused"),
    [T_COLL_SHARE] = TPROF_COL("collectives_last_share", TPROF_COL_RATIO, TPROF_COMBINE_FIRST, NULL,
                               "of the collectives with waits, the share it arrived last in"),
    [T_COLL_CAUSE] = TPROF_COL("collectives_straggler_cause", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                               "what made it late: host, data or compute (`collectives`' straggler_cause); null "
                               "when not known"),
    [T_SPLIT_POINTS] = TPROF_COL("split_points", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                                 "(step, rank) pairs with a device split (computing, communication, free)"),
    [T_SPLIT_RECORDED] = TPROF_COL("split_recorded", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                                   "of those, the Ascend profiler's own (step_trace_time.csv or msprof-analyze's "
                                   "cluster table); the others are made from device events"),
    [T_SPLIT_MEAN] = TPROF_COL("split_mean_total_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                               "their mean computing + communication not overlapped + free"),
    [T_SLOW_RANK] = TPROF_COL("slow_rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, NULL,
                              "msprof-analyze's slow rank: the most computing of any (step, rank) when the "
                              "computing spread is flagged; null when none"),
    [T_SLOW_STEP] = TPROF_COL("slow_rank_step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "its step (-1: none)"),
};
/* msprof-analyze's slow-rank check, a row per dimension */
static const tprof_col_desc spread_cols[D_NCOLS] = {
    [D_DIM] = TPROF_COL("dimension", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL,
                        "computing, communication (not overlapped) or free", .flags = TPROF_COLF_KEY),
    [D_MIN] = TPROF_COL("min_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "the least of any (step, rank)"),
    [D_MAX] = TPROF_COL("max_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "the most"),
    [D_MEAN] = TPROF_COL("mean_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "the mean"),
    [D_SPREAD] = TPROF_COL("spread", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                           "(max - min) / split_mean_total_ns", .flags = TPROF_COLF_METRIC),
    [D_FLAGGED] = TPROF_COL("flagged", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, NULL, "spread over 5%"),
    [D_MAX_RANK] = TPROF_COL("max_rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, NULL,
                             "the first (step, rank) holding the most, in (step, rank) order; null when (max - min) "
                             "/ mean_ns is under 5%"),
    [D_MAX_STEP] = TPROF_COL("max_step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "its step"),
    [D_MIN_RANK] = TPROF_COL("min_rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, NULL, "the same for the least"),
    [D_MIN_STEP] = TPROF_COL("min_step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "its step"),
};
/* a rank's row: its facts, and whether it is the straggler */
static const tprof_col_desc ranks_row_cols[R_NCOLS] = {
    [F_RANK] = TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_PER_RANK, NULL,
                         "distributedInfo.rank, else rank<N> in the file name, else the trace's place in rank order", .flags = TPROF_COLF_KEY),
    RANK_NUMBER_COLS,
    [R_STRAGGLER] = TPROF_COL("straggler", TPROF_COL_BOOL, TPROF_COMBINE_PER_RANK, NULL, "the straggler's row",
                              .flags = TPROF_COLF_NO_JSON),
    [R_KNOWN] = TPROF_COL("rank_known", TPROF_COL_BOOL, TPROF_COMBINE_PER_RANK, NULL,
                          "the trace says its rank (else the table says trace N: its place; text only)",
                          .flags = TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV),
};
static const tprof_table_desc ranks_top = { .name = "", .cols = ranks_top_cols, .ncols = T_NCOLS };
static const tprof_table_desc ranks_rows = { .name = "ranks", .doc = "one row per rank, in the order given",
                                             .cols = ranks_row_cols, .ncols = R_NCOLS };
static const tprof_table_desc spread_rows = { .name = "split_spread",
                                              .doc = "msprof-analyze's slow-rank check over the (step, rank) device "
                                                     "splits, a row per dimension (none without splits)",
                                              .cols = spread_cols, .ncols = D_NCOLS };
static const tprof_table_desc *const ranks_tables[] = { &ranks_rows, &spread_rows };
const tprof_result_desc tprof_ranks_desc = { .name = "ranks", .version = 2, .top = &ranks_top,
                                             .tables = ranks_tables, .ntables = 2, .csv_table = 1, .whole_run = 1,
                                             .json_tables_first = 1 };

int tprof_ranks_tables(const tprof_ranks_result *r, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_ranks_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res), *rows = tprof_result_table(res, 0);
    tprof_rows_set_i(top, 0, T_MEDIAN, r->compute_median_ns);
    tprof_rows_set_i(top, 0, T_OTHERS_EXPOSED, r->others_exposed_mean_ns);
    if (r->straggler >= 0) tprof_rows_set_i(top, 0, T_STRAGGLER, r->ranks[r->straggler].rank);
    tprof_rows_set_d(top, 0, T_EXCESS, r->straggler_excess);
    tprof_rows_set_i(top, 0, T_COMMON, (int64_t)r->common_steps);
    tprof_rows_set_i(top, 0, T_SKEW_MAX, r->skew_max_ns);
    tprof_rows_set_i(top, 0, T_SKEW_MEAN, r->skew_mean_ns);
    if (r->common_steps) tprof_rows_set_i(top, 0, T_SKEW_STEP, r->skew_max_step);
    tprof_rows_set_i(top, 0, T_COLL_MATCHED, (int64_t)r->coll_matched);
    if (r->coll_straggler >= 0) {
        tprof_rows_set_i(top, 0, T_COLL_STRAGGLER, r->coll_straggler);
        tprof_rows_set_i(top, 0, T_COLL_COST, r->coll_cost_ns);
        tprof_rows_set_d(top, 0, T_COLL_SHARE, r->coll_last_share);
        if (r->coll_cause[0] && tprof_rows_set_s(top, 0, T_COLL_CAUSE, r->coll_cause)) {
            tprof_result_free(res);
            return TPROF_ENOMEM;
        }
    }
    tprof_rows_set_i(top, 0, T_SPLIT_POINTS, (int64_t)r->split_points);
    tprof_rows_set_i(top, 0, T_SPLIT_RECORDED, (int64_t)r->split_recorded);
    tprof_rows_set_i(top, 0, T_SPLIT_MEAN, r->split_mean_total_ns);
    if (r->slow_rank >= 0) {
        tprof_rows_set_i(top, 0, T_SLOW_RANK, r->slow_rank);
        tprof_rows_set_i(top, 0, T_SLOW_STEP, r->slow_rank_step);
    }
    static const char *const dims[TPROF_SPLIT_DIMS] = { "computing", "communication", "free" };
    tprof_rows *sp = tprof_result_table(res, 1);
    for (int d = 0; r->split_points && d < TPROF_SPLIT_DIMS; d++) {
        const tprof_split_spread *x = &r->split[d];
        long i = tprof_rows_add(sp);
        if (i < 0 || tprof_rows_set_s(sp, (size_t)i, D_DIM, dims[d])) {
            tprof_result_free(res);
            return TPROF_ENOMEM;
        }
        tprof_rows_set_i(sp, (size_t)i, D_MIN, x->min_ns);
        tprof_rows_set_i(sp, (size_t)i, D_MAX, x->max_ns);
        tprof_rows_set_i(sp, (size_t)i, D_MEAN, x->mean_ns);
        tprof_rows_set_d(sp, (size_t)i, D_SPREAD, x->spread);
        tprof_rows_set_i(sp, (size_t)i, D_FLAGGED, x->flagged);
        if (!x->ranked) continue;
        const int64_t v[] = { x->max_rank, x->max_step, x->min_rank, x->min_step };
        for (int c = 0; c < 4; c++) tprof_rows_set_i(sp, (size_t)i, (size_t)(D_MAX_RANK + c), v[c]);
    }
    for (size_t k = 0; k < r->nranks; k++) {
        const tprof_rank_row *x = &r->ranks[k];
        long i = tprof_rows_add(rows);
        if (i < 0 || tprof_rows_set_s(rows, (size_t)i, F_FILE, x->file)) {
            tprof_result_free(res);
            return TPROF_ENOMEM;
        }
        const int64_t v[] = { [F_RANK] = x->rank, [F_STEPS] = (int64_t)x->nsteps, [F_STEP_MEAN] = x->step_mean_ns,
                              [F_SPAN] = x->span_ns, [F_IDLE] = x->idle_ns, [F_COMPUTE] = x->compute_ns,
                              [F_COMM] = x->comm_ns, [F_EXPOSED] = x->exposed_comm_ns,
                              [R_STRAGGLER] = (long)k == r->straggler, [R_KNOWN] = x->rank_known };
        for (size_t c = 0; c < R_NCOLS; c++)
            if (c != F_FILE) tprof_rows_set_i(rows, (size_t)i, c, v[c]);
    }
    *out = res;
    return 0;
}

/* The collective that says most about the network: among those that end
 * together, with a size (so a busbw), that the ranks reach together, the
 * one with the most transfer time. */
static void net_candidate(tprof_ranks_result *r, const tprof_rows *g)
{
    r->coll_net_count = 0;
    for (size_t i = 0; i < tprof_rows_count(g); i++) {
        const char *type = tprof_rows_str(g, i, "type");
        int64_t count = tprof_rows_int(g, i, "count"), ranks = tprof_rows_int(g, i, "group_size");
        int64_t p50 = tprof_rows_int(g, i, "transfer_p50_ns"), transfer = tprof_rows_int(g, i, "transfer_ns");
        if (!tprof_collective_ends_together(type) || tprof_rows_at(g, i, "busbw")->null || count <= 0 || ranks < 2 ||
            p50 <= 0 || (r->coll_net_count > 0 && transfer <= r->coll_net_transfer_ns))
            continue; /* no busbw to judge, or less transfer time than the one held */
        double wait_share = (double)tprof_rows_int(g, i, "wait_ns") / (double)count / (double)ranks / (double)p50;
        if (wait_share >= TPROF_NET_TOGETHER) continue; /* late ranks, not the network, set its time */
        snprintf(r->coll_net_type, sizeof r->coll_net_type, "%s", type);
        snprintf(r->coll_net_group, sizeof r->coll_net_group, "%s", tprof_rows_str(g, i, "group"));
        snprintf(r->coll_net_dtype, sizeof r->coll_net_dtype, "%s", tprof_rows_str(g, i, "dtype"));
        r->coll_net_bytes = tprof_rows_int(g, i, "bytes");
        r->coll_net_group_size = ranks;
        r->coll_net_count = count;
        r->coll_net_transfer_ns = transfer;
        r->coll_net_busbw = tprof_rows_real(g, i, "busbw");
        r->coll_net_wait_share = wait_share;
    }
}

/* Of the transports in SLOW (hccl_slow_links), the one whose slowest
 * (step, rank) is furthest under the mean. */
static void slow_link_candidate(tprof_ranks_result *r, const tprof_rows *slow)
{
    r->slow_link_n = 0;
    double worst = 2;
    for (size_t i = 0; i < tprof_rows_count(slow); i++) {
        double mean = tprof_rows_real(slow, i, "mean_gbps"), min = tprof_rows_real(slow, i, "min_gbps");
        if (!(mean > 0) || min / mean >= worst) continue;
        worst = min / mean;
        snprintf(r->slow_link_transport, sizeof r->slow_link_transport, "%s", tprof_rows_str(slow, i, "transport"));
        snprintf(r->slow_link_step, sizeof r->slow_link_step, "%s", tprof_rows_str(slow, i, "min_step"));
        r->slow_link_rank = tprof_rows_int(slow, i, "min_rank");
        r->slow_link_n = tprof_rows_int(slow, i, "step_ranks");
        r->slow_link_gbps = min;
        r->slow_link_mean_gbps = mean;
        r->slow_link_max_gbps = tprof_rows_real(slow, i, "max_gbps");
    }
}

void tprof_ranks_add_collectives(tprof_ranks_result *r, const tprof_result *c)
{
    const tprof_rows *top = tprof_result_top_c(c);
    r->coll_matched = (uint64_t)tprof_rows_int(top, 0, "matched");
    r->coll_common_steps = (size_t)(tprof_rows_int(top, 0, "common_steps") > 0 ? tprof_rows_int(top, 0, "common_steps") : 0);
    net_candidate(r, tprof_result_table_c(c, 0));
    slow_link_candidate(r, tprof_result_table_c(c, 5));
    r->coll_straggler = -1;
    if (tprof_rows_at(top, 0, "straggler")->null) return;
    r->coll_straggler = tprof_rows_int(top, 0, "straggler");
    r->coll_cost_ns = tprof_rows_int(top, 0, "straggler_cost_ns");
    r->coll_last_share = tprof_rows_real(top, 0, "straggler_last_share");
    const tprof_cell *cause = tprof_rows_at(top, 0, "straggler_cause");
    snprintf(r->coll_cause, sizeof r->coll_cause, "%s", cause->null ? "" : cause->v.s);
}
