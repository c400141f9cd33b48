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

#endif
