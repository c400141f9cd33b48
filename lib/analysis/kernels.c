/* GPU kernel breakdown: per name, class or stream; optionally limited to
 * the GPU work launched inside a ProfilerStep window. */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "../util/i64map.h"
#include "../util/strtab.h"
#include "intervals.h"
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tprof_strtab keys;
} kpriv;

static int new_result(tprof_kernels_result **out, tprof_group_by by)
{
    tprof_kernels_result *r = calloc(1, sizeof *r);
    kpriv *p = calloc(1, sizeof *p);
    if (!r || !p || tprof_strtab_init(&p->keys)) {
        free(r);
        free(p);
        return TPROF_ENOMEM;
    }
    r->priv = p;
    r->by = by;
    r->step_first = r->step_last = -1;
    *out = r;
    return 0;
}

void tprof_kernels_free(tprof_kernels_result *r)
{
    if (!r) return;
    kpriv *p = r->priv;
    if (p) {
        tprof_strtab_free(&p->keys);
        free(p);
    }
    free(r->rows);
    free(r);
}

static int cmp_row(const void *a, const void *b)
{
    const tprof_kernel_row *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Fills mean and share, fixes key pointers, sorts. */
static void finish_rows(tprof_kernels_result *r)
{
    kpriv *p = r->priv;
    for (size_t i = 0; i < r->nrows; i++) {
        tprof_kernel_row *row = &r->rows[i];
        row->key = tprof_strtab_get(&p->keys, (uint32_t)(uintptr_t)row->key);
        row->mean_ns = row->count ? (double)row->total_ns / (double)row->count : 0.0;
        row->share = r->total_ns > 0 ? (double)row->total_ns / (double)r->total_ns : 0.0;
    }
    if (r->nrows) qsort(r->rows, r->nrows, sizeof *r->rows, cmp_row);
}

/* Row index for an event; rows[].key holds a key id until finish_rows. */
typedef struct {
    tprof_i64map index; /* group key -> row */
} grouper;

static int row_for(tprof_kernels_result *r, grouper *g, int64_t gkey, const char *label, tprof_class k,
                   int64_t device, int64_t stream, size_t *cap)
{
    int64_t idx;
    if (tprof_i64map_get(&g->index, gkey, &idx)) return (int)idx;
    if (r->nrows == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        tprof_kernel_row *rows = realloc(r->rows, nc * sizeof *rows);
        if (!rows) return -1;
        r->rows = rows;
        *cap = nc;
    }
    kpriv *p = r->priv;
    uint32_t kid = tprof_strtab_intern(&p->keys, label, strlen(label));
    if (kid == UINT32_MAX) return -1;
    r->rows[r->nrows] = (tprof_kernel_row){ .key = (const char *)(uintptr_t)kid, .klass = k,
                                            .device = device, .stream = stream,
                                            .min_ns = INT64_MAX, .max_ns = INT64_MIN };
    if (tprof_i64map_put(&g->index, gkey, (int64_t)r->nrows)) return -1;
    return (int)r->nrows++;
}

static void add_to_row(tprof_kernel_row *row, uint64_t count, int64_t total, int64_t mn, int64_t mx)
{
    row->count += count;
    row->total_ns = tprof_sat_add(row->total_ns, total);
    if (mn < row->min_ns) row->min_ns = mn;
    if (mx > row->max_ns) row->max_ns = mx;
}

int tprof_kernels(const tprof_trace *t, const tprof_kernels_opts *opts, tprof_kernels_result **out)
{
    static const tprof_kernels_opts defaults = { .step_first = -1, .step_last = -1 };
    if (!opts) opts = &defaults;
    *out = NULL;
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t);
    tprof_kernels_result *r;
    int rc = new_result(&r, opts->by);
    if (rc) return rc;

    /* step window: the steps numbered A..B, in time order */
    tprof_step *sel = NULL;
    size_t nsel = 0;
    const int64_t *launched = NULL;
    int windowed = opts->step_first >= 0 || opts->step_last >= 0;
    if (windowed) {
        int64_t lo = opts->step_first >= 0 ? opts->step_first : 0;
        int64_t hi = opts->step_last >= 0 ? opts->step_last : INT64_MAX;
        sel = malloc((m->nsteps ? m->nsteps : 1) * sizeof *sel);
        if (!sel) goto oom;
        r->step_first = INT64_MAX;
        r->step_last = INT64_MIN;
        for (size_t i = 0; i < m->nsteps; i++) {
            int64_t num = m->steps[i].number; /* -1 when the name had no number */
            if (num < lo || num > hi) continue;
            sel[nsel++] = m->steps[i];
            if (num < r->step_first) r->step_first = num;
            if (num > r->step_last) r->step_last = num;
        }
        if (nsel == 0) {
            free(sel);
            tprof_kernels_free(r);
            return TPROF_EUSAGE;
        }
        r->windowed = 1;
        r->nsteps = nsel;
        if (!(launched = tprof_launch_times(t))) goto oom;
    }

    grouper g;
    if (tprof_i64map_init(&g.index, 256)) goto oom;
    size_t cap = 0, niv = 0;
    tprof_interval *iv = malloc((nev ? nev : 1) * sizeof *iv);
    if (!iv) {
        tprof_i64map_free(&g.index);
        goto oom;
    }
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        if (e->kind != TPROF_KIND_GPU) continue;
        if (windowed) {
            if (tprof_step_at(sel, nsel, launched[i]) < 0) continue;
        }
        int idx;
        char label[64];
        switch (opts->by) {
        case TPROF_BY_CLASS:
            idx = row_for(r, &g, e->klass, tprof_class_name((tprof_class)e->klass), (tprof_class)e->klass, -1, -1,
                          &cap);
            break;
        case TPROF_BY_STREAM: {
            /* the label's string id is an exact key for (device, stream) */
            snprintf(label, sizeof label, "device %lld stream %lld", (long long)e->device, (long long)e->stream);
            uint32_t kid = tprof_strtab_intern(&((kpriv *)r->priv)->keys, label, strlen(label));
            idx = kid == UINT32_MAX ? -1
                                    : row_for(r, &g, kid, label, TPROF_CLASS_COMPUTE, e->device, e->stream, &cap);
            break;
        }
        default:
            /* one row per name and class: a name can appear in two categories */
            idx = row_for(r, &g, (int64_t)e->name * TPROF_CLASS_COUNT + e->klass, tprof_trace_str(t, e->name),
                          (tprof_class)e->klass, -1, -1, &cap);
        }
        if (idx < 0) {
            free(iv);
            tprof_i64map_free(&g.index);
            goto oom;
        }
        add_to_row(&r->rows[idx], 1, e->dur, e->dur, e->dur);
        r->count++;
        r->total_ns = tprof_sat_add(r->total_ns, e->dur);
        r->class_count[e->klass]++;
        r->class_total_ns[e->klass] = tprof_sat_add(r->class_total_ns[e->klass], e->dur);
        int64_t end = tprof_end_ns(e->ts, e->dur);
        iv[niv++] = (tprof_interval){ e->ts, end };
        if (e->ts < first) first = e->ts;
        if (end > last) last = end;
    }
    r->busy_ns = tprof_interval_union(iv, niv);
    r->span_ns = niv ? tprof_span_ns(first, last) : 0;
    free(iv);
    tprof_i64map_free(&g.index);
    free(sel);
    finish_rows(r);
    *out = r;
    return 0;
