/* Compares the fast and the generic event paths of the trace reader. */
#ifndef TPROF_PATH_DIFF_H
#define TPROF_PATH_DIFF_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/trace.h"

/* Whether the event X of trace A is the event Y of trace B (string ids
 * compared as strings). */
static inline int tprof_path_same_event(const tprof_trace *a, const tprof_event *ex, const tprof_trace *b,
                                        const tprof_event *ey)
{
    tprof_event x = *ex, y = *ey;
    int same = !strcmp(tprof_trace_str(a, x.name), tprof_trace_str(b, y.name)) &&
               !strcmp(tprof_trace_str(a, x.cat), tprof_trace_str(b, y.cat));
    x.name = y.name = x.cat = y.cat = 0;
    if (x.flags & TPROF_EV_PID_STR) same &= !strcmp(tprof_trace_str(a, (uint32_t)x.pid), tprof_trace_str(b, (uint32_t)y.pid)), x.pid = y.pid = 0;
    if (x.flags & TPROF_EV_TID_STR) same &= !strcmp(tprof_trace_str(a, (uint32_t)x.tid), tprof_trace_str(b, (uint32_t)y.tid)), x.tid = y.tid = 0;
    /* field by field: the records' padding bytes are not part of them
     * (a field added to tprof_event must be added here: the size says so) */
    _Static_assert(sizeof(tprof_event) == 96, "tprof_event changed: compare its new fields below");
    return same && x.ts == y.ts && x.dur == y.dur && x.pid == y.pid && x.tid == y.tid &&
           x.correlation == y.correlation && x.external_id == y.external_id && x.flow_id == y.flow_id &&
           x.bytes == y.bytes && x.device == y.device && x.stream == y.stream && x.ph == y.ph && x.kind == y.kind &&
           x.klass == y.klass && x.flags == y.flags;
}

static inline int tprof_path_same_args(const tprof_trace *a, const tprof_op_args *x, const tprof_trace *b,
                                       const tprof_op_args *y)
{
    int same = x->seq == y->seq && x->fwd_tid == y->fwd_tid;
    for (int k = 0; k < TPROF_OP_ARGS; k++) same &= !strcmp(tprof_trace_str(a, x->arg[k]), tprof_trace_str(b, y->arg[k]));
    return same;
}

/* Whether the event E of trace T, with op args A (or NULL), is one
 * TPROF_COMPACT_SPANS stores as a span (these traces have few threads). */
static inline int tprof_path_compacted(const tprof_event *e, const tprof_op_args *a)
{
    return e->kind == TPROF_KIND_CPU && e->ph == 'X' && !(e->flags & (TPROF_EV_STEP | TPROF_EV_MARKER | TPROF_EV_CALL | TPROF_EV_STREAM_ARG)) &&
           e->correlation < 0 && (!a || a->seq <= INT32_MAX);
}

/* A read with TPROF_COMPACT_SPANS (A) against one without (B): B's events
 * are A's events and spans, in file order, each span with the fields B's
 * event has, and its op args inline. 0 when they agree, else 1 with WHY. */
