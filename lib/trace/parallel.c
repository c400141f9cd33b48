/* Parallel reading of one large trace: the input is cut into chunks at
 * lines that start with '{' (raw newlines only occur between tokens, so such
 * a line starts a new value), worker threads parse the chunks, and the
 * results are appended in order.
 *
 * The cut is speculative: a chunk is accepted only when the chunk before it
 * ended right after a '[' or ',' in the traceEvents array, which is exactly
 * the state the next chunk assumed (see reader_internal.h). Any other outcome (a chunk that fails, a cut
 * inside metadata, an unusual layout, a read error) discards the parallel
 * result and the file is read again sequentially, which also words any error
 * exactly as the sequential reader does.
 *
 * Whichever thread finishes the chunk next in order appends it (and the
 * finished ones after it), so the reading thread only reads, and parses a
 * chunk itself when it is ahead: on compressed input it is the one that
 * decompresses, which alone takes most of a core. */
#include "reader_internal.h"
#include "../io/pipe.h"
#include "../json/scan.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHUNK_DEFAULT (2u << 20) /* target chunk size: small enough to keep memory flat */
#define PROGRESS_EVERY (16u << 20)

typedef enum { JOB_FREE = 0, JOB_QUEUED, JOB_RUNNING, JOB_DONE } job_state;

typedef struct {
    uint8_t *data;
    size_t len, cap;
    uint64_t base; /* stream offset of data[0] */
    tprof_chunk_start start;
    int outer_object; /* the events are in a trace object (else a bare array) */
    int last, cut;
    tprof_trace *t;
    int rc;
    char jmsg[400];
    job_state state;
} job;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    job *jobs;
    size_t njobs;
    int quit;
    const tprof_read_opts *opts;
    const char *name;
    int64_t json_bytes; /* about how much JSON the input holds, -1: unknown */
    /* the appending, by one thread at a time (MERGING); MERGED counts the
     * chunks appended, which frees their slots */
    int merging, outcome;
    size_t merged;
    tprof_trace *acc; /* the chunks appended so far */
    int last_rc;      /* of the last chunk, once appended */
    char last_jmsg[400];
} pool;

enum { PAR_OK = 0, PAR_FALLBACK = TPROF_PAR_FALLBACK };

/* Before chunk M (its trace IN) is appended to P->acc: room for as many
 * records per byte in the whole input as read so far, so that the big
 * arrays are mapped once at about their size rather than doubled through
 * the heap (whose freed blocks stay resident, and whose copy stalls the
 * appending while the workers wait). Each array gets room for the records
 * of both kinds: profilers write a step's CPU ops first and its kernels
 * after, so the first chunks may hold spans alone, or nothing a command
 * keeps; the room is only address space until it is written. Checked at
 * every chunk, it grows the arrays a few times at most, and with the floor
 * (one record in 512 bytes, fewer than any trace has) a large input's
 * arrays start above malloc's mmap threshold (32 MiB, src/cli/dispatch.c),
 * where they grow by mremap, without a copy. */
static void reserve_ahead(pool *p, const job *m, const tprof_trace *in)
{
    double read = (double)(m->base + m->len);
    if (p->json_bytes <= 0 || read <= 0) return;
    size_t have = tprof_trace_nevents(in) + tprof_trace_nspans(in);
    if (p->acc) have += tprof_trace_nevents(p->acc) + tprof_trace_nspans(p->acc);
    double n = (double)have * ((double)p->json_bytes / read) * 1.125;
    if (n < (double)p->json_bytes / 512) n = (double)p->json_bytes / 512; /* a floor: see below */
    double most = (double)p->json_bytes / 16; /* no record is written in fewer bytes */
    size_t room = (size_t)(n < most ? n : most);
    (void)tprof_trace_reserve(p->acc ? p->acc : (tprof_trace *)in, room, p->opts->keep & TPROF_COMPACT_SPANS ? room : 0);
}

/* Appends chunk M to P->acc (the caller holds the merging turn, not the
 * lock): PAR_FALLBACK when the chunk did not end where the next one
 * assumed. */
