/* FLOPs of a step (`trainprof flops`) and MFU of steps (`trainprof mfu`) as
 * result tables. Counts held as doubles (tokens, parameters, FLOPs) are
 * written as JSON integers when whole (TPROF_COLF_WHOLE); CSV keeps the
 * long key/value form of `flops` and the step rows of `mfu`. */
#include "trainprof/error.h"
#include "trainprof/flops.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define TEXT_ONLY (TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV)
#define WHOLE TPROF_COLF_WHOLE

/* ---- flops ---- */

enum { F_CONFIG, F_MODEL, F_SEQS, F_TOKENS, F_IMAGES, F_IMAGE_TOKENS, F_FREEZE, F_PARAMS, F_PARAMS_VISION,
       F_LORA_RANK, F_PARAMS_LORA, F_LORA_TARGETS, F_LORA_EXPERTS, F_NCOLS };
static const tprof_col_desc flops_top_cols[F_NCOLS] = {
    [F_CONFIG] = TPROF_COL("config", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the config's path"),
    [F_MODEL] = TPROF_COL("model_type", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "its model_type"),
    [F_SEQS] = TPROF_COL("sequences", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "sequences in the step (--seqlens)"),
    [F_TOKENS] = TPROF_COL("tokens", TPROF_COL_REAL, TPROF_COMBINE_SUM, NULL, "their tokens", .flags = WHOLE),
    [F_IMAGES] = TPROF_COL("images", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "images or frames (--images)"),
    [F_IMAGE_TOKENS] = TPROF_COL("image_tokens", TPROF_COL_REAL, TPROF_COMBINE_SUM, NULL, "their pre-merge patches",
                                 .flags = WHOLE),
    [F_FREEZE] = TPROF_COL("freeze_vit", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, NULL, "the vision tower is frozen"),
    [F_PARAMS] = TPROF_COL("params_active", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                           "text parameters one token passes through (LM head in, embedding out)", .flags = WHOLE),
    [F_PARAMS_VISION] = TPROF_COL("params_vision", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                                  "parameters of the vision tower", .flags = WHOLE),
    [F_LORA_RANK] = TPROF_COL("lora_rank", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "with --lora: its rank",
                              .flags = TPROF_COLF_OMIT_NULL),
    [F_PARAMS_LORA] = TPROF_COL("params_lora", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                                "with --lora: adapter parameters one token passes through",
                                .flags = WHOLE | TPROF_COLF_OMIT_NULL),
    [F_LORA_TARGETS] = TPROF_COL("lora_targets", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "its target modules",
                                 .flags = TEXT_ONLY),
    [F_LORA_EXPERTS] = TPROF_COL("lora_expert_targets", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                                 "its routed-expert targets", .flags = TEXT_ONLY),
};
enum { P_LINEAR, P_ATTENTION, P_VISION, P_VISION_ATTENTION, P_TOTAL, P_NCOLS };
static const tprof_col_desc flops_part_cols[P_NCOLS] = {
    [P_LINEAR] = TPROF_COL("linear", TPROF_COL_REAL, TPROF_COMBINE_SUM, NULL, "6NT: the text tower's matmuls",
                           .flags = WHOLE),
    [P_ATTENTION] = TPROF_COL("attention", TPROF_COL_REAL, TPROF_COMBINE_SUM, NULL, "score and value matmuls",
                              .flags = WHOLE),
    [P_VISION] = TPROF_COL("vision", TPROF_COL_REAL, TPROF_COMBINE_SUM, NULL, "the vision tower", .flags = WHOLE),
    [P_VISION_ATTENTION] = TPROF_COL("vision_attention", TPROF_COL_REAL, TPROF_COMBINE_SUM, NULL,
                                     "of it, attention", .flags = WHOLE),
    [P_TOTAL] = TPROF_COL("total", TPROF_COL_REAL, TPROF_COMBINE_SUM, NULL, "FLOPs of the step, forward and backward",
                          .flags = WHOLE | TPROF_COLF_METRIC),
};
enum { KV_KEY, KV_VALUE, KV_NCOLS };
static const tprof_col_desc kv_cols[KV_NCOLS] = {
    [KV_KEY] = TPROF_COL("key", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                         "config, model_type, sequences, tokens, ..., flops_total", .flags = TPROF_COLF_KEY),
    [KV_VALUE] = TPROF_COL("value", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "its value, as text"),
};
static const tprof_table_desc flops_parts = { .name = "flops", .doc = "FLOPs of one step on one rank",
                                              .cols = flops_part_cols, .ncols = P_NCOLS, .json_single = 1 };
static const tprof_table_desc flops_fields = { .name = "fields", .doc = "the same as key/value rows (CSV)",
                                               .cols = kv_cols, .ncols = KV_NCOLS, .no_json = 1 };
static const tprof_table_desc flops_top = { .name = "", .cols = flops_top_cols, .ncols = F_NCOLS };
static const tprof_table_desc *const flops_tables[] = { &flops_parts, &flops_fields };
const tprof_result_desc tprof_flops_desc = { .name = "flops", .version = 1, .top = &flops_top,
                                             .tables = flops_tables, .ntables = 2, .csv_table = 2, .whole_run = 1 };

static int kv(tprof_rows *t, const char *key, const char *fmt, double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, v);
    long i = tprof_rows_add(t);
    if (i < 0 || tprof_rows_set_s(t, (size_t)i, KV_KEY, key) || tprof_rows_set_s(t, (size_t)i, KV_VALUE, buf))
        return TPROF_ENOMEM;
    return 0;
}

