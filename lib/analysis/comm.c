/* Communication: collective time, its overlap with compute, and the exposed
 * part, per trace and per collective type (docs/METRICS.md). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "intervals.h"
#include "launch.h"

#include <stdlib.h>
#include <string.h>

/* Longest names first, so that AllReduce is not taken for Reduce. */
static const char *const collectives[] = {
    "ReduceScatter", "AllReduce", "AllGather", "AllToAll", "SendRecv", "Broadcast", "Reduce", "Send", "Recv",
};
#define NCOLL (sizeof collectives / sizeof *collectives)

const char *tprof_collective_type(const char *name)
{
    /* ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_AllGather_RING_LL(...) */
    const char *p = strstr(name, "Kernel_");
    if (p)
        for (size_t i = 0; i < NCOLL; i++)
            if (!strncmp(p + 7, collectives[i], strlen(collectives[i]))) return collectives[i];
    /* otherwise the type anywhere in the name (templated kernels, RCCL, ...) */
    for (size_t i = 0; i < NCOLL; i++)
        if (strstr(name, collectives[i])) return collectives[i];
    return "other";
}

static int type_index(const char *type)
{
    for (size_t i = 0; i < NCOLL; i++)
        if (!strcmp(type, collectives[i])) return (int)i;
    return NCOLL;
}

void tprof_comm_free(tprof_comm_result *r)
{
    if (!r) return;
    free(r->types);
    free(r->calls);
    free(r);
}

