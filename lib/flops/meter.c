/* The step meter: VeOmni's EnvironMeter over tprof_flops_estimate. */
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "flops_internal.h"
#include "trainprof/error.h"

struct tprof_meter {
    const tprof_model *model;
    double peak;
    int world;
    int64_t gbs;
    int64_t *seqs, *imgs;
    size_t nseqs, nimgs, cseqs, cimgs;
    double consumed_tokens, consumed_chunks;
    int freeze_vit;
    const tprof_lora *lora;
};

void tprof_meter_set_training(tprof_meter *mt, int freeze_vit, const tprof_lora *lora)
{
    mt->freeze_vit = freeze_vit;
    mt->lora = lora;
}

tprof_meter *tprof_meter_new(const tprof_model *m, double peak_tflops, int world_size, int64_t global_batch_size)
{
    if (!m || !(peak_tflops > 0) || world_size < 1 || global_batch_size < 0) return NULL;
    tprof_meter *mt = calloc(1, sizeof *mt);
    if (!mt) return NULL;
    mt->model = m;
    mt->peak = peak_tflops;
    mt->world = world_size;
    mt->gbs = global_batch_size;
    return mt;
}

void tprof_meter_free(tprof_meter *mt)
{
    if (!mt) return;
    free(mt->seqs);
    free(mt->imgs);
    free(mt);
}

static int append(int64_t **a, size_t *n, size_t *cap, const int64_t *v, size_t k)
{
    if (k > SIZE_MAX / sizeof **a - *n) return TPROF_ENOMEM;
    if (*n + k > *cap) {
        size_t c = *cap ? *cap : 16;
        while (c < *n + k) c *= 2;
        int64_t *p = realloc(*a, c * sizeof *p);
        if (!p) return TPROF_ENOMEM;
        *a = p;
        *cap = c;
    }
    if (k) memcpy(*a + *n, v, k * sizeof *v);
    *n += k;
    return 0;
}

int tprof_meter_add(tprof_meter *mt, const int64_t *seqlens, size_t n, const int64_t *images, size_t nimages)
{
    for (size_t i = 0; i < n; i++)
        if (seqlens[i] < 0) return TPROF_EUSAGE;
    for (size_t i = 0; i < nimages; i++)
        if (images[i] < 0) return TPROF_EUSAGE;
    int rc = append(&mt->seqs, &mt->nseqs, &mt->cseqs, seqlens, n);
    return rc ? rc : append(&mt->imgs, &mt->nimgs, &mt->cimgs, images, nimages);
}

int tprof_meter_local(tprof_meter *mt, double delta_time, double local[3], char *errbuf, size_t errlen)
{
    if (!(delta_time > 0)) {
        if (errlen) snprintf(errbuf, errlen, "step time %g s: must be positive", delta_time);
        return TPROF_EUSAGE;
    }
    tprof_flops_input in = { .seqlens = mt->seqs, .nseqs = mt->nseqs, .images = mt->imgs, .nimages = mt->nimgs,
                             .freeze_vit = mt->freeze_vit, .lora = mt->lora };
    tprof_flops f;
    int rc = tprof_flops_estimate(mt->model, &in, &f, errbuf, errlen);
    if (rc) return rc;
    local[0] = f.total / delta_time / 1e12;
    local[1] = f.tokens;
    local[2] = (double)mt->nseqs;
    return 0;
}

int tprof_meter_finish(tprof_meter *mt, double delta_time, const double sums[3], tprof_meter_metrics *o)
{
    memset(o, 0, sizeof *o);
    if (!(delta_time > 0)) return TPROF_EUSAGE;
    double promised = mt->peak * mt->world;
    o->flops_achieved_T = sums[0];
    o->flops_promised_T = promised;
    o->mfu = promised > 0 ? sums[0] / promised : 0;
    o->avg_effective_len = mt->gbs > 0 ? sums[1] / (double)mt->gbs : 0;
    o->avg_sample_seq_len = sums[2] > 0 ? sums[1] / sums[2] : 0;
    o->tokens_per_second_M = sums[1] / delta_time / 1e6;
    mt->consumed_tokens += sums[1];
    mt->consumed_chunks += sums[2];
    o->consume_tokens_M = mt->consumed_tokens / 1e6;
    o->consume_tokens_B = mt->consumed_tokens / 1e9;
    o->consumed_chunk_num = mt->consumed_chunks;
    mt->nseqs = mt->nimgs = 0; /* the next step starts empty */
    return 0;
}

int tprof_meter_step(tprof_meter *mt, double delta_time, tprof_meter_metrics *out, char *errbuf, size_t errlen)
{
    double local[3];
    memset(out, 0, sizeof *out);
    int rc = tprof_meter_local(mt, delta_time, local, errbuf, errlen);
    return rc ? rc : tprof_meter_finish(mt, delta_time, local, out);
}

size_t tprof_meter_list(const tprof_meter_metrics *m, const char **names, double *values)
{
    static const char *const keys[TPROF_METER_NMETRICS] = {
        "flops_achieved(T)", "flops_promised(T)", "mfu", "training/avg_effective_len",
        "training/avg_sample_seq_len", "tokens_per_second(M)", "consume_tokens(M)", "consume_tokens(B)",
        "consumed_chunk_num",
    };
    const double v[TPROF_METER_NMETRICS] = {
        m->flops_achieved_T, m->flops_promised_T, m->mfu, m->avg_effective_len, m->avg_sample_seq_len,
        m->tokens_per_second_M, m->consume_tokens_M, m->consume_tokens_B, m->consumed_chunk_num,
    };
    for (size_t i = 0; i < TPROF_METER_NMETRICS; i++) {
        names[i] = keys[i];
        values[i] = v[i];
    }
    return TPROF_METER_NMETRICS;
}
