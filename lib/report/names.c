/* Kernel names as text tables show them (docs/METRICS.md, "Kernel names in
 * tables"): a C++ signature loses its template arguments (collapsed to
 * <...>), its parameter list and its return type, the way HTA's
 * shorten_name shortens them; names that shorten alike in one table get
 * their template arguments back one level at a time, then the full name,
 * and are numbered (#1, #2) when even that does not tell them apart. */
#include "trainprof/report.h"

#include <stdlib.h>
#include <string.h>

#include "text.h"

static int ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The length of an operator's name at S + I ("operator()", "operator<<",
 * "operator->"), whose brackets are not brackets; 0 when none starts there. */
static size_t op_token(const char *s, size_t i)
{
    if (strncmp(s + i, "operator", 8) || (i && ident(s[i - 1])) || ident(s[i + 8])) return 0;
    size_t j = i + 8;
    if ((s[j] == '(' && s[j + 1] == ')') || (s[j] == '[' && s[j + 1] == ']')) return 10;
    while (j < i + 11 && s[j] && strchr("<>=!+-*/%^&|~,", s[j])) j++;
    return j - i;
}

/* The index of the bracket that closes the '<' or '(' at S + I, or -1 when
 * it is not closed. A '>' inside parentheses is a comparison, "->" an
 * arrow. */
static long match(const char *s, size_t i)
{
    size_t sp = 0, cap = 64;
    char local[64], *stack = local;
    long at = -1;
    for (size_t j = i; s[j]; j++) {
        size_t op = op_token(s, j);
        if (op) {
            j += op - 1;
            continue;
        }
        char c = s[j];
        if (c == '-' && s[j + 1] == '>') {
            j++;
            continue;
        }
        if (c == '<' || c == '(') {
            if (sp == cap) {
                char *n = malloc(cap * 2);
                if (!n) break;
                memcpy(n, stack, sp);
                if (stack != local) free(stack);
                stack = n;
                cap *= 2;
            }
            stack[sp++] = c;
        } else if (c == ')') {
            while (sp && stack[sp - 1] == '<') sp--; /* a '<' that was a comparison */
            if (sp) sp--;
        } else if (c == '>' && sp && stack[sp - 1] == '<')
            sp--;
        else continue;
        if (!sp) {
            at = (long)j;
            break;
        }
    }
    if (stack != local) free(stack);
    return at;
}

typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

/* A parameter list: a '(' right after a name or a template's '>'. */
static int params_at(const char *s, size_t i) { return i && (ident(s[i - 1]) || s[i - 1] == '>'); }

/* The qualifiers that may follow a parameter list. */
static size_t qualifiers(const char *s, size_t i)
{
    static const char *const q[] = { " const", " volatile", " &&", " &", " noexcept" };
    for (int again = 1; again;) {
        again = 0;
        for (size_t k = 0; k < sizeof q / sizeof *q; k++) {
            size_t n = strlen(q[k]);
            if (!strncmp(s + i, q[k], n) && !ident(s[i + n])) {
                i += n;
                again = 1;
            }
        }
    }
    return i;
}

/* NAME at LEVEL into B; *MAXDEPTH gets its deepest template nesting. 0, or
 * -1 when it is no signature (no '<' or '(', or an unclosed one): shown as
 * it is. */
