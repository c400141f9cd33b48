/* The fast event path: parses a whole event object straight from the
 * tokenizer's window with the shared scanners, skipping the token machinery.
 * It accepts exactly what the generic path accepts; on anything unusual (an
 * error, an escaped key, the end of the input) it hands the event back to
 * the generic path, which parses it again and words any error precisely. */
#include "reader_internal.h"
#include "../json/scan.h"
#include "../util/strtab.h"

#include <string.h>

enum { FAST_SLOW = 1 };

/* Inlined into both member loops, where the compiler specialises them per
 * call site: as calls they cost ~8% of the parse (callgrind). */
#define PER_VALUE static inline __attribute__((always_inline))

/* A scalar value at P: sets type/text/len, or skips a container (*skipped).
 * A string with escapes goes to the generic path, which decodes it. */
PER_VALUE int scalar(const uint8_t *p, const uint8_t *end, int depth_left, value_type *type, const char **text,
              size_t *len, int *skipped, const uint8_t **next)
{
    js_error err;
    const uint8_t *t;
    int rc, escaped;
    *skipped = 0;
    switch (*p) {
    case '"':
        rc = js_string_raw(p, end, &t, len, next, &escaped, &err);
        if (rc) return rc;
        if (escaped) return JS_ERR;
        *type = V_STRING;
        *text = (const char *)t;
        return JS_OK;
    case '{':
    case '[':
        *skipped = 1;
        return js_skip_value(p, end, depth_left, next, &err);
    case 't':
    case 'f':
    case 'n':
        rc = js_skip_value(p, end, 1, next, &err);
        *type = V_LITERAL;
        *text = (const char *)p;
        *len = (size_t)(*next - p);
        return rc;
    default:
        rc = js_number(p, end, 0, next, &err);
        *type = V_NUMBER;
        *text = (const char *)p;
        *len = rc == JS_OK ? (size_t)(*next - p) : 0;
        return rc;
    }
}

/* A number converted while scanning: *dst = value when exact, else parsed
 * from its text by the general routine. Returns 1 if DST was set. */
PER_VALUE int number(const uint8_t **pp, const uint8_t *end, int scale, int64_t *dst, int *rc)
{
    js_error err;
    int exact;
    int64_t v;
    const uint8_t *p = *pp, *next;
    if (js_decimal_plain(p, end, scale, dst, pp)) {
        *rc = JS_OK;
        return 1;
    }
    *rc = js_decimal(p, end, scale, &v, &exact, &next, &err);
    if (*rc) return 0;
    *pp = next;
    if (exact) {
        *dst = v;
        return 1;
    }
    int ok = (scale ? tprof_json_parse_scaled((const char *)p, (size_t)(next - p), scale, &v)
                    : tprof_json_parse_int((const char *)p, (size_t)(next - p), &v)) == 0;
    if (ok) *dst = v;
    return ok;
}

static int is_number_start(uint8_t c) { return c == '-' || (c >= '0' && c <= '9'); }

#if JS_SWAR
static inline uint64_t lit(const char *s, size_t n)
{
    uint64_t w = 0;
    memcpy(&w, s, n);
    return w;
}
#define LIT_IS(w, s) (((w) & (~0ull >> (64 - 8 * (sizeof(s) - 1)))) == lit(s, sizeof(s) - 1))

/* The event keys as writers spell them, quote to colon, matched with one
 * 8-byte load (P has 8 readable bytes): the bytes are known to form a valid
 * key, so nothing else needs checking. Returns the bytes matched, 0 for any
 * other key. */
static inline size_t quick_event_key(const uint8_t *p, event_key *k)
{
    uint64_t w = js_load8(p);
    switch (p[1]) {
    case 'p':
        if (LIT_IS(w, "\"ph\":")) return *k = K_PH, 5;
        if (LIT_IS(w, "\"pid\":")) return *k = K_PID, 6;
        break;
    case 't':
        if (LIT_IS(w, "\"ts\":")) return *k = K_TS, 5;
        if (LIT_IS(w, "\"tid\":")) return *k = K_TID, 6;
        break;
    case 'i': if (LIT_IS(w, "\"id\":")) return *k = K_ID, 5; break;
    case 'c': if (LIT_IS(w, "\"cat\":")) return *k = K_CAT, 6; break;
    case 'd': if (LIT_IS(w, "\"dur\":")) return *k = K_DUR, 6; break;
    case 'n': if (LIT_IS(w, "\"name\":")) return *k = K_NAME, 7; break;
    case 'a': if (LIT_IS(w, "\"args\":")) return *k = K_ARGS, 7; break;
    }
    return 0;
}
#endif

