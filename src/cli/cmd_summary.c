/* trainprof summary: the first screen on a new profile. One read of each
 * rank's trace, every analysis over the same model. */
#include <getopt.h>
#include <pthread.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "trainprof/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: trainprof summary [options] TRACE...\n\n"
            "Where the time goes, on one rank or many (one trace per rank): run facts,\n"
            "step time, phase split, temporal breakdown, communication, top kernels and ops,\n"
            "ranks, advice.\n"
            "Ranks are compared by step number and by durations, so their clocks need no\n"
            "alignment. --format json gives all of it; --format csv every table in turn,\n"
            "each after a line '# table: NAME' (a trace's parts as traces.steps, ...,\n"
            "their rows after the trace's label).\n\n"
            "options:\n"
            "  --top N               kernels and ops listed (default 10)\n"
            "  --definition D        the GPU-time and overlap headline: trainprof (default) or\n"
            "                        hta (HTA's figures first, trainprof's where they differ)\n" CLI_COMMON_HELP);
}

typedef struct {
    long top;
    tprof_definition headline;
} summary_ctx;

/* One GPU-time line: the shares of SPAN under NAME (empty: the headline). */
static void gpu_time_line(const char *lead, const tprof_rows *t, const char *prefix, int64_t span, const char *tail)
{
    char idle[32], comp[32], non[32];
    snprintf(idle, sizeof idle, "%sidle_ns", prefix);
    snprintf(comp, sizeof comp, "%scompute_ns", prefix);
    snprintf(non, sizeof non, "%snon_compute_ns", prefix);
    printf("%sidle %.1f%%, compute %.1f%%, non-compute %.1f%%%s\n", lead, cli_pct(tprof_rows_int(t, 0, idle), span),
           cli_pct(tprof_rows_int(t, 0, comp), span), cli_pct(tprof_rows_int(t, 0, non), span), tail);
}

/* What every section reads of the traces' rows: each trace's label, and
 * a buffer of one value per trace for the across-ranks lines. */
typedef struct {
    const tprof_rows *tr;
    size_t n;
    int across;       /* the distribution, not a line per trace */
    const char **label;
    double *v;        /* NaN: the trace has no value */
    int hta_first;
} view;

typedef enum { V_DURATION, V_PERCENT } value_kind;

static const char *fmt_value(char *buf, size_t len, double x, value_kind k)
{
    if (k == V_DURATION) return tprof_fmt_duration(buf, len, (int64_t)llround(x));
    snprintf(buf, len, "%.1f%%", x);
    return buf;
}

/* "  WHAT: min X (rank a), p50 Y, p90 Z, max W (rank b)" over v->v. */
static void dist_line(const view *v, const char *what, value_kind k)
{
    tprof_col_dist d;
    if (tprof_dist_of(v->v, NULL, v->n, &d) || !d.n) return;
    char lo[32], p50[32], p90[32], hi[32];
    fmt_value(lo, sizeof lo, d.min, k);
    if (d.min == d.max) {
        printf("  %s: %s on every rank%s\n", what, lo, d.n < v->n ? " that has it" : "");
        return;
    }
    printf("  %s: min %s (%s), p50 %s, p90 %s, max %s (%s)\n", what, lo, v->label[d.min_rank],
           fmt_value(p50, sizeof p50, d.p50, k), fmt_value(p90, sizeof p90, d.p90, k),
           fmt_value(hi, sizeof hi, d.max, k), v->label[d.max_rank]);
}

/* "  WHAT: rank a X, rank b Y, rank c Z": the CLI_RANKS_WORST highest of v->v. */
static void worst_line(const view *v, const char *what, value_kind k)
{
    size_t best[CLI_RANKS_WORST], m = tprof_dist_worst(v->v, v->n, CLI_RANKS_WORST, 0, best);
    if (m < 2) return;
    printf("  %s:", what);
    for (size_t i = 0; i < m; i++) {
        char b[32];
        printf("%s %s %s", i ? "," : "", v->label[best[i]], fmt_value(b, sizeof b, v->v[best[i]], k));
    }
    printf("\n");
}

/* The traces whose value is NaN, named: "  WHAT: rank 3, rank 7, ... (N)". */
static void missing_line(const view *v, const char *what)
{
    size_t m = 0;
    for (size_t i = 0; i < v->n; i++) m += isnan(v->v[i]) != 0;
    if (!m) return;
    printf("  %s:", what);
    for (size_t i = 0, shown = 0; i < v->n && shown < 5; i++)
        if (isnan(v->v[i])) printf("%s %s", shown++ ? "," : "", v->label[i]);
    printf("%s (%zu of %zu)\n", m > 5 ? ", ..." : "", m, v->n);
}

