/* Safe pickle decoder (include/trainprof/pickle.h). A value stack, a MARK
 * stack and a memo of value handles; nothing is imported or called. The
 * input streams through a window; strings are copied into an arena. */
#include "trainprof/pickle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainprof/error.h"
#include "trainprof/report.h"
#include "trainprof/source.h"

#define NO_CHUNK UINT32_MAX
#define NO_MEMO UINT32_MAX
#define F_UNSIGNED 0x01
#define F_CHUNKED 0x02 /* a container whose items came in separate runs: B = first | last chunk */
#define F_PARTIAL 0x04 /* a container the cut fell inside */
#define F_CLIPPED 0x08 /* a string longer than TPROF_PICKLE_MAX_STRING: its first bytes only */
/* Ints 0 .. 2^31-2 live in the handle itself (sizes, streams, line numbers,
 * most of a snapshot's ints), so they need no value storage. */
#define PV_IMM 0x80000000u
#define IMM_MAX 0x7ffffffeu
#define WINDOW (1u << 20) /* input window of a streamed load */
/* a pickler numbers memo entries in order (the next index is the count so
 * far), so an index far beyond the entries stored is bogus; the slack
 * allows pickles whose unused entries were dropped */
#define MEMO_SLACK 65536

/* 16 bytes per value. Strings: B = offset into the string arena, A = the
 * length kept. Containers: A = items (pairs for dicts), B = the offset of
 * the items in the pool; a container filled in several runs that are not
 * contiguous in the pool (rare: nested containers filled in between) holds
 * a chunk list while decoding (F_CHUNKED) and is laid out contiguously at
 * the end. */
typedef struct {
    uint8_t type, flags;
    uint16_t pad;
    uint32_t a;
    uint64_t b;
} node;

typedef struct {
    uint64_t off;
    uint32_t n, next;
} chunk;

struct tprof_pickle {
    char *name;
    /* input: WIN[POS..LEN) are the bytes at offset BASE + POS; SRC refills
     * it (NULL: the window is the caller's whole buffer) */
    tprof_source *src;
    unsigned char *win;
    size_t wpos, wlen, wcap;
    uint64_t base, total;
    int src_cut;     /* the compressed stream stopped early */
    int src_err;     /* a read failed: the message is in srcmsg */
    char srcmsg[256];
    char *strs;      /* string arena */
    size_t nstrs, capstrs;
    node *nodes;
    size_t nnodes, capnodes;
    tprof_pv *pool;
    size_t npool, cappool;
    chunk *chunks;
    size_t nchunks, capchunks;
    tprof_pv *stack;
    size_t nstack, capstack;
    size_t *marks;
    size_t nmarks, capmarks;
    tprof_pv *memo;
    size_t capmemo, nmemo;
    uint64_t held, max_held, limit; /* bytes of the arrays above */
    void (*progress)(void *, const char *, uint64_t, int64_t);
    void *progress_ctx;
    uint64_t progress_next; /* bytes_in at which to tell progress next */
    int over;        /* a growth was refused by the limit */
    tprof_pv root;
    int proto, truncated;
    char *err;
    size_t errlen;
};

static void tell_progress(tprof_pickle *p, int end);

