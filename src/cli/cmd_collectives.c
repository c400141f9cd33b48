/* trainprof collectives: each collective matched across ranks, the waits
 * and what the transfer took, the rank that holds the others up. */
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
            "usage: trainprof collectives [options] TRACE...\n\n"
            "The collectives of every rank (one trace each) matched across the ranks of their\n"
            "group: by process group and sequence number where recorded, else the n-th of a\n"
            "group and collective on each rank, over the ProfilerSteps every rank has. Per\n"
            "collective, group, dtype and size: the transfer time (the shortest duration\n"
            "across the ranks: the part they spend together) and the bandwidth it gives; per\n"
            "rank: its wait (its duration minus the shortest, for collectives that end\n"
            "together on every rank), how often it arrived last, and what that cost the\n"
            "others. The straggler is the rank that cost them the most. Durations need no\n"
            "common clock; the arrival skew does: each rank's clock is fitted (offset, and\n"
            "drift over a second or more) on the ends of the collectives it shares with the\n"
            "first rank, and skew is given when every fit is within 50 us.\n\n"
            "options:\n" CLI_COMMON_HELP);
}

static const char *bw(char *buf, size_t len, const tprof_rows *rows, size_t i, const char *col)
{
    const tprof_cell *c = tprof_rows_at(rows, i, col);
    if (c->null) snprintf(buf, len, "-");
    else snprintf(buf, len, "%.1f", c->v.d);
    return buf;
}

static int print_groups(const tprof_rows *g)
{
    const char *hdr[] = { "collective", "group", "dtype", "size", "ranks", "count", "transfer", "p50", "p90",
                          "algbw GB/s", "busbw GB/s", "waits", "skew p50" };
    tprof_table *t = tprof_table_new(13, hdr, "llllrrrrrrrrr");
    if (!t) return TPROF_ENOMEM;
    for (size_t i = 0; i < tprof_rows_count(g); i++) {
        char size[32], ranks[32], count[32], tr[32], p50[32], p90[32], ab[32], bb[32], w[32], sk[32];
        const tprof_cell *skew = tprof_rows_at(g, i, "skew_p50_ns");
        if (skew->null) snprintf(sk, sizeof sk, "-");
        else tprof_fmt_duration(sk, sizeof sk, skew->v.i);
        const tprof_cell *b = tprof_rows_at(g, i, "bytes");
        if (b->null) snprintf(size, sizeof size, "-");
        else tprof_fmt_bytes(size, sizeof size, b->v.i);
        snprintf(ranks, sizeof ranks, "%" PRId64, tprof_rows_int(g, i, "group_size"));
        snprintf(count, sizeof count, "%" PRId64, tprof_rows_int(g, i, "count"));
        tprof_fmt_duration(tr, sizeof tr, tprof_rows_int(g, i, "transfer_ns"));
        tprof_fmt_duration(p50, sizeof p50, tprof_rows_int(g, i, "transfer_p50_ns"));
        tprof_fmt_duration(p90, sizeof p90, tprof_rows_int(g, i, "transfer_p90_ns"));
        tprof_fmt_duration(w, sizeof w, tprof_rows_int(g, i, "wait_ns"));
        const char *group = tprof_rows_str(g, i, "group");
        const char *cells[] = { tprof_rows_str(g, i, "type"), *group ? group : "-", tprof_rows_str(g, i, "dtype"),
                                size, ranks, count, tr, p50, p90, bw(ab, sizeof ab, g, i, "algbw"),
                                bw(bb, sizeof bb, g, i, "busbw"), w, sk };
        if (tprof_table_row(t, cells)) {
            tprof_table_free(t);
            return TPROF_ENOMEM;
        }
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    return 0;
}

/* The ranks' rows: every one, or past CLI_RANKS_LISTED the few that cost
 * the others the most (the straggler first among them). */
static int print_ranks(const tprof_rows *r)
{
    size_t n = tprof_rows_count(r), m = 0;
    size_t *shown = malloc((n ? n : 1) * sizeof *shown);
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!shown || !v) {
        free(shown);
        free(v);
        return TPROF_ENOMEM;
    }
    if (!cli_across(n))
        for (size_t i = 0; i < n; i++) shown[m++] = i;
    else {
        for (size_t i = 0; i < n; i++) v[i] = (double)tprof_rows_int(r, i, "cost_ns");
        m = tprof_dist_worst(v, n, CLI_RANKS_WORST, 0, shown);
        printf("%zu ranks: the %zu whose lateness cost the others the most (%s)\n\n", n, m, CLI_ACROSS_HINT);
    }
    free(v);
    const char *hdr[] = { "rank", "instances", "wait", "wait per step", "arrived last", "cost to others", "late" };
    tprof_table *t = tprof_table_new(7, hdr, "lrrrrrr");
    int rc = t ? 0 : TPROF_ENOMEM;
    for (size_t j = 0; !rc && j < m; j++) {
        size_t i = shown[j];
        char rk[48], in[32], w[32], ws[32], la[32], co[32], lt[32];
        const tprof_cell *late = tprof_rows_at(r, i, "late_mean_ns");
        if (late->null) snprintf(lt, sizeof lt, "-");
        else tprof_fmt_duration(lt, sizeof lt, late->v.i);
        snprintf(rk, sizeof rk, "%" PRId64 "%s", tprof_rows_int(r, i, "rank"),
                 tprof_rows_int(r, i, "straggler") ? " (straggler)" : "");
        snprintf(in, sizeof in, "%" PRId64, tprof_rows_int(r, i, "instances"));
        tprof_fmt_duration(w, sizeof w, tprof_rows_int(r, i, "wait_ns"));
        tprof_fmt_duration(ws, sizeof ws, tprof_rows_int(r, i, "wait_per_step_ns"));
        snprintf(la, sizeof la, "%" PRId64, tprof_rows_int(r, i, "arrived_last"));
        tprof_fmt_duration(co, sizeof co, tprof_rows_int(r, i, "cost_ns"));
        const char *cells[] = { rk, in, w, ws, la, co, lt };
        rc = tprof_table_row(t, cells);
    }
    if (!rc) tprof_table_print(t, stdout);
    tprof_table_free(t);
    free(shown);
    return rc;
}

