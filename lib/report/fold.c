/* Combining results across ranks one result at a time (tprof_fold): what a
 * combined result needs of each rank is kept per row key and column (sums,
 * extremes, the first value, a distribution's values), never the ranks'
 * results, so that combining N ranks holds one rank's result at a time. */
#include "result_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/trace.h"
#include "../util/grow.h"
#include "../util/strtab.h"

/* A table more than this deep below the result is refused (TPROF_ELIMIT). */
#define FOLD_MAX_DEPTH 16

/* One column of one row key, over the rows folded in so far. */
typedef struct {
    size_t m; /* non-null values */
    int64_t isum, imin, imax;
    double dsum, dmin, dmax, wsum;
    int has_first;
    tprof_cell first; /* FIRST, key and string columns: the first non-null (a string: FIRST_S) */
    char *first_s;
    double *vals; /* DIST: every value, in rank order */
    size_t cap;
} col_acc;

typedef struct table_acc table_acc;

/* One row key: its columns and its child tables. */
typedef struct {
    col_acc *cols;
    table_acc **kids; /* per child table; NULL until a row of the key has one */
} group_acc;

/* One table: its row keys in order of first appearance (key id K, in the
 * table's own string table, is group K - 1: id 0 is the empty string, no
 * key). The top table has one group (its one row per rank) and no keys. */
struct table_acc {
    const tprof_table_desc *d;
    int depth;
    int *wcol; /* per column: the WMEAN weight's column, -1 */
    group_acc *groups;
    size_t ngroups, cap;
    tprof_strtab keys;
    int keys_made;
    char *key; /* the row key being built */
    size_t key_cap;
};

struct tprof_fold {
    const tprof_result_desc *d;
    table_acc *top;
    table_acc **tables;
    size_t n; /* results folded in */
    int rc;   /* the first error; the fold then refuses more */
};

static void table_acc_free(table_acc *t);

static void group_free(const tprof_table_desc *d, group_acc *g)
{
    for (size_t c = 0; g->cols && c < d->ncols; c++) {
        free(g->cols[c].first_s);
        free(g->cols[c].vals);
    }
    for (size_t k = 0; g->kids && k < d->nchildren; k++) table_acc_free(g->kids[k]);
    free(g->cols);
    free(g->kids);
}

static void table_acc_free(table_acc *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->ngroups; i++) group_free(t->d, &t->groups[i]);
    if (t->keys_made) tprof_strtab_free(&t->keys);
    free(t->groups);
    free(t->key);
    free(t->wcol);
    free(t);
}

/* How column C combines: a key column is its first value. */
static tprof_combine rule_of(const tprof_col_desc *cd)
{
    return (cd->flags & TPROF_COLF_KEY) ? TPROF_COMBINE_FIRST : cd->combine;
}

static table_acc *table_acc_new(const tprof_table_desc *d, int depth)
{
    table_acc *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->d = d;
    t->depth = depth;
    t->wcol = malloc((d->ncols ? d->ncols : 1) * sizeof *t->wcol);
    if (!t->wcol) {
        free(t);
        return NULL;
    }
    for (size_t c = 0; c < d->ncols; c++) /* what col_add weighs by: a numeric WMEAN column's weight */
        t->wcol[c] = rule_of(&d->cols[c]) == TPROF_COMBINE_WMEAN && !result_kind_is_str(d->cols[c].kind) &&
                             d->cols[c].weight
                         ? tprof_table_col(d, d->cols[c].weight)
                         : -1;
    return t;
}