static inline int tprof_path_diff_spans(const tprof_trace *a, const tprof_trace *b, char *why, size_t len)
{
    const tprof_event *ea = tprof_trace_events(a), *eb = tprof_trace_events(b);
    const tprof_host_span *sa = tprof_trace_spans(a);
    const tprof_op_args *aa = tprof_trace_op_args(a), *ab = tprof_trace_op_args(b);
    size_t nea = tprof_trace_nevents(a), nsa = tprof_trace_nspans(a), naa = tprof_trace_nop_args(a);
    size_t neb = tprof_trace_nevents(b), nab = tprof_trace_nop_args(b);
    const tprof_trace_meta *ma = tprof_trace_meta_get(a);
    /* the calls and memory samples (compared but for their indexes) name the same events */
    const tprof_collective_call *ca = tprof_trace_calls(a), *cb = tprof_trace_calls(b);
    const tprof_memory_sample *ma_s = tprof_trace_mem_samples(a), *mb_s = tprof_trace_mem_samples(b);
    size_t ncalls = tprof_trace_ncalls(b), nmems = tprof_trace_nmem_samples(b), kc = 0, km = 0;
    size_t ie = 0, is = 0, ja = 0, jb = 0;
    for (size_t i = 0; i < neb; i++) {
        const tprof_op_args *yb = jb < nab && ab[jb].event == i ? &ab[jb++] : NULL;
        if (!tprof_path_compacted(&eb[i], yb)) {
            const tprof_op_args *xa = ja < naa && aa[ja].event == ie ? &aa[ja++] : NULL;
            int calls_ok = 1;
            for (; kc < ncalls && cb[kc].event == i; kc++) calls_ok &= ca[kc].event == ie;
            for (; km < nmems && mb_s[km].event == i; km++) calls_ok &= ma_s[km].event == ie;
            if (ie >= nea || !calls_ok || !tprof_path_same_event(a, &ea[ie], b, &eb[i]) || (xa == NULL) != (yb == NULL) ||
                (xa && !tprof_path_same_args(a, xa, b, yb))) {
                snprintf(why, len, "event %zu differs from compact read's event %zu", i, ie);
                return 1;
            }
            ie++;
            continue;
        }
        if (is >= nsa) {
            snprintf(why, len, "event %zu has no compact span", i);
            return 1;
        }
        const tprof_host_span *x = &sa[is];
        const tprof_event *y = &eb[i];
        /* its place among the events: as many before it as the compact read stored before it */
        int same = x->events_before == ie && x->thread < ma->ncpu_tracks && x->ts == y->ts && x->dur == y->dur && x->flags == (y->flags & (TPROF_EV_NO_DUR | TPROF_EV_BAD_DUR)) &&
                   !strcmp(tprof_trace_str(a, x->name), tprof_trace_str(b, y->name)) &&
                   !strcmp(tprof_trace_str(a, x->cat), tprof_trace_str(b, y->cat));
        if (same) { /* its thread */
            const tprof_cpu_track *c = &ma->cpu_tracks[x->thread];
            same = c->flags == (y->flags & (TPROF_EV_PID_STR | TPROF_EV_TID_STR));
            same &= c->flags & TPROF_EV_PID_STR ? !strcmp(tprof_trace_str(a, (uint32_t)c->pid), tprof_trace_str(b, (uint32_t)y->pid))
                                                : c->pid == y->pid;
            same &= c->flags & TPROF_EV_TID_STR ? !strcmp(tprof_trace_str(a, (uint32_t)c->tid), tprof_trace_str(b, (uint32_t)y->tid))
                                                : c->tid == y->tid;
        }
        tprof_op_args xs = { .event = i, .seq = x->seq, .fwd_tid = x->fwd_tid };
        memcpy(xs.arg, tprof_trace_op_inputs(a, x->inputs), sizeof xs.arg);
        tprof_op_args none = { .event = i, .seq = -1, .fwd_tid = -1 };
        /* a span keeps a negative sequence number or forward thread as none (-1), a large thread clamped */
        int8_t fwd = yb && yb->fwd_tid >= 0 ? (yb->fwd_tid > INT8_MAX ? INT8_MAX : (int8_t)yb->fwd_tid) : -1;
        if (yb) none = *yb, none.fwd_tid = fwd, none.seq = yb->seq < 0 ? -1 : yb->seq;
        if (!same || !tprof_path_same_args(a, &xs, b, &none)) {
            snprintf(why, len, "event %zu differs from compact span %zu (name %s)", i, is, tprof_trace_str(b, y->name));
            return 1;
        }
        is++;
    }
    if (ie != nea || is != nsa || ja != naa || jb != nab || kc != ncalls || km != nmems) {
        snprintf(why, len, "compact read has %zu/%zu events, %zu/%zu spans, %zu/%zu op args left over", nea - ie, nea,
                 nsa - is, nsa, naa - ja, naa);
        return 1;
    }
    return 0;
}

