/* Unit tests of lib/log: one case per line format, the edge cases (NaN,
 * inf, scientific notation, units in keys, tqdm carriage returns, ANSI
 * colours), the step rules, the statistics and anomaly thresholds of
 * docs/METRICS.md worked out by hand, and a log written with the step
 * meter's metric names read back to the same values. */
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
#include "trainprof/log.h"
#include "unit.h"

static tprof_log_record rec;

static size_t parse(const char *s) { return tprof_log_parse_line(s, strlen(s), &rec); }

/* The value of KEY in the last parsed record; fails when absent. */
static double val(const char *key)
{
    for (size_t i = 0; i < rec.n; i++)
        if (!strcmp(rec.kv[i].key, key)) return rec.kv[i].value;
    fail_msg("no key %s in the record", key);
    return 0;
}

static int has(const char *key)
{
    for (size_t i = 0; i < rec.n; i++)
        if (!strcmp(rec.kv[i].key, key)) return 1;
    return 0;
}

static void test_json(void **state)
{
    (void)state;
    assert_int_equal(parse("{\"step\": 5, \"loss\": 2.5, \"lr\": 1e-4, \"note\": \"x\", \"ok\": true, \"v\": [1,2]}"), 2);
    assert_int_equal(rec.format, TPROF_LOG_JSON);
    assert_int_equal(rec.step, 5);
    assert_true(val("loss") == 2.5 && val("lr") == 1e-4);
    /* nested dicts flatten with '/', global_step is a step key */
    assert_int_equal(parse("  {\"global_step\": 7, \"train\": {\"loss\": -1.5E+2}}"), 1);
    assert_int_equal(rec.step, 7);
    assert_true(val("train/loss") == -150);
}

static void test_dict(void **state)
{
    (void)state;
    /* Python's repr of VeOmni's metrics after a prefix naming the step */
    assert_int_equal(parse("step=10: {'flops_achieved(T)': 1725.44, 'mfu': 0.2181, 'training/total_loss': nan, "
                           "'x': -inf, 'y': Infinity, 'name': None, 'tokens_per_second(M)': 3.2768e-02}"),
                     6);
    assert_int_equal(rec.format, TPROF_LOG_DICT);
    assert_int_equal(rec.step, 10);
    assert_true(val("flops_achieved(T)") == 1725.44 && val("mfu") == 0.2181);
    assert_true(isnan(val("training/total_loss")));
    assert_true(isinf(val("x")) && val("x") < 0 && isinf(val("y")) && val("y") > 0);
    assert_true(val("tokens_per_second(M)") == 0.032768);
    /* a brace that is not a dict of numbers falls through to key-value */
    assert_int_equal(parse("step 3 config {oops} loss=1"), 1);
    assert_int_equal(rec.format, TPROF_LOG_KV);
    assert_int_equal(parse("config {oops} loss=1"), 0); /* no step: not a step record */
}

static void test_tqdm(void **state)
{
    (void)state;
    /* VeOmni's bar: postfix "k: v" with 2 decimals, s/it rate */
    assert_int_equal(parse("Epoch 1/1:  10%|\xe2\x96\x88         | 10/100 [00:35<05:15,  3.50s/it, total_loss: 1.23, "
                           "foundation_loss: 1.23, grad_norm: 0.87, lr: 0.00]"),
                     5);
    assert_int_equal(rec.format, TPROF_LOG_TQDM);
    assert_int_equal(rec.step, 10);
    assert_true(val("step_time(s)") == 3.5 && val("total_loss") == 1.23 && val("lr") == 0);
    /* set_postfix's "k=v", it/s rate: step time 1/1.44 s */
    assert_int_equal(parse(" 12%|\xe2\x96\x88\xe2\x96\x8f | 120/1000 [01:23<10:12, 1.44it/s, loss=2.31, lr=3e-4]"), 3);
    assert_int_equal(rec.step, 120);
    assert_true(val("step_time(s)") == 1 / 1.44 && val("loss") == 2.31 && val("lr") == 3e-4);
    /* the first draw: a step, no metric */
    assert_int_equal(parse("  0%|          | 0/1000 [00:00<?, ?it/s]"), 0);
    assert_int_equal(rec.format, TPROF_LOG_TQDM);
    assert_int_equal(rec.step, 0);
}

