/* Interval helpers shared by analyses (internal). */
#ifndef TPROF_INTERVALS_H
#define TPROF_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t start, end;
} tprof_interval;

/* Sorts IV in place and returns the length of their union. */
int64_t tprof_interval_union(tprof_interval *iv, size_t n);

#endif
