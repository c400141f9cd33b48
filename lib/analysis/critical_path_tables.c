/* trainprof critical-path as a result: each window's critical path
 * (critical_path.c) summed into what bounds it, per step, and the events
 * and ops that hold the most of it. */
#include <stdlib.h>
#include <string.h>

#include "critical_path.h"
#include "launch.h"
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "../util/i64map.h"

/* The window's length, the path's, and what bounds it: the same columns in
 * the top table (summed over windows) and per window. */
#define CP_PATH_COLS(SPAN_DOC, PATH_DOC)                                                                          \
    TPROF_COL("span_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "span", SPAN_DOC),                               \
        TPROF_COL("path_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "path", PATH_DOC, .flags = TPROF_COLF_METRIC), \
        TPROF_COL("path_share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "of span", "path / span",               \
                  .num = "path_ns", .den = "span_ns"),                                                           \
        TPROF_COL("cpu_op_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "CPU ops",                                    \
              "host time in ops (and the annotations and frames holding them) on the path"),                  \
        TPROF_COL("runtime_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "runtime",                               \
                  "host time in CUDA runtime and driver calls on the path"),                                    \
        TPROF_COL("launch_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "launch",                                  \
                  "launch delays on the path: a runtime call's start to its kernel's start, the stream empty"), \
        TPROF_COL("kernel_gap_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "kernel gaps",                         \
                  "gaps between consecutive kernels of a stream on the path"),                                   \
        TPROF_COL("compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "compute", "GPU kernels on the path"),  \
        TPROF_COL("memory_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "memory",                                 \
                  "GPU memcpy and memset on the path"),                                                          \
        TPROF_COL("comm_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "comm",                                     \
                  "communication kernels on the path: exposed communication"),                                   \
        TPROF_COL("sync_edges", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "syncs",                                    \
                  "sync edges on the path: where the host waited for the GPU, or a stream for another")

enum { T_WINDOW, T_WINDOWS, T_REFUSED, T_SPAN, T_PATH, T_SHARE, T_BOUND0 };
static const tprof_col_desc top_cols[] = {
    TPROF_COL("window", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, "window",
              "what a window is: steps (each ProfilerStep), annotation (instances of --annotation), trace (all of it)"),
    TPROF_COL("windows", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "windows", "windows analysed"),
    TPROF_COL("refused", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "refused",
              "windows whose graph HTA's checks refuse (a cycle, a sync within one stream)"),
    CP_PATH_COLS("the windows' lengths, summed", "the critical paths' lengths, summed"),
};
#define NTOP (sizeof top_cols / sizeof *top_cols)

enum { S_STEP, S_START, S_SPAN, S_PATH, S_SHARE, S_BOUND0 };
enum { S_NODES = S_BOUND0 + TPROF_CPB_COUNT + 1, S_EDGES, S_PATH_EDGES, S_VALID, S_WHY };
static const tprof_col_desc step_cols[] = {
    TPROF_COL("step", TPROF_COL_INT, TPROF_COMBINE_FIRST, "step",
              "the ProfilerStep number, or the annotation's instance (0 first), or 0 for the whole trace",
              .flags = TPROF_COLF_KEY),
    TPROF_COL("start_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_PER_RANK, "start", "the window's start",
              .flags = TPROF_COLF_NO_TABLE),
    CP_PATH_COLS("the window's length", "the critical path's length"),
    TPROF_COL("nodes", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "nodes", "points in the graph: the starts and ends some edge joins",
              .flags = TPROF_COLF_NO_TABLE),
    TPROF_COL("edges", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "edges", "edges in the graph", .flags = TPROF_COLF_NO_TABLE),
    TPROF_COL("path_edges", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "path edges", "edges on the path",
              .flags = TPROF_COLF_NO_TABLE),
    TPROF_COL("valid", TPROF_COL_BOOL, TPROF_COMBINE_MIN, "valid", "the graph passed HTA's checks",
              .flags = TPROF_COLF_NO_TABLE),
    TPROF_COL("why", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "why", "why not", .flags = TPROF_COLF_NO_TABLE | TPROF_COLF_OMIT_NULL),
};
#define NSTEP (sizeof step_cols / sizeof *step_cols)

