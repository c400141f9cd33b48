/* The trace event model and the streaming Kineto/Chrome trace reader.
 *
 * A trace is read once, front to back, through tprof_source (any compression)
 * and tprof_json (bounded window). Each event becomes a compact record with
 * interned strings; only the kinds the caller asks for are stored, so memory
 * follows what an analysis needs, never the JSON text. Metadata keys
 * (deviceProperties, distributedInfo, ...) may come before or after
 * traceEvents. The bare array form (Ascend trace_view.json, string ts) is
 * read too.
 *
 * Times are int64 nanoseconds, parsed from the decimal digits of the
 * microsecond values (never through double).
 *
 * Ownership: tprof_trace_read() returns a trace the caller frees with
 * tprof_trace_free(); every pointer obtained from a trace lives as long as it. */
#ifndef TRAINPROF_TRACE_H
#define TRAINPROF_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "trainprof/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an event is, from its phase and category. */
typedef enum {
    TPROF_KIND_CPU = 0,        /* cpu_op, user_annotation, python_function, ... */
    TPROF_KIND_RUNTIME,        /* cuda_runtime / cuda_driver launches and syncs */
    TPROF_KIND_GPU,            /* kernels, memcpy, memset, GPU-side syncs */
    TPROF_KIND_GPU_ANNOTATION, /* gpu_user_annotation spans on a stream */
    TPROF_KIND_FLOW,           /* ph s/t/f */
    TPROF_KIND_INSTANT,        /* ph i/I, e.g. [memory] */
    TPROF_KIND_COUNTER,        /* ph C */
    TPROF_KIND_META,           /* ph M */
    TPROF_KIND_OTHER,
    TPROF_KIND_COUNT
} tprof_kind;

#define TPROF_KEEP(kind) (1u << (kind))
#define TPROF_KEEP_MARKERS (1u << 30) /* CPU spans that mark a phase (TPROF_EV_MARKER) */
#define TPROF_KEEP_CALLS (1u << 29)   /* record_param_comms spans, with tprof_collective_call */
#define TPROF_KEEP_MEMORY (1u << 28)  /* [memory] instant events, with tprof_memory_sample */
#define TPROF_KEEP_STREAMED (1u << 27) /* events of other kinds with a "stream" arg (Triton's cpu_op, MTIA's
                                          device events): HTA counts them as GPU work */
#define TPROF_KEEP_OP_ARGS (1u << 26) /* a cpu_op's inputs and autograd links, with tprof_op_args */
#define TPROF_KEEP_AUTOGRAD (1u << 25) /* the autograd links alone (Sequence number, Fwd thread id), with
                                          tprof_op_args (its inputs 0) */
#define TPROF_SKIP_PLAIN_FRAMES (1u << 24) /* with TPROF_KEEP(TPROF_KIND_CPU): python_function spans that are
                                              not nn.Module frames (nor phase markers) are not stored */
#define TPROF_COMPACT_SPANS (1u << 23) /* with TPROF_KEEP(TPROF_KIND_CPU): the plain CPU spans (ph X; not steps,
                                          markers, calls or streamed) are stored as tprof_host_span, with their
                                          op args, in tprof_trace_spans() instead of tprof_trace_events() */
#define TPROF_KEEP_SYNC (1u << 22) /* with TPROF_KEEP(TPROF_KIND_GPU): cuda_sync waits, with tprof_sync_wait */
#define TPROF_KEEP_STEP_SPLITS (1u << 21) /* Ascend's step_trace_time.csv, alone or beside its trace, with
                                             tprof_step_split (else a step table is not read as a trace) */
#define TPROF_KEEP_TASK_INFO (1u << 20) /* an Ascend kernel table's other task columns, with tprof_task_info */
#define TPROF_KEEP_ALL (0xFFFFFFFFu & ~(TPROF_SKIP_PLAIN_FRAMES | TPROF_COMPACT_SPANS)) /* everything, as events */

/* Class of a GPU event, from its name (docs/METRICS.md has the rules). */
typedef enum {
    TPROF_CLASS_COMPUTE = 0,
    TPROF_CLASS_COMM,
    TPROF_CLASS_MEMORY,
    TPROF_CLASS_OTHER,
    TPROF_CLASS_COUNT
} tprof_class;