static void run_section(const view *v)
{
    const tprof_rows *tr = v->tr;
    size_t n = v->n;
    printf("== run ==\n");
    printf("%zu trace%s", n, n == 1 ? "" : "s");
    if (n && !tprof_rows_at(tr, 0, "world_size")->null) printf(", world size %" PRId64, tprof_rows_int(tr, 0, "world_size"));
    if (n && !tprof_rows_at(tr, 0, "backend")->null) printf(", backend %s", tprof_rows_at(tr, 0, "backend")->v.s);
    if (n && !tprof_rows_at(tr, 0, "device")->null) printf(", %s", tprof_rows_at(tr, 0, "device")->v.s);
    printf("\n");
    if (!v->across) {
        for (size_t i = 0; i < n; i++)
            printf("  %s: %s, %" PRId64 " events, %" PRId64 " steps%s\n", v->label[i], tprof_rows_at(tr, i, "file")->v.s,
                   tprof_rows_int(tr, i, "events"), tprof_rows_int(tr, i, "nsteps"),
                   tprof_rows_int(tr, i, "truncated") ? " (TRUNCATED)" : "");
        return;
    }
    int64_t *ranks = malloc(n * sizeof *ranks);
    if (ranks) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (tprof_rows_int(tr, i, "rank") >= 0) ranks[k++] = tprof_rows_int(tr, i, "rank");
        char set[160];
        if (k) printf("  %s; files %s ... %s\n", tprof_fmt_rank_set(set, sizeof set, ranks, k, NULL, 0),
                      tprof_rows_at(tr, 0, "file")->v.s, tprof_rows_at(tr, n - 1, "file")->v.s);
        if (k < n) printf("  %zu traces without a rank (labelled trace N)\n", n - k);
        free(ranks);
    }
    for (size_t i = 0; i < n; i++) v->v[i] = (double)tprof_rows_int(tr, i, "events");
    char a[32], b[32];
    tprof_col_dist d;
    if (!tprof_dist_of(v->v, NULL, n, &d) && d.n)
        printf("  events per trace: min %.0f (%s), p50 %.0f, max %.0f (%s)\n", d.min, v->label[d.min_rank], d.p50,
               d.max, v->label[d.max_rank]);
    for (size_t i = 0; i < n; i++) v->v[i] = (double)tprof_rows_int(tr, i, "nsteps");
    if (!tprof_dist_of(v->v, NULL, n, &d) && d.n) {
        snprintf(a, sizeof a, "%.0f", d.min);
        snprintf(b, sizeof b, "%.0f", d.max);
        if (d.min == d.max) printf("  ProfilerSteps per trace: %s\n", a);
        else printf("  ProfilerSteps per trace: %s (%s) to %s (%s)\n", a, v->label[d.min_rank], b, v->label[d.max_rank]);
    }
    for (size_t i = 0; i < n; i++) v->v[i] = tprof_rows_int(tr, i, "truncated") ? NAN : 0;
    missing_line(v, "TRUNCATED");
}

static void steps_section(const view *v)
{
    char a[32], b[32], c[32], d[32];
    printf("\n== steps ==\n");
    for (size_t i = 0; i < v->n; i++) {
        const tprof_rows *s = tprof_rows_child_c(v->tr, i, 0);
        v->v[i] = tprof_rows_int(s, 0, "count") ? (double)tprof_rows_int(s, 0, "mean_ns") : NAN;
        if (v->across) continue;
        if (!tprof_rows_int(s, 0, "count")) printf("  %s: no ProfilerStep spans\n", v->label[i]);
        else
            printf("  %s: %" PRId64 " steps, mean %s, p50 %s, min %s, max %s (spread %.1f%%)\n", v->label[i],
                   tprof_rows_int(s, 0, "count"), tprof_fmt_duration(a, sizeof a, tprof_rows_int(s, 0, "mean_ns")),
                   tprof_fmt_duration(b, sizeof b, tprof_rows_int(s, 0, "p50_ns")), tprof_fmt_duration(c, sizeof c, tprof_rows_int(s, 0, "min_ns")),
                   tprof_fmt_duration(d, sizeof d, tprof_rows_int(s, 0, "max_ns")), tprof_rows_real(s, 0, "spread") * 100);
    }
    if (!v->across) return;
    dist_line(v, "mean step time", V_DURATION);
    worst_line(v, "slowest", V_DURATION);
    missing_line(v, "no ProfilerStep spans");
    for (size_t i = 0; i < v->n; i++) {
        const tprof_rows *s = tprof_rows_child_c(v->tr, i, 0);
        v->v[i] = tprof_rows_int(s, 0, "count") ? tprof_rows_real(s, 0, "spread") * 100 : NAN;
    }
    dist_line(v, "spread within a rank ((max - min) / mean)", V_PERCENT);
}

/* The CPU and GPU shares of each phase of trace I; 0 when it has none. */
enum { MAX_PHASES = 8 };

/* The CPU and GPU shares of each phase of trace I (at most MAX_PHASES); 0
 * when it has none. A trace that launched no GPU work has no GPU share. */
