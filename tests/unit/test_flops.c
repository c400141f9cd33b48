/* Unit tests of lib/flops: the reference's test vectors (VeOmni's
 * tests/utils/test_count_flops.py, delta_time = 1 s), the worked Qwen3-8B
 * example of its EnvironMeter, the device peak table and the errors. The
 * configs are written here with the keys of the shared toy configs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/flops.h"


static const char qwen3_5_toy[] =
    "{\"model_type\":\"qwen3_5\",\"text_config\":{\"head_dim\":256,\"hidden_size\":5120,"
    "\"intermediate_size\":17408,\"num_hidden_layers\":8,\"num_attention_heads\":24,"
    "\"num_key_value_heads\":4,\"linear_conv_kernel_dim\":4,\"linear_key_head_dim\":128,"
    "\"linear_num_key_heads\":16,\"linear_num_value_heads\":48,\"linear_value_head_dim\":128,"
    "\"vocab_size\":248320,\"layer_types\":[\"linear_attention\",\"linear_attention\",\"linear_attention\","
    "\"full_attention\",\"linear_attention\",\"linear_attention\",\"linear_attention\",\"full_attention\"]},"
    "\"vision_config\":{\"deepstack_visual_indexes\":[],\"depth\":27,\"hidden_size\":1152,\"in_channels\":3,"
    "\"intermediate_size\":4304,\"num_heads\":16,\"out_hidden_size\":5120,\"patch_size\":16,"
    "\"spatial_merge_size\":2,\"temporal_patch_size\":2}}";

/* layer types from the legacy full_attention_interval (4 layers -> 1 full) */
static const char qwen3_5_moe_toy[] =
    "{\"model_type\":\"qwen3_5_moe\",\"text_config\":{\"head_dim\":256,\"hidden_size\":2048,"
    "\"full_attention_interval\":4,\"num_hidden_layers\":4,\"num_attention_heads\":16,"
    "\"num_key_value_heads\":2,\"linear_conv_kernel_dim\":4,\"linear_key_head_dim\":128,"
    "\"linear_num_key_heads\":16,\"linear_num_value_heads\":32,\"linear_value_head_dim\":128,"
    "\"moe_intermediate_size\":512,\"num_experts\":16,\"num_experts_per_tok\":2,"
    "\"shared_expert_intermediate_size\":512,\"vocab_size\":248320},"
    "\"vision_config\":{\"deepstack_visual_indexes\":[],\"depth\":27,\"hidden_size\":1152,\"in_channels\":3,"
    "\"intermediate_size\":4304,\"num_heads\":16,\"out_hidden_size\":2048,\"patch_size\":16,"
    "\"spatial_merge_size\":2,\"temporal_patch_size\":2}}";

static const char gpt_oss_toy[] =
    "{\"model_type\":\"gpt_oss\",\"head_dim\":4,\"hidden_size\":16,\"intermediate_size\":16,"
    "\"layer_types\":[\"sliding_attention\",\"full_attention\"],\"num_attention_heads\":4,"
    "\"num_experts_per_tok\":2,\"num_hidden_layers\":2,\"num_key_value_heads\":2,\"num_local_experts\":4,"
    "\"sliding_window\":8,\"vocab_size\":200000}";

#define DSV4_TOY(layer_types)                                                                           \
    "{\"model_type\":\"deepseek_v4\",\"vocab_size\":1024,\"hidden_size\":256,\"moe_intermediate_size\":128," \
    "\"num_hidden_layers\":4,\"num_attention_heads\":8,\"num_key_value_heads\":1,\"head_dim\":64,"      \
    "\"q_lora_rank\":64,\"num_experts_per_tok\":2,\"n_routed_experts\":8,\"n_shared_experts\":1,"       \
    "\"compress_rates\":{\"compressed_sparse_attention\":4,\"heavily_compressed_attention\":32},"     \
    "\"hc_mult\":4,\"sliding_window\":32,\"o_groups\":2,\"o_lora_rank\":64,\"index_n_heads\":8,"       \
    "\"index_head_dim\":128,\"index_topk\":32" layer_types "}"

