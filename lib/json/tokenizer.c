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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define WINDOW_CAP (1u << 20)

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
    *out = NULL;
    tprof_json *j = calloc(1, sizeof *j);
    if (!j) return TPROF_ENOMEM;
    j->read = read;
    j->ctx = ctx;
    j->name = strdup(name ? name : "<input>");
    j->cap = WINDOW_CAP;
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

static inline int is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

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

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), 0 if invalid,
 * -1 if the window ends inside it. */
static int utf8_len(const uint8_t *p, const uint8_t *end)
{
    uint8_t c = p[0];
    int n;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else
        return 0;
    if (end - p < n) {
        /* check what we have: an invalid prefix is invalid now */
        for (int i = 1; i < end - p; i++) {
            uint8_t b = p[i];
            if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
        }
        return -1;
    }
    if (p[1] < lo || p[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return n;
}

static int hex4(const uint8_t *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(uint8_t *o, unsigned cp)
{
    if (cp < 0x80) { o[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | (cp >> 6));
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12));
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | (cp >> 18));
    o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Position of the first byte in [p, end) that ends a plain string run:
 * '"', '\\', a control byte, or a non-ASCII byte. */
static inline const uint8_t *scan_plain(const uint8_t *p, const uint8_t *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i bslash = _mm_set1_epi8('\\');
    const __m128i ctl = _mm_set1_epi8(0x1F);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        /* bytes <= 0x1F (unsigned): min(v, 0x1F) == v; bytes >= 0x80 set the
         * sign bit. */
        __m128i m = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash));
        m = _mm_or_si128(m, _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v));
        int mask = _mm_movemask_epi8(m) | _mm_movemask_epi8(v);
        if (mask) return p + __builtin_ctz((unsigned)mask);
        p += 16;
    }
#endif
    while (p < end) {
        uint8_t c = *p;
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return p;
        p++;
    }
    return end;
}

/* Scans the string whose opening quote is at buf[pos]. On success sets text
 * and len and moves pos past the closing quote. */
static int scan_string(tprof_json *j, tprof_json_token *t)
{
    const uint8_t *start = j->buf + j->pos;
    const uint8_t *end = j->buf + j->len;
    const uint8_t *p = start + 1;
    for (;;) {
        p = scan_plain(p, end);
        if (p == end) return SCAN_MORE;
        uint8_t c = *p;
        if (c == '"') {
            t->text = (const char *)start + 1;
            t->len = (size_t)(p - start - 1);
            j->pos = (size_t)(p + 1 - j->buf);
            return SCAN_OK;
        }
        if (c == '\\') break;
        if (c < 0x20)
            return fail(j, TPROF_EFORMAT, j->base + (uint64_t)(p - j->buf),
                        "control character 0x%02x inside a string (expected it escaped)", c);
        int n = utf8_len(p, end);
        if (n < 0) return SCAN_MORE;
        if (n == 0)
            return fail(j, TPROF_EFORMAT, j->base + (uint64_t)(p - j->buf),
                        "invalid UTF-8 byte 0x%02x inside a string", c);
        p += n;
    }
    /* Escapes: decode into scratch. Decoded text is never longer than raw. */
    size_t done = (size_t)(p - start - 1);
    if (ensure_scratch(j, (size_t)(end - start)))
        return fail(j, TPROF_ENOMEM, j->base + j->pos, "out of memory");
    uint8_t *o = j->scratch;
    memcpy(o, start + 1, done);
    o += done;
    for (;;) {
        const uint8_t *q = scan_plain(p, end);
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        p = q;
        if (p == end) return SCAN_MORE;
        uint8_t c = *p;
        if (c == '"') break;
        if (c == '\\') {
            if (end - p < 2) return SCAN_MORE;
            uint8_t e = p[1];
            switch (e) {
            case '"': *o++ = '"'; p += 2; continue;
            case '\\': *o++ = '\\'; p += 2; continue;
            case '/': *o++ = '/'; p += 2; continue;
            case 'b': *o++ = '\b'; p += 2; continue;
            case 'f': *o++ = '\f'; p += 2; continue;
            case 'n': *o++ = '\n'; p += 2; continue;
            case 'r': *o++ = '\r'; p += 2; continue;
            case 't': *o++ = '\t'; p += 2; continue;
            case 'u': break;
            default:
                return fail(j, TPROF_EFORMAT, j->base + (uint64_t)(p - j->buf),
                            "invalid escape '\\%c' (expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)",
                            e >= 0x20 && e < 0x7f ? e : '?');
            }
            if (end - p < 6) return SCAN_MORE;
            unsigned cp;
            if (hex4(p + 2, &cp))
                return fail(j, TPROF_EFORMAT, j->base + (uint64_t)(p - j->buf),
                            "invalid \\u escape (expected 4 hex digits)");
            p += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                /* a high surrogate: a low one must follow to form one code point */
                if (end - p < 6) return SCAN_MORE;
                unsigned lo;
                if (p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                } else
                    cp = 0xFFFD; /* lone surrogate: replacement character */
            } else if (cp >= 0xDC00 && cp <= 0xDFFF)
                cp = 0xFFFD;
            o += put_utf8(o, cp);
            continue;
        }
        if (c < 0x20)
            return fail(j, TPROF_EFORMAT, j->base + (uint64_t)(p - j->buf),
                        "control character 0x%02x inside a string (expected it escaped)", c);
        int n = utf8_len(p, end);
        if (n < 0) return SCAN_MORE;
        if (n == 0)
            return fail(j, TPROF_EFORMAT, j->base + (uint64_t)(p - j->buf),
                        "invalid UTF-8 byte 0x%02x inside a string", c);
        memcpy(o, p, (size_t)n);
        o += n;
        p += n;
    }
    t->text = (const char *)j->scratch;
    t->len = (size_t)(o - j->scratch);
    j->pos = (size_t)(p + 1 - j->buf);
    return SCAN_OK;
}

