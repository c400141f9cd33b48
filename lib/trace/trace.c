/* Accessors of a read trace. */
#include "trace_internal.h"
#include "../util/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tprof_trace_free(tprof_trace *t)
{
    if (!t) return;
    for (int k = 0; k < TPROF_DERIVED_COUNT; k++)
        if (t->derived[k]) t->derived_free[k](t->derived[k]);
    for (int k = 0; k < TPROF_DERIVED_COUNT; k++) pthread_mutex_destroy(&t->derived_mu[k]);
    tprof_strtab_free(&t->strs);
    free(t->ev);
    free(t->devices);
    free(t->steps);
    free(t->tracks);
    free(t->threads);
    tprof_i64map_free(&t->thread_at);
    free(t->calls);
    free(t->mems);
    free(t->syncs);
    free(t->opargs);
    free(t->spans);
    free(t->inputs);
    free(t->input_slots);
    free(t->hccl_ops);
    free(t->hccl_links);
    free(t->splits);
    free(t->tasks);
    free(t->cat_counts);
    free(t->cats);
    free(t->kind_of_cat);
    free(t->class_of_name);
    free(t->class_of_cat);
    free(t->path);
    free(t);
}

const tprof_trace_meta *tprof_trace_meta_get(const tprof_trace *t) { return &t->meta; }
const char *tprof_trace_truncation(const tprof_trace *t) { return t->meta.truncated ? t->trunc_msg : ""; }
size_t tprof_trace_nevents(const tprof_trace *t) { return t->nev; }
const tprof_event *tprof_trace_events(const tprof_trace *t) { return t->ev; }
const char *tprof_trace_str(const tprof_trace *t, uint32_t id) { return tprof_strtab_get(&t->strs, id); }
size_t tprof_trace_nstrings(const tprof_trace *t) { return t->strs.count; }
uint32_t tprof_trace_str_id(const tprof_trace *t, const char *s) { return tprof_strtab_find(&t->strs, s, strlen(s)); }
size_t tprof_trace_ncalls(const tprof_trace *t) { return t->ncalls; }
const tprof_collective_call *tprof_trace_calls(const tprof_trace *t) { return t->calls; }
size_t tprof_trace_nspans(const tprof_trace *t) { return t->nspans; }
_Static_assert(sizeof(tprof_host_span) == 40, "a compact span is 40 bytes: millions of them are held");
const tprof_host_span *tprof_trace_spans(const tprof_trace *t) { return t->spans; }
size_t tprof_trace_nop_args(const tprof_trace *t) { return t->nopargs; }
const tprof_op_args *tprof_trace_op_args(const tprof_trace *t) { return t->opargs; }
size_t tprof_trace_nmem_samples(const tprof_trace *t) { return t->nmems; }
const tprof_memory_sample *tprof_trace_mem_samples(const tprof_trace *t) { return t->mems; }
size_t tprof_trace_nhccl_ops(const tprof_trace *t) { return t->nhccl_ops; }
const tprof_hccl_op *tprof_trace_hccl_ops(const tprof_trace *t) { return t->hccl_ops; }
size_t tprof_trace_nhccl_links(const tprof_trace *t) { return t->nhccl_links; }
const tprof_hccl_link *tprof_trace_hccl_links(const tprof_trace *t) { return t->hccl_links; }
size_t tprof_trace_nstep_splits(const tprof_trace *t) { return t->nsplits; }
size_t tprof_trace_ntask_infos(const tprof_trace *t) { return t->ntasks; }
const tprof_task_info *tprof_trace_task_infos(const tprof_trace *t) { return t->tasks; }
const tprof_step_split *tprof_trace_step_splits(const tprof_trace *t) { return t->splits; }
size_t tprof_trace_nsyncs(const tprof_trace *t) { return t->nsyncs; }
const tprof_sync_wait *tprof_trace_syncs(const tprof_trace *t) { return t->syncs; }

size_t tprof_trace_memory(const tprof_trace *t)
{
    return sizeof *t + t->strs.bytes + t->evcap * sizeof *t->ev + t->devcap * sizeof *t->devices +
           t->stepcap * sizeof *t->steps + t->trackcap * sizeof *t->tracks + t->threadcap * sizeof *t->threads + t->callcap * sizeof *t->calls + t->memcap * sizeof *t->mems + t->synccap * sizeof *t->syncs +
           t->opargcap * sizeof *t->opargs + t->spancap * sizeof *t->spans + t->hccl_opcap * sizeof *t->hccl_ops +
           t->hccl_linkcap * sizeof *t->hccl_links + t->splitcap * sizeof *t->splits + t->taskcap * sizeof *t->tasks +
           t->cat_counts_cap * sizeof *t->cat_counts + t->kind_of_cat_cap + t->class_of_name_cap +
           t->class_of_cat_cap + t->inputcap * sizeof *t->inputs + t->input_nslots * sizeof *t->input_slots;
}

