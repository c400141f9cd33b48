/* diff: two runs (each one trace or several, one per rank) side by side.
 * Computed on top of the analyses in analysis.h applied to each trace;
 * definitions, aggregation and the kernel-name rules are in docs/METRICS.md
 * ("trainprof diff").
 *
 * Ownership: a result owns its strings; it does not point into the traces. */
#ifndef TRAINPROF_DIFF_H
#define TRAINPROF_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "trainprof/result.h"
#include "trainprof/analysis.h"
#include "trainprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a diff needs stored (pass as tprof_read_opts.keep). */
#define TPROF_DIFF_KEEP (TPROF_STEPS_KEEP | TPROF_COMM_KEEP | TPROF_OPS_KEEP | TPROF_SKIP_PLAIN_FRAMES | TPROF_KEEP_SYNC)

/* The metrics of a side: ns per step, mean over the side's ranks. Every one
 * is a time, so for every one larger is worse (a regression). */
typedef enum {
    TPROF_DIFF_STEP_TIME = 0, /* mean ProfilerStep duration */
    TPROF_DIFF_KERNEL_TIME,   /* sum of GPU event durations */
    TPROF_DIFF_GPU_BUSY,      /* union of GPU work (temporal breakdown, last step kept) */
    TPROF_DIFF_GPU_IDLE,
    TPROF_DIFF_COMPUTE,
    TPROF_DIFF_NON_COMPUTE,
    TPROF_DIFF_COMM,          /* union of communication kernels */
    TPROF_DIFF_COMM_EXPOSED,  /* of that, the time no compute ran */
    TPROF_DIFF_CPU_DATA,      /* step CPU time per phase (steps' phase split) */
    TPROF_DIFF_CPU_FORWARD,
    TPROF_DIFF_CPU_BACKWARD,
    TPROF_DIFF_CPU_OPTIMIZER,
    TPROF_DIFF_CPU_OTHER,
    TPROF_DIFF_GPU_DATA,      /* GPU time of the work launched in each phase */
    TPROF_DIFF_GPU_FORWARD,
    TPROF_DIFF_GPU_BACKWARD,
    TPROF_DIFF_GPU_OPTIMIZER,
    TPROF_DIFF_GPU_OTHER,
    TPROF_DIFF_METRICS
} tprof_diff_metric;

/* "step_time", "kernel_time", "gpu_busy", ... (NULL when out of range). */
const char *tprof_diff_metric_name(tprof_diff_metric m);
/* Returns 0 and sets *out, or -1 for an unknown name. */
int tprof_diff_metric_parse(const char *s, tprof_diff_metric *out);

/* (cand - base) / base x 100; 0 when both are 0, +inf when only base is 0. */
double tprof_diff_pct(double base, double cand);

/* Writes the normalised form of a kernel NAME into BUF (always
 * NUL-terminated when LEN > 0) and returns its full length, like snprintf.
 * Rules (docs/METRICS.md): a leading "void " dropped; template argument
 * lists folded to "<>"; argument lists folded to "()"; tile shapes such as
 * 128x64 to "{tile}"; alignN to "align{n}"; a leading architecture word
 * (volta_, ampere_, sm80_, ...) to "{arch}_". */
size_t tprof_kernel_name_normalize(const char *name, char *buf, size_t len);

typedef struct {
    size_t top; /* rows in the regression and improvement lists; 0 = all */
} tprof_diff_opts;

typedef struct {
    size_t traces;
    size_t steps;           /* ProfilerSteps over all traces, a trace without any counted as 1 */
    size_t traces_no_steps; /* traces without ProfilerStep: one step, the trace's time span */
    int phases_found;       /* some trace has phase markers in its steps */
    double metric[TPROF_DIFF_METRICS];
} tprof_diff_side;

/* Per collective type, communication time (union) per step, mean over ranks. */
typedef struct {
    const char *type;
    double time_ns[2];    /* [0] base, [1] candidate */
    double exposed_ns[2];
} tprof_diff_comm;

/* One normalised kernel name. Per side: [0] base, [1] candidate. */
typedef struct {
    const char *name;      /* normalised */
    tprof_class klass;     /* of the largest variant */
    const char *top[2];    /* raw name of the side's largest variant, NULL when absent */
    size_t variants[2];    /* raw names folded into this one */
    uint64_t count[2];     /* summed over ranks */
    int64_t total_ns[2];   /* summed over ranks */
    double count_per_step[2], total_per_step[2]; /* divided by the side's steps */
    double mean_ns[2];     /* total / count (per launch; 0 when absent) */
    double delta_ns;       /* total_per_step[1] - total_per_step[0] */
    double delta_pct;      /* tprof_diff_pct of total_per_step */
} tprof_diff_kernel;

