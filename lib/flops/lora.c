/* LoRA accounting (VeOmni PRs #983, #1018; docs/METRICS.md, "LoRA"): the
 * frozen base runs forward and backward for input gradients (4·N·T instead
 * of 6·N·T), each adapter A·B of rank r on a module in→out adds r·(in+out)
 * parameters trained at 6 FLOPs per token, routed-expert adapters add
 * r·(H+Im) per use. The attention score terms stay at 12. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "flops_internal.h"
#include "trainprof/error.h"

typedef struct {
    const char *name;
    double in, out, count;
} lshape;

#define MAXSH 16

static const char *const lora_types[] = { "qwen2",   "qwen2_vl", "qwen2_5_vl",  "qwen3",       "qwen3_moe",
                                          "qwen3_vl", "qwen3_vl_moe", "qwen3_next", "qwen3_5", "qwen3_5_text",
                                          "qwen3_5_moe", "qwen3_5_moe_text" };
static const char *const moe_types[] = { "qwen3_moe", "qwen3_vl_moe", "qwen3_next", "qwen3_5_moe", "qwen3_5_moe_text" };

static int in_list(const char *t, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t, list[i])) return 1;
    return 0;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

#define I(key) ((double)need_int(c, t, key))
#define P(key) ((double)need_pos(c, t, key))

/* The adapter-capable modules of the text tower: (in, out, layers). */
static size_t text_shapes(fctx *c, const cv *t, lshape *sh)
{
    const char *ty = c->m->type;
    double H = I("hidden_size"), L = I("num_hidden_layers"), nh = P("num_attention_heads");
    double nkv = I("num_key_value_heads");
    double hd = cv_get(t, "head_dim") ? I("head_dim") : (nh > 0 ? floor(H / nh) : 0);
    double q = nh * hd, kv = nkv * hd;
    size_t n = 0;
    if (!strcmp(ty, "qwen3_next") || !strncmp(ty, "qwen3_5", 7)) {
        double nf, nl;
        hybrid_layers(c, t, &nf, &nl);
        double lk = I("linear_num_key_heads") * I("linear_key_head_dim");
        double nv = I("linear_num_value_heads"), lv = nv * I("linear_value_head_dim");
        int moe = !strcmp(ty, "qwen3_next") || cv_get(t, "num_experts");
        double mlp = moe ? I("shared_expert_intermediate_size") : I("intermediate_size");
        sh[n++] = (lshape){ "q_proj", H, 2 * q, nf }; /* the query and its output gate */
        sh[n++] = (lshape){ "k_proj", H, kv, nf };
        sh[n++] = (lshape){ "v_proj", H, kv, nf };
        sh[n++] = (lshape){ "o_proj", q, H, nf };
        if (!strcmp(ty, "qwen3_next")) {
            sh[n++] = (lshape){ "in_proj_qkvz", H, 2 * lk + 2 * lv, nl };
            sh[n++] = (lshape){ "in_proj_ba", H, 2 * nv, nl };
        } else {
            sh[n++] = (lshape){ "in_proj_qkv", H, 2 * lk + lv, nl };
            sh[n++] = (lshape){ "in_proj_z", H, lv, nl };
            sh[n++] = (lshape){ "in_proj_b", H, nv, nl };
            sh[n++] = (lshape){ "in_proj_a", H, nv, nl };
        }
        sh[n++] = (lshape){ "out_proj", lv, H, nl };
        sh[n++] = (lshape){ "gate_proj", H, mlp, L }; /* the shared expert for MoE */
        sh[n++] = (lshape){ "up_proj", H, mlp, L };
        sh[n++] = (lshape){ "down_proj", mlp, H, L };
        return n;
    }
    sh[n++] = (lshape){ "q_proj", H, q, L };
    sh[n++] = (lshape){ "k_proj", H, kv, L };
    sh[n++] = (lshape){ "v_proj", H, kv, L };
    sh[n++] = (lshape){ "o_proj", q, H, L };
    if (!strstr(ty, "moe")) { /* Qwen3-MoE: attention only */
        double Im = I("intermediate_size");
        sh[n++] = (lshape){ "gate_proj", H, Im, L };
        sh[n++] = (lshape){ "up_proj", H, Im, L };
        sh[n++] = (lshape){ "down_proj", Im, H, L };
    }
    return n;
}

