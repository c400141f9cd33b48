/* Analyses over a read trace. Each is a pure function from a tprof_trace to
 * a result struct the caller frees; definitions are in docs/METRICS.md.
 *
 * Ownership: a result owns its strings; it does not point into the trace. */
#ifndef TRAINPROF_ANALYSIS_H
#define TRAINPROF_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "trainprof/flops.h"
#include "trainprof/result.h"
#include "trainprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- kernels: GPU kernel breakdown ---- */

/* kernels' groupings; category: the event's cat (Ascend: the accelerator core, AI_CORE, AI_CPU, HCCL, ...) */
typedef enum { TPROF_BY_NAME = 0, TPROF_BY_CLASS, TPROF_BY_STREAM, TPROF_BY_CATEGORY, TPROF_BY_COUNT } tprof_group_by;

typedef struct {
    tprof_group_by by;
    int64_t step_first, step_last; /* ProfilerStep numbers, inclusive; -1: whole trace */
} tprof_kernels_opts;

/* The events a kernels analysis needs stored (pass as tprof_read_opts.keep). */
#define TPROF_KERNELS_KEEP (TPROF_KEEP(TPROF_KIND_GPU) | TPROF_KEEP(TPROF_KIND_RUNTIME))

typedef struct {
    const char *key;      /* kernel name, class name, or "device D stream S" */
    tprof_class klass;    /* by name / by class */
    int64_t device, stream; /* by stream; -1 otherwise */
    uint64_t count;
    int64_t total_ns, min_ns, max_ns;
    double mean_ns;
    double share;         /* total_ns / all GPU event time in the window, 0..1 */
} tprof_kernel_row;

typedef struct {
    tprof_group_by by;
    tprof_kernel_row *rows; /* sorted by total_ns, descending */
    size_t nrows;
    uint64_t count;         /* GPU events in the window */
    int64_t total_ns;       /* sum of their durations */
    int64_t busy_ns;        /* union of their intervals */
    int64_t span_ns;        /* first start to last end */
    uint64_t class_count[TPROF_CLASS_COUNT];
    int64_t class_total_ns[TPROF_CLASS_COUNT];
    int windowed;           /* a step window was applied */
    int64_t step_first, step_last; /* the window as found in the trace */
    size_t nsteps;          /* steps in the window */
    void *priv;
} tprof_kernels_result;

/* Returns 0, or TPROF_EUSAGE when a requested step window matches no step. */
int tprof_kernels(const tprof_trace *t, const tprof_kernels_opts *opts, tprof_kernels_result **out);
/* Combines per-rank results (same grouping) into one: counts and times add
 * up, shares are recomputed, min/max taken across ranks. */
int tprof_kernels_combine(const tprof_kernels_result *const *parts, size_t n, tprof_kernels_result **out);
void tprof_kernels_free(tprof_kernels_result *r);
/* The result tables of each grouping (indexed by tprof_group_by: "kernels",
 * "kernels_by_class", "kernels_by_stream"): the totals, the classes, and
 * the rows by total time. */
extern const tprof_result_desc tprof_kernels_desc[TPROF_BY_COUNT];
int tprof_kernels_tables(const tprof_kernels_result *r, tprof_result **out);
/* Per-rank kernel tables combined by the columns' rules (counts and times
 * add up, min and max across ranks, means and shares derived after), the
 * rows sorted by total time again. */
int tprof_kernels_tables_combine(const tprof_result *const *parts, const int64_t *ranks, size_t n,
                                 tprof_result **out);
/* The rows of kernel tables folded across ranks (tprof_fold) sorted as the
 * combine sorts them: what tprof_kernels_tables_combine does after folding. */
int tprof_kernels_tables_finish(tprof_result *r);
/* Ascend: the task columns of a kernel table per kernel (kernels'
 * ascend_tasks table: op type, block dim, waits, AI Core pipeline ratios),
 * for the tasks in OPTS' window, into ROWS (of tprof_ascend_tasks_desc,
 * empty unless T was read with TPROF_KEEP_TASK_INFO and OPTS groups by
 * name). 0 or TPROF_ENOMEM. */
extern const tprof_table_desc tprof_ascend_tasks_desc;
int tprof_ascend_task_rows(const tprof_trace *t, const tprof_kernels_opts *opts, tprof_rows *rows);

/* ---- ops: the operator view ---- */

/* How ops are grouped: by name, by name and inputs (Input Dims, Input type,
 * Input Strides, Concrete Inputs), by the nn.Module class path, by op
 * category (tprof_op_category_of), or by name and Python call stack. */
typedef enum {
    TPROF_OPS_BY_NAME = 0,
    TPROF_OPS_BY_SHAPE,
    TPROF_OPS_BY_MODULE,
    TPROF_OPS_BY_CATEGORY,
    TPROF_OPS_BY_STACK
} tprof_ops_by;
#define TPROF_OPS_GROUPINGS 5

