/* Unit tests of the renderers (lib/report/): unit formatting, CSV, the JSON
 * writer and text tables. Output is captured with open_memstream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/json.h"
#include "trainprof/report.h"
#include "trainprof/result.h"

typedef struct {
    FILE *f;
    char *buf;
    size_t len;
} capture;

static void cap_open(capture *c)
{
    c->buf = NULL;
    c->len = 0;
    c->f = open_memstream(&c->buf, &c->len);
    assert_non_null(c->f);
}

/* Closes the stream and compares its text with WANT. */
static void cap_expect(capture *c, const char *want)
{
    assert_int_equal(fclose(c->f), 0);
    if (strcmp(c->buf, want) != 0) fail_msg("output:\n[%s]\nexpected:\n[%s]", c->buf, want);
    free(c->buf);
}

/* ---- durations and sizes ---------------------------------------------- */

static void test_fmt_duration_examples(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(tprof_fmt_duration(b, sizeof b, 0), "0 ns");
    assert_string_equal(tprof_fmt_duration(b, sizeof b, 812), "812 ns");
    assert_string_equal(tprof_fmt_duration(b, sizeof b, 999), "999 ns");
    assert_string_equal(tprof_fmt_duration(b, sizeof b, 12345), "12.3 us");
    assert_string_equal(tprof_fmt_duration(b, sizeof b, 4560000), "4.56 ms");
    assert_string_equal(tprof_fmt_duration(b, sizeof b, 1234000000), "1.234 s");
    assert_string_equal(tprof_fmt_duration(b, sizeof b, 123456789), "123 ms");
    assert_string_equal(tprof_fmt_duration(b, sizeof b, 98765432100LL), "98.77 s");
    assert_string_equal(tprof_fmt_duration(b, sizeof b, -812), "-812 ns");
    assert_string_equal(tprof_fmt_duration(b, sizeof b, -12345), "-12.3 us");
    /* returns its buffer; a short buffer is cut, still terminated */
    assert_ptr_equal(tprof_fmt_duration(b, sizeof b, 1), b);
    char small[4];
    tprof_fmt_duration(small, sizeof small, 123456);
    assert_int_equal(strlen(small), 3);
}

/* Splits "<number> <unit>"; fails on anything else (e.g. exponents). */
static double parse_amount(const char *s, const char **unit)
{
    for (const char *p = s; *p && *p != ' '; p++)
        if (!(*p == '-' || *p == '.' || (*p >= '0' && *p <= '9'))) fail_msg("'%s': not a plain decimal number", s);
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != ' ') fail_msg("'%s': expected '<number> <unit>'", s);
    *unit = end + 1;
    return v;
}

/* Around every unit boundary the text is a plain number, in the right unit,
 * close to the value (3 significant digits: within 0.5%). */
static void test_fmt_duration_boundaries(void **state)
{
    (void)state;
    static const int64_t v[] = { 1,         999,        1000,        1001,        1500,         9999,
                                 99949,     99950,      999499,      999500,      999999,       1000000,
                                 1000001,   999499999,  999500000,   999999999,   1000000000,   59999999999LL,
                                 3600000000000LL,       86400000000000LL };
    char b[64];
    char bad[2048] = "";
    size_t nbad = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        tprof_fmt_duration(b, sizeof b, v[i]);
        const char *bp = b;
        int plain = 1;
        for (; *bp && *bp != ' '; bp++)
            if (!(*bp == '-' || *bp == '.' || (*bp >= '0' && *bp <= '9'))) plain = 0;
        if (!plain) {
            size_t l = strlen(bad);
            snprintf(bad + l, sizeof bad - l, "\n  %lld ns -> '%s'", (long long)v[i], b);
            nbad++;
            continue;
        }
        const char *unit;
        double x = parse_amount(b, &unit);
        double f = !strcmp(unit, "ns") ? 1 : !strcmp(unit, "us") ? 1e3 : !strcmp(unit, "ms") ? 1e6
                 : !strcmp(unit, "s") ? 1e9 : 0;
        if (f == 0) fail_msg("%lld ns -> '%s': unknown unit", (long long)v[i], b);
        double rel = fabs(x * f - (double)v[i]) / (double)v[i];
        if (rel > 0.005) fail_msg("%lld ns -> '%s': off by %.3f%%", (long long)v[i], b, rel * 100);
    }
    if (nbad) fail_msg("%zu value(s) printed in exponent notation:%s", nbad, bad);
}

