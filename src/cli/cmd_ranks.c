/* trainprof ranks: the ranks side by side, the straggler, step-time skew. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
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
            "usage: trainprof ranks [options] TRACE...\n\n"
            "One row per rank (one trace each): steps, mean step time, kernel span, idle,\n"
            "compute (as `trainprof temporal` gives them: with two or more steps, the last\n"
            "step's work left out), communication and exposed communication; the straggler and\n"
            "the skew of each step's time across ranks. Where collectives are matched across\n"
            "the ranks (trainprof collectives), the straggler is the rank whose late arrivals\n"
            "cost the others the most waiting; else the rank whose compute is at least 10%%\n"
            "above the ranks' median while the others wait in collectives.\n\n"
            "options:\n" CLI_COMMON_HELP);
}

/* "12 ms 34%": a duration and its share of WHOLE. */
static const char *with_share(char *buf, size_t len, int64_t ns, int64_t whole)
{
    char d[32];
    snprintf(buf, len, "%s %.0f%%", tprof_fmt_duration(d, sizeof d, ns), cli_pct(ns, whole));
    return buf;
}

/* Row I of ROWS into the text table; STRAGGLER_COMPUTE gets the straggler's compute. */
static int add_row(tprof_table *t, const tprof_rows *rows, size_t i, int64_t *straggler_compute)
{
    char rk[48], st[32], sm[32], sp[32], id[48], cp[48], cm[32], ex[48];
    int64_t span = tprof_rows_int(rows, i, "span_ns"), comm = tprof_rows_int(rows, i, "comm_ns");
    int straggler = tprof_rows_int(rows, i, "straggler") != 0;
    if (straggler) *straggler_compute = tprof_rows_int(rows, i, "compute_ns");
    /* a trace that does not say its rank is named as every command names it: trace N */
    snprintf(rk, sizeof rk, "%s%" PRId64 "%s", tprof_rows_int(rows, i, "rank_known") ? "" : "trace ",
             tprof_rows_int(rows, i, "rank"), straggler ? " (straggler)" : "");
    snprintf(st, sizeof st, "%" PRId64, tprof_rows_int(rows, i, "steps"));
    tprof_fmt_duration(sm, sizeof sm, tprof_rows_int(rows, i, "step_mean_ns"));
    tprof_fmt_duration(sp, sizeof sp, span);
    with_share(id, sizeof id, tprof_rows_int(rows, i, "idle_ns"), span);
    with_share(cp, sizeof cp, tprof_rows_int(rows, i, "compute_ns"), span);
    tprof_fmt_duration(cm, sizeof cm, comm);
    with_share(ex, sizeof ex, tprof_rows_int(rows, i, "exposed_comm_ns"), comm);
    const char *cells[] = { rk, st, sm, sp, id, cp, cm, ex };
    return tprof_table_row(t, cells);
}

static int print_spread(const tprof_result *res);