typedef struct {
    tprof_ops_by by;
    int depth;                     /* by module: the outermost DEPTH levels of the path; by stack: the
                                      innermost DEPTH frames (0: all) */
    int64_t step_first, step_last; /* ProfilerStep numbers, inclusive; -1: whole trace */
    const tprof_classifier *classifier; /* by category: the user's rules first; may be NULL */
    /* the roofline's device: DEVICE (NULL: the trace's first device) in the
     * device table; PEAK_TFLOPS / PEAK_TBPS > 0 replace its peaks (every
     * element type) and bandwidth, or give them for a device not in it */
    const char *device;
    double peak_tflops, peak_tbps;
} tprof_ops_opts;

/* The events an ops analysis needs stored: host spans (compactly), runtime
 * calls, GPU work, and the ops' inputs. */
#define TPROF_OPS_KEEP (TPROF_KERNELS_KEEP | TPROF_KEEP(TPROF_KIND_CPU) | TPROF_COMPACT_SPANS | TPROF_KEEP_OP_ARGS)

/* The result tables of each grouping (indexed by tprof_ops_by: "ops",
 * "ops_by_shape", "ops_by_module", "ops_by_category", "ops_by_stack"): the totals, and a row per group with
 * its launches, direct and subtree kernel time, CPU and device self/total
 * times, by direct time. Every GPU event is in one row: those without a
 * launch in the trace in a row of their own. */
extern const tprof_result_desc tprof_ops_desc[TPROF_OPS_GROUPINGS];
/* Returns 0, TPROF_EUSAGE when a requested step window matches no step, or
 * TPROF_ENOMEM / TPROF_ELIMIT. */
int tprof_ops(const tprof_trace *t, const tprof_ops_opts *opts, tprof_result **out);
/* Per-rank op tables combined by the columns' rules, by direct time again. */
int tprof_ops_combine(const tprof_result *const *parts, const int64_t *ranks, size_t n, tprof_result **out);
/* What tprof_ops_combine does after folding the ranks (tprof_fold): the
 * top kernels, the roofline columns, the rows by direct time. */
int tprof_ops_finish(tprof_result *r);

/* The performance model of one op instance: FLOPs and bytes moved from its
 * name and recorded inputs (the compact JSON texts of Input Dims, Input type
 * and Concrete Inputs, as tprof_op_args keeps them; docs/METRICS.md, "The
 * performance model"). */
typedef struct {
    double flops, bytes;  /* bytes 0: an input's element type is unknown */
    tprof_dtype dtype;    /* of the first input: which peak the roofline takes */
    const char *family;   /* gemm, attention, convolution, elementwise, normalization, reduction */
    int64_t m, n, k;      /* gemm: the problem's sizes (per batch); 0 otherwise */
} tprof_op_cost;
/* 1 and *OUT when the op has a model and its inputs fit it, else 0. */
int tprof_op_cost_of(const char *name, const char *dims_json, const char *types_json, const char *concrete_json,
                     tprof_op_cost *out);

/* ---- temporal: where the GPU's wall time goes (HTA's temporal breakdown) ---- */

typedef struct {
    int keep_last_step; /* keep the GPU work launched in the last ProfilerStep */
    int skip_hta;       /* leave HTA's figures out (r->hta zero): analyses that use trainprof's alone */
} tprof_temporal_opts;

#define TPROF_TEMPORAL_KEEP (TPROF_KERNELS_KEEP | TPROF_KEEP_STREAMED)

/* HTA's figures: the temporal breakdown and communication overlap as
 * Holistic Trace Analysis (v0.6) computes them for the trace loaded alone
 * (docs/METRICS.md, "HTA's figures"); times in ns, on HTA's whole-us grid
 * when it rounds. */
typedef enum { TPROF_HTA_COMPUTE = 0, TPROF_HTA_COMM, TPROF_HTA_MEMORY, TPROF_HTA_OTHER } tprof_hta_kind;
typedef struct {
    int computed;               /* 0: HTA gives no figures; not_computed says why */
    const char *not_computed;   /* static text, or NULL */
    int step_filter;            /* the last-step filter ran (two or more ProfilerStep names) */
    int rounded;                /* times rounded to whole us (a ts with a fraction, or without a ts) */
    int64_t last_step_start_ns; /* the filter's cut, when it ran */
    int64_t span_ns, idle_ns, compute_ns, non_compute_ns;
    double comm_overlap;        /* communication time under compute / communication time; NaN: none */
    uint64_t events;            /* events counted as GPU work */
    uint64_t host_events;       /* of which events trainprof does not count as GPU work: host-side events
                                   with a stream arg (Triton's cpu_op), MTIA's device events */
    uint64_t sync_busy;         /* of which sync waits (trainprof's class other), busy for HTA */
    uint64_t typed_apart;       /* of which kernels HTA types compute and trainprof not, or the reverse */
    uint64_t dropped_unlaunched; /* GPU events left out: no CPU event carries their correlation */
    int64_t dropped_unlaunched_ns; /* their summed durations */
    uint64_t dropped_last_step; /* GPU events left out: launched in or after the last step */
} tprof_hta_figures;
/* HTA's type of a kernel name. */
tprof_hta_kind tprof_hta_kind_of(const char *name);
int tprof_hta_figures_of(const tprof_trace *t, tprof_hta_figures *h);

