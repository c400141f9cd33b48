#include "launch.h"
#include "trainprof/error.h"
#include "../trace/derived.h"
#include "../util/i64map.h"

#include <stdlib.h>

/* Both per-event arrays of launch.h, derived together. */
typedef struct {
    int64_t *at, *call;
} launches;

static void launches_free(void *p)
{
    launches *l = p;
    free(l->at);
    free(l->call);
    free(l);
}

static void *launches_build(const tprof_trace *t)
{
    const tprof_event *ev = tprof_trace_events(t);
    size_t n = tprof_trace_nevents(t), calls = 0; /* sized once: no rehashing while filling */
    for (size_t i = 0; i < n; i++) calls += ev[i].kind == TPROF_KIND_RUNTIME && ev[i].correlation >= 0;
    tprof_i64map by_corr; /* correlation id -> index of the runtime call */
    launches *l = calloc(1, sizeof *l);
    if (l) {
        l->at = malloc((n ? n : 1) * sizeof *l->at);
        l->call = malloc((n ? n : 1) * sizeof *l->call);
    }
    if (!l || !l->at || !l->call || tprof_i64map_init(&by_corr, calls)) {
        if (l) launches_free(l);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (ev[i].kind == TPROF_KIND_RUNTIME && ev[i].correlation >= 0 &&
            tprof_i64map_put(&by_corr, ev[i].correlation, (int64_t)i)) {
            tprof_i64map_free(&by_corr);
            launches_free(l);
            return NULL;
        }
    for (size_t i = 0; i < n; i++) {
        l->call[i] = -1;
        if (ev[i].kind == TPROF_KIND_GPU && ev[i].correlation >= 0)
            tprof_i64map_get(&by_corr, ev[i].correlation, &l->call[i]);
        l->at[i] = l->call[i] >= 0 ? ev[l->call[i]].ts : ev[i].ts;
    }
    tprof_i64map_free(&by_corr);
    return l;
}

static const launches *launches_of(const tprof_trace *t)
{
    return tprof_trace_derived(t, TPROF_DERIVED_LAUNCHES, launches_build, launches_free);
}

const int64_t *tprof_launch_times(const tprof_trace *t)
{
    const launches *l = launches_of(t);
    return l ? l->at : NULL;
}

const int64_t *tprof_launch_calls(const tprof_trace *t)
{
    const launches *l = launches_of(t);
    return l ? l->call : NULL;
}

long tprof_step_at(const tprof_step *s, size_t n, int64_t at)
{
    size_t lo = 0, hi = n; /* first step starting after AT */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s[mid].ts <= at) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return -1;
    const tprof_step *c = &s[lo - 1];
    return at < tprof_end_ns(c->ts, c->dur) ? (long)(lo - 1) : -1;
}

int tprof_steps_select(const tprof_trace_meta *m, int64_t first, int64_t last, tprof_step **sel, size_t *n,
                       int64_t *found_first, int64_t *found_last)
{
    int64_t lo = first >= 0 ? first : 0, hi = last >= 0 ? last : INT64_MAX;
    *n = 0;
    *found_first = INT64_MAX;
    *found_last = INT64_MIN;
    if (!(*sel = malloc((m->nsteps ? m->nsteps : 1) * sizeof **sel))) return TPROF_ENOMEM;
    for (size_t i = 0; i < m->nsteps; i++) {
        int64_t num = m->steps[i].number; /* -1 when the name had no number */
        if (num < lo || num > hi) continue;
        (*sel)[(*n)++] = m->steps[i];
        if (num < *found_first) *found_first = num;
        if (num > *found_last) *found_last = num;
    }
    if (*n) return 0;
    free(*sel);
    *sel = NULL;
    return TPROF_EUSAGE;
}
