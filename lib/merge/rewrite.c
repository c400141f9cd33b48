/* The second read of one input: each event of traceEvents is re-serialized
 * from the tokenizer with its pid moved into the rank's namespace, its ts
 * shifted by the rank's clock offset and its ids made unique, then handed
 * to the external sort with its new timestamp as the key. */
#include "merge_internal.h"
#include "../io/pipe.h"
#include "../json/scan.h"
#include "trainprof/error.h"
#include "trainprof/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mbuf_grow(mbuf *b, size_t need)
{
    size_t c = b->cap ? b->cap : 256;
    while (c < need) c *= 2;
    char *p = realloc(b->p, c);
    if (!p) return TPROF_ENOMEM;
    b->p = p;
    b->cap = c;
    return 0;
}

int mbuf_i64(mbuf *b, int64_t v)
{
    char tmp[24];
    int i = sizeof tmp;
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do tmp[--i] = (char)('0' + a % 10);
    while ((a /= 10));
    if (v < 0) tmp[--i] = '-';
    return mbuf_put(b, tmp + i, sizeof tmp - (size_t)i);
}

int mbuf_puts(mbuf *b, const char *s) { return mbuf_put(b, s, strlen(s)); }

int mbuf_printf(mbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return TPROF_EUSAGE;
    return mbuf_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

int mbuf_json_str(mbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    if (mbuf_put(b, "\"", 1)) return TPROF_ENOMEM;
    size_t run = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        if (c >= 0x80) {
            /* decoded JSON is valid UTF-8; a file name or a cut note may not be: U+FFFD keeps the output valid */
            int l = js_utf8_len(u + i, u + n);
            if (l > 0) {
                i += (size_t)l;
                continue;
            }
            if (mbuf_put(b, s + run, i - run) || mbuf_put(b, "\\ufffd", 6)) return TPROF_ENOMEM;
            run = ++i;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        if (mbuf_put(b, s + run, i - run)) return TPROF_ENOMEM;
        char e[6] = { '\\', (char)c, 0 };
        size_t el = 2;
        if (c == '\n') e[1] = 'n';
        else if (c == '\t') e[1] = 't';
        else if (c == '\r') e[1] = 'r';
        else if (c < 0x20) {
            memcpy(e, "\\u00", 4);
            e[4] = hex[c >> 4];
            e[5] = hex[c & 15];
            el = 6;
        }
        if (mbuf_put(b, e, el)) return TPROF_ENOMEM;
        run = ++i;
    }
    if (mbuf_put(b, s + run, n - run)) return TPROF_ENOMEM;
    return mbuf_put(b, "\"", 1);
}

/* ---- re-serializing values token by token ---- */

/* Writes the value whose first token is TOK (strings re-escaped, numbers as
 * written). */
static int ser_value(tprof_json *j, mbuf *b, tprof_json_token *tok)
{
    uint8_t first[TPROF_JSON_MAX_DEPTH + 2];
    int d = 0, after_key = 0, rc;
    for (;;) {
        if (tok->type == TPROF_JSON_OBJ_END || tok->type == TPROF_JSON_ARR_END) {
            if ((rc = mbuf_put(b, tok->type == TPROF_JSON_OBJ_END ? "}" : "]", 1))) return rc;
            if (--d == 0) return 0;
        } else {
            if (d > 0 && !after_key) {
                if (!first[d] && (rc = mbuf_put(b, ",", 1))) return rc;
                first[d] = 0;
            }
            after_key = 0;
            switch (tok->type) {
            case TPROF_JSON_OBJ_BEGIN:
            case TPROF_JSON_ARR_BEGIN:
                if (d > TPROF_JSON_MAX_DEPTH) return TPROF_ELIMIT;
                if ((rc = mbuf_put(b, tok->type == TPROF_JSON_OBJ_BEGIN ? "{" : "[", 1))) return rc;
                first[++d] = 1;
                break;
            case TPROF_JSON_KEY:
                if ((rc = mbuf_json_str(b, tok->text, tok->len)) || (rc = mbuf_put(b, ":", 1))) return rc;
                after_key = 1;
                break;
            case TPROF_JSON_STRING: rc = mbuf_json_str(b, tok->text, tok->len); break;
            case TPROF_JSON_NUMBER: rc = mbuf_put(b, tok->text, tok->len); break;
            case TPROF_JSON_TRUE: rc = mbuf_puts(b, "true"); break;
            case TPROF_JSON_FALSE: rc = mbuf_puts(b, "false"); break;
            case TPROF_JSON_NULL: rc = mbuf_puts(b, "null"); break;
            default: return TPROF_EFORMAT; /* EOF inside a value: the tokenizer reports it */
            }
            if (rc) return rc;
            if (d == 0) return 0;
        }
        if ((rc = tprof_json_next(j, tok))) return rc;
    }
}

/* ---- the rank's processes ---- */

typedef struct {
    uint8_t gpu;
    int64_t pid, tid; /* gpu: device, stream; cpu: pid (when numeric) */
    char *spid;       /* cpu: the pid as a string when it was one ("Spans"), else NULL */
} proc;

typedef struct {
    const tprof_merge_opts *o;
    merge_input *in;
    merge_runs *runs;
    proc *procs;
    size_t nprocs, pcap;
    size_t *slots; /* open addressing: index + 1, 0 = empty */
    size_t nslots;
    int numeric_cpu; /* CPU processes with a numeric pid so far */
    uint64_t seq;
    mbuf ev, body, cat, name, spid;
    uint32_t event_kept_ids; /* ids of the current event kept as written */
    js_skip_cache *skip_cache; /* repeated args values; NULL: none */
    tprof_source *src;
    uint64_t next_progress; /* compressed bytes at which rewrite_progress is next told */
} rw;

static uint64_t proc_hash(uint8_t gpu, int64_t pid, int64_t tid, const char *spid)
{
    uint64_t h = 1469598103934665603ull ^ gpu;
    h = (h ^ (uint64_t)pid) * 0x9E3779B97F4A7C15ull;
    h = (h ^ (uint64_t)tid) * 0x9E3779B97F4A7C15ull;
    for (const char *s = spid; s && *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int proc_same(const proc *p, uint8_t gpu, int64_t pid, int64_t tid, const char *spid)
{
    if (p->gpu != gpu || p->pid != pid || p->tid != tid) return 0;
    if (!p->spid || !spid) return !p->spid && !spid;
    return strcmp(p->spid, spid) == 0;
}

/* COUNTED: an input event (not a process name made here) */
static int add_record(rw *w, int64_t key, const char *data, size_t len, int counted)
{
    w->in->out->events_out += counted != 0;
    return merge_runs_add(w->runs, key, (uint32_t)w->in->pos, w->seq++, data, len);
}

/* The process's name and sort index, as metadata events. */
static int name_process(rw *w, const proc *p, int64_t newpid)
{
    char label[320];
    int64_t rank = w->in->out->rank;
    if (p->gpu)
        snprintf(label, sizeof label, "rank %lld / GPU %lld / stream %lld", (long long)rank, (long long)p->pid,
                 (long long)p->tid);
    else if (p->spid)
        snprintf(label, sizeof label, "rank %lld / %.256s", (long long)rank, p->spid[0] ? p->spid : "(no pid)");
    else if (w->numeric_cpu++ == 0)
        snprintf(label, sizeof label, "rank %lld / CPU", (long long)rank);
    else
        snprintf(label, sizeof label, "rank %lld / CPU (pid %lld)", (long long)rank, (long long)p->pid);
    mbuf *b = &w->ev;
    b->len = 0;
    int rc = mbuf_printf(b, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%lld,\"tid\":0,\"args\":{\"name\":",
                         (long long)newpid);
    if (!rc) rc = mbuf_json_str(b, label, strlen(label));
    if (!rc) rc = mbuf_puts(b, "}}");
    if (!rc) rc = add_record(w, MERGE_KEY_META, b->p, b->len, 0);
    b->len = 0;
    if (!rc)
        rc = mbuf_printf(b, "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%lld,\"tid\":0,"
                            "\"args\":{\"sort_index\":%lld}}",
                         (long long)newpid, (long long)(p->gpu ? newpid : newpid - MERGE_PID_STRIDE / 2));
    if (!rc) rc = add_record(w, MERGE_KEY_META, b->p, b->len, 0);
    return rc;
}

/* The new pid of a process, created (and named) on first sight. */
static int proc_pid(rw *w, uint8_t gpu, int64_t pid, int64_t tid, const char *spid, int64_t *newpid)
{
    if (w->nprocs * 2 >= w->nslots) {
        size_t ns = w->nslots ? w->nslots * 2 : 64;
        size_t *s = calloc(ns, sizeof *s);
        if (!s) return TPROF_ENOMEM;
        for (size_t i = 0; i < w->nprocs; i++) {
            const proc *p = &w->procs[i];
            size_t h = proc_hash(p->gpu, p->pid, p->tid, p->spid) & (ns - 1);
            while (s[h]) h = (h + 1) & (ns - 1);
            s[h] = i + 1;
        }
        free(w->slots);
        w->slots = s;
        w->nslots = ns;
    }
    size_t h = proc_hash(gpu, pid, tid, spid) & (w->nslots - 1);
    for (; w->slots[h]; h = (h + 1) & (w->nslots - 1))
        if (proc_same(&w->procs[w->slots[h] - 1], gpu, pid, tid, spid)) {
            *newpid = w->in->out->pid_base + (int64_t)(w->slots[h] - 1);
            return 0;
        }
    if (w->nprocs + 1 >= MERGE_PID_STRIDE) return TPROF_ELIMIT;
    if (w->nprocs == w->pcap) {
        size_t c = w->pcap ? w->pcap * 2 : 16;
        proc *n = realloc(w->procs, c * sizeof *n);
        if (!n) return TPROF_ENOMEM;
        w->procs = n;
        w->pcap = c;
    }
    proc *p = &w->procs[w->nprocs];
    *p = (proc){ gpu, pid, tid, NULL };
    if (spid && !(p->spid = strdup(spid))) return TPROF_ENOMEM;
    w->slots[h] = ++w->nprocs;
    *newpid = w->in->out->pid_base + (int64_t)(w->nprocs - 1);
    return name_process(w, p, *newpid);
}

static int has_i64(const int64_t *v, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && v[lo] == x;
}

static int has_track(const merge_input *in, int64_t dev, int64_t stream)
{
    for (size_t i = 0; i < in->ngpu_tracks; i++)
        if (in->gpu_tracks[2 * i] == dev && in->gpu_tracks[2 * i + 1] == stream) return 1;
    return 0;
}

/* An id made unique across inputs; ids out of range stay as written. */
static int64_t unique_id(rw *w, int64_t id)
{
    if (id >= 0 && id < MERGE_ID_STRIDE && w->in->pos < 9000) return (int64_t)w->in->pos * MERGE_ID_STRIDE + id;
    w->event_kept_ids++; /* counted when the event is written: a retried event counts once */
    return id;
}

static int put_ns_as_us(mbuf *b, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    char frac[4] = { '.', (char)('0' + a % 1000 / 100), (char)('0' + a % 100 / 10), (char)('0' + a % 10) };
    if (ns < 0 && mbuf_put(b, "-", 1)) return TPROF_ENOMEM;
    /* INT64_MIN's magnitude does not fit int64: print it in two parts */
    char tmp[24];
    int i = sizeof tmp;
    uint64_t q = a / 1000;
    do tmp[--i] = (char)('0' + q % 10);
    while ((q /= 10));
    if (mbuf_put(b, tmp + i, sizeof tmp - (size_t)i)) return TPROF_ENOMEM;
    return a % 1000 ? mbuf_put(b, frac, 4) : 0;
}

#define KEYIS(tok, lit) ((tok)->len == sizeof(lit) - 1 && memcmp((tok)->text, lit, sizeof(lit) - 1) == 0)

static int is_id_arg(const char *k, size_t n);

/* The args object (after its '{'), with its ids rewritten. */
static int rewrite_args(rw *w, tprof_json *j, mbuf *b)
{
    tprof_json_token tok;
    int rc, first = 1;
    if ((rc = mbuf_put(b, "{", 1))) return rc;
    for (;;) {
        if ((rc = tprof_json_next(j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) break;
        int is_id = is_id_arg(tok.text, tok.len);
        if ((!first && (rc = mbuf_put(b, ",", 1))) || (rc = mbuf_json_str(b, tok.text, tok.len)) ||
            (rc = mbuf_put(b, ":", 1)))
            return rc;
        first = 0;
        if ((rc = tprof_json_next(j, &tok))) return rc;
        int64_t v;
        if (is_id && tok.type == TPROF_JSON_NUMBER && tprof_json_parse_int(tok.text, tok.len, &v) == 0) {
            if ((rc = mbuf_i64(b, unique_id(w, v)))) return rc;
            continue;
        }
        if ((rc = ser_value(j, b, &tok))) return rc;
    }
    return mbuf_put(b, "}", 1);
}

typedef enum { PID_NONE, PID_NUM, PID_STR } pid_form;
typedef enum { M_OTHER, M_PID, M_TS, M_ID, M_ARGS, M_PH, M_CAT, M_NAME, M_TID, M_DUR } member;

static member member_of(const char *k, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(k, lit, n) == 0)
    return IS("pid") ? M_PID : IS("ts") ? M_TS : IS("id") ? M_ID : IS("args") ? M_ARGS : IS("ph") ? M_PH
         : IS("cat") ? M_CAT : IS("name") ? M_NAME : IS("tid") ? M_TID : IS("dur") ? M_DUR : M_OTHER;
#undef IS
}

static int is_id_arg(const char *k, size_t n)
{
    return (n == 11 && memcmp(k, "correlation", 11) == 0) || (n == 11 && memcmp(k, "External id", 11) == 0) ||
           (n == 11 && memcmp(k, "external id", 11) == 0);
}

/* What an event's members said; the members other than pid, ts and id are
 * already written to w->body, each as ',"key":value'. */
typedef struct {
    pid_form pf;
    int64_t pid, tid, ts, dur, id;
    int tid_num, has_ts, has_dur, has_id, has_cat;
    char ph;
} fields;

/* Filters the event, then writes it with its new pid, ts and id. */
static int finish_event(rw *w, const fields *f)
{
    const tprof_merge_opts *o = w->o;
    merge_input *in = w->in;
    int rc;
    /* which process: a GPU stream (Kineto: pid = device, tid = stream) or a host process */
    int gpu = f->pf == PID_NUM && f->tid_num && has_i64(in->gpu_pids, in->ngpu_pids, f->pid);
    int64_t out_ts = tprof_sat_add(f->ts, in->out->offset_ns), key = f->has_ts ? out_ts : MERGE_KEY_UNTIMED;
    if (f->ph == 'M') {
        /* the rank's processes are named anew; thread names stay, GPU ones only for tracks with events */
        const char *n = w->name.p ? w->name.p : "";
        if (strncmp(n, "process_", 8) == 0 || (gpu && !has_track(in, f->pid, f->tid))) {
            in->out->dropped++;
            return 0;
        }
        key = MERGE_KEY_META;
    } else {
        if (f->has_cat && o->ndrop_cats) {
            for (size_t i = 0; i < o->ndrop_cats; i++)
                if (strcmp(o->drop_cats[i], w->cat.p) == 0) {
                    in->out->dropped++;
                    return 0;
                }
        }
        if (f->ph == 'X' && o->min_dur_ns > 0 && f->has_dur && f->dur < o->min_dur_ns) {
            in->out->dropped++;
            return 0;
        }
        if (o->has_steps && f->has_ts) {
            int64_t lo = gpu ? in->gpu_lo : in->cpu_lo, hi = gpu ? in->gpu_hi : in->cpu_hi;
            int64_t end = f->ph == 'X' && f->has_dur && f->dur > 0 ? tprof_end_ns(f->ts, f->dur) : f->ts;
            if (in->window_empty || end < lo || f->ts > hi) {
                in->out->dropped++;
                return 0;
            }
        }
    }
    int64_t newpid;
    if ((rc = proc_pid(w, (uint8_t)gpu, gpu || f->pf == PID_NUM ? f->pid : 0, gpu ? f->tid : 0,
                       f->pf == PID_NUM ? NULL : f->pf == PID_STR ? (w->spid.p ? w->spid.p : "") : "", &newpid)))
        return rc;
    mbuf *e = &w->ev;
    e->len = 0;
    if ((rc = mbuf_puts(e, "{\"pid\":")) || (rc = mbuf_i64(e, newpid))) return rc;
    if (f->has_ts && ((rc = mbuf_puts(e, ",\"ts\":")) || (rc = put_ns_as_us(e, out_ts)))) return rc;
    if (f->has_id && ((rc = mbuf_puts(e, ",\"id\":")) || (rc = mbuf_i64(e, unique_id(w, f->id))))) return rc;
    if ((rc = mbuf_put(e, w->body.p ? w->body.p : "", w->body.len)) || (rc = mbuf_put(e, "}", 1))) return rc;
    in->out->ids_kept += w->event_kept_ids;
    return add_record(w, key, e->p, e->len, 1);
}

static void reset_event(rw *w, fields *f)
{
    *f = (fields){ .pf = PID_NONE };
    w->event_kept_ids = 0;
    /* emptied, and terminated: an event without a name must not see the last one's */
    mbuf *bufs[] = { &w->body, &w->cat, &w->name, &w->spid };
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) {
        bufs[i]->len = 0;
        if (bufs[i]->p) bufs[i]->p[0] = 0;
    }
}

/* The token path: one event (after its '{'), every value re-serialized. */
static int rewrite_event(rw *w, tprof_json *j)
{
    tprof_json_token tok;
    int rc;
    fields f;
    reset_event(w, &f);
    for (;;) {
        if ((rc = tprof_json_next(j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) break;
        member k = member_of(tok.text, tok.len);
        /* the key goes to the body now (its text lasts until the next token) unless it is rewritten */
        mbuf *b = &w->body;
        size_t mark = b->len;
        if ((rc = mbuf_put(b, ",", 1)) || (rc = mbuf_json_str(b, tok.text, tok.len)) || (rc = mbuf_put(b, ":", 1)))
            return rc;
        if ((rc = tprof_json_next(j, &tok))) return rc;
        int is_num = tok.type == TPROF_JSON_NUMBER, is_str = tok.type == TPROF_JSON_STRING;
        switch (k) {
        case M_PID:
            if (is_num && tprof_json_parse_int(tok.text, tok.len, &f.pid) == 0) f.pf = PID_NUM;
            else if (is_str) {
                f.pf = PID_STR;
                if ((rc = mbuf_put(&w->spid, tok.text, tok.len))) return rc;
            } else break;
            b->len = mark;
            continue;
        case M_TS:
            if ((is_num || is_str) && tprof_json_parse_scaled(tok.text, tok.len, 3, &f.ts) == 0) {
                f.has_ts = 1;
                b->len = mark;
                continue;
            }
            break;
        case M_ID:
            if (is_num && tprof_json_parse_int(tok.text, tok.len, &f.id) == 0) {
                f.has_id = 1;
                b->len = mark;
                continue;
            }
            break;
        case M_ARGS:
            if (tok.type == TPROF_JSON_OBJ_BEGIN) {
                if ((rc = rewrite_args(w, j, b))) return rc;
                continue;
            }
            break;
        case M_PH: if (is_str && tok.len) f.ph = tok.text[0]; break;
        case M_CAT:
            f.has_cat = is_str;
            if (is_str && (rc = mbuf_put(&w->cat, tok.text, tok.len))) return rc;
            break;
        case M_NAME:
            if (is_str && (rc = mbuf_put(&w->name, tok.text, tok.len))) return rc;
            break;
        case M_TID: f.tid_num = is_num && tprof_json_parse_int(tok.text, tok.len, &f.tid) == 0; break;
        case M_DUR:
            f.has_dur = (is_num || is_str) && tprof_json_parse_scaled(tok.text, tok.len, 3, &f.dur) == 0;
            break;
        default: break;
        }
        if ((rc = ser_value(j, b, &tok))) return rc;
    }
    return finish_event(w, &f);
}

/* ---- the fast path: members copied as byte spans from the window ---- */

enum { FAST_SLOW = 1 };

/* A number's span at P, checked. */
static int raw_number(const uint8_t *p, const uint8_t *end, const uint8_t **next)
{
    js_error err;
    if (*p != '-' && (*p < '0' || *p > '9')) return JS_ERR;
    return js_number(p, end, 0, next, &err);
}

static int put_member(mbuf *b, const uint8_t *key, size_t klen, const uint8_t *v, const uint8_t *vend)
{
    int rc = mbuf_put(b, ",\"", 2);
    if (!rc) rc = mbuf_put(b, key, klen);
    if (!rc) rc = mbuf_put(b, "\":", 2);
    if (!rc) rc = mbuf_put(b, v, (size_t)(vend - v));
    return rc;
}

static int fast_args(rw *w, const uint8_t **pp, const uint8_t *end, int depth_left)
{
    const uint8_t *p = *pp;
    mbuf *b = &w->body;
    js_error err;
    int rc;
    if ((rc = mbuf_put(b, ",\"args\":{", 9))) return -1;
    for (int first = 1;; first = 0) {
        if ((rc = js_next_member(&p, end, first)) == JS_END) break;
        if (rc) return rc;
        const uint8_t *key, *v, *vend;
        size_t klen;
        if ((rc = js_member_key(&p, end, &key, &klen))) return rc;
        v = p;
        int64_t id;
        const uint8_t *nend;
        if (is_id_arg((const char *)key, klen) && js_decimal_plain(p, end, 0, &id, &nend)) {
            /* a plain integer id, read and checked at once */
            p = nend;
            if ((!first && mbuf_put(b, ",", 1)) || mbuf_put(b, "\"", 1) || mbuf_put(b, key, klen) ||
                mbuf_put(b, "\":", 2) || mbuf_i64(b, unique_id(w, id)))
                return -1;
            continue;
        }
        if ((rc = js_skip_value_cached(w->skip_cache, p, end, depth_left, &vend, &err))) return rc;
        p = vend;
        if (!first && mbuf_put(b, ",", 1)) return -1;
        if (is_id_arg((const char *)key, klen) && raw_number(v, end, &nend) == JS_OK && nend == vend &&
            tprof_json_parse_int((const char *)v, (size_t)(vend - v), &id) == 0) {
            if (mbuf_put(b, "\"", 1) || mbuf_put(b, key, klen) || mbuf_put(b, "\":", 2) || mbuf_i64(b, unique_id(w, id)))
                return -1;
            continue;
        }
        if (mbuf_put(b, "\"", 1) || mbuf_put(b, key, klen) || mbuf_put(b, "\":", 2) ||
            mbuf_put(b, v, (size_t)(vend - v)))
            return -1;
    }
    if (mbuf_put(b, "}", 1)) return -1;
    *pp = p;
    return JS_OK;
}

/* The event body from P (after its '{') to just past its '}' (*pp). Returns
 * JS_OK, JS_MORE, JS_ERR (the token path takes over), or -1 (no memory). */
static int fast_body(rw *w, fields *f, const uint8_t **pp, const uint8_t *end, int depth_left)
{
    const uint8_t *p = *pp;
    js_error err;
    int rc;
    for (int first = 1;; first = 0) {
        if ((rc = js_next_member(&p, end, first)) == JS_END) break;
        if (rc) return rc;
        const uint8_t *key, *v, *vend, *t;
        size_t klen, tlen;
        if ((rc = js_member_key(&p, end, &key, &klen))) return rc;
        member k = member_of((const char *)key, klen);
        v = p;
        int64_t nv;
        const uint8_t *nend;
        if ((k == M_TS || k == M_DUR || k == M_PID || k == M_TID || k == M_ID) &&
            js_decimal_plain(p, end, k == M_TS || k == M_DUR ? 3 : 0, &nv, &nend)) {
            /* the plain number forms, read and checked at once (else below) */
            p = nend;
            switch (k) {
            case M_TS: f->ts = nv, f->has_ts = 1; continue;
            case M_PID: f->pid = nv, f->pf = PID_NUM; continue;
            case M_ID: f->id = nv, f->has_id = 1; continue;
            case M_TID: f->tid = nv, f->tid_num = 1; break;
            default: f->dur = nv, f->has_dur = 1; break; /* M_DUR */
            }
            if (put_member(&w->body, key, klen, v, nend)) return -1;
            continue;
        }
        if (k == M_ARGS && *p == '{') {
            if (depth_left < 1) return JS_ERR;
            p++;
            if ((rc = fast_args(w, &p, end, depth_left - 1))) return rc;
            continue;
        }
        int is_str = *p == '"', esc = 0;
        if (is_str) {
            if ((rc = js_string_raw(p, end, &t, &tlen, &vend, &esc, &err))) return rc;
            if (esc && k != M_OTHER) return JS_ERR; /* the token path decodes what it reads */
        } else if ((rc = js_skip_value_cached(w->skip_cache, p, end, depth_left, &vend, &err))) {
            return rc;
        }
        p = vend;
        int is_num = *v == '-' || (*v >= '0' && *v <= '9');
        const char *num = (const char *)(is_str ? t : v);
        size_t nlen = is_str ? tlen : (size_t)(vend - v);
        switch (k) {
        case M_PID:
            if (is_num && tprof_json_parse_int(num, nlen, &f->pid) == 0) f->pf = PID_NUM;
            else if (is_str) {
                f->pf = PID_STR;
                if (mbuf_put(&w->spid, t, tlen)) return -1;
            } else break;
            continue;
        case M_TS:
            if ((is_num || (is_str && !esc)) && tprof_json_parse_scaled(num, nlen, 3, &f->ts) == 0) {
                f->has_ts = 1;
                continue;
            }
            break;
        case M_ID:
            if (is_num && tprof_json_parse_int(num, nlen, &f->id) == 0) {
                f->has_id = 1;
                continue;
            }
            break;
        case M_PH: if (is_str && tlen) f->ph = (char)t[0]; break;
        case M_CAT:
            f->has_cat = is_str;
            if (is_str && mbuf_put(&w->cat, t, tlen)) return -1;
            break;
        case M_NAME:
            if (is_str && mbuf_put(&w->name, t, tlen)) return -1;
            break;
        case M_TID: f->tid_num = is_num && tprof_json_parse_int(num, nlen, &f->tid) == 0; break;
        case M_DUR:
            f->has_dur = (is_num || (is_str && !esc)) && tprof_json_parse_scaled(num, nlen, 3, &f->dur) == 0;
            break;
        default: break;
        }
        if (put_member(&w->body, key, klen, v, vend)) return -1;
    }
    *pp = p;
    return JS_OK;
}

/* The event whose '{' was the last token: 0 when written (or dropped) and
 * the tokenizer moved past it, FAST_SLOW when the token path must read it
 * from the same place, or an error. */
static int rewrite_event_fast(rw *w, tprof_json *j)
{
    int depth_left = TPROF_JSON_MAX_DEPTH - tprof_json_depth(j);
    for (;;) {
        const uint8_t *p, *end;
        fields f;
        reset_event(w, &f);
        tprof_json_window(j, &p, &end);
        int rc = fast_body(w, &f, &p, end, depth_left);
        if (rc == JS_OK) {
            tprof_json_window_close_object(j, p);
            return finish_event(w, &f);
        }
        if (rc < 0) return TPROF_ENOMEM;
        if (rc == JS_ERR) return FAST_SLOW;
        int m = tprof_json_window_more(j); /* the window ends inside the event */
        if (m < 0) return m;
        if (m == 0) return FAST_SLOW;
    }
}

static int read_events(rw *w, tprof_json *j)
{
    tprof_json_token tok;
    int rc;
    for (uint64_t i = 0;; i++) {
        if ((i & 4095) == 0 && w->o->rewrite_progress && tprof_source_bytes_in(w->src) >= w->next_progress) {
            w->o->rewrite_progress(w->o->rewrite_progress_ctx, w->in->out->path, tprof_source_bytes_in(w->src),
                                   tprof_source_file_size(w->src));
            w->next_progress = tprof_source_bytes_in(w->src) + (16u << 20);
        }
        if ((rc = tprof_json_next(j, &tok))) return rc;
        if (tok.type == TPROF_JSON_ARR_END) return 0;
        if (tok.type == TPROF_JSON_OBJ_BEGIN) {
            w->in->out->events_in++;
            rc = w->o->generic_only ? FAST_SLOW : rewrite_event_fast(w, j);
            if (rc == FAST_SLOW) rc = rewrite_event(w, j);
            if (rc) return rc;
            continue;
        }
        w->in->out->dropped++; /* not an event object: skipped, as the reader does */
        if ((tok.type == TPROF_JSON_ARR_BEGIN || tok.type == TPROF_JSON_OBJ_BEGIN) &&
            (rc = tprof_json_skip_container(j)))
            return rc;
    }
}

/* The document: traceEvents, and every other top-level member to META. */
static int read_document(rw *w, tprof_json *j, mbuf *meta)
{
    tprof_json_token tok;
    int rc;
    if ((rc = tprof_json_next(j, &tok))) return rc;
    if (tok.type == TPROF_JSON_ARR_BEGIN) return read_events(w, j);
    if (tok.type != TPROF_JSON_OBJ_BEGIN) return TPROF_ENOTTRACE;
    int saw_events = 0;
    for (;;) {
        if ((rc = tprof_json_next(j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) return 0;
        if (KEYIS(&tok, "traceEvents") && saw_events) {
            /* the reader's rule: the first array is the trace (the plan said so) */
            if ((rc = tprof_json_skip_value(j))) return rc;
            continue;
        }
        if (KEYIS(&tok, "traceEvents")) {
            saw_events = 1;
            if ((rc = tprof_json_next(j, &tok))) return rc;
            if (tok.type == TPROF_JSON_ARR_BEGIN) {
                if ((rc = read_events(w, j))) return rc;
            } else if ((tok.type == TPROF_JSON_OBJ_BEGIN) && (rc = tprof_json_skip_container(j))) {
                return rc;
            }
            continue;
        }
        size_t mark = meta->len; /* a member cut short is taken back: the output stays valid JSON */
        if ((meta->len && (rc = mbuf_put(meta, ",", 1))) || (rc = mbuf_json_str(meta, tok.text, tok.len)) ||
            (rc = mbuf_put(meta, ":", 1)) || (rc = tprof_json_next(j, &tok)) || (rc = ser_value(j, meta, &tok))) {
            meta->len = mark;
            return rc;
        }
    }
}

static ssize_t source_read(void *ctx, void *buf, size_t cap) { return tprof_source_read(ctx, buf, cap); }

int merge_rewrite_input(const tprof_merge_opts *o, merge_input *in, merge_runs *runs, mbuf *meta, char *errbuf,
                        size_t errlen)
{
    tprof_source *src;
    int rc = tprof_source_open(&src, in->out->path, errbuf, errlen);
    if (rc) return rc;
    tprof_pipe *pipe = NULL;
    if (tprof_pipe_worth(src)) tprof_pipe_start(&pipe, src);
    size_t window = tprof_source_window(src); /* 0 (1 MiB) unless the input is small */
    tprof_json *j;
    rc = pipe ? tprof_json_open_sized(&j, tprof_pipe_read, pipe, in->out->path, window)
              : tprof_json_open_sized(&j, source_read, src, in->out->path, window);
    if (rc) {
        if (pipe) tprof_pipe_stop(pipe);
        tprof_source_close(src);
        return rc;
    }
    rw w = { .o = o, .in = in, .runs = runs, .skip_cache = js_skip_cache_new_for(tprof_source_json_guess(src)),
             .src = src };
    /* the GPU streams first, so that their pids follow device and stream order */
    int64_t newpid;
    for (size_t i = 0; i < in->ngpu_tracks && !rc; i++)
        if (in->gpu_tracks[2 * i] >= 0 && in->gpu_tracks[2 * i + 1] >= 0)
            rc = proc_pid(&w, 1, in->gpu_tracks[2 * i], in->gpu_tracks[2 * i + 1], NULL, &newpid);
    if (!rc) rc = read_document(&w, j, meta);
    if (rc == TPROF_ETRUNC) in->out->truncated = 1;
    if (rc && rc != TPROF_ETRUNC && errbuf) {
        const char *m = tprof_json_errmsg(j);
        if (rc == TPROF_ENOTTRACE) snprintf(errbuf, errlen, "%s: not a trace (neither an object nor an array)", in->out->path);
        else if (m && *m) snprintf(errbuf, errlen, "%s", m);
        else if (merge_runs_errmsg(runs)[0]) snprintf(errbuf, errlen, "%s", merge_runs_errmsg(runs));
        else snprintf(errbuf, errlen, "%s: %s", in->out->path, tprof_strerror(rc));
    }
    tprof_json_close(j);
    if (pipe) tprof_pipe_stop(pipe);
    tprof_source_close(src);
    for (size_t i = 0; i < w.nprocs; i++) free(w.procs[i].spid);
    free(w.procs);
    free(w.slots);
    free(w.ev.p);
    free(w.body.p);
    free(w.cat.p);
    free(w.name.p);
    free(w.spid.p);
    js_skip_cache_free(w.skip_cache);
    return rc;
}
