/* trainprof summary: the first screen on a new profile. One read of each
 * rank's trace, every analysis over the same model. */
#include <getopt.h>
#include <pthread.h>
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
            "usage: trainprof summary [options] TRACE...\n\n"
            "Where the time goes, on one rank or many (one trace per rank): run facts,\n"
            "step time, phase split, temporal breakdown, communication, top kernels,\n"
            "ranks, advice.\n"
            "Ranks are compared by step number and by durations, so their clocks need no\n"
            "alignment. --format json gives all of it.\n\n"
            "options:\n"
            "  --top N               kernels listed (default 10)\n" CLI_COMMON_HELP);
}

typedef struct {
    const tprof_trace *t;
    tprof_steps_result *steps;
    tprof_temporal_result temporal;
    tprof_comm_result *comm;
} rank_view;

static void print_text(rank_view *v, size_t n, const tprof_kernels_result *k, const tprof_ranks_result *rk,
                       const tprof_advice *adv, size_t top)
{
    char a[32], b[32], c[32], d[32];
    const tprof_trace_meta *m0 = tprof_trace_meta_get(v[0].t);
    printf("== run ==\n");
    printf("%zu trace%s", n, n == 1 ? "" : "s");
    if (m0->world_size > 0) printf(", world size %" PRId64, m0->world_size);
    if (m0->backend) printf(", backend %s", m0->backend);
    if (m0->ndevices) printf(", %s", m0->devices[0].name);
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        const tprof_trace_meta *m = tprof_trace_meta_get(v[i].t);
        char label[64];
        cli_trace_label(v[i].t, (int)i, label, sizeof label);
        printf("  %s: %s, %" PRIu64 " events, %zu steps%s\n", label, m->path, m->nevents, m->nsteps,
               m->truncated ? " (TRUNCATED)" : "");
    }
    printf("\n== steps ==\n");
    for (size_t i = 0; i < n; i++) {
        const tprof_steps_result *s = v[i].steps;
        char label[64];
        cli_trace_label(v[i].t, (int)i, label, sizeof label);
        if (!s->nsteps) printf("  %s: no ProfilerStep spans\n", label);
        else
            printf("  %s: %zu steps, mean %s, p50 %s, min %s, max %s (spread %.1f%%)\n", label, s->nsteps,
                   tprof_fmt_duration(a, sizeof a, s->mean_ns), tprof_fmt_duration(b, sizeof b, s->p50_ns),
                   tprof_fmt_duration(c, sizeof c, s->min_ns), tprof_fmt_duration(d, sizeof d, s->max_ns),
                   s->spread * 100);
    }
    printf("\n== phases (share of step time on the CPU / of the GPU work launched) ==\n");
    for (size_t i = 0; i < n; i++) {
        const tprof_steps_result *s = v[i].steps;
        char label[64];
        cli_trace_label(v[i].t, (int)i, label, sizeof label);
        if (!s->phases_found) {
            printf("  %s: no phase markers in the steps\n", label);
            continue;
        }
        int64_t cpu = 0, gpu = 0;
        for (int p = 0; p < TPROF_PHASE_COUNT; p++) {
            cpu = tprof_sat_add(cpu, s->phase_cpu_ns[p]);
            gpu = tprof_sat_add(gpu, s->phase_gpu_ns[p]);
        }
        printf("  %s:", label);
        for (int p = 0; p < TPROF_PHASE_COUNT; p++)
            printf(" %s %.0f%%/%.0f%%%s", tprof_phase_name((tprof_phase)p), cli_pct(s->phase_cpu_ns[p], cpu),
                   cli_pct(s->phase_gpu_ns[p], gpu), p + 1 < TPROF_PHASE_COUNT ? "," : "\n");
    }
    printf("\n== GPU time (temporal breakdown, HTA's definitions) ==\n");
    for (size_t i = 0; i < n; i++) {
        const tprof_temporal_result *t = &v[i].temporal;
        char label[64];
        cli_trace_label(v[i].t, (int)i, label, sizeof label);
        if (!t->events) {
            printf("  %s: no GPU events\n", label);
            continue;
        }
        printf("  %s: span %s: idle %.1f%%, compute %.1f%%, non-compute %.1f%%%s\n", label,
               tprof_fmt_duration(a, sizeof a, t->span_ns), cli_pct(t->idle_ns, t->span_ns),
               cli_pct(t->compute_ns, t->span_ns), cli_pct(t->non_compute_ns, t->span_ns),
               t->last_step_excluded ? " (last step left out)" : "");
    }
    printf("\n== communication ==\n");
    for (size_t i = 0; i < n; i++) {
        const tprof_comm_result *cm = v[i].comm;
        char label[64];
        cli_trace_label(v[i].t, (int)i, label, sizeof label);
        for (size_t y = 0; y < cm->ncalls && y < 3; y++) {
            const tprof_comm_call *x = &cm->calls[y];
            printf("  %s: %s: %" PRIu64 " calls, %s", label, x->name, x->calls, tprof_fmt_bytes(a, sizeof a, x->bytes));
            if (x->matched) printf(", busbw %.1f GB/s", x->busbw);
            printf("\n");
        }
        if (!cm->comm_ns) {
            printf("  %s: no communication kernels\n", label);
            continue;
        }
        printf("  %s: %s, %.0f%% overlapped with compute, exposed %s", label,
               tprof_fmt_duration(a, sizeof a, cm->comm_ns), cm->overlap * 100,
               tprof_fmt_duration(b, sizeof b, cm->exposed_ns));
        for (size_t y = 0; y < cm->ntypes && y < 3; y++)
            printf("%s%s %s", y ? ", " : "; ", cm->types[y].type, tprof_fmt_duration(c, sizeof c, cm->types[y].time_ns));
        printf("\n");
    }
    printf("\n== top kernels (all traces) ==\n");
    if (!k->nrows) printf("  no GPU events\n");
    for (size_t i = 0; i < k->nrows && i < top; i++) {
        char name[72];
        const char *key = k->rows[i].key;
        size_t len = strlen(key);
        if (len > 70) snprintf(name, sizeof name, "%.45s...%s", key, key + len - 22);
        else snprintf(name, sizeof name, "%s", key);
        printf("  %5.1f%%  %-9s  %-13s  %s\n", k->rows[i].share * 100,
               tprof_fmt_duration(a, sizeof a, k->rows[i].total_ns), tprof_class_name(k->rows[i].klass), name);
    }
    if (rk) {
        printf("\n== ranks ==\n");
        if (rk->straggler >= 0)
            printf("  straggler: rank %" PRId64 " (compute %.0f%% above the other ranks' median, waits least)\n",
                   rk->ranks[rk->straggler].rank, rk->straggler_excess * 100);
        else
            printf("  no straggler\n");
        if (rk->common_steps)
            printf("  step-time skew: max %s (ProfilerStep#%" PRId64 "), mean %s over %zu common steps\n",
                   tprof_fmt_duration(a, sizeof a, rk->skew_max_ns), rk->skew_max_step,
                   tprof_fmt_duration(b, sizeof b, rk->skew_mean_ns), rk->common_steps);
    }
    printf("\n== advice ==\n");
    cli_print_advice(adv, FMT_TABLE, NULL);
}

