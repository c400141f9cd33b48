/* Generates a large CUDA memory snapshot pickle (protocol 4, the layout of
 * PyTorch 2.9-2.11) directly, without Python: a random alloc/free history
 * over a few shared frame lists, memoized the way Python's pickler does it
 * (every dict and list MEMOIZEd, repeated keys and frames fetched with
 * BINGET/LONG_BINGET). For benchmarks of `trainprof mem` against Python.
 *
 * usage: trainprof-gensnap OUT.pickle EVENTS [SEED]
 * Prints the true peak of live requested bytes on stderr. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;
static uint32_t memo;
static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void put(const void *p, size_t n) { fwrite(p, 1, n, out); }
static void op(int c) { fputc(c, out); }
static uint32_t memoize(void)
{
    op(0x94);
    return memo++;
}
static void get(uint32_t i)
{
    if (i < 256) {
        op('h');
        op((int)i);
    } else {
        op('j');
        unsigned char b[4] = { (unsigned char)i, (unsigned char)(i >> 8), (unsigned char)(i >> 16), (unsigned char)(i >> 24) };
        put(b, 4);
    }
}

/* ints as Python's pickler writes them */
static void pint(int64_t v)
{
    if (v >= 0 && v < 256) {
        op('K');
        op((int)v);
    } else if (v >= 0 && v < 65536) {
        op('M');
        op((int)(v & 255));
        op((int)(v >> 8));
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        op('J');
        uint32_t u = (uint32_t)v;
        for (int i = 0; i < 4; i++) op((int)((u >> (8 * i)) & 255));
    } else {
        unsigned char b[9];
        int n = 0;
        uint64_t u = (uint64_t)v;
        do {
            b[n++] = (unsigned char)(u & 255);
            u >>= 8;
        } while (u && n < 8);
        if (b[n - 1] & 0x80) b[n++] = 0; /* positive: keep the sign bit clear */
        op(0x8a);
        op(n);
        put(b, (size_t)n);
    }
}

/* a string, memoized on first use (ID caches the memo index, or UINT32_MAX) */
static void pstr(const char *s, uint32_t *id)
{
    if (id && *id != UINT32_MAX) {
        get(*id);
        return;
    }
    size_t n = strlen(s);
    op(0x8c);
    op((int)n);
    put(s, n);
    uint32_t m = memoize();
    if (id) *id = m;
}

enum { K_ACTION, K_ADDR, K_SIZE, K_STREAM, K_TIME, K_FRAMES, K_NAME, K_FILENAME, K_LINE, K_COUNT };
static const char *const keys[K_COUNT] = { "action", "addr", "size", "stream", "time_us", "frames", "name", "filename", "line" };
static uint32_t key_id[K_COUNT];
static const char *const actions[] = { "alloc", "free_requested", "free_completed" };
static uint32_t action_id[3];

#define NSITES 8
static uint32_t frames_id[NSITES];

static void frames(int s)
{
    if (frames_id[s] != UINT32_MAX) {
        get(frames_id[s]);
        return;
    }
    op(']');
    frames_id[s] = memoize();
    op('(');
    static const char *const fn[] = { "forward", "attention", "mlp", "step", "backward", "collate", "embed", "norm" };
    for (int f = 0; f < 3; f++) {
        char name[64], file[64];
        snprintf(name, sizeof name, "%s", f == 0 ? fn[s] : f == 1 ? "train" : "<module>");
        snprintf(file, sizeof file, "%s", f == 0 ? "/w/model.py" : "/w/train.py");
        op('}');
        memoize();
        op('(');
        pstr(keys[K_NAME], &key_id[K_NAME]);
        pstr(name, NULL);
        pstr(keys[K_FILENAME], &key_id[K_FILENAME]);
        pstr(file, NULL);
        pstr(keys[K_LINE], &key_id[K_LINE]);
        pint(10 * s + f + 1);
        op('u');
    }
    op('e');
}

static void entry(int action, uint64_t addr, int64_t size, int64_t t, int site)
{
    op('}');
    memoize();
    op('(');
    pstr(keys[K_ACTION], &key_id[K_ACTION]);
    pstr(actions[action], &action_id[action]);
    pstr(keys[K_ADDR], &key_id[K_ADDR]);
    pint((int64_t)addr);
    pstr(keys[K_SIZE], &key_id[K_SIZE]);
    pint(size);
    pstr(keys[K_STREAM], &key_id[K_STREAM]);
    pint(0);
    pstr(keys[K_TIME], &key_id[K_TIME]);
    pint(t);
    pstr(keys[K_FRAMES], &key_id[K_FRAMES]);
    frames(site);
    op('u');
}

