/* The matching of collectives across ranks, in steps that can be spread by
 * process group over owners (trainprof-mpi's processes; one owner in
 * tprof_collectives_reduce): every step's output is a result, so that it
 * moves between owners as bytes. Every sum here is of integers (saturating
 * where it can overflow) and every list is sorted before it is read, so the
 * outcome does not depend on how the groups were spread. */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "alltoall.h"
#include "coll_layout.h"
#include "comm_calls.h"
#include "../util/grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A drift is fitted when the shared collectives span this long. */
#define DRIFT_MIN_SPAN_NS 1000000000LL

/* ---- the results that move between owners ---- */

static const tprof_col_desc match_cols[M_NCOLS] = {
    [M_MATCHED] = TPROF_COL("matched", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "instances matched on two or more ranks"),
    [M_UNMATCHED] = TPROF_COL("unmatched", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "ranks' instances left out"),
    [M_WITH_WAITS] = TPROF_COL("with_waits", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                               "matched instances in which some rank waited"),
    [M_SEQ_USED] = TPROF_COL("by_sequence", TPROF_COL_BOOL, TPROF_COMBINE_MAX, NULL, "some group matched by Seq"),
    [M_ORDER_USED] = TPROF_COL("by_order", TPROF_COL_BOOL, TPROF_COMBINE_MAX, NULL, "some group matched by order"),
    [M_A2A_UNREAD] = TPROF_COL("alltoall_splits_unread", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                               "all-to-all split lists not read"),
    [M_PAIRS] = TPROF_COL("clock_pairs", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                          "collective ends shared with the first rank, for the clocks"),
};
const tprof_table_desc tprof_coll_match_table = { .name = "match", .doc = "the matching's counts",
                                                  .cols = match_cols, .ncols = M_NCOLS };

