#include "pipe.h"
#include "trainprof/error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 4
#define SLOT_CAP (1u << 20)

typedef struct {
    uint8_t *data;
    size_t len;
    ssize_t status; /* 0 more may follow; <0 error after data; 1 end after data */
} slot;

struct tprof_pipe {
    tprof_source *src;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t filled, freed;
    slot slots[SLOTS];
    unsigned head, tail; /* consumer reads slots[head], producer fills slots[tail] */
    unsigned count;      /* filled slots */
    size_t pos;          /* read position in slots[head] */
    int stop;
    int finished;          /* consumer side: the last slot was used up */
    ssize_t final_status;  /* 0 at a clean end, else the error */
};

static void *producer(void *arg)
{
    tprof_pipe *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->count == SLOTS && !p->stop) pthread_cond_wait(&p->freed, &p->mu);
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        slot *s = &p->slots[p->tail];
        pthread_mutex_unlock(&p->mu);
        /* fill the slot outside the lock */
        s->len = 0;
        s->status = 0;
        while (s->len < SLOT_CAP) {
            ssize_t n = tprof_source_read(p->src, s->data + s->len, SLOT_CAP - s->len);
            if (n <= 0) {
                s->status = n == 0 ? 1 : n;
                break;
            }
            s->len += (size_t)n;
        }
        pthread_mutex_lock(&p->mu);
        p->tail = (p->tail + 1) % SLOTS;
        p->count++;
        int last = s->status != 0;
        pthread_cond_signal(&p->filled);
        pthread_mutex_unlock(&p->mu);
        if (last) return NULL;
    }
}

int tprof_pipe_start(tprof_pipe **out, tprof_source *src)
{
    *out = NULL;
    tprof_pipe *p = calloc(1, sizeof *p);
    if (!p) return TPROF_ENOMEM;
    p->src = src;
    for (int i = 0; i < SLOTS; i++)
        if (!(p->slots[i].data = malloc(SLOT_CAP))) goto fail;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->filled, NULL);
    pthread_cond_init(&p->freed, NULL);
    if (pthread_create(&p->thread, NULL, producer, p)) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->filled);
        pthread_cond_destroy(&p->freed);
        goto fail;
    }
    *out = p;
    return 0;
fail:
    for (int i = 0; i < SLOTS; i++) free(p->slots[i].data);
    free(p);
    return TPROF_ENOMEM;
}

ssize_t tprof_pipe_read(void *arg, void *buf, size_t cap)
{
    tprof_pipe *p = arg;
    if (p->finished) return p->final_status;
    pthread_mutex_lock(&p->mu);
    while (p->count == 0) pthread_cond_wait(&p->filled, &p->mu);
    slot *s = &p->slots[p->head];
    pthread_mutex_unlock(&p->mu);
    size_t n = s->len - p->pos;
    if (n > cap) n = cap;
    memcpy(buf, s->data + p->pos, n);
    p->pos += n;
    if (p->pos == s->len) {
        /* slot used up; its status (end or error) counts after its data */
        ssize_t status = s->status;
        pthread_mutex_lock(&p->mu);
        p->head = (p->head + 1) % SLOTS;
        p->count--;
        p->pos = 0;
        pthread_cond_signal(&p->freed);
        pthread_mutex_unlock(&p->mu);
        if (status != 0) {
            p->finished = 1;
            p->final_status = status > 0 ? 0 : status;
        }
    }
    if (n > 0 || !p->finished) return (ssize_t)n;
    return p->final_status;
}

void tprof_pipe_stop(tprof_pipe *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->filled);
    pthread_cond_destroy(&p->freed);
    for (int i = 0; i < SLOTS; i++) free(p->slots[i].data);
    free(p);
}

int tprof_pipe_worth(const tprof_source *src)
{
    int64_t size = tprof_source_file_size(src);
    return tprof_source_compression(src) != TPROF_COMP_NONE && (size < 0 || size >= TPROF_SMALL_INPUT);
}

int64_t tprof_source_json_guess(const tprof_source *src)
{
    int64_t size = tprof_source_file_size(src);
    if (size < 0 || tprof_source_compression(src) == TPROF_COMP_NONE) return size;
    return size > INT64_MAX / 8 ? INT64_MAX : size * 8;
}

size_t tprof_source_window(const tprof_source *src)
{
    int64_t n = tprof_source_json_guess(src);
    if (n < 0 || n >= TPROF_SMALL_INPUT) return 0;
    return n < 4096 ? 4096 : (size_t)n + 1; /* + 1: the end is seen in the same read */
}
