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

/* A matrix's links across ranks (hccl_matrix.c): each rank's entries as
 * written (collectives keeps them of a rank), then PARTS[0..N) in rank order
 * (rank RANK_OF[k]) onto global ranks, summed per group, step, op and link,
 * with each group's Total Op Info, into OUT; *UNMAPPED counts the entries
 * dropped for an endpoint no rank's self link names. 0 or TPROF_ENOMEM. */
extern const tprof_table_desc tprof_hccl_matrix_desc, tprof_hccl_cluster_links_desc;
int tprof_hccl_matrix_rows(const tprof_trace *t, tprof_rows *rows);
int tprof_hccl_cluster_links(const tprof_rows *const *parts, const int64_t *rank_of, size_t n, tprof_rows *out,
                             size_t *unmapped);

/* Shared by the three: MB (10^6 bytes) and ms as written into bytes and ns;
 * "(0, 1, 3)" from sorted ranks (a Python tuple, msprof-analyze's group
 * key); whether a matrix entry is a top/middle/bottom statistic (left out of
 * sums, as msprof-analyze's check_add_op does). */
int64_t tprof_hccl_bytes_of_mb(double mb);
int64_t tprof_hccl_ns_of_ms(double ms);
int tprof_hccl_ranks_text(const int64_t *r, size_t n, char **out);
int tprof_hccl_statistic_entry(const char *op);

#endif
