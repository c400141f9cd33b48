/* Ascend's memory view: torch_npu's memory_record.csv (each component's
 * allocator totals over time: PTA, the PyTorch adapter's caching
 * allocator; GE, the graph engine's; PTA+GE; APP, the whole process) and
 * the operator_memory.csv beside it (each allocation: its op, size, when it
 * was made and freed). Per component and device the peak allocated,
 * reserved and active bytes and when; at the peak of allocated memory, the
 * ops whose allocations were live. Units as torch_npu writes them: MB are
 * 2^20 bytes, KB 2^10, times us (docs/METRICS.md, "Ascend memory"). The
 * database form (ascend_pytorch_profiler_N.db: MEMORY_RECORD and OP_MEMORY,
 * bytes and ns, names in STRING_IDS) gives the same. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/csv.h"
#include "../io/sqlite_ro.h"
#include "mem_internal.h"
#include "trainprof/error.h"
#include "trainprof/json.h"
#include "trainprof/mem.h"
#include "trainprof/source.h"
#include "trainprof/trace.h"

enum { C_COMPONENT, C_DEVICE, C_SAMPLES, C_ALLOC, C_ALLOC_TS, C_RESERVED, C_RESERVED_TS, C_ACTIVE, C_FINAL, C_NCOLS };
static const tprof_col_desc comp_cols[C_NCOLS] = {
    [C_COMPONENT] = TPROF_COL("component", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "component",
                              "PTA (the PyTorch adapter's caching allocator), GE (graph engine), PTA+GE, APP (the "
                              "process), WORKSPACE", .flags = TPROF_COLF_KEY),
    [C_DEVICE] = TPROF_COL("device", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "device", "\"Device Type\" (NPU:0)",
                           .flags = TPROF_COLF_KEY),
    [C_SAMPLES] = TPROF_COL("samples", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "records", "its rows"),
    [C_ALLOC] = TPROF_COL("peak_allocated_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, "peak allocated",
                          "the highest \"Total Allocated(MB)\"", .flags = TPROF_COLF_METRIC),
    [C_ALLOC_TS] = TPROF_COL("peak_allocated_ts_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_FIRST, NULL,
                             "when it was first reached", .flags = TPROF_COLF_NO_TABLE),
    [C_RESERVED] = TPROF_COL("peak_reserved_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, "peak reserved",
                             "the highest \"Total Reserved(MB)\""),
    [C_RESERVED_TS] = TPROF_COL("peak_reserved_ts_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_FIRST, NULL,
                                "when it was first reached", .flags = TPROF_COLF_NO_TABLE),
    [C_ACTIVE] = TPROF_COL("peak_active_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, "peak active",
                           "the highest \"Total Active(MB)\" (null when not written)"),
    [C_FINAL] = TPROF_COL("final_allocated_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "at the end",
                          "allocated at its last record"),
};
enum { O_NAME, O_COUNT, O_BYTES, O_SHARE, O_NCOLS };
static const tprof_col_desc op_cols[O_NCOLS] = {
    [O_NAME] = TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "op",
                         "the op that allocated (operator_memory.csv's Name)", .flags = TPROF_COLF_KEY, .width = 60),
    [O_COUNT] = TPROF_COL("allocations", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "allocations", "its live allocations"),
    [O_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "bytes", "their size (Size(KB))",
                          .flags = TPROF_COLF_METRIC),
    [O_SHARE] = TPROF_COL("share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "of the peak",
                          "bytes / the peak allocated bytes", .num = "bytes", .den = "top.peak_bytes"),
};
enum { T_COMPONENT, T_DEVICE, T_PEAK, T_PEAK_TS, T_LIVE, T_LIVE_N, T_OPS_FILE, T_NCOLS };
static const tprof_col_desc top_cols[T_NCOLS] = {
    [T_COMPONENT] = TPROF_COL("peak_component", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                              "the component whose peak the ops are taken at: PTA, else PTA+GE, else the first"),
    [T_DEVICE] = TPROF_COL("peak_device", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "its device"),
    [T_PEAK] = TPROF_COL("peak_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, NULL, "its peak allocated bytes"),
    [T_PEAK_TS] = TPROF_COL("peak_ts_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_FIRST, NULL, "when (ns)"),
    [T_LIVE] = TPROF_COL("live_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, NULL,
                         "the allocations live then (allocated at or before, released after or never), summed; "
                         "null without operator_memory.csv or OP_MEMORY"),
    [T_LIVE_N] = TPROF_COL("live_allocations", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "how many"),
    [T_OPS_FILE] = TPROF_COL("operator_memory", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                             "where the allocations were read: the operator_memory.csv beside it, or the "
                             "database's table (PATH:OP_MEMORY); null when none"),
};
static const tprof_table_desc comp_table = { .name = "components", .title = "memory per component",
                                             .doc = "per component and device, in the order first seen",
                                             .cols = comp_cols, .ncols = C_NCOLS };
static const tprof_table_desc ops_table = { .name = "peak_ops", .title = "ops holding memory at the peak",
                                            .doc = "by bytes, largest first", .cols = op_cols, .ncols = O_NCOLS,
                                            .limited = 1 };
static const tprof_table_desc top_table = { .name = "", .cols = top_cols, .ncols = T_NCOLS };
static const tprof_table_desc *const tables[] = { &comp_table, &ops_table, &tprof_mem_values_table };
const tprof_result_desc tprof_mem_ascend_desc = { .name = "mem_ascend", .version = 1, .top = &top_table,
                                                  .tables = tables, .ntables = 3, .csv_table = 3, .no_label = 1,
                                                  .doc = "Ascend's memory_record.csv and operator_memory.csv, or the "
                                                         "profiler database's MEMORY_RECORD and OP_MEMORY" };

static ssize_t source_read(void *ctx, void *buf, size_t cap) { return tprof_source_read(ctx, buf, cap); }

/* A size in UNIT bytes (2^20 for MB), or -1 when absent or not a number. */
static int64_t bytes_of(char **f, size_t nf, long col, double unit)
{
    size_t n;
    const char *s = tprof_csv_value(f, nf, col, &n);
    if (!s) return -1;
    double v = tprof_json_parse_double(s, n);
    return isfinite(v) && v >= 0 && v * unit < 9e18 ? llround(v * unit) : -1;
}

