/* Unit tests of the trace reader (lib/trace/reader.c, trace.c, read_many.c)
 * on small hand-written traces. JSON below is written with single quotes
 * for readability and turned into double quotes before use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "trainprof/error.h"
#include "trainprof/trace.h"
#include "unit.h"

/* ---- helpers ---------------------------------------------------------- */

/* A malloc'd copy of S with ' turned into ". */
static char *dq(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    for (char *p = d; *p; p++)
        if (*p == '\'') *p = '"';
    return d;
}

/* Every test runs twice: with the reader's fast event path, and with
 * generic_only set (every event parsed token by token). */
static int g_generic;
#define OPTS (&(tprof_read_opts){ .keep = TPROF_KEEP_ALL, .generic_only = g_generic })

static int setup_fast(void **state)
{
    (void)state;
    g_generic = 0;
    return 0;
}

static int setup_generic(void **state)
{
    (void)state;
    g_generic = 1;
    return 0;
}

static tprof_trace *read_ok(const char *doc, const tprof_read_opts *opts)
{
    tprof_read_opts dflt = { .keep = TPROF_KEEP_ALL, .generic_only = g_generic };
    if (!opts) opts = &dflt;
    tprof_trace *t = NULL;
    char err[512] = "";
    int rc = tprof_trace_read_mem(&t, doc, strlen(doc), "test.json", opts, err, sizeof err);
    if (rc) fail_msg("read: rc %d (%s): %s", rc, tprof_strerror(rc), err);
    assert_non_null(t);
    return t;
}

static const char *ev_name(const tprof_trace *t, const tprof_event *e) { return tprof_trace_str(t, e->name); }

/* Index of the stored event named NAME, or fails. */
static const tprof_event *find_event(const tprof_trace *t, const char *name)
{
    const tprof_event *ev = tprof_trace_events(t);
    for (size_t i = 0; i < tprof_trace_nevents(t); i++)
        if (strcmp(ev_name(t, &ev[i]), name) == 0) return &ev[i];
    fail_msg("no stored event named '%s'", name);
    return NULL;
}

static uint8_t *gzip_make(const void *data, size_t len, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)len) + 64;
    uint8_t *out = malloc(cap);
    assert_non_null(out);
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

/* ---- the sample trace ------------------------------------------------- */

static const char META_A[] =
    "'schemaVersion': 1,"
    "'deviceProperties': ["
    " {'id': 0, 'name': 'NVIDIA H100 80GB HBM3', 'totalGlobalMem': 85021163520, 'computeMajor': 9,"
    "  'computeMinor': 0, 'maxThreadsPerBlock': 1024, 'numSms': 132},"
    " {'id': 1, 'name': 'NVIDIA H100 80GB HBM3', 'totalGlobalMem': 85021163520, 'computeMajor': 9,"
    "  'computeMinor': 0, 'numSms': 132}"
    "],"
    "'distributedInfo': {'backend': 'nccl', 'rank': 3, 'world_size': 8, 'pg_count': 2, 'nccl_version': '2.21.5'},"
    "'otherData': {'a': [1, {'traceEvents': 2}], 'b': 'x'}";

static const char META_B[] =
    "'traceName': 'rank3.pt.trace.json', 'displayTimeUnit': 'ms', 'baseTimeNanoseconds': 1700000000000000000";

static const char EVENTS[] =
    "'traceEvents': [\n"
    "{'ph': 'X', 'cat': 'user_annotation', 'name': 'ProfilerStep#5', 'pid': 100, 'tid': 100, 'ts': 1000.5,"
    " 'dur': 500, 'args': {'External id': 1}},\n"
    "{'ph': 'X', 'cat': 'cuda_runtime', 'name': 'cudaLaunchKernel', 'pid': 100, 'tid': 100, 'ts': 1010, 'dur': 5,"
    " 'args': {'correlation': 7, 'External id': 3, 'cbid': 211}},\n"
    "{'ph': 'X', 'cat': 'kernel', 'name': 'ampere_sgemm_128x64_tn', 'pid': 0, 'tid': 7, 'ts': 1020, 'dur': 30.25,"
    " 'args': {'device': 0, 'stream': 7, 'correlation': 7, 'grid': [1, 2, 3], 'registers per thread': 128}},\n"
    "{'ph': 'X', 'cat': 'gpu_memcpy', 'name': 'Memcpy HtoD (Pageable -> Device)', 'pid': 0, 'tid': 7, 'ts': 1060,"
    " 'dur': 2, 'args': {'device': 0, 'stream': 7, 'correlation': 8, 'bytes': 4096}},\n"
    "{'ph': 'X', 'cat': 'kernel', 'name': 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long,"
    " ncclWork*)', 'pid': 1, 'tid': 20, 'ts': 1100, 'dur': 50, 'args': {'device': 1, 'stream': 20,"
    " 'correlation': 9}},\n"
    "{'ph': 'i', 'cat': 'cpu_instant_event', 'name': '[memory]', 'pid': 100, 'tid': 100, 'ts': 1200, 's': 't',"
    " 'args': {'Bytes': 512}},\n"
    "{'ph': 'M', 'name': 'process_name', 'pid': 0, 'tid': 0, 'args': {'name': 'python'}},\n"
    "{'ph': 'f', 'id': 7, 'pid': 0, 'tid': 7, 'ts': 1020, 'cat': 'ac2g', 'name': 'ac2g', 'bp': 'e'}\n"
    "]";

#define NCCL_NAME "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"

/* The document with its top-level parts in the order given ("A", "B", "E"). */
static char *sample(const char *order)
{
    ubuf b = { 0 };
    ubuf_str(&b, "{");
    for (const char *o = order; *o; o++) {
        if (o != order) ubuf_str(&b, ",\n");
        ubuf_str(&b, *o == 'A' ? META_A : *o == 'B' ? META_B : EVENTS);
    }
    ubuf_str(&b, "}");
    char *d = dq((const char *)b.p);
    ubuf_free(&b);
    return d;
}

static void check_sample_meta(const tprof_trace *t, size_t doc_len)
{
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    assert_string_equal(m->path, "test.json");
    assert_int_equal(m->form, TPROF_FORM_OBJECT);
    assert_int_equal(m->compression, TPROF_COMP_NONE);
    assert_int_equal(m->bytes_json, doc_len);
    assert_int_equal(m->has_schema_version, 1);
    assert_int_equal(m->schema_version, 1);
    assert_int_equal(m->has_distributed, 1);
    assert_int_equal(m->rank, 3);
    assert_int_equal(m->world_size, 8);
    assert_non_null(m->backend);
    assert_string_equal(m->backend, "nccl");
    assert_int_equal(m->has_base_time, 1);
    assert_int_equal(m->base_time_ns, 1700000000000000000LL);
    assert_non_null(m->display_time_unit);
    assert_string_equal(m->display_time_unit, "ms");
    assert_non_null(m->trace_name);
    assert_string_equal(m->trace_name, "rank3.pt.trace.json");

    assert_int_equal(m->ndevices, 2);
    assert_int_equal(m->devices[0].id, 0);
    assert_string_equal(m->devices[0].name, "NVIDIA H100 80GB HBM3");
    assert_int_equal(m->devices[0].total_memory, 85021163520LL);
    assert_int_equal(m->devices[0].num_sms, 132);
    assert_int_equal(m->devices[0].compute_major, 9);
    assert_int_equal(m->devices[0].compute_minor, 0);
    assert_int_equal(m->devices[1].id, 1);

    assert_int_equal(m->nevents, 8);
    assert_int_equal(m->kind_counts[TPROF_KIND_CPU], 1);
    assert_int_equal(m->kind_counts[TPROF_KIND_RUNTIME], 1);
    assert_int_equal(m->kind_counts[TPROF_KIND_GPU], 3);
    assert_int_equal(m->kind_counts[TPROF_KIND_GPU_ANNOTATION], 0);
    assert_int_equal(m->kind_counts[TPROF_KIND_FLOW], 1);
    assert_int_equal(m->kind_counts[TPROF_KIND_INSTANT], 1);
    assert_int_equal(m->kind_counts[TPROF_KIND_COUNTER], 0);
    assert_int_equal(m->kind_counts[TPROF_KIND_META], 1);
    assert_int_equal(m->kind_counts[TPROF_KIND_OTHER], 0);

    /* categories: kernel x2; user_annotation, cuda_runtime, gpu_memcpy,
     * cpu_instant_event, ac2g and "" (the metadata event) once each */
    assert_int_equal(m->ncats, 7);
    assert_string_equal(tprof_trace_str(t, m->cats[0].cat), "kernel");
    assert_int_equal(m->cats[0].count, 2);
    uint64_t sum = 0;
    for (size_t i = 0; i < m->ncats; i++) {
        sum += m->cats[i].count;
        if (i) assert_true(m->cats[i].count <= m->cats[i - 1].count);
    }
    assert_int_equal(sum, 8);

    /* ProfilerStep#5 runs from 1000.5 us for 500 us: the latest end */
    assert_int_equal(m->ts_min, 1000500);
    assert_int_equal(m->ts_max, 1500500);

    assert_int_equal(m->nsteps, 1);
    assert_int_equal(m->steps[0].number, 5);
    assert_int_equal(m->steps[0].ts, 1000500);
    assert_int_equal(m->steps[0].dur, 500000);

    assert_int_equal(m->ngpu_tracks, 2);
    assert_int_equal(m->gpu_tracks[0].device, 0);
    assert_int_equal(m->gpu_tracks[0].stream, 7);
    assert_int_equal(m->gpu_tracks[0].events, 2);
    assert_int_equal(m->gpu_tracks[1].device, 1);
    assert_int_equal(m->gpu_tracks[1].stream, 20);
    assert_int_equal(m->gpu_tracks[1].events, 1);

    assert_int_equal(m->warn.dur_missing + m->warn.dur_negative + m->warn.dur_absurd + m->warn.ts_missing +
                         m->warn.ts_bad + m->warn.non_object_events,
                     0);
    assert_int_equal(m->warn.first_offset, UINT64_MAX);
    assert_int_equal(m->truncated, 0);
    assert_string_equal(tprof_trace_truncation(t), "");
}

