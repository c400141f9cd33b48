/* SQLite files opened for reading only, defensively (internal): no
 * schema-defined code (triggers, views, virtual tables' modules,
 * extensions) runs, nothing is written, pages are checked as read, strings
 * are bounded. Used by the Ascend database readers. */
#ifndef TPROF_SQLITE_RO_H
#define TPROF_SQLITE_RO_H

#include <sqlite3.h>
#include <stddef.h>

/* Opens PATH, or the LEN bytes at DATA (kept by the caller until closed),
 * read-only with the defensive settings. 0, or an error with MSG set. */
int tprof_sqlite_open_ro(sqlite3 **out, const char *path, const void *data, size_t len, char *msg, size_t msglen);
/* Whether the database has the plain table NAME (a virtual one counts as
 * absent). -1: it could not be asked (a corrupt file; MSG set). */
int tprof_sqlite_has_table(sqlite3 *db, const char *name, char *msg, size_t msglen);

#endif
