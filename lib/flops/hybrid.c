/* Hybrid attention: Qwen3-Next and Qwen3.5 (full attention + GatedDeltaNet),
 * DeepSeek-V4 (sliding + compressed attention, mHC). docs/METRICS.md. */
#include <math.h>
#include <string.h>

#include "flops_internal.h"

#define I(key) ((double)need_int(c, t, key))
#define P(key) ((double)need_pos(c, t, key))

/* Full and linear attention layers: layer_types, else one full layer every
 * full_attention_interval (legacy configs). */
void hybrid_layers(fctx *c, const cv *t, double *nf_out, double *nl_out)
{
    double L = I("num_hidden_layers");
    double nf = (double)count_str(c, t, "layer_types", "full_attention");
    double nl = (double)count_str(c, t, "layer_types", "linear_attention");
    *nf_out = *nl_out = 0;
    if (c->rc) return;
    if (nf < 0) {
        double f = P("full_attention_interval");
        if (c->rc) return;
        nf = floor(L / f);
        nl = L - nf;
    } else if (nf + nl != L) {
        fail(c, "%slayer_types: %.0f full + %.0f linear layers, but num_hidden_layers is %.0f", c->where, nf, nl, L);
        return;
    }
    *nf_out = nf;
    *nl_out = nl;
}

/* Linear parameters of the attention layers and the count of each kind. */
static double hybrid_attn(fctx *c, const cv *t, double *nf_out, double *nl_out)
{
    double H = I("hidden_size"), nh = P("num_attention_heads");
    double nkv = I("num_key_value_heads");
    double hd = cv_get(t, "head_dim") ? I("head_dim") : (nh > 0 ? floor(H / nh) : 0);
    double nf, nl;
    hybrid_layers(c, t, &nf, &nl);
    if (c->rc) return 0;
    double q = nh * hd, kv = nkv * hd;
    double full = H * (3 * q + 2 * kv); /* q_proj emits the query and its output gate */
    double lk = I("linear_num_key_heads") * I("linear_key_head_dim");
    double nv = I("linear_num_value_heads"), lv = nv * I("linear_value_head_dim");
    double conv = I("linear_conv_kernel_dim");
    double lin = H * (2 * lk + 2 * lv + 2 * nv + lv) + conv * (2 * lk + lv);
    *nf_out = nf;
    *nl_out = nl;
    return full * nf + lin * nl;
}

/* 12·S2·hd·nh over the full layers, plus the GatedDeltaNet recurrence */
static double hybrid_scores(fctx *c, const cv *t, const fsums *s, double nf, double nl)
{
    double H = I("hidden_size"), nh = P("num_attention_heads");
    double hd = cv_get(t, "head_dim") ? I("head_dim") : (nh > 0 ? floor(H / nh) : 0);
    double gdn = 15 * I("linear_key_head_dim") * I("linear_value_head_dim") * I("linear_num_value_heads") * s->T * nl;
    return 12 * s->S2 * hd * nh * nf + gdn;
}

/* routed top-k, shared expert and its scalar sigmoid gate, per layer */
static double moe_shared(fctx *c, const cv *t)
{
    double H = I("hidden_size");
    return H * I("num_experts") + 3 * H * I("moe_intermediate_size") * I("num_experts_per_tok") +
           3 * H * I("shared_expert_intermediate_size") + H;
}

void fam_qwen3_next(fctx *c, const cv *t, const fsums *s, tprof_flops *o)
{
    double nf = 0, nl = 0;
    double attn = hybrid_attn(c, t, &nf, &nl);
    double moe = moe_shared(c, t) * I("num_hidden_layers");
    double head = I("vocab_size") * I("hidden_size");
    double sc = hybrid_scores(c, t, s, nf, nl);
    if (c->rc) return;
    o->params_active = moe + attn + head;
    o->linear = 6 * o->params_active * s->T;
    o->attention = sc;
}

void fam_qwen3_5(fctx *c, const cv *t, const fsums *s, tprof_flops *o)
{
    double nf = 0, nl = 0;
    double attn = hybrid_attn(c, t, &nf, &nl);
    double L = I("num_hidden_layers");
    double mlp = cv_get(t, "num_experts") ? moe_shared(c, t) * L : 3 * I("hidden_size") * I("intermediate_size") * L;
    double head = I("vocab_size") * I("hidden_size");
    double sc = hybrid_scores(c, t, s, nf, nl);
    if (c->rc) return;
    o->params_active = mlp + attn + head;
    o->linear = 6 * o->params_active * s->T;
    o->attention = sc;
}

