/* Metric dicts: a JSON line, or a {...} after a prefix in JSON or Python's
 * repr ('single quotes', nan, inf, None, True). Numbers are kept, nested
 * dicts flattened as "outer/inner", strings, booleans and lists skipped.
 * Dicts, lists and tuples nest at most TPROF_LOG_MAX_DEPTH deep: the parser
 * recurses once per level, and a deeper value fails the dict (lg_info says
 * why) instead of overflowing the stack on a line of a million '['. */
#include <string.h>

#include "log_internal.h"

typedef struct {
    const char *s;
    size_t n, i;
    tprof_log_record *r;
    int depth; /* containers open */
    int deep;  /* the depth limit was hit */
} dp;

static int enter(dp *p)
{
    if (p->depth >= TPROF_LOG_MAX_DEPTH) {
        p->deep = 1;
        return 0;
    }
    p->depth++;
    return 1;
}

static void ws(dp *p)
{
    while (p->i < p->n && (lg_space(p->s[p->i]) || p->s[p->i] == '\r')) p->i++;
}

/* A quoted string; its raw text in [*a, *a + *len). */
static int str(dp *p, const char **a, size_t *len)
{
    char q = p->s[p->i];
    if (q != '"' && q != '\'') return 0;
    size_t st = ++p->i;
    while (p->i < p->n && p->s[p->i] != q) p->i += p->s[p->i] == '\\' ? 2 : 1;
    if (p->i >= p->n) return 0;
    *a = p->s + st;
    *len = p->i - st;
    p->i++;
    return 1;
}

static int value(dp *p, const char *key, size_t klen);

/* A list or tuple, skipped (its numbers are not metrics of one step). */
static int skip_seq(dp *p)
{
    char close = p->s[p->i] == '[' ? ']' : ')';
    if (!enter(p)) return 0;
    p->i++;
    for (;;) {
        ws(p);
        if (p->i >= p->n) return 0;
        if (p->s[p->i] == close) {
            p->i++;
            p->depth--;
            return 1;
        }
        if (!value(p, NULL, 0)) return 0;
        ws(p);
        if (p->i < p->n && p->s[p->i] == ',') p->i++;
        else if (!(p->i < p->n && p->s[p->i] == close)) return 0;
    }
}

static int object(dp *p, const char *prefix, size_t plen)
{
    if (!enter(p)) return 0;
    p->i++; /* '{' */
    for (int first = 1;; first = 0) {
        ws(p);
        if (p->i >= p->n) return 0;
        if (p->s[p->i] == '}') {
            p->i++;
            p->depth--;
            return 1;
        }
        if (!first) {
            if (p->s[p->i] != ',') return 0;
            p->i++;
            ws(p);
            if (p->i < p->n && p->s[p->i] == '}') continue; /* trailing comma */
        }
        const char *k;
        size_t kl;
        if (!str(p, &k, &kl)) return 0;
        ws(p);
        if (p->i >= p->n || p->s[p->i] != ':') return 0;
        p->i++;
        ws(p);
        char key[TPROF_LOG_KEY_MAX];
        size_t l = 0;
        if (plen) {
            l = plen < sizeof key - 1 ? plen : sizeof key - 1;
            memcpy(key, prefix, l);
            if (l < sizeof key - 1) key[l++] = '/';
        }
        size_t c = kl < sizeof key - 1 - l ? kl : sizeof key - 1 - l;
        memcpy(key + l, k, c);
        l += c;
        if (!value(p, key, l)) return 0;
    }
}

static int value(dp *p, const char *key, size_t klen)
{
    if (p->i >= p->n) return 0;
    char c = p->s[p->i];
    if (c == '{') return object(p, key, key ? klen : 0);
    if (c == '[' || c == '(') return skip_seq(p);
    const char *a;
    size_t l;
    if (c == '"' || c == '\'') return str(p, &a, &l);
    double v;
    size_t k = lg_number(p->s + p->i, p->n - p->i, &v);
    if (k) {
        p->i += k;
        if (key) lg_add(p->r, key, klen, v);
        return 1;
    }
    static const char *const words[] = { "true", "false", "null", "True", "False", "None" };
    for (size_t w = 0; w < 6; w++) {
        size_t wl = strlen(words[w]);
        if (p->i + wl <= p->n && !memcmp(p->s + p->i, words[w], wl)) {
            p->i += wl;
            return 1;
        }
    }
    return 0;
}

/* A failure at byte I is the end of the line when nothing but one token
 * (a number, word or key cut short: "2.15e", "tr") lies between I and the
 * end: the line stops inside the dict. */
static int open_at_end(const char *s, size_t n, size_t i)
{
    for (; i < n; i++)
        if (lg_space(s[i]) || s[i] == '\r' || memchr(",:{}[]()\"'", s[i], 10)) return 0;
    return 1;
}

/* A dict without a step that names a model's shape (a config.json or
 * Hugging Face config printed into the log). */
static int is_config(const char *s, size_t n)
{
    static const char *const keys[] = { "hidden_size", "vocab_size", "num_attention_heads", "architectures",
                                        "num_hidden_layers" };
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        if (memmem(s, n, keys[k], strlen(keys[k]))) return 1;
    return 0;
}

int lg_parse_dict(const char *s, size_t n, tprof_log_record *r, lg_info *info)
{
    const char *b = memchr(s, '{', n);
    if (!b) return 0;
    tprof_log_record save_hdr = { .format = r->format, .step = r->step, .n = r->n };
    dp p = { .s = s, .n = n, .i = (size_t)(b - s), .r = r };
    int ok = object(&p, NULL, 0);
    if (!ok && info) {
        info->too_deep |= p.deep;
        info->open_at_end |= !p.deep && open_at_end(s, n, p.i);
    }
    if (!ok || r->n == save_hdr.n) {
        r->n = save_hdr.n; /* not a dict of metrics: another format may take the line */
        r->step = save_hdr.step;
        return 0;
    }
    size_t pre = (size_t)(b - s);
    size_t i = 0;
    while (i < pre && lg_space(s[i])) i++;
    r->format = i == pre ? TPROF_LOG_JSON : TPROF_LOG_DICT;
    int64_t st;
    if (r->step < 0 && lg_find_step(s, pre, &st)) r->step = st; /* "step=10: {...}" */
    if (r->step < 0 && is_config(b, n - pre)) { /* a model's config dumped into the log: not metrics */
        r->n = save_hdr.n;
        r->step = save_hdr.step;
        r->format = save_hdr.format;
        return 0;
    }
    return 1;
}
