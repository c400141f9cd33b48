/* The across-ranks view of results of one description: the distribution of
 * a column and the worst ranks by the key metric (fold.c combines them). */
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
