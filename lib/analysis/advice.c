/* Advice: each rule is a number, a documented threshold and the usual remedy
 * (docs/METRICS.md lists them). No advice without a number behind it. */
#include "critical_path.h"
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "launch.h"
#include "overhead.h"
#include "trainprof/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ATTENTION_MIN 0.10    /* unfused attention kernels: share of GPU kernel time */
#define EXPOSED_MIN 0.30      /* exposed / communication time ... */
#define EXPOSED_SPAN_MIN 0.05 /* ... when exposed communication is also this share of the span */
#define DATA_MIN 0.10         /* data loading: share of step time */
#define FP32_GEMM_MIN 0.10    /* fp32 GEMMs: share of GPU kernel time */
#define HOST_SYNC_MIN 1.0     /* device-to-host copies per step */
#define SKEW_MIN 0.10         /* step-time skew across ranks: share of the mean step time */
#define NET_BUSBW_MAX 20.0    /* GB/s of bus bandwidth below which a collective the ranks reach together is slow:
                                 under one 200 Gb/s NIC per GPU, far under NVLink */
#define NET_SHARE_MIN 0.05    /* that collective's transfer time per step: share of the mean step */
#define PATH_LAUNCH_MIN 0.25  /* launch delays and launch calls: share of the critical path */
#define PATH_RUNTIME_MIN 0.25 /* the other runtime calls (alloc, free, queries, syncs): share of the critical path */
#define PATH_COMM_MIN 0.10    /* communication kernels (exposed communication): share of the critical path */
#define LATE_RANK_MIN 0.05    /* the others' wait for the collectives' straggler, per rank: share of the mean step */
#define ATTN_MATH_MIN 0.10    /* attention as bmm + softmax ops: share of the ops' direct time */
#define TINY_EW_PER_STEP 1000 /* elementwise launches per step ... */
#define TINY_EW_MEAN_NS 10000 /* ... averaging at most this much GPU time each */
#define BLOCKING_PER_STEP 1.0 /* ops and calls that wait for the GPU, per step */
#define RECOMPUTE_MIN 0.03    /* forward ops run again in the backward: share of the ops' direct time */
#define GEMM_ROOF_LOW 0.30    /* a GEMM this far under its roofline ... */
#define GEMM_ALIGN 64         /* ... with a size not a multiple of this ... */
#define GEMM_POOR_MIN 0.10    /* ... taking this share of the GEMM time */
#define FP32_GEMM_OP_MIN 0.10 /* fp32 GEMM ops beside half-precision ones: share of the GEMM time */
#define GEMM_RULES_OF_ALL 0.05 /* both GEMM rules: only when those GEMMs are this share of all ops' time */
#define AI_CPU_TASK_NS 20000  /* an Ascend AI CPU task this long (msprof-analyze's AI CPU checker: 20 us) */
#define FREE_MIN 0.20         /* device free time in the steps: share of step time (device-only traces) */
#define SLOW_LINK_MAX 0.80    /* an Ascend link's slowest (step, rank) bandwidth at most this share of the mean */
/* msprof-analyze's packet rule (its rules/packet.yaml): a transfer under
 * these sizes is small, and small ones above this share of a transport's
 * transfers are a finding */
#define SMALL_SDMA_BYTES 16000000
#define SMALL_RDMA_BYTES 1000000
#define SMALL_PACKETS_MIN 0.20

static int add(tprof_advice *a, size_t *cap, const char *rule, int64_t rank, double value, double threshold,
               const char *remedy, const char *fmt, ...) __attribute__((format(printf, 8, 9)));

static int add(tprof_advice *a, size_t *cap, const char *rule, int64_t rank, double value, double threshold,
               const char *remedy, const char *fmt, ...)
{
    if (a->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        tprof_advice_item *it = realloc(a->items, nc * sizeof *it);
        if (!it) return TPROF_ENOMEM;
        a->items = it;
        *cap = nc;
    }
    tprof_advice_item *it = &a->items[a->n++];
    *it = (tprof_advice_item){ .rule = rule, .rank = rank, .value = value, .threshold = threshold, .remedy = remedy };
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->evidence, sizeof it->evidence, fmt, ap);
    va_end(ap);
    return 0;
}

static int has(const char *s, const char *w) { return strcasestr(s, w) != NULL; }

/* Attention kernels that are not a fused (flash / memory-efficient) kernel. */
static int unfused_attention(const char *name)
{
    int attn = has(name, "softmax") || has(name, "attn") || has(name, "attention");
    int fused = has(name, "flash") || has(name, "fmha") || has(name, "efficient_attention") ||
                has(name, "fused_attn") || has(name, "cudnn_attn") || has(name, "sdpa");
    return attn && !fused;
}

/* GEMM kernels computing in fp32 (no tensor-core type in the name). */
static int fp32_gemm(const char *name)
{
    if (!has(name, "gemm")) return 0;
    if (has(name, "bf16") || has(name, "f16") || has(name, "half") || has(name, "tf32") || has(name, "h884") ||
        has(name, "h1688") || has(name, "h16816") || has(name, "s1688") || has(name, "s16816") || has(name, "i8") ||
        has(name, "e4m3") || has(name, "e5m2") || has(name, "hgemm"))
        return 0;
    return has(name, "sgemm") || has(name, "f32f32") || has(name, "fp32") || has(name, "<float") ||
           has(name, "float,");
}

/* Ops whose output size depends on the data, so the host waits for the GPU
 * to learn it (.item() and .cpu() are host-sync's: their copy). */
static int blocking_op(const char *name)
{
    static const char *const ops[] = { "aten::nonzero", "aten::unique", "aten::_unique2", "aten::unique_consecutive",
                                       "aten::masked_select", "aten::repeat_interleave", NULL };
    for (const char *const *o = ops; *o; o++)
        if (!strcmp(name, *o)) return 1;
    return 0;
}

/* The op-level rules, from the operator view by op and inputs: attention
 * computed as bmm + softmax ops, activation recomputation, GEMMs of poor
 * shapes or in fp32, many tiny elementwise launches, ops and runtime calls
 * that block the host. */