typedef struct {
    uint64_t events;        /* GPU events counted */
    int64_t start_ns, end_ns; /* first GPU start, last GPU end */
    int64_t span_ns;        /* end - start: the kernel span */
    int64_t busy_ns;        /* union of all GPU intervals */
    int64_t idle_ns;        /* span - busy */
    int64_t compute_ns;     /* union of compute-class intervals */
    int64_t non_compute_ns; /* busy - compute: communication and memory not under compute */
    int last_step_excluded; /* 1 when the work of the last step was left out */
    int64_t last_step;      /* its number, when excluded */
    tprof_hta_figures hta;  /* the same breakdown as HTA computes it */
} tprof_temporal_result;

/* Fills R. Without GPU events every time is 0 and events is 0. */
int tprof_temporal(const tprof_trace *t, const tprof_temporal_opts *opts, tprof_temporal_result *r);
/* The result as typed tables (include/trainprof/result.h): one row of
 * events, span, busy, idle, compute and non-compute (ns), their shares of
 * the span (text table only), the step left out, and a note. */
extern const tprof_result_desc tprof_temporal_desc;
/* Which figures a table shows first: trainprof's own, or HTA's. */
typedef enum { TPROF_DEFINITION_TRAINPROF = 0, TPROF_DEFINITION_HTA } tprof_definition;
int tprof_temporal_tables(const tprof_temporal_result *r, tprof_definition headline, tprof_result **out);
/* HTA's idle, compute or non-compute share differs from trainprof's by more than 0.5 pp. */
int tprof_hta_differs(const tprof_temporal_result *r);
/* Why HTA's figures differ from trainprof's in R, as "; "-separated clauses
 * in BUF (never empty: the last-step cut when nothing else); returns the
 * length. */
size_t tprof_hta_reasons(const tprof_temporal_result *r, char *buf, size_t cap);

/* Every result description there is (the commands that print through
 * result tables), and one by name. */
const tprof_result_desc *const *tprof_result_descs(size_t *n);
const tprof_result_desc *tprof_result_desc_find(const char *name);

/* ---- steps: each ProfilerStep and the GPU work it launched ---- */

#define TPROF_STEPS_KEEP (TPROF_KERNELS_KEEP | TPROF_KEEP_MARKERS)

typedef struct {
    int64_t number;        /* N of ProfilerStep#N */
    int64_t ts, dur;       /* the CPU span, ns */
    uint64_t gpu_events;   /* GPU work launched inside the span */
    int64_t gpu_total_ns;  /* sum of its durations */
    int64_t gpu_busy_ns;   /* union of its intervals */
    int64_t gpu_end_ns;    /* end of the last of it (0 without GPU work) */
    /* the step's CPU span split by phase (sums to dur), and the GPU time of
     * the work launched in each phase */
    int64_t phase_cpu_ns[TPROF_PHASE_COUNT];
    int64_t phase_gpu_ns[TPROF_PHASE_COUNT];
    /* the device's time in the step's window, all streams together, as
     * Ascend's step_trace_time.csv splits it: computing + comm_not_overlapped +
     * free = stage + bubble = dur - preparing (docs/METRICS.md) */
    int64_t computing_ns, communication_ns, overlapped_ns;
    int64_t comm_not_overlapped_ns;         /* communication not overlapped by computing */
    int64_t free_ns;                        /* after the first task: neither computing nor communicating */
    int64_t preparing_ns;                   /* from the step's start to its first task */
    int64_t bubble_ns;                      /* receives (a pipeline stage waiting) */
    int64_t comm_not_overlapped_no_recv_ns; /* comm_not_overlapped without the receives' part */
    int64_t stage_ns;                       /* dur - preparing - bubble */
    int recorded; /* the split above is the Ascend profiler's (step_trace_time.csv): its columns replace those
                     made from device events (a column it lacks keeps the made one, 0 without a timeline) */
    int no_span;  /* a step table's row alone: no CPU span or GPU work known (dur: its window) */
} tprof_step_row;

typedef struct {
    tprof_step_row *steps; /* in time order */
    size_t nsteps;
    /* step time (the CPU span) over all steps */
    int64_t mean_ns, p50_ns, min_ns, max_ns;
    double spread;         /* (max - min) / mean */
    int64_t phase_cpu_ns[TPROF_PHASE_COUNT]; /* over all steps */
    int64_t phase_gpu_ns[TPROF_PHASE_COUNT];
    int phases_found;      /* the trace has phase markers inside its steps */
    size_t recorded;       /* steps whose split is the Ascend profiler's */
    size_t cluster_rows;   /* a cluster step table's rows of many ranks: `ranks` compares them, not shown here */
} tprof_steps_result;

/* Returns 0 with *out set (nsteps 0 when the trace has no ProfilerStep). */
int tprof_steps(const tprof_trace *t, tprof_steps_result **out);
void tprof_steps_free(tprof_steps_result *r);
/* The result as typed tables: the summary (count, mean, p50, min, max,
 * spread, phases found), a row per step, and per step its phases. */
