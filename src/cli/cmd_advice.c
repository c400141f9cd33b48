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
            tprof_jw_kstr(w, "rule", it->rule);
            tprof_jw_key(w, "rank");
            if (it->rank >= 0) tprof_jw_int(w, it->rank); else tprof_jw_null(w);
            tprof_jw_kdouble(w, "value", it->value);
            tprof_jw_kdouble(w, "threshold", it->threshold);
            tprof_jw_kstr(w, "evidence", it->evidence);
            tprof_jw_kstr(w, "remedy", it->remedy);
            tprof_jw_obj_end(w);
        }
        tprof_jw_arr_end(w);
        return;
    }
    if (fmt == FMT_CSV) { /* the header is cli_run's */
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

static int all(void *ctx, const tprof_trace *const *tr, size_t nt, cli_out *out)
{
    (void)ctx;
    tprof_advice *a;
    int rc = tprof_advise(tr, nt, &a);
    if (rc) return rc;
    cli_print_advice(a, out->fmt, &out->jw);
    tprof_advice_free(a);
    return 0;
}

int cmd_advice(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = TPROF_ADVICE_KEEP, .all = all, .csv_header = "rule,rank,value,threshold,evidence,remedy",
    };
    return cli_run(argc, argv, &spec, NULL);
}
