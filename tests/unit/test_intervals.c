/* Interval union and merge, and the int64 sort (lib/analysis/intervals.c),
 * and the id map the op tree and the op view index by (lib/util/idmap.h),
 * on inputs in every order the sorts meet: already in order (not sorted
 * again), in order but for one element, in random order, below and above
 * the radix threshold. The expectations come from plain references: qsort,
 * then the intervals merged one by one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/analysis/intervals.h"
#include "../../lib/util/idmap.h"

static uint64_t rng = 88172645463325252ull;
static int64_t next_rand(int64_t mod)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int64_t)(rng % (uint64_t)mod);
}

static int by_start(const void *a, const void *b)
{
    const tprof_interval *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The union's length and merged count, the slow obvious way. */
static void reference(const tprof_interval *iv, size_t n, int64_t *len, size_t *count)
{
    tprof_interval *c = malloc(n * sizeof *c);
    assert_non_null(c);
    memcpy(c, iv, n * sizeof *c);
    qsort(c, n, sizeof *c, by_start);
    *len = 0;
    *count = 0;
    for (size_t i = 0; i < n;) {
        int64_t s = c[i].start, e = c[i].end;
        for (i++; i < n && c[i].start <= e; i++)
            if (c[i].end > e) e = c[i].end;
        *len += e - s;
        ++*count;
    }
    free(c);
}

static void check(const tprof_interval *iv, size_t n)
{
    int64_t want_len;
    size_t want_count;
    reference(iv, n, &want_len, &want_count);
    tprof_interval *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    memcpy(a, iv, n * sizeof *a);
    memcpy(b, iv, n * sizeof *b);
    assert_int_equal(tprof_interval_union(a, n), want_len);
    size_t m = tprof_interval_merge(b, n);
    assert_int_equal(m, want_count);
    int64_t total = 0;
    for (size_t i = 0; i < m; i++) {
        assert_true(b[i].end >= b[i].start);
        if (i) assert_true(b[i].start > b[i - 1].end); /* disjoint, in order */
        total += b[i].end - b[i].start;
    }
    assert_int_equal(total, want_len);
    free(a);
    free(b);
}

/* N intervals: starts from 1.7e18 ns on (absolute clocks), in order when
 * ORDERED, with durations up to 3 us and gaps up to 2 us. */
static tprof_interval *make(size_t n, int ordered)
{
    tprof_interval *iv = malloc(n * sizeof *iv);
    assert_non_null(iv);
    int64_t t = 1700000000000000000ll;
    for (size_t i = 0; i < n; i++) {
        t += next_rand(2000);
        iv[i] = (tprof_interval){ t, t + next_rand(3000) };
    }
    if (!ordered)
        for (size_t i = n; i > 1; i--) { /* shuffle */
            size_t j = (size_t)next_rand((int64_t)i);
            tprof_interval x = iv[i - 1];
            iv[i - 1] = iv[j];
            iv[j] = x;
        }
    return iv;
}

static void test_in_order(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 100000; n *= 10) {
        tprof_interval *iv = make(n, 1);
        check(iv, n);
        free(iv);
    }
}

static void test_one_out_of_order(void **state)
{
    (void)state;
    size_t sizes[] = { 2, 100, 5000, 100000 };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        tprof_interval *iv = make(n, 1);
        tprof_interval first = iv[0];
        memmove(iv, iv + 1, (n - 1) * sizeof *iv);
        iv[n - 1] = first; /* the earliest last */
        check(iv, n);
        free(iv);
    }
}

static void test_random_order(void **state)
{
    (void)state;
    size_t sizes[] = { 3, 1000, 4095, 4096, 200000 };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        tprof_interval *iv = make(sizes[k], 0);
        check(iv, sizes[k]);
        free(iv);
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* tprof_sort_i64 against qsort: in order, the smallest last, random. */
static void test_sort_i64(void **state)
{
    (void)state;
    size_t sizes[] = { 1, 2, 4095, 4096, 100000 };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        int64_t *a = malloc(n * sizeof *a), *want = malloc(n * sizeof *want);
        assert_non_null(a);
        assert_non_null(want);
        for (int order = 0; order < 3; order++) {
            for (size_t i = 0; i < n; i++) a[i] = order == 2 ? next_rand(1 << 30) - (1 << 29) : (int64_t)i * 7 - 5;
            if (order == 1 && n > 1) a[n - 1] = -100;
            memcpy(want, a, n * sizeof *a);
            qsort(want, n, sizeof *want, cmp_i64);
            tprof_sort_i64(a, n);
            assert_memory_equal(a, want, n * sizeof *a);
        }
        free(a);
        free(want);
    }
}

static void test_by_hand(void **state)
{
    (void)state;
    tprof_interval iv[] = { { 10, 20 }, { 0, 5 }, { 15, 30 }, { 30, 31 }, { 40, 40 } };
    /* [0,5] + [10,31] + [40,40]: 5 + 21 + 0 */
    assert_int_equal(tprof_interval_union(iv, 5), 26);
    tprof_interval m[] = { { 10, 20 }, { 0, 5 }, { 15, 30 }, { 30, 31 }, { 40, 40 } };
    assert_int_equal(tprof_interval_merge(m, 5), 3);
    assert_int_equal(m[1].start, 10);
    assert_int_equal(m[1].end, 31);
}

/* The id map over dense ids (an array) and sparse ones (the hash map):
 * both answer as a plain list of (id, value) pairs, the last put winning. */
static void test_idmap(void **state)
{
    (void)state;
    for (int sparse = 0; sparse < 2; sparse++) {
        enum { N = 5000 };
        int64_t ids[N];
        uint32_t vals[N];
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (int i = 0; i < N; i++) {
            ids[i] = sparse ? next_rand(1LL << 40) : 1000 + next_rand(2 * N); /* repeats in both */
            vals[i] = (uint32_t)i;
            if (ids[i] < lo) lo = ids[i];
            if (ids[i] > hi) hi = ids[i];
        }
        tprof_idmap m;
        assert_int_equal(tprof_idmap_init(&m, lo, hi, N), 0);
        assert_int_equal(m.span != 0, !sparse);
        for (int i = 0; i < N; i++) assert_int_equal(tprof_idmap_put(&m, ids[i], vals[i]), 0);
        for (int i = 0; i < N; i++) {
            uint32_t want = 0;
            for (int j = 0; j < N; j++)
                if (ids[j] == ids[i]) want = vals[j];
            assert_int_equal(tprof_idmap_get(&m, ids[i]), want);
        }
        /* ids never put, inside and outside the range */
        assert_int_equal(tprof_idmap_get(&m, lo - 1), TPROF_IDMAP_NONE);
        assert_int_equal(tprof_idmap_get(&m, hi + 1), TPROF_IDMAP_NONE);
        assert_int_equal(tprof_idmap_get(&m, INT64_MIN + 1), TPROF_IDMAP_NONE);
        tprof_idmap_free(&m);
    }
    tprof_idmap none; /* no ids at all */
    assert_int_equal(tprof_idmap_init(&none, INT64_MAX, INT64_MIN, 0), 0);
    assert_int_equal(tprof_idmap_get(&none, 5), TPROF_IDMAP_NONE);
    tprof_idmap_free(&none);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_in_order),
        cmocka_unit_test(test_one_out_of_order),
        cmocka_unit_test(test_random_order),
        cmocka_unit_test(test_sort_i64),
        cmocka_unit_test(test_idmap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
