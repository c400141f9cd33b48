/* The recording library: ProfileConfig parsing (every syntax, every error),
 * the schedule against VeOmni's table, file naming, the buffer limit, the
 * step line. Expectations come from docs/RECORDING.md and the reference's
 * table, not from the library's output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>
#include <zlib.h>

#include "trainprof/error.h"
#include "trainprof/profiler.h"

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tprof_unit_record_XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    tprof_profiler_set_log(NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_defaults(void **state)
{
    (void)state;
    tprof_profile_config c;
    tprof_config_default(&c);
    assert_false(c.enable);
    assert_int_equal(c.start_step, 1);
    assert_int_equal(c.end_step, 2);
    assert_string_equal(c.trace_dir, "./trace");
    assert_true(c.record_shapes);
    assert_true(c.profile_memory);
    assert_true(c.with_stack);
    assert_false(c.with_modules);
    assert_true(c.rank0_only);
    assert_string_equal(c.prefix, "trainprof");
    assert_int_equal(tprof_config_validate(&c, NULL, 0), 0);
}

static void test_set_bools(void **state)
{
    (void)state;
    tprof_profile_config c;
    tprof_config_default(&c);
    const char *yes[] = { "yes", "TRUE", "t", "Y", "1", "True" }, *no[] = { "no", "false", "F", "n", "0", "NO" };
    for (int i = 0; i < 6; i++) {
        assert_int_equal(tprof_config_set(&c, "enable", yes[i], NULL, 0), 0);
        assert_true(c.enable);
        assert_int_equal(tprof_config_set(&c, "enable", no[i], NULL, 0), 0);
        assert_false(c.enable);
    }
    char err[256];
    assert_int_equal(tprof_config_set(&c, "enable", "maybe", err, sizeof err), TPROF_EUSAGE);
    assert_non_null(strstr(err, "Boolean value expected"));
    assert_int_equal(tprof_config_set(&c, "start_step", "5x", err, sizeof err), TPROF_EUSAGE);
    assert_non_null(strstr(err, "train.profile.start_step"));
    assert_int_equal(tprof_config_set(&c, "start_step", "99999999999", err, sizeof err), TPROF_EUSAGE);
    assert_int_equal(tprof_config_set(&c, "nope", "1", err, sizeof err), TPROF_EUSAGE);
    assert_non_null(strstr(err, "unknown key train.profile.nope"));
}

static int others_seen;
static int other(void *ud, const char *key, const char *value, char *errbuf, size_t errlen)
{
    (void)ud;
    (void)errbuf;
    (void)errlen;
    if (strcmp(key, "train.max_steps") == 0) {
        others_seen += atoi(value);
        return 0;
    }
    return 1;
}

static int parse(tprof_profile_config *c, char *err, size_t errlen, int n, ...)
{
    char *argv[32];
    va_list ap;
    va_start(ap, n);
    argv[0] = "prog";
    for (int i = 0; i < n; i++) argv[i + 1] = va_arg(ap, char *);
    va_end(ap);
    argv[n + 1] = NULL;
    int argc = n + 1;
    tprof_config_default(c);
    int rc = tprof_config_from_args(c, &argc, argv, other, NULL, err, errlen);
    return rc ? rc : argc; /* what is left for the program */
}

static void test_args_syntax(void **state)
{
    (void)state;
    tprof_profile_config c;
    char err[512];
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.enable"), 1);
    assert_true(c.enable);
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.enable=true"), 1);
    assert_true(c.enable);
    assert_int_equal(parse(&c, err, sizeof err, 2, "--train.profile.enable", "true"), 1);
    assert_true(c.enable);
    assert_int_equal(parse(&c, err, sizeof err, 2, "--train.profile.rank0_only", "N"), 1);
    assert_false(c.rank0_only);
    /* a bare flag followed by another flag */
    assert_int_equal(parse(&c, err, sizeof err, 3, "--train.profile.enable", "--train.profile.end_step", "9"), 1);
    assert_true(c.enable);
    assert_int_equal(c.end_step, 9);
    assert_int_equal(parse(&c, err, sizeof err, 2, "--train.profile.start_step=5", "--train.profile.end_step=10"), 1);
    assert_int_equal(c.start_step, 5);
    assert_int_equal(c.end_step, 10);
    assert_int_equal(parse(&c, err, sizeof err, 4, "--train.profile.start_step", "5", "--train.profile.end_step", "6"), 1);
    assert_int_equal(c.start_step, 5);
    assert_int_equal(parse(&c, err, sizeof err, 2, "--train.profile.trace_dir", "/x/y"), 1);
    assert_string_equal(c.trace_dir, "/x/y");
    /* the program's own arguments stay, in order; its dotted keys go to the callback */
    others_seen = 0;
    char *argv[] = { "prog", "--lr", "--train.max_steps=7", "--train.profile.enable", "pos", "--train.max_steps", "3", NULL };
    int argc = 7;
    tprof_config_default(&c);
    assert_int_equal(tprof_config_from_args(&c, &argc, argv, other, NULL, err, sizeof err), 0);
    assert_int_equal(others_seen, 10);
    assert_int_equal(argc, 3);
    assert_string_equal(argv[1], "--lr");
    assert_string_equal(argv[2], "pos");
    assert_null(argv[3]);
}