static int fail(tprof_pickle *p, int code, uint64_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(tprof_pickle *p, int code, uint64_t at, const char *fmt, ...)
{
    if (p->err && p->errlen) {
        int n = snprintf(p->err, p->errlen, "%s: byte %llu: ", p->name, (unsigned long long)at);
        if (n >= 0 && (size_t)n < p->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return code;
}

uint64_t tprof_pickle_default_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    uint64_t half = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size / 2 : 0;
    return half > (1ull << 30) ? half : 1ull << 30;
}

/* Grows *PTR to hold NEED elements (doubling), within the memory limit. */
static int grow(tprof_pickle *p, void **ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    uint64_t more = (uint64_t)(c - *cap) * elem;
    if (p->held + more > p->limit) {
        /* the doubling would pass the limit: take what is left of it */
        uint64_t room = p->limit > p->held ? (p->limit - p->held) / elem : 0;
        if (room < need - *cap) {
            p->over = 1;
            return TPROF_ELIMIT;
        }
        c = *cap + (size_t)room;
        more = (uint64_t)(c - *cap) * elem;
    }
    void *q = realloc(*ptr, c * elem);
    if (!q) return TPROF_ENOMEM;
    *ptr = q;
    *cap = c;
    p->held += more;
    if (p->held > p->max_held) p->max_held = p->held;
    return 0;
}

/* Makes N bytes available at WIN + WPOS. Returns 1, 0 at the end of the
 * input, or a negative code (a read error: SRCMSG). */
static int refill(tprof_pickle *p, size_t n)
{
    if (p->wlen - p->wpos >= n) return 1;
    if (!p->src) return 0;
    size_t keep = p->wlen - p->wpos;
    memmove(p->win, p->win + p->wpos, keep);
    p->base += p->wpos;
    p->wpos = 0;
    p->wlen = keep;
    while (p->wlen < n && !p->src_cut) {
        ssize_t r = tprof_source_read(p->src, p->win + p->wlen, p->wcap - p->wlen);
        if (r == 0) break;
        if (r == TPROF_ETRUNC) {
            p->src_cut = 1; /* a cut compressed stream: decode what came out */
            break;
        }
        if (r < 0) {
            snprintf(p->srcmsg, sizeof p->srcmsg, "%s", tprof_source_errmsg(p->src));
            p->src_err = 1;
            return (int)r;
        }
        p->wlen += (size_t)r;
        p->total += (uint64_t)r;
        tell_progress(p, 0);
    }
    return p->wlen >= n;
}

/* The caller's progress hook, every 16 MiB of the file (and at its END). */
static void tell_progress(tprof_pickle *p, int end)
{
    if (!p->progress || !p->src) return;
    uint64_t in = tprof_source_bytes_in(p->src);
    if (!end && in < p->progress_next) return;
    p->progress_next = in + (16u << 20);
    p->progress(p->progress_ctx, p->name, in, tprof_source_file_size(p->src));
}

static int new_node(tprof_pickle *p, uint8_t type, tprof_pv *out)
{
    if (p->nnodes >= PV_IMM - 1) return TPROF_ELIMIT;
    int grc = grow(p, (void **)&p->nodes, &p->capnodes, p->nnodes + 1, sizeof(node));
    if (grc) return grc;
    node *n = &p->nodes[p->nnodes];
    memset(n, 0, sizeof *n);
    n->type = type;
    *out = (tprof_pv)p->nnodes++;
    return 0;
}

static int push(tprof_pickle *p, tprof_pv v)
{
    int grc = grow(p, (void **)&p->stack, &p->capstack, p->nstack + 1, sizeof(tprof_pv));
    if (grc) return grc;
    p->stack[p->nstack++] = v;
    return 0;
}

static uint8_t type_of(const tprof_pickle *p, tprof_pv v)
{
    return (v & PV_IMM) ? TPROF_PK_INT : p->nodes[v].type;
}

static int push_new(tprof_pickle *p, uint8_t type, tprof_pv *out)
{
    tprof_pv v;
    int rc = new_node(p, type, &v);
    if (rc) return rc;
    if (out) *out = v;
    return push(p, v);
}

static int new_chunk(tprof_pickle *p, uint64_t off, size_t n, uint32_t *k)
{
    if (p->nchunks >= UINT32_MAX - 1) return TPROF_ELIMIT;
    int grc = grow(p, (void **)&p->chunks, &p->capchunks, p->nchunks + 1, sizeof(chunk));
    if (grc) return grc;
    *k = (uint32_t)p->nchunks++;
    p->chunks[*k] = (chunk){ .off = off, .n = (uint32_t)n, .next = NO_CHUNK };
    return 0;
}

/* Appends N stack values to container C: extends its run when that ends
 * the pool (the common case), else links a new chunk. */
static int add_items(tprof_pickle *p, tprof_pv c, const tprof_pv *items, size_t n)
{
    if (!n) return 0;
    node *nd = &p->nodes[c];
    if ((uint64_t)nd->a + n > UINT32_MAX) return TPROF_ELIMIT;
    int grc = grow(p, (void **)&p->pool, &p->cappool, p->npool + n, sizeof(tprof_pv));
    if (grc) return grc;
    memmove(p->pool + p->npool, items, n * sizeof *items);
    uint64_t raw = nd->type == TPROF_PK_DICT ? 2 * (uint64_t)nd->a : nd->a;
    if (!(nd->flags & F_CHUNKED)) {
        if (raw == 0) nd->b = p->npool; /* the first run */
        else if (nd->b + raw != p->npool) { /* not contiguous: switch to chunks */
            if (raw > UINT32_MAX) return TPROF_ELIMIT;
            uint32_t k0, k1;
            int rc = new_chunk(p, nd->b, (size_t)raw, &k0);
            if (!rc) rc = new_chunk(p, p->npool, n, &k1);
            if (rc) return rc;
            p->chunks[k0].next = k1;
            nd->flags |= F_CHUNKED;
            nd->b = (uint64_t)k0 | ((uint64_t)k1 << 32);
        }
        nd->a += (uint32_t)(nd->type == TPROF_PK_DICT ? n / 2 : n);
        p->npool += n;
        return 0;
    }
    uint32_t first = (uint32_t)nd->b, last = (uint32_t)(nd->b >> 32);
    if (last != NO_CHUNK && p->chunks[last].off + p->chunks[last].n == p->npool &&
        (uint64_t)p->chunks[last].n + n <= UINT32_MAX) {
        p->chunks[last].n += (uint32_t)n;
    } else {
        uint32_t k;
        int rc = new_chunk(p, p->npool, n, &k);
        if (rc) return rc;
        p->chunks[last].next = k;
        last = k;
    }
    nd->b = (uint64_t)first | ((uint64_t)last << 32);
    nd->a += (uint32_t)(p->nodes[c].type == TPROF_PK_DICT ? n / 2 : n);
    p->npool += n;
    return 0;
}

static const char *op_name(unsigned op)
{
    switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    case 'I': return "INT";
    case 'L': return "LONG";
    case 'F': return "FLOAT";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";
    case 'p': return "PUT";
    case 'g': return "GET";
    case 'l': return "LIST";
    case 'd': return "DICT";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    default: return NULL;
    }
}

static int is_refused(unsigned op)
{
    return op == 'c' || op == 0x93 || op == 'R' || op == 'b' || op == 'i' || op == 'o' || op == 0x81 ||
           op == 0x92 || op == 0x82 || op == 0x83 || op == 0x84 || op == 'P' || op == 'Q' || op == 0x96 ||
           op == 0x97 || op == 0x98;
}

static uint64_t le(const unsigned char *s, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)s[i] << (8 * i);
    return v;
}

