/* Recording: a small profiler a C/C++ training program links to write
 * Kineto-style Chrome traces (*.pt.trace.json.gz) and PyTorch-format memory
 * snapshots (*.pkl), driven by a ProfileConfig (VeOmni's train.profile.*).
 *
 * Use (docs/RECORDING.md has the whole story):
 *   tprof_profile_config cfg; tprof_config_default(&cfg);
 *   tprof_config_from_args(&cfg, &argc, argv, NULL, NULL, err, sizeof err); // YAML + --train.profile.x=v
 *   tprof_profiler_start(&cfg, err, sizeof err);
 *   for (g = first; g <= last; g++) {
 *       tprof_step_begin(g);
 *       { TPROF_RANGE("forward"); ... }
 *       tprof_step_end(g);          // writes the trace at the end of step end_step-1
 *   }
 *   tprof_profiler_stop();          // also run at exit and on SIGINT/SIGTERM
 *
 * The process has one profiler. Range, instant and counter calls are cheap
 * when it is off (one relaxed load) and lock-free and allocation-free when on
 * (a store into the calling thread's preallocated buffer). Names passed to
 * them are not copied: they must stay valid until the trace is written
 * (string literals, or strings the program keeps).
 *
 * Ownership: the profiler owns its buffers. tprof_profiler_stop frees its
 * tables but keeps the per-thread event buffers until the process exits
 * (another thread may still be recording into them). */
#ifndef TRAINPROF_PROFILER_H
#define TRAINPROF_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trainprof/flops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- configuration: train.profile.* ---------------------------------- */

/* The largest max_events: 72-byte events plus 4 shape and 8 frame words per
 * event must stay addressable with 32-bit offsets (about 4.5 GiB a thread). */
#define TPROF_MAX_EVENTS_LIMIT ((int64_t)1 << 26)

typedef struct {
    bool enable;           /* false */
    int start_step;        /* 1: first recorded global step */
    int end_step;          /* 2: first step not recorded; the trace is written at the end of end_step-1 */
    char trace_dir[1024];  /* "./trace" */
    bool record_shapes;    /* true: shapes given to tprof_op_begin become "Input Dims" */
    bool profile_memory;   /* true: [memory] events' history is kept and the .pkl snapshot written */
    bool with_stack;       /* true: a native backtrace per range, symbolized at write time */
    bool with_modules;     /* false: tprof_module_begin/end record "nn.Module: NAME" annotations */
    bool rank0_only;       /* true: only global rank 0 records */
    /* trainprof's own keys, also accepted in the profile block */
    char prefix[64];       /* "trainprof": file names are PREFIX_rank{R}_{unix seconds}.* */
    int64_t max_events;    /* 262144: events kept per thread (72 bytes each); beyond, counted as dropped;
                            * at most TPROF_MAX_EVENTS_LIMIT */
} tprof_profile_config;

void tprof_config_default(tprof_profile_config *c);

/* Sets one profile field from text, KEY without the "train.profile." prefix
 * ("start_step", "enable", ...). Booleans take yes/true/t/y/1 and
 * no/false/f/n/0 in any case, integers decimal digits. Returns 0, or
 * TPROF_EUSAGE with a message naming the key and the value. */
int tprof_config_set(tprof_profile_config *c, const char *key, const char *value, char *errbuf, size_t errlen);

/* Keys outside train.profile (in the YAML file or as --a.b=v flags) go to an
 * optional callback, so one file and one command line also configure the
 * program. Return 0 when taken, 1 when unknown (ignored in YAML, left in argv),
 * or a negative code with errbuf filled (the load fails). */
typedef int (*tprof_config_other_fn)(void *ud, const char *key, const char *value, char *errbuf, size_t errlen);

/* Reads train.profile.* from a YAML file. Unknown keys inside the profile
 * block, and values of the wrong type, are errors; other keys go to OTHER. */
int tprof_config_load_yaml(tprof_profile_config *c, const char *path, tprof_config_other_fn other, void *ud,
                           char *errbuf, size_t errlen);

/* VeOmni's command line: an optional positional *.yaml / *.yml file loaded
 * first, then --train.profile.KEY=V, --train.profile.KEY V, and for booleans
 * a bare --train.profile.KEY (true). The flags win over the file. Arguments
 * it used are removed from argv (*argc updated); the rest stay for the
 * program. Validates the result (tprof_config_validate). */
int tprof_config_from_args(tprof_profile_config *c, int *argc, char **argv, tprof_config_other_fn other, void *ud,
                           char *errbuf, size_t errlen);

/* start_step >= 1, end_step > start_step, a local trace_dir, a prefix
 * without '/', 16 <= max_events <= TPROF_MAX_EVENTS_LIMIT. Returns 0 or TPROF_EUSAGE with a message. */
int tprof_config_validate(const tprof_profile_config *c, char *errbuf, size_t errlen);

/* ---- schedule ---------------------------------------------------------- */

typedef enum {
    TPROF_STEP_NONE = 0,    /* not profiled */
    TPROF_STEP_WARMUP,      /* profiler on, events discarded (start_step-1 when start_step > 1) */
    TPROF_STEP_RECORD,      /* recorded */
    TPROF_STEP_RECORD_SAVE, /* recorded, then the trace is written (end_step-1) */
} tprof_step_action;

/* What global step G is for a configuration (enable and rank ignored). */
tprof_step_action tprof_schedule_action(const tprof_profile_config *c, int64_t global_step);

/* ---- the profiler ------------------------------------------------------- */

/* The rank and world size, before tprof_profiler_start; otherwise they come
 * from the RANK and WORLD_SIZE environment variables (0 and 1 when unset). */
void tprof_profiler_set_rank(int rank, int world_size);

