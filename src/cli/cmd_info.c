/* trainprof info: what a trace holds. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/report.h"
#include "trainprof/trace.h"

static void help(FILE *f)
{
    fprintf(f, "usage: trainprof info [options] TRACE...\n\n"
               "Format, compression, sizes, schema version, devices, rank and world size,\n"
               "time span, ProfilerSteps, event counts by kind and category, GPU tracks,\n"
               "host threads and data warnings of each trace.\n\noptions:\n" CLI_COMMON_HELP);
}

/* "pid/tid" with names for string ids */
static void thread_label(const tprof_trace *t, const tprof_cpu_track *c, char *buf, size_t len)
{
    char p[32], q[32];
    if (c->flags & TPROF_EV_PID_STR) snprintf(p, sizeof p, "%.30s", tprof_trace_str(t, (uint32_t)c->pid));
    else snprintf(p, sizeof p, "%" PRId64, c->pid);
    if (c->flags & TPROF_EV_TID_STR) snprintf(q, sizeof q, "%.30s", tprof_trace_str(t, (uint32_t)c->tid));
    else snprintf(q, sizeof q, "%" PRId64, c->tid);
    snprintf(buf, len, "%s/%s", p, q);
}

static void print_table(const tprof_trace *t)
{
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    char a[32], b[32];
    printf("%s\n", m->path);
    printf("  format       %s, %s%s\n", m->form == TPROF_FORM_OBJECT ? "trace object" : "bare event array",
           m->compression == TPROF_COMP_NONE ? "uncompressed" : tprof_compression_name(m->compression),
           m->truncated ? " (TRUNCATED)" : "");
    printf("  size         %s read", tprof_fmt_bytes(a, sizeof a, (int64_t)m->bytes_in));
    if (m->compression != TPROF_COMP_NONE) printf(", %s of JSON", tprof_fmt_bytes(b, sizeof b, (int64_t)m->bytes_json));
    printf("\n");
    if (m->has_schema_version) printf("  schema       %" PRId64 "\n", m->schema_version);
    if (m->trace_name) printf("  trace name   %s\n", m->trace_name);
    for (size_t i = 0; i < m->ndevices; i++) {
        const tprof_device *d = &m->devices[i];
        printf("  device %-5" PRId64 " %s", d->id, d->name);
        if (d->num_sms > 0) printf(", %" PRId64 " SMs", d->num_sms);
        if (d->compute_major) printf(", sm_%d%d", d->compute_major, d->compute_minor);
        if (d->total_memory > 0) printf(", %s", tprof_fmt_bytes(a, sizeof a, d->total_memory));
        printf("\n");
    }
    if (m->rank >= 0)
        printf("  rank         %" PRId64 " of world size %" PRId64 "%s%s\n", m->rank, m->world_size,
               m->backend ? ", backend " : "", m->backend ? m->backend : "");
    else
        printf("  rank         unknown (%s)\n", m->has_distributed ? "distributedInfo has no rank" : "no distributedInfo");
    if (m->has_base_time) printf("  base time    %" PRId64 " ns\n", m->base_time_ns);
    if (m->ts_max >= m->ts_min)
        printf("  time span    %s (ts %" PRId64 " .. %" PRId64 " ns)\n",
               tprof_fmt_duration(a, sizeof a, tprof_span_ns(m->ts_min, m->ts_max)), m->ts_min, m->ts_max);
    if (m->nsteps) {
        int64_t tot = 0;
        for (size_t i = 0; i < m->nsteps; i++) tot = tprof_sat_add(tot, m->steps[i].dur);
        printf("  steps        %zu (ProfilerStep#%" PRId64 " .. #%" PRId64 "), mean %s\n", m->nsteps,
               m->steps[0].number, m->steps[m->nsteps - 1].number,
               tprof_fmt_duration(a, sizeof a, tot / (int64_t)m->nsteps));
    } else
        printf("  steps        none (no ProfilerStep#N spans)\n");
    printf("  events       %" PRIu64 ":", m->nevents);
    for (int k = 0; k < TPROF_KIND_COUNT; k++)
        if (m->kind_counts[k]) printf(" %s %" PRIu64, tprof_kind_name((tprof_kind)k), m->kind_counts[k]);
    printf("\n  categories  ");
    for (size_t i = 0; i < m->ncats; i++) {
        const char *c = tprof_trace_str(t, m->cats[i].cat);
        printf(" %s %" PRIu64 "%s", c[0] ? c : "(none)", m->cats[i].count, i + 1 < m->ncats ? "," : "");
    }
    printf("\n");
    if (m->ngpu_tracks) {
        printf("  gpu tracks  ");
        for (size_t i = 0; i < m->ngpu_tracks; i++)
            printf(" dev %" PRId64 "/stream %" PRId64 " (%" PRIu64 ")%s", m->gpu_tracks[i].device,
                   m->gpu_tracks[i].stream, m->gpu_tracks[i].events, i + 1 < m->ngpu_tracks ? "," : "");
        printf("\n");
    }
    if (m->ncpu_tracks) {
        printf("  cpu threads  %zu:", m->ncpu_tracks);
        for (size_t i = 0; i < m->ncpu_tracks && i < 8; i++) {
            char id[64];
            thread_label(t, &m->cpu_tracks[i], id, sizeof id);
            printf(" %s (%" PRIu64 ")%s", id, m->cpu_tracks[i].events, i + 1 < m->ncpu_tracks ? "," : "");
        }
        if (m->ncpu_tracks > 8) printf(" ...");
        printf("\n");
    }
    const tprof_warnings *w = &m->warn;
    if (w->dur_missing || w->dur_negative || w->dur_absurd || w->dur_invalid || w->ts_missing || w->ts_bad ||
        w->non_object_events)
        printf("  warnings     dur missing %" PRIu64 ", dur not a number or out of range %" PRIu64
               ", dur negative %" PRIu64 ", dur > 1 day %" PRIu64 ", ts missing %" PRIu64 ", ts invalid %" PRIu64
               ", non-object events %" PRIu64 " (first at byte %" PRIu64 ")\n",
               w->dur_missing, w->dur_invalid, w->dur_negative, w->dur_absurd, w->ts_missing, w->ts_bad,
               w->non_object_events, w->first_offset);
    if (m->truncated) printf("  truncated    %s\n", tprof_trace_truncation(t));
    if (m->note) printf("  note         %s\n", m->note);
    if (m->chunks) printf("  read in      %" PRIu32 " chunks in parallel\n", m->chunks);
}

