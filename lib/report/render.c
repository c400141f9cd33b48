/* Renderers of results from their descriptions alone: the text table (human
 * units), CSV (raw base units) and JSON (raw base units, stable keys). */
#include "result_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"

static int decimals(const tprof_col_desc *c)
{
    return c->decimals > 0 ? c->decimals : c->kind == TPROF_COL_RATIO ? 1 : 2;
}

/* One cell as the text table shows it. */
static const char *human(const tprof_col_desc *c, const tprof_cell *v, char *buf, size_t len)
{
    if (v->null) return "-";
    switch (c->kind) {
    case TPROF_COL_DURATION:
    case TPROF_COL_TIMESTAMP: return tprof_fmt_duration(buf, len, v->v.i);
    case TPROF_COL_BYTES: return tprof_fmt_bytes(buf, len, v->v.i);
    case TPROF_COL_RATIO: snprintf(buf, len, "%.*f%%", decimals(c), v->v.d * 100); return buf;
    case TPROF_COL_RATE:
    case TPROF_COL_REAL: snprintf(buf, len, "%.*f", decimals(c), v->v.d); return buf;
    case TPROF_COL_STRING:
    case TPROF_COL_ENUM: return v->v.s;
    default: snprintf(buf, len, "%" PRId64, v->v.i); return buf;
    }
}

int tprof_rows_print_table(const tprof_rows *t, FILE *f)
{
    const tprof_table_desc *d = t->d;
    const char *hdr[64] = { 0 };
    char align[65];
    size_t map[64], n = 0;
    for (size_t c = 0; c < d->ncols && n < 64; c++) {
        if (d->cols[c].flags & TPROF_COLF_NO_TABLE) continue;
        hdr[n] = d->cols[c].title ? d->cols[c].title : d->cols[c].name;
        align[n] = result_kind_is_str(d->cols[c].kind) ? 'l' : 'r';
        map[n++] = c;
    }
    align[n] = 0;
    tprof_table *tab = tprof_table_new((int)n, hdr, align);
    if (!tab) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (d->cols[map[i]].width) tprof_table_limit(tab, (int)i, d->cols[map[i]].width);
    char bufs[64][64];
    const char *cells[64];
    for (size_t r = 0; r < t->n; r++) {
        for (size_t i = 0; i < n; i++) cells[i] = human(&d->cols[map[i]], tprof_rows_cell(t, r, map[i]), bufs[i], sizeof bufs[i]);
        if (tprof_table_row(tab, cells)) {
            tprof_table_free(tab);
            return TPROF_ENOMEM;
        }
    }
    tprof_table_print(tab, f);
    tprof_table_free(tab);
    return 0;
}

void tprof_rows_csv_header(const tprof_table_desc *d, const char *prefix, FILE *f)
{
    int first = 1;
    if (prefix && *prefix) {
        fputs(prefix, f);
        first = 0;
    }
    for (size_t c = 0; c < d->ncols; c++) {
        if (d->cols[c].flags & TPROF_COLF_NO_CSV) continue;
        if (!first) fputc(',', f);
        fputs(d->cols[c].name, f);
        first = 0;
    }
    fputc('\n', f);
}

static void csv_cell(const tprof_col_desc *c, const tprof_cell *v, FILE *f)
{
    if (v->null) return;
    if (result_kind_is_int(c->kind)) fprintf(f, "%" PRId64, v->v.i);
    else if (result_kind_is_str(c->kind)) tprof_csv_field(f, v->v.s);
    else if (isfinite(v->v.d)) fprintf(f, "%.17g", v->v.d);
}

void tprof_rows_csv(const tprof_rows *t, const char *const *prefix, size_t nprefix, FILE *f)
{
    const tprof_table_desc *d = t->d;
    for (size_t r = 0; r < t->n; r++) {
        int first = 1;
        for (size_t p = 0; p < nprefix; p++) {
            if (!first) fputc(',', f);
            tprof_csv_field(f, prefix[p]);
            first = 0;
        }
        for (size_t c = 0; c < d->ncols; c++) {
            if (d->cols[c].flags & TPROF_COLF_NO_CSV) continue;
            if (!first) fputc(',', f);
            csv_cell(&d->cols[c], tprof_rows_cell(t, r, c), f);
            first = 0;
        }
        fputc('\n', f);
    }
}

static void json_cell(tprof_jw *w, const tprof_col_desc *c, const tprof_cell *v)
{
    tprof_jw_key(w, c->name);
    if (v->null) tprof_jw_null(w);
    else if (result_kind_is_int(c->kind)) tprof_jw_int(w, v->v.i);
    else if (result_kind_is_str(c->kind)) tprof_jw_str(w, v->v.s);
    else tprof_jw_double(w, v->v.d);
}

static void json_row_members(tprof_jw *w, const tprof_rows *t, size_t r);

static void json_rows(tprof_jw *w, const tprof_rows *t, const tprof_table_desc *d)
{
    tprof_jw_key(w, d->name);
    tprof_jw_arr(w);
    for (size_t r = 0; t && r < t->n; r++) {
        tprof_jw_obj(w);
        json_row_members(w, t, r);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
}

static void json_row_members(tprof_jw *w, const tprof_rows *t, size_t r)
{
    const tprof_table_desc *d = t->d;
    for (size_t c = 0; c < d->ncols; c++)
        if (!(d->cols[c].flags & TPROF_COLF_NO_JSON)) json_cell(w, &d->cols[c], tprof_rows_cell(t, r, c));
    for (size_t k = 0; k < d->nchildren; k++) json_rows(w, tprof_rows_child_c(t, r, k), d->children[k]);
}

void tprof_result_json_members(const tprof_result *r, tprof_jw *w)
{
    json_row_members(w, r->top, 0);
    for (size_t i = 0; i < r->d->ntables; i++) json_rows(w, r->tables[i], r->d->tables[i]);
}