#undef I
#undef P
#define I(key) ((double)need_int(c, v, key))

/* The vision tower's modules; QWEN 2, 25 or 3. */
static size_t vit_shapes(fctx *c, const cv *v, int qwen, lshape *sh)
{
    double d, m, o, D = I("depth"), sm = I("spatial_merge_size");
    if (qwen == 2) d = I("embed_dim"), m = floor(d * need_num(c, v, "mlp_ratio")), o = I("hidden_size");
    else d = I("hidden_size"), m = I("intermediate_size"), o = I("out_hidden_size");
    double dm = d * sm * sm;
    size_t n = 0;
    sh[n++] = (lshape){ "qkv", d, 3 * d, D };
    sh[n++] = (lshape){ "proj", d, d, D };
    if (qwen == 3) {
        double mc = 1 + (double)arr_len(c, v, "deepstack_visual_indexes");
        sh[n++] = (lshape){ "linear_fc1", d, m, D }; /* blocks */
        sh[n++] = (lshape){ "linear_fc2", m, d, D };
        sh[n++] = (lshape){ "linear_fc1", dm, dm, mc }; /* mergers */
        sh[n++] = (lshape){ "linear_fc2", dm, o, mc };
        return n;
    }
    if (qwen == 2) {
        sh[n++] = (lshape){ "fc1", d, m, D };
        sh[n++] = (lshape){ "fc2", m, d, D };
    } else {
        sh[n++] = (lshape){ "gate_proj", d, m, D };
        sh[n++] = (lshape){ "up_proj", d, m, D };
        sh[n++] = (lshape){ "down_proj", m, d, D };
    }
    sh[n++] = (lshape){ "mlp.0", dm, dm, 1 }; /* merger */
    sh[n++] = (lshape){ "mlp.2", dm, o, 1 };
    return n;
}

/* Σ r·(in+out)·count over the targets among SH; *hit: any target matched. */
static double adapters(const tprof_lora *l, const lshape *sh, size_t n, int *hit)
{
    double p = 0;
    *hit = 0;
    for (size_t i = 0; i < l->ntargets; i++)
        for (size_t j = 0; j < n; j++)
            if (!strcmp(l->targets[i], sh[j].name)) {
                p += (double)l->r * (sh[j].in + sh[j].out) * sh[j].count;
                *hit = 1;
            }
    return p;
}

static int has_name(const lshape *sh, size_t n, const char *name)
{
    for (size_t j = 0; j < n; j++)
        if (!strcmp(sh[j].name, name)) return 1;
    return 0;
}

int lora_check(fctx *c, const tprof_lora *l)
{
    const char *ty = c->m->type;
    if (!in_list(ty, lora_types, sizeof lora_types / sizeof *lora_types)) {
        snprintf(c->err, c->errlen, "LoRA: model_type \"%s\" has no LoRA accounting; supported: qwen2, qwen2_vl, "
                 "qwen2_5_vl, qwen3, qwen3_moe, qwen3_vl, qwen3_vl_moe, qwen3_next, qwen3_5, qwen3_5_text, "
                 "qwen3_5_moe, qwen3_5_moe_text", ty);
        return c->rc = TPROF_EUSAGE;
    }
    if (l->r <= 0) {
        snprintf(c->err, c->errlen, "LoRA: rank r must be positive");
        return c->rc = TPROF_EUSAGE;
    }
    for (size_t i = 0; i < l->ntargets; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(l->targets[i], l->targets[j])) {
                snprintf(c->err, c->errlen, "LoRA: target module \"%s\" given twice", l->targets[i]);
                return c->rc = TPROF_EUSAGE;
            }
    for (size_t i = 0; i < l->nparams; i++) {
        if (!in_list(ty, moe_types, sizeof moe_types / sizeof *moe_types)) {
            snprintf(c->err, c->errlen, "LoRA: target parameters (routed experts) need an MoE model_type (qwen3_moe, "
                     "qwen3_vl_moe, qwen3_next, qwen3_5_moe, qwen3_5_moe_text), not \"%s\"", ty);
            return c->rc = TPROF_EUSAGE;
        }
        if (!ends_with(l->params[i], "gate_up_proj") && !ends_with(l->params[i], "down_proj")) {
            snprintf(c->err, c->errlen, "LoRA: target parameter \"%.64s\" must end in gate_up_proj or down_proj",
                     l->params[i]);
            return c->rc = TPROF_EUSAGE;
        }
    }
    return 0;
}

