/* Byte sources: a file or stdin, decompressed on the fly.
 *
 * The compression is detected from the first bytes (gzip 1f 8b, zstd
 * 28 b5 2f fd), never from the file name. Concatenated gzip members and zstd
 * frames are read as one stream. Memory is bounded: a source holds one input
 * buffer and the decoder state, whatever the file size.
 *
 * Ownership: the caller owns the handle and frees it with tprof_source_close(). */
#ifndef TRAINPROF_SOURCE_H
#define TRAINPROF_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TPROF_COMP_NONE = 0,
    TPROF_COMP_GZIP,
    TPROF_COMP_ZSTD,
} tprof_compression;

typedef struct tprof_source tprof_source;

/* Opens PATH ("-" is stdin). On failure *out is NULL and the returned code is
 * negative; a message is written to errbuf (if not NULL). */
int tprof_source_open(tprof_source **out, const char *path, char *errbuf, size_t errlen);

/* Opens an in-memory buffer (not copied; it must outlive the source). */
int tprof_source_open_mem(tprof_source **out, const void *data, size_t len, const char *name);

/* Reads up to CAP decompressed bytes into BUF. Returns the count, 0 at the end
 * of a complete stream, or a negative TPROF_E* code (TPROF_ETRUNC when the
 * compressed stream stops early: every byte before the cut was delivered). */
ssize_t tprof_source_read(tprof_source *s, void *buf, size_t cap);

const char *tprof_source_name(const tprof_source *s);
const char *tprof_source_errmsg(const tprof_source *s);
/* A remark on the input that did not stop the read (e.g. trailing bytes
 * after a gzip stream), or "". */
const char *tprof_source_note(const tprof_source *s);
tprof_compression tprof_source_compression(const tprof_source *s);
const char *tprof_compression_name(tprof_compression c);
/* Name of the gzip decoder in use: "isa-l" or "zlib". */
const char *tprof_source_gzip_backend(void);
uint64_t tprof_source_bytes_in(const tprof_source *s);  /* compressed bytes consumed */
uint64_t tprof_source_bytes_out(const tprof_source *s); /* bytes delivered */
/* Size of the file on disk, or -1 for pipes. */
int64_t tprof_source_file_size(const tprof_source *s);
void tprof_source_close(tprof_source *s);

/* ---- what an input is (lib/io/sniff.c) ----
 * A read that fails on bytes of another kind of file says what they are and
 * which command reads them, from the first bytes the source delivered (no
 * second read, nothing in them run). */
typedef enum {
    TPROF_INPUT_UNKNOWN = 0,
    TPROF_INPUT_TRACE,      /* Chrome/Kineto trace: an object with traceEvents, or an event array */
    TPROF_INPUT_SNAPSHOT,   /* a Python pickle (protocol 2-5): a CUDA memory snapshot */
    TPROF_INPUT_EXEC_TRACE, /* PyTorch execution trace: "nodes" with "schema" or "pid" */
    TPROF_INPUT_ASCEND_CSV, /* Ascend profiler CSV (kernel_details.csv, ...) */
    TPROF_INPUT_LOG,        /* a training log (text or JSON lines with a loss) */
    TPROF_INPUT_CONFIG,     /* a model's config.json */
    TPROF_INPUT_ASCEND_JSON, /* Ascend profiler communication JSON (communication.json, ...) */
    TPROF_INPUT_ASCEND_KERNELS, /* Ascend kernel table (kernel_details.csv, op_summary_*.csv): read as a trace */
    TPROF_INPUT_ASCEND_DB,  /* an SQLite database: Ascend's ascend_pytorch_profiler_N.db, read as a trace */
    TPROF_INPUT_ASCEND_MEMORY, /* Ascend's memory_record.csv or operator_memory.csv: read by mem */
    TPROF_INPUT_ASCEND_STEPS, /* Ascend's step_trace_time.csv or msprof-analyze's cluster table: read as a trace */
    TPROF_INPUT_KINDS       /* the count, not a kind */
} tprof_input_kind;
#define TPROF_INPUT_BIT(k) (1u << (k))