static const char qwen3_8b[] =
    "{\"model_type\":\"qwen3\",\"head_dim\":128,\"hidden_size\":4096,\"intermediate_size\":12288,"
    "\"num_attention_heads\":32,\"num_hidden_layers\":36,\"num_key_value_heads\":8,\"vocab_size\":151936}";

static tprof_model *parse(const char *json)
{
    tprof_model *m = NULL;
    char err[512];
    int rc = tprof_model_parse(&m, json, strlen(json), "config.json", err, sizeof err);
    if (rc) fail_msg("parse: %s", err);
    return m;
}

static tprof_flops estimate(const char *json, const int64_t *seqs, size_t n, const int64_t *imgs, size_t ni,
                            int freeze)
{
    tprof_model *m = parse(json);
    tprof_flops_input in = { .seqlens = seqs, .nseqs = n, .images = imgs, .nimages = ni, .freeze_vit = freeze };
    tprof_flops f;
    char err[512];
    int rc = tprof_flops_estimate(m, &in, &f, err, sizeof err);
    if (rc) fail_msg("estimate: %s", err);
    tprof_model_free(m);
    assert_true(f.total == f.linear + f.attention + f.vision);
    return f;
}

/* TFLOP/s at delta_time = 1 s against the reference, to 1e-12 relative */
static void expect_tflops(double flops, double want)
{
    double got = flops / 1e12;
    if (fabs(got - want) > 1e-12 * fabs(want)) fail_msg("got %.15g TFLOPs, want %.15g", got, want);
}

static const int64_t four_k[] = { 1024, 1024, 1024, 1024 };
static const int64_t images[] = { 256, 512 };
static const int64_t short_seqs[] = { 12, 5 };

static void test_qwen3_5(void **state)
{
    (void)state;
    tprof_flops f = estimate(qwen3_5_toy, four_k, 4, NULL, 0, 0);
    expect_tflops(f.total, 106.965220982784);
    assert_true(f.total == 106965220982784.0); /* exact: every term is an integer below 2^53 */
    assert_true(f.vision == 0);
    f = estimate(qwen3_5_toy, four_k, 4, images, 2, 0);
    expect_tflops(f.total, 109.196454395904);
    assert_true(f.total == 109196454395904.0);
    assert_true(f.vision == 109196454395904.0 - 106965220982784.0);
    assert_true(f.tokens == 4096 && f.image_tokens == 768);
    /* a frozen tower: linear 2/6 and attention 4/12 of the trained one */
    tprof_flops z = estimate(qwen3_5_toy, four_k, 4, images, 2, 1);
    double lin = f.vision - f.vision_attention;
    assert_true(fabs(z.vision - (lin / 3 + f.vision_attention / 3)) < 1e-3);
}

static void test_qwen3_5_moe(void **state)
{
    (void)state;
    tprof_flops f = estimate(qwen3_5_moe_toy, four_k, 4, NULL, 0, 0);
    expect_tflops(f.total, 16.88828116992);
    /* the reference's number before the shared-expert gate, plus 6·H·L·T */
    expect_tflops(f.total - 6.0 * 2048 * 4 * 4096, 16.888079843328);
    f = estimate(qwen3_5_moe_toy, four_k, 4, images, 2, 0);
    expect_tflops(f.total, 19.054284767232);
    expect_tflops(f.total - 6.0 * 2048 * 4 * 4096, 19.05408344064);
}

static void test_gpt_oss(void **state)
{
    (void)state;
    tprof_flops f = estimate(gpt_oss_toy, short_seqs, 2, NULL, 0, 0);
    expect_tflops(f.total, 0.000326931456);
    assert_true(f.total == 326931456.0);
}