/* Names a target may take: the text tower's and, for types with a vision
 * tower, any ViT's (checked here, counted where the tower's shapes are). */
static int known_target(const char *name, const lshape *sh, size_t n, int vl)
{
    static const char *const vit[] = { "qkv", "proj", "fc1", "fc2", "gate_proj", "up_proj", "down_proj",
                                       "mlp.0", "mlp.2", "linear_fc1", "linear_fc2" };
    return has_name(sh, n, name) || (vl && in_list(name, vit, sizeof vit / sizeof *vit));
}

void lora_text(fctx *c, const cv *t, const tprof_lora *l, const fsums *s, tprof_flops *o)
{
    lshape sh[MAXSH];
    size_t n = text_shapes(c, t, sh);
    if (c->rc) return;
    const char *ty = c->m->type;
    int vl = strstr(ty, "_vl") || !strncmp(ty, "qwen3_5", 7);
    for (size_t i = 0; i < l->ntargets; i++)
        if (!known_target(l->targets[i], sh, n, vl)) {
            int k = snprintf(c->err, c->errlen, "LoRA: \"%.64s\" is not a module of %s; supported:", l->targets[i], ty);
            for (size_t j = 0; j < n && k > 0 && (size_t)k < c->errlen; j++)
                if (!has_name(sh, j, sh[j].name)) k += snprintf(c->err + k, c->errlen - (size_t)k, " %s", sh[j].name);
            if (vl && k > 0 && (size_t)k < c->errlen) snprintf(c->err + k, c->errlen - (size_t)k, " and the vision tower's");
            c->rc = TPROF_EUSAGE;
            return;
        }
    int hit;
    double p = adapters(l, sh, n, &hit);
    if (l->nparams) { /* routed experts: uses per layer 2 + k shared, 3k independent */
        double H = (double)need_int(c, t, "hidden_size"), L = (double)need_int(c, t, "num_hidden_layers");
        double Im = (double)need_int(c, t, "moe_intermediate_size"), k = (double)need_int(c, t, "num_experts_per_tok");
        if (c->rc) return;
        p += (double)l->r * (H + Im) * (l->moe_shared ? 2 + k : 3 * k) * L;
    }
    o->params_lora = p;
    o->linear = (4 * o->params_active + 6 * p) * s->T;
}

double lora_vit(fctx *c, const cv *v, const tprof_lora *l, int qwen, double N, double patch, const fsums *s,
                tprof_flops *o, int *grad)
{
    lshape sh[MAXSH];
    size_t n = vit_shapes(c, v, qwen, sh);
    if (c->rc) return 0;
    int hit;
    double p = adapters(l, sh, n, &hit);
    o->params_lora += p;
    /* the patch conv of the Qwen3 ViT stays forward-only (2) */
    double base = qwen == 3 ? 2 * patch + 4 * (N - patch) : 4 * N;
    *grad = hit || l->bias_all;
    if (hit) return (base + 6 * p) * s->Ti;
    if (l->bias_all) return base * s->Ti;
    return 2 * N * s->Ti; /* no vision target: forward only */
}
