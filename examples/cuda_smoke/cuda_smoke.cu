// cuda_smoke: a few steps of GPU work under the recording library, to check
// the CUPTI recorder (TPROF_CUDA builds only). Exits 77 when there is no GPU.
//   cuda_smoke TRACE_DIR
#include <cstdio>
#include <cuda_runtime.h>

#include "trainprof/profiler.h"

__global__ void axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}

int main(int argc, char **argv)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        std::printf("no GPU\n");
        return 77;
    }
    tprof_profile_config c;
    tprof_config_default(&c);
    c.enable = true;
    c.start_step = 2;
    c.end_step = 4;
    c.with_stack = false;
    std::snprintf(c.trace_dir, sizeof c.trace_dir, "%s", argc > 1 ? argv[1] : "trace");
    std::snprintf(c.prefix, sizeof c.prefix, "cuda_smoke");
    char err[512];
    if (tprof_profiler_start(&c, err, sizeof err)) {
        std::fprintf(stderr, "%s\n", err);
        return 1;
    }
    const int n = 1 << 20;
    float *x, *y, *h = new float[n];
    for (int i = 0; i < n; i++) h[i] = 1.0f;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    for (int step = 1; step <= 4; step++) {
        tprof_step_begin(step);
        {
            TPROF_RANGE("copy_in");
            cudaMemcpy(x, h, n * sizeof(float), cudaMemcpyHostToDevice);
            cudaMemset(y, 0, n * sizeof(float));
        }
        {
            TPROF_RANGE("compute");
            for (int k = 0; k < 10; k++) axpy<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
        }
        {
            TPROF_RANGE("copy_out");
            cudaMemcpy(h, y, n * sizeof(float), cudaMemcpyDeviceToHost);
        }
        tprof_step_end(step);
    }
    tprof_profiler_stop();
    cudaFree(x);
    cudaFree(y);
    bool ok = h[0] == 20.0f;
    delete[] h;
    std::printf("%s %s\n", ok ? "ok" : "wrong result", tprof_profiler_trace_path());
    return ok ? 0 : 1;
}