static size_t phase_shares(const view *v, size_t i, const char **name, double *cpu, double *gpu)
{
    const tprof_rows *ph = tprof_rows_child_c(v->tr, i, 1);
    size_t np = tprof_rows_count(ph);
    if (np > MAX_PHASES) np = MAX_PHASES;
    int64_t c = 0, g = 0;
    for (size_t p = 0; p < np; p++) {
        c = tprof_sat_add(c, tprof_rows_int(ph, p, "cpu_ns"));
        g = tprof_sat_add(g, tprof_rows_int(ph, p, "gpu_ns"));
    }
    for (size_t p = 0; p < np; p++) {
        name[p] = tprof_rows_at(ph, p, "phase")->v.s;
        cpu[p] = cli_pct(tprof_rows_int(ph, p, "cpu_ns"), c);
        gpu[p] = g > 0 ? cli_pct(tprof_rows_int(ph, p, "gpu_ns"), g) : NAN;
    }
    return np;
}

static void phases_section(const view *v, int any_gpu)
{
    const char *name[MAX_PHASES];
    double cpu[MAX_PHASES], gpu[MAX_PHASES];
    size_t with = 0;
    for (size_t i = 0; i < v->n; i++) with += phase_shares(v, i, name, cpu, gpu) > 0;
    if (!with) return; /* nothing to say: no trace marks its phases */
    printf("\n== phases (share of step time on the CPU%s) ==\n", any_gpu ? " / of the GPU work launched" : "");
    if (!v->across) {
        for (size_t i = 0; i < v->n; i++) {
            size_t np = phase_shares(v, i, name, cpu, gpu);
            if (!np) {
                printf("  %s: no phase markers in the steps\n", v->label[i]);
                continue;
            }
            printf("  %s:", v->label[i]);
            for (size_t p = 0; p < np; p++) {
                if (any_gpu) printf(" %s %.0f%%/%.0f%%%s", name[p], cpu[p], isnan(gpu[p]) ? 0.0 : gpu[p], p + 1 < np ? "," : "\n");
                else printf(" %s %.0f%%%s", name[p], cpu[p], p + 1 < np ? "," : "\n");
            }
        }
        return;
    }
    /* each rank's shares once (NaN: the rank has no such phase), then per phase
     * the median across ranks and its range; the phase names of the first rank that marks them */
    double (*share)[2][MAX_PHASES] = malloc(v->n * sizeof *share);
    if (!share) return;
    const char *names[MAX_PHASES];
    size_t np = 0;
    for (size_t i = 0; i < v->n; i++) {
        size_t k = phase_shares(v, i, name, share[i][0], share[i][1]);
        for (size_t p = k; p < MAX_PHASES; p++) share[i][0][p] = share[i][1][p] = NAN;
        if (!np && k) {
            np = k;
            memcpy(names, name, k * sizeof *names);
        }
    }
    tprof_col_dist d[2][MAX_PHASES];
    for (size_t p = 0; p < np; p++)
        for (int side = 0; side < 2; side++) {
            for (size_t i = 0; i < v->n; i++) v->v[i] = share[i][side][p];
            tprof_dist_of(v->v, NULL, v->n, &d[side][p]);
        }
    printf("  p50 across ranks:");
    for (size_t p = 0; p < np; p++) {
        if (any_gpu) printf(" %s %.0f%%/%.0f%%%s", names[p], d[0][p].p50, d[1][p].p50, p + 1 < np ? "," : "\n");
        else printf(" %s %.0f%%%s", names[p], d[0][p].p50, p + 1 < np ? "," : "\n");
    }
    /* the phases whose share differs across ranks by a point or more */
    int spread = 0;
    for (size_t p = 0; p < np; p++)
        for (int side = 0; side < 1 + any_gpu; side++) {
            const tprof_col_dist *x = &d[side][p];
            if (x->max - x->min < 1.0) continue;
            printf("%s %s %s %.0f%% (%s) to %.0f%% (%s)", spread++ ? "," : "  ranges across ranks:", names[p],
                   side ? "GPU" : "CPU", x->min, v->label[x->min_rank], x->max, v->label[x->max_rank]);
        }
    if (spread) printf("\n");
    for (size_t i = 0; i < v->n; i++) v->v[i] = isnan(share[i][0][0]) ? NAN : 0; /* a rank without phases */
    free(share);
    missing_line(v, "no phase markers");
}