static int shorten(const char *name, int level, sbuf *b, int *maxdepth)
{
    *maxdepth = 0;
    if (!strchr(name, '<') && !strchr(name, '(')) return -1;
    int depth = 0, did = 0;
    size_t last_space = 0, op_end = 0; /* in B, just after the last space outside brackets; after "operator()" */
    for (size_t i = 0; name[i];) {
        size_t op = op_token(name, i);
        if (op) {
            put(b, name + i, op);
            i += op;
            op_end = i;
            continue;
        }
        char c = name[i];
        if (c == '-' && name[i + 1] == '>') {
            put(b, "->", 2);
            i += 2;
        } else if (c == '<') {
            long m = match(name, i);
            if (m < 0) return -1;
            if (depth + 1 > *maxdepth) *maxdepth = depth + 1;
            if (depth + 1 > level) { /* deeper than shown: its depth still counts */
                int d = depth;
                for (size_t j = i; j <= (size_t)m; j++)
                    if (name[j] == '<' && ++d > *maxdepth) *maxdepth = d;
                    else if (name[j] == '>' && d > depth) d--;
                put(b, "<...>", 5);
                did = 1;
                i = (size_t)m + 1;
            } else {
                put(b, "<", 1);
                depth++;
                i++;
            }
        } else if (c == '>' && depth > 0) {
            put(b, ">", 1);
            depth--;
            i++;
        } else if (c == '(' && depth == 0) {
            long m = match(name, i);
            if (m < 0) return -1;
            if (params_at(name, i) || (op_end && op_end == i)) { /* dropped, with its qualifiers */
                did = 1;
                i = qualifiers(name, (size_t)m + 1);
            } else { /* "(anonymous namespace)": part of the name */
                put(b, name + i, (size_t)m + 1 - i);
                i = (size_t)m + 1;
            }
        } else {
            put(b, name + i, 1);
            if (c == ' ' && depth == 0) last_space = b->n;
            i++;
        }
    }
    if (b->oom) return -2;
    if (did && last_space && last_space < b->n) { /* the return type ("void ") goes */
        memmove(b->p, b->p + last_space, b->n - last_space + 1);
        b->n -= last_space;
    }
    return 0;
}

/* NAME at LEVEL (malloc'd) and the number of levels it has: 0..D-1 its
 * template arguments to that depth (D-1 the deepest), D the name in full.
 * A name that is no signature has one level: itself. */
static char *name_at(const char *name, int level, int *levels)
{
    sbuf b = { 0 };
    int maxdepth;
    int rc = shorten(name, level, &b, &maxdepth);
    if (levels) *levels = rc == -1 ? 1 : maxdepth + 2;
    if (rc == -1 || level > maxdepth) {
        free(b.p);
        return strdup(name);
    }
    if (rc) {
        free(b.p);
        return NULL;
    }
    return b.p ? b.p : strdup("");
}

char *tprof_name_short(const char *name, int level) { return name_at(name, level, NULL); }

/* S cut to WIDTH code points with "..." (WIDTH <= 5: uncut), then SUFFIX;
 * malloc'd. A name ending in template arguments keeps its start and is cut
 * inside them ("f<4, g<...>, h...>"), else the cut is in the middle so that
 * both ends stay readable. */
static char *fit(const char *s, int width, const char *suffix)
{
    int w = text_width(s), sw = text_width(suffix);
    size_t sl = strlen(suffix), n = strlen(s);
    int limit = width > 0 ? width - sw : 0;
    size_t h = n, t = n; /* the bytes kept: S[0..h) "..." S[t..n) */
    if (limit > 5 && w > limit) {
        const char *lt = strchr(s, '<');
        if (lt && s[n - 1] == '>' && text_width(lt) < w && (int)(w - text_width(lt)) + 5 <= limit) {
            h = text_cp_offset(s, limit - 4);
            for (int k = 4; k >= 1; k--) /* not inside a "<...>" */
                if (h >= (size_t)k && !strncmp(s + h - (size_t)k, "<...>", (size_t)k)) {
                    h -= (size_t)k;
                    break;
                }
            t = n - 1;
        } else {
            int head, tail;
            text_cut_split(limit, &head, &tail);
            h = text_cp_offset(s, head);
            t = text_cp_offset(s, w - tail);
        }
    }
    size_t mid = h < n ? 3 : 0;
    char *o = malloc(h + mid + (n - t) + sl + 1);
    if (!o) return NULL;
    memcpy(o, s, h);
    memcpy(o + h, "...", mid);
    memcpy(o + h + mid, s + t, n - t);
    memcpy(o + h + mid + (n - t), suffix, sl + 1);
    return o;
}

typedef struct {
    const char *shown, *name;
    size_t row;
} entry;

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = strcmp(x->shown, y->shown);
    if (!c) c = strcmp(x->name, y->name);
    return c ? c : x->row < y->row ? -1 : x->row > y->row;
}