static int op_rules(const tprof_trace *t, int64_t rank, tprof_advice *a, size_t *cap)
{
    char d1[32], d2[32];
    /* by shape: the names' sums as by name, and each GEMM's sizes and type */
    tprof_ops_opts oo = { .by = TPROF_OPS_BY_SHAPE, .step_first = -1, .step_last = -1 };
    tprof_result *ops;
    int orc = tprof_ops(t, &oo, &ops);
    if (orc == TPROF_ENOMEM) return orc;
    if (orc) return 0; /* a trace past the op tree's limit: no op rules, the others stand */
    const tprof_rows *rows = tprof_result_table_c(ops, 0);
    double total = (double)tprof_rows_int(tprof_result_top_c(ops), 0, "direct_ns");
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    double steps = m->nsteps ? (double)m->nsteps : 1;
    int64_t bmm = 0, softmax = 0, ew = 0, fused = 0, recompute = 0;
    int64_t gemm = 0, poor = 0, fp32 = 0, half = 0; /* GEMM op time: all, poor, in fp32, in bf16 / fp16 */
    double poor_roof = 0; /* the poor ones' roofline share, weighted by time */
    const char *poor_top = NULL, *fp32_top = NULL;
    int64_t poor_top_ns = 0, fp32_top_ns = 0;
    uint64_t ew_n = 0, block_n = 0;
    const char *block_top = NULL;
    uint64_t block_top_n = 0;
    for (size_t i = 0; i < tprof_rows_count(rows); i++) {
        const char *name = tprof_rows_str(rows, i, "op");
        int64_t direct = tprof_rows_int(rows, i, "direct_ns");
        uint64_t count = (uint64_t)tprof_rows_int(rows, i, "count");
        tprof_op_category k = tprof_op_category_of(NULL, name);
        if (!strcmp(name, "aten::bmm") || !strcmp(name, "aten::baddbmm")) bmm += direct;
        if (!strcmp(name, "aten::_softmax") || !strcmp(name, "aten::softmax")) softmax += direct;
        if (k == TPROF_OPCAT_ATTENTION) fused += direct;
        recompute = tprof_sat_add(recompute, tprof_rows_int(rows, i, "recompute_direct_ns"));
        tprof_op_cost cost;
        if (k == TPROF_OPCAT_GEMM &&
            tprof_op_cost_of(name, tprof_rows_str(rows, i, "input_dims"), tprof_rows_str(rows, i, "input_types"),
                             tprof_rows_str(rows, i, "concrete_inputs"), &cost) &&
            cost.m) {
            gemm += direct;
            if (cost.dtype == TPROF_DT_FP32) {
                fp32 += direct;
                if (direct > fp32_top_ns) fp32_top = name, fp32_top_ns = direct;
            } else if (cost.dtype == TPROF_DT_BF16 || cost.dtype == TPROF_DT_FP16)
                half += direct;
            const tprof_cell *roof = tprof_rows_at(rows, i, "roofline");
            if (roof && !roof->null && roof->v.d < GEMM_ROOF_LOW &&
                (cost.m % GEMM_ALIGN || cost.n % GEMM_ALIGN || cost.k % GEMM_ALIGN)) {
                poor += direct;
                poor_roof += roof->v.d * (double)direct;
                if (direct > poor_top_ns) poor_top = name, poor_top_ns = direct;
            }
        }
        if (k == TPROF_OPCAT_ELEMENTWISE) ew += direct, ew_n += count;
        if (blocking_op(name)) {
            block_n += count;
            if (count > block_top_n) block_top = name, block_top_n = count;
        }
    }
    int rc = 0;
    if (total > 0 && bmm && softmax && !fused && (double)(bmm + softmax) / total >= ATTN_MATH_MIN)
        rc |= add(a, cap, "attention-math", rank, (double)(bmm + softmax) / total, ATTN_MATH_MIN,
                  "call torch.nn.functional.scaled_dot_product_attention (FlashAttention / memory-efficient "
                  "backends: fp16 or bf16, head dim <= 256) or flash-attn instead of matmul + softmax",
                  "attention runs as bmm + softmax ops with no fused attention op: aten::bmm %s and softmax %s, "
                  "%.0f%% of the ops' GPU time",
                  tprof_fmt_duration(d1, sizeof d1, bmm), tprof_fmt_duration(d2, sizeof d2, softmax),
                  100.0 * (double)(bmm + softmax) / total);
    if (total > 0 && (double)recompute / total >= RECOMPUTE_MIN)
        rc |= add(a, cap, "recompute", rank, (double)recompute / total, RECOMPUTE_MIN,
                  "checkpoint fewer layers or only the cheap ones (selective activation checkpointing), or offload "
                  "activations instead",
                  "activation recomputation: forward ops run again inside the backward take %s (%.1f%% of the ops' "
                  "GPU time, %s per step)",
                  tprof_fmt_duration(d1, sizeof d1, recompute), 100.0 * (double)recompute / total,
                  tprof_fmt_duration(d2, sizeof d2, (int64_t)((double)recompute / steps)));
    if (gemm > 0 && (double)poor / (double)gemm >= GEMM_POOR_MIN && (double)poor >= GEMM_RULES_OF_ALL * total)
        rc |= add(a, cap, "gemm-shapes", rank, (double)poor / (double)gemm, GEMM_POOR_MIN,
                  "pad M, N and K to multiples of 64 (128 for large GEMMs: vocabulary, hidden and batch sizes), or "
                  "fuse the small GEMMs (batched / grouped GEMMs)",
                  "GEMMs with a size not a multiple of %d run at %.0f%% of the roofline on average: %s of %s of GEMM "
                  "time (%.0f%%; the largest %s)",
                  GEMM_ALIGN, 100.0 * poor_roof / (double)poor, tprof_fmt_duration(d1, sizeof d1, poor),
                  tprof_fmt_duration(d2, sizeof d2, gemm), 100.0 * (double)poor / (double)gemm, poor_top);
    if (gemm > 0 && half > 0 && (double)fp32 / (double)gemm >= FP32_GEMM_OP_MIN &&
        (double)fp32 >= GEMM_RULES_OF_ALL * total)
        rc |= add(a, cap, "fp32-gemm-ops", rank, (double)fp32 / (double)gemm, FP32_GEMM_OP_MIN,
                  "autocast them to bf16 (torch.autocast) or allow TF32 "
                  "(torch.backends.cuda.matmul.allow_tf32 = True)",
                  "GEMM ops with fp32 inputs take %.0f%% of GEMM time (%s; the largest %s) while others run in "
                  "bf16 / fp16",
                  100.0 * (double)fp32 / (double)gemm, tprof_fmt_duration(d1, sizeof d1, fp32), fp32_top);
    double ew_per_step = (double)ew_n / steps;
    if (ew_n && ew_per_step >= TINY_EW_PER_STEP && (double)ew / (double)ew_n <= TINY_EW_MEAN_NS)
        rc |= add(a, cap, "tiny-elementwise", rank, ew_per_step, TINY_EW_PER_STEP,
                  "fuse them: torch.compile, fused optimizers (foreach / fused=True), fused norms and activations",
                  "%.0f elementwise op launches per step averaging %s of GPU time each (%s in all, %.0f%% of the ops')",
                  ew_per_step, tprof_fmt_duration(d1, sizeof d1, ew / (int64_t)ew_n), tprof_fmt_duration(d2, sizeof d2, ew),
                  total > 0 ? 100.0 * (double)ew / total : 0.0);
    /* the runtime's synchronising calls, whatever launched them */
    const tprof_event *ev = tprof_trace_events(t);
    uint64_t syncs = 0;
    for (size_t i = 0, n = tprof_trace_nevents(t); i < n; i++)
        if (ev[i].kind == TPROF_KIND_RUNTIME) {
            const char *nm = tprof_trace_str(t, ev[i].name);
            if (!strcmp(nm, "cudaStreamSynchronize") || !strcmp(nm, "cudaDeviceSynchronize") ||
                !strcmp(nm, "cudaEventSynchronize") || !strcmp(nm, "hipStreamSynchronize") ||
                !strcmp(nm, "hipDeviceSynchronize"))
                syncs++;
        }
    double block_per_step = (double)(block_n + syncs) / steps;
    if (block_per_step >= BLOCKING_PER_STEP)
        rc |= add(a, cap, "blocking-ops", rank, block_per_step, BLOCKING_PER_STEP,
                  "avoid data-dependent sizes inside the step (nonzero, unique, masked_select: pad or mask instead) "
                  "and explicit synchronize calls; `trainprof ops --by stack` shows where the ops are called",
                  "%.1f host-blocking ops and synchronising calls per step (%llu data-dependent ops%s%s, %llu "
                  "synchronize calls)",
                  block_per_step, (unsigned long long)block_n, block_top ? ", most of them " : "",
                  block_top ? block_top : "", (unsigned long long)syncs);
    tprof_result_free(ops);
    return rc ? TPROF_ENOMEM : 0;
}

