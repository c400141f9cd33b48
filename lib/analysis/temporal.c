/* Temporal breakdown: idle, compute and non-compute time over the kernel span,
 * with Holistic Trace Analysis's definitions (docs/METRICS.md). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "intervals.h"
#include "launch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/result.h"

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

/* The temporal result: one row per trace. The JSON keeps its historical
 * shape: last_step_excluded is the step left out (or null) in JSON and a
 * 0/1 flag in CSV. Shares are of the span, derived for the table only. */
enum { C_EVENTS, C_SPAN, C_BUSY, C_IDLE, C_IDLE_PCT, C_COMPUTE, C_COMPUTE_PCT, C_NON, C_NON_PCT, C_LAST_STEP,
       C_LAST_FLAG, C_NOTE, C_COUNT };
static const tprof_col_desc temporal_cols[C_COUNT] = {
    [C_EVENTS] = TPROF_COL("events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "GPU events",
                           "GPU events in the kernel span"),
    [C_SPAN] = TPROF_COL("span_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, "span", "first GPU start to last GPU end"),
    [C_BUSY] = TPROF_COL("busy_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "union of all GPU work",
                         .flags = TPROF_COLF_NO_TABLE),
    [C_IDLE] = TPROF_COL("idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "idle", "span minus busy",
                         .flags = TPROF_COLF_METRIC),
    [C_IDLE_PCT] = TPROF_COL("idle_share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "idle %", "idle / span",
                             .flags = TPROF_COLF_NO_CSV | TPROF_COLF_NO_JSON, .num = "idle_ns", .den = "span_ns"),
    [C_COMPUTE] = TPROF_COL("compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "compute",
                            "union of compute kernels"),
    [C_COMPUTE_PCT] = TPROF_COL("compute_share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "compute %",
                                "compute / span", .flags = TPROF_COLF_NO_CSV | TPROF_COLF_NO_JSON,
                                .num = "compute_ns", .den = "span_ns"),
    [C_NON] = TPROF_COL("non_compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "non-compute",
                        "communication and memory not under compute"),
    [C_NON_PCT] = TPROF_COL("non_compute_share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "non-compute %",
                            "non-compute / span", .flags = TPROF_COLF_NO_CSV | TPROF_COLF_NO_JSON,
                            .num = "non_compute_ns", .den = "span_ns"),
    [C_LAST_STEP] = TPROF_COL("last_step_excluded", TPROF_COL_INT, TPROF_COMBINE_PER_RANK, NULL,
                              "JSON: the ProfilerStep whose work was left out, or null",
                              .flags = TPROF_COLF_NO_CSV | TPROF_COLF_NO_TABLE),
    [C_LAST_FLAG] = TPROF_COL("last_step_excluded", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                              "CSV: 1 when the last step's work was left out, else 0",
                              .flags = TPROF_COLF_NO_JSON | TPROF_COLF_NO_TABLE),
    [C_NOTE] = TPROF_COL("note", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, "note", "what the table says of the trace",
                         .flags = TPROF_COLF_NO_CSV | TPROF_COLF_NO_JSON),
};
static const tprof_table_desc temporal_top = { .name = "", .cols = temporal_cols, .ncols = C_COUNT };
const tprof_result_desc tprof_temporal_desc = { .name = "temporal", .version = 1, .top = &temporal_top };

int tprof_temporal_tables(const tprof_temporal_result *rp, tprof_result **out)
{
    const tprof_temporal_result r = *rp;
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_temporal_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res);
    tprof_rows_set_i(top, 0, C_EVENTS, (int64_t)r.events);
    tprof_rows_set_i(top, 0, C_SPAN, r.span_ns);
    tprof_rows_set_i(top, 0, C_BUSY, r.busy_ns);
    tprof_rows_set_i(top, 0, C_IDLE, r.idle_ns);
    tprof_rows_set_i(top, 0, C_COMPUTE, r.compute_ns);
    tprof_rows_set_i(top, 0, C_NON, r.non_compute_ns);
    if (r.last_step_excluded) tprof_rows_set_i(top, 0, C_LAST_STEP, r.last_step);
    tprof_rows_set_i(top, 0, C_LAST_FLAG, r.last_step_excluded);
    char note[64] = "";
    if (r.last_step_excluded) snprintf(note, sizeof note, "ProfilerStep#%" PRId64 " left out", r.last_step);
    if (!r.events) snprintf(note, sizeof note, "no GPU events");
    int rc = tprof_rows_set_s(top, 0, C_NOTE, note);
    tprof_result_derive(res);
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
