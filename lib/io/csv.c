/* A streaming CSV reader (csv.h): a byte-at-a-time state machine over a
 * read buffer, so that a quote or a CRLF split across two reads needs no
 * special case. */
#include "csv.h"

#include "trainprof/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CSV_BUF ((size_t)64 << 10)

struct tprof_csv {
    tprof_csv_read_fn read;
    void *ctx;
    uint8_t *buf;
    size_t at, len;   /* unread bytes: buf[at..len) */
    uint64_t offset;  /* of buf[at] in the input */
    uint64_t line;    /* of buf[at] */
    int eof, started; /* the input ended; the BOM was looked for */
    char *text;       /* the row's fields, each NUL-terminated */
    size_t tlen, tcap;
    size_t *starts;   /* each field's start in text */
    char **fields;
    size_t nfields, fcap;
    uint64_t row_offset, row_line;
    char msg[200];
};

int tprof_csv_open(tprof_csv **out, tprof_csv_read_fn read, void *ctx)
{
    tprof_csv *c = calloc(1, sizeof *c);
    if (!c || !(c->buf = malloc(CSV_BUF))) {
        free(c);
        return TPROF_ENOMEM;
    }
    c->read = read;
    c->ctx = ctx;
    c->line = 1;
    *out = c;
    return 0;
}

void tprof_csv_close(tprof_csv *c)
{
    if (!c) return;
    free(c->buf);
    free(c->text);
    free(c->starts);
    free(c->fields);
    free(c);
}

uint64_t tprof_csv_row_offset(const tprof_csv *c) { return c->row_offset; }
uint64_t tprof_csv_row_line(const tprof_csv *c) { return c->row_line; }
const char *tprof_csv_errmsg(const tprof_csv *c) { return c->msg; }

static int refill(tprof_csv *c);

/* 1 with more bytes in the buffer, 0 at the end, or a negative code. */
static int fill_slow(tprof_csv *c);
static inline int fill(tprof_csv *c) { return c->at < c->len ? 1 : fill_slow(c); }

static int fill_slow(tprof_csv *c)
{
    while (c->at == c->len) { /* until a byte is here (a byte order mark alone may have been all) */
        if (c->eof) return 0;
        int rc = refill(c);
        if (rc < 0) return rc;
    }
    return 1;
}

/* Reads into the emptied buffer; on the first read, skips a byte order mark. */
static int refill(tprof_csv *c)
{
    c->at = c->len = 0;
    do { /* the first read: at least the 3 bytes a byte order mark takes, however the reads fall */
        ssize_t r = c->read(c->ctx, c->buf + c->len, CSV_BUF - c->len);
        if (r < 0) { /* the source's code (TPROF_ETRUNC: a compressed stream cut short) and its message */
            snprintf(c->msg, sizeof c->msg, "byte %llu: read failed", (unsigned long long)(c->offset + c->len));
            return (int)r;
        }
        if (!r) c->eof = 1;
        c->len += (size_t)r;
    } while (!c->started && !c->eof && c->len < 3);
    if (!c->started) { /* a UTF-8 byte order mark (Excel and Windows tools write one) */
        c->started = 1;
        if (c->len >= 3 && c->buf[0] == 0xEF && c->buf[1] == 0xBB && c->buf[2] == 0xBF) {
            c->at = 3;
            c->offset = 3;
        }
    }
    return 0;
}

static int grow_text(tprof_csv *c, size_t need);

static int put(tprof_csv *c, char ch)
{
    if (c->tlen + 1 >= c->tcap) {
        int rc = grow_text(c, 1);
        if (rc) return rc;
    }
    c->text[c->tlen++] = ch;
    return 0;
}

/* Appends the N bytes at P to the row's text. */
static int put_run(tprof_csv *c, const uint8_t *p, size_t n)
{
    if (c->tlen + n >= c->tcap) {
        int rc = grow_text(c, n);
        if (rc) return rc;
    }
    memcpy(c->text + c->tlen, p, n);
    c->tlen += n;
    return 0;
}

/* Room for NEED more bytes and a NUL, within TPROF_CSV_MAX_ROW. */
static int grow_text(tprof_csv *c, size_t need)
{
    while (c->tlen + need >= c->tcap) {
        if (c->tcap >= TPROF_CSV_MAX_ROW) {
            snprintf(c->msg, sizeof c->msg, "line %llu (byte %llu): a row longer than %zu MiB: not a CSV table",
                     (unsigned long long)c->row_line, (unsigned long long)c->row_offset, TPROF_CSV_MAX_ROW >> 20);
            return TPROF_EFORMAT;
        }
        size_t cap = c->tcap ? c->tcap * 2 : 1024;
        char *t = realloc(c->text, cap);
        if (!t) return TPROF_ENOMEM;
        c->text = t;
        c->tcap = cap;
    }
    return 0;
}

