/* CUDA caching-allocator memory snapshots (torch.cuda.memory._dump_snapshot)
 * and their analyses: peak active memory as PyTorch's memory viewer defines
 * it, reserved memory, call sites live at the peak, fragmentation, OOMs,
 * allocator retries, the memory timeline and two snapshots compared.
 *
 * Every known layout is read: the current dict (segments, device_traces,
 * allocator_settings, external_annotations), older dicts with segments and
 * device_traces only, the 2023 form whose blocks carry a `history`, and a
 * bare list of segments. Definitions: docs/METRICS.md ("mem").
 *
 * Ownership: a snapshot owns its decoded pickle; frame lists are pickle
 * values (tprof_pv) that live as long as the snapshot. Reports are freed
 * with tprof_mem_report_free(). */
#ifndef TRAINPROF_MEM_H
#define TRAINPROF_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "trainprof/pickle.h"
#include "trainprof/result.h"
#include "trainprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TPROF_MEM_ALLOC = 0,
    TPROF_MEM_FREE_REQUESTED,
    TPROF_MEM_FREE_COMPLETED,
    TPROF_MEM_FREE, /* older PyTorch: one event per free */
    TPROF_MEM_SEGMENT_ALLOC,
    TPROF_MEM_SEGMENT_FREE,
    TPROF_MEM_SEGMENT_MAP,
    TPROF_MEM_SEGMENT_UNMAP,
    TPROF_MEM_SNAPSHOT,
    TPROF_MEM_OOM,
    TPROF_MEM_ANNOTATE,
    TPROF_MEM_OTHER,
    TPROF_MEM_ACTION_COUNT
} tprof_mem_action;

typedef enum {
    TPROF_BLOCK_INACTIVE = 0,
    TPROF_BLOCK_ACTIVE_ALLOCATED,
    TPROF_BLOCK_ACTIVE_PENDING_FREE,  /* freed, waiting for stream uses */
    TPROF_BLOCK_ACTIVE_AWAITING_FREE, /* newer name of the same state */
    TPROF_BLOCK_UNKNOWN,
} tprof_block_state;

typedef enum {
    TPROF_SNAP_CURRENT = 0, /* dict with allocator_settings (PyTorch >= 2.1) */
    TPROF_SNAP_TRACES,      /* dict with segments and device_traces only */
    TPROF_SNAP_HISTORY,     /* 2023 form: block `history`, traces may be empty */
    TPROF_SNAP_SEGMENTS,    /* a bare list of segments */
} tprof_snap_form;

typedef struct {
    uint64_t addr;
    int64_t size;        /* bytes as recorded: requested size for alloc/free */
    int64_t time_us;     /* -1 when absent */
    int64_t stream;
    int64_t device_free; /* oom: bytes CUDA had free, -1 when absent */
    tprof_pv frames;     /* list of frame dicts, TPROF_PV_NONE when absent */
    uint8_t action;      /* tprof_mem_action */
} tprof_mem_event;

typedef struct {
    uint64_t addr;          /* segment address + sizes of the blocks before it */
    int64_t size;           /* bytes the block occupies */
    int64_t requested_size; /* bytes asked for (legacy fallbacks as the viewer) */
    tprof_pv frames;
    uint8_t state;          /* tprof_block_state */
} tprof_mem_block;

typedef struct {
    int64_t device;
    uint64_t address;
    int64_t total_size, allocated_size, active_size, requested_size;
    int64_t stream;
    int expandable;
    int large;              /* segment_type "large" */
    size_t first_block, nblocks;
} tprof_mem_segment;

typedef struct {
    int64_t device, time_us;
    int start;     /* 1 START, 0 END */
    tprof_pv name; /* string */
} tprof_mem_annotation;

typedef struct {
    tprof_pickle *pk;
    const char *path;
    tprof_snap_form form;
    int truncated;
    tprof_mem_segment *segs;
    size_t nsegs;
    tprof_mem_block *blocks;
    size_t nblocks;
    tprof_mem_event **traces; /* per device index */
    size_t *ntrace;
    size_t ntraces;
    tprof_mem_annotation *ann;
    size_t nann;
    size_t skipped; /* trace entries or blocks without the fields needed */
    size_t cut_entries; /* trace entries and blocks a truncation cut in half, left out */
} tprof_mem_snapshot;

