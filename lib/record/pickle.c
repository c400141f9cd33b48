/* A small pickle writer (protocol 2): only the opcodes a PyTorch memory
 * snapshot needs (dicts, lists, tuples, str, int, bool, None). Python's
 * pickle.load reads it; nothing in it names a class, so loading it runs
 * nothing. */
#include <stdlib.h>
#include <string.h>

#include "pickle.h"
#include "../json/scan.h"

static void put(pk_buf *b, const void *p, size_t n)
{
    if (b->err) return;
    if (b->len + n > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->len + n) c *= 2;
        unsigned char *q = realloc(b->p, c);
        if (!q) {
            b->err = 1;
            return;
        }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void op(pk_buf *b, unsigned char c) { put(b, &c, 1); }

void pk_begin(pk_buf *b)
{
    op(b, 0x80); /* PROTO */
    op(b, 2);
}
void pk_end(pk_buf *b) { op(b, '.'); } /* STOP */
void pk_dict(pk_buf *b) { op(b, '}'); }  /* EMPTY_DICT */
void pk_list(pk_buf *b) { op(b, ']'); }  /* EMPTY_LIST */
void pk_mark(pk_buf *b) { op(b, '('); }  /* MARK */
void pk_setitems(pk_buf *b) { op(b, 'u'); }
void pk_appends(pk_buf *b) { op(b, 'e'); }
void pk_setitem(pk_buf *b) { op(b, 's'); }
void pk_append(pk_buf *b) { op(b, 'a'); }
void pk_tuple2(pk_buf *b) { op(b, 0x86); }
void pk_none(pk_buf *b) { op(b, 'N'); }
void pk_bool(pk_buf *b, int v) { op(b, v ? 0x88 : 0x89); } /* NEWTRUE / NEWFALSE */

void pk_int(pk_buf *b, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) { /* BININT: 4 bytes little-endian */
        uint32_t u = (uint32_t)(int32_t)v;
        unsigned char x[5] = { 'J', (unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16),
                               (unsigned char)(u >> 24) };
        put(b, x, 5);
        return;
    }
    /* LONG1: 8 bytes two's complement little-endian (enough for any int64) */
    uint64_t u = (uint64_t)v;
    unsigned char x[10] = { 0x8a, 8 };
    for (int i = 0; i < 8; i++) x[2 + i] = (unsigned char)(u >> (8 * i));
    put(b, x, 10);
}

/* Length of the valid UTF-8 sequence at S, or 0 (then the byte is replaced
 * by U+FFFD: names come from the program, and traces and pickles must be
 * valid UTF-8). S is NUL-terminated or long enough. */
int tprof__utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80) return 1;
    /* the JSON scanner's check; it stops at the first bad byte, so a NUL ends it */
    int n = js_utf8_len(s, s + 4);
    return n > 0 ? n : 0;
}

void pk_str_n(pk_buf *b, const char *s, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n;) {
        int k = s[i] ? tprof__utf8_len((const unsigned char *)s + i) : 1;
        if (!k || i + (size_t)k > n) {
            bad++;
            k = 1;
        }
        i += (size_t)k;
    }
    if (bad) { /* Python would refuse the whole pickle: replace the bad bytes */
        char *t = malloc(n + 2 * bad + 1);
        if (!t) {
            b->err = 1;
            return;
        }
        size_t m = 0;
        for (size_t i = 0; i < n;) {
            int k = s[i] ? tprof__utf8_len((const unsigned char *)s + i) : 1;
            if (!k || i + (size_t)k > n) {
                memcpy(t + m, "\xEF\xBF\xBD", 3);
                m += 3;
                i++;
            } else {
                memcpy(t + m, s + i, (size_t)k);
                m += (size_t)k;
                i += (size_t)k;
            }
        }
        t[m] = 0; /* the validator may look one sequence ahead */
        pk_str_n(b, t, m);
        free(t);
        return;
    }
    /* BINUNICODE: 4-byte length, UTF-8 bytes */
    unsigned char x[5] = { 'X', (unsigned char)n, (unsigned char)(n >> 8), (unsigned char)(n >> 16),
                           (unsigned char)(n >> 24) };
    put(b, x, 5);
    put(b, s, n);
}

void pk_str(pk_buf *b, const char *s) { pk_str_n(b, s, strlen(s)); }

void pk_free(pk_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}
