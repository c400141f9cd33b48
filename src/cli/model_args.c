/* What the flops and mfu commands share: --config, --seqlens, --images,
 * --freeze-vit, and the model they name. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/error.h"

/* "4096,4096", "1024x4" (four of 1024), or a mix: "1024x2,512". */
static int parse_lengths(const char *flag, const char *s, int64_t **out, size_t *n)
{
    free(*out);
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    const char *p = s;
    for (;;) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        long long rep = 1;
        if (end != p && *end == 'x') {
            const char *r = end + 1;
            rep = strtoll(r, &end, 10);
            if (end == r || rep < 1 || rep > 1000000) end = (char *)p;
        }
        if (end == p || errno || v < 0 || v > (1LL << 40) || (*end != ',' && *end)) {
            cli_error("%s '%s': expected non-negative token counts, e.g. 4096,4096 or 1024x4", flag, s);
            free(*out);
            *out = NULL;
            *n = 0;
            return -1;
        }
        for (long long i = 0; i < rep; i++) {
            if (*n == cap) {
                cap = cap ? 2 * cap : 16;
                int64_t *q = realloc(*out, cap * sizeof *q);
                if (!q) abort();
                *out = q;
            }
            (*out)[(*n)++] = v;
        }
        if (!*end) return 0;
        p = end + 1;
    }
}

int cli_model_option(int c, const char *arg, cli_model_args *a)
{
    switch (c) {
    case CLI_OPT_CONFIG: a->config = arg; return 1;
    case CLI_OPT_SEQLENS: return parse_lengths("--seqlens", arg, &a->seqlens, &a->nseqs) ? -1 : 1;
    case CLI_OPT_IMAGES: return parse_lengths("--images", arg, &a->images, &a->nimages) ? -1 : 1;
    case CLI_OPT_FREEZE_VIT: a->freeze_vit = 1; return 1;
    default: return 0;
    }
}

int cli_model_load(cli_model_args *a)
{
    if (!a->config) {
        cli_error("--config CONFIG.json is required (a Hugging Face config.json)");
        return EXIT_USAGE;
    }
    if (!a->seqlens) {
        cli_error("--seqlens is required: the step's tokens per sequence on one rank, e.g. 4096,4096");
        return EXIT_USAGE;
    }
    char err[1024];
    int rc = tprof_model_load(&a->model, a->config, err, sizeof err);
    if (rc) {
        cli_error("%s", err);
        return EXIT_INPUT; /* unreadable, not JSON, or an unknown model_type */
    }
    tprof_flops_input in = { .seqlens = a->seqlens, .nseqs = a->nseqs, .images = a->images,
                             .nimages = a->nimages, .freeze_vit = a->freeze_vit };
    rc = tprof_flops_estimate(a->model, &in, &a->flops, err, sizeof err);
    if (rc) {
        cli_error("%s", err);
        return EXIT_INPUT;
    }
    if (a->nimages && a->flops.params_vision == 0)
        cli_warn("%s: model_type %s has no vision tower in this config; --images count nothing", a->config,
                 tprof_model_type(a->model));
    return EXIT_OK;
}

void cli_model_free(cli_model_args *a)
{
    tprof_model_free(a->model);
    free(a->seqlens);
    free(a->images);
}

void cli_jw_count(tprof_jw *w, const char *key, double v)
{
    /* whole numbers that a double holds exactly print as integers */
    if (v == floor(v) && fabs(v) < 9007199254740992.0) tprof_jw_kint(w, key, (int64_t)v);
    else tprof_jw_kdouble(w, key, v);
}