static inline int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* Number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int scan_number(tprof_json *j, tprof_json_token *t)
{
    const uint8_t *start = j->buf + j->pos, *end = j->buf + j->len, *p = start;
#define NEED(cond)                                                   \
    do {                                                             \
        if (p == end) {                                              \
            if (!j->eof) return SCAN_MORE;                           \
            if (!(cond)) goto bad;                                   \
        }                                                            \
    } while (0)
    if (*p == '-') p++;
    NEED(0);
    if (*p == '0') p++;
    else if (is_digit(*p)) while (p < end && is_digit(*p)) p++;
    else goto bad;
    NEED(1);
    if (p < end && *p == '.') {
        p++;
        NEED(0);
        if (!is_digit(*p)) goto bad;
        while (p < end && is_digit(*p)) p++;
        NEED(1);
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        NEED(0);
        if (*p == '+' || *p == '-') p++;
        NEED(0);
        if (!is_digit(*p)) goto bad;
        while (p < end && is_digit(*p)) p++;
        NEED(1);
    }
#undef NEED
    if (p < end && (is_digit(*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-'))
        goto bad;
    t->text = (const char *)start;
    t->len = (size_t)(p - start);
    j->pos = (size_t)(p - j->buf);
    return SCAN_OK;
bad:
    if (p == end && j->eof == 2)
        return fail(j, TPROF_ETRUNC, j->base + (uint64_t)(p - j->buf), "input ends inside a number");
    return fail(j, TPROF_EFORMAT, j->base + (uint64_t)(p - j->buf),
                "malformed number (expected digits per JSON number syntax)");
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

int tprof_json_next(tprof_json *j, tprof_json_token *t)
{
    if (j->err) return j->err;
    t->text = NULL;
    t->len = 0;
    for (;;) {
        /* skip whitespace, refilling as needed */
        const uint8_t *p = j->buf + j->pos, *end = j->buf + j->len;
        while (p < end && is_ws(*p)) p++;
        j->pos = (size_t)(p - j->buf);
        if (p == end) {
            int r = refill(j, j->pos);
            if (r < 0) return r;
            if (r > 0) continue;
            /* end of input */
            t->offset = j->base + j->pos;
            if (j->st == ST_DONE || (j->st == ST_AFTER && j->depth == 0)) {
                j->st = ST_DONE;
                t->type = TPROF_JSON_EOF;
                t->depth = 0;
                return 0;
            }
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
            return fail(j, TPROF_EFORMAT, t->offset, "unexpected '%c' (expected %s)",
                        c >= 0x20 && c < 0x7f ? c : '?', expected_here(j));
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
                return fail(j, TPROF_EFORMAT, t->offset, "unexpected '%c' (expected %s)",
                            c >= 0x20 && c < 0x7f ? c : '?', expected_here(j));
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
                if (c == '-' || is_digit(c)) {
                    r = scan_number(j, t);
                    t->type = TPROF_JSON_NUMBER;
                    break;
                }
                return fail(j, TPROF_EFORMAT, t->offset, "unexpected '%c' (expected %s)",
                            c >= 0x20 && c < 0x7f ? c : '?', expected_here(j));
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