static int push_int(tprof_pickle *p, uint64_t v, uint8_t flags, tprof_pv *out)
{
    if (!flags && v <= IMM_MAX) {
        *out = PV_IMM | (tprof_pv)v;
        return push(p, *out);
    }
    int rc = push_new(p, TPROF_PK_INT, out);
    if (rc) return rc;
    p->nodes[*out].b = v;
    p->nodes[*out].flags = flags;
    return 0;
}

/* LONG1/LONG4 payload: little-endian two's complement, up to 9 bytes. */
static int decode_long(tprof_pickle *p, size_t at, const unsigned char *s, size_t n, tprof_pv *out)
{
    uint64_t v;
    uint8_t flags = 0;
    if (n == 0) v = 0;
    else if (n <= 8) {
        v = le(s, n);
        if (n < 8 && (s[n - 1] & 0x80)) v |= ~(uint64_t)0 << (8 * n); /* sign-extend */
    } else if (n == 9 && s[8] == 0x00) {
        v = le(s, 8); /* 0 .. 2^64-1 */
        if (v > (uint64_t)INT64_MAX) flags = F_UNSIGNED;
    } else if (n == 9 && s[8] == 0xff && (s[7] & 0x80)) {
        v = le(s, 8); /* a negative value in 9 bytes: fits int64 */
    } else {
        return fail(p, TPROF_EFORMAT, at, "integer of %zu bytes is wider than 64 bits", n);
    }
    return push_int(p, v, flags, out);
}

static int pop_mark(tprof_pickle *p, size_t at, size_t *mark)
{
    if (!p->nmarks) return fail(p, TPROF_EFORMAT, at, "no MARK on the stack for this opcode");
    *mark = p->marks[--p->nmarks];
    return 0;
}

static int need_stack(tprof_pickle *p, size_t at, size_t n, const char *what)
{
    size_t base = p->nmarks ? p->marks[p->nmarks - 1] : 0;
    if (p->nstack < base + n) return fail(p, TPROF_EFORMAT, at, "%s needs %zu value(s) on the stack", what, n);
    return 0;
}

static int is_container(const tprof_pickle *p, tprof_pv v, int dict_ok, int list_ok)
{
    uint8_t t = type_of(p, v);
    return (dict_ok && t == TPROF_PK_DICT) || (list_ok && t == TPROF_PK_LIST);
}

static int make_tuple(tprof_pickle *p, size_t from)
{
    size_t n = p->nstack - from;
    tprof_pv t;
    int rc = new_node(p, TPROF_PK_TUPLE, &t);
    if (rc) return rc;
    rc = n ? add_items(p, t, p->stack + from, n) : 0; /* the stack may still be NULL */
    if (rc) return rc;
    p->nstack = from;
    return push(p, t);
}

static int memo_put(tprof_pickle *p, uint64_t at, uint64_t idx)
{
    if (!p->nstack) return fail(p, TPROF_EFORMAT, at, "memo store with an empty stack");
    /* a pickler numbers memo entries in order, so an index far beyond the
     * entries stored so far is bogus; this keeps the memo proportional to
     * what is kept (a count of bytes read would let a bomb's skipped bytes
     * size it) */
    if (idx > (uint64_t)p->nmemo + MEMO_SLACK || idx > at)
        return fail(p, TPROF_EFORMAT, at, "memo index %llu out of range (%zu entries stored so far)",
                    (unsigned long long)idx, p->nmemo);
    if (idx >= p->capmemo) {
        size_t old = p->capmemo;
        int grc = grow(p, (void **)&p->memo, &p->capmemo, (size_t)idx + 1, sizeof(tprof_pv));
        if (grc) return grc;
        for (size_t i = old; i < p->capmemo; i++) p->memo[i] = NO_MEMO;
    }
    if (p->memo[idx] == NO_MEMO) p->nmemo++;
    p->memo[idx] = p->stack[p->nstack - 1];
    return 0;
}

static int memo_get(tprof_pickle *p, uint64_t at, uint64_t idx)
{
    if (idx >= p->capmemo || p->memo[idx] == NO_MEMO)
        return fail(p, TPROF_EFORMAT, at, "memo index %llu fetched before it was stored", (unsigned long long)idx);
    return push(p, p->memo[idx]);
}

/* A value that cannot be a dict key: Python refuses lists and dicts. */
static int unhashable(const tprof_pickle *p, tprof_pv v)
{
    uint8_t t = type_of(p, v);
    return t == TPROF_PK_LIST || t == TPROF_PK_DICT;
}

static void set_partial(tprof_pickle *p, tprof_pv c)
{
    if (!(c & PV_IMM)) p->nodes[c].flags |= F_PARTIAL;
}

/* After a cut, VALS[0..N) (no MARK under them) complete the pending single
 * APPEND or SETITEM of container C: Python's pickler writes a one-item list
 * as `item APPEND` (and the last batch of one the same way), a one-item dict
 * as `key value SETITEM`. The first value (key and value) goes into C; what
 * follows it went into that value, itself still being filled. */
static int close_single(tprof_pickle *p, tprof_pv c, const tprof_pv *vals, size_t n)
{
    while (n && is_container(p, c, 1, 1)) {
        set_partial(p, c);
        tprof_pv next;
        int rc;
        if (type_of(p, c) == TPROF_PK_LIST) {
            rc = add_items(p, c, vals, 1);
            next = vals[0];
            vals += 1;
            n -= 1;
        } else {
            if (n < 2) return 0; /* a key without its value */
            rc = add_items(p, c, vals, 2);
            next = vals[1];
            vals += 2;
            n -= 2;
        }
        if (rc) return rc;
        c = next;
    }
    return 0;
}

