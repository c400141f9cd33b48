/* The operator view: the GPU time of each op that launched GPU work (its
 * direct and subtree kernel time, as TraceLens defines them), with
 * PyTorch's self/total CPU and device times and the performance model's
 * FLOPs, bytes and roofline, grouped by op name, by op and input shapes, by
 * the nn.Module that ran it, by op category or by Python call stack.
 * docs/METRICS.md ("trainprof ops") has the definitions. */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "../util/big.h"
#include "../util/grow.h"
#include "../util/i64map.h"
#include "../util/idmap.h"
#include "../util/strtab.h"
#include "intervals.h"
#include "launch.h"
#include "op_tree.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNLINKED_KEY "(GPU work without a launch in the trace)"
#define NO_MODULE "(outside nn.Modules)"
#define NO_STACK "(no Python frames)"
#define MODULE_PREFIX "nn.Module: "
#define BELOW_FORWARD 1
#define BELOW_MODULE 2

/* One group's sums; the strings are ids in the analysis's string table. */
typedef struct {
    uint32_t key; /* the group's key (row_of's) */
    uint32_t name, dims, types, strides, concrete, module, category, stack;
    uint64_t count, kernels;
    int64_t direct, min_direct, max_direct, subtree, dev_self, dev_total, cpu_self, cpu_total, backward, recompute;
    uint64_t modelled;  /* instances the performance model covers */
    int64_t modelled_ns; /* their subtree time */
    double flops, bytes;
    int dtype;          /* of its modelled instances; -1 none yet, -2 mixed */
} op_row;

/* The performance model's answer for one op name and inputs (trace string ids). */
typedef struct {
    uint32_t name, dims, types, concrete;
    int modelled;
    tprof_op_cost cost;
} cost_entry;

/* A kernel name's launches in one row. */
typedef struct {
    uint32_t row, name; /* name: the trace's string id */
    uint64_t count;
    int64_t total;
} op_kernel;

/* The grouping's state. The launchers are summed in two halves, each into
 * its own rows, strings and memos (on two threads when there are many), and
 * the second half's rows are then added to the first's: the fields from
 * args on are the nodes' index, shared and only read by the halves. */
typedef struct {
    const tprof_trace *t;
    const tprof_event *ev;
    const tprof_op_tree *tr;
    const tprof_ops_opts *o;
    tprof_strtab strs;      /* keys and their parts */
    tprof_i64map row_of;    /* group key id -> row */
    op_row *rows;
    size_t nrows, cap;
    const tprof_op_args *args;
    size_t nargs;
    size_t with_inputs; /* ops with inputs or autograd links: events with args and spans with any */
    uint32_t *args_of;      /* node -> index in args, or TPROF_OP_NONE */
    tprof_idmap fwd_of;     /* sequence number -> forward op node (once fwd_ready) */
    int fwd_ready;
    tprof_i64map module_of; /* nn.Module frame node -> its path's string id | its depth << 32 */
    uint32_t *chain;        /* scratch: frames whose paths are not known yet */
    size_t chaincap;
    tprof_i64map stack_of;  /* Python frame node -> the stack's string id from it */
    uint8_t *module_frame;  /* node -> 1 when it is an nn.Module frame */
    uint32_t *backward_of;  /* node -> the innermost backward op holding it (itself included), or TPROF_OP_NONE */
    uint8_t *below;         /* node -> BELOW_FORWARD | BELOW_MODULE: on its way up to backward_of
                               (itself included, that op not), a forward op, an nn.Module frame */
    tprof_i64map name_of;   /* the trace's string id of an op name -> ours */
    tprof_interval *iv;     /* scratch for unions */
    size_t ivcap, gevcap;
    char *key;              /* scratch for keys */
    size_t keycap;
    uint32_t *gev;          /* scratch: the GPU event of each interval */
    op_kernel *kern;        /* the kernels of each row */
    size_t nkern, kerncap;
    tprof_i64map kern_of;   /* (row, kernel name) -> index in kern */
    uint64_t gpu_events;    /* GPU events attributed so far */
    int64_t gpu_ns;         /* their durations summed */
    cost_entry *costs;      /* the performance model's answer per op and inputs, */
    size_t ncosts, costcap;
    tprof_i64map cost_of;   /* by a hash of their string ids: a run has few distinct ones */
} ops_ctx;

static uint32_t intern(ops_ctx *c, const char *s, size_t len) { return tprof_strtab_intern(&c->strs, s, len); }
static uint32_t intern_z(ops_ctx *c, const char *s) { return intern(c, s, strlen(s)); }

static int key_room(ops_ctx *c, size_t need) { return tprof_grow_items((void **)&c->key, &c->keycap, need, 1); }

/* The row of key id KEY, created with its parts. */
static op_row *row_for(ops_ctx *c, uint32_t key, const op_row *parts)
{
    int64_t idx;
    if (tprof_i64map_get(&c->row_of, key, &idx)) return &c->rows[idx];
    if (tprof_grow_items((void **)&c->rows, &c->cap, c->nrows + 1, sizeof *c->rows)) return NULL;
    op_row *r = &c->rows[c->nrows];
    *r = *parts;
    r->key = key;
    r->min_direct = INT64_MAX;
    r->max_direct = INT64_MIN;
    r->dtype = -1;
    if (tprof_i64map_put(&c->row_of, key, (int64_t)c->nrows)) return NULL;
    c->nrows++;
    return r;
}

/* Adds X's sums to R (an instance's, or another half's row): counts and
 * times summed, extremes kept, the element type of the modelled ones (-1
 * none yet, -2 mixed: no one peak applies). */
static void row_add(op_row *r, const op_row *x)
{
    r->count += x->count;
    r->kernels += x->kernels;
    r->direct = tprof_sat_add(r->direct, x->direct);
    if (x->min_direct < r->min_direct) r->min_direct = x->min_direct;
    if (x->max_direct > r->max_direct) r->max_direct = x->max_direct;
    r->subtree = tprof_sat_add(r->subtree, x->subtree);
    r->dev_self = tprof_sat_add(r->dev_self, x->dev_self);
    r->dev_total = tprof_sat_add(r->dev_total, x->dev_total);
    r->cpu_self = tprof_sat_add(r->cpu_self, x->cpu_self);
    r->cpu_total = tprof_sat_add(r->cpu_total, x->cpu_total);
    r->backward = tprof_sat_add(r->backward, x->backward);
    r->recompute = tprof_sat_add(r->recompute, x->recompute);
    r->modelled += x->modelled;
    r->modelled_ns = tprof_sat_add(r->modelled_ns, x->modelled_ns);
    r->flops += x->flops;
    r->bytes += x->bytes;
    if (x->dtype != -1) r->dtype = r->dtype == -1 || r->dtype == x->dtype ? x->dtype : -2;
}

/* NODE's op args (a span's copied to *BUF), or NULL when it has none. */
static const tprof_op_args *args_of(const ops_ctx *c, uint32_t node, tprof_op_args *buf)
{
    const tprof_host_span *s = tprof_op_span(c->tr, node);
    if (s) {
        if (s->seq < 0 && s->fwd_tid < 0 && !s->inputs) return NULL;
        *buf = (tprof_op_args){ .event = SIZE_MAX, .seq = s->seq, .fwd_tid = s->fwd_tid };
        memcpy(buf->arg, tprof_trace_op_inputs(c->t, s->inputs), sizeof buf->arg);
        return buf;
    }
    uint32_t a = c->args_of ? c->args_of[node] : TPROF_OP_NONE;
    return a == TPROF_OP_NONE ? NULL : &c->args[a];
}

/* ---- modules ---- */

/* "nn.Module: Linear_3" -> "Linear" (the class: the instance number dropped). */
static size_t module_class(const char *name, const char **out)
{
    const char *s = name + strlen(MODULE_PREFIX);
    size_t len = strlen(s), k = len;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
    if (k > 0 && k < len && s[k - 1] == '_') len = k - 1;
    *out = s;
    return len;
}

static int is_module_frame(const ops_ctx *c, uint32_t node) { return c->module_frame[node]; }

/* Our string id of the trace's string ID (interned once per name). */
static uint32_t name_id(ops_ctx *c, uint32_t id)
{
    int64_t v;
    if (tprof_i64map_get(&c->name_of, id, &v)) return (uint32_t)v;
    uint32_t ours = intern_z(c, tprof_trace_str(c->t, id));
    if (ours == UINT32_MAX || tprof_i64map_put(&c->name_of, id, ours)) return UINT32_MAX;
    return ours;
}

static uint32_t frame_path_from(ops_ctx *c, uint32_t m, size_t off);

/* The nn.Module frame a recompute's frames hang below: B is the backward op
 * they run in (activation checkpointing runs a module's forward again
 * inside the backward op that first needs its activations), F its forward
 * op, OUTER the recompute's outermost frame. The recomputed module encloses
 * F, so its parent is the frame above the innermost frame holding F of
 * OUTER's class. TPROF_OP_NONE: at the top, or no such frame (the
 * recompute's own frames then stand alone). */
