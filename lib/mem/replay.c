/* The active-memory replay of one device, as PyTorch's memory viewer builds
 * its "Active Memory Timeline": allocs add, frees (free_completed, or the
 * older single free) remove; frees of allocations made before the history
 * began and blocks still live but never allocated in the history count as
 * live from the start. free_requested changes nothing: the block stays
 * active until its free completes. */
#include <stdlib.h>
#include <string.h>

#include "../util/i64map.h"
#include "mem_internal.h"
#include "trainprof/error.h"

/* The hash map's empty-slot key is INT64_MIN; the one address that maps to
 * it (2^63, never a device address) shares a key with 2^63 + 1. */
static int64_t addr_key(uint64_t a) { return (int64_t)a == INT64_MIN ? INT64_MIN + 1 : (int64_t)a; }

static int add_elem(mem_replay *r, size_t *cap, mem_elem e)
{
    if (r->nel == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        mem_elem *q = realloc(r->el, c * sizeof *q);
        if (!q) return TPROF_ENOMEM;
        r->el = q;
        *cap = c;
    }
    r->el[r->nel++] = e;
    return 0;
}

int tprof_mem_replay(const tprof_mem_snapshot *s, int64_t device, mem_replay *r)
{
    memset(r, 0, sizeof *r);
    const tprof_mem_event *ev = NULL;
    size_t n = 0;
    if (device >= 0 && (uint64_t)device < s->ntraces) {
        ev = s->traces[device];
        n = s->ntrace[device];
    }
    size_t cap = 0;
    tprof_i64map live; /* addr -> element, -1 once freed */
    if (tprof_i64map_init(&live, 1024)) return TPROF_ENOMEM;
    r->act_elem = malloc((n ? n : 1) * sizeof *r->act_elem);
    r->act_index = malloc((n ? n : 1) * sizeof *r->act_index);
    r->act_total = malloc((n ? n : 1) * sizeof *r->act_total);
    int rc = r->act_elem && r->act_index && r->act_total ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++) {
        const tprof_mem_event *e = &ev[i];
        int64_t k = (int64_t)r->nact, el;
        if (e->action == TPROF_MEM_ALLOC) {
            rc = add_elem(r, &cap, (mem_elem){ .size = e->size, .start = k, .end = INT64_MAX, .frames = e->frames });
            if (!rc && tprof_i64map_put(&live, addr_key(e->addr), (int64_t)r->nel - 1)) rc = TPROF_ENOMEM;
            el = (int64_t)r->nel - 1;
        } else if (e->action == TPROF_MEM_FREE_COMPLETED || e->action == TPROF_MEM_FREE) {
            if (tprof_i64map_get(&live, addr_key(e->addr), &el) && el >= 0) {
                r->el[el].end = k;
                if (tprof_i64map_put(&live, addr_key(e->addr), -1)) rc = TPROF_ENOMEM;
            } else {
                /* freed, never allocated in the history: live from the start */
                rc = add_elem(r, &cap, (mem_elem){ .size = e->size, .start = -1, .end = k, .frames = e->frames });
                el = (int64_t)r->nel - 1;
                r->from_frees++;
            }
        } else {
            continue;
        }
        if (rc) break;
        r->act_elem[r->nact] = (size_t)el;
        r->act_index[r->nact] = (int64_t)i;
        r->nact++;
    }
    for (size_t g = 0; g < s->nsegs && !rc; g++) {
        const tprof_mem_segment *seg = &s->segs[g];
        if (seg->device != device) continue;
        for (size_t b = seg->first_block; b < seg->first_block + seg->nblocks && !rc; b++) {
            const tprof_mem_block *bl = &s->blocks[b];
            int64_t el;
            if (bl->state != TPROF_BLOCK_ACTIVE_ALLOCATED) continue;
            if (tprof_i64map_get(&live, addr_key(bl->addr), &el) && el >= 0) continue;
            rc = add_elem(r, &cap,
                          (mem_elem){ .size = bl->requested_size, .start = -1, .end = INT64_MAX, .frames = bl->frames });
            r->from_blocks++;
        }
    }
    tprof_i64map_free(&live);
    if (rc) {
        tprof_mem_replay_free(r);
        return rc;
    }
    int64_t total = 0;
    for (size_t i = 0; i < r->nel; i++)
        if (r->el[i].start < 0) total += r->el[i].size;
    r->initial_total = total;
    for (size_t k = 0; k < r->nact; k++) {
        const mem_elem *e = &r->el[r->act_elem[k]];
        total += e->start == (int64_t)k ? e->size : -e->size;
        r->act_total[k] = total;
    }
    return 0;
}

void tprof_mem_replay_free(mem_replay *r)
{
    free(r->el);
    free(r->act_elem);
    free(r->act_index);
    free(r->act_total);
    memset(r, 0, sizeof *r);
}

int mem_sites_init(mem_sites *m, int depth)
{
    memset(m, 0, sizeof *m);
    m->depth = depth;
    m->cap = 1024;
    m->keys = malloc(m->cap * sizeof *m->keys);
    m->vals = malloc(m->cap * sizeof *m->vals);
    if (!m->keys || !m->vals || tprof_strtab_init(&m->names)) {
        free(m->keys);
        free(m->vals);
        return TPROF_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) m->keys[i] = -1;
    return 0;
}

void mem_sites_free(mem_sites *m)
{
    free(m->keys);
    free(m->vals);
    tprof_strtab_free(&m->names);
    memset(m, 0, sizeof *m);
}

static int sites_grow(mem_sites *m)
{
    size_t nc = m->cap * 2;
    int64_t *k = malloc(nc * sizeof *k), *v = malloc(nc * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    for (size_t i = 0; i < nc; i++) k[i] = -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] < 0) continue;
        size_t j = tprof_i64_hash(m->keys[i]) & (nc - 1);
        while (k[j] >= 0) j = (j + 1) & (nc - 1);
        k[j] = m->keys[i];
        v[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = k;
    m->vals = v;
    m->cap = nc;
    return 0;
}

uint32_t mem_site_of(mem_sites *m, const tprof_mem_snapshot *s, tprof_pv frames)
{
    size_t j = tprof_i64_hash(frames) & (m->cap - 1);
    while (m->keys[j] >= 0) {
        if (m->keys[j] == (int64_t)frames) return (uint32_t)m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    char buf[8192];
    tprof_mem_call_site(s, frames, m->depth, buf, sizeof buf);
    uint32_t id = tprof_strtab_intern(&m->names, buf, strlen(buf));
    if (id == UINT32_MAX) return id;
    if ((m->count + 1) * 2 > m->cap) {
        if (sites_grow(m)) return UINT32_MAX;
        j = tprof_i64_hash(frames) & (m->cap - 1);
        while (m->keys[j] >= 0) j = (j + 1) & (m->cap - 1);
    }
    m->keys[j] = (int64_t)frames;
    m->vals[j] = id;
    m->count++;
    return id;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int mem_devices(const tprof_mem_snapshot *s, int64_t **out, size_t *n)
{
    size_t cap = s->ntraces + s->nsegs + 1, k = 0;
    int64_t *d = malloc(cap * sizeof *d);
    if (!d) return TPROF_ENOMEM;
    for (size_t i = 0; i < s->ntraces; i++) d[k++] = (int64_t)i;
    for (size_t i = 0; i < s->nsegs; i++) d[k++] = s->segs[i].device;
    qsort(d, k, sizeof *d, cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (!u || d[u - 1] != d[i]) d[u++] = d[i];
    *out = d;
    *n = u;
    return 0;
}