/* After a cut, the values above an open MARK (VALS[0..N)) go into the
 * container C below it: a list takes them all, a dict takes key-value
 * pairs up to a value that cannot be a key: that one, with what follows,
 * is the pending single item of the value before it (a snapshot's
 * one-device device_traces: `'device_traces' [ [entries...` with the inner
 * list not yet appended to the outer one). */
static int close_region(tprof_pickle *p, tprof_pv c, const tprof_pv *vals, size_t n)
{
    set_partial(p, c);
    if (type_of(p, c) == TPROF_PK_LIST) return add_items(p, c, vals, n);
    size_t i = 0;
    while (i + 1 < n && !unhashable(p, vals[i])) i += 2;
    int rc = add_items(p, c, vals, i);
    if (rc) return rc;
    if (i < n && i >= 2 && unhashable(p, vals[i])) return close_single(p, vals[i - 1], vals + i, n - i);
    return 0; /* else a key without its value, dropped */
}

/* Completes each open MARK with the container below it (or a tuple) after
 * a cut, and the pending single items, so that everything decoded so far
 * hangs off the root. Containers completed here are marked partial, and so
 * is a container left empty on top of the stack. */
static int close_after_cut(tprof_pickle *p)
{
    /* the last value before the cut, a container still empty: its items
     * were to come (a trace entry or block just begun) */
    if (p->nstack && is_container(p, p->stack[p->nstack - 1], 1, 1) && !p->nodes[p->stack[p->nstack - 1]].a)
        set_partial(p, p->stack[p->nstack - 1]);
    while (p->nmarks) {
        size_t m = p->marks[--p->nmarks];
        if (m > p->nstack) m = p->nstack;
        int rc;
        if (m > 0 && is_container(p, p->stack[m - 1], 1, 1)) {
            rc = close_region(p, p->stack[m - 1], p->stack + m, p->nstack - m);
            p->nstack = m;
        } else {
            rc = make_tuple(p, m);
            if (!rc) set_partial(p, p->stack[p->nstack - 1]);
        }
        if (rc) return rc;
    }
    if (p->nstack > 1) {
        int rc = close_single(p, p->stack[0], p->stack + 1, p->nstack - 1);
        if (rc) return rc;
    }
    p->root = p->nstack ? p->stack[0] : TPROF_PV_NONE;
    return 0;
}

/* A string or bytes payload of N bytes at the window's position: its first
 * TPROF_PICKLE_MAX_STRING bytes are copied into the arena, the rest is
 * skipped as it streams by. Returns 1, 0 when the input ends inside it, or
 * a negative code. */
static int read_string(tprof_pickle *p, uint64_t n, tprof_pv *out, int is_str)
{
    size_t keep = n > TPROF_PICKLE_MAX_STRING ? TPROF_PICKLE_MAX_STRING : (size_t)n;
    size_t off = p->nstrs;
    int rc = grow(p, (void **)&p->strs, &p->capstrs, off + keep + 1, 1);
    if (rc) return rc;
    uint64_t left = n;
    size_t copied = 0;
    while (left) {
        if (p->wpos == p->wlen) {
            rc = refill(p, 1);
            if (rc <= 0) return rc;
        }
        size_t have = p->wlen - p->wpos;
        size_t take = have < left ? have : (size_t)left;
        if (copied < keep) {
            size_t c = keep - copied < take ? keep - copied : take;
            memcpy(p->strs + off + copied, p->win + p->wpos, c);
            copied += c;
        }
        p->wpos += take;
        left -= take;
    }
    p->nstrs = off + keep;
    if ((rc = push_new(p, is_str ? TPROF_PK_STR : TPROF_PK_BYTES, out))) return rc;
    p->nodes[*out].a = (uint32_t)keep;
    p->nodes[*out].b = off;
    if (keep < n) p->nodes[*out].flags |= F_CLIPPED;
    return 1;
}

/* A read of the byte source failed: its message (it names the file). */
static int src_fail(tprof_pickle *p, int rc)
{
    if (p->err && p->errlen) snprintf(p->err, p->errlen, "%s", p->srcmsg);
    return rc;
}

/* The message of an allocation that failed at AT. */
static int oom_or_limit(tprof_pickle *p, int rc, uint64_t at)
{
    if (rc == TPROF_ENOMEM) return fail(p, rc, at, "out of memory");
    if (rc == TPROF_ELIMIT && p->over) {
        char lim[32];
        tprof_fmt_bytes(lim, sizeof lim, (int64_t)(p->limit > INT64_MAX ? INT64_MAX : p->limit));
        return fail(p, rc, at,
                    "the decoded values would take more than the memory limit of %s (%llu bytes held); a "
                    "pickle that expands this much is not a memory snapshot PyTorch writes, or a larger limit is "
                    "needed (trainprof mem --max-memory)",
                    lim, (unsigned long long)p->held);
    }
    if (rc == TPROF_ELIMIT) return fail(p, rc, at, "more values than the decoder's 2^32 limit");
    return rc;
}

