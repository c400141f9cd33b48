/* The fast event path: parses a whole event object straight from the
 * tokenizer's window with the shared scanners, skipping the token machinery.
 * It accepts exactly what the generic path accepts; on anything unusual (an
 * error, an escaped key, the end of the input) it hands the event back to
 * the generic path, which parses it again and words any error precisely. */
#include "reader_internal.h"
#include "../json/scan.h"

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

/* The members of an object after its '{': the body runs once per member
 * with P at its key. A key with escapes goes to the generic path. */
#define FOR_MEMBERS(p, end)                                                        \
    for (int first_ = 1, nk_;; first_ = 0)                                         \
        if ((nk_ = js_next_member(&p, end, first_)) == JS_END) break;              \
        else if (nk_) return nk_;                                                  \
        else

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
 * their ids, so most events need no hashing. */
static inline uint32_t cat_id(reader *r, const char *s, size_t len)
{
    if (len >= sizeof r->cats[0].text) return tprof_reader_intern(r, s, len);
    reader_cat *c = &r->cats[(len + (uint8_t)(len ? s[0] : 0)) % TPROF_READER_CATS];
    if (c->len == len + 1 && memcmp(c->text, s, len) == 0) return c->id;
    uint32_t id = tprof_reader_intern(r, s, len);
    if (id != UINT32_MAX) {
        memcpy(c->text, s, len);
        c->len = (uint8_t)(len + 1);
        c->id = id;
    }
    return id;
}

static int args_body(reader *r, raw_event *e, const uint8_t **pp, const uint8_t *end, int depth_left)
{
    const uint8_t *p = *pp;
    int rc;
    FOR_MEMBERS(p, end)
    {
        const uint8_t *key;
        const char *text;
        size_t klen, len;
        if ((rc = js_member_key(&p, end, &key, &klen))) return rc;
        arg_key k = tprof_arg_key((const char *)key, klen);
        if (k == A_OTHER) {
            js_error err;
            if ((rc = js_skip_value_cached(r->skip_cache, p, end, depth_left, &p, &err))) return rc;
            continue;
        }
        int64_t *dst = tprof_arg_slot(e, k);
        if (dst && is_number_start(*p)) {
            number(&p, end, 0, dst, &rc);
            if (rc) return rc;
            continue;
        }
        value_type type;
        int skipped;
        if ((rc = scalar(p, end, depth_left, &type, &text, &len, &skipped, &p))) return rc;
        if (k == A_TASK_TYPE) e->task_type = 1;
        else if (!skipped) tprof_event_set_arg(e, k, type, text, len);
    }
    *pp = p;
    return JS_OK;
}

static int event_body(reader *r, raw_event *e, const uint8_t **pp, const uint8_t *end, int depth_left)
{
    const uint8_t *p = *pp;
    int rc;
    FOR_MEMBERS(p, end)
    {
        const char *text;
        size_t len;
        event_key k;
        if ((rc = event_member_key(&p, end, &k))) return rc;
        if (k == K_ARGS && *p == '{') {
            if (depth_left < 1) return JS_ERR;
            p++;
            if ((rc = args_body(r, e, &p, end, depth_left - 1))) return rc;
            continue;
        }
        if (k == K_OTHER) {
            js_error err;
            if ((rc = js_skip_value_cached(r->skip_cache, p, end, depth_left, &p, &err))) return rc;
            continue;
        }
        if (is_number_start(*p) && k != K_PH && k != K_CAT && k != K_NAME && k != K_ARGS) {
            int64_t v = 0;
            int set = number(&p, end, k == K_TS || k == K_DUR ? 3 : 0, &v, &rc);
            if (rc) return rc;
            switch (k) {
            case K_TS: e->has_ts = 1; e->ts_bad = !set; e->ts = v; break;
            case K_DUR: if (set) { e->has_dur = 1; e->dur = v; } break;
            case K_PID: e->has_pid = 1; e->pid = set ? v : 0; break;
            case K_TID: e->has_tid = 1; e->tid = set ? v : 0; break;
            default: if (set) e->flow_id = v; break; /* K_ID */
            }
            continue;
        }
        value_type type;
        int skipped;
        if ((rc = scalar(p, end, depth_left, &type, &text, &len, &skipped, &p))) return rc;
        if (skipped || k == K_ARGS) continue;
        if (k == K_CAT && type == V_STRING) { /* every event has one: interned through a small cache */
            e->has_cat = 1;
            if ((e->cat = cat_id(r, text, len)) == UINT32_MAX) return -1;
            continue;
        }
        if (tprof_event_set(r, e, k, type, text, len)) return -1;
    }
    *pp = p;
    return JS_OK;
}

int tprof_parse_event_fast(reader *r, raw_event *e)
{
    int depth_left = TPROF_JSON_MAX_DEPTH - tprof_json_depth(r->j);
    for (;;) {
        const uint8_t *p, *end;
        tprof_json_window(r->j, &p, &end);
        tprof_raw_event_init(r, e);
        int rc = event_body(r, e, &p, end, depth_left);
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
