#include "launch.h"
#include "../trace/derived.h"
#include "../util/i64map.h"

#include <stdlib.h>

static void *launch_times_build(const tprof_trace *t)
{
    const tprof_event *ev = tprof_trace_events(t);
    size_t n = tprof_trace_nevents(t), calls = 0; /* sized once: no rehashing while filling */
    for (size_t i = 0; i < n; i++) calls += ev[i].kind == TPROF_KIND_RUNTIME && ev[i].correlation >= 0;
    tprof_i64map by_corr; /* correlation id -> ts of the runtime call */
    int64_t *at = malloc((n ? n : 1) * sizeof *at);
    if (!at || tprof_i64map_init(&by_corr, calls)) {
        free(at);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (ev[i].kind == TPROF_KIND_RUNTIME && ev[i].correlation >= 0 &&
            tprof_i64map_put(&by_corr, ev[i].correlation, ev[i].ts)) {
            tprof_i64map_free(&by_corr);
            free(at);
            return NULL;
        }
    for (size_t i = 0; i < n; i++) {
        at[i] = ev[i].ts;
        if (ev[i].kind == TPROF_KIND_GPU && ev[i].correlation >= 0)
            tprof_i64map_get(&by_corr, ev[i].correlation, &at[i]);
    }
    tprof_i64map_free(&by_corr);
    return at;
}

const int64_t *tprof_launch_times(const tprof_trace *t)
{
    return tprof_trace_derived(t, TPROF_DERIVED_LAUNCH_TIMES, launch_times_build, free);
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
