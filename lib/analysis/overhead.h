/* Launch overhead from analyses already computed (internal: advice shares them). */
#ifndef TPROF_OVERHEAD_H
#define TPROF_OVERHEAD_H

#include "trainprof/analysis.h"

/* tprof_launch_overhead given the trace's steps and its temporal breakdown
 * with the last step kept. */
int tprof_launch_overhead_from(const tprof_trace *t, const tprof_steps_result *steps,
                               const tprof_temporal_result *whole, tprof_launch_result *r);

#endif