static void gpu_section(const view *v)
{
    char a[32];
    printf("\n== GPU time (temporal breakdown: %s ==\n",
           v->hta_first ? "HTA's figures; trainprof's where they differ)" : "trainprof's definition; HTA's where it differs)");
    if (!v->across) {
        for (size_t i = 0; i < v->n; i++) {
            const tprof_rows *t = tprof_rows_child_c(v->tr, i, 2);
            if (!tprof_rows_int(t, 0, "events")) {
                printf("  %s: no GPU events\n", v->label[i]);
                continue;
            }
            int64_t span = tprof_rows_int(t, 0, "span_ns"), hspan = tprof_rows_int(t, 0, "hta_span_ns");
            const char *why = tprof_rows_str(t, 0, "hta_differs");
            int hta = v->hta_first && !tprof_rows_at(t, 0, "hta_span_ns")->null;
            const char *left_out = tprof_rows_int(t, 0, "last_step_excluded") ? " (last step left out)" : "";
            char lead[160], tail[400];
            snprintf(lead, sizeof lead, "  %s: span %s: %s", v->label[i], tprof_fmt_duration(a, sizeof a, hta ? hspan : span),
                     hta ? "HTA: " : "");
            gpu_time_line(lead, t, hta ? "hta_" : "", hta ? hspan : span, hta ? "" : left_out);
            if (why && *why) {
                snprintf(tail, sizeof tail, ": %s", why);
                gpu_time_line(hta ? "    trainprof: " : "    HTA: ", t, hta ? "" : "hta_", hta ? span : hspan, tail);
            }
        }
        return;
    }
    static const char *const part[] = { "idle", "compute", "non_compute" };
    static const char *const title[] = { "idle", "compute", "non-compute" };
    size_t differ = 0, first_differ = 0;
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < v->n; i++) {
            const tprof_rows *t = tprof_rows_child_c(v->tr, i, 2);
            int hta = v->hta_first && !tprof_rows_at(t, 0, "hta_span_ns")->null;
            char col[32];
            snprintf(col, sizeof col, "%s%s_ns", hta ? "hta_" : "", part[k]);
            int64_t span = tprof_rows_int(t, 0, hta ? "hta_span_ns" : "span_ns");
            v->v[i] = tprof_rows_int(t, 0, "events") ? cli_pct(tprof_rows_int(t, 0, col), span) : NAN;
            const char *why = tprof_rows_str(t, 0, "hta_differs");
            if (!k && why && *why && !differ++) first_differ = i;
        }
        char what[48];
        snprintf(what, sizeof what, "%s share of the kernel span", title[k]);
        dist_line(v, what, V_PERCENT);
        if (!k) worst_line(v, "most idle", V_PERCENT);
    }
    missing_line(v, "no GPU events");
    if (differ)
        printf("  %s's figures differ on %zu ranks (e.g. %s: %s); --all-ranks shows each\n",
               v->hta_first ? "trainprof" : "HTA", differ, v->label[first_differ],
               tprof_rows_str(tprof_rows_child_c(v->tr, first_differ, 2), 0, "hta_differs"));
}