static uint32_t recompute_anchor(const ops_ctx *c, uint32_t b, uint32_t outer)
{
    tprof_op_args buf;
    uint32_t f = tprof_idmap_get(&c->fwd_of, args_of(c, b, &buf)->seq);
    const char *cls;
    size_t n = module_class(tprof_trace_str(c->t, tprof_op_name(c->tr, outer)), &cls);
    for (uint32_t q = f; q != TPROF_OP_NONE; q = c->tr->parent[q]) {
        const char *qc;
        if (!is_module_frame(c, q) || module_class(tprof_trace_str(c->t, tprof_op_name(c->tr, q)), &qc) != n ||
            memcmp(qc, cls, n))
            continue;
        for (q = c->tr->parent[q]; q != TPROF_OP_NONE && !is_module_frame(c, q);) q = c->tr->parent[q];
        return q;
    }
    return TPROF_OP_NONE;
}

/* The class path of the nn.Module frame M and the frames holding it,
 * outermost first ("ViTModel.ViTEncoder.ViTLayer"), cut to the first DEPTH
 * (0: all): its string id, or UINT32_MAX when out of memory. Each frame's
 * path is its parent frame's and its class, memoised per frame (with its
 * depth), so that paths of any depth cost one step a frame. Frames below a
 * backward op (a recompute) continue the path of the module they recompute
 * (recompute_anchor). */
static uint32_t frame_path(ops_ctx *c, uint32_t m) { return frame_path_from(c, m, 0); }

/* frame_path with its scratch chain from c->chain[OFF] (an anchor's path is
 * found while a recompute's chain is held). */
static uint32_t frame_path_from(ops_ctx *c, uint32_t m, size_t off)
{
    size_t nf = 0, depth = 0;
    uint32_t base = UINT32_MAX; /* the path of the innermost memoised frame above, if any */
    for (uint32_t p = m; p != TPROF_OP_NONE; p = c->tr->parent[p]) {
        if (!is_module_frame(c, p)) {
            if (nf && !off && c->backward_of[p] == p) { /* a recompute's frames, below backward op P */
                uint32_t anchor = recompute_anchor(c, p, c->chain[nf - 1]);
                if (anchor != TPROF_OP_NONE) {
                    int64_t v;
                    base = frame_path_from(c, anchor, nf);
                    if (base == UINT32_MAX || !tprof_i64map_get(&c->module_of, anchor, &v)) return UINT32_MAX;
                    depth = (size_t)(v >> 32);
                }
                break;
            }
            continue;
        }
        int64_t v;
        if (tprof_i64map_get(&c->module_of, p, &v)) {
            base = (uint32_t)v;
            depth = (size_t)(v >> 32);
            break;
        }
        if (tprof_grow_items((void **)&c->chain, &c->chaincap, off + nf + 1, sizeof *c->chain)) return UINT32_MAX;
        c->chain[off + nf++] = p;
    }
    while (nf-- > 0) { /* from the outermost frame not memoised down to M */
        uint32_t f = c->chain[off + nf];
        depth++;
        if (c->o->depth <= 0 || depth <= (size_t)c->o->depth) {
            const char *cls;
            size_t n = module_class(tprof_trace_str(c->t, tprof_op_name(c->tr, f)), &cls);
            size_t len = base == UINT32_MAX ? 0 : c->strs.lens[base];
            if (key_room(c, len + n + 2)) return UINT32_MAX;
            if (len) memcpy(c->key, tprof_strtab_get(&c->strs, base), len);
            if (base != UINT32_MAX) c->key[len++] = '.';
            memcpy(c->key + len, cls, n);
            base = intern(c, c->key, len + n);
            if (base == UINT32_MAX) return UINT32_MAX;
        } /* else: deeper than DEPTH, the path of the frame above */
        if (tprof_i64map_put(&c->module_of, f, (int64_t)base | (int64_t)depth << 32)) return UINT32_MAX;
    }
    return base;
}

/* The module path of the innermost nn.Module frame holding NODE, or
 * NO_MODULE; UINT32_MAX when out of memory. */
static uint32_t module_path(ops_ctx *c, uint32_t node)
{
    uint32_t m = node;
    while (m != TPROF_OP_NONE && !is_module_frame(c, m)) m = c->tr->parent[m];
    return m == TPROF_OP_NONE ? intern_z(c, NO_MODULE) : frame_path(c, m);
}

/* A frame of the user's call stack: a python_function span that is no
 * nn.Module frame, no built-in ("<built-in method ...>") and not in torch's
 * own Python files ("torch/nn/modules/module.py(1743): _call_impl"). */
static int is_stack_frame(const ops_ctx *c, uint32_t node)
{
    if (c->tr->kind[node] != TPROF_OPN_PYTHON || c->module_frame[node]) return 0;
    const char *n = tprof_trace_str(c->t, tprof_op_name(c->tr, node));
    return n[0] != '<' && strncmp(n, "torch/", 6) != 0 && !strstr(n, "/site-packages/torch/");
}

/* The user's Python frames holding NODE, innermost first, the first DEPTH
 * (0: all), joined by " <- "; its string id, or UINT32_MAX when out of
 * memory. */
static uint32_t stack_path(ops_ctx *c, uint32_t node)
{
    uint32_t m = node;
    while (m != TPROF_OP_NONE && !is_stack_frame(c, m)) m = c->tr->parent[m];
    if (m == TPROF_OP_NONE) return intern_z(c, NO_STACK);
    int64_t id;
    if (tprof_i64map_get(&c->stack_of, m, &id)) return (uint32_t)id;
    size_t len = 0, taken = 0;
    for (uint32_t p = m; p != TPROF_OP_NONE && (c->o->depth <= 0 || taken < (size_t)c->o->depth); p = c->tr->parent[p]) {
        if (!is_stack_frame(c, p)) continue;
        const char *n = tprof_trace_str(c->t, tprof_op_name(c->tr, p));
        size_t k = strlen(n);
        if (key_room(c, len + k + 5)) return UINT32_MAX;
        if (taken++) {
            memcpy(c->key + len, " <- ", 4);
            len += 4;
        }
        memcpy(c->key + len, n, k);
        len += k;
    }
    uint32_t path = intern(c, c->key, len);
    if (path == UINT32_MAX || tprof_i64map_put(&c->stack_of, m, path)) return UINT32_MAX;
    return path;
}

/* The nodes' records are read in preorder, which follows the file within
 * a thread only: the one PREFETCH_AHEAD nodes on is asked for early, so
 * that a pass over millions of them waits on memory less. */
#define PREFETCH_AHEAD 16
static inline void prefetch_node(const tprof_op_tree *tr, uint32_t node)
{
    uint32_t r = tr->rec[node];
    if (r < tr->nspans) __builtin_prefetch(&tr->spans[r]);
    else __builtin_prefetch(&tr->events[r - tr->nspans]);
}

/* index_nodes' pass over the nodes [A, B) (each a span's cache line): the
 * nn.Module frames, the ops with inputs, the forward ops in preorder. */
typedef struct {
    ops_ctx *c;
    size_t a, b;
    uint32_t *fwd; /* the forward ops, in preorder */
    size_t nfwd, fwdcap, with_inputs;
    int64_t lo, hi; /* their sequence numbers' range */
    int rc;
} index_job;

static void *index_run(void *arg)
{
    index_job *j = arg;
    ops_ctx *c = j->c;
    const tprof_op_tree *tr = c->tr;
    size_t nstr = tprof_trace_nstrings(c->t);
    uint8_t *module_name = calloc(nstr + 1, 1); /* by name id: 0 unknown, 1 no, 2 yes */
    if (!module_name) {
        j->rc = TPROF_ENOMEM;
        return NULL;
    }
    tprof_op_args buf;
    for (size_t i = j->a; i < j->b; i++) {
        if (i + PREFETCH_AHEAD < j->b) prefetch_node(tr, (uint32_t)(i + PREFETCH_AHEAD));
        uint8_t kind = tr->kind[i];
        c->module_frame[i] = 0;
        if (kind == TPROF_OPN_PYTHON) {
            uint32_t name = tprof_op_name(tr, (uint32_t)i);
            uint8_t *known = name < nstr ? &module_name[name] : &module_name[nstr];
            if (!*known) *known = strncmp(tprof_trace_str(c->t, name), MODULE_PREFIX, strlen(MODULE_PREFIX)) ? 1 : 2;
            c->module_frame[i] = *known == 2;
        }
        const tprof_op_args *a = args_of(c, (uint32_t)i, &buf);
        j->with_inputs += a != NULL && tprof_op_span(tr, (uint32_t)i) != NULL;
        /* the autograd links forward_op reads, in preorder from the parent's */
        int autograd = a && kind == TPROF_OPN_CPU_OP && a->seq >= 0;
        uint32_t up = tr->parent[i];
        uint8_t below = (uint8_t)((autograd && a->fwd_tid <= 0 ? BELOW_FORWARD : 0) | (c->module_frame[i] ? BELOW_MODULE : 0));
        if (autograd && a->fwd_tid > 0) {
            c->backward_of[i] = (uint32_t)i;
            c->below[i] = below & BELOW_MODULE;
        } else {
            c->backward_of[i] = up != TPROF_OP_NONE ? c->backward_of[up] : TPROF_OP_NONE;
            c->below[i] = below | (up != TPROF_OP_NONE && c->backward_of[up] != up ? c->below[up] : 0);
        }
        if (autograd && a->fwd_tid <= 0) {
            if (a->seq < j->lo) j->lo = a->seq;
            if (a->seq > j->hi) j->hi = a->seq;
            if (tprof_grow_items((void **)&j->fwd, &j->fwdcap, j->nfwd + 1, sizeof *j->fwd)) {
                j->rc = TPROF_ENOMEM;
                break;
            }
            j->fwd[j->nfwd++] = (uint32_t)i;
        }
    }
    free(module_name);
    return NULL;
}