/* Reads and decodes PATH (plain, gzip or zstd). Returns 0, TPROF_ETRUNC (a
 * pickle cut short: *out holds what came before the cut: every complete
 * trace entry and block, none cut in half) or a negative code with the
 * message in ERRBUF (file, byte offset, what was expected). */
int tprof_mem_snapshot_open(tprof_mem_snapshot **out, const char *path, char *errbuf, size_t errlen);
/* The same with the decoder's options (O may be NULL): its memory limit. */
int tprof_mem_snapshot_open_opts(tprof_mem_snapshot **out, const char *path, const tprof_pickle_opts *o,
                                 char *errbuf, size_t errlen);
/* Builds the model from an already decoded pickle (ownership passes). */
int tprof_mem_snapshot_from_pickle(tprof_mem_snapshot **out, tprof_pickle *pk, const char *path, char *errbuf,
                                   size_t errlen);
void tprof_mem_snapshot_close(tprof_mem_snapshot *s);
const char *tprof_mem_action_name(tprof_mem_action a);
const char *tprof_snap_form_name(tprof_snap_form f);

/* The call site of a frame list: the DEPTH innermost Python frames (files
 * ending in .py), outermost first, "file:line:function" joined by ";".
 * "(no stack recorded)" / "(no Python frames)" otherwise. Returns BUF. */
char *tprof_mem_call_site(const tprof_mem_snapshot *s, tprof_pv frames, int depth, char *buf, size_t len);

typedef struct {
    char *site;
    int64_t bytes;
    uint64_t count;
} tprof_mem_site;

#define TPROF_MEM_MAX_OOM_SITES 64 /* OOMs (per device) that get their call sites */

typedef struct {
    size_t index;           /* in the device's trace */
    int64_t time_us, size, device_free;
    int64_t active, reserved; /* at the OOM */
    tprof_mem_site *sites;  /* live at the OOM, largest first */
    size_t nsites;
} tprof_mem_oom;

typedef struct {
    int64_t device;
    uint64_t events;
    uint64_t counts[TPROF_MEM_ACTION_COUNT];
    /* active memory (viewer's definition) */
    int64_t initial_active;       /* live when the history begins */
    uint64_t initial_from_frees;  /* frees without an alloc in the history */
    uint64_t initial_from_blocks; /* live blocks never allocated in it */
    int64_t peak_active;
    int64_t peak_index;           /* trace index of the peak, -1: the snapshot state */
    int64_t peak_time_us;         /* -1 when unknown */
    char *peak_annotation;        /* innermost annotation open at the peak, or NULL */
    int64_t active_at_end;
    /* reserved memory (segments) */
    int64_t reserved_initial, reserved_peak, reserved_at_end;
    int64_t reserved_peak_index;  /* -1: before the history */
    /* the snapshot state */
    uint64_t nsegments;
    int64_t allocated_at_end;     /* blocks in an active state */
    int64_t requested_at_end;     /* their requested sizes */
    int64_t fragmentation;        /* reserved - allocated */
    uint64_t inactive_split_blocks;
    int64_t inactive_split_bytes;
    int64_t largest_free_block;
    uint64_t retries;             /* cache flushes before a cudaMalloc retry */
    tprof_mem_site *sites;        /* live at the peak, largest first */
    size_t nsites;
    tprof_mem_oom *ooms;
    size_t nooms;
} tprof_mem_device;

typedef struct {
    int depth;       /* Python frames per call site (default 4) */
    size_t max_oom_sites; /* sites kept per OOM (default 5) */
} tprof_mem_opts;

typedef struct {
    tprof_mem_device *dev;
    size_t ndev;
} tprof_mem_report;

int tprof_mem_analyze(const tprof_mem_snapshot *s, const tprof_mem_opts *o, tprof_mem_report *out);
void tprof_mem_report_free(tprof_mem_report *r);
/* The report as result tables: the file's facts, a row per device (its
 * actions, the sites at the peak, the OOMs with theirs), and the long-form
 * rows (device, metric, site, value) of CSV. */
extern const tprof_result_desc tprof_mem_desc;
int tprof_mem_tables(const tprof_mem_snapshot *s, const tprof_mem_report *r, tprof_result **out);

/* Timeline: active and reserved bytes after each event, pre-aggregated to
 * at most MAX_POINTS points (each the maximum over its bucket, so the peak
 * survives), with the TOP call sites' live bytes stacked and the rest in
 * "other". */
typedef struct {
    int64_t index;   /* trace index of the bucket's last event */
    int64_t time_us;
    int64_t active, reserved;
    int64_t *site_bytes; /* ntop + 1 values (the last: other) */
} tprof_mem_point;

