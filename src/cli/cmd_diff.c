/* trainprof diff: two runs side by side (before/after a change, two ranks,
 * two GPU generations), with a regression check for CI. Two sides do not fit
 * cli_run's one list of traces, so this command has its own loop around the
 * shared helpers. */
#include <dirent.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
            "A side may be several traces (one per rank); a directory stands for all its\n"
            "*.json, *.json.gz and *.json.zst files. Every figure is per ProfilerStep:\n"
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

static int is_trace_name(const char *s)
{
    static const char *const ends[] = { ".json", ".json.gz", ".json.zst" };
    size_t n = strlen(s);
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        size_t k = strlen(ends[i]);
        if (n > k && !strcmp(s + n - k, ends[i])) return 1;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Adds ARG to P: a directory becomes its trace files, in name order.
 * Returns 0, or an exit code after printing why. */
static int add_arg(paths *p, const char *arg)
{
    struct stat st;
    if (strcmp(arg, "-") && stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(arg);
        if (!d) {
            cli_error("%s: cannot open the directory", arg);
            return EXIT_INPUT;
        }
        paths found = { 0 };
        struct dirent *e;
        int rc = 0;
        while (!rc && (e = readdir(d)))
            if (e->d_name[0] != '.' && is_trace_name(e->d_name)) {
                size_t len = strlen(arg) + strlen(e->d_name) + 2;
                char *full = malloc(len);
                if (!full) {
                    rc = EXIT_INPUT;
                    break;
                }
                snprintf(full, len, "%s%s%s", arg, arg[strlen(arg) - 1] == '/' ? "" : "/", e->d_name);
                rc = push(&found, full) ? EXIT_INPUT : 0;
                free(full);
            }
        closedir(d);
        if (!rc && !found.n) {
            cli_error("%s: no *.json, *.json.gz or *.json.zst file in the directory", arg);
            rc = EXIT_INPUT;
        }
        if (found.n) qsort(found.v, (size_t)found.n, sizeof *found.v, cmp_str);
        for (int i = 0; !rc && i < found.n; i++) rc = push(p, found.v[i]) ? EXIT_INPUT : 0;
        paths_free(&found);
        return rc;
    }
    return push(p, arg) ? EXIT_INPUT : 0;
}

/* ---- output ---- */

static const char *const side_name[2] = { "base", "candidate" };

static int metric_shown(const tprof_diff_result *r, int m)
{
    return m < TPROF_DIFF_CPU_DATA || r->side[0].phases_found || r->side[1].phases_found;
}

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

static void print_side_head(const tprof_diff_result *r, int s, const tprof_trace *const *tr, size_t n)
{
    const tprof_diff_side *x = &r->side[s];
    printf("%-10s %zu trace%s, %zu step%s\n", side_name[s], x->traces, x->traces == 1 ? "" : "s", x->steps,
           x->steps == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++) {
        const tprof_trace_meta *m = tprof_trace_meta_get(tr[i]);
        char label[64];
        cli_trace_label(tr[i], (int)i, label, sizeof label);
        printf("  %s: %s, %zu step%s%s%s\n", label, m->path, m->nsteps, m->nsteps == 1 ? "" : "s",
               m->nsteps ? "" : " (no ProfilerStep: counted as one step spanning the trace)",
               m->truncated ? " (TRUNCATED)" : "");
    }
}

static void kernel_table(const tprof_diff_result *r, const size_t *ix, size_t n, const char *title, size_t more)
{
    printf("\n%s\n", title);
    if (!n) {
        printf("  none\n");
        return;
    }
    const char *hdr[] = { "kernel (normalised)", "class", "calls/step", "base", "candidate", "delta", "delta %",
                          "mean base", "mean cand" };
    tprof_table *t = tprof_table_new(9, hdr, "llrrrrrrr");
    if (!t) return;
    tprof_table_limit(t, 0, 70);
    for (size_t i = 0; i < n; i++) {
        const tprof_diff_kernel *k = &r->kernels[ix[i]];
        char calls[64], b[32], c[32], d[32], p[32], mb[32], mc[32];
        snprintf(calls, sizeof calls, "%.3g -> %.3g", k->count_per_step[0], k->count_per_step[1]);
        fmt_ns(b, sizeof b, k->total_per_step[0]);
        fmt_ns(c, sizeof c, k->total_per_step[1]);
        fmt_delta(d, sizeof d, k->delta_ns);
        fmt_pct(p, sizeof p, k->total_per_step[0], k->total_per_step[1]);
        if (k->count[0]) fmt_ns(mb, sizeof mb, k->mean_ns[0]); else snprintf(mb, sizeof mb, "-");
        if (k->count[1]) fmt_ns(mc, sizeof mc, k->mean_ns[1]); else snprintf(mc, sizeof mc, "-");
        const char *cells[] = { k->name, tprof_class_name(k->klass), calls, b, c, d, p, mb, mc };
        tprof_table_row(t, cells);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    if (more > n) printf("... %zu more (--top 0 shows all)\n", more - n);
}

static size_t count_if(const tprof_diff_result *r, int sign)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nkernels; i++)
        n += sign > 0 ? r->kernels[i].delta_ns > 0 : r->kernels[i].delta_ns < 0;
    return n;
}