enum { P_KIND, P_NAME, P_OP, P_TIME, P_SHARE, P_EDGES };
static const tprof_col_desc path_cols[] = {
    TPROF_COL("kind", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, "kind",
              "cpu_op, runtime, host (another host span), kernel, memory, comm, launch (the delay before the "
              "kernel named), gap (the gap after the kernel named)",
              .flags = TPROF_COLF_KEY),
    TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "name", "the event", .flags = TPROF_COLF_KEY | TPROF_COLF_NAMES),
    TPROF_COL("op", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "op",
              "the innermost cpu_op holding it (for GPU work: holding its runtime call); empty when none",
              .flags = TPROF_COLF_KEY | TPROF_COLF_NAMES),
    TPROF_COL("time_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "on path", "its time on the critical paths",
              .flags = TPROF_COLF_METRIC),
    TPROF_COL("share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "of path", "time / the paths' length",
              .num = "time_ns", .den = "top.path_ns"),
    TPROF_COL("edges", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "edges", "edges of the path it holds"),
};

enum { E_STEP, E_FROM, E_FROM_TS, E_FROM_POINT, E_TO, E_TO_TS, E_TO_POINT, E_TYPE, E_BOUND, E_WEIGHT, E_EVENT };
static const tprof_col_desc edge_cols[] = {
    TPROF_COL("step", TPROF_COL_INT, TPROF_COMBINE_PER_RANK, "step", "the window (as in steps)"),
    TPROF_COL("from", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, "from", "the event the edge leaves"),
    TPROF_COL("from_ts", TPROF_COL_TIMESTAMP, TPROF_COMBINE_PER_RANK, "from ts", "that event's start"),
    TPROF_COL("from_point", TPROF_COL_ENUM, TPROF_COMBINE_PER_RANK, "at", "start or end: the point it leaves"),
    TPROF_COL("to", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, "to", "the event it reaches"),
    TPROF_COL("to_ts", TPROF_COL_TIMESTAMP, TPROF_COMBINE_PER_RANK, "to ts", "that event's start"),
    TPROF_COL("to_point", TPROF_COL_ENUM, TPROF_COMBINE_PER_RANK, "at", "start or end"),
    TPROF_COL("type", TPROF_COL_ENUM, TPROF_COMBINE_PER_RANK, "type",
              "HTA's edge type: operator, dependency, kernel_launch_delay, kernel_kernel_delay, sync_dependency"),
    TPROF_COL("bound", TPROF_COL_ENUM, TPROF_COMBINE_PER_RANK, "bound",
              "what bounds it (a column of the breakdown, without _ns), empty for edges of no time"),
    TPROF_COL("weight_ns", TPROF_COL_DURATION, TPROF_COMBINE_PER_RANK, "weight", "its time"),
    TPROF_COL("event", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, "event",
              "the event its time is attributed to (HTA's attribution), empty when none",
              .flags = TPROF_COLF_OMIT_NULL),
};

static const tprof_table_desc top_desc = { .name = "", .cols = top_cols, .ncols = NTOP };
static const tprof_table_desc steps_desc = { .name = "steps", .title = "per window", .doc = "each window's path",
                                             .cols = step_cols, .ncols = NSTEP };
static const tprof_table_desc path_desc = { .name = "on_path", .title = "on the critical path",
                                            .doc = "the events that hold the paths' time, most first",
                                            .cols = path_cols, .ncols = sizeof path_cols / sizeof *path_cols,
                                            .limited = 1 };
static const tprof_table_desc edges_desc = { .name = "path", .title = "the path",
                                             .doc = "every edge of every window's path, in order (with --path; "
                                                    "empty without)",
                                             .cols = edge_cols, .ncols = sizeof edge_cols / sizeof *edge_cols };
