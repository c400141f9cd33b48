#include "intervals.h"

#include <stdlib.h>
#include <string.h>

#include "trainprof/trace.h"

static int cmp_iv(const void *a, const void *b)
{
    const tprof_interval *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Sorts by start: an LSD radix sort for large inputs (analyses sort hundreds
 * of thousands of GPU intervals, several times per summary), qsort below.
 * Union and merge only need start order. */
void tprof_interval_sort(tprof_interval *iv, size_t n)
{
    size_t sorted = 1;
    while (sorted < n && iv[sorted].start >= iv[sorted - 1].start) sorted++;
    if (sorted >= n) return; /* GPU work of one kind usually comes in order */
    if (n < 4096) {
        qsort(iv, n, sizeof *iv, cmp_iv);
        return;
    }
    tprof_interval *tmp = malloc(n * sizeof *tmp);
    if (!tmp) {
        qsort(iv, n, sizeof *iv, cmp_iv);
        return;
    }
    /* starts are close together: only the digits that differ need a pass */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)iv[i].start ^ (1ull << 63);
        if (k < lo) lo = k;
        if (k > hi) hi = k;
    }
    tprof_interval *src = iv, *dst = tmp;
    for (int shift = 0; shift < 64 && ((hi - lo) >> shift) != 0; shift += 11) {
        size_t count[2048] = { 0 };
        for (size_t i = 0; i < n; i++) count[((((uint64_t)src[i].start ^ (1ull << 63)) - lo) >> shift) & 2047]++;
        size_t sum = 0;
        for (int d = 0; d < 2048; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) dst[count[((((uint64_t)src[i].start ^ (1ull << 63)) - lo) >> shift) & 2047]++] = src[i];
        tprof_interval *t = src;
        src = dst;
        dst = t;
    }
    if (src != iv) memcpy(iv, src, n * sizeof *iv);
    free(tmp);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

void tprof_sort_i64(int64_t *a, size_t n)
{
    size_t sorted = 1;
    while (sorted < n && a[sorted] >= a[sorted - 1]) sorted++;
    if (sorted >= n) return; /* launch times usually come in order */
    int64_t *tmp = n >= 4096 ? malloc(n * sizeof *tmp) : NULL;
    if (!tmp) {
        if (n > 1) qsort(a, n, sizeof *a, cmp_i64);
        return;
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)a[i] ^ (1ull << 63);
        if (k < lo) lo = k;
        if (k > hi) hi = k;
    }
    int64_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 64 && ((hi - lo) >> shift) != 0; shift += 11) {
        size_t count[2048] = { 0 };
        for (size_t i = 0; i < n; i++) count[((((uint64_t)src[i] ^ (1ull << 63)) - lo) >> shift) & 2047]++;
        size_t sum = 0;
        for (int d = 0; d < 2048; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) dst[count[((((uint64_t)src[i] ^ (1ull << 63)) - lo) >> shift) & 2047]++] = src[i];
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
    free(tmp);
}

int64_t tprof_interval_union(tprof_interval *iv, size_t n)
{
    if (n == 0) return 0;
    tprof_interval_sort(iv, n);
    int64_t total = 0, s = iv[0].start, e = iv[0].end;
    for (size_t i = 1; i < n; i++) {
        if (iv[i].start > e) {
            total = tprof_end_ns(total, tprof_span_ns(s, e));
            s = iv[i].start;
            e = iv[i].end;
        } else if (iv[i].end > e)
            e = iv[i].end;
    }
    return tprof_end_ns(total, tprof_span_ns(s, e));
}

size_t tprof_interval_merge(tprof_interval *iv, size_t n)
{
    if (n == 0) return 0;
    tprof_interval_sort(iv, n);
    size_t m = 0;
    for (size_t i = 1; i < n; i++) {
        if (iv[i].start > iv[m].end) iv[++m] = iv[i];
        else if (iv[i].end > iv[m].end) iv[m].end = iv[i].end;
    }
    return m + 1;
}

int64_t tprof_interval_overlap(const tprof_interval *a, size_t na, const tprof_interval *b, size_t nb)
{
    int64_t total = 0;
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        int64_t s = a[i].start > b[j].start ? a[i].start : b[j].start;
        int64_t e = a[i].end < b[j].end ? a[i].end : b[j].end;
        if (e > s) total = tprof_sat_add(total, tprof_span_ns(s, e));
        if (a[i].end < b[j].end) i++;
        else j++;
    }
    return total;
}