/* What made the straggler late: its row's late_*_per_step_ns beside the
 * cause the result names. */
static void print_cause(const tprof_rows *top, const tprof_rows *ranks)
{
    const tprof_cell *cause = tprof_rows_at(top, 0, "straggler_cause");
    int64_t rank = tprof_rows_int(top, 0, "straggler");
    for (size_t i = 0; i < tprof_rows_count(ranks); i++) {
        if (tprof_rows_int(ranks, i, "rank") != rank || tprof_rows_at(ranks, i, "late_stretch_per_step_ns")->null)
            continue;
        int64_t stretch = tprof_rows_int(ranks, i, "late_stretch_per_step_ns");
        int64_t host = tprof_rows_int(ranks, i, "late_host_per_step_ns");
        char a[32], b[32], c[32];
        printf("  per step, beside the others' medians: it reached them %s later, its host called them %s later "
               "(%s of it loading data), its GPU started them the rest later after the calls\n",
               tprof_fmt_duration(a, sizeof a, stretch), tprof_fmt_duration(b, sizeof b, host),
               tprof_fmt_duration(c, sizeof c, tprof_rows_int(ranks, i, "late_data_per_step_ns")));
        if (cause->null) break;
        const char *why = !strcmp(cause->v.s, "compute") ? "its GPU: the work queued ahead of its collectives"
                          : !strcmp(cause->v.s, "data")  ? "its data loading"
                                                         : "its host (its CPU work before the calls)";
        printf("  late because of %s\n", why);
        break;
    }
}

/* A link's bandwidth and row, sorted slowest first (ties in table order). */
typedef struct {
    double gbps;
    size_t i;
} link_at;

static int by_bandwidth(const void *a, const void *b)
{
    const link_at *x = a, *y = b;
    return x->gbps != y->gbps ? (x->gbps > y->gbps) - (x->gbps < y->gbps) : (x->i > y->i) - (x->i < y->i);
}

/* The slowest links between two ranks in the groups' Total Op Info
 * (hccl_cluster_links: msprof-analyze's cluster matrix). */