static void test_fmt_duration_extremes(void **state)
{
    (void)state;
    char b[64];
    tprof_fmt_duration(b, sizeof b, INT64_MAX);
    assert_non_null(strstr(b, " s"));
    tprof_fmt_duration(b, sizeof b, INT64_MIN);
    assert_int_equal(b[0], '-');
    assert_non_null(strstr(b, " s"));
}

static void test_fmt_bytes_examples(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(tprof_fmt_bytes(b, sizeof b, 0), "0 B");
    assert_string_equal(tprof_fmt_bytes(b, sizeof b, 512), "512 B");
    assert_string_equal(tprof_fmt_bytes(b, sizeof b, 1023), "1023 B");
    assert_string_equal(tprof_fmt_bytes(b, sizeof b, 1536), "1.5 KiB");
    assert_string_equal(tprof_fmt_bytes(b, sizeof b, 1148903751), "1.07 GiB"); /* 1.07 * 2^30 */
    assert_string_equal(tprof_fmt_bytes(b, sizeof b, 5368709120LL), "5 GiB");
    assert_string_equal(tprof_fmt_bytes(b, sizeof b, 1099511627776LL * 3 / 2), "1.5 TiB");
    assert_string_equal(tprof_fmt_bytes(b, sizeof b, -1536), "-1.5 KiB");
    const char *unit;
    double x = parse_amount(tprof_fmt_bytes(b, sizeof b, 3355443), &unit); /* 3.2 MiB */
    assert_string_equal(unit, "MiB");
    assert_true(fabs(x - 3.2) < 1e-9);
}

/* Progress: a share only against a known size; on a pipe the bytes read
 * and the pace, never "0% 83.6 MiB / 0 B" (issue 16). */
static void test_fmt_progress(void **state)
{
    (void)state;
    char b[160];
    const uint64_t mib = 1 << 20;
    assert_string_equal(tprof_fmt_progress(b, sizeof b, 42 * mib, 100 * mib, 20.0 * mib, 1, NULL),
                        "[############..................]  42% 42 MiB / 100 MiB, 20 MiB/s (1 file)");
    /* 83.6 MiB read from stdin: no share, no total */
    assert_string_equal(tprof_fmt_progress(b, sizeof b, 87660954, -1, 41.2 * mib, 1, NULL),
                        "83.6 MiB read, 41.2 MiB/s (1 file)");
    assert_string_equal(tprof_fmt_progress(b, sizeof b, 87660954, 0, -1, 1, NULL), "83.6 MiB read (1 file)");
    /* no rate yet; several files; a phase */
    assert_string_equal(tprof_fmt_progress(b, sizeof b, 0, 8 * mib, -1, 8, "rewriting"),
                        "[..............................]   0% 0 B / 8 MiB (8 files, rewriting)");
    /* a file that grew while read: at most 100% */
    assert_string_equal(tprof_fmt_progress(b, sizeof b, 3 * mib, 2 * mib, -1, 2, NULL),
                        "[##############################] 100% 3 MiB / 2 MiB (2 files)");
    /* a short buffer is cut, not overrun */
    char small[8];
    tprof_fmt_progress(small, sizeof small, 42 * mib, 100 * mib, 1, 1, NULL);
    assert_int_equal(strlen(small), 7);
}

