/* Temporal breakdown: idle, compute and non-compute time over the kernel span,
 * after Holistic Trace Analysis's (docs/METRICS.md), and HTA's own figures
 * beside them (hta.c). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "intervals.h"
#include "launch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/report.h"
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
    return opts && opts->skip_hta ? 0 : tprof_hta_figures_of(t, &r->hta);
}

/* The temporal result: one row per trace. The JSON keeps its historical
 * shape: last_step_excluded is the step left out (or null) in JSON and a
 * 0/1 flag in CSV. HTA's figures follow as hta_* (null where HTA gives
 * none). The text table shows the headline definition (trainprof's, or
 * HTA's with --definition hta) through its own columns, shares of the span,
 * and a note that gives the other definition where it differs. */
enum { C_EVENTS, C_SPAN, C_BUSY, C_IDLE, C_COMPUTE, C_NON, C_LAST_STEP, C_LAST_FLAG, C_HTA_SPAN, C_HTA_IDLE,
       C_HTA_COMPUTE, C_HTA_NON, C_HTA_OVERLAP, C_HTA_EVENTS, C_HTA_FILTER, C_HTA_ROUNDED, C_HTA_UNLAUNCHED,
       C_HTA_UNLAUNCHED_NS, C_HTA_WHY, C_T_EVENTS, C_T_SPAN, C_T_IDLE, C_T_IDLE_PCT, C_T_COMPUTE, C_T_COMPUTE_PCT,
       C_T_NON, C_T_NON_PCT, C_NOTE, C_COUNT };
