/* Unit tests of the operator view (lib/analysis/op_tree.c, ops.c) on a small
 * hand-made trace. Times are microseconds in the JSON, checked in ns; every
 * expected number is worked out by hand in the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "trainprof/trace.h"
#include "../../lib/analysis/critical_path.h"
#include "../../lib/analysis/op_tree.h"

#define US 1000LL

/*
 * thread 1:
 *   ProfilerStep#1 [0,250)  ProfilerStep#2 [250,600)
 *   nn.Module: Net_0 [0,200)
 *     nn.Module: Linear_0 [10,100) and aten::linear [10,100) (seq 5): equal spans, the frame outer
 *       aten::addmm [20,80)
 *         launch corr 1 [30,35) -> K1 [40,60)
 *         launch corr 2 [50,55) -> K2 [50,70)     direct = union [40,70) = 30, summed 40
 *     execute [110,150)  (a pass-through wrapper: not a launcher)
 *       launch corr 3 [120,125) -> K3 [130,140)   launcher: the runtime call itself
 *   cudaMemsetAsync corr 4 [210,215) -> M [220,225), outside every module
 * thread 2 (autograd):
 *   evaluate_function: AddmmBackward0 [300,400) seq 5, Fwd thread id 1
 *     aten::mm [310,390)
 *       launch corr 5 [320,321) -> K4 [330,350)   backward, forward op aten::linear
 * K5 corr 99 [500,510): no launch in the trace
 */
#define EV(CAT, NAME, TID, TS, DUR, ARGS)                                                                   \
    "{\"ph\":\"X\",\"cat\":\"" CAT "\",\"name\":\"" NAME "\",\"pid\":1,\"tid\":" #TID ",\"ts\":" #TS        \
    ",\"dur\":" #DUR ",\"args\":{" ARGS "}},\n"
#define GPU(NAME, CORR, TS, DUR)                                                                            \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" NAME "\",\"pid\":0,\"tid\":7,\"ts\":" #TS ",\"dur\":" #DUR \
    ",\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #CORR "}},\n"

static const char TRACE[] =
    "{\"traceEvents\":[\n"
    GPU("K5", 99, 500, 10)
    EV("user_annotation", "ProfilerStep#1", 1, 0, 250, "")
    EV("user_annotation", "ProfilerStep#2", 1, 250, 350, "")
    EV("cpu_op", "aten::linear", 1, 10, 90, "\"Sequence number\":5,\"Fwd thread id\":0")
    EV("python_function", "nn.Module: Linear_0", 1, 10, 90, "")
    EV("python_function", "nn.Module: Net_0", 1, 0, 200, "")
    EV("cpu_op", "aten::addmm", 1, 20, 60,
       "\"Input Dims\":[[4], [2, 3], [3, 4]],\"Input type\":[\"float\", \"float\", \"float\"]")
    EV("cuda_runtime", "cudaLaunchKernel", 1, 30, 5, "\"correlation\":1")
    EV("cuda_runtime", "cudaLaunchKernel", 1, 50, 5, "\"correlation\":2")
    GPU("K2", 2, 50, 20)
    GPU("K1", 1, 40, 20)
    EV("cpu_op", "execute", 1, 110, 40, "")
    EV("cuda_runtime", "cudaLaunchKernel", 1, 120, 5, "\"correlation\":3")
    GPU("K3", 3, 130, 10)
    EV("cuda_runtime", "cudaMemsetAsync", 1, 210, 5, "\"correlation\":4")
    "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,\"tid\":7,\"ts\":220,\"dur\":5,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":4}},\n"
    EV("cpu_op", "aten::mm", 2, 310, 80, "")
    EV("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 2, 300, 100,
       "\"Sequence number\":5,\"Fwd thread id\":1")
    EV("cuda_runtime", "cudaLaunchKernel", 2, 320, 1, "\"correlation\":5")
    GPU("K4", 5, 330, 20)
    "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":600,\"s\":\"t\"}\n"
    "]}\n";

static tprof_trace *read_trace(void)
{
    tprof_trace *t = NULL;
    char err[256];
    tprof_read_opts o = { .keep = TPROF_OPS_KEEP };
    assert_int_equal(tprof_trace_read_mem(&t, TRACE, sizeof TRACE - 1, "ops.json", &o, err, sizeof err), 0);
    return t;
}

