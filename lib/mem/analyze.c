/* Per-device memory report: peak active memory (viewer's definition) and who
 * holds it, reserved memory, fragmentation, OOMs and allocator retries. */
#include <stdlib.h>
#include <string.h>

#include "mem_internal.h"
#include "trainprof/error.h"

typedef struct {
    int64_t bytes;
    uint64_t count;
} site_acc;

static int cmp_site(const void *a, const void *b)
{
    const tprof_mem_site *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->site, y->site);
}

/* The call sites of the elements live after action K, largest first. */
static int sites_at(const tprof_mem_snapshot *s, const mem_replay *r, mem_sites *ms, int64_t k, size_t keep,
                    tprof_mem_site **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    site_acc *acc = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < r->nel; i++) {
        const mem_elem *e = &r->el[i];
        if (!mem_live_at(e, k)) continue;
        uint32_t id = mem_site_of(ms, s, e->frames);
        if (id == UINT32_MAX) goto oom;
        if (id >= cap) {
            size_t nc = cap ? cap : 64;
            while (nc <= id) nc *= 2;
            site_acc *q = realloc(acc, nc * sizeof *q);
            if (!q) goto oom;
            memset(q + cap, 0, (nc - cap) * sizeof *q);
            acc = q;
            cap = nc;
        }
        acc[id].bytes += e->size;
        acc[id].count++;
    }
    size_t n = 0;
    for (size_t i = 0; i < cap; i++) n += acc[i].count > 0;
    tprof_mem_site *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows) goto oom;
    size_t j = 0;
    for (size_t i = 0; i < cap; i++) {
        if (!acc[i].count) continue;
        rows[j] = (tprof_mem_site){ .site = strdup(tprof_strtab_get(&ms->names, (uint32_t)i)), .bytes = acc[i].bytes,
                                    .count = acc[i].count };
        if (!rows[j].site) {
            for (size_t q = 0; q < j; q++) free(rows[q].site);
            free(rows);
            goto oom;
        }
        j++;
    }
    qsort(rows, n, sizeof *rows, cmp_site);
    if (keep && n > keep) {
        for (size_t q = keep; q < n; q++) free(rows[q].site);
        n = keep;
    }
    free(acc);
    *out = rows;
    *nout = n;
    return 0;
oom:
    free(acc);
    return TPROF_ENOMEM;
}

/* Last action before trace index I (binary search), -1 if none. */
static int64_t action_before(const mem_replay *r, size_t i)
{
    size_t lo = 0, hi = r->nact;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->act_index[mid] < (int64_t)i) lo = mid + 1;
        else hi = mid;
    }
    return (int64_t)lo - 1;
}

/* The innermost annotation of DEVICE open at time T. */
static char *annotation_at(const tprof_mem_snapshot *s, int64_t device, int64_t t)
{
    if (t < 0) return NULL;
    tprof_pv open[256];
    int n = 0;
    for (size_t i = 0; i < s->nann; i++) {
        const tprof_mem_annotation *a = &s->ann[i];
        if (a->device != device || a->time_us > t) continue;
        if (a->start) {
            if (n < 256) open[n++] = a->name;
            continue;
        }
        size_t al;
        const char *an = tprof_pickle_str(s->pk, a->name, &al);
        for (int j = n - 1; j >= 0; j--) {
            size_t bl;
            const char *bn = tprof_pickle_str(s->pk, open[j], &bl);
            if (al == bl && !memcmp(an, bn, al)) {
                memmove(open + j, open + j + 1, (size_t)(n - j - 1) * sizeof *open);
                n--;
                break;
            }
        }
    }
    if (!n) return NULL;
    size_t l;
    const char *nm = tprof_pickle_str(s->pk, open[n - 1], &l);
    char *r = malloc(l + 1);
    if (r) {
        memcpy(r, nm, l);
        r[l] = 0;
    }
    return r;
}

static int is_seg_add(uint8_t a) { return a == TPROF_MEM_SEGMENT_ALLOC || a == TPROF_MEM_SEGMENT_MAP; }
static int is_seg_sub(uint8_t a) { return a == TPROF_MEM_SEGMENT_FREE || a == TPROF_MEM_SEGMENT_UNMAP; }

