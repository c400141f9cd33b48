/* Results as typed tables (include/trainprof/result.h): the three renderers
 * on a hand-built result, the text form round trip (every kind, nulls,
 * awkward strings, child tables, exact doubles), refusals of broken forms,
 * the across-ranks view against values worked out by hand, sorting, row
 * limits and derived shares, and the JSON shapes a description can ask for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "trainprof/result.h"
#include "unit.h"

static const tprof_col_desc call_cols[] = {
    { .name = "name", .kind = TPROF_COL_STRING, .flags = TPROF_COLF_KEY },
    { .name = "calls", .kind = TPROF_COL_COUNT, .combine = TPROF_COMBINE_SUM },
};
static const tprof_table_desc calls_desc = { .name = "calls", .cols = call_cols, .ncols = 2 };
static const tprof_table_desc *const type_kids[] = { &calls_desc };

static const tprof_col_desc type_cols[] = {
    { .name = "type", .kind = TPROF_COL_ENUM, .flags = TPROF_COLF_KEY, .title = "collective" },
    { .name = "time_ns", .kind = TPROF_COL_DURATION, .combine = TPROF_COMBINE_SUM, .title = "time" },
    { .name = "exposed_ns", .kind = TPROF_COL_DURATION, .combine = TPROF_COMBINE_SUM, .title = "exposed" },
    { .name = "exposed", .kind = TPROF_COL_RATIO, .combine = TPROF_COMBINE_DERIVED, .num = "exposed_ns",
      .den = "time_ns", .title = "exposed %" },
    { .name = "busbw_gbps", .kind = TPROF_COL_RATE, .combine = TPROF_COMBINE_WMEAN, .weight = "time_ns",
      .title = "busbw GB/s" },
};
static const tprof_table_desc types_desc = { .name = "types", .cols = type_cols, .ncols = 5, .children = type_kids,
                                             .nchildren = 1 };

static const tprof_col_desc top_cols[] = {
    { .name = "step_ns", .kind = TPROF_COL_DURATION, .combine = TPROF_COMBINE_DIST, .flags = TPROF_COLF_METRIC },
    { .name = "bytes", .kind = TPROF_COL_BYTES, .combine = TPROF_COMBINE_MAX },
    { .name = "device", .kind = TPROF_COL_STRING, .combine = TPROF_COMBINE_FIRST },
    { .name = "first_ts", .kind = TPROF_COL_TIMESTAMP, .combine = TPROF_COMBINE_MIN },
    { .name = "note", .kind = TPROF_COL_STRING, .combine = TPROF_COMBINE_PER_RANK, .flags = TPROF_COLF_NO_CSV },
    { .name = "ratio", .kind = TPROF_COL_REAL, .combine = TPROF_COMBINE_SUM },
};
static const tprof_table_desc top_desc = { .name = "", .cols = top_cols, .ncols = 6 };
static const tprof_table_desc *const tables[] = { &types_desc };
static const tprof_result_desc desc = { .name = "example", .version = 3, .top = &top_desc, .tables = tables,
                                        .ntables = 1 };

/* One rank's result: STEP ns, and per type (time, exposed, busbw) with calls. */
static tprof_result *make(int64_t step, const char *note, double bw_scale)
{
    tprof_result *r = tprof_result_new(&desc);
    assert_non_null(r);
    tprof_rows *top = tprof_result_top(r);
    tprof_rows_set_i(top, 0, 0, step);
    tprof_rows_set_i(top, 0, 1, step * 2);
    assert_int_equal(tprof_rows_set_s(top, 0, 2, "H100"), 0);
    tprof_rows_set_i(top, 0, 3, 1000 + step);
    if (note) assert_int_equal(tprof_rows_set_s(top, 0, 4, note), 0);
    tprof_rows_set_d(top, 0, 5, 0.1);
    tprof_rows *ty = tprof_result_table(r, 0);
    static const char *const names[] = { "AllReduce", "SendRecv" };
    for (int k = 0; k < 2; k++) {
        long row = tprof_rows_add(ty);
        assert_true(row >= 0);
        assert_int_equal(tprof_rows_set_s(ty, (size_t)row, 0, names[k]), 0);
        tprof_rows_set_i(ty, (size_t)row, 1, step / (k + 1));
        tprof_rows_set_i(ty, (size_t)row, 2, step / (4 * (k + 1)));
        tprof_rows_set_d(ty, (size_t)row, 4, bw_scale * (k + 1));
        tprof_rows *calls = tprof_rows_child(ty, (size_t)row, 0);
        assert_non_null(calls);
        long c = tprof_rows_add(calls);
        assert_int_equal(tprof_rows_set_s(calls, (size_t)c, 0, k ? "send" : "allreduce"), 0);
        tprof_rows_set_i(calls, (size_t)c, 1, 3 + k);
    }
    tprof_result_derive(r);
    return r;
}

