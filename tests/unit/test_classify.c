/* Unit tests of GPU event classification (lib/trace/classify.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/trace.h"
#include "unit.h"

typedef struct {
    const char *cat, *name;
    tprof_class want;
} cls_case;

static void run_cases(const tprof_classifier *c, const cls_case *k, size_t n)
{
    char msg[2048] = "";
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        tprof_class got = tprof_classify(c, k[i].cat, k[i].name);
        if (got != k[i].want) {
            size_t l = strlen(msg);
            snprintf(msg + l, sizeof msg - l, "\n  cat '%s' name '%s': %s, expected %s", k[i].cat, k[i].name,
                     tprof_class_name(got), tprof_class_name(k[i].want));
            bad++;
        }
    }
    if (bad) fail_msg("%zu case(s) wrong:%s", bad, msg);
}

static const cls_case BUILTIN[] = {
    /* collectives */
    { "kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", TPROF_CLASS_COMM },
    { "kernel", "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", TPROF_CLASS_COMM },
    { "kernel", "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", TPROF_CLASS_COMM },
    { "kernel", "void foo<ncclKernel_AllReduce_RING_LL_Sum_half>(int)", TPROF_CLASS_COMM },
    { "kernel", "rcclKernel_AllReduce_RING_LL_Sum_float", TPROF_CLASS_COMM },
    { "kernel", "void rccl_reduce_scatter<float>(RCCL_params)", TPROF_CLASS_COMM },
    { "", "hcom_allReduce__123_0_1", TPROF_CLASS_COMM },
    { "", "hcom_broadcast_", TPROF_CLASS_COMM },
    /* memory: by category, then by name */
    { "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", TPROF_CLASS_MEMORY },
    { "gpu_memcpy", "Memcpy DtoD (Device -> Device)", TPROF_CLASS_MEMORY },
    { "gpu_memset", "Memset (Device)", TPROF_CLASS_MEMORY },
    { "Memcpy", "Memcpy DtoH (Device -> Pageable)", TPROF_CLASS_MEMORY },
    { "Memset", "Memset (Device)", TPROF_CLASS_MEMORY },
    { "", "Memcpy HtoD (Pinned -> Device)", TPROF_CLASS_MEMORY },
    { "kernel", "Memset (Device)", TPROF_CLASS_MEMORY },
    /* synchronisation on a GPU track */
    { "cuda_sync", "cudaDeviceSynchronize", TPROF_CLASS_OTHER },
    { "cuda_sync", "Event Sync", TPROF_CLASS_OTHER },
    { "", "Context Sync", TPROF_CLASS_OTHER },
    { "", "Stream Wait Event", TPROF_CLASS_OTHER },
    { "", "Notify_Wait", TPROF_CLASS_OTHER },
    /* compute */
    { "kernel", "ampere_sgemm_128x64_tn", TPROF_CLASS_COMPUTE },
    { "kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1", TPROF_CLASS_COMPUTE },
    { "kernel",
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"
      "(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
      TPROF_CLASS_COMPUTE },
    { "kernel", "", TPROF_CLASS_COMPUTE },
    { "", "aclnnMatmul_MatMulV2", TPROF_CLASS_COMPUTE },
    /* near misses stay compute */
    { "kernel", "MemcpyKernel", TPROF_CLASS_COMPUTE },
    { "kernel", "Memsetter", TPROF_CLASS_COMPUTE },
};

static void test_builtin_rules(void **state)
{
    (void)state;
    run_cases(NULL, BUILTIN, sizeof BUILTIN / sizeof BUILTIN[0]);
    /* an empty classifier behaves like the built-in rules */
    tprof_classifier *c = tprof_classifier_new();
    assert_non_null(c);
    run_cases(c, BUILTIN, sizeof BUILTIN / sizeof BUILTIN[0]);
    tprof_classifier_free(c);
}

