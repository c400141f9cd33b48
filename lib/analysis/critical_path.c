/* The critical path of a trace window, built as Holistic Trace Analysis's
 * lightweight critical path analysis builds it (HTA commit f4d0062,
 * hta/analyzers/critical_path_analysis.py; read, not copied):
 *
 * - Nodes: a start and an end point for each cpu_op, cuda_runtime and
 *   cuda_driver event that starts in the window (with a duration), and for
 *   each GPU event (a stream and a correlation) that one of them launched.
 * - Edges, in HTA's order (the order decides between paths of equal length):
 *   1. runtime calls that take the CUDA runtime lock (cudaLaunchKernel,
 *      cudaMemcpyAsync, cudaHostAlloc) linked across threads in the order
 *      they end;
 *   2. per CPU thread (the backward thread folded into the forward one),
 *      the events nested by their intervals and walked depth first: each
 *      point to the next, weighted by the time between them, except between
 *      top-level ops (no weight: ops depend only on the one before) and at
 *      the end of a blocking call (cudaStreamSynchronize, ...: its wait is
 *      the GPU's time, reached through a sync edge);
 *   3. per stream, each kernel's own time, and either a launch delay from
 *      its runtime call (when the stream was empty at the launch and the
 *      previous kernel had ended) or a kernel-kernel delay from the previous
 *      kernel's end (under 1.5 ms); sync edges from the last kernel of a
 *      stream to the end of cudaStreamSynchronize (of every stream to a
 *      device sync), from the kernel before a cudaEventRecord to the end of
 *      cudaEventSynchronize, and to the first kernel launched after a
 *      cudaStreamWaitEvent.
 * - The path: the longest in the DAG, found as networkx's dag_longest_path
 *   finds it (Kahn's generations in insertion order, the first best
 *   predecessor, the first farthest node), so that ties go the same way.
 *
 * Times are trainprof's ns (HTA's are whole us). docs/METRICS.md has the
 * rules and where trainprof differs. */
#include "critical_path.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "../util/big.h"
#include "../util/grow.h"
#include "../util/i64map.h"
#include "../util/idmap.h"

/* HTA's threshold for a kernel-kernel delay: past it the gap is taken for
 * a dependency it cannot see. */
#define KERNEL_GAP_MAX_NS 1500000

#define XC_NONE (-1)      /* no correlation */
#define XC_UNMATCHED (-2) /* a correlation, its other side not in the trace (HTA's index_correlation 0) */
#define Q_NONE INT32_MIN

/* name flags */
enum {
    N_LAUNCH = 1,      /* HTA's runtime launch calls (get_runtime_launch_events_mask) */
    N_LOCK = 2,        /* calls that take the runtime lock */
    N_BLOCKING = 4,    /* calls that wait for the GPU */
    N_RECORD = 8,      /* cudaEventRecord */
    N_SWE_CALL = 16,   /* cudaStreamWaitEvent */
    N_SWE = 32,        /* the GPU side: Stream Wait Event */
    N_EVENT_SYNC = 64, /* Event Sync (the GPU side of cudaEventSynchronize) */
    N_CONTEXT_SYNC = 128,
};
enum { C_NODE = 1, C_OP_FWD = 2, C_SYNC = 4, C_RUNTIME = 8, C_CPU_OP = 16 };
enum { ROLE_NONE = 0, ROLE_LAUNCH, ROLE_LAUNCHED };

/* A window's marks: each of its records (at its slot, slot_of) -> its start
 * and end node, the record holding it on its thread (CP_TOP at the top),
 * each stored + 1 so that 0 is TPROF_CP_NONE; reset after each window. One
 * per thread that builds windows, as long as the longest window's slots
 * (a window's records lie close together in the file: arrays over every
 * record were 12 bytes a record a thread, first touched at 1.1 ms a MiB). */
typedef struct {
    uint32_t *start_node, *end_node, *parent;
    size_t cap;
} cp_marks;

struct tprof_cp_ctx {
    const tprof_trace *t;
    /* the records: the trace's events and its compact host spans
       (TPROF_COMPACT_SPANS) in file order, so that an index's order is the
       file's (HTA breaks ties by it) */
    const tprof_event *events;
    const tprof_host_span *spans;
    const tprof_cpu_track *tracks;
    uint32_t *src;          /* record -> its event, or CP_SPAN | its span; NULL: the records are the events */
    uint32_t *rec_of_event; /* event -> its record (with src) */
    size_t n;
    uint8_t *nflag, *cflag, *stream_sync;
    uint8_t *phase_word; /* 1: the name holds "forward", 2: "autograd" (HTA's thread merge) */
    /* per event (compact spans have none: XC_NONE, Q_NONE, ROLE_NONE; a
       record's through xcorr_of, queue_of, role_of) */
    int32_t *xcorr;       /* HTA's index_correlation: the other side's record, XC_NONE or XC_UNMATCHED */
    int32_t *queue;       /* launch queue length after the event (a launch call or its GPU event), Q_NONE */
    uint8_t *role;        /* ROLE_*: a launch call with a GPU side (HTA: its launch mask and a correlation),
                             GPU work on a stream that one launched */
    tprof_i64map prev_launch; /* cudaEventRecord -> the last launch before it onto the recorded stream */
    tprof_i64map next_launch; /* cudaStreamWaitEvent -> the first launch after it from its thread onto the waiting stream */
    tprof_i64map record_of; /* a recorded event's correlation -> its cudaEventRecord (with a known stream) */
    tprof_i64map wait_of;   /* a sync event's index -> the correlation of the record it waits on */
    int has_waits;          /* the trace has wait_on_cuda_event_record_corr_id at all */
    uint32_t *host_by_ts; /* host-side events (stream -1) with a duration, by start */
    size_t nhost;
    uint32_t *swe;        /* every Stream Wait Event (HTA takes them whatever their time) */
    size_t nswe;
    cp_marks marks; /* tprof_cp_window_path's; tprof_cp_paths' second thread has its own */
    size_t alone;   /* below this many records, one thread builds everything */
    int record_slots; /* tests: every record's marks at its own index */
};
#define CP_TOP (UINT32_MAX - 1)
#define CP_SPAN 0x80000000u

/* Record R as an event: a compact span takes its thread's pid and tid, no
 * stream, no correlation. */
static inline tprof_event rec(const tprof_cp_ctx *c, size_t r)
{
    if (!c->src) return c->events[r];
    uint32_t s = c->src[r];
    if (!(s & CP_SPAN)) return c->events[s];
    const tprof_host_span *sp = &c->spans[s & ~CP_SPAN];
    const tprof_cpu_track *th = &c->tracks[sp->thread];
    return (tprof_event){ .ts = sp->ts, .dur = sp->dur, .pid = th->pid, .tid = th->tid, .correlation = -1,
                          .external_id = -1, .flow_id = -1, .bytes = -1, .device = -1, .stream = -1, .name = sp->name,
                          .cat = sp->cat, .ph = 'X', .kind = TPROF_KIND_CPU,
                          .flags = (uint8_t)(sp->flags | (th->flags & (TPROF_EV_PID_STR | TPROF_EV_TID_STR))) };
}

/* Record R's event, NULL when it is a compact span (which has no
 * correlation and no stream: never a launch nor GPU work). */
static inline const tprof_event *event_at(const tprof_cp_ctx *c, size_t r)
{
    if (!c->src) return &c->events[r];
    return c->src[r] & CP_SPAN ? NULL : &c->events[c->src[r]];
}

/* Event K's record. */
static inline size_t record_of_event(const tprof_cp_ctx *c, size_t k) { return c->rec_of_event ? c->rec_of_event[k] : k; }
/* Record R's event, SIZE_MAX for a compact span. */
static inline size_t event_of(const tprof_cp_ctx *c, size_t r)
{
    if (!c->src) return r;
    return c->src[r] & CP_SPAN ? SIZE_MAX : c->src[r];
}
static inline int64_t xcorr_of(const tprof_cp_ctx *c, size_t r)
{
    size_t k = event_of(c, r);
    return k == SIZE_MAX ? XC_NONE : c->xcorr[k];
}
static inline int32_t queue_of(const tprof_cp_ctx *c, size_t r)
{
    size_t k = event_of(c, r);
    return k == SIZE_MAX ? Q_NONE : c->queue[k];
}
static inline uint8_t role_of(const tprof_cp_ctx *c, size_t r)
{
    size_t k = event_of(c, r);
    return k == SIZE_MAX ? ROLE_NONE : c->role[k];
}

void tprof_cp_record(const tprof_cp_ctx *c, uint32_t r, tprof_event *out) { *out = rec(c, r); }
size_t tprof_cp_records(const tprof_cp_ctx *c) { return c->n; }

static int gpu_side_event(const tprof_cp_ctx *c, const tprof_event *e)
{
    return (e->stream >= 0 && e->correlation >= 0) || (c->nflag[e->name] & (N_EVENT_SYNC | N_CONTEXT_SYNC));
}

static int gpu_side(const tprof_cp_ctx *c, size_t i)
{
    const tprof_event e_r = rec(c, i);
    return gpu_side_event(c, &e_r);
}

