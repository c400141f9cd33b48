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

/* Column I of row R of T. */
static int64_t num(const tprof_rows *t, size_t r, int c) { return tprof_rows_cell(t, r, (size_t)c)->v.i; }

/* Column NAME of row R of the steps table (ROWS, RD in scope). */
#define ROW(r, name) num(rows, r, tprof_table_col(rd, name))

/* Each step's CPU span and the GPU work launched in it. */
static int print_timeline(const tprof_rows *rows, size_t n)
{
    const tprof_table_desc *rd = tprof_steps_desc.tables[0];
    char a[32];
    const char *hdr[] = { "step", "start", "CPU time", "GPU events", "GPU busy", "GPU time (sum)", "GPU ends after CPU" };
    tprof_table *t = tprof_table_new(7, hdr, "lrrrrrr");
    if (!t) return TPROF_ENOMEM;
    int64_t first_ts = ROW(0, "ts_ns");
    for (size_t i = 0; i < n; i++) {
        char step[32], start[32], cpu[32], ev[32], busy[32], sum[32], lag[32] = "-";
        int64_t ts = ROW(i, "ts_ns"), dur = ROW(i, "dur_ns"), events = ROW(i, "gpu_events");
        snprintf(step, sizeof step, "#%" PRId64, ROW(i, "number"));
        snprintf(start, sizeof start, "+%s", tprof_fmt_duration(a, sizeof a, ts - first_ts));
        tprof_fmt_duration(cpu, sizeof cpu, dur);
        snprintf(ev, sizeof ev, "%" PRId64, events);
        tprof_fmt_duration(busy, sizeof busy, ROW(i, "gpu_busy_ns"));
        tprof_fmt_duration(sum, sizeof sum, ROW(i, "gpu_total_ns"));
        int64_t late = events ? ROW(i, "gpu_end_ns") - tprof_end_ns(ts, dur) : 0;
        if (late > 0) tprof_fmt_duration(lag, sizeof lag, late);
        const char *cells[] = { step, start, cpu, ev, busy, sum, lag };
        tprof_table_row(t, cells);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    return 0;
}

static int print(void *ctx, const tprof_result *res, const char *label, const char *path)
{
    (void)ctx;
    const tprof_table_desc *td = tprof_steps_desc.top, *rd = tprof_steps_desc.tables[0];
    const tprof_rows *top = tprof_result_top_c(res), *rows = tprof_result_table_c(res, 0);
#define TOP(name) num(top, 0, tprof_table_col(td, name))
    char a[32], b[32], c[32], d[32];
    printf("== %s: %s ==\n", label, path);
    size_t n = tprof_rows_count(rows);
    if (!n && TOP("cluster_rows")) {
        printf("msprof-analyze's cluster table: %" PRId64 " rows of many ranks; trainprof ranks compares them\n",
               TOP("cluster_rows"));
        return 0;
    }
    if (!n) {
        printf("no ProfilerStep#N spans: the trace was not recorded with a step schedule\n");
        return 0;
    }
    int table_only = tprof_rows_at(rows, 0, "ts_ns")->null; /* a step_trace_time.csv alone */
    printf("%zu steps: mean %s, p50 %s, min %s, max %s, spread %.1f%% ((max - min) / mean)\n\n", n,
           tprof_fmt_duration(a, sizeof a, TOP("mean_ns")), tprof_fmt_duration(b, sizeof b, TOP("p50_ns")),
           tprof_fmt_duration(c, sizeof c, TOP("min_ns")), tprof_fmt_duration(d, sizeof d, TOP("max_ns")),
           tprof_rows_cell(top, 0, (size_t)tprof_table_col(td, "spread"))->v.d * 100);
    if (table_only)
        printf("the Ascend profiler's step_trace_time.csv alone: each step's window (stage + bubble + preparing), "
               "no timeline\n");
    else if (print_timeline(rows, n))
        return TPROF_ENOMEM;
    /* the device's time in each step's window, as Ascend's step_trace_time.csv splits it */
    static const char *const dev_cols[] = { "computing_ns",  "comm_not_overlapped_ns", "overlapped_ns",
                                            "free_ns",       "bubble_ns",              "preparing_ns" };
    static const char *const dhdr[] = { "step", "computing", "comm not overlapped", "overlapped", "free", "bubble", "preparing" };
    int64_t recorded = TOP("split_recorded");
    printf("\ndevice time in each step's window (Ascend's step_trace_time.csv columns: docs/METRICS.md)%s:\n",
           !recorded                 ? ""
           : recorded == (int64_t)n ? ", the Ascend profiler's own"
                                     : ", the Ascend profiler's own where its step_trace_time.csv has the step");
    tprof_table *dt = tprof_table_new(7, dhdr, "lrrrrrr");
    if (!dt) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char step[32], v[6][32];
        const char *cells[7] = { step };
        snprintf(step, sizeof step, "#%" PRId64, ROW(i, "number"));
        for (int k = 0; k < 6; k++) cells[k + 1] = tprof_fmt_duration(v[k], sizeof v[k], ROW(i, dev_cols[k]));
        tprof_table_row(dt, cells);
    }
    tprof_table_print(dt, stdout);
    tprof_table_free(dt);
    if (table_only) return 0;
    if (!TOP("phases_found")) {
        printf("\nphases: no phase markers (record_function names, DataLoader, Optimizer, autograd) in the steps\n");
        return 0;
    }
    /* the phases over all steps: the sums of each step's */
    int64_t pc[TPROF_PHASE_COUNT] = { 0 }, pg[TPROF_PHASE_COUNT] = { 0 }, cpu = 0, gpu = 0;
    for (size_t i = 0; i < n; i++) {
        const tprof_rows *ph = tprof_rows_child_c(rows, i, 0);
        for (int p = 0; p < TPROF_PHASE_COUNT && p < (int)tprof_rows_count(ph); p++) {
            pc[p] = tprof_sat_add(pc[p], num(ph, (size_t)p, 1));
            pg[p] = tprof_sat_add(pg[p], num(ph, (size_t)p, 2));
        }
    }
    for (int p = 0; p < TPROF_PHASE_COUNT; p++) {
        cpu = tprof_sat_add(cpu, pc[p]);
        gpu = tprof_sat_add(gpu, pg[p]);
    }
    printf("\nphases over all steps (CPU time of the step spans; GPU time of the work launched in each):\n");
    for (int p = 0; p < TPROF_PHASE_COUNT; p++)
        printf("  %-9s  CPU %9s %5.1f%%   GPU %9s %5.1f%%\n", tprof_phase_name((tprof_phase)p),
               tprof_fmt_duration(a, sizeof a, pc[p]), cpu ? 100.0 * (double)pc[p] / (double)cpu : 0.0,
               tprof_fmt_duration(b, sizeof b, pg[p]), gpu ? 100.0 * (double)pg[p] / (double)gpu : 0.0);
#undef TOP
#undef ROW
    return 0;
}

static int analyse(void *ctx, const tprof_trace *t, tprof_result **out)
{
    (void)ctx;
    tprof_steps_result *r;
    int rc = tprof_steps(t, &r);
    if (rc) return rc;
    rc = tprof_steps_tables(r, out);
    tprof_steps_free(r);
    return rc;
}

int cmd_steps(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = TPROF_STEPS_KEEP | TPROF_KEEP_STEP_SPLITS, .result = &tprof_steps_desc, .analyse = analyse,
        .print = print, .accepts = TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_STEPS),
    };
    return cli_run(argc, argv, &spec, NULL);
}
