#include "trainprof/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* PREC significant digits, trailing zeros dropped, never an exponent. */
static char *amount(char *buf, size_t len, double v, int prec, const char *unit)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if (strchr(tmp, 'e')) snprintf(buf, len, "%.0f %s", v, unit);
    else snprintf(buf, len, "%s %s", tmp, unit);
    return buf;
}

char *tprof_fmt_duration(char *buf, size_t len, int64_t ns)
{
    double d = (double)ns, a = fabs(d);
    /* a unit is left once 3 significant digits would round to 1000 */
    if (a < 1000) snprintf(buf, len, "%" PRId64 " ns", ns);
    else if (a < 999500) amount(buf, len, d / 1e3, 3, "us");
    else if (a < 999500000) amount(buf, len, d / 1e6, 3, "ms");
    else amount(buf, len, d / 1e9, 4, "s");
    return buf;
}

char *tprof_fmt_bytes(char *buf, size_t len, int64_t b)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    double v = (double)b;
    if (fabs(v) < 1024) {
        snprintf(buf, len, "%" PRId64 " B", b);
        return buf;
    }
    int u = 0;
    while (fabs(v) >= 999.5 && u < 6) {
        v /= 1024;
        u++;
    }
    return amount(buf, len, v, 3, unit[u]);
}

char *tprof_fmt_progress(char *buf, size_t len, uint64_t done, int64_t total, double rate, int nfiles,
                         const char *what)
{
    char a[32], b[32], r[32] = "";
    tprof_fmt_bytes(a, sizeof a, (int64_t)done);
    if (rate >= 0 && rate < 9e18) {
        tprof_fmt_bytes(r, sizeof r, (int64_t)rate);
        strcat(r, "/s");
    }
    char files[64];
    snprintf(files, sizeof files, "%d file%s%s%s", nfiles, nfiles == 1 ? "" : "s", what ? ", " : "", what ? what : "");
    if (total <= 0) { /* a pipe: no end to measure against, so the amount and the pace */
        snprintf(buf, len, "%s read%s%s (%s)", a, r[0] ? ", " : "", r, files);
        return buf;
    }
    int pct = done >= (uint64_t)total ? 100 : (int)(done * 100 / (uint64_t)total);
    char bar[31];
    for (int i = 0; i < 30; i++) bar[i] = i < pct * 30 / 100 ? '#' : '.';
    bar[30] = 0;
    tprof_fmt_bytes(b, sizeof b, total);
    snprintf(buf, len, "[%s] %3d%% %s / %s%s%s (%s)", bar, pct, a, b, r[0] ? ", " : "", r, files);
    return buf;
}

char *tprof_fmt_trace_label(char *buf, size_t len, int64_t rank, size_t index)
{
    if (rank >= 0) snprintf(buf, len, "rank %" PRId64, rank);
    else snprintf(buf, len, "trace %zu", index);
    return buf;
}