static int64_t end_of(const tprof_event *e) { return tprof_end_ns(e->ts, e->dur); }

static const char *const launch_names[] = { "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",
                                            "cuLaunchKernelEx", "cudaMemcpyAsync", "cudaMemsetAsync",
                                            "runFunction - job_prep_and_submit_for_execution",
                                            "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemsetAsync",
                                            "hipMemcpyAsync", "hipMemcpyWithStream" };
static const char *const lock_names[] = { "cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync" };
static const char *const blocking_names[] = { "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery",
                                              "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpyAsync" };

static int in_list(const char *s, const char *const *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, l[i])) return 1;
    return 0;
}
#define IN(s, l) in_list((s), (l), sizeof(l) / sizeof *(l))

int tprof_cp_is_launch_call(const char *name) { return IN(name, launch_names); }

static int flag_strings(tprof_cp_ctx *c)
{
    size_t ns = tprof_trace_nstrings(c->t);
    c->nflag = calloc(ns ? ns : 1, 1);
    c->cflag = calloc(ns ? ns : 1, 1);
    c->stream_sync = calloc(ns ? ns : 1, 1);
    c->phase_word = calloc(ns ? ns : 1, 1);
    if (!c->nflag || !c->cflag || !c->stream_sync || !c->phase_word) return TPROF_ENOMEM;
    for (size_t i = 0; i < ns; i++) {
        const char *s = tprof_trace_str(c->t, (uint32_t)i);
        uint8_t f = 0;
        if (IN(s, launch_names)) f |= N_LAUNCH;
        if (IN(s, lock_names)) f |= N_LOCK;
        if (IN(s, blocking_names)) f |= N_BLOCKING;
        if (!strcmp(s, "cudaEventRecord")) f |= N_RECORD;
        if (!strcmp(s, "cudaStreamWaitEvent")) f |= N_SWE_CALL;
        if (!strcmp(s, "Stream Wait Event")) f |= N_SWE;
        if (!strcmp(s, "Event Sync")) f |= N_EVENT_SYNC;
        if (!strcmp(s, "Context Sync")) f |= N_CONTEXT_SYNC;
        c->nflag[i] = f;
        c->stream_sync[i] = !strcmp(s, "Stream Sync");
        c->phase_word[i] = (uint8_t)((strstr(s, "forward") ? 1 : 0) | (strstr(s, "autograd") ? 2 : 0));
        uint8_t g = 0;
        if (!strcmp(s, "cpu_op")) g |= C_NODE | C_OP_FWD | C_CPU_OP;
        if (!strcmp(s, "cuda_runtime") || !strcmp(s, "cuda_driver")) g |= C_NODE | C_RUNTIME;
        if (!strcmp(s, "user_annotation")) g |= C_OP_FWD;
        if (!strcmp(s, "cuda_sync")) g |= C_SYNC;
        c->cflag[i] = g;
    }
    return 0;
}

/* HTA's index_correlation: a host-side event and a GPU-side event of one
 * correlation name each other (the last one in the file when several do). */
static int link_correlations(tprof_cp_ctx *c)
{
    /* only events carry correlations, in file order as the records are */
    size_t nev = tprof_trace_nevents(c->t), count[2] = { 0, 0 };
    int64_t lo[2] = { INT64_MAX, INT64_MAX }, hi[2] = { INT64_MIN, INT64_MIN };
    for (size_t k = 0; k < nev; k++) {
        const tprof_event *e = &c->events[k];
        if (e->correlation < 0) continue;
        int g = gpu_side_event(c, e);
        count[g]++;
        if (e->correlation < lo[g]) lo[g] = e->correlation;
        if (e->correlation > hi[g]) hi[g] = e->correlation;
    }
    tprof_idmap side[2]; /* host, GPU: correlation -> the last record of that side */
    if (tprof_idmap_init(&side[0], lo[0], hi[0], count[0])) return TPROF_ENOMEM;
    if (tprof_idmap_init(&side[1], lo[1], hi[1], count[1])) {
        tprof_idmap_free(&side[0]);
        return TPROF_ENOMEM;
    }
    int rc = 0;
    for (size_t k = 0; k < nev && !rc; k++) {
        const tprof_event *e = &c->events[k];
        if (e->correlation >= 0 && tprof_idmap_put(&side[gpu_side_event(c, e)], e->correlation, (uint32_t)record_of_event(c, k)))
            rc = TPROF_ENOMEM;
    }
    memset(c->xcorr, 0xff, nev * sizeof *c->xcorr); /* XC_NONE */
    memset(c->role, ROLE_NONE, nev);
    for (size_t k = 0; k < nev && !rc; k++) {
        const tprof_event *e = &c->events[k];
        if (e->correlation < 0) continue;
        int g = gpu_side_event(c, e);
        uint32_t other = tprof_idmap_get(&side[!g], e->correlation);
        c->xcorr[k] = other == TPROF_IDMAP_NONE ? XC_UNMATCHED : (int32_t)other;
        if (other == TPROF_IDMAP_NONE) continue;
        /* a launch call has a GPU side; GPU work on a stream was launched by
           a call when its host side is a launch call (whose GPU side exists: it) */
        if (!g && (c->nflag[e->name] & N_LAUNCH)) c->role[k] = ROLE_LAUNCH;
        if (g && e->stream != -1 && (c->nflag[event_at(c, other)->name] & N_LAUNCH)) c->role[k] = ROLE_LAUNCHED;
    }
    tprof_idmap_free(&side[0]);
    tprof_idmap_free(&side[1]);
    return rc;
}

/* A launch call with a GPU event (HTA: its mask and index_correlation > 0). */
static int is_launch(const tprof_cp_ctx *c, size_t i) { return role_of(c, i) == ROLE_LAUNCH; }

/* An event at a time, ordered by time, then by TIE (HTA concatenates
 * launch calls before the rest, and its sort by time keeps that order for
 * equal times), then by file order. */
typedef struct {
    int64_t ts;
    uint32_t ev;
    uint32_t tie;
} timed;


static int cmp_timed(const void *a, const void *b)
{
    const timed *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->tie != y->tie) return x->tie < y->tie ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* NAME(A, N): sorts the N elements of type T at A by CMP, a natural merge
 * sort (a template: the copies and comparisons inline), since the records
 * come in file order and profilers write nearly in time order: an ordered
 * array costs one pass. First the runs are merged one after the other into
 * the sorted prefix before them, each with only the tail of the prefix it
 * overlaps (found by binary search): profilers write a step's host events
 * as a few runs (its ops, then its runtime calls) that overlap only that
 * step, so this too costs about one pass. Runs that overlap widely (the
 * tails moved past 4 passes' worth) go on to bottom-up merges in pairs,
 * merged runs already in order with the one before counting as one. Every
 * key here is unique (a record breaks ties), so the order is qsort's.
 * Without memory for the merge it falls back to qsort. */
#define DEFINE_NATURAL_SORT(NAME, T, CMP)                                                                        \
    static void NAME(T *a, size_t n)                                                                        \
    {                                                                                                       \
        size_t runs = 1;                                                                                    \
        for (size_t i = 1; i < n; i++) runs += CMP(&a[i - 1], &a[i]) > 0;                                   \
        if (runs == 1) return;                                                                              \
        T *tmp = tprof_big_alloc(n, sizeof *tmp);                                                           \
        size_t *start = malloc((runs + 1) * sizeof *start);                                                 \
        if (!tmp || !start) {                                                                               \
            free(tmp);                                                                                      \
            free(start);                                                                                    \
            qsort(a, n, sizeof *a, CMP);                                                                    \
            return;                                                                                         \
        }                                                                                                   \
        size_t nr = 0, moved = 0, r;                                                                        \
        start[nr++] = 0;                                                                                    \
        for (size_t i = 1; i < n; i++)                                                                      \
            if (CMP(&a[i - 1], &a[i]) > 0) start[nr++] = i;                                                 \
        start[nr] = n;                                                                                      \
        for (r = 1; r < nr; r++) { /* into the prefix */                                                    \
            size_t lo = start[r], hi = start[r + 1], l = 0, h = lo;                                         \
            while (l < h) {                                                                                 \
                size_t m = l + (h - l) / 2;                                                                 \
                if (CMP(&a[m], &a[lo]) > 0) h = m;                                                          \
                else l = m + 1;                                                                             \
            }                                                                                               \
            if (l == lo) continue;                                                                          \
            if ((moved += lo - l) > 4 * n) break;                                                           \
            size_t nt = lo - l, i = 0, j = lo, k = l; /* k <= j: the run is read before it is overwritten */ \
            memcpy(tmp, &a[l], nt * sizeof *a);                                                             \
            while (i < nt && j < hi) a[k++] = CMP(&tmp[i], &a[j]) <= 0 ? tmp[i++] : a[j++];                 \
            memcpy(&a[k], &tmp[i], (nt - i) * sizeof *a); /* what is left of the run is in place */         \
        }                                                                                                   \
        if (r < nr) { /* wide overlaps: the runs again, merged in pairs */                                  \
            nr = 0;                                                                                         \
            start[nr++] = 0;                                                                                \
            for (size_t i = 1; i < n; i++)                                                                  \
                if (CMP(&a[i - 1], &a[i]) > 0) start[nr++] = i;                                             \
            start[nr] = n;                                                                                  \
        } else                                                                                              \
            nr = 1;                                                                                         \
        T *src = a, *dst = tmp;                                                                             \
        while (nr > 1) {                                                                                    \
            size_t w = 0;                                                                                   \
            for (size_t q = 0; q < nr; q += 2) {                                                            \
                size_t lo = start[q], mid = start[q + 1], hi = q + 2 <= nr ? start[q + 2] : mid;            \
                size_t i = lo, j = mid, k = lo;                                                             \
                while (i < mid && j < hi) dst[k++] = CMP(&src[i], &src[j]) <= 0 ? src[i++] : src[j++];      \
                memcpy(&dst[k], &src[i], (mid - i) * sizeof *a);                                            \
                k += mid - i;                                                                               \
                memcpy(&dst[k], &src[j], (hi - j) * sizeof *a);                                             \
                if (!w || CMP(&dst[lo - 1], &dst[lo]) > 0) start[w++] = lo;                                 \
            }                                                                                               \
            start[w] = n;                                                                                   \
            nr = w;                                                                                         \
            T *t = src;                                                                                     \
            src = dst;                                                                                      \
            dst = t;                                                                                        \
        }                                                                                                   \
        if (src != a) memcpy(a, src, n * sizeof *a);                                                        \
        free(start);                                                                                        \
        free(tmp);                                                                                          \
    }
DEFINE_NATURAL_SORT(sort_timed, timed, cmp_timed)

/* A few keys (streams, threads) with a value each, searched in order. */
typedef struct {
    int64_t k1, k2, k3;
    int64_t v;
} small_entry;
typedef struct {
    small_entry *e;
    size_t n, cap;
} small_map;

/* The entry of the keys; ADD: created with value INIT when absent (NULL
 * when out of memory), else NULL when absent. */
static small_entry *small_get(small_map *m, int64_t k1, int64_t k2, int64_t k3, int add, int64_t init)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->e[i].k1 == k1 && m->e[i].k2 == k2 && m->e[i].k3 == k3) return &m->e[i];
    if (!add || tprof_grow_items((void **)&m->e, &m->cap, m->n + 1, sizeof *m->e)) return NULL;
    m->e[m->n] = (small_entry){ k1, k2, k3, init };
    return &m->e[m->n++];
}