extern const tprof_result_desc tprof_steps_desc;
int tprof_steps_tables(const tprof_steps_result *r, tprof_result **out);

/* ---- idle: why each stream sits idle between its GPU events ---- */

#define TPROF_IDLE_KEEP TPROF_KERNELS_KEEP
#define TPROF_IDLE_BUCKETS 6 /* gap sizes: <10 us, <30 us, <100 us, <1 ms, <10 ms, more */

typedef enum { TPROF_IDLE_HOST = 0, TPROF_IDLE_KERNEL, TPROF_IDLE_OTHER, TPROF_IDLE_CAUSES } tprof_idle_cause;

typedef struct {
    uint64_t count;
    int64_t total_ns, max_ns;
    uint64_t buckets[TPROF_IDLE_BUCKETS];
} tprof_idle_stat;

typedef struct {
    int64_t device, stream;
    uint64_t events;
    int64_t span_ns;  /* first start to last end on the stream */
    int64_t idle_ns;  /* sum of the gaps */
    tprof_idle_stat cause[TPROF_IDLE_CAUSES];
} tprof_idle_row;

typedef struct {
    int64_t kernel_wait_ns; /* gaps shorter than this (and not host waits) are kernel waits */
} tprof_idle_opts;

typedef struct {
    tprof_idle_row *streams; /* sorted by device, stream */
    size_t nstreams;
    int64_t kernel_wait_ns;
} tprof_idle_result;

int tprof_idle(const tprof_trace *t, const tprof_idle_opts *opts, tprof_idle_result **out);
void tprof_idle_free(tprof_idle_result *r);
const char *tprof_idle_cause_name(tprof_idle_cause c);
/* Upper bound (ns) of bucket I, INT64_MAX for the last. */
int64_t tprof_idle_bucket_limit(int i);
/* The result as typed tables: the threshold, the bucket limits, per stream
 * its causes and their buckets, and the CSV rows (a stream and a cause). */
extern const tprof_result_desc tprof_idle_desc;
int tprof_idle_tables(const tprof_idle_result *r, tprof_result **out);

/* ---- comm: communication time, its overlap with compute, what is exposed ---- */

#define TPROF_COMM_KEEP (TPROF_KERNELS_KEEP | TPROF_KEEP_CALLS | TPROF_KEEP_STREAMED)

/* Collective calls as PyTorch records them (record_param_comms), per
 * collective name, joined to the GPU kernels each call launched. */
typedef struct {
    const char *name;      /* as recorded: allreduce, all_gather, ...; recorded without one: "[AllReduce]", the
                            * type of its kernels, "[no kernels]" */
    uint64_t calls;
    uint64_t matched;      /* calls whose communication kernels were found */
    int64_t bytes;         /* message size of the sized calls: max(in, out) elements x dtype size */
    int64_t matched_bytes; /* of the matched calls */
    int64_t kernel_ns;     /* of the matched calls: their kernels' GPU time */
    uint64_t sized;        /* calls that recorded their size (elements and a known dtype) */
    uint64_t sized_matched; /* of the matched calls */
    int64_t sized_kernel_ns; /* their kernels' GPU time */
    int64_t group_size;    /* the largest seen */
    const char *algorithm; /* the most common of RING, TREE, NVLS, COLLNET, PAT in the kernel names, or "" */
    double algbw;          /* matched_bytes / sized_kernel_ns, GB/s (10^9 bytes per second); NAN: no sized
                            * matched call */
    double busbw;          /* algbw x the collective's bus factor (docs/METRICS.md); NAN with algbw */
} tprof_comm_call;

typedef struct {
    const char *type;   /* AllReduce, AllGather, ReduceScatter, SendRecv, ... or "other" */
    uint64_t count;
    int64_t total_ns;   /* sum of the kernels' durations */
    int64_t time_ns;    /* union of their intervals */
    int64_t exposed_ns; /* of that union, the time no compute kernel ran */
} tprof_comm_type;

typedef struct {
    int64_t comm_ns;     /* union of communication intervals */
    int64_t compute_ns;  /* union of compute intervals */
    int64_t overlap_ns;  /* time both ran */
    int64_t exposed_ns;  /* comm_ns - overlap_ns */
    double overlap;      /* overlap_ns / comm_ns (0 without communication) */
    double hta_overlap;  /* the same as HTA computes it: NaN from tprof_comm, set by a caller that has
                            tprof_hta_figures (comm, summary); NaN without communication */
    tprof_comm_type *types; /* by time, descending */
    size_t ntypes;
    tprof_comm_call *calls; /* by kernel time, descending; none without record_param_comms */
    size_t ncalls;
} tprof_comm_result;

int tprof_comm(const tprof_trace *t, tprof_comm_result **out);
void tprof_comm_free(tprof_comm_result *r);
/* The result as typed tables: the totals, the collective types, the
 * recorded calls, and the types with their "all" row (CSV). */
extern const tprof_result_desc tprof_comm_desc;
/* R as comm's result; with T, also T's Ascend HCCL summaries (hccl_ops,
 * hccl_totals, hccl_transports, hccl_links: empty without them). */