/* event flags */
#define TPROF_EV_PID_STR 0x01  /* pid holds a string id (tprof_trace_str) */
#define TPROF_EV_TID_STR 0x02
#define TPROF_EV_NO_DUR 0x04   /* complete event without a usable dur: dur is 0 */
#define TPROF_EV_BAD_DUR 0x08  /* dur was negative or absurd: set to 0 */
#define TPROF_EV_STEP 0x10     /* a CPU ProfilerStep#N span */
#define TPROF_EV_MARKER 0x20   /* a CPU span that marks a phase (tprof_phase_of) */
#define TPROF_EV_CALL 0x40     /* a record_param_comms span (a collective call) */
#define TPROF_EV_STREAM_ARG 0x80 /* stream came from args (not from the tid, as for a GPU event without one) */

typedef struct {
    int64_t ts;          /* ns since the trace's clock origin */
    int64_t dur;         /* ns (0 for instants and untrusted values) */
    int64_t pid, tid;
    int64_t correlation; /* -1 when absent */
    int64_t external_id; /* -1 when absent */
    int64_t flow_id;     /* -1 when absent; for flow events */
    int64_t bytes;       /* memcpy/memset size, -1 when absent */
    int64_t device;      /* -1 for host events */
    int64_t stream;      /* -1 for host events */
    uint32_t name, cat;  /* string ids */
    char ph;             /* phase letter as written */
    uint8_t kind;        /* tprof_kind */
    uint8_t klass;       /* tprof_class for TPROF_KIND_GPU; tprof_phase for marker spans
                            (TPROF_EV_MARKER) */
    uint8_t flags;
    uint32_t task;       /* an Ascend device task's "Task Type" (string id; 0, the empty string: none) */
} tprof_event;

/* a + b, saturated: malformed inputs can put times near the int64 limits,
 * and sums of many durations must not wrap. */
static inline int64_t tprof_sat_add(int64_t a, int64_t b)
{
    int64_t s;
    if (__builtin_add_overflow(a, b, &s)) return b > 0 ? INT64_MAX : INT64_MIN;
    return s;
}

/* End of an event, ts + dur, saturated. */
static inline int64_t tprof_end_ns(int64_t ts, int64_t dur) { return tprof_sat_add(ts, dur); }

/* b - a, saturated. */
static inline int64_t tprof_span_ns(int64_t a, int64_t b)
{
    int64_t d;
    if (__builtin_sub_overflow(b, a, &d)) return b > a ? INT64_MAX : INT64_MIN;
    return d;
}

/* A collective call as PyTorch records it: a record_param_comms span and
 * its args (kept with TPROF_KEEP_CALLS). */
typedef struct {
    size_t event;     /* the span's index in tprof_trace_events() */
    uint32_t name;    /* "Collective name" (string id): allreduce, all_gather, ... */
    uint32_t dtype;   /* string id: Float, BFloat16, ... */
    int64_t in_nelems, out_nelems, group_size; /* -1 when absent */
    uint32_t group;   /* "Process Group Name" (string id), the empty string when absent */
    int64_t seq;      /* "Seq": the call's number in its process group, -1 when absent */
    /* the lists as written ("[2, 3, 1]", cut after 30 entries with ", ..."), string ids; the empty string
       when absent: "In split size" and "Out split size" (an all-to-all's rows per rank of the group, along
       dimension 0; "[]": equal), "Process Group Ranks" (the group's global ranks) */
    uint32_t in_splits, out_splits, group_ranks;
} tprof_collective_call;

/* A [memory] instant event of the profiler's memory view (kept with
 * TPROF_KEEP_MEMORY): the allocator's totals after one alloc or free. */
typedef struct {
    size_t event;            /* the instant's index in tprof_trace_events() */
    int64_t device;          /* "Device Id" (-1 when absent: the host) */
    int64_t bytes;           /* "Bytes": + allocated, - freed */
    int64_t total_allocated; /* "Total Allocated", -1 when absent */
    int64_t total_reserved;  /* "Total Reserved", -1 when absent */
} tprof_memory_sample;

/* What a cuda_sync event waits on (kept with TPROF_KEEP_SYNC): Event Sync
 * (cudaEventSynchronize) and Stream Wait Event (cudaStreamWaitEvent) name
 * the cudaEventRecord call whose event they wait for, and its stream. */
typedef struct {
    size_t event;               /* the sync's index in tprof_trace_events() */
    int64_t stream;             /* "wait_on_stream", -1 when absent */
    int64_t record_correlation; /* "wait_on_cuda_event_record_corr_id", -1 when absent */
} tprof_sync_wait;

