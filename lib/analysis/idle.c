/* Idle time causes per stream (docs/METRICS.md): each gap between
 * consecutive GPU events on a stream is a host wait (the next event was
 * launched only after the stream had drained), a kernel wait (a short gap
 * between work that was already queued), or other (waiting on something
 * else: events, other streams, synchronisation). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "launch.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_KERNEL_WAIT_NS 30000

static const int64_t bucket_limits[TPROF_IDLE_BUCKETS] = { 10000, 30000, 100000, 1000000, 10000000, INT64_MAX };

int64_t tprof_idle_bucket_limit(int i) { return i >= 0 && i < TPROF_IDLE_BUCKETS ? bucket_limits[i] : INT64_MAX; }

const char *tprof_idle_cause_name(tprof_idle_cause c)
{
    switch (c) {
    case TPROF_IDLE_HOST: return "host wait";
    case TPROF_IDLE_KERNEL: return "kernel wait";
    default: return "other";
    }
}

typedef struct {
    int64_t device, stream, start, end, launch;
} work;

/* Start, end, then launch: a full order, so that events alike in time are
 * in the same order with any sort (the earliest launch first: of work
 * that starts together, the first queued decides a gap's cause). */
static int cmp_time(const void *a, const void *b)
{
    const work *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return x->launch < y->launch ? -1 : x->launch > y->launch;
}

static int cmp_work(const void *a, const void *b)
{
    const work *x = a, *y = b;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    return cmp_time(a, b);
}

typedef struct {
    int64_t device, stream;
    size_t count, at;
} stream_group;

static int cmp_group(const void *a, const void *b)
{
    const stream_group *x = a, *y = b;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

#define MAX_GROUPS 64

/* W[0..n) in cmp_work order, as qsort would leave it but in about linear
 * time: a trace has few streams and writes each one's events nearly in
 * time order, so the events are gathered by stream (stable), and a stream
 * is sorted by time only when it is not in order already. More streams
 * than MAX_GROUPS: one qsort. Returns -1 when out of memory. */
static int sort_work(work *w, size_t n)
{
    stream_group g[MAX_GROUPS];
    size_t ng = 0, last = 0;
    uint8_t *gi = malloc(n ? n : 1);
    work *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!gi || !tmp) {
        free(gi);
        free(tmp);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = last;
        if (k >= ng || g[k].device != w[i].device || g[k].stream != w[i].stream)
            for (k = 0; k < ng && (g[k].device != w[i].device || g[k].stream != w[i].stream); k++) {
            }
        if (k == ng) {
            if (ng == MAX_GROUPS) {
                free(gi);
                free(tmp);
                qsort(w, n, sizeof *w, cmp_work);
                return 0;
            }
            g[ng++] = (stream_group){ w[i].device, w[i].stream, 0, 0 };
        }
        g[k].count++;
        gi[i] = (uint8_t)k;
        last = k;
    }
    /* the groups in (device, stream) order: where each one's events go */
    stream_group order[MAX_GROUPS];
    memcpy(order, g, ng * sizeof *g);
    qsort(order, ng, sizeof *order, cmp_group);
    for (size_t k = 0, at = 0; k < ng; k++) {
        for (size_t j = 0; j < ng; j++)
            if (g[j].device == order[k].device && g[j].stream == order[k].stream) g[j].at = at;
        at += order[k].count;
    }
    for (size_t i = 0; i < n; i++) tmp[g[gi[i]].at++] = w[i];
    memcpy(w, tmp, n * sizeof *w);
    for (size_t k = 0, at = 0; k < ng; k++) {
        work *s = w + at;
        size_t m = order[k].count;
        for (size_t j = 1; j < m; j++)
            if (cmp_time(&s[j - 1], &s[j]) > 0) {
                qsort(s, m, sizeof *s, cmp_time);
                break;
            }
        at += m;
    }
    free(gi);
    free(tmp);
    return 0;
}

static void add_gap(tprof_idle_stat *s, int64_t gap)
{
    s->count++;
    s->total_ns = tprof_sat_add(s->total_ns, gap);
    if (gap > s->max_ns) s->max_ns = gap;
    int b = 0;
    while (b < TPROF_IDLE_BUCKETS - 1 && gap >= bucket_limits[b]) b++;
    s->buckets[b]++;
}

