/* Collectives matched across ranks (include/trainprof/analysis.h): a small
 * run of three ranks whose waits, costs and straggler are worked out by
 * hand, and the matching spread by process group over 1..6 owners (as
 * trainprof-mpi spreads it, every step's output passed through its bytes)
 * giving the one owner's result exactly, on generated ranks with every kind
 * of group: by Seq and by order, GPU and CPU instances, all-to-alls with
 * split sizes, drifting clocks, steps some ranks lack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "trainprof/result.h"
#include "unit.h"

/* A rank's instances, built through the columns' names. */
static tprof_result *new_rank(int64_t rank, const int64_t *steps, size_t nsteps)
{
    tprof_result *r = tprof_result_new(&tprof_coll_instances_desc);
    assert_non_null(r);
    if (rank >= 0) tprof_rows_set_i(tprof_result_top(r), 0, 0, rank);
    tprof_rows *s = tprof_result_table(r, 1);
    for (size_t i = 0; i < nsteps; i++) {
        long k = tprof_rows_add(s);
        assert_true(k >= 0);
        tprof_rows_set_i(s, (size_t)k, 0, steps[i]);
    }
    return r;
}

static void set_int(tprof_rows *t, size_t row, const char *col, int64_t v)
{
    int c = tprof_table_col(tprof_rows_desc(t), col);
    assert_true(c >= 0);
    tprof_rows_set_i(t, row, (size_t)c, v);
}

static void set_str(tprof_rows *t, size_t row, const char *col, const char *v)
{
    int c = tprof_table_col(tprof_rows_desc(t), col);
    assert_true(c >= 0);
    assert_int_equal(tprof_rows_set_s(t, row, (size_t)c, v), 0);
}

/* One instance; SEQ < 0: none recorded. */
static size_t add_inst(tprof_result *r, const char *group, int64_t seq, const char *type, int64_t start, int64_t dur,
                       int64_t kernels, int64_t step)
{
    tprof_rows *t = tprof_result_table(r, 0);
    long i = tprof_rows_add(t);
    assert_true(i >= 0);
    set_str(t, (size_t)i, "group", group);
    if (seq >= 0) set_int(t, (size_t)i, "seq", seq);
    set_str(t, (size_t)i, "type", type);
    set_str(t, (size_t)i, "name", type);
    set_str(t, (size_t)i, "dtype", "BFloat16");
    set_str(t, (size_t)i, "in_splits", "");
    set_str(t, (size_t)i, "group_ranks", "");
    set_int(t, (size_t)i, "start_ns", start);
    set_int(t, (size_t)i, "dur_ns", dur);
    set_int(t, (size_t)i, "kernels", kernels);
    if (step >= 0) set_int(t, (size_t)i, "step", step);
    return (size_t)i;
}

static const tprof_rows *table_named(const tprof_result *r, const char *name)
{
    const tprof_result_desc *d = tprof_result_desc_of(r);
    for (size_t i = 0; i < d->ntables; i++)
        if (!strcmp(d->tables[i]->name, name)) return tprof_result_table_c(r, i);
    fail_msg("no table %s", name);
    return NULL;
}

/* Three ranks, one allreduce group matched by order over two steps: rank 2
 * arrives last in both (its durations the shortest). Waits by hand: step 1
 * durations 500, 400, 100 -> waits 400, 300, 0 (cost to rank 2: 700);
 * step 2 durations 300, 350, 50 -> 250, 300, 0 (cost 550). */
static void test_by_hand(void **state)
{
    (void)state;
    int64_t steps[] = { 1, 2 };
    tprof_result *r[3];
    int64_t durs[3][2] = { { 500, 300 }, { 400, 350 }, { 100, 50 } };
    for (int k = 0; k < 3; k++) {
        r[k] = new_rank(k, steps, 2);
        add_inst(r[k], "dp", -1, "allreduce", 1000, durs[k][0], 1, 1);
        add_inst(r[k], "dp", -1, "allreduce", 5000, durs[k][1], 1, 2);
    }
    tprof_result *out;
    assert_int_equal(tprof_collectives_reduce((const tprof_result *const *)r, 3, &out), 0);
    const tprof_rows *top = tprof_result_top_c(out), *ranks = table_named(out, "ranks");
    assert_int_equal(tprof_rows_int(top, 0, "matched"), 2);
    assert_string_equal(tprof_rows_str(top, 0, "matching"), "order");
    assert_int_equal(tprof_rows_int(top, 0, "straggler"), 2);
    assert_int_equal(tprof_rows_int(top, 0, "straggler_cost_ns"), 1250);
    int64_t wait[3] = { 650, 600, 0 }, cost[3] = { 0, 0, 1250 };
    for (size_t k = 0; k < 3; k++) {
        assert_int_equal(tprof_rows_int(ranks, k, "wait_ns"), wait[k]);
        assert_int_equal(tprof_rows_int(ranks, k, "wait_per_step_ns"), wait[k] / 2);
        assert_int_equal(tprof_rows_int(ranks, k, "cost_ns"), cost[k]);
    }
    const tprof_rows *groups = table_named(out, "collectives");
    assert_int_equal(tprof_rows_count(groups), 1);
    assert_int_equal(tprof_rows_int(groups, 0, "transfer_ns"), 150); /* the shortest durations: 100 + 50 */
    tprof_result_free(out);
    for (int k = 0; k < 3; k++) tprof_result_free(r[k]);
}

