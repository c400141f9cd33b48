/* trainprof idle: why each GPU stream sits idle between its events. */
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
            "usage: trainprof idle [options] TRACE...\n\n"
            "Idle time of each GPU stream, gap by gap between consecutive GPU events:\n"
            "host wait (the next event was launched only after the stream had drained:\n"
            "the CPU did not keep up), kernel wait (a gap shorter than --kernel-wait between\n"
            "work already queued), other (waits on events, other streams, syncs).\n\n"
            "options:\n"
            "  --kernel-wait US      threshold for kernel waits in microseconds (default 30)\n" CLI_COMMON_HELP);
}

static void cell(char *buf, size_t len, const tprof_idle_stat *s, int64_t span)
{
    char d[32];
    snprintf(buf, len, "%s %.1f%% (%" PRIu64 ")", tprof_fmt_duration(d, sizeof d, s->total_ns),
             span > 0 ? 100.0 * (double)s->total_ns / (double)span : 0.0, s->count);
}

static void print_table(const char *label, const char *path, const tprof_idle_result *r)
{
    printf("== %s: %s ==\n", label, path);
    if (!r->nstreams) {
        printf("no GPU events\n");
        return;
    }
    const char *hdr[] = { "device/stream", "events", "span", "idle", "host wait", "kernel wait", "other" };
    tprof_table *t = tprof_table_new(7, hdr, "lrrrrrr");
    if (!t) return;
    for (size_t i = 0; i < r->nstreams; i++) {
        const tprof_idle_row *s = &r->streams[i];
        char id[48], ev[32], span[32], idle[64], c[TPROF_IDLE_CAUSES][64], d[32];
        snprintf(id, sizeof id, "%" PRId64 "/%" PRId64, s->device, s->stream);
        snprintf(ev, sizeof ev, "%" PRIu64, s->events);
        tprof_fmt_duration(span, sizeof span, s->span_ns);
        snprintf(idle, sizeof idle, "%s %.1f%%", tprof_fmt_duration(d, sizeof d, s->idle_ns),
                 s->span_ns > 0 ? 100.0 * (double)s->idle_ns / (double)s->span_ns : 0.0);
        for (int k = 0; k < TPROF_IDLE_CAUSES; k++) cell(c[k], sizeof c[k], &s->cause[k], s->span_ns);
        const char *cells[] = { id, ev, span, idle, c[0], c[1], c[2] };
        tprof_table_row(t, cells);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    printf("percentages of each stream's span; (n) = number of gaps; kernel wait: gaps < %s\n",
           tprof_fmt_duration((char[32]){ 0 }, 32, r->kernel_wait_ns));
}

static void print_json(tprof_jw *w, const char *label, const char *path, const tprof_idle_result *r)
{
    cli_json_begin(w, label, path);
    tprof_jw_kint(w, "kernel_wait_ns", r->kernel_wait_ns);
    tprof_jw_key(w, "bucket_limits_ns");
    tprof_jw_arr(w);
    for (int b = 0; b < TPROF_IDLE_BUCKETS - 1; b++) tprof_jw_int(w, tprof_idle_bucket_limit(b));
    tprof_jw_null(w);
    tprof_jw_arr_end(w);
    tprof_jw_key(w, "streams");
    tprof_jw_arr(w);
    for (size_t i = 0; i < r->nstreams; i++) {
        const tprof_idle_row *s = &r->streams[i];
        tprof_jw_obj(w);
        tprof_jw_kint(w, "device", s->device);
        tprof_jw_kint(w, "stream", s->stream);
        tprof_jw_kuint(w, "events", s->events);
        tprof_jw_kint(w, "span_ns", s->span_ns);
        tprof_jw_kint(w, "idle_ns", s->idle_ns);
        for (int k = 0; k < TPROF_IDLE_CAUSES; k++) {
            static const char *const keys[] = { "host_wait", "kernel_wait", "other" };
            const tprof_idle_stat *c = &s->cause[k];
            tprof_jw_key(w, keys[k]);
            tprof_jw_obj(w);
            tprof_jw_kuint(w, "count", c->count);
            tprof_jw_kint(w, "total_ns", c->total_ns);
            tprof_jw_kint(w, "max_ns", c->max_ns);
            tprof_jw_key(w, "buckets");
            tprof_jw_arr(w);
            for (int b = 0; b < TPROF_IDLE_BUCKETS; b++) tprof_jw_uint(w, c->buckets[b]);
            tprof_jw_arr_end(w);
            tprof_jw_obj_end(w);
        }
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
    tprof_jw_obj_end(w);
}

static int option(void *ctx, int c, const char *arg)
{
    if (c != 'k') return -1;
    char *end;
    double us = strtod(arg, &end);
    if (*end || !(us > 0) || us > 1e9) {
        cli_error("--kernel-wait takes microseconds (> 0), not '%s'", arg);
        return -1;
    }
    ((tprof_idle_opts *)ctx)->kernel_wait_ns = (int64_t)(us * 1000 + 0.5);
    return 0;
}

static int each(void *ctx, const tprof_trace *t, cli_out *out)
{
    tprof_idle_result *r;
    int rc = tprof_idle(t, ctx, &r);
    if (rc) return rc;
    if (out->fmt == FMT_TABLE) {
        if (out->shown) printf("\n");
        print_table(out->label, out->path, r);
    } else if (out->fmt == FMT_JSON)
        print_json(&out->jw, out->label, out->path, r);
    else
        for (size_t k = 0; k < r->nstreams; k++)
            for (int cz = 0; cz < TPROF_IDLE_CAUSES; cz++) {
                const tprof_idle_row *s = &r->streams[k];
                tprof_csv_field(stdout, out->label);
                fputc(',', stdout);
                tprof_csv_field(stdout, out->path);
                printf(",%" PRId64 ",%" PRId64 ",%" PRIu64 ",%" PRId64 ",%s,%" PRIu64 ",%" PRId64 ",%" PRId64 "\n",
                       s->device, s->stream, s->events, s->span_ns, tprof_idle_cause_name((tprof_idle_cause)cz),
                       s->cause[cz].count, s->cause[cz].total_ns, s->cause[cz].max_ns);
            }
    tprof_idle_free(r);
    return 0;
}

int cmd_idle(int argc, char **argv)
{
    static const struct option opts[] = { { "kernel-wait", required_argument, 0, 'k' }, { 0, 0, 0, 0 } };
    static const cli_spec spec = {
        .help = help, .keep = TPROF_IDLE_KEEP, .opts = opts, .option = option, .each = each,
        .csv_header = "trace,file,device,stream,events,span_ns,cause,count,total_ns,max_ns",
    };
    tprof_idle_opts io = { 0 };
    return cli_run(argc, argv, &spec, &io);
}
