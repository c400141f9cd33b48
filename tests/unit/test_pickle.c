/* Unit tests of the safe pickle decoder (lib/mem/pickle.c) and the snapshot
 * model. Inputs are written byte by byte here; the expectations come from
 * the pickle format (Lib/pickletools.py documents every opcode). Bytes are
 * written as 3-digit octal escapes, which, unlike hex escapes, never swallow the
 * letters that follow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "trainprof/error.h"
#include "trainprof/mem.h"
#include "trainprof/pickle.h"
#include "unit.h"

static char err[512];

static tprof_pickle *parse_ok(const void *b, size_t n)
{
    tprof_pickle *p;
    int rc = tprof_pickle_parse(&p, b, n, "t.pkl", err, sizeof err);
    if (rc) fprintf(stderr, "unexpected: %d %s\n", rc, err);
    assert_int_equal(rc, 0);
    return p;
}

static void expect_err(const void *b, size_t n, int code, const char *msg)
{
    tprof_pickle *p;
    int rc = tprof_pickle_parse(&p, b, n, "t.pkl", err, sizeof err);
    assert_int_equal(rc, code);
    if (code != TPROF_ETRUNC) assert_null(p);
    if (!strstr(err, msg)) fprintf(stderr, "message: %s (wanted %s)\n", err, msg);
    assert_non_null(strstr(err, msg));
    assert_non_null(strstr(err, "t.pkl: byte "));
    tprof_pickle_close(p);
}

#define P(s) s, sizeof(s) - 1

static void test_scalars(void **st)
{
    (void)st;
    /* a tuple of every scalar opcode: BININT1 BININT2 BININT (negative),
     * LONG1 (8 and 9 bytes), LONG4, BINFLOAT, NONE, TRUE, FALSE, strings */
    static const unsigned char b[] = "\200\004\225\020\000\000\000\000\000\000\000("
                                     "K\377" "M\001\002" "J\376\377\377\377"
                                     "\212\011\377\377\377\377\377\377\377\377\000"
                                     "\212\002\000\200"
                                     "\213\001\000\000\000\200"
                                     "G\077\370\000\000\000\000\000\000"
                                     "N\210\211"
                                     "\214\002hi" "X\003\000\000\000abc" "\215\001\000\000\000\000\000\000\000z"
                                     "C\001\000" "B\002\000\000\000xy" "\216\000\000\000\000\000\000\000\000"
                                     "\212\000"
                                     "t.";
    tprof_pickle *p = parse_ok(b, sizeof b - 1);
    assert_int_equal(tprof_pickle_protocol(p), 4);
    tprof_pv t = tprof_pickle_root(p);
    assert_int_equal(tprof_pickle_type(p, t), TPROF_PK_TUPLE);
    assert_int_equal(tprof_pickle_len(p, t), 17);
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, t, 0), 0), 255);
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, t, 1), 0), 0x0201);
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, t, 2), 0), -2);
    tprof_pv big = tprof_pickle_item(p, t, 3);
    assert_true(tprof_pickle_is_unsigned(p, big));
    assert_true(tprof_pickle_uint(p, big) == UINT64_MAX); /* frame lines of 2^64-1 */
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, t, 4), 0), -32768);
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, t, 5), 0), -128);
    assert_true(tprof_pickle_float(p, tprof_pickle_item(p, t, 6), 0) == 1.5);
    assert_int_equal(tprof_pickle_type(p, tprof_pickle_item(p, t, 7)), TPROF_PK_NONE);
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, t, 8), -1), 1);
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, t, 9), -1), 0);
    assert_true(tprof_pickle_str_eq(p, tprof_pickle_item(p, t, 10), "hi"));
    assert_true(tprof_pickle_str_eq(p, tprof_pickle_item(p, t, 11), "abc"));
    assert_true(tprof_pickle_str_eq(p, tprof_pickle_item(p, t, 12), "z"));
    assert_int_equal(tprof_pickle_type(p, tprof_pickle_item(p, t, 13)), TPROF_PK_BYTES);
    size_t n;
    const char *s = tprof_pickle_str(p, tprof_pickle_item(p, t, 14), &n);
    assert_int_equal(n, 2);
    assert_memory_equal(s, "xy", 2);
    tprof_pickle_str(p, tprof_pickle_item(p, t, 15), &n);
    assert_int_equal(n, 0);
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, t, 16), -1), 0);
    tprof_pickle_close(p);
}

