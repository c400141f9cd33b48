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
    /* only with launch records: without any (an Ascend kernel table, a
     * device-only trace) every gap counts as a host wait by HTA's rule, which
     * is no evidence that the host was slow; the shares in doubles, as
     * absurd timestamps make products past int64 */
    r->cpu_bound = r->span_ns > 0 && (double)r->idle_ns * 5 >= (double)r->span_ns &&
                   (double)r->host_wait_ns * 2 >= (double)r->stream_idle_ns && r->stream_idle_ns > 0 &&
                   tprof_trace_meta_get(t)->kind_counts[TPROF_KIND_RUNTIME] > 0;
    return 0;
}

int tprof_launch_overhead(const tprof_trace *t, tprof_launch_result *r)
{
    tprof_steps_result *sr;
    /* the one headline idle, temporal's: the last step's work left out (docs/METRICS.md) */
    tprof_temporal_opts keep = { .skip_hta = 1 };
    tprof_temporal_result tr;
    if (tprof_steps(t, &sr)) return TPROF_ENOMEM;
    int rc = tprof_temporal(t, &keep, &tr);
    if (!rc) rc = tprof_launch_overhead_from(t, sr, &tr, r);
    tprof_steps_free(sr);
    return rc;
}

/* ---- the launch result as typed tables -------------------------------------
 * JSON and CSV keep their historical shape: CSV has two doubles at three
 * decimals and no queue window; JSON ends with the queue window and series.
 * The shares in the text table are derived. */
enum { L_LAUNCHED, L_UNMATCHED, L_MEAN, L_P50, L_P90, L_MAX, L_SHORT, L_SHORT_SHARE, L_PER_STEP, L_QMAX, L_QMEAN,
       L_SPAN, L_IDLE, L_STREAM_IDLE, L_HOST_WAIT, L_CPU_BOUND, L_IDLE_SHARE, L_HOST_SHARE, L_QSTART, L_QEND,
       L_NCOLS };