static void comm_section(const view *v)
{
    char a[32], b[32], c[32];
    printf("\n== communication ==\n");
    if (!v->across) {
        for (size_t i = 0; i < v->n; i++) {
            const tprof_rows *cm = tprof_rows_child_c(v->tr, i, 3);
            const tprof_rows *calls = tprof_rows_child_c(cm, 0, 0), *types = tprof_rows_child_c(cm, 0, 1);
            const char *label = v->label[i];
            for (size_t y = 0; y < tprof_rows_count(calls) && y < 3; y++) {
                const tprof_cell *bytes = tprof_rows_at(calls, y, "bytes"), *busbw = tprof_rows_at(calls, y, "busbw_gbps");
                printf("  %s: %s: %" PRId64 " calls, %s", label, tprof_rows_at(calls, y, "name")->v.s, tprof_rows_int(calls, y, "calls"),
                       bytes->null ? "sizes not recorded" : tprof_fmt_bytes(a, sizeof a, bytes->v.i));
                if (tprof_rows_int(calls, y, "matched") && !busbw->null) printf(", busbw %.1f GB/s", busbw->v.d);
                printf("\n");
            }
            if (!tprof_rows_int(cm, 0, "comm_ns")) {
                printf("  %s: no communication kernels\n", label);
                continue;
            }
            double overlap = tprof_rows_real(cm, 0, "overlap"), hta = tprof_rows_real(cm, 0, "hta_overlap");
            int hta_head = v->hta_first && hta == hta, differ = hta == hta && fabs(hta - overlap) > 0.005;
            printf("  %s: %s, %.0f%% overlapped with compute%s", label,
                   tprof_fmt_duration(a, sizeof a, tprof_rows_int(cm, 0, "comm_ns")), (hta_head ? hta : overlap) * 100,
                   hta_head ? " (HTA)" : "");
            if (differ) printf(" (%s: %.0f%%)", hta_head ? "trainprof" : "HTA", (hta_head ? overlap : hta) * 100);
            printf(", exposed %s", tprof_fmt_duration(b, sizeof b, tprof_rows_int(cm, 0, "exposed_ns")));
            for (size_t y = 0; y < tprof_rows_count(types) && y < 3; y++)
                printf("%s%s %s", y ? ", " : "; ", tprof_rows_at(types, y, "type")->v.s,
                       tprof_fmt_duration(c, sizeof c, tprof_rows_int(types, y, "time_ns")));
            printf("\n");
        }
        return;
    }
    for (size_t i = 0; i < v->n; i++) {
        const tprof_rows *cm = tprof_rows_child_c(v->tr, i, 3);
        v->v[i] = tprof_rows_int(cm, 0, "comm_ns") ? (double)tprof_rows_int(cm, 0, "comm_ns") : NAN;
    }
    dist_line(v, "communication time", V_DURATION);
    /* the first rank's recorded collectives, each across the ranks that record it */
    const tprof_rows *calls0 = NULL;
    size_t first = 0; /* the first rank that records collectives */
    for (size_t i = 0; i < v->n && !tprof_rows_count(calls0); i++) {
        calls0 = tprof_rows_child_c(tprof_rows_child_c(v->tr, i, 3), 0, 0);
        first = i;
    }
    for (size_t y = 0; y < tprof_rows_count(calls0) && y < 3; y++) {
        const char *name = tprof_rows_at(calls0, y, "name")->v.s;
        size_t with = 0;
        for (size_t i = 0; i < v->n; i++) {
            const tprof_rows *calls = tprof_rows_child_c(tprof_rows_child_c(v->tr, i, 3), 0, 0);
            v->v[i] = NAN;
            for (size_t z = 0; z < tprof_rows_count(calls); z++)
                if (!strcmp(tprof_rows_at(calls, z, "name")->v.s, name)) {
                    const tprof_cell *bw = tprof_rows_at(calls, z, "busbw_gbps");
                    with++;
                    if (tprof_rows_int(calls, z, "matched") && !bw->null) v->v[i] = bw->v.d;
                }
        }
        tprof_col_dist d;
        const tprof_cell *bytes = tprof_rows_at(calls0, y, "bytes");
        printf("  %s on %zu rank%s: %" PRId64 " calls, %s on %s", name, with, with == 1 ? "" : "s",
               tprof_rows_int(calls0, y, "calls"),
               bytes->null ? "sizes not recorded" : tprof_fmt_bytes(a, sizeof a, bytes->v.i), v->label[first]);
        if (!tprof_dist_of(v->v, NULL, v->n, &d) && d.n)
            printf("; busbw min %.1f GB/s (%s), p50 %.1f, max %.1f (%s)", d.min, v->label[d.min_rank], d.p50, d.max,
                   v->label[d.max_rank]);
        printf("\n");
    }
    for (size_t i = 0; i < v->n; i++) {
        const tprof_rows *cm = tprof_rows_child_c(v->tr, i, 3);
        double overlap = tprof_rows_real(cm, 0, "overlap"), hta = tprof_rows_real(cm, 0, "hta_overlap");
        int hta_head = v->hta_first && hta == hta;
        v->v[i] = tprof_rows_int(cm, 0, "comm_ns") ? (hta_head ? hta : overlap) * 100 : NAN;
    }
    dist_line(v, v->hta_first ? "overlapped with compute (HTA's where it has one)" : "overlapped with compute", V_PERCENT);
    for (size_t i = 0; i < v->n; i++) {
        const tprof_rows *cm = tprof_rows_child_c(v->tr, i, 3);
        v->v[i] = tprof_rows_int(cm, 0, "comm_ns") ? (double)tprof_rows_int(cm, 0, "exposed_ns") : NAN;
    }
    dist_line(v, "exposed", V_DURATION);
    worst_line(v, "most exposed", V_DURATION);
    missing_line(v, "no communication kernels");
}

/* 1 when some trace has a row in child table K with a nonzero column COL. */
static int any_child(const view *v, size_t k, const char *col)
{
    for (size_t i = 0; i < v->n; i++)
        if (tprof_rows_int(tprof_rows_child_c(v->tr, i, k), 0, col)) return 1;
    return 0;
}

/* The first TOP rows of table ROWS, one line each: the share, a duration,
 * LABEL_COL padded to LABEL_W, and NAME_COL as tables show names, in what
 * a terminal leaves after USED columns (DEFAULT_W off a terminal). */
static int name_lines(const tprof_rows *rows, size_t top, const char *time_col, const char *label_col, int label_w,
                      const char *name_col, int used, int default_w)
{
    char a[32];
    size_t n = tprof_rows_count(rows) < top ? tprof_rows_count(rows) : top;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    char **shown = calloc(n ? n : 1, sizeof *shown);
    if (!names || !shown) {
        free(names);
        free(shown);
        return TPROF_ENOMEM;
    }
    int wide, columns, numbered = 0;
    tprof_table_layout_get(&wide, &columns);
    int width = columns ? (columns - used > 24 ? columns - used : 24) : default_w;
    for (size_t i = 0; i < n; i++) names[i] = tprof_rows_str(rows, i, name_col);
    /* names as tables show them: shortened and kept distinct, unless --wide */
    int rc = !wide && tprof_names_display(names, n, width, shown, &numbered) ? TPROF_ENOMEM : 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const tprof_cell *share = tprof_rows_at(rows, i, "share");
        printf("  %5.1f%%  %-9s  %-*s  %s\n", share->null ? 0.0 : share->v.d * 100,
               tprof_fmt_duration(a, sizeof a, tprof_rows_int(rows, i, time_col)), label_w,
               tprof_rows_str(rows, i, label_col), shown[i] ? shown[i] : names[i]);
    }
    for (size_t i = 0; i < n; i++) free(shown[i]);
    if (!rc && numbered) printf("  %s\n", TPROF_NAMES_FOOTNOTE);
    free(names);
    free(shown);
    return rc;
}