/* An HCCL op's place, sorted by its rank (the order given within one). */
typedef struct {
    int64_t rank;
    size_t i;
} op_at;

static int by_op_rank(const void *x, const void *y)
{
    const op_at *a = x, *b = y;
    return a->rank != b->rank ? (a->rank > b->rank) - (a->rank < b->rank) : (a->i > b->i) - (a->i < b->i);
}

/* msprof-analyze's packet rule over T's HCCL ops: a finding per rank
 * (a cluster file's ops name theirs; a rank's own file is RANK). */
static int small_packets(const tprof_trace *t, int64_t rank, tprof_advice *a, size_t *cap)
{
    const tprof_hccl_op *ops = tprof_trace_hccl_ops(t);
    size_t n = tprof_trace_nhccl_ops(t);
    op_at *order = malloc((n ? n : 1) * sizeof *order);
    if (!order) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) order[i] = (op_at){ ops[i].rank, i };
    qsort(order, n, sizeof *order, by_op_rank); /* no shared state: ranks are advised on several threads */
    int rc = 0;
    for (size_t lo = 0, hi; !rc && lo < n; lo = hi) {
        for (hi = lo; hi < n && order[hi].rank == order[lo].rank; hi++) {}
        int64_t who = order[lo].rank >= 0 ? order[lo].rank : rank;
        for (int x = 0; !rc && x < 2; x++) {
            const int transport = x ? TPROF_HCCL_RDMA : TPROF_HCCL_SDMA;
            const double small_mb = (x ? SMALL_RDMA_BYTES : SMALL_SDMA_BYTES) / 1e6;
            uint64_t moved = 0, small = 0;
            double small_ms = 0;
            for (size_t k = lo; k < hi; k++) {
                const tprof_hccl_bandwidth *b = &ops[order[k].i].bw[transport];
                if (!(b->size_mb > 0)) continue;
                moved++;
                if (b->size_mb < small_mb) small++, small_ms += isfinite(b->time_ms) ? b->time_ms : 0;
            }
            if (moved && (double)small / (double)moved > SMALL_PACKETS_MIN)
                rc = add(a, cap, "small-packets", who, (double)small / (double)moved, SMALL_PACKETS_MIN,
                         "send fewer, larger messages: a larger batch or more gradient accumulation where the data "
                         "parallel group carries them, ZeRO-2/1 instead of ZeRO-3 if memory allows, fused "
                         "optimizer ops (each small transfer costs the host a dispatch)",
                         "%llu of %llu %s transfers (%.0f%%) move less than %g MB, taking %.3f ms (the HCCL "
                         "summaries: communication.json or analysis.db; msprof-analyze's packet rule)",
                         (unsigned long long)small, (unsigned long long)moved, tprof_hccl_transport_name(transport),
                         100.0 * (double)small / (double)moved, small_mb, small_ms);
        }
    }
    free(order);
    return rc;
}

