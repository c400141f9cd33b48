/* SQLite files opened for reading only, defensively: the Ascend profiler's
 * databases are untrusted input (internal; sqlite_ro.h). */
#include "sqlite_ro.h"

#include "trainprof/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opens PATH, or the LEN bytes at DATA (kept by the caller until closed),
 * read-only with the defensive settings. 0, or an error with MSG set. */
int tprof_sqlite_open_ro(sqlite3 **out, const char *path, const void *data, size_t len, char *msg, size_t msglen)
{
    sqlite3 *db = NULL;
    /* a relative path as ./PATH: SQLite built with URI names would read "file:..." as a URI */
    char *local = NULL;
    if (path && path[0] != '/') {
        size_t n = strlen(path) + 3;
        if (!(local = malloc(n))) return TPROF_ENOMEM;
        snprintf(local, n, "./%s", path);
        path = local;
    }
    int rc = path ? sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL)
                  : sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL);
    free(local);
    if (rc == SQLITE_OK) {
        /* no schema-defined code runs, and the file cannot be changed */
        sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
        sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
        sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
        sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
        sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
        sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, (int *)NULL);
        sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 16 << 20); /* a string or blob read here */
        sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
        sqlite3_drop_modules(db, NULL); /* no virtual table's module runs over the file's data, whatever its schema text */
    }
    if (rc == SQLITE_OK && !path)
        rc = sqlite3_deserialize(db, "main", (unsigned char *)data, (sqlite3_int64)len, (sqlite3_int64)len,
                                 SQLITE_DESERIALIZE_READONLY);
    if (rc == SQLITE_OK) /* pages checked as they are read: a corrupt file fails, never misleads */
        sqlite3_exec(db, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
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
/* Why the schema cannot be read: SQLite words a corrupt file differently
 * depending on which statement met it first, so corruption is said one way. */
static void schema_error(sqlite3 *db, char *msg, size_t msglen)
{
    if ((sqlite3_errcode(db) & 0xff) == SQLITE_CORRUPT)
        snprintf(msg, msglen, "its schema cannot be read: the database file is malformed");
    else
        snprintf(msg, msglen, "its schema cannot be read: %s", sqlite3_errmsg(db));
}

int tprof_sqlite_has_table(sqlite3 *db, const char *name, char *msg, size_t msglen)
{
    sqlite3_stmt *st;
    /* a plain table: a virtual one (fts, rtree, dbstat: USING MODULE) would run that module's code over the
     * file's data, so it counts as absent */
    if (sqlite3_prepare_v2(db,
                           "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1 "
                           "AND sql NOT LIKE 'CREATE VIRTUAL%'",
                           -1, &st, NULL) != SQLITE_OK) {
        schema_error(db, msg, msglen);
        return -1;
    }
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        schema_error(db, msg, msglen);
        found = -1;
    }
    sqlite3_finalize(st);
    return found;
}

