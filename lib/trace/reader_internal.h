/* Reader state and per-event parsing shared by the document reader, the
 * generic (token) event path and the fast (window) event path. Internal. */
#ifndef TPROF_READER_INTERNAL_H
#define TPROF_READER_INTERNAL_H

#include "trace_internal.h"
#include "trainprof/json.h"

typedef struct {
    tprof_trace *t;
    tprof_json *j;
    tprof_source *src;
    const tprof_read_opts *opts;
    uint64_t next_progress;
    char *name_buf; /* the current event's name, copied: interned only if kept */
    size_t name_len, name_cap;
    uint64_t fast_events, slow_events; /* which path parsed each event */
} reader;

/* One event's fields as read, before it becomes a record. */
typedef struct {
    char ph;
    int has_cat, has_name, has_ts, has_dur, has_pid, has_tid, task_type, ts_bad;
    uint32_t cat;
    int64_t ts, dur;
    int64_t pid, tid;
    uint8_t flags;
    int64_t device, stream, correlation, external_id, flow_id, bytes;
} raw_event;

#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"

/* Grows an array to hold NEED elements (doubling), zeroing the new part. */
static inline int tprof_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q) return TPROF_ENOMEM;
    memset((char *)q + *cap * elem, 0, (n - *cap) * elem);
    *p = q;
    *cap = n;
    return 0;
}

static inline uint32_t tprof_reader_intern(reader *r, const char *s, size_t len)
{
    return tprof_strtab_intern(&r->t->strs, s, len);
}

/* Counts a data problem, remembering the first offset. */
static inline void warn_at(reader *r, uint64_t *counter, uint64_t off)
{
    if (r->t->meta.warn.first_offset == UINT64_MAX) r->t->meta.warn.first_offset = off;
    (*counter)++;
}

/* The event keys and args keys trainprof reads; everything else is skipped. */
typedef enum { K_OTHER = 0, K_PH, K_CAT, K_NAME, K_TS, K_DUR, K_PID, K_TID, K_ID, K_ARGS } event_key;
typedef enum { A_OTHER = 0, A_BYTES, A_DEVICE, A_STREAM, A_TASK_TYPE, A_CORRELATION, A_EXTERNAL_ID } arg_key;
/* A scalar value as written: a number, a string (decoded), or true/false/null. */
typedef enum { V_NUMBER, V_STRING, V_LITERAL } value_type;

event_key tprof_event_key(const char *k, size_t n);
arg_key tprof_arg_key(const char *k, size_t n);
void tprof_raw_event_init(reader *r, raw_event *e);
/* Stores a scalar value of KEY into E; returns 0 or TPROF_ENOMEM. */
int tprof_event_set(reader *r, raw_event *e, event_key key, value_type type, const char *text, size_t len);
void tprof_event_set_arg(raw_event *e, arg_key key, value_type type, const char *text, size_t len);

/* The event whose '{' was the last token: fast path first, generic on
 * anything unusual. Then counted, checked and stored. */
int tprof_parse_event(reader *r, uint64_t offset);
/* Fast path: 0 when parsed (tokenizer moved past the '}'), 1 when the
 * generic path must parse it (from the same position), or an error. */
int tprof_parse_event_fast(reader *r, raw_event *e);

#endif