static void check_sample_events(const tprof_trace *t)
{
    assert_int_equal(tprof_trace_nevents(t), 8);
    const tprof_event *ev = tprof_trace_events(t);
    /* file order */
    static const char *const names[] = { "ProfilerStep#5", "cudaLaunchKernel", "ampere_sgemm_128x64_tn",
                                         "Memcpy HtoD (Pageable -> Device)", NCCL_NAME, "[memory]",
                                         "process_name", "ac2g" };
    for (size_t i = 0; i < 8; i++) assert_string_equal(ev_name(t, &ev[i]), names[i]);

    const tprof_event *e = &ev[0];
    assert_int_equal(e->kind, TPROF_KIND_CPU);
    assert_int_equal(e->ph, 'X');
    assert_int_equal(e->ts, 1000500);
    assert_int_equal(e->dur, 500000);
    assert_true(e->flags & TPROF_EV_STEP);
    assert_int_equal(e->pid, 100);
    assert_int_equal(e->tid, 100);
    assert_int_equal(e->external_id, 1);
    assert_int_equal(e->correlation, -1);
    assert_int_equal(e->device, -1);
    assert_int_equal(e->stream, -1);
    assert_string_equal(tprof_trace_str(t, e->cat), "user_annotation");

    e = &ev[1];
    assert_int_equal(e->kind, TPROF_KIND_RUNTIME);
    assert_int_equal(e->ts, 1010000);
    assert_int_equal(e->dur, 5000);
    assert_int_equal(e->correlation, 7);
    assert_int_equal(e->external_id, 3);
    assert_false(e->flags & TPROF_EV_STEP);

    e = &ev[2];
    assert_int_equal(e->kind, TPROF_KIND_GPU);
    assert_int_equal(e->klass, TPROF_CLASS_COMPUTE);
    assert_int_equal(e->ts, 1020000);
    assert_int_equal(e->dur, 30250);
    assert_int_equal(e->device, 0);
    assert_int_equal(e->stream, 7);
    assert_int_equal(e->correlation, 7);
    assert_int_equal(e->bytes, -1);

    e = &ev[3];
    assert_int_equal(e->kind, TPROF_KIND_GPU);
    assert_int_equal(e->klass, TPROF_CLASS_MEMORY);
    assert_int_equal(e->bytes, 4096);
    assert_int_equal(e->dur, 2000);
    assert_int_equal(e->correlation, 8);

    e = &ev[4];
    assert_int_equal(e->kind, TPROF_KIND_GPU);
    assert_int_equal(e->klass, TPROF_CLASS_COMM);
    assert_int_equal(e->device, 1);
    assert_int_equal(e->stream, 20);
    assert_int_equal(e->ts, 1100000);
    assert_int_equal(e->dur, 50000);

    e = &ev[5];
    assert_int_equal(e->kind, TPROF_KIND_INSTANT);
    assert_int_equal(e->ph, 'i');
    assert_int_equal(e->ts, 1200000);
    assert_int_equal(e->dur, 0);

    e = &ev[6];
    assert_int_equal(e->kind, TPROF_KIND_META);
    assert_int_equal(e->ph, 'M');

    e = &ev[7];
    assert_int_equal(e->kind, TPROF_KIND_FLOW);
    assert_int_equal(e->flow_id, 7);
    assert_int_equal(e->ts, 1020000);

    assert_true(tprof_trace_nstrings(t) > 8);
    assert_true(tprof_trace_memory(t) > 8 * sizeof(tprof_event));
}

/* ---- object form ------------------------------------------------------ */

static void test_object_meta_before_and_after(void **state)
{
    (void)state;
    static const char *const orders[] = { "AEB", "EAB", "ABE", "BEA" };
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
        char *doc = sample(orders[i]);
        tprof_trace *t = read_ok(doc, NULL);
        check_sample_meta(t, strlen(doc));
        check_sample_events(t);
        tprof_trace_free(t);
        free(doc);
    }
}

static void test_object_defaults_when_absent(void **state)
{
    (void)state;
    char *doc = dq("{'traceEvents': [{'ph': 'X', 'cat': 'cpu_op', 'name': 'aten::mm', 'pid': 1, 'tid': 2,"
                   " 'ts': 5, 'dur': 1}]}");
    tprof_trace *t = read_ok(doc, NULL);
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    assert_int_equal(m->has_schema_version, 0);
    assert_int_equal(m->has_distributed, 0);
    assert_int_equal(m->rank, -1);
    assert_int_equal(m->world_size, -1);
    assert_null(m->backend);
    assert_int_equal(m->has_base_time, 0);
    assert_null(m->display_time_unit);
    assert_null(m->trace_name);
    assert_int_equal(m->ndevices, 0);
    assert_int_equal(m->nsteps, 0);
    assert_int_equal(m->ngpu_tracks, 0);
    assert_int_equal(m->nevents, 1);
    assert_int_equal(m->ts_min, 5000);
    assert_int_equal(m->ts_max, 6000);
    tprof_trace_free(t);
    free(doc);

    /* no events at all */
    t = read_ok("{\"traceEvents\":[]}", NULL);
    m = tprof_trace_meta_get(t);
    assert_int_equal(m->nevents, 0);
    assert_true(m->ts_min > m->ts_max);
    assert_int_equal(tprof_trace_nevents(t), 0);
    tprof_trace_free(t);
}

/* ---- array form ------------------------------------------------------- */

static void test_array_form_string_ts(void **state)
{
    (void)state;
    char *doc = dq("[\n"
                   "{'name': 'aclnnMatmul_MatMulV2', 'pid': 2, 'tid': 4, 'ts': '1704161511420306.491', 'dur': '12.5',"
                   " 'ph': 'X', 'args': {'Model Id': 4294967295, 'Task Type': 'AI_CORE', 'Stream Id': 4}},\n"
                   "{'name': 'process_name', 'pid': 2, 'tid': 0, 'ph': 'M', 'args': {'name': 'Ascend Hardware'}},\n"
                   "{'name': 'hcom_allReduce__123_0_1', 'pid': 2, 'tid': 5, 'ts': '1704161511420400', 'dur': '3.001',"
                   " 'ph': 'X', 'args': {'Task Type': 'HCCL', 'Stream Id': 5}},\n"
                   "{'ph': 'X', 'cat': 'cpu_op', 'name': 'aten::mm', 'pid': 'Python 12', 'tid': 'thread 1',"
                   " 'ts': '1704161511420300', 'dur': '1'}\n"
                   "]");
    tprof_trace *t = read_ok(doc, NULL);
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    assert_int_equal(m->form, TPROF_FORM_ARRAY);
    assert_int_equal(m->nevents, 4);
    assert_int_equal(m->kind_counts[TPROF_KIND_GPU], 2);
    assert_int_equal(m->kind_counts[TPROF_KIND_CPU], 1);
    assert_int_equal(m->kind_counts[TPROF_KIND_META], 1);
    assert_int_equal(m->ts_min, 1704161511420300000LL);
    assert_int_equal(m->ts_max, 1704161511420403001LL);

    const tprof_event *e = find_event(t, "aclnnMatmul_MatMulV2");
    assert_int_equal(e->ts, 1704161511420306491LL);
    assert_int_equal(e->dur, 12500);
    assert_int_equal(e->kind, TPROF_KIND_GPU);
    assert_int_equal(e->klass, TPROF_CLASS_COMPUTE);
    assert_int_equal(e->stream, 4);
    assert_int_equal(e->device, 2); /* from the pid */

    e = find_event(t, "hcom_allReduce__123_0_1");
    assert_int_equal(e->ts, 1704161511420400000LL);
    assert_int_equal(e->dur, 3001);
    assert_int_equal(e->klass, TPROF_CLASS_COMM);
    assert_int_equal(e->stream, 5);

    e = find_event(t, "aten::mm");
    assert_true(e->flags & TPROF_EV_PID_STR);
    assert_true(e->flags & TPROF_EV_TID_STR);
    assert_string_equal(tprof_trace_str(t, (uint32_t)e->pid), "Python 12");
    assert_string_equal(tprof_trace_str(t, (uint32_t)e->tid), "thread 1");
    assert_int_equal(e->dur, 1000);

    assert_int_equal(m->ngpu_tracks, 2);
    assert_int_equal(m->gpu_tracks[0].device, 2);
    assert_int_equal(m->gpu_tracks[0].stream, 4);
    assert_int_equal(m->gpu_tracks[1].stream, 5);
    tprof_trace_free(t);
    free(doc);
}