int tprof_flops_tables(const char *config, const tprof_model *m, const tprof_flops_input *in, const tprof_flops *f,
                       tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_flops_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res), *parts = tprof_result_table(res, 0), *fields = tprof_result_table(res, 1);
    int rc = tprof_rows_set_s(top, 0, F_CONFIG, config);
    if (!rc) rc = tprof_rows_set_s(top, 0, F_MODEL, tprof_model_type(m));
    tprof_rows_set_i(top, 0, F_SEQS, (int64_t)in->nseqs);
    tprof_rows_set_d(top, 0, F_TOKENS, f->tokens);
    tprof_rows_set_i(top, 0, F_IMAGES, (int64_t)in->nimages);
    tprof_rows_set_d(top, 0, F_IMAGE_TOKENS, f->image_tokens);
    tprof_rows_set_i(top, 0, F_FREEZE, in->freeze_vit != 0);
    tprof_rows_set_d(top, 0, F_PARAMS, f->params_active);
    tprof_rows_set_d(top, 0, F_PARAMS_VISION, f->params_vision);
    if (in->lora) {
        tprof_rows_set_i(top, 0, F_LORA_RANK, in->lora->r);
        tprof_rows_set_d(top, 0, F_PARAMS_LORA, f->params_lora);
        tprof_rows_set_i(top, 0, F_LORA_TARGETS, (int64_t)in->lora->ntargets);
        tprof_rows_set_i(top, 0, F_LORA_EXPERTS, (int64_t)in->lora->nparams);
    }
    if (!rc && tprof_rows_add(parts) != 0) rc = TPROF_ENOMEM;
    if (!rc) {
        const double v[P_NCOLS] = { f->linear, f->attention, f->vision, f->vision_attention, f->total };
        for (size_t c = 0; c < P_NCOLS; c++) tprof_rows_set_d(parts, 0, c, v[c]);
    }
    /* the key/value rows, each number as CSV has always written it */
    long i = rc ? -1 : tprof_rows_add(fields);
    if (i < 0 || tprof_rows_set_s(fields, (size_t)i, KV_KEY, "config") ||
        tprof_rows_set_s(fields, (size_t)i, KV_VALUE, config))
        rc = TPROF_ENOMEM;
    i = rc ? -1 : tprof_rows_add(fields);
    if (i < 0 || tprof_rows_set_s(fields, (size_t)i, KV_KEY, "model_type") ||
        tprof_rows_set_s(fields, (size_t)i, KV_VALUE, tprof_model_type(m)))
        rc = TPROF_ENOMEM;
    const struct {
        const char *key, *fmt;
        double v;
        int lora_only;
    } rows[] = {
        { "sequences", "%.0f", (double)in->nseqs, 0 },  { "tokens", "%.0f", f->tokens, 0 },
        { "images", "%.0f", (double)in->nimages, 0 },   { "image_tokens", "%.0f", f->image_tokens, 0 },
        { "freeze_vit", "%.0f", in->freeze_vit != 0, 0 }, { "params_active", "%.0f", f->params_active, 0 },
        { "params_vision", "%.0f", f->params_vision, 0 },
        { "lora_rank", "%.0f", in->lora ? (double)in->lora->r : 0, 1 },
        { "params_lora", "%.0f", f->params_lora, 1 },    { "flops_linear", "%.17g", f->linear, 0 },
        { "flops_attention", "%.17g", f->attention, 0 }, { "flops_vision", "%.17g", f->vision, 0 },
        { "flops_vision_attention", "%.17g", f->vision_attention, 0 }, { "flops_total", "%.17g", f->total, 0 },
    };
    for (size_t k = 0; !rc && k < sizeof rows / sizeof *rows; k++)
        if (!rows[k].lora_only || in->lora) rc = kv(fields, rows[k].key, rows[k].fmt, rows[k].v);
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