static char *render(void (*fn)(const tprof_result *, FILE *), const tprof_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fn(r, f);
    fclose(f);
    return buf;
}

static void json_of(const tprof_result *r, FILE *f)
{
    tprof_jw w;
    tprof_jw_init(&w, f);
    tprof_jw_obj(&w);
    tprof_result_json_members(r, 0, &w);
    tprof_jw_obj_end(&w);
}

static void csv_of(const tprof_result *r, FILE *f)
{
    tprof_rows_csv_header(&top_desc, "trace", f);
    const char *prefix[] = { "rank 0" };
    tprof_rows_csv(tprof_result_top_c(r), prefix, 1, 0, f);
    tprof_rows_csv_header(&types_desc, NULL, f);
    tprof_rows_csv(tprof_result_table_c(r, 0), NULL, 0, 0, f);
}

static void table_of(const tprof_result *r, FILE *f) { tprof_rows_print_table(tprof_result_table_c(r, 0), 0, f); }

static void test_renderers(void **state)
{
    (void)state;
    tprof_result *r = make(4000000, "a \"quoted\", note", 1.5);
    char *j = render(json_of, r);
    assert_string_equal(j, "{\"step_ns\":4000000,\"bytes\":8000000,\"device\":\"H100\",\"first_ts\":4001000,"
                           "\"note\":\"a \\\"quoted\\\", note\",\"ratio\":0.10000000000000001,\"types\":["
                           "{\"type\":\"AllReduce\",\"time_ns\":4000000,\"exposed_ns\":1000000,\"exposed\":0.25,"
                           "\"busbw_gbps\":1.5,\"calls\":[{\"name\":\"allreduce\",\"calls\":3}]},"
                           "{\"type\":\"SendRecv\",\"time_ns\":2000000,\"exposed_ns\":500000,\"exposed\":0.25,"
                           "\"busbw_gbps\":3,\"calls\":[{\"name\":\"send\",\"calls\":4}]}]}\n");
    char *c = render(csv_of, r);
    /* the note is not in CSV; the CSV has raw units */
    assert_string_equal(c, "trace,step_ns,bytes,device,first_ts,ratio\n"
                           "rank 0,4000000,8000000,H100,4001000,0.10000000000000001\n"
                           "type,time_ns,exposed_ns,exposed,busbw_gbps\n"
                           "AllReduce,4000000,1000000,0.25,1.5\n"
                           "SendRecv,2000000,500000,0.25,3\n");
    char *t = render(table_of, r);
    assert_string_equal(t, "collective  time  exposed  exposed %  busbw GB/s\n"
                           "----------  ----  -------  ---------  ----------\n"
                           "AllReduce   4 ms     1 ms      25.0%        1.50\n"
                           "SendRecv    2 ms   500 us      25.0%        3.00\n");
    free(j);
    free(c);
    free(t);
    tprof_result_free(r);
}

