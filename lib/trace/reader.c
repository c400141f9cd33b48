/* The streaming Kineto/Chrome trace reader: JSON tokens -> compact events. */
#include "trace_internal.h"
#include "trainprof/error.h"
#include "trainprof/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_DAY (86400LL * 1000000000LL)
#define PROGRESS_EVERY (16u << 20)

typedef struct {
    tprof_trace *t;
    tprof_json *j;
    tprof_source *src;
    const tprof_read_opts *opts;
    uint64_t next_progress;
    char *name_buf; /* the current event's name, copied: interned only if kept */
    size_t name_len, name_cap;
} reader;

/* One event's fields as read, before it becomes a record. */
typedef struct {
    char ph;
    int has_cat, has_name, has_ts, has_dur, has_pid, has_tid, task_type;
    uint32_t cat;
    int64_t ts, dur;
    int ts_bad;
    int64_t pid, tid;
    uint8_t flags;
    int64_t device, stream, correlation, external_id, flow_id, bytes;
} raw_event;

static ssize_t source_read(void *ctx, void *buf, size_t cap) { return tprof_source_read(ctx, buf, cap); }

#define KEYIS(tok, lit) ((tok)->len == sizeof(lit) - 1 && memcmp((tok)->text, lit, sizeof(lit) - 1) == 0)

static int grow(void **p, size_t *cap, size_t need, size_t elem)
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

static uint32_t intern(reader *r, const char *s, size_t len)
{
    return tprof_strtab_intern(&r->t->strs, s, len);
}

static void warn_at(reader *r, uint64_t *counter, uint64_t off)
{
    if (*counter == 0 && r->t->meta.warn.first_offset == UINT64_MAX) r->t->meta.warn.first_offset = off;
    (*counter)++;
}

/* Integer from a number or a numeric string token; 0 on success. */
static int tok_int(const tprof_json_token *tok, int64_t *out)
{
    if (tok->type == TPROF_JSON_NUMBER || tok->type == TPROF_JSON_STRING)
        return tprof_json_parse_int(tok->text, tok->len, out);
    return TPROF_EFORMAT;
}

/* Microseconds (number or string) to ns. */
static int tok_us(const tprof_json_token *tok, int64_t *out)
{
    if (tok->type == TPROF_JSON_NUMBER || tok->type == TPROF_JSON_STRING)
        return tprof_json_parse_scaled(tok->text, tok->len, 3, out);
    return TPROF_EFORMAT;
}

static tprof_kind kind_of(reader *r, const raw_event *e)
{
    switch (e->ph) {
    case 's': case 't': case 'f': return TPROF_KIND_FLOW;
    case 'i': case 'I': return TPROF_KIND_INSTANT;
    case 'C': return TPROF_KIND_COUNTER;
    case 'M': return TPROF_KIND_META;
    case 'X': case 'B': case 'E': break;
    default: return TPROF_KIND_OTHER;
    }
    if (e->task_type) return TPROF_KIND_GPU; /* Ascend device task */
    if (!e->has_cat) return TPROF_KIND_CPU;
    tprof_trace *t = r->t;
    if (grow((void **)&t->kind_of_cat, &t->kind_of_cat_cap, (size_t)e->cat + 1, 1)) return TPROF_KIND_CPU;
    uint8_t k = t->kind_of_cat[e->cat];
    if (k) return (tprof_kind)(k - 1);
    const char *c = tprof_strtab_get(&t->strs, e->cat);
    tprof_kind kind = TPROF_KIND_CPU;
    if (!strcmp(c, "kernel") || !strcmp(c, "Kernel") || !strcmp(c, "gpu_memcpy") || !strcmp(c, "Memcpy") ||
        !strcmp(c, "gpu_memset") || !strcmp(c, "Memset") || !strcmp(c, "cuda_sync"))
        kind = TPROF_KIND_GPU;
    else if (!strcmp(c, "gpu_user_annotation"))
        kind = TPROF_KIND_GPU_ANNOTATION;
    else if (!strcmp(c, "cuda_runtime") || !strcmp(c, "Runtime") || !strcmp(c, "cuda_driver") ||
             !strcmp(c, "mtia_runtime"))
        kind = TPROF_KIND_RUNTIME;
    t->kind_of_cat[e->cat] = (uint8_t)(kind + 1);
    return kind;
}

