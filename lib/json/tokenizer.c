/* Streaming JSON tokenizer over a refillable window.
 *
 * Each token is scanned from its first byte; when the window ends inside a
 * token, the window is compacted (or grown) and the token is scanned again.
 * Restarts happen once per window refill, so their cost is negligible. */
#include "trainprof/json.h"
#include "trainprof/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

#define WINDOW_CAP (1u << 20)
#define WINDOW_MIN 64 /* the smallest first window tprof_json_open_sized makes */

enum state {
    ST_VALUE,       /* a value is expected */
    ST_FIRST_VALUE, /* just after '[': a value or ']' */
    ST_KEY,         /* after ',' in an object: a key */
    ST_FIRST_KEY,   /* just after '{': a key or '}' */
    ST_COLON,       /* after a key */
    ST_AFTER,       /* after a value: ',' or a closing bracket, or the end */
    ST_DONE,
};

/* Outcome of scanning one token in the current window. */
enum { SCAN_OK = 0, SCAN_MORE = 1 };

struct tprof_json {
    tprof_json_read_fn read;
    void *ctx;
    char *name;
    uint8_t *buf;
    size_t cap, pos, len;
    uint64_t base; /* stream offset of buf[0] */
    int eof, mem, err, started;
    int chunk_depth;  /* chunk mode: the end of input is fine before an array element at this depth */
    int chunk_ended;
    enum state st;
    int depth;
    uint8_t is_obj[TPROF_JSON_MAX_DEPTH + 1];
    uint8_t *scratch;
    size_t scap;
    char msg[320];
};

static int fail(tprof_json *j, int code, uint64_t off, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(j->msg, sizeof j->msg, "%s: byte %llu: %s", j->name, (unsigned long long)off, what);
    j->err = code;
    return code;
}

int tprof_json_open(tprof_json **out, tprof_json_read_fn read, void *ctx, const char *name)
{
    return tprof_json_open_sized(out, read, ctx, name, 0);
}

int tprof_json_open_sized(tprof_json **out, tprof_json_read_fn read, void *ctx, const char *name, size_t window)
{
    *out = NULL;
    tprof_json *j = calloc(1, sizeof *j);
    if (!j) return TPROF_ENOMEM;
    j->read = read;
    j->ctx = ctx;
    j->name = strdup(name ? name : "<input>");
    j->cap = WINDOW_CAP;
    if (window)
        for (j->cap = WINDOW_MIN; j->cap < window && j->cap < WINDOW_CAP;) j->cap *= 2;
    j->buf = malloc(j->cap);
    if (!j->name || !j->buf) {
        tprof_json_close(j);
        return TPROF_ENOMEM;
    }
    *out = j;
    return 0;
}

int tprof_json_open_mem(tprof_json **out, const void *data, size_t len, const char *name)
{
    *out = NULL;
    tprof_json *j = calloc(1, sizeof *j);
    if (!j) return TPROF_ENOMEM;
    j->name = strdup(name ? name : "<memory>");
    if (!j->name) { free(j); return TPROF_ENOMEM; }
    j->buf = (uint8_t *)data; /* never written in memory mode */
    j->cap = j->len = len;
    j->mem = j->eof = 1;
    *out = j;
    return 0;
}

void tprof_json_close(tprof_json *j)
{
    if (!j) return;
    if (!j->mem) free(j->buf);
    free(j->scratch);
    free(j->name);
    free(j);
}

const char *tprof_json_errmsg(const tprof_json *j) { return j->msg; }
uint64_t tprof_json_offset(const tprof_json *j) { return j->base + j->pos; }

/* Keeps buf[keep..len), reads more after it. Returns >0 if bytes were added,
 * 0 at end of input, negative on error. */
static int refill(tprof_json *j, size_t keep)
{
    if (j->eof) return 0;
    if (keep > 0) {
        memmove(j->buf, j->buf + keep, j->len - keep);
        j->len -= keep;
        j->pos -= keep;
        j->base += keep;
    }
    if (j->len == j->cap) { /* one token fills the window: grow it */
        if (j->cap >= TPROF_JSON_MAX_TOKEN)
            return fail(j, TPROF_ELIMIT, j->base,
                        "a single token is longer than %u MiB", TPROF_JSON_MAX_TOKEN >> 20);
        uint8_t *nb = realloc(j->buf, j->cap * 2);
        if (!nb) return fail(j, TPROF_ENOMEM, j->base, "out of memory growing the window");
        j->buf = nb;
        j->cap *= 2;
    }
    for (;;) {
        ssize_t n = j->read(j->ctx, j->buf + j->len, j->cap - j->len);
        if (n < 0) {
            if (n == TPROF_ETRUNC) {
                j->eof = 2; /* the source itself was cut */
                return 0;
            }
            return fail(j, (int)n, j->base + j->len, "read error");
        }
        if (n == 0) {
            j->eof = 1;
            return 0;
        }
        j->len += (size_t)n;
        return 1;
    }
}