/* The critical path's rules (PATH: tprof_critical_path over a sample of steps). */
static int path_rules(const tprof_result *path, int64_t rank, tprof_advice *a, size_t *cap)
{
    const tprof_rows *top = path ? tprof_result_top_c(path) : NULL;
    int64_t len = top ? tprof_rows_int(top, 0, "path_ns") : 0;
    if (len <= 0) return 0;
    /* the runtime calls on the path: launches, or the others (allocation, frees, queries, syncs) */
    int64_t launch = tprof_rows_int(top, 0, "launch_ns"), runtime = 0;
    const tprof_rows *on = tprof_result_table_c(path, 1);
    const char *top_call = "";
    int64_t top_call_ns = 0;
    for (size_t i = 0; i < tprof_rows_count(on); i++) {
        if (strcmp(tprof_rows_str(on, i, "kind"), "runtime")) continue;
        const char *name = tprof_rows_str(on, i, "name");
        int64_t ns = tprof_rows_int(on, i, "time_ns");
        if (tprof_cp_is_launch_call(name)) launch += ns;
        else {
            runtime += ns;
            if (ns > top_call_ns) top_call_ns = ns, top_call = name;
        }
    }
    int64_t comm = tprof_rows_int(top, 0, "comm_ns"), windows = tprof_rows_int(top, 0, "windows");
    double share = tprof_rows_real(top, 0, "path_share");
    char d1[32], d2[32], d3[32];
    int rc = 0;
    if ((double)launch / (double)len >= PATH_LAUNCH_MIN)
        rc |= add(a, cap, "path-launch", rank, (double)launch / (double)len, PATH_LAUNCH_MIN,
                  "capture the step in CUDA graphs (torch.compile mode=\"reduce-overhead\", torch.cuda.graphs), "
                  "fewer and larger kernels (fusion), less Python per op",
                  "launch delays and launch calls hold %.0f%% of the critical path (%s of %s in %lld step(s); "
                  "the path is %.0f%% of the step): the GPU waits for launches (trainprof critical-path)",
                  100.0 * (double)launch / (double)len, tprof_fmt_duration(d1, sizeof d1, launch),
                  tprof_fmt_duration(d2, sizeof d2, len), (long long)windows, 100.0 * share);
    if ((double)runtime / (double)len >= PATH_RUNTIME_MIN)
        rc |= add(a, cap, "path-runtime", rank, (double)runtime / (double)len, PATH_RUNTIME_MIN,
                  "keep allocation, frees and device queries out of the steps: a warmed-up caching allocator (no "
                  "empty_cache, less fragmentation: expandable_segments), setup before the profiled steps, no syncs",
                  "runtime calls that launch nothing hold %.0f%% of the critical path (%s of %s in %lld step(s); "
                  "most: %s, %s) (trainprof critical-path)",
                  100.0 * (double)runtime / (double)len, tprof_fmt_duration(d1, sizeof d1, runtime),
                  tprof_fmt_duration(d2, sizeof d2, len), (long long)windows, top_call,
                  tprof_fmt_duration(d3, sizeof d3, top_call_ns));
    if ((double)comm / (double)len >= PATH_COMM_MIN)
        rc |= add(a, cap, "path-comm", rank, (double)comm / (double)len, PATH_COMM_MIN,
                  "overlap the communication the path waits for: bucket sizes (DDP bucket_cap_mb), FSDP's "
                  "prefetch and reshard policy, async collectives issued earlier",
                  "communication kernels hold %.0f%% of the critical path (%s of %s in %lld step(s)): exposed "
                  "communication that the step waits for (trainprof critical-path)",
                  100.0 * (double)comm / (double)len, tprof_fmt_duration(d1, sizeof d1, comm),
                  tprof_fmt_duration(d2, sizeof d2, len), (long long)windows);
    return rc;
}

