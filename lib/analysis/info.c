/* What a trace holds, as result tables: its format and sizes, schema,
 * rank, devices, time span, steps, event counts by kind and category, GPU
 * tracks, host threads and data warnings (`trainprof info`). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

enum {
    I_FORM, I_COMPRESSION, I_BYTES_READ, I_BYTES_JSON, I_TRUNCATED, I_NOTE, I_CHUNKS, I_SCHEMA, I_RANK, I_WORLD,
    I_BACKEND, I_BASE_TIME, I_TS_MIN, I_TS_MAX, I_EVENTS, I_TRACE_NAME, I_HAS_DIST, I_TRUNCATION, I_HAS_SPAN, I_NCOLS
};
#define TEXT_ONLY (TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV)
static const tprof_col_desc info_cols[I_NCOLS] = {
    [I_FORM] = TPROF_COL("form", TPROF_COL_ENUM, TPROF_COMBINE_PER_RANK, NULL,
                         "object (a trace object), array (a bare event array), table (an Ascend kernel table, CSV), "
                         "summary (an Ascend communication summary, JSON), database (an Ascend profiler database, "
                         "SQLite) or steps (Ascend's step table, CSV)"),
    [I_COMPRESSION] = TPROF_COL("compression", TPROF_COL_ENUM, TPROF_COMBINE_PER_RANK, NULL, "none, gzip or zstd"),
    [I_BYTES_READ] = TPROF_COL("bytes_read", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "file size", "bytes of the file read"),
    [I_BYTES_JSON] = TPROF_COL("bytes_json", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "JSON size", "bytes of JSON parsed"),
    [I_TRUNCATED] = TPROF_COL("truncated", TPROF_COL_BOOL, TPROF_COMBINE_MAX, NULL, "the input ended early"),
    [I_NOTE] = TPROF_COL("note", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL,
                         "what the reader noted of the file (null: nothing)"),
    [I_CHUNKS] = TPROF_COL("chunks", TPROF_COL_COUNT, TPROF_COMBINE_PER_RANK, NULL,
                           "chunks parsed in parallel (0: one pass)"),
    [I_SCHEMA] = TPROF_COL("schema_version", TPROF_COL_INT, TPROF_COMBINE_FIRST, "schema", "schemaVersion, null if absent"),
    [I_RANK] = TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_PER_RANK, NULL, "distributedInfo.rank, -1 unknown"),
    [I_WORLD] = TPROF_COL("world_size", TPROF_COL_INT, TPROF_COMBINE_FIRST, "world size",
                          "distributedInfo.world_size, -1 unknown"),
    [I_BACKEND] = TPROF_COL("backend", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "distributedInfo.backend or null"),
    [I_BASE_TIME] = TPROF_COL("base_time_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_PER_RANK, NULL,
                              "baseTimeNanoseconds, null if absent"),
    [I_TS_MIN] = TPROF_COL("ts_min_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_MIN, NULL, "first event start (0: none)"),
    [I_TS_MAX] = TPROF_COL("ts_max_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_MAX, NULL, "last event end (0: none)"),
    [I_EVENTS] = TPROF_COL("events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "all events, stored or not"),
    [I_TRACE_NAME] = TPROF_COL("trace_name", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "traceName, if any",
                               .flags = TEXT_ONLY),
    [I_HAS_DIST] = TPROF_COL("has_distributed", TPROF_COL_BOOL, TPROF_COMBINE_PER_RANK, NULL,
                             "the trace has distributedInfo", .flags = TEXT_ONLY),
    [I_TRUNCATION] = TPROF_COL("truncation", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL,
                               "where and how the input ended early", .flags = TEXT_ONLY),
    [I_HAS_SPAN] = TPROF_COL("has_span", TPROF_COL_BOOL, TPROF_COMBINE_MAX, NULL, "the trace has timed events",
                             .flags = TEXT_ONLY),
};

enum { D_ID, D_NAME, D_SMS, D_MEMORY, D_MAJOR, D_MINOR, D_NCOLS };
static const tprof_col_desc device_cols[D_NCOLS] = {
    [D_ID] = TPROF_COL("id", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "deviceProperties id", .flags = TPROF_COLF_KEY),
    [D_NAME] = TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the device's name"),
    [D_SMS] = TPROF_COL("num_sms", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "streaming multiprocessors (0: unknown)"),
    [D_MEMORY] = TPROF_COL("total_memory", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "its memory (0: unknown)"),
    [D_MAJOR] = TPROF_COL("compute_major", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "compute capability",
                          .flags = TEXT_ONLY),
    [D_MINOR] = TPROF_COL("compute_minor", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "compute capability, minor",
                          .flags = TEXT_ONLY),
};
enum { P_NUMBER, P_TS, P_DUR, P_NCOLS };
static const tprof_col_desc step_cols[P_NCOLS] = {
    [P_NUMBER] = TPROF_COL("number", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "N of ProfilerStep#N (-1: none)"),
    [P_TS] = TPROF_COL("ts_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_MIN, NULL, "its start"),
    [P_DUR] = TPROF_COL("dur_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "its duration"),
};
enum { C_KEY, C_COUNT, C_NCOLS };
static const tprof_col_desc kind_cols[C_NCOLS] = {
    [C_KEY] = TPROF_COL("kind", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "the event kind", .flags = TPROF_COLF_KEY),
    [C_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "events of the kind"),
};
static const tprof_col_desc category_cols[C_NCOLS] = {
    [C_KEY] = TPROF_COL("category", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the events' cat",
                        .flags = TPROF_COLF_KEY),
    [C_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "events of the category"),
};
enum { G_DEVICE, G_STREAM, G_EVENTS, G_NCOLS };
static const tprof_col_desc gpu_cols[G_NCOLS] = {
    [G_DEVICE] = TPROF_COL("device", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the GPU", .flags = TPROF_COLF_KEY),
    [G_STREAM] = TPROF_COL("stream", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "its stream", .flags = TPROF_COLF_KEY),
    [G_EVENTS] = TPROF_COL("events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "GPU events on it"),
};
enum { H_THREAD, H_EVENTS, H_NCOLS };
static const tprof_col_desc cpu_cols[H_NCOLS] = {
    [H_THREAD] = TPROF_COL("thread", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "pid/tid (names where strings)",
                           .flags = TPROF_COLF_KEY),
    [H_EVENTS] = TPROF_COL("events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "CPU events on it"),
};
enum { W_DUR_MISSING, W_DUR_NEGATIVE, W_DUR_ABSURD, W_DUR_INVALID, W_TS_MISSING, W_TS_INVALID, W_NON_OBJECT,
       W_FIRST, W_NCOLS };
static const tprof_col_desc warning_cols[W_NCOLS] = {
    [W_DUR_MISSING] = TPROF_COL("dur_missing", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "complete events without dur"),
    [W_DUR_NEGATIVE] = TPROF_COL("dur_negative", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "dur below 0"),
    [W_DUR_ABSURD] = TPROF_COL("dur_absurd", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "dur over a day"),
    [W_DUR_INVALID] = TPROF_COL("dur_invalid", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                                "dur not a number or out of range"),
    [W_TS_MISSING] = TPROF_COL("ts_missing", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "events without ts"),
    [W_TS_INVALID] = TPROF_COL("ts_invalid", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "ts not a number"),
    [W_NON_OBJECT] = TPROF_COL("non_object_events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                               "traceEvents entries that are not objects"),
    [W_FIRST] = TPROF_COL("first_offset", TPROF_COL_COUNT, TPROF_COMBINE_PER_RANK, NULL,
                          "the byte of the first of them", .flags = TEXT_ONLY),
};
enum { F_KEY, F_VALUE, F_NCOLS };
static const tprof_col_desc field_cols[F_NCOLS] = {
    [F_KEY] = TPROF_COL("key", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                        "form, compression, bytes_read, ..., kind.K, category.C", .flags = TPROF_COLF_KEY),
    [F_VALUE] = TPROF_COL("value", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "its value, as text"),
};

static const tprof_table_desc devices = { .name = "devices", .doc = "deviceProperties", .cols = device_cols,
                                          .ncols = D_NCOLS, .json_after = "base_time_ns" };
static const tprof_table_desc steps = { .name = "steps", .doc = "ProfilerStep spans in time order", .cols = step_cols,
                                        .ncols = P_NCOLS, .json_after = "ts_max_ns" };
static const tprof_table_desc kinds = { .name = "kinds", .doc = "events by kind (every kind)", .cols = kind_cols,
                                        .ncols = C_NCOLS, .json_keyed = 1, .json_keyed_value = 1,
                                        .json_after = "events" };
static const tprof_table_desc categories = { .name = "categories", .doc = "events by cat", .cols = category_cols,
                                             .ncols = C_NCOLS, .json_keyed = 1, .json_keyed_value = 1,
                                             .json_after = "events" };
static const tprof_table_desc gpu_tracks = { .name = "gpu_tracks", .doc = "GPU streams", .cols = gpu_cols,
                                             .ncols = G_NCOLS, .json_after = "events" };
static const tprof_table_desc cpu_threads = { .name = "cpu_threads", .doc = "host threads", .cols = cpu_cols,
                                              .ncols = H_NCOLS, .json_after = "events" };
static const tprof_table_desc warnings = { .name = "warnings", .doc = "data the reader set aside or repaired",
                                           .cols = warning_cols, .ncols = W_NCOLS, .json_single = 1,
                                           .json_after = "events" };
static const tprof_table_desc fields = { .name = "fields", .doc = "the main facts as key/value rows (CSV)",
                                         .cols = field_cols, .ncols = F_NCOLS, .no_json = 1 };
static const tprof_table_desc info_top = { .name = "", .cols = info_cols, .ncols = I_NCOLS };
static const tprof_table_desc *const info_tables[] = { &devices,     &steps,    &kinds,  &categories,
                                                       &gpu_tracks, &cpu_threads, &warnings, &fields };
enum { TB_DEVICES, TB_STEPS, TB_KINDS, TB_CATEGORIES, TB_GPU, TB_CPU, TB_WARNINGS, TB_FIELDS };
const tprof_result_desc tprof_info_desc = { .name = "info", .version = 1, .top = &info_top, .tables = info_tables,
                                            .ntables = 8, .csv_table = TB_FIELDS + 1, .no_label = 1 };

/* "pid/tid", names where they are strings. */
static void thread_label(const tprof_trace *t, const tprof_cpu_track *c, char *buf, size_t len)
{
    char p[32], q[32];
    if (c->flags & TPROF_EV_PID_STR) snprintf(p, sizeof p, "%.30s", tprof_trace_str(t, (uint32_t)c->pid));
    else snprintf(p, sizeof p, "%" PRId64, c->pid);
    if (c->flags & TPROF_EV_TID_STR) snprintf(q, sizeof q, "%.30s", tprof_trace_str(t, (uint32_t)c->tid));
    else snprintf(q, sizeof q, "%" PRId64, c->tid);
    snprintf(buf, len, "%s/%s", p, q);
}

