/* Shared by the memory analyses (internal). */
#ifndef TPROF_MEM_INTERNAL_H
#define TPROF_MEM_INTERNAL_H

#include <stdint.h>

#include "../util/strtab.h"
#include "trainprof/mem.h"

/* One allocation as the viewer sees it: added at action START (-1: live
 * when the history begins) and removed at action END (INT64_MAX: never). */
typedef struct {
    int64_t size;
    int64_t start, end;
    tprof_pv frames;
} mem_elem;

/* The active-memory replay of one device (viewer's process_alloc_data). */
typedef struct {
    mem_elem *el;
    size_t nel;
    size_t *act_elem;    /* per action: the element added or removed */
    int64_t *act_index;  /* per action: its index in the device's trace */
    int64_t *act_total;  /* per action: active bytes after it */
    size_t nact;
    int64_t initial_total;
    uint64_t from_frees, from_blocks;
} mem_replay;

int tprof_mem_replay(const tprof_mem_snapshot *s, int64_t device, mem_replay *r);
void tprof_mem_replay_free(mem_replay *r);
/* Active bytes after action K (-1: before the first). */
static inline int64_t mem_total_at(const mem_replay *r, int64_t k)
{
    return k < 0 ? r->initial_total : r->act_total[k];
}
static inline int mem_live_at(const mem_elem *e, int64_t k) { return e->start <= k && k < e->end; }

/* Call sites interned: frame list -> site id, cached by the list's value. */
typedef struct {
    tprof_strtab names;
    int64_t *keys, *vals; /* open addressing on the frames value */
    size_t cap, count;
    int depth;
} mem_sites;

int mem_sites_init(mem_sites *m, int depth);
void mem_sites_free(mem_sites *m);
/* Site id of FRAMES, or UINT32_MAX when out of memory. */
uint32_t mem_site_of(mem_sites *m, const tprof_mem_snapshot *s, tprof_pv frames);

/* Devices of a snapshot: trace indexes and segment devices, ascending. */
int mem_devices(const tprof_mem_snapshot *s, int64_t **out, size_t *n);

/* mem's long form (device, metric, site, value: its CSV), for every memory
 * result (results.c), and a row of it (SITE may be NULL). */
extern const tprof_table_desc tprof_mem_values_table;
int tprof_mem_add_value(tprof_rows *t, int64_t device, const char *metric, const char *site, int64_t v);

#endif
