/* Ascend's profiler database (torch_npu's ascend_pytorch_profiler_N.db,
 * msprof's unified db) read as a trace: its device tasks (TASK joined to
 * COMPUTE_TASK_INFO, names in STRING_IDS), its communication ops
 * (COMMUNICATION_OP) and its steps (STEP_TIME), as kernel_details.csv and
 * trace_view.json give them. SQLite opens it read-only and defensively:
 * only the queries written here run; triggers, views, schema-defined
 * functions (untrusted schema), extensions and FTS tokenizers are off, and a
 * table declared virtual (USING a module) counts as absent, so no code the
 * file names runs over its data; pages are size-checked as they are read.
 * Table and column names are those of msprof-analyze's
 * queries (docs/METRICS.md, "Ascend profiler database"). */
#include "reader_internal.h"
#include "../io/sqlite_ro.h"
#include "../util/i64map.h"

#include "trainprof/error.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tprof_trace *t;
    reader r;
    sqlite3 *db;
    char *msg;
    size_t msglen;
    uint64_t rows; /* rows read: an event's "offset" (the database has no byte of its own) */
} dbreader;

static const char *text_col(sqlite3_stmt *st, int c, size_t *len)
{
    const unsigned char *s = sqlite3_column_text(st, c);
    *len = s ? (size_t)sqlite3_column_bytes(st, c) : 0;
    return s ? (const char *)s : "";
}

/* One device event: name, category (its task type), [start, end) in ns,
 * device and stream (-1: none). */
static int store(dbreader *d, const char *name, size_t nlen, const char *cat, size_t clen, int task_typed,
                 sqlite3_int64 start, sqlite3_int64 end, sqlite3_int64 device, sqlite3_int64 stream)
{
    raw_event e;
    tprof_raw_event_init(&d->r, &e);
    e.ph = 'X';
    e.task_type = 1; /* a device task */
    int rc = tprof_event_set(&d->r, &e, K_NAME, V_STRING, name, nlen);
    if (!rc) rc = tprof_event_set(&d->r, &e, K_CAT, V_STRING, cat, clen);
    if (rc) return rc;
    if (task_typed) e.task_cat = e.cat + 1;
    e.has_ts = e.has_dur = 1;
    e.ts = start;
    e.dur = tprof_span_ns(start, end); /* saturated: a file's absurd times are a bad duration, not UB */
    e.dur_bad = end < start || e.dur == INT64_MAX;
    char num[24];
    int n = snprintf(num, sizeof num, "%lld", (long long)(device >= 0 ? device : 0));
    tprof_event_set_arg(&e, A_DEVICE, V_NUMBER, num, (size_t)n);
    if (stream >= 0) {
        n = snprintf(num, sizeof num, "%lld", (long long)stream);
        tprof_event_set_arg(&e, A_STREAM, V_NUMBER, num, (size_t)n);
    }
    return tprof_store_event(&d->r, &e, d->rows++);
}

/* Runs SQL row by row through ROW; a failed step says which table. */
static int each_row(dbreader *d, const char *table, const char *sql, int (*row)(dbreader *, sqlite3_stmt *))
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(d->msg, d->msglen, "table %s: %s", table, sqlite3_errmsg(d->db));
        return TPROF_EFORMAT;
    }
    int rc = 0, s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) rc = row(d, st);
    if (!rc && s != SQLITE_DONE) {
        snprintf(d->msg, d->msglen, "table %s, after %llu rows: %s", table, (unsigned long long)d->rows,
                 sqlite3_errmsg(d->db));
        rc = s == SQLITE_NOMEM ? TPROF_ENOMEM : TPROF_EFORMAT;
    }
    sqlite3_finalize(st);
    return rc;
}