static int parse_args(reader *r, raw_event *e)
{
    tprof_json_token tok;
    int rc;
    for (;;) {
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) return 0;
        /* tok is a KEY; dispatch on the few args analyses need */
        int64_t *dst = NULL;
        switch (tok.len) {
        case 5:
            if (KEYIS(&tok, "bytes")) dst = &e->bytes;
            break;
        case 6:
            if (KEYIS(&tok, "device")) dst = &e->device;
            else if (KEYIS(&tok, "stream")) dst = &e->stream;
            break;
        case 9:
            if (KEYIS(&tok, "Task Type")) e->task_type = 1;
            else if (KEYIS(&tok, "Stream Id")) dst = &e->stream;
            break;
        case 11:
            if (KEYIS(&tok, "correlation")) dst = &e->correlation;
            else if (KEYIS(&tok, "External id") || KEYIS(&tok, "external id")) dst = &e->external_id;
            break;
        }
        if (!dst) {
            if ((rc = tprof_json_skip_value(r->j))) return rc;
            continue;
        }
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_BEGIN || tok.type == TPROF_JSON_ARR_BEGIN) {
            if ((rc = tprof_json_skip_container(r->j))) return rc;
            continue;
        }
        int64_t v;
        if (tok_int(&tok, &v) == 0) *dst = v;
    }
}

static int set_name(reader *r, const tprof_json_token *tok)
{
    if (tok->len + 1 > r->name_cap) {
        size_t n = r->name_cap ? r->name_cap : 256;
        while (n < tok->len + 1) n *= 2;
        char *b = realloc(r->name_buf, n);
        if (!b) return TPROF_ENOMEM;
        r->name_buf = b;
        r->name_cap = n;
    }
    memcpy(r->name_buf, tok->text, tok->len);
    r->name_len = tok->len;
    return 0;
}

/* pid/tid: numbers, numeric strings, or names ("Spans", "stream 7"). */
static int64_t id_value(reader *r, const tprof_json_token *tok, uint8_t *flags, uint8_t strflag)
{
    int64_t v;
    if (tok_int(tok, &v) == 0) return v;
    if (tok->type == TPROF_JSON_STRING) {
        *flags |= strflag;
        return intern(r, tok->text, tok->len);
    }
    return 0;
}

static int add_step(tprof_trace *t, const char *name, int64_t ts, int64_t dur)
{
    int64_t n = 0;
    const char *p = name + strlen("ProfilerStep#");
    if (tprof_json_parse_int(p, strlen(p), &n)) n = -1;
    if (grow((void **)&t->steps, &t->stepcap, t->nsteps + 1, sizeof *t->steps)) return TPROF_ENOMEM;
    t->steps[t->nsteps++] = (tprof_step){ .number = n, .ts = ts, .dur = dur };
    return 0;
}

static void add_track(tprof_trace *t, int64_t device, int64_t stream)
{
    /* few tracks per trace: a linear scan from the most recent is enough */
    for (size_t i = t->ntracks; i-- > 0;)
        if (t->tracks[i].device == device && t->tracks[i].stream == stream) {
            t->tracks[i].events++;
            return;
        }
    if (grow((void **)&t->tracks, &t->trackcap, t->ntracks + 1, sizeof *t->tracks)) return;
    t->tracks[t->ntracks++] = (tprof_gpu_track){ device, stream, 1 };
}

