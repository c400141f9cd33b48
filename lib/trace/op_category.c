/* Op categories from op names: the built-in rules (docs/METRICS.md, "trainprof
 * ops"; keep the two in step), after the user's. */
#include "trainprof/trace.h"
#include "trace_internal.h"

#include <string.h>

static const char *const names[TPROF_OPCAT_COUNT] = {
    [TPROF_OPCAT_GEMM] = "gemm",
    [TPROF_OPCAT_ATTENTION] = "attention",
    [TPROF_OPCAT_CONV] = "convolution",
    [TPROF_OPCAT_ELEMENTWISE] = "elementwise",
    [TPROF_OPCAT_REDUCTION] = "reduction",
    [TPROF_OPCAT_NORM] = "normalization",
    [TPROF_OPCAT_COMM] = "communication",
    [TPROF_OPCAT_MEMORY] = "memory",
    [TPROF_OPCAT_OTHER] = "other",
};

const char *tprof_op_category_name(tprof_op_category k) { return (unsigned)k < TPROF_OPCAT_COUNT ? names[k] : "?"; }

int tprof_op_category_parse(const char *s, tprof_op_category *out)
{
    for (int k = 0; k < TPROF_OPCAT_COUNT; k++)
        if (!strcmp(s, names[k])) {
            *out = (tprof_op_category)k;
            return 0;
        }
    return -1;
}

static int any_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strstr(s, *words)) return 1;
    return 0;
}

static int one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (!strcmp(s, *words)) return 1;
    return 0;
}

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* ATen ops by their name after "aten::" (the in-place and out variants
 * share a base: add_, add.out). */
static tprof_op_category aten(const char *op)
{
    static const char *const gemm[] = { "mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "_scaled_mm",
                                        "addmv", "mv", "dot", "vdot", "einsum", "_addmm_activation",
                                        "_int_mm", "_grouped_mm", "_scaled_grouped_mm", NULL };
    static const char *const reduce[] = { "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "prod",
                                          "cumsum", "cumprod", "norm", "linalg_vector_norm", "var", "std",
                                          "var_mean", "std_mean", "logsumexp", "any", "all", "_softmax",
                                          "softmax", "log_softmax", "_log_softmax", "_softmax_backward_data",
                                          "_log_softmax_backward_data", "topk", "sort", "nll_loss_forward",
                                          "nll_loss2d_forward", "count_nonzero", NULL };
    static const char *const memory[] = { "copy_", "_copy_from", "_copy_from_and_resize", "fill_", "zero_",
                                          "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
                                          "clone", "contiguous", "_to_copy", "to", "empty", "empty_like",
                                          "new_zeros", "new_empty", "resize_", "index_select", "gather",
                                          "scatter", "scatter_", "index", "index_put_", "_index_put_impl_",
                                          "cat", "stack", "embedding", "embedding_dense_backward",
                                          "_pin_memory", "set_", "_local_scalar_dense", NULL };
    char base[96];
    size_t n = strcspn(op, ".");
    if (n >= sizeof base) return TPROF_OPCAT_OTHER;
    memcpy(base, op, n);
    base[n] = 0;
    if (one_of(base, gemm)) return TPROF_OPCAT_GEMM;
    if (one_of(base, reduce)) return TPROF_OPCAT_REDUCTION;
    if (one_of(base, memory)) return TPROF_OPCAT_MEMORY;
    if (strstr(base, "pool")) return TPROF_OPCAT_REDUCTION; /* max_pool2d, adaptive_avg_pool2d: windowed reductions */
    return TPROF_OPCAT_ELEMENTWISE; /* the rest of ATen's kernels are pointwise (_foreach_ ones too) */
}

tprof_op_category tprof_op_category_of(const tprof_classifier *c, const char *name)
{
    int k = tprof_classify_op_user(c, name);
    if (k >= 0) return (tprof_op_category)k;
    switch (tprof_classify_user(c, name)) { /* a kernel-class rule naming the op */
    case TPROF_CLASS_COMM: return TPROF_OPCAT_COMM;
    case TPROF_CLASS_MEMORY: return TPROF_OPCAT_MEMORY;
    case TPROF_CLASS_OTHER: return TPROF_OPCAT_OTHER;
    default: break;
    }
    static const char *const comm[] = { "record_param_comms", "nccl", "rccl", "hccl", "allreduce", "all_reduce",
                                        "allgather", "all_gather", "reduce_scatter", "alltoall", "all_to_all",
                                        "broadcast_", "c10d::", NULL };
    static const char *const attention[] = { "attention", "flash_attn", "FlashAttn", "FusedAttn", "mha_", "_mha",
                                             "paged_attention", "sdpa", NULL };
    static const char *const conv[] = { "convolution", "conv1d", "conv2d", "conv3d", "conv_transpose", "_conv_",
                                        "conv_depthwise", NULL };
    static const char *const norm[] = { "layer_norm", "batch_norm", "group_norm", "instance_norm", "rms_norm",
                                        "rmsnorm", "layernorm", "batchnorm", "groupnorm", "RMSNorm", "LayerNorm", NULL };
    /* a runtime call launching by itself: copies and sets, or kernels */
    if (starts(name, "cudaMemcpy") || starts(name, "cudaMemset") || starts(name, "hipMemcpy") ||
        starts(name, "hipMemset") || starts(name, "cuMemcpy") || starts(name, "cuMemset") ||
        starts(name, "aclrtMemcpy"))
        return TPROF_OPCAT_MEMORY;
    if (any_of(name, comm)) return TPROF_OPCAT_COMM;
    if (any_of(name, attention)) return TPROF_OPCAT_ATTENTION;
    if (any_of(name, conv)) return TPROF_OPCAT_CONV;
    if (any_of(name, norm)) return TPROF_OPCAT_NORM;
    if (strstr(name, "gemm") || strstr(name, "GEMM") || strstr(name, "matmul")) return TPROF_OPCAT_GEMM;
    /* Inductor's kernels: pointwise, reductions and persistent reductions */
    if (starts(name, "triton_poi_")) return TPROF_OPCAT_ELEMENTWISE;
    if (starts(name, "triton_red_") || starts(name, "triton_per_")) return TPROF_OPCAT_REDUCTION;
    if (starts(name, "aten::")) return aten(name + 6);
    return TPROF_OPCAT_OTHER;
}
