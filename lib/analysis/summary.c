/* The summary: the first screen on a profile, one result for the run. Each
 * trace gives its row (run facts, steps, phases, temporal breakdown,
 * communication) as soon as it is read; the run's result joins the rows
 * with the kernels combined across traces, the ranks and the advice. */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "collectives_tables.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- one trace's row ---- */

enum { T_LABEL, T_FILE, T_RANK, T_EVENTS, T_TRUNCATED, T_BASE, T_NSTEPS, T_WORLD, T_BACKEND, T_DEVICE, T_NCOLS };
static const tprof_col_desc trace_cols[T_NCOLS] = {
    [T_LABEL] = TPROF_COL("label", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "\"rank R\", else \"trace I\""),
    [T_FILE] = TPROF_COL("file", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "the trace's path"),
    [T_RANK] = TPROF_COL("rank", TPROF_COL_INT, TPROF_COMBINE_PER_RANK, NULL,
                         "distributedInfo.rank, else rank<N> in the file name; -1 when neither says"),
    [T_EVENTS] = TPROF_COL("events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "events in the trace, stored or not"),
    [T_TRUNCATED] = TPROF_COL("truncated", TPROF_COL_BOOL, TPROF_COMBINE_MAX, NULL,
                              "the file ended early: the rest covers what was read"),
    [T_BASE] = TPROF_COL("base_time_ns", TPROF_COL_INT, TPROF_COMBINE_PER_RANK, NULL,
                         "baseTimeNanoseconds: the trace's epoch, ns since 1970 (null when absent); steps' ts_ns "
                         "count from it",
                         .flags = TPROF_COLF_OMIT_NULL),
    [T_NSTEPS] = TPROF_COL("nsteps", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "ProfilerStep spans",
                           .flags = TPROF_COLF_NO_JSON),
    [T_WORLD] = TPROF_COL("world_size", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "distributedInfo.world_size",
                          .flags = TPROF_COLF_NO_JSON),
    [T_BACKEND] = TPROF_COL("backend", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "distributedInfo.backend",
                            .flags = TPROF_COLF_NO_JSON),
    [T_DEVICE] = TPROF_COL("device", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the first device's name",
                           .flags = TPROF_COLF_NO_JSON),
};

enum { S_COUNT, S_MEAN, S_P50, S_MIN, S_MAX, S_SPREAD, S_NCOLS };
static const tprof_col_desc steps_cols[S_NCOLS] = {
    [S_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "ProfilerSteps"),
    [S_MEAN] = TPROF_COL("mean_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "mean step time (CPU span)"),
    [S_P50] = TPROF_COL("p50_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "median step time"),
    [S_MIN] = TPROF_COL("min_ns", TPROF_COL_DURATION, TPROF_COMBINE_MIN, NULL, "shortest step"),
    [S_MAX] = TPROF_COL("max_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, NULL, "longest step"),
    [S_SPREAD] = TPROF_COL("spread", TPROF_COL_REAL, TPROF_COMBINE_MAX, NULL, "(max - min) / mean"),
};
enum { P_PHASE, P_CPU, P_GPU, P_NCOLS };
static const tprof_col_desc phase_cols[P_NCOLS] = {
    [P_PHASE] = TPROF_COL("phase", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "data, forward, backward, optimizer, other",
                          .flags = TPROF_COLF_KEY),
    [P_CPU] = TPROF_COL("cpu_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "CPU time of the steps in the phase"),
    [P_GPU] = TPROF_COL("gpu_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                        "GPU time of the work launched in the phase"),
};
enum { G_SPAN, G_IDLE, G_COMPUTE, G_NON, G_LAST, G_EVENTS, G_HTA_SPAN, G_HTA_IDLE, G_HTA_COMPUTE, G_HTA_NON,
       G_HTA_NOTE, G_NCOLS };
static const tprof_col_desc temporal_cols[G_NCOLS] = {
    [G_SPAN] = TPROF_COL("span_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "the GPU kernel span"),
    [G_IDLE] = TPROF_COL("idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "span minus busy"),
    [G_COMPUTE] = TPROF_COL("compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "union of compute kernels"),
    [G_NON] = TPROF_COL("non_compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,
                        "communication and memory not under compute"),
    [G_LAST] = TPROF_COL("last_step_excluded", TPROF_COL_BOOL, TPROF_COMBINE_MAX, NULL,
                         "the last step's work was left out (as `temporal` does)"),
    [G_EVENTS] = TPROF_COL("events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "GPU events counted",
                           .flags = TPROF_COLF_NO_JSON),
    [G_HTA_SPAN] = TPROF_COL("hta_span_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,
                             "HTA's kernel span for the trace alone (`temporal`), null when HTA gives none"),
    [G_HTA_IDLE] = TPROF_COL("hta_idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "HTA's idle time"),
    [G_HTA_COMPUTE] = TPROF_COL("hta_compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "HTA's compute time"),
    [G_HTA_NON] = TPROF_COL("hta_non_compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,
                            "HTA's non-compute time"),
    [G_HTA_NOTE] = TPROF_COL("hta_differs", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL,
                             "where HTA's shares differ by more than 0.5 pp: why (text only), else empty",
                             .flags = TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV),
};
enum { K_NAME, K_CALLS, K_BYTES, K_BUSBW, K_MATCHED, K_NCOLS };
static const tprof_col_desc call_cols[K_NCOLS] = {
    [K_NAME] = TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the collective as recorded",
                         .flags = TPROF_COLF_KEY),
    [K_CALLS] = TPROF_COL("calls", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "recorded calls"),
    [K_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, NULL,
                          "message size of the calls that recorded it (null: none did)"),
    [K_BUSBW] = TPROF_COL("busbw_gbps", TPROF_COL_RATE, TPROF_COMBINE_DIST, NULL,
                          "bus bandwidth, GB/s (`comm`; null: unknown)"),
    [K_MATCHED] = TPROF_COL("matched", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "calls whose kernels were found",
                            .flags = TPROF_COLF_NO_JSON),
};
enum { Y_TYPE, Y_TIME, Y_EXPOSED, Y_NCOLS };
static const tprof_col_desc type_cols[Y_NCOLS] = {
    [Y_TYPE] = TPROF_COL("type", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "the collective type",
                         .flags = TPROF_COLF_KEY),
    [Y_TIME] = TPROF_COL("time_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "union of its kernels"),
    [Y_EXPOSED] = TPROF_COL("exposed_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                            "of it, the time no compute kernel ran (`comm`)"),
};
enum { C_COMM, C_OVERLAP, C_EXPOSED, C_SHARE, C_HTA_SHARE, C_NCOLS };
static const tprof_col_desc comm_cols[C_NCOLS] = {
    [C_COMM] = TPROF_COL("comm_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "union of communication kernels"),
    [C_OVERLAP] = TPROF_COL("overlap_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "of it, under compute"),
    [C_EXPOSED] = TPROF_COL("exposed_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "of it, not under compute"),
    [C_SHARE] = TPROF_COL("overlap", TPROF_COL_REAL, TPROF_COMBINE_DIST, NULL,
                          "overlap_ns / comm_ns (0 without communication)"),
    [C_HTA_SHARE] = TPROF_COL("hta_overlap", TPROF_COL_REAL, TPROF_COMBINE_DIST, NULL,
                              "the overlap as HTA computes it (`comm`), null without communication"),
};
static const tprof_table_desc calls_desc = { .name = "calls", .doc = "recorded collective calls, by kernel time",
                                             .cols = call_cols, .ncols = K_NCOLS };
static const tprof_table_desc types_desc = { .name = "types", .doc = "collective types, by time",
                                             .cols = type_cols, .ncols = Y_NCOLS };
static const tprof_table_desc *const comm_children[] = { &calls_desc, &types_desc };
enum { E_NUMBER, E_TS, E_DUR, E_PHASE0, E_NCOLS = E_PHASE0 + TPROF_PHASE_COUNT };
#define EACH_PHASE(p, name, what)                                                                                 \
    [E_PHASE0 + (p)] = TPROF_COL(name, TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,                              \
                                 "its CPU time " what " (as `steps` splits it; left out without phase markers)", \
                                 .flags = TPROF_COLF_OMIT_NULL)
static const tprof_col_desc each_cols[E_NCOLS] = {
    [E_NUMBER] = TPROF_COL("number", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "N of ProfilerStep#N",
                           .flags = TPROF_COLF_KEY),
    [E_TS] = TPROF_COL("ts_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_FIRST, NULL, "its start, ns since the trace's epoch"),
    [E_DUR] = TPROF_COL("dur_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "its CPU span"),
    EACH_PHASE(TPROF_PHASE_DATA, "data_ns", "loading data"),
    EACH_PHASE(TPROF_PHASE_FORWARD, "forward_ns", "in the forward pass"),
    EACH_PHASE(TPROF_PHASE_BACKWARD, "backward_ns", "in the backward pass"),
    EACH_PHASE(TPROF_PHASE_OPTIMIZER, "optimizer_ns", "in the optimizer"),
    EACH_PHASE(TPROF_PHASE_OTHER, "other_ns", "outside the phase markers"),
};
static const tprof_table_desc each_desc = { .name = "each", .doc = "every ProfilerStep, in time order (as `steps`)",
                                            .cols = each_cols, .ncols = E_NCOLS };
static const tprof_table_desc *const steps_children[] = { &each_desc };
static const tprof_table_desc steps_desc = { .name = "steps", .doc = "step time", .cols = steps_cols,
                                             .ncols = S_NCOLS, .children = steps_children, .nchildren = 1,
                                             .json_single = 1 };
static const tprof_table_desc phases_desc = { .name = "phases", .doc = "the steps' time by phase (null: no markers)",
                                              .cols = phase_cols, .ncols = P_NCOLS, .json_keyed = 1,
                                              .json_null_empty = 1 };
static const tprof_table_desc temporal_desc = { .name = "temporal", .doc = "GPU time, HTA's temporal breakdown",
                                                .cols = temporal_cols, .ncols = G_NCOLS, .json_single = 1 };
static const tprof_table_desc comm_desc = { .name = "communication", .doc = "communication and its overlap",
                                            .cols = comm_cols, .ncols = C_NCOLS, .children = comm_children,
                                            .nchildren = 2, .json_single = 1 };
enum { CH_STEPS, CH_PHASES, CH_TEMPORAL, CH_COMM };
static const tprof_table_desc *const trace_children[] = { &steps_desc, &phases_desc, &temporal_desc, &comm_desc };
static const tprof_table_desc traces_desc = { .name = "traces", .doc = "one row per trace, in the order given",
                                              .cols = trace_cols, .ncols = T_NCOLS, .children = trace_children,
                                              .nchildren = 4 };
static const tprof_table_desc empty_top = { .name = "" };
static const tprof_table_desc *const trace_tables[] = { &traces_desc };
const tprof_result_desc tprof_summary_trace_desc = {
    .name = "summary_trace", .version = 4, .top = &empty_top, .tables = trace_tables, .ntables = 1, .internal = 1,
    .doc = "What `summary` keeps of each trace besides its kernels, facts and findings: its row of the summary.",
};

/* Columns 0..N of row ROW of T: the integers V. */
static void set_row(tprof_rows *t, size_t row, const int64_t *v, size_t n)
{
    for (size_t c = 0; c < n; c++) tprof_rows_set_i(t, row, c, v[c]);
}

int tprof_summary_trace(const tprof_trace *t, const tprof_steps_result *s, const tprof_temporal_result *g,
                        const tprof_comm_result *cm, tprof_result **out)
{
    *out = NULL;
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    tprof_result *res = tprof_result_new(&tprof_summary_trace_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *rows = tprof_result_table(res, 0);
    long r = tprof_rows_add(rows);
    tprof_rows *st = r < 0 ? NULL : tprof_rows_child(rows, 0, CH_STEPS);
    tprof_rows *ph = r < 0 ? NULL : tprof_rows_child(rows, 0, CH_PHASES);
    tprof_rows *te = r < 0 ? NULL : tprof_rows_child(rows, 0, CH_TEMPORAL);
    tprof_rows *co = r < 0 ? NULL : tprof_rows_child(rows, 0, CH_COMM);
    int rc = st && ph && te && co && tprof_rows_add(st) == 0 && tprof_rows_add(te) == 0 && tprof_rows_add(co) == 0
                 ? 0
                 : TPROF_ENOMEM;
    if (!rc) rc = tprof_rows_set_s(rows, 0, T_FILE, m->path ? m->path : "");
    if (!rc && m->backend) rc = tprof_rows_set_s(rows, 0, T_BACKEND, m->backend);
    if (!rc && m->ndevices && m->devices[0].name) rc = tprof_rows_set_s(rows, 0, T_DEVICE, m->devices[0].name);
    if (rc) goto fail;
    tprof_rows_set_i(rows, 0, T_RANK, tprof_trace_rank(t));
    tprof_rows_set_i(rows, 0, T_EVENTS, (int64_t)m->nevents);
    tprof_rows_set_i(rows, 0, T_TRUNCATED, m->truncated != 0);
    tprof_rows_set_i(rows, 0, T_NSTEPS, (int64_t)m->nsteps);
    if (m->has_base_time) tprof_rows_set_i(rows, 0, T_BASE, m->base_time_ns);
    if (m->world_size > 0) tprof_rows_set_i(rows, 0, T_WORLD, m->world_size);
    set_row(st, 0, (const int64_t[]){ (int64_t)s->nsteps, s->mean_ns, s->p50_ns, s->min_ns, s->max_ns }, S_SPREAD);
    tprof_rows_set_d(st, 0, S_SPREAD, s->spread);
    tprof_rows *each = tprof_rows_child(st, 0, 0);
    if (!each) goto oom;
    for (size_t i = 0; i < s->nsteps; i++) {
        long k = tprof_rows_add(each);
        if (k < 0) goto oom;
        tprof_rows_set_i(each, (size_t)k, E_NUMBER, s->steps[i].number);
        tprof_rows_set_i(each, (size_t)k, E_TS, s->steps[i].ts);
        tprof_rows_set_i(each, (size_t)k, E_DUR, s->steps[i].dur);
        for (int p = 0; s->phases_found && p < TPROF_PHASE_COUNT; p++)
            tprof_rows_set_i(each, (size_t)k, E_PHASE0 + (size_t)p, s->steps[i].phase_cpu_ns[p]);
    }
    for (int p = 0; s->phases_found && p < TPROF_PHASE_COUNT; p++) {
        long k = tprof_rows_add(ph);
        if (k < 0 || tprof_rows_set_s(ph, (size_t)k, P_PHASE, tprof_phase_name((tprof_phase)p))) goto oom;
        tprof_rows_set_i(ph, (size_t)k, P_CPU, s->phase_cpu_ns[p]);
        tprof_rows_set_i(ph, (size_t)k, P_GPU, s->phase_gpu_ns[p]);
    }
    set_row(te, 0,
            (const int64_t[]){ g->span_ns, g->idle_ns, g->compute_ns, g->non_compute_ns, g->last_step_excluded != 0,
                               (int64_t)g->events },
            G_HTA_SPAN);
    if (g->hta.computed) {
        tprof_rows_set_i(te, 0, G_HTA_SPAN, g->hta.span_ns);
        tprof_rows_set_i(te, 0, G_HTA_IDLE, g->hta.idle_ns);
        tprof_rows_set_i(te, 0, G_HTA_COMPUTE, g->hta.compute_ns);
        tprof_rows_set_i(te, 0, G_HTA_NON, g->hta.non_compute_ns);
    }
    char why[400] = "";
    if (tprof_hta_differs(g)) tprof_hta_reasons(g, why, sizeof why);
    if (tprof_rows_set_s(te, 0, G_HTA_NOTE, why)) goto oom;
    set_row(co, 0, (const int64_t[]){ cm->comm_ns, cm->overlap_ns, cm->exposed_ns }, C_SHARE);
    tprof_rows_set_d(co, 0, C_SHARE, cm->overlap);
    if (cm->hta_overlap == cm->hta_overlap) tprof_rows_set_d(co, 0, C_HTA_SHARE, cm->hta_overlap);
    tprof_rows *calls = tprof_rows_child(co, 0, 0), *types = tprof_rows_child(co, 0, 1);
    if (!calls || !types) goto oom;
    for (size_t i = 0; i < cm->ncalls; i++) {
        const tprof_comm_call *x = &cm->calls[i];
        long k = tprof_rows_add(calls);
        if (k < 0 || tprof_rows_set_s(calls, (size_t)k, K_NAME, x->name)) goto oom;
        tprof_rows_set_i(calls, (size_t)k, K_CALLS, (int64_t)x->calls);
        if (x->sized) tprof_rows_set_i(calls, (size_t)k, K_BYTES, x->bytes); /* else null: not recorded */
        if (!isnan(x->busbw)) tprof_rows_set_d(calls, (size_t)k, K_BUSBW, x->busbw);
        tprof_rows_set_i(calls, (size_t)k, K_MATCHED, (int64_t)x->matched);
    }
    for (size_t i = 0; i < cm->ntypes; i++) {
        long k = tprof_rows_add(types);
        if (k < 0 || tprof_rows_set_s(types, (size_t)k, Y_TYPE, cm->types[i].type)) goto oom;
        tprof_rows_set_i(types, (size_t)k, Y_TIME, cm->types[i].time_ns);
        tprof_rows_set_i(types, (size_t)k, Y_EXPOSED, cm->types[i].exposed_ns);
    }
    *out = res;
    return 0;
oom:
    rc = TPROF_ENOMEM;
fail:
    tprof_result_free(res);
    return rc;
}

/* ---- the run's result ---- */

enum { TK_NAME, TK_CLASS, TK_COUNT, TK_TOTAL, TK_SHARE, TK_NCOLS };
static const tprof_col_desc top_kernel_cols[TK_NCOLS] = {
    [TK_NAME] = TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the kernel's name",
                          .flags = TPROF_COLF_KEY),
    [TK_CLASS] = TPROF_COL("class", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "its class", .flags = TPROF_COLF_KEY),
    [TK_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "GPU events, all traces"),
    [TK_TOTAL] = TPROF_COL("total_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "their durations summed",
                           .flags = TPROF_COLF_METRIC),
    [TK_SHARE] = TPROF_COL("share", TPROF_COL_RATIO, TPROF_COMBINE_PER_RANK, NULL,
                           "of all GPU event time of all traces"),
};
enum { RK_STRAGGLER, RK_SKEW_MAX, RK_SKEW_MEAN, RK_COMMON, RK_EXCESS, RK_SKEW_STEP, RK_COLL_MATCHED, RK_COLL_STRAGGLER,
       RK_COLL_TYPE, RK_COLL_LAST_SHARE, RK_COLL_COST_STEP, RK_COLL_CAUSE, RK_NCOLS };
static const tprof_col_desc ranks_cols[RK_NCOLS] = {
    [RK_STRAGGLER] = TPROF_COL("straggler", TPROF_COL_RANK, TPROF_COMBINE_FIRST, NULL,
                               "the straggler's rank (`ranks`), null when none"),
    [RK_SKEW_MAX] = TPROF_COL("skew_max_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                              "the largest step-time skew across ranks"),
    [RK_SKEW_MEAN] = TPROF_COL("skew_mean_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                               "its mean over the common steps"),
    [RK_COMMON] = TPROF_COL("common_steps", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "step numbers every rank has"),
    [RK_EXCESS] = TPROF_COL("straggler_excess", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                            "the straggler's compute over the others' median, - 1", .flags = TPROF_COLF_NO_JSON),
    [RK_SKEW_STEP] = TPROF_COL("skew_max_step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL,
                               "the step of the largest skew", .flags = TPROF_COLF_NO_JSON),
    [RK_COLL_MATCHED] = TPROF_COL("collectives_matched", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                                  "collectives matched across ranks (`collectives`)"),
    [RK_COLL_STRAGGLER] = TPROF_COL("collectives_straggler", TPROF_COL_RANK, TPROF_COMBINE_FIRST, NULL,
                                    "the rank whose late arrivals cost the others the most waiting (`collectives`: "
                                    "where collectives are matched, the straggler); null when nobody waited"),
    [RK_COLL_TYPE] = TPROF_COL("collectives_top", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                               "the collective the ranks waited in the most"),
    [RK_COLL_LAST_SHARE] = TPROF_COL("collectives_last_share", TPROF_COL_RATIO, TPROF_COMBINE_FIRST, NULL,
                                     "of the collectives with waits, the share the straggler arrived last in"),
    [RK_COLL_COST_STEP] = TPROF_COL("collectives_cost_per_step_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                                    "the others' waiting it caused, per common step"),
    [RK_COLL_CAUSE] = TPROF_COL("collectives_straggler_cause", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                                "what made it late: host, data or compute (`collectives`' straggler_cause)"),
};
static const tprof_table_desc top_kernels_desc = { .name = "top_kernels",
                                                   .doc = "kernels of all traces by total time (--top limits them)",
                                                   .cols = top_kernel_cols, .ncols = TK_NCOLS, .limited = 1 };
static const tprof_table_desc ranks_desc = { .name = "ranks", .doc = "with two traces or more (else null)",
                                             .cols = ranks_cols, .ncols = RK_NCOLS, .json_single = 1 };
static const tprof_table_desc advice_rows = { .name = "advice", .doc = "the findings of `advice`",
                                              .cols = tprof_finding_cols, .ncols = TPROF_FINDING_NCOLS };
enum { TO_OP, TO_COUNT, TO_DIRECT, TO_SHARE, TO_TOP_KERNEL, TO_TFLOPS, TO_TBPS, TO_INTENSITY, TO_DTYPE, TO_BOUND,
       TO_ROOFLINE, TO_NCOLS };
static const tprof_col_desc top_op_cols[TO_NCOLS] = {
    [TO_OP] = TPROF_COL("op", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the op's name (`ops`)",
                        .flags = TPROF_COLF_KEY),
    [TO_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "its launches, all traces"),
    [TO_DIRECT] = TPROF_COL("direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                            "its direct kernel time, all traces", .flags = TPROF_COLF_METRIC),
    [TO_SHARE] = TPROF_COL("share", TPROF_COL_RATIO, TPROF_COMBINE_PER_RANK, NULL,
                           "of all ops' direct time of all traces"),
    [TO_TOP_KERNEL] = TPROF_COL("top_kernel", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                                "the kernel it spent the most time in"),
    /* the performance model's columns, as `ops` gives them (null where no
     * instance of the op has a model) */
    [TO_TFLOPS] = TPROF_COL("tflops", TPROF_COL_RATE, TPROF_COMBINE_PER_RANK, "TFLOP/s",
                            "achieved over its modelled instances' kernel time (`ops`)", .flags = TPROF_COLF_OMIT_NULL),
    [TO_TBPS] = TPROF_COL("tbps", TPROF_COL_RATE, TPROF_COMBINE_PER_RANK, "TB/s", "bytes moved per second (`ops`)",
                          .flags = TPROF_COLF_OMIT_NULL),
    [TO_INTENSITY] = TPROF_COL("intensity", TPROF_COL_REAL, TPROF_COMBINE_PER_RANK, NULL, "FLOPs per byte (`ops`)",
                               .flags = TPROF_COLF_OMIT_NULL),
    [TO_DTYPE] = TPROF_COL("dtype", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the dtype whose peak applies (`ops`)",
                           .flags = TPROF_COLF_OMIT_NULL),
    [TO_BOUND] = TPROF_COL("bound", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "compute or memory (`ops`)",
                           .flags = TPROF_COLF_OMIT_NULL),
    [TO_ROOFLINE] = TPROF_COL("roofline", TPROF_COL_RATIO, TPROF_COMBINE_PER_RANK, NULL,
                              "achieved / the roofline at its intensity (`ops`)", .flags = TPROF_COLF_OMIT_NULL),
};
/* The nn.Modules of all traces (`ops --by module`, the whole path). */
enum { TM_MODULE, TM_COUNT, TM_DIRECT, TM_SHARE, TM_FORWARD, TM_BACKWARD, TM_RECOMPUTE, TM_TOP_KERNEL, TM_NCOLS };
static const tprof_col_desc top_module_cols[TM_NCOLS] = {
    [TM_MODULE] = TPROF_COL("module", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                            "the nn.Module class path, outermost first (`ops --by module`)", .flags = TPROF_COLF_KEY),
    [TM_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "launches under it, all traces"),
    [TM_DIRECT] = TPROF_COL("direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                            "their direct kernel time, all traces (backward ops counted for their forward op's module)",
                            .flags = TPROF_COLF_METRIC),
    [TM_SHARE] = TPROF_COL("share", TPROF_COL_RATIO, TPROF_COMBINE_PER_RANK, NULL,
                           "of all modules' direct time of all traces"),
    [TM_FORWARD] = TPROF_COL("forward_direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                             "the part outside backward ops"),
    [TM_BACKWARD] = TPROF_COL("backward_direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                              "the part in backward ops"),
    [TM_RECOMPUTE] = TPROF_COL("recompute_direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                               "the module's forward run again in the backward (activation checkpointing)"),
    [TM_TOP_KERNEL] = TPROF_COL("top_kernel", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                                "the kernel it spent the most time in"),
};
static const tprof_table_desc top_modules_desc = {
    .name = "top_modules", .doc = "nn.Modules of all traces by direct kernel time (--top limits them)",
    .cols = top_module_cols, .ncols = TM_NCOLS, .limited = 1 };

/* The roofline the ops are placed under (`ops`' device and peaks). */
static const tprof_col_desc device_cols[] = {
    TPROF_COL("device", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the device of the roofline (`ops`)"),
    TPROF_COL("peak_source", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "datasheet, or the peaks given"),
    TPROF_COL("peak_tbps", TPROF_COL_RATE, TPROF_COMBINE_FIRST, "TB/s", "memory bandwidth"),
    TPROF_COL("peak_tflops_fp32", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL, "dense FP32 TFLOP/s"),
    TPROF_COL("peak_tflops_tf32", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL, "dense TF32 TFLOP/s"),
    TPROF_COL("peak_tflops_bf16", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL, "dense BF16 TFLOP/s"),
    TPROF_COL("peak_tflops_fp16", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL, "dense FP16 TFLOP/s"),
    TPROF_COL("peak_tflops_fp8", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL, "dense FP8 TFLOP/s"),
};
enum { DV_NCOLS = sizeof device_cols / sizeof *device_cols };
static const tprof_table_desc device_desc = { .name = "roofline_device",
                                              .doc = "the device and peaks of the top ops' roofline (null when the "
                                                     "device is not known)",
                                              .cols = device_cols, .ncols = DV_NCOLS, .json_single = 1 };
static const tprof_table_desc top_ops_desc = { .name = "top_ops",
                                               .doc = "ops of all traces by direct kernel time (--top limits them)",
                                               .cols = top_op_cols, .ncols = TO_NCOLS, .limited = 1 };
/* The critical path over the sampled steps of every trace (`critical-path`'s top row, summed). */
static const char *const path_col_names[] = { "windows",     "span_ns",       "path_ns",    "path_share",
                                              "cpu_op_ns",   "runtime_ns",    "launch_ns",  "kernel_gap_ns",
                                              "compute_ns",  "memory_ns",     "comm_ns",    "sync_edges" };
enum { CP_NCOLS = sizeof path_col_names / sizeof *path_col_names };
static const tprof_col_desc path_cols[CP_NCOLS] = {
    TPROF_COL("windows", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
              "steps analysed, all traces: up to 4 a trace, evenly spaced, the first (warm-up) left out from 3 on"),
    TPROF_COL("span_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "those steps' lengths, summed"),
    TPROF_COL("path_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "their critical paths' lengths, summed"),
    TPROF_COL("path_share", TPROF_COL_RATIO, TPROF_COMBINE_FIRST, NULL, "path / span"),
    TPROF_COL("cpu_op_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "host time in ops on the paths"),
    TPROF_COL("runtime_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "runtime and driver calls on the paths"),
    TPROF_COL("launch_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "launch delays on the paths"),
    TPROF_COL("kernel_gap_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "gaps between kernels on the paths"),
    TPROF_COL("compute_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "GPU kernels on the paths"),
    TPROF_COL("memory_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "memcpy and memset on the paths"),
    TPROF_COL("comm_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
              "communication kernels on the paths: exposed communication"),
    TPROF_COL("sync_edges", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "where the paths waited on the GPU"),
};
static const tprof_table_desc path_desc = { .name = "critical_path",
                                            .doc = "the critical path of sampled steps (`critical-path`; null without "
                                                   "steps or host events)",
                                            .cols = path_cols, .ncols = CP_NCOLS, .json_single = 1 };
static const tprof_table_desc *const summary_tables[] = { &traces_desc,   &top_kernels_desc,
                                                          &ranks_desc,    &advice_rows,
                                                          &top_ops_desc,  &path_desc,
                                                          &device_desc,   &tprof_coll_groups_table,
                                                          &tprof_coll_waits_table, &top_modules_desc };
enum { SUM_DEVICE = 6, SUM_COLL_GROUPS, SUM_COLL_WAITS, SUM_MODULES };
const tprof_result_desc tprof_summary_desc = { .name = "summary", .version = 7, .top = &empty_top,
                                               .tables = summary_tables, .ntables = 10, .whole_run = 1, .csv_tables = 1 };

/* Cell NAME of row ROW of SRC into column COL of row DR of DST, as its kind
 * says (absent or null: left null). */
static int copy_cell(tprof_rows *dst, size_t dr, size_t col, const tprof_rows *src, size_t row, const char *name)
{
    const tprof_cell *v = tprof_rows_at(src, row, name);
    if (!v || v->null) return 0;
    switch (tprof_rows_desc(dst)->cols[col].kind) {
    case TPROF_COL_STRING:
    case TPROF_COL_ENUM: return tprof_rows_set_s(dst, dr, col, v->v.s);
    case TPROF_COL_RATIO:
    case TPROF_COL_RATE:
    case TPROF_COL_REAL:
    case TPROF_COL_MEAN_NS: tprof_rows_set_d(dst, dr, col, v->v.d); return 0;
    default: tprof_rows_set_i(dst, dr, col, v->v.i); return 0;
    }
}

/* The paths of every trace, summed, into the critical_path table. */
static int path_facts(const tprof_summary_part *parts, size_t n, const int64_t *ranks, tprof_rows *out)
{
    const tprof_result **paths = malloc((n ? n : 1) * sizeof *paths);
    if (!paths) return TPROF_ENOMEM;
    size_t np = 0;
    for (size_t i = 0; i < n; i++)
        if (parts[i].path) paths[np++] = parts[i].path;
    tprof_result *all = NULL;
    int rc = np == n && n ? tprof_critical_path_combine(paths, ranks, n, &all) : 0;
    free(paths);
    if (rc || !all) return rc;
    const tprof_rows *top = tprof_result_top_c(all);
    if (tprof_rows_int(top, 0, "path_ns") > 0 && tprof_rows_add(out) == 0)
        for (size_t c = 0; c < CP_NCOLS; c++) {
            const tprof_cell *v = tprof_rows_at(top, 0, path_col_names[c]);
            if (!v || v->null) continue;
            if (path_cols[c].kind == TPROF_COL_RATIO) tprof_rows_set_d(out, 0, c, v->v.d);
            else tprof_rows_set_i(out, 0, c, v->v.i);
        }
    tprof_result_free(all);
    return 0;
}

static int64_t top_i(const tprof_rows *t, size_t row, size_t col) { return tprof_rows_cell(t, row, col)->v.i; }

/* The collectives' line of the ranks' row RR, from `collectives`' result C. */
static int collectives_facts(const tprof_result *c, tprof_rows *rr)
{
    const tprof_rows *top = tprof_result_top_c(c), *g = tprof_result_table_c(c, 0);
    tprof_rows_set_i(rr, 0, RK_COLL_MATCHED, tprof_rows_int(top, 0, "matched"));
    size_t most = 0;
    for (size_t i = 1; i < tprof_rows_count(g); i++)
        if (tprof_rows_int(g, i, "wait_ns") > tprof_rows_int(g, most, "wait_ns")) most = i;
    if (tprof_rows_count(g) && tprof_rows_int(g, most, "wait_ns") > 0 &&
        tprof_rows_set_s(rr, 0, RK_COLL_TYPE, tprof_rows_str(g, most, "type")))
        return TPROF_ENOMEM;
    if (tprof_rows_at(top, 0, "straggler")->null) return 0;
    int64_t steps = tprof_rows_int(top, 0, "common_steps");
    tprof_rows_set_i(rr, 0, RK_COLL_STRAGGLER, tprof_rows_int(top, 0, "straggler"));
    tprof_rows_set_d(rr, 0, RK_COLL_LAST_SHARE, tprof_rows_real(top, 0, "straggler_last_share"));
    tprof_rows_set_i(rr, 0, RK_COLL_COST_STEP, tprof_rows_int(top, 0, "straggler_cost_ns") / (steps > 0 ? steps : 1));
    const tprof_cell *cause = tprof_rows_at(top, 0, "straggler_cause");
    return cause->null ? 0 : tprof_rows_set_s(rr, 0, RK_COLL_CAUSE, cause->v.s);
}

int tprof_summary_reduce_combined(const tprof_summary_part *parts, size_t n, const tprof_summary_combined *all,
                                  tprof_result **out)
{
    *out = NULL;
    const tprof_result **facts = malloc((n ? n : 1) * sizeof *facts), **findings = malloc((n ? n : 1) * sizeof *findings);
    const tprof_result **colls = malloc((n ? n : 1) * sizeof *colls);
    int64_t *ranks = malloc((n ? n : 1) * sizeof *ranks);
    tprof_ranks_result *rk = NULL;
    tprof_result *advice = NULL, *coll = NULL, *res = tprof_result_new(&tprof_summary_desc);
    const tprof_result *allk = all->kernels, *allops = all->ops, *allmods = all->modules;
    int rc = facts && findings && colls && ranks && res ? 0 : TPROF_ENOMEM;
    size_t ncolls = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        facts[i] = parts[i].facts;
        findings[i] = parts[i].findings;
        if (parts[i].coll) colls[ncolls++] = parts[i].coll;
    }
    if (!rc && n >= 2 && ncolls == n) rc = tprof_collectives_reduce(colls, n, &coll);
    if (!rc) rc = tprof_ranks_reduce(facts, n, &rk);
    if (!rc && coll) tprof_ranks_add_collectives(rk, coll); /* the late-rank rule */
    if (!rc) rc = tprof_advise_reduce(findings, rk, &advice);
    for (size_t i = 0; !rc && i < n; i++) ranks[i] = rk->ranks[i].rank;
    if (!rc) rc = path_facts(parts, n, ranks, tprof_result_table(res, 5));
    /* the traces' rows, labelled as every command labels them */
    tprof_rows *traces = rc ? NULL : tprof_result_table(res, 0);
    for (size_t i = 0; !rc && i < n; i++) {
        rc = tprof_rows_append(traces, tprof_result_table_c(parts[i].trace, 0));
        char label[64];
        int64_t r = top_i(tprof_result_table_c(parts[i].trace, 0), 0, T_RANK);
        tprof_fmt_trace_label(label, sizeof label, r, i);
        if (!rc) rc = tprof_rows_set_s(traces, i, T_LABEL, label);
    }
    /* the kernels of all traces: name, class, count, total, share */
    const tprof_rows *krows = allk ? tprof_result_table_c(allk, 1) : NULL;
    tprof_rows *tk = rc ? NULL : tprof_result_table(res, 1);
    const tprof_table_desc *kd = krows ? tprof_rows_desc(krows) : NULL;
    static const char *const from[TK_NCOLS] = { "key", "class", "count", "total_ns", "share" };
    for (size_t i = 0; !rc && i < tprof_rows_count(krows); i++) {
        long k = tprof_rows_add(tk);
        if (k < 0) rc = TPROF_ENOMEM;
        for (size_t c = 0; !rc && c < TK_NCOLS; c++) {
            const tprof_cell *v = tprof_rows_cell(krows, i, (size_t)tprof_table_col(kd, from[c]));
            if (v->null) continue;
            if (c <= TK_CLASS) rc = tprof_rows_set_s(tk, (size_t)k, c, v->v.s);
            else if (c == TK_SHARE) tprof_rows_set_d(tk, (size_t)k, c, v->v.d);
            else tprof_rows_set_i(tk, (size_t)k, c, v->v.i);
        }
    }
    if (!rc && n >= 2) {
        tprof_rows *rr = tprof_result_table(res, 2);
        if (tprof_rows_add(rr) != 0) rc = TPROF_ENOMEM;
        else {
            if (rk->straggler >= 0) tprof_rows_set_i(rr, 0, RK_STRAGGLER, rk->ranks[rk->straggler].rank);
            tprof_rows_set_i(rr, 0, RK_SKEW_MAX, rk->skew_max_ns);
            tprof_rows_set_i(rr, 0, RK_SKEW_MEAN, rk->skew_mean_ns);
            tprof_rows_set_i(rr, 0, RK_COMMON, (int64_t)rk->common_steps);
            tprof_rows_set_d(rr, 0, RK_EXCESS, rk->straggler_excess);
            tprof_rows_set_i(rr, 0, RK_SKEW_STEP, rk->skew_max_step);
            if (coll) rc = collectives_facts(coll, rr);
        }
    }
    if (!rc) rc = tprof_rows_append(tprof_result_table(res, 3), tprof_result_table_c(advice, 0));
    /* the ops of all traces: name, launches, direct time, share, top kernel */
    const tprof_rows *orows = allops ? tprof_result_table_c(allops, 0) : NULL;
    tprof_rows *to = rc ? NULL : tprof_result_table(res, 4);
    for (size_t i = 0; !rc && i < tprof_rows_count(orows); i++) {
        long k = tprof_rows_add(to);
        if (k < 0) rc = TPROF_ENOMEM;
        for (size_t c = 0; !rc && c < TO_NCOLS; c++) rc = copy_cell(to, (size_t)k, c, orows, i, top_op_cols[c].name);
    }
    /* the nn.Modules of all traces, likewise */
    const tprof_rows *mrows = allmods ? tprof_result_table_c(allmods, 0) : NULL;
    tprof_rows *tm = rc ? NULL : tprof_result_table(res, SUM_MODULES);
    for (size_t i = 0; !rc && i < tprof_rows_count(mrows); i++) {
        long k = tprof_rows_add(tm);
        if (k < 0) rc = TPROF_ENOMEM;
        for (size_t c = 0; !rc && c < TM_NCOLS; c++) rc = copy_cell(tm, (size_t)k, c, mrows, i, top_module_cols[c].name);
    }
    /* the device of their roofline, when `ops` knows it */
    const tprof_rows *otop = allops ? tprof_result_top_c(allops) : NULL;
    if (!rc && otop && tprof_rows_count(otop) && tprof_rows_at(otop, 0, "device") &&
        !tprof_rows_at(otop, 0, "device")->null) {
        tprof_rows *dv = tprof_result_table(res, SUM_DEVICE);
        if (tprof_rows_add(dv) != 0) rc = TPROF_ENOMEM;
        for (size_t c = 0; !rc && c < DV_NCOLS; c++) rc = copy_cell(dv, 0, c, otop, 0, device_cols[c].name);
    }
    /* the collectives matched across the ranks, and each rank's waits */
    if (!rc && coll) rc = tprof_rows_append(tprof_result_table(res, SUM_COLL_GROUPS), tprof_result_table_c(coll, 0));
    if (!rc && coll) rc = tprof_rows_append(tprof_result_table(res, SUM_COLL_WAITS), tprof_result_table_c(coll, 1));
    free(colls);
    tprof_result_free(coll);
    free(facts);
    free(findings);
    free(ranks);
    tprof_ranks_free(rk);
    tprof_result_free(advice);
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

int tprof_summary_reduce(const tprof_summary_part *parts, size_t n, tprof_result **out)
{
    *out = NULL;
    const tprof_result **kernels = malloc((n ? n : 1) * sizeof *kernels);
    const tprof_result **ops = malloc((n ? n : 1) * sizeof *ops), **modules = malloc((n ? n : 1) * sizeof *modules);
    tprof_result *allk = NULL, *allops = NULL, *allmods = NULL;
    int rc = kernels && ops && modules ? 0 : TPROF_ENOMEM;
    size_t nops = 0, nmods = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        kernels[i] = parts[i].kernels;
        if (parts[i].ops) ops[nops++] = parts[i].ops;
        if (parts[i].modules) modules[nmods++] = parts[i].modules;
    }
    /* the parts come in rank order: combined in it */
    if (!rc && n) rc = tprof_kernels_tables_combine(kernels, NULL, n, &allk);
    if (!rc && nops == n && n) rc = tprof_ops_combine(ops, NULL, n, &allops);
    if (!rc && nmods == n && n) rc = tprof_ops_combine(modules, NULL, n, &allmods);
    const tprof_summary_combined all = { allk, allops, allmods };
    if (!rc) rc = tprof_summary_reduce_combined(parts, n, &all, out);
    free(kernels);
    free(ops);
    free(modules);
    tprof_result_free(allk);
    tprof_result_free(allops);
    tprof_result_free(allmods);
    return rc;
}