static int parse_event(reader *r, uint64_t ev_off)
{
    tprof_trace *t = r->t;
    raw_event e = { .device = -1, .stream = -1, .correlation = -1, .external_id = -1, .flow_id = -1,
                    .bytes = -1 };
    tprof_json_token tok;
    int rc;
    r->name_len = 0;
    for (;;) {
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) break;
        const char *k = tok.text;
        size_t kl = tok.len;
        if (kl == 4 && memcmp(k, "args", 4) == 0) {
            if ((rc = tprof_json_next(r->j, &tok))) return rc;
            if (tok.type == TPROF_JSON_OBJ_BEGIN) {
                if ((rc = parse_args(r, &e))) return rc;
            } else if (tok.type == TPROF_JSON_ARR_BEGIN && (rc = tprof_json_skip_container(r->j)))
                return rc;
            continue;
        }
        int which = 0; /* 1 ph 2 cat 3 name 4 ts 5 dur 6 pid 7 tid 8 id */
        if (kl == 2) {
            if (k[0] == 'p' && k[1] == 'h') which = 1;
            else if (k[0] == 't' && k[1] == 's') which = 4;
            else if (k[0] == 'i' && k[1] == 'd') which = 8;
        } else if (kl == 3) {
            if (!memcmp(k, "cat", 3)) which = 2;
            else if (!memcmp(k, "dur", 3)) which = 5;
            else if (!memcmp(k, "pid", 3)) which = 6;
            else if (!memcmp(k, "tid", 3)) which = 7;
        } else if (kl == 4 && !memcmp(k, "name", 4))
            which = 3;
        if (!which) {
            if ((rc = tprof_json_skip_value(r->j))) return rc;
            continue;
        }
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_BEGIN || tok.type == TPROF_JSON_ARR_BEGIN) {
            if ((rc = tprof_json_skip_container(r->j))) return rc;
            continue;
        }
        switch (which) {
        case 1: e.ph = tok.type == TPROF_JSON_STRING && tok.len >= 1 ? tok.text[0] : '?'; break;
        case 2:
            if (tok.type == TPROF_JSON_STRING) {
                e.has_cat = 1;
                e.cat = intern(r, tok.text, tok.len);
            }
            break;
        case 3:
            if (tok.type == TPROF_JSON_STRING) {
                if ((rc = set_name(r, &tok))) return rc;
                e.has_name = 1;
            }
            break;
        case 4:
            e.has_ts = 1;
            if (tok_us(&tok, &e.ts)) e.ts_bad = 1;
            break;
        case 5:
            if (tok_us(&tok, &e.dur) == 0) e.has_dur = 1;
            break;
        case 6: e.pid = id_value(r, &tok, &e.flags, TPROF_EV_PID_STR); e.has_pid = 1; break;
        case 7: e.tid = id_value(r, &tok, &e.flags, TPROF_EV_TID_STR); e.has_tid = 1; break;
        case 8: {
            int64_t v;
            if (tok_int(&tok, &v) == 0) e.flow_id = v;
            else if (tok.type == TPROF_JSON_STRING)
                e.flow_id = (int64_t)(tprof_hash_bytes(tok.text, tok.len) >> 1);
            break;
        }
        }
    }

    /* the event is complete: count it, check it, keep it if asked */
    tprof_trace_meta *m = &t->meta;
    m->nevents++;
    uint32_t cat = e.has_cat ? e.cat : 0;
    if (grow((void **)&t->cat_counts, &t->cat_counts_cap, (size_t)cat + 1, sizeof *t->cat_counts))
        return TPROF_ENOMEM;
    t->cat_counts[cat]++;
    tprof_kind kind = kind_of(r, &e);
    m->kind_counts[kind]++;
    int64_t dur = 0;
    uint8_t flags = e.flags;
    if (kind != TPROF_KIND_META) {
        if (!e.has_ts) warn_at(r, &m->warn.ts_missing, ev_off);
        else if (e.ts_bad) warn_at(r, &m->warn.ts_bad, ev_off);
    }
    if (e.ph == 'X') {
        if (!e.has_dur) {
            warn_at(r, &m->warn.dur_missing, ev_off);
            flags |= TPROF_EV_NO_DUR;
        } else if (e.dur < 0) {
            warn_at(r, &m->warn.dur_negative, ev_off);
            flags |= TPROF_EV_BAD_DUR;
        } else if (e.dur > NS_PER_DAY) {
            warn_at(r, &m->warn.dur_absurd, ev_off);
            flags |= TPROF_EV_BAD_DUR;
        } else
            dur = e.dur;
    }
    int timed = e.has_ts && !e.ts_bad && kind != TPROF_KIND_META;
    if (timed) {
        if (e.ts < m->ts_min) m->ts_min = e.ts;
        if (e.ts + dur > m->ts_max) m->ts_max = e.ts + dur;
    }
    if (kind == TPROF_KIND_GPU) {
        if (e.device < 0 && e.has_pid && !(flags & TPROF_EV_PID_STR)) e.device = e.pid;
        if (e.stream < 0 && e.has_tid && !(flags & TPROF_EV_TID_STR)) e.stream = e.tid;
        add_track(t, e.device, e.stream);
    }
    int is_step = kind == TPROF_KIND_CPU && e.ph == 'X' && timed && e.has_name &&
                  r->name_len > 13 && memcmp(r->name_buf, "ProfilerStep#", 13) == 0;
    if (is_step) {
        r->name_buf[r->name_len] = 0;
        if ((rc = add_step(t, r->name_buf, e.ts, dur))) return rc;
        flags |= TPROF_EV_STEP;
    }
    if (!(r->opts->keep & TPROF_KEEP(kind)) && !is_step) return 0;
    if (!timed && kind != TPROF_KIND_META) return 0;
    if (grow((void **)&t->ev, &t->evcap, t->nev + 1, sizeof *t->ev)) return TPROF_ENOMEM;
    tprof_event *ev = &t->ev[t->nev];
    uint32_t name = e.has_name ? intern(r, r->name_buf, r->name_len) : 0;
    if (name == UINT32_MAX || cat == UINT32_MAX) return TPROF_ENOMEM;
    uint8_t klass = TPROF_CLASS_COMPUTE;
    if (kind == TPROF_KIND_GPU) {
        if (grow((void **)&t->class_of_name, &t->class_of_name_cap, (size_t)name + 1, 1)) return TPROF_ENOMEM;
        uint8_t c = t->class_of_name[name];
        if (!c) {
            c = (uint8_t)(tprof_classify(r->opts->classifier, tprof_strtab_get(&t->strs, cat),
                                         tprof_strtab_get(&t->strs, name)) + 1);
            t->class_of_name[name] = c;
        }
        klass = (uint8_t)(c - 1);
    }
    *ev = (tprof_event){
        .ts = e.has_ts && !e.ts_bad ? e.ts : 0,
        .dur = dur,
        .pid = e.pid,
        .tid = e.tid,
        .correlation = e.correlation,
        .external_id = e.external_id,
        .flow_id = e.flow_id,
        .bytes = e.bytes,
        .name = name,
        .cat = cat,
        .device = (int32_t)e.device,
        .stream = (int32_t)e.stream,
        .ph = e.ph,
        .kind = (uint8_t)kind,
        .klass = klass,
        .flags = flags,
    };
    t->nev++;
    return 0;
}

