/* trainprof log: training logs into per-step metric series, a summary per
 * metric, anomalies, and optionally the series (CSV/JSON) and an SVG plot. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/error.h"
#include "trainprof/log.h"

static void help(FILE *f)
{
    fprintf(f, "usage: trainprof log [options] FILE...\n\n"
               "Reads training logs (JSON lines, VeOmni-style metric dicts, tqdm bars with\n"
               "postfix metrics, llm.c step lines, 'key: value' / 'key=value' lines) into\n"
               "per-step series: a summary per metric (count, mean, p50, min, max, mean after\n"
               "warm-up) and anomalies (NaN/inf, loss and step-time spikes, MFU and throughput\n"
               "drops; docs/METRICS.md, \"trainprof log\"). Each file is reported on its own.\n"
               "gzip and zstd are detected; '-' is stdin. Nothing in a log is executed.\n\n"
               "options:\n"
               "  --series              print the per-step values instead of the summary\n"
               "  --svg FILE            write an SVG plot of MFU, throughput and loss\n"
               "  --format table|csv|json\n"
               "  --color auto|always|never\n");
}

static void fmt_num(char *b, size_t n, double v)
{
    if (isnan(v)) snprintf(b, n, "%s", "nan");
    else if (isinf(v)) snprintf(b, n, "%s", v > 0 ? "inf" : "-inf");
    else snprintf(b, n, "%.6g", v);
}

/* The shortest of %.15g..%.17g that reads back as V. */
static void csv_num(double v)
{
    char b[40];
    if (isfinite(v)) {
        for (int p = 15; p <= 17; p++) {
            snprintf(b, sizeof b, "%.*g", p, v);
            if (strtod(b, NULL) == v) break;
        }
        fputs(b, stdout);
    } else {
        fmt_num(b, sizeof b, v);
        fputs(b, stdout);
    }
}

static void counts_line(const tprof_log *lg)
{
    const tprof_log_counts *c = tprof_log_get_counts(lg);
    printf("lines %llu:", (unsigned long long)c->lines);
    for (int f = 1; f < TPROF_LOG_NFORMATS; f++)
        if (c->parsed[f]) printf(" %llu %s,", (unsigned long long)c->parsed[f], tprof_log_format_name(f));
    printf(" %llu without a metric\n", (unsigned long long)c->skipped);
}

