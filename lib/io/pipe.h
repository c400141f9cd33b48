/* A read-ahead thread over a source: decompression runs on its own core
 * while the caller parses (internal). Bounded: a few fixed-size slots. */
#ifndef TPROF_PIPE_H
#define TPROF_PIPE_H

#include <sys/types.h>

#include "trainprof/source.h"

typedef struct tprof_pipe tprof_pipe;

/* Starts the thread; the source must outlive the pipe. */
int tprof_pipe_start(tprof_pipe **out, tprof_source *src);
/* Same contract as tprof_source_read (a tprof_json_read_fn on a pipe). */
ssize_t tprof_pipe_read(void *pipe, void *buf, size_t cap);
/* Stops the thread (also when the reader quits early) and frees the pipe. */
void tprof_pipe_stop(tprof_pipe *p);

#endif
