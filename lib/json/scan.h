/* JSON scanning primitives over a contiguous byte range (internal).
 *
 * Shared by the resumable tokenizer and by the trace reader's fast path,
 * which parses whole events straight from the tokenizer's window. Each
 * scanner returns JS_OK, JS_MORE (the range ended inside the value: get
 * more input and scan again from the start) or JS_ERR (with what and where). */
#ifndef TPROF_JSON_SCAN_H
#define TPROF_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { JS_OK = 0, JS_MORE = 1, JS_ERR = 2 };

typedef enum {
    JE_NONE = 0,
    JE_CTRL,    /* raw control byte inside a string */
    JE_UTF8,    /* invalid UTF-8 */
    JE_ESCAPE,  /* unknown backslash escape */
    JE_UHEX,    /* \u not followed by 4 hex digits */
    JE_NUMBER,  /* number syntax */
    JE_SYNTAX,  /* anything else */
} js_errcode;

typedef struct {
    js_errcode code;
    const uint8_t *at;
} js_error;

/* Space, \n, \r and \t as bits of a word: one compare and one test per byte. */
#define JS_WS_BITS ((1ull << ' ') | (1ull << '\n') | (1ull << '\r') | (1ull << '\t'))
static inline int js_is_ws(uint8_t c) { return c <= ' ' && (JS_WS_BITS >> c & 1); }

static inline const uint8_t *js_ws(const uint8_t *p, const uint8_t *end)
{
    /* the usual cases first: no whitespace, or the one space of ", " and ": " */
    if (p < end && *p > ' ') return p;
    if (end - p >= 2 && *p == ' ' && p[1] > ' ') return p + 1;
    while (p < end && js_is_ws(*p)) p++;
    return p;
}

/* First byte in [p, end) that ends a plain string run: '"', '\\', a control
 * byte or a non-ASCII byte. */
static inline const uint8_t *js_scan_plain(const uint8_t *p, const uint8_t *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i bslash = _mm_set1_epi8('\\');
    const __m128i ctl = _mm_set1_epi8(0x1F);
    /* <= 0x1F unsigned: min(v, 0x1F) == v; >= 0x80: the sign bit */
#define JS_PLAIN_STOPS(v)                                                                                   \
    (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),       \
                                    _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v))) |                              \
     _mm_movemask_epi8(v))
    if (end - p >= 16) { /* most strings end within 16 bytes */
        unsigned mask = (unsigned)JS_PLAIN_STOPS(_mm_loadu_si128((const __m128i *)p));
        if (mask) return p + __builtin_ctz(mask);
        p += 16;
    }
    while (end - p >= 32) { /* long ones (kernel names): two vectors per step */
        unsigned lo = (unsigned)JS_PLAIN_STOPS(_mm_loadu_si128((const __m128i *)p));
        unsigned hi = (unsigned)JS_PLAIN_STOPS(_mm_loadu_si128((const __m128i *)(p + 16)));
        unsigned mask = lo | hi << 16;
        if (mask) return p + __builtin_ctz(mask);
        p += 32;
    }
    while (end - p >= 16) {
        unsigned mask = (unsigned)JS_PLAIN_STOPS(_mm_loadu_si128((const __m128i *)p));
        if (mask) return p + __builtin_ctz(mask);
        p += 16;
    }
#undef JS_PLAIN_STOPS
#endif
    while (p < end) {
        uint8_t c = *p;
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return p;
        p++;
    }
    return end;
}

/* N bytes at P equal those at Q. Both are read in whole 16-byte blocks, up
 * to the first multiple of 16 at or above N (16 when N is 0): that many
 * bytes must be readable at each. */
static inline int js_same_bytes(const uint8_t *p, const uint8_t *q, size_t n)
{
#if defined(__SSE2__)
    for (;; p += 16, q += 16, n -= 16) {
        unsigned eq = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), _mm_loadu_si128((const __m128i *)q)));
        if (n <= 16) return ((~eq) & ((1u << n) - 1)) == 0;
        if (eq != 0xFFFF) return 0;
    }
#else
    return memcmp(p, q, n) == 0;