static void test_deepseek_v4(void **state)
{
    (void)state;
    /* the toy config has no layer_types (the default gives 3 HCA + 1 CSA) */
    tprof_flops f = estimate(DSV4_TOY(""), short_seqs, 2, NULL, 0, 0);
    expect_tflops(f.total, 0.000264658944);
    assert_true(f.total == 264658944.0);
    tprof_flops g = estimate(DSV4_TOY(",\"layer_types\":[\"heavily_compressed_attention\","
                                      "\"compressed_sparse_attention\",\"heavily_compressed_attention\","
                                      "\"heavily_compressed_attention\"]"),
                             short_seqs, 2, NULL, 0, 0);
    assert_true(g.total == f.total);
}

/* The reference's worked example: Qwen3-8B on 8 H100s, 2 x 4096 tokens per
 * rank, 2 s steps: N = 7,568,097,280 and 215.68 TFLOP/s per rank. */
static void test_qwen3_8b_and_meter(void **state)
{
    (void)state;
    const int64_t seqs[] = { 4096, 4096 };
    tprof_flops f = estimate(qwen3_8b, seqs, 2, NULL, 0, 0);
    assert_true(f.params_active == 7568097280.0);
    assert_true(f.total == 6.0 * 7568097280.0 * 8192 + 12.0 * 2 * 4096 * 4096 * 128 * 32 * 36);

    tprof_model *m = parse(qwen3_8b);
    double peak;
    assert_int_equal(tprof_device_peak("NVIDIA H100 80GB HBM3", &peak), 0);
    tprof_meter *mt = tprof_meter_new(m, peak, 8, 8);
    assert_non_null(mt);
    tprof_meter_metrics out;
    for (int step = 1; step <= 10; step++) {
        assert_int_equal(tprof_meter_add(mt, seqs, 1, NULL, 0), 0);
        assert_int_equal(tprof_meter_add(mt, seqs + 1, 1, NULL, 0), 0); /* a second micro-batch */
        double local[3], sums[3];
        char err[256];
        assert_int_equal(tprof_meter_local(mt, 2.0, local, err, sizeof err), 0);
        assert_true(fabs(local[0] - 215.680372703232) < 1e-9);
        assert_true(local[1] == 8192 && local[2] == 2);
        for (int i = 0; i < 3; i++) sums[i] = 8 * local[i]; /* eight DP ranks alike */
        assert_int_equal(tprof_meter_finish(mt, 2.0, sums, &out), 0);
    }
    const char *names[TPROF_METER_NMETRICS];
    double v[TPROF_METER_NMETRICS];
    assert_int_equal(tprof_meter_list(&out, names, v), TPROF_METER_NMETRICS);
    static const char *const want_names[] = {
        "flops_achieved(T)", "flops_promised(T)", "mfu", "training/avg_effective_len",
        "training/avg_sample_seq_len", "tokens_per_second(M)", "consume_tokens(M)", "consume_tokens(B)",
        "consumed_chunk_num",
    };
    const double want[] = { 1725.442981625856, 7912, 1725.442981625856 / 7912, 8192, 4096, 0.032768,
                            0.65536, 0.00065536, 160 };
    for (int i = 0; i < TPROF_METER_NMETRICS; i++) {
        assert_string_equal(names[i], want_names[i]);
        if (fabs(v[i] - want[i]) > 1e-12 * fabs(want[i])) fail_msg("%s = %.15g, want %.15g", names[i], v[i], want[i]);
    }
    assert_true(fabs(out.mfu - 0.2181) < 1e-4);

    /* one rank alone: tprof_meter_step; an empty step is 0 tokens, not an error */
    tprof_meter_metrics one;
    char err[256];
    assert_int_equal(tprof_meter_add(mt, seqs, 2, NULL, 0), 0);
    assert_int_equal(tprof_meter_step(mt, 2.0, &one, err, sizeof err), 0);
    assert_true(fabs(one.mfu - 215.680372703232 / 7912) < 1e-12);
    assert_int_equal(tprof_meter_step(mt, 1.0, &one, err, sizeof err), 0);
    assert_true(one.flops_achieved_T == 0 && one.tokens_per_second_M == 0 && one.avg_sample_seq_len == 0);
    assert_int_equal(tprof_meter_step(mt, 0.0, &one, err, sizeof err), TPROF_EUSAGE);
    int64_t neg = -1;
    assert_int_equal(tprof_meter_add(mt, &neg, 1, NULL, 0), TPROF_EUSAGE);
    tprof_meter_free(mt);
    assert_null(tprof_meter_new(m, 0, 8, 0)); /* no peak: refused, never MFU 0 */
    assert_null(tprof_meter_new(m, 989, 0, 0));
    tprof_model_free(m);
}