/* Ascend's communication summaries (kept with TPROF_KEEP_CALLS): torch_npu's
 * communication.json (each HCCL op's times and bytes per transport) and
 * communication_matrix.json (bytes per rank-to-rank link), read from the
 * file itself or from beside a trace in the same profiler directory, and
 * msprof-analyze's cluster_communication.json (the same per op and rank).
 * Times in ms and sizes in MB (10^6 bytes) are kept as written. */
typedef enum {
    TPROF_HCCL_RDMA = 0,
    TPROF_HCCL_HCCS,
    TPROF_HCCL_PCIE,
    TPROF_HCCL_SDMA, /* msprof's total of the on-chip links (HCCS, PCIe, SIO) */
    TPROF_HCCL_SIO,
    TPROF_HCCL_TRANSPORTS
} tprof_hccl_transport;
const char *tprof_hccl_transport_name(tprof_hccl_transport k); /* "RDMA", "HCCS", ... */

typedef struct {
    double size_mb, time_ms;   /* "Transit Size(MB)", "Transit Time(ms)" */
    double large_packet_ratio; /* "Large Packet Ratio" as written (NaN: absent) */
    uint64_t packets;          /* the counts of "Size Distribution" summed */
} tprof_hccl_bandwidth;

typedef struct {
    uint32_t step;        /* string id: "step1", "step" */
    uint32_t op;          /* string id: the op as written, "hcom_allReduce__501_0@<group>" */
    uint32_t group;       /* string id: what follows the op's last '@' ("" without one) */
    uint32_t group_ranks; /* string id: a cluster file's group, "(0, 1)"; 0 elsewhere */
    int p2p;              /* under "p2p" (send, receive), else "collective" */
    int64_t rank;         /* the rank a cluster file names; -1: the file's own */
    double start_us;      /* "Start Timestamp(us)", NaN when absent */
    double elapse_ms, transit_ms, wait_ms, sync_ms, idle_ms;
    tprof_hccl_bandwidth bw[TPROF_HCCL_TRANSPORTS];
} tprof_hccl_op;

/* One link of communication_matrix.json. */
typedef struct {
    uint32_t step, op, group; /* string ids, as in tprof_hccl_op */
    uint32_t group_ranks;     /* string id: a cluster file's group, "(0, 1)", whose src and dst are global
                                 ranks; 0 in a rank's own file, whose are ranks within the group */
    int p2p;
    int64_t src, dst;         /* "src-dst" ranks */
    uint32_t transport;       /* string id: "Transport Type" as written (HCCS, RDMA, SIO, LOCAL, ...) */
    double size_mb, time_ms;
} tprof_hccl_link;

/* An Ascend kernel table's (or database's) columns beyond a task's name,
 * times and core (kept with TPROF_KEEP_TASK_INFO), per stored device event: what
 * kernels' ascend_tasks table sums per kernel. */
typedef enum {
    TPROF_TASK_AIC_MAC = 0, /* "aic_mac_ratio": the cube (matrix) unit busy */
    TPROF_TASK_AIC_MTE2,    /* "aic_mte2_ratio": the AI Core's loads from global memory */
    TPROF_TASK_AIV_VEC,     /* "aiv_vec_ratio": the vector unit busy */
    TPROF_TASK_AIV_MTE2,    /* "aiv_mte2_ratio": the vector core's loads */
    TPROF_TASK_RATIOS
} tprof_task_ratio;
typedef struct {
    size_t event;      /* its index in tprof_trace_events() */
    uint32_t type;     /* string id: "Type" (the op type, MatMulV2); 0 when absent */
    int32_t block_dim; /* "Block Dim"; -1 when absent */
    int64_t wait_ns;   /* "Wait Time(us)"; -1 when absent */
    double ratio[TPROF_TASK_RATIOS]; /* NaN when absent or N/A */
} tprof_task_info;

/* Ascend's step_trace_time.csv (kept with TPROF_KEEP_STEP_SPLITS): the device
 * time of each step as the Ascend profiler splits it, read from the file
 * itself or from beside a trace in the same profiler directory, and the
 * "rank" rows of msprof-analyze's cluster_step_trace_time.csv. Times are
 * the file's microseconds as ns (exact to the written digits), INT64_MIN
 * where a column is absent or not a number. */