static int ensure_scratch(tprof_json *j, size_t need)
{
    if (need <= j->scap) return 0;
    size_t n = j->scap ? j->scap : 256;
    while (n < need) n *= 2;
    uint8_t *s = realloc(j->scratch, n);
    if (!s) return TPROF_ENOMEM;
    j->scratch = s;
    j->scap = n;
    return 0;
}

/* The message for a scanner error. */
static int scan_fail(tprof_json *j, const js_error *e)
{
    uint64_t off = j->base + (uint64_t)(e->at - j->buf);
    uint8_t c = *e->at;
    switch (e->code) {
    case JE_CTRL:
        return fail(j, TPROF_EFORMAT, off, "control character 0x%02x inside a string (expected it escaped)", c);
    case JE_UTF8:
        return fail(j, TPROF_EFORMAT, off, "invalid UTF-8 byte 0x%02x inside a string", c);
    case JE_ESCAPE:
        return fail(j, TPROF_EFORMAT, off,
                    "invalid escape '\\%c' (expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)",
                    e->at[1] >= 0x20 && e->at[1] < 0x7f ? e->at[1] : '?');
    case JE_UHEX:
        return fail(j, TPROF_EFORMAT, off, "invalid \\u escape (expected 4 hex digits)");
    default:
        if (e->at == j->buf + j->len && j->eof)
            return fail(j, TPROF_ETRUNC, off, "input ends inside a number");
        return fail(j, TPROF_EFORMAT, off, "malformed number (expected digits per JSON number syntax)");
    }
}

/* Scans the string whose opening quote is at buf[pos]. */
static int scan_string(tprof_json *j, tprof_json_token *t)
{
    const uint8_t *start = j->buf + j->pos, *end = j->buf + j->len, *text, *next;
    js_error e;
    int escaped;
    int r = js_string_raw(start, end, &text, &t->len, &next, &escaped, &e);
    if (r == JS_OK && escaped) {
        /* decode; the decoded text is never longer than the raw one */
        if (ensure_scratch(j, t->len + 2))
            return fail(j, TPROF_ENOMEM, j->base + j->pos, "out of memory");
        r = js_string(start, next, j->scratch, &text, &t->len, &next, &e);
    }
    if (r == JS_MORE) return SCAN_MORE;
    if (r == JS_ERR) return scan_fail(j, &e);
    t->text = (const char *)text;
    j->pos = (size_t)(next - j->buf);
    return SCAN_OK;
}

static int scan_number(tprof_json *j, tprof_json_token *t)
{
    const uint8_t *start = j->buf + j->pos, *next;
    js_error e;
    int r = js_number(start, j->buf + j->len, j->eof != 0, &next, &e);
    if (r == JS_MORE) return SCAN_MORE;
    if (r == JS_ERR) return scan_fail(j, &e);
    t->text = (const char *)start;
    t->len = (size_t)(next - start);
    j->pos = (size_t)(next - j->buf);
    return SCAN_OK;
}

static int scan_literal(tprof_json *j, tprof_json_token *t)
{
    static const struct { const char *w; size_t n; tprof_json_type ty; } lit[] = {
        { "true", 4, TPROF_JSON_TRUE }, { "false", 5, TPROF_JSON_FALSE }, { "null", 4, TPROF_JSON_NULL }
    };
    const uint8_t *p = j->buf + j->pos;
    size_t avail = j->len - j->pos;
    int k = *p == 't' ? 0 : *p == 'f' ? 1 : 2;
    size_t n = lit[k].n;
    size_t cmp = avail < n ? avail : n;
    if (memcmp(p, lit[k].w, cmp) != 0)
        return fail(j, TPROF_EFORMAT, j->base + j->pos, "invalid literal (expected %s)", lit[k].w);
    if (avail < n) return SCAN_MORE;
    t->type = lit[k].ty;
    t->text = (const char *)p;
    t->len = n;
    j->pos += n;
    return SCAN_OK;
}

static const char *expected_here(const tprof_json *j)
{
    switch (j->st) {
    case ST_VALUE: return "a value";
    case ST_FIRST_VALUE: return "a value or ']'";
    case ST_KEY: return "an object key (a string)";
    case ST_FIRST_KEY: return "an object key or '}'";
    case ST_COLON: return "':'";
    case ST_AFTER: return j->depth == 0 ? "the end of the input"
                        : j->is_obj[j->depth] ? "',' or '}'" : "',' or ']'";
    default: return "the end of the input";
    }
}