/* The launch queue per stream (HTA's TraceCounters queue length): +1 at a
 * launch call onto the stream, -1 at the start of GPU work a launch call
 * started; the length after each. */
static int launch_queue(tprof_cp_ctx *c)
{
    /* the launches and the GPU work they started are each nearly in time
       order already (one is written after the other, so together they are
       not): each sorted, then taken in merged order. Both are events, never
       compact spans: kept by event index, whose order is the file's. */
    size_t nl = 0, ng = 0, nev = tprof_trace_nevents(c->t);
    for (size_t k = 0; k < nev; k++) {
        c->queue[k] = Q_NONE;
        nl += c->role[k] == ROLE_LAUNCH;
        ng += c->role[k] == ROLE_LAUNCHED;
    }
    timed *l = tprof_big_alloc(nl, sizeof *l), *g = tprof_big_alloc(ng, sizeof *g);
    int rc = l && g ? 0 : TPROF_ENOMEM;
    size_t a = 0, b = 0;
    for (size_t k = 0; k < nev && !rc; k++) {
        if (c->role[k] == ROLE_LAUNCH) l[a++] = (timed){ c->events[k].ts, (uint32_t)k, 0 };
        else if (c->role[k] == ROLE_LAUNCHED) g[b++] = (timed){ c->events[k].ts, (uint32_t)k, 1 };
    }
    if (!rc) {
        sort_timed(l, nl);
        sort_timed(g, ng);
    }
    small_map len = { 0 };
    for (a = b = 0; !rc && (a < nl || b < ng);) {
        const timed *q = b == ng || (a < nl && cmp_timed(&l[a], &g[b]) < 0) ? &l[a++] : &g[b++];
        int launch = !q->tie;
        small_entry *s = small_get(&len, (launch ? event_at(c, (size_t)c->xcorr[q->ev]) : &c->events[q->ev])->stream,
                                   0, 0, 1, 0);
        if (!s) {
            rc = TPROF_ENOMEM;
            break;
        }
        s->v += launch ? 1 : -1;
        c->queue[q->ev] = (int32_t)(s->v > INT32_MAX ? INT32_MAX : s->v < -INT32_MAX ? -INT32_MAX : s->v);
    }
    free(len.e);
    free(l);
    free(g);
    return rc;
}

/* cudaEventRecord -> the last launch onto the stream it recorded (from the
 * sync events that wait on it: their wait_on_stream, on their GPU), and
 * cudaStreamWaitEvent -> the first launch after it from its thread onto
 * the stream that waits (its Stream Wait Event's). HTA's
 * _get_cuda_event_record_df and _get_cuda_stream_wait_event_df. */
static int link_event_waits(tprof_cp_ctx *c)
{
    const tprof_sync_wait *w = tprof_trace_syncs(c->t);
    size_t nw = tprof_trace_nsyncs(c->t);
    tprof_i64map stream_of, gpu_of; /* a record's correlation -> the stream and GPU it recorded on */
    if (tprof_i64map_init(&stream_of, nw + 16)) return TPROF_ENOMEM;
    if (tprof_i64map_init(&gpu_of, nw + 16)) {
        tprof_i64map_free(&stream_of);
        return TPROF_ENOMEM;
    }
    int rc = 0;
    int64_t had;
    for (size_t k = 0; k < nw && !rc; k++) {
        size_t r = c->rec_of_event ? c->rec_of_event[w[k].event] : w[k].event; /* the sync's record */
        if (w[k].record_correlation != -1 || w[k].stream != -1) c->has_waits = 1;
        if (tprof_i64map_put(&c->wait_of, (int64_t)r, w[k].record_correlation)) rc = TPROF_ENOMEM;
        if (w[k].stream > -1 && !tprof_i64map_get(&stream_of, w[k].record_correlation, &had) &&
            (tprof_i64map_put(&stream_of, w[k].record_correlation, w[k].stream) ||
             tprof_i64map_put(&gpu_of, w[k].record_correlation, rec(c, r).pid)))
            rc = TPROF_ENOMEM;
    }
    size_t m = 0, cap = 0, nev = tprof_trace_nevents(c->t); /* runtime calls: events, never compact spans */
    for (size_t k = 0; k < nev; k++)
        cap += c->role[k] == ROLE_LAUNCH || (c->nflag[c->events[k].name] & (N_RECORD | N_SWE_CALL));
    timed *order = tprof_big_alloc(cap, sizeof *order);
    if (!order) rc = TPROF_ENOMEM;
    for (size_t k = 0; k < nev && !rc; k++) {
        const tprof_event *e = &c->events[k];
        size_t i = record_of_event(c, k);
        uint8_t f = c->nflag[e->name];
        int launch = c->role[k] == ROLE_LAUNCH;
        if (launch || ((f & N_RECORD) && tprof_i64map_get(&stream_of, e->correlation, &had)) ||
            ((f & N_SWE_CALL) && c->xcorr[k] >= 0 && rec(c, (size_t)c->xcorr[k]).stream != -1))
            order[m++] = (timed){ e->ts, (uint32_t)i, !launch };
    }
    if (!rc) sort_timed(order, m);
    small_map last = { 0 }, next = { 0 };
    for (size_t k = 0; k < m && !rc; k++) { /* forward: the last launch onto each (GPU, stream) */
        uint32_t i = order[k].ev;
        const tprof_event e_r = rec(c, i), *e = &e_r;
        if (is_launch(c, i)) {
            const tprof_event g_r = rec(c, (size_t)xcorr_of(c, i)), *g = &g_r;
            small_entry *s = small_get(&last, g->pid, g->stream, 0, 1, -1);
            if (!s) rc = TPROF_ENOMEM;
            else s->v = i;
        } else if (c->nflag[e->name] & N_RECORD) {
            int64_t stream = 0, gpu = 0;
            tprof_i64map_get(&stream_of, e->correlation, &stream);
            tprof_i64map_get(&gpu_of, e->correlation, &gpu);
            small_entry *s = small_get(&last, gpu, stream, 0, 0, -1);
            if (s && s->v >= 0 && tprof_i64map_put(&c->prev_launch, (int64_t)i, s->v)) rc = TPROF_ENOMEM;
            if (tprof_i64map_put(&c->record_of, e->correlation, (int64_t)i)) rc = TPROF_ENOMEM;
        }
    }
    for (size_t k = m; k-- > 0 && !rc;) { /* backward: the next launch from each (pid, tid) onto each stream */
        uint32_t i = order[k].ev;
        const tprof_event e_r = rec(c, i), *e = &e_r;
        if (is_launch(c, i)) {
            small_entry *s = small_get(&next, e->pid, e->tid, rec(c, (size_t)xcorr_of(c, i)).stream, 1, -1);
            if (!s) rc = TPROF_ENOMEM;
            else s->v = i;
        } else if (c->nflag[e->name] & N_SWE_CALL) {
            small_entry *s = small_get(&next, e->pid, e->tid, rec(c, (size_t)xcorr_of(c, i)).stream, 0, -1);
            if (s && s->v >= 0 && tprof_i64map_put(&c->next_launch, (int64_t)i, s->v)) rc = TPROF_ENOMEM;
        }
    }
    free(last.e);
    free(next.e);
    free(order);
    tprof_i64map_free(&stream_of);
    tprof_i64map_free(&gpu_of);
    return rc;
}

