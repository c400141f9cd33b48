/* The attribution tree of a trace (internal): host spans nested per thread,
 * each GPU event linked to the runtime call that launched it, and each
 * runtime call to the op it ran for (its launcher). Flat arrays over the
 * trace's records, no pointers: nodes are in preorder (thread by thread,
 * outer spans first), so a node's subtree is the run of nodes up to its
 * `end`, and the GPU events of a subtree are one run of `gpu` too.
 * docs/METRICS.md ("trainprof ops") has the rules. */
#ifndef TPROF_OP_TREE_H
#define TPROF_OP_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "trainprof/analysis.h"
#include "trainprof/trace.h"

#define TPROF_OP_NONE UINT32_MAX

/* What a host node is, from its category. On equal intervals the lower
 * kind is the outer one (a runtime call is always innermost). */
typedef enum {
    TPROF_OPN_PYTHON = 0, /* python_function (nn.Module frames among them) */
    TPROF_OPN_ANNOTATION, /* user_annotation (record_function, ProfilerStep#N) */
    TPROF_OPN_OTHER,      /* another CPU category */
    TPROF_OPN_CPU_OP,     /* cpu_op: an ATen or custom operator */
    TPROF_OPN_RUNTIME,    /* cuda_runtime / cuda_driver / hip* / the NPU's runtime */
} tprof_opn_kind;

/* A node's record is a compact span (tprof_trace_spans(), TPROF_COMPACT_SPANS)
 * or an event (tprof_trace_events()): records [0, nspans) are the spans,
 * the rest the events after them. */
typedef struct {
    size_t n;            /* host nodes */
    uint32_t *rec;       /* node -> its record */
    const tprof_host_span *spans;
    size_t nspans;
    const tprof_event *events;
    uint32_t *parent;    /* node -> the innermost node holding it, or TPROF_OP_NONE */
    uint32_t *end;       /* node -> one past the last node of its subtree */
    uint8_t *kind;       /* node -> tprof_opn_kind */
    size_t ncalls;           /* the runtime calls: the nodes of kind TPROF_OPN_RUNTIME, in node order */
    uint32_t *call_node;     /* call -> its node (increasing) */
    uint32_t *call_launcher; /* call -> its launcher: the innermost cpu_op above it, else its own node */
    uint32_t *gpu_first;     /* ncalls + 1 entries: call k launched gpu[gpu_first[k]..gpu_first[k+1]) */
    uint32_t *gpu;           /* GPU event indexes, grouped by call in call order */
    size_t nunlinked;
    uint32_t *unlinked;  /* GPU events whose runtime call is not in the trace (or that have no
                            correlation id), in event order */
} tprof_op_tree;

/* The node's span, or NULL when its record is an event. */
static inline const tprof_host_span *tprof_op_span(const tprof_op_tree *tr, uint32_t node)
{
    return tr->rec[node] < tr->nspans ? &tr->spans[tr->rec[node]] : NULL;
}
/* The node's event, or NULL when its record is a span. */
static inline const tprof_event *tprof_op_event(const tprof_op_tree *tr, uint32_t node)
{
    return tr->rec[node] < tr->nspans ? NULL : &tr->events[tr->rec[node] - tr->nspans];
}
/* A record's start and duration (records, not nodes: the tree is built on them). */
static inline int64_t tprof_op_rec_ts(const tprof_op_tree *tr, uint32_t rec)
{
    return rec < tr->nspans ? tr->spans[rec].ts : tr->events[rec - tr->nspans].ts;
}
static inline int64_t tprof_op_rec_dur(const tprof_op_tree *tr, uint32_t rec)
{
    return rec < tr->nspans ? tr->spans[rec].dur : tr->events[rec - tr->nspans].dur;
}
static inline int64_t tprof_op_ts(const tprof_op_tree *tr, uint32_t node) { return tprof_op_rec_ts(tr, tr->rec[node]); }
static inline int64_t tprof_op_dur(const tprof_op_tree *tr, uint32_t node) { return tprof_op_rec_dur(tr, tr->rec[node]); }
static inline uint32_t tprof_op_name(const tprof_op_tree *tr, uint32_t node)
{
    const tprof_host_span *s = tprof_op_span(tr, node);
    return s ? s->name : tprof_op_event(tr, node)->name;
}

/* The first call at or after NODE in node order (ncalls when none): the
 * calls of a subtree [x, end[x]) are those from calls_from(x) to
 * calls_from(end[x]). */
static inline uint32_t tprof_op_calls_from(const tprof_op_tree *tr, uint32_t node)
{
    size_t lo = 0, hi = tr->ncalls;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tr->call_node[mid] < node) lo = mid + 1;
        else hi = mid;
    }
    return (uint32_t)lo;
}

/* Builds the tree over T's stored CPU spans and CPU, runtime and GPU
 * events. 0, TPROF_ENOMEM, or TPROF_ELIMIT past 2^32 - 1 records. */
int tprof_op_tree_build(const tprof_trace *t, tprof_op_tree *out);
/* The same, the threads' spans nested on two threads from ALONE spans on
 * (the default TPROF_OP_TREE_ALONE: below it a second thread costs more
 * than it saves); the tree is the same either way. */
#define TPROF_OP_TREE_ALONE 200000
int tprof_op_tree_build_split(const tprof_trace *t, tprof_op_tree *out, size_t alone);
void tprof_op_tree_free(tprof_op_tree *tr);
/* T's tree, built on first use and kept with the trace (the op view by
 * several groupings, and advice's op rules beside summary's top ops, share
 * one), or NULL with *RC set: TPROF_ENOMEM, or TPROF_ELIMIT. */
const tprof_op_tree *tprof_op_tree_of(const tprof_trace *t, int *rc);

/* tprof_ops with its passes over the nodes and the launchers on two
 * threads from ALONE nodes on (tprof_ops: TPROF_OP_TREE_ALONE); the result
 * is the same either way (both sum the launchers in the same two halves). */
int tprof_ops_split(const tprof_trace *t, const tprof_ops_opts *opts, tprof_result **out, size_t alone);

#endif