/* The trace read with KEEP (TPROF_OPS_KEEP with or without compact spans). */
static tprof_trace *read_trace_keep(uint32_t keep)
{
    tprof_trace *t = NULL;
    char err[256];
    tprof_read_opts o = { .keep = keep };
    assert_int_equal(tprof_trace_read_mem(&t, TRACE, sizeof TRACE - 1, "ops.json", &o, err, sizeof err), 0);
    return t;
}

static tprof_result *ops_of(const tprof_trace *t, tprof_ops_by by, int depth, int64_t a, int64_t b)
{
    tprof_ops_opts o = { .by = by, .depth = depth, .step_first = a, .step_last = b };
    tprof_result *r = NULL;
    assert_int_equal(tprof_ops(t, &o, &r), 0);
    return r;
}

/* The row whose column COL is KEY, or -1. */
static long row_of(const tprof_rows *rows, const char *col, const char *key)
{
    for (size_t i = 0; i < tprof_rows_count(rows); i++)
        if (!strcmp(tprof_rows_str(rows, i, col), key)) return (long)i;
    return -1;
}

#define CHECK(ROWS, I, COL, V) assert_int_equal(tprof_rows_int(ROWS, (size_t)(I), COL), (V))

static void test_by_name(void **state)
{
    (void)state;
    tprof_trace *t = read_trace();
    tprof_result *r = ops_of(t, TPROF_OPS_BY_NAME, 0, -1, -1);
    const tprof_rows *top = tprof_result_top_c(r), *rows = tprof_result_table_c(r, 0);
    CHECK(top, 0, "launches", 5);       /* addmm, the bare launch, the memset call, mm, K5 */
    CHECK(top, 0, "gpu_events", 6);
    CHECK(top, 0, "gpu_ns", 85 * US);   /* 20 + 20 + 10 + 5 + 20 + 10 */
    CHECK(top, 0, "direct_ns", 75 * US); /* 30 + 10 + 5 + 20 + 10 */
    CHECK(top, 0, "unlinked_events", 1);
    CHECK(top, 0, "unlinked_ns", 10 * US);
    assert_int_equal(tprof_rows_count(rows), 5); /* aten::linear launched nothing itself: no row */
    assert_int_equal(row_of(rows, "op", "aten::linear"), -1);
    assert_int_equal(row_of(rows, "op", "execute"), -1);

    long i = row_of(rows, "op", "aten::addmm");
    assert_int_equal(i, 0); /* the most direct time first */
    CHECK(rows, i, "count", 1);
    CHECK(rows, i, "kernels", 2);
    CHECK(rows, i, "direct_ns", 30 * US);
    CHECK(rows, i, "subtree_ns", 30 * US);
    CHECK(rows, i, "device_self_ns", 40 * US);
    CHECK(rows, i, "cpu_total_ns", 60 * US);
    CHECK(rows, i, "cpu_self_ns", 50 * US); /* minus its two 5 us launches */
    CHECK(rows, i, "backward_direct_ns", 0);
    assert_float_equal(tprof_rows_real(rows, (size_t)i, "share"), 30.0 / 75.0, 1e-12);

    i = row_of(rows, "op", "aten::mm");
    CHECK(rows, i, "direct_ns", 20 * US);
    CHECK(rows, i, "backward_direct_ns", 20 * US);
    CHECK(rows, i, "cpu_self_ns", 79 * US);

    i = row_of(rows, "op", "cudaLaunchKernel"); /* through execute: the call is its own launcher */
    CHECK(rows, i, "direct_ns", 10 * US);
    CHECK(rows, i, "cpu_total_ns", 5 * US);
    i = row_of(rows, "op", "cudaMemsetAsync");
    CHECK(rows, i, "direct_ns", 5 * US);
    i = row_of(rows, "op", "(GPU work without a launch in the trace)");
    CHECK(rows, i, "count", 1);
    CHECK(rows, i, "direct_ns", 10 * US);
    CHECK(rows, i, "cpu_total_ns", 0);
    tprof_result_free(r);
    tprof_trace_free(t);
}

static void test_by_module(void **state)
{
    (void)state;
    tprof_trace *t = read_trace();
    tprof_result *r = ops_of(t, TPROF_OPS_BY_MODULE, 0, -1, -1);
    const tprof_rows *rows = tprof_result_table_c(r, 0);
    assert_int_equal(tprof_rows_count(rows), 4);
    long i = row_of(rows, "module", "Net.Linear"); /* addmm forward 30, mm backward 20 */
    CHECK(rows, i, "count", 2);
    CHECK(rows, i, "direct_ns", 50 * US);
    CHECK(rows, i, "backward_direct_ns", 20 * US);
    i = row_of(rows, "module", "Net");
    CHECK(rows, i, "direct_ns", 10 * US);
    i = row_of(rows, "module", "(outside nn.Modules)");
    CHECK(rows, i, "direct_ns", 5 * US);
    assert_true(row_of(rows, "module", "(GPU work without a launch in the trace)") >= 0);
    tprof_result_free(r);

    r = ops_of(t, TPROF_OPS_BY_MODULE, 1, -1, -1); /* --depth 1 */
    rows = tprof_result_table_c(r, 0);
    i = row_of(rows, "module", "Net");
    CHECK(rows, i, "count", 3);
    CHECK(rows, i, "direct_ns", 60 * US);
    tprof_result_free(r);
    tprof_trace_free(t);
}