static void test_round_trip(void **state)
{
    (void)state;
    tprof_result *r = make(123456789, "tab\there\nnewline \\ back\x01slash", 0.1);
    /* an exact double that %.17g would also keep, and one it writes long */
    tprof_rows_set_d(tprof_result_top(r), 0, 5, 1.0 / 3.0);
    tprof_rows_set_null(tprof_result_top(r), 0, 3);
    char err[200] = "";
    tprof_result *back = unit_result_reread(r, &desc, err, sizeof err);
    assert_non_null(back);
    assert_true(tprof_result_equal(r, back));
    assert_string_equal(tprof_rows_cell(tprof_result_top_c(back), 0, 4)->v.s, "tab\there\nnewline \\ back\x01slash");
    assert_true(tprof_rows_cell(tprof_result_top_c(back), 0, 3)->null);
    /* a changed value is seen */
    tprof_rows_set_d(tprof_result_top(back), 0, 5, nextafter(1.0 / 3.0, 1));
    assert_false(tprof_result_equal(r, back));
    tprof_result_free(back);

    /* refusals: another type or version, a cut form, a cell of the wrong kind */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(tprof_result_write(r, f), 0);
    fclose(f);
    static const tprof_result_desc other = { .name = "example", .version = 4, .top = &top_desc, .tables = tables,
                                             .ntables = 1 };
    f = fmemopen(buf, len, "r");
    assert_int_equal(tprof_result_read(&back, &other, f, err, sizeof err), TPROF_EFORMAT);
    assert_non_null(strstr(err, "version 3"));
    fclose(f);
    f = fmemopen(buf, len / 2, "r");
    assert_int_equal(tprof_result_read(&back, &desc, f, err, sizeof err), TPROF_EFORMAT);
    fclose(f);
    char *bad = strdup(buf);
    char *cell = strstr(bad, "\ti246913578");
    assert_non_null(cell);
    cell[1] = 'd';
    f = fmemopen(bad, strlen(bad), "r");
    assert_int_equal(tprof_result_read(&back, &desc, f, err, sizeof err), TPROF_EFORMAT);
    assert_non_null(strstr(err, "wrong kind"));
    assert_null(back);
    fclose(f);
    free(bad);
    free(buf);
    tprof_result_free(r);
}

