/* Ascend's HCCL communication summaries as tables of comm's result
 * (internal; hccl.c). */
#ifndef TPROF_HCCL_H
#define TPROF_HCCL_H

#include "trainprof/result.h"
#include "trainprof/trace.h"

extern const tprof_table_desc tprof_hccl_ops_desc, tprof_hccl_totals_desc, tprof_hccl_transports_desc,
    tprof_hccl_links_desc;

/* T's HCCL ops, their totals per step and group, the bytes per transport
 * and the links into the four tables (empty without summaries). 0 or
 * TPROF_ENOMEM. */
int tprof_hccl_tables(const tprof_trace *t, tprof_rows *ops, tprof_rows *totals, tprof_rows *transports,
                      tprof_rows *links);

/* The totals alone (msprof-analyze's Total Op Info per step and group)
 * into ROWS, of tprof_hccl_totals_desc: what collectives keeps of a rank. */
int tprof_hccl_total_rows(const tprof_trace *t, tprof_rows *rows);

extern const tprof_table_desc tprof_hccl_groups_desc, tprof_hccl_bandwidth_desc, tprof_hccl_slow_links_desc;
/* Across ranks (hccl_cluster.c): TOTALS[0..N) each rank's totals (rank
 * RANK_OF[k] where a row names none), in rank order, into TOT (every row,
 * with its group's ranks), GROUPS, BW (per step and rank) and SLOW (the slow
 * links). 0 or TPROF_ENOMEM. */
int tprof_hccl_cluster(const tprof_rows *const *totals, const int64_t *rank_of, size_t n, tprof_rows *tot,
                       tprof_rows *groups, tprof_rows *bw, tprof_rows *slow);

#endif
