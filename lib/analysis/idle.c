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
