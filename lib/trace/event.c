/* One trace event: its fields, the generic token path, and what happens
 * once it is complete (counts, checks, classification, storage). */
#include "reader_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define NS_PER_DAY (86400LL * 1000000000LL)

static int keyis(const char *k, size_t n, const char *lit) { return n == strlen(lit) && memcmp(k, lit, n) == 0; }

event_key tprof_event_key(const char *k, size_t n)
{
    switch (n) {
    case 2:
        if (k[0] == 'p' && k[1] == 'h') return K_PH;
        if (k[0] == 't' && k[1] == 's') return K_TS;
        if (k[0] == 'i' && k[1] == 'd') return K_ID;
        return K_OTHER;
    case 3:
        if (!memcmp(k, "cat", 3)) return K_CAT;
        if (!memcmp(k, "dur", 3)) return K_DUR;
        if (!memcmp(k, "pid", 3)) return K_PID;
        if (!memcmp(k, "tid", 3)) return K_TID;
        return K_OTHER;
    case 4:
        if (!memcmp(k, "name", 4)) return K_NAME;
        if (!memcmp(k, "args", 4)) return K_ARGS;
        return K_OTHER;
    default:
        return K_OTHER;
    }
}

arg_key tprof_arg_key(const char *k, size_t n)
{
    switch (n) {
    case 3: return keyis(k, n, "Seq") ? A_COLL_SEQ : A_OTHER;
    case 18: return keyis(k, n, "Process Group Name") ? A_PG_NAME : A_OTHER;
    case 19: return keyis(k, n, "Process Group Ranks") ? A_PG_RANKS : A_OTHER;
    case 5:
        return keyis(k, n, "bytes") ? A_BYTES : keyis(k, n, "dtype") ? A_DTYPE : keyis(k, n, "Bytes") ? A_MEM_BYTES : A_OTHER;
    case 10:
        if (keyis(k, n, "Input Dims")) return A_INPUT_DIMS;
        if (keyis(k, n, "Input type")) return A_INPUT_TYPE;
        return keyis(k, n, "Group size") ? A_GROUP_SIZE : A_OTHER;
    case 13:
        if (keyis(k, n, "Input Strides")) return A_INPUT_STRIDES;
        if (keyis(k, n, "Fwd thread id")) return A_FWD_TID;
        if (keyis(k, n, "In split size")) return A_IN_SPLIT;
        return keyis(k, n, "In msg nelems") ? A_IN_NELEMS : A_OTHER;
    case 14:
        if (keyis(k, n, "wait_on_stream")) return A_WAIT_STREAM;
        if (keyis(k, n, "Out split size")) return A_OUT_SPLIT;
        return keyis(k, n, "Out msg nelems") ? A_OUT_NELEMS : keyis(k, n, "Total Reserved") ? A_MEM_RESERVED : A_OTHER;
    case 15:
        if (keyis(k, n, "Sequence number")) return A_SEQ;
        if (keyis(k, n, "Concrete Inputs")) return A_CONCRETE_INPUTS;
        return keyis(k, n, "Collective name") ? A_COLL : keyis(k, n, "Total Allocated") ? A_MEM_ALLOC : A_OTHER;
    case 6: return keyis(k, n, "device") ? A_DEVICE : keyis(k, n, "stream") ? A_STREAM : A_OTHER;
    case 9:
        if (keyis(k, n, "Task Type")) return A_TASK_TYPE;
        if (keyis(k, n, "Stream Id")) return A_STREAM;
        return keyis(k, n, "Device Id") ? A_MEM_DEVICE : A_OTHER;
    case 33: return keyis(k, n, "wait_on_cuda_event_record_corr_id") ? A_WAIT_RECORD : A_OTHER;
    case 11:
        if (keyis(k, n, "correlation")) return A_CORRELATION;
        if (keyis(k, n, "External id") || keyis(k, n, "external id")) return A_EXTERNAL_ID;
        return A_OTHER;
    default: return A_OTHER;
    }
}

/* Every field up to the text buffers as a new event starts: -1 (absent)
 * then 0; copied in one go (a constant-size copy the compiler inlines). */
static const raw_event blank_event = {
    .device = -1, .stream = -1, .correlation = -1, .external_id = -1, .flow_id = -1, .bytes = -1,
    .in_nelems = -1, .out_nelems = -1, .group_size = -1, .coll_seq = -1, .mem_device = -1, .mem_alloc = -1, .mem_reserved = -1,
    .seq = -1, .fwd_tid = -1, .wait_stream = -1, .wait_record = -1,
};

void tprof_raw_event_init(reader *r, raw_event *e)
{
    memcpy(e, &blank_event, offsetof(raw_event, coll));
    r->name_len = 0;
}

