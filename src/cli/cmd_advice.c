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

/* Findings of one rule and remedy on several ranks: one line for them all. */
typedef struct {
    size_t first;  /* its first finding, where the line goes */
    size_t worst;  /* the finding with the highest value: its evidence is shown */
    int64_t *ranks;
    size_t n;
} finding_group;

int cli_print_findings(const tprof_rows *findings, const int64_t *all_ranks, size_t nall)
{
    size_t n = tprof_rows_count(findings);
    if (n == 0) {
        printf("no finding crosses its threshold\n");
        return 0;
    }
    const tprof_table_desc *d = tprof_rows_desc(findings);
    size_t rule = (size_t)tprof_table_col(d, "rule"), rank = (size_t)tprof_table_col(d, "rank"),
           ev = (size_t)tprof_table_col(d, "evidence"), remedy = (size_t)tprof_table_col(d, "remedy"),
           value = (size_t)tprof_table_col(d, "value"), known = (size_t)tprof_table_col(d, "rank_known");
    finding_group *g = calloc(n, sizeof *g);
    size_t ng = 0;
    int rc = g ? 0 : TPROF_ENOMEM;
    /* quadratic in the distinct rules only: a group is found among few */
    for (size_t i = 0; !rc && i < n; i++) {
        const tprof_cell *rk = tprof_rows_cell(findings, i, rank);
        /* a trace without a rank of its own is named alone (trace N), never in a rank set */
        int own = !rk->null && tprof_rows_cell(findings, i, known)->v.i;
        size_t k = ng;
        for (size_t j = 0; own && j < ng; j++) {
            size_t f = g[j].first;
            if (!tprof_rows_cell(findings, f, rank)->null && tprof_rows_cell(findings, f, known)->v.i &&
                !strcmp(tprof_rows_cell(findings, f, rule)->v.s, tprof_rows_cell(findings, i, rule)->v.s) &&
                !strcmp(tprof_rows_cell(findings, f, remedy)->v.s, tprof_rows_cell(findings, i, remedy)->v.s)) {
                k = j;
                break;
            }
        }
        if (k == ng) g[ng++] = (finding_group){ .first = i, .worst = i, .ranks = malloc(n * sizeof(int64_t)) };
        if (!g[k].ranks) {
            rc = TPROF_ENOMEM;
            break;
        }
        if (!rk->null) g[k].ranks[g[k].n++] = rk->v.i;
        if (tprof_rows_cell(findings, i, value)->v.d > tprof_rows_cell(findings, g[k].worst, value)->v.d) g[k].worst = i;
    }
    for (size_t j = 0; !rc && j < ng; j++) {
        const finding_group *x = &g[j];
        char who[320] = "all ranks";
        if (x->n == 1)
            snprintf(who, sizeof who, "%s %" PRId64, tprof_rows_cell(findings, x->first, known)->v.i ? "rank" : "trace",
                     x->ranks[0]);
        else if (x->n > 1) {
            char set[224], worst[32] = "";
            tprof_fmt_rank_set(set, sizeof set, x->ranks, x->n, all_ranks, nall);
            const tprof_cell *wr = tprof_rows_cell(findings, x->worst, rank);
            snprintf(worst, sizeof worst, "rank %" PRId64, wr->v.i);
            /* traces of several runs given together can share a rank: then count traces */
            size_t distinct = 0;
            for (size_t a = 0; a < x->n; a++) {
                size_t b = 0;
                while (b < a && x->ranks[b] != x->ranks[a]) b++;
                distinct += b == a;
            }
            snprintf(who, sizeof who, "%s (%zu %s; the figures of %s, the highest)", set, x->n,
                     distinct == x->n ? "ranks" : "traces", worst);
        }
        printf("- [%s] %s: %s\n    -> %s\n", tprof_rows_cell(findings, x->worst, rule)->v.s, who,
               tprof_rows_cell(findings, x->worst, ev)->v.s, tprof_rows_cell(findings, x->worst, remedy)->v.s);
    }
    for (size_t j = 0; g && j < ng; j++) free(g[j].ranks);
    free(g);
    return rc;
}

static int print(void *ctx, const tprof_result *r, const char *label, const char *path)
{
    (void)ctx, (void)label, (void)path;
    const tprof_rows *all = tprof_result_table_c(r, 1);
    size_t n = tprof_rows_count(all);
    int64_t *ranks = malloc((n ? n : 1) * sizeof *ranks);
    if (!ranks) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) ranks[i] = tprof_rows_cell(all, i, 0)->v.i;
    int rc = cli_print_findings(tprof_result_table_c(r, 0), ranks, n);
    free(ranks);
    return rc;
}

/* Each trace: its facts (for the ranks) and its own findings. */
static int analyse(void *ctx, const tprof_trace *t, tprof_result **out)
{
    (void)ctx;
    int rc = tprof_rank_facts(t, &out[0]);
    if (!rc) rc = tprof_advise_rank(t, &out[1]);
    return rc ? rc : tprof_coll_instances(t, &out[2]);
}

static int reduce(void *ctx, const tprof_result *const *parts, size_t n, tprof_result *const *folded,
                  tprof_result **out)
{
    (void)folded; /* no part folded */
    (void)ctx;
    const tprof_result **facts = calloc(n ? n : 1, sizeof *facts), **findings = calloc(n ? n : 1, sizeof *findings);
    const tprof_result **colls = calloc(n ? n : 1, sizeof *colls);
    tprof_ranks_result *ranks = NULL;
    tprof_result *coll = NULL;
    int rc = facts && findings && colls ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        facts[i] = parts[3 * i];
        findings[i] = parts[3 * i + 1];
        colls[i] = parts[3 * i + 2];
    }
    if (!rc) rc = tprof_ranks_reduce(facts, n, &ranks);
    /* the collectives' straggler, for the late-rank rule; Ascend's slowest
     * link, for slow-link (a cluster file is many ranks in one input) */
    int across = !rc && (n >= 2 || (n == 1 && tprof_rows_count(tprof_result_table_c(colls[0], 2)) > 0));
    if (!rc && across && !(rc = tprof_collectives_reduce(colls, n, &coll))) tprof_ranks_add_collectives(ranks, coll);
    if (!rc) rc = tprof_advise_reduce(findings, ranks, out);
    tprof_result_free(coll);
    tprof_ranks_free(ranks);
    free(facts);
    free(findings);
    free(colls);
    return rc;
}

int cmd_advice(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = TPROF_ADVICE_KEEP | TPROF_KEEP_CALLS | TPROF_KEEP_STEP_SPLITS, .accepts = TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_JSON) | TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_STEPS),
        .result = &tprof_advice_desc, .analyse = analyse,
        .nparts = 3, .coll_part = 3,
        .reduce = reduce, .print = print,
    };
    return cli_run(argc, argv, &spec, NULL);
}