static const tprof_table_desc *const tables[] = { &steps_desc, &path_desc, &edges_desc };
const tprof_result_desc tprof_critical_path_desc = {
    .name = "critical_path", .version = 1, .top = &top_desc, .tables = tables, .ntables = 3, .csv_table = 1,
    .doc = "the critical path of each window, HTA's graph (docs/METRICS.md, trainprof critical-path)",
};

/* Record R of C (an edge's point or attribution) as an event. */
static tprof_event record(const tprof_cp_ctx *c, uint32_t r)
{
    tprof_event e;
    tprof_cp_record(c, r, &e);
    return e;
}

static const char *const kinds[] = { "launch", "host", "cpu_op", "runtime", "gap", "memory", "comm", "kernel" };
enum { K_LAUNCH, K_HOST, K_CPU_OP, K_RUNTIME, K_GAP, K_MEMORY, K_COMM, K_KERNEL };

/* What the edge's time is (an index into kinds) and the event it is named after (a string id). */
static int path_kind(const tprof_trace *t, const tprof_cp_ctx *c, const tprof_cp_edge *e, uint32_t *name)
{
    *name = 0; /* the empty string */
    if (e->type == TPROF_CPE_LAUNCH_DELAY) {
        *name = record(c, e->to).name;
        return K_LAUNCH;
    }
    if (e->event == TPROF_CP_NONE) return K_HOST;
    tprof_event ev = record(c, e->event);
    *name = ev.name;
    switch (e->bound) {
    case TPROF_CPB_CPU_OP: return strcmp(tprof_trace_str(t, ev.cat), "cpu_op") ? K_HOST : K_CPU_OP;
    case TPROF_CPB_RUNTIME: return K_RUNTIME;
    case TPROF_CPB_KERNEL_GAP: return K_GAP;
    case TPROF_CPB_MEMORY: return K_MEMORY;
    case TPROF_CPB_COMM: return K_COMM;
    default: return K_KERNEL;
    }
}

typedef struct {
    const tprof_trace *t;
    const tprof_cp_ctx *c;
    tprof_result *res;
    tprof_i64map row_of; /* hash of (kind, name, op) -> row of on_path */
    tprof_i64map row_of_ids; /* (kind, name id, op id) packed -> row: the same rows without hashing strings */
    int64_t bound[TPROF_CPB_COUNT];
    size_t sync_edges;
    int edges; /* fill the path table */
} cp_build;

static uint64_t mix(uint64_t h, const char *s)
{
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return (h ^ 0xFF) * 0x100000001B3ull;
}

/* The row of on_path for (KIND, NAME, OP): found by hash, checked by value. */
static long path_row(cp_build *b, const char *kind, const char *name, const char *op)
{
    tprof_rows *p = tprof_result_table(b->res, 1);
    uint64_t h = mix(mix(mix(0xCBF29CE484222325ull, kind), name), op);
    for (int64_t key = (int64_t)(h >> 1);; key = (key + 1) & INT64_MAX) {
        int64_t at;
        if (!tprof_i64map_get(&b->row_of, key, &at)) {
            long r = tprof_rows_add(p);
            if (r < 0 || tprof_i64map_put(&b->row_of, key, r) || tprof_rows_set_s(p, (size_t)r, P_KIND, kind) ||
                tprof_rows_set_s(p, (size_t)r, P_NAME, name) || tprof_rows_set_s(p, (size_t)r, P_OP, op))
                return -1;
            tprof_rows_set_i(p, (size_t)r, P_TIME, 0);
            tprof_rows_set_i(p, (size_t)r, P_EDGES, 0);
            return r;
        }
        if (!strcmp(tprof_rows_str(p, (size_t)at, "kind"), kind) && !strcmp(tprof_rows_str(p, (size_t)at, "name"), name) &&
            !strcmp(tprof_rows_str(p, (size_t)at, "op"), op))
            return (long)at;
    }
}

