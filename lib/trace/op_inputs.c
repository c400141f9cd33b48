/* The compact spans' op args, interned: a run repeats a few thousand input
 * tuples (Input Dims, Input type, Input Strides, Concrete Inputs) over
 * millions of ops, so a span names its tuple in 4 bytes rather than holding
 * its 16. */
#include "trace_internal.h"
#include "../util/grow.h"

#include <stdlib.h>
#include <string.h>

static uint64_t tuple_hash(const uint32_t a[TPROF_OP_ARGS])
{
    uint64_t lo = (uint64_t)a[0] | (uint64_t)a[1] << 32, hi = (uint64_t)a[2] | (uint64_t)a[3] << 32;
    uint64_t h = lo * 0x9E3779B97F4A7C15ull ^ hi * 0xC2B2AE3D27D4EB4Full;
    return h ^ h >> 31;
}

/* Doubles the slots (at least 64) and places every tuple again. */
static int grow_slots(tprof_trace *t)
{
    size_t n = t->input_nslots ? t->input_nslots * 2 : 64;
    uint32_t *s = calloc(n, sizeof *s);
    if (!s) return -1;
    for (uint32_t id = 1; id < t->ninputs; id++) {
        size_t i = tuple_hash(t->inputs[id]) & (n - 1);
        while (s[i]) i = (i + 1) & (n - 1);
        s[i] = id;
    }
    free(t->input_slots);
    t->input_slots = s;
    t->input_nslots = n;
    return 0;
}

uint32_t tprof_trace_intern_inputs(tprof_trace *t, const uint32_t arg[TPROF_OP_ARGS])
{
    _Static_assert(TPROF_OP_ARGS == 4, "tuple_hash reads four ids");
    if (!(arg[0] | arg[1] | arg[2] | arg[3])) return 0;
    if (t->last_inputs && !memcmp(t->inputs[t->last_inputs], arg, sizeof *t->inputs)) return t->last_inputs;
    if (!t->ninputs) { /* id 0: no inputs */
        if (tprof_grow_items((void **)&t->inputs, &t->inputcap, 1, sizeof *t->inputs)) return UINT32_MAX;
        memset(t->inputs[0], 0, sizeof *t->inputs);
        t->ninputs = 1;
    }
    if (t->ninputs * 2 >= t->input_nslots && grow_slots(t)) return UINT32_MAX;
    size_t mask = t->input_nslots - 1, i = tuple_hash(arg) & mask;
    for (uint32_t id; (id = t->input_slots[i]) != 0; i = (i + 1) & mask)
        if (!memcmp(t->inputs[id], arg, sizeof *t->inputs)) return t->last_inputs = id;
    if (t->ninputs >= UINT32_MAX ||
        tprof_grow_items((void **)&t->inputs, &t->inputcap, t->ninputs + 1, sizeof *t->inputs))
        return UINT32_MAX;
    uint32_t id = (uint32_t)t->ninputs++;
    memcpy(t->inputs[id], arg, sizeof *t->inputs);
    t->input_slots[i] = id;
    return t->last_inputs = id;
}

const uint32_t *tprof_trace_op_inputs(const tprof_trace *t, uint32_t inputs)
{
    static const uint32_t none[TPROF_OP_ARGS];
    return inputs && inputs < t->ninputs ? t->inputs[inputs] : none;
}