static void test_fmt_rank_set(void **state)
{
    (void)state;
    char b[256];
    int64_t all[64], some[64];
    for (int i = 0; i < 64; i++) all[i] = 63 - i; /* any order */
    assert_string_equal(tprof_fmt_rank_set(b, sizeof b, all, 64, all, 64), "ranks 0-63");
    size_t k = 0;
    for (int i = 0; i < 64; i++)
        if (i != 17) some[k++] = i;
    assert_string_equal(tprof_fmt_rank_set(b, sizeof b, some, k, all, 64), "ranks 0-63 except 17");
    k = 0;
    for (int i = 0; i < 64; i++)
        if (i != 3 && i != 40 && i != 63) some[k++] = i;
    assert_string_equal(tprof_fmt_rank_set(b, sizeof b, some, k, all, 64), "ranks 0-63 except 3, 40, 63");
    /* four left out: the runs instead */
    k = 0;
    for (int i = 0; i < 64; i++)
        if (i % 16) some[k++] = i;
    assert_string_equal(tprof_fmt_rank_set(b, sizeof b, some, k, all, 64), "ranks 1-15, 17-31, 33-47, 49-63");
    const int64_t few[] = { 12, 3, 2, 8, 9, 10, 3 };
    assert_string_equal(tprof_fmt_rank_set(b, sizeof b, few, 7, all, 64), "ranks 2-3, 8-10, 12");
    assert_string_equal(tprof_fmt_rank_set(b, sizeof b, few, 1, all, 64), "rank 12");
    const int64_t odd[] = { 1, 3, 5, 7, 9, 11, 13, 15 };
    assert_string_equal(tprof_fmt_rank_set(b, sizeof b, odd, 8, NULL, 0), "ranks 1, 3, 5, 7, 9, 11, ... (8 ranks)");
    /* the run's ranks not one run: the runs of RANKS, never a wrong "except" */
    const int64_t gappy_all[] = { 0, 1, 2, 3, 4, 5, 6, 7, 20 }, gappy[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    assert_string_equal(tprof_fmt_rank_set(b, sizeof b, gappy, 8, gappy_all, 9), "ranks 0-7");
    assert_string_equal(tprof_fmt_rank_set(b, sizeof b, gappy, 0, gappy_all, 9), "no rank");
    /* ranks outside the run's list: never "except" */
    const int64_t out[] = { 0, 1, 100 };
    assert_string_equal(tprof_fmt_rank_set(b, sizeof b, out, 3, all, 64), "ranks 0-1, 100");
}

static void test_dist_worst(void **state)
{
    (void)state;
    const double v[] = { 3, NAN, 7, 7, 1, 9, 3 };
    size_t out[3];
    assert_int_equal(tprof_dist_worst(v, 7, 3, 0, out), 3);
    assert_int_equal(out[0], 5); /* 9 */
    assert_int_equal(out[1], 2); /* 7, the lower index of the tie first */
    assert_int_equal(out[2], 3);
    assert_int_equal(tprof_dist_worst(v, 7, 3, 1, out), 3);
    assert_int_equal(out[0], 4); /* 1 */
    assert_int_equal(out[1], 0); /* 3 */
    assert_int_equal(out[2], 6);
    const double none[] = { NAN, NAN };
    assert_int_equal(tprof_dist_worst(none, 2, 3, 0, out), 0);
    assert_int_equal(tprof_dist_worst(v, 2, 3, 0, out), 1); /* fewer values than K */
}

static void test_fmt_bytes_boundaries(void **state)
{
    (void)state;
    static const int64_t v[] = { 1,          1023,       1024,       1025,        10239,       102399,
                                 1000 * 1024, 1023 * 1024, 1048575,  1048576,     1073741823LL, 1073741824LL,
                                 1099511627775LL, 1099511627776LL };
    char b[64];
    char bad[2048] = "";
    size_t nbad = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        tprof_fmt_bytes(b, sizeof b, v[i]);
        int plain = 1;
        for (const char *bp = b; *bp && *bp != ' '; bp++)
            if (!(*bp == '-' || *bp == '.' || (*bp >= '0' && *bp <= '9'))) plain = 0;
        if (!plain) {
            size_t l = strlen(bad);
            snprintf(bad + l, sizeof bad - l, "\n  %lld B -> '%s'", (long long)v[i], b);
            nbad++;
            continue;
        }
        const char *unit;
        double x = parse_amount(b, &unit);
        double f = !strcmp(unit, "B") ? 1 : !strcmp(unit, "KiB") ? 1024.0 : !strcmp(unit, "MiB") ? 1048576.0
                 : !strcmp(unit, "GiB") ? 1073741824.0 : !strcmp(unit, "TiB") ? 1099511627776.0 : 0;
        if (f == 0) fail_msg("%lld B -> '%s': unknown unit", (long long)v[i], b);
        double rel = fabs(x * f - (double)v[i]) / (double)v[i];
        if (rel > 0.005) fail_msg("%lld B -> '%s': off by %.3f%%", (long long)v[i], b, rel * 100);
    }
    if (nbad) fail_msg("%zu value(s) printed in exponent notation:%s", nbad, bad);
}

/* ---- CSV -------------------------------------------------------------- */

