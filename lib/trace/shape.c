/* The shape table: 512 sets of 2 shapes (~1 KiB each), by key. A trace
 * has a few hundred distinct ops; with one shape per slot, ops whose keys
 * met in a slot pushed each other out at every event (1 in 20 events was
 * recorded again on the generated trace; 2 ways make that rare). */
#include "shape.h"

#include <stdlib.h>

#define SHAPE_SETS 512

struct tprof_shapes {
    event_shape ways[SHAPE_SETS][2];
    uint8_t recent[SHAPE_SETS]; /* the way used last in each set */
};

tprof_shapes *tprof_shapes_new(void) { return calloc(1, sizeof(tprof_shapes)); }
void tprof_shapes_free(tprof_shapes *s) { free(s); }

event_shape *tprof_shape_slot(tprof_shapes *s, uint64_t key)
{
    size_t set = (key >> 7) % SHAPE_SETS;
    event_shape *w = s->ways[set];
    int i = w[0].key == key ? 0 : w[1].key == key ? 1 : !w[0].key ? 0 : !w[1].key ? 1 : !s->recent[set];
    s->recent[set] = (uint8_t)i;
    return &w[i];
}