typedef enum {
    TPROF_SPLIT_COMPUTING = 0,        /* "Computing" */
    TPROF_SPLIT_COMM_NOT_OVERLAPPED,  /* "Communication(Not Overlapped)" */
    TPROF_SPLIT_OVERLAPPED,           /* "Overlapped" */
    TPROF_SPLIT_COMMUNICATION,        /* "Communication" */
    TPROF_SPLIT_FREE,                 /* "Free" */
    TPROF_SPLIT_STAGE,                /* "Stage" */
    TPROF_SPLIT_BUBBLE,               /* "Bubble" */
    TPROF_SPLIT_COMM_NO_RECV,         /* "Communication(Not Overlapped and Exclude Receive)" */
    TPROF_SPLIT_PREPARING,            /* "Preparing" (newer versions) */
    TPROF_SPLIT_COLS
} tprof_split_col;
const char *tprof_split_col_name(tprof_split_col c); /* the file's column name */

typedef struct {
    int64_t step; /* "Step"; -1 when empty (a run without a step schedule) */
    int64_t rank; /* a cluster file's "Index" of a "rank" row; -1: the file's own */
    int64_t ns[TPROF_SPLIT_COLS];
} tprof_step_split;

/* The inputs of a CPU op as the profiler records them with record_shapes,
 * each the compact JSON text of its args value (whitespace outside strings
 * removed: "[[8944,1024],[1024,2816]]"), interned; 0 (the empty string)
 * when absent. */
typedef enum {
    TPROF_OP_DIMS = 0,  /* "Input Dims" */
    TPROF_OP_TYPES,     /* "Input type" */
    TPROF_OP_STRIDES,   /* "Input Strides" */
    TPROF_OP_CONCRETE,  /* "Concrete Inputs" */
    TPROF_OP_ARGS
} tprof_op_arg;

/* A CPU event's op args (kept with TPROF_KEEP_OP_ARGS for the CPU events
 * that have any). */
typedef struct {
    size_t event;              /* the op's index in tprof_trace_events() */
    uint32_t arg[TPROF_OP_ARGS]; /* string ids, by tprof_op_arg */
    int64_t seq;               /* "Sequence number" (autograd), -1 when absent */
    int64_t fwd_tid;           /* "Fwd thread id" of a backward op, -1 when absent */
} tprof_op_args;

/* A CPU span stored compactly (TPROF_COMPACT_SPANS): what the op view needs
 * of a cpu_op, python_function or user_annotation, in 40 bytes (a large
 * trace holds millions). A span that does not fit stays an event (with
 * its op args in tprof_trace_op_args()): a sequence number past
 * INT32_MAX, a thread past the 65,534th. */
typedef struct {
    int64_t ts, dur;        /* ns, as in tprof_event */
    uint32_t name, cat;     /* string ids */
    uint32_t events_before; /* events stored before it in the file: its place among them (file order) */
    uint32_t inputs;        /* its op args' strings (with TPROF_KEEP_OP_ARGS): tprof_trace_op_inputs(); 0: none */
    int32_t seq;            /* "Sequence number" (autograd), -1 when absent (or negative) */
    uint16_t thread;        /* index in tprof_trace_meta.cpu_tracks */
    int8_t fwd_tid;         /* "Fwd thread id" clamped to 127 (its sign is what links autograd: 0 a
                               forward op, above 0 a backward op), -1 when absent (or negative) */
    uint8_t flags;          /* TPROF_EV_NO_DUR, TPROF_EV_BAD_DUR */
} tprof_host_span;
#define TPROF_SPAN_THREADS 65535 /* a span's thread index is below this */

typedef struct {
    int64_t id;
    const char *name;
    int64_t total_memory;
    int64_t num_sms;
    int compute_major, compute_minor;
} tprof_device;

typedef struct {
    int64_t number;  /* N of ProfilerStep#N */
    int64_t ts, dur; /* ns */
} tprof_step;

typedef struct {
    int64_t device, stream;
    uint64_t events; /* GPU events seen on the track */
} tprof_gpu_track;

/* A host thread: pid and tid as in tprof_event (string ids when the flags
 * TPROF_EV_PID_STR / TPROF_EV_TID_STR say so). */
typedef struct {
    int64_t pid, tid;
    uint8_t flags;
    uint64_t events; /* cpu and runtime events seen on the thread */
} tprof_cpu_track;

typedef struct {
    uint32_t cat;    /* string id; the empty string for events without cat */
    uint64_t count;
} tprof_cat_count;