static void test_csv_quoting(void **state)
{
    (void)state;
    static const struct { const char *in, *out; } c[] = {
        { "plain", "plain" },
        { "", "" },
        { "  spaced  ", "  spaced  " },
        { "a,b", "\"a,b\"" },
        { "say \"hi\"", "\"say \"\"hi\"\"\"" },
        { "\"", "\"\"\"\"" },
        { "line\nbreak", "\"line\nbreak\"" },
        { "cr\r", "\"cr\r\"" },
        { "void f<int, float>(int*)", "\"void f<int, float>(int*)\"" },
        { "caf\xc3\xa9;tab\t", "caf\xc3\xa9;tab\t" },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        capture k;
        cap_open(&k);
        tprof_csv_field(k.f, c[i].in);
        cap_expect(&k, c[i].out);
    }
    /* a row */
    capture k;
    cap_open(&k);
    tprof_csv_field(k.f, "name");
    fputc(',', k.f);
    tprof_csv_field(k.f, "a,b");
    fputc('\n', k.f);
    cap_expect(&k, "name,\"a,b\"\n");
}

/* ---- JSON writer ------------------------------------------------------ */

static void test_jw_object(void **state)
{
    (void)state;
    capture k;
    cap_open(&k);
    tprof_jw w;
    tprof_jw_init(&w, k.f);
    tprof_jw_obj(&w);
    tprof_jw_key(&w, "a");
    tprof_jw_int(&w, 1);
    tprof_jw_key(&w, "b");
    tprof_jw_arr(&w);
    tprof_jw_str(&w, "x");
    tprof_jw_str(&w, NULL);
    tprof_jw_null(&w);
    tprof_jw_bool(&w, 1);
    tprof_jw_bool(&w, 0);
    tprof_jw_arr_end(&w);
    tprof_jw_key(&w, "c");
    tprof_jw_double(&w, 0.5);
    tprof_jw_key(&w, "d");
    tprof_jw_uint(&w, UINT64_MAX);
    tprof_jw_key(&w, "e");
    tprof_jw_int(&w, INT64_MIN);
    tprof_jw_key(&w, "f");
    tprof_jw_obj(&w);
    tprof_jw_obj_end(&w);
    tprof_jw_key(&w, "g");
    tprof_jw_arr(&w);
    tprof_jw_arr_end(&w);
    tprof_jw_key(&w, "h");
    tprof_jw_obj(&w);
    tprof_jw_key(&w, "i");
    tprof_jw_arr(&w);
    tprof_jw_int(&w, -3);
    tprof_jw_obj(&w);
    tprof_jw_obj_end(&w);
    tprof_jw_arr_end(&w);
    tprof_jw_obj_end(&w);
    tprof_jw_obj_end(&w);
    cap_expect(&k, "{\"a\":1,\"b\":[\"x\",null,null,true,false],\"c\":0.5,\"d\":18446744073709551615,"
                   "\"e\":-9223372036854775808,\"f\":{},\"g\":[],\"h\":{\"i\":[-3,{}]}}\n");
}

static void test_jw_top_level_array(void **state)
{
    (void)state;
    capture k;
    cap_open(&k);
    tprof_jw w;
    tprof_jw_init(&w, k.f);
    tprof_jw_arr(&w);
    tprof_jw_obj(&w);
    tprof_jw_key(&w, "a");
    tprof_jw_int(&w, 1);
    tprof_jw_obj_end(&w);
    tprof_jw_obj(&w);
    tprof_jw_obj_end(&w);
    tprof_jw_arr(&w);
    tprof_jw_arr_end(&w);
    tprof_jw_arr_end(&w);
    cap_expect(&k, "[{\"a\":1},{},[]]\n");
}

static void test_jw_doubles(void **state)
{
    (void)state;
    capture k;
    cap_open(&k);
    tprof_jw w;
    tprof_jw_init(&w, k.f);
    tprof_jw_arr(&w);
    tprof_jw_double(&w, 0.25);
    tprof_jw_double(&w, 3.0);
    tprof_jw_double(&w, -2.5);
    tprof_jw_double(&w, NAN);
    tprof_jw_double(&w, INFINITY);
    tprof_jw_double(&w, -INFINITY);
    tprof_jw_double(&w, 0.0);
    tprof_jw_arr_end(&w);
    cap_expect(&k, "[0.25,3,-2.5,null,null,null,0]\n");

    /* any finite double prints as a JSON number that reads back exactly */
    static const double d[] = { 0.1, 1.0 / 3.0, 1e300, -1e-300, 123456789.123456789, 5e-324 };
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        cap_open(&k);
        tprof_jw_init(&w, k.f);
        tprof_jw_double(&w, d[i]);
        assert_int_equal(fclose(k.f), 0);
        tprof_json *j;
        assert_int_equal(tprof_json_open_mem(&j, k.buf, k.len, NULL), 0);
        tprof_json_token t;
        assert_int_equal(tprof_json_next(j, &t), 0);
        assert_int_equal(t.type, TPROF_JSON_NUMBER);
        assert_true(tprof_json_parse_double(t.text, t.len) == d[i]);
        tprof_json_close(j);
        free(k.buf);
    }
}