static int add_window(cp_build *b, int64_t number, int64_t start, int64_t end, const tprof_cp_window *w)
{
    tprof_rows *s = tprof_result_table(b->res, 0), *p = tprof_result_table(b->res, 1);
    long r = tprof_rows_add(s);
    if (r < 0) return TPROF_ENOMEM;
    size_t row = (size_t)r;
    tprof_rows_set_i(s, row, S_STEP, number);
    tprof_rows_set_i(s, row, S_START, start);
    tprof_rows_set_i(s, row, S_SPAN, tprof_span_ns(start, end));
    tprof_rows_set_i(s, row, S_PATH, w->length_ns);
    for (int k = 0; k < TPROF_CPB_COUNT; k++) {
        tprof_rows_set_i(s, row, (size_t)(S_BOUND0 + k), w->bound_ns[k]);
        b->bound[k] = tprof_sat_add(b->bound[k], w->bound_ns[k]);
    }
    tprof_rows_set_i(s, row, S_BOUND0 + TPROF_CPB_COUNT, (int64_t)w->sync_edges);
    b->sync_edges += w->sync_edges;
    tprof_rows_set_i(s, row, S_NODES, (int64_t)w->nodes);
    tprof_rows_set_i(s, row, S_EDGES, (int64_t)w->edges);
    tprof_rows_set_i(s, row, S_PATH_EDGES, (int64_t)w->npath);
    tprof_rows_set_i(s, row, S_VALID, w->valid);
    if (!w->valid && tprof_rows_set_s(s, row, S_WHY, w->why)) return TPROF_ENOMEM;
    for (size_t k = 0; k < w->npath; k++) {
        const tprof_cp_edge *e = &w->path[k];
        if (e->bound == TPROF_CPB_NONE || !e->weight) continue;
        uint32_t name, op = e->op == TPROF_CP_NONE ? 0 : record(b->c, e->op).name;
        int kind = path_kind(b->t, b->c, e, &name);
        int packed = name < (1u << 30) && op < (1u << 30);
        int64_t key = ((int64_t)kind << 60) | ((int64_t)name << 30) | (int64_t)op, at;
        long pr;
        if (packed && tprof_i64map_get(&b->row_of_ids, key, &at)) pr = (long)at;
        else {
            pr = path_row(b, kinds[kind], tprof_trace_str(b->t, name), tprof_trace_str(b->t, op));
            if (pr < 0 || (packed && tprof_i64map_put(&b->row_of_ids, key, pr))) return TPROF_ENOMEM;
        }
        tprof_rows_set_i(p, (size_t)pr, P_TIME, tprof_rows_cell(p, (size_t)pr, P_TIME)->v.i + e->weight);
        tprof_rows_set_i(p, (size_t)pr, P_EDGES, tprof_rows_cell(p, (size_t)pr, P_EDGES)->v.i + 1);
    }
    if (!b->edges) return 0;
    tprof_rows *x = tprof_result_table(b->res, 2);
    for (size_t k = 0; k < w->npath; k++) {
        const tprof_cp_edge *e = &w->path[k];
        long xr = tprof_rows_add(x);
        if (xr < 0) return TPROF_ENOMEM;
        size_t i = (size_t)xr;
        tprof_rows_set_i(x, i, E_STEP, number);
        tprof_event from = record(b->c, e->from), to = record(b->c, e->to);
        tprof_rows_set_i(x, i, E_FROM_TS, from.ts);
        tprof_rows_set_i(x, i, E_TO_TS, to.ts);
        tprof_rows_set_i(x, i, E_WEIGHT, e->weight);
        if (tprof_rows_set_s(x, i, E_FROM, tprof_trace_str(b->t, from.name)) ||
            tprof_rows_set_s(x, i, E_FROM_POINT, e->from_start ? "start" : "end") ||
            tprof_rows_set_s(x, i, E_TO, tprof_trace_str(b->t, to.name)) ||
            tprof_rows_set_s(x, i, E_TO_POINT, e->to_start ? "start" : "end") ||
            tprof_rows_set_s(x, i, E_TYPE, tprof_cp_edge_name((tprof_cp_edge_type)e->type)) ||
            tprof_rows_set_s(x, i, E_BOUND, tprof_cp_bound_name((tprof_cp_bound)e->bound)) ||
            (e->event != TPROF_CP_NONE &&
             tprof_rows_set_s(x, i, E_EVENT, tprof_trace_str(b->t, record(b->c, e->event).name))))
            return TPROF_ENOMEM;
    }
    return 0;
}

