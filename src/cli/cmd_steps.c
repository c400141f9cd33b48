/* trainprof steps: each ProfilerStep's time and the GPU work it launched. */
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
            "usage: trainprof steps [options] TRACE...\n\n"
            "Each ProfilerStep#N span (CPU) with the GPU work launched in it (GPU events,\n"
            "their summed time and their busy time), when the step's GPU work ends\n"
            "relative to its CPU span, step-time statistics (mean, p50, min, max,\n"
            "spread), and the split of the steps into data loading, forward, backward,\n"
            "optimizer and other, on the CPU and for the GPU work launched in each.\n"
            "Phase rules: --class-rule PHASE:GLOB (data, forward, backward, optimizer)\n"
            "adds record_function names.\n\noptions:\n" CLI_COMMON_HELP);
}

static void print_table(const char *label, const char *path, const tprof_steps_result *r)
{
    char a[32], b[32], c[32], d[32];
    printf("== %s: %s ==\n", label, path);
    if (!r->nsteps) {
        printf("no ProfilerStep#N spans: the trace was not recorded with a step schedule\n");
        return;
    }
    printf("%zu steps: mean %s, p50 %s, min %s, max %s, spread %.1f%% ((max - min) / mean)\n\n", r->nsteps,
           tprof_fmt_duration(a, sizeof a, r->mean_ns), tprof_fmt_duration(b, sizeof b, r->p50_ns),
           tprof_fmt_duration(c, sizeof c, r->min_ns), tprof_fmt_duration(d, sizeof d, r->max_ns), r->spread * 100);
    const char *hdr[] = { "step", "start", "CPU time", "GPU events", "GPU busy", "GPU time (sum)", "GPU ends after CPU" };
    tprof_table *t = tprof_table_new(7, hdr, "lrrrrrr");
    if (!t) return;
    for (size_t i = 0; i < r->nsteps; i++) {
        const tprof_step_row *s = &r->steps[i];
        char num[32], start[32], cpu[32], ev[32], busy[32], sum[32], lag[32] = "-";
        snprintf(num, sizeof num, "#%" PRId64, s->number);
        snprintf(start, sizeof start, "+%s", tprof_fmt_duration(a, sizeof a, s->ts - r->steps[0].ts));
        tprof_fmt_duration(cpu, sizeof cpu, s->dur);
        snprintf(ev, sizeof ev, "%" PRIu64, s->gpu_events);
        tprof_fmt_duration(busy, sizeof busy, s->gpu_busy_ns);
        tprof_fmt_duration(sum, sizeof sum, s->gpu_total_ns);
        int64_t late = s->gpu_events ? s->gpu_end_ns - tprof_end_ns(s->ts, s->dur) : 0;
        if (late > 0) tprof_fmt_duration(lag, sizeof lag, late);
        const char *cells[] = { num, start, cpu, ev, busy, sum, lag };
        tprof_table_row(t, cells);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    if (!r->phases_found) {
        printf("\nphases: no phase markers (record_function names, DataLoader, Optimizer, autograd) in the steps\n");
        return;
    }
    int64_t cpu = 0, gpu = 0;
    for (int p = 0; p < TPROF_PHASE_COUNT; p++) {
        cpu = tprof_sat_add(cpu, r->phase_cpu_ns[p]);
        gpu = tprof_sat_add(gpu, r->phase_gpu_ns[p]);
    }
    printf("\nphases over all steps (CPU time of the step spans; GPU time of the work launched in each):\n");
    for (int p = 0; p < TPROF_PHASE_COUNT; p++)
        printf("  %-9s  CPU %9s %5.1f%%   GPU %9s %5.1f%%\n", tprof_phase_name((tprof_phase)p),
               tprof_fmt_duration(a, sizeof a, r->phase_cpu_ns[p]),
               cpu ? 100.0 * (double)r->phase_cpu_ns[p] / (double)cpu : 0.0,
               tprof_fmt_duration(b, sizeof b, r->phase_gpu_ns[p]),
               gpu ? 100.0 * (double)r->phase_gpu_ns[p] / (double)gpu : 0.0);
}

static void print_json(tprof_jw *w, const char *label, const char *path, const tprof_steps_result *r)
{
    cli_json_begin(w, label, path);
    tprof_jw_kuint(w, "steps_count", r->nsteps);
    tprof_jw_kint(w, "mean_ns", r->mean_ns);
    tprof_jw_kint(w, "p50_ns", r->p50_ns);
    tprof_jw_kint(w, "min_ns", r->min_ns);
    tprof_jw_kint(w, "max_ns", r->max_ns);
    tprof_jw_kdouble(w, "spread", r->spread);
    tprof_jw_kbool(w, "phases_found", r->phases_found);
    tprof_jw_key(w, "steps");
    tprof_jw_arr(w);
    for (size_t i = 0; i < r->nsteps; i++) {
        const tprof_step_row *s = &r->steps[i];
        tprof_jw_obj(w);
        tprof_jw_kint(w, "number", s->number);
        tprof_jw_kint(w, "ts_ns", s->ts);
        tprof_jw_kint(w, "dur_ns", s->dur);
        tprof_jw_kuint(w, "gpu_events", s->gpu_events);
        tprof_jw_kint(w, "gpu_total_ns", s->gpu_total_ns);
        tprof_jw_kint(w, "gpu_busy_ns", s->gpu_busy_ns);
        tprof_jw_kint(w, "gpu_end_ns", s->gpu_end_ns);
        tprof_jw_key(w, "phases");
        tprof_jw_obj(w);
        for (int p = 0; p < TPROF_PHASE_COUNT; p++) {
            tprof_jw_key(w, tprof_phase_name((tprof_phase)p));
            tprof_jw_obj(w);
            tprof_jw_kint(w, "cpu_ns", s->phase_cpu_ns[p]);
            tprof_jw_kint(w, "gpu_ns", s->phase_gpu_ns[p]);
            tprof_jw_obj_end(w);
        }
        tprof_jw_obj_end(w);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
    tprof_jw_obj_end(w);
}

static int each(void *ctx, const tprof_trace *t, cli_out *out)
{
    (void)ctx;
    tprof_steps_result *r;
    int rc = tprof_steps(t, &r);
    if (rc) return rc;
    if (out->fmt == FMT_TABLE) {
        if (out->shown) printf("\n");
        print_table(out->label, out->path, r);
    } else if (out->fmt == FMT_JSON)
        print_json(&out->jw, out->label, out->path, r);
    else
        for (size_t k = 0; k < r->nsteps; k++) {
            const tprof_step_row *s = &r->steps[k];
            tprof_csv_field(stdout, out->label);
            fputc(',', stdout);
            tprof_csv_field(stdout, out->path);
            printf(",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "\n", s->number,
                   s->ts, s->dur, s->gpu_events, s->gpu_total_ns, s->gpu_busy_ns, s->gpu_end_ns);
        }
    tprof_steps_free(r);
    return 0;
}

int cmd_steps(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = TPROF_STEPS_KEEP, .each = each,
        .csv_header = "trace,file,step,ts_ns,dur_ns,gpu_events,gpu_total_ns,gpu_busy_ns,gpu_end_ns",
    };
    return cli_run(argc, argv, &spec, NULL);
}
