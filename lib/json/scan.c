/* JSON scanning primitives shared by the tokenizer and the fast event path. */
#include "scan.h"

#include <stdlib.h>
#include <string.h>

int js_utf8_len(const uint8_t *p, const uint8_t *end)
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
    int have = end - p < n ? (int)(end - p) : n;
    for (int i = 1; i < have; i++) {
        uint8_t b = p[i];
        if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
    }
    return have < n ? -1 : n;
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
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
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

static int bad(js_error *err, js_errcode code, const uint8_t *at)
{
    err->code = code;
    err->at = at;
    return JS_ERR;
}

int js_string(const uint8_t *start, const uint8_t *end, uint8_t *out, const uint8_t **text, size_t *len,
              const uint8_t **next, js_error *err)
{
    const uint8_t *p = start + 1;
    uint8_t *o = NULL; /* decoding: write position in OUT */
    for (;;) {
        const uint8_t *q = js_scan_plain(p, end);
        if (o) {
            memcpy(o, p, (size_t)(q - p));
            o += q - p;
        }
        p = q;
        if (p == end) return JS_MORE;
        uint8_t c = *p;
        if (c == '"') break;
        if (c == '\\') {
            if (!o && out) { /* first escape: copy what came before it */
                memcpy(out, start + 1, (size_t)(p - start - 1));
                o = out + (p - start - 1);
            }
            if (end - p < 2) return JS_MORE;
            uint8_t e = p[1], d;
            switch (e) {
            case '"': d = '"'; break;
            case '\\': d = '\\'; break;
            case '/': d = '/'; break;
            case 'b': d = '\b'; break;
            case 'f': d = '\f'; break;
            case 'n': d = '\n'; break;
            case 'r': d = '\r'; break;
            case 't': d = '\t'; break;
            case 'u': d = 0; break;
            default: return bad(err, JE_ESCAPE, p);
            }
            if (e != 'u') {
                if (o) *o++ = d;
                p += 2;
                continue;
            }
            if (end - p < 6) return JS_MORE;
            unsigned cp;
            if (hex4(p + 2, &cp)) return bad(err, JE_UHEX, p);
            p += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                /* a high surrogate: a low one must follow to form one code point */
                /* more input matters only if what follows can still be "\\u" */
                if (end - p < 6 && (end - p < 1 || p[0] == '\\') && (end - p < 2 || p[1] == 'u'))
                    return JS_MORE;
                unsigned lo;
                if (end - p >= 6 && p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &lo) == 0 && lo >= 0xDC00 &&
                    lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                } else
                    cp = 0xFFFD; /* lone surrogate: the replacement character */
            } else if (cp >= 0xDC00 && cp <= 0xDFFF)
                cp = 0xFFFD;
            if (o) o += put_utf8(o, cp);
            continue;
        }
        if (c < 0x20) return bad(err, JE_CTRL, p);
        int n = js_utf8_len(p, end);
        if (n < 0) return JS_MORE;
        if (n == 0) return bad(err, JE_UTF8, p);
        if (o) {
            memcpy(o, p, (size_t)n);
            o += n;
        }
        p += n;
    }
    if (o) {
        *text = out;
        *len = (size_t)(o - out);
    } else {
        *text = start + 1;
        *len = (size_t)(p - start - 1); /* raw, or validated-only with escapes */
    }
    *next = p + 1;
    return JS_OK;
}

