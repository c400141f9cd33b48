/* trainprof temporal: idle, compute and non-compute time of the GPU, per rank. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "trainprof/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: trainprof temporal [options] TRACE...\n\n"
            "Temporal breakdown of each trace's GPU time, as Holistic Trace Analysis\n"
            "defines it: over the kernel span (first GPU start to last GPU end), idle\n"
            "time (no GPU work), compute time (compute kernels) and non-compute time\n"
            "(communication and memory not under compute). With two or more ProfilerSteps\n"
            "the GPU work launched in the last step is left out.\n\n"
            "HTA's own figures for the trace loaded alone (its event set, last-step\n"
            "filter and rounding: docs/METRICS.md) come beside them: hta_* in JSON and\n"
            "CSV; in the table a note where they differ by more than 0.5 pp, and why.\n\n"
            "options:\n"
            "  --keep-last-step      count the last step's work too\n"
            "  --definition D        the table's headline: trainprof (default) or hta\n" CLI_COMMON_HELP);
}

typedef struct {
    tprof_temporal_opts to;
    tprof_definition headline;
} temporal_ctx;

static int option(void *vctx, int c, const char *arg)
{
    temporal_ctx *ctx = vctx;
    if (c == 'k') {
        ctx->to.keep_last_step = 1;
        return 0;
    }
    if (c != 'D') return -1;
    return cli_parse_definition(arg, &ctx->headline) ? -1 : 0;
}

static int analyse(void *vctx, const tprof_trace *t, tprof_result **out)
{
    const temporal_ctx *ctx = vctx;
    tprof_temporal_result r;
    int rc = tprof_temporal(t, &ctx->to, &r);
    return rc ? rc : tprof_temporal_tables(&r, ctx->headline, out);
}

int cmd_temporal(int argc, char **argv)
{
    static const struct option opts[] = { { "keep-last-step", no_argument, 0, 'k' },
                                          { "definition", required_argument, 0, 'D' },
                                          { 0, 0, 0, 0 } };
    static const cli_spec spec = {
        .help = help, .keep = TPROF_TEMPORAL_KEEP, .opts = opts, .option = option,
        .result = &tprof_temporal_desc, .analyse = analyse,
    };
    temporal_ctx ctx = { 0 };
    return cli_run(argc, argv, &spec, &ctx);
}