static int task_row(dbreader *d, sqlite3_stmt *st)
{
    size_t nlen, clen, tlen;
    const char *name = text_col(st, 0, &nlen), *cat = text_col(st, 1, &clen);
    int typed = clen > 0;
    if (!typed) cat = "Ascend task", clen = strlen(cat);
    tprof_trace *t = d->t;
    size_t stored = t->nev;
    int rc = store(d, name, nlen, cat, clen, typed, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                   sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4),
                   sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 5));
    if (rc || t->nev == stored || sqlite3_column_count(st) < 8) return rc; /* the task columns asked for */
    /* the op type and block dim (COMPUTE_TASK_INFO); the database keeps no wait, its PMU ratios elsewhere */
    if (tprof_grow((void **)&t->tasks, &t->taskcap, t->ntasks + 1, sizeof *t->tasks)) return TPROF_ENOMEM;
    tprof_task_info *x = &t->tasks[t->ntasks];
    *x = (tprof_task_info){ .event = t->nev - 1, .block_dim = -1, .wait_ns = -1 };
    for (int k = 0; k < TPROF_TASK_RATIOS; k++) x->ratio[k] = NAN;
    const char *type = text_col(st, 6, &tlen);
    if (tlen && (x->type = tprof_strtab_intern(&t->strs, type, tlen)) == UINT32_MAX) return TPROF_ENOMEM;
    if (sqlite3_column_type(st, 7) == SQLITE_INTEGER && sqlite3_column_int64(st, 7) >= 0 &&
        sqlite3_column_int64(st, 7) < INT32_MAX)
        x->block_dim = (int32_t)sqlite3_column_int64(st, 7);
    t->ntasks++;
    return 0;
}

/* A communication op: on the device, of category HCCL (its name says the
 * collective, as in kernel_details.csv). */
static int comm_row(dbreader *d, sqlite3_stmt *st)
{
    size_t nlen;
    const char *name = text_col(st, 0, &nlen);
    return store(d, name, nlen, "HCCL", 4, 1, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2), -1, -1);
}

static int step_row(dbreader *d, sqlite3_stmt *st)
{
    sqlite3_int64 start = sqlite3_column_int64(st, 1), end = sqlite3_column_int64(st, 2);
    int64_t dur = tprof_span_ns(start, end);
    return end >= start && dur < INT64_MAX ? tprof_trace_add_step(d->t, sqlite3_column_int64(st, 0), start, dur) : 0;
}

/* ---- analysis.db: torch_npu's communication analysis (the tables of
 * communication.json and communication_matrix.json) ---- */

typedef struct {
    dbreader d;
    tprof_i64map ops; /* (step id << 32 | op id) -> index in hccl_ops */
} areader;

static uint32_t intern_col(tprof_trace *t, sqlite3_stmt *st, int c)
{
    size_t n;
    const char *s = text_col(st, c, &n);
    return tprof_strtab_intern(&t->strs, s, n);
}

/* "op@group", as communication.json names the op. */
static uint32_t op_id(tprof_trace *t, sqlite3_stmt *st, int op, int group)
{
    size_t on, gn;
    const char *o = text_col(st, op, &on), *g = text_col(st, group, &gn);
    char buf[512];
    int n = snprintf(buf, sizeof buf, "%.*s@%.*s", (int)(on < 300 ? on : 300), o, (int)(gn < 200 ? gn : 200), g);
    return tprof_strtab_intern(&t->strs, buf, (size_t)n);
}

static double num_col(sqlite3_stmt *st, int c)
{
    return sqlite3_column_type(st, c) == SQLITE_NULL ? NAN : sqlite3_column_double(st, c);
}

/* CommAnalyzerTime: hccl_op_name, group_name, start_timestamp (us), the
 * five times (ms), step, type. */
static int time_row(dbreader *dr, sqlite3_stmt *st)
{
    areader *a = (areader *)dr;
    tprof_trace *t = dr->t;
    if (tprof_grow_items((void **)&t->hccl_ops, &t->hccl_opcap, t->nhccl_ops + 1, sizeof *t->hccl_ops))
        return TPROF_ENOMEM;
    tprof_hccl_op *op = &t->hccl_ops[t->nhccl_ops];
    memset(op, 0, sizeof *op);
    size_t tn;
    const char *type = text_col(st, 9, &tn);
    *op = (tprof_hccl_op){ .step = intern_col(t, st, 8), .op = op_id(t, st, 0, 1), .group = intern_col(t, st, 1),
                           .p2p = tn == 3 && !memcmp(type, "p2p", 3), .rank = -1, .start_us = num_col(st, 2),
                           .elapse_ms = num_col(st, 3), .transit_ms = num_col(st, 4), .wait_ms = num_col(st, 5),
                           .sync_ms = num_col(st, 6), .idle_ms = num_col(st, 7) };
    if (op->step == UINT32_MAX || op->op == UINT32_MAX || op->group == UINT32_MAX) return TPROF_ENOMEM;
    for (int k = 0; k < TPROF_HCCL_TRANSPORTS; k++) op->bw[k].large_packet_ratio = NAN;
    if (tprof_i64map_put(&a->ops, (int64_t)((uint64_t)op->step << 32 | op->op), (int64_t)t->nhccl_ops))
        return TPROF_ENOMEM;
    t->nhccl_ops++;
    return 0;
}