/* Each node's op args (through an event -> node array), whether it is an
 * nn.Module frame (a python_function named "nn.Module: ..."), and the
 * forward ops by sequence number. Autograd: a forward op and the backward ops of
 * its gradient share a "Sequence number"; a backward op has a "Fwd thread
 * id" above 0 (the profiler's index of the forward thread, not an OS thread
 * id: forward ops have 0), so the forward ops are found by sequence number
 * alone, the outermost first. */
static int index_nodes(ops_ctx *c, size_t alone)
{
    c->args = tprof_trace_op_args(c->t);
    c->nargs = tprof_trace_nop_args(c->t);
    const tprof_op_tree *tr = c->tr;
    tprof_op_args buf;
    if (c->nargs) { /* the events' args, through an event -> node array */
        size_t nev = tprof_trace_nevents(c->t);
        uint32_t *node_of = malloc((nev ? nev : 1) * sizeof *node_of);
        if (!node_of || !(c->args_of = malloc((tr->n ? tr->n : 1) * sizeof *c->args_of))) {
            free(node_of);
            return TPROF_ENOMEM;
        }
        memset(node_of, 0xFF, (nev ? nev : 1) * sizeof *node_of);
        for (size_t i = 0; i < tr->n; i++) {
            const tprof_event *e = tprof_op_event(tr, (uint32_t)i);
            if (e) node_of[e - tr->events] = (uint32_t)i;
            c->args_of[i] = TPROF_OP_NONE;
        }
        for (size_t j = 0; j < c->nargs; j++)
            if (c->args[j].event < nev && node_of[c->args[j].event] != TPROF_OP_NONE)
                c->args_of[node_of[c->args[j].event]] = (uint32_t)j;
        free(node_of);
    }
    c->backward_of = tprof_big_alloc(tr->n, sizeof *c->backward_of);
    c->below = tprof_big_alloc(tr->n, 1);
    c->module_frame = malloc(tr->n ? tr->n : 1);
    if (!c->backward_of || !c->below || !c->module_frame) return TPROF_ENOMEM;
    /* two ranges of nodes, the second from a root (a node without a parent:
     * nothing in it looks at the first), on two threads when there are many */
    size_t split = tr->n / 2;
    while (split < tr->n && tr->parent[split] != TPROF_OP_NONE) split++;
    index_job jobs[2] = { { .c = c, .a = 0, .b = split, .lo = INT64_MAX, .hi = INT64_MIN },
                          { .c = c, .a = split, .b = tr->n, .lo = INT64_MAX, .hi = INT64_MIN } };
    pthread_t helper;
    int helped = tr->n >= alone && pthread_create(&helper, NULL, index_run, &jobs[1]) == 0;
    index_run(&jobs[0]);
    if (helped) pthread_join(helper, NULL);
    else index_run(&jobs[1]);
    int rc = jobs[0].rc ? jobs[0].rc : jobs[1].rc;
    int64_t lo = jobs[0].lo < jobs[1].lo ? jobs[0].lo : jobs[1].lo, hi = jobs[0].hi > jobs[1].hi ? jobs[0].hi : jobs[1].hi;
    size_t nfwd = jobs[0].nfwd + jobs[1].nfwd;
    c->with_inputs += jobs[0].with_inputs + jobs[1].with_inputs;
    if (!rc) rc = tprof_idmap_init(&c->fwd_of, lo, hi, nfwd) ? TPROF_ENOMEM : 0;
    c->fwd_ready = !rc;
    for (int h = 0; !rc && h < 2; h++) /* in preorder: the outermost forward op of a number first */
        for (size_t k = 0; !rc && k < jobs[h].nfwd; k++) {
            uint32_t f = jobs[h].fwd[k];
            int64_t seq = args_of(c, f, &buf)->seq;
            if (tprof_idmap_get(&c->fwd_of, seq) == TPROF_IDMAP_NONE && tprof_idmap_put(&c->fwd_of, seq, f)) rc = TPROF_ENOMEM;
        }
    free(jobs[0].fwd);
    free(jobs[1].fwd);
    if (rc) return rc;
    c->with_inputs += c->nargs;
    return 0;
}

/* The backward op holding NODE (itself or a cpu_op above it with a forward
 * thread), and its forward op, or TPROF_OP_NONE. *IS_BACKWARD says whether
 * there was a backward op, *RECOMPUTE whether NODE runs in a module's
 * forward below it (an nn.Module frame and a forward op autograd records,
 * Fwd thread id 0): activation recomputation, a checkpointed module's
 * forward run again inside the backward. */
static uint32_t forward_op(const ops_ctx *c, uint32_t node, int *is_backward, int *recompute)
{
    uint32_t b = c->backward_of[node];
    *is_backward = b != TPROF_OP_NONE;
    *recompute = *is_backward && c->below[node] == (BELOW_FORWARD | BELOW_MODULE);
    if (!*is_backward) return TPROF_OP_NONE;
    tprof_op_args buf;
    return tprof_idmap_get(&c->fwd_of, args_of(c, b, &buf)->seq); /* TPROF_IDMAP_NONE is TPROF_OP_NONE */
}

/* ---- one op instance ---- */

static int iv_room(ops_ctx *c, size_t need)
{
    return tprof_grow_items((void **)&c->iv, &c->ivcap, need, sizeof *c->iv) ||
           tprof_grow_items((void **)&c->gev, &c->gevcap, need, sizeof *c->gev);
}

/* Counts GPU event G for row ROW under its kernel's name. */
static int add_kernel(ops_ctx *c, size_t row, const tprof_event *g)
{
    int64_t key = (int64_t)(((uint64_t)row << 32) | g->name), at;
    if (!tprof_i64map_get(&c->kern_of, key, &at)) {
        if (tprof_grow_items((void **)&c->kern, &c->kerncap, c->nkern + 1, sizeof *c->kern)) return -1;
        at = (int64_t)c->nkern;
        c->kern[c->nkern++] = (op_kernel){ .row = (uint32_t)row, .name = g->name };
        if (tprof_i64map_put(&c->kern_of, key, at)) return -1;
    }
    c->kern[at].count++;
    c->kern[at].total = tprof_sat_add(c->kern[at].total, g->dur);
    return 0;
}

/* Appends the GPU events gpu[A..B) to the scratch intervals from *N; adds their durations to *SUM. */
static int add_gpu(ops_ctx *c, uint32_t a, uint32_t b, size_t *n, int64_t *sum)
{
    if (iv_room(c, *n + (b - a))) return -1;
    for (uint32_t k = a; k < b; k++) {
        const tprof_event *g = &c->ev[c->tr->gpu[k]];
        c->gev[*n] = c->tr->gpu[k];
        c->iv[(*n)++] = (tprof_interval){ g->ts, tprof_end_ns(g->ts, g->dur) };
        *sum = tprof_sat_add(*sum, g->dur);
    }
    return 0;
}

/* The performance model for op NAME with inputs A (trace string ids),
 * computed once per distinct tuple. 1 and *OUT when modelled, 0 when not,
 * -1 when out of memory. */
static int cost_of(ops_ctx *c, uint32_t name, const tprof_op_args *a, tprof_op_cost *out)
{
    const uint32_t ids[4] = { name, a->arg[TPROF_OP_DIMS], a->arg[TPROF_OP_TYPES], a->arg[TPROF_OP_CONCRETE] };
    int64_t key = (int64_t)(tprof_hash_bytes(ids, sizeof ids) & 0x7FFFFFFFFFFFFFFFull), at;
    if (tprof_i64map_get(&c->cost_of, key, &at)) {
        const cost_entry *x = &c->costs[at];
        if (x->name == ids[0] && x->dims == ids[1] && x->types == ids[2] && x->concrete == ids[3]) {
            *out = x->cost;
            return x->modelled;
        }
    }
    int modelled = tprof_op_cost_of(tprof_trace_str(c->t, name), tprof_trace_str(c->t, ids[1]),
                                    tprof_trace_str(c->t, ids[2]), tprof_trace_str(c->t, ids[3]), out);
    if (tprof_i64map_get(&c->cost_of, key, &at)) return modelled; /* a hash collision: not cached */
    if (tprof_grow_items((void **)&c->costs, &c->costcap, c->ncosts + 1, sizeof *c->costs)) return -1;
    c->costs[c->ncosts] = (cost_entry){ ids[0], ids[1], ids[2], ids[3], modelled, *out };
    if (tprof_i64map_put(&c->cost_of, key, (int64_t)c->ncosts)) return -1;
    c->ncosts++;
    return modelled;
}

