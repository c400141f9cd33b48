/* trainprof info: what a trace holds. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/analysis.h"
#include "trainprof/report.h"
#include "trainprof/trace.h"

static void help(FILE *f)
{
    fprintf(f, "usage: trainprof info [options] TRACE...\n\n"
               "Format, compression, sizes, schema version, devices, rank and world size,\n"
               "time span, ProfilerSteps, event counts by kind and category, GPU tracks,\n"
               "host threads and data warnings of each trace.\n\noptions:\n" CLI_COMMON_HELP);
}

/* A string cell that is never null in this result. */
static const char *str(const tprof_rows *t, size_t row, const char *col)
{
    const char *s = tprof_rows_str(t, row, col);
    return s ? s : "";
}

enum { TB_DEVICES, TB_STEPS, TB_KINDS, TB_CATEGORIES, TB_GPU, TB_CPU, TB_WARNINGS };

static int print(void *ctx, const tprof_result *r, const char *label, const char *path)
{
    (void)ctx, (void)label;
    const tprof_rows *m = tprof_result_top_c(r);
    char a[32], b[32];
    int truncated = tprof_rows_int(m, 0, "truncated") != 0;
    const char *comp = str(m, 0, "compression");
    printf("%s\n", path);
    const char *form = str(m, 0, "form");
    printf("  format       %s, %s%s\n", !strcmp(form, "object")   ? "trace object"
           : !strcmp(form, "table")    ? "Ascend kernel table (CSV)"
           : !strcmp(form, "summary")  ? "Ascend communication summary (JSON)"
           : !strcmp(form, "database") ? "Ascend profiler database (SQLite)"
           : !strcmp(form, "steps")    ? "Ascend step table (CSV)"
                                       : "bare event array",
           !strcmp(comp, "none") ? "uncompressed" : comp, truncated ? " (TRUNCATED)" : "");
    printf("  size         %s read", tprof_fmt_bytes(a, sizeof a, tprof_rows_int(m, 0, "bytes_read")));
    if (strcmp(comp, "none")) printf(", %s of JSON", tprof_fmt_bytes(b, sizeof b, tprof_rows_int(m, 0, "bytes_json")));
    printf("\n");
    if (!tprof_rows_at(m, 0, "schema_version")->null) printf("  schema       %" PRId64 "\n", tprof_rows_int(m, 0, "schema_version"));
    if (tprof_rows_str(m, 0, "trace_name")) printf("  trace name   %s\n", str(m, 0, "trace_name"));
    const tprof_rows *dev = tprof_result_table_c(r, TB_DEVICES);
    for (size_t i = 0; i < tprof_rows_count(dev); i++) {
        printf("  device %-5" PRId64 " %s", tprof_rows_int(dev, i, "id"), str(dev, i, "name"));
        if (tprof_rows_int(dev, i, "num_sms") > 0) printf(", %" PRId64 " SMs", tprof_rows_int(dev, i, "num_sms"));
        if (tprof_rows_int(dev, i, "compute_major")) printf(", sm_%" PRId64 "%" PRId64, tprof_rows_int(dev, i, "compute_major"), tprof_rows_int(dev, i, "compute_minor"));
        if (tprof_rows_int(dev, i, "total_memory") > 0) printf(", %s", tprof_fmt_bytes(a, sizeof a, tprof_rows_int(dev, i, "total_memory")));
        printf("\n");
    }
    const char *backend = tprof_rows_str(m, 0, "backend");
    if (tprof_rows_int(m, 0, "rank") >= 0)
        printf("  rank         %" PRId64 " of world size %" PRId64 "%s%s\n", tprof_rows_int(m, 0, "rank"), tprof_rows_int(m, 0, "world_size"),
               backend ? ", backend " : "", backend ? backend : "");
    else
        printf("  rank         unknown (%s)\n",
               tprof_rows_int(m, 0, "has_distributed") ? "distributedInfo has no rank" : "no distributedInfo");
    if (!tprof_rows_at(m, 0, "base_time_ns")->null) printf("  base time    %" PRId64 " ns\n", tprof_rows_int(m, 0, "base_time_ns"));
    const tprof_rows *kinds = tprof_result_table_c(r, TB_KINDS);
    int64_t ts_min = tprof_rows_int(m, 0, "ts_min_ns"), ts_max = tprof_rows_int(m, 0, "ts_max_ns");
    if (tprof_rows_int(m, 0, "has_span"))
        printf("  time span    %s (ts %" PRId64 " .. %" PRId64 " ns)\n",
               tprof_fmt_duration(a, sizeof a, tprof_span_ns(ts_min, ts_max)), ts_min, ts_max);
    const tprof_rows *st = tprof_result_table_c(r, TB_STEPS);
    size_t ns = tprof_rows_count(st);
    if (ns) {
        int64_t tot = 0;
        for (size_t i = 0; i < ns; i++) tot = tprof_sat_add(tot, tprof_rows_int(st, i, "dur_ns"));
        printf("  steps        %zu (ProfilerStep#%" PRId64 " .. #%" PRId64 "), mean %s\n", ns, tprof_rows_int(st, 0, "number"),
               tprof_rows_int(st, ns - 1, "number"), tprof_fmt_duration(a, sizeof a, tot / (int64_t)ns));
    } else
        printf("  steps        none (no ProfilerStep#N spans)\n");
    printf("  events       %" PRId64 ":", tprof_rows_int(m, 0, "events"));
    for (size_t k = 0; k < tprof_rows_count(kinds); k++)
        if (tprof_rows_int(kinds, k, "count")) printf(" %s %" PRId64, str(kinds, k, "kind"), tprof_rows_int(kinds, k, "count"));
    printf("\n  categories  ");
    const tprof_rows *cats = tprof_result_table_c(r, TB_CATEGORIES);
    for (size_t i = 0, n = tprof_rows_count(cats); i < n; i++) {
        const char *c = str(cats, i, "category");
        printf(" %s %" PRId64 "%s", c[0] ? c : "(none)", tprof_rows_int(cats, i, "count"), i + 1 < n ? "," : "");
    }
    printf("\n");
    const tprof_rows *gpu = tprof_result_table_c(r, TB_GPU);
    if (tprof_rows_count(gpu)) {
        printf("  gpu tracks  ");
        for (size_t i = 0, n = tprof_rows_count(gpu); i < n; i++)
            printf(" dev %" PRId64 "/stream %" PRId64 " (%" PRId64 ")%s", tprof_rows_int(gpu, i, "device"), tprof_rows_int(gpu, i, "stream"),
                   tprof_rows_int(gpu, i, "events"), i + 1 < n ? "," : "");
        printf("\n");
    }
    const tprof_rows *cpu = tprof_result_table_c(r, TB_CPU);
    size_t nc = tprof_rows_count(cpu);
    if (nc) {
        printf("  cpu threads  %zu:", nc);
        for (size_t i = 0; i < nc && i < 8; i++)
            printf(" %s (%" PRId64 ")%s", str(cpu, i, "thread"), tprof_rows_int(cpu, i, "events"), i + 1 < nc ? "," : "");
        if (nc > 8) printf(" ...");
        printf("\n");
    }
    const tprof_rows *w = tprof_result_table_c(r, TB_WARNINGS);
    if (tprof_rows_int(w, 0, "dur_missing") || tprof_rows_int(w, 0, "dur_negative") || tprof_rows_int(w, 0, "dur_absurd") || tprof_rows_int(w, 0, "dur_invalid") ||
        tprof_rows_int(w, 0, "ts_missing") || tprof_rows_int(w, 0, "ts_invalid") || tprof_rows_int(w, 0, "non_object_events"))
        printf("  warnings     dur missing %" PRId64 ", dur not a number or out of range %" PRId64
               ", dur negative %" PRId64 ", dur > 1 day %" PRId64 ", ts missing %" PRId64 ", ts invalid %" PRId64
               ", non-object events %" PRId64 " (first at byte %" PRId64 ")\n",
               tprof_rows_int(w, 0, "dur_missing"), tprof_rows_int(w, 0, "dur_invalid"), tprof_rows_int(w, 0, "dur_negative"), tprof_rows_int(w, 0, "dur_absurd"),
               tprof_rows_int(w, 0, "ts_missing"), tprof_rows_int(w, 0, "ts_invalid"), tprof_rows_int(w, 0, "non_object_events"), tprof_rows_int(w, 0, "first_offset"));
    if (truncated) printf("  truncated    %s\n", str(m, 0, "truncation"));
    if (tprof_rows_str(m, 0, "note")) printf("  note         %s\n", str(m, 0, "note"));
    if (tprof_rows_int(m, 0, "chunks")) printf("  read in      %" PRId64 " chunks in parallel\n", tprof_rows_int(m, 0, "chunks"));
    return 0;
}

static int analyse(void *ctx, const tprof_trace *t, tprof_result **out)
{
    (void)ctx;
    return tprof_info_tables(t, out);
}

int cmd_info(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = 0, .result = &tprof_info_desc, .analyse = analyse, .print = print,
    };
    return cli_run(argc, argv, &spec, NULL);
}