static void json_trace(tprof_jw *w, const tprof_trace *t)
{
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    tprof_jw_obj(w);
    tprof_jw_kstr(w, "file", m->path);
    tprof_jw_kstr(w, "form", m->form == TPROF_FORM_OBJECT ? "object" : "array");
    tprof_jw_kstr(w, "compression", tprof_compression_name(m->compression));
    tprof_jw_kuint(w, "bytes_read", m->bytes_in);
    tprof_jw_kuint(w, "bytes_json", m->bytes_json);
    tprof_jw_kbool(w, "truncated", m->truncated);
    tprof_jw_kstr(w, "note", m->note);
    tprof_jw_kuint(w, "chunks", m->chunks);
    tprof_jw_key(w, "schema_version");
    if (m->has_schema_version) tprof_jw_int(w, m->schema_version); else tprof_jw_null(w);
    tprof_jw_kint(w, "rank", m->rank);
    tprof_jw_kint(w, "world_size", m->world_size);
    tprof_jw_kstr(w, "backend", m->backend);
    tprof_jw_key(w, "base_time_ns");
    if (m->has_base_time) tprof_jw_int(w, m->base_time_ns); else tprof_jw_null(w);
    tprof_jw_key(w, "devices");
    tprof_jw_arr(w);
    for (size_t i = 0; i < m->ndevices; i++) {
        tprof_jw_obj(w);
        tprof_jw_kint(w, "id", m->devices[i].id);
        tprof_jw_kstr(w, "name", m->devices[i].name);
        tprof_jw_kint(w, "num_sms", m->devices[i].num_sms);
        tprof_jw_kint(w, "total_memory", m->devices[i].total_memory);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
    tprof_jw_kint(w, "ts_min_ns", m->ts_max >= m->ts_min ? m->ts_min : 0);
    tprof_jw_kint(w, "ts_max_ns", m->ts_max >= m->ts_min ? m->ts_max : 0);
    tprof_jw_key(w, "steps");
    tprof_jw_arr(w);
    for (size_t i = 0; i < m->nsteps; i++) {
        tprof_jw_obj(w);
        tprof_jw_kint(w, "number", m->steps[i].number);
        tprof_jw_kint(w, "ts_ns", m->steps[i].ts);
        tprof_jw_kint(w, "dur_ns", m->steps[i].dur);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
    tprof_jw_kuint(w, "events", m->nevents);
    tprof_jw_key(w, "kinds");
    tprof_jw_obj(w);
    for (int k = 0; k < TPROF_KIND_COUNT; k++) {
        tprof_jw_key(w, tprof_kind_name((tprof_kind)k));
        tprof_jw_uint(w, m->kind_counts[k]);
    }
    tprof_jw_obj_end(w);
    tprof_jw_key(w, "categories");
    tprof_jw_obj(w);
    for (size_t i = 0; i < m->ncats; i++) {
        tprof_jw_kuint(w, tprof_trace_str(t, m->cats[i].cat), m->cats[i].count);
    }
    tprof_jw_obj_end(w);
    tprof_jw_key(w, "gpu_tracks");
    tprof_jw_arr(w);
    for (size_t i = 0; i < m->ngpu_tracks; i++) {
        tprof_jw_obj(w);
        tprof_jw_kint(w, "device", m->gpu_tracks[i].device);
        tprof_jw_kint(w, "stream", m->gpu_tracks[i].stream);
        tprof_jw_kuint(w, "events", m->gpu_tracks[i].events);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
    tprof_jw_key(w, "cpu_threads");
    tprof_jw_arr(w);
    for (size_t i = 0; i < m->ncpu_tracks; i++) {
        char id[64];
        thread_label(t, &m->cpu_tracks[i], id, sizeof id);
        tprof_jw_obj(w);
        tprof_jw_kstr(w, "thread", id);
        tprof_jw_kuint(w, "events", m->cpu_tracks[i].events);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
    const tprof_warnings *wr = &m->warn;
    tprof_jw_key(w, "warnings");
    tprof_jw_obj(w);
    tprof_jw_kuint(w, "dur_missing", wr->dur_missing);
    tprof_jw_kuint(w, "dur_negative", wr->dur_negative);
    tprof_jw_kuint(w, "dur_absurd", wr->dur_absurd);
    tprof_jw_kuint(w, "dur_invalid", wr->dur_invalid);
    tprof_jw_kuint(w, "ts_missing", wr->ts_missing);
    tprof_jw_kuint(w, "ts_invalid", wr->ts_bad);
    tprof_jw_kuint(w, "non_object_events", wr->non_object_events);
    tprof_jw_obj_end(w);
    tprof_jw_obj_end(w);
}

static void csv_trace(const tprof_trace *t)
{
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
#define ROW(key, fmt, ...) do { tprof_csv_field(stdout, m->path); printf("," key "," fmt "\n", __VA_ARGS__); } while (0)
    ROW("form", "%s", m->form == TPROF_FORM_OBJECT ? "object" : "array");
    ROW("compression", "%s", tprof_compression_name(m->compression));
    ROW("bytes_read", "%" PRIu64, m->bytes_in);
    ROW("bytes_json", "%" PRIu64, m->bytes_json);
    ROW("truncated", "%d", m->truncated);
    ROW("rank", "%" PRId64, m->rank);
    ROW("world_size", "%" PRId64, m->world_size);
    ROW("devices", "%zu", m->ndevices);
    ROW("steps", "%zu", m->nsteps);
    ROW("events", "%" PRIu64, m->nevents);
    for (int k = 0; k < TPROF_KIND_COUNT; k++) ROW("kind.%s", "%" PRIu64, tprof_kind_name((tprof_kind)k), m->kind_counts[k]);
    for (size_t i = 0; i < m->ncats; i++) {
        tprof_csv_field(stdout, m->path);
        printf(",");
        char key[300];
        snprintf(key, sizeof key, "category.%s", tprof_trace_str(t, m->cats[i].cat));
        tprof_csv_field(stdout, key);
        printf(",%" PRIu64 "\n", m->cats[i].count);
    }
#undef ROW
}

static int each(void *ctx, const tprof_trace *t, cli_out *out)
{
    (void)ctx;
    if (out->fmt == FMT_JSON) json_trace(&out->jw, t);
    else if (out->fmt == FMT_CSV) csv_trace(t);
    else {
        if (out->shown) printf("\n");
        print_table(t);
    }
    return 0;
}

int cmd_info(int argc, char **argv)
{
    static const cli_spec spec = { .help = help, .keep = 0, .each = each, .csv_header = "file,key,value" };
    return cli_run(argc, argv, &spec, NULL);
}
