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

#ifdef __cplusplus
}
#endif
#endif
