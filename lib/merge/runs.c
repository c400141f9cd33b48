/* External merge sort of the rewritten events: records collect in memory
 * up to a budget, are sorted and spilled as a run to an unlinked temporary
 * file, and all runs (plus the last, in memory) are merged with a heap. */
#include "merge_internal.h"
#include "trainprof/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A run file belongs to one thread at a time: stdio's per-call locking is
 * not needed (two calls per event add up over millions of events). */
#if defined(__GLIBC__)
#define run_fread fread_unlocked
#define run_fwrite fwrite_unlocked
#else
#define run_fread fread
#define run_fwrite fwrite
#endif

typedef struct {
    int64_t key;
    uint32_t pos, len;
    uint64_t seq;
    size_t off; /* in the arena */
} rec;

/* a spilled record's header on disk */
typedef struct {
    int64_t key;
    uint32_t pos, len;
    uint64_t seq;
} disk_rec;

/* A process's stream (tprof_merge_spread) is records as a spilled run
 * writes them, ended by a header with this pos. */
#define STREAM_END_POS UINT32_MAX

struct merge_runs {
    size_t budget;
    const char *tmp_dir;
    char *arena;
    size_t alen, acap;
    rec *recs;
    size_t nrec, rcap;
    FILE **files;
    size_t nfiles;
    char err[512];
};

int merge_runs_new(merge_runs **out, size_t budget, const char *tmp_dir)
{
    merge_runs *r = calloc(1, sizeof *r);
    if (!r) return TPROF_ENOMEM;
    r->budget = budget ? budget : (size_t)256 << 20;
    r->tmp_dir = tmp_dir ? tmp_dir : ".";
    *out = r;
    return 0;
}

void merge_runs_free(merge_runs *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nfiles; i++) fclose(r->files[i]);
    free(r->files);
    free(r->arena);
    free(r->recs);
    free(r);
}

uint64_t merge_runs_spilled(const merge_runs *r) { return r->nfiles; }
const char *merge_runs_errmsg(const merge_runs *r) { return r->err; }

static int before(int64_t ka, uint32_t pa, uint64_t sa, int64_t kb, uint32_t pb, uint64_t sb)
{
    if (ka != kb) return ka < kb;
    if (pa != pb) return pa < pb;
    return sa < sb;
}

static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (before(x->key, x->pos, x->seq, y->key, y->pos, y->seq)) return -1;
    return before(y->key, y->pos, y->seq, x->key, x->pos, x->seq);
}

/* Sorts the records by key, keeping their order among equal keys: they were
 * added in (pos, seq) order (one thread takes its inputs in rank order), so
 * that is the (key, pos, seq) order cmp_rec defines. LSD radix sort on the
 * key's bytes, skipping the bytes every key shares (the high bytes of
 * nanosecond timestamps). Falls back to qsort when there is no memory. */
static void sort_recs(merge_runs *r)
{
    size_t n = r->nrec;
    if (n < 64) {
        qsort(r->recs, n, sizeof *r->recs, cmp_rec);
        return;
    }
    rec *tmp = malloc(n * sizeof *tmp);
    size_t (*count)[256] = calloc(8, sizeof *count);
    if (!tmp || !count) {
        free(tmp);
        free(count);
        qsort(r->recs, n, sizeof *r->recs, cmp_rec);
        return;
    }
    /* signed keys in unsigned order */
#define UKEY(e) ((uint64_t)(e)->key ^ 0x8000000000000000ull)
    for (size_t i = 0; i < n; i++) {
        uint64_t k = UKEY(&r->recs[i]);
        for (int b = 0; b < 8; b++) count[b][(k >> (8 * b)) & 0xFF]++;
    }
    rec *from = r->recs, *to = tmp;
    for (int b = 0; b < 8; b++) {
        size_t *c = count[b], sum = 0;
        if (c[(UKEY(&from[0]) >> (8 * b)) & 0xFF] == n) continue; /* one value: nothing to move */
        for (int d = 0; d < 256; d++) {
            size_t x = c[d];
            c[d] = sum;
            sum += x;
        }
        for (size_t i = 0; i < n; i++) to[c[(UKEY(&from[i]) >> (8 * b)) & 0xFF]++] = from[i];
        rec *t = from;
        from = to;
        to = t;
    }
#undef UKEY
    if (from != r->recs) memcpy(r->recs, from, n * sizeof *r->recs);
    free(tmp);
    free(count);
}