/* Row R of T into column C's accumulation. */
static int col_add(const table_acc *ta, size_t c, col_acc *a, const tprof_rows *t, size_t r)
{
    const tprof_col_desc *cd = &ta->d->cols[c];
    tprof_combine how = rule_of(cd);
    if (how == TPROF_COMBINE_PER_RANK || how == TPROF_COMBINE_DERIVED) return 0; /* null; derived later */
    const tprof_cell *v = tprof_rows_cell(t, r, c);
    if (v->null) return 0;
    if (how == TPROF_COMBINE_FIRST || result_kind_is_str(cd->kind)) {
        if (a->has_first) return 0;
        if (result_kind_is_str(cd->kind) && !(a->first_s = strdup(v->v.s))) return TPROF_ENOMEM;
        a->first = *v;
        a->has_first = 1;
        return 0;
    }
    double x = result_cell_num(cd, v);
    if (!a->m) {
        a->imin = INT64_MAX, a->imax = INT64_MIN;
        a->dmin = INFINITY, a->dmax = -INFINITY;
    }
    if (result_kind_is_int(cd->kind)) {
        a->isum = tprof_sat_add(a->isum, v->v.i);
        if (v->v.i < a->imin) a->imin = v->v.i;
        if (v->v.i > a->imax) a->imax = v->v.i;
    }
    if (how == TPROF_COMBINE_WMEAN) {
        int w = ta->wcol[c];
        const tprof_cell *wv = w >= 0 ? tprof_rows_cell(t, r, (size_t)w) : NULL;
        double wt = wv && !wv->null ? result_cell_num(&ta->d->cols[w], wv) : 0;
        a->dsum += x * wt;
        a->wsum += wt;
    } else
        a->dsum += x;
    if (x < a->dmin) a->dmin = x;
    if (x > a->dmax) a->dmax = x;
    if (how == TPROF_COMBINE_DIST) {
        if (tprof_grow_items((void **)&a->vals, &a->cap, a->m + 1, sizeof *a->vals)) return TPROF_ENOMEM;
        a->vals[a->m] = x;
    }
    a->m++;
    return 0;
}

static int table_add_rows(table_acc *ta, const tprof_rows *t);

/* Row R of T into group G: its columns, then its child tables. */
static int group_add_row(table_acc *ta, group_acc *g, const tprof_rows *t, size_t r)
{
    const tprof_table_desc *d = ta->d;
    if (!g->cols) {
        g->cols = calloc(d->ncols ? d->ncols : 1, sizeof *g->cols);
        g->kids = calloc(d->nchildren ? d->nchildren : 1, sizeof *g->kids);
        if (!g->cols || !g->kids) return TPROF_ENOMEM;
    }
    int rc = 0;
    for (size_t c = 0; !rc && c < d->ncols; c++) rc = col_add(ta, c, &g->cols[c], t, r);
    for (size_t k = 0; !rc && k < d->nchildren; k++) {
        const tprof_rows *kid = tprof_rows_child_c(t, r, k);
        if (!kid) continue;
        if (!g->kids[k]) {
            if (ta->depth + 1 > FOLD_MAX_DEPTH) return TPROF_ELIMIT;
            if (!(g->kids[k] = table_acc_new(d->children[k], ta->depth + 1))) return TPROF_ENOMEM;
        }
        rc = table_add_rows(g->kids[k], kid);
    }
    return rc;
}

/* Row R's identity into TA's key buffer: its key cells joined ("\x1f"
 * after each), or its index when the table has no key column. Its length,
 * or SIZE_MAX when out of memory. */
static size_t row_key(table_acc *ta, const tprof_rows *t, size_t r)
{
    const tprof_table_desc *d = t->d;
    size_t len = 0;
    int any = 0;
    for (size_t c = 0; c <= d->ncols; c++) {
        char num[32];
        const char *s;
        if (c == d->ncols) { /* the end: the index when no column is a key */
            if (any) break;
            snprintf(num, sizeof num, "#%zu", r);
            s = num;
        } else if (!(d->cols[c].flags & TPROF_COLF_KEY))
            continue;
        else {
            any = 1;
            const tprof_cell *v = tprof_rows_cell(t, r, c);
            s = v->null ? "\x1e" : result_kind_is_str(d->cols[c].kind) ? v->v.s : num;
            if (!v->null && !result_kind_is_str(d->cols[c].kind))
                snprintf(num, sizeof num, "%.17g", result_cell_num(&d->cols[c], v));
        }
        size_t n = strlen(s);
        if (len + n + 2 > ta->key_cap) {
            size_t cap = ta->key_cap ? ta->key_cap : 64;
            while (len + n + 2 > cap) cap *= 2;
            char *nk = realloc(ta->key, cap);
            if (!nk) return SIZE_MAX;
            ta->key = nk;
            ta->key_cap = cap;
        }
        memcpy(ta->key + len, s, n);
        len += n;
        if (c < d->ncols) ta->key[len++] = '\x1f';
    }
    ta->key[len] = 0;
    return len;
}

