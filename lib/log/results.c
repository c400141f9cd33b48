/* A training log as result tables (`trainprof log`): line counts by format,
 * a summary row per metric, the anomalies, and with --series every point
 * in long form (step, metric, value), which JSON writes one object per step. */
#include "trainprof/error.h"
#include "trainprof/log.h"

#include <stdlib.h>

enum { L_LINES, L_SKIPPED, L_NCOLS };
static const tprof_col_desc log_top_cols[L_NCOLS] = {
    [L_LINES] = TPROF_COL("lines", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "records: lines and \\r segments with text"),
    [L_SKIPPED] = TPROF_COL("lines_without_metric", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                            "records without a metric"),
};
enum { B_FORMAT, B_LINES, B_NCOLS };
static const tprof_col_desc by_format_cols[B_NCOLS] = {
    [B_FORMAT] = TPROF_COL("format", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "the line format",
                           .flags = TPROF_COLF_KEY),
    [B_LINES] = TPROF_COL("lines", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "records with a metric in it"),
};
#define NUMBER (TPROF_COLF_SHORTEST)
enum { M_NAME, M_COUNT, M_NONFINITE, M_MEAN, M_P50, M_MIN, M_MAX, M_WARMUP, M_STEADY, M_NCOLS };
static const tprof_col_desc metric_cols[M_NCOLS] = {
    [M_NAME] = TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "metric", "as the log names it",
                         .flags = TPROF_COLF_KEY, .csv_name = "metric", .width = 48),
    [M_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "points", "finite values"),
    [M_NONFINITE] = TPROF_COL("nonfinite", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "NaN and inf values"),
    [M_MEAN] = TPROF_COL("mean", TPROF_COL_REAL, TPROF_COMBINE_DIST, NULL, "of the finite values", .flags = NUMBER),
    [M_P50] = TPROF_COL("p50", TPROF_COL_REAL, TPROF_COMBINE_DIST, NULL, "their median", .flags = NUMBER),
    [M_MIN] = TPROF_COL("min", TPROF_COL_REAL, TPROF_COMBINE_MIN, NULL, "the smallest", .flags = NUMBER),
    [M_MAX] = TPROF_COL("max", TPROF_COL_REAL, TPROF_COMBINE_MAX, NULL, "the largest", .flags = NUMBER),
    [M_WARMUP] = TPROF_COL("warmup", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                           "leading points left out of steady_mean"),
    [M_STEADY] = TPROF_COL("steady_mean", TPROF_COL_REAL, TPROF_COMBINE_DIST, NULL,
                           "the mean after the warm-up (null: under 2 points)", .flags = NUMBER),
};
enum { A_KIND, A_METRIC, A_STEP, A_VALUE, A_REFERENCE, A_NCOLS };
static const tprof_col_desc anomaly_cols[A_NCOLS] = {
    [A_KIND] = TPROF_COL("kind", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL,
                         "nonfinite, loss_spike, step_time_spike, mfu_drop, throughput_drop"),
    [A_METRIC] = TPROF_COL("metric", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the metric"),
    [A_STEP] = TPROF_COL("step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "its step"),
    [A_VALUE] = TPROF_COL("value", TPROF_COL_REAL, TPROF_COMBINE_PER_RANK, NULL,
                          "the value (\"nan\", \"inf\", \"-inf\" when not finite)", .flags = TPROF_COLF_NAN_NAMED),
    [A_REFERENCE] = TPROF_COL("reference", TPROF_COL_REAL, TPROF_COMBINE_PER_RANK, NULL,
                              "the rolling median it was compared with (null for nonfinite)"),
};
enum { S_STEP, S_METRIC, S_VALUE, S_NCOLS };
static const tprof_col_desc series_cols[S_NCOLS] = {
    [S_STEP] = TPROF_COL("step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the step", .flags = TPROF_COLF_KEY),
    [S_METRIC] = TPROF_COL("metric", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the metric",
                           .flags = TPROF_COLF_KEY),
    [S_VALUE] = TPROF_COL("value", TPROF_COL_REAL, TPROF_COMBINE_PER_RANK, NULL, "its value at the step",
                          .flags = NUMBER),
};
static const tprof_table_desc by_format = { .name = "lines_by_format", .doc = "records with a metric, per format",
                                            .cols = by_format_cols, .ncols = B_NCOLS, .json_keyed = 1,
                                            .json_keyed_value = 1 };
static const tprof_table_desc metrics = { .name = "metrics", .doc = "one row per metric, in the order first seen",
                                          .cols = metric_cols, .ncols = M_NCOLS };
static const tprof_table_desc anomalies = { .name = "anomalies", .doc = "docs/METRICS.md lists the rules",
                                            .cols = anomaly_cols, .ncols = A_NCOLS };
static const tprof_table_desc series = { .name = "series", .doc = "every point, by step then metric",
                                         .cols = series_cols, .ncols = S_NCOLS, .json_wide = 1 };
static const tprof_table_desc log_top = { .name = "", .cols = log_top_cols, .ncols = L_NCOLS };
static const tprof_table_desc *const log_tables[] = { &by_format, &metrics, &anomalies, &series };
const tprof_result_desc tprof_log_desc[2] = {
    { .name = "log", .version = 1, .top = &log_top, .tables = log_tables, .ntables = 3, .csv_table = 2,
      .no_label = 1 },
    { .name = "log_series", .version = 1, .top = &log_top, .tables = log_tables, .ntables = 4, .csv_table = 4,
      .no_label = 1, .doc = "`trainprof log --series`: `log` and every point." },
};

int tprof_log_tables(const tprof_log *lg, int with_series, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_log_desc[with_series != 0]);
    if (!res) return TPROF_ENOMEM;
    const tprof_log_counts *c = tprof_log_get_counts(lg);
    tprof_rows *top = tprof_result_top(res);
    tprof_rows_set_i(top, 0, L_LINES, (int64_t)c->lines);
    tprof_rows_set_i(top, 0, L_SKIPPED, (int64_t)c->skipped);
    int rc = 0;
    tprof_rows *bf = tprof_result_table(res, 0), *mt = tprof_result_table(res, 1), *an = tprof_result_table(res, 2);
    for (int f = 1; !rc && f < TPROF_LOG_NFORMATS; f++) {
        long i = tprof_rows_add(bf);
        if (i < 0 || tprof_rows_set_s(bf, (size_t)i, B_FORMAT, tprof_log_format_name(f))) rc = TPROF_ENOMEM;
        else tprof_rows_set_i(bf, (size_t)i, B_LINES, (int64_t)c->parsed[f]);
    }
    size_t nm = tprof_log_nmetrics(lg);
    for (size_t m = 0; !rc && m < nm; m++) {
        tprof_log_stats s;
        tprof_log_stats_of(lg, m, &s);
        long i = tprof_rows_add(mt);
        if (i < 0 || tprof_rows_set_s(mt, (size_t)i, M_NAME, tprof_log_metric(lg, m))) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(mt, (size_t)i, M_COUNT, (int64_t)s.count);
        tprof_rows_set_i(mt, (size_t)i, M_NONFINITE, (int64_t)s.nonfinite);
        tprof_rows_set_i(mt, (size_t)i, M_WARMUP, (int64_t)s.warmup);
        const double v[] = { [M_MEAN] = s.mean, [M_P50] = s.p50, [M_MIN] = s.min, [M_MAX] = s.max };
        for (size_t k = M_MEAN; k <= M_MAX; k++) tprof_rows_set_d(mt, (size_t)i, k, v[k]);
        tprof_rows_set_d(mt, (size_t)i, M_STEADY, s.steady_mean);
    }
    const tprof_log_anomaly *a;
    size_t na = tprof_log_anomalies(lg, &a);
    for (size_t k = 0; !rc && k < na; k++) {
        long i = tprof_rows_add(an);
        if (i < 0 || tprof_rows_set_s(an, (size_t)i, A_KIND, tprof_log_anomaly_name(a[k].kind)) ||
            tprof_rows_set_s(an, (size_t)i, A_METRIC, tprof_log_metric(lg, a[k].metric))) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(an, (size_t)i, A_STEP, a[k].step);
        tprof_rows_set_d(an, (size_t)i, A_VALUE, a[k].value);
        tprof_rows_set_d(an, (size_t)i, A_REFERENCE, a[k].reference);
    }
    if (!rc && with_series) { /* merge the metrics' ascending steps: by step, then metric order */
        tprof_rows *se = tprof_result_table(res, 3);
        size_t *pos = calloc(nm + 1, sizeof *pos);
        if (!pos) rc = TPROF_ENOMEM;
        for (;;) {
            int found = 0;
            int64_t step = 0;
            for (size_t m = 0; !rc && m < nm; m++) {
                const int64_t *st;
                const double *vals;
                size_t n = tprof_log_points(lg, m, &st, &vals);
                if (pos[m] < n && (!found || st[pos[m]] < step)) step = st[pos[m]], found = 1;
            }
            if (rc || !found) break;
            for (size_t m = 0; !rc && m < nm; m++) {
                const int64_t *st;
                const double *vals;
                size_t n = tprof_log_points(lg, m, &st, &vals);
                if (pos[m] >= n || st[pos[m]] != step) continue;
                long i = tprof_rows_add(se);
                if (i < 0 || tprof_rows_set_s(se, (size_t)i, S_METRIC, tprof_log_metric(lg, m))) {
                    rc = TPROF_ENOMEM;
                    break;
                }
                tprof_rows_set_i(se, (size_t)i, S_STEP, step);
                tprof_rows_set_d(se, (size_t)i, S_VALUE, vals[pos[m]++]);
            }
        }
        free(pos);
    }
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
