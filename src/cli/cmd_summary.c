/* trainprof summary: the first screen on a new profile. One read of each
 * rank's trace, every analysis over the same model. */
#include <getopt.h>
#include <pthread.h>
#include <inttypes.h>
#include <math.h>
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
            "usage: trainprof summary [options] TRACE...\n\n"
            "Where the time goes, on one rank or many (one trace per rank): run facts,\n"
            "step time, phase split, temporal breakdown, communication, top kernels,\n"
            "ranks, advice.\n"
            "Ranks are compared by step number and by durations, so their clocks need no\n"
            "alignment. --format json gives all of it; --format csv every table in turn,\n"
            "each after a line '# table: NAME' (a trace's parts as traces.steps, ...,\n"
            "their rows after the trace's label).\n\n"
            "options:\n"
            "  --top N               kernels listed (default 10)\n"
            "  --definition D        the GPU-time and overlap headline: trainprof (default) or\n"
            "                        hta (HTA's figures first, trainprof's where they differ)\n" CLI_COMMON_HELP);
}

typedef struct {
    long top;
    tprof_definition headline;
} summary_ctx;

/* One GPU-time line: the shares of SPAN under NAME (empty: the headline). */
static void gpu_time_line(const char *lead, const tprof_rows *t, const char *prefix, int64_t span, const char *tail)
{
    char idle[32], comp[32], non[32];
    snprintf(idle, sizeof idle, "%sidle_ns", prefix);
    snprintf(comp, sizeof comp, "%scompute_ns", prefix);
    snprintf(non, sizeof non, "%snon_compute_ns", prefix);
    printf("%sidle %.1f%%, compute %.1f%%, non-compute %.1f%%%s\n", lead, cli_pct(tprof_rows_int(t, 0, idle), span),
           cli_pct(tprof_rows_int(t, 0, comp), span), cli_pct(tprof_rows_int(t, 0, non), span), tail);
}