/* The records in file order: each compact span before the first event
 * stored after it in the file. */
static int merge_records(tprof_cp_ctx *c)
{
    const tprof_trace *t = c->t;
    size_t nev = tprof_trace_nevents(t), nsp = tprof_trace_nspans(t);
    c->events = tprof_trace_events(t);
    c->n = nev + nsp;
    if (c->n >= CP_SPAN) return TPROF_ELIMIT; /* records are int32 in xcorr, and flag spans with the top bit */
    if (!nsp) return 0;
    c->spans = tprof_trace_spans(t);
    c->tracks = tprof_trace_meta_get(t)->cpu_tracks;
    c->src = tprof_big_alloc(c->n, sizeof *c->src);
    c->rec_of_event = tprof_big_alloc(nev, sizeof *c->rec_of_event);
    if (!c->src || !c->rec_of_event) return TPROF_ENOMEM;
    size_t r = 0, s = 0;
    for (size_t e = 0; e <= nev; e++) {
        while (s < nsp && (e == nev || c->spans[s].events_before <= e)) c->src[r++] = CP_SPAN | (uint32_t)s++;
        if (e == nev) break;
        c->rec_of_event[e] = (uint32_t)r;
        c->src[r++] = (uint32_t)e;
    }
    return 0;
}

/* Room in M for N slots, all zero. Between windows every slot is zero
 * (graph_free resets them), so larger arrays need no copy, and calloc
 * leaves a large one's pages untouched until a window writes them (a
 * window's range can span most of the file where GPU events come last). */
static int marks_reserve(cp_marks *m, size_t n)
{
    if (n <= m->cap) return 0;
    size_t cap = n > 2 * m->cap ? n : 2 * m->cap;
    uint32_t **a[3] = { &m->start_node, &m->end_node, &m->parent };
    for (int i = 0; i < 3; i++) {
        uint32_t *p = calloc(cap, sizeof *p);
        if (!p) return TPROF_ENOMEM; /* the arrays replaced so far are larger, all zero: M stays usable */
        free(*a[i]);
        *a[i] = p;
    }
    m->cap = cap;
    return 0;
}

static void marks_free(cp_marks *m)
{
    free(m->start_node);
    free(m->end_node);
    free(m->parent);
}

void tprof_cp_ctx_free(tprof_cp_ctx *c)
{
    if (!c) return;
    free(c->src);
    free(c->rec_of_event);
    free(c->nflag);
    free(c->cflag);
    free(c->stream_sync);
    free(c->phase_word);
    free(c->xcorr);
    free(c->queue);
    free(c->role);
    if (c->prev_launch.keys) tprof_i64map_free(&c->prev_launch);
    if (c->next_launch.keys) tprof_i64map_free(&c->next_launch);
    free(c->host_by_ts);
    free(c->swe);
    marks_free(&c->marks);
    if (c->record_of.keys) tprof_i64map_free(&c->record_of);
    if (c->wait_of.keys) tprof_i64map_free(&c->wait_of);
    free(c);
}

/* The host events with a duration, in start order (what windows select
 * from), and every Stream Wait Event: built on a second thread while the
 * first links correlations and launch queues, which touch neither. */
typedef struct {
    tprof_cp_ctx *c;
    int rc;
} host_job;

static void *order_host(void *arg)
{
    host_job *j = arg;
    tprof_cp_ctx *c = j->c;
    /* room for every record: pages past the ones written are never touched */
    size_t n1 = c->n ? c->n : 1;
    timed *host = tprof_big_alloc(n1, sizeof *host);
    c->swe = tprof_big_alloc(n1, sizeof *c->swe);
    c->host_by_ts = tprof_big_alloc(n1, sizeof *c->host_by_ts);
    if (!host || !c->swe || !c->host_by_ts) {
        free(host);
        j->rc = TPROF_ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < c->n; i++) {
        const tprof_event *e = event_at(c, i);
        if (!e) { /* a compact span: a CPU X event */
            const tprof_host_span *sp = &c->spans[c->src[i] & ~CP_SPAN];
            if (sp->dur > 0) host[c->nhost++] = (timed){ sp->ts, (uint32_t)i, 0 };
            continue;
        }
        if (e->stream == -1 && e->dur > 0 && e->ph == 'X' && e->kind != TPROF_KIND_GPU_ANNOTATION)
            host[c->nhost++] = (timed){ e->ts, (uint32_t)i, 0 };
        if (e->stream != -1 && e->kind == TPROF_KIND_GPU && (c->nflag[e->name] & N_SWE)) c->swe[c->nswe++] = (uint32_t)i;
    }
    sort_timed(host, c->nhost);
    for (size_t k = 0; k < c->nhost; k++) c->host_by_ts[k] = host[k].ev;
    free(host);
    j->rc = 0;
    return NULL;
}

void tprof_cp_ctx_record_slots(tprof_cp_ctx *c) { c->record_slots = 1; }

tprof_cp_ctx *tprof_cp_ctx_new(const tprof_trace *t) { return tprof_cp_ctx_new_split(t, TPROF_CP_ALONE); }

tprof_cp_ctx *tprof_cp_ctx_new_split(const tprof_trace *t, size_t alone)
{
    tprof_cp_ctx *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->t = t;
    c->alone = alone;
    if (merge_records(c)) {
        tprof_cp_ctx_free(c);
        return NULL;
    }
    size_t nev = tprof_trace_nevents(t);
    c->xcorr = tprof_big_alloc(nev, sizeof *c->xcorr);
    c->queue = tprof_big_alloc(nev, sizeof *c->queue);
    c->role = tprof_big_alloc(nev, 1);
    if (!c->xcorr || !c->queue || !c->role || tprof_i64map_init(&c->prev_launch, 64) ||
        tprof_i64map_init(&c->next_launch, 64) || tprof_i64map_init(&c->record_of, 64) ||
        tprof_i64map_init(&c->wait_of, 64) || flag_strings(c)) {
        tprof_cp_ctx_free(c);
        return NULL;
    }
    host_job hj = { .c = c, .rc = TPROF_ENOMEM };
    pthread_t helper;
    int helped = c->n >= c->alone && pthread_create(&helper, NULL, order_host, &hj) == 0;
    int rc = link_correlations(c);
    if (!rc) rc = launch_queue(c);
    if (!rc) rc = link_event_waits(c);
    if (helped) pthread_join(helper, NULL);
    else order_host(&hj);
    if (rc || hj.rc) {
        tprof_cp_ctx_free(c);
        return NULL;
    }
    return c;
}

/* ---- one window's graph ---------------------------------------------------- */

typedef struct {
    int64_t ts;
    uint32_t ev;
    uint8_t start;
} cp_node;

typedef struct {
    uint32_t u, v;
    uint8_t type;
    int64_t weight;
    uint32_t attr; /* the attributed event, TPROF_CP_NONE */
} cp_gedge;

typedef struct {
    const tprof_cp_ctx *c;
    cp_marks *m; /* the building thread's */
    uint32_t *sel; /* the window's records, in record order */
    size_t nsel;
    /* slots in the marks: the records in [lo, lo + span), the range of the
       window's own, at their offset from lo */
    uint32_t lo;
    size_t span;
    cp_node *nodes;
    size_t nn;
    cp_gedge *edges;
    size_t ne, ecap;
    uint32_t *touched; /* nodes in the order an edge first named them: networkx's node order */
    size_t ntouched;
    uint8_t *in_graph;
    uint32_t *out_first; /* node -> its last added out-edge (a list through next_out), TPROF_CP_NONE */
    uint32_t *next_out;  /* edge -> the out-edge of its node added before it */
    size_t next_cap;
} graph;

/* Record EV's slot in the window's marks, SIZE_MAX when it has none (a
 * Stream Wait Event of another time: nothing reads its marks, kernel_edges
 * takes it by its correlation). */
static inline size_t slot_of(const graph *g, uint32_t ev)
{
    return (size_t)(uint32_t)(ev - g->lo) < g->span ? ev - g->lo : SIZE_MAX;
}
static uint32_t mark(const graph *g, const uint32_t *marks, uint32_t ev)
{
    size_t s = slot_of(g, ev);
    return s == SIZE_MAX ? TPROF_CP_NONE : marks[s] - 1;
}
static uint32_t start_of(const graph *g, uint32_t ev) { return mark(g, g->m->start_node, ev); }
static uint32_t end_node(const graph *g, uint32_t ev) { return mark(g, g->m->end_node, ev); }
/* The event holding host event EV on its thread, or -1 (the top, or not nested). */
static int64_t parent_of(const graph *g, uint32_t ev)
{
    uint32_t p = mark(g, g->m->parent, ev);
    return p == TPROF_CP_NONE || p == CP_TOP ? -1 : (int64_t)p;
}