/* The event key at *PP and the value after it. */
static inline int event_member_key(const uint8_t **pp, const uint8_t *end, event_key *k)
{
    const uint8_t *p = *pp;
#if JS_SWAR
    size_t n;
    if (end - p >= 16 && (n = quick_event_key(p, k))) {
        p += n;
        p += *p == ' ';
        if ((p = js_ws(p, end)) == end) return JS_MORE;
        *pp = p;
        return JS_OK;
    }
#endif
    const uint8_t *key;
    size_t klen;
    int rc = js_member_key(&p, end, &key, &klen);
    if (rc) return rc;
    *k = tprof_event_key((const char *)key, klen);
    *pp = p;
    return JS_OK;
}

/* The category's string id: the few categories of a trace are kept with
 * their ids, so most events need no hashing. S lies in the window, which
 * ends at END. */
static inline uint32_t cat_id(reader *r, const char *s, size_t len, const uint8_t *end)
{
    if (len >= sizeof r->cats[0].text) return tprof_reader_intern(r, s, len);
    reader_cat *c = &r->cats[(len + (uint8_t)(len ? s[0] : 0)) % TPROF_READER_CATS];
    if (c->len == len + 1 &&
        (end - (const uint8_t *)s >= 32 ? js_same_bytes((const uint8_t *)s, (const uint8_t *)c->text, len)
                                         : memcmp(c->text, s, len) == 0))
        return c->id;
    uint32_t id = tprof_reader_intern(r, s, len);
    if (id != UINT32_MAX) {
        memcpy(c->text, s, len);
        c->len = (uint8_t)(len + 1);
        c->id = id;
    }
    return id;
}

/* ---- recording an event's shape (shape.h) ---- */

/* The value of FIELD starts at P: the bytes since the last value are the
 * next step's stretch. Gives up the recording when the shape is full. */
static inline void rec_value(reader *r, const uint8_t *p, unsigned field)
{
    event_shape *s = r->rec;
    size_t n = (size_t)(p - r->rec_last);
    if (s->nsteps == SHAPE_STEPS || n > UINT8_MAX || s->nbytes + n > SHAPE_BYTES) {
        r->rec = NULL;
        return;
    }
    memcpy(s->bytes + s->nbytes, r->rec_last, n);
    s->steps[s->nsteps++] = (shape_step){ .lit_at = s->nbytes, .lit_len = (uint8_t)n, .field = (uint8_t)field };
    s->nbytes = (uint16_t)(s->nbytes + n);
    r->rec_value_at = p;
}

/* An integer written plainly from V to exactly Q: the value number() gives
 * it, whatever path that takes. */
static int plain_int(const uint8_t *v, const uint8_t *q, const uint8_t *end, int64_t *out)
{
    const uint8_t *next;
    return is_number_start(*v) && js_decimal_plain(v, end, 0, out, &next) && next == q;
}

/* The value of the step just recorded ended at Q: keeps it, as a candidate
 * constant, when all it does to the record is nothing (a value that is
 * skipped) or one integer field (see shape.h). Then the next stretch
 * starts at Q. */
