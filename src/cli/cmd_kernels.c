/* trainprof kernels: GPU kernel breakdown per trace and combined. */
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
            "usage: trainprof kernels [options] TRACE...\n\n"
            "GPU kernel breakdown: count, total, mean, min, max and share of GPU time of\n"
            "each kernel (or class, or stream); one table per trace and, for several\n"
            "traces, a combined one.\n\n"
            "options:\n"
            "  --top N               rows per table (default 20, 0 = all)\n"
            "  --by name|class|stream|category  grouping (default name); category: the\n"
            "                        events' category (Ascend: the accelerator core, AI_CORE,\n"
            "                        AI_VECTOR_CORE, AI_CPU, HCCL, ...)\n"
            "  --steps A..B          only GPU work launched in ProfilerStep#A..#B\n"
            "                        (also A.., ..B, A)\n"
            CLI_COMMON_HELP);
}

typedef struct {
    tprof_kernels_opts ko;
    long top;
    char window[80]; /* the error when --steps matches no step */
} kernels_ctx;

/* The totals and the classes on two lines, then the rows. */
static int print(void *vctx, const tprof_result *r, const char *label, const char *path)
{
    const kernels_ctx *ctx = vctx;
    char a[32], b[32], c[32], d[32];
    const tprof_rows *top = tprof_result_top_c(r);
    printf("== %s%s%s ==\n", label, path ? ": " : "", path ? path : "");
    int64_t total = tprof_rows_int(top, 0, "total_ns");
    printf("GPU events %" PRId64 ", total %s, busy %s (union), span %s", tprof_rows_int(top, 0, "count"),
           tprof_fmt_duration(a, sizeof a, total), tprof_fmt_duration(b, sizeof b, tprof_rows_int(top, 0, "busy_ns")),
           tprof_fmt_duration(c, sizeof c, tprof_rows_int(top, 0, "span_ns")));
    if (!tprof_rows_at(top, 0, "step_first")->null)
        printf(", ProfilerStep#%" PRId64 "..#%" PRId64 " (%" PRId64 " steps)", tprof_rows_int(top, 0, "step_first"),
               tprof_rows_int(top, 0, "step_last"), tprof_rows_int(top, 0, "steps"));
    printf("\nby class:");
    const tprof_rows *classes = tprof_result_table_c(r, 0);
    size_t nc = tprof_rows_count(classes);
    for (size_t k = 0; k < nc; k++) {
        int64_t ns = tprof_rows_cell(classes, k, 2)->v.i;
        printf(" %s %s (%.1f%%)%s", tprof_rows_cell(classes, k, 0)->v.s, tprof_fmt_duration(d, sizeof d, ns),
               cli_pct(ns, total), k + 1 < nc ? "," : "");
    }
    printf("\n\n");
    const tprof_rows *rows = tprof_result_table_c(r, 1);
    int rc = tprof_rows_print_table(rows, (size_t)ctx->top, stdout);
    size_t n = tprof_rows_count(rows);
    if (!rc && ctx->top && (size_t)ctx->top < n) printf("... %zu more (--top 0 shows all)\n", n - (size_t)ctx->top);
    const tprof_rows *tasks = tprof_result_table_c(r, 2);
    if (!rc && (n = tprof_rows_count(tasks))) { /* an Ascend kernel table's other columns */
        printf("\n%s:\n", tprof_rows_desc(tasks)->title);
        rc = tprof_rows_print_table(tasks, (size_t)ctx->top, stdout);
        if (!rc && ctx->top && (size_t)ctx->top < n) printf("... %zu more (--top 0 shows all)\n", n - (size_t)ctx->top);
    }
    return rc;
}

static int option(void *vctx, int c, const char *arg)
{
    kernels_ctx *ctx = vctx;
    switch (c) {
    case 't': {
        char *end;
        ctx->top = strtol(arg, &end, 10);
        if (*end || ctx->top < 0) {
            cli_error("--top takes a count (0 = all), not '%s'", arg);
            return -1;
        }
        return 0;
    }
    case 'b':
        if (!strcmp(arg, "name")) ctx->ko.by = TPROF_BY_NAME;
        else if (!strcmp(arg, "class")) ctx->ko.by = TPROF_BY_CLASS;
        else if (!strcmp(arg, "stream")) ctx->ko.by = TPROF_BY_STREAM;
        else if (!strcmp(arg, "category")) ctx->ko.by = TPROF_BY_CATEGORY;
        else {
            cli_error("--by must be name, class, stream or category, not '%s'", arg);
            return -1;
        }
        return 0;
    case 's': return cli_steps_option(arg, &ctx->ko.step_first, &ctx->ko.step_last, ctx->window, sizeof ctx->window);
    default: return -1;
    }
}

static int analyse(void *vctx, const tprof_trace *t, tprof_result **out)
{
    const kernels_ctx *ctx = vctx;
    tprof_kernels_result *r;
    int rc = tprof_kernels(t, &ctx->ko, &r);
    if (rc) return rc;
    rc = tprof_kernels_tables(r, out);
    tprof_kernels_free(r);
    if (!rc) rc = tprof_ascend_task_rows(t, &ctx->ko, tprof_result_table(*out, 2));
    return rc;
}

/* the traces' results folded into one (cli_run), then sorted as one trace's */
static int finish_part(void *ctx, size_t part, tprof_result *folded)
{
    (void)ctx, (void)part;
    return tprof_kernels_tables_finish(folded);
}

/* the description follows --by */
static const tprof_result_desc *result_for(void *ctx) { return &tprof_kernels_desc[((kernels_ctx *)ctx)->ko.by]; }

static size_t limit(void *ctx) { return (size_t)((kernels_ctx *)ctx)->top; }

static const char *window_error(void *ctx) { return ((kernels_ctx *)ctx)->window; }

int cmd_kernels(int argc, char **argv)
{
    static const struct option opts[] = {
        { "top", required_argument, 0, 't' }, { "by", required_argument, 0, 'b' },
        { "steps", required_argument, 0, 's' }, { 0, 0, 0, 0 },
    };
    kernels_ctx ctx = { .ko = { .by = TPROF_BY_NAME, .step_first = -1, .step_last = -1 }, .top = 20 };
    static const cli_spec spec = {
        .help = help, .keep = TPROF_KERNELS_KEEP | TPROF_KEEP_TASK_INFO, .opts = opts, .option = option,
        .result = &tprof_kernels_desc[TPROF_BY_NAME], .result_for = result_for, .analyse = analyse, .print = print,
        .combines = 1, .finish_part = finish_part, .limit = limit, .usage_error_for = window_error,
    };
    return cli_run(argc, argv, &spec, &ctx);
}