/* Past CLI_RANKS_LISTED ranks: each column's distribution across them. */
static int print_dist(const tprof_rows *rows, size_t n)
{
    static const struct {
        const char *title, *col, *of; /* OF: the column it is a share of, or NULL */
    } cols[] = { { "step mean", "step_mean_ns", NULL }, { "span", "span_ns", NULL },
                 { "idle", "idle_ns", "span_ns" },      { "compute", "compute_ns", "span_ns" },
                 { "comm", "comm_ns", NULL },            { "exposed comm", "exposed_comm_ns", "comm_ns" } };
    double *v = malloc(n * sizeof *v);
    char (*labels)[32] = malloc(n * sizeof *labels);
    const char **lab = malloc(n * sizeof *lab);
    char title[32];
    snprintf(title, sizeof title, "across %zu", n);
    const char *hdr[] = { title, "min", "p50", "p90", "max" };
    tprof_table *t = v && labels && lab ? tprof_table_new(5, hdr, "lrrrr") : NULL;
    int rc = t ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        snprintf(labels[i], sizeof labels[i], "%s %" PRId64, tprof_rows_int(rows, i, "rank_known") ? "rank" : "trace",
                 tprof_rows_int(rows, i, "rank"));
        lab[i] = labels[i];
    }
    for (size_t c = 0; !rc && c < sizeof cols / sizeof *cols; c++) {
        for (size_t i = 0; i < n; i++) {
            int64_t x = tprof_rows_int(rows, i, cols[c].col), whole = cols[c].of ? tprof_rows_int(rows, i, cols[c].of) : 1;
            /* a rank without GPU work (no span) or without communication has no value, not 0 */
            int none = whole <= 0 || (!cols[c].of && !strcmp(cols[c].col, "step_mean_ns") && !tprof_rows_int(rows, i, "steps")) ||
                       (!cols[c].of && strcmp(cols[c].col, "step_mean_ns") && !tprof_rows_int(rows, i, "span_ns"));
            v[i] = none ? NAN : cols[c].of ? cli_pct(x, whole) : (double)x;
        }
        tprof_col_dist d;
        if ((rc = tprof_dist_of(v, NULL, n, &d))) break;
        char cell[4][64];
        const double q[4] = { d.min, d.p50, d.p90, d.max };
        for (int k = 0; k < 4; k++) {
            char num[32];
            if (cols[c].of) snprintf(num, sizeof num, "%.1f%%", q[k]);
            else tprof_fmt_duration(num, sizeof num, (int64_t)llround(q[k]));
            if ((k == 0 || k == 3) && d.min != d.max)
                snprintf(cell[k], sizeof cell[k], "%s (%s)", num, lab[k ? d.max_rank : d.min_rank]);
            else
                snprintf(cell[k], sizeof cell[k], "%s", num);
        }
        const char *cells[] = { cols[c].title, cell[0], cell[1], cell[2], cell[3] };
        rc = tprof_table_row(t, cells);
    }
    if (!rc) tprof_table_print(t, stdout);
    tprof_table_free(t);
    free(v);
    free(labels);
    free(lab);
    return rc;
}

/* What made rank RANK late, from its row beside the others': its step
 * time, compute and idle against the other ranks' medians. */
static void late_because(const tprof_rows *rows, int64_t rank)
{
    static const struct {
        const char *col, *what;
    } cols[] = { { "step_mean_ns", "mean step" }, { "compute_ns", "compute" }, { "idle_ns", "GPU idle" } };
    size_t n = tprof_rows_count(rows), self = n;
    for (size_t i = 0; i < n; i++)
        if (tprof_rows_int(rows, i, "rank") == rank) self = i;
    double *v = n > 1 ? malloc((n - 1) * sizeof *v) : NULL;
    if (self == n || !v) {
        free(v);
        return;
    }
    int said = 0;
    for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (i != self) v[m++] = (double)tprof_rows_int(rows, i, cols[c].col);
        tprof_col_dist d; /* the others' median: nearest rank, the lower one */
        if (tprof_dist_of(v, NULL, m, &d)) break;
        int64_t mine = tprof_rows_int(rows, self, cols[c].col), median = llround(d.p50);
        if (!mine && !median) continue; /* nothing to compare (no GPU work, no steps) */
        char a[32], b[32];
        printf("%s %s %s (others' median %s)", said++ ? "," : "  its", cols[c].what, tprof_fmt_duration(a, sizeof a, mine),
               tprof_fmt_duration(b, sizeof b, median));
    }
    if (said) printf("\n");
    free(v);
}

