/* llm.c step lines:
 *   step    5/74 | loss 10.985962 (+0.00z)| norm 15.2573 (+0.00z)| lr 6.00e-06 | 1234.56 ms | 45.1% bf16 MFU | 123456 tok/s
 * "name value" segments keep their name (spaces become '_'); "value unit"
 * segments are named by their unit: ms -> step_time(ms), % ... MFU -> mfu
 * (as a ratio, like VeOmni's), tok/s -> tokens_per_second. */
#include <ctype.h>
#include <string.h>

#include "log_internal.h"

static void segment(const char *p, size_t len, tprof_log_record *r)
{
    while (len && (lg_space(*p) || *p == '(')) p++, len--;
    while (len && (lg_space(p[len - 1]) || p[len - 1] == ')')) len--;
    if (!len) return;
    double v;
    size_t nl = lg_number(p, len, &v);
    if (nl) { /* value first: the unit names it */
        const char *u = p + nl;
        size_t ul = len - nl;
        int pct = ul && *u == '%';
        while (ul && (lg_space(*u) || *u == '%')) u++, ul--;
        if (ul >= 3 && !memcmp(u + ul - 3, "MFU", 3)) lg_add(r, "mfu", 3, pct ? v / 100 : v);
        else if (ul == 2 && !memcmp(u, "ms", 2)) lg_add(r, "step_time(ms)", 13, v);
        else if (ul == 1 && *u == 's') lg_add(r, "step_time(s)", 12, v);
        else if (ul == 5 && !memcmp(u, "tok/s", 5)) lg_add(r, "tokens_per_second", 17, v);
        else if (ul && ul < 64) {
            char key[64];
            for (size_t i = 0; i < ul; i++) key[i] = lg_space(u[i]) ? '_' : u[i];
            lg_add(r, key, ul, v);
        }
        return;
    }
    /* name first: the value is the first number after a space */
    for (size_t i = 1; i < len; i++) {
        if (!lg_space(p[i - 1])) continue;
        if ((nl = lg_number(p + i, len - i, &v)) == 0) continue;
        size_t kl = i;
        while (kl && lg_space(p[kl - 1])) kl--;
        if (kl == 0 || kl >= 64) return;
        char key[64];
        for (size_t k = 0; k < kl; k++) key[k] = lg_space(p[k]) ? '_' : p[k];
        lg_add(r, key, kl, v);
        return;
    }
}

int lg_parse_llmc(const char *s, size_t n, tprof_log_record *r)
{
    size_t i = 0;
    while (i < n && lg_space(s[i])) i++;
    if (n - i < 5 || memcmp(s + i, "step", 4) || !lg_space(s[i + 4])) return 0;
    i += 4;
    while (i < n && lg_space(s[i])) i++;
    int64_t step = 0;
    size_t d = i;
    while (i < n && isdigit((unsigned char)s[i]) && step < 100000000000000000LL) step = step * 10 + (s[i++] - '0');
    if (i == d || i >= n || s[i] != '/') return 0;
    const char *bar = memchr(s + i, '|', n - i);
    if (!bar) return 0;
    r->n = 0;
    const char *p = bar + 1, *end = s + n;
    while (p < end) {
        const char *q = memchr(p, '|', (size_t)(end - p));
        if (!q) q = end;
        segment(p, (size_t)(q - p), r);
        p = q + 1;
    }
    r->step = step;
    r->format = TPROF_LOG_LLMC;
    return 1;
}
