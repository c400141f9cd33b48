/* Shared by the recording library's files (not installed). */
#ifndef TPROF_RECORD_INTERNAL_H
#define TPROF_RECORD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "trainprof/profiler.h"
#include "trainprof/sink.h"

/* ranges first, up to EV_STEP (write.c looks for enclosing ranges by kind) */
enum { EV_RANGE = 1, EV_OP, EV_MODULE, EV_COMM, EV_STEP, EV_INSTANT, EV_COUNTER, EV_MEM };

#define TPROF_MAX_FRAMES 16
#define TPROF_REC_GROUPS 32 /* process groups numbered apart; more share the last slot's numbers */

typedef struct {
    int64_t ts;          /* monotonic ns */
    _Atomic int64_t dur; /* -1 while a range is open; written by the owner thread */
    const char *name;
    uint8_t kind, nframes;
    uint16_t ninputs;    /* shapes: inputs in the shape arena from shape_off */
    uint32_t shape_off, frame_off;
    int32_t device;
    int64_t a, b, c, d;  /* mem: addr, bytes, total allocated, total reserved; counter: a = value bits; step: a = N;
                          * comm: a = elements, b = group size, c = the dtype string, d = its Seq in its
                          * group, device = the group's index in rec_state.groups */
} rec_event;

typedef struct rec_thread {
    struct rec_thread *next;
    rec_event *ev;
    size_t cap;
    _Atomic size_t n;          /* published with release after the event is filled */
    _Atomic uint64_t dropped;
    int64_t *shapes;           /* [ndims, d0, d1, ...] per input */
    size_t shape_cap, shape_n;
    void **frames;
    size_t frame_cap, frame_n;
    long tid;
    char name[64];
} rec_thread;

/* One history entry of the allocator (snapshot's device_traces). */
typedef struct {
    int64_t time_ns, addr, size;
    int32_t device;
    uint8_t action; /* 0 alloc, 1 free_completed, 2 segment_alloc */
    uint8_t nframes;
    void *frames[8];
} rec_mem_entry;

typedef struct {
    int64_t addr, size;
    int64_t hist;    /* its alloc / segment_alloc entry in the history (frames), -1: none */
    int32_t device;
    uint8_t segment; /* a reserved segment, not a block */
    uint8_t used;    /* slot state: 0 empty, 1 used, 2 deleted */
} rec_mem_slot;

typedef struct {
    _Atomic int on;             /* recording (warm-up or window); the hot path reads this */
    _Atomic unsigned gen;       /* bumped by every start, so stale thread pointers re-register */
    _Atomic int started, records; /* read without the lock by the hooks */
    int written, window_started;
    int write_rc;               /* the first failed write of this run (0: none), returned by stop */
    tprof_profile_config cfg;
    int rank, world, rank_set;
    pthread_mutex_t lock;       /* thread list, memory table, writing */
    rec_thread *threads;
    rec_thread *retired;        /* buffers of stopped runs: never freed, another thread may still write */
    int64_t base_mono, base_wall, window_start, window_end;
    tprof_range step_tok;       /* the open step span, in step_thr's buffer (step_end may run on another thread) */
    rec_thread *step_thr;
    int64_t step_open;
    uint64_t lost;              /* events lost outside thread buffers (a thread buffer could not be made) */
    char trace_path[1200], snap_path[1200];
    /* memory */
    rec_mem_slot *slots;
    size_t nslots, used_slots;
    int64_t total_alloc[17], total_reserved[17]; /* by device + 1, clamped */
    rec_mem_entry *hist;
    size_t hist_n, hist_cap;
    uint64_t hist_dropped;
    void (*log)(const char *);
    /* collectives: the process groups met in this run, each call numbered
     * in its group (c10d's "Seq"); under comm_lock */
    pthread_mutex_t comm_lock;
    const char *groups[TPROF_REC_GROUPS];
    int64_t group_seq[TPROF_REC_GROUPS];
    int ngroups;
} rec_state;

extern rec_state tprof__g;

/* GPU activity (lib/record/cupti.c; stubs unless built with TPROF_CUDA). */
typedef struct {
    uint8_t kind; /* 1 kernel, 2 memcpy, 3 memset, 4 runtime API */
    uint8_t copy_kind, src_kind, dst_kind;
    uint32_t device, stream, correlation, thread, regs, cbid;
    int64_t start, end, bytes;
    int32_t grid[3], block[3];
    int32_t smem;
    char *name; /* owned */
} rec_gpu;

typedef struct {
    uint32_t id, cc_major, cc_minor, sms;
    uint64_t mem;
    char name[128];
} rec_gpu_device;

int tprof__gpu_start(void);   /* 0: CUPTI activity on; else no GPU (or no CUDA build) */
void tprof__gpu_flush(void);  /* the final flush (activity disabled first) into the arrays below */
void tprof__gpu_stop(void);
/* Copies taken under cupti.c's lock (CUPTI's thread may still append): the
 * caller frees the array; names stay valid until tprof__gpu_stop. */
rec_gpu *tprof__gpu_events(size_t *n);
size_t tprof__gpu_devices(rec_gpu_device *out, size_t max);
const char *tprof__gpu_memcpy_kind(int kind);

/* A recorded frame's name (lib/record/symbols.c), looked up at write time. */
typedef struct {
    const char *function, *file;
    int line; /* 0: unknown */
} rec_sym;
/* The frames return address ADDR stands for, innermost first: more than one
 * where calls were inlined there. *N of them, valid until the next call. */
const rec_sym *tprof__symbolize(void *addr, int *n);
void tprof__symbols_release(void); /* the cache (and libdw's state), once written */

int64_t tprof__now_ns(void);
int tprof__write_trace(char *errbuf, size_t errlen);
/* Creates DIR if needed and proves a file can be written in it. */
int tprof__check_trace_dir(const char *dir, char *errbuf, size_t errlen);
int tprof__write_snapshot(const char *path, char *errbuf, size_t errlen);
void tprof__log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