static void test_by_shape_and_steps(void **state)
{
    (void)state;
    tprof_trace *t = read_trace();
    tprof_result *r = ops_of(t, TPROF_OPS_BY_SHAPE, 0, -1, -1);
    const tprof_rows *rows = tprof_result_table_c(r, 0);
    long i = row_of(rows, "op", "aten::addmm");
    assert_string_equal(tprof_rows_str(rows, (size_t)i, "input_dims"), "[[4],[2,3],[3,4]]");
    assert_string_equal(tprof_rows_str(rows, (size_t)i, "input_types"), "[\"float\",\"float\",\"float\"]");
    assert_string_equal(tprof_rows_str(rows, (size_t)i, "input_strides"), "");
    i = row_of(rows, "op", "aten::mm");
    assert_string_equal(tprof_rows_str(rows, (size_t)i, "input_dims"), "");
    tprof_result_free(r);

    /* step 2: mm (starts at 310) and K5 (at 500) */
    r = ops_of(t, TPROF_OPS_BY_NAME, 0, 2, 2);
    const tprof_rows *top = tprof_result_top_c(r);
    CHECK(top, 0, "launches", 2);
    CHECK(top, 0, "direct_ns", 30 * US);
    CHECK(top, 0, "step_first", 2);
    tprof_result_free(r);
    tprof_ops_opts o = { .by = TPROF_OPS_BY_NAME, .step_first = 7, .step_last = 9 };
    assert_int_equal(tprof_ops(t, &o, &r), TPROF_EUSAGE);
    tprof_trace_free(t);
}

/* Spans 2^63 ns apart on three threads do not fit the radix sort's 64-bit
 * key: the merge sort puts them in the same order. */
static void test_wide_times(void **state)
{
    (void)state;
    static const char far[] = ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::far\",\"pid\":1,\"tid\":3,"
                              "\"ts\":9000000000000000,\"dur\":1}]}\n";
    char buf[sizeof TRACE + sizeof far];
    size_t n = sizeof TRACE - 1; /* the last event's end: then the far one */
    while (n > 0 && TRACE[n] != '}') n--;
    while (n > 0 && TRACE[n - 1] != '}') n--;
    n--;
    memcpy(buf, TRACE, n + 1);
    memcpy(buf + n + 1, far, sizeof far);
    tprof_trace *t = NULL;
    char err[256];
    tprof_read_opts o = { .keep = TPROF_OPS_KEEP };
    assert_int_equal(tprof_trace_read_mem(&t, buf, strlen(buf), "wide.json", &o, err, sizeof err), 0);
    tprof_result *r = ops_of(t, TPROF_OPS_BY_NAME, 0, -1, -1);
    const tprof_rows *rows = tprof_result_table_c(r, 0);
    long i = row_of(rows, "op", "aten::addmm");
    CHECK(rows, i, "direct_ns", 30 * US);
    CHECK(rows, i, "cpu_self_ns", 50 * US);
    i = row_of(rows, "op", "aten::mm");
    CHECK(rows, i, "backward_direct_ns", 20 * US);
    CHECK(tprof_result_top_c(r), 0, "direct_ns", 75 * US);
    tprof_result_free(r);
    tprof_trace_free(t);
}

/* Two ranks combine by key: sums add, min and max over both, shares again. */
static void test_combine(void **state)
{
    (void)state;
    tprof_trace *t = read_trace();
    tprof_result *parts[2] = { ops_of(t, TPROF_OPS_BY_NAME, 0, -1, -1), ops_of(t, TPROF_OPS_BY_NAME, 0, -1, -1) };
    const int64_t ranks[2] = { 0, 1 };
    tprof_result *c = NULL;
    assert_int_equal(tprof_ops_combine((const tprof_result *const *)parts, ranks, 2, &c), 0);
    const tprof_rows *rows = tprof_result_table_c(c, 0);
    long i = row_of(rows, "op", "aten::addmm");
    CHECK(rows, i, "count", 2);
    CHECK(rows, i, "direct_ns", 60 * US);
    CHECK(rows, i, "max_direct_ns", 30 * US);
    CHECK(tprof_result_top_c(c), 0, "direct_ns", 150 * US);
    assert_float_equal(tprof_rows_real(rows, (size_t)i, "share"), 0.4, 1e-12);
    tprof_result_free(c);
    tprof_result_free(parts[0]);
    tprof_result_free(parts[1]);
    tprof_trace_free(t);
}