typedef struct {
    uint64_t addr;
    int64_t size;
    int site;
} alloc_t;

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s OUT.pickle EVENTS [SEED]\n", argv[0]);
        return 2;
    }
    out = fopen(argv[1], "wb");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    static char buf[1 << 20];
    setvbuf(out, buf, _IOFBF, sizeof buf);
    long long nev = atoll(argv[2]);
    if (argc > 3) rng_state ^= (uint64_t)atoll(argv[3]) * 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < K_COUNT; i++) key_id[i] = UINT32_MAX;
    for (int i = 0; i < 3; i++) action_id[i] = UINT32_MAX;
    for (int i = 0; i < NSITES; i++) frames_id[i] = UINT32_MAX;

    size_t cap = 4096, nlive = 0;
    alloc_t *live = malloc(cap * sizeof *live);
    uint64_t next = 0x7f0000000000ull;
    int64_t t = 1760000000000000ll, cur = 0, peak = 0;

    put("\x80\x04", 2);
    op('}');
    memoize();
    op('(');
    /* the history first (segments are written after, from what stays live) */
    pstr("device_traces", NULL);
    op(']');
    memoize();
    op(']');
    memoize();
    long long n = 0, batch = 0;
    op('(');
    while (n < nev) {
        int do_free = nlive > 0 && (nlive >= 2000 || rnd() % 100 < 48);
        if (do_free) {
            size_t k = (size_t)(rnd() % nlive);
            alloc_t a = live[k];
            live[k] = live[--nlive];
            entry(1, a.addr, a.size, t += 3, a.site);
            entry(2, a.addr, a.size, t += 2, a.site);
            cur -= a.size;
            n += 2;
            batch += 2;
        } else {
            if (nlive == cap) live = realloc(live, (cap *= 2) * sizeof *live);
            int64_t size = (int64_t)(rnd() % (64u << 20)) + 1;
            alloc_t a = { next, size, (int)(rnd() % NSITES) };
            next += ((uint64_t)size + 511) / 512 * 512;
            live[nlive++] = a;
            entry(0, a.addr, a.size, t += 5, a.site);
            cur += size;
            if (cur > peak) peak = cur;
            n++;
            batch++;
        }
        if (batch >= 1000) { /* APPENDS in batches of 1000, as Python */
            op('e');
            op('(');
            batch = 0;
        }
    }
    op('e');
    op('a'); /* the device's list into device_traces */
    /* segments: one per live allocation, one active block each */
    pstr("segments", NULL);
    op(']');
    memoize();
    op('(');
    for (size_t i = 0; i < nlive; i++) {
        int64_t bs = (live[i].size + 511) / 512 * 512;
        op('}');
        memoize();
        op('(');
        pstr("device", NULL); pint(0);
        pstr("address", NULL); pint((int64_t)live[i].addr);
        pstr("total_size", NULL); pint(bs);
        pstr("allocated_size", NULL); pint(bs);
        pstr("stream", NULL); pint(0);
        pstr("segment_type", NULL); pstr("large", NULL);
        pstr("blocks", NULL);
        op(']');
        memoize();
        op('}');
        memoize();
        op('(');
        pstr("address", NULL); pint((int64_t)live[i].addr);
        pstr("size", NULL); pint(bs);
        pstr("requested_size", NULL); pint(live[i].size);
        pstr("state", NULL); pstr("active_allocated", NULL);
        pstr("frames", NULL); frames(live[i].site);
        op('u');
        op('a');
        op('u');
        if (i % 1000 == 999) {
            op('e');
            op('(');
        }
    }
    op('e');
    pstr("allocator_settings", NULL);
    op('}');
    memoize();
    pstr("external_annotations", NULL);
    op(']');
    memoize();
    op('u');
    op('.');
    free(live);
    if (fclose(out)) {
        perror(argv[1]);
        return 1;
    }
    fprintf(stderr, "%lld events, true peak %" PRId64 " bytes, %zu live at the end\n", n, peak, nlive);
    return 0;
}