static int kernels_section(const tprof_result *res, size_t top)
{
    printf("\n== top kernels (all traces) ==\n");
    return name_lines(tprof_result_table_c(res, 1), top, "total_ns", "class", 13, "name", 37, 70);
}

/* The ops of all traces by direct time, when an op launched anything. */
static int ops_section(const tprof_result *res, size_t top)
{
    const tprof_rows *o = tprof_result_table_c(res, 4);
    size_t no = tprof_rows_count(o) < top ? tprof_rows_count(o) : top;
    if (!no) return 0;
    printf("\n== top ops (all traces; trainprof ops has every column) ==\n");
    int opw = 8; /* the op column: its longest name, at most 40 */
    for (size_t i = 0; i < no; i++) {
        int len = (int)strlen(tprof_rows_str(o, i, "op"));
        if (len > opw) opw = len < 40 ? len : 40;
    }
    return name_lines(o, top, "direct_ns", "op", opw, "top_kernel", 20 + opw, 48);
}

/* "critical path (4 steps): 62% GPU compute, 21% launch delays, ...": the bounds of 1% or more, largest first. */
static void path_line(const tprof_result *res)
{
    const tprof_rows *p = tprof_result_table_c(res, 5);
    if (!tprof_rows_count(p)) return;
    static const char *const cols[] = { "compute_ns", "launch_ns", "runtime_ns", "cpu_op_ns",
                                        "comm_ns",    "memory_ns", "kernel_gap_ns" };
    static const char *const words[] = { "GPU compute", "launch delays", "runtime calls", "CPU ops",
                                         "exposed communication", "memory copies", "kernel gaps" };
    enum { N = sizeof cols / sizeof *cols };
    int64_t path = tprof_rows_int(p, 0, "path_ns"), v[N];
    int used[N] = { 0 };
    for (int k = 0; k < N; k++) v[k] = tprof_rows_int(p, 0, cols[k]);
    printf("  critical path (%" PRId64 " sampled step%s): ", tprof_rows_int(p, 0, "windows"),
           tprof_rows_int(p, 0, "windows") == 1 ? "" : "s");
    for (int shown = 0;; shown++) {
        int best = -1;
        for (int k = 0; k < N; k++)
            if (!used[k] && (best < 0 || v[k] > v[best])) best = k;
        if (best < 0 || (shown && 100.0 * (double)v[best] / (double)path < 1.0)) break;
        used[best] = 1;
        printf("%s%.0f%% %s", shown ? ", " : "", 100.0 * (double)v[best] / (double)path, words[best]);
    }
    printf("; the path is %.0f%% of the step (trainprof critical-path)\n", 100.0 * tprof_rows_real(p, 0, "path_share"));
}

static void ranks_section(const tprof_result *res)
{
    char a[32], b[32];
    const tprof_rows *rk = tprof_result_table_c(res, 2);
    if (!tprof_rows_count(rk)) return;
    printf("\n== ranks ==\n");
    /* where collectives are matched across ranks, their straggler is the one (who held the others up), and
       the compute rule of `ranks` is said beside it */
    char by_compute[48] = "none";
    if (!tprof_rows_at(rk, 0, "straggler")->null)
        snprintf(by_compute, sizeof by_compute, "rank %" PRId64, tprof_rows_int(rk, 0, "straggler"));
    if (tprof_rows_int(rk, 0, "collectives_matched") > 0 && !tprof_rows_at(rk, 0, "collectives_straggler")->null)
        printf("  straggler: rank %" PRId64 ", last to arrive in %.0f%% of the collectives the others wait in (most: "
               "%s), %s per step of their waiting (trainprof collectives; by compute: %s)\n",
               tprof_rows_int(rk, 0, "collectives_straggler"), tprof_rows_real(rk, 0, "collectives_last_share") * 100,
               tprof_rows_str(rk, 0, "collectives_top"),
               tprof_fmt_duration(a, sizeof a, tprof_rows_int(rk, 0, "collectives_cost_per_step_ns")), by_compute);
    else if (tprof_rows_int(rk, 0, "collectives_matched") > 0)
        printf("  no straggler: no rank waits for another in the %" PRId64 " collectives matched (by compute: %s)\n",
               tprof_rows_int(rk, 0, "collectives_matched"), by_compute);
    else if (!tprof_rows_at(rk, 0, "straggler")->null)
        printf("  straggler: rank %" PRId64 " (compute %.0f%% above the other ranks' median, waits least)\n",
               tprof_rows_int(rk, 0, "straggler"), tprof_rows_real(rk, 0, "straggler_excess") * 100);
    else
        printf("  no straggler\n");
    if (tprof_rows_int(rk, 0, "common_steps"))
        printf("  step-time skew: max %s (ProfilerStep#%" PRId64 "), mean %s over %" PRId64 " common steps\n",
               tprof_fmt_duration(a, sizeof a, tprof_rows_int(rk, 0, "skew_max_ns")), tprof_rows_int(rk, 0, "skew_max_step"),
               tprof_fmt_duration(b, sizeof b, tprof_rows_int(rk, 0, "skew_mean_ns")), tprof_rows_int(rk, 0, "common_steps"));
}