static int print(void *ctx, const tprof_result *res, const char *label, const char *path)
{
    (void)ctx, (void)label, (void)path;
    const tprof_rows *top = tprof_result_top_c(res), *rows = tprof_result_table_c(res, 0);
    size_t n = tprof_rows_count(rows);
    int across = cli_across(n);
    if (across) {
        printf("%zu ranks: their distribution, and the %d with the slowest steps and the straggler (%s)\n\n", n,
               CLI_RANKS_WORST, CLI_ACROSS_HINT);
        int rc = print_dist(rows, n);
        if (rc) return rc;
        printf("\n");
    }
    /* the rows shown: all of them, or the slowest few and the straggler */
    size_t *shown = malloc((n ? n : 1) * sizeof *shown), m = 0;
    if (!shown) return TPROF_ENOMEM;
    if (!across)
        for (size_t i = 0; i < n; i++) shown[m++] = i;
    else {
        double *v = malloc(n * sizeof *v);
        if (!v) {
            free(shown);
            return TPROF_ENOMEM;
        }
        for (size_t i = 0; i < n; i++) v[i] = (double)tprof_rows_int(rows, i, "step_mean_ns");
        m = tprof_dist_worst(v, n, CLI_RANKS_WORST, 0, shown);
        free(v);
        for (size_t i = 0; i < n; i++) {
            int taken = 0;
            for (size_t j = 0; j < m; j++) taken |= shown[j] == i;
            if (!taken && tprof_rows_int(rows, i, "straggler")) shown[m++] = i;
        }
    }
    const char *hdr[] = { "rank", "steps", "step mean", "span", "idle", "compute", "comm", "exposed comm" };
    tprof_table *t = tprof_table_new(8, hdr, "lrrrrrrr");
    if (!t) {
        free(shown);
        return TPROF_ENOMEM;
    }
    int64_t straggler_compute = 0;
    for (size_t j = 0; j < m; j++)
        if (add_row(t, rows, shown[j], &straggler_compute)) {
            tprof_table_free(t);
            free(shown);
            return TPROF_ENOMEM;
        }
    free(shown);
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    char a[32], b[32];
    /* where collectives are matched, their straggler is the straggler: who held the others up */
    int by_coll = tprof_rows_int(top, 0, "collectives_matched") > 0;
    if (by_coll && !tprof_rows_at(top, 0, "collectives_straggler")->null)
        printf("\nstraggler: rank %" PRId64 ", last to arrive in %.0f%% of the collectives the others waited in, "
               "costing them %s of waiting (trainprof collectives)\n",
               tprof_rows_int(top, 0, "collectives_straggler"), tprof_rows_real(top, 0, "collectives_last_share") * 100,
               tprof_fmt_duration(a, sizeof a, tprof_rows_int(top, 0, "collectives_cost_ns")));
    if (by_coll && !tprof_rows_at(top, 0, "collectives_straggler")->null) {
        late_because(rows, tprof_rows_int(top, 0, "collectives_straggler"));
        const tprof_cell *cause = tprof_rows_at(top, 0, "collectives_straggler_cause");
        if (!cause->null)
            printf("  its stretches before the collectives: late because of its %s (trainprof collectives says "
                   "how much)\n",
                   !strcmp(cause->v.s, "compute") ? "GPU (the work queued ahead of them)"
                   : !strcmp(cause->v.s, "data")  ? "data loading"
                                                  : "host (its CPU work before the calls)");
    }
    else if (by_coll)
        printf("\nno straggler: in the %" PRId64 " collectives matched across ranks nobody waited for another\n",
               tprof_rows_int(top, 0, "collectives_matched"));
    if (by_coll) printf("by compute, which collectives replace: ");
    else printf("\n");
    if (!tprof_rows_at(top, 0, "straggler")->null)
        printf("straggler: rank %" PRId64 ", compute %s, %.0f%% above the other ranks' median %s, while they "
               "wait longer in collectives\n",
               tprof_rows_int(top, 0, "straggler"), tprof_fmt_duration(a, sizeof a, straggler_compute),
               tprof_rows_real(top, 0, "straggler_excess") * 100,
               tprof_fmt_duration(b, sizeof b, tprof_rows_int(top, 0, "compute_median_ns")));
    else
        printf("no straggler: the rank with the most compute is not %.0f%% above the others' median with "
               "less exposed communication than theirs\n",
               TPROF_STRAGGLER_MIN * 100);
    if (tprof_rows_int(top, 0, "common_steps"))
        printf("step-time skew across ranks over %" PRId64 " common steps: max %s (ProfilerStep#%" PRId64 "), mean %s\n",
               tprof_rows_int(top, 0, "common_steps"), tprof_fmt_duration(a, sizeof a, tprof_rows_int(top, 0, "skew_max_ns")),
               tprof_rows_int(top, 0, "skew_max_step"), tprof_fmt_duration(b, sizeof b, tprof_rows_int(top, 0, "skew_mean_ns")));
    else
        printf("step-time skew: no step number common to all ranks\n");
    return print_spread(res);
}