/* Data problems found while reading; counted, with the first byte offset. */
typedef struct {
    uint64_t dur_missing, dur_negative, dur_absurd, ts_missing, ts_bad, non_object_events;
    uint64_t dur_invalid; /* a dur that is there but not a number in range ("abc", null, 1e30): kept as 0 */
    uint64_t first_offset; /* byte offset (uncompressed) of the first problem */
} tprof_warnings;

typedef enum {
    TPROF_FORM_OBJECT = 0,
    TPROF_FORM_ARRAY,
    TPROF_FORM_ASCEND_TABLE, /* kernel_details.csv */
    TPROF_FORM_ASCEND_COMM,  /* communication.json and the like: no events, HCCL summaries */
    TPROF_FORM_ASCEND_DB,    /* ascend_pytorch_profiler_N.db (SQLite) */
    TPROF_FORM_ASCEND_STEPS, /* step_trace_time.csv, cluster_step_trace_time.csv: no events, step splits */
} tprof_form;

typedef struct {
    const char *path;
    tprof_compression compression;
    uint64_t bytes_in;       /* compressed bytes read */
    uint64_t bytes_json;     /* uncompressed JSON bytes read */
    int64_t file_size;       /* -1 for pipes */
    tprof_form form;
    int has_schema_version;
    int64_t schema_version;
    int has_distributed;     /* distributedInfo present */
    int64_t rank, world_size; /* -1 when unknown */
    const char *backend;     /* NULL when unknown */
    int has_base_time;
    int64_t base_time_ns;
    const char *display_time_unit; /* NULL when absent */
    const char *trace_name;        /* NULL when absent */
    size_t ndevices;
    const tprof_device *devices;
    uint64_t nevents;               /* all events, stored or not */
    uint64_t kind_counts[TPROF_KIND_COUNT];
    size_t ncats;
    const tprof_cat_count *cats;    /* sorted by count, descending */
    int64_t ts_min, ts_max;         /* over timed events; ts_min > ts_max if none */
    size_t nsteps;
    const tprof_step *steps;        /* sorted by ts */
    size_t ngpu_tracks;
    const tprof_gpu_track *gpu_tracks; /* sorted by device, stream */
    size_t ncpu_tracks;
    const tprof_cpu_track *cpu_tracks; /* sorted by pid, tid */
    tprof_warnings warn;
    uint64_t ts_sub_us;             /* events whose ts has digits below the microsecond */
    uint64_t ts_absent;             /* events of any kind, metadata too, without a ts */
    uint64_t op_state_static, op_state_dynamic; /* Ascend tasks by their OP State (kernel table, database):
                                                   static or dynamic shape; 0 and 0 where not recorded */
    int64_t step_name_ts_max;       /* latest start of a complete event of any category named ProfilerStep#N
                                       (GPU-side annotations too: HTA's last-step cut); INT64_MIN if none */
    int truncated;                  /* the input ended early; results cover what was read */
    const char *note;               /* a remark on the input that did not stop the read, or NULL */
    uint32_t chunks;                /* chunks parsed in parallel; 0 = read in one pass */
} tprof_trace_meta;

typedef struct tprof_classifier tprof_classifier;
typedef struct tprof_trace tprof_trace;

/* Progress of one file's read; may be called from several threads at once. */
typedef void (*tprof_progress_fn)(void *ctx, const char *path, uint64_t bytes_in, int64_t file_size);

typedef struct {
    uint32_t keep;  /* TPROF_KEEP(kind) mask of events to store, and TPROF_KEEP_MARKERS for
                       the phase markers alone; ProfilerStep spans are always stored */
    const tprof_classifier *classifier; /* NULL: built-in rules only */
    tprof_progress_fn progress;         /* called about every 16 MiB; may be NULL */
    void *progress_ctx;
    int generic_only; /* parse every event token by token (tests compare both paths) */
    int threads;      /* threads for one large file (chunks parsed in parallel): 0 = one per
                         core, 1 = a single thread (a compressed file still decompresses on
                         a second one). For compressed files the decompressing thread is
                         one of them. tprof_trace_read_many shares the cores between its
                         files. */
    size_t chunk_bytes; /* bytes per parallel chunk, 0 (or below 64) = 2 MiB; plain files
                           from 8 chunks and compressed files from 1 chunk on disk are cut */
} tprof_read_opts;