/* 0 when both reads agree (including on failing), else 1 with WHY set. */
static inline int tprof_path_diff(tprof_trace *a, int rca, tprof_trace *b, int rcb, char *why, size_t len)
{
    if (rca != rcb) {
        snprintf(why, len, "return codes differ: fast %d, generic %d", rca, rcb);
        return 1;
    }
    if (!a || !b) return (a == NULL) != (b == NULL);
    const tprof_trace_meta *ma = tprof_trace_meta_get(a), *mb = tprof_trace_meta_get(b);
    /* with spans the records' indexes differ: tprof_path_diff_spans maps them */
    int spans = tprof_trace_nspans(a) || tprof_trace_nspans(b);
#define SAME(cond, what)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            snprintf(why, len, "%s differs", what);       \
            return 1;                                     \
        }                                                 \
    } while (0)
#define STREQ(x, y) (((x) == NULL && (y) == NULL) || ((x) && (y) && !strcmp((x), (y))))
    SAME(ma->nevents == mb->nevents, "event count");
    SAME(!memcmp(ma->kind_counts, mb->kind_counts, sizeof ma->kind_counts), "kind counts");
    SAME(!memcmp(&ma->warn, &mb->warn, sizeof ma->warn), "warnings");
    SAME(ma->ts_min == mb->ts_min && ma->ts_max == mb->ts_max, "time span");
    SAME(ma->form == mb->form && ma->truncated == mb->truncated, "form or truncation");
    SAME(ma->bytes_json == mb->bytes_json && ma->bytes_in == mb->bytes_in, "bytes read");
    SAME(ma->has_schema_version == mb->has_schema_version && ma->schema_version == mb->schema_version, "schema");
    SAME(ma->has_distributed == mb->has_distributed && ma->rank == mb->rank && ma->world_size == mb->world_size &&
             STREQ(ma->backend, mb->backend),
         "distributedInfo");
    SAME(ma->has_base_time == mb->has_base_time && ma->base_time_ns == mb->base_time_ns, "base time");
    SAME(STREQ(ma->display_time_unit, mb->display_time_unit) && STREQ(ma->trace_name, mb->trace_name) &&
             STREQ(ma->note, mb->note),
         "display unit, trace name or note");
    SAME(ma->ndevices == mb->ndevices, "device count");
    for (size_t i = 0; i < ma->ndevices; i++) {
        const tprof_device *x = &ma->devices[i], *y = &mb->devices[i];
        SAME(x->id == y->id && STREQ(x->name, y->name) && x->total_memory == y->total_memory &&
                 x->num_sms == y->num_sms && x->compute_major == y->compute_major && x->compute_minor == y->compute_minor,
             "device");
    }
    SAME(ma->nsteps == mb->nsteps, "step count");
    for (size_t i = 0; i < ma->nsteps; i++)
        SAME(!memcmp(&ma->steps[i], &mb->steps[i], sizeof ma->steps[i]), "step");
    SAME(ma->ngpu_tracks == mb->ngpu_tracks, "GPU track count");
    for (size_t i = 0; i < ma->ngpu_tracks; i++)
        SAME(!memcmp(&ma->gpu_tracks[i], &mb->gpu_tracks[i], sizeof ma->gpu_tracks[i]), "GPU track");
    SAME(ma->ncats == mb->ncats, "category count");
    for (size_t i = 0; i < ma->ncats; i++)
        SAME(ma->cats[i].count == mb->cats[i].count &&
                 !strcmp(tprof_trace_str(a, ma->cats[i].cat), tprof_trace_str(b, mb->cats[i].cat)),
             "category");
    SAME(ma->ncpu_tracks == mb->ncpu_tracks, "thread count");
    for (size_t i = 0; i < ma->ncpu_tracks; i++) {
        const tprof_cpu_track *x = &ma->cpu_tracks[i], *y = &mb->cpu_tracks[i];
        int same = x->flags == y->flags && x->events == y->events;
        same &= x->flags & TPROF_EV_PID_STR ? !strcmp(tprof_trace_str(a, (uint32_t)x->pid), tprof_trace_str(b, (uint32_t)y->pid))
                                             : x->pid == y->pid;
        same &= x->flags & TPROF_EV_TID_STR ? !strcmp(tprof_trace_str(a, (uint32_t)x->tid), tprof_trace_str(b, (uint32_t)y->tid))
                                             : x->tid == y->tid;
        SAME(same, "thread");
    }
    SAME(tprof_trace_ncalls(a) == tprof_trace_ncalls(b), "collective call count");
    for (size_t i = 0; i < tprof_trace_ncalls(a); i++) {
        tprof_collective_call x = tprof_trace_calls(a)[i], y = tprof_trace_calls(b)[i];
        SAME(!strcmp(tprof_trace_str(a, x.name), tprof_trace_str(b, y.name)) &&
                 !strcmp(tprof_trace_str(a, x.dtype), tprof_trace_str(b, y.dtype)) && (x.event == y.event || spans) &&
                 !strcmp(tprof_trace_str(a, x.group), tprof_trace_str(b, y.group)) && x.seq == y.seq &&
                 x.in_nelems == y.in_nelems && x.out_nelems == y.out_nelems && x.group_size == y.group_size,
             "collective call");
    }
    SAME(tprof_trace_nmem_samples(a) == tprof_trace_nmem_samples(b), "memory sample count");
    for (size_t i = 0; i < tprof_trace_nmem_samples(a); i++) {
        tprof_memory_sample x = tprof_trace_mem_samples(a)[i], y = tprof_trace_mem_samples(b)[i];
        SAME((x.event == y.event || spans) && x.device == y.device && x.bytes == y.bytes &&
                 x.total_allocated == y.total_allocated && x.total_reserved == y.total_reserved,
             "memory sample");
    }
    SAME(tprof_trace_nsyncs(a) == tprof_trace_nsyncs(b), "sync wait count");
    for (size_t i = 0; i < tprof_trace_nsyncs(a); i++) {
        tprof_sync_wait x = tprof_trace_syncs(a)[i], y = tprof_trace_syncs(b)[i];
        SAME((x.event == y.event || spans) && x.stream == y.stream && x.record_correlation == y.record_correlation,
             "sync wait");
    }
