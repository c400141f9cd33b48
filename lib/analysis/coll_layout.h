/* The layout collectives.c and coll_match.c share (internal): a rank's
 * instances' columns, the tables that carry the matching's outcome, the
 * columns of the matched collectives' table. */
#ifndef TPROF_COLL_LAYOUT_H
#define TPROF_COLL_LAYOUT_H

#include "collectives_tables.h"

enum { G_TYPE, G_GROUP, G_DTYPE, G_BYTES, G_RANKS, G_COUNT, G_TRANSFER, G_TRANSFER_P50, G_TRANSFER_P90, G_ALGBW,
       G_BUSBW, G_WAIT, G_SKEW_P50, G_SKEW_P90, G_NCOLS };

/* tprof_coll_instances_desc: its top row, its instances, its steps */
enum { I_RANK, I_FILE, I_NCOLS };
enum { C_GROUP, C_SEQ, C_TYPE, C_NAME, C_DTYPE, C_BYTES, C_GROUP_SIZE, C_START, C_DUR, C_KERNELS, C_STEP, C_IN_BYTES,
       C_OUT_BYTES, C_CALL, C_BEFORE, C_BEFORE_HOST, C_BEFORE_COMPUTE, C_BEFORE_DATA, C_IN_SPLITS, C_GROUP_RANKS,
       C_NCOLS };
enum { P_STEP, P_NCOLS };
/* its tables: the rank's own, then the matching's outcome (tprof_coll_join:
 * on the first rank's instances only) */
enum { IT_INSTANCES, IT_STEPS, IT_HCCL_TOTALS, IT_HCCL_MATRIX, IT_MATCH, IT_MATCH_GROUPS, IT_MATCH_RANKS, IT_MATCH_A2A,
       IT_NTABLES };
extern const tprof_table_desc tprof_coll_inst_rows;

/* The matching's counts (a partial's top row; the carrier's IT_MATCH row). */
enum { M_MATCHED, M_UNMATCHED, M_WITH_WAITS, M_SEQ_USED, M_ORDER_USED, M_A2A_UNREAD, M_PAIRS, M_NCOLS };
extern const tprof_table_desc tprof_coll_match_table;
/* Per rank (by its place K in rank order): its sums over the instances a
 * partial matched, and (joined) its clock. */
enum { S_K, S_MATCHED_ON, S_WAIT, S_LAST, S_COST, S_LATE, S_LATE_N, S_SENT, S_RECEIVED, S_WHY_BEFORE, S_WHY_HOST,
       S_WHY_COMPUTE, S_WHY_DATA, S_WHY_N, S_FITTED, S_OFFSET, S_DRIFT, S_RESIDUAL, S_NCOLS };
extern const tprof_table_desc tprof_coll_sums_table;

/* Past this fit residual a rank's clock is not trusted for arrival skew. */
#define TPROF_COLL_SKEW_MAX_RESIDUAL_NS 50000

/* A cell's integer, NONE when null; its string, "" when null. */
static inline int64_t coll_int_or(const tprof_rows *rows, size_t i, size_t col, int64_t none)
{
    const tprof_cell *c = tprof_rows_cell(rows, i, col);
    return c->null ? none : c->v.i;
}

static inline const char *coll_str(const tprof_rows *rows, size_t i, size_t col)
{
    const tprof_cell *c = tprof_rows_cell(rows, i, col);
    return c->null ? "" : c->v.s;
}

#endif
