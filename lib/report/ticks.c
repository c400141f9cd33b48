/* Axis ticks for the SVG plots (log --svg, mem --timeline): steps of 1, 2
 * or 5 times a power of ten, as plotting libraries choose them, so that
 * labels read as round numbers. */
#include "trainprof/report.h"

#include <math.h>

size_t tprof_ticks(double lo, double hi, size_t max, double *out)
{
    if (!max || !isfinite(lo) || !isfinite(hi)) return 0;
    if (hi < lo) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    if (hi == lo) {
        out[0] = lo;
        return 1;
    }
    double raw = (hi - lo) / (double)(max > 1 ? max - 1 : 1), mag = pow(10, floor(log10(raw))), step = mag;
    static const double mult[] = { 1, 2, 5, 10 };
    for (size_t i = 0; i < sizeof mult / sizeof *mult; i++)
        if ((step = mult[i] * mag) >= raw) break;
    size_t n = 0;
    for (double v = ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9 && n < max; v += step)
        out[n++] = fabs(v) < step * 1e-9 ? 0 : v; /* no "-0" */
    return n;
}
