/* Communication: collective time, its overlap with compute, and the exposed
 * part, per trace and per collective type (docs/METRICS.md). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "intervals.h"

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
    free(r);
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