#undef SAME
#undef STREQ
    if (spans) return tprof_path_diff_spans(a, b, why, len);
    if (tprof_trace_nop_args(a) != tprof_trace_nop_args(b)) {
        snprintf(why, len, "op args count differs");
        return 1;
    }
    for (size_t i = 0; i < tprof_trace_nop_args(a); i++) {
        tprof_op_args x = tprof_trace_op_args(a)[i], y = tprof_trace_op_args(b)[i];
        if (x.event != y.event || !tprof_path_same_args(a, &x, b, &y)) {
            snprintf(why, len, "op args %zu differ", i);
            return 1;
        }
    }
    size_t n = tprof_trace_nevents(a);
    if (n != tprof_trace_nevents(b)) {
        snprintf(why, len, "stored events differ: %zu/%zu", n, tprof_trace_nevents(b));
        return 1;
    }
    const tprof_event *ea = tprof_trace_events(a), *eb = tprof_trace_events(b);
    for (size_t i = 0; i < n; i++) {
        if (!tprof_path_same_event(a, &ea[i], b, &eb[i])) {
            snprintf(why, len, "event %zu differs (name %s)", i, tprof_trace_str(a, ea[i].name));
            return 1;
        }
    }
    return 0;
}

/* Reads PATH (or DATA/LEN when PATH is NULL) with OPTS; the trace, the
 * return code, and the error or truncation message. */
