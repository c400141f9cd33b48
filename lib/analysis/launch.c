#include "launch.h"

int tprof_launches_build(const tprof_trace *t, tprof_launches *l)
{
    const tprof_event *ev = tprof_trace_events(t);
    size_t n = tprof_trace_nevents(t);
    size_t calls = 0; /* sized once: no rehashing while filling */
    for (size_t i = 0; i < n; i++) calls += ev[i].kind == TPROF_KIND_RUNTIME && ev[i].correlation >= 0;
    if (tprof_i64map_init(&l->by_corr, calls)) return -1;
    for (size_t i = 0; i < n; i++)
        if (ev[i].kind == TPROF_KIND_RUNTIME && ev[i].correlation >= 0 &&
            tprof_i64map_put(&l->by_corr, ev[i].correlation, ev[i].ts)) {
            tprof_i64map_free(&l->by_corr);
            return -1;
        }
    return 0;
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

void tprof_launches_free(tprof_launches *l) { tprof_i64map_free(&l->by_corr); }

int64_t tprof_launch_time(const tprof_launches *l, const tprof_event *e)
{
    int64_t ts;
    if (e->correlation >= 0 && tprof_i64map_get(&l->by_corr, e->correlation, &ts)) return ts;
    return e->ts;
}