static int oparg_room(reader *r, size_t len)
{
    if (r->oparg_used + len <= r->oparg_cap) return 0;
    return tprof_grow_items((void **)&r->oparg_buf, &r->oparg_cap, r->oparg_used + len, 1);
}

/* The memo of a reader's op arg values: a run repeats a few dozen shapes, so
 * the bytes of a value met before give its string id without compacting and
 * interning it again. A slot holds the value's bytes as written; values
 * longer than OPARG_MEMO_MAX are not memoised. */
#define OPARG_MEMO_SLOTS 1024u /* a power of two */
#define OPARG_MEMO_PROBES 4u
#define OPARG_MEMO_MAX 1024u
#define OPARG_MEMO_ARENA (1u << 20) /* past this many bytes of values the memo starts again */
typedef struct {
    uint64_t hash;
    uint32_t off, len; /* the bytes in raw[]; len 0: an empty slot */
    uint32_t id;
} memo_slot;
struct tprof_oparg_memo {
    memo_slot slot[OPARG_MEMO_SLOTS];
    char *raw;
    size_t used, cap;
};

void tprof_reader_release(reader *r)
{
    free(r->name_buf);
    free(r->oparg_buf);
    if (r->oparg_memo) free(r->oparg_memo->raw);
    free(r->oparg_memo);
}

/* The slot of TEXT in the memo, or NULL (*HOME: where to put it). */
static memo_slot *memo_find(struct tprof_oparg_memo *m, uint64_t h, const char *text, size_t len, memo_slot **home)
{
    *home = NULL;
    for (unsigned i = 0; i < OPARG_MEMO_PROBES; i++) {
        memo_slot *s = &m->slot[(h + i) & (OPARG_MEMO_SLOTS - 1)];
        if (!s->len) {
            if (!*home) *home = s;
            continue;
        }
        if (s->hash == h && s->len == len && !memcmp(m->raw + s->off, text, len)) return s;
    }
    if (!*home) *home = &m->slot[h & (OPARG_MEMO_SLOTS - 1)]; /* all taken: the first is replaced */
    return NULL;
}

/* Remembers TEXT as string ID in HOME; out of memory, it is only not memoised. */
static void memo_put(struct tprof_oparg_memo *m, memo_slot *home, uint64_t h, const char *text, size_t len,
                     uint32_t id)
{
    if (m->used + len > OPARG_MEMO_ARENA) { /* start again: the run's shapes have changed */
        memset(m->slot, 0, sizeof m->slot);
        m->used = 0;
    }
    if (m->used + len > m->cap && tprof_grow_items((void **)&m->raw, &m->cap, m->used + len, 1)) return;
    memcpy(m->raw + m->used, text, len);
    *home = (memo_slot){ .hash = h, .off = (uint32_t)m->used, .len = (uint32_t)len, .id = id };
    m->used += len;
}

/* Sets op arg K of E to the string id of the reader's buffer from START. */
static int oparg_intern(reader *r, raw_event *e, arg_key k, size_t start)
{
    uint32_t id = tprof_reader_intern(r, r->oparg_buf + start, r->oparg_used - start);
    if (id == UINT32_MAX) return TPROF_ENOMEM;
    tprof_oparg_set(e, k, id);
    return 0;
}

int tprof_oparg_put(reader *r, raw_event *e, arg_key k, const char *text, size_t len)
{
    struct tprof_oparg_memo *m = r->oparg_memo;
    if (!m && len <= OPARG_MEMO_MAX) m = r->oparg_memo = calloc(1, sizeof *m); /* NULL: no memo */
    uint64_t h = 0;
    memo_slot *home = NULL;
    if (m && len <= OPARG_MEMO_MAX) {
        h = tprof_hash_bytes(text, len);
        memo_slot *s = memo_find(m, h, text, len, &home);
        if (s) {
            tprof_oparg_set(e, k, s->id);
            return 0;
        }
    }
    r->oparg_used = 0;
    if (oparg_room(r, len)) return TPROF_ENOMEM;
    char *out = r->oparg_buf;
    size_t n = 0;
    int in_string = 0, escape = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (escape) escape = 0;
            else if (c == '\\') escape = 1;
            else if (c == '"') in_string = 0;
        } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        else if (c == '"')
            in_string = 1;
        out[n++] = c;
    }
    r->oparg_used = n;
    int rc = oparg_intern(r, e, k, 0);
    if (!rc && home) memo_put(m, home, h, text, len, e->oparg_id[k - A_INPUT_DIMS]);
    return rc;
}

/* The generic path's op arg: the container whose first token was read,
 * written token by token as compact JSON (strings escaped again), so that
 * it reads as the fast path's copy of the same bytes. */
