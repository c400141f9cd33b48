/* The second read of one input: each event of traceEvents is re-serialized
 * from the tokenizer with its pid moved into the rank's namespace, its ts
 * shifted by the rank's clock offset and its ids made unique, then handed
 * to the external sort with its new timestamp as the key. */
#include "merge_internal.h"
#include "../io/pipe.h"
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
    if (mbuf_put(b, "\"", 1)) return TPROF_ENOMEM;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
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
        run = i + 1;
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
    w->in->out->ids_kept++;
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

/* The args object (after its '{'), with its ids rewritten. */
static int rewrite_args(rw *w, tprof_json *j, mbuf *b)
{
    tprof_json_token tok;
    int rc, first = 1;
    if ((rc = mbuf_put(b, "{", 1))) return rc;
    for (;;) {
        if ((rc = tprof_json_next(j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) break;
        int is_id = KEYIS(&tok, "correlation") || KEYIS(&tok, "External id") || KEYIS(&tok, "external id");
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

/* One event (after its '{'). */
static int rewrite_event(rw *w, tprof_json *j)
{
    const tprof_merge_opts *o = w->o;
    merge_input *in = w->in;
    tprof_json_token tok;
    int rc;
    pid_form pf = PID_NONE;
    int64_t pid = 0, tid = 0, ts = 0, dur = 0, id = 0;
    int tid_num = 0, has_ts = 0, has_dur = 0, has_id = 0, has_cat = 0;
    char ph = 0;
    w->body.len = w->cat.len = w->name.len = w->spid.len = 0;
    for (;;) {
        if ((rc = tprof_json_next(j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) break;
        enum { OTHER, PID, TS, ID, ARGS, PH, CAT, NAME, TID, DUR } k =
            KEYIS(&tok, "pid") ? PID : KEYIS(&tok, "ts") ? TS : KEYIS(&tok, "id") ? ID
            : KEYIS(&tok, "args") ? ARGS : KEYIS(&tok, "ph") ? PH : KEYIS(&tok, "cat") ? CAT
            : KEYIS(&tok, "name") ? NAME : KEYIS(&tok, "tid") ? TID : KEYIS(&tok, "dur") ? DUR : OTHER;
        /* the key goes to the body now (its text lasts until the next token) unless it is rewritten */
        mbuf *b = &w->body;
        size_t mark = b->len;
        if ((rc = mbuf_put(b, ",", 1)) || (rc = mbuf_json_str(b, tok.text, tok.len)) || (rc = mbuf_put(b, ":", 1)))
            return rc;
        if ((rc = tprof_json_next(j, &tok))) return rc;
        int is_num = tok.type == TPROF_JSON_NUMBER, is_str = tok.type == TPROF_JSON_STRING;
        switch (k) {
        case PID:
            if (is_num && tprof_json_parse_int(tok.text, tok.len, &pid) == 0) pf = PID_NUM;
            else if (is_str) {
                pf = PID_STR;
                if ((rc = mbuf_put(&w->spid, tok.text, tok.len))) return rc;
            } else break;
            b->len = mark;
            continue;
        case TS:
            if ((is_num || is_str) && tprof_json_parse_scaled(tok.text, tok.len, 3, &ts) == 0) {
                has_ts = 1;
                b->len = mark;
                continue;
            }
            break;
        case ID:
            if (is_num && tprof_json_parse_int(tok.text, tok.len, &id) == 0) {
                has_id = 1;
                b->len = mark;
                continue;
            }
            break;
        case ARGS:
            if (tok.type == TPROF_JSON_OBJ_BEGIN) {
                if ((rc = rewrite_args(w, j, b))) return rc;
                continue;
            }
            break;
        case PH: if (is_str && tok.len) ph = tok.text[0]; break;
        case CAT:
            has_cat = is_str;
            if (is_str && (rc = mbuf_put(&w->cat, tok.text, tok.len))) return rc;
            break;
        case NAME:
            if (is_str && (rc = mbuf_put(&w->name, tok.text, tok.len))) return rc;
            break;
        case TID: tid_num = is_num && tprof_json_parse_int(tok.text, tok.len, &tid) == 0; break;
        case DUR: has_dur = (is_num || is_str) && tprof_json_parse_scaled(tok.text, tok.len, 3, &dur) == 0; break;
        default: break;
        }
        if ((rc = ser_value(j, b, &tok))) return rc;
    }

    /* which process: a GPU stream (Kineto: pid = device, tid = stream) or a host process */
    int gpu = pf == PID_NUM && tid_num && has_i64(in->gpu_pids, in->ngpu_pids, pid);
    int64_t out_ts = tprof_sat_add(ts, in->out->offset_ns), key = has_ts ? out_ts : MERGE_KEY_UNTIMED;
    if (ph == 'M') {
        /* the rank's processes are named anew; thread names stay, GPU ones only for tracks with events */
        const char *n = w->name.p ? w->name.p : "";
        if (strncmp(n, "process_", 8) == 0 || (gpu && !has_track(in, pid, tid))) {
            in->out->dropped++;
            return 0;
        }
        key = MERGE_KEY_META;
    } else {
        if (has_cat && o->ndrop_cats) {
            for (size_t i = 0; i < o->ndrop_cats; i++)
                if (strcmp(o->drop_cats[i], w->cat.p) == 0) {
                    in->out->dropped++;
                    return 0;
                }
        }
        if (ph == 'X' && o->min_dur_ns > 0 && has_dur && dur < o->min_dur_ns) {
            in->out->dropped++;
            return 0;
        }
        if (o->has_steps && has_ts) {
            int64_t lo = gpu ? in->gpu_lo : in->cpu_lo, hi = gpu ? in->gpu_hi : in->cpu_hi;
            int64_t end = ph == 'X' && has_dur && dur > 0 ? tprof_end_ns(ts, dur) : ts;
            if (in->window_empty || end < lo || ts > hi) {
                in->out->dropped++;
                return 0;
            }
        }
    }
    int64_t newpid;
    if ((rc = proc_pid(w, (uint8_t)gpu, gpu ? pid : pf == PID_NUM ? pid : 0, gpu ? tid : 0,
                       pf == PID_NUM ? NULL : pf == PID_STR ? (w->spid.p ? w->spid.p : "") : "", &newpid)))
        return rc;
    mbuf *e = &w->ev;
    e->len = 0;
    if ((rc = mbuf_puts(e, "{\"pid\":")) || (rc = mbuf_i64(e, newpid))) return rc;
    if (has_ts && ((rc = mbuf_puts(e, ",\"ts\":")) || (rc = put_ns_as_us(e, out_ts)))) return rc;
    if (has_id && ((rc = mbuf_puts(e, ",\"id\":")) || (rc = mbuf_i64(e, unique_id(w, id))))) return rc;
    if ((rc = mbuf_put(e, w->body.p ? w->body.p : "", w->body.len)) || (rc = mbuf_put(e, "}", 1))) return rc;
    return add_record(w, key, e->p, e->len, 1);
}

static int read_events(rw *w, tprof_json *j)
{
    tprof_json_token tok;
    int rc;
    for (uint64_t i = 0;; i++) {
        if ((rc = tprof_json_next(j, &tok))) return rc;
        if (tok.type == TPROF_JSON_ARR_END) return 0;
        if (tok.type == TPROF_JSON_OBJ_BEGIN) {
            w->in->out->events_in++;
            if ((rc = rewrite_event(w, j))) return rc;
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
    for (;;) {
        if ((rc = tprof_json_next(j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) return 0;
        if (KEYIS(&tok, "traceEvents")) {
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
    if (tprof_source_compression(src) != TPROF_COMP_NONE) tprof_pipe_start(&pipe, src);
    tprof_json *j;
    rc = pipe ? tprof_json_open(&j, tprof_pipe_read, pipe, in->out->path)
              : tprof_json_open(&j, source_read, src, in->out->path);
    if (rc) {
        if (pipe) tprof_pipe_stop(pipe);
        tprof_source_close(src);
        return rc;
    }
    rw w = { .o = o, .in = in, .runs = runs };
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
    return rc;
}
