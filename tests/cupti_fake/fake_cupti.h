/* The fake CUDA runtime of tests/cupti_fake: each call records what CUPTI
 * would (the runtime call on the calling thread, then the GPU work). */
#ifndef TPROF_FAKE_CUPTI_H
#define TPROF_FAKE_CUPTI_H
#include <stdint.h>

void fake_cupti_refuse_enable(int refuse); /* behave as a machine without a GPU */
void fake_cuda_device(uint32_t id, const char *name);
void fake_cuda_launch(const char *kernel, uint32_t stream, uint64_t ns);
void fake_cuda_memcpy(uint64_t bytes, int to_device, uint32_t stream);
void fake_cuda_memset(uint64_t bytes, uint32_t stream);

#endif