/* ---- data problems ---------------------------------------------------- */

static void test_dur_and_ts_warnings(void **state)
{
    (void)state;
    char *doc = dq("[\n"
                   "{'ph':'X','cat':'cpu_op','name':'ok','pid':1,'tid':1,'ts':10,'dur':86400000000},\n"
                   "{'ph':'X','cat':'cpu_op','name':'nodur','pid':1,'tid':1,'ts':20},\n"
                   "{'ph':'X','cat':'cpu_op','name':'neg','pid':1,'tid':1,'ts':30,'dur':-5},\n"
                   "{'ph':'X','cat':'cpu_op','name':'huge','pid':1,'tid':1,'ts':40,'dur':86400000000.001},\n"
                   "{'ph':'X','cat':'cpu_op','name':'strdur','pid':1,'tid':1,'ts':50,'dur':'abc'},\n"
                   "{'ph':'X','cat':'cpu_op','name':'bigdur','pid':1,'tid':1,'ts':55,'dur':1e30},\n"
                   "{'ph':'X','cat':'cpu_op','name':'nots','pid':1,'tid':1,'dur':1},\n"
                   "{'ph':'X','cat':'cpu_op','name':'badts','pid':1,'tid':1,'ts':'x','dur':1},\n"
                   "{'ph':'i','cat':'cpu_op','name':'inst','pid':1,'tid':1,'ts':60},\n"
                   "5, 'str', [1]\n"
                   "]");
    tprof_trace *t = read_ok(doc, NULL);
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    assert_int_equal(m->nevents, 9);
    assert_int_equal(m->warn.dur_missing, 1);
    assert_int_equal(m->warn.dur_invalid, 2); /* 'abc' and 1e30: there, but not a duration */
    assert_int_equal(m->warn.dur_negative, 1);
    assert_int_equal(m->warn.dur_absurd, 1);
    assert_int_equal(m->warn.ts_missing, 1);
    assert_int_equal(m->warn.ts_bad, 1);
    assert_int_equal(m->warn.non_object_events, 3);
    /* the first problem is the event named nodur: its '{' */
    const char *p = strstr(doc, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"nodur\"");
    assert_non_null(p);
    assert_int_equal(m->warn.first_offset, (uint64_t)(p - doc));

    /* untimed events are not stored; the rest are, with their flags */
    assert_int_equal(tprof_trace_nevents(t), 7);
    const tprof_event *e = find_event(t, "ok");
    assert_int_equal(e->dur, 86400000000000LL); /* exactly one day is fine */
    assert_int_equal(e->flags & (TPROF_EV_NO_DUR | TPROF_EV_BAD_DUR), 0);
    e = find_event(t, "nodur");
    assert_int_equal(e->dur, 0);
    assert_true(e->flags & TPROF_EV_NO_DUR);
    e = find_event(t, "bigdur"); /* kept, with no duration, marked as a bad one rather than a missing one */
    assert_int_equal(e->dur, 0);
    assert_true(e->flags & TPROF_EV_BAD_DUR);
    assert_false(e->flags & TPROF_EV_NO_DUR);
    e = find_event(t, "neg");
    assert_int_equal(e->dur, 0);
    assert_true(e->flags & TPROF_EV_BAD_DUR);
    e = find_event(t, "huge");
    assert_int_equal(e->dur, 0);
    assert_true(e->flags & TPROF_EV_BAD_DUR);
    e = find_event(t, "strdur");
    assert_true(e->flags & TPROF_EV_BAD_DUR); /* there, but not a number */
    e = find_event(t, "inst");
    assert_int_equal(e->dur, 0);
    assert_int_equal(e->flags & (TPROF_EV_NO_DUR | TPROF_EV_BAD_DUR), 0);
    /* latest end: 10 us + one day */
    assert_int_equal(m->ts_max, 10000 + 86400000000000LL);
    assert_int_equal(m->ts_min, 10000);
    tprof_trace_free(t);
    free(doc);
}

/* Timestamps near the int64 limit must not overflow ts + dur. */
static void test_extreme_timestamps(void **state)
{
    (void)state;
    char *doc = dq("[{'ph':'X','cat':'kernel','name':'late','pid':0,'tid':7,'ts':9223372036854775,'dur':1000,"
                   "'args':{'device':0,'stream':7}}]");
    tprof_trace *t = read_ok(doc, NULL);
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    assert_int_equal(m->nevents, 1);
    /* one timed event was read: its start is the earliest time */
    assert_int_equal(m->ts_min, 9223372036854775000LL);
    assert_true(m->ts_max >= m->ts_min);
    tprof_trace_free(t);
    free(doc);
}

/* ---- keep mask -------------------------------------------------------- */

static void test_keep_mask(void **state)
{
    (void)state;
    char *doc = sample("AEB");
    tprof_read_opts o = { .keep = TPROF_KEEP(TPROF_KIND_GPU), .generic_only = g_generic };
    tprof_trace *t = read_ok(doc, &o);
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    assert_int_equal(m->nevents, 8);
    assert_int_equal(m->kind_counts[TPROF_KIND_CPU], 1);
    assert_int_equal(m->nsteps, 1);
    /* 3 GPU events plus the step */
    assert_int_equal(tprof_trace_nevents(t), 4);
    const tprof_event *ev = tprof_trace_events(t);
    size_t gpu = 0, steps = 0;
    for (size_t i = 0; i < tprof_trace_nevents(t); i++) {
        if (ev[i].kind == TPROF_KIND_GPU) gpu++;
        else if (ev[i].flags & TPROF_EV_STEP) steps++;
        else fail_msg("event '%s' (kind %d) stored against the keep mask", ev_name(t, &ev[i]), ev[i].kind);
    }
    assert_int_equal(gpu, 3);
    assert_int_equal(steps, 1);
    /* metadata is still complete */
    assert_int_equal(m->ngpu_tracks, 2);
    assert_int_equal(m->ndevices, 2);
    tprof_trace_free(t);

    o.keep = TPROF_KEEP(TPROF_KIND_GPU) | TPROF_KEEP(TPROF_KIND_RUNTIME);
    t = read_ok(doc, &o);
    assert_int_equal(tprof_trace_nevents(t), 5);
    assert_int_equal(tprof_trace_meta_get(t)->nevents, 8);
    tprof_trace_free(t);

    o.keep = TPROF_KEEP(TPROF_KIND_INSTANT);
    t = read_ok(doc, &o);
    assert_int_equal(tprof_trace_nevents(t), 2); /* the instant and the step */
    assert_non_null(find_event(t, "[memory]"));
    tprof_trace_free(t);
    free(doc);
}

/* ---- not traces, bad JSON --------------------------------------------- */

static void expect_read_error(const char *doc, int code, const char *needle)
{
    tprof_trace *t = (tprof_trace *)(uintptr_t)1;
    char err[512] = "";
    int rc = tprof_trace_read_mem(&t, doc, strlen(doc), "doc.json", OPTS, err, sizeof err);
    if (rc != code) fail_msg("'%s': rc %d (%s), expected %d; msg '%s'", doc, rc, tprof_strerror(rc), code, err);
    assert_null(t);
    assert_true(strlen(err) > 0);
    assert_non_null(strstr(err, "doc.json"));
    if (needle && !strstr(err, needle)) fail_msg("'%s': message '%s' lacks '%s'", doc, err, needle);
}

