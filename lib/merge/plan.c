/* The merge plan: a first read of every input (its GPU events and steps
 * only) gives each one its rank, its place in the output, its clock offset
 * and its step window. */
#include "merge_internal.h"
#include "trainprof/source.h"
#include "trainprof/analysis.h"
#include "trainprof/error.h"

#include <ctype.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#define COLL_MAX 256 /* collectives remembered per input for the alignment */

const char *tprof_align_name(tprof_align a)
{
    static const char *n[] = { "auto", "none", "base-time", "first-step", "collective" };
    return (unsigned)a < sizeof n / sizeof *n ? n[a] : "?";
}

int tprof_align_parse(const char *s, tprof_align *out)
{
    for (int a = TPROF_ALIGN_AUTO; a <= TPROF_ALIGN_COLLECTIVE; a++)
        if (strcmp(s, tprof_align_name((tprof_align)a)) == 0) {
            *out = (tprof_align)a;
            return 0;
        }
    return TPROF_EUSAGE;
}

static void problem(tprof_merge_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(tprof_merge_report *rep, const char *fmt, ...)
{
    size_t n = strlen(rep->problems);
    if (n + 2 >= sizeof rep->problems) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->problems + n, sizeof rep->problems - n - 1, fmt, ap);
    va_end(ap);
    n = strlen(rep->problems);
    rep->problems[n] = '\n';
    rep->problems[n + 1] = 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

typedef struct {
    int64_t ts, end;
    uint32_t name;
} coll;

static int cmp_coll(const void *a, const void *b)
{
    const coll *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* What the merge needs from one trace. */
static int digest(merge_input *in, const tprof_trace *t, const tprof_merge_opts *o)
{
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    in->has_rank_meta = m->has_distributed && m->rank >= 0;
    if (in->has_rank_meta) in->out->rank = m->rank;
    in->world_size = m->world_size;
    in->has_base = m->has_base_time;
    in->base_ns = m->base_time_ns;
    in->out->truncated = m->truncated;

    /* Kineto puts a GPU event on pid = device */
    in->gpu_pids = calloc(m->ngpu_tracks + 1, sizeof *in->gpu_pids);
    if (!in->gpu_pids) return TPROF_ENOMEM;
    for (size_t i = 0; i < m->ngpu_tracks; i++) {
        int64_t d = m->gpu_tracks[i].device;
        if (d >= 0 && (in->ngpu_pids == 0 || in->gpu_pids[in->ngpu_pids - 1] != d)) in->gpu_pids[in->ngpu_pids++] = d;
    }
    qsort(in->gpu_pids, in->ngpu_pids, sizeof *in->gpu_pids, cmp_i64);
    in->gpu_tracks = malloc((2 * m->ngpu_tracks + 1) * sizeof *in->gpu_tracks);
    if (!in->gpu_tracks) return TPROF_ENOMEM;
    for (size_t i = 0; i < m->ngpu_tracks; i++) { /* sorted by device, stream */
        in->gpu_tracks[2 * i] = m->gpu_tracks[i].device;
        in->gpu_tracks[2 * i + 1] = m->gpu_tracks[i].stream;
    }
    in->ngpu_tracks = m->ngpu_tracks;

    in->steps = malloc((m->nsteps + 1) * sizeof *in->steps);
    in->step_gpu_end = calloc(m->nsteps + 1, sizeof *in->step_gpu_end);
    if (!in->steps || !in->step_gpu_end) return TPROF_ENOMEM;
    if (m->nsteps) memcpy(in->steps, m->steps, m->nsteps * sizeof *m->steps);
    in->nsteps = m->nsteps;
    if (o->has_steps && m->nsteps) {
        tprof_steps_result *sr;
        int rc = tprof_steps(t, &sr);
        if (rc) return rc;
        for (size_t i = 0; i < sr->nsteps && i < in->nsteps; i++) in->step_gpu_end[i] = sr->steps[i].gpu_end_ns;
        tprof_steps_free(sr);
    }

    /* the first collective kernels, for --align collective */
    size_t n = tprof_trace_nevents(t), nc = 0;
    const tprof_event *ev = tprof_trace_events(t);
    coll *c = malloc(sizeof *c * (n ? n : 1));
    if (!c) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (ev[i].kind == TPROF_KIND_GPU && ev[i].klass == TPROF_CLASS_COMM && ev[i].dur > 0)
            c[nc++] = (coll){ ev[i].ts, tprof_end_ns(ev[i].ts, ev[i].dur), ev[i].name };
    qsort(c, nc, sizeof *c, cmp_coll);
    if (nc > COLL_MAX) nc = COLL_MAX;
    in->coll_names = calloc(nc + 1, sizeof *in->coll_names);
    in->coll_ends = calloc(nc + 1, sizeof *in->coll_ends);
    int rc = in->coll_names && in->coll_ends ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < nc; i++) {
        in->coll_names[i] = strdup(tprof_trace_str(t, c[i].name));
        in->coll_ends[i] = c[i].end;
        if (!in->coll_names[i]) rc = TPROF_ENOMEM;
        else in->ncoll++;
    }
    free(c);
    return rc;
}

void merge_input_free(merge_input *in)
{
    free(in->read_note);
    free(in->gpu_pids);
    free(in->gpu_tracks);
    free(in->steps);
    free(in->step_gpu_end);
    for (size_t i = 0; i < in->ncoll; i++) free(in->coll_names[i]);
    free(in->coll_names);
    free(in->coll_ends);
}

static int rank_wanted(const tprof_merge_opts *o, int64_t rank)
{
    if (!o->ranks) return 1;
    for (size_t i = 0; i < o->nranks; i++)
        if (o->ranks[i] == rank) return 1;
    return 0;
}

static const tprof_step *find_step(const merge_input *in, int64_t number, size_t *idx)
{
    for (size_t i = 0; i < in->nsteps; i++)
        if (in->steps[i].number == number) {
            if (idx) *idx = i;
            return &in->steps[i];
        }
    return NULL;
}

/* The step window [start of the first step in range, end of the last], and
 * for GPU events up to the end of the GPU work those steps launched. */
static void step_window(const tprof_merge_opts *o, merge_input *in)
{
    in->cpu_lo = in->gpu_lo = INT64_MIN;
    in->cpu_hi = in->gpu_hi = INT64_MAX;
    if (!o->has_steps) return;
    int64_t lo = INT64_MAX, hi = INT64_MIN, ghi = INT64_MIN;
    for (size_t i = 0; i < in->nsteps; i++) {
        const tprof_step *s = &in->steps[i];
        if (s->number < o->step_first || s->number > o->step_last) continue;
        int64_t end = tprof_end_ns(s->ts, s->dur);
        if (s->ts < lo) lo = s->ts;
        if (end > hi) hi = end;
        if (in->step_gpu_end[i] > ghi) ghi = in->step_gpu_end[i];
    }
    if (lo == INT64_MAX) {
        in->window_empty = 1;
        return;
    }
    in->cpu_lo = in->gpu_lo = lo;
    in->cpu_hi = hi;
    in->gpu_hi = ghi > hi ? ghi : hi;
    in->out->window_lo = lo;
    in->out->window_hi = in->gpu_hi;
}

/* Index K of the first collective that every included input runs under
 * the same kernel name, or -1. */
static long common_collective(merge_input *ins, const size_t *order, size_t n)
{
    size_t lim = SIZE_MAX;
    const merge_input *first = NULL;
    for (size_t i = 0; i < n; i++) {
        const merge_input *in = &ins[order[i]];
        if (!in->out->included) continue;
        if (!first) first = in;
        if (in->ncoll < lim) lim = in->ncoll;
    }
    if (!first) return -1;
    for (size_t k = 0; k < lim; k++) {
        int same = 1;
        for (size_t i = 0; i < n && same; i++) {
            const merge_input *in = &ins[order[i]];
            if (in->out->included && strcmp(in->coll_names[k], first->coll_names[k]) != 0) same = 0;
        }
        if (same) return (long)k;
    }
    return -1;
}

/* The first step number every included input has, or -1. */
static int common_step(merge_input *ins, const size_t *order, size_t n, int64_t *number)
{
    const merge_input *first = NULL;
    for (size_t i = 0; i < n && !first; i++)
        if (ins[order[i]].out->included) first = &ins[order[i]];
    if (!first) return -1;
    for (size_t s = 0; s < first->nsteps; s++) {
        int all = 1;
        for (size_t i = 0; i < n && all; i++)
            if (ins[order[i]].out->included && !find_step(&ins[order[i]], first->steps[s].number, NULL)) all = 0;
        if (all) {
            *number = first->steps[s].number;
            return 0;
        }
    }
    return -1;
}

static int align(const tprof_merge_opts *o, merge_input *ins, const size_t *order, size_t n,
                 tprof_merge_report *rep, char *errbuf, size_t errlen)
{
    merge_input *ref = NULL;
    size_t included = 0, with_base = 0;
    for (size_t i = 0; i < n; i++) {
        merge_input *in = &ins[order[i]];
        if (!in->out->included) continue;
        if (!ref) ref = in;
        included++;
        with_base += in->has_base;
    }
    tprof_align a = o->align;
    long k = -1;
    int64_t step = 0;
    if (a == TPROF_ALIGN_AUTO) {
        a = TPROF_ALIGN_NONE;
        if (included > 1 && (k = common_collective(ins, order, n)) >= 0) a = TPROF_ALIGN_COLLECTIVE;
        else if (included > 1 && with_base == included) a = TPROF_ALIGN_BASE_TIME;
        if (included > 1 && a == TPROF_ALIGN_NONE)
            problem(rep, "clock alignment: no collective kernel common to all ranks and no "
                         "baseTimeNanoseconds in every input: timestamps are kept as written");
    } else if (a == TPROF_ALIGN_COLLECTIVE && (k = common_collective(ins, order, n)) < 0) {
        snprintf(errbuf, errlen, "--align collective: no collective kernel (NCCL/RCCL/HCCL) with the same "
                                 "name at the same position in every included input");
        return TPROF_EUSAGE;
    } else if (a == TPROF_ALIGN_BASE_TIME && with_base != included) {
        snprintf(errbuf, errlen, "--align base-time: %zu of %zu inputs have no baseTimeNanoseconds",
                 included - with_base, included);
        return TPROF_EUSAGE;
    } else if (a == TPROF_ALIGN_FIRST_STEP && common_step(ins, order, n, &step) != 0) {
        snprintf(errbuf, errlen, "--align first-step: no ProfilerStep number common to every included input");
        return TPROF_EUSAGE;
    }
    rep->align = a;
    for (size_t i = 0; i < n; i++) {
        merge_input *in = &ins[order[i]];
        if (!in->out->included) continue;
        char *note = in->out->align_note;
        size_t nl = sizeof in->out->align_note;
        switch (a) {
        case TPROF_ALIGN_COLLECTIVE:
            in->out->offset_ns = tprof_span_ns(in->coll_ends[k], ref->coll_ends[k]);
            snprintf(note, nl, "end of collective kernel #%ld (%.80s)", k + 1, in->coll_names[k]);
            break;
        case TPROF_ALIGN_BASE_TIME:
            in->out->offset_ns = tprof_span_ns(ref->base_ns, in->base_ns);
            snprintf(note, nl, "baseTimeNanoseconds %lld", (long long)in->base_ns);
            break;
        case TPROF_ALIGN_FIRST_STEP:
            in->out->offset_ns = tprof_span_ns(find_step(in, step, NULL)->ts, find_step(ref, step, NULL)->ts);
            snprintf(note, nl, "start of ProfilerStep#%lld", (long long)step);
            break;
        default:
            in->out->offset_ns = 0;
            snprintf(note, nl, "as written");
            break;
        }
    }
    return 0;
}

/* An input's report row before its first read. */
static void init_row(merge_input *in, tprof_merge_rank *out, const char *path)
{
    in->out = out;
    out->path = path;
    out->rank = -1;
    out->window_lo = INT64_MIN;
    out->window_hi = INT64_MAX;
}

/* The first read of one input: what the plan needs from it. */
static int plan_input(const tprof_merge_opts *o, const tprof_read_opts *ro, merge_input *in, size_t i,
                      tprof_merge_rank *out, char *errbuf, size_t errlen)
{
    init_row(in, out, o->inputs[i]);
    tprof_trace *t;
    int rc = tprof_trace_read(&t, o->inputs[i], ro, errbuf, errlen);
    if (rc && rc != TPROF_ETRUNC) return rc;
    if (tprof_trace_meta_get(t)->form == TPROF_FORM_ASCEND_TABLE) { /* no JSON events to rewrite */
        snprintf(errbuf, errlen, "%s: an Ascend kernel table, not a trace merge can rewrite%s%s", o->inputs[i],
                 TPROF_HINT_MARK, "merge the run's trace_view.json files; the tables are read by trainprof kernels, "
                                  "summary or another trace command");
        tprof_trace_free(t);
        return TPROF_EFORMAT;
    }
    rc = digest(in, t, o);
    const char *note = tprof_trace_meta_get(t)->note;
    if (!rc && note && !(in->read_note = strdup(note))) rc = TPROF_ENOMEM;
    tprof_trace_free(t);
    if (rc) return rc;
    if (in->has_rank_meta) in->out->rank_source = TPROF_RANK_FROM_DISTRIBUTED;
    else if (tprof_rank_from_name(o->inputs[i], &in->out->rank)) in->out->rank_source = TPROF_RANK_FROM_NAME;
    else {
        in->out->rank_source = TPROF_RANK_FROM_ORDER;
        in->out->rank = (int64_t)i;
    }
    return 0;
}

/* The first reads, several inputs at once (one per core, at most
 * PLAN_MAX_AT_ONCE); each read then gets its share of the cores for its own
 * chunks. */
#define PLAN_MAX_AT_ONCE 8
typedef struct {
    const tprof_merge_opts *o;
    const tprof_read_opts *ro;
    merge_input *ins;
    tprof_merge_report *rep;
    int *rcs;
    char (*errs)[1024];
    atomic_size_t next;
} plan_pool;

static void *plan_worker(void *arg)
{
    plan_pool *p = arg;
    for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->o->ninputs;) {
        if (p->o->spread && !p->o->spread->mine[i]) { /* another process reads it; its findings come */
            init_row(&p->ins[i], &p->rep->ranks[i], p->o->inputs[i]);
            continue;
        }
        p->rcs[i] = plan_input(p->o, p->ro, &p->ins[i], i, &p->rep->ranks[i], p->errs[i], sizeof p->errs[i]);
    }
    return NULL;
}

