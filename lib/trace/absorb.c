/* Appending one chunk's trace to the trace of the chunks before it: string
 * ids are re-interned, counts add up, tracks and threads merge. */
#include "reader_internal.h"

#include <stdint.h>

#include "../util/big.h"

static int64_t remap_id(const uint32_t *map, uint32_t id) { return map[id]; }

static void add_gpu_track(tprof_trace *t, const tprof_gpu_track *g)
{
    for (size_t i = 0; i < t->ntracks; i++)
        if (t->tracks[i].device == g->device && t->tracks[i].stream == g->stream) {
            t->tracks[i].events += g->events;
            return;
        }
    if (tprof_grow((void **)&t->tracks, &t->trackcap, t->ntracks + 1, sizeof *t->tracks)) return;
    t->tracks[t->ntracks++] = *g;
}

/* The thread's index in T's threads, or SIZE_MAX (out of memory). */
static size_t add_thread(tprof_trace *t, const tprof_cpu_track *c)
{
    return tprof_trace_thread(t, c->pid, c->tid, c->flags, c->events);
}

int tprof_trace_reserve(tprof_trace *t, size_t nev, size_t nspans)
{
    size_t evcap = t->evcap, spancap = t->spancap;
    if (tprof_grow_items((void **)&t->ev, &t->evcap, nev, sizeof *t->ev) ||
        tprof_grow_items((void **)&t->spans, &t->spancap, nspans, sizeof *t->spans))
        return TPROF_ENOMEM;
    if (t->evcap != evcap) tprof_huge_pages(t->ev, t->evcap * sizeof *t->ev);
    if (t->spancap != spancap) tprof_huge_pages(t->spans, t->spancap * sizeof *t->spans);
    return 0;
}

