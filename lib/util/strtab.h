/* String interning: each distinct string is stored once and named by a dense
 * id (0, 1, 2, ...). Id 0 is always the empty string. Internal header. */
#ifndef TPROF_STRTAB_H
#define TPROF_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t *slots;    /* open addressing: id + 1, 0 = empty */
    uint64_t *hashes;   /* hash per id */
    const char **strs;  /* NUL-terminated text per id */
    uint32_t *lens;
    size_t nslots, count, cap;
    char *arena;        /* current chunk */
    size_t arena_used, arena_cap;
    char **chunks;
    size_t nchunks;
    size_t bytes;       /* memory held */
} tprof_strtab;

int tprof_strtab_init(tprof_strtab *t);
void tprof_strtab_free(tprof_strtab *t);
/* Returns the id of S (interning it), or UINT32_MAX when out of memory. A NUL
 * byte in S is stored as U+2400 (the symbol for null), so no C string is cut. */
uint32_t tprof_strtab_intern(tprof_strtab *t, const char *s, size_t len);
/* The same with S's tprof_hash_bytes H known (another table's hashes[]:
 * moving strings between tables costs no second hash). */
uint32_t tprof_strtab_intern_hashed(tprof_strtab *t, const char *s, size_t len, uint64_t h);
/* The id of S when it is interned, else UINT32_MAX. */
uint32_t tprof_strtab_find(const tprof_strtab *t, const char *s, size_t len);
static inline const char *tprof_strtab_get(const tprof_strtab *t, uint32_t id)
{
    return id < t->count ? t->strs[id] : "";
}
uint64_t tprof_hash_bytes(const void *p, size_t len);

#endif
