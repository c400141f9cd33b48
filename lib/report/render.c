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
    case TPROF_COL_BOOL: return v->v.i ? "yes" : "no";
    case TPROF_COL_MEAN_NS: return tprof_fmt_duration(buf, len, (int64_t)(v->v.d + 0.5));
    default: snprintf(buf, len, "%" PRId64, v->v.i); return buf;
    }
}

/* The text table of D's columns over N rows, row I being row ROW[I] of
 * T[I], after a first column LABEL_TITLE (LABELS[I]) when LABELS is given. */
static int print_rows(const tprof_table_desc *d, const tprof_rows *const *t, const size_t *row, size_t n,
                      const char *label_title, const char *const *labels, FILE *f)
{
    const char *hdr[64] = { 0 };
    char align[65];
    size_t map[64], ncol = 0, lab = labels ? 1 : 0;
    if (lab) {
        hdr[0] = label_title;
        align[0] = 'l';
    }
    for (size_t c = 0; c < d->ncols && ncol + lab < 64; c++) {
        if (d->cols[c].flags & TPROF_COLF_NO_TABLE) continue;
        hdr[ncol + lab] = d->cols[c].title ? d->cols[c].title : d->cols[c].name;
        align[ncol + lab] = result_kind_is_str(d->cols[c].kind) ? 'l' : 'r';
        map[ncol++] = c;
    }
    align[ncol + lab] = 0;
    tprof_table *tab = tprof_table_new((int)(ncol + lab), hdr, align);
    if (!tab) return TPROF_ENOMEM;
    for (size_t i = 0; i < ncol; i++) {
        if (d->cols[map[i]].width) tprof_table_limit(tab, (int)(i + lab), d->cols[map[i]].width);
        if (d->cols[map[i]].flags & TPROF_COLF_NAMES) tprof_table_names(tab, (int)(i + lab));
    }
    char bufs[64][64];
    const char *cells[64];
    for (size_t r = 0; r < n; r++) {
        if (lab) cells[0] = labels[r];
        for (size_t i = 0; i < ncol; i++)
            cells[i + lab] = human(&d->cols[map[i]], tprof_rows_cell(t[r], row[r], map[i]), bufs[i], sizeof bufs[i]);
        if (tprof_table_row(tab, cells)) {
            tprof_table_free(tab);
            return TPROF_ENOMEM;
        }
    }
    tprof_table_print(tab, f);
    tprof_table_free(tab);
    return 0;
}

/* The rows a limit lets through. */
static size_t shown_rows(const tprof_rows *t, size_t limit) { return limit && limit < t->n ? limit : t->n; }

int tprof_rows_print_table(const tprof_rows *t, size_t limit, FILE *f)
{
    size_t n = shown_rows(t, limit);
    const tprof_rows **ts = malloc((n ? n : 1) * sizeof *ts);
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    int rc = ts && rows ? 0 : TPROF_ENOMEM;
    for (size_t r = 0; !rc && r < n; r++) {
        ts[r] = t;
        rows[r] = r;
    }
    if (!rc) rc = print_rows(t->d, ts, rows, n, NULL, NULL, f);
    free(ts);
    free(rows);
    return rc;
}

int tprof_results_print_top(const tprof_result *const *rs, const char *const *labels, size_t n,
                            const char *label_title, FILE *f)
{
    if (!n) return 0;
    size_t *all = malloc(n * sizeof *all);
    if (!all) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) all[i] = i;
    int rc = tprof_results_print_some(rs, labels, all, n, label_title, f);
    free(all);
    return rc;
}

/* X as column C shows it (X a value of the column's kind, as a double). */
static const char *human_num(const tprof_col_desc *c, double x, char *buf, size_t len)
{
    tprof_cell v = { 0 };
    if (result_kind_is_int(c->kind)) v.v.i = (int64_t)llround(x);
    else v.v.d = x;
    const char *s = human(c, &v, buf, len);
    if (s != buf) snprintf(buf, len, "%s", s);
    return buf;
}

