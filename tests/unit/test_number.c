/* Unit tests of the exact number helpers (lib/json/number.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/json.h"

typedef struct {
    const char *text;
    int scale;
    int rc;
    int64_t value; /* checked when rc == 0 */
} scaled_case;

/* Checks every case, then fails once listing all mismatches. */
static void run_scaled(const scaled_case *c, size_t n)
{
    char msg[2048] = "";
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t v = 0x5a5a5a5a;
        int rc = tprof_json_parse_scaled(c[i].text, strlen(c[i].text), c[i].scale, &v);
        if (rc != c[i].rc || (rc == 0 && v != c[i].value)) {
            size_t l = strlen(msg);
            snprintf(msg + l, sizeof msg - l, "\n  parse_scaled(\"%s\", %d): rc %d value %lld, expected rc %d value %lld",
                     c[i].text, c[i].scale, rc, rc ? 0LL : (long long)v, c[i].rc, (long long)c[i].value);
            bad++;
        }
    }
    if (bad) fail_msg("%zu case(s) wrong:%s", bad, msg);
}

static void test_scaled_microseconds(void **state)
{
    (void)state;
    static const scaled_case c[] = {
        { "1694128201428473", 3, 0, 1694128201428473000LL },
        { "1694128201428473.125", 3, 0, 1694128201428473125LL },
        { "1704161511420306.491", 3, 0, 1704161511420306491LL },
        { "12.345", 3, 0, 12345 },
        { "12.77012757357446", 3, 0, 12770 },
        { "0", 3, 0, 0 },
        { "-0", 3, 0, 0 },
        { "0.000", 3, 0, 0 },
        { "1", 3, 0, 1000 },
        { "100.5", 3, 0, 100500 },
        { "-1.5", 3, 0, -1500 },
        { "1.5e3", 3, 0, 1500000 },
        { "1.5E+3", 3, 0, 1500000 },
        { "1e-3", 3, 0, 1 },
        { "-1e-3", 3, 0, -1 },
        { "0.1e1", 3, 0, 1000 },
        { "12345e-2", 3, 0, 123450 },
        { "000012.5", 3, 0, 12500 },
        { "0.000001", 6, 0, 1 },
        { "7", 0, 0, 7 },
    };
    run_scaled(c, sizeof c / sizeof c[0]);
}

static void test_scaled_rounding(void **state)
{
    (void)state;
    static const scaled_case c[] = {
        { "0.0005", 3, 0, 1 },   /* a tie: away from zero */
        { "0.0004", 3, 0, 0 },
        { "0.00049999999", 3, 0, 0 },
        { "0.0015", 3, 0, 2 },
        { "0.0025", 3, 0, 3 },   /* ties away from zero, not to even */
        { "-0.0005", 3, 0, -1 },
        { "-0.0025", 3, 0, -3 },
        { "-0.0004", 3, 0, 0 },
        { "0.00051", 3, 0, 1 },
        { "1694128201428473.1255", 3, 0, 1694128201428473126LL },
        { "1694128201428473.1254999", 3, 0, 1694128201428473125LL },
        { "2.5", 0, 0, 3 },
        { "-2.5", 0, 0, -3 },
        { "0.5", 0, 0, 1 },
        { "0.4999", 0, 0, 0 },
        { "9.5", 0, 0, 10 },
        { "99.96", 1, 0, 1000 },
        { "0.00005", 3, 0, 0 },  /* below half a unit */
        { "5e-4", 3, 0, 1 },
        { "4e-4", 3, 0, 0 },
        { "1e-400", 3, 0, 0 },
        { "123456789012345678901234567890e-20", 0, 0, 1234567890 },
        { "123456789012345678901234567890e-21", 0, 0, 123456789 },
        { "0.000000000000000000000000000001234", 3, 0, 0 },
    };
    run_scaled(c, sizeof c / sizeof c[0]);
}