static void expect_peak(const char *name, double want)
{
    double got = -1;
    assert_int_equal(tprof_device_peak(name, &got), 0);
    if (got != want) fail_msg("%s: %g, want %g", name, got, want);
}

static void test_peaks(void **state)
{
    (void)state;
    expect_peak("NVIDIA H200", 989); /* not H20 */
    expect_peak("NVIDIA H20", 148);
    expect_peak("NVIDIA GB200", 2565); /* not B200 */
    expect_peak("NVIDIA B200", 2382);
    expect_peak("NVIDIA GB300", 2500);
    expect_peak("NVIDIA B300", 2250);
    expect_peak("NVIDIA H100 80GB HBM3", 989);
    expect_peak("NVIDIA H800", 989);
    expect_peak("NVIDIA A100-SXM4-80GB", 312);
    expect_peak("NVIDIA L40S", 181.05);
    expect_peak("NVIDIA L20", 119.5);
    expect_peak("Ascend910B2", 354);
    expect_peak("Ascend910_9391", 354);
    expect_peak("AMD Instinct MI300X", 1307.4);
    expect_peak("NVIDIA L4", 121);
    expect_peak("NVIDIA A10", 125);
    double p = -1;
    assert_int_equal(tprof_device_peak("Tesla V100-SXM2-32GB", &p), TPROF_EUSAGE);
    assert_true(p == 0);
    assert_int_equal(tprof_device_peak(NULL, &p), TPROF_EUSAGE);
    size_t n = 0;
    while (tprof_device_peak_row(n, &p)) n++;
    assert_true(n >= 10);
    assert_string_equal(tprof_device_peak_row(0, &p), "H100|H800|H200");
    assert_true(p == 989);
}