static void test_args_errors(void **state)
{
    (void)state;
    tprof_profile_config c;
    char err[512];
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.enable=perhaps"), TPROF_EUSAGE);
    assert_non_null(strstr(err, "Boolean value expected"));
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.start_step=five"), TPROF_EUSAGE);
    assert_non_null(strstr(err, "an integer expected"));
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.start_step"), TPROF_EUSAGE);
    assert_non_null(strstr(err, "expected one argument"));
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.colour=red"), TPROF_EUSAGE);
    assert_non_null(strstr(err, "unknown key train.profile.colour"));
    assert_int_equal(parse(&c, err, sizeof err, 2, "--train.profile.start_step=5", "--train.profile.end_step=5"),
                     TPROF_EUSAGE);
    assert_non_null(strstr(err, "end_step = 5: must be greater than start_step = 5"));
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.start_step=0"), TPROF_EUSAGE);
    assert_non_null(strstr(err, "start_step = 0: must be >= 1"));
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.trace_dir=hdfs://a/b"), TPROF_EUSAGE);
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.prefix=a/b"), TPROF_EUSAGE);
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.max_events=3"), TPROF_EUSAGE);
}

static void program_handler(int sig) { (void)sig; }

/* A handler the program installs after start survives stop; the ones the
 * profiler installed (where the default was) go back to the default. */
static void test_signals_kept(void **state)
{
    (void)state;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    tprof_profile_config c;
    tprof_config_default(&c);
    c.enable = true;
    snprintf(c.trace_dir, sizeof c.trace_dir, "%s/g", tmpdir);
    tprof_profiler_set_rank(0, 1);
    assert_int_equal(tprof_profiler_start(&c, NULL, 0), 0);
    struct sigaction now;
    assert_int_equal(sigaction(SIGTERM, NULL, &now), 0);
    assert_true(now.sa_handler != SIG_DFL); /* the profiler's */
    signal(SIGINT, program_handler);
    tprof_profiler_stop();
    assert_int_equal(sigaction(SIGINT, NULL, &now), 0);
    assert_true(now.sa_handler == program_handler);
    assert_int_equal(sigaction(SIGTERM, NULL, &now), 0);
    assert_true(now.sa_handler == SIG_DFL);
    signal(SIGINT, SIG_DFL);
}

/* argc == 0 (execve with an empty argv): argv is only its NULL end, which
 * must stay the only slot written; the config is still validated. */
static void test_args_empty(void **state)
{
    (void)state;
    tprof_profile_config c;
    char err[512];
    char *argv[2] = { NULL, (char *)"canary" };
    int argc = 0;
    tprof_config_default(&c);
    assert_int_equal(tprof_config_from_args(&c, &argc, argv, other, NULL, err, sizeof err), 0);
    assert_int_equal(argc, 0);
    assert_null(argv[0]);
    assert_string_equal(argv[1], "canary");
    c.max_events = 3;
    assert_int_equal(tprof_config_from_args(&c, &argc, argv, other, NULL, err, sizeof err), TPROF_EUSAGE);
}

