/* Ascend's task columns per kernel (kernels' ascend_tasks table): of an
 * Ascend kernel table's tasks in the window, per name, the op type, the
 * block dim, the wait before each task and the AI Core pipeline ratios
 * (aic_mac_ratio: the cube unit busy, aiv_vec_ratio: the vector unit,
 * *_mte2_ratio: loads from global memory) averaged over the tasks that
 * record them: what says whether a kernel is compute- or memory-bound on
 * the NPU (msprof-analyze's operator bound check reads the same columns).
 * Definitions: docs/METRICS.md, "Ascend kernel tables". */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "launch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/i64map.h"

enum { A_KEY, A_TYPE, A_COUNT, A_BLOCK, A_WAIT, A_WAIT_MEAN, A_AIC_MAC = A_WAIT_MEAN + 1 };
/* each ratio: its mean (derived), its sum and how many tasks record it (hidden) */
#define RATIO_COL(k) (A_AIC_MAC + (k))
#define SUM_COL(k) (A_AIC_MAC + TPROF_TASK_RATIOS + 2 * (k))
#define N_COL(k) (SUM_COL(k) + 1)
#define A_NCOLS (A_AIC_MAC + 3 * TPROF_TASK_RATIOS)
#define HIDDEN (TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV | TPROF_COLF_NO_TABLE)
#define RATIO(K, NAME, HEAD, DOC, SUM, N)                                                                            \
    [RATIO_COL(K)] = TPROF_COL(NAME, TPROF_COL_REAL, TPROF_COMBINE_DERIVED, HEAD, DOC " (mean over the tasks that " \
                               "record it)", .num = SUM, .den = N, .decimals = 3),                                   \
    [SUM_COL(K)] = TPROF_COL(SUM, TPROF_COL_REAL, TPROF_COMBINE_SUM, NULL, "its sum", .flags = HIDDEN),              \
    [N_COL(K)] = TPROF_COL(N, TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "the tasks recording it", .flags = HIDDEN)

static const tprof_col_desc cols[A_NCOLS] = {
    [A_KEY] = TPROF_COL("kernel", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "kernel", "the task's name",
                        .flags = TPROF_COLF_KEY | TPROF_COLF_NAMES, .width = 60),
    [A_TYPE] = TPROF_COL("type", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "type", "its op type (Type), the first met"),
    [A_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "count", "tasks", .flags = TPROF_COLF_METRIC),
    [A_BLOCK] = TPROF_COL("block_dim", TPROF_COL_INT, TPROF_COMBINE_MAX, "block dim",
                          "the largest Block Dim (the cores it ran on); null when not recorded"),
    [A_WAIT] = TPROF_COL("wait_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "wait",
                         "Wait Time(us) summed: the stream's idle time before each task"),
    [A_WAIT_MEAN] = TPROF_COL("wait_mean_ns", TPROF_COL_MEAN_NS, TPROF_COMBINE_DERIVED, "mean wait",
                              "wait_ns / count", .num = "wait_ns", .den = "count"),
    RATIO(TPROF_TASK_AIC_MAC, "aic_mac_ratio", "cube", "aic_mac_ratio: the cube (matrix) unit busy", "aic_mac_sum",
          "aic_mac_n"),
    RATIO(TPROF_TASK_AIC_MTE2, "aic_mte2_ratio", "aic mte2", "aic_mte2_ratio: the AI Core loading from global memory",
          "aic_mte2_sum", "aic_mte2_n"),
    RATIO(TPROF_TASK_AIV_VEC, "aiv_vec_ratio", "vector", "aiv_vec_ratio: the vector unit busy", "aiv_vec_sum",
          "aiv_vec_n"),
    RATIO(TPROF_TASK_AIV_MTE2, "aiv_mte2_ratio", "aiv mte2", "aiv_mte2_ratio: the vector core loading from global "
          "memory", "aiv_mte2_sum", "aiv_mte2_n"),
};
const tprof_table_desc tprof_ascend_tasks_desc = {
    .name = "ascend_tasks", .title = "Ascend task columns per kernel (kernel_details.csv)",
    .doc = "Ascend: per kernel of a kernel table, its op type, block dim, waits and AI Core pipeline ratios; by "
           "count, most first (--top limits them)",
    .cols = cols, .ncols = A_NCOLS, .json_omit_empty = 1, .limited = 1,
};