static const tprof_col_desc sum_cols[S_NCOLS] = {
    [S_K] = TPROF_COL("k", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the rank's place in rank order"),
    [S_MATCHED_ON] = TPROF_COL("instances", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "matched instances it is in"),
    [S_WAIT] = TPROF_COL("wait_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "its waits"),
    [S_LAST] = TPROF_COL("arrived_last", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "instances it arrived last in"),
    [S_COST] = TPROF_COL("cost_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "the others' waits in those"),
    [S_LATE] = TPROF_COL("late_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL,
                         "its arrivals after each instance's first rank, clocks aligned, each rounded to the ns"),
    [S_LATE_N] = TPROF_COL("late_instances", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "the instances in late_ns"),
    [S_SENT] = TPROF_COL("alltoall_sent_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, NULL, "null without sizes"),
    [S_RECEIVED] = TPROF_COL("alltoall_received_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, NULL,
                             "null without sizes"),
    [S_WHY_BEFORE] = TPROF_COL("late_stretch_ns", TPROF_COL_INT, TPROF_COMBINE_SUM, NULL,
                               "where it arrived last: its stretch minus the others' median, summed"),
    [S_WHY_HOST] = TPROF_COL("late_host_ns", TPROF_COL_INT, TPROF_COMBINE_SUM, NULL, "the same for its host part"),
    [S_WHY_COMPUTE] = TPROF_COL("late_compute_ns", TPROF_COL_INT, TPROF_COMBINE_SUM, NULL,
                                "the same for its GPU compute"),
    [S_WHY_DATA] = TPROF_COL("late_data_ns", TPROF_COL_INT, TPROF_COMBINE_SUM, NULL, "the same for its data loading"),
    [S_WHY_N] = TPROF_COL("late_compared", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "the instances in those sums"),
    [S_FITTED] = TPROF_COL("clock_fitted", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, NULL, "joined: its clock was fitted"),
    [S_OFFSET] = TPROF_COL("clock_offset_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "joined: the fit's offset"),
    [S_DRIFT] = TPROF_COL("clock_drift", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "joined: ns per ns"),
    [S_RESIDUAL] = TPROF_COL("clock_residual_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "joined: the residual"),
};
const tprof_table_desc tprof_coll_sums_table = { .name = "rank_sums", .doc = "per rank, in rank order",
                                                 .cols = sum_cols, .ncols = S_NCOLS };

enum { O_OWNER, O_NCOLS };
static const tprof_col_desc owner_cols[O_NCOLS] = {
    [O_OWNER] = TPROF_COL("owner", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the owner that made it"),
};
static const tprof_table_desc owner_top = { .name = "", .cols = owner_cols, .ncols = O_NCOLS };

enum { K_K, K_ROW, K_NCOLS };
static const tprof_col_desc place_cols[K_NCOLS] = {
    [K_K] = TPROF_COL("k", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the instance's rank: its place in rank order"),
    [K_ROW] = TPROF_COL("row", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "its row among that rank's instances"),
};
static const tprof_table_desc place_table = { .name = "places", .doc = "where each routed instance comes from",
                                              .cols = place_cols, .ncols = K_NCOLS };
static const tprof_table_desc *const routed_tables[] = { &tprof_coll_inst_rows, &place_table };
const tprof_result_desc tprof_coll_routed_desc = {
    .name = "collective_routed", .version = 1, .top = &owner_top, .tables = routed_tables, .ntables = 2,
    .internal = 1,
    .doc = "The instances of the common steps that one rank routes to the owner of their groups, with their places "
           "(tprof_coll_route).",
};

enum { CP_K, CP_REF_END, CP_END, CP_NCOLS };
static const tprof_col_desc pair_cols[CP_NCOLS] = {
    [CP_K] = TPROF_COL("k", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the rank (its place in rank order)"),
    [CP_REF_END] = TPROF_COL("ref_end_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_FIRST, NULL,
                             "a collective's end on the first rank, on its clock"),
    [CP_END] = TPROF_COL("end_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_FIRST, NULL, "its end on this rank, on its clock"),
};
static const tprof_table_desc pair_table = { .name = "pairs", .doc = "the ends of the collectives a rank shares "
                                                                     "with the first rank (those that end together)",
                                             .cols = pair_cols, .ncols = CP_NCOLS };
static const tprof_table_desc *const pair_tables[] = { &pair_table };
const tprof_result_desc tprof_coll_pairs_desc = {
    .name = "collective_clock_pairs", .version = 1, .top = &owner_top, .tables = pair_tables, .ntables = 1,
    .internal = 1, .doc = "Clock pairs for the owner of their ranks (tprof_coll_match).",
};

enum { F_K, F_X0, F_OFFSET, F_DRIFT, F_RESIDUAL, F_NCOLS };
static const tprof_col_desc fit_cols[F_NCOLS] = {
    [F_K] = TPROF_COL("k", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the rank (its place in rank order)"),
    [F_X0] = TPROF_COL("x0_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "the fit's mean first-rank end"),
    [F_OFFSET] = TPROF_COL("offset_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "its clock minus the first rank's"),
    [F_DRIFT] = TPROF_COL("drift", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "ns per ns of the first rank's clock"),
    [F_RESIDUAL] = TPROF_COL("residual_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "root-mean-square residual"),
};
static const tprof_table_desc fit_table = { .name = "fits", .doc = "the clocks of the ranks that have pairs",
                                            .cols = fit_cols, .ncols = F_NCOLS };
static const tprof_table_desc *const fit_tables[] = { &fit_table };
const tprof_result_desc tprof_coll_fits_desc = {
    .name = "collective_clock_fits", .version = 1, .top = &owner_top, .tables = fit_tables, .ntables = 1,
    .internal = 1, .doc = "An owner's ranks' clocks, fitted on their pairs, for every owner (tprof_coll_fit).",
};

static const tprof_table_desc *const partial_tables[] = { &tprof_coll_groups_table, &tprof_coll_sums_table,
                                                          &tprof_a2a_pairs_desc };
const tprof_result_desc tprof_coll_partial_desc = {
    .name = "collective_partial", .version = 1, .top = &tprof_coll_match_table, .tables = partial_tables,
    .ntables = 3, .internal = 1,
    .doc = "What one owner's groups add to the matching: their counts, rows, per-rank sums and all-to-all pairs "
           "(tprof_coll_finish).",
};

/* ---- the plan: every owner's alike ---- */

struct tprof_coll_plan {
    size_t n;
    unsigned owners;
    size_t *place;    /* by input: its place in rank order */
    int64_t *rank_of; /* by place: the rank its trace says, else its place */
    int all_steps;    /* every rank has steps: only the common ones are matched */
    int64_t *common;
    size_t ncommon;
};

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

void tprof_coll_plan_free(tprof_coll_plan *p)
{
    if (!p) return;
    free(p->place);
    free(p->rank_of);
    free(p->common);
    free(p);
}

tprof_coll_plan *tprof_coll_plan_new(const tprof_result *const *per_rank, size_t n, unsigned owners)
{
    tprof_coll_plan *p = calloc(1, sizeof *p);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    int64_t *steps_of = NULL;
    if (!p || !order) goto fail;
    p->n = n;
    p->owners = owners ? owners : 1;
    p->place = malloc((n ? n : 1) * sizeof *p->place);
    p->rank_of = calloc(n ? n : 1, sizeof *p->rank_of);
    if (!p->place || !p->rank_of) goto fail;
    /* rank order: the rank each trace says, else its place */
    for (size_t i = 0; i < n; i++) {
        const tprof_cell *c = tprof_rows_cell(tprof_result_top_c(per_rank[i]), 0, I_RANK);
        p->rank_of[i] = c->null ? -1 : c->v.i;
    }
    if (tprof_rank_order(p->rank_of, n, order)) goto fail;
    for (size_t k = 0; k < n; k++) {
        p->place[order[k]] = k;
        const tprof_cell *c = tprof_rows_cell(tprof_result_top_c(per_rank[order[k]]), 0, I_RANK);
        p->rank_of[k] = c->null ? (int64_t)k : c->v.i;
    }
    /* the steps every rank has (none: a rank without steps) */
    p->all_steps = n > 0;
    for (size_t i = 0; i < n; i++) p->all_steps &= tprof_rows_count(tprof_result_table_c(per_rank[i], IT_STEPS)) > 0;
    if (p->all_steps) {
        const tprof_rows *s0 = tprof_result_table_c(per_rank[order[0]], IT_STEPS);
        size_t ns = tprof_rows_count(s0);
        if (!(p->common = malloc(ns * sizeof *p->common)) || !(steps_of = malloc(ns * sizeof *steps_of))) goto fail;
        for (size_t j = 0; j < ns; j++) steps_of[j] = tprof_rows_cell(s0, j, P_STEP)->v.i;
        for (size_t j = 0; j < ns; j++) {
            int everywhere = 1;
            for (size_t k = 1; k < n && everywhere; k++) {
                const tprof_rows *sk = tprof_result_table_c(per_rank[order[k]], IT_STEPS);
                int found = 0;
                for (size_t r = 0; r < tprof_rows_count(sk) && !found; r++)
                    found = tprof_rows_cell(sk, r, P_STEP)->v.i == steps_of[j];
                everywhere = found;
            }
            if (everywhere) p->common[p->ncommon++] = steps_of[j];
        }
        if (p->ncommon) qsort(p->common, p->ncommon, sizeof *p->common, cmp_i64);
    }
    free(order);
    free(steps_of);
    return p;
fail:
    free(order);
    free(steps_of);
    tprof_coll_plan_free(p);
    return NULL;
}

size_t tprof_coll_plan_place(const tprof_coll_plan *p, size_t i) { return p->place[i]; }
size_t tprof_coll_plan_common(const tprof_coll_plan *p) { return p->ncommon; }
int64_t tprof_coll_plan_rank(const tprof_coll_plan *p, size_t k) { return p->rank_of[k]; }

unsigned tprof_coll_owner_of_group(const tprof_coll_plan *p, const char *group)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)group; *c; c++) h = (h ^ *c) * 1099511628211ull;
    return (unsigned)(h % p->owners);
}

unsigned tprof_coll_owner_of_rank(const tprof_coll_plan *p, size_t k) { return (unsigned)(k % p->owners); }

static tprof_result *owned(const tprof_result_desc *d, unsigned owner)
{
    tprof_result *r = tprof_result_new(d);
    if (r) tprof_rows_set_i(tprof_result_top(r), 0, O_OWNER, owner);
    return r;
}

/* Whether row R of a rank's instances is matched: in a step every rank has
 * (every instance when some rank has no steps). */
static int routed_here(const tprof_coll_plan *p, const tprof_rows *rows, size_t r)
{
    if (!p->all_steps) return 1;
    const tprof_cell *s = tprof_rows_cell(rows, r, C_STEP);
    return !s->null && bsearch(&s->v.i, p->common, p->ncommon, sizeof *p->common, cmp_i64);
}

int tprof_coll_route(const tprof_coll_plan *p, size_t i, const tprof_result *mine, tprof_result **to)
{
    const tprof_rows *rows = tprof_result_table_c(mine, IT_INSTANCES);
    for (size_t r = 0; r < tprof_rows_count(rows); r++) {
        if (!routed_here(p, rows, r)) continue;
        const tprof_cell *g = tprof_rows_cell(rows, r, C_GROUP);
        unsigned o = tprof_coll_owner_of_group(p, g->null ? "" : g->v.s);
        if (!to[o] && !(to[o] = owned(&tprof_coll_routed_desc, o))) return TPROF_ENOMEM;
        tprof_rows *dst = tprof_result_table(to[o], 0), *at = tprof_result_table(to[o], 1);
        long d = tprof_rows_add(dst), a = tprof_rows_add(at);
        if (d < 0 || a < 0) return TPROF_ENOMEM;
        for (size_t c = 0; c < C_NCOLS; c++) {
            const tprof_cell *v = tprof_rows_cell(rows, r, c);
            if (v->null) continue;
            if (tprof_coll_inst_rows.cols[c].kind == TPROF_COL_STRING) {
                if (tprof_rows_set_s(dst, (size_t)d, c, v->v.s)) return TPROF_ENOMEM;
            } else
                tprof_rows_set_i(dst, (size_t)d, c, v->v.i);
        }
        tprof_rows_set_i(at, (size_t)a, K_K, (int64_t)p->place[i]);
        tprof_rows_set_i(at, (size_t)a, K_ROW, (int64_t)r);
    }
    return 0;
}

/* ---- an owner: its groups matched ---- */

/* One instance on one rank, in the matching. */
typedef struct {
    uint32_t k;     /* its rank's place in rank order */
    uint32_t src;   /* the routed result it is in */
    uint32_t row;   /* its row there */
    uint32_t key;   /* its (group, type) */
    int64_t rrow;   /* its row among its rank's instances */
    int64_t order;  /* its number among the rank's instances of that key, or its Seq */
} inst;

typedef struct {
    const char *group, *type;
    int by_seq; /* every instance of the group on every rank has a Seq */
    int gpu;    /* some rank's instance has kernels */
} inst_key;

/* A row of the per-collective table while it is summed. */
typedef struct {
    const char *type, *group, *dtype;
    int64_t bytes; /* -1: none recorded */
    uint64_t count, ranks;
    int64_t transfer, wait;
    int64_t *transfers, *skews;
    size_t ntransfers, cap, nskews, skewcap;
} group_row;

/* A matched instance: ALL[a .. a + m), its row in GROUPS[g]. */
typedef struct {
    size_t a, m, g;
} matched_inst;

/* What made a late rank late: its stretch, its host, compute and data
 * parts, beside the others' medians (summed), and the instances summed. */
enum { LATE_NPARTS = 4, LATE_STRIDE = LATE_NPARTS + 1 };

struct tprof_coll_owner {
    const tprof_coll_plan *p;
    const tprof_result **src; /* the routed results (theirs: kept until finish) */
    size_t nsrc;
    int direct; /* SRC are the ranks' own instances, in the plan's input order (one owner: no copy routed) */
    inst *all;
    size_t nall;
    inst_key *keys;
    size_t nkeys, keycap;
    group_row *groups;
    size_t ngroups, groupcap;
    matched_inst *mi;
    size_t nmi, micap;
    /* by place in rank order */
    int64_t *wait, *cost, *sent, *received, *late, *why;
    uint64_t *last, *matched_on, *late_n;
    uint64_t matched, unmatched, with_waits, a2a_unread, npairs;
    int seq_used, order_used;
    tprof_a2a *a2a;
};

void tprof_coll_owner_free(tprof_coll_owner *o)
{
    if (!o) return;
    for (size_t g = 0; g < o->ngroups; g++) free(o->groups[g].transfers), free(o->groups[g].skews);
    free(o->groups);
    free(o->src);
    free(o->all);
    free(o->keys);
    free(o->mi);
    free(o->wait), free(o->cost), free(o->sent), free(o->received), free(o->late), free(o->why);
    free(o->last), free(o->matched_on), free(o->late_n);
    tprof_a2a_free(o->a2a);
    free(o);
}

tprof_coll_owner *tprof_coll_owner_new(const tprof_coll_plan *p)
{
    tprof_coll_owner *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    size_t n = p->n ? p->n : 1;
    o->p = p;
    o->wait = calloc(n, sizeof *o->wait), o->cost = calloc(n, sizeof *o->cost);
    o->sent = malloc(n * sizeof *o->sent), o->received = malloc(n * sizeof *o->received);
    o->late = calloc(n, sizeof *o->late), o->why = calloc(n * LATE_STRIDE, sizeof *o->why);
    o->last = calloc(n, sizeof *o->last), o->matched_on = calloc(n, sizeof *o->matched_on);
    o->late_n = calloc(n, sizeof *o->late_n);
    o->a2a = tprof_a2a_new();
    if (!o->wait || !o->cost || !o->sent || !o->received || !o->late || !o->why || !o->last || !o->matched_on ||
        !o->late_n || !o->a2a) {
        tprof_coll_owner_free(o);
        return NULL;
    }
    for (size_t k = 0; k < n; k++) o->sent[k] = o->received[k] = -1; /* -1: no size recorded */
    return o;
}

static const tprof_rows *src_rows(const tprof_coll_owner *o, const inst *x)
{
    return tprof_result_table_c(o->src[x->src], o->direct ? IT_INSTANCES : 0);
}

static int64_t inst_int(const tprof_coll_owner *o, const inst *x, size_t col, int64_t none)
{
    return coll_int_or(src_rows(o, x), x->row, col, none);
}

static const char *inst_str(const tprof_coll_owner *o, const inst *x, size_t col)
{
    return coll_str(src_rows(o, x), x->row, col);
}

static int cmp_by_place(const void *a, const void *b)
{
    const inst *x = a, *y = b;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return x->rrow < y->rrow ? -1 : x->rrow > y->rrow;
}

static int cmp_inst(const void *a, const void *b)
{
    const inst *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return x->rrow < y->rrow ? -1 : x->rrow > y->rrow; /* a repeated Seq: the rank's first counts */
}

/* Instance ALL[a .. a + m), ALL[LASTK] the last to arrive: adds to SUM
 * (its rank's LATE_STRIDE slots) its stretch parts minus the others'
 * medians (the lower middle), when it and another rank have them. OTHER:
 * room for M values. */
static void late_stretch(const tprof_coll_owner *o, size_t a, size_t m, size_t lastk, int64_t *sum, int64_t *other)
{
    int64_t excess[LATE_NPARTS];
    for (size_t p = 0; p < LATE_NPARTS; p++) {
        const tprof_cell *mine = tprof_rows_cell(src_rows(o, &o->all[lastk]), o->all[lastk].row, C_BEFORE + p);
        size_t k = 0;
        for (size_t j = a; j < a + m; j++) {
            if (j == lastk) continue;
            const tprof_cell *c = tprof_rows_cell(src_rows(o, &o->all[j]), o->all[j].row, C_BEFORE + p);
            if (!c->null) other[k++] = c->v.i;
        }
        if (mine->null || !k) return; /* a group's first instance, or no calls: nothing to compare */
        qsort(other, k, sizeof *other, cmp_i64);
        excess[p] = mine->v.i - other[(k - 1) / 2];
    }
    for (size_t p = 0; p < LATE_NPARTS; p++) sum[p] += excess[p];
    sum[LATE_NPARTS] += 1;
}

/* The instances of SRC[0..N), listed, keyed and numbered. */
static int list_instances(tprof_coll_owner *o)
{
    const tprof_coll_plan *p = o->p;
    size_t total = 0;
    for (size_t s = 0; s < o->nsrc; s++) total += tprof_rows_count(tprof_result_table_c(o->src[s], o->direct ? IT_INSTANCES : 0));
    if (!(o->all = malloc((total ? total : 1) * sizeof *o->all))) return TPROF_ENOMEM;
    for (size_t s = 0; o->direct && s < o->nsrc; s++) { /* the instances of the common steps, as routing keeps them */
        const tprof_rows *rows = tprof_result_table_c(o->src[s], IT_INSTANCES);
        for (size_t r = 0; r < tprof_rows_count(rows); r++)
            if (routed_here(p, rows, r))
                o->all[o->nall++] = (inst){ .k = (uint32_t)p->place[s], .src = (uint32_t)s, .row = (uint32_t)r,
                                            .rrow = (int64_t)r };
    }
    for (size_t s = 0; !o->direct && s < o->nsrc; s++) {
        const tprof_rows *at = tprof_result_table_c(o->src[s], 1);
        if (tprof_rows_count(at) != tprof_rows_count(tprof_result_table_c(o->src[s], 0))) return TPROF_EFORMAT;
        for (size_t r = 0; r < tprof_rows_count(at); r++) {
            int64_t k = coll_int_or(at, r, K_K, -1);
            if (k < 0 || (size_t)k >= o->p->n) return TPROF_EFORMAT;
            o->all[o->nall++] = (inst){ .k = (uint32_t)k, .src = (uint32_t)s, .row = (uint32_t)r,
                                        .rrow = coll_int_or(at, r, K_ROW, 0) };
        }
    }
    /* each rank's instances in its own order, for numbering them */
    qsort(o->all, o->nall, sizeof *o->all, cmp_by_place);
    for (size_t a = 0; a < o->nall; a++) {
        inst *x = &o->all[a];
        const char *group = inst_str(o, x, C_GROUP), *type = inst_str(o, x, C_TYPE);
        size_t key = 0;
        while (key < o->nkeys && (strcmp(o->keys[key].group, group) || strcmp(o->keys[key].type, type))) key++;
        if (key == o->nkeys) {
            if (tprof_grow((void **)&o->keys, &o->keycap, o->nkeys + 1, sizeof *o->keys)) return TPROF_ENOMEM;
            o->keys[o->nkeys++] = (inst_key){ .group = group, .type = type, .by_seq = 1 };
        }
        x->key = (uint32_t)key;
        x->order = inst_int(o, x, C_SEQ, -1);
        if (inst_int(o, x, C_KERNELS, 0) > 0) o->keys[key].gpu = 1;
    }
    /* of a key with GPU work anywhere, the instances with kernels */
    size_t kept = 0;
    for (size_t a = 0; a < o->nall; a++)
        if (!o->keys[o->all[a].key].gpu || inst_int(o, &o->all[a], C_KERNELS, 0) > 0) o->all[kept++] = o->all[a];
    o->nall = kept;
    /* matching by Seq where a whole group has it, else by order within the group and type */
    for (size_t a = 0; a < o->nall; a++)
        if (o->all[a].order < 0)
            for (size_t j = 0; j < o->nkeys; j++)
                if (!strcmp(o->keys[j].group, o->keys[o->all[a].key].group)) o->keys[j].by_seq = 0;
    uint64_t *seen = calloc(o->nkeys ? o->nkeys : 1, sizeof *seen); /* the current rank's instances per key */
    if (!seen) return TPROF_ENOMEM;
    for (size_t a = 0; a < o->nall; a++) {
        if (a && o->all[a].k != o->all[a - 1].k) memset(seen, 0, o->nkeys * sizeof *seen);
        if (o->keys[o->all[a].key].by_seq) {
            o->seq_used = 1;
            continue;
        }
        o->order_used = 1;
        o->all[a].order = (int64_t)seen[o->all[a].key]++;
    }
    free(seen);
    qsort(o->all, o->nall, sizeof *o->all, cmp_inst);
    return 0;
}

static int add_pair(const tprof_coll_plan *p, tprof_result **pairs, size_t k, int64_t ref_end, int64_t end)
{
    unsigned to = tprof_coll_owner_of_rank(p, k);
    if (!pairs[to] && !(pairs[to] = owned(&tprof_coll_pairs_desc, to))) return TPROF_ENOMEM;
    tprof_rows *t = tprof_result_table(pairs[to], 0);
    long i = tprof_rows_add(t);
    if (i < 0) return TPROF_ENOMEM;
    tprof_rows_set_i(t, (size_t)i, CP_K, (int64_t)k);
    tprof_rows_set_i(t, (size_t)i, CP_REF_END, ref_end);
    tprof_rows_set_i(t, (size_t)i, CP_END, end);
    return 0;
}

static int match_from(tprof_coll_owner *o, const tprof_result *const *routed, size_t nrouted, tprof_result **pairs);

int tprof_coll_match(tprof_coll_owner *o, const tprof_result *const *routed, size_t nrouted, tprof_result **pairs)
{
    for (size_t s = 0; s < nrouted; s++)
        if (tprof_result_desc_of(routed[s]) != &tprof_coll_routed_desc) return TPROF_EUSAGE;
    return match_from(o, routed, nrouted, pairs);
}

/* Matches ROUTED (the ranks' own instances when o->direct). */
static int match_from(tprof_coll_owner *o, const tprof_result *const *routed, size_t nrouted, tprof_result **pairs)
{
    free(o->src);
    if (!(o->src = malloc((nrouted ? nrouted : 1) * sizeof *o->src))) return TPROF_ENOMEM;
    memcpy(o->src, routed, nrouted * sizeof *o->src);
    o->nsrc = nrouted;
    int rc = list_instances(o);
    if (rc) return rc;
    int64_t *dur = malloc((o->nall ? o->nall : 1) * sizeof *dur), *other = malloc((o->nall ? o->nall : 1) * sizeof *other);
    if (!dur || !other) rc = TPROF_ENOMEM;
    inst *all = o->all;
    for (size_t a = 0, b; !rc && a < o->nall; a = b) {
        for (b = a + 1; b < o->nall && all[b].key == all[a].key && all[b].order == all[a].order; b++) {}
        /* one rank twice (a repeated Seq): the first one counts */
        size_t m = 0;
        for (size_t j = a; j < b; j++)
            if (j == a || all[j].k != all[j - 1].k) all[a + m++] = all[j];
        o->unmatched += b - a - m;
        if (m < 2) {
            o->unmatched += m;
            continue;
        }
        o->matched++;
        const char *type = o->keys[all[a].key].type, *group = o->keys[all[a].key].group;
        int together = tprof_collective_ends_together(type);
        int64_t shortest = INT64_MAX, bytes = -1, size = -1;
        size_t lastk = a;
        const char *dtype = "";
        for (size_t j = a; !rc && j < a + m; j++) {
            const inst *x = &all[j];
            dur[j - a] = inst_int(o, x, C_DUR, 0);
            if (dur[j - a] < shortest) shortest = dur[j - a], lastk = j;
            int64_t by = inst_int(o, x, C_BYTES, -1), gs = inst_int(o, x, C_GROUP_SIZE, -1);
            if (by > bytes) bytes = by;
            if (gs > size) size = gs;
            if (!*dtype) dtype = inst_str(o, x, C_DTYPE);
            o->matched_on[x->k]++;
            if (!strcmp(type, "alltoall")) {
                int64_t in = inst_int(o, x, C_IN_BYTES, -1), ob = inst_int(o, x, C_OUT_BYTES, -1);
                if (in >= 0) o->sent[x->k] = tprof_sat_add(o->sent[x->k] < 0 ? 0 : o->sent[x->k], in);
                if (ob >= 0) o->received[x->k] = tprof_sat_add(o->received[x->k] < 0 ? 0 : o->received[x->k], ob);
                tprof_a2a_outcome got;
                rc = tprof_a2a_add(o->a2a, group, o->p->rank_of[x->k], in, gs, inst_str(o, x, C_IN_SPLITS),
                                   inst_str(o, x, C_GROUP_RANKS), &got);
                o->a2a_unread += got == TPROF_A2A_CUT || got == TPROF_A2A_UNEVEN;
            }
        }
        if (rc) break;
        int64_t waited = 0;
        if (together) {
            for (size_t j = a; j < a + m; j++) {
                int64_t w = dur[j - a] - shortest;
                o->wait[all[j].k] = tprof_sat_add(o->wait[all[j].k], w);
                waited = tprof_sat_add(waited, w);
            }
            if (waited > 0) {
                o->last[all[lastk].k]++;
                o->cost[all[lastk].k] = tprof_sat_add(o->cost[all[lastk].k], waited);
                o->with_waits++;
                late_stretch(o, a, m, lastk, &o->why[(size_t)all[lastk].k * LATE_STRIDE], other);
            }
        }
        /* its row: collective, group, dtype, size */
        size_t g = 0;
        while (g < o->ngroups && (strcmp(o->groups[g].type, type) || strcmp(o->groups[g].group, group) ||
                                  strcmp(o->groups[g].dtype, dtype) || o->groups[g].bytes != bytes))
            g++;
        if (g == o->ngroups) {
            if (tprof_grow((void **)&o->groups, &o->groupcap, o->ngroups + 1, sizeof *o->groups)) {
                rc = TPROF_ENOMEM;
                break;
            }
            o->groups[o->ngroups++] = (group_row){ .type = type, .group = group, .dtype = dtype, .bytes = bytes };
        }
        group_row *gr = &o->groups[g];
        if (tprof_grow_items((void **)&gr->transfers, &gr->cap, gr->ntransfers + 1, sizeof *gr->transfers)) {
            rc = TPROF_ENOMEM;
            break;
        }
        gr->transfers[gr->ntransfers++] = shortest;
        gr->count++;
        if (m > gr->ranks) gr->ranks = m;
        if (size > 0 && (uint64_t)size > gr->ranks) gr->ranks = (uint64_t)size; /* the recorded group size */
        gr->transfer = tprof_sat_add(gr->transfer, shortest);
        gr->wait = tprof_sat_add(gr->wait, waited);
        if (tprof_grow_items((void **)&o->mi, &o->micap, o->nmi + 1, sizeof *o->mi)) {
            rc = TPROF_ENOMEM;
            break;
        }
        o->mi[o->nmi++] = (matched_inst){ .a = a, .m = m, .g = g };
        /* the clocks: instances that end together and that the first rank is in */
        if (together && all[a].k == 0) {
            int64_t ref_end = tprof_end_ns(inst_int(o, &all[a], C_START, 0), inst_int(o, &all[a], C_DUR, 0));
            for (size_t j = a + 1; !rc && j < a + m; j++) {
                rc = add_pair(o->p, pairs, all[j].k, ref_end,
                              tprof_end_ns(inst_int(o, &all[j], C_START, 0), inst_int(o, &all[j], C_DUR, 0)));
                o->npairs++;
            }
        }
    }
    free(dur);
    free(other);
    return rc;
}

/* ---- the clocks ---- */

/* A shared collective's end on a rank and on the first rank (ns, their clocks). */
typedef struct {
    int64_t k, ref_end, end;
} clock_pair;

static int cmp_pair(const void *a, const void *b)
{
    const clock_pair *x = a, *y = b;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    if (x->ref_end != y->ref_end) return x->ref_end < y->ref_end ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* A rank's clock against the first rank's: end - ref_end = offset + drift * (ref_end - x0). */
typedef struct {
    int fitted;
    double x0, offset, drift, residual;
} clock_fit;

/* Least squares over P[0..N) (offset alone, the median, below 3 points). */
static clock_fit fit_clock(const clock_pair *p, size_t n)
{
    clock_fit f = { .fitted = n > 0 };
    if (!n) return f;
    double sx = 0, sy = 0;
    for (size_t i = 0; i < n; i++) sx += (double)(p[i].ref_end - p[0].ref_end), sy += (double)(p[i].end - p[i].ref_end);
    double mx = sx / (double)n, my = sy / (double)n, sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double x = (double)(p[i].ref_end - p[0].ref_end) - mx, y = (double)(p[i].end - p[i].ref_end) - my;
        sxx += x * x;
        sxy += x * y;
    }
    f.x0 = (double)p[0].ref_end + mx;
    f.offset = my;
    /* a drift only over a second or more: fitted over milliseconds it is the noise of the ends */
    f.drift = n >= 3 && sxx > 0 && p[n - 1].ref_end - p[0].ref_end >= DRIFT_MIN_SPAN_NS ? sxy / sxx : 0;
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        double x = (double)(p[i].ref_end - p[0].ref_end) - mx, y = (double)(p[i].end - p[i].ref_end);
        double e = y - (f.offset + f.drift * x);
        ss += e * e;
    }
    f.residual = sqrt(ss / (double)n);
    return f;
}

int tprof_coll_fit(const tprof_coll_plan *p, unsigned me, const tprof_result *const *pairs, size_t n,
                   tprof_result **fits)
{
    *fits = NULL;
    size_t total = 0;
    for (size_t s = 0; s < n; s++) {
        if (tprof_result_desc_of(pairs[s]) != &tprof_coll_pairs_desc) return TPROF_EUSAGE;
        total += tprof_rows_count(tprof_result_table_c(pairs[s], 0));
    }
    clock_pair *all = malloc((total ? total : 1) * sizeof *all);
    tprof_result *r = owned(&tprof_coll_fits_desc, me);
    int rc = all && r ? 0 : TPROF_ENOMEM;
    size_t np = 0;
    for (size_t s = 0; !rc && s < n; s++) {
        const tprof_rows *t = tprof_result_table_c(pairs[s], 0);
        for (size_t i = 0; i < tprof_rows_count(t); i++)
            all[np++] = (clock_pair){ coll_int_or(t, i, CP_K, -1), coll_int_or(t, i, CP_REF_END, 0),
                                      coll_int_or(t, i, CP_END, 0) };
    }
    if (!rc && np) qsort(all, np, sizeof *all, cmp_pair);
    tprof_rows *t = rc ? NULL : tprof_result_table(r, 0);
    for (size_t a = 0, b; !rc && a < np; a = b) {
        for (b = a + 1; b < np && all[b].k == all[a].k; b++) {}
        if (all[a].k < 0 || (size_t)all[a].k >= p->n) {
            rc = TPROF_EFORMAT;
            break;
        }
        clock_fit f = fit_clock(all + a, b - a);
        long i = tprof_rows_add(t);
        if (i < 0) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(t, (size_t)i, F_K, all[a].k);
        tprof_rows_set_d(t, (size_t)i, F_X0, f.x0);
        tprof_rows_set_d(t, (size_t)i, F_OFFSET, f.offset);
        tprof_rows_set_d(t, (size_t)i, F_DRIFT, f.drift);
        tprof_rows_set_d(t, (size_t)i, F_RESIDUAL, f.residual);
    }
    free(all);
    if (rc) {
        tprof_result_free(r);
        return rc;
    }
    *fits = r;
    return 0;
}

/* Every rank's clock from FITS[0..N) into F[0..p->n) (the first rank's is
 * its own); whether arrival skew can be trusted, and the worst residual. */
static int clocks_of(const tprof_coll_plan *p, const tprof_result *const *fits, size_t n, clock_fit *f, int *all_fit,
                     double *worst)
{
    for (size_t s = 0; s < n; s++) {
        if (tprof_result_desc_of(fits[s]) != &tprof_coll_fits_desc) return TPROF_EUSAGE;
        const tprof_rows *t = tprof_result_table_c(fits[s], 0);
        for (size_t i = 0; i < tprof_rows_count(t); i++) {
            int64_t k = coll_int_or(t, i, F_K, -1);
            if (k < 0 || (size_t)k >= p->n) return TPROF_EFORMAT;
            f[k] = (clock_fit){ 1, tprof_rows_cell(t, i, F_X0)->v.d, tprof_rows_cell(t, i, F_OFFSET)->v.d,
                                tprof_rows_cell(t, i, F_DRIFT)->v.d, tprof_rows_cell(t, i, F_RESIDUAL)->v.d };
        }
    }
    if (p->n) f[0] = (clock_fit){ .fitted = 1 };
    *worst = 0;
    *all_fit = p->n > 1;
    for (size_t k = 0; k < p->n; k++) {
        *all_fit &= f[k].fitted;
        if (f[k].fitted && f[k].residual > *worst) *worst = f[k].residual;
    }
    return 0;
}

/* T on a rank's clock, on the first rank's. */
static double aligned(const clock_fit *f, int64_t t)
{
    return (double)t - (f->offset + f->drift * ((double)t - f->offset - f->x0));
}

/* The nearest-rank p50 and p90 of V[0..N) (as every across-ranks figure: tprof_dist_of). */
static int percentiles(const int64_t *v, size_t n, int64_t *p50, int64_t *p90)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (!d) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) d[i] = (double)v[i];
    tprof_col_dist dist;
    int rc = tprof_dist_of(d, NULL, n, &dist);
    free(d);
    *p50 = llround(dist.p50);
    *p90 = llround(dist.p90);
    return rc;
}

static int group_rows(const tprof_coll_owner *o, tprof_rows *gt)
{
    for (size_t g = 0; g < o->ngroups; g++) {
        const group_row *gr = &o->groups[g];
        long i = tprof_rows_add(gt);
        if (i < 0 || tprof_rows_set_s(gt, (size_t)i, G_TYPE, gr->type) || tprof_rows_set_s(gt, (size_t)i, G_GROUP, gr->group) ||
            tprof_rows_set_s(gt, (size_t)i, G_DTYPE, gr->dtype))
            return TPROF_ENOMEM;
        int64_t p50, p90;
        if (percentiles(gr->transfers, gr->ntransfers, &p50, &p90)) return TPROF_ENOMEM;
        if (gr->bytes >= 0) tprof_rows_set_i(gt, (size_t)i, G_BYTES, gr->bytes);
        tprof_rows_set_i(gt, (size_t)i, G_RANKS, (int64_t)gr->ranks);
        tprof_rows_set_i(gt, (size_t)i, G_COUNT, (int64_t)gr->count);
        tprof_rows_set_i(gt, (size_t)i, G_TRANSFER, gr->transfer);
        tprof_rows_set_i(gt, (size_t)i, G_TRANSFER_P50, p50);
        tprof_rows_set_i(gt, (size_t)i, G_TRANSFER_P90, p90);
        if (gr->bytes >= 0 && p50 > 0) {
            double algbw = (double)gr->bytes / (double)p50; /* bytes per ns = GB/s */
            tprof_rows_set_d(gt, (size_t)i, G_ALGBW, algbw);
            tprof_rows_set_d(gt, (size_t)i, G_BUSBW, algbw * tprof_bus_factor(gr->type, (int64_t)gr->ranks));
        }
        tprof_rows_set_i(gt, (size_t)i, G_WAIT, gr->wait);
        if (gr->nskews) {
            if (percentiles(gr->skews, gr->nskews, &p50, &p90)) return TPROF_ENOMEM;
            tprof_rows_set_i(gt, (size_t)i, G_SKEW_P50, p50);
            tprof_rows_set_i(gt, (size_t)i, G_SKEW_P90, p90);
        }
    }
    return 0;
}

static void set_counts(tprof_rows *t, size_t row, uint64_t matched, uint64_t unmatched, uint64_t with_waits,
                       int seq_used, int order_used, uint64_t a2a_unread, uint64_t npairs)
{
    tprof_rows_set_i(t, row, M_MATCHED, (int64_t)matched);
    tprof_rows_set_i(t, row, M_UNMATCHED, (int64_t)unmatched);
    tprof_rows_set_i(t, row, M_WITH_WAITS, (int64_t)with_waits);
    tprof_rows_set_i(t, row, M_SEQ_USED, seq_used);
    tprof_rows_set_i(t, row, M_ORDER_USED, order_used);
    tprof_rows_set_i(t, row, M_A2A_UNREAD, (int64_t)a2a_unread);
    tprof_rows_set_i(t, row, M_PAIRS, (int64_t)npairs);
}

int tprof_coll_finish(tprof_coll_owner *o, const tprof_result *const *fits, size_t nfits, tprof_result **partial)
{
    *partial = NULL;
    const tprof_coll_plan *p = o->p;
    clock_fit *f = calloc(p->n ? p->n : 1, sizeof *f);
    double *starts = malloc((o->nall ? o->nall : 1) * sizeof *starts);
    tprof_result *r = tprof_result_new(&tprof_coll_partial_desc);
    int all_fit = 0, rc = f && starts && r ? 0 : TPROF_ENOMEM;
    double worst = 0;
    if (!rc) rc = clocks_of(p, fits, nfits, f, &all_fit, &worst);
    /* the arrival skew where every clock fits */
    int skew_ok = all_fit && worst <= TPROF_COLL_SKEW_MAX_RESIDUAL_NS;
    for (size_t i = 0; !rc && skew_ok && i < o->nmi; i++) {
        const matched_inst *x = &o->mi[i];
        double lo = INFINITY, hi = -INFINITY;
        for (size_t j = x->a; j < x->a + x->m; j++) {
            const inst *y = &o->all[j];
            starts[j - x->a] = aligned(&f[y->k], inst_int(o, y, C_START, 0));
            if (starts[j - x->a] < lo) lo = starts[j - x->a];
            if (starts[j - x->a] > hi) hi = starts[j - x->a];
        }
        for (size_t j = x->a; j < x->a + x->m; j++) {
            o->late[o->all[j].k] += llround(starts[j - x->a] - lo);
            o->late_n[o->all[j].k]++;
        }
        group_row *gr = &o->groups[x->g];
        if (tprof_grow_items((void **)&gr->skews, &gr->skewcap, gr->nskews + 1, sizeof *gr->skews)) rc = TPROF_ENOMEM;
        else gr->skews[gr->nskews++] = llround(hi - lo);
    }
    if (!rc) {
        set_counts(tprof_result_top(r), 0, o->matched, o->unmatched, o->with_waits, o->seq_used, o->order_used,
                   o->a2a_unread, o->npairs);
        rc = group_rows(o, tprof_result_table(r, 0));
    }
    tprof_rows *st = rc ? NULL : tprof_result_table(r, 1);
    for (size_t k = 0; !rc && k < p->n; k++) {
        if (!o->matched_on[k]) continue; /* every sum comes of an instance it is in */
        long i = tprof_rows_add(st);
        if (i < 0) {
            rc = TPROF_ENOMEM;
            break;
        }
        const int64_t *w = &o->why[k * LATE_STRIDE];
        tprof_rows_set_i(st, (size_t)i, S_K, (int64_t)k);
        tprof_rows_set_i(st, (size_t)i, S_MATCHED_ON, (int64_t)o->matched_on[k]);
        tprof_rows_set_i(st, (size_t)i, S_WAIT, o->wait[k]);
        tprof_rows_set_i(st, (size_t)i, S_LAST, (int64_t)o->last[k]);
        tprof_rows_set_i(st, (size_t)i, S_COST, o->cost[k]);
        tprof_rows_set_i(st, (size_t)i, S_LATE, o->late[k]);
        tprof_rows_set_i(st, (size_t)i, S_LATE_N, (int64_t)o->late_n[k]);
        if (o->sent[k] >= 0) tprof_rows_set_i(st, (size_t)i, S_SENT, o->sent[k]);
        if (o->received[k] >= 0) tprof_rows_set_i(st, (size_t)i, S_RECEIVED, o->received[k]);
        for (size_t q = 0; q <= LATE_NPARTS; q++) tprof_rows_set_i(st, (size_t)i, S_WHY_BEFORE + q, w[q]);
    }
    double ignored;
    if (!rc) rc = tprof_a2a_rows(o->a2a, tprof_result_table(r, 2), &ignored);
    free(f);
    free(starts);
    if (rc) {
        tprof_result_free(r);
        return rc;
    }
    *partial = r;
    return 0;
}

/* ---- the partials joined ---- */

/* By transfer time, longest first; then by name, group, dtype, size (none first). */
static int cmp_group_row(const void *a, const void *b, void *rows)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int64_t tx = coll_int_or(rows, x, G_TRANSFER, 0), ty = coll_int_or(rows, y, G_TRANSFER, 0);
    if (tx != ty) return tx > ty ? -1 : 1;
    for (size_t c = G_TYPE; c <= G_DTYPE; c++) {
        int d = strcmp(coll_str(rows, x, c), coll_str(rows, y, c));
        if (d) return d;
    }
    int64_t bx = coll_int_or(rows, x, G_BYTES, -1), by = coll_int_or(rows, y, G_BYTES, -1);
    return bx < by ? -1 : bx > by;
}

int tprof_coll_join(const tprof_coll_plan *p, const tprof_result *const *fits, size_t nfits,
                    const tprof_result *const *partials, size_t n, tprof_result *carrier)
{
    size_t nr = p->n ? p->n : 1;
    int64_t *sum = calloc(nr * S_NCOLS, sizeof *sum);
    clock_fit *f = calloc(nr, sizeof *f);
    tprof_result *groups = tprof_result_new(&tprof_coll_partial_desc);
    tprof_a2a *a2a = tprof_a2a_new();
    size_t *order = NULL;
    int rc = sum && f && groups && a2a ? 0 : TPROF_ENOMEM, all_fit;
    double worst;
    if (!rc) rc = clocks_of(p, fits, nfits, f, &all_fit, &worst);
    for (size_t k = 0; k < nr && sum; k++) sum[k * S_NCOLS + S_SENT] = sum[k * S_NCOLS + S_RECEIVED] = -1;
    uint64_t c[M_NCOLS] = { 0 };
    for (size_t s = 0; !rc && s < n; s++) {
        if (tprof_result_desc_of(partials[s]) != &tprof_coll_partial_desc) {
            rc = TPROF_EUSAGE;
            break;
        }
        const tprof_rows *top = tprof_result_top_c(partials[s]), *st = tprof_result_table_c(partials[s], 1);
        for (size_t m = 0; m < M_NCOLS; m++) {
            int64_t v = coll_int_or(top, 0, m, 0);
            c[m] = m == M_SEQ_USED || m == M_ORDER_USED ? (c[m] || v) : c[m] + (uint64_t)v;
        }
        for (size_t i = 0; i < tprof_rows_count(st); i++) {
            int64_t k = coll_int_or(st, i, S_K, -1);
            if (k < 0 || (size_t)k >= p->n) {
                rc = TPROF_EFORMAT;
                break;
            }
            int64_t *to = &sum[(size_t)k * S_NCOLS];
            for (size_t col = S_MATCHED_ON; col <= S_WHY_N; col++) {
                const tprof_cell *v = tprof_rows_cell(st, i, col);
                if (v->null) continue;
                if (col == S_SENT || col == S_RECEIVED) to[col] = tprof_sat_add(to[col] < 0 ? 0 : to[col], v->v.i);
                else if (col == S_WAIT || col == S_COST) to[col] = tprof_sat_add(to[col], v->v.i);
                else to[col] += v->v.i;
            }
        }
        if (!rc) rc = tprof_rows_append(tprof_result_table(groups, 0), tprof_result_table_c(partials[s], 0));
        if (!rc) rc = tprof_a2a_add_rows(a2a, tprof_result_table_c(partials[s], 2));
    }
    /* the carrier: the counts, the groups by transfer time, every rank's sums and clock, the pairs */
    tprof_rows *mt = tprof_result_table(carrier, IT_MATCH);
    if (!rc && tprof_rows_add(mt) < 0) rc = TPROF_ENOMEM;
    if (!rc)
        set_counts(mt, 0, c[M_MATCHED], c[M_UNMATCHED], c[M_WITH_WAITS], (int)c[M_SEQ_USED], (int)c[M_ORDER_USED],
                   c[M_A2A_UNREAD], c[M_PAIRS]);
    const tprof_rows *gs = groups ? tprof_result_table_c(groups, 0) : NULL;
    size_t ng = tprof_rows_count(gs);
    if (!rc && !(order = malloc((ng ? ng : 1) * sizeof *order))) rc = TPROF_ENOMEM;
    if (!rc) {
        for (size_t i = 0; i < ng; i++) order[i] = i;
        qsort_r(order, ng, sizeof *order, cmp_group_row, (void *)gs);
        tprof_rows *gt = tprof_result_table(carrier, IT_MATCH_GROUPS);
        for (size_t i = 0; !rc && i < ng; i++) {
            long r = tprof_rows_add(gt);
            if (r < 0) rc = TPROF_ENOMEM;
            for (size_t col = 0; !rc && col < G_NCOLS; col++) {
                const tprof_cell *v = tprof_rows_cell(gs, order[i], col);
                if (v->null) continue;
                tprof_col_kind kind = tprof_coll_groups_table.cols[col].kind;
                if (kind == TPROF_COL_STRING) rc = tprof_rows_set_s(gt, (size_t)r, col, v->v.s);
                else if (kind == TPROF_COL_RATE || kind == TPROF_COL_REAL) tprof_rows_set_d(gt, (size_t)r, col, v->v.d);
                else tprof_rows_set_i(gt, (size_t)r, col, v->v.i);
            }
        }
    }
    tprof_rows *st = tprof_result_table(carrier, IT_MATCH_RANKS);
    for (size_t k = 0; !rc && k < p->n; k++) {
        long r = tprof_rows_add(st);
        if (r < 0) {
            rc = TPROF_ENOMEM;
            break;
        }
        const int64_t *v = &sum[k * S_NCOLS];
        tprof_rows_set_i(st, (size_t)r, S_K, (int64_t)k);
        for (size_t col = S_MATCHED_ON; col <= S_WHY_N; col++)
            if (!((col == S_SENT || col == S_RECEIVED) && v[col] < 0)) tprof_rows_set_i(st, (size_t)r, col, v[col]);
        tprof_rows_set_i(st, (size_t)r, S_FITTED, f[k].fitted);
        if (f[k].fitted) {
            tprof_rows_set_d(st, (size_t)r, S_OFFSET, f[k].offset);
            tprof_rows_set_d(st, (size_t)r, S_DRIFT, f[k].drift);
            tprof_rows_set_d(st, (size_t)r, S_RESIDUAL, f[k].residual);
        }
    }
    double ignored;
    if (!rc) rc = tprof_a2a_rows(a2a, tprof_result_table(carrier, IT_MATCH_A2A), &ignored);
    free(sum);
    free(f);
    free(order);
    tprof_result_free(groups);
    tprof_a2a_free(a2a);
    return rc;
}

int tprof_coll_matched(const tprof_result *r)
{
    return tprof_rows_count(tprof_result_table_c(r, IT_MATCH)) > 0;
}

int tprof_coll_header(const tprof_result *r, int whole, tprof_result **out)
{
    *out = tprof_result_new(&tprof_coll_instances_desc);
    if (!*out) return TPROF_ENOMEM;
    const tprof_rows *top = tprof_result_top_c(r);
    const tprof_cell *rank = tprof_rows_cell(top, 0, I_RANK), *file = tprof_rows_cell(top, 0, I_FILE);
    if (!rank->null) tprof_rows_set_i(tprof_result_top(*out), 0, I_RANK, rank->v.i);
    int rc = tprof_rows_append(tprof_result_table(*out, IT_STEPS), tprof_result_table_c(r, IT_STEPS));
    if (whole && !rc && !file->null) rc = tprof_rows_set_s(tprof_result_top(*out), 0, I_FILE, file->v.s);
    for (size_t t = IT_HCCL_TOTALS; whole && !rc && t < IT_NTABLES; t++)
        if (t != IT_INSTANCES) rc = tprof_rows_append(tprof_result_table(*out, t), tprof_result_table_c(r, t));
    if (rc) {
        tprof_result_free(*out);
        *out = NULL;
    }
    return rc;
}

int tprof_coll_match_here(const tprof_result *const *per_rank, size_t n, tprof_result *carrier)
{
    tprof_coll_plan *p = tprof_coll_plan_new(per_rank, n, 1);
    tprof_coll_owner *o = p ? tprof_coll_owner_new(p) : NULL;
    tprof_result *pairs = NULL, *fits = NULL, *partial = NULL;
    int rc = o ? 0 : TPROF_ENOMEM;
    if (o) o->direct = 1; /* the ranks' own rows, read where they are: routing would copy every one */
    if (!rc) rc = match_from(o, per_rank, n, &pairs);
    if (!rc) rc = tprof_coll_fit(p, 0, (const tprof_result *const *)&pairs, pairs ? 1 : 0, &fits);
    if (!rc) rc = tprof_coll_finish(o, (const tprof_result *const *)&fits, 1, &partial);
    if (!rc) rc = tprof_coll_join(p, (const tprof_result *const *)&fits, 1, (const tprof_result *const *)&partial, 1, carrier);
    tprof_result_free(pairs);
    tprof_result_free(fits);
    tprof_result_free(partial);
    tprof_coll_owner_free(o);
    tprof_coll_plan_free(p);
    return rc;
}
