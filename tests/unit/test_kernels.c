/* Unit tests of the kernels analysis (lib/analysis/kernels.c) on a small
 * hand-made trace. All times below are in microseconds in the JSON and
 * checked in nanoseconds; every expected number is worked out by hand in
 * the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "trainprof/trace.h"

#define US 1000LL

/*
 * Steps:   #1 [0,100)  #2 [100,200)  #3 [200,300)
 * Launches (cuda_runtime): corr 1 @10, corr 2 @150, corr 3 @190, corr 4 @250
 * GPU events:
 *   A      corr 1  stream 7   [20,50]    launched in step 1
 *   B      corr 2  stream 7   [160,180]  step 2
 *   A      corr 3  stream 7   [195,235]  launched in step 2, runs into step 3
 *   C nccl corr 4  stream 20  [210,260]  step 3 (overlaps the second A)
 *   Memcpy corr 5  stream 7   [270,280]  no launch event: its own ts, step 3
 *   Sync   -       stream 7   [290,295]  cuda_sync, step 3
 */
#define C_NAME "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
#define M_NAME "Memcpy DtoD (Device -> Device)"

static const char TRACE[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":100},\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":100},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":50},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":1,"
    "\"args\":{\"correlation\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"A\",\"pid\":0,\"tid\":7,\"ts\":20,\"dur\":30,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":1}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":150,\"dur\":1,"
    "\"args\":{\"correlation\":2}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":190,\"dur\":1,"
    "\"args\":{\"correlation\":3}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"B\",\"pid\":0,\"tid\":7,\"ts\":160,\"dur\":20,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":2}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"A\",\"pid\":0,\"tid\":7,\"ts\":195,\"dur\":40,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":3}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":250,\"dur\":1,"
    "\"args\":{\"correlation\":4}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" C_NAME "\",\"pid\":0,\"tid\":20,\"ts\":210,\"dur\":50,"
    "\"args\":{\"device\":0,\"stream\":20,\"correlation\":4}},\n"
    "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"" M_NAME "\",\"pid\":0,\"tid\":7,\"ts\":270,\"dur\":10,"
    "\"args\":{\"device\":0,\"stream\":7,\"correlation\":5,\"bytes\":1048576}},\n"
    "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Event Sync\",\"pid\":0,\"tid\":7,\"ts\":290,\"dur\":5,"
    "\"args\":{\"device\":0,\"stream\":7}}\n"
    "]}";

/* A second rank: A [0,100], D [50,55] on one stream. */
static const char TRACE2[] =
    "{\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"A\",\"pid\":0,\"tid\":7,\"ts\":0,\"dur\":100,"
    "\"args\":{\"device\":0,\"stream\":7}},\n"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"D\",\"pid\":0,\"tid\":7,\"ts\":50,\"dur\":5,"
    "\"args\":{\"device\":0,\"stream\":7}}\n"
    "]}";

static tprof_trace *load(const char *doc)
{
    tprof_read_opts o = { .keep = TPROF_KERNELS_KEEP };
    tprof_trace *t = NULL;
    char err[512] = "";
    int rc = tprof_trace_read_mem(&t, doc, strlen(doc), "k.json", &o, err, sizeof err);
    if (rc) fail_msg("read: %d %s", rc, err);
    return t;
}

static const tprof_kernel_row *row(const tprof_kernels_result *r, const char *key)
{
    for (size_t i = 0; i < r->nrows; i++)
        if (strcmp(r->rows[i].key, key) == 0) return &r->rows[i];
    fail_msg("no row '%s'", key);
    return NULL;
}

static void check_row(const tprof_kernels_result *r, size_t idx, const char *key, uint64_t count, int64_t total,
                      int64_t mn, int64_t mx)
{
    assert_true(idx < r->nrows);
    const tprof_kernel_row *w = &r->rows[idx];
    if (strcmp(w->key, key) != 0) fail_msg("row %zu is '%s', expected '%s'", idx, w->key, key);
    assert_int_equal(w->count, count);
    assert_int_equal(w->total_ns, total);
    assert_int_equal(w->min_ns, mn);
    assert_int_equal(w->max_ns, mx);
    assert_true(fabs(w->mean_ns - (double)total / (double)count) < 1e-6);
    assert_true(fabs(w->share - (double)total / (double)r->total_ns) < 1e-12);
}