/* "unexpected X (expected Y)" for the byte at the current position: X the
 * byte in quotes when printable, else in hex; at the start of the input, a
 * hint when the bytes are a known other kind of file. */
static int unexpected(tprof_json *j, uint64_t off)
{
    const uint8_t *p = j->buf + j->pos;
    size_t n = j->len - j->pos;
    uint8_t c = *p;
    char shown[16];
    if (c >= 0x20 && c < 0x7f) snprintf(shown, sizeof shown, "'%c'", c);
    else snprintf(shown, sizeof shown, "byte 0x%02X", c);
    const char *hint = "";
    if (off == 0) {
        if (n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF)
            hint = "; the file starts with a UTF-8 byte-order mark, which JSON does not allow: save it without one";
        else if (n >= 2 && p[0] == 0x1F && p[1] == 0x8B)
            hint = "; this is gzip data: decompress it first (gunzip)";
        else if (n >= 4 && p[0] == 0x28 && p[1] == 0xB5 && p[2] == 0x2F && p[3] == 0xFD)
            hint = "; this is zstd data: decompress it first (unzstd)";
        /* other kinds of file (a pickle, a CSV) are named by the reader's hint line (lib/io/sniff.c) */
    }
    return fail(j, TPROF_EFORMAT, off, "unexpected %s (expected %s)%s", shown, expected_here(j), hint);
}


int tprof_json_next(tprof_json *j, tprof_json_token *t)
{
    if (j->err) return j->err;
    t->text = NULL;
    t->len = 0;
    for (;;) {
        /* skip whitespace, refilling as needed */
        const uint8_t *p = j->buf + j->pos, *end = j->buf + j->len;
        while (p < end && js_is_ws(*p)) p++;
        j->pos = (size_t)(p - j->buf);
        if (p == end) {
            int r = refill(j, j->pos);
            if (r < 0) return r;
            if (r > 0) continue;
            /* end of input */
            t->offset = j->base + j->pos;
            if (j->chunk_depth && !j->chunk_ended && (j->st == ST_VALUE || j->st == ST_FIRST_VALUE) &&
                j->depth == j->chunk_depth &&
                !j->is_obj[j->depth]) {
                j->chunk_ended = 1; /* once: further calls report the end as an error */
                t->type = TPROF_JSON_EOF;
                t->depth = j->depth;
                return 0;
            }
            if (j->eof == 2 && (j->st == ST_DONE || (j->st == ST_AFTER && j->depth == 0)))
                return fail(j, TPROF_ETRUNC, t->offset,
                            "the compressed stream was cut after the end of the JSON document");
            if (j->st == ST_DONE || (j->st == ST_AFTER && j->depth == 0)) {
                j->st = ST_DONE;
                t->type = TPROF_JSON_EOF;
                t->depth = 0;
                return 0;
            }
            if (!j->started && j->eof == 2)
                return fail(j, TPROF_ETRUNC, t->offset, "the compressed stream was cut before any JSON value");
            if (!j->started)
                return fail(j, TPROF_EFORMAT, t->offset, "empty input (expected a JSON value)");
            return fail(j, TPROF_ETRUNC, t->offset, "input ends at depth %d (expected %s)%s", j->depth,
                        expected_here(j), j->eof == 2 ? "; the compressed stream was cut" : "");
        }
        j->started = 1;
        int eof_seen = j->eof; /* a token cut at the end is retried once the end is known */
        uint8_t c = *p;
        t->offset = j->base + j->pos;
        switch (j->st) {
        case ST_DONE:
        case ST_AFTER:
            if (j->depth == 0)
                return fail(j, TPROF_EFORMAT, t->offset, "unexpected data after the JSON document");
            if (c == ',') {
                j->pos++;
                j->st = j->is_obj[j->depth] ? ST_KEY : ST_VALUE;
                continue;
            }
            if (c == (j->is_obj[j->depth] ? '}' : ']')) goto close;
            return unexpected(j, t->offset);
        case ST_COLON:
            if (c != ':')
                return fail(j, TPROF_EFORMAT, t->offset, "expected ':' after an object key");
            j->pos++;
            j->st = ST_VALUE;
            continue;
        case ST_FIRST_KEY:
            if (c == '}') goto close;
            /* fall through */
        case ST_KEY: {
            if (c != '"')
                return unexpected(j, t->offset);
            int r = scan_string(j, t);
            if (r < 0) return r;
            if (r == SCAN_MORE) goto more;
            t->type = TPROF_JSON_KEY;
            t->depth = j->depth;
            j->st = ST_COLON;
            return 0;
        }
        case ST_FIRST_VALUE:
            if (c == ']') goto close;
            /* fall through */
        case ST_VALUE: {
            int r;
            switch (c) {
            case '{':
            case '[':
                if (j->depth >= TPROF_JSON_MAX_DEPTH)
                    return fail(j, TPROF_ELIMIT, t->offset, "nesting deeper than %d levels",
                                TPROF_JSON_MAX_DEPTH);
                j->depth++;
                j->is_obj[j->depth] = c == '{';
                j->pos++;
                j->st = c == '{' ? ST_FIRST_KEY : ST_FIRST_VALUE;
                t->type = c == '{' ? TPROF_JSON_OBJ_BEGIN : TPROF_JSON_ARR_BEGIN;
                t->depth = j->depth;
                return 0;
            case '"':
                r = scan_string(j, t);
                t->type = TPROF_JSON_STRING;
                break;
            case 't': case 'f': case 'n':
                r = scan_literal(j, t);
                break;
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    r = scan_number(j, t);
                    t->type = TPROF_JSON_NUMBER;
                    break;
                }
                return unexpected(j, t->offset);
            }
            if (r < 0) return r;
            if (r == SCAN_MORE) goto more;
            t->depth = j->depth;
            j->st = ST_AFTER;
            return 0;
        }
        }
    more: {
            uint64_t tok_off = t->offset;
            int r = refill(j, j->pos);
            if (r < 0) return r;
            if (r == 0 && !eof_seen) continue;
            if (r == 0) {
                if (j->err) return j->err;
                return fail(j, TPROF_ETRUNC, tok_off, "input ends inside a token that starts here%s",
                            j->eof == 2 ? "; the compressed stream was cut" : "");
            }
            continue;
        }
    close:
        t->type = j->is_obj[j->depth] ? TPROF_JSON_OBJ_END : TPROF_JSON_ARR_END;
        j->depth--;
        j->pos++;
        j->st = ST_AFTER;
        t->depth = j->depth;
        return 0;
    }
}