/* max_events has an upper bound: 2^61 events once wrapped cap*72 to 0. */
static void test_max_events_bound(void **state)
{
    (void)state;
    tprof_profile_config c;
    char err[512];
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.max_events=2305843009213693952"), TPROF_EUSAGE);
    assert_non_null(strstr(err, "max_events = 2305843009213693952: must be <= 1<<26"));
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.max_events=67108865"), TPROF_EUSAGE);
    assert_int_equal(parse(&c, err, sizeof err, 1, "--train.profile.max_events=67108864"), 1);
    assert_int_equal(c.max_events, TPROF_MAX_EVENTS_LIMIT);
    tprof_config_default(&c);
    c.max_events = INT64_MAX;
    assert_int_equal(tprof_config_validate(&c, err, sizeof err), TPROF_EUSAGE);
    /* start refuses it too, before any buffer is made */
    c.enable = true;
    assert_int_equal(tprof_profiler_start(&c, err, sizeof err), TPROF_EUSAGE);
    assert_false(tprof_profiler_active());
}

static void test_yaml(void **state)
{
    (void)state;
    char path[400], err[1024];
    snprintf(path, sizeof path, "%s/c.yaml", tmpdir);
    write_file(path, "model:\n  name: x\n  layers: [1, 2]\ntrain:\n  max_steps: 4\n  profile:\n    enable: yes\n"
                     "    start_step: 20\n    end_step: 21\n    record_shapes: off\n    trace_dir: \"/tmp/t r\"\n"
                     "    prefix: run1\n");
    tprof_profile_config c;
    tprof_config_default(&c);
    others_seen = 0;
    assert_int_equal(tprof_config_load_yaml(&c, path, other, NULL, err, sizeof err), 0);
    assert_true(c.enable);
    assert_int_equal(c.start_step, 20);
    assert_int_equal(c.end_step, 21);
    assert_false(c.record_shapes);
    assert_true(c.profile_memory); /* untouched */
    assert_string_equal(c.trace_dir, "/tmp/t r");
    assert_string_equal(c.prefix, "run1");
    assert_int_equal(others_seen, 4);
    /* the file, then the flags over it, wherever the file stands */
    assert_int_equal(parse(&c, err, sizeof err, 2, "--train.profile.end_step=30", path), 1);
    assert_int_equal(c.start_step, 20);
    assert_int_equal(c.end_step, 30);
    /* a .yml too; other extensions are not config files (left to the program) */
    snprintf(path, sizeof path, "%s/c.yml", tmpdir);
    write_file(path, "train:\n  profile:\n    start_step: 3\n    end_step: 5\n");
    assert_int_equal(parse(&c, err, sizeof err, 1, path), 1);
    assert_int_equal(c.start_step, 3);
    assert_int_equal(parse(&c, err, sizeof err, 1, "conf.json"), 2);
    /* after a bare boolean flag the file is still the file */
    assert_int_equal(parse(&c, err, sizeof err, 2, "--train.profile.enable", path), 1);
    assert_true(c.enable);
    assert_int_equal(c.start_step, 3);
}

static void yaml_error(const char *text, const char *expect)
{
    char path[400], err[1024];
    snprintf(path, sizeof path, "%s/bad.yaml", tmpdir);
    write_file(path, text);
    tprof_profile_config c;
    tprof_config_default(&c);
    int rc = tprof_config_load_yaml(&c, path, NULL, NULL, err, sizeof err);
    if (rc == 0) rc = tprof_config_validate(&c, err, sizeof err);
    assert_int_not_equal(rc, 0);
    if (!strstr(err, expect)) fail_msg("'%s' not in '%s'", expect, err);
}

static void test_yaml_errors(void **state)
{
    (void)state;
    yaml_error("train:\n  profile:\n    enabled: true\n", "unknown key in the profile block");
    yaml_error("train:\n  profile:\n    start_step: five\n", "an integer expected");
    yaml_error("train:\n  profile:\n    start_step: \"5\"\n", "an integer expected");
    yaml_error("train:\n  profile:\n    start_step: 2.5\n", "an integer expected");
    yaml_error("train:\n  profile:\n    enable: \"true\"\n", "a boolean expected");
    yaml_error("train:\n  profile:\n    enable: 2\n", "a boolean expected");
    yaml_error("train:\n  profile:\n    trace_dir: [a, b]\n", "a scalar expected");
    yaml_error("train:\n  profile:\n    trace_dir:\n", "a string expected");
    yaml_error("train:\n  profile: [1]\n", "a mapping expected");
    yaml_error("train:\n  profile: 3\n", "a mapping expected");
    yaml_error("train:\n  profile:\n    start_step: 5\n    end_step: 3\n", "must be greater than start_step");
    yaml_error("train:\n  profile:\n    start_step: 0\n", "must be >= 1");
    yaml_error("a: b: c\n", "line 1");
    yaml_error("a: 1\n---\nb: 2\n", "line 2: expected a single YAML document");
    char err[256];
    tprof_profile_config c;
    assert_int_equal(tprof_config_load_yaml(&c, "/nonexistent/x.yaml", NULL, NULL, err, sizeof err), TPROF_EIO);
}