static void print_json(rank_view *v, size_t n, const tprof_kernels_result *k, const tprof_ranks_result *rk,
                       const tprof_advice *adv, size_t top)
{
    tprof_jw w;
    tprof_jw_init(&w, stdout);
    tprof_jw_obj(&w);
    tprof_jw_key(&w, "traces");
    tprof_jw_arr(&w);
    for (size_t i = 0; i < n; i++) {
        const tprof_trace_meta *m = tprof_trace_meta_get(v[i].t);
        const tprof_steps_result *s = v[i].steps;
        const tprof_temporal_result *t = &v[i].temporal;
        const tprof_comm_result *cm = v[i].comm;
        char label[64];
        cli_trace_label(v[i].t, (int)i, label, sizeof label);
        cli_json_begin(&w, label, m->path);
        tprof_jw_kint(&w, "rank", m->rank);
        tprof_jw_kuint(&w, "events", m->nevents);
        tprof_jw_kbool(&w, "truncated", m->truncated);
        tprof_jw_key(&w, "steps");
        tprof_jw_obj(&w);
        tprof_jw_kuint(&w, "count", s->nsteps);
        tprof_jw_kint(&w, "mean_ns", s->mean_ns);
        tprof_jw_kint(&w, "p50_ns", s->p50_ns);
        tprof_jw_kint(&w, "min_ns", s->min_ns);
        tprof_jw_kint(&w, "max_ns", s->max_ns);
        tprof_jw_kdouble(&w, "spread", s->spread);
        tprof_jw_obj_end(&w);
        tprof_jw_key(&w, "phases");
        if (s->phases_found) {
            tprof_jw_obj(&w);
            for (int p = 0; p < TPROF_PHASE_COUNT; p++) {
                tprof_jw_key(&w, tprof_phase_name((tprof_phase)p));
                tprof_jw_obj(&w);
                tprof_jw_kint(&w, "cpu_ns", s->phase_cpu_ns[p]);
                tprof_jw_kint(&w, "gpu_ns", s->phase_gpu_ns[p]);
                tprof_jw_obj_end(&w);
            }
            tprof_jw_obj_end(&w);
        } else
            tprof_jw_null(&w);
        tprof_jw_key(&w, "temporal");
        tprof_jw_obj(&w);
        tprof_jw_kint(&w, "span_ns", t->span_ns);
        tprof_jw_kint(&w, "idle_ns", t->idle_ns);
        tprof_jw_kint(&w, "compute_ns", t->compute_ns);
        tprof_jw_kint(&w, "non_compute_ns", t->non_compute_ns);
        tprof_jw_kbool(&w, "last_step_excluded", t->last_step_excluded);
        tprof_jw_obj_end(&w);
        tprof_jw_key(&w, "communication");
        tprof_jw_obj(&w);
        tprof_jw_kint(&w, "comm_ns", cm->comm_ns);
        tprof_jw_kint(&w, "overlap_ns", cm->overlap_ns);
        tprof_jw_kint(&w, "exposed_ns", cm->exposed_ns);
        tprof_jw_kdouble(&w, "overlap", cm->overlap);
        tprof_jw_key(&w, "calls");
        tprof_jw_arr(&w);
        for (size_t y = 0; y < cm->ncalls; y++) {
            tprof_jw_obj(&w);
            tprof_jw_kstr(&w, "name", cm->calls[y].name);
            tprof_jw_kuint(&w, "calls", cm->calls[y].calls);
            tprof_jw_kint(&w, "bytes", cm->calls[y].bytes);
            tprof_jw_kdouble(&w, "busbw_gbps", cm->calls[y].busbw);
            tprof_jw_obj_end(&w);
        }
        tprof_jw_arr_end(&w);
        tprof_jw_obj_end(&w);
        tprof_jw_obj_end(&w);
    }
    tprof_jw_arr_end(&w);
    tprof_jw_key(&w, "top_kernels");
    tprof_jw_arr(&w);
    for (size_t i = 0; i < k->nrows && i < top; i++) {
        tprof_jw_obj(&w);
        tprof_jw_kstr(&w, "name", k->rows[i].key);
        tprof_jw_kstr(&w, "class", tprof_class_name(k->rows[i].klass));
        tprof_jw_kuint(&w, "count", k->rows[i].count);
        tprof_jw_kint(&w, "total_ns", k->rows[i].total_ns);
        tprof_jw_kdouble(&w, "share", k->rows[i].share);
        tprof_jw_obj_end(&w);
    }
    tprof_jw_arr_end(&w);
    tprof_jw_key(&w, "ranks");
    if (rk) {
        tprof_jw_obj(&w);
        tprof_jw_key(&w, "straggler");
        if (rk->straggler >= 0) tprof_jw_int(&w, rk->ranks[rk->straggler].rank); else tprof_jw_null(&w);
        tprof_jw_kint(&w, "skew_max_ns", rk->skew_max_ns);
        tprof_jw_kint(&w, "skew_mean_ns", rk->skew_mean_ns);
        tprof_jw_kuint(&w, "common_steps", rk->common_steps);
        tprof_jw_obj_end(&w);
    } else
        tprof_jw_null(&w);
    tprof_jw_key(&w, "advice");
    cli_print_advice(adv, FMT_JSON, &w);
    tprof_jw_obj_end(&w);
}