static void test_user_rules_take_precedence(void **state)
{
    (void)state;
    tprof_classifier *c = tprof_classifier_new();
    assert_non_null(c);
    assert_int_equal(tprof_classifier_add(c, TPROF_CLASS_COMM, "*dispatch*"), 0);
    assert_int_equal(tprof_classifier_add(c, TPROF_CLASS_COMPUTE, "Memcpy*"), 0);
    assert_int_equal(tprof_classifier_add(c, TPROF_CLASS_OTHER, "nccl*"), 0);
    assert_int_equal(tprof_classifier_add(c, TPROF_CLASS_MEMORY, "*dispatch_copy*"), 0); /* shadowed */
    assert_int_equal(tprof_classifier_add(c, TPROF_CLASS_MEMORY, "fused_[ab]?_copy"), 0);
    static const cls_case k[] = {
        { "kernel", "moe_dispatch_kernel", TPROF_CLASS_COMM },
        { "kernel", "dispatch", TPROF_CLASS_COMM },
        { "kernel", "void ep::dispatch_copy<float>(int)", TPROF_CLASS_COMM }, /* first match wins */
        { "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", TPROF_CLASS_COMPUTE },
        { "kernel", "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", TPROF_CLASS_OTHER },
        { "kernel", "fused_a1_copy", TPROF_CLASS_MEMORY },
        { "kernel", "fused_c1_copy", TPROF_CLASS_COMPUTE },
        { "kernel", "fused_a1_copy_x", TPROF_CLASS_COMPUTE }, /* whole-name match */
        /* names no rule matches fall through to the built-in rules */
        { "kernel", "hcom_allGather_", TPROF_CLASS_COMM },
        { "gpu_memset", "Memset (Device)", TPROF_CLASS_MEMORY },
        { "kernel", "ampere_sgemm_128x64_tn", TPROF_CLASS_COMPUTE },
    };
    run_cases(c, k, sizeof k / sizeof k[0]);
    tprof_classifier_free(c);
}

static void test_add_usage(void **state)
{
    (void)state;
    tprof_classifier *c = tprof_classifier_new();
    assert_int_equal(tprof_classifier_add(c, TPROF_CLASS_COUNT, "*"), TPROF_EUSAGE);
    assert_int_equal(tprof_classifier_add(c, TPROF_CLASS_COMM, NULL), TPROF_EUSAGE);
    assert_int_equal(tprof_classifier_add(NULL, TPROF_CLASS_COMM, "*"), TPROF_EUSAGE);
    /* many rules (grows its table) */
    char g[32];
    for (int i = 0; i < 100; i++) {
        snprintf(g, sizeof g, "k%d_*", i);
        assert_int_equal(tprof_classifier_add(c, i % 2 ? TPROF_CLASS_COMM : TPROF_CLASS_OTHER, g), 0);
    }
    assert_int_equal(tprof_classify(c, "kernel", "k99_x"), TPROF_CLASS_COMM);
    assert_int_equal(tprof_classify(c, "kernel", "k98_x"), TPROF_CLASS_OTHER);
    assert_int_equal(tprof_classify(c, "kernel", "k100_x"), TPROF_CLASS_COMPUTE);
    tprof_classifier_free(c);
    tprof_classifier_free(NULL);
}

static void test_class_names(void **state)
{
    (void)state;
    assert_string_equal(tprof_class_name(TPROF_CLASS_COMPUTE), "compute");
    assert_string_equal(tprof_class_name(TPROF_CLASS_COMM), "communication");
    assert_string_equal(tprof_class_name(TPROF_CLASS_MEMORY), "memory");
    assert_string_equal(tprof_class_name(TPROF_CLASS_OTHER), "other");
    tprof_class k;
    assert_int_equal(tprof_class_parse("communication", &k), 0);
    assert_int_equal(k, TPROF_CLASS_COMM);
    assert_int_equal(tprof_class_parse("COMM", &k), 0);
    assert_int_equal(k, TPROF_CLASS_COMM);
    assert_int_equal(tprof_class_parse("Memory", &k), 0);
    assert_int_equal(k, TPROF_CLASS_MEMORY);
    assert_int_equal(tprof_class_parse("mem", &k), 0);
    assert_int_equal(k, TPROF_CLASS_MEMORY);
    assert_int_equal(tprof_class_parse("other", &k), 0);
    assert_int_equal(k, TPROF_CLASS_OTHER);
    assert_int_equal(tprof_class_parse("compute", &k), 0);
    assert_int_equal(k, TPROF_CLASS_COMPUTE);
    assert_int_equal(tprof_class_parse("gpu", &k), TPROF_EUSAGE);
    assert_int_equal(tprof_class_parse("", &k), TPROF_EUSAGE);
    assert_string_equal(tprof_kind_name(TPROF_KIND_GPU), "gpu");
    assert_string_equal(tprof_kind_name(TPROF_KIND_CPU), "cpu");
}

