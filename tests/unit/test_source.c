/* Unit tests of byte sources (lib/io/source.c): plain, gzip, zstd, files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#include "trainprof/error.h"
#include "trainprof/source.h"
#include "unit.h"

/* ---- helpers ---------------------------------------------------------- */

/* gzip (one member) of DATA, made with zlib. */
static uint8_t *gzip_make(const void *data, size_t len, int level, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
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

static uint8_t *zstd_make(const void *data, size_t len, size_t *out_len)
{
    size_t cap = ZSTD_compressBound(len);
    uint8_t *out = malloc(cap);
    assert_non_null(out);
    size_t n = ZSTD_compress(out, cap, data, len, 3);
    assert_false(ZSTD_isError(n));
    *out_len = n;
    return out;
}

/* Compressible text, like a trace. */
static uint8_t *make_text(size_t len, uint64_t seed)
{
    static const char *const words[] = { "{\"ph\":\"X\",", "\"name\":\"ampere_sgemm_128x64_tn\",", "\"ts\":",
                                         "1694128201428473.125,", "\"dur\":12.5,", "\"args\":{\"stream\":7}},\n",
                                         "\"cat\":\"kernel\",", "ncclDevKernel_AllReduce" };
    uint8_t *p = malloc(len);
    assert_non_null(p);
    size_t i = 0;
    while (i < len) {
        const char *w = words[rng_next(&seed) % 8];
        size_t n = strlen(w);
        if (n > len - i) n = len - i;
        memcpy(p + i, w, n);
        i += n;
        if (i < len && rng_next(&seed) % 4 == 0) p[i++] = (uint8_t)('0' + rng_next(&seed) % 10);
    }
    return p;
}

static uint8_t *make_random(size_t len, uint64_t seed)
{
    uint8_t *p = malloc(len);
    assert_non_null(p);
    for (size_t i = 0; i < len; i++) p[i] = (uint8_t)(rng_next(&seed) >> 56);
    return p;
}

/* Reads everything in CAP-sized pieces. Returns the final code (0 at a clean
 * end); *out gets the bytes delivered before it. */
static int read_all(tprof_source *s, size_t cap, ubuf *out)
{
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    int rc;
    size_t guard = 0;
    for (;;) {
        ssize_t n = tprof_source_read(s, buf, cap);
        if (n < 0) {
            rc = (int)n;
            break;
        }
        if (n == 0) {
            rc = 0;
            break;
        }
        assert_true((size_t)n <= cap);
        ubuf_add(out, buf, (size_t)n);
        assert_true(++guard < 100000000);
    }
    free(buf);
    return rc;
}

static void expect_roundtrip_mem(const void *comp, size_t clen, const void *orig, size_t olen, tprof_compression c,
                                 size_t cap)
{
    tprof_source *s;
    assert_int_equal(tprof_source_open_mem(&s, comp, clen, "mem"), 0);
    assert_int_equal(tprof_source_compression(s), c);
    ubuf got = { 0 };
    int rc = read_all(s, cap, &got);
    if (rc) fail_msg("read: rc %d (%s): %s", rc, tprof_strerror(rc), tprof_source_errmsg(s));
    assert_int_equal(got.len, olen);
    if (olen) assert_memory_equal(got.p, orig, olen);
    assert_int_equal(tprof_source_bytes_out(s), olen);
    /* the end repeats */
    uint8_t b[16];
    assert_int_equal(tprof_source_read(s, b, sizeof b), 0);
    tprof_source_close(s);
    ubuf_free(&got);
}

/* Reference: how many bytes zlib itself can decode from a cut gzip stream. */
static size_t zlib_decodable(const uint8_t *comp, size_t clen, size_t olen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
    uint8_t *out = malloc(olen + 1);
    assert_non_null(out);
    z.next_in = (Bytef *)(uintptr_t)comp;
    z.avail_in = (uInt)clen;
    z.next_out = out;
    z.avail_out = (uInt)(olen + 1);
    (void)inflate(&z, Z_SYNC_FLUSH);
    size_t n = olen + 1 - z.avail_out;
    inflateEnd(&z);
    free(out);
    return n;
}

static int forced_zlib;

static int setup_default(void **state)
{
    (void)state;
    unsetenv("TPROF_FORCE_ZLIB");
    forced_zlib = 0;
    return 0;
}

static int setup_zlib(void **state)
{
    (void)state;
    setenv("TPROF_FORCE_ZLIB", "1", 1);
    forced_zlib = 1;
    return 0;
}

static int teardown_env(void **state)
{
    (void)state;
    unsetenv("TPROF_FORCE_ZLIB");
    return 0;
}

static void check_backend(void)
{
    const char *b = tprof_source_gzip_backend();
    assert_non_null(b);
    if (forced_zlib) assert_string_equal(b, "zlib");
    else assert_true(strcmp(b, "zlib") == 0 || strcmp(b, "isa-l") == 0);
}

/* ---- plain ------------------------------------------------------------ */

static void test_plain_mem(void **state)
{
    (void)state;
    static const char d[] = "{\"traceEvents\":[]}";
    tprof_source *s;
    assert_int_equal(tprof_source_open_mem(&s, d, sizeof d - 1, "plain.json"), 0);
    assert_string_equal(tprof_source_name(s), "plain.json");
    assert_int_equal(tprof_source_compression(s), TPROF_COMP_NONE);
    assert_string_equal(tprof_compression_name(TPROF_COMP_NONE), "none");
    assert_int_equal(tprof_source_file_size(s), sizeof d - 1);
    ubuf got = { 0 };
    assert_int_equal(read_all(s, 5, &got), 0);
    assert_int_equal(got.len, sizeof d - 1);
    assert_memory_equal(got.p, d, got.len);
    assert_int_equal(tprof_source_bytes_in(s), sizeof d - 1);
    assert_int_equal(tprof_source_bytes_out(s), sizeof d - 1);
    tprof_source_close(s);
    ubuf_free(&got);
}

static void test_plain_short_inputs(void **state)
{
    (void)state;
    /* shorter than any magic, or a magic prefix only */
    static const struct { const char *d; size_t n; } c[] = {
        { "", 0 }, { "a", 1 }, { "ab", 2 }, { "\x1f", 1 }, { "\x28\xb5\x2f", 3 }, { "[1]", 3 },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        tprof_source *s;
        assert_int_equal(tprof_source_open_mem(&s, c[i].d, c[i].n, NULL), 0);
        assert_int_equal(tprof_source_compression(s), TPROF_COMP_NONE);
        ubuf got = { 0 };
        assert_int_equal(read_all(s, 1, &got), 0);
        assert_int_equal(got.len, c[i].n);
        if (c[i].n) assert_memory_equal(got.p, c[i].d, c[i].n);
        tprof_source_close(s);
        ubuf_free(&got);
    }
}

static void test_plain_file(void **state)
{
    (void)state;
    const size_t n = (5u << 20) / 2 + 3; /* over two input windows */
    uint8_t *d = make_text(n, 1);
    char *path = write_temp("plain.json", d, n);
    char err[512] = "";
    tprof_source *s;
    assert_int_equal(tprof_source_open(&s, path, err, sizeof err), 0);
    assert_string_equal(tprof_source_name(s), path);
    assert_int_equal(tprof_source_compression(s), TPROF_COMP_NONE);
    assert_int_equal(tprof_source_file_size(s), (int64_t)n);
    ubuf got = { 0 };
    assert_int_equal(read_all(s, 65536, &got), 0);
    assert_int_equal(got.len, n);
    assert_memory_equal(got.p, d, n);
    assert_int_equal(tprof_source_bytes_in(s), n);
    assert_int_equal(tprof_source_bytes_out(s), n);
    tprof_source_close(s);
    ubuf_free(&got);
    remove_temp(path);
    free(d);
}

static void test_plain_named_gz(void **state)
{
    (void)state;
    static const char d[] = "[{\"ph\":\"X\"}]";
    char *path = write_temp("trace.json.gz", d, sizeof d - 1);
    char err[512] = "";
    tprof_source *s;
    assert_int_equal(tprof_source_open(&s, path, err, sizeof err), 0);
    assert_int_equal(tprof_source_compression(s), TPROF_COMP_NONE);
    ubuf got = { 0 };
    assert_int_equal(read_all(s, 4096, &got), 0);
    assert_int_equal(got.len, sizeof d - 1);
    assert_memory_equal(got.p, d, got.len);
    tprof_source_close(s);
    ubuf_free(&got);
    remove_temp(path);
}

static void test_open_errors(void **state)
{
    (void)state;
    char err[512] = "";
    tprof_source *s = (tprof_source *)(uintptr_t)1;
    const char *missing = "/tmp/tprof_unit_definitely_missing_dir/none.json";
    assert_int_equal(tprof_source_open(&s, missing, err, sizeof err), TPROF_EIO);
    assert_null(s);
    assert_non_null(strstr(err, missing));

    char dir[] = "/tmp/tprof_unit_dir_XXXXXX";
    assert_non_null(mkdtemp(dir));
    s = (tprof_source *)(uintptr_t)1;
    err[0] = 0;
    int rc = tprof_source_open(&s, dir, err, sizeof err);
    assert_true(rc < 0);
    assert_null(s);
    assert_non_null(strstr(err, dir));
    rmdir(dir);

    /* a NULL errbuf is allowed */
    assert_int_equal(tprof_source_open(&s, missing, NULL, 0), TPROF_EIO);
    assert_null(s);
}

static void test_read_usage(void **state)
{
    (void)state;
    tprof_source *s;
    assert_int_equal(tprof_source_open_mem(&s, "x", 1, NULL), 0);
    assert_int_equal(tprof_source_read(s, NULL, 10), TPROF_EUSAGE);
    assert_int_equal(tprof_source_read(NULL, (void *)s, 10), TPROF_EUSAGE);
    tprof_source_close(s);
    tprof_source_close(NULL);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(tprof_compression_name(TPROF_COMP_GZIP), "gzip");
    assert_string_equal(tprof_compression_name(TPROF_COMP_ZSTD), "zstd");
    assert_string_equal(tprof_compression_name(TPROF_COMP_NONE), "none");
    assert_string_equal(tprof_strerror(TPROF_ETRUNC), "input truncated");
    assert_string_equal(tprof_strerror(0), "ok");
    assert_non_null(tprof_strerror(12345));
}

/* ---- gzip (run once per backend) -------------------------------------- */

static void test_gzip_mem(void **state)
{
    (void)state;
    check_backend();
    static const size_t sizes[] = { 1, 1000, 300000 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint8_t *d = make_text(sizes[i], 10 + i);
        size_t clen;
        uint8_t *gz = gzip_make(d, sizes[i], 6, &clen);
        expect_roundtrip_mem(gz, clen, d, sizes[i], TPROF_COMP_GZIP, 4096);
        expect_roundtrip_mem(gz, clen, d, sizes[i], TPROF_COMP_GZIP, 7);
        /* all compressed bytes are consumed */
        tprof_source *s;
        assert_int_equal(tprof_source_open_mem(&s, gz, clen, NULL), 0);
        ubuf got = { 0 };
        assert_int_equal(read_all(s, 65536, &got), 0);
        assert_int_equal(tprof_source_bytes_in(s), clen);
        tprof_source_close(s);
        ubuf_free(&got);
        free(gz);
        free(d);
    }
}

static void test_gzip_empty_payload(void **state)
{
    (void)state;
    check_backend();
    size_t clen;
    uint8_t *gz = gzip_make("", 0, 6, &clen);
    expect_roundtrip_mem(gz, clen, "", 0, TPROF_COMP_GZIP, 100);
    free(gz);
}

static void test_gzip_large_incompressible(void **state)
{
    (void)state;
    check_backend();
    const size_t n = 3u << 20; /* several compressed input windows */
    uint8_t *d = make_random(n, 99);
    size_t clen;
    uint8_t *gz = gzip_make(d, n, 1, &clen);
    assert_true(clen > (2u << 20));
    expect_roundtrip_mem(gz, clen, d, n, TPROF_COMP_GZIP, 1u << 20);
    expect_roundtrip_mem(gz, clen, d, n, TPROF_COMP_GZIP, 1000);
    free(gz);
    free(d);
}

static void test_gzip_file_named_json(void **state)
{
    (void)state;
    check_backend();
    const size_t n = 200000;
    uint8_t *d = make_text(n, 3);
    size_t clen;
    uint8_t *gz = gzip_make(d, n, 6, &clen);
    char *path = write_temp("x.json", gz, clen);
    char err[512] = "";
    tprof_source *s;
    assert_int_equal(tprof_source_open(&s, path, err, sizeof err), 0);
    assert_int_equal(tprof_source_compression(s), TPROF_COMP_GZIP);
    assert_int_equal(tprof_source_file_size(s), (int64_t)clen);
    ubuf got = { 0 };
    assert_int_equal(read_all(s, 8192, &got), 0);
    assert_int_equal(got.len, n);
    assert_memory_equal(got.p, d, n);
    assert_int_equal(tprof_source_bytes_in(s), clen);
    tprof_source_close(s);
    ubuf_free(&got);
    remove_temp(path);
    free(gz);
    free(d);
}

static void test_gzip_two_members(void **state)
{
    (void)state;
    check_backend();
    const size_t na = 100000, nb = 54321;
    uint8_t *a = make_text(na, 4), *b = make_text(nb, 5);
    size_t ca, cb;
    uint8_t *ga = gzip_make(a, na, 6, &ca), *gb = gzip_make(b, nb, 1, &cb);
    ubuf comp = { 0 }, orig = { 0 };
    ubuf_add(&comp, ga, ca);
    ubuf_add(&comp, gb, cb);
    ubuf_add(&orig, a, na);
    ubuf_add(&orig, b, nb);
    expect_roundtrip_mem(comp.p, comp.len, orig.p, orig.len, TPROF_COMP_GZIP, 4096);
    expect_roundtrip_mem(comp.p, comp.len, orig.p, orig.len, TPROF_COMP_GZIP, 1u << 20);
    /* and a third, tiny member, from a file */
    uint8_t *gc;
    size_t cc;
    gc = gzip_make("xyz", 3, 9, &cc);
    ubuf_add(&comp, gc, cc);
    ubuf_add(&orig, "xyz", 3);
    char *path = write_temp("multi.gz", comp.p, comp.len);
    char err[512];
    tprof_source *s;
    assert_int_equal(tprof_source_open(&s, path, err, sizeof err), 0);
    ubuf got = { 0 };
    int rc = read_all(s, 3000, &got);
    if (rc) fail_msg("rc %d: %s", rc, tprof_source_errmsg(s));
    assert_int_equal(got.len, orig.len);
    assert_memory_equal(got.p, orig.p, orig.len);
    tprof_source_close(s);
    remove_temp(path);
    ubuf_free(&got);
    ubuf_free(&comp);
    ubuf_free(&orig);
    free(ga);
    free(gb);
    free(gc);
    free(a);
    free(b);
}

static void test_gzip_zero_padding(void **state)
{
    (void)state;
    check_backend();
    const size_t n = 50000;
    uint8_t *d = make_text(n, 6);
    size_t clen;
    uint8_t *gz = gzip_make(d, n, 6, &clen);
    static const size_t pads[] = { 1, 2, 512, 4096 };
    for (size_t i = 0; i < sizeof pads / sizeof pads[0]; i++) {
        ubuf comp = { 0 };
        ubuf_add(&comp, gz, clen);
        uint8_t *z = calloc(1, pads[i]);
        ubuf_add(&comp, z, pads[i]);
        free(z);
        expect_roundtrip_mem(comp.p, comp.len, d, n, TPROF_COMP_GZIP, 4096);
        /* from a file too (tar-style padding to a block) */
        char *path = write_temp("padded.json.gz", comp.p, comp.len);
        char err[512];
        tprof_source *s;
        assert_int_equal(tprof_source_open(&s, path, err, sizeof err), 0);
        ubuf got = { 0 };
        int rc = read_all(s, 4096, &got);
        if (rc) fail_msg("padding %zu: rc %d: %s", pads[i], rc, tprof_source_errmsg(s));
        assert_int_equal(got.len, n);
        tprof_source_close(s);
        remove_temp(path);
        ubuf_free(&got);
        ubuf_free(&comp);
    }
    free(gz);
    free(d);
}

static void test_gzip_truncated(void **state)
{
    (void)state;
    check_backend();
    const size_t n = 400000;
    uint8_t *d = make_text(n, 7);
    size_t clen;
    uint8_t *gz = gzip_make(d, n, 6, &clen);
    assert_true(clen > 1000);
    /* inside the header, inside the deflate data, inside the trailer */
    const size_t cuts[] = { 2, 5, 10, 11, 20, 100, clen / 3, clen / 2, clen - 9, clen - 8, clen - 5, clen - 1 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        size_t cut = cuts[i];
        for (int k = 0; k < 2; k++) {
            size_t cap = k ? 1000 : 65536;
            tprof_source *s;
            assert_int_equal(tprof_source_open_mem(&s, gz, cut, "cut.gz"), 0);
            assert_int_equal(tprof_source_compression(s), TPROF_COMP_GZIP);
            ubuf got = { 0 };
            int rc = read_all(s, cap, &got);
            if (rc != TPROF_ETRUNC)
                fail_msg("cut at %zu of %zu (cap %zu): rc %d (%s), expected TPROF_ETRUNC; msg '%s'", cut, clen, cap,
                         rc, tprof_strerror(rc), tprof_source_errmsg(s));
            assert_true(got.len <= n);
            if (got.len && memcmp(got.p, d, got.len) != 0)
                fail_msg("cut at %zu: the bytes delivered are not a prefix of the original", cut);
            /* every byte decodable from the bytes before the cut was delivered */
            size_t want = zlib_decodable(gz, cut, n);
            if (got.len != want)
                fail_msg("cut at %zu of %zu (cap %zu): %zu bytes delivered, %zu decodable", cut, clen, cap, got.len,
                         want);
            if (cut >= clen - 8) assert_int_equal(got.len, n);
            assert_true(strlen(tprof_source_errmsg(s)) > 0);
            tprof_source_close(s);
            ubuf_free(&got);
        }
    }
    free(gz);
    free(d);
}

/* A cut in the second member: the first is delivered whole. */
static void test_gzip_truncated_second_member(void **state)
{
    (void)state;
    check_backend();
    const size_t na = 30000, nb = 30000;
    uint8_t *a = make_text(na, 8), *b = make_text(nb, 9);
    size_t ca, cb;
    uint8_t *ga = gzip_make(a, na, 6, &ca), *gb = gzip_make(b, nb, 6, &cb);
    ubuf comp = { 0 };
    ubuf_add(&comp, ga, ca);
    ubuf_add(&comp, gb, cb / 2);
    tprof_source *s;
    assert_int_equal(tprof_source_open_mem(&s, comp.p, comp.len, NULL), 0);
    ubuf got = { 0 };
    assert_int_equal(read_all(s, 4096, &got), TPROF_ETRUNC);
    assert_true(got.len >= na);
    assert_true(got.len < na + nb);
    assert_memory_equal(got.p, a, na);
    if (got.len > na) assert_memory_equal(got.p + na, b, got.len - na);
    tprof_source_close(s);
    ubuf_free(&got);
    ubuf_free(&comp);
    free(ga);
    free(gb);
    free(a);
    free(b);
}

static void test_gzip_corrupt(void **state)
{
    (void)state;
    check_backend();
    const size_t n = 100000;
    uint8_t *d = make_text(n, 11);
    size_t clen;
    uint8_t *gz = gzip_make(d, n, 6, &clen);
    /* byte 2: compression method (8); clen-8: CRC32; clen-4: ISIZE */
    const size_t at[] = { 2, clen - 8, clen - 6, clen - 4 };
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        uint8_t *bad = malloc(clen);
        assert_non_null(bad);
        memcpy(bad, gz, clen);
        bad[at[i]] ^= 0x55;
        tprof_source *s;
        assert_int_equal(tprof_source_open_mem(&s, bad, clen, "bad.gz"), 0);
        ubuf got = { 0 };
        int rc = read_all(s, 4096, &got);
        if (rc != TPROF_EFORMAT)
            fail_msg("corrupt byte %zu of %zu: rc %d (%s), expected TPROF_EFORMAT; msg '%s'", at[i], clen, rc,
                     tprof_strerror(rc), tprof_source_errmsg(s));
        assert_non_null(strstr(tprof_source_errmsg(s), "bad.gz"));
        tprof_source_close(s);
        ubuf_free(&got);
        free(bad);
    }
    free(gz);
    free(d);
}

