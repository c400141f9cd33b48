/* FLOPs of one step: the family of each model_type, the text and vision
 * configs it reads, and the split of the result. */
#include <stdio.h>
#include <string.h>

#include "flops_internal.h"
#include "trainprof/error.h"

typedef void (*fam_fn)(fctx *, const cv *, const fsums *, tprof_flops *);
typedef enum { VIT_NONE, VIT_QWEN2, VIT_QWEN3 } vit_kind;

static const struct {
    const char *type;
    fam_fn text;
    int nested;  /* reads text_config when present */
    vit_kind vit;
} families[] = {
    { "llama", fam_llama, 0, VIT_NONE },
    { "seed_oss", fam_llama, 0, VIT_NONE },
    { "qwen2", fam_qwen_dense, 0, VIT_NONE },
    { "qwen3", fam_qwen_dense, 0, VIT_NONE },
    { "qwen2_vl", fam_qwen_dense, 1, VIT_QWEN2 },
    { "qwen2_5_vl", fam_qwen_dense, 1, VIT_QWEN2 },
    { "qwen3_vl", fam_qwen_dense, 1, VIT_QWEN3 },
    { "qwen3_moe", fam_qwen3_moe, 0, VIT_NONE },
    { "qwen3_vl_moe", fam_qwen3_moe, 1, VIT_QWEN3 },
    { "qwen3_next", fam_qwen3_next, 0, VIT_NONE },
    { "qwen3_5", fam_qwen3_5, 1, VIT_QWEN3 },
    { "qwen3_5_text", fam_qwen3_5, 1, VIT_QWEN3 },
    { "qwen3_5_moe", fam_qwen3_5, 1, VIT_QWEN3 },
    { "qwen3_5_moe_text", fam_qwen3_5, 1, VIT_QWEN3 },
    { "deepseek_v3", fam_deepseek_v3, 0, VIT_NONE },
    { "deepseek_v4", fam_deepseek_v4, 0, VIT_NONE },
    { "gpt_oss", fam_gpt_oss, 0, VIT_NONE },
};

int tprof_flops_estimate(const tprof_model *m, const tprof_flops_input *in, tprof_flops *out, char *errbuf,
                         size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (errlen) errbuf[0] = 0;
    fsums s = { .in = in };
    for (size_t i = 0; i < in->nseqs; i++) {
        if (in->seqlens[i] < 0) {
            snprintf(errbuf, errlen, "sequence length %zu is negative", i + 1);
            return TPROF_EUSAGE;
        }
        double x = (double)in->seqlens[i];
        s.T += x;
        s.S2 += x * x;
    }
    for (size_t i = 0; i < in->nimages; i++) {
        if (in->images[i] < 0) {
            snprintf(errbuf, errlen, "image length %zu is negative", i + 1);
            return TPROF_EUSAGE;
        }
        double x = (double)in->images[i];
        s.Ti += x;
        s.Si2 += x * x;
    }
    out->tokens = s.T;
    out->image_tokens = s.Ti;
    fctx c = { .m = m, .where = "", .err = errbuf, .errlen = errlen };
    for (size_t i = 0; i < sizeof families / sizeof *families; i++) {
        if (strcmp(families[i].type, m->type)) continue;
        const cv *t = &m->root;
        const cv *tc = families[i].nested ? cv_get(t, "text_config") : NULL;
        if (tc && tc->type == CV_OBJ) {
            t = tc;
            c.where = "text_config.";
        }
        if (in->lora) lora_check(&c, in->lora);
        if (!c.rc) families[i].text(&c, t, &s, out);
        if (!c.rc && in->lora) lora_text(&c, t, in->lora, &s, out);
        c.where = "";
        const cv *v = cv_get(&m->root, "vision_config");
        /* images without a vision tower in the config count nothing, as the reference */
        if (!c.rc && v && v->type == CV_OBJ && families[i].vit != VIT_NONE)
            (families[i].vit == VIT_QWEN2 ? vit_qwen2 : vit_qwen3)(&c, v, &s, out);
        if (c.rc) {
            double tok = out->tokens, img = out->image_tokens;
            memset(out, 0, sizeof *out);
            out->tokens = tok;
            out->image_tokens = img;
            return c.rc;
        }
        out->total = out->linear + out->attention + out->vision;
        return 0;
    }
    snprintf(errbuf, errlen, "model_type \"%s\" has no FLOPs formula; supported: %s", m->type,
             tprof_flops_supported());
    return TPROF_EUSAGE;
}