/* "rank R step S", or "-" when not named. */
static const char *where(char *buf, size_t len, const tprof_rows *t, size_t i, const char *rank, const char *step)
{
    if (tprof_rows_at(t, i, rank)->null) return "-";
    int64_t s = tprof_rows_int(t, i, step);
    if (s >= 0) snprintf(buf, len, "rank %" PRId64 " step %" PRId64, tprof_rows_int(t, i, rank), s);
    else snprintf(buf, len, "rank %" PRId64, tprof_rows_int(t, i, rank));
    return buf;
}

/* msprof-analyze's slow-rank check over the (step, rank) device splits. */
static int print_spread(const tprof_result *res)
{
    const tprof_rows *top = tprof_result_top_c(res), *sp = tprof_result_table_c(res, 1);
    size_t n = tprof_rows_count(sp);
    if (!n) return 0;
    int64_t points = tprof_rows_int(top, 0, "split_points"), recorded = tprof_rows_int(top, 0, "split_recorded");
    char a[32], b[32], c[48], d[48], e[32];
    printf("\ndevice split of %" PRId64 " (step, rank) pairs (%s; msprof-analyze's slow-rank check: a spread over "
           "%.0f%% of the mean step %s is flagged):\n",
           points,
           recorded == points ? "the Ascend profiler's step_trace_time.csv"
           : recorded         ? "partly the Ascend profiler's, partly made from device events"
                              : "made from device events per ProfilerStep",
           TPROF_SLOW_RANK_MIN * 100, tprof_fmt_duration(e, sizeof e, tprof_rows_int(top, 0, "split_mean_total_ns")));
    const char *hdr[] = { "dimension", "least", "most", "spread", "most at", "least at" };
    tprof_table *t = tprof_table_new(6, hdr, "lrrrll");
    if (!t) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char spread[32];
        snprintf(spread, sizeof spread, "%.1f%%%s", tprof_rows_real(sp, i, "spread") * 100,
                 tprof_rows_int(sp, i, "flagged") ? " !" : "");
        const char *cells[] = { tprof_rows_str(sp, i, "dimension"),
                                tprof_fmt_duration(a, sizeof a, tprof_rows_int(sp, i, "min_ns")),
                                tprof_fmt_duration(b, sizeof b, tprof_rows_int(sp, i, "max_ns")), spread,
                                where(c, sizeof c, sp, i, "max_rank", "max_step"),
                                where(d, sizeof d, sp, i, "min_rank", "min_step") };
        tprof_table_row(t, cells);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    if (!tprof_rows_at(top, 0, "slow_rank")->null)
        printf("slow rank: %s, the most computing of any step and rank\n",
               where(c, sizeof c, top, 0, "slow_rank", "slow_rank_step"));
    else
        printf("slow rank: none (no flagged spread in computing)\n");
    return 0;
}

/* Each trace's facts and its collective instances. */
static int analyse(void *ctx, const tprof_trace *t, tprof_result **out)
{
    (void)ctx;
    int rc = tprof_rank_facts(t, &out[0]);
    return rc ? rc : tprof_coll_instances(t, &out[1]);
}

static int reduce(void *ctx, const tprof_result *const *parts, size_t n, tprof_result *const *folded,
                  tprof_result **out)
{
    (void)folded; /* no part folded */
    (void)ctx;
    const tprof_result **facts = calloc(n ? n : 1, sizeof *facts), **colls = calloc(n ? n : 1, sizeof *colls);
    tprof_ranks_result *r = NULL;
    tprof_result *coll = NULL;
    int rc = facts && colls ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) facts[i] = parts[2 * i], colls[i] = parts[2 * i + 1];
    if (!rc) rc = tprof_ranks_reduce(facts, n, &r);
    if (!rc && n >= 2 && !(rc = tprof_collectives_reduce(colls, n, &coll))) tprof_ranks_add_collectives(r, coll);
    if (!rc) rc = tprof_ranks_tables(r, out);
    tprof_result_free(coll);
    tprof_ranks_free(r);
    free(facts);
    free(colls);
    return rc;
}

int cmd_ranks(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = TPROF_RANKS_KEEP | TPROF_KEEP_STEP_SPLITS, .result = &tprof_ranks_desc, .analyse = analyse, .reduce = reduce,
        .print = print, .nparts = 2, .coll_part = 2, .accepts = TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_STEPS),
    };
    return cli_run(argc, argv, &spec, NULL);
}
