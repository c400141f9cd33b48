/* Launch overhead: how long GPU work waits after its launch, kernels shorter
 * than their launch, the launch queue, and whether the run is CPU-bound
 * (docs/METRICS.md). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "intervals.h"
#include "launch.h"
#include "overhead.h"

#include <stdlib.h>
#include <string.h>

int tprof_launch_overhead_from(const tprof_trace *t, const tprof_steps_result *sr, const tprof_temporal_result *tr,
                               tprof_launch_result *r)
{
    memset(r, 0, sizeof *r);
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t);
    const int64_t *calls = tprof_launch_calls(t); /* shared with the other analyses */
    if (!calls) return TPROF_ENOMEM;
    /* launch delays, and the queue as two sorted lists: launches and completions */
    int64_t *delay = malloc((nev ? nev : 1) * sizeof *delay);
    int64_t *up = malloc((nev ? nev : 1) * sizeof *up), *down = malloc((nev ? nev : 1) * sizeof *down);
    if (!delay || !up || !down) {
        free(delay);
        free(up);
        free(down);
        return TPROF_ENOMEM;
    }
    size_t nd = 0;
    int64_t sum = 0;
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        if (e->kind != TPROF_KIND_GPU || e->klass == TPROF_CLASS_OTHER) continue;
        if (calls[i] < 0) {
            r->unmatched++;
            continue;
        }
        const tprof_event *call = &ev[calls[i]];
        int64_t d = tprof_span_ns(call->ts, e->ts);
        delay[nd++] = d;
        sum = tprof_sat_add(sum, d);
        if (e->dur < call->dur) r->shorter_than_launch++;
        up[nd - 1] = call->ts;
        down[nd - 1] = tprof_end_ns(e->ts, e->dur);
    }
    r->launched = nd;
    if (nd) {
        tprof_sort_i64(delay, nd);
        r->delay_mean_ns = sum / (int64_t)nd;
        r->delay_p50_ns = delay[(nd - 1) / 2];
        r->delay_p90_ns = delay[(nd * 9 + 9) / 10 - 1]; /* nearest rank: ceil(0.9 n) */
        r->delay_max_ns = delay[nd - 1];
        tprof_sort_i64(up, nd);
        tprof_sort_i64(down, nd);
        /* walk both lists in time order; at the same instant completions go first */
        int64_t t0 = up[0] < down[0] ? up[0] : down[0];
        int64_t t1 = up[nd - 1] > down[nd - 1] ? up[nd - 1] : down[nd - 1];
        int64_t window = tprof_span_ns(t0, t1);
        r->queue_start_ns = t0;
        r->queue_end_ns = t1;
        double width = (double)window / TPROF_QUEUE_POINTS;
        long depth = 0;
        double area = 0;
        int64_t prev = t0;
        for (size_t i = 0, j = 0; i < nd || j < nd;) {
            int down_first = j < nd && (i == nd || down[j] <= up[i]);
            int64_t at = down_first ? down[j] : up[i];
            if (depth > 0 && at > prev) {
                /* spread [prev, at) over the windows it covers */
                double x = (double)tprof_span_ns(t0, prev), y = (double)tprof_span_ns(t0, at);
                area += (double)depth * (y - x);
                while (width > 0 && x < y) {
                    int w = (int)(x / width);
                    if (w >= TPROF_QUEUE_POINTS) w = TPROF_QUEUE_POINTS - 1;
                    double wend = w == TPROF_QUEUE_POINTS - 1 ? y : (w + 1) * width;
                    double e2 = y < wend ? y : wend;
                    r->queue_series[w] += (double)depth * (e2 - x);
                    x = e2;
                }
            }
            prev = at;
            if (down_first) {
                depth--;
                j++;
            } else {
                depth++;
                i++;
                if ((uint64_t)depth > r->queue_max) r->queue_max = (uint64_t)depth;
            }
        }
        r->queue_mean = window > 0 ? area / (double)window : 0.0;
        for (int w = 0; w < TPROF_QUEUE_POINTS; w++) r->queue_series[w] = width > 0 ? r->queue_series[w] / width : 0.0;
    }
    free(delay);
    free(up);
    free(down);
    /* GPU work launched inside the steps, per step */
    uint64_t in_steps = 0;
    for (size_t i = 0; i < sr->nsteps; i++) in_steps += sr->steps[i].gpu_events;
    r->kernels_per_step = sr->nsteps ? (double)in_steps / (double)sr->nsteps : 0.0;

    /* CPU-bound: from the temporal breakdown and the idle causes */
    tprof_idle_result *ir;
    if (tprof_idle(t, NULL, &ir)) return TPROF_ENOMEM;
    r->span_ns = tr->span_ns;
    r->idle_ns = tr->idle_ns;
    for (size_t i = 0; i < ir->nstreams; i++) {
        r->stream_idle_ns = tprof_sat_add(r->stream_idle_ns, ir->streams[i].idle_ns);
        r->host_wait_ns = tprof_sat_add(r->host_wait_ns, ir->streams[i].cause[TPROF_IDLE_HOST].total_ns);
    }
    tprof_idle_free(ir);
    r->cpu_bound = r->span_ns > 0 && r->idle_ns * 5 >= r->span_ns && r->host_wait_ns * 2 >= r->stream_idle_ns &&
                   r->stream_idle_ns > 0;
    return 0;
}

int tprof_launch_overhead(const tprof_trace *t, tprof_launch_result *r)
{
    tprof_steps_result *sr;
    tprof_temporal_opts keep = { .keep_last_step = 1 };
    tprof_temporal_result tr;
    if (tprof_steps(t, &sr)) return TPROF_ENOMEM;
    int rc = tprof_temporal(t, &keep, &tr);
    if (!rc) rc = tprof_launch_overhead_from(t, sr, &tr, r);
    tprof_steps_free(sr);
    return rc;
}