static void print_table(const tprof_diff_result *r, const tprof_trace *const *tr, size_t nb, size_t nc)
{
    char a[32], b[32], c[32], d[32];
    print_side_head(r, 0, tr, nb);
    print_side_head(r, 1, tr + nb, nc);
    printf("\nper step (each trace's figure / its steps, mean over the side's traces)\n");
    const char *hdr[] = { "metric", "base", "candidate", "delta", "delta %" };
    tprof_table *t = tprof_table_new(5, hdr, "lrrrr");
    for (int m = 0; t && m < TPROF_DIFF_METRICS; m++) {
        if (!metric_shown(r, m)) continue;
        double x = r->side[0].metric[m], y = r->side[1].metric[m];
        const char *cells[] = { tprof_diff_metric_name((tprof_diff_metric)m), fmt_ns(a, sizeof a, x),
                                fmt_ns(b, sizeof b, y), fmt_delta(c, sizeof c, y - x), fmt_pct(d, sizeof d, x, y) };
        tprof_table_row(t, cells);
    }
    for (size_t i = 0; t && i < r->ncomm; i++)
        for (int e = 0; e < 2; e++) {
            const tprof_diff_comm *x = &r->comm[i];
            const double *v = e ? x->exposed_ns : x->time_ns;
            char name[64];
            snprintf(name, sizeof name, "%s %s", e ? "comm_exposed" : "comm", x->type);
            const char *cells[] = { name, fmt_ns(a, sizeof a, v[0]), fmt_ns(b, sizeof b, v[1]),
                                    fmt_delta(c, sizeof c, v[1] - v[0]), fmt_pct(d, sizeof d, v[0], v[1]) };
            tprof_table_row(t, cells);
        }
    if (t) tprof_table_print(t, stdout);
    tprof_table_free(t);
    if (!r->side[0].phases_found && !r->side[1].phases_found) printf("(no phase markers in either run's steps)\n");

    printf("\nkernels by normalised name: %zu in both, %zu only in base, %zu only in candidate; per step,\n"
           "summed over the side's traces and divided by all their steps\n",
           r->matched, r->only_base, r->only_cand);
    kernel_table(r, r->regressions, r->nregressions, "top regressions (total per step grew)", count_if(r, 1));
    kernel_table(r, r->improvements, r->nimprovements, "top improvements (total per step shrank)", count_if(r, -1));
    kernel_table(r, r->gone, r->ngone, "only in base", r->only_base);
    kernel_table(r, r->added, r->nadded, "only in candidate", r->only_cand);
}

static void csv_num(double v)
{
    if (isinf(v)) printf(",%s", v > 0 ? "inf" : "-inf");
    else printf(",%.6f", v);
}