static int decode(tprof_pickle *p)
{
    const unsigned char *d = p->win;
    size_t len = p->wlen, pos = p->wpos;
    int rc = 0;
    tprof_pv v;
    uint64_t at = 0;
    /* N bytes at D + POS, refilling the window; the end of the input there is the cut */
#define NEED(n)                                                                                                \
    do {                                                                                                       \
        if ((n) > len - pos) {                                                                                 \
            p->wpos = pos;                                                                                     \
            int r_ = refill(p, (n));                                                                           \
            d = p->win;                                                                                        \
            pos = p->wpos;                                                                                     \
            len = p->wlen;                                                                                     \
            if (r_ < 0) return src_fail(p, r_);                                                                \
            if (!r_) goto cut;                                                                                 \
        }                                                                                                      \
    } while (0)
    for (;;) {
        at = p->base + pos;
        NEED(1);
        unsigned op = d[pos++];
        switch (op) {
        case 0x80: /* PROTO */
            NEED(1);
            p->proto = d[pos++];
            if (p->proto > 5) return fail(p, TPROF_EFORMAT, at, "pickle protocol %d is not supported (0-5)", p->proto);
            break;
        case 0x95: /* FRAME: a length hint only */
            NEED(8);
            pos += 8;
            break;
        case '.': /* STOP */
            /* as in Python: the top value is the result; anything under it
             * and bytes after STOP are ignored */
            if (!p->nstack) return fail(p, TPROF_EFORMAT, at, "STOP with an empty stack");
            p->root = p->stack[p->nstack - 1];
            p->wpos = pos;
            return 0;
        case '(': /* MARK */
            if (p->nmarks >= TPROF_PICKLE_MAX_DEPTH)
                return fail(p, TPROF_ELIMIT, at, "more than %d open MARKs (nesting too deep)", TPROF_PICKLE_MAX_DEPTH);
            rc = grow(p, (void **)&p->marks, &p->capmarks, p->nmarks + 1, sizeof(size_t));
            if (!rc) p->marks[p->nmarks++] = p->nstack;
            break;
        case '}': rc = push_new(p, TPROF_PK_DICT, NULL); break;
        case ']': rc = push_new(p, TPROF_PK_LIST, NULL); break;
        case ')': rc = push_new(p, TPROF_PK_TUPLE, NULL); break;
        case 0x85: case 0x86: case 0x87: { /* TUPLE1..3 */
            size_t n = op - 0x84;
            if ((rc = need_stack(p, at, n, "TUPLEn"))) return rc;
            rc = make_tuple(p, p->nstack - n);
            break;
        }
        case 't': { /* TUPLE */
            size_t m = 0;
            if ((rc = pop_mark(p, at, &m))) return rc;
            rc = make_tuple(p, m);
            break;
        }
        case 's': /* SETITEM */
            if ((rc = need_stack(p, at, 3, "SETITEM"))) return rc;
            if (!is_container(p, p->stack[p->nstack - 3], 1, 0))
                return fail(p, TPROF_EFORMAT, at, "SETITEM on a %s, not a dict",
                            tprof_pickle_type_name(type_of(p, p->stack[p->nstack - 3])));
            rc = add_items(p, p->stack[p->nstack - 3], p->stack + p->nstack - 2, 2);
            p->nstack -= 2;
            break;
        case 'u': case 'e': { /* SETITEMS, APPENDS */
            size_t m = 0;
            if ((rc = pop_mark(p, at, &m))) return rc;
            if (m == 0 || !is_container(p, p->stack[m - 1], op == 'u', op == 'e'))
                return fail(p, TPROF_EFORMAT, at, "%s without a %s below its MARK", op == 'u' ? "SETITEMS" : "APPENDS",
                            op == 'u' ? "dict" : "list");
            if (op == 'u' && ((p->nstack - m) & 1))
                return fail(p, TPROF_EFORMAT, at, "SETITEMS with an odd number of values (a key without a value)");
            rc = add_items(p, p->stack[m - 1], p->stack + m, p->nstack - m);
            p->nstack = m;
            break;
        }
        case 'a': /* APPEND */
            if ((rc = need_stack(p, at, 2, "APPEND"))) return rc;
            if (!is_container(p, p->stack[p->nstack - 2], 0, 1))
                return fail(p, TPROF_EFORMAT, at, "APPEND on a %s, not a list",
                            tprof_pickle_type_name(type_of(p, p->stack[p->nstack - 2])));
            rc = add_items(p, p->stack[p->nstack - 2], p->stack + p->nstack - 1, 1);
            p->nstack -= 1;
            break;
        case 'J': /* BININT */
            NEED(4);
            rc = push_int(p, (uint64_t)(int64_t)(int32_t)(uint32_t)le(d + pos, 4), 0, &v);
            pos += 4;
            break;
        case 'K': case 'M': { /* BININT1, BININT2 */
            size_t n = op == 'K' ? 1 : 2;
            NEED(n);
            rc = push_int(p, le(d + pos, n), 0, &v);
            pos += n;
            break;
        }
        case 0x8a: case 0x8b: { /* LONG1, LONG4 */
            size_t hl = op == 0x8a ? 1 : 4;
            NEED(hl);
            uint64_t n = le(d + pos, hl);
            if (op == 0x8b && (n & 0x80000000u)) return fail(p, TPROF_EFORMAT, at, "LONG4 with a negative length");
            if (n > 9) return fail(p, TPROF_EFORMAT, at, "integer of %llu bytes is wider than 64 bits", (unsigned long long)n);
            pos += hl;
            NEED(n);
            rc = decode_long(p, at, d + pos, (size_t)n, &v);
            pos += n;
            break;
        }
        case 'G': { /* BINFLOAT: big-endian IEEE 754 double */
            NEED(8);
            uint64_t bits = 0;
            for (int i = 0; i < 8; i++) bits = bits << 8 | d[pos + i];
            pos += 8;
            if ((rc = push_new(p, TPROF_PK_FLOAT, &v))) break;
            p->nodes[v].b = bits;
            break;
        }
        case 'N': rc = push(p, TPROF_PV_NONE); break;
        case 0x88: case 0x89:
            if ((rc = push_new(p, TPROF_PK_BOOL, &v))) break;
            p->nodes[v].b = op == 0x88;
            break;
        case 0x8c: case 'X': case 0x8d: case 'C': case 'B': case 0x8e: { /* strings and bytes */
            size_t hl = (op == 0x8c || op == 'C') ? 1 : (op == 'X' || op == 'B') ? 4 : 8;
            NEED(hl);
            uint64_t n = le(d + pos, hl);
            pos += hl;
            p->wpos = pos;
            rc = read_string(p, n, &v, op == 0x8c || op == 'X' || op == 0x8d);
            d = p->win;
            pos = p->wpos;
            len = p->wlen;
            if (rc < 0 && p->src_err) return src_fail(p, rc);
            if (rc == 0) goto cut;
            if (rc == 1) rc = 0;
            break;
        }
        case 'q': NEED(1); rc = memo_put(p, at, d[pos]); pos += 1; break;
        case 'r': NEED(4); rc = memo_put(p, at, le(d + pos, 4)); pos += 4; break;
        case 0x94: /* MEMOIZE: the next index is the count of entries, as in Python */
            rc = memo_put(p, at, p->nmemo);
            break;
        case 'h': NEED(1); rc = memo_get(p, at, d[pos]); pos += 1; break;
        case 'j': NEED(4); rc = memo_get(p, at, le(d + pos, 4)); pos += 4; break;
        case '0': /* POP */
            if ((rc = need_stack(p, at, 1, "POP"))) return rc;
            p->nstack--;
            break;
        case '1': { /* POP_MARK */
            size_t m = 0;
            if ((rc = pop_mark(p, at, &m))) return rc;
            p->nstack = m;
            break;
        }
        case '2': /* DUP */
            if ((rc = need_stack(p, at, 1, "DUP"))) return rc;
            rc = push(p, p->stack[p->nstack - 1]);
            break;
        default: {
            const char *name = op_name(op);
            if (is_refused(op))
                return fail(p, TPROF_EFORMAT, at,
                            "opcode %s (0x%02x) refused: it imports or calls Python objects, and a memory "
                            "snapshot holds plain data only (nothing is executed)",
                            name, op);
            if (name)
                return fail(p, TPROF_EFORMAT, at, "opcode %s (0x%02x) is not used by memory snapshots", name, op);
            return fail(p, TPROF_EFORMAT, at, "not a pickle opcode: 0x%02x", op);
        }
        }
        if (rc) return oom_or_limit(p, rc, at);
    }
cut:
#undef NEED
    p->truncated = 1;
    p->wpos = pos;
    uint64_t end = p->base + len;
    if (end == 0) return fail(p, TPROF_EFORMAT, 0, "empty input (expected a pickle)");
    rc = close_after_cut(p);
    if (rc) return oom_or_limit(p, rc, end);
    fail(p, TPROF_ETRUNC, end, "the pickle is cut short (no STOP opcode); decoded what came before the cut");
    return TPROF_ETRUNC;
}

