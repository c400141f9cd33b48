/* Text towers with one attention kind: llama / seed_oss, Qwen dense,
 * Qwen3-MoE, GPT-OSS, DeepSeek-V3 (docs/METRICS.md, "FLOPs and MFU"). */
#include <math.h>

#include "flops_internal.h"

/* head_dim when the config has it, else hidden_size / heads */
static double head_dim(fctx *c, const cv *t, double H, double nh)
{
    double hd = (double)opt_int(c, t, "head_dim", -1);
    return hd >= 0 ? (double)hd : (nh > 0 ? floor(H / nh) : 0);
}

void fam_llama(fctx *c, const cv *t, const fsums *s, tprof_flops *o)
{
    double H = (double)need_int(c, t, "hidden_size"), I = (double)need_int(c, t, "intermediate_size");
    double L = (double)need_int(c, t, "num_hidden_layers"), V = (double)need_int(c, t, "vocab_size");
    double nh = (double)need_pos(c, t, "num_attention_heads"), nkv = (double)need_int(c, t, "num_key_value_heads");
    if (c->rc) return;
    double hd = floor(H / nh); /* llama's formula ignores a config head_dim */
    double q = nh * hd, kv = nkv * hd;
    o->params_active = (3 * H * I + H * (q + kv + kv + q)) * L + V * H;
    o->linear = 6.0 * (double)o->params_active * s->T;
    o->attention = 12.0 * s->S2 * (double)hd * (double)nh * (double)L;
}

void fam_qwen_dense(fctx *c, const cv *t, const fsums *s, tprof_flops *o)
{
    double H = (double)need_int(c, t, "hidden_size"), I = (double)need_int(c, t, "intermediate_size");
    double L = (double)need_int(c, t, "num_hidden_layers"), V = (double)need_int(c, t, "vocab_size");
    double nh = (double)need_pos(c, t, "num_attention_heads"), nkv = (double)need_int(c, t, "num_key_value_heads");
    double hd = (double)head_dim(c, t, H, nh);
    if (c->rc) return;
    double q = nh * hd, kv = nkv * hd;
    o->params_active = (3 * H * I + H * (2 * q + 2 * kv)) * L + V * H;
    o->linear = 6.0 * (double)o->params_active * s->T;
    o->attention = 12.0 * s->S2 * (double)hd * (double)nh * (double)L;
}

void fam_qwen3_moe(fctx *c, const cv *t, const fsums *s, tprof_flops *o)
{
    double H = (double)need_int(c, t, "hidden_size"), L = (double)need_int(c, t, "num_hidden_layers");
    double V = (double)need_int(c, t, "vocab_size"), E = (double)need_int(c, t, "num_experts");
    double k = (double)need_int(c, t, "num_experts_per_tok"), Im = (double)need_int(c, t, "moe_intermediate_size");
    double nh = (double)need_pos(c, t, "num_attention_heads"), nkv = (double)need_int(c, t, "num_key_value_heads");
    double hd = (double)head_dim(c, t, H, nh);
    if (c->rc) return;
    double q = nh * hd, kv = nkv * hd;
    /* router + the k active experts; no shared expert in this family */
    o->params_active = (H * E + 3 * H * Im * k + H * (2 * q + 2 * kv)) * L + V * H;
    o->linear = 6.0 * (double)o->params_active * s->T;
    o->attention = 12.0 * s->S2 * (double)hd * (double)nh * (double)L;
}

double sw_scores(double s, double w)
{
    return s <= w ? s * (s + 1) / 2 : w * (w + 1) / 2 + (s - w) * w;
}

void fam_gpt_oss(fctx *c, const cv *t, const fsums *s, tprof_flops *o)
{
    double H = (double)need_int(c, t, "hidden_size"), I = (double)need_int(c, t, "intermediate_size");
    double L = (double)need_int(c, t, "num_hidden_layers"), V = (double)need_int(c, t, "vocab_size");
    double E = (double)need_int(c, t, "num_local_experts"), k = (double)need_int(c, t, "num_experts_per_tok");
    double nh = (double)need_pos(c, t, "num_attention_heads"), nkv = (double)need_int(c, t, "num_key_value_heads");
    double hd = (double)head_dim(c, t, H, nh);
    double nf = (double)count_str(c, t, "layer_types", "full_attention");
    double ns = (double)count_str(c, t, "layer_types", "sliding_attention");
    if (c->rc) return;
    if (nf < 0) nf = L, ns = 0;
    else if (nf + ns != L) {
        fail(c, "%slayer_types: %lld full + %lld sliding layers, but num_hidden_layers is %lld", c->where,
             (long long)nf, (long long)ns, (long long)L);
        return;
    }
    double w = 0;
    if (ns > 0) {
        w = (double)need_pos(c, t, "sliding_window");
        if (c->rc) return;
    }
    double q = nh * hd, kv = nkv * hd;
    o->params_active = (H * E + 3 * H * I * k + H * (2 * q + 2 * kv)) * L + V * H;
    o->linear = 6.0 * (double)o->params_active * s->T;
    double band = 0;
    for (size_t i = 0; i < s->in->nseqs; i++) band += sw_scores((double)s->in->seqlens[i], w);
    o->attention = 12.0 * (s->S2 * (double)nf + band * (double)ns) * (double)hd * (double)nh;
}

void fam_deepseek_v3(fctx *c, const cv *t, const fsums *s, tprof_flops *o)
{
    double H = (double)need_int(c, t, "hidden_size"), I = (double)need_int(c, t, "intermediate_size");
    double L = (double)need_int(c, t, "num_hidden_layers"), V = (double)need_int(c, t, "vocab_size");
    double nh = (double)need_pos(c, t, "num_attention_heads");
    double E = (double)need_int(c, t, "n_routed_experts"), k = (double)need_int(c, t, "num_experts_per_tok");
    double Sh = (double)opt_int(c, t, "n_shared_experts", 0), Im = (double)need_int(c, t, "moe_intermediate_size");
    double Fd = (double)opt_int(c, t, "first_k_dense_replace", 0);
    double nope = (double)need_int(c, t, "qk_nope_head_dim"), rope = (double)need_int(c, t, "qk_rope_head_dim");
    double kvl = (double)need_int(c, t, "kv_lora_rank"), vhd = (double)need_int(c, t, "v_head_dim");
    double ql = (double)opt_int(c, t, "q_lora_rank", -1); /* null: queries without a low-rank step */
    if (c->rc) return;
    if (Fd > L) Fd = L;
    double qhd = nope + rope;
    double A = ql < 0 ? H * nh * qhd : H * ql + nh * qhd * ql;
    A += H * (kvl + rope) + nh * (qhd - rope + vhd) * kvl + nh * vhd * H;
    o->params_active = (H * E + 3 * H * Im * (k + Sh) + A) * (L - Fd) + (3 * H * I + A) * Fd + V * H;
    o->linear = 6.0 * (double)o->params_active * s->T;
    /* qhd for both QK^T and AV, as the reference does */
    o->attention = 12.0 * s->S2 * (double)L * (double)qhd * (double)nh;
}
