/* Ascend's profiler database (torch_npu's ascend_pytorch_profiler_N.db,
 * msprof's unified db) read as a trace: its device tasks (TASK joined to
 * COMPUTE_TASK_INFO, names in STRING_IDS), its communication ops
 * (COMMUNICATION_OP) and its steps (STEP_TIME), as kernel_details.csv and
 * trace_view.json give them. SQLite opens it read-only and defensively:
 * only the queries written here run; triggers, views, schema-defined
 * functions (untrusted schema) and extensions are off, so nothing the file
 * holds is executed. Table and column names are those of msprof-analyze's
 * queries (docs/METRICS.md, "Ascend profiler database"). */
#include "reader_internal.h"

#include "trainprof/error.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opens PATH, or the LEN bytes at DATA (kept by the caller until closed),
 * read-only with the defensive settings. 0, or an error with MSG set. */
static int open_db(sqlite3 **out, const char *path, const void *data, size_t len, char *msg, size_t msglen)
{
    sqlite3 *db = NULL;
    int rc = path ? sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL)
                  : sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL);
    if (rc == SQLITE_OK) {
        /* no schema-defined code runs, and the file cannot be changed */
        sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
        sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
        sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
        sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
        sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
        sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 16 << 20); /* a string or blob read here */
        sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    }
    if (rc == SQLITE_OK && !path)
        rc = sqlite3_deserialize(db, "main", (unsigned char *)data, (sqlite3_int64)len, (sqlite3_int64)len,
                                 SQLITE_DESERIALIZE_READONLY);
    if (rc != SQLITE_OK) {
        snprintf(msg, msglen, "not readable as an SQLite database: %s", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return rc == SQLITE_NOMEM ? TPROF_ENOMEM : TPROF_EFORMAT;
    }
    *out = db;
    return 0;
}

/* Whether the database has table NAME. -1: it could not be asked (a
 * corrupt file; MSG set). */
static int has_table(sqlite3 *db, const char *name, char *msg, size_t msglen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st, NULL) !=
        SQLITE_OK) {
        snprintf(msg, msglen, "its schema cannot be read: %s", sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        snprintf(msg, msglen, "its schema cannot be read: %s", sqlite3_errmsg(db));
        found = -1;
    }
    sqlite3_finalize(st);
    return found;
}

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
    e.dur = end - start;
    e.dur_bad = end < start;
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
    size_t nlen, clen;
    const char *name = text_col(st, 0, &nlen), *cat = text_col(st, 1, &clen);
    int typed = clen > 0;
    if (!typed) cat = "Ascend task", clen = strlen(cat);
    return store(d, name, nlen, cat, clen, typed, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                 sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4),
                 sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 5));
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
    return end >= start ? tprof_trace_add_step(d->t, sqlite3_column_int64(st, 0), start, end - start) : 0;
}

static int read_tables(dbreader *d)
{
    int task = has_table(d->db, "TASK", d->msg, d->msglen), info = has_table(d->db, "COMPUTE_TASK_INFO", d->msg, d->msglen),
        ids = has_table(d->db, "STRING_IDS", d->msg, d->msglen), comm = has_table(d->db, "COMMUNICATION_OP", d->msg, d->msglen),
        steps = has_table(d->db, "STEP_TIME", d->msg, d->msglen);
    if (task < 0 || info < 0 || ids < 0 || comm < 0 || steps < 0) return TPROF_EFORMAT;
    if (!ids || !((task && info) || comm)) {
        snprintf(d->msg, d->msglen, "an SQLite database without Ascend's profiler tables (STRING_IDS with TASK and "
                                    "COMPUTE_TASK_INFO, or COMMUNICATION_OP)");
        return TPROF_ENOTTRACE;
    }
    int rc = 0;
    if (task && info)
        rc = each_row(d, "TASK",
                      "SELECT n.value, t.value, TASK.startNs, TASK.endNs, TASK.deviceId, TASK.streamId "
                      "FROM COMPUTE_TASK_INFO AS c JOIN TASK ON TASK.globalTaskId = c.globalTaskId "
                      "LEFT JOIN STRING_IDS AS n ON n.id = c.name LEFT JOIN STRING_IDS AS t ON t.id = c.taskType "
                      "ORDER BY TASK.startNs",
                      task_row);
    if (!rc && comm)
        rc = each_row(d, "COMMUNICATION_OP",
                      "SELECT n.value, o.startNs, o.endNs FROM COMMUNICATION_OP AS o "
                      "LEFT JOIN STRING_IDS AS n ON n.id = o.opName ORDER BY o.startNs",
                      comm_row);
    if (!rc && steps) rc = each_row(d, "STEP_TIME", "SELECT id, startNs, endNs FROM STEP_TIME ORDER BY id", step_row);
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
    int rc = open_db(&d.db, path, data, len, msg, sizeof msg);
    if (!rc) {
        rc = read_tables(&d);
        sqlite3_close(d.db);
    }
    tprof_reader_release(&d.r);
    if (want > have && rc != TPROF_ENOMEM) {
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
