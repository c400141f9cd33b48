/* A read-ahead thread over a source: decompression runs on its own core
 * while the caller parses (internal). Bounded: a few fixed-size slots. */
#ifndef TPROF_PIPE_H
#define TPROF_PIPE_H

#include <stdint.h>
#include <sys/types.h>

#include "trainprof/source.h"

typedef struct tprof_pipe tprof_pipe;

/* Starts the thread; the source must outlive the pipe. */
int tprof_pipe_start(tprof_pipe **out, tprof_source *src);
/* Same contract as tprof_source_read (a tprof_json_read_fn on a pipe). */
ssize_t tprof_pipe_read(void *pipe, void *buf, size_t cap);
/* Stops the thread (also when the reader quits early) and frees the pipe. */
void tprof_pipe_stop(tprof_pipe *p);

/* A small input (of known size, under TPROF_SMALL_INPUT bytes) is read
 * without the thread and with buffers sized to it: under ASan (the fuzz
 * targets) a 1 MiB buffer or a thread costs more than parsing a few KiB. */
#define TPROF_SMALL_INPUT (1 << 20)
/* Whether SRC is worth the read-ahead thread: compressed and not small. */
int tprof_pipe_worth(const tprof_source *src);
/* About how many bytes of JSON SRC holds (compressed: a guess, 8 times its
 * size), or -1 when unknown (stdin, a pipe). */
int64_t tprof_source_json_guess(const tprof_source *src);
/* The first tokenizer window for SRC (tprof_json_open_sized): 0, the
 * default, unless the input is small. */
size_t tprof_source_window(const tprof_source *src);

#endif
