/* Ranks side by side: per-rank step time, temporal breakdown and exposed
 * communication; the straggler; step-time skew (docs/METRICS.md). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"

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
    free(r->ranks);
    free(r);
}

/* The duration of step NUMBER in M, or -1. */
static int64_t step_dur(const tprof_trace_meta *m, int64_t number)
{
    for (size_t i = 0; i < m->nsteps; i++)
        if (m->steps[i].number == number) return m->steps[i].dur;
    return -1;
}

int tprof_ranks(const tprof_trace *const *traces, size_t n, tprof_ranks_result **out)
{
    *out = NULL;
    tprof_ranks_result *r = calloc(1, sizeof *r);
    int64_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!r || !tmp || !(r->ranks = calloc(n ? n : 1, sizeof *r->ranks))) goto oom;
    r->nranks = n;
    r->straggler = -1;
    tprof_temporal_opts keep = { .keep_last_step = 1 };
    for (size_t i = 0; i < n; i++) {
        const tprof_trace_meta *m = tprof_trace_meta_get(traces[i]);
        tprof_rank_row *row = &r->ranks[i];
        row->rank = m->rank >= 0 ? m->rank : (int64_t)i;
        row->nsteps = m->nsteps;
        int64_t sum = 0;
        for (size_t k = 0; k < m->nsteps; k++) sum = tprof_sat_add(sum, m->steps[k].dur);
        row->step_mean_ns = m->nsteps ? sum / (int64_t)m->nsteps : 0;
        tprof_comm_result *c;
        if (tprof_temporal(traces[i], &keep, &row->temporal) || tprof_comm(traces[i], &c)) goto oom;
        row->comm_ns = c->comm_ns;
        row->exposed_comm_ns = c->exposed_ns;
        tprof_comm_free(c);
        tmp[i] = row->temporal.compute_ns;
    }
    if (n) {
        /* the straggler: the most compute, well above the other ranks' median,
         * while the others wait in collectives longer than it does */
        size_t top = 0;
        for (size_t i = 1; i < n; i++)
            if (r->ranks[i].temporal.compute_ns > r->ranks[top].temporal.compute_ns) top = i;
        size_t m = 0;
        int64_t others_exposed = 0;
        for (size_t i = 0; i < n; i++)
            if (i != top) {
                tmp[m++] = r->ranks[i].temporal.compute_ns;
                others_exposed = tprof_sat_add(others_exposed, r->ranks[i].exposed_comm_ns);
            }
        if (m) {
            qsort(tmp, m, sizeof *tmp, cmp_i64);
            r->compute_median_ns = tmp[(m - 1) / 2];
            r->others_exposed_mean_ns = others_exposed / (int64_t)m;
            double excess = r->compute_median_ns > 0
                                ? (double)r->ranks[top].temporal.compute_ns / (double)r->compute_median_ns - 1.0
                                : 0.0;
            if (excess >= TPROF_STRAGGLER_MIN && r->ranks[top].exposed_comm_ns < r->others_exposed_mean_ns) {
                r->straggler = (long)top;
                r->straggler_excess = excess;
            }
        }
        /* skew: the step numbers of the first rank that every rank has */
        const tprof_trace_meta *m0 = tprof_trace_meta_get(traces[0]);
        int64_t total = 0;
        for (size_t k = 0; k < m0->nsteps; k++) {
            int64_t num = m0->steps[k].number, lo = INT64_MAX, hi = INT64_MIN;
            size_t have = 0;
            for (size_t i = 0; i < n; i++) {
                int64_t d = step_dur(tprof_trace_meta_get(traces[i]), num);
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
    *out = r;
    return 0;
oom:
    free(tmp);
    tprof_ranks_free(r);
    return TPROF_ENOMEM;
}