int tprof_trace_absorb(tprof_trace *dst, const tprof_trace *src)
{
    size_t ns = src->strs.count;
    uint32_t *map = malloc((ns ? ns : 1) * sizeof *map);
    if (!map) return TPROF_ENOMEM;
    for (size_t i = 0; i < ns; i++) {
        const char *s = tprof_strtab_get(&src->strs, (uint32_t)i);
        map[i] = tprof_strtab_intern_hashed(&dst->strs, s, src->strs.lens[i], src->strs.hashes[i]);
        if (map[i] == UINT32_MAX) {
            free(map);
            return TPROF_ENOMEM;
        }
    }
    tprof_trace_meta *d = &dst->meta;
    const tprof_trace_meta *s = &src->meta;

    /* collective calls: their events are appended next, after dst's */
    if (tprof_grow_items((void **)&dst->calls, &dst->callcap, dst->ncalls + src->ncalls, sizeof *dst->calls)) goto oom;
    for (size_t i = 0; i < src->ncalls; i++) {
        tprof_collective_call c = src->calls[i];
        c.event += dst->nev;
        c.name = map[c.name];
        c.dtype = map[c.dtype];
        c.group = map[c.group];
        c.in_splits = map[c.in_splits];
        c.out_splits = map[c.out_splits];
        c.group_ranks = map[c.group_ranks];
        dst->calls[dst->ncalls++] = c;
    }
    /* [memory] samples likewise */
    if (tprof_grow_items((void **)&dst->mems, &dst->memcap, dst->nmems + src->nmems, sizeof *dst->mems)) goto oom;
    for (size_t i = 0; i < src->nmems; i++) {
        tprof_memory_sample m = src->mems[i];
        m.event += dst->nev;
        dst->mems[dst->nmems++] = m;
    }
    /* sync waits likewise */
    if (tprof_grow_items((void **)&dst->syncs, &dst->synccap, dst->nsyncs + src->nsyncs, sizeof *dst->syncs)) goto oom;
    for (size_t i = 0; i < src->nsyncs; i++) {
        tprof_sync_wait w = src->syncs[i];
        w.event += dst->nev;
        dst->syncs[dst->nsyncs++] = w;
    }
    /* op args likewise */
    if (tprof_grow_items((void **)&dst->opargs, &dst->opargcap, dst->nopargs + src->nopargs, sizeof *dst->opargs))
        goto oom;
    for (size_t i = 0; i < src->nopargs; i++) {
        tprof_op_args a = src->opargs[i];
        a.event += dst->nev;
        for (int k = 0; k < TPROF_OP_ARGS; k++) a.arg[k] = map[a.arg[k]];
        dst->opargs[dst->nopargs++] = a;
    }
    /* events, in order */
    size_t events_base = dst->nev; /* the chunk's spans count their events from here */
    if (tprof_grow_items((void **)&dst->ev, &dst->evcap, dst->nev + src->nev, sizeof *dst->ev)) goto oom;
    for (size_t i = 0; i < src->nev; i++) {
        tprof_event e = src->ev[i];
        e.name = map[e.name];
        e.cat = map[e.cat];
        e.task = map[e.task];
        if (e.flags & TPROF_EV_PID_STR) e.pid = remap_id(map, (uint32_t)e.pid);
        if (e.flags & TPROF_EV_TID_STR) e.tid = remap_id(map, (uint32_t)e.tid);
        dst->ev[dst->nev++] = e;
    }
    /* counts */
    d->nevents += s->nevents;
    for (int k = 0; k < TPROF_KIND_COUNT; k++) d->kind_counts[k] += s->kind_counts[k];
    for (size_t i = 0; i < src->cat_counts_cap; i++) {
        if (!src->cat_counts[i]) continue;
        uint32_t c = map[i];
        if (tprof_grow((void **)&dst->cat_counts, &dst->cat_counts_cap, (size_t)c + 1, sizeof *dst->cat_counts))
            goto oom;
        dst->cat_counts[c] += src->cat_counts[i];
    }
    d->warn.dur_missing += s->warn.dur_missing;
    d->warn.dur_negative += s->warn.dur_negative;
    d->warn.dur_absurd += s->warn.dur_absurd;
    d->warn.dur_invalid += s->warn.dur_invalid;
    d->warn.ts_missing += s->warn.ts_missing;
    d->warn.ts_bad += s->warn.ts_bad;
    d->ts_sub_us += s->ts_sub_us;
    d->ts_absent += s->ts_absent;
    if (s->step_name_ts_max > d->step_name_ts_max) d->step_name_ts_max = s->step_name_ts_max;
    d->warn.non_object_events += s->warn.non_object_events;
    if (s->warn.first_offset < d->warn.first_offset) d->warn.first_offset = s->warn.first_offset;
    if (s->ts_min < d->ts_min) d->ts_min = s->ts_min;
    if (s->ts_max > d->ts_max) d->ts_max = s->ts_max;
    /* steps (sorted when the read ends), tracks, threads */
    if (tprof_grow_items((void **)&dst->steps, &dst->stepcap, dst->nsteps + src->nsteps, sizeof *dst->steps)) goto oom;
    for (size_t i = 0; i < src->nsteps; i++) dst->steps[dst->nsteps++] = src->steps[i];
    for (size_t i = 0; i < src->ntracks; i++) add_gpu_track(dst, &src->tracks[i]);
    /* threads, and the compact spans on them (thread indexes are dst's) */
    uint32_t *thread_map = malloc((src->nthreads ? src->nthreads : 1) * sizeof *thread_map);
    if (!thread_map) goto oom;
    for (size_t i = 0; i < src->nthreads; i++) {
        tprof_cpu_track c = src->threads[i];
        if (c.flags & TPROF_EV_PID_STR) c.pid = remap_id(map, (uint32_t)c.pid);
        if (c.flags & TPROF_EV_TID_STR) c.tid = remap_id(map, (uint32_t)c.tid);
        size_t at = add_thread(dst, &c);
        thread_map[i] = (uint32_t)at;
        if (at == SIZE_MAX) {
            free(thread_map);
            goto oom;
        }
    }
    /* the spans' inputs: each of the chunk's tuples once, its strings dst's */
    uint32_t *inputs_map = malloc((src->ninputs ? src->ninputs : 1) * sizeof *inputs_map);
    if (!inputs_map || tprof_grow_items((void **)&dst->spans, &dst->spancap, dst->nspans + src->nspans, sizeof *dst->spans)) {
        free(thread_map);
        free(inputs_map);
        goto oom;
    }
    inputs_map[0] = 0;
    for (size_t k = 1; k < src->ninputs; k++) {
        uint32_t arg[TPROF_OP_ARGS];
        for (int j = 0; j < TPROF_OP_ARGS; j++) arg[j] = map[src->inputs[k][j]];
        if ((inputs_map[k] = tprof_trace_intern_inputs(dst, arg)) == UINT32_MAX) {
            free(thread_map);
            free(inputs_map);
            goto oom;
        }
    }
    int rc = 0;
    for (size_t i = 0; i < src->nspans; i++) {
        tprof_host_span sp = src->spans[i];
        sp.name = map[sp.name];
        sp.cat = map[sp.cat];
        if (thread_map[sp.thread] >= TPROF_SPAN_THREADS) rc = TPROF_ELIMIT; /* read again in one pass: it says so */
        sp.thread = (uint16_t)thread_map[sp.thread];
        size_t before = events_base + sp.events_before;
        sp.events_before = before > UINT32_MAX ? UINT32_MAX : (uint32_t)before;
        sp.inputs = inputs_map[sp.inputs];
        dst->spans[dst->nspans++] = sp;
    }
    free(thread_map);
    free(inputs_map);
    if (rc) {
        free(map);
        return rc;
    }
    /* document metadata found after traceEvents */
    /* document metadata (a chunk that reached the keys after traceEvents):
     * the same rules as the one-pass reader, which appends devices and sets
     * the fields a distributedInfo has */
    if (src->ndev) {
        if (tprof_grow((void **)&dst->devices, &dst->devcap, dst->ndev + src->ndev, sizeof *dst->devices)) goto oom;
        for (size_t i = 0; i < src->ndev; i++) {
            tprof_device dv = src->devices[i];
            dv.name = tprof_strtab_get(&dst->strs, tprof_strtab_intern(&dst->strs, dv.name, strlen(dv.name)));
            dst->devices[dst->ndev++] = dv;
        }
    }
    if (s->has_distributed) {
        d->has_distributed = 1;
        if (s->rank >= 0) d->rank = s->rank;
        if (s->world_size >= 0) d->world_size = s->world_size;
        if (s->backend) d->backend = tprof_strtab_get(&dst->strs, tprof_strtab_intern(&dst->strs, s->backend, strlen(s->backend)));
    }
    if (s->has_schema_version) {
        d->has_schema_version = 1;
        d->schema_version = s->schema_version;
    }
    if (s->has_base_time) {
        d->has_base_time = 1;
        d->base_time_ns = s->base_time_ns;
    }
    if (s->display_time_unit)
        d->display_time_unit =
            tprof_strtab_get(&dst->strs, tprof_strtab_intern(&dst->strs, s->display_time_unit, strlen(s->display_time_unit)));
    if (s->trace_name)
        d->trace_name = tprof_strtab_get(&dst->strs, tprof_strtab_intern(&dst->strs, s->trace_name, strlen(s->trace_name)));
    if (s->note) tprof_trace_set_note(dst, s->note);
    free(map);
    return 0;
oom:
    free(map);
    return TPROF_ENOMEM;
}
