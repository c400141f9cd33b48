/* tiny_gpt: a small decoder-only transformer language model, trained on the
 * CPU with trainprof's recording library doing all the profiling.
 *
 * Model: byte-level tokens (V = 256), learned positions, L blocks of
 * pre-LayerNorm causal self-attention and a SwiGLU MLP (gate, up, down: the
 * shape of the llama FLOPs formula, so the step meter's count is exact), a
 * final LayerNorm and an untied LM head. Forward, backward and AdamW are
 * written out by hand below; one thread, plain loops.
 *
 * Configuration: configs/tiny.yaml (model.*, train.*, train.profile.*) and
 * the same keys as --key=value flags, which win.
 *
 * Built with TINY_GPT_MPI (the tiny_gpt_mpi target), it trains data-parallel
 * over the processes of `mpirun -np W`: same initial weights (rank 0's,
 * broadcast), each rank its own slice of every global batch, gradients
 * averaged with one MPI_Allreduce per step, each rank its own trace.
 * --train.debug.slow_rank=R --train.debug.slow_ms=X makes rank R a
 * straggler on purpose: it sleeps X ms after each step's backward, before
 * the gradients' allreduce, so the others wait about X ms in it (what
 * `trainprof collectives` finds). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trainprof/error.h"
#include "trainprof/flops.h"
#include "trainprof/profiler.h"

#ifdef TINY_GPT_MPI
#include <mpi.h>
#endif

/* ---- options ---------------------------------------------------------------- */

typedef struct {
    int n_layer, n_embd, n_head, inter, seq;
    int batch, max_steps, resume_step, seed, log_json, gradcheck, log_ranks;
    int slow_rank; /* train.debug.slow_rank: this rank computes train.debug.slow_ms longer each step (-1: none) */
    double lr, wd, peak_tflops, slow_ms;
    char data[1024];
} opts;

static int set_opt(void *ud, const char *key, const char *v, char *errbuf, size_t errlen)
{
    opts *o = ud;
    struct {
        const char *k;
        int *i;
        double *d;
    } t[] = {
        { "model.n_layer", &o->n_layer, NULL }, { "model.n_embd", &o->n_embd, NULL },
        { "model.n_head", &o->n_head, NULL },   { "model.intermediate", &o->inter, NULL },
        { "model.seq_len", &o->seq, NULL },     { "train.batch_size", &o->batch, NULL },
        { "train.max_steps", &o->max_steps, NULL }, { "train.resume_step", &o->resume_step, NULL },
        { "train.seed", &o->seed, NULL },       { "train.lr", NULL, &o->lr },
        { "train.weight_decay", NULL, &o->wd }, { "train.peak_tflops", NULL, &o->peak_tflops },
        { "train.debug.slow_rank", &o->slow_rank, NULL }, { "train.debug.slow_ms", NULL, &o->slow_ms },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (strcmp(key, t[i].k) != 0) continue;
        char *end;
        if (t[i].i) {
            long x = strtol(v, &end, 10);
            if (*end || end == v || x < 0 || x > 1 << 24) goto bad;
            *t[i].i = (int)x;
        } else {
            double x = strtod(v, &end);
            if (*end || end == v || !(x >= 0)) goto bad;
            *t[i].d = x;
        }
        return 0;
    bad:
        snprintf(errbuf, errlen, "%s: '%s': a non-negative number expected", key, v);
        return TPROF_EUSAGE;
    }
    if (strcmp(key, "train.data") == 0) {
        snprintf(o->data, sizeof o->data, "%s", v);
        return 0;
    }
    int *flag = strcmp(key, "train.log_json") == 0    ? &o->log_json
                : strcmp(key, "train.gradcheck") == 0  ? &o->gradcheck
                : strcmp(key, "train.log_ranks") == 0 ? &o->log_ranks
                                                       : NULL;
    if (flag) {
        *flag = strcmp(v, "true") == 0 || strcmp(v, "1") == 0;
        return 0;
    }
    return 1;
}

/* ---- the allocator: arenas the profiler sees ------------------------------------ */

typedef struct {
    char *base;
    size_t cap, used;
    void **live;
    size_t nlive, clive;
} arena;

static void arena_init(arena *a, size_t cap)
{
    a->base = aligned_alloc(64, (cap + 63) / 64 * 64);
    if (!a->base) {
        fprintf(stderr, "tiny_gpt: out of memory\n");
        exit(1);
    }
    a->cap = cap;
    tprof_mem_segment(a->base, cap, -1);
}

static float *arena_floats(arena *a, size_t n)
{
    size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    if (a->used + bytes > a->cap) {
        fprintf(stderr, "tiny_gpt: arena full\n");
        exit(1);
    }
    float *p = (float *)(a->base + a->used);
    a->used += bytes;
    memset(p, 0, bytes);
    if (a->nlive == a->clive) {
        a->clive = a->clive ? a->clive * 2 : 64;
        a->live = realloc(a->live, a->clive * sizeof *a->live);
        if (!a->live) exit(1);
    }
    a->live[a->nlive++] = p;
    tprof_mem_alloc(p, bytes, -1);
    return p;
}

/* Frees everything allocated since the arena was empty, newest first. */
static void arena_reset(arena *a)
{
    while (a->nlive) tprof_mem_free(a->live[--a->nlive]);
    a->used = 0;
}