static void rec_value_end(reader *r, raw_event *e, const uint8_t *q, const uint8_t *end)
{
    event_shape *s = r->rec;
    r->rec_last = q;
    if (!s) return;
    const uint8_t *v = r->rec_value_at;
    shape_step *st = &s->steps[s->nsteps - 1];
    size_t n = (size_t)(q - v);
    if (n == 0 || n > UINT8_MAX || s->nbytes + n > SHAPE_BYTES) return;
    int64_t x = 0;
    if (st->field & SHAPE_IN_ARGS) {
        arg_key k = (arg_key)(st->field & ~SHAPE_IN_ARGS);
        if (k == A_TASK_TYPE) return; /* sets a flag whatever the value */
        if (tprof_is_oparg(k) && (r->opts->keep & TPROF_KEEP_OP_ARGS)) { /* read at every event, through a memo */
            unsigned slot = (unsigned)(k - A_INPUT_DIMS);
            if (!(e->oparg_mask & (1u << slot)) || !(*v == '[' || *v == '{')) return;
            memcpy(s->bytes + s->nbytes, v, n);
            s->nbytes = (uint16_t)(s->nbytes + n);
            st->val_len = (uint8_t)n;
            st->memo = 1;
            s->ints[s->nsteps - 1] = (int64_t)((uint64_t)r->chunk_tag << 32 | e->oparg_id[slot]);
            return;
        }
        /* an integer slot takes a plain integer only (set_constant sets the
         * slot); other known keys a skipped container only (a string would
         * be kept in the record) */
        if (k != A_OTHER && (tprof_arg_slot(e, k) ? !plain_int(v, q, end, &x) : !(*v == '[' || *v == '{'))) return;
    } else {
        event_key k = (event_key)st->field;
        if (k == K_PID || k == K_TID || k == K_ID) {
            if (!plain_int(v, q, end, &x)) return;
        } else if (k != K_OTHER && !(*v == '[' || *v == '{'))
            return; /* ph, cat, name, ts and dur are read */
    }
    memcpy(s->bytes + s->nbytes, v, n);
    s->nbytes = (uint16_t)(s->nbytes + n);
    st->val_len = (uint8_t)n;
    s->ints[s->nsteps - 1] = x;
}

/* The event ended at P (past its '}'): the last stretch, and the shape is
 * ready for the next event of its key. */
static void rec_finish(reader *r, const uint8_t *p)
{
    event_shape *s = r->rec;
    size_t n = (size_t)(p - r->rec_last);
    r->rec = NULL;
    if (n > UINT8_MAX || s->nbytes + n > SHAPE_BYTES) return;
    memcpy(s->bytes + s->nbytes, r->rec_last, n);
    s->tail_at = s->nbytes;
    s->tail_len = (uint8_t)n;
    s->nbytes = (uint16_t)(s->nbytes + n);
    tprof_shape_runs(s);
    tprof_shape_done(r->shapes, s);
}

/* ---- the members of an event and of its args ---- */

enum { AT_EVENT = 0, AT_ARGS = 1, MATCH_STOP = 4 };

static int args_members(reader *r, raw_event *e, const uint8_t **pp, const uint8_t *end, int depth_left, int first);

/* The value of args member K at *PP. */
PER_VALUE int arg_value(reader *r, raw_event *e, arg_key k, const uint8_t **pp, const uint8_t *end, int depth_left)
{
    const uint8_t *p = *pp;
    const char *text;
    size_t len;
    int rc;
    if (tprof_is_oparg(k) && (*p == '[' || *p == '{') && (r->opts->keep & TPROF_KEEP_OP_ARGS)) {
        /* kept as its bytes without whitespace; an escape in them is for
           the generic path, which writes strings escaped its own way */
        js_error err;
        uint64_t *tag;
        if ((rc = js_skip_container_tagged(r->skip_cache, p, end, depth_left, pp, &err, &tag))) return rc;
        if (tag && *tag >> 32 == r->chunk_tag) { /* this reader met these bytes: their string id */
            tprof_oparg_set(e, k, (uint32_t)*tag);
            return JS_OK;
        }
        if (memchr(p, '\\', (size_t)(*pp - p))) return JS_ERR;
        if (tprof_oparg_put(r, e, k, (const char *)p, (size_t)(*pp - p))) return -1;
        if (tag) *tag = (uint64_t)r->chunk_tag << 32 | e->oparg_id[k - A_INPUT_DIMS];
        return JS_OK;
    }
    if (k == A_OTHER || tprof_is_oparg(k)) {
        js_error err;
        if ((rc = js_skip_value_cached(r->skip_cache, p, end, depth_left, pp, &err))) return rc;
        return JS_OK;
    }
    int64_t *dst = tprof_arg_slot(e, k);
    if (dst && is_number_start(*p)) {
        number(pp, end, 0, dst, &rc);
        return rc;
    }
    value_type type;
    int skipped;
    if ((rc = scalar(p, end, depth_left, &type, &text, &len, &skipped, pp))) return rc;
    if (k == A_TASK_TYPE) {
        e->task_type = 1;
        e->task_cat = 0;
        if (!skipped && type == V_STRING) {
            uint32_t id = tprof_reader_intern(r, text, len);
            if (id == UINT32_MAX) return -1;
            e->task_cat = id + 1;
        }
    } else if (skipped) {
        return JS_OK;
    } else if (tprof_is_call_list(k)) {
        if (tprof_event_set_list(r, e, k, type, text, len)) return -1;
    } else
        tprof_event_set_arg(e, k, type, text, len);
    return JS_OK;
}

