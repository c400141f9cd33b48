/* The collectives' matching spread by process group over an engine's
 * processes (trainprof-mpi): for a command whose reduce matches collectives
 * (cli_spec.coll_part), every process sends each group's instances of its
 * inputs to the process that owns the group, the owners match them (the
 * steps of tprof_coll_plan_new .. tprof_coll_join, each output moved as
 * the result's bytes), and only the owners' partials reach the root, which
 * joins them onto the first rank's instances: the instances themselves are
 * never gathered at the root. Without an engine the reduce matches them
 * itself, with the same steps as one owner. */
#include <inttypes.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/analysis.h"
#include "trainprof/error.h"

/* A message: "tprof-coll FAILED COUNT\n", then COUNT results' text. */
static int pack(int failed, tprof_result *const *rs, size_t n, char **buf, size_t *len)
{
    FILE *f = open_memstream(buf, len);
    if (!f) return TPROF_ENOMEM;
    __fsetlocking(f, FSETLOCKING_BYCALLER);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += rs[i] != NULL;
    fprintf(f, "tprof-coll %d %zu\n", failed, count);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        if (rs[i]) rc = tprof_result_write(rs[i], f);
    if (ferror(f) && !rc) rc = TPROF_ENOMEM;
    if (fclose(f) && !rc) rc = TPROF_ENOMEM;
    return rc;
}

/* The results of the messages in B[0..LEN) (one process's, or every
 * process's one after another) appended to *OUT; *FAILED set when one says
 * its process failed, or when they are not EXPECT messages. */
static int unpack(const char *b, size_t len, int expect, const tprof_result_desc *d, tprof_result ***out, size_t *n,
                  int *failed)
{
    FILE *f = len ? fmemopen((void *)b, len, "r") : NULL;
    int messages = 0, rc = 0, flag;
    size_t count;
    while (f && !rc && fscanf(f, "tprof-coll %d %zu", &flag, &count) == 2 && fgetc(f) == '\n') {
        messages++;
        if (flag) *failed = 1;
        if (count > len) {
            rc = TPROF_EFORMAT;
            break;
        }
        tprof_result **grown = realloc(*out, (*n + count + 1) * sizeof **out);
        if (!grown) rc = TPROF_ENOMEM;
        else *out = grown;
        char err[256];
        for (size_t i = 0; !rc && i < count; i++) {
            rc = tprof_result_read(&(*out)[*n], d, f, err, sizeof err);
            if (!rc) (*n)++;
        }
    }
    if (f) fclose(f);
    if (messages != expect) *failed = 1; /* a process that could not send */
    return rc;
}

static void free_all(tprof_result **rs, size_t n)
{
    for (size_t i = 0; rs && i < n; i++) tprof_result_free(rs[i]);
    free(rs);
}

/* One round: TO[p] (results for process p, NULL none; freed) to every
 * process, what every process sent this one into *GOT (*NGOT). */
static int round_trip(const cli_engine *e, int failed, tprof_result **to, const tprof_result_desc *d,
                      tprof_result ***got, size_t *ngot, int *any_failed)
{
    int procs = e->procs;
    char **out = calloc((size_t)procs, sizeof *out), **in = calloc((size_t)procs, sizeof *in);
    size_t *out_len = calloc((size_t)procs, sizeof *out_len), *in_len = calloc((size_t)procs, sizeof *in_len);
    int rc = out && in && out_len && in_len ? 0 : TPROF_ENOMEM;
    for (int p = 0; !rc && p < procs; p++) {
        tprof_result *none = NULL;
        rc = pack(failed, to ? &to[p] : &none, 1, &out[p], &out_len[p]);
    }
    for (int p = 0; to && p < procs; p++) tprof_result_free(to[p]), to[p] = NULL;
    /* every process takes part, even one that failed: the others wait for it */
    if (e->exchange(e->ctx, out, out_len, in, in_len)) rc = rc ? rc : TPROF_EIO;
    *got = NULL;
    *ngot = 0;
    for (int p = 0; !rc && p < procs; p++) rc = unpack(in[p], in_len[p], 1, d, got, ngot, any_failed);
    for (int p = 0; p < procs; p++) free(out ? out[p] : NULL), free(in ? in[p] : NULL);
    free(out), free(in), free(out_len), free(in_len);
    return rc;
}

/* What the root keeps of the matching until the outcomes are in. */
struct cli_coll_matching {
    tprof_coll_plan *plan;
    tprof_result **fits, **partials;
    size_t nfits, npartials;
    size_t first; /* the input that carries the outcome */
    int failed;
};

void cli_coll_spread_free(cli_coll_matching *s)
{
    if (!s) return;
    free_all(s->fits, s->nfits);
    free_all(s->partials, s->npartials);
    tprof_coll_plan_free(s->plan);
    free(s);
}

/* Input I's instances (part PART of its outcome BUF[i]) as this process
 * holds them, NULL when it has none to show; the parts into PARTS. */
