/* libFuzzer target: the whole trace reader (decompression, tokenizer, event
 * model), differential between the generic path, the fast path and parallel
 * chunks, and the analyses on what was read.
 *
 * Every input is read twice, through the generic and the fast path, and
 * the two reads must agree; the analyses run on the fast read. The read in
 * parallel chunks starts threads, so it runs on a fixed sample of the
 * inputs (one in PARALLEL_EVERY, chosen by a hash of the bytes, so that a
 * saved input reproduces); FUZZ_TRACE_PARALLEL=1 in the environment runs it
 * on every input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../tools/path_diff.h"
#include "trainprof/analysis.h"

#define PARALLEL_EVERY 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int parallel_always = -1;

static int sampled(const uint8_t *data, size_t size)
{
    if (parallel_always < 0) {
        const char *e = getenv("FUZZ_TRACE_PARALLEL");
        parallel_always = e && e[0] == '1';
    }
    if (parallel_always) return 1;
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
    return h % PARALLEL_EVERY == 0;
}

static void analyses(tprof_trace *t)
{
    tprof_kernels_result *r;
    tprof_kernels_opts ko = { .by = TPROF_BY_NAME, .step_first = 1, .step_last = 3 };
    if (tprof_kernels(t, &ko, &r) == 0) tprof_kernels_free(r);
    ko.step_first = ko.step_last = -1;
    if (tprof_kernels(t, &ko, &r) == 0) tprof_kernels_free(r);
    tprof_temporal_result tr;
    tprof_temporal(t, NULL, &tr);
    tprof_steps_result *sr;
    if (tprof_steps(t, &sr) == 0) tprof_steps_free(sr);
    tprof_idle_result *ir;
    if (tprof_idle(t, NULL, &ir) == 0) tprof_idle_free(ir);
    tprof_comm_result *cr;
    if (tprof_comm(t, &cr) == 0) { /* with the HCCL tables of an Ascend communication summary */
        tprof_result *res;
        if (tprof_comm_tables(cr, t, &res) == 0) tprof_result_free(res);
        tprof_comm_free(cr);
    }
    tprof_launch_result lr;
    tprof_launch_overhead(t, &lr);
    for (int by = 0; by < TPROF_OPS_GROUPINGS; by++) {
        tprof_ops_opts oo = { .by = (tprof_ops_by)by, .depth = by, .step_first = by ? -1 : 1, .step_last = -1 };
        tprof_result *opr;
        if (tprof_ops(t, &oo, &opr) == 0) tprof_result_free(opr);
    }
    /* the critical path per step, of the whole trace with every edge, of an annotation's instances */
    tprof_cp_opts cpo[3] = { { .step_first = -1, .step_last = -1, .instance_first = -1, .instance_last = -1 },
                             { .step_first = -1, .step_last = -1, .whole = 1, .path = 1, .instance_first = -1,
                               .instance_last = -1 },
                             { .step_first = -1, .step_last = -1, .annotation = "a", .instance_first = 0,
                               .instance_last = 2 } };
    for (int k = 0; k < 3; k++) {
        tprof_result *cp;
        if (tprof_critical_path(t, &cpo[k], &cp) == 0) tprof_result_free(cp);
    }
    const tprof_trace *two[2] = { t, t };
    tprof_advice *ad;
    if (tprof_advise(two, 2, &ad) == 0) tprof_advice_free(ad);
    /* the trace as two ranks of one job: every instance matched with itself */
    tprof_result *inst, *coll;
    if (tprof_coll_instances(t, &inst) == 0) {
        const tprof_result *ranks[2] = { inst, inst };
        if (tprof_collectives_reduce(ranks, 2, &coll) == 0) tprof_result_free(coll);
        tprof_result_free(inst);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[300], eb[512];
    tprof_trace *ref = NULL, *fast = NULL, *compact = NULL;
    int rc = tprof_path_read(NULL, data, size, &tprof_path_reference, &ref, eb, sizeof eb);
    int some = sampled(data, size);
    if (tprof_path_diff_variant(NULL, data, size, TPROF_PATH_FAST, ref, rc, eb, why, sizeof why, &fast) ||
        (some && tprof_path_diff_variant(NULL, data, size, TPROF_PATH_PARALLEL, ref, rc, eb, why, sizeof why, NULL)) ||
        (some && tprof_path_diff_variant(NULL, data, size, TPROF_PATH_COMPACT, ref, rc, eb, why, sizeof why, &compact))) {
        fprintf(stderr, "the read paths disagree: %s\n", why);
        abort();
    }
    tprof_trace_free(ref);
    if (fast) analyses(fast);
    if (compact) analyses(compact); /* the op tree over spans and events */
    tprof_trace_free(fast);
    tprof_trace_free(compact);
    return 0;
}
