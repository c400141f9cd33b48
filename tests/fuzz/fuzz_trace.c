/* libFuzzer target: the whole trace reader (decompression, tokenizer, event
 * model), differential between the fast and the generic event paths, and
 * the kernels analysis on what was read. */
#include <stdint.h>
#include <stdlib.h>

#include "../tools/path_diff.h"
#include "trainprof/analysis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tprof_read_opts fast = { .keep = TPROF_KEEP_ALL }, slow = { .keep = TPROF_KEEP_ALL, .generic_only = 1 };
    tprof_trace *t = NULL, *g = NULL;
    char err[512] = "", err2[512] = "", why[256];
    int rc = tprof_trace_read_mem(&t, data, size, "fuzz", &fast, err, sizeof err);
    int rc2 = tprof_trace_read_mem(&g, data, size, "fuzz", &slow, err2, sizeof err2);
    if (tprof_path_diff(t, rc, g, rc2, why, sizeof why)) abort(); /* the two paths disagree */
    if (rc && rc != TPROF_ETRUNC && strcmp(err, err2)) abort();
    tprof_trace_free(g);
    if (t) {
        tprof_kernels_result *r;
        tprof_kernels_opts ko = { .by = TPROF_BY_NAME, .step_first = 1, .step_last = 3 };
        if (tprof_kernels(t, &ko, &r) == 0) tprof_kernels_free(r);
        ko.step_first = ko.step_last = -1;
        if (tprof_kernels(t, &ko, &r) == 0) tprof_kernels_free(r);
        tprof_trace_free(t);
    }
    return 0;
}
