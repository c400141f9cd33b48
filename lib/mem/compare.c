/* Two snapshots compared: bytes live at each device's peak, summed over
 * devices per call site, B - A, largest growth first. Call sites are
 * matched by their functions and files (the site with its line numbers
 * left out), so that the same code after an edit above it is one row; the
 * line numbers only decide between sites that match so. docs/METRICS.md,
 * "--compare". */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/mem.h"

typedef struct {
    const char *site;
    int64_t bytes;
    int side;
} row;

/* One site of one side, its bytes summed over devices. */
typedef struct {
    const char *site;
    char *key; /* the site without its line numbers */
    int64_t bytes;
    int side;
    int paired;
} entry;

static int cmp_name(const void *a, const void *b)
{
    const row *x = a, *y = b;
    int c = strcmp(x->site, y->site);
    return c ? c : x->side - y->side;
}

/* Strings with digit runs compared as numbers ("a.py:9:f" before
 * "a.py:10:f"); 0 only for equal strings. */
static int natcmp(const char *a, const char *b)
{
    const char *p = a, *q = b;
    while (*p && *q) {
        if (isdigit((unsigned char)*p) && isdigit((unsigned char)*q)) {
            while (*p == '0' && isdigit((unsigned char)p[1])) p++;
            while (*q == '0' && isdigit((unsigned char)q[1])) q++;
            size_t lp = 0, lq = 0;
            while (isdigit((unsigned char)p[lp])) lp++;
            while (isdigit((unsigned char)q[lq])) lq++;
            if (lp != lq) return lp < lq ? -1 : 1;
            int c = memcmp(p, q, lp);
            if (c) return c;
            p += lp;
            q += lq;
            continue;
        }
        if (*p != *q) return (unsigned char)*p < (unsigned char)*q ? -1 : 1;
        p++;
        q++;
    }
    if (*p || *q) return *p ? 1 : -1;
    return strcmp(a, b);
}

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c) return c;
    if (x->side != y->side) return x->side - y->side;
    return natcmp(x->site, y->site);
}

static int cmp_delta(const void *a, const void *b)
{
    const tprof_mem_delta *x = a, *y = b;
    if (x->delta != y->delta) return x->delta > y->delta ? -1 : 1;
    return strcmp(x->site, y->site);
}

/* SITE (tprof_mem_call_site: "file:line:function" frames joined by ';')
 * with each frame's line number left out: "file::function". */
static char *key_of(const char *site)
{
    size_t n = strlen(site);
    char *k = malloc(n + 1), *o = k;
    if (!k) return NULL;
    const char *f = site;
    for (;;) {
        const char *end = strchr(f, ';');
        if (!end) end = f + strlen(f);
        /* the line: the first ":digits:" of the frame */
        const char *line = NULL, *after = NULL;
        for (const char *c = f; c < end && !line; c++) {
            if (*c != ':') continue;
            const char *d = c + 1;
            if (d < end && *d == '-') d++;
            const char *d0 = d;
            while (d < end && isdigit((unsigned char)*d)) d++;
            if (d > d0 && d < end && *d == ':') line = c + 1, after = d;
        }
        if (line) {
            memcpy(o, f, (size_t)(line - f));
            o += line - f;
            memcpy(o, after, (size_t)(end - after));
            o += end - after;
        } else {
            memcpy(o, f, (size_t)(end - f));
            o += end - f;
        }
        if (!*end) break;
        *o++ = ';';
        f = end + 1;
    }
    *o = 0;
    return k;
}

static int add_delta(tprof_mem_compare *out, const entry *a, const entry *b)
{
    tprof_mem_delta *dl = &out->rows[out->nrows];
    memset(dl, 0, sizeof *dl);
    dl->site = strdup(b ? b->site : a->site);
    if (!dl->site) return TPROF_ENOMEM;
    out->nrows++;
    if (a && b && strcmp(a->site, b->site) && !(dl->site_a = strdup(a->site))) return TPROF_ENOMEM;
    dl->a = a ? a->bytes : 0;
    dl->b = b ? b->bytes : 0;
    dl->delta = dl->b - dl->a;
    return 0;
}

