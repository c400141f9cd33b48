/* The attribution tree: host spans nested by containment per thread, GPU
 * events linked to their runtime calls by correlation id. */
#include "op_tree.h"

#include "../trace/derived.h"

#include "trainprof/error.h"
#include "../util/big.h"
#include "../util/idmap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The order of two host spans of one thread (records; KIND their node
 * kinds, by record): by start, longer first, outer kind first, then record
 * order (spans before events, each in file order). */
typedef struct {
    const tprof_op_tree *tr;
    const uint8_t *kind;
} span_order;

static inline __attribute__((always_inline)) int cmp_span(const span_order *o, uint32_t ra, uint32_t rb)
{
    int64_t ta = tprof_op_rec_ts(o->tr, ra), tb = tprof_op_rec_ts(o->tr, rb);
    if (ta != tb) return ta < tb ? -1 : 1;
    int64_t da = tprof_op_rec_dur(o->tr, ra), db = tprof_op_rec_dur(o->tr, rb);
    if (da != db) return da > db ? -1 : 1;
    if (o->kind[ra] != o->kind[rb]) return o->kind[ra] < o->kind[rb] ? -1 : 1;
    return ra < rb ? -1 : ra > rb;
}

/* Sorts the records IDX[0..N) by cmp_span: a natural merge sort, as the profilers
 * write each thread's spans almost in order (a few runs: the spans, then
 * the events, and a few spans written after their children), so that a
 * pass merges pairs of ascending runs; O(N log N) at worst. TMP has room
 * for N. */
static void sort_spans(const span_order *o, uint32_t *idx, uint32_t *tmp, size_t n)
{
    size_t sorted = 1;
    while (sorted < n && cmp_span(o, idx[sorted - 1], idx[sorted]) <= 0) sorted++;
    if (sorted >= n) return; /* the common case: one run, nothing to move */
    uint32_t *src = idx, *dst = tmp;
    for (;;) {
        size_t runs = 0;
        for (size_t a = 0; a < n;) {
            size_t m = a + 1;
            while (m < n && cmp_span(o, src[m - 1], src[m]) <= 0) m++;
            size_t b = m < n ? m + 1 : n;
            while (b < n && cmp_span(o, src[b - 1], src[b]) <= 0) b++;
            size_t i = a, j = m, k = a;
            while (i < m && j < b) dst[k++] = cmp_span(o, src[j], src[i]) < 0 ? src[j++] : src[i++];
            while (i < m) dst[k++] = src[i++];
            while (j < b) dst[k++] = src[j++];
            runs++;
            a = b;
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
        if (runs <= 1) break;
    }
    if (src != idx) memcpy(idx, src, n * sizeof *idx);
}

static tprof_opn_kind kind_of_cat(const char *c)
{
    if (!strcmp(c, "cpu_op")) return TPROF_OPN_CPU_OP;
    if (!strcmp(c, "python_function")) return TPROF_OPN_PYTHON;
    if (!strcmp(c, "user_annotation")) return TPROF_OPN_ANNOTATION;
    return TPROF_OPN_OTHER;
}

/* The node kind of a CPU event, cached per category: a trace has a handful. */
typedef struct {
    uint32_t cat[16];
    uint8_t kind[16];
    size_t n;
} cat_cache;

static tprof_opn_kind node_kind(const tprof_trace *t, cat_cache *cc, uint32_t cat)
{
    for (size_t i = 0; i < cc->n; i++)
        if (cc->cat[i] == cat) return (tprof_opn_kind)cc->kind[i];
    tprof_opn_kind k = kind_of_cat(tprof_trace_str(t, cat));
    if (cc->n < 16) {
        cc->cat[cc->n] = cat;
        cc->kind[cc->n++] = (uint8_t)k;
    }
    return k;
}

/* Triton's kernels are cpu_op spans with a stream arg around their launch:
 * host spans here (the launcher of that launch), as in TraceLens. */
static int is_host_span(const tprof_event *e)
{
    return (e->kind == TPROF_KIND_CPU || e->kind == TPROF_KIND_RUNTIME) && e->ph == 'X';
}

void tprof_op_tree_free(tprof_op_tree *tr)
{
    if (!tr) return;
    free(tr->rec);
    free(tr->parent);
    free(tr->end);
    free(tr->kind);
    free(tr->call_node);
    free(tr->call_launcher);
    free(tr->gpu_first);
    free(tr->gpu);
    free(tr->unlinked);
    memset(tr, 0, sizeof *tr);
}

/* The event's thread's index in the trace's thread list (sorted by pid,
 * tid and flags; every CPU and runtime event's thread is in it), or -1. */
static long thread_index(const tprof_trace_meta *m, const tprof_event *e)
{
    uint8_t flags = e->flags & (TPROF_EV_PID_STR | TPROF_EV_TID_STR);
    size_t lo = 0, hi = m->ncpu_tracks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const tprof_cpu_track *c = &m->cpu_tracks[mid];
        int less = c->pid != e->pid ? c->pid < e->pid : c->tid != e->tid ? c->tid < e->tid : c->flags < flags;
        if (less) lo = mid + 1;
        else hi = mid;
    }
    if (lo < m->ncpu_tracks && m->cpu_tracks[lo].pid == e->pid && m->cpu_tracks[lo].tid == e->tid &&
        m->cpu_tracks[lo].flags == flags)
        return (long)lo;
    return -1;
}

