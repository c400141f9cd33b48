/* The output sinks (include/trainprof/sink.h): what is written reads back
 * whole through zlib and libzstd, one thread or several; gzip output is one
 * member whatever the thread count; failures leave no file behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <zlib.h>
#include <zstd.h>

#include "trainprof/sink.h"
#include "unit.h"

static char dir[] = "/tmp/tprof_sink_XXXXXX";

/* Compressible bytes that are not all alike: JSON-ish lines with counters. */
static uint8_t *make_data(size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    size_t i = 0;
    for (uint64_t k = 0; i < n; k++) {
        char line[128];
        int l = snprintf(line, sizeof line, "{\"ph\":\"X\",\"ts\":%llu.%03u,\"name\":\"k%llu\"},\n",
                         (unsigned long long)(1700000000000ull + k * 37), (unsigned)(k * 7919 % 1000),
                         (unsigned long long)(k * 2654435761u % 97));
        for (int j = 0; j < l && i < n; j++) d[i++] = (uint8_t)line[j];
    }
    return d;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Inflates one gzip member that must fill the file exactly. */
static void check_gzip(const char *path, const uint8_t *want, size_t n)
{
    size_t zlen;
    uint8_t *z = slurp(path, &zlen);
    uint8_t *out = malloc(n + 64);
    z_stream s = { 0 };
    assert_int_equal(inflateInit2(&s, 16 + MAX_WBITS), Z_OK);
    s.next_in = z;
    s.avail_in = (uInt)zlen;
    s.next_out = out;
    s.avail_out = (uInt)(n + 64);
    assert_int_equal(inflate(&s, Z_FINISH), Z_STREAM_END);
    assert_int_equal(s.avail_in, 0); /* one member, nothing after it */
    assert_int_equal(s.total_out, n);
    assert_memory_equal(out, want, n);
    inflateEnd(&s);
    free(out);
    free(z);
}

static void check_zstd(const char *path, const uint8_t *want, size_t n)
{
    size_t zlen;
    uint8_t *z = slurp(path, &zlen);
    uint8_t *out = malloc(n + 64);
    size_t got = ZSTD_decompress(out, n + 64, z, zlen);
    assert_false(ZSTD_isError(got));
    assert_int_equal(got, n);
    assert_memory_equal(out, want, n);
    free(out);
    free(z);
}

/* Writes DATA in pieces of STEP bytes through a sink of COMP on THREADS. */
static void write_through(const char *path, tprof_compression comp, int threads, const uint8_t *data, size_t n,
                          size_t step)
{
    tprof_sink *s;
    char err[256];
    assert_int_equal(tprof_sink_open(&s, path, comp, 0, err, sizeof err), 0);
    if (threads > 0) { /* 0: the caller's thread only, as without the call */
        int used = tprof_sink_set_threads(s, threads);
        assert_true(used >= 0);
        if (comp == TPROF_COMP_GZIP && strcmp(tprof_sink_gzip_backend(), "isa-l") == 0)
            assert_int_equal(used, threads);
    }
    for (size_t at = 0; at < n; at += step) assert_int_equal(tprof_sink_write(s, data + at, n - at < step ? n - at : step), 0);
    assert_int_equal(tprof_sink_bytes_in(s), n);
    assert_int_equal(tprof_sink_commit(s, err, sizeof err), 0);
}

static void test_round_trips(void **state)
{
    (void)state;
    const size_t mib = 1u << 20;
    static const size_t sizes[] = { 0, 1, 1000, (1u << 20) - 1, 1u << 20, (1u << 20) + 1, 5 * (1u << 20) + 12345 };
    uint8_t *data = make_data(6 * mib);
    char path[300];
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int threads = 0; threads <= 3; threads++) {
            size_t n = sizes[i];
            snprintf(path, sizeof path, "%s/out.gz", dir);
            write_through(path, TPROF_COMP_GZIP, threads, data, n, 65536 + 7);
            check_gzip(path, data, n);
            snprintf(path, sizeof path, "%s/out.zst", dir);
            write_through(path, TPROF_COMP_ZSTD, threads, data, n, 300000);
            check_zstd(path, data, n);
            snprintf(path, sizeof path, "%s/out.json", dir);
            write_through(path, TPROF_COMP_NONE, threads, data, n, 4096);
            size_t len;
            uint8_t *plain = slurp(path, &len);
            assert_int_equal(len, n);
            assert_memory_equal(plain, data, n);
            free(plain);
        }
    free(data);
}

/* Compressed in pieces on threads, about as small as in one stream: each
 * 1 MiB piece starts without history, which costs little. */