static void test_load_rules(void **state)
{
    (void)state;
    static const char rules[] = "# user rules\n"
                                "\n"
                                "communication *dispatch*\n"
                                "   comm   *combine*   \n"
                                "memory: *copy_kernel*\n"
                                "compute\tnccl_fake_*\n"
                                "# trailing comment\n"
                                "other Memset*";
    char *path = write_temp("rules.txt", rules, sizeof rules - 1);
    tprof_classifier *c = tprof_classifier_new();
    char err[512] = "";
    int rc = tprof_classifier_load(c, path, err, sizeof err);
    if (rc) fail_msg("load: rc %d: %s", rc, err);
    static const cls_case k[] = {
        { "kernel", "moe_dispatch", TPROF_CLASS_COMM },
        { "kernel", "moe_combine", TPROF_CLASS_COMM },
        { "kernel", "moe_combine   ", TPROF_CLASS_COMM },
        { "kernel", "fast_copy_kernel", TPROF_CLASS_MEMORY },
        { "kernel", "nccl_fake_thing", TPROF_CLASS_COMPUTE },
        { "gpu_memset", "Memset (Device)", TPROF_CLASS_OTHER },
        { "kernel", "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", TPROF_CLASS_COMM },
    };
    run_cases(c, k, sizeof k / sizeof k[0]);
    tprof_classifier_free(c);
    remove_temp(path);
}

static void test_load_errors(void **state)
{
    (void)state;
    /* line 3 has an unknown class */
    static const char bad1[] = "comm *a*\n# ok\ngpu *b*\ncompute *c*\n";
    char *path = write_temp("bad1.txt", bad1, sizeof bad1 - 1);
    tprof_classifier *c = tprof_classifier_new();
    char err[512] = "";
    assert_int_equal(tprof_classifier_load(c, path, err, sizeof err), TPROF_EFORMAT);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, ":3"));
    tprof_classifier_free(c);
    remove_temp(path);

    /* a class without a glob, on line 2 */
    static const char bad2[] = "memory *m*\ncompute\n";
    path = write_temp("bad2.txt", bad2, sizeof bad2 - 1);
    c = tprof_classifier_new();
    assert_int_equal(tprof_classifier_load(c, path, err, sizeof err), TPROF_EFORMAT);
    assert_non_null(strstr(err, ":2"));
    tprof_classifier_free(c);
    remove_temp(path);

    /* a class alone at the end of the file, no newline */
    static const char bad3[] = "memory *m*\nother";
    path = write_temp("bad3.txt", bad3, sizeof bad3 - 1);
    c = tprof_classifier_new();
    assert_int_equal(tprof_classifier_load(c, path, err, sizeof err), TPROF_EFORMAT);
    tprof_classifier_free(c);
    remove_temp(path);

    /* a missing file */
    c = tprof_classifier_new();
    assert_int_equal(tprof_classifier_load(c, "/tmp/tprof_unit_no_such_dir/rules", err, sizeof err), TPROF_EIO);
    assert_non_null(strstr(err, "/tmp/tprof_unit_no_such_dir/rules"));
    tprof_classifier_free(c);
}

