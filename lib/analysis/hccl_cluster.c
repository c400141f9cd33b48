/* Ascend's communication summaries across ranks (collectives): every
 * rank's totals per step and group side by side with the group's ranks (the
 * Total Op Info rows of msprof-analyze's cluster_communication.json), per
 * group who waited least (arrived last), per step and rank the RDMA and SDMA
 * bandwidth, and the slow link as msprof-analyze's advisor finds it.
 * Definitions: docs/METRICS.md, "Ascend communication". */
#include "hccl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "../util/i64map.h"
#include "../util/strtab.h"

/* msprof-analyze's slow-link threshold: (max - min) / mean of the step-rank
 * bandwidths at or above it names the slowest (slow_link_analyzer.py). */
#define SLOW_LINK_GAP 0.05

enum { G_TYPE, G_GROUP, G_RANKS, G_NRANKS, G_STEPS, G_OPS, G_TRANSIT, G_WAIT, G_SYNC, G_LATE, G_LATE_SYNC, G_MAX_SYNC,
       G_NCOLS };
static const tprof_col_desc group_cols[G_NCOLS] = {
    [G_TYPE] = TPROF_COL("type", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, "type", "collective or p2p",
                         .flags = TPROF_COLF_KEY),
    [G_GROUP] = TPROF_COL("group", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "group",
                          "the communication group (the ops' names after '@')", .flags = TPROF_COLF_KEY, .width = 24),
    [G_RANKS] = TPROF_COL("ranks", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "ranks",
                          "the ranks holding its ops, \"(0, 1)\" as msprof-analyze names the group", .width = 32),
    [G_NRANKS] = TPROF_COL("nranks", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "how many",
                           .flags = TPROF_COLF_NO_TABLE),
    [G_STEPS] = TPROF_COL("steps", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, "steps", "steps with its ops"),
    [G_OPS] = TPROF_COL("ops", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, "ops", "op entries over all its ranks"),
    [G_TRANSIT] = TPROF_COL("transit_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, "transit",
                            "its ranks' transit time summed"),
    [G_WAIT] = TPROF_COL("wait_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, "wait", "its ranks' wait time summed",
                         .flags = TPROF_COLF_METRIC),
    [G_SYNC] = TPROF_COL("sync_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, "sync",
                         "its ranks' synchronisation time summed"),
    [G_LATE] = TPROF_COL("late_rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "late rank",
                         "a collective group's rank with the least synchronisation time (the others waited for it "
                         "to arrive); null for p2p and one-rank groups"),
    [G_LATE_SYNC] = TPROF_COL("late_rank_sync_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, "its sync",
                              "that rank's synchronisation time"),
    [G_MAX_SYNC] = TPROF_COL("max_sync_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, "most sync",
                             "the most synchronisation time a rank of the group had"),
};

enum { B_STEP, B_RANK, B_RDMA_BYTES, B_RDMA_NS, B_RDMA_BW, B_SDMA_BYTES, B_SDMA_NS, B_SDMA_BW, B_STEP_N, B_NCOLS };
static const tprof_col_desc bw_cols[B_NCOLS] = {
    [B_STEP_N] = TPROF_COL("step_number", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL,
                           "N of \"stepN\" (0 for \"step\"): the rows' order",
                           .flags = TPROF_COLF_NO_TABLE | TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV),
    [B_STEP] = TPROF_COL("step", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "step", "the step key", .flags = TPROF_COLF_KEY),
    [B_RANK] = TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "rank", "the rank", .flags = TPROF_COLF_KEY),
    [B_RDMA_BYTES] = TPROF_COL("rdma_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, "RDMA",
                               "bytes over RDMA in the step, every group"),
    [B_RDMA_NS] = TPROF_COL("rdma_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "their transit time",
                            .flags = TPROF_COLF_NO_TABLE),
    [B_RDMA_BW] = TPROF_COL("rdma_gbps", TPROF_COL_RATE, TPROF_COMBINE_DERIVED, "RDMA GB/s",
                            "rdma_bytes / rdma_ns (null without RDMA traffic)", .num = "rdma_bytes", .den = "rdma_ns"),
    [B_SDMA_BYTES] = TPROF_COL("sdma_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, "SDMA", "bytes within the machine"),
    [B_SDMA_NS] = TPROF_COL("sdma_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "their transit time",
                            .flags = TPROF_COLF_NO_TABLE),
    [B_SDMA_BW] = TPROF_COL("sdma_gbps", TPROF_COL_RATE, TPROF_COMBINE_DERIVED, "SDMA GB/s",
                            "sdma_bytes / sdma_ns (null without SDMA traffic)", .num = "sdma_bytes", .den = "sdma_ns"),
};