/* Reads a trace. Returns 0, or TPROF_ETRUNC with a usable trace (the input
 * was cut: everything before the cut is in it), or another negative code with
 * *out NULL and the message in errbuf. */
int tprof_trace_read(tprof_trace **out, const char *path, const tprof_read_opts *opts,
                     char *errbuf, size_t errlen);
/* Same, from a memory buffer (compressed or not). */
int tprof_trace_read_mem(tprof_trace **out, const void *data, size_t len, const char *name,
                         const tprof_read_opts *opts, char *errbuf, size_t errlen);
void tprof_trace_free(tprof_trace *t);

/* Reads N files on up to THREADS threads (0: one per core). Each slot gets
 * its trace (or NULL), return code and message. Returns 0 when every file
 * was read (truncated ones included), else the first failing code. */
typedef struct {
    tprof_trace *trace;
    int rc;
    char err[512];
} tprof_read_result;
int tprof_trace_read_many(const char *const *paths, size_t n, const tprof_read_opts *opts, int threads,
                          tprof_read_result *results);
/* Same, calling DONE(CTX, I, &results[I]) on the reading thread as soon as
 * file I is read (any order, one call per file, concurrently for different
 * files): an analysis can run there and free the trace (setting its slot's
 * trace to NULL), so that memory holds only the traces being read. */
typedef void (*tprof_read_done_fn)(void *ctx, size_t i, tprof_read_result *r);
int tprof_trace_read_each(const char *const *paths, size_t n, const tprof_read_opts *opts, int threads,
                          tprof_read_result *results, tprof_read_done_fn done, void *ctx);

const tprof_trace_meta *tprof_trace_meta_get(const tprof_trace *t);
/* Which rank a trace is, by one rule for every command (lib/trace/rank_order.c):
 * distributedInfo.rank, else rank<N> (rank-N, rank_N) in the file's base
 * name, else -1. */
int64_t tprof_trace_rank(const tprof_trace *t);
/* 1 and *RANK when PATH's base name holds rank<N>, else 0. */
int tprof_rank_from_name(const char *path, int64_t *rank);
/* The rank order of N inputs: ORDER[0..N) receives their indexes sorted by
 * RANKS[i], an unknown rank (< 0) standing at its argument index i; ties in
 * argument order. 0 or TPROF_ENOMEM. */
int tprof_rank_order(const int64_t *ranks, size_t n, size_t *order);
/* The ProfilerSteps of STEPS[0..N) in words, for a step window that matched
 * none: "ProfilerStep#550..#554 (5 steps)", "ProfilerStep#1, #3..#4 (3
 * steps)", "no ProfilerStep#N spans". Writes BUF, returns it. */
const char *tprof_steps_held(const tprof_step *steps, size_t n, char *buf, size_t len);
/* The warning for a truncated read, or "" (message names file and byte). */
const char *tprof_trace_truncation(const tprof_trace *t);
size_t tprof_trace_nevents(const tprof_trace *t);
const tprof_event *tprof_trace_events(const tprof_trace *t); /* in file order */
const char *tprof_trace_str(const tprof_trace *t, uint32_t id);
/* The string id of S in T, or UINT32_MAX when T has no such string. */
uint32_t tprof_trace_str_id(const tprof_trace *t, const char *s);
size_t tprof_trace_nstrings(const tprof_trace *t);
size_t tprof_trace_ncalls(const tprof_trace *t);
const tprof_collective_call *tprof_trace_calls(const tprof_trace *t); /* in file order */
size_t tprof_trace_nspans(const tprof_trace *t);
const tprof_host_span *tprof_trace_spans(const tprof_trace *t); /* in file order */
/* A span's op args: the string ids of its inputs by tprof_op_arg (TPROF_OP_ARGS
 * of them; all 0 for INPUTS 0, the span without any). Spans share them. */
