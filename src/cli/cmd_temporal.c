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
            "options:\n"
            "  --keep-last-step      count the last step's work too\n" CLI_COMMON_HELP);
}

typedef struct {
    tprof_temporal_opts to;
    tprof_table *tab;
} temporal_ctx;

static int option(void *ctx, int c, const char *arg)
{
    (void)arg;
    if (c != 'k') return -1;
    ((temporal_ctx *)ctx)->to.keep_last_step = 1;
    return 0;
}

static int each(void *vctx, const tprof_trace *t, cli_out *out)
{
    temporal_ctx *ctx = vctx;
    tprof_temporal_result r;
    int rc = tprof_temporal(t, &ctx->to, &r);
    if (rc) return rc;
    char note[64] = "";
    if (r.last_step_excluded) snprintf(note, sizeof note, "ProfilerStep#%" PRId64 " left out", r.last_step);
    if (!r.events) snprintf(note, sizeof note, "no GPU events");
    if (out->fmt == FMT_TABLE) {
        if (!ctx->tab) {
            const char *hdr[] = { "trace", "GPU events", "span", "idle", "compute", "non-compute", "note" };
            if (!(ctx->tab = tprof_table_new(7, hdr, "lrrrrrl"))) return TPROF_ENOMEM;
        }
        char cnt[32], a[32], b[48], d[48], e[48], s1[32], s2[32], s3[32];
        snprintf(cnt, sizeof cnt, "%" PRIu64, r.events);
        tprof_fmt_duration(a, sizeof a, r.span_ns);
        snprintf(b, sizeof b, "%s (%.1f%%)", tprof_fmt_duration(s1, sizeof s1, r.idle_ns), cli_pct(r.idle_ns, r.span_ns));
        snprintf(d, sizeof d, "%s (%.1f%%)", tprof_fmt_duration(s2, sizeof s2, r.compute_ns), cli_pct(r.compute_ns, r.span_ns));
        snprintf(e, sizeof e, "%s (%.1f%%)", tprof_fmt_duration(s3, sizeof s3, r.non_compute_ns),
                 cli_pct(r.non_compute_ns, r.span_ns));
        const char *cells[] = { out->label, cnt, a, b, d, e, note };
        return tprof_table_row(ctx->tab, cells) ? TPROF_ENOMEM : 0;
    }
    if (out->fmt == FMT_CSV) {
        tprof_csv_field(stdout, out->label);
        fputc(',', stdout);
        tprof_csv_field(stdout, out->path);
        printf(",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%d\n", r.events, r.span_ns,
               r.busy_ns, r.idle_ns, r.compute_ns, r.non_compute_ns, r.last_step_excluded);
        return 0;
    }
    tprof_jw *w = &out->jw;
    cli_json_begin(w, out->label, out->path);
    tprof_jw_kuint(w, "events", r.events);
    tprof_jw_kint(w, "span_ns", r.span_ns);
    tprof_jw_kint(w, "busy_ns", r.busy_ns);
    tprof_jw_kint(w, "idle_ns", r.idle_ns);
    tprof_jw_kint(w, "compute_ns", r.compute_ns);
    tprof_jw_kint(w, "non_compute_ns", r.non_compute_ns);
    tprof_jw_key(w, "last_step_excluded");
    if (r.last_step_excluded) tprof_jw_int(w, r.last_step); else tprof_jw_null(w);
    tprof_jw_obj_end(w);
    return 0;
}

int cmd_temporal(int argc, char **argv)
{
    static const struct option opts[] = { { "keep-last-step", no_argument, 0, 'k' }, { 0, 0, 0, 0 } };
    static const cli_spec spec = {
        .help = help, .keep = TPROF_TEMPORAL_KEEP, .opts = opts, .option = option, .each = each,
        .csv_header = "trace,file,events,span_ns,busy_ns,idle_ns,compute_ns,non_compute_ns,last_step_excluded",
    };
    temporal_ctx ctx = { 0 };
    int rc = cli_run(argc, argv, &spec, &ctx);
    if (ctx.tab) {
        tprof_table_print(ctx.tab, stdout);
        tprof_table_free(ctx.tab);
    }
    return rc;
}