/* The edge U -> V, or TPROF_CP_NONE (a node has a few out-edges). */
static uint32_t find_edge(const graph *g, uint32_t u, uint32_t v)
{
    for (uint32_t e = g->out_first[u]; e != TPROF_CP_NONE; e = g->next_out[e])
        if (g->edges[e].v == v) return e;
    return TPROF_CP_NONE;
}

/* An edge U -> V (networkx's add_edge: an edge added again keeps its place
 * and takes the new type and weight). Its index, or -1 out of memory. */
static long add_edge(graph *g, uint32_t u, uint32_t v, tprof_cp_edge_type type, int zero)
{
    if (u == v) return -2;
    int64_t w = type == TPROF_CPE_DEPENDENCY || type == TPROF_CPE_SYNC || zero ? 0 : g->nodes[v].ts - g->nodes[u].ts;
    uint32_t at = find_edge(g, u, v);
    if (at != TPROF_CP_NONE) {
        g->edges[at].type = (uint8_t)type;
        g->edges[at].weight = w;
        return (long)at;
    }
    if (g->ne >= UINT32_MAX - 1 || tprof_grow_items((void **)&g->edges, &g->ecap, g->ne + 1, sizeof *g->edges) ||
        tprof_grow_items((void **)&g->next_out, &g->next_cap, g->ne + 1, sizeof *g->next_out))
        return -1;
    g->next_out[g->ne] = g->out_first[u];
    g->out_first[u] = (uint32_t)g->ne;
    if (!g->in_graph[u]) g->touched[g->ntouched++] = u, g->in_graph[u] = 1;
    if (!g->in_graph[v]) g->touched[g->ntouched++] = v, g->in_graph[v] = 1;
    g->edges[g->ne] = (cp_gedge){ u, v, (uint8_t)type, w, TPROF_CP_NONE };
    return (long)g->ne++;
}

/* HTA's attribution of an op's or a gap's time to an event: a gap to the
 * kernel before it; from a start point to that event; to an end point to
 * that event; between an end and the next start to the parent of both. */
static void attribute(graph *g, long e, int64_t src_parent)
{
    if (e < 0) return;
    cp_gedge *x = &g->edges[e];
    if (x->type != TPROF_CPE_OPERATOR && x->type != TPROF_CPE_KERNEL_KERNEL) return;
    const cp_node *s = &g->nodes[x->u], *d = &g->nodes[x->v];
    if (x->type == TPROF_CPE_KERNEL_KERNEL || s->start) x->attr = s->ev;
    else if (!d->start) x->attr = d->ev;
    else x->attr = src_parent >= 0 ? (uint32_t)src_parent : TPROF_CP_NONE;
}

static int add_checked(graph *g, uint32_t u, uint32_t v, tprof_cp_edge_type type, int zero, long *e)
{
    long r = add_edge(g, u, v, type, zero);
    if (e) *e = r;
    return r == -1 ? TPROF_ENOMEM : 0;
}

static int cmp_node(const void *a, const void *b)
{
    const cp_node *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->ev != y->ev) return x->ev < y->ev ? -1 : 1;
    return (int)y->start - (int)x->start;
}
DEFINE_NATURAL_SORT(sort_nodes, cp_node, cmp_node)


/* The window's events: host events (stream -1) that start in it and have a
 * duration, the GPU events they launched, and every Stream Wait Event. */
static int select_events(graph *g, int64_t start, int64_t end)
{
    const tprof_cp_ctx *c = g->c;
    size_t lo = 0, hi = c->nhost;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (rec(g->c, c->host_by_ts[mid]).ts < start) lo = mid + 1;
        else hi = mid;
    }
    size_t cap = 16;
    g->sel = malloc(cap * sizeof *g->sel);
    if (!g->sel) return TPROF_ENOMEM;
    uint32_t body_lo = UINT32_MAX, body_hi = 0; /* of the records in the window's time */
    for (size_t k = lo; k < c->nhost + c->nswe; k++) {
        uint32_t h;
        if (k < c->nhost) {
            h = c->host_by_ts[k];
            if (rec(g->c, h).ts > end) {
                k = c->nhost - 1; /* on to the Stream Wait Events */
                continue;
            }
        } else
            h = c->swe[k - c->nhost];
        if (tprof_grow_items((void **)&g->sel, &cap, g->nsel + 2, sizeof *g->sel)) return TPROF_ENOMEM;
        g->sel[g->nsel++] = h;
        /* a Stream Wait Event (cuda_sync) of another time needs no slot:
           kernel_edges takes it by its correlation, never by its marks */
        if (k >= c->nhost && (c->cflag[rec(g->c, h).cat] & C_SYNC)) continue;
        if (h < body_lo) body_lo = h;
        if (h > body_hi) body_hi = h;
        if (k >= c->nhost) continue;
        int64_t x = xcorr_of(c, h);
        if (x >= 0 && rec(g->c, x).stream != -1 && gpu_side(c, (size_t)x)) {
            g->sel[g->nsel++] = (uint32_t)x;
            if ((uint32_t)x < body_lo) body_lo = (uint32_t)x;
            if ((uint32_t)x > body_hi) body_hi = (uint32_t)x;
        }
    }
    /* in record order, once each: a bitmap over the ids' range (a window's
       records lie close together in the file), cheaper than sorting them */
    if (!g->nsel) return 0;
    uint32_t lo_id = UINT32_MAX, hi_id = 0;
    for (size_t i = 0; i < g->nsel; i++) {
        if (g->sel[i] < lo_id) lo_id = g->sel[i];
        if (g->sel[i] > hi_id) hi_id = g->sel[i];
    }
    size_t words = ((size_t)(hi_id - lo_id) >> 6) + 1;
    uint64_t *bits = calloc(words, sizeof *bits);
    if (!bits) return TPROF_ENOMEM;
    for (size_t i = 0; i < g->nsel; i++) bits[(g->sel[i] - lo_id) >> 6] |= 1ull << ((g->sel[i] - lo_id) & 63);
    size_t m = 0;
    for (size_t w = 0; w < words; w++)
        for (uint64_t x = bits[w]; x; x &= x - 1)
            g->sel[m++] = lo_id + (uint32_t)(w << 6) + (uint32_t)__builtin_ctzll(x);
    free(bits);
    g->nsel = m;
    /* the marks' slots: the range of the records in the window's time (the
       Stream Wait Events of every time are taken too) */
    uint32_t lo_slot = c->record_slots ? 0 : body_lo;
    size_t span = c->record_slots ? c->n : body_lo <= body_hi ? (size_t)(body_hi - body_lo) + 1 : 0;
    if (marks_reserve(g->m, span)) return TPROF_ENOMEM; /* no slots yet: graph_free resets none */
    g->lo = lo_slot;
    g->span = span;
    return 0;
}

static int make_nodes(graph *g)
{
    const tprof_cp_ctx *c = g->c;
    g->nodes = malloc((2 * g->nsel + 1) * sizeof *g->nodes);
    if (!g->nodes) return TPROF_ENOMEM;
    /* the starts in record order, then the ends: a few long runs for the merge */
    for (int ends = 0; ends < 2; ends++)
        for (size_t k = 0; k < g->nsel; k++) {
            uint32_t i = g->sel[k];
            const tprof_event e_r = rec(g->c, i), *e = &e_r;
            if (!(c->cflag[e->cat] & C_NODE) && !(e->stream != -1 && xcorr_of(c, i) != XC_NONE)) continue;
            g->nodes[g->nn++] = ends ? (cp_node){ end_of(e), i, 0 } : (cp_node){ e->ts, i, 1 };
        }
    sort_nodes(g->nodes, g->nn);
    g->touched = malloc((g->nn + 1) * sizeof *g->touched);
    g->in_graph = calloc(g->nn + 1, 1);
    if (!g->touched || !g->in_graph) return TPROF_ENOMEM;
    if (!(g->out_first = malloc((g->nn + 1) * sizeof *g->out_first))) return TPROF_ENOMEM;
    for (size_t k = 0; k < g->nn; k++) g->out_first[k] = TPROF_CP_NONE;
    for (size_t k = 0; k < g->nn; k++) {
        size_t s = slot_of(g, g->nodes[k].ev);
        if (s != SIZE_MAX) (g->nodes[k].start ? g->m->start_node : g->m->end_node)[s] = (uint32_t)k + 1;
    }
    return 0;
}

static int is_lock(const graph *g, uint32_t node) { return (g->c->nflag[rec(g->c, g->nodes[node].ev).name] & N_LOCK) != 0; }

/* Two points of runtime calls that share the lock, other than one's end
 * and the next one's start: their edge is the lock pass's. */
static int shares_lock(const graph *g, uint32_t a, uint32_t b)
{
    return is_lock(g, a) && is_lock(g, b) && (g->nodes[a].start || !g->nodes[b].start);
}

