/* trainprof critical-path: the longest chain of dependent work in each
 * step (HTA's graph), and what bounds it. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "trainprof/merge.h"
#include "trainprof/report.h"

/* --overlay: each trace's path as events, made while the trace is in
 * memory, written into a copy of its file once all are analysed. */
typedef struct {
    char *input, *events;
    size_t len;
} overlay;

typedef struct {
    tprof_cp_opts o;
    long long top;
    char window[256];
    const char *overlay_out;
    pthread_mutex_t lock; /* traces are analysed on several threads */
    overlay *overlays;
    size_t noverlays;
    int overlay_rc;
} cp_cli;

static void help(FILE *f)
{
    fprintf(f,
            "usage: trainprof critical-path [options] TRACE...\n\n"
            "The critical path of each ProfilerStep (of the whole trace without steps): the\n"
            "longest chain of dependent work, in the graph Holistic Trace Analysis builds for\n"
            "it: host ops nested per thread (each top-level op after the one before), each\n"
            "kernel after its launch (the launch delay counts when the stream was empty) or\n"
            "after the kernel before it on its stream, and the syncs (the host waiting for a\n"
            "stream, an event or the device; a stream waiting for an event). Its length\n"
            "against the step's, broken down by what bounds it: CPU ops, runtime calls,\n"
            "launch delays, gaps between kernels, GPU compute, memory copies and exposed\n"
            "communication; and the events and ops on it.\n\n"
            "options:\n"
            "  --steps A..B          the ProfilerSteps numbered A to B (default: all)\n"
            "  --annotation NAME     instead, one window: the events whose name holds NAME,\n"
            "                        in file order, as HTA's annotation takes them\n"
            "  --instance I|A..B     with --annotation, the instance (0 first) or the\n"
            "                        instances spanned (default 0)\n"
            "  --whole               the whole trace as one window\n"
            "  --path                JSON holds every edge of each path, in order (\"path\")\n"
            "  --top N               rows of the events on the path (default 15; 0: all)\n"
            "  --overlay OUT         also write the trace to OUT (.gz, .zst or .json) with the\n"
            "                        path added for Perfetto: a process \"critical path\" (the\n"
            "                        windows, the path's segments) and HTA's critical_path\n"
            "                        arrows on the events; with several traces OUT is a\n"
            "                        directory of critical_path_<trace file name> (with\n"
            "                        the trace's place, in path order, when names repeat)\n" CLI_COMMON_HELP);
}

static int option(void *vctx, int c, const char *arg)
{
    cp_cli *ctx = vctx;
    switch (c) {
    case 's': return cli_steps_option(arg, &ctx->o.step_first, &ctx->o.step_last, ctx->window, sizeof ctx->window);
    case 'a': ctx->o.annotation = arg; return 0;
    case 'i': {
        long long a, b;
        if (cli_parse_steps(arg, &a, &b) || a < 0) {
            cli_error("--instance takes I or A..B (0 first), not '%s'", arg);
            return -1;
        }
        ctx->o.instance_first = a;
        ctx->o.instance_last = b < 0 ? a : b;
        return 0;
    }
    case 'w': ctx->o.whole = 1; return 0;
    case 'p': ctx->o.path = 1; return 0;
    case 'o': ctx->overlay_out = arg; return 0;
    case 't': {
        char *end;
        ctx->top = strtoll(arg, &end, 10);
        if (!*arg || *end || ctx->top < 0) {
            cli_error("--top takes a count, not '%s'", arg);
            return -1;
        }
        return 0;
    }
    default: return -1;
    }
}

static const char *const bound_cols[] = { "cpu_op_ns", "runtime_ns", "launch_ns", "kernel_gap_ns",
                                          "compute_ns", "memory_ns", "comm_ns" };
static const char *const bound_words[] = { "CPU ops", "runtime calls", "launch delays", "kernel gaps",
                                           "GPU compute", "memory copies", "exposed communication" };