#endif
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define JS_SWAR 1 /* eight digits at a time in a 64-bit word */
static inline uint64_t js_load8(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* Bit 7 of each byte of W that is not an ASCII digit: the digits become
 * 0..9 after the XOR, and adding 0x76 to the low seven bits sets bit 7 of
 * every other value without carrying into the next byte. */
static inline uint64_t js_nondigits8(uint64_t w)
{
    uint64_t d = w ^ 0x3030303030303030ull;
    return (((d & 0x7F7F7F7F7F7F7F7Full) + 0x7676767676767676ull) | d) & 0x8080808080808080ull;
}

/* The value of the N (1..8) digits in the low bytes of W, the first one
 * most significant. */
static inline uint64_t js_value8(uint64_t w, int n)
{
    w -= 0x3030303030303030ull; /* borrows only run up into the bytes shifted out */
    w <<= 8 * (8 - n);
    w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FFull;
    w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFFull;
    return (w * 10000 + (w >> 32)) & 0xFFFFFFFFull;
}
#else
#define JS_SWAR 0
#endif

/* First byte in [p, end) that is not an ASCII digit. */
static inline const uint8_t *js_digits(const uint8_t *p, const uint8_t *end)
{
#if JS_SWAR
    while (end - p >= 8) {
        uint64_t m = js_nondigits8(js_load8(p));
        if (m) return p + (__builtin_ctzll(m) >> 3);
        p += 8;
    }
#endif
    while (p < end && (unsigned)*p - '0' <= 9) p++;
    return p;
}

/* Length of the valid UTF-8 sequence at P (lead byte >= 0x80), 0 if invalid
 * (overlongs and UTF-16 surrogates included), -1 if the range ends inside it
 * and what is there is a valid prefix. Reads no byte past the first bad one. */
int js_utf8_len(const uint8_t *p, const uint8_t *end);

/* Scans the string whose opening quote is at P. With OUT (capacity at least
 * end - p) escapes are decoded into it; without, they are only checked.
 * On JS_OK: TEXT and LEN give the string's content (raw bytes when it has no
 * escapes, else OUT); *next is the byte after the closing quote. */
int js_string(const uint8_t *p, const uint8_t *end, uint8_t *out, const uint8_t **text, size_t *len,
              const uint8_t **next, js_error *err);

/* js_string without decoding, with the plain case inline: *escaped says
 * whether TEXT holds escapes (then it is raw, still checked). */
static inline int js_string_raw(const uint8_t *p, const uint8_t *end, const uint8_t **text, size_t *len,
                                const uint8_t **next, int *escaped, js_error *err)
{
    const uint8_t *q = js_scan_plain(p + 1, end);
    if (q < end && *q == '"') {
        *text = p + 1;
        *len = (size_t)(q - p - 1);
        *next = q + 1;
        *escaped = 0;
        return JS_OK;
    }
    *escaped = q < end && *q == '\\';
    int rc = js_string(p, end, NULL, text, len, next, err);
    if (rc == JS_OK && !*escaped) *escaped = memchr(*text, '\\', *len) != NULL;
    return rc;
}

/* 10^0 .. 10^8, for the number readers. */
static const int64_t js_pow10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000 };

/* C cannot continue a JSON number. */
static inline int js_ends_number(uint8_t c)
{
    return ((unsigned)c - '0' > 9) && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-';
}

/* js_decimal's plain forms, -?digits(.digits)?, a word at a time, inline
 * for the callers that read many numbers: sets *value (in units of
 * 10^-SCALE, 0 <= SCALE <= 6) and *next and returns 1, or returns 0 when the
 * number is anything else or lies near END (then js_decimal decides). */
static inline int js_decimal_plain(const uint8_t *p, const uint8_t *end, int scale, int64_t *value,
                                   const uint8_t **next)
{
#if JS_SWAR
    if (end - p < 48 || scale < 0 || scale > 6) return 0;
    int neg = *p == '-';
    p += neg;
    uint64_t w = js_load8(p), m = js_nondigits8(w);
    const uint8_t *d;
    int64_t v;
    int n;
    if (m) { /* up to 7 digits: one word (pids, tids, ids) */
        n = __builtin_ctzll(m) >> 3;
        if (n == 0 || (*p == '0' && n > 1)) return 0;
        v = (int64_t)js_value8(w, n);
        d = p + n;
    } else {
        d = js_digits(p + 8, end);
        n = (int)(d - p);
        if (n > 18 || *p == '0' || end - d < 16) return 0;
        v = (int64_t)js_value8(w, 8);
        for (int left = n - 8; left > 0; left -= 8) {
            int k = left < 8 ? left : 8;
            v = v * js_pow10[k] + (int64_t)js_value8(js_load8(d - left), k);
        }
    }
    int frac = 0;
    if (*d == '.') {
        uint64_t f = js_load8(d + 1), fm = js_nondigits8(f);
        frac = fm ? __builtin_ctzll(fm) >> 3 : 8;
        if (frac == 0 || frac > scale || n + frac > 18) return 0;
        v = v * js_pow10[frac] + (int64_t)js_value8(f, frac);
        d += 1 + frac;
    }
    if (!js_ends_number(*d) || __builtin_mul_overflow(v, js_pow10[scale - frac], &v)) return 0;
    *value = neg ? -v : v;
    *next = d;
    return 1;
#else
    (void)p, (void)end, (void)scale, (void)value, (void)next;
    return 0;
#endif
}

