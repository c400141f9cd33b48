/* Internal layout of a trace; shared by the reader and the accessors. */
#ifndef TPROF_TRACE_INTERNAL_H
#define TPROF_TRACE_INTERNAL_H

#include "trainprof/trace.h"
#include "../util/i64map.h"
#include "../util/strtab.h"
#include "derived.h"

#include <pthread.h>

/* The pieces of tprof_classify, cached separately by the reader because a
 * class depends on both the name and the category. -1: no rule matched. */
int tprof_classify_user(const tprof_classifier *c, const char *name);
/* The category of the first user op rule matching NAME, or -1. */
int tprof_classify_op_user(const tprof_classifier *c, const char *name);
int tprof_classify_cat(const char *cat);
tprof_class tprof_classify_name(const char *name);

/* The id of the op args ARG (string ids by tprof_op_arg) among T's spans'
 * inputs, interned; 0 when all are 0; UINT32_MAX when out of memory. */
uint32_t tprof_trace_intern_inputs(tprof_trace *t, const uint32_t arg[TPROF_OP_ARGS]);

/* The thread (PID, TID, FLAGS: its TPROF_EV_PID_STR and TPROF_EV_TID_STR)
 * in T's threads, with EVENTS more counted, added when new: its index, or
 * SIZE_MAX when out of memory. While the read goes on (the index is
 * dropped when the threads are sorted). */
size_t tprof_trace_thread(tprof_trace *t, int64_t pid, int64_t tid, uint8_t flags, uint64_t events);

struct tprof_trace {
    tprof_strtab strs;
    tprof_event *ev;
    size_t nev, evcap;
    tprof_trace_meta meta;
    tprof_device *devices;
    size_t ndev, devcap;
    tprof_step *steps;
    size_t nsteps, stepcap;
    tprof_gpu_track *tracks;
    size_t ntracks, trackcap;
    tprof_collective_call *calls;
    size_t ncalls, callcap;
    tprof_op_args *opargs;
    size_t nopargs, opargcap;
    tprof_host_span *spans; /* TPROF_COMPACT_SPANS; thread: index in threads[] (sorted when the read ends) */
    size_t nspans, spancap;
    uint32_t (*inputs)[TPROF_OP_ARGS]; /* the spans' op args, each distinct tuple once (op_inputs.c); id 0: none */
    size_t ninputs, inputcap;
    uint32_t *input_slots; /* open addressing over inputs: id, 0 = empty */
    size_t input_nslots;
    uint32_t last_inputs;  /* the id interned last: ops in a row often share their inputs */
    tprof_memory_sample *mems;
    size_t nmems, memcap;
    tprof_sync_wait *syncs;
    size_t nsyncs, synccap;
    tprof_hccl_op *hccl_ops; /* Ascend communication summaries (lib/trace/ascend_comm.c) */
    size_t nhccl_ops, hccl_opcap;
    tprof_hccl_link *hccl_links;
    size_t nhccl_links, hccl_linkcap;
    tprof_task_info *tasks; /* an Ascend kernel table's other columns (lib/trace/ascend.c) */
    size_t ntasks, taskcap;
    tprof_step_split *splits; /* Ascend's step_trace_time.csv (lib/trace/ascend_steps.c) */
    size_t nsplits, splitcap;
    tprof_cpu_track *threads;
    size_t nthreads, threadcap, last_thread;
    tprof_i64map thread_at; /* past THREADS_SCANNED threads: a hash of pid, tid and flags -> index
                               (tprof_trace_thread); thread_at.keys NULL: none */
    uint64_t *cat_counts;   /* per string id, for category ids */
    size_t cat_counts_cap;
    tprof_cat_count *cats;  /* built at the end */
    uint8_t *kind_of_cat;   /* per string id: tprof_kind + 1, 0 = unknown yet */
    size_t kind_of_cat_cap;
    uint8_t *class_of_name; /* per name id: 1 + the class from user rules (low 4 bits,
                               0 = none) and 1 + the name rules' class (high 4 bits) */
    uint8_t *class_of_cat;  /* per category id: 1 + category class, 0xF = none, 0 = unknown */
    size_t class_of_cat_cap;
    size_t class_of_name_cap;
    char *path;
    char trunc_msg[400];
    /* derived.h: built by analyses on first use */
    pthread_mutex_t derived_mu[TPROF_DERIVED_COUNT];
    void *derived[TPROF_DERIVED_COUNT];
    void (*derived_free[TPROF_DERIVED_COUNT])(void *);
};

#endif
