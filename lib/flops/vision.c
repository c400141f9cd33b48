/* Vision towers: Qwen3 ViT (qwen3_vl, qwen3_vl_moe, qwen3_5*) and the
 * Qwen2-VL / Qwen2.5-VL ViT. docs/METRICS.md. */
#include <math.h>

#include "flops_internal.h"

#define I(key) ((double)need_int(c, v, key))
#define P(key) ((double)need_pos(c, v, key))

void vit_qwen3(fctx *c, const cv *v, const fsums *s, tprof_flops *o)
{
    const char *saved = c->where;
    c->where = "vision_config.";
    double d = I("hidden_size"), m = I("intermediate_size"), out = I("out_hidden_size");
    double sm = I("spatial_merge_size"), hv = P("num_heads"), D = I("depth");
    double patch = d * I("in_channels") * I("temporal_patch_size") * I("patch_size") * I("patch_size");
    double mc = 1 + (double)arr_len(c, v, "deepstack_visual_indexes");
    c->where = saved;
    if (c->rc) return;
    double hdv = floor(d / hv), dm = d * sm * sm;
    /* patch conv, blocks (plain MLP, qkv + proj), one merger per deepstack level */
    o->params_vision = patch + (2 * d * m + 4 * d * d) * D + (out + dm) * dm * mc;
    if (s->in->lora) { /* freeze_vit is ignored under LoRA, as the reference */
        int grad;
        double lin = lora_vit(c, v, s->in->lora, 3, o->params_vision, patch, s, o, &grad);
        if (c->rc) return;
        o->vision_attention = (grad ? 12 : 4) * s->Si2 * hdv * hv * D;
        o->vision = lin + o->vision_attention;
        return;
    }
    int fz = s->in->freeze_vit;
    o->vision_attention = (fz ? 4 : 12) * s->Si2 * hdv * hv * D;
    o->vision = (fz ? 2 : 6) * o->params_vision * s->Ti + o->vision_attention;
}

void vit_qwen2(fctx *c, const cv *v, const fsums *s, tprof_flops *o)
{
    const char *saved = c->where;
    c->where = "vision_config.";
    int qwen2 = cv_get(v, "embed_dim") != NULL; /* Qwen2-VL; Qwen2.5-VL has none */
    double d, m, out, mlpfac, nfull, D = I("depth"), hv = P("num_heads"), sm = I("spatial_merge_size");
    if (qwen2) {
        d = I("embed_dim");
        m = floor(d * need_num(c, v, "mlp_ratio"));
        out = I("hidden_size");
        mlpfac = 2;
        nfull = D;
    } else {
        d = I("hidden_size");
        m = I("intermediate_size");
        out = I("out_hidden_size");
        mlpfac = 3; /* SiLU GLU */
        nfull = (double)arr_len(c, v, "fullatt_block_indexes");
    }
    double wtok = 0;
    if (nfull < D) { /* window layers: the window in merged tokens */
        double ws = I("window_size"), ps = P("patch_size");
        if (!c->rc && sm <= 0) fail(c, "vision_config.spatial_merge_size: must be positive");
        if (!c->rc) wtok = floor(floor(ws / sm) / ps) * sm;
    }
    c->where = saved;
    if (c->rc) return;
    double hdv = floor(d / hv), dm = d * sm * sm;
    o->params_vision = (mlpfac * d * m + 4 * d * d) * D + (out + dm) * dm;
    int fz = s->in->freeze_vit;
    double lin = (fz ? 2 : 6) * o->params_vision * s->Ti;
    if (s->in->lora) {
        int grad;
        lin = lora_vit(c, v, s->in->lora, qwen2 ? 2 : 25, o->params_vision, 0, s, o, &grad);
        if (c->rc) return;
        fz = !grad;
    }
    double f = fz ? 4 : 12;
    o->vision_attention = f * s->Si2 * hdv * hv * nfull + (D - nfull) * f * s->Ti * wtok * wtok * hdv * hv;
    o->vision = lin + o->vision_attention;
}