static void maybe_progress(reader *r)
{
    if (!r->opts->progress || !r->src) return;
    uint64_t in = tprof_source_bytes_in(r->src);
    if (in >= r->next_progress) {
        r->opts->progress(r->opts->progress_ctx, r->t->path, in, tprof_source_file_size(r->src));
        r->next_progress = in + PROGRESS_EVERY;
    }
}

/* Reads the elements of traceEvents (after its '['). */
static int parse_events(reader *r)
{
    tprof_json_token tok;
    int rc;
    for (uint64_t i = 0;; i++) {
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_ARR_END) return 0;
        if (tok.type == TPROF_JSON_OBJ_BEGIN) {
            if ((rc = parse_event(r, tok.offset))) return rc;
            if ((i & 4095) == 0) maybe_progress(r);
            continue;
        }
        if (i == 0) {
            snprintf(r->t->trunc_msg, sizeof r->t->trunc_msg,
                     "%s: byte %llu: not a trace: expected an event object in the event array, found %s",
                     r->t->path, (unsigned long long)tok.offset,
                     tok.type == TPROF_JSON_ARR_BEGIN ? "an array" : "a scalar");
            return TPROF_ENOTTRACE;
        }
        warn_at(r, &r->t->meta.warn.non_object_events, tok.offset);
        if ((tok.type == TPROF_JSON_ARR_BEGIN) && (rc = tprof_json_skip_container(r->j))) return rc;
    }
}