static int rank_rules(const tprof_trace *t, const tprof_result *path, int64_t rank, tprof_advice *a, size_t *cap)
{
    char d1[32], d2[32];
    int rc = path_rules(path, rank, a, cap);
    /* kernels: attention and fp32 GEMMs */
    tprof_kernels_result *k;
    if (tprof_kernels(t, NULL, &k)) return TPROF_ENOMEM;
    int64_t attn = 0, fp32 = 0;
    uint64_t nattn = 0, nfp32 = 0;
    for (size_t i = 0; i < k->nrows; i++) {
        if (k->rows[i].klass != TPROF_CLASS_COMPUTE) continue;
        if (unfused_attention(k->rows[i].key)) attn += k->rows[i].total_ns, nattn += k->rows[i].count;
        if (fp32_gemm(k->rows[i].key)) fp32 += k->rows[i].total_ns, nfp32 += k->rows[i].count;
    }
    double total = (double)k->total_ns;
    tprof_kernels_free(k);
    if (total > 0 && attn / total >= ATTENTION_MIN)
        rc |= add(a, cap, "attention", rank, attn / total, ATTENTION_MIN,
                  "use fused attention (FlashAttention, torch's scaled_dot_product_attention)",
                  "unfused attention kernels (softmax, attention) take %.1f%% of GPU kernel time (%llu kernels, %s)",
                  100 * attn / total, (unsigned long long)nattn, tprof_fmt_duration(d1, sizeof d1, attn));
    if (total > 0 && fp32 / total >= FP32_GEMM_MIN)
        rc |= add(a, cap, "fp32-gemm", rank, fp32 / total, FP32_GEMM_MIN,
                  "check the dtype (autocast to bf16) so GEMMs run on tensor cores",
                  "fp32 GEMM kernels take %.1f%% of GPU kernel time (%llu kernels, %s)", 100 * fp32 / total,
                  (unsigned long long)nfp32, tprof_fmt_duration(d1, sizeof d1, fp32));
    /* exposed communication */
    tprof_comm_result *c;
    /* the one headline idle, temporal's: the last step's work left out (docs/METRICS.md) */
    tprof_temporal_opts keep = { .skip_hta = 1 };
    tprof_temporal_result tr;
    if (tprof_comm(t, &c)) return TPROF_ENOMEM;
    if (tprof_temporal(t, &keep, &tr)) {
        tprof_comm_free(c);
        return TPROF_ENOMEM;
    }
    if (c->comm_ns > 0 && tr.span_ns > 0) {
        double ex = (double)c->exposed_ns / (double)c->comm_ns;
        if (ex >= EXPOSED_MIN && (double)c->exposed_ns >= EXPOSED_SPAN_MIN * (double)tr.span_ns)
            rc |= add(a, cap, "exposed-comm", rank, ex, EXPOSED_MIN,
                      "overlap communication with compute (bucket sizes, prefetch / reshard policy, async collectives)",
                      "%.0f%% of communication time is exposed (%s of %s, %.0f%% of the kernel span)", 100 * ex,
                      tprof_fmt_duration(d1, sizeof d1, c->exposed_ns), tprof_fmt_duration(d2, sizeof d2, c->comm_ns),
                      100.0 * (double)c->exposed_ns / (double)tr.span_ns);
    }
    tprof_comm_free(c);
    /* CPU-bound launches (the steps are shared with the data-loading rule) */
    tprof_steps_result *st;
    if (tprof_steps(t, &st)) return TPROF_ENOMEM;
    tprof_launch_result l;
    if (tprof_launch_overhead_from(t, st, &tr, &l)) {
        tprof_steps_free(st);
        return TPROF_ENOMEM;
    }
    if (l.cpu_bound)
        rc |= add(a, cap, "cpu-bound", rank, (double)l.host_wait_ns / (double)l.stream_idle_ns, 0.5,
                  "reduce launch overhead: CUDA graphs (torch.compile mode=reduce-overhead), larger / fused kernels",
                  "the GPU idles %.0f%% of its span and host waits are %.0f%% of the streams' idle time; "
                  "%.0f%% of kernels run shorter than their launch call",
                  100.0 * (double)l.idle_ns / (double)l.span_ns, 100.0 * (double)l.host_wait_ns / (double)l.stream_idle_ns,
                  l.launched ? 100.0 * (double)l.shorter_than_launch / (double)l.launched : 0.0);
    /* free time: the device neither computing nor communicating in its
     * steps; where the trace has launches, cpu-bound above says more */
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    int64_t free_ns = 0, dur_ns = 0;
    for (size_t i = 0; i < st->nsteps; i++) {
        free_ns = tprof_sat_add(free_ns, st->steps[i].free_ns);
        dur_ns = tprof_sat_add(dur_ns, st->steps[i].dur);
    }
    if (m->kind_counts[TPROF_KIND_GPU] && !m->kind_counts[TPROF_KIND_RUNTIME] && dur_ns > 0 &&
        (double)free_ns / (double)dur_ns >= FREE_MIN)
        rc |= add(a, cap, "free-time", rank, (double)free_ns / (double)dur_ns, FREE_MIN,
                  "find what the device waits for: the host's dispatch (Python overhead, small ops: fuse them, graph "
                  "mode or torch.compile), synchronisations, or copies",
                  "the device is free (neither computing nor communicating) %.0f%% of step time (%s over %zu steps)",
                  100.0 * (double)free_ns / (double)dur_ns, tprof_fmt_duration(d1, sizeof d1, free_ns), st->nsteps);
    /* Ascend's AI CPU tasks (their task type: a kernel table's core, a timeline's Task Type) */
    {
        const tprof_event *ev = tprof_trace_events(t);
        size_t nev = tprof_trace_nevents(t), longest_at = 0;
        uint32_t ai_cpu = tprof_trace_str_id(t, "AI_CPU");
        int64_t ai_ns = 0, all_ns = 0, longest = -1;
        uint64_t nai = 0;
        for (size_t i = 0; ai_cpu != UINT32_MAX && i < nev; i++) {
            if (ev[i].kind != TPROF_KIND_GPU) continue;
            all_ns = tprof_sat_add(all_ns, ev[i].dur);
            if (ev[i].task != ai_cpu) continue; /* a table's core or a timeline's Task Type */
            nai++;
            ai_ns = tprof_sat_add(ai_ns, ev[i].dur);
            if (ev[i].dur > longest) longest = ev[i].dur, longest_at = i;
        }
        if (nai && longest >= AI_CPU_TASK_NS)
            rc |= add(a, cap, "ai-cpu", rank, (double)longest / 1e3, AI_CPU_TASK_NS / 1e3,
                      "move the ops to the AI Core: AI CPU runs what the AI Core lacks (often int64 or double "
                      "inputs, or unsupported shapes): cast to int32 or float32, or use replacement ops "
                      "(msprof-analyze's AI CPU operator replacement examples)",
                      "%llu AI CPU tasks take %s (%.1f%% of device task time); the longest, %s, %s",
                      (unsigned long long)nai, tprof_fmt_duration(d1, sizeof d1, ai_ns),
                      all_ns ? 100.0 * (double)ai_ns / (double)all_ns : 0.0,
                      tprof_trace_str(t, ev[longest_at].name), tprof_fmt_duration(d2, sizeof d2, longest));
    }
    /* Ascend: every op compiled for its shapes at run time (msprof-analyze's dynamic shape check) */
    if (m->op_state_dynamic && !m->op_state_static)
        rc |= add(a, cap, "dynamic-shape", rank, 1.0, 1.0,
                  "use the prebuilt binary kernels instead of compiling each new shape: at the script's start "
                  "torch_npu.npu.set_compile_mode(jit_compile=False) and "
                  "torch_npu.npu.config.allow_internal_format = False; keep shapes few (pad to fixed buckets)",
                  "all %llu tasks whose OP State is recorded are dynamic-shape, none static (the kernel table's or "
                  "database's OP State; msprof-analyze's dynamic shape check)",
                  (unsigned long long)m->op_state_dynamic);
    /* Ascend: small transfers (msprof-analyze's packet rule, per HCCL op), per rank of a cluster file */
    rc |= small_packets(t, rank, a, cap);
    /* data loading: the data phase of the steps */
    int64_t steps_ns = 0;
    for (int p = 0; p < TPROF_PHASE_COUNT; p++) steps_ns = tprof_sat_add(steps_ns, st->phase_cpu_ns[p]);
    int64_t data_ns = st->phase_cpu_ns[TPROF_PHASE_DATA];
    if (steps_ns > 0 && (double)data_ns / (double)steps_ns >= DATA_MIN)
        rc |= add(a, cap, "data-loading", rank, (double)data_ns / (double)steps_ns, DATA_MIN,
                  "more DataLoader workers, pin_memory, prefetching, faster storage or decoding",
                  "data loading takes %.0f%% of step time (%s over %zu steps; DataLoader and data annotations)",
                  100.0 * (double)data_ns / (double)steps_ns, tprof_fmt_duration(d1, sizeof d1, data_ns), st->nsteps);
    tprof_steps_free(st);
    /* device-to-host copies launched inside steps */
    if (m->nsteps) {
        const tprof_event *ev = tprof_trace_events(t);
        size_t nev = tprof_trace_nevents(t);
        int64_t dtoh_ns = 0;
        uint64_t dtoh = 0;
        const int64_t *launched = tprof_launch_times(t);
        if (!launched) return TPROF_ENOMEM;
        for (size_t i = 0; i < nev; i++) {
            const tprof_event *e = &ev[i];
            if (e->kind == TPROF_KIND_GPU && e->klass == TPROF_CLASS_MEMORY &&
                !strncmp(tprof_trace_str(t, e->name), "Memcpy DtoH", 11) &&
                tprof_step_at(m->steps, m->nsteps, launched[i]) >= 0) {
                dtoh++;
                dtoh_ns = tprof_sat_add(dtoh_ns, e->dur);
            }
        }
        double per_step = (double)dtoh / (double)m->nsteps;
        if (per_step >= HOST_SYNC_MIN)
            rc |= add(a, cap, "host-sync", rank, per_step, HOST_SYNC_MIN,
                      "remove host syncs inside the step (.item(), .cpu(), printing or branching on tensor values)",
                      "%.1f device-to-host copies per step (%llu in %zu steps, %s on the GPU); each one waits for the "
                      "GPU to drain",
                      per_step, (unsigned long long)dtoh, m->nsteps, tprof_fmt_duration(d1, sizeof d1, dtoh_ns));
    }
    if (!rc) rc = op_rules(t, rank, a, cap);
    return rc ? TPROF_ENOMEM : 0;
}