static void test_scaled_limits(void **state)
{
    (void)state;
    static const scaled_case c[] = {
        { "9223372036854775807", 0, 0, INT64_MAX },
        { "9223372036854775808", 0, TPROF_ELIMIT, 0 },
        { "-9223372036854775808", 0, 0, INT64_MIN },
        { "-9223372036854775809", 0, TPROF_ELIMIT, 0 },
        { "9223372036854775.807", 3, 0, INT64_MAX },
        { "9223372036854775.808", 3, TPROF_ELIMIT, 0 },
        { "9223372036854775.8075", 3, TPROF_ELIMIT, 0 },  /* rounds up past the limit */
        { "9223372036854775.8074", 3, 0, INT64_MAX },
        { "9223372036854775.8065", 3, 0, INT64_MAX },     /* ...806.5 rounds to ...807 */
        { "-9223372036854775.808", 3, 0, INT64_MIN },
        { "9223372036854775806.5", 0, 0, INT64_MAX },
        { "9223372036854775807.5", 0, TPROF_ELIMIT, 0 },
        { "-9223372036854775807.5", 0, 0, INT64_MIN },
        { "9999999999999999999", 0, TPROF_ELIMIT, 0 },
        { "99999999999999999999", 0, TPROF_ELIMIT, 0 },
        { "18446744073709551616", 0, TPROF_ELIMIT, 0 },
        { "1e18", 0, 0, 1000000000000000000LL },
        { "1e19", 0, TPROF_ELIMIT, 0 },
        { "10e18", 0, TPROF_ELIMIT, 0 },
        { "0.1e19", 0, 0, 1000000000000000000LL },
        { "1e30", 3, TPROF_ELIMIT, 0 },
        { "-1e30", 3, TPROF_ELIMIT, 0 },
        { "1e9999999999", 0, TPROF_ELIMIT, 0 },
        { "0e9999999999", 0, 0, 0 },
        { "1e16", 3, TPROF_ELIMIT, 0 }, /* 1e16 us is 1e19 ns */
        { "9.2e15", 3, 0, 9200000000000000000LL },
    };
    run_scaled(c, sizeof c / sizeof c[0]);
}

static void test_scaled_syntax(void **state)
{
    (void)state;
    static const char *const bad[] = { "", "-", "+", ".", "abc", "1x", "1.2.3", "1e", "1e+", "1e-", "e5",
                                       "--1", "1 ", " 1", "1e5.5", "0x10", "1,5" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v;
        int rc = tprof_json_parse_scaled(bad[i], strlen(bad[i]), 3, &v);
        if (rc != TPROF_EFORMAT) fail_msg("parse_scaled(\"%s\"): rc %d, expected TPROF_EFORMAT", bad[i], rc);
    }
    /* only LEN bytes are read */
    int64_t v;
    assert_int_equal(tprof_json_parse_scaled("12.5xyz", 4, 3, &v), 0);
    assert_int_equal(v, 12500);
    assert_int_equal(tprof_json_parse_scaled("1234", 2, 0, &v), 0);
    assert_int_equal(v, 12);
}

typedef struct {
    const char *text;
    int rc;
    int64_t value;
} int_case;

static void run_int(const int_case *c, size_t n)
{
    char msg[2048] = "";
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t v = 0x5a5a5a5a;
        int rc = tprof_json_parse_int(c[i].text, strlen(c[i].text), &v);
        if (rc != c[i].rc || (rc == 0 && v != c[i].value)) {
            size_t l = strlen(msg);
            snprintf(msg + l, sizeof msg - l, "\n  parse_int(\"%s\"): rc %d value %lld, expected rc %d value %lld",
                     c[i].text, rc, rc ? 0LL : (long long)v, c[i].rc, (long long)c[i].value);
            bad++;
        }
    }
    if (bad) fail_msg("%zu case(s) wrong:%s", bad, msg);
}