static void test_containers_and_memo(void **st)
{
    (void)st;
    /* {'a': [1, 2, 3], 'b': (x, x, x)} with x = the frame dict {'line': 7}
     * fetched from the memo twice; the list is memoized while empty and
     * filled by two APPENDS batches and an APPEND. */
    static const unsigned char b[] = "\200\004}\224(\214\001a\224]\224(K\001e(K\002eK\003a"
                                     "\214\001b\224}\224\214\004line\224K\007sh\004h\004\207u"
                                     "\214\001c)\214\001d\205\206s.";
    tprof_pickle *p = parse_ok(b, sizeof b - 1);
    tprof_pv d = tprof_pickle_root(p);
    assert_int_equal(tprof_pickle_type(p, d), TPROF_PK_DICT);
    assert_int_equal(tprof_pickle_len(p, d), 3);
    tprof_pv l = tprof_pickle_get(p, d, "a");
    assert_int_equal(tprof_pickle_len(p, l), 3);
    for (int i = 0; i < 3; i++) assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, l, (size_t)i), 0), i + 1);
    tprof_pv tb = tprof_pickle_get(p, d, "b");
    assert_int_equal(tprof_pickle_type(p, tb), TPROF_PK_TUPLE);
    assert_int_equal(tprof_pickle_len(p, tb), 3);
    /* shared: the same value three times, not copies */
    assert_int_equal(tprof_pickle_item(p, tb, 0), tprof_pickle_item(p, tb, 1));
    assert_int_equal(tprof_pickle_item(p, tb, 0), tprof_pickle_item(p, tb, 2));
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_get(p, tprof_pickle_item(p, tb, 0), "line"), 0), 7);
    /* SETITEM, EMPTY_TUPLE, TUPLE1, TUPLE2 */
    tprof_pv c = tprof_pickle_get(p, d, "c");
    assert_int_equal(tprof_pickle_len(p, c), 2);
    assert_int_equal(tprof_pickle_len(p, tprof_pickle_item(p, c, 0)), 0);
    assert_true(tprof_pickle_str_eq(p, tprof_pickle_item(p, tprof_pickle_item(p, c, 1), 0), "d"));
    assert_int_equal(tprof_pickle_get(p, d, "missing"), TPROF_PV_NONE);
    tprof_pickle_close(p);
}

static void test_binput_protocol2(void **st)
{
    (void)st;
    /* protocol 2 memo: BINPUT / LONG_BINPUT / BINGET / LONG_BINGET, POP, DUP */
    static const unsigned char b[] = "\200\002]q\000(X\001\000\000\000sr\001\000\000\000h\001\060j\001\000\000\000\062e.";
    tprof_pickle *p = parse_ok(b, sizeof b - 1);
    tprof_pv l = tprof_pickle_root(p);
    assert_int_equal(tprof_pickle_len(p, l), 3);
    assert_true(tprof_pickle_str_eq(p, tprof_pickle_item(p, l, 0), "s"));
    assert_int_equal(tprof_pickle_item(p, l, 1), tprof_pickle_item(p, l, 0));
    assert_int_equal(tprof_pickle_item(p, l, 2), tprof_pickle_item(p, l, 0));
    tprof_pickle_close(p);
    /* POP_MARK drops everything above the MARK: [1, 2] discarded, [3] kept */
    p = parse_ok(P("\200\004](K\001K\0021K\003a."));
    assert_int_equal(tprof_pickle_len(p, tprof_pickle_root(p)), 1);
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, tprof_pickle_root(p), 0), 0), 3);
    tprof_pickle_close(p);
}

