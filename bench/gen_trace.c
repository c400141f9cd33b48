/*
 * trainprof-gentrace: deterministic generator of large, Kineto-shaped
 * PyTorch profiler traces (Chrome trace JSON) for benchmarking.
 *
 * Standalone C17, libc only.  The same flags always produce the same bytes.
 *
 * The synthetic workload is a bf16 decoder-only transformer training step
 * on one H100 rank: FSDP-style all-gathers in the forward pass, flash
 * attention, cuBLAS GEMMs, an autograd thread for the backward pass with
 * bucketed all-reduces on a separate NCCL stream, a fused AdamW step and a
 * loss.item() sync at the end of every ProfilerStep.
 *
 * Optionally writes a ground-truth CSV of every GPU activity emitted
 * (kernel, gpu_memcpy, gpu_memset), aggregated by name, with exact integer
 * nanosecond durations.
 *
 * usage: trainprof-gentrace [--size BYTES|250M|1G] [--seed N] [--rank R]
 *            [--world W] [--steps N] [--layers N] [--layout line|kineto]
 *            [--truth FILE.csv] [--stats] [-o FILE]
 *
 * Events of one step are built in memory (CPU ops as a tree, so parents
 * know their duration), then serialized with hand-written formatting into
 * two buffers (CPU events first, then runtime/GPU/flow events, as Kineto
 * groups them) and written with fwrite.  Timestamps are kept as integer
 * nanoseconds and printed as microseconds with exactly 3 decimals.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* byte buffer                                                          */
/* ------------------------------------------------------------------ */