static void test_errors(void **state)
{
    (void)state;
    tprof_model *m = NULL;
    char err[1024];
    const char *unknown = "{\"model_type\": \"gemma3\", \"hidden_size\": 8}";
    assert_int_equal(tprof_model_parse(&m, unknown, strlen(unknown), "c.json", err, sizeof err), TPROF_EUSAGE);
    assert_null(m);
    assert_non_null(strstr(err, "gemma3"));
    assert_non_null(strstr(err, "qwen3_5_moe_text"));
    assert_non_null(strstr(err, "deepseek_v4"));
    const char *prefix = "{\"model_type\": \"qwen3_\"}"; /* a prefix of supported names is not one */
    assert_int_equal(tprof_model_parse(&m, prefix, strlen(prefix), "c.json", err, sizeof err), TPROF_EUSAGE);
    const char *none = "{\"hidden_size\": 8}";
    assert_int_equal(tprof_model_parse(&m, none, strlen(none), "c.json", err, sizeof err), TPROF_EUSAGE);
    assert_non_null(strstr(err, "model_type"));
    const char *bad = "{\"model_type\": \"qwen3\", \"hidden_size\": 8,}";
    assert_int_equal(tprof_model_parse(&m, bad, strlen(bad), "c.json", err, sizeof err), TPROF_EFORMAT);
    assert_non_null(strstr(err, "byte 41"));
    const char *arr = "[1, 2]";
    assert_int_equal(tprof_model_parse(&m, arr, strlen(arr), "c.json", err, sizeof err), TPROF_EFORMAT);
    assert_int_equal(tprof_model_parse(&m, "", 0, "c.json", err, sizeof err), TPROF_EFORMAT);
    assert_int_equal(tprof_model_load(&m, "/nonexistent/config.json", err, sizeof err), TPROF_EIO);

    /* a key the formula needs, missing or of the wrong type, is named */
    const char *missing = "{\"model_type\": \"qwen3\", \"hidden_size\": 8}";
    m = parse(missing);
    tprof_flops f;
    tprof_flops_input in = { .seqlens = short_seqs, .nseqs = 2 };
    assert_int_equal(tprof_flops_estimate(m, &in, &f, err, sizeof err), TPROF_EFORMAT);
    assert_non_null(strstr(err, "intermediate_size"));
    assert_true(f.total == 0);
    tprof_model_free(m);
    const char *typed = "{\"model_type\": \"llama\", \"hidden_size\": \"8\"}";
    m = parse(typed);
    assert_int_equal(tprof_flops_estimate(m, &in, &f, err, sizeof err), TPROF_EFORMAT);
    assert_non_null(strstr(err, "hidden_size"));
    assert_non_null(strstr(err, "byte 39"));
    tprof_model_free(m);
    /* gpt_oss: layer_types that do not cover every layer */
    const char *lt = "{\"model_type\":\"gpt_oss\",\"hidden_size\":16,\"intermediate_size\":16,"
                     "\"layer_types\":[\"full_attention\"],\"num_attention_heads\":4,\"num_experts_per_tok\":2,"
                     "\"num_hidden_layers\":2,\"num_key_value_heads\":2,\"num_local_experts\":4,\"vocab_size\":8}";
    m = parse(lt);
    assert_int_equal(tprof_flops_estimate(m, &in, &f, err, sizeof err), TPROF_EFORMAT);
    assert_non_null(strstr(err, "layer_types"));
    tprof_model_free(m);
    /* a negative sequence length */
    m = parse(gpt_oss_toy);
    const int64_t neg[] = { 3, -1 };
    tprof_flops_input bad_in = { .seqlens = neg, .nseqs = 2 };
    assert_int_equal(tprof_flops_estimate(m, &bad_in, &f, err, sizeof err), TPROF_EUSAGE);
    assert_string_equal(tprof_model_type(m), "gpt_oss");
    tprof_model_free(m);
}


/* LoRA (docs/METRICS.md, "LoRA"), every expectation derived by hand from
 * the reference's formulas (section 4.8). */
static const char lora_qwen3[] =
    "{\"model_type\":\"qwen3\",\"head_dim\":16,\"hidden_size\":64,\"intermediate_size\":128,"
    "\"num_attention_heads\":4,\"num_hidden_layers\":2,\"num_key_value_heads\":2,\"vocab_size\":1000}";
static const char lora_moe[] =
    "{\"model_type\":\"qwen3_moe\",\"head_dim\":16,\"hidden_size\":64,\"moe_intermediate_size\":32,"
    "\"num_experts\":8,\"num_experts_per_tok\":2,\"num_attention_heads\":4,\"num_hidden_layers\":2,"
    "\"num_key_value_heads\":2,\"vocab_size\":1000}";
static const char lora_vl[] =
    "{\"model_type\":\"qwen3_vl\",\"text_config\":{\"head_dim\":16,\"hidden_size\":64,\"intermediate_size\":128,"
    "\"num_attention_heads\":4,\"num_hidden_layers\":2,\"num_key_value_heads\":2,\"vocab_size\":1000},"
    "\"vision_config\":{\"deepstack_visual_indexes\":[],\"depth\":1,\"hidden_size\":8,\"in_channels\":3,"
    "\"intermediate_size\":16,\"num_heads\":2,\"out_hidden_size\":64,\"patch_size\":2,"
    "\"spatial_merge_size\":2,\"temporal_patch_size\":2}}";
static const int64_t lora_seqs[] = { 10, 6 }; /* T = 16, S2 = 100 + 36 = 136 */

