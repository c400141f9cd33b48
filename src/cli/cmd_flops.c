/* trainprof flops: FLOPs of one training step from a model config. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/error.h"

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


static int print_table(const tprof_result *r)
{
    const tprof_rows *top = tprof_result_top_c(r), *parts = tprof_result_table_c(r, 0);
    int64_t nseqs = tprof_rows_int(top, 0, "sequences"), nimages = tprof_rows_int(top, 0, "images");
    printf("config       %s\n", tprof_rows_at(top, 0, "config")->v.s);
    printf("model_type   %s\n", tprof_rows_at(top, 0, "model_type")->v.s);
    printf("tokens       %.0f in %" PRId64 " sequence%s", tprof_rows_real(top, 0, "tokens"), nseqs, nseqs == 1 ? "" : "s");
    if (nimages)
        printf("; %.0f image patches in %" PRId64 " image%s%s", tprof_rows_real(top, 0, "image_tokens"), nimages, nimages == 1 ? "" : "s",
               tprof_rows_int(top, 0, "freeze_vit") ? " (vision tower frozen)" : "");
    printf("\nparameters   %.0f active in the text tower (LM head included, embedding not)", tprof_rows_real(top, 0, "params_active"));
    if (tprof_rows_real(top, 0, "params_vision") > 0) printf(", %.0f in the vision tower", tprof_rows_real(top, 0, "params_vision"));
    if (!tprof_rows_at(top, 0, "lora_rank")->null) {
        int64_t nt = tprof_rows_int(top, 0, "lora_targets"), np = tprof_rows_int(top, 0, "lora_expert_targets");
        printf("\nLoRA         rank %" PRId64 ", %" PRId64 " target module%s, %" PRId64
               " routed-expert target%s: %.0f adapter parameters per token (base forward and backward only)",
               tprof_rows_int(top, 0, "lora_rank"), nt, nt == 1 ? "" : "s", np, np == 1 ? "" : "s", tprof_rows_real(top, 0, "params_lora"));
    }
    printf("\n\n");
    static const char *const hdr[] = { "part", "FLOPs", "TFLOPs", "share" };
    tprof_table *t = tprof_table_new(4, hdr, "lrrr");
    if (!t) return TPROF_ENOMEM;
    static const char *const names[] = { "linear", "attention", "vision", "total" };
    double total = tprof_rows_real(parts, 0, "total");
    for (size_t i = 0; i < 4; i++) {
        char a1[40], a2[40], a3[40];
        double v = tprof_rows_real(parts, 0, names[i]);
        snprintf(a1, sizeof a1, "%.0f", v);
        snprintf(a2, sizeof a2, "%.6f", v / 1e12);
        snprintf(a3, sizeof a3, "%.1f%%", total > 0 ? 100 * v / total : 0.0);
        const char *row[] = { names[i], a1, a2, a3 };
        tprof_table_row(t, row);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    return 0;
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
    optind = 0; /* 0, not 1: getopt starts afresh, its ordering mode too (report runs commands in turn) */
    while (!rc && (c = cli_getopt(argc, argv, "h", longopts)) != -1) {
        int k = cli_model_option(c, optarg, &a);
        if (k) {
            if (k < 0) rc = EXIT_USAGE;
        } else if (c == 'f') {
            if (cli_parse_format(optarg, &fmt)) {
                cli_error("--format '%s': expected table, csv or json", optarg);
                rc = EXIT_USAGE;
            }
        } else if (c == 'c') {
            if (cli_set_color(optarg)) rc = EXIT_USAGE;
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
    tprof_result *r = NULL;
    if (!rc) {
        tprof_flops_input in = { .seqlens = a.seqlens, .nseqs = a.nseqs, .images = a.images, .nimages = a.nimages,
                                 .freeze_vit = a.freeze_vit, .lora = a.has_lora ? &a.lora : NULL };
        int e = tprof_flops_tables(a.config, a.model, &in, &a.flops, &r);
        if (!e) e = fmt == FMT_TABLE ? print_table(r) : cli_print_whole(r, fmt, 0);
        if (e) {
            cli_error("%s", tprof_strerror(e));
            rc = EXIT_INPUT;
        }
    }
    tprof_result_free(r);
    cli_model_free(&a);
    return rc;
}