/* Nesting the spans of threads K0..K1 (thread k's nodes are the run of
 * the preorder up to AT[k]; their records in tr->rec), on one worker. */
typedef struct {
    tprof_op_tree *tr;
    const span_order *o;
    const size_t *at;
    const size_t *events_at; /* where thread k's events start, after its spans */
    const size_t *calls_at;  /* thread k's first runtime call (tr->call_node's index) */
    size_t k0, k1;
    uint32_t execute; /* the string id of "execute", or UINT32_MAX */
    int rc;
} nest_job;

/* Nests thread K's nodes [A, B), already in preorder: each node's parent is
 * the innermost open span that holds it, and each runtime call's launcher
 * the innermost cpu_op among the open spans (else itself). One pass: the
 * open spans' innermost launcher candidate is kept beside the stack, so
 * that a launcher costs no walk up the parents. Returns 0, or 1 when a
 * node is out of order (its thread is then sorted, and nested again). A
 * cpu_op named "execute" is a pass-through wrapper (the AOT runtime's),
 * never the launcher. */
static int nest_sorted(const nest_job *j, size_t k, size_t a, size_t b, uint32_t *stack, int64_t *stack_end,
                       uint32_t *stack_op)
{
    tprof_op_tree *tr = j->tr;
    size_t call = j->calls_at[k];
    const span_order *o = j->o;
    size_t depth = 0;
    int64_t prev_ts = INT64_MIN, prev_dur = 0;
    uint32_t prev_r = 0;
    uint8_t prev_kind = 0;
    for (size_t i = a; i < b; i++) {
        uint32_t r = tr->rec[i];
        const tprof_host_span *sp = r < tr->nspans ? &tr->spans[r] : NULL;
        const tprof_event *ev = sp ? NULL : &tr->events[r - tr->nspans];
        int64_t ts = sp ? sp->ts : ev->ts, dur = sp ? sp->dur : ev->dur;
        /* cmp_span's order within one thread, on what is loaded already */
        uint8_t kind = o->kind[r];
        if (i > a && (ts < prev_ts ||
                      (ts == prev_ts && (dur > prev_dur || (dur == prev_dur && (kind < prev_kind || (kind == prev_kind && r < prev_r)))))))
            return 1;
        prev_ts = ts;
        prev_dur = dur;
        prev_kind = kind;
        prev_r = r;
        tr->kind[i] = kind;
        int64_t end = tprof_end_ns(ts, dur);
        while (depth > 0 && end > stack_end[depth - 1]) tr->end[stack[--depth]] = (uint32_t)i; /* not holding it */
        uint32_t op = depth ? stack_op[depth - 1] : TPROF_OP_NONE;
        tr->parent[i] = depth ? stack[depth - 1] : TPROF_OP_NONE;
        if (kind == TPROF_OPN_RUNTIME) { /* a leaf: its calls come in preorder */
            tr->call_node[call] = (uint32_t)i;
            tr->call_launcher[call++] = op != TPROF_OP_NONE ? op : (uint32_t)i;
        }
        if (kind == TPROF_OPN_CPU_OP && (sp ? sp->name : ev->name) != j->execute) op = (uint32_t)i;
        stack_end[depth] = end;
        stack_op[depth] = op;
        stack[depth++] = (uint32_t)i;
    }
    while (depth > 0) tr->end[stack[--depth]] = (uint32_t)b;
    return 0;
}