static void test_across_ranks(void **state)
{
    (void)state;
    /* five ranks, given out of order; step times 10, 50, 30, 50, 20 ms */
    const int64_t ranks[] = { 4, 0, 3, 1, 2 };
    const int64_t steps[] = { 20, 10, 50, 50, 30 };
    tprof_result *r[5];
    for (int i = 0; i < 5; i++) r[i] = make(steps[i] * 1000000, i == 1 ? "rank 0" : NULL, (double)(i + 1));
    const tprof_result *const *rc = (const tprof_result *const *)r;
    tprof_col_dist d;
    assert_int_equal(tprof_ranks_dist(rc, ranks, 5, 0, &d), 0);
    assert_int_equal(d.n, 5);
    assert_true(d.min == 10e6 && d.min_rank == 0);
    assert_true(d.max == 50e6 && d.max_rank == 1); /* ranks 1 and 3 hold it: the lower */
    assert_true(d.p50 == 30e6);                     /* sorted 10 20 30 50 50: the 3rd */
    assert_true(d.p90 == 50e6);                     /* ceil(4.5) = 5th */
    size_t worst[3];
    assert_int_equal(tprof_ranks_worst(rc, ranks, 5, 3, worst), 3);
    assert_int_equal(ranks[worst[0]], 1);
    assert_int_equal(ranks[worst[1]], 3);
    assert_int_equal(ranks[worst[2]], 2);

    tprof_result *all = tprof_ranks_combine(rc, ranks, 5);
    assert_non_null(all);
    const tprof_rows *top = tprof_result_top_c(all);
    assert_int_equal(tprof_rows_cell(top, 0, 0)->v.i, 30000000); /* DIST: the p50 */
    assert_int_equal(tprof_rows_cell(top, 0, 1)->v.i, 100000000); /* MAX of 2 x step */
    assert_string_equal(tprof_rows_cell(top, 0, 2)->v.s, "H100");
    assert_int_equal(tprof_rows_cell(top, 0, 3)->v.i, 1000 + 10000000); /* MIN */
    assert_true(tprof_rows_cell(top, 0, 4)->null);                       /* per rank only */
    assert_true(fabs(tprof_rows_cell(top, 0, 5)->v.d - 0.5) < 1e-12);   /* SUM of 0.1 x 5 */
    const tprof_rows *ty = tprof_result_table_c(all, 0);
    assert_int_equal(tprof_rows_count(ty), 2);
    assert_string_equal(tprof_rows_cell(ty, 0, 0)->v.s, "AllReduce");
    /* time: sum of steps = 160 ms; exposed: sum of step/4 = 40 ms; exposed derived after: 0.25 */
    assert_int_equal(tprof_rows_cell(ty, 0, 1)->v.i, 160000000);
    assert_int_equal(tprof_rows_cell(ty, 0, 2)->v.i, 40000000);
    assert_true(tprof_rows_cell(ty, 0, 3)->v.d == 0.25);
    /* busbw weighted by time: sum(bw_i * step_i) / sum(step_i), bw_i = i+1 for input i */
    double num = 0, den = 0;
    for (int i = 0; i < 5; i++) {
        num += (double)(i + 1) * (double)steps[i] * 1e6;
        den += (double)steps[i] * 1e6;
    }
    assert_true(fabs(tprof_rows_cell(ty, 0, 4)->v.d - num / den) < 1e-12);
    /* the child table: one "allreduce" row, calls summed 3 x 5 */
    const tprof_rows *calls = tprof_rows_child_c(ty, 0, 0);
    assert_int_equal(tprof_rows_count(calls), 1);
    assert_int_equal(tprof_rows_cell(calls, 0, 1)->v.i, 15);
    /* combining one rank gives that rank's values back */
    tprof_result *one = tprof_ranks_combine(rc, ranks, 1);
    tprof_rows_set_null(tprof_result_top(r[0]), 0, 4);
    assert_true(tprof_result_equal(one, r[0]));
    tprof_result_free(one);

    /* folded one result at a time, in rank order, each freed once added:
     * the same combination (no cell may point into a freed result) */
    tprof_fold *f = tprof_fold_new(&desc);
    assert_non_null(f);
    static const int in_rank_order[] = { 1, 3, 4, 2, 0 }; /* the inputs of ranks 0..4 */
    for (int k = 0; k < 5; k++) {
        int i = in_rank_order[k];
        tprof_result *copy = make(steps[i] * 1000000, i == 1 ? "rank 0" : NULL, (double)(i + 1));
        assert_int_equal(tprof_fold_add(f, copy), 0);
        tprof_result_free(copy);
    }
    assert_int_equal(tprof_fold_count(f), 5);
    tprof_result *folded = NULL;
    assert_int_equal(tprof_fold_end(f, &folded), 0);
    assert_true(tprof_result_equal(folded, all));
    tprof_result_free(folded);
    /* a result of another description is refused, and so is every add after it */
    static const tprof_result_desc other = { .name = "other", .version = 1, .top = &top_desc };
    tprof_result *stranger = tprof_result_new(&other);
    f = tprof_fold_new(&desc);
    assert_int_equal(tprof_fold_add(f, stranger), TPROF_EUSAGE);
    assert_int_equal(tprof_fold_add(f, r[0]), TPROF_EUSAGE);
    assert_int_equal(tprof_fold_end(f, &folded), TPROF_EUSAGE);
    assert_null(folded);
    tprof_result_free(stranger);
    /* nothing added: nothing to combine */
    assert_int_equal(tprof_fold_end(tprof_fold_new(&desc), &folded), TPROF_EUSAGE);
    tprof_result_free(all);
    for (int i = 0; i < 5; i++) tprof_result_free(r[i]);
}

/* The steps result: its JSON keeps the phases as an object keyed by phase,
 * the CSV the steps table with its step number headed "step", and the text
 * form reads back equal; two ranks combine step by step. */