/* VeOmni's table (REFERENCE section 2.1): start,end -> the warm-up step, the
 * recorded steps, the step whose end writes the trace. */
static void test_schedule_table(void **state)
{
    (void)state;
    static const struct {
        int start, end, warm, first, last;
    } rows[] = { { 1, 2, 0, 1, 1 }, { 1, 3, 0, 1, 2 }, { 2, 3, 1, 2, 2 }, { 3, 5, 2, 3, 4 },
                 { 5, 6, 4, 5, 5 }, { 5, 10, 4, 5, 9 }, { 20, 21, 19, 20, 20 } };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        tprof_profile_config c;
        tprof_config_default(&c);
        c.start_step = rows[r].start;
        c.end_step = rows[r].end;
        for (int s = 0; s <= 30; s++) {
            tprof_step_action want = TPROF_STEP_NONE;
            if (s == rows[r].warm && s > 0) want = TPROF_STEP_WARMUP;
            if (s >= rows[r].first && s <= rows[r].last)
                want = s == rows[r].last ? TPROF_STEP_RECORD_SAVE : TPROF_STEP_RECORD;
            if (tprof_schedule_action(&c, s) != want) fail_msg("start %d end %d step %d", rows[r].start, rows[r].end, s);
        }
    }
}

/* The files in tmpdir/SUB whose names end in SUFFIX: count, and the last name. */
static int files(const char *sub, const char *suffix, char *name, size_t n)
{
    char d[400];
    snprintf(d, sizeof d, "%s/%s", tmpdir, sub);
    DIR *dir = opendir(d);
    if (!dir) return 0;
    int k = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t l = strlen(e->d_name), sl = strlen(suffix);
        if (l > sl && strcmp(e->d_name + l - sl, suffix) == 0) {
            k++;
            if (name) snprintf(name, n, "%s/%s", d, e->d_name);
        }
    }
    closedir(dir);
    return k;
}

static char *gunzip(const char *path)
{
    gzFile f = gzopen(path, "rb");
    assert_non_null(f);
    size_t cap = 1 << 16, len = 0;
    char *p = malloc(cap);
    int k;
    while ((k = gzread(f, p + len, (unsigned)(cap - len - 1))) > 0) {
        len += (size_t)k;
        if (cap - len < 1024) p = realloc(p, cap *= 2);
    }
    gzclose(f);
    p[len] = 0;
    return p;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++) n++;
    return n;
}

static void run_window(const char *sub, int start, int end, int first, int last, int ranges_per_step,
                       int64_t max_events)
{
    tprof_profile_config c;
    tprof_config_default(&c);
    c.enable = true;
    c.start_step = start;
    c.end_step = end;
    c.with_stack = false;
    c.max_events = max_events;
    snprintf(c.trace_dir, sizeof c.trace_dir, "%s/%s", tmpdir, sub);
    snprintf(c.prefix, sizeof c.prefix, "unit");
    tprof_profiler_set_rank(3, 4);
    c.rank0_only = false;
    assert_int_equal(tprof_profiler_start(&c, NULL, 0), 0);
    assert_true(tprof_profiler_active());
    for (int s = first; s <= last; s++) {
        tprof_step_begin(s);
        for (int k = 0; k < ranges_per_step; k++) {
            TPROF_RANGE("work");
            tprof_instant("tick");
        }
        tprof_step_end(s);
    }
    assert_int_equal(tprof_profiler_stop(), 0);
}

