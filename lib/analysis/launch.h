/* When the host launched each GPU event (internal, shared by analyses). */
#ifndef TPROF_LAUNCH_H
#define TPROF_LAUNCH_H

#include "trainprof/trace.h"

/* Per event index, when the host launched it: for a GPU event the start of
 * its runtime call (cudaLaunchKernel, ... matched by correlation id), or
 * its own start when the trace has no such call; for other events their
 * own start. Built on first use and kept with the trace (one summary asks
 * five analyses for it); NULL when out of memory. */
const int64_t *tprof_launch_times(const tprof_trace *t);
/* Per event index, the index of the runtime call that launched it (GPU
 * events), or -1; derived with the launch times. NULL when out of memory. */
const int64_t *tprof_launch_calls(const tprof_trace *t);

/* The step in S[0..n) (sorted by ts) whose span holds AT: the latest one
 * starting at or before AT, if it is still running; -1 when none. */
long tprof_step_at(const tprof_step *s, size_t n, int64_t at);

/* The ProfilerSteps numbered FIRST..LAST (-1: open at that end), in time
 * order, into *SEL (malloc'd, N of them), and the first and last numbers
 * found: 0, TPROF_EUSAGE when none is there (*SEL NULL), TPROF_ENOMEM. */
int tprof_steps_select(const tprof_trace_meta *m, int64_t first, int64_t last, tprof_step **sel, size_t *n,
                       int64_t *found_first, int64_t *found_last);

#endif
