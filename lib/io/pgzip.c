/* One gzip member compressed on several threads (ISA-L), for big outputs.
 *
 * The input comes in chunks of 1 MiB; each is compressed as raw deflate by a
 * worker and ended by a sync flush (so the pieces join at byte boundaries);
 * the last one ends the deflate stream. Each piece starts without history:
 * at ISA-L's level 1 and this chunk size that costs 0.003-0.01% in size
 * (merged traces; tests/unit/test_sink.c's data), so no dictionary is
 * carried over. The caller's thread computes the CRC over the chunks in
 * order and writes the finished pieces in order: the output is one ordinary
 * gzip member that any reader takes. */
#include "pgzip.h"

#ifdef TPROF_HAVE_ISAL
#include "avx.h"
#include "trainprof/error.h"

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PGZIP_MAX_THREADS 8

typedef enum { JOB_FREE, JOB_QUEUED, JOB_WORKING, JOB_DONE } job_state;

typedef struct {
    uint8_t *in, *out;
    size_t in_len, out_len, out_cap;
    int last, rc;
    job_state state;
} job;

struct pgzip {
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    job *jobs;
    size_t njobs, head, count; /* head: the oldest job not yet written */
    pthread_t *threads;
    int nthreads, quit;
    size_t chunk_cap;
    uint32_t crc;
    uint64_t isize;
    pgzip_write_fn write;
    void *ctx;
    int failed;
};

/* A piece depends on its input alone, never on which worker compressed it
 * or what that worker compressed before: the stream and the level buffer
 * start zeroed for every piece (about 360 KiB of memset per MiB of input,
 * under 2% of its compression time), so --threads cannot change a byte. */
static int compress_job(job *j, uint8_t *level_buf)
{
    struct isal_zstream zs;
    memset(&zs, 0, sizeof zs);
    memset(level_buf, 0, ISAL_DEF_LVL1_DEFAULT);
    isal_deflate_init(&zs);
    zs.level = 1;
    zs.level_buf = level_buf;
    zs.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    zs.gzip_flag = IGZIP_DEFLATE;
    zs.flush = j->last ? NO_FLUSH : SYNC_FLUSH;
    zs.end_of_stream = (uint16_t)j->last;
    zs.next_in = j->in;
    zs.avail_in = (uint32_t)j->in_len;
    j->out_len = 0;
    for (;;) {
        if (j->out_cap - j->out_len < 4096) {
            size_t c = j->out_cap * 2;
            uint8_t *o = realloc(j->out, c);
            if (!o) return TPROF_ENOMEM;
            j->out = o;
            j->out_cap = c;
        }
        zs.next_out = j->out + j->out_len;
        zs.avail_out = (uint32_t)(j->out_cap - j->out_len);
        int r = isal_deflate(&zs);
        tprof_clear_upper_avx();
        if (r != COMP_OK) return TPROF_EIO;
        j->out_len = j->out_cap - zs.avail_out;
        /* done: the stream ended, or all input taken and the flush fitted */
        if (j->last ? zs.internal_state.state == ZSTATE_END : zs.avail_in == 0 && zs.avail_out > 0) return 0;
    }
}

static void *worker(void *arg)
{
    pgzip *z = arg;
    uint8_t *level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
    pthread_mutex_lock(&z->lock);
    for (;;) {
        job *j = NULL;
        for (size_t k = 0; k < z->count && !j; k++) {
            job *c = &z->jobs[(z->head + k) % z->njobs];
            if (c->state == JOB_QUEUED) j = c;
        }
        if (!j) {
            if (z->quit) break;
            pthread_cond_wait(&z->work, &z->lock);
            continue;
        }
        j->state = JOB_WORKING;
        pthread_mutex_unlock(&z->lock);
        int rc = level_buf ? compress_job(j, level_buf) : TPROF_ENOMEM;
        pthread_mutex_lock(&z->lock);
        j->rc = rc;
        j->state = JOB_DONE;
        pthread_cond_broadcast(&z->done);
    }
    pthread_mutex_unlock(&z->lock);
    free(level_buf);
    return NULL;
}

/* Waits for the oldest job and writes its piece. Called without the lock. */
static int write_oldest(pgzip *z)
{
    pthread_mutex_lock(&z->lock);
    job *j = &z->jobs[z->head];
    while (j->state != JOB_DONE) pthread_cond_wait(&z->done, &z->lock);
    pthread_mutex_unlock(&z->lock);
    int rc = j->rc ? j->rc : z->write(z->ctx, j->out, j->out_len);
    pthread_mutex_lock(&z->lock);
    j->state = JOB_FREE;
    z->head = (z->head + 1) % z->njobs;
    z->count--;
    pthread_mutex_unlock(&z->lock);
    if (rc) z->failed = rc;
    return rc;
}

