/* Every result description, for the schema docs and for readers of results
 * written elsewhere (a result names its description). */
#include "trainprof/analysis.h"
#include "trainprof/diff.h"
#include "trainprof/flops.h"
#include "trainprof/log.h"
#include "trainprof/mem.h"
#include "trainprof/merge.h"

#include <string.h>

static const tprof_result_desc *const all[] = {
    &tprof_comm_desc,
    &tprof_diff_desc,
    &tprof_diff_part_desc,
    &tprof_flops_desc,
    &tprof_idle_desc,
    &tprof_info_desc,
    &tprof_kernels_desc[TPROF_BY_NAME],
    &tprof_kernels_desc[TPROF_BY_CLASS],
    &tprof_kernels_desc[TPROF_BY_STREAM],
    &tprof_kernels_desc[TPROF_BY_CATEGORY],
    &tprof_launch_desc,
    &tprof_log_desc[0],
    &tprof_log_desc[1],
    &tprof_mem_desc,
    &tprof_mem_compare_desc,
    &tprof_mem_trace_desc,
    &tprof_mem_timeline_desc,
    &tprof_mem_trace_timeline_desc,
    &tprof_mem_ascend_desc,
    &tprof_merge_desc,
    &tprof_ops_desc[TPROF_OPS_BY_NAME],
    &tprof_ops_desc[TPROF_OPS_BY_SHAPE],
    &tprof_ops_desc[TPROF_OPS_BY_MODULE],
    &tprof_ops_desc[TPROF_OPS_BY_CATEGORY],
    &tprof_ops_desc[TPROF_OPS_BY_STACK],
    &tprof_mfu_desc,
    &tprof_rank_facts_desc,
    &tprof_coll_instances_desc,
    &tprof_coll_routed_desc,
    &tprof_coll_pairs_desc,
    &tprof_coll_fits_desc,
    &tprof_coll_partial_desc,
    &tprof_collectives_desc,
    &tprof_critical_path_desc,
    &tprof_ranks_desc,
    &tprof_advice_desc,
    &tprof_summary_trace_desc,
    &tprof_summary_desc,
    &tprof_steps_desc,
    &tprof_temporal_desc,
};

const tprof_result_desc *const *tprof_result_descs(size_t *n)
{
    *n = sizeof all / sizeof *all;
    return all;
}

const tprof_result_desc *tprof_result_desc_find(const char *name)
{
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (!strcmp(all[i]->name, name)) return all[i];
    return NULL;
}
