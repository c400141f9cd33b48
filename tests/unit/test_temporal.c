/* tprof_temporal on small hand-made traces; expectations worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "unit.h"

static tprof_trace *read_doc(const char *doc)
{
    tprof_read_opts o = { .keep = TPROF_TEMPORAL_KEEP, .threads = 1 };
    tprof_trace *t = NULL;
    char err[512];
    assert_int_equal(tprof_trace_read_mem(&t, doc, strlen(doc), "t", &o, err, sizeof err), 0);
    return t;
}

/* kernel K on stream S from ts (us) for dur (us), launched with correlation C */
#define K(name, s, ts, dur, c)                                                                                  \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":" #s ",\"ts\":" #ts ",\"dur\":" #dur \
    ",\"args\":{\"device\":0,\"stream\":" #s ",\"correlation\":" #c "}}"
#define L(ts, c) "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":" #ts ",\"dur\":1,\"args\":{\"correlation\":" #c "}}"
#define STEP(n, ts, dur) "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#" #n "\",\"pid\":1,\"tid\":1,\"ts\":" #ts ",\"dur\":" #dur "}"

static void test_overlap(void **state)
{
    (void)state;
    /* compute 100..200 and 300..400 (stream 7); nccl 150..350 (stream 9); memcpy 500..510; sync ignored.
     * span 100..510 = 410 us; busy = 100..400 (300) + 500..510 (10) = 310; idle 100;
     * compute 200; non-compute 110 */
    const char *doc = "{\"traceEvents\":[" K("gemm", 7, 100, 100, 1) "," K("gemm", 7, 300, 100, 2) ","
                      K("ncclDevKernel_AllReduce", 9, 150, 200, 3) ","
                      "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\",\"pid\":0,"
                      "\"tid\":7,\"ts\":500,\"dur\":10,\"args\":{\"device\":0,\"stream\":7}},"
                      "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Sync\",\"pid\":0,\"tid\":7,\"ts\":600,"
                      "\"dur\":50,\"args\":{\"device\":0,\"stream\":7}}]}";
    tprof_trace *t = read_doc(doc);
    tprof_temporal_result r;
    assert_int_equal(tprof_temporal(t, NULL, &r), 0);
    assert_int_equal(r.events, 4);
    assert_int_equal(r.span_ns, 410000);
    assert_int_equal(r.busy_ns, 310000);
    assert_int_equal(r.idle_ns, 100000);
    assert_int_equal(r.compute_ns, 200000);
    assert_int_equal(r.non_compute_ns, 110000);
    assert_int_equal(r.last_step_excluded, 0);
    tprof_trace_free(t);
}

static void test_last_step_by_launch(void **state)
{
    (void)state;
    /* steps 1 (0..1000) and 2 (1000..2000). Kernel 1 launched at 900 in step 1 runs 1100..1200:
     * kept. Kernel 2 launched at 1500 runs 1600..1700: left out. Kernel 3 (no launch record)
     * starts at 500: kept. span 500..1200 = 700; busy 100 + 100 = 200. */
    const char *doc = "{\"traceEvents\":[" STEP(1, 0, 1000) "," STEP(2, 1000, 1000) "," L(900, 1) "," L(1500, 2) ","
                      K("gemm", 7, 1100, 100, 1) "," K("gemm", 7, 1600, 100, 2) "," K("gemm", 7, 500, 100, 99) "]}";
    tprof_trace *t = read_doc(doc);
    tprof_temporal_result r;
    assert_int_equal(tprof_temporal(t, NULL, &r), 0);
    assert_int_equal(r.last_step_excluded, 1);
    assert_int_equal(r.last_step, 2);
    assert_int_equal(r.events, 2);
    assert_int_equal(r.span_ns, 700000);
    assert_int_equal(r.busy_ns, 200000);
    tprof_temporal_opts keep = { .keep_last_step = 1 };
    assert_int_equal(tprof_temporal(t, &keep, &r), 0);
    assert_int_equal(r.events, 3);
    assert_int_equal(r.span_ns, 1200000);
    assert_int_equal(r.last_step_excluded, 0);
    tprof_trace_free(t);
}

static void test_no_gpu(void **state)
{
    (void)state;
    tprof_trace *t = read_doc("{\"traceEvents\":[" STEP(1, 0, 10) "]}");
    tprof_temporal_result r;
    assert_int_equal(tprof_temporal(t, NULL, &r), 0);
    assert_int_equal(r.events, 0);
    assert_int_equal(r.span_ns, 0);
    assert_int_equal(r.idle_ns, 0);
    tprof_trace_free(t);
}

/* The temporal result as tables: the values land in their columns, the
 * text form reads back equal, and two ranks combine by the column rules
 * with the shares derived after. */