void tprof_idle_free(tprof_idle_result *r)
{
    if (!r) return;
    free(r->streams);
    free(r);
}

int tprof_idle(const tprof_trace *t, const tprof_idle_opts *opts, tprof_idle_result **out)
{
    *out = NULL;
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t), n = 0;
    tprof_idle_result *r = calloc(1, sizeof *r);
    work *w = malloc((nev ? nev : 1) * sizeof *w);
    const int64_t *launched = r && w ? tprof_launch_times(t) : NULL;
    if (!launched) {
        free(r);
        free(w);
        return TPROF_ENOMEM;
    }
    r->kernel_wait_ns = opts && opts->kernel_wait_ns > 0 ? opts->kernel_wait_ns : DEFAULT_KERNEL_WAIT_NS;
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        if (e->kind != TPROF_KIND_GPU || e->klass == TPROF_CLASS_OTHER) continue;
        w[n++] = (work){ e->device, e->stream, e->ts, tprof_end_ns(e->ts, e->dur), launched[i] };
    }
    if (sort_work(w, n)) {
        free(w);
        free(r);
        return TPROF_ENOMEM;
    }
    size_t cap = 0;
    for (size_t a = 0; a < n;) {
        size_t b = a;
        while (b < n && w[b].device == w[a].device && w[b].stream == w[a].stream) b++;
        if (r->nstreams == cap) {
            cap = cap ? cap * 2 : 8;
            tprof_idle_row *rows = realloc(r->streams, cap * sizeof *rows);
            if (!rows) {
                free(w);
                tprof_idle_free(r);
                return TPROF_ENOMEM;
            }
            r->streams = rows;
        }
        const work *s = w + a; /* this stream's events, in start order */
        size_t m = b - a;
        tprof_idle_row *row = &r->streams[r->nstreams++];
        *row = (tprof_idle_row){ .device = s[0].device, .stream = s[0].stream, .events = m };
        int64_t drained = s[0].end; /* when the stream last ran out of work */
        for (size_t k = 1; k < m; k++) {
            int64_t gap = s[k].start - drained;
            if (gap > 0) {
                tprof_idle_cause c = s[k].launch >= drained ? TPROF_IDLE_HOST
                                   : gap < r->kernel_wait_ns ? TPROF_IDLE_KERNEL
                                                             : TPROF_IDLE_OTHER;
                add_gap(&row->cause[c], gap);
                row->idle_ns = tprof_sat_add(row->idle_ns, gap);
            }
            if (s[k].end > drained) drained = s[k].end;
        }
        row->span_ns = tprof_span_ns(s[0].start, drained);
        a = b;
    }
    free(w);
    *out = r;
    return 0;
}

/* ---- the idle result as typed tables ------------------------------------------
 * JSON: the kernel-wait threshold, the bucket limits (the last null: no
 * limit), and per stream its causes as members named host_wait, kernel_wait
 * and other, each with its bucket counts. CSV: a row per stream and cause,
 * the cause named "host wait", "kernel wait" or "other". */
enum { I_KERNEL_WAIT, I_IDLE, I_HOST, I_NCOLS };
/* the totals over streams: for the across-ranks view only, JSON and CSV have the streams' */
#define TEXT_ONLY (TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV)
static const tprof_col_desc idle_top_cols[I_NCOLS] = {
    [I_KERNEL_WAIT] = TPROF_COL("kernel_wait_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                                "gaps shorter than this (and not host waits) are kernel waits",
                                .flags = TPROF_COLF_NO_TABLE),
    [I_IDLE] = TPROF_COL("idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "idle (all streams)",
                         "the gaps of every stream summed (text only)", .flags = TEXT_ONLY | TPROF_COLF_METRIC),
    [I_HOST] = TPROF_COL("host_wait_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "host wait",
                         "the host-wait gaps of every stream summed (text only)", .flags = TEXT_ONLY),
};
static const tprof_col_desc idle_limit_cols[] = {
    TPROF_COL("limit_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
              "upper bound of a gap-size bucket; null for the last (no bound)"),
};
static const tprof_col_desc idle_bucket_cols[] = {
    TPROF_COL("gaps", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "gaps in the bucket"),
};
static const tprof_table_desc idle_limits_desc = { .name = "bucket_limits_ns", .doc = "the gap-size buckets",
                                                   .cols = idle_limit_cols, .ncols = 1, .json_values = 1 };
