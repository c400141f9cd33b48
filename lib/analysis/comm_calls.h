/* The GPU side of each recorded collective call (internal; comm.c): the
 * communication kernels launched from inside its record_param_comms span,
 * on the launching thread. */
#ifndef TPROF_COMM_CALLS_H
#define TPROF_COMM_CALLS_H

#include <stdint.h>

#include "trainprof/trace.h"

#define TPROF_COMM_ALGOS 5 /* RING, TREE, NVLS, COLLNET, PAT (comm.c) */

typedef struct {
    int64_t kernel_ns;   /* the sum of its kernels' durations */
    int64_t first, last; /* the first kernel's start, the last one's end (with kernels > 0) */
    uint32_t kernels;
    int type;            /* its first kernel's collective type (tprof_collective_type_at), -1: none */
    uint32_t algo[TPROF_COMM_ALGOS]; /* kernels naming each algorithm */
} tprof_call_gpu;

/* OUT[i] for each of T's tprof_trace_calls(). 0 or TPROF_ENOMEM. */
int tprof_call_kernels(const tprof_trace *t, tprof_call_gpu *out);
/* Bytes per element of a recorded dtype ("BFloat16": 2), 0 when unknown. */
int64_t tprof_dtype_size(const char *dtype);
/* NCCL's bus factor for collective NAME over N ranks: the share of the
 * data each rank's links carry (allreduce 2(n-1)/n, allgather,
 * reduce_scatter and alltoall (n-1)/n, others 1). */
double tprof_bus_factor(const char *name, int64_t n);
/* The collective type of index TYPE ("AllReduce", ...; "other" for -1). */
const char *tprof_collective_type_at(int type);

#endif