/* A time in us as ns, or INT64_MIN when absent. */
static int64_t ns_of(char **f, size_t nf, long col)
{
    size_t n;
    int64_t v;
    const char *s = tprof_csv_value(f, nf, col, &n);
    return s && !tprof_json_parse_scaled(s, n, 3, &v) ? v : INT64_MIN;
}

typedef struct {
    char component[32], device[32];
    int64_t samples, alloc, alloc_ts, reserved, reserved_ts, active, final;
} comp;

typedef struct {
    tprof_csv *csv;
    tprof_source *src;
} table;

static int open_table(table *t, const char *path, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    int rc = tprof_source_open(&t->src, path, err, errlen);
    if (rc) return rc;
    if (tprof_csv_open(&t->csv, source_read, t->src)) {
        tprof_source_close(t->src);
        return TPROF_ENOMEM;
    }
    return 0;
}

static void close_table(table *t)
{
    tprof_csv_close(t->csv);
    tprof_source_close(t->src);
}

/* One record of component C (CL bytes) on device D (DL bytes; D may be
 * NULL) at TS: its component's peaks and last value (sizes -1: absent). */
static int add_record(comp **comps, size_t *ncomp, size_t *cap, const char *c, size_t cl, const char *d, size_t dl,
                      int64_t ts, int64_t alloc, int64_t reserved, int64_t active)
{
    if (!d) d = "", dl = 0;
    /* names are kept to 31 bytes: longer ones are told apart by those */
    if (cl > sizeof((comp *)0)->component - 1) cl = sizeof((comp *)0)->component - 1;
    if (dl > sizeof((comp *)0)->device - 1) dl = sizeof((comp *)0)->device - 1;
    size_t k = 0;
    while (k < *ncomp && !((*comps)[k].component[cl] == 0 && !strncmp((*comps)[k].component, c, cl) &&
                           (*comps)[k].device[dl] == 0 && !strncmp((*comps)[k].device, d, dl)))
        k++;
    if (k == *ncomp) {
        if (*ncomp == *cap) {
            comp *g = realloc(*comps, (*cap = *cap ? *cap * 2 : 8) * sizeof *g);
            if (!g) return TPROF_ENOMEM;
            *comps = g;
        }
        comp *n = &(*comps)[(*ncomp)++];
        memset(n, 0, sizeof *n);
        snprintf(n->component, sizeof n->component, "%.*s", (int)cl, c);
        snprintf(n->device, sizeof n->device, "%.*s", (int)dl, d);
        n->alloc = n->reserved = n->active = -1;
    }
    comp *p = &(*comps)[k];
    p->samples++;
    if (alloc > p->alloc) p->alloc = alloc, p->alloc_ts = ts;
    if (reserved > p->reserved) p->reserved = reserved, p->reserved_ts = ts;
    if (active > p->active) p->active = active;
    p->final = alloc;
    return 0;
}