/* The key of launcher X's group, filling PARTS; UINT32_MAX when out of memory. */
static uint32_t group_key(ops_ctx *c, uint32_t x, uint32_t name, int backward, int recompute, uint32_t fwd,
                          op_row *parts)
{
    parts->name = name;
    if (c->o->by == TPROF_OPS_BY_MODULE) {
        /* a backward op counts for its forward op's module, a recompute for
         * the module it runs again */
        parts->module = module_path(c, backward && !recompute && fwd != TPROF_OP_NONE ? fwd : x);
        parts->name = 0;
        return parts->module;
    }
    if (c->o->by == TPROF_OPS_BY_NAME) return name;
    if (c->o->by == TPROF_OPS_BY_STACK) { /* the op and its stack (a backward op: its forward op's) */
        parts->stack = stack_path(c, backward && fwd != TPROF_OP_NONE ? fwd : x);
        if (parts->stack == UINT32_MAX) return UINT32_MAX;
        const char *a = tprof_strtab_get(&c->strs, name), *b = tprof_strtab_get(&c->strs, parts->stack);
        size_t la = strlen(a), lb = strlen(b);
        if (key_room(c, la + lb + 2)) return UINT32_MAX;
        memcpy(c->key, a, la);
        c->key[la] = '\x1f';
        memcpy(c->key + la + 1, b, lb);
        return intern(c, c->key, la + 1 + lb);
    }
    if (c->o->by == TPROF_OPS_BY_CATEGORY) {
        parts->name = 0;
        tprof_op_category k = tprof_op_category_of(c->o->classifier, tprof_strtab_get(&c->strs, name));
        return parts->category = intern_z(c, tprof_op_category_name(k));
    }
    tprof_op_args buf;
    const tprof_op_args *a = c->tr->kind[x] == TPROF_OPN_CPU_OP ? args_of(c, x, &buf) : NULL;
    uint32_t id[TPROF_OP_ARGS] = { 0 };
    size_t len = strlen(tprof_strtab_get(&c->strs, name)) + TPROF_OP_ARGS;
    for (int k = 0; k < TPROF_OP_ARGS; k++) {
        id[k] = a ? intern_z(c, tprof_trace_str(c->t, a->arg[k])) : 0;
        if (id[k] == UINT32_MAX) return UINT32_MAX;
        len += strlen(tprof_strtab_get(&c->strs, id[k]));
    }
    parts->dims = id[TPROF_OP_DIMS];
    parts->types = id[TPROF_OP_TYPES];
    parts->strides = id[TPROF_OP_STRIDES];
    parts->concrete = id[TPROF_OP_CONCRETE];
    if (key_room(c, len + 1)) return UINT32_MAX;
    /* name, then each arg after a unit separator: distinct tuples, distinct keys */
    size_t n = (size_t)snprintf(c->key, c->keycap, "%s", tprof_strtab_get(&c->strs, name));
    for (int k = 0; k < TPROF_OP_ARGS; k++)
        n += (size_t)snprintf(c->key + n, c->keycap - n, "\x1f%s", tprof_strtab_get(&c->strs, id[k]));
    return intern(c, c->key, n);
}

/* Launcher X's instance: its direct kernels (those of the runtime calls it
 * launched through), its subtree's, and its CPU times, added to its group.
 * *CALL: a call at or before X's first (the launchers come in node order,
 * so it only moves forward). */
static int add_instance(ops_ctx *c, uint32_t x, uint32_t *call)
{
    const tprof_op_tree *tr = c->tr;
    int64_t dur = tprof_op_dur(tr, x);
    uint32_t op_name = tprof_op_name(tr, x);
    int backward, recompute;
    uint32_t fwd = forward_op(c, x, &backward, &recompute);
    uint32_t name = name_id(c, op_name);
    op_row parts = { 0 };
    uint32_t key = name == UINT32_MAX ? UINT32_MAX : group_key(c, x, name, backward, recompute, fwd, &parts);
    op_row *row = key == UINT32_MAX ? NULL : row_for(c, key, &parts);
    if (!row) return TPROF_ENOMEM;
    size_t ri = (size_t)(row - c->rows);

    size_t n = 0;
    int64_t dev_self = 0, dev_total = 0;
    while (*call < tr->ncalls && tr->call_node[*call] < x) ++*call;
    uint32_t k0 = *call, k1 = k0; /* its subtree's calls, and those it launched (a call launches through itself) */
    for (; k1 < tr->ncalls && tr->call_node[k1] < tr->end[x]; k1++)
        if (tr->call_launcher[k1] == x && add_gpu(c, tr->gpu_first[k1], tr->gpu_first[k1 + 1], &n, &dev_self))
            return TPROF_ENOMEM;
    uint64_t kernels = n;
    for (size_t k = 0; k < n; k++)
        if (add_kernel(c, ri, &c->ev[c->gev[k]])) return TPROF_ENOMEM;
    int64_t direct = tprof_interval_union(c->iv, n);
    n = 0;
    if (add_gpu(c, tr->gpu_first[k0], tr->gpu_first[k1], &n, &dev_total)) return TPROF_ENOMEM;
    int64_t subtree = tprof_interval_union(c->iv, n);
    int64_t children = 0;
    /* the spans directly under it, Python frames looked through (key_averages has no frames) */
    for (uint32_t k = x + 1; k < tr->end[x];) {
        if (tr->kind[k] == TPROF_OPN_PYTHON) {
            k++; /* into the frame */
            continue;
        }
        children = tprof_sat_add(children, tprof_op_dur(tr, k));
        k = tr->end[k];
    }

    tprof_op_args buf;
    const tprof_op_args *a = tr->kind[x] == TPROF_OPN_CPU_OP ? args_of(c, x, &buf) : NULL;
    tprof_op_cost cost;
    int modelled = a && a->arg[TPROF_OP_DIMS] ? cost_of(c, op_name, a, &cost) : 0;
    if (modelled < 0) return TPROF_ENOMEM;
    const op_row one = { .count = 1, .kernels = kernels, .direct = direct, .min_direct = direct, .max_direct = direct,
                         .subtree = subtree, .dev_self = dev_self, .dev_total = dev_total, .cpu_total = dur,
                         .cpu_self = dur - (children < dur ? children : dur), .backward = backward ? direct : 0,
                         .recompute = recompute ? direct : 0, .modelled = modelled ? 1 : 0,
                         .modelled_ns = modelled ? subtree : 0, .flops = modelled ? cost.flops : 0,
                         .bytes = modelled ? cost.bytes : 0, .dtype = modelled ? (int)cost.dtype : -1 };
    row_add(row, &one);
    c->gpu_events += kernels;
    c->gpu_ns = tprof_sat_add(c->gpu_ns, dev_self);
    return 0;
}

/* A GPU event without its launch: an instance of its own in one row. */
static int add_unlinked(ops_ctx *c, const tprof_event *g)
{
    op_row parts = { 0 };
    uint32_t key = intern_z(c, UNLINKED_KEY);
    if (c->o->by == TPROF_OPS_BY_MODULE) parts.module = key;
    else if (c->o->by == TPROF_OPS_BY_CATEGORY) parts.category = key;
    else parts.name = key;
    if (c->o->by == TPROF_OPS_BY_STACK) parts.stack = intern_z(c, "");
    op_row *row = key == UINT32_MAX ? NULL : row_for(c, key, &parts);
    if (!row || add_kernel(c, (size_t)(row - c->rows), g)) return TPROF_ENOMEM;
    const op_row one = { .count = 1, .kernels = 1, .direct = g->dur, .min_direct = g->dur, .max_direct = g->dur,
                         .subtree = g->dur, .dev_self = g->dur, .dev_total = g->dur, .dtype = -1 };
    row_add(row, &one);
    return 0;
}

/* ---- result tables ---------------------------------------------------------- */

enum { T_BY, T_DEPTH, T_LAUNCHES, T_GPU_EVENTS, T_GPU_NS, T_DIRECT, T_UNLINKED, T_UNLINKED_NS, T_OP_ARGS,
       T_STEP_FIRST, T_STEP_LAST, T_NSTEPS, T_DEVICE, T_PEAK_SOURCE, T_HBM, T_PEAK0, T_NCOLS = T_PEAK0 + TPROF_DT_COUNT };
enum { R_NAME, R_DIMS, R_TYPES, R_STRIDES, R_CONCRETE, R_MODULE, R_CATEGORY, R_STACK, R_COUNT, R_KERNELS, R_DIRECT, R_SHARE, R_MEAN,
       R_MIN, R_MAX, R_SUBTREE, R_DEV_SELF, R_DEV_TOTAL, R_CPU_SELF, R_CPU_TOTAL, R_CPU_PER_GPU, R_FORWARD,
       R_BACKWARD, R_RECOMPUTE, R_TOP_KERNEL, R_MODELLED, R_MODELLED_NS, R_FLOPS, R_BYTES, R_TFLOPS, R_TBPS, R_INTENSITY, R_DTYPE,
       R_BOUND, R_ROOFLINE, R_NCOLS };