oom:
    free(sel);
    tprof_kernels_free(r);
    return TPROF_ENOMEM;
}

int tprof_kernels_combine(const tprof_kernels_result *const *parts, size_t n, tprof_kernels_result **out)
{
    *out = NULL;
    if (n == 0) return TPROF_EUSAGE;
    tprof_kernels_result *r;
    int rc = new_result(&r, parts[0]->by);
    if (rc) return rc;
    grouper g;
    if (tprof_i64map_init(&g.index, 256)) {
        tprof_kernels_free(r);
        return TPROF_ENOMEM;
    }
    kpriv *p = r->priv;
    size_t cap = 0;
    for (size_t k = 0; k < n; k++) {
        const tprof_kernels_result *s = parts[k];
        for (size_t i = 0; i < s->nrows; i++) {
            const tprof_kernel_row *row = &s->rows[i];
            /* group by the key text: intern it first so equal names meet */
            uint32_t kid = tprof_strtab_intern(&p->keys, row->key, strlen(row->key));
            int idx = kid == UINT32_MAX ? -1
                                        : row_for(r, &g, (int64_t)kid * TPROF_CLASS_COUNT + row->klass, row->key, row->klass,
                                                 row->device, row->stream, &cap);
            if (idx < 0) {
                tprof_i64map_free(&g.index);
                tprof_kernels_free(r);
                return TPROF_ENOMEM;
            }
            add_to_row(&r->rows[idx], row->count, row->total_ns, row->min_ns, row->max_ns);
        }
        r->count += s->count;
        r->total_ns = tprof_sat_add(r->total_ns, s->total_ns);
        r->busy_ns = tprof_sat_add(r->busy_ns, s->busy_ns);
        if (s->span_ns > r->span_ns) r->span_ns = s->span_ns;
        for (int c = 0; c < TPROF_CLASS_COUNT; c++) {
            r->class_count[c] += s->class_count[c];
            r->class_total_ns[c] = tprof_sat_add(r->class_total_ns[c], s->class_total_ns[c]);
        }
        if (s->windowed) { /* the window as found: the first and last step of any rank */
            if (!r->windowed || s->step_first < r->step_first) r->step_first = s->step_first;
            if (!r->windowed || s->step_last > r->step_last) r->step_last = s->step_last;
            r->windowed = 1;
        }
        r->nsteps += s->nsteps;
    }
    tprof_i64map_free(&g.index);
    finish_rows(r);
    *out = r;
    return 0;
}
