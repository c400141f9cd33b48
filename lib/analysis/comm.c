/* Communication: collective time, its overlap with compute, and the exposed
 * part, per trace and per collective type (docs/METRICS.md). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "intervals.h"
#include "launch.h"
#include "comm_calls.h"
#include "hccl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Longest names first, so that AllReduce is not taken for Reduce. */
static const char *const collectives[] = {
    "ReduceScatter", "AllReduce", "AllGather", "AllToAll", "SendRecv", "Broadcast", "Reduce", "Send", "Recv",
};
#define NCOLL (sizeof collectives / sizeof *collectives)

/* HCCL's task names: hcom_allReduce__445_5, hcom_reduceScatter__328_1,
 * hcom_broadcast_, hcom_alltoallv_, hcom_send_, hcom_receive_ (the op
 * written in lower camel case after "hcom_"). */
static const char *hccl_type(const char *op)
{
    static const struct { const char *prefix, *type; } ops[] = {
        { "allreduce", "AllReduce" }, { "allgather", "AllGather" }, { "reducescatter", "ReduceScatter" },
        { "alltoall", "AllToAll" },   { "broadcast", "Broadcast" }, { "batchsendrecv", "SendRecv" },
        { "reduce", "Reduce" },       { "send", "Send" },           { "receive", "Recv" }, { "recv", "Recv" },
    };
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strncasecmp(op, ops[i].prefix, strlen(ops[i].prefix))) return ops[i].type;
    return "other";
}

const char *tprof_collective_type(const char *name)
{
    if (!strncmp(name, "hcom_", 5)) return hccl_type(name + 5);
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
int64_t tprof_dtype_size(const char *d)
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
double tprof_bus_factor(const char *name, int64_t n)
{
    if (n < 1) return 1.0;
    double f = (double)(n - 1) / (double)n;
    if (strstr(name, "allreduce") || strstr(name, "all_reduce") || strstr(name, "AllReduce")) return 2 * f;
    if (strstr(name, "allgather") || strstr(name, "all_gather") || strstr(name, "reduce_scatter") ||
        strstr(name, "alltoall") || strstr(name, "all_to_all") || strstr(name, "AllGather") ||
        strstr(name, "ReduceScatter") || strstr(name, "AllToAll"))
        return f;
    return 1.0;
}

/* The name of calls recorded without their collective's: the type of the
 * kernels they launched, in brackets; "[no kernels]" when none was found. */
static const char *const unnamed[] = {
    "[ReduceScatter]", "[AllReduce]", "[AllGather]", "[AllToAll]", "[SendRecv]", "[Broadcast]", "[Reduce]", "[Send]",
    "[Recv]", "[other]", "[no kernels]",
};

static const char *const algorithms[] = { "RING", "TREE", "NVLS", "COLLNET", "PAT" };
#define NALGO (sizeof algorithms / sizeof *algorithms)
_Static_assert(NALGO == TPROF_COMM_ALGOS, "comm_calls.h counts the algorithms");

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

int tprof_call_kernels(const tprof_trace *t, tprof_call_gpu *out)
{
    size_t nc = tprof_trace_ncalls(t), nev = tprof_trace_nevents(t);
    if (!nc) return 0;
    const tprof_collective_call *calls = tprof_trace_calls(t);
    const tprof_event *ev = tprof_trace_events(t);
    call_span *spans = malloc(nc * sizeof *spans);
    const int64_t *launched_by = tprof_launch_calls(t); /* the runtime call of each GPU event */
    if (!spans || !launched_by) {
        free(spans);
        return TPROF_ENOMEM;
    }
    for (size_t i = 0; i < nc; i++) {
        const tprof_event *e = &ev[calls[i].event];
        spans[i] = (call_span){ e->pid, e->tid, e->ts, tprof_end_ns(e->ts, e->dur), i };
        out[i] = (tprof_call_gpu){ .type = -1 };
    }
    qsort(spans, nc, sizeof *spans, cmp_span);
    /* each communication kernel belongs to the call whose span holds its launch, on the launching thread */
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *k = &ev[i];
        if (k->kind != TPROF_KIND_GPU || k->klass != TPROF_CLASS_COMM || launched_by[i] < 0) continue;
        const tprof_event *l = &ev[launched_by[i]];
        long s = span_at(spans, nc, l->pid, l->tid, l->ts);
        if (s < 0) continue;
        tprof_call_gpu *c = &out[spans[s].call];
        c->kernel_ns = tprof_sat_add(c->kernel_ns, k->dur);
        int64_t end = tprof_end_ns(k->ts, k->dur);
        if (!c->kernels || k->ts < c->first) c->first = k->ts;
        if (!c->kernels || end > c->last) c->last = end;
        c->kernels++;
        const char *name = tprof_trace_str(t, k->name);
        if (c->type < 0) c->type = type_index(tprof_collective_type(name));
        for (size_t a = 0; a < NALGO; a++)
            if (strstr(name, algorithms[a])) c->algo[a]++;
    }
    free(spans);
    return 0;
}

