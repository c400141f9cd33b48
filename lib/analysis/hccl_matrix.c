/* Ascend's rank-to-rank links across ranks (collectives): each rank's
 * communication_matrix.json entries, whose link keys are ranks within the
 * op's group, mapped to global ranks and summed per group, step, op and
 * link, as msprof-analyze's cluster_communication_matrix.json gives them,
 * with its Total Op Info per group and step. Definitions: docs/METRICS.md,
 * "Ascend communication". */
#include "hccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"

/* ---- a rank's links as written ---- */

enum { M_STEP, M_OP, M_GROUP, M_GROUP_RANKS, M_SRC, M_DST, M_TRANSPORT, M_BYTES, M_NS, M_NCOLS };
static const tprof_col_desc matrix_cols[M_NCOLS] = {
    [M_STEP] = TPROF_COL("step", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the step key"),
    [M_OP] = TPROF_COL("op", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the op key as written"),
    [M_GROUP] = TPROF_COL("group", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "what follows the op's '@'"),
    [M_GROUP_RANKS] = TPROF_COL("group_ranks", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                                "a cluster file's group, whose links are global ranks; null: a rank's own file, "
                                "whose links are ranks within the group"),
    [M_SRC] = TPROF_COL("src", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "sending rank"),
    [M_DST] = TPROF_COL("dst", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "receiving rank"),
    [M_TRANSPORT] = TPROF_COL("transport", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "\"Transport Type\""),
    [M_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "\"Transit Size(MB)\""),
    [M_NS] = TPROF_COL("time_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "\"Transit Time(ms)\""),
};
const tprof_table_desc tprof_hccl_matrix_desc = {
    .name = "hccl_matrix", .doc = "Ascend: the rank's matrix entries as written", .cols = matrix_cols,
    .ncols = M_NCOLS, .json_omit_empty = 1,
};

int tprof_hccl_matrix_rows(const tprof_trace *t, tprof_rows *rows)
{
    const tprof_hccl_link *l = tprof_trace_hccl_links(t);
    for (size_t i = 0, n = tprof_trace_nhccl_links(t); i < n; i++) {
        long k = tprof_rows_add(rows);
        if (k < 0 || tprof_rows_set_s(rows, (size_t)k, M_STEP, tprof_trace_str(t, l[i].step)) ||
            tprof_rows_set_s(rows, (size_t)k, M_OP, tprof_trace_str(t, l[i].op)) ||
            tprof_rows_set_s(rows, (size_t)k, M_GROUP, tprof_trace_str(t, l[i].group)) ||
            (l[i].group_ranks && tprof_rows_set_s(rows, (size_t)k, M_GROUP_RANKS, tprof_trace_str(t, l[i].group_ranks))) ||
            tprof_rows_set_s(rows, (size_t)k, M_TRANSPORT, tprof_trace_str(t, l[i].transport)))
            return TPROF_ENOMEM;
        tprof_rows_set_i(rows, (size_t)k, M_SRC, l[i].src);
        tprof_rows_set_i(rows, (size_t)k, M_DST, l[i].dst);
        tprof_rows_set_i(rows, (size_t)k, M_BYTES, tprof_hccl_bytes_of_mb(l[i].size_mb));
        tprof_rows_set_i(rows, (size_t)k, M_NS, tprof_hccl_ns_of_ms(l[i].time_ms));
    }
    return 0;
}

/* ---- across ranks ---- */

enum { C_RANKS, C_STEP, C_OP, C_SRC, C_DST, C_TRANSPORT, C_BYTES, C_NS, C_BW, C_NCOLS };
static const tprof_col_desc cluster_cols[C_NCOLS] = {
    [C_RANKS] = TPROF_COL("ranks", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "group",
                          "the group's ranks, \"(0, 1)\" (msprof-analyze's key)", .flags = TPROF_COLF_KEY),
    [C_STEP] = TPROF_COL("step", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "step", "the step key", .flags = TPROF_COLF_KEY),
    [C_OP] = TPROF_COL("op", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "op",
                       "the op key (\"allreduce-total@<group>\", the statistics entries too), or \"Total Op "
                       "Info@<group>\": the group's ops summed per link",
                       .flags = TPROF_COLF_KEY),
    [C_SRC] = TPROF_COL("src", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "src", "sending rank (global)", .flags = TPROF_COLF_KEY),
    [C_DST] = TPROF_COL("dst", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "dst", "receiving rank (global)",
                        .flags = TPROF_COLF_KEY),
    [C_TRANSPORT] = TPROF_COL("transport", TPROF_COL_STRING, TPROF_COMBINE_FIRST, "transport",
                              "\"Transport Type\" of the last entry summed"),
    [C_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, "bytes", "\"Transit Size(MB)\" summed"),
    [C_NS] = TPROF_COL("time_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, "time", "\"Transit Time(ms)\" summed"),
    [C_BW] = TPROF_COL("bandwidth_gbps", TPROF_COL_RATE, TPROF_COMBINE_DERIVED, "GB/s", "bytes / time_ns",
                       .num = "bytes", .den = "time_ns", .flags = TPROF_COLF_METRIC | TPROF_COLF_LOW_WORST),
};
const tprof_table_desc tprof_hccl_cluster_links_desc = {
    .name = "hccl_cluster_links", .title = "rank-to-rank links across ranks (msprof-analyze's cluster matrix)",
    .doc = "Ascend: the ranks' matrix entries on global ranks, summed per group, step, op and link",
    .cols = cluster_cols, .ncols = C_NCOLS, .json_omit_empty = 1, .limited = 1,
};

/* One matrix entry of one rank, its endpoints global once mapped. */
typedef struct {
    const char *group, *step, *op, *ranks, *transport; /* ranks: a cluster file's group, else NULL */
    int64_t src, dst, reporter, bytes, ns;
    size_t order;
    int total; /* counted in the group's Total Op Info (msprof's check_add_op) */
} entry;

/* Local rank LOCAL of GROUP as a rank's self link "i-i" says it. */
typedef struct {
    const char *group;
    int64_t local, global;
    size_t order;
} self_link;

static int cmp_self(const void *a, const void *b)
{
    const self_link *x = a, *y = b;
    int c = strcmp(x->group, y->group);
    if (c) return c;
    if (x->local != y->local) return x->local < y->local ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* The global rank of LOCAL in GROUP (MAP sorted, first reporter first), or -1. */
static int64_t global_of(const self_link *map, size_t n, const char *group, int64_t local)
{
    size_t lo = 0, hi = n;
    self_link key = { .group = group, .local = local, .order = 0 };
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_self(&map[mid], &key) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && !strcmp(map[lo].group, group) && map[lo].local == local ? map[lo].global : -1;
}

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = strcmp(x->group, y->group);
    if (!c) c = strcmp(x->step, y->step);
    if (!c) c = strcmp(x->op, y->op);
    if (!c && x->src != y->src) c = x->src < y->src ? -1 : 1;
    if (!c && x->dst != y->dst) c = x->dst < y->dst ? -1 : 1;
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Each group's ranks, "(0, 1, 3)": a cluster file's as written, else the
 * ranks that reported its entries. RANKS[i] is set for every entry. */
static int group_ranks(entry *e, size_t n, char ***texts, size_t *ntexts)
{
    /* entries sorted by group: one run per group */
    *texts = NULL;
    *ntexts = 0;
    int64_t *r = malloc((n ? n : 1) * sizeof *r);
    char **t = calloc(n ? n : 1, sizeof *t);
    if (!r || !t) {
        free(r);
        free(t);
        return TPROF_ENOMEM;
    }
    size_t nt = 0;
    for (size_t a = 0, b; a < n; a = b) {
        const char *given = NULL;
        size_t m = 0;
        for (b = a; b < n && !strcmp(e[b].group, e[a].group); b++) {
            if (e[b].ranks) given = e[b].ranks;
            else r[m++] = e[b].reporter;
        }
        char *text = NULL;
        if (given) text = strdup(given);
        else {
            qsort(r, m, sizeof *r, cmp_i64);
            size_t u = 0;
            for (size_t i = 0; i < m; i++)
                if (!u || r[u - 1] != r[i]) r[u++] = r[i];
            if (tprof_hccl_ranks_text(r, u, &text)) text = NULL;
        }
        if (!text) {
            for (size_t i = 0; i < nt; i++) free(t[i]);
            free(t);
            free(r);
            return TPROF_ENOMEM;
        }
        t[nt++] = text;
        for (size_t i = a; i < b; i++) e[i].ranks = text;
    }
    free(r);
    *texts = t;
    *ntexts = nt;
    return 0;
}

static int same_link(const entry *x, const entry *y)
{
    return !strcmp(x->group, y->group) && !strcmp(x->step, y->step) && !strcmp(x->op, y->op) && x->src == y->src &&
           x->dst == y->dst;
}

/* Runs of E (sorted) with the same group, step, op and link summed into a row each. */
static int sum_runs(const entry *e, size_t n, tprof_rows *out)
{
    for (size_t a = 0, b; a < n; a = b) {
        int64_t bytes = 0, ns = 0;
        for (b = a; b < n && same_link(&e[a], &e[b]); b++)
            bytes = tprof_sat_add(bytes, e[b].bytes), ns = tprof_sat_add(ns, e[b].ns);
        long k = tprof_rows_add(out);
        if (k < 0 || tprof_rows_set_s(out, (size_t)k, C_RANKS, e[a].ranks) ||
            tprof_rows_set_s(out, (size_t)k, C_STEP, e[a].step) || tprof_rows_set_s(out, (size_t)k, C_OP, e[a].op) ||
            tprof_rows_set_s(out, (size_t)k, C_TRANSPORT, e[b - 1].transport))
            return TPROF_ENOMEM;
        tprof_rows_set_i(out, (size_t)k, C_SRC, e[a].src);
        tprof_rows_set_i(out, (size_t)k, C_DST, e[a].dst);
        tprof_rows_set_i(out, (size_t)k, C_BYTES, bytes);
        tprof_rows_set_i(out, (size_t)k, C_NS, ns);
    }
    return 0;
}

int tprof_hccl_cluster_links(const tprof_rows *const *parts, const int64_t *rank_of, size_t n, tprof_rows *out,
                             size_t *unmapped)
{
    *unmapped = 0;
    size_t total = 0;
    for (size_t k = 0; k < n; k++) total += tprof_rows_count(parts[k]);
    if (!total) return 0;
    entry *e = malloc(total * sizeof *e);
    self_link *map = malloc(total * sizeof *map);
    char **texts = NULL, *names = NULL;
    size_t ntexts = 0, ne = 0, nmap = 0;
    int rc = e && map ? 0 : TPROF_ENOMEM;
    for (size_t k = 0; !rc && k < n; k++) {
        const tprof_rows *p = parts[k];
        for (size_t i = 0, m = tprof_rows_count(p); i < m; i++) {
            const tprof_cell *gr = tprof_rows_cell(p, i, M_GROUP_RANKS);
            entry x = { .group = tprof_rows_cell(p, i, M_GROUP)->v.s, .step = tprof_rows_cell(p, i, M_STEP)->v.s,
                        .op = tprof_rows_cell(p, i, M_OP)->v.s, .ranks = gr->null ? NULL : gr->v.s,
                        .transport = tprof_rows_cell(p, i, M_TRANSPORT)->v.s,
                        .src = tprof_rows_cell(p, i, M_SRC)->v.i, .dst = tprof_rows_cell(p, i, M_DST)->v.i,
                        .reporter = rank_of[k], .bytes = tprof_rows_cell(p, i, M_BYTES)->v.i,
                        .ns = tprof_rows_cell(p, i, M_NS)->v.i, .order = ne };
            x.total = !tprof_hccl_statistic_entry(x.op);
            if (!x.ranks && x.src == x.dst) /* a self link says which global rank a local one is */
                map[nmap++] = (self_link){ .group = x.group, .local = x.src, .global = rank_of[k], .order = ne };
            e[ne++] = x;
        }
    }
    if (!rc) qsort(map, nmap, sizeof *map, cmp_self);
    size_t kept = 0;
    for (size_t i = 0; !rc && i < ne; i++) { /* a rank's own links onto global ranks; the unmapped dropped */
        if (!e[i].ranks) {
            e[i].src = global_of(map, nmap, e[i].group, e[i].src);
            e[i].dst = global_of(map, nmap, e[i].group, e[i].dst);
            if (e[i].src < 0 || e[i].dst < 0) {
                (*unmapped)++;
                continue;
            }
        }
        e[kept++] = e[i];
    }
    ne = kept;
    if (!rc) qsort(e, ne, sizeof *e, cmp_entry);
    if (!rc) rc = group_ranks(e, ne, &texts, &ntexts);
    if (!rc) rc = sum_runs(e, ne, out);
    /* the group's Total Op Info: per step and link, over the ops counted in it */
    size_t nt = 0;
    for (size_t i = 0; !rc && i < ne; i++) nt += e[i].total;
    size_t name_len = 0;
    for (size_t i = 0; !rc && i < ne; i++) name_len += e[i].total ? strlen(e[i].group) + 16 : 0;
    if (!rc && nt && !(names = malloc(name_len))) rc = TPROF_ENOMEM;
    kept = 0;
    for (size_t i = 0, at = 0; !rc && i < ne; i++) {
        if (!e[i].total) continue;
        entry x = e[i];
        x.op = names + at;
        at += (size_t)sprintf(names + at, "Total Op Info@%s", e[i].group) + 1;
        e[kept++] = x;
    }
    if (!rc && kept) {
        qsort(e, kept, sizeof *e, cmp_entry);
        rc = sum_runs(e, kept, out);
    }
    if (!rc) tprof_rows_derive(out);
    for (size_t i = 0; i < ntexts; i++) free(texts[i]);
    free(texts);
    free(names);
    free(e);
    free(map);
    return rc;
}
