/* libFuzzer target: the whole trace reader (decompression, tokenizer, event
 * model), differential between the generic path, the fast path and parallel
 * chunks, and the analyses on what was read. */
#include <stdint.h>
#include <stdlib.h>

#include "../tools/path_diff.h"
#include "trainprof/analysis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[300];
    if (tprof_path_diff_input(NULL, data, size, why, sizeof why, NULL)) abort(); /* the read paths disagree */
    tprof_read_opts o = { .keep = TPROF_KEEP_ALL };
    tprof_trace *t = NULL;
    char err[512];
    tprof_trace_read_mem(&t, data, size, "fuzz", &o, err, sizeof err);
    if (t) {
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
        if (tprof_comm(t, &cr) == 0) tprof_comm_free(cr);
        tprof_launch_result lr;
        tprof_launch_overhead(t, &lr);
        const tprof_trace *one[2] = { t, t };
        tprof_advice *ad;
        if (tprof_advise(one, 2, &ad) == 0) tprof_advice_free(ad);
        tprof_trace_free(t);
    }
    return 0;
}
