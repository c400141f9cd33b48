/* Reader state and per-event parsing shared by the document reader, the
 * generic (token) event path and the fast (window) event path. Internal. */
#ifndef TPROF_READER_INTERNAL_H
#define TPROF_READER_INTERNAL_H

#include "shape.h"
#include "trace_internal.h"
#include "trainprof/json.h"

#define TPROF_READER_CATS 8
typedef struct {
    char text[32]; /* up to 31 bytes; compared a vector at a time */
    uint8_t len;   /* the text's length + 1; 0: empty slot */
    uint32_t id;
} reader_cat;

#define TPROF_NAME_MEMO 256
typedef struct {
    uint32_t id, len; /* a name met before and its string id (len 0, id 0: the empty name) */
} reader_name;

typedef struct {
    tprof_trace *t;
    tprof_json *j;
    tprof_source *src;
    const tprof_read_opts *opts;
    uint64_t next_progress;
    char *name_buf; /* the current event's name, copied: interned only if kept */
    size_t name_len, name_cap;
    struct js_skip_cache *skip_cache; /* repeated args values (scan.h); NULL: none */
    tprof_shapes *shapes;             /* event layouts (shape.h); NULL: none */
    event_shape *rec;                 /* the shape being recorded from this event, or NULL */
    const uint8_t *rec_last;          /* where the recording's current stretch starts */
    const uint8_t *rec_value_at;      /* where the value of its last step starts */
    reader_cat cats[TPROF_READER_CATS]; /* recent categories and their ids (event_fast.c) */
    char *oparg_buf; /* an op arg value (Input Dims, ...) in compact JSON, as it is interned */
    size_t oparg_used, oparg_cap;
    struct tprof_oparg_memo *oparg_memo; /* op arg values met before and their ids (event.c) */
    uint32_t chunk_tag; /* this reader among those of its caches (not 0): skip-cache tags it wrote */
    reader_name names[TPROF_NAME_MEMO]; /* event.c name_id */
    uint32_t py_cat;  /* with TPROF_SKIP_PLAIN_FRAMES: the id of "python_function" + 1, 0 not met yet */
} reader;

/* A thread's caches for the fast path, kept across the chunks it parses. */
typedef struct {
    struct js_skip_cache *skip;
    tprof_shapes *shapes;
    uint32_t readers; /* the last reader's chunk_tag */
} reader_caches;
/* The next reader's chunk_tag. */
static inline uint32_t tprof_reader_caches_tag(reader_caches *c) { return ++c->readers ? c->readers : ++c->readers; }
/* Either cache may be left NULL (out of memory): the fast path goes without. */
void tprof_reader_caches_init(reader_caches *c);
/* Sized for about JSON_BYTES of JSON (-1: unknown, full size): a small input
 * gets small caches. */
void tprof_reader_caches_init_sized(reader_caches *c, int64_t json_bytes);
void tprof_reader_caches_free(reader_caches *c);

/* One event's fields as read, before it becomes a record. Laid out for
 * tprof_raw_event_init, which runs once per event: first the fields that
 * start at -1 (absent), then those that start at 0, then the text buffers,
 * which are read only up to their lengths and so need no clearing. */
typedef struct {
    int64_t device, stream, correlation, external_id, flow_id, bytes;
    /* record_param_comms args (PyTorch's record of a collective call) */
    int64_t in_nelems, out_nelems, group_size, coll_seq;
    /* [memory] instant args (the profiler's memory view) */
    int64_t mem_device, mem_alloc, mem_reserved;
    /* a cpu_op's autograd links */
    int64_t seq, fwd_tid;
    /* a cuda_sync event's wait: the stream and the cudaEventRecord it waits on */
    int64_t wait_stream, wait_record;
    /* from here on: 0 */
    char ph;
    uint8_t has_cat, has_name, has_ts, has_dur, has_pid, has_tid, task_type, ts_bad;
    uint8_t dur_bad; /* has_dur, but not a number in range */
    uint32_t cat;
    int64_t ts, dur;
    int64_t pid, tid;
    uint8_t flags;
    int64_t mem_bytes;
    uint8_t coll_len, dtype_len, pg_len;
    uint8_t oparg_mask; /* which of oparg_id are set (1 << (key - A_INPUT_DIMS)) */
    uint32_t task_cat;  /* an Ascend task's "Task Type" string id + 1 (0: none) */
    uint32_t lists[3];  /* "In split size", "Out split size", "Process Group Ranks": string id + 1 (0: none) */
    /* from here on: not cleared */
    char coll[32], dtype[16], pg[48];
    uint32_t oparg_id[TPROF_OP_ARGS]; /* string ids of the compact texts, by tprof_op_arg */
} raw_event;