static tprof_result *instances_of(const char *buf, size_t len, size_t np, size_t part, tprof_result **parts,
                                  cli_outcome *o)
{
    char err[256];
    if (!buf || cli_outcome_read(buf, len, o, parts, np, err, sizeof err)) return NULL;
    return parts[part];
}

int cli_coll_spread(const cli_engine *e, size_t np, size_t part, cli_store *outbox, size_t lo, size_t hi, size_t n,
                    cli_coll_matching **out)
{
    *out = NULL;
    cli_coll_matching kept = { 0 }, *s = &kept; /* made for the root at the end */
    int procs = e->procs, me = e->me, failed = 0;
    tprof_result **mine = calloc(n ? n : 1, sizeof *mine);
    cli_outcome *oc = calloc(n ? n : 1, sizeof *oc);
    tprof_result ***parts_of = calloc(n ? n : 1, sizeof *parts_of);
    tprof_result **to = calloc((size_t)procs, sizeof *to);
    if (!mine || !oc || !parts_of || !to) failed = 1;
    /* the test that a process failing here leaves none waiting: TPROF_MPI_TEST_COLL_FAIL=P fails process P */
    const char *fail = getenv("TPROF_MPI_TEST_COLL_FAIL");
    if (fail && atoi(fail) == me) failed = 1;
    /* 1. every input's rank and steps, and whether it is shown, to every process */
    char *head = NULL;
    size_t head_len = 0;
    FILE *f = failed ? NULL : open_memstream(&head, &head_len);
    if (!f) failed = 1;
    for (size_t i = lo; f && i < hi && i < n; i++) { /* inputs outside [LO, HI) are not shown to the matching */
        if (!cli_store_has(outbox, i)) continue;
        char *b = NULL;
        size_t l = 0;
        if (!(parts_of[i] = calloc(np, sizeof **parts_of)) || cli_store_get(outbox, i, &b, &l)) {
            failed = 1;
            break;
        }
        mine[i] = instances_of(b, l, np, part, parts_of[i], &oc[i]);
        free(b);
        int shown = (!oc[i].read_rc || oc[i].read_rc == TPROF_ETRUNC) && !oc[i].job_rc;
        for (size_t p = 0; p < np; p++) shown &= parts_of[i][p] != NULL;
        tprof_result *h = NULL;
        if (shown && tprof_coll_header(mine[i], 0, &h)) failed = 1;
        fprintf(f, "input %zu %d %" PRId64 "\n", i, shown && h, oc[i].rank);
        if (h && tprof_result_write(h, f)) failed = 1;
        tprof_result_free(h);
        for (size_t p = 0; p < np; p++) /* the instances alone are kept: every input's parts would not fit */
            if (p != part) tprof_result_free(parts_of[i][p]), parts_of[i][p] = NULL;
    }
    if (f && fclose(f)) failed = 1;
    char *all = NULL; /* every process's headers, one after another */
    size_t all_len = 0;
    if (e->share(e->ctx, head ? head : "", head ? head_len : 0, &all, &all_len)) failed = 1;
    free(head);
    /* every process reads every input's header, in rank order as cli_run orders its results */
    int64_t *rank = malloc((n ? n : 1) * sizeof *rank);
    uint8_t *shown = calloc(n ? n : 1, 1);
    tprof_result **heads = calloc(n ? n : 1, sizeof *heads);
    size_t *order = malloc((n ? n : 1) * sizeof *order), *at = malloc((n ? n : 1) * sizeof *at);
    if (!rank || !shown || !heads || !order || !at) failed = 1;
    for (size_t i = 0; rank && i < n; i++) rank[i] = -1;
    FILE *g = !failed && all_len ? fmemopen(all, all_len, "r") : NULL;
    size_t in;
    int sh;
    int64_t r;
    char err[256];
    while (g && fscanf(g, "input %zu %d %" SCNd64, &in, &sh, &r) == 3 && fgetc(g) == '\n') {
        if (in >= n) break;
        rank[in] = r;
        shown[in] = (uint8_t)sh;
        tprof_result_free(heads[in]); /* an input said twice: the last */
        heads[in] = NULL;
        if (sh && tprof_result_read(&heads[in], &tprof_coll_instances_desc, g, err, sizeof err)) failed = 1;
    }
    if (g) fclose(g);
    free(all);
    /* the range's inputs in rank order, those of unknown rank by their place in the range (as diff orders a side) */
    size_t ns = 0, nr = lo < n ? (hi < n ? hi : n) - lo : 0;
    if (!failed && tprof_rank_order(rank + lo, nr, order)) failed = 1;
    const tprof_result **shown_heads = calloc(n ? n : 1, sizeof *shown_heads);
    if (!shown_heads) failed = 1;
    for (size_t o = 0; !failed && o < nr; o++)
        if (shown[lo + order[o]]) at[lo + order[o]] = ns, shown_heads[ns++] = heads[lo + order[o]];
    /* 2. the plan, alike on every process */
    if (!failed && !(s->plan = tprof_coll_plan_new(shown_heads, ns, (unsigned)procs))) failed = 1;
    for (size_t i = 0; !failed && i < n; i++)
        if (shown[i] && tprof_coll_plan_place(s->plan, at[i]) == 0) s->first = i;
    /* 3. the instances to the owners of their groups */
    for (size_t i = 0; !failed && i < n; i++) /* one routed result per owner, of all this process's inputs */
        if (mine[i] && shown[i] && tprof_coll_route(s->plan, at[i], mine[i], to)) failed = 1;
    int any_failed = failed;
    tprof_result **routed = NULL, **pairs = NULL;
    size_t nrouted = 0, npairs = 0;
    if (round_trip(e, failed, to, &tprof_coll_routed_desc, &routed, &nrouted, &any_failed)) any_failed = 1;
    /* 4. the owner matches its groups; the clock pairs to the owners of their ranks */
    tprof_coll_owner *owner = !any_failed ? tprof_coll_owner_new(s->plan) : NULL;
    if (!any_failed && (!owner || tprof_coll_match(owner, (const tprof_result *const *)routed, nrouted, to)))
        any_failed = 1;
    if (round_trip(e, any_failed, to, &tprof_coll_pairs_desc, &pairs, &npairs, &any_failed)) any_failed = 1;
    /* 5. the clocks of its ranks, to every process */
    tprof_result *fit = NULL;
    if (!any_failed && tprof_coll_fit(s->plan, (unsigned)me, (const tprof_result *const *)pairs, npairs, &fit))
        any_failed = 1;
    { /* every process's clocks to every process */
        char *b = NULL, *all_fits = NULL;
        size_t bl = 0, all_fits_len = 0;
        if (pack(any_failed, &fit, 1, &b, &bl)) any_failed = 1;
        if (e->share(e->ctx, b ? b : "", b ? bl : 0, &all_fits, &all_fits_len) ||
            unpack(all_fits, all_fits_len, procs, &tprof_coll_fits_desc, &s->fits, &s->nfits, &any_failed))
            any_failed = 1;
        free(b), free(all_fits);
    }
    tprof_result_free(fit);
    /* 6. the partial to the root */
    if (!any_failed && tprof_coll_finish(owner, (const tprof_result *const *)s->fits, s->nfits, &to[0]))
        any_failed = 1;
    tprof_result **partials = NULL;
    size_t npart = 0;
    if (round_trip(e, any_failed, to, &tprof_coll_partial_desc, &partials, &npart, &any_failed)) any_failed = 1;
    if (e->root) s->partials = partials, s->npartials = npart;
    else free_all(partials, npart);
    tprof_coll_owner_free(owner);
    free_all(routed, nrouted);
    free_all(pairs, npairs);
    /* this process's inputs go to the root without their instances' rows */
    for (size_t i = 0; parts_of && i < n; i++) {
        if (mine && shown && mine[i] && shown[i] && !any_failed) {
            tprof_result *bare = NULL;
            char *b = NULL, *ob = NULL;
            size_t bl = 0, obl = 0;
            /* its parts read again (one input's at a time), the instances replaced by their header */
            tprof_result **full = calloc(np, sizeof *full);
            cli_outcome again = { 0 };
            char *was = NULL;
            size_t was_len = 0;
            if (!full || tprof_coll_header(mine[i], 1, &bare) || cli_store_get(outbox, i, &was, &was_len) ||
                !instances_of(was, was_len, np, part, full, &again))
                any_failed = 1;
            else {
                tprof_result_free(full[part]);
                full[part] = bare, bare = NULL;
                if (cli_parts_write(full, np, &b, &bl) || cli_outcome_write(&again, b, bl, &ob, &obl))
                    any_failed = 1;
                else {
                    cli_store_put(outbox, i, ob, obl);
                    ob = NULL;
                }
                free(b), free(ob);
            }
            if (full) cli_outcome_free(&again, full, np); /* read, even without its instances */
            free(was);
            tprof_result_free(bare);
            free(full);
        }
        if (parts_of[i]) cli_outcome_free(&oc[i], parts_of[i], np);
        free(parts_of[i]);
    }
    for (size_t i = 0; heads && i < n; i++) tprof_result_free(heads[i]);
    free(heads), free(shown_heads), free(rank), free(shown), free(order), free(at);
    free(mine), free(oc), free(parts_of), free(to);
    kept.failed = any_failed;
    if (e->root && (*out = malloc(sizeof **out))) **out = kept;
    else {
        free_all(kept.fits, kept.nfits);
        free_all(kept.partials, kept.npartials);
        tprof_coll_plan_free(kept.plan);
        if (e->root) any_failed = 1; /* out of memory: the root cannot join */
    }
    return any_failed ? EXIT_INPUT : 0;
}

int cli_coll_spread_join(const cli_coll_matching *s, tprof_result *carrier)
{
    if (!s || s->failed || !carrier) return TPROF_EIO;
    return tprof_coll_join(s->plan, (const tprof_result *const *)s->fits, s->nfits,
                           (const tprof_result *const *)s->partials, s->npartials, carrier);
}

size_t cli_coll_spread_first(const cli_coll_matching *s) { return s->first; }
