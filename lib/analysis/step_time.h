/* The device's time in each step's window split as Ascend's
 * step_trace_time.csv splits it (internal; docs/METRICS.md, "trainprof
 * steps"). */
#ifndef TPROF_STEP_TIME_H
#define TPROF_STEP_TIME_H

#include "trainprof/analysis.h"

/* Fills the device split of each of the N rows (their ts and dur set) from
 * T's GPU events. 0 or TPROF_ENOMEM. */
int tprof_step_device_split(const tprof_trace *t, tprof_step_row *rows, size_t n);

/* A step_trace_time.csv row's step time: stage + bubble + preparing (the
 * step's window), else computing + communication not overlapped + free
 * (+ preparing); -1 when neither is written. */
int64_t tprof_split_step_ns(const tprof_step_split *s);

/* One (step, rank)'s device split as msprof-analyze's slow-rank check
 * reads it (lib/analysis/slow_rank.c). */
typedef struct {
    int64_t step, rank; /* rank -1: the trace's own */
    int64_t ns[TPROF_SPLIT_DIMS];
    int recorded;       /* the Ascend profiler's (step_trace_time.csv) */
    size_t order;       /* set by tprof_split_spread_of */
} tprof_split_point;

/* T's points into *OUT (malloc'd, *N of them): its step_trace_time.csv
 * rows where it has them (every rank of a cluster table), else the device
 * split of its ProfilerSteps. 0 or TPROF_ENOMEM. */
int tprof_split_points(const tprof_trace *t, tprof_split_point **out, size_t *n);
/* msprof-analyze's check over P[0..N) (reordered; a later point of the
 * same step and rank replaces an earlier one) into R's split fields. */
int tprof_split_spread_of(tprof_split_point *p, size_t n, tprof_ranks_result *r);

#endif