/* The records into COMPS. 0, TPROF_ETRUNC (cut in its last row: the rows
 * before it kept), or an error with ERR set. */
static int read_records(table *t, const char *path, comp **comps, size_t *ncomp, char *err, size_t errlen)
{
    enum { R_COMPONENT, R_TS, R_ALLOC, R_RESERVED, R_ACTIVE, R_DEVICE, R_N };
    static const char *const names[R_N] = { "Component",          "Timestamp(us)",    "Total Allocated(MB)",
                                            "Total Reserved(MB)", "Total Active(MB)", "Device Type" };
    char **f;
    size_t nf, cap = 0;
    long col[R_N];
    int rc = tprof_csv_row(t->csv, &f, &nf);
    if (rc <= 0) {
        snprintf(err, errlen, "%s: %s", path, rc ? tprof_csv_errmsg(t->csv) : "an empty file: no header row");
        return rc ? rc : TPROF_EFORMAT;
    }
    tprof_csv_header_columns(f, nf, names, R_N, col);
    if (col[R_COMPONENT] < 0 || col[R_TS] < 0 || col[R_ALLOC] < 0) {
        snprintf(err, errlen, "%s: line 1: not a memory_record.csv: it needs Component, Timestamp(us) and Total "
                              "Allocated(MB) columns", path);
        return TPROF_EFORMAT;
    }
    while ((rc = tprof_csv_row(t->csv, &f, &nf)) > 0) {
        size_t cl, dl;
        const char *c = tprof_csv_value(f, nf, col[R_COMPONENT], &cl), *d = tprof_csv_value(f, nf, col[R_DEVICE], &dl);
        int64_t ts = ns_of(f, nf, col[R_TS]), alloc = bytes_of(f, nf, col[R_ALLOC], 1048576.0);
        if (!c || ts == INT64_MIN || alloc < 0) {
            snprintf(err, errlen, "%s: line %llu (byte %llu): %s", path, (unsigned long long)tprof_csv_row_line(t->csv),
                     (unsigned long long)tprof_csv_row_offset(t->csv),
                     rc == TPROF_CSV_LAST ? "cut inside its last row"
                                          : "a record without its component, time or allocated size");
            rc = rc == TPROF_CSV_LAST ? TPROF_ETRUNC : TPROF_EFORMAT;
            break;
        }
        int64_t reserved = bytes_of(f, nf, col[R_RESERVED], 1048576.0), active = bytes_of(f, nf, col[R_ACTIVE], 1048576.0);
        if (add_record(comps, ncomp, &cap, c, cl, d, d ? dl : 0, ts, alloc, reserved, active)) return TPROF_ENOMEM;
    }
    if (rc < 0 && rc != TPROF_ETRUNC && rc != TPROF_EFORMAT)
        snprintf(err, errlen, "%s: %s", path, tprof_csv_errmsg(t->csv));
    return rc > 0 ? 0 : rc;
}

