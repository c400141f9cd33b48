/* Results as typed tables (include/trainprof/result.h): the rows, the
 * derived ratios and the versioned text form. Renderers are in render.c,
 * the across-ranks view in ranks_view.c. */
#include "result_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"

static tprof_rows *rows_new(const tprof_table_desc *d, tprof_result *owner)
{
    tprof_rows *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->d = d;
    t->owner = owner;
    return t;
}

static void rows_free(tprof_rows *t)
{
    if (!t) return;
    if (t->kids)
        for (size_t i = 0; i < t->n * t->d->nchildren; i++) rows_free(t->kids[i]);
    free(t->kids);
    free(t->cells);
    free(t);
}

tprof_result *tprof_result_new(const tprof_result_desc *d)
{
    tprof_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->d = d;
    r->top = rows_new(d->top, r);
    r->tables = calloc(d->ntables ? d->ntables : 1, sizeof *r->tables);
    int bad = !r->top || !r->tables || tprof_rows_add(r->top) < 0;
    for (size_t i = 0; !bad && i < d->ntables; i++) bad = !(r->tables[i] = rows_new(d->tables[i], r));
    if (bad) {
        tprof_result_free(r);
        return NULL;
    }
    return r;
}

void tprof_result_free(tprof_result *r)
{
    if (!r) return;
    rows_free(r->top);
    for (size_t i = 0; r->tables && i < r->d->ntables; i++) rows_free(r->tables[i]);
    free(r->tables);
    for (size_t i = 0; i < r->nstrs; i++) free(r->strs[i]);
    free(r->strs);
    free(r);
}

const tprof_result_desc *tprof_result_desc_of(const tprof_result *r) { return r->d; }
tprof_rows *tprof_result_top(tprof_result *r) { return r->top; }
const tprof_rows *tprof_result_top_c(const tprof_result *r) { return r->top; }
tprof_rows *tprof_result_table(tprof_result *r, size_t i) { return i < r->d->ntables ? r->tables[i] : NULL; }
const tprof_rows *tprof_result_table_c(const tprof_result *r, size_t i)
{
    return i < r->d->ntables ? r->tables[i] : NULL;
}

/* Room for N rows in all, exactly (rows read back know their count: grown
 * by doubling they held up to twice their cells, and a cross-rank command
 * holds every rank's results). */
static int rows_reserve(tprof_rows *t, size_t n)
{
    size_t nc = t->d->ncols, nk = t->d->nchildren;
    if (n <= t->cap) return 0;
    tprof_cell *c = realloc(t->cells, n * (nc ? nc : 1) * sizeof *c);
    if (!c) return -1;
    t->cells = c;
    if (nk) {
        tprof_rows **k = realloc(t->kids, n * nk * sizeof *k);
        if (!k) return -1;
        t->kids = k;
    }
    t->cap = n;
    return 0;
}

long tprof_rows_add(tprof_rows *t)
{
    size_t nc = t->d->ncols, nk = t->d->nchildren;
    if (t->n == t->cap && rows_reserve(t, t->cap ? t->cap * 2 : 8)) return -1;
    for (size_t c = 0; c < nc; c++) t->cells[t->n * nc + c] = (tprof_cell){ .null = 1 };
    for (size_t c = 0; c < nk; c++) t->kids[t->n * nk + c] = NULL;
    return (long)t->n++;
}

size_t tprof_rows_count(const tprof_rows *t) { return t ? t->n : 0; }
const tprof_table_desc *tprof_rows_desc(const tprof_rows *t) { return t->d; }

tprof_rows *tprof_rows_child(tprof_rows *t, size_t row, size_t c)
{
    if (row >= t->n || c >= t->d->nchildren) return NULL;
    tprof_rows **k = &t->kids[row * t->d->nchildren + c];
    if (!*k) *k = rows_new(t->d->children[c], t->owner);
    return *k;
}

const tprof_rows *tprof_rows_child_c(const tprof_rows *t, size_t row, size_t c)
{
    if (row >= t->n || c >= t->d->nchildren) return NULL;
    return t->kids[row * t->d->nchildren + c];
}

static tprof_cell *cell(tprof_rows *t, size_t row, size_t col) { return &t->cells[row * t->d->ncols + col]; }

