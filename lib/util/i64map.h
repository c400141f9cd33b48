/* int64 -> int64 open-addressing hash map (internal). Keys must not be
 * INT64_MIN, which marks an empty slot. */
#ifndef TPROF_I64MAP_H
#define TPROF_I64MAP_H

#include <stdint.h>
#include <stdlib.h>

typedef struct {
    int64_t *keys, *vals;
    size_t cap, count;
} tprof_i64map;

static inline uint64_t tprof_i64_hash(int64_t k)
{
    uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    return x ^ (x >> 32);
}

static inline int tprof_i64map_init(tprof_i64map *m, size_t expect)
{
    size_t cap = 16;
    while (cap < expect * 2) cap *= 2;
    m->keys = malloc(cap * sizeof *m->keys);
    m->vals = malloc(cap * sizeof *m->vals);
    m->cap = cap;
    m->count = 0;
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        m->keys = m->vals = NULL;
        return -1;
    }
    for (size_t i = 0; i < cap; i++) m->keys[i] = INT64_MIN;
    return 0;
}

static inline void tprof_i64map_free(tprof_i64map *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = m->vals = NULL;
}

/* Inserts or replaces; returns -1 when out of memory. */
static inline int tprof_i64map_put(tprof_i64map *m, int64_t k, int64_t v)
{
    if ((m->count + 1) * 2 > m->cap) {
        tprof_i64map n;
        if (tprof_i64map_init(&n, m->cap)) return -1;
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i] != INT64_MIN) tprof_i64map_put(&n, m->keys[i], m->vals[i]);
        tprof_i64map_free(m);
        *m = n;
    }
    size_t mask = m->cap - 1, i = tprof_i64_hash(k) & mask;
    while (m->keys[i] != INT64_MIN && m->keys[i] != k) i = (i + 1) & mask;
    if (m->keys[i] == INT64_MIN) m->count++;
    m->keys[i] = k;
    m->vals[i] = v;
    return 0;
}

static inline int tprof_i64map_get(const tprof_i64map *m, int64_t k, int64_t *v)
{
    size_t mask = m->cap - 1, i = tprof_i64_hash(k) & mask;
    for (; m->keys[i] != INT64_MIN; i = (i + 1) & mask)
        if (m->keys[i] == k) {
            *v = m->vals[i];
            return 1;
        }
    return 0;
}

#endif
