/* tprof_temporal on small hand-made traces; expectations worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "trainprof/analysis.h"
#include "trainprof/error.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap),
        cmocka_unit_test(test_last_step_by_launch),
        cmocka_unit_test(test_no_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