const tprof_cell *tprof_rows_cell(const tprof_rows *t, size_t row, size_t col)
{
    return &t->cells[row * t->d->ncols + col];
}

void tprof_rows_set_i(tprof_rows *t, size_t row, size_t col, int64_t v)
{
    *cell(t, row, col) = (tprof_cell){ .v.i = v };
}

void tprof_rows_set_d(tprof_rows *t, size_t row, size_t col, double v)
{
    *cell(t, row, col) = (tprof_cell){ .v.d = v };
}
void tprof_rows_set_null(tprof_rows *t, size_t row, size_t col) { *cell(t, row, col) = (tprof_cell){ .null = 1 }; }

const char *result_strdup(tprof_result *r, const char *s, size_t len)
{
    if (r->nstrs == r->capstrs) {
        size_t cap = r->capstrs ? r->capstrs * 2 : 16;
        char **n = realloc(r->strs, cap * sizeof *n);
        if (!n) return NULL;
        r->strs = n;
        r->capstrs = cap;
    }
    char *c = malloc(len + 1);
    if (!c) return NULL;
    memcpy(c, s, len);
    c[len] = 0;
    r->strs[r->nstrs++] = c;
    return c;
}

int tprof_rows_set_s(tprof_rows *t, size_t row, size_t col, const char *s)
{
    if (!s) {
        tprof_rows_set_null(t, row, col);
        return 0;
    }
    const char *c = result_strdup(t->owner, s, strlen(s));
    if (!c) return TPROF_ENOMEM;
    *cell(t, row, col) = (tprof_cell){ .v.s = c };
    return 0;
}

int tprof_table_col(const tprof_table_desc *d, const char *name)
{
    for (size_t c = 0; c < d->ncols; c++)
        if (!strcmp(d->cols[c].name, name)) return (int)c;
    return -1;
}

const tprof_cell *tprof_rows_at(const tprof_rows *t, size_t row, const char *col)
{
    int c = t ? tprof_table_col(t->d, col) : -1;
    return c < 0 || row >= t->n ? NULL : &t->cells[row * t->d->ncols + (size_t)c];
}

int64_t tprof_rows_int(const tprof_rows *t, size_t row, const char *col)
{
    const tprof_cell *v = tprof_rows_at(t, row, col);
    return v && !v->null ? v->v.i : 0;
}

double tprof_rows_real(const tprof_rows *t, size_t row, const char *col)
{
    const tprof_cell *v = tprof_rows_at(t, row, col);
    return v && !v->null ? v->v.d : NAN;
}

const char *tprof_rows_str(const tprof_rows *t, size_t row, const char *col)
{
    const tprof_cell *v = tprof_rows_at(t, row, col);
    return v && !v->null ? v->v.s : NULL;
}

int result_kind_is_int(tprof_col_kind k)
{
    return k == TPROF_COL_COUNT || k == TPROF_COL_DURATION || k == TPROF_COL_BYTES || k == TPROF_COL_TIMESTAMP ||
           k == TPROF_COL_RANK || k == TPROF_COL_INT || k == TPROF_COL_BOOL;
}

int result_kind_is_str(tprof_col_kind k) { return k == TPROF_COL_STRING || k == TPROF_COL_ENUM; }

double result_cell_num(const tprof_col_desc *c, const tprof_cell *v)
{
    return result_kind_is_int(c->kind) ? (double)v->v.i : v->v.d;
}

/* Column NAME of T's table, or with "top." of the result's top table:
 * *FROM is the rows the value is in, and 0 is then the only row. */
static int derive_source(const tprof_rows *t, const char *name, const tprof_rows **from)
{
    *from = t;
    if (name && !strncmp(name, "top.", 4)) {
        *from = t->owner->top;
        name += 4;
    }
    return name ? tprof_table_col((*from)->d, name) : -1;
}