enum { K_NAME, K_COUNT, K_TOTAL, K_NCOLS };

static const tprof_col_desc ops_top_cols[T_NCOLS] = {
    [T_BY] = TPROF_COL("by", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "the grouping: name, shape, module, category or stack",
                       .flags = TPROF_COLF_NO_TABLE),
    [T_DEPTH] = TPROF_COL("depth", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL,
                          "by module: the module levels kept, by stack: the frames kept (0: all)", .flags = TPROF_COLF_NO_TABLE),
    [T_LAUNCHES] = TPROF_COL("launches", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "launches",
                             "op instances that launched GPU work (launchers), plus GPU events without a launch"),
    [T_GPU_EVENTS] = TPROF_COL("gpu_events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "GPU events",
                               "GPU events attributed (every one, in the window)"),
    [T_GPU_NS] = TPROF_COL("gpu_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "GPU time",
                           "their durations summed"),
    [T_DIRECT] = TPROF_COL("direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "direct",
                           "the rows' direct kernel time summed (overlapping kernels of one launch count once)"),
    [T_UNLINKED] = TPROF_COL("unlinked_events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "without launch",
                             "GPU events whose runtime call is not in the trace"),
    [T_UNLINKED_NS] = TPROF_COL("unlinked_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "their time",
                                "their durations summed"),
    [T_OP_ARGS] = TPROF_COL("ops_with_inputs", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                            "CPU ops with recorded inputs (record_shapes) or autograd links",
                            .flags = TPROF_COLF_NO_TABLE),
    [T_STEP_FIRST] = TPROF_COL("step_first", TPROF_COL_INT, TPROF_COMBINE_MIN, NULL,
                               "with --steps: the first ProfilerStep found in the window",
                               .flags = TPROF_COLF_OMIT_NULL | TPROF_COLF_NO_TABLE),
    [T_STEP_LAST] = TPROF_COL("step_last", TPROF_COL_INT, TPROF_COMBINE_MAX, NULL,
                              "with --steps: the last ProfilerStep found in the window",
                              .flags = TPROF_COLF_OMIT_NULL | TPROF_COLF_NO_TABLE),
    [T_NSTEPS] = TPROF_COL("steps", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "with --steps: steps in the window",
                           .flags = TPROF_COLF_NO_JSON | TPROF_COLF_NO_TABLE),
    [T_DEVICE] = TPROF_COL("device", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                           "the roofline's device (--device, else the trace's first), null when none",
                           .flags = TPROF_COLF_NO_TABLE),
    [T_PEAK_SOURCE] = TPROF_COL("peak_source", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                                "where the peaks come from: \"datasheet\" (the device table: dense, no sparsity), "
                                "\"given\" (--peak-tflops / --peak-tbps), null when there are none",
                                .flags = TPROF_COLF_NO_TABLE),
    [T_HBM] = TPROF_COL("peak_tbps", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL, "the memory bandwidth, TB/s",
                        .flags = TPROF_COLF_NO_TABLE),
    [T_PEAK0 + TPROF_DT_FP32] = TPROF_COL("peak_tflops_fp32", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL,
                                          "dense FP32 peak, TFLOP/s", .flags = TPROF_COLF_NO_TABLE),
    [T_PEAK0 + TPROF_DT_TF32] = TPROF_COL("peak_tflops_tf32", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL,
                                          "dense TF32 peak", .flags = TPROF_COLF_NO_TABLE),
    [T_PEAK0 + TPROF_DT_BF16] = TPROF_COL("peak_tflops_bf16", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL,
                                          "dense BF16 peak", .flags = TPROF_COLF_NO_TABLE),
    [T_PEAK0 + TPROF_DT_FP16] = TPROF_COL("peak_tflops_fp16", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL,
                                          "dense FP16 peak", .flags = TPROF_COLF_NO_TABLE),
    [T_PEAK0 + TPROF_DT_FP8] = TPROF_COL("peak_tflops_fp8", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL,
                                         "dense FP8 peak", .flags = TPROF_COLF_NO_TABLE),
};

#define HIDDEN (TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV | TPROF_COLF_NO_TABLE)
#define KEY_PART(NAME, TITLE, DOC, FLAGS, ...)                                                                 \
    TPROF_COL(NAME, TPROF_COL_STRING, TPROF_COMBINE_FIRST, TITLE, DOC, .flags = TPROF_COLF_KEY | (FLAGS), __VA_ARGS__)
/* The row columns of one grouping: which key parts it has. */
/* FORWARD_FLAGS: the forward part is in the table by module only (forward
 * and backward side by side), elsewhere in JSON and CSV */
#define OPS_ROW_COLS(NAME_FLAGS, SHAPE_FLAGS, MODULE_FLAGS, CATEGORY_FLAGS, STACK_FLAGS, FORWARD_FLAGS)                                                    \
    {                                                                                                          \
        [R_NAME] = KEY_PART("op", "op", "the op's name (cpu_op), or the runtime call's without one",          \
                            TPROF_COLF_NAMES | (NAME_FLAGS), .width = 90),                                     \
        [R_DIMS] = KEY_PART("input_dims", "input dims", "by shape: Input Dims as compact JSON",                \
                            (SHAPE_FLAGS), .width = 48),                                                       \
        [R_TYPES] = KEY_PART("input_types", "input types", "by shape: Input type as compact JSON",             \
                             (SHAPE_FLAGS), .width = 36),                                                      \
        [R_STRIDES] = KEY_PART("input_strides", NULL, "by shape: Input Strides as compact JSON",               \
                               TPROF_COLF_NO_TABLE | (SHAPE_FLAGS), .width = 0),                               \
        [R_CONCRETE] = KEY_PART("concrete_inputs", NULL, "by shape: Concrete Inputs as compact JSON",          \
                                TPROF_COLF_NO_TABLE | (SHAPE_FLAGS), .width = 0),                              \
        [R_MODULE] = KEY_PART("module", "module",                                                              \
                              "by module: the nn.Module class path, outermost first (a backward op: its "      \
                              "forward op's)", (MODULE_FLAGS), .width = 72),                                  \
        [R_CATEGORY] = KEY_PART("category", "category",                                                        \
                                "by category: gemm, attention, convolution, elementwise, reduction, "          \
                                "normalization, communication, memory or other", (CATEGORY_FLAGS)),            \
        [R_STACK] = KEY_PART("stack", "stack",                                                                 \
                             "by stack: the user's Python frames above the op, innermost first, joined by "    \
                             "' <- ' (a backward op: its forward op's)", (STACK_FLAGS), .width = 80),          \
        [R_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "count", "op instances (launches)"), \
        [R_KERNELS] = TPROF_COL("kernels", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "kernels",                       \
                                "GPU events they launched directly"),                                          \
        [R_DIRECT] = TPROF_COL("direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "direct",                   \
                               "per instance the union of its direct kernels' intervals, summed",              \
                               .flags = TPROF_COLF_METRIC),                                                    \
        [R_SHARE] = TPROF_COL("share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "share",                        \
                              "direct_ns / all rows' direct_ns", .num = "direct_ns", .den = "top.direct_ns",    \
                              .decimals = 2, .csv_decimals = 6),                                               \
        [R_MEAN] = TPROF_COL("mean_direct_ns", TPROF_COL_MEAN_NS, TPROF_COMBINE_DERIVED, "mean",               \
                             "direct_ns / count", .num = "direct_ns", .den = "count", .csv_decimals = 3),     \
        [R_MIN] = TPROF_COL("min_direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_MIN, "min",                     \
                            "the instance with the least direct time", .flags = TPROF_COLF_NO_TABLE),           \
        [R_MAX] = TPROF_COL("max_direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, "max",                     \
                            "the instance with the most direct time", .flags = TPROF_COLF_NO_TABLE),            \
        [R_SUBTREE] = TPROF_COL("subtree_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "subtree",                \
                                "per instance the union over the kernels of it and the ops under it, summed"), \
        [R_DEV_SELF] = TPROF_COL("device_self_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,                \
                                 "PyTorch's self device time: the durations of the direct kernels summed",     \
                                 .flags = TPROF_COLF_NO_TABLE),                                                \
        [R_DEV_TOTAL] = TPROF_COL("device_total_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,              \
                                  "PyTorch's total device time: the subtree's kernel durations summed",       \
                                  .flags = TPROF_COLF_NO_TABLE),                                               \
        [R_CPU_SELF] = TPROF_COL("cpu_self_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "CPU self",             \
                                 "the op's span minus the spans directly under it (Python frames looked through)",   \
                                 .flags = TPROF_COLF_NO_TABLE),                                               \
        [R_CPU_TOTAL] = TPROF_COL("cpu_total_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "CPU total",          \
                                  "the op's span"),                                                            \
        [R_CPU_PER_GPU] = TPROF_COL("cpu_per_gpu", TPROF_COL_REAL, TPROF_COMBINE_DERIVED, "CPU/GPU",           \
                                    "launch overhead: cpu_total_ns / direct_ns (above 1: the host takes longer "  \
                                    "than the GPU work it launches)", .num = "cpu_total_ns", .den = "direct_ns",  \
                                    .decimals = 2, .csv_decimals = 6),                                         \
        [R_FORWARD] = TPROF_COL("forward_direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "forward",         \
                                "direct_ns minus backward_direct_ns", .flags = (FORWARD_FLAGS)),               \
        [R_BACKWARD] = TPROF_COL("backward_direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "backward",      \
                                 "the part of direct_ns launched under an autograd backward op"),              \
        [R_RECOMPUTE] = TPROF_COL("recompute_direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "recompute",   \
                                  "of backward_direct_ns, the forward ops run again inside the backward "      \
                                  "(activation checkpointing)", .flags = TPROF_COLF_NO_TABLE),                 \
        [R_TOP_KERNEL] = TPROF_COL("top_kernel", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "top kernel",          \
                                   "the kernel with the most time among them (by_kernel has each)",             \
                                   .flags = TPROF_COLF_NAMES, .width = 48),                                    \
        [R_MODELLED] = TPROF_COL("modelled", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,                         \
                                 "instances the performance model covers (an op it knows, with inputs)",       \
                                 .flags = TPROF_COLF_NO_TABLE),                                                \
        [R_MODELLED_NS] = TPROF_COL("modelled_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,                \
                                    "their subtree kernel time", .flags = TPROF_COLF_NO_TABLE),                \
        [R_FLOPS] = TPROF_COL("flops", TPROF_COL_REAL, TPROF_COMBINE_SUM, NULL, "their FLOPs summed",          \
                              .flags = TPROF_COLF_NO_TABLE | TPROF_COLF_WHOLE),                                \
        [R_BYTES] = TPROF_COL("bytes", TPROF_COL_REAL, TPROF_COMBINE_SUM, NULL,                                \
                              "their bytes moved summed (0: an element type unknown)",                         \
                              .flags = TPROF_COLF_NO_TABLE | TPROF_COLF_WHOLE),                                \
        [R_TFLOPS] = TPROF_COL("tflops", TPROF_COL_RATE, TPROF_COMBINE_DERIVED, "TFLOP/s",                     \
                               "achieved: flops / modelled_ns", .num = "flops", .den = "modelled_ns",          \
                               .scale = 1e-3, .decimals = 1, .csv_digits = 9),                                 \
        [R_TBPS] = TPROF_COL("tbps", TPROF_COL_RATE, TPROF_COMBINE_DERIVED, "TB/s",                            \
                             "achieved: bytes / modelled_ns", .num = "bytes", .den = "modelled_ns",            \
                             .scale = 1e-3, .decimals = 2, .csv_digits = 9),                                   \
        [R_INTENSITY] = TPROF_COL("intensity", TPROF_COL_REAL, TPROF_COMBINE_DERIVED, "FLOP/B",                \
                                  "arithmetic intensity: flops / bytes", .num = "flops", .den = "bytes",      \
                                  .decimals = 1, .csv_digits = 9, .flags = TPROF_COLF_NO_TABLE),               \
        [R_DTYPE] = TPROF_COL("dtype", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL,                              \
                              "the element type whose peak applies (fp32, bf16, fp16, fp8; mixed: none, no roofline)",                   \
                              .flags = TPROF_COLF_NO_TABLE),                                                   \
        [R_BOUND] = TPROF_COL("bound", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, "bound",                           \
                              "compute or memory: which roof the intensity puts it under"),                    \
        [R_ROOFLINE] = TPROF_COL("roofline", TPROF_COL_RATIO, TPROF_COMBINE_FIRST, "roofline",                 \
                                 "tflops / min(peak, intensity x bandwidth): the share of what the device "    \
                                 "allows at this intensity", .decimals = 1),                                   \
    }

