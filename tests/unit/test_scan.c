/* The JSON scanning primitives (lib/json/scan.h): numbers read a word at a
 * time must agree with the byte-wise forms wherever the number lies in the
 * buffer, and the iterative value skipper must accept, refuse and stop where
 * JSON's grammar says. Expected values come from a plain digit-by-digit
 * restatement in this file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../lib/json/scan.h"
#include "unit.h"

/* Value of TEXT in units of 10^-SCALE when it is -?digits(.digits)? with at
 * most 18 digits and at most SCALE after the point; 0 when it is not. */
static int reference_decimal(const char *text, size_t len, int scale, int64_t *out)
{
    size_t i = 0;
    int neg = text[0] == '-';
    i += (size_t)neg;
    __int128 v = 0;
    int ndig = 0, frac = 0, seen_point = 0;
    if (i >= len || text[i] < '0' || text[i] > '9') return 0;
    if (text[i] == '0' && i + 1 < len && text[i + 1] >= '0' && text[i + 1] <= '9') return 0;
    for (; i < len; i++) {
        char c = text[i];
        if (c == '.' && !seen_point) {
            seen_point = 1;
            continue;
        }
        if (c < '0' || c > '9') return 0;
        v = v * 10 + (c - '0');
        ndig++;
        frac += seen_point;
    }
    if (ndig > 18 || frac > scale || (seen_point && frac == 0)) return 0;
    for (int k = frac; k < scale; k++) v *= 10;
    if (v > INT64_MAX) return 0;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 1;
}

/* TEXT followed by TAIL, in a buffer of exactly that length (the byte-wise
 * paths) or padded with spaces to 96 bytes (the word-at-a-time paths). */
static uint8_t *place(const char *text, const char *tail, int padded, size_t *len)
{
    size_t n = strlen(text) + strlen(tail), cap = padded ? n + 96 : n;
    uint8_t *b = malloc(cap ? cap : 1);
    memset(b, ' ', cap);
    memcpy(b, text, strlen(text));
    memcpy(b + strlen(text), tail, strlen(tail));
    *len = cap;
    return b;
}

static void check_decimal(const char *text, const char *tail, int scale)
{
    /* the number is what runs up to the first byte that cannot continue one */
    char whole[160];
    snprintf(whole, sizeof whole, "%s%s", text, tail);
    size_t numlen = strspn(whole, "0123456789.eE+-");
    int64_t ref = 0;
    int plain = reference_decimal(whole, numlen, scale, &ref);
    int rcs[2];
    size_t nexts[2];
    for (int padded = 0; padded < 2; padded++) {
        size_t len;
        uint8_t *b = place(text, tail, padded, &len);
        int64_t v = 0;
        int exact = 0;
        const uint8_t *next = NULL;
        js_error err = { 0 };
        rcs[padded] = js_decimal(b, b + len, scale, &v, &exact, &next, &err);
        nexts[padded] = rcs[padded] == JS_OK ? (size_t)(next - b) : (size_t)(err.at ? err.at - b : 0);
        /* unpadded, a number running to the end of the buffer may go on */
        if (plain && (padded || numlen < strlen(whole))) {
            if (rcs[padded] != JS_OK || !exact || v != ref)
                fail_msg("js_decimal(\"%s\", scale %d, padded %d): rc %d exact %d value %lld, expected %lld", whole,
                         scale, padded, rcs[padded], exact, (long long)v, (long long)ref);
            assert_int_equal(nexts[padded], numlen);
        } else if (rcs[padded] == JS_OK && exact && !plain) {
            fail_msg("js_decimal(\"%s\", scale %d, padded %d) claims an exact value %lld", whole, scale, padded,
                     (long long)v);
        }
        free(b);
    }
    if (numlen < strlen(whole)) { /* the unpadded buffer does not end inside the number */
        assert_int_equal(rcs[0], rcs[1]);
        assert_int_equal(nexts[0], nexts[1]);
    }
}