int tprof_ascend_task_rows(const tprof_trace *t, const tprof_kernels_opts *opts, tprof_rows *rows)
{
    size_t n = tprof_trace_ntask_infos(t);
    const tprof_task_info *info = tprof_trace_task_infos(t);
    const tprof_event *ev = tprof_trace_events(t);
    if (!n || (opts && opts->by != TPROF_BY_NAME)) return 0;
    /* the window kernels applies: the steps A..B */
    tprof_step *sel = NULL;
    size_t nsel = 0;
    const int64_t *launched = NULL;
    int64_t first, last;
    if (opts && (opts->step_first >= 0 || opts->step_last >= 0)) {
        int src = tprof_steps_select(tprof_trace_meta_get(t), opts->step_first, opts->step_last, &sel, &nsel, &first,
                                     &last);
        if (src) return src == TPROF_ENOMEM ? src : 0; /* kernels says the window matched nothing */
        if (!(launched = tprof_launch_times(t))) {
            free(sel);
            return TPROF_ENOMEM;
        }
    }
    tprof_i64map rowof;
    if (tprof_i64map_init(&rowof, 64)) {
        free(sel);
        return TPROF_ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const tprof_task_info *x = &info[i];
        const tprof_event *e = &ev[x->event];
        if (sel && tprof_step_at(sel, nsel, launched[x->event]) < 0) continue;
        int64_t have;
        long k;
        if (tprof_i64map_get(&rowof, e->name, &have)) k = (long)have;
        else {
            k = tprof_rows_add(rows);
            if (k < 0 || tprof_rows_set_s(rows, (size_t)k, A_KEY, tprof_trace_str(t, e->name)) ||
                (x->type && tprof_rows_set_s(rows, (size_t)k, A_TYPE, tprof_trace_str(t, x->type))) ||
                tprof_i64map_put(&rowof, e->name, k)) {
                rc = TPROF_ENOMEM;
                break;
            }
            tprof_rows_set_i(rows, (size_t)k, A_COUNT, 0);
            tprof_rows_set_i(rows, (size_t)k, A_WAIT, 0);
            for (int r = 0; r < TPROF_TASK_RATIOS; r++) {
                tprof_rows_set_d(rows, (size_t)k, SUM_COL(r), 0);
                tprof_rows_set_i(rows, (size_t)k, N_COL(r), 0);
            }
        }
        size_t row = (size_t)k;
        tprof_rows_set_i(rows, row, A_COUNT, tprof_rows_cell(rows, row, A_COUNT)->v.i + 1);
        const tprof_cell *b = tprof_rows_cell(rows, row, A_BLOCK);
        if (x->block_dim >= 0 && (b->null || x->block_dim > b->v.i)) tprof_rows_set_i(rows, row, A_BLOCK, x->block_dim);
        if (x->wait_ns > 0)
            tprof_rows_set_i(rows, row, A_WAIT, tprof_sat_add(tprof_rows_cell(rows, row, A_WAIT)->v.i, x->wait_ns));
        for (int r = 0; r < TPROF_TASK_RATIOS; r++)
            if (isfinite(x->ratio[r])) {
                tprof_rows_set_d(rows, row, SUM_COL(r), tprof_rows_cell(rows, row, SUM_COL(r))->v.d + x->ratio[r]);
                tprof_rows_set_i(rows, row, N_COL(r), tprof_rows_cell(rows, row, N_COL(r))->v.i + 1);
            }
    }
    tprof_i64map_free(&rowof);
    free(sel);
    if (rc) return rc;
    static const int by[] = { A_COUNT, A_KEY }, desc[] = { 1, 0 };
    rc = tprof_rows_sort(rows, by, desc, 2);
    if (!rc) tprof_rows_derive(rows);
    return rc;
}