/* R through its bytes, as trainprof-mpi moves it. */
static tprof_result *through_bytes(const tprof_result *r)
{
    char *buf = NULL, err[256];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(tprof_result_write(r, f), 0);
    fclose(f);
    f = fmemopen(buf, len, "r");
    assert_non_null(f);
    tprof_result *back = NULL;
    assert_int_equal(tprof_result_read(&back, tprof_result_desc_of(r), f, err, sizeof err), 0);
    fclose(f);
    free(buf);
    return back;
}

static uint64_t rng_state = 88172645463325252ull;
static int64_t rnd(int64_t n)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (int64_t)(rng_state % (uint64_t)n);
}

#define NR 9
/* Nine ranks (given out of rank order, rank 5 without a rank number):
 * "dp" allreduces over all by Seq on GPU; "tp0"/"tp1" allgathers over
 * halves by order; "ep" all-to-alls with split sizes; "pp" sendrecvs; a
 * CPU-only barrier group; clocks offset and drifting; one rank without step
 * 4, so step 4's instances are left out. */
static void make_ranks(tprof_result **r)
{
    char splits[128], members[128];
    for (int k = 0; k < NR; k++) {
        int64_t steps[] = { 1, 2, 3, 4 };
        int rank = (k * 4) % NR; /* out of order */
        r[k] = new_rank(rank == 5 ? -1 : rank, steps, rank == 3 ? 3 : 4);
        int64_t offset = rank * 7919, drift_ppm = rank % 3;
        for (int64_t step = 1; step <= 4; step++) {
            int64_t at = step * 2000000000LL;
            for (int64_t j = 0; j < 6; j++) {
                int64_t t = at + j * 1000000 + rnd(20000);
                int64_t clock = t + offset + t / 1000000 * drift_ppm;
                add_inst(r[k], "dp", (step - 1) * 6 + j, "allreduce", clock, 30000 + rnd(50000), 1 + (j & 1), step);
            }
            const char *tp = rank < 5 ? "tp0" : "tp1";
            for (int j = 0; j < 3; j++)
                add_inst(r[k], tp, -1, "allgather", at + 500000 + offset + rnd(9000), 8000 + rnd(9000), 1, step);
            size_t i = add_inst(r[k], "ep", step, "alltoall", at + 900000 + offset, 20000 + rnd(5000), 1, step);
            tprof_rows *t = tprof_result_table(r[k], 0);
            int64_t rows[NR], total = 0;
            for (int d = 0; d < NR; d++) total += rows[d] = 1 + rnd(8);
            int n = snprintf(splits, sizeof splits, "[");
            int m = snprintf(members, sizeof members, "[");
            for (int d = 0; d < NR; d++) {
                n += snprintf(splits + n, sizeof splits - (size_t)n, "%s%lld", d ? ", " : "", (long long)rows[d]);
                m += snprintf(members + m, sizeof members - (size_t)m, "%s%d", d ? ", " : "", d);
            }
            snprintf(splits + n, sizeof splits - (size_t)n, "]");
            snprintf(members + m, sizeof members - (size_t)m, "]");
            set_str(t, i, "in_splits", step == 2 && rank == 1 ? "[1, 2, ...]" : splits);
            set_str(t, i, "group_ranks", members);
            set_int(t, i, "in_bytes", total * 4096);
            set_int(t, i, "out_bytes", total * 2048 + rank);
            set_int(t, i, "group_size", NR);
            set_int(t, i, "bytes", total * 4096);
            add_inst(r[k], "pp", -1, "sendrecv", at + 1200000 + offset, 4000 + rnd(3000), 1, step);
            size_t b = add_inst(r[k], "cpu", -1, "barrier", at + 1500000 + offset, 1000 + rnd(90000), 0, step);
            set_int(t, b, "before_ns", rnd(1000000));
            set_int(t, b, "before_host_ns", rnd(500000));
            set_int(t, b, "before_compute_ns", rnd(400000));
            set_int(t, b, "before_data_ns", rnd(300000));
        }
    }
}

/* The matching spread over OWNERS, each step's output through its bytes,
 * joined onto a copy of the first rank's instances. */