static void test_refusals(void **st)
{
    (void)st;
    expect_err(P("\200\002" "cos\nsystem\n" "X\002\000\000\000ls\205R."), TPROF_EFORMAT, "GLOBAL (0x63) refused");
    expect_err(P("\200\004\214\002os\214\006system\223."), TPROF_EFORMAT, "STACK_GLOBAL (0x93) refused");
    expect_err(P("\200\004NNR."), TPROF_EFORMAT, "REDUCE (0x52) refused");
    expect_err(P("\200\004N}b."), TPROF_EFORMAT, "BUILD (0x62) refused");
    expect_err(P("\200\002(iposix\nsystem\n."), TPROF_EFORMAT, "INST (0x69) refused");
    expect_err(P("\200\002(N)o."), TPROF_EFORMAT, "OBJ (0x6f) refused");
    expect_err(P("\200\002N)\201."), TPROF_EFORMAT, "NEWOBJ (0x81) refused");
    expect_err(P("\200\004N)}\222."), TPROF_EFORMAT, "NEWOBJ_EX (0x92) refused");
    expect_err(P("\200\002\202\001."), TPROF_EFORMAT, "EXT1 (0x82) refused");
    expect_err(P("\200\002\203\001\000."), TPROF_EFORMAT, "EXT2 (0x83) refused");
    expect_err(P("\200\002\204\001\000\000\000."), TPROF_EFORMAT, "EXT4 (0x84) refused");
    expect_err(P("\200\002Pid\n."), TPROF_EFORMAT, "PERSID (0x50) refused");
    expect_err(P("\200\002NQ."), TPROF_EFORMAT, "BINPERSID (0x51) refused");
    expect_err(P("\200\005\227."), TPROF_EFORMAT, "NEXT_BUFFER (0x97) refused");
    expect_err(P("\200\005N\230."), TPROF_EFORMAT, "READONLY_BUFFER (0x98) refused");
    expect_err(P("\200\005\226\000\000\000\000\000\000\000\000."), TPROF_EFORMAT, "BYTEARRAY8 (0x96) refused");
    /* the offset is the opcode's */
    expect_err(P("\200\004NNR."), TPROF_EFORMAT, "byte 4:");
    /* text opcodes and junk */
    expect_err(P("I12\n."), TPROF_EFORMAT, "INT (0x49) is not used");
    expect_err(P("\200\004\377."), TPROF_EFORMAT, "not a pickle opcode: 0xff");
    expect_err(P("\200\011N."), TPROF_EFORMAT, "protocol 9");
}

static void test_malformed(void **st)
{
    (void)st;
    expect_err(P("\200\004h\003."), TPROF_EFORMAT, "memo index 3 fetched before it was stored");
    expect_err(P("\200\004Nr\377\377\377\177."), TPROF_EFORMAT, "memo index 2147483647 out of range");
    expect_err(P("\200\004\224."), TPROF_EFORMAT, "memo store with an empty stack");
    expect_err(P("\200\004\212\012\001\001\001\001\001\001\001\001\001\001."), TPROF_EFORMAT, "wider than 64 bits");
    expect_err(P("\200\004\212\011\000\000\000\000\000\000\000\000\001."), TPROF_EFORMAT, "wider than 64 bits");
    expect_err(P("\200\004\213\377\377\377\377."), TPROF_EFORMAT, "negative length");
    expect_err(P("\200\004]N(Nu."), TPROF_EFORMAT, "SETITEMS without a dict");
    expect_err(P("\200\004}(N]e."), TPROF_EFORMAT, "APPENDS without a list");
    expect_err(P("\200\004}(Nu."), TPROF_EFORMAT, "odd number");
    expect_err(P("\200\004NNa."), TPROF_EFORMAT, "APPEND on a None");
    expect_err(P("\200\004NNNs."), TPROF_EFORMAT, "SETITEM on a None");
    expect_err(P("\200\004t."), TPROF_EFORMAT, "no MARK");
    expect_err(P("\200\004\206."), TPROF_EFORMAT, "TUPLEn needs 2");
    expect_err(P("\200\004."), TPROF_EFORMAT, "STOP with an empty stack");
    expect_err(P(""), TPROF_EFORMAT, "empty input");
    ubuf deep = { 0 };
    ubuf_str(&deep, "\200\004");
    for (int i = 0; i < TPROF_PICKLE_MAX_DEPTH + 1; i++) ubuf_str(&deep, "(");
    expect_err(deep.p, deep.len, TPROF_ELIMIT, "nesting too deep");
    ubuf_free(&deep);
}

