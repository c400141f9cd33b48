/* Unit tests of trainprof diff (lib/analysis/diff.c): the kernel-name rules
 * of docs/METRICS.md case by case, and a diff of two hand-made traces whose
 * per-step numbers are worked out in the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/diff.h"
#include "trainprof/error.h"
#include "trainprof/trace.h"

static void norm_is(const char *in, const char *want)
{
    char buf[512];
    size_t n = tprof_kernel_name_normalize(in, buf, sizeof buf);
    if (strcmp(buf, want)) fail_msg("normalize(\"%s\") = \"%s\", expected \"%s\"", in, buf, want);
    assert_int_equal(n, strlen(want));
}

static void test_templates_and_arguments(void **state)
{
    (void)state;
    norm_is("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
            "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
            "at::native::vectorized_elementwise_kernel<>()");
    norm_is("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t()");
    /* a group after a space or "::" is not an argument list */
    norm_is("Memcpy HtoD (Pinned -> Device)", "Memcpy HtoD (Pinned -> Device)");
    norm_is("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 4, 64, 64>(float*, "
            "at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, 64, 64>, int)",
            "at::native::(anonymous namespace)::CatArrayBatchedCopy<>()");
    /* operator() then its arguments: both lists fold */
    norm_is("void f<1>::operator()(int)", "f<>::operator()()");
    /* an unmatched '<' folds the rest of the name */
    norm_is("foo<int, bar", "foo<>");
    norm_is("void ", "");
    norm_is("", "");
    norm_is("avoid thing", "avoid thing");
}

static void test_shapes_and_arch(void **state)
{
    (void)state;
    norm_is("ampere_sgemm_128x64_nn", "{arch}_sgemm_{tile}_nn");
    norm_is("volta_sgemm_32x32_sliced1x4_tn", "{arch}_sgemm_{tile}_sliced1x4_tn");
    norm_is("cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4", "cutlass_80_tensorop_s1688gemm_{tile}_{tile}_tn_align{n}");
    norm_is("sm90_xmma_gemm_tilesize128x128x64_kernel__5x_cublas", "{arch}_xmma_gemm_tilesize128x128x64_kernel__5x_cublas");
    norm_is("sm80x_kernel", "sm80x_kernel");
    norm_is("12x34", "{tile}");
    norm_is("k_1x2x3_", "k_{tile}_");
    norm_is("k_12x_a", "k_12x_a");
    norm_is("xalign8 _align8x align16", "xalign8 _align8x align{n}");
    norm_is("hopper_x<128x64>(int)", "{arch}_x<>()");
    norm_is("ampere", "ampere");
}

static void test_bounded_buffer(void **state)
{
    (void)state;
    char buf[8];
    memset(buf, 'z', sizeof buf);
    assert_int_equal(tprof_kernel_name_normalize("ampere_sgemm_128x64_nn", buf, sizeof buf), 22);
    assert_string_equal(buf, "{arch}_");
    assert_int_equal(tprof_kernel_name_normalize("abc", NULL, 0), 3);
}

static void test_metrics(void **state)
{
    (void)state;
    tprof_diff_metric m;
    assert_int_equal(tprof_diff_metric_parse("comm_exposed", &m), 0);
    assert_int_equal(m, TPROF_DIFF_COMM_EXPOSED);
    assert_string_equal(tprof_diff_metric_name(TPROF_DIFF_STEP_TIME), "step_time");
    assert_int_equal(tprof_diff_metric_parse("nope", &m), -1);
    for (int i = 0; i < TPROF_DIFF_METRICS; i++) {
        assert_int_equal(tprof_diff_metric_parse(tprof_diff_metric_name((tprof_diff_metric)i), &m), 0);
        assert_int_equal(m, i);
    }
    assert_true(fabs(tprof_diff_pct(100, 150) - 50.0) < 1e-12);
    assert_true(fabs(tprof_diff_pct(100, 80) + 20.0) < 1e-12);
    assert_true(tprof_diff_pct(0, 0) == 0.0);
    assert_true(isinf(tprof_diff_pct(0, 1)));
}

