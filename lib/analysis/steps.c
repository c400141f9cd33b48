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

/* Overlapping markers: the phase that wins an instant. */
static const tprof_phase priority[] = { TPROF_PHASE_DATA, TPROF_PHASE_OPTIMIZER, TPROF_PHASE_BACKWARD,
                                        TPROF_PHASE_FORWARD };

typedef struct {
    int64_t at;
    int8_t phase, delta; /* +1 a marker starts, -1 it ends */
} edge;

static int cmp_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* A step's timeline as segments [start, next start) with one phase each. */
typedef struct {
    int64_t start;
    uint8_t phase;
} segment;

/* Splits step S (span [t0, t1)) by the markers given as edges; appends the
 * segments to SEG and adds each phase's time to ROW. */
static size_t split_step(edge *e, size_t ne, int64_t t0, int64_t t1, tprof_step_row *row, segment *seg)
{
    size_t sorted = 1;
    while (sorted < ne && e[sorted].at >= e[sorted - 1].at) sorted++;
    if (sorted < ne) qsort(e, ne, sizeof *e, cmp_edge); /* the order within an instant does not matter */
    int active[TPROF_PHASE_COUNT] = { 0 };
    size_t ns = 0, k = 0;
    int64_t at = t0;
    while (at < t1) {
        while (k < ne && e[k].at <= at) {
            active[e[k].phase] += e[k].delta;
            k++;
        }
        int64_t next = k < ne && e[k].at < t1 ? e[k].at : t1;
        uint8_t ph = TPROF_PHASE_OTHER;
        for (size_t p = 0; p < sizeof priority / sizeof *priority; p++)
            if (active[priority[p]] > 0) {
                ph = (uint8_t)priority[p];
                break;
            }
        if (ns == 0 || seg[ns - 1].phase != ph) seg[ns++] = (segment){ at, ph };
        row->phase_cpu_ns[ph] = tprof_sat_add(row->phase_cpu_ns[ph], next - at);
        at = next;
    }
    return ns;
}

/* The phase of the segment holding AT. */
static uint8_t phase_at(const segment *seg, size_t n, int64_t at)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (seg[mid].start <= at) lo = mid + 1;
        else hi = mid;
    }
    return lo ? seg[lo - 1].phase : TPROF_PHASE_OTHER;
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

    /* phases: marker spans clipped to the step they start in */
    const tprof_event *evs = tprof_trace_events(t);
    size_t nall = tprof_trace_nevents(t), nmark = 0;
    for (size_t i = 0; i < nall; i++) nmark += (evs[i].flags & TPROF_EV_MARKER) != 0;
    edge *edges = malloc((2 * nmark + 1) * sizeof *edges);
    size_t *efirst = calloc(n + 1, sizeof *efirst);
    long *mstep = malloc((nmark + 1) * sizeof *mstep);
    segment *seg = malloc((2 * nmark + n + 1) * sizeof *seg);
    size_t *sfirst = calloc(n + 1, sizeof *sfirst);
    if (!edges || !efirst || !mstep || !seg || !sfirst) {
        free(edges);
        free(efirst);
        free(mstep);
        free(seg);
        free(sfirst);
        goto oom_out;
    }
    for (size_t i = 0, j = 0; i < nall; i++)
        if (evs[i].flags & TPROF_EV_MARKER) {
            mstep[j] = tprof_step_at(m->steps, n, evs[i].ts);
            if (mstep[j] >= 0) efirst[mstep[j] + 1] += 2;
            j++;
        }
    for (size_t s = 0; s < n; s++) efirst[s + 1] += efirst[s];
    for (size_t i = 0, j = 0; i < nall; i++)
        if (evs[i].flags & TPROF_EV_MARKER) {
            long s = mstep[j++];
            if (s < 0) continue;
            int64_t end = tprof_end_ns(evs[i].ts, evs[i].dur), t1 = tprof_end_ns(m->steps[s].ts, m->steps[s].dur);
            edges[efirst[s]++] = (edge){ evs[i].ts, (int8_t)evs[i].klass, +1 };
            edges[efirst[s]++] = (edge){ end < t1 ? end : t1, (int8_t)evs[i].klass, -1 };
            r->phases_found = 1;
        }
    size_t nseg = 0;
    for (size_t s = 0, at = 0; s < n; s++) { /* efirst[s] is now the end of step s's edges */
        sfirst[s] = nseg;
        nseg += split_step(edges + at, efirst[s] - at, m->steps[s].ts, tprof_end_ns(m->steps[s].ts, m->steps[s].dur),
                           &r->steps[s], seg + nseg);
        at = efirst[s];
    }
    sfirst[n] = nseg;
    free(edges);
    free(efirst);
    free(mstep);

    /* GPU work by the step it was launched in */
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t);
    const int64_t *launched = tprof_launch_times(t);
    if (!launched) {
        free(seg);
        free(sfirst);
        goto oom_out;
    }
    /* each step's intervals together (a counting sort by step), then their union */
    long *owner = malloc((nev ? nev : 1) * sizeof *owner);
    size_t *first = calloc(n + 1, sizeof *first);
    tprof_interval *iv = malloc((nev ? nev : 1) * sizeof *iv);
    if (!owner || !first || !iv) {
        free(owner);
        free(first);
        free(iv);
        free(seg);
        free(sfirst);
        goto oom_out;
    }
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        owner[i] = -1;
        if (e->kind != TPROF_KIND_GPU || e->klass == TPROF_CLASS_OTHER) continue;
        int64_t at = launched[i];
        long s = tprof_step_at(m->steps, n, at);
        if (s < 0) continue;
        owner[i] = s;
        tprof_step_row *row = &r->steps[s];
        uint8_t ph = phase_at(seg + sfirst[s], sfirst[s + 1] - sfirst[s], at);
        row->phase_gpu_ns[ph] = tprof_sat_add(row->phase_gpu_ns[ph], e->dur);
        int64_t end = tprof_end_ns(e->ts, e->dur);
        row->gpu_events++;
        row->gpu_total_ns = tprof_sat_add(row->gpu_total_ns, e->dur);
        if (end > row->gpu_end_ns) row->gpu_end_ns = end;
        first[s + 1]++;
    }
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
    free(seg);
    free(sfirst);
    for (size_t s = 0; s < n; s++)
        for (int p = 0; p < TPROF_PHASE_COUNT; p++) {
            r->phase_cpu_ns[p] = tprof_sat_add(r->phase_cpu_ns[p], r->steps[s].phase_cpu_ns[p]);
            r->phase_gpu_ns[p] = tprof_sat_add(r->phase_gpu_ns[p], r->steps[s].phase_gpu_ns[p]);
        }
    return 0;
oom_out:
    *out = NULL;
oom:
    tprof_steps_free(r);
    return TPROF_ENOMEM;
}