static void test_llmc(void **state)
{
    (void)state;
    assert_int_equal(parse("step    5/74 | loss 10.985962 (+0.00z)| norm 15.2573 (+0.00z)| lr 6.00e-06 | "
                           "1234.56 ms | 45.1% bf16 MFU | 123456 tok/s"),
                     6);
    assert_int_equal(rec.format, TPROF_LOG_LLMC);
    assert_int_equal(rec.step, 5);
    assert_true(val("loss") == 10.985962 && val("norm") == 15.2573 && val("lr") == 6e-6);
    assert_true(val("step_time(ms)") == 1234.56 && val("tokens_per_second") == 123456);
    assert_true(fabs(val("mfu") - 0.451) < 1e-15); /* a percentage becomes VeOmni's ratio */
    assert_int_equal(parse("step 6/74 | train loss 3.5"), 1);
    assert_true(val("train_loss") == 3.5);
}

static void test_kv(void **state)
{
    (void)state;
    assert_int_equal(parse("2024-05-01 12:00:01,123 INFO step 7: loss=2.5e-1, grad_norm: 1.2 time=1.5s "
                           "max_memory_allocated(GB): 61.2 cpu_memory_usage(%)=10.7 mem=3GB."),
                     6);
    assert_int_equal(rec.format, TPROF_LOG_KV);
    assert_int_equal(rec.step, 7);
    assert_true(val("loss") == 0.25 && val("grad_norm") == 1.2);
    assert_true(val("time(s)") == 1.5);                  /* a unit after the number joins the key */
    assert_true(val("max_memory_allocated(GB)") == 61.2); /* units in keys are kept */
    assert_true(val("cpu_memory_usage(%)") == 10.7);
    assert_true(val("mem(GB)") == 3);
    /* clocks, versions, hex and words are not values */
    assert_int_equal(parse("time: 12:00:01 version=1.2.3 addr=0x1f name=abc"), 0);
    /* step spellings */
    assert_int_equal(parse("iter=12 loss: 1"), 1);
    assert_int_equal(rec.step, 12);
    assert_int_equal(parse("Step: 13 loss: 1"), 1);
    assert_int_equal(rec.step, 13);
    assert_int_equal(parse("steps_per_epoch: 100 loss: 1"), 0); /* no step key: a config line */
    assert_int_equal(rec.step, -1);
    /* key-value pairs outside a step record are not metrics: config dumps,
     * argparse's Namespace, banners */
    assert_int_equal(parse("lr: 0.0001"), 0);
    assert_int_equal(parse("model.hidden_size = 4096"), 0);
    assert_int_equal(parse("Namespace(lr=0.0001, batch_size=32, model='gpt2', warmup_steps=100)"), 0);
    assert_int_equal(parse("==== seed=42 ===="), 0);
    assert_int_equal(rec.format, TPROF_LOG_NONE);
    assert_int_equal(parse("=== step 100 ==="), 0);
    assert_int_equal(rec.step, 100);
    /* Megatron: " | " segments, keys with spaces */
    assert_int_equal(parse(" iteration      100/    1000 | elapsed time per iteration (ms): 1234.5 | "
                           "learning rate: 1.000E-04 | lm loss: 2.345E+00 | loss scale: 1.0 |"),
                     4);
    assert_int_equal(rec.step, 100);
    assert_true(val("elapsed_time_per_iteration(ms)") == 1234.5 && val("learning_rate") == 1e-4);
    assert_true(val("lm_loss") == 2.345 && val("loss_scale") == 1);
}

static void test_ansi(void **state)
{
    (void)state;
    assert_int_equal(parse("\x1b[32mINFO\x1b[0m step 7 \x1b[1mloss\x1b[0m=inf \x1b[31mmfu\x1b[0m: 0.4\x1b[K"), 2);
    assert_int_equal(rec.step, 7);
    assert_true(isinf(val("loss")) && val("mfu") == 0.4);
    assert_false(has("\x1b[1mloss"));
}

/* TEXT fed byte by byte (lines cut across feeds); finish must return RC. */
static tprof_log *feed_rc(const char *text, int rc)
{
    tprof_log *lg = tprof_log_new("t.log");
    assert_non_null(lg);
    for (size_t i = 0; text[i]; i++) assert_int_equal(tprof_log_feed(lg, text + i, 1), 0);
    assert_int_equal(tprof_log_finish(lg), rc);
    return lg;
}

static tprof_log *feed(const char *text) { return feed_rc(text, 0); }