/* CommAnalyzerBandwidth: one row per op, transport and packet size; the
 * transport's size and time repeat on each of its rows. */
static int bandwidth_row(dbreader *dr, sqlite3_stmt *st)
{
    areader *a = (areader *)dr;
    tprof_trace *t = dr->t;
    uint32_t step = intern_col(t, st, 8), op = op_id(t, st, 0, 1);
    int64_t at = 0;
    if (step == UINT32_MAX || op == UINT32_MAX) return TPROF_ENOMEM;
    if (!tprof_i64map_get(&a->ops, (int64_t)((uint64_t)step << 32 | op), &at)) return 0; /* no times for it */
    size_t n;
    const char *tr = text_col(st, 2, &n);
    int k = 0;
    while (k < TPROF_HCCL_TRANSPORTS &&
           !(strlen(tprof_hccl_transport_name((tprof_hccl_transport)k)) == n &&
             !memcmp(tr, tprof_hccl_transport_name((tprof_hccl_transport)k), n)))
        k++;
    if (k == TPROF_HCCL_TRANSPORTS) return 0;
    tprof_hccl_bandwidth *b = &t->hccl_ops[at].bw[k];
    b->size_mb = num_col(st, 3);
    b->time_ms = num_col(st, 4);
    b->large_packet_ratio = num_col(st, 5);
    double count = num_col(st, 6);
    if (count > 0 && count < 1e18) b->packets += (uint64_t)count;
    return 0;
}

/* CommAnalyzerMatrix: one row per op and link. */
static int matrix_row(dbreader *dr, sqlite3_stmt *st)
{
    tprof_trace *t = dr->t;
    if (tprof_grow_items((void **)&t->hccl_links, &t->hccl_linkcap, t->nhccl_links + 1, sizeof *t->hccl_links))
        return TPROF_ENOMEM;
    size_t tn;
    const char *type = text_col(st, 9, &tn);
    for (int c = 2; c <= 3; c++) { /* ranks as the JSON matrix has them: whole numbers, 0 or more */
        size_t n;
        const char *r = text_col(st, c, &n);
        int64_t v;
        if (!n || tprof_json_parse_int(r, n, &v) || v < 0) return 0;
    }
    tprof_hccl_link l = { .step = intern_col(t, st, 8), .op = op_id(t, st, 0, 1), .group = intern_col(t, st, 1),
                          .p2p = tn == 3 && !memcmp(type, "p2p", 3), .src = sqlite3_column_int64(st, 2),
                          .dst = sqlite3_column_int64(st, 3), .transport = intern_col(t, st, 4),
                          .size_mb = num_col(st, 5), .time_ms = num_col(st, 6) };
    if (l.step == UINT32_MAX || l.op == UINT32_MAX || l.group == UINT32_MAX || l.transport == UINT32_MAX)
        return TPROF_ENOMEM;
    t->hccl_links[t->nhccl_links++] = l;
    return 0;
}

/* The CommAnalyzer tables of the open database D->db, where it has them
 * (0 when not). */