static void check_number(const char *text, const char *tail)
{
    int rcs[2];
    size_t pos[2];
    for (int padded = 0; padded < 2; padded++) {
        size_t len;
        uint8_t *b = place(text, tail, padded, &len);
        const uint8_t *next = NULL;
        js_error err = { 0 };
        rcs[padded] = js_number(b, b + len, 1, &next, &err);
        pos[padded] = rcs[padded] == JS_OK ? (size_t)(next - b) : (size_t)(err.at - b);
        free(b);
    }
    assert_int_equal(rcs[0], rcs[1]);
    assert_int_equal(pos[0], pos[1]);
}

/* N pseudo-random digits; LEAD: the first is not 0 (an integer part). */
static void digits(char *out, int n, unsigned seed, int lead)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        out[i] = (char)('0' + (seed >> 16) % 10);
    }
    if (lead && n > 0 && out[0] == '0') out[0] = '7';
    if (!lead && n > 1) out[0] = '0'; /* fractions like .05 */
    out[n] = 0;
}

static void test_decimal_forms(void **state)
{
    (void)state;
    static const char *tails[] = { ",", "}", " ", "]", "e5,", ".", "x", "5", "-" };
    char num[80], a[32], f[16];
    for (int ni = 0; ni <= 20; ni++)
        for (int nf = -1; nf <= 8; nf++)
            for (int neg = 0; neg < 2; neg++)
                for (size_t t = 0; t < sizeof tails / sizeof *tails; t++) {
                    digits(a, ni, (unsigned)(ni * 31 + nf * 7 + neg), 1);
                    digits(f, nf < 0 ? 0 : nf, (unsigned)(ni + nf * 13), (ni + nf) % 2);
                    snprintf(num, sizeof num, "%s%s%s%s", neg ? "-" : "", a, nf >= 0 ? "." : "", f);
                    for (int scale = 0; scale <= 6; scale += 3) check_decimal(num, tails[t], scale);
                    check_number(num, tails[t]);
                }
    static const char *odd[] = { "0", "-0", "0.5", "00", "01", "-01", "0.", "1.e3", "1e3", "-", "+1", ".5",
                                 "999999999999999999", "9223372036854775807", "9223372036854.775807",
                                 "1700000000992.830", "1700000000992.8305", "12345678.12345678" };
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++)
        for (size_t t = 0; t < 4; t++) {
            for (int scale = 0; scale <= 6; scale++) check_decimal(odd[i], tails[t], scale);
            check_number(odd[i], tails[t]);
        }
}

static void test_decimal_values(void **state)
{
    (void)state;
    uint8_t b[64];
    memset(b, ' ', sizeof b);
    memcpy(b, "1700000000992.830,", 18);
    int64_t v;
    int exact;
    const uint8_t *next;
    js_error err;
    assert_int_equal(js_decimal(b, b + sizeof b, 3, &v, &exact, &next, &err), JS_OK);
    assert_true(exact);
    assert_int_equal(v, 1700000000992830);
    assert_ptr_equal(next, b + 17);
    memcpy(b, "-12.5}", 6);
    assert_int_equal(js_decimal(b, b + sizeof b, 3, &v, &exact, &next, &err), JS_OK);
    assert_int_equal(v, -12500);
    assert_ptr_equal(next, b + 5);
}

static void test_digits_runs(void **state)
{
    (void)state;
    uint8_t b[40];
    for (size_t n = 0; n <= 32; n++) {
        memset(b, '5', sizeof b);
        b[n] = 'x';
        assert_ptr_equal(js_digits(b, b + sizeof b), b + n);
        assert_ptr_equal(js_digits(b, b + n), b + n);
    }
    /* bytes next to the digits in code order: '/' and ':' are not digits */
    uint8_t c[16] = "12/4567890123456";
    assert_ptr_equal(js_digits(c, c + 16), c + 2);
    c[2] = ':';
    assert_ptr_equal(js_digits(c, c + 16), c + 2);
    c[2] = 0xB3; /* '3' with the top bit set */
    assert_ptr_equal(js_digits(c, c + 16), c + 2);
}