static long metric(const tprof_log *lg, const char *name)
{
    for (size_t i = 0; i < tprof_log_nmetrics(lg); i++)
        if (!strcmp(tprof_log_metric(lg, i), name)) return (long)i;
    fail_msg("no metric %s", name);
    return -1;
}

static void test_steps(void **state)
{
    (void)state;
    /* tqdm redraws with \r: two steps from one line; a step-only line sets
     * the step of the stepless dict after it; a stepless line before any
     * step is step 1, and the next one that repeats a metric is step 2 */
    tprof_log *lg = feed("lr: 0.0001\n{\"loss\": 9}\n{\"loss\": 8}\n"
                         " 1%|x | 10/1000 [00:01<10:00, 2.00it/s, loss=2.5]\r 1%|x | 11/1000 [00:02<10:00, "
                         "2.00it/s, loss=2.4]\n"
                         "step=20:\n{\"mfu\": 0.25, \"loss\": 2.0}\n"
                         "step 20 loss=1.5\n" /* the same step again: the last value wins */
                         "garbage line\n\n"
                         "{'mfu': 0.3}\n"); /* a last line without a newline: test_cut_last_line */
    const int64_t *st;
    const double *v;
    size_t n = tprof_log_points(lg, (size_t)metric(lg, "loss"), &st, &v);
    assert_int_equal(n, 5);
    const int64_t want_st[] = { 1, 2, 10, 11, 20 };
    const double want_v[] = { 9, 8, 2.5, 2.4, 1.5 };
    for (size_t i = 0; i < n; i++) assert_true(st[i] == want_st[i] && v[i] == want_v[i]);
    n = tprof_log_points(lg, (size_t)metric(lg, "mfu"), &st, &v);
    assert_int_equal(n, 2);
    assert_true(st[0] == 20 && v[0] == 0.25 && st[1] == 21 && v[1] == 0.3); /* 20 already had an mfu */
    const tprof_log_counts *c = tprof_log_get_counts(lg);
    assert_int_equal(c->lines, 10);
    assert_int_equal(c->skipped, 3); /* "lr: 0.0001" (no step record), "step=20:" and "garbage line" */
    assert_int_equal(c->parsed[TPROF_LOG_TQDM], 2);
    assert_int_equal(c->parsed[TPROF_LOG_JSON], 4);
    assert_int_equal(c->parsed[TPROF_LOG_KV], 1);
    tprof_log_free(lg);
}

static void test_stats(void **state)
{
    (void)state;
    /* x = 1..10 at steps 1..10 plus a NaN: mean 5.5, p50 (5+6)/2, warm-up
     * max(1, 10/10) = 1 point, steady mean of 2..10 = 54/9 = 6 */
    ubuf b = { 0 };
    for (int i = 1; i <= 10; i++) ubuf_printf(&b, "step %d x=%d\n", i, i);
    ubuf_str(&b, "step 11 x=nan\n");
    tprof_log *lg = feed((const char *)b.p);
    tprof_log_stats s;
    tprof_log_stats_of(lg, (size_t)metric(lg, "x"), &s);
    assert_int_equal(s.count, 10);
    assert_int_equal(s.nonfinite, 1);
    assert_int_equal(s.warmup, 1);
    assert_true(s.mean == 5.5 && s.p50 == 5.5 && s.min == 1 && s.max == 10 && s.steady_mean == 6);
    tprof_log_free(lg);
    /* 25 points: warm-up 25/10 = 2, steady mean of 3..25 = 322/23 = 14 */
    b.len = 0;
    for (int i = 1; i <= 25; i++) ubuf_printf(&b, "{\"step\": %d, \"y\": %d}\n", i, i);
    lg = feed((const char *)b.p);
    tprof_log_stats_of(lg, 0, &s);
    assert_int_equal(s.warmup, 2);
    assert_true(s.steady_mean == 14 && s.p50 == 13);
    tprof_log_free(lg);
    /* one point: no steady mean */
    lg = feed("step 1 z=4\n");
    tprof_log_stats_of(lg, 0, &s);
    assert_true(s.count == 1 && s.mean == 4 && isnan(s.steady_mean));
    tprof_log_free(lg);
    free(b.p);
}