typedef struct {
    char *p;
    size_t n, cap;
} buf_t;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("trainprof-gentrace: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void b_reserve(buf_t *b, size_t extra)
{
    if (b->n + extra <= b->cap)
        return;
    size_t nc = b->cap ? b->cap : 1u << 16;
    while (nc < b->n + extra)
        nc *= 2;
    char *np = realloc(b->p, nc);
    if (!np)
        die("out of memory");
    b->p = np;
    b->cap = nc;
}

static inline void b_put(buf_t *b, const char *s, size_t n)
{
    b_reserve(b, n);
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

#define B_LIT(b, s) b_put((b), (s), sizeof(s) - 1)

static inline void b_str(buf_t *b, const char *s) { b_put(b, s, strlen(s)); }

static inline void b_u64(buf_t *b, uint64_t v)
{
    char tmp[24];
    int i = 24;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    b_put(b, tmp + i, (size_t)(24 - i));
}

static inline void b_i64(buf_t *b, int64_t v)
{
    if (v < 0) {
        B_LIT(b, "-");
        b_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        b_u64(b, (uint64_t)v);
    }
}

/* nanoseconds -> microseconds with exactly 3 decimals: "1234.567" */
static inline void b_us(buf_t *b, uint64_t ns)
{
    char tmp[32];
    int i = 32;
    uint64_t frac = ns % 1000, ip = ns / 1000;
    tmp[--i] = (char)('0' + frac % 10);
    tmp[--i] = (char)('0' + (frac / 10) % 10);
    tmp[--i] = (char)('0' + frac / 100);
    tmp[--i] = '.';
    do {
        tmp[--i] = (char)('0' + ip % 10);
        ip /= 10;
    } while (ip);
    b_put(b, tmp + i, (size_t)(32 - i));
}

/* value/1000 with 3 decimals (for bandwidth in GB/s) */
#define b_milli b_us

/* ------------------------------------------------------------------ */
/* deterministic PRNG (splitmix64)                                     */
/* ------------------------------------------------------------------ */

static inline uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static inline int64_t rrange(uint64_t *s, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(rnd(s) % (uint64_t)(hi - lo + 1));
}

/* ------------------------------------------------------------------ */
/* GPU activity table                                                   */
/* ------------------------------------------------------------------ */

enum { C_KERNEL, C_MEMCPY, C_MEMSET };

typedef struct {
    const char *name; /* JSON string contents (no escapes needed) */
    int cat;
    uint32_t base_ns; /* mean duration */
    int regs;
    int smem;
    const char *bps, *wps; /* blocks / warps per SM, Kineto prints %f */
    const char *grid, *block;
    int occ;
} kdef_t;

enum {
    K_GEMM_TN, K_GEMM_NN, K_GEMM_NT, K_SGEMM, K_FLASH_FWD, K_FLASH_BWD,
    K_FLASH_BWD_DOT, K_FLASH_BWD_CVT, K_EW_MUL, K_EW_ADD, K_EW_POW,
    K_REDUCE_MEAN, K_RSQRT, K_COPY, K_SILU, K_SILU_BWD, K_CAT, K_NEG,
    K_INDEX_SELECT, K_EMB_BWD, K_SOFTMAX_FWD, K_SOFTMAX_BWD, K_NLL_FWD,
    K_NLL_BWD, K_FILL, K_MTA_ADD, K_FUSED_ADAMW, K_MTA_NORM, K_LPNORM_CLEANUP,
    K_MUL_SCALAR, K_REDUCE_SUM, K_NCCL_AR, K_NCCL_AG,
    K_MEMCPY_HTOD, K_MEMCPY_DTOH, K_MEMCPY_DTOD, K_MEMSET,
    K_COUNT
};

static const kdef_t KDEF[K_COUNT] = {
    [K_GEMM_TN] = {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
                   C_KERNEL, 610000, 168, 232448, "1.000000", "12.000000", "[132, 1, 1]", "[384, 1, 1]", 19},
    [K_GEMM_NN] = {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                   C_KERNEL, 640000, 168, 196608, "1.000000", "8.000000", "[132, 1, 1]", "[256, 1, 1]", 12},
    [K_GEMM_NT] = {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
                   C_KERNEL, 655000, 168, 232448, "1.000000", "12.000000", "[132, 1, 1]", "[384, 1, 1]", 19},
    [K_SGEMM] = {"ampere_sgemm_128x64_tn", C_KERNEL, 41000, 122, 12544, "4.848485", "38.787880",
                 "[8, 40, 2]", "[128, 1, 1]", 50},
    [K_FLASH_FWD] = {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(Flash_fwd_params)",
                     C_KERNEL, 820000, 255, 49152, "3.878788", "15.515152", "[16, 8, 32]", "[128, 1, 1]", 24},
    [K_FLASH_BWD] = {"void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, true, false, false, false, false, true, false>(Flash_bwd_params)",
                     C_KERNEL, 2150000, 255, 114688, "3.878788", "31.030304", "[32, 8, 32]", "[256, 1, 1]", 37},
    [K_FLASH_BWD_DOT] = {"void flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> > >(Flash_bwd_params)",
                         C_KERNEL, 48000, 40, 0, "15.515152", "124.121216", "[32, 8, 32]", "[256, 1, 1]", 92},
    [K_FLASH_BWD_CVT] = {"void flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> > >(Flash_bwd_params, int)",
                         C_KERNEL, 39000, 48, 32768, "15.515152", "124.121216", "[32, 8, 32]", "[256, 1, 1]", 81},
    [K_EW_MUL] = {"void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>)",
                  C_KERNEL, 98000, 26, 0, "1985.939453", "15887.515625", "[262144, 1, 1]", "[128, 1, 1]", 88},
    [K_EW_ADD] = {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
                  C_KERNEL, 97000, 26, 0, "1985.939453", "15887.515625", "[262144, 1, 1]", "[128, 1, 1]", 87},
    [K_EW_POW] = {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase&, float)::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::pow_tensor_scalar_kernel_impl<float, float>(at::TensorIteratorBase&, float)::{lambda(float)#1}, at::detail::Array<char*, 2>)",
                  C_KERNEL, 121000, 24, 0, "1985.939453", "15887.515625", "[262144, 1, 1]", "[128, 1, 1]", 90},
    [K_REDUCE_MEAN] = {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
                       C_KERNEL, 72000, 32, 16, "124.121216", "496.484863", "[16384, 1, 1]", "[32, 16, 1]", 95},
    [K_RSQRT] = {"void at::native::vectorized_elementwise_kernel<4, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::rsqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
                 C_KERNEL, 3100, 20, 0, "0.242424", "0.969697", "[32, 1, 1]", "[128, 1, 1]", 2},
    [K_COPY] = {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
                C_KERNEL, 133000, 30, 0, "1985.939453", "15887.515625", "[262144, 1, 1]", "[128, 1, 1]", 84},
    [K_SILU] = {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
                C_KERNEL, 201000, 28, 0, "5325.575684", "42604.605469", "[702976, 1, 1]", "[128, 1, 1]", 89},
    [K_SILU_BWD] = {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_backward_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3> >(int, at::native::(anonymous namespace)::silu_backward_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3>)",
                    C_KERNEL, 289000, 32, 0, "5325.575684", "42604.605469", "[702976, 1, 1]", "[128, 1, 1]", 86},
    [K_CAT] = {"void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
               C_KERNEL, 104000, 32, 0, "15.515152", "62.060608", "[16384, 2, 1]", "[128, 1, 1]", 78},
    [K_NEG] = {"void at::native::vectorized_elementwise_kernel<4, at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#9}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::neg_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#9}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
               C_KERNEL, 51000, 22, 0, "992.969727", "7943.757812", "[131072, 1, 1]", "[128, 1, 1]", 87},
    [K_INDEX_SELECT] = {"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)",
                        C_KERNEL, 92000, 38, 0, "16.000000", "64.000000", "[2112, 1, 1]", "[128, 1, 1]", 76},
    [K_EMB_BWD] = {"void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, long>(long const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int, int)",
                   C_KERNEL, 310000, 40, 4352, "7.757576", "62.060608", "[128, 1, 1]", "[32, 32, 1]", 93},
    [K_SOFTMAX_FWD] = {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
                       C_KERNEL, 1450000, 37, 64, "124.121216", "1985.939453", "[16384, 1, 1]", "[512, 1, 1]", 96},
    [K_SOFTMAX_BWD] = {"void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, int)",
                       C_KERNEL, 1980000, 40, 64, "124.121216", "1985.939453", "[16384, 1, 1]", "[512, 1, 1]", 95},
    [K_NLL_FWD] = {"void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)",
                   C_KERNEL, 16000, 32, 4096, "0.007576", "0.242424", "[1, 1, 1]", "[1024, 1, 1]", 1},
    [K_NLL_BWD] = {"void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)",
                   C_KERNEL, 9000, 30, 0, "0.007576", "0.242424", "[1, 1, 1]", "[1024, 1, 1]", 1},
    [K_FILL] = {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
                C_KERNEL, 1700, 16, 0, "0.007576", "0.030303", "[1, 1, 1]", "[128, 1, 1]", 0},
    [K_MTA_ADD] = {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float)",
                   C_KERNEL, 188000, 40, 0, "310.303040", "1241.212158", "[40960, 1, 1]", "[512, 1, 1]", 62},
    [K_FUSED_ADAMW] = {"void at::native::(anonymous namespace)::multi_tensor_apply_for_fused_optimizer<5, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 5, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, double, bool, float*, float*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<5>, double*, double, double, double, double, double, double, bool, float*, float*)",
                       C_KERNEL, 1320000, 64, 0, "248.242432", "1985.939453", "[32768, 1, 1]", "[512, 1, 1]", 48},
    [K_MTA_NORM] = {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, 2, float>, float*, int>(at::native::(anonymous namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, 2, float>, float*, int)",
                    C_KERNEL, 151000, 40, 2048, "310.303040", "1241.212158", "[40960, 1, 1]", "[512, 1, 1]", 71},
    [K_LPNORM_CLEANUP] = {"void at::native::(anonymous namespace)::lpnorm_cleanup<float, 2, float, float>(float const*, at::native::(anonymous namespace)::TensorListAddresses, int)",
                          C_KERNEL, 4200, 24, 2048, "1.939394", "31.030304", "[256, 1, 1]", "[512, 1, 1]", 11},
    [K_MUL_SCALAR] = {"void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2>)",
                      C_KERNEL, 64000, 24, 0, "992.969727", "7943.757812", "[131072, 1, 1]", "[128, 1, 1]", 86},
    [K_REDUCE_SUM] = {"void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
                      C_KERNEL, 23000, 38, 16, "31.030304", "124.121216", "[4096, 1, 1]", "[32, 4, 1]", 68},
    [K_NCCL_AR] = {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                   C_KERNEL, 3400000, 96, 0, "0.181818", "2.909091", "[24, 1, 1]", "[512, 1, 1]", 4},
    [K_NCCL_AG] = {"ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
                   C_KERNEL, 1150000, 96, 0, "0.181818", "2.909091", "[24, 1, 1]", "[512, 1, 1]", 4},
    [K_MEMCPY_HTOD] = {"Memcpy HtoD (Pinned -> Device)", C_MEMCPY, 5200, 0, 0, 0, 0, 0, 0, 0},
    [K_MEMCPY_DTOH] = {"Memcpy DtoH (Device -> Pageable)", C_MEMCPY, 2300, 0, 0, 0, 0, 0, 0, 0},
    [K_MEMCPY_DTOD] = {"Memcpy DtoD (Device -> Device)", C_MEMCPY, 36000, 0, 0, 0, 0, 0, 0, 0},
    [K_MEMSET] = {"Memset (Device)", C_MEMSET, 1600, 0, 0, 0, 0, 0, 0, 0},
};

/* ------------------------------------------------------------------ */
/* generator state                                                      */
/* ------------------------------------------------------------------ */

enum { EV_CPU_OP, EV_USER_ANN, EV_MEM, EV_PYTHON };

/* op flags */
enum {
    F_SEQ = 1,      /* forward op recorded by autograd: "Sequence number" */
    F_BWD = 2,      /* backward node: "Sequence number" + "Fwd thread id" */
    F_ALLOC = 4,    /* allocates its output: emits a [memory] event */
    F_STACK = 8,    /* carries a "Call stack" arg (with escapes) */
    F_CONCRETE = 16 /* carries "Concrete Inputs" (with escapes) */
};

typedef struct {
    uint8_t kind;
    uint8_t thread;
    uint16_t flags;
    const char *name; /* JSON-escaped form */
    const char *dims, *types, *extra;
    int64_t num;      /* appended to name when >= 0 (ProfilerStep#N) */
    int64_t coll_seq; /* a collective call's "Seq" in its process group when >= 0 */
    uint64_t ts, dur;
    uint64_t ext_id, rf_id, seq, ev_idx;
    /* [memory] */
    int64_t bytes;
    uint64_t total_alloc, total_res, addr;
} cpu_ev_t;

enum { STREAM_COMPUTE, STREAM_COMM, N_STREAMS };
static const int STREAM_ID[N_STREAMS] = {7, 53};

enum { TH_MAIN, TH_BWD, N_THREADS };

#define RING 96

typedef struct {
    /* config */
    int rank, world, device;
    uint64_t pid, tid[N_THREADS];
    int kineto_layout;
    int modules; /* --modules: nn.Module frames around the layers and their parts */
    uint64_t module_n; /* instance numbers of the frames' modules */

    uint64_t rng;
    uint64_t ext_id, corr, rf_id, ev_idx, seq, bseq;
    uint64_t cpu_t[N_THREADS];
    uint64_t stream_free[N_STREAMS];
    uint64_t stream_first[N_STREAMS]; /* first activity of the step */
    int cur;                          /* current cpu thread */

    cpu_ev_t *ev;
    size_t nev, evcap;
    size_t stack[64];
    int sp;

    buf_t gpu; /* runtime + GPU + flow events of the current step */
    buf_t cpu; /* cpu events of the current step */

    /* memory model */
    uint64_t ring_addr[RING], ring_bytes[RING];
    int ring_head, ring_n;
    uint64_t total_alloc, total_res, next_addr;

    /* truth */
    uint64_t t_count[K_COUNT], t_total[K_COUNT], t_min[K_COUNT], t_max[K_COUNT];

    /* event stats (for --stats) */
    uint64_t n_cpu, n_ann, n_mem, n_rt, n_gpu, n_flow, n_meta;

    char pg_extra_ar[1024], pg_extra_ag[1024];
    int64_t coll_seq; /* the next collective's number in the default group (c10d's Seq) */
    int slow_rank;    /* --slow-rank: this rank arrives SLOW_NS late at every collective (-1: none) */
    uint64_t slow_ns; /* ... and the other ranks' collective kernels wait that long for it */
    int slow_cause;   /* --slow-cause: SLOW_GPU, SLOW_HOST or SLOW_COMPUTE */
    uint64_t force_dur; /* a kernel launched now lasts this long (0: its kind's) */
} gen_t;

/* layout separators: one event per line, or Kineto's multi-line layout */
typedef struct {
    const char *open;      /* before first field */
    const char *nl;        /* between the name/pid/tid, ts/dur, args groups */
    const char *args_open; /* after "args": */
    const char *args_nl;   /* between arg groups (kineto puts some on new lines) */
    const char *args_close;
    const char *close;
} layout_t;

static const layout_t LAYOUT_LINE = {"  {", ", ", "{", ", ", "}", "}"};
static const layout_t LAYOUT_KINETO = {"  {\n    ", ",\n    ", "{\n      ", ",\n      ",
                                       "\n    }", "\n  }"};
static const layout_t *L = &LAYOUT_LINE;

static void put_sep(buf_t *b, const char *s) { b_str(b, s); }

/* ------------------------------------------------------------------ */
/* CPU op tree                                                          */
/* ------------------------------------------------------------------ */

static cpu_ev_t *new_ev(gen_t *g)
{
    if (g->nev == g->evcap) {
        g->evcap = g->evcap ? g->evcap * 2 : 4096;
        g->ev = realloc(g->ev, g->evcap * sizeof *g->ev);
        if (!g->ev)
            die("out of memory");
    }
    cpu_ev_t *e = &g->ev[g->nev++];
    memset(e, 0, sizeof *e);
    e->num = -1;
    e->coll_seq = -1;
    e->thread = (uint8_t)g->cur;
    return e;
}

static inline void adv(gen_t *g, int64_t lo, int64_t hi)
{
    g->cpu_t[g->cur] += (uint64_t)rrange(&g->rng, lo, hi);
}

static void mem_event(gen_t *g, int64_t bytes, uint64_t addr)
{
    cpu_ev_t *e = new_ev(g);
    e->kind = EV_MEM;
    e->ts = g->cpu_t[g->cur];
    e->bytes = bytes;
    e->addr = addr;
    e->total_alloc = g->total_alloc;
    e->total_res = g->total_res;
    e->ev_idx = g->ev_idx++;
    g->n_mem++;
}

static void mem_free_oldest(gen_t *g)
{
    int i = (g->ring_head - g->ring_n + RING) % RING;
    uint64_t bytes = g->ring_bytes[i];
    g->total_alloc -= bytes;
    g->ring_n--;
    mem_event(g, -(int64_t)bytes, g->ring_addr[i]);
}

static void mem_alloc(gen_t *g, uint64_t bytes)
{
    /* only a sample of the allocations is traced, to keep [memory] a few % */
    if (rnd(&g->rng) % 4 != 0) {
        adv(g, 150, 600);
        return;
    }
    if (g->ring_n == RING)
        mem_free_oldest(g);
    bytes = (bytes + 511) & ~(uint64_t)511;
    uint64_t addr = g->next_addr;
    g->next_addr += (bytes + 0x1fffff) & ~(uint64_t)0x1fffff;
    if (g->next_addr > 0x7f5000000000ull)
        g->next_addr = 0x7f3a00000000ull;
    g->ring_addr[g->ring_head] = addr;
    g->ring_bytes[g->ring_head] = bytes;
    g->ring_head = (g->ring_head + 1) % RING;
    g->ring_n++;
    g->total_alloc += bytes;
    while (g->total_res < g->total_alloc + (1ull << 30))
        g->total_res += 2ull << 30;
    adv(g, 150, 600);
    mem_event(g, (int64_t)bytes, addr);
    /* keep the live set bounded: free something now and then */
    if (rnd(&g->rng) % 3 == 0 && g->ring_n > 8)
        mem_free_oldest(g);
}

static size_t op_open_k(gen_t *g, int kind, const char *name, const char *dims,
                        const char *types, const char *extra, unsigned flags)
{
    adv(g, 300, 2500);
    cpu_ev_t *e = new_ev(g);
    e->kind = (uint8_t)kind;
    e->flags = (uint16_t)flags;
    e->name = name;
    e->dims = dims;
    e->types = types;
    e->extra = extra;
    e->ts = g->cpu_t[g->cur];
    e->ext_id = g->ext_id++;
    e->rf_id = g->rf_id++;
    e->ev_idx = g->ev_idx++;
    if (flags & F_SEQ)
        e->seq = g->seq++;
    if (flags & F_BWD)
        e->seq = g->bseq > 0 ? g->bseq-- : 0;
    if (kind == EV_USER_ANN)
        g->n_ann++;
    else
        g->n_cpu++;
    size_t idx = g->nev - 1;
    if (g->sp >= 64)
        die("op stack overflow");
    g->stack[g->sp++] = idx;
    adv(g, 200, 1500);
    return idx;
}

static size_t op_open(gen_t *g, const char *name, const char *dims, const char *types,
                      unsigned flags)
{
    return op_open_k(g, EV_CPU_OP, name, dims, types, NULL, flags);
}

static void op_close(gen_t *g)
{
    adv(g, 200, 1800);
    size_t idx = g->stack[--g->sp];
    cpu_ev_t *e = &g->ev[idx];
    e->dur = g->cpu_t[g->cur] - e->ts;
}

static void leaf(gen_t *g, const char *name, const char *dims, const char *types,
                 unsigned flags)
{
    op_open(g, name, dims, types, flags);
    adv(g, 400, 3500);
    op_close(g);
}

static void leaf_alloc(gen_t *g, const char *name, const char *dims, const char *types,
                       uint64_t bytes)
{
    op_open(g, name, dims, types, F_ALLOC);
    mem_alloc(g, bytes);
    adv(g, 300, 2500);
    op_close(g);
}

static void annot_open(gen_t *g, const char *name)
{
    op_open_k(g, EV_USER_ANN, name, NULL, NULL, NULL, 0);
}

/* An nn.Module frame as with_stack / with_modules record it (a
 * python_function span "nn.Module: Class_N"), with --modules only. It is
 * opened and closed at the current time and draws nothing from the random
 * stream, so the rest of the trace is the same with and without them. */
static void module_open(gen_t *g, const char *cls)
{
    if (!g->modules)
        return;
    cpu_ev_t *e = new_ev(g);
    e->kind = EV_PYTHON;
    e->name = cls;
    e->num = (int64_t)g->module_n++;
    e->ts = g->cpu_t[g->cur];
    e->ev_idx = g->ev_idx++;
    if (g->sp >= 64)
        die("op stack overflow");
    g->stack[g->sp++] = g->nev - 1;
}

static void module_close(gen_t *g)
{
    if (!g->modules)
        return;
    cpu_ev_t *e = &g->ev[g->stack[--g->sp]];
    e->dur = g->cpu_t[g->cur] - e->ts;
}

/* The External id of the innermost op (module frames have none). */
static uint64_t cur_ext(gen_t *g)
{
    for (int i = g->sp; i > 0; i--)
        if (g->ev[g->stack[i - 1]].kind != EV_PYTHON)
            return g->ev[g->stack[i - 1]].ext_id;
    return 0;
}

/* ------------------------------------------------------------------ */
/* runtime / GPU / flow serialization                                   */
/* ------------------------------------------------------------------ */

static void emit_runtime(gen_t *g, const char *name, int cbid, uint64_t ts, uint64_t dur,
                         uint64_t corr, uint64_t ext)
{
    buf_t *b = &g->gpu;
    put_sep(b, L->open);
    B_LIT(b, "\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"");
    b_str(b, name);
    B_LIT(b, "\", \"pid\": ");
    b_u64(b, g->pid);
    B_LIT(b, ", \"tid\": ");
    b_u64(b, g->tid[g->cur]);
    put_sep(b, L->nl);
    B_LIT(b, "\"ts\": ");
    b_us(b, ts);
    B_LIT(b, ", \"dur\": ");
    b_us(b, dur);
    put_sep(b, L->nl);
    B_LIT(b, "\"args\": ");
    put_sep(b, L->args_open);
    B_LIT(b, "\"External id\": ");
    b_u64(b, ext);
    put_sep(b, L->args_nl);
    B_LIT(b, "\"cbid\": ");
    b_u64(b, (uint64_t)cbid);
    B_LIT(b, ", \"correlation\": ");
    b_u64(b, corr);
    put_sep(b, L->args_close);
    put_sep(b, L->close);
    B_LIT(b, ",\n");
    g->n_rt++;
}

static void emit_flow(gen_t *g, int start, uint64_t corr, uint64_t pid, uint64_t tid,
                      uint64_t ts)
{
    buf_t *b = &g->gpu;
    put_sep(b, L->open);
    if (start)
        B_LIT(b, "\"ph\": \"s\", \"id\": ");
    else
        B_LIT(b, "\"ph\": \"f\", \"id\": ");
    b_u64(b, corr);
    B_LIT(b, ", \"pid\": ");
    b_u64(b, pid);
    B_LIT(b, ", \"tid\": ");
    b_u64(b, tid);
    B_LIT(b, ", \"ts\": ");
    b_us(b, ts);
    put_sep(b, L->nl);
    if (start)
        B_LIT(b, "\"cat\": \"ac2g\", \"name\": \"ac2g\"");
    else
        B_LIT(b, "\"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"");
    put_sep(b, L->close);
    B_LIT(b, ",\n");
    g->n_flow++;
}

static void emit_gpu(gen_t *g, int k, int stream, uint64_t ts, uint64_t dur, uint64_t corr,
                     uint64_t ext, uint64_t bytes)
{
    const kdef_t *d = &KDEF[k];
    buf_t *b = &g->gpu;
    int sid = STREAM_ID[stream];
    put_sep(b, L->open);
    if (d->cat == C_KERNEL)
        B_LIT(b, "\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"");
    else if (d->cat == C_MEMCPY)
        B_LIT(b, "\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"");
    else
        B_LIT(b, "\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"");
    b_str(b, d->name);
    B_LIT(b, "\", \"pid\": ");
    b_u64(b, (uint64_t)g->device);
    B_LIT(b, ", \"tid\": ");
    b_u64(b, (uint64_t)sid);
    put_sep(b, L->nl);
    B_LIT(b, "\"ts\": ");
    b_us(b, ts);
    B_LIT(b, ", \"dur\": ");
    b_us(b, dur);
    put_sep(b, L->nl);
    B_LIT(b, "\"args\": ");
    put_sep(b, L->args_open);
    B_LIT(b, "\"External id\": ");
    b_u64(b, ext);
    put_sep(b, L->args_nl);
    if (d->cat == C_KERNEL)
        B_LIT(b, "\"queued\": 0, ");
    B_LIT(b, "\"device\": ");
    b_u64(b, (uint64_t)g->device);
    B_LIT(b, ", \"context\": 1");
    put_sep(b, L->args_nl);
    B_LIT(b, "\"stream\": ");
    b_u64(b, (uint64_t)sid);
    B_LIT(b, ", \"correlation\": ");
    b_u64(b, corr);
    put_sep(b, L->args_nl);
    if (d->cat == C_KERNEL) {
        B_LIT(b, "\"registers per thread\": ");
        b_u64(b, (uint64_t)d->regs);
        put_sep(b, L->args_nl);
        B_LIT(b, "\"shared memory\": ");
        b_u64(b, (uint64_t)d->smem);
        put_sep(b, L->args_nl);
        B_LIT(b, "\"blocks per SM\": ");
        b_str(b, d->bps);
        put_sep(b, L->args_nl);
        B_LIT(b, "\"warps per SM\": ");
        b_str(b, d->wps);
        put_sep(b, L->args_nl);
        B_LIT(b, "\"grid\": ");
        b_str(b, d->grid);
        put_sep(b, L->args_nl);
        B_LIT(b, "\"block\": ");
        b_str(b, d->block);
        put_sep(b, L->args_nl);
        B_LIT(b, "\"est. achieved occupancy %\": ");
        b_u64(b, (uint64_t)d->occ);
    } else {
        B_LIT(b, "\"bytes\": ");
        b_u64(b, bytes);
        B_LIT(b, ", \"memory bandwidth (GB/s)\": ");
        /* bytes per ns == GB/s; print with 3 decimals using integers */
        b_milli(b, dur ? bytes * 1000 / dur : 0);
    }
    put_sep(b, L->args_close);
    put_sep(b, L->close);
    B_LIT(b, ",\n");
    g->n_gpu++;

    if (g->t_count[k] == 0 || dur < g->t_min[k])
        g->t_min[k] = dur;
    if (dur > g->t_max[k])
        g->t_max[k] = dur;
    g->t_count[k]++;
    g->t_total[k] += dur;
}

/* Launch GPU work k on a stream from the current CPU thread.  The runtime
 * call happens at the current CPU time; the activity starts after the
 * launch and after everything already queued on that stream. */
/* How the straggler comes late to its collectives: its collective kernels
 * start late after their calls (gpu), its host calls them late (host), or
 * a longer compute kernel runs ahead of them (compute). */
enum { SLOW_GPU, SLOW_HOST, SLOW_COMPUTE };

static void launch_ex(gen_t *g, int k, int stream, uint64_t bytes, uint64_t after)
{
    const kdef_t *d = &KDEF[k];
    const char *rt;
    int cbid;
    if (d->cat == C_MEMCPY) {
        rt = "cudaMemcpyAsync";
        cbid = 41;
    } else if (d->cat == C_MEMSET) {
        rt = "cudaMemsetAsync";
        cbid = 51;
    } else if (k == K_GEMM_TN || k == K_GEMM_NN || k == K_GEMM_NT || k == K_FLASH_FWD ||
               k == K_FLASH_BWD) {
        rt = "cudaLaunchKernelExC";
        cbid = 430;
    } else {
        rt = "cudaLaunchKernel";
        cbid = 211;
    }
    adv(g, 300, 1200);
    g->corr += (uint64_t)rrange(&g->rng, 1, 3);
    uint64_t corr = g->corr;
    uint64_t ext = cur_ext(g);
    uint64_t rts = g->cpu_t[g->cur];
    uint64_t rdur = (uint64_t)rrange(&g->rng, 2400, 9000);
    if (rnd(&g->rng) % 64 == 0)
        rdur += (uint64_t)rrange(&g->rng, 10000, 60000); /* occasional slow launch */

    uint64_t start = rts + (uint64_t)rrange(&g->rng, 1800, 6000);
    if (start < g->stream_free[stream])
        start = g->stream_free[stream];
    if (start < after)
        start = after;
    uint64_t dur;
    if (d->cat == C_KERNEL) {
        int64_t base = d->base_ns;
        dur = g->force_dur ? g->force_dur : (uint64_t)rrange(&g->rng, base - base / 10, base + base / 10);
        if ((k == K_NCCL_AR || k == K_NCCL_AG) && g->slow_rank >= 0) { /* a straggler: all end together */
            if (g->rank != g->slow_rank) dur += g->slow_ns; /* the others wait for it */
            else if (g->slow_cause == SLOW_GPU) start += g->slow_ns; /* it arrives late */
        }
    } else {
        /* memcpy/memset: duration from bytes at a plausible bandwidth */
        uint64_t bw; /* bytes per us */
        if (k == K_MEMCPY_HTOD)
            bw = 20000;
        else if (k == K_MEMCPY_DTOH)
            bw = 2000;
        else if (k == K_MEMCPY_DTOD)
            bw = 1200000;
        else
            bw = 1500000;
        dur = d->base_ns / 2 + bytes * 1000 / bw + (uint64_t)rrange(&g->rng, 0, 700);
    }
    g->stream_free[stream] = start + dur + (uint64_t)rrange(&g->rng, 600, 2200);
    if (!g->stream_first[stream])
        g->stream_first[stream] = start;

    emit_gpu(g, k, stream, start, dur, corr, ext, bytes);
    emit_flow(g, 0, corr, (uint64_t)g->device, (uint64_t)STREAM_ID[stream], start);
    emit_runtime(g, rt, cbid, rts, rdur, corr, ext);
    emit_flow(g, 1, corr, g->pid, g->tid[g->cur], rts);
    g->cpu_t[g->cur] = rts + rdur;
}

static void launch(gen_t *g, int k) { launch_ex(g, k, STREAM_COMPUTE, 0, 0); }

/* runtime call without GPU activity (no flow) */
static void rt_call(gen_t *g, const char *name, int cbid, int64_t lo, int64_t hi)
{
    adv(g, 200, 900);
    g->corr += (uint64_t)rrange(&g->rng, 1, 2);
    uint64_t ts = g->cpu_t[g->cur];
    uint64_t dur = (uint64_t)rrange(&g->rng, lo, hi);
    emit_runtime(g, name, cbid, ts, dur, g->corr, cur_ext(g));
    g->cpu_t[g->cur] = ts + dur;
}

static void rt_sync(gen_t *g, int stream)
{
    adv(g, 200, 900);
    g->corr += 1;
    uint64_t ts = g->cpu_t[g->cur];
    uint64_t end = ts + (uint64_t)rrange(&g->rng, 1500, 4000);
    if (end < g->stream_free[stream] + 1000)
        end = g->stream_free[stream] + (uint64_t)rrange(&g->rng, 1000, 3000);
    emit_runtime(g, "cudaStreamSynchronize", 131, ts, end - ts, g->corr, cur_ext(g));
    g->cpu_t[g->cur] = end;
}

/* ------------------------------------------------------------------ */
/* model: shapes (B=8, S=2048, H=4096, FF=11008, 32 heads of 128)      */
/* ------------------------------------------------------------------ */

#define BF16 "\"c10::BFloat16\""
#define X3 "[8, 2048, 4096]"

static const char *T_BF = "[" BF16 "]";
static const char *T_BF2 = "[" BF16 ", " BF16 "]";
static const char *T_LIN = "[" BF16 ", " BF16 ", \"\"]";
static const char *D_X = "[" X3 "]";
static const char *D_XX = "[" X3 ", " X3 "]";
static const char *D_X_S = "[" X3 ", []]";

/* ops with escapes in names and args, to exercise JSON string decoding */
static const char *N_CUSTOM = "mylib::log_metric(\\\"r\\u00e9sum\\u00e9\\\", C:\\\\runs\\\\exp1)";
static const char *CALL_STACK =
    "\"Call stack\": \"train.py(212): train_step;C:\\\\work\\\\model.py(88): forward \\\"attn\\\";caf\\u00e9.py(3): <module>\"";
static const char *CONCRETE =
    "\"Concrete Inputs\": [\"\", \"\\\"none\\\"\", \"caf\\u00e9\", \"tab\\there\", \"\"]";

static void op_t(gen_t *g, const char *dims)
{
    op_open(g, "aten::t", dims, T_BF, 0);
    op_open(g, "aten::transpose", dims, "[" BF16 ", \"\", \"\"]", 0);
    leaf(g, "aten::as_strided", dims, "[" BF16 ", \"\", \"\", \"\"]", 0);
    op_close(g);
    op_close(g);
}

/* nn.Linear: aten::linear -> t / matmul(view, mm, _unsafe_view) */
static void op_linear(gen_t *g, const char *wdims, int k)
{
    module_open(g, "nn.Module: Linear_");
    op_open(g, "aten::linear", wdims, T_LIN, F_SEQ);
    op_t(g, "[[4096, 4096]]");
    op_open(g, "aten::matmul", "[[8, 2048, 4096], [4096, 4096]]", T_BF2, 0);
    leaf(g, "aten::view", "[[8, 2048, 4096], []]", "[" BF16 ", \"\"]", 0);
    op_open(g, "aten::mm", "[[16384, 4096], [4096, 4096]]", T_BF2, F_ALLOC);
    mem_alloc(g, 16384ull * 4096 * 2);
    launch(g, k);
    op_close(g);
    leaf(g, "aten::_unsafe_view", "[[16384, 4096], []]", "[" BF16 ", \"\"]", 0);
    op_close(g);
    op_close(g);
    module_close(g);
}

static void op_binary(gen_t *g, const char *name, int k)
{
    op_open(g, name, D_XX, T_BF2, F_SEQ | F_ALLOC);
    mem_alloc(g, 8ull * 2048 * 4096 * 2);
    launch(g, k);
    op_close(g);
}

static void op_rmsnorm(gen_t *g)
{
    module_open(g, "nn.Module: RMSNorm_");
    op_open(g, "aten::to", "[" X3 ", [], [], [], []]",
            "[" BF16 ", \"Scalar\", \"Scalar\", \"Scalar\", \"\"]", F_CONCRETE);
    op_open(g, "aten::_to_copy", "[" X3 ", [], [], [], [], []]",
            "[" BF16 ", \"Scalar\", \"\", \"\", \"\", \"Scalar\"]", F_SEQ);
    leaf_alloc(g, "aten::empty_strided", "[[], [], [], [], [], []]",
         "[\"\", \"\", \"Scalar\", \"\", \"\", \"Scalar\"]", 8ull * 2048 * 4096 * 4);
    op_open(g, "aten::copy_", D_XX, "[\"float\", " BF16 ", \"Scalar\"]", 0);
    launch(g, K_COPY);
    op_close(g);
    op_close(g);
    op_close(g);
    op_open(g, "aten::pow", D_X_S, "[\"float\", \"Scalar\"]", F_SEQ | F_ALLOC);
    mem_alloc(g, 8ull * 2048 * 4096 * 4);
    launch(g, K_EW_POW);
    op_close(g);
    op_open(g, "aten::mean", "[" X3 ", [], [], []]", "[\"float\", \"\", \"Scalar\", \"\"]", F_SEQ);
    launch(g, K_REDUCE_MEAN);
    op_close(g);
    op_open(g, "aten::add", "[[8, 2048, 1], [], []]", "[\"float\", \"Scalar\", \"Scalar\"]", F_SEQ);
    launch(g, K_EW_ADD);
    op_close(g);
    op_open(g, "aten::rsqrt", "[[8, 2048, 1]]", "[\"float\"]", F_SEQ);
    launch(g, K_RSQRT);
    op_close(g);
    op_binary(g, "aten::mul", K_EW_MUL);
    op_binary(g, "aten::mul", K_EW_MUL);
    module_close(g);
}

static void op_rotary(gen_t *g)
{
    for (int i = 0; i < 2; i++) {
        op_binary(g, "aten::mul", K_EW_MUL);
        leaf(g, "aten::slice", "[[8, 32, 2048, 128], [], [], [], []]",
             "[" BF16 ", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]", 0);
        leaf(g, "aten::slice", "[[8, 32, 2048, 128], [], [], [], []]",
             "[" BF16 ", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]", 0);
        op_open(g, "aten::neg", "[[8, 32, 2048, 64]]", T_BF, F_SEQ);
        launch(g, K_NEG);
        op_close(g);
        op_open(g, "aten::cat", "[[], []]", "[\"TensorList\", \"Scalar\"]", F_SEQ | F_ALLOC);
        mem_alloc(g, 8ull * 32 * 2048 * 128 * 2);
        launch(g, K_CAT);
        op_close(g);
        op_binary(g, "aten::mul", K_EW_MUL);
        op_binary(g, "aten::add", K_EW_ADD);
    }
}

static void op_attention(gen_t *g)
{
    static const char *qkv = "[[8, 32, 2048, 128], [8, 32, 2048, 128], [8, 32, 2048, 128], [], [], [], [], []]";
    op_open(g, "aten::scaled_dot_product_attention", qkv,
            "[" BF16 ", " BF16 ", " BF16 ", \"\", \"Scalar\", \"Scalar\", \"\", \"Scalar\"]", 0);
    op_open(g, "aten::_scaled_dot_product_flash_attention", qkv,
            "[" BF16 ", " BF16 ", " BF16 ", \"Scalar\", \"Scalar\", \"Scalar\", \"\", \"\"]", F_SEQ);
    leaf(g, "aten::transpose", "[[8, 32, 2048, 128], [], []]", "[" BF16 ", \"Scalar\", \"Scalar\"]", 0);
    leaf(g, "aten::transpose", "[[8, 32, 2048, 128], [], []]", "[" BF16 ", \"Scalar\", \"Scalar\"]", 0);
    leaf(g, "aten::transpose", "[[8, 32, 2048, 128], [], []]", "[" BF16 ", \"Scalar\", \"Scalar\"]", 0);
    op_open(g, "aten::_flash_attention_forward", qkv,
            "[" BF16 ", " BF16 ", " BF16 ", \"\", \"\", \"Scalar\", \"Scalar\", \"Scalar\"]", 0);
    leaf_alloc(g, "aten::empty_like", "[[8, 2048, 32, 128], [], [], [], [], []]",
         "[" BF16 ", \"\", \"\", \"\", \"\", \"\"]", 8ull * 2048 * 4096 * 2);
    leaf_alloc(g, "aten::empty", "[[], [], [], [], [], []]",
         "[\"\", \"Scalar\", \"Scalar\", \"\", \"\", \"\"]", 8ull * 32 * 2048 * 4);
    rt_call(g, "cudaFuncSetAttribute", 276, 1200, 3000);
    launch(g, K_FLASH_FWD);
    op_close(g);
    leaf(g, "aten::transpose", "[[8, 2048, 32, 128], [], []]", "[" BF16 ", \"Scalar\", \"Scalar\"]", 0);
    op_close(g);
    op_close(g);
}

/* Before a collective on the straggler: its host falls behind, or a longer
 * compute kernel is queued (the collective waits for the compute stream).
 * Returns whether the collective must wait for the compute stream. */
static int slow_ahead(gen_t *g)
{
    if (g->slow_rank < 0 || g->rank != g->slow_rank) return 0;
    if (g->slow_cause == SLOW_HOST) g->cpu_t[g->cur] += g->slow_ns;
    if (g->slow_cause != SLOW_COMPUTE) return 0;
    g->force_dur = g->slow_ns;
    launch_ex(g, K_GEMM_NN, STREAM_COMPUTE, 0, 0);
    g->force_dur = 0;
    return 1;
}

static void all_gather(gen_t *g)
{
    int behind_compute = slow_ahead(g);
    annot_open(g, "nccl:_all_gather_base");
    size_t c = op_open_k(g, EV_CPU_OP, "record_param_comms", "[[65536000], [2048000], [], [], [], [], [], [], [], []]",
              "[" BF16 ", " BF16 ", \"Int\", \"Int\", \"Int\", \"\", \"\", \"Int\", \"Int\", \"Int\"]",
              g->pg_extra_ag, 0);
    g->ev[c].coll_seq = g->coll_seq++;
    rt_call(g, "cudaEventRecord", 135, 1200, 3500);
    rt_call(g, "cudaStreamWaitEvent", 146, 1000, 2500);
    launch_ex(g, K_NCCL_AG, STREAM_COMM, 0, behind_compute ? g->stream_free[STREAM_COMPUTE] : 0);
    rt_call(g, "cudaEventRecord", 135, 1200, 3500);
    op_close(g);
    op_close(g);
}

/* FSDP flat-parameter bookkeeping: many small CPU ops, no GPU work */
static const char *PDIMS[9] = {"[[12288, 4096]]", "[[4096, 4096]]", "[[11008, 4096]]", "[[11008, 4096]]",
                               "[[4096, 11008]]", "[[4096]]", "[[4096]]", "[[12288]]", "[[4096]]"};

static void fsdp_unflatten(gen_t *g)
{
    op_open(g, "aten::split_with_sizes", "[[65536000], [], []]", "[" BF16 ", \"\", \"Scalar\"]", 0);
    for (int i = 0; i < 9; i++)
        leaf(g, "aten::as_strided", "[[65536000], [], [], []]", "[" BF16 ", \"\", \"\", \"\"]", 0);
    op_close(g);
    for (int i = 0; i < 9; i++) {
        leaf(g, "aten::view", PDIMS[i], "[" BF16 ", \"\"]", 0);
        leaf(g, "aten::_has_compatible_shallow_copy_type", "[" X3 ", [65536000]]", T_BF2, 0);
        leaf(g, "aten::set_", "[[4096, 4096], [4096, 4096]]", T_BF2, 0);
    }
}

static void fsdp_reshard(gen_t *g)
{
    for (int i = 0; i < 9; i++) {
        op_open(g, "aten::record_stream", PDIMS[i], "[" BF16 ", \"\"]", 0);
        op_close(g);
        leaf(g, "aten::set_", "[[65536000], [2048000]]", T_BF2, 0);
    }
}

static void fwd_layer(gen_t *g, int layer)
{
    module_open(g, "nn.Module: Block_");
    annot_open(g, "FullyShardedDataParallel._pre_forward");
    all_gather(g);
    fsdp_unflatten(g);
    op_close(g);
    /* compute waits for the gathered parameters */
    uint64_t gathered = g->stream_free[STREAM_COMM];
    rt_call(g, "cudaStreamWaitEvent", 146, 900, 2200);
    if (g->stream_free[STREAM_COMPUTE] < gathered)
        g->stream_free[STREAM_COMPUTE] = gathered;

    if (layer % 4 == 1) {
        op_open_k(g, EV_CPU_OP, N_CUSTOM, "[[], []]", "[\"\", \"Scalar\"]", NULL, F_STACK);
        adv(g, 2000, 9000);
        op_close(g);
    }
    op_rmsnorm(g);
    module_open(g, "nn.Module: Attention_");
    op_linear(g, "[" X3 ", [12288, 4096], []]", K_GEMM_TN);
    leaf(g, "aten::view", "[[8, 2048, 12288], []]", "[" BF16 ", \"\"]", 0);
    op_open(g, "aten::split", "[[8, 2048, 12288], [], []]", "[" BF16 ", \"\", \"Scalar\"]", F_SEQ);
    for (int i = 0; i < 3; i++)
        leaf(g, "aten::narrow", "[[8, 2048, 12288], [], [], []]",
             "[" BF16 ", \"Scalar\", \"Scalar\", \"Scalar\"]", 0);
    op_close(g);
    for (int i = 0; i < 3; i++) {
        leaf(g, "aten::view", "[[8, 2048, 4096], []]", "[" BF16 ", \"\"]", F_SEQ);
        leaf(g, "aten::transpose", "[[8, 2048, 32, 128], [], []]",
             "[" BF16 ", \"Scalar\", \"Scalar\"]", F_SEQ);
    }
    op_rotary(g);
    op_attention(g);
    leaf(g, "aten::reshape", "[[8, 2048, 32, 128], []]", "[" BF16 ", \"\"]", F_SEQ);
    op_linear(g, "[" X3 ", [4096, 4096], []]", K_GEMM_TN);
    module_close(g); /* Attention */
    op_binary(g, "aten::add", K_EW_ADD);
    op_rmsnorm(g);
    module_open(g, "nn.Module: MLP_");
    op_linear(g, "[" X3 ", [11008, 4096], []]", K_GEMM_TN);
    op_open(g, "aten::silu", "[[8, 2048, 11008]]", T_BF, F_SEQ | F_ALLOC);
    mem_alloc(g, 8ull * 2048 * 11008 * 2);
    launch(g, K_SILU);
    op_close(g);
    op_linear(g, "[" X3 ", [11008, 4096], []]", K_GEMM_TN);
    op_binary(g, "aten::mul", K_EW_MUL);
    op_linear(g, "[[8, 2048, 11008], [4096, 11008], []]", K_GEMM_TN);
    module_close(g); /* MLP */
    op_binary(g, "aten::add", K_EW_ADD);
    annot_open(g, "FullyShardedDataParallel._post_forward");
    fsdp_reshard(g);
    op_close(g);
    module_close(g); /* Block */
}

/* backward of one autograd node: wrapper + node + body */
static void bwd_node_open(gen_t *g, const char *wrapper, const char *node, const char *dims,
                          const char *types)
{
    op_open(g, wrapper, NULL, NULL, F_BWD);
    g->bseq++; /* node shares the wrapper's sequence number */
    op_open(g, node, dims, types, F_BWD);
}

static void bwd_node_close(gen_t *g)
{
    op_close(g);
    op_close(g);
}

static void bwd_mm(gen_t *g)
{
    bwd_node_open(g, "autograd::engine::evaluate_function: MmBackward0", "MmBackward0",
                  "[[16384, 4096]]", T_BF);
    op_t(g, "[[4096, 4096]]");
    op_open(g, "aten::mm", "[[16384, 4096], [4096, 4096]]", T_BF2, F_ALLOC);
    mem_alloc(g, 16384ull * 4096 * 2);
    launch(g, K_GEMM_NN);
    op_close(g);
    op_t(g, "[[16384, 4096]]");
    op_open(g, "aten::mm", "[[4096, 16384], [16384, 4096]]", T_BF2, F_ALLOC);
    mem_alloc(g, 4096ull * 4096 * 2);
    launch(g, K_GEMM_NT);
    op_close(g);
    op_t(g, "[[4096, 4096]]");
    bwd_node_close(g);
    /* gradient lands in the flat parameter */
    bwd_node_open(g, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
                  "torch::autograd::AccumulateGrad", "[[4096, 4096]]", T_BF);
    leaf(g, "aten::detach", "[[4096, 4096]]", T_BF, 0);
    leaf(g, "detach", "[[4096, 4096]]", T_BF, 0);
    bwd_node_close(g);
}

static void bwd_ew(gen_t *g, const char *wrapper, const char *node, int k1, int k2)
{
    bwd_node_open(g, wrapper, node, D_X, T_BF);
    op_binary(g, "aten::mul", k1);
    if (k2 >= 0)
        op_binary(g, "aten::mul", k2);
    bwd_node_close(g);
}

static void bwd_rmsnorm(gen_t *g)
{
    bwd_ew(g, "autograd::engine::evaluate_function: MulBackward0", "MulBackward0", K_EW_MUL, K_EW_MUL);
    bwd_ew(g, "autograd::engine::evaluate_function: MulBackward0", "MulBackward0", K_EW_MUL, K_EW_MUL);
    bwd_node_open(g, "autograd::engine::evaluate_function: RsqrtBackward0", "RsqrtBackward0",
                  "[[8, 2048, 1]]", "[\"float\"]");
    op_open(g, "aten::pow", "[[8, 2048, 1], []]", "[\"float\", \"Scalar\"]", F_ALLOC);
    mem_alloc(g, 8ull * 2048 * 4);
    launch(g, K_RSQRT);
    op_close(g);
    op_open(g, "aten::mul", "[[8, 2048, 1], []]", "[\"float\", \"Scalar\"]", 0);
    launch(g, K_RSQRT);
    op_close(g);
    bwd_node_close(g);
    bwd_node_open(g, "autograd::engine::evaluate_function: MeanBackward1", "MeanBackward1",
                  "[[8, 2048, 1]]", "[\"float\"]");
    leaf(g, "aten::expand", "[[8, 2048, 1], [], []]", "[\"float\", \"\", \"Scalar\"]", 0);
    op_open(g, "aten::div", "[" X3 ", []]", "[\"float\", \"Scalar\"]", F_ALLOC);
    mem_alloc(g, 8ull * 2048 * 4096 * 4);
    launch(g, K_MUL_SCALAR);
    op_close(g);
    bwd_node_close(g);
    bwd_ew(g, "autograd::engine::evaluate_function: PowBackward0", "PowBackward0", K_EW_POW, K_EW_MUL);
    bwd_node_open(g, "autograd::engine::evaluate_function: ToCopyBackward0", "ToCopyBackward0", D_X,
                  "[\"float\"]");
    op_open(g, "aten::to", "[" X3 ", [], [], [], []]",
            "[\"float\", \"Scalar\", \"Scalar\", \"Scalar\", \"\"]", 0);
    op_open(g, "aten::_to_copy", "[" X3 ", [], [], [], [], []]",
            "[\"float\", \"Scalar\", \"\", \"\", \"\", \"Scalar\"]", 0);
    leaf_alloc(g, "aten::empty_strided", "[[], [], [], [], [], []]",
         "[\"\", \"\", \"Scalar\", \"\", \"\", \"Scalar\"]", 8ull * 2048 * 4096 * 2);
    op_open(g, "aten::copy_", D_XX, "[" BF16 ", \"float\", \"Scalar\"]", 0);
    launch(g, K_COPY);
    op_close(g);
    op_close(g);
    op_close(g);
    bwd_node_close(g);
}

static void bwd_attention(gen_t *g)
{
    bwd_node_open(g, "autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0",
                  "ScaledDotProductFlashAttentionBackward0", "[[8, 32, 2048, 128]]", T_BF);
    op_open(g, "aten::_scaled_dot_product_flash_attention_backward",
            "[[8, 32, 2048, 128], [8, 32, 2048, 128], [8, 32, 2048, 128], [8, 32, 2048, 128], [8, 32, 2048, 128], [8, 32, 2048], [], [], [], [], [], [], [], []]",
            "[" BF16 ", " BF16 ", " BF16 ", " BF16 ", " BF16 ", \"float\", \"\", \"\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"\", \"\"]",
            0);
    op_open(g, "aten::_flash_attention_backward",
            "[[8, 2048, 32, 128], [8, 2048, 32, 128], [8, 2048, 32, 128], [8, 2048, 32, 128], [8, 2048, 32, 128], [8, 32, 2048], [], [], [], [], [], [], [], []]",
            "[" BF16 ", " BF16 ", " BF16 ", " BF16 ", " BF16 ", \"float\", \"\", \"\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"\", \"\"]",
            0);
    for (int i = 0; i < 3; i++) {
        leaf_alloc(g, "aten::empty_like", "[[8, 2048, 32, 128], [], [], [], [], []]",
             "[" BF16 ", \"\", \"\", \"\", \"\", \"\"]", 8ull * 2048 * 4096 * 2);
    }
    leaf_alloc(g, "aten::empty", "[[], [], [], [], [], []]", "[\"\", \"Scalar\", \"Scalar\", \"\", \"\", \"\"]",
               8ull * 2048 * 4096 * 4);
    op_open(g, "aten::zero_", "[[8, 2048, 32, 128]]", "[\"float\"]", 0);
    op_open(g, "aten::fill_", "[[8, 2048, 32, 128], []]", "[\"float\", \"Scalar\"]", 0);
    launch_ex(g, K_MEMSET, STREAM_COMPUTE, 8ull * 2048 * 4096 * 4, 0);
    op_close(g);
    op_close(g);
    launch(g, K_FLASH_BWD_DOT);
    rt_call(g, "cudaFuncSetAttribute", 276, 1200, 3000);
    launch(g, K_FLASH_BWD);
    launch(g, K_FLASH_BWD_CVT);
    op_close(g);
    op_close(g);
    bwd_node_close(g);
}

static void all_reduce_bucket(gen_t *g)
{
    slow_ahead(g); /* the reduction waits for the compute stream anyway */
    annot_open(g, "nccl:all_reduce");
    size_t c = op_open_k(g, EV_CPU_OP, "record_param_comms",
              "[[[25165824]], [[25165824]], [], [], [], [], [], [], [], []]",
              "[\"GenericList\", \"GenericList\", \"Int\", \"Int\", \"Int\", \"\", \"\", \"Int\", \"Int\", \"Int\"]",
              g->pg_extra_ar, 0);
    g->ev[c].coll_seq = g->coll_seq++;
    rt_call(g, "cudaEventRecord", 135, 1200, 3500);
    rt_call(g, "cudaStreamWaitEvent", 146, 1000, 2500);
    /* the reduction needs the gradients produced so far */
    launch_ex(g, K_NCCL_AR, STREAM_COMM, 0, g->stream_free[STREAM_COMPUTE]);
    rt_call(g, "cudaEventRecord", 135, 1200, 3500);
    op_close(g);
    op_close(g);
}

static void bwd_layer(gen_t *g, int layer)
{
    annot_open(g, "FullyShardedDataParallel._pre_backward_hook");
    all_gather(g);
    fsdp_unflatten(g);
    op_close(g);
    bwd_node_open(g, "autograd::engine::evaluate_function: AddBackward0", "AddBackward0", D_X, T_BF);
    bwd_node_close(g);
    bwd_mm(g);                                                   /* down proj */
    bwd_ew(g, "autograd::engine::evaluate_function: MulBackward0", "MulBackward0", K_EW_MUL, K_EW_MUL);
    bwd_mm(g);                                                   /* up proj */
    bwd_node_open(g, "autograd::engine::evaluate_function: SiluBackward0", "SiluBackward0",
                  "[[8, 2048, 11008]]", T_BF);
    op_open(g, "aten::silu_backward", "[[8, 2048, 11008], [8, 2048, 11008]]", T_BF2, F_ALLOC);
    mem_alloc(g, 8ull * 2048 * 11008 * 2);
    launch(g, K_SILU_BWD);
    op_close(g);
    bwd_node_close(g);
    bwd_mm(g);                                                   /* gate proj */
    bwd_node_open(g, "autograd::engine::evaluate_function: AddBackward0", "AddBackward0", D_X, T_BF);
    op_binary(g, "aten::add", K_EW_ADD);
    bwd_node_close(g);
    bwd_rmsnorm(g);
    bwd_mm(g);                                                   /* o proj */
    bwd_attention(g);
    for (int i = 0; i < 2; i++) {
        bwd_node_open(g, "autograd::engine::evaluate_function: CatBackward0", "CatBackward0",
                      "[[8, 32, 2048, 128]]", T_BF);
        leaf(g, "aten::narrow", "[[8, 32, 2048, 128], [], [], []]",
             "[" BF16 ", \"Scalar\", \"Scalar\", \"Scalar\"]", 0);
        leaf(g, "aten::slice", "[[8, 32, 2048, 128], [], [], [], []]",
             "[" BF16 ", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]", 0);
        bwd_node_close(g);
        bwd_ew(g, "autograd::engine::evaluate_function: NegBackward0", "NegBackward0", K_NEG, -1);
        bwd_ew(g, "autograd::engine::evaluate_function: MulBackward0", "MulBackward0", K_EW_MUL, K_EW_ADD);
    }
    bwd_node_open(g, "autograd::engine::evaluate_function: SplitBackward0", "SplitBackward0",
                  "[[8, 2048, 4096], [8, 2048, 4096], [8, 2048, 4096]]", "[" BF16 ", " BF16 ", " BF16 "]");
    op_open(g, "aten::cat", "[[], []]", "[\"TensorList\", \"Scalar\"]", F_ALLOC);
    mem_alloc(g, 8ull * 2048 * 12288 * 2);
    launch(g, K_CAT);
    op_close(g);
    bwd_node_close(g);
    bwd_mm(g);                                                   /* qkv proj */
    bwd_rmsnorm(g);
    annot_open(g, "FullyShardedDataParallel._post_backward_hook");
    fsdp_unflatten(g);
    fsdp_reshard(g);
    op_close(g);
    if (layer % 4 == 0)
        all_reduce_bucket(g);
}

static void step(gen_t *g, int64_t stepno, int layers)
{
    g->cur = TH_MAIN;
    g->stream_first[0] = g->stream_first[1] = 0;
    size_t step_idx = op_open_k(g, EV_USER_ANN, "ProfilerStep#", NULL, NULL, NULL, 0);
    g->ev[step_idx].num = stepno;

    /* data: input ids + labels to the device */
    for (int i = 0; i < 2; i++) {
        op_open(g, "aten::to", "[[8, 2048], [], [], [], [], []]",
                "[\"long int\", \"\", \"Scalar\", \"\", \"\", \"Scalar\"]", i ? 0 : F_CONCRETE);
        op_open(g, "aten::_to_copy", "[[8, 2048], [], [], [], [], [], []]",
                "[\"long int\", \"Scalar\", \"\", \"\", \"\", \"Scalar\", \"\"]", 0);
        leaf_alloc(g, "aten::empty_strided", "[[], [], [], [], [], []]",
             "[\"\", \"\", \"Scalar\", \"\", \"\", \"Scalar\"]", 8ull * 2048 * 8);
        op_open(g, "aten::copy_", "[[8, 2048], [8, 2048], []]", "[\"long int\", \"long int\", \"Scalar\"]", 0);
        launch_ex(g, K_MEMCPY_HTOD, STREAM_COMPUTE, 8ull * 2048 * 8, 0);
        op_close(g);
        op_close(g);
        op_close(g);
    }

    annot_open(g, "Optimizer.zero_grad#AdamW.zero_grad");
    op_close(g);

    annot_open(g, "## forward ##");
    module_open(g, "nn.Module: Transformer_");
    op_open(g, "aten::embedding", "[[32000, 4096], [8, 2048], [], [], []]",
            "[" BF16 ", \"long int\", \"Scalar\", \"Scalar\", \"Scalar\"]", F_SEQ);
    leaf(g, "aten::reshape", "[[8, 2048], []]", "[\"long int\", \"\"]", 0);
    op_open(g, "aten::index_select", "[[32000, 4096], [], [16384]]", "[" BF16 ", \"Scalar\", \"long int\"]",
            F_ALLOC);
    mem_alloc(g, 16384ull * 4096 * 2);
    launch(g, K_INDEX_SELECT);
    op_close(g);
    leaf(g, "aten::view", "[[16384, 4096], []]", "[" BF16 ", \"\"]", 0);
    op_close(g);
    for (int l = 0; l < layers; l++)
        fwd_layer(g, l);
    op_rmsnorm(g);
    op_linear(g, "[" X3 ", [32000, 4096], []]", K_GEMM_TN);
    module_close(g); /* Transformer */
    op_open(g, "aten::to", "[[8, 2048, 32000], [], [], [], []]",
            "[" BF16 ", \"Scalar\", \"Scalar\", \"Scalar\", \"\"]", 0);
    op_open(g, "aten::_to_copy", "[[8, 2048, 32000], [], [], [], [], []]",
            "[" BF16 ", \"Scalar\", \"\", \"\", \"\", \"Scalar\"]", F_SEQ);
    leaf_alloc(g, "aten::empty_strided", "[[], [], [], [], [], []]",
         "[\"\", \"\", \"Scalar\", \"\", \"\", \"Scalar\"]", 16384ull * 32000 * 4);
    op_open(g, "aten::copy_", "[[8, 2048, 32000], [8, 2048, 32000], []]",
            "[\"float\", " BF16 ", \"Scalar\"]", 0);
    launch(g, K_COPY);
    op_close(g);
    op_close(g);
    op_close(g);
    /* small fp32 auxiliary head (router/value) */
    op_open(g, "aten::addmm", "[[1], [16384, 4096], [4096, 1], [], []]",
            "[\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]", F_SEQ);
    launch(g, K_SGEMM);
    op_close(g);
    op_open(g, "aten::cross_entropy_loss", "[[16384, 32000], [16384], [], [], [], []]",
            "[\"float\", \"long int\", \"\", \"Scalar\", \"Scalar\", \"Scalar\"]", 0);
    op_open(g, "aten::log_softmax", "[[16384, 32000], [], []]", "[\"float\", \"Scalar\", \"\"]", 0);
    op_open(g, "aten::_log_softmax", "[[16384, 32000], [], []]", "[\"float\", \"Scalar\", \"Scalar\"]",
            F_SEQ | F_ALLOC);
    mem_alloc(g, 16384ull * 32000 * 4);
    launch(g, K_SOFTMAX_FWD);
    op_close(g);
    op_close(g);
    op_open(g, "aten::nll_loss_nd", "[[16384, 32000], [16384], [], [], []]",
            "[\"float\", \"long int\", \"\", \"Scalar\", \"Scalar\"]", 0);
    op_open(g, "aten::nll_loss", "[[16384, 32000], [16384], [], [], []]",
            "[\"float\", \"long int\", \"\", \"Scalar\", \"Scalar\"]", 0);
    op_open(g, "aten::nll_loss_forward", "[[16384, 32000], [16384], [], [], []]",
            "[\"float\", \"long int\", \"\", \"Scalar\", \"Scalar\"]", F_SEQ);
    launch(g, K_NLL_FWD);
    op_close(g);
    op_close(g);
    op_close(g);
    op_close(g);
    op_close(g); /* ## forward ## */

    /* backward runs on the autograd thread while the main thread blocks */
    op_open(g, "aten::ones_like", "[[], [], [], [], [], []]", "[\"float\", \"\", \"\", \"\", \"\", \"\"]", 0);
    op_open(g, "aten::fill_", "[[], []]", "[\"float\", \"Scalar\"]", 0);
    launch(g, K_FILL);
    op_close(g);
    op_close(g);
    uint64_t bstart = g->cpu_t[TH_MAIN] + (uint64_t)rrange(&g->rng, 5000, 20000);
    if (g->cpu_t[TH_BWD] < bstart)
        g->cpu_t[TH_BWD] = bstart;
    g->cur = TH_BWD;
    g->bseq = g->seq - 1;
    bwd_node_open(g, "autograd::engine::evaluate_function: NllLossBackward0", "NllLossBackward0", "[[]]",
                  "[\"float\"]");
    op_open(g, "aten::nll_loss_backward", "[[], [16384, 32000], [16384], [], [], [], []]",
            "[\"float\", \"float\", \"long int\", \"\", \"Scalar\", \"Scalar\", \"float\"]", F_ALLOC);
    mem_alloc(g, 16384ull * 32000 * 4);
    op_open(g, "aten::zero_", "[[16384, 32000]]", "[\"float\"]", 0);
    op_open(g, "aten::fill_", "[[16384, 32000], []]", "[\"float\", \"Scalar\"]", 0);
    launch_ex(g, K_MEMSET, STREAM_COMPUTE, 16384ull * 32000 * 4, 0);
    op_close(g);
    op_close(g);
    launch(g, K_NLL_BWD);
    op_close(g);
    bwd_node_close(g);
    bwd_node_open(g, "autograd::engine::evaluate_function: LogSoftmaxBackward0", "LogSoftmaxBackward0",
                  "[[16384, 32000]]", "[\"float\"]");
    op_open(g, "aten::_log_softmax_backward_data", "[[16384, 32000], [16384, 32000], [], []]",
            "[\"float\", \"float\", \"Scalar\", \"Scalar\"]", F_ALLOC);
    mem_alloc(g, 16384ull * 32000 * 4);
    launch(g, K_SOFTMAX_BWD);
    op_close(g);
    bwd_node_close(g);
    bwd_node_open(g, "autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0", "[[16384, 1]]",
                  "[\"float\"]");
    op_open(g, "aten::mm", "[[16384, 1], [1, 4096]]", "[\"float\", \"float\"]", 0);
    launch(g, K_SGEMM);
    op_close(g);
    op_open(g, "aten::sum", "[[16384, 1], [], [], []]", "[\"float\", \"\", \"Scalar\", \"\"]", 0);
    launch(g, K_REDUCE_SUM);
    op_close(g);
    bwd_node_close(g);
    bwd_mm(g); /* lm head */
    for (int l = layers - 1; l >= 0; l--)
        bwd_layer(g, l);
    bwd_node_open(g, "autograd::engine::evaluate_function: EmbeddingBackward0", "EmbeddingBackward0",
                  "[[8, 2048, 4096]]", T_BF);
    op_open(g, "aten::embedding_backward", "[[8, 2048, 4096], [8, 2048], [], [], [], []]",
            "[" BF16 ", \"long int\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]", 0);
    op_open(g, "aten::embedding_dense_backward", "[[8, 2048, 4096], [8, 2048], [], [], []]",
            "[" BF16 ", \"long int\", \"Scalar\", \"Scalar\", \"Scalar\"]", F_ALLOC);
    mem_alloc(g, 32000ull * 4096 * 4);
    launch(g, K_EMB_BWD);
    op_close(g);
    op_close(g);
    bwd_node_close(g);
    all_reduce_bucket(g);
    /* the main thread resumes after the autograd thread is done */
    g->cur = TH_MAIN;
    if (g->cpu_t[TH_MAIN] < g->cpu_t[TH_BWD])
        g->cpu_t[TH_MAIN] = g->cpu_t[TH_BWD] + (uint64_t)rrange(&g->rng, 3000, 15000);

    /* grad clipping + optimizer */
    op_open(g, "aten::_foreach_norm", "[[], []]", "[\"TensorList\", \"Scalar\"]", 0);
    launch(g, K_MTA_NORM);
    launch(g, K_LPNORM_CLEANUP);
    op_close(g);
    op_open(g, "aten::stack", "[[], [], []]", "[\"TensorList\", \"Scalar\", \"\"]", 0);
    op_open(g, "aten::cat", "[[], []]", "[\"TensorList\", \"Scalar\"]", 0);
    launch(g, K_CAT);
    op_close(g);
    op_close(g);
    op_open(g, "aten::_foreach_mul_", "[[], []]", "[\"TensorList\", \"\"]", 0);
    launch(g, K_MTA_ADD);
    op_close(g);
    annot_open(g, "Optimizer.step#AdamW.step");
    op_open(g, "aten::_foreach_add_", "[[], [], []]", "[\"TensorList\", \"Scalar\", \"Scalar\"]", 0);
    launch(g, K_MTA_ADD);
    op_close(g);
    op_open(g, "aten::_fused_adamw_",
            "[[], [], [], [], [], [], [], [], [], [], [], [], [], [], []]",
            "[\"TensorList\", \"TensorList\", \"TensorList\", \"TensorList\", \"TensorList\", \"TensorList\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\", \"\", \"\"]",
            0);
    launch(g, K_FUSED_ADAMW);
    op_close(g);
    /* copy the updated master weights back */
    for (int i = 0; i < 2; i++) {
        op_open(g, "aten::copy_", "[[4096, 4096], [4096, 4096], []]", "[" BF16 ", " BF16 ", \"Scalar\"]", 0);
        launch_ex(g, K_MEMCPY_DTOD, STREAM_COMPUTE, 4096ull * 4096 * 2, 0);
        op_close(g);
    }
    op_close(g); /* Optimizer.step */

    /* loss.item(): device -> host copy + sync */
    op_open(g, "aten::item", "[[]]", "[\"float\"]", 0);
    op_open(g, "aten::_local_scalar_dense", "[[]]", "[\"float\"]", 0);
    launch_ex(g, K_MEMCPY_DTOH, STREAM_COMPUTE, 4, 0);
    rt_sync(g, STREAM_COMPUTE);
    op_close(g);
    op_close(g);
    op_close(g); /* ProfilerStep */
    if (g->sp != 0)
        die("internal: unbalanced op stack");
    adv(g, 20000, 90000); /* dataloader, python overhead between steps */
    if (g->cpu_t[TH_BWD] < g->cpu_t[TH_MAIN])
        g->cpu_t[TH_BWD] = g->cpu_t[TH_MAIN];
}

/* ------------------------------------------------------------------ */
/* CPU event serialization                                              */
/* ------------------------------------------------------------------ */

/* "Concrete Inputs" (from "Input type") and "Input Strides" (from "Input
 * Dims", contiguous layout) are derived once per distinct static string and
 * cached by address. */
typedef struct {
    const char *key;
    int kind;
    char *val;
} dcache_t;

static dcache_t DCACHE[2048];

static char *make_concrete(const char *types)
{
    buf_t b = {0};
    B_LIT(&b, "[");
    int i = 0;
    for (const char *p = types; *p; p++) {
        if (*p != '"')
            continue;
        const char *q = strchr(p + 1, '"');
        if (!q)
            break;
        if (i)
            B_LIT(&b, ", ");
        if (q - p - 1 == 6 && !strncmp(p + 1, "Scalar", 6)) {
            static const char *vals[] = {"\"1\"", "\"-1\"", "\"0\"", "\"False\"", "\"2\"", "\"1e-06\""};
            b_str(&b, vals[i % 6]);
        } else {
            B_LIT(&b, "\"\"");
        }
        i++;
        p = q;
    }
    B_LIT(&b, "]");
    b_put(&b, "", 1);
    return b.p;
}

static char *make_strides(const char *dims)
{
    buf_t b = {0};
    const char *p = dims;
    B_LIT(&b, "[");
    if (*p == '[')
        p++;
    int first = 1;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p != '[')
            break;
        /* one element: a list of ints, or something nested */
        const char *q = p + 1;
        while (*q == ' ')
            q++;
        if (!first)
            B_LIT(&b, ", ");
        first = 0;
        if (*q == '[') { /* nested (GenericList): skip it */
            int depth = 0;
            for (; *p; p++) {
                if (*p == '[')
                    depth++;
                else if (*p == ']' && --depth == 0) {
                    p++;
                    break;
                }
            }
            B_LIT(&b, "[]");
            continue;
        }
        uint64_t v[16];
        int n = 0;
        while (*q && *q != ']') {
            char *end;
            unsigned long long x = strtoull(q, &end, 10);
            if (end == q) {
                q++;
                continue;
            }
            if (n < 16)
                v[n++] = x;
            q = end;
        }
        uint64_t st = 1, out[16];
        for (int i = n - 1; i >= 0; i--) {
            out[i] = st;
            st *= v[i] ? v[i] : 1;
        }
        B_LIT(&b, "[");
        for (int i = 0; i < n; i++) {
            if (i)
                B_LIT(&b, ", ");
            b_u64(&b, out[i]);
        }
        B_LIT(&b, "]");
        p = *q ? q + 1 : q;
    }
    B_LIT(&b, "]");
    b_put(&b, "", 1);
    return b.p;
}

static const char *derived(const char *key, int kind)
{
    size_t h = (((uintptr_t)key >> 3) * 2654435761u + (size_t)kind) % 2048;
    for (;;) {
        dcache_t *c = &DCACHE[h];
        if (c->key == key && c->kind == kind)
            return c->val;
        if (!c->key) {
            c->key = key;
            c->kind = kind;
            c->val = kind ? make_strides(key) : make_concrete(key);
            return c->val;
        }
        h = (h + 1) % 2048;
    }
}

static void emit_cpu_events(gen_t *g)
{
    buf_t *b = &g->cpu;
    for (size_t i = 0; i < g->nev; i++) {
        const cpu_ev_t *e = &g->ev[i];
        put_sep(b, L->open);
        if (e->kind == EV_MEM) {
            B_LIT(b, "\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\"");
            put_sep(b, L->nl);
            B_LIT(b, "\"pid\": ");
            b_u64(b, g->pid);
            B_LIT(b, ", \"tid\": ");
            b_u64(b, g->tid[e->thread]);
            put_sep(b, L->nl);
            B_LIT(b, "\"ts\": ");
            b_us(b, e->ts);
            put_sep(b, L->nl);
            B_LIT(b, "\"args\": ");
            put_sep(b, L->args_open);
            B_LIT(b, "\"Total Reserved\": ");
            b_u64(b, e->total_res);
            B_LIT(b, ", \"Total Allocated\": ");
            b_u64(b, e->total_alloc);
            B_LIT(b, ", \"Bytes\": ");
            b_i64(b, e->bytes);
            B_LIT(b, ", \"Addr\": ");
            b_u64(b, e->addr);
            B_LIT(b, ", \"Device Id\": ");
            b_u64(b, (uint64_t)g->device);
            B_LIT(b, ", \"Device Type\": 1, \"Ev Idx\": ");
            b_u64(b, e->ev_idx);
            put_sep(b, L->args_close);
            put_sep(b, L->close);
            B_LIT(b, ",\n");
            continue;
        }
        /* the head every span shares: category, name, thread, times */
        if (e->kind == EV_PYTHON)
            B_LIT(b, "\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"");
        else if (e->kind == EV_USER_ANN)
            B_LIT(b, "\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"");
        else
            B_LIT(b, "\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"");
        b_str(b, e->name);
        if (e->num >= 0)
            b_i64(b, e->num);
        B_LIT(b, "\", \"pid\": ");
        b_u64(b, g->pid);
        B_LIT(b, ", \"tid\": ");
        b_u64(b, g->tid[e->thread]);
        put_sep(b, L->nl);
        B_LIT(b, "\"ts\": ");
        b_us(b, e->ts);
        B_LIT(b, ", \"dur\": ");
        b_us(b, e->dur);
        put_sep(b, L->nl);
        B_LIT(b, "\"args\": ");
        put_sep(b, L->args_open);
        if (e->kind == EV_PYTHON) {
            B_LIT(b, "\"Python id\": ");
            b_u64(b, e->ev_idx);
            B_LIT(b, ", \"Python thread\": 0");
            put_sep(b, L->args_close);
            put_sep(b, L->close);
            B_LIT(b, ",\n");
            continue;
        }
        B_LIT(b, "\"External id\": ");
        b_u64(b, e->ext_id);
        B_LIT(b, ",\"Record function id\": ");
        b_u64(b, e->rf_id);
        if (e->flags & (F_SEQ | F_BWD)) {
            B_LIT(b, ", \"Sequence number\": ");
            b_u64(b, e->seq);
        }
        if (e->flags & F_BWD)
            B_LIT(b, ", \"Fwd thread id\": 1");
        if (e->extra) {
            B_LIT(b, ", ");
            b_str(b, e->extra);
        }
        if (e->coll_seq >= 0) {
            B_LIT(b, ", \"Seq\": ");
            b_u64(b, (uint64_t)e->coll_seq);
        }
        if (e->flags & F_CONCRETE) {
            B_LIT(b, ", ");
            b_str(b, CONCRETE);
        } else if (e->types) {
            B_LIT(b, ", \"Concrete Inputs\": ");
            b_str(b, derived(e->types, 0));
        }
        if (e->types) {
            B_LIT(b, ", \"Input type\": ");
            b_str(b, e->types);
        }
        if (e->dims) {
            B_LIT(b, ", \"Input Strides\": ");
            b_str(b, derived(e->dims, 1));
            B_LIT(b, ", \"Input Dims\": ");
            b_str(b, e->dims);
        }
        B_LIT(b, ", \"Ev Idx\": ");
        b_u64(b, e->ev_idx);
        if (e->flags & F_STACK) {
            B_LIT(b, ", ");
            b_str(b, CALL_STACK);
        }
        put_sep(b, L->args_close);
        put_sep(b, L->close);
        B_LIT(b, ",\n");
    }
    g->nev = 0;
}

static void emit_gpu_annotation(gen_t *g, int64_t stepno, uint64_t start, uint64_t end)
{
    buf_t *b = &g->gpu;
    put_sep(b, L->open);
    B_LIT(b, "\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#");
    b_i64(b, stepno);
    B_LIT(b, "\", \"pid\": ");
    b_u64(b, (uint64_t)g->device);
    B_LIT(b, ", \"tid\": ");
    b_u64(b, (uint64_t)STREAM_ID[STREAM_COMPUTE]);
    put_sep(b, L->nl);
    B_LIT(b, "\"ts\": ");
    b_us(b, start);
    B_LIT(b, ", \"dur\": ");
    b_us(b, end - start);
    put_sep(b, L->nl);
    B_LIT(b, "\"args\": ");
    put_sep(b, L->args_open);
    B_LIT(b, "\"External id\": ");
    b_u64(b, g->ext_id);
    put_sep(b, L->args_close);
    put_sep(b, L->close);
    B_LIT(b, ",\n");
}

/* ------------------------------------------------------------------ */
/* trailer: metadata events, Trace span, Iteration Start                */
/* ------------------------------------------------------------------ */

static void meta(buf_t *b, gen_t *g, const char *what, uint64_t ts, const char *pid, uint64_t tid,
                 const char *key, const char *sval, int64_t ival)
{
    put_sep(b, L->open);
    B_LIT(b, "\"name\": \"");
    b_str(b, what);
    B_LIT(b, "\", \"ph\": \"M\", \"ts\": ");
    b_us(b, ts);
    B_LIT(b, ", \"pid\": ");
    b_str(b, pid);
    B_LIT(b, ", \"tid\": ");
    b_u64(b, tid);
    put_sep(b, L->nl);
    B_LIT(b, "\"args\": ");
    put_sep(b, L->args_open);
    B_LIT(b, "\"");
    b_str(b, key);
    B_LIT(b, "\": ");
    if (sval) {
        B_LIT(b, "\"");
        b_str(b, sval);
        B_LIT(b, "\"");
    } else {
        b_i64(b, ival);
    }
    put_sep(b, L->args_close);
    put_sep(b, L->close);
    B_LIT(b, ",\n");
    g->n_meta++;
}

static void trailer(buf_t *b, gen_t *g, uint64_t t0, uint64_t tend)
{
    char pid[32], dev[32], lab[32], nm[64];
    snprintf(pid, sizeof pid, "%" PRIu64, g->pid);
    snprintf(dev, sizeof dev, "%d", g->device);
    snprintf(lab, sizeof lab, "GPU %d", g->device);

    meta(b, g, "process_name", t0, pid, 0, "name", "python3", 0);
    meta(b, g, "process_labels", t0, pid, 0, "labels", "CPU", 0);
    meta(b, g, "process_sort_index", t0, pid, 0, "sort_index", NULL, (int64_t)g->pid);
    meta(b, g, "process_name", t0, dev, 0, "name", "python3", 0);
    meta(b, g, "process_labels", t0, dev, 0, "labels", lab, 0);
    meta(b, g, "process_sort_index", t0, dev, 0, "sort_index", NULL, 16777216 + g->device);
    for (int s = 0; s < N_STREAMS; s++) {
        snprintf(nm, sizeof nm, "stream %d ", STREAM_ID[s]);
        meta(b, g, "thread_name", t0, dev, (uint64_t)STREAM_ID[s], "name", nm, 0);
        meta(b, g, "thread_sort_index", t0, dev, (uint64_t)STREAM_ID[s], "sort_index", NULL, STREAM_ID[s]);
    }
    snprintf(nm, sizeof nm, "thread %" PRIu64 " (pt_main_thread)", g->tid[TH_MAIN]);
    meta(b, g, "thread_name", t0, pid, g->tid[TH_MAIN], "name", nm, 0);
    meta(b, g, "thread_sort_index", t0, pid, g->tid[TH_MAIN], "sort_index", NULL, (int64_t)g->tid[TH_MAIN]);
    snprintf(nm, sizeof nm, "thread %" PRIu64 " (pt_autograd_0)", g->tid[TH_BWD]);
    meta(b, g, "thread_name", t0, pid, g->tid[TH_BWD], "name", nm, 0);
    meta(b, g, "thread_sort_index", t0, pid, g->tid[TH_BWD], "sort_index", NULL, (int64_t)g->tid[TH_BWD]);

    put_sep(b, L->open);
    B_LIT(b, "\"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
    b_us(b, t0);
    B_LIT(b, ", \"dur\": ");
    b_us(b, tend - t0);
    put_sep(b, L->nl);
    B_LIT(b, "\"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\"");
    put_sep(b, L->nl);
    B_LIT(b, "\"name\": \"PyTorch Profiler (0)\"");
    put_sep(b, L->nl);
    B_LIT(b, "\"args\": ");
    put_sep(b, L->args_open);
    B_LIT(b, "\"Op count\": 0");
    put_sep(b, L->args_close);
    put_sep(b, L->close);
    B_LIT(b, ",\n");
    meta(b, g, "process_sort_index", t0, "\"Spans\"", 0, "sort_index", NULL, 536870912);

    put_sep(b, L->open);
    B_LIT(b, "\"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\"");
    put_sep(b, L->nl);
    B_LIT(b, "\"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
    b_us(b, t0);
    put_sep(b, L->close);
    B_LIT(b, ",\n");

    put_sep(b, L->open);
    B_LIT(b, "\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\"");
    put_sep(b, L->nl);
    B_LIT(b, "\"pid\": \"\", \"tid\": \"\", \"ts\": ");
    b_us(b, tend + 1000);
    put_sep(b, L->close);
    B_LIT(b, "\n");
}

static void header(buf_t *b, gen_t *g)
{
    int ndev = 8; /* one 8-GPU node is described */
    B_LIT(b, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
    for (int i = 0; i < ndev; i++) {
        B_LIT(b, "    {\n      \"id\": ");
        b_u64(b, (uint64_t)i);
        B_LIT(b, ", \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 84929216512,\n"
                 "      \"computeMajor\": 9, \"computeMinor\": 0,\n"
                 "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
                 "      \"regsPerBlock\": 65536, \"regsPerMultiprocessor\": 65536, \"warpSize\": 32,\n"
                 "      \"sharedMemPerBlock\": 49152, \"sharedMemPerMultiprocessor\": 233472,\n"
                 "      \"numSms\": 132, \"sharedMemPerBlockOptin\": 232448\n    }");
        if (i + 1 < ndev)
            B_LIT(b, ",");
        B_LIT(b, "\n");
    }
    B_LIT(b, "  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ");
    b_u64(b, (uint64_t)g->rank);
    B_LIT(b, ", \"world_size\": ");
    b_u64(b, (uint64_t)g->world);
    B_LIT(b, "},\n  \"record_shapes\": 1,\n  \"traceEvents\": [\n");
}

/* ------------------------------------------------------------------ */
/* truth CSV                                                            */
/* ------------------------------------------------------------------ */

static gen_t *g_sort;

static int cmp_truth(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    if (g_sort->t_total[i] != g_sort->t_total[j])
        return g_sort->t_total[i] > g_sort->t_total[j] ? -1 : 1;
    return strcmp(KDEF[i].name, KDEF[j].name);
}

static void write_csv_field(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_truth(gen_t *g, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot open %s: %s", path, strerror(errno));
    int idx[K_COUNT], n = 0;
    for (int k = 0; k < K_COUNT; k++)
        if (g->t_count[k])
            idx[n++] = k;
    g_sort = g;
    qsort(idx, (size_t)n, sizeof idx[0], cmp_truth);
    fputs("name,count,total_ns,min_ns,max_ns\n", f);
    for (int i = 0; i < n; i++) {
        int k = idx[i];
        /* GPU names contain no JSON escapes, so decoded == raw form */
        write_csv_field(f, KDEF[k].name);
        fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", g->t_count[k], g->t_total[k],
                g->t_min[k], g->t_max[k]);
    }
    if (fclose(f) != 0)
        die("writing %s failed", path);
}

/* ------------------------------------------------------------------ */
/* main                                                                 */
/* ------------------------------------------------------------------ */

static uint64_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        die("bad --size '%s'", s);
    uint64_t mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1ull << 10; end++; break;
    case 'm': case 'M': mul = 1ull << 20; end++; break;
    case 'g': case 'G': mul = 1ull << 30; end++; break;
    case 't': case 'T': mul = 1ull << 40; end++; break;
    default: break;
    }
    if (*end == 'i')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end)
        die("bad --size '%s' (use e.g. 1048576, 250M, 1G)", s);
    return (uint64_t)(v * (double)mul);
}

static long parse_int(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        die("bad value for %s: '%s'", opt, s);
    return v;
}

static void usage(FILE *f)
{
    fputs("usage: trainprof-gentrace [--size BYTES|250M|1G] [--seed N] [--rank R] [--world W]\n"
          "                          [--slow-rank R --slow-us X [--slow-cause gpu|host|compute]]\n"
          "                          [--steps N] [--layers N] [--layout line|kineto] [--modules]\n"
          "                          [--truth FILE.csv] [--stats] [-o FILE]\n"
          "\n"
          "Writes a deterministic Kineto-shaped PyTorch trace (plain JSON) to FILE or stdout.\n"
          "  --size    stop adding ProfilerSteps once this many bytes were written\n"
          "            (K/M/G suffixes are powers of 1024; default 10M)\n"
          "  --steps   emit at most N steps; without an explicit --size, exactly N\n"
          "  --layers  transformer layers per step (default 16)\n"
          "  --layout  'line' (default): one event per line; 'kineto': Kineto's own\n"
          "            multi-line layout\n"
          "  --modules nn.Module frames (python_function spans, as with_modules records\n"
          "            them) around the model, its blocks, attention, MLP, norms and\n"
          "            linears; the other events stay the same\n"
          "  --slow-rank, --slow-us  rank R arrives X us late at every collective and the\n"
          "            other ranks' collective kernels wait X us for it (all end together):\n"
          "            a straggler for trainprof collectives; --slow-cause says how it comes\n"
          "            late: its collective kernels start late after their calls (gpu, the\n"
          "            default), its host calls them late (host), or a compute kernel X us\n"
          "            long runs ahead of each (compute)\n"
          "  --truth   write per-GPU-activity-name ground truth CSV\n"
          "  --stats   print event counts by category to stderr\n",
          f);
}

int main(int argc, char **argv)
{
    uint64_t size = 10ull << 20;
    int size_given = 0;
    uint64_t seed = 1;
    long rank = 0, world = 8, steps = 0, layers = 16, slow_rank = -1, slow_us = 0;
    int slow_cause = SLOW_GPU;
    const char *out_path = NULL, *truth_path = NULL;
    int stats = 0, modules = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
#define NEEDV()                                   \
    do {                                          \
        if (i + 1 >= argc)                        \
            die("%s needs a value", a);           \
        v = argv[++i];                            \
    } while (0)
        if (!strcmp(a, "--size")) {
            NEEDV();
            size = parse_size(v);
            size_given = 1;
        } else if (!strcmp(a, "--seed")) {
            NEEDV();
            char *end;
            errno = 0;
            seed = strtoull(v, &end, 0);
            if (errno || end == v || *end)
                die("bad --seed '%s'", v);
        } else if (!strcmp(a, "--rank")) {
            NEEDV();
            rank = parse_int(a, v, 0, 1 << 20);
        } else if (!strcmp(a, "--world")) {
            NEEDV();
            world = parse_int(a, v, 1, 1 << 20);
        } else if (!strcmp(a, "--slow-rank")) {
            NEEDV();
            slow_rank = parse_int(a, v, 0, 1 << 20);
        } else if (!strcmp(a, "--slow-cause")) {
            NEEDV();
            slow_cause = !strcmp(v, "gpu") ? SLOW_GPU : !strcmp(v, "host") ? SLOW_HOST : !strcmp(v, "compute") ? SLOW_COMPUTE : -1;
            if (slow_cause < 0) die("bad value for --slow-cause: '%s' (gpu, host or compute)", v);
        } else if (!strcmp(a, "--slow-us")) {
            NEEDV();
            slow_us = parse_int(a, v, 0, 1L << 30);
        } else if (!strcmp(a, "--steps")) {
            NEEDV();
            steps = parse_int(a, v, 1, 1L << 30);
        } else if (!strcmp(a, "--layers")) {
            NEEDV();
            layers = parse_int(a, v, 1, 4096);
        } else if (!strcmp(a, "--layout")) {
            NEEDV();
            if (!strcmp(v, "line"))
                L = &LAYOUT_LINE;
            else if (!strcmp(v, "kineto"))
                L = &LAYOUT_KINETO;
            else
                die("bad --layout '%s' (line|kineto)", v);
        } else if (!strcmp(a, "--truth")) {
            NEEDV();
            truth_path = v;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            NEEDV();
            out_path = v;
        } else if (!strcmp(a, "--modules")) {
            modules = 1;
        } else if (!strcmp(a, "--stats")) {
            stats = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            die("unknown argument '%s'", a);
        }
#undef NEEDV
    }
    if (rank >= world)
        die("--rank must be < --world");
    if (steps && !size_given)
        size = 0; /* exactly N steps */

    FILE *out = stdout;
    if (out_path && strcmp(out_path, "-")) {
        out = fopen(out_path, "wb");
        if (!out)
            die("cannot open %s: %s", out_path, strerror(errno));
    }

    static gen_t G;
    gen_t *g = &G;
    g->rank = (int)rank;
    g->world = (int)world;
    g->slow_rank = slow_us > 0 ? (int)slow_rank : -1;
    g->slow_ns = (uint64_t)slow_us * 1000;
    g->slow_cause = slow_cause;
    g->modules = modules;
    g->device = (int)(rank % 8);
    g->rng = seed * 0x100000001B3ull ^ ((uint64_t)rank << 32) ^ 0x5eed;
    (void)rnd(&g->rng);
    g->pid = 2148000 + (uint64_t)rank * 977;
    g->tid[TH_MAIN] = g->pid;
    g->tid[TH_BWD] = g->pid + 163;
    g->ext_id = 1;
    g->rf_id = 1;
    g->corr = 4096 + (uint64_t)rrange(&g->rng, 0, 999);
    g->seq = 1000;
    g->next_addr = 0x7f3a00000000ull;
    g->total_alloc = 12ull << 30;
    g->total_res = 14ull << 30;

    {
        /* record_param_comms extras; depends on the world size */
        char ranks[256];
        int n = 0;
        ranks[0] = 0;
        long r = 0;
        for (; r < world && n < 200; r++)
            n += snprintf(ranks + n, sizeof ranks - (size_t)n, "%s%ld", r ? ", " : "", r);
        if (r < world) /* long lists are elided, as some tools do */
            snprintf(ranks + n, sizeof ranks - (size_t)n, ", ...");
        int n1 = snprintf(g->pg_extra_ar, sizeof g->pg_extra_ar,
                 "\"Collective name\": \"allreduce\", \"dtype\": \"BFloat16\", \"In msg nelems\": 25165824, "
                 "\"Out msg nelems\": 25165824, \"In split size\": \"[]\", \"Out split size\": \"[]\", "
                 "\"Global rank start\": 0, \"Global rank stride\": 1, \"Group size\": %ld, "
                 "\"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", "
                 "\"Process Group Ranks\": \"[%s]\"",
                 world, ranks);
        int n2 = snprintf(g->pg_extra_ag, sizeof g->pg_extra_ag,
                 "\"Collective name\": \"_allgather_base\", \"dtype\": \"BFloat16\", \"In msg nelems\": 2048000, "
                 "\"Out msg nelems\": 65536000, \"In split size\": \"[]\", \"Out split size\": \"[]\", "
                 "\"Global rank start\": 0, \"Global rank stride\": 1, \"Group size\": %ld, "
                 "\"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", "
                 "\"Process Group Ranks\": \"[%s]\"",
                 world, ranks);
        if (n1 < 0 || n2 < 0 || (size_t)n1 >= sizeof g->pg_extra_ar || (size_t)n2 >= sizeof g->pg_extra_ag)
            die("internal: record_param_comms args too long");
    }

    uint64_t t0 = 1700000000000000ull + (uint64_t)rrange(&g->rng, 100000, 900000); /* ns */
    g->cpu_t[TH_MAIN] = t0 + 150000;
    g->cpu_t[TH_BWD] = t0 + 150000;
    g->stream_free[0] = g->stream_free[1] = t0;

    uint64_t written = 0;
    buf_t hb = {0};
    header(&hb, g);
    if (fwrite(hb.p, 1, hb.n, out) != hb.n)
        die("write failed");
    written += hb.n;

    int64_t stepno = 10;
    for (long s = 0;; s++) {
        if (steps && s >= steps)
            break;
        if (s > 0 && size && written >= size)
            break;
        step(g, stepno, (int)layers);
        emit_cpu_events(g);
        uint64_t gs = g->stream_first[STREAM_COMPUTE];
        uint64_t ge = g->stream_free[STREAM_COMPUTE];
        if (gs && ge > gs)
            emit_gpu_annotation(g, stepno, gs, ge - 500);
        if (fwrite(g->cpu.p, 1, g->cpu.n, out) != g->cpu.n ||
            fwrite(g->gpu.p, 1, g->gpu.n, out) != g->gpu.n)
            die("write failed");
        written += g->cpu.n + g->gpu.n;
        g->cpu.n = g->gpu.n = 0;
        stepno++;
    }

    uint64_t tend = g->cpu_t[TH_MAIN];
    for (int s = 0; s < N_STREAMS; s++)
        if (g->stream_free[s] > tend)
            tend = g->stream_free[s];
    hb.n = 0;
    trailer(&hb, g, t0, tend);
    B_LIT(&hb, "  ],\n  \"traceName\": \"/tmp/trainprof_bench/rank");
    b_u64(&hb, (uint64_t)g->rank);
    B_LIT(&hb, ".pt.trace.json\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1700000000000000000\n}\n");
    if (fwrite(hb.p, 1, hb.n, out) != hb.n)
        die("write failed");
    written += hb.n;
    if (out != stdout) {
        if (fclose(out) != 0)
            die("closing output failed");
    } else if (fflush(out) != 0) {
        die("write failed");
    }

    if (truth_path)
        write_truth(g, truth_path);

    if (stats) {
        uint64_t tot = g->n_cpu + g->n_ann + g->n_mem + g->n_rt + g->n_gpu + g->n_flow + g->n_meta;
        fprintf(stderr,
                "bytes %" PRIu64 " events %" PRIu64 " (avg %.0f B)\n"
                "  cpu_op %" PRIu64 " (%.1f%%) user_annotation %" PRIu64 " (%.1f%%) [memory] %" PRIu64
                " (%.1f%%)\n  cuda_runtime %" PRIu64 " (%.1f%%) gpu %" PRIu64 " (%.1f%%) flow %" PRIu64
                " (%.1f%%) other %" PRIu64 "\n  steps %" PRId64 "\n",
                written, tot, tot ? (double)written / (double)tot : 0.0, g->n_cpu,
                100.0 * (double)g->n_cpu / (double)tot, g->n_ann, 100.0 * (double)g->n_ann / (double)tot,
                g->n_mem, 100.0 * (double)g->n_mem / (double)tot, g->n_rt,
                100.0 * (double)g->n_rt / (double)tot, g->n_gpu, 100.0 * (double)g->n_gpu / (double)tot,
                g->n_flow, 100.0 * (double)g->n_flow / (double)tot, g->n_meta, stepno - 10);
    }
    free(hb.p);
    free(g->cpu.p);
    free(g->gpu.p);
    free(g->ev);
    return 0;
}