static void test_window_and_names(void **state)
{
    (void)state;
    run_window("w", 3, 5, 1, 8, 2, 1024);
    char name[600];
    assert_int_equal(files("w", ".pt.trace.json.gz", name, sizeof name), 1);
    assert_int_equal(files("w", ".pkl", NULL, 0), 1);
    /* PREFIX_rank{R}_{unix seconds}.pt.trace.json.gz */
    const char *base = strrchr(name, '/') + 1;
    long secs = 0;
    char tail[64];
    assert_int_equal(sscanf(base, "unit_rank3_%ld%63s", &secs, tail), 2);
    assert_string_equal(tail, ".pt.trace.json.gz");
    long now = (long)time(NULL);
    assert_true(secs <= now && secs > now - 60);
    char *doc = gunzip(name);
    assert_non_null(strstr(doc, "\"distributedInfo\": {\"backend\": \"mpi\", \"rank\": 3, \"world_size\": 4}"));
    /* steps 3 and 4 recorded: ProfilerStep#2 and #3, nothing of the warm-up step 2 */
    assert_int_equal(count(doc, "\"ProfilerStep#"), 2);
    assert_non_null(strstr(doc, "\"ProfilerStep#2\""));
    assert_non_null(strstr(doc, "\"ProfilerStep#3\""));
    assert_int_equal(count(doc, "\"name\":\"work\""), 4);
    assert_int_equal(count(doc, "\"name\":\"tick\""), 4);
    assert_non_null(strstr(doc, "\"trainprof_dropped_events\": 0,"));
    free(doc);
}

/* A resumed run (global steps from 4) still records the rest of its window. */
static void test_resume(void **state)
{
    (void)state;
    run_window("r", 3, 7, 5, 9, 1, 1024);
    char name[600];
    assert_int_equal(files("r", ".pt.trace.json.gz", name, sizeof name), 1);
    char *doc = gunzip(name);
    assert_int_equal(count(doc, "\"ProfilerStep#"), 2);
    assert_non_null(strstr(doc, "\"ProfilerStep#4\""));
    assert_non_null(strstr(doc, "\"ProfilerStep#5\""));
    free(doc);
}

static void test_buffer_limit(void **state)
{
    (void)state;
    run_window("d", 1, 2, 1, 1, 100, 16);
    char name[600];
    assert_int_equal(files("d", ".pt.trace.json.gz", name, sizeof name), 1);
    char *doc = gunzip(name);
    /* 1 step span + 100 ranges + 100 instants = 201 events; 16 kept */
    assert_non_null(strstr(doc, "\"trainprof_dropped_events\": 185,"));
    assert_non_null(strstr(doc, "\"name\":\"trainprof: events dropped\""));
    assert_non_null(strstr(doc, "\"dropped\":185"));
    free(doc);
}

/* A collective call is written as c10d's record_param_comms, with the args
 * trainprof comm reads (docs/RECORDING.md, "API"). */
static void test_comm_call(void **state)
{
    (void)state;
    tprof_profile_config c;
    tprof_config_default(&c);
    c.enable = true;
    c.with_stack = false;
    snprintf(c.trace_dir, sizeof c.trace_dir, "%s/comm", tmpdir);
    snprintf(c.prefix, sizeof c.prefix, "unit");
    tprof_profiler_set_rank(0, 2);
    assert_int_equal(tprof_profiler_start(&c, NULL, 0), 0);
    tprof_step_begin(1);
    {
        TPROF_RANGE("allreduce_gradients");
        tprof_range r = tprof_comm_begin("allreduce", "Float", 1000, 2);
        assert_true(r != 0);
        tprof_range_end(r);
        /* each process group numbers its calls from 0 (c10d's Seq) */
        tprof_range_end(tprof_comm_begin_group("all_gather", "BFloat16", 64, 2, "tp"));
        tprof_range_end(tprof_comm_begin("broadcast", "Float", 8, 2));
        tprof_range_end(tprof_comm_begin_group("all_gather", "BFloat16", 64, 2, "tp"));
    }
    tprof_step_end(1);
    assert_int_equal(tprof_profiler_stop(), 0);
    char name[600];
    assert_int_equal(files("comm", ".pt.trace.json.gz", name, sizeof name), 1);
    char *doc = gunzip(name);
    assert_int_equal(count(doc, "\"cat\":\"cpu_op\",\"name\":\"record_param_comms\""), 4);
    assert_non_null(strstr(doc, "\"Collective name\":\"allreduce\",\"dtype\":\"Float\",\"In msg nelems\":1000,"
                                "\"Out msg nelems\":1000,\"Group size\":2,\"Process Group Name\":\"0\","
                                "\"Process Group Ranks\":\"[0, 1]\",\"Seq\":0"));
    assert_non_null(strstr(doc, "\"Collective name\":\"broadcast\",\"dtype\":\"Float\",\"In msg nelems\":8,"
                                "\"Out msg nelems\":8,\"Group size\":2,\"Process Group Name\":\"0\","
                                "\"Process Group Ranks\":\"[0, 1]\",\"Seq\":1"));
    assert_int_equal(count(doc, "\"Process Group Name\":\"tp\",\"Seq\":0"), 1);
    assert_int_equal(count(doc, "\"Process Group Name\":\"tp\",\"Seq\":1"), 1);
    assert_int_equal(count(doc, "\"name\":\"allreduce_gradients\""), 1);
    free(doc);
}

