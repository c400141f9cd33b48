/* All-to-all traffic between ranks: each rank's "In split size" (rows per
 * destination along dimension 0, as all_to_all_single takes them) turns its
 * sent bytes into bytes per destination; "Process Group Ranks" maps a
 * destination's place in the group to its global rank. Summed per group
 * and (sender, destination) over the matched instances. */
#include "alltoall.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/error.h"
#include "../util/grow.h"
#include "../util/i64map.h"

enum { P_GROUP, P_FROM, P_TO, P_TO_INDEX, P_BYTES, P_INSTANCES, P_SHARE, P_NCOLS };
static const tprof_col_desc pair_cols[P_NCOLS] = {
    [P_GROUP] = TPROF_COL("group", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the process group",
                          .flags = TPROF_COLF_KEY),
    [P_FROM] = TPROF_COL("from_rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "from", "the sending rank",
                         .flags = TPROF_COLF_KEY),
    [P_TO] = TPROF_COL("to_rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, "to",
                       "the receiving rank: the group's rank at to_index in \"Process Group Ranks\"; null when "
                       "that list was not recorded (or was cut before it)"),
    [P_TO_INDEX] = TPROF_COL("to_index", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL,
                             "the receiver's place in the group (the split list's index)", .flags = TPROF_COLF_KEY),
    [P_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL,
                          "sent from one to the other over the matched all-to-alls: its split's rows times the "
                          "bytes of a row (the sender's in_bytes over the sum of its splits)",
                          .flags = TPROF_COLF_METRIC),
    [P_INSTANCES] = TPROF_COL("instances", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                              "matched all-to-alls in which the sender recorded its splits"),
    [P_SHARE] = TPROF_COL("share", TPROF_COL_RATIO, TPROF_COMBINE_FIRST, NULL,
                          "of the bytes of every pair in the table"),
};
const tprof_table_desc tprof_a2a_pairs_desc = {
    .name = "alltoall_pairs", .title = "all-to-all traffic between ranks",
    .doc = "per group, sender and receiver: the bytes of the matched all-to-alls whose split sizes were recorded, "
           "most first",
    .cols = pair_cols, .ncols = P_NCOLS, .json_omit_empty = 1, .limited = 1,
};

typedef struct {
    uint32_t group;
    int64_t from, to_index, to_rank;
    int64_t bytes;
    uint64_t instances;
} pair;

struct tprof_a2a {
    char **groups;
    size_t ngroups, groupcap;
    pair *pairs;
    size_t npairs, paircap;
    tprof_i64map at; /* key -> index in pairs */
};

tprof_a2a *tprof_a2a_new(void)
{
    tprof_a2a *a = calloc(1, sizeof *a);
    if (a && tprof_i64map_init(&a->at, 64)) {
        free(a);
        return NULL;
    }
    return a;
}

void tprof_a2a_free(tprof_a2a *a)
{
    if (!a) return;
    for (size_t g = 0; g < a->ngroups; g++) free(a->groups[g]);
    free(a->groups);
    free(a->pairs);
    tprof_i64map_free(&a->at);
    free(a);
}

/* A list as PyTorch writes one: "[4, 0, 7]", "[]", or cut after 30
 * entries as "[1, 2, ..., 30, ...]" (*CUT). The numbers into *OUT (owned by
 * the caller); -1 when the text is not such a list, -2 out of memory. */
static long parse_list(const char *s, int64_t **out, int *cut)
{
    *out = NULL;
    *cut = 0;
    while (*s == ' ') s++;
    if (*s++ != '[') return -1;
    size_t n = 0, cap = 0;
    for (;;) {
        while (*s == ' ') s++;
        if (*s == ']') return (long)n;
        if (!strncmp(s, "...", 3)) {
            *cut = 1;
            s += 3;
        } else {
            char *end;
            errno = 0;
            long long v = strtoll(s, &end, 10);
            if (end == s || errno || v < 0) goto bad;
            if (tprof_grow_items((void **)out, &cap, n + 1, sizeof **out)) {
                free(*out);
                *out = NULL;
                return -2;
            }
            (*out)[n++] = v;
            s = end;
        }
        while (*s == ' ') s++;
        if (*s == ',') s++;
        else if (*s != ']') goto bad;
    }
bad:
    free(*out);
    *out = NULL;
    return -1;
}