/* js_skip_value over TEXT (then one space): the result and where it stops. */
static int skip_over(const char *text, int depth, size_t *at)
{
    size_t n = strlen(text);
    uint8_t *b = calloc(1, n + 1);
    memcpy(b, text, n);
    b[n] = ' ';
    const uint8_t *next = NULL;
    js_error err = { 0 };
    int rc = js_skip_value(b, b + n + 1, depth, &next, &err);
    *at = rc == JS_OK ? (size_t)(next - b) : rc == JS_ERR ? (size_t)(err.at - b) : 0;
    free(b);
    return rc;
}

static void test_skip_valid(void **state)
{
    (void)state;
    static const char *ok[] = {
        "0", "-1.5e+3", "\"\"", "\"a\\\"b\\u00e9\"", "true", "false", "null", "[]", "{}", "[ ]", "{ }",
        "[1,2,3]", "[[2048, 1], [], [], []]", "{\"a\": [1, {\"b\": null}], \"c\": \"d\"}",
        "[\"caf\xc3\xa9\", \"tab\\there\"]", " \t\n[ 1 , [ ] , { \"k\" : { } } ]",
        "{\"Input Dims\": [[8, 2048], [], [], [], [], []], \"Ev Idx\": 1}",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        size_t at, n = strlen(ok[i]);
        int rc = skip_over(ok[i], 8, &at);
        if (rc != JS_OK) fail_msg("skip_over(%s) = %d at %zu", ok[i], rc, at);
        assert_int_equal(at, n);
        /* every proper prefix that is not a whole value asks for more input */
        for (size_t cut = 1; cut < n; cut++) {
            char *p = strndup(ok[i], cut);
            const uint8_t *next;
            js_error err;
            int r = js_skip_value((const uint8_t *)p, (const uint8_t *)p + cut, 8, &next, &err);
            if (r == JS_ERR) fail_msg("prefix %zu of %s refused at %td", cut, ok[i], err.at - (const uint8_t *)p);
            free(p);
        }
    }
}

static void test_skip_invalid(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t at; /* where the error is reported */
    } bad[] = {
        { "[1,]", 3 },         { "[1 2]", 3 },          { "{\"a\" 1}", 5 },    { "{1: 2}", 1 },
        { "{\"a\": 1,}", 8 },  { "[}", 1 },             { "{\"a\": 1]", 7 },   { "tru ", 0 },
        { "[nul]", 1 },        { "[01]", 2 },           { "[-]", 2 },          { "[\"\x01\"]", 2 },
        { "[\"\\x\"]", 2 },    { "[\"\xff\"]", 2 },     { "[+1]", 1 },         { "{\"a\":: 1}", 5 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t at;
        int rc = skip_over(bad[i].text, 8, &at);
        if (rc != JS_ERR || at != bad[i].at)
            fail_msg("skip_over(%s) = %d at %zu, expected an error at %zu", bad[i].text, rc, at, bad[i].at);
    }
}

/* Numbers inside a skipped array: the short forms are skipped a word at a
 * time when 32 bytes follow, byte-wise otherwise; both must stop at the same
 * byte with the same answer, valid or not. */
static void test_skip_numbers(void **state)
{
    (void)state;
    static const char *forms[] = {
        "0", "-0", "7", "-7", "10", "01", "-01", "00", "1234567", "12345678", "-1234567", "1.5", "-1.5",
        "0.5", "0.", "1.", "-", "-.5", ".5", "1.1234567", "1.12345678", "1e5", "1.5E-3", "1.5e", "2-",
        "3.4.5", "1x", "1+", "9999999.9999999", "0.0000000",
    };
    char text[64];
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
        for (int where = 0; where < 2; where++) {
            snprintf(text, sizeof text, where ? "[%s, 1]" : "[1, %s]", forms[i]);
            int rcs[2];
            size_t at[2];
            for (int padded = 0; padded < 2; padded++) {
                size_t len;
                uint8_t *b = place(text, "", padded, &len);
                const uint8_t *next = NULL;
                js_error err = { 0 };
                rcs[padded] = js_skip_value(b, b + len, 8, &next, &err);
                at[padded] = rcs[padded] == JS_OK ? (size_t)(next - b) : rcs[padded] == JS_ERR ? (size_t)(err.at - b) : 0;
                free(b);
            }
            if (rcs[0] != rcs[1] || at[0] != at[1])
                fail_msg("%s: byte-wise %d at %zu, word-wise %d at %zu", text, rcs[0], at[0], rcs[1], at[1]);
        }
}