/* The performance model on worked examples (docs/METRICS.md has the formulas). */
static void test_op_cost(void **state)
{
    (void)state;
    tprof_op_cost c;
    /* addmm 788x768x768 bf16 with bias: 2MNK + MN; (MK + KN + MN + N) x 2 bytes */
    assert_int_equal(tprof_op_cost_of("aten::addmm", "[[768],[788,768],[768,768],[],[]]",
                                      "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"]",
                                      "[\"\",\"\",\"\",\"1\",\"1\"]", &c), 1);
    assert_true(c.flops == 930167808.0);
    assert_true(c.bytes == 3601920.0);
    assert_int_equal(c.dtype, TPROF_DT_BF16);
    assert_string_equal(c.family, "gemm");
    /* flash attention, B,H,N,d = 8,16,4096,128, not causal: 4 B H N^2 d; (q + k + v + o) x 2 */
    assert_int_equal(tprof_op_cost_of("aten::_scaled_dot_product_flash_attention",
                                      "[[8,16,4096,128],[8,16,4096,128],[8,16,4096,128],[],[]]",
                                      "[\"c10::BFloat16\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\",\"Scalar\"]",
                                      "[\"\",\"\",\"\",\"0.0\",\"False\"]", &c), 1);
    assert_true(c.flops == 8.0 * 16 * 2 * 4096 * 4096 * 256);
    assert_true(c.bytes == 4.0 * 8 * 16 * 4096 * 128 * 2);
    /* causal halves it; the launcher's layout is B,N,H,d with is_causal at input 8 */
    assert_int_equal(tprof_op_cost_of("aten::_flash_attention_forward",
                                      "[[8,4096,16,128],[8,4096,16,128],[8,4096,16,128],[],[],[],[],[],[]]",
                                      "[\"c10::BFloat16\"]", "[\"\",\"\",\"\",\"\",\"\",\"4096\",\"4096\",\"0.0\",\"True\"]",
                                      &c), 1);
    assert_true(c.flops == 8.0 * 16 * 2 * 4096 * 4096 * 256 / 2);
    /* convolution 4x3x224x224 * 768x3x16x16, stride 16: out 4x768x14x14; 2 x out x Cin k k */
    assert_int_equal(tprof_op_cost_of("aten::cudnn_convolution", "[[4,3,224,224],[768,3,16,16],[],[],[],[]]",
                                      "[\"c10::BFloat16\",\"c10::BFloat16\"]",
                                      "[\"\",\"\",\"[0, 0]\",\"[16, 16]\",\"[1, 1]\",\"1\"]", &c), 1);
    assert_true(c.flops == 2.0 * 602112 * 768);
    assert_true(c.bytes == (602112.0 + 589824 + 602112) * 2);
    /* MIOpen's takes a bias first: padding 1, stride 2 at inputs 3 and 4 -> 56x56 to 28x28 */
    assert_int_equal(tprof_op_cost_of("aten::miopen_convolution", "[[1,64,56,56],[64,64,3,3],[],[],[],[],[]]",
                                      "[\"c10::BFloat16\",\"c10::BFloat16\"]",
                                      "[\"\",\"\",\"\",\"[1, 1]\",\"[2, 2]\",\"[1, 1]\",\"1\"]", &c), 1);
    assert_true(c.flops == 2.0 * (64 * 28 * 28) * (64 * 9));
    /* norm's input 1 is the order p: the dims are input 2 */
    assert_int_equal(tprof_op_cost_of("aten::norm", "[[4096,1024],[],[],[]]", "[\"float\"]",
                                      "[\"\",\"2\",\"[1]\",\"False\"]", &c), 1);
    assert_true(c.bytes == (4096.0 * 1024 + 4096) * 4);
    /* layer norm over 768 of 4x197x768: 6 Ch + 5 E; (2 E + 6 Ch) x 2 */
    assert_int_equal(tprof_op_cost_of("aten::native_layer_norm", "[[4,197,768],[],[768],[768],[]]",
                                      "[\"c10::BFloat16\",\"\",\"c10::BFloat16\",\"c10::BFloat16\",\"Scalar\"]",
                                      "[\"\",\"[768]\",\"\",\"\",\"1e-12\"]", &c), 1);
    assert_true(c.flops == 6.0 * 768 + 5.0 * 605184);
    assert_true(c.bytes == (2.0 * 605184 + 6 * 768) * 2);
    /* mean over the last two dims of 10x512x7x7: the output is 10x512 (TraceLens counts 1 element) */
    assert_int_equal(tprof_op_cost_of("aten::mean", "[[10,512,7,7],[],[],[]]", "[\"c10::BFloat16\",\"\",\"Scalar\",\"\"]",
                                      "[\"\",\"[-1, -2]\",\"True\",\"\"]", &c), 1);
    assert_true(c.bytes == (250880.0 + 5120) * 2);
    /* binary with a broadcast and a scalar operand */
    assert_int_equal(tprof_op_cost_of("aten::mul", "[[8,1,4],[3,1],[]]", "[\"float\",\"float\",\"\"]", "[]", &c), 1);
    assert_true(c.flops == 96);
    assert_true(c.bytes == 32.0 * 4 + 3 * 4 + 96 * 4);
    /* no model, no inputs, or inputs that do not fit */
    assert_int_equal(tprof_op_cost_of("aten::_softmax", "[[4,8],[],[]]", "[\"float\"]", "[]", &c), 0);
    assert_int_equal(tprof_op_cost_of("aten::mm", "", "", "", &c), 0);
    assert_int_equal(tprof_op_cost_of("aten::mm", "[[4,8]]", "[\"float\"]", "[]", &c), 0);
    assert_int_equal(tprof_op_cost_of("aten::mm", "[[4,8],[8", "[\"float\"]", "[]", &c), 0);
}

