/* Event shapes (internal): the bytes between the values of an event.
 *
 * Events of one op repeat their layout exactly: the same keys in the same
 * order with the same separators, only the values differ. The fast path
 * records that layout once per op (keyed by the event's bytes up to its
 * name), and for the next event of the op checks each stretch of bytes
 * between two values with one compare instead of scanning separators and
 * keys token by token; the values are still read, and checked, one by one.
 *
 * Sound because a stretch equal to one recorded in the same grammatical
 * place (after a value, at the same depth) takes the parser through the
 * same keys and the same states: it holds only whitespace, ',', ':', '{'
 * and '}' and keys without escapes. Where the bytes differ, the event goes
 * on through the ordinary member loops from that point.
 *
 * Constant values: about half the values of an op's events repeat from
 * event to event (pid and tid, device and stream, shapes and type lists in
 * args). A value whose effect on the record is none (a skipped value) or
 * one integer field is kept with its stretch; a run of such steps is then
 * checked with one compare and its integers set without reading the value.
 * Sound for the same reason: the compare takes in the byte after the run's
 * last value too (the next stretch's first, which cannot continue a
 * value), so equal bytes end each value in the same place. A kept value
 * that differs is read as usual and its step stops being constant.
 *
 * Op args (shapes and types kept with TPROF_KEEP_OP_ARGS) are not constant
 * but repeat from an op to the next of its name nine times in ten: each
 * step keeps the last one read with its string id, and an equal value (the
 * same bytes: a container ends with them) takes the id without the skip
 * cache's lookup. A value of another length leaves the memo as it was. */
#ifndef TPROF_SHAPE_H
#define TPROF_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#define SHAPE_STEPS 48
#define SHAPE_BYTES 1024
#define SHAPE_IN_ARGS 0x80 /* in a step's field: an args member */

typedef struct {
    uint16_t lit_at;  /* the bytes before the value: bytes[lit_at, lit_at + lit_len) */
    uint16_t run_len; /* constant: the bytes of the run from lit_at (stretches and values);
                         the byte after them is the next stretch's or the tail's first */
    uint8_t lit_len;
    uint8_t field;    /* the member's event_key, or its arg_key | SHAPE_IN_ARGS */
    uint8_t val_len;  /* a kept value: bytes[lit_at + lit_len, + val_len) */
    uint8_t run;      /* constant: the steps of the run from here; 0: the value is read */
    uint8_t memo;     /* the kept value is not a constant but the last op arg read here (with
                         TPROF_KEEP_OP_ARGS), its string id in ints (its reader's chunk_tag << 32
                         | id): the next equal one takes the id without a lookup */
} shape_step;

typedef struct {
    uint64_t key;     /* of the event's bytes up to its name */
    int depth_left;   /* the event's nesting allowance when recorded */
    uint16_t nsteps, nbytes;
    uint16_t tail_at; /* after the last value, through the event's '}' */
    uint8_t tail_len;
    shape_step steps[SHAPE_STEPS];
    int64_t ints[SHAPE_STEPS]; /* what a constant integer step sets */
    uint8_t bytes[SHAPE_BYTES + 16]; /* + 16: read a vector at a time */
} event_shape;

/* A thread's shapes (reused across the chunks it parses). */
typedef struct tprof_shapes tprof_shapes;
tprof_shapes *tprof_shapes_new(void); /* NULL when out of memory: then no shapes */
/* Sized for about JSON_BYTES of JSON: a set per 2 KiB, at least 4, the
 * full 512 from 1 MiB or when JSON_BYTES is -1 (unknown). */
tprof_shapes *tprof_shapes_new_for(int64_t json_bytes);
void tprof_shapes_free(tprof_shapes *s);
/* The shape recorded for KEY, or NULL. */
event_shape *tprof_shape_find(tprof_shapes *s, uint64_t key);
/* Groups the constant steps into runs (after recording, or when a step
 * stopped being constant). */
void tprof_shape_runs(event_shape *sh);
/* An empty shape to record KEY's into (replacing the one of its set used
 * less recently); it is found only once tprof_shape_done publishes it. */
event_shape *tprof_shape_begin(tprof_shapes *s, uint64_t key);
void tprof_shape_done(tprof_shapes *s, const event_shape *sh);
/* Forgets a shape (an event of its key differed: the next one records). */
void tprof_shape_drop(tprof_shapes *s, const event_shape *sh);

#endif
