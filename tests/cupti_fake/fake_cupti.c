/* A stand-in for libcupti, for testing lib/record/cupti.c without a GPU.
 *
 * It is compiled against the CUDA toolkit's real CUPTI headers, so the
 * activity records it hands over have CUPTI's own layouts, and it implements
 * the few calls the recorder makes: callbacks registered, kinds enabled,
 * records packed into the buffers the recorder supplies and delivered on
 * flush, names as CUPTI spells them (with their "_v<version>" suffix).
 * fake_cupti.h is the "CUDA runtime" a test program calls instead of a GPU. */
#include <cupti.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fake_cupti.h"

static CUpti_BuffersCallbackRequestFunc request_fn;
static CUpti_BuffersCallbackCompleteFunc complete_fn;
static CUpti_TimestampCallbackFunc stamp_fn;
static unsigned enabled_kinds; /* bit per CUpti_ActivityKind below 32 */
static int refuse_enable;

/* Records waiting for a flush, each behind an 8-byte length. */
static uint8_t *queue;
static size_t queue_len, queue_cap;
static uint32_t next_correlation = 1;
static uint64_t gpu_clock; /* the fake GPU's timeline: work runs back to back */

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
    stamp_fn = f;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    return type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                    CUpti_BuffersCallbackCompleteFunc done)
{
    if (!req || !done) return CUPTI_ERROR_INVALID_PARAMETER;
    request_fn = req;
    complete_fn = done;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if (refuse_enable) return CUPTI_ERROR_NOT_INITIALIZED; /* what a machine without a driver says */
    if ((unsigned)kind >= 32) return CUPTI_ERROR_INVALID_KIND;
    enabled_kinds |= 1u << kind;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if ((unsigned)kind >= 32) return CUPTI_ERROR_INVALID_KIND;
    enabled_kinds &= ~(1u << kind);
    return CUPTI_SUCCESS;
}

/* Hands every queued record over, in buffers of the recorder's own size. */
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    size_t at = 0;
    while (at < queue_len) {
        uint8_t *buf = NULL;
        size_t size = 0, max_records = 0, used = 0;
        request_fn(&buf, &size, &max_records);
        if (!buf) return CUPTI_ERROR_OUT_OF_MEMORY;
        while (at < queue_len) {
            uint64_t n;
            memcpy(&n, queue + at, 8);
            if (used + 8 + n > size) break;
            memcpy(buf + used, queue + at, 8 + n);
            used += 8 + n;
            at += 8 + n;
        }
        if (used == 0) return CUPTI_ERROR_INVALID_PARAMETER; /* a record larger than the buffer */
        complete_fn(NULL, 0, buf, size, used);
    }
    queue_len = 0;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    size_t at = *record ? (size_t)((uint8_t *)*record - buffer) : 8;
    if (*record) {
        uint64_t n;
        memcpy(&n, (uint8_t *)*record - 8, 8);
        at += n + 8;
    }
    if (at >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)(buffer + at);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API) return CUPTI_ERROR_INVALID_PARAMETER;
    switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: *name = "cudaLaunchKernel_v7000"; break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020: *name = "cudaMemcpy_v3020"; break;
    case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020: *name = "cudaMemset_v3020"; break;
    default: return CUPTI_ERROR_INVALID_PARAMETER;
    }
    return CUPTI_SUCCESS;
}

/* ---- the fake runtime ---- */

static void queue_record(const void *rec, size_t n, CUpti_ActivityKind kind)
{
    if (!(enabled_kinds & (1u << kind))) return;
    size_t padded = (n + 7) & ~(size_t)7;
    if (queue_len + 8 + padded > queue_cap) {
        size_t c = queue_cap ? queue_cap * 2 : 1 << 16;
        while (c < queue_len + 8 + padded) c *= 2;
        uint8_t *q = realloc(queue, c);
        if (!q) abort();
        queue = q;
        queue_cap = c;
    }
    uint64_t len = padded;
    memcpy(queue + queue_len, &len, 8);
    memset(queue + queue_len + 8, 0, padded);
    memcpy(queue + queue_len + 8, rec, n);
    queue_len += 8 + padded;
}

static uint64_t now(void) { return stamp_fn ? stamp_fn() : 0; }

/* The runtime call on this thread, then the GPU work it queued. */
static uint32_t api_call(uint32_t cbid, uint64_t start)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = cbid;
    a.start = start;
    a.end = now() + 1;
    a.processId = (uint32_t)getpid();
    a.threadId = (uint32_t)syscall(SYS_gettid);
    a.correlationId = next_correlation++;
    queue_record(&a, sizeof a, CUPTI_ACTIVITY_KIND_RUNTIME);
    if (gpu_clock < a.end) gpu_clock = a.end;
    return a.correlationId;
}

static void gpu_span(uint64_t *start, uint64_t *end, uint64_t ns)
{
    *start = gpu_clock + 500;
    *end = *start + ns;
    gpu_clock = *end;
}

void fake_cupti_refuse_enable(int refuse) { refuse_enable = refuse; }

void fake_cuda_device(uint32_t id, const char *name)
{
    CUpti_ActivityDevice5 d;
    memset(&d, 0, sizeof d);
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = id;
    d.name = name; /* a static string: CUPTI's names outlive the buffers too */
    d.computeCapabilityMajor = 9;
    d.computeCapabilityMinor = 0;
    d.numMultiprocessors = 132;
    d.globalMemorySize = 80ull << 30;
    queue_record(&d, sizeof d, CUPTI_ACTIVITY_KIND_DEVICE);
}

void fake_cuda_launch(const char *kernel, uint32_t stream, uint64_t ns)
{
    uint64_t t = now();
    uint32_t corr = api_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, t);
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    gpu_span(&k.start, &k.end, ns);
    k.deviceId = 0;
    k.streamId = stream;
    k.correlationId = corr;
    k.gridX = 4096, k.gridY = 1, k.gridZ = 1;
    k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 16;
    k.staticSharedMemory = 0;
    k.dynamicSharedMemory = 0;
    k.name = kernel;
    queue_record(&k, sizeof k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

void fake_cuda_memcpy(uint64_t bytes, int to_device, uint32_t stream)
{
    uint64_t t = now();
    uint32_t corr = api_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, t);
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = to_device ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.srcKind = to_device ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = to_device ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.bytes = bytes;
    gpu_span(&m.start, &m.end, bytes / 200); /* 200 GB/s */
    m.deviceId = 0;
    m.streamId = stream;
    m.correlationId = corr;
    queue_record(&m, sizeof m, CUPTI_ACTIVITY_KIND_MEMCPY);
    while (stamp_fn && now() < m.end) { /* cudaMemcpy returns once the copy is done */
    }
}

void fake_cuda_memset(uint64_t bytes, uint32_t stream)
{
    uint64_t t = now();
    uint32_t corr = api_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, t);
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.bytes = bytes;
    gpu_span(&m.start, &m.end, bytes / 1000);
    m.deviceId = 0;
    m.streamId = stream;
    m.correlationId = corr;
    queue_record(&m, sizeof m, CUPTI_ACTIVITY_KIND_MEMSET);
}