/* The reader classifies GPU events with the classifier it is given. */
static void test_classifier_in_reader(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"moe_dispatch_kernel\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_Broadcast\",\"pid\":0,\"tid\":7,\"ts\":2,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\",\"pid\":0,\"tid\":7,\"ts\":3,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Event Sync\",\"pid\":0,\"tid\":7,\"ts\":4,\"dur\":1},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"moe_dispatch_kernel\",\"pid\":0,\"tid\":7,\"ts\":5,\"dur\":1}"
        "]}";
    static const tprof_class builtin[] = { TPROF_CLASS_COMPUTE, TPROF_CLASS_COMM, TPROF_CLASS_MEMORY,
                                           TPROF_CLASS_OTHER, TPROF_CLASS_COMPUTE };
    static const tprof_class user[] = { TPROF_CLASS_COMM, TPROF_CLASS_COMM, TPROF_CLASS_MEMORY, TPROF_CLASS_OTHER,
                                        TPROF_CLASS_COMM };
    tprof_classifier *c = tprof_classifier_new();
    assert_int_equal(tprof_classifier_add(c, TPROF_CLASS_COMM, "*dispatch*"), 0);
    for (int pass = 0; pass < 2; pass++) {
        tprof_read_opts o = { .keep = TPROF_KEEP_ALL, .classifier = pass ? c : NULL };
        tprof_trace *t;
        char err[256];
        assert_int_equal(tprof_trace_read_mem(&t, doc, sizeof doc - 1, "c.json", &o, err, sizeof err), 0);
        assert_int_equal(tprof_trace_nevents(t), 5);
        const tprof_event *ev = tprof_trace_events(t);
        for (int i = 0; i < 5; i++) {
            assert_int_equal(ev[i].kind, TPROF_KIND_GPU);
            if (ev[i].klass != (pass ? user : builtin)[i])
                fail_msg("pass %d event %d '%s': %s", pass, i, tprof_trace_str(t, ev[i].name),
                         tprof_class_name((tprof_class)ev[i].klass));
        }
        tprof_trace_free(t);
    }
    tprof_classifier_free(c);
}