static int append_chunk(pool *p, job *m)
{
    int want = m->last ? (m->rc == 0 || m->rc == TPROF_ETRUNC) : m->rc == TPROF_CHUNK_END;
    int outcome = PAR_OK;
    if (want) reserve_ahead(p, m, m->t);
    if (!want) outcome = PAR_FALLBACK;
    else if (!p->acc) {
        p->acc = m->t;
        m->t = NULL;
    } else if (tprof_trace_absorb(p->acc, m->t))
        outcome = PAR_FALLBACK;
    if (m->last) {
        p->last_rc = m->rc;
        snprintf(p->last_jmsg, sizeof p->last_jmsg, "%s", m->jmsg);
    }
    tprof_trace_free(m->t);
    m->t = NULL;
    return outcome;
}

/* With P->mu held: marks JB done, then appends the finished chunks that are
 * next in order, unless another thread is appending (it will see them). */
static void finish_job(pool *p, job *jb)
{
    jb->state = JOB_DONE;
    pthread_cond_broadcast(&p->done);
    if (p->merging) return;
    p->merging = 1;
    for (;;) {
        job *m = &p->jobs[p->merged % p->njobs];
        if (p->outcome != PAR_OK || m->state != JOB_DONE) break;
        pthread_mutex_unlock(&p->mu);
        int outcome = append_chunk(p, m);
        pthread_mutex_lock(&p->mu);
        if (outcome != PAR_OK) p->outcome = outcome;
        m->state = JOB_FREE;
        p->merged++;
        pthread_cond_broadcast(&p->done);
    }
    p->merging = 0;
}

/* With P->mu held: the first queued job, marked running, or NULL. */
static job *take_job(pool *p)
{
    for (size_t i = 0; i < p->njobs; i++)
        if (p->jobs[i].state == JOB_QUEUED) {
            p->jobs[i].state = JOB_RUNNING;
            return &p->jobs[i];
        }
    return NULL;
}

/* CACHES: the calling thread's (a chunk is parsed by one thread). */
static void run_job(pool *p, job *jb, reader_caches *caches)
{
    jb->t = tprof_trace_new(p->name);
    if (!jb->t) {
        jb->rc = TPROF_ENOMEM;
        return;
    }
    tprof_json *j;
    int depth = jb->start == TPROF_CHUNK_DOCUMENT ? 0 : jb->start == TPROF_CHUNK_EVENTS_IN_OBJECT ? 2 : 1;
    jb->rc = tprof_json_open_chunk(&j, jb->data, jb->len, p->name, jb->base, depth, jb->outer_object, !jb->last,
                                   jb->cut);
    if (jb->rc) return;
    jb->rc = tprof_parse_chunk(jb->t, j, p->opts, jb->start, caches);
    snprintf(jb->jmsg, sizeof jb->jmsg, "%s", tprof_json_errmsg(j));
    tprof_json_close(j);
}

static void *worker(void *arg)
{
    pool *p = arg;
    reader_caches caches;
    tprof_reader_caches_init_sized(&caches, p->json_bytes);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        job *jb = take_job(p);
        if (!jb) {
            if (p->quit) break;
            pthread_cond_wait(&p->work, &p->mu);
            continue;
        }
        pthread_mutex_unlock(&p->mu);
        run_job(p, jb, &caches);
        pthread_mutex_lock(&p->mu);
        finish_job(p, jb);
    }
    pthread_mutex_unlock(&p->mu);
    tprof_reader_caches_free(&caches);
    return NULL;
}

/* Offset of the last '{' in d[min, len) that starts a line after a line
 * ending in ',' or '[' (an array element, not a member's value), or 0. */
static size_t find_cut(const uint8_t *d, size_t len, size_t min)
{
    size_t hi = len;
    while (hi > min) {
        const uint8_t *nl = memrchr(d + min, '\n', hi - min);
        if (!nl) return 0;
        size_t k = (size_t)(nl - d) + 1;
        while (k < len && (d[k] == ' ' || d[k] == '\t' || d[k] == '\r')) k++;
        size_t b = (size_t)(nl - d);
        while (b > 0 && js_is_ws(d[b - 1])) b--;
        if (k < len && d[k] == '{' && b > 0 && (d[b - 1] == ',' || d[b - 1] == '[')) return k;
        hi = (size_t)(nl - d);
    }
    return 0;
}

