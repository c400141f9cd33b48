/* The critical path of one window of a trace (internal): the dependency
 * graph as Holistic Trace Analysis's lightweight critical path analysis
 * builds it, then its longest path. docs/METRICS.md ("trainprof
 * critical-path") has the rules; critical_path.c says where each comes from. */
#ifndef TPROF_CRITICAL_PATH_H
#define TPROF_CRITICAL_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "trainprof/analysis.h"
#include "trainprof/trace.h"

#define TPROF_CP_NONE UINT32_MAX

/* The kinds of edge, as HTA names them (critical_path_<name>). */
typedef enum {
    TPROF_CPE_OPERATOR = 0,  /* within an op or kernel: its time (weight > 0) */
    TPROF_CPE_DEPENDENCY,    /* between top-level ops of a thread, or runtime calls sharing the lock: 0 */
    TPROF_CPE_LAUNCH_DELAY,  /* runtime call start -> its kernel's start, the stream being empty */
    TPROF_CPE_KERNEL_KERNEL, /* a kernel's end -> the next one's start on the stream */
    TPROF_CPE_SYNC,          /* GPU -> CPU (stream, event, device sync) or GPU -> GPU (stream wait event): 0 */
    TPROF_CPE_COUNT
} tprof_cp_edge_type;

/* What bounds an edge of the path (trainprof's split of HTA's bound_by:
 * cpu = cpu_op + runtime, gpu_compute = compute + memory). */
typedef enum {
    TPROF_CPB_CPU_OP = 0, /* CPU time attributed to an op (cpu_op, or an annotation or frame holding it) */
    TPROF_CPB_RUNTIME,    /* CPU time in CUDA runtime / driver calls */
    TPROF_CPB_LAUNCH,     /* launch delay: the runtime call's start to its kernel's start */
    TPROF_CPB_KERNEL_GAP, /* the gap between two kernels of a stream */
    TPROF_CPB_COMPUTE,    /* GPU kernels */
    TPROF_CPB_MEMORY,     /* GPU memcpy / memset (HTA: gpu_compute_bound) */
    TPROF_CPB_COMM,       /* communication kernels (HTA's pattern: nccl*, hip*, hccl*, *ncclKernel*) */
    TPROF_CPB_COUNT,
    TPROF_CPB_NONE = TPROF_CPB_COUNT /* dependency and sync edges: no time */
} tprof_cp_bound;

/* One edge of the path: between two events' start or end points. */
typedef struct {
    uint32_t from, to;     /* records (tprof_cp_record) */
    uint8_t from_start, to_start; /* 1: the event's start point, 0: its end */
    uint8_t type;          /* tprof_cp_edge_type */
    uint8_t bound;         /* tprof_cp_bound */
    int64_t weight;        /* ns (negative weights, from clocks, count as 0 as in HTA's graph) */
    uint32_t event;        /* the record the edge's time is attributed to, or TPROF_CP_NONE */
    uint32_t op;           /* the innermost cpu_op holding that event (for a GPU event: its runtime
                              call; a launch delay: its kernel's call), or TPROF_CP_NONE */
} tprof_cp_edge;

typedef struct {
    int valid;          /* 0: HTA's checks refuse the graph (a cycle, a sync on one stream) */
    const char *why;    /* when not valid */
    size_t nodes, edges; /* of the graph (the points some edge joins) */
    int64_t length_ns;  /* the path's length: the sum of its weights */
    int64_t first_ts, last_ts; /* the path's first and last points */
    size_t npath;
    tprof_cp_edge *path; /* in order */
    int64_t bound_ns[TPROF_CPB_COUNT];
    size_t sync_edges;  /* sync edges on the path: where the CPU waited for the GPU (or a stream for another) */
    size_t slotless;    /* tests: the window's records without a slot in its marks (Stream Wait Events of
                           other times, outside the range its own records span in the file) */
} tprof_cp_window;

typedef struct tprof_cp_ctx tprof_cp_ctx;

/* What a trace needs for critical paths, built once: correlations, the
 * launch queue per stream, cudaEventRecord -> the launch before it. NULL
 * when out of memory. */
tprof_cp_ctx *tprof_cp_ctx_new(const tprof_trace *t);
/* The same, building on a second thread (the host order beside the
 * correlations; tprof_cp_paths' windows) from ALONE records on: below
 * TPROF_CP_ALONE a second thread costs more than it saves (tests: 0). */
#define TPROF_CP_ALONE 200000
tprof_cp_ctx *tprof_cp_ctx_new_split(const tprof_trace *t, size_t alone);
void tprof_cp_ctx_free(tprof_cp_ctx *c);
/* Tests: each window's marks kept at every record's own index (as many
 * slots as records), not packed to the window's records, the paths the
 * same. */
void tprof_cp_ctx_record_slots(tprof_cp_ctx *c);
/* Record R of the context (an edge's from, to, event or op) as an event:
 * the trace's events and its compact spans (TPROF_COMPACT_SPANS), one index
 * space in file order. */
void tprof_cp_record(const tprof_cp_ctx *c, uint32_t r, tprof_event *out);
size_t tprof_cp_records(const tprof_cp_ctx *c);
/* The critical path of the window [START, END] (ns): the host events that
 * start in it, the GPU work their launches started. 0 or TPROF_ENOMEM;
 * OUT is freed with tprof_cp_window_free. */
int tprof_cp_window_path(tprof_cp_ctx *c, int64_t start, int64_t end, tprof_cp_window *out);
void tprof_cp_window_free(tprof_cp_window *w);
/* The same for the N windows SPANS into OUT[0..N), on two threads for a
 * large trace (OUT in SPANS' order whatever thread built each): 0 or
 * TPROF_ENOMEM (then nothing is left to free). */
typedef struct tprof_cp_span tprof_cp_span;
int tprof_cp_paths(tprof_cp_ctx *c, const tprof_cp_span *spans, size_t n, tprof_cp_window *out);
const char *tprof_cp_bound_name(tprof_cp_bound b);
/* A runtime call that launches GPU work (HTA's launch calls: cudaLaunchKernel, cudaMemcpyAsync, ...). */
int tprof_cp_is_launch_call(const char *name);

/* A window of the analysis: ProfilerStep NUMBER (or the annotation's first
 * instance, or 0 for the whole trace) over [START, END] ns. */
struct tprof_cp_span {
    int64_t number, start, end;
};
/* The windows OPTS choose, in order (WINDOW: "steps", "annotation" or
 * "trace"); *OUT is freed by the caller. TPROF_EUSAGE when none matches. */
int tprof_cp_windows(const tprof_trace *t, const tprof_cp_ctx *c, const tprof_cp_opts *opts, tprof_cp_span **out,
                     size_t *n, const char **window);
/* The context of T and its windows for *OPTS (NULL: every step; then set
 * to the defaults): 0, TPROF_ENOMEM or tprof_cp_windows' TPROF_EUSAGE. */
int tprof_cp_open(const tprof_trace *t, const tprof_cp_opts **opts, tprof_cp_ctx **c, tprof_cp_span **spans,
                  size_t *n, const char **window);
const char *tprof_cp_edge_name(tprof_cp_edge_type t);

#endif
