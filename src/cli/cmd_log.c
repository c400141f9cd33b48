/* trainprof log: training logs into per-step metric series, a summary per
 * metric, anomalies, and optionally the series (CSV/JSON) and an SVG plot. */
#include <getopt.h>
#include <inttypes.h>
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
               "postfix metrics, llm.c step lines, 'key: value' / 'key=value' lines that name\n"
               "their step: 'step 10: loss=2.31', Megatron's 'iteration 10/100 | lm loss: ...')\n"
               "into per-step series (banners and config lines are not metrics; a file with no\n"
               "metric is exit 3): a summary per metric (count, mean, p50, min, max, mean after\n"
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


enum { TB_FORMATS, TB_METRICS, TB_ANOMALIES, TB_SERIES };

static void counts_line(const tprof_result *r)
{
    const tprof_rows *top = tprof_result_top_c(r), *bf = tprof_result_table_c(r, TB_FORMATS);
    printf("lines %" PRId64 ":", tprof_rows_int(top, 0, "lines"));
    for (size_t f = 0; f < tprof_rows_count(bf); f++)
        if (tprof_rows_int(bf, f, "lines")) printf(" %" PRId64 " %s,", tprof_rows_int(bf, f, "lines"), tprof_rows_at(bf, f, "format")->v.s);
    printf(" %" PRId64 " without a metric\n", tprof_rows_int(top, 0, "lines_without_metric"));
}