static void test_gzip_trailing_garbage(void **state)
{
    (void)state;
    check_backend();
    const size_t n = 20000;
    uint8_t *d = make_text(n, 12);
    size_t clen;
    uint8_t *gz = gzip_make(d, n, 6, &clen);
    ubuf comp = { 0 };
    ubuf_add(&comp, gz, clen);
    ubuf_str(&comp, "garbage after the stream");
    tprof_source *s;
    assert_int_equal(tprof_source_open_mem(&s, comp.p, comp.len, "junk.gz"), 0);
    ubuf got = { 0 };
    int rc = read_all(s, 4096, &got);
    /* the data is all there; the junk is reported, not decoded */
    assert_int_equal(got.len, n);
    assert_memory_equal(got.p, d, n);
    assert_int_equal(rc, 0);
    /* reported as a note, which stops nothing and hides no error */
    assert_non_null(strstr(tprof_source_note(s), "trailing bytes"));
    assert_string_equal(tprof_source_errmsg(s), "");
    tprof_source_close(s);
    ubuf_free(&got);
    ubuf_free(&comp);
    free(gz);
    free(d);
}

/* ---- zstd ------------------------------------------------------------- */

static void test_zstd_single_frame(void **state)
{
    (void)state;
    static const size_t sizes[] = { 0, 1, 5000, 400000 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint8_t *d = make_text(sizes[i] ? sizes[i] : 1, 20 + i);
        size_t clen;
        uint8_t *zs = zstd_make(d, sizes[i], &clen);
        expect_roundtrip_mem(zs, clen, d, sizes[i], TPROF_COMP_ZSTD, 4096);
        expect_roundtrip_mem(zs, clen, d, sizes[i], TPROF_COMP_ZSTD, 3);
        free(zs);
        free(d);
    }
    assert_string_equal(tprof_compression_name(TPROF_COMP_ZSTD), "zstd");
}