static void test_int_plain(void **state)
{
    (void)state;
    static const int_case c[] = {
        { "0", 0, 0 },
        { "-0", 0, 0 },
        { "42", 0, 42 },
        { "-42", 0, -42 },
        { "9223372036854775807", 0, INT64_MAX },
        { "-9223372036854775808", 0, INT64_MIN },
        { "9223372036854775808", TPROF_ELIMIT, 0 },
        { "-9223372036854775809", TPROF_ELIMIT, 0 },
        { "99999999999999999999", TPROF_ELIMIT, 0 },
        { "184467440737095516160", TPROF_ELIMIT, 0 },
        { "", TPROF_EFORMAT, 0 },
        { "-", TPROF_EFORMAT, 0 },
        { "12a", TPROF_EFORMAT, 0 },
        { "a12", TPROF_EFORMAT, 0 },
        { " 1", TPROF_EFORMAT, 0 },
        { "1-", TPROF_EFORMAT, 0 },
    };
    run_int(c, sizeof c / sizeof c[0]);
}

static void test_int_integral_forms(void **state)
{
    (void)state;
    static const int_case c[] = {
        { "3.0", 0, 3 },
        { "-2.000", 0, -2 },
        { "1e3", 0, 1000 },
        { "1E3", 0, 1000 },
        { "1.5e1", 0, 15 },
        { "2500e-2", 0, 25 },
        { "0.0", 0, 0 },
        { "1e30", TPROF_ELIMIT, 0 },
    };
    run_int(c, sizeof c / sizeof c[0]);
}

static void test_int_refuses_fractions(void **state)
{
    (void)state;
    static const int_case c[] = {
        { "1.5", TPROF_EFORMAT, 0 },
        { "0.5", TPROF_EFORMAT, 0 },
        { "2.5", TPROF_EFORMAT, 0 },
        { "-0.5", TPROF_EFORMAT, 0 },
        { "3.25", TPROF_EFORMAT, 0 },
        { "1e-1", TPROF_EFORMAT, 0 },
        { "15e-1", TPROF_EFORMAT, 0 },
        { "0.001", TPROF_EFORMAT, 0 },
    };
    run_int(c, sizeof c / sizeof c[0]);
}

/* Fractions too small to show in a double are still fractions. */
static void test_int_refuses_tiny_fractions(void **state)
{
    (void)state;
    static const int_case c[] = {
        { "1.0000000000000000001", TPROF_EFORMAT, 0 },
        { "1e-400", TPROF_EFORMAT, 0 },
        { "9007199254740993.5", TPROF_EFORMAT, 0 },
        { "123456789012345678.9", TPROF_EFORMAT, 0 },
    };
    run_int(c, sizeof c / sizeof c[0]);
}

static void test_parse_double(void **state)
{
    (void)state;
    assert_true(tprof_json_parse_double("1.5", 3) == 1.5);
    assert_true(tprof_json_parse_double("-2e3", 4) == -2000.0);
    assert_true(tprof_json_parse_double("0.25xyz", 4) == 0.25);
    /* longer than any small buffer */
    char big[200];
    memset(big, '0', sizeof big);
    big[0] = '0';
    big[1] = '.';
    big[150] = '5';
    big[151] = 'e';
    big[152] = '1';
    big[153] = '5';
    big[154] = '0';
    /* 0.(148 zeros)5e150 = 5e-149 * 1e150 = 50 */
    double d = tprof_json_parse_double(big, 155);
    assert_true(d > 49.999999 && d < 50.000001);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scaled_microseconds),
        cmocka_unit_test(test_scaled_rounding),
        cmocka_unit_test(test_scaled_syntax),
        cmocka_unit_test(test_int_plain),
        cmocka_unit_test(test_int_integral_forms),
        cmocka_unit_test(test_int_refuses_fractions),
        cmocka_unit_test(test_int_refuses_tiny_fractions),
        cmocka_unit_test(test_parse_double),
        cmocka_unit_test(test_scaled_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
