/* A gzip member compressed on several threads (ISA-L builds only; internal
 * to the sink). Chunks go in through pgzip_submit in order; finished pieces
 * come out in order through WRITE, on the caller's thread. */
#ifndef TPROF_PGZIP_H
#define TPROF_PGZIP_H

#include <stddef.h>
#include <stdint.h>

typedef struct pgzip pgzip;
typedef int (*pgzip_write_fn)(void *ctx, const uint8_t *data, size_t len);

/* THREADS compressing workers; chunks are at most CHUNK_CAP bytes. Writes
 * the gzip header at once. */
int pgzip_new(pgzip **out, int threads, size_t chunk_cap, pgzip_write_fn write, void *ctx);
/* Hands over the chunk in *BUF (LEN bytes) and puts a free buffer of
 * CHUNK_CAP bytes in its place. LAST: the final chunk (may be empty). */
int pgzip_submit(pgzip *z, uint8_t **buf, size_t len, int last);
/* After the last chunk: writes what is left and the gzip trailer. */
int pgzip_finish(pgzip *z);
void pgzip_free(pgzip *z);

#endif
