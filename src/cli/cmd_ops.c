/* trainprof ops: the operator view, GPU time per op, op and inputs,
 * nn.Module, op category or call stack, with the roofline, per trace and
 * combined. */
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
            "usage: trainprof ops [options] TRACE...\n\n"
            "The operator view: every GPU microsecond attributed to the CPU op that\n"
            "launched it (the innermost cpu_op above its runtime call), grouped by op\n"
            "name, by op and input shapes (record_shapes), by the nn.Module that ran\n"
            "it (with_stack / with_modules; a backward op counts for its forward op's\n"
            "module), by op category (gemm, attention, convolution, elementwise,\n"
            "reduction, normalization, communication, memory, other), or by op and the\n"
            "Python call stack above it (with_stack). Per group: launches, kernels,\n"
            "direct kernel time (the op's own launches) and its share, subtree kernel\n"
            "time (the ops under it too), CPU self and total time, the backward part\n"
            "and the top kernel. GPU work without a launch in the trace is a row\n"
            "of its own. Ops with a performance model (GEMMs, attention, convolutions,\n"
            "elementwise, normalization, reductions; from their recorded shapes) get\n"
            "their FLOPs, bytes, achieved TFLOP/s and TB/s, and their place under the\n"
            "device's roofline. One table per trace and, for several traces, a\n"
            "combined one.\n\n"
            "options:\n"
            "  --by name|shape|module|category|stack  grouping (default name);\n"
            "                        --class-rule CATEGORY:GLOB puts ops named GLOB in a\n"
            "                        category\n"
            "  --depth N             by module: keep the outermost N levels of the path\n"
            "                        (default 0 = the whole path); by stack: the innermost\n"
            "                        N frames (default 5, 0 = all)\n"
            "  --top N               rows per table (default 20, 0 = all)\n"
            "  --steps A..B          only ops that start in ProfilerStep#A..#B\n"
            "                        (also A.., ..B, A)\n"
            "  --device NAME         the roofline's device (default: the trace's first\n"
            "                        device): A100, H100, H200, B200, MI250X, MI300X,\n"
            "                        MI325X, MI355X, 910B (datasheet peaks, dense)\n"
            "  --peak-tflops X       the peak TFLOP/s instead (every element type)\n"
            "  --peak-tbps Y         the memory bandwidth in TB/s instead\n"
            CLI_COMMON_HELP);
}

typedef struct {
    tprof_ops_opts oo;
    long top;
    int depth_given;
    char window[80]; /* the error when --steps matches no step */
} ops_cli;

static int print(void *vctx, const tprof_result *r, const char *label, const char *path)
{
    const ops_cli *ctx = vctx;
    char a[32], b[32], c[32];
    const tprof_rows *top = tprof_result_top_c(r);
    printf("== %s%s%s ==\n", label, path ? ": " : "", path ? path : "");
    int64_t gpu = tprof_rows_int(top, 0, "gpu_ns"), direct = tprof_rows_int(top, 0, "direct_ns");
    printf("%" PRId64 " launches, %" PRId64 " GPU events, GPU time %s, direct %s", tprof_rows_int(top, 0, "launches"),
           tprof_rows_int(top, 0, "gpu_events"), tprof_fmt_duration(a, sizeof a, gpu),
           tprof_fmt_duration(b, sizeof b, direct));
    if (!tprof_rows_at(top, 0, "step_first")->null)
        printf(", ProfilerStep#%" PRId64 "..#%" PRId64 " (%" PRId64 " steps)", tprof_rows_int(top, 0, "step_first"),
               tprof_rows_int(top, 0, "step_last"), tprof_rows_int(top, 0, "steps"));
    printf("\n");
    int64_t unlinked = tprof_rows_int(top, 0, "unlinked_events");
    if (unlinked)
        printf("%" PRId64 " GPU events (%s, %.1f%%) have no launch in the trace: a row of their own\n", unlinked,
               tprof_fmt_duration(c, sizeof c, tprof_rows_int(top, 0, "unlinked_ns")),
               cli_pct(tprof_rows_int(top, 0, "unlinked_ns"), gpu));
    const char *device = tprof_rows_str(top, 0, "device"), *source = tprof_rows_str(top, 0, "peak_source");
    if (source)
        printf("roofline: %s, %s (--device, --peak-tflops, --peak-tbps change them)\n", device ? device : "no device",
               !strcmp(source, "datasheet") ? "its datasheet's dense peaks" : "the peaks given");
    else if (device)
        printf("roofline: %s is not in the device table: --device or --peak-tflops and --peak-tbps give its peaks\n",
               device);
    else
        printf("roofline: the trace names no device: --device or --peak-tflops and --peak-tbps give one\n");
    if (tprof_rows_int(top, 0, "ops_with_inputs") == 0)
        printf("no op inputs in this trace (record_shapes=True records them): no shapes, FLOPs or roofline\n");
    printf("\n");
    const tprof_rows *rows = tprof_result_table_c(r, 0);
    if (tprof_rows_count(rows) == 0) {
        printf("no GPU work in this trace: no op launched any\n");
        return 0;
    }
    int rc = tprof_rows_print_table(rows, (size_t)ctx->top, stdout);
    size_t n = tprof_rows_count(rows);
    if (!rc && ctx->top && (size_t)ctx->top < n) printf("... %zu more (--top 0 shows all)\n", n - (size_t)ctx->top);
    return rc;
}