/* Lays each container's items out contiguously. */
static int finalize(tprof_pickle *p)
{
    for (size_t i = 0; i < p->nnodes; i++) {
        node *n = &p->nodes[i];
        if (!(n->flags & F_CHUNKED)) continue;
        uint32_t first = (uint32_t)n->b;
        size_t total = 0;
        for (uint32_t c = first; c != NO_CHUNK; c = p->chunks[c].next) total += p->chunks[c].n;
        int grc = grow(p, (void **)&p->pool, &p->cappool, p->npool + total, sizeof(tprof_pv));
    if (grc) return grc;
        size_t off = p->npool;
        for (uint32_t c = first; c != NO_CHUNK; c = p->chunks[c].next) {
            memcpy(p->pool + p->npool, p->pool + p->chunks[c].off, p->chunks[c].n * sizeof(tprof_pv));
            p->npool += p->chunks[c].n;
        }
        p->nodes[i].b = off;
        p->nodes[i].flags &= (uint8_t)~F_CHUNKED;
    }
    free(p->chunks);
    p->held -= (uint64_t)p->capchunks * sizeof(chunk);
    p->chunks = NULL;
    p->nchunks = p->capchunks = 0;
    return 0;
}

static int run(tprof_pickle *p, char *errbuf, size_t errlen, tprof_pickle **out)
{
    p->err = errbuf;
    p->errlen = errlen;
    tprof_pv none;
    int rc = new_node(p, TPROF_PK_NONE, &none); /* handle 0 */
    if (rc) rc = oom_or_limit(p, rc, 0);
    if (!rc) rc = decode(p);
    /* bytes after STOP: read (and counted) to the end, as Python's load
     * would not, so that a cut or corrupt compressed tail is still told.
     * After an error in the data of a compressed file, the rest is read
     * too: corruption that decompressed into garbage shows only at the
     * stream's check, and is then the error to report. */
    int corrupt_check = (rc == TPROF_EFORMAT || rc == TPROF_ELIMIT) && p->src &&
                        tprof_source_compression(p->src) != TPROF_COMP_NONE;
    while ((!rc || corrupt_check) && p->src && !p->src_cut && !p->src_err) {
        ssize_t r = tprof_source_read(p->src, p->win, p->wcap);
        if (r == 0) break;
        if (r == TPROF_ETRUNC) p->src_cut = 1;
        else if (r < 0) {
            snprintf(p->srcmsg, sizeof p->srcmsg, "%s", tprof_source_errmsg(p->src));
            p->src_err = 1;
            rc = src_fail(p, (int)r);
        } else
            p->total += (uint64_t)r;
    }
    int frc = rc == 0 || rc == TPROF_ETRUNC ? finalize(p) : 0;
    free(p->stack);
    free(p->marks);
    free(p->memo);
    p->held -= (uint64_t)p->capstack * sizeof(tprof_pv) + (uint64_t)p->capmarks * sizeof(size_t) +
               (uint64_t)p->capmemo * sizeof(tprof_pv);
    p->stack = NULL;
    p->marks = NULL;
    p->memo = NULL;
    p->capstack = p->capmarks = p->capmemo = 0;
    if (p->src && rc == TPROF_EFORMAT && errbuf) { /* another kind of file: say which */
        size_t hn;
        const uint8_t *head = tprof_source_head(p->src, &hn);
        tprof_input_hint_append(head, hn, TPROF_INPUT_BIT(TPROF_INPUT_SNAPSHOT), errbuf, errlen);
    }
    if (p->src) {
        tell_progress(p, 1);
        tprof_source_close(p->src);
        p->src = NULL;
        free(p->win);
    }
    p->win = NULL;
    p->wpos = p->wlen = p->wcap = 0;
    if (frc) rc = oom_or_limit(p, frc, 0);
    p->err = NULL;
    if (rc && rc != TPROF_ETRUNC) {
        tprof_pickle_close(p);
        *out = NULL;
        return rc;
    }
    *out = p;
    return rc;
}