/* Bytes per element of a recorded dtype, 0 when unknown. */
static int64_t dtype_size(const char *d)
{
    static const struct { const char *name; int64_t size; } sizes[] = {
        { "Float", 4 }, { "Double", 8 }, { "Half", 2 }, { "BFloat16", 2 }, { "Int", 4 }, { "Long", 8 },
        { "Short", 2 }, { "Byte", 1 }, { "Char", 1 }, { "Bool", 1 }, { "Float8_e4m3fn", 1 }, { "Float8_e5m2", 1 },
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if (!strcmp(d, sizes[i].name)) return sizes[i].size;
    return 0;
}

/* NCCL's bus factor: the share of the data each rank's links carry. */
static double bus_factor(const char *name, int64_t n)
{
    if (n < 1) return 1.0;
    double f = (double)(n - 1) / (double)n;
    if (strstr(name, "allreduce") || strstr(name, "all_reduce")) return 2 * f;
    if (strstr(name, "allgather") || strstr(name, "all_gather") || strstr(name, "reduce_scatter") ||
        strstr(name, "alltoall") || strstr(name, "all_to_all"))
        return f;
    return 1.0;
}

static const char *const algorithms[] = { "RING", "TREE", "NVLS", "COLLNET", "PAT" };
#define NALGO (sizeof algorithms / sizeof *algorithms)

typedef struct {
    int64_t pid, tid, ts, end;
    size_t call; /* index in tprof_trace_calls */
} call_span;

static int cmp_span(const void *a, const void *b)
{
    const call_span *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int cmp_call(const void *a, const void *b)
{
    const tprof_comm_call *x = a, *y = b;
    if (x->kernel_ns != y->kernel_ns) return x->kernel_ns > y->kernel_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The call span on (pid, tid) that holds AT, or -1. */
static long span_at(const call_span *s, size_t n, int64_t pid, int64_t tid, int64_t at)
{
    size_t lo = 0, hi = n; /* first span after (pid, tid, at) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const call_span *m = &s[mid];
        int after = m->pid > pid || (m->pid == pid && (m->tid > tid || (m->tid == tid && m->ts > at)));
        if (after) hi = mid;
        else lo = mid + 1;
    }
    if (lo == 0) return -1;
    const call_span *c = &s[lo - 1];
    return c->pid == pid && c->tid == tid && at < c->end ? (long)(lo - 1) : -1;
}

/* The recorded calls per collective name, with the kernels they launched. */
static int calls_by_name(const tprof_trace *t, tprof_comm_result *r)
{
    size_t nc = tprof_trace_ncalls(t), nev = tprof_trace_nevents(t);
    if (!nc) return 0;
    const tprof_collective_call *calls = tprof_trace_calls(t);
    const tprof_event *ev = tprof_trace_events(t);
    call_span *spans = malloc(nc * sizeof *spans);
    int64_t *kns = calloc(nc, sizeof *kns);            /* kernel time per call */
    uint32_t (*algo)[NALGO] = calloc(nc, sizeof *algo); /* algorithm votes per call */
    const int64_t *launched_by = tprof_launch_calls(t); /* the runtime call of each GPU event */
    if (!spans || !kns || !algo || !launched_by) {
        free(spans);
        free(kns);
        free(algo);
        return TPROF_ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; i < nc; i++) {
        const tprof_event *e = &ev[calls[i].event];
        spans[i] = (call_span){ e->pid, e->tid, e->ts, tprof_end_ns(e->ts, e->dur), i };
    }
    qsort(spans, nc, sizeof *spans, cmp_span);
    /* each communication kernel belongs to the call whose span holds its launch, on the launching thread */
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *k = &ev[i];
        if (k->kind != TPROF_KIND_GPU || k->klass != TPROF_CLASS_COMM || launched_by[i] < 0) continue;
        const tprof_event *l = &ev[launched_by[i]];
        long s = span_at(spans, nc, l->pid, l->tid, l->ts);
        if (s < 0) continue;
        size_t c = spans[s].call;
        kns[c] = tprof_sat_add(kns[c], k->dur);
        const char *name = tprof_trace_str(t, k->name);
        for (size_t a = 0; a < NALGO; a++)
            if (strstr(name, algorithms[a])) algo[c][a]++;
    }
    /* per collective name */
    r->calls = rc ? NULL : calloc(nc, sizeof *r->calls);
    if (!rc && !r->calls) rc = TPROF_ENOMEM;
    uint32_t (*votes)[NALGO] = rc ? NULL : calloc(nc, sizeof *votes);
    if (!rc && !votes) rc = TPROF_ENOMEM;
    for (size_t i = 0; i < nc && !rc; i++) {
        const char *name = tprof_trace_str(t, calls[i].name);
        size_t row = 0;
        while (row < r->ncalls && strcmp(r->calls[row].name, name)) row++;
        if (row == r->ncalls) r->calls[r->ncalls++] = (tprof_comm_call){ .name = name, .algorithm = "" };
        tprof_comm_call *x = &r->calls[row];
        x->calls++;
        if (calls[i].group_size > x->group_size) x->group_size = calls[i].group_size;
        int64_t n = calls[i].in_nelems > calls[i].out_nelems ? calls[i].in_nelems : calls[i].out_nelems, bytes = 0;
        if (n > 0 && __builtin_mul_overflow(n, dtype_size(tprof_trace_str(t, calls[i].dtype)), &bytes)) bytes = INT64_MAX;
        x->bytes = tprof_sat_add(x->bytes, bytes);
        if (!kns[i]) continue;
        x->matched++;
        x->matched_bytes = tprof_sat_add(x->matched_bytes, bytes);
        x->kernel_ns = tprof_sat_add(x->kernel_ns, kns[i]);
        for (size_t a = 0; a < NALGO; a++) votes[row][a] += algo[i][a];
    }
    for (size_t row = 0; row < r->ncalls && !rc; row++) {
        tprof_comm_call *x = &r->calls[row];
        size_t best = 0;
        for (size_t a = 1; a < NALGO; a++)
            if (votes[row][a] > votes[row][best]) best = a;
        if (votes[row][best]) x->algorithm = algorithms[best];
        x->algbw = x->kernel_ns > 0 ? (double)x->matched_bytes / (double)x->kernel_ns : 0.0;
        x->busbw = x->algbw * bus_factor(x->name, x->group_size);
    }
    if (!rc && r->ncalls) qsort(r->calls, r->ncalls, sizeof *r->calls, cmp_call);
    free(votes);
    free(spans);
    free(kns);
    free(algo);
    return rc;
}

static int cmp_type(const void *a, const void *b)
{
    const tprof_comm_type *x = a, *y = b;
    if (x->time_ns != y->time_ns) return x->time_ns > y->time_ns ? -1 : 1;
    return strcmp(x->type, y->type);
}

int tprof_comm(const tprof_trace *t, tprof_comm_result **out)
{
    *out = NULL;
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t), nc = 0, nk = 0;
    tprof_comm_result *r = calloc(1, sizeof *r);
    tprof_interval *comm = malloc((nev ? nev : 1) * sizeof *comm);
    tprof_interval *comp = malloc((nev ? nev : 1) * sizeof *comp);
    int *type_of = malloc((nev ? nev : 1) * sizeof *type_of);
    tprof_interval *tmp = malloc((nev ? nev : 1) * sizeof *tmp);
    if (!r || !comm || !comp || !type_of || !tmp) goto oom;
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        if (e->kind != TPROF_KIND_GPU) continue;
        tprof_interval iv = { e->ts, tprof_end_ns(e->ts, e->dur) };
        if (e->klass == TPROF_CLASS_COMPUTE) comp[nk++] = iv;
        else if (e->klass == TPROF_CLASS_COMM) {
            type_of[nc] = type_index(tprof_collective_type(tprof_trace_str(t, e->name)));
            comm[nc++] = iv;
        }
    }
    /* per type, before the lists are merged */
    tprof_comm_type types[NCOLL + 1];
    memset(types, 0, sizeof types);
    size_t nmk = tprof_interval_merge(comp, nk);
    for (size_t k = 0; k <= NCOLL; k++) {
        size_t m = 0;
        for (size_t i = 0; i < nc; i++)
            if (type_of[i] == (int)k) {
                tmp[m++] = comm[i];
                types[k].total_ns = tprof_sat_add(types[k].total_ns, tprof_span_ns(comm[i].start, comm[i].end));
            }
        types[k].type = k < NCOLL ? collectives[k] : "other";
        types[k].count = m;
        size_t mm = tprof_interval_merge(tmp, m);
        for (size_t i = 0; i < mm; i++) types[k].time_ns = tprof_sat_add(types[k].time_ns, tprof_span_ns(tmp[i].start, tmp[i].end));
        types[k].exposed_ns = types[k].time_ns - tprof_interval_overlap(tmp, mm, comp, nmk);
        if (m) r->ntypes++;
    }
    r->types = calloc(r->ntypes ? r->ntypes : 1, sizeof *r->types);
    if (!r->types) goto oom;
    size_t o = 0;
    for (size_t k = 0; k <= NCOLL; k++)
        if (types[k].count) r->types[o++] = types[k];
    if (r->ntypes) qsort(r->types, r->ntypes, sizeof *r->types, cmp_type);
    /* the whole: union of communication against union of compute */
    size_t nmc = tprof_interval_merge(comm, nc);
    for (size_t i = 0; i < nmc; i++) r->comm_ns = tprof_sat_add(r->comm_ns, tprof_span_ns(comm[i].start, comm[i].end));
    for (size_t i = 0; i < nmk; i++) r->compute_ns = tprof_sat_add(r->compute_ns, tprof_span_ns(comp[i].start, comp[i].end));
    r->overlap_ns = tprof_interval_overlap(comm, nmc, comp, nmk);
    r->exposed_ns = r->comm_ns - r->overlap_ns;
    r->overlap = r->comm_ns > 0 ? (double)r->overlap_ns / (double)r->comm_ns : 0.0;
    if (calls_by_name(t, r)) goto oom;
    free(comm);
    free(comp);
    free(type_of);
    free(tmp);
    *out = r;
    return 0;
oom:
    free(comm);
    free(comp);
    free(type_of);
    free(tmp);
    tprof_comm_free(r);
    return TPROF_ENOMEM;
}