static void derive_rows(tprof_rows *t)
{
    const tprof_table_desc *d = t->d;
    for (size_t c = 0; c < d->ncols; c++) {
        if (d->cols[c].combine != TPROF_COMBINE_DERIVED) continue;
        const tprof_rows *nt, *dt;
        int nc = derive_source(t, d->cols[c].num, &nt), dc = derive_source(t, d->cols[c].den, &dt);
        for (size_t r = 0; r < t->n; r++) {
            if (nc < 0 || dc < 0) {
                tprof_rows_set_null(t, r, c);
                continue;
            }
            const tprof_cell *a = tprof_rows_cell(nt, nt == t ? r : 0, (size_t)nc);
            const tprof_cell *b = tprof_rows_cell(dt, dt == t ? r : 0, (size_t)dc);
            double den = b->null ? 0 : result_cell_num(&dt->d->cols[dc], b);
            if (a->null || den == 0) tprof_rows_set_null(t, r, c);
            else
                tprof_rows_set_d(t, r, c, result_cell_num(&nt->d->cols[nc], a) / den *
                                              (d->cols[c].scale != 0 ? d->cols[c].scale : 1));
        }
    }
    for (size_t r = 0; r < t->n; r++)
        for (size_t k = 0; k < d->nchildren; k++)
            if (t->kids[r * d->nchildren + k]) derive_rows(t->kids[r * d->nchildren + k]);
}

void tprof_rows_derive(tprof_rows *t) { derive_rows(t); }

void tprof_result_derive(tprof_result *r)
{
    derive_rows(r->top);
    for (size_t i = 0; i < r->d->ntables; i++) derive_rows(r->tables[i]);
}

/* The sort keys of tprof_rows_sort (qsort has no context argument). */
typedef struct {
    const tprof_rows *t;
    const int *cols, *desc;
    size_t n;
} sort_ctx;

static int cmp_cells(const tprof_col_desc *c, const tprof_cell *x, const tprof_cell *y)
{
    if (x->null || y->null) return x->null == y->null ? 0 : x->null ? 1 : -1;
    if (result_kind_is_str(c->kind)) return strcmp(x->v.s, y->v.s);
    if (result_kind_is_int(c->kind)) return x->v.i < y->v.i ? -1 : x->v.i > y->v.i;
    return x->v.d < y->v.d ? -1 : x->v.d > y->v.d;
}

static int cmp_rows(const sort_ctx *s, size_t a, size_t b)
{
    for (size_t i = 0; i < s->n; i++) {
        size_t c = (size_t)s->cols[i];
        const tprof_cell *x = tprof_rows_cell(s->t, a, c), *y = tprof_rows_cell(s->t, b, c);
        int k = cmp_cells(&s->t->d->cols[c], x, y);
        if (k) return s->desc[i] && !x->null && !y->null ? -k : k;
    }
    return a < b ? -1 : a > b; /* stable */
}

int tprof_rows_sort(tprof_rows *t, const int *cols, const int *desc, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cols[i] < 0 || (size_t)cols[i] >= t->d->ncols) return TPROF_EUSAGE;
    if (t->n < 2) return 0;
    size_t nc = t->d->ncols, nk = t->d->nchildren;
    size_t *order = malloc(t->n * sizeof *order), *tmp = malloc(t->n * sizeof *tmp);
    tprof_cell *cells = malloc(t->n * nc * sizeof *cells);
    tprof_rows **kids = nk ? malloc(t->n * nk * sizeof *kids) : NULL;
    if (!order || !tmp || !cells || (nk && !kids)) {
        free(order);
        free(tmp);
        free(cells);
        free(kids);
        return TPROF_ENOMEM;
    }
    /* a merge sort of row indexes: stable, and no global comparison context */
    sort_ctx s = { t, cols, desc, n };
    for (size_t i = 0; i < t->n; i++) order[i] = i;
    for (size_t w = 1; w < t->n; w *= 2) {
        for (size_t lo = 0; lo < t->n; lo += 2 * w) {
            size_t mid = lo + w < t->n ? lo + w : t->n, hi = lo + 2 * w < t->n ? lo + 2 * w : t->n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = cmp_rows(&s, order[j], order[i]) < 0 ? order[j++] : order[i++];
            while (i < mid) tmp[k++] = order[i++];
            while (j < hi) tmp[k++] = order[j++];
        }
        size_t *sw = order;
        order = tmp;
        tmp = sw;
    }
    for (size_t r = 0; r < t->n; r++) {
        memcpy(&cells[r * nc], &t->cells[order[r] * nc], nc * sizeof *cells);
        if (nk) memcpy(&kids[r * nk], &t->kids[order[r] * nk], nk * sizeof *kids);
    }
    memcpy(t->cells, cells, t->n * nc * sizeof *cells);
    if (nk) memcpy(t->kids, kids, t->n * nk * sizeof *kids);
    free(order);
    free(tmp);
    free(cells);
    free(kids);
    return 0;
}

