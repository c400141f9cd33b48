/* Dense BF16 peak of a device from its name. The first ten rows are the
 * reference's, in its order: a name is tested against each row in turn, so
 * "H200" is matched before "H20" and "GB200" before "B200". Sources of every
 * value: docs/METRICS.md. */
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/flops.h"

static const struct {
    const char *label; /* the substrings joined with '|' */
    const char *sub[3];
    double tflops;
} rows[] = {
    { "H100|H800|H200", { "H100", "H800", "H200" }, 989 },
    { "A100|A800", { "A100", "A800" }, 312 },
    { "L40", { "L40" }, 181.05 },
    { "L20", { "L20" }, 119.5 },
    { "H20", { "H20" }, 148 },
    { "910B|910_93", { "910B", "910_93" }, 354 },
    { "GB200", { "GB200" }, 2565 },
    { "B200", { "B200" }, 2382 },
    { "GB300", { "GB300" }, 2500 },
    { "B300", { "B300" }, 2250 },
    /* trainprof's additions, after the reference rows so they never change
     * what those rows match */
    { "MI355X", { "MI355X" }, 2516.6 },
    { "MI325X", { "MI325X" }, 1307.4 },
    { "MI300X", { "MI300X" }, 1307.4 },
    { "MI250X", { "MI250X" }, 383 },
    { "A10", { "A10" }, 125 },
    { "L4", { "L4" }, 121 },
};

int tprof_device_peak(const char *name, double *tflops)
{
    *tflops = 0;
    if (!name) return TPROF_EUSAGE;
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        for (int k = 0; k < 3 && rows[i].sub[k]; k++)
            if (strstr(name, rows[i].sub[k])) {
                *tflops = rows[i].tflops;
                return 0;
            }
    return TPROF_EUSAGE;
}

const char *tprof_device_peak_row(size_t i, double *tflops)
{
    if (i >= sizeof rows / sizeof *rows) return NULL;
    *tflops = rows[i].tflops;
    return rows[i].label;
}
