/* Internal to lib/flops: the parsed config.json and typed look-ups. */
#ifndef TPROF_FLOPS_INTERNAL_H
#define TPROF_FLOPS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "trainprof/flops.h"

typedef enum { CV_NULL, CV_BOOL, CV_NUM, CV_STR, CV_ARR, CV_OBJ } cv_type;

/* One JSON value. Objects and arrays hold their children in KIDS; an
 * object's children carry their KEY. */
typedef struct cv {
    cv_type type;
    char *key;
    char *str;      /* CV_STR; CV_NUM: the number's text */
    double num;
    int is_int;     /* CV_NUM written as an integer in int64 range */
    int64_t i;
    int b;
    uint64_t offset; /* byte of the value in the file */
    struct cv *kids;
    size_t n;
} cv;

struct tprof_model {
    cv root;
    char *name; /* the file */
    char type[64];
};

const cv *cv_get(const cv *obj, const char *key); /* NULL when absent or null */

/* Look-ups that record the first problem in the context and return 0, so a
 * formula reads straight through and the caller checks rc once. */
typedef struct {
    const tprof_model *m;
    const char *where; /* "" or "text_config." for messages */
    int rc;
    char *err;
    size_t errlen;
} fctx;

int64_t need_int(fctx *c, const cv *obj, const char *key);     /* present, integer >= 0 */
int64_t need_pos(fctx *c, const cv *obj, const char *key);     /* present, integer > 0 */
int64_t opt_int(fctx *c, const cv *obj, const char *key, int64_t def);
double need_num(fctx *c, const cv *obj, const char *key);
void fail(fctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Counts of NAME in the string array KEY; -1 when the key is absent. */
int64_t count_str(fctx *c, const cv *obj, const char *key, const char *name);
int64_t arr_len(fctx *c, const cv *obj, const char *key); /* 0 when absent */

/* Step sums. */
typedef struct {
    double T, S2;        /* Σ s, Σ s² over text sequences */
    double Ti, Si2;      /* the same over images */
    const tprof_flops_input *in;
} fsums;

/* Families: fill out->linear/attention/params_active; vision separately. */
void fam_llama(fctx *c, const cv *t, const fsums *s, tprof_flops *o);
void fam_qwen_dense(fctx *c, const cv *t, const fsums *s, tprof_flops *o);
void fam_qwen3_moe(fctx *c, const cv *t, const fsums *s, tprof_flops *o);
void fam_gpt_oss(fctx *c, const cv *t, const fsums *s, tprof_flops *o);
void fam_deepseek_v3(fctx *c, const cv *t, const fsums *s, tprof_flops *o);
void fam_deepseek_v4(fctx *c, const cv *t, const fsums *s, tprof_flops *o);
void fam_qwen3_next(fctx *c, const cv *t, const fsums *s, tprof_flops *o);
void fam_qwen3_5(fctx *c, const cv *t, const fsums *s, tprof_flops *o);
void vit_qwen3(fctx *c, const cv *v, const fsums *s, tprof_flops *o);
void vit_qwen2(fctx *c, const cv *v, const fsums *s, tprof_flops *o);

/* Full and linear attention layers of a hybrid (Qwen3-Next / Qwen3.5) config. */
void hybrid_layers(fctx *c, const cv *t, double *nf, double *nl);

/* LoRA (lora.c). Checks the config against the model type (TPROF_EUSAGE),
 * then turns the full fine-tuning text part of O into the LoRA one. */
int lora_check(fctx *c, const tprof_lora *l);
void lora_text(fctx *c, const cv *t, const tprof_lora *l, const fsums *s, tprof_flops *o);
/* The vision tower's linear FLOPs under LoRA; *grad: the tower needs
 * gradients (attention factor 12, else 4). QWEN: 2 for Qwen2-VL, 25 for
 * Qwen2.5-VL, 3 for the Qwen3 ViT; PATCH the patch conv's parameters. */
double lora_vit(fctx *c, const cv *v, const tprof_lora *l, int qwen, double N, double patch, const fsums *s,
                tprof_flops *o, int *grad);

/* Causal band: scores of a sequence of S tokens under a window of W. */
double sw_scores(double s, double w);

#endif
