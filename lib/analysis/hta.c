/* Holistic Trace Analysis's temporal breakdown and communication overlap,
 * as HTA (v0.6, commit f4d0062) computes them for one trace loaded alone:
 * its event set, its last-step filter, its rounding and its kernel types,
 * each written out in docs/METRICS.md ("HTA's figures"). trainprof's own
 * figures (temporal.c) stay as they are; these sit beside them so a user
 * sees both and why they differ. Checked against HTA itself by
 * tests/tools/hta_oracle.py; CI holds HTA's numbers (tests/cli/hta.py). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "intervals.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* HTA's kernel types, from the full name (its regular expressions are
 * anchored at the start: "contains" below is its leading ".*"). */
static int hta_is_comm(const char *n)
{
    return starts(n, "nccl") || starts(n, "hip") || starts(n, "hccl") || strstr(n, "ncclKernel");
}

static int hta_is_memory(const char *n)
{
    return starts(n, "Memcpy") || starts(n, "hipMemcpy") || starts(n, "Memset") || starts(n, "hipMemset") ||
           starts(n, "dma");
}

static int hta_is_compute(const char *n)
{
    static const char *const not_prefix[] = { "nccl", "Stream Wait Event", "runFunction", "hip", "job_exe",
                                              "packet", "pe_exe", "cpum_exe_subgraph", "hccl",
                                              "collective_subgraph_execution" };
    static const char *const not_inside[] = { "Memcpy", "Memset", "dma", "Sync" };
    for (size_t i = 0; i < sizeof not_prefix / sizeof *not_prefix; i++)
        if (starts(n, not_prefix[i])) return 0;
    for (size_t i = 0; i < sizeof not_inside / sizeof *not_inside; i++)
        if (strstr(n, not_inside[i])) return 0;
    if (starts(n, "cuda") && strstr(n + 4, "LaunchKernel")) return 0;
    return 1;
}

tprof_hta_kind tprof_hta_kind_of(const char *name)
{
    if (hta_is_comm(name)) return TPROF_HTA_COMM;
    if (hta_is_memory(name)) return TPROF_HTA_MEMORY;
    return hta_is_compute(name) ? TPROF_HTA_COMPUTE : TPROF_HTA_OTHER;
}

/* A microsecond value as Python's float holds it: the decimal NS / 1000
 * rounded to the nearest double (at epoch times a double's step is 0.25 us,
 * which HTA's rounding then sees). */
static double us_double(int64_t ns)
{
    int64_t whole = ns / 1000, frac = ns % 1000;
    return (double)whole + (double)frac / 1000.0;
}

typedef struct {
    int64_t ts, end; /* ns, after HTA's rounding when it rounds */
    int64_t stream;  /* from args, else -1 */
    uint8_t gpu;     /* in HTA's GPU-kernel filter */
} row;

typedef struct {
    const tprof_trace *t;
    int rounded;
    uint32_t trace_cat; /* the id of cat "Trace", or UINT32_MAX */
    uint32_t not_sync;  /* the last name of a sync event found not device-wide */
} hta_view;

/* Event E as HTA holds it in R; 0 when HTA drops it (no dur, no cat, or
 * cat "Trace"). */
static int hta_row(hta_view *v, const tprof_event *e, row *r)
{
    if (e->ph != 'X' || (e->flags & TPROF_EV_NO_DUR)) return 0;
    if (e->cat == v->trace_cat || e->cat == 0) return 0; /* string 0 is "": no cat */
    r->ts = e->ts;
    r->end = tprof_end_ns(e->ts, e->dur);
    if (v->rounded) {
        double ts = us_double(e->ts);
        r->ts = (int64_t)ceil(ts) * 1000;
        r->end = (int64_t)floor(ts + us_double(e->dur)) * 1000;
    }
    r->stream = (e->flags & TPROF_EV_STREAM_ARG) ? e->stream : -1;
    r->gpu = r->stream >= 0 && e->correlation >= 0;
    /* device-wide syncs have no stream but count as GPU events (they are
     * trainprof's GPU events of class other: only those need a look) */
    if (!r->gpu && e->kind == TPROF_KIND_GPU && e->klass == TPROF_CLASS_OTHER && e->name != v->not_sync) {
        const char *name = tprof_trace_str(v->t, e->name);
        if (!strcmp(name, "Event Sync") || !strcmp(name, "Context Sync")) r->gpu = 1;
        else
            v->not_sync = e->name;
    }
    return 1;
}