static int oparg_slow(reader *r, raw_event *e, arg_key k, const tprof_json_token *first)
{
    r->oparg_used = 0;
    tprof_json_token tok = *first;
    int depth = 0, rc, need_comma = 0;
    for (;;) {
        int closing = tok.type == TPROF_JSON_OBJ_END || tok.type == TPROF_JSON_ARR_END;
        if (need_comma && !closing) {
            if (oparg_room(r, 1)) return TPROF_ENOMEM;
            r->oparg_buf[r->oparg_used++] = ',';
        }
        switch (tok.type) {
        case TPROF_JSON_OBJ_BEGIN:
        case TPROF_JSON_ARR_BEGIN:
        case TPROF_JSON_OBJ_END:
        case TPROF_JSON_ARR_END: {
            static const char mark[] = { [TPROF_JSON_OBJ_BEGIN] = '{', [TPROF_JSON_OBJ_END] = '}',
                                         [TPROF_JSON_ARR_BEGIN] = '[', [TPROF_JSON_ARR_END] = ']' };
            if (oparg_room(r, 1)) return TPROF_ENOMEM;
            r->oparg_buf[r->oparg_used++] = mark[tok.type];
            depth += closing ? -1 : 1;
            need_comma = closing;
            break;
        }
        case TPROF_JSON_KEY:
        case TPROF_JSON_STRING:
            if (oparg_room(r, 6 * tok.len + 3)) return TPROF_ENOMEM;
            r->oparg_buf[r->oparg_used++] = '"';
            for (size_t i = 0; i < tok.len; i++) {
                unsigned char c = (unsigned char)tok.text[i];
                if (c == '"' || c == '\\') {
                    r->oparg_buf[r->oparg_used++] = '\\';
                    r->oparg_buf[r->oparg_used++] = (char)c;
                } else if (c < 0x20)
                    r->oparg_used += (size_t)snprintf(r->oparg_buf + r->oparg_used, 7, "\\u%04x", c);
                else
                    r->oparg_buf[r->oparg_used++] = (char)c;
            }
            r->oparg_buf[r->oparg_used++] = '"';
            if (tok.type == TPROF_JSON_KEY) r->oparg_buf[r->oparg_used++] = ':';
            need_comma = tok.type == TPROF_JSON_STRING;
            break;
        default: /* a number as written, or a literal */
        {
            const char *lit = tok.type == TPROF_JSON_TRUE ? "true" : tok.type == TPROF_JSON_FALSE ? "false" : "null";
            const char *text = tok.type == TPROF_JSON_NUMBER ? tok.text : lit;
            size_t n = tok.type == TPROF_JSON_NUMBER ? tok.len : strlen(lit);
            if (oparg_room(r, n)) return TPROF_ENOMEM;
            memcpy(r->oparg_buf + r->oparg_used, text, n);
            r->oparg_used += n;
            need_comma = 1;
        }
        }
        if (depth == 0) break;
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
    }
    return oparg_intern(r, e, k, 0);
}

static int parse_int(value_type type, const char *text, size_t len, int64_t *out)
{
    return type == V_LITERAL ? TPROF_EFORMAT : tprof_json_parse_int(text, len, out);
}

int tprof_event_set(reader *r, raw_event *e, event_key key, value_type type, const char *text, size_t len)
{
    int64_t v;
    switch (key) {
    case K_PH:
        e->ph = type == V_STRING && len >= 1 ? text[0] : '?';
        break;
    case K_CAT:
        if (type == V_STRING) {
            e->has_cat = 1;
            e->cat = tprof_reader_intern(r, text, len);
            if (e->cat == UINT32_MAX) return TPROF_ENOMEM;
        }
        break;
    case K_NAME:
        if (type != V_STRING) break;
        if (len + 1 > r->name_cap) {
            size_t n = r->name_cap ? r->name_cap : 256;
            while (n < len + 1) n *= 2;
            char *b = realloc(r->name_buf, n);
            if (!b) return TPROF_ENOMEM;
            r->name_buf = b;
            r->name_cap = n;
        }
        memcpy(r->name_buf, text, len);
        r->name_len = len;
        e->has_name = 1;
        break;
    case K_TS:
        e->has_ts = 1;
        e->ts_bad = type == V_LITERAL || tprof_json_parse_scaled(text, len, 3, &e->ts) != 0;
        break;
    case K_DUR:
        e->has_dur = 1;
        e->dur_bad = type == V_LITERAL || tprof_json_parse_scaled(text, len, 3, &e->dur) != 0;
        break;
    case K_PID:
    case K_TID: {
        /* numbers, numeric strings, or names ("Spans", "stream 7"); the
         * last one written counts, and says whether it is a name */
        int64_t *dst = key == K_PID ? &e->pid : &e->tid;
        uint8_t is_name = key == K_PID ? TPROF_EV_PID_STR : TPROF_EV_TID_STR;
        if (key == K_PID) e->has_pid = 1;
        else e->has_tid = 1;
        e->flags &= (uint8_t)~is_name;
        if (parse_int(type, text, len, &v) == 0) *dst = v;
        else if (type == V_STRING) {
            e->flags |= is_name;
            uint32_t id = tprof_reader_intern(r, text, len);
            if (id == UINT32_MAX) return TPROF_ENOMEM;
            *dst = id;
        } else
            *dst = 0;
        break;
    }
    case K_ID:
        if (parse_int(type, text, len, &v) == 0) e->flow_id = v;
        else if (type == V_STRING) e->flow_id = (int64_t)(tprof_hash_bytes(text, len) >> 1);
        break;
    default:
        break;
    }
    return 0;
}