static void test_rank0_only(void **state)
{
    (void)state;
    tprof_profile_config c;
    tprof_config_default(&c);
    c.enable = true;
    snprintf(c.trace_dir, sizeof c.trace_dir, "%s/r0", tmpdir);
    tprof_profiler_set_rank(1, 2);
    assert_int_equal(tprof_profiler_start(&c, NULL, 0), 0);
    assert_false(tprof_profiler_active());
    tprof_step_begin(1);
    assert_int_equal(tprof_range_begin("x"), 0); /* off: nothing recorded */
    tprof_step_end(1);
    tprof_profiler_stop();
    assert_int_equal(files("r0", ".gz", NULL, 0), 0);
    /* invalid configurations are refused before anything starts */
    c.end_step = 1;
    char err[256];
    assert_int_equal(tprof_profiler_start(&c, err, sizeof err), TPROF_EUSAGE);
}

static void *thread_work(void *arg)
{
    (void)arg;
    tprof_thread_name("worker");
    for (int k = 0; k < 1000; k++) {
        TPROF_RANGE("threaded");
        tprof_counter("k", k);
    }
    return NULL;
}

/* Threads register their own buffers on their first event and record
 * without locks; every event of every thread is in the trace. */
static void test_threads(void **state)
{
    (void)state;
    tprof_profile_config c;
    tprof_config_default(&c);
    c.enable = true;
    c.with_stack = false;
    c.profile_memory = false;
    snprintf(c.trace_dir, sizeof c.trace_dir, "%s/t", tmpdir);
    tprof_profiler_set_rank(0, 1);
    assert_int_equal(tprof_profiler_start(&c, NULL, 0), 0);
    tprof_step_begin(1);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&th[i], NULL, thread_work, NULL), 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    tprof_step_end(1);
    assert_int_equal(tprof_profiler_dropped(), 0);
    tprof_profiler_stop();
    char name[600];
    assert_int_equal(files("t", ".pt.trace.json.gz", name, sizeof name), 1);
    char *doc = gunzip(name);
    assert_int_equal(count(doc, "\"name\":\"threaded\""), 4000);
    assert_int_equal(count(doc, "\"ph\":\"C\""), 4000);
    assert_int_equal(count(doc, "\"args\":{\"name\":\"worker\"}"), 4);
    free(doc);
}

static atomic_int stop_racers_quit;

static void *stop_racer(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_racers_quit)) {
        tprof_range r = tprof_range_begin("racing");
        tprof_instant("tick");
        tprof_counter("c", 1.0);
        tprof_range_end(r);
    }
    return NULL;
}

/* Stop while two threads record in a loop: their buffers must stay valid
 * (stop used to free them under the threads; run under TSan/ASan). A few
 * cycles, each with new threads so that start happens before them. */
static void test_stop_while_recording(void **state)
{
    (void)state;
    for (int cycle = 0; cycle < 20; cycle++) {
        tprof_profile_config c;
        tprof_config_default(&c);
        c.enable = true;
        c.with_stack = false;
        c.profile_memory = false;
        c.max_events = 1 << 16;
        snprintf(c.trace_dir, sizeof c.trace_dir, "%s/s%d", tmpdir, cycle);
        tprof_profiler_set_rank(0, 1);
        assert_int_equal(tprof_profiler_start(&c, NULL, 0), 0);
        tprof_step_begin(1);
        atomic_store(&stop_racers_quit, 0);
        pthread_t th[2];
        for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, stop_racer, NULL), 0);
        struct timespec ms = { 0, 2 * 1000 * 1000 };
        nanosleep(&ms, NULL);
        assert_int_equal(tprof_profiler_stop(), 0);
        assert_false(tprof_profiler_active());
        nanosleep(&ms, NULL); /* the threads keep calling in after stop */
        atomic_store(&stop_racers_quit, 1);
        for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    }
    char name[600];
    assert_int_equal(files("s0", ".pt.trace.json.gz", name, sizeof name), 1);
}

