/* The report of a merge as result tables (`trainprof merge`): the output,
 * the alignment, sizes, and a row per input in argument order. */
#include <stdlib.h>
#include "trainprof/error.h"
#include "trainprof/merge.h"

enum { M_OUTPUT, M_ALIGN, M_EVENTS, M_JSON_BYTES, M_FILE_BYTES, M_SPILLED, M_PROBLEMS, M_NCOLS };
static const tprof_col_desc merge_cols[M_NCOLS] = {
    [M_OUTPUT] = TPROF_COL("output", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the merged trace's path"),
    [M_ALIGN] = TPROF_COL("align", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL,
                          "the alignment applied: none, base-time, first-step or collective"),
    [M_EVENTS] = TPROF_COL("events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "events written"),
    [M_JSON_BYTES] = TPROF_COL("json_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, NULL, "JSON before compression"),
    [M_FILE_BYTES] = TPROF_COL("file_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, NULL, "the output file"),
    [M_SPILLED] = TPROF_COL("runs_spilled", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                            "sorted runs written to temporary files"),
    [M_PROBLEMS] = TPROF_COL("problems", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                             "duplicate ranks, gaps, fallbacks: one per line, or empty"),
};
enum { R_FILE, R_RANK, R_FROM, R_INCLUDED, R_TRUNCATED, R_PID_BASE, R_OFFSET, R_ALIGNED_ON, R_IN, R_OUT, R_DROPPED,
       R_IDS, R_NCOLS };
static const tprof_col_desc rank_cols[R_NCOLS] = {
    [R_FILE] = TPROF_COL("file", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "the input"),
    [R_RANK] = TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_PER_RANK, NULL, "its rank", .flags = TPROF_COLF_KEY),
    [R_FROM] = TPROF_COL("rank_from", TPROF_COL_ENUM, TPROF_COMBINE_PER_RANK, NULL,
                         "where the rank came from: distributedInfo, file name or argument order"),
    [R_INCLUDED] = TPROF_COL("included", TPROF_COL_INT, TPROF_COMBINE_SUM, NULL, "1: selected (--ranks), 0: left out"),
    [R_TRUNCATED] = TPROF_COL("truncated", TPROF_COL_INT, TPROF_COMBINE_SUM, NULL,
                              "1: the input ended early (what was read is merged)"),
    [R_PID_BASE] = TPROF_COL("pid_base", TPROF_COL_INT, TPROF_COMBINE_PER_RANK, NULL, "its pids are pid_base + 0, 1, ..."),
    [R_OFFSET] = TPROF_COL("offset_ns", TPROF_COL_DURATION, TPROF_COMBINE_PER_RANK, NULL,
                           "added to every timestamp"),
    [R_ALIGNED_ON] = TPROF_COL("aligned_on", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL,
                               "what the offset aligns, or why it could not"),
    [R_IN] = TPROF_COL("events_in", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "events read"),
    [R_OUT] = TPROF_COL("events_out", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "events written"),
    [R_DROPPED] = TPROF_COL("dropped", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "left out by the filters"),
    [R_IDS] = TPROF_COL("ids_unchanged", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                        "ids too large to make unique, written unchanged"),
};
static const tprof_table_desc ranks = { .name = "ranks", .doc = "one row per input, in rank order",
                                        .cols = rank_cols, .ncols = R_NCOLS, .json_after = "runs_spilled" };
static const tprof_table_desc merge_top = { .name = "", .cols = merge_cols, .ncols = M_NCOLS };
static const tprof_table_desc *const merge_tables[] = { &ranks };
const tprof_result_desc tprof_merge_desc = { .name = "merge", .version = 1, .top = &merge_top, .tables = merge_tables,
                                             .ntables = 1, .whole_run = 1, .no_csv = 1 };

const char *tprof_rank_source_name(tprof_rank_source s)
{
    return s == TPROF_RANK_FROM_DISTRIBUTED ? "distributedInfo" : s == TPROF_RANK_FROM_NAME ? "file name"
                                                                                             : "argument order";
}

int tprof_merge_tables(const tprof_merge_report *r, const char *output, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_merge_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res), *rows = tprof_result_table(res, 0);
    int rc = tprof_rows_set_s(top, 0, M_OUTPUT, output);
    if (!rc) rc = tprof_rows_set_s(top, 0, M_ALIGN, tprof_align_name(r->align));
    if (!rc) rc = tprof_rows_set_s(top, 0, M_PROBLEMS, r->problems);
    tprof_rows_set_i(top, 0, M_EVENTS, (int64_t)r->events_out);
    tprof_rows_set_i(top, 0, M_JSON_BYTES, (int64_t)r->bytes_out);
    tprof_rows_set_i(top, 0, M_FILE_BYTES, (int64_t)r->file_bytes);
    tprof_rows_set_i(top, 0, M_SPILLED, (int64_t)r->runs_spilled);
    int64_t *rank = malloc((r->nranks ? r->nranks : 1) * sizeof *rank);
    size_t *order = malloc((r->nranks ? r->nranks : 1) * sizeof *order);
    if (!rc && (!rank || !order)) rc = TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < r->nranks; i++) rank[i] = r->ranks[i].rank;
    if (!rc) rc = tprof_rank_order(rank, r->nranks, order);
    for (size_t o = 0; !rc && o < r->nranks; o++) {
        const tprof_merge_rank *k = &r->ranks[order[o]];
        long j = tprof_rows_add(rows);
        if (j < 0 || tprof_rows_set_s(rows, (size_t)j, R_FILE, k->path) ||
            tprof_rows_set_s(rows, (size_t)j, R_FROM, tprof_rank_source_name(k->rank_source)) ||
            tprof_rows_set_s(rows, (size_t)j, R_ALIGNED_ON, k->align_note)) {
            rc = TPROF_ENOMEM;
            break;
        }
        const int64_t v[R_NCOLS] = { [R_RANK] = k->rank, [R_INCLUDED] = k->included, [R_TRUNCATED] = k->truncated,
                                     [R_PID_BASE] = k->pid_base, [R_OFFSET] = k->offset_ns,
                                     [R_IN] = (int64_t)k->events_in, [R_OUT] = (int64_t)k->events_out,
                                     [R_DROPPED] = (int64_t)k->dropped, [R_IDS] = (int64_t)k->ids_kept };
        for (size_t c = 0; c < R_NCOLS; c++)
            if (c != R_FILE && c != R_FROM && c != R_ALIGNED_ON) tprof_rows_set_i(rows, (size_t)j, c, v[c]);
    }
    free(rank);
    free(order);
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