typedef struct {
    char *name;
    int64_t count, bytes;
} live_op;

static int cmp_live(const void *a, const void *b)
{
    const live_op *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* One allocation of op NAME (NL bytes) of SIZE bytes live at the peak. */
static int add_live(live_op **ops, size_t *nops, size_t *cap, const char *name, size_t nl, int64_t size,
                    int64_t *bytes, int64_t *count)
{
    size_t k = 0;
    while (k < *nops && !(strlen((*ops)[k].name) == nl && !memcmp((*ops)[k].name, name, nl))) k++;
    if (k == *nops) {
        if (*nops == *cap) {
            live_op *g = realloc(*ops, (*cap = *cap ? *cap * 2 : 16) * sizeof *g);
            if (!g) return TPROF_ENOMEM;
            *ops = g;
        }
        if (!((*ops)[k].name = strndup(name, nl))) return TPROF_ENOMEM;
        (*ops)[k].count = (*ops)[k].bytes = 0;
        (*nops)++;
    }
    (*ops)[k].count++;
    (*ops)[k].bytes = tprof_sat_add((*ops)[k].bytes, size);
    *bytes = tprof_sat_add(*bytes, size);
    (*count)++;
    return 0;
}

/* The allocations of operator_memory.csv live at AT on DEVICE, by op. */
static int live_at(table *t, int64_t at, const char *device, live_op **ops, size_t *nops, int64_t *bytes,
                   int64_t *count)
{
    enum { P_NAME, P_SIZE, P_ALLOC, P_RELEASE, P_DEVICE, P_N };
    static const char *const names[P_N] = { "Name", "Size(KB)", "Allocation Time(us)", "Release Time(us)",
                                            "Device Type" };
    char **f;
    size_t nf, cap = 0;
    long col[P_N];
    if (tprof_csv_row(t->csv, &f, &nf) <= 0) return 0;
    tprof_csv_header_columns(f, nf, names, P_N, col);
    if (col[P_NAME] < 0 || col[P_SIZE] < 0 || col[P_ALLOC] < 0) return 0;
    int rc;
    while ((rc = tprof_csv_row(t->csv, &f, &nf)) > 0) {
        size_t nl, dl;
        const char *name = tprof_csv_value(f, nf, col[P_NAME], &nl), *d = tprof_csv_value(f, nf, col[P_DEVICE], &dl);
        int64_t size = bytes_of(f, nf, col[P_SIZE], 1024.0), made = ns_of(f, nf, col[P_ALLOC]),
                freed = ns_of(f, nf, col[P_RELEASE]);
        if (!name || size <= 0 || made == INT64_MIN || made > at || (freed != INT64_MIN && freed <= at)) continue;
        if (d && dl > sizeof((comp *)0)->device - 1) dl = sizeof((comp *)0)->device - 1; /* as the records keep it */
        if (d && device[0] && !(strlen(device) == dl && !memcmp(device, d, dl))) continue;
        if (add_live(ops, nops, &cap, name, nl, size, bytes, count)) return TPROF_ENOMEM;
    }
    return 0; /* a cut or malformed operator table gives what it held before */
}

static int device_index(const char *d)
{
    const char *c = strchr(d, ':');
    long v = c ? strtol(c + 1, NULL, 10) : 0;
    return v < 0 || v > 1000000 ? 0 : (int)v;
}

static int add_value(tprof_rows *t, const char *device, const char *metric, const char *site, int64_t v)
{
    return tprof_mem_add_value(t, device_index(device), metric, site, v);
}

static int fill(tprof_result *res, const comp *c, size_t n, const comp *peak, live_op *ops, size_t nops,
                const char *ops_path, int64_t live, int64_t live_n)
{
    tprof_rows *top = tprof_result_top(res), *ct = tprof_result_table(res, 0), *ot = tprof_result_table(res, 1),
               *vt = tprof_result_table(res, 2);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        long k = tprof_rows_add(ct);
        if (k < 0 || tprof_rows_set_s(ct, (size_t)k, C_COMPONENT, c[i].component) ||
            tprof_rows_set_s(ct, (size_t)k, C_DEVICE, c[i].device))
            return TPROF_ENOMEM;
        const int64_t v[] = { c[i].samples, c[i].alloc, c[i].alloc_ts, c[i].reserved, c[i].reserved_ts, c[i].active,
                              c[i].final };
        for (size_t j = 0; j < sizeof v / sizeof *v; j++) /* a peak's time only where the peak is known */
            if ((j == 2 || j == 4) ? v[j - 1] >= 0 : v[j] >= 0) tprof_rows_set_i(ct, (size_t)k, C_SAMPLES + j, v[j]);
        char m[64];
        static const char *const names[] = { "peak_allocated_bytes", "peak_reserved_bytes", "peak_active_bytes",
                                              "final_allocated_bytes" };
        const int64_t mv[] = { c[i].alloc, c[i].reserved, c[i].active, c[i].final };
        for (size_t j = 0; !rc && j < 4; j++)
            if (mv[j] >= 0) {
                snprintf(m, sizeof m, "%s.%s", c[i].component, names[j]);
                rc = add_value(vt, c[i].device, m, NULL, mv[j]);
            }
    }
    if (!rc && peak) {
        rc = tprof_rows_set_s(top, 0, T_COMPONENT, peak->component) || tprof_rows_set_s(top, 0, T_DEVICE, peak->device)
                 ? TPROF_ENOMEM
                 : 0;
        tprof_rows_set_i(top, 0, T_PEAK, peak->alloc);
        tprof_rows_set_i(top, 0, T_PEAK_TS, peak->alloc_ts);
        if (ops_path) {
            tprof_rows_set_i(top, 0, T_LIVE, live);
            tprof_rows_set_i(top, 0, T_LIVE_N, live_n);
            if (tprof_rows_set_s(top, 0, T_OPS_FILE, ops_path)) rc = TPROF_ENOMEM;
        }
    }
    for (size_t i = 0; !rc && i < nops; i++) {
        long k = tprof_rows_add(ot);
        if (k < 0 || tprof_rows_set_s(ot, (size_t)k, O_NAME, ops[i].name)) return TPROF_ENOMEM;
        tprof_rows_set_i(ot, (size_t)k, O_COUNT, ops[i].count);
        tprof_rows_set_i(ot, (size_t)k, O_BYTES, ops[i].bytes);
        rc = add_value(vt, peak->device, "peak_op_bytes", ops[i].name, ops[i].bytes);
    }
    if (!rc) tprof_rows_derive(ot);
    return rc;
}