enum { L_TRANSPORT, L_N, L_MEAN, L_MAX, L_MAX_RANK, L_MAX_STEP, L_MIN, L_MIN_RANK, L_MIN_STEP, L_GAP, L_SLOW, L_NCOLS };
static const tprof_col_desc slow_cols[L_NCOLS] = {
    [L_TRANSPORT] = TPROF_COL("transport", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, "transport", "RDMA or SDMA",
                              .flags = TPROF_COLF_KEY),
    [L_N] = TPROF_COL("step_ranks", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, "step-ranks",
                      "(step, rank) pairs with traffic over it"),
    [L_MEAN] = TPROF_COL("mean_gbps", TPROF_COL_RATE, TPROF_COMBINE_FIRST, "mean GB/s", "their bandwidths' mean"),
    [L_MAX] = TPROF_COL("max_gbps", TPROF_COL_RATE, TPROF_COMBINE_FIRST, "max GB/s", "the highest"),
    [L_MAX_RANK] = TPROF_COL("max_rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "rank", "its rank"),
    [L_MAX_STEP] = TPROF_COL("max_step", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "step", "its step"),
    [L_MIN] = TPROF_COL("min_gbps", TPROF_COL_RATE, TPROF_COMBINE_FIRST, "min GB/s", "the lowest",
                        .flags = TPROF_COLF_METRIC | TPROF_COLF_LOW_WORST),
    [L_MIN_RANK] = TPROF_COL("min_rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "rank", "its rank"),
    [L_MIN_STEP] = TPROF_COL("min_step", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "step", "its step"),
    [L_GAP] = TPROF_COL("gap", TPROF_COL_REAL, TPROF_COMBINE_FIRST, "(max-min)/mean",
                        "(max - min) / mean, msprof-analyze's slow-link measure", .decimals = 3),
    [L_SLOW] = TPROF_COL("slow", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, "slow link",
                         "gap >= 0.05: the lowest is a slow link (msprof-analyze's threshold)"),
};

const tprof_table_desc tprof_hccl_groups_desc = {
    .name = "hccl_groups", .title = "Ascend communication groups",
    .doc = "Ascend: each communication group across ranks, who waited least", .cols = group_cols, .ncols = G_NCOLS,
    .json_omit_empty = 1,
};
const tprof_table_desc tprof_hccl_bandwidth_desc = {
    .name = "hccl_bandwidth", .title = "RDMA and SDMA bandwidth per step and rank",
    .doc = "Ascend: per step and rank, the bytes and bandwidth over RDMA and SDMA (every group)", .cols = bw_cols,
    .ncols = B_NCOLS, .json_omit_empty = 1, .limited = 1,
};
const tprof_table_desc tprof_hccl_slow_links_desc = {
    .name = "hccl_slow_links", .title = "slow links (msprof-analyze's advisor rule)",
    .doc = "Ascend: per transport, the spread of the step-rank bandwidths and the slowest", .cols = slow_cols,
    .ncols = L_NCOLS, .json_omit_empty = 1,
};

/* "(0, 1, 3)" from sorted ranks. */
int tprof_hccl_ranks_text(const int64_t *r, size_t n, char **out)
{
    size_t cap = 3 + n * 22, at = 0;
    char *s = malloc(cap);
    if (!s) return TPROF_ENOMEM;
    s[at++] = '(';
    for (size_t i = 0; i < n; i++) at += (size_t)snprintf(s + at, cap - at, "%s%lld", i ? ", " : "", (long long)r[i]);
    snprintf(s + at, cap - at, n == 1 ? ",)" : ")"); /* a Python tuple of one */
    *out = s;
    return 0;
}

/* The step number of "step12" (msprof-analyze orders steps by it; "step"
 * alone is its default step, 0 here). */
static int64_t step_number(const char *s)
{
    if (!strncmp(s, "step", 4)) s += 4;
    int64_t v = 0;
    while (*s >= '0' && *s <= '9' && v < 1000000000) v = v * 10 + (*s++ - '0');
    return v;
}

static int64_t cell_i(const tprof_rows *t, size_t r, size_t c) { return tprof_rows_cell(t, r, c)->v.i; }
static const char *cell_s(const tprof_rows *t, size_t r, size_t c) { return tprof_rows_cell(t, r, c)->v.s; }

typedef struct {
    uint32_t group;
    int64_t rank, sync;
} rank_sync;

static int cmp_rank_sync(const void *a, const void *b)
{
    const rank_sync *x = a, *y = b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

typedef struct {
    size_t first;     /* its first totals row: its type and group */
    int64_t nops, transit, wait, sync, steps;
    char *ranks_text;
} group_acc;

/* Per (type, group): its ranks and sums, from the cluster's totals, in
 * one pass (interned keys and hash maps: linear in the rows). */
static int group_rows(const tprof_rows *tot, tprof_rows *groups, tprof_rows *tot_out)
{
    size_t n = tprof_rows_count(tot);
    const tprof_table_desc *d = tprof_rows_desc(tot);
    const size_t type = (size_t)tprof_table_col(d, "type"), group = (size_t)tprof_table_col(d, "group"),
                 rank = (size_t)tprof_table_col(d, "rank"), step = (size_t)tprof_table_col(d, "step"),
                 ops = (size_t)tprof_table_col(d, "ops"), transit = (size_t)tprof_table_col(d, "transit_ns"),
                 wait = (size_t)tprof_table_col(d, "wait_ns"), sync = (size_t)tprof_table_col(d, "sync_ns"),
                 granks = (size_t)tprof_table_col(d, "group_ranks");
    tprof_strtab keys, steps;
    tprof_i64map rank_at, step_seen;
    uint32_t *gid = malloc((n ? n : 1) * sizeof *gid);
    rank_sync *rs = malloc((n ? n : 1) * sizeof *rs);
    group_acc *acc = calloc(n ? n : 1, sizeof *acc);
    size_t nrs = 0, ngroups = 0;
    int ok_keys = !tprof_strtab_init(&keys), ok_steps = !tprof_strtab_init(&steps),
        ok_rank = !tprof_i64map_init(&rank_at, n), ok_step = !tprof_i64map_init(&step_seen, n);
    int rc = gid && rs && acc && ok_keys && ok_steps && ok_rank && ok_step ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        char key[512];
        int kl = snprintf(key, sizeof key, "%s\x1f%.400s", cell_s(tot, i, type), cell_s(tot, i, group));
        uint32_t g = tprof_strtab_intern(&keys, key, (size_t)kl), sid;
        const char *st = cell_s(tot, i, step);
        if (g == UINT32_MAX || (sid = tprof_strtab_intern(&steps, st, strlen(st))) == UINT32_MAX) {
            rc = TPROF_ENOMEM;
            break;
        }
        /* the string table's ids are dense after its id 0 (""): the next one is a new group */
        g -= 1;
        if (g >= ngroups) acc[ngroups++] = (group_acc){ .first = i };
        gid[i] = g;
        group_acc *a = &acc[g];
        a->nops += cell_i(tot, i, ops);
        a->transit = tprof_sat_add(a->transit, cell_i(tot, i, transit));
        a->wait = tprof_sat_add(a->wait, cell_i(tot, i, wait));
        a->sync = tprof_sat_add(a->sync, cell_i(tot, i, sync));
        int64_t r = cell_i(tot, i, rank), at;
        int64_t rk = (int64_t)((uint64_t)g << 32 | (uint32_t)r), sk = (int64_t)((uint64_t)g << 32 | sid);
        if (!tprof_i64map_get(&step_seen, sk, &at)) {
            if (tprof_i64map_put(&step_seen, sk, 1)) rc = TPROF_ENOMEM;
            a->steps++;
        }
        if (!tprof_i64map_get(&rank_at, rk, &at)) {
            if (tprof_i64map_put(&rank_at, rk, (int64_t)nrs)) rc = TPROF_ENOMEM;
            rs[nrs] = (rank_sync){ g, r, 0 };
            at = (int64_t)nrs++;
        }
        rs[at].sync = tprof_sat_add(rs[at].sync, cell_i(tot, i, sync));
    }
    if (!rc) qsort(rs, nrs, sizeof *rs, cmp_rank_sync);
    for (size_t g = 0, at = 0; !rc && g < ngroups; g++) {
        size_t lo = at;
        while (at < nrs && rs[at].group == g) at++;
        size_t nr = at - lo, least = lo, most = lo;
        int64_t *sorted = malloc((nr ? nr : 1) * sizeof *sorted);
        if (!sorted) {
            rc = TPROF_ENOMEM;
            break;
        }
        for (size_t k = lo; k < at; k++) {
            sorted[k - lo] = rs[k].rank; /* in rank order already */
            if (rs[k].sync < rs[least].sync) least = k; /* ties: the lowest rank */
            if (rs[k].sync > rs[most].sync) most = k;
        }
        rc = tprof_hccl_ranks_text(sorted, nr, &acc[g].ranks_text);
        free(sorted);
        const group_acc *a = &acc[g];
        long row = rc ? -1 : tprof_rows_add(groups);
        if (row < 0 || tprof_rows_set_s(groups, (size_t)row, G_TYPE, cell_s(tot, a->first, type)) ||
            tprof_rows_set_s(groups, (size_t)row, G_GROUP, cell_s(tot, a->first, group)) ||
            tprof_rows_set_s(groups, (size_t)row, G_RANKS, a->ranks_text)) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(groups, (size_t)row, G_NRANKS, (int64_t)nr);
        tprof_rows_set_i(groups, (size_t)row, G_STEPS, a->steps);
        tprof_rows_set_i(groups, (size_t)row, G_OPS, a->nops);
        tprof_rows_set_i(groups, (size_t)row, G_TRANSIT, a->transit);
        tprof_rows_set_i(groups, (size_t)row, G_WAIT, a->wait);
        tprof_rows_set_i(groups, (size_t)row, G_SYNC, a->sync);
        if (nr > 1 && strcmp(cell_s(tot, a->first, type), "p2p") != 0) {
            tprof_rows_set_i(groups, (size_t)row, G_LATE, rs[least].rank);
            tprof_rows_set_i(groups, (size_t)row, G_LATE_SYNC, rs[least].sync);
        }
        if (nr) tprof_rows_set_i(groups, (size_t)row, G_MAX_SYNC, rs[most].sync);
    }
    /* the group's ranks on each of its totals rows (a cluster file's own stay) */
    for (size_t i = 0; !rc && i < n; i++)
        if (tprof_rows_cell(tot_out, i, granks)->null && tprof_rows_set_s(tot_out, i, granks, acc[gid[i]].ranks_text))
            rc = TPROF_ENOMEM;
    for (size_t g = 0; acc && g < ngroups; g++) free(acc[g].ranks_text);
    if (ok_keys) tprof_strtab_free(&keys);
    if (ok_steps) tprof_strtab_free(&steps);
    if (ok_rank) tprof_i64map_free(&rank_at);
    if (ok_step) tprof_i64map_free(&step_seen);
    free(gid), free(rs), free(acc);
    return rc;
}

/* Per (step, rank): RDMA and SDMA summed over the groups, in (step number,
 * rank) order as msprof-analyze lists them. */
static int bandwidth_rows(const tprof_rows *tot, tprof_rows *bw)
{
    const tprof_table_desc *d = tprof_rows_desc(tot);
    const size_t step = (size_t)tprof_table_col(d, "step"), rank = (size_t)tprof_table_col(d, "rank"),
                 rb = (size_t)tprof_table_col(d, "rdma_bytes"), rn = (size_t)tprof_table_col(d, "rdma_ns"),
                 sb = (size_t)tprof_table_col(d, "sdma_bytes"), sn = (size_t)tprof_table_col(d, "sdma_ns");
    size_t n = tprof_rows_count(tot);
    tprof_strtab steps; /* (step, rank) -> its row, through the step's id */
    tprof_i64map row_of;
    int ok_steps = !tprof_strtab_init(&steps), ok_rows = !tprof_i64map_init(&row_of, n);
    int rc = ok_steps && ok_rows ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        const char *st = cell_s(tot, i, step);
        uint32_t sid = tprof_strtab_intern(&steps, st, strlen(st));
        int64_t key = (int64_t)((uint64_t)sid << 32 | (uint32_t)cell_i(tot, i, rank)), k;
        if (sid == UINT32_MAX) {
            rc = TPROF_ENOMEM;
            break;
        }
        if (!tprof_i64map_get(&row_of, key, &k)) {
            long r = tprof_rows_add(bw);
            if (r < 0 || tprof_rows_set_s(bw, (size_t)r, B_STEP, st) || tprof_i64map_put(&row_of, key, r)) {
                rc = TPROF_ENOMEM;
                break;
            }
            tprof_rows_set_i(bw, (size_t)r, B_RANK, cell_i(tot, i, rank));
            tprof_rows_set_i(bw, (size_t)r, B_STEP_N, step_number(st));
            for (size_t c = B_RDMA_BYTES; c <= B_SDMA_NS; c++)
                if (c != B_RDMA_BW) tprof_rows_set_i(bw, (size_t)r, c, 0);
            k = r;
        }
        const size_t from[] = { rb, rn, sb, sn }, to[] = { B_RDMA_BYTES, B_RDMA_NS, B_SDMA_BYTES, B_SDMA_NS };
        for (size_t c = 0; c < 4; c++)
            tprof_rows_set_i(bw, (size_t)k, to[c], tprof_sat_add(cell_i(bw, (size_t)k, to[c]), cell_i(tot, i, from[c])));
    }
    if (ok_steps) tprof_strtab_free(&steps);
    if (ok_rows) tprof_i64map_free(&row_of);
    if (rc) return rc;
    tprof_rows_derive(bw);
    const int order[] = { B_STEP_N, B_RANK }, desc[] = { 0, 0 };
    return tprof_rows_sort(bw, order, desc, 2);
}

/* msprof-analyze's slow link, per transport, over the step-rank bandwidths
 * with traffic (it also counts those without, as 0 GB/s). */
static int slow_link_rows(tprof_rows *bw, tprof_rows *slow)
{
    size_t n = tprof_rows_count(bw);
    for (int x = 0; x < 2; x++) {
        size_t col = x ? B_SDMA_BW : B_RDMA_BW, cnt = 0, lo = 0, hi = 0;
        double sum = 0;
        for (size_t i = 0; i < n; i++) { /* rows are in (step, rank) order: the first extreme wins, as there */
            const tprof_cell *c = tprof_rows_cell(bw, i, col);
            if (c->null) continue;
            if (!cnt || c->v.d < tprof_rows_cell(bw, lo, col)->v.d) lo = i;
            if (!cnt || c->v.d > tprof_rows_cell(bw, hi, col)->v.d) hi = i;
            sum += c->v.d;
            cnt++;
        }
        if (!cnt) continue;
        double mean = sum / (double)cnt, min = tprof_rows_cell(bw, lo, col)->v.d, max = tprof_rows_cell(bw, hi, col)->v.d;
        double gap = mean > 0 ? (max - min) / mean : 0;
        long r = tprof_rows_add(slow);
        if (r < 0 || tprof_rows_set_s(slow, (size_t)r, L_TRANSPORT, x ? "SDMA" : "RDMA") ||
            tprof_rows_set_s(slow, (size_t)r, L_MAX_STEP, cell_s(bw, hi, B_STEP)) ||
            tprof_rows_set_s(slow, (size_t)r, L_MIN_STEP, cell_s(bw, lo, B_STEP)))
            return TPROF_ENOMEM;
        tprof_rows_set_i(slow, (size_t)r, L_N, (int64_t)cnt);
        tprof_rows_set_d(slow, (size_t)r, L_MEAN, mean);
        tprof_rows_set_d(slow, (size_t)r, L_MAX, max);
        tprof_rows_set_i(slow, (size_t)r, L_MAX_RANK, cell_i(bw, hi, B_RANK));
        tprof_rows_set_d(slow, (size_t)r, L_MIN, min);
        tprof_rows_set_i(slow, (size_t)r, L_MIN_RANK, cell_i(bw, lo, B_RANK));
        tprof_rows_set_d(slow, (size_t)r, L_GAP, gap);
        tprof_rows_set_i(slow, (size_t)r, L_SLOW, gap >= SLOW_LINK_GAP);
    }
    return 0;
}

int tprof_hccl_cluster(const tprof_rows *const *totals, const int64_t *rank_of, size_t n, tprof_rows *tot,
                       tprof_rows *groups, tprof_rows *bw, tprof_rows *slow)
{
    const tprof_table_desc *d = tprof_rows_desc(tot);
    const size_t rank = (size_t)tprof_table_col(d, "rank");
    for (size_t k = 0; k < n; k++) { /* every rank's rows, a rank's own file's with its rank */
        size_t first = tprof_rows_count(tot);
        int rc = tprof_rows_append(tot, totals[k]);
        if (rc) return rc;
        for (size_t i = first; i < tprof_rows_count(tot); i++)
            if (tprof_rows_cell(tot, i, rank)->null) tprof_rows_set_i(tot, i, rank, rank_of[k]);
    }
    if (!tprof_rows_count(tot)) return 0;
    tprof_rows_derive(tot); /* the ratios and bandwidths: each rank's part carries the sums alone */
    int rc = group_rows(tot, groups, tot);
    if (!rc) rc = bandwidth_rows(tot, bw);
    if (!rc) rc = slow_link_rows(bw, slow);
    return rc;
}
