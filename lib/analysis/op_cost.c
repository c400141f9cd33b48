/* The performance model: FLOPs and bytes moved by one op instance, from its
 * name and recorded inputs (Input Dims, Input type, Concrete Inputs as the
 * reader keeps them: compact JSON text). The formulas are TraceLens's
 * published ones where it has one (docs/METRICS.md, "The performance model",
 * says which and where trainprof differs); ops it leaves out (the flash
 * attention launchers, cuDNN/MIOpen convolutions) follow the same rules. */
#include "trainprof/analysis.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAXT 24 /* inputs read */
#define MAXD 8  /* dims per input */

typedef struct {
    int n;                  /* inputs */
    int nd[MAXT];           /* dims of each; -1: not a list of ints */
    int64_t d[MAXT][MAXD];
} dims_t;

typedef struct {
    int n;
    char s[MAXT][64]; /* cut at 63 bytes */
} strs_t;

static const char *skip_ws(const char *p)
{
    while (*p == ' ') p++;
    return p;
}

/* "[[8944,1024],[1024,2816],[]]": each input's dims. */
static int parse_dims(const char *p, dims_t *out)
{
    memset(out, 0, sizeof *out);
    p = skip_ws(p);
    if (*p++ != '[') return -1;
    for (p = skip_ws(p); *p && *p != ']';) {
        int t = out->n < MAXT ? out->n : -1;
        if (*p == '[') {
            p++;
            int k = 0;
            for (p = skip_ws(p); *p && *p != ']';) {
                char *end;
                long long v = strtoll(p, &end, 10);
                if (end == p) { /* not an int: skip the value */
                    if (t >= 0) out->nd[t] = -1;
                    while (*p && *p != ',' && *p != ']') p++;
                } else {
                    if (t >= 0 && v < 0) out->nd[t] = -1; /* no tensor has a negative size */
                    if (t >= 0 && out->nd[t] >= 0 && k < MAXD) out->d[t][k] = v;
                    k++;
                    p = end;
                }
                p = skip_ws(p);
                if (*p == ',') p = skip_ws(p + 1);
            }
            if (*p != ']') return -1;
            p++;
            if (t >= 0 && out->nd[t] >= 0) out->nd[t] = k <= MAXD ? k : -1;
        } else { /* a non-list input (null, a number) */
            if (t >= 0) out->nd[t] = -1;
            while (*p && *p != ',' && *p != ']') p++;
        }
        if (t >= 0) out->n++;
        p = skip_ws(p);
        if (*p == ',') p = skip_ws(p + 1);
    }
    return *p == ']' ? 0 : -1;
}

/* "[\"c10::BFloat16\",\"\",\"[16, 16]\"]": each string (escapes dropped). */
static int parse_strs(const char *p, strs_t *out)
{
    memset(out, 0, sizeof *out);
    p = skip_ws(p);
    if (*p++ != '[') return -1;
    for (p = skip_ws(p); *p && *p != ']';) {
        int t = out->n < MAXT ? out->n : -1;
        size_t k = 0;
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1]) p++;
                if (t >= 0 && k < sizeof out->s[0] - 1) out->s[t][k++] = *p;
            }
            if (*p != '"') return -1;
            p++;
        } else
            while (*p && *p != ',' && *p != ']') p++;
        if (t >= 0) out->n++;
        p = skip_ws(p);
        if (*p == ',') p = skip_ws(p + 1);
    }
    return *p == ']' ? 0 : -1;
}

/* Bytes per element of a recorded type name ("c10::BFloat16", "float",
 * "Scalar", "long int"); 0 when it has none (bool, a list, ""). */
static int elem_bytes(const char *type)
{
    if (!strncmp(type, "c10::", 5)) type += 5;
    if (!strcasecmp(type, "double") || !strcasecmp(type, "long int") || !strcasecmp(type, "long")) return 8;
    if (!strcasecmp(type, "float") || !strcasecmp(type, "Scalar") || !strcasecmp(type, "int")) return 4;
    if (!strcasecmp(type, "half") || !strcasecmp(type, "BFloat16")) return 2;
    if (strstr(type, "Float8") || strstr(type, "float8") || !strcasecmp(type, "unsigned char") ||
        !strcasecmp(type, "signed char") || !strcasecmp(type, "char"))
        return 1;
    return 0;
}

