/* The shape table: 512 sets of 2 shapes (~1 KiB each) by key, with the
 * keys apart in a small array so that a look-up reads one cache line. A
 * trace has a few hundred distinct ops; with one shape per slot, ops whose
 * keys met in a slot pushed each other out at every event. A small input
 * gets fewer sets (tprof_shapes_new_for): a few KiB of JSON hold few ops,
 * and clearing 1.9 MB per read is what made the fuzz target slow. */
#include "shape.h"

#include <stdlib.h>

#define SHAPE_SETS 512

struct tprof_shapes {
    uint64_t keys[SHAPE_SETS][2]; /* of the shapes ready to follow; 0: none */
    uint8_t recent[SHAPE_SETS];   /* the way used last in each set */
    size_t mask;                  /* sets - 1: only so many sets have ways */
    event_shape ways[][2];
};

tprof_shapes *tprof_shapes_new(void) { return tprof_shapes_new_for(-1); }
tprof_shapes *tprof_shapes_new_for(int64_t json_bytes)
{
    size_t sets = 4;
    if (json_bytes < 0) sets = SHAPE_SETS;
    while (sets < SHAPE_SETS && (int64_t)sets < json_bytes >> 11) sets *= 2;
    tprof_shapes *s = calloc(1, sizeof(tprof_shapes) + sets * sizeof s->ways[0]);
    if (s) s->mask = sets - 1;
    return s;
}
void tprof_shapes_free(tprof_shapes *s) { free(s); }

static size_t set_of(const tprof_shapes *s, uint64_t key) { return (key >> 7) & s->mask; }

event_shape *tprof_shape_find(tprof_shapes *s, uint64_t key)
{
    size_t set = set_of(s, key);
    for (int i = 0; i < 2; i++)
        if (s->keys[set][i] == key) {
            s->recent[set] = (uint8_t)i;
            return &s->ways[set][i];
        }
    return NULL;
}

event_shape *tprof_shape_begin(tprof_shapes *s, uint64_t key)
{
    size_t set = set_of(s, key);
    int i = !s->keys[set][0] ? 0 : !s->keys[set][1] ? 1 : !s->recent[set];
    s->keys[set][i] = 0;
    s->recent[set] = (uint8_t)i;
    event_shape *sh = &s->ways[set][i];
    sh->key = key;
    sh->nsteps = sh->nbytes = 0;
    return sh;
}

void tprof_shape_done(tprof_shapes *s, const event_shape *sh)
{
    size_t set = set_of(s, sh->key);
    s->keys[set][sh - s->ways[set]] = sh->key;
}

void tprof_shape_drop(tprof_shapes *s, const event_shape *sh)
{
    size_t set = set_of(s, sh->key);
    s->keys[set][sh - s->ways[set]] = 0;
}

void tprof_shape_runs(event_shape *sh)
{
    /* from the end: a constant step's run is itself and the run after it */
    for (unsigned i = sh->nsteps; i-- > 0;) {
        shape_step *st = &sh->steps[i];
        if (!st->val_len || st->memo) {
            st->run = 0;
            continue;
        }
        const shape_step *next = i + 1 < sh->nsteps && sh->steps[i + 1].run ? &sh->steps[i + 1] : NULL;
        st->run = (uint8_t)(1 + (next ? next->run : 0));
        st->run_len = (uint16_t)(st->lit_len + st->val_len + (next ? next->run_len : 0));
    }
}