static const tprof_col_desc launch_cols[L_NCOLS] = {
    [L_LAUNCHED] = TPROF_COL("launched", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "launched",
                             "GPU work with a matching runtime call"),
    [L_UNMATCHED] = TPROF_COL("unmatched", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "GPU work without one",
                              .flags = TPROF_COLF_NO_TABLE),
    [L_MEAN] = TPROF_COL("delay_mean_ns", TPROF_COL_DURATION, TPROF_COMBINE_WMEAN, "delay mean",
                         "runtime call start to GPU start, mean", .flags = TPROF_COLF_METRIC, .weight = "launched"),
    [L_P50] = TPROF_COL("delay_p50_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, "p50", "the same, median"),
    [L_P90] = TPROF_COL("delay_p90_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, "p90", "the same, 90th percentile"),
    [L_MAX] = TPROF_COL("delay_max_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, "max", "the same, longest"),
    [L_SHORT] = TPROF_COL("shorter_than_launch", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "shorter than launch",
                          "kernels that ran shorter than their launch call took"),
    [L_SHORT_SHARE] = TPROF_COL("shorter_than_launch_share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "%",
                                "of launched", .flags = TPROF_COLF_NO_CSV | TPROF_COLF_NO_JSON,
                                .num = "shorter_than_launch", .den = "launched"),
    [L_PER_STEP] = TPROF_COL("kernels_per_step", TPROF_COL_REAL, TPROF_COMBINE_DIST, "per step",
                             "GPU work per ProfilerStep (0 without steps)", .decimals = 1, .csv_decimals = 3),
    [L_QMAX] = TPROF_COL("queue_max", TPROF_COL_COUNT, TPROF_COMBINE_MAX, "queue max",
                         "most launched-but-unfinished work at once"),
    [L_QMEAN] = TPROF_COL("queue_mean", TPROF_COL_REAL, TPROF_COMBINE_DIST, "queue mean",
                          "its time-weighted mean, first launch to last end", .decimals = 1, .csv_decimals = 3),
    [L_SPAN] = TPROF_COL("span_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, NULL, "the GPU's span",
                         .flags = TPROF_COLF_NO_TABLE),
    [L_IDLE] = TPROF_COL("idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "no GPU work in the span",
                         .flags = TPROF_COLF_NO_TABLE),
    [L_STREAM_IDLE] = TPROF_COL("stream_idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                                "idle time of the streams, summed", .flags = TPROF_COLF_NO_TABLE),
    [L_HOST_WAIT] = TPROF_COL("host_wait_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                              "the part of it spent waiting for the host's launches", .flags = TPROF_COLF_NO_TABLE),
    [L_CPU_BOUND] = TPROF_COL("cpu_bound", TPROF_COL_BOOL, TPROF_COMBINE_MAX, "CPU-bound",
                              "idle >= 20% of the span and host waits >= half of the streams' idle time"),
    [L_IDLE_SHARE] = TPROF_COL("idle_share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "idle", "idle / span",
                               .flags = TPROF_COLF_NO_CSV | TPROF_COLF_NO_JSON, .num = "idle_ns", .den = "span_ns",
                               .decimals = 0),
    [L_HOST_SHARE] = TPROF_COL("host_wait_share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "host waits of it",
                               "host_wait / stream_idle", .flags = TPROF_COLF_NO_CSV | TPROF_COLF_NO_JSON,
                               .num = "host_wait_ns", .den = "stream_idle_ns"),
    [L_QSTART] = TPROF_COL("queue_start_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_PER_RANK, NULL,
                           "the queue series' window", .flags = TPROF_COLF_NO_TABLE | TPROF_COLF_NO_CSV),
    [L_QEND] = TPROF_COL("queue_end_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_PER_RANK, NULL, "",
                         .flags = TPROF_COLF_NO_TABLE | TPROF_COLF_NO_CSV),
};
static const tprof_col_desc series_cols[] = {
    { .name = "depth", .kind = TPROF_COL_REAL, .combine = TPROF_COMBINE_DIST,
      .doc = "mean queue depth in one of 32 equal windows" },
};
static const tprof_table_desc series_desc = { .name = "queue_series", .doc = "the queue over time",
                                              .cols = series_cols, .ncols = 1, .json_values = 1 };
static const tprof_table_desc launch_top = { .name = "", .cols = launch_cols, .ncols = L_NCOLS };
static const tprof_table_desc *const launch_tables[] = { &series_desc };
const tprof_result_desc tprof_launch_desc = { .name = "launch", .version = 1, .top = &launch_top,
                                              .tables = launch_tables, .ntables = 1 };

int tprof_launch_tables(const tprof_launch_result *r, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_launch_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res);
    const int64_t ints[][2] = { { L_LAUNCHED, (int64_t)r->launched }, { L_UNMATCHED, (int64_t)r->unmatched },
                                { L_MEAN, r->delay_mean_ns }, { L_P50, r->delay_p50_ns }, { L_P90, r->delay_p90_ns },
                                { L_MAX, r->delay_max_ns }, { L_SHORT, (int64_t)r->shorter_than_launch },
                                { L_QMAX, (int64_t)r->queue_max }, { L_SPAN, r->span_ns }, { L_IDLE, r->idle_ns },
                                { L_STREAM_IDLE, r->stream_idle_ns }, { L_HOST_WAIT, r->host_wait_ns },
                                { L_CPU_BOUND, r->cpu_bound != 0 }, { L_QSTART, r->queue_start_ns },
                                { L_QEND, r->queue_end_ns } };
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) tprof_rows_set_i(top, 0, (size_t)ints[i][0], ints[i][1]);
    tprof_rows_set_d(top, 0, L_PER_STEP, r->kernels_per_step);
    tprof_rows_set_d(top, 0, L_QMEAN, r->queue_mean);
    tprof_rows *series = tprof_result_table(res, 0);
    for (int i = 0; i < TPROF_QUEUE_POINTS; i++) {
        long k = tprof_rows_add(series);
        if (k < 0) {
            tprof_result_free(res);
            return TPROF_ENOMEM;
        }
        tprof_rows_set_d(series, (size_t)k, 0, r->queue_series[i]);
    }
    tprof_result_derive(res);
    *out = res;
    return 0;
}
