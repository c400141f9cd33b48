/* Memory over time for one device, pre-aggregated: each point is the
 * maximum of its bucket of events, so a million-event history becomes a few
 * thousand points and the peak is never averaged away. */
#include <stdlib.h>
#include <string.h>

#include "mem_internal.h"
#include "trainprof/error.h"

static int cmp_desc(const void *a, const void *b)
{
    const int64_t *x = a, *y = b; /* pairs: bytes, id */
    if (x[0] != y[0]) return x[0] > y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

int tprof_mem_timeline_build(const tprof_mem_snapshot *s, int64_t device, int depth, size_t ntop, size_t max_points,
                             tprof_mem_timeline *out)
{
    memset(out, 0, sizeof *out);
    out->device = device;
    if (max_points < 2) max_points = 2;
    const tprof_mem_event *ev = NULL;
    size_t n = 0;
    if (device >= 0 && (uint64_t)device < s->ntraces) {
        ev = s->traces[device];
        n = s->ntrace[device];
    }
    mem_replay r;
    int rc = tprof_mem_replay(s, device, &r);
    if (rc) return rc;
    mem_sites ms;
    uint32_t *site = NULL;
    int64_t *acc = NULL, *slot = NULL, *cur = NULL;
    if ((rc = mem_sites_init(&ms, depth))) goto done;
    site = malloc((r.nel ? r.nel : 1) * sizeof *site);
    if (!site) goto nomem;
    for (size_t i = 0; i < r.nel; i++)
        if ((site[i] = mem_site_of(&ms, s, r.el[i].frames)) == UINT32_MAX) goto nomem;
    size_t nsites = ms.names.count;
    /* the top sites: largest live at the peak */
    int64_t peak_k = -1, best = 0;
    for (size_t k = 0; k < r.nact; k++)
        if (peak_k < 0 || r.act_total[k] > best) {
            best = r.act_total[k];
            peak_k = (int64_t)k;
        }
    acc = calloc(2 * (nsites ? nsites : 1), sizeof *acc);
    slot = malloc((nsites ? nsites : 1) * sizeof *slot);
    if (!acc || !slot) goto nomem;
    for (size_t i = 0; i < nsites; i++) acc[2 * i + 1] = (int64_t)i;
    for (size_t i = 0; i < r.nel; i++)
        if (mem_live_at(&r.el[i], peak_k)) acc[2 * site[i]] += r.el[i].size;
    qsort(acc, nsites, 2 * sizeof *acc, cmp_desc);
    size_t top = 0;
    while (top < ntop && top < nsites && acc[2 * top] > 0) top++;
    for (size_t i = 0; i < nsites; i++) slot[i] = (int64_t)top; /* "other" */
    out->top = calloc(top ? top : 1, sizeof *out->top);
    if (!out->top) goto nomem;
    for (size_t i = 0; i < top; i++) {
        slot[acc[2 * i + 1]] = (int64_t)i;
        out->top[i] = strdup(tprof_strtab_get(&ms.names, (uint32_t)acc[2 * i + 1]));
        if (!out->top[i]) goto nomem;
        out->ntop++;
    }
    size_t w = top + 1;
    size_t bucket = n / max_points + (n % max_points != 0);
    if (!bucket) bucket = 1;
    size_t cap = (n + bucket - 1) / bucket + 1;
    out->pts = calloc(cap, sizeof *out->pts);
    out->site_store = calloc(cap * w, sizeof *out->site_store);
    cur = calloc(w, sizeof *cur);
    if (!out->pts || !out->site_store || !cur) goto nomem;
    /* reserved at the start, worked back from the segments at the end */
    int64_t res = 0;
    for (size_t g = 0; g < s->nsegs; g++)
        if (s->segs[g].device == device) res += s->segs[g].total_size;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].action == TPROF_MEM_SEGMENT_ALLOC || ev[i].action == TPROF_MEM_SEGMENT_MAP) res -= ev[i].size;
        else if (ev[i].action == TPROF_MEM_SEGMENT_FREE || ev[i].action == TPROF_MEM_SEGMENT_UNMAP) res += ev[i].size;
    }
    for (size_t i = 0; i < r.nel; i++)
        if (r.el[i].start < 0) cur[slot[site[i]]] += r.el[i].size;
    /* point 0: the state when the history begins */
    tprof_mem_point *p = &out->pts[out->npts++];
    *p = (tprof_mem_point){ .index = -1, .time_us = -1, .active = r.initial_total, .reserved = res,
                            .site_bytes = out->site_store };
    memcpy(p->site_bytes, cur, w * sizeof *cur);
    size_t k = 0;
    int64_t active = r.initial_total;
    for (size_t b0 = 0; b0 < n; b0 += bucket) {
        p = &out->pts[out->npts];
        p->site_bytes = out->site_store + out->npts * w;
        out->npts++;
        p->active = INT64_MIN;
        p->reserved = INT64_MIN;
        for (size_t i = b0; i < n && i < b0 + bucket; i++) {
            uint8_t a = ev[i].action;
            if (a == TPROF_MEM_SEGMENT_ALLOC || a == TPROF_MEM_SEGMENT_MAP) res += ev[i].size;
            else if (a == TPROF_MEM_SEGMENT_FREE || a == TPROF_MEM_SEGMENT_UNMAP) res -= ev[i].size;
            while (k < r.nact && r.act_index[k] == (int64_t)i) {
                size_t e = r.act_elem[k];
                int64_t d = r.el[e].start == (int64_t)k ? r.el[e].size : -r.el[e].size;
                cur[slot[site[e]]] += d;
                active = r.act_total[k];
                k++;
            }
            if (res > p->reserved) p->reserved = res;
            if (active > p->active) {
                p->active = active;
                p->index = (int64_t)i;
                p->time_us = ev[i].time_us;
                memcpy(p->site_bytes, cur, w * sizeof *cur);
            }
        }
    }
    goto done;
nomem:
    rc = TPROF_ENOMEM;
done:
    free(site);
    free(acc);
    free(slot);
    free(cur);
    mem_sites_free(&ms);
    tprof_mem_replay_free(&r);
    if (rc) tprof_mem_timeline_free(out);
    return rc;
}

void tprof_mem_timeline_free(tprof_mem_timeline *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->ntop; i++) free(t->top[i]);
    free(t->top);
    free(t->pts);
    free(t->site_store);
    memset(t, 0, sizeof *t);
}