/* js_skip_value_cached over TEXT placed in a buffer of exactly its length
 * plus PAD spaces: the result and where it stops (or the error offset). */
static int cached_over(js_skip_cache *c, const char *text, size_t pad, int depth, size_t *at)
{
    size_t n = strlen(text);
    uint8_t *b = malloc(n + pad + 1);
    memcpy(b, text, n);
    memset(b + n, ' ', pad);
    const uint8_t *next = NULL;
    js_error err = { 0 };
    int rc = js_skip_value_cached(c, b, b + n + pad, depth, &next, &err);
    *at = rc == JS_OK ? (size_t)(next - b) : rc == JS_ERR ? (size_t)(err.at - b) : 0;
    free(b);
    return rc;
}

/* The cache answers exactly as the scanner would: repeats, values that
 * start like a held one, invalid ones (never held), values cut by the end
 * of the window, and depth limits. */
static void test_skip_cache(void **state)
{
    (void)state;
    js_skip_cache *c = js_skip_cache_new();
    assert_non_null(c);
    static const char *texts[] = {
        "[[4096, 1]], \"Input Dims\": [[8]]",     "[[4096, 1], [1]]",        "[[4096, 1]]",
        "[[4096, 1]",                                 "[[4096, 1 2]]",           "[[4096, 1]]]",
        "{\"a\": [1, 2], \"b\": \"c\"}, 7",      "{\"a\": [1, 2], \"b\": \"c\"",
        "[\"c10::BFloat16\", \"\", \"\"]",       "[\"c10::BFloat16\", \"\", \"\", \"\"]",
        "[\"c10::BFloat16\", \"\", \"\"x]",      "[2112, 1, 1], \"block\": [128, 1, 1]",
        "[2112, 1, 1]",                               "[2112, 1, 01]",           "12345, 7",
        "-1.5, 7",                                    "\"str\", 7",            "[[[[[[[[1]]]]]]]]",
    };
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
            for (size_t pad = 0; pad < 40; pad += 13)
                for (int depth = 3; depth <= 100; depth += 97) {
                    size_t want_at, got_at;
                    size_t n = strlen(texts[i]);
                    uint8_t *b = malloc(n + pad + 1);
                    memcpy(b, texts[i], n);
                    memset(b + n, ' ', pad);
                    const uint8_t *next = NULL;
                    js_error err = { 0 };
                    int want = js_skip_value(b, b + n + pad, depth, &next, &err);
                    want_at = want == JS_OK ? (size_t)(next - b) : want == JS_ERR ? (size_t)(err.at - b) : 0;
                    free(b);
                    int got = cached_over(c, texts[i], pad, depth, &got_at);
                    if (got != want || got_at != want_at)
                        fail_msg("round %d: %s (pad %zu, depth %d): cached %d at %zu, scanned %d at %zu", round,
                                 texts[i], pad, depth, got, got_at, want, want_at);
                }
    /* a held value whose bytes end past the window asks for more, as the scanner does */
    size_t at;
    assert_int_equal(cached_over(c, "[\"c10::BFloat16\", \"\", \"\"]", 20, 100, &at), JS_OK);
    assert_int_equal(cached_over(c, "[\"c10::BFloat16\", \"\",                ", 0, 100, &at), JS_MORE);
    js_skip_cache_free(c);
    assert_int_equal(cached_over(NULL, "[1, 2, 3]", 20, 100, &at), JS_OK); /* no cache: plain skip */
    assert_int_equal(at, 9);
}