/* ---- the text form --------------------------------------------------------
 *
 *   tprof-result 1 NAME VERSION
 *   rows N                      the top table, then each table in order
 *   CELL<TAB>CELL...            one line per row, then its child tables
 *
 * A cell is '~' (null), 'i' and a decimal integer, 'd' and a C99 hex float,
 * or 's' and the string with backslash, tab, newline and control bytes
 * escaped. */

#define FORM_VERSION 1

static void write_str(const char *s, FILE *f)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        size_t run = 0; /* the bytes up to the next one to escape go out at once */
        while (p[run] >= 0x20 && p[run] != '\\') run++;
        if (run) {
            fwrite(p, 1, run, f);
            p += run - 1;
            continue;
        }
        if (*p == '\\') fputs("\\\\", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\r') fputs("\\r", f);
        else if (*p < 0x20) fprintf(f, "\\x%02x", *p);
        else fputc(*p, f);
    }
}

static void write_rows(const tprof_rows *t, FILE *f)
{
    const tprof_table_desc *d = t->d;
    fprintf(f, "rows %zu\n", t->n);
    for (size_t r = 0; r < t->n; r++) {
        for (size_t c = 0; c < d->ncols; c++) {
            const tprof_cell *v = tprof_rows_cell(t, r, c);
            if (c) fputc('\t', f);
            if (v->null) fputc('~', f);
            else if (result_kind_is_int(d->cols[c].kind)) fprintf(f, "i%lld", (long long)v->v.i);
            else if (result_kind_is_str(d->cols[c].kind)) {
                fputc('s', f);
                write_str(v->v.s, f);
            } else
                fprintf(f, "d%a", v->v.d);
        }
        fputc('\n', f);
        for (size_t k = 0; k < d->nchildren; k++) {
            const tprof_rows *kid = tprof_rows_child_c(t, r, k);
            if (kid) write_rows(kid, f);
            else fputs("rows 0\n", f);
        }
    }
}

int tprof_result_write(const tprof_result *r, FILE *f)
{
    fprintf(f, "tprof-result %d %s %u\n", FORM_VERSION, r->d->name, r->d->version);
    write_rows(r->top, f);
    for (size_t i = 0; i < r->d->ntables; i++) write_rows(r->tables[i], f);
    return ferror(f) ? TPROF_EWRITE : 0;
}

typedef struct {
    FILE *f;
    char *line;
    size_t cap;
    unsigned long lineno;
    char *err;
    size_t errlen;
} form_reader;

static int form_fail(form_reader *fr, const char *what)
{
    snprintf(fr->err, fr->errlen, "line %lu: %s", fr->lineno, what);
    return TPROF_EFORMAT;
}