static void csv_row(const char *section, const char *name, const char *klass, double base, double cand)
{
    tprof_csv_field(stdout, section);
    fputc(',', stdout);
    tprof_csv_field(stdout, name);
    fputc(',', stdout);
    tprof_csv_field(stdout, klass);
    csv_num(base);
    csv_num(cand);
    csv_num(cand - base);
    csv_num(tprof_diff_pct(base, cand));
}

#define CSV_HEADER                                                                                                   \
    "section,name,class,base,candidate,delta,delta_pct,base_count,candidate_count,base_count_per_step,"              \
    "candidate_count_per_step,base_mean_ns,candidate_mean_ns,base_variants,candidate_variants,base_top_variant,"     \
    "candidate_top_variant"

static void print_csv(const tprof_diff_result *r)
{
    printf("%s\n", CSV_HEADER);
    static const char *const side_rows[] = { "traces", "steps", "traces_without_steps" };
    for (int i = 0; i < 3; i++) {
        const tprof_diff_side *s = r->side;
        double v[2];
        for (int k = 0; k < 2; k++)
            v[k] = (double)(i == 0 ? s[k].traces : i == 1 ? s[k].steps : s[k].traces_no_steps);
        csv_row("side", side_rows[i], "", v[0], v[1]);
        printf(",,,,,,,,,,\n");
    }
    for (int m = 0; m < TPROF_DIFF_METRICS; m++) {
        csv_row("metric", tprof_diff_metric_name((tprof_diff_metric)m), "", r->side[0].metric[m], r->side[1].metric[m]);
        printf(",,,,,,,,,,\n");
    }
    for (size_t i = 0; i < r->ncomm; i++) {
        csv_row("comm", r->comm[i].type, "communication", r->comm[i].time_ns[0], r->comm[i].time_ns[1]);
        printf(",,,,,,,,,,\n");
        csv_row("comm_exposed", r->comm[i].type, "communication", r->comm[i].exposed_ns[0], r->comm[i].exposed_ns[1]);
        printf(",,,,,,,,,,\n");
    }
    for (size_t i = 0; i < r->nkernels; i++) {
        const tprof_diff_kernel *k = &r->kernels[i];
        csv_row("kernel", k->name, tprof_class_name(k->klass), k->total_per_step[0], k->total_per_step[1]);
        printf(",%" PRIu64 ",%" PRIu64, k->count[0], k->count[1]);
        csv_num(k->count_per_step[0]);
        csv_num(k->count_per_step[1]);
        csv_num(k->mean_ns[0]);
        csv_num(k->mean_ns[1]);
        printf(",%zu,%zu,", k->variants[0], k->variants[1]);
        tprof_csv_field(stdout, k->top[0] ? k->top[0] : "");
        fputc(',', stdout);
        tprof_csv_field(stdout, k->top[1] ? k->top[1] : "");
        fputc('\n', stdout);
    }
}

static void json_pair(tprof_jw *w, const char *name, double base, double cand)
{
    tprof_jw_obj(w);
    tprof_jw_kstr(w, "name", name);
    tprof_jw_kdouble(w, "base", base);
    tprof_jw_kdouble(w, "candidate", cand);
    tprof_jw_kdouble(w, "delta", cand - base);
    tprof_jw_kdouble(w, "delta_pct", tprof_diff_pct(base, cand)); /* null when the base is 0 */
    tprof_jw_obj_end(w);
}

static void json_kernel(tprof_jw *w, const tprof_diff_kernel *k)
{
    tprof_jw_obj(w);
    tprof_jw_kstr(w, "name", k->name);
    tprof_jw_kstr(w, "class", tprof_class_name(k->klass));
    for (int s = 0; s < 2; s++) {
        tprof_jw_key(w, side_name[s]);
        tprof_jw_obj(w);
        tprof_jw_kuint(w, "count", k->count[s]);
        tprof_jw_kint(w, "total_ns", k->total_ns[s]);
        tprof_jw_kdouble(w, "count_per_step", k->count_per_step[s]);
        tprof_jw_kdouble(w, "total_per_step_ns", k->total_per_step[s]);
        tprof_jw_kdouble(w, "mean_ns", k->mean_ns[s]);
        tprof_jw_kuint(w, "variants", k->variants[s]);
        tprof_jw_kstr(w, "top_variant", k->top[s]);
        tprof_jw_obj_end(w);
    }
    tprof_jw_kdouble(w, "delta_per_step_ns", k->delta_ns);
    tprof_jw_kdouble(w, "delta_pct", k->delta_pct);
    tprof_jw_obj_end(w);
}