static int analysis_tables(dbreader *d)
{
    areader a = { .d = *d };
    int time = tprof_sqlite_has_table(d->db, "CommAnalyzerTime", d->msg, d->msglen),
        bw = tprof_sqlite_has_table(d->db, "CommAnalyzerBandwidth", d->msg, d->msglen),
        matrix = tprof_sqlite_has_table(d->db, "CommAnalyzerMatrix", d->msg, d->msglen);
    if (time < 0 || bw < 0 || matrix < 0) return TPROF_EFORMAT;
    if (tprof_i64map_init(&a.ops, 64)) return TPROF_ENOMEM;
    int rc = 0;
    if (time == 1)
        rc = each_row(&a.d, "CommAnalyzerTime",
                      "SELECT hccl_op_name, group_name, start_timestamp, elapse_time, transit_time, wait_time, "
                      "synchronization_time, idle_time, step, type FROM CommAnalyzerTime ORDER BY rowid",
                      time_row);
    if (!rc && time == 1 && bw == 1)
        rc = each_row(&a.d, "CommAnalyzerBandwidth",
                      "SELECT hccl_op_name, group_name, transport_type, transit_size, transit_time, "
                      "large_packet_ratio, count, 0, step, type FROM CommAnalyzerBandwidth ORDER BY rowid",
                      bandwidth_row);
    if (!rc && matrix == 1)
        rc = each_row(&a.d, "CommAnalyzerMatrix",
                      "SELECT hccl_op_name, group_name, src_rank, dst_rank, transport_type, transit_size, "
                      "transit_time, 0, step, type FROM CommAnalyzerMatrix ORDER BY rowid",
                      matrix_row);
    tprof_i64map_free(&a.ops);
    return rc;
}

/* StepTraceTime (analysis.db in the database form: step_trace_time.csv's
 * columns, in us) into the trace's step splits. */
static int step_trace_row(dbreader *d, sqlite3_stmt *st)
{
    tprof_trace *t = d->t;
    size_t n;
    const char *step = text_col(st, 0, &n);
    tprof_step_split s = { .step = -1, .rank = -1 };
    if (sqlite3_column_type(st, 0) == SQLITE_INTEGER) s.step = sqlite3_column_int64(st, 0);
    else if (n && tprof_json_parse_int(step, n, &s.step)) s.step = -1; /* not a number: no step */
    for (int c = 0; c < TPROF_SPLIT_COLS; c++) {
        double us = num_col(st, c + 1);
        s.ns[c] = isfinite(us) && fabs(us) < 9e15 ? llround(us * 1e3) : INT64_MIN;
    }
    if (tprof_grow((void **)&t->splits, &t->splitcap, t->nsplits + 1, sizeof *t->splits)) return TPROF_ENOMEM;
    t->splits[t->nsplits++] = s;
    return 0;
}

static int step_trace_table(dbreader *d)
{
    int has = tprof_sqlite_has_table(d->db, "StepTraceTime", d->msg, d->msglen);
    if (has <= 0 || d->t->nsplits) return has < 0 ? TPROF_EFORMAT : 0;
    /* older versions write no preparing column */
    static const char with[] = "SELECT step, computing, communication_not_overlapped, overlapped, communication, free, "
                               "stage, bubble, communication_not_overlapped_and_exclude_receive, preparing FROM "
                               "StepTraceTime ORDER BY rowid",
                      without[] = "SELECT step, computing, communication_not_overlapped, overlapped, communication, "
                                  "free, stage, bubble, communication_not_overlapped_and_exclude_receive, NULL FROM "
                                  "StepTraceTime ORDER BY rowid";
    sqlite3_stmt *probe = NULL;
    int full = sqlite3_prepare_v2(d->db, with, -1, &probe, NULL) == SQLITE_OK;
    sqlite3_finalize(probe);
    return each_row(d, "StepTraceTime", full ? with : without, step_trace_row);
}

int tprof_ascend_read_analysis(tprof_trace *t, const char *path, uint32_t keep, char *msg, size_t msglen)
{
    dbreader d = { .t = t, .msg = msg, .msglen = msglen };
    msg[0] = 0;
    int rc = tprof_sqlite_open_ro(&d.db, path, NULL, 0, msg, msglen);
    if (rc) return rc;
    if (keep & TPROF_KEEP_CALLS) rc = analysis_tables(&d);
    if (!rc && (keep & TPROF_KEEP_STEP_SPLITS)) rc = step_trace_table(&d);
    sqlite3_close(d.db);
    return rc;
}

