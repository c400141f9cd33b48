#include "intervals.h"

#include <stdlib.h>

#include "trainprof/trace.h"

static int cmp_iv(const void *a, const void *b)
{
    const tprof_interval *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

int64_t tprof_interval_union(tprof_interval *iv, size_t n)
{
    if (n == 0) return 0;
    qsort(iv, n, sizeof *iv, cmp_iv);
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