static int next_line(form_reader *fr)
{
    ssize_t n = getline(&fr->line, &fr->cap, fr->f);
    if (n < 0) return form_fail(fr, "the result ends early");
    fr->lineno++;
    if (n && fr->line[n - 1] == '\n') fr->line[n - 1] = 0;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Unescapes S (up to END) in place; returns the new length or -1. */
static long unescape(char *s, const char *end)
{
    char *o = s;
    for (const char *p = s; p < end; p++) {
        if (*p != '\\') {
            *o++ = *p;
            continue;
        }
        if (++p >= end) return -1;
        switch (*p) {
        case '\\': *o++ = '\\'; break;
        case 't': *o++ = '\t'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 'x': {
            if (end - p < 3) return -1;
            int a = hexval(p[1]), b = hexval(p[2]);
            if (a < 0 || b < 0) return -1;
            *o++ = (char)(a * 16 + b);
            p += 2;
            break;
        }
        default: return -1;
        }
    }
    return (long)(o - s);
}

/* The next "rows N" line's N. */
static int read_count(form_reader *fr, unsigned long long *n)
{
    int rc = next_line(fr);
    if (rc) return rc;
    char *end;
    if (strncmp(fr->line, "rows ", 5)) return form_fail(fr, "expected 'rows N'");
    errno = 0;
    *n = strtoull(fr->line + 5, &end, 10);
    if (errno || *end || end == fr->line + 5) return form_fail(fr, "a bad row count");
    return 0;
}

/* N rows into T, their children after each (an empty child is not made:
 * a row without one reads back as it was written). */
static int read_rows_n(form_reader *fr, tprof_rows *t, unsigned long long n, int depth)
{
    const tprof_table_desc *d = t->d;
    char *end;
    int rc;
    if (depth > 16) return form_fail(fr, "tables nested deeper than 16");
    int top = t == t->owner->top;
    if (top && n != 1) return form_fail(fr, "the top table has one row");
    /* a count past a million rows is not trusted for the room: a malformed one would ask for it all at once */
    if (!top && n <= (1u << 20) && rows_reserve(t, t->n + (size_t)n)) return TPROF_ENOMEM;
    for (unsigned long long r = 0; r < n; r++) {
        if ((rc = next_line(fr))) return rc;
        long row = top ? 0 : tprof_rows_add(t);
        if (row < 0) return TPROF_ENOMEM;
        char *p = fr->line;
        for (size_t c = 0; c < d->ncols; c++) {
            char *tab = strchr(p, '\t');
            char *stop = tab ? tab : p + strlen(p);
            if ((c + 1 < d->ncols) != (tab != NULL))
                return form_fail(fr, "the row's cell count differs from its table's");
            const tprof_col_desc *cd = &d->cols[c];
            if (*p == '~' && stop == p + 1) {
                tprof_rows_set_null(t, (size_t)row, c);
            } else if (*p == 'i' && result_kind_is_int(cd->kind)) {
                errno = 0;
                long long v = strtoll(p + 1, &end, 10);
                if (errno || end != stop || end == p + 1) return form_fail(fr, "a bad integer");
                tprof_rows_set_i(t, (size_t)row, c, v);
            } else if (*p == 'd' && !result_kind_is_int(cd->kind) && !result_kind_is_str(cd->kind)) {
                errno = 0;
                double v = strtod(p + 1, &end);
                if (end != stop || end == p + 1) return form_fail(fr, "a bad number");
                tprof_rows_set_d(t, (size_t)row, c, v);
            } else if (*p == 's' && result_kind_is_str(cd->kind)) {
                long len = unescape(p + 1, stop);
                if (len < 0) return form_fail(fr, "a bad escape in a string");
                const char *s = result_strdup(t->owner, p + 1, (size_t)len);
                if (!s) return TPROF_ENOMEM;
                tprof_rows_cell(t, (size_t)row, c); /* bounds: row exists */
                t->cells[(size_t)row * d->ncols + c] = (tprof_cell){ .v.s = s };
            } else {
                return form_fail(fr, "a cell of the wrong kind for its column");
            }
            p = tab ? tab + 1 : stop;
        }
        for (size_t k = 0; k < d->nchildren; k++) {
            unsigned long long kn;
            if ((rc = read_count(fr, &kn))) return rc;
            if (!kn) continue;
            tprof_rows *kid = tprof_rows_child(t, (size_t)row, k);
            if (!kid) return TPROF_ENOMEM;
            if ((rc = read_rows_n(fr, kid, kn, depth + 1))) return rc;
        }
    }
    return 0;
}

static int read_rows(form_reader *fr, tprof_rows *t)
{
    unsigned long long n;
    int rc = read_count(fr, &n);
    return rc ? rc : read_rows_n(fr, t, n, 0);
}

int tprof_result_read(tprof_result **out, const tprof_result_desc *d, FILE *f, char *errbuf, size_t errlen)
{
    *out = NULL;
    char dummy[8];
    form_reader fr = { .f = f, .err = errbuf ? errbuf : dummy, .errlen = errbuf ? errlen : sizeof dummy };
    int rc = next_line(&fr);
    if (rc) return rc;
    char name[128];
    int form;
    unsigned version;
    if (sscanf(fr.line, "tprof-result %d %127s %u", &form, name, &version) != 3)
        return form_fail(&fr, "not a trainprof result (expected 'tprof-result FORM NAME VERSION')");
    if (form != FORM_VERSION) return form_fail(&fr, "a result form this build does not read");
    if (strcmp(name, d->name) || version != d->version) {
        snprintf(fr.err, fr.errlen, "line 1: a %s result of version %u, expected %s version %u", name, version,
                 d->name, d->version);
        free(fr.line);
        return TPROF_EFORMAT;
    }
    tprof_result *r = tprof_result_new(d);
    if (!r) {
        free(fr.line);
        return TPROF_ENOMEM;
    }
    rc = read_rows(&fr, r->top);
    for (size_t i = 0; !rc && i < d->ntables; i++) rc = read_rows(&fr, r->tables[i]);
    free(fr.line);
    if (rc) {
        tprof_result_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

static int rows_equal(const tprof_rows *a, const tprof_rows *b)
{
    if (!a || !b) return tprof_rows_count(a) == tprof_rows_count(b);
    if (a->d != b->d || a->n != b->n) return 0;
    const tprof_table_desc *d = a->d;
    for (size_t r = 0; r < a->n; r++) {
        for (size_t c = 0; c < d->ncols; c++) {
            const tprof_cell *x = tprof_rows_cell(a, r, c), *y = tprof_rows_cell(b, r, c);
            if (x->null != y->null) return 0;
            if (x->null) continue;
            if (result_kind_is_str(d->cols[c].kind) ? strcmp(x->v.s, y->v.s) != 0
                                                     : memcmp(&x->v, &y->v, sizeof x->v) != 0)
                return 0;
        }
        for (size_t k = 0; k < d->nchildren; k++)
            if (!rows_equal(tprof_rows_child_c(a, r, k), tprof_rows_child_c(b, r, k))) return 0;
    }
    return 1;
}

int tprof_result_equal(const tprof_result *a, const tprof_result *b)
{
    if (a->d != b->d || !rows_equal(a->top, b->top)) return 0;
    for (size_t i = 0; i < a->d->ntables; i++)
        if (!rows_equal(a->tables[i], b->tables[i])) return 0;
    return 1;
}

static int copy_row(tprof_rows *dst, const tprof_rows *src, size_t r, int depth)
{
    if (depth > 16) return TPROF_ELIMIT;
    long i = tprof_rows_add(dst);
    if (i < 0) return TPROF_ENOMEM;
    const tprof_table_desc *d = src->d;
    for (size_t c = 0; c < d->ncols; c++) {
        const tprof_cell *v = tprof_rows_cell(src, r, c);
        if (v->null) continue;
        if (result_kind_is_str(d->cols[c].kind)) {
            if (tprof_rows_set_s(dst, (size_t)i, c, v->v.s)) return TPROF_ENOMEM;
        } else
            *cell(dst, (size_t)i, c) = *v;
    }
    for (size_t k = 0; k < d->nchildren; k++) {
        const tprof_rows *kid = tprof_rows_child_c(src, r, k);
        if (!kid) continue;
        tprof_rows *to = tprof_rows_child(dst, (size_t)i, k);
        if (!to) return TPROF_ENOMEM;
        for (size_t j = 0; j < kid->n; j++) {
            int rc = copy_row(to, kid, j, depth + 1);
            if (rc) return rc;
        }
    }
    return 0;
}

int tprof_result_top_only(const tprof_result *r, tprof_result **out)
{
    *out = tprof_result_new(r->d);
    if (!*out) return TPROF_ENOMEM;
    const tprof_table_desc *d = r->d->top;
    for (size_t c = 0; c < d->ncols; c++) {
        const tprof_cell *v = tprof_rows_cell(r->top, 0, c);
        if (v->null) continue;
        if (!result_kind_is_str(d->cols[c].kind)) (*out)->top->cells[c] = *v;
        else if (tprof_rows_set_s((*out)->top, 0, c, v->v.s)) {
            tprof_result_free(*out);
            *out = NULL;
            return TPROF_ENOMEM;
        }
    }
    return 0;
}

int tprof_rows_append(tprof_rows *dst, const tprof_rows *src)
{
    if (!src) return 0;
    if (src->d != dst->d && (src->d->cols != dst->d->cols || src->d->ncols != dst->d->ncols ||
                             src->d->children != dst->d->children || src->d->nchildren != dst->d->nchildren))
        return TPROF_EUSAGE;
    for (size_t r = 0; r < src->n; r++) {
        int rc = copy_row(dst, src, r, 0);
        if (rc) return rc;
    }
    return 0;
}