static void test_anomalies(void **state)
{
    (void)state;
    /* Each rule against the median of the previous (up to 20, at least 5)
     * finite points. Steps 1-10: loss 2, mfu 0.4, step time 1 s, 1000 tok/s.
     * Step 11: loss 3.01 (> 1.5 x 2), mfu 0.279 (< 0.7 x 0.4 = 0.28),
     * step time 2.01 (> 2 x 1), tokens 699 (< 700): one of each.
     * Step 12: loss 3.0, mfu 0.28, step time 2.0, 700 tok/s: on the
     * thresholds, none (the median is still 2 / 0.4 / 1 / 1000).
     * Step 3 holds a NaN loss: nonfinite, and the rules skip it. */
    ubuf b = { 0 };
    for (int i = 1; i <= 10; i++)
        ubuf_printf(&b, "step %d | loss: %s | mfu: 0.4 | step_time(s): 1 | tokens_per_second: 1000\n", i,
                    i == 3 ? "nan" : "2");
    ubuf_str(&b, "step 11 | loss: 3.01 | mfu: 0.279 | step_time(s): 2.01 | tokens_per_second: 699\n");
    ubuf_str(&b, "step 12 | loss: 3.0 | mfu: 0.28 | step_time(s): 2.0 | tokens_per_second: 700\n");
    tprof_log *lg = feed((const char *)b.p);
    const tprof_log_anomaly *a;
    size_t n = tprof_log_anomalies(lg, &a);
    assert_int_equal(n, 5);
    int seen[5] = { 0 };
    for (size_t i = 0; i < n; i++) {
        seen[a[i].kind]++;
        if (a[i].kind == TPROF_LOG_NONFINITE) assert_true(a[i].step == 3 && isnan(a[i].value));
        else assert_int_equal(a[i].step, 11);
        if (a[i].kind == TPROF_LOG_LOSS_SPIKE) assert_true(a[i].reference == 2 && a[i].value == 3.01);
        if (a[i].kind == TPROF_LOG_MFU_DROP) assert_true(a[i].reference == 0.4);
    }
    for (int k = 0; k < 5; k++) assert_int_equal(seen[k], 1);
    assert_int_equal(tprof_log_find_role(lg, TPROF_LOG_ROLE_LOSS), metric(lg, "loss"));
    tprof_log_free(lg);
    free(b.p);
    /* fewer than 5 previous points: not judged */
    lg = feed("loss=1\nloss=1\nloss=1\nloss=1\nloss=9\n");
    assert_int_equal(tprof_log_anomalies(lg, &a), 0);
    tprof_log_free(lg);
}

static void test_roles(void **state)
{
    (void)state;
    assert_int_equal(tprof_log_role_of("mfu"), TPROF_LOG_ROLE_MFU);
    assert_int_equal(tprof_log_role_of("tokens_per_second(M)"), TPROF_LOG_ROLE_THROUGHPUT);
    assert_int_equal(tprof_log_role_of("tok/s"), TPROF_LOG_ROLE_THROUGHPUT);
    assert_int_equal(tprof_log_role_of("training/total_loss"), TPROF_LOG_ROLE_LOSS);
    assert_int_equal(tprof_log_role_of("loss_scale"), TPROF_LOG_ROLE_NONE);
    assert_int_equal(tprof_log_role_of("step_time(ms)"), TPROF_LOG_ROLE_STEP_TIME);
    assert_int_equal(tprof_log_role_of("elapsed_time_per_iteration(ms)"), TPROF_LOG_ROLE_STEP_TIME);
    assert_int_equal(tprof_log_role_of("consume_tokens(M)"), TPROF_LOG_ROLE_NONE);
}

/* The meter's metrics written as the reference shows its wandb payload
 * ("step=N:" then a JSON dict, Python's shortest repr: %.17g reads back
 * exactly) and VeOmni's tqdm line; read back, every value is the same. */
