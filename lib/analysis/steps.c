/* Steps: each ProfilerStep's CPU span, the GPU work launched in it, and
 * step-time statistics (docs/METRICS.md). */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "intervals.h"
#include "step_time.h"
#include "launch.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Overlapping markers: the phase that wins an instant. */
static const tprof_phase priority[] = { TPROF_PHASE_DATA, TPROF_PHASE_OPTIMIZER, TPROF_PHASE_BACKWARD,
                                        TPROF_PHASE_FORWARD };

typedef struct {
    int64_t at;
    int8_t phase, delta; /* +1 a marker starts, -1 it ends */
} edge;

static int cmp_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* A step's timeline as segments [start, next start) with one phase each. */
typedef struct {
    int64_t start;
    uint8_t phase;
} segment;

/* Splits step S (span [t0, t1)) by the markers given as edges; appends the
 * segments to SEG and adds each phase's time to ROW. */
static size_t split_step(edge *e, size_t ne, int64_t t0, int64_t t1, tprof_step_row *row, segment *seg)
{
    size_t sorted = 1;
    while (sorted < ne && e[sorted].at >= e[sorted - 1].at) sorted++;
    if (sorted < ne) qsort(e, ne, sizeof *e, cmp_edge); /* the order within an instant does not matter */
    int active[TPROF_PHASE_COUNT] = { 0 };
    size_t ns = 0, k = 0;
    int64_t at = t0;
    while (at < t1) {
        while (k < ne && e[k].at <= at) {
            active[e[k].phase] += e[k].delta;
            k++;
        }
        int64_t next = k < ne && e[k].at < t1 ? e[k].at : t1;
        uint8_t ph = TPROF_PHASE_OTHER;
        for (size_t p = 0; p < sizeof priority / sizeof *priority; p++)
            if (active[priority[p]] > 0) {
                ph = (uint8_t)priority[p];
                break;
            }
        if (ns == 0 || seg[ns - 1].phase != ph) seg[ns++] = (segment){ at, ph };
        row->phase_cpu_ns[ph] = tprof_sat_add(row->phase_cpu_ns[ph], next - at);
        at = next;
    }
    return ns;
}

/* The phase of the segment holding AT. */
static uint8_t phase_at(const segment *seg, size_t n, int64_t at)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (seg[mid].start <= at) lo = mid + 1;
        else hi = mid;
    }
    return lo ? seg[lo - 1].phase : TPROF_PHASE_OTHER;
}

void tprof_steps_free(tprof_steps_result *r)
{
    if (!r) return;
    free(r->steps);
    free(r);
}

/* The Ascend profiler's split of a step (a step_trace_time.csv row) into ROW. */
static void take_split(tprof_step_row *row, const tprof_step_split *s)
{
    int64_t *const to[TPROF_SPLIT_COLS] = {
        [TPROF_SPLIT_COMPUTING] = &row->computing_ns, [TPROF_SPLIT_COMM_NOT_OVERLAPPED] = &row->comm_not_overlapped_ns,
        [TPROF_SPLIT_OVERLAPPED] = &row->overlapped_ns, [TPROF_SPLIT_COMMUNICATION] = &row->communication_ns,
        [TPROF_SPLIT_FREE] = &row->free_ns, [TPROF_SPLIT_STAGE] = &row->stage_ns, [TPROF_SPLIT_BUBBLE] = &row->bubble_ns,
        [TPROF_SPLIT_COMM_NO_RECV] = &row->comm_not_overlapped_no_recv_ns, [TPROF_SPLIT_PREPARING] = &row->preparing_ns,
    };
    for (int c = 0; c < TPROF_SPLIT_COLS; c++)
        if (s->ns[c] != INT64_MIN) *to[c] = s->ns[c];
    row->recorded = 1;
}

/* The trace's own step_trace_time.csv rows: the steps of a step table
 * alone, else the split of the ProfilerSteps of the same number. */