/* Ascend: msprof-analyze's slow-rank check on the profiler's own step
 * split (on CUDA traces the late-rank, straggler and exposed-comm rules
 * say this from the events): a finding per flagged dimension. */
static int split_rules(const tprof_ranks_result *r, tprof_advice *a, size_t *cap)
{
    static const char *const rules[TPROF_SPLIT_DIMS] = { "slow-rank", "uneven-communication", "uneven-free" };
    static const char *const what[TPROF_SPLIT_DIMS] = { "computing", "communication not overlapped", "free time" };
    static const char *const remedy[TPROF_SPLIT_DIMS] = {
        "find what makes that rank compute longer: its kernels against a fast rank's (trainprof diff), its share of "
        "the work (sequence lengths, MoE routing, the pipeline stages' layers), then the device itself",
        "that rank waits in collectives for the others or moves its bytes slowly: the slow rank and slow link "
        "findings name which (trainprof collectives); overlap the communication with compute",
        "that rank's device idles: host-bound work on it (data loading, Python, synchronisations: trainprof idle "
        "and launch on that rank)",
    };
    char d1[32], d2[32], d3[32], d4[32];
    if (!r->split_recorded || r->split_ranks < 2) return 0; /* across ranks, not one rank's steps */
    for (int d = 0; d < TPROF_SPLIT_DIMS; d++) {
        const tprof_split_spread *x = &r->split[d];
        if (!x->flagged) continue;
        char at[96] = "";
        if (x->ranked)
            snprintf(at, sizeof at, "; the most on rank %lld step %lld, the least on rank %lld step %lld",
                     (long long)x->max_rank, (long long)x->max_step, (long long)x->min_rank, (long long)x->min_step);
        if (add(a, cap, rules[d], x->ranked ? x->max_rank : -1, x->spread, TPROF_SLOW_RANK_MIN, remedy[d],
                "%s differs by %s across %zu (step, rank) pairs (%s to %s), %.1f%% of the mean step %s%s "
                "(msprof-analyze's slow-rank check; trainprof ranks)",
                what[d], tprof_fmt_duration(d1, sizeof d1, x->max_ns - x->min_ns), r->split_points,
                tprof_fmt_duration(d2, sizeof d2, x->min_ns), tprof_fmt_duration(d3, sizeof d3, x->max_ns),
                100.0 * x->spread, tprof_fmt_duration(d4, sizeof d4, r->split_mean_total_ns), at))
            return TPROF_ENOMEM;
    }
    return 0;
}