static void test_truncation(void **st)
{
    (void)st;
    /* {'a': [1, 2, <cut> : the dict and the list are closed at the cut */
    static const unsigned char b[] = "\200\004}\224(\214\001a]\224(K\001K\002";
    tprof_pickle *p;
    int rc = tprof_pickle_parse(&p, b, sizeof b - 1, "t.pkl", err, sizeof err);
    assert_int_equal(rc, TPROF_ETRUNC);
    assert_non_null(p);
    assert_true(tprof_pickle_truncated(p));
    assert_non_null(strstr(err, "cut short"));
    tprof_pv l = tprof_pickle_get(p, tprof_pickle_root(p), "a");
    assert_int_equal(tprof_pickle_len(p, l), 2);
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, l, 1), 0), 2);
    tprof_pickle_close(p);
    /* a cut inside an opcode's argument */
    static const unsigned char c[] = "\200\004]\224(K\001X\020\000\000\000ab";
    rc = tprof_pickle_parse(&p, c, sizeof c - 1, "t.pkl", err, sizeof err);
    assert_int_equal(rc, TPROF_ETRUNC);
    assert_int_equal(tprof_pickle_len(p, tprof_pickle_root(p)), 1);
    tprof_pickle_close(p);
    /* every prefix of a valid pickle is either truncated or an error */
    static const unsigned char full[] = "\200\004}\224(\214\001a\224]\224(K\001e(K\002eK\003au.";
    for (size_t n = 0; n + 1 < sizeof full - 1; n++) {
        rc = tprof_pickle_parse(&p, full, n, "t.pkl", err, sizeof err);
        assert_true(rc == TPROF_ETRUNC || rc == TPROF_EFORMAT);
        tprof_pickle_close(p);
    }
}

/* A cut where Python's pickler left values for a single APPEND or SETITEM
 * on the stack (no MARK): a snapshot's one-device device_traces is written
 * `'device_traces' [ [ MARK entries... APPENDS ] APPEND`, so a cut inside
 * the entries leaves the inner list above the outer one. Every complete
 * entry must hang off the root; the one cut in half is marked partial. */