static int parse_devices(reader *r)
{
    tprof_trace *t = r->t;
    tprof_json_token tok;
    int rc;
    if ((rc = tprof_json_next(r->j, &tok))) return rc;
    if (tok.type != TPROF_JSON_ARR_BEGIN) {
        if (tok.type == TPROF_JSON_OBJ_BEGIN) return tprof_json_skip_container(r->j);
        return 0;
    }
    for (;;) {
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_ARR_END) return 0;
        if (tok.type != TPROF_JSON_OBJ_BEGIN) {
            if (tok.type == TPROF_JSON_ARR_BEGIN && (rc = tprof_json_skip_container(r->j))) return rc;
            continue;
        }
        if (grow((void **)&t->devices, &t->devcap, t->ndev + 1, sizeof *t->devices)) return TPROF_ENOMEM;
        tprof_device *d = &t->devices[t->ndev++];
        *d = (tprof_device){ .id = (int64_t)t->ndev - 1, .name = "", .total_memory = -1, .num_sms = -1 };
        for (;;) {
            if ((rc = tprof_json_next(r->j, &tok))) return rc;
            if (tok.type == TPROF_JSON_OBJ_END) break;
            int which = KEYIS(&tok, "id") ? 1 : KEYIS(&tok, "name") ? 2 : KEYIS(&tok, "totalGlobalMem") ? 3
                      : KEYIS(&tok, "numSms") ? 4 : KEYIS(&tok, "computeMajor") ? 5
                      : KEYIS(&tok, "computeMinor") ? 6 : 0;
            if ((rc = tprof_json_next(r->j, &tok))) return rc;
            if (tok.type == TPROF_JSON_OBJ_BEGIN || tok.type == TPROF_JSON_ARR_BEGIN) {
                if ((rc = tprof_json_skip_container(r->j))) return rc;
                continue;
            }
            int64_t v = -1;
            if (which == 2 && tok.type == TPROF_JSON_STRING)
                d->name = tprof_strtab_get(&t->strs, intern(r, tok.text, tok.len));
            else if (which && which != 2 && tok_int(&tok, &v) == 0) {
                if (which == 1) d->id = v;
                if (which == 3) d->total_memory = v;
                if (which == 4) d->num_sms = v;
                if (which == 5) d->compute_major = (int)v;
                if (which == 6) d->compute_minor = (int)v;
            }
        }
    }
}

static int parse_distributed(reader *r)
{
    tprof_trace *t = r->t;
    tprof_json_token tok;
    int rc;
    if ((rc = tprof_json_next(r->j, &tok))) return rc;
    if (tok.type != TPROF_JSON_OBJ_BEGIN) {
        if (tok.type == TPROF_JSON_ARR_BEGIN) return tprof_json_skip_container(r->j);
        return 0;
    }
    t->meta.has_distributed = 1;
    for (;;) {
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) return 0;
        int which = KEYIS(&tok, "rank") ? 1 : KEYIS(&tok, "world_size") ? 2 : KEYIS(&tok, "backend") ? 3 : 0;
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_BEGIN || tok.type == TPROF_JSON_ARR_BEGIN) {
            if ((rc = tprof_json_skip_container(r->j))) return rc;
            continue;
        }
        int64_t v;
        if (which == 3 && tok.type == TPROF_JSON_STRING)
            t->meta.backend = tprof_strtab_get(&t->strs, intern(r, tok.text, tok.len));
        else if (which == 1 && tok_int(&tok, &v) == 0)
            t->meta.rank = v;
        else if (which == 2 && tok_int(&tok, &v) == 0)
            t->meta.world_size = v;
    }
}

/* A top-level scalar or string value (after its key). */
static int parse_top_scalar(reader *r, int which)
{
    tprof_trace *t = r->t;
    tprof_json_token tok;
    int rc = tprof_json_next(r->j, &tok);
    if (rc) return rc;
    if (tok.type == TPROF_JSON_OBJ_BEGIN || tok.type == TPROF_JSON_ARR_BEGIN)
        return tprof_json_skip_container(r->j);
    int64_t v;
    switch (which) {
    case 1:
        if (tok_int(&tok, &v) == 0) { t->meta.has_schema_version = 1; t->meta.schema_version = v; }
        break;
    case 2:
        if (tok_int(&tok, &v) == 0) { t->meta.has_base_time = 1; t->meta.base_time_ns = v; }
        break;
    case 3:
        if (tok.type == TPROF_JSON_STRING)
            t->meta.display_time_unit = tprof_strtab_get(&t->strs, intern(r, tok.text, tok.len));
        break;
    case 4:
        if (tok.type == TPROF_JSON_STRING)
            t->meta.trace_name = tprof_strtab_get(&t->strs, intern(r, tok.text, tok.len));
        break;
    }
    return 0;
}

