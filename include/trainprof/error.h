/* trainprof error codes.
 *
 * Every library function that can fail returns 0 or one of the negative
 * TPROF_E* codes below. Handles that read data also keep a message naming the
 * file, the byte offset and what was expected (see each handle's *_errmsg()). */
#ifndef TRAINPROF_ERROR_H
#define TRAINPROF_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    TPROF_OK = 0,
    TPROF_EIO = -1,       /* the operating system refused a read or an open */
    TPROF_ENOMEM = -2,    /* out of memory */
    TPROF_EFORMAT = -3,   /* the bytes are not what was expected */
    TPROF_ETRUNC = -4,    /* the input ended early; what was read is kept */
    TPROF_EUSAGE = -5,    /* the caller passed an invalid argument */
    TPROF_ENOTTRACE = -6, /* valid JSON, but not a trace */
    TPROF_ELIMIT = -7,    /* a documented limit was exceeded (depth, token size) */
    TPROF_EWRITE = -8,    /* an output could not be written (full disk, read-only, ...) */
};

/* A short, static description of a TPROF_E* code. */
const char *tprof_strerror(int err);

/* An errno value as a user reads it, with its symbolic name:
 * "No space left on device (ENOSPC)"; "failed" for 0. Writes BUF, returns it. */
const char *tprof_errno_text(int err, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