static int print(void *ctx, const tprof_result *res, const char *label_, const char *path)
{
    (void)label_, (void)path;
    const summary_ctx *sc = ctx;
    size_t top = (size_t)sc->top;
    int hta_first = sc->headline == TPROF_DEFINITION_HTA;
    char a[32], b[32], c[32], d[32];
    const tprof_rows *tr = tprof_result_table_c(res, 0);
    size_t n = tprof_rows_count(tr);
    printf("== run ==\n");
    printf("%zu trace%s", n, n == 1 ? "" : "s");
    if (n && !tprof_rows_at(tr, 0, "world_size")->null) printf(", world size %" PRId64, tprof_rows_int(tr, 0, "world_size"));
    if (n && !tprof_rows_at(tr, 0, "backend")->null) printf(", backend %s", tprof_rows_at(tr, 0, "backend")->v.s);
    if (n && !tprof_rows_at(tr, 0, "device")->null) printf(", %s", tprof_rows_at(tr, 0, "device")->v.s);
    printf("\n");
    for (size_t i = 0; i < n; i++)
        printf("  %s: %s, %" PRId64 " events, %" PRId64 " steps%s\n", tprof_rows_at(tr, i, "label")->v.s, tprof_rows_at(tr, i, "file")->v.s,
               tprof_rows_int(tr, i, "events"), tprof_rows_int(tr, i, "nsteps"), tprof_rows_int(tr, i, "truncated") ? " (TRUNCATED)" : "");
    printf("\n== steps ==\n");
    for (size_t i = 0; i < n; i++) {
        const tprof_rows *s = tprof_rows_child_c(tr, i, 0);
        const char *label = tprof_rows_at(tr, i, "label")->v.s;
        if (!tprof_rows_int(s, 0, "count")) printf("  %s: no ProfilerStep spans\n", label);
        else
            printf("  %s: %" PRId64 " steps, mean %s, p50 %s, min %s, max %s (spread %.1f%%)\n", label,
                   tprof_rows_int(s, 0, "count"), tprof_fmt_duration(a, sizeof a, tprof_rows_int(s, 0, "mean_ns")),
                   tprof_fmt_duration(b, sizeof b, tprof_rows_int(s, 0, "p50_ns")), tprof_fmt_duration(c, sizeof c, tprof_rows_int(s, 0, "min_ns")),
                   tprof_fmt_duration(d, sizeof d, tprof_rows_int(s, 0, "max_ns")), tprof_rows_real(s, 0, "spread") * 100);
    }
    printf("\n== phases (share of step time on the CPU / of the GPU work launched) ==\n");
    for (size_t i = 0; i < n; i++) {
        const tprof_rows *ph = tprof_rows_child_c(tr, i, 1);
        const char *label = tprof_rows_at(tr, i, "label")->v.s;
        size_t np = tprof_rows_count(ph);
        if (!np) {
            printf("  %s: no phase markers in the steps\n", label);
            continue;
        }
        int64_t cpu = 0, gpu = 0;
        for (size_t p = 0; p < np; p++) {
            cpu = tprof_sat_add(cpu, tprof_rows_int(ph, p, "cpu_ns"));
            gpu = tprof_sat_add(gpu, tprof_rows_int(ph, p, "gpu_ns"));
        }
        printf("  %s:", label);
        for (size_t p = 0; p < np; p++)
            printf(" %s %.0f%%/%.0f%%%s", tprof_rows_at(ph, p, "phase")->v.s, cli_pct(tprof_rows_int(ph, p, "cpu_ns"), cpu),
                   cli_pct(tprof_rows_int(ph, p, "gpu_ns"), gpu), p + 1 < np ? "," : "\n");
    }
    printf("\n== GPU time (temporal breakdown: %s ==\n",
           hta_first ? "HTA's figures; trainprof's where they differ)" : "trainprof's definition; HTA's where it differs)");
    for (size_t i = 0; i < n; i++) {
        const tprof_rows *t = tprof_rows_child_c(tr, i, 2);
        const char *label = tprof_rows_at(tr, i, "label")->v.s;
        if (!tprof_rows_int(t, 0, "events")) {
            printf("  %s: no GPU events\n", label);
            continue;
        }
        int64_t span = tprof_rows_int(t, 0, "span_ns"), hspan = tprof_rows_int(t, 0, "hta_span_ns");
        const char *why = tprof_rows_str(t, 0, "hta_differs");
        int hta = hta_first && !tprof_rows_at(t, 0, "hta_span_ns")->null;
        const char *left_out = tprof_rows_int(t, 0, "last_step_excluded") ? " (last step left out)" : "";
        char lead[160], tail[400];
        snprintf(lead, sizeof lead, "  %s: span %s: %s", label, tprof_fmt_duration(a, sizeof a, hta ? hspan : span),
                 hta ? "HTA: " : "");
        gpu_time_line(lead, t, hta ? "hta_" : "", hta ? hspan : span, hta ? "" : left_out);
        if (why && *why) {
            snprintf(tail, sizeof tail, ": %s", why);
            gpu_time_line(hta ? "    trainprof: " : "    HTA: ", t, hta ? "" : "hta_", hta ? span : hspan, tail);
        }
    }
    printf("\n== communication ==\n");
    for (size_t i = 0; i < n; i++) {
        const tprof_rows *cm = tprof_rows_child_c(tr, i, 3);
        const tprof_rows *calls = tprof_rows_child_c(cm, 0, 0), *types = tprof_rows_child_c(cm, 0, 1);
        const char *label = tprof_rows_at(tr, i, "label")->v.s;
        for (size_t y = 0; y < tprof_rows_count(calls) && y < 3; y++) {
            const tprof_cell *bytes = tprof_rows_at(calls, y, "bytes"), *busbw = tprof_rows_at(calls, y, "busbw_gbps");
            printf("  %s: %s: %" PRId64 " calls, %s", label, tprof_rows_at(calls, y, "name")->v.s, tprof_rows_int(calls, y, "calls"),
                   bytes->null ? "sizes not recorded" : tprof_fmt_bytes(a, sizeof a, bytes->v.i));
            if (tprof_rows_int(calls, y, "matched") && !busbw->null) printf(", busbw %.1f GB/s", busbw->v.d);
            printf("\n");
        }
        if (!tprof_rows_int(cm, 0, "comm_ns")) {
            printf("  %s: no communication kernels\n", label);
            continue;
        }
        double overlap = tprof_rows_real(cm, 0, "overlap"), hta = tprof_rows_real(cm, 0, "hta_overlap");
        int hta_head = hta_first && hta == hta, differ = hta == hta && fabs(hta - overlap) > 0.005;
        printf("  %s: %s, %.0f%% overlapped with compute%s", label,
               tprof_fmt_duration(a, sizeof a, tprof_rows_int(cm, 0, "comm_ns")), (hta_head ? hta : overlap) * 100,
               hta_head ? " (HTA)" : "");
        if (differ) printf(" (%s: %.0f%%)", hta_head ? "trainprof" : "HTA", (hta_head ? overlap : hta) * 100);
        printf(", exposed %s", tprof_fmt_duration(b, sizeof b, tprof_rows_int(cm, 0, "exposed_ns")));
        for (size_t y = 0; y < tprof_rows_count(types) && y < 3; y++)
            printf("%s%s %s", y ? ", " : "; ", tprof_rows_at(types, y, "type")->v.s,
                   tprof_fmt_duration(c, sizeof c, tprof_rows_int(types, y, "time_ns")));
        printf("\n");
    }
    printf("\n== top kernels (all traces) ==\n");
    const tprof_rows *k = tprof_result_table_c(res, 1);
    size_t nk = tprof_rows_count(k) < top ? tprof_rows_count(k) : top;
    if (!nk) printf("  no GPU events\n");
    /* names as tables show them: shortened, distinct, within 70 columns or what the terminal leaves */
    const char **names = malloc((nk ? nk : 1) * sizeof *names);
    char **shown = calloc(nk ? nk : 1, sizeof *shown);
    int wide, columns, numbered = 0;
    tprof_table_layout_get(&wide, &columns);
    int width = columns ? (columns - 37 > 24 ? columns - 37 : 24) : 70;
    if (!names || !shown) {
        free(names);
        free(shown);
        return TPROF_ENOMEM;
    }
    for (size_t i = 0; i < nk; i++) names[i] = tprof_rows_at(k, i, "name")->v.s;
    if (!wide && tprof_names_display(names, nk, width, shown, &numbered)) {
        free(names);
        free(shown);
        return TPROF_ENOMEM;
    }
    for (size_t i = 0; i < nk; i++) {
        const tprof_cell *share = tprof_rows_at(k, i, "share");
        printf("  %5.1f%%  %-9s  %-13s  %s\n", share->null ? 0.0 : share->v.d * 100,
               tprof_fmt_duration(a, sizeof a, tprof_rows_int(k, i, "total_ns")), tprof_rows_at(k, i, "class")->v.s,
               wide ? names[i] : shown[i]);
        free(shown[i]);
    }
    if (numbered) printf("  %s\n", TPROF_NAMES_FOOTNOTE);
    free(names);
    free(shown);
    const tprof_rows *rk = tprof_result_table_c(res, 2);
    if (tprof_rows_count(rk)) {
        printf("\n== ranks ==\n");
        if (!tprof_rows_at(rk, 0, "straggler")->null)
            printf("  straggler: rank %" PRId64 " (compute %.0f%% above the other ranks' median, waits least)\n",
                   tprof_rows_int(rk, 0, "straggler"), tprof_rows_real(rk, 0, "straggler_excess") * 100);
        else
            printf("  no straggler\n");
        if (tprof_rows_int(rk, 0, "common_steps"))
            printf("  step-time skew: max %s (ProfilerStep#%" PRId64 "), mean %s over %" PRId64 " common steps\n",
                   tprof_fmt_duration(a, sizeof a, tprof_rows_int(rk, 0, "skew_max_ns")), tprof_rows_int(rk, 0, "skew_max_step"),
                   tprof_fmt_duration(b, sizeof b, tprof_rows_int(rk, 0, "skew_mean_ns")), tprof_rows_int(rk, 0, "common_steps"));
    }
    printf("\n== advice ==\n");
    return cli_print_findings(tprof_result_table_c(res, 3));
}