static int print(void *vctx, const tprof_result *res, const char *label, const char *path)
{
    const cp_cli *ctx = vctx;
    (void)path;
    const tprof_rows *top = tprof_result_top_c(res);
    char d1[32], d2[32];
    int64_t windows = tprof_rows_int(top, 0, "windows"), path_ns = tprof_rows_int(top, 0, "path_ns");
    const char *window = tprof_rows_str(top, 0, "window");
    printf("%s: critical path of %" PRId64 " %s: %s of %s (%.1f%%)\n", label, windows,
           !strcmp(window, "steps") ? (windows == 1 ? "step" : "steps")
           : !strcmp(window, "annotation") ? "annotation window" : "window (the whole trace)",
           tprof_fmt_duration(d1, sizeof d1, path_ns),
           tprof_fmt_duration(d2, sizeof d2, tprof_rows_int(top, 0, "span_ns")),
           100 * tprof_rows_real(top, 0, "path_share"));
    if (tprof_rows_int(top, 0, "refused"))
        printf("  %" PRId64 " window(s) refused: their graph fails HTA's checks (--format json says why)\n",
               tprof_rows_int(top, 0, "refused"));
    if (path_ns <= 0) {
        printf("  no critical path: no host ops or GPU work in the window(s)\n");
        return 0;
    }
    const char *hdr[] = { "bound", "time", "of path" };
    tprof_table *t = tprof_table_new(3, hdr, "lrr");
    if (!t) return TPROF_ENOMEM;
    int rc = 0;
    for (size_t k = 0; k < sizeof bound_cols / sizeof *bound_cols && !rc; k++) {
        int64_t v = tprof_rows_int(top, 0, bound_cols[k]);
        if (!v) continue;
        char tm[32], sh[32];
        tprof_fmt_duration(tm, sizeof tm, v);
        snprintf(sh, sizeof sh, "%.1f%%", cli_pct(v, path_ns));
        const char *cells[] = { bound_words[k], tm, sh };
        rc = tprof_table_row(t, cells);
    }
    if (!rc) {
        printf("\n");
        tprof_table_print(t, stdout);
    }
    tprof_table_free(t);
    if (rc) return rc;
    printf("  the path waited on the GPU at %" PRId64 " sync(s)\n", tprof_rows_int(top, 0, "sync_edges"));
    const tprof_rows *steps = tprof_result_table_c(res, 0);
    if (tprof_rows_count(steps) > 1) {
        printf("\n");
        if ((rc = tprof_rows_print_table(steps, 0, stdout))) return rc;
    }
    printf("\n");
    return tprof_rows_print_table(tprof_result_table_c(res, 1), (size_t)ctx->top, stdout);
}

static int analyse(void *vctx, const tprof_trace *t, tprof_result **out)
{
    cp_cli *ctx = vctx;
    tprof_cp_opts o = ctx->o;
    o.threads = cli_threads; /* --threads 1: this thread alone */
    int rc = tprof_critical_path(t, &o, out);
    if (rc || !ctx->overlay_out) return rc;
    const char *input = tprof_trace_meta_get(t)->path;
    struct stat st;
    if (stat(input, &st) != 0 || !S_ISREG(st.st_mode)) {
        cli_error("--overlay copies the trace's file, and %s is not one that can be read twice (standard input, "
                  "a pipe)", input);
        ctx->overlay_rc = EXIT_USAGE;
        return 0;
    }
    overlay ov = { 0 };
    rc = tprof_critical_path_overlay_events(t, &o, &ov.events, &ov.len);
    ov.input = rc ? NULL : strdup(input);
    pthread_mutex_lock(&ctx->lock);
    overlay *grown = ov.input ? realloc(ctx->overlays, (ctx->noverlays + 1) * sizeof *grown) : NULL;
    if (grown) {
        ctx->overlays = grown;
        ctx->overlays[ctx->noverlays++] = ov;
    }
    pthread_mutex_unlock(&ctx->lock);
    if (!grown) {
        free(ov.input);
        free(ov.events);
        return rc ? rc : TPROF_ENOMEM;
    }
    return 0;
}