static int print_slowest_links(const tprof_rows *links)
{
    enum { SHOWN = 8 };
    size_t n = tprof_rows_count(links), m = 0;
    link_at *pick = malloc((n ? n : 1) * sizeof *pick);
    if (!pick) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!strncmp(tprof_rows_str(links, i, "op"), "Total Op Info", 13) &&
            tprof_rows_int(links, i, "src") != tprof_rows_int(links, i, "dst") &&
            !tprof_rows_at(links, i, "bandwidth_gbps")->null)
            pick[m++] = (link_at){ tprof_rows_real(links, i, "bandwidth_gbps"), i };
    qsort(pick, m, sizeof *pick, by_bandwidth);
    if (m) printf("\nthe slowest links between ranks, per group and step (msprof-analyze's cluster matrix, Total Op "
                  "Info; every link and op: --format json, hccl_cluster_links):\n");
    const char *hdr[] = { "group", "step", "src", "dst", "transport", "bytes", "time", "GB/s" };
    tprof_table *t = m ? tprof_table_new(8, hdr, "llrrlrrr") : NULL;
    for (size_t k = 0; t && k < m && k < SHOWN; k++) {
        size_t i = pick[k].i;
        char src[24], dst[24], bytes[32], time[32], bw[32];
        snprintf(src, sizeof src, "%" PRId64, tprof_rows_int(links, i, "src"));
        snprintf(dst, sizeof dst, "%" PRId64, tprof_rows_int(links, i, "dst"));
        snprintf(bw, sizeof bw, "%.2f", tprof_rows_real(links, i, "bandwidth_gbps"));
        const char *cells[] = { tprof_rows_str(links, i, "ranks"), tprof_rows_str(links, i, "step"), src, dst,
                                tprof_rows_str(links, i, "transport"),
                                tprof_fmt_bytes(bytes, sizeof bytes, tprof_rows_int(links, i, "bytes")),
                                tprof_fmt_duration(time, sizeof time, tprof_rows_int(links, i, "time_ns")), bw };
        tprof_table_row(t, cells);
    }
    if (t) tprof_table_print(t, stdout);
    tprof_table_free(t);
    free(pick);
    return m && !t ? TPROF_ENOMEM : 0;
}

/* Ascend's communication summaries across ranks: the groups, the slow
 * links, the bandwidth per step and rank. */
static int print_hccl(const tprof_result *res)
{
    enum { BW_SHOWN = 16 };
    const tprof_rows *groups = tprof_result_table_c(res, 3), *bw = tprof_result_table_c(res, 4),
                     *slow = tprof_result_table_c(res, 5);
    printf("Ascend communication summaries (communication.json) across ranks:\n\n%s:\n",
           tprof_rows_desc(groups)->title);
    if (tprof_rows_print_table(groups, 0, stdout)) return TPROF_ENOMEM;
    printf("late rank: the rank of a collective group with the least synchronisation time, the one the others "
           "waited for\n");
    if (tprof_rows_count(slow)) {
        printf("\n%s:\n", tprof_rows_desc(slow)->title);
        if (tprof_rows_print_table(slow, 0, stdout)) return TPROF_ENOMEM;
        for (size_t i = 0; i < tprof_rows_count(slow); i++)
            if (tprof_rows_int(slow, i, "slow"))
                printf("slow link: %s of rank %" PRId64 " in %s at %.2f GB/s, against a mean of %.2f GB/s over %" PRId64
                       " step-ranks\n",
                       tprof_rows_str(slow, i, "transport"), tprof_rows_int(slow, i, "min_rank"),
                       tprof_rows_str(slow, i, "min_step"), tprof_rows_real(slow, i, "min_gbps"),
                       tprof_rows_real(slow, i, "mean_gbps"), tprof_rows_int(slow, i, "step_ranks"));
    }
    size_t nbw = tprof_rows_count(bw);
    if (nbw) {
        printf("\n%s:\n", tprof_rows_desc(bw)->title);
        if (tprof_rows_print_table(bw, BW_SHOWN, stdout)) return TPROF_ENOMEM;
        if (nbw > BW_SHOWN) printf("(the first %d of %zu; --format json has them all)\n", BW_SHOWN, nbw);
    }
    printf("\neach rank's totals per step and group (msprof-analyze's Total Op Info): --format json, hccl_totals\n");
    return print_slowest_links(tprof_result_table_c(res, 6));
}

/* The busiest all-to-all pairs (alltoall_pairs: from the split sizes). */
static int print_pairs(const tprof_rows *top, const tprof_rows *pairs)
{
    enum { SHOWN = 8 };
    size_t n = tprof_rows_count(pairs);
    int64_t unread = tprof_rows_int(top, 0, "alltoall_splits_unread");
    if (n) {
        printf("\nall-to-all traffic between ranks, from the split sizes: the busiest pair moves %.2fx the mean pair",
               tprof_rows_real(top, 0, "alltoall_pair_imbalance"));
        if (n > SHOWN) printf(" (the first %d of %zu pairs; --format json has them all)", SHOWN, n);
        printf("\n");
        if (tprof_rows_print_table(pairs, SHOWN, stdout)) return TPROF_ENOMEM;
    }
    if (unread)
        printf("%" PRId64 " ranks' sides of all-to-alls recorded split sizes that could not be read per rank (the "
               "list cut after 30 entries, rows that do not divide the elements sent, or not a row count per rank "
               "of the group)\n",
               unread);
    return 0;
}