/* ---- an object's members, for the paths that parse whole objects from a
 * window (the reader's fast path, merge's rewrite) ---- */

enum { JS_END = 3 }; /* js_next_member: the object ended */

/* In an object's member list (after its '{', or after a member's value):
 * moves *PP to the next member's key (JS_OK) or past the '}' (JS_END).
 * FIRST: at the first member, no ',' before it. Writers put ", " between
 * members: that case is one compare. */
static inline int js_next_member(const uint8_t **pp, const uint8_t *end, int first)
{
    const uint8_t *p = *pp;
    if (!first && end - p >= 3 && p[0] == ',' && p[1] == ' ' && p[2] == '"') {
        *pp = p + 2;
        return JS_OK;
    }
    if ((p = js_ws(p, end)) == end) return JS_MORE;
    if (*p == '}') {
        *pp = p + 1;
        return JS_END;
    }
    if (!first) {
        if (*p != ',') return JS_ERR;
        if ((p = js_ws(p + 1, end)) == end) return JS_MORE;
    }
    *pp = p;
    return JS_OK;
}

/* The key at *PP (its raw text in KEY, KLEN) and its ':'; leaves *PP at the
 * value. A key with escapes is JS_ERR: the callers' token paths decode it. */
static inline int js_member_key(const uint8_t **pp, const uint8_t *end, const uint8_t **key, size_t *klen)
{
    const uint8_t *p = *pp;
    js_error err;
    if (*p != '"') return JS_ERR;
    int escaped, rc = js_string_raw(p, end, key, klen, &p, &escaped, &err);
    if (rc) return rc;
    if (escaped) return JS_ERR;
    if (end - p >= 3 && p[0] == ':' && p[1] == ' ' && p[2] > ' ') { /* the usual ": " */
        *pp = p + 2;
        return JS_OK;
    }
    if ((p = js_ws(p, end)) == end) return JS_MORE;
    if (*p != ':') return JS_ERR;
    if ((p = js_ws(p + 1, end)) == end) return JS_MORE;
    *pp = p;
    return JS_OK;
}

/* A JSON number at P read as an integer in units of 10^-SCALE (e.g. scale 3:
 * microseconds to nanoseconds). The plain forms (-?digits(.digits)?) that
 * fit are converted while scanning; *exact is 0 when the text needs the
 * general parser (exponent, too many digits): the number is still checked. */
int js_decimal(const uint8_t *p, const uint8_t *end, int scale, int64_t *value, int *exact,
               const uint8_t **next, js_error *err);

/* Number at P. AT_EOF: nothing follows END, so a number may end there. */
int js_number(const uint8_t *p, const uint8_t *end, int at_eof, const uint8_t **next, js_error *err);

/* The end of the number at P when it has the usual short form,
 * -?digits(.digits)? with at most 7 digits on either side, else NULL (then
 * js_number decides). Shapes, strides and ids are such numbers. */
static inline const uint8_t *js_skip_plain_number(const uint8_t *p, const uint8_t *end)
{
#if JS_SWAR
    if (end - p < 32) return NULL;
    const uint8_t *q = p + (*p == '-');
    uint64_t m = js_nondigits8(js_load8(q));
    if (!m) return NULL;
    int n = __builtin_ctzll(m) >> 3;
    if (n == 0 || (*q == '0' && n > 1)) return NULL;
    q += n;
    if (*q == '.') {
        m = js_nondigits8(js_load8(q + 1));
        if (!m || !(n = __builtin_ctzll(m) >> 3)) return NULL;
        q += 1 + n;
    }
    return js_ends_number(*q) ? q : NULL;
#else
    (void)p, (void)end;
    return NULL;
#endif
}