static int print(void *ctx, const tprof_result *res, const char *label_, const char *path)
{
    (void)label_, (void)path;
    const summary_ctx *sc = ctx;
    const tprof_rows *tr = tprof_result_table_c(res, 0);
    size_t n = tprof_rows_count(tr);
    view v = { .tr = tr, .n = n, .across = cli_across(n), .label = malloc((n ? n : 1) * sizeof *v.label),
               .v = malloc((n ? n : 1) * sizeof *v.v), .hta_first = sc->headline == TPROF_DEFINITION_HTA };
    int64_t *ranks = malloc((n ? n : 1) * sizeof *ranks);
    if (!v.label || !v.v || !ranks) {
        free(v.label);
        free(v.v);
        free(ranks);
        return TPROF_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        v.label[i] = tprof_rows_at(tr, i, "label")->v.s;
        int64_t r = tprof_rows_int(tr, i, "rank");
        ranks[i] = r >= 0 ? r : (int64_t)i;
    }
    /* sections with nothing to say are left out, and the run says why */
    int any_steps = any_child(&v, 0, "count"), any_gpu = any_child(&v, 2, "events"),
        any_comm = any_child(&v, 3, "comm_ns");
    for (size_t i = 0; i < n && !any_comm; i++)
        any_comm = tprof_rows_count(tprof_rows_child_c(tprof_rows_child_c(tr, i, 3), 0, 0)) > 0;
    run_section(&v);
    if (n && !any_gpu)
        printf("  no GPU events in %s: GPU time, communication and kernels left out\n",
               n == 1 ? "the trace" : "any trace");
    else if (n && !any_comm)
        printf("  no communication in %s\n", n == 1 ? "the trace" : "any trace");
    if (n && !any_steps) printf("  no ProfilerStep spans in %s: steps and phases left out\n", n == 1 ? "the trace" : "any trace");
    if (any_steps) steps_section(&v);
    if (any_steps) phases_section(&v, any_gpu);
    if (any_gpu) gpu_section(&v);
    if (any_gpu) path_line(res);
    if (any_gpu && any_comm) comm_section(&v);
    int rc = any_gpu ? kernels_section(res, (size_t)sc->top) : 0;
    if (!rc && any_gpu) rc = ops_section(res, (size_t)sc->top);
    ranks_section(res);
    if (!rc) {
        printf("\n== advice ==\n");
        rc = cli_print_findings(tprof_result_table_c(res, 3), ranks, n);
    }
    if (!rc && v.across)
        printf("\n(%zu ranks: each section gives the distribution across ranks and the worst; %s)\n", n,
               CLI_ACROSS_HINT);
    free(v.label);
    free(v.v);
    free(ranks);
    return rc;
}

static int option(void *ctx, int c, const char *arg)
{
    if (c == 'D') return cli_parse_definition(arg, &((summary_ctx *)ctx)->headline) ? -1 : 0;
    char *end;
    long top = c == 't' ? strtol(arg, &end, 10) : -1;
    if (c != 't' || *end || top < 0) {
        cli_error("--top takes a count, not '%s'", arg);
        return -1;
    }
    ((summary_ctx *)ctx)->top = top;
    return 0;
}

static size_t limit(void *ctx) { return (size_t)((summary_ctx *)ctx)->top; }

/* Advice is the heaviest analysis: it runs on a second thread while the
 * others run here (analyses only read the trace), so that one large trace
 * uses two cores. */
typedef struct {
    const tprof_trace *t;
    tprof_result *findings, *path;
    int rc;
} advice_job;

