/* The performance model's parsers on arbitrary bytes: the input split at
 * NUL bytes into an op name and its Input Dims, Input type and Concrete
 * Inputs texts. Whatever they hold, a result is either "no model" or
 * finite, non-negative FLOPs and bytes; crashes and UB are failures. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/analysis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 4);
    if (!buf) return 0;
    memcpy(buf, data, size);
    memset(buf + size, 0, 4); /* at least four strings, each NUL-terminated */
    const char *part[4];
    size_t at = 0;
    for (int k = 0; k < 4; k++) {
        part[k] = buf + at;
        at += strlen(buf + at) + 1;
        if (at > size) at = size; /* the rest are the empty string at the end */
    }
    tprof_op_cost c;
    if (tprof_op_cost_of(part[0], part[1], part[2], part[3], &c) &&
        !(isfinite(c.flops) && isfinite(c.bytes) && c.flops >= 0 && c.bytes >= 0 && c.family))
        abort();
    free(buf);
    return 0;
}