typedef struct {
    int64_t device;
    tprof_mem_point *pts;
    size_t npts;
    char **top; /* ntop call sites */
    size_t ntop;
    int64_t *site_store;
} tprof_mem_timeline;

int tprof_mem_timeline_build(const tprof_mem_snapshot *s, int64_t device, int depth, size_t ntop, size_t max_points,
                             tprof_mem_timeline *out);
void tprof_mem_timeline_free(tprof_mem_timeline *t);
/* Timelines as result tables (the --timeline files): a result of
 * tprof_mem_timeline_desc gets each device's with tprof_mem_timeline_add;
 * a trace's [memory] events give theirs at once. */
extern const tprof_result_desc tprof_mem_timeline_desc, tprof_mem_trace_timeline_desc;
int tprof_mem_timeline_add(tprof_result *res, const tprof_mem_timeline *t);

/* Two snapshots: bytes live at each one's peak per call site, B - A. Sites
 * are matched by their frames' files and functions; line numbers only
 * decide between several such matches (docs/METRICS.md, "--compare"). */
typedef struct {
    char *site;   /* B's spelling when B has it, else A's */
    char *site_a; /* A's, when it differs from SITE in its line numbers; else NULL */
    int64_t a, b, delta;
} tprof_mem_delta;

typedef struct {
    int64_t peak_a, peak_b;
    tprof_mem_delta *rows;
    size_t nrows;
} tprof_mem_compare;

int tprof_mem_compare_reports(const tprof_mem_report *a, const tprof_mem_report *b, tprof_mem_compare *out);
void tprof_mem_compare_free(tprof_mem_compare *c);
/* The comparison as result tables: the peaks, and a row per call site. */
extern const tprof_result_desc tprof_mem_compare_desc;
int tprof_mem_compare_tables(const char *a, const char *b, const tprof_mem_compare *c, tprof_result **out);

/* The profiler's memory view in a Kineto trace: its [memory] instant events
 * (read with TPROF_KEEP_MEMORY), per device ("Device Id", -1 the host).
 * Allocated bytes are "Total Allocated" when the event has it, else the
 * running sum of "Bytes" from the first event (older traces). */
typedef struct {
    int64_t ts;                   /* ns; of the bucket's highest point */
    int64_t allocated, reserved;  /* reserved -1 when unknown */
} tprof_mem_kpoint;

typedef struct {
    int64_t number, ts, dur;      /* the ProfilerStep */
    int64_t peak_allocated, peak_reserved; /* -1: no sample in the step */
} tprof_mem_kstep;

typedef struct {
    int64_t device;
    uint64_t samples;
    int has_totals;               /* "Total Allocated" present (else a running sum) */
    int64_t peak_allocated, peak_allocated_ts, peak_step; /* step number, -1 if outside steps */
    int64_t peak_reserved, peak_reserved_ts;
    int64_t allocated_at_end, reserved_at_end;
    tprof_mem_kstep *steps;
    size_t nsteps;
    tprof_mem_kpoint *pts;
    size_t npts;
} tprof_mem_kdevice;

typedef struct {
    tprof_mem_kdevice *dev;
    size_t ndev;
} tprof_mem_kreport;

int tprof_mem_from_trace(const tprof_trace *t, size_t max_points, tprof_mem_kreport *out);
void tprof_mem_kreport_free(tprof_mem_kreport *r);
/* The [memory] events' report as result tables: per device its peaks and
 * each step's, and the long-form rows of CSV (the columns of `mem`'s). */
extern const tprof_result_desc tprof_mem_trace_desc;

/* Ascend's memory view (lib/mem/ascend.c): PATH is torch_npu's
 * memory_record.csv; the operator_memory.csv beside it, when there, gives
 * the allocations live at the peak. The result (tprof_mem_ascend_desc):
 * per component and device the peaks, the ops holding memory at the
 * peak allocated. 0, TPROF_ETRUNC (cut: *OUT covers the rows read), or an
 * error with ERR set. */
extern const tprof_result_desc tprof_mem_ascend_desc;
int tprof_mem_ascend(const char *path, tprof_result **out, char *err, size_t errlen);
int tprof_mem_trace_tables(const tprof_mem_kreport *r, int truncated, tprof_result **out);
int tprof_mem_trace_timeline_tables(const tprof_mem_kreport *r, tprof_result **out);

#ifdef __cplusplus
}
#endif
#endif
