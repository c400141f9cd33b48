/* A safe decoder for the Python pickles that PyTorch writes as CUDA memory
 * snapshots (torch.cuda.memory._dump_snapshot).
 *
 * Only the data opcodes of protocols 2-5 are understood: containers, ints
 * (LONG1/LONG4 up to 9 bytes, so 2^64-1 fits), floats, strings, bytes, None,
 * booleans, MARK and the memo. Nothing is ever imported or called: GLOBAL,
 * STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ(_EX), EXT1/2/4, PERSID,
 * BINPERSID and out-of-band buffers are refused with an error naming the
 * file, the byte offset and the opcode. No real snapshot contains them.
 *
 * Memo entries are references: a value fetched twice (BINGET) is the same
 * value, and containers memoized while empty see the items added later.
 * Shared values can therefore form cycles; walk a tree with a depth bound.
 *
 * Memory is what is kept, not the input: the input streams through a
 * 1 MiB window (a compressed file is decompressed while it is decoded, never
 * held whole), each string is copied out (its first TPROF_PICKLE_MAX_STRING
 * bytes; a longer one keeps those, is marked clipped and equals no key),
 * plus 16 bytes per value that is not a small int, 4 per container item,
 * per memo entry and per value on the stack. tprof_pickle_opts.max_memory
 * bounds the total (an error past it), so a small compressed bomb cannot
 * take the machine's memory.
 *
 * A pickle cut short (no STOP) is closed as if each open MARK had been
 * completed by the container below it, and a value left on the stack for a
 * single APPEND or SETITEM (Python's pickler writes a one-item list as
 * `item APPEND`) goes into its container, so the caller gets everything
 * decoded before the cut; containers the cut fell inside are marked partial
 * (tprof_pickle_partial). The load returns TPROF_ETRUNC and keeps the result.
 *
 * Ownership: the caller frees the handle with tprof_pickle_close(); values
 * and strings live as long as the handle. */
#ifndef TRAINPROF_PICKLE_H
#define TRAINPROF_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TPROF_PK_NONE = 0,
    TPROF_PK_BOOL,
    TPROF_PK_INT,   /* int64, or uint64 when tprof_pickle_is_unsigned() */
    TPROF_PK_FLOAT,
    TPROF_PK_STR,   /* UTF-8 as written (not validated) */
    TPROF_PK_BYTES,
    TPROF_PK_LIST,
    TPROF_PK_TUPLE,
    TPROF_PK_DICT,  /* items are key, value, key, value ... */
} tprof_pk_type;

typedef uint32_t tprof_pv; /* a value handle (small ints are held in the handle itself) */

#define TPROF_PICKLE_MAX_DEPTH 4096 /* open MARKs at once */
#define TPROF_PICKLE_MAX_STRING (64u << 10) /* bytes kept of one string or bytes value */
#define TPROF_PICKLE_NO_LIMIT UINT64_MAX

typedef struct {
    /* bytes the decoded values may hold (see above); 0: the default,
     * tprof_pickle_default_limit(); TPROF_PICKLE_NO_LIMIT: none */
    uint64_t max_memory;
    /* called about every 16 MiB read from the file, and at its end; may be NULL */
    void (*progress)(void *ctx, const char *path, uint64_t bytes_in, int64_t file_size);
    void *progress_ctx;
} tprof_pickle_opts;

/* Half the physical memory, at least 1 GiB. */
uint64_t tprof_pickle_default_limit(void);

typedef struct tprof_pickle tprof_pickle;

/* Reads PATH (plain, gzip or zstd; "-" is stdin) and decodes it. Returns 0,
 * TPROF_ETRUNC (the pickle was cut short: *out holds what was decoded), or
 * another negative code (*out is NULL unless the error is in the data, when
 * it holds the message). ERRBUF gets the message in every failure case. */
int tprof_pickle_load(tprof_pickle **out, const char *path, char *errbuf, size_t errlen);
/* The same with options (O may be NULL: the defaults). Past the memory
 * limit the load fails with TPROF_ELIMIT and a message naming the limit. */
int tprof_pickle_load_opts(tprof_pickle **out, const char *path, const tprof_pickle_opts *o, char *errbuf,
                           size_t errlen);
/* Decodes a buffer (needed only during the call). NAME is used in
 * messages. Same returns; the default memory limit. */
int tprof_pickle_parse(tprof_pickle **out, const void *data, size_t len, const char *name, char *errbuf,
                       size_t errlen);
void tprof_pickle_close(tprof_pickle *p);

tprof_pv tprof_pickle_root(const tprof_pickle *p);
int tprof_pickle_protocol(const tprof_pickle *p);
int tprof_pickle_truncated(const tprof_pickle *p);
uint64_t tprof_pickle_bytes(const tprof_pickle *p);   /* decompressed bytes (all of them, also after STOP) */
uint64_t tprof_pickle_nvalues(const tprof_pickle *p); /* values created */
size_t tprof_pickle_memory(const tprof_pickle *p);    /* bytes held */
uint64_t tprof_pickle_max_held(const tprof_pickle *p); /* the most bytes held while decoding */
/* 1 when V is a container the cut of a truncated pickle fell inside: the
 * items after the cut are missing (a trace entry cut in half). */
int tprof_pickle_partial(const tprof_pickle *p, tprof_pv v);
/* 1 when string or bytes V was longer than TPROF_PICKLE_MAX_STRING: only its
 * first bytes are kept, and it equals no key. */
int tprof_pickle_str_clipped(const tprof_pickle *p, tprof_pv v);

tprof_pk_type tprof_pickle_type(const tprof_pickle *p, tprof_pv v);
const char *tprof_pickle_type_name(tprof_pk_type t);
/* Integer (or bool) value; floats are truncated; other types give DFLT. A
 * uint64 above INT64_MAX saturates to INT64_MAX. */
int64_t tprof_pickle_int(const tprof_pickle *p, tprof_pv v, int64_t dflt);
uint64_t tprof_pickle_uint(const tprof_pickle *p, tprof_pv v); /* raw 64 bits of an int */
int tprof_pickle_is_unsigned(const tprof_pickle *p, tprof_pv v);
double tprof_pickle_float(const tprof_pickle *p, tprof_pv v, double dflt);
/* String or bytes: pointer (not NUL-terminated) and length (of what is
 * kept: see tprof_pickle_str_clipped); NULL otherwise. */
const char *tprof_pickle_str(const tprof_pickle *p, tprof_pv v, size_t *len);
int tprof_pickle_str_eq(const tprof_pickle *p, tprof_pv v, const char *s);
/* Containers: item count (pairs for a dict) and items. */
size_t tprof_pickle_len(const tprof_pickle *p, tprof_pv v);
tprof_pv tprof_pickle_item(const tprof_pickle *p, tprof_pv v, size_t i);
tprof_pv tprof_pickle_dict_key(const tprof_pickle *p, tprof_pv v, size_t i);
tprof_pv tprof_pickle_dict_value(const tprof_pickle *p, tprof_pv v, size_t i);
/* Value of string key KEY in dict D (the last one when repeated), or
 * TPROF_PV_NONE when absent or D is not a dict. */
tprof_pv tprof_pickle_get(const tprof_pickle *p, tprof_pv d, const char *key);
#define TPROF_PV_NONE ((tprof_pv)0) /* handle 0 is always the None value */

#ifdef __cplusplus
}
#endif
#endif