void tprof_event_set_arg(raw_event *e, arg_key key, value_type type, const char *text, size_t len)
{
    if (key == A_TASK_TYPE) {
        e->task_type = 1;
        return;
    }
    if (key == A_COLL || key == A_DTYPE || key == A_PG_NAME) { /* short names, kept (cut at the buffer) */
        if (type != V_STRING) return;
        char *dst = key == A_COLL ? e->coll : key == A_DTYPE ? e->dtype : e->pg;
        size_t cap = key == A_COLL ? sizeof e->coll : key == A_DTYPE ? sizeof e->dtype : sizeof e->pg;
        size_t n = len < cap ? len : cap;
        memcpy(dst, text, n);
        if (key == A_COLL) e->coll_len = (uint8_t)n;
        else if (key == A_DTYPE) e->dtype_len = (uint8_t)n;
        else e->pg_len = (uint8_t)n;
        return;
    }
    int64_t *dst = tprof_arg_slot(e, key), v;
    if (dst && parse_int(type, text, len, &v) == 0) *dst = v;
}

int tprof_event_set_list(reader *r, raw_event *e, arg_key k, value_type type, const char *text, size_t len)
{
    if (type != V_STRING || !(r->opts->keep & TPROF_KEEP_CALLS)) return 0;
    uint32_t id = tprof_reader_intern(r, text, len);
    if (id == UINT32_MAX) return TPROF_ENOMEM;
    e->lists[k - A_IN_SPLIT] = id + 1;
    return 0;
}

static value_type token_value_type(const tprof_json_token *t)
{
    return t->type == TPROF_JSON_NUMBER ? V_NUMBER : t->type == TPROF_JSON_STRING ? V_STRING : V_LITERAL;
}

static int is_container(const tprof_json_token *t)
{
    return t->type == TPROF_JSON_OBJ_BEGIN || t->type == TPROF_JSON_ARR_BEGIN;
}

/* The generic path: the event's members token by token. */
static int parse_args_slow(reader *r, raw_event *e)
{
    tprof_json_token tok;
    int rc;
    for (;;) {
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) return 0;
        arg_key k = tprof_arg_key(tok.text, tok.len);
        if (k == A_OTHER) {
            if ((rc = tprof_json_skip_value(r->j))) return rc;
            continue;
        }
        if (k == A_TASK_TYPE) e->task_type = 1;
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (k == A_TASK_TYPE) { /* as the fast path: a string names the task's category */
            e->task_cat = 0;
            if (tok.type == TPROF_JSON_STRING) {
                uint32_t id = tprof_reader_intern(r, tok.text, tok.len);
                if (id == UINT32_MAX) return TPROF_ENOMEM;
                e->task_cat = id + 1;
            }
        }
        if (is_container(&tok) && tprof_is_oparg(k) && (r->opts->keep & TPROF_KEEP_OP_ARGS)) {
            if ((rc = oparg_slow(r, e, k, &tok))) return rc;
            continue;
        }
        if (is_container(&tok)) {
            if ((rc = tprof_json_skip_container(r->j))) return rc;
            continue;
        }
        if (tprof_is_call_list(k)) {
            if ((rc = tprof_event_set_list(r, e, k, token_value_type(&tok), tok.text, tok.len))) return rc;
            continue;
        }
        tprof_event_set_arg(e, k, token_value_type(&tok), tok.text, tok.len);
    }
}

