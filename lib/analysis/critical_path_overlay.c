/* The critical path as trace events, for critical-path --overlay: added to
 * a copy of the trace (tprof_trace_copy_with_events), they show the path in
 * Perfetto or chrome://tracing beside the events it runs through.
 *
 * What is added (the original events are left as they are):
 * - a process "critical path (trainprof)", sorted first, with a row
 *   "windows" (one slice per window: the path's length and share) and a row
 *   "path" (one slice per edge of the path that holds time, named after the
 *   event its time is attributed to, its category the bound);
 * - HTA's flow arrows (name and category "critical_path", args weight and
 *   type) on the original events for the path's dependency, launch-delay
 *   and sync edges, the edge types HTA's overlay draws by default. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "critical_path.h"
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "trainprof/report.h"

/* NS as the microseconds of a Chrome trace, exactly ("12.345"). */
static void put_us(FILE *f, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(f, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

/* The event's pid and tid as the file wrote them. */
static void put_track(FILE *f, const tprof_trace *t, const tprof_event *e)
{
    fputs("\"pid\":", f);
    if (e->flags & TPROF_EV_PID_STR) tprof_json_escape(f, tprof_trace_str(t, (uint32_t)e->pid));
    else fprintf(f, "%" PRId64, e->pid);
    fputs(",\"tid\":", f);
    if (e->flags & TPROF_EV_TID_STR) tprof_json_escape(f, tprof_trace_str(t, (uint32_t)e->tid));
    else fprintf(f, "%" PRId64, e->tid);
}

/* A point of the graph: the event's start or end. An end moves 1 ns back
 * into the event so that the flow binds to it (a flow binds to the slice
 * enclosing its time; at the end it could be the next one). */
static int64_t point_ns(const tprof_event *e, int start, int for_flow)
{
    if (start) return e->ts;
    int64_t end = tprof_end_ns(e->ts, e->dur);
    return for_flow && e->dur > 0 ? end - 1 : end;
}

static void flow_point(FILE *f, const tprof_trace *t, const tprof_event *e, int start, int64_t id,
                       const tprof_cp_edge *edge, int is_start)
{
    fprintf(f, ",\n{\"ph\":\"%s\",\"id\":%" PRId64 ",", is_start ? "s" : "f", id);
    put_track(f, t, e);
    fputs(",\"ts\":", f);
    put_us(f, point_ns(e, start, 1));
    fprintf(f, ",\"cat\":\"critical_path\",\"name\":\"critical_path\",%s\"args\":{\"weight_ns\":%" PRId64
               ",\"type\":\"%s\"}}",
            is_start ? "" : "\"bp\":\"e\",", edge->weight, tprof_cp_edge_name((tprof_cp_edge_type)edge->type));
}

/* The segment's name: the event its time goes to, or what the time is. */
static const char *segment_name(const tprof_trace *t, const tprof_cp_ctx *c, const tprof_cp_edge *e)
{
    if (e->type == TPROF_CPE_LAUNCH_DELAY) return "launch delay";
    if (e->bound == TPROF_CPB_KERNEL_GAP) return "kernel gap";
    if (e->event != TPROF_CP_NONE) {
        tprof_event ev;
        tprof_cp_record(c, e->event, &ev);
        return tprof_trace_str(t, ev.name);
    }
    return tprof_cp_bound_name((tprof_cp_bound)e->bound);
}

static void add_window(FILE *f, const tprof_trace *t, const tprof_cp_ctx *c, int64_t pid, const tprof_cp_span *s,
                       const tprof_cp_window *w, const char *window, int64_t *flow_id)
{
    int64_t span = tprof_span_ns(s->start, s->end);
    char name[256], which[64], path[32], whole[32];
    if (strcmp(window, "trace")) snprintf(which, sizeof which, "%s %" PRId64, window, s->number);
    else snprintf(which, sizeof which, "the trace");
    if (!w->valid) snprintf(name, sizeof name, "%s: refused (%s)", which, w->why);
    else
        snprintf(name, sizeof name, "%s: critical path %s, %.1f%% of %s", which,
                 tprof_fmt_duration(path, sizeof path, w->length_ns),
                 span > 0 ? 100.0 * (double)w->length_ns / (double)span : 0.0,
                 tprof_fmt_duration(whole, sizeof whole, span));
    fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"critical_path\",\"name\":");
    tprof_json_escape(f, name);
    fprintf(f, ",\"pid\":%" PRId64 ",\"tid\":0,\"ts\":", pid);
    put_us(f, s->start);
    fputs(",\"dur\":", f);
    put_us(f, span);
    fprintf(f, ",\"args\":{\"path_ns\":%" PRId64, w->length_ns);
    for (int k = 0; k < TPROF_CPB_COUNT; k++)
        fprintf(f, ",\"%s_ns\":%" PRId64, tprof_cp_bound_name((tprof_cp_bound)k), w->bound_ns[k]);
    fputs("}}", f);
    for (size_t k = 0; k < w->npath; k++) {
        const tprof_cp_edge *e = &w->path[k];
        tprof_event from_r, to_r;
        tprof_cp_record(c, e->from, &from_r);
        tprof_cp_record(c, e->to, &to_r);
        const tprof_event *from = &from_r, *to = &to_r;
        if (e->weight > 0 && e->bound != TPROF_CPB_NONE) {
            fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", tprof_cp_bound_name((tprof_cp_bound)e->bound));
            tprof_json_escape(f, segment_name(t, c, e));
            fprintf(f, ",\"pid\":%" PRId64 ",\"tid\":1,\"ts\":", pid);
            put_us(f, point_ns(from, e->from_start, 0));
            fputs(",\"dur\":", f);
            put_us(f, e->weight);
            fprintf(f, ",\"args\":{\"bound\":\"%s\",\"edge\":\"%s\"}}", tprof_cp_bound_name((tprof_cp_bound)e->bound),
                    tprof_cp_edge_name((tprof_cp_edge_type)e->type));
        }
        int drawn = e->type == TPROF_CPE_DEPENDENCY || e->type == TPROF_CPE_LAUNCH_DELAY || e->type == TPROF_CPE_SYNC;
        if (drawn && e->from != e->to) {
            flow_point(f, t, from, e->from_start, *flow_id, e, 1);
            flow_point(f, t, to, e->to_start, *flow_id, e, 0);
            ++*flow_id;
        }
    }
}

int tprof_critical_path_overlay_events(const tprof_trace *t, const tprof_cp_opts *opts, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    tprof_cp_span *spans;
    size_t nspans;
    const char *window;
    tprof_cp_ctx *c;
    int rc = tprof_cp_open(t, &opts, &c, &spans, &nspans, &window);
    if (rc) return rc;
    const char *word = !strcmp(window, "steps") ? "step" : !strcmp(window, "annotation") ? "instance" : "trace";
    /* a pid and arrow ids that the trace does not use */
    const tprof_event *ev = tprof_trace_events(t);
    size_t n = tprof_trace_nevents(t);
    int64_t pid = 0, flow_id = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(ev[i].flags & TPROF_EV_PID_STR) && ev[i].pid >= pid && ev[i].pid < INT64_MAX / 2) pid = ev[i].pid + 1;
        /* Kineto's arrows use correlation and external ids, and not every flow event is kept */
        int64_t ids[] = { ev[i].flow_id, ev[i].correlation, ev[i].external_id };
        for (int k = 0; k < 3; k++)
            if (ids[k] >= flow_id && ids[k] < INT64_MAX / 2) flow_id = ids[k] + 1;
    }
    const tprof_trace_meta *m = tprof_trace_meta_get(t); /* the threads of the compact spans */
    for (size_t i = 0; i < m->ncpu_tracks; i++)
        if (!(m->cpu_tracks[i].flags & TPROF_EV_PID_STR) && m->cpu_tracks[i].pid >= pid &&
            m->cpu_tracks[i].pid < INT64_MAX / 2)
            pid = m->cpu_tracks[i].pid + 1;
    char *buf = NULL;
    size_t blen = 0;
    FILE *f = open_memstream(&buf, &blen);
    if (!f) rc = TPROF_ENOMEM;
    if (!rc) {
        /* the first member has no comma: the caller joins the text to the events before it */
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRId64
                   ",\"tid\":0,\"args\":{\"name\":\"critical path (trainprof)\"}},\n"
                   "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRId64
                   ",\"tid\":0,\"args\":{\"sort_index\":-1}},\n"
                   "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRId64
                   ",\"tid\":0,\"args\":{\"name\":\"windows\"}},\n"
                   "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRId64 ",\"tid\":1,\"args\":{\"name\":\"path\"}}",
                pid, pid, pid, pid);
    }
    for (size_t i = 0; i < nspans && !rc; i++) {
        tprof_cp_window w;
        if ((rc = tprof_cp_window_path(c, spans[i].start, spans[i].end, &w))) break;
        add_window(f, t, c, pid, &spans[i], &w, word, &flow_id);
        tprof_cp_window_free(&w);
    }
    tprof_cp_ctx_free(c);
    free(spans);
    if (f && fclose(f) && !rc) rc = TPROF_ENOMEM;
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = blen;
    return 0;
}