static void json_list(tprof_jw *w, const char *key, const tprof_diff_result *r, const size_t *ix, size_t n)
{
    tprof_jw_key(w, key);
    tprof_jw_arr(w);
    for (size_t i = 0; i < n; i++) json_kernel(w, &r->kernels[ix[i]]);
    tprof_jw_arr_end(w);
}

typedef struct {
    int on;
    tprof_diff_metric metric;
    double limit, pct;
    int failed;
} check;

static void print_json(const tprof_diff_result *r, const tprof_trace *const *tr, size_t nb, size_t nc, const check *ck)
{
    tprof_jw w;
    tprof_jw_init(&w, stdout);
    tprof_jw_obj(&w);
    for (int s = 0; s < 2; s++) {
        const tprof_diff_side *x = &r->side[s];
        tprof_jw_key(&w, side_name[s]);
        tprof_jw_obj(&w);
        tprof_jw_kuint(&w, "traces", x->traces);
        tprof_jw_kuint(&w, "steps", x->steps);
        tprof_jw_kuint(&w, "traces_without_steps", x->traces_no_steps);
        tprof_jw_kbool(&w, "phases_found", x->phases_found);
        tprof_jw_key(&w, "files");
        tprof_jw_arr(&w);
        size_t from = s ? nb : 0, to = s ? nb + nc : nb;
        for (size_t i = from; i < to; i++) {
            const tprof_trace_meta *m = tprof_trace_meta_get(tr[i]);
            char label[64];
            cli_trace_label(tr[i], (int)(i - from), label, sizeof label);
            cli_json_begin(&w, label, m->path);
            tprof_jw_kuint(&w, "steps", m->nsteps);
            tprof_jw_kbool(&w, "truncated", m->truncated);
            tprof_jw_obj_end(&w);
        }
        tprof_jw_arr_end(&w);
        tprof_jw_obj_end(&w);
    }
    tprof_jw_key(&w, "metrics");
    tprof_jw_arr(&w);
    for (int m = 0; m < TPROF_DIFF_METRICS; m++)
        json_pair(&w, tprof_diff_metric_name((tprof_diff_metric)m), r->side[0].metric[m], r->side[1].metric[m]);
    tprof_jw_arr_end(&w);
    tprof_jw_key(&w, "comm_types");
    tprof_jw_arr(&w);
    for (size_t i = 0; i < r->ncomm; i++) {
        tprof_jw_obj(&w);
        tprof_jw_kstr(&w, "type", r->comm[i].type);
        tprof_jw_key(&w, "time");
        json_pair(&w, "time", r->comm[i].time_ns[0], r->comm[i].time_ns[1]);
        tprof_jw_key(&w, "exposed");
        json_pair(&w, "exposed", r->comm[i].exposed_ns[0], r->comm[i].exposed_ns[1]);
        tprof_jw_obj_end(&w);
    }
    tprof_jw_arr_end(&w);
    tprof_jw_key(&w, "kernels");
    tprof_jw_obj(&w);
    tprof_jw_kuint(&w, "matched", r->matched);
    tprof_jw_kuint(&w, "only_base", r->only_base);
    tprof_jw_kuint(&w, "only_candidate", r->only_cand);
    json_list(&w, "regressions", r, r->regressions, r->nregressions);
    json_list(&w, "improvements", r, r->improvements, r->nimprovements);
    json_list(&w, "only_in_base", r, r->gone, r->ngone);
    json_list(&w, "only_in_candidate", r, r->added, r->nadded);
    tprof_jw_key(&w, "rows");
    tprof_jw_arr(&w);
    for (size_t i = 0; i < r->nkernels; i++) json_kernel(&w, &r->kernels[i]);
    tprof_jw_arr_end(&w);
    tprof_jw_obj_end(&w);
    tprof_jw_key(&w, "check");
    if (ck->on) {
        tprof_jw_obj(&w);
        tprof_jw_kstr(&w, "metric", tprof_diff_metric_name(ck->metric));
        tprof_jw_kdouble(&w, "fail_above_pct", ck->limit);
        tprof_jw_kdouble(&w, "delta_pct", ck->pct);
        tprof_jw_kbool(&w, "failed", ck->failed);
        tprof_jw_obj_end(&w);
    } else
        tprof_jw_null(&w);
    tprof_jw_obj_end(&w);
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
    check ck = { .metric = TPROF_DIFF_STEP_TIME };
    int metric_set = 0, vs = 0, c, rc = EXIT_OK;
    long top = 10;
    optind = 1;
    /* "-": operands come back in order as option 1, so --vs splits them */
    while (!rc && (c = getopt_long(argc, argv, "-h", opts, NULL)) != -1) {
        int common = cli_common_option(c, optarg, &co);
        if (common) {
            if (common < 0) rc = EXIT_USAGE;
            continue;
        }
        char *end;
        switch (c) {
        case 1: rc = add_arg(&side[vs], optarg); break;
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
                cli_error("--metric: unknown metric '%s' (see trainprof diff --help)", optarg);
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

    int nb = side[0].n, nc = side[1].n, n = nb + nc;
    char **all = malloc((size_t)n * sizeof *all);
    tprof_read_result *res = calloc((size_t)n, sizeof *res);
    const tprof_trace **tr = calloc((size_t)n, sizeof *tr);
    if (!all || !res || !tr) {
        free(all);
        free(res);
        free(tr);
        cli_common_free(&co);
        paths_free(&side[0]);
        paths_free(&side[1]);
        return EXIT_INPUT;
    }
    memcpy(all, side[0].v, (size_t)nb * sizeof *all);
    memcpy(all + nb, side[1].v, (size_t)nc * sizeof *all);
    tprof_read_opts ro = { .keep = TPROF_DIFF_KEEP, .classifier = co.cls, .threads = co.threads };
    rc = cli_read_traces(all, n, &ro, res);
    /* what was read of each side, base first */
    size_t tb = 0, tc = 0;
    for (int i = 0; i < nb; i++)
        if (res[i].trace) tr[tb++] = res[i].trace;
    for (int i = nb; i < n; i++)
        if (res[i].trace) tr[tb + tc++] = res[i].trace;
    if (rc == EXIT_USAGE) {
        /* stdin named twice: nothing was read */
    } else if (!tb || !tc) {
        cli_error("nothing to compare: no %s trace could be read", !tb ? "base" : "candidate");
        rc = EXIT_INPUT;
    } else {
        tprof_diff_result *r;
        tprof_diff_opts dop = { .top = (size_t)top };
        int e = tprof_diff(tr, tb, tr + tb, tc, &dop, &r);
        if (e) {
            cli_error("%s", tprof_strerror(e));
            rc = EXIT_INPUT;
        } else {
            if (ck.on) {
                ck.pct = tprof_diff_pct(r->side[0].metric[ck.metric], r->side[1].metric[ck.metric]);
                ck.failed = ck.pct > ck.limit;
            }
            if (co.fmt == FMT_JSON) print_json(r, tr, tb, tc, &ck);
            else if (co.fmt == FMT_CSV) print_csv(r);
            else print_table(r, tr, tb, tc);
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
    for (int i = 0; i < n; i++) tprof_trace_free(res[i].trace);
    free(res);
    free(tr);
    free(all);
    cli_common_free(&co);
    paths_free(&side[0]);
    paths_free(&side[1]);
    return rc;
}
