/* Byte sinks: a file written plain, gzip or zstd, through a temporary file.
 *
 * The data goes to a temporary file in the destination's directory that is
 * renamed over the destination only by tprof_sink_commit(), so a crash or an
 * error never leaves a half-written file under the real name. Memory is
 * bounded: one buffer and the encoder state.
 *
 * The temporary file is PATH.tmp.HOST.PID.XXXXXX. Opening a sink first
 * removes the temporary files of PATH left by processes of this host that are
 * gone (killed before they could clean up), and says so through the notice
 * function. tprof_sink_handle_signals() makes SIGINT, SIGTERM and SIGHUP
 * remove the temporary files of every open sink before the process dies.
 *
 * Ownership: commit or abort frees the handle. */
#ifndef TRAINPROF_SINK_H
#define TRAINPROF_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "trainprof/source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tprof_sink tprof_sink;

/* The compression a file name asks for: ".gz" gzip, ".zst" zstd, else none. */
tprof_compression tprof_compression_for_path(const char *path);

/* Opens a sink that will become PATH. LEVEL 0 is the fast default (gzip 1,
 * zstd 1). On failure *out is NULL and errbuf says why. */
int tprof_sink_open(tprof_sink **out, const char *path, tprof_compression comp, int level, char *errbuf,
                    size_t errlen);
/* Compresses on THREADS (>= 1) worker threads, called before the first
 * write: gzip through ISA-L as one ordinary member built from independently
 * compressed 1 MiB pieces, zstd through its own workers. The bytes written
 * do not depend on THREADS. Returns the threads used (0: none, the sink
 * compresses on the caller's thread as it does without this call: zlib,
 * plain output, or no threads in the library) or a negative TPROF_E* code. */
int tprof_sink_set_threads(tprof_sink *s, int threads);
int tprof_sink_write(tprof_sink *s, const void *data, size_t len);
/* Finishes the stream, closes and renames the file. Returns 0 or an error
 * (then the temporary file is removed). Frees S either way. */
int tprof_sink_commit(tprof_sink *s, char *errbuf, size_t errlen);
/* Removes the temporary file and frees S. */
void tprof_sink_abort(tprof_sink *s);
const char *tprof_sink_errmsg(const tprof_sink *s);
uint64_t tprof_sink_bytes_in(const tprof_sink *s);  /* bytes given to the sink */
uint64_t tprof_sink_bytes_out(const tprof_sink *s); /* bytes written to the file */
/* Writes LEN bytes as the whole file PATH, atomically (compressed as its
 * name asks). Returns 0 or an error, with a message naming PATH and the reason. */
int tprof_sink_write_file(const char *path, const void *data, size_t len, char *errbuf, size_t errlen);

/* Removes PATH's temporary files left by gone processes of this host.
 * Returns how many. tprof_sink_open calls it. */
int tprof_sink_remove_stale(const char *path);
/* Where notices go (a stale file removed): one line each, no newline. NULL
 * (the default): nowhere. */
typedef void (*tprof_sink_notice_fn)(const char *msg);
void tprof_sink_set_notice(tprof_sink_notice_fn fn);
/* SIGINT, SIGTERM and SIGHUP (unless ignored) remove the temporary files of
 * every open sink, then end the process as the signal would have. For
 * programs; a library's host with handlers of its own calls
 * tprof_sink_remove_temporaries() from them (it is async-signal-safe). */
int tprof_sink_handle_signals(void);
void tprof_sink_remove_temporaries(void);

/* Name of the gzip encoder in use: "isa-l" or "zlib". */
const char *tprof_sink_gzip_backend(void);

#ifdef __cplusplus
}
#endif
#endif