/* The peak the ops are taken at: PTA's (the caching allocator), else PTA+GE's, else the first. */
static const comp *peak_of(const comp *comps, size_t n)
{
    const comp *peak = NULL;
    static const char *const prefer[] = { "PTA", "PTA+GE" };
    for (size_t p = 0; !peak && p < 2; p++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(comps[i].component, prefer[p]) && (!peak || comps[i].alloc > peak->alloc)) peak = &comps[i];
    return peak ? peak : n ? &comps[0] : NULL;
}

/* What a reader found, then the result made of it. */
typedef struct {
    comp *comps;
    size_t ncomp;
    live_op *ops;
    size_t nops;
    int64_t live, live_n;
    char *ops_source; /* where the ops were read, NULL: nowhere */
} found;

static int conclude(found *f, int rc, tprof_result **out)
{
    const comp *peak = peak_of(f->comps, f->ncomp);
    if (f->nops) qsort(f->ops, f->nops, sizeof *f->ops, cmp_live);
    tprof_result *res = rc == TPROF_ENOMEM ? NULL : tprof_result_new(&tprof_mem_ascend_desc);
    int frc = res ? fill(res, f->comps, f->ncomp, peak, f->ops, f->nops, f->ops_source, f->live, f->live_n)
                  : TPROF_ENOMEM;
    for (size_t i = 0; i < f->nops; i++) free(f->ops[i].name);
    free(f->ops);
    free(f->ops_source);
    free(f->comps);
    if (frc) {
        tprof_result_free(res);
        return frc;
    }
    *out = res;
    return rc; /* 0, or TPROF_ETRUNC with the result of what was read */
}

