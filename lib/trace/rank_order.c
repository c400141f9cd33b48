/* Which rank a trace is and the order ranks are shown in: one rule for every
 * command (merge's): distributedInfo.rank, then rank<N> in the file name,
 * then the argument order. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trainprof/error.h"
#include "trainprof/trace.h"

int tprof_rank_from_name(const char *path, int64_t *rank)
{
    if (!path) return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (const char *p = base; *p; p++) {
        if (strncasecmp(p, "rank", 4) != 0) continue;
        const char *d = p + 4;
        if (*d == '-' || *d == '_') d++; /* PyTorch writes rank3, HTA's traces rank-3 */
        if (!isdigit((unsigned char)*d)) continue;
        int64_t v = 0;
        while (isdigit((unsigned char)*d) && v < 100000000) v = v * 10 + (*d++ - '0');
        *rank = v;
        return 1;
    }
    return 0;
}

int64_t tprof_trace_rank(const tprof_trace *t)
{
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    int64_t r;
    if (m->rank >= 0) return m->rank;
    return tprof_rank_from_name(m->path, &r) ? r : -1;
}

typedef struct {
    int64_t rank;
    size_t index;
} rank_key;

static int cmp_rank_key(const void *a, const void *b)
{
    const rank_key *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

int tprof_rank_order(const int64_t *ranks, size_t n, size_t *order)
{
    rank_key *k = malloc((n ? n : 1) * sizeof *k);
    if (!k) return TPROF_ENOMEM;
    for (size_t i = 0; i < n; i++) k[i] = (rank_key){ ranks[i] >= 0 ? ranks[i] : (int64_t)i, i };
    qsort(k, n, sizeof *k, cmp_rank_key);
    for (size_t i = 0; i < n; i++) order[i] = k[i].index;
    free(k);
    return 0;
}
