/* Exact decimal parsing of JSON number text (no detour through double). */
#include "trainprof/json.h"
#include "trainprof/error.h"

#include <stdlib.h>
#include <string.h>

/* The common case: [-]digits[.digits], at most 18 digits, 0 <= scale <= 6 and
 * no more fraction digits than scale. Returns 0 when it handled the text. */
static int scaled_fast(const char *s, size_t len, int scale, int64_t *out)
{
    static const int64_t pow10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000 };
    if (len == 0 || len > 24 || scale < 0 || scale > 6) return -1;
    const char *p = s, *end = s + len;
    int neg = *p == '-';
    p += neg;
    if (p == end) return -1;
    int64_t v = 0;
    int ndig = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++)
        if (++ndig > 18) return -1; /* might not fit: the general parser decides */
        else v = v * 10 + (*p - '0');
    int frac = 0;
    if (p < end && *p == '.') {
        for (p++; p < end && *p >= '0' && *p <= '9'; p++, frac++)
            if (++ndig > 18) return -1;
            else v = v * 10 + (*p - '0');
        if (frac == 0) return -1;
    }
    if (p != end || ndig == 0 || frac > scale) return -1;
    if (__builtin_mul_overflow(v, pow10[scale - frac], &v)) return -1;
    *out = neg ? -v : v;
    return 0;
}

/* The general case. *INEXACT tells whether nonzero digits were rounded off. */
static int scaled_general(const char *s, size_t len, int scale, int64_t *out, int *inexact)
{
    const char *p = s, *end = s + len;
    int neg = 0;
    *inexact = 0;
    if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
    /* significant digits of the mantissa (decimal point removed) */
    const char *first = NULL;
    size_t ndig = 0;
    int64_t exp10 = scale; /* value = D * 10^exp10 */
    int seen = 0, dot = 0;
    for (; p < end; p++) {
        char c = *p;
        if (c == '.') {
            if (dot) return TPROF_EFORMAT;
            dot = 1;
            continue;
        }
        if (c < '0' || c > '9') break;
        seen = 1;
        if (dot) exp10--;
        if (ndig == 0 && c == '0') continue;
        if (!first) first = p;
        ndig++;
    }
    if (!seen) return TPROF_EFORMAT;
    const char *mant_end = p;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (p == end) return TPROF_EFORMAT;
        int64_t e = 0;
        for (; p < end; p++) {
            if (*p < '0' || *p > '9') return TPROF_EFORMAT;
            if (e < 1000000) e = e * 10 + (*p - '0');
        }
        exp10 += eneg ? -e : e;
    }
    if (p != end) return TPROF_EFORMAT;
    if (ndig == 0) {
        *out = 0;
        return 0;
    }
    /* the integer result has k digits; digits after those are rounded off */
    int64_t k = (int64_t)ndig + exp10;
    if (k > 19) return TPROF_ELIMIT;
    uint64_t acc = 0;
    int64_t i = 0;
    int round_digit = 0;
    for (const char *q = first; q < mant_end; q++) {
        if (*q == '.') continue;
        int d = *q - '0';
        if (i < k) {
            if (__builtin_mul_overflow(acc, 10u, &acc) || __builtin_add_overflow(acc, (uint64_t)d, &acc))
                return TPROF_ELIMIT;
        } else {
            if (i == k) round_digit = d;
            if (d) *inexact = 1;
        }
        i++;
    }
    for (; i < k; i++) /* the exponent moved the point past the digits */
        if (__builtin_mul_overflow(acc, 10u, &acc)) return TPROF_ELIMIT;
    if (k < 0) round_digit = 0; /* below 0.1 units: rounds to 0 */
    if (round_digit >= 5) acc++;
    if (acc > (uint64_t)INT64_MAX + (uint64_t)neg) return TPROF_ELIMIT;
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 0;
}

int tprof_json_parse_scaled(const char *s, size_t len, int scale, int64_t *out)
{
    if (scaled_fast(s, len, scale, out) == 0) return 0;
    int inexact;
    return scaled_general(s, len, scale, out, &inexact);
}

int tprof_json_parse_int(const char *s, size_t len, int64_t *out)
{
    if (scaled_fast(s, len, 0, out) == 0) return 0;
    int inexact;
    int64_t v;
    int rc = scaled_general(s, len, 0, &v, &inexact);
    if (rc) return rc;
    if (inexact) return TPROF_EFORMAT; /* a fraction: not an integer */
    *out = v;
    return 0;
}

double tprof_json_parse_double(const char *s, size_t len)
{
    char small[64];
    char *b = len < sizeof small ? small : malloc(len + 1);
    if (!b) return 0.0;
    memcpy(b, s, len);
    b[len] = 0;
    double d = strtod(b, NULL);
    if (b != small) free(b);
    return d;
}