/* The critical path of a sample of steps, then the advice (its rules read the path). */
static void *advise_thread(void *arg)
{
    advice_job *j = arg;
    tprof_cp_opts o = { .step_first = -1, .step_last = -1, .instance_first = -1, .instance_last = -1,
                        .max_windows = TPROF_ADVICE_PATH_SAMPLE };
    j->rc = tprof_critical_path(j->t, &o, &j->path);
    if (j->rc != TPROF_ENOMEM) j->rc = 0; /* no window: no path, nothing wrong */
    if (!j->rc) j->rc = tprof_advise_rank_with_path(j->t, j->path, &j->findings);
    tprof_result *top = NULL; /* the summary keeps the path's totals, not its tables */
    if (!j->rc && j->path && !(j->rc = tprof_result_top_only(j->path, &top))) {
        tprof_result_free(j->path);
        j->path = top;
    }
    return NULL;
}

enum { PART_TRACE, PART_KERNELS, PART_FACTS, PART_FINDINGS, PART_OPS, PART_MODULES, PART_COLL, PART_PATH, NPARTS };

static int analyse(void *ctx, const tprof_trace *t, tprof_result **out)
{
    (void)ctx;
    advice_job job = { .t = t };
    pthread_t thread;
    int threaded = pthread_create(&thread, NULL, advise_thread, &job) == 0;
    tprof_steps_result *steps = NULL;
    tprof_temporal_result temporal;
    tprof_comm_result *comm = NULL;
    tprof_kernels_result *k = NULL;
    int rc = tprof_steps(t, &steps);
    if (!rc) rc = tprof_temporal(t, NULL, &temporal);
    if (!rc) rc = tprof_comm(t, &comm);
    if (!rc) comm->hta_overlap = temporal.hta.computed ? temporal.hta.comm_overlap : NAN; /* one HTA pass */
    if (!rc) rc = tprof_summary_trace(t, steps, &temporal, comm, &out[PART_TRACE]);
    if (!rc) rc = tprof_rank_facts_from(t, comm, &temporal, &out[PART_FACTS]); /* one breakdown */
    if (!rc) rc = tprof_kernels(t, NULL, &k);
    if (!rc) rc = tprof_kernels_tables(k, &out[PART_KERNELS]);
    tprof_ops_opts oo = { .by = TPROF_OPS_BY_NAME, .step_first = -1, .step_last = -1 };
    if (!rc) rc = tprof_ops(t, &oo, &out[PART_OPS]);
    tprof_ops_opts mo = { .by = TPROF_OPS_BY_MODULE, .step_first = -1, .step_last = -1 }; /* the same op tree */
    if (!rc) rc = tprof_ops(t, &mo, &out[PART_MODULES]);
    if (!rc) rc = tprof_coll_instances(t, &out[PART_COLL]);
    if (threaded) pthread_join(thread, NULL);
    else advise_thread(&job);
    out[PART_FINDINGS] = job.findings;
    out[PART_PATH] = job.path;
    tprof_steps_free(steps);
    tprof_comm_free(comm);
    tprof_kernels_free(k);
    return rc ? rc : job.rc;
}

static int reduce(void *ctx, const tprof_result *const *parts, size_t n, tprof_result *const *folded,
                  tprof_result **out)
{
    (void)ctx;
    tprof_summary_part *p = malloc((n ? n : 1) * sizeof *p);
    if (!p) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) /* kernels, ops and modules come folded */
        p[i] = (tprof_summary_part){ .trace = parts[NPARTS * i + PART_TRACE],
                                     .facts = parts[NPARTS * i + PART_FACTS],
                                     .findings = parts[NPARTS * i + PART_FINDINGS],
                                     .coll = parts[NPARTS * i + PART_COLL],
                                     .path = parts[NPARTS * i + PART_PATH] };
    const tprof_summary_combined all = { folded[PART_KERNELS], folded[PART_OPS], folded[PART_MODULES] };
    int rc = tprof_summary_reduce_combined(p, n, &all, out);
    free(p);
    return rc;
}

/* The kernels, ops and modules of all traces: folded as each trace's are
 * read back (cli_run), then sorted as tprof_summary_reduce's combines do. */
static int finish_part(void *ctx, size_t part, tprof_result *folded)
{
    (void)ctx;
    return part == PART_KERNELS ? tprof_kernels_tables_finish(folded) : tprof_ops_finish(folded);
}

int cmd_summary(int argc, char **argv)
{
    static const struct option opts[] = { { "top", required_argument, 0, 't' },
                                          { "definition", required_argument, 0, 'D' },
                                          { 0, 0, 0, 0 } };
    static const cli_spec spec = {
        .help = help, .keep = TPROF_ADVICE_KEEP | TPROF_COMM_KEEP | TPROF_KEEP_STREAMED | TPROF_OPS_KEEP | TPROF_KEEP_SYNC,
        .opts = opts,
        .option = option,
        .result = &tprof_summary_desc, .analyse = analyse, .nparts = NPARTS, .coll_part = PART_COLL + 1, .reduce = reduce,
        .folded_parts = 1u << PART_KERNELS | 1u << PART_OPS | 1u << PART_MODULES, .finish_part = finish_part, .print = print,
        .limit = limit,
    };
    summary_ctx ctx = { .top = 10 };
    return cli_run(argc, argv, &spec, &ctx);
}