static const tprof_col_desc ops_kernel_cols[K_NCOLS] = {
    [K_NAME] = TPROF_COL("kernel", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "kernel", "the GPU event's name",
                         .flags = TPROF_COLF_KEY | TPROF_COLF_NAMES),
    [K_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "count", "events of the name"),
    [K_TOTAL] = TPROF_COL("total_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "total", "their durations summed",
                          .flags = TPROF_COLF_METRIC),
};
static const tprof_table_desc ops_kernels = { .name = "by_kernel",
                                              .doc = "per row: the GPU events it launched directly, by name, "
                                                     "most time first",
                                              .cols = ops_kernel_cols, .ncols = K_NCOLS };
static const tprof_table_desc *const ops_row_children[] = { &ops_kernels };

static const tprof_col_desc ops_row_cols[TPROF_OPS_GROUPINGS][R_NCOLS] = {
    [TPROF_OPS_BY_NAME] = OPS_ROW_COLS(0, HIDDEN, HIDDEN, HIDDEN, HIDDEN, TPROF_COLF_NO_TABLE),
    [TPROF_OPS_BY_SHAPE] = OPS_ROW_COLS(0, 0, HIDDEN, HIDDEN, HIDDEN, TPROF_COLF_NO_TABLE),
    [TPROF_OPS_BY_MODULE] = OPS_ROW_COLS(HIDDEN, HIDDEN, 0, HIDDEN, HIDDEN, 0),
    [TPROF_OPS_BY_CATEGORY] = OPS_ROW_COLS(HIDDEN, HIDDEN, HIDDEN, 0, HIDDEN, TPROF_COLF_NO_TABLE),
    [TPROF_OPS_BY_STACK] = OPS_ROW_COLS(0, HIDDEN, HIDDEN, HIDDEN, 0, TPROF_COLF_NO_TABLE),
};

#define OPS_ROWS(BY)                                                                                           \
    { .name = "rows", .doc = "by direct time, most first (--top limits them)", .cols = ops_row_cols[BY],       \
      .ncols = R_NCOLS, .limited = 1, .children = ops_row_children, .nchildren = 1 }
static const tprof_table_desc ops_rows[TPROF_OPS_GROUPINGS] = {
    OPS_ROWS(TPROF_OPS_BY_NAME), OPS_ROWS(TPROF_OPS_BY_SHAPE), OPS_ROWS(TPROF_OPS_BY_MODULE),
    OPS_ROWS(TPROF_OPS_BY_CATEGORY), OPS_ROWS(TPROF_OPS_BY_STACK)
};
static const tprof_table_desc ops_top = { .name = "", .cols = ops_top_cols, .ncols = T_NCOLS };
static const tprof_table_desc *const ops_tables[TPROF_OPS_GROUPINGS][1] = {
    { &ops_rows[0] }, { &ops_rows[1] }, { &ops_rows[2] }, { &ops_rows[3] }, { &ops_rows[4] }
};
#define OPS_DESC(NAME, BY, DOC)                                                                                \
    { .name = NAME, .version = 1, .top = &ops_top, .tables = ops_tables[BY], .ntables = 1, .csv_table = 1,     \
      .doc = DOC }
const tprof_result_desc tprof_ops_desc[TPROF_OPS_GROUPINGS] = {
    OPS_DESC("ops", TPROF_OPS_BY_NAME, "GPU time per op name (trainprof ops)"),
    OPS_DESC("ops_by_shape", TPROF_OPS_BY_SHAPE, "GPU time per op and inputs (trainprof ops --by shape)"),
    OPS_DESC("ops_by_module", TPROF_OPS_BY_MODULE, "GPU time per nn.Module (trainprof ops --by module)"),
    OPS_DESC("ops_by_category", TPROF_OPS_BY_CATEGORY, "GPU time per op category (trainprof ops --by category)"),
    OPS_DESC("ops_by_stack", TPROF_OPS_BY_STACK, "GPU time per op and Python call stack (trainprof ops --by stack)"),
};

static const char *by_label(tprof_ops_by by)
{
    return by == TPROF_OPS_BY_SHAPE ? "shape" : by == TPROF_OPS_BY_MODULE ? "module"
                                       : by == TPROF_OPS_BY_CATEGORY ? "category"
                                       : by == TPROF_OPS_BY_STACK  ? "stack" : "name";
}

static int sort_rows(tprof_result *res)
{
    static const int cols[] = { R_DIRECT, R_NAME, R_MODULE, R_CATEGORY, R_STACK, R_DIMS, R_TYPES, R_STRIDES, R_CONCRETE };
    static const int desc[] = { 1, 0, 0, 0, 0, 0, 0, 0, 0 };
    return tprof_rows_sort(tprof_result_table(res, 0), cols, desc, sizeof cols / sizeof *cols);
}