/* The entries sorted by what they show; returns 0 or -1. */
static entry *sorted(char *const *shown, const char *const *names, size_t n)
{
    entry *e = malloc((n ? n : 1) * sizeof *e);
    if (!e) return NULL;
    for (size_t i = 0; i < n; i++) e[i] = (entry){ shown[i], names[i], i };
    qsort(e, n, sizeof *e, cmp_entry);
    return e;
}

/* The end of the run of entries from I that show the same text, and
 * whether it holds two different names. */
static size_t run_end(const entry *e, size_t n, size_t i, int *clash)
{
    size_t j = i + 1;
    *clash = 0;
    for (; j < n && !strcmp(e[j].shown, e[i].shown); j++)
        if (strcmp(e[j].name, e[i].name)) *clash = 1;
    return j;
}

int tprof_names_display(const char *const *names, size_t n, int width, char **out, int *numbered)
{
    int *level = calloc(n ? n : 1, sizeof *level), *levels = calloc(n ? n : 1, sizeof *levels);
    int rc = level && levels ? 0 : -1;
    *numbered = 0;
    for (size_t i = 0; i < n; i++) out[i] = NULL;
    for (size_t i = 0; !rc && i < n; i++) {
        char *s = name_at(names[i], 0, &levels[i]);
        out[i] = s ? fit(s, width, "") : NULL;
        free(s);
        if (!out[i]) rc = -1;
    }
    /* names that show alike get one more level, until none does or none can */
    for (int changed = 1; !rc && changed;) {
        changed = 0;
        entry *e = sorted(out, names, n);
        if (!e) {
            rc = -1;
            break;
        }
        for (size_t i = 0, j; !rc && i < n; i = j) {
            int clash;
            j = run_end(e, n, i, &clash);
            for (size_t k = i; clash && k < j; k++) {
                size_t r = e[k].row;
                if (level[r] + 1 >= levels[r]) continue;
                level[r]++;
                changed = 1;
                char *s = name_at(names[r], level[r], NULL), *f = s ? fit(s, width, "") : NULL;
                free(s);
                if (!f) {
                    rc = -1;
                    break;
                }
                free(out[r]); /* e[] still points into it: rows of this run only, not compared again */
                out[r] = f;
                e[k].shown = f;
            }
        }
        free(e);
    }
    /* what still shows alike is numbered: each different name in the order of its first row */
    entry *e = rc ? NULL : sorted(out, names, n);
    if (!rc && !e) rc = -1;
    char **renamed = rc ? NULL : calloc(n ? n : 1, sizeof *renamed);
    if (!rc && !renamed) rc = -1;
    for (size_t i = 0, j; !rc && i < n; i = j) {
        int clash;
        j = run_end(e, n, i, &clash);
        if (!clash) continue;
        *numbered = 1;
        for (size_t k = i; k < j; k++) {
            /* the first entry of its name in the run (entries of one name are adjacent, by row) */
            size_t first = k;
            while (first > i && !strcmp(e[first - 1].name, e[k].name)) first--;
            size_t num = 1;
            for (size_t q = i; q < j; q++)
                if ((q == i || strcmp(e[q - 1].name, e[q].name)) && e[q].row < e[first].row) num++;
            char suffix[32];
            snprintf(suffix, sizeof suffix, " #%zu", num);
            /* the text before the cut, cut again to leave room for the suffix */
            char *s = name_at(names[e[k].row], level[e[k].row], NULL);
            renamed[e[k].row] = s ? fit(s, width, suffix) : NULL;
            free(s);
            if (!renamed[e[k].row]) rc = -1;
        }
    }
    for (size_t i = 0; renamed && i < n; i++)
        if (renamed[i]) {
            free(out[i]);
            out[i] = renamed[i];
        }
    free(renamed);
    free(e);
    free(level);
    free(levels);
    if (rc)
        for (size_t i = 0; i < n; i++) {
            free(out[i]);
            out[i] = NULL;
        }
    return rc;
}