static tprof_flops lora_estimate(const char *json, const tprof_lora *l, const int64_t *imgs, size_t ni, int rc_want)
{
    tprof_model *m = parse(json);
    tprof_flops_input in = { .seqlens = lora_seqs, .nseqs = 2, .images = imgs, .nimages = ni, .lora = l };
    tprof_flops f;
    char err[512];
    int rc = tprof_flops_estimate(m, &in, &f, err, sizeof err);
    tprof_model_free(m);
    if (rc != rc_want) fail_msg("rc %d, want %d: %s", rc, rc_want, err);
    return f;
}

static void test_lora_text(void **state)
{
    (void)state;
    /* qwen3, H 64, I 128, L 2, nh 4, nkv 2, hd 16 -> q 64, kv 32, V 1000:
     * N = (3·64·128 + 64·(2·64 + 2·32))·2 + 1000·64 = (24576 + 12288)·2 + 64000 = 137728
     * attention = 12·S2·hd·nh·L = 12·136·16·4·2 = 208896 (unchanged by LoRA) */
    const char *qv[] = { "q_proj", "v_proj" };
    tprof_lora l = { .r = 8, .targets = qv, .ntargets = 2 };
    tprof_flops f = lora_estimate(lora_qwen3, &l, NULL, 0, 0);
    /* loraP = r·(in+out)·count: q_proj 8·(64+64)·2 = 2048, v_proj 8·(64+32)·2 = 1536 -> 3584
     * linear = (4·N + 6·loraP)·T = (550912 + 21504)·16 = 9158656 */
    assert_true(f.params_active == 137728 && f.params_lora == 3584);
    assert_true(f.linear == 9158656 && f.attention == 208896 && f.total == 9367552);
    /* no target at all: the base still runs backward for input gradients, 4·N·T = 8814592 */
    tprof_lora none = { .r = 8 };
    f = lora_estimate(lora_qwen3, &none, NULL, 0, 0);
    assert_true(f.linear == 4.0 * 137728 * 16 && f.params_lora == 0);
    /* every MLP module: gate/up 8·(64+128)·2 = 3072 each, down 8·(128+64)·2 = 3072 -> 9216;
     * linear = (550912 + 55296)·16 = 9699328 */
    const char *mlp[] = { "gate_proj", "up_proj", "down_proj" };
    tprof_lora lm = { .r = 8, .targets = mlp, .ntargets = 3 };
    f = lora_estimate(lora_qwen3, &lm, NULL, 0, 0);
    assert_true(f.params_lora == 9216 && f.linear == 9699328);
}

static void test_lora_moe(void **state)
{
    (void)state;
    /* qwen3_moe, H 64, L 2, E 8, k 2, Im 32, q 64, kv 32, V 1000:
     * N = (64·8 + 3·64·32·2 + 64·192)·2 + 64000 = (512 + 12288 + 12288)·2 + 64000 = 114176
     * o_proj adapter: 4·(64+64)·2 = 1024 */
    const char *o[] = { "o_proj" };
    const char *gu[] = { "mlp.experts.gate_up_proj" };
    tprof_lora l = { .r = 4, .targets = o, .ntargets = 1, .params = gu, .nparams = 1 };
    tprof_flops f = lora_estimate(lora_moe, &l, NULL, 0, 0);
    /* routed, independent: uses 3k = 6 per layer, 4·(64+32)·6·2 = 4608;
     * linear = (4·114176 + 6·(1024 + 4608))·16 = (456704 + 33792)·16 = 7847936 */
    assert_true(f.params_active == 114176 && f.params_lora == 1024 + 4608 && f.linear == 7847936);
    /* shared: uses 2 + k = 4, 4·96·4·2 = 3072; (456704 + 6·4096)·16 = 7700480 */
    l.moe_shared = 1;
    f = lora_estimate(lora_moe, &l, NULL, 0, 0);
    assert_true(f.params_lora == 1024 + 3072 && f.linear == 7700480);
    /* Qwen3-MoE has no dense MLP modules to target */
    const char *bad[] = { "gate_proj" };
    tprof_lora lb = { .r = 4, .targets = bad, .ntargets = 1 };
    lora_estimate(lora_moe, &lb, NULL, 0, TPROF_EUSAGE);
}