static tprof_pickle *new_handle(const char *name, const tprof_pickle_opts *o)
{
    tprof_pickle *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->name = strdup(name ? name : "(memory)");
    if (!p->name) {
        free(p);
        return NULL;
    }
    p->proto = -1;
    p->limit = o && o->max_memory ? o->max_memory : tprof_pickle_default_limit();
    if (o) p->progress = o->progress, p->progress_ctx = o->progress_ctx;
    return p;
}

int tprof_pickle_parse(tprof_pickle **out, const void *data, size_t len, const char *name, char *errbuf,
                       size_t errlen)
{
    *out = NULL;
    if (errbuf && errlen) errbuf[0] = 0;
    tprof_pickle *p = new_handle(name, NULL);
    if (!p) return TPROF_ENOMEM;
    p->win = (unsigned char *)(uintptr_t)data; /* read only: a window without a source is never written */
    p->wlen = len;
    p->total = len;
    return run(p, errbuf, errlen, out);
}

int tprof_pickle_load_opts(tprof_pickle **out, const char *path, const tprof_pickle_opts *o, char *errbuf,
                           size_t errlen)
{
    *out = NULL;
    if (errbuf && errlen) errbuf[0] = 0;
    tprof_source *s;
    int rc = tprof_source_open(&s, path, errbuf, errlen);
    if (rc) return rc;
    tprof_pickle *p = new_handle(path, o);
    if (p) p->win = malloc(WINDOW);
    if (!p || !p->win) {
        if (p) free(p->name);
        free(p);
        tprof_source_close(s);
        if (errbuf && errlen) snprintf(errbuf, errlen, "%s: out of memory", path);
        return TPROF_ENOMEM;
    }
    p->src = s;
    p->wcap = WINDOW;
    rc = run(p, errbuf, errlen, out);
    if (rc == 0 && (*out)->src_cut) {
        (*out)->truncated = 1;
        if (errbuf && errlen) snprintf(errbuf, errlen, "%s: the compressed stream is cut short", path);
        rc = TPROF_ETRUNC;
    }
    return rc;
}

int tprof_pickle_load(tprof_pickle **out, const char *path, char *errbuf, size_t errlen)
{
    return tprof_pickle_load_opts(out, path, NULL, errbuf, errlen);
}

void tprof_pickle_close(tprof_pickle *p)
{
    if (!p) return;
    free(p->name);
    if (p->src) {
        tprof_source_close(p->src);
        free(p->win);
    }
    free(p->strs);
    free(p->nodes);
    free(p->pool);
    free(p->chunks);
    free(p->stack);
    free(p->marks);
    free(p->memo);
    free(p);
}

tprof_pv tprof_pickle_root(const tprof_pickle *p) { return p->root; }
int tprof_pickle_protocol(const tprof_pickle *p) { return p->proto; }
int tprof_pickle_truncated(const tprof_pickle *p) { return p->truncated; }
uint64_t tprof_pickle_bytes(const tprof_pickle *p) { return p->total; }
uint64_t tprof_pickle_nvalues(const tprof_pickle *p) { return p->nnodes; }

size_t tprof_pickle_memory(const tprof_pickle *p) { return sizeof *p + (size_t)p->held; }
uint64_t tprof_pickle_max_held(const tprof_pickle *p) { return p->max_held; }

int tprof_pickle_partial(const tprof_pickle *p, tprof_pv v)
{
    return !(v & PV_IMM) && v < p->nnodes && (p->nodes[v].flags & F_PARTIAL);
}

int tprof_pickle_str_clipped(const tprof_pickle *p, tprof_pv v)
{
    return !(v & PV_IMM) && v < p->nnodes && (p->nodes[v].flags & F_CLIPPED);
}