static tprof_dtype dtype_of(const char *type)
{
    if (!strncmp(type, "c10::", 5)) type += 5;
    if (!strcasecmp(type, "BFloat16")) return TPROF_DT_BF16;
    if (!strcasecmp(type, "half")) return TPROF_DT_FP16;
    if (strstr(type, "Float8") || strstr(type, "float8")) return TPROF_DT_FP8;
    return TPROF_DT_FP32;
}

static double prod(const dims_t *d, int t)
{
    if (t >= d->n || d->nd[t] < 0) return 0;
    double p = 1;
    for (int k = 0; k < d->nd[t]; k++) p *= (double)d->d[t][k];
    return p;
}

static int has(const dims_t *d, int t, int nd) { return t < d->n && d->nd[t] == nd; }

/* A Concrete Input's ints: "[16, 16]" or "3" (an empty string: none). */
static int concrete_ints(const strs_t *c, int i, int64_t *v, int max)
{
    if (i >= c->n) return 0;
    const char *p = c->s[i];
    int n = 0;
    while (*p && n < max) {
        while (*p && !(isdigit((unsigned char)*p) || *p == '-')) p++;
        if (!*p) break;
        char *end;
        v[n++] = strtoll(p, &end, 10);
        p = end;
    }
    return n;
}

static int concrete_true(const strs_t *c, int i) { return i < c->n && !strcasecmp(c->s[i], "true"); }

static const char *type_at(const strs_t *t, int i) { return i < t->n ? t->s[i] : ""; }

/* ---- the families ---- */

/* GEMM: A [M,K] (or [B,M,K]) at input IA, B's N at input IB, dim NDIM. */
static int gemm(const dims_t *d, const strs_t *ty, int ia, int ib, int batched, int bias, tprof_op_cost *o)
{
    int r = batched ? 3 : 2;
    if (!has(d, ia, r) || !has(d, ib, r)) return 0;
    double B = batched ? (double)d->d[ia][0] : 1, M = (double)d->d[ia][r - 2], K = (double)d->d[ia][r - 1];
    double N = (double)d->d[ib][r - 1];
    int b = elem_bytes(type_at(ty, ia));
    o->flops = B * (2 * M * N * K + (bias ? M * N : 0));
    o->bytes = b ? B * (M * K + K * N + M * N + (bias ? N : 0)) * b : 0;
    o->dtype = dtype_of(type_at(ty, ia));
    o->family = "gemm";
    o->m = d->d[ia][r - 2];
    o->n = d->d[ib][r - 1];
    o->k = d->d[ia][r - 1];
    return 1;
}

/* Attention forward from q, k, v in layout B,H,N,d (BHND) or B,N,H,d. */
static int attention(const dims_t *d, const strs_t *ty, int iq, int bhnd, int causal, double factor, int bwd,
                     tprof_op_cost *o)
{
    if (!has(d, iq, 4) || !has(d, iq + 1, 4) || !has(d, iq + 2, 4)) return 0;
    const int64_t *q = d->d[iq], *k = d->d[iq + 1], *v = d->d[iq + 2];
    double B = (double)q[0], Hq = (double)(bhnd ? q[1] : q[2]), Nq = (double)(bhnd ? q[2] : q[1]);
    double Nkv = (double)(bhnd ? k[2] : k[1]), dqk = (double)q[3], dv = (double)v[3];
    double f = B * Hq * 2 * Nq * Nkv * (dqk + dv);
    if (causal) f /= 2;
    o->flops = f * factor;
    double qe = prod(d, iq), ke = prod(d, iq + 1), ve = prod(d, iq + 2), oe = B * Hq * Nq * dv;
    o->bytes = (bwd ? 2 * (qe + ke + ve) + 2 * oe : qe + ke + ve + oe) * 2; /* TraceLens: 2 bytes whatever the type */
    o->dtype = dtype_of(type_at(ty, iq));
    o->family = "attention";
    return 1;
}