/* A cpu_op's inputs as compact JSON text (whitespace outside strings
 * dropped, strings as written), its autograd links, and no table entry for
 * an op without them or without TPROF_KEEP_OP_ARGS. */
static void test_op_args(void **state)
{
    (void)state;
    const char *doc =
        "{\"traceEvents\": [\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 5,"
        " \"args\": {\"External id\": 7, \"Sequence number\": 42, \"Input Dims\": [[8944, 1024], [1024, 2816]],"
        " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"], \"Input Strides\": [[1024, 1], [2816, 1]],"
        " \"Concrete Inputs\": [\"\", \"a b\", \"x\\\"y\"]}},\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"MmBackward0\", \"pid\": 1, \"tid\": 2, \"ts\": 30, \"dur\": 5,"
        " \"args\": {\"Sequence number\": 42, \"Fwd thread id\": 1, \"Input Dims\": []}},\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 1, \"tid\": 1, \"ts\": 20, \"dur\": 1,"
        " \"args\": {\"External id\": 8}}\n"
        "]}";
    tprof_trace *t = read_ok(doc, NULL);
    assert_int_equal(tprof_trace_nop_args(t), 2);
    const tprof_op_args *a = tprof_trace_op_args(t);
    assert_string_equal(ev_name(t, &tprof_trace_events(t)[a[0].event]), "aten::mm");
    assert_string_equal(tprof_trace_str(t, a[0].arg[TPROF_OP_DIMS]), "[[8944,1024],[1024,2816]]");
    assert_string_equal(tprof_trace_str(t, a[0].arg[TPROF_OP_TYPES]), "[\"c10::BFloat16\",\"c10::BFloat16\"]");
    assert_string_equal(tprof_trace_str(t, a[0].arg[TPROF_OP_STRIDES]), "[[1024,1],[2816,1]]");
    assert_string_equal(tprof_trace_str(t, a[0].arg[TPROF_OP_CONCRETE]), "[\"\",\"a b\",\"x\\\"y\"]");
    assert_int_equal(a[0].seq, 42);
    assert_int_equal(a[0].fwd_tid, -1);
    assert_string_equal(ev_name(t, &tprof_trace_events(t)[a[1].event]), "MmBackward0");
    assert_string_equal(tprof_trace_str(t, a[1].arg[TPROF_OP_DIMS]), "[]");
    assert_string_equal(tprof_trace_str(t, a[1].arg[TPROF_OP_TYPES]), "");
    assert_int_equal(a[1].seq, 42);
    assert_int_equal(a[1].fwd_tid, 1);
    tprof_trace_free(t);
    tprof_read_opts o = { .keep = TPROF_KEEP_ALL & ~(TPROF_KEEP_OP_ARGS | TPROF_KEEP_AUTOGRAD), .generic_only = g_generic };
    t = read_ok(doc, &o);
    assert_int_equal(tprof_trace_nop_args(t), 0);
    tprof_trace_free(t);
    /* the autograd links alone: no inputs */
    o.keep = TPROF_KEEP_ALL & ~TPROF_KEEP_OP_ARGS;
    t = read_ok(doc, &o);
    assert_int_equal(tprof_trace_nop_args(t), 2);
    a = tprof_trace_op_args(t);
    assert_int_equal(a[0].seq, 42);
    assert_int_equal(a[0].arg[TPROF_OP_DIMS], 0);
    assert_int_equal(a[1].fwd_tid, 1);
    tprof_trace_free(t);
}

/* TPROF_COMPACT_SPANS: ops with the same inputs share one tuple of them; a
 * forward thread id is clamped with its sign kept; a sequence number a
 * span cannot hold keeps its op an event, with its op args. */
static void test_compact_spans(void **state)
{
    (void)state;
    const char *doc =
        "{\"traceEvents\": [\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 10, \"dur\": 5,"
        " \"args\": {\"Sequence number\": 42, \"Input Dims\": [[8, 16], [16, 4]], \"Input type\": [\"float\", \"float\"]}},\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 20, \"dur\": 5,"
        " \"args\": {\"Sequence number\": 43, \"Input Dims\": [[8, 16], [16, 4]], \"Input type\": [\"float\", \"float\"]}},\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"MmBackward0\", \"pid\": 1, \"tid\": 2, \"ts\": 30, \"dur\": 5,"
        " \"args\": {\"Sequence number\": 42, \"Fwd thread id\": 300}},\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, \"tid\": 1, \"ts\": 40, \"dur\": 5,"
        " \"args\": {\"Sequence number\": 3000000000, \"Input Dims\": [[8, 4]]}},\n"
        "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"nn.Module: Linear_0\", \"pid\": 1, \"tid\": 1,"
        " \"ts\": 9, \"dur\": 50}\n"
        "]}";
    tprof_read_opts o = { .keep = TPROF_KEEP(TPROF_KIND_CPU) | TPROF_COMPACT_SPANS | TPROF_KEEP_OP_ARGS, .generic_only = g_generic };
    tprof_trace *t = read_ok(doc, &o);
    assert_int_equal(tprof_trace_nspans(t), 4);
    const tprof_host_span *s = tprof_trace_spans(t);
    assert_int_equal(s[0].seq, 42);
    assert_int_equal(s[1].seq, 43);
    assert_true(s[0].inputs != 0);
    assert_int_equal(s[0].inputs, s[1].inputs);
    const uint32_t *in = tprof_trace_op_inputs(t, s[0].inputs);
    assert_string_equal(tprof_trace_str(t, in[TPROF_OP_DIMS]), "[[8,16],[16,4]]");
    assert_string_equal(tprof_trace_str(t, in[TPROF_OP_TYPES]), "[\"float\",\"float\"]");
    assert_int_equal(in[TPROF_OP_STRIDES], 0);
    assert_int_equal(s[0].fwd_tid, -1);
    assert_int_equal(s[2].fwd_tid, 127); /* 300, clamped: still a backward op */
    assert_int_equal(s[2].inputs, 0);
    assert_int_equal(tprof_trace_op_inputs(t, 0)[TPROF_OP_DIMS], 0);
    assert_string_equal(tprof_trace_str(t, s[3].name), "nn.Module: Linear_0");
    assert_int_equal(s[3].seq, -1);
    assert_int_equal(s[3].inputs, 0);
    /* the op whose sequence number is past INT32_MAX: an event, its op args in the table */
    assert_int_equal(tprof_trace_nop_args(t), 1);
    const tprof_op_args *a = tprof_trace_op_args(t);
    assert_string_equal(ev_name(t, &tprof_trace_events(t)[a[0].event]), "aten::add");
    assert_true(a[0].seq == 3000000000LL);
    assert_string_equal(tprof_trace_str(t, a[0].arg[TPROF_OP_DIMS]), "[[8,4]]");
    tprof_trace_free(t);
}

/* More CPU threads than a compact span's index holds: the read is made
 * again with the spans as events, so nothing is lost (both paths, whole
 * and in parallel chunks, which fall back to one pass first). */
static void test_compact_spans_many_threads(void **state)
{
    (void)state;
    size_t nthreads = TPROF_SPAN_THREADS + 500, cap = nthreads * 160 + 256, len = 0;
    char *doc = malloc(cap);
    assert_non_null(doc);
    len += (size_t)snprintf(doc + len, cap - len, "{\"traceEvents\": [\n");
    for (size_t i = 0; i < nthreads; i++)
        len += (size_t)snprintf(doc + len, cap - len,
                                "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": %zu, "
                                "\"ts\": %zu, \"dur\": 5, \"args\": {\"Sequence number\": %zu}},\n",
                                nthreads - i, 10 + i, i);
    len += (size_t)snprintf(doc + len, cap - len, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, "
                                                  "\"tid\": 7, \"ts\": 20, \"dur\": 5, \"args\": {\"stream\": 7}}\n]}\n");
    for (int chunked = 0; chunked < 2; chunked++) {
        tprof_read_opts o = { .keep = TPROF_KEEP(TPROF_KIND_CPU) | TPROF_KEEP(TPROF_KIND_GPU) | TPROF_COMPACT_SPANS |
                                      TPROF_KEEP_OP_ARGS,
                              .generic_only = g_generic, .threads = chunked ? 2 : 1, .chunk_bytes = chunked ? 65536 : 0 };
        tprof_trace *t = NULL;
        char err[512] = "";
        assert_int_equal(tprof_trace_read_mem(&t, doc, len, "threads.json", &o, err, sizeof err), 0);
        assert_int_equal(tprof_trace_nspans(t), 0);
        assert_int_equal(tprof_trace_nevents(t), nthreads + 1);
        assert_int_equal(tprof_trace_meta_get(t)->ncpu_tracks, nthreads);
        assert_int_equal(tprof_trace_nop_args(t), nthreads);
        tprof_trace_free(t);
    }
    free(doc);
}