size_t tprof_chunk_bytes(const tprof_read_opts *opts)
{
    return opts && opts->chunk_bytes >= 64 ? opts->chunk_bytes : CHUNK_DEFAULT;
}

/* Grows a chunk buffer in steps of half a chunk, not by doubling: memory in
 * flight is (threads + 2) buffers of about 1.5 chunks. */
static int ensure_cap(job *jb, size_t need, size_t chunk)
{
    if (need <= jb->cap) return 0;
    size_t n = need + chunk / 2;
    uint8_t *d = realloc(jb->data, n);
    if (!d) return TPROF_ENOMEM;
    jb->data = d;
    jb->cap = n;
    return 0;
}

int tprof_read_parallel(tprof_trace **out, tprof_source *src, const char *name, const tprof_read_opts *opts,
                        int threads, char *errbuf, size_t errlen)
{
    *out = NULL;
    /* each thread's caches sized to the input (a small one cut in small
     * chunks, as the tests do, needs small caches) */
    int64_t json_bytes = tprof_source_json_guess(src);
    pool p = { .opts = opts, .name = name, .njobs = (size_t)threads + 2, .json_bytes = json_bytes };
    const size_t CHUNK = tprof_chunk_bytes(opts);
    const size_t CHUNK_MAX = 8 * CHUNK; /* no cut found within this: give up on parallel */
    p.jobs = calloc(p.njobs, sizeof *p.jobs);
    uint8_t *carry = malloc(CHUNK_MAX);
    size_t carry_len = 0;
    if (!p.jobs || !carry) {
        free(p.jobs);
        free(carry);
        return PAR_FALLBACK;
    }
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.work, NULL);
    pthread_cond_init(&p.done, NULL);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    int started = 0;
    if (tid)
        for (; started < threads; started++)
            if (pthread_create(&tid[started], NULL, worker, &p)) break;

    reader_caches main_caches; /* for the chunks this thread parses */
    tprof_reader_caches_init_sized(&main_caches, json_bytes);
    p.outcome = started ? PAR_OK : PAR_FALLBACK;
    int outcome = PAR_OK, at_end = 0, cut = 0;
    tprof_chunk_start events_start = TPROF_CHUNK_EVENTS_IN_OBJECT;
    uint64_t offset = 0, next_progress = PROGRESS_EVERY;
    size_t seq = 0;
    char src_msg[400] = "";
    pthread_mutex_lock(&p.mu);
    for (;;) {
        if (p.outcome != PAR_OK || (at_end && p.merged == seq)) {
            pthread_mutex_unlock(&p.mu);
            break;
        }
        if (at_end || seq - p.merged == p.njobs) {
            /* the slot's chunk, or at the end every chunk, is still to be
             * appended: rather than wait, parse a queued chunk here, as
             * its core would idle otherwise */
            job *q = take_job(&p);
            if (!q) {
                pthread_cond_wait(&p.done, &p.mu);
                continue;
            }
            pthread_mutex_unlock(&p.mu);
            run_job(&p, q, &main_caches);
            pthread_mutex_lock(&p.mu);
            finish_job(&p, q);
            continue;
        }
        pthread_mutex_unlock(&p.mu);
        job *slot = &p.jobs[seq % p.njobs];
        /* fill the next chunk: the bytes carried over, then at least CHUNK more */
        if (ensure_cap(slot, carry_len + CHUNK, CHUNK)) {
            outcome = PAR_FALLBACK;
            break;
        }
        memcpy(slot->data, carry, carry_len);
        slot->len = carry_len;
        slot->base = offset;
        /* the first chunk small, so that the other threads start early */
        size_t min = seq == 0 ? 0 : 1, found = 0, target = carry_len + (seq == 0 ? CHUNK / 8 : CHUNK);
        for (;;) {
            while (slot->len < target && !at_end) {
                if (ensure_cap(slot, slot->len + 4096, CHUNK)) {
                    outcome = PAR_FALLBACK;
                    break;
                }
                size_t room = slot->cap - slot->len;
                if (seq == 0 && room > target - slot->len + 4096) room = target - slot->len + 4096;
                ssize_t n = tprof_source_read(src, slot->data + slot->len, room);
                if (n == 0) at_end = 1;
                else if (n == TPROF_ETRUNC) {
                    at_end = cut = 1;
                    snprintf(src_msg, sizeof src_msg, "%s", tprof_source_errmsg(src));
                } else if (n < 0) {
                    outcome = PAR_FALLBACK; /* read errors are reported by the sequential read */
                    break;
                } else
                    slot->len += (size_t)n;
            }
            if (outcome != PAR_OK || at_end) break;
            if (seq == 0 && min == 0) {
                /* the first cut comes after the start of the event array */
                const uint8_t *q = slot->data;
                while (q < slot->data + slot->len && js_is_ws(*q)) q++;
                if (q < slot->data + slot->len && *q == '[') {
                    events_start = TPROF_CHUNK_EVENTS_IN_ARRAY;
                    min = 1;
                } else {
                    const uint8_t *te = memmem(slot->data, slot->len, "\"traceEvents\"", 13);
                    if (te) min = (size_t)(te - slot->data) + 13;
                }
            }
            if (min && (found = find_cut(slot->data, slot->len, min))) break;
            if (slot->len + CHUNK > CHUNK_MAX) {
                outcome = PAR_FALLBACK; /* no line starting with '{': not a layout to cut */
                break;
            }
            target = slot->len + CHUNK; /* no cut yet: keep reading into this chunk */
        }
        if (outcome != PAR_OK) break;
        if (at_end) {
            found = slot->len;
            carry_len = 0;
        } else {
            carry_len = slot->len - found;
            if (carry_len > CHUNK_MAX) {
                outcome = PAR_FALLBACK;
                break;
            }
            memcpy(carry, slot->data + found, carry_len);
        }
        slot->len = found;
        offset += found;
        slot->start = seq == 0 ? TPROF_CHUNK_DOCUMENT : events_start;
        slot->outer_object = events_start == TPROF_CHUNK_EVENTS_IN_OBJECT;
        slot->last = at_end;
        slot->cut = at_end && cut;
        slot->rc = 0;
        slot->jmsg[0] = 0;
        if (opts->progress && tprof_source_bytes_in(src) >= next_progress) {
            opts->progress(opts->progress_ctx, name, tprof_source_bytes_in(src), tprof_source_file_size(src));
            next_progress = tprof_source_bytes_in(src) + PROGRESS_EVERY;
        }
        pthread_mutex_lock(&p.mu); /* held at the top of the loop */
        slot->state = JOB_QUEUED;
        pthread_cond_signal(&p.work);
        seq++;
    }
    /* stop the workers once nothing is queued, running or being appended */
    pthread_mutex_lock(&p.mu);
    for (size_t i = 0; i < p.njobs; i++)
        while (p.jobs[i].state == JOB_QUEUED || p.jobs[i].state == JOB_RUNNING || p.merging)
            pthread_cond_wait(&p.done, &p.mu);
    if (outcome == PAR_OK) outcome = p.outcome;
    tprof_trace *acc = p.acc;
    int rc = p.last_rc;
    p.quit = 1;
    pthread_cond_broadcast(&p.work);
    pthread_mutex_unlock(&p.mu);
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    for (size_t i = 0; i < p.njobs; i++) {
        tprof_trace_free(p.jobs[i].t);
        free(p.jobs[i].data);
    }
    free(tid);
    free(p.jobs);
    free(carry);
    tprof_reader_caches_free(&main_caches);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.work);
    pthread_cond_destroy(&p.done);
    if (outcome != PAR_OK || !acc) {
        tprof_trace_free(acc);
        return PAR_FALLBACK;
    }
    acc->meta.compression = tprof_source_compression(src);
    acc->meta.bytes_in = tprof_source_bytes_in(src);
    acc->meta.file_size = tprof_source_file_size(src);
    acc->meta.bytes_json = tprof_source_bytes_out(src);
    acc->meta.chunks = (uint32_t)(seq > UINT32_MAX ? UINT32_MAX : seq);
    tprof_trace_set_note(acc, tprof_source_note(src));
    int r = tprof_trace_conclude(out, acc, rc, src_msg, p.last_jmsg, errbuf, errlen);
    return r == TPROF_ETRUNC ? TPROF_ETRUNC : r ? r : 0;
}