/* ---- a spread plan: each process reads its own inputs, then every process
 * has every input's findings (what plan_input found, or its failure) ---- */

static int put(mbuf *b, const void *v, size_t n) { return mbuf_put(b, v, n); }
static int put_i64(mbuf *b, int64_t v) { return put(b, &v, sizeof v); }
static int put_str(mbuf *b, const char *s) /* NULL: -1 */
{
    int64_t n = s ? (int64_t)strlen(s) : -1;
    return put_i64(b, n) || (n > 0 && put(b, s, (size_t)n));
}

static int write_findings(mbuf *b, size_t i, const merge_input *in, int rc, const char *err)
{
    const tprof_merge_rank *r = in->out;
    int w = put_i64(b, (int64_t)i) || put_i64(b, rc) || put_str(b, err);
    if (w || rc) return w ? TPROF_ENOMEM : 0;
    w = put_i64(b, r->rank) || put_i64(b, r->rank_source) || put_i64(b, r->truncated) || put_i64(b, in->has_rank_meta) ||
        put_str(b, in->read_note) || put_i64(b, in->world_size) || put_i64(b, in->has_base) || put_i64(b, in->base_ns) ||
        put_i64(b, (int64_t)in->ngpu_pids) || put(b, in->gpu_pids, in->ngpu_pids * sizeof *in->gpu_pids) ||
        put_i64(b, (int64_t)in->ngpu_tracks) || put(b, in->gpu_tracks, 2 * in->ngpu_tracks * sizeof *in->gpu_tracks) ||
        put_i64(b, (int64_t)in->nsteps) || put(b, in->steps, in->nsteps * sizeof *in->steps) ||
        put(b, in->step_gpu_end, in->nsteps * sizeof *in->step_gpu_end) || put_i64(b, (int64_t)in->ncoll) ||
        put(b, in->coll_ends, in->ncoll * sizeof *in->coll_ends);
    for (size_t k = 0; !w && k < in->ncoll; k++) w = put_str(b, in->coll_names[k]);
    return w ? TPROF_ENOMEM : 0;
}