static int fill_rows(const ops_ctx *c, tprof_result *res)
{
    tprof_rows *rows = tprof_result_table(res, 0);
    const tprof_col_desc *cols = ops_row_cols[c->o->by];
    for (size_t j = 0; j < c->nrows; j++) {
        const op_row *x = &c->rows[j];
        long i = tprof_rows_add(rows);
        if (i < 0) return TPROF_ENOMEM;
        const uint32_t parts[] = { [R_NAME] = x->name, [R_DIMS] = x->dims, [R_TYPES] = x->types,
                                   [R_STRIDES] = x->strides, [R_CONCRETE] = x->concrete, [R_MODULE] = x->module,
                                   [R_CATEGORY] = x->category, [R_STACK] = x->stack };
        for (int k = R_NAME; k <= R_STACK; k++)
            if ((cols[k].flags & HIDDEN) != HIDDEN &&
                tprof_rows_set_s(rows, (size_t)i, (size_t)k, tprof_strtab_get(&c->strs, parts[k])))
                return TPROF_ENOMEM;
        const int64_t v[] = { [R_COUNT] = (int64_t)x->count, [R_KERNELS] = (int64_t)x->kernels,
                              [R_DIRECT] = x->direct, [R_MIN] = x->min_direct, [R_MAX] = x->max_direct,
                              [R_SUBTREE] = x->subtree, [R_DEV_SELF] = x->dev_self, [R_DEV_TOTAL] = x->dev_total,
                              [R_CPU_SELF] = x->cpu_self, [R_CPU_TOTAL] = x->cpu_total,
                              [R_FORWARD] = x->direct - x->backward, [R_BACKWARD] = x->backward,
                              [R_RECOMPUTE] = x->recompute };
        for (int k = R_COUNT; k < R_TOP_KERNEL; k++)
            if (cols[k].combine != TPROF_COMBINE_DERIVED) tprof_rows_set_i(rows, (size_t)i, (size_t)k, v[k]);
        tprof_rows_set_i(rows, (size_t)i, R_MODELLED, (int64_t)x->modelled);
        tprof_rows_set_i(rows, (size_t)i, R_MODELLED_NS, x->modelled_ns);
        if (x->modelled) {
            tprof_rows_set_d(rows, (size_t)i, R_FLOPS, x->flops);
            tprof_rows_set_d(rows, (size_t)i, R_BYTES, x->bytes);
            const char *dt = x->dtype >= 0 ? tprof_dtype_name((tprof_dtype)x->dtype) : "mixed";
            if (tprof_rows_set_s(rows, (size_t)i, R_DTYPE, dt)) return TPROF_ENOMEM;
        }
    }
    for (size_t j = 0; j < c->nkern; j++) {
        const op_kernel *k = &c->kern[j];
        tprof_rows *kids = tprof_rows_child(rows, k->row, 0);
        long i = kids ? tprof_rows_add(kids) : -1;
        if (i < 0 || tprof_rows_set_s(kids, (size_t)i, K_NAME, tprof_trace_str(c->t, k->name))) return TPROF_ENOMEM;
        tprof_rows_set_i(kids, (size_t)i, K_COUNT, (int64_t)k->count);
        tprof_rows_set_i(kids, (size_t)i, K_TOTAL, k->total);
    }
    return 0;
}

/* The roofline's device and peaks in the top row: the device table's row
 * of --device or the trace's first device, replaced by --peak-tflops /
 * --peak-tbps. */
static int set_peaks(const tprof_trace *t, const tprof_ops_opts *o, tprof_rows *top)
{
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    const char *name = o->device ? o->device : m->ndevices && m->devices[0].name ? m->devices[0].name : NULL;
    tprof_device_spec spec;
    int known = name && tprof_device_spec_of(name, &spec) == 0;
    if (!known) memset(&spec, 0, sizeof spec);
    const char *source = known ? "datasheet" : NULL;
    if (o->peak_tflops > 0) {
        for (int k = 0; k < TPROF_DT_COUNT; k++) spec.tflops[k] = o->peak_tflops;
        source = "given";
    }
    if (o->peak_tbps > 0) {
        spec.hbm_tbps = o->peak_tbps;
        source = "given";
    }
    if ((name && tprof_rows_set_s(top, 0, T_DEVICE, name)) || (source && tprof_rows_set_s(top, 0, T_PEAK_SOURCE, source)))
        return TPROF_ENOMEM;
    if (spec.hbm_tbps > 0) tprof_rows_set_d(top, 0, T_HBM, spec.hbm_tbps);
    for (int k = 0; k < TPROF_DT_COUNT; k++)
        if (spec.tflops[k] > 0) tprof_rows_set_d(top, 0, (size_t)(T_PEAK0 + k), spec.tflops[k]);
    return 0;
}

/* Each row's bound and share of the roofline, from its intensity and the
 * top row's peak for its element type (again after combining). */
static int finish_roofline(tprof_result *res)
{
    const tprof_rows *top = tprof_result_top_c(res);
    tprof_rows *rows = tprof_result_table(res, 0);
    double hbm = tprof_rows_real(top, 0, "peak_tbps");
    for (size_t i = 0; i < tprof_rows_count(rows); i++) {
        tprof_rows_set_null(rows, i, R_BOUND);
        tprof_rows_set_null(rows, i, R_ROOFLINE);
        const char *dt = tprof_rows_str(rows, i, "dtype");
        double inten = tprof_rows_real(rows, i, "intensity"), achieved = tprof_rows_real(rows, i, "tflops");
        char col[32];
        snprintf(col, sizeof col, "peak_tflops_%s", dt ? dt : "");
        double peak = dt && *dt ? tprof_rows_real(top, 0, col) : 0;
        if (!(peak > 0) || !(hbm > 0) || !(inten > 0) || achieved != achieved) continue;
        double mem_roof = inten * hbm; /* FLOP/B x TB/s = TFLOP/s */
        if (tprof_rows_set_s(rows, i, R_BOUND, mem_roof >= peak ? "compute" : "memory")) return TPROF_ENOMEM;
        tprof_rows_set_d(rows, i, R_ROOFLINE, achieved / (mem_roof < peak ? mem_roof : peak));
    }
    return 0;
}

/* Each row's kernels by time, and its top kernel the first of them (again
 * after combining: the top of the sums, not of one rank). */
static int finish_kernels(tprof_result *res)
{
    static const int cols[] = { K_TOTAL, K_NAME }, desc[] = { 1, 0 };
    tprof_rows *rows = tprof_result_table(res, 0);
    for (size_t i = 0; i < tprof_rows_count(rows); i++) {
        tprof_rows *kids = tprof_rows_child(rows, i, 0);
        if (!kids) return TPROF_ENOMEM;
        int rc = tprof_rows_sort(kids, cols, desc, 2);
        if (!rc && tprof_rows_count(kids))
            rc = tprof_rows_set_s(rows, i, R_TOP_KERNEL, tprof_rows_cell(kids, 0, K_NAME)->v.s);
        if (rc) return rc;
    }
    return 0;
}

/* A half's own state: 0, or TPROF_ENOMEM (what was made is freed by half_free). */
static int half_init(ops_ctx *c)
{
    if (tprof_strtab_init(&c->strs) || tprof_i64map_init(&c->row_of, 256) || tprof_i64map_init(&c->module_of, 64) ||
        tprof_i64map_init(&c->stack_of, 64) || tprof_i64map_init(&c->name_of, 256) ||
        tprof_i64map_init(&c->kern_of, 1024) || tprof_i64map_init(&c->cost_of, 256))
        return TPROF_ENOMEM;
    return 0;
}

static void half_free(ops_ctx *c)
{
    tprof_strtab_free(&c->strs);
    tprof_i64map_free(&c->row_of);
    tprof_i64map_free(&c->module_of);
    tprof_i64map_free(&c->stack_of);
    tprof_i64map_free(&c->name_of);
    free(c->chain);
    free(c->rows);
    free(c->iv);
    free(c->gev);
    free(c->kern);
    tprof_i64map_free(&c->kern_of);
    tprof_i64map_free(&c->cost_of);
    free(c->costs);
    free(c->key);
}

static void ctx_free(ops_ctx *c)
{
    half_free(c);
    if (c->fwd_ready) tprof_idmap_free(&c->fwd_of);
    free(c->module_frame);
    free(c->backward_of);
    free(c->below);
    free(c->args_of);
}

/* B's string ID as A's (UINT32_MAX when out of memory). */
static uint32_t reintern(ops_ctx *a, const ops_ctx *b, uint32_t id)
{
    return intern(a, tprof_strtab_get(&b->strs, id), id < b->strs.count ? b->strs.lens[id] : 0);
}

/* Adds the second half B's rows and kernels to A's: sums, extremes, element
 * types by row_add (a row's FLOPs and bytes: A's sum, then B's, whichever
 * thread ran which). */