static void test_steps_tables(void **state)
{
    (void)state;
    tprof_step_row rows[2] = { { .number = 3, .ts = 1000, .dur = 500, .gpu_events = 4, .gpu_total_ns = 300,
                                 .gpu_busy_ns = 250, .gpu_end_ns = 1600, .computing_ns = 200, .comm_not_overlapped_ns = 40,
                                 .overlapped_ns = 10, .communication_ns = 50, .free_ns = 160, .stage_ns = 380,
                                 .bubble_ns = 20, .comm_not_overlapped_no_recv_ns = 25, .preparing_ns = 100 },
                               { .number = 4, .ts = 1500, .dur = 700, .gpu_events = 2, .gpu_total_ns = 100,
                                 .gpu_busy_ns = 100, .gpu_end_ns = 2100 } };
    rows[0].phase_cpu_ns[TPROF_PHASE_FORWARD] = 200;
    rows[1].phase_gpu_ns[TPROF_PHASE_BACKWARD] = 90;
    tprof_steps_result r = { .steps = rows, .nsteps = 2, .mean_ns = 600, .p50_ns = 500, .min_ns = 500,
                             .max_ns = 700, .spread = 1.0 / 3.0, .phases_found = 1 };
    tprof_result *res;
    assert_int_equal(tprof_steps_tables(&r, &res), 0);
    char *j = render(json_of, res);
    assert_non_null(strstr(j, "\"steps_count\":2,\"mean_ns\":600,"));
    assert_non_null(strstr(j, "\"spread\":0.33333333333333331,\"phases_found\":true,\"split_recorded\":0,\"cluster_rows\":0,"
                            "\"steps\":[{\"number\":3,"));
    assert_non_null(strstr(j, "\"phases\":{\"data\":{\"cpu_ns\":0,\"gpu_ns\":0},\"forward\":{\"cpu_ns\":200,"));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tprof_rows_csv_header(tprof_steps_desc.tables[0], "trace,file", f);
    const char *prefix[] = { "rank 0", "t.json" };
    tprof_rows_csv(tprof_result_table_c(res, 0), prefix, 2, 0, f);
    fclose(f);
    /* the device split in step_trace_time.csv's column order */
    assert_string_equal(buf, "trace,file,step,ts_ns,dur_ns,gpu_events,gpu_total_ns,gpu_busy_ns,gpu_end_ns,computing_ns,"
                             "comm_not_overlapped_ns,overlapped_ns,communication_ns,free_ns,stage_ns,bubble_ns,"
                             "comm_not_overlapped_exclude_receive_ns,preparing_ns\n"
                             "rank 0,t.json,3,1000,500,4,300,250,1600,200,40,10,50,160,380,20,25,100\n"
                             "rank 0,t.json,4,1500,700,2,100,100,2100,0,0,0,0,0,0,0,0,0\n");
    char err[128] = "";
    tprof_result *back = unit_result_reread(res, &tprof_steps_desc, err, sizeof err);
    assert_non_null(back);
    assert_true(tprof_result_equal(res, back));
    const tprof_result *two[] = { res, back };
    const int64_t ranks[] = { 0, 1 };
    tprof_result *all = tprof_ranks_combine(two, ranks, 2);
    assert_non_null(all);
    const tprof_rows *st = tprof_result_table_c(all, 0);
    assert_int_equal(tprof_rows_count(st), 2);
    assert_int_equal(tprof_rows_cell(st, 1, 3)->v.i, 4); /* gpu_events of step 4 summed */
    assert_int_equal(tprof_rows_cell(tprof_rows_child_c(st, 0, 0), 1, 1)->v.i, 400); /* forward CPU, summed */
    tprof_result_free(all);
    tprof_result_free(back);
    free(buf);
    free(j);
    tprof_result_free(res);
}


/* A ranking: shares of the top table's total, a mean duration, a column
 * left out of JSON when null, rows sorted and limited. */
