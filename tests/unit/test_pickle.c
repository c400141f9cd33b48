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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),         cmocka_unit_test(test_containers_and_memo),
        cmocka_unit_test(test_binput_protocol2), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_malformed),       cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_snapshot_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