/* Op categories of op names met in the shared traces, each assigned by hand. */
static void test_op_categories(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        tprof_op_category want;
    } k[] = {
        { "aten::mm", TPROF_OPCAT_GEMM },
        { "aten::addmm", TPROF_OPCAT_GEMM },
        { "aten::bmm", TPROF_OPCAT_GEMM },
        { "aten::_scaled_mm", TPROF_OPCAT_GEMM },
        { "aten::_flash_attention_forward", TPROF_OPCAT_ATTENTION },
        { "aten::_scaled_dot_product_efficient_attention_backward", TPROF_OPCAT_ATTENTION },
        { "aiter::mha_batch_prefill", TPROF_OPCAT_ATTENTION },
        { "aten::cudnn_convolution", TPROF_OPCAT_CONV },
        { "aten::miopen_convolution", TPROF_OPCAT_CONV },
        { "aten::convolution_backward", TPROF_OPCAT_CONV },
        { "aten::native_layer_norm", TPROF_OPCAT_NORM },
        { "aten::native_batch_norm_backward", TPROF_OPCAT_NORM },
        { "aten::_fused_rms_norm", TPROF_OPCAT_NORM },
        { "aiter::add_rmsnorm", TPROF_OPCAT_NORM },
        { "aten::native_group_norm_backward", TPROF_OPCAT_NORM },
        { "aten::mean", TPROF_OPCAT_REDUCTION },
        { "aten::sum", TPROF_OPCAT_REDUCTION },
        { "aten::_softmax", TPROF_OPCAT_REDUCTION },
        { "aten::argmax", TPROF_OPCAT_REDUCTION },
        { "aten::max_pool2d_with_indices_backward", TPROF_OPCAT_REDUCTION },
        { "triton_red_fused_add_mean_mul_pow_rsqrt_0", TPROF_OPCAT_REDUCTION },
        { "aten::add", TPROF_OPCAT_ELEMENTWISE },
        { "aten::add_", TPROF_OPCAT_ELEMENTWISE },
        { "aten::gelu", TPROF_OPCAT_ELEMENTWISE },
        { "aten::threshold_backward", TPROF_OPCAT_ELEMENTWISE },
        { "aten::_foreach_add_", TPROF_OPCAT_ELEMENTWISE },
        { "aten::normal_", TPROF_OPCAT_ELEMENTWISE }, /* not a normalization */
        { "triton_poi_fused__unsafe_view_add_3", TPROF_OPCAT_ELEMENTWISE },
        { "aten::copy_", TPROF_OPCAT_MEMORY },
        { "aten::fill_", TPROF_OPCAT_MEMORY },
        { "aten::cat", TPROF_OPCAT_MEMORY },
        { "aten::index_select", TPROF_OPCAT_MEMORY },
        { "cudaMemsetAsync", TPROF_OPCAT_MEMORY },
        { "hipMemcpyWithStream", TPROF_OPCAT_MEMORY },
        { "record_param_comms", TPROF_OPCAT_COMM },
        { "c10d::allreduce_", TPROF_OPCAT_COMM },
        { "nccl:all_reduce", TPROF_OPCAT_COMM },
        { "hipLaunchKernel", TPROF_OPCAT_OTHER },
        { "Torch-Compiled Region: 0/0", TPROF_OPCAT_OTHER },
        { "sglang::store_cache", TPROF_OPCAT_OTHER },
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++)
        if (tprof_op_category_of(NULL, k[i].name) != k[i].want)
            fail_msg("%s: %s, expected %s", k[i].name, tprof_op_category_name(tprof_op_category_of(NULL, k[i].name)),
                     tprof_op_category_name(k[i].want));

    /* the user's op rules first, then kernel-class rules on the op's name */
    tprof_classifier *c = tprof_classifier_new();
    assert_int_equal(tprof_classifier_add_rule(c, "attention", "sglang::store_cache"), 0);
    assert_int_equal(tprof_classifier_add_rule(c, "gemm", "aten::mul"), 0);
    assert_int_equal(tprof_classifier_add_rule(c, "communication", "my_lib::*"), 0);
    assert_int_equal(tprof_classifier_add_rule(c, "compute", "aten::copy_"), 0); /* no op category: built-in */
    assert_int_equal(tprof_classifier_add_rule(c, "bogus", "x"), TPROF_EUSAGE);
    assert_int_equal(tprof_op_category_of(c, "sglang::store_cache"), TPROF_OPCAT_ATTENTION);
    assert_int_equal(tprof_op_category_of(c, "aten::mul"), TPROF_OPCAT_GEMM);
    assert_int_equal(tprof_op_category_of(c, "my_lib::exchange"), TPROF_OPCAT_COMM);
    assert_int_equal(tprof_op_category_of(c, "aten::copy_"), TPROF_OPCAT_MEMORY);
    /* an op category rule names no kernel class */
    assert_int_equal(tprof_classify(c, "kernel", "aten::mul"), tprof_classify(NULL, "kernel", "aten::mul"));
    tprof_op_category oc;
    assert_int_equal(tprof_op_category_parse("normalization", &oc), 0);
    assert_int_equal(oc, TPROF_OPCAT_NORM);
    assert_int_equal(tprof_op_category_parse("compute", &oc), -1);
    tprof_classifier_free(c);

    static const char rules[] = "gemm my_gemm*\nreduction: my_red*\n";
    char *path = write_temp("oprules.txt", rules, sizeof rules - 1);
    c = tprof_classifier_new();
    char err[512] = "";
    if (tprof_classifier_load(c, path, err, sizeof err)) fail_msg("load: %s", err);
    assert_int_equal(tprof_op_category_of(c, "my_gemm_fused"), TPROF_OPCAT_GEMM);
    assert_int_equal(tprof_op_category_of(c, "my_red"), TPROF_OPCAT_REDUCTION);
    tprof_classifier_free(c);
    remove_temp(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_rules),
        cmocka_unit_test(test_user_rules_take_precedence),
        cmocka_unit_test(test_add_usage),
        cmocka_unit_test(test_class_names),
        cmocka_unit_test(test_load_rules),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_classifier_in_reader),
        cmocka_unit_test(test_op_categories),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
