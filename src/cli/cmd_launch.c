/* trainprof launch: launch overhead, the launch queue, CPU-bound detection. */
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
            "usage: trainprof launch [options] TRACE...\n\n"
            "Launch overhead per trace: delay from each runtime launch call to the start\n"
            "of its GPU work (mean, p50, p90, max), the share of kernels shorter than their\n"
            "launch call, GPU work per step, the queue of launched-but-unfinished work, and\n"
            "whether the run is CPU-bound (GPU idle >= 20%% of its span, host waits >= half\n"
            "of the streams' idle time).\n\noptions:\n" CLI_COMMON_HELP);
}

typedef struct {
    tprof_table *tab;
} launch_ctx;

static int each(void *vctx, const tprof_trace *t, cli_out *out)
{
    launch_ctx *ctx = vctx;
    tprof_launch_result r;
    int rc = tprof_launch_overhead(t, &r);
    if (rc) return rc;
    tprof_jw *w = &out->jw;
    if (out->fmt == FMT_TABLE && !ctx->tab) {
        const char *hdr[] = { "trace", "launched", "delay mean", "p50", "p90", "max", "shorter than launch",
                              "per step", "queue max", "queue mean", "CPU-bound" };
        if (!(ctx->tab = tprof_table_new(11, hdr, "lrrrrrrrrrl"))) return TPROF_ENOMEM;
    }
    if (out->fmt == FMT_TABLE) {
        char l[32], mean[32], p50[32], p90[32], mx[32], sh[48], ps[32], qm[32], qa[32], cb[96];
        snprintf(l, sizeof l, "%" PRIu64, r.launched);
        tprof_fmt_duration(mean, sizeof mean, r.delay_mean_ns);
        tprof_fmt_duration(p50, sizeof p50, r.delay_p50_ns);
        tprof_fmt_duration(p90, sizeof p90, r.delay_p90_ns);
        tprof_fmt_duration(mx, sizeof mx, r.delay_max_ns);
        snprintf(sh, sizeof sh, "%" PRIu64 " (%.1f%%)", r.shorter_than_launch,
             r.launched ? 100.0 * (double)r.shorter_than_launch / (double)r.launched : 0.0);
        snprintf(ps, sizeof ps, "%.1f", r.kernels_per_step);
        snprintf(qm, sizeof qm, "%" PRIu64, r.queue_max);
        snprintf(qa, sizeof qa, "%.1f", r.queue_mean);
        snprintf(cb, sizeof cb, "%s (idle %.0f%%, host waits %.0f%% of it)", r.cpu_bound ? "yes" : "no",
             r.span_ns ? 100.0 * (double)r.idle_ns / (double)r.span_ns : 0.0,
             r.stream_idle_ns ? 100.0 * (double)r.host_wait_ns / (double)r.stream_idle_ns : 0.0);
        const char *cells[] = { out->label, l, mean, p50, p90, mx, sh, ps, qm, qa, cb };
        if (tprof_table_row(ctx->tab, cells)) return TPROF_ENOMEM;
    } else if (out->fmt == FMT_CSV) {
        tprof_csv_field(stdout, out->label);
        fputc(',', stdout);
        tprof_csv_field(stdout, out->path);
        printf(",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRIu64 ",%.3f,%" PRIu64
           ",%.3f,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%d\n",
           r.launched, r.unmatched, r.delay_mean_ns, r.delay_p50_ns, r.delay_p90_ns, r.delay_max_ns,
           r.shorter_than_launch, r.kernels_per_step, r.queue_max, r.queue_mean, r.span_ns, r.idle_ns,
           r.stream_idle_ns, r.host_wait_ns, r.cpu_bound);
    } else {
        cli_json_begin(w, out->label, out->path);
        tprof_jw_kuint(w, "launched", r.launched);
        tprof_jw_kuint(w, "unmatched", r.unmatched);
        tprof_jw_kint(w, "delay_mean_ns", r.delay_mean_ns);
        tprof_jw_kint(w, "delay_p50_ns", r.delay_p50_ns);
        tprof_jw_kint(w, "delay_p90_ns", r.delay_p90_ns);
        tprof_jw_kint(w, "delay_max_ns", r.delay_max_ns);
        tprof_jw_kuint(w, "shorter_than_launch", r.shorter_than_launch);
        tprof_jw_kdouble(w, "kernels_per_step", r.kernels_per_step);
        tprof_jw_kuint(w, "queue_max", r.queue_max);
        tprof_jw_kdouble(w, "queue_mean", r.queue_mean);
        tprof_jw_kint(w, "span_ns", r.span_ns);
        tprof_jw_kint(w, "idle_ns", r.idle_ns);
        tprof_jw_kint(w, "stream_idle_ns", r.stream_idle_ns);
        tprof_jw_kint(w, "host_wait_ns", r.host_wait_ns);
        tprof_jw_kbool(w, "cpu_bound", r.cpu_bound);
        tprof_jw_kint(w, "queue_start_ns", r.queue_start_ns);
        tprof_jw_kint(w, "queue_end_ns", r.queue_end_ns);
        tprof_jw_key(w, "queue_series");
        tprof_jw_arr(w);
        for (int i = 0; i < TPROF_QUEUE_POINTS; i++) tprof_jw_double(w, r.queue_series[i]);
        tprof_jw_arr_end(w);
        tprof_jw_obj_end(w);
    }
        return 0;
}

int cmd_launch(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = TPROF_LAUNCH_KEEP, .each = each,
        .csv_header = "trace,file,launched,unmatched,delay_mean_ns,delay_p50_ns,delay_p90_ns,delay_max_ns,"
                      "shorter_than_launch,kernels_per_step,queue_max,queue_mean,span_ns,idle_ns,stream_idle_ns,"
                      "host_wait_ns,cpu_bound",
    };
    launch_ctx ctx = { 0 };
    int rc = cli_run(argc, argv, &spec, &ctx);
    if (ctx.tab) {
        tprof_table_print(ctx.tab, stdout);
        tprof_table_free(ctx.tab);
    }
    return rc;
}