static tprof_kernels_result *run(const tprof_trace *t, tprof_group_by by, int64_t first, int64_t last)
{
    tprof_kernels_opts o = { .by = by, .step_first = first, .step_last = last };
    tprof_kernels_result *r = NULL;
    int rc = tprof_kernels(t, &o, &r);
    if (rc) fail_msg("tprof_kernels: rc %d", rc);
    assert_non_null(r);
    return r;
}

static void test_whole_trace_by_name(void **state)
{
    (void)state;
    tprof_trace *t = load(TRACE);
    tprof_kernels_result *r = run(t, TPROF_BY_NAME, -1, -1);
    assert_int_equal(r->by, TPROF_BY_NAME);
    assert_int_equal(r->windowed, 0);
    /* 6 GPU events: 30+20+40+50+10+5 = 155 us */
    assert_int_equal(r->count, 6);
    assert_int_equal(r->total_ns, 155 * US);
    /* union: [20,50] 30 + [160,180] 20 + [195,260] 65 + [270,280] 10 + [290,295] 5 = 130 */
    assert_int_equal(r->busy_ns, 130 * US);
    /* 20 to 295 */
    assert_int_equal(r->span_ns, 275 * US);
    assert_int_equal(r->nrows, 5);
    check_row(r, 0, "A", 2, 70 * US, 30 * US, 40 * US);
    check_row(r, 1, C_NAME, 1, 50 * US, 50 * US, 50 * US);
    check_row(r, 2, "B", 1, 20 * US, 20 * US, 20 * US);
    check_row(r, 3, M_NAME, 1, 10 * US, 10 * US, 10 * US);
    check_row(r, 4, "Event Sync", 1, 5 * US, 5 * US, 5 * US);
    assert_int_equal(r->rows[0].klass, TPROF_CLASS_COMPUTE);
    assert_int_equal(r->rows[1].klass, TPROF_CLASS_COMM);
    assert_int_equal(r->rows[3].klass, TPROF_CLASS_MEMORY);
    assert_int_equal(r->rows[4].klass, TPROF_CLASS_OTHER);
    assert_true(fabs(r->rows[0].share - 70.0 / 155.0) < 1e-12);
    assert_true(fabs(r->rows[0].mean_ns - 35000.0) < 1e-9);
    double sum = 0;
    for (size_t i = 0; i < r->nrows; i++) sum += r->rows[i].share;
    assert_true(fabs(sum - 1.0) < 1e-12);
    /* classes */
    assert_int_equal(r->class_count[TPROF_CLASS_COMPUTE], 3);
    assert_int_equal(r->class_total_ns[TPROF_CLASS_COMPUTE], 90 * US);
    assert_int_equal(r->class_count[TPROF_CLASS_COMM], 1);
    assert_int_equal(r->class_total_ns[TPROF_CLASS_COMM], 50 * US);
    assert_int_equal(r->class_count[TPROF_CLASS_MEMORY], 1);
    assert_int_equal(r->class_total_ns[TPROF_CLASS_MEMORY], 10 * US);
    assert_int_equal(r->class_count[TPROF_CLASS_OTHER], 1);
    assert_int_equal(r->class_total_ns[TPROF_CLASS_OTHER], 5 * US);
    tprof_kernels_free(r);

    /* NULL options: the same */
    r = NULL;
    assert_int_equal(tprof_kernels(t, NULL, &r), 0);
    assert_int_equal(r->count, 6);
    assert_int_equal(r->busy_ns, 130 * US);
    assert_int_equal(r->windowed, 0);
    tprof_kernels_free(r);
    tprof_trace_free(t);
}

