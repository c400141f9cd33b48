/* Helpers shared by the unit tests (header-only, all static inline). */
#ifndef TPROF_UNIT_H
#define TPROF_UNIT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "trainprof/error.h"

/* A growable byte buffer. */
typedef struct {
    uint8_t *p;
    size_t len, cap;
} ubuf;

static inline void ubuf_add(ubuf *b, const void *data, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->len + n + 1) c *= 2;
        uint8_t *q = realloc(b->p, c);
        if (!q) abort();
        b->p = q;
        b->cap = c;
    }
    if (n) memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = 0;
}

static inline void ubuf_str(ubuf *b, const char *s) { ubuf_add(b, s, strlen(s)); }

static inline void ubuf_printf(ubuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) abort();
    if ((size_t)n >= sizeof tmp) abort();
    ubuf_add(b, tmp, (size_t)n);
}

static inline void ubuf_free(ubuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* A read callback over memory that hands out at most CHUNK bytes per call;
 * at the end it returns 0, or END_CODE when that is set (e.g. TPROF_ETRUNC). */
typedef struct {
    const uint8_t *data;
    size_t len, pos, chunk;
    int end_code;
    int calls;
} chunk_reader;

static inline ssize_t chunk_read(void *ctx, void *buf, size_t cap)
{
    chunk_reader *r = ctx;
    r->calls++;
    size_t n = r->len - r->pos;
    if (n == 0) return r->end_code;
    if (r->chunk && n > r->chunk) n = r->chunk;
    if (n > cap) n = cap;
    memcpy(buf, r->data + r->pos, n);
    r->pos += n;
    return (ssize_t)n;
}

/* The number after the first "byte " in MSG, or -1. */
static inline long long msg_byte(const char *msg)
{
    const char *p = strstr(msg, "byte ");
    if (!p) return -1;
    p += 5;
    if (*p < '0' || *p > '9') return -1;
    return strtoll(p, NULL, 10);
}

/* Writes DATA to a new file in a fresh temp directory; returns its malloc'd
 * path. NAME is the file's base name. */
static inline char *write_temp(const char *name, const void *data, size_t len)
{
    char dir[] = "/tmp/tprof_unit_XXXXXX";
    if (!mkdtemp(dir)) abort();
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    if (!path) abort();
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (len && fwrite(data, 1, len, f) != len) abort();
    if (fclose(f)) abort();
    return path;
}

/* Removes a file made by write_temp and its directory; frees PATH. */
static inline void remove_temp(char *path)
{
    unlink(path);
    char *slash = strrchr(path, '/');
    if (slash) {
        *slash = 0;
        rmdir(path);
    }
    free(path);
}

/* A deterministic pseudo-random generator (xorshift64*). */
static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

#ifdef TRAINPROF_RESULT_H
/* R written in the text form and read back with D: the copy, or NULL (the
 * reason in ERR) when the write or the read failed. */
static inline tprof_result *unit_result_reread(const tprof_result *r, const tprof_result_desc *d, char *err,
                                               size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    int rc = tprof_result_write(r, f);
    fclose(f);
    tprof_result *back = NULL;
    if (!rc && (f = fmemopen(buf, len, "r"))) {
        if (tprof_result_read(&back, d, f, err, errlen)) back = NULL;
        fclose(f);
    }
    free(buf);
    return back;
}
#endif

#endif