/* A number as pid or tid (K): the last one written counts, and it is not
 * a name. Shared by the member loops and the constant steps. */
PER_VALUE void set_pid_tid(raw_event *e, event_key k, int64_t v)
{
    if (k == K_PID) {
        e->has_pid = 1;
        e->pid = v;
        e->flags &= (uint8_t)~TPROF_EV_PID_STR;
    } else {
        e->has_tid = 1;
        e->tid = v;
        e->flags &= (uint8_t)~TPROF_EV_TID_STR;
    }
}

/* The value of event member K at *PP (an args object: all its members). */
PER_VALUE int event_value(reader *r, raw_event *e, event_key k, const uint8_t **pp, const uint8_t *end,
                          int depth_left)
{
    const uint8_t *p = *pp;
    const char *text;
    size_t len;
    int rc;
    if (k == K_ARGS && *p == '{') {
        if (depth_left < 1) return JS_ERR;
        *pp = p + 1;
        return args_members(r, e, pp, end, depth_left - 1, 1);
    }
    if (k == K_OTHER) {
        js_error err;
        return js_skip_value_cached(r->skip_cache, p, end, depth_left, pp, &err);
    }
    if (is_number_start(*p) && k != K_PH && k != K_CAT && k != K_NAME && k != K_ARGS) {
        int64_t v = 0;
        int set = number(pp, end, k == K_TS || k == K_DUR ? 3 : 0, &v, &rc);
        if (rc) return rc;
        switch (k) {
        case K_TS: e->has_ts = 1; e->ts_bad = !set; e->ts = v; break;
        case K_DUR: e->has_dur = 1; e->dur_bad = !set; e->dur = v; break;
        case K_PID:
        case K_TID: set_pid_tid(e, k, set ? v : 0); break;
        default: if (set) e->flow_id = v; break; /* K_ID */
        }
        return JS_OK;
    }
    value_type type;
    int skipped;
    if ((rc = scalar(p, end, depth_left, &type, &text, &len, &skipped, pp))) return rc;
    if (skipped || k == K_ARGS) return JS_OK;
    /* ph, cat and name, which every event has, here; the rest in event.c */
    if (k == K_PH && type == V_STRING) {
        e->ph = len >= 1 ? text[0] : '?';
        return JS_OK;
    }
    if (k == K_CAT && type == V_STRING) { /* interned through a small cache */
        e->has_cat = 1;
        return (e->cat = cat_id(r, text, len, end)) == UINT32_MAX ? -1 : JS_OK;
    }
    if (k == K_NAME && type == V_STRING && len < r->name_cap) {
        memcpy(r->name_buf, text, len);
        r->name_len = len;
        e->has_name = 1;
        return JS_OK;
    }
    return tprof_event_set(r, e, k, type, text, len) ? -1 : JS_OK;
}

/* The members of the args object from *PP (FIRST: right after its '{';
 * else after a member's value) through its '}'. */
static int args_members(reader *r, raw_event *e, const uint8_t **pp, const uint8_t *end, int depth_left, int first)
{
    const uint8_t *p = *pp;
    int rc;
    for (;; first = 0) {
        if ((rc = js_next_member(&p, end, first)) == JS_END) break;
        if (rc) return rc;
        const uint8_t *key;
        size_t klen;
        if ((rc = js_member_key(&p, end, &key, &klen))) return rc;
        arg_key k = tprof_arg_key((const char *)key, klen);
        if (r->rec) rec_value(r, p, (unsigned)k | SHAPE_IN_ARGS);
        if ((rc = arg_value(r, e, k, &p, end, depth_left))) return rc;
        rec_value_end(r, e, p, end);
    }
    *pp = p;
    return JS_OK;
}

