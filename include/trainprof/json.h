/* Streaming JSON tokenizer.
 *
 * Pulls tokens from a byte source through a bounded, refillable window: memory
 * depends on the longest single token, never on the document size. It checks
 * the whole grammar (RFC 8259): structure, string escapes including \uXXXX
 * surrogate pairs, UTF-8 validity, number syntax. A token's text stays valid
 * until the next call on the same tokenizer.
 *
 * Ownership: the tokenizer does not own the source. */
#ifndef TRAINPROF_JSON_H
#define TRAINPROF_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TPROF_JSON_EOF = 0,
    TPROF_JSON_OBJ_BEGIN,
    TPROF_JSON_OBJ_END,
    TPROF_JSON_ARR_BEGIN,
    TPROF_JSON_ARR_END,
    TPROF_JSON_KEY,    /* an object key; text holds the decoded key */
    TPROF_JSON_STRING, /* text holds the decoded string (UTF-8) */
    TPROF_JSON_NUMBER, /* text holds the number exactly as written */
    TPROF_JSON_TRUE,
    TPROF_JSON_FALSE,
    TPROF_JSON_NULL,
} tprof_json_type;

typedef struct {
    tprof_json_type type;
    const char *text; /* KEY, STRING, NUMBER: not NUL-terminated */
    size_t len;
    uint64_t offset;  /* byte offset of the token's first byte in the stream */
    int depth;        /* nesting depth after the token */
} tprof_json_token;

/* Reads up to CAP bytes; returns count, 0 at end, negative TPROF_E* on error. */
typedef ssize_t (*tprof_json_read_fn)(void *ctx, void *buf, size_t cap);

typedef struct tprof_json tprof_json;

#define TPROF_JSON_MAX_DEPTH 512
#define TPROF_JSON_MAX_TOKEN (256u << 20) /* longest string or number: 256 MiB */

int tprof_json_open(tprof_json **out, tprof_json_read_fn read, void *ctx, const char *name);
/* Same with a first window of WINDOW bytes (rounded up to a power of two,
 * from 64 B to the 1 MiB tprof_json_open uses; 0: 1 MiB), for an input
 * known to be small; the window still grows to hold a longer token. */
int tprof_json_open_sized(tprof_json **out, tprof_json_read_fn read, void *ctx, const char *name, size_t window);
/* A tokenizer over a complete in-memory document (not copied). */
int tprof_json_open_mem(tprof_json **out, const void *data, size_t len, const char *name);
void tprof_json_close(tprof_json *j);

/* Next token. Returns 0 (with tok->type set; TPROF_JSON_EOF after the one
 * top-level value) or a negative TPROF_E* code; then tprof_json_errmsg() says
 * where and what was expected. TPROF_ETRUNC: the input ended inside the
 * document. After an error every further call returns the same error. */
int tprof_json_next(tprof_json *j, tprof_json_token *tok);

/* Skips the value that follows (after a KEY, or inside an array); when the
 * last token was OBJ_BEGIN/ARR_BEGIN of that value, call skip_container
 * instead. Both still validate every byte. */
int tprof_json_skip_value(tprof_json *j);
int tprof_json_skip_container(tprof_json *j);

const char *tprof_json_errmsg(const tprof_json *j);
uint64_t tprof_json_offset(const tprof_json *j); /* bytes consumed so far */

/* Number helpers: parse the exact text of a JSON number. */
/* Integer value; fractions are refused. TPROF_ELIMIT when out of range. */
int tprof_json_parse_int(const char *s, size_t len, int64_t *out);
/* A decimal quantity in units U scaled by 10^scale, rounded to nearest
 * (ties away from zero), from the digits, never through double: with
 * scale=3, "1694128201428473.125" (microseconds) becomes nanoseconds.
 * Accepts exponents. TPROF_ELIMIT when out of int64 range. */
int tprof_json_parse_scaled(const char *s, size_t len, int scale, int64_t *out);
double tprof_json_parse_double(const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
