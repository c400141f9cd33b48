/* examples/cuda_smoke's steps on the fake CUDA runtime: the CUPTI recorder
 * (lib/record/cupti.c, built against the real CUPTI headers) runs through
 * its whole path without a GPU. tests/cli/record_cuda.py checks the trace.
 *   cupti_fake_smoke TRACE_DIR [nogpu]
 * nogpu: CUPTI refuses to enable, as on a machine without a driver; the
 * profiler must still write the CPU side. Kernel names are mangled, as
 * CUPTI gives them; the program links the C++ runtime, as CUDA programs do,
 * whose demangler the recorder uses. */
#include <stdio.h>
#include <string.h>

#include "fake_cupti.h"
#include "trainprof/profiler.h"

int main(int argc, char **argv)
{
    int nogpu = argc > 2 && strcmp(argv[2], "nogpu") == 0;
    fake_cupti_refuse_enable(nogpu);
    tprof_profile_config c;
    tprof_config_default(&c);
    c.enable = true;
    c.start_step = 2;
    c.end_step = 4;
    c.with_stack = false;
    snprintf(c.trace_dir, sizeof c.trace_dir, "%s", argc > 1 ? argv[1] : "trace");
    snprintf(c.prefix, sizeof c.prefix, "cuda_smoke");
    char err[512];
    if (tprof_profiler_start(&c, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    fake_cuda_device(0, "NVIDIA H100 80GB HBM3 (fake)");
    const unsigned n = 1u << 20;
    for (int step = 1; step <= 4; step++) {
        tprof_step_begin(step);
        {
            TPROF_RANGE("copy_in");
            fake_cuda_memcpy(n * 4ull, 1, 7);
            fake_cuda_memset(n * 4ull, 7);
        }
        {
            TPROF_RANGE("compute");
            for (int k = 0; k < 10; k++) fake_cuda_launch("_Z4axpyfPKfPfi", 7, 20000);
        }
        {
            TPROF_RANGE("copy_out");
            fake_cuda_memcpy(n * 4ull, 0, 7);
        }
        {
            /* asynchronous work nobody waits for: in the last recorded step
             * the GPU runs it after the window has ended */
            TPROF_RANGE("tail");
            for (int k = 0; k < 3; k++) fake_cuda_launch("_Z11tail_kernelPf", 7, 2000000);
        }
        tprof_step_end(step);
    }
    tprof_profiler_stop();
    printf("ok %s\n", tprof_profiler_trace_path());
    return 0;
}