int tprof_results_print_dist(const tprof_result *const *rs, const char *const *labels, size_t n, FILE *f)
{
    if (!n) return 0;
    const tprof_table_desc *d = rs[0]->d->top;
    char title[48];
    snprintf(title, sizeof title, "across %zu", n);
    const char *hdr[] = { title, "min", "p50", "p90", "max" };
    tprof_table *tab = tprof_table_new(5, hdr, "lrrrr");
    if (!tab) return TPROF_ENOMEM;
    int rc = 0;
    for (size_t c = 0; !rc && c < d->ncols; c++) {
        const tprof_col_desc *cd = &d->cols[c];
        /* a distribution of flags, instants or rank numbers says nothing */
        if ((cd->flags & TPROF_COLF_NO_TABLE) || result_kind_is_str(cd->kind) || cd->kind == TPROF_COL_BOOL ||
            cd->kind == TPROF_COL_TIMESTAMP || cd->kind == TPROF_COL_RANK)
            continue;
        tprof_col_dist dist;
        rc = tprof_ranks_dist(rs, NULL, n, (int)c, &dist); /* ranks: indexes into LABELS */
        if (rc || !dist.n) continue;
        char lo[96], p50[48], p90[48], hi[96], a[48];
        human_num(cd, dist.min, a, sizeof a);
        if (dist.min == dist.max) snprintf(lo, sizeof lo, "%s", a);
        else snprintf(lo, sizeof lo, "%s (%s)", a, labels[dist.min_rank]);
        human_num(cd, dist.max, a, sizeof a);
        if (dist.min == dist.max) snprintf(hi, sizeof hi, "%s", a);
        else snprintf(hi, sizeof hi, "%s (%s)", a, labels[dist.max_rank]);
        human_num(cd, dist.p50, p50, sizeof p50);
        human_num(cd, dist.p90, p90, sizeof p90);
        const char *cells[] = { cd->title ? cd->title : cd->name, lo, p50, p90, hi };
        rc = tprof_table_row(tab, cells);
    }
    if (!rc) tprof_table_print(tab, f);
    tprof_table_free(tab);
    return rc;
}

int tprof_results_print_some(const tprof_result *const *rs, const char *const *labels, const size_t *which,
                             size_t k, const char *label_title, FILE *f)
{
    if (!k) return 0;
    const tprof_rows **ts = malloc(k * sizeof *ts);
    const char **lab = malloc(k * sizeof *lab);
    size_t *rows = calloc(k, sizeof *rows);
    int rc = ts && lab && rows ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < k; i++) {
        ts[i] = rs[which[i]]->top;
        lab[i] = labels[which[i]];
    }
    if (!rc) rc = print_rows(rs[0]->d->top, ts, rows, k, label_title, lab, f);
    free(ts);
    free(lab);
    free(rows);
    return rc;
}

/* The CSV names of D's CSV columns, each after a comma unless *FIRST. */
static void csv_names(const tprof_table_desc *d, int *first, FILE *f)
{
    for (size_t c = 0; c < d->ncols; c++) {
        if (d->cols[c].flags & TPROF_COLF_NO_CSV) continue;
        if (!*first) fputc(',', f);
        fputs(d->cols[c].csv_name ? d->cols[c].csv_name : d->cols[c].name, f);
        *first = 0;
    }
}

void tprof_rows_csv_header(const tprof_table_desc *d, const char *prefix, FILE *f)
{
    int first = 1;
    if (prefix && *prefix) {
        fputs(prefix, f);
        first = 0;
    }
    csv_names(d, &first, f);
    fputc('\n', f);
}