int tprof_comm_tables(const tprof_comm_result *r, const tprof_trace *t, tprof_result **out);
/* The collective a communication kernel runs, from its name ("other" when
 * not recognised). Returns a static string. */
const char *tprof_collective_type(const char *kernel_name);

/* ---- launch: launch overhead, queueing, CPU-bound detection ---- */

#define TPROF_LAUNCH_KEEP TPROF_KERNELS_KEEP
#define TPROF_QUEUE_POINTS 32

typedef struct {
    uint64_t launched;        /* GPU work with a matching runtime call */
    uint64_t unmatched;       /* GPU work without one (not counted below) */
    /* delay from the start of the runtime call to the start on the GPU */
    int64_t delay_mean_ns, delay_p50_ns, delay_p90_ns, delay_max_ns;
    uint64_t shorter_than_launch; /* kernels that ran shorter than their launch call took */
    double kernels_per_step;  /* GPU work per ProfilerStep (0 without steps) */
    /* launched-but-unfinished work over time, from each runtime call's start to
     * the end of its GPU work */
    uint64_t queue_max;
    double queue_mean;        /* time-weighted over the first launch .. last end */
    /* the queue over time: its time-weighted mean in TPROF_QUEUE_POINTS equal
     * windows from queue_start_ns to queue_end_ns */
    int64_t queue_start_ns, queue_end_ns;
    double queue_series[32];
    /* CPU-bound: the GPU idles at least 20% of its span and host waits make at
     * least half of the stream idle time */
    int64_t span_ns, idle_ns, stream_idle_ns, host_wait_ns;
    int cpu_bound;
} tprof_launch_result;

int tprof_launch_overhead(const tprof_trace *t, tprof_launch_result *r);
/* The result as typed tables: the figures above in one row, and the queue
 * series. */
extern const tprof_result_desc tprof_launch_desc;
int tprof_launch_tables(const tprof_launch_result *r, tprof_result **out);

/* ---- ranks: the ranks side by side, stragglers, step-time skew ---- */

#define TPROF_RANKS_KEEP (TPROF_KERNELS_KEEP | TPROF_KEEP_CALLS | TPROF_KEEP_MARKERS)
#define TPROF_STRAGGLER_MIN 0.10 /* compute at least 10% above the ranks' median */

typedef struct {
    int64_t rank;          /* tprof_trace_rank, else the trace's place in rank order (rank_known 0) */
    int rank_known;
    char *file;            /* the trace's path (owned) */
    size_t nsteps;
    int64_t step_mean_ns;
    int64_t span_ns, idle_ns, compute_ns; /* the temporal breakdown, whole trace, last step kept */
    int64_t comm_ns, exposed_comm_ns;
} tprof_rank_row;

/* msprof-analyze's slow-rank check (its advisor) on one dimension of the
 * device split over every (step, rank): computing, communication not
 * overlapped, or free time (docs/METRICS.md, "trainprof ranks"). */
typedef enum { TPROF_SPLIT_DIM_COMPUTING = 0, TPROF_SPLIT_DIM_COMMUNICATION, TPROF_SPLIT_DIM_FREE, TPROF_SPLIT_DIMS } tprof_split_dim;
#define TPROF_SLOW_RANK_MIN 0.05 /* msprof-analyze's RATIO_THRESHOLD */
typedef struct {
    int64_t min_ns, max_ns, mean_ns;
    double spread;   /* (max - min) / the mean of computing + communication + free */
    int flagged;     /* spread > TPROF_SLOW_RANK_MIN */
    int ranked;      /* (max - min) / mean_ns >= TPROF_SLOW_RANK_MIN: the max and min below are named */
    int64_t max_rank, max_step, min_rank, min_step; /* the first (step, rank) in that order holding each */
} tprof_split_spread;

