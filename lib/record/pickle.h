/* The pickle writer (internal). Build values with the stack discipline of
 * pickle itself: e.g. a dict with items is pk_dict, pk_mark, key, value, ...,
 * pk_setitems. Errors (no memory) are sticky in err. */
#ifndef TPROF_RECORD_PICKLE_H
#define TPROF_RECORD_PICKLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    unsigned char *p;
    size_t len, cap;
    int err;
} pk_buf;

void pk_begin(pk_buf *b);
void pk_end(pk_buf *b);
void pk_dict(pk_buf *b);
void pk_list(pk_buf *b);
void pk_mark(pk_buf *b);
void pk_setitems(pk_buf *b);
void pk_appends(pk_buf *b);
void pk_setitem(pk_buf *b);
void pk_append(pk_buf *b);
void pk_tuple2(pk_buf *b);
void pk_none(pk_buf *b);
void pk_bool(pk_buf *b, int v);
void pk_int(pk_buf *b, int64_t v);
void pk_str(pk_buf *b, const char *s);
void pk_str_n(pk_buf *b, const char *s, size_t n);
void pk_free(pk_buf *b);

/* Length of the valid UTF-8 sequence at S (1-4), or 0 for an invalid byte. */
int tprof__utf8_len(const unsigned char *s);

#endif
