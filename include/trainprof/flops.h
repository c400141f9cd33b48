/* FLOPs per training step from a Hugging Face config.json, device peaks,
 * and a step meter (tokens/s, achieved TFLOP/s, MFU).
 *
 * The formulas follow VeOmni's VeomniFlopsCounter and EnvironMeter; every
 * one is written out in docs/METRICS.md ("FLOPs and MFU"). This part of the
 * library does not use the trace reader, so a training program can link it
 * for the meter alone.
 *
 * Ownership: tprof_model_load/_parse return a model the caller frees with
 * tprof_model_free; tprof_meter_new returns a meter freed with
 * tprof_meter_free (it borrows the model, which must outlive it). */
#ifndef TRAINPROF_FLOPS_H
#define TRAINPROF_FLOPS_H

#include <stddef.h>
#include <stdint.h>

#include "trainprof/result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tprof_model tprof_model;

/* Reads a config.json. Returns 0, or TPROF_EIO (unreadable), TPROF_EFORMAT
 * (not JSON, not an object: errbuf names the byte), TPROF_EUSAGE (a
 * model_type trainprof has no formula for: errbuf lists the supported ones). */
int tprof_model_load(tprof_model **out, const char *path, char *errbuf, size_t errlen);
int tprof_model_parse(tprof_model **out, const void *data, size_t len, const char *name, char *errbuf,
                      size_t errlen);
void tprof_model_free(tprof_model *m);
const char *tprof_model_type(const tprof_model *m);
/* "llama, seed_oss, qwen2, ..." */
const char *tprof_flops_supported(void);

/* LoRA fine-tuning (VeOmni's VeOmniLoraConfig; docs/METRICS.md, "LoRA"). */
typedef struct {
    int64_t r;                  /* rank, > 0 */
    const char *const *targets; /* target_modules: module names, e.g. "q_proj" */
    size_t ntargets;
    const char *const *params;  /* target_parameters: routed-expert weights ending in
                                   gate_up_proj or down_proj (MoE types only) */
    size_t nparams;
    int moe_shared;             /* moe_mode "shared" (else "independent") */
    int bias_all;               /* bias "all": biases train, so the vision tower needs gradients */
} tprof_lora;

/* One optimizer step on one rank. */
typedef struct {
    const int64_t *seqlens; /* valid tokens of each sequence, all micro-batches */
    size_t nseqs;
    const int64_t *images;  /* pre-merge patches of each image or video frame */
    size_t nimages;
    int freeze_vit;         /* the vision tower runs forward only (ignored with LoRA) */
    const tprof_lora *lora; /* NULL: full fine-tuning */
} tprof_flops_input;

typedef struct {
    double linear;    /* 6·N·T: the text tower's matmuls (and mHC mixing for deepseek_v4) */
    double attention; /* score and value matmuls, GatedDeltaNet recurrence, indexer */
    double vision;    /* the whole vision tower, linear and attention */
    double vision_attention; /* the part of VISION that is attention */
    double total;
    double params_active;   /* N: text parameters one token passes through (LM head included,
                               embedding excluded; for MoE the routed top-k only) */
    double params_vision;   /* N of the vision tower, 0 when it has none */
    double tokens;          /* Σ seqlens */
    double image_tokens;    /* Σ images */
    double params_lora;     /* LoRA adapter parameters one token passes through: text
                               (routed experts: the top-k) plus vision; 0 without LoRA */
} tprof_flops;

/* FLOPs of one step. Returns 0, TPROF_EUSAGE (a negative length, a LoRA
 * config the model_type does not take: errbuf says why), or
 * TPROF_EFORMAT (a config key the formula needs is missing or invalid: errbuf
 * names it). */
int tprof_flops_estimate(const tprof_model *m, const tprof_flops_input *in, tprof_flops *out, char *errbuf,
                         size_t errlen);

/* Dense BF16 peak TFLOP/s of one device from its name (as torch reports it),
 * by substring in a fixed order (docs/METRICS.md). Returns 0 and sets *tflops,
 * or TPROF_EUSAGE for a device not in the table: never a silent 0. */
int tprof_device_peak(const char *device_name, double *tflops);
/* Row I of the table (0..): the substring and its peak; NULL past the end. */
const char *tprof_device_peak_row(size_t i, double *tflops);

/* Element types of the device table (the roofline of `trainprof ops`). */
typedef enum { TPROF_DT_FP32 = 0, TPROF_DT_TF32, TPROF_DT_BF16, TPROF_DT_FP16, TPROF_DT_FP8, TPROF_DT_COUNT } tprof_dtype;
const char *tprof_dtype_name(tprof_dtype d);
/* One device's datasheet figures: dense peak TFLOP/s per element type (0:
 * the device has none or the datasheet gives none) and HBM bandwidth. */