static void test_cut_pending_single(void **st)
{
    (void)st;
    static const unsigned char b[] = "\200\004}(\214\015device_traces]](}(\214\006action\214\005allocu"
                                     "}(\214\006action\214\016free_completedu}(\214\006action";
    tprof_pickle *p;
    int rc = tprof_pickle_parse(&p, b, sizeof b - 1, "t.pkl", err, sizeof err);
    assert_int_equal(rc, TPROF_ETRUNC);
    tprof_pv root = tprof_pickle_root(p);
    assert_int_equal(tprof_pickle_type(p, root), TPROF_PK_DICT);
    tprof_pv outer = tprof_pickle_get(p, root, "device_traces");
    assert_int_equal(tprof_pickle_len(p, outer), 1);
    tprof_pv inner = tprof_pickle_item(p, outer, 0);
    assert_int_equal(tprof_pickle_len(p, inner), 3);
    assert_true(tprof_pickle_partial(p, root));
    assert_true(tprof_pickle_partial(p, outer));
    assert_true(tprof_pickle_partial(p, inner));
    assert_false(tprof_pickle_partial(p, tprof_pickle_item(p, inner, 0)));
    assert_false(tprof_pickle_partial(p, tprof_pickle_item(p, inner, 1)));
    assert_true(tprof_pickle_partial(p, tprof_pickle_item(p, inner, 2)));
    tprof_pv second = tprof_pickle_item(p, inner, 1);
    assert_true(tprof_pickle_str_eq(p, tprof_pickle_get(p, second, "action"), "free_completed"));
    /* the model keeps the two complete entries and leaves the cut one out */
    tprof_mem_snapshot *s;
    assert_int_equal(tprof_mem_snapshot_from_pickle(&s, p, "t.pkl", err, sizeof err), 0);
    assert_int_equal(s->ntraces, 1);
    assert_int_equal(s->ntrace[0], 2);
    assert_int_equal(s->cut_entries, 1);
    assert_int_equal(s->traces[0][1].action, TPROF_MEM_FREE_COMPLETED);
    tprof_mem_snapshot_close(s);

    /* a one-item list at the bottom: [ {segment...<cut> */
    static const unsigned char c[] = "\200\004](\214\007addressK\001\214\012total_sizeK\002";
    /* (MARK right after the list: the list takes the values itself) */
    rc = tprof_pickle_parse(&p, c, sizeof c - 1, "t.pkl", err, sizeof err);
    assert_int_equal(rc, TPROF_ETRUNC);
    assert_int_equal(tprof_pickle_len(p, tprof_pickle_root(p)), 4);
    tprof_pickle_close(p);
    static const unsigned char c2[] = "\200\004]}(\214\007addressK\001\214\012total_sizeK\002";
    rc = tprof_pickle_parse(&p, c2, sizeof c2 - 1, "t.pkl", err, sizeof err);
    assert_int_equal(rc, TPROF_ETRUNC);
    tprof_pv l = tprof_pickle_root(p);
    assert_int_equal(tprof_pickle_type(p, l), TPROF_PK_LIST);
    assert_int_equal(tprof_pickle_len(p, l), 1);
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_get(p, tprof_pickle_item(p, l, 0), "total_size"), 0), 2);
    assert_true(tprof_pickle_partial(p, tprof_pickle_item(p, l, 0)));
    tprof_pickle_close(p);

    /* one-item dict holding a one-item list: {'a': [1 <cut> (SETITEM and APPEND pending) */
    rc = tprof_pickle_parse(&p, P("\200\004}\214\001a]K\001"), "t.pkl", err, sizeof err);
    assert_int_equal(rc, TPROF_ETRUNC);
    l = tprof_pickle_get(p, tprof_pickle_root(p), "a");
    assert_int_equal(tprof_pickle_len(p, l), 1);
    assert_int_equal(tprof_pickle_int(p, tprof_pickle_item(p, l, 0), 0), 1);
    tprof_pickle_close(p);
    /* a key whose value was not read yet is dropped */
    rc = tprof_pickle_parse(&p, P("\200\004}(\214\001aK\001\214\001b"), "t.pkl", err, sizeof err);
    assert_int_equal(rc, TPROF_ETRUNC);
    assert_int_equal(tprof_pickle_len(p, tprof_pickle_root(p)), 1);
    tprof_pickle_close(p);
}

/* Strings longer than TPROF_PICKLE_MAX_STRING keep their first bytes only
 * and equal no key. */
static void test_long_string(void **st)
{
    (void)st;
    ubuf b = { 0 };
    size_t n = TPROF_PICKLE_MAX_STRING + 1000;
    ubuf_str(&b, "\200\004(X");
    unsigned char len[4] = { (unsigned char)n, (unsigned char)(n >> 8), (unsigned char)(n >> 16), 0 };
    ubuf_add(&b, len, 4);
    for (size_t i = 0; i < n; i++) ubuf_add(&b, i < 3 ? &"abc"[i] : "z", 1);
    ubuf_str(&b, "\214\001qt.");
    tprof_pickle *p = parse_ok(b.p, b.len);
    tprof_pv t = tprof_pickle_root(p);
    size_t got;
    const char *s = tprof_pickle_str(p, tprof_pickle_item(p, t, 0), &got);
    assert_int_equal(got, TPROF_PICKLE_MAX_STRING);
    assert_memory_equal(s, "abcz", 4);
    assert_true(tprof_pickle_str_clipped(p, tprof_pickle_item(p, t, 0)));
    assert_false(tprof_pickle_str_clipped(p, tprof_pickle_item(p, t, 1)));
    assert_true(tprof_pickle_str_eq(p, tprof_pickle_item(p, t, 1), "q"));
    assert_int_equal(tprof_pickle_bytes(p), b.len);
    assert_true(tprof_pickle_memory(p) < 2 * TPROF_PICKLE_MAX_STRING + 4096);
    tprof_pickle_close(p);
    ubuf_free(&b);
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* The same values whether the pickle is decoded from memory or streamed
 * from a file through the decoder's window (tokens and strings straddle
 * its edges), whole or cut; and the memory limit. */