/* HTA's annotation windows: the events whose name holds ANNOTATION, in
 * file order; instances FIRST..LAST (0-based) as one window. */
static int annotation_window(const tprof_trace *t, const tprof_cp_ctx *c, const tprof_cp_opts *o,
                             tprof_cp_span *out)
{
    size_t n = tprof_cp_records(c);
    int64_t k = 0, lo = o->instance_first < 0 ? 0 : o->instance_first, hi = o->instance_last < 0 ? lo : o->instance_last;
    out->number = lo;
    out->start = INT64_MAX;
    out->end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        tprof_event e = record(c, (uint32_t)i);
        if (e.ph != 'X' || !strstr(tprof_trace_str(t, e.name), o->annotation)) continue;
        if (k >= lo && k <= hi) {
            if (e.ts < out->start) out->start = e.ts;
            if (tprof_end_ns(e.ts, e.dur) > out->end) out->end = tprof_end_ns(e.ts, e.dur);
        }
        k++;
    }
    return out->start <= out->end ? 0 : TPROF_EUSAGE;
}

int tprof_cp_windows(const tprof_trace *t, const tprof_cp_ctx *c, const tprof_cp_opts *opts, tprof_cp_span **out,
                     size_t *n, const char **window)
{
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    tprof_cp_span *spans = NULL;
    size_t nspans = 0;
    int rc = 0;
    *out = NULL;
    *n = 0;
    *window = "steps";
    if (opts->annotation && *opts->annotation) {
        *window = "annotation";
        if (!(spans = malloc(sizeof *spans))) return TPROF_ENOMEM;
        if ((rc = annotation_window(t, c, opts, spans))) {
            free(spans);
            return rc;
        }
        nspans = 1;
    } else if (m->nsteps && !opts->whole) {
        tprof_step *sel;
        int64_t ff, fl;
        if ((rc = tprof_steps_select(m, opts->step_first, opts->step_last, &sel, &nspans, &ff, &fl))) return rc;
        spans = malloc((nspans ? nspans : 1) * sizeof *spans);
        if (!spans) {
            free(sel);
            return TPROF_ENOMEM;
        }
        /* a sample: evenly spaced, the warm-up step left out */
        size_t first = opts->max_windows && nspans >= 3 ? 1 : 0, pool = nspans - first;
        size_t take = opts->max_windows && opts->max_windows < pool ? opts->max_windows : pool;
        for (size_t k = 0; k < take; k++) {
            size_t i = first + (take == pool ? k : (2 * k + 1) * pool / (2 * take));
            spans[k] = (tprof_cp_span){ sel[i].number, sel[i].ts, tprof_end_ns(sel[i].ts, sel[i].dur) };
        }
        nspans = take;
        free(sel);
    } else {
        if (opts->step_first >= 0 || opts->step_last >= 0) return TPROF_EUSAGE; /* steps asked, none there */
        *window = "trace";
        if (!(spans = malloc(sizeof *spans))) return TPROF_ENOMEM;
        spans[0] = (tprof_cp_span){ 0, m->ts_min, m->ts_max };
        nspans = m->ts_min <= m->ts_max;
    }
    *out = spans;
    *n = nspans;
    return 0;
}

