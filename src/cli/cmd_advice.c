/* trainprof advice: findings that cross a documented threshold, with their
 * numbers and the usual remedy. */
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
            "usage: trainprof advice [options] TRACE...\n\n"
            "One line per finding that crosses a documented threshold (docs/METRICS.md),\n"
            "with the numbers behind it and the usual remedy: unfused attention, exposed\n"
            "communication, CPU-bound launches, data loading in the step, fp32 GEMMs,\n"
            "host syncs inside steps, uneven ranks. Give every rank's trace for the\n"
            "cross-rank rules.\n\noptions:\n" CLI_COMMON_HELP);
}

int cli_print_findings(const tprof_rows *findings)
{
    size_t n = tprof_rows_count(findings);
    if (n == 0) {
        printf("no finding crosses its threshold\n");
        return 0;
    }
    const tprof_table_desc *d = tprof_rows_desc(findings);
    int rule = tprof_table_col(d, "rule"), rank = tprof_table_col(d, "rank"), ev = tprof_table_col(d, "evidence"),
        remedy = tprof_table_col(d, "remedy");
    for (size_t i = 0; i < n; i++) {
        const tprof_cell *rk = tprof_rows_cell(findings, i, (size_t)rank);
        char who[32] = "all ranks";
        if (!rk->null) snprintf(who, sizeof who, "rank %" PRId64, rk->v.i);
        printf("- [%s] %s: %s\n    -> %s\n", tprof_rows_cell(findings, i, (size_t)rule)->v.s, who,
               tprof_rows_cell(findings, i, (size_t)ev)->v.s, tprof_rows_cell(findings, i, (size_t)remedy)->v.s);
    }
    return 0;
}

static int print(void *ctx, const tprof_result *r, const char *label, const char *path)
{
    (void)ctx, (void)label, (void)path;
    return cli_print_findings(tprof_result_table_c(r, 0));
}

/* Each trace: its facts (for the ranks) and its own findings. */
static int analyse(void *ctx, const tprof_trace *t, tprof_result **out)
{
    (void)ctx;
    int rc = tprof_rank_facts(t, &out[0]);
    return rc ? rc : tprof_advise_rank(t, &out[1]);
}

int cli_advice_reduce(const tprof_result *const *facts, const tprof_result *const *findings, size_t n,
                      tprof_result **out)
{
    tprof_ranks_result *ranks;
    int rc = tprof_ranks_reduce(facts, n, &ranks);
    if (rc) return rc;
    rc = tprof_advise_reduce(findings, ranks, out);
    tprof_ranks_free(ranks);
    return rc;
}

static int reduce(void *ctx, const tprof_result *const *parts, size_t n, tprof_result **out)
{
    (void)ctx;
    const tprof_result **facts = malloc((n ? n : 1) * sizeof *facts), **findings = malloc((n ? n : 1) * sizeof *findings);
    int rc = facts && findings ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        facts[i] = parts[2 * i];
        findings[i] = parts[2 * i + 1];
    }
    if (!rc) rc = cli_advice_reduce(facts, findings, n, out);
    free(facts);
    free(findings);
    return rc;
}

int cmd_advice(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = TPROF_ADVICE_KEEP, .result = &tprof_advice_desc, .analyse = analyse, .nparts = 2,
        .reduce = reduce, .print = print,
    };
    return cli_run(argc, argv, &spec, NULL);
}