typedef struct {
    const char *p, *end;
    int bad;
} reader;

static const void *take(reader *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return NULL;
    }
    const char *at = r->p;
    r->p += n;
    return at;
}
static int64_t take_i64(reader *r)
{
    const void *v = take(r, sizeof(int64_t));
    int64_t x = 0;
    if (v) memcpy(&x, v, sizeof x);
    return x;
}
/* *OUT: a copy of N elements of SIZE bytes (at least one allocated) */
static int take_copy(reader *r, void **out, size_t n, size_t size)
{
    if (n > (size_t)(r->end - r->p) / (size ? size : 1)) return r->bad = 1, -1;
    const void *v = take(r, n * size);
    if (!v || !(*out = malloc(n * size + size))) return -1;
    memcpy(*out, v, n * size);
    return 0;
}
static char *take_str(reader *r)
{
    int64_t n = take_i64(r);
    if (n < 0 || r->bad) return NULL;
    const char *v = take(r, (size_t)n);
    char *s = v ? malloc((size_t)n + 1) : NULL;
    if (s) memcpy(s, v, (size_t)n), s[n] = 0;
    return s;
}

/* The findings of every input in R's bytes, each input once (SEEN). */
static int read_each(reader *r, merge_input *ins, size_t n, int *rcs, char (*errs)[1024], uint8_t *seen)
{
    while (r->p < r->end && !r->bad) {
        int64_t i = take_i64(r), rc = take_i64(r);
        char *err = take_str(r);
        if (r->bad || i < 0 || (size_t)i >= n || seen[i]) {
            free(err);
            return TPROF_EIO;
        }
        seen[i] = 1;
        rcs[i] = (int)rc;
        snprintf(errs[i], sizeof errs[i], "%s", err ? err : "");
        free(err);
        if (rc) continue;
        merge_input *in = &ins[i];
        tprof_merge_rank *o = in->out;
        o->rank = take_i64(r);
        o->rank_source = (tprof_rank_source)take_i64(r);
        o->truncated = (int)take_i64(r);
        in->has_rank_meta = (int)take_i64(r);
        in->read_note = take_str(r);
        in->world_size = take_i64(r);
        in->has_base = (int)take_i64(r);
        in->base_ns = take_i64(r);
        in->ngpu_pids = (size_t)take_i64(r);
        if (take_copy(r, (void **)&in->gpu_pids, in->ngpu_pids, sizeof *in->gpu_pids)) return TPROF_EIO;
        in->ngpu_tracks = (size_t)take_i64(r);
        if (take_copy(r, (void **)&in->gpu_tracks, 2 * in->ngpu_tracks, sizeof *in->gpu_tracks)) return TPROF_EIO;
        in->nsteps = (size_t)take_i64(r);
        if (take_copy(r, (void **)&in->steps, in->nsteps, sizeof *in->steps) ||
            take_copy(r, (void **)&in->step_gpu_end, in->nsteps, sizeof *in->step_gpu_end))
            return TPROF_EIO;
        size_t nc = (size_t)take_i64(r);
        if (take_copy(r, (void **)&in->coll_ends, nc, sizeof *in->coll_ends) ||
            !(in->coll_names = calloc(nc + 1, sizeof *in->coll_names)))
            return TPROF_EIO;
        for (size_t k = 0; k < nc; k++, in->ncoll++)
            if (!(in->coll_names[k] = take_str(r))) return TPROF_EIO;
    }
    return r->bad ? TPROF_EIO : 0;
}

