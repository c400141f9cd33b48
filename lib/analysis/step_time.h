/* The device's time in each step's window split as Ascend's
 * step_trace_time.csv splits it (internal; docs/METRICS.md, "trainprof
 * steps"). */
#ifndef TPROF_STEP_TIME_H
#define TPROF_STEP_TIME_H

#include "trainprof/analysis.h"

/* Fills the device split of each of the N rows (their ts and dur set) from
 * T's GPU events. 0 or TPROF_ENOMEM. */
int tprof_step_device_split(const tprof_trace *t, tprof_step_row *rows, size_t n);

#endif