static const tprof_table_desc idle_buckets_desc = { .name = "buckets", .doc = "gaps per size bucket",
                                                    .cols = idle_bucket_cols, .ncols = 1, .json_values = 1 };
static const tprof_table_desc *const cause_children[] = { &idle_buckets_desc };
enum { Z_CAUSE, Z_COUNT, Z_TOTAL, Z_MAX, Z_NCOLS };
/* The columns a stream row and a cause row have, shared with the CSV rows */
#define IDLE_STREAM_COLS(DEVICE, STREAM, EVENTS, SPAN)                                                             \
    [DEVICE] = TPROF_COL("device", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "GPU", .flags = TPROF_COLF_KEY),      \
    [STREAM] = TPROF_COL("stream", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "stream", .flags = TPROF_COLF_KEY), \
    [EVENTS] = TPROF_COL("events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "GPU events on the stream"),        \
    [SPAN] = TPROF_COL("span_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, NULL, "first start to last end")
#define IDLE_CAUSE_COLS(COUNT, TOTAL, MAX)                                                                         \
    [COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "gaps of this cause"),                 \
    [TOTAL] = TPROF_COL("total_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "their sum"),                    \
    [MAX] = TPROF_COL("max_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, NULL, "the longest")
static const tprof_col_desc idle_cause_cols[Z_NCOLS] = {
    [Z_CAUSE] = TPROF_COL("cause", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "host_wait, kernel_wait or other",
                          .flags = TPROF_COLF_KEY),
    IDLE_CAUSE_COLS(Z_COUNT, Z_TOTAL, Z_MAX),
};
static const tprof_table_desc idle_causes_desc = { .name = "causes", .doc = "the stream's gaps by cause",
                                                   .cols = idle_cause_cols, .ncols = Z_NCOLS,
                                                   .children = cause_children, .nchildren = 1, .json_keyed = 1,
                                                   .json_inline = 1 };
static const tprof_table_desc *const stream_children[] = { &idle_causes_desc };
enum { V_DEVICE, V_STREAM, V_EVENTS, V_SPAN, V_IDLE, V_NCOLS };
static const tprof_col_desc idle_stream_cols[V_NCOLS] = {
    IDLE_STREAM_COLS(V_DEVICE, V_STREAM, V_EVENTS, V_SPAN),
    [V_IDLE] = TPROF_COL("idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "the gaps summed",
                         .flags = TPROF_COLF_METRIC),
};
static const tprof_table_desc idle_streams_desc = { .name = "streams", .doc = "sorted by device, stream",
                                                    .cols = idle_stream_cols, .ncols = V_NCOLS,
                                                    .children = stream_children, .nchildren = 1 };
/* CSV: the stream's columns, then its cause's (the cause as tprof_idle_cause_name says it) */
enum { W_DEVICE, W_STREAM, W_EVENTS, W_SPAN, W_CAUSE, W_COUNT, W_TOTAL, W_MAX, W_NCOLS };
static const tprof_col_desc idle_csv_cols[W_NCOLS] = {
    IDLE_STREAM_COLS(W_DEVICE, W_STREAM, W_EVENTS, W_SPAN),
    [W_CAUSE] = TPROF_COL("cause", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "host wait, kernel wait or other",
                          .flags = TPROF_COLF_KEY),
    IDLE_CAUSE_COLS(W_COUNT, W_TOTAL, W_MAX),
};
static const tprof_table_desc idle_csv_desc = { .name = "stream_causes", .doc = "a row per stream and cause",
                                                .cols = idle_csv_cols, .ncols = W_NCOLS, .no_json = 1 };