static int spill(merge_runs *r)
{
    sort_recs(r);
    char path[4096];
    snprintf(path, sizeof path, "%s/.trainprof-merge-run.XXXXXX", r->tmp_dir);
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(r->err, sizeof r->err, "%s: cannot create a temporary file for a sorted run: %s", r->tmp_dir,
                 strerror(errno));
        return TPROF_EIO;
    }
    unlink(path); /* gone with the process, whatever happens */
    FILE *f = fdopen(fd, "w+b");
    FILE **nf = f ? realloc(r->files, (r->nfiles + 1) * sizeof *nf) : NULL;
    if (!nf) {
        if (f) fclose(f);
        else close(fd);
        return TPROF_ENOMEM;
    }
    r->files = nf;
    r->files[r->nfiles++] = f;
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    for (size_t i = 0; i < r->nrec; i++) {
        const rec *e = &r->recs[i];
        disk_rec h = { e->key, e->pos, e->len, e->seq };
        if (run_fwrite(&h, sizeof h, 1, f) != 1 || run_fwrite(r->arena + e->off, 1, e->len, f) != e->len) {
            snprintf(r->err, sizeof r->err, "%s: cannot write a sorted run: %s", r->tmp_dir, strerror(errno));
            return TPROF_EIO;
        }
    }
    if (fflush(f) != 0 || fseek(f, 0, SEEK_SET) != 0) {
        snprintf(r->err, sizeof r->err, "%s: cannot write a sorted run: %s", r->tmp_dir, strerror(errno));
        return TPROF_EIO;
    }
    r->alen = 0;
    r->nrec = 0;
    return 0;
}

int merge_stream_put(FILE *f, int64_t key, uint32_t pos, uint64_t seq, const char *data, size_t len)
{
    disk_rec h = { key, pos, (uint32_t)len, seq };
    return run_fwrite(&h, sizeof h, 1, f) == 1 && run_fwrite(data, 1, len, f) == len ? 0 : TPROF_EIO;
}

int merge_stream_end(FILE *f)
{
    disk_rec h = { 0, STREAM_END_POS, 0, 0 };
    return fwrite(&h, sizeof h, 1, f) == 1 ? 0 : TPROF_EIO;
}

int merge_runs_add(merge_runs *r, int64_t key, uint32_t pos, uint64_t seq, const char *data, size_t len)
{
    if (len > UINT32_MAX) return TPROF_ELIMIT;
    /* each record counts twice: the sort before a spill copies the records */
    if (r->nrec && r->alen + len + 2 * (r->nrec + 1) * sizeof(rec) > r->budget) {
        int rc = spill(r);
        if (rc) return rc;
    }
    if (r->alen + len > r->acap) {
        size_t c = r->acap ? r->acap : 1 << 20;
        while (c < r->alen + len) c *= 2;
        char *a = realloc(r->arena, c);
        if (!a) return TPROF_ENOMEM;
        r->arena = a;
        r->acap = c;
    }
    if (r->nrec == r->rcap) {
        size_t c = r->rcap ? r->rcap * 2 : 4096;
        rec *n = realloc(r->recs, c * sizeof *n);
        if (!n) return TPROF_ENOMEM;
        r->recs = n;
        r->rcap = c;
    }
    memcpy(r->arena + r->alen, data, len);
    r->recs[r->nrec++] = (rec){ key, pos, (uint32_t)len, seq, r->alen };
    r->alen += len;
    return 0;
}

/* A cursor over one run: a spilled file, another process's stream, or the
 * sorted records in memory. */
typedef struct {
    merge_runs *r; /* whose memory records (when f is NULL) */
    FILE *f;
    int stream;    /* F is another process's stream: it ends with STREAM_END_POS */
    size_t next;   /* memory run: index of the next record */
    disk_rec h;
    char *buf;
    size_t cap;
    const char *data;
} cursor;

