/* Safe pickle decoder (include/trainprof/pickle.h). A value stack, a MARK
 * stack and a memo of value handles; nothing is imported or called. */
#include "trainprof/pickle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/source.h"

#define NO_CHUNK UINT32_MAX
#define NO_MEMO UINT32_MAX
#define F_UNSIGNED 0x01
#define F_CHUNKED 0x02 /* a container whose items came in separate runs: B = first | last chunk */
/* Ints 0 .. 2^31-2 live in the handle itself (sizes, streams, line numbers,
 * most of a snapshot's ints), so they need no value storage. */
#define PV_IMM 0x80000000u
#define IMM_MAX 0x7ffffffeu

/* 16 bytes per value. Strings: B = offset into the data, A = length.
 * Containers: A = items (pairs for dicts), B = the offset of the items in the
 * pool; a container filled in several runs that are not contiguous in the
 * pool (rare: nested containers filled in between) holds a chunk list while
 * decoding (F_CHUNKED) and is laid out contiguously at the end. */
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
    unsigned char *data;
    size_t len;
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
    tprof_pv root;
    int proto, truncated;
    char *err;
    size_t errlen;
};

static int fail(tprof_pickle *p, int code, size_t at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(tprof_pickle *p, int code, size_t at, const char *fmt, ...)
{
    if (p->err && p->errlen) {
        int n = snprintf(p->err, p->errlen, "%s: byte %zu: ", p->name, at);
        if (n >= 0 && (size_t)n < p->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return code;
}

static int grow(void **ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*ptr, c * elem);
    if (!q) return TPROF_ENOMEM;
    *ptr = q;
    *cap = c;
    return 0;
}

static int new_node(tprof_pickle *p, uint8_t type, tprof_pv *out)
{
    if (p->nnodes >= PV_IMM - 1) return TPROF_ELIMIT;
    if (grow((void **)&p->nodes, &p->capnodes, p->nnodes + 1, sizeof(node))) return TPROF_ENOMEM;
    node *n = &p->nodes[p->nnodes];
    memset(n, 0, sizeof *n);
    n->type = type;
    *out = (tprof_pv)p->nnodes++;
    return 0;
}

static int push(tprof_pickle *p, tprof_pv v)
{
    if (grow((void **)&p->stack, &p->capstack, p->nstack + 1, sizeof(tprof_pv))) return TPROF_ENOMEM;
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
    if (grow((void **)&p->chunks, &p->capchunks, p->nchunks + 1, sizeof(chunk))) return TPROF_ENOMEM;
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
    if (grow((void **)&p->pool, &p->cappool, p->npool + n, sizeof(tprof_pv))) return TPROF_ENOMEM;
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

static int memo_put(tprof_pickle *p, size_t at, uint64_t idx)
{
    if (!p->nstack) return fail(p, TPROF_EFORMAT, at, "memo store with an empty stack");
    /* a pickler numbers memo entries in order, so an index beyond the bytes
     * read so far is bogus; this keeps the memo proportional to the file */
    if (idx > at) return fail(p, TPROF_EFORMAT, at, "memo index %llu out of range", (unsigned long long)idx);
    if (idx >= p->capmemo) {
        size_t old = p->capmemo;
        if (grow((void **)&p->memo, &p->capmemo, idx + 1, sizeof(tprof_pv))) return TPROF_ENOMEM;
        for (size_t i = old; i < p->capmemo; i++) p->memo[i] = NO_MEMO;
    }
    if (p->memo[idx] == NO_MEMO) p->nmemo++;
    p->memo[idx] = p->stack[p->nstack - 1];
    return 0;
}

static int memo_get(tprof_pickle *p, size_t at, uint64_t idx)
{
    if (idx >= p->capmemo || p->memo[idx] == NO_MEMO)
        return fail(p, TPROF_EFORMAT, at, "memo index %llu fetched before it was stored", (unsigned long long)idx);
    return push(p, p->memo[idx]);
}

/* Completes each open MARK with the container below it (or a tuple) after
 * a cut, so that everything decoded so far hangs off the root. */
static int close_after_cut(tprof_pickle *p)
{
    while (p->nmarks) {
        size_t m = p->marks[--p->nmarks];
        if (m > p->nstack) m = p->nstack;
        int rc;
        if (m > 0 && is_container(p, p->stack[m - 1], 1, 1)) {
            size_t n = p->nstack - m;
            if (type_of(p, p->stack[m - 1]) == TPROF_PK_DICT) n &= ~(size_t)1;
            rc = n ? add_items(p, p->stack[m - 1], p->stack + m, n) : 0;
            p->nstack = m;
        } else {
            rc = make_tuple(p, m);
        }
        if (rc) return rc;
    }
    p->root = p->nstack ? p->stack[0] : TPROF_PV_NONE;
    return 0;
}

static int decode(tprof_pickle *p)
{
    const unsigned char *d = p->data;
    size_t len = p->len, pos = 0;
    int rc = 0;
    tprof_pv v;
#define NEED(n)                                                                                                \
    do {                                                                                                       \
        if ((n) > len - pos) goto cut;                                                                         \
    } while (0)
    while (pos < len) {
        size_t at = pos;
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
            return 0;
        case '(': /* MARK */
            if (p->nmarks >= TPROF_PICKLE_MAX_DEPTH)
                return fail(p, TPROF_ELIMIT, at, "more than %d open MARKs (nesting too deep)", TPROF_PICKLE_MAX_DEPTH);
            if (grow((void **)&p->marks, &p->capmarks, p->nmarks + 1, sizeof(size_t))) return TPROF_ENOMEM;
            p->marks[p->nmarks++] = p->nstack;
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
            if ((rc = push_new(p, TPROF_PK_FLOAT, &v))) return rc;
            p->nodes[v].b = bits;
            break;
        }
        case 'N': rc = push(p, TPROF_PV_NONE); break;
        case 0x88: case 0x89:
            if ((rc = push_new(p, TPROF_PK_BOOL, &v))) return rc;
            p->nodes[v].b = op == 0x88;
            break;
        case 0x8c: case 'X': case 0x8d: case 'C': case 'B': case 0x8e: { /* strings and bytes */
            size_t hl = (op == 0x8c || op == 'C') ? 1 : (op == 'X' || op == 'B') ? 4 : 8;
            NEED(hl);
            uint64_t n = le(d + pos, hl);
            pos += hl;
            if (n > len - pos) goto cut;
            if (n > UINT32_MAX) return fail(p, TPROF_ELIMIT, at, "string of %llu bytes (limit 4 GiB)", (unsigned long long)n);
            int is_str = op == 0x8c || op == 'X' || op == 0x8d;
            if ((rc = push_new(p, is_str ? TPROF_PK_STR : TPROF_PK_BYTES, &v))) return rc;
            p->nodes[v].a = (uint32_t)n;
            p->nodes[v].b = pos;
            pos += n;
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
        if (rc == TPROF_ENOMEM) return fail(p, rc, at, "out of memory");
        if (rc == TPROF_ELIMIT) return fail(p, rc, at, "more values than the decoder's 2^32 limit");
        if (rc) return rc;
    }
cut:
#undef NEED
    p->truncated = 1;
    if (pos == 0 && len == 0) return fail(p, TPROF_EFORMAT, 0, "empty input (expected a pickle)");
    rc = close_after_cut(p);
    if (rc) return fail(p, rc, len, "out of memory");
    fail(p, TPROF_ETRUNC, len, "the pickle is cut short (no STOP opcode); decoded what came before the cut");
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
        if (grow((void **)&p->pool, &p->cappool, p->npool + total, sizeof(tprof_pv))) return TPROF_ENOMEM;
        size_t off = p->npool;
        for (uint32_t c = first; c != NO_CHUNK; c = p->chunks[c].next) {
            memcpy(p->pool + p->npool, p->pool + p->chunks[c].off, p->chunks[c].n * sizeof(tprof_pv));
            p->npool += p->chunks[c].n;
        }
        p->nodes[i].b = off;
        p->nodes[i].flags &= (uint8_t)~F_CHUNKED;
    }
    free(p->chunks);
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
    if (!rc) rc = decode(p);
    int frc = rc == 0 || rc == TPROF_ETRUNC ? finalize(p) : 0;
    free(p->stack);
    free(p->marks);
    free(p->memo);
    p->stack = NULL;
    p->marks = NULL;
    p->memo = NULL;
    p->err = NULL;
    if (frc) rc = fail(p, frc, 0, "out of memory");
    if (rc && rc != TPROF_ETRUNC) {
        tprof_pickle_close(p);
        *out = NULL;
        return rc;
    }
    *out = p;
    return rc;
}

static tprof_pickle *new_handle(const char *name)
{
    tprof_pickle *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->name = strdup(name ? name : "(memory)");
    if (!p->name) {
        free(p);
        return NULL;
    }
    p->proto = -1;
    return p;
}

int tprof_pickle_parse(tprof_pickle **out, const void *data, size_t len, const char *name, char *errbuf,
                       size_t errlen)
{
    *out = NULL;
    if (errbuf && errlen) errbuf[0] = 0;
    tprof_pickle *p = new_handle(name);
    if (!p) return TPROF_ENOMEM;
    p->data = malloc(len ? len : 1);
    if (!p->data) {
        tprof_pickle_close(p);
        return TPROF_ENOMEM;
    }
    if (len) memcpy(p->data, data, len);
    p->len = len;
    return run(p, errbuf, errlen, out);
}

int tprof_pickle_load(tprof_pickle **out, const char *path, char *errbuf, size_t errlen)
{
    *out = NULL;
    if (errbuf && errlen) errbuf[0] = 0;
    tprof_source *s;
    int rc = tprof_source_open(&s, path, errbuf, errlen);
    if (rc) return rc;
    tprof_pickle *p = new_handle(path);
    if (!p) {
        tprof_source_close(s);
        return TPROF_ENOMEM;
    }
    int64_t fsize = tprof_source_file_size(s);
    size_t cap = fsize > 0 && tprof_source_compression(s) == TPROF_COMP_NONE ? (size_t)fsize + 1 : 1 << 20;
    int cut = 0;
    p->data = malloc(cap);
    if (!p->data) rc = TPROF_ENOMEM;
    while (!rc) {
        if (p->len == cap) {
            unsigned char *q = realloc(p->data, cap * 2);
            if (!q) {
                rc = TPROF_ENOMEM;
                break;
            }
            p->data = q;
            cap *= 2;
        }
        ssize_t n = tprof_source_read(s, p->data + p->len, cap - p->len);
        if (n == 0) break;
        if (n == TPROF_ETRUNC) {
            cut = 1; /* a cut compressed stream: decode what came out */
            break;
        }
        if (n < 0) {
            if (errbuf && errlen) snprintf(errbuf, errlen, "%s", tprof_source_errmsg(s));
            rc = (int)n;
            break;
        }
        p->len += (size_t)n;
    }
    tprof_source_close(s);
    if (rc) {
        if (rc == TPROF_ENOMEM && errbuf && errlen) snprintf(errbuf, errlen, "%s: out of memory", path);
        tprof_pickle_close(p);
        return rc;
    }
    rc = run(p, errbuf, errlen, out);
    if (rc == 0 && cut) {
        (*out)->truncated = 1;
        if (errbuf && errlen) snprintf(errbuf, errlen, "%s: the compressed stream is cut short", path);
        rc = TPROF_ETRUNC;
    }
    return rc;
}

void tprof_pickle_close(tprof_pickle *p)
{
    if (!p) return;
    free(p->name);
    free(p->data);
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
uint64_t tprof_pickle_bytes(const tprof_pickle *p) { return p->len; }
uint64_t tprof_pickle_nvalues(const tprof_pickle *p) { return p->nnodes; }

size_t tprof_pickle_memory(const tprof_pickle *p)
{
    return sizeof *p + p->len + p->capnodes * sizeof(node) + p->cappool * sizeof(tprof_pv);
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
    return (const char *)p->data + n->b;
}

int tprof_pickle_str_eq(const tprof_pickle *p, tprof_pv v, const char *s)
{
    size_t n;
    const char *t = tprof_pickle_str(p, v, &n);
    return t && strlen(s) == n && !memcmp(t, s, n);
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
        if (k->type == TPROF_PK_STR && k->a == kl && !memcmp(p->data + k->b, key, kl)) return p->pool[n->b + 2 * i + 1];
    }
    return TPROF_PV_NONE;
}