static const tprof_col_desc rank_cols[] = {
    { .name = "name", .kind = TPROF_COL_STRING, .flags = TPROF_COLF_KEY },
    { .name = "count", .kind = TPROF_COL_COUNT, .combine = TPROF_COMBINE_SUM },
    { .name = "total_ns", .kind = TPROF_COL_DURATION, .combine = TPROF_COMBINE_SUM },
    { .name = "mean_ns", .kind = TPROF_COL_MEAN_NS, .combine = TPROF_COMBINE_DERIVED, .num = "total_ns", .den = "count" },
    { .name = "share", .kind = TPROF_COL_RATIO, .combine = TPROF_COMBINE_DERIVED, .num = "total_ns",
      .den = "top.all_ns" },
    { .name = "stream", .kind = TPROF_COL_INT, .combine = TPROF_COMBINE_FIRST, .flags = TPROF_COLF_OMIT_NULL },
};
static const tprof_table_desc rank_rows = { .name = "rows", .cols = rank_cols, .ncols = 6, .limited = 1 };
static const tprof_col_desc rank_top_cols[] = {
    { .name = "all_ns", .kind = TPROF_COL_DURATION, .combine = TPROF_COMBINE_SUM },
};
static const tprof_table_desc rank_top = { .name = "", .cols = rank_top_cols, .ncols = 1 };
static const tprof_table_desc *const rank_tables[] = { &rank_rows };
static const tprof_result_desc rank_desc = { .name = "ranking", .version = 1, .top = &rank_top,
                                             .tables = rank_tables, .ntables = 1 };

static void ranking_json(const tprof_result *r, FILE *f)
{
    tprof_jw w;
    tprof_jw_init(&w, f);
    tprof_jw_obj(&w);
    tprof_result_json_members(r, 2, &w);
    tprof_jw_obj_end(&w);
}

static void ranking_table(const tprof_result *r, FILE *f) { tprof_rows_print_table(tprof_result_table_c(r, 0), 2, f); }

static void test_sort_limit_shares(void **state)
{
    (void)state;
    tprof_result *r = tprof_result_new(&rank_desc);
    assert_non_null(r);
    tprof_rows_set_i(tprof_result_top(r), 0, 0, 1000);
    tprof_rows *t = tprof_result_table(r, 0);
    static const char *const names[] = { "b", "a", "c", "d" };
    static const int64_t totals[] = { 300, 300, 100, 300 };
    for (int i = 0; i < 4; i++) {
        long k = tprof_rows_add(t);
        assert_int_equal(tprof_rows_set_s(t, (size_t)k, 0, names[i]), 0);
        tprof_rows_set_i(t, (size_t)k, 1, 3);
        tprof_rows_set_i(t, (size_t)k, 2, totals[i]);
        if (i == 0) tprof_rows_set_i(t, (size_t)k, 5, 7);
    }
    tprof_result_derive(r);
    /* by total, longest first, then by name: a, b, d, c */
    static const int cols[] = { 2, 0 }, desc_[] = { 1, 0 };
    assert_int_equal(tprof_rows_sort(t, cols, desc_, 2), 0);
    static const char *const want[] = { "a", "b", "d", "c" };
    for (int i = 0; i < 4; i++) assert_string_equal(tprof_rows_cell(t, (size_t)i, 0)->v.s, want[i]);
    /* cells by name: 0, NAN or NULL when null or absent */
    assert_int_equal(tprof_rows_int(t, 1, "stream"), 7);
    assert_int_equal(tprof_rows_int(t, 0, "stream"), 0);
    assert_string_equal(tprof_rows_str(t, 0, "name"), "a");
    assert_null(tprof_rows_at(t, 0, "no_such_column"));
    assert_null(tprof_rows_at(t, 9, "name"));
    assert_true(isnan(tprof_rows_real(t, 9, "share")));
    assert_true(fabs(tprof_rows_real(t, 0, "share") - 0.3) < 1e-12);
    static const int bad_col[] = { 9 };
    assert_int_equal(tprof_rows_sort(t, bad_col, desc_, 1), TPROF_EUSAGE);
    char *j = render(ranking_json, r);
    /* two rows of the limited table; "stream" only where it is set */
    assert_string_equal(j, "{\"all_ns\":1000,\"rows\":["
                           "{\"name\":\"a\",\"count\":3,\"total_ns\":300,\"mean_ns\":100,\"share\":0.29999999999999999},"
                           "{\"name\":\"b\",\"count\":3,\"total_ns\":300,\"mean_ns\":100,\"share\":0.29999999999999999,"
                           "\"stream\":7}]}\n");
    char *tt = render(ranking_table, r);
    assert_string_equal(tt, "name  count  total_ns  mean_ns  share  stream\n"
                            "----  -----  --------  -------  -----  ------\n"
                            "a         3    300 ns   100 ns  30.0%       -\n"
                            "b         3    300 ns   100 ns  30.0%       7\n");
    /* shares of the combined total after combining two ranks */
    const tprof_result *two[] = { r, r };
    tprof_result *all = tprof_ranks_combine(two, NULL, 2);
    assert_non_null(all);
    assert_int_equal(tprof_rows_cell(tprof_result_top_c(all), 0, 0)->v.i, 2000);
    const tprof_rows *at = tprof_result_table_c(all, 0);
    assert_true(fabs(tprof_rows_cell(at, 0, 4)->v.d - 0.3) < 1e-12);
    assert_true(fabs(tprof_rows_cell(at, 0, 3)->v.d - 100.0) < 1e-12);
    free(j);
    free(tt);
    tprof_result_free(all);
    tprof_result_free(r);
}

