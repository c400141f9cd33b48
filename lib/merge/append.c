/* A trace file copied with events added at the end of its traceEvents
 * (critical-path --overlay). Every byte of the input is kept as it was; the
 * tokenizer only finds where traceEvents ends. The bytes it has read pass
 * through a holding buffer and go out once they lie before the point it has
 * reached, so memory stays at about the tokenizer's window whatever the
 * size of the input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/json.h"
#include "trainprof/merge.h"
#include "trainprof/sink.h"
#include "trainprof/source.h"
#include "../util/grow.h"

typedef struct {
    tprof_source *src;
    tprof_sink *out;
    uint8_t *held; /* input bytes not yet written: [held_at, held_at + nheld) */
    size_t nheld, cap;
    uint64_t held_at;
    uint64_t safe; /* every byte before it is final: written as it is */
    int rc;        /* a write error: reading stops */
} copier;

/* Writes the held bytes before UPTO. */
static int release(copier *c, uint64_t upto)
{
    if (upto <= c->held_at) return 0;
    size_t n = (size_t)(upto - c->held_at);
    if (n > c->nheld) n = c->nheld;
    int rc = tprof_sink_write(c->out, c->held, n);
    memmove(c->held, c->held + n, c->nheld - n);
    c->nheld -= n;
    c->held_at += n;
    return rc;
}

/* The tokenizer's reader: each chunk is held until it is known to lie
 * before the end of traceEvents. */
static ssize_t read_held(void *ctx, void *buf, size_t cap)
{
    copier *c = ctx;
    if (c->rc) return c->rc;
    if ((c->rc = release(c, c->safe))) return c->rc;
    ssize_t n = tprof_source_read(c->src, buf, cap);
    if (n <= 0) return n;
    if (tprof_grow_items((void **)&c->held, &c->cap, c->nheld + (size_t)n, 1)) return c->rc = TPROF_ENOMEM;
    memcpy(c->held + c->nheld, buf, (size_t)n);
    c->nheld += (size_t)n;
    return n;
}

/* Moves the tokenizer to the end of the traceEvents array: *END is the
 * offset of its ']', *LAST_END that after its last complete event (to cut a
 * truncated input at), *ANY whether it has events, *OBJECT whether the
 * document is an object ({"traceEvents": [...]}) rather than the array. */
static int find_events_end(tprof_json *j, copier *c, uint64_t *end, uint64_t *last_end, int *any, int *object)
{
    tprof_json_token tok;
    int rc = tprof_json_next(j, &tok);
    if (rc) return rc;
    *object = tok.type == TPROF_JSON_OBJ_BEGIN;
    *last_end = 0; /* until the array begins: nothing to cut at */
    if (*object) {
        for (;;) {
            if ((rc = tprof_json_next(j, &tok))) return rc;
            if (tok.type != TPROF_JSON_KEY) return TPROF_ENOTTRACE; /* the object ended: no traceEvents */
            int events = tok.len == 11 && !memcmp(tok.text, "traceEvents", 11);
            if (!events) {
                if ((rc = tprof_json_skip_value(j))) return rc;
                c->safe = tprof_json_offset(j);
                continue;
            }
            if ((rc = tprof_json_next(j, &tok))) return rc;
            if (tok.type != TPROF_JSON_ARR_BEGIN) return TPROF_ENOTTRACE;
            *last_end = tok.offset + 1;
            break;
        }
    } else if (tok.type == TPROF_JSON_ARR_BEGIN) {
        *last_end = tok.offset + 1;
    } else {
        return TPROF_ENOTTRACE;
    }
    c->safe = *last_end;
    *any = 0;
    for (;;) {
        if ((rc = tprof_json_next(j, &tok))) return rc;
        if (tok.type == TPROF_JSON_ARR_END) {
            *end = tok.offset;
            return 0;
        }
        if (tok.type == TPROF_JSON_OBJ_BEGIN || tok.type == TPROF_JSON_ARR_BEGIN) rc = tprof_json_skip_container(j);
        if (rc) return rc;
        *any = 1;
        *last_end = c->safe = tprof_json_offset(j);
    }
}

int tprof_trace_copy_with_events(const char *in_path, const char *out_path, const char *events, size_t len,
                                 int *cut, char *errbuf, size_t errlen)
{
    *cut = 0;
    if (errlen) *errbuf = 0;
    copier c = { 0 };
    char err[512] = "";
    int rc = tprof_source_open(&c.src, in_path, err, sizeof err);
    if (rc) {
        snprintf(errbuf, errlen, "%s", err);
        return rc;
    }
    if ((rc = tprof_sink_open(&c.out, out_path, tprof_compression_for_path(out_path), 0, err, sizeof err))) {
        snprintf(errbuf, errlen, "%s", err);
        tprof_source_close(c.src);
        return rc;
    }
    tprof_sink_set_threads(c.out, 2); /* gzip on a second core; the bytes do not depend on it */
    tprof_json *j = NULL;
    uint64_t end = 0, last_end = 0;
    int any = 0, object = 1;
    rc = tprof_json_open(&j, read_held, &c, in_path);
    if (!rc) rc = find_events_end(j, &c, &end, &last_end, &any, &object);
    if (rc == TPROF_ETRUNC && !c.rc && last_end > 0) {
        /* the input stops inside traceEvents: keep the events read whole, close the document */
        *cut = 1;
        end = last_end;
        rc = 0;
    } else if (rc == TPROF_ENOTTRACE) {
        snprintf(errbuf, errlen, "%s: no traceEvents array to add the critical path to", in_path);
    } else if (rc) {
        snprintf(errbuf, errlen, "%s", c.rc ? tprof_sink_errmsg(c.out) : j ? tprof_json_errmsg(j) : tprof_strerror(rc));
    }
    if (!rc) rc = release(&c, end);
    if (!rc && len) rc = tprof_sink_write(c.out, any ? ",\n" : "\n", any ? 2 : 1);
    if (!rc && len) rc = tprof_sink_write(c.out, events, len);
    if (!rc && *cut) rc = tprof_sink_write(c.out, object ? "\n]}\n" : "\n]\n", object ? 4 : 3);
    if (!rc && !*cut) {
        /* the rest, as it is: what the tokenizer holds, then the source */
        rc = tprof_sink_write(c.out, c.held, c.nheld);
        uint8_t buf[1 << 16];
        ssize_t n;
        while (!rc && (n = tprof_source_read(c.src, buf, sizeof buf)) != 0) {
            if (n < 0) { /* cut after traceEvents: what follows it is lost, the events are whole */
                *cut = 1;
                break;
            }
            rc = tprof_sink_write(c.out, buf, (size_t)n);
        }
    }
    if (rc && !*errbuf) snprintf(errbuf, errlen, "%s", tprof_sink_errmsg(c.out));
    tprof_json_close(j);
    tprof_source_close(c.src);
    free(c.held);
    if (rc) {
        tprof_sink_abort(c.out);
        return rc;
    }
    rc = tprof_sink_commit(c.out, errbuf, errlen);
    return rc;
}
