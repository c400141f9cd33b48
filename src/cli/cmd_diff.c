/* trainprof diff: two runs side by side (before/after a change, two ranks,
 * two GPU generations), with a regression check for CI. Two sides do not fit
 * cli_run's one list of traces, so this command uses its reading half
 * (cli_analyse_inputs: spread over trainprof-mpi's processes when there are
 * any): each trace becomes its part as results (tprof_diff_part_results) on
 * the thread that read it and is freed; the parts wait as bytes and are
 * folded into the comparison one at a time, the base's first, each side in
 * rank order (tprof_diff_fold); the output is the diff result
 * (lib/analysis/diff.c). */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/diff.h"
#include "trainprof/error.h"
#include "trainprof/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: trainprof diff [options] BASE CANDIDATE\n"
            "       trainprof diff [options] BASE... --vs CANDIDATE...\n\n"
            "Compares two runs: step time, phase split, temporal breakdown and\n"
            "communication side by side with deltas; kernels matched by normalised name\n"
            "(template arguments, argument lists, tile shapes and architecture prefixes\n"
            "folded: docs/METRICS.md) with count, total and mean; kernels only in one run;\n"
            "the top regressions and improvements.\n\n"
            "A side may be several traces (one per rank); a directory stands for every\n"
            "trace below it, recognised by its content. Every figure is per ProfilerStep:\n"
            "metrics are per-trace values divided by the trace's steps, then averaged over\n"
            "the side's traces; kernel totals are summed over the side's traces and divided\n"
            "by all their steps. A trace without ProfilerStep counts as one step spanning\n"
            "the whole trace (the output says so).\n\n"
            "options:\n"
            "  --vs                  the traces after it are the candidate run\n"
            "  --top N               rows in the regression, improvement and one-side lists\n"
            "                        (default 10, 0 = all)\n"
            "  --fail-above PCT      exit 1 when the candidate's metric is more than PCT\n"
            "                        percent above the base's (regressed)\n"
            "  --metric NAME         the metric --fail-above checks (default step_time):\n"
            "                        step_time, kernel_time, gpu_busy, gpu_idle, compute,\n"
            "                        non_compute, comm, comm_exposed, cpu_data, cpu_forward,\n"
            "                        cpu_backward, cpu_optimizer, cpu_other, gpu_data,\n"
            "                        gpu_forward, gpu_backward, gpu_optimizer, gpu_other\n"
            "                        (all times per step: larger is worse)\n" CLI_COMMON_HELP
            "\nexit: 0 ok, 1 the --fail-above check failed, 2 usage, 3 bad input,\n"
            "      4 truncated input (the worst code wins)\n");
}

/* ---- arguments ---- */

typedef struct {
    char **v;
    int n, cap;
} paths;

static int push(paths *p, const char *s)
{
    if (p->n == p->cap) {
        int nc = p->cap ? p->cap * 2 : 16;
        char **nv = realloc(p->v, (size_t)nc * sizeof *nv);
        if (!nv) return -1;
        p->v = nv;
        p->cap = nc;
    }
    if (!(p->v[p->n] = strdup(s))) return -1;
    p->n++;
    return 0;
}

static void paths_free(paths *p)
{
    for (int i = 0; i < p->n; i++) free(p->v[i]);
    free(p->v);
}

/* ---- output ---- */

static const char *const side_name[2] = { "base", "candidate" };


static char *fmt_ns(char *buf, size_t len, double ns) { return tprof_fmt_duration(buf, len, (int64_t)llround(ns)); }

static char *fmt_delta(char *buf, size_t len, double ns)
{
    char d[32];
    snprintf(buf, len, "%s%s", ns > 0 ? "+" : ns < 0 ? "-" : "", fmt_ns(d, sizeof d, fabs(ns)));
    return buf;
}

static char *fmt_pct(char *buf, size_t len, double base, double cand)
{
    double p = tprof_diff_pct(base, cand);
    if (isinf(p)) snprintf(buf, len, "new");
    else snprintf(buf, len, "%+.1f%%", p);
    return buf;
}


enum { TB_BASE, TB_CAND, TB_METRICS, TB_COMM, TB_KERNELS, TB_CHECK, TB_CSV, TB_OPS, TB_MODULES, TB_COLL_RUN, TB_COLLS,
       TB_PATH };