static int parse_count(const char *opt, const char *arg, long *out)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (!*arg || *end || v < 0 || v > 1000000) {
        cli_error("%s takes a count (0 = all), not '%s'", opt, arg);
        return -1;
    }
    *out = v;
    return 0;
}

static int option(void *vctx, int c, const char *arg)
{
    ops_cli *ctx = vctx;
    long v;
    switch (c) {
    case 't': return parse_count("--top", arg, &ctx->top);
    case 'd':
        if (parse_count("--depth", arg, &v)) return -1;
        ctx->oo.depth = (int)v;
        ctx->depth_given = 1;
        return 0;
    case 'b':
        if (!strcmp(arg, "name")) ctx->oo.by = TPROF_OPS_BY_NAME;
        else if (!strcmp(arg, "shape")) ctx->oo.by = TPROF_OPS_BY_SHAPE;
        else if (!strcmp(arg, "module")) ctx->oo.by = TPROF_OPS_BY_MODULE;
        else if (!strcmp(arg, "category")) ctx->oo.by = TPROF_OPS_BY_CATEGORY;
        else if (!strcmp(arg, "stack")) ctx->oo.by = TPROF_OPS_BY_STACK;
        else {
            cli_error("--by must be name, shape, module, category or stack, not '%s'", arg);
            return -1;
        }
        return 0;
    case 'D': ctx->oo.device = arg; return 0;
    case 'P':
    case 'B': {
        char *end;
        double x = strtod(arg, &end);
        if (!*arg || *end || !(x > 0) || x > 1e9) {
            cli_error("%s takes a positive number, not '%s'", c == 'P' ? "--peak-tflops" : "--peak-tbps", arg);
            return -1;
        }
        if (c == 'P') ctx->oo.peak_tflops = x;
        else ctx->oo.peak_tbps = x;
        return 0;
    }
    case 's': return cli_steps_option(arg, &ctx->oo.step_first, &ctx->oo.step_last, ctx->window, sizeof ctx->window);
    default: return -1;
    }
}

static int analyse(void *vctx, const tprof_trace *t, tprof_result **out)
{
    const ops_cli *ctx = vctx;
    tprof_ops_opts o = ctx->oo;
    if (o.by == TPROF_OPS_BY_STACK && !ctx->depth_given) o.depth = 5;
    return tprof_ops(t, &o, out);
}

/* the traces' results folded into one (cli_run), then sorted as one trace's */
static int finish_part(void *ctx, size_t part, tprof_result *folded)
{
    (void)ctx, (void)part;
    return tprof_ops_finish(folded);
}

static const tprof_result_desc *result_for(void *ctx) { return &tprof_ops_desc[((ops_cli *)ctx)->oo.by]; }

static size_t limit(void *ctx) { return (size_t)((ops_cli *)ctx)->top; }

static const char *window_error(void *ctx) { return ((ops_cli *)ctx)->window; }

static void classifier(void *ctx, const tprof_classifier *cls) { ((ops_cli *)ctx)->oo.classifier = cls; }

/* Python frames other than nn.Module ones only for --by stack. */
static uint32_t keep_for(void *ctx)
{
    return TPROF_OPS_KEEP | (((ops_cli *)ctx)->oo.by == TPROF_OPS_BY_STACK ? 0 : TPROF_SKIP_PLAIN_FRAMES);
}

int cmd_ops(int argc, char **argv)
{
    static const struct option opts[] = {
        { "top", required_argument, 0, 't' }, { "by", required_argument, 0, 'b' },
        { "depth", required_argument, 0, 'd' }, { "steps", required_argument, 0, 's' },
        { "device", required_argument, 0, 'D' }, { "peak-tflops", required_argument, 0, 'P' },
        { "peak-tbps", required_argument, 0, 'B' }, { 0, 0, 0, 0 },
    };
    ops_cli ctx = { .oo = { .by = TPROF_OPS_BY_NAME, .step_first = -1, .step_last = -1 }, .top = 20 };
    static const cli_spec spec = {
        .help = help, .keep = TPROF_OPS_KEEP, .opts = opts, .option = option,
        .result = &tprof_ops_desc[TPROF_OPS_BY_NAME], .result_for = result_for, .analyse = analyse, .print = print,
        .combines = 1, .finish_part = finish_part, .limit = limit, .usage_error_for = window_error, .classifier = classifier,
        .keep_for = keep_for,
    };
    return cli_run(argc, argv, &spec, &ctx);
}