static void test_streamed_load(void **st)
{
    (void)st;
    ubuf b = { 0 };
    ubuf_str(&b, "\200\004]\224");
    uint32_t rnd = 12345;
    for (int batch = 0; batch < 200; batch++) {
        ubuf_str(&b, "(");
        for (int i = 0; i < 1000; i++) {
            rnd = rnd * 1103515245u + 12345u;
            unsigned k = (rnd >> 16) % 5;
            if (k == 0) { /* a string of 0..59 bytes */
                unsigned char h[2] = { 0x8c, (unsigned char)((rnd >> 8) % 60) };
                ubuf_add(&b, h, 2);
                for (unsigned j = 0; j < h[1]; j++) ubuf_add(&b, &"abcdefghij"[(j + i) % 10], 1);
            } else if (k == 1) { /* LONG1 of 8 bytes */
                unsigned char h[10] = { 0x8a, 8, (unsigned char)rnd, 1, 2, 3, 4, 5, 6, 0x40 };
                ubuf_add(&b, h, 10);
            } else if (k == 2) {
                unsigned char h[5] = { 'J', (unsigned char)rnd, (unsigned char)(rnd >> 8), 0, 0 };
                ubuf_add(&b, h, 5);
            } else if (k == 3) {
                ubuf_add(&b, "h\000", 2); /* the list itself, from the memo */
            } else { /* strings up to 3000 bytes, now and then */
                size_t n = (rnd >> 20) % 16 ? (rnd >> 4) % 30 : (rnd >> 4) % 3000;
                unsigned char h[5] = { 'X', (unsigned char)n, (unsigned char)(n >> 8), 0, 0 };
                ubuf_add(&b, h, 5);
                for (size_t j = 0; j < n; j++) ubuf_add(&b, &"0123456789"[j % 10], 1);
            }
        }
        ubuf_str(&b, "e");
    }
    ubuf_str(&b, ".");
    assert_true(b.len > 3u << 20); /* several windows */
    assert_true(b.len < 16u << 20);
    char path[] = "/tmp/tprof_unit_pickleXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (int cut = 0; cut < 2; cut++) {
        size_t len = cut ? b.len - 777777 : b.len;
        write_file(path, b.p, len);
        tprof_pickle *m, *f;
        int rm = tprof_pickle_parse(&m, b.p, len, "m", err, sizeof err);
        int rf = tprof_pickle_load(&f, path, err, sizeof err);
        assert_int_equal(rm, cut ? TPROF_ETRUNC : 0);
        assert_int_equal(rf, rm);
        assert_int_equal(tprof_pickle_bytes(f), len);
        tprof_pv lm = tprof_pickle_root(m), lf = tprof_pickle_root(f);
        size_t n = tprof_pickle_len(m, lm);
        assert_int_equal(tprof_pickle_len(f, lf), n);
        assert_true(n > (cut ? 100000u : 199999u));
        for (size_t i = 0; i < n; i++) {
            tprof_pv x = tprof_pickle_item(m, lm, i), y = tprof_pickle_item(f, lf, i);
            assert_int_equal(tprof_pickle_type(m, x), tprof_pickle_type(f, y));
            if (tprof_pickle_type(m, x) == TPROF_PK_STR) {
                size_t a, c;
                const char *sa = tprof_pickle_str(m, x, &a), *sc = tprof_pickle_str(f, y, &c);
                assert_int_equal(a, c);
                assert_memory_equal(sa, sc, a);
            } else if (tprof_pickle_type(m, x) == TPROF_PK_INT) {
                assert_true(tprof_pickle_uint(m, x) == tprof_pickle_uint(f, y));
            } else {
                assert_int_equal(tprof_pickle_type(m, x), TPROF_PK_LIST);
            }
        }
        tprof_pickle_close(m);
        tprof_pickle_close(f);
    }
    /* past the memory limit: refused, with the limit in the message */
    write_file(path, b.p, b.len);
    tprof_pickle *f;
    tprof_pickle_opts o = { .max_memory = 1u << 20 };
    assert_int_equal(tprof_pickle_load_opts(&f, path, &o, err, sizeof err), TPROF_ELIMIT);
    assert_null(f);
    if (!strstr(err, "memory limit of 1 MiB")) fprintf(stderr, "message: %s\n", err);
    assert_non_null(strstr(err, "memory limit of 1 MiB"));
    assert_non_null(strstr(err, path));
    o.max_memory = 64u << 20;
    assert_int_equal(tprof_pickle_load_opts(&f, path, &o, err, sizeof err), 0);
    assert_true(tprof_pickle_max_held(f) <= o.max_memory);
    tprof_pickle_close(f);
    unlink(path);
    ubuf_free(&b);
}