/* The group of the key in TA's buffer (LEN bytes), a new one in first-seen
 * order; NULL when out of memory. */
static group_acc *group_of(table_acc *ta, size_t len)
{
    if (!ta->keys_made) {
        if (tprof_strtab_init(&ta->keys)) return NULL;
        ta->keys_made = 1;
    }
    uint32_t id = tprof_strtab_intern(&ta->keys, ta->key, len);
    if (id == UINT32_MAX || id == 0) return NULL; /* a key is never empty */
    if (id - 1 < ta->ngroups) return &ta->groups[id - 1];
    if (tprof_grow_items((void **)&ta->groups, &ta->cap, ta->ngroups + 1, sizeof *ta->groups)) return NULL;
    ta->groups[ta->ngroups] = (group_acc){ 0 };
    return &ta->groups[ta->ngroups++];
}

/* Every row of T, each into the group of its key. */
static int table_add_rows(table_acc *ta, const tprof_rows *t)
{
    int rc = 0;
    for (size_t r = 0; !rc && r < t->n; r++) {
        size_t len = row_key(ta, t, r);
        group_acc *g = len != SIZE_MAX ? group_of(ta, len) : NULL;
        rc = g ? group_add_row(ta, g, t, r) : TPROF_ENOMEM;
    }
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Column C of group G, by its rule, into row DR of DST. */
static int col_emit(tprof_rows *dst, size_t dr, size_t c, col_acc *a)
{
    const tprof_col_desc *cd = &dst->d->cols[c];
    tprof_combine how = rule_of(cd);
    if (how == TPROF_COMBINE_PER_RANK || how == TPROF_COMBINE_DERIVED) return 0;
    if (how == TPROF_COMBINE_FIRST || result_kind_is_str(cd->kind)) {
        if (!a->has_first) return 0;
        if (result_kind_is_str(cd->kind)) return tprof_rows_set_s(dst, dr, c, a->first_s);
        dst->cells[dr * dst->d->ncols + c] = a->first;
        return 0;
    }
    if (!a->m) return 0;
    int isint = result_kind_is_int(cd->kind);
    switch (how) {
    case TPROF_COMBINE_SUM:
        if (isint) tprof_rows_set_i(dst, dr, c, a->isum);
        else tprof_rows_set_d(dst, dr, c, a->dsum);
        break;
    case TPROF_COMBINE_MIN:
        if (isint) tprof_rows_set_i(dst, dr, c, a->imin);
        else tprof_rows_set_d(dst, dr, c, a->dmin);
        break;
    case TPROF_COMBINE_MAX:
        if (isint) tprof_rows_set_i(dst, dr, c, a->imax);
        else tprof_rows_set_d(dst, dr, c, a->dmax);
        break;
    case TPROF_COMBINE_WMEAN:
        if (!(a->wsum > 0)) break;
        if (isint) tprof_rows_set_i(dst, dr, c, (int64_t)llround(a->dsum / a->wsum));
        else tprof_rows_set_d(dst, dr, c, a->dsum / a->wsum);
        break;
    case TPROF_COMBINE_DIST: {
        /* the nearest-rank median: the value at ceil(m / 2) in sorted order */
        qsort(a->vals, a->m, sizeof *a->vals, cmp_double);
        size_t i = (size_t)ceil(0.5 * (double)a->m);
        double p50 = a->vals[i ? i - 1 : 0];
        if (isint) tprof_rows_set_i(dst, dr, c, (int64_t)p50);
        else tprof_rows_set_d(dst, dr, c, p50);
        break;
    }
    default: break;
    }
    return 0;
}

static int table_emit(tprof_rows *dst, table_acc *ta);

/* Group G into row DR of DST: its columns, then its child tables. */
static int group_emit(tprof_rows *dst, size_t dr, table_acc *ta, group_acc *g)
{
    int rc = 0;
    for (size_t c = 0; !rc && g->cols && c < ta->d->ncols; c++) rc = col_emit(dst, dr, c, &g->cols[c]);
    for (size_t k = 0; !rc && g->kids && k < ta->d->nchildren; k++) {
        if (!g->kids[k]) continue;
        tprof_rows *out = tprof_rows_child(dst, dr, k);
        rc = out ? table_emit(out, g->kids[k]) : TPROF_ENOMEM;
    }
    return rc;
}

static int table_emit(tprof_rows *dst, table_acc *ta)
{
    int rc = 0;
    for (size_t gi = 0; !rc && gi < ta->ngroups; gi++) {
        long dr = tprof_rows_add(dst);
        rc = dr < 0 ? TPROF_ENOMEM : group_emit(dst, (size_t)dr, ta, &ta->groups[gi]);
    }
    return rc;
}

tprof_fold *tprof_fold_new(const tprof_result_desc *d)
{
    tprof_fold *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->d = d;
    f->top = table_acc_new(d->top, 0);
    f->tables = calloc(d->ntables ? d->ntables : 1, sizeof *f->tables);
    int ok = f->top && f->tables;
    for (size_t t = 0; ok && t < d->ntables; t++) ok = (f->tables[t] = table_acc_new(d->tables[t], 0)) != NULL;
    if (!ok) {
        tprof_fold_free(f);
        return NULL;
    }
    return f;
}

int tprof_fold_add(tprof_fold *f, const tprof_result *r)
{
    if (f->rc) return f->rc;
    if (r->d != f->d) return f->rc = TPROF_EUSAGE;
    /* the top table has no key: its one row per rank is one group */
    group_acc *g = f->top->ngroups ? &f->top->groups[0] : NULL;
    if (!g) {
        f->top->groups = calloc(1, sizeof *f->top->groups);
        if (!f->top->groups) return f->rc = TPROF_ENOMEM;
        f->top->ngroups = f->top->cap = 1;
        g = &f->top->groups[0];
    }
    int rc = group_add_row(f->top, g, r->top, 0);
    for (size_t t = 0; !rc && t < f->d->ntables; t++) rc = table_add_rows(f->tables[t], r->tables[t]);
    if (!rc) f->n++;
    return f->rc = rc;
}

size_t tprof_fold_count(const tprof_fold *f) { return f->n; }

int tprof_fold_end(tprof_fold *f, tprof_result **out)
{
    *out = NULL;
    int rc = f->rc;
    if (!rc && !f->n) rc = TPROF_EUSAGE;
    tprof_result *r = rc ? NULL : tprof_result_new(f->d);
    if (!rc && !r) rc = TPROF_ENOMEM;
    if (!rc) rc = group_emit(r->top, 0, f->top, &f->top->groups[0]);
    for (size_t t = 0; !rc && t < f->d->ntables; t++) rc = table_emit(r->tables[t], f->tables[t]);
    tprof_fold_free(f);
    if (rc) {
        tprof_result_free(r);
        return rc;
    }
    tprof_result_derive(r);
    *out = r;
    return 0;
}

void tprof_fold_free(tprof_fold *f)
{
    if (!f) return;
    table_acc_free(f->top);
    for (size_t t = 0; f->tables && t < f->d->ntables; t++) table_acc_free(f->tables[t]);
    free(f->tables);
    free(f);
}

tprof_result *tprof_ranks_combine(const tprof_result *const *results, const int64_t *ranks, size_t n)
{
    if (!n) return NULL;
    size_t *order = malloc(n * sizeof *order);
    tprof_fold *f = order ? tprof_fold_new(results[0]->d) : NULL;
    int rc = f ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) order[i] = i;
    if (!rc && ranks) rc = tprof_rank_order(ranks, n, order); /* the rank order every command uses */
    for (size_t i = 0; !rc && i < n; i++) rc = tprof_fold_add(f, results[order[i]]);
    free(order);
    tprof_result *out = NULL;
    if (rc) tprof_fold_free(f);
    else (void)tprof_fold_end(f, &out);
    return out;
}