static void test_zstd_two_frames(void **state)
{
    (void)state;
    const size_t na = 70000, nb = 12345;
    uint8_t *a = make_text(na, 30), *b = make_text(nb, 31);
    size_t ca, cb;
    uint8_t *za = zstd_make(a, na, &ca), *zb = zstd_make(b, nb, &cb);
    ubuf comp = { 0 }, orig = { 0 };
    ubuf_add(&comp, za, ca);
    ubuf_add(&comp, zb, cb);
    ubuf_add(&orig, a, na);
    ubuf_add(&orig, b, nb);
    expect_roundtrip_mem(comp.p, comp.len, orig.p, orig.len, TPROF_COMP_ZSTD, 4096);
    expect_roundtrip_mem(comp.p, comp.len, orig.p, orig.len, TPROF_COMP_ZSTD, 1u << 20);
    /* a file named .json holding zstd */
    char *path = write_temp("z.json", comp.p, comp.len);
    char err[512];
    tprof_source *s;
    assert_int_equal(tprof_source_open(&s, path, err, sizeof err), 0);
    assert_int_equal(tprof_source_compression(s), TPROF_COMP_ZSTD);
    ubuf got = { 0 };
    assert_int_equal(read_all(s, 10000, &got), 0);
    assert_int_equal(got.len, orig.len);
    assert_memory_equal(got.p, orig.p, orig.len);
    assert_int_equal(tprof_source_bytes_in(s), comp.len);
    tprof_source_close(s);
    remove_temp(path);
    /* cut exactly between the frames: a complete, shorter stream */
    expect_roundtrip_mem(comp.p, ca, a, na, TPROF_COMP_ZSTD, 4096);
    ubuf_free(&got);
    ubuf_free(&comp);
    ubuf_free(&orig);
    free(za);
    free(zb);
    free(a);
    free(b);
}