static int parse_document(reader *r)
{
    tprof_trace *t = r->t;
    tprof_json_token tok;
    int rc = tprof_json_next(r->j, &tok);
    if (rc) return rc;
    if (tok.type == TPROF_JSON_ARR_BEGIN) {
        t->meta.form = TPROF_FORM_ARRAY;
        if ((rc = parse_events(r))) return rc;
    } else if (tok.type == TPROF_JSON_OBJ_BEGIN) {
        t->meta.form = TPROF_FORM_OBJECT;
        int saw_events = 0;
        for (;;) {
            if ((rc = tprof_json_next(r->j, &tok))) return rc;
            if (tok.type == TPROF_JSON_OBJ_END) break;
            if (KEYIS(&tok, "traceEvents")) {
                uint64_t off = tok.offset;
                if ((rc = tprof_json_next(r->j, &tok))) return rc;
                if (tok.type != TPROF_JSON_ARR_BEGIN) {
                    snprintf(t->trunc_msg, sizeof t->trunc_msg,
                             "%s: byte %llu: not a trace: \"traceEvents\" is not an array", t->path,
                             (unsigned long long)off);
                    return TPROF_ENOTTRACE;
                }
                saw_events = 1;
                if ((rc = parse_events(r))) return rc;
            } else if (KEYIS(&tok, "deviceProperties")) {
                if ((rc = parse_devices(r))) return rc;
            } else if (KEYIS(&tok, "distributedInfo")) {
                if ((rc = parse_distributed(r))) return rc;
            } else {
                int which = KEYIS(&tok, "schemaVersion") ? 1 : KEYIS(&tok, "baseTimeNanoseconds") ? 2
                          : KEYIS(&tok, "displayTimeUnit") ? 3 : KEYIS(&tok, "traceName") ? 4 : 0;
                if ((rc = which ? parse_top_scalar(r, which) : tprof_json_skip_value(r->j))) return rc;
            }
        }
        if (!saw_events) {
            snprintf(t->trunc_msg, sizeof t->trunc_msg,
                     "%s: byte %llu: not a trace: the JSON object has no \"traceEvents\" array "
                     "(expected a Chrome/Kineto trace)",
                     t->path, (unsigned long long)tok.offset);
            return TPROF_ENOTTRACE;
        }
    } else {
        snprintf(t->trunc_msg, sizeof t->trunc_msg,
                 "%s: byte %llu: not a trace: expected '{' (a trace object) or '[' (an event array), "
                 "found a scalar",
                 t->path, (unsigned long long)tok.offset);
        return TPROF_ENOTTRACE;
    }
    if ((rc = tprof_json_next(r->j, &tok))) return rc; /* must be the end */
    return 0;
}

static int cmp_step(const void *a, const void *b)
{
    const tprof_step *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}
static int cmp_track(const void *a, const void *b)
{
    const tprof_gpu_track *x = a, *y = b;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}
static int cmp_cat(const void *a, const void *b)
{
    const tprof_cat_count *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return x->cat < y->cat ? -1 : x->cat > y->cat;
}

static int finish(tprof_trace *t)
{
    tprof_trace_meta *m = &t->meta;
    if (t->nsteps) qsort(t->steps, t->nsteps, sizeof *t->steps, cmp_step);
    if (t->ntracks) qsort(t->tracks, t->ntracks, sizeof *t->tracks, cmp_track);
    size_t n = 0;
    for (size_t i = 0; i < t->cat_counts_cap; i++) n += t->cat_counts[i] != 0;
    t->cats = calloc(n ? n : 1, sizeof *t->cats);
    if (!t->cats) return TPROF_ENOMEM;
    n = 0;
    for (size_t i = 0; i < t->cat_counts_cap; i++)
        if (t->cat_counts[i]) t->cats[n++] = (tprof_cat_count){ (uint32_t)i, t->cat_counts[i] };
    if (n) qsort(t->cats, n, sizeof *t->cats, cmp_cat);
    m->cats = t->cats;
    m->ncats = n;
    m->steps = t->steps;
    m->nsteps = t->nsteps;
    m->gpu_tracks = t->tracks;
    m->ngpu_tracks = t->ntracks;
    m->devices = t->devices;
    m->ndevices = t->ndev;
    return 0;
}