/* The sites of one key, A's in [a, a + na) and B's in [b, b + nb), each in
 * line order: the same site in both first, then the rest in line order
 * (an edit moves lines, not the order of the calls), then the unmatched. */
static int pair_group(tprof_mem_compare *out, entry *a, size_t na, entry *b, size_t nb)
{
    int rc = 0;
    for (size_t i = 0, j = 0; i < na && j < nb;) {
        int c = natcmp(a[i].site, b[j].site);
        if (c == 0) {
            a[i].paired = b[j].paired = 1;
            if ((rc = add_delta(out, &a[i], &b[j]))) return rc;
            i++, j++;
        } else if (c < 0) i++;
        else j++;
    }
    size_t i = 0, j = 0;
    for (;;) {
        while (i < na && a[i].paired) i++;
        while (j < nb && b[j].paired) j++;
        if (i == na && j == nb) return 0;
        if ((rc = add_delta(out, i < na ? &a[i] : NULL, j < nb ? &b[j] : NULL))) return rc;
        if (i < na) a[i++].paired = 1;
        if (j < nb) b[j++].paired = 1;
    }
}

int tprof_mem_compare_reports(const tprof_mem_report *a, const tprof_mem_report *b, tprof_mem_compare *out)
{
    memset(out, 0, sizeof *out);
    size_t n = 0;
    for (size_t i = 0; i < a->ndev; i++) n += a->dev[i].nsites;
    for (size_t i = 0; i < b->ndev; i++) n += b->dev[i].nsites;
    row *rows = malloc((n ? n : 1) * sizeof *rows);
    entry *en = calloc(n ? n : 1, sizeof *en);
    out->rows = calloc(n ? n : 1, sizeof *out->rows);
    int rc = rows && en && out->rows ? 0 : TPROF_ENOMEM;
    size_t k = 0, ne = 0;
    const tprof_mem_report *side[2] = { a, b };
    for (int s = 0; !rc && s < 2; s++)
        for (size_t i = 0; i < side[s]->ndev; i++) {
            const tprof_mem_device *d = &side[s]->dev[i];
            if (s == 0) out->peak_a += d->peak_active;
            else out->peak_b += d->peak_active;
            for (size_t j = 0; j < d->nsites; j++) rows[k++] = (row){ d->sites[j].site, d->sites[j].bytes, s };
        }
    if (!rc) qsort(rows, k, sizeof *rows, cmp_name);
    for (size_t i = 0; !rc && i < k;) { /* one entry per site and side */
        entry *e = &en[ne++];
        *e = (entry){ .site = rows[i].site, .side = rows[i].side, .key = key_of(rows[i].site) };
        if (!e->key) rc = TPROF_ENOMEM;
        for (; i < k && rows[i].side == e->side && !strcmp(rows[i].site, e->site); i++) e->bytes += rows[i].bytes;
    }
    if (!rc) qsort(en, ne, sizeof *en, cmp_entry);
    for (size_t i = 0; !rc && i < ne;) {
        size_t j = i, m;
        while (j < ne && !strcmp(en[j].key, en[i].key)) j++;
        for (m = i; m < j && en[m].side == 0; m++) {}
        rc = pair_group(out, en + i, m - i, en + m, j - m);
        i = j;
    }
    for (size_t i = 0; i < ne; i++) free(en[i].key);
    free(en);
    free(rows);
    if (rc) {
        tprof_mem_compare_free(out);
        return rc;
    }
    qsort(out->rows, out->nrows, sizeof *out->rows, cmp_delta);
    return 0;
}

void tprof_mem_compare_free(tprof_mem_compare *c)
{
    if (!c) return;
    for (size_t i = 0; c->rows && i < c->nrows; i++) {
        free(c->rows[i].site);
        free(c->rows[i].site_a);
    }
    free(c->rows);
    memset(c, 0, sizeof *c);
}