static int read_findings(reader *r, merge_input *ins, size_t n, int *rcs, char (*errs)[1024])
{
    uint8_t *seen = calloc(n ? n : 1, 1); /* an input placed on two processes (their files differ) */
    if (!seen) return TPROF_ENOMEM;
    int rc = read_each(r, ins, n, rcs, errs, seen);
    free(seen);
    return rc;
}

/* Every process's findings of its own inputs to every process. */
static int share_findings(const tprof_merge_opts *o, merge_input *ins, int *rcs, char (*errs)[1024])
{
    mbuf b = { 0 };
    int rc = 0;
    for (size_t i = 0; !rc && i < o->ninputs; i++)
        if (o->spread->mine[i]) rc = write_findings(&b, i, &ins[i], rcs[i], errs[i]);
    char *all = NULL;
    size_t len = 0;
    /* every process shares, even after a failure here: the others wait for it */
    int shared = o->spread->share(o->spread->ctx, rc ? "" : (b.p ? b.p : ""), rc ? 0 : b.len, &all, &len);
    free(b.p);
    if (shared) return TPROF_EIO;
    if (!rc) {
        reader r = { all, all + len, 0 };
        /* every input as the shared bytes say, this process's own too: each
           process then plans from the same findings */
        for (size_t i = 0; i < o->ninputs; i++) {
            merge_input_free(&ins[i]);
            tprof_merge_rank *out = ins[i].out;
            memset(&ins[i], 0, sizeof ins[i]);
            ins[i].out = out;
            rcs[i] = TPROF_EIO;
            snprintf(errs[i], sizeof errs[i], "%s: no process sent what its first read found", o->inputs[i]);
        }
        rc = read_findings(&r, ins, o->ninputs, rcs, errs);
    }
    free(all);
    return rc;
}