/* HTA's interval merge, in place: sorted by start, a group ends where a
 * start lies beyond every end so far, and spans min start to max end (a
 * group rounding left shorter than nothing counts negative, as in HTA).
 * Returns the number of groups. */
static size_t hta_groups(tprof_interval *iv, size_t n)
{
    if (!n) return 0;
    tprof_interval_sort(iv, n);
    size_t k = 0;
    int64_t seen = iv[0].end;
    for (size_t i = 1; i < n; i++) {
        if (iv[i].start > seen) iv[++k] = iv[i];
        else if (iv[i].end > iv[k].end)
            iv[k].end = iv[i].end;
        if (iv[i].end > seen) seen = iv[i].end;
    }
    return k + 1;
}

/* The total length of N groups. */
static int64_t groups_length(const tprof_interval *g, size_t n)
{
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) total += g[i].end - g[i].start;
    return total;
}

static int cmp_corr(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] > y[1]) - (x[1] < y[1]);
}

/* The earliest CPU-side ts with correlation C, or INT64_MAX when none. */
static int64_t launch_ts(const int64_t *pairs, size_t n, int64_t c)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pairs[2 * mid] < c) lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && pairs[2 * lo] == c ? pairs[2 * lo + 1] : INT64_MAX;
}

int tprof_hta_figures_of(const tprof_trace *t, tprof_hta_figures *h)
{
    memset(h, 0, sizeof *h);
    h->comm_overlap = NAN;
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t);
    /* pandas makes the ts column float when any ts has a fraction or any
     * event lacks one; HTA then rounds starts up and ends down */
    hta_view v = { .t = t, .rounded = m->ts_sub_us > 0 || m->ts_absent > 0, .trace_cat = UINT32_MAX,
                   .not_sync = UINT32_MAX };
    h->rounded = v.rounded;
    for (size_t i = 0; i < m->ncats; i++)
        if (!strcmp(tprof_trace_str(t, m->cats[i].cat), "Trace")) v.trace_cat = m->cats[i].cat;
    /* the last-step filter: only with two or more ProfilerStep names */
    int distinct = 0;
    for (size_t i = 0; i < m->nsteps && distinct < 2; i++) {
        int64_t n = m->steps[i].number;
        int dup = n < 0;
        for (size_t j = 0; j < i && !dup; j++) dup = m->steps[j].number == n;
        distinct += !dup;
    }
    if (distinct >= 2 && m->backend && strstr(m->backend, "mtia:hccl")) {
        h->not_computed = "HTA filters MTIA traces by another rule, not reproduced";
        return 0;
    }
    h->step_filter = distinct >= 2;
    int64_t last_step = INT64_MIN;
    if (h->step_filter) {
        /* the last step's start: the latest event named ProfilerStep#N
         * among HTA's CPU events, a GPU-side annotation too (its rounding
         * applied: it keeps the order) */
        last_step = m->step_name_ts_max;
        if (v.rounded && last_step != INT64_MIN) last_step = (int64_t)ceil(us_double(last_step)) * 1000;
        h->last_step_start_ns = last_step;
    }
    /* one pass to size, one for the launches (with the filter), one for the work */
    size_t nhost = 0, nwork = 0;
    uint32_t max_name = 0;
    row r;
    for (size_t i = 0; i < nev; i++) {
        if (!hta_row(&v, &ev[i], &r)) continue;
        nhost += !r.gpu && ev[i].correlation != -1;
        if (r.stream != -1) {
            nwork++;
            if (ev[i].name > max_name) max_name = ev[i].name;
        }
    }
    int64_t *pairs = h->step_filter ? malloc((nhost ? nhost : 1) * 2 * sizeof *pairs) : NULL;
    /* compute intervals fill KINDS from the front, communication from the back */
    tprof_interval *all = malloc((nwork ? nwork : 1) * sizeof *all), *kinds = malloc((nwork ? nwork : 1) * sizeof *kinds);
    uint8_t *kind_of = malloc((size_t)max_name + 1); /* HTA's kernel type per name, 0xFF: not known yet */
    if ((h->step_filter && !pairs) || !all || !kinds || !kind_of) {
        free(pairs), free(all), free(kinds), free(kind_of);
        return TPROF_ENOMEM;
    }
    memset(kind_of, 0xFF, (size_t)max_name + 1);
    size_t np = 0;
    for (size_t i = 0; h->step_filter && i < nev; i++)
        if (hta_row(&v, &ev[i], &r) && !r.gpu && ev[i].correlation != -1) {
            pairs[2 * np] = ev[i].correlation;
            pairs[2 * np + 1] = r.ts;
            np++;
        }
    if (np) qsort(pairs, np, 2 * sizeof *pairs, cmp_corr);
    size_t na = 0, nc = 0, nm = 0;
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        if (!hta_row(&v, e, &r)) continue;
        if (h->step_filter) {
            /* GPU events stay when a CPU event before the last step carries
             * their correlation; CPU events when they start before it */
            int64_t launched = r.gpu ? launch_ts(pairs, np, e->correlation) : r.ts;
            if (launched >= last_step) {
                if (r.stream != -1) {
                    if (launched == INT64_MAX) h->dropped_unlaunched++, h->dropped_unlaunched_ns += r.end - r.ts;
                    else
                        h->dropped_last_step++;
                }
                continue;
            }
        }
        if (r.stream == -1) continue;
        tprof_interval iv = { r.ts, r.end };
        all[na++] = iv;
        if (kind_of[e->name] == 0xFF) kind_of[e->name] = (uint8_t)tprof_hta_kind_of(tprof_trace_str(t, e->name));
        tprof_hta_kind kind = (tprof_hta_kind)kind_of[e->name];
        if (kind == TPROF_HTA_COMPUTE) kinds[nc++] = iv;
        else if (kind == TPROF_HTA_COMM)
            kinds[nwork - ++nm] = iv;
        /* what sets the two definitions apart, for the note */
        if (e->kind != TPROF_KIND_GPU) h->host_events++;
        else if (e->klass == TPROF_CLASS_OTHER)
            h->sync_busy++;
        else if ((kind == TPROF_HTA_COMPUTE) != (e->klass == TPROF_CLASS_COMPUTE))
            h->typed_apart++;
    }
    h->events = na;
    if (na) {
        size_t ga = hta_groups(all, na);
        tprof_interval *comp = kinds, *comm = kinds + nwork - nm;
        size_t gc = hta_groups(comp, nc), gm = hta_groups(comm, nm);
        h->computed = 1;
        h->span_ns = all[ga - 1].end - all[0].start; /* first start to the last group's end */
        h->idle_ns = h->span_ns - groups_length(all, ga);
        h->compute_ns = groups_length(comp, gc);
        h->non_compute_ns = h->span_ns - h->compute_ns - h->idle_ns;
        int64_t comm_total = groups_length(comm, gm);
        if (comm_total > 0) h->comm_overlap = (double)tprof_interval_overlap(comp, gc, comm, gm) / (double)comm_total;
    } else
        h->not_computed = "no GPU events: HTA stops with an error";
    free(pairs), free(all), free(kinds), free(kind_of);
    return 0;
}