/* An op's events in a row with their inputs equal, changed at the same
 * length, changed at another length and back (the fast path's memo of the
 * last op arg at each step of the op's shape, shape.h): each event keeps
 * its own, by both paths, in one chunk and in chunks of 200 bytes. */
static void test_op_args_repeat(void **state)
{
    (void)state;
    static const char *const dims[] = { "[[8,16],[16,4]]", "[[8,16],[16,4]]", "[[8,16],[16,5]]", "[[8,16],[16,4]]",
                                        "[[8,16],[16,4],[4]]", "[[8,16],[16,4]]", "[[8,16],[16,4]]" };
    static const char *const types[] = { "[\"float\"]", "[\"float\"]", "[\"float\"]", "[\"bf16x\"]", "[\"float\"]",
                                         "[\"float\"]", "[\"c10::Half\"]" };
    size_t n = sizeof dims / sizeof *dims;
    char doc[4096];
    size_t len = (size_t)snprintf(doc, sizeof doc, "{\"traceEvents\": [\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(doc + len, sizeof doc - len,
                                "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, "
                                "\"ts\": %zu, \"dur\": 5, \"args\": {\"External id\": %zu, \"Input Dims\": %s, "
                                "\"Input type\": %s}}",
                                i ? ",\n" : "", 10 * i + 10, i + 1, dims[i], types[i]);
    snprintf(doc + len, sizeof doc - len, "\n]}\n");
    for (int chunked = 0; chunked < 2; chunked++) {
        tprof_read_opts o = { .keep = TPROF_KEEP_ALL, .generic_only = g_generic, .threads = chunked ? 3 : 1,
                              .chunk_bytes = chunked ? 200 : 0 };
        tprof_trace *t = read_ok(doc, &o);
        assert_int_equal(tprof_trace_nop_args(t), n);
        const tprof_op_args *a = tprof_trace_op_args(t);
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(tprof_trace_str(t, a[i].arg[TPROF_OP_DIMS]), dims[i]);
            assert_string_equal(tprof_trace_str(t, a[i].arg[TPROF_OP_TYPES]), types[i]);
        }
        tprof_trace_free(t);
    }
}

/* TPROF_SKIP_PLAIN_FRAMES: Python frames are left out but nn.Module ones and
 * phase markers; other CPU spans stay. */
static void test_skip_plain_frames(void **state)
{
    (void)state;
    const char *doc =
        "{\"traceEvents\": [\n"
        "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"train.py(12): step\", \"pid\": 1, \"tid\": 1,"
        " \"ts\": 1, \"dur\": 50},\n"
        "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"nn.Module: Linear_0\", \"pid\": 1, \"tid\": 1,"
        " \"ts\": 2, \"dur\": 40},\n"
        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 3, \"dur\": 5},\n"
        "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"<built-in method mm>\", \"pid\": 1, \"tid\": 1,"
        " \"ts\": 3, \"dur\": 6}\n"
        "]}";
    for (int skip = 0; skip < 2; skip++) {
        tprof_read_opts o = { .keep = TPROF_KEEP(TPROF_KIND_CPU) | (skip ? TPROF_SKIP_PLAIN_FRAMES : 0),
                              .generic_only = g_generic };
        tprof_trace *t = read_ok(doc, &o);
        size_t n = tprof_trace_nevents(t);
        assert_int_equal(n, skip ? 2 : 4);
        if (skip) {
            assert_string_equal(ev_name(t, &tprof_trace_events(t)[0]), "nn.Module: Linear_0");
            assert_string_equal(ev_name(t, &tprof_trace_events(t)[1]), "aten::mm");
        }
        assert_int_equal(tprof_trace_meta_get(t)->nevents, 4); /* counted all the same */
        tprof_trace_free(t);
    }
}

static void test_not_a_trace(void **state)
{
    (void)state;
    expect_read_error("{\"nodes\":[]}", TPROF_ENOTTRACE, "not a trace");
    expect_read_error("[[1,2],[3]]", TPROF_ENOTTRACE, "not a trace");
    expect_read_error("[1,{\"ph\":\"X\"}]", TPROF_ENOTTRACE, "not a trace");
    expect_read_error("{\"traceEvents\":5}", TPROF_ENOTTRACE, "not a trace");
    expect_read_error("{\"traceEvents\":{}}", TPROF_ENOTTRACE, "not a trace");
    expect_read_error("\"hello\"", TPROF_ENOTTRACE, "not a trace");
    expect_read_error("42", TPROF_ENOTTRACE, "not a trace");
    expect_read_error("{}", TPROF_ENOTTRACE, "not a trace");
}

static void test_bad_json(void **state)
{
    (void)state;
    expect_read_error("{\"traceEvents\":[{\"ph\":\"X\",}]}", TPROF_EFORMAT, "byte 26");
    expect_read_error("{\"traceEvents\":[]} x", TPROF_EFORMAT, "byte 19");
    expect_read_error("", TPROF_EFORMAT, NULL);
}

/* ---- truncation ------------------------------------------------------- */

static void test_truncated_trace(void **state)
{
    (void)state;
    char *doc = sample("AEB");
    const char *p = strstr(doc, "Memcpy HtoD");
    assert_non_null(p);
    size_t cut = (size_t)(p - doc);
    tprof_trace *t = NULL;
    char err[512] = "";
    int rc = tprof_trace_read_mem(&t, doc, cut, "cut.json", OPTS, err, sizeof err);
    assert_int_equal(rc, TPROF_ETRUNC);
    assert_non_null(t);
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    assert_int_equal(m->truncated, 1);
    /* the step, the launch and the sgemm kernel were complete */
    assert_int_equal(m->nevents, 3);
    assert_int_equal(tprof_trace_nevents(t), 3);
    const tprof_event *ev = tprof_trace_events(t);
    assert_string_equal(ev_name(t, &ev[2]), "ampere_sgemm_128x64_tn");
    assert_int_equal(ev[2].dur, 30250);
    assert_int_equal(m->nsteps, 1);
    assert_int_equal(m->ndevices, 2);
    assert_int_equal(m->rank, 3);
    const char *why = tprof_trace_truncation(t);
    assert_true(strlen(why) > 0);
    assert_non_null(strstr(why, "cut.json"));
    tprof_trace_free(t);
    free(doc);
}

/* Every cut of the sample gives TPROF_ETRUNC with what came before kept. */
static void test_truncated_every_byte(void **state)
{
    (void)state;
    char *doc = sample("AEB");
    size_t len = strlen(doc);
    uint64_t prev = 0;
    char bad[1024] = "";
    size_t nbad = 0;
    for (size_t cut = 1; cut < len; cut++) {
        tprof_trace *t = NULL;
        char err[512] = "";
        int rc = tprof_trace_read_mem(&t, doc, cut, "cut.json", OPTS, err, sizeof err);
        if (rc != TPROF_ETRUNC || !t) {
            if (nbad++ < 6) {
                size_t l = strlen(bad);
                snprintf(bad + l, sizeof bad - l, "\n  cut %zu: rc %d: %s", cut, rc, err);
            }
            tprof_trace_free(t);
            continue;
        }
        const tprof_trace_meta *m = tprof_trace_meta_get(t);
        assert_int_equal(m->truncated, 1);
        assert_true(m->nevents >= prev);
        assert_true(m->nevents <= 8);
        assert_true(tprof_trace_nevents(t) <= m->nevents);
        prev = m->nevents;
        tprof_trace_free(t);
    }
    assert_int_equal(prev, 8);
    free(doc);
    if (nbad) fail_msg("%zu cuts did not give TPROF_ETRUNC with a trace:%s", nbad, bad);
}

/* ---- files, gzip, progress, several files ----------------------------- */

typedef struct {
    int calls;
    char path[512];
} progress_log;

static void on_progress(void *ctx, const char *path, uint64_t bytes_in, int64_t file_size)
{
    progress_log *l = ctx;
    l->calls++;
    snprintf(l->path, sizeof l->path, "%s", path);
    assert_true(file_size < 0 || bytes_in <= (uint64_t)file_size);
}