static int option(void *ctx, int c, const char *arg)
{
    char *end;
    long top = c == 't' ? strtol(arg, &end, 10) : -1;
    if (c != 't' || *end || top < 0) {
        cli_error("--top takes a count, not '%s'", arg);
        return -1;
    }
    *(long *)ctx = top;
    return 0;
}

/* Advice is the heaviest analysis: it runs on a second thread while the
 * others run here (analyses only read the traces). */
typedef struct {
    const tprof_trace *const *tr;
    size_t nt;
    tprof_advice *adv;
    int rc;
} advice_job;

static void *advise_thread(void *arg)
{
    advice_job *j = arg;
    j->rc = tprof_advise(j->tr, j->nt, &j->adv);
    return NULL;
}

static int all(void *ctx, const tprof_trace *const *tr, size_t nt, cli_out *out)
{
    size_t top = (size_t)*(long *)ctx;
    rank_view *v = calloc(nt, sizeof *v);
    tprof_kernels_result **kr = calloc(nt, sizeof *kr);
    tprof_kernels_result *allk = NULL;
    tprof_ranks_result *rk = NULL;
    tprof_advice *adv = NULL;
    int rc = v && kr ? 0 : TPROF_ENOMEM;
    advice_job job = { .tr = tr, .nt = nt };
    pthread_t thread;
    int threaded = !rc && pthread_create(&thread, NULL, advise_thread, &job) == 0;
    for (size_t i = 0; !rc && i < nt; i++) {
        v[i].t = tr[i];
        rc = tprof_steps(tr[i], &v[i].steps);
        if (!rc) rc = tprof_temporal(tr[i], NULL, &v[i].temporal);
        if (!rc) rc = tprof_comm(tr[i], &v[i].comm);
        if (!rc) rc = tprof_kernels(tr[i], NULL, &kr[i]);
    }
    if (!rc) rc = tprof_kernels_combine((const tprof_kernels_result *const *)kr, nt, &allk);
    if (!rc && nt >= 2) rc = tprof_ranks(tr, nt, &rk);
    if (threaded) pthread_join(thread, NULL);
    else if (!rc) advise_thread(&job);
    adv = job.adv;
    if (!rc) rc = job.rc;
    if (!rc) {
        if (out->fmt == FMT_JSON) print_json(v, nt, allk, rk, adv, top);
        else print_text(v, nt, allk, rk, adv, top);
    }
    for (size_t i = 0; v && kr && i < nt; i++) {
        tprof_steps_free(v[i].steps);
        tprof_comm_free(v[i].comm);
        tprof_kernels_free(kr[i]);
    }
    tprof_kernels_free(allk);
    tprof_ranks_free(rk);
    tprof_advice_free(adv);
    free(v);
    free(kr);
    return rc;
}

int cmd_summary(int argc, char **argv)
{
    static const struct option opts[] = { { "top", required_argument, 0, 't' }, { 0, 0, 0, 0 } };
    static const cli_spec spec = { .help = help, .keep = TPROF_ADVICE_KEEP | TPROF_COMM_KEEP, .opts = opts, .option = option, .all = all };
    long top = 10;
    return cli_run(argc, argv, &spec, &top);
}