/* Loads the cursor's next record; 1 when there is one, 0 at the end, <0 on error. */
static int advance(cursor *c)
{
    if (!c->f) {
        merge_runs *r = c->r;
        if (c->next >= r->nrec) return 0;
        const rec *e = &r->recs[c->next++];
        c->h = (disk_rec){ e->key, e->pos, e->len, e->seq };
        c->data = r->arena + e->off;
        return 1;
    }
    if (run_fread(&c->h, sizeof c->h, 1, c->f) != 1) return feof(c->f) && !c->stream ? 0 : TPROF_EIO;
    if (c->stream && c->h.pos == STREAM_END_POS) return 0;
    if (c->h.len > c->cap) {
        size_t n = c->cap ? c->cap : 4096;
        while (n < c->h.len) n *= 2;
        char *b = realloc(c->buf, n);
        if (!b) return TPROF_ENOMEM;
        c->buf = b;
        c->cap = n;
    }
    if (run_fread(c->buf, 1, c->h.len, c->f) != c->h.len) return TPROF_EIO;
    c->data = c->buf;
    return 1;
}

static int cur_before(const cursor *a, const cursor *b)
{
    return before(a->h.key, a->h.pos, a->h.seq, b->h.key, b->h.pos, b->h.seq);
}

static void sift_down(cursor **heap, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && cur_before(heap[l], heap[m])) m = l;
        if (l + 1 < n && cur_before(heap[l + 1], heap[m])) m = l + 1;
        if (m == i) return;
        cursor *t = heap[i];
        heap[i] = heap[m];
        heap[m] = t;
        i = m;
    }
}

int merge_runs_finish(merge_runs *const *rs, size_t nr, merge_emit_fn emit, void *ctx)
{
    return merge_runs_finish_with(rs, nr, NULL, 0, emit, NULL, ctx);
}

int merge_runs_finish_with(merge_runs *const *rs, size_t nr, FILE *const *streams, size_t ns, merge_emit_fn emit,
                           merge_emit_keyed_fn emit_keyed, void *ctx)
{
    size_t nc = ns, n = 0;
    for (size_t k = 0; k < nr; k++) {
        merge_runs *r = rs[k];
        if (r->nrec) sort_recs(r);
        nc += r->nfiles + 1;
    }
    cursor *cs = calloc(nc ? nc : 1, sizeof *cs);
    cursor **heap = calloc(nc ? nc : 1, sizeof *heap);
    int rc = cs && heap ? 0 : TPROF_ENOMEM;
    size_t at = 0;
    for (size_t k = 0; !rc && k < nr; k++)
        for (size_t i = 0; !rc && i <= rs[k]->nfiles; i++, at++) {
            cs[at].r = rs[k];
            cs[at].f = i < rs[k]->nfiles ? rs[k]->files[i] : NULL;
            int a = advance(&cs[at]);
            if (a < 0) rc = a;
            else if (a) heap[n++] = &cs[at];
        }
    for (size_t k = 0; !rc && k < ns; k++, at++) {
        cs[at] = (cursor){ .r = nr ? rs[0] : NULL, .f = streams[k], .stream = 1 };
        int a = advance(&cs[at]);
        if (a < 0) rc = a;
        else if (a) heap[n++] = &cs[at];
    }
    cursor *failed = NULL; /* a run that could not be read back (not the output: EMIT words its own errors) */
    for (size_t i = 0; i < nc && rc; i++)
        if (cs[i].f && (ferror(cs[i].f) || feof(cs[i].f))) failed = &cs[i];
    for (size_t i = n / 2; !rc && i-- > 0;) sift_down(heap, n, i);
    while (!rc && n) {
        cursor *c = heap[0];
        if ((rc = emit_keyed ? emit_keyed(ctx, c->h.key, c->h.pos, c->h.seq, c->data, c->h.len)
                             : emit(ctx, c->data, c->h.len)))
            break;
        int a = advance(c);
        if (a < 0) {
            rc = a;
            failed = c;
        } else if (!a) {
            heap[0] = heap[--n];
        }
        sift_down(heap, n, 0);
    }
    if (failed && rc == TPROF_EIO && nr && !rs[0]->err[0]) {
        if (failed->stream)
            snprintf(rs[0]->err, sizeof rs[0]->err, "another process's rewritten events ended early");
        else
            snprintf(rs[0]->err, sizeof rs[0]->err, "%s: cannot read back a sorted run: %s", rs[0]->tmp_dir,
                     failed->f && ferror(failed->f) ? strerror(errno) : "it ended early");
    }
    for (size_t i = 0; cs && i < nc; i++) free(cs[i].buf);
    free(cs);
    free(heap);
    return rc;
}