static void test_jw_escaping(void **state)
{
    (void)state;
    capture k;
    cap_open(&k);
    tprof_jw w;
    tprof_jw_init(&w, k.f);
    tprof_jw_obj(&w);
    tprof_jw_key(&w, "k\"q");
    tprof_jw_str(&w, "a\"b\\c\n\r\t\x01\x1f/\xc3\xa9\b\f");
    tprof_jw_obj_end(&w);
    cap_expect(&k, "{\"k\\\"q\":\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u001f/\xc3\xa9\\u0008\\u000c\"}\n");

    cap_open(&k);
    tprof_json_escape(k.f, "");
    cap_expect(&k, "\"\"");
}

/* What the writer escapes, the tokenizer decodes back to the same bytes. */
static void test_jw_round_trip(void **state)
{
    (void)state;
    char s[128];
    size_t n = 0;
    for (int c = 1; c < 128; c++) s[n++] = (char)c;
    s[n] = 0;
    static const char utf8[] = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    capture k;
    cap_open(&k);
    tprof_jw w;
    tprof_jw_init(&w, k.f);
    tprof_jw_arr(&w);
    tprof_jw_str(&w, s);
    tprof_jw_str(&w, utf8);
    tprof_jw_arr_end(&w);
    assert_int_equal(fclose(k.f), 0);
    tprof_json *j;
    assert_int_equal(tprof_json_open_mem(&j, k.buf, k.len, NULL), 0);
    tprof_json_token t;
    assert_int_equal(tprof_json_next(j, &t), 0);
    assert_int_equal(tprof_json_next(j, &t), 0);
    if (t.type != TPROF_JSON_STRING) fail_msg("writer output is not valid JSON: %s", tprof_json_errmsg(j));
    assert_int_equal(t.len, n);
    assert_memory_equal(t.text, s, n);
    assert_int_equal(tprof_json_next(j, &t), 0);
    assert_int_equal(t.len, sizeof utf8 - 1);
    assert_memory_equal(t.text, utf8, t.len);
    assert_int_equal(tprof_json_next(j, &t), 0);
    assert_int_equal(t.type, TPROF_JSON_ARR_END);
    assert_int_equal(tprof_json_next(j, &t), 0);
    assert_int_equal(t.type, TPROF_JSON_EOF);
    tprof_json_close(j);
    free(k.buf);
}

/* Deep nesting still gives well-formed JSON. */
static void test_jw_deep_nesting(void **state)
{
    (void)state;
    enum { DEPTH = 70 };
    capture k;
    cap_open(&k);
    tprof_jw w;
    tprof_jw_init(&w, k.f);
    for (int i = 0; i < DEPTH; i++) tprof_jw_arr(&w);
    tprof_jw_int(&w, 1);
    tprof_jw_int(&w, 2);
    for (int i = 0; i < DEPTH; i++) {
        tprof_jw_arr_end(&w);
        if (i == DEPTH / 2) tprof_jw_int(&w, 3);
    }
    char want[4 * DEPTH + 16];
    size_t n = 0;
    for (int i = 0; i < DEPTH; i++) want[n++] = '[';
    memcpy(want + n, "1,2", 3);
    n += 3;
    for (int i = 0; i < DEPTH; i++) {
        want[n++] = ']';
        if (i == DEPTH / 2) {
            memcpy(want + n, ",3", 2);
            n += 2;
        }
    }
    want[n++] = '\n';
    want[n] = 0;
    cap_expect(&k, want);
}

/* ---- tables ----------------------------------------------------------- */