/* Starts the profiler if C enables it for this rank (validated first).
 * Returns 0 whether or not this rank records; see tprof_profiler_active.
 * A rank that records first creates trace_dir if needed and writes (and
 * removes) a probe file in it: a directory that is read-only, not a
 * directory, full or on a pseudo file system (/proc) fails here with
 * TPROF_EWRITE and a message naming it, instead of at the window's end. */
int tprof_profiler_start(const tprof_profile_config *c, char *errbuf, size_t errlen);
/* True when this rank records some window. */
bool tprof_profiler_active(void);
/* Marks the start and the end of global step G (the trainer's own counter,
 * so a resumed run still records its window). The step is labelled
 * ProfilerStep#(G-1), as torch labels a fresh run. At the end of step
 * end_step-1 the trace (and snapshot) are written. A step may begin and end
 * on different threads (the span is on the thread that began it). Returns 0
 * or the write's error. */
int tprof_step_begin(int64_t global_step);
int tprof_step_end(int64_t global_step);
/* Writes what was recorded if the window was not written yet (a run that
 * ended early, or was interrupted), then frees everything. Safe to call
 * twice; also registered with atexit. Returns 0, or the error of the first
 * write of this run that failed (here, at a step's end or on a signal;
 * TPROF_EWRITE when the disk refused it), so a program can exit non-zero
 * when its profile is missing. */
int tprof_profiler_stop(void);
/* The last files written ("" when none). */
const char *tprof_profiler_trace_path(void);
const char *tprof_profiler_snapshot_path(void);
/* Events dropped by full buffers so far, all threads. */
uint64_t tprof_profiler_dropped(void);
/* Where the profiler's one-line messages go (default: stderr). NULL silences. */
void tprof_profiler_set_log(void (*fn)(const char *line));

/* Names the calling thread in the trace (thread_name metadata). */
void tprof_thread_name(const char *name);

/* ---- events (hot path) -------------------------------------------------- */

typedef uint64_t tprof_range; /* 0: nothing was recorded; ending it does nothing */

/* A user_annotation range (torch's record_function). */
tprof_range tprof_range_begin(const char *name);
/* A cpu_op range; DIMS holds NINPUTS shapes back to back, NDIMS[i] numbers
 * each (kept as "Input Dims" with record_shapes; copied). */
tprof_range tprof_op_begin(const char *name, const int64_t *dims, const int *ndims, int ninputs);
/* "nn.Module: NAME" annotations, recorded only with with_modules. */
tprof_range tprof_module_begin(const char *name);
/* A collective call, as PyTorch's c10d records one: a "record_param_comms"
 * cpu_op with "Collective name" (COLLECTIVE: "allreduce", "broadcast", ...),
 * "dtype" (DTYPE: "Float", "Double", ...), NELEMS elements in and out and
 * "Group size". trainprof comm lists such calls with their bytes (and, on a
 * GPU, the kernels launched inside). The strings are not copied. */
tprof_range tprof_comm_begin(const char *collective, const char *dtype, int64_t nelems, int group_size);
/* The same in process group GROUP (not copied; tprof_comm_begin: "0", c10d's
 * default group, with the ranks 0 .. world - 1 when the rank is known).
 * Each call is numbered in its group from 0 in each run ("Seq"), so that
 * `trainprof collectives` matches the same call across ranks. */
tprof_range tprof_comm_begin_group(const char *collective, const char *dtype, int64_t nelems, int group_size,
                                   const char *group);
/* Ends a range begun on this thread. */
void tprof_range_end(tprof_range r);
void tprof_instant(const char *name);
/* A counter track (ph "C") with one series. */
void tprof_counter(const char *name, double value);

/* Memory hooks for the program's allocator. DEVICE -1 is the CPU. Each call
 * is a "[memory]" instant (Kineto's args); with profile_memory the history
 * also goes to the snapshot. SEGMENT calls declare reserved memory (the pool
 * an allocator carves blocks from); without them reserved = allocated. These
 * take a short lock (the pointer -> size table). */
void tprof_mem_segment(void *ptr, size_t size, int device);
void tprof_mem_alloc(void *ptr, size_t size, int device);
void tprof_mem_free(void *ptr);

/* ---- scoped ranges ------------------------------------------------------- */

void tprof__range_cleanup(tprof_range *r);
#define TPROF__CAT2(a, b) a##b
#define TPROF__CAT(a, b) TPROF__CAT2(a, b)
#ifndef __cplusplus
/* Ends the range when the enclosing block exits (gcc/clang cleanup). */
#define TPROF_RANGE(name) \
    __attribute__((cleanup(tprof__range_cleanup), unused)) tprof_range TPROF__CAT(tprof__r_, __LINE__) = tprof_range_begin(name)
#endif

/* ---- step meter line ---------------------------------------------------- */

/* One line for step STEP: the metrics by VeOmni's names, then NX extra
 * name/value pairs (loss, lr, ...). JSON != 0 writes a JSON object (JSON
 * lines), else "step N: name: value, ...". Returns the length it needed. */
size_t tprof_step_line(char *buf, size_t len, int64_t step, const tprof_meter_metrics *m, const char *const *xnames,
                       const double *xvalues, size_t nx, int json);

#ifdef __cplusplus
}

namespace trainprof {
/* RAII range: { trainprof::Range r("forward"); ... } */
class Range {
  public:
    explicit Range(const char *name) : r_(tprof_range_begin(name)) {}
    ~Range() { tprof_range_end(r_); }
    Range(const Range &) = delete;
    Range &operator=(const Range &) = delete;

  private:
    tprof_range r_;
};
} // namespace trainprof
#define TPROF_RANGE(name) ::trainprof::Range TPROF__CAT(tprof__r_, __LINE__)(name)
#endif

#endif