/* Merges the sorted runs IDX[0..M) and IDX[M..N) through TMP; 1 when a
 * run is not sorted (nothing moved). */
static int merge_runs(const span_order *o, uint32_t *idx, uint32_t *tmp, size_t m, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (i != m && cmp_span(o, idx[i - 1], idx[i]) > 0) return 1;
    size_t i = 0, j = m, k = 0;
    while (i < m && j < n) tmp[k++] = cmp_span(o, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
    while (i < m) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
    return 0;
}

/* Thread K's nodes [A, B), its spans' records before MID and its events'
 * after: put in preorder (sorted by start and cmp_span's tie-breaks), then
 * nested. Profilers write a thread almost in order, so the spans and the
 * events are each one run, merged in one pass (a thread of spans alone is
 * nested at once); anything else is sorted. */
static void nest_thread(const nest_job *j, size_t k, size_t a, size_t mid, size_t b, uint32_t *stack,
                        int64_t *stack_end, uint32_t *stack_op)
{
    uint32_t *rec = j->tr->rec, *tmp = j->tr->parent + a; /* room until nest_sorted writes the parents */
    if (a < mid && mid < b && merge_runs(j->o, rec + a, tmp, mid - a, b - a)) sort_spans(j->o, rec + a, tmp, b - a);
    if (!nest_sorted(j, k, a, b, stack, stack_end, stack_op)) return;
    sort_spans(j->o, rec + a, tmp, b - a);
    (void)nest_sorted(j, k, a, b, stack, stack_end, stack_op);
}

static void *nest_run(void *arg)
{
    nest_job *j = arg;
    size_t most = 1;
    for (size_t k = j->k0; k < j->k1; k++) {
        size_t a = k ? j->at[k - 1] : 0;
        if (j->at[k] - a > most) most = j->at[k] - a;
    }
    uint32_t *stack = malloc(most * sizeof *stack);
    int64_t *stack_end = malloc(most * sizeof *stack_end); /* the open spans' ends */
    uint32_t *stack_op = malloc(most * sizeof *stack_op);  /* the innermost launcher candidate at each depth */
    j->rc = stack && stack_end && stack_op ? 0 : TPROF_ENOMEM;
    for (size_t k = j->k0; !j->rc && k < j->k1; k++)
        nest_thread(j, k, k ? j->at[k - 1] : 0, j->events_at[k], j->at[k], stack, stack_end, stack_op);
    free(stack);
    free(stack_end);
    free(stack_op);
    return NULL;
}


#define NOT_HOST 0xff /* a record's kind when it is not a host node */

/* The host records of T and its GPU events, as the tree's first pass
 * finds them: each record's node kind (NOT_HOST for the rest), the thread
 * of each event, the GPU events in event order; then the nodes in thread
 * order (tr->rec), AT[k] one past thread k's last node and EVENTS_AT[k]
 * where its events follow its spans. */
typedef struct {
    uint8_t *kind;       /* by record */
    uint32_t *ev_thread; /* by event: set for host events only */
    size_t *at, *events_at;
    size_t *calls_at;    /* thread k's first runtime call among all, in thread order */
    size_t n, ncalls;    /* host nodes, and the runtime calls among them */
    uint32_t *gpu;       /* GPU event indexes, in event order */
    size_t ngpu;
    int64_t corr_lo, corr_hi; /* the runtime calls' correlation ids (those with one): their range, */
    size_t ncorr;             /* and how many */
} host_records;

/* One of the two halves the records are read in (spans [S0, S1) and events
 * [E0, E1)): first counted per thread, then placed in thread order at the
 * places the counts give. Each half writes its own records' entries only. */
typedef struct {
    const tprof_trace *t;
    tprof_op_tree *tr;
    host_records *h;
    size_t s0, s1, e0, e1;
    size_t *spans_in, *events_in; /* per thread: this half's host spans and events */
    size_t *calls_in;             /* per thread: this half's runtime calls (of its events) */
    size_t *span_at, *event_at;   /* per thread: where they go next (placing) */
    uint32_t *gpu;                /* this half's GPU events */
    size_t ngpu;
    int64_t corr_lo, corr_hi;     /* this half's runtime calls' correlation ids */
    size_t ncorr;
    int placing;
} records_half;

/* Counting: each record's kind, each host event's thread, the counts per
 * thread, the GPU events. Spans and events that are CPU or runtime spans
 * on a thread of the trace's list are host records (every one the reader
 * stored). Placing: each host record to its thread's run. */
static void *records_run(void *arg)
{
    records_half *w = arg;
    const tprof_op_tree *tr = w->tr;
    uint8_t *kind = w->h->kind;
    uint32_t *ev_thread = w->h->ev_thread;
    if (w->placing) {
        for (size_t r = w->s0; r < w->s1; r++)
            if (kind[r] != NOT_HOST) w->tr->rec[w->span_at[tr->spans[r].thread]++] = (uint32_t)r;
        for (size_t i = w->e0; i < w->e1; i++)
            if (kind[tr->nspans + i] != NOT_HOST) w->tr->rec[w->event_at[ev_thread[i]]++] = (uint32_t)(tr->nspans + i);
        return NULL;
    }
    const tprof_trace_meta *m = tprof_trace_meta_get(w->t);
    size_t nthreads = m->ncpu_tracks;
    cat_cache cc = { .n = 0 };
    for (size_t r = w->s0; r < w->s1; r++) {
        const tprof_host_span *sp = &tr->spans[r];
        if (sp->thread >= nthreads) { /* not met: the reader's index */
            kind[r] = NOT_HOST;
            continue;
        }
        kind[r] = (uint8_t)node_kind(w->t, &cc, sp->cat);
        w->spans_in[sp->thread]++;
    }
    for (size_t i = w->e0; i < w->e1; i++) {
        const tprof_event *e = &tr->events[i];
        uint8_t *k = &kind[tr->nspans + i];
        *k = NOT_HOST;
        if (e->kind == TPROF_KIND_GPU) w->gpu[w->ngpu++] = (uint32_t)i;
        if (!is_host_span(e)) continue;
        long th = thread_index(m, e);
        if (th < 0) continue; /* not met: the reader lists every host event's thread */
        ev_thread[i] = (uint32_t)th;
        *k = e->kind == TPROF_KIND_RUNTIME ? TPROF_OPN_RUNTIME : (uint8_t)node_kind(w->t, &cc, e->cat);
        w->events_in[th]++;
        w->calls_in[th] += *k == TPROF_OPN_RUNTIME;
        if (e->kind == TPROF_KIND_RUNTIME && e->correlation >= 0) { /* for link_gpu, read here with the rest */
            if (e->correlation < w->corr_lo) w->corr_lo = e->correlation;
            if (e->correlation > w->corr_hi) w->corr_hi = e->correlation;
            w->ncorr++;
        }
    }
    return NULL;
}

/* Runs FN on A here and on B on a second thread when PARALLEL (here too
 * when no thread starts). */
static void run_both(void *(*fn)(void *), void *a, void *b, int parallel)
{
    pthread_t helper;
    int helped = parallel && pthread_create(&helper, NULL, fn, b) == 0;
    fn(a);
    if (helped) pthread_join(helper, NULL);
    else fn(b);
}

/* Finds the host records and puts them in thread order, in record order
 * within each thread's spans and its events: the records read in two
 * halves (on two threads from ALONE records on), counted, then placed. */
static int find_records(const tprof_trace *t, tprof_op_tree *tr, size_t alone, host_records *h)
{
    size_t nthreads = tprof_trace_meta_get(t)->ncpu_tracks, nev = tprof_trace_nevents(t), nt = nthreads ? nthreads : 1;
    h->kind = tprof_big_alloc(tr->nspans + nev, 1);
    h->ev_thread = tprof_big_alloc(nev, sizeof *h->ev_thread);
    h->gpu = tprof_big_alloc(nev, sizeof *h->gpu);
    h->at = calloc(nt, sizeof *h->at);
    h->events_at = calloc(nt, sizeof *h->events_at);
    h->calls_at = calloc(nt, sizeof *h->calls_at);
    size_t *counts = calloc(10 * nt, sizeof *counts); /* per half: spans_in, events_in, span_at, event_at, calls_in */
    if (!h->kind || !h->ev_thread || !h->gpu || !h->at || !h->events_at || !h->calls_at || !counts) {
        free(counts);
        return TPROF_ENOMEM;
    }
    records_half w[2];
    for (int k = 0; k < 2; k++)
        w[k] = (records_half){ .t = t, .tr = tr, .h = h, .s0 = k ? tr->nspans / 2 : 0,
                               .s1 = k ? tr->nspans : tr->nspans / 2, .e0 = k ? nev / 2 : 0, .e1 = k ? nev : nev / 2,
                               .spans_in = counts + (size_t)k * 5 * nt, .events_in = counts + ((size_t)k * 5 + 1) * nt,
                               .span_at = counts + ((size_t)k * 5 + 2) * nt,
                               .event_at = counts + ((size_t)k * 5 + 3) * nt,
                               .calls_in = counts + ((size_t)k * 5 + 4) * nt, .gpu = h->gpu + (k ? nev / 2 : 0),
                               .corr_lo = INT64_MAX, .corr_hi = INT64_MIN };
    int parallel = tr->nspans + nev >= alone;
    run_both(records_run, &w[0], &w[1], parallel);
    memmove(h->gpu + w[0].ngpu, w[1].gpu, w[1].ngpu * sizeof *h->gpu); /* the second half's after the first's */
    h->ngpu = w[0].ngpu + w[1].ngpu;
    h->corr_lo = w[0].corr_lo < w[1].corr_lo ? w[0].corr_lo : w[1].corr_lo;
    h->corr_hi = w[0].corr_hi > w[1].corr_hi ? w[0].corr_hi : w[1].corr_hi;
    h->ncorr = w[0].ncorr + w[1].ncorr;
    size_t n = 0;
    for (size_t k = 0; k < nthreads; k++) { /* thread k: its spans (first half's, second's), then its events */
        w[0].span_at[k] = n;
        w[1].span_at[k] = n += w[0].spans_in[k];
        h->events_at[k] = w[0].event_at[k] = n += w[1].spans_in[k];
        w[1].event_at[k] = n += w[0].events_in[k];
        h->at[k] = n += w[1].events_in[k];
        h->calls_at[k] = h->ncalls;
        h->ncalls += w[0].calls_in[k] + w[1].calls_in[k];
    }
    h->n = n;
    free(tr->rec);
    tr->rec = tprof_big_alloc(n, sizeof *tr->rec);
    if (!tr->rec) {
        free(counts);
        return TPROF_ENOMEM;
    }
    w[0].placing = w[1].placing = 1;
    run_both(records_run, &w[0], &w[1], parallel);
    free(counts);
    return 0;
}

/* Nests the host records, in thread order (find_records): each thread's
 * put in preorder (by start), then a span's parent is the innermost earlier
 * span of its thread that contains it. Threads are independent, so a
 * large trace's are split between this thread and one more. */
static int nest(const tprof_trace *t, host_records *h, size_t alone, tprof_op_tree *tr)
{
    size_t nthreads = tprof_trace_meta_get(t)->ncpu_tracks, n = h->n, *at = h->at;
    tr->parent = tprof_big_alloc(n, sizeof *tr->parent);
    tr->end = tprof_big_alloc(n, sizeof *tr->end);
    tr->kind = tprof_big_alloc(n, 1);
    tr->call_node = tprof_big_alloc(h->ncalls, sizeof *tr->call_node);
    tr->call_launcher = tprof_big_alloc(h->ncalls, sizeof *tr->call_launcher);
    if (!tr->parent || !tr->end || !tr->kind || !tr->call_node || !tr->call_launcher) return TPROF_ENOMEM;
    tr->ncalls = h->ncalls;
    const span_order so = { .tr = tr, .kind = h->kind };
    nest_job jobs[2] = { { .tr = tr, .o = &so, .at = at, .events_at = h->events_at, .calls_at = h->calls_at, .k0 = 0, .k1 = nthreads,
                           .execute = tprof_trace_str_id(t, "execute") } };
    jobs[1] = jobs[0];
    size_t split = 0; /* the second job's first thread: the halves as even as threads allow */
    for (size_t k = 1; k < nthreads; k++) {
        size_t d = at[k - 1] > n / 2 ? at[k - 1] - n / 2 : n / 2 - at[k - 1];
        size_t best = split ? (at[split - 1] > n / 2 ? at[split - 1] - n / 2 : n / 2 - at[split - 1]) : SIZE_MAX;
        if (d < best) split = k;
    }
    pthread_t helper;
    int helped = 0;
    if (n >= alone && split > 0 && split < nthreads) {
        jobs[0].k1 = jobs[1].k0 = split;
        helped = pthread_create(&helper, NULL, nest_run, &jobs[1]) == 0;
        if (!helped) jobs[0].k1 = nthreads;
    }
    nest_run(&jobs[0]);
    if (helped) pthread_join(helper, NULL);
    int rc = jobs[0].rc;
    if (!rc && helped) rc = jobs[1].rc;
    if (!rc) tr->n = n;
    return rc;
}

/* How far ahead link_gpu asks for the events it reads next (they are 96
 * bytes each, in node order: in file order within a thread only). */
#define LINK_AHEAD 16

/* Links each GPU event of H to the runtime call of its correlation id (a
 * repeated id: the call that comes last in preorder), grouped by call: a
 * counting sort, placed backwards so that each call's events stay in event
 * order. H: the GPU events and the calls' correlation ids' range and count
 * (find_records). */
static int link_gpu(const host_records *h, tprof_op_tree *tr)
{
    const tprof_event *ev = tr->events;
    const uint32_t *gpu = h->gpu;
    size_t ngpu = h->ngpu, ncalls = tr->ncalls;
    tprof_idmap by_corr;
    if (tprof_idmap_init(&by_corr, h->corr_lo, h->corr_hi, h->ncorr)) return TPROF_ENOMEM;
    int rc = TPROF_ENOMEM;
    uint32_t *call_of = NULL;
    for (size_t k = 0; k < ncalls; k++) {
        if (k + LINK_AHEAD < ncalls) __builtin_prefetch(&ev[tr->rec[tr->call_node[k + LINK_AHEAD]] - tr->nspans].correlation);
        const tprof_event *e = tprof_op_event(tr, tr->call_node[k]); /* a runtime call is an event */
        if (e->correlation >= 0 && tprof_idmap_put(&by_corr, e->correlation, (uint32_t)k)) goto out;
    }
    size_t nunlinked = 0;
    tr->gpu_first = tprof_big_calloc(ncalls + 1, sizeof *tr->gpu_first);
    tr->gpu = tprof_big_alloc(ngpu, sizeof *tr->gpu);
    tr->unlinked = tprof_big_alloc(ngpu, sizeof *tr->unlinked);
    call_of = tprof_big_alloc(ngpu, sizeof *call_of);
    if (!tr->gpu_first || !tr->gpu || !tr->unlinked || !call_of) goto out;
    /* count per call, sum (gpu_first[k]: one past call k's events), place backwards */
    for (size_t g = 0; g < ngpu; g++) {
        if (g + LINK_AHEAD < ngpu) __builtin_prefetch(&ev[gpu[g + LINK_AHEAD]].correlation);
        const tprof_event *e = &ev[gpu[g]];
        uint32_t call = e->correlation >= 0 ? tprof_idmap_get(&by_corr, e->correlation) : TPROF_IDMAP_NONE;
        if (call != TPROF_IDMAP_NONE) {
            call_of[g] = call;
            tr->gpu_first[call]++;
        } else {
            call_of[g] = TPROF_OP_NONE;
            tr->unlinked[nunlinked++] = gpu[g];
        }
    }
    for (size_t k = 1; k <= ncalls; k++) tr->gpu_first[k] += tr->gpu_first[k - 1];
    for (size_t g = ngpu; g-- > 0;)
        if (call_of[g] != TPROF_OP_NONE) tr->gpu[--tr->gpu_first[call_of[g]]] = gpu[g];
    tr->nunlinked = nunlinked;
    rc = 0;
out:
    free(call_of);
    tprof_idmap_free(&by_corr);
    return rc;
}

typedef struct {
    int rc;
    tprof_op_tree tr;
} shared_tree;

static void *shared_build(const tprof_trace *t)
{
    shared_tree *s = malloc(sizeof *s);
    if (s && (s->rc = tprof_op_tree_build(t, &s->tr)) == TPROF_ENOMEM) { /* tried again on the next call */
        free(s);
        s = NULL;
    }
    return s;
}

static void shared_free(void *p)
{
    shared_tree *s = p;
    if (!s->rc) tprof_op_tree_free(&s->tr);
    free(s);
}

const tprof_op_tree *tprof_op_tree_of(const tprof_trace *t, int *rc)
{
    const shared_tree *s = tprof_trace_derived(t, TPROF_DERIVED_OP_TREE, shared_build, shared_free);
    *rc = s ? s->rc : TPROF_ENOMEM;
    return s && !s->rc ? &s->tr : NULL;
}

int tprof_op_tree_build(const tprof_trace *t, tprof_op_tree *out)
{
    return tprof_op_tree_build_split(t, out, TPROF_OP_TREE_ALONE);
}

int tprof_op_tree_build_split(const tprof_trace *t, tprof_op_tree *out, size_t alone)
{
    memset(out, 0, sizeof *out);
    size_t nev = tprof_trace_nevents(t), nspans = tprof_trace_nspans(t);
    if (nev >= UINT32_MAX || nspans >= UINT32_MAX - nev) return TPROF_ELIMIT;
    out->spans = tprof_trace_spans(t);
    out->nspans = nspans;
    out->events = tprof_trace_events(t);
    host_records h = { 0 };
    int rc = find_records(t, out, alone, &h);
    if (!rc) rc = nest(t, &h, alone, out);
    free(h.ev_thread);
    free(h.events_at);
    free(h.calls_at);
    if (!rc) rc = link_gpu(&h, out);
    free(h.kind);
    free(h.at);
    free(h.gpu);
    if (rc) tprof_op_tree_free(out);
    return rc;
}