typedef struct {
    tprof_diff_side side[2]; /* [0] base, [1] candidate */
    tprof_diff_comm *comm;   /* types seen on either side, by base+candidate time, descending */
    size_t ncomm;
    tprof_diff_kernel *kernels; /* by max(total_per_step), descending */
    size_t nkernels;
    size_t matched, only_base, only_cand; /* kernel counts */
    /* indexes into kernels, top opts->top each: delta_ns > 0 largest first,
     * delta_ns < 0 most negative first, only in base / only in candidate by
     * their total per step */
    size_t *regressions, nregressions;
    size_t *improvements, nimprovements;
    size_t *gone, ngone;
    size_t *added, nadded;
    void *priv;
} tprof_diff_result;

/* BASE and CAND: the traces of each side (one per rank), each side at least
 * one. Returns 0, TPROF_EUSAGE for an empty side, or TPROF_ENOMEM. */
int tprof_diff(const tprof_trace *const *base, size_t nbase, const tprof_trace *const *cand, size_t ncand,
               const tprof_diff_opts *opts, tprof_diff_result **out);
void tprof_diff_free(tprof_diff_result *r);
/* The same one trace at a time, so that each trace can be freed once read
 * and no side's traces are held at once: what diff keeps of one trace (its
 * part: its figures and collective types per step, its kernel rows, ops
 * and modules, its file's name, rank, steps and whether it was cut), then
 * the parts folded into the comparison as they come. */
typedef struct tprof_diff_part tprof_diff_part;
int tprof_diff_part_of(const tprof_trace *t, tprof_diff_part **out);
/* The part as results, so that it travels as bytes (tprof_result_write)
 * like every per-rank result: OUT[0] its figures, kernels, ops and file
 * (tprof_diff_part_desc), OUT[1] its collective instances
 * (tprof_coll_instances). tprof_diff_part_of is the two calls in turn. */
#define TPROF_DIFF_PART_RESULTS 2
extern const tprof_result_desc tprof_diff_part_desc;
int tprof_diff_part_results(const tprof_trace *t, tprof_result *out[TPROF_DIFF_PART_RESULTS]);
/* The part from IN (taken: set to NULL on success): 0, TPROF_EFORMAT when
 * they are not a part's results, TPROF_ENOMEM. */
int tprof_diff_part_from(tprof_result *in[TPROF_DIFF_PART_RESULTS], tprof_diff_part **out);
void tprof_diff_part_free(tprof_diff_part *p);

/* The comparison of NPARTS[0] base and NPARTS[1] candidate traces, their
 * parts added one at a time: the base's first, each side in rank order
 * (the figures are averaged and summed in that order). The fold keeps what
 * the comparison needs of them (per-side sums by kernel, op and module;
 * each trace's file facts and collective instances). NULL: out of memory. */
typedef struct tprof_diff_fold tprof_diff_fold;
tprof_diff_fold *tprof_diff_fold_new(const size_t nparts[2]);
/* Adds P to SIDE (0 base, 1 candidate) and frees it. 0; TPROF_EUSAGE for
 * one part too many or a base part after a candidate one; TPROF_ENOMEM
 * (the fold refuses everything after it). */
int tprof_diff_fold_add(tprof_diff_fold *f, int side, tprof_diff_part *p);
/* Once every part is added: the comparison (*OUT, the caller's). 0,
 * TPROF_EUSAGE when a side is empty or short of its parts, TPROF_ENOMEM. */
int tprof_diff_fold_end(tprof_diff_fold *f, const tprof_diff_opts *opts, tprof_diff_result **out);
void tprof_diff_fold_free(tprof_diff_fold *f);

/* --fail-above: the metric checked, the limit, the change and the verdict. */
typedef struct {
    int on;
    tprof_diff_metric metric;
    double limit, pct; /* percent */
    int failed;
} tprof_diff_check;

/* The comparison as result tables: each side with its files, the metrics,
 * the collective types, the kernels (the lists and every row), the check,
 * the flat table CSV prints, the ops matched by name and input shapes and
 * the nn.Modules by path (per step, by the size of the change), each
 * side's collectives and critical path. R from F's tprof_diff_fold_end. */
extern const tprof_result_desc tprof_diff_desc;
int tprof_diff_tables(const tprof_diff_result *r, const tprof_diff_fold *f, const tprof_diff_check *ck,
                      tprof_result **out);

#ifdef __cplusplus
}
#endif
#endif