/* Convolution of x (input IX) with w (input IX+1), stride / padding /
 * dilation from Concrete Inputs CS, CP, CD; FACTOR 2 forward, 4 backward. */
static int conv(const dims_t *d, const strs_t *ty, const strs_t *ci, int ix, int cs, int cp, int cdil, double factor,
                tprof_op_cost *o)
{
    if (ix + 1 >= d->n || d->nd[ix] < 3 || d->nd[ix + 1] != d->nd[ix]) return 0;
    int sp = d->nd[ix] - 2;
    int64_t s[MAXD], p[MAXD], dl[MAXD];
    int ns = concrete_ints(ci, cs, s, MAXD), np = concrete_ints(ci, cp, p, MAXD), nd = concrete_ints(ci, cdil, dl, MAXD);
    if (d->d[ix + 1][0] <= 0) return 0;
    double out = (double)d->d[ix][0] * (double)d->d[ix + 1][0];
    for (int i = 0; i < sp; i++) { /* in doubles: sizes from the file may be anything */
        double st = ns ? (double)s[ns == 1 ? 0 : i < ns ? i : ns - 1] : 1;
        double pd = np ? (double)p[np == 1 ? 0 : i < np ? i : np - 1] : 0;
        double di = nd ? (double)dl[nd == 1 ? 0 : i < nd ? i : nd - 1] : 1;
        if (!(st > 0)) return 0;
        double len = floor(((double)d->d[ix][2 + i] + 2 * pd - di * ((double)d->d[ix + 1][2 + i] - 1) - 1) / st) + 1;
        if (!(len > 0)) return 0;
        out *= len;
    }
    double wk = prod(d, ix + 1) / (double)d->d[ix + 1][0]; /* Cin/groups x kernel */
    int b = elem_bytes(type_at(ty, ix));
    o->flops = factor * out * wk;
    o->bytes = b ? (factor / 2) * (prod(d, ix) + prod(d, ix + 1) + out) * b : 0;
    o->dtype = dtype_of(type_at(ty, ix));
    o->family = "convolution";
    return 1;
}

static int one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list)) return 1;
    return 0;
}

static int cost_of(const char *name, const char *dims_json, const char *types_json, const char *concrete_json,
                   tprof_op_cost *o);

int tprof_op_cost_of(const char *name, const char *dims_json, const char *types_json, const char *concrete_json,
                     tprof_op_cost *o)
{
    int modelled = cost_of(name, dims_json, types_json, concrete_json, o);
    /* sizes beyond any real tensor overflow the doubles: no model then */
    if (modelled && !(isfinite(o->flops) && isfinite(o->bytes) && o->flops >= 0 && o->bytes >= 0)) {
        memset(o, 0, sizeof *o);
        return 0;
    }
    return modelled;
}

