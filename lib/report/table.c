#include "trainprof/report.h"

#include "text.h"

#include <stdlib.h>
#include <string.h>

struct tprof_table {
    int ncols;
    char **headers;
    char *aligns;
    int *limit;
    unsigned char *names; /* per column: kernel names (tprof_table_names) */
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
    t->names = calloc((size_t)ncols, 1);
    if (!t->headers || !t->aligns || !t->limit || !t->names) {
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

void tprof_table_names(tprof_table *t, int col)
{
    if (t && col >= 0 && col < t->ncols) t->names[col] = 1;
}

static int layout_wide, layout_columns;

void tprof_table_layout(int wide, int columns)
{
    layout_wide = wide;
    layout_columns = columns > 0 ? columns : 0;
}

void tprof_table_layout_get(int *wide, int *columns)
{
    *wide = layout_wide;
    *columns = layout_columns;
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

static void put_cell(FILE *f, const char *s, int col_w, int limit, char align, int last)
{
    int w = text_width(s);
    if (limit > 5 && w > limit) {
        if (align == 'r')
            for (int i = limit; i < col_w; i++) fputc(' ', f);
        int head, tail;
        text_cut_split(limit, &head, &tail);
        size_t h = text_cp_offset(s, head), tl = text_cp_offset(s, w - tail);
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

/* The narrowest a name column is fitted to a terminal. */
#define NAMES_MIN_WIDTH 24

/* The cells of name column C as shown (*SHOWN[r], malloc'd), within LIMIT
 * (0: uncut); NULL when out of memory. */
static char **shown_names(const tprof_table *t, int c, int limit, int *numbered)
{
    const char **names = malloc((t->nrows ? t->nrows : 1) * sizeof *names);
    char **shown = calloc(t->nrows ? t->nrows : 1, sizeof *shown);
    if (!names || !shown) {
        free(names);
        free(shown);
        return NULL;
    }
    for (size_t r = 0; r < t->nrows; r++) names[r] = t->cells[r * (size_t)t->ncols + (size_t)c];
    if (tprof_names_display(names, t->nrows, limit, shown, numbered)) {
        free(shown);
        shown = NULL;
    }
    free(names);
    return shown;
}

void tprof_table_print(const tprof_table *t, FILE *f)
{
    int *w = calloc((size_t)t->ncols, sizeof *w);
    char ***shown = calloc((size_t)t->ncols, sizeof *shown);
    if (!w || !shown) {
        free(w);
        free(shown);
        return;
    }
    int other = 0, nnames = 0, numbered = 0;
    for (int c = 0; c < t->ncols; c++) {
        w[c] = text_width(t->headers[c]);
        if (t->names[c] && !layout_wide) {
            nnames++;
            continue;
        }
        for (size_t r = 0; r < t->nrows; r++) {
            int cw = text_width(t->cells[r * (size_t)t->ncols + (size_t)c]);
            if (!t->names[c] && t->limit[c] > 5 && cw > t->limit[c]) cw = t->limit[c];
            if (cw > w[c]) w[c] = cw;
        }
        other += w[c];
    }
    /* name columns: shortened, kept distinct, within their limit or what a terminal leaves them */
    for (int c = 0; nnames && c < t->ncols; c++) {
        if (!t->names[c] || layout_wide) continue;
        int limit = t->limit[c];
        if (layout_columns) {
            limit = (layout_columns - other - 2 * (t->ncols - 1)) / nnames;
            if (limit < NAMES_MIN_WIDTH) limit = NAMES_MIN_WIDTH;
        }
        int num = 0;
        shown[c] = shown_names(t, c, limit, &num);
        numbered |= num;
        for (size_t r = 0; r < t->nrows; r++) { /* out of memory: the cells cut as other columns are */
            int cw = shown[c] ? text_width(shown[c][r]) : text_width(t->cells[r * (size_t)t->ncols + (size_t)c]);
            if (!shown[c] && limit > 5 && cw > limit) cw = limit;
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
            const char *cell = shown[c] ? shown[c][r] : t->cells[r * (size_t)t->ncols + (size_t)c];
            int limit = t->names[c] && (layout_wide || shown[c]) ? 0 : t->limit[c];
            put_cell(f, cell, w[c], limit, t->aligns[c], c == t->ncols - 1);
            fputs(c == t->ncols - 1 ? "\n" : "  ", f);
        }
    if (numbered) fputs(TPROF_NAMES_FOOTNOTE "\n", f);
    for (int c = 0; c < t->ncols; c++) {
        for (size_t r = 0; shown[c] && r < t->nrows; r++) free(shown[c][r]);
        free(shown[c]);
    }
    free(shown);
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
    free(t->names);
    free(t);
}
