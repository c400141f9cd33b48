/* The streaming Kineto/Chrome trace reader: JSON tokens -> compact events. */
#include "reader_internal.h"
#include "../io/pipe.h"
#include "../json/scan.h"
#include "trainprof/error.h"
#include "trainprof/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROGRESS_EVERY (16u << 20)


static ssize_t source_read(void *ctx, void *buf, size_t cap) { return tprof_source_read(ctx, buf, cap); }

#define KEYIS(tok, lit) ((tok)->len == sizeof(lit) - 1 && memcmp((tok)->text, lit, sizeof(lit) - 1) == 0)

#define grow tprof_grow
#define intern tprof_reader_intern

/* Integer from a number or a numeric string token; 0 on success. */
static int tok_int(const tprof_json_token *tok, int64_t *out)
{
    if (tok->type == TPROF_JSON_NUMBER || tok->type == TPROF_JSON_STRING)
        return tprof_json_parse_int(tok->text, tok->len, out);
    return TPROF_EFORMAT;
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
        uint64_t off;
        if (i > 0 && tprof_json_next_object_element(r->j, &off)) { /* the usual "},\n  {" */
            if ((rc = tprof_parse_event(r, off))) return rc;
            if ((i & 4095) == 0) maybe_progress(r);
            continue;
        }
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_ARR_END) return 0;
        if (tok.type == TPROF_JSON_EOF) return TPROF_CHUNK_END; /* a chunk ended between events */
        if (tok.type == TPROF_JSON_OBJ_BEGIN) {
            if ((rc = tprof_parse_event(r, tok.offset))) return rc;
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

/* Members of the top object, after its '{' (or, resuming a chunk, after the
 * traceEvents array), then the end of the document. */
static int parse_members(reader *r, int saw_events)
{
    tprof_trace *t = r->t;
    tprof_json_token tok;
    int rc;
    for (;;) {
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) break;
        if (KEYIS(&tok, "traceEvents") && saw_events) {
            /* Python's json and browsers keep the last of duplicate keys; a
             * stream cannot take back the first, so it is the one read */
            char note[200];
            snprintf(note, sizeof note, "a second \"traceEvents\" at byte %llu is skipped: the first one is read "
                     "(Python's json would keep the last)", (unsigned long long)tok.offset);
            tprof_trace_set_note(t, note);
            if ((rc = tprof_json_skip_value(r->j))) return rc;
        } else if (KEYIS(&tok, "traceEvents")) {
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
    return tprof_json_next(r->j, &tok); /* must be the end */
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
        return tprof_json_next(r->j, &tok); /* must be the end */
    }
    if (tok.type == TPROF_JSON_OBJ_BEGIN) {
        t->meta.form = TPROF_FORM_OBJECT;
        return parse_members(r, 0);
    }
    snprintf(t->trunc_msg, sizeof t->trunc_msg,
             "%s: byte %llu: not a trace: expected '{' (a trace object) or '[' (an event array), "
             "found a scalar",
             t->path, (unsigned long long)tok.offset);
    return TPROF_ENOTTRACE;
}

void tprof_reader_caches_init(reader_caches *c) { tprof_reader_caches_init_sized(c, -1); }

void tprof_reader_caches_init_sized(reader_caches *c, int64_t json_bytes)
{
    c->skip = js_skip_cache_new_for(json_bytes);
    c->shapes = tprof_shapes_new_for(json_bytes);
    c->readers = 0;
}

void tprof_reader_caches_free(reader_caches *c)
{
    js_skip_cache_free(c->skip);
    tprof_shapes_free(c->shapes);
}

int tprof_parse_chunk(tprof_trace *t, tprof_json *j, const tprof_read_opts *opts, tprof_chunk_start start,
                      reader_caches *caches)
{
    reader r = { .t = t, .j = j, .opts = opts, .skip_cache = caches->skip, .shapes = caches->shapes,
                 .chunk_tag = tprof_reader_caches_tag(caches) };
    int rc;
    if (start == TPROF_CHUNK_DOCUMENT) {
        rc = parse_document(&r);
    } else {
        t->meta.form = start == TPROF_CHUNK_EVENTS_IN_OBJECT ? TPROF_FORM_OBJECT : TPROF_FORM_ARRAY;
        rc = parse_events(&r);
        if (!rc) {
            tprof_json_token tok;
            rc = start == TPROF_CHUNK_EVENTS_IN_OBJECT ? parse_members(&r, 1) : tprof_json_next(j, &tok);
        }
    }
    tprof_reader_release(&r);
    t->meta.bytes_json = tprof_json_offset(j);
    return rc;
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
static int cmp_thread(const void *a, const void *b)
{
    const tprof_cpu_track *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->flags < y->flags ? -1 : x->flags > y->flags; /* a pid written as a number and one as a string */
}
static int cmp_cat(const void *a, const void *b)
{
    const tprof_cat_count *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return x->cat < y->cat ? -1 : x->cat > y->cat;
}

typedef struct {
    tprof_cpu_track c;
    uint32_t was; /* its index before the sort */
} thread_at;
static int cmp_thread_at(const void *a, const void *b) { return cmp_thread(&((const thread_at *)a)->c, &((const thread_at *)b)->c); }

/* Sorts the threads, and the compact spans' thread indexes with them:
 * TPROF_ELIMIT when there are spans and more threads than their index
 * holds (the sort may move a span's thread past it). */
static int sort_threads(tprof_trace *t)
{
    tprof_i64map_free(&t->thread_at); /* by index before the sort */
    if (!t->nspans) {
        if (t->nthreads) qsort(t->threads, t->nthreads, sizeof *t->threads, cmp_thread);
        return 0;
    }
    if (t->nthreads > TPROF_SPAN_THREADS) return TPROF_ELIMIT;
    thread_at *at = malloc(t->nthreads * sizeof *at);
    uint32_t *now = malloc(t->nthreads * sizeof *now);
    if (!at || !now) {
        free(at), free(now);
        return TPROF_ENOMEM;
    }
    for (size_t i = 0; i < t->nthreads; i++) at[i] = (thread_at){ t->threads[i], (uint32_t)i };
    qsort(at, t->nthreads, sizeof *at, cmp_thread_at);
    for (size_t i = 0; i < t->nthreads; i++) {
        t->threads[i] = at[i].c;
        now[at[i].was] = (uint32_t)i;
    }
    for (size_t i = 0; i < t->nspans; i++) t->spans[i].thread = (uint16_t)now[t->spans[i].thread];
    free(at);
    free(now);
    return 0;
}

static int finish(tprof_trace *t)
{
    tprof_trace_meta *m = &t->meta;
    if (t->nsteps) qsort(t->steps, t->nsteps, sizeof *t->steps, cmp_step);
    if (t->ntracks) qsort(t->tracks, t->ntracks, sizeof *t->tracks, cmp_track);
    int rc = sort_threads(t);
    if (rc) return rc;
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
    m->cpu_tracks = t->threads;
    m->ncpu_tracks = t->nthreads;
    m->devices = t->devices;
    m->ndevices = t->ndev;
    return 0;
}

tprof_trace *tprof_trace_new(const char *name)
{
    tprof_trace *t = calloc(1, sizeof *t);
    if (!t || tprof_strtab_init(&t->strs)) {
        free(t);
        return NULL;
    }
    for (int k = 0; k < TPROF_DERIVED_COUNT; k++) pthread_mutex_init(&t->derived_mu[k], NULL);
    t->path = strdup(name);
    if (!t->path) {
        tprof_trace_free(t);
        return NULL;
    }
    t->meta.path = t->path;
    t->meta.rank = t->meta.world_size = -1;
    t->meta.ts_min = INT64_MAX;
    t->meta.ts_max = INT64_MIN;
    t->meta.step_name_ts_max = INT64_MIN;
    t->meta.warn.first_offset = UINT64_MAX;
    return t;
}

void tprof_trace_set_note(tprof_trace *t, const char *note)
{
    if (!note || !note[0]) return;
    char both[1024];
    if (t->meta.note) { /* a second remark joins the first */
        snprintf(both, sizeof both, "%s; %s", t->meta.note, note);
        note = both;
    }
    t->meta.note = tprof_strtab_get(&t->strs, tprof_strtab_intern(&t->strs, note, strlen(note)));
}

int tprof_trace_conclude(tprof_trace **out, tprof_trace *t, int rc, const char *src_msg, const char *json_msg,
                         char *errbuf, size_t errlen)
{
    if (rc == TPROF_ETRUNC) {
        t->meta.truncated = 1;
        snprintf(t->trunc_msg, sizeof t->trunc_msg, "%s; results cover the %llu events read before the cut",
                 src_msg[0] ? src_msg : json_msg, (unsigned long long)t->meta.nevents);
    } else if (rc) {
        /* a reader's own message (not a trace) first, then a decoder's, then the tokenizer's */
        const char *msg = t->trunc_msg[0] ? t->trunc_msg
                        : src_msg[0] && (rc != TPROF_EFORMAT || strstr(src_msg, "corrupt")) ? src_msg
                        : json_msg;
        if (errbuf) snprintf(errbuf, errlen, "%s", msg[0] ? msg : tprof_strerror(rc));
        tprof_trace_free(t);
        return rc;
    }
    int frc = finish(t);
    if (frc) {
        if (frc == TPROF_ELIMIT && errbuf)
            snprintf(errbuf, errlen, "%zu CPU threads with compact spans: more than their index holds (%d)",
                     t->nthreads, TPROF_SPAN_THREADS);
        tprof_trace_free(t);
        return frc;
    }
    *out = t;
    return rc;
}

static const tprof_read_opts default_opts = { .keep = TPROF_KEEP_ALL };

/* One pass over the whole input. */
static int read_sequential(tprof_trace **out, tprof_source *src, tprof_pipe **pipe, tprof_json *j,
                           int64_t json_bytes, const char *name, const tprof_read_opts *opts, char *errbuf,
                           size_t errlen)
{
    *out = NULL;
    tprof_trace *t = tprof_trace_new(name);
    if (!t) return TPROF_ENOMEM;
    reader_caches caches;
    tprof_reader_caches_init_sized(&caches, json_bytes);
    reader r = { .t = t, .j = j, .src = src, .opts = opts ? opts : &default_opts, .skip_cache = caches.skip,
                 .shapes = caches.shapes, .chunk_tag = tprof_reader_caches_tag(&caches) };
    int rc = parse_document(&r);
    tprof_reader_release(&r);
    tprof_reader_caches_free(&caches);
    if (pipe && *pipe) { /* the source is ours again */
        tprof_pipe_stop(*pipe);
        *pipe = NULL;
    }
    if (src) {
        t->meta.compression = tprof_source_compression(src);
        t->meta.bytes_in = tprof_source_bytes_in(src);
        t->meta.file_size = tprof_source_file_size(src);
        t->meta.bytes_json = tprof_source_bytes_out(src);
        tprof_trace_set_note(t, tprof_source_note(src));
    } else
        t->meta.bytes_json = tprof_json_offset(j);
    rc = tprof_trace_conclude(out, t, rc, src ? tprof_source_errmsg(src) : "", tprof_json_errmsg(j), errbuf,
                              errlen);
    if ((rc == TPROF_EFORMAT || rc == TPROF_ENOTTRACE) && src) { /* another kind of file: say which */
        size_t hn;
        const uint8_t *head = tprof_source_head(src, &hn);
        tprof_input_hint_append(head, hn, TPROF_INPUT_BIT(TPROF_INPUT_TRACE), errbuf, errlen);
    }
    return rc;
}

/* Opens the input again (a file path, or a memory buffer when PATH is NULL). */
typedef struct {
    const char *path;
    const void *data;
    size_t len;
    const char *name;
} input;

static int open_input(const input *in, tprof_source **src, char *errbuf, size_t errlen)
{
    return in->path ? tprof_source_open(src, in->path, errbuf, errlen)
                    : tprof_source_open_mem(src, in->data, in->len, in->name);
}

/* The Ascend form of the first bytes HEAD[0..N): TPROF_INPUT_ASCEND_KERNELS,
 * TPROF_INPUT_ASCEND_DB, TPROF_INPUT_ASCEND_JSON when OPTS keep what it
 * holds, else 0. */
static int ascend_kind(const uint8_t *head, size_t n, const tprof_read_opts *opts)
{
    int kind = (int)tprof_input_sniff(head, n);
    if (kind == TPROF_INPUT_ASCEND_KERNELS || kind == TPROF_INPUT_ASCEND_DB) return kind;
    if (kind == TPROF_INPUT_ASCEND_STEPS && (!opts || (opts->keep & TPROF_KEEP_STEP_SPLITS))) return kind;
    if (kind == TPROF_INPUT_ASCEND_JSON && (!opts || (opts->keep & TPROF_KEEP_CALLS))) return kind;
    return 0;
}

/* The same of SRC's first bytes (read through SRC, which is then spent). */
static int opens_as_ascend(tprof_source *src, const tprof_read_opts *opts)
{
    uint8_t head[TPROF_SOURCE_HEAD];
    size_t h = 0;
    ssize_t r;
    while (h < sizeof head && (r = tprof_source_read(src, head + h, sizeof head - h)) > 0) h += (size_t)r;
    return ascend_kind(head, h, opts);
}

/* A database: opened by its path when it is a plain file, else read
 * whole (decompressed) and opened in memory. */
static int read_db(tprof_trace **out, const input *in, tprof_source *src, const tprof_read_opts *opts, char *errbuf,
                   size_t errlen)
{
    const char *name = tprof_source_name(src);
    if (in->path && tprof_source_compression(src) == TPROF_COMP_NONE)
        return tprof_ascend_read_db(out, in->path, NULL, 0, src, name, opts, errbuf, errlen);
    if (!in->path && tprof_source_compression(src) == TPROF_COMP_NONE)
        return tprof_ascend_read_db(out, NULL, in->data, in->len, src, name, opts, errbuf, errlen);
    /* whole in memory, so bounded: a compressed database past this is refused (decompress it) */
    const size_t most = (size_t)16 << 30;
    size_t n = 0, cap = 1 << 20;
    uint8_t *buf = malloc(cap);
    ssize_t r = 0;
    while (buf && (r = tprof_source_read(src, buf + n, cap - n)) > 0)
        if ((n += (size_t)r) == cap) {
            uint8_t *b = cap < most ? realloc(buf, cap * 2) : NULL;
            if (!b && cap >= most) {
                free(buf);
                if (errbuf) snprintf(errbuf, errlen, "%s: a compressed database over %zu GiB: decompress it first", name, most >> 30);
                return TPROF_ELIMIT;
            }
            if (!b) free(buf);
            buf = b, cap *= 2;
        }
    if (!buf) return TPROF_ENOMEM;
    int rc;
    if (r < 0 && r != TPROF_ETRUNC) { /* a decoder's error */
        rc = (int)r;
        if (errbuf) snprintf(errbuf, errlen, "%s: %s", name, tprof_source_errmsg(src));
    } else { /* a cut compressed file: the database reader says how much of it there is */
        rc = tprof_ascend_read_db(out, NULL, buf, n, src, name, opts, errbuf, errlen);
        if (r == TPROF_ETRUNC && *out && !rc) {
            rc = TPROF_ETRUNC;
            (*out)->meta.truncated = 1;
            snprintf((*out)->trunc_msg, sizeof (*out)->trunc_msg, "%.300s; results cover what its pages held",
                     tprof_source_errmsg(src));
        }
    }
    free(buf);
    return rc;
}

/* An Ascend file of KIND (ascend_kind) read from its start. */
static int read_ascend(tprof_trace **out, const input *in, int kind, const tprof_read_opts *opts, char *errbuf,
                       size_t errlen)
{
    tprof_source *src;
    int rc = open_input(in, &src, errbuf, errlen);
    if (rc) return rc;
    if (kind == TPROF_INPUT_ASCEND_DB) {
        rc = read_db(out, in, src, opts ? opts : &default_opts, errbuf, errlen);
        tprof_source_close(src);
        return rc;
    }
    rc = kind == TPROF_INPUT_ASCEND_KERNELS
             ? tprof_ascend_read_kernels(out, src, tprof_source_name(src), opts ? opts : &default_opts, errbuf,
                                         errlen)
         : kind == TPROF_INPUT_ASCEND_STEPS ? tprof_ascend_read_steps(out, src, tprof_source_name(src), errbuf, errlen)
                                            : tprof_ascend_read_comm(out, src, tprof_source_name(src), errbuf, errlen);
    tprof_source_close(src);
    return rc;
}

static int read_input_once(tprof_trace **out, const input *in, const tprof_read_opts *opts, char *errbuf,
                           size_t errlen)
{
    *out = NULL;
    tprof_source *src;
    int rc = open_input(in, &src, errbuf, errlen);
    if (rc) return rc;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    /* a large input that can be read twice: parse chunks on several cores */
    int threads = opts && opts->threads > 0 ? opts->threads : cores > 0 ? (int)cores : 1;
    int64_t size = tprof_source_file_size(src), chunk = (int64_t)tprof_chunk_bytes(opts);
    int big = tprof_source_compression(src) == TPROF_COMP_NONE ? size >= 8 * chunk : size >= chunk;
    int rereadable = !in->path || strcmp(in->path, "-") != 0;
    if (big && rereadable) { /* before the chunks are cut: a table has no events to cut at */
        int kind = opens_as_ascend(src, opts);
        tprof_source_close(src);
        if (kind) return read_ascend(out, in, kind, opts, errbuf, errlen);
        if ((rc = open_input(in, &src, errbuf, errlen))) return rc; /* from its start again */
    }
    if (threads > 1 && big && rereadable && !(opts && opts->generic_only)) {
        /* compressed: this thread decompresses, and parses whenever it is
         * ahead, so it is one of the THREADS (on 2 cores: 0.98 s against
         * 1.035 s median wall for the 1 GiB .gz, 6 alternating pairs) */
        int workers = tprof_source_compression(src) != TPROF_COMP_NONE ? threads - 1 : threads;
        rc = tprof_read_parallel(out, src, tprof_source_name(src), opts ? opts : &default_opts, workers, errbuf,
                                 errlen);
        tprof_source_close(src);
        if (rc != TPROF_PAR_FALLBACK) return rc;
        if ((rc = open_input(in, &src, errbuf, errlen))) return rc; /* start over, one pass */
    }
    /* compressed input: decompress on another core while this one parses
     * (a small input: inline, with a window and caches sized to it) */
    tprof_pipe *pipe = NULL;
    if (tprof_pipe_worth(src) && cores > 1)
        tprof_pipe_start(&pipe, src); /* without it, read inline */
    size_t window = tprof_source_window(src);
    tprof_json *j;
    rc = pipe ? tprof_json_open_sized(&j, tprof_pipe_read, pipe, tprof_source_name(src), window)
              : tprof_json_open_sized(&j, source_read, src, tprof_source_name(src), window);
    if (rc) {
        tprof_pipe_stop(pipe);
        tprof_source_close(src);
        return rc;
    }
    rc = read_sequential(out, src, &pipe, j, tprof_source_json_guess(src), tprof_source_name(src), opts, errbuf,
                         errlen);
    tprof_json_close(j);
    tprof_pipe_stop(pipe);
    /* not a trace: an Ascend kernel table or communication summary is read
     * again as one (a small file: the JSON reader stopped early) */
    size_t hn;
    const uint8_t *head = tprof_source_head(src, &hn);
    int kind = (rc == TPROF_EFORMAT || rc == TPROF_ENOTTRACE || rc == TPROF_ETRUNC) && rereadable
                   ? ascend_kind(head, hn, opts)
                   : 0;
    tprof_source_close(src);
    if (!kind) return rc;
    tprof_trace_free(*out); /* a cut summary read as a trace: nothing in it */
    *out = NULL;
    if (errbuf && errlen) errbuf[0] = 0; /* the JSON reader's complaint is not this one's */
    return read_ascend(out, in, kind, opts, errbuf, errlen);
}

/* read_input_once, and once more with the plain CPU spans as events when
 * compact spans cannot index the trace's threads (more than
 * TPROF_SPAN_THREADS: finish's TPROF_ELIMIT), the input allowing it. */
static int read_input(tprof_trace **out, const input *in, const tprof_read_opts *opts, char *errbuf, size_t errlen)
{
    int rc = read_input_once(out, in, opts, errbuf, errlen);
    int rereadable = !in->path || strcmp(in->path, "-") != 0;
    if (rc == TPROF_ELIMIT && opts && (opts->keep & TPROF_COMPACT_SPANS) && rereadable) {
        tprof_read_opts events = *opts;
        events.keep &= ~TPROF_COMPACT_SPANS;
        if (errbuf && errlen) errbuf[0] = 0;
        rc = read_input_once(out, in, &events, errbuf, errlen);
    }
    return rc;
}

int tprof_trace_read(tprof_trace **out, const char *path, const tprof_read_opts *opts, char *errbuf,
                     size_t errlen)
{
    input in = { .path = path };
    int rc = read_input(out, &in, opts, errbuf, errlen);
    if (*out) tprof_ascend_sidecars(*out, path, opts);
    return rc;
}

int tprof_trace_read_mem(tprof_trace **out, const void *data, size_t len, const char *name,
                         const tprof_read_opts *opts, char *errbuf, size_t errlen)
{
    input in = { .data = data, .len = len, .name = name ? name : "<memory>" };
    return read_input(out, &in, opts, errbuf, errlen);
}
