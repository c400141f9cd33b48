#include "trainprof/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* V[0..N) sorted, duplicates dropped; returns the new count. */
static size_t sort_unique(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_i64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || v[m - 1] != v[i]) v[m++] = v[i];
    return m;
}

/* Appends "0-15, 17, 20-23" (at most MAXRUNS runs, then ", ...") for the
 * sorted ranks V[0..N). */
static void append_runs(char *buf, size_t len, const int64_t *v, size_t n, size_t maxruns)
{
    size_t runs = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && v[j + 1] == v[j] + 1) j++;
        size_t at = strlen(buf);
        if (runs == maxruns) {
            snprintf(buf + at, len - at, ", ...");
            return;
        }
        if (j == i) snprintf(buf + at, len - at, "%s%" PRId64, runs ? ", " : "", v[i]);
        else snprintf(buf + at, len - at, "%s%" PRId64 "-%" PRId64, runs ? ", " : "", v[i], v[j]);
        runs++;
        i = j + 1;
    }
}

char *tprof_fmt_rank_set(char *buf, size_t len, const int64_t *ranks, size_t k, const int64_t *all, size_t n)
{
    enum { MAX_EXCEPT = 3, MAX_RUNS = 6 };
    buf[0] = 0;
    int64_t *r = malloc((k ? k : 1) * sizeof *r), *u = malloc((n ? n : 1) * sizeof *u);
    if (!r || !u) {
        free(r);
        free(u);
        snprintf(buf, len, "%zu ranks", k);
        return buf;
    }
    memcpy(r, ranks, k * sizeof *r);
    if (n) memcpy(u, all, n * sizeof *u);
    k = sort_unique(r, k);
    n = sort_unique(u, n);
    /* the ranks of ALL that RANKS leaves out, when they are few */
    int64_t missing[MAX_EXCEPT];
    size_t nmissing = 0, j = 0, covered = 0;
    for (size_t i = 0; i < n && nmissing <= MAX_EXCEPT; i++) {
        while (j < k && r[j] < u[i]) j++;
        if (j < k && r[j] == u[i]) covered++;
        else if (nmissing < MAX_EXCEPT) missing[nmissing++] = u[i];
        else nmissing++;
    }
    int contiguous = n > 0 && u[n - 1] - u[0] == (int64_t)n - 1; /* ALL is lo-hi: "lo-hi except m" reads true */
    if (!k) snprintf(buf, len, "no rank");
    else if (k == 1) snprintf(buf, len, "rank %" PRId64, r[0]);
    else if (contiguous && n > MAX_EXCEPT && covered == k && nmissing <= MAX_EXCEPT && k > nmissing) {
        snprintf(buf, len, "ranks ");
        append_runs(buf, len, u, n, MAX_RUNS);
        for (size_t i = 0; i < nmissing; i++) {
            size_t at = strlen(buf);
            snprintf(buf + at, len - at, "%s%" PRId64, i ? ", " : " except ", missing[i]);
        }
    } else {
        snprintf(buf, len, "ranks ");
        append_runs(buf, len, r, k, MAX_RUNS);
        size_t at = strlen(buf);
        if (strstr(buf, "...")) snprintf(buf + at, len - at, " (%zu ranks)", k);
    }
    free(r);
    free(u);
    return buf;
}
