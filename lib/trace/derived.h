/* Data that analyses derive from a trace's events and share (internal):
 * built on first use, kept with the trace, freed with it. Safe to ask for
 * from several threads at once (summary runs advice beside the others). */
#ifndef TPROF_DERIVED_H
#define TPROF_DERIVED_H

#include "trainprof/trace.h"

typedef enum { TPROF_DERIVED_LAUNCHES = 0, TPROF_DERIVED_OP_TREE, TPROF_DERIVED_COUNT } tprof_derived_kind;

/* The trace's data of kind K, built by BUILD (NULL when out of memory) on
 * the first call and released by DESTROY with the trace. NULL when BUILD
 * failed (it is tried again on the next call). */
const void *tprof_trace_derived(const tprof_trace *t, tprof_derived_kind k, void *(*build)(const tprof_trace *),
                                void (*destroy)(void *));

#endif