static void test_result_tables(void **state)
{
    (void)state;
    tprof_temporal_result a = { .events = 10, .span_ns = 1000, .busy_ns = 600, .idle_ns = 400, .compute_ns = 500,
                                .non_compute_ns = 100, .last_step_excluded = 1, .last_step = 7 };
    tprof_temporal_result b = { .events = 30, .span_ns = 3000, .busy_ns = 2900, .idle_ns = 100, .compute_ns = 2000,
                                .non_compute_ns = 900 };
    tprof_result *ra, *rb;
    assert_int_equal(tprof_temporal_tables(&a, TPROF_DEFINITION_TRAINPROF, &ra), 0);
    assert_int_equal(tprof_temporal_tables(&b, TPROF_DEFINITION_TRAINPROF, &rb), 0);
    const tprof_rows *top = tprof_result_top_c(ra);
    const tprof_table_desc *d = tprof_rows_desc(top);
    assert_int_equal(tprof_rows_cell(top, 0, (size_t)tprof_table_col(d, "idle_ns"))->v.i, 400);
    assert_true(tprof_rows_cell(top, 0, (size_t)tprof_table_col(d, "idle_share"))->v.d == 0.4);
    assert_int_equal(tprof_rows_cell(top, 0, (size_t)tprof_table_col(d, "last_step_excluded"))->v.i, 7);

    char err[128] = "";
    tprof_result *back = unit_result_reread(ra, &tprof_temporal_desc, err, sizeof err);
    assert_non_null(back);
    assert_true(tprof_result_equal(ra, back));
    tprof_result_free(back);

    const tprof_result *both[] = { rb, ra };
    const int64_t ranks[] = { 1, 0 };
    tprof_result *all = tprof_ranks_combine(both, ranks, 2);
    assert_non_null(all);
    top = tprof_result_top_c(all);
    assert_int_equal(tprof_rows_cell(top, 0, (size_t)tprof_table_col(d, "events"))->v.i, 40);
    assert_int_equal(tprof_rows_cell(top, 0, (size_t)tprof_table_col(d, "span_ns"))->v.i, 3000); /* the longest */
    assert_int_equal(tprof_rows_cell(top, 0, (size_t)tprof_table_col(d, "idle_ns"))->v.i, 500);
    /* derived after combining: 500 / 3000, not a mean of 0.4 and 1/30 */
    assert_true(tprof_rows_cell(top, 0, (size_t)tprof_table_col(d, "idle_share"))->v.d == 500.0 / 3000.0);
    assert_true(tprof_rows_cell(top, 0, (size_t)tprof_table_col(d, "last_step_excluded"))->null);
    size_t worst[2];
    assert_int_equal(tprof_ranks_worst(both, ranks, 2, 2, worst), 2);
    assert_int_equal(ranks[worst[0]], 0); /* idle 400 ns against 100 */
    tprof_result_free(all);
    tprof_result_free(ra);
    tprof_result_free(rb);
}

/* HTA's kernel types, by name alone (its patterns, anchored at the start) */
static void test_hta_kinds(void **state)
{
    (void)state;
    assert_int_equal(tprof_hta_kind_of("ncclDevKernel_AllReduce_Sum_f32"), TPROF_HTA_COMM);
    assert_int_equal(tprof_hta_kind_of("void ncclKernel_AllGather(ncclDevComm*)"), TPROF_HTA_COMM);
    assert_int_equal(tprof_hta_kind_of("hipMemcpyAsync"), TPROF_HTA_COMM); /* hip* first: communication */
    assert_int_equal(tprof_hta_kind_of("Memcpy HtoD (Pageable -> Device)"), TPROF_HTA_MEMORY);
    assert_int_equal(tprof_hta_kind_of("dma_transfer"), TPROF_HTA_MEMORY);
    assert_int_equal(tprof_hta_kind_of("void gemm<float>()"), TPROF_HTA_COMPUTE);
    assert_int_equal(tprof_hta_kind_of("Stream Sync"), TPROF_HTA_OTHER);
    assert_int_equal(tprof_hta_kind_of("void reduceSyncKernel()"), TPROF_HTA_OTHER); /* holds "Sync" */
    assert_int_equal(tprof_hta_kind_of("cudaLaunchKernel"), TPROF_HTA_OTHER);
    assert_int_equal(tprof_hta_kind_of("cuda"), TPROF_HTA_COMPUTE);
}

/* HTA rounds starts up and ends down to whole us once any ts has a fraction:
 * gemm 10.4..20.9 becomes 11..20; 30..40 stays; span 11..40 = 29 us, busy 19 */
static void test_hta_rounding(void **state)
{
    (void)state;
    const char *doc = "{\"traceEvents\":[" K("gemm", 7, 10.4, 10.5, 1) "," K("gemm", 7, 30, 10, 2) "]}";
    tprof_trace *t = read_doc(doc);
    tprof_temporal_result r;
    assert_int_equal(tprof_temporal(t, NULL, &r), 0);
    assert_true(r.hta.computed && r.hta.rounded && !r.hta.step_filter);
    assert_int_equal(r.hta.span_ns, 29000);
    assert_int_equal(r.hta.idle_ns, 10000);
    assert_int_equal(r.hta.compute_ns, 19000);
    assert_int_equal(r.span_ns, 29600); /* trainprof's own: exact */
    tprof_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap),
        cmocka_unit_test(test_last_step_by_launch),
        cmocka_unit_test(test_no_gpu),
        cmocka_unit_test(test_result_tables),
        cmocka_unit_test(test_hta_kinds),
        cmocka_unit_test(test_hta_rounding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