static tprof_result *spread(tprof_result **r, size_t n, unsigned owners)
{
    tprof_result *head[NR];
    for (size_t i = 0; i < n; i++) assert_int_equal(tprof_coll_header(r[i], 0, &head[i]), 0);
    tprof_coll_plan *p = tprof_coll_plan_new((const tprof_result *const *)head, n, owners);
    assert_non_null(p);
    tprof_result *routed[8][NR] = { { 0 } }, *pairs[8][8] = { { 0 } }, *fits[8] = { 0 }, *partial[8] = { 0 };
    tprof_coll_owner *o[8];
    for (size_t i = 0; i < n; i++) { /* each input routes its instances */
        tprof_result *to[8] = { 0 };
        assert_int_equal(tprof_coll_route(p, i, r[i], to), 0);
        for (unsigned w = 0; w < owners; w++) routed[w][i] = to[w] ? through_bytes(to[w]) : NULL;
        for (unsigned w = 0; w < owners; w++) tprof_result_free(to[w]);
    }
    for (unsigned w = 0; w < owners; w++) {
        const tprof_result *mine[NR];
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (routed[w][i]) mine[m++] = routed[w][i];
        assert_non_null(o[w] = tprof_coll_owner_new(p));
        tprof_result *to[8] = { 0 };
        assert_int_equal(tprof_coll_match(o[w], mine, m, to), 0);
        for (unsigned v = 0; v < owners; v++) pairs[v][w] = to[v] ? through_bytes(to[v]) : NULL;
        for (unsigned v = 0; v < owners; v++) tprof_result_free(to[v]);
    }
    for (unsigned w = 0; w < owners; w++) {
        const tprof_result *mine[8];
        size_t m = 0;
        for (unsigned v = 0; v < owners; v++)
            if (pairs[w][v]) mine[m++] = pairs[w][v];
        tprof_result *f;
        assert_int_equal(tprof_coll_fit(p, w, mine, m, &f), 0);
        fits[w] = through_bytes(f);
        tprof_result_free(f);
    }
    for (unsigned w = 0; w < owners; w++) {
        tprof_result *part;
        assert_int_equal(tprof_coll_finish(o[w], (const tprof_result *const *)fits, owners, &part), 0);
        partial[w] = through_bytes(part);
        tprof_result_free(part);
    }
    size_t first = 0;
    while (tprof_coll_plan_place(p, first) != 0) first++;
    tprof_result *carrier, *copy[NR];
    assert_int_equal(tprof_coll_header(r[first], 1, &carrier), 0); /* as the root gets it: without its rows */
    assert_int_equal(tprof_coll_join(p, (const tprof_result *const *)fits, owners,
                                     (const tprof_result *const *)partial, owners, carrier),
                     0);
    assert_true(tprof_coll_matched(carrier));
    /* the others' instances as the root gets them: without their rows */
    for (size_t i = 0; i < n; i++)
        if (i != first) assert_int_equal(tprof_coll_header(r[i], 1, &copy[i]), 0);
    copy[first] = through_bytes(carrier);
    tprof_result *out;
    assert_int_equal(tprof_collectives_reduce((const tprof_result *const *)copy, n, &out), 0);
    for (size_t i = 0; i < n; i++) tprof_result_free(copy[i]);
    tprof_result_free(carrier);
    for (unsigned w = 0; w < owners; w++) {
        for (size_t i = 0; i < n; i++) tprof_result_free(routed[w][i]);
        for (unsigned v = 0; v < owners; v++) tprof_result_free(pairs[w][v]);
        tprof_result_free(fits[w]);
        tprof_result_free(partial[w]);
        tprof_coll_owner_free(o[w]);
    }
    for (size_t i = 0; i < n; i++) tprof_result_free(head[i]);
    tprof_coll_plan_free(p);
    return out;
}

static void test_spread_is_one_owner(void **state)
{
    (void)state;
    tprof_result *r[NR];
    make_ranks(r);
    tprof_result *one;
    assert_int_equal(tprof_collectives_reduce((const tprof_result *const *)r, NR, &one), 0);
    const tprof_rows *top = tprof_result_top_c(one);
    /* the run exercises what it should: both matchings, pairs, skew, a cut split list */
    assert_string_equal(tprof_rows_str(top, 0, "matching"), "both");
    assert_int_equal(tprof_rows_int(top, 0, "common_steps"), 3);
    assert_true(tprof_rows_int(top, 0, "skew_computed"));
    assert_int_equal(tprof_rows_int(top, 0, "alltoall_splits_unread"), 1);
    assert_true(tprof_rows_count(table_named(one, "alltoall_pairs")) > 0);
    assert_true(!tprof_rows_at(top, 0, "straggler")->null);
    for (unsigned owners = 1; owners <= 6; owners++) {
        tprof_result *out = spread(r, NR, owners);
        if (!tprof_result_equal(one, out)) fail_msg("%u owners: not the one owner's result", owners);
        tprof_result_free(out);
    }
    tprof_result_free(one);
    for (int k = 0; k < NR; k++) tprof_result_free(r[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_spread_is_one_owner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