/* Tags: one word per held value, the same word while the value is held,
 * zero when the bytes are put in again; none for values not held. */
static void test_skip_tags(void **state)
{
    (void)state;
    js_skip_cache *c = js_skip_cache_new_for(0); /* 4 sets of 4 ways: values are replaced soon */
    assert_non_null(c);
    const uint8_t *next;
    js_error err;
    uint64_t *tag, *first;
    static const char v[] = "[[8944, 1024], [1024, 2816]], \"next\": 1";
    const uint8_t *p = (const uint8_t *)v, *end = p + sizeof v - 1;
    assert_int_equal(js_skip_container_tagged(c, p, end, 100, &next, &err, &first), JS_OK);
    assert_int_equal(next - p, 28);
    assert_non_null(first);
    assert_true(*first == 0);
    *first = 42;
    assert_int_equal(js_skip_container_tagged(c, p, end, 100, &next, &err, &tag), JS_OK);
    assert_ptr_equal(tag, first);
    assert_true(*tag == 42);
    /* short values and values near the window's end are not held */
    static const char s1[] = "[1], \"n\": 1, \"m\": 2, \"o\": 3";
    assert_int_equal(js_skip_container_tagged(c, (const uint8_t *)s1, (const uint8_t *)s1 + sizeof s1 - 1, 100, &next,
                                              &err, &tag),
                     JS_OK);
    assert_null(tag);
    /* many other values: ours is replaced, then put in again untagged */
    char other[64];
    for (int i = 0; i < 200; i++) {
        int n = snprintf(other, sizeof other, "[[%d, %d], [3, 4]], \"next\": 1, \"more\": 2", i, i * 7);
        assert_int_equal(js_skip_container_tagged(c, (const uint8_t *)other, (const uint8_t *)other + n, 100, &next,
                                                  &err, &tag),
                         JS_OK);
    }
    assert_int_equal(js_skip_container_tagged(c, p, end, 100, &next, &err, &tag), JS_OK);
    assert_non_null(tag);
    assert_true(*tag == 0);
    js_skip_cache_free(c);
}

static void test_skip_depth(void **state)
{
    (void)state;
    /* exact limits: depth 3 takes three levels, not four */
    size_t at;
    assert_int_equal(skip_over("{\"a\": [{}]}", 3, &at), JS_OK);
    assert_int_equal(skip_over("{\"a\": [{\"b\": []}]}", 3, &at), JS_ERR);
    assert_int_equal(at, 13);
    assert_int_equal(skip_over("[[[1]]]", 3, &at), JS_OK);
    assert_int_equal(skip_over("[[[[1]]]]", 3, &at), JS_ERR);
    assert_int_equal(at, 3);
    assert_int_equal(skip_over("1", 0, &at), JS_OK);
    assert_int_equal(skip_over("[]", 0, &at), JS_ERR);
    /* the skipper's own limit: 512 levels */
    char *s = malloc(1100);
    memset(s, '[', 512);
    memset(s + 512, ']', 512);
    s[1024] = 0;
    assert_int_equal(skip_over(s, 100000, &at), JS_OK);
    assert_int_equal(at, 1024);
    memset(s, '[', 513);
    memset(s + 513, ']', 513);
    s[1026] = 0;
    assert_int_equal(skip_over(s, 100000, &at), JS_ERR);
    assert_int_equal(at, 512);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decimal_forms), cmocka_unit_test(test_decimal_values),
        cmocka_unit_test(test_digits_runs),   cmocka_unit_test(test_skip_valid),
        cmocka_unit_test(test_skip_invalid),  cmocka_unit_test(test_skip_numbers), cmocka_unit_test(test_skip_cache),  cmocka_unit_test(test_skip_tags),
        cmocka_unit_test(test_skip_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
