/* The across-ranks view of results of one description: the distribution of
 * a column, the worst ranks by the key metric, and the combined result by
 * each column's rule. */
#include "result_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/trace.h"

typedef struct {
    double v;
    int64_t rank;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Nearest-rank percentile of N sorted values: the one at ceil(P * N). */
static double nearest_rank(const ranked *v, size_t n, double p)
{
    size_t i = (size_t)ceil(p * (double)n);
    return v[i ? i - 1 : 0].v;
}

static int metric_col(const tprof_table_desc *d)
{
    for (size_t c = 0; c < d->ncols; c++)
        if (d->cols[c].flags & TPROF_COLF_METRIC) return (int)c;
    return -1;
}

int tprof_dist_of(const double *values, const int64_t *ranks, size_t n, tprof_col_dist *out)
{
    memset(out, 0, sizeof *out);
    out->min_rank = out->max_rank = -1;
    ranked *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return TPROF_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(values[i])) v[m++] = (ranked){ values[i], ranks ? ranks[i] : (int64_t)i };
    out->n = m;
    if (m) {
        qsort(v, m, sizeof *v, cmp_ranked);
        out->min = v[0].v;
        out->min_rank = v[0].rank;
        out->max = v[m - 1].v;
        size_t j = m - 1; /* the lowest rank holding the maximum */
        while (j && v[j - 1].v == out->max) j--;
        out->max_rank = v[j].rank;
        out->p50 = nearest_rank(v, m, 0.5);
        out->p90 = nearest_rank(v, m, 0.9);
    }
    free(v);
    return 0;
}

size_t tprof_dist_worst(const double *values, size_t n, size_t k, int lowest, size_t *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        double x = values[i];
        if (isnan(x)) continue;
        /* insert I among the M kept, worst first; a tie keeps the lower index first */
        size_t j = m < k ? m++ : k;
        while (j > 0 && (lowest ? x < values[out[j - 1]] : x > values[out[j - 1]])) {
            if (j < k) out[j] = out[j - 1];
            j--;
        }
        if (j < k) out[j] = i;
    }
    return m;
}

int tprof_ranks_dist(const tprof_result *const *results, const int64_t *ranks, size_t n, int col,
                     tprof_col_dist *out)
{
    memset(out, 0, sizeof *out);
    out->min_rank = out->max_rank = -1;
    if (!n) return 0;
    const tprof_table_desc *d = results[0]->d->top;
    if (col < 0 || (size_t)col >= d->ncols || result_kind_is_str(d->cols[col].kind)) return TPROF_EUSAGE;
    double *v = malloc(n * sizeof *v);
    if (!v) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const tprof_cell *c = tprof_rows_cell(results[i]->top, 0, (size_t)col);
        v[i] = c->null ? NAN : result_cell_num(&d->cols[col], c);
    }
    int rc = tprof_dist_of(v, ranks, n, out);
    free(v);
    return rc;
}

typedef struct {
    double v;
    int null;
    int64_t rank;
    size_t index;
    int low_worst;
} worst_item;