const uint32_t *tprof_trace_op_inputs(const tprof_trace *t, uint32_t inputs);
size_t tprof_trace_nop_args(const tprof_trace *t);
const tprof_op_args *tprof_trace_op_args(const tprof_trace *t); /* in file order */
size_t tprof_trace_nsyncs(const tprof_trace *t);
const tprof_sync_wait *tprof_trace_syncs(const tprof_trace *t); /* in file order */
size_t tprof_trace_nmem_samples(const tprof_trace *t);
const tprof_memory_sample *tprof_trace_mem_samples(const tprof_trace *t); /* in file order */
size_t tprof_trace_nhccl_ops(const tprof_trace *t);
const tprof_hccl_op *tprof_trace_hccl_ops(const tprof_trace *t); /* in file order */
size_t tprof_trace_nhccl_links(const tprof_trace *t);
const tprof_hccl_link *tprof_trace_hccl_links(const tprof_trace *t); /* in file order */
size_t tprof_trace_ntask_infos(const tprof_trace *t);
const tprof_task_info *tprof_trace_task_infos(const tprof_trace *t); /* in event order */
size_t tprof_trace_nstep_splits(const tprof_trace *t);
const tprof_step_split *tprof_trace_step_splits(const tprof_trace *t); /* in file order */
/* Bytes of memory held by the trace (records, strings, tables). */
size_t tprof_trace_memory(const tprof_trace *t);

/* Classification */
tprof_classifier *tprof_classifier_new(void);
void tprof_classifier_free(tprof_classifier *c);
/* Adds a rule: names matching GLOB (fnmatch syntax, whole name) get CLASS.
 * User rules are tried in order, before the built-in ones. */
int tprof_classifier_add(tprof_classifier *c, tprof_class klass, const char *glob);
/* Reads rules from a file, one "CLASS GLOB" per line ('#' comments). */
int tprof_classifier_load(tprof_classifier *c, const char *path, char *errbuf, size_t errlen);
/* Class of a GPU event named NAME with category CAT (either may be ""). */
tprof_class tprof_classify(const tprof_classifier *c, const char *cat, const char *name);
const char *tprof_class_name(tprof_class k);
int tprof_class_parse(const char *s, tprof_class *out);
const char *tprof_kind_name(tprof_kind k);

/* Training phases, from the names of CPU spans (docs/METRICS.md has the
 * rules): user annotations (record_function "## forward ##", "forward", ...)
 * and PyTorch's markers (enumerate(DataLoader)#..., Optimizer.step#...,
 * autograd::engine::evaluate_function: ..., DistributedDataParallel.forward,
 * nn.Module: ...). */
typedef enum {
    TPROF_PHASE_DATA = 0,
    TPROF_PHASE_FORWARD,
    TPROF_PHASE_BACKWARD,
    TPROF_PHASE_OPTIMIZER,
    TPROF_PHASE_OTHER, /* no phase marker */
    TPROF_PHASE_COUNT
} tprof_phase;
/* User rules (tprof_classifier_add_phase) first, then the built-in ones. */
tprof_phase tprof_phase_of(const tprof_classifier *c, const char *name);
int tprof_classifier_add_phase(tprof_classifier *c, tprof_phase phase, const char *glob);
const char *tprof_phase_name(tprof_phase p);
int tprof_phase_parse(const char *s, tprof_phase *out);

/* Op categories, from the names of the CPU ops (and runtime calls) that
 * launch GPU work (docs/METRICS.md, "trainprof ops"). */
typedef enum {
    TPROF_OPCAT_GEMM = 0,
    TPROF_OPCAT_ATTENTION,
    TPROF_OPCAT_CONV,
    TPROF_OPCAT_ELEMENTWISE,
    TPROF_OPCAT_REDUCTION,
    TPROF_OPCAT_NORM,
    TPROF_OPCAT_COMM,
    TPROF_OPCAT_MEMORY, /* memory copy and set */
    TPROF_OPCAT_OTHER,
    TPROF_OPCAT_COUNT
} tprof_op_category;
/* User rules for op names first (tprof_classifier_add_op_category), then
 * the kernel-class rules applied to the op's name (communication, memory
 * and other map to those categories), then the built-in ones. */
tprof_op_category tprof_op_category_of(const tprof_classifier *c, const char *name);
int tprof_classifier_add_op_category(tprof_classifier *c, tprof_op_category cat, const char *glob);
const char *tprof_op_category_name(tprof_op_category k);
int tprof_op_category_parse(const char *s, tprof_op_category *out);
/* Adds one rule named by CLS: a kernel class (compute, communication,
 * memory, other), a phase (data, forward, backward, optimizer) or an op
 * category only ops have (gemm, attention, convolution, elementwise,
 * reduction, normalization). 0, TPROF_EUSAGE for another name, or
 * TPROF_ENOMEM. */
int tprof_classifier_add_rule(tprof_classifier *c, const char *cls, const char *glob);

#ifdef __cplusplus
}
#endif
#endif