static void test_snapshot_model(void **st)
{
    (void)st;
    /* a bare list of one segment with blocks [active 100 of 512, inactive]:
     * the peak is the live block's requested size */
    static const unsigned char b[] = "\200\004](}(\214\006device" "K\000" "\214\007address" "M\000\020"
                                     "\214\012total_size" "M\000\004" "\214\006blocks" "](}(\214\004size" "M\000\002"
                                     "\214\016requested_size" "Kd" "\214\005state" "\214\020active_allocated"
                                     "\214\006frames]u}(\214\004size" "M\000\002" "\214\005state" "\214\010inactive"
                                     "ueue.";
    tprof_pickle *p = parse_ok(b, sizeof b - 1);
    tprof_mem_snapshot *s;
    assert_int_equal(tprof_mem_snapshot_from_pickle(&s, p, "t.pkl", err, sizeof err), 0);
    assert_int_equal(s->form, TPROF_SNAP_SEGMENTS);
    assert_int_equal(s->nsegs, 1);
    assert_int_equal(s->nblocks, 2);
    assert_int_equal(s->blocks[1].addr, 0x1000 + 512);
    tprof_mem_report r;
    assert_int_equal(tprof_mem_analyze(s, NULL, &r), 0);
    assert_int_equal(r.ndev, 1);
    assert_int_equal(r.dev[0].peak_active, 100);
    assert_int_equal(r.dev[0].peak_index, -1);
    assert_int_equal(r.dev[0].reserved_at_end, 1024);
    assert_int_equal(r.dev[0].fragmentation, 512);
    assert_int_equal(r.dev[0].inactive_split_blocks, 1);
    assert_int_equal(r.dev[0].nsites, 1);
    assert_string_equal(r.dev[0].sites[0].site, "(no stack recorded)");
    tprof_mem_report_free(&r);
    tprof_mem_snapshot_close(s);
    /* not a snapshot */
    p = parse_ok(P("\200\004K\005."));
    assert_int_equal(tprof_mem_snapshot_from_pickle(&s, p, "t.pkl", err, sizeof err), TPROF_EFORMAT);
    assert_non_null(strstr(err, "not a memory snapshot"));
    /* a list of anything is not a list of segments */
    p = parse_ok(P("\200\004](K\001K\002e."));
    assert_int_equal(tprof_mem_snapshot_from_pickle(&s, p, "t.pkl", err, sizeof err), TPROF_EFORMAT);
    assert_non_null(strstr(err, "t.pkl: byte 0: not a memory snapshot"));
    assert_non_null(strstr(err, "item 0 is of type int"));
    assert_non_null(strstr(err, "expected a list of segments"));
    p = parse_ok(P("\200\004]}\214\007addressK\001sa."));
    assert_int_equal(tprof_mem_snapshot_from_pickle(&s, p, "t.pkl", err, sizeof err), TPROF_EFORMAT);
    assert_non_null(strstr(err, "item 0 is a dict without \"total_size\""));
    /* an empty list is a snapshot without segments */
    p = parse_ok(P("\200\004]."));
    assert_int_equal(tprof_mem_snapshot_from_pickle(&s, p, "t.pkl", err, sizeof err), 0);
    assert_int_equal(s->nsegs, 0);
    tprof_mem_snapshot_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),         cmocka_unit_test(test_containers_and_memo),
        cmocka_unit_test(test_binput_protocol2), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_malformed),       cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_cut_pending_single), cmocka_unit_test(test_long_string),
        cmocka_unit_test(test_streamed_load),   cmocka_unit_test(test_snapshot_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