static void test_parallel_ratio(void **state)
{
    (void)state;
    size_t n = 8u << 20;
    uint8_t *data = make_data(n);
    char one[300], two[300];
    snprintf(one, sizeof one, "%s/one.gz", dir);
    snprintf(two, sizeof two, "%s/two.gz", dir);
    write_through(one, TPROF_COMP_GZIP, 0, data, n, 1u << 20);
    write_through(two, TPROF_COMP_GZIP, 2, data, n, 1u << 20);
    struct stat a, b;
    assert_int_equal(stat(one, &a), 0);
    assert_int_equal(stat(two, &b), 0);
    check_gzip(two, data, n);
    if (strcmp(tprof_sink_gzip_backend(), "isa-l") == 0)
        assert_true((double)b.st_size < (double)a.st_size * 1.005);
    free(data);
}

/* The bytes do not depend on the thread count: merges are the same file
 * whatever --threads says. */
static void test_same_bytes_any_threads(void **state)
{
    (void)state;
    size_t n = 5u << 20;
    uint8_t *data = make_data(n);
    static const tprof_compression comps[] = { TPROF_COMP_GZIP, TPROF_COMP_ZSTD };
    static const char *ext[] = { "gz", "zst" };
    for (int c = 0; c < 2; c++) {
        uint8_t *first = NULL;
        size_t first_len = 0;
        for (int threads = 1; threads <= 3; threads++) {
            char path[300];
            snprintf(path, sizeof path, "%s/same%d.%s", dir, threads, ext[c]);
            write_through(path, comps[c], threads, data, n, 100000);
            size_t len;
            uint8_t *b = slurp(path, &len);
            if (!first) {
                first = b;
                first_len = len;
                continue;
            }
            /* where they part, so that a failure on another machine says
             * which piece (1 MiB each after the 10-byte header) differs */
            size_t at = 0;
            while (at < len && at < first_len && b[at] == first[at]) at++;
            if (len != first_len || at < len)
                fail_msg("%s: %d threads: %zu bytes, 1 thread: %zu; first difference at byte %zu", ext[c], threads,
                         len, first_len, at);
            free(b);
        }
        free(first);
    }
    free(data);
}

static void test_abort_leaves_nothing(void **state)
{
    (void)state;
    char path[300], err[256];
    snprintf(path, sizeof path, "%s/aborted.gz", dir);
    tprof_sink *s;
    assert_int_equal(tprof_sink_open(&s, path, TPROF_COMP_GZIP, 0, err, sizeof err), 0);
    assert_true(tprof_sink_set_threads(s, 2) >= 0);
    uint8_t *data = make_data(3u << 20);
    assert_int_equal(tprof_sink_write(s, data, 3u << 20), 0);
    tprof_sink_abort(s);
    free(data);
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0);
    /* nor its temporary file */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls %s | grep -q aborted", dir);
    assert_int_not_equal(system(cmd), 0);
}

/* A write that fails (the file size limit, in a child process): the error
 * names the file and the cause, and no file is left, threads or not. */
static void test_write_failure(void **state)
{
    (void)state;
    for (int threads = 0; threads <= 2; threads++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            signal(SIGXFSZ, SIG_IGN); /* write() then fails with EFBIG */
            struct rlimit rl = { 256 << 10, 256 << 10 };
            if (setrlimit(RLIMIT_FSIZE, &rl)) _exit(10);
            char path[300], err[512] = "";
            snprintf(path, sizeof path, "%s/full%d.gz", dir, threads);
            tprof_sink *s;
            if (tprof_sink_open(&s, path, TPROF_COMP_GZIP, 0, err, sizeof err)) _exit(11);
            if (threads && tprof_sink_set_threads(s, threads) < 0) _exit(12);
            /* random bytes do not compress: the limit is passed */
            uint8_t *d = malloc(4u << 20);
            uint32_t x = 1;
            for (size_t i = 0; i < (4u << 20); i++) d[i] = (uint8_t)((x = x * 1664525u + 1013904223u) >> 24);
            int rc = tprof_sink_write(s, d, 4u << 20);
            if (rc == 0) rc = tprof_sink_commit(s, err, sizeof err);
            else {
                snprintf(err, sizeof err, "%s", tprof_sink_errmsg(s));
                tprof_sink_abort(s);
            }
            struct stat st;
            if (rc != TPROF_EWRITE) _exit(13);
            if (!strstr(err, path) || !strstr(err, "File too large")) _exit(14);
            if (stat(path, &st) == 0) _exit(15);
            _exit(0);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("threads %d: child status %d", threads, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_parallel_ratio),
        cmocka_unit_test(test_same_bytes_any_threads),
        cmocka_unit_test(test_abort_leaves_nothing),
        cmocka_unit_test(test_write_failure),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