typedef struct {
    tprof_rank_row *ranks; /* in the order given */
    size_t nranks;
    /* the device split of each (step, rank): the Ascend profiler's own
     * (step_trace_time.csv, msprof-analyze's cluster table) where a rank has
     * it, else made from the trace's device events per ProfilerStep */
    size_t split_points;         /* (step, rank) pairs with all three times */
    size_t split_recorded;       /* of those, the Ascend profiler's */
    size_t split_ranks;          /* the distinct ranks among them */
    int64_t split_mean_total_ns; /* the mean of computing + communication + free */
    tprof_split_spread split[TPROF_SPLIT_DIMS];
    int64_t slow_rank;           /* split[computing]'s max_rank when flagged and ranked, else -1 */
    int64_t slow_rank_step;
    /* the straggler: the rank with the most compute, at least
     * TPROF_STRAGGLER_MIN above the median of the other ranks' compute, whose
     * exposed communication is below the others' mean (they wait for it in
     * collectives); index into ranks, -1 when none */
    int64_t compute_median_ns;      /* median compute of the other ranks */
    int64_t others_exposed_mean_ns; /* mean exposed communication of the other ranks */
    long straggler;
    double straggler_excess; /* its compute / compute_median_ns - 1 */
    /* step-time skew over the step numbers every rank has */
    size_t common_steps;
    int64_t skew_max_ns, skew_mean_ns; /* max - min of a step's time across ranks */
    int64_t skew_max_step;  /* the step number with the largest skew */
    /* where collectives are matched across the ranks (tprof_ranks_add_collectives),
     * the straggler is theirs: the rank whose late arrivals cost the others the
     * most waiting; the compute-based one above stays, for what it says */
    uint64_t coll_matched;
    int64_t coll_straggler; /* its rank, -1: none */
    int64_t coll_cost_ns;   /* the others' waits it caused */
    double coll_last_share; /* of the collectives with waits, the share it arrived last in */
    char coll_cause[16];    /* what made it late (collectives' straggler_cause), "" when not known */
    size_t coll_common_steps; /* the steps every rank has, in the matching (0: none) */
    /* the network, for advice's slow-network rule: of the matched collectives
     * that end together, with a size and busbw, that the ranks reach
     * together (a rank's mean wait under TPROF_NET_TOGETHER of the median
     * transfer), the one with the most transfer time; coll_net_count 0: none */
    char coll_net_type[24], coll_net_group[64], coll_net_dtype[24];
    int64_t coll_net_bytes, coll_net_group_size, coll_net_count;
    int64_t coll_net_transfer_ns; /* summed over its instances */
    double coll_net_busbw;        /* GB/s, from the median transfer time */
    double coll_net_wait_share;   /* a rank's mean wait / the median transfer time */
    /* Ascend's slowest link (collectives' hccl_slow_links): of RDMA and SDMA
     * the one whose slowest (step, rank) bandwidth is lowest against the
     * mean; slow_link_n 0: none */
    char slow_link_transport[8], slow_link_step[32];
    int64_t slow_link_rank, slow_link_n;
    double slow_link_gbps, slow_link_mean_gbps, slow_link_max_gbps;
} tprof_ranks_result;
#define TPROF_NET_TOGETHER 0.10

int tprof_ranks(const tprof_trace *const *traces, size_t n, tprof_ranks_result **out);
void tprof_ranks_free(tprof_ranks_result *r);
/* The same in two parts, so that each trace can be freed once read: the
 * facts of one trace (a "rank_facts" result: its rank, steps, temporal and
 * communication totals), then the ranks from the facts of every trace, in
 * the order given (a rank the trace does not say is its place there). */
extern const tprof_result_desc tprof_rank_facts_desc;
int tprof_rank_facts(const tprof_trace *t, tprof_result **out);
/* The same when the trace's communication, and its temporal breakdown with
 * the default options (TEMPORAL; NULL: computed here), were analysed already. */
int tprof_rank_facts_from(const tprof_trace *t, const tprof_comm_result *comm, const tprof_temporal_result *temporal,
                          tprof_result **out);
int tprof_ranks_reduce(const tprof_result *const *facts, size_t n, tprof_ranks_result **out);
/* The "ranks" result: the straggler and skew, and a row per rank. */
extern const tprof_result_desc tprof_ranks_desc;
int tprof_ranks_tables(const tprof_ranks_result *r, tprof_result **out);
/* Takes the collectives' straggler from a tprof_collectives_reduce result. */
void tprof_ranks_add_collectives(tprof_ranks_result *r, const tprof_result *collectives);

/* ---- collectives: each collective matched across the ranks of its group ---- */

/* GPU work, runtime calls, and the record_param_comms calls with their metadata */
#define TPROF_COLLECTIVES_KEEP (TPROF_KERNELS_KEEP | TPROF_KEEP_CALLS | TPROF_KEEP_MARKERS)
/* A rank's collective instances (its recorded calls timed by their
 * kernels; its communication kernels when it recorded no calls) and its
 * ProfilerStep numbers: what the matching across ranks keeps of a trace. */
extern const tprof_result_desc tprof_coll_instances_desc;
int tprof_coll_instances(const tprof_trace *t, tprof_result **out);
/* The instances of N ranks matched: by process group and Seq where the
 * group records them, else by order within group and collective; per
 * collective, group, dtype and size the transfer time and bandwidth, per
 * rank its waits and the cost it imposed on the others, and the straggler
 * (docs/METRICS.md). */
extern const tprof_result_desc tprof_collectives_desc;
int tprof_collectives_reduce(const tprof_result *const *per_rank, size_t n, tprof_result **out);
/* The same matching spread by process group over OWNERS (trainprof-mpi's
 * processes; tprof_collectives_reduce runs it as one owner), each step's
 * output a result that moves between owners as bytes (tprof_result_write):
 *  1. tprof_coll_plan_new: every owner, from every rank's instances in
 *     the reduce's order (their rows not needed: tprof_coll_header), the
 *     rank order and the steps every rank has;
 *  2. tprof_coll_route: input I's instances of those steps, to TO[owner of
 *     their group] (tprof_coll_routed_desc, made when NULL);
 *  3. tprof_coll_match: an owner matches what was routed to it (ROUTED
 *     kept until finish), giving clock pairs to PAIRS[owner of their rank];
 *  4. tprof_coll_fit: an owner's ranks' clocks from their pairs, for every
 *     owner;
 *  5. tprof_coll_finish: with every owner's clocks, its partial;
 *  6. tprof_coll_join: every partial (and clock) onto CARRIER, a rank's
 *     instances (the first rank's), which tprof_collectives_reduce then
 *     reads instead of matching (tprof_coll_matched).
 * Every sum is of integers and every list sorted before it is read: the
 * outcome does not depend on how the groups were spread. */