static const char *base_name(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

/* OUT itself for one trace (unless it is a directory), else
 * OUT/critical_path_<the input's file name>, or critical_path_<I>_<name>
 * when another input has that name too (rank directories of trace.json). */
static int overlay_path(const char *out, const overlay *all, size_t n, size_t i, char *path, size_t cap)
{
    const char *input = all[i].input;
    struct stat st;
    int is_dir = stat(out, &st) == 0 && S_ISDIR(st.st_mode);
    if (n == 1 && !is_dir) return snprintf(path, cap, "%s", out) < (int)cap ? 0 : -1;
    if (!is_dir && mkdir(out, 0777) != 0 && errno != EEXIST) {
        cli_error("--overlay %s: cannot make the directory for %zu traces: %s", out, n, strerror(errno));
        return -1;
    }
    int shared = 0;
    for (size_t k = 0; k < n && !shared; k++) shared = k != i && !strcmp(base_name(all[k].input), base_name(input));
    int len = shared ? snprintf(path, cap, "%s/critical_path_%zu_%s", out, i, base_name(input))
                     : snprintf(path, cap, "%s/critical_path_%s", out, base_name(input));
    return len < (int)cap ? 0 : -1;
}

static int cmp_overlay(const void *a, const void *b)
{
    return strcmp(((const overlay *)a)->input, ((const overlay *)b)->input);
}

static int write_overlays(cp_cli *ctx)
{
    int rc = ctx->overlay_rc;
    /* the traces were analysed in the order their reads ended: names go by path */
    if (ctx->noverlays) qsort(ctx->overlays, ctx->noverlays, sizeof *ctx->overlays, cmp_overlay);
    for (size_t i = 0; i < ctx->noverlays; i++) {
        const overlay *ov = &ctx->overlays[i];
        char path[4096], err[1024];
        int cut = 0;
        if (overlay_path(ctx->overlay_out, ctx->overlays, ctx->noverlays, i, path, sizeof path)) {
            rc = EXIT_OUTPUT;
            continue;
        }
        struct stat si, so;
        if (stat(ov->input, &si) == 0 && stat(path, &so) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
            cli_error("--overlay %s is the trace itself: write the overlay to another file", path);
            rc = EXIT_USAGE > rc ? EXIT_USAGE : rc;
            continue;
        }
        if (tprof_trace_copy_with_events(ov->input, path, ov->events, ov->len, &cut, err, sizeof err)) {
            cli_error("--overlay: %s", err);
            rc = EXIT_OUTPUT;
            continue;
        }
        if (cut) cli_warn("%s: the input stops early: the overlay holds its complete events, then the path", path);
        struct stat st;
        cli_wrote(path, stat(path, &st) == 0 ? (uint64_t)st.st_size : 0);
    }
    return rc;
}

/* the traces' results folded into one (cli_run), then sorted as one trace's */
static int finish_part(void *ctx, size_t part, tprof_result *folded)
{
    (void)ctx, (void)part;
    return tprof_critical_path_finish(folded);
}

static size_t limit(void *ctx) { return (size_t)((cp_cli *)ctx)->top; }

static const char *window_error(void *vctx)
{
    cp_cli *ctx = vctx;
    if (ctx->o.annotation && *ctx->o.annotation) {
        snprintf(ctx->window, sizeof ctx->window, "no instance %" PRId64 " of an event named *%s*",
                 ctx->o.instance_first < 0 ? 0 : ctx->o.instance_first, ctx->o.annotation);
        return ctx->window;
    }
    if (!ctx->window[0]) snprintf(ctx->window, sizeof ctx->window, "no ProfilerStep in --steps' range");
    return ctx->window;
}

int cmd_critical_path(int argc, char **argv)
{
    static const struct option opts[] = {
        { "steps", required_argument, 0, 's' }, { "annotation", required_argument, 0, 'a' },
        { "instance", required_argument, 0, 'i' }, { "whole", no_argument, 0, 'w' },
        { "top", required_argument, 0, 't' }, { "path", no_argument, 0, 'p' },
        { "overlay", required_argument, 0, 'o' }, { 0, 0, 0, 0 },
    };
    cp_cli ctx = { .o = { .step_first = -1, .step_last = -1, .instance_first = -1, .instance_last = -1 }, .top = 15 };
    static const cli_spec spec = {
        .help = help, .keep = TPROF_CRITICAL_PATH_KEEP, .opts = opts, .option = option,
        .result = &tprof_critical_path_desc, .analyse = analyse, .print = print, .combines = 1, .finish_part = finish_part,
        .limit = limit, .usage_error_for = window_error,
    };
    pthread_mutex_init(&ctx.lock, NULL);
    int rc = cli_run(argc, argv, &spec, &ctx);
    int orc = write_overlays(&ctx);
    if (orc > rc) rc = orc;
    for (size_t i = 0; i < ctx.noverlays; i++) {
        free(ctx.overlays[i].input);
        free(ctx.overlays[i].events);
    }
    free(ctx.overlays);
    pthread_mutex_destroy(&ctx.lock);
    return rc;
}
