/* trainprof temporal: idle, compute and non-compute time of the GPU, per rank. */
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
            "usage: trainprof temporal [options] TRACE...\n\n"
            "Temporal breakdown of each trace's GPU time, as Holistic Trace Analysis\n"
            "defines it: over the kernel span (first GPU start to last GPU end), idle\n"
            "time (no GPU work), compute time (compute kernels) and non-compute time\n"
            "(communication and memory not under compute). With two or more ProfilerSteps\n"
            "the GPU work launched in the last step is left out.\n\n"
            "options:\n"
            "  --keep-last-step      count the last step's work too\n" CLI_COMMON_HELP);
}

static double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0; }

int cmd_temporal(int argc, char **argv)
{
    static const struct option opts[] = {
        { "keep-last-step", no_argument, 0, 'k' }, CLI_COMMON_LONGOPTS, { 0, 0, 0, 0 },
    };
    cli_common co = { 0 };
    tprof_temporal_opts to = { 0 };
    int c, rc = EXIT_OK;
    optind = 1;
    while (!rc && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int common = cli_common_option(c, optarg, &co);
        if (common) {
            if (common < 0) rc = EXIT_USAGE;
            continue;
        }
        if (c == 'k') to.keep_last_step = 1;
        else if (c == 'h') {
            help(stdout);
            cli_common_free(&co);
            return EXIT_OK;
        } else
            rc = EXIT_USAGE;
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
    if (!res) return EXIT_INPUT;
    tprof_read_opts ro = { .keep = TPROF_TEMPORAL_KEEP, .classifier = co.cls, .threads = co.threads };
    rc = cli_read_traces(argv + optind, n, &ro, res);

    const char *hdr[] = { "trace", "GPU events", "span", "idle", "compute", "non-compute", "note" };
    tprof_table *tab = co.fmt == FMT_TABLE ? tprof_table_new(7, hdr, "lrrrrrl") : NULL;
    tprof_jw w;
    tprof_jw_init(&w, stdout);
    if (co.fmt == FMT_CSV)
        printf("trace,file,events,span_ns,busy_ns,idle_ns,compute_ns,non_compute_ns,last_step_excluded\n");
    if (co.fmt == FMT_JSON) tprof_jw_arr(&w);
    for (int i = 0; i < n; i++) {
        if (!res[i].trace) continue;
        tprof_temporal_result r;
        if (tprof_temporal(res[i].trace, &to, &r)) {
            cli_error("%s: out of memory", tprof_trace_meta_get(res[i].trace)->path);
            rc = EXIT_INPUT;
            continue;
        }
        char label[64], a[32], b[48], d[48], e[48], note[64] = "";
        cli_trace_label(res[i].trace, i, label, sizeof label);
        const char *path = tprof_trace_meta_get(res[i].trace)->path;
        if (r.last_step_excluded) snprintf(note, sizeof note, "ProfilerStep#%" PRId64 " left out", r.last_step);
        if (!r.events) snprintf(note, sizeof note, "no GPU events");
        if (co.fmt == FMT_TABLE) {
            char cnt[32], s1[32], s2[32], s3[32];
            snprintf(cnt, sizeof cnt, "%" PRIu64, r.events);
            tprof_fmt_duration(a, sizeof a, r.span_ns);
            snprintf(b, sizeof b, "%s (%.1f%%)", tprof_fmt_duration(s1, sizeof s1, r.idle_ns), pct(r.idle_ns, r.span_ns));
            snprintf(d, sizeof d, "%s (%.1f%%)", tprof_fmt_duration(s2, sizeof s2, r.compute_ns),
                     pct(r.compute_ns, r.span_ns));
            snprintf(e, sizeof e, "%s (%.1f%%)", tprof_fmt_duration(s3, sizeof s3, r.non_compute_ns),
                     pct(r.non_compute_ns, r.span_ns));
            const char *cells[] = { label, cnt, a, b, d, e, note };
            tprof_table_row(tab, cells);
        } else if (co.fmt == FMT_CSV) {
            tprof_csv_field(stdout, label);
            fputc(',', stdout);
            tprof_csv_field(stdout, path);
            printf(",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%d\n", r.events,
                   r.span_ns, r.busy_ns, r.idle_ns, r.compute_ns, r.non_compute_ns, r.last_step_excluded);
        } else {
            tprof_jw_obj(&w);
            tprof_jw_key(&w, "label"); tprof_jw_str(&w, label);
            tprof_jw_key(&w, "file"); tprof_jw_str(&w, path);
            tprof_jw_key(&w, "events"); tprof_jw_uint(&w, r.events);
            tprof_jw_key(&w, "span_ns"); tprof_jw_int(&w, r.span_ns);
            tprof_jw_key(&w, "busy_ns"); tprof_jw_int(&w, r.busy_ns);
            tprof_jw_key(&w, "idle_ns"); tprof_jw_int(&w, r.idle_ns);
            tprof_jw_key(&w, "compute_ns"); tprof_jw_int(&w, r.compute_ns);
            tprof_jw_key(&w, "non_compute_ns"); tprof_jw_int(&w, r.non_compute_ns);
            tprof_jw_key(&w, "last_step_excluded");
            if (r.last_step_excluded) tprof_jw_int(&w, r.last_step); else tprof_jw_null(&w);
            tprof_jw_obj_end(&w);
        }
    }
    if (tab) {
        tprof_table_print(tab, stdout);
        tprof_table_free(tab);
    }
    if (co.fmt == FMT_JSON) tprof_jw_arr_end(&w);
    for (int i = 0; i < n; i++) tprof_trace_free(res[i].trace);
    free(res);
    cli_common_free(&co);
    return rc;
}