int tprof_cp_open(const tprof_trace *t, const tprof_cp_opts **opts, tprof_cp_ctx **c, tprof_cp_span **spans,
                  size_t *n, const char **window)
{
    static const tprof_cp_opts defaults = { .step_first = -1, .step_last = -1, .instance_first = -1,
                                            .instance_last = -1 };
    if (!*opts) *opts = &defaults;
    *spans = NULL;
    *n = 0;
    *window = "steps";
    if (!(*c = tprof_cp_ctx_new_split(t, (*opts)->threads == 1 ? SIZE_MAX : TPROF_CP_ALONE))) return TPROF_ENOMEM;
    int rc = tprof_cp_windows(t, *c, *opts, spans, n, window);
    if (rc) {
        tprof_cp_ctx_free(*c);
        *c = NULL;
    }
    return rc;
}

int tprof_critical_path(const tprof_trace *t, const tprof_cp_opts *opts, tprof_result **out)
{
    *out = NULL;
    tprof_cp_span *spans;
    size_t nspans;
    const char *window;
    tprof_cp_ctx *c;
    int rc = tprof_cp_open(t, &opts, &c, &spans, &nspans, &window);
    if (rc) return rc;
    cp_build b = { .t = t, .c = c, .res = tprof_result_new(&tprof_critical_path_desc), .edges = opts->path };
    rc = b.res && !tprof_i64map_init(&b.row_of, 256) && !tprof_i64map_init(&b.row_of_ids, 256) ? 0 : TPROF_ENOMEM;
    int64_t span = 0, path = 0, refused = 0;
    tprof_cp_window *ws = rc ? NULL : calloc(nspans ? nspans : 1, sizeof *ws);
    if (!rc) rc = ws ? tprof_cp_paths(c, spans, nspans, ws) : TPROF_ENOMEM;
    for (size_t i = 0; i < nspans && !rc; i++) { /* in order, whichever thread built each */
        const tprof_cp_window *w = &ws[i];
        rc = add_window(&b, spans[i].number, spans[i].start, spans[i].end, w);
        span = tprof_sat_add(span, tprof_span_ns(spans[i].start, spans[i].end));
        path = tprof_sat_add(path, w->length_ns);
        refused += !w->valid;
    }
    if (ws)
        for (size_t i = 0; i < nspans; i++) tprof_cp_window_free(&ws[i]);
    free(ws);
    if (!rc) {
        tprof_rows *top = tprof_result_top(b.res);
        rc = tprof_rows_set_s(top, 0, T_WINDOW, window);
        tprof_rows_set_i(top, 0, T_WINDOWS, (int64_t)nspans);
        tprof_rows_set_i(top, 0, T_REFUSED, refused);
        tprof_rows_set_i(top, 0, T_SPAN, span);
        tprof_rows_set_i(top, 0, T_PATH, path);
        for (int k = 0; k < TPROF_CPB_COUNT; k++) tprof_rows_set_i(top, 0, (size_t)(T_BOUND0 + k), b.bound[k]);
        tprof_rows_set_i(top, 0, T_BOUND0 + TPROF_CPB_COUNT, (int64_t)b.sync_edges);
    }
    if (!rc) rc = tprof_critical_path_finish(b.res);
    tprof_cp_ctx_free(c);
    if (b.row_of.keys) tprof_i64map_free(&b.row_of);
    if (b.row_of_ids.keys) tprof_i64map_free(&b.row_of_ids);
    free(spans);
    if (rc) tprof_result_free(b.res);
    else *out = b.res;
    return rc;
}

int tprof_critical_path_finish(tprof_result *r)
{
    tprof_rows *p = tprof_result_table(r, 1);
    int cols[] = { P_TIME, P_KIND, P_NAME, P_OP }, desc[] = { 1, 0, 0, 0 };
    int rc = tprof_rows_sort(p, cols, desc, 4);
    tprof_result_derive(r);
    return rc;
}

int tprof_critical_path_combine(const tprof_result *const *parts, const int64_t *ranks, size_t n,
                                tprof_result **out)
{
    *out = n ? tprof_ranks_combine(parts, ranks, n) : NULL;
    if (!*out) return n ? TPROF_ENOMEM : TPROF_EUSAGE;
    int rc = tprof_critical_path_finish(*out);
    if (rc) {
        tprof_result_free(*out);
        *out = NULL;
    }
    return rc;
}