/* The cross-rank rule: step-time skew, from the ranks side by side. */
static int ranks_rules(const tprof_ranks_result *r, tprof_advice *a, size_t *cap)
{
    int64_t sum = 0;
    size_t with_steps = 0;
    for (size_t i = 0; i < r->nranks; i++)
        if (r->ranks[i].nsteps) sum = tprof_sat_add(sum, r->ranks[i].step_mean_ns), with_steps++;
    double mean = with_steps ? (double)sum / (double)with_steps : 0.0;
    char d1[32], d2[32];
    /* the collectives' straggler: what the others wait for it, per rank and step */
    double waited = r->coll_straggler >= 0 && r->nranks > 1 && mean > 0
                        ? (double)r->coll_cost_ns / (double)(r->common_steps ? r->common_steps : 1) /
                              (double)(r->nranks - 1)
                        : 0.0;
    if (waited / (mean > 0 ? mean : 1) >= LATE_RANK_MIN &&
        add(a, cap, "late-rank", r->coll_straggler, waited / mean, LATE_RANK_MIN,
            !strcmp(r->coll_cause, "data")
                ? "its data loading makes it late: more DataLoader workers, pinned memory and prefetching, or "
                  "balance the samples' sizes across ranks"
            : !strcmp(r->coll_cause, "host")
                ? "its host calls the collectives late: find its CPU work before them (trainprof launch and steps "
                  "on its trace: synchronisations, Python overhead, logging, checkpointing on that rank)"
            : !strcmp(r->coll_cause, "compute")
                ? "its GPU reaches the collectives late, behind more work than the others': balance the work "
                  "(sequence lengths, MoE routing, pipeline stages) or check that GPU (clocks, thermals)"
                : "find what delays that rank before its collectives (its data loading, its share of the work: "
                  "sequence lengths, MoE routing; its host): trainprof collectives, then steps and launch on its "
                  "trace",
            "last to arrive in %.0f%% of the collectives the others wait in; each of them waits %s per step for it, "
            "%.0f%% of the mean step time %s (trainprof collectives)",
            100.0 * r->coll_last_share, tprof_fmt_duration(d1, sizeof d1, (int64_t)waited),
            100.0 * waited / mean, tprof_fmt_duration(d2, sizeof d2, (int64_t)mean)))
        return TPROF_ENOMEM;
    /* the network: a collective the ranks reach together that still moves its bytes slowly */
    double net_step = r->coll_net_count > 0
                          ? (double)r->coll_net_transfer_ns / (double)(r->coll_common_steps ? r->coll_common_steps : 1)
                          : 0.0;
    char d3[32];
    if (r->coll_net_count > 0 && mean > 0 && r->coll_net_busbw < NET_BUSBW_MAX && net_step / mean >= NET_SHARE_MIN &&
        add(a, cap, "slow-network", -1, r->coll_net_busbw, NET_BUSBW_MAX,
            "check the network before the ranks: the transport NCCL picked (NCCL_DEBUG=INFO: NET/Socket where IB or "
            "NVLink was meant, P2P disabled), NCCL_IB_HCA / NCCL_SOCKET_IFNAME, GPU-NIC affinity, then nccl-tests "
            "(all_reduce_perf) for what the fabric delivers",
            "%s of %s (%s, group %s of %lld ranks) moves %.1f GB/s of bus bandwidth while the ranks arrive together "
            "(a rank waits %.0f%% of the transfer); %s per step, %.0f%% of the mean step time %s (trainprof "
            "collectives)",
            r->coll_net_type, tprof_fmt_bytes(d3, sizeof d3, r->coll_net_bytes), r->coll_net_dtype,
            r->coll_net_group[0] ? r->coll_net_group : "-", (long long)r->coll_net_group_size, r->coll_net_busbw,
            100.0 * r->coll_net_wait_share, tprof_fmt_duration(d1, sizeof d1, (int64_t)net_step), 100.0 * net_step / mean,
            tprof_fmt_duration(d2, sizeof d2, (int64_t)mean)))
        return TPROF_ENOMEM;
    /* Ascend: a link far slower than the others (msprof-analyze's slow link, a wider margin) */
    if (r->slow_link_n > 1 && r->slow_link_mean_gbps > 0 &&
        r->slow_link_gbps / r->slow_link_mean_gbps <= SLOW_LINK_MAX &&
        add(a, cap, "slow-link", r->slow_link_rank, r->slow_link_gbps / r->slow_link_mean_gbps, SLOW_LINK_MAX,
            "check that rank's link before its work: for RDMA its NIC and path (link speed and errors, the switch "
            "port, congestion: hccn_tool, the fabric's counters), for SDMA the HCCS/PCIe placement; then whether "
            "its collectives carry more bytes than the others'",
            "rank %lld moves %s at %.2f GB/s in %s, against a mean of %.2f GB/s and a best of %.2f over %lld "
            "(step, rank) pairs (trainprof collectives, hccl_slow_links)",
            (long long)r->slow_link_rank, r->slow_link_transport, r->slow_link_gbps, r->slow_link_step,
            r->slow_link_mean_gbps, r->slow_link_max_gbps, (long long)r->slow_link_n))
        return TPROF_ENOMEM;
    if (split_rules(r, a, cap)) return TPROF_ENOMEM;
    if (r->common_steps && mean > 0 && (double)r->skew_max_ns / mean >= SKEW_MIN)
        return add(a, cap, "uneven-ranks", -1, (double)r->skew_max_ns / mean, SKEW_MIN,
                   "balance the work across ranks (data sharding, sequence lengths, MoE routing)",
                   "step times differ across ranks by up to %s (ProfilerStep#%lld), %.0f%% of the mean step time %s%s",
                   tprof_fmt_duration(d1, sizeof d1, r->skew_max_ns), (long long)r->skew_max_step,
                   100.0 * (double)r->skew_max_ns / mean, tprof_fmt_duration(d2, sizeof d2, (int64_t)mean),
                   r->straggler >= 0 ? "; rank with the most compute waits least: a straggler" : "");
    return 0;
}

int tprof_advise(const tprof_trace *const *traces, size_t n, tprof_advice **out)
{
    *out = NULL;
    tprof_advice *a = calloc(1, sizeof *a);
    if (!a) return TPROF_ENOMEM;
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t rank = tprof_trace_rank(traces[i]);
        tprof_cp_opts o = { .step_first = -1, .step_last = -1, .instance_first = -1, .instance_last = -1,
                            .max_windows = TPROF_ADVICE_PATH_SAMPLE };
        tprof_result *path = NULL;
        if (tprof_critical_path(traces[i], &o, &path) == TPROF_ENOMEM) goto oom;
        int bad = rank_rules(traces[i], path, rank >= 0 ? rank : (int64_t)i, a, &cap);
        tprof_result_free(path);
        if (bad) goto oom;
    }
    if (n >= 2 || (n == 1 && tprof_trace_nstep_splits(traces[0]))) { /* many ranks, or a cluster table's */
        tprof_ranks_result *r;
        if (tprof_ranks(traces, n, &r)) goto oom;
        int rc = ranks_rules(r, a, &cap);
        tprof_ranks_free(r);
        if (rc) goto oom;
    }
    *out = a;
    return 0;
oom:
    tprof_advice_free(a);
    return TPROF_ENOMEM;
}

/* ---- the same in two parts, and as result tables ---- */

enum { A_RULE, A_RANK, A_VALUE, A_THRESHOLD, A_EVIDENCE, A_REMEDY, A_KNOWN, A_NCOLS };

const tprof_col_desc tprof_finding_cols[TPROF_FINDING_NCOLS] = {
    [A_RULE] = TPROF_COL("rule", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL,
                         "attention, exposed-comm, cpu-bound, free-time, ai-cpu, dynamic-shape, small-packets, slow-link, "
                         "slow-rank, uneven-communication, uneven-free, data-loading, fp32-gemm, host-sync, "
                         "uneven-ranks, late-rank, slow-network, and the op rules "
                         "(docs/METRICS.md)"),
    [A_RANK] = TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_PER_RANK, NULL,
                         "the rank it is about; null: the whole run (in a rank's findings: that rank)"),
    [A_VALUE] = TPROF_COL("value", TPROF_COL_REAL, TPROF_COMBINE_PER_RANK, NULL, "the number behind it",
                          .csv_digits = 6),
    [A_THRESHOLD] = TPROF_COL("threshold", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                              "the documented threshold it crossed (docs/METRICS.md)", .csv_digits = 6),
    [A_EVIDENCE] = TPROF_COL("evidence", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "the numbers, in words"),
    [A_REMEDY] = TPROF_COL("remedy", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the usual remedy"),
    [A_KNOWN] = TPROF_COL("rank_known", TPROF_COL_BOOL, TPROF_COMBINE_PER_RANK, NULL,
                          "the rank is the trace's own (else its place in rank order, said trace N; text only)",
                          .flags = TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV),
};
static const tprof_table_desc findings = { .name = "findings", .doc = "rank by rank in the order given, then the run's",
                                           .cols = tprof_finding_cols, .ncols = A_NCOLS };