typedef struct {
    const char *label; /* the row's substrings, joined with '|' */
    double tflops[TPROF_DT_COUNT];
    double hbm_tbps;   /* TB/s (10^12 bytes per second) */
} tprof_device_spec;
/* The row of DEVICE_NAME, by substring in a fixed order (docs/METRICS.md,
 * "Device table"): 0, or TPROF_EUSAGE for a device not in it. */
int tprof_device_spec_of(const char *device_name, tprof_device_spec *out);
/* Row I of the table (0..), NULL past the end. */
const tprof_device_spec *tprof_device_spec_row(size_t i);

/* The step meter (VeOmni's EnvironMeter). Add each micro-batch's sequences
 * with tprof_meter_add; tprof_meter_step then computes the step's metrics and
 * starts the next step. */
typedef struct tprof_meter tprof_meter;

typedef struct {
    double flops_achieved_T;   /* "flops_achieved(T)": Σ over DP ranks of FLOPs / Δt / 1e12 */
    double flops_promised_T;   /* "flops_promised(T)": peak × world size */
    double mfu;                /* "mfu": achieved / promised, 0..1 */
    double avg_effective_len;  /* "training/avg_effective_len": tokens / global batch size */
    double avg_sample_seq_len; /* "training/avg_sample_seq_len": tokens / sequences */
    double tokens_per_second_M; /* "tokens_per_second(M)" */
    double consume_tokens_M;   /* "consume_tokens(M)": cumulative */
    double consume_tokens_B;   /* "consume_tokens(B)" */
    double consumed_chunk_num; /* "consumed_chunk_num": cumulative sequences */
} tprof_meter_metrics;

#define TPROF_METER_NMETRICS 9

/* PEAK_TFLOPS > 0 is one device's peak; WORLD_SIZE >= 1; GLOBAL_BATCH_SIZE
 * (sequences per step over all ranks) may be 0 when unknown. NULL on bad
 * arguments or no memory. */
tprof_meter *tprof_meter_new(const tprof_model *m, double peak_tflops, int world_size, int64_t global_batch_size);
void tprof_meter_free(tprof_meter *mt);
/* How the model trains: a frozen vision tower, LoRA (borrowed, may be NULL:
 * full fine-tuning). The default is full fine-tuning of every tower. */
void tprof_meter_set_training(tprof_meter *mt, int freeze_vit, const tprof_lora *lora);
int tprof_meter_add(tprof_meter *mt, const int64_t *seqlens, size_t n, const int64_t *images, size_t nimages);

/* This rank's share of a step: {achieved TFLOP/s, tokens, sequences}, the
 * three numbers a data-parallel program sums over its DP group. */
int tprof_meter_local(tprof_meter *mt, double delta_time, double local[3], char *errbuf, size_t errlen);
/* Ends the step with the DP sums (SUMS = local[] on one rank). */
int tprof_meter_finish(tprof_meter *mt, double delta_time, const double sums[3], tprof_meter_metrics *out);
/* Both, for a single DP rank. */
int tprof_meter_step(tprof_meter *mt, double delta_time, tprof_meter_metrics *out, char *errbuf, size_t errlen);

/* The metrics as VeOmni names them, in the order above; returns the count
 * (TPROF_METER_NMETRICS). NAMES and VALUES hold at least that many. */
size_t tprof_meter_list(const tprof_meter_metrics *m, const char **names, double *values);

/* ---- as result tables (include/trainprof/result.h) ---- */

/* `flops`: the step's inputs and parameter counts, its FLOPs by part, and the
 * same as key/value rows (CSV). CONFIG is the config's path as given. */
extern const tprof_result_desc tprof_flops_desc;
int tprof_flops_tables(const char *config, const tprof_model *m, const tprof_flops_input *in, const tprof_flops *f,
                       tprof_result **out);

/* `mfu`: the run's facts, one row per step and their mean. */
typedef struct {
    const char *config, *model_type;
    const char *device; /* NULL: --peak-tflops alone */
    double peak_tflops;
    int world_size;
    double tokens_per_rank, flops_per_step;
    size_t traces; /* traces the steps came from (0: --step-time) */
} tprof_mfu_run;
typedef struct {
    const char *trace; /* NULL: --step-time */
    int64_t step;      /* ProfilerStep#N, -1: none */
    double seconds;
    double tflops_gpu; /* achieved by one rank */
    tprof_meter_metrics m;
} tprof_mfu_step;
extern const tprof_result_desc tprof_mfu_desc;
int tprof_mfu_tables(const tprof_mfu_run *run, const tprof_mfu_step *steps, size_t n, const tprof_mfu_step *mean,
                     tprof_result **out);

#ifdef __cplusplus
}
#endif
#endif