#define KERNEL(name, corr, ts, dur)                                                                             \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" #ts        \
    ",\"dur\":1,\"args\":{\"correlation\":" #corr "}},\n"                                                       \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts ",\"dur\":" #dur  \
    ",\"args\":{\"device\":0,\"stream\":7,\"correlation\":" #corr "}}"

/* base: steps [0,100) and [100,200) us; k<int> 10 us in each.
 *   step_time 100 us; k: 20 us / 2 steps = 10 us per step, 1 call per step. */
static const char BASE[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":100},\n"
    KERNEL("void k<int>(int)", 1, 10, 10) ",\n" KERNEL("void k<int>(int)", 2, 110, 10) "]}";
/* candidate: one step [0,150) us; k<float> 30 us, ampere_sgemm_64x64_nn 20 us.
 *   step_time 150 us; k: 30 us per step (+20 us, +200%); the sgemm only here. */
static const char CAND[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":150},\n"
    KERNEL("void k<float>(float)", 1, 10, 30) ",\n" KERNEL("ampere_sgemm_64x64_nn", 2, 50, 20) "]}";

static void test_diff_per_step(void **state)
{
    (void)state;
    tprof_trace *b, *c;
    char err[256];
    tprof_read_opts ro = { .keep = TPROF_DIFF_KEEP, .threads = 1 };
    assert_int_equal(tprof_trace_read_mem(&b, BASE, strlen(BASE), "base", &ro, err, sizeof err), 0);
    assert_int_equal(tprof_trace_read_mem(&c, CAND, strlen(CAND), "cand", &ro, err, sizeof err), 0);
    const tprof_trace *bs[] = { b }, *cs[] = { c };
    tprof_diff_result *r;
    tprof_diff_opts o = { .top = 5 };
    assert_int_equal(tprof_diff(bs, 1, cs, 1, &o, &r), 0);
    assert_int_equal(r->side[0].steps, 2);
    assert_int_equal(r->side[1].steps, 1);
    assert_true(r->side[0].metric[TPROF_DIFF_STEP_TIME] == 100000.0);
    assert_true(r->side[1].metric[TPROF_DIFF_STEP_TIME] == 150000.0);
    /* kernel time per step: base 20/2 = 10 us, candidate 50 us */
    assert_true(r->side[0].metric[TPROF_DIFF_KERNEL_TIME] == 10000.0);
    assert_true(r->side[1].metric[TPROF_DIFF_KERNEL_TIME] == 50000.0);
    assert_int_equal(r->nkernels, 2);
    assert_int_equal(r->matched, 1);
    assert_int_equal(r->only_cand, 1);
    assert_int_equal(r->only_base, 0);
    /* sorted by the larger total per step: k (30 us) before the sgemm (20 us) */
    const tprof_diff_kernel *k = &r->kernels[0];
    assert_string_equal(k->name, "k<>()");
    assert_string_equal(k->top[0], "void k<int>(int)");
    assert_string_equal(k->top[1], "void k<float>(float)");
    assert_true(k->count_per_step[0] == 1.0 && k->count_per_step[1] == 1.0);
    assert_true(k->total_per_step[0] == 10000.0 && k->total_per_step[1] == 30000.0);
    assert_true(k->mean_ns[0] == 10000.0 && k->mean_ns[1] == 30000.0);
    assert_true(k->delta_ns == 20000.0 && fabs(k->delta_pct - 200.0) < 1e-9);
    assert_string_equal(r->kernels[1].name, "{arch}_sgemm_{tile}_nn");
    assert_null(r->kernels[1].top[0]);
    assert_int_equal(r->nregressions, 2);
    assert_int_equal(r->regressions[0], 0);
    assert_int_equal(r->nimprovements, 0);
    assert_int_equal(r->nadded, 1);
    assert_int_equal(r->added[0], 1);
    tprof_diff_free(r);
    assert_int_equal(tprof_diff(bs, 0, cs, 1, &o, &r), TPROF_EUSAGE);
    tprof_trace_free(b);
    tprof_trace_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_templates_and_arguments),
        cmocka_unit_test(test_shapes_and_arch),
        cmocka_unit_test(test_bounded_buffer),
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_diff_per_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