static int analyze_device(const tprof_mem_snapshot *s, const tprof_mem_opts *o, int64_t device, tprof_mem_device *d)
{
    const tprof_mem_event *ev = NULL;
    size_t n = 0;
    if ((uint64_t)device < s->ntraces) {
        ev = s->traces[device];
        n = s->ntrace[device];
    }
    d->device = device;
    d->events = n;
    for (size_t i = 0; i < n; i++) d->counts[ev[i].action]++;

    /* the snapshot state */
    for (size_t g = 0; g < s->nsegs; g++) {
        const tprof_mem_segment *seg = &s->segs[g];
        if (seg->device != device) continue;
        d->nsegments++;
        d->reserved_at_end += seg->total_size;
        for (size_t b = seg->first_block; b < seg->first_block + seg->nblocks; b++) {
            const tprof_mem_block *bl = &s->blocks[b];
            if (bl->state == TPROF_BLOCK_INACTIVE) {
                if (bl->size > d->largest_free_block) d->largest_free_block = bl->size;
                if (seg->nblocks > 1) {
                    d->inactive_split_blocks++;
                    d->inactive_split_bytes += bl->size;
                }
            } else {
                d->allocated_at_end += bl->size;
                d->requested_at_end += bl->requested_size;
            }
        }
    }
    d->fragmentation = d->reserved_at_end - d->allocated_at_end;

    /* reserved over the history: worked back from the segments at the end */
    int64_t res = d->reserved_at_end;
    for (size_t i = 0; i < n; i++) {
        if (is_seg_add(ev[i].action)) res -= ev[i].size;
        else if (is_seg_sub(ev[i].action)) res += ev[i].size;
    }
    d->reserved_initial = d->reserved_peak = res;
    d->reserved_peak_index = -1;
    int64_t *res_after = malloc((n ? n : 1) * sizeof *res_after);
    if (!res_after) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (is_seg_add(ev[i].action)) res += ev[i].size;
        else if (is_seg_sub(ev[i].action)) res -= ev[i].size;
        res_after[i] = res;
        if (res > d->reserved_peak) {
            d->reserved_peak = res;
            d->reserved_peak_index = (int64_t)i;
        }
    }

    /* retries: the cache flushed (segment frees) right before a cudaMalloc
     * or an OOM */
    for (size_t i = 1; i < n; i++)
        if (is_seg_sub(ev[i - 1].action) && (is_seg_add(ev[i].action) || ev[i].action == TPROF_MEM_OOM)) d->retries++;

    mem_replay r;
    int rc = tprof_mem_replay(s, device, &r);
    if (rc) {
        free(res_after);
        return rc;
    }
    d->initial_active = r.initial_total;
    d->initial_from_frees = r.from_frees;
    d->initial_from_blocks = r.from_blocks;
    d->active_at_end = r.nact ? r.act_total[r.nact - 1] : r.initial_total;
    int64_t peak_k = -1; /* -1: the state before the first action */
    if (r.nact == 0) {
        d->peak_active = r.initial_total; /* the viewer plots the live blocks flat */
    } else {
        /* the viewer's max_size: the maximum after each action, from 0 */
        d->peak_active = 0;
        peak_k = 0;
        for (size_t k = 0; k < r.nact; k++)
            if (r.act_total[k] > d->peak_active) {
                d->peak_active = r.act_total[k];
                peak_k = (int64_t)k;
            }
    }
    d->peak_index = peak_k >= 0 ? r.act_index[peak_k] : -1;
    d->peak_time_us = d->peak_index >= 0 ? ev[d->peak_index].time_us : -1;
    d->peak_annotation = annotation_at(s, device, d->peak_time_us);

    mem_sites ms;
    rc = mem_sites_init(&ms, o && o->depth > 0 ? o->depth : 4);
    if (!rc) rc = sites_at(s, &r, &ms, peak_k, 0, &d->sites, &d->nsites);
    /* OOMs: what was live when the allocation failed */
    size_t nooms = d->counts[TPROF_MEM_OOM];
    if (!rc && nooms) {
        d->ooms = calloc(nooms, sizeof *d->ooms);
        if (!d->ooms) rc = TPROF_ENOMEM;
        for (size_t i = 0; i < n && !rc; i++) {
            if (ev[i].action != TPROF_MEM_OOM) continue;
            int64_t k = action_before(&r, i);
            tprof_mem_oom *oo = &d->ooms[d->nooms++];
            oo->index = i;
            oo->time_us = ev[i].time_us;
            oo->size = ev[i].size;
            oo->device_free = ev[i].device_free;
            oo->active = mem_total_at(&r, k);
            oo->reserved = i ? res_after[i - 1] : d->reserved_initial;
            /* each OOM's sites cost a pass over the allocations: the first
             * TPROF_MEM_MAX_OOM_SITES OOMs get them, so no file is quadratic */
            if (d->nooms > TPROF_MEM_MAX_OOM_SITES) continue;
            rc = sites_at(s, &r, &ms, k, o && o->max_oom_sites ? o->max_oom_sites : 5, &oo->sites, &oo->nsites);
        }
    }
    mem_sites_free(&ms);
    tprof_mem_replay_free(&r);
    free(res_after);
    return rc;
}

int tprof_mem_analyze(const tprof_mem_snapshot *s, const tprof_mem_opts *o, tprof_mem_report *out)
{
    memset(out, 0, sizeof *out);
    int64_t *devs;
    size_t nd;
    int rc = mem_devices(s, &devs, &nd);
    if (rc) return rc;
    out->dev = calloc(nd ? nd : 1, sizeof *out->dev);
    if (!out->dev) {
        free(devs);
        return TPROF_ENOMEM;
    }
    for (size_t i = 0; i < nd && !rc; i++) {
        int64_t dv = devs[i];
        int used = (uint64_t)dv < s->ntraces && s->ntrace[dv] > 0;
        for (size_t g = 0; g < s->nsegs && !used; g++) used = s->segs[g].device == dv;
        if (!used) continue; /* an empty trace list of an unused GPU */
        rc = analyze_device(s, o, dv, &out->dev[out->ndev]);
        out->ndev++;
    }
    free(devs);
    if (rc) tprof_mem_report_free(out);
    return rc;
}

static void free_sites(tprof_mem_site *s, size_t n)
{
    for (size_t i = 0; i < n; i++) free(s[i].site);
    free(s);
}

void tprof_mem_report_free(tprof_mem_report *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->ndev; i++) {
        tprof_mem_device *d = &r->dev[i];
        free(d->peak_annotation);
        free_sites(d->sites, d->nsites);
        for (size_t j = 0; j < d->nooms; j++) free_sites(d->ooms[j].sites, d->ooms[j].nsites);
        free(d->ooms);
    }
    free(r->dev);
    memset(r, 0, sizeof *r);
}