/* 1. The runtime lock: calls that take it, linked in the order they end. */
static int lock_edges(graph *g)
{
    uint32_t *open = malloc((g->nn + 1) * sizeof *open), last = TPROF_CP_NONE;
    size_t nopen = 0;
    if (!open) return TPROF_ENOMEM;
    int rc = 0;
    for (uint32_t k = 0; k < g->nn && !rc; k++) {
        if (!is_lock(g, k)) continue;
        if (g->nodes[k].start) open[nopen++] = k;
        else {
            while (nopen && !rc) {
                uint32_t p = open[--nopen];
                long e;
                int same = g->nodes[p].ev == g->nodes[k].ev;
                rc = add_checked(g, p, k, same ? TPROF_CPE_OPERATOR : TPROF_CPE_DEPENDENCY, 0, &e);
                if (same) attribute(g, e, g->nodes[k].ev);
            }
            if (!rc && last != TPROF_CP_NONE && !g->nodes[last].start)
                rc = add_checked(g, last, k, TPROF_CPE_DEPENDENCY, 0, NULL);
        }
        last = k;
    }
    free(open);
    return rc;
}

/* A host event's start or end, for nesting a thread (HTA's compare_events,
 * every duration positive here): by time; at one time ends before starts,
 * the longer start first (then the earlier event), the shorter end first
 * (then the later event). */
typedef struct {
    int64_t pid, tid, t, dur;
    uint32_t ev;
    uint8_t start;
} point;

static int cmp_point(const void *a, const void *b)
{
    const point *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->start != y->start) return x->start ? 1 : -1;
    if (x->dur != y->dur) return x->start ? (x->dur > y->dur ? -1 : 1) : (x->dur < y->dur ? -1 : 1);
    if (x->ev != y->ev) return x->start ? (x->ev < y->ev ? -1 : 1) : (x->ev > y->ev ? -1 : 1);
    return 0;
}
DEFINE_NATURAL_SORT(sort_points, point, cmp_point)

/* The points in order from the sorted starts PT[0..NS) alone, into
 * OUT[0..2 NS): each thread's open events on a stack (STACK: room for NS),
 * the ends that come before a start popped before it. Where a thread's
 * events nest (as ops do) the stack pops each end in its sorted place, so
 * the ends need no sort (in file order they are far from it: a parent is
 * written before its children, which end first). 0 when they did not nest
 * (OUT, checked pair by pair, is then out of order): the caller sorts. */
static int sweep_points(const point *pt, size_t ns, point *out, uint32_t *stack)
{
    size_t m = 0, top = 0;
    for (size_t k = 0; k <= ns; k++) {
        int new_thread = k == ns || (k && (pt[k].pid != pt[k - 1].pid || pt[k].tid != pt[k - 1].tid));
        while (top) {
            const point *o = &pt[stack[top - 1]];
            int64_t end = tprof_end_ns(o->t, o->dur);
            if (!new_thread && end > pt[k].t) break; /* at one time, ends come before starts */
            out[m++] = (point){ o->pid, o->tid, end, o->dur, o->ev, 0 };
            top--;
        }
        if (k == ns) break;
        out[m++] = pt[k];
        stack[top++] = (uint32_t)k;
    }
    for (size_t k = 1; k < m; k++)
        if (cmp_point(&out[k - 1], &out[k]) > 0) return 0;
    return 1;
}

/* HTA's thread merge: the one thread with cpu_op / user_annotation events
 * named *forward*, and the one with *autograd*; -1 when not one each. */
static int64_t thread_with(const graph *g, uint8_t word)
{
    int64_t tid = -1;
    int found = 0;
    for (size_t k = 0; k < g->nsel; k++) {
        const tprof_event e_r = rec(g->c, g->sel[k]), *e = &e_r;
        if (!(g->c->cflag[e->cat] & C_OP_FWD) || !(g->c->phase_word[e->name] & word)) continue;
        if (found && e->tid != tid) return -1;
        tid = e->tid;
        found = 1;
    }
    return found ? tid : -1;
}

typedef struct {
    uint32_t last;  /* the point last reached */
    int depth;      /* ops (events with points) open */
    int64_t parent; /* the parent of the event last entered or left */
} walk;

static int enter(graph *g, walk *w, uint32_t ev)
{
    uint32_t s = start_of(g, ev);
    if (s == TPROF_CP_NONE || end_node(g, ev) == TPROF_CP_NONE) return 0;
    if (w->last != TPROF_CP_NONE && !shares_lock(g, w->last, s)) {
        long e;
        if (add_checked(g, w->last, s, w->depth == 0 ? TPROF_CPE_DEPENDENCY : TPROF_CPE_OPERATOR, 0, &e))
            return TPROF_ENOMEM;
        attribute(g, e, w->parent);
    }
    int64_t p = parent_of(g, ev);
    w->last = s;
    w->parent = p;
    w->depth++;
    return 0;
}

static int leave(graph *g, walk *w, uint32_t ev)
{
    uint32_t s = start_of(g, ev), en = end_node(g, ev);
    if (s == TPROF_CP_NONE || en == TPROF_CP_NONE) return 0;
    if (w->last != TPROF_CP_NONE && !shares_lock(g, w->last, en)) {
        long e;
        int blocking = (g->c->nflag[rec(g->c, ev).name] & N_BLOCKING) != 0; /* its wait is the GPU's time */
        if (add_checked(g, w->last, en, TPROF_CPE_OPERATOR, blocking, &e)) return TPROF_ENOMEM;
        attribute(g, e, w->parent);
    }
    int64_t p = parent_of(g, ev);
    w->last = en;
    w->parent = p;
    w->depth--;
    return 0;
}

/* 2. Each host thread's events nested and walked depth first. */
static int stack_edges(graph *g)
{
    int64_t fwd = thread_with(g, 1), bwd = thread_with(g, 2);
    int merge = fwd >= 0 && bwd >= 0 && fwd != bwd;
    point *pt = malloc((2 * g->nsel + 1) * sizeof *pt), *swept = malloc((2 * g->nsel + 1) * sizeof *swept);
    uint32_t *stack = malloc((g->nsel + 1) * sizeof *stack), *open = malloc((g->nsel + 1) * sizeof *open);
    size_t np = 0;
    int rc = pt && swept && stack && open ? 0 : TPROF_ENOMEM;
    /* the starts in record order (a run per thread for the merge), sorted;
       the ends among them by the stack, or else sorted with them */
    int sorted = 0;
    for (int ends = 0; ends < 2 && !rc && !sorted; ends++) {
        for (size_t k = 0; k < g->nsel; k++) {
            const tprof_event e_r = rec(g->c, g->sel[k]), *e = &e_r;
            if (e->stream != -1) continue;
            int64_t tid = merge && e->tid == bwd ? fwd : e->tid;
            pt[np++] = ends ? (point){ e->pid, tid, end_of(e), e->dur, g->sel[k], 0 }
                            : (point){ e->pid, tid, e->ts, e->dur, g->sel[k], 1 };
        }
        sort_points(pt, np);
        if (!ends && (sorted = sweep_points(pt, np, swept, stack))) {
            point *t = pt;
            pt = swept;
            swept = t;
            np *= 2;
        }
    }
    /* nesting: an event's parent is the one on top of the stack at its start;
       an end pops the top, whichever it is (as HTA's call stack does) */
    size_t nstack = 0;
    for (size_t k = 0; k < np && !rc; k++) {
        if (k && (pt[k].pid != pt[k - 1].pid || pt[k].tid != pt[k - 1].tid)) nstack = 0;
        if (pt[k].start) {
            size_t s = slot_of(g, pt[k].ev); /* a host event: in range */
            if (s != SIZE_MAX) g->m->parent[s] = (nstack ? stack[nstack - 1] : CP_TOP) + 1;
            stack[nstack++] = pt[k].ev;
        } else if (nstack)
            nstack--;
    }
    /* the depth-first walk: starts come in preorder */
    walk w = { TPROF_CP_NONE, 0, -1 };
    size_t nopen = 0;
    for (size_t k = 0; k <= np && !rc; k++) {
        int new_thread = k == np || (k && (pt[k].pid != pt[k - 1].pid || pt[k].tid != pt[k - 1].tid));
        if (new_thread) {
            while (nopen && !rc) rc = leave(g, &w, open[--nopen]);
            w = (walk){ TPROF_CP_NONE, 0, -1 };
            if (k == np) break;
        }
        if (!pt[k].start) continue;
        int64_t p = parent_of(g, pt[k].ev);
        while (nopen && (int64_t)open[nopen - 1] != p && !rc) rc = leave(g, &w, open[--nopen]);
        if (!rc) rc = enter(g, &w, pt[k].ev);
        open[nopen++] = pt[k].ev;
    }
    free(pt);
    free(swept);
    free(stack);
    free(open);
    return rc;
}