static int merge_half(ops_ctx *a, const ops_ctx *b)
{
    uint32_t *row_at = malloc((b->nrows ? b->nrows : 1) * sizeof *row_at); /* B's row -> A's */
    if (!row_at) return TPROF_ENOMEM;
    for (size_t j = 0; j < b->nrows; j++) {
        const op_row *x = &b->rows[j];
        op_row parts = { 0 };
        uint32_t *ids[] = { &parts.name, &parts.dims, &parts.types, &parts.strides, &parts.concrete,
                            &parts.module, &parts.category, &parts.stack };
        const uint32_t from[] = { x->name, x->dims, x->types, x->strides, x->concrete, x->module, x->category, x->stack };
        int oom = 0;
        for (size_t k = 0; k < sizeof ids / sizeof *ids; k++) oom |= (*ids[k] = reintern(a, b, from[k])) == UINT32_MAX;
        uint32_t key = oom ? UINT32_MAX : reintern(a, b, x->key);
        op_row *r = key == UINT32_MAX ? NULL : row_for(a, key, &parts);
        if (!r) {
            free(row_at);
            return TPROF_ENOMEM;
        }
        row_at[j] = (uint32_t)(r - a->rows);
        row_add(r, x);
    }
    for (size_t j = 0; j < b->nkern; j++) {
        const op_kernel *k = &b->kern[j];
        int64_t key = (int64_t)(((uint64_t)row_at[k->row] << 32) | k->name), at;
        if (!tprof_i64map_get(&a->kern_of, key, &at)) {
            if (tprof_grow_items((void **)&a->kern, &a->kerncap, a->nkern + 1, sizeof *a->kern) ||
                tprof_i64map_put(&a->kern_of, key, (int64_t)a->nkern)) {
                free(row_at);
                return TPROF_ENOMEM;
            }
            at = (int64_t)a->nkern;
            a->kern[a->nkern++] = (op_kernel){ .row = row_at[k->row], .name = k->name };
        }
        a->kern[at].count += k->count;
        a->kern[at].total = tprof_sat_add(a->kern[at].total, k->total);
    }
    free(row_at);
    a->gpu_events += b->gpu_events;
    a->gpu_ns = tprof_sat_add(a->gpu_ns, b->gpu_ns);
    return 0;
}

/* One half's launchers [K0, K1) of LAUNCHER, in the step window when there is one. */
typedef struct {
    ops_ctx *c;
    const uint32_t *launcher;
    size_t k0, k1;
    const tprof_step *sel;
    size_t nsel;
    int windowed;
    uint64_t launches;
    int rc;
} half_job;

static void *half_run(void *arg)
{
    half_job *j = arg;
    const tprof_op_tree *tr = j->c->tr;
    uint32_t call = j->k0 < j->k1 ? tprof_op_calls_from(tr, j->launcher[j->k0]) : 0;
    for (size_t k = j->k0; !j->rc && k < j->k1; k++) {
        uint32_t x = j->launcher[k];
        if (k + PREFETCH_AHEAD < j->k1) prefetch_node(tr, j->launcher[k + PREFETCH_AHEAD]);
        if (j->windowed && tprof_step_at(j->sel, j->nsel, tprof_op_ts(tr, x)) < 0) continue;
        j->launches++;
        j->rc = add_instance(j->c, x, &call);
    }
    return NULL;
}

int tprof_ops(const tprof_trace *t, const tprof_ops_opts *opts, tprof_result **out)
{
    return tprof_ops_split(t, opts, out, TPROF_OP_TREE_ALONE);
}

int tprof_ops_split(const tprof_trace *t, const tprof_ops_opts *opts, tprof_result **out, size_t alone)
{
    static const tprof_ops_opts defaults = { .by = TPROF_OPS_BY_NAME, .step_first = -1, .step_last = -1 };
    if (!opts) opts = &defaults;
    *out = NULL;
    if ((unsigned)opts->by >= TPROF_OPS_GROUPINGS || opts->depth < 0) return TPROF_EUSAGE;
    const tprof_trace_meta *m = tprof_trace_meta_get(t);

    /* step window: the steps numbered A..B; an op counts when it starts in one */
    tprof_step *sel = NULL;
    size_t nsel = 0;
    int windowed = opts->step_first >= 0 || opts->step_last >= 0;
    int64_t step_first = INT64_MAX, step_last = INT64_MIN;
    if (windowed) {
        int src = tprof_steps_select(m, opts->step_first, opts->step_last, &sel, &nsel, &step_first, &step_last);
        if (src) return src;
    }

    int rc;
    const tprof_op_tree *tr = tprof_op_tree_of(t, &rc); /* kept with the trace */
    if (rc) {
        free(sel);
        return rc;
    }
    ops_ctx c = { .t = t, .ev = tprof_trace_events(t), .tr = tr, .o = opts }, second = { 0 };
    tprof_result *res = NULL;
    if ((rc = half_init(&c)) || (rc = index_nodes(&c, alone))) goto out;
    rc = TPROF_ENOMEM;
    if (!(res = tprof_result_new(&tprof_ops_desc[opts->by]))) goto out;

    /* a launcher is a node some runtime call with GPU work launched through */
    uint64_t launches = 0, unlinked = 0;
    int64_t unlinked_ns = 0;
    uint8_t *is_launcher = calloc(tr->n ? tr->n : 1, 1);
    if (!is_launcher) goto out;
    size_t nx = 0;
    for (size_t k = 0; k < tr->ncalls; k++)
        if (tr->gpu_first[k + 1] > tr->gpu_first[k]) {
            nx += !is_launcher[tr->call_launcher[k]];
            is_launcher[tr->call_launcher[k]] = 1;
        }
    uint32_t *launcher = malloc((nx ? nx : 1) * sizeof *launcher); /* in node order */
    for (size_t x = 0, k = 0; launcher && x < tr->n; x++)
        if (is_launcher[x]) launcher[k++] = (uint32_t)x;
    free(is_launcher);
    if (!launcher) goto out;
    /* the halves: the second half's state is its own, the index shared */
    second = (ops_ctx){ .t = c.t, .ev = c.ev, .tr = c.tr, .o = c.o, .args = c.args, .nargs = c.nargs,
                        .with_inputs = c.with_inputs, .args_of = c.args_of, .fwd_of = c.fwd_of, .fwd_ready = c.fwd_ready,
                        .module_frame = c.module_frame, .backward_of = c.backward_of, .below = c.below };
    if ((rc = half_init(&second))) {
        free(launcher);
        goto out;
    }
    half_job jobs[2] = { { .c = &c, .launcher = launcher, .k0 = 0, .k1 = nx / 2, .sel = sel, .nsel = nsel, .windowed = windowed },
                         { .c = &second, .launcher = launcher, .k0 = nx / 2, .k1 = nx, .sel = sel, .nsel = nsel, .windowed = windowed } };
    pthread_t helper;
    int helped = tr->n >= alone && pthread_create(&helper, NULL, half_run, &jobs[1]) == 0;
    half_run(&jobs[0]);
    if (helped) pthread_join(helper, NULL);
    else half_run(&jobs[1]);
    free(launcher);
    launches = jobs[0].launches + jobs[1].launches;
    rc = jobs[0].rc ? jobs[0].rc : jobs[1].rc;
    if (!rc) rc = merge_half(&c, &second);
    for (size_t k = 0; !rc && k < tr->nunlinked; k++) {
        const tprof_event *g = &c.ev[tr->unlinked[k]];
        if (windowed && tprof_step_at(sel, nsel, g->ts) < 0) continue;
        launches++;
        unlinked++;
        c.gpu_events++;
        c.gpu_ns = tprof_sat_add(c.gpu_ns, g->dur);
        unlinked_ns = tprof_sat_add(unlinked_ns, g->dur);
        rc = add_unlinked(&c, g);
    }
    if (rc || (rc = fill_rows(&c, res))) goto out;
    int64_t direct = 0;
    for (size_t j = 0; j < c.nrows; j++) direct = tprof_sat_add(direct, c.rows[j].direct);
    tprof_rows *top = tprof_result_top(res);
    if ((rc = tprof_rows_set_s(top, 0, T_BY, by_label(opts->by)))) goto out;
    tprof_rows_set_i(top, 0, T_DEPTH, opts->by == TPROF_OPS_BY_MODULE || opts->by == TPROF_OPS_BY_STACK ? opts->depth : 0);
    tprof_rows_set_i(top, 0, T_LAUNCHES, (int64_t)launches);
    tprof_rows_set_i(top, 0, T_GPU_EVENTS, (int64_t)c.gpu_events);
    tprof_rows_set_i(top, 0, T_GPU_NS, c.gpu_ns);
    tprof_rows_set_i(top, 0, T_DIRECT, direct);
    tprof_rows_set_i(top, 0, T_UNLINKED, (int64_t)unlinked);
    tprof_rows_set_i(top, 0, T_UNLINKED_NS, unlinked_ns);
    tprof_rows_set_i(top, 0, T_OP_ARGS, (int64_t)c.with_inputs);
    if (windowed) {
        tprof_rows_set_i(top, 0, T_STEP_FIRST, step_first);
        tprof_rows_set_i(top, 0, T_STEP_LAST, step_last);
        tprof_rows_set_i(top, 0, T_NSTEPS, (int64_t)nsel);
    }
    if ((rc = set_peaks(t, opts, top))) goto out;
    tprof_result_derive(res);
    if (!(rc = finish_kernels(res)) && !(rc = finish_roofline(res))) rc = sort_rows(res);
out:
    ctx_free(&c);
    half_free(&second);
    free(sel);
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

int tprof_ops_finish(tprof_result *r)
{
    int rc = finish_kernels(r);
    if (!rc) rc = finish_roofline(r);
    if (!rc) rc = sort_rows(r);
    return rc;
}

int tprof_ops_combine(const tprof_result *const *parts, const int64_t *ranks, size_t n, tprof_result **out)
{
    *out = n ? tprof_ranks_combine(parts, ranks, n) : NULL;
    if (!*out) return n ? TPROF_ENOMEM : TPROF_EUSAGE;
    int rc = tprof_ops_finish(*out);
    if (rc) {
        tprof_result_free(*out);
        *out = NULL;
    }
    return rc;
}