static inline int tprof_path_read(const char *path, const void *data, size_t len, const tprof_read_opts *opts,
                                  tprof_trace **t, char *msg, size_t msglen)
{
    msg[0] = 0;
    int rc = path ? tprof_trace_read(t, path, opts, msg, msglen)
                  : tprof_trace_read_mem(t, data, len, "input", opts, msg, msglen);
    if (rc == TPROF_ETRUNC) snprintf(msg, msglen, "%s", tprof_trace_truncation(*t));
    return rc;
}

/* The read paths checked against the generic path read in one pass: the
 * fast path in one pass, and the fast path on 3 threads with 256-byte
 * chunks (inputs from 8 chunks, or 1 when compressed, are cut). */
enum { TPROF_PATH_FAST = 0, TPROF_PATH_PARALLEL = 1, TPROF_PATH_COMPACT = 2, TPROF_PATH_NVARIANTS = 3 };
static const tprof_read_opts tprof_path_reference = { .keep = TPROF_KEEP_ALL, .generic_only = 1, .threads = 1 };
static const tprof_read_opts tprof_path_variants[TPROF_PATH_NVARIANTS] = {
    { .keep = TPROF_KEEP_ALL, .threads = 1 },
    { .keep = TPROF_KEEP_ALL, .threads = 3, .chunk_bytes = 256 },
    { .keep = TPROF_KEEP_ALL | TPROF_COMPACT_SPANS, .threads = 3, .chunk_bytes = 256 },
};
static const char *const tprof_path_variant_names[TPROF_PATH_NVARIANTS] = { "fast path", "parallel chunks",
                                                                           "compact spans in parallel chunks" };

/* Reads the input through variant V and compares it with the reference
 * read B (its return code RCB and message EB). 0 when they agree, else 1
 * with WHY set. The variant's trace goes to *KEEP when KEEP is not NULL
 * (the caller frees it), else it is freed. */
static inline int tprof_path_diff_variant(const char *path, const void *data, size_t len, int v, tprof_trace *b,
                                          int rcb, const char *eb, char *why, size_t wlen, tprof_trace **keep)
{
    tprof_trace *a = NULL;
    char ea[512], w[300];
    int rca = tprof_path_read(path, data, len, &tprof_path_variants[v], &a, ea, sizeof ea);
    int d = tprof_path_diff(a, rca, b, rcb, w, sizeof w);
    if (!d && strcmp(ea, eb)) {
        snprintf(w, sizeof w, "messages differ: '%.120s' vs '%.120s'", ea, eb);
        d = 1;
    }
    if (d) snprintf(why, wlen, "%s vs generic: %s", tprof_path_variant_names[v], w);
    if (keep) *keep = a;
    else tprof_trace_free(a);
    return d;
}

/* Every variant against the generic path; CHUNKS: how many chunks the
 * parallel read cut. */
static inline int tprof_path_diff_input(const char *path, const void *data, size_t len, char *why, size_t wlen,
                                        unsigned *chunks)
{
    tprof_trace *b = NULL;
    char eb[512];
    int rcb = tprof_path_read(path, data, len, &tprof_path_reference, &b, eb, sizeof eb);
    int d = tprof_path_diff_variant(path, data, len, TPROF_PATH_FAST, b, rcb, eb, why, wlen, NULL);
    if (!d) {
        tprof_trace *a = NULL;
        d = tprof_path_diff_variant(path, data, len, TPROF_PATH_PARALLEL, b, rcb, eb, why, wlen, &a);
        if (chunks) *chunks = a ? tprof_trace_meta_get(a)->chunks : 0;
        tprof_trace_free(a);
    }
    if (!d) d = tprof_path_diff_variant(path, data, len, TPROF_PATH_COMPACT, b, rcb, eb, why, wlen, NULL);
    tprof_trace_free(b);
    return d;
}

static inline int tprof_path_diff_file(const char *path, char *why, size_t len, unsigned *chunks)
{
    return tprof_path_diff_input(path, NULL, 0, why, len, chunks);
}

#endif