static void test_files_plain_and_gzip(void **state)
{
    (void)state;
    char *doc = sample("AEB");
    size_t len = strlen(doc);
    size_t clen;
    uint8_t *gz = gzip_make(doc, len, &clen);
    char *plain = write_temp("rank3.json", doc, len);
    char *comp = write_temp("rank3.json", gz, clen); /* gzip under a .json name */

    progress_log log = { 0 };
    tprof_read_opts o = { .keep = TPROF_KEEP_ALL, .progress = on_progress, .progress_ctx = &log,
                          .generic_only = g_generic };
    tprof_trace *t;
    char err[512] = "";
    assert_int_equal(tprof_trace_read(&t, plain, &o, err, sizeof err), 0);
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    assert_string_equal(m->path, plain);
    assert_int_equal(m->compression, TPROF_COMP_NONE);
    assert_int_equal(m->file_size, (int64_t)len);
    assert_int_equal(m->bytes_in, len);
    assert_int_equal(m->bytes_json, len);
    assert_int_equal(m->nevents, 8);
    assert_true(log.calls >= 1);
    assert_string_equal(log.path, plain);
    tprof_trace_free(t);

    assert_int_equal(tprof_trace_read(&t, comp, OPTS, err, sizeof err), 0);
    m = tprof_trace_meta_get(t);
    assert_int_equal(m->compression, TPROF_COMP_GZIP);
    assert_int_equal(m->file_size, (int64_t)clen);
    assert_int_equal(m->bytes_in, clen);
    assert_int_equal(m->bytes_json, len);
    assert_int_equal(m->nevents, 8);
    assert_int_equal(m->rank, 3);
    tprof_trace_free(t);

    /* a gzip trace cut in the middle */
    remove_temp(comp);
    comp = write_temp("cut.json.gz", gz, clen / 2);
    int rc = tprof_trace_read(&t, comp, OPTS, err, sizeof err);
    assert_int_equal(rc, TPROF_ETRUNC);
    assert_non_null(t);
    m = tprof_trace_meta_get(t);
    assert_int_equal(m->truncated, 1);
    assert_int_equal(m->compression, TPROF_COMP_GZIP);
    assert_true(m->nevents < 8);
    assert_true(strlen(tprof_trace_truncation(t)) > 0);
    tprof_trace_free(t);

    /* a missing file */
    t = (tprof_trace *)(uintptr_t)1;
    rc = tprof_trace_read(&t, "/tmp/tprof_unit_no_such_dir/x.json", OPTS, err, sizeof err);
    assert_int_equal(rc, TPROF_EIO);
    assert_null(t);
    assert_non_null(strstr(err, "/tmp/tprof_unit_no_such_dir/x.json"));

    remove_temp(plain);
    remove_temp(comp);
    free(gz);
    free(doc);
}

static void test_read_many(void **state)
{
    (void)state;
    char *doc = sample("EAB");
    size_t len = strlen(doc);
    size_t clen;
    uint8_t *gz = gzip_make(doc, len, &clen);
    char *a = write_temp("a.json", doc, len);
    char *b = write_temp("b.json.gz", gz, clen);
    char *c = write_temp("c.json", gz, clen / 3);
    const char *paths[] = { a, b, c, "/tmp/tprof_unit_no_such_dir/d.json" };
    tprof_read_result res[4];
    memset(res, 0, sizeof res);
    int rc = tprof_trace_read_many(paths, 4, OPTS, 3, res);
    assert_int_equal(rc, TPROF_EIO);
    assert_int_equal(res[0].rc, 0);
    assert_int_equal(res[1].rc, 0);
    assert_int_equal(res[2].rc, TPROF_ETRUNC);
    assert_int_equal(res[3].rc, TPROF_EIO);
    assert_non_null(res[0].trace);
    assert_non_null(res[1].trace);
    assert_non_null(res[2].trace);
    assert_null(res[3].trace);
    assert_non_null(strstr(res[3].err, "d.json"));
    assert_int_equal(tprof_trace_meta_get(res[0].trace)->nevents, 8);
    assert_int_equal(tprof_trace_meta_get(res[1].trace)->nevents, 8);
    assert_int_equal(tprof_trace_meta_get(res[1].trace)->compression, TPROF_COMP_GZIP);
    for (int i = 0; i < 4; i++) tprof_trace_free(res[i].trace);

    /* truncated files count as read */
    memset(res, 0, sizeof res);
    assert_int_equal(tprof_trace_read_many(paths, 3, OPTS, 0, res), 0);
    for (int i = 0; i < 3; i++) tprof_trace_free(res[i].trace);

    remove_temp(a);
    remove_temp(b);
    remove_temp(c);
    free(gz);
    free(doc);
}

/* ---- the fast and the generic event paths agree ----------------------- */

static const char *pick(uint64_t *seed, const char *const *v, size_t n) { return v[rng_next(seed) % n]; }

/* A random but valid trace in the shapes real traces take, and the unusual
 * ones a reader must survive: key order, whitespace, escapes, string
 * numbers, exponents, nested args, missing or bad fields. */