/* IDX[0..N) (inputs) sorted by their outcomes' ranks, as every command
 * shows ranks (one of unknown rank by its place in IDX). */
static int rank_order(const cli_outcome *oc, size_t *idx, size_t n)
{
    int64_t *rank = malloc((n ? n : 1) * sizeof *rank);
    size_t *order = malloc((n ? n : 1) * sizeof *order), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    int rc = rank && order && tmp ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) rank[i] = oc[idx[i]].rank;
    if (!rc) rc = tprof_rank_order(rank, n, order);
    for (size_t i = 0; !rc && i < n; i++) tmp[i] = idx[order[i]];
    if (!rc) memcpy(idx, tmp, n * sizeof *idx);
    free(rank);
    free(order);
    free(tmp);
    return rc;
}

static void print_side_head(const tprof_result *res, int s)
{
    const tprof_rows *x = tprof_result_table_c(res, s ? TB_CAND : TB_BASE), *files = tprof_rows_child_c(x, 0, 0);
    int64_t traces = tprof_rows_int(x, 0, "traces"), steps = tprof_rows_int(x, 0, "steps");
    printf("%-10s %" PRId64 " trace%s, %" PRId64 " step%s\n", side_name[s], traces, traces == 1 ? "" : "s", steps,
           steps == 1 ? "" : "s");
    size_t nf = tprof_rows_count(files);
    if (cli_across(nf)) { /* the rank set and the files that stand out, not a line each */
        int64_t *ranks = malloc(nf * sizeof *ranks);
        size_t k = 0, odd = 0;
        for (size_t i = 0; ranks && i < nf; i++) {
            const char *label = tprof_rows_at(files, i, "label")->v.s;
            if (!strncmp(label, "rank ", 5)) ranks[k++] = strtoll(label + 5, NULL, 10);
        }
        char set[160] = "";
        if (ranks && k) tprof_fmt_rank_set(set, sizeof set, ranks, k, NULL, 0);
        printf("  %s%s%zu traces: %s ... %s (%s)\n", set, *set ? "; " : "", nf, tprof_rows_at(files, 0, "file")->v.s,
               tprof_rows_at(files, nf - 1, "file")->v.s, CLI_ACROSS_HINT);
        for (size_t i = 0; i < nf; i++)
            if (!tprof_rows_int(files, i, "steps") || tprof_rows_int(files, i, "truncated")) {
                if (odd++ < CLI_RANKS_WORST)
                    printf("  %s: %s%s%s\n", tprof_rows_at(files, i, "label")->v.s, tprof_rows_at(files, i, "file")->v.s,
                           tprof_rows_int(files, i, "steps") ? "" : " (no ProfilerStep)",
                           tprof_rows_int(files, i, "truncated") ? " (TRUNCATED)" : "");
            }
        if (odd > CLI_RANKS_WORST) printf("  ... %zu traces without steps or truncated in all\n", odd);
        free(ranks);
        return;
    }
    for (size_t i = 0; i < nf; i++) {
        int64_t n = tprof_rows_int(files, i, "steps");
        printf("  %s: %s, %" PRId64 " step%s%s%s\n", tprof_rows_at(files, i, "label")->v.s, tprof_rows_at(files, i, "file")->v.s, n,
               n == 1 ? "" : "s", n ? "" : " (no ProfilerStep: counted as one step spanning the trace)",
               tprof_rows_int(files, i, "truncated") ? " (TRUNCATED)" : "");
    }
}