/* The JSON shapes a description can ask for: a single row as an object (and
 * null without one), an object of values keyed by a column, a table placed
 * after a given column, a long-form table written wide, whole doubles as
 * integers, non-finite values named; CSV's shortest exact numbers; rows
 * copied between results. */
static const tprof_col_desc shape_top_cols[] = {
    { .name = "tokens", .kind = TPROF_COL_REAL, .flags = TPROF_COLF_WHOLE },
    { .name = "odd", .kind = TPROF_COL_REAL, .flags = TPROF_COLF_NAN_NAMED },
    { .name = "last", .kind = TPROF_COL_INT },
};
static const tprof_col_desc shape_kv_cols[] = {
    { .name = "kind", .kind = TPROF_COL_ENUM, .flags = TPROF_COLF_KEY },
    { .name = "count", .kind = TPROF_COL_COUNT },
};
static const tprof_col_desc shape_single_cols[] = { { .name = "x", .kind = TPROF_COL_INT } };
static const tprof_col_desc shape_long_cols[] = {
    { .name = "step", .kind = TPROF_COL_INT, .flags = TPROF_COLF_KEY },
    { .name = "metric", .kind = TPROF_COL_STRING },
    { .name = "value", .kind = TPROF_COL_REAL, .flags = TPROF_COLF_SHORTEST },
};
static const tprof_table_desc shape_kv = { .name = "kinds", .cols = shape_kv_cols, .ncols = 2, .json_keyed = 1,
                                           .json_keyed_value = 1, .json_after = "tokens" };
static const tprof_table_desc shape_single = { .name = "one", .cols = shape_single_cols, .ncols = 1,
                                               .json_single = 1 };
static const tprof_table_desc shape_none = { .name = "none", .cols = shape_single_cols, .ncols = 1,
                                             .json_single = 1, .json_omit_empty = 1 };
static const tprof_table_desc shape_long = { .name = "series", .cols = shape_long_cols, .ncols = 3, .json_wide = 1 };
static const tprof_table_desc shape_top = { .name = "", .cols = shape_top_cols, .ncols = 3 };
static const tprof_table_desc *const shape_tables[] = { &shape_kv, &shape_single, &shape_none, &shape_long };
static const tprof_result_desc shape_desc = { .name = "shapes", .version = 1, .top = &shape_top,
                                              .tables = shape_tables, .ntables = 4 };

