/* What the flops and mfu commands share: --config, --seqlens, --images,
 * --freeze-vit, and the model they name. */
#include <errno.h>
#include <inttypes.h>
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

/* --lora r=16,targets=q_proj+v_proj,params=mlp.experts.gate_up_proj,moe_mode=shared,bias=all */
static int parse_lora(const char *spec, cli_model_args *a)
{
    free(a->lora_buf);
    memset(&a->lora, 0, sizeof a->lora);
    if (!(a->lora_buf = strdup(spec))) abort();
    size_t nn = 0, cap = sizeof a->lora_names / sizeof *a->lora_names;
    /* targets fill lora_names from the front, params from the back */
    size_t back = cap;
    for (char *item = strtok(a->lora_buf, ","); item; item = strtok(NULL, ",")) {
        char *eq = strchr(item, '=');
        if (!eq) goto bad;
        *eq++ = 0;
        if (!strcmp(item, "r")) {
            char *end;
            long long r = strtoll(eq, &end, 10);
            if (end == eq || *end || r <= 0 || r > 1000000) goto bad;
            a->lora.r = r;
        } else if (!strcmp(item, "targets") || !strcmp(item, "params")) {
            int tgt = item[0] == 't';
            for (char *p = eq, *q; p && *p; p = q) {
                if ((q = strchr(p, '+'))) *q++ = 0;
                if (!*p || nn >= back) goto bad;
                if (tgt) a->lora_names[nn++] = p;
                else a->lora_names[--back] = p;
            }
        } else if (!strcmp(item, "moe_mode")) {
            if (strcmp(eq, "shared") && strcmp(eq, "independent")) goto bad;
            a->lora.moe_shared = !strcmp(eq, "shared");
        } else if (!strcmp(item, "bias")) {
            if (strcmp(eq, "none") && strcmp(eq, "all") && strcmp(eq, "lora_only")) goto bad;
            a->lora.bias_all = !strcmp(eq, "all");
        } else
            goto bad;
    }
    if (a->lora.r <= 0) goto bad;
    a->lora.targets = a->lora_names;
    a->lora.ntargets = nn;
    a->lora.params = a->lora_names + back;
    a->lora.nparams = cap - back;
    a->has_lora = 1;
    return 0;
bad:
    cli_error("--lora '%s': expected r=R[,targets=M+M...][,params=P+P...][,moe_mode=shared|independent]"
              "[,bias=none|all|lora_only], e.g. r=16,targets=q_proj+v_proj", spec);
    return -1;
}

int cli_model_option(int c, const char *arg, cli_model_args *a)
{
    switch (c) {
    case CLI_OPT_CONFIG: a->config = arg; return 1;
    case CLI_OPT_SEQLENS: return parse_lengths("--seqlens", arg, &a->seqlens, &a->nseqs) ? -1 : 1;
    case CLI_OPT_IMAGES: return parse_lengths("--images", arg, &a->images, &a->nimages) ? -1 : 1;
    case CLI_OPT_FREEZE_VIT: a->freeze_vit = 1; return 1;
    case CLI_OPT_LORA: return parse_lora(arg, a) ? -1 : 1;
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
                             .nimages = a->nimages, .freeze_vit = a->freeze_vit,
                             .lora = a->has_lora ? &a->lora : NULL };
    rc = tprof_flops_estimate(a->model, &in, &a->flops, err, sizeof err);
    if (rc) {
        cli_error("%s", err);
        return rc == TPROF_EUSAGE ? EXIT_USAGE : EXIT_INPUT; /* a LoRA config the model does not take */
    }
    if (a->has_lora && a->freeze_vit) cli_warn("--freeze-vit is ignored with --lora (as in VeOmni)");
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
    free(a->lora_buf);
}