/* A row of ints (and one string at column SCOL when S is given). */
static int add_row(tprof_rows *t, const int64_t *v, size_t n, int scol, const char *s)
{
    long i = tprof_rows_add(t);
    if (i < 0) return TPROF_ENOMEM;
    for (size_t c = 0; c < n; c++)
        if ((int)c != scol) tprof_rows_set_i(t, (size_t)i, c, v[c]);
    return s ? tprof_rows_set_s(t, (size_t)i, (size_t)scol, s) : 0;
}

static int add_field(tprof_rows *t, const char *key, const char *fmt_value)
{
    long i = tprof_rows_add(t);
    if (i < 0 || tprof_rows_set_s(t, (size_t)i, F_KEY, key) || tprof_rows_set_s(t, (size_t)i, F_VALUE, fmt_value))
        return TPROF_ENOMEM;
    return 0;
}

static int add_count_field(tprof_rows *t, const char *key, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return add_field(t, key, buf);
}

int tprof_info_tables(const tprof_trace *t, tprof_result **out)
{
    *out = NULL;
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    tprof_result *res = tprof_result_new(&tprof_info_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res);
    const char *form = m->form == TPROF_FORM_OBJECT         ? "object"
                       : m->form == TPROF_FORM_ARRAY        ? "array"
                       : m->form == TPROF_FORM_ASCEND_COMM  ? "summary"
                       : m->form == TPROF_FORM_ASCEND_DB    ? "database"
                       : m->form == TPROF_FORM_ASCEND_STEPS ? "steps"
                                                            : "table";
    int rc = tprof_rows_set_s(top, 0, I_FORM, form);
    if (!rc) rc = tprof_rows_set_s(top, 0, I_COMPRESSION, tprof_compression_name(m->compression));
    if (!rc && m->note) rc = tprof_rows_set_s(top, 0, I_NOTE, m->note);
    if (!rc && m->backend) rc = tprof_rows_set_s(top, 0, I_BACKEND, m->backend);
    if (!rc && m->trace_name) rc = tprof_rows_set_s(top, 0, I_TRACE_NAME, m->trace_name);
    if (!rc && m->truncated) rc = tprof_rows_set_s(top, 0, I_TRUNCATION, tprof_trace_truncation(t));
    tprof_rows_set_i(top, 0, I_BYTES_READ, (int64_t)m->bytes_in);
    tprof_rows_set_i(top, 0, I_BYTES_JSON, (int64_t)m->bytes_json);
    tprof_rows_set_i(top, 0, I_TRUNCATED, m->truncated != 0);
    tprof_rows_set_i(top, 0, I_CHUNKS, m->chunks);
    if (m->has_schema_version) tprof_rows_set_i(top, 0, I_SCHEMA, m->schema_version);
    tprof_rows_set_i(top, 0, I_RANK, m->rank);
    tprof_rows_set_i(top, 0, I_WORLD, m->world_size);
    if (m->has_base_time) tprof_rows_set_i(top, 0, I_BASE_TIME, m->base_time_ns);
    tprof_rows_set_i(top, 0, I_TS_MIN, m->ts_max >= m->ts_min ? m->ts_min : 0);
    tprof_rows_set_i(top, 0, I_TS_MAX, m->ts_max >= m->ts_min ? m->ts_max : 0);
    tprof_rows_set_i(top, 0, I_EVENTS, (int64_t)m->nevents);
    tprof_rows_set_i(top, 0, I_HAS_DIST, m->has_distributed != 0);
    tprof_rows_set_i(top, 0, I_HAS_SPAN, m->ts_max >= m->ts_min);
    for (size_t i = 0; !rc && i < m->ndevices; i++) {
        const tprof_device *d = &m->devices[i];
        rc = add_row(tprof_result_table(res, TB_DEVICES),
                     (const int64_t[]){ d->id, 0, d->num_sms, d->total_memory, d->compute_major, d->compute_minor },
                     D_NCOLS, D_NAME, d->name ? d->name : "");
    }
    for (size_t i = 0; !rc && i < m->nsteps; i++)
        rc = add_row(tprof_result_table(res, TB_STEPS),
                     (const int64_t[]){ m->steps[i].number, m->steps[i].ts, m->steps[i].dur }, P_NCOLS, -1, NULL);
    for (int k = 0; !rc && k < TPROF_KIND_COUNT; k++)
        rc = add_row(tprof_result_table(res, TB_KINDS), (const int64_t[]){ 0, (int64_t)m->kind_counts[k] }, C_NCOLS,
                     C_KEY, tprof_kind_name((tprof_kind)k));
    for (size_t i = 0; !rc && i < m->ncats; i++)
        rc = add_row(tprof_result_table(res, TB_CATEGORIES), (const int64_t[]){ 0, (int64_t)m->cats[i].count },
                     C_NCOLS, C_KEY, tprof_trace_str(t, m->cats[i].cat));
    for (size_t i = 0; !rc && i < m->ngpu_tracks; i++)
        rc = add_row(tprof_result_table(res, TB_GPU),
                     (const int64_t[]){ m->gpu_tracks[i].device, m->gpu_tracks[i].stream,
                                        (int64_t)m->gpu_tracks[i].events },
                     G_NCOLS, -1, NULL);
    for (size_t i = 0; !rc && i < m->ncpu_tracks; i++) {
        char id[64];
        thread_label(t, &m->cpu_tracks[i], id, sizeof id);
        rc = add_row(tprof_result_table(res, TB_CPU), (const int64_t[]){ 0, (int64_t)m->cpu_tracks[i].events },
                     H_NCOLS, H_THREAD, id);
    }
    const tprof_warnings *w = &m->warn;
    if (!rc)
        rc = add_row(tprof_result_table(res, TB_WARNINGS),
                     (const int64_t[]){ (int64_t)w->dur_missing, (int64_t)w->dur_negative, (int64_t)w->dur_absurd,
                                        (int64_t)w->dur_invalid, (int64_t)w->ts_missing, (int64_t)w->ts_bad,
                                        (int64_t)w->non_object_events, (int64_t)w->first_offset },
                     W_NCOLS, -1, NULL);
    /* the long form CSV has always had */
    tprof_rows *f = tprof_result_table(res, TB_FIELDS);
    if (!rc) rc = add_field(f, "form", form);
    if (!rc) rc = add_field(f, "compression", tprof_compression_name(m->compression));
    const struct {
        const char *key;
        int64_t v;
    } counts[] = { { "bytes_read", (int64_t)m->bytes_in }, { "bytes_json", (int64_t)m->bytes_json },
                   { "truncated", m->truncated },          { "rank", m->rank },
                   { "world_size", m->world_size },        { "devices", (int64_t)m->ndevices },
                   { "steps", (int64_t)m->nsteps },        { "events", (int64_t)m->nevents } };
    for (size_t i = 0; !rc && i < sizeof counts / sizeof *counts; i++) rc = add_count_field(f, counts[i].key, counts[i].v);
    for (int k = 0; !rc && k < TPROF_KIND_COUNT; k++) {
        char key[64];
        snprintf(key, sizeof key, "kind.%s", tprof_kind_name((tprof_kind)k));
        rc = add_count_field(f, key, (int64_t)m->kind_counts[k]);
    }
    for (size_t i = 0; !rc && i < m->ncats; i++) {
        char key[300];
        snprintf(key, sizeof key, "category.%s", tprof_trace_str(t, m->cats[i].cat));
        rc = add_count_field(f, key, (int64_t)m->cats[i].count);
    }
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