static void test_table_basic(void **state)
{
    (void)state;
    static const char *const h[] = { "name", "n" };
    tprof_table *t = tprof_table_new(2, h, "lr");
    assert_non_null(t);
    const char *r1[] = { "abc", "5" };
    const char *r2[] = { "x", "123" };
    assert_int_equal(tprof_table_row(t, r1), 0);
    assert_int_equal(tprof_table_row(t, r2), 0);
    capture k;
    cap_open(&k);
    tprof_table_print(t, k.f);
    cap_expect(&k, "name    n\n"
                   "----  ---\n"
                   "abc     5\n"
                   "x     123\n");
    tprof_table_free(t);
}

static void test_table_limit_and_utf8(void **state)
{
    (void)state;
    static const char *const h[] = { "name", "n" };
    tprof_table *t = tprof_table_new(2, h, "lr");
    tprof_table_limit(t, 0, 8);
    const char *r1[] = { "abcdefghijkl", "1" };
    const char *r2[] = { "\xc3\xa9", "22" };
    const char *r3[] = { "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
                         NULL };
    assert_int_equal(tprof_table_row(t, r1), 0);
    assert_int_equal(tprof_table_row(t, r2), 0);
    assert_int_equal(tprof_table_row(t, r3), 0);
    capture k;
    cap_open(&k);
    tprof_table_print(t, k.f);
    /* column 0 is 8 wide (the limit); long cells keep 3 head and 2 tail characters */
    cap_expect(&k, "name       n\n"
                   "--------  --\n"
                   "abc...kl   1\n"
                   "\xc3\xa9         22\n"
                   "\xc3\xa9\xc3\xa9\xc3\xa9...\xc3\xa9\xc3\xa9    \n");
    tprof_table_free(t);
}

/* A cut cell in a right-aligned column wider than the limit stays aligned. */
static void test_table_limit_right_aligned(void **state)
{
    (void)state;
    static const char *const h[] = { "x", "long header!!" };
    tprof_table *t = tprof_table_new(2, h, "lr");
    tprof_table_limit(t, 1, 8);
    const char *r1[] = { "a", "0123456789abc" };
    assert_int_equal(tprof_table_row(t, r1), 0);
    capture k;
    cap_open(&k);
    tprof_table_print(t, k.f);
    cap_expect(&k, "x  long header!!\n"
                   "-  -------------\n"
                   "a       012...bc\n");
    tprof_table_free(t);
}

/* ---- kernel names in tables -------------------------------------------- */

static void expect_short(const char *name, int level, const char *want)
{
    char *s = tprof_name_short(name, level);
    assert_non_null(s);
    if (strcmp(s, want)) fail_msg("%s at level %d: [%s], expected [%s]", name, level, s, want);
    free(s);
}

static void test_name_short(void **state)
{
    (void)state;
    const char *fill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                       "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";
    expect_short(fill, 0, "at::native::vectorized_elementwise_kernel<...>");
    expect_short(fill, 1, "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<...>, "
                          "at::detail::Array<...> >");
    expect_short(fill, 2, "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                          "at::detail::Array<char*, 1> >");
    expect_short(fill, 3, fill); /* past the deepest: in full */
    /* no signature: as it is */
    expect_short("Memcpy HtoD (Pageable -> Device)", 0, "Memcpy HtoD (Pageable -> Device)");
    expect_short("triton_poi_fused_add_0", 0, "triton_poi_fused_add_0");
    expect_short("broken<int", 0, "broken<int");
    /* parameters dropped without templates; a scope in parentheses kept */
    expect_short("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0,
                 "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    expect_short("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 64, 64>(float*)",
                 0, "at::native::(anonymous namespace)::CatArrayBatchedCopy<...>");
    /* operators and arrows are not brackets; qualifiers go with the parameters */
    expect_short("void f<a->b>::operator()(int) const", 0, "f<...>::operator()");
    expect_short("void Foo<int>::operator<<(int)", 0, "Foo<...>::operator<<");
}

static void expect_display(const char *const *names, size_t n, int width, const char *const *want, int numbered)
{
    char *out[8];
    int num = -1;
    assert_int_equal(tprof_names_display(names, n, width, out, &num), 0);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(out[i], want[i])) fail_msg("row %zu: [%s], expected [%s]", i, out[i], want[i]);
        free(out[i]);
    }
    assert_int_equal(num, numbered);
}

