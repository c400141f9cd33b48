/* Growing arrays (internal): doubling, for the readers and the analyses. */
#ifndef TPROF_GROW_H
#define TPROF_GROW_H

#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"

/* Grows an array that is only appended to (its elements past the count
 * are never read) to hold NEED elements, doubling. The new part is left
 * untouched: zeroing it would fault in pages that may never be used (up to
 * half of the event array). */
static inline int tprof_grow_items(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q) return TPROF_ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

/* Grows an array to hold NEED elements (doubling), zeroing the new part:
 * for tables indexed by id. */
static inline int tprof_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t old = *cap;
    if (tprof_grow_items(p, cap, need, elem)) return TPROF_ENOMEM;
    memset((char *)*p + old * elem, 0, (*cap - old) * elem);
    return 0;
}

#endif