static void test_by_class(void **state)
{
    (void)state;
    tprof_trace *t = load(TRACE);
    tprof_kernels_result *r = run(t, TPROF_BY_CLASS, -1, -1);
    assert_int_equal(r->nrows, 4);
    check_row(r, 0, "compute", 3, 90 * US, 20 * US, 40 * US);
    check_row(r, 1, "communication", 1, 50 * US, 50 * US, 50 * US);
    check_row(r, 2, "memory", 1, 10 * US, 10 * US, 10 * US);
    check_row(r, 3, "other", 1, 5 * US, 5 * US, 5 * US);
    assert_int_equal(r->rows[0].klass, TPROF_CLASS_COMPUTE);
    assert_int_equal(r->rows[1].klass, TPROF_CLASS_COMM);
    assert_int_equal(r->rows[2].klass, TPROF_CLASS_MEMORY);
    assert_int_equal(r->rows[3].klass, TPROF_CLASS_OTHER);
    assert_int_equal(r->busy_ns, 130 * US);
    tprof_kernels_free(r);
    tprof_trace_free(t);
}

static void test_by_stream(void **state)
{
    (void)state;
    tprof_trace *t = load(TRACE);
    tprof_kernels_result *r = run(t, TPROF_BY_STREAM, -1, -1);
    assert_int_equal(r->nrows, 2);
    /* stream 7: A 30, B 20, A 40, Memcpy 10, Sync 5 = 105 */
    check_row(r, 0, "device 0 stream 7", 5, 105 * US, 5 * US, 40 * US);
    check_row(r, 1, "device 0 stream 20", 1, 50 * US, 50 * US, 50 * US);
    assert_int_equal(r->rows[0].device, 0);
    assert_int_equal(r->rows[0].stream, 7);
    assert_int_equal(r->rows[1].device, 0);
    assert_int_equal(r->rows[1].stream, 20);
    tprof_kernels_free(r);
    tprof_trace_free(t);
}

/* A GPU event without a device: grouped by stream as device -1. */
static void test_by_stream_unknown_device(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":\"GPU x\",\"tid\":7,\"ts\":1,\"dur\":2},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":3}"
        "]}";
    tprof_trace *t = load(doc);
    tprof_kernels_result *r = run(t, TPROF_BY_STREAM, -1, -1);
    assert_int_equal(r->nrows, 2);
    const tprof_kernel_row *w = row(r, "device -1 stream 7");
    assert_int_equal(w->device, -1);
    assert_int_equal(w->stream, 7);
    assert_int_equal(w->total_ns, 2 * US);
    w = row(r, "device 0 stream 7");
    assert_int_equal(w->total_ns, 3 * US);
    tprof_kernels_free(r);
    tprof_trace_free(t);
}