static long group_index(tprof_a2a *a, const char *group)
{
    for (size_t g = 0; g < a->ngroups; g++)
        if (!strcmp(a->groups[g], group)) return (long)g;
    if (tprof_grow((void **)&a->groups, &a->groupcap, a->ngroups + 1, sizeof *a->groups)) return -1;
    if (!(a->groups[a->ngroups] = strdup(group))) return -1;
    return (long)a->ngroups++;
}

/* Keys pack (group, from, to_index) into 64 bits: 19 + 22 + 22. */
#define KEY_RANK_MAX ((int64_t)1 << 22)
#define KEY_GROUP_MAX ((long)1 << 19)

static int add_pair(tprof_a2a *a, long g, int64_t from, int64_t to_index, int64_t to_rank, int64_t bytes,
                    uint64_t instances)
{
    int64_t key = (int64_t)g << 44 | from << 22 | to_index, at;
    if (!tprof_i64map_get(&a->at, key, &at)) {
        if (tprof_grow_items((void **)&a->pairs, &a->paircap, a->npairs + 1, sizeof *a->pairs) ||
            tprof_i64map_put(&a->at, key, (int64_t)a->npairs))
            return TPROF_ENOMEM;
        a->pairs[a->npairs] = (pair){ .group = (uint32_t)g, .from = from, .to_index = to_index, .to_rank = to_rank };
        at = (int64_t)a->npairs++;
    }
    pair *p = &a->pairs[at];
    if (__builtin_add_overflow(p->bytes, bytes, &p->bytes)) p->bytes = INT64_MAX;
    p->instances += instances;
    if (p->to_rank < 0) p->to_rank = to_rank; /* a later instance may have recorded the group's ranks */
    return 0;
}

int tprof_a2a_add(tprof_a2a *a, const char *group, int64_t from, int64_t in_bytes, int64_t group_size,
                  const char *in_splits, const char *group_ranks, tprof_a2a_outcome *outcome)
{
    *outcome = TPROF_A2A_NO_SPLITS;
    if (!*in_splits || in_bytes < 0 || from < 0 || from >= KEY_RANK_MAX) return 0;
    int64_t *rows = NULL, *members = NULL;
    int cut = 0, members_cut = 0, rc = 0;
    long n = parse_list(in_splits, &rows, &cut), nm = *group_ranks ? parse_list(group_ranks, &members, &members_cut) : 0;
    if (n == -2 || nm == -2) {
        rc = TPROF_ENOMEM;
        goto out;
    }
    if (n < 0) goto uneven; /* recorded, but not a list */
    if (nm < 0) nm = 0; /* not a list: no global ranks (a cut one still maps its first places) */
    if (cut) {
        *outcome = TPROF_A2A_CUT;
        goto out;
    }
    int64_t parts = n, total = 0;
    if (!n) parts = group_size > 0 ? group_size : members_cut ? -1 : nm; /* "[]": equal parts */
    if (n && group_size > 0 && n != group_size) goto uneven; /* a row count per rank of the group */
    for (long d = 0; d < n; d++)
        if (__builtin_add_overflow(total, rows[d], &total)) goto uneven;
    if (!n) total = parts;
    if (n && total == 0 && in_bytes == 0) { /* nothing to send (an expert parallel rank that routed no token) */
        *outcome = TPROF_A2A_ADDED;
        goto out;
    }
    if (parts <= 0 || parts >= KEY_RANK_MAX || total <= 0 || in_bytes % total) goto uneven;
    long g = group_index(a, group);
    if (g < 0) {
        rc = TPROF_ENOMEM;
        goto out;
    }
    if (g >= KEY_GROUP_MAX) goto uneven; /* past half a million groups: counted, not kept */
    int64_t row_bytes = in_bytes / total;
    for (int64_t d = 0; d < parts && !rc; d++) {
        int64_t r = n ? rows[d] : 1, bytes;
        if (__builtin_mul_overflow(r, row_bytes, &bytes)) bytes = INT64_MAX;
        rc = add_pair(a, g, from, d, d < nm ? members[d] : -1, bytes, 1);
    }
    if (!rc) *outcome = TPROF_A2A_ADDED;
    goto out;
uneven:
    *outcome = TPROF_A2A_UNEVEN;
out:
    free(rows);
    free(members);
    return rc;
}

