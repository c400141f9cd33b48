/* Interval helpers shared by analyses (internal). */
#ifndef TPROF_INTERVALS_H
#define TPROF_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t start, end;
} tprof_interval;

/* Sorts IV in place by start (ties in any order). */
void tprof_interval_sort(tprof_interval *iv, size_t n);
/* Sorts IV in place (by start) and returns the length of their union. */
int64_t tprof_interval_union(tprof_interval *iv, size_t n);
/* Sorts and merges IV in place into disjoint intervals; returns their count. */
size_t tprof_interval_merge(tprof_interval *iv, size_t n);
/* Sorts int64 values ascending (radix sort for large arrays). */
void tprof_sort_i64(int64_t *a, size_t n);
/* Length of the intersection of two merged (disjoint, sorted) lists. */
int64_t tprof_interval_overlap(const tprof_interval *a, size_t na, const tprof_interval *b, size_t nb);

#endif