/* The rank: RANK_DEVICE_MAP's, else N of ascend_pytorch_profiler_N.db. */
static void find_rank(dbreader *d, const char *name)
{
    char msg[8];
    sqlite3_stmt *st;
    if (tprof_sqlite_has_table(d->db, "RANK_DEVICE_MAP", msg, sizeof msg) == 1 &&
        sqlite3_prepare_v2(d->db, "SELECT rankId FROM RANK_DEVICE_MAP LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
            sqlite3_column_int64(st, 0) >= 0)
            d->t->meta.rank = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    const char *base = name ? strrchr(name, '/') : NULL, *p;
    base = base ? base + 1 : name;
    if (d->t->meta.rank >= 0 || !base || strncmp(base, "ascend_pytorch_profiler_", 24) != 0) return;
    int64_t v = 0;
    for (p = base + 24; *p >= '0' && *p <= '9' && v < 100000000; p++) v = v * 10 + (*p - '0');
    if (p > base + 24 && !strcmp(p, ".db")) d->t->meta.rank = v;
}

/* The tasks by their OP State (static or dynamic shape), where
 * COMPUTE_TASK_INFO has the column (newer versions): counted, not stored. */
static void op_states(dbreader *d)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->db,
                           "SELECT s.value, count(*) FROM COMPUTE_TASK_INFO AS c JOIN STRING_IDS AS s "
                           "ON s.id = c.opState GROUP BY s.value",
                           -1, &st, NULL) != SQLITE_OK)
        return; /* an older database: no opState column */
    while (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(st, 0);
        uint64_t n = (uint64_t)sqlite3_column_int64(st, 1);
        if (v && !strcmp((const char *)v, "static")) d->t->meta.op_state_static += n;
        else if (v && !strcmp((const char *)v, "dynamic")) d->t->meta.op_state_dynamic += n;
    }
    sqlite3_finalize(st);
}

static int read_tables(dbreader *d)
{
    int task = tprof_sqlite_has_table(d->db, "TASK", d->msg, d->msglen), info = tprof_sqlite_has_table(d->db, "COMPUTE_TASK_INFO", d->msg, d->msglen),
        ids = tprof_sqlite_has_table(d->db, "STRING_IDS", d->msg, d->msglen), comm = tprof_sqlite_has_table(d->db, "COMMUNICATION_OP", d->msg, d->msglen),
        steps = tprof_sqlite_has_table(d->db, "STEP_TIME", d->msg, d->msglen);
    if (task < 0 || info < 0 || ids < 0 || comm < 0 || steps < 0) return TPROF_EFORMAT;
    int analysis = tprof_sqlite_has_table(d->db, "CommAnalyzerTime", d->msg, d->msglen),
        split = tprof_sqlite_has_table(d->db, "StepTraceTime", d->msg, d->msglen);
    if (analysis < 0 || split < 0) return TPROF_EFORMAT;
    uint32_t keep = d->r.opts ? d->r.opts->keep : 0;
    /* torch_npu's analysis.db alone: its communication summaries and step
     * split, for the commands that read them (a trace with no events, as
     * communication.json and step_trace_time.csv are) */
    if (!(task && info) && !comm && ((analysis == 1 && (keep & TPROF_KEEP_CALLS)) ||
                                     (split == 1 && (keep & TPROF_KEEP_STEP_SPLITS)))) {
        int rc = analysis == 1 && (keep & TPROF_KEEP_CALLS) ? analysis_tables(d) : 0;
        return rc ? rc : keep & TPROF_KEEP_STEP_SPLITS ? step_trace_table(d) : 0;
    }
    if (!ids || !((task && info) || comm)) {
        snprintf(d->msg, d->msglen, "%s",
                 analysis == 1 ? "Ascend's communication analysis (analysis.db): trainprof comm, collectives or "
                                 "advice read it (alone or beside its profiler database)"
                               : "an SQLite database without Ascend's profiler tables (STRING_IDS with TASK and "
                                 "COMPUTE_TASK_INFO, or COMMUNICATION_OP)");
        return TPROF_ENOTTRACE;
    }
    int rc = 0;
    if (task && info) {
        /* with the op type and block dim where kept and the table has them (an older one may not) */
        static const char base[] = "SELECT n.value, t.value, TASK.startNs, TASK.endNs, TASK.deviceId, TASK.streamId "
                                   "FROM COMPUTE_TASK_INFO AS c JOIN TASK ON TASK.globalTaskId = c.globalTaskId "
                                   "LEFT JOIN STRING_IDS AS n ON n.id = c.name LEFT JOIN STRING_IDS AS t ON t.id = "
                                   "c.taskType ORDER BY TASK.startNs",
                          more[] = "SELECT n.value, t.value, TASK.startNs, TASK.endNs, TASK.deviceId, TASK.streamId, "
                                   "o.value, c.blockDim FROM COMPUTE_TASK_INFO AS c JOIN TASK ON TASK.globalTaskId = "
                                   "c.globalTaskId LEFT JOIN STRING_IDS AS n ON n.id = c.name LEFT JOIN STRING_IDS AS "
                                   "t ON t.id = c.taskType LEFT JOIN STRING_IDS AS o ON o.id = c.opType ORDER BY "
                                   "TASK.startNs";
        sqlite3_stmt *probe = NULL;
        int extended = (keep & TPROF_KEEP_TASK_INFO) && sqlite3_prepare_v2(d->db, more, -1, &probe, NULL) == SQLITE_OK;
        sqlite3_finalize(probe);
        rc = each_row(d, "TASK", extended ? more : base, task_row);
    }
    if (!rc && task && info) op_states(d);
    if (!rc && comm)
        rc = each_row(d, "COMMUNICATION_OP",
                      "SELECT n.value, o.startNs, o.endNs FROM COMMUNICATION_OP AS o "
                      "LEFT JOIN STRING_IDS AS n ON n.id = o.opName ORDER BY o.startNs",
                      comm_row);
    if (!rc && steps) rc = each_row(d, "STEP_TIME", "SELECT id, startNs, endNs FROM STEP_TIME ORDER BY id", step_row);
    /* the communication analysis, where a database holds it too */
    if (!rc && analysis == 1 && d->r.opts && (d->r.opts->keep & TPROF_KEEP_CALLS)) rc = analysis_tables(d);
    if (!rc && d->r.opts && (d->r.opts->keep & TPROF_KEEP_STEP_SPLITS)) rc = step_trace_table(d);
    return rc;
}