const void *tprof_trace_derived(const tprof_trace *t, tprof_derived_kind k, void *(*build)(const tprof_trace *),
                                void (*destroy)(void *))
{
    tprof_trace *m = (tprof_trace *)t; /* a cache behind the const interface, under its lock */
    pthread_mutex_lock(&m->derived_mu[k]); /* one lock per kind: one built slowly holds up no other */
    if (!m->derived[k] && (m->derived[k] = build(t))) m->derived_free[k] = destroy;
    void *d = m->derived[k];
    pthread_mutex_unlock(&m->derived_mu[k]);
    return d;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* "ProfilerStep#550..#554 (5 steps)": what a --steps window that matched
 * nothing could have asked for. Numbers in a run are written as a range,
 * others listed (the first 8); unnumbered steps counted apart. */
const char *tprof_steps_held(const tprof_step *steps, size_t n, char *buf, size_t len)
{
    if (!len) return buf;
    buf[0] = 0;
    int64_t *num = malloc((n ? n : 1) * sizeof *num);
    size_t k = 0, unnumbered = 0;
    for (size_t i = 0; num && i < n; i++) {
        if (steps[i].number < 0) unnumbered++;
        else num[k++] = steps[i].number;
    }
    if (!num || n == 0) {
        snprintf(buf, len, n ? "%zu ProfilerStep spans" : "no ProfilerStep#N spans", n);
        free(num);
        return buf;
    }
    /* by number (steps are kept in time order) */
    qsort(num, k, sizeof *num, cmp_i64);
    size_t at = 0, shown = 0;
    for (size_t i = 0; i < k && at < len;) {
        size_t j = i;
        while (j + 1 < k && num[j + 1] <= num[j] + 1) j++;
        if (shown == 8) {
            at += (size_t)snprintf(buf + at, len - at, ", ...");
            break;
        }
        const char *sep = shown ? ", #" : "ProfilerStep#";
        if (num[j] != num[i]) at += (size_t)snprintf(buf + at, len - at, "%s%lld..#%lld", sep, (long long)num[i], (long long)num[j]);
        else at += (size_t)snprintf(buf + at, len - at, "%s%lld", sep, (long long)num[i]);
        shown++;
        i = j + 1;
    }
    if (at < len)
        at += (size_t)snprintf(buf + at, len - at, "%s(%zu step%s", k ? " " : "", n, n == 1 ? "" : "s");
    if (at < len && unnumbered) at += (size_t)snprintf(buf + at, len - at, ", %zu without a number", unnumbered);
    if (at < len) snprintf(buf + at, len - at, ")");
    free(num);
    return buf;
}

#define THREADS_SCANNED 16 /* up to this many threads a scan finds one; past it, a hash */

static int64_t thread_key(int64_t pid, int64_t tid, uint8_t flags)
{
    uint64_t h = tprof_i64_hash(pid) ^ tprof_i64_hash(tid ^ (int64_t)0x5bd1e995) * 31 ^ flags;
    return (int64_t)(h >> 1); /* never INT64_MIN, the map's empty slot */
}

static int same_thread(const tprof_cpu_track *c, int64_t pid, int64_t tid, uint8_t flags)
{
    return c->pid == pid && c->tid == tid && c->flags == flags;
}

size_t tprof_trace_thread(tprof_trace *t, int64_t pid, int64_t tid, uint8_t flags, uint64_t events)
{
    size_t n = t->nthreads, at = SIZE_MAX;
    int64_t key = thread_key(pid, tid, flags), v;
    if (t->thread_at.keys && tprof_i64map_get(&t->thread_at, key, &v) && same_thread(&t->threads[v], pid, tid, flags))
        at = (size_t)v;
    else if (!t->thread_at.keys || tprof_i64map_get(&t->thread_at, key, &v)) /* no index, or a collision: scan */
        for (size_t i = 0; i < n && at == SIZE_MAX; i++)
            if (same_thread(&t->threads[i], pid, tid, flags)) at = i;
    if (at != SIZE_MAX) {
        t->threads[at].events += events;
        return at;
    }
    if (n >= UINT32_MAX || tprof_grow((void **)&t->threads, &t->threadcap, n + 1, sizeof *t->threads)) return SIZE_MAX;
    t->threads[n] = (tprof_cpu_track){ pid, tid, flags, events };
    t->nthreads = n + 1;
    if (!t->thread_at.keys && t->nthreads > THREADS_SCANNED) { /* index the threads from now on */
        if (tprof_i64map_init(&t->thread_at, 2 * t->nthreads)) return SIZE_MAX;
        for (size_t i = t->nthreads; i-- > 0;) /* the first of a colliding key keeps it */
            if (tprof_i64map_put(&t->thread_at, thread_key(t->threads[i].pid, t->threads[i].tid, t->threads[i].flags),
                                 (int64_t)i))
                return SIZE_MAX;
    } else if (t->thread_at.keys && !tprof_i64map_get(&t->thread_at, key, &v) &&
               tprof_i64map_put(&t->thread_at, key, (int64_t)n))
        return SIZE_MAX;
    return n;
}