#define JSON_CSV_ONLY (TPROF_COLF_NO_TABLE)
#define TABLE_ONLY (TPROF_COLF_NO_CSV | TPROF_COLF_NO_JSON)
static const tprof_col_desc temporal_cols[C_COUNT] = {
    [C_EVENTS] = TPROF_COL("events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "GPU events", "GPU events in the kernel span",
                           .flags = JSON_CSV_ONLY),
    [C_SPAN] = TPROF_COL("span_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, "span", "first GPU start to last GPU end",
                         .flags = JSON_CSV_ONLY),
    [C_BUSY] = TPROF_COL("busy_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "union of all GPU work",
                         .flags = JSON_CSV_ONLY),
    [C_IDLE] = TPROF_COL("idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "idle", "span minus busy",
                         .flags = JSON_CSV_ONLY | TPROF_COLF_METRIC),
    [C_COMPUTE] = TPROF_COL("compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "compute", "union of compute kernels",
                            .flags = JSON_CSV_ONLY),
    [C_NON] = TPROF_COL("non_compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "non-compute",
                        "communication and memory not under compute", .flags = JSON_CSV_ONLY),
    [C_LAST_STEP] = TPROF_COL("last_step_excluded", TPROF_COL_INT, TPROF_COMBINE_PER_RANK, NULL,
                              "JSON: the ProfilerStep whose work was left out, or null",
                              .flags = TPROF_COLF_NO_CSV | TPROF_COLF_NO_TABLE),
    [C_LAST_FLAG] = TPROF_COL("last_step_excluded", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                              "CSV: 1 when the last step's work was left out, else 0",
                              .flags = TPROF_COLF_NO_JSON | TPROF_COLF_NO_TABLE),
    [C_HTA_SPAN] = TPROF_COL("hta_span_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, NULL,
                             "HTA's kernel span (its kernel_time), null when HTA gives none", .flags = JSON_CSV_ONLY),
    [C_HTA_IDLE] = TPROF_COL("hta_idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "HTA's idle time",
                             .flags = JSON_CSV_ONLY),
    [C_HTA_COMPUTE] = TPROF_COL("hta_compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "HTA's compute time",
                                .flags = JSON_CSV_ONLY),
    [C_HTA_NON] = TPROF_COL("hta_non_compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                            "HTA's non-compute time", .flags = JSON_CSV_ONLY),
    [C_HTA_OVERLAP] = TPROF_COL("hta_comm_overlap", TPROF_COL_RATIO, TPROF_COMBINE_PER_RANK, NULL,
                                "HTA's comp/comm overlap: communication time under compute / communication time; "
                                "null without communication",
                                .flags = JSON_CSV_ONLY),
    [C_HTA_EVENTS] = TPROF_COL("hta_events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "events HTA counts as GPU work",
                               .flags = JSON_CSV_ONLY),
    [C_HTA_FILTER] = TPROF_COL("hta_step_filter", TPROF_COL_BOOL, TPROF_COMBINE_PER_RANK, NULL,
                               "HTA's last-step filter ran (two or more ProfilerStep names)", .flags = JSON_CSV_ONLY),
    [C_HTA_ROUNDED] = TPROF_COL("hta_rounded", TPROF_COL_BOOL, TPROF_COMBINE_PER_RANK, NULL,
                                "HTA rounded times to whole microseconds (a fractional or missing ts)",
                                .flags = JSON_CSV_ONLY),
    [C_HTA_UNLAUNCHED] = TPROF_COL("hta_dropped_unlaunched", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                                   "GPU events HTA's filter leaves out because no CPU event carries their correlation",
                                   .flags = JSON_CSV_ONLY),
    [C_HTA_UNLAUNCHED_NS] = TPROF_COL("hta_dropped_unlaunched_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                                      "their summed durations", .flags = JSON_CSV_ONLY),
    [C_HTA_WHY] = TPROF_COL("hta_not_computed", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL,
                            "why HTA gives no figures for the trace, or null", .flags = JSON_CSV_ONLY),
    [C_T_EVENTS] = TPROF_COL("shown_events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "GPU events",
                             "table: GPU events of the headline definition", .flags = TABLE_ONLY),
    [C_T_SPAN] = TPROF_COL("shown_span", TPROF_COL_DURATION, TPROF_COMBINE_MAX, "span", "table: headline span",
                           .flags = TABLE_ONLY),
    [C_T_IDLE] = TPROF_COL("shown_idle", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "idle", "table: headline idle",
                           .flags = TABLE_ONLY),
    [C_T_IDLE_PCT] = TPROF_COL("idle_share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "idle %", "idle / span",
                               .flags = TABLE_ONLY, .num = "shown_idle", .den = "shown_span"),
    [C_T_COMPUTE] = TPROF_COL("shown_compute", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "compute",
                              "table: headline compute", .flags = TABLE_ONLY),
    [C_T_COMPUTE_PCT] = TPROF_COL("compute_share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "compute %",
                                  "compute / span", .flags = TABLE_ONLY, .num = "shown_compute", .den = "shown_span"),
    [C_T_NON] = TPROF_COL("shown_non_compute", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "non-compute",
                          "table: headline non-compute", .flags = TABLE_ONLY),
    [C_T_NON_PCT] = TPROF_COL("non_compute_share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "non-compute %",
                              "non-compute / span", .flags = TABLE_ONLY, .num = "shown_non_compute",
                              .den = "shown_span"),
    [C_NOTE] = TPROF_COL("note", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, "note", "what the table says of the trace",
                         .flags = TABLE_ONLY),
};
static const tprof_table_desc temporal_top = { .name = "", .cols = temporal_cols, .ncols = C_COUNT };
const tprof_result_desc tprof_temporal_desc = { .name = "temporal", .version = 2, .top = &temporal_top };

static double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0; }

int tprof_hta_differs(const tprof_temporal_result *r)
{
    const tprof_hta_figures *h = &r->hta;
    if (!h->computed) return 0;
    double d[3] = { pct(r->idle_ns, r->span_ns) - pct(h->idle_ns, h->span_ns),
                    pct(r->compute_ns, r->span_ns) - pct(h->compute_ns, h->span_ns),
                    pct(r->non_compute_ns, r->span_ns) - pct(h->non_compute_ns, h->span_ns) };
    for (int i = 0; i < 3; i++)
        if (d[i] > 0.5 || d[i] < -0.5) return 1;
    return 0;
}

size_t tprof_hta_reasons(const tprof_temporal_result *r, char *buf, size_t cap)
{
    const tprof_hta_figures *h = &r->hta;
    size_t n = 0;
    buf[0] = 0;
#define ADD(...)                                                                                                    \
    do {                                                                                                           \
        if (n < cap) n += (size_t)snprintf(buf + n, cap - n, "%s", n ? "; " : "");                              \
        if (n < cap) n += (size_t)snprintf(buf + n, cap - n, __VA_ARGS__);                                       \
    } while (0)
#define PLURAL(n) ((n) == 1 ? "" : "s")
    char d[32];
    if (h->dropped_unlaunched) {
        tprof_fmt_duration(d, sizeof d, h->dropped_unlaunched_ns);
        ADD("HTA leaves out %" PRIu64 " GPU event%s (%s) whose launch is not in the trace", h->dropped_unlaunched,
            PLURAL(h->dropped_unlaunched), d);
    }
    if (h->sync_busy) ADD("HTA counts %" PRIu64 " sync wait%s as busy", h->sync_busy, PLURAL(h->sync_busy));
    if (h->host_events)
        ADD("HTA counts %" PRIu64 " event%s with a stream arg that trainprof does not read as GPU work",
            h->host_events, PLURAL(h->host_events));
    if (h->typed_apart)
        ADD("HTA types %" PRIu64 " kernel%s otherwise, by name alone", h->typed_apart, PLURAL(h->typed_apart));
    if (h->rounded) ADD("HTA rounds times to whole us");
    if (h->dropped_last_step && !r->last_step_excluded)
        ADD("HTA leaves out the %" PRIu64 " GPU event%s launched in the last step", h->dropped_last_step,
            PLURAL(h->dropped_last_step));
    if (!n) ADD("HTA cuts the last step at its own mark (any event named ProfilerStep#N, GPU-side too)");
#undef ADD
#undef PLURAL
    return n < cap ? n : cap - 1;
}

int tprof_temporal_tables(const tprof_temporal_result *rp, tprof_definition def, tprof_result **out)
{
    const tprof_temporal_result r = *rp;
    const tprof_hta_figures *h = &r.hta;
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
    int rc = 0;
    if (h->computed) {
        tprof_rows_set_i(top, 0, C_HTA_SPAN, h->span_ns);
        tprof_rows_set_i(top, 0, C_HTA_IDLE, h->idle_ns);
        tprof_rows_set_i(top, 0, C_HTA_COMPUTE, h->compute_ns);
        tprof_rows_set_i(top, 0, C_HTA_NON, h->non_compute_ns);
        if (h->comm_overlap == h->comm_overlap) tprof_rows_set_d(top, 0, C_HTA_OVERLAP, h->comm_overlap);
        tprof_rows_set_i(top, 0, C_HTA_EVENTS, (int64_t)h->events);
        tprof_rows_set_i(top, 0, C_HTA_FILTER, h->step_filter);
        tprof_rows_set_i(top, 0, C_HTA_ROUNDED, h->rounded);
        tprof_rows_set_i(top, 0, C_HTA_UNLAUNCHED, (int64_t)h->dropped_unlaunched);
        tprof_rows_set_i(top, 0, C_HTA_UNLAUNCHED_NS, h->dropped_unlaunched_ns);
    } else if (h->not_computed)
        rc = tprof_rows_set_s(top, 0, C_HTA_WHY, h->not_computed);
    /* the headline, and the other definition in the note where they differ */
    int hta = def == TPROF_DEFINITION_HTA && h->computed;
    tprof_rows_set_i(top, 0, C_T_EVENTS, hta ? (int64_t)h->events : (int64_t)r.events);
    tprof_rows_set_i(top, 0, C_T_SPAN, hta ? h->span_ns : r.span_ns);
    tprof_rows_set_i(top, 0, C_T_IDLE, hta ? h->idle_ns : r.idle_ns);
    tprof_rows_set_i(top, 0, C_T_COMPUTE, hta ? h->compute_ns : r.compute_ns);
    tprof_rows_set_i(top, 0, C_T_NON, hta ? h->non_compute_ns : r.non_compute_ns);
    char note[512] = "";
    size_t n = 0;
    if (r.last_step_excluded) n += (size_t)snprintf(note, sizeof note, "ProfilerStep#%" PRId64 " left out", r.last_step);
    if (!r.events && !hta) n = (size_t)snprintf(note, sizeof note, "no GPU events");
    if (tprof_hta_differs(&r) && n + 8 < sizeof note) {
        int64_t span = hta ? r.span_ns : h->span_ns;
        n += (size_t)snprintf(note + n, sizeof note - n, "%s%s: idle %.1f%%, compute %.1f%%, non-compute %.1f%%: ",
                              n ? "; " : "", hta ? "trainprof" : "HTA", pct(hta ? r.idle_ns : h->idle_ns, span),
                              pct(hta ? r.compute_ns : h->compute_ns, span),
                              pct(hta ? r.non_compute_ns : h->non_compute_ns, span));
        if (n < sizeof note) tprof_hta_reasons(&r, note + n, sizeof note - n);
    }
    if (!rc) rc = tprof_rows_set_s(top, 0, C_NOTE, note);
    tprof_result_derive(res);
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