/* The tree over compact spans is the tree over the same spans as events:
 * every grouping gives the same result either way. */
static void test_compact_spans(void **state)
{
    (void)state;
    tprof_trace *c = read_trace_keep(TPROF_OPS_KEEP), *e = read_trace_keep(TPROF_OPS_KEEP & ~TPROF_COMPACT_SPANS);
    assert_true(tprof_trace_nspans(c) > 0);
    assert_int_equal(tprof_trace_nspans(e), 0);
    assert_int_equal(tprof_trace_nevents(c) + tprof_trace_nspans(c), tprof_trace_nevents(e));
    for (int by = 0; by < TPROF_OPS_GROUPINGS; by++)
        for (int64_t first = -1; first <= 2; first += 3) {
            tprof_result *rc = ops_of(c, (tprof_ops_by)by, 2, first, first), *re = ops_of(e, (tprof_ops_by)by, 2, first, first);
            assert_true(tprof_result_equal(rc, re));
            tprof_result_free(rc);
            tprof_result_free(re);
        }
    tprof_trace_free(c);
    tprof_trace_free(e);
}

/* The same events in another order (reversed, then every third moved to
 * the end): the spans sorted into the same preorder, the same results. */
static void test_event_order(void **state)
{
    (void)state;
    const char *lines[64];
    size_t lens[64], n = 0;
    const char *p = strchr(TRACE, '\n') + 1, *stop = strstr(TRACE, "\n]}") + 1;
    while (p < stop && n < 64) {
        const char *e = strchr(p, '\n');
        lens[n] = (size_t)(e - p) - (e[-1] == ',');
        lines[n++] = p;
        p = e + 1;
    }
    char doc[sizeof TRACE + 64];
    size_t len = (size_t)sprintf(doc, "{\"traceEvents\":[\n");
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = n; i-- > 0;) {
            if ((i % 3 == 0) != (pass == 1)) continue;
            len += (size_t)sprintf(doc + len, "%s%.*s", len > 17 ? ",\n" : "", (int)lens[i], lines[i]);
        }
    len += (size_t)sprintf(doc + len, "\n]}\n");
    tprof_trace *a = read_trace_keep(TPROF_OPS_KEEP), *b = NULL;
    char err[256];
    tprof_read_opts o = { .keep = TPROF_OPS_KEEP };
    int rc = tprof_trace_read_mem(&b, doc, len, "order.json", &o, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(tprof_trace_nspans(a), tprof_trace_nspans(b));
    for (int by = 0; by < TPROF_OPS_GROUPINGS; by++) {
        tprof_result *ra = ops_of(a, (tprof_ops_by)by, 2, -1, -1), *rb = ops_of(b, (tprof_ops_by)by, 2, -1, -1);
        assert_true(tprof_result_equal(ra, rb));
        tprof_result_free(ra);
        tprof_result_free(rb);
    }
    tprof_trace_free(a);
    tprof_trace_free(b);
}