static void kernel_table(const tprof_rows *k, const char *title, size_t more)
{
    printf("\n%s\n", title);
    size_t n = tprof_rows_count(k);
    if (!n) {
        printf("  none\n");
        return;
    }
    const char *hdr[] = { "kernel (normalised)", "class", "calls/step", "base", "candidate", "delta", "delta %",
                          "mean base", "mean cand" };
    tprof_table *t = tprof_table_new(9, hdr, "llrrrrrrr");
    if (!t) return;
    tprof_table_limit(t, 0, 70);
    tprof_table_names(t, 0);
    for (size_t i = 0; i < n; i++) {
        const tprof_rows *sb = tprof_rows_child_c(k, i, 0), *sc = tprof_rows_child_c(k, i, 1);
        char calls[64], b[32], c[32], d[32], p[32], mb[32], mc[32];
        double tb = tprof_rows_real(sb, 0, "total_per_step_ns"), tc = tprof_rows_real(sc, 0, "total_per_step_ns");
        snprintf(calls, sizeof calls, "%.3g -> %.3g", tprof_rows_real(sb, 0, "count_per_step"), tprof_rows_real(sc, 0, "count_per_step"));
        fmt_ns(b, sizeof b, tb);
        fmt_ns(c, sizeof c, tc);
        fmt_delta(d, sizeof d, tprof_rows_real(k, i, "delta_per_step_ns"));
        fmt_pct(p, sizeof p, tb, tc);
        if (tprof_rows_int(sb, 0, "count")) fmt_ns(mb, sizeof mb, tprof_rows_real(sb, 0, "mean_ns")); else snprintf(mb, sizeof mb, "-");
        if (tprof_rows_int(sc, 0, "count")) fmt_ns(mc, sizeof mc, tprof_rows_real(sc, 0, "mean_ns")); else snprintf(mc, sizeof mc, "-");
        const char *cells[] = { tprof_rows_at(k, i, "name")->v.s, tprof_rows_at(k, i, "class")->v.s, calls, b, c, d, p, mb, mc };
        tprof_table_row(t, cells);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    if (more > n) printf("... %zu more (--top 0 shows all)\n", more - n);
}

/* Kernel rows whose total per step grew (SIGN > 0) or shrank (< 0). */
static size_t count_if(const tprof_rows *rows, int sign)
{
    size_t n = 0;
    for (size_t i = 0; i < tprof_rows_count(rows); i++) {
        double d = tprof_rows_real(rows, i, "delta_per_step_ns");
        n += sign > 0 ? d > 0 : d < 0;
    }
    return n;
}

/* The ops (or modules) that changed most, per step: the first TOP rows. */
static void op_delta_table(const tprof_rows *rows, const char *title, int module, size_t top)
{
    size_t n = 0; /* the rows that changed: they come first */
    while (n < tprof_rows_count(rows) && tprof_rows_real(rows, n, "delta_ns") != 0) n++;
    size_t shown = top && top < n ? top : n;
    if (!tprof_rows_count(rows)) return; /* neither run launched an op: nothing to say */
    printf("\n%s\n", title);
    if (!n) {
        printf("  none changed\n");
        return;
    }
    const char *hdr[] = { module ? "module" : "op", "input dims", "base", "candidate", "delta", "delta %", "mean base",
                          "mean cand" };
    size_t off = module ? 1 : 0; /* modules have no dims column */
    const char *h2[8];
    for (size_t i = 0, k = 0; i < 8; i++)
        if (!(module && i == 1)) h2[k++] = hdr[i];
    tprof_table *t = tprof_table_new(8 - (int)off, h2, module ? "lrrrrrr" : "llrrrrrr");
    if (!t) return;
    tprof_table_limit(t, 0, module ? 72 : 40);
    if (!module) tprof_table_limit(t, 1, 48);
    for (size_t i = 0; i < shown; i++) {
        char b[32], c[32], d[32], p[32], mb[32], mc[32];
        double x = tprof_rows_real(rows, i, "base_ns"), y = tprof_rows_real(rows, i, "candidate_ns");
        const tprof_cell *xm = tprof_rows_at(rows, i, "base_mean_ns"), *ym = tprof_rows_at(rows, i, "candidate_mean_ns");
        const char *cells[8] = { module ? tprof_rows_str(rows, i, "module") : tprof_rows_str(rows, i, "op"),
                                 tprof_rows_str(rows, i, "input_dims"), fmt_ns(b, sizeof b, x), fmt_ns(c, sizeof c, y),
                                 fmt_delta(d, sizeof d, y - x), fmt_pct(p, sizeof p, x, y),
                                 xm->null ? "-" : fmt_ns(mb, sizeof mb, xm->v.d),
                                 ym->null ? "-" : fmt_ns(mc, sizeof mc, ym->v.d) };
        const char *row[8];
        for (size_t k = 0, j = 0; k < 8; k++)
            if (!(module && k == 1)) row[j++] = cells[k];
        tprof_table_row(t, row);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    if (shown < n) printf("... %zu more (--top 0 shows all)\n", n - shown);
}

static char *fmt_ns_or_none(char *buf, size_t len, const tprof_cell *c)
{
    if (c->null) snprintf(buf, len, "-");
    else fmt_ns(buf, len, c->v.d);
    return buf;
}

static char *fmt_rate(char *buf, size_t len, const tprof_cell *c)
{
    if (c->null) snprintf(buf, len, "-");
    else snprintf(buf, len, "%.1f", c->v.d);
    return buf;
}

/* Each side's collectives matched across its ranks, and those that changed most. */
static void collective_tables(const tprof_result *res, size_t top)
{
    const tprof_rows *run = tprof_result_table_c(res, TB_COLL_RUN), *rows = tprof_result_table_c(res, TB_COLLS);
    if (!tprof_rows_count(run)) return; /* no side has two ranks with collectives to match */
    printf("\ncollectives matched across each side's ranks (trainprof collectives), per step\n");
    for (size_t i = 0; i < tprof_rows_count(run); i++) {
        char a[32], b[32];
        printf("  %-9s %" PRId64 " matched (by %s) over %" PRId64 " common step(s); a rank waits %s per step; ",
               tprof_rows_str(run, i, "side"), tprof_rows_int(run, i, "matched"), tprof_rows_str(run, i, "matching"),
               tprof_rows_int(run, i, "common_steps"), fmt_ns(a, sizeof a, tprof_rows_real(run, i, "wait_per_step_ns")));
        if (tprof_rows_at(run, i, "straggler")->null) printf("no straggler\n");
        else
            printf("straggler rank %" PRId64 ", costing the others %s per step\n", tprof_rows_int(run, i, "straggler"),
                   fmt_ns(b, sizeof b, tprof_rows_real(run, i, "straggler_cost_per_step_ns")));
    }
    size_t n = tprof_rows_count(rows), shown = top && top < n ? top : n;
    if (!n) return;
    const char *hdr[] = { "collective", "dtype", "size", "base", "candidate", "delta", "delta %",
                          "busbw base", "busbw cand", "wait base", "wait cand" };
    tprof_table *t = tprof_table_new(11, hdr, "llrrrrrrrrr");
    if (!t) return;
    for (size_t i = 0; i < shown; i++) {
        char name[160], size[32], b[32], c[32], d[32], p[32], bb[32], cb[32], bw[32], cw[32];
        double x = tprof_rows_real(rows, i, "base_ns"), y = tprof_rows_real(rows, i, "candidate_ns");
        const char *group = tprof_rows_str(rows, i, "group");
        snprintf(name, sizeof name, "%s%s%s", tprof_rows_str(rows, i, "type"), *group ? " group " : "", group);
        const tprof_cell *sz = tprof_rows_at(rows, i, "bytes");
        const char *cells[] = { name, tprof_rows_str(rows, i, "dtype"),
                                sz->null ? "-" : tprof_fmt_bytes(size, sizeof size, sz->v.i), fmt_ns(b, sizeof b, x),
                                fmt_ns(c, sizeof c, y), fmt_delta(d, sizeof d, y - x), fmt_pct(p, sizeof p, x, y),
                                fmt_rate(bb, sizeof bb, tprof_rows_at(rows, i, "base_busbw")),
                                fmt_rate(cb, sizeof cb, tprof_rows_at(rows, i, "candidate_busbw")),
                                fmt_ns_or_none(bw, sizeof bw, tprof_rows_at(rows, i, "base_wait_per_step_ns")),
                                fmt_ns_or_none(cw, sizeof cw, tprof_rows_at(rows, i, "candidate_wait_per_step_ns")) };
        tprof_table_row(t, cells);
    }
    printf("(transfer time: the shortest duration across the ranks, summed; wait: the ranks' waits, summed)\n");
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    if (shown < n) printf("... %zu more (--top 0 shows all)\n", n - shown);
}

/* The critical path per sampled step, by what bounds it. */
static void path_table(const tprof_result *res)
{
    const tprof_rows *p = tprof_result_table_c(res, TB_PATH);
    if (!tprof_rows_count(p)) return;
    static const char *const words[] = { "critical path", "step", "CPU ops", "runtime calls", "launch delays",
                                         "kernel gaps", "GPU compute", "memory copies", "exposed communication" };
    printf("\ncritical path per sampled step (up to 4 a trace, as summary samples them; trainprof critical-path)\n");
    const char *hdr[] = { "", "base", "candidate", "delta", "delta %" };
    tprof_table *t = tprof_table_new(5, hdr, "lrrrr");
    if (!t) return;
    for (size_t i = 0; i < tprof_rows_count(p) && i < sizeof words / sizeof *words; i++) {
        double x = tprof_rows_real(p, i, "base"), y = tprof_rows_real(p, i, "candidate");
        if (i >= 2 && x == 0 && y == 0) continue; /* a bound neither path has */
        char a[32], b[32], c[32], d[32];
        const char *cells[] = { words[i], fmt_ns(a, sizeof a, x), fmt_ns(b, sizeof b, y), fmt_delta(c, sizeof c, y - x),
                                fmt_pct(d, sizeof d, x, y) };
        tprof_table_row(t, cells);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
}

static void print_table(const tprof_result *res, size_t top)
{
    char a[32], b[32], c[32], d[32];
    print_side_head(res, 0);
    print_side_head(res, 1);
    int phases = tprof_rows_int(tprof_result_table_c(res, TB_BASE), 0, "phases_found") ||
                 tprof_rows_int(tprof_result_table_c(res, TB_CAND), 0, "phases_found");
    printf("\nper step (each trace's figure over all its steps, the last one's work kept, / its steps;\n"
           "mean over the side's traces)\n");
    const char *hdr[] = { "metric", "base", "candidate", "delta", "delta %" };
    tprof_table *t = tprof_table_new(5, hdr, "lrrrr");
    const tprof_rows *mt = tprof_result_table_c(res, TB_METRICS);
    for (size_t m = 0; t && m < tprof_rows_count(mt); m++) {
        if (m >= TPROF_DIFF_CPU_DATA && !phases) continue; /* the phase metrics need phase markers */
        double x = tprof_rows_real(mt, m, "base"), y = tprof_rows_real(mt, m, "candidate");
        const char *cells[] = { tprof_rows_at(mt, m, "name")->v.s, fmt_ns(a, sizeof a, x), fmt_ns(b, sizeof b, y),
                                fmt_delta(c, sizeof c, y - x), fmt_pct(d, sizeof d, x, y) };
        tprof_table_row(t, cells);
    }
    const tprof_rows *cm = tprof_result_table_c(res, TB_COMM);
    for (size_t i = 0; t && i < tprof_rows_count(cm); i++)
        for (size_t e = 0; e < 2; e++) {
            const tprof_rows *p = tprof_rows_child_c(cm, i, e);
            double x = tprof_rows_real(p, 0, "base"), y = tprof_rows_real(p, 0, "candidate");
            char name[64];
            snprintf(name, sizeof name, "%s %s", e ? "comm_exposed" : "comm", tprof_rows_at(cm, i, "type")->v.s);
            const char *cells[] = { name, fmt_ns(a, sizeof a, x), fmt_ns(b, sizeof b, y), fmt_delta(c, sizeof c, y - x),
                                    fmt_pct(d, sizeof d, x, y) };
            tprof_table_row(t, cells);
        }
    if (t) tprof_table_print(t, stdout);
    tprof_table_free(t);
    if (!phases) printf("(no phase markers in either run's steps)\n");
    path_table(res);

    const tprof_rows *k = tprof_result_table_c(res, TB_KERNELS), *rows = tprof_rows_child_c(k, 0, 4);
    size_t only_base = (size_t)tprof_rows_int(k, 0, "only_base"), only_cand = (size_t)tprof_rows_int(k, 0, "only_candidate");
    printf("\nkernels by normalised name: %" PRId64 " in both, %zu only in base, %zu only in candidate; per step,\n"
           "summed over the side's traces and divided by all their steps\n",
           tprof_rows_int(k, 0, "matched"), only_base, only_cand);
    kernel_table(tprof_rows_child_c(k, 0, 0), "top regressions (total per step grew)", count_if(rows, 1));
    kernel_table(tprof_rows_child_c(k, 0, 1), "top improvements (total per step shrank)", count_if(rows, -1));
    kernel_table(tprof_rows_child_c(k, 0, 2), "only in base", only_base);
    kernel_table(tprof_rows_child_c(k, 0, 3), "only in candidate", only_cand);
    op_delta_table(tprof_result_table_c(res, TB_OPS),
                   "ops by name and input shapes, largest change first (direct kernel time per step; mean per launch)",
                   0, top);
    op_delta_table(tprof_result_table_c(res, TB_MODULES), "nn.Modules by class path, largest change first", 1, top);
    collective_tables(res, top);
}

/* Each trace's part as results, made on the thread that read it: they
 * travel as bytes to the root (trainprof-mpi), and come back the same way
 * without it. */
static int part_results(void *ctx, const tprof_trace *t, tprof_result **out)
{
    (void)ctx;
    return tprof_diff_part_results(t, out);
}

/* the second result, its collective instances, matched across its side's ranks (by group under trainprof-mpi) */
static const cli_spec part_spec = { .analyse = part_results, .nparts = TPROF_DIFF_PART_RESULTS, .coll_part = 2 };

/* Input I's part from its outcome's bytes in STORE; the matching of its
 * side's collectives joined onto its instances when SPREAD (the side's,
 * trainprof-mpi) says it carries it. 0, or an exit code after saying why. */
static int part_back(cli_store *store, size_t i, const char *path, const cli_coll_matching *spread,
                     tprof_diff_part **out)
{
    char *b = NULL, err[256] = "";
    size_t l = 0;
    tprof_result *r[TPROF_DIFF_PART_RESULTS] = { NULL, NULL };
    int e = cli_store_get(store, i, &b, &l);
    if (!e) e = cli_parts_read(b, l, r, TPROF_DIFF_PART_RESULTS, err, sizeof err);
    if (!e && spread && cli_coll_spread_first(spread) == i && cli_coll_spread_join(spread, r[1])) {
        free(b);
        tprof_result_free(r[0]);
        tprof_result_free(r[1]);
        cli_error("the collectives could not be matched across the processes");
        return EXIT_INPUT;
    }
    if (!e) e = tprof_diff_part_from(r, out);
    free(b);
    tprof_result_free(r[0]);
    tprof_result_free(r[1]);
    if (!e) return 0;
    cli_error("%s: its results could not be read back: %s", path, err[0] ? err : tprof_strerror(e));
    return EXIT_INPUT;
}

/* ---- the command ---- */

int cmd_diff(int argc, char **argv)
{
    static const struct option opts[] = {
        { "vs", no_argument, 0, 'v' }, { "top", required_argument, 0, 't' },
        { "fail-above", required_argument, 0, 'a' }, { "metric", required_argument, 0, 'm' },
        CLI_COMMON_LONGOPTS, { 0, 0, 0, 0 },
    };
    cli_common co = { 0 };
    paths side[2] = { { 0 }, { 0 } };
    tprof_diff_check ck = { .metric = TPROF_DIFF_STEP_TIME };
    int metric_set = 0, vs = 0, c, rc = EXIT_OK;
    long top = 10;
    optind = 0; /* 0, not 1: getopt starts afresh, its ordering mode too (report runs commands in turn) */
    /* "-": operands come back in order as option 1, so --vs splits them */
    while (!rc && (c = cli_getopt(argc, argv, "-h", opts)) != -1) {
        int common = cli_common_option(c, optarg, &co);
        if (common) {
            if (common < 0) rc = EXIT_USAGE;
            continue;
        }
        char *end;
        switch (c) {
        case 1: rc = push(&side[vs], optarg) ? EXIT_INPUT : 0; break;
        case 'v':
            if (vs) {
                cli_error("--vs is given twice");
                rc = EXIT_USAGE;
            }
            vs = 1;
            break;
        case 't':
            top = strtol(optarg, &end, 10);
            if (!*optarg || *end || top < 0) {
                cli_error("--top takes a count (0 = all), not '%s'", optarg);
                rc = EXIT_USAGE;
            }
            break;
        case 'a':
            ck.limit = strtod(optarg, &end);
            if (!*optarg || *end || !(ck.limit >= 0) || isinf(ck.limit)) {
                cli_error("--fail-above takes a percentage (e.g. 5 or 2.5), not '%s'", optarg);
                rc = EXIT_USAGE;
            }
            ck.on = 1;
            break;
        case 'm':
            if (tprof_diff_metric_parse(optarg, &ck.metric)) {
                char names[256] = "";
                for (int m = 0; m < TPROF_DIFF_METRICS; m++) /* the accepted values, from the table itself */
                    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", m ? ", " : "",
                             tprof_diff_metric_name((tprof_diff_metric)m));
                cli_error("--metric must be one of %s, not '%s'", names, optarg);
                rc = EXIT_USAGE;
            }
            metric_set = 1;
            break;
        case 'h':
            help(stdout);
            cli_common_free(&co);
            paths_free(&side[0]);
            paths_free(&side[1]);
            return EXIT_OK;
        default: rc = EXIT_USAGE;
        }
    }
    if (!rc && metric_set && !ck.on) {
        cli_error("--metric chooses what --fail-above checks; give --fail-above PCT too");
        rc = EXIT_USAGE;
    }
    if (!rc && !vs && side[0].n == 2) { /* the two-argument form */
        side[1].v = malloc(sizeof *side[1].v);
        if (!side[1].v) rc = EXIT_INPUT;
        else {
            side[1].v[0] = side[0].v[1];
            side[1].n = side[1].cap = 1;
            side[0].n = 1;
        }
    } else if (!rc && !vs && side[0].n) {
        cli_error("give two traces (BASE CANDIDATE), or several with BASE... --vs CANDIDATE...; got %d without --vs",
                  side[0].n);
        rc = EXIT_USAGE;
    }
    if (!rc && (!side[0].n || !side[1].n)) {
        if (vs || side[0].n) cli_error("each side needs at least one trace (BASE... --vs CANDIDATE...)");
        else help(stderr);
        rc = EXIT_USAGE;
    }
    if (rc) {
        cli_common_free(&co);
        paths_free(&side[0]);
        paths_free(&side[1]);
        return rc;
    }

    /* a directory stands for its traces: the two-argument form is decided on the arguments */
    tprof_inputs in[2] = { { 0 }, { 0 } };
    const cli_engine *engine = cli_get_engine(); /* trainprof-mpi: the traces read where it places them */
    for (int s = 0; s < 2 && !rc; s++) /* --local-files: the union of every process's files */
        rc = engine && engine->inputs ? engine->inputs(engine->ctx, side[s].v, side[s].n, &in[s])
                                      : cli_expand_inputs(side[s].v, side[s].n, CLI_TRACES, &in[s]);
    rc = cli_agree_worst(rc); /* a directory one process cannot list: every process stops */
    if (rc) {
        tprof_inputs_free(&in[0]);
        tprof_inputs_free(&in[1]);
        cli_common_free(&co);
        paths_free(&side[0]);
        paths_free(&side[1]);
        return rc;
    }
    int nb = (int)in[0].npaths, nc = (int)in[1].npaths, n = nb + nc;
    char **all = malloc((size_t)n * sizeof *all);
    cli_outcome *oc = calloc((size_t)n, sizeof *oc);
    size_t *shown = malloc((size_t)n * sizeof *shown); /* each side's inputs to compare, in rank order */
    cli_store *store = NULL;
    tprof_diff_fold *fold = NULL;
    int folded = 0; /* every part is in the fold */
    if (!all || !oc || !shown) {
        free(all);
        free(oc);
        free(shown);
        tprof_inputs_free(&in[0]);
        tprof_inputs_free(&in[1]);
        cli_common_free(&co);
        paths_free(&side[0]);
        paths_free(&side[1]);
        return EXIT_INPUT;
    }
    memcpy(all, in[0].paths, (size_t)nb * sizeof *all);
    memcpy(all + nb, in[1].paths, (size_t)nc * sizeof *all);
    tprof_read_opts ro = { .keep = TPROF_DIFF_KEEP, .classifier = co.cls, .threads = co.threads };
    /* each trace is made into its part where it is read, and freed; a rank on both sides is expected */
    cli_coll_matching *spread[2] = { NULL, NULL };
    rc = cli_analyse_inputs(&part_spec, NULL, all, n, nb, &ro, oc, &store, spread);
    if (!store) goto done; /* not the root (which compares), or some outcome missing (said) */
    /* what was read of each side (a failed read was said where it was read), each in rank order: the order
       trainprof-mpi's matching of the side's collectives takes too (cli_coll_spread) */
    for (int i = 0; rc != EXIT_USAGE && i < n; i++)
        if (oc[i].job_rc && (!oc[i].read_rc || oc[i].read_rc == TPROF_ETRUNC)) {
            cli_error("%s: %s", all[i], tprof_strerror(oc[i].job_rc));
            rc = cli_worse_exit(rc, EXIT_INPUT);
        }
    size_t nside[2] = { 0, 0 };
    for (int s = 0; s < 2 && rc != EXIT_USAGE; s++) {
        size_t lo = s ? (size_t)nb : 0, hi = s ? (size_t)n : (size_t)nb, *list = shown + lo;
        for (size_t i = lo; i < hi; i++) list[i - lo] = i;
        if (rank_order(oc, list, hi - lo)) {
            cli_error("out of memory");
            rc = EXIT_INPUT;
            break;
        }
        for (size_t k = 0; k < hi - lo; k++) {
            const cli_outcome *o = &oc[list[k]];
            if ((!o->read_rc || o->read_rc == TPROF_ETRUNC) && !o->job_rc) list[nside[s]++] = list[k];
        }
    }
    if (rc == EXIT_USAGE) {
        /* stdin named twice: nothing was read */
    } else if (!nside[0] || !nside[1]) {
        cli_error("nothing to compare: no %s trace could be read", !nside[0] ? "base" : "candidate");
        rc = EXIT_INPUT;
    } else if (!(fold = tprof_diff_fold_new(nside))) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
    } else { /* each part read back and folded in, the base's first: one trace's part held at a time */
        int e = 0;
        for (int s = 0; !e && s < 2; s++)
            for (size_t k = 0; !e && k < nside[s]; k++) {
                size_t i = shown[(s ? nb : 0) + k];
                tprof_diff_part *p;
                e = part_back(store, i, all[i], spread[s], &p);
                if (!e && (e = tprof_diff_fold_add(fold, s, p))) {
                    cli_error("%s", tprof_strerror(e));
                    e = EXIT_INPUT;
                }
            }
        if (e) { /* said */
            cli_error("nothing compared: every trace that was read takes part in the comparison");
            rc = cli_worse_exit(rc, e);
        }
        folded = !e;
    }
    cli_store_free(store);
    cli_coll_spread_free(spread[0]);
    cli_coll_spread_free(spread[1]);
    if (folded) {
        tprof_diff_result *r;
        tprof_diff_opts dop = { .top = (size_t)top };
        int e = tprof_diff_fold_end(fold, &dop, &r);
        if (e) {
            cli_error("%s", tprof_strerror(e));
            rc = EXIT_INPUT;
        } else {
            if (ck.on) {
                ck.pct = tprof_diff_pct(r->side[0].metric[ck.metric], r->side[1].metric[ck.metric]);
                ck.failed = ck.pct > ck.limit;
            }
            tprof_result *out;
            e = tprof_diff_tables(r, fold, &ck, &out);
            if (!e) {
                if (co.fmt == FMT_TABLE) print_table(out, (size_t)top);
                else e = cli_print_whole(out, co.fmt, 0);
                tprof_result_free(out);
            }
            if (e) {
                cli_error("%s", tprof_strerror(e));
                rc = EXIT_INPUT;
            }
            if (ck.on) {
                char pct[32], a[32], b[32];
                fmt_pct(pct, sizeof pct, r->side[0].metric[ck.metric], r->side[1].metric[ck.metric]);
                fmt_ns(a, sizeof a, r->side[0].metric[ck.metric]);
                fmt_ns(b, sizeof b, r->side[1].metric[ck.metric]);
                if (ck.failed)
                    cli_error("check failed: %s regressed %s (%s -> %s per step), more than the %g%% allowed",
                              tprof_diff_metric_name(ck.metric), pct, a, b, ck.limit);
                else if (co.fmt == FMT_TABLE)
                    printf("\ncheck passed: %s %s (%s -> %s per step), within the %g%% allowed\n",
                           tprof_diff_metric_name(ck.metric), pct, a, b, ck.limit);
                if (ck.failed && rc == EXIT_OK) rc = EXIT_CHECK;
            }
            tprof_diff_free(r);
        }
    }
done:
    tprof_diff_fold_free(fold);
    for (int i = 0; i < n; i++) cli_outcome_free(&oc[i], NULL, 0);
    free(oc);
    free(shown);
    free(all);
    tprof_inputs_free(&in[0]);
    tprof_inputs_free(&in[1]);
    cli_common_free(&co);
    paths_free(&side[0]);
    paths_free(&side[1]);
    return engine ? engine->agree(engine->ctx, rc) : rc;
}