static int read_with(tprof_trace **out, tprof_source *src, tprof_json *j, const char *name,
                     const tprof_read_opts *opts, char *errbuf, size_t errlen)
{
    static const tprof_read_opts defaults = { .keep = TPROF_KEEP_ALL };
    *out = NULL;
    tprof_trace *t = calloc(1, sizeof *t);
    if (!t || tprof_strtab_init(&t->strs)) {
        free(t);
        return TPROF_ENOMEM;
    }
    t->path = strdup(name);
    t->meta.path = t->path;
    t->meta.rank = t->meta.world_size = -1;
    t->meta.ts_min = INT64_MAX;
    t->meta.ts_max = INT64_MIN;
    t->meta.warn.first_offset = UINT64_MAX;
    reader r = { .t = t, .j = j, .src = src, .opts = opts ? opts : &defaults };
    int rc = t->path ? parse_document(&r) : TPROF_ENOMEM;
    free(r.name_buf);
    if (src) {
        t->meta.compression = tprof_source_compression(src);
        t->meta.bytes_in = tprof_source_bytes_in(src);
        t->meta.file_size = tprof_source_file_size(src);
    }
    t->meta.bytes_json = tprof_json_offset(j);
    if (rc == TPROF_ETRUNC) {
        t->meta.truncated = 1;
        const char *why = src && tprof_source_errmsg(src)[0] ? tprof_source_errmsg(src) : tprof_json_errmsg(j);
        snprintf(t->trunc_msg, sizeof t->trunc_msg, "%s; results cover the %llu events read before the cut",
                 why, (unsigned long long)t->meta.nevents);
    } else if (rc) {
        if (errbuf) {
            const char *msg = t->trunc_msg[0] ? t->trunc_msg
                            : src && tprof_source_errmsg(src)[0] && rc != TPROF_EFORMAT ? tprof_source_errmsg(src)
                            : tprof_json_errmsg(j);
            if (rc == TPROF_EFORMAT && src && tprof_source_errmsg(src)[0] && strstr(tprof_source_errmsg(src), "corrupt"))
                msg = tprof_source_errmsg(src);
            snprintf(errbuf, errlen, "%s", msg[0] ? msg : tprof_strerror(rc));
        }
        tprof_trace_free(t);
        return rc;
    }
    int frc = finish(t);
    if (frc) {
        tprof_trace_free(t);
        return frc;
    }
    *out = t;
    return rc;
}

int tprof_trace_read(tprof_trace **out, const char *path, const tprof_read_opts *opts, char *errbuf,
                     size_t errlen)
{
    *out = NULL;
    tprof_source *src;
    int rc = tprof_source_open(&src, path, errbuf, errlen);
    if (rc) return rc;
    tprof_json *j;
    rc = tprof_json_open(&j, source_read, src, tprof_source_name(src));
    if (rc) {
        tprof_source_close(src);
        return rc;
    }
    rc = read_with(out, src, j, tprof_source_name(src), opts, errbuf, errlen);
    tprof_json_close(j);
    tprof_source_close(src);
    return rc;
}

int tprof_trace_read_mem(tprof_trace **out, const void *data, size_t len, const char *name,
                         const tprof_read_opts *opts, char *errbuf, size_t errlen)
{
    *out = NULL;
    tprof_source *src;
    int rc = tprof_source_open_mem(&src, data, len, name);
    if (rc) return rc;
    tprof_json *j;
    rc = tprof_json_open(&j, source_read, src, tprof_source_name(src));
    if (rc) {
        tprof_source_close(src);
        return rc;
    }
    rc = read_with(out, src, j, tprof_source_name(src), opts, errbuf, errlen);
    tprof_json_close(j);
    tprof_source_close(src);
    return rc;
}