#include "../util/grow.h"

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
typedef enum {
    A_OTHER = 0, A_BYTES, A_DEVICE, A_STREAM, A_TASK_TYPE, A_CORRELATION, A_EXTERNAL_ID,
    A_COLL, A_DTYPE, A_IN_NELEMS, A_OUT_NELEMS, A_GROUP_SIZE,
    A_MEM_DEVICE, A_MEM_BYTES, A_MEM_ALLOC, A_MEM_RESERVED, A_SEQ, A_FWD_TID,
    A_PG_NAME, A_COLL_SEQ, /* a collective call's process group and its number in the group */
    /* a collective call's lists, kept as the text written (with TPROF_KEEP_CALLS): in the order of raw_event.lists */
    A_IN_SPLIT, A_OUT_SPLIT, A_PG_RANKS,
    A_WAIT_STREAM, A_WAIT_RECORD, /* a cuda_sync event's wait_on_stream, wait_on_cuda_event_record_corr_id */
    /* a cpu_op's inputs, kept as compact JSON text with TPROF_KEEP_OP_ARGS: in
       the order of tprof_op_arg */
    A_INPUT_DIMS, A_INPUT_TYPE, A_INPUT_STRIDES, A_CONCRETE_INPUTS
} arg_key;
static inline int tprof_is_oparg(arg_key k) { return k >= A_INPUT_DIMS && k <= A_CONCRETE_INPUTS; }
/* Sets op arg K of E to the string id of the LEN bytes at TEXT without the
 * whitespace outside strings (both paths intern the same text). Returns 0,
 * or TPROF_ENOMEM. */
int tprof_oparg_put(reader *r, raw_event *e, arg_key k, const char *text, size_t len);
/* Sets op arg K of E to string ID. */
static inline void tprof_oparg_set(raw_event *e, arg_key k, uint32_t id)
{
    unsigned slot = (unsigned)(k - A_INPUT_DIMS);
    e->oparg_id[slot] = id;
    e->oparg_mask |= (uint8_t)(1u << slot);
}
/* A scalar value as written: a number, a string (decoded), or true/false/null. */
typedef enum { V_NUMBER, V_STRING, V_LITERAL } value_type;

event_key tprof_event_key(const char *k, size_t n);
arg_key tprof_arg_key(const char *k, size_t n);
void tprof_raw_event_init(reader *r, raw_event *e);
/* Frees what the reader allocated for itself (not the trace). */
void tprof_reader_release(reader *r);
/* Stores a scalar value of KEY into E; returns 0 or TPROF_ENOMEM. */
int tprof_event_set(reader *r, raw_event *e, event_key key, value_type type, const char *text, size_t len);
void tprof_event_set_arg(raw_event *e, arg_key key, value_type type, const char *text, size_t len);
static inline int tprof_is_call_list(arg_key k) { return k >= A_IN_SPLIT && k <= A_PG_RANKS; }
/* Keeps a collective call's list K (a string, as PyTorch writes them:
 * "[2, 3, 1]"), interned, when the reader keeps calls; 0 or TPROF_ENOMEM. */
int tprof_event_set_list(reader *r, raw_event *e, arg_key k, value_type type, const char *text, size_t len);
/* Where a numeric arg goes, or NULL for the keys that take no number
 * (inline: the fast path sets constant args through it per event). */