static void table_summary(const tprof_log *lg)
{
    static const char *const hdr[] = { "metric", "points", "nonfinite", "mean", "p50", "min", "max", "steady mean" };
    tprof_table *t = tprof_table_new(8, hdr, "lrrrrrrr");
    if (!t) return;
    tprof_table_limit(t, 0, 48);
    for (size_t i = 0; i < tprof_log_nmetrics(lg); i++) {
        tprof_log_stats s;
        tprof_log_stats_of(lg, i, &s);
        char c[8][48];
        snprintf(c[1], sizeof c[1], "%zu", s.count);
        snprintf(c[2], sizeof c[2], "%zu", s.nonfinite);
        fmt_num(c[3], sizeof c[3], s.mean);
        fmt_num(c[4], sizeof c[4], s.p50);
        fmt_num(c[5], sizeof c[5], s.min);
        fmt_num(c[6], sizeof c[6], s.max);
        fmt_num(c[7], sizeof c[7], s.steady_mean);
        const char *row[] = { tprof_log_metric(lg, i), c[1], c[2], c[3], c[4], c[5], c[6], c[7] };
        tprof_table_row(t, row);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    const tprof_log_anomaly *a;
    size_t na = tprof_log_anomalies(lg, &a);
    printf("\nanomalies: %zu%s\n", na, na ? "" : " (docs/METRICS.md lists the rules)");
    for (size_t i = 0; i < na && i < 50; i++) {
        char v[40], r[40];
        fmt_num(v, sizeof v, a[i].value);
        fmt_num(r, sizeof r, a[i].reference);
        printf("  step %-8lld %-16s %s = %s", (long long)a[i].step, tprof_log_anomaly_name(a[i].kind),
               tprof_log_metric(lg, a[i].metric), v);
        if (!isnan(a[i].reference)) printf(" (median of the previous points %s)", r);
        printf("\n");
    }
    if (na > 50) printf("  ... %zu more (--format json lists all)\n", na - 50);
}

/* Walks the union of steps of all metrics in order. */
typedef struct {
    const tprof_log *lg;
    size_t nm;
    size_t *pos;
} walk;

static int next_step(walk *w, int64_t *step)
{
    int found = 0;
    for (size_t i = 0; i < w->nm; i++) {
        const int64_t *st;
        const double *v;
        size_t n = tprof_log_points(w->lg, i, &st, &v);
        if (w->pos[i] < n && (!found || st[w->pos[i]] < *step)) *step = st[w->pos[i]], found = 1;
    }
    return found;
}

/* The value of metric I at STEP (advancing the walk), or 0 when none. */
static int value_at(walk *w, size_t i, int64_t step, double *v)
{
    const int64_t *st;
    const double *vals;
    size_t n = tprof_log_points(w->lg, i, &st, &vals);
    if (w->pos[i] < n && st[w->pos[i]] == step) {
        *v = vals[w->pos[i]++];
        return 1;
    }
    return 0;
}

static void series(const tprof_log *lg, cli_format fmt, tprof_jw *jw)
{
    walk w = { lg, tprof_log_nmetrics(lg), calloc(tprof_log_nmetrics(lg) + 1, sizeof(size_t)) };
    if (!w.pos) return;
    tprof_table *t = NULL;
    const char **cells = NULL;
    char(*buf)[40] = NULL;
    if (fmt == FMT_TABLE) {
        const char **hdr = calloc(w.nm + 1, sizeof *hdr);
        char *al = calloc(w.nm + 2, 1);
        cells = calloc(w.nm + 1, sizeof *cells);
        buf = calloc(w.nm + 1, sizeof *buf);
        if (hdr && al && cells && buf) {
            hdr[0] = "step";
            for (size_t i = 0; i <= w.nm; i++) {
                if (i) hdr[i] = tprof_log_metric(lg, i - 1);
                al[i] = 'r';
                cells[i] = buf[i];
            }
            t = tprof_table_new((int)w.nm + 1, hdr, al);
        }
        free(hdr);
        free(al);
        if (!t) goto out;
    } else if (fmt == FMT_JSON) {
        tprof_jw_key(jw, "series");
        tprof_jw_arr(jw);
    }
    int64_t step = 0;
    while (next_step(&w, &step)) {
        if (fmt == FMT_TABLE) snprintf(buf[0], sizeof buf[0], "%lld", (long long)step);
        else if (fmt == FMT_CSV) {
            tprof_csv_field(stdout, tprof_log_name(lg));
            printf(",%lld", (long long)step);
        } else {
            tprof_jw_obj(jw);
            tprof_jw_kint(jw, "step", step);
        }
        for (size_t i = 0; i < w.nm; i++) {
            double v;
            int has = value_at(&w, i, step, &v);
            if (fmt == FMT_TABLE) {
                if (has) fmt_num(buf[i + 1], sizeof buf[i + 1], v);
                else buf[i + 1][0] = 0;
            } else if (fmt == FMT_CSV) {
                putchar(',');
                if (has) csv_num(v);
            } else if (has)
                tprof_jw_kdouble(jw, tprof_log_metric(lg, i), v);
        }
        if (fmt == FMT_TABLE) tprof_table_row(t, cells);
        else if (fmt == FMT_CSV) putchar('\n');
        else tprof_jw_obj_end(jw);
    }
    if (fmt == FMT_TABLE) tprof_table_print(t, stdout);
    else if (fmt == FMT_JSON) tprof_jw_arr_end(jw);
out:
    tprof_table_free(t);
    free(cells);
    free(buf);
    free(w.pos);
}

static void json_file(const tprof_log *lg, int with_series, tprof_jw *w)
{
    tprof_jw_obj(w);
    tprof_jw_kstr(w, "file", tprof_log_name(lg));
    const tprof_log_counts *c = tprof_log_get_counts(lg);
    tprof_jw_kuint(w, "lines", c->lines);
    tprof_jw_kuint(w, "lines_without_metric", c->skipped);
    tprof_jw_key(w, "lines_by_format");
    tprof_jw_obj(w);
    for (int f = 1; f < TPROF_LOG_NFORMATS; f++) tprof_jw_kuint(w, tprof_log_format_name(f), c->parsed[f]);
    tprof_jw_obj_end(w);
    tprof_jw_key(w, "metrics");
    tprof_jw_arr(w);
    for (size_t i = 0; i < tprof_log_nmetrics(lg); i++) {
        tprof_log_stats s;
        tprof_log_stats_of(lg, i, &s);
        tprof_jw_obj(w);
        tprof_jw_kstr(w, "name", tprof_log_metric(lg, i));
        tprof_jw_kuint(w, "count", s.count);
        tprof_jw_kuint(w, "nonfinite", s.nonfinite);
        tprof_jw_kdouble(w, "mean", s.mean);
        tprof_jw_kdouble(w, "p50", s.p50);
        tprof_jw_kdouble(w, "min", s.min);
        tprof_jw_kdouble(w, "max", s.max);
        tprof_jw_kuint(w, "warmup", s.warmup);
        tprof_jw_kdouble(w, "steady_mean", s.steady_mean);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
    tprof_jw_key(w, "anomalies");
    tprof_jw_arr(w);
    const tprof_log_anomaly *a;
    size_t na = tprof_log_anomalies(lg, &a);
    for (size_t i = 0; i < na; i++) {
        tprof_jw_obj(w);
        tprof_jw_kstr(w, "kind", tprof_log_anomaly_name(a[i].kind));
        tprof_jw_kstr(w, "metric", tprof_log_metric(lg, a[i].metric));
        tprof_jw_kint(w, "step", a[i].step);
        char v[40];
        fmt_num(v, sizeof v, a[i].value);
        if (isfinite(a[i].value)) tprof_jw_kdouble(w, "value", a[i].value);
        else tprof_jw_kstr(w, "value", v); /* "nan", "inf": JSON has no such numbers */
        tprof_jw_kdouble(w, "reference", a[i].reference);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
    if (with_series) series(lg, FMT_JSON, w);
    tprof_jw_obj_end(w);
}

int cmd_log(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "series", no_argument, 0, 's' },  { "svg", required_argument, 0, 'g' },
        { "format", required_argument, 0, 'f' }, { "color", required_argument, 0, 'c' },
        { "help", no_argument, 0, 'h' },    { 0, 0, 0, 0 },
    };
    cli_format fmt = FMT_TABLE;
    int with_series = 0, c, rc = EXIT_OK;
    const char *svg = NULL;
    optind = 1;
    while (!rc && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 's') with_series = 1;
        else if (c == 'g') svg = optarg;
        else if (c == 'f') {
            if (cli_parse_format(optarg, &fmt)) {
                cli_error("--format '%s': expected table, csv or json", optarg);
                rc = EXIT_USAGE;
            }
        } else if (c == 'c') cli_set_color(optarg);
        else if (c == 'h') {
            help(stdout);
            return EXIT_OK;
        } else rc = EXIT_USAGE;
    }
    if (rc) return rc;
    if (optind >= argc) {
        cli_error("log needs at least one FILE (a training log; '-' is stdin)");
        return EXIT_USAGE;
    }
    int n = argc - optind;
    tprof_log **logs = calloc((size_t)n, sizeof *logs);
    if (!logs) abort();
    size_t nok = 0;
    for (int i = 0; i < n; i++) {
        char err[1024];
        tprof_log *lg = NULL;
        int e = tprof_log_read(&lg, argv[optind + i], err, sizeof err);
        const char *const *warn;
        for (size_t k = 0, nw = lg ? tprof_log_warnings(lg, &warn) : 0; k < nw; k++) cli_warn("%s", warn[k]);
        if (e == TPROF_ETRUNC) {
            cli_warn("%s (results cover the lines before the cut)", err);
            if (rc < EXIT_INPUT) rc = EXIT_TRUNC;
        } else if (e) {
            cli_error("%s", err[0] ? err : tprof_strerror(e));
            rc = EXIT_INPUT;
            tprof_log_free(lg);
            continue;
        }
        logs[nok++] = lg;
    }
    tprof_jw w;
    tprof_jw_init(&w, stdout);
    if (fmt == FMT_JSON) {
        tprof_jw_obj(&w);
        tprof_jw_key(&w, "files");
        tprof_jw_arr(&w);
    } else if (fmt == FMT_CSV) {
        if (with_series) { /* one column per metric of any file */
            printf("file,step");
            for (size_t i = 0; i < nok; i++)
                for (size_t m = 0; m < tprof_log_nmetrics(logs[i]); m++) {
                    putchar(',');
                    tprof_csv_field(stdout, tprof_log_metric(logs[i], m));
                }
            putchar('\n');
        } else
            printf("file,metric,count,nonfinite,mean,p50,min,max,warmup,steady_mean\n");
    }
    size_t col = 0;
    for (size_t i = 0; i < nok; i++) {
        const tprof_log *lg = logs[i];
        if (fmt == FMT_JSON) json_file(lg, with_series, &w);
        else if (fmt == FMT_CSV && with_series) {
            /* each file's metrics have their own columns: pad around them */
            size_t before = col, nm = tprof_log_nmetrics(lg), total = col;
            for (size_t j = i; j < nok; j++) total += tprof_log_nmetrics(logs[j]);
            walk wk = { lg, nm, calloc(nm + 1, sizeof(size_t)) };
            if (!wk.pos) abort();
            int64_t step = 0;
            while (next_step(&wk, &step)) {
                tprof_csv_field(stdout, tprof_log_name(lg));
                printf(",%lld", (long long)step);
                for (size_t k = 0; k < before; k++) putchar(',');
                for (size_t m = 0; m < nm; m++) {
                    double v;
                    putchar(',');
                    if (value_at(&wk, m, step, &v)) csv_num(v);
                }
                for (size_t k = before + nm; k < total; k++) putchar(',');
                putchar('\n');
            }
            free(wk.pos);
            col += nm;
        } else if (fmt == FMT_CSV) {
            for (size_t m = 0; m < tprof_log_nmetrics(lg); m++) {
                tprof_log_stats s;
                tprof_log_stats_of(lg, m, &s);
                tprof_csv_field(stdout, tprof_log_name(lg));
                putchar(',');
                tprof_csv_field(stdout, tprof_log_metric(lg, m));
                printf(",%zu,%zu,", s.count, s.nonfinite);
                const double v[] = { s.mean, s.p50, s.min, s.max };
                for (int k = 0; k < 4; k++) {
                    csv_num(v[k]);
                    putchar(',');
                }
                printf("%zu,", s.warmup);
                csv_num(s.steady_mean);
                putchar('\n');
            }
        } else {
            if (i) printf("\n");
            printf("== %s ==\n", tprof_log_name(lg));
            counts_line(lg);
            printf("\n");
            if (with_series) series(lg, FMT_TABLE, NULL);
            else table_summary(lg);
        }
    }
    if (fmt == FMT_JSON) {
        tprof_jw_arr_end(&w);
        tprof_jw_obj_end(&w);
    }
    if (svg && nok) {
        /* drawn in memory, then written whole: a failed write leaves no partial SVG */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int bad = !f;
        if (f) {
            bad |= tprof_log_svg((const tprof_log *const *)logs, nok, f) != 0;
            bad |= fclose(f) != 0;
        }
        if (bad) cli_error("%s: cannot draw the SVG: out of memory", svg);
        if (bad || cli_write_file(svg, buf, len) != EXIT_OK) rc = EXIT_OUTPUT;
        free(buf);
    }
    for (size_t i = 0; i < nok; i++) tprof_log_free(logs[i]);
    free(logs);
    return rc;
}
