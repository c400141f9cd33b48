/* A streaming CSV reader (internal), for the Ascend profiler's tables: RFC
 * 4180 fields (quoted fields with embedded commas, newlines and doubled
 * quotes), a UTF-8 byte order mark, CRLF or LF line ends, a last row with
 * or without its newline. Rows are bounded (TPROF_CSV_MAX_ROW bytes,
 * TPROF_CSV_MAX_FIELDS fields), so a binary file fails fast instead of
 * filling memory. Nothing in a field is interpreted. */
#ifndef TPROF_CSV_H
#define TPROF_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TPROF_CSV_MAX_ROW ((size_t)16 << 20)
#define TPROF_CSV_MAX_FIELDS 4096

typedef struct tprof_csv tprof_csv;
typedef ssize_t (*tprof_csv_read_fn)(void *ctx, void *buf, size_t cap);

/* A reader over READ(CTX, ...), which returns bytes read, 0 at the end, or
 * a negative value on a read error. 0 or TPROF_ENOMEM. */
int tprof_csv_open(tprof_csv **out, tprof_csv_read_fn read, void *ctx);
void tprof_csv_close(tprof_csv *c);

/* The next row, its fields NUL-terminated and unquoted (valid until the
 * next call): TPROF_CSV_ROW when a newline ended it, TPROF_CSV_LAST when
 * the input ended after it without one (a writer may have been cut there),
 * 0 at the end of the input; else a negative TPROF_E* code, with
 * tprof_csv_errmsg: TPROF_ETRUNC (the input ends inside a quoted field),
 * TPROF_EFORMAT (a row past the limits), TPROF_ENOMEM, or the read
 * function's own negative code (its message is its own). Empty
 * lines are skipped. */
#define TPROF_CSV_ROW 1
#define TPROF_CSV_LAST 2
int tprof_csv_row(tprof_csv *c, char ***fields, size_t *n);
/* Where the last row began: its byte offset and line (1-based; a quoted
 * newline makes a row span lines). */
uint64_t tprof_csv_row_offset(const tprof_csv *c);
uint64_t tprof_csv_row_line(const tprof_csv *c);
const char *tprof_csv_errmsg(const tprof_csv *c);

/* F[COL] of a row of NF fields without the spaces and tabs around it (the
 * Ascend tables write timestamps as "1736413971558972.912\t"), its length
 * in *LEN; NULL when the row has no such column or it is empty or N/A. */
const char *tprof_csv_value(char *const *f, size_t nf, long col, size_t *len);
/* The column of each of NAMES[0..N) in a header row F[0..NF) (cells
 * trimmed as above), -1 where absent. */
void tprof_csv_header_columns(char *const *f, size_t nf, const char *const *names, size_t n, long *col);

#endif
