#include "strtab.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t load64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint64_t mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

/* A fast 64-bit hash over 8-byte words (multiply-xorshift); names are short
 * to medium. Kernel names run to a few hundred bytes: those go through four
 * independent lanes first, so that the multiplies overlap. */
uint64_t tprof_hash_bytes(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (len * 0xff51afd7ed558ccdull);
    if (len >= 32) {
        uint64_t a = h, b = h ^ 0x2545F4914F6CDD1Dull, c = h ^ 0x632BE59BD9B4E019ull, d = h ^ 0x85EBCA77C2B2AE63ull;
        do {
            a = mix(a, load64(p));
            b = mix(b, load64(p + 8));
            c = mix(c, load64(p + 16));
            d = mix(d, load64(p + 24));
            p += 32;
            len -= 32;
        } while (len >= 32);
        h = mix(mix(mix(a, b), c), d);
    }
    while (len >= 8) {
        h = mix(h, load64(p));
        p += 8;
        len -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, len);
    h = (h ^ w) * 0x94d049bb133111ebull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h;
}

int tprof_strtab_init(tprof_strtab *t)
{
    memset(t, 0, sizeof *t);
    t->nslots = 1024;
    t->slots = calloc(t->nslots, sizeof *t->slots);
    if (!t->slots) return -1;
    return tprof_strtab_intern(t, "", 0) == 0 ? 0 : -1;
}

void tprof_strtab_free(tprof_strtab *t)
{
    for (size_t i = 0; i < t->nchunks; i++) free(t->chunks[i]);
    free(t->chunks);
    free(t->slots);
    free(t->hashes);
    free(t->strs);
    free(t->lens);
    memset(t, 0, sizeof *t);
}

static char *arena_alloc(tprof_strtab *t, size_t n)
{
    if (t->arena_used + n > t->arena_cap) {
        size_t cap = n > 65536 ? n : 65536;
        char *c = malloc(cap);
        if (!c) return NULL;
        char **nc = realloc(t->chunks, (t->nchunks + 1) * sizeof *nc);
        if (!nc) { free(c); return NULL; }
        t->chunks = nc;
        t->chunks[t->nchunks++] = c;
        t->arena = c;
        t->arena_cap = cap;
        t->arena_used = 0;
        t->bytes += cap;
    }
    char *r = t->arena + t->arena_used;
    t->arena_used += n;
    return r;
}

static int grow_slots(tprof_strtab *t)
{
    size_t n = t->nslots * 2;
    uint32_t *s = calloc(n, sizeof *s);
    if (!s) return -1;
    for (size_t id = 0; id < t->count; id++) {
        size_t i = t->hashes[id] & (n - 1);
        while (s[i]) i = (i + 1) & (n - 1);
        s[i] = (uint32_t)id + 1;
    }
    free(t->slots);
    t->slots = s;
    t->bytes += (n - t->nslots) * sizeof *s;
    t->nslots = n;
    return 0;
}

/* A string with NUL bytes (JSON's \u0000) is stored with each NUL shown as
 * U+2400 (the symbol for null), so that every user of the C string sees all
 * of it: a table would otherwise cut the name at the NUL. */
static uint32_t intern_visible_nul(tprof_strtab *t, const char *s, size_t len)
{
    size_t nul = 0;
    for (size_t i = 0; i < len; i++) nul += s[i] == 0;
    if (len > SIZE_MAX / 4) return UINT32_MAX;
    char *v = malloc(len + 2 * nul);
    if (!v) return UINT32_MAX;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i]) {
            v[n++] = s[i];
            continue;
        }
        v[n++] = (char)0xE2;
        v[n++] = (char)0x90;
        v[n++] = (char)0x80;
    }
    uint32_t id = tprof_strtab_intern(t, v, n);
    free(v);
    return id;
}

uint32_t tprof_strtab_find(const tprof_strtab *t, const char *s, size_t len)
{
    uint64_t h = tprof_hash_bytes(s, len);
    size_t mask = t->nslots - 1, i = h & mask;
    for (uint32_t v; (v = t->slots[i]) != 0; i = (i + 1) & mask) {
        uint32_t id = v - 1;
        if (t->hashes[id] == h && t->lens[id] == len && memcmp(t->strs[id], s, len) == 0) return id;
    }
    return UINT32_MAX;
}

uint32_t tprof_strtab_intern(tprof_strtab *t, const char *s, size_t len)
{
    return tprof_strtab_intern_hashed(t, s, len, tprof_hash_bytes(s, len));
}

uint32_t tprof_strtab_intern_hashed(tprof_strtab *t, const char *s, size_t len, uint64_t h)
{
    size_t mask = t->nslots - 1, i = h & mask;
    for (uint32_t v; (v = t->slots[i]) != 0; i = (i + 1) & mask) {
        uint32_t id = v - 1;
        if (t->hashes[id] == h && t->lens[id] == len && memcmp(t->strs[id], s, len) == 0) return id;
    }
    if (t->count >= UINT32_MAX - 1 || len >= UINT32_MAX) return UINT32_MAX;
    if (memchr(s, 0, len)) return intern_visible_nul(t, s, len); /* never stored with a NUL: see there */
    if (t->count == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        uint64_t *nh = realloc(t->hashes, nc * sizeof *nh);
        if (nh) t->hashes = nh;
        const char **ns = realloc(t->strs, nc * sizeof *ns);
        if (ns) t->strs = ns;
        uint32_t *nl = realloc(t->lens, nc * sizeof *nl);
        if (nl) t->lens = nl;
        if (!nh || !ns || !nl) return UINT32_MAX;
        t->bytes += (nc - t->cap) * (sizeof *nh + sizeof *ns + sizeof *nl);
        t->cap = nc;
    }
    char *copy = arena_alloc(t, len + 1);
    if (!copy) return UINT32_MAX;
    memcpy(copy, s, len);
    copy[len] = 0;
    uint32_t id = (uint32_t)t->count++;
    t->strs[id] = copy;
    t->lens[id] = (uint32_t)len;
    t->hashes[id] = h;
    t->slots[i] = id + 1;
    if (t->count * 2 > t->nslots && grow_slots(t)) return UINT32_MAX;
    return id;
}