static const tprof_col_desc run_rank_cols[] = {
    TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_PER_RANK, NULL, "a rank analysed"),
};
/* what the text needs to say "ranks 0-63 except 17" of a finding */
static const tprof_table_desc run_ranks = { .name = "run_ranks", .doc = "the ranks analysed, in rank order (text only)",
                                            .cols = run_rank_cols, .ncols = 1, .no_json = 1 };
static const tprof_table_desc advice_top = { .name = "" };
static const tprof_table_desc *const advice_tables[] = { &findings, &run_ranks };
const tprof_result_desc tprof_advice_desc = { .name = "advice", .version = 1, .top = &advice_top,
                                              .tables = advice_tables, .ntables = 2, .csv_table = 1,
                                              .whole_run = 1, .json_rows_only = 1 };

int tprof_advice_tables(const tprof_advice *a, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_advice_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *t = tprof_result_table(res, 0);
    for (size_t k = 0; k < a->n; k++) {
        const tprof_advice_item *it = &a->items[k];
        long i = tprof_rows_add(t);
        if (i < 0 || tprof_rows_set_s(t, (size_t)i, A_RULE, it->rule) ||
            tprof_rows_set_s(t, (size_t)i, A_EVIDENCE, it->evidence) ||
            tprof_rows_set_s(t, (size_t)i, A_REMEDY, it->remedy)) {
            tprof_result_free(res);
            return TPROF_ENOMEM;
        }
        if (it->rank >= 0) tprof_rows_set_i(t, (size_t)i, A_RANK, it->rank);
        tprof_rows_set_i(t, (size_t)i, A_KNOWN, it->rank >= 0);
        tprof_rows_set_d(t, (size_t)i, A_VALUE, it->value);
        tprof_rows_set_d(t, (size_t)i, A_THRESHOLD, it->threshold);
    }
    *out = res;
    return 0;
}

int tprof_advise_rank_with_path(const tprof_trace *t, const tprof_result *path, tprof_result **out)
{
    *out = NULL;
    tprof_advice a = { 0 };
    size_t cap = 0;
    int rc = rank_rules(t, path, -1, &a, &cap) ? TPROF_ENOMEM : 0;
    if (!rc) rc = tprof_advice_tables(&a, out);
    free(a.items);
    return rc;
}

int tprof_advise_rank(const tprof_trace *t, tprof_result **out)
{
    tprof_cp_opts o = { .step_first = -1, .step_last = -1, .instance_first = -1, .instance_last = -1,
                        .max_windows = TPROF_ADVICE_PATH_SAMPLE };
    tprof_result *path = NULL;
    int rc = tprof_critical_path(t, &o, &path);
    if (rc == TPROF_ENOMEM) return rc; /* other codes: no path to judge (no window) */
    rc = tprof_advise_rank_with_path(t, path, out);
    tprof_result_free(path);
    return rc;
}

/* Appends the findings SRC to DST, each about RANK (-1: as they say; KNOWN:
 * the trace says that rank, else it is its place in rank order). */
static int append_findings(tprof_rows *dst, const tprof_rows *src, int64_t rank, int known)
{
    for (size_t k = 0; k < tprof_rows_count(src); k++) {
        long i = tprof_rows_add(dst);
        if (i < 0) return TPROF_ENOMEM;
        /* a finding about one rank of a cluster file names it; the others are the trace's */
        int own = !tprof_rows_cell(src, k, A_RANK)->null;
        for (size_t c = 0; c < A_NCOLS; c++) {
            const tprof_cell *v = tprof_rows_cell(src, k, c);
            if (c == A_RANK && rank >= 0 && !own) tprof_rows_set_i(dst, (size_t)i, c, rank);
            else if (c == A_KNOWN && rank >= 0) tprof_rows_set_i(dst, (size_t)i, c, own || known);
            else if (v->null) continue;
            else if (c == A_RANK || c == A_KNOWN) tprof_rows_set_i(dst, (size_t)i, c, v->v.i);
            else if (c == A_VALUE || c == A_THRESHOLD) tprof_rows_set_d(dst, (size_t)i, c, v->v.d);
            else if (tprof_rows_set_s(dst, (size_t)i, c, v->v.s)) return TPROF_ENOMEM;
        }
    }
    return 0;
}

int tprof_advise_reduce(const tprof_result *const *per_rank, const tprof_ranks_result *ranks, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_advice_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *t = tprof_result_table(res, 0);
    int rc = 0;
    for (size_t r = 0; !rc && r < ranks->nranks; r++)
        rc = tprof_result_desc_of(per_rank[r]) != &tprof_advice_desc
                 ? TPROF_EUSAGE
                 : append_findings(t, tprof_result_table_c(per_rank[r], 0), ranks->ranks[r].rank,
                                   ranks->ranks[r].rank_known);
    tprof_rows *all = tprof_result_table(res, 1);
    for (size_t r = 0; !rc && r < ranks->nranks; r++) {
        long k = tprof_rows_add(all);
        if (k < 0) rc = TPROF_ENOMEM;
        else tprof_rows_set_i(all, (size_t)k, 0, ranks->ranks[r].rank);
    }
    if (!rc && (ranks->nranks >= 2 || ranks->split_recorded)) { /* many ranks, or a step table's */
        tprof_advice a = { 0 };
        size_t cap = 0;
        tprof_result *run = NULL;
        rc = ranks_rules(ranks, &a, &cap);
        if (!rc) rc = tprof_advice_tables(&a, &run);
        if (!rc) rc = append_findings(t, tprof_result_table_c(run, 0), -1, 0);
        tprof_result_free(run);
        free(a.items);
    }
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

void tprof_advice_free(tprof_advice *a)
{
    if (!a) return;
    free(a->items);
    free(a);
}
