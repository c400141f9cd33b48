/* Steps: each ProfilerStep's CPU span, the GPU work launched in it, and
 * step-time statistics (docs/METRICS.md). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "intervals.h"
#include "launch.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

void tprof_steps_free(tprof_steps_result *r)
{
    if (!r) return;
    free(r->steps);
    free(r);
}

int tprof_steps(const tprof_trace *t, tprof_steps_result **out)
{
    *out = NULL;
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    tprof_steps_result *r = calloc(1, sizeof *r);
    if (!r) return TPROF_ENOMEM;
    size_t n = m->nsteps;
    r->nsteps = n;
    r->steps = calloc(n ? n : 1, sizeof *r->steps);
    if (!r->steps) goto oom;
    for (size_t i = 0; i < n; i++)
        r->steps[i] = (tprof_step_row){ .number = m->steps[i].number, .ts = m->steps[i].ts, .dur = m->steps[i].dur };
    *out = r;
    if (n == 0) return 0;

    /* step time statistics */
    int64_t *d = malloc(n * sizeof *d), sum = 0;
    if (!d) goto oom_out;
    for (size_t i = 0; i < n; i++) {
        d[i] = m->steps[i].dur;
        sum = tprof_sat_add(sum, d[i]);
    }
    qsort(d, n, sizeof *d, cmp_i64);
    r->min_ns = d[0];
    r->max_ns = d[n - 1];
    r->p50_ns = d[(n - 1) / 2];
    r->mean_ns = sum / (int64_t)n;
    r->spread = r->mean_ns > 0 ? (double)(r->max_ns - r->min_ns) / (double)r->mean_ns : 0.0;
    free(d);

    /* GPU work by the step it was launched in */
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t);
    tprof_launches launch;
    if (tprof_launches_build(t, &launch)) goto oom_out;
    /* each step's intervals together (a counting sort by step), then their union */
    long *owner = malloc((nev ? nev : 1) * sizeof *owner);
    size_t *first = calloc(n + 1, sizeof *first);
    tprof_interval *iv = malloc((nev ? nev : 1) * sizeof *iv);
    if (!owner || !first || !iv) {
        free(owner);
        free(first);
        free(iv);
        tprof_launches_free(&launch);
        goto oom_out;
    }
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        owner[i] = -1;
        if (e->kind != TPROF_KIND_GPU || e->klass == TPROF_CLASS_OTHER) continue;
        long s = tprof_step_at(m->steps, n, tprof_launch_time(&launch, e));
        if (s < 0) continue;
        owner[i] = s;
        tprof_step_row *row = &r->steps[s];
        int64_t end = tprof_end_ns(e->ts, e->dur);
        row->gpu_events++;
        row->gpu_total_ns = tprof_sat_add(row->gpu_total_ns, e->dur);
        if (end > row->gpu_end_ns) row->gpu_end_ns = end;
        first[s + 1]++;
    }
    tprof_launches_free(&launch);
    for (size_t s = 0; s < n; s++) first[s + 1] += first[s];
    for (size_t i = 0; i < nev; i++)
        if (owner[i] >= 0) iv[first[owner[i]]++] = (tprof_interval){ ev[i].ts, tprof_end_ns(ev[i].ts, ev[i].dur) };
    for (size_t s = 0, at = 0; s < n; s++) { /* first[s] is now the end of step s */
        r->steps[s].gpu_busy_ns = tprof_interval_union(iv + at, first[s] - at);
        at = first[s];
    }
    free(owner);
    free(first);
    free(iv);
    return 0;
oom_out:
    *out = NULL;
oom:
    tprof_steps_free(r);
    return TPROF_ENOMEM;
}
