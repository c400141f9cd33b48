/* GPU activity through CUPTI's activity API: kernels, memcpys, memsets and
 * the runtime calls that launched them (correlation ids), on the profiler's
 * own clock. Built only with -DTPROF_CUDA=ON; otherwise the stubs at the end
 * report "no GPU". At run time, a machine without a GPU or driver makes
 * cuptiActivityEnable fail, and the profiler records the CPU side only. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifdef TPROF_HAVE_CUPTI
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>

#define BUF_SIZE (8u << 20)

static pthread_mutex_t gl = PTHREAD_MUTEX_INITIALIZER;
static rec_gpu *ev;
static size_t nev, cev;
static rec_gpu_device dev[16];
static size_t ndev;
static int on;

/* CUPTI timestamps on CLOCK_MONOTONIC, the CPU events' clock. */
static uint64_t CUPTIAPI stamp(void) { return (uint64_t)tprof__now_ns(); }

static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, BUF_SIZE);
    *size = *buffer ? BUF_SIZE : 0;
    *max_records = 0;
}

static rec_gpu *push(void)
{
    if (nev == cev) {
        size_t c = cev ? cev * 2 : 4096;
        rec_gpu *p = realloc(ev, c * sizeof *p);
        if (!p) return NULL;
        ev = p;
        cev = c;
    }
    rec_gpu *e = &ev[nev++];
    memset(e, 0, sizeof *e);
    return e;
}

/* A GPU record with what every kind of activity has (call with gl held). */
static rec_gpu *push_span(int kind, uint64_t start, uint64_t end, uint32_t device, uint32_t stream, uint32_t correlation)
{
    rec_gpu *e = push();
    if (!e) return NULL;
    e->kind = kind;
    e->start = (int64_t)start;
    e->end = (int64_t)end;
    e->device = device;
    e->stream = stream;
    e->correlation = correlation;
    return e;
}

/* CUPTI gives kernels their mangled names; PyTorch's traces show them
 * demangled. The C++ runtime's demangler is used where the program has one
 * loaded (CUDA programs are C++), else the name stays as CUPTI gave it.
 * Called with gl held. */
static char *kernel_name(const char *nm)
{
    typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
    static demangle_fn demangle;
    static int looked;
    if (!nm) return strdup("kernel");
    if (nm[0] == '_' && nm[1] == 'Z') {
        if (!looked) {
            void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
            if (!sym) { /* loaded, but not in the global scope (RTLD_LOCAL, as some interpreters load) */
                void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
                if (h) sym = dlsym(h, "__cxa_demangle"); /* the handle stays: the library is loaded anyway */
            }
            memcpy(&demangle, &sym, sizeof demangle);
            looked = 1;
        }
        int status = -1;
        char *d = demangle ? demangle(nm, NULL, NULL, &status) : NULL;
        if (d && status == 0) return d;
        free(d);
    }
    return strdup(nm);
}

/* CUPTI names runtime calls with the CUDA version that introduced them
 * ("cudaLaunchKernel_v7000"); traces, Kineto's included, use the API's name. */
static char *runtime_name(const char *nm)
{
    if (!nm) return strdup("cudaRuntime");
    size_t n = strlen(nm), d = n;
    while (d > 0 && nm[d - 1] >= '0' && nm[d - 1] <= '9') d--;
    if (d < n && d >= 3 && nm[d - 1] == 'v' && nm[d - 2] == '_') n = d - 2;
    return strndup(nm, n);
}

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *r = NULL;
    pthread_mutex_lock(&gl);
    while (valid && cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
        rec_gpu *e;
        switch (r->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL: {
            const CUpti_ActivityKernel10 *k = (const void *)r;
            if (!(e = push_span(1, k->start, k->end, k->deviceId, k->streamId, k->correlationId))) break;
            e->grid[0] = k->gridX, e->grid[1] = k->gridY, e->grid[2] = k->gridZ;
            e->block[0] = k->blockX, e->block[1] = k->blockY, e->block[2] = k->blockZ;
            e->regs = k->registersPerThread;
            e->smem = k->staticSharedMemory + k->dynamicSharedMemory;
            e->name = kernel_name(k->name);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const CUpti_ActivityMemcpy6 *m = (const void *)r;
            if (!(e = push_span(2, m->start, m->end, m->deviceId, m->streamId, m->correlationId))) break;
            e->bytes = (int64_t)m->bytes;
            e->copy_kind = m->copyKind;
            e->src_kind = m->srcKind;
            e->dst_kind = m->dstKind;
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset4 *m = (const void *)r;
            if (!(e = push_span(3, m->start, m->end, m->deviceId, m->streamId, m->correlationId))) break;
            e->bytes = (int64_t)m->bytes;
            break;
        }
        case CUPTI_ACTIVITY_KIND_RUNTIME: {
            const CUpti_ActivityAPI *a = (const void *)r;
            const char *nm = NULL;
            if (!(e = push())) break;
            e->kind = 4;
            e->start = (int64_t)a->start;
            e->end = (int64_t)a->end;
            e->thread = a->threadId;
            e->correlation = a->correlationId;
            e->cbid = a->cbid;
            cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &nm);
            e->name = runtime_name(nm);
            break;
        }
        case CUPTI_ACTIVITY_KIND_DEVICE: {
            const CUpti_ActivityDevice5 *d = (const void *)r;
            if (ndev < sizeof dev / sizeof dev[0]) {
                rec_gpu_device *x = &dev[ndev++];
                x->id = d->id;
                x->cc_major = d->computeCapabilityMajor;
                x->cc_minor = d->computeCapabilityMinor;
                x->sms = d->numMultiprocessors;
                x->mem = d->globalMemorySize;
                snprintf(x->name, sizeof x->name, "%s", d->name ? d->name : "");
            }
            break;
        }
        default: break;
        }
    }
    pthread_mutex_unlock(&gl);
    free(buffer);
}

