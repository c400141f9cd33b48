/* The per-step metrics line, in VeOmni's metric names. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "trainprof/profiler.h"

static void add(char *buf, size_t len, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(*n < len ? buf + *n : NULL, *n < len ? len - *n : 0, fmt, ap);
    va_end(ap);
    if (k > 0) *n += (size_t)k;
}

size_t tprof_step_line(char *buf, size_t len, int64_t step, const tprof_meter_metrics *m, const char *const *xnames,
                       const double *xvalues, size_t nx, int json)
{
    const char *names[TPROF_METER_NMETRICS];
    double values[TPROF_METER_NMETRICS];
    size_t k = m ? tprof_meter_list(m, names, values) : 0, n = 0;
    if (len) buf[0] = 0;
    if (json)
        add(buf, len, &n, "{\"step\": %" PRId64, step);
    else
        add(buf, len, &n, "step %" PRId64 ":", step);
    for (size_t i = 0; i < nx + k; i++) {
        const char *name = i < nx ? xnames[i] : names[i - nx];
        double v = i < nx ? xvalues[i] : values[i - nx];
        if (json)
            add(buf, len, &n, ", \"%s\": %.6g", name, v == v && v - v == 0 ? v : 0.0);
        else
            add(buf, len, &n, "%s %s: %.4g", i ? "," : "", name, v);
    }
    if (json) add(buf, len, &n, "}");
    return n;
}
