/* One line: colour codes dropped, the format recognised, and the shared
 * scanners (numbers, keys, step numbers). docs/METRICS.md, "trainprof log". */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log_internal.h"

const char *tprof_log_format_name(tprof_log_format f)
{
    static const char *const names[] = { "none", "json", "dict", "tqdm", "llm.c", "key-value" };
    return (unsigned)f < TPROF_LOG_NFORMATS ? names[f] : "?";
}

int lg_space(int c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

int lg_keychar(int c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '/' || c == '-';
}

static int word_at(const char *s, size_t n, size_t i, const char *w)
{
    size_t k = strlen(w);
    return i + k <= n && !strncasecmp(s + i, w, k);
}

size_t lg_number(const char *s, size_t n, double *v)
{
    size_t i = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    static const char *const words[] = { "infinity", "inf", "nan" };
    for (size_t w = 0; w < 3; w++) {
        size_t k = strlen(words[w]);
        if (word_at(s, n, i, words[w]) && !(i + k < n && isalnum((unsigned char)s[i + k]))) {
            double x = w == 2 ? NAN : INFINITY;
            *v = s[0] == '-' ? -x : x;
            return i + k;
        }
    }
    size_t d0 = i;
    while (i < n && isdigit((unsigned char)s[i])) i++;
    size_t nd = i - d0;
    if (i < n && s[i] == '.') {
        size_t f0 = ++i;
        while (i < n && isdigit((unsigned char)s[i])) i++;
        nd += i - f0;
        if (i - f0 == 0 && nd == 0) return 0;
    }
    if (nd == 0) return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t e = i + 1;
        if (e < n && (s[e] == '+' || s[e] == '-')) e++;
        size_t e0 = e;
        while (e < n && isdigit((unsigned char)s[e])) e++;
        if (e > e0) i = e;
    }
    if (i < n && (s[i] == 'x' || s[i] == 'X') && i == d0 + 1 && s[d0] == '0') return 0; /* hex */
    char buf[128];
    if (i >= sizeof buf) return 0;
    memcpy(buf, s, i);
    buf[i] = 0;
    *v = strtod(buf, NULL);
    return i;
}

static const char *const step_keys[] = { "step", "global_step", "_step", "iter", "iteration", "train/global_step" };

int lg_is_step_key(const char *k, size_t n)
{
    for (size_t i = 0; i < sizeof step_keys / sizeof *step_keys; i++)
        if (strlen(step_keys[i]) == n && !strncasecmp(k, step_keys[i], n)) return 1;
    return 0;
}

void lg_add(tprof_log_record *r, const char *key, size_t klen, double v)
{
    while (klen && lg_space(key[0])) key++, klen--;
    while (klen && lg_space(key[klen - 1])) klen--;
    if (!klen) return;
    if (lg_is_step_key(key, klen)) {
        if (isfinite(v) && v >= 0 && v < 9e18 && v == floor(v)) r->step = (int64_t)v;
        return;
    }
    if (klen >= TPROF_LOG_KEY_MAX) klen = TPROF_LOG_KEY_MAX - 1;
    size_t i = 0;
    while (i < r->n && (strlen(r->kv[i].key) != klen || memcmp(r->kv[i].key, key, klen))) i++;
    if (i == r->n) {
        if (r->n == TPROF_LOG_MAX_KV) return;
        r->n++;
        memcpy(r->kv[i].key, key, klen);
        r->kv[i].key[klen] = 0;
    }
    r->kv[i].value = v; /* a key repeated in one line: the last value */
}

int lg_find_step(const char *s, size_t n, int64_t *step)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && (lg_keychar(s[i - 1]))) continue;
        for (size_t k = 0; k < sizeof step_keys / sizeof *step_keys; k++) {
            size_t kl = strlen(step_keys[k]);
            if (!word_at(s, n, i, step_keys[k])) continue;
            size_t j = i + kl;
            if (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_')) continue; /* steps_per_epoch */
            while (j < n && lg_space(s[j])) j++;
            if (j < n && (s[j] == '=' || s[j] == ':' || s[j] == '#')) j++;
            while (j < n && lg_space(s[j])) j++;
            size_t d = j;
            int64_t v = 0;
            while (j < n && isdigit((unsigned char)s[j]) && v < 100000000000000000LL) v = v * 10 + (s[j++] - '0');
            if (j == d || (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_'))) continue;
            if (j + 1 < n && s[j] == '.' && isdigit((unsigned char)s[j + 1])) continue; /* "step 1.5" */
            *step = v;
            return 1;
        }
    }
    return 0;
}

/* Drops ESC [ ... final-byte sequences (colours, cursor moves) and other
 * ESC pairs; returns the new length. */
static size_t strip_ansi(char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != 0x1b) {
            s[o++] = s[i];
            continue;
        }
        if (i + 1 < n && s[i + 1] == '[') {
            i += 2;
            while (i < n && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e)) i++;
        } else if (i + 1 < n) {
            i++;
        }
    }
    return o;
}

size_t tprof_log_parse_line(const char *line, size_t len, tprof_log_record *out)
{
    return lg_parse_line(line, len, out, NULL);
}

size_t lg_parse_line(const char *line, size_t len, tprof_log_record *out, lg_info *info)
{
    if (info) *info = (lg_info){ 0 };
    out->format = TPROF_LOG_NONE;
    out->step = -1;
    out->n = 0;
    char stackbuf[4096], *buf = stackbuf;
    if (memchr(line, 0x1b, len)) {
        if (len > sizeof stackbuf && !(buf = malloc(len))) return 0;
        memcpy(buf, line, len);
        len = strip_ansi(buf, len);
        line = buf;
    }
    /* the most specific formats first; key-value takes whatever is left */
    if (!lg_parse_dict(line, len, out, info) && !lg_parse_tqdm(line, len, out) && !lg_parse_llmc(line, len, out)) {
        lg_parse_kv(line, len, out);
        /* key-value pairs are metrics only in a step record, a line that
         * names its step: a config dump ("lr: 0.0001", "hidden_size = 4096",
         * argparse's Namespace(...)), a banner or random bytes ("U=8") is not */
        if (out->step < 0) out->n = 0;
        if (out->n) out->format = TPROF_LOG_KV;
    }
    if (buf != stackbuf) free(buf);
    return out->n;
}
