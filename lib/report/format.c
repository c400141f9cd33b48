#include "trainprof/report.h"

#include <inttypes.h>
#include <stdio.h>

char *tprof_fmt_duration(char *buf, size_t len, int64_t ns)
{
    int64_t a = ns < 0 ? -ns : ns;
    if (a < 1000) snprintf(buf, len, "%" PRId64 " ns", ns);
    else if (a < 1000000) snprintf(buf, len, "%.3g us", (double)ns / 1e3);
    else if (a < 1000000000) snprintf(buf, len, "%.3g ms", (double)ns / 1e6);
    else snprintf(buf, len, "%.4g s", (double)ns / 1e9);
    return buf;
}

char *tprof_fmt_bytes(char *buf, size_t len, int64_t b)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    double v = (double)b;
    int u = 0;
    while ((v >= 1024 || v <= -1024) && u < 5) {
        v /= 1024;
        u++;
    }
    if (u == 0) snprintf(buf, len, "%" PRId64 " B", b);
    else snprintf(buf, len, "%.3g %s", v, unit[u]);
    return buf;
}