static const tprof_table_desc idle_top = { .name = "", .cols = idle_top_cols, .ncols = I_NCOLS };
static const tprof_table_desc *const idle_tables[] = { &idle_limits_desc, &idle_streams_desc, &idle_csv_desc };
const tprof_result_desc tprof_idle_desc = { .name = "idle", .version = 1, .top = &idle_top, .tables = idle_tables,
                                            .ntables = 3, .csv_table = 3 };

int tprof_idle_tables(const tprof_idle_result *r, tprof_result **out)
{
    static const char *const json_cause[TPROF_IDLE_CAUSES] = { "host_wait", "kernel_wait", "other" };
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_idle_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res);
    tprof_rows_set_i(top, 0, I_KERNEL_WAIT, r->kernel_wait_ns);
    int64_t idle = 0, host = 0;
    for (size_t i = 0; i < r->nstreams; i++) {
        idle = tprof_sat_add(idle, r->streams[i].idle_ns);
        host = tprof_sat_add(host, r->streams[i].cause[TPROF_IDLE_HOST].total_ns);
    }
    tprof_rows_set_i(top, 0, I_IDLE, idle);
    tprof_rows_set_i(top, 0, I_HOST, host);
    tprof_rows *limits = tprof_result_table(res, 0), *streams = tprof_result_table(res, 1),
               *csv = tprof_result_table(res, 2);
    int rc = 0;
    for (int b = 0; !rc && b < TPROF_IDLE_BUCKETS; b++) {
        long k = tprof_rows_add(limits);
        if (k < 0) rc = TPROF_ENOMEM;
        else if (b < TPROF_IDLE_BUCKETS - 1) tprof_rows_set_i(limits, (size_t)k, 0, tprof_idle_bucket_limit(b));
    }
    for (size_t i = 0; !rc && i < r->nstreams; i++) {
        const tprof_idle_row *s = &r->streams[i];
        long k = tprof_rows_add(streams);
        tprof_rows *causes = k < 0 ? NULL : tprof_rows_child(streams, (size_t)k, 0);
        if (!causes) {
            rc = TPROF_ENOMEM;
            break;
        }
        const int64_t sv[V_NCOLS] = { s->device, s->stream, (int64_t)s->events, s->span_ns, s->idle_ns };
        for (int c = 0; c < V_NCOLS; c++) tprof_rows_set_i(streams, (size_t)k, (size_t)c, sv[c]);
        for (int cz = 0; !rc && cz < TPROF_IDLE_CAUSES; cz++) {
            const tprof_idle_stat *st = &s->cause[cz];
            long q = tprof_rows_add(causes), w = tprof_rows_add(csv);
            tprof_rows *buckets = q < 0 ? NULL : tprof_rows_child(causes, (size_t)q, 0);
            if (!buckets || w < 0 || tprof_rows_set_s(causes, (size_t)q, Z_CAUSE, json_cause[cz]) ||
                tprof_rows_set_s(csv, (size_t)w, W_CAUSE, tprof_idle_cause_name((tprof_idle_cause)cz))) {
                rc = TPROF_ENOMEM;
                break;
            }
            tprof_rows_set_i(causes, (size_t)q, Z_COUNT, (int64_t)st->count);
            tprof_rows_set_i(causes, (size_t)q, Z_TOTAL, st->total_ns);
            tprof_rows_set_i(causes, (size_t)q, Z_MAX, st->max_ns);
            for (int b = 0; !rc && b < TPROF_IDLE_BUCKETS; b++) {
                long g = tprof_rows_add(buckets);
                if (g < 0) rc = TPROF_ENOMEM;
                else tprof_rows_set_i(buckets, (size_t)g, 0, (int64_t)st->buckets[b]);
            }
            const int64_t wv[] = { s->device, s->stream, (int64_t)s->events, s->span_ns };
            for (int c = 0; c < 4; c++) tprof_rows_set_i(csv, (size_t)w, (size_t)c, wv[c]);
            tprof_rows_set_i(csv, (size_t)w, W_COUNT, (int64_t)st->count);
            tprof_rows_set_i(csv, (size_t)w, W_TOTAL, st->total_ns);
            tprof_rows_set_i(csv, (size_t)w, W_MAX, st->max_ns);
        }
    }
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