static void test_meter_roundtrip(void **state)
{
    (void)state;
    static const char cfg[] =
        "{\"model_type\":\"qwen3\",\"head_dim\":128,\"hidden_size\":4096,\"intermediate_size\":12288,"
        "\"num_attention_heads\":32,\"num_hidden_layers\":36,\"num_key_value_heads\":8,\"vocab_size\":151936}";
    tprof_model *m = NULL;
    char err[256];
    assert_int_equal(tprof_model_parse(&m, cfg, strlen(cfg), "c", err, sizeof err), 0);
    tprof_meter *mt = tprof_meter_new(m, 989, 8, 16);
    assert_non_null(mt);
    const int64_t seqs[] = { 4096, 4096 };
    tprof_meter_metrics want[3];
    ubuf b = { 0 };
    for (int s = 0; s < 3; s++) {
        assert_int_equal(tprof_meter_add(mt, seqs, 2, NULL, 0), 0);
        assert_int_equal(tprof_meter_step(mt, 2.0 + 0.25 * s, &want[s], err, sizeof err), 0);
        const char *names[TPROF_METER_NMETRICS];
        double v[TPROF_METER_NMETRICS];
        size_t k = tprof_meter_list(&want[s], names, v);
        ubuf_printf(&b, "Epoch 1/1:  %d%%|#   | %d/3 [00:0%d<00:01,  2.00s/it, total_loss: 1.23, grad_norm: 0.87, "
                        "lr: 0.00]\n", 33 * (s + 1), s + 1, s);
        ubuf_printf(&b, "step=%d:\n{", s + 1);
        for (size_t i = 0; i < k; i++) ubuf_printf(&b, "%s\"%s\": %.17g", i ? ", " : "", names[i], v[i]);
        ubuf_str(&b, ", \"training/total_loss\": 1.234, \"training/lr\": 1e-05}\n");
    }
    tprof_log *lg = feed((const char *)b.p);
    for (int s = 0; s < 3; s++) {
        const char *names[TPROF_METER_NMETRICS];
        double v[TPROF_METER_NMETRICS];
        size_t k = tprof_meter_list(&want[s], names, v);
        for (size_t i = 0; i < k; i++) {
            const int64_t *st;
            const double *got;
            size_t n = tprof_log_points(lg, (size_t)metric(lg, names[i]), &st, &got);
            assert_int_equal(n, 3);
            assert_int_equal(st[s], s + 1);
            if (got[s] != v[i]) fail_msg("%s at step %d: %.17g, want %.17g", names[i], s + 1, got[s], v[i]);
        }
    }
    /* the reference's worked example, one DP rank: 215.68 TFLOP/s at 2 s,
     * promised 989 x 8 = 7912 */
    assert_true(fabs(want[0].flops_achieved_T - 215.68) < 0.005 && want[0].flops_promised_T == 7912);
    assert_true(want[0].mfu == want[0].flops_achieved_T / 7912);
    tprof_log_free(lg);
    tprof_meter_free(mt);
    tprof_model_free(m);
    free(b.p);
}

static void test_empty_and_long(void **state)
{
    (void)state;
    tprof_log *lg = feed("no numbers here\nnor here\n");
    assert_int_equal(tprof_log_nmetrics(lg), 0);
    tprof_log_free(lg);
    /* a 3 MiB line is cut at 1 MiB and still read */
    size_t n = 3u << 20;
    char *big = malloc(n + 16);
    assert_non_null(big);
    memcpy(big, "step 1 loss=5 ", 14);
    memset(big + 14, 'a', n - 14);
    memcpy(big + n, "\nstep 2 loss=6\n", 16);
    lg = feed(big);
    const int64_t *st;
    const double *v;
    assert_int_equal(tprof_log_points(lg, 0, &st, &v), 2);
    assert_true(v[0] == 5 && v[1] == 6);
    tprof_log_free(lg);
    free(big);
}

/* "{"a": " then DEPTH containers opened with OPEN (and closed), then a
 * metric: the dict parser recurses once per level. */
static char *nested(int depth, char open, char close)
{
    ubuf b = { 0 };
    ubuf_str(&b, "{\"a\": ");
    for (int i = 0; i < depth; i++) ubuf_add(&b, &open, 1);
    for (int i = 0; i < depth; i++) ubuf_add(&b, &close, 1);
    ubuf_str(&b, ", \"loss\": 1.5}");
    return (char *)b.p;
}