static int print(void *ctx, const tprof_result *res, const char *label, const char *path)
{
    (void)ctx, (void)label, (void)path;
    const tprof_rows *top = tprof_result_top_c(res);
    int64_t matched = tprof_rows_int(top, 0, "matched"), common = tprof_rows_int(top, 0, "common_steps");
    int64_t ntraces = tprof_rows_int(top, 0, "traces");
    if (!tprof_rows_count(tprof_result_table_c(res, 2)) && tprof_rows_count(tprof_result_table_c(res, 6))) {
        int rc = print_slowest_links(tprof_result_table_c(res, 6)); /* a matrix alone */
        if (rc || !matched) return rc;
    } else if (tprof_rows_count(tprof_result_table_c(res, 2))) { /* Ascend summaries, with or without kernels */
        int rc = print_hccl(res);
        if (rc || !matched) return rc;
        printf("\n");
    }
    if (ntraces < 2) {
        printf("one trace, %" PRId64 " collectives in it: collectives matches each across the ranks of its group; "
               "give every rank's trace\n",
               tprof_rows_int(top, 0, "unmatched"));
        return 0;
    }
    printf("%" PRId64 " collectives matched across %" PRId64 " ranks by %s", matched, ntraces,
           tprof_rows_str(top, 0, "matching"));
    if (common) printf(", over %" PRId64 " common steps", common);
    if (tprof_rows_int(top, 0, "unmatched")) printf("; %" PRId64 " left unmatched", tprof_rows_int(top, 0, "unmatched"));
    printf("\n");
    if (!matched) {
        printf("no collective is found on two ranks: give every rank's trace\n");
        return 0;
    }
    printf("\n");
    int rc = print_groups(tprof_result_table_c(res, 0));
    if (rc) return rc;
    printf("\n");
    if ((rc = print_ranks(tprof_result_table_c(res, 1)))) return rc;
    char d[32];
    const tprof_cell *res_ns = tprof_rows_at(top, 0, "clock_residual_ns");
    if (tprof_rows_int(top, 0, "skew_computed"))
        printf("\nclocks aligned on the collectives' ends (residual %s at most): skew = last arrival minus first, "
               "late = a rank's mean arrival after the first\n",
               tprof_fmt_duration(d, sizeof d, res_ns->v.i));
    else if (!res_ns->null)
        printf("\nno arrival skew: a rank's clock does not fit the others' (residual %s, above 50 us)\n",
               tprof_fmt_duration(d, sizeof d, res_ns->v.i));
    const tprof_cell *imb = tprof_rows_at(top, 0, "alltoall_imbalance");
    if (!imb->null)
        printf("\nall-to-all: the rank sending or receiving the most moves %.2fx the ranks' mean (each rank's bytes: "
               "--format json)\n",
               imb->v.d);
    if ((rc = print_pairs(top, tprof_result_table_c(res, 7)))) return rc;
    if (!tprof_rows_at(top, 0, "straggler")->null) {
        printf("\nstraggler: rank %" PRId64 ", last to arrive in %.0f%% of the collectives the others waited in, "
               "costing them %s of waiting\n",
               tprof_rows_int(top, 0, "straggler"), tprof_rows_real(top, 0, "straggler_last_share") * 100,
               tprof_fmt_duration(d, sizeof d, tprof_rows_int(top, 0, "straggler_cost_ns")));
        print_cause(top, tprof_result_table_c(res, 1));
    } else
        printf("\nno straggler: no rank waited for another in a collective that ends together\n");
    return 0;
}

static int analyse(void *ctx, const tprof_trace *t, tprof_result **out)
{
    (void)ctx;
    return tprof_coll_instances(t, out);
}

static int reduce(void *ctx, const tprof_result *const *per_rank, size_t n, tprof_result *const *folded,
                  tprof_result **out)
{
    (void)folded; /* no part folded */
    (void)ctx;
    return tprof_collectives_reduce(per_rank, n, out);
}

int cmd_collectives(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = TPROF_COLLECTIVES_KEEP, .accepts = TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_JSON),
        .result = &tprof_collectives_desc, .analyse = analyse,
        .reduce = reduce, .print = print, .coll_part = 1,
    };
    return cli_run(argc, argv, &spec, NULL);
}
