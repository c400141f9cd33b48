/* msprof-analyze's slow-rank check, over the device split of every (step,
 * rank): for each of computing, communication not overlapped and free
 * time, the spread (max - min) against the mean step (computing +
 * communication + free), flagged past 5%, and the (step, rank) holding the
 * most and the least (docs/METRICS.md, "trainprof ranks"). The split is
 * the Ascend profiler's own where a rank has its step_trace_time.csv (or
 * msprof-analyze's cluster table), else made from the device events. */
#include "step_time.h"

#include "trainprof/error.h"

#include <stdlib.h>
#include <string.h>

static const tprof_split_col dim_cols[TPROF_SPLIT_DIMS] = {
    [TPROF_SPLIT_DIM_COMPUTING] = TPROF_SPLIT_COMPUTING,
    [TPROF_SPLIT_DIM_COMMUNICATION] = TPROF_SPLIT_COMM_NOT_OVERLAPPED,
    [TPROF_SPLIT_DIM_FREE] = TPROF_SPLIT_FREE,
};

int64_t tprof_split_step_ns(const tprof_step_split *s)
{
    const int64_t *v = s->ns, prep = v[TPROF_SPLIT_PREPARING] != INT64_MIN ? v[TPROF_SPLIT_PREPARING] : 0;
    if (v[TPROF_SPLIT_STAGE] != INT64_MIN && v[TPROF_SPLIT_BUBBLE] != INT64_MIN)
        return tprof_sat_add(tprof_sat_add(v[TPROF_SPLIT_STAGE], v[TPROF_SPLIT_BUBBLE]), prep);
    if (v[TPROF_SPLIT_COMPUTING] == INT64_MIN || v[TPROF_SPLIT_COMM_NOT_OVERLAPPED] == INT64_MIN ||
        v[TPROF_SPLIT_FREE] == INT64_MIN)
        return -1;
    return tprof_sat_add(tprof_sat_add(tprof_sat_add(v[TPROF_SPLIT_COMPUTING], v[TPROF_SPLIT_COMM_NOT_OVERLAPPED]),
                                       v[TPROF_SPLIT_FREE]),
                         prep);
}

int tprof_split_points(const tprof_trace *t, tprof_split_point **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t ns = tprof_trace_nstep_splits(t);
    const tprof_step_split *s = tprof_trace_step_splits(t);
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    size_t cap = ns ? ns : m->nsteps;
    tprof_split_point *p = malloc((cap ? cap : 1) * sizeof *p);
    if (!p) return TPROF_ENOMEM;
    if (ns) {
        for (size_t i = 0; i < ns; i++) {
            tprof_split_point q = { .step = s[i].step, .rank = s[i].rank, .recorded = 1 };
            int whole = 1;
            for (int d = 0; d < TPROF_SPLIT_DIMS; d++) whole &= (q.ns[d] = s[i].ns[dim_cols[d]]) != INT64_MIN;
            if (whole) p[(*n)++] = q; /* msprof-analyze reads the three columns as numbers */
        }
    } else if (m->nsteps) {
        tprof_step_row *rows = calloc(m->nsteps, sizeof *rows);
        if (!rows) {
            free(p);
            return TPROF_ENOMEM;
        }
        for (size_t i = 0; i < m->nsteps; i++) rows[i].ts = m->steps[i].ts, rows[i].dur = m->steps[i].dur;
        if (tprof_step_device_split(t, rows, m->nsteps)) {
            free(rows);
            free(p);
            return TPROF_ENOMEM;
        }
        for (size_t i = 0; i < m->nsteps; i++)
            p[(*n)++] = (tprof_split_point){ .step = m->steps[i].number, .rank = -1,
                                             .ns = { rows[i].computing_ns, rows[i].comm_not_overlapped_ns,
                                                     rows[i].free_ns } };
        free(rows);
    }
    *out = p;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A mean of ns values as ns, clamped (a file's times may add up past int64). */
static int64_t ns_of(double v) { return v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v; }

static int cmp_point(const void *a, const void *b)
{
    const tprof_split_point *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

int tprof_split_spread_of(tprof_split_point *p, size_t n, tprof_ranks_result *r)
{
    r->slow_rank = r->slow_rank_step = -1;
    r->split_points = r->split_recorded = r->split_ranks = 0;
    r->split_mean_total_ns = 0;
    memset(r->split, 0, sizeof r->split);
    /* (step, rank) order, the later of two points of one pair kept (msprof keys a dict by "step_rank") */
    for (size_t i = 0; i < n; i++) p[i].order = i;
    qsort(p, n, sizeof *p, cmp_point);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && p[k - 1].step == p[i].step && p[k - 1].rank == p[i].rank) k--;
        p[k++] = p[i];
    }
    n = k;
    if (!n) return 0;
    double total = 0;
    int64_t *seen = malloc(n * sizeof *seen); /* the distinct ranks */
    if (!seen) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) seen[i] = p[i].rank;
    qsort(seen, n, sizeof *seen, cmp_i64);
    for (size_t i = 0; i < n; i++) r->split_ranks += !i || seen[i] != seen[i - 1];
    free(seen);
    for (size_t i = 0; i < n; i++) {
        r->split_recorded += (size_t)p[i].recorded;
        for (int d = 0; d < TPROF_SPLIT_DIMS; d++) total += (double)p[i].ns[d];
    }
    r->split_points = n;
    double mean_total = total / (double)n;
    r->split_mean_total_ns = ns_of(mean_total);
    for (int d = 0; d < TPROF_SPLIT_DIMS; d++) {
        tprof_split_spread *s = &r->split[d];
        size_t hi = 0, lo = 0;
        double sum = 0;
        for (size_t i = 0; i < n; i++) {
            if (p[i].ns[d] > p[hi].ns[d]) hi = i; /* the first holding it, in (step, rank) order */
            if (p[i].ns[d] < p[lo].ns[d]) lo = i;
            sum += (double)p[i].ns[d];
        }
        double gap = (double)p[hi].ns[d] - (double)p[lo].ns[d], mean = sum / (double)n;
        s->min_ns = p[lo].ns[d];
        s->max_ns = p[hi].ns[d];
        s->mean_ns = ns_of(mean);
        s->spread = mean_total != 0 ? gap / mean_total : 0;
        s->flagged = s->spread > TPROF_SLOW_RANK_MIN;
        s->ranked = !((mean != 0 ? gap / mean : 0) < TPROF_SLOW_RANK_MIN);
        s->max_rank = p[hi].rank, s->max_step = p[hi].step;
        s->min_rank = p[lo].rank, s->min_step = p[lo].step;
    }
    const tprof_split_spread *c = &r->split[TPROF_SPLIT_DIM_COMPUTING];
    if (c->flagged && c->ranked) r->slow_rank = c->max_rank, r->slow_rank_step = c->max_step;
    return 0;
}
