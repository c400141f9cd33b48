#include "trainprof/report.h"

#include <stdlib.h>
#include <string.h>

struct tprof_table {
    int ncols;
    char **headers;
    char *aligns;
    int *limit;
    char **cells; /* row-major */
    size_t nrows, cap;
};

tprof_table *tprof_table_new(int ncols, const char *const *headers, const char *aligns)
{
    tprof_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->ncols = ncols;
    t->headers = calloc((size_t)ncols, sizeof *t->headers);
    t->aligns = calloc((size_t)ncols + 1, 1);
    t->limit = calloc((size_t)ncols, sizeof *t->limit);
    if (!t->headers || !t->aligns || !t->limit) {
        tprof_table_free(t);
        return NULL;
    }
    for (int c = 0; c < ncols; c++) {
        t->headers[c] = strdup(headers[c]);
        t->aligns[c] = aligns && aligns[c] ? aligns[c] : 'l';
    }
    return t;
}

void tprof_table_limit(tprof_table *t, int col, int max_width)
{
    if (t && col >= 0 && col < t->ncols) t->limit[col] = max_width;
}

int tprof_table_row(tprof_table *t, const char *const *cells)
{
    if (t->nrows == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 32;
        char **n = realloc(t->cells, nc * (size_t)t->ncols * sizeof *n);
        if (!n) return -1;
        t->cells = n;
        t->cap = nc;
    }
    for (int c = 0; c < t->ncols; c++)
        t->cells[t->nrows * (size_t)t->ncols + (size_t)c] = strdup(cells[c] ? cells[c] : "");
    t->nrows++;
    return 0;
}

/* Display width of UTF-8 text: count code points (continuation bytes skipped). */
static int width(const char *s)
{
    int w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* Byte offset of the N-th code point. */
static size_t cp_offset(const char *s, int n)
{
    size_t i = 0;
    for (; s[i] && n > 0; n--) {
        i++;
        while (((unsigned char)s[i] & 0xC0) == 0x80) i++;
    }
    return i;
}

static void put_cell(FILE *f, const char *s, int col_w, int limit, char align, int last)
{
    int w = width(s);
    if (limit > 5 && w > limit) {
        if (align == 'r')
            for (int i = limit; i < col_w; i++) fputc(' ', f);
        int head = (limit - 3) * 2 / 3, tail = limit - 3 - head;
        size_t h = cp_offset(s, head), tl = cp_offset(s, w - tail);
        fwrite(s, 1, h, f);
        fputs("...", f);
        fputs(s + tl, f);
        w = limit;
    } else {
        if (align == 'r')
            for (int i = w; i < col_w; i++) fputc(' ', f);
        fputs(s, f);
    }
    if (align != 'r' && !last)
        for (int i = w; i < col_w; i++) fputc(' ', f);
}

void tprof_table_print(const tprof_table *t, FILE *f)
{
    int *w = calloc((size_t)t->ncols, sizeof *w);
    if (!w) return;
    for (int c = 0; c < t->ncols; c++) {
        w[c] = width(t->headers[c]);
        for (size_t r = 0; r < t->nrows; r++) {
            int cw = width(t->cells[r * (size_t)t->ncols + (size_t)c]);
            if (t->limit[c] > 5 && cw > t->limit[c]) cw = t->limit[c];
            if (cw > w[c]) w[c] = cw;
        }
    }
    for (int c = 0; c < t->ncols; c++) {
        put_cell(f, t->headers[c], w[c], 0, t->aligns[c], c == t->ncols - 1);
        fputs(c == t->ncols - 1 ? "\n" : "  ", f);
    }
    for (int c = 0; c < t->ncols; c++) {
        for (int i = 0; i < w[c]; i++) fputc('-', f);
        fputs(c == t->ncols - 1 ? "\n" : "  ", f);
    }
    for (size_t r = 0; r < t->nrows; r++)
        for (int c = 0; c < t->ncols; c++) {
            put_cell(f, t->cells[r * (size_t)t->ncols + (size_t)c], w[c], t->limit[c], t->aligns[c],
                     c == t->ncols - 1);
            fputs(c == t->ncols - 1 ? "\n" : "  ", f);
        }
    free(w);
}

void tprof_table_free(tprof_table *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    if (t->headers)
        for (int c = 0; c < t->ncols; c++) free(t->headers[c]);
    free(t->headers);
    free(t->aligns);
    free(t->limit);
    free(t);
}