static inline int64_t *tprof_arg_slot(raw_event *e, arg_key key)
{
    switch (key) {
    case A_BYTES: return &e->bytes;
    case A_DEVICE: return &e->device;
    case A_STREAM: return &e->stream;
    case A_CORRELATION: return &e->correlation;
    case A_EXTERNAL_ID: return &e->external_id;
    case A_IN_NELEMS: return &e->in_nelems;
    case A_OUT_NELEMS: return &e->out_nelems;
    case A_GROUP_SIZE: return &e->group_size;
    case A_MEM_DEVICE: return &e->mem_device;
    case A_MEM_BYTES: return &e->mem_bytes;
    case A_MEM_ALLOC: return &e->mem_alloc;
    case A_MEM_RESERVED: return &e->mem_reserved;
    case A_SEQ: return &e->seq;
    case A_FWD_TID: return &e->fwd_tid;
    case A_COLL_SEQ: return &e->coll_seq;
    case A_WAIT_STREAM: return &e->wait_stream;
    case A_WAIT_RECORD: return &e->wait_record;
    default: return NULL;
    }
}

/* Where a chunk of a document starts (parallel reading). */
typedef enum {
    TPROF_CHUNK_DOCUMENT = 0,        /* at the beginning of the document */
    TPROF_CHUNK_EVENTS_IN_OBJECT,    /* inside traceEvents of a trace object, before an element */
    TPROF_CHUNK_EVENTS_IN_ARRAY,     /* inside a bare event array, before an element */
} tprof_chunk_start;
#define TPROF_CHUNK_END 1 /* a lenient chunk ended between two events */
/* Why a cut can be trusted: a lenient chunk's tokenizer reports its end as
 * one EOF token only right after '[' or ',' in an array at the event depth,
 * and only the event loop (parse_events) turns that token into
 * TPROF_CHUNK_END; every other parser treats it as an error. So a chunk ends
 * well only inside the traceEvents array, before an element, which is
 * exactly where the next chunk starts. A new parser of metadata arrays must
 * keep treating an unexpected EOF token as an error. */

/* Parses a document, or one chunk of it, into T, with the calling thread's
 * CACHES. Returns 0 at the end of the document, TPROF_CHUNK_END, or an
 * error. */
int tprof_parse_chunk(tprof_trace *t, tprof_json *j, const tprof_read_opts *opts, tprof_chunk_start start,
                      reader_caches *caches);

tprof_trace *tprof_trace_new(const char *name);
void tprof_trace_set_note(tprof_trace *t, const char *note);
/* Ends a read with RC: a truncation note, or the error message (then T is
 * freed), and the final tables. Returns RC (or an allocation failure). */
int tprof_trace_conclude(tprof_trace **out, tprof_trace *t, int rc, const char *src_msg, const char *json_msg,
                         char *errbuf, size_t errlen);
/* Appends what SRC read (a later chunk of the same document) to DST. */
int tprof_trace_absorb(tprof_trace *dst, const tprof_trace *src);
/* Room for NEV events and NSPANS spans in all (an estimate: what is never
 * written stays untouched, so costs no memory once past malloc's mmap
 * threshold). 0 or TPROF_ENOMEM. */
int tprof_trace_reserve(tprof_trace *t, size_t nev, size_t nspans);

/* Reads SRC in chunks parsed on THREADS threads. Returns 0 or TPROF_ETRUNC
 * with *out set, a negative error, or TPROF_PAR_FALLBACK: the input is not
 * one to cut, or something failed; read it again sequentially. */
#define TPROF_PAR_FALLBACK 1
size_t tprof_chunk_bytes(const tprof_read_opts *opts);
int tprof_read_parallel(tprof_trace **out, tprof_source *src, const char *name, const tprof_read_opts *opts,
                        int threads, char *errbuf, size_t errlen);

/* The event whose '{' was the last token: fast path first, generic on
 * anything unusual. Then counted, checked and stored. */
