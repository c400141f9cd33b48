/* trainprof kernels: GPU kernel breakdown per trace and combined. */
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
            "usage: trainprof kernels [options] TRACE...\n\n"
            "GPU kernel breakdown: count, total, mean, min, max and share of GPU time of\n"
            "each kernel (or class, or stream); one table per trace and, for several\n"
            "traces, a combined one.\n\n"
            "options:\n"
            "  --top N               rows per table (default 20, 0 = all)\n"
            "  --by name|class|stream  grouping (default name)\n"
            "  --steps A..B          only GPU work launched in ProfilerStep#A..#B\n"
            "                        (also A.., ..B, A)\n"
            CLI_COMMON_HELP);
}

static const char *by_name(tprof_group_by by)
{
    return by == TPROF_BY_CLASS ? "class" : by == TPROF_BY_STREAM ? "stream" : "kernel";
}

static void print_table(const char *label, const char *path, const tprof_kernels_result *r, size_t top)
{
    char a[32], b[32], c[32], d[32];
    printf("== %s%s%s ==\n", label, path ? ": " : "", path ? path : "");
    printf("GPU events %" PRIu64 ", total %s, busy %s (union), span %s", r->count,
           tprof_fmt_duration(a, sizeof a, r->total_ns), tprof_fmt_duration(b, sizeof b, r->busy_ns),
           tprof_fmt_duration(c, sizeof c, r->span_ns));
    if (r->windowed) printf(", ProfilerStep#%" PRId64 "..#%" PRId64 " (%zu steps)", r->step_first, r->step_last, r->nsteps);
    printf("\nby class:");
    for (int k = 0; k < TPROF_CLASS_COUNT; k++)
        printf(" %s %s (%.1f%%)%s", tprof_class_name((tprof_class)k), tprof_fmt_duration(d, sizeof d, r->class_total_ns[k]),
               r->total_ns ? 100.0 * (double)r->class_total_ns[k] / (double)r->total_ns : 0.0,
               k + 1 < TPROF_CLASS_COUNT ? "," : "");
    printf("\n\n");
    const char *hdr[] = { by_name(r->by), "class", "count", "total", "mean", "min", "max", "share" };
    int with_class = r->by == TPROF_BY_NAME;
    tprof_table *t = with_class ? tprof_table_new(8, hdr, "llrrrrrr")
                                : tprof_table_new(7, (const char *[]){ hdr[0], hdr[2], hdr[3], hdr[4], hdr[5], hdr[6], hdr[7] },
                                                  "lrrrrrr");
    if (!t) return;
    tprof_table_limit(t, 0, 90);
    size_t n = top && top < r->nrows ? top : r->nrows;
    for (size_t i = 0; i < n; i++) {
        const tprof_kernel_row *row = &r->rows[i];
        char cnt[32], tot[32], mean[32], mn[32], mx[32], share[16];
        snprintf(cnt, sizeof cnt, "%" PRIu64, row->count);
        tprof_fmt_duration(tot, sizeof tot, row->total_ns);
        tprof_fmt_duration(mean, sizeof mean, (int64_t)(row->mean_ns + 0.5));
        tprof_fmt_duration(mn, sizeof mn, row->min_ns);
        tprof_fmt_duration(mx, sizeof mx, row->max_ns);
        snprintf(share, sizeof share, "%.2f%%", row->share * 100.0);
        if (with_class) {
            const char *cells[] = { row->key, tprof_class_name(row->klass), cnt, tot, mean, mn, mx, share };
            tprof_table_row(t, cells);
        } else {
            const char *cells[] = { row->key, cnt, tot, mean, mn, mx, share };
            tprof_table_row(t, cells);
        }
    }
    tprof_table_print(t, stdout);
    if (n < r->nrows) printf("... %zu more (--top 0 shows all)\n", r->nrows - n);
    tprof_table_free(t);
}