static void arena_free(arena *a)
{
    arena_reset(a);
    free(a->live);
    free(a->base);
}

/* ---- tensors ------------------------------------------------------------------------ */

typedef struct {
    float *w, *g, *m, *v;
    size_t n;
    int decay;
} param;

enum { P_WTE, P_WPE, P_LNF_G, P_LNF_B, P_LM, P_GLOBAL };
enum { P_LN1G, P_LN1B, P_WQ, P_WK, P_WV, P_WO, P_LN2G, P_LN2B, P_WG, P_WU, P_WD, P_PER_LAYER };

typedef struct {
    opts o;
    int V, H, L, nh, hd, I, T, B;
    param *p;
    int np;
    arena persist, act;
    uint64_t rng;
} model;

static param *P(model *m, int layer, int which) { return &m->p[layer < 0 ? which : P_GLOBAL + layer * P_PER_LAYER + which]; }

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static float randn(uint64_t *s)
{
    double u1 = ((double)(rnd(s) >> 11) + 1) / 9007199254740993.0, u2 = (double)(rnd(s) >> 11) / 9007199254740992.0;
    return (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
}

static void model_init(model *m)
{
    m->V = 256;
    m->H = m->o.n_embd;
    m->L = m->o.n_layer;
    m->nh = m->o.n_head;
    m->hd = m->H / m->nh;
    m->I = m->o.inter;
    m->T = m->o.seq;
    m->B = m->o.batch;
    m->np = P_GLOBAL + m->L * P_PER_LAYER;
    m->p = calloc((size_t)m->np, sizeof *m->p);
    size_t H = (size_t)m->H, V = (size_t)m->V, I = (size_t)m->I, T = (size_t)m->T;
    size_t sizes[P_GLOBAL] = { V * H, T * H, H, H, H * V };
    size_t per[P_PER_LAYER] = { H, H, H * H, H * H, H * H, H * H, H, H, H * I, H * I, I * H };
    size_t total = 0;
    for (int i = 0; i < m->np; i++) {
        param *p = &m->p[i];
        p->n = i < P_GLOBAL ? sizes[i] : per[(i - P_GLOBAL) % P_PER_LAYER];
        total += (p->n * 4 + 63) / 64 * 64 * 4;
    }
    arena_init(&m->persist, total);
    m->rng = 0x9E3779B97F4A7C15ULL ^ (uint64_t)m->o.seed * 0x2545F4914F6CDD1DULL;
    if (!m->rng) m->rng = 1;
    /* all weights back to back, then all gradients, then the moments: one
     * span each, so a broadcast or an all-reduce is one call (padding is zero) */
    for (int i = 0; i < m->np; i++) m->p[i].w = arena_floats(&m->persist, m->p[i].n);
    for (int i = 0; i < m->np; i++) m->p[i].g = arena_floats(&m->persist, m->p[i].n);
    for (int i = 0; i < m->np; i++) m->p[i].m = arena_floats(&m->persist, m->p[i].n);
    for (int i = 0; i < m->np; i++) m->p[i].v = arena_floats(&m->persist, m->p[i].n);
    for (int i = 0; i < m->np; i++) {
        param *p = &m->p[i];
        int w = i < P_GLOBAL ? i : (i - P_GLOBAL) % P_PER_LAYER;
        int is_ln = i < P_GLOBAL ? (w == P_LNF_G || w == P_LNF_B) : (w == P_LN1G || w == P_LN1B || w == P_LN2G || w == P_LN2B);
        int is_gain = i < P_GLOBAL ? w == P_LNF_G : (w == P_LN1G || w == P_LN2G);
        p->decay = !is_ln && !(i < P_GLOBAL && (w == P_WTE || w == P_WPE));
        /* residual projections scaled down with depth, as GPT-2 does */
        float sd = 0.02f;
        if (i >= P_GLOBAL && (w == P_WO || w == P_WD)) sd = 0.02f / sqrtf(2.0f * (float)m->L);
        for (size_t k = 0; k < p->n; k++) p->w[k] = is_ln ? (is_gain ? 1.0f : 0.0f) : sd * randn(&m->rng);
    }
    /* activations of one step: a generous bound, carved per step */
    size_t BT = (size_t)m->B * T;
    size_t per_layer = BT * H * 12 + BT * I * 6 + (size_t)m->B * m->nh * T * T * 2 + BT * 4;
    arena_init(&m->act, (per_layer * (size_t)m->L + BT * (H * 8 + V * 3) + BT * 8) * sizeof(float) + 64 * 1024 * 64);
}

/* ---- data parallelism: MPI when built with it, one process otherwise ---------------- */

static int dp_rank, dp_world = 1;

#ifdef TINY_GPT_MPI
static void dp_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &dp_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &dp_world);
    tprof_profiler_set_rank(dp_rank, dp_world); /* before start: the file name, rank0_only, distributedInfo */
}
static void dp_finish(void) { MPI_Finalize(); }
static void dp_bcast_floats(float *p, size_t n) { MPI_Bcast(p, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD); }
static void dp_sum_floats(float *p, size_t n) { MPI_Allreduce(MPI_IN_PLACE, p, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }
static void dp_sum_doubles(double *p, size_t n)
{
    MPI_Allreduce(MPI_IN_PLACE, p, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
#else
/* the profiler takes RANK and WORLD_SIZE from the environment, if set */
static void dp_init(int *argc, char ***argv) { (void)argc, (void)argv; }
static void dp_finish(void) {}
static void dp_bcast_floats(float *p, size_t n) { (void)p, (void)n; }
static void dp_sum_floats(float *p, size_t n) { (void)p, (void)n; }
static void dp_sum_doubles(double *p, size_t n) { (void)p, (void)n; }
#endif

/* Every tensor's weights (or gradients) as one span: model_init lays each
 * kind out back to back, the padding between tensors zero. */
static float *span(const model *m, int grads, size_t *n)
{
    const param *a = &m->p[0], *z = &m->p[m->np - 1];
    float *first = grads ? a->g : a->w;
    *n = (size_t)((grads ? z->g : z->w) + z->n - first);
    return first;
}

/* FNV-1a over the weights' bytes: equal on every rank iff the replicas agree. */
static uint64_t weights_hash(const model *m)
{
    size_t n;
    const unsigned char *b = (const unsigned char *)span(m, 0, &n);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n * sizeof(float); i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* ---- kernels ---------------------------------------------------------------------- */

static const int64_t *dims3(int64_t *d, int64_t a, int64_t b, int64_t c, int64_t e)
{
    d[0] = a, d[1] = b, d[2] = c, d[3] = e;
    return d;
}

/* out[M,N] = a[M,K] @ w[K,N] */
static void matmul(float *out, const float *a, const float *w, int M, int K, int N, const char *name)
{
    int64_t d[4];
    static const int nd[2] = { 2, 2 };
    tprof_range r = tprof_op_begin(name, dims3(d, M, K, K, N), nd, 2);
    for (int i = 0; i < M; i++) {
        float *o = out + (size_t)i * N;
        memset(o, 0, (size_t)N * sizeof *o);
        for (int k = 0; k < K; k++) {
            float x = a[(size_t)i * K + k];
            const float *wr = w + (size_t)k * N;
            for (int j = 0; j < N; j++) o[j] += x * wr[j];
        }
    }
    tprof_range_end(r);
}

/* da[M,K] += dout[M,N] @ w^T;  dw[K,N] += a^T @ dout */
static void matmul_back(float *da, float *dw, const float *dout, const float *a, const float *w, int M, int K, int N)
{
    int64_t d[4];
    static const int nd[2] = { 2, 2 };
    tprof_range r = tprof_op_begin("aten::mm_backward", dims3(d, M, N, K, N), nd, 2);
    for (int i = 0; i < M; i++) {
        const float *go = dout + (size_t)i * N;
        const float *ai = a + (size_t)i * K;
        for (int k = 0; k < K; k++) {
            const float *wr = w + (size_t)k * N;
            float *dwr = dw + (size_t)k * N;
            float s = 0, x = ai[k];
            for (int j = 0; j < N; j++) {
                s += go[j] * wr[j];
                dwr[j] += x * go[j];
            }
            if (da) da[(size_t)i * K + k] += s;
        }
    }
    tprof_range_end(r);
}

static void layernorm(float *out, float *mean, float *rstd, const float *x, const float *gn, const float *b, int M, int H)
{
    int64_t d[4];
    static const int nd[1] = { 2 };
    tprof_range r = tprof_op_begin("aten::layer_norm", dims3(d, M, H, 0, 0), nd, 1);
    for (int i = 0; i < M; i++) {
        const float *xi = x + (size_t)i * H;
        float mu = 0, var = 0;
        for (int j = 0; j < H; j++) mu += xi[j];
        mu /= (float)H;
        for (int j = 0; j < H; j++) var += (xi[j] - mu) * (xi[j] - mu);
        float rs = 1.0f / sqrtf(var / (float)H + 1e-5f);
        mean[i] = mu;
        rstd[i] = rs;
        for (int j = 0; j < H; j++) out[(size_t)i * H + j] = (xi[j] - mu) * rs * gn[j] + b[j];
    }
    tprof_range_end(r);
}

static void layernorm_back(float *dx, float *dg, float *db, const float *dout, const float *x, const float *mean,
                           const float *rstd, const float *gn, int M, int H)
{
    tprof_range r = tprof_op_begin("aten::native_layer_norm_backward", NULL, NULL, 0);
    for (int i = 0; i < M; i++) {
        const float *xi = x + (size_t)i * H, *go = dout + (size_t)i * H;
        float mu = mean[i], rs = rstd[i], s1 = 0, s2 = 0;
        for (int j = 0; j < H; j++) {
            float xh = (xi[j] - mu) * rs, dxh = go[j] * gn[j];
            dg[j] += go[j] * xh;
            db[j] += go[j];
            s1 += dxh;
            s2 += dxh * xh;
        }
        for (int j = 0; j < H; j++) {
            float xh = (xi[j] - mu) * rs, dxh = go[j] * gn[j];
            dx[(size_t)i * H + j] += rs * (dxh - s1 / (float)H - xh * s2 / (float)H);
        }
    }
    tprof_range_end(r);
}

/* causal attention over qkv laid out [B*T, H] each; att holds the softmax */
static void attention(float *y, float *att, const float *q, const float *k, const float *v, const model *m)
{
    int64_t d[4];
    static const int nd[1] = { 3 };
    tprof_range r = tprof_op_begin("aten::scaled_dot_product_attention", dims3(d, m->B, m->T, m->H, 0), nd, 1);
    int T = m->T, H = m->H, hd = m->hd;
    float scale = 1.0f / sqrtf((float)hd);
    for (int b = 0; b < m->B; b++)
        for (int h = 0; h < m->nh; h++) {
            float *A = att + ((size_t)(b * m->nh + h)) * T * T;
            for (int t = 0; t < T; t++) {
                const float *qt = q + ((size_t)b * T + t) * H + h * hd;
                float mx = -1e30f, sum = 0;
                for (int s = 0; s <= t; s++) {
                    const float *ks = k + ((size_t)b * T + s) * H + h * hd;
                    float dot = 0;
                    for (int j = 0; j < hd; j++) dot += qt[j] * ks[j];
                    A[t * T + s] = dot * scale;
                    if (A[t * T + s] > mx) mx = A[t * T + s];
                }
                for (int s = 0; s <= t; s++) sum += A[t * T + s] = expf(A[t * T + s] - mx);
                for (int s = 0; s <= t; s++) A[t * T + s] /= sum;
                for (int s = t + 1; s < T; s++) A[t * T + s] = 0;
                float *yt = y + ((size_t)b * T + t) * H + h * hd;
                memset(yt, 0, (size_t)hd * sizeof *yt);
                for (int s = 0; s <= t; s++) {
                    const float *vs = v + ((size_t)b * T + s) * H + h * hd;
                    float a = A[t * T + s];
                    for (int j = 0; j < hd; j++) yt[j] += a * vs[j];
                }
            }
        }
    tprof_range_end(r);
}

static void attention_back(float *dq, float *dk, float *dv, const float *dy, const float *att, const float *q,
                           const float *k, const float *v, const model *m)
{
    tprof_range r = tprof_op_begin("aten::scaled_dot_product_attention_backward", NULL, NULL, 0);
    int T = m->T, H = m->H, hd = m->hd;
    float scale = 1.0f / sqrtf((float)hd);
    float *da = malloc((size_t)T * sizeof *da); /* one row of scratch, outside the traced arenas */
    for (int b = 0; b < m->B; b++)
        for (int h = 0; h < m->nh; h++) {
            const float *A = att + ((size_t)(b * m->nh + h)) * T * T;
            for (int t = 0; t < T; t++) {
                const float *dyt = dy + ((size_t)b * T + t) * H + h * hd;
                float dot_sum = 0;
                for (int s = 0; s <= t; s++) {
                    const float *vs = v + ((size_t)b * T + s) * H + h * hd;
                    float *dvs = dv + ((size_t)b * T + s) * H + h * hd;
                    float x = 0, a = A[t * T + s];
                    for (int j = 0; j < hd; j++) {
                        x += dyt[j] * vs[j];
                        dvs[j] += a * dyt[j];
                    }
                    da[s] = x;
                    dot_sum += a * x;
                }
                const float *qt = q + ((size_t)b * T + t) * H + h * hd;
                float *dqt = dq + ((size_t)b * T + t) * H + h * hd;
                for (int s = 0; s <= t; s++) {
                    float ds = A[t * T + s] * (da[s] - dot_sum) * scale;
                    const float *ks = k + ((size_t)b * T + s) * H + h * hd;
                    float *dks = dk + ((size_t)b * T + s) * H + h * hd;
                    for (int j = 0; j < hd; j++) {
                        dqt[j] += ds * ks[j];
                        dks[j] += ds * qt[j];
                    }
                }
            }
        }
    free(da);
    tprof_range_end(r);
}

/* ---- one step ---------------------------------------------------------------------- */

typedef struct {
    float *x_in, *xn1, *mean1, *rstd1, *q, *k, *v, *att, *y, *x_mid, *xn2, *mean2, *rstd2, *gt, *up, *hh;
} layer_act;

static float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

/* Forward and backward over one batch; returns the mean loss. */
static float train_step(model *m, const uint8_t *tokens, const uint8_t *targets)
{
    int B = m->B, T = m->T, H = m->H, V = m->V, I = m->I, L = m->L, BT = B * T;
    arena *A = &m->act;
    layer_act *la = malloc((size_t)L * sizeof *la);
    float *x = arena_floats(A, (size_t)BT * H);
    double loss = 0; /* summed in double: the gradient check differences it */
    float *xf, *meanf, *rstdf, *logits, *xlast;
    {
        TPROF_RANGE("forward");
        {
            tprof_range r = tprof_op_begin("aten::embedding", NULL, NULL, 0);
            const float *wte = P(m, -1, P_WTE)->w, *wpe = P(m, -1, P_WPE)->w;
            for (int i = 0; i < BT; i++)
                for (int j = 0; j < H; j++)
                    x[(size_t)i * H + j] = wte[(size_t)tokens[i] * H + j] + wpe[(size_t)(i % T) * H + j];
            tprof_range_end(r);
        }
        for (int l = 0; l < L; l++) {
            tprof_range mr = tprof_module_begin("Block");
            layer_act *a = &la[l];
            a->x_in = x;
            a->xn1 = arena_floats(A, (size_t)BT * H);
            a->mean1 = arena_floats(A, (size_t)BT);
            a->rstd1 = arena_floats(A, (size_t)BT);
            layernorm(a->xn1, a->mean1, a->rstd1, x, P(m, l, P_LN1G)->w, P(m, l, P_LN1B)->w, BT, H);
            a->q = arena_floats(A, (size_t)BT * H);
            a->k = arena_floats(A, (size_t)BT * H);
            a->v = arena_floats(A, (size_t)BT * H);
            matmul(a->q, a->xn1, P(m, l, P_WQ)->w, BT, H, H, "aten::mm");
            matmul(a->k, a->xn1, P(m, l, P_WK)->w, BT, H, H, "aten::mm");
            matmul(a->v, a->xn1, P(m, l, P_WV)->w, BT, H, H, "aten::mm");
            a->att = arena_floats(A, (size_t)B * m->nh * T * T);
            a->y = arena_floats(A, (size_t)BT * H);
            attention(a->y, a->att, a->q, a->k, a->v, m);
            a->x_mid = arena_floats(A, (size_t)BT * H);
            matmul(a->x_mid, a->y, P(m, l, P_WO)->w, BT, H, H, "aten::mm");
            for (size_t i = 0; i < (size_t)BT * H; i++) a->x_mid[i] += x[i];
            a->xn2 = arena_floats(A, (size_t)BT * H);
            a->mean2 = arena_floats(A, (size_t)BT);
            a->rstd2 = arena_floats(A, (size_t)BT);
            layernorm(a->xn2, a->mean2, a->rstd2, a->x_mid, P(m, l, P_LN2G)->w, P(m, l, P_LN2B)->w, BT, H);
            a->gt = arena_floats(A, (size_t)BT * I);
            a->up = arena_floats(A, (size_t)BT * I);
            a->hh = arena_floats(A, (size_t)BT * I);
            matmul(a->gt, a->xn2, P(m, l, P_WG)->w, BT, H, I, "aten::mm");
            matmul(a->up, a->xn2, P(m, l, P_WU)->w, BT, H, I, "aten::mm");
            for (size_t i = 0; i < (size_t)BT * I; i++) a->hh[i] = a->gt[i] * sigm(a->gt[i]) * a->up[i];
            float *xo = arena_floats(A, (size_t)BT * H);
            matmul(xo, a->hh, P(m, l, P_WD)->w, BT, I, H, "aten::mm");
            for (size_t i = 0; i < (size_t)BT * H; i++) xo[i] += a->x_mid[i];
            x = xo;
            tprof_range_end(mr);
        }
        xlast = x;
        xf = arena_floats(A, (size_t)BT * H);
        meanf = arena_floats(A, (size_t)BT);
        rstdf = arena_floats(A, (size_t)BT);
        layernorm(xf, meanf, rstdf, x, P(m, -1, P_LNF_G)->w, P(m, -1, P_LNF_B)->w, BT, H);
        logits = arena_floats(A, (size_t)BT * V);
        matmul(logits, xf, P(m, -1, P_LM)->w, BT, H, V, "aten::mm");
        tprof_range r = tprof_op_begin("aten::cross_entropy_loss", NULL, NULL, 0);
        for (int i = 0; i < BT; i++) { /* logits become dlogits in place */
            float *li = logits + (size_t)i * V, mx = -1e30f, sum = 0;
            for (int j = 0; j < V; j++) mx = li[j] > mx ? li[j] : mx;
            for (int j = 0; j < V; j++) sum += li[j] = expf(li[j] - mx);
            for (int j = 0; j < V; j++) li[j] /= sum;
            loss -= log((double)li[targets[i]] + 1e-30);
            li[targets[i]] -= 1.0f;
            for (int j = 0; j < V; j++) li[j] /= (float)BT;
        }
        loss /= BT;
        tprof_range_end(r);
    }
    {
        TPROF_RANGE("backward");
        for (int i = 0; i < m->np; i++) memset(m->p[i].g, 0, m->p[i].n * sizeof(float));
        float *dxf = arena_floats(A, (size_t)BT * H);
        matmul_back(dxf, P(m, -1, P_LM)->g, logits, xf, P(m, -1, P_LM)->w, BT, H, V);
        float *dx = arena_floats(A, (size_t)BT * H);
        layernorm_back(dx, P(m, -1, P_LNF_G)->g, P(m, -1, P_LNF_B)->g, dxf, xlast, meanf, rstdf, P(m, -1, P_LNF_G)->w,
                       BT, H);
        for (int l = L - 1; l >= 0; l--) {
            layer_act *a = &la[l];
            /* MLP: x_out = x_mid + hh @ Wd */
            float *dhh = arena_floats(A, (size_t)BT * I);
            matmul_back(dhh, P(m, l, P_WD)->g, dx, a->hh, P(m, l, P_WD)->w, BT, I, H);
            float *dgt = arena_floats(A, (size_t)BT * I), *dup = arena_floats(A, (size_t)BT * I);
            for (size_t i = 0; i < (size_t)BT * I; i++) {
                float gg = a->gt[i], s = sigm(gg);
                dup[i] = dhh[i] * gg * s;
                dgt[i] = dhh[i] * a->up[i] * s * (1 + gg * (1 - s));
            }
            float *dxn2 = arena_floats(A, (size_t)BT * H);
            matmul_back(dxn2, P(m, l, P_WG)->g, dgt, a->xn2, P(m, l, P_WG)->w, BT, H, I);
            matmul_back(dxn2, P(m, l, P_WU)->g, dup, a->xn2, P(m, l, P_WU)->w, BT, H, I);
            float *dmid = arena_floats(A, (size_t)BT * H);
            memcpy(dmid, dx, (size_t)BT * H * sizeof *dmid);
            layernorm_back(dmid, P(m, l, P_LN2G)->g, P(m, l, P_LN2B)->g, dxn2, a->x_mid, a->mean2, a->rstd2,
                           P(m, l, P_LN2G)->w, BT, H);
            /* attention: x_mid = x_in + y @ Wo */
            float *dy = arena_floats(A, (size_t)BT * H);
            matmul_back(dy, P(m, l, P_WO)->g, dmid, a->y, P(m, l, P_WO)->w, BT, H, H);
            float *dq = arena_floats(A, (size_t)BT * H), *dk = arena_floats(A, (size_t)BT * H),
                  *dv = arena_floats(A, (size_t)BT * H);
            attention_back(dq, dk, dv, dy, a->att, a->q, a->k, a->v, m);
            float *dxn1 = arena_floats(A, (size_t)BT * H);
            matmul_back(dxn1, P(m, l, P_WQ)->g, dq, a->xn1, P(m, l, P_WQ)->w, BT, H, H);
            matmul_back(dxn1, P(m, l, P_WK)->g, dk, a->xn1, P(m, l, P_WK)->w, BT, H, H);
            matmul_back(dxn1, P(m, l, P_WV)->g, dv, a->xn1, P(m, l, P_WV)->w, BT, H, H);
            float *dxin = arena_floats(A, (size_t)BT * H);
            memcpy(dxin, dmid, (size_t)BT * H * sizeof *dxin);
            layernorm_back(dxin, P(m, l, P_LN1G)->g, P(m, l, P_LN1B)->g, dxn1, a->x_in, a->mean1, a->rstd1,
                           P(m, l, P_LN1G)->w, BT, H);
            dx = dxin;
        }
        tprof_range r = tprof_op_begin("aten::embedding_backward", NULL, NULL, 0);
        float *gte = P(m, -1, P_WTE)->g, *gpe = P(m, -1, P_WPE)->g;
        for (int i = 0; i < BT; i++)
            for (int j = 0; j < H; j++) {
                gte[(size_t)tokens[i] * H + j] += dx[(size_t)i * H + j];
                gpe[(size_t)(i % T) * H + j] += dx[(size_t)i * H + j];
            }
        tprof_range_end(r);
    }
    free(la);
    return (float)loss;
}

static double adamw(model *m, int64_t step)
{
    TPROF_RANGE("optimizer");
    double norm = 0;
    for (int i = 0; i < m->np; i++)
        for (size_t k = 0; k < m->p[i].n; k++) norm += (double)m->p[i].g[k] * m->p[i].g[k];
    norm = sqrt(norm);
    float clip = norm > 1.0 ? (float)(1.0 / norm) : 1.0f; /* clip the global norm at 1 */
    const float b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, lr = (float)m->o.lr, wd = (float)m->o.wd;
    float c1 = 1.0f - powf(b1, (float)step), c2 = 1.0f - powf(b2, (float)step);
    tprof_range r = tprof_op_begin("Optimizer.step#AdamW.step", NULL, NULL, 0);
    for (int i = 0; i < m->np; i++) {
        param *p = &m->p[i];
        for (size_t k = 0; k < p->n; k++) {
            float gk = p->g[k] * clip;
            p->m[k] = b1 * p->m[k] + (1 - b1) * gk;
            p->v[k] = b2 * p->v[k] + (1 - b2) * gk * gk;
            float upd = (p->m[k] / c1) / (sqrtf(p->v[k] / c2) + eps);
            p->w[k] -= lr * (upd + (p->decay ? wd * p->w[k] : 0));
        }
    }
    tprof_range_end(r);
    return norm;
}

/* Finite differences against the backward pass on a few entries of every
 * tensor. The forward pass is float: the loss carries about 1e-7 relative
 * noise, i.e. about 3e-5 in a central difference with eps = 1e-2, so an entry
 * agrees within 2% or within 1e-4 absolute. The
 * largest gradients of each tensor are checked (they stand above the noise),
 * and one entry at random. Returns the number of mismatches. */
static int gradcheck(model *m, const uint8_t *tok, const uint8_t *tgt)
{
    train_step(m, tok, tgt);
    arena_reset(&m->act);
    size_t total = 0;
    for (int i = 0; i < m->np; i++) total += m->p[i].n;
    float *g0 = malloc(total * sizeof *g0);
    for (int i = 0, off = 0; i < m->np; off += (int)m->p[i].n, i++)
        memcpy(g0 + off, m->p[i].g, m->p[i].n * sizeof *g0);
    int bad = 0, checked = 0;
    size_t picked[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX };
    uint64_t r = 42;
    size_t off = 0;
    for (int i = 0; i < m->np; off += m->p[i].n, i++) {
        picked[0] = picked[1] = picked[2] = SIZE_MAX;
        for (int k = 0; k < 4; k++) {
            /* the largest gradients (their differences stand above the noise), and one at random */
            size_t j = (size_t)(rnd(&r) % m->p[i].n);
            if (k < 3) {
                for (size_t q = 0; q < m->p[i].n; q++) {
                    float a = fabsf(g0[off + q]);
                    int taken = 0;
                    for (int z = 0; z < k; z++) taken |= picked[z] == q;
                    if (!taken && a > fabsf(g0[off + j])) j = q;
                }
                picked[k] = j;
            }
            /* a smaller step where the gradient is large: less curvature error, noise still far below */
            float w = m->p[i].w[j], eps = fabsf(g0[off + j]) > 1e-2f ? 1e-3f : 1e-2f;
            m->p[i].w[j] = w + eps;
            float lp = train_step(m, tok, tgt);
            arena_reset(&m->act);
            m->p[i].w[j] = w - eps;
            float lm = train_step(m, tok, tgt);
            arena_reset(&m->act);
            m->p[i].w[j] = w;
            double num = ((double)lp - lm) / (2.0 * eps), ana = g0[off + j];
            double err = fabs(num - ana), scale = fabs(num) > fabs(ana) ? fabs(num) : fabs(ana);
            int ok = err < 1e-4 || err / scale < 0.02;
            checked++;
            if (!ok) {
                bad++;
                printf("gradcheck: tensor %d entry %zu: backward %.6g, finite difference %.6g\n", i, j, ana, num);
            }
        }
    }
    printf("gradcheck: %d of %d entries agree\n", checked - bad, checked);
    free(g0);
    return bad;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = n > 0 ? malloc((size_t)n) : NULL;
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = p ? (size_t)n : 0;
    return p;
}

static int run(int argc, char **argv);

int main(int argc, char **argv)
{
    dp_init(&argc, &argv);
    int rc = run(argc, argv);
    dp_finish();
    return rc;
}

static int run(int argc, char **argv)
{
    opts o = { .n_layer = 2, .n_embd = 64, .n_head = 4, .inter = 128, .seq = 64, .batch = 8, .max_steps = 20,
               .resume_step = 0, .seed = 1, .lr = 3e-3, .wd = 0.01, .peak_tflops = 1.0, .slow_rank = -1 };
    snprintf(o.data, sizeof o.data, "examples/tiny_gpt/corpus.txt");
    tprof_profile_config cfg;
    tprof_config_default(&cfg);
    snprintf(cfg.prefix, sizeof cfg.prefix, "tiny_gpt");
    char err[1200];
    if (tprof_config_from_args(&cfg, &argc, argv, set_opt, &o, err, sizeof err)) {
        fprintf(stderr, "tiny_gpt: %s\n", err);
        return 2;
    }
    if (argc > 1) {
        fprintf(stderr, "tiny_gpt: unknown argument '%s'\nusage: tiny_gpt [config.yaml] [--model.*=v] [--train.*=v] "
                        "[--train.profile.*=v]\n", argv[1]);
        return 2;
    }
    if (o.n_head < 1 || o.n_embd % o.n_head || o.seq < 2 || o.batch < 1 || o.n_layer < 1 || o.inter < 1) {
        fprintf(stderr, "tiny_gpt: model.n_embd must be a multiple of model.n_head; sizes must be positive\n");
        return 2;
    }
    size_t dlen;
    uint8_t *data = read_file(o.data, &dlen);
    if (!data || dlen < (size_t)o.seq + 2) {
        fprintf(stderr, "tiny_gpt: %s: cannot read the corpus (or shorter than one sequence)\n", o.data);
        free(data);
        return 2;
    }
    if (tprof_profiler_start(&cfg, err, sizeof err)) {
        fprintf(stderr, "tiny_gpt: %s\n", err);
        free(data);
        return 2;
    }
    tprof_thread_name("trainer");
    model m = { .o = o };
    model_init(&m);

    /* the step meter: this model is llama-shaped, so the library's formula is exact */
    char js[512];
    snprintf(js, sizeof js,
             "{\"model_type\":\"llama\",\"hidden_size\":%d,\"intermediate_size\":%d,\"num_hidden_layers\":%d,"
             "\"num_attention_heads\":%d,\"num_key_value_heads\":%d,\"vocab_size\":%d}",
             m.H, m.I, m.L, m.nh, m.nh, m.V);
    tprof_model *fm = NULL;
    if (tprof_model_parse(&fm, js, strlen(js), "tiny_gpt", err, sizeof err)) {
        fprintf(stderr, "tiny_gpt: %s\n", err);
        return 1;
    }
    /* promised FLOPs: peak x world size; the global batch: every rank's */
    tprof_meter *meter = tprof_meter_new(fm, o.peak_tflops, dp_world, (int64_t)m.B * dp_world);
    /* our own count, to show it agrees: 6*N*T + 12*B*T^2*hd*nh*L */
    double N = (3.0 * m.H * m.I + 4.0 * m.H * m.H) * m.L + (double)m.V * m.H;
    double own = 6 * N * m.B * m.T + 12.0 * m.B * (double)m.T * m.T * m.hd * m.nh * m.L;
    size_t nparams = 0;
    for (int i = 0; i < m.np; i++) nparams += m.p[i].n;
    size_t nw;
    float *weights = span(&m, 0, &nw);
    if (dp_world > 1) { /* rank 0's initial weights everywhere, whatever each rank's seed */
        TPROF_RANGE("broadcast_parameters");
        tprof_range c = tprof_comm_begin("broadcast", "Float", (int64_t)nw, dp_world);
        dp_bcast_floats(weights, nw);
        tprof_range_end(c);
    }
    if (dp_rank == 0)
        printf("tiny_gpt: %d layers, n_embd %d, %d heads, %zu parameters (N = %.0f without embeddings and norms), "
           "%.4g FLOPs/step\n",
           m.L, m.H, m.nh, nparams, N, own);
    if (dp_rank == 0 && dp_world > 1)
        printf("tiny_gpt: data-parallel over %d ranks, %d sequences per rank per step\n", dp_world, m.B);

    uint8_t *tok = malloc((size_t)m.B * m.T), *tgt = malloc((size_t)m.B * m.T);
    int64_t *seqlens = malloc((size_t)m.B * sizeof *seqlens);
    uint64_t drng = 0x1234567ULL + (uint64_t)o.seed;
    int rc = 0, prof_failed = 0;
    for (int64_t step = o.resume_step + 1; step <= o.resume_step + o.max_steps; step++) {
        tprof_step_begin(step);
        double t0 = now_s();
        {
            TPROF_RANGE("data");
            /* the shard: every rank draws the whole global batch (B x world
             * offsets, one stream from the seed) and keeps its own B */
            for (int gb = 0; gb < m.B * dp_world; gb++) {
                size_t off = (size_t)(rnd(&drng) % (dlen - (size_t)m.T - 1));
                int b = gb - m.B * dp_rank;
                if (b < 0 || b >= m.B) continue;
                memcpy(tok + (size_t)b * m.T, data + off, (size_t)m.T);
                memcpy(tgt + (size_t)b * m.T, data + off + 1, (size_t)m.T);
                seqlens[b] = m.T;
            }
            tprof_meter_add(meter, seqlens, (size_t)m.B, NULL, 0);
        }
        float local_loss = train_step(&m, tok, tgt);
        if (dp_rank == o.slow_rank && o.slow_ms > 0) { /* a straggler on purpose: the others wait for it */
            TPROF_RANGE("debug_slow_rank");
            struct timespec ts = { (time_t)(o.slow_ms / 1000), (long)(fmod(o.slow_ms, 1000) * 1e6) };
            while (nanosleep(&ts, &ts) && errno == EINTR) {}
        }
        if (dp_world > 1) { /* the mean gradient over ranks, as DDP: every replica takes the same update */
            TPROF_RANGE("allreduce_gradients");
            size_t ng;
            float *g = span(&m, 1, &ng);
            /* as c10d records it, so trainprof comm sees the call and its bytes */
            tprof_range c = tprof_comm_begin("allreduce", "Float", (int64_t)ng, dp_world);
            dp_sum_floats(g, ng);
            tprof_range_end(c);
            for (size_t i = 0; i < ng; i++) g[i] /= (float)dp_world;
        }
        double gn = adamw(&m, step - o.resume_step);
        arena_reset(&m.act);
        double dt = now_s() - t0;
        /* the meter's three per-rank numbers summed over ranks, the loss averaged (the reference's all_reduce) */
        double sums[4] = { 0, 0, 0, local_loss };
        if (tprof_meter_local(meter, dt, sums, err, sizeof err)) {
            fprintf(stderr, "tiny_gpt: meter: %s\n", err);
            rc = 1;
            break;
        }
        if (dp_world > 1) {
            TPROF_RANGE("allreduce_metrics");
            tprof_range c = tprof_comm_begin("allreduce", "Double", 4, dp_world);
            dp_sum_doubles(sums, 4);
            tprof_range_end(c);
        }
        double loss = sums[3] / dp_world;
        tprof_counter("loss", loss);
        if (dp_world > 1) tprof_counter("local_loss", local_loss);
        if (tprof_step_end(step)) prof_failed = 1; /* said by the library; training goes on */
        tprof_meter_metrics mm;
        tprof_meter_finish(meter, dt, sums, &mm);
        if (o.log_ranks) /* one write per line, so mpirun keeps the ranks' lines whole */
            printf("{\"rank\": %d, \"step\": %lld, \"local_loss\": %.9g, \"weights\": \"%016llx\"}\n", dp_rank,
                   (long long)step, local_loss, (unsigned long long)weights_hash(&m));
        if (dp_rank == 0) {
            const char *xn[4] = { "training/total_loss", "training/grad_norm", "training/lr", "step_time(s)" };
            double xv[4] = { loss, gn, o.lr, dt };
            char line[2048];
            tprof_step_line(line, sizeof line, step, &mm, xn, xv, 4, o.log_json);
            printf("%s\n", line);
        }
        fflush(stdout);
    }
    if (o.gradcheck && !rc) { /* after the training steps, when attention is no longer uniform */
        for (int b = 0; b < m.B; b++) {
            size_t off = (size_t)(rnd(&drng) % (dlen - (size_t)m.T - 1));
            memcpy(tok + (size_t)b * m.T, data + off, (size_t)m.T);
            memcpy(tgt + (size_t)b * m.T, data + off + 1, (size_t)m.T);
        }
        rc = gradcheck(&m, tok, tgt) ? 1 : 0;
    }
    if (tprof_profiler_stop()) prof_failed = 1;
    if (prof_failed) {
        fprintf(stderr, "tiny_gpt: the profile could not be written (see above)\n");
        if (!rc) rc = 3;
    }
    tprof_meter_free(meter);
    tprof_model_free(fm);
    free(tok);
    free(tgt);
    free(seqlens);
    free(data);
    arena_free(&m.act);
    arena_free(&m.persist);
    free(m.p);
    return rc;
}