static int option(void *ctx, int c, const char *arg)
{
    if (c == 'D') return cli_parse_definition(arg, &((summary_ctx *)ctx)->headline) ? -1 : 0;
    char *end;
    long top = c == 't' ? strtol(arg, &end, 10) : -1;
    if (c != 't' || *end || top < 0) {
        cli_error("--top takes a count, not '%s'", arg);
        return -1;
    }
    ((summary_ctx *)ctx)->top = top;
    return 0;
}

static size_t limit(void *ctx) { return (size_t)((summary_ctx *)ctx)->top; }

/* Advice is the heaviest analysis: it runs on a second thread while the
 * others run here (analyses only read the trace), so that one large trace
 * uses two cores. */
typedef struct {
    const tprof_trace *t;
    tprof_result *findings;
    int rc;
} advice_job;

static void *advise_thread(void *arg)
{
    advice_job *j = arg;
    j->rc = tprof_advise_rank(j->t, &j->findings);
    return NULL;
}

enum { PART_TRACE, PART_KERNELS, PART_FACTS, PART_FINDINGS, NPARTS };

static int analyse(void *ctx, const tprof_trace *t, tprof_result **out)
{
    (void)ctx;
    advice_job job = { .t = t };
    pthread_t thread;
    int threaded = pthread_create(&thread, NULL, advise_thread, &job) == 0;
    tprof_steps_result *steps = NULL;
    tprof_temporal_result temporal;
    tprof_comm_result *comm = NULL;
    tprof_kernels_result *k = NULL;
    int rc = tprof_steps(t, &steps);
    if (!rc) rc = tprof_temporal(t, NULL, &temporal);
    if (!rc) rc = tprof_comm(t, &comm);
    if (!rc) comm->hta_overlap = temporal.hta.computed ? temporal.hta.comm_overlap : NAN; /* one HTA pass */
    if (!rc) rc = tprof_summary_trace(t, steps, &temporal, comm, &out[PART_TRACE]);
    if (!rc) rc = tprof_rank_facts_from(t, comm, &temporal, &out[PART_FACTS]); /* one breakdown */
    if (!rc) rc = tprof_kernels(t, NULL, &k);
    if (!rc) rc = tprof_kernels_tables(k, &out[PART_KERNELS]);
    if (threaded) pthread_join(thread, NULL);
    else advise_thread(&job);
    out[PART_FINDINGS] = job.findings;
    tprof_steps_free(steps);
    tprof_comm_free(comm);
    tprof_kernels_free(k);
    return rc ? rc : job.rc;
}

static int reduce(void *ctx, const tprof_result *const *parts, size_t n, tprof_result **out)
{
    (void)ctx;
    tprof_summary_part *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++)
        p[i] = (tprof_summary_part){ .trace = parts[NPARTS * i + PART_TRACE],
                                     .kernels = parts[NPARTS * i + PART_KERNELS],
                                     .facts = parts[NPARTS * i + PART_FACTS],
                                     .findings = parts[NPARTS * i + PART_FINDINGS] };
    int rc = tprof_summary_reduce(p, n, out);
    free(p);
    return rc;
}

int cmd_summary(int argc, char **argv)
{
    static const struct option opts[] = { { "top", required_argument, 0, 't' },
                                          { "definition", required_argument, 0, 'D' },
                                          { 0, 0, 0, 0 } };
    static const cli_spec spec = {
        .help = help, .keep = TPROF_ADVICE_KEEP | TPROF_COMM_KEEP | TPROF_KEEP_STREAMED, .opts = opts, .option = option,
        .result = &tprof_summary_desc, .analyse = analyse, .nparts = NPARTS, .reduce = reduce, .print = print,
        .limit = limit,
    };
    summary_ctx ctx = { .top = 10 };
    return cli_run(argc, argv, &spec, &ctx);
}
