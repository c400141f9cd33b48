/* Memory over time from a Kineto trace's [memory] instant events: the peak
 * of allocated and reserved bytes per device, per ProfilerStep, and a
 * bucketed series (each point the highest of its bucket). */
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/mem.h"

typedef struct {
    int64_t device, ts;
    size_t order; /* file order breaks ties of equal timestamps */
    const tprof_memory_sample *m;
} ksample;

static int cmp_sample(const void *a, const void *b)
{
    const ksample *x = a, *y = b;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* The step holding time T: the latest-starting step that begins at or
 * before T, if T is inside it (steps are sorted by ts and do not overlap);
 * -1 otherwise. A binary search, so long traces with many steps stay linear. */
static int64_t step_at(const tprof_trace_meta *meta, int64_t t)
{
    size_t lo = 0, hi = meta->nsteps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (meta->steps[mid].ts <= t) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return -1;
    const tprof_step *s = &meta->steps[lo - 1];
    return t <= tprof_end_ns(s->ts, s->dur) ? (int64_t)(lo - 1) : -1;
}

static int device_of(const tprof_trace *t, const ksample *s, size_t n, size_t max_points, tprof_mem_kdevice *d)
{
    const tprof_trace_meta *meta = tprof_trace_meta_get(t);
    d->device = s[0].device;
    d->samples = n;
    d->peak_allocated = d->peak_reserved = -1;
    d->peak_allocated_ts = d->peak_reserved_ts = -1;
    d->steps = calloc(meta->nsteps ? meta->nsteps : 1, sizeof *d->steps);
    size_t bucket = n / max_points + (n % max_points != 0);
    if (!bucket) bucket = 1;
    d->pts = calloc(n / bucket + 2, sizeof *d->pts);
    if (!d->steps || !d->pts) return TPROF_ENOMEM;
    d->nsteps = meta->nsteps;
    for (size_t i = 0; i < meta->nsteps; i++)
        d->steps[i] = (tprof_mem_kstep){ .number = meta->steps[i].number, .ts = meta->steps[i].ts,
                                         .dur = meta->steps[i].dur, .peak_allocated = -1, .peak_reserved = -1 };
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        const tprof_memory_sample *m = s[i].m;
        sum += m->bytes;
        if (m->total_allocated >= 0) d->has_totals = 1;
        int64_t alloc = m->total_allocated >= 0 ? m->total_allocated : sum;
        int64_t res = m->total_reserved;
        if (alloc > d->peak_allocated) {
            d->peak_allocated = alloc;
            d->peak_allocated_ts = s[i].ts;
        }
        if (res > d->peak_reserved) {
            d->peak_reserved = res;
            d->peak_reserved_ts = s[i].ts;
        }
        d->allocated_at_end = alloc;
        d->reserved_at_end = res;
        int64_t k = step_at(meta, s[i].ts);
        if (k >= 0) {
            if (alloc > d->steps[k].peak_allocated) d->steps[k].peak_allocated = alloc;
            if (res > d->steps[k].peak_reserved) d->steps[k].peak_reserved = res;
        }
        if (i % bucket == 0) d->pts[d->npts++] = (tprof_mem_kpoint){ .ts = s[i].ts, .allocated = alloc, .reserved = res };
        tprof_mem_kpoint *p = &d->pts[d->npts - 1];
        if (alloc > p->allocated) {
            p->allocated = alloc;
            p->ts = s[i].ts;
        }
        if (res > p->reserved) p->reserved = res;
    }
    int64_t k = step_at(meta, d->peak_allocated_ts);
    d->peak_step = k >= 0 ? meta->steps[k].number : -1;
    return 0;
}

int tprof_mem_from_trace(const tprof_trace *t, size_t max_points, tprof_mem_kreport *out)
{
    memset(out, 0, sizeof *out);
    if (max_points < 2) max_points = 2;
    size_t n = tprof_trace_nmem_samples(t);
    const tprof_memory_sample *ms = tprof_trace_mem_samples(t);
    const tprof_event *ev = tprof_trace_events(t);
    ksample *s = malloc((n ? n : 1) * sizeof *s);
    if (!s) return TPROF_ENOMEM;
    size_t ndev = 0;
    for (size_t i = 0; i < n; i++) s[i] = (ksample){ ms[i].device, ev[ms[i].event].ts, i, &ms[i] };
    qsort(s, n, sizeof *s, cmp_sample);
    for (size_t i = 0; i < n; i++) ndev += !i || s[i].device != s[i - 1].device;
    out->dev = calloc(ndev ? ndev : 1, sizeof *out->dev);
    int rc = out->dev ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; i < n && !rc;) {
        size_t j = i;
        while (j < n && s[j].device == s[i].device) j++;
        rc = device_of(t, s + i, j - i, max_points, &out->dev[out->ndev++]);
        i = j;
    }
    free(s);
    if (rc) tprof_mem_kreport_free(out);
    return rc;
}

void tprof_mem_kreport_free(tprof_mem_kreport *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->ndev; i++) {
        free(r->dev[i].steps);
        free(r->dev[i].pts);
    }
    free(r->dev);
    memset(r, 0, sizeof *r);
}