/* What constant step I of S sets in the record (rec_value_end chose the
 * steps: the fields here, or nothing). */
static inline void set_constant(raw_event *e, const event_shape *s, unsigned i)
{
    unsigned f = s->steps[i].field;
    int64_t x = s->ints[i];
    if (f & SHAPE_IN_ARGS) {
        int64_t *dst = tprof_arg_slot(e, (arg_key)(f & ~SHAPE_IN_ARGS));
        if (dst) *dst = x;
        return;
    }
    switch ((event_key)f) {
    case K_PID:
    case K_TID: set_pid_tid(e, (event_key)f, x); break;
    case K_ID: e->flow_id = x; break;
    default: break;
    }
}

/* The rest of an event after its name, along shape S: JS_OK with *PP past
 * the event's '}', MATCH_STOP with *PP after a value at *LEVEL where the
 * bytes differ, or a value's error. */
static int follow_shape(reader *r, raw_event *e, event_shape *s, const uint8_t **pp, const uint8_t *end,
                        int depth_left, int *level)
{
    const uint8_t *p = *pp;
    int rc;
    *level = AT_EVENT;
    for (unsigned i = 0; i < s->nsteps;) {
        const shape_step *st = &s->steps[i];
        if (st->run && end - p >= st->run_len + 64 && js_same_bytes(p, s->bytes + st->lit_at, st->run_len + 1u)) {
            /* a run of constant values, as recorded, and the byte after the
             * last (from the next stretch): where it is the same, the value
             * ends in the same place ("7" would also begin "71") */
            p += st->run_len;
            for (unsigned last = i + st->run; i < last; i++) set_constant(e, s, i);
            *level = s->steps[i - 1].field & SHAPE_IN_ARGS ? AT_ARGS : AT_EVENT;
            continue;
        }
        if (end - p < st->lit_len + 64) return JS_MORE; /* read on, then the event again */
        if (!js_same_bytes(p, s->bytes + st->lit_at, st->lit_len)) {
            *pp = p;
            return MATCH_STOP;
        }
        p += st->lit_len;
        const uint8_t *v = p;
        if (st->memo) { /* an op arg: the last one read here, when the same bytes (see shape.h) */
            arg_key k = (arg_key)(st->field & ~SHAPE_IN_ARGS);
            const uint8_t *kept = s->bytes + st->lit_at + st->lit_len;
            uint64_t memo = (uint64_t)s->ints[i];
            *level = AT_ARGS;
            if ((uint32_t)(memo >> 32) == r->chunk_tag && end - p >= st->val_len + 16 && js_same_bytes(p, kept, st->val_len)) {
                tprof_oparg_set(e, k, (uint32_t)memo);
                p += st->val_len;
                i++;
                continue;
            }
            if ((rc = arg_value(r, e, k, &p, end, depth_left - 1))) return rc;
            unsigned slot = (unsigned)(k - A_INPUT_DIMS);
            if ((size_t)(p - v) == st->val_len && (e->oparg_mask & (1u << slot))) { /* the memo is this one now */
                memcpy((uint8_t *)kept, v, st->val_len);
                s->ints[i] = (int64_t)((uint64_t)r->chunk_tag << 32 | e->oparg_id[slot]);
            }
            i++;
            continue;
        }
        if (st->field & SHAPE_IN_ARGS) {
            *level = AT_ARGS;
            rc = arg_value(r, e, (arg_key)(st->field & ~SHAPE_IN_ARGS), &p, end, depth_left - 1);
        } else {
            *level = AT_EVENT;
            rc = event_value(r, e, (event_key)st->field, &p, end, depth_left);
        }
        if (rc) return rc;
        if (st->run && ((size_t)(p - v) != st->val_len || end - p < 16 ||
                        !js_same_bytes(v, s->bytes + st->lit_at + st->lit_len, st->val_len))) {
            s->steps[i].val_len = 0; /* this value varies: read it from now on */
            tprof_shape_runs(s);
        }
        i++;
    }
    if (end - p < s->tail_len + 64) return JS_MORE;
    if (!js_same_bytes(p, s->bytes + s->tail_at, s->tail_len)) {
        *pp = p;
        return MATCH_STOP;
    }
    *pp = p + s->tail_len;
    return JS_OK;
}