static void test_step_windows(void **state)
{
    (void)state;
    tprof_trace *t = load(TRACE);
    assert_int_equal(tprof_trace_meta_get(t)->nsteps, 3);

    /* step 2: B (launched @150) and the second A (launched @190, runs past 200) */
    tprof_kernels_result *r = run(t, TPROF_BY_NAME, 2, 2);
    assert_int_equal(r->windowed, 1);
    assert_int_equal(r->step_first, 2);
    assert_int_equal(r->step_last, 2);
    assert_int_equal(r->nsteps, 1);
    assert_int_equal(r->count, 2);
    assert_int_equal(r->total_ns, 60 * US);
    assert_int_equal(r->busy_ns, 60 * US);
    assert_int_equal(r->span_ns, 75 * US); /* 160 to 235 */
    assert_int_equal(r->nrows, 2);
    check_row(r, 0, "A", 1, 40 * US, 40 * US, 40 * US);
    check_row(r, 1, "B", 1, 20 * US, 20 * US, 20 * US);
    tprof_kernels_free(r);

    /* step 3: C (launched @250), Memcpy and Sync by their own start; not the second A */
    r = run(t, TPROF_BY_NAME, 3, 3);
    assert_int_equal(r->count, 3);
    assert_int_equal(r->total_ns, 65 * US);
    assert_int_equal(r->busy_ns, 65 * US);
    assert_int_equal(r->span_ns, 85 * US); /* 210 to 295 */
    assert_int_equal(r->class_count[TPROF_CLASS_COMPUTE], 0);
    tprof_kernels_free(r);

    /* steps 1-2 */
    r = run(t, TPROF_BY_NAME, 1, 2);
    assert_int_equal(r->step_first, 1);
    assert_int_equal(r->step_last, 2);
    assert_int_equal(r->nsteps, 2);
    assert_int_equal(r->count, 3);
    assert_int_equal(r->total_ns, 90 * US);
    assert_int_equal(r->busy_ns, 90 * US);
    assert_int_equal(r->span_ns, 215 * US); /* 20 to 235 */
    check_row(r, 0, "A", 2, 70 * US, 30 * US, 40 * US);
    tprof_kernels_free(r);

    /* from step 2 on */
    r = run(t, TPROF_BY_NAME, 2, -1);
    assert_int_equal(r->step_first, 2);
    assert_int_equal(r->step_last, 3);
    assert_int_equal(r->nsteps, 2);
    assert_int_equal(r->count, 5);
    assert_int_equal(r->total_ns, 125 * US);
    /* [160,180] 20 + [195,260] 65 + [270,280] 10 + [290,295] 5 */
    assert_int_equal(r->busy_ns, 100 * US);
    assert_int_equal(r->span_ns, 135 * US);
    tprof_kernels_free(r);

    /* up to step 1 */
    r = run(t, TPROF_BY_NAME, -1, 1);
    assert_int_equal(r->step_first, 1);
    assert_int_equal(r->step_last, 1);
    assert_int_equal(r->count, 1);
    assert_int_equal(r->total_ns, 30 * US);
    tprof_kernels_free(r);

    /* by class inside a window */
    r = run(t, TPROF_BY_CLASS, 3, 3);
    assert_int_equal(r->nrows, 3);
    check_row(r, 0, "communication", 1, 50 * US, 50 * US, 50 * US);
    tprof_kernels_free(r);
    tprof_trace_free(t);
}

static void test_step_window_without_steps(void **state)
{
    (void)state;
    tprof_trace *t = load(TRACE);
    tprof_kernels_opts o = { .by = TPROF_BY_NAME, .step_first = 9, .step_last = 9 };
    tprof_kernels_result *r = (tprof_kernels_result *)(uintptr_t)1;
    assert_int_equal(tprof_kernels(t, &o, &r), TPROF_EUSAGE);
    assert_null(r);
    o.step_first = 3;
    o.step_last = 2; /* empty range */
    r = (tprof_kernels_result *)(uintptr_t)1;
    assert_int_equal(tprof_kernels(t, &o, &r), TPROF_EUSAGE);
    assert_null(r);
    tprof_trace_free(t);

    /* a trace without any step */
    t = load(TRACE2);
    o.step_first = 1;
    o.step_last = 1;
    assert_int_equal(tprof_kernels(t, &o, &r), TPROF_EUSAGE);
    assert_null(r);
    tprof_trace_free(t);
}

static void test_no_gpu_events(void **state)
{
    (void)state;
    tprof_trace *t = load("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"x\",\"pid\":1,\"tid\":1,"
                          "\"ts\":1,\"dur\":1}]}");
    tprof_kernels_result *r = run(t, TPROF_BY_NAME, -1, -1);
    assert_int_equal(r->count, 0);
    assert_int_equal(r->nrows, 0);
    assert_int_equal(r->total_ns, 0);
    assert_int_equal(r->busy_ns, 0);
    assert_int_equal(r->span_ns, 0);
    tprof_kernels_free(r);
    tprof_trace_free(t);
}