/* Ends the current field (its text NUL-terminated) and opens the next. */
static int end_field(tprof_csv *c, int open_next)
{
    int rc = put(c, 0);
    if (rc || !open_next) return rc;
    if (c->nfields + 1 >= TPROF_CSV_MAX_FIELDS) {
        snprintf(c->msg, sizeof c->msg, "line %llu (byte %llu): more than %d fields: not a CSV table",
                 (unsigned long long)c->row_line, (unsigned long long)c->row_offset, TPROF_CSV_MAX_FIELDS);
        return TPROF_EFORMAT;
    }
    if (c->nfields + 1 >= c->fcap) {
        size_t cap = c->fcap ? c->fcap * 2 : 64;
        size_t *s = realloc(c->starts, cap * sizeof *s);
        if (!s) return TPROF_ENOMEM;
        c->starts = s;
        c->fcap = cap;
    }
    c->starts[++c->nfields] = c->tlen;
    return 0;
}

int tprof_csv_row(tprof_csv *c, char ***fields, size_t *n)
{
    for (;;) {
        c->tlen = 0;
        c->nfields = 0;
        if (!c->fcap) {
            if (!(c->starts = malloc(64 * sizeof *c->starts))) return TPROF_ENOMEM;
            c->fcap = 64;
        }
        c->starts[0] = 0;
        int rc = fill(c);
        if (rc <= 0) return rc;
        c->row_offset = c->offset;
        c->row_line = c->line;
        enum { FIELD_START, UNQUOTED, QUOTED, QUOTE_IN_QUOTED } st = FIELD_START;
        int ended = 0; /* TPROF_CSV_ROW or TPROF_CSV_LAST */
        while (!ended) {
            if ((rc = fill(c)) < 0) return rc;
            if (rc == 0) {
                if (st == QUOTED) {
                    snprintf(c->msg, sizeof c->msg,
                             "line %llu (byte %llu): the input ends inside a quoted field begun on this row",
                             (unsigned long long)c->row_line, (unsigned long long)c->row_offset);
                    return TPROF_ETRUNC;
                }
                ended = TPROF_CSV_LAST;
                break;
            }
            rc = 0;
            if (st == FIELD_START && c->buf[c->at] != '"') st = UNQUOTED; /* its first byte read in the run */
            /* a run of plain bytes at once: inside quotes up to the next
             * quote, elsewhere up to the next comma or newline */
            if (st == QUOTED || st == UNQUOTED) {
                const uint8_t *p = c->buf + c->at, *e = c->buf + c->len, *q = p;
                if (st == QUOTED) {
                    q = memchr(p, '"', (size_t)(e - p));
                    if (!q) q = e;
                    for (const uint8_t *nl = p; (nl = memchr(nl, '\n', (size_t)(q - nl))); nl++) c->line++;
                } else
                    while (q < e && *q != ',' && *q != '\n') q++;
                if (q > p) {
                    if ((rc = put_run(c, p, (size_t)(q - p)))) return rc;
                    c->at += (size_t)(q - p);
                    c->offset += (uint64_t)(q - p);
                    continue;
                }
            }
            uint8_t ch = c->buf[c->at++];
            c->offset++;
            if (ch == '\n') c->line++;
            switch (st) {
            case QUOTED:
                if (ch == '"') st = QUOTE_IN_QUOTED;
                else rc = put(c, (char)ch);
                break;
            case QUOTE_IN_QUOTED:
                if (ch == '"') { /* a doubled quote: one quote */
                    st = QUOTED;
                    rc = put(c, '"');
                    break;
                }
                st = UNQUOTED; /* the field's closing quote: what follows is read as written */
                /* fall through */
            case FIELD_START:
            case UNQUOTED:
                if (ch == ',') {
                    rc = end_field(c, 1);
                    st = FIELD_START;
                } else if (ch == '\n') {
                    ended = TPROF_CSV_ROW;
                } else if (ch == '"' && st == FIELD_START) {
                    st = QUOTED;
                } else {
                    rc = put(c, (char)ch);
                    st = UNQUOTED;
                }
                break;
            }
            if (rc) return rc;
        }
        /* a CR before the newline (or before the end) belongs to the line end */
        if (c->tlen > c->starts[c->nfields] && c->text[c->tlen - 1] == '\r') c->tlen--;
        if ((rc = end_field(c, 0))) return rc;
        if (c->nfields == 0 && c->text[0] == 0) { /* an empty line */
            if (ended == TPROF_CSV_LAST) return 0;
            continue;
        }
        size_t nf = c->nfields + 1;
        char **f = realloc(c->fields, nf * sizeof *f);
        if (!f) return TPROF_ENOMEM;
        c->fields = f;
        for (size_t i = 0; i < nf; i++) f[i] = c->text + c->starts[i];
        *fields = f;
        *n = nf;
        return ended;
    }
}

const char *tprof_csv_value(char *const *f, size_t nf, long col, size_t *len)
{
    if (col < 0 || (size_t)col >= nf) return NULL;
    const char *s = f[col];
    size_t n = strlen(s);
    while (n && (*s == ' ' || *s == '\t')) s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    *len = n;
    return n && !(n == 3 && !memcmp(s, "N/A", 3)) ? s : NULL;
}

void tprof_csv_header_columns(char *const *f, size_t nf, const char *const *names, size_t n, long *col)
{
    for (size_t c = 0; c < n; c++) {
        col[c] = -1;
        for (size_t i = 0; i < nf && col[c] < 0; i++) {
            size_t len;
            const char *h = tprof_csv_value(f, nf, (long)i, &len);
            if (h && strlen(names[c]) == len && !memcmp(h, names[c], len)) col[c] = (long)i;
        }
    }
}