/* The bytes the database header says the file holds (page size times
 * pages), or 0 when it does not say (the count is valid only when its
 * version field matches the change counter's). */
static uint64_t header_bytes(const uint8_t *h, size_t n)
{
    if (n < 100) return 0;
    uint32_t page = (uint32_t)h[16] << 8 | h[17], pages = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 |
                                                         (uint32_t)h[30] << 8 | h[31];
    if (page == 1) page = 65536;
    if (memcmp(h + 24, h + 92, 4) != 0 || page < 512) return 0;
    return (uint64_t)page * pages;
}

int tprof_ascend_read_db(tprof_trace **out, const char *path, const void *data, size_t len, tprof_source *src,
                         const char *name, const tprof_read_opts *opts, char *errbuf, size_t errlen)
{
    *out = NULL;
    tprof_trace *t = tprof_trace_new(name);
    if (!t) return TPROF_ENOMEM;
    char msg[300] = "";
    dbreader d = { .t = t, .r = { .t = t, .opts = opts }, .msg = msg, .msglen = sizeof msg };
    /* a file cut short (a profiler that died while writing it): what its
     * pages still hold is read, and said to be cut */
    uint8_t head[100];
    size_t hn = 0;
    ssize_t got;
    if (data) memcpy(head, data, hn = len < sizeof head ? len : sizeof head);
    else
        while (hn < sizeof head && (got = tprof_source_read(src, head + hn, sizeof head - hn)) > 0) hn += (size_t)got;
    uint64_t want = header_bytes(head, hn);
    uint64_t have = data ? len : (uint64_t)(tprof_source_file_size(src) > 0 ? tprof_source_file_size(src) : 0);
    int rc = tprof_sqlite_open_ro(&d.db, path, data, len, msg, sizeof msg);
    if (!rc) {
        rc = read_tables(&d);
        find_rank(&d, path ? path : name);
        sqlite3_close(d.db);
    }
    tprof_reader_release(&d.r);
    if (want > have && (rc == 0 || rc == TPROF_EFORMAT)) {
        char why[300];
        snprintf(why, sizeof why, "%s", msg);
        snprintf(msg, sizeof msg, "the database is cut short: %llu of the %llu bytes its header counts%s%.200s",
                 (unsigned long long)have, (unsigned long long)want, why[0] ? "; SQLite: " : "", why);
        rc = TPROF_ETRUNC;
    }
    rc = tprof_ascend_conclude(out, t, rc, src, TPROF_FORM_ASCEND_DB, name, msg, errbuf, errlen);
    if (*out && path) /* SQLite read the file, not the source */
        t->meta.bytes_in = t->meta.bytes_json = (uint64_t)(t->meta.file_size > 0 ? t->meta.file_size : 0);
    return rc;
}