/* A text column, or "" (NULL, another type). */
static const char *text_of(sqlite3_stmt *st, int c, size_t *len)
{
    const unsigned char *v = sqlite3_column_type(st, c) == SQLITE_TEXT ? sqlite3_column_text(st, c) : NULL;
    *len = v ? (size_t)sqlite3_column_bytes(st, c) : 0;
    return v ? (const char *)v : "";
}

static int64_t int_of(sqlite3_stmt *st, int c, int64_t absent)
{
    return sqlite3_column_type(st, c) == SQLITE_NULL ? absent : sqlite3_column_int64(st, c);
}

/* The database form: MEMORY_RECORD's records, then OP_MEMORY's allocations live at the peak. */
static int read_db(const char *path, found *f, char *err, size_t errlen)
{
    sqlite3 *db;
    char msg[256];
    int rc = tprof_sqlite_open_ro(&db, path, NULL, 0, msg, sizeof msg);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, msg);
        return rc;
    }
    int rec = tprof_sqlite_has_table(db, "MEMORY_RECORD", msg, sizeof msg),
        ids = tprof_sqlite_has_table(db, "STRING_IDS", msg, sizeof msg),
        opm = tprof_sqlite_has_table(db, "OP_MEMORY", msg, sizeof msg);
    if (rec < 0 || ids < 0 || opm < 0) {
        snprintf(err, errlen, "%s: %s", path, msg);
        sqlite3_close(db);
        return TPROF_EFORMAT;
    }
    if (!rec || !ids) {
        snprintf(err, errlen, "%s: no MEMORY_RECORD%s table: the profile holds no memory view (record it with "
                 "profile_memory=True)", path, rec ? " with STRING_IDS" : "");
        sqlite3_close(db);
        return TPROF_EFORMAT;
    }
    sqlite3_stmt *st;
    size_t cap = 0;
    rc = sqlite3_prepare_v2(db,
                            "SELECT s.value, r.timestamp, r.totalAllocated, r.totalReserved, r.totalActive, r.deviceId "
                            "FROM MEMORY_RECORD AS r LEFT JOIN STRING_IDS AS s ON s.id = r.component "
                            "ORDER BY r.rowid", -1, &st, NULL) == SQLITE_OK ? 0 : TPROF_EFORMAT;
    int step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        size_t cl;
        const char *c = text_of(st, 0, &cl);
        char dev[32] = "";
        if (sqlite3_column_type(st, 5) != SQLITE_NULL)
            snprintf(dev, sizeof dev, "NPU:%lld", (long long)sqlite3_column_int64(st, 5)); /* the CSV's Device Type */
        int64_t ts = int_of(st, 1, INT64_MIN), alloc = int_of(st, 2, -1);
        if (!cl || ts == INT64_MIN || alloc < 0) continue; /* as the CSV's, a record needs these */
        rc = add_record(&f->comps, &f->ncomp, &cap, c, cl, dev, strlen(dev), ts, alloc, int_of(st, 3, -1),
                        int_of(st, 4, -1));
    }
    if (!rc && step != SQLITE_DONE) rc = step == SQLITE_NOMEM ? TPROF_ENOMEM : TPROF_EFORMAT;
    if (rc && rc != TPROF_ENOMEM) snprintf(err, errlen, "%s: table MEMORY_RECORD: %s", path, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    const comp *peak = rc ? NULL : peak_of(f->comps, f->ncomp);
    if (peak && opm == 1 &&
        sqlite3_prepare_v2(db,
                           "SELECT s.value, o.size, o.deviceId FROM OP_MEMORY AS o "
                           "LEFT JOIN STRING_IDS AS s ON s.id = o.name WHERE o.allocationTime <= ?1 "
                           "AND (o.releaseTime IS NULL OR o.releaseTime > ?1) ORDER BY o.rowid",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, peak->alloc_ts);
        size_t ocap = 0;
        while (!rc && sqlite3_step(st) == SQLITE_ROW) { /* a cut table gives what it held */
            size_t nl;
            const char *name = text_of(st, 0, &nl);
            int64_t size = int_of(st, 1, -1);
            char dev[32] = "";
            if (sqlite3_column_type(st, 2) != SQLITE_NULL)
                snprintf(dev, sizeof dev, "NPU:%lld", (long long)sqlite3_column_int64(st, 2));
            if (!nl || size <= 0 || (dev[0] && peak->device[0] && strcmp(dev, peak->device) != 0)) continue;
            rc = add_live(&f->ops, &f->nops, &ocap, name, nl, size, &f->live, &f->live_n);
        }
        sqlite3_finalize(st);
        if (!rc && !(f->ops_source = malloc(strlen(path) + sizeof ":OP_MEMORY"))) rc = TPROF_ENOMEM;
        if (!rc) sprintf(f->ops_source, "%s:OP_MEMORY", path);
    }
    sqlite3_close(db);
    return rc;
}