static inline int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
int js_number(const uint8_t *p, const uint8_t *end, int at_eof, const uint8_t **next, js_error *err)
{
#define AT_END(may_end)                                      \
    do {                                                     \
        if (p == end) {                                      \
            if (!at_eof) return JS_MORE;                     \
            if (!(may_end)) return bad(err, JE_NUMBER, p);   \
            *next = p;                                       \
            return JS_OK;                                    \
        }                                                    \
    } while (0)
    if (*p == '-') p++;
    AT_END(0);
    if (*p == '0') p++;
    else if (is_digit(*p)) p = js_digits(p, end);
    else return bad(err, JE_NUMBER, p);
    AT_END(1);
    if (*p == '.') {
        p++;
        AT_END(0);
        if (!is_digit(*p)) return bad(err, JE_NUMBER, p);
        p = js_digits(p, end);
        AT_END(1);
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        AT_END(0);
        if (*p == '+' || *p == '-') p++;
        AT_END(0);
        if (!is_digit(*p)) return bad(err, JE_NUMBER, p);
        while (p < end && is_digit(*p)) p++;
        AT_END(1);
    }
#undef AT_END
    if (is_digit(*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-')
        return bad(err, JE_NUMBER, p);
    *next = p;
    return JS_OK;
}

/* The deepest nesting js_skip_value follows (the tokenizer's limit). */
#define SKIP_MAX_DEPTH 512

/* One loop with an explicit stack rather than recursion: skipped values
 * (argument lists, shapes, call stacks) are a large share of a trace. */
int js_skip_value(const uint8_t *p, const uint8_t *end, int depth_left, const uint8_t **next, js_error *err)
{
    uint8_t is_obj[SKIP_MAX_DEPTH]; /* of each container open in this call */
    int depth = 0, r;
    const uint8_t *t;
    size_t l;
    if (depth_left > SKIP_MAX_DEPTH) depth_left = SKIP_MAX_DEPTH;
    p = js_ws(p, end);
value:
    if (p == end) return JS_MORE;
    switch (*p) {
    case '"': {
        const uint8_t *q = js_scan_plain(p + 1, end);
        if (q < end && *q == '"') p = q + 1;
        else if ((r = js_string(p, end, NULL, &t, &l, &p, err))) return r;
        break;
    }
    case '{':
    case '[': {
        int obj = *p == '{';
        if (depth >= depth_left) return bad(err, JE_SYNTAX, p);
        is_obj[depth++] = (uint8_t)obj;
        p = js_ws(p + 1, end);
        if (p == end) return JS_MORE;
        if (*p == (obj ? '}' : ']')) {
            depth--;
            p++;
            break;
        }
        if (obj) goto key;
        goto value;
    }
    case 't':
    case 'f':
    case 'n': {
        const char *w = *p == 't' ? "true" : *p == 'f' ? "false" : "null";
        size_t n = *p == 'f' ? 5 : 4, have = (size_t)(end - p) < n ? (size_t)(end - p) : n;
        if (memcmp(p, w, have)) return bad(err, JE_SYNTAX, p);
        if (have < n) return JS_MORE;
        p += n;
        break;
    }
    default: {
        const uint8_t *q = js_skip_plain_number(p, end);
        if (q) {
            p = q;
            break;
        }
        if (*p != '-' && !is_digit(*p)) return bad(err, JE_SYNTAX, p);
        if ((r = js_number(p, end, 0, &p, err))) return r;
        break;
    }
    }
    /* after a value: the end of this call's value, a comma or a closing bracket */
    for (;;) {
        if (depth == 0) {
            *next = p;
            return JS_OK;
        }
        if (end - p >= 3 && p[0] == ',' && p[1] == ' ' && p[2] > ' ') { /* the usual ", " */
            p += 2;
            if (is_obj[depth - 1]) goto key;
            goto value;
        }
        p = js_ws(p, end);
        if (p == end) return JS_MORE;
        int obj = is_obj[depth - 1];
        if (*p == ',') {
            p = js_ws(p + 1, end);
            if (p == end) return JS_MORE;
            if (obj) goto key;
            goto value;
        }
        if (*p != (obj ? '}' : ']')) return bad(err, JE_SYNTAX, p);
        depth--;
        p++;
    }
key:
    if (*p != '"') return bad(err, JE_SYNTAX, p);
    {
        const uint8_t *q = js_scan_plain(p + 1, end);
        if (q < end && *q == '"') p = q + 1;
        else if ((r = js_string(p, end, NULL, &t, &l, &p, err))) return r;
    }
    p = js_ws(p, end);
    if (p == end) return JS_MORE;
    if (*p != ':') return bad(err, JE_SYNTAX, p);
    p = js_ws(p + 1, end);
    goto value;
}

/* 256 sets of 4 containers of 8..126 bytes: 144 KiB, within a core's L2
 * (fewer sets for a small input: js_skip_cache_new_for).
 * A set is chosen by the 24 bytes at the value, which for a short value
 * include what follows it (usually the next key, which repeats with it):
 * shapes and type lists share their first 8 or 16 bytes too often to tell
 * them apart by fewer (hits on the real traces: 70-80% by 8 bytes, 85-99%
 * by 24). Where a value goes never decides whether it matches: that is the
 * byte compare. */
#define CACHE_SETS 256
#define CACHE_WAYS 4
#define CACHE_MIN 8
#define CACHE_MAX 126
/* at most CACHE_MAX / 2 levels deep: every depth_left at least this passes */
#define CACHE_DEPTH_OK (CACHE_MAX / 2 + 1)

typedef struct {
    uint64_t tag; /* the caller's word for these bytes (js_skip_container_tagged), 0 when filled */
    uint8_t len; /* 0: empty */
    uint8_t next_victim; /* used in way 0 only: the way to replace next */
    uint8_t bytes[CACHE_MAX + 16];
} cache_way;

struct js_skip_cache {
    unsigned shift; /* a hash's top bits pick the set: 64 - log2(sets) */
    cache_way sets[][CACHE_WAYS];
};

js_skip_cache *js_skip_cache_new(void) { return js_skip_cache_new_for(-1); }
js_skip_cache *js_skip_cache_new_for(int64_t json_bytes)
{
    size_t sets = 4;
    if (json_bytes < 0) sets = CACHE_SETS;
    while (sets < CACHE_SETS && (int64_t)sets < json_bytes >> 12) sets *= 2;
    js_skip_cache *c = calloc(1, sizeof(js_skip_cache) + sets * sizeof c->sets[0]);
    if (c) c->shift = 64 - (unsigned)__builtin_ctzll(sets);
    return c;
}
void js_skip_cache_free(js_skip_cache *c) { free(c); }

static inline int way_holds(const cache_way *w, const uint8_t *p, const uint8_t *end)
{
    size_t len = w->len;
    if (!len || len > (size_t)(end - p)) return 0;
    if ((size_t)(end - p) < len + 16) return memcmp(p, w->bytes, len) == 0;
    return js_same_bytes(p, w->bytes, len); /* whole vectors: bytes[] has 16 spare */
}

static inline int skip_cached(js_skip_cache *c, const uint8_t *p, const uint8_t *end, int depth_left,
                              const uint8_t **next, js_error *err, uint64_t **tag)
{
    if (!c || end - p < 24 || depth_left < CACHE_DEPTH_OK) return js_skip_value(p, end, depth_left, next, err);
    uint64_t head[3];
    memcpy(head, p, 24);
    uint64_t h = head[0] * 0x9E3779B97F4A7C15ull ^ head[1] * 0xC2B2AE3D27D4EB4Full ^ head[2] * 0x165667B19E3779F9ull;
    cache_way *set = c->sets[h >> c->shift];
    for (int i = 0; i < CACHE_WAYS; i++)
        if (way_holds(&set[i], p, end)) {
            *next = p + set[i].len;
            if (tag) *tag = &set[i].tag;
            return JS_OK;
        }
    int rc = js_skip_value(p, end, depth_left, next, err);
    size_t n = (size_t)(*next - p);
    if (rc == JS_OK && n >= CACHE_MIN && n <= CACHE_MAX) {
        cache_way *w = &set[set[0].next_victim];
        set[0].next_victim = (uint8_t)((set[0].next_victim + 1) % CACHE_WAYS);
        memcpy(w->bytes, p, n);
        w->len = (uint8_t)n;
        w->tag = 0;
        if (tag) *tag = &w->tag;
    }
    return rc;
}

int js_skip_container_cached(js_skip_cache *c, const uint8_t *p, const uint8_t *end, int depth_left,
                             const uint8_t **next, js_error *err)
{
    return skip_cached(c, p, end, depth_left, next, err, NULL);
}

int js_skip_container_tagged(js_skip_cache *c, const uint8_t *p, const uint8_t *end, int depth_left,
                             const uint8_t **next, js_error *err, uint64_t **tag)
{
    *tag = NULL;
    return skip_cached(c, p, end, depth_left, next, err, tag);
}

int js_decimal(const uint8_t *p, const uint8_t *end, int scale, int64_t *value, int *exact,
               const uint8_t **next, js_error *err)
{
    if (js_decimal_plain(p, end, scale, value, next)) {
        *exact = 1;
        return JS_OK;
    }
    const uint8_t *s = p;
    int neg = *p == '-';
    p += neg;
    int64_t v = 0;
    int ndig = 0, frac = 0;
    if (p < end && *p >= '1' && *p <= '9') {
        /* one bound instead of two checks per digit: at most 18 digits fit */
        const uint8_t *lim = end - p > 18 ? p + 18 : end;
        const uint8_t *s0 = p;
        for (unsigned d; p < lim && (d = (unsigned)*p - '0') <= 9; p++) v = v * 10 + d;
        ndig = (int)(p - s0);
    } else if (p < end && *p == '0') {
        p++;
        ndig = 1;
    }
    if (ndig && p < end && *p == '.' && scale <= 6) {
        const uint8_t *f = p + 1;
        int room = 18 - ndig < scale ? 18 - ndig : scale;
        const uint8_t *lim = end - f > room ? f + room : end;
        for (unsigned d; f < lim && (d = (unsigned)*f - '0') <= 9; f++) v = v * 10 + d;
        frac = (int)(f - p - 1);
        ndig += frac;
        if (frac) p = f;
    }
    /* the plain form ends here when the next byte cannot continue a number */
    if (ndig && p < end && js_ends_number(*p) && scale >= 0 && scale <= 6 &&
        !__builtin_mul_overflow(v, js_pow10[scale - frac], &v)) {
        *value = neg ? -v : v;
        *exact = 1;
        *next = p;
        return JS_OK;
    }
    *exact = 0;
    return js_number(s, end, 0, next, err);
}