static void test_deep(void **state)
{
    (void)state;
    /* the dict is one level: 63 lists or tuples inside it are read, 64 are one
     * too many (TPROF_LOG_MAX_DEPTH = 64 containers in all) */
    const char pairs[][2] = { { '[', ']' }, { '(', ')' } };
    for (int k = 0; k < 2; k++) {
        char *s = nested(TPROF_LOG_MAX_DEPTH - 1, pairs[k][0], pairs[k][1]);
        assert_int_equal(parse(s), 1);
        assert_true(val("loss") == 1.5);
        free(s);
        s = nested(TPROF_LOG_MAX_DEPTH, pairs[k][0], pairs[k][1]);
        assert_int_equal(parse(s), 0);
        free(s);
    }
    /* nested dicts count the same way: 64 flatten, 65 do not */
    ubuf b = { 0 };
    for (int i = 0; i < TPROF_LOG_MAX_DEPTH; i++) ubuf_str(&b, i + 1 < TPROF_LOG_MAX_DEPTH ? "{\"k\": " : "{\"x\": 2");
    for (int i = 0; i < TPROF_LOG_MAX_DEPTH; i++) ubuf_str(&b, "}");
    assert_int_equal(parse((const char *)b.p), 1);
    b.len = 0;
    for (int i = 0; i <= TPROF_LOG_MAX_DEPTH; i++) ubuf_str(&b, i < TPROF_LOG_MAX_DEPTH ? "{\"k\": " : "{\"x\": 2");
    for (int i = 0; i <= TPROF_LOG_MAX_DEPTH; i++) ubuf_str(&b, "}");
    assert_int_equal(parse((const char *)b.p), 0);
    /* a 600 KB line of '[' or '(' (under the 1 MiB line limit) overflowed the
     * stack; now it is a line without a metric, with a warning, and the lines
     * around it are read */
    for (int k = 0; k < 2; k++) {
        b.len = 0;
        ubuf_str(&b, "step 1 loss=2\n{\"a\": ");
        for (int i = 0; i < 600000; i++) ubuf_add(&b, pairs[k], 1);
        ubuf_str(&b, "\nstep 2 loss=1\n");
        tprof_log *lg = feed((const char *)b.p);
        const int64_t *st;
        const double *v;
        assert_int_equal(tprof_log_points(lg, (size_t)metric(lg, "loss"), &st, &v), 2);
        assert_int_equal(tprof_log_get_counts(lg)->skipped, 1);
        const char *const *w;
        assert_int_equal(tprof_log_warnings(lg, &w), 1);
        assert_non_null(strstr(w[0], "t.log: line 2: "));
        assert_non_null(strstr(w[0], "deeper than 64 levels"));
        tprof_log_free(lg);
    }
    /* many such lines: the first 8 named, then one count */
    b.len = 0;
    for (int i = 0; i < 11; i++) {
        ubuf_str(&b, "{'a': ");
        for (int j = 0; j < 100; j++) ubuf_str(&b, "(");
        ubuf_str(&b, "\nloss=1\n");
    }
    tprof_log *lg = feed((const char *)b.p);
    const char *const *w;
    assert_int_equal(tprof_log_warnings(lg, &w), 9);
    assert_non_null(strstr(w[7], "t.log: line 15: "));
    assert_non_null(strstr(w[8], "3 more lines"));
    tprof_log_free(lg);
    free(b.p);
}

/* The last line without a newline: kept when complete, dropped (finish
 * returns TPROF_ETRUNC and names it) when it stops inside a value. */