/* Bytes kept of the start of every source (decompressed). */
#define TPROF_SOURCE_HEAD 4096
/* The first bytes delivered so far (up to TPROF_SOURCE_HEAD); *LEN their count. */
const uint8_t *tprof_source_head(const tprof_source *s, size_t *len);

tprof_input_kind tprof_input_sniff(const void *head, size_t n);
/* "this is ...: use trainprof ..." for an input of kind SEEN given to a
 * reader of the kinds in ACCEPTS (TPROF_INPUT_BIT masks); NULL when SEEN is
 * accepted or unknown. */
const char *tprof_input_hint(tprof_input_kind seen, unsigned accepts);
/* An error message may end with one hint line: "\nhint: ..." (the CLI
 * prints it as its own line). */
#define TPROF_HINT_MARK "\nhint: "
/* Appends the hint for HEAD to the message in ERRBUF (when there is one, it
 * fits whole, and the message has none yet). */
void tprof_input_hint_append(const void *head, size_t n, unsigned accepts, char *errbuf, size_t errlen);

/* ---- arguments into input files (lib/io/inputs.c) ----
 * Wherever a file is accepted, a directory is too: it stands for every
 * regular file below it (recursively) whose first bytes, decompressed, are of
 * a kind the command reads. Other arguments stay as given ("-" is stdin; a
 * file of another kind fails later with the reader's error). Inside a
 * directory: entries in byte order of their names, a directory's files
 * where its name falls (depth first); names starting with '.' are not
 * looked at (hidden files, .git); symbolic links are followed, each
 * directory and each file once (no loop, a link to a listed file is not
 * listed again); only the first 16 KiB of a file are read (up to 256 KiB
 * decompressed of a JSON object whose first 4 KiB do not tell: a trace may
 * open with a large "metadata" object), and a FIFO or device is never
 * opened. */

/* What one directory argument held. */
typedef struct {
    const char *arg;                  /* the argument as given */
    size_t first, nkept;              /* its files: paths[first .. first + nkept) */
    size_t kept[TPROF_INPUT_KINDS];   /* files kept, by kind */
    size_t skipped[TPROF_INPUT_KINDS]; /* files of kinds not accepted; [UNKNOWN]: not recognised */
    size_t unreadable;                /* files or directories that could not be opened or decompressed */
    size_t special;                   /* not regular files (FIFOs, sockets, devices) */
    size_t temporary;                 /* trainprof's own temporary outputs (NAME.tmp.HOST.PID.XXXXXX) */
    size_t repeated;                  /* links to a file already listed */
    size_t beside_trace;              /* Ascend kernel tables in a directory with a trace (the same tasks) */
    size_t sidecars;                  /* communication.json, its matrix, step_trace_time.csv (operator_memory.csv): read with the file beside them */
} tprof_input_dir;

typedef struct {
    char **paths; /* the inputs, in argument order */
    size_t npaths;
    tprof_input_dir *dirs; /* one per directory argument, in argument order */
    size_t ndirs;
} tprof_inputs;

/* Expands ARGS[0..N) into OUT, keeping the files below a directory whose
 * kind is in ACCEPTS (TPROF_INPUT_BIT masks). A directory with none is not
 * an error here (its tprof_input_dir says what it held). Returns 0, or a
 * negative TPROF_E* code (a directory argument that cannot be listed:
 * the message in ERRBUF). Free OUT with tprof_inputs_free (also after a
 * failure). */
int tprof_inputs_expand(const char *const *args, size_t n, unsigned accepts, tprof_inputs *out, char *errbuf,
                        size_t errlen);
void tprof_inputs_free(tprof_inputs *in);
/* The kind of the file PATH by its first bytes, decompressed (as a
 * directory's files are told apart), or -1 when it cannot be read. */
int tprof_input_sniff_path(const char *path);
/* One line on what the directory held: "DIR: 12 traces; skipped 5 files (2
 * memory snapshots, 1 model config, 2 not recognised)"; with nothing kept:
 * "DIR: no trace below the directory; it holds 3 files (...)" and a hint
 * (TPROF_HINT_MARK) naming the command for the commonest kind skipped. */
void tprof_input_dir_describe(const tprof_input_dir *d, unsigned accepts, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
