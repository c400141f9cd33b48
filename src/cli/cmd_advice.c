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

void cli_print_advice(const tprof_advice *a, cli_format fmt, tprof_jw *w)
{
    if (fmt == FMT_JSON) {
        tprof_jw_arr(w);
        for (size_t i = 0; i < a->n; i++) {
            const tprof_advice_item *it = &a->items[i];
            tprof_jw_obj(w);
            tprof_jw_key(w, "rule"); tprof_jw_str(w, it->rule);
            tprof_jw_key(w, "rank");
            if (it->rank >= 0) tprof_jw_int(w, it->rank); else tprof_jw_null(w);
            tprof_jw_key(w, "value"); tprof_jw_double(w, it->value);
            tprof_jw_key(w, "threshold"); tprof_jw_double(w, it->threshold);
            tprof_jw_key(w, "evidence"); tprof_jw_str(w, it->evidence);
            tprof_jw_key(w, "remedy"); tprof_jw_str(w, it->remedy);
            tprof_jw_obj_end(w);
        }
        tprof_jw_arr_end(w);
        return;
    }
    if (fmt == FMT_CSV) {
        printf("rule,rank,value,threshold,evidence,remedy\n");
        for (size_t i = 0; i < a->n; i++) {
            const tprof_advice_item *it = &a->items[i];
            printf("%s,", it->rule);
            if (it->rank >= 0) printf("%" PRId64, it->rank);
            printf(",%.6g,%.6g,", it->value, it->threshold);
            tprof_csv_field(stdout, it->evidence);
            fputc(',', stdout);
            tprof_csv_field(stdout, it->remedy);
            fputc('\n', stdout);
        }
        return;
    }
    if (a->n == 0) {
        printf("no finding crosses its threshold\n");
        return;
    }
    for (size_t i = 0; i < a->n; i++) {
        const tprof_advice_item *it = &a->items[i];
        char who[32] = "all ranks";
        if (it->rank >= 0) snprintf(who, sizeof who, "rank %" PRId64, it->rank);
        printf("- [%s] %s: %s\n    -> %s\n", it->rule, who, it->evidence, it->remedy);
    }
}

int cmd_advice(int argc, char **argv)
{
    static const struct option opts[] = { CLI_COMMON_LONGOPTS, { 0, 0, 0, 0 } };
    cli_common co = { 0 };
    int c, rc = EXIT_OK;
    optind = 1;
    while (!rc && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int common = cli_common_option(c, optarg, &co);
        if (common) {
            if (common < 0) rc = EXIT_USAGE;
            continue;
        }
        if (c == 'h') {
            help(stdout);
            cli_common_free(&co);
            return EXIT_OK;
        }
        rc = EXIT_USAGE;
    }
    int n = argc - optind;
    if (!rc && n < 1) {
        help(stderr);
        rc = EXIT_USAGE;
    }
    if (rc) {
        cli_common_free(&co);
        return rc;
    }
    tprof_read_result *res = calloc((size_t)n, sizeof *res);
    const tprof_trace **tr = calloc((size_t)n, sizeof *tr);
    if (!res || !tr) return EXIT_INPUT;
    tprof_read_opts ro = { .keep = TPROF_ADVICE_KEEP, .classifier = co.cls, .threads = co.threads };
    rc = cli_read_traces(argv + optind, n, &ro, res);
    size_t nt = 0;
    for (int i = 0; i < n; i++)
        if (res[i].trace) tr[nt++] = res[i].trace;
    tprof_advice *a = NULL;
    if (nt && tprof_advise(tr, nt, &a)) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
    }
    if (a) {
        tprof_jw w;
        tprof_jw_init(&w, stdout);
        cli_print_advice(a, co.fmt, &w);
    }
    tprof_advice_free(a);
    for (int i = 0; i < n; i++) tprof_trace_free(res[i].trace);
    free(res);
    free(tr);
    cli_common_free(&co);
    return rc;
}
