/* Merging per-rank traces into one timeline.
 *
 * Every rank's processes get their own pid namespace and readable names
 * ("rank 3 / CPU", "rank 3 / GPU 0 / stream 7"); flow, correlation and
 * external ids are made unique per rank; clocks are aligned; events are
 * written in timestamp order by an external merge sort, so memory stays
 * within a budget whatever the inputs' size. docs/METRICS.md ("merge") has
 * every rule.
 *
 * Ownership: tprof_merge() returns a report the caller frees with
 * tprof_merge_report_free(). */
#ifndef TRAINPROF_MERGE_H
#define TRAINPROF_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "trainprof/result.h"
#include "trainprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TPROF_ALIGN_AUTO = 0,   /* collective, else base-time, else none */
    TPROF_ALIGN_NONE,       /* timestamps as written */
    TPROF_ALIGN_BASE_TIME,  /* shift by the difference of baseTimeNanoseconds */
    TPROF_ALIGN_FIRST_STEP, /* the first ProfilerStep common to all ranks starts together */
    TPROF_ALIGN_COLLECTIVE, /* the first common NCCL collective kernel ends together */
} tprof_align;

const char *tprof_align_name(tprof_align a);
int tprof_align_parse(const char *s, tprof_align *out);

/* A merge spread over processes (trainprof-mpi): each process makes the
 * first read of the inputs MINE marks, every process plans from every
 * input's findings (SHARE), each rewrites its inputs,
 * and all but the root send their rewritten events, in the output's order,
 * with what their reads found, through SEND; the root merges them with its
 * own, each peer's read through RECV, and writes the output: the one
 * process's bytes. A peer's failure reaches the root, which reports it. */
typedef struct {
    void *ctx;
    const uint8_t *mine; /* per input: this process rewrites it */
    int root;            /* this process writes the output */
    int peers;           /* the root: how many processes send (numbered 1..peers) */
    /* a peer: the next LEN bytes of its stream to the root (LEN 0: the end); 0 or -1 */
    int (*send)(void *ctx, const void *data, size_t len);
    /* the root: up to CAP bytes of PEER's stream into BUF; 0 at its end, -1 on error */
    long (*recv)(void *ctx, int peer, void *buf, size_t cap);
    /* every process: the LEN bytes at DATA of each, concatenated in process order into *ALL
       (malloc'ed), *ALL_LEN long (the plan's first reads, each of its own inputs); 0 or -1 */
    int (*share)(void *ctx, const void *data, size_t len, char **all, size_t *all_len);
} tprof_merge_spread;

typedef struct {
    const char *const *inputs;
    size_t ninputs;
    const char *output;      /* .gz: gzip, .zst: zstd, else plain JSON */
    int level;               /* compression level, 0 = fast default */
    tprof_align align;
    const int64_t *ranks;    /* keep only these ranks (sorted or not), NULL = all */
    size_t nranks;
    int has_steps;           /* keep only [start of step_first, end of step_last] */
    int64_t step_first, step_last;
    const char *const *drop_cats; /* categories to drop */
    size_t ndrop_cats;
    int64_t min_dur_ns;      /* drop complete events shorter than this (0: keep all) */
    size_t mem_budget;       /* bytes of events held before spilling a sorted run; 0 = 256 MiB */
    const char *tmp_dir;     /* for spilled runs; NULL = the output's directory */
    const tprof_classifier *classifier;
    tprof_progress_fn progress;         /* the first read of each input (the plan) */
    void *progress_ctx;
    tprof_progress_fn rewrite_progress; /* the second read (the rewrite), apart so that a
                                           caller can tell the passes; may be NULL */
    void *rewrite_progress_ctx;
    int generic_only;        /* re-serialize every event token by token (tests compare both paths) */
    int threads;             /* inputs rewritten at once: 0 = one per core */
    const tprof_merge_spread *spread; /* NULL: this process merges alone */
} tprof_merge_opts;

typedef enum {
    TPROF_RANK_FROM_DISTRIBUTED = 0, /* distributedInfo.rank */
    TPROF_RANK_FROM_NAME,            /* rank(\d+) in the file name */
    TPROF_RANK_FROM_ORDER,           /* the argument's position */
} tprof_rank_source;

typedef struct {
    const char *path;
    int64_t rank;
    tprof_rank_source rank_source;
    int included;            /* not filtered out by --ranks */
    int truncated;           /* the input ended early: what was read is merged */
    int64_t offset_ns;       /* added to every timestamp */
    int64_t window_lo, window_hi; /* step window in the input's clock (INT64_MIN/MAX: none) */
    int64_t pid_base;        /* new pids are pid_base + 0, 1, ... */
    uint64_t events_in, events_out, dropped;
    uint64_t ids_kept;       /* ids too large to make unique, written unchanged */
    char align_note[160];    /* what the offset aligns (or why it could not) */
} tprof_merge_rank;

typedef struct {
    tprof_align align;       /* the alignment applied (never AUTO) */
    size_t nranks;
    tprof_merge_rank *ranks; /* in argument order */
    uint64_t events_out;
    uint64_t runs_spilled;   /* sorted runs written to temporary files */
    uint64_t bytes_out;      /* JSON bytes before compression */
    uint64_t file_bytes;     /* bytes of the output file */
    char problems[1024];     /* duplicate ranks, gaps, fallbacks: one per line, or "" */
} tprof_merge_report;

/* Merges. Returns 0, TPROF_ETRUNC (an input was cut; the output holds what
 * was read), or a negative code with the message in errbuf (no output file
 * is left behind). *report is set in the first two cases. */
int tprof_merge(const tprof_merge_opts *opts, tprof_merge_report **report, char *errbuf, size_t errlen);
void tprof_merge_report_free(tprof_merge_report *r);
/* "distributedInfo", "file name" or "argument order". */
const char *tprof_rank_source_name(tprof_rank_source s);
/* The report as result tables: the output and its sizes, a row per input. */
extern const tprof_result_desc tprof_merge_desc;
int tprof_merge_tables(const tprof_merge_report *r, const char *output, tprof_result **out);

/* Copies the trace file IN to OUT (compressed as OUT's name says, through
 * the atomic sink) with EVENTS (JSON objects separated by commas) added at
 * the end of its traceEvents; every other byte is as it was. An input cut
 * inside traceEvents keeps its complete events and is closed after EVENTS
 * (*CUT = 1). TPROF_ENOTTRACE when IN has no traceEvents array. */
int tprof_trace_copy_with_events(const char *in, const char *out, const char *events, size_t len, int *cut,
                                 char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