/* Whether PATH is an SQLite file (by its header). */
static int is_sqlite(const char *path)
{
    FILE *fp = fopen(path, "rb");
    unsigned char head[16];
    size_t n = fp ? fread(head, 1, sizeof head, fp) : 0;
    if (fp) fclose(fp);
    return tprof_input_sniff(head, n) == TPROF_INPUT_ASCEND_DB; /* the one place that knows the header */
}

int tprof_mem_ascend(const char *path, tprof_result **out, char *err, size_t errlen)
{
    *out = NULL;
    err[0] = 0;
    found f = { 0 };
    if (is_sqlite(path)) {
        int rc = read_db(path, &f, err, errlen);
        if (rc) { /* a database that fails partway is an error, its rows not half-reported */
            for (size_t i = 0; i < f.nops; i++) free(f.ops[i].name);
            free(f.ops);
            free(f.ops_source);
            free(f.comps);
            return rc;
        }
        return conclude(&f, rc, out);
    }
    table t;
    int rc = open_table(&t, path, err, errlen);
    if (rc) return rc;
    rc = read_records(&t, path, &f.comps, &f.ncomp, err, errlen);
    close_table(&t);
    if (rc && rc != TPROF_ETRUNC) {
        free(f.comps);
        return rc;
    }
    const comp *peak = peak_of(f.comps, f.ncomp);
    /* operator_memory.csv beside it */
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path + 1) : 0;
    char *ops_path = malloc(dl + sizeof "operator_memory.csv");
    if (ops_path) {
        memcpy(ops_path, path, dl);
        memcpy(ops_path + dl, "operator_memory.csv", sizeof "operator_memory.csv");
        char e2[64];
        if (peak && open_table(&t, ops_path, e2, sizeof e2) == 0) {
            int lr = live_at(&t, peak->alloc_ts, peak->device, &f.ops, &f.nops, &f.live, &f.live_n);
            close_table(&t);
            if (lr) rc = lr;
            f.ops_source = ops_path;
            ops_path = NULL;
        }
    }
    free(ops_path);
    return conclude(&f, rc, out);
}