static void shapes_json(const tprof_result *r, FILE *f)
{
    tprof_jw w;
    tprof_jw_init(&w, f);
    tprof_jw_obj(&w);
    tprof_result_json_members(r, 0, &w);
    tprof_jw_obj_end(&w);
}

static void shapes_csv(const tprof_result *r, FILE *f) { tprof_rows_csv(tprof_result_table_c(r, 3), NULL, 0, 0, f); }

static void test_json_shapes(void **state)
{
    (void)state;
    tprof_result *r = tprof_result_new(&shape_desc);
    assert_non_null(r);
    tprof_rows *top = tprof_result_top(r);
    tprof_rows_set_d(top, 0, 0, 8192.0);
    tprof_rows_set_d(top, 0, 1, NAN);
    tprof_rows_set_i(top, 0, 2, 7);
    tprof_rows *kv = tprof_result_table(r, 0);
    static const char *const kinds[] = { "cpu_op", "kernel" };
    for (int i = 0; i < 2; i++) {
        long k = tprof_rows_add(kv);
        assert_int_equal(tprof_rows_set_s(kv, (size_t)k, 0, kinds[i]), 0);
        tprof_rows_set_i(kv, (size_t)k, 1, 10 * (i + 1));
    }
    tprof_rows *one = tprof_result_table(r, 1);
    assert_int_equal(tprof_rows_add(one), 0);
    tprof_rows_set_i(one, 0, 0, 5);
    tprof_rows *se = tprof_result_table(r, 3);
    const struct {
        int64_t step;
        const char *metric;
        double v;
    } pts[] = { { 1, "loss", 2.5 }, { 1, "mfu", 0.1 }, { 2, "loss", 2.25 } };
    for (size_t i = 0; i < 3; i++) {
        long k = tprof_rows_add(se);
        assert_int_equal(tprof_rows_set_s(se, (size_t)k, 1, pts[i].metric), 0);
        tprof_rows_set_i(se, (size_t)k, 0, pts[i].step);
        tprof_rows_set_d(se, (size_t)k, 2, pts[i].v);
    }
    char *j = render(shapes_json, r);
    assert_string_equal(j, "{\"tokens\":8192,\"kinds\":{\"cpu_op\":10,\"kernel\":20},\"odd\":\"nan\",\"last\":7,"
                           "\"one\":{\"x\":5},\"series\":[{\"step\":1,\"loss\":2.5,\"mfu\":0.10000000000000001},"
                           "{\"step\":2,\"loss\":2.25}]}\n");
    char *c = render(shapes_csv, r);
    assert_string_equal(c, "1,loss,2.5\n1,mfu,0.1\n2,loss,2.25\n");
    /* a copy of the series into another result of the same columns */
    tprof_result *copy = tprof_result_new(&shape_desc);
    assert_non_null(copy);
    assert_int_equal(tprof_rows_append(tprof_result_table(copy, 3), se), 0);
    assert_int_equal(tprof_rows_count(tprof_result_table_c(copy, 3)), 3);
    assert_string_equal(tprof_rows_cell(tprof_result_table_c(copy, 3), 1, 1)->v.s, "mfu");
    assert_int_equal(tprof_rows_append(tprof_result_table(copy, 0), se), TPROF_EUSAGE);
    /* an empty result: the single row is null, the optional one left out */
    free(j);
    tprof_result_free(r);
    r = tprof_result_new(&shape_desc);
    j = render(shapes_json, r);
    assert_string_equal(j, "{\"tokens\":null,\"kinds\":{},\"odd\":null,\"last\":null,\"one\":null,\"series\":[]}\n");
    free(j);
    free(c);
    tprof_result_free(r);
    tprof_result_free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_renderers),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_across_ranks),
        cmocka_unit_test(test_steps_tables),
        cmocka_unit_test(test_sort_limit_shares),
        cmocka_unit_test(test_json_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