static int take_splits(const tprof_trace *t, tprof_steps_result *r)
{
    const tprof_step_split *s = tprof_trace_step_splits(t);
    size_t ns = tprof_trace_nstep_splits(t), own = 0;
    for (size_t i = 0; i < ns; i++) {
        if (s[i].rank >= 0) r->cluster_rows++;
        else own++;
    }
    if (!r->nsteps && own) {
        tprof_step_row *rows = calloc(own, sizeof *rows);
        if (!rows) return TPROF_ENOMEM;
        free(r->steps);
        r->steps = rows;
        for (size_t i = 0; i < ns; i++) {
            int64_t dur = tprof_split_step_ns(&s[i]);
            if (s[i].rank >= 0 || dur < 0) continue;
            tprof_step_row *row = &r->steps[r->nsteps++];
            *row = (tprof_step_row){ .number = s[i].step, .dur = dur, .no_span = 1 };
            take_split(row, &s[i]);
            r->recorded++;
        }
        return 0;
    }
    for (size_t i = 0; i < ns; i++)
        for (size_t k = 0; s[i].rank < 0 && k < r->nsteps; k++)
            if (r->steps[k].number == s[i].step) {
                r->recorded += !r->steps[k].recorded;
                take_split(&r->steps[k], &s[i]);
                break;
            }
    return 0;
}

int tprof_steps(const tprof_trace *t, tprof_steps_result **out)
{
    *out = NULL;
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    tprof_steps_result *r = calloc(1, sizeof *r);
    if (!r) return TPROF_ENOMEM;
    size_t n = m->nsteps;
    r->nsteps = n;
    r->steps = calloc(n ? n : 1, sizeof *r->steps);
    if (!r->steps) goto oom;
    for (size_t i = 0; i < n; i++)
        r->steps[i] = (tprof_step_row){ .number = m->steps[i].number, .ts = m->steps[i].ts, .dur = m->steps[i].dur };
    *out = r;
    if (n == 0) { /* a step table alone: its rows are the steps */
        if (take_splits(t, r)) goto oom_out;
        n = r->nsteps;
        if (n == 0) return 0;
    }

    /* step time statistics */
    int64_t *d = malloc(n * sizeof *d), sum = 0;
    if (!d) goto oom_out;
    for (size_t i = 0; i < n; i++) {
        d[i] = r->steps[i].dur;
        sum = tprof_sat_add(sum, d[i]);
    }
    qsort(d, n, sizeof *d, cmp_i64);
    r->min_ns = d[0];
    r->max_ns = d[n - 1];
    r->p50_ns = d[(n - 1) / 2];
    r->mean_ns = sum / (int64_t)n;
    r->spread = r->mean_ns > 0 ? (double)(r->max_ns - r->min_ns) / (double)r->mean_ns : 0.0;
    free(d);
    if (r->steps[0].no_span) return 0;

    /* phases: marker spans clipped to the step they start in */
    const tprof_event *evs = tprof_trace_events(t);
    size_t nall = tprof_trace_nevents(t), nmark = 0;
    for (size_t i = 0; i < nall; i++) nmark += (evs[i].flags & TPROF_EV_MARKER) != 0;
    edge *edges = malloc((2 * nmark + 1) * sizeof *edges);
    size_t *efirst = calloc(n + 1, sizeof *efirst);
    long *mstep = malloc((nmark + 1) * sizeof *mstep);
    segment *seg = malloc((2 * nmark + n + 1) * sizeof *seg);
    size_t *sfirst = calloc(n + 1, sizeof *sfirst);
    if (!edges || !efirst || !mstep || !seg || !sfirst) {
        free(edges);
        free(efirst);
        free(mstep);
        free(seg);
        free(sfirst);
        goto oom_out;
    }
    for (size_t i = 0, j = 0; i < nall; i++)
        if (evs[i].flags & TPROF_EV_MARKER) {
            mstep[j] = tprof_step_at(m->steps, n, evs[i].ts);
            if (mstep[j] >= 0) efirst[mstep[j] + 1] += 2;
            j++;
        }
    for (size_t s = 0; s < n; s++) efirst[s + 1] += efirst[s];
    for (size_t i = 0, j = 0; i < nall; i++)
        if (evs[i].flags & TPROF_EV_MARKER) {
            long s = mstep[j++];
            if (s < 0) continue;
            int64_t end = tprof_end_ns(evs[i].ts, evs[i].dur), t1 = tprof_end_ns(m->steps[s].ts, m->steps[s].dur);
            edges[efirst[s]++] = (edge){ evs[i].ts, (int8_t)evs[i].klass, +1 };
            edges[efirst[s]++] = (edge){ end < t1 ? end : t1, (int8_t)evs[i].klass, -1 };
            r->phases_found = 1;
        }
    size_t nseg = 0;
    for (size_t s = 0, at = 0; s < n; s++) { /* efirst[s] is now the end of step s's edges */
        sfirst[s] = nseg;
        nseg += split_step(edges + at, efirst[s] - at, m->steps[s].ts, tprof_end_ns(m->steps[s].ts, m->steps[s].dur),
                           &r->steps[s], seg + nseg);
        at = efirst[s];
    }
    sfirst[n] = nseg;
    free(edges);
    free(efirst);
    free(mstep);

    /* GPU work by the step it was launched in */
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t);
    const int64_t *launched = tprof_launch_times(t);
    if (!launched) {
        free(seg);
        free(sfirst);
        goto oom_out;
    }
    /* each step's intervals together (a counting sort by step), then their union */
    long *owner = malloc((nev ? nev : 1) * sizeof *owner);
    size_t *first = calloc(n + 1, sizeof *first);
    tprof_interval *iv = malloc((nev ? nev : 1) * sizeof *iv);
    if (!owner || !first || !iv) {
        free(owner);
        free(first);
        free(iv);
        free(seg);
        free(sfirst);
        goto oom_out;
    }
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        owner[i] = -1;
        if (e->kind != TPROF_KIND_GPU || e->klass == TPROF_CLASS_OTHER) continue;
        int64_t at = launched[i];
        long s = tprof_step_at(m->steps, n, at);
        if (s < 0) continue;
        owner[i] = s;
        tprof_step_row *row = &r->steps[s];
        uint8_t ph = phase_at(seg + sfirst[s], sfirst[s + 1] - sfirst[s], at);
        row->phase_gpu_ns[ph] = tprof_sat_add(row->phase_gpu_ns[ph], e->dur);
        int64_t end = tprof_end_ns(e->ts, e->dur);
        row->gpu_events++;
        row->gpu_total_ns = tprof_sat_add(row->gpu_total_ns, e->dur);
        if (end > row->gpu_end_ns) row->gpu_end_ns = end;
        first[s + 1]++;
    }
    for (size_t s = 0; s < n; s++) first[s + 1] += first[s];
    for (size_t i = 0; i < nev; i++)
        if (owner[i] >= 0) iv[first[owner[i]]++] = (tprof_interval){ ev[i].ts, tprof_end_ns(ev[i].ts, ev[i].dur) };
    for (size_t s = 0, at = 0; s < n; s++) { /* first[s] is now the end of step s */
        r->steps[s].gpu_busy_ns = tprof_interval_union(iv + at, first[s] - at);
        at = first[s];
    }
    free(owner);
    free(first);
    free(iv);
    free(seg);
    free(sfirst);
    if (tprof_step_device_split(t, r->steps, n) || take_splits(t, r)) goto oom_out;
    for (size_t s = 0; s < n; s++)
        for (int p = 0; p < TPROF_PHASE_COUNT; p++) {
            r->phase_cpu_ns[p] = tprof_sat_add(r->phase_cpu_ns[p], r->steps[s].phase_cpu_ns[p]);
            r->phase_gpu_ns[p] = tprof_sat_add(r->phase_gpu_ns[p], r->steps[s].phase_gpu_ns[p]);
        }
    return 0;