static void test_names_display(void **state)
{
    (void)state;
    /* distinct at level 0 */
    const char *a[] = { "void k<1>(int)", "void j<2>(int)", "plain" };
    const char *wa[] = { "k<...>", "j<...>", "plain" };
    expect_display(a, 3, 90, wa, 0);
    /* alike at level 0: their template arguments come back, the others stay short */
    const char *b[] = { "void cutlass::Kernel<gemm_64x64_nn>(Params)", "void cutlass::Kernel<gemm_128x64_tn>(Params)",
                        "void other<int>(int)", "void cutlass::Kernel<gemm_64x64_nn>(Params)" };
    const char *wb[] = { "cutlass::Kernel<gemm_64x64_nn>", "cutlass::Kernel<gemm_128x64_tn>", "other<...>",
                         "cutlass::Kernel<gemm_64x64_nn>" };
    expect_display(b, 4, 90, wb, 0);
    /* alike up to the parameters: in full */
    const char *c[] = { "void k<1>(int)", "void k<1>(float)" };
    const char *wc[] = { "void k<1>(int)", "void k<1>(float)" };
    expect_display(c, 2, 90, wc, 0);
    /* alike even in full within the width: numbered in row order, the suffix within the width */
    const char *d[] = { "kernel_with_a_long_name_AAAA_tail", "kernel_with_a_long_name_BBBB_tail",
                        "kernel_with_a_long_name_AAAA_tail" };
    const char *wd[] = { "kernel...tail #1", "kernel...tail #2", "kernel...tail #1" };
    expect_display(d, 3, 16, wd, 1);
    /* the middle cut of today alone would have made these two one */
    const char *e[] = { "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
                        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_sub<float>, "
                        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)" };
    const char *we[] = { "at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<...>, at:...>",
                         "at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_sub<...>, at:...>" };
    expect_display(e, 2, 86, we, 0);
}

/* A table's name column: shortened, and numbered with a footnote when alike. */
static void test_table_names(void **state)
{
    (void)state;
    const char *hdr[] = { "kernel", "n" };
    tprof_table *t = tprof_table_new(2, hdr, "lr");
    tprof_table_limit(t, 0, 10);
    tprof_table_names(t, 0);
    const char *r1[] = { "void f<int>(int)", "1" }, *r2[] = { "name_AAAA_long", "2" }, *r3[] = { "name_BBBB_long", "3" };
    tprof_table_row(t, r1);
    tprof_table_row(t, r2);
    tprof_table_row(t, r3);
    capture c;
    cap_open(&c);
    tprof_table_print(t, c.f);
    cap_expect(&c, "kernel      n\n"
                   "----------  -\n"
                   "f<...>      1\n"
                   "na...ng #1  2\n"
                   "na...ng #2  3\n" TPROF_NAMES_FOOTNOTE "\n");
    /* --wide: in full */
    tprof_table_layout(1, 0);
    cap_open(&c);
    tprof_table_print(t, c.f);
    cap_expect(&c, "kernel            n\n"
                   "----------------  -\n"
                   "void f<int>(int)  1\n"
                   "name_AAAA_long    2\n"
                   "name_BBBB_long    3\n");
    /* a terminal of 30 columns: the name column gets what the others leave (24 at least) */
    tprof_table_layout(0, 30);
    cap_open(&c);
    tprof_table_print(t, c.f);
    cap_expect(&c, "kernel          n\n"
                   "--------------  -\n"
                   "f<...>          1\n"
                   "name_AAAA_long  2\n"
                   "name_BBBB_long  3\n");
    tprof_table_layout(0, 0);
    tprof_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_duration_examples),
        cmocka_unit_test(test_fmt_duration_boundaries),
        cmocka_unit_test(test_fmt_bytes_examples),
        cmocka_unit_test(test_fmt_bytes_boundaries),
        cmocka_unit_test(test_fmt_rank_set),
        cmocka_unit_test(test_dist_worst),
        cmocka_unit_test(test_fmt_progress),
        cmocka_unit_test(test_csv_quoting),
        cmocka_unit_test(test_jw_object),
        cmocka_unit_test(test_jw_top_level_array),
        cmocka_unit_test(test_jw_doubles),
        cmocka_unit_test(test_jw_escaping),
        cmocka_unit_test(test_jw_round_trip),
        cmocka_unit_test(test_jw_deep_nesting),
        cmocka_unit_test(test_table_basic),
        cmocka_unit_test(test_table_limit_and_utf8),
        cmocka_unit_test(test_table_limit_right_aligned),
        cmocka_unit_test(test_fmt_duration_extremes),
        cmocka_unit_test(test_name_short),
        cmocka_unit_test(test_names_display),
        cmocka_unit_test(test_table_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