/* The value of handle V; immediates are expanded into TMP. */
static const node *nd_ptr(const tprof_pickle *p, tprof_pv v, node *tmp)
{
    if (!(v & PV_IMM)) return &p->nodes[v < p->nnodes ? v : 0];
    *tmp = (node){ .type = TPROF_PK_INT, .b = v & ~PV_IMM };
    return tmp;
}

tprof_pk_type tprof_pickle_type(const tprof_pickle *p, tprof_pv v)
{
    return (v & PV_IMM) ? TPROF_PK_INT : (tprof_pk_type)p->nodes[v < p->nnodes ? v : 0].type;
}

const char *tprof_pickle_type_name(tprof_pk_type t)
{
    static const char *names[] = { "None", "bool", "int", "float", "str", "bytes", "list", "tuple", "dict" };
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "?";
}

int64_t tprof_pickle_int(const tprof_pickle *p, tprof_pv v, int64_t dflt)
{
    node tmp;
    const node *n = nd_ptr(p, v, &tmp);
    if (n->type == TPROF_PK_INT || n->type == TPROF_PK_BOOL)
        return (n->flags & F_UNSIGNED) ? INT64_MAX : (int64_t)n->b;
    if (n->type == TPROF_PK_FLOAT) {
        double f;
        memcpy(&f, &n->b, sizeof f);
        if (f != f) return dflt;
        if (f >= 9.2e18) return INT64_MAX;
        if (f <= -9.2e18) return INT64_MIN;
        return (int64_t)f;
    }
    return dflt;
}

uint64_t tprof_pickle_uint(const tprof_pickle *p, tprof_pv v)
{
    node tmp;
    const node *n = nd_ptr(p, v, &tmp);
    return n->type == TPROF_PK_INT || n->type == TPROF_PK_BOOL ? n->b : 0;
}

int tprof_pickle_is_unsigned(const tprof_pickle *p, tprof_pv v)
{
    return !(v & PV_IMM) && (p->nodes[v < p->nnodes ? v : 0].flags & F_UNSIGNED);
}

double tprof_pickle_float(const tprof_pickle *p, tprof_pv v, double dflt)
{
    node tmp;
    const node *n = nd_ptr(p, v, &tmp);
    if (n->type == TPROF_PK_FLOAT) {
        double f;
        memcpy(&f, &n->b, sizeof f);
        return f;
    }
    if (n->type == TPROF_PK_INT || n->type == TPROF_PK_BOOL)
        return (n->flags & F_UNSIGNED) ? (double)n->b : (double)(int64_t)n->b;
    return dflt;
}

const char *tprof_pickle_str(const tprof_pickle *p, tprof_pv v, size_t *len)
{
    node tmp;
    const node *n = nd_ptr(p, v, &tmp);
    if (n->type != TPROF_PK_STR && n->type != TPROF_PK_BYTES) {
        if (len) *len = 0;
        return NULL;
    }
    if (len) *len = n->a;
    return p->strs ? p->strs + n->b : "";
}

int tprof_pickle_str_eq(const tprof_pickle *p, tprof_pv v, const char *s)
{
    size_t n;
    const char *t = tprof_pickle_str(p, v, &n);
    return t && !tprof_pickle_str_clipped(p, v) && strlen(s) == n && !memcmp(t, s, n);
}

size_t tprof_pickle_len(const tprof_pickle *p, tprof_pv v)
{
    node tmp;
    const node *n = nd_ptr(p, v, &tmp);
    return n->type == TPROF_PK_LIST || n->type == TPROF_PK_TUPLE || n->type == TPROF_PK_DICT ? n->a : 0;
}

tprof_pv tprof_pickle_item(const tprof_pickle *p, tprof_pv v, size_t i)
{
    node tmp;
    const node *n = nd_ptr(p, v, &tmp);
    if ((n->type != TPROF_PK_LIST && n->type != TPROF_PK_TUPLE) || i >= n->a) return TPROF_PV_NONE;
    return p->pool[n->b + i];
}

tprof_pv tprof_pickle_dict_key(const tprof_pickle *p, tprof_pv v, size_t i)
{
    node tmp;
    const node *n = nd_ptr(p, v, &tmp);
    if (n->type != TPROF_PK_DICT || i >= n->a) return TPROF_PV_NONE;
    return p->pool[n->b + 2 * i];
}

tprof_pv tprof_pickle_dict_value(const tprof_pickle *p, tprof_pv v, size_t i)
{
    node tmp;
    const node *n = nd_ptr(p, v, &tmp);
    if (n->type != TPROF_PK_DICT || i >= n->a) return TPROF_PV_NONE;
    return p->pool[n->b + 2 * i + 1];
}

tprof_pv tprof_pickle_get(const tprof_pickle *p, tprof_pv d, const char *key)
{
    node tmp;
    const node *n = nd_ptr(p, d, &tmp);
    if (n->type != TPROF_PK_DICT) return TPROF_PV_NONE;
    size_t kl = strlen(key);
    for (size_t i = n->a; i-- > 0;) {
        node ktmp;
        const node *k = nd_ptr(p, p->pool[n->b + 2 * i], &ktmp);
        if (k->type == TPROF_PK_STR && !(k->flags & F_CLIPPED) && k->a == kl && !memcmp(p->strs + k->b, key, kl))
            return p->pool[n->b + 2 * i + 1];
    }
    return TPROF_PV_NONE;
}
