/* Two snapshots compared: bytes live at each device's peak, summed over
 * devices per call site, B - A, largest growth first. */
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/mem.h"

typedef struct {
    const char *site;
    int64_t bytes;
    int side;
} row;

static int cmp_name(const void *a, const void *b)
{
    const row *x = a, *y = b;
    int c = strcmp(x->site, y->site);
    return c ? c : x->side - y->side;
}

static int cmp_delta(const void *a, const void *b)
{
    const tprof_mem_delta *x = a, *y = b;
    if (x->delta != y->delta) return x->delta > y->delta ? -1 : 1;
    return strcmp(x->site, y->site);
}

int tprof_mem_compare_reports(const tprof_mem_report *a, const tprof_mem_report *b, tprof_mem_compare *out)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    for (size_t i = 0; i < a->ndev; i++) n += a->dev[i].nsites;
    for (size_t i = 0; i < b->ndev; i++) n += b->dev[i].nsites;
    row *rows = malloc((n ? n : 1) * sizeof *rows);
    out->rows = calloc(n ? n : 1, sizeof *out->rows);
    if (!rows || !out->rows) {
        free(rows);
        free(out->rows);
        out->rows = NULL;
        return TPROF_ENOMEM;
    }
    size_t k = 0;
    const tprof_mem_report *side[2] = { a, b };
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < side[s]->ndev; i++) {
            const tprof_mem_device *d = &side[s]->dev[i];
            if (s == 0) out->peak_a += d->peak_active;
            else out->peak_b += d->peak_active;
            for (size_t j = 0; j < d->nsites; j++) rows[k++] = (row){ d->sites[j].site, d->sites[j].bytes, s };
        }
    qsort(rows, k, sizeof *rows, cmp_name);
    for (size_t i = 0; i < k;) {
        tprof_mem_delta *dl = &out->rows[out->nrows];
        dl->site = strdup(rows[i].site);
        if (!dl->site) {
            free(rows);
            tprof_mem_compare_free(out);
            return TPROF_ENOMEM;
        }
        out->nrows++;
        size_t j = i;
        for (; j < k && !strcmp(rows[j].site, rows[i].site); j++) {
            if (rows[j].side == 0) dl->a += rows[j].bytes;
            else dl->b += rows[j].bytes;
        }
        dl->delta = dl->b - dl->a;
        i = j;
    }
    free(rows);
    qsort(out->rows, out->nrows, sizeof *out->rows, cmp_delta);
    return 0;
}

void tprof_mem_compare_free(tprof_mem_compare *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->nrows; i++) free(c->rows[i].site);
    free(c->rows);
    memset(c, 0, sizeof *c);
}
