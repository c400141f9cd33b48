/* Temporal breakdown: idle, compute and non-compute time over the kernel span,
 * with Holistic Trace Analysis's definitions (docs/METRICS.md). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "intervals.h"
#include "launch.h"

#include <stdlib.h>
#include <string.h>

/* GPU work: kernels, copies, sets; syncs are waits, not work (see METRICS). */
static int is_work(const tprof_event *e) { return e->kind == TPROF_KIND_GPU && e->klass != TPROF_CLASS_OTHER; }

int tprof_temporal(const tprof_trace *t, const tprof_temporal_opts *opts, tprof_temporal_result *r)
{
    memset(r, 0, sizeof *r);
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t);
    /* as HTA does: with two or more steps, the last one's work is left out
     * (the profiler usually stops in the middle of it) */
    int64_t cutoff = INT64_MAX;
    const int64_t *launched = NULL;
    if (m->nsteps >= 2 && !(opts && opts->keep_last_step)) {
        cutoff = m->steps[m->nsteps - 1].ts;
        r->last_step_excluded = 1;
        r->last_step = m->steps[m->nsteps - 1].number;
        if (!(launched = tprof_launch_times(t))) return TPROF_ENOMEM;
    }
    tprof_interval *all = malloc((nev ? nev : 1) * sizeof *all), *comp = malloc((nev ? nev : 1) * sizeof *comp);
    if (!all || !comp) {
        free(all);
        free(comp);
        return TPROF_ENOMEM;
    }
    size_t na = 0, nc = 0;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        if (!is_work(e)) continue;
        if (cutoff != INT64_MAX && launched[i] >= cutoff) continue;
        tprof_interval iv = { e->ts, tprof_end_ns(e->ts, e->dur) };
        all[na++] = iv;
        if (e->klass == TPROF_CLASS_COMPUTE) comp[nc++] = iv;
        if (iv.start < first) first = iv.start;
        if (iv.end > last) last = iv.end;
    }
    r->events = na;
    if (na) {
        r->start_ns = first;
        r->end_ns = last;
        r->span_ns = tprof_span_ns(first, last);
        r->busy_ns = tprof_interval_union(all, na);
        r->compute_ns = tprof_interval_union(comp, nc);
        r->idle_ns = r->span_ns - r->busy_ns;
        r->non_compute_ns = r->busy_ns - r->compute_ns;
    }
    free(all);
    free(comp);
    return 0;
}