oom_out:
    *out = NULL;
oom:
    tprof_steps_free(r);
    return TPROF_ENOMEM;
}

/* ---- the steps result as typed tables ---------------------------------------
 * JSON keeps its historical shape: the summary, then "steps", each with its
 * "phases" keyed by phase name. CSV is the steps table (its step number
 * headed "step"). */
enum { S_COUNT, S_MEAN, S_P50, S_MIN, S_MAX, S_SPREAD, S_PHASES_FOUND, S_RECORDED, S_CLUSTER_ROWS, S_NCOLS };
static const tprof_col_desc steps_top_cols[S_NCOLS] = {
    [S_COUNT] = TPROF_COL("steps_count", TPROF_COL_COUNT, TPROF_COMBINE_MAX, "steps", "ProfilerSteps in the trace"),
    [S_MEAN] = TPROF_COL("mean_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, "step mean", "mean step time (CPU span)", .flags = TPROF_COLF_METRIC),
    [S_P50] = TPROF_COL("p50_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, "step p50", "median step time"),
    [S_MIN] = TPROF_COL("min_ns", TPROF_COL_DURATION, TPROF_COMBINE_MIN, "shortest", "shortest step"),
    [S_MAX] = TPROF_COL("max_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, "longest", "longest step"),
    [S_SPREAD] = TPROF_COL("spread", TPROF_COL_REAL, TPROF_COMBINE_MAX, "spread", "(max - min) / mean"),
    [S_PHASES_FOUND] = TPROF_COL("phases_found", TPROF_COL_BOOL, TPROF_COMBINE_MAX, NULL,
                                 "phase markers (record_function names, DataLoader, Optimizer, autograd) were found"),
    [S_RECORDED] = TPROF_COL("split_recorded", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                             "steps whose device split is the Ascend profiler's own (step_trace_time.csv)"),
    [S_CLUSTER_ROWS] = TPROF_COL("cluster_rows", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                                 "rows of many ranks in msprof-analyze's cluster_step_trace_time.csv, not shown "
                                 "here (`ranks` compares them)"),
};
enum { P_PHASE, P_CPU, P_GPU, P_NCOLS };
static const tprof_col_desc phase_cols[P_NCOLS] = {
    [P_PHASE] = TPROF_COL("phase", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL,
                          "data, forward, backward, optimizer, other", .flags = TPROF_COLF_KEY),
    [P_CPU] = TPROF_COL("cpu_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                        "CPU time of the step span in the phase"),
    [P_GPU] = TPROF_COL("gpu_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                        "GPU time of the work launched in the phase"),
};
static const tprof_table_desc phases_desc = { .name = "phases", .doc = "the step's time by phase", .cols = phase_cols,
                                              .ncols = P_NCOLS, .json_keyed = 1 };
static const tprof_table_desc *const step_children[] = { &phases_desc };
enum { R_NUMBER, R_TS, R_DUR, R_EVENTS, R_TOTAL, R_BUSY, R_END, R_COMPUTING, R_COMM_EXPOSED, R_OVERLAPPED,
       R_COMMUNICATION, R_FREE, R_STAGE, R_BUBBLE, R_COMM_EXPOSED_NO_RECV, R_PREPARING, R_NCOLS };
static const tprof_col_desc step_cols[R_NCOLS] = {
    [R_NUMBER] = TPROF_COL("number", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "N of ProfilerStep#N",
                           .flags = TPROF_COLF_KEY, .csv_name = "step"),
    [R_TS] = TPROF_COL("ts_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_MIN, NULL, "start of the step span"),
    [R_DUR] = TPROF_COL("dur_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "CPU time of the step span",
                        .flags = TPROF_COLF_METRIC),
    [R_EVENTS] = TPROF_COL("gpu_events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "GPU events launched in the step"),
    [R_TOTAL] = TPROF_COL("gpu_total_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "their durations summed"),
    [R_BUSY] = TPROF_COL("gpu_busy_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "the union of their intervals"),
    [R_END] = TPROF_COL("gpu_end_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_MAX, NULL, "end of the last of them"),
    /* the device's time in the step's window, Ascend's step_trace_time.csv columns in its order */
    [R_COMPUTING] = TPROF_COL("computing_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,
                              "device time computing in the step's window (Computing)"),
    [R_COMM_EXPOSED] = TPROF_COL("comm_not_overlapped_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,
                                 "communicating and not computing (Communication(Not Overlapped))"),
    [R_OVERLAPPED] = TPROF_COL("overlapped_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,
                               "communicating while computing (Overlapped)"),
    [R_COMMUNICATION] = TPROF_COL("communication_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,
                                  "communicating (Communication)"),
    [R_FREE] = TPROF_COL("free_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,
                         "after the step's first task, neither computing nor communicating (Free)"),
    [R_STAGE] = TPROF_COL("stage_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,
                          "the step's window less preparing and bubble (Stage)"),
    [R_BUBBLE] = TPROF_COL("bubble_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL, "receiving (Bubble)"),
    [R_COMM_EXPOSED_NO_RECV] = TPROF_COL("comm_not_overlapped_exclude_receive_ns", TPROF_COL_DURATION,
                                         TPROF_COMBINE_DIST, NULL,
                                         "communication not overlapped, receives left out "
                                         "(Communication(Not Overlapped and Exclude Receive))"),
    [R_PREPARING] = TPROF_COL("preparing_ns", TPROF_COL_DURATION, TPROF_COMBINE_DIST, NULL,
                              "from the step's start to its first task (Preparing)"),
};
static const tprof_table_desc steps_rows_desc = { .name = "steps", .doc = "one row per ProfilerStep",
                                                  .cols = step_cols, .ncols = R_NCOLS, .children = step_children,
                                                  .nchildren = 1 };
static const tprof_table_desc steps_top = { .name = "", .cols = steps_top_cols, .ncols = S_NCOLS };
static const tprof_table_desc *const steps_tables[] = { &steps_rows_desc };
const tprof_result_desc tprof_steps_desc = { .name = "steps", .version = 2, .top = &steps_top,
                                             .tables = steps_tables, .ntables = 1, .csv_table = 1 };

int tprof_steps_tables(const tprof_steps_result *r, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_steps_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res);
    tprof_rows_set_i(top, 0, S_COUNT, (int64_t)r->nsteps);
    tprof_rows_set_i(top, 0, S_MEAN, r->mean_ns);
    tprof_rows_set_i(top, 0, S_P50, r->p50_ns);
    tprof_rows_set_i(top, 0, S_MIN, r->min_ns);
    tprof_rows_set_i(top, 0, S_MAX, r->max_ns);
    tprof_rows_set_d(top, 0, S_SPREAD, r->spread);
    tprof_rows_set_i(top, 0, S_PHASES_FOUND, r->phases_found != 0);
    tprof_rows_set_i(top, 0, S_RECORDED, (int64_t)r->recorded);
    tprof_rows_set_i(top, 0, S_CLUSTER_ROWS, (int64_t)r->cluster_rows);
    tprof_rows *rows = tprof_result_table(res, 0);
    int rc = 0;
    for (size_t i = 0; !rc && i < r->nsteps; i++) {
        const tprof_step_row *s = &r->steps[i];
        long k = tprof_rows_add(rows);
        tprof_rows *ph = k < 0 ? NULL : tprof_rows_child(rows, (size_t)k, 0);
        if (!ph) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(rows, (size_t)k, R_NUMBER, s->number);
        tprof_rows_set_i(rows, (size_t)k, R_DUR, s->dur);
        if (!s->no_span) { /* a step table alone says nothing of these */
            tprof_rows_set_i(rows, (size_t)k, R_TS, s->ts);
            tprof_rows_set_i(rows, (size_t)k, R_EVENTS, (int64_t)s->gpu_events);
            tprof_rows_set_i(rows, (size_t)k, R_TOTAL, s->gpu_total_ns);
            tprof_rows_set_i(rows, (size_t)k, R_BUSY, s->gpu_busy_ns);
            tprof_rows_set_i(rows, (size_t)k, R_END, s->gpu_end_ns);
        }
        tprof_rows_set_i(rows, (size_t)k, R_COMPUTING, s->computing_ns);
        tprof_rows_set_i(rows, (size_t)k, R_COMM_EXPOSED, s->comm_not_overlapped_ns);
        tprof_rows_set_i(rows, (size_t)k, R_OVERLAPPED, s->overlapped_ns);
        tprof_rows_set_i(rows, (size_t)k, R_COMMUNICATION, s->communication_ns);
        tprof_rows_set_i(rows, (size_t)k, R_FREE, s->free_ns);
        tprof_rows_set_i(rows, (size_t)k, R_STAGE, s->stage_ns);
        tprof_rows_set_i(rows, (size_t)k, R_BUBBLE, s->bubble_ns);
        tprof_rows_set_i(rows, (size_t)k, R_COMM_EXPOSED_NO_RECV, s->comm_not_overlapped_no_recv_ns);
        tprof_rows_set_i(rows, (size_t)k, R_PREPARING, s->preparing_ns);
        for (int p = 0; !rc && p < TPROF_PHASE_COUNT; p++) {
            long q = tprof_rows_add(ph);
            if (q < 0 || tprof_rows_set_s(ph, (size_t)q, P_PHASE, tprof_phase_name((tprof_phase)p))) {
                rc = TPROF_ENOMEM;
                break;
            }
            tprof_rows_set_i(ph, (size_t)q, P_CPU, s->phase_cpu_ns[p]);
            tprof_rows_set_i(ph, (size_t)q, P_GPU, s->phase_gpu_ns[p]);
        }
    }
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