static void test_zstd_large(void **state)
{
    (void)state;
    const size_t n = 3u << 20;
    uint8_t *d = make_random(n, 77);
    size_t clen;
    uint8_t *zs = zstd_make(d, n, &clen);
    assert_true(clen > (2u << 20));
    expect_roundtrip_mem(zs, clen, d, n, TPROF_COMP_ZSTD, 1u << 20);
    expect_roundtrip_mem(zs, clen, d, n, TPROF_COMP_ZSTD, 777);
    free(zs);
    free(d);
}

static void test_zstd_truncated(void **state)
{
    (void)state;
    const size_t na = 300000, nb = 1000;
    uint8_t *a = make_text(na, 40), *b = make_text(nb, 41);
    size_t ca, cb;
    uint8_t *za = zstd_make(a, na, &ca), *zb = zstd_make(b, nb, &cb);
    ubuf comp = { 0 }, orig = { 0 };
    ubuf_add(&comp, za, ca);
    ubuf_add(&comp, zb, cb);
    ubuf_add(&orig, a, na);
    ubuf_add(&orig, b, nb);
    /* inside frame 1 (header, blocks, last byte), inside frame 2 */
    const size_t cuts[] = { 4, 5, 8, 20, ca / 3, ca / 2, ca - 1, ca + 1, ca + 4, ca + cb / 2, ca + cb - 1 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        tprof_source *s;
        assert_int_equal(tprof_source_open_mem(&s, comp.p, cuts[i], "cut.zst"), 0);
        assert_int_equal(tprof_source_compression(s), TPROF_COMP_ZSTD);
        ubuf got = { 0 };
        int rc = read_all(s, 4096, &got);
        if (rc != TPROF_ETRUNC)
            fail_msg("zstd cut at %zu of %zu: rc %d (%s), expected TPROF_ETRUNC", cuts[i], comp.len, rc,
                     tprof_strerror(rc));
        assert_true(got.len <= orig.len);
        if (got.len && memcmp(got.p, orig.p, got.len) != 0)
            fail_msg("zstd cut at %zu: delivered bytes are not a prefix of the original", cuts[i]);
        if (cuts[i] > ca) assert_true(got.len >= na); /* frame 1 is complete */
        assert_non_null(strstr(tprof_source_errmsg(s), "cut.zst"));
        tprof_source_close(s);
        ubuf_free(&got);
    }
    ubuf_free(&comp);
    ubuf_free(&orig);
    free(za);
    free(zb);
    free(a);
    free(b);
}