int tprof_json_skip_container(tprof_json *j)
{
    int target = j->depth - 1;
    tprof_json_token t;
    do {
        int r = tprof_json_next(j, &t);
        if (r) return r;
        if (t.type == TPROF_JSON_EOF) return fail(j, TPROF_ETRUNC, t.offset, "unexpected end");
    } while (t.depth > target);
    return 0;
}

int tprof_json_skip_value(tprof_json *j)
{
    tprof_json_token t;
    int r = tprof_json_next(j, &t);
    if (r) return r;
    if (t.type == TPROF_JSON_OBJ_BEGIN || t.type == TPROF_JSON_ARR_BEGIN)
        return tprof_json_skip_container(j);
    return 0;
}

void tprof_json_window(tprof_json *j, const uint8_t **p, const uint8_t **end)
{
    *p = j->buf + j->pos;
    *end = j->buf + j->len;
}

int tprof_json_window_more(tprof_json *j)
{
    if (j->err) return j->err;
    /* the window is never grown for a whole object, only for one token */
    if (j->pos == 0 && j->len == j->cap) return 0;
    return refill(j, j->pos);
}

void tprof_json_window_close_object(tprof_json *j, const uint8_t *p)
{
    j->pos = (size_t)(p - j->buf);
    j->depth--;
    j->st = ST_AFTER;
}

int tprof_json_depth(const tprof_json *j) { return j->depth; }

int tprof_json_next_object_element(tprof_json *j, uint64_t *offset)
{
    if (j->err || j->st != ST_AFTER || j->depth == 0 || j->is_obj[j->depth] || j->depth >= TPROF_JSON_MAX_DEPTH)
        return 0;
    const uint8_t *p = j->buf + j->pos, *end = j->buf + j->len;
    if ((p = js_ws(p, end)) == end || *p != ',') return 0;
    if ((p = js_ws(p + 1, end)) == end || *p != '{') return 0;
    /* what tprof_json_next does for ',' and then '{' */
    j->pos = (size_t)(p - j->buf) + 1;
    *offset = j->base + j->pos - 1;
    j->depth++;
    j->is_obj[j->depth] = 1;
    j->st = ST_FIRST_KEY;
    return 1;
}

int tprof_json_open_chunk(tprof_json **out, const void *data, size_t len, const char *name, uint64_t base,
                          int depth, int outer_object, int lenient_end, int cut)
{
    int rc = tprof_json_open_mem(out, data, len, name);
    if (rc) return rc;
    tprof_json *j = *out;
    j->base = base;
    if (cut) j->eof = 2;
    if (depth > 0) { /* resume inside the event array, before an element */
        j->depth = depth;
        j->is_obj[1] = outer_object != 0;
        for (int d = 2; d <= depth; d++) j->is_obj[d] = 0;
        j->st = ST_VALUE;
        j->started = 1;
    }
    if (lenient_end) j->chunk_depth = depth > 0 ? depth : (outer_object ? 2 : 1);
    return 0;
}