static int cmp_worst(const void *a, const void *b)
{
    const worst_item *x = a, *y = b;
    if (x->null != y->null) return x->null - y->null;
    if (!x->null && x->v != y->v) return (x->v > y->v) == !x->low_worst ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

size_t tprof_ranks_worst(const tprof_result *const *results, const int64_t *ranks, size_t n, size_t k,
                         size_t *out)
{
    if (!n || !k) return 0;
    const tprof_table_desc *d = results[0]->d->top;
    int col = metric_col(d);
    if (col < 0) return 0;
    worst_item *w = malloc(n * sizeof *w);
    if (!w) return 0;
    int low = (d->cols[col].flags & TPROF_COLF_LOW_WORST) != 0;
    for (size_t i = 0; i < n; i++) {
        const tprof_cell *c = tprof_rows_cell(results[i]->top, 0, (size_t)col);
        w[i] = (worst_item){ c->null ? 0 : result_cell_num(&d->cols[col], c), c->null, ranks ? ranks[i] : (int64_t)i, i, low };
    }
    qsort(w, n, sizeof *w, cmp_worst);
    size_t m = k < n ? k : n;
    for (size_t i = 0; i < m; i++) out[i] = w[i].index;
    free(w);
    return m;
}

/* ---- combining ---------------------------------------------------------------- */

/* The rows of one key across ranks: (table, row) pairs in rank order. */
typedef struct {
    const tprof_rows **t;
    size_t *row;
    size_t n, cap;
} group;

static int group_add(group *g, const tprof_rows *t, size_t row)
{
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 8;
        const tprof_rows **nt = realloc(g->t, cap * sizeof *nt);
        if (!nt) return TPROF_ENOMEM;
        g->t = nt;
        size_t *nr = realloc(g->row, cap * sizeof *nr);
        if (!nr) return TPROF_ENOMEM;
        g->row = nr;
        g->cap = cap;
    }
    g->t[g->n] = t;
    g->row[g->n++] = row;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Column C of the group's rows, by its rule, into row DR of DST. */
static int combine_cell(tprof_rows *dst, size_t dr, size_t c, const group *g)
{
    const tprof_table_desc *d = dst->d;
    const tprof_col_desc *cd = &d->cols[c];
    tprof_combine how = (cd->flags & TPROF_COLF_KEY) ? TPROF_COMBINE_FIRST : cd->combine;
    if (how == TPROF_COMBINE_PER_RANK || how == TPROF_COMBINE_DERIVED) return 0; /* null; derived later */
    if (how == TPROF_COMBINE_FIRST || result_kind_is_str(cd->kind)) {
        for (size_t i = 0; i < g->n; i++) {
            const tprof_cell *v = tprof_rows_cell(g->t[i], g->row[i], c);
            if (v->null) continue;
            if (result_kind_is_str(cd->kind)) return tprof_rows_set_s(dst, dr, c, v->v.s);
            dst->cells[dr * d->ncols + c] = *v;
            return 0;
        }
        return 0;
    }
    int isint = result_kind_is_int(cd->kind);
    int wcol = how == TPROF_COMBINE_WMEAN ? tprof_table_col(d, cd->weight) : -1;
    double *vals = how == TPROF_COMBINE_DIST ? malloc(g->n * sizeof *vals) : NULL;
    if (how == TPROF_COMBINE_DIST && !vals) return TPROF_ENOMEM;
    size_t m = 0;
    int64_t isum = 0, imin = INT64_MAX, imax = INT64_MIN;
    double dsum = 0, dmin = INFINITY, dmax = -INFINITY, wsum = 0;
    for (size_t i = 0; i < g->n; i++) {
        const tprof_cell *v = tprof_rows_cell(g->t[i], g->row[i], c);
        if (v->null) continue;
        double x = result_cell_num(cd, v);
        if (isint) {
            isum = tprof_sat_add(isum, v->v.i);
            if (v->v.i < imin) imin = v->v.i;
            if (v->v.i > imax) imax = v->v.i;
        }
        if (how == TPROF_COMBINE_WMEAN) {
            const tprof_cell *wv = wcol >= 0 ? tprof_rows_cell(g->t[i], g->row[i], (size_t)wcol) : NULL;
            double wt = wv && !wv->null ? result_cell_num(&d->cols[wcol], wv) : 0;
            dsum += x * wt;
            wsum += wt;
        } else
            dsum += x;
        if (x < dmin) dmin = x;
        if (x > dmax) dmax = x;
        if (vals) vals[m] = x;
        m++;
    }
    if (!m) {
        free(vals);
        return 0;
    }
    switch (how) {
    case TPROF_COMBINE_SUM:
        if (isint) tprof_rows_set_i(dst, dr, c, isum);
        else tprof_rows_set_d(dst, dr, c, dsum);
        break;
    case TPROF_COMBINE_MIN:
        if (isint) tprof_rows_set_i(dst, dr, c, imin);
        else tprof_rows_set_d(dst, dr, c, dmin);
        break;
    case TPROF_COMBINE_MAX:
        if (isint) tprof_rows_set_i(dst, dr, c, imax);
        else tprof_rows_set_d(dst, dr, c, dmax);
        break;
    case TPROF_COMBINE_WMEAN: {
        double mean = wsum > 0 ? dsum / wsum : NAN;
        if (!(wsum > 0)) break;
        if (isint) tprof_rows_set_i(dst, dr, c, (int64_t)llround(mean));
        else tprof_rows_set_d(dst, dr, c, mean);
        break;
    }
    case TPROF_COMBINE_DIST: {
        qsort(vals, m, sizeof *vals, cmp_double);
        size_t i = (size_t)ceil(0.5 * (double)m);
        double p50 = vals[i ? i - 1 : 0];
        if (isint) tprof_rows_set_i(dst, dr, c, (int64_t)p50);
        else tprof_rows_set_d(dst, dr, c, p50);
        break;
    }
    default: break;
    }
    free(vals);
    return 0;
}

/* A row's identity: its key cells joined ("\x1f" between), or its index
 * when the table has no key column. */
static char *row_key(const tprof_rows *t, size_t r)
{
    const tprof_table_desc *d = t->d;
    size_t cap = 64, len = 0;
    char *k = malloc(cap);
    if (!k) return NULL;
    int any = 0;
    for (size_t c = 0; c < d->ncols; c++) {
        if (!(d->cols[c].flags & TPROF_COLF_KEY)) continue;
        any = 1;
        const tprof_cell *v = tprof_rows_cell(t, r, c);
        char num[32];
        const char *s = v->null ? "\x1e" : result_kind_is_str(d->cols[c].kind) ? v->v.s : num;
        if (!v->null && !result_kind_is_str(d->cols[c].kind))
            snprintf(num, sizeof num, "%.17g", result_cell_num(&d->cols[c], v));
        size_t n = strlen(s);
        if (len + n + 2 > cap) {
            while (len + n + 2 > cap) cap *= 2;
            char *nk = realloc(k, cap);
            if (!nk) {
                free(k);
                return NULL;
            }
            k = nk;
        }
        memcpy(k + len, s, n);
        len += n;
        k[len++] = '\x1f';
    }
    if (!any) len = (size_t)snprintf(k, cap, "#%zu", r);
    k[len] = 0;
    return k;
}

static int combine_rows(tprof_rows *dst, const tprof_rows *const *src, size_t n, int depth);

/* Fills row DR of DST (columns, then children) from the group. */
static int combine_group(tprof_rows *dst, size_t dr, const group *g, int depth)
{
    int rc = 0;
    for (size_t c = 0; !rc && c < dst->d->ncols; c++) rc = combine_cell(dst, dr, c, g);
    for (size_t k = 0; !rc && k < dst->d->nchildren; k++) {
        const tprof_rows **kids = malloc((g->n ? g->n : 1) * sizeof *kids);
        if (!kids) return TPROF_ENOMEM;
        size_t m = 0;
        for (size_t i = 0; i < g->n; i++) {
            const tprof_rows *kid = tprof_rows_child_c(g->t[i], g->row[i], k);
            if (kid) kids[m++] = kid;
        }
        tprof_rows *out = m ? tprof_rows_child(dst, dr, k) : NULL;
        if (m && !out) rc = TPROF_ENOMEM;
        else if (m) rc = combine_rows(out, kids, m, depth + 1);
        free(kids);
    }
    return rc;
}

/* Rows of SRC[0..N) (one table per rank, rank order) grouped by key in order
 * of first appearance, one combined row per group. Quadratic in distinct
 * keys only through a linear probe table. */
static int combine_rows(tprof_rows *dst, const tprof_rows *const *src, size_t n, int depth)
{
    if (depth > 16) return TPROF_ELIMIT;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += src[i]->n;
    if (!total) return 0;
    size_t nslots = 16;
    while (nslots < total * 2) nslots *= 2;
    char **keys = calloc(nslots, sizeof *keys);
    size_t *slot_group = calloc(nslots, sizeof *slot_group);
    group *groups = calloc(total, sizeof *groups);
    size_t ngroups = 0;
    int rc = keys && slot_group && groups ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++)
        for (size_t r = 0; !rc && r < src[i]->n; r++) {
            char *k = row_key(src[i], r);
            if (!k) {
                rc = TPROF_ENOMEM;
                break;
            }
            uint64_t h = 1469598103934665603ull;
            for (const char *p = k; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
            size_t s = h & (nslots - 1);
            while (keys[s] && strcmp(keys[s], k)) s = (s + 1) & (nslots - 1);
            if (!keys[s]) {
                keys[s] = k;
                slot_group[s] = ngroups++;
            } else
                free(k);
            rc = group_add(&groups[slot_group[s]], src[i], r);
        }
    for (size_t gi = 0; !rc && gi < ngroups; gi++) {
        long dr = dst == dst->owner->top ? 0 : tprof_rows_add(dst);
        if (dr < 0) rc = TPROF_ENOMEM;
        else rc = combine_group(dst, (size_t)dr, &groups[gi], depth);
    }
    for (size_t s = 0; keys && s < nslots; s++) free(keys[s]);
    for (size_t gi = 0; groups && gi < ngroups; gi++) {
        free(groups[gi].t);
        free(groups[gi].row);
    }
    free(keys);
    free(slot_group);
    free(groups);
    return rc;
}

tprof_result *tprof_ranks_combine(const tprof_result *const *results, const int64_t *ranks, size_t n)
{
    if (!n) return NULL;
    const tprof_result_desc *d = results[0]->d;
    tprof_result *out = tprof_result_new(d);
    size_t *order = malloc(n * sizeof *order);
    const tprof_rows **src = malloc(n * sizeof *src);
    int rc = out && order && src ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        if (results[i]->d != d) rc = TPROF_EUSAGE;
        order[i] = i;
    }
    if (!rc && ranks) rc = tprof_rank_order(ranks, n, order); /* the rank order every command uses */
    /* the top table has no key: its one row per rank is one group */
    if (!rc) {
        group g = { 0 };
        for (size_t i = 0; !rc && i < n; i++) rc = group_add(&g, results[order[i]]->top, 0);
        if (!rc) rc = combine_group(out->top, 0, &g, 0);
        free(g.t);
        free(g.row);
    }
    for (size_t t = 0; !rc && t < d->ntables; t++) {
        for (size_t i = 0; i < n; i++) src[i] = results[order[i]]->tables[t];
        rc = combine_rows(out->tables[t], src, n, 0);
    }
    free(order);
    free(src);
    if (rc) {
        tprof_result_free(out);
        return NULL;
    }
    tprof_result_derive(out);
    return out;
}