static void test_zstd_corrupt(void **state)
{
    (void)state;
    const size_t n = 50000;
    uint8_t *d = make_text(n, 50);
    size_t clen;
    uint8_t *zs = zstd_make(d, n, &clen);
    /* byte 4 is the frame header descriptor; bit 3 is reserved and must be 0 */
    zs[4] |= 0x08;
    tprof_source *s;
    assert_int_equal(tprof_source_open_mem(&s, zs, clen, "bad.zst"), 0);
    ubuf got = { 0 };
    int rc = read_all(s, 4096, &got);
    if (rc != TPROF_EFORMAT) fail_msg("rc %d (%s), expected TPROF_EFORMAT", rc, tprof_strerror(rc));
    assert_non_null(strstr(tprof_source_errmsg(s), "bad.zst"));
    tprof_source_close(s);
    ubuf_free(&got);
    free(zs);
    free(d);
}

int main(void)
{
    const struct CMUnitTest plain[] = {
        cmocka_unit_test(test_plain_mem),
        cmocka_unit_test(test_plain_short_inputs),
        cmocka_unit_test(test_plain_file),
        cmocka_unit_test(test_plain_named_gz),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_read_usage),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_zstd_single_frame),
        cmocka_unit_test(test_zstd_two_frames),
        cmocka_unit_test(test_zstd_large),
        cmocka_unit_test(test_zstd_truncated),
        cmocka_unit_test(test_zstd_corrupt),
    };
    const struct CMUnitTest gzip[] = {
        cmocka_unit_test(test_gzip_mem),
        cmocka_unit_test(test_gzip_empty_payload),
        cmocka_unit_test(test_gzip_large_incompressible),
        cmocka_unit_test(test_gzip_file_named_json),
        cmocka_unit_test(test_gzip_two_members),
        cmocka_unit_test(test_gzip_zero_padding),
        cmocka_unit_test(test_gzip_truncated),
        cmocka_unit_test(test_gzip_truncated_second_member),
        cmocka_unit_test(test_gzip_corrupt),
        cmocka_unit_test(test_gzip_trailing_garbage),
    };
    int failed = 0;
    failed += cmocka_run_group_tests_name("plain and zstd", plain, NULL, NULL);
    failed += cmocka_run_group_tests_name("gzip, default backend", gzip, setup_default, teardown_env);
    failed += cmocka_run_group_tests_name("gzip, TPROF_FORCE_ZLIB=1", gzip, setup_zlib, teardown_env);
    return failed ? 1 : 0;
}
