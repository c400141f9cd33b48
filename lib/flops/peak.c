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

/* The roofline's device table: dense (no sparsity) datasheet peaks per
 * element type and HBM bandwidth; BF16 as in the table above. Sources and
 * the derivations are in docs/METRICS.md ("Device table"). Tested in this
 * order, by substring. */
static const tprof_device_spec specs[] = {
    /*                          fp32    tf32    bf16    fp16    fp8     HBM TB/s */
    { "H200", { 66.9, 494.7, 989, 989, 1979 }, 4.8 },
    { "H100|H800", { 66.9, 494.7, 989, 989, 1979 }, 3.35 },
    { "A100|A800", { 19.5, 156, 312, 312, 0 }, 2.039 },
    { "B200", { 0, 1191, 2382, 2382, 4764 }, 8.0 },
    { "MI355X", { 157.3, 0, 2516.6, 2516.6, 5033.2 }, 8.0 },
    { "MI325X", { 163.4, 653.7, 1307.4, 1307.4, 2614.9 }, 6.0 },
    { "MI300X", { 163.4, 653.7, 1307.4, 1307.4, 2614.9 }, 5.3 },
    { "MI250X", { 95.7, 0, 383, 383, 0 }, 3.2768 },
    { "910B", { 0, 0, 354, 354, 0 }, 1.6 },
};

static const char *const dtype_names[TPROF_DT_COUNT] = { "fp32", "tf32", "bf16", "fp16", "fp8" };

const char *tprof_dtype_name(tprof_dtype d) { return (unsigned)d < TPROF_DT_COUNT ? dtype_names[d] : "?"; }

int tprof_device_spec_of(const char *name, tprof_device_spec *out)
{
    memset(out, 0, sizeof *out);
    if (!name) return TPROF_EUSAGE;
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        const char *l = specs[i].label;
        while (*l) { /* each '|'-separated substring */
            size_t n = strcspn(l, "|");
            char sub[32];
            if (n < sizeof sub) {
                memcpy(sub, l, n);
                sub[n] = 0;
                if (strstr(name, sub)) {
                    *out = specs[i];
                    return 0;
                }
            }
            l += n + (l[n] == '|');
        }
    }
    return TPROF_EUSAGE;
}

const tprof_device_spec *tprof_device_spec_row(size_t i) { return i < sizeof specs / sizeof *specs ? &specs[i] : NULL; }