/* Scores of one sequence of S tokens against keys compressed R to one; with
 * TOPK > 0 each query sees at most TOPK compressed keys. */
static double compressed(double s, double r, double topk)
{
    double u = topk > 0 ? fmin(s, topk * r - 1) : s;
    double qq = floor(u / r), rem = u - qq * r;
    return r * qq * (qq - 1) / 2 + qq * (rem + 1) + (topk > 0 ? fmax(0, s - u) * topk : 0);
}

void fam_deepseek_v4(fctx *c, const cv *t, const fsums *s, tprof_flops *o)
{
    double H = I("hidden_size"), L = I("num_hidden_layers"), V = I("vocab_size");
    double nh = P("num_attention_heads"), hd = I("head_dim");
    double ql = I("q_lora_rank"), ol = I("o_lora_rank"), og = I("o_groups"), hc = I("hc_mult");
    double E = I("n_routed_experts"), k = I("num_experts_per_tok"), Im = I("moe_intermediate_size");
    double w = P("sliding_window");
    /* n_shared_experts: 1 when absent, 0 when null (as the reference) */
    double sh = 1;
    for (size_t i = 0; t->type == CV_OBJ && i < t->n; i++)
        if (!strcmp(t->kids[i].key, "n_shared_experts")) sh = t->kids[i].type == CV_NULL ? 0 : I("n_shared_experts");
    double nsl = (double)count_str(c, t, "layer_types", "sliding_attention");
    double ncsa = (double)count_str(c, t, "layer_types", "compressed_sparse_attention");
    double nhca = (double)count_str(c, t, "layer_types", "heavily_compressed_attention");
    if (c->rc) return;
    if (nsl < 0) {
        /* no layer_types: two heavily compressed layers, then compressed
         * sparse and heavily compressed alternating (docs/METRICS.md) */
        ncsa = 0;
        for (double i = 2; i < L; i++) ncsa += fmod(i, 2) == 0;
        nhca = L - ncsa;
        nsl = 0;
    } else if (nsl + ncsa + nhca != L || (double)arr_len(c, t, "layer_types") != L) {
        fail(c, "%slayer_types: needs num_hidden_layers (%.0f) entries, each sliding_attention, "
                "compressed_sparse_attention or heavily_compressed_attention", c->where, L);
        return;
    }
    const cv *rates = cv_get(t, "compress_rates");
    double rc = 0, rh = 0, topk = 0, di = 0, ni = 0;
    if (ncsa > 0 || nhca > 0) {
        if (!rates) {
            fail(c, "%scompress_rates: missing, needed by compressed attention layers", c->where);
            return;
        }
        const char *saved = c->where;
        c->where = "compress_rates.";
        if (ncsa > 0) rc = (double)need_pos(c, rates, "compressed_sparse_attention");
        if (nhca > 0) rh = (double)need_pos(c, rates, "heavily_compressed_attention");
        c->where = saved;
    }
    if (ncsa > 0) {
        topk = P("index_topk");
        di = I("index_head_dim");
        ni = I("index_n_heads");
    }
    if (c->rc) return;
    double attn = H * ql + ql * nh * hd + H * hd + nh * hd * ol + og * ol * H;
    double moe = H * E + 3 * H * Im * (k + sh);
    double map = (2 + hc) * hc * (hc * H), mhead = hc * hc * H;
    double indexer = 4 * H * di + ql * ni * di + H * ni;
    o->params_active = (attn + moe + 2 * map) * L + 2 * H * hd * nhca + (4 * H * hd + indexer) * ncsa + mhead + V * H;
    /* mixing of the hc residual streams counts with the linear part */
    o->linear = 6 * o->params_active * s->T + 12 * hc * hc * H * L * s->T;
    double band = 0, ch = 0, cs = 0, ci = 0;
    for (size_t i = 0; i < s->in->nseqs; i++) {
        double n = (double)s->in->seqlens[i];
        band += sw_scores(n, w);
        if (nhca > 0) ch += compressed(n, rh, 0);
        if (ncsa > 0) cs += compressed(n, rc, topk), ci += compressed(n, rc, 0);
    }
    o->attention = 12 * (band * L + ch * nhca + cs * ncsa) * hd * nh + 6 * ci * di * ni * ncsa;
}
