/* Several traces read in parallel: one file per worker at a time. */
#include "trainprof/trace.h"
#include "trainprof/error.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    const char *const *paths;
    size_t n;
    const tprof_read_opts *opts;
    tprof_read_result *results;
    tprof_read_done_fn done;
    void *ctx;
    atomic_size_t next;
} job;

static void *worker(void *arg)
{
    job *jb = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&jb->next, 1);
        if (i >= jb->n) return NULL;
        tprof_read_result *r = &jb->results[i];
        r->err[0] = 0;
        r->rc = tprof_trace_read(&r->trace, jb->paths[i], jb->opts, r->err, sizeof r->err);
        if (jb->done) jb->done(jb->ctx, i, r);
    }
}

int tprof_trace_read_many(const char *const *paths, size_t n, const tprof_read_opts *opts, int threads,
                          tprof_read_result *results)
{
    return tprof_trace_read_each(paths, n, opts, threads, results, NULL, NULL);
}

int tprof_trace_read_each(const char *const *paths, size_t n, const tprof_read_opts *opts, int threads,
                          tprof_read_result *results, tprof_read_done_fn done, void *ctx)
{
    /* the cores are shared: several files each get a part for their chunks */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    tprof_read_opts o = opts ? *opts : (tprof_read_opts){ .keep = TPROF_KEEP_ALL };
    if (o.threads <= 0 && n > 1) o.threads = cores > (long)n ? (int)(cores / (long)n) : 1;
    job jb = { .paths = paths, .n = n, .opts = &o, .results = results, .done = done, .ctx = ctx };
    atomic_init(&jb.next, 0);
    if (threads <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c > 0 ? (int)c : 1;
    }
    if ((size_t)threads > n) threads = (int)n;
    pthread_t *tid = threads > 1 ? calloc((size_t)threads, sizeof *tid) : NULL;
    int started = 0;
    if (tid)
        for (; started < threads; started++)
            if (pthread_create(&tid[started], NULL, worker, &jb)) break;
    worker(&jb); /* the caller works too */
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    free(tid);
    for (size_t i = 0; i < n; i++)
        if (results[i].rc && results[i].rc != TPROF_ETRUNC) return results[i].rc;
    return 0;
}