static void test_lora_vision(void **state)
{
    (void)state;
    /* Qwen3 ViT, d 8, m 16, o 64, sm 2, hv 2 (hdv 4), D 1, no deepstack (mc 1):
     * patch = 8·3·2·2·2 = 192, blocks (2·8·16 + 4·64)·1 = 512, merger (64 + 32)·32 = 3072,
     * N = 3776; one image of 4 patches: Ti 4, Si2 16 */
    const int64_t img[] = { 4 };
    const char *qv[] = { "q_proj" };
    tprof_lora l = { .r = 8, .targets = qv, .ntargets = 1 };
    tprof_flops f = lora_estimate(lora_vl, &l, img, 1, 0);
    /* no vision target, bias none: forward only, 2·N·Ti = 30208; attention 4·Si2·hdv·hv·D = 512 */
    assert_true(f.params_vision == 3776 && f.vision == 30208 + 512 && f.vision_attention == 512);
    assert_true(f.params_lora == 8 * (64 + 64) * 2); /* the text q_proj only */
    /* bias all: (2·patch + 4·(N − patch))·Ti = (384 + 14336)·4 = 58880; attention 12·16·4·2 = 1536 */
    l.bias_all = 1;
    f = lora_estimate(lora_vl, &l, img, 1, 0);
    assert_true(f.vision == 58880 + 1536);
    /* targets qkv (d -> 3d) and linear_fc1 (block 8->16, merger 32->32), r 2:
     * 2·(8+24)·1 + 2·(8+16)·1 + 2·(32+32)·1 = 64 + 48 + 128 = 240 adapter parameters;
     * linear (384 + 14336 + 6·240)·4 = 64640, attention 1536 */
    const char *vt[] = { "qkv", "linear_fc1" };
    tprof_lora lv = { .r = 2, .targets = vt, .ntargets = 2 };
    f = lora_estimate(lora_vl, &lv, img, 1, 0);
    assert_true(f.params_lora == 240 && f.vision == 64640 + 1536);
    /* the text tower has none of these modules: 4·N·T */
    assert_true(f.linear == 4.0 * 137728 * 16);
}

static void test_lora_errors(void **state)
{
    (void)state;
    const char *qv[] = { "q_proj", "q_proj" };
    tprof_lora dup = { .r = 8, .targets = qv, .ntargets = 2 };
    lora_estimate(lora_qwen3, &dup, NULL, 0, TPROF_EUSAGE); /* duplicates */
    tprof_lora zero = { .r = 0 };
    lora_estimate(lora_qwen3, &zero, NULL, 0, TPROF_EUSAGE); /* rank 0 */
    const char *gu[] = { "experts.gate_up_proj" };
    tprof_lora dense = { .r = 8, .params = gu, .nparams = 1 };
    lora_estimate(lora_qwen3, &dense, NULL, 0, TPROF_EUSAGE); /* routed targets on a dense model */
    const char *odd[] = { "experts.w1" };
    tprof_lora moe = { .r = 8, .params = odd, .nparams = 1 };
    lora_estimate(lora_moe, &moe, NULL, 0, TPROF_EUSAGE); /* not gate_up_proj / down_proj */
    tprof_lora ok = { .r = 8 };
    lora_estimate(gpt_oss_toy, &ok, NULL, 0, TPROF_EUSAGE); /* no LoRA accounting for gpt_oss */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qwen3_5),     cmocka_unit_test(test_qwen3_5_moe),
        cmocka_unit_test(test_gpt_oss),     cmocka_unit_test(test_deepseek_v4),
        cmocka_unit_test(test_qwen3_8b_and_meter), cmocka_unit_test(test_peaks),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_lora_text),   cmocka_unit_test(test_lora_moe),
        cmocka_unit_test(test_lora_vision), cmocka_unit_test(test_lora_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
