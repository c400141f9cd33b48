/* Launch overhead: how long GPU work waits after its launch, kernels shorter
 * than their launch, the launch queue, and whether the run is CPU-bound
 * (docs/METRICS.md). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "../util/i64map.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t at;
    int delta; /* +1 launch, -1 completion */
} qevent;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_q(const void *a, const void *b)
{
    const qevent *x = a, *y = b;
    if (x->at != y->at) return x->at < y->at ? -1 : 1;
    return x->delta - y->delta; /* completions first at the same moment */
}

int tprof_launch_overhead(const tprof_trace *t, tprof_launch_result *r)
{
    memset(r, 0, sizeof *r);
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t);
    tprof_i64map calls; /* correlation -> index of the runtime call */
    if (tprof_i64map_init(&calls, 1024)) return TPROF_ENOMEM;
    for (size_t i = 0; i < nev; i++)
        if (ev[i].kind == TPROF_KIND_RUNTIME && ev[i].correlation >= 0 &&
            tprof_i64map_put(&calls, ev[i].correlation, (int64_t)i)) {
            tprof_i64map_free(&calls);
            return TPROF_ENOMEM;
        }
    int64_t *delay = malloc((nev ? nev : 1) * sizeof *delay);
    qevent *q = malloc((2 * nev + 1) * sizeof *q);
    if (!delay || !q) {
        free(delay);
        free(q);
        tprof_i64map_free(&calls);
        return TPROF_ENOMEM;
    }
    size_t nd = 0, nq = 0;
    int64_t sum = 0;
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        if (e->kind != TPROF_KIND_GPU || e->klass == TPROF_CLASS_OTHER) continue;
        int64_t ci;
        if (e->correlation < 0 || !tprof_i64map_get(&calls, e->correlation, &ci)) {
            r->unmatched++;
            continue;
        }
        const tprof_event *call = &ev[ci];
        int64_t d = tprof_span_ns(call->ts, e->ts);
        delay[nd++] = d;
        sum = tprof_sat_add(sum, d);
        if (e->dur < call->dur) r->shorter_than_launch++;
        q[nq++] = (qevent){ call->ts, +1 };
        q[nq++] = (qevent){ tprof_end_ns(e->ts, e->dur), -1 };
    }
    tprof_i64map_free(&calls);
    r->launched = nd;
    if (nd) {
        qsort(delay, nd, sizeof *delay, cmp_i64);
        r->delay_mean_ns = sum / (int64_t)nd;
        r->delay_p50_ns = delay[(nd - 1) / 2];
        r->delay_p90_ns = delay[(nd * 9 + 9) / 10 - 1]; /* nearest rank: ceil(0.9 n) */
        r->delay_max_ns = delay[nd - 1];
        qsort(q, nq, sizeof *q, cmp_q);
        int64_t t0 = q[0].at, window = tprof_span_ns(t0, q[nq - 1].at);
        r->queue_start_ns = t0;
        r->queue_end_ns = q[nq - 1].at;
        double width = (double)window / TPROF_QUEUE_POINTS;
        long depth = 0;
        double area = 0;
        for (size_t i = 0; i < nq; i++) {
            if (i > 0 && depth > 0) {
                /* spread [q[i-1].at, q[i].at) over the windows it covers */
                double a = (double)tprof_span_ns(t0, q[i - 1].at), b = (double)tprof_span_ns(t0, q[i].at);
                area += (double)depth * (b - a);
                while (width > 0 && a < b) {
                    int w = (int)(a / width);
                    if (w >= TPROF_QUEUE_POINTS) w = TPROF_QUEUE_POINTS - 1;
                    double wend = w == TPROF_QUEUE_POINTS - 1 ? b : (w + 1) * width;
                    double e = b < wend ? b : wend;
                    r->queue_series[w] += (double)depth * (e - a);
                    a = e;
                }
            }
            depth += q[i].delta;
            if (depth > 0 && (uint64_t)depth > r->queue_max) r->queue_max = (uint64_t)depth;
        }
        r->queue_mean = window > 0 ? area / (double)window : 0.0;
        for (int w = 0; w < TPROF_QUEUE_POINTS; w++) r->queue_series[w] = width > 0 ? r->queue_series[w] / width : 0.0;
    }
    free(delay);
    free(q);
    /* GPU work launched inside the steps, per step */
    tprof_steps_result *sr;
    if (tprof_steps(t, &sr)) return TPROF_ENOMEM;
    uint64_t in_steps = 0;
    for (size_t i = 0; i < sr->nsteps; i++) in_steps += sr->steps[i].gpu_events;
    r->kernels_per_step = sr->nsteps ? (double)in_steps / (double)sr->nsteps : 0.0;
    tprof_steps_free(sr);

    /* CPU-bound: from the temporal breakdown and the idle causes */
    tprof_temporal_opts keep = { .keep_last_step = 1 };
    tprof_temporal_result tr;
    tprof_idle_result *ir;
    if (tprof_temporal(t, &keep, &tr) || tprof_idle(t, NULL, &ir)) return TPROF_ENOMEM;
    r->span_ns = tr.span_ns;
    r->idle_ns = tr.idle_ns;
    for (size_t i = 0; i < ir->nstreams; i++) {
        r->stream_idle_ns = tprof_sat_add(r->stream_idle_ns, ir->streams[i].idle_ns);
        r->host_wait_ns = tprof_sat_add(r->host_wait_ns, ir->streams[i].cause[TPROF_IDLE_HOST].total_ns);
    }
    tprof_idle_free(ir);
    r->cpu_bound = r->span_ns > 0 && r->idle_ns * 5 >= r->span_ns && r->host_wait_ns * 2 >= r->stream_idle_ns &&
                   r->stream_idle_ns > 0;
    return 0;
}
