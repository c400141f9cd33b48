/* When the host launched each GPU event (internal, shared by analyses). */
#ifndef TPROF_LAUNCH_H
#define TPROF_LAUNCH_H

#include "trainprof/trace.h"
#include "../util/i64map.h"

/* correlation id -> ts of the runtime call (cudaLaunchKernel, ...) */
typedef struct {
    tprof_i64map by_corr;
} tprof_launches;

int tprof_launches_build(const tprof_trace *t, tprof_launches *l);
void tprof_launches_free(tprof_launches *l);
/* The launch time of GPU event E: its runtime call's start, or its own
 * start when the trace has no matching call. */
int64_t tprof_launch_time(const tprof_launches *l, const tprof_event *e);

/* The step in S[0..n) (sorted by ts) whose span holds AT: the latest one
 * starting at or before AT, if it is still running; -1 when none. */
long tprof_step_at(const tprof_step *s, size_t n, int64_t at);

#endif
