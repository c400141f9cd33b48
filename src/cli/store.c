/* The inputs' results as bytes until they are printed (cli_store): in
 * memory up to a bound, past it in an unlinked temporary file, so that a
 * run over many ranks holds one rank's results at a time, whatever the
 * number of ranks. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "trainprof/error.h"

/* In memory up to this many bytes in all (TPROF_STORE_MEMORY overrides it:
 * the tests' way to make small runs use the file). */
#define STORE_MEMORY (16u << 20)

struct cli_store {
    pthread_mutex_t mu;
    size_t n;
    char **mem;      /* input i's bytes while in memory */
    size_t *len;     /* input i's length */
    int64_t *off;    /* input i's place in the file, -1 when in memory or absent */
    size_t in_memory, memory_bound;
    int fd;          /* the file, -1 until the bound is passed */
    int64_t end;     /* the file's length */
    int file_failed; /* no file could be made: kept in memory */
    int locked;      /* the mutex is set up */
};

cli_store *cli_store_new(size_t n)
{
    cli_store *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->fd = -1;
    size_t n1 = n ? n : 1;
    s->mem = calloc(n1, sizeof *s->mem);
    s->len = calloc(n1, sizeof *s->len);
    s->off = malloc(n1 * sizeof *s->off);
    if (!s->mem || !s->len || !s->off) {
        cli_store_free(s);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) s->off[i] = -1;
    pthread_mutex_init(&s->mu, NULL);
    s->locked = 1;
    s->n = n;
    const char *bound = getenv("TPROF_STORE_MEMORY");
    s->memory_bound = bound && *bound ? (size_t)strtoull(bound, NULL, 10) : STORE_MEMORY;
    return s;
}

/* The temporary file, made on first need in $TMPDIR (else /tmp) and
 * unlinked at once: nothing is left behind, whatever ends the process. */
static int open_file(cli_store *s)
{
    if (s->fd >= 0 || s->file_failed) return s->fd >= 0;
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    size_t len = strlen(dir) + 32;
    char *path = malloc(len);
    if (path) {
        snprintf(path, len, "%s/trainprof-results-XXXXXX", dir);
        s->fd = mkstemp(path);
        if (s->fd >= 0) unlink(path);
        free(path);
    }
    s->file_failed = s->fd < 0;
    return s->fd >= 0;
}

static int write_all(int fd, const char *b, size_t l, int64_t off)
{
    while (l) {
        ssize_t w = pwrite(fd, b, l, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        b += w, l -= (size_t)w, off += w;
    }
    return 0;
}

int cli_store_has(const cli_store *s, size_t i) { return s->mem[i] || s->off[i] >= 0; }

int cli_store_put(cli_store *s, size_t i, char *b, size_t l)
{
    pthread_mutex_lock(&s->mu);
    if (s->mem[i]) { /* put again (rewritten): the old bytes go; a file's old place stays unused */
        s->in_memory -= s->len[i];
        free(s->mem[i]);
        s->mem[i] = NULL;
    }
    s->off[i] = -1;
    int to_file = s->in_memory + l > s->memory_bound && open_file(s);
    int64_t off = s->end;
    if (to_file) s->end += (int64_t)l; /* its place taken; written outside the lock */
    else s->in_memory += l;
    pthread_mutex_unlock(&s->mu);
    s->len[i] = l;
    if (to_file && !write_all(s->fd, b, l, off)) {
        s->off[i] = off;
        free(b);
        return 0;
    }
    /* in memory: under the bound, or where the file cannot be written (a full disk) */
    if (to_file) {
        pthread_mutex_lock(&s->mu);
        s->in_memory += l;
        pthread_mutex_unlock(&s->mu);
    }
    s->mem[i] = b;
    return 0;
}

int cli_store_get(cli_store *s, size_t i, char **b, size_t *l)
{
    *l = s->len[i];
    *b = NULL;
    char *buf = malloc(*l ? *l : 1);
    if (!buf) return TPROF_ENOMEM;
    if (s->off[i] < 0) { /* a copy: an input may be read again (the across-ranks view's worst) */
        if (*l) memcpy(buf, s->mem[i], *l);
        *b = buf;
        return 0;
    }
    size_t done = 0;
    while (done < *l) {
        ssize_t r = pread(s->fd, buf + done, *l - done, (off_t)(s->off[i] + (int64_t)done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            free(buf);
            return TPROF_EIO;
        }
        done += (size_t)r;
    }
    *b = buf;
    return 0;
}

void cli_store_free(cli_store *s)
{
    if (!s) return;
    for (size_t i = 0; s->mem && i < s->n; i++) free(s->mem[i]);
    if (s->fd >= 0) close(s->fd);
    if (s->locked) pthread_mutex_destroy(&s->mu);
    free(s->mem);
    free(s->len);
    free(s->off);
    free(s);
}
