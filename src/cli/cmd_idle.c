/* trainprof idle: why each GPU stream sits idle between its events. */
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
            "usage: trainprof idle [options] TRACE...\n\n"
            "Idle time of each GPU stream, gap by gap between consecutive GPU events:\n"
            "host wait (the next event was launched only after the stream had drained:\n"
            "the CPU did not keep up), kernel wait (a gap shorter than --kernel-wait between\n"
            "work already queued), other (waits on events, other streams, syncs).\n\n"
            "options:\n"
            "  --kernel-wait US      threshold for kernel waits in microseconds (default 30)\n" CLI_COMMON_HELP);
}

static int64_t ival(const tprof_rows *t, size_t r, int c) { return tprof_rows_cell(t, r, (size_t)c)->v.i; }

/* "12 ms 34.5% (7)": a cause's gaps, their share of the stream's span, their count. */
static void cell(char *buf, size_t len, const tprof_rows *causes, size_t k, int64_t span)
{
    const tprof_table_desc *d = tprof_rows_desc(causes);
    char du[32];
    int64_t total = ival(causes, k, tprof_table_col(d, "total_ns"));
    snprintf(buf, len, "%s %.1f%% (%" PRId64 ")", tprof_fmt_duration(du, sizeof du, total),
             span > 0 ? 100.0 * (double)total / (double)span : 0.0, ival(causes, k, tprof_table_col(d, "count")));
}

static int print(void *ctx, const tprof_result *res, const char *label, const char *path)
{
    (void)ctx;
    const tprof_rows *streams = tprof_result_table_c(res, 1);
    const tprof_table_desc *d = tprof_rows_desc(streams);
    printf("== %s: %s ==\n", label, path);
    size_t n = tprof_rows_count(streams);
    if (!n) {
        printf("no GPU events\n");
        return 0;
    }
    const char *hdr[] = { "device/stream", "events", "span", "idle", "host wait", "kernel wait", "other" };
    tprof_table *t = tprof_table_new(7, hdr, "lrrrrrr");
    if (!t) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char id[48], ev[32], span[32], idle[64], c[TPROF_IDLE_CAUSES][64], du[32];
        int64_t sp = ival(streams, i, tprof_table_col(d, "span_ns")), idl = ival(streams, i, tprof_table_col(d, "idle_ns"));
        snprintf(id, sizeof id, "%" PRId64 "/%" PRId64, ival(streams, i, tprof_table_col(d, "device")),
                 ival(streams, i, tprof_table_col(d, "stream")));
        snprintf(ev, sizeof ev, "%" PRId64, ival(streams, i, tprof_table_col(d, "events")));
        tprof_fmt_duration(span, sizeof span, sp);
        snprintf(idle, sizeof idle, "%s %.1f%%", tprof_fmt_duration(du, sizeof du, idl),
                 sp > 0 ? 100.0 * (double)idl / (double)sp : 0.0);
        const tprof_rows *causes = tprof_rows_child_c(streams, i, 0);
        for (size_t k = 0; k < TPROF_IDLE_CAUSES; k++) {
            if (k < tprof_rows_count(causes)) cell(c[k], sizeof c[k], causes, k, sp);
            else snprintf(c[k], sizeof c[k], "-");
        }
        const char *cells[] = { id, ev, span, idle, c[0], c[1], c[2] };
        tprof_table_row(t, cells);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    printf("percentages of each stream's span; (n) = number of gaps; kernel wait: gaps < %s\n",
           tprof_fmt_duration((char[32]){ 0 }, 32, ival(tprof_result_top_c(res), 0, 0)));
    return 0;
}

static int option(void *ctx, int c, const char *arg)
{
    if (c != 'k') return -1;
    char *end;
    double us = strtod(arg, &end);
    if (*end || !(us > 0) || us > 1e9) {
        cli_error("--kernel-wait takes microseconds (> 0), not '%s'", arg);
        return -1;
    }
    ((tprof_idle_opts *)ctx)->kernel_wait_ns = (int64_t)(us * 1000 + 0.5);
    return 0;
}

static int analyse(void *ctx, const tprof_trace *t, tprof_result **out)
{
    tprof_idle_result *r;
    int rc = tprof_idle(t, ctx, &r);
    if (rc) return rc;
    rc = tprof_idle_tables(r, out);
    tprof_idle_free(r);
    return rc;
}

int cmd_idle(int argc, char **argv)
{
    static const struct option opts[] = { { "kernel-wait", required_argument, 0, 'k' }, { 0, 0, 0, 0 } };
    static const cli_spec spec = {
        .help = help, .keep = TPROF_IDLE_KEEP, .opts = opts, .option = option, .result = &tprof_idle_desc,
        .analyse = analyse, .print = print,
    };
    tprof_idle_opts io = { 0 };
    return cli_run(argc, argv, &spec, &io);
}