static int table_summary(const tprof_result *r)
{
    static const char *const hdr[] = { "metric", "points", "nonfinite", "mean", "p50", "min", "max", "steady mean" };
    static const char *const cols[] = { "count", "nonfinite", "mean", "p50", "min", "max", "steady_mean" };
    tprof_table *t = tprof_table_new(8, hdr, "lrrrrrrr");
    if (!t) return TPROF_ENOMEM;
    tprof_table_limit(t, 0, 48);
    const tprof_rows *mt = tprof_result_table_c(r, TB_METRICS);
    for (size_t i = 0; i < tprof_rows_count(mt); i++) {
        char c[8][48];
        for (size_t k = 0; k < 7; k++) {
            if (k < 2) snprintf(c[k + 1], sizeof c[k + 1], "%" PRId64, tprof_rows_int(mt, i, cols[k]));
            else fmt_num(c[k + 1], sizeof c[k + 1], tprof_rows_real(mt, i, cols[k]));
        }
        const char *row[] = { tprof_rows_at(mt, i, "name")->v.s, c[1], c[2], c[3], c[4], c[5], c[6], c[7] };
        tprof_table_row(t, row);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    const tprof_rows *an = tprof_result_table_c(r, TB_ANOMALIES);
    size_t na = tprof_rows_count(an);
    printf("\nanomalies: %zu%s\n", na, na ? "" : " (docs/METRICS.md lists the rules)");
    for (size_t i = 0; i < na && i < 50; i++) {
        char v[40], ref[40];
        double reference = tprof_rows_real(an, i, "reference");
        fmt_num(v, sizeof v, tprof_rows_real(an, i, "value"));
        fmt_num(ref, sizeof ref, reference);
        printf("  step %-8lld %-16s %s = %s", (long long)tprof_rows_int(an, i, "step"), tprof_rows_at(an, i, "kind")->v.s,
               tprof_rows_at(an, i, "metric")->v.s, v);
        if (!isnan(reference)) printf(" (median of the previous points %s)", ref);
        printf("\n");
    }
    if (na > 50) printf("  ... %zu more (--format json lists all)\n", na - 50);
    return 0;
}

/* The metric index of each series row (the metrics table's order). */
static size_t *series_columns(const tprof_result *r)
{
    const tprof_rows *mt = tprof_result_table_c(r, TB_METRICS), *se = tprof_result_table_c(r, TB_SERIES);
    size_t n = tprof_rows_count(se), nm = tprof_rows_count(mt);
    size_t *col = malloc((n ? n : 1) * sizeof *col);
    for (size_t i = 0; col && i < n; i++) {
        const char *name = tprof_rows_at(se, i, "metric")->v.s;
        size_t m = 0;
        while (m < nm && strcmp(tprof_rows_at(mt, m, "name")->v.s, name)) m++;
        col[i] = m;
    }
    return col;
}

/* The series wide: a row per step, a column per metric. */
static int table_series(const tprof_result *r)
{
    const tprof_rows *mt = tprof_result_table_c(r, TB_METRICS), *se = tprof_result_table_c(r, TB_SERIES);
    size_t nm = tprof_rows_count(mt), n = tprof_rows_count(se);
    const char **hdr = calloc(nm + 1, sizeof *hdr), **cells = calloc(nm + 1, sizeof *cells);
    char *al = calloc(nm + 2, 1);
    char(*buf)[40] = calloc(nm + 1, sizeof *buf);
    size_t *col = series_columns(r);
    tprof_table *t = NULL;
    int rc = hdr && cells && al && buf && col ? 0 : TPROF_ENOMEM;
    if (!rc) {
        hdr[0] = "step";
        for (size_t i = 0; i <= nm; i++) {
            if (i) hdr[i] = tprof_rows_at(mt, i - 1, "name")->v.s;
            al[i] = 'r';
            cells[i] = buf[i];
        }
        if (!(t = tprof_table_new((int)nm + 1, hdr, al))) rc = TPROF_ENOMEM;
    }
    for (size_t i = 0; !rc && i < n;) {
        int64_t step = tprof_rows_int(se, i, "step");
        snprintf(buf[0], sizeof buf[0], "%lld", (long long)step);
        for (size_t m = 1; m <= nm; m++) buf[m][0] = 0;
        for (; i < n && tprof_rows_int(se, i, "step") == step; i++) fmt_num(buf[col[i] + 1], sizeof buf[0], tprof_rows_real(se, i, "value"));
        tprof_table_row(t, cells);
    }
    if (t) tprof_table_print(t, stdout);
    tprof_table_free(t);
    free(hdr);
    free(cells);
    free(al);
    free(buf);
    free(col);
    return rc;
}

/* CSV of every file's series in one table: each file's metrics have their
 * own columns (those of the files before it first), empty elsewhere. */
static int csv_series(const tprof_result *const *rs, const char *const *files, size_t n)
{
    printf("file,step");
    for (size_t i = 0; i < n; i++) {
        const tprof_rows *mt = tprof_result_table_c(rs[i], TB_METRICS);
        for (size_t m = 0; m < tprof_rows_count(mt); m++) {
            putchar(',');
            tprof_csv_field(stdout, tprof_rows_at(mt, m, "name")->v.s);
        }
    }
    putchar('\n');
    size_t total = 0, before = 0;
    for (size_t i = 0; i < n; i++) total += tprof_rows_count(tprof_result_table_c(rs[i], TB_METRICS));
    for (size_t i = 0; i < n; i++) {
        const tprof_rows *se = tprof_result_table_c(rs[i], TB_SERIES);
        const tprof_table_desc *sd = tprof_rows_desc(se);
        int vc = tprof_table_col(sd, "value");
        size_t nm = tprof_rows_count(tprof_result_table_c(rs[i], TB_METRICS)), ns = tprof_rows_count(se);
        size_t *col = series_columns(rs[i]);
        if (!col) return TPROF_ENOMEM;
        for (size_t k = 0; k < ns;) {
            int64_t step = tprof_rows_int(se, k, "step");
            tprof_csv_field(stdout, files[i]);
            printf(",%lld", (long long)step);
            size_t next = 0; /* columns written so far */
            for (; k < ns && tprof_rows_int(se, k, "step") == step; k++) {
                for (; next < before + col[k]; next++) putchar(',');
                putchar(',');
                next++;
                tprof_csv_cell(&sd->cols[vc], tprof_rows_cell(se, k, (size_t)vc), stdout);
            }
            for (; next < total; next++) putchar(',');
            putchar('\n');
        }
        free(col);
        before += nm;
    }
    return 0;
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
    optind = 0; /* 0, not 1: getopt starts afresh, its ordering mode too (report runs commands in turn) */
    while (!rc && (c = cli_getopt(argc, argv, "h", longopts)) != -1) {
        if (c == 's') with_series = 1;
        else if (c == 'g') svg = optarg;
        else if (c == 'f') {
            if (cli_parse_format(optarg, &fmt)) {
                cli_error("--format '%s': expected table, csv or json", optarg);
                rc = EXIT_USAGE;
            }
        } else if (c == 'c') {
            if (cli_set_color(optarg)) rc = EXIT_USAGE;
        }
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
    cli_progress bar; /* a long log takes seconds: the bytes read, on a terminal */
    int shown = cli_progress_begin(&bar, argv + optind, n, NULL);
    for (int i = 0; i < n; i++) {
        char err[4096];
        tprof_log *lg = NULL;
        int e = tprof_log_read_progress(&lg, argv[optind + i], shown ? cli_progress_update : NULL, &bar, err,
                                        sizeof err);
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
    cli_progress_end(&bar);
    tprof_result **res = calloc(nok ? nok : 1, sizeof *res);
    const char **files = calloc(nok ? nok : 1, sizeof *files);
    if (!res || !files) abort();
    for (size_t i = 0; i < nok; i++) {
        files[i] = tprof_log_name(logs[i]);
        if (tprof_log_tables(logs[i], with_series, &res[i])) {
            cli_error("out of memory");
            rc = EXIT_INPUT;
            nok = i;
            break;
        }
    }
    const tprof_result_desc *d = &tprof_log_desc[with_series];
    int e = 0;
    if (fmt == FMT_JSON) {
        tprof_jw w;
        tprof_jw_init(&w, stdout);
        tprof_jw_obj(&w);
        tprof_jw_key(&w, "files");
        tprof_jw_arr(&w);
        for (size_t i = 0; i < nok; i++) cli_json_file_result(&w, files[i], res[i], 0);
        tprof_jw_arr_end(&w);
        tprof_jw_obj_end(&w);
    } else if (fmt == FMT_CSV && with_series)
        e = csv_series((const tprof_result *const *)res, files, nok);
    else if (fmt == FMT_CSV) {
        tprof_rows_csv_header(d->tables[d->csv_table - 1], "file", stdout);
        for (size_t i = 0; i < nok; i++) tprof_rows_csv(tprof_result_table_c(res[i], TB_METRICS), &files[i], 1, 0, stdout);
    } else
        for (size_t i = 0; !e && i < nok; i++) {
            if (i) printf("\n");
            printf("== %s ==\n", files[i]);
            counts_line(res[i]);
            printf("\n");
            e = with_series ? table_series(res[i]) : table_summary(res[i]);
        }
    if (e) {
        cli_error("%s", tprof_strerror(e));
        rc = EXIT_INPUT;
    }
    for (size_t i = 0; i < nok; i++) tprof_result_free(res[i]);
    free(res);
    free(files);
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