/* Checks and skips one value of any kind at P (after whitespace), nesting
 * at most DEPTH_LEFT levels. */
int js_skip_value(const uint8_t *p, const uint8_t *end, int depth_left, const uint8_t **next, js_error *err);

/* Recently skipped containers, to skip a repeat without scanning it: trace
 * args repeat (shapes, types, launch grids come back every step). Sound
 * because a container is prefix-free: bytes equal to a value js_skip_value
 * accepted are that same value, ending at the same byte, whatever follows.
 * Not shared between threads. */
typedef struct js_skip_cache js_skip_cache;
js_skip_cache *js_skip_cache_new(void); /* NULL when out of memory: then skip uncached */
/* Sized for about JSON_BYTES of JSON: a set per 4 KiB, at least 4, the
 * full 256 from 1 MiB or when JSON_BYTES is -1 (unknown). */
js_skip_cache *js_skip_cache_new_for(int64_t json_bytes);
void js_skip_cache_free(js_skip_cache *c);
/* js_skip_value for the container at P ('[' or '{'), answered from C (may
 * be NULL) when it repeats one C holds, else scanned and remembered. */
int js_skip_container_cached(js_skip_cache *c, const uint8_t *p, const uint8_t *end, int depth_left,
                             const uint8_t **next, js_error *err);
/* js_skip_container_cached, and where the cache keeps a word for the value:
 * *TAG points at it until the cache replaces these bytes (0 when they were
 * just put in), or is NULL when the value is not cached; a caller keeps in
 * it what it made of the bytes. */
int js_skip_container_tagged(js_skip_cache *c, const uint8_t *p, const uint8_t *end, int depth_left,
                             const uint8_t **next, js_error *err, uint64_t **tag);
/* js_skip_value for any value at P (after whitespace): containers through C,
 * short numbers (ids, counts) inline. */
static inline int js_skip_value_cached(js_skip_cache *c, const uint8_t *p, const uint8_t *end, int depth_left,
                                       const uint8_t **next, js_error *err)
{
    if (*p == '[' || *p == '{') return js_skip_container_cached(c, p, end, depth_left, next, err);
    const uint8_t *q = js_skip_plain_number(p, end);
    if (q) {
        *next = q;
        return JS_OK;
    }
    return js_skip_value(p, end, depth_left, next, err);
}

/* ---- the tokenizer's window, for fast paths that parse whole objects ---- */
struct tprof_json;
/* Right after an OBJ_BEGIN token: the unread bytes [*p, *end), which start
 * just after the '{'. Valid until the next call on the tokenizer. */
void tprof_json_window(struct tprof_json *j, const uint8_t **p, const uint8_t **end);
/* Reads more input behind the window (which moves). Returns 1 when bytes
 * arrived, 0 at the end of the input or when the object already fills the
 * whole window (it is never grown for an object: parse it token by token),
 * or a negative TPROF_E* code. */
int tprof_json_window_more(struct tprof_json *j);
/* Consumes the window up to P, just past the '}' that closes the object the
 * last OBJ_BEGIN opened; the tokenizer goes on after it. */
void tprof_json_window_close_object(struct tprof_json *j, const uint8_t *p);
/* A tokenizer over one chunk of a larger document at stream offset BASE
 * (internal to the parallel reader). DEPTH > 0: the chunk starts inside the
 * event array at that depth (OUTER_OBJECT: the array is a member of the top
 * object), before an element. LENIENT_END: the chunk may end right after a
 * '[' or ',' in an array at the event depth; that end reads as one EOF token
 * (once; later calls report it as an error). CUT: the source
 * was truncated after this chunk. */
int tprof_json_open_chunk(struct tprof_json **out, const void *data, size_t len, const char *name,
                          uint64_t base, int depth, int outer_object, int lenient_end, int cut);
/* Current nesting depth. */
int tprof_json_depth(const struct tprof_json *j);
/* Between two elements of an array: when the window holds ',' and then '{'
 * (whitespace around them allowed), consumes both as tprof_json_next would
 * and returns 1 with the '{' offset: the caller has an OBJ_BEGIN token.
 * Returns 0 when anything else comes next; then call tprof_json_next. Saves
 * the general token machinery between the events of a trace. */
int tprof_json_next_object_element(struct tprof_json *j, uint64_t *offset);

#endif
