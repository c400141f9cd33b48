/* libFuzzer target: the log reader, fed in chunks so lines are cut across
 * feeds; every point read must be sorted by step, and the statistics and
 * the SVG must hold for whatever was read. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trainprof/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    size_t chunk = (size_t)data[0] + 1; /* 1..256 bytes per feed */
    tprof_log *lg = tprof_log_new("fuzz");
    if (!lg) return 0;
    for (size_t i = 1; i < size; i += chunk)
        if (tprof_log_feed(lg, data + i, size - i < chunk ? size - i : chunk)) break;
    tprof_log_finish(lg);
    for (size_t m = 0; m < tprof_log_nmetrics(lg); m++) {
        const int64_t *st;
        const double *v;
        size_t n = tprof_log_points(lg, m, &st, &v);
        for (size_t i = 1; i < n; i++)
            if (st[i] <= st[i - 1]) __builtin_trap();
        tprof_log_stats s;
        tprof_log_stats_of(lg, m, &s);
        if (s.count + s.nonfinite != n) __builtin_trap();
        if (s.count && !(s.min <= s.p50 && s.p50 <= s.max)) __builtin_trap();
    }
    FILE *f = fopen("/dev/null", "w");
    if (f) {
        const tprof_log *one[1] = { lg };
        tprof_log_svg(one, 1, f);
        fclose(f);
    }
    tprof_log_free(lg);
    return 0;
}