static char *random_trace(uint64_t seed, size_t nevents)
{
    static const char *const phs[] = { "X", "X", "X", "X", "i", "I", "f", "s", "t", "C", "M", "B", "E", "?", "" };
    static const char *const cats[] = { "kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cpu_op",
                                        "user_annotation", "cuda_sync", "gpu_user_annotation", "python_function",
                                        "cuda_driver", "Kernel", "k\\u0065rnel", NULL };
    static const char *const names[] = { "ampere_sgemm_128x64_tn", "ncclDevKernel_SendRecv(ncclDevComm*)",
                                         "Memcpy HtoD (Pinned -> Device)", "Memset (Device)", "cudaLaunchKernel",
                                         "aten::mm", "ProfilerStep#3", "ProfilerStep#12", "caf\\u00e9 \\ud83d\\ude00",
                                         "q\\\"x\\\\y", "raw \xc3\xa9\xe2\x82\xac", "Event Sync", "", "hcom_x_",
                                         "ProfilerStep#", "ProfilerStep#x" };
    static const char *const ws[] = { "", "", "", " ", "\n", "\t ", "\r\n  " };
    ubuf b = { 0 };
    ubuf_str(&b, "{\"schemaVersion\": 1, \"otherData\": {\"x\": [1, {\"y\": null}]},\n\"traceEvents\": [\n");
    for (size_t i = 0; i < nevents; i++) {
        if (i) ubuf_printf(&b, ",%s", pick(&seed, ws, 7));
        uint64_t r = rng_next(&seed);
        if (r % 97 == 0) { /* not an object */
            ubuf_str(&b, r % 2 ? "[1, {\"a\": 2}]" : "17");
            continue;
        }
        const char *W = pick(&seed, ws, 7);
        /* fields in a random order */
        int order[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
        for (int k = 9; k > 0; k--) {
            int m = (int)(rng_next(&seed) % (uint64_t)(k + 1));
            int tmp = order[k];
            order[k] = order[m];
            order[m] = tmp;
        }
        ubuf_printf(&b, "{%s", W);
        int first = 1;
        for (int k = 0; k < 10; k++) {
            uint64_t x = rng_next(&seed);
            char field[512];
            field[0] = 0;
            switch (order[k]) {
            case 0: snprintf(field, sizeof field, "\"ph\":%s\"%s\"", W, pick(&seed, phs, 15)); break;
            case 1: {
                const char *c = pick(&seed, cats, 13);
                if (c) snprintf(field, sizeof field, "\"cat\": \"%s\"", c);
                break;
            }
            case 2:
                if (x % 20) snprintf(field, sizeof field, "\"name\": \"%s\"", pick(&seed, names, 16));
                else if (x % 40 == 0) snprintf(field, sizeof field, "\"name\": 5");
                break;
            case 3: {
                long long us = 1000 + (long long)i * 10 + (long long)(x % 7);
                switch (x % 23) {
                case 0: break; /* missing */
                case 1: snprintf(field, sizeof field, "\"ts\": \"x\""); break;
                case 2: snprintf(field, sizeof field, "\"ts\": \"%lld.%03d\"", us, (int)(x % 1000)); break;
                case 3: snprintf(field, sizeof field, "\"ts\": %lld.5e0", us); break;
                case 4: snprintf(field, sizeof field, "\"ts\": %lld.123456789", us); break;
                case 5: snprintf(field, sizeof field, "\"ts\": %llde-0", us); break;
                case 6: snprintf(field, sizeof field, "\"ts\": true"); break;
                default: snprintf(field, sizeof field, "\"ts\":%s%lld.%03d", W, us, (int)(x % 1000)); break;
                }
                break;
            }
            case 4:
                switch (x % 19) {
                case 0: break;
                case 1: snprintf(field, sizeof field, "\"dur\": -3"); break;
                case 2: snprintf(field, sizeof field, "\"dur\": 90000000000"); break;
                case 3: snprintf(field, sizeof field, "\"dur\": \"12.5\""); break;
                case 4: snprintf(field, sizeof field, "\"dur\": null"); break;
                case 5: snprintf(field, sizeof field, "\"dur\": 1.25E+1"); break;
                case 6: snprintf(field, sizeof field, "\"dur\": [1]"); break;
                default: snprintf(field, sizeof field, "\"dur\": %d.%d", (int)(x % 50), (int)(x % 10)); break;
                }
                break;
            case 5:
                if (x % 13 == 0) snprintf(field, sizeof field, "\"pid\": \"Spans %d\"", (int)(x % 3));
                else if (x % 13 == 1) snprintf(field, sizeof field, "\"pid\": \"%d\"", (int)(x % 5));
                else if (x % 13 != 2) snprintf(field, sizeof field, "\"pid\": %d", (int)(x % 4));
                break;
            case 6:
                if (x % 11 == 0) snprintf(field, sizeof field, "\"tid\": \"stream %d\"", (int)(x % 3));
                else if (x % 11 != 1) snprintf(field, sizeof field, "\"tid\": %d", (int)(x % 9));
                break;
            case 7:
                if (x % 3 == 0) {
                    ubuf a = { 0 };
                    ubuf_str(&a, "\"args\": {");
                    int n = 0;
                    static const char *const keys[] = { "device", "stream", "correlation", "External id",
                                                        "external id", "bytes", "Stream Id", "Task Type",
                                                        "grid", "cbid", "Trace name", "de\\u0076ice" };
                    int nk = (int)(rng_next(&seed) % 7);
                    for (int q = 0; q < nk; q++) {
                        uint64_t y = rng_next(&seed);
                        const char *key = keys[y % 12];
                        if (n++) ubuf_str(&a, ", ");
                        switch ((y >> 8) % 9) {
                        case 0: ubuf_printf(&a, "\"%s\": \"%d\"", key, (int)(y % 100)); break;
                        case 1: ubuf_printf(&a, "\"%s\": [%d, {\"z\": [[]]}]", key, (int)(y % 5)); break;
                        case 2: ubuf_printf(&a, "\"%s\": %d.0", key, (int)(y % 100)); break;
                        case 3: ubuf_printf(&a, "\"%s\": %d.5", key, (int)(y % 100)); break;
                        case 4: ubuf_printf(&a, "\"%s\": null", key); break;
                        case 5: ubuf_printf(&a, "\"%s\": {\"n\": {\"m\": 1}}", key); break;
                        case 6: ubuf_printf(&a, "\"%s\": \"AI_\\u0043ORE\"", key); break;
                        default: ubuf_printf(&a, "\"%s\":%s%d", key, W, (int)(y % 100)); break;
                        }
                    }
                    ubuf_str(&a, "}");
                    snprintf(field, sizeof field, "%s", (const char *)a.p);
                    ubuf_free(&a);
                } else if (x % 3 == 1)
                    snprintf(field, sizeof field, "\"args\": {\"device\": %d, \"stream\": %d, \"correlation\": %d}",
                             (int)(x % 2), (int)(x % 3) + 7, (int)(i % 50));
                else if (x % 17 == 2)
                    snprintf(field, sizeof field, "\"args\": [1, 2]");
                break;
            case 8:
                if (x % 5 == 0) snprintf(field, sizeof field, "\"id\": %d", (int)(x % 30));
                else if (x % 5 == 1) snprintf(field, sizeof field, "\"id\": \"0x%x\"", (unsigned)(x % 30));
                break;
            case 9:
                if (x % 4 == 0) snprintf(field, sizeof field, "\"extra\": {\"a\": [true, false, \"s\\n\"], \"b\": -1e-5}");
                else if (x % 4 == 1) snprintf(field, sizeof field, "\"s\": \"t\", \"bp\": \"e\"");
                break;
            }
            if (!field[0]) continue;
            if (!first) ubuf_printf(&b, ",%s", W);
            first = 0;
            ubuf_str(&b, field);
        }
        ubuf_printf(&b, "%s}", W);
    }
    ubuf_str(&b, "\n], \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU\"}],\n"
                 "\"distributedInfo\": {\"rank\": 1, \"world_size\": 2, \"backend\": \"nccl\"}}\n");
    char *d = strdup((const char *)b.p);
    ubuf_free(&b);
    assert_non_null(d);
    return d;
}

static void same_event(const tprof_trace *a, const tprof_trace *b, size_t i)
{
    const tprof_event *x = &tprof_trace_events(a)[i], *y = &tprof_trace_events(b)[i];
#define SAME(f)                                                                                           \
    do {                                                                                                  \
        if (x->f != y->f)                                                                                 \
            fail_msg("event %zu ('%s'): " #f " %lld (fast) vs %lld (generic)", i, ev_name(a, x),            \
                     (long long)x->f, (long long)y->f);                                                   \
    } while (0)
    SAME(ts);
    SAME(dur);
    SAME(correlation);
    SAME(external_id);
    SAME(flow_id);
    SAME(bytes);
    SAME(device);
    SAME(stream);
    SAME(ph);
    SAME(kind);
    SAME(klass);
    SAME(flags);
    if (x->flags & TPROF_EV_PID_STR) assert_string_equal(tprof_trace_str(a, (uint32_t)x->pid), tprof_trace_str(b, (uint32_t)y->pid));
    else SAME(pid);
    if (x->flags & TPROF_EV_TID_STR) assert_string_equal(tprof_trace_str(a, (uint32_t)x->tid), tprof_trace_str(b, (uint32_t)y->tid));
    else SAME(tid);
#undef SAME
    if (strcmp(ev_name(a, x), ev_name(b, y)) != 0)
        fail_msg("event %zu: name '%s' (fast) vs '%s' (generic)", i, ev_name(a, x), ev_name(b, y));
    assert_string_equal(tprof_trace_str(a, x->cat), tprof_trace_str(b, y->cat));
}

static void same_trace(const tprof_trace *a, const tprof_trace *b)
{
    const tprof_trace_meta *m = tprof_trace_meta_get(a), *n = tprof_trace_meta_get(b);
    assert_int_equal(m->nevents, n->nevents);
    for (int k = 0; k < TPROF_KIND_COUNT; k++) assert_int_equal(m->kind_counts[k], n->kind_counts[k]);
    assert_int_equal(m->warn.dur_missing, n->warn.dur_missing);
    assert_int_equal(m->warn.dur_negative, n->warn.dur_negative);
    assert_int_equal(m->warn.dur_absurd, n->warn.dur_absurd);
    assert_int_equal(m->warn.dur_invalid, n->warn.dur_invalid);
    assert_int_equal(m->warn.ts_missing, n->warn.ts_missing);
    assert_int_equal(m->warn.ts_bad, n->warn.ts_bad);
    assert_int_equal(m->warn.non_object_events, n->warn.non_object_events);
    assert_int_equal(m->warn.first_offset, n->warn.first_offset);
    assert_int_equal(m->ts_min, n->ts_min);
    assert_int_equal(m->ts_max, n->ts_max);
    assert_int_equal(m->nsteps, n->nsteps);
    for (size_t i = 0; i < m->nsteps; i++) {
        assert_int_equal(m->steps[i].number, n->steps[i].number);
        assert_int_equal(m->steps[i].ts, n->steps[i].ts);
        assert_int_equal(m->steps[i].dur, n->steps[i].dur);
    }
    assert_int_equal(m->ngpu_tracks, n->ngpu_tracks);
    for (size_t i = 0; i < m->ngpu_tracks; i++) {
        assert_int_equal(m->gpu_tracks[i].device, n->gpu_tracks[i].device);
        assert_int_equal(m->gpu_tracks[i].stream, n->gpu_tracks[i].stream);
        assert_int_equal(m->gpu_tracks[i].events, n->gpu_tracks[i].events);
    }
    assert_int_equal(m->ncats, n->ncats);
    for (size_t i = 0; i < m->ncats; i++) assert_int_equal(m->cats[i].count, n->cats[i].count);
    assert_int_equal(m->truncated, n->truncated);
    assert_int_equal(m->bytes_json, n->bytes_json);
    assert_int_equal(m->rank, n->rank);
    assert_int_equal(tprof_trace_nevents(a), tprof_trace_nevents(b));
    for (size_t i = 0; i < tprof_trace_nevents(a); i++) same_event(a, b, i);
}

static int read_path(const char *doc, size_t len, int generic, uint32_t keep, tprof_trace **t, char *err,
                     size_t errlen)
{
    tprof_read_opts o = { .keep = keep, .generic_only = generic };
    *t = NULL;
    err[0] = 0;
    return tprof_trace_read_mem(t, doc, len, "rnd.json", &o, err, errlen);
}

static void test_paths_agree(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        char *doc = random_trace(seed * 7919, seed == 3 ? 12000 : 2000); /* the last is > 1 MiB */
        size_t len = strlen(doc);
        if (seed == 3) assert_true(len > (1u << 20));
        static const uint32_t keeps[] = { TPROF_KEEP_ALL, TPROF_KEEP(TPROF_KIND_GPU) | TPROF_KEEP(TPROF_KIND_RUNTIME) };
        for (size_t k = 0; k < 2; k++) {
            tprof_trace *a, *b;
            char ea[512], eb[512];
            int ra = read_path(doc, len, 0, keeps[k], &a, ea, sizeof ea);
            int rb = read_path(doc, len, 1, keeps[k], &b, eb, sizeof eb);
            if (ra || rb) fail_msg("seed %llu: fast rc %d '%s', generic rc %d '%s'", (unsigned long long)seed, ra, ea, rb, eb);
            assert_true(tprof_trace_meta_get(a)->nevents > 100);
            same_trace(a, b);
            tprof_trace_free(a);
            tprof_trace_free(b);
        }
        /* cut at many places: same code, same events */
        uint64_t cs = seed;
        for (int c = 0; c < 60; c++) {
            size_t cut = 1 + (size_t)(rng_next(&cs) % (len - 1));
            tprof_trace *a, *b;
            char ea[512], eb[512];
            int ra = read_path(doc, cut, 0, TPROF_KEEP_ALL, &a, ea, sizeof ea);
            int rb = read_path(doc, cut, 1, TPROF_KEEP_ALL, &b, eb, sizeof eb);
            if (ra != rb) fail_msg("seed %llu cut %zu: fast rc %d '%s', generic rc %d '%s'", (unsigned long long)seed, cut, ra, ea, rb, eb);
            if (a && b) same_trace(a, b);
            else assert_true(!a && !b);
            if (!a) assert_string_equal(ea, eb);
            tprof_trace_free(a);
            tprof_trace_free(b);
        }
        free(doc);
    }
}

