/* The device's time in each step's window, split as Ascend's profiler
 * splits it in step_trace_time.csv (and msprof-analyze's cluster table
 * gathers it): computing, communication, their overlap, free time, the
 * time before the step's first task, and receives (a pipeline's bubble).
 * Each kind of work is one union of intervals over all the device's
 * streams, clipped to each step's window. */
#include "step_time.h"

#include "intervals.h"
#include "trainprof/error.h"

#include <stdlib.h>
#include <string.h>

/* The disjoint intervals of a merged list L[0..N) clipped to [A, B) into
 * OUT (room for N); their count. */
static size_t clip(const tprof_interval *l, size_t n, int64_t a, int64_t b, tprof_interval *out)
{
    size_t lo = 0, hi = n; /* the first interval ending after A */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l[mid].end <= a) lo = mid + 1;
        else hi = mid;
    }
    size_t k = 0;
    for (size_t i = lo; i < n && l[i].start < b; i++)
        out[k++] = (tprof_interval){ l[i].start > a ? l[i].start : a, l[i].end < b ? l[i].end : b };
    return k;
}

static int64_t length(const tprof_interval *l, size_t n)
{
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) total = tprof_sat_add(total, tprof_span_ns(l[i].start, l[i].end));
    return total;
}

enum { COMPUTE, COMM, RECV, BUSY, KINDS };

int tprof_step_device_split(const tprof_trace *t, tprof_step_row *rows, size_t n)
{
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t), count[KINDS] = { 0 };
    tprof_interval *l[KINDS], *w[KINDS];
    int rc = TPROF_ENOMEM;
    for (int k = 0; k < KINDS; k++) l[k] = w[k] = NULL;
    for (size_t i = 0; i < nev; i++)
        if (ev[i].kind == TPROF_KIND_GPU && (ev[i].klass == TPROF_CLASS_COMPUTE || ev[i].klass == TPROF_CLASS_COMM))
            count[BUSY]++;
    for (int k = 0; k < KINDS; k++)
        if (!(l[k] = malloc((count[BUSY] ? count[BUSY] : 1) * sizeof *l[k])) ||
            !(w[k] = malloc((count[BUSY] ? count[BUSY] : 1) * sizeof *w[k])))
            goto out;
    memset(count, 0, sizeof count);
    /* memory copies and the rest are neither: their time is free time, as Ascend counts SDMA copies */
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        if (e->kind != TPROF_KIND_GPU || (e->klass != TPROF_CLASS_COMPUTE && e->klass != TPROF_CLASS_COMM)) continue;
        tprof_interval iv = { e->ts, tprof_end_ns(e->ts, e->dur) };
        l[BUSY][count[BUSY]++] = iv;
        if (e->klass == TPROF_CLASS_COMPUTE) l[COMPUTE][count[COMPUTE]++] = iv;
        else {
            l[COMM][count[COMM]++] = iv;
            if (!strcmp(tprof_collective_type(tprof_trace_str(t, e->name)), "Recv")) l[RECV][count[RECV]++] = iv;
        }
    }
    for (int k = 0; k < KINDS; k++) count[k] = tprof_interval_merge(l[k], count[k]);
    for (size_t s = 0; s < n; s++) {
        tprof_step_row *r = &rows[s];
        int64_t a = r->ts, b = tprof_end_ns(r->ts, r->dur);
        size_t m[KINDS];
        for (int k = 0; k < KINDS; k++) m[k] = clip(l[k], count[k], a, b, w[k]);
        r->computing_ns = length(w[COMPUTE], m[COMPUTE]);
        r->communication_ns = length(w[COMM], m[COMM]);
        r->overlapped_ns = tprof_interval_overlap(w[COMPUTE], m[COMPUTE], w[COMM], m[COMM]);
        r->comm_not_overlapped_ns = r->communication_ns - r->overlapped_ns;
        r->bubble_ns = length(w[RECV], m[RECV]);
        int64_t recv_exposed = r->bubble_ns - tprof_interval_overlap(w[RECV], m[RECV], w[COMPUTE], m[COMPUTE]);
        r->comm_not_overlapped_no_recv_ns = r->comm_not_overlapped_ns - recv_exposed;
        /* from the step's start to its first task (0 when work runs on from the step before) */
        r->preparing_ns = m[BUSY] ? tprof_span_ns(a, w[BUSY][0].start) : 0;
        int64_t after = tprof_span_ns(a, b) - r->preparing_ns;
        r->free_ns = after - length(w[BUSY], m[BUSY]);
        r->stage_ns = after - r->bubble_ns;
    }
    rc = 0;
out:
    for (int k = 0; k < KINDS; k++) {
        free(l[k]);
        free(w[k]);
    }
    return rc;
}