/* The tree found, placed and nested on two threads is the tree built on
 * one (the trace has two CPU threads; its records' halves split both). */
static void test_tree_split(void **state)
{
    (void)state;
    tprof_trace *t = read_trace();
    tprof_op_tree one, two;
    assert_int_equal(tprof_op_tree_build_split(t, &one, SIZE_MAX), 0);
    assert_int_equal(tprof_op_tree_build_split(t, &two, 0), 0);
    assert_int_equal(one.n, two.n);
    assert_true(one.n > 10);
    assert_memory_equal(one.rec, two.rec, one.n * sizeof *one.rec);
    assert_memory_equal(one.parent, two.parent, one.n * sizeof *one.parent);
    assert_memory_equal(one.end, two.end, one.n * sizeof *one.end);
    assert_memory_equal(one.kind, two.kind, one.n);
    assert_int_equal(one.ncalls, two.ncalls);
    assert_true(one.ncalls > 0);
    assert_memory_equal(one.call_node, two.call_node, one.ncalls * sizeof *one.call_node);
    assert_memory_equal(one.call_launcher, two.call_launcher, one.ncalls * sizeof *one.call_launcher);
    assert_memory_equal(one.gpu_first, two.gpu_first, (one.ncalls + 1) * sizeof *one.gpu_first);
    for (size_t k = 0; k < one.ncalls; k++) {
        assert_int_equal(one.kind[one.call_node[k]], TPROF_OPN_RUNTIME);
        assert_true(k == 0 || one.call_node[k] > one.call_node[k - 1]);
    }
    for (size_t i = 0; i < one.n; i++) assert_true(one.end[i] <= one.n && one.end[i] > i);
    tprof_op_tree_free(&one);
    tprof_op_tree_free(&two);
    tprof_trace_free(t);
}

/* R as the bytes tprof_result_write gives (*LEN of them; free them). */
static char *result_bytes(const tprof_result *r, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    assert_int_equal(tprof_result_write(r, f), 0);
    fclose(f);
    return buf;
}

/* Every grouping's table, its passes over the nodes and the launchers on
 * two threads, is the one made on one (the same two halves of launchers
 * summed apart and merged; under TSan, unit_ops checks the halves share
 * nothing they write). */
