/* Exact decimal parsing of JSON number text (no detour through double). */
#include "trainprof/json.h"
#include "trainprof/error.h"

#include <stdlib.h>
#include <string.h>

int tprof_json_parse_scaled(const char *s, size_t len, int scale, int64_t *out)
{
    const char *p = s, *end = s + len;
    int neg = 0;
    if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
    /* digits of the mantissa, decimal point removed; leading zeros skipped */
    const char *dig = NULL;
    size_t ndig = 0;      /* significant digits seen */
    int64_t exp10 = scale; /* value = D * 10^exp10 */
    int seen = 0, dot = 0;
    const char *first = NULL;
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
    dig = first;
    if (ndig == 0) { *out = 0; return 0; }
    /* k = number of digits of the integer result */
    int64_t k = (int64_t)ndig + exp10;
    if (k > 19) return TPROF_ELIMIT;
    uint64_t acc = 0;
    int64_t taken = 0;
    int round_digit = 0;
    for (const char *q = dig; q < mant_end; q++) {
        if (*q == '.') continue;
        if (taken < k) {
            uint64_t d = (uint64_t)(*q - '0');
            if (__builtin_mul_overflow(acc, 10u, &acc) || __builtin_add_overflow(acc, d, &acc))
                return TPROF_ELIMIT;
            taken++;
        } else {
            round_digit = *q - '0';
            break;
        }
    }
    for (; taken < k; taken++) /* pad with zeros: the exponent moved the point right */
        if (__builtin_mul_overflow(acc, 10u, &acc)) return TPROF_ELIMIT;
    if (k < 0) round_digit = 0;
    if (round_digit >= 5) acc++;
    if (acc > (uint64_t)INT64_MAX + (uint64_t)neg) return TPROF_ELIMIT;
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 0;
}

int tprof_json_parse_int(const char *s, size_t len, int64_t *out)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') {
            /* accept integral values written with a fraction or exponent */
            int64_t v;
            int rc = tprof_json_parse_scaled(s, len, 0, &v);
            if (rc) return rc;
            double d = tprof_json_parse_double(s, len);
            if (d != (double)v && (d - (double)v > 0.5 || (double)v - d > 0.5)) return TPROF_EFORMAT;
            if (d != (double)v) return TPROF_EFORMAT;
            *out = v;
            return 0;
        }
    const char *p = s, *end = s + len;
    int neg = 0;
    if (p < end && *p == '-') { neg = 1; p++; }
    if (p == end) return TPROF_EFORMAT;
    uint64_t acc = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return TPROF_EFORMAT;
        if (__builtin_mul_overflow(acc, 10u, &acc) ||
            __builtin_add_overflow(acc, (uint64_t)(*p - '0'), &acc))
            return TPROF_ELIMIT;
    }
    if (acc > (uint64_t)INT64_MAX + (uint64_t)neg) return TPROF_ELIMIT;
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
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