static const CUpti_ActivityKind kinds[] = { CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                            CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                            CUPTI_ACTIVITY_KIND_RUNTIME };
static int enabled; /* activity kinds enabled; cleared by the final flush */

int tprof__gpu_start(void)
{
    if (on) return 0;
    if (cuptiActivityRegisterTimestampCallback(stamp) != CUPTI_SUCCESS) return -1;
    /* the launching thread as the kernel's gettid(), the id CPU events carry */
    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (cuptiActivityRegisterCallbacks(buf_request, buf_complete) != CUPTI_SUCCESS) return -1;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (cuptiActivityEnable(kinds[i]) != CUPTI_SUCCESS) {
            for (size_t j = 0; j < i; j++) cuptiActivityDisable(kinds[j]);
            return -1; /* no driver or no GPU: the CPU side only */
        }
    on = 1;
    enabled = 1;
    return 0;
}

/* Disabled first, so that nothing new arrives after the flush: the arrays are
 * complete once it returns. The trace is written once, so this is final. */
void tprof__gpu_flush(void)
{
    if (!on) return;
    if (enabled) {
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) cuptiActivityDisable(kinds[i]);
        enabled = 0;
    }
    cuptiActivityFlushAll(1);
}

void tprof__gpu_stop(void)
{
    if (!on) return;
    tprof__gpu_flush();
    pthread_mutex_lock(&gl);
    for (size_t i = 0; i < nev; i++) free(ev[i].name);
    free(ev);
    ev = NULL;
    nev = cev = 0;
    ndev = 0;
    pthread_mutex_unlock(&gl);
    on = 0;
}

/* Called by the writer after tprof__gpu_flush, under the profiler's lock;
 * CUPTI's thread appends (and reallocs) under gl, so the copy is taken under it. */
rec_gpu *tprof__gpu_events(size_t *n)
{
    pthread_mutex_lock(&gl);
    rec_gpu *c = nev ? malloc(nev * sizeof *c) : NULL;
    *n = c ? nev : 0;
    if (c) memcpy(c, ev, nev * sizeof *c);
    pthread_mutex_unlock(&gl);
    return c;
}

size_t tprof__gpu_devices(rec_gpu_device *out, size_t max)
{
    pthread_mutex_lock(&gl);
    size_t n = ndev < max ? ndev : max;
    memcpy(out, dev, n * sizeof *out);
    pthread_mutex_unlock(&gl);
    return n;
}

#else /* no CUDA build */

int tprof__gpu_start(void) { return -1; }
void tprof__gpu_flush(void) {}
void tprof__gpu_stop(void) {}
rec_gpu *tprof__gpu_events(size_t *n)
{
    *n = 0;
    return NULL;
}
size_t tprof__gpu_devices(rec_gpu_device *out, size_t max)
{
    (void)out;
    (void)max;
    return 0;
}

#endif

const char *tprof__gpu_memcpy_kind(int kind)
{
    /* CUpti_ActivityMemcpyKind, as Kineto names them */
    static const char *const names[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD",
                                         "HtoH", "PtoP" };
    return kind >= 0 && kind < (int)(sizeof names / sizeof names[0]) ? names[kind] : "Unknown";
}