static void test_ops_split(void **state)
{
    (void)state;
    tprof_trace *t = read_trace();
    for (int by = 0; by < TPROF_OPS_GROUPINGS; by++) {
        tprof_ops_opts o = { .by = (tprof_ops_by)by, .step_first = -1, .step_last = -1 };
        tprof_result *one = NULL, *two = NULL;
        assert_int_equal(tprof_ops_split(t, &o, &one, SIZE_MAX), 0);
        assert_int_equal(tprof_ops_split(t, &o, &two, 0), 0);
        assert_true(tprof_rows_count(tprof_result_table(one, 0)) > 1);
        size_t la, lb;
        char *a = result_bytes(one, &la), *b = result_bytes(two, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        free(a);
        free(b);
        tprof_result_free(one);
        tprof_result_free(two);
    }
    tprof_trace_free(t);
}

/* DOC read as critical-path reads it. */
static tprof_trace *read_cp_trace(const char *doc, size_t len)
{
    tprof_trace *t = NULL;
    char err[256];
    tprof_read_opts o = { .keep = TPROF_CRITICAL_PATH_KEEP };
    assert_int_equal(tprof_trace_read_mem(&t, doc, len, "cp.json", &o, err, sizeof err), 0);
    return t;
}

/* The windows A[0..N) and B[0..N) found the same paths, edge by edge with
 * their bounds; both freed. */
static void assert_same_windows(tprof_cp_window *a, tprof_cp_window *b, int n)
{
    for (int k = 0; k < n; k++) {
        assert_int_equal(a[k].valid, b[k].valid);
        assert_int_equal(a[k].length_ns, b[k].length_ns);
        assert_int_equal(a[k].nodes, b[k].nodes);
        assert_int_equal(a[k].edges, b[k].edges);
        assert_int_equal(a[k].sync_edges, b[k].sync_edges);
        assert_memory_equal(a[k].bound_ns, b[k].bound_ns, sizeof a[k].bound_ns);
        assert_int_equal(a[k].npath, b[k].npath);
        for (size_t e = 0; e < a[k].npath; e++) {
            const tprof_cp_edge *x = &a[k].path[e], *y = &b[k].path[e];
            assert_int_equal(x->from, y->from);
            assert_int_equal(x->to, y->to);
            assert_int_equal(x->type, y->type);
            assert_int_equal(x->bound, y->bound);
            assert_int_equal(x->weight, y->weight);
            assert_int_equal(x->event, y->event);
            assert_int_equal(x->op, y->op);
        }
        tprof_cp_window_free(&a[k]);
        tprof_cp_window_free(&b[k]);
    }
}

/* The critical paths built on two threads (the host order beside the
 * correlations, the windows taken in turn) are those built on one: the two
 * steps and 30 windows of 20 us across the trace (many, so that both
 * threads take some; under TSan, unit_ops checks they share nothing), edge
 * by edge with their bounds. */
static void test_critical_path_split(void **state)
{
    (void)state;
    tprof_trace *t = read_cp_trace(TRACE, sizeof TRACE - 1);
    tprof_cp_ctx *one = tprof_cp_ctx_new_split(t, SIZE_MAX), *two = tprof_cp_ctx_new_split(t, 0);
    assert_non_null(one);
    assert_non_null(two);
    enum { NW = 32 };
    tprof_cp_span w[NW] = { { 1, 0, 250 * US }, { 2, 250 * US, 600 * US } };
    for (int k = 2; k < NW; k++) w[k] = (tprof_cp_span){ k, (k - 2) * 20 * US, (k - 1) * 20 * US };
    tprof_cp_window serial[NW], parallel[NW];
    for (int k = 0; k < NW; k++) assert_int_equal(tprof_cp_window_path(one, w[k].start, w[k].end, &serial[k]), 0);
    assert_int_equal(tprof_cp_paths(two, w, NW, parallel), 0);
    for (int k = 0; k < 2; k++) assert_true(serial[k].valid && serial[k].npath > 0 && serial[k].length_ns > 0);
    assert_same_windows(serial, parallel, NW);
    tprof_cp_ctx_free(one);
    tprof_cp_ctx_free(two);
    tprof_trace_free(t);
}

/* Each window's marks are packed to the range its records span in the
 * file; the Stream Wait Events every window takes (HTA takes them whatever
 * their time) may lie outside it. Two steps, each a kernel on stream 7, a
 * cudaEventRecord of it, a cudaStreamWaitEvent that makes stream 8 wait and
 * a kernel on stream 8, the GPU events written after both steps' CPU
 * events (as Kineto writes them): the windows (the steps, and 20 us slices)
 * find the paths they find with a slot for every record, each step with
 * its sync edge. */
#define SYNC_WAIT(CORR, REC, TS)                                                                             \
    "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Wait Event\",\"pid\":0,\"tid\":8,\"ts\":" #TS \
    ",\"dur\":0,\"args\":{\"cuda_sync_kind\":\"Stream Wait Event\",\"wait_on_stream\":7,"                       \
    "\"wait_on_cuda_event_record_corr_id\":" #REC ",\"stream\":8,\"correlation\":" #CORR ",\"device\":0}},\n"
#define GPU8(NAME, CORR, TS, DUR)                                                                           \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" NAME "\",\"pid\":0,\"tid\":8,\"ts\":" #TS ",\"dur\":" #DUR \
    ",\"args\":{\"device\":0,\"stream\":8,\"correlation\":" #CORR "}},\n"
#define SYNC_STEP(N, T0, OP, L1, R, W, L2, C1, C2, C3, C4)                                      \
    EV("user_annotation", "ProfilerStep#" #N, 1, T0, 100, "")                                                \
    EV("cpu_op", "aten::step", 1, OP, 60, "")                                                                \
    EV("cuda_runtime", "cudaLaunchKernel", 1, L1, 5, "\"correlation\":" #C1)                                 \
    EV("cuda_runtime", "cudaEventRecord", 1, R, 2, "\"correlation\":" #C2)                                   \
    EV("cuda_runtime", "cudaStreamWaitEvent", 1, W, 2, "\"correlation\":" #C3)                               \
    EV("cuda_runtime", "cudaLaunchKernel", 1, L2, 5, "\"correlation\":" #C4)                                 \

static void test_critical_path_slots(void **state)
{
    (void)state;
    static const char doc[] = "{\"traceEvents\":[\n"
        SYNC_STEP(1, 0, 10, 12, 20, 25, 30, 11, 12, 13, 14)
        SYNC_STEP(2, 100, 110, 112, 120, 125, 130, 21, 22, 23, 24)
        GPU("A1", 11, 40, 20) GPU8("B1", 14, 61, 20) SYNC_WAIT(13, 12, 60)
        GPU("A2", 21, 140, 20) GPU8("B2", 24, 161, 20) SYNC_WAIT(23, 22, 160)
        "{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":300,\"s\":\"t\"}\n"
        "]}\n";
    tprof_trace *t = read_cp_trace(doc, sizeof doc - 1);
    tprof_cp_ctx *packed = tprof_cp_ctx_new_split(t, 0), *every = tprof_cp_ctx_new_split(t, 0);
    assert_non_null(packed);
    assert_non_null(every);
    tprof_cp_ctx_record_slots(every);
    enum { NW = 12 };
    tprof_cp_span w[NW] = { { 1, 0, 100 * US }, { 2, 100 * US, 200 * US } };
    for (int k = 2; k < NW; k++) w[k] = (tprof_cp_span){ k, (k - 2) * 20 * US, (k - 1) * 20 * US };
    tprof_cp_window a[NW], b[NW];
    /* packed: one window after another on this thread (its marks grown and
       reused); a slot per record: the windows on two threads */
    for (int k = 0; k < NW; k++) assert_int_equal(tprof_cp_window_path(packed, w[k].start, w[k].end, &a[k]), 0);
    assert_int_equal(tprof_cp_paths(every, w, NW, b), 0);
    for (int k = 0; k < 2; k++) assert_true(a[k].valid && a[k].npath > 0 && a[k].sync_edges == 1);
    assert_int_equal(a[0].slotless, 1); /* step 2's Stream Wait Event, after step 1's records */
    for (int k = 0; k < NW; k++) assert_int_equal(b[k].slotless, 0);
    assert_same_windows(a, b, NW);
    tprof_cp_ctx_free(packed);
    tprof_cp_ctx_free(every);
    tprof_trace_free(t);
}

/* Module paths of any depth: 70 nested nn.Module frames (M0 outermost)
 * around one launch give a path of 70 classes, --depth 66 its outermost 66
 * (paths were cut at 64 frames once). */
static void test_deep_modules(void **state)
{
    (void)state;
    enum { DEEP = 70 };
    static char doc[DEEP * 160 + 1024];
    size_t len = (size_t)sprintf(doc, "{\"traceEvents\":[\n");
    for (int i = 0; i < DEEP; i++)
        len += (size_t)sprintf(doc + len,
                               "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"nn.Module: M%d_0\",\"pid\":1,\"tid\":1,"
                               "\"ts\":%d,\"dur\":%d},\n",
                               i, 100 + i, 1000 - 2 * i);
    len += (size_t)sprintf(doc + len,
                           "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":400,\"dur\":50},\n"
                           "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
                           "\"ts\":410,\"dur\":10,\"args\":{\"correlation\":7}},\n"
                           "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":500,\"dur\":30,"
                           "\"args\":{\"device\":0,\"stream\":7,\"correlation\":7}}\n]}\n");
    tprof_trace *t = NULL;
    char err[256];
    tprof_read_opts o = { .keep = TPROF_OPS_KEEP };
    assert_int_equal(tprof_trace_read_mem(&t, doc, len, "deep.json", &o, err, sizeof err), 0);
    char want[DEEP * 8] = "";
    size_t w = 0;
    for (int depth = 0; depth <= 66; depth += 66) {
        w = 0;
        for (int i = 0; i < (depth ? depth : DEEP); i++) w += (size_t)sprintf(want + w, "%sM%d", i ? "." : "", i);
        tprof_result *r = ops_of(t, TPROF_OPS_BY_MODULE, depth, -1, -1);
        const tprof_rows *rows = tprof_result_table_c(r, 0);
        long i = row_of(rows, "module", want);
        assert_true(i >= 0);
        CHECK(rows, i, "direct_ns", 30 * US);
        tprof_result_free(r);
    }
    tprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_name),
        cmocka_unit_test(test_by_module),
        cmocka_unit_test(test_deep_modules),
        cmocka_unit_test(test_by_shape_and_steps),
        cmocka_unit_test(test_combine),
        cmocka_unit_test(test_wide_times),
        cmocka_unit_test(test_op_cost),
        cmocka_unit_test(test_compact_spans),
        cmocka_unit_test(test_event_order),
        cmocka_unit_test(test_tree_split),
        cmocka_unit_test(test_ops_split),
        cmocka_unit_test(test_critical_path_split),
        cmocka_unit_test(test_critical_path_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