typedef struct {
    int64_t key;
    uint32_t ev;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* The kernel of the launch before a sync's cudaEventRecord, or -1. */
static int64_t recorded_kernel(const graph *g, uint32_t sync)
{
    const tprof_cp_ctx *c = g->c;
    int64_t corr, rec;
    if (!c->has_waits || !tprof_i64map_get(&c->wait_of, sync, &corr) || !tprof_i64map_get(&c->record_of, corr, &rec))
        return -1;
    int64_t found;
    uint32_t launch = tprof_i64map_get(&c->prev_launch, (int64_t)rec, &found) ? (uint32_t)found : TPROF_CP_NONE;
    return launch == TPROF_CP_NONE ? -1 : xcorr_of(c, launch);
}

/* A GPU -> CPU sync edge from point FROM to the end of host event CALL. */
static int sync_to_call(graph *g, uint32_t from, int64_t call)
{
    uint32_t en = call >= 0 ? end_node(g, (uint32_t)call) : TPROF_CP_NONE;
    return en == TPROF_CP_NONE ? 0 : add_checked(g, from, en, TPROF_CPE_SYNC, 0, NULL);
}

/* 3. Kernels stream by stream, and the syncs, in order of start (a sync's
 * end: it may hold a copy that runs inside it). */
static int kernel_edges(graph *g)
{
    const tprof_cp_ctx *c = g->c;
    keyed *rows = malloc((g->nsel + 1) * sizeof *rows);
    size_t nr = 0;
    small_map last = { 0 };     /* stream -> the end point of its last kernel */
    tprof_i64map pending = { 0 }; /* kernel -> the kernel it waits for (a stream wait event) */
    int rc = rows && !tprof_i64map_init(&pending, 64) ? 0 : TPROF_ENOMEM;
    for (size_t k = 0; k < g->nsel && !rc; k++) {
        uint32_t i = g->sel[k];
        const tprof_event e_r = rec(g->c, i), *e = &e_r;
        if ((e->stream == -1 && !(c->nflag[e->name] & (N_EVENT_SYNC | N_CONTEXT_SYNC))) || xcorr_of(c, i) == XC_NONE) continue;
        rows[nr++] = (keyed){ (c->cflag[e->cat] & C_SYNC) ? end_of(e) : e->ts, i };
    }
    if (!rc) qsort(rows, nr, sizeof *rows, cmp_keyed);
    for (size_t k = 0; k < nr && !rc; k++) {
        uint32_t i = rows[k].ev;
        const tprof_event e_r = rec(g->c, i), *e = &e_r;
        uint8_t f = c->nflag[e->name];
        if (c->cflag[e->cat] & C_SYNC) {
            if (f & (N_SWE | N_EVENT_SYNC)) {
                int64_t src = recorded_kernel(g, i);
                if (src < 0) continue;
                if (f & N_SWE) { /* the next kernel launched onto this stream waits for SRC */
                    int64_t call = xcorr_of(c, i);
                    int64_t found;
                    uint32_t next = call >= 0 && tprof_i64map_get(&c->next_launch, call, &found) ? (uint32_t)found
                                                                                                : TPROF_CP_NONE;
                    if (next != TPROF_CP_NONE && xcorr_of(c, next) >= 0 &&
                        tprof_i64map_put(&pending, xcorr_of(c, next), src))
                        rc = TPROF_ENOMEM;
                } else {
                    uint32_t ke = end_node(g, (uint32_t)src);
                    if (ke != TPROF_CP_NONE) rc = sync_to_call(g, ke, xcorr_of(c, i));
                }
            } else if (c->stream_sync[e->name]) {
                small_entry *s = small_get(&last, e->stream, 0, 0, 0, -1);
                if (s) rc = sync_to_call(g, (uint32_t)s->v, xcorr_of(c, i));
            } else if (f & N_CONTEXT_SYNC)
                for (size_t j = 0; j < last.n && !rc; j++) rc = sync_to_call(g, (uint32_t)last.e[j].v, xcorr_of(c, i));
            continue;
        }
        uint32_t s = start_of(g, i), en = end_node(g, i);
        if (s == TPROF_CP_NONE || en == TPROF_CP_NONE) continue;
        long own;
        if ((rc = add_checked(g, s, en, TPROF_CPE_OPERATOR, 0, &own))) break;
        attribute(g, own, -1);
        uint32_t waited = TPROF_CP_NONE; /* the end of the kernel it waits for */
        int64_t src;
        if (tprof_i64map_get(&pending, i, &src) && src >= 0) {
            waited = end_node(g, (uint32_t)src);
            if (waited != TPROF_CP_NONE && (rc = add_checked(g, waited, s, TPROF_CPE_SYNC, 0, NULL))) break;
            if (tprof_i64map_put(&pending, i, -1)) rc = TPROF_ENOMEM;
        }
        int64_t call = xcorr_of(c, i);
        small_entry *ls = small_get(&last, e->stream, 0, 0, 1, -1);
        if (!ls) rc = TPROF_ENOMEM;
        if (rc) break;
        uint32_t prev = ls->v >= 0 ? (uint32_t)ls->v : TPROF_CP_NONE;
        int64_t call_ts = call >= 0 ? rec(g->c, call).ts : INT64_MIN;
        if (call >= 0 && queue_of(c, call) == 1 && queue_of(c, i) == 0 &&
            (prev == TPROF_CP_NONE || g->nodes[prev].ts < call_ts) &&
            (waited == TPROF_CP_NONE || g->nodes[waited].ts < call_ts)) {
            uint32_t cs = start_of(g, (uint32_t)call);
            if (cs != TPROF_CP_NONE) rc = add_checked(g, cs, s, TPROF_CPE_LAUNCH_DELAY, 0, NULL);
        } else if (prev != TPROF_CP_NONE && g->nodes[s].ts - g->nodes[prev].ts < KERNEL_GAP_MAX_NS &&
                   (waited == TPROF_CP_NONE || g->nodes[waited].ts < g->nodes[prev].ts)) {
            long gap;
            rc = add_checked(g, prev, s, TPROF_CPE_KERNEL_KERNEL, 0, &gap);
            attribute(g, gap, -1);
        }
        ls->v = en;
    }
    free(rows);
    free(last.e);
    if (pending.keys) tprof_i64map_free(&pending);
    return rc;
}

/* HTA's comm kernels (is_comm_kernel): nccl*, hip*, hccl*, *ncclKernel*. */
static int hta_comm(const char *n)
{
    return !strncmp(n, "nccl", 4) || !strncmp(n, "hip", 3) || !strncmp(n, "hccl", 4) || strstr(n, "ncclKernel");
}

static tprof_cp_bound bound_of(const graph *g, const cp_gedge *x)
{
    switch (x->type) {
    case TPROF_CPE_KERNEL_KERNEL: return TPROF_CPB_KERNEL_GAP;
    case TPROF_CPE_LAUNCH_DELAY: return TPROF_CPB_LAUNCH;
    case TPROF_CPE_OPERATOR: break;
    default: return TPROF_CPB_NONE;
    }
    if (x->attr == TPROF_CP_NONE) return TPROF_CPB_CPU_OP; /* the top of a thread */
    const tprof_event e_r = rec(g->c, x->attr), *e = &e_r;
    if (e->stream < 0) return (g->c->cflag[e->cat] & C_RUNTIME) ? TPROF_CPB_RUNTIME : TPROF_CPB_CPU_OP;
    if (hta_comm(tprof_trace_str(g->c->t, e->name))) return TPROF_CPB_COMM;
    return e->klass == TPROF_CLASS_MEMORY ? TPROF_CPB_MEMORY : TPROF_CPB_COMPUTE;
}

/* The innermost cpu_op holding host event H (H itself when it is one). */
static uint32_t op_of(const graph *g, int64_t h)
{
    for (int guard = 0; h >= 0 && guard < 100000; guard++) {
        if (g->c->cflag[rec(g->c, h).cat] & C_CPU_OP) return (uint32_t)h;
        h = parent_of(g, (uint32_t)h);
    }
    return TPROF_CP_NONE;
}

/* The op an edge's time is for: its event's (a GPU event's: its runtime
 * call's); a launch delay's: its runtime call's. */
static uint32_t edge_op(const graph *g, const cp_gedge *x)
{
    int64_t h;
    if (x->type == TPROF_CPE_LAUNCH_DELAY) h = g->nodes[x->u].ev;
    else if (x->attr == TPROF_CP_NONE) return TPROF_CP_NONE;
    else h = rec(g->c, x->attr).stream == -1 ? (int64_t)x->attr : xcorr_of(g->c, x->attr);
    return h >= 0 ? op_of(g, h) : TPROF_CP_NONE;
}

/* Frees G, its marks off again for the next window; returns how many of
 * its records had no slot. */
static size_t graph_free(graph *g)
{
    size_t slotless = 0;
    for (size_t k = 0; k < g->nsel; k++) {
        size_t s = slot_of(g, g->sel[k]);
        if (s == SIZE_MAX) slotless++;
        else g->m->start_node[s] = g->m->end_node[s] = g->m->parent[s] = 0; /* TPROF_CP_NONE */
    }
    free(g->sel);
    free(g->nodes);
    free(g->edges);
    free(g->touched);
    free(g->in_graph);
    free(g->out_first);
    free(g->next_out);
    return slotless;
}

/* The longest path as networkx's dag_longest_path finds it: nodes in
 * topological order by Kahn's generations (node order, then each node's
 * successors in the order their edges were added), each node's best
 * predecessor the first one of the longest distance, the path's end the
 * first node of the longest. Fills W; a cycle makes the graph invalid. */
static int longest_path(graph *g, tprof_cp_window *w)
{
    size_t nn = g->nn, ne = g->ne;
    uint32_t *succ_at = calloc(nn + 1, sizeof *succ_at), *pred_at = calloc(nn + 1, sizeof *pred_at);
    uint32_t *succ = malloc((ne + 1) * sizeof *succ), *pred = malloc((ne + 1) * sizeof *pred);
    uint32_t *indeg = calloc(nn + 1, sizeof *indeg), *order = malloc((nn + 1) * sizeof *order);
    uint32_t *from = malloc((nn + 1) * sizeof *from);
    int64_t *dist = malloc((nn + 1) * sizeof *dist);
    int rc = TPROF_ENOMEM;
    if (!succ_at || !pred_at || !succ || !pred || !indeg || !order || !from || !dist) goto out;
    for (size_t e = 0; e < ne; e++) {
        succ_at[g->edges[e].u + 1]++;
        pred_at[g->edges[e].v + 1]++;
        indeg[g->edges[e].v]++;
    }
    for (size_t i = 0; i < nn; i++) {
        succ_at[i + 1] += succ_at[i];
        pred_at[i + 1] += pred_at[i];
    }
    {
        uint32_t *sf = malloc((nn + 1) * sizeof *sf), *pf = malloc((nn + 1) * sizeof *pf);
        if (!sf || !pf) {
            free(sf);
            free(pf);
            goto out;
        }
        memcpy(sf, succ_at, nn * sizeof *sf);
        memcpy(pf, pred_at, nn * sizeof *pf);
        for (size_t e = 0; e < ne; e++) { /* edges in the order they were added */
            succ[sf[g->edges[e].u]++] = (uint32_t)e;
            pred[pf[g->edges[e].v]++] = (uint32_t)e;
        }
        free(sf);
        free(pf);
    }
    size_t no = 0, gen = 0;
    for (size_t k = 0; k < g->ntouched; k++) /* the graph holds the nodes an edge named */
        if (!indeg[g->touched[k]]) order[no++] = g->touched[k];
    while (gen < no) { /* one generation: its nodes' successors form the next */
        size_t gen_end = no;
        for (size_t k = gen; k < gen_end; k++)
            for (uint32_t j = succ_at[order[k]]; j < succ_at[order[k] + 1]; j++) {
                uint32_t v = g->edges[succ[j]].v;
                if (--indeg[v] == 0) order[no++] = v;
            }
        gen = gen_end;
    }
    rc = 0;
    if (no < g->ntouched) {
        w->valid = 0;
        w->why = "the graph has a cycle";
        goto out;
    }
    size_t best = 0;
    for (size_t k = 0; k < no; k++) {
        uint32_t v = order[k];
        dist[v] = 0;
        from[v] = v;
        int any = 0;
        for (uint32_t j = pred_at[v]; j < pred_at[v + 1]; j++) {
            const cp_gedge *x = &g->edges[pred[j]];
            int64_t d = tprof_sat_add(dist[x->u], x->weight < 0 ? 0 : x->weight);
            if (!any || d > dist[v]) {
                dist[v] = d;
                from[v] = x->u;
                any = 1;
            }
        }
        if (k == 0 || dist[v] > dist[order[best]]) best = k;
    }
    if (!no) goto out;
    size_t len = 0;
    for (uint32_t v = order[best]; from[v] != v; v = from[v]) len++;
    w->path = malloc((len + 1) * sizeof *w->path);
    if (!w->path) {
        rc = TPROF_ENOMEM;
        goto out;
    }
    w->npath = len;
    w->length_ns = dist[order[best]];
    uint32_t v = order[best];
    w->last_ts = g->nodes[v].ts;
    for (size_t k = len; k-- > 0; v = from[v]) {
        const cp_gedge *x = &g->edges[find_edge(g, from[v], v)];
        tprof_cp_bound b = bound_of(g, x);
        int64_t wt = x->weight < 0 ? 0 : x->weight;
        w->path[k] = (tprof_cp_edge){ .from = g->nodes[x->u].ev, .to = g->nodes[x->v].ev,
                                      .from_start = g->nodes[x->u].start, .to_start = g->nodes[x->v].start,
                                      .type = x->type, .bound = (uint8_t)b, .weight = wt, .event = x->attr,
                                      .op = edge_op(g, x) };
        if (b != TPROF_CPB_NONE) w->bound_ns[b] += wt;
        if (x->type == TPROF_CPE_SYNC) w->sync_edges++;
    }
    w->first_ts = g->nodes[v].ts;
out:
    free(succ_at);
    free(pred_at);
    free(succ);
    free(pred);
    free(indeg);
    free(order);
    free(from);
    free(dist);
    return rc;
}

/* HTA's check: a sync edge between two kernels of one stream means the
 * graph is wrong. */
static int sync_on_one_stream(const graph *g)
{
    for (size_t e = 0; e < g->ne; e++) {
        const cp_gedge *x = &g->edges[e];
        if (x->type != TPROF_CPE_SYNC) continue;
        int64_t a = rec(g->c, g->nodes[x->u].ev).stream, b = rec(g->c, g->nodes[x->v].ev).stream;
        if (a != -1 && a == b) return 1;
    }
    return 0;
}

static int window_path(const tprof_cp_ctx *c, cp_marks *m, int64_t start, int64_t end, tprof_cp_window *w)
{
    memset(w, 0, sizeof *w);
    graph g = { .c = c, .m = m };
    int rc = select_events(&g, start, end);
    if (!rc) rc = make_nodes(&g);
    if (!rc) rc = lock_edges(&g);
    if (!rc) rc = stack_edges(&g);
    if (!rc) rc = kernel_edges(&g);
    if (!rc) {
        w->nodes = g.ntouched;
        w->edges = g.ne;
        w->valid = 1;
        if (sync_on_one_stream(&g)) {
            w->valid = 0;
            w->why = "a sync edge joins two kernels of one stream";
        } else
            rc = longest_path(&g, w);
    }
    size_t slotless = graph_free(&g);
    if (rc) tprof_cp_window_free(w);
    else w->slotless = slotless;
    return rc;
}

int tprof_cp_window_path(tprof_cp_ctx *c, int64_t start, int64_t end, tprof_cp_window *w)
{
    return window_path(c, &c->marks, start, end, w);
}

/* Windows are independent: two threads take them in turn, each with its
 * marks (a window's records are mostly its own, but every window holds
 * the Stream Wait Events and a host event on a boundary can fall in two). */
typedef struct {
    const tprof_cp_ctx *c;
    const tprof_cp_span *spans;
    size_t n;
    tprof_cp_window *out;
    size_t next;  /* the next window to take (atomic) */
    int rc;       /* the first failure (atomic) */
} paths_job;

typedef struct {
    paths_job *job;
    cp_marks *m;
} paths_worker;

static void *paths_run(void *arg)
{
    paths_worker *w = arg;
    paths_job *j = w->job;
    for (;;) {
        size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->n || __atomic_load_n(&j->rc, __ATOMIC_RELAXED)) break;
        int rc = window_path(j->c, w->m, j->spans[i].start, j->spans[i].end, &j->out[i]);
        if (rc) {
            int none = 0;
            __atomic_compare_exchange_n(&j->rc, &none, rc, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
            break;
        }
    }
    return NULL;
}

int tprof_cp_paths(tprof_cp_ctx *c, const tprof_cp_span *spans, size_t n, tprof_cp_window *out)
{
    memset(out, 0, n * sizeof *out);
    paths_job j = { .c = c, .spans = spans, .n = n };
    j.out = out;
    cp_marks second = { 0 };
    paths_worker here = { &j, &c->marks }, other = { &j, &second };
    pthread_t helper;
    int helped = n > 1 && c->n >= c->alone && pthread_create(&helper, NULL, paths_run, &other) == 0;
    paths_run(&here);
    if (helped) pthread_join(helper, NULL);
    marks_free(&second);
    if (j.rc)
        for (size_t i = 0; i < n; i++) tprof_cp_window_free(&out[i]);
    return j.rc;
}

void tprof_cp_window_free(tprof_cp_window *w)
{
    free(w->path);
    w->path = NULL;
    w->npath = 0;
}

const char *tprof_cp_bound_name(tprof_cp_bound b)
{
    static const char *const names[] = { "cpu_op", "runtime", "launch", "kernel_gap", "compute", "memory", "comm" };
    return (unsigned)b < TPROF_CPB_COUNT ? names[b] : "";
}

const char *tprof_cp_edge_name(tprof_cp_edge_type t)
{
    static const char *const names[] = { "operator", "dependency", "kernel_launch_delay", "kernel_kernel_delay",
                                         "sync_dependency" };
    return (unsigned)t < TPROF_CPE_COUNT ? names[t] : "";
}