static int cost_of(const char *name, const char *dims_json, const char *types_json, const char *concrete_json,
                   tprof_op_cost *o)
{
    memset(o, 0, sizeof *o);
    if (strncmp(name, "aten::", 6) != 0 || !dims_json || !*dims_json) return 0;
    const char *op = name + 6;
    dims_t d;
    strs_t ty, ci;
    if (parse_dims(dims_json, &d) || parse_strs(types_json && *types_json ? types_json : "[]", &ty) ||
        parse_strs(concrete_json && *concrete_json ? concrete_json : "[]", &ci))
        return 0;
    if (!strcmp(op, "mm")) return gemm(&d, &ty, 0, 1, 0, 0, o);
    if (!strcmp(op, "addmm")) return gemm(&d, &ty, 1, 2, 0, 1, o);
    if (!strcmp(op, "bmm")) return gemm(&d, &ty, 0, 1, 1, 0, o);
    if (!strcmp(op, "baddbmm")) return gemm(&d, &ty, 1, 2, 1, 1, o);
    if (!strcmp(op, "_scaled_mm")) {
        if (!gemm(&d, &ty, 0, 1, 0, 0, o)) return 0;
        if (elem_bytes(type_at(&ty, 0)) == 1) { /* fp8 in, 16-bit out */
            double M = (double)d.d[0][0], K = (double)d.d[0][1], N = (double)d.d[1][1];
            o->bytes = M * K + K * N + 2 * M * N;
        }
        return 1;
    }
    /* attention: TraceLens's layouts and causal flags; the flash launchers (B,N,H,d) trainprof's */
    if (!strcmp(op, "_scaled_dot_product_flash_attention"))
        return attention(&d, &ty, 0, 1, concrete_true(&ci, 4), 1, 0, o);
    if (!strcmp(op, "_scaled_dot_product_efficient_attention") || !strcmp(op, "_scaled_dot_product_cudnn_attention"))
        return attention(&d, &ty, 0, 1, concrete_true(&ci, 6), 1, 0, o);
    if (!strcmp(op, "_flash_attention_forward")) return attention(&d, &ty, 0, 0, concrete_true(&ci, 8), 1, 0, o);
    if (!strcmp(op, "_flash_attention_backward")) return attention(&d, &ty, 1, 0, concrete_true(&ci, 11), 2.5, 1, o);
    if (!strcmp(op, "_scaled_dot_product_flash_attention_backward"))
        return attention(&d, &ty, 1, 1, concrete_true(&ci, 11), 2.5, 1, o);
    /* convolution */
    if (!strcmp(op, "convolution") || !strcmp(op, "_convolution")) return conv(&d, &ty, &ci, 0, 3, 4, 5, 2, o);
    /* (input, weight, padding, stride, dilation, ...); MIOpen's has a bias before the padding */
    if (!strcmp(op, "cudnn_convolution")) return conv(&d, &ty, &ci, 0, 3, 2, 4, 2, o);
    if (!strcmp(op, "miopen_convolution")) return conv(&d, &ty, &ci, 0, 4, 3, 5, 2, o);
    if (!strcmp(op, "convolution_backward")) return conv(&d, &ty, &ci, 1, 4, 5, 6, 4, o);
    /* elementwise: FLOPs the elements, bytes what is read and written */
    static const char *const unary[] = { "copy", "copy_", "clamp_min", "clamp_min_", "clamp_max", "clamp_max_",
                                         "sigmoid", "rsqrt", "silu", "silu_", "neg", "pow", "relu", "relu_", "gelu",
                                         "tanh", "exp", "log", "sqrt", "abs", NULL };
    static const char *const binary[] = { "add", "add_", "mul", "mul_", "div", "div_", "sub", "sub_",
                                          "sigmoid_backward", "threshold_backward", "gelu_backward", "silu_backward",
                                          NULL };
    if (one_of(op, unary)) {
        if (d.n < 1 || d.nd[0] < 0) return 0;
        double e = prod(&d, 0);
        int bi = elem_bytes(type_at(&ty, 0)), bo = d.n > 1 && d.nd[1] > 0 ? elem_bytes(type_at(&ty, 1)) : bi;
        o->flops = e;
        o->bytes = bi && bo ? e * bi + e * bo : 0;
        o->dtype = dtype_of(type_at(&ty, 0));
        o->family = "elementwise";
        return 1;
    }
    if (one_of(op, binary)) {
        if (d.n < 2 || d.nd[0] < 0 || d.nd[1] < 0) return 0;
        int r = d.nd[0] > d.nd[1] ? d.nd[0] : d.nd[1];
        double out = 1;
        for (int i = 0; i < r; i++) { /* numpy broadcasting, from the right */
            int64_t a = i < d.nd[0] ? d.d[0][d.nd[0] - 1 - i] : 1, b = i < d.nd[1] ? d.d[1][d.nd[1] - 1 - i] : 1;
            out *= (double)(a > b ? a : b);
        }
        int b1 = elem_bytes(type_at(&ty, 0)), b2 = elem_bytes(type_at(&ty, 1));
        int bo = d.n > 2 && d.nd[2] > 0 ? elem_bytes(type_at(&ty, 2)) : d.nd[0] > 0 && d.nd[1] > 0 ? (b1 > b2 ? b1 : b2) : b1;
        o->flops = out;
        o->bytes = b1 && b2 && bo ? prod(&d, 0) * b1 + prod(&d, 1) * b2 + out * bo : 0;
        o->dtype = dtype_of(type_at(&ty, 0));
        o->family = "elementwise";
        return 1;
    }
    /* normalization forward: E elements, Ch channels (or the normalized shape) */
    static const char *const norm_c[] = { "batch_norm", "native_batch_norm", "cudnn_batch_norm", "miopen_batch_norm",
                                          "group_norm", "native_group_norm", "instance_norm", NULL };
    static const char *const norm_ls[] = { "layer_norm", "native_layer_norm", NULL };
    if (one_of(op, norm_c) || one_of(op, norm_ls) || !strcmp(op, "_fused_rms_norm")) {
        if (d.n < 1 || d.nd[0] < 2) return 0;
        double e = prod(&d, 0), ch;
        if (one_of(op, norm_c)) ch = (double)d.d[0][1];
        else {
            int64_t v[MAXD];
            int n = concrete_ints(&ci, 1, v, MAXD);
            if (!n) return 0;
            ch = 1;
            for (int i = 0; i < n; i++) ch *= (double)v[i];
        }
        int b = elem_bytes(type_at(&ty, 0));
        if (!strcmp(op, "_fused_rms_norm")) {
            o->flops = (e / ch) * (2 * ch + 2) + 2 * e;
            o->bytes = b ? (2 * e + ch) * b : 0;
        } else {
            o->flops = 6 * ch + 5 * e;
            o->bytes = b ? (2 * e + 6 * ch) * b : 0;
        }
        o->dtype = dtype_of(type_at(&ty, 0));
        o->family = "normalization";
        return 1;
    }
    if (!strcmp(op, "native_batch_norm_backward") || !strcmp(op, "cudnn_batch_norm_backward") ||
        !strcmp(op, "miopen_batch_norm_backward")) {
        int native = op[0] == 'n', ix = native ? 1 : 0;
        if (d.n <= ix || d.nd[ix] < 2) return 0;
        double e = prod(&d, ix), ch = (double)d.d[ix][1];
        int b = elem_bytes(type_at(&ty, ix));
        o->flops = native ? 9 * e : 3 * ch + 4 * e;
        o->bytes = b ? (native ? 3 * e * b + 4 * ch * b : 2 * e * b + ch * b) : 0;
        o->dtype = dtype_of(type_at(&ty, ix));
        o->family = "normalization";
        return 1;
    }
    /* reductions: every element read once; the output as the dims say */
    static const char *const reduce[] = { "sum", "mean", "max", "min", "norm", "linalg_vector_norm", "std", "var",
                                          "logsumexp", "amin", "amax", "prod", NULL };
    int scan = !strcmp(op, "cumsum") || !strcmp(op, "cumprod");
    if (one_of(op, reduce) || scan) {
        if (d.n < 1 || d.nd[0] < 0) return 0;
        double e = prod(&d, 0), eo = 1;
        int64_t dims[MAXD];
        /* the dims are input 1 (norm's and linalg_vector_norm's input 1 is the order: theirs is 2) */
        int dim_at = !strcmp(op, "norm") || !strcmp(op, "linalg_vector_norm") ? 2 : 1;
        int nd = scan ? 0 : concrete_ints(&ci, dim_at, dims, MAXD);
        if (scan) eo = e;
        else if (nd && d.nd[0] > 0) { /* the reduced dims (negative from the end) leave the rest */
            eo = e;
            for (int i = 0; i < nd; i++) {
                int64_t k = dims[i] < 0 ? dims[i] + d.nd[0] : dims[i];
                if (k >= 0 && k < d.nd[0] && d.d[0][k]) eo /= (double)d.d[0][k];
            }
        }
        int b = elem_bytes(type_at(&ty, 0));
        o->flops = e;
        o->bytes = b ? (e + eo) * b : 0;
        o->dtype = dtype_of(type_at(&ty, 0));
        o->family = "reduction";
        return 1;
    }
    return 0;
}