/* "nan", "inf" or "-inf". */
static const char *nonfinite_name(double v) { return isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"; }

void tprof_csv_cell(const tprof_col_desc *c, const tprof_cell *v, FILE *f)
{
    if (v->null) return;
    if ((c->flags & TPROF_COLF_CSV_NAN_NAMED) && !result_kind_is_int(c->kind) && !result_kind_is_str(c->kind) &&
        !isfinite(v->v.d)) {
        fputs(nonfinite_name(v->v.d), f);
        return;
    }
    if ((c->flags & TPROF_COLF_SHORTEST) && !result_kind_is_int(c->kind) && !result_kind_is_str(c->kind)) {
        if (!isfinite(v->v.d)) {
            fputs(nonfinite_name(v->v.d), f);
            return;
        }
        char b[40];
        for (int p = 15; p <= 17; p++) { /* the shortest that reads back */
            snprintf(b, sizeof b, "%.*g", p, v->v.d);
            if (strtod(b, NULL) == v->v.d) break;
        }
        fputs(b, f);
        return;
    }
    if (result_kind_is_int(c->kind)) fprintf(f, "%" PRId64, v->v.i);
    else if (result_kind_is_str(c->kind)) tprof_csv_field(f, v->v.s);
    else if (isfinite(v->v.d) && c->csv_decimals > 0) fprintf(f, "%.*f", c->csv_decimals, v->v.d);
    else if (isfinite(v->v.d) && c->csv_digits > 0) fprintf(f, "%.*g", c->csv_digits, v->v.d);
    else if (isfinite(v->v.d)) fprintf(f, "%.17g", v->v.d);
}

void tprof_rows_csv(const tprof_rows *t, const char *const *prefix, size_t nprefix, size_t limit, FILE *f)
{
    const tprof_table_desc *d = t->d;
    for (size_t r = 0, n = shown_rows(t, limit); r < n; r++) {
        int first = 1;
        for (size_t p = 0; p < nprefix; p++) {
            if (!first) fputc(',', f);
            tprof_csv_field(f, prefix[p]);
            first = 0;
        }
        for (size_t c = 0; c < d->ncols; c++) {
            if (d->cols[c].flags & TPROF_COLF_NO_CSV) continue;
            if (!first) fputc(',', f);
            tprof_csv_cell(&d->cols[c], tprof_rows_cell(t, r, c), f);
            first = 0;
        }
        fputc('\n', f);
    }
}

/* ---- CSV of every table (csv_tables) ---- */

#define CSV_MAX_PREFIX 8

/* The cells a child table's rows start with: the parent rows' keys. */
typedef struct {
    const char *v[CSV_MAX_PREFIX];
    char buf[CSV_MAX_PREFIX][48];
    size_t n;
} csv_prefix;

/* The columns of D that name its rows in its child tables: its CSV key
 * columns, or (a table of the result with none) its first CSV column. */
static size_t csv_key_cols(const tprof_table_desc *d, int top_level, size_t *cols)
{
    size_t n = 0;
    for (size_t c = 0; c < d->ncols && n < CSV_MAX_PREFIX; c++)
        if ((d->cols[c].flags & TPROF_COLF_KEY) && !(d->cols[c].flags & TPROF_COLF_NO_CSV)) cols[n++] = c;
    for (size_t c = 0; !n && top_level && c < d->ncols; c++)
        if (!(d->cols[c].flags & TPROF_COLF_NO_CSV)) cols[n++] = c;
    return n;
}

/* The rows of the table reached from T's rows by child indexes PATH[0..DEPTH). */
static void csv_rows_below(const tprof_rows *t, const size_t *path, size_t depth, int top_level, const csv_prefix *p,
                           size_t limit, FILE *f)
{
    if (!t) return;
    if (!depth) {
        tprof_rows_csv(t, p->v, p->n, limit, f);
        return;
    }
    size_t keys[CSV_MAX_PREFIX], nk = csv_key_cols(t->d, top_level, keys);
    for (size_t r = 0; r < t->n; r++) {
        csv_prefix q = *p;
        for (size_t k = 0; k < nk && q.n < CSV_MAX_PREFIX; k++, q.n++) {
            const tprof_col_desc *c = &t->d->cols[keys[k]];
            const tprof_cell *v = tprof_rows_cell(t, r, keys[k]);
            if (v->null) q.v[q.n] = "";
            else if (result_kind_is_str(c->kind)) q.v[q.n] = v->v.s;
            else {
                if (result_kind_is_int(c->kind)) snprintf(q.buf[q.n], sizeof q.buf[q.n], "%" PRId64, v->v.i);
                else snprintf(q.buf[q.n], sizeof q.buf[q.n], "%.17g", v->v.d);
                q.v[q.n] = q.buf[q.n];
            }
        }
        csv_rows_below(tprof_rows_child_c(t, r, path[0]), path + 1, depth - 1, 0, &q, 0, f);
    }
}

/* Table D (of the result's table ROOT, reached by PATH[0..DEPTH)) and its
 * child tables after it, each after a "# table: NAME" line. */
static void csv_table_tree(const tprof_table_desc *root_d, const tprof_rows *root, const tprof_table_desc *d,
                           const char *name, size_t *path, size_t depth, size_t limit, FILE *f)
{
    fprintf(f, "# table: %s\n", name);
    /* the header: the keys of every table above, then D's columns */
    int first = 1;
    const tprof_table_desc *a = root_d;
    for (size_t lvl = 0; lvl < depth; lvl++) {
        size_t keys[CSV_MAX_PREFIX], nk = csv_key_cols(a, lvl == 0, keys);
        for (size_t k = 0; k < nk; k++) {
            if (!first) fputc(',', f);
            fputs(a->cols[keys[k]].csv_name ? a->cols[keys[k]].csv_name : a->cols[keys[k]].name, f);
            first = 0;
        }
        a = a->children[path[lvl]];
    }
    csv_names(d, &first, f);
    fputc('\n', f);
    csv_prefix p = { .n = 0 };
    csv_rows_below(root, path, depth, 1, &p, d->limited ? limit : 0, f);
    if (depth >= 8) return; /* descriptions nest less deep */
    for (size_t k = 0; k < d->nchildren; k++) {
        char sub[512];
        snprintf(sub, sizeof sub, "%.250s.%.250s", name, d->children[k]->name);
        path[depth] = k;
        csv_table_tree(root_d, root, d->children[k], sub, path, depth + 1, limit, f);
    }
}

void tprof_result_csv_tables(const tprof_result_desc *d, const tprof_result *r, size_t limit, FILE *f)
{
    for (size_t i = 0; i < d->ntables; i++) {
        size_t path[8];
        csv_table_tree(d->tables[i], r ? r->tables[i] : NULL, d->tables[i], d->tables[i]->name, path, 0, limit, f);
    }
}

static void json_value(tprof_jw *w, const tprof_col_desc *c, const tprof_cell *v)
{
    if (v->null) tprof_jw_null(w);
    else if (c->kind == TPROF_COL_BOOL) tprof_jw_bool(w, v->v.i != 0);
    else if (result_kind_is_int(c->kind)) tprof_jw_int(w, v->v.i);
    else if (result_kind_is_str(c->kind)) tprof_jw_str(w, v->v.s);
    else if ((c->flags & TPROF_COLF_NAN_NAMED) && !isfinite(v->v.d)) tprof_jw_str(w, nonfinite_name(v->v.d));
    else if ((c->flags & TPROF_COLF_WHOLE) && v->v.d == floor(v->v.d) && fabs(v->v.d) < 9007199254740992.0)
        tprof_jw_int(w, (int64_t)v->v.d);
    else tprof_jw_double(w, v->v.d);
}

static void json_cell(tprof_jw *w, const tprof_col_desc *c, const tprof_cell *v)
{
    if (v->null && (c->flags & TPROF_COLF_OMIT_NULL)) return;
    tprof_jw_key(w, c->name);
    json_value(w, c, v);
}

static int first_key_col(const tprof_table_desc *d)
{
    for (size_t c = 0; c < d->ncols; c++)
        if ((d->cols[c].flags & TPROF_COLF_KEY) && result_kind_is_str(d->cols[c].kind)) return (int)c;
    return -1;
}

static void json_row_members(tprof_jw *w, const tprof_rows *t, size_t r);
static void json_row_cols(tprof_jw *w, const tprof_rows *t, size_t r, int skip);
static void json_table(tprof_jw *w, const tprof_rows *t, const tprof_table_desc *d);

/* The first LIMIT rows of T when D is `limited` (0: all): a shorter view
 * of the same cells in *VIEW. */
static const tprof_rows *limited(const tprof_rows *t, const tprof_table_desc *d, size_t limit, tprof_rows *view)
{
    if (!t || !d->limited || !limit || limit >= t->n) return t;
    *view = *t;
    view->n = limit;
    return view;
}

/* Table D (rows T, which may be NULL: none yet) as a member of the object
 * being written: its name and its value, or its keyed members inline. */
static void json_rows(tprof_jw *w, const tprof_rows *t, const tprof_table_desc *d)
{
    if (d->json_omit_empty && (!t || !t->n)) return;
    if (!(d->json_keyed && d->json_inline && first_key_col(d) >= 0)) tprof_jw_key(w, d->name);
    json_table(w, t, d);
}

/* Table D as a JSON value (or, inline, as members). */
static void json_table(tprof_jw *w, const tprof_rows *t, const tprof_table_desc *d)
{
    size_t n = t ? t->n : 0;
    int kc = d->json_keyed ? first_key_col(d) : -1;
    int inline_members = kc >= 0 && d->json_inline;
    if (!n && (d->json_null_empty || d->json_single) && !inline_members) {
        tprof_jw_null(w);
        return;
    }
    if (d->json_wide) { /* [{"KEY": k, NAME: value, ...}, ...]: columns 0, 1 and 2 */
        tprof_jw_arr(w);
        for (size_t r = 0; d->ncols >= 3 && r < n; r++) {
            const tprof_cell *k = tprof_rows_cell(t, r, 0);
            if (!r || result_cell_num(&d->cols[0], k) != result_cell_num(&d->cols[0], tprof_rows_cell(t, r - 1, 0))) {
                if (r) tprof_jw_obj_end(w);
                tprof_jw_obj(w);
                json_cell(w, &d->cols[0], k);
            }
            const tprof_cell *name = tprof_rows_cell(t, r, 1), *v = tprof_rows_cell(t, r, 2);
            if (name->null || v->null) continue;
            tprof_jw_key(w, name->v.s);
            json_value(w, &d->cols[2], v);
        }
        if (n && d->ncols >= 3) tprof_jw_obj_end(w);
        tprof_jw_arr_end(w);
        return;
    }
    if (d->json_single) { /* {columns of the one row} */
        tprof_jw_obj(w);
        json_row_members(w, t, 0);
        tprof_jw_obj_end(w);
        return;
    }
    if (kc >= 0) { /* {"KEY": {other columns}, ...} */
        if (!inline_members) tprof_jw_obj(w);
        for (size_t r = 0; r < n; r++) {
            const tprof_cell *k = tprof_rows_cell(t, r, (size_t)kc);
            tprof_jw_key(w, k->null ? "" : k->v.s);
            if (d->json_keyed_value) { /* "KEY": value of the other column */
                size_t c = 0;
                while (c < d->ncols && ((int)c == kc || (d->cols[c].flags & TPROF_COLF_NO_JSON))) c++;
                if (c < d->ncols) json_value(w, &d->cols[c], tprof_rows_cell(t, r, c));
                else tprof_jw_null(w);
                continue;
            }
            tprof_jw_obj(w);
            json_row_cols(w, t, r, kc);
            tprof_jw_obj_end(w);
        }
        if (!inline_members) tprof_jw_obj_end(w);
        return;
    }
    tprof_jw_arr(w);
    if (d->json_values) { /* [v, v, ...] of the first JSON column */
        size_t c = 0;
        while (c < d->ncols && (d->cols[c].flags & TPROF_COLF_NO_JSON)) c++;
        for (size_t r = 0; c < d->ncols && r < n; r++) json_value(w, &d->cols[c], tprof_rows_cell(t, r, c));
        tprof_jw_arr_end(w);
        return;
    }
    for (size_t r = 0; r < n; r++) {
        tprof_jw_obj(w);
        json_row_members(w, t, r);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
}

/* The child tables of row R placed after column AFTER (NULL: after all). */
static void json_children_at(tprof_jw *w, const tprof_rows *t, size_t r, const char *after)
{
    const tprof_table_desc *d = t->d;
    for (size_t k = 0; k < d->nchildren; k++) {
        const tprof_table_desc *cd = d->children[k];
        if (cd->no_json || (after ? !cd->json_after || strcmp(cd->json_after, after) : cd->json_after != NULL)) continue;
        json_rows(w, tprof_rows_child_c(t, r, k), cd);
    }
}

/* Row R's JSON columns but SKIP (-1: none), each followed by the child
 * tables placed after it, then the others. */
static void json_row_cols(tprof_jw *w, const tprof_rows *t, size_t r, int skip)
{
    const tprof_table_desc *d = t->d;
    for (size_t c = 0; c < d->ncols; c++) {
        if ((int)c != skip && !(d->cols[c].flags & TPROF_COLF_NO_JSON))
            json_cell(w, &d->cols[c], tprof_rows_cell(t, r, c));
        json_children_at(w, t, r, d->cols[c].name);
    }
    json_children_at(w, t, r, NULL);
}

static void json_row_members(tprof_jw *w, const tprof_rows *t, size_t r) { json_row_cols(w, t, r, -1); }

void tprof_rows_json(const tprof_rows *t, size_t limit, tprof_jw *w)
{
    tprof_rows view;
    json_table(w, limited(t, t->d, limit, &view), t->d);
}

/* The tables of R placed after top column AFTER (NULL: after all). */
static void json_tables_at(const tprof_result *r, const char *after, size_t limit, tprof_jw *w)
{
    tprof_rows view;
    for (size_t i = 0; i < r->d->ntables; i++) {
        const tprof_table_desc *d = r->d->tables[i];
        if (d->no_json || (after ? !d->json_after || strcmp(d->json_after, after) : d->json_after != NULL)) continue;
        json_rows(w, limited(r->tables[i], d, limit, &view), d);
    }
}

void tprof_result_json_members(const tprof_result *r, size_t limit, tprof_jw *w)
{
    if (r->d->json_tables_first) json_tables_at(r, NULL, limit, w);
    const tprof_table_desc *d = r->top->d;
    for (size_t c = 0; c < d->ncols; c++) {
        if (!(d->cols[c].flags & TPROF_COLF_NO_JSON)) json_cell(w, &d->cols[c], tprof_rows_cell(r->top, 0, c));
        json_tables_at(r, d->cols[c].name, limit, w);
    }
    if (!r->d->json_tables_first) json_tables_at(r, NULL, limit, w);
}

static const char *kind_name(tprof_col_kind k)
{
    static const char *const names[] = { "count", "duration (ns)", "bytes", "ratio (0..1)", "rate", "timestamp (ns)",
                                         "rank", "integer", "real", "string", "enum", "boolean",
                                         "mean duration (ns)" };
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

static const char *combine_name(tprof_combine c)
{
    static const char *const names[] = { "sum", "min", "max", "weighted mean", "distribution (p50)", "first",
                                         "per rank only", "derived" };
    return (unsigned)c < sizeof names / sizeof *names ? names[c] : "?";
}

static void table_markdown(const tprof_table_desc *d, const char *path, int in_csv, FILE *f)
{
    fprintf(f, "\n### `%s`%s%s%s\n\n", path,
            d->json_keyed && d->json_inline ? " (JSON: members of the parent row, named by the first key column)"
            : d->json_keyed && d->json_keyed_value ? " (JSON: an object of values keyed by the first key column)"
            : d->json_keyed ? " (JSON: an object keyed by the first key column)"
            : d->json_values ? " (JSON: an array of the column's values)"
            : d->json_wide ? " (JSON: wide, an object per key with a member per name)"
            : d->json_single && d->json_omit_empty ? " (JSON: an object, left out when empty)"
            : d->json_single ? " (JSON: an object, null when empty)"
            : d->json_null_empty ? " (JSON: null when empty)"
            : d->no_json ? " (not in JSON)"
            : d->json_omit_empty && d->limited ? " (JSON: left out when empty; --top limits its rows)"
            : d->json_omit_empty ? " (JSON: left out when empty)"
            : d->limited ? " (--top limits its rows)" : "",
            d->doc ? ": " : "", d->doc ? d->doc : "");
    fprintf(f, "| column | kind | across ranks | in | meaning |\n|---|---|---|---|---|\n");
    for (size_t c = 0; c < d->ncols; c++) {
        const tprof_col_desc *cd = &d->cols[c];
        char in[48] = "";
        size_t n = 0;
        if (!(cd->flags & TPROF_COLF_NO_TABLE)) n += (size_t)snprintf(in + n, sizeof in - n, "table ");
        if (in_csv && !(cd->flags & TPROF_COLF_NO_CSV)) n += (size_t)snprintf(in + n, sizeof in - n, "CSV ");
        if (!d->no_json && !(cd->flags & TPROF_COLF_NO_JSON))
            n += (size_t)snprintf(in + n, sizeof in - n, (cd->flags & TPROF_COLF_OMIT_NULL) ? "JSON (if set) " : "JSON ");
        if (n) in[n - 1] = 0;
        char how[96];
        tprof_combine cb = (cd->flags & TPROF_COLF_KEY) ? TPROF_COMBINE_FIRST : cd->combine;
        if (cb == TPROF_COMBINE_DERIVED) snprintf(how, sizeof how, "%s / %s after combining", cd->num, cd->den);
        else if (cb == TPROF_COMBINE_WMEAN) snprintf(how, sizeof how, "mean weighted by %s", cd->weight);
        else snprintf(how, sizeof how, "%s", (cd->flags & TPROF_COLF_KEY) ? "the row's key" : combine_name(cb));
        char csv[96] = "";
        if (in_csv && cd->csv_name && !(cd->flags & TPROF_COLF_NO_CSV))
            snprintf(csv, sizeof csv, " (CSV: `%s`)", cd->csv_name);
        fprintf(f, "| `%s`%s%s | %s | %s | %s | %s |\n", cd->name, csv,
                (cd->flags & TPROF_COLF_METRIC) ? " (key metric)" : "", kind_name(cd->kind), how, in,
                cd->doc ? cd->doc : "");
    }
    for (size_t k = 0; k < d->nchildren; k++) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s[].%s", path, d->children[k]->name);
        table_markdown(d->children[k], sub, in_csv == 2 ? 2 : 0, f); /* 2: every table in CSV */
    }
}

void tprof_result_desc_markdown(const tprof_result_desc *d, FILE *f)
{
    fprintf(f, "\n## `%s` (version %u)\n\n", d->name, d->version);
    if (d->doc) fprintf(f, "%s\n\n", d->doc);
    if (d->internal) fprintf(f, "Not printed by a command: a per-rank input, written and read back as results are.\n");
    else if (d->whole_run && d->no_csv) fprintf(f, "One result for all traces; no CSV form.\n");
    else if (d->whole_run && d->csv_tables)
        fprintf(f, "One result for all traces. CSV: every table in turn, each after a line `# table: NAME`; a "
                   "child table as `PARENT.CHILD`, its rows after the keys of their parent rows (a table without "
                   "key columns: its first column).\n");
    else if (d->whole_run && d->csv_table && d->json_rows_only)
        fprintf(f, "One result for all traces. CSV: the rows of table `%s`; JSON: an array of them.\n",
                d->tables[d->csv_table - 1]->name);
    else if (d->whole_run && d->csv_table)
        fprintf(f, "One result for all traces. CSV: the rows of table `%s`.\n", d->tables[d->csv_table - 1]->name);
    else if (d->csv_table)
        fprintf(f, "CSV: the rows of table `%s`, after trace,file.\n", d->tables[d->csv_table - 1]->name);
    else fprintf(f, "CSV: one row per trace (the top table), after trace,file.\n");
    if (d->no_label) fprintf(f, "Each trace is named by its file alone: no label in JSON, no trace column in CSV.\n");
    table_markdown(d->top, "(top)", !d->csv_tables && d->csv_table == 0, f);
    for (size_t i = 0; i < d->ntables; i++)
        table_markdown(d->tables[i], d->tables[i]->name, d->csv_tables ? 2 : d->csv_table == (int)i + 1, f);
}