const char *tprof_collective_type_at(int type) { return type >= 0 && (size_t)type < NCOLL ? collectives[type] : "other"; }

/* The recorded calls per collective name, with the kernels they launched. */
static int calls_by_name(const tprof_trace *t, tprof_comm_result *r)
{
    size_t nc = tprof_trace_ncalls(t);
    if (!nc) return 0;
    const tprof_collective_call *calls = tprof_trace_calls(t);
    tprof_call_gpu *gpu = malloc(nc * sizeof *gpu);
    if (!gpu) return TPROF_ENOMEM;
    int rc = tprof_call_kernels(t, gpu);
    /* per collective name */
    r->calls = rc ? NULL : calloc(nc, sizeof *r->calls);
    if (!rc && !r->calls) rc = TPROF_ENOMEM;
    uint32_t (*votes)[NALGO] = rc ? NULL : calloc(nc, sizeof *votes);
    if (!rc && !votes) rc = TPROF_ENOMEM;
    for (size_t i = 0; i < nc && !rc; i++) {
        const char *name = tprof_trace_str(t, calls[i].name);
        if (!*name) name = unnamed[gpu[i].type < 0 ? (int)NCOLL + 1 : gpu[i].type]; /* named by its kernels */
        size_t row = 0;
        while (row < r->ncalls && strcmp(r->calls[row].name, name)) row++;
        if (row == r->ncalls) r->calls[r->ncalls++] = (tprof_comm_call){ .name = name, .algorithm = "" };
        tprof_comm_call *x = &r->calls[row];
        x->calls++;
        if (calls[i].group_size > x->group_size) x->group_size = calls[i].group_size;
        int64_t n = calls[i].in_nelems > calls[i].out_nelems ? calls[i].in_nelems : calls[i].out_nelems, bytes = 0;
        int64_t esize = tprof_dtype_size(tprof_trace_str(t, calls[i].dtype));
        int sized = n > 0 && esize > 0; /* else its size was not recorded */
        if (sized && __builtin_mul_overflow(n, esize, &bytes)) bytes = INT64_MAX;
        x->sized += (uint64_t)sized;
        x->bytes = tprof_sat_add(x->bytes, bytes);
        if (!gpu[i].kernel_ns) continue;
        x->matched++;
        x->matched_bytes = tprof_sat_add(x->matched_bytes, bytes);
        x->kernel_ns = tprof_sat_add(x->kernel_ns, gpu[i].kernel_ns);
        if (sized) {
            x->sized_matched++;
            x->sized_kernel_ns = tprof_sat_add(x->sized_kernel_ns, gpu[i].kernel_ns);
        }
        for (size_t a = 0; a < NALGO; a++) votes[row][a] += gpu[i].algo[a];
    }
    for (size_t row = 0; row < r->ncalls && !rc; row++) {
        tprof_comm_call *x = &r->calls[row];
        size_t best = 0;
        for (size_t a = 1; a < NALGO; a++)
            if (votes[row][a] > votes[row][best]) best = a;
        if (votes[row][best]) x->algorithm = algorithms[best];
        /* over the calls that recorded their sizes and launched kernels; unknown without any */
        x->algbw = x->sized_kernel_ns > 0 ? (double)x->matched_bytes / (double)x->sized_kernel_ns : NAN;
        x->busbw = x->algbw * tprof_bus_factor(x->name, x->group_size);
    }
    if (!rc && r->ncalls) qsort(r->calls, r->ncalls, sizeof *r->calls, cmp_call);
    free(votes);
    free(gpu);
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
    r->hta_overlap = NAN; /* the caller's, from tprof_hta_figures_of, when it wants HTA's */
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

/* ---- the comm result as typed tables -----------------------------------------
 * JSON: the totals, "types" and "calls". CSV: the types with a last row "all"
 * for the whole (its time the union of all communication), headed as
 * collective,kernels,... as it always was. */
enum { M_COMM, M_COMPUTE, M_OVERLAP, M_EXPOSED, M_OVERLAP_SHARE, M_HTA_OVERLAP, M_NCOLS };
static const tprof_col_desc comm_top_cols[M_NCOLS] = {
    [M_COMM] = TPROF_COL("comm_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "communication",
                         "union of the communication kernels' intervals"),
    [M_COMPUTE] = TPROF_COL("compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "compute",
                            "union of the compute kernels' intervals"),
    [M_OVERLAP] = TPROF_COL("overlap_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "overlapped", "time both ran"),
    [M_EXPOSED] = TPROF_COL("exposed_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "exposed",
                            "communication no compute kernel hid", .flags = TPROF_COLF_METRIC),
    [M_OVERLAP_SHARE] = TPROF_COL("overlap", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "overlap",
                                  "overlap_ns / comm_ns (0 without communication)", .num = "overlap_ns",
                                  .den = "comm_ns"),
    [M_HTA_OVERLAP] = TPROF_COL("hta_overlap", TPROF_COL_RATIO, TPROF_COMBINE_PER_RANK, NULL,
                                "the overlap as HTA computes it for the trace alone (its event set, last-step "
                                "filter, kernel types); null without communication",
                                .flags = TPROF_COLF_NO_TABLE),
};
enum { T_TYPE, T_COUNT, T_TIME, T_TOTAL, T_EXPOSED, T_NCOLS };
#define COMM_TYPE_COLS                                                                                            \
    [T_TYPE] = TPROF_COL("type", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, "collective",                             \
                         "AllReduce, AllGather, ReduceScatter, SendRecv, ... or other", .flags = TPROF_COLF_KEY, \
                         .csv_name = "collective"),                                                             \
    [T_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "kernels", "its kernels",                  \
                          .csv_name = "kernels"),                                                               \
    [T_TIME] = TPROF_COL("time_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "time", "union of their intervals"),   \
    [T_TOTAL] = TPROF_COL("total_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "sum", "their durations summed"),    \
    [T_EXPOSED] = TPROF_COL("exposed_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "exposed",                       \
                            "of the union, the time no compute kernel ran")
static const tprof_col_desc comm_type_cols[T_NCOLS] = { COMM_TYPE_COLS };
enum { K_NAME, K_CALLS, K_MATCHED, K_BYTES, K_MATCHED_BYTES, K_KERNEL, K_GROUP, K_ALGO, K_ALGBW, K_BUSBW, K_SIZED_NS,
       K_NCOLS };
static const tprof_col_desc comm_call_cols[K_NCOLS] = {
    [K_NAME] = TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "collective",
                         "as record_param_comms recorded it; calls recorded without it are named by their kernels' "
                         "type in brackets ([AllReduce], [SendRecv], ...; [no kernels] when none was found)",
                         .flags = TPROF_COLF_KEY),
    [K_CALLS] = TPROF_COL("calls", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "calls", "recorded calls"),
    [K_MATCHED] = TPROF_COL("matched", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "with kernels",
                            "calls whose communication kernels were found"),
    [K_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "bytes",
                          "message size of the calls that recorded it (null: none did)"),
    [K_MATCHED_BYTES] = TPROF_COL("matched_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, NULL,
                                  "of the matched calls (null: none recorded it)", .flags = TPROF_COLF_NO_TABLE),
    [K_KERNEL] = TPROF_COL("kernel_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "kernel time",
                           "the matched calls' kernels' GPU time"),
    [K_GROUP] = TPROF_COL("group_size", TPROF_COL_INT, TPROF_COMBINE_MAX, "group", "the largest group seen"),
    [K_ALGO] = TPROF_COL("algorithm", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "algorithm",
                         "the most common of RING, TREE, NVLS, COLLNET, PAT in the kernel names, or empty"),
    [K_ALGBW] = TPROF_COL("algbw_gbps", TPROF_COL_RATE, TPROF_COMBINE_WMEAN, "algbw GB/s",
                          "matched_bytes / the kernel time of the matched calls that recorded their size, 10^9 bytes per "
                          "second (null: no such call)", .weight = "sized_kernel_ns"),
    [K_BUSBW] = TPROF_COL("busbw_gbps", TPROF_COL_RATE, TPROF_COMBINE_WMEAN, "busbw GB/s",
                          "algbw times the collective's bus factor (null with algbw)", .weight = "sized_kernel_ns"),
    [K_SIZED_NS] = TPROF_COL("sized_kernel_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                             "the kernel time of the matched calls that recorded their size: the bandwidths' weight "
                             "across ranks",
                             .flags = TPROF_COLF_NO_TABLE | TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV),
};
static const tprof_table_desc comm_types_desc = { .name = "types", .doc = "per collective type, by time",
                                                  .cols = comm_type_cols, .ncols = T_NCOLS };
static const tprof_table_desc comm_calls_desc = { .name = "calls", .doc = "recorded collective calls",
                                                  .cols = comm_call_cols, .ncols = K_NCOLS };
static const tprof_table_desc comm_csv_desc = { .name = "types_and_all",
                                                .doc = "the types, then \"all\": the whole (its time the union)",
                                                .cols = comm_type_cols, .ncols = T_NCOLS, .no_json = 1 };
static const tprof_table_desc comm_top = { .name = "", .cols = comm_top_cols, .ncols = M_NCOLS };
static const tprof_table_desc *const comm_tables[] = {
    &comm_types_desc,      &comm_calls_desc,           &comm_csv_desc,         &tprof_hccl_ops_desc,
    &tprof_hccl_totals_desc, &tprof_hccl_transports_desc, &tprof_hccl_links_desc,
};
const tprof_result_desc tprof_comm_desc = { .name = "comm", .version = 3, .top = &comm_top, .tables = comm_tables,
                                            .ntables = 7, .csv_table = 3 };

static int add_type_row(tprof_rows *t, const tprof_comm_type *y)
{
    long k = tprof_rows_add(t);
    if (k < 0 || tprof_rows_set_s(t, (size_t)k, T_TYPE, y->type)) return TPROF_ENOMEM;
    tprof_rows_set_i(t, (size_t)k, T_COUNT, (int64_t)y->count);
    tprof_rows_set_i(t, (size_t)k, T_TIME, y->time_ns);
    tprof_rows_set_i(t, (size_t)k, T_TOTAL, y->total_ns);
    tprof_rows_set_i(t, (size_t)k, T_EXPOSED, y->exposed_ns);
    return 0;
}

int tprof_comm_tables(const tprof_comm_result *r, const tprof_trace *t, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_comm_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res);
    tprof_rows_set_i(top, 0, M_COMM, r->comm_ns);
    tprof_rows_set_i(top, 0, M_COMPUTE, r->compute_ns);
    tprof_rows_set_i(top, 0, M_OVERLAP, r->overlap_ns);
    tprof_rows_set_i(top, 0, M_EXPOSED, r->exposed_ns);
    tprof_rows_set_d(top, 0, M_OVERLAP_SHARE, r->overlap); /* 0 without communication, as the analysis says */
    if (r->hta_overlap == r->hta_overlap) tprof_rows_set_d(top, 0, M_HTA_OVERLAP, r->hta_overlap);
    int rc = 0;
    tprof_comm_type all = { "all", 0, 0, r->comm_ns, r->exposed_ns };
    for (size_t i = 0; !rc && i < r->ntypes; i++) {
        rc = add_type_row(tprof_result_table(res, 0), &r->types[i]);
        if (!rc) rc = add_type_row(tprof_result_table(res, 2), &r->types[i]);
        all.count += r->types[i].count;
        all.total_ns = tprof_sat_add(all.total_ns, r->types[i].total_ns);
    }
    if (!rc) rc = add_type_row(tprof_result_table(res, 2), &all);
    tprof_rows *calls = tprof_result_table(res, 1);
    for (size_t i = 0; !rc && i < r->ncalls; i++) {
        const tprof_comm_call *x = &r->calls[i];
        long k = tprof_rows_add(calls);
        if (k < 0 || tprof_rows_set_s(calls, (size_t)k, K_NAME, x->name) ||
            tprof_rows_set_s(calls, (size_t)k, K_ALGO, x->algorithm)) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(calls, (size_t)k, K_CALLS, (int64_t)x->calls);
        tprof_rows_set_i(calls, (size_t)k, K_MATCHED, (int64_t)x->matched);
        if (x->sized) tprof_rows_set_i(calls, (size_t)k, K_BYTES, x->bytes); /* else null: not recorded */
        if (x->sized_matched) tprof_rows_set_i(calls, (size_t)k, K_MATCHED_BYTES, x->matched_bytes);
        tprof_rows_set_i(calls, (size_t)k, K_KERNEL, x->kernel_ns);
        tprof_rows_set_i(calls, (size_t)k, K_SIZED_NS, x->sized_kernel_ns);
        tprof_rows_set_i(calls, (size_t)k, K_GROUP, x->group_size);
        if (!isnan(x->algbw)) tprof_rows_set_d(calls, (size_t)k, K_ALGBW, x->algbw);
        if (!isnan(x->busbw)) tprof_rows_set_d(calls, (size_t)k, K_BUSBW, x->busbw);
    }
    if (!rc && t)
        rc = tprof_hccl_tables(t, tprof_result_table(res, 3), tprof_result_table(res, 4), tprof_result_table(res, 5),
                               tprof_result_table(res, 6));
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