typedef struct tprof_coll_plan tprof_coll_plan;
typedef struct tprof_coll_owner tprof_coll_owner;
extern const tprof_result_desc tprof_coll_routed_desc, tprof_coll_pairs_desc, tprof_coll_fits_desc,
    tprof_coll_partial_desc;
/* A rank's instances without their rows: its rank and steps (the plan's
 * input), and with WHOLE the rest too (what the root needs once the
 * instances were matched elsewhere). */
int tprof_coll_header(const tprof_result *inst, int whole, tprof_result **out);
tprof_coll_plan *tprof_coll_plan_new(const tprof_result *const *per_rank, size_t n, unsigned owners);
void tprof_coll_plan_free(tprof_coll_plan *p);
size_t tprof_coll_plan_place(const tprof_coll_plan *p, size_t i); /* input I's place in rank order */
size_t tprof_coll_plan_common(const tprof_coll_plan *p);          /* the steps every rank has */
int64_t tprof_coll_plan_rank(const tprof_coll_plan *p, size_t k);  /* the rank at place K */
unsigned tprof_coll_owner_of_group(const tprof_coll_plan *p, const char *group);
unsigned tprof_coll_owner_of_rank(const tprof_coll_plan *p, size_t k);
int tprof_coll_route(const tprof_coll_plan *p, size_t i, const tprof_result *inst, tprof_result **to);
tprof_coll_owner *tprof_coll_owner_new(const tprof_coll_plan *p);
void tprof_coll_owner_free(tprof_coll_owner *o);
int tprof_coll_match(tprof_coll_owner *o, const tprof_result *const *routed, size_t n, tprof_result **pairs);
int tprof_coll_fit(const tprof_coll_plan *p, unsigned me, const tprof_result *const *pairs, size_t n,
                   tprof_result **fits);
int tprof_coll_finish(tprof_coll_owner *o, const tprof_result *const *fits, size_t nfits, tprof_result **partial);
int tprof_coll_join(const tprof_coll_plan *p, const tprof_result *const *fits, size_t nfits,
                    const tprof_result *const *partials, size_t n, tprof_result *carrier);
/* Whether INST carries a join's outcome. */
int tprof_coll_matched(const tprof_result *inst);
/* The steps as the one owner of every group, onto CARRIER (the ranks' own
 * rows read where they are: nothing routed). */
int tprof_coll_match_here(const tprof_result *const *per_rank, size_t n, tprof_result *carrier);
/* Whether a collective type (as the result names it) ends together on every
 * rank of its group, so that a rank's wait is its duration minus the
 * shortest: allreduce, allgather, reduce_scatter, broadcast, barrier. */
int tprof_collective_ends_together(const char *type);

/* ---- critical-path: what bounds each step, as HTA's critical path defines it ---- */

/* host ops and runtime calls as events (their file order breaks ties), GPU
   work with its sync waits, the GPU-side annotations (--annotation counts them) */
#define TPROF_CRITICAL_PATH_KEEP                                                                    \
    (TPROF_KERNELS_KEEP | TPROF_KEEP(TPROF_KIND_CPU) | TPROF_COMPACT_SPANS | TPROF_KEEP(TPROF_KIND_GPU_ANNOTATION) | \
     TPROF_KEEP_SYNC)
typedef struct {
    int64_t step_first, step_last; /* ProfilerStep numbers, -1: open */
    const char *annotation; /* HTA's annotation: the events whose name holds it, in file order (NULL: steps) */
    int64_t instance_first, instance_last; /* with ANNOTATION: its instances (0-based) as one window; -1: 0 */
    int whole; /* the whole trace as one window (without steps it is anyway) */
    int path;  /* the result's path table holds every edge of the paths */
    size_t max_windows; /* 0: every step; else at most this many, evenly spaced (the first, a warm-up, left
                           out from 3 steps on): summary's and advice's sample */
    int threads; /* 1: the calling thread alone; else a second one for a large trace (the host order
                    beside the correlations, then half the windows) */
} tprof_cp_opts;
/* The critical path of each window (each ProfilerStep by default): its
 * length against the window's, what bounds it, the events on it
 * (docs/METRICS.md). TPROF_EUSAGE when no window matches the options. */
extern const tprof_result_desc tprof_critical_path_desc;
int tprof_critical_path(const tprof_trace *t, const tprof_cp_opts *opts, tprof_result **out);
/* Sorts the events on the path and derives the shares (after a combine or a fold). */
int tprof_critical_path_finish(tprof_result *r);
int tprof_critical_path_combine(const tprof_result *const *parts, const int64_t *ranks, size_t n,
                                tprof_result **out);
