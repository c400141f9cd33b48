/* Generic lines: "key: value" and "key=value" anywhere, a step from
 * "step N" / "iter N" / ..., and in lines cut by " | " (Megatron) keys with
 * spaces: "lm loss: 2.3E+00" -> lm_loss. A unit right after a number joins
 * the key: "time=1.2s" -> time(s), unless the key already has one. */
#include <ctype.h>
#include <string.h>

#include "log_internal.h"

/* The number and unit at P; returns the bytes taken, 0 when it is not a
 * value that ends cleanly (a clock "12:00:01", a date, a version "1.2.3"). */
static size_t value_at(const char *p, size_t n, double *v, const char **unit, size_t *ulen)
{
    size_t k = lg_number(p, n, v);
    if (!k) return 0;
    size_t u = k;
    while (u < n && u - k < 8 && (isalpha((unsigned char)p[u]) || p[u] == '%' || (p[u] == '/' && u > k))) u++;
    int sentence_end = u < n && p[u] == '.' && (u + 1 == n || lg_space(p[u + 1]));
    if (u < n && !sentence_end &&
        (isalnum((unsigned char)p[u]) || p[u] == '_' || p[u] == ':' || p[u] == '.' || p[u] == '-' || p[u] == '/'))
        return 0;
    *unit = p + k;
    *ulen = u - k;
    return u;
}

static void add_unit(tprof_log_record *r, const char *key, size_t kl, const char *unit, size_t ul, double v)
{
    char buf[TPROF_LOG_KEY_MAX];
    if (kl >= sizeof buf - 16) kl = sizeof buf - 16;
    size_t l = 0;
    for (size_t i = 0; i < kl; i++) buf[l++] = lg_space(key[i]) ? '_' : key[i];
    while (l && buf[l - 1] == '_') l--;
    if (ul && !memchr(key, '(', kl) && ul < 10) {
        buf[l++] = '(';
        memcpy(buf + l, unit, ul);
        l += ul;
        buf[l++] = ')';
    }
    lg_add(r, buf, l, v);
}

/* A key: key characters and (unit) groups, e.g. tokens_per_second(M). */
static size_t key_at(const char *s, size_t n, size_t i)
{
    size_t j = i;
    while (j < n) {
        if (lg_keychar(s[j])) j++;
        else if (s[j] == '(' && j > i) {
            size_t c = j + 1;
            while (c < n && c - j < 16 && s[c] != ')' && !lg_space(s[c]) && s[c] != '(') c++;
            if (c < n && s[c] == ')') j = c + 1;
            else break;
        } else
            break;
    }
    while (j > i && (s[j - 1] == '.' || s[j - 1] == '-' || s[j - 1] == '/')) j--;
    return j - i;
}

static void scan(const char *s, size_t n, tprof_log_record *r)
{
    size_t i = 0;
    while (i < n) {
        int start = (isalpha((unsigned char)s[i]) || s[i] == '_') && (i == 0 || !lg_keychar(s[i - 1]));
        if (!start) {
            i++;
            continue;
        }
        size_t kl = key_at(s, n, i);
        size_t j = i + kl;
        while (j < n && lg_space(s[j])) j++;
        if (j < n && (s[j] == '=' || (s[j] == ':' && !(j + 1 < n && (s[j + 1] == ':' || s[j + 1] == '/'))))) {
            j++;
            while (j < n && lg_space(s[j])) j++;
            double v;
            const char *unit;
            size_t ul, vl = value_at(s + j, n - j, &v, &unit, &ul);
            if (vl) {
                add_unit(r, s + i, kl, unit, ul, v);
                i = j + vl;
                continue;
            }
        }
        i += kl ? kl : 1;
    }
}

/* A " | " segment "words with spaces: value"; 1 when it was one. */
static int spaced(const char *p, size_t n, tprof_log_record *r)
{
    while (n && lg_space(*p)) p++, n--;
    const char *sep = NULL;
    for (size_t i = 0; i < n; i++)
        if (p[i] == ':' || p[i] == '=') {
            sep = p + i;
            break;
        }
    if (!sep || sep == p || !isalpha((unsigned char)*p)) return 0;
    size_t kl = (size_t)(sep - p);
    for (size_t i = 0; i < kl; i++)
        if (!(lg_keychar(p[i]) || lg_space(p[i]) || p[i] == '(' || p[i] == ')')) return 0;
    while (kl && lg_space(p[kl - 1])) kl--;
    /* a word of digits is a value, not part of a key: "step 2 loss=2" is a step and a metric */
    for (size_t i = 0; i < kl;) {
        size_t w = i;
        while (w < kl && !lg_space(p[w])) w++;
        int digits = w > i;
        for (size_t k = i; k < w; k++) digits &= isdigit((unsigned char)p[k]) != 0;
        if (digits) return 0;
        i = w;
        while (i < kl && lg_space(p[i])) i++;
    }
    size_t j = (size_t)(sep - p) + 1;
    while (j < n && lg_space(p[j])) j++;
    double v;
    const char *unit;
    size_t ul, vl = value_at(p + j, n - j, &v, &unit, &ul);
    if (!vl) return 0;
    size_t rest = j + vl;
    while (rest < n && lg_space(p[rest])) rest++;
    if (rest != n) return 0;
    /* "elapsed time per iteration (ms)" -> elapsed_time_per_iteration(ms) */
    char key[TPROF_LOG_KEY_MAX];
    size_t l = 0;
    for (size_t i = 0; i < kl && l < sizeof key - 1; i++) {
        if (lg_space(p[i]) && (i + 1 < kl && p[i + 1] == '(')) continue;
        key[l++] = lg_space(p[i]) ? '_' : p[i];
    }
    add_unit(r, key, l, unit, ul, v);
    return 1;
}

void lg_parse_kv(const char *s, size_t n, tprof_log_record *r)
{
    int64_t st;
    if (r->step < 0 && lg_find_step(s, n, &st)) r->step = st;
    int bars = 0;
    for (size_t i = 0; i + 2 < n; i++) bars += s[i] == ' ' && s[i + 1] == '|' && s[i + 2] == ' ';
    if (!bars) {
        scan(s, n, r);
        return;
    }
    const char *p = s, *end = s + n;
    while (p < end) {
        const char *q = memchr(p, '|', (size_t)(end - p));
        if (!q) q = end;
        if (!spaced(p, (size_t)(q - p), r)) scan(p, (size_t)(q - p), r);
        p = q + 1;
    }
}