/* Names are the program's bytes; the trace must stay valid UTF-8. */
static void test_utf8_names(void **state)
{
    (void)state;
    tprof_profile_config c;
    tprof_config_default(&c);
    c.enable = true;
    c.with_stack = false;
    c.profile_memory = false;
    snprintf(c.trace_dir, sizeof c.trace_dir, "%s/u", tmpdir);
    tprof_profiler_set_rank(0, 1);
    assert_int_equal(tprof_profiler_start(&c, NULL, 0), 0);
    tprof_step_begin(1);
    tprof_range_end(tprof_range_begin("caf\xc3\xa9 \"q\" \xff\xfe end\xe2\x82"));
    tprof_instant("tab\there");
    tprof_step_end(1);
    tprof_profiler_stop();
    char name[600];
    assert_int_equal(files("u", ".pt.trace.json.gz", name, sizeof name), 1);
    char *doc = gunzip(name);
    assert_non_null(strstr(doc, "\"name\":\"caf\xc3\xa9 \\\"q\\\" \xef\xbf\xbd\xef\xbf\xbd end\xef\xbf\xbd\xef\xbf\xbd\""));
    assert_non_null(strstr(doc, "\"name\":\"tab\\u0009here\""));
    free(doc);
}

static void test_step_line(void **state)
{
    (void)state;
    tprof_meter_metrics m = { .flops_achieved_T = 1.5, .mfu = 0.25 };
    const char *xn[1] = { "training/total_loss" };
    double xv[1] = { 2.5 };
    char line[1024];
    tprof_step_line(line, sizeof line, 7, &m, xn, xv, 1, 0);
    assert_non_null(strstr(line, "step 7: training/total_loss: 2.5, flops_achieved(T): 1.5,"));
    assert_non_null(strstr(line, "mfu: 0.25"));
    tprof_step_line(line, sizeof line, 7, &m, xn, xv, 1, 1);
    assert_non_null(strstr(line, "{\"step\": 7, \"training/total_loss\": 2.5, \"flops_achieved(T)\": 1.5"));
    assert_int_equal(line[strlen(line) - 1], '}');
    char small[8];
    size_t need = tprof_step_line(small, sizeof small, 7, &m, xn, xv, 1, 1);
    assert_true(need > sizeof small);
    assert_int_equal(strlen(small), sizeof small - 1);
}

static void *step_handover(void *arg)
{
    (void)arg;
    tprof_step_end(1);
    tprof_step_begin(2);
    return NULL;
}

/* A step begun on one thread and ended on another is closed, not left open
 * (the span is closed in the buffer of the thread that began it). */
static void test_step_across_threads(void **state)
{
    (void)state;
    tprof_profile_config c;
    tprof_config_default(&c);
    c.enable = true;
    c.with_stack = false;
    c.start_step = 1;
    c.end_step = 3;
    snprintf(c.trace_dir, sizeof c.trace_dir, "%s/x", tmpdir);
    tprof_profiler_set_rank(0, 1);
    assert_int_equal(tprof_profiler_start(&c, NULL, 0), 0);
    tprof_step_begin(1);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, step_handover, NULL), 0);
    pthread_join(th, NULL);
    assert_int_equal(tprof_step_end(2), 0);
    tprof_profiler_stop();
    char name[600];
    assert_int_equal(files("x", ".pt.trace.json.gz", name, sizeof name), 1);
    char *doc = gunzip(name);
    assert_int_equal(count(doc, "\"ProfilerStep#"), 2);
    assert_null(strstr(doc, "trainprof truncated"));
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),       cmocka_unit_test(test_set_bools),
        cmocka_unit_test(test_args_syntax),    cmocka_unit_test(test_args_errors),
        cmocka_unit_test(test_yaml),           cmocka_unit_test(test_yaml_errors),
        cmocka_unit_test(test_schedule_table), cmocka_unit_test(test_window_and_names),
        cmocka_unit_test(test_resume),         cmocka_unit_test(test_buffer_limit),
        cmocka_unit_test(test_rank0_only),     cmocka_unit_test(test_threads),
        cmocka_unit_test(test_utf8_names),     cmocka_unit_test(test_step_line),
        cmocka_unit_test(test_comm_call),      cmocka_unit_test(test_max_events_bound),
        cmocka_unit_test(test_stop_while_recording), cmocka_unit_test(test_args_empty),
        cmocka_unit_test(test_signals_kept),   cmocka_unit_test(test_step_across_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
