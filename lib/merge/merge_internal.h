/* Pieces of trainprof merge (internal): the plan made from a first read of
 * every input, the per-input event rewriting, and the external sort. */
#ifndef TPROF_MERGE_INTERNAL_H
#define TPROF_MERGE_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trainprof/merge.h"

/* A growable byte buffer. */
typedef struct {
    char *p;
    size_t len, cap;
} mbuf;
int mbuf_grow(mbuf *b, size_t need);
/* inline: the rewrite appends many short pieces per event */
static inline int mbuf_put(mbuf *b, const void *data, size_t n)
{
    if (b->len + n + 1 > b->cap && mbuf_grow(b, b->len + n + 1)) return -2; /* TPROF_ENOMEM */
    memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}
/* V in decimal, without printf. */
int mbuf_i64(mbuf *b, int64_t v);
int mbuf_puts(mbuf *b, const char *s);
int mbuf_printf(mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* S as a JSON string, quoted and escaped. */
int mbuf_json_str(mbuf *b, const char *s, size_t n);

/* What the first read of an input found. */
typedef struct {
    tprof_merge_rank *out;   /* the report row */
    size_t pos;              /* place in rank order, among all inputs */
    int has_rank_meta;
    char *read_note;         /* the reader's remark on this input (a skipped duplicate traceEvents), or NULL */
    int64_t world_size;
    int has_base;
    int64_t base_ns;
    int64_t *gpu_pids;       /* devices with GPU events (pid of Kineto GPU events) */
    size_t ngpu_pids;
    int64_t *gpu_tracks;     /* (device, stream) pairs with GPU events, sorted */
    size_t ngpu_tracks;
    tprof_step *steps;       /* ProfilerStep spans, by time */
    size_t nsteps;
    int64_t *step_gpu_end;   /* per step: end of the GPU work it launched (0: none) */
    char **coll_names;       /* the first collective kernels, by start time */
    int64_t *coll_ends;
    size_t ncoll;
    /* the step window for CPU and for GPU events (INT64_MIN / INT64_MAX: none) */
    int64_t cpu_lo, cpu_hi, gpu_lo, gpu_hi;
    int window_empty;        /* --steps given and none of its steps is here */
} merge_input;

/* First read of every input; fills ranks, order, offsets and windows.
 * ORDER receives the input indices in rank order. */
/* A process of a spread merge that fails before merge_plan's all-gather
 * still takes part in it (with nothing), so that the others do not wait
 * for it: they then find its inputs unread and fail alike. */
void merge_plan_skip(const tprof_merge_opts *o);
int merge_plan(const tprof_merge_opts *o, merge_input *ins, size_t *order, tprof_merge_report *rep,
               char *errbuf, size_t errlen);
void merge_input_free(merge_input *in);

/* Sorted runs of (key, input position, sequence, bytes), spilled to
 * temporary files beyond a memory budget, then merged in key order. One
 * run set per thread; the order does not depend on which thread read what. */
typedef struct merge_runs merge_runs;
int merge_runs_new(merge_runs **out, size_t budget, const char *tmp_dir);
int merge_runs_add(merge_runs *r, int64_t key, uint32_t pos, uint64_t seq, const char *data, size_t len);
typedef int (*merge_emit_fn)(void *ctx, const char *data, size_t len);
/* Merges every run of the NR run sets (each filled by one thread) in key order. */
int merge_runs_finish(merge_runs *const *rs, size_t nr, merge_emit_fn emit, void *ctx);
/* The same with the NS streams of other processes (merge_stream_put's
 * records, then merge_stream_end), each read up to its end; EMIT_KEYED,
 * when set, is given every record's keys instead of EMIT its bytes. */
typedef int (*merge_emit_keyed_fn)(void *ctx, int64_t key, uint32_t pos, uint64_t seq, const char *data, size_t len);
int merge_runs_finish_with(merge_runs *const *rs, size_t nr, FILE *const *streams, size_t ns, merge_emit_fn emit,
                           merge_emit_keyed_fn emit_keyed, void *ctx);
/* One record of a process's stream to F; its end. 0 or TPROF_EIO. */
int merge_stream_put(FILE *f, int64_t key, uint32_t pos, uint64_t seq, const char *data, size_t len);
int merge_stream_end(FILE *f);
uint64_t merge_runs_spilled(const merge_runs *r);
const char *merge_runs_errmsg(const merge_runs *r);
void merge_runs_free(merge_runs *r);

/* Second read of one input: every kept event, rewritten, goes to RUNS; the
 * input's other top-level members go to META (as JSON members "k":v,...). */
int merge_rewrite_input(const tprof_merge_opts *o, merge_input *in, merge_runs *runs, mbuf *meta,
                        char *errbuf, size_t errlen);

#define MERGE_PID_STRIDE 100000    /* new pid = (pos + 1) * stride + local index */
#define MERGE_ID_STRIDE 1000000000000LL /* new id = pos * stride + id */
#define MERGE_KEY_META INT64_MIN         /* sort key of metadata events: first */
#define MERGE_KEY_UNTIMED (INT64_MIN + 1)

#endif