/* Most bytes first; then by group name, sender, place (a total order, so
 * the rows do not depend on the order the pairs were added in). */
static int cmp_pair(const void *x, const void *y, void *vgroups)
{
    const pair *a = x, *b = y;
    char *const *groups = vgroups;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    int c = a->group == b->group ? 0 : strcmp(groups[a->group], groups[b->group]);
    if (c) return c;
    if (a->from != b->from) return a->from < b->from ? -1 : 1;
    return a->to_index < b->to_index ? -1 : a->to_index > b->to_index;
}

int tprof_a2a_add_rows(tprof_a2a *a, const tprof_rows *rows)
{
    for (size_t i = 0; i < tprof_rows_count(rows); i++) {
        const tprof_cell *to = tprof_rows_cell(rows, i, P_TO);
        int64_t from = tprof_rows_cell(rows, i, P_FROM)->v.i, place = tprof_rows_cell(rows, i, P_TO_INDEX)->v.i;
        if (from < 0 || from >= KEY_RANK_MAX || place < 0 || place >= KEY_RANK_MAX) return TPROF_EFORMAT;
        const tprof_cell *group = tprof_rows_cell(rows, i, P_GROUP);
        long g = group_index(a, group->null ? "" : group->v.s);
        if (g < 0) return TPROF_ENOMEM;
        if (g >= KEY_GROUP_MAX) return TPROF_EFORMAT;
        int rc = add_pair(a, g, from, place, to->null ? -1 : to->v.i, tprof_rows_cell(rows, i, P_BYTES)->v.i,
                          (uint64_t)tprof_rows_cell(rows, i, P_INSTANCES)->v.i);
        if (rc) return rc;
    }
    return 0;
}

int tprof_a2a_rows(const tprof_a2a *a, tprof_rows *out, double *max_over_mean)
{
    *max_over_mean = 0;
    if (!a->npairs) return 0;
    pair *sorted = malloc(a->npairs * sizeof *sorted);
    if (!sorted) return TPROF_ENOMEM;
    memcpy(sorted, a->pairs, a->npairs * sizeof *sorted);
    qsort_r(sorted, a->npairs, sizeof *sorted, cmp_pair, a->groups);
    double total = 0;
    for (size_t i = 0; i < a->npairs; i++) total += (double)sorted[i].bytes;
    int rc = 0;
    for (size_t i = 0; i < a->npairs && !rc; i++) {
        const pair *p = &sorted[i];
        long r = tprof_rows_add(out);
        if (r < 0 || tprof_rows_set_s(out, (size_t)r, P_GROUP, a->groups[p->group])) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(out, (size_t)r, P_FROM, p->from);
        if (p->to_rank >= 0) tprof_rows_set_i(out, (size_t)r, P_TO, p->to_rank);
        tprof_rows_set_i(out, (size_t)r, P_TO_INDEX, p->to_index);
        tprof_rows_set_i(out, (size_t)r, P_BYTES, p->bytes);
        tprof_rows_set_i(out, (size_t)r, P_INSTANCES, (int64_t)p->instances);
        tprof_rows_set_d(out, (size_t)r, P_SHARE, total > 0 ? (double)p->bytes / total : 0);
    }
    if (!rc && total > 0) *max_over_mean = (double)sorted[0].bytes / (total / (double)a->npairs);
    free(sorted);
    return rc;
}