static void test_cut_last_line(void **state)
{
    (void)state;
    static const struct {
        const char *last;
        int dropped;
    } cases[] = {
        { "step 5 loss: 2.15e", 1 },        /* was loss(e) = 2.15 */
        { "step 5 loss=2.15", 1 },          /* may be 2.15e-05 cut */
        { "step 5 loss=2.15e-05", 1 },      /* a number at the end: ambiguous */
        { "step 5 loss=2.5 | step_t", 1 },  /* a key cut short */
        { "{\"step\": 5, \"loss\": 2.1", 1 }, /* an open dict */
        { "{\"step\": 5, \"loss\": 2.15e", 1 },
        { "{\"step\": 5, \"lo", 1 },         /* nothing read yet, still a cut record */
        { "step=5: {'loss': 2.5, 'x': tr", 1 },
        { " 1%|x | 5/1000 [00:01<10:00, 2.00it/s, loss=2.5", 1 },
        { "{\"step\": 5, \"loss\": 2.5}", 0 }, /* complete */
        { "step=5: {'loss': 2.5} saving", 0 }, /* the dict closed; the text after it is not read */
        { "step 5 loss=2.5 ", 0 },          /* the value ended */
        { "step 5 | loss: 2.5 |", 0 },
        { " 1%|x | 5/1000 [00:01<10:00, 2.00it/s, loss=2.5]", 0 },
        { "\x1b[32mstep 5 loss=2.5\x1b[0m", 0 }, /* a colour code after the value */
        { "Training finished", 0 },         /* no metric, no step: nothing to drop */
        { "loss=2.15", 0 },                 /* no step: no record, so nothing to drop */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        ubuf b = { 0 };
        ubuf_str(&b, "step 1 loss=3\n\r\n");
        ubuf_str(&b, cases[c].last);
        tprof_log *lg = feed_rc((const char *)b.p, cases[c].dropped ? TPROF_ETRUNC : 0);
        const int64_t *st;
        const double *v;
        size_t n = tprof_log_points(lg, (size_t)metric(lg, "loss"), &st, &v);
        const char *tr = tprof_log_truncation(lg);
        if (cases[c].dropped) {
            if (n != 1 || st[0] != 1 || v[0] != 3 || tprof_log_nmetrics(lg) != 1)
                fail_msg("case %zu '%s': %zu points, %zu metrics", c, cases[c].last, n, tprof_log_nmetrics(lg));
            assert_non_null(strstr(tr, "t.log: line 3: the last line was cut"));
            assert_non_null(strstr(tr, "dropped"));
            assert_int_equal(tprof_log_get_counts(lg)->lines, 1);
        } else {
            assert_string_equal(tr, "");
            if (strcmp(cases[c].last, "Training finished") && strcmp(cases[c].last, "loss=2.15")) {
                if (n != 2 || st[1] != 5 || v[1] != 2.5) fail_msg("case %zu '%s': %zu points", c, cases[c].last, n);
            } else
                assert_int_equal(tprof_log_get_counts(lg)->skipped, 1);
        }
        tprof_log_free(lg);
        free(b.p);
    }
    /* tqdm redraws: the segments before the last \r are complete */
    tprof_log *lg = feed_rc(" 1%|x | 10/100 [00:01<10:00, 2.00it/s, loss=2.5]\r 1%|x | 11/100 [00:02<10:00, 2.00it/s, "
                            "loss=2.4]\r 1%|x | 12/100 [00:02<10:00, 2.0",
                            TPROF_ETRUNC);
    const int64_t *st;
    const double *v;
    assert_int_equal(tprof_log_points(lg, (size_t)metric(lg, "loss"), &st, &v), 2);
    assert_true(st[1] == 11 && v[1] == 2.4);
    assert_non_null(strstr(tprof_log_truncation(lg), "line 1:"));
    tprof_log_free(lg);
    /* a last line over the 1 MiB line limit is cut there by the reader, as any
     * long line: it is judged by where the input ends (a single-line trace) */
    size_t big = 3u << 20;
    char *t = malloc(big + 16);
    assert_non_null(t);
    memcpy(t, "{\"loss\": 5, \"a\": \"", 18);
    memset(t + 18, 'a', big - 18);
    strcpy(t + big, "\"}");
    lg = feed(t);
    assert_int_equal(tprof_log_nmetrics(lg), 0); /* the first MiB is not a closed dict, as with a newline */
    assert_int_equal(tprof_log_get_counts(lg)->skipped, 1);
    tprof_log_free(lg);
    memcpy(t, "step 1 loss=5 ", 14);
    strcpy(t + big, " }");
    lg = feed(t);
    assert_int_equal(tprof_log_nmetrics(lg), 1);
    tprof_log_free(lg);
    strcpy(t + big, " lr=2.1");
    lg = feed_rc(t, TPROF_ETRUNC);
    assert_int_equal(tprof_log_nmetrics(lg), 0);
    assert_non_null(strstr(tprof_log_truncation(lg), "t.log: line 1: the last line was cut"));
    tprof_log_free(lg);
    free(t);
    /* a last line that ends with its newline, or a final \r, is complete */
    lg = feed("step 1 loss: 2.15e\nstep 2 loss=2.15\r");
    assert_int_equal(tprof_log_nmetrics(lg), 2); /* loss(e): the line as written */
    tprof_log_free(lg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),      cmocka_unit_test(test_dict),      cmocka_unit_test(test_tqdm),
        cmocka_unit_test(test_llmc),      cmocka_unit_test(test_kv),        cmocka_unit_test(test_ansi),
        cmocka_unit_test(test_steps),     cmocka_unit_test(test_stats),     cmocka_unit_test(test_anomalies),
        cmocka_unit_test(test_roles),     cmocka_unit_test(test_meter_roundtrip),
        cmocka_unit_test(test_empty_and_long), cmocka_unit_test(test_deep),     cmocka_unit_test(test_cut_last_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
