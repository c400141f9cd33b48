/* Compares the fast and the generic event paths of the trace reader. */
#ifndef TPROF_PATH_DIFF_H
#define TPROF_PATH_DIFF_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/trace.h"

/* 0 when both reads agree (including on failing), else 1 with WHY set. */
static inline int tprof_path_diff(tprof_trace *a, int rca, tprof_trace *b, int rcb, char *why, size_t len)
{
    if (rca != rcb) {
        snprintf(why, len, "return codes differ: fast %d, generic %d", rca, rcb);
        return 1;
    }
    if (!a || !b) return (a == NULL) != (b == NULL);
    const tprof_trace_meta *ma = tprof_trace_meta_get(a), *mb = tprof_trace_meta_get(b);
    if (ma->nevents != mb->nevents || memcmp(ma->kind_counts, mb->kind_counts, sizeof ma->kind_counts) ||
        memcmp(&ma->warn, &mb->warn, sizeof ma->warn) || ma->nsteps != mb->nsteps ||
        ma->ngpu_tracks != mb->ngpu_tracks || ma->ts_min != mb->ts_min || ma->ts_max != mb->ts_max) {
        snprintf(why, len, "counts differ: events %llu/%llu", (unsigned long long)ma->nevents,
                 (unsigned long long)mb->nevents);
        return 1;
    }
    size_t n = tprof_trace_nevents(a);
    if (n != tprof_trace_nevents(b)) {
        snprintf(why, len, "stored events differ: %zu/%zu", n, tprof_trace_nevents(b));
        return 1;
    }
    const tprof_event *ea = tprof_trace_events(a), *eb = tprof_trace_events(b);
    for (size_t i = 0; i < n; i++) {
        tprof_event x = ea[i], y = eb[i];
        int same = !strcmp(tprof_trace_str(a, x.name), tprof_trace_str(b, y.name)) &&
                   !strcmp(tprof_trace_str(a, x.cat), tprof_trace_str(b, y.cat));
        x.name = y.name = x.cat = y.cat = 0;
        if (x.flags & TPROF_EV_PID_STR) same &= !strcmp(tprof_trace_str(a, (uint32_t)x.pid), tprof_trace_str(b, (uint32_t)y.pid)), x.pid = y.pid = 0;
        if (x.flags & TPROF_EV_TID_STR) same &= !strcmp(tprof_trace_str(a, (uint32_t)x.tid), tprof_trace_str(b, (uint32_t)y.tid)), x.tid = y.tid = 0;
        if (!same || memcmp(&x, &y, sizeof x)) {
            snprintf(why, len, "event %zu differs (name %s)", i, tprof_trace_str(a, ea[i].name));
            return 1;
        }
    }
    return 0;
}

static inline int tprof_path_diff_file(const char *path, char *why, size_t len)
{
    tprof_read_opts fast = { .keep = TPROF_KEEP_ALL }, slow = { .keep = TPROF_KEEP_ALL, .generic_only = 1 };
    tprof_trace *a = NULL, *b = NULL;
    char ea[512] = "", eb[512] = "";
    int rca = tprof_trace_read(&a, path, &fast, ea, sizeof ea);
    int rcb = tprof_trace_read(&b, path, &slow, eb, sizeof eb);
    int d = tprof_path_diff(a, rca, b, rcb, why, len);
    if (!d && rca && rca != TPROF_ETRUNC && strcmp(ea, eb)) {
        snprintf(why, len, "messages differ: '%.200s' vs '%.200s'", ea, eb);
        d = 1;
    }
    tprof_trace_free(a);
    tprof_trace_free(b);
    return d;
}

#endif