static void stop_threads(pgzip *z)
{
    pthread_mutex_lock(&z->lock);
    z->quit = 1;
    pthread_cond_broadcast(&z->work);
    pthread_mutex_unlock(&z->lock);
    for (int t = 0; t < z->nthreads; t++) pthread_join(z->threads[t], NULL);
    z->nthreads = 0;
}

void pgzip_free(pgzip *z)
{
    if (!z) return;
    stop_threads(z);
    for (size_t i = 0; z->jobs && i < z->njobs; i++) {
        free(z->jobs[i].in);
        free(z->jobs[i].out);
    }
    free(z->jobs);
    free(z->threads);
    pthread_mutex_destroy(&z->lock);
    pthread_cond_destroy(&z->work);
    pthread_cond_destroy(&z->done);
    free(z);
}

int pgzip_new(pgzip **out, int threads, size_t chunk_cap, pgzip_write_fn write, void *ctx)
{
    *out = NULL;
    pgzip *z = calloc(1, sizeof *z);
    if (!z) return TPROF_ENOMEM;
    pthread_mutex_init(&z->lock, NULL);
    pthread_cond_init(&z->work, NULL);
    pthread_cond_init(&z->done, NULL);
    z->write = write;
    z->ctx = ctx;
    z->chunk_cap = chunk_cap;
    z->crc = 0;
    /* at level 1 a few cores outrun any disk; more would only hold memory
     * (each job holds about 2.2 MiB) */
    if (threads > PGZIP_MAX_THREADS) threads = PGZIP_MAX_THREADS;
    z->njobs = (size_t)threads * 2 + 1; /* every worker busy, and as many waiting to be written */
    z->jobs = calloc(z->njobs, sizeof *z->jobs);
    z->threads = calloc((size_t)threads, sizeof *z->threads);
    if (!z->jobs || !z->threads) goto nomem;
    for (size_t i = 0; i < z->njobs; i++) {
        job *j = &z->jobs[i];
        j->out_cap = chunk_cap + chunk_cap / 8 + 65536;
        if (!(j->in = malloc(chunk_cap)) || !(j->out = malloc(j->out_cap))) goto nomem;
    }
    for (int t = 0; t < threads; t++) {
        if (pthread_create(&z->threads[t], NULL, worker, z) != 0) break;
        z->nthreads++;
    }
    if (z->nthreads == 0) goto nomem;
    /* the gzip header: deflate, no name, no time, unknown OS */
    static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff };
    int rc = write(ctx, header, sizeof header);
    if (rc) {
        pgzip_free(z);
        return rc;
    }
    *out = z;
    return 0;
nomem:
    pgzip_free(z);
    return TPROF_ENOMEM;
}

int pgzip_submit(pgzip *z, uint8_t **buf, size_t len, int last)
{
    if (z->failed) return z->failed;
    z->crc = crc32_gzip_refl(z->crc, *buf, len);
    tprof_clear_upper_avx();
    z->isize += len;
    while (z->count == z->njobs) {
        int rc = write_oldest(z);
        if (rc) return rc;
    }
    pthread_mutex_lock(&z->lock);
    job *j = &z->jobs[(z->head + z->count) % z->njobs];
    uint8_t *spare = j->in; /* the caller's next buffer */
    j->in = *buf;
    j->in_len = len;
    j->last = last;
    j->rc = 0;
    j->state = JOB_QUEUED;
    z->count++;
    pthread_cond_signal(&z->work);
    pthread_mutex_unlock(&z->lock);
    *buf = spare;
    /* pieces already done go out now, without waiting */
    for (;;) {
        pthread_mutex_lock(&z->lock);
        int ready = z->count && z->jobs[z->head].state == JOB_DONE;
        pthread_mutex_unlock(&z->lock);
        if (!ready) return 0;
        int rc = write_oldest(z);
        if (rc) return rc;
    }
}

int pgzip_finish(pgzip *z)
{
    while (z->count) {
        int rc = write_oldest(z);
        if (rc) return rc;
    }
    if (z->failed) return z->failed;
    uint8_t trailer[8];
    for (int i = 0; i < 4; i++) {
        trailer[i] = (uint8_t)(z->crc >> (8 * i));
        trailer[4 + i] = (uint8_t)(z->isize >> (8 * i));
    }
    return z->write(z->ctx, trailer, sizeof trailer);
}

#endif