/* The key of the N bytes of an event up to its name: its first and last 32
 * bytes and its length, which tell ops apart (long kernel names differ at
 * their ends) at a fixed cost. Within the parser state it is taken in, it
 * only picks the shape to try: the bytes decide whether it fits. The state
 * is in the key's low bit: odd after a value (these keys), even at an
 * event's start (event_body), so that a shape recorded in one state can
 * never be followed in the other, however the hashes fall. */
static inline uint64_t shape_key(const uint8_t *p, size_t n)
{
    if (n < 32) { /* a flow arrow's 12 bytes, a short head */
        uint64_t a = 0, b = 0;
        memcpy(&a, p, n < 8 ? n : 8);
        if (n > 8) memcpy(&b, p + 8, n - 8 < 8 ? n - 8 : 8);
        uint64_t h = (a * 0xC2B2AE3D27D4EB4Full ^ b * 0x165667B19E3779F9ull ^ n) * 0xFF51AFD7ED558CCDull;
        if (n > 16) h ^= tprof_hash_bytes(p + 16, n - 16);
        return (h ^ h >> 29) | 1;
    }
    uint64_t w[8], h = n * 0x9E3779B97F4A7C15ull;
    memcpy(w, p, 32);
    memcpy(w + 4, p + n - 32, 32);
    for (int i = 0; i < 4; i++)
        h = (h ^ w[i] * 0xC2B2AE3D27D4EB4Full ^ w[i + 4] * 0x165667B19E3779F9ull) * 0xFF51AFD7ED558CCDull;
    return (h ^ h >> 29) | 1;
}

/* The key of an op's second layout: some ops write their args in two
 * orders (a forward op with its sequence number, the same op without).
 * Bits 0 and 1, the parser state, stay as they are. */
#define SECOND_LAYOUT 0x9E3779B97F4A7C14ull

/* The key of an event read from its start (HEAD: its first key, which
 * lies 64 bytes or more before END): its bytes through its first value
 * when that is a string (a ph, or a metadata event's name: what the event
 * is), else through 12 bytes from HEAD (not an id). As any key, it only
 * picks the shape to try. The low bits say: at an event's start. */
static uint64_t start_key(const uint8_t *start, const uint8_t *head, const uint8_t *end)
{
    size_t n = (size_t)(head - start) + 12;
    const uint8_t *q = memchr(head + 1, '"', 32); /* the key's end */
    if (q && q[1] == ':') {
        const uint8_t *v = q + 2 + (q[2] == ' ');
        size_t room = (size_t)(end - v - 1) < 128 ? (size_t)(end - v - 1) : 128;
        const uint8_t *w = *v == '"' ? memchr(v + 1, '"', room) : NULL;
        if (w) n = (size_t)(w + 1 - start);
    }
    return (shape_key(start, n) & ~3ull) | 2;
}

/* At *PP (the event's start, or after a value), with KEY from the bytes
 * before: follow one of the two shapes recorded for KEY, or record the
 * event as one. Returns JS_OK with the event read (*pp past its '}'),
 * MATCH_STOP to go on with the member loop from *PP, or an error. */
