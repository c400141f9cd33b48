/* All-to-all traffic between ranks (internal, collectives): what each rank
 * sent to each other rank of its group in the matched all-to-alls, from the
 * split sizes PyTorch records with them (docs/METRICS.md, "all-to-all
 * pairs"). */
#ifndef TPROF_ALLTOALL_H
#define TPROF_ALLTOALL_H

#include <stdint.h>

#include "trainprof/result.h"

extern const tprof_table_desc tprof_a2a_pairs_desc;

typedef struct tprof_a2a tprof_a2a;

/* The outcome of one rank's side of one instance. */
typedef enum {
    TPROF_A2A_ADDED = 0,  /* its bytes per destination added */
    TPROF_A2A_NO_SPLITS,  /* no "In split size" recorded, or no size: nothing to add */
    TPROF_A2A_CUT,        /* the split list was cut after 30 entries: its bytes per destination are unknown */
    TPROF_A2A_UNEVEN,     /* the sizes disagree (rows do not divide its elements, a list not one row per
                             rank of the group, or not a list): left out */
} tprof_a2a_outcome;

tprof_a2a *tprof_a2a_new(void);
void tprof_a2a_free(tprof_a2a *a);

/* Rank FROM's side of one matched all-to-all of GROUP: IN_BYTES sent, cut
 * along dimension 0 into the rows IN_SPLITS gives per destination ("[]":
 * equal parts over GROUP_SIZE), the destinations' global ranks from
 * GROUP_RANKS ("" when not recorded). *OUTCOME says what was added; returns
 * 0 or TPROF_ENOMEM. */
int tprof_a2a_add(tprof_a2a *a, const char *group, int64_t from, int64_t in_bytes, int64_t group_size,
                  const char *in_splits, const char *group_ranks, tprof_a2a_outcome *outcome);

/* Adds pairs as tprof_a2a_rows wrote them (another owner's groups: each
 * pair is in one owner's rows only). */
int tprof_a2a_add_rows(tprof_a2a *a, const tprof_rows *rows);
/* The pairs into OUT (tprof_a2a_pairs_desc), most bytes first; *MAX_OVER_MEAN
 * the busiest pair's bytes over the mean pair's (0 without pairs). */
int tprof_a2a_rows(const tprof_a2a *a, tprof_rows *out, double *max_over_mean);

#endif