static void test_combine(void **state)
{
    (void)state;
    tprof_trace *t1 = load(TRACE), *t2 = load(TRACE2);
    tprof_kernels_result *r1 = run(t1, TPROF_BY_NAME, -1, -1);
    tprof_kernels_result *r2 = run(t2, TPROF_BY_NAME, -1, -1);
    assert_int_equal(r2->count, 2);
    assert_int_equal(r2->busy_ns, 100 * US);
    const tprof_kernels_result *parts[] = { r1, r2 };
    tprof_kernels_result *c = NULL;
    assert_int_equal(tprof_kernels_combine(parts, 2, &c), 0);
    assert_non_null(c);
    assert_int_equal(c->by, TPROF_BY_NAME);
    /* 155 + 105 */
    assert_int_equal(c->count, 8);
    assert_int_equal(c->total_ns, 260 * US);
    assert_int_equal(c->busy_ns, 230 * US);
    assert_int_equal(c->span_ns, 275 * US);
    assert_int_equal(c->nrows, 6);
    check_row(c, 0, "A", 3, 170 * US, 30 * US, 100 * US);
    check_row(c, 1, C_NAME, 1, 50 * US, 50 * US, 50 * US);
    check_row(c, 2, "B", 1, 20 * US, 20 * US, 20 * US);
    check_row(c, 3, M_NAME, 1, 10 * US, 10 * US, 10 * US);
    /* equal totals: by key */
    check_row(c, 4, "D", 1, 5 * US, 5 * US, 5 * US);
    check_row(c, 5, "Event Sync", 1, 5 * US, 5 * US, 5 * US);
    assert_true(fabs(c->rows[0].share - 170.0 / 260.0) < 1e-12);
    assert_int_equal(c->rows[1].klass, TPROF_CLASS_COMM);
    assert_int_equal(c->class_count[TPROF_CLASS_COMPUTE], 5);
    assert_int_equal(c->class_total_ns[TPROF_CLASS_COMPUTE], 195 * US);
    assert_int_equal(c->class_total_ns[TPROF_CLASS_COMM], 50 * US);
    /* the parts are unchanged */
    assert_int_equal(r1->count, 6);
    assert_int_equal(r1->rows[0].total_ns, 70 * US);
    assert_true(fabs(r1->rows[0].share - 70.0 / 155.0) < 1e-12);
    tprof_kernels_free(c);

    /* one part: a copy */
    assert_int_equal(tprof_kernels_combine(parts, 1, &c), 0);
    assert_int_equal(c->nrows, 5);
    check_row(c, 0, "A", 2, 70 * US, 30 * US, 40 * US);
    assert_int_equal(c->busy_ns, 130 * US);
    tprof_kernels_free(c);

    /* none: usage error */
    c = (tprof_kernels_result *)(uintptr_t)1;
    assert_int_equal(tprof_kernels_combine(parts, 0, &c), TPROF_EUSAGE);
    assert_null(c);
    tprof_kernels_free(r1);
    tprof_kernels_free(r2);

    /* by class */
    r1 = run(t1, TPROF_BY_CLASS, -1, -1);
    r2 = run(t2, TPROF_BY_CLASS, -1, -1);
    parts[0] = r1;
    parts[1] = r2;
    assert_int_equal(tprof_kernels_combine(parts, 2, &c), 0);
    assert_int_equal(c->nrows, 4);
    check_row(c, 0, "compute", 5, 195 * US, 5 * US, 100 * US);
    check_row(c, 1, "communication", 1, 50 * US, 50 * US, 50 * US);
    tprof_kernels_free(c);
    tprof_kernels_free(r1);
    tprof_kernels_free(r2);

    /* windowed parts */
    r1 = run(t1, TPROF_BY_NAME, 2, 2);
    parts[0] = r1;
    parts[1] = r1;
    assert_int_equal(tprof_kernels_combine(parts, 2, &c), 0);
    assert_int_equal(c->windowed, 1);
    assert_int_equal(c->count, 4);
    assert_int_equal(c->total_ns, 120 * US);
    check_row(c, 0, "A", 2, 80 * US, 40 * US, 40 * US);
    tprof_kernels_free(c);
    tprof_kernels_free(r1);

    tprof_trace_free(t1);
    tprof_trace_free(t2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_trace_by_name),
        cmocka_unit_test(test_by_class),
        cmocka_unit_test(test_by_stream),
        cmocka_unit_test(test_step_windows),
        cmocka_unit_test(test_step_window_without_steps),
        cmocka_unit_test(test_no_gpu_events),
        cmocka_unit_test(test_combine),
        cmocka_unit_test(test_by_stream_unknown_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