static int use_shape(reader *r, raw_event *e, uint64_t key, const uint8_t **pp, const uint8_t *end, int depth_left)
{
    const uint8_t *from = *pp;
    for (int second = 0; second < 2; second++) {
        uint64_t k = second ? key ^ SECOND_LAYOUT : key;
        event_shape *s = tprof_shape_find(r->shapes, k);
        if (!s || s->depth_left != depth_left) {
            /* record this layout, reading the event again from FROM (the
             * values a first try read are read again: same bytes, same
             * record) */
            *pp = from;
            r->rec = tprof_shape_begin(r->shapes, k);
            r->rec->depth_left = depth_left;
            r->rec_last = from;
            return MATCH_STOP;
        }
        *pp = from;
        int level, rc = follow_shape(r, e, s, pp, end, depth_left, &level);
        if (rc != MATCH_STOP) return rc;
        if (second) { /* a third layout: the second is recorded again */
            tprof_shape_drop(r->shapes, s);
            if (level == AT_ARGS && (rc = args_members(r, e, pp, end, depth_left - 1, 0))) return rc;
        }
    }
    return MATCH_STOP;
}

/* Kineto starts every event with "ph": "X", "cat": : its bytes at P, with
 * a ph of one printable ASCII character (a valid string), are checked with
 * two compares instead of read key by key (whose dispatch on the key the
 * CPU mispredicted: ~5% of the time in samples). */
static inline int kineto_head(const uint8_t *p)
{
    return memcmp(p, "\"ph\": \"", 7) == 0 && p[7] > ' ' && p[7] < 0x7F && p[7] != '"' && p[7] != '\\' &&
           memcmp(p + 8, "\", \"cat\": ", 10) == 0;
}

/* The members of an event from P, right after its '{'. Events are read
 * along shapes: those that start as Kineto writes them from after their
 * name (or their cat when no name follows), keyed by the bytes so far,
 * which name the op; the others (flow arrows, metadata, ...) from their
 * start (start_key). */
static int event_body(reader *r, raw_event *e, const uint8_t **pp, const uint8_t *end, int depth_left)
{
    const uint8_t *p = *pp, *start = p;
    int rc, first = 1;
    const uint8_t *head = p < end && *p == '"' ? p : js_ws(p, end); /* older Kineto: a line per few members */
    if (end - head >= 64 && kineto_head(head)) {
        e->ph = (char)head[7];
        p = head + 18;
        if ((rc = event_value(r, e, K_CAT, &p, end, depth_left))) return rc;
        first = 0;
        if (end - p >= 16 && memcmp(p, ", \"name\": ", 10) == 0) {
            p += 10;
            if ((rc = event_value(r, e, K_NAME, &p, end, depth_left))) return rc;
        }
        if (r->shapes) {
            rc = use_shape(r, e, shape_key(start, (size_t)(p - start)), &p, end, depth_left);
            if (rc != MATCH_STOP) goto done_rc;
        }
    } else if (end - head >= 64 && r->shapes) {
        rc = use_shape(r, e, start_key(start, head, end), &p, end, depth_left);
        if (rc != MATCH_STOP) goto done_rc;
        first = p == start;
    }
    for (;; first = 0) {
        if ((rc = js_next_member(&p, end, first)) == JS_END) break;
        if (rc) return rc;
        event_key k;
        if ((rc = event_member_key(&p, end, &k))) return rc;
        int rec = r->rec && !(k == K_ARGS && *p == '{'); /* an args object records its own members */
        if (rec) rec_value(r, p, (unsigned)k);
        if ((rc = event_value(r, e, k, &p, end, depth_left))) return rc;
        if (rec) rec_value_end(r, e, p, end);
    }
    if (r->rec) rec_finish(r, p);
    *pp = p;
    return JS_OK;
done_rc:
    if (rc == JS_OK) *pp = p;
    return rc;
}

int tprof_parse_event_fast(reader *r, raw_event *e)
{
    int depth_left = TPROF_JSON_MAX_DEPTH - tprof_json_depth(r->j);
    for (;;) {
        const uint8_t *p, *end;
        tprof_json_window(r->j, &p, &end);
        tprof_raw_event_init(r, e);
        r->rec = NULL;
        int rc = event_body(r, e, &p, end, depth_left);
        r->rec = NULL;
        if (rc == JS_OK) {
            tprof_json_window_close_object(r->j, p);
            return 0;
        }
        if (rc < 0) return TPROF_ENOMEM;
        if (rc == JS_ERR) return FAST_SLOW;
        /* the window ends inside the event: read more and start it again */
        int m = tprof_json_window_more(r->j);
        if (m < 0) return m;
        if (m == 0) return FAST_SLOW;
    }
}
