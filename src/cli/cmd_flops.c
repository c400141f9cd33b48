/* trainprof flops: FLOPs of one training step from a model config. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void help(FILE *f)
{
    fprintf(f, "usage: trainprof flops --config CONFIG.json --seqlens LIST [options]\n\n"
               "FLOPs of one training step (forward and backward) on one rank, split into the\n"
               "text tower's linear layers, attention and the vision tower, with the parameter\n"
               "counts behind them (VeOmni's formulas; docs/METRICS.md, \"FLOPs and MFU\").\n\n"
               "options:\n" CLI_MODEL_HELP
               "  --format table|csv|json\n"
               "  --color auto|always|never\n");
}

static void print_table(const cli_model_args *a)
{
    const tprof_flops *f = &a->flops;
    printf("config       %s\n", a->config);
    printf("model_type   %s\n", tprof_model_type(a->model));
    printf("tokens       %.0f in %zu sequence%s", f->tokens, a->nseqs, a->nseqs == 1 ? "" : "s");
    if (a->nimages) printf("; %.0f image patches in %zu image%s%s", f->image_tokens, a->nimages,
                           a->nimages == 1 ? "" : "s", a->freeze_vit ? " (vision tower frozen)" : "");
    printf("\nparameters   %.0f active in the text tower (LM head included, embedding not)", f->params_active);
    if (f->params_vision > 0) printf(", %.0f in the vision tower", f->params_vision);
    if (a->has_lora)
        printf("\nLoRA         rank %lld, %zu target module%s, %zu routed-expert target%s: %.0f adapter parameters "
               "per token (base forward and backward only)",
               (long long)a->lora.r, a->lora.ntargets, a->lora.ntargets == 1 ? "" : "s", a->lora.nparams,
               a->lora.nparams == 1 ? "" : "s", f->params_lora);
    printf("\n\n");
    static const char *const hdr[] = { "part", "FLOPs", "TFLOPs", "share" };
    tprof_table *t = tprof_table_new(4, hdr, "lrrr");
    if (!t) return;
    const struct {
        const char *name;
        double v;
    } parts[] = { { "linear", f->linear }, { "attention", f->attention }, { "vision", f->vision },
                  { "total", f->total } };
    for (size_t i = 0; i < 4; i++) {
        char a1[40], a2[40], a3[40];
        snprintf(a1, sizeof a1, "%.0f", parts[i].v);
        snprintf(a2, sizeof a2, "%.6f", parts[i].v / 1e12);
        snprintf(a3, sizeof a3, "%.1f%%", f->total > 0 ? 100 * parts[i].v / f->total : 0.0);
        const char *row[] = { parts[i].name, a1, a2, a3 };
        tprof_table_row(t, row);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
}

static void print_csv(const cli_model_args *a)
{
    const tprof_flops *f = &a->flops;
    printf("key,value\n");
    printf("config,");
    tprof_csv_field(stdout, a->config);
    printf("\nmodel_type,%s\n", tprof_model_type(a->model));
    printf("sequences,%zu\ntokens,%.0f\nimages,%zu\nimage_tokens,%.0f\nfreeze_vit,%d\n", a->nseqs, f->tokens,
           a->nimages, f->image_tokens, a->freeze_vit);
    printf("params_active,%.0f\nparams_vision,%.0f\n", f->params_active, f->params_vision);
    if (a->has_lora) printf("lora_rank,%lld\nparams_lora,%.0f\n", (long long)a->lora.r, f->params_lora);
    printf("flops_linear,%.17g\nflops_attention,%.17g\nflops_vision,%.17g\nflops_vision_attention,%.17g\n"
           "flops_total,%.17g\n",
           f->linear, f->attention, f->vision, f->vision_attention, f->total);
}

static void print_json(const cli_model_args *a)
{
    const tprof_flops *f = &a->flops;
    tprof_jw w;
    tprof_jw_init(&w, stdout);
    tprof_jw_obj(&w);
    tprof_jw_kstr(&w, "config", a->config);
    tprof_jw_kstr(&w, "model_type", tprof_model_type(a->model));
    tprof_jw_kuint(&w, "sequences", a->nseqs);
    cli_jw_count(&w, "tokens", f->tokens);
    tprof_jw_kuint(&w, "images", a->nimages);
    cli_jw_count(&w, "image_tokens", f->image_tokens);
    tprof_jw_kbool(&w, "freeze_vit", a->freeze_vit);
    cli_jw_count(&w, "params_active", f->params_active);
    cli_jw_count(&w, "params_vision", f->params_vision);
    if (a->has_lora) {
        tprof_jw_kint(&w, "lora_rank", a->lora.r);
        cli_jw_count(&w, "params_lora", f->params_lora);
    }
    tprof_jw_key(&w, "flops");
    tprof_jw_obj(&w);
    cli_jw_count(&w, "linear", f->linear);
    cli_jw_count(&w, "attention", f->attention);
    cli_jw_count(&w, "vision", f->vision);
    cli_jw_count(&w, "vision_attention", f->vision_attention);
    cli_jw_count(&w, "total", f->total);
    tprof_jw_obj_end(&w);
    tprof_jw_obj_end(&w);
}

int cmd_flops(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_MODEL_LONGOPTS,
        { "format", required_argument, 0, 'f' },
        { "color", required_argument, 0, 'c' },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    cli_model_args a = { 0 };
    cli_format fmt = FMT_TABLE;
    int c, rc = EXIT_OK;
    optind = 1;
    while (!rc && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int k = cli_model_option(c, optarg, &a);
        if (k) {
            if (k < 0) rc = EXIT_USAGE;
        } else if (c == 'f') {
            if (cli_parse_format(optarg, &fmt)) {
                cli_error("--format '%s': expected table, csv or json", optarg);
                rc = EXIT_USAGE;
            }
        } else if (c == 'c') {
            cli_set_color(optarg);
        } else if (c == 'h') {
            help(stdout);
            cli_model_free(&a);
            return EXIT_OK;
        } else
            rc = EXIT_USAGE;
    }
    if (!rc && optind < argc) {
        cli_error("flops takes no positional arguments ('%s')", argv[optind]);
        rc = EXIT_USAGE;
    }
    if (!rc) rc = cli_model_load(&a);
    if (!rc) {
        if (fmt == FMT_JSON) print_json(&a);
        else if (fmt == FMT_CSV) print_csv(&a);
        else print_table(&a);
    }
    cli_model_free(&a);
    return rc;
}