/* Damaged documents: both paths fail (or not) alike, with the same message. */
static void test_paths_agree_on_errors(void **state)
{
    (void)state;
    char *doc = random_trace(4242, 800);
    size_t len = strlen(doc);
    static const char junk[] = { '}', ']', ',', ':', '"', '\\', 'x', '\x01', '\xc0', '\xff', '{', '[', '-', '.', '0', 'e' };
    uint64_t s = 99;
    char *bad = malloc(len + 1);
    assert_non_null(bad);
    for (int c = 0; c < 400; c++) {
        memcpy(bad, doc, len + 1);
        size_t at = 60 + (size_t)(rng_next(&s) % (len - 61));
        bad[at] = junk[rng_next(&s) % sizeof junk];
        tprof_trace *a, *b;
        char ea[512], eb[512];
        int ra = read_path(bad, len, 0, TPROF_KEEP_ALL, &a, ea, sizeof ea);
        int rb = read_path(bad, len, 1, TPROF_KEEP_ALL, &b, eb, sizeof eb);
        if (ra != rb || strcmp(ea, eb) != 0)
            fail_msg("byte %zu set to 0x%02x: fast rc %d '%s', generic rc %d '%s'", at, (unsigned char)bad[at], ra, ea, rb, eb);
        if (a && b) same_trace(a, b);
        tprof_trace_free(a);
        tprof_trace_free(b);
    }
    free(bad);
    free(doc);
}

/* A record_param_comms span's collective metadata, with and without its
 * process group and sequence number. */
static void test_collective_calls(void **state)
{
    (void)state;
    const char *doc =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"record_param_comms\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":5,"
        "\"args\":{\"Collective name\":\"allreduce\",\"dtype\":\"BFloat16\",\"In msg nelems\":1024,"
        "\"Out msg nelems\":1024,\"Group size\":8,\"Process Group Name\":\"3\",\"Process Group Ranks\":\"[0, 1]\","
        "\"Seq\":41}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"record_param_comms\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":5,"
        "\"args\":{\"Collective name\":\"broadcast\",\"dtype\":\"Float\"}}]}";
    tprof_trace *t = read_ok(doc, NULL);
    assert_int_equal(tprof_trace_ncalls(t), 2);
    const tprof_collective_call *c = tprof_trace_calls(t);
    assert_string_equal(tprof_trace_str(t, c[0].name), "allreduce");
    assert_string_equal(tprof_trace_str(t, c[0].group), "3");
    assert_int_equal(c[0].seq, 41);
    assert_int_equal(c[0].group_size, 8);
    assert_int_equal(c[0].in_nelems, 1024);
    assert_string_equal(tprof_trace_str(t, c[1].group), "");
    assert_int_equal(c[1].seq, -1);
    assert_int_equal(c[1].group_size, -1);
    tprof_trace_free(t);
}

/* Names that collide in the reader's name memo (same length, same first
 * bytes), met in turns, one with a NUL (stored as U+2400) and the empty
 * name: each event keeps its own. */
static void test_name_memo(void **state)
{
    (void)state;
    enum { N = 600 };
    size_t cap = N * 120 + 256, len = 0;
    char *doc = malloc(cap);
    assert_non_null(doc);
    len += (size_t)snprintf(doc + len, cap - len, "{\"traceEvents\":[\n");
    for (int i = 0; i < N; i++) {
        int k = (i * 7) % 13; /* 13 names in a changing order */
        const char *name = k == 11 ? "aten::op\\u0000z0" : k == 12 ? "" : NULL;
        char buf[32];
        if (!name) snprintf(buf, sizeof buf, "aten::op_%03d", k), name = buf;
        len += (size_t)snprintf(doc + len, cap - len,
                                "%s{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1}",
                                i ? ",\n" : "", name, i);
    }
    len += (size_t)snprintf(doc + len, cap - len, "]}\n");
    tprof_trace *t = read_ok(doc, NULL);
    const tprof_event *ev = tprof_trace_events(t);
    assert_int_equal(tprof_trace_nevents(t), N);
    for (int i = 0; i < N; i++) {
        int k = (i * 7) % 13;
        char want[32];
        if (k == 11) snprintf(want, sizeof want, "aten::op\xe2\x90\x80z0");
        else if (k == 12) want[0] = 0;
        else snprintf(want, sizeof want, "aten::op_%03d", k);
        assert_string_equal(tprof_trace_str(t, ev[i].name), want);
    }
    tprof_trace_free(t);
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_object_meta_before_and_after),
        cmocka_unit_test(test_object_defaults_when_absent),
        cmocka_unit_test(test_array_form_string_ts),
        cmocka_unit_test(test_dur_and_ts_warnings),
        cmocka_unit_test(test_keep_mask),
        cmocka_unit_test(test_op_args),
        cmocka_unit_test(test_compact_spans),
        cmocka_unit_test(test_compact_spans_many_threads),
        cmocka_unit_test(test_op_args_repeat),
        cmocka_unit_test(test_skip_plain_frames),
        cmocka_unit_test(test_not_a_trace),
        cmocka_unit_test(test_bad_json),
        cmocka_unit_test(test_truncated_trace),
        cmocka_unit_test(test_truncated_every_byte),
        cmocka_unit_test(test_files_plain_and_gzip),
        cmocka_unit_test(test_read_many),
        cmocka_unit_test(test_name_memo),
        cmocka_unit_test(test_collective_calls),
    };
    const struct CMUnitTest cross[] = {
        cmocka_unit_test(test_paths_agree),
        cmocka_unit_test(test_paths_agree_on_errors),
    };
    /* last: an overflow here aborts a sanitizer build */
    const struct CMUnitTest extremes[] = {
        cmocka_unit_test(test_extreme_timestamps),
    };
    int failed = 0;
    failed += cmocka_run_group_tests_name("fast event path", tests, setup_fast, NULL);
    failed += cmocka_run_group_tests_name("generic event path", tests, setup_generic, NULL);
    failed += cmocka_run_group_tests_name("both paths", cross, NULL, NULL);
    failed += cmocka_run_group_tests_name("extreme timestamps, fast path", extremes, setup_fast, NULL);
    failed += cmocka_run_group_tests_name("extreme timestamps, generic path", extremes, setup_generic, NULL);
    return failed ? 1 : 0;
}
