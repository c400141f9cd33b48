/* int64 id -> uint32 index (internal): a plain array over the ids' range
 * when they are dense (correlation ids and autograd sequence numbers count
 * up from a base), else a tprof_i64map. Lookups in the array touch one
 * 4-byte slot, where the hash map's are cache misses over 16-byte ones. */
#ifndef TPROF_IDMAP_H
#define TPROF_IDMAP_H

#include <stdint.h>
#include <stdlib.h>

#include "i64map.h"

#define TPROF_IDMAP_NONE UINT32_MAX

typedef struct {
    int64_t lo;      /* the array's first id */
    size_t span;     /* its length; 0: the map */
    uint32_t *slot;  /* TPROF_IDMAP_NONE: absent */
    tprof_i64map map;
} tprof_idmap;

/* For about N ids in [LO, HI] (no ids: LO > HI). -1 when out of memory. */
static inline int tprof_idmap_init(tprof_idmap *m, int64_t lo, int64_t hi, size_t n)
{
    m->lo = lo;
    m->span = 0;
    m->slot = NULL;
    uint64_t range = lo <= hi ? (uint64_t)hi - (uint64_t)lo + 1 : 0;
    if (range && range <= 4 * (uint64_t)n + 4096 && range < SIZE_MAX / sizeof *m->slot) {
        if ((m->slot = malloc((size_t)range * sizeof *m->slot))) {
            for (size_t i = 0; i < range; i++) m->slot[i] = TPROF_IDMAP_NONE;
            m->span = (size_t)range;
            m->map = (tprof_i64map){ 0 };
            return 0;
        }
    }
    return tprof_i64map_init(&m->map, n);
}

static inline void tprof_idmap_free(tprof_idmap *m)
{
    free(m->slot);
    m->slot = NULL;
    tprof_i64map_free(&m->map);
}

/* Sets ID to V (replacing); ID in the range given to init. -1 when out of memory. */
static inline int tprof_idmap_put(tprof_idmap *m, int64_t id, uint32_t v)
{
    if (m->span) {
        m->slot[(uint64_t)id - (uint64_t)m->lo] = v;
        return 0;
    }
    return tprof_i64map_put(&m->map, id, (int64_t)v);
}

/* ID's index, or TPROF_IDMAP_NONE. */
static inline uint32_t tprof_idmap_get(const tprof_idmap *m, int64_t id)
{
    if (m->span) {
        uint64_t at = (uint64_t)id - (uint64_t)m->lo;
        return id >= m->lo && at < m->span ? m->slot[at] : TPROF_IDMAP_NONE;
    }
    int64_t v;
    return tprof_i64map_get(&m->map, id, &v) ? (uint32_t)v : TPROF_IDMAP_NONE;
}

#endif