/* ---- mfu ---- */

enum { M_CONFIG, M_MODEL, M_DEVICE, M_PEAK, M_WORLD, M_TOKENS, M_FLOPS, M_TRACES, M_NCOLS };
static const tprof_col_desc mfu_top_cols[M_NCOLS] = {
    [M_CONFIG] = TPROF_COL("config", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the config's path"),
    [M_MODEL] = TPROF_COL("model_type", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "its model_type"),
    [M_DEVICE] = TPROF_COL("device", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                           "the device whose peak is used; null with --peak-tflops alone"),
    [M_PEAK] = TPROF_COL("peak_tflops", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL, "its dense BF16 peak, TFLOP/s"),
    [M_WORLD] = TPROF_COL("world_size", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "GPUs in the job"),
    [M_TOKENS] = TPROF_COL("tokens_per_rank", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "tokens of a step on a rank",
                           .flags = WHOLE),
    [M_FLOPS] = TPROF_COL("flops_per_step", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "FLOPs of a step on a rank",
                          .flags = WHOLE),
    [M_TRACES] = TPROF_COL("traces", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "traces the steps came from",
                           .flags = TEXT_ONLY),
};
enum { S_TRACE, S_STEP, S_TIME, S_TFLOPS, S_ACHIEVED, S_PROMISED, S_MFU, S_SEQ_LEN, S_TOKENS_PER_S, S_NCOLS };
static const tprof_col_desc mfu_step_cols[S_NCOLS] = {
    [S_TRACE] = TPROF_COL("trace", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "with --trace: the trace",
                          .flags = TPROF_COLF_OMIT_NULL),
    [S_STEP] = TPROF_COL("step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "with --trace: N of ProfilerStep#N",
                         .flags = TPROF_COLF_OMIT_NULL),
    [S_TIME] = TPROF_COL("step_time_s", TPROF_COL_REAL, TPROF_COMBINE_DIST, NULL, "the step's time, seconds"),
    [S_TFLOPS] = TPROF_COL("tflops_per_gpu", TPROF_COL_RATE, TPROF_COMBINE_DIST, NULL, "achieved TFLOP/s of a rank"),
    [S_ACHIEVED] = TPROF_COL("flops_achieved(T)", TPROF_COL_RATE, TPROF_COMBINE_DIST, NULL,
                             "VeOmni's name: the sum over ranks, TFLOP/s"),
    [S_PROMISED] = TPROF_COL("flops_promised(T)", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL,
                             "VeOmni's name: peak x world size"),
    [S_MFU] = TPROF_COL("mfu", TPROF_COL_RATIO, TPROF_COMBINE_DIST, NULL, "achieved / promised", .flags = TPROF_COLF_METRIC),
    [S_SEQ_LEN] = TPROF_COL("training/avg_sample_seq_len", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                            "VeOmni's name: tokens / sequences"),
    [S_TOKENS_PER_S] = TPROF_COL("tokens_per_second(M)", TPROF_COL_RATE, TPROF_COMBINE_DIST, NULL,
                                 "VeOmni's name: millions of tokens per second, all ranks"),
};
enum { C_TRACE, C_STEP, C_TIME, C_TOKENS_PER_S, C_TFLOPS, C_ACHIEVED, C_PROMISED, C_MFU, C_NCOLS };
static const tprof_col_desc mfu_csv_cols[C_NCOLS] = {
    [C_TRACE] = TPROF_COL("trace", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "the trace (empty: --step-time, mean)"),
    [C_STEP] = TPROF_COL("step", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "N of ProfilerStep#N, or mean"),
    [C_TIME] = TPROF_COL("step_time_s", TPROF_COL_REAL, TPROF_COMBINE_DIST, NULL, "seconds"),
    [C_TOKENS_PER_S] = TPROF_COL("tokens_per_second", TPROF_COL_RATE, TPROF_COMBINE_DIST, NULL, "all ranks"),
    [C_TFLOPS] = TPROF_COL("tflops_per_gpu", TPROF_COL_RATE, TPROF_COMBINE_DIST, NULL, "achieved, one rank"),
    [C_ACHIEVED] = TPROF_COL("flops_achieved_T", TPROF_COL_RATE, TPROF_COMBINE_DIST, NULL, "all ranks, TFLOP/s"),
    [C_PROMISED] = TPROF_COL("flops_promised_T", TPROF_COL_RATE, TPROF_COMBINE_FIRST, NULL, "peak x world size"),
    [C_MFU] = TPROF_COL("mfu", TPROF_COL_RATIO, TPROF_COMBINE_DIST, NULL, "achieved / promised"),
};
static const tprof_table_desc mfu_steps = { .name = "steps", .doc = "each step (one row with --step-time)",
                                            .cols = mfu_step_cols, .ncols = S_NCOLS };
static const tprof_table_desc mfu_mean = { .name = "mean", .doc = "with --trace: the steps' mean time, measured",
                                           .cols = mfu_step_cols, .ncols = S_NCOLS, .json_single = 1,
                                           .json_omit_empty = 1 };
static const tprof_table_desc mfu_csv = { .name = "rows", .doc = "the steps, then the mean (CSV and the table)",
                                          .cols = mfu_csv_cols, .ncols = C_NCOLS, .no_json = 1 };
static const tprof_table_desc mfu_top = { .name = "", .cols = mfu_top_cols, .ncols = M_NCOLS };
static const tprof_table_desc *const mfu_tables[] = { &mfu_steps, &mfu_mean, &mfu_csv };
const tprof_result_desc tprof_mfu_desc = { .name = "mfu", .version = 1, .top = &mfu_top, .tables = mfu_tables,
                                           .ntables = 3, .csv_table = 3, .whole_run = 1 };

static int step_row(tprof_rows *t, const tprof_mfu_step *s)
{
    long i = tprof_rows_add(t);
    if (i < 0 || (s->trace && tprof_rows_set_s(t, (size_t)i, S_TRACE, s->trace))) return TPROF_ENOMEM;
    if (s->step >= 0) tprof_rows_set_i(t, (size_t)i, S_STEP, s->step);
    const double v[] = { [S_TIME] = s->seconds,
                         [S_TFLOPS] = s->tflops_gpu,
                         [S_ACHIEVED] = s->m.flops_achieved_T,
                         [S_PROMISED] = s->m.flops_promised_T,
                         [S_MFU] = s->m.mfu,
                         [S_SEQ_LEN] = s->m.avg_sample_seq_len,
                         [S_TOKENS_PER_S] = s->m.tokens_per_second_M };
    for (size_t c = S_TIME; c < S_NCOLS; c++) tprof_rows_set_d(t, (size_t)i, c, v[c]);
    return 0;
}

static int csv_row(tprof_rows *t, const tprof_mfu_step *s, int mean)
{
    char step[32] = "mean";
    if (!mean) {
        step[0] = 0;
        if (s->step >= 0) snprintf(step, sizeof step, "%" PRId64, s->step);
    }
    long i = tprof_rows_add(t);
    if (i < 0 || tprof_rows_set_s(t, (size_t)i, C_TRACE, s->trace && !mean ? s->trace : "") ||
        tprof_rows_set_s(t, (size_t)i, C_STEP, step))
        return TPROF_ENOMEM;
    const double v[] = { [C_TIME] = s->seconds,
                         [C_TOKENS_PER_S] = s->m.tokens_per_second_M * 1e6,
                         [C_TFLOPS] = s->tflops_gpu,
                         [C_ACHIEVED] = s->m.flops_achieved_T,
                         [C_PROMISED] = s->m.flops_promised_T,
                         [C_MFU] = s->m.mfu };
    for (size_t c = C_TIME; c < C_NCOLS; c++) tprof_rows_set_d(t, (size_t)i, c, v[c]);
    return 0;
}

int tprof_mfu_tables(const tprof_mfu_run *run, const tprof_mfu_step *steps, size_t n, const tprof_mfu_step *mean,
                     tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_mfu_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res);
    int rc = tprof_rows_set_s(top, 0, M_CONFIG, run->config);
    if (!rc) rc = tprof_rows_set_s(top, 0, M_MODEL, run->model_type);
    if (!rc && run->device) rc = tprof_rows_set_s(top, 0, M_DEVICE, run->device);
    tprof_rows_set_d(top, 0, M_PEAK, run->peak_tflops);
    tprof_rows_set_i(top, 0, M_WORLD, run->world_size);
    tprof_rows_set_d(top, 0, M_TOKENS, run->tokens_per_rank);
    tprof_rows_set_d(top, 0, M_FLOPS, run->flops_per_step);
    tprof_rows_set_i(top, 0, M_TRACES, (int64_t)run->traces);
    for (size_t i = 0; !rc && i < n; i++) rc = step_row(tprof_result_table(res, 0), &steps[i]);
    for (size_t i = 0; !rc && i < n; i++) rc = csv_row(tprof_result_table(res, 2), &steps[i], 0);
    if (!rc && mean) rc = step_row(tprof_result_table(res, 1), mean);
    if (!rc && mean) rc = csv_row(tprof_result_table(res, 2), mean, 1);
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