/* The paths of the windows OPTS choose as trace events to add to T's file
 * (critical-path --overlay; critical_path_overlay.c says what they are):
 * JSON objects separated by commas, for tprof_trace_copy_with_events. *OUT
 * is malloc'd. */
int tprof_critical_path_overlay_events(const tprof_trace *t, const tprof_cp_opts *opts, char **out, size_t *len);

/* ---- advice: findings over documented thresholds, with their evidence ---- */

/* CPU ops and their inputs: the op rules */
#define TPROF_ADVICE_KEEP                                                                                        \
    (TPROF_KERNELS_KEEP | TPROF_KEEP_MARKERS | TPROF_KEEP(TPROF_KIND_CPU) | TPROF_COMPACT_SPANS | TPROF_KEEP_OP_ARGS | \
     TPROF_SKIP_PLAIN_FRAMES | TPROF_KEEP_SYNC)

typedef struct {
    const char *rule;     /* attention, exposed-comm, cpu-bound, data-loading, fp32-gemm, host-sync,
                             uneven-ranks */
    int64_t rank;         /* the rank it is about, -1 for the whole run */
    double value;         /* the number behind it ... */
    double threshold;     /* ... and the documented threshold it crossed */
    char evidence[320];   /* the numbers, in words */
    const char *remedy;   /* the usual remedy */
} tprof_advice_item;

typedef struct {
    tprof_advice_item *items;
    size_t n;
} tprof_advice;

/* Evaluates every rule on each trace (one per rank) and across them. */
int tprof_advise(const tprof_trace *const *traces, size_t n, tprof_advice **out);
void tprof_advice_free(tprof_advice *a);
/* The "advice" result: a row per finding (rule, rank, value, threshold,
 * evidence, remedy: tprof_finding_cols). */
extern const tprof_result_desc tprof_advice_desc;
#define TPROF_FINDING_NCOLS 7
extern const tprof_col_desc tprof_finding_cols[TPROF_FINDING_NCOLS];
int tprof_advice_tables(const tprof_advice *a, tprof_result **out);
/* The same in two parts, so that each trace can be freed once read: one
 * trace's findings (rank null: that trace), then every trace's findings
 * given their ranks (from tprof_ranks_reduce over the traces' facts, in the
 * same order) and the cross-rank rules. */
int tprof_advise_rank(const tprof_trace *t, tprof_result **out);
/* The same given the trace's critical path (tprof_critical_path over the
 * sample TPROF_ADVICE_PATH_SAMPLE says; NULL: none), for a caller that shows
 * it too. */
#define TPROF_ADVICE_PATH_SAMPLE 4
int tprof_advise_rank_with_path(const tprof_trace *t, const tprof_result *path, tprof_result **out);
int tprof_advise_reduce(const tprof_result *const *per_rank, const tprof_ranks_result *ranks, tprof_result **out);

/* ---- info: what a trace holds ---- */

extern const tprof_result_desc tprof_info_desc;
int tprof_info_tables(const tprof_trace *t, tprof_result **out);

/* ---- summary: the first screen, one result for the run ---- */

/* Each trace's row (run facts, steps, phases, temporal, communication),
 * from the analyses it was made of. */
extern const tprof_result_desc tprof_summary_trace_desc;
int tprof_summary_trace(const tprof_trace *t, const tprof_steps_result *steps, const tprof_temporal_result *temporal,
                        const tprof_comm_result *comm, tprof_result **out);
/* What the summary keeps of one trace once it is freed. */
typedef struct {
    const tprof_result *trace;    /* tprof_summary_trace */
    const tprof_result *kernels;  /* tprof_kernels_tables, by name, whole trace */
    const tprof_result *facts;    /* tprof_rank_facts */
    const tprof_result *findings; /* tprof_advise_rank */
    const tprof_result *ops;      /* tprof_ops by name, whole trace; NULL: no op table */
    const tprof_result *modules;  /* tprof_ops by module (the whole path), whole trace; NULL: none */
    const tprof_result *coll;     /* tprof_coll_instances; NULL: none */
    const tprof_result *path;     /* tprof_critical_path over TPROF_ADVICE_PATH_SAMPLE steps; NULL: none */
} tprof_summary_part;
/* The run's summary: the traces' rows, the kernels, ops and nn.Modules of all
 * traces, the ranks (two traces or more) and the advice. PARTS come in the
 * order the traces are shown (rank order, tprof_rank_order over every
 * input), and the tables of all traces are combined in that order. */
extern const tprof_result_desc tprof_summary_desc;
int tprof_summary_reduce(const tprof_summary_part *parts, size_t n, tprof_result **out);
/* The same with the kernels, ops and nn.Modules of all traces given
 * (folded across the ranks in rank order, each finished: the parts' own
 * are not read), as trainprof's summary does so that it never holds every
 * rank's tables. An ops or modules NULL: not every trace has them. */
typedef struct {
    const tprof_result *kernels, *ops, *modules;
} tprof_summary_combined;
int tprof_summary_reduce_combined(const tprof_summary_part *parts, size_t n, const tprof_summary_combined *all,
                                  tprof_result **out);

#ifdef __cplusplus
}
#endif
#endif