static int parse_event_slow(reader *r, raw_event *e)
{
    tprof_json_token tok;
    int rc;
    for (;;) {
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (tok.type == TPROF_JSON_OBJ_END) return 0;
        event_key k = tprof_event_key(tok.text, tok.len);
        if (k == K_OTHER) {
            if ((rc = tprof_json_skip_value(r->j))) return rc;
            continue;
        }
        if ((rc = tprof_json_next(r->j, &tok))) return rc;
        if (k == K_ARGS && tok.type == TPROF_JSON_OBJ_BEGIN) {
            if ((rc = parse_args_slow(r, e))) return rc;
            continue;
        }
        if (is_container(&tok)) {
            if ((rc = tprof_json_skip_container(r->j))) return rc;
            continue;
        }
        if (k != K_ARGS && (rc = tprof_event_set(r, e, k, token_value_type(&tok), tok.text, tok.len))) return rc;
    }
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
    if (tprof_grow((void **)&t->kind_of_cat, &t->kind_of_cat_cap, (size_t)e->cat + 1, 1)) return TPROF_KIND_CPU;
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

static int add_step(tprof_trace *t, const char *name, int64_t ts, int64_t dur)
{
    int64_t n = 0;
    const char *p = name + strlen("ProfilerStep#");
    if (tprof_json_parse_int(p, strlen(p), &n)) n = -1;
    return tprof_trace_add_step(t, n, ts, dur);
}

/* Counts an event of the thread; its index in t->threads, or SIZE_MAX
 * (out of memory). */
static size_t add_thread(tprof_trace *t, int64_t pid, int64_t tid, uint8_t flags)
{
    flags &= TPROF_EV_PID_STR | TPROF_EV_TID_STR;
    /* events come in runs per thread: try the last one first */
    tprof_cpu_track *c = t->last_thread < t->nthreads ? &t->threads[t->last_thread] : NULL;
    if (c && c->pid == pid && c->tid == tid && c->flags == flags) {
        c->events++;
        return t->last_thread;
    }
    size_t i = tprof_trace_thread(t, pid, tid, flags, 1);
    if (i != SIZE_MAX) t->last_thread = i;
    return i;
}

static int8_t clamp_i8(int64_t v) { return v > INT8_MAX ? INT8_MAX : v < INT8_MIN ? INT8_MIN : (int8_t)v; }

/* The string id of the event's name. A direct-mapped memo by length and
 * first bytes answers the names that repeat (ops, runtime calls) with one
 * compare, before hashing and probing the string table. */
static uint32_t name_id(reader *r)
{
    size_t len = r->name_len;
    if (!len) return 0; /* id 0 is the empty string (and the buffer may not exist yet) */
    uint64_t head = 0;
    memcpy(&head, r->name_buf, len < 8 ? len : 8);
    unsigned at = (unsigned)(((head ^ len) * 0x9E3779B97F4A7C15ull) >> 56) % TPROF_NAME_MEMO;
    reader_name *m = &r->names[at];
    const tprof_strtab *st = &r->t->strs;
    if (m->len == len && m->id < st->count && !memcmp(st->strs[m->id], r->name_buf, len)) return m->id;
    uint32_t id = tprof_reader_intern(r, r->name_buf, len);
    if (id != UINT32_MAX && len <= UINT32_MAX) *m = (reader_name){ .id = id, .len = (uint32_t)len };
    return id;
}

/* Whether the plain CPU span E on thread THREAD fits a tprof_host_span. */
static int span_fits(const reader *r, const raw_event *e, size_t thread)
{
    return thread < TPROF_SPAN_THREADS &&
           (!(r->opts->keep & (TPROF_KEEP_OP_ARGS | TPROF_KEEP_AUTOGRAD)) || e->seq <= INT32_MAX);
}

/* Stores a plain CPU span compactly (TPROF_COMPACT_SPANS), with its op args. */
static int store_span(reader *r, const raw_event *e, uint32_t cat, int64_t dur, uint8_t flags, size_t thread)
{
    tprof_trace *t = r->t;
    if (tprof_grow_items((void **)&t->spans, &t->spancap, t->nspans + 1, sizeof *t->spans)) return TPROF_ENOMEM;
    uint32_t name = e->has_name ? name_id(r) : 0, inputs = 0;
    if (name == UINT32_MAX) return TPROF_ENOMEM;
    int32_t seq = -1;
    int8_t fwd_tid = -1;
    if (r->opts->keep & (TPROF_KEEP_OP_ARGS | TPROF_KEEP_AUTOGRAD)) {
        seq = e->seq < 0 ? -1 : (int32_t)e->seq; /* below INT32_MAX: span_fits; any negative one is none */
        fwd_tid = e->fwd_tid < 0 ? -1 : clamp_i8(e->fwd_tid);
        uint32_t arg[TPROF_OP_ARGS] = { 0 };
        for (unsigned k = 0; k < TPROF_OP_ARGS; k++)
            if (e->oparg_mask & (1u << k)) arg[k] = e->oparg_id[k];
        if ((inputs = tprof_trace_intern_inputs(t, arg)) == UINT32_MAX) return TPROF_ENOMEM;
    }
    t->spans[t->nspans++] = (tprof_host_span){ .ts = e->ts, .dur = dur, .name = name, .cat = cat,
                                               .events_before = t->nev > UINT32_MAX ? UINT32_MAX : (uint32_t)t->nev,
                                               .inputs = inputs, .seq = seq, .thread = (uint16_t)thread,
                                               .fwd_tid = fwd_tid, .flags = flags & (TPROF_EV_NO_DUR | TPROF_EV_BAD_DUR) };
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
    if (tprof_grow((void **)&t->tracks, &t->trackcap, t->ntracks + 1, sizeof *t->tracks)) return;
    t->tracks[t->ntracks++] = (tprof_gpu_track){ device, stream, 1 };
}

/* The event is complete: count it, check it, keep it if asked. */
/* tprof_classify with its three parts cached: by name (user rules, name
 * rules) and by category. */
static int gpu_class(reader *r, uint32_t name, uint32_t cat)
{
    tprof_trace *t = r->t;
    if (tprof_grow((void **)&t->class_of_name, &t->class_of_name_cap, (size_t)name + 1, 1) ||
        tprof_grow((void **)&t->class_of_cat, &t->class_of_cat_cap, (size_t)cat + 1, 1))
        return -1;
    uint8_t n = t->class_of_name[name];
    if (!n) {
        const char *s = tprof_strtab_get(&t->strs, name);
        int user = tprof_classify_user(r->opts->classifier, s);
        n = (uint8_t)((user + 1) | ((tprof_classify_name(s) + 1) << 4));
        t->class_of_name[name] = n;
    }
    if ((n & 0xF) != 0) return (n & 0xF) - 1; /* a user rule */
    uint8_t c = t->class_of_cat[cat];
    if (!c) {
        int k = tprof_classify_cat(tprof_strtab_get(&t->strs, cat));
        c = k < 0 ? 0xF : (uint8_t)(k + 1);
        t->class_of_cat[cat] = c;
    }
    if (c != 0xF) return c - 1;
    return (n >> 4) - 1;
}

static int finish_event(reader *r, raw_event *e, uint64_t ev_off)
{
    tprof_trace *t = r->t;
    int rc;
    tprof_trace_meta *m = &t->meta;
    m->nevents++;
    uint32_t cat = e->has_cat ? e->cat : 0;
    if (tprof_grow((void **)&t->cat_counts, &t->cat_counts_cap, (size_t)cat + 1, sizeof *t->cat_counts))
        return TPROF_ENOMEM;
    t->cat_counts[cat]++;
    tprof_kind kind = kind_of(r, e);
    m->kind_counts[kind]++;
    int64_t dur = 0;
    uint8_t flags = e->flags;
    /* what makes HTA's pandas column of ts a float one, and so round it */
    if (!e->has_ts) m->ts_absent++;
    else if (!e->ts_bad && e->ts % 1000) m->ts_sub_us++;
    if (kind != TPROF_KIND_META) {
        if (!e->has_ts) warn_at(r, &m->warn.ts_missing, ev_off);
        else if (e->ts_bad) warn_at(r, &m->warn.ts_bad, ev_off);
    }
    if (e->ph == 'X') {
        if (!e->has_dur) {
            warn_at(r, &m->warn.dur_missing, ev_off);
            flags |= TPROF_EV_NO_DUR;
        } else if (e->dur_bad) {
            warn_at(r, &m->warn.dur_invalid, ev_off);
            flags |= TPROF_EV_BAD_DUR;
        } else if (e->dur < 0) {
            warn_at(r, &m->warn.dur_negative, ev_off);
            flags |= TPROF_EV_BAD_DUR;
        } else if (e->dur > NS_PER_DAY) {
            warn_at(r, &m->warn.dur_absurd, ev_off);
            flags |= TPROF_EV_BAD_DUR;
        } else
            dur = e->dur;
    }
    int timed = e->has_ts && !e->ts_bad && kind != TPROF_KIND_META;
    if (timed) {
        if (e->ts < m->ts_min) m->ts_min = e->ts;
        if (tprof_end_ns(e->ts, dur) > m->ts_max) m->ts_max = tprof_end_ns(e->ts, dur);
    }
    if (e->stream >= 0) flags |= TPROF_EV_STREAM_ARG;
    if (kind == TPROF_KIND_GPU) {
        if (e->device < 0 && e->has_pid && !(flags & TPROF_EV_PID_STR)) e->device = e->pid;
        if (e->stream < 0 && e->has_tid && !(flags & TPROF_EV_TID_STR)) e->stream = e->tid;
        add_track(t, e->device, e->stream);
    }
    size_t thread = kind == TPROF_KIND_CPU || kind == TPROF_KIND_RUNTIME ? add_thread(t, e->pid, e->tid, flags) : 0;
    if (thread == SIZE_MAX) return TPROF_ENOMEM; /* every host event's thread is listed (the op tree relies on it) */
    int is_step = kind == TPROF_KIND_CPU && e->ph == 'X' && timed && e->has_name &&
                  r->name_len > 13 && memcmp(r->name_buf, "ProfilerStep#", 13) == 0;
    /* HTA cuts at the latest event so named, whatever its category, unless
     * it sits in HTA's GPU filter (a stream and a correlation) */
    if (e->ph == 'X' && timed && e->has_dur && e->has_cat && e->has_name && r->name_len > 13 &&
        r->name_buf[13] >= '0' && r->name_buf[13] <= '9' && !memcmp(r->name_buf, "ProfilerStep#", 13) &&
        !((flags & TPROF_EV_STREAM_ARG) && e->correlation >= 0) && e->ts > m->step_name_ts_max)
        m->step_name_ts_max = e->ts;
    if (is_step) {
        r->name_buf[r->name_len] = 0;
        if ((rc = add_step(t, r->name_buf, e->ts, dur))) return rc;
        flags |= TPROF_EV_STEP;
    }
    /* phase markers, when asked for: a few per step, plus the autograd engine's spans */
    int is_marker = 0;
    tprof_phase phase = TPROF_PHASE_OTHER;
    if (kind == TPROF_KIND_CPU && e->ph == 'X' && timed && e->has_name && (r->opts->keep & TPROF_KEEP_MARKERS)) {
        r->name_buf[r->name_len] = 0;
        phase = tprof_phase_of(r->opts->classifier, r->name_buf);
        is_marker = phase != TPROF_PHASE_OTHER;
    }
    if (is_marker) flags |= TPROF_EV_MARKER;
    int is_call = kind == TPROF_KIND_CPU && e->ph == 'X' && timed && (r->opts->keep & TPROF_KEEP_CALLS) &&
                  r->name_len == 18 && !memcmp(r->name_buf, "record_param_comms", 18);
    if (is_call) flags |= TPROF_EV_CALL;
    int is_mem = kind == TPROF_KIND_INSTANT && timed && (r->opts->keep & TPROF_KEEP_MEMORY) && r->name_len == 8 &&
                 !memcmp(r->name_buf, "[memory]", 8);
    int is_streamed = (flags & TPROF_EV_STREAM_ARG) && (r->opts->keep & TPROF_KEEP_STREAMED) && e->ph == 'X';
    if (!(r->opts->keep & TPROF_KEEP(kind)) && !is_step && !is_marker && !is_call && !is_mem && !is_streamed)
        return 0;
    if ((r->opts->keep & TPROF_SKIP_PLAIN_FRAMES) && kind == TPROF_KIND_CPU && e->has_cat && !is_step && !is_marker &&
        !(r->name_len >= 11 && !memcmp(r->name_buf, "nn.Module: ", 11))) {
        /* a Python frame of with_stack: most of such a trace, not needed but by ops --by stack */
        if (!r->py_cat && !strcmp(tprof_strtab_get(&t->strs, e->cat), "python_function")) r->py_cat = e->cat + 1;
        if (r->py_cat == e->cat + 1) return 0;
    }
    if (!timed && kind != TPROF_KIND_META) return 0;
    /* what only the op view reads, compactly; a host event with a stream or a
       correlation stays an event (HTA's rules read those) */
    if ((r->opts->keep & TPROF_COMPACT_SPANS) && kind == TPROF_KIND_CPU && e->ph == 'X' && !is_step && !is_marker &&
        !is_call && !(flags & TPROF_EV_STREAM_ARG) && e->correlation < 0 && span_fits(r, e, thread))
        return store_span(r, e, cat, dur, flags, thread);
    if (tprof_grow_items((void **)&t->ev, &t->evcap, t->nev + 1, sizeof *t->ev)) return TPROF_ENOMEM;
    tprof_event *ev = &t->ev[t->nev];
    uint32_t name = e->has_name ? name_id(r) : 0;
    if (name == UINT32_MAX || cat == UINT32_MAX) return TPROF_ENOMEM;
    uint8_t klass = is_marker ? (uint8_t)phase : TPROF_CLASS_COMPUTE;
    if (kind == TPROF_KIND_GPU) {
        int k = gpu_class(r, name, cat);
        if (k < 0) return TPROF_ENOMEM;
        klass = (uint8_t)k;
    }
    *ev = (tprof_event){
        .ts = e->has_ts && !e->ts_bad ? e->ts : 0,
        .dur = dur,
        .pid = e->pid,
        .tid = e->tid,
        .correlation = e->correlation,
        .external_id = e->external_id,
        .flow_id = e->flow_id,
        .bytes = e->bytes,
        .name = name,
        .cat = cat,
        .device = e->device,
        .stream = e->stream,
        .ph = e->ph,
        .kind = (uint8_t)kind,
        .klass = klass,
        .flags = flags,
        .task = e->task_cat ? e->task_cat - 1 : 0,
    };
    if (is_call) {
        if (tprof_grow_items((void **)&t->calls, &t->callcap, t->ncalls + 1, sizeof *t->calls)) return TPROF_ENOMEM;
        uint32_t cn = tprof_reader_intern(r, e->coll, e->coll_len), dt = tprof_reader_intern(r, e->dtype, e->dtype_len);
        uint32_t pg = tprof_reader_intern(r, e->pg, e->pg_len);
        if (cn == UINT32_MAX || dt == UINT32_MAX || pg == UINT32_MAX) return TPROF_ENOMEM;
        t->calls[t->ncalls++] = (tprof_collective_call){ .event = t->nev, .name = cn, .dtype = dt,
                                                         .in_nelems = e->in_nelems, .out_nelems = e->out_nelems,
                                                         .group_size = e->group_size, .group = pg,
                                                         .seq = e->coll_seq,
                                                         .in_splits = e->lists[0] ? e->lists[0] - 1 : 0,
                                                         .out_splits = e->lists[1] ? e->lists[1] - 1 : 0,
                                                         .group_ranks = e->lists[2] ? e->lists[2] - 1 : 0 };
    }
    /* the inputs are copied with TPROF_KEEP_OP_ARGS only: with TPROF_KEEP_AUTOGRAD the mask is 0 */
    if ((r->opts->keep & (TPROF_KEEP_OP_ARGS | TPROF_KEEP_AUTOGRAD)) && kind == TPROF_KIND_CPU &&
        (e->oparg_mask || e->seq >= 0 || e->fwd_tid >= 0)) {
        if (tprof_grow_items((void **)&t->opargs, &t->opargcap, t->nopargs + 1, sizeof *t->opargs))
            return TPROF_ENOMEM;
        tprof_op_args *a = &t->opargs[t->nopargs];
        *a = (tprof_op_args){ .event = t->nev, .seq = e->seq, .fwd_tid = e->fwd_tid };
        for (unsigned k = 0; k < TPROF_OP_ARGS; k++)
            if (e->oparg_mask & (1u << k)) a->arg[k] = e->oparg_id[k];
        t->nopargs++;
    }
    if (kind == TPROF_KIND_GPU && (r->opts->keep & TPROF_KEEP_SYNC) && (e->wait_stream >= 0 || e->wait_record >= 0)) {
        if (tprof_grow_items((void **)&t->syncs, &t->synccap, t->nsyncs + 1, sizeof *t->syncs)) return TPROF_ENOMEM;
        t->syncs[t->nsyncs++] = (tprof_sync_wait){ .event = t->nev, .stream = e->wait_stream,
                                                   .record_correlation = e->wait_record };
    }
    if (is_mem) {
        if (tprof_grow_items((void **)&t->mems, &t->memcap, t->nmems + 1, sizeof *t->mems)) return TPROF_ENOMEM;
        t->mems[t->nmems++] = (tprof_memory_sample){ .event = t->nev, .device = e->mem_device, .bytes = e->mem_bytes,
                                                     .total_allocated = e->mem_alloc,
                                                     .total_reserved = e->mem_reserved };
    }
    t->nev++;
    return 0;
}


int tprof_store_event(reader *r, raw_event *e, uint64_t offset) { return finish_event(r, e, offset); }

int tprof_trace_add_step(tprof_trace *t, int64_t number, int64_t ts, int64_t dur)
{
    if (tprof_grow_items((void **)&t->steps, &t->stepcap, t->nsteps + 1, sizeof *t->steps)) return TPROF_ENOMEM;
    t->steps[t->nsteps++] = (tprof_step){ .number = number, .ts = ts, .dur = dur };
    return 0;
}

int tprof_parse_event(reader *r, uint64_t offset)
{
    raw_event e; /* the fast path starts it blank, at each try */
    int rc = r->opts->generic_only ? 1 : tprof_parse_event_fast(r, &e);
    if (rc == 1) { /* the generic path parses it again from its '{' */
        tprof_raw_event_init(r, &e);
        rc = parse_event_slow(r, &e);
    }
    if (rc) return rc;
    return finish_event(r, &e, offset);
}