static void print_csv(const char *label, const char *path, const tprof_kernels_result *r, size_t top)
{
    size_t n = top && top < r->nrows ? top : r->nrows;
    for (size_t i = 0; i < n; i++) {
        const tprof_kernel_row *row = &r->rows[i];
        tprof_csv_field(stdout, label);
        fputc(',', stdout);
        tprof_csv_field(stdout, path ? path : "");
        fputc(',', stdout);
        tprof_csv_field(stdout, row->key);
        printf(",%s,%" PRIu64 ",%" PRId64 ",%.3f,%" PRId64 ",%" PRId64 ",%.6f\n",
               r->by == TPROF_BY_NAME ? tprof_class_name(row->klass) : "", row->count, row->total_ns, row->mean_ns,
               row->min_ns, row->max_ns, row->share);
    }
}

static void print_json(tprof_jw *w, const char *label, const char *path, const tprof_kernels_result *r, size_t top)
{
    cli_json_begin(w, label, path);
    tprof_jw_kstr(w, "by", by_name(r->by));
    tprof_jw_kuint(w, "count", r->count);
    tprof_jw_kint(w, "total_ns", r->total_ns);
    tprof_jw_kint(w, "busy_ns", r->busy_ns);
    tprof_jw_kint(w, "span_ns", r->span_ns);
    if (r->windowed) {
        tprof_jw_kint(w, "step_first", r->step_first);
        tprof_jw_kint(w, "step_last", r->step_last);
    }
    tprof_jw_key(w, "classes");
    tprof_jw_obj(w);
    for (int k = 0; k < TPROF_CLASS_COUNT; k++) {
        tprof_jw_key(w, tprof_class_name((tprof_class)k));
        tprof_jw_obj(w);
        tprof_jw_kuint(w, "count", r->class_count[k]);
        tprof_jw_kint(w, "total_ns", r->class_total_ns[k]);
        tprof_jw_obj_end(w);
    }
    tprof_jw_obj_end(w);
    tprof_jw_key(w, "rows");
    tprof_jw_arr(w);
    size_t n = top && top < r->nrows ? top : r->nrows;
    for (size_t i = 0; i < n; i++) {
        const tprof_kernel_row *row = &r->rows[i];
        tprof_jw_obj(w);
        tprof_jw_kstr(w, "key", row->key);
        if (r->by == TPROF_BY_NAME) { tprof_jw_kstr(w, "class", tprof_class_name(row->klass)); }
        if (r->by == TPROF_BY_STREAM) {
            tprof_jw_kint(w, "device", row->device);
            tprof_jw_kint(w, "stream", row->stream);
        }
        tprof_jw_kuint(w, "count", row->count);
        tprof_jw_kint(w, "total_ns", row->total_ns);
        tprof_jw_kdouble(w, "mean_ns", row->mean_ns);
        tprof_jw_kint(w, "min_ns", row->min_ns);
        tprof_jw_kint(w, "max_ns", row->max_ns);
        tprof_jw_kdouble(w, "share", row->share);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
    tprof_jw_obj_end(w);
}

int cmd_kernels(int argc, char **argv)
{
    static const struct option opts[] = {
        { "top", required_argument, 0, 't' }, { "by", required_argument, 0, 'b' },
        { "steps", required_argument, 0, 's' }, CLI_COMMON_LONGOPTS, { 0, 0, 0, 0 },
    };
    cli_common co = { 0 };
    tprof_kernels_opts ko = { .by = TPROF_BY_NAME, .step_first = -1, .step_last = -1 };
    long top = 20;
    int c, rc = EXIT_OK;
    optind = 1;
    while (!rc && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int common = cli_common_option(c, optarg, &co);
        if (common) {
            if (common < 0) rc = EXIT_USAGE;
            continue;
        }
        switch (c) {
        case 't': {
            char *end;
            top = strtol(optarg, &end, 10);
            if (*end || top < 0) {
                cli_error("--top takes a count (0 = all), not '%s'", optarg);
                rc = EXIT_USAGE;
            }
            break;
        }
        case 'b':
            if (!strcmp(optarg, "name")) ko.by = TPROF_BY_NAME;
            else if (!strcmp(optarg, "class")) ko.by = TPROF_BY_CLASS;
            else if (!strcmp(optarg, "stream")) ko.by = TPROF_BY_STREAM;
            else {
                cli_error("--by must be name, class or stream, not '%s'", optarg);
                rc = EXIT_USAGE;
            }
            break;
        case 's': {
            long long a, b;
            if (cli_parse_steps(optarg, &a, &b)) {
                cli_error("--steps takes A..B, A.., ..B or A (ProfilerStep numbers), not '%s'", optarg);
                rc = EXIT_USAGE;
            }
            ko.step_first = a;
            ko.step_last = b;
            break;
        }
        case 'h': help(stdout); cli_common_free(&co); return EXIT_OK;
        default: rc = EXIT_USAGE;
        }
    }
    int n = argc - optind;
    if (!rc && n < 1) {
        help(stderr);
        rc = EXIT_USAGE;
    }
    if (rc) {
        cli_common_free(&co);
        return rc;
    }
    tprof_read_result *res = calloc((size_t)n, sizeof *res);
    tprof_kernels_result **kr = calloc((size_t)n, sizeof *kr);
    if (!res || !kr) return EXIT_INPUT;
    tprof_read_opts ro = { .keep = TPROF_KERNELS_KEEP, .classifier = co.cls, .threads = co.threads };
    rc = cli_read_traces(argv + optind, n, &ro, res);
    size_t nk = 0;
    tprof_jw w;
    tprof_jw_init(&w, stdout);
    if (co.fmt == FMT_CSV) printf("trace,file,%s,class,count,total_ns,mean_ns,min_ns,max_ns,share\n", by_name(ko.by));
    if (co.fmt == FMT_JSON) {
        tprof_jw_obj(&w);
        tprof_jw_key(&w, "traces");
        tprof_jw_arr(&w);
    }
    for (int i = 0; i < n; i++) {
        if (!res[i].trace) continue;
        tprof_kernels_result *r;
        int e = tprof_kernels(res[i].trace, &ko, &r);
        if (e == TPROF_EUSAGE) {
            cli_error("%s: no ProfilerStep in the --steps window", tprof_trace_meta_get(res[i].trace)->path);
            if (rc < EXIT_INPUT) rc = EXIT_USAGE;
            continue;
        }
        if (e) {
            cli_error("%s: %s", tprof_trace_meta_get(res[i].trace)->path, tprof_strerror(e));
            rc = EXIT_INPUT;
            continue;
        }
        char label[64];
        cli_trace_label(res[i].trace, i, label, sizeof label);
        const char *path = tprof_trace_meta_get(res[i].trace)->path;
        if (co.fmt == FMT_TABLE) {
            if (nk) printf("\n");
            print_table(label, path, r, (size_t)top);
        } else if (co.fmt == FMT_CSV)
            print_csv(label, path, r, (size_t)top);
        else
            print_json(&w, label, path, r, (size_t)top);
        kr[nk++] = r;
    }
    if (co.fmt == FMT_JSON) tprof_jw_arr_end(&w);
    if (nk > 1) {
        tprof_kernels_result *all;
        if (tprof_kernels_combine((const tprof_kernels_result *const *)kr, nk, &all) == 0) {
            char label[64];
            snprintf(label, sizeof label, "all %zu traces", nk);
            if (co.fmt == FMT_TABLE) {
                printf("\n");
                print_table(label, NULL, all, (size_t)top);
            } else if (co.fmt == FMT_CSV)
                print_csv("all", NULL, all, (size_t)top);
            else {
                tprof_jw_key(&w, "combined");
                print_json(&w, label, NULL, all, (size_t)top);
            }
            tprof_kernels_free(all);
        }
    }
    if (co.fmt == FMT_JSON) tprof_jw_obj_end(&w);
    for (size_t i = 0; i < nk; i++) tprof_kernels_free(kr[i]);
    for (int i = 0; i < n; i++) tprof_trace_free(res[i].trace);
    free(kr);
    free(res);
    cli_common_free(&co);
    return rc;
}