int tprof_parse_event(reader *r, uint64_t offset);
/* Counts, checks and stores an event read by another means (a row of an
 * Ascend table), as tprof_parse_event does after parsing; OFFSET is where
 * it began in the input. 0 or TPROF_ENOMEM. */
int tprof_store_event(reader *r, raw_event *e, uint64_t offset);
/* Adds step NUMBER over [TS, TS + DUR) (ns; sorted when the read ends). */
int tprof_trace_add_step(tprof_trace *t, int64_t number, int64_t ts, int64_t dur);
/* Reads an Ascend kernel table (kernel_details.csv, op_summary_*.csv) from
 * SRC as a trace of device tasks (lib/trace/ascend.c). */
int tprof_ascend_read_kernels(tprof_trace **out, tprof_source *src, const char *name, const tprof_read_opts *opts,
                              char *errbuf, size_t errlen);
/* Ends the read of an Ascend file from SRC into T (its form, sizes and
 * notes; MSG what went wrong, after NAME) as tprof_trace_conclude does. */
int tprof_ascend_conclude(tprof_trace **out, tprof_trace *t, int rc, tprof_source *src, tprof_form form,
                          const char *name, const char *msg, char *errbuf, size_t errlen);
/* A summary's cut message says what its results cover (WHAT: "12 ops and 3
 * links"), not events (RC: the read's; only TPROF_ETRUNC changes it). */
void tprof_ascend_say_covered(tprof_trace *t, int rc, const char *what);
/* Reads an Ascend communication summary (communication.json,
 * communication_matrix.json, cluster_communication.json) from SRC as a
 * trace with no events and its HCCL records (lib/trace/ascend_comm.c). */
int tprof_ascend_read_comm(tprof_trace **out, tprof_source *src, const char *name, char *errbuf, size_t errlen);
/* Reads Ascend's step split (step_trace_time.csv, msprof-analyze's
 * cluster_step_trace_time.csv) from SRC as a trace with no events and its
 * step splits (lib/trace/ascend_steps.c); the same into T (a sidecar),
 * MSG set on failure. */
int tprof_ascend_read_steps(tprof_trace **out, tprof_source *src, const char *name, char *errbuf, size_t errlen);
int tprof_ascend_steps_into(tprof_trace *t, tprof_source *src, char *msg, size_t msglen);
/* Reads Ascend's profiler database (lib/trace/ascend_db.c) from PATH, or
 * from the LEN bytes at DATA when PATH is NULL (a compressed file, memory);
 * SRC is the input's source, for its sizes and its first bytes. */
int tprof_ascend_read_db(tprof_trace **out, const char *path, const void *data, size_t len, tprof_source *src,
                         const char *name, const tprof_read_opts *opts, char *errbuf, size_t errlen);
/* Adds what KEEP asks of torch_npu's analysis.db at PATH to T: with
 * TPROF_KEEP_CALLS the HCCL ops and links (the CommAnalyzer tables), with
 * TPROF_KEEP_STEP_SPLITS the step splits (StepTraceTime) unless T has
 * some. 0, or an error with MSG set. */
int tprof_ascend_read_analysis(tprof_trace *t, const char *path, uint32_t keep, char *msg, size_t msglen);
/* What an Ascend profiler directory says about the trace read from PATH:
 * its rank (profiler_info_N.json beside ASCEND_PROFILER_OUTPUT) when the
 * trace has none, with TPROF_KEEP_CALLS the communication.json,
 * communication_matrix.json or analysis.db beside it, with
 * TPROF_KEEP_STEP_SPLITS its step_trace_time.csv, else analysis.db's
 * StepTraceTime (a problem with them is a note). */
void tprof_ascend_sidecars(tprof_trace *t, const char *path, const tprof_read_opts *opts);
/* Fast path: 0 when parsed (tokenizer moved past the '}'), 1 when the
 * generic path must parse it (from the same position), or an error. */
int tprof_parse_event_fast(reader *r, raw_event *e);

#endif