void merge_plan_skip(const tprof_merge_opts *o)
{
    char *all = NULL;
    size_t len = 0;
    if (o->spread && !o->spread->share(o->spread->ctx, "", 0, &all, &len)) free(all);
}

int merge_plan(const tprof_merge_opts *o, merge_input *ins, size_t *order, tprof_merge_report *rep,
               char *errbuf, size_t errlen)
{
    size_t n = o->ninputs;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nthreads = o->threads > 0 ? (size_t)o->threads : cores > 0 ? (size_t)cores : 1;
    /* each input read at once holds its GPU events until digested: a few at a time */
    if (nthreads > PLAN_MAX_AT_ONCE) nthreads = PLAN_MAX_AT_ONCE;
    if (nthreads > n) nthreads = n ? n : 1;
    tprof_read_opts ro = { .keep = o->has_steps ? TPROF_STEPS_KEEP : TPROF_KEEP(TPROF_KIND_GPU),
                           .classifier = o->classifier,
                           .progress = o->progress,
                           .progress_ctx = o->progress_ctx,
                           .threads = cores > (long)nthreads ? (int)(cores / (long)nthreads) : 1 };
    plan_pool p = { .o = o, .ro = &ro, .ins = ins, .rep = rep, .rcs = calloc(n, sizeof *p.rcs),
                    .errs = calloc(n, sizeof *p.errs) };
    pthread_t *tid = calloc(nthreads, sizeof *tid);
    if (!p.rcs || !p.errs || !tid) {
        free(p.rcs);
        free(p.errs);
        free(tid);
        merge_plan_skip(o);
        return TPROF_ENOMEM;
    }
    atomic_init(&p.next, 0);
    size_t started = 0;
    for (; started + 1 < nthreads; started++)
        if (pthread_create(&tid[started], NULL, plan_worker, &p)) break;
    plan_worker(&p); /* this thread reads too */
    for (size_t t = 0; t < started; t++) pthread_join(tid[t], NULL);
    free(tid);
    int rc = o->spread ? share_findings(o, ins, p.rcs, p.errs) : 0;
    if (rc) {
        snprintf(errbuf, errlen, "merge: the processes' first reads could not be shared: %s", tprof_strerror(rc));
        free(p.rcs);
        free(p.errs);
        return rc;
    }
    /* the first failing input in argument order, whatever the threads (or processes) did */
    for (size_t i = 0; i < n && !rc; i++)
        if (p.rcs[i]) {
            rc = p.rcs[i];
            snprintf(errbuf, errlen, "%s", p.errs[i]);
        }
    free(p.rcs);
    free(p.errs);
    if (rc) return rc;

    int64_t *ranks = malloc((n ? n : 1) * sizeof *ranks);
    if (!ranks) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) ranks[i] = ins[i].out->rank; /* the argument index when unknown */
    rc = tprof_rank_order(ranks, n, order);
    free(ranks);
    if (rc) return rc;
    int64_t world = -1;
    for (size_t i = 0; i < n; i++) {
        merge_input *in = &ins[order[i]];
        in->pos = i;
        in->out->pid_base = (int64_t)(i + 1) * MERGE_PID_STRIDE;
        in->out->included = rank_wanted(o, in->out->rank);
        if (in->world_size > world) world = in->world_size;
        if (i && in->out->rank == ins[order[i - 1]].out->rank)
            problem(rep, "rank %lld appears twice: %s and %s (both kept, under separate pids)",
                    (long long)in->out->rank, ins[order[i - 1]].out->path, in->out->path);
        if (in->read_note) problem(rep, "%s: %s", in->out->path, in->read_note);
        step_window(o, in);
        if (in->window_empty && in->out->included) {
            char held[256];
            problem(rep, "%s: none of the requested steps is in this trace (only its metadata is kept): it holds %s",
                    in->out->path, tprof_steps_held(in->steps, in->nsteps, held, sizeof held));
        }
    }
    /* gaps: ranks of the world (or between the lowest and highest) with no input */
    if (!o->ranks && n) {
        int64_t lo = world > 0 ? 0 : ins[order[0]].out->rank, hi = world > 0 ? world - 1 : ins[order[n - 1]].out->rank;
        char missing[256] = "";
        size_t nm = 0, j = 0;
        for (int64_t r = lo; r <= hi && nm < 10000; r++) {
            while (j < n && ins[order[j]].out->rank < r) j++;
            if (j < n && ins[order[j]].out->rank == r) continue;
            size_t l = strlen(missing);
            if (nm++ < 16) snprintf(missing + l, sizeof missing - l, "%s%lld", l ? "," : "", (long long)r);
        }
        if (nm)
            problem(rep, "%zu rank%s of %s missing: %s%s", nm, nm > 1 ? "s" : "",
                    world > 0 ? "the world" : "the range", missing, nm > 16 ? ",..." : "");
    }
    return align(o, ins, order, n, rep, errbuf, errlen);
}
