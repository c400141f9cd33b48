/* Compressed output through a temporary file renamed on commit. */
#include "trainprof/sink.h"
#include "avx.h"
#include "pgzip.h"
#include "trainprof/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#ifdef TPROF_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define IN_CAP (1u << 20)
#define OUT_CAP (1u << 20)

struct tprof_sink {
    tprof_compression comp;
    int fd;
    char *path, *tmp;
    uint8_t *in, *out;
    size_t in_len;
    uint64_t bytes_in, bytes_out;
    z_stream z;
    int z_ready;
#ifdef TPROF_HAVE_ISAL
    struct isal_zstream isal;
    uint8_t *isal_level_buf;
    int use_isal;
    pgzip *pg; /* with tprof_sink_set_threads: ISA-L on several threads */
#endif
    ZSTD_CCtx *zstd;
    int slot; /* in the registry of temporary files, or -1 */
    char err[512];
};

/* Temporary files are named PATH.tmp.HOST.PID.XXXXXX: a later run on the same
 * host recognises one whose process is gone (SIGKILL, power loss) and removes
 * it; one of another host (a shared file system) is never touched. */
#define TMP_TAG ".tmp."

/* The temporary files of open sinks, for the signal handler: fixed slots so
 * that it reads no memory that may be freed under it. State 0 free, 1 being
 * filled or emptied, 2 holds a path. */
#define TMP_SLOTS 32
#define TMP_PATH_MAX 4096
static struct {
    atomic_int state;
    char path[TMP_PATH_MAX];
} tmp_slots[TMP_SLOTS];

static tprof_sink_notice_fn notice_fn;

void tprof_sink_set_notice(tprof_sink_notice_fn fn) { notice_fn = fn; }

static int tmp_register(const char *path)
{
    if (strlen(path) >= TMP_PATH_MAX) return -1;
    for (int i = 0; i < TMP_SLOTS; i++) {
        int free_state = 0;
        if (atomic_compare_exchange_strong(&tmp_slots[i].state, &free_state, 1)) {
            strcpy(tmp_slots[i].path, path);
            atomic_store(&tmp_slots[i].state, 2);
            return i;
        }
    }
    return -1; /* more than TMP_SLOTS open at once: that one is left to the stale sweep */
}

static void tmp_unregister(int slot)
{
    if (slot < 0) return;
    int held = 2;
    if (atomic_compare_exchange_strong(&tmp_slots[slot].state, &held, 1)) atomic_store(&tmp_slots[slot].state, 0);
}

void tprof_sink_remove_temporaries(void)
{
    for (int i = 0; i < TMP_SLOTS; i++) {
        int held = 2;
        /* taken for good: the process is going away */
        if (atomic_compare_exchange_strong(&tmp_slots[i].state, &held, 1)) unlink(tmp_slots[i].path);
    }
}

static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_signal(int sig)
{
    tprof_sink_remove_temporaries();
    signal(sig, SIG_DFL); /* then die of it, as without the handler */
    raise(sig);
}

int tprof_sink_handle_signals(void)
{
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++) {
        struct sigaction old, sa = { 0 };
        if (sigaction(cleanup_signals[i], NULL, &old) != 0) return TPROF_EIO;
        if (old.sa_handler == SIG_IGN) continue; /* nohup and friends: stay ignored */
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        if (sigaction(cleanup_signals[i], &sa, NULL) != 0) return TPROF_EIO;
    }
    return 0;
}

/* The host part of temporary names: the host name up to its first '.', with
 * anything but letters, digits and '-' made '_'. */
static void host_tag(char *buf, size_t len)
{
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) != 0 || !h[0]) snprintf(h, sizeof h, "localhost");
    size_t i = 0;
    for (; h[i] && h[i] != '.' && i + 1 < len && i < 63; i++) {
        char c = h[i];
        buf[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ? c : '_';
    }
    buf[i] = 0;
}

int tprof_sink_remove_stale(const char *path)
{
    char host[64];
    host_tag(host, sizeof host);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char dir[TMP_PATH_MAX];
    if (slash) {
        size_t dl = (size_t)(slash - path);
        if (dl >= sizeof dir) return 0;
        memcpy(dir, path, dl);
        dir[dl] = 0;
        if (!dl) snprintf(dir, sizeof dir, "/");
    } else
        snprintf(dir, sizeof dir, ".");
    char prefix[512];
    int pl = snprintf(prefix, sizeof prefix, "%s" TMP_TAG "%s.", base, host);
    if (pl <= 0 || (size_t)pl >= sizeof prefix) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, (size_t)pl) != 0) continue;
        /* PID.XXXXXX after the prefix, and nothing else */
        const char *p = e->d_name + pl;
        char *end;
        errno = 0;
        long pid = strtol(p, &end, 10);
        if (errno || end == p || pid <= 0 || *end != '.' || strlen(end + 1) != 6) continue;
        if (pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to ask about */
        char full[TMP_PATH_MAX + 300];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        if (unlink(full) == 0) {
            removed++;
            if (notice_fn) {
                char msg[sizeof full + 120];
                snprintf(msg, sizeof msg, "removed %s: the temporary file of an earlier run (pid %ld) that ended before "
                         "finishing it", full, pid);
                notice_fn(msg);
            }
        }
    }
    closedir(d);
    return removed;
}

tprof_compression tprof_compression_for_path(const char *path)
{
    size_t n = strlen(path);
    if (n >= 3 && strcmp(path + n - 3, ".gz") == 0) return TPROF_COMP_GZIP;
    if (n >= 4 && strcmp(path + n - 4, ".zst") == 0) return TPROF_COMP_ZSTD;
    return TPROF_COMP_NONE;
}

const char *tprof_sink_gzip_backend(void)
{
#ifdef TPROF_HAVE_ISAL
    return "isa-l";
#else
    return "zlib";
#endif
}

static int fail(tprof_sink *s, int code, const char *what)
{
    char why[128];
    snprintf(s->err, sizeof s->err, "%s: %s: %s", s->path, what, tprof_errno_text(errno, why, sizeof why));
    return code;
}

static int write_all(tprof_sink *s, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return fail(s, TPROF_EWRITE, "cannot write");
        }
        p += w;
        n -= (size_t)w;
        s->bytes_out += (uint64_t)w;
    }
    return 0;
}

/* Encodes the input buffer; FINISH ends the stream. */
static int encode(tprof_sink *s, int finish)
{
    const uint8_t *p = s->in;
    size_t n = s->in_len;
    s->in_len = 0;
    errno = 0;
    switch (s->comp) {
    case TPROF_COMP_NONE:
        return write_all(s, p, n);
    case TPROF_COMP_ZSTD: {
        ZSTD_inBuffer in = { p, n, 0 };
        for (;;) {
            ZSTD_outBuffer out = { s->out, OUT_CAP, 0 };
            size_t left = ZSTD_compressStream2(s->zstd, &out, &in, finish ? ZSTD_e_end : ZSTD_e_continue);
            if (ZSTD_isError(left)) {
                snprintf(s->err, sizeof s->err, "%s: zstd: %s", s->path, ZSTD_getErrorName(left));
                return TPROF_EWRITE;
            }
            int rc = write_all(s, s->out, out.pos);
            if (rc) return rc;
            if (finish ? left == 0 : in.pos == in.size) return 0;
        }
    }
    case TPROF_COMP_GZIP:
#ifdef TPROF_HAVE_ISAL
        if (s->pg) {
            int rc = pgzip_submit(s->pg, &s->in, n, finish);
            if (!rc && finish) rc = pgzip_finish(s->pg);
            /* a failed write has said why; a failed worker has not */
            if (rc && !s->err[0])
                snprintf(s->err, sizeof s->err, "%s: gzip encoder failed: %s", s->path, tprof_strerror(rc));
            return rc;
        }
        if (s->use_isal) {
            s->isal.next_in = (uint8_t *)p;
            s->isal.avail_in = (uint32_t)n;
            s->isal.end_of_stream = (uint16_t)finish;
            for (;;) {
                s->isal.next_out = s->out;
                s->isal.avail_out = OUT_CAP;
                int dr = isal_deflate(&s->isal);
                tprof_clear_upper_avx();
                if (dr != COMP_OK) {
                    snprintf(s->err, sizeof s->err, "%s: gzip encoder failed", s->path);
                    return TPROF_EWRITE;
                }
                int rc = write_all(s, s->out, OUT_CAP - s->isal.avail_out);
                if (rc) return rc;
                if (finish ? s->isal.internal_state.state == ZSTATE_END : s->isal.avail_in == 0) return 0;
            }
        }
#endif
        s->z.next_in = (Bytef *)p;
        s->z.avail_in = (uInt)n;
        for (;;) {
            s->z.next_out = s->out;
            s->z.avail_out = OUT_CAP;
            int zr = deflate(&s->z, finish ? Z_FINISH : Z_NO_FLUSH);
            if (zr == Z_STREAM_ERROR) {
                snprintf(s->err, sizeof s->err, "%s: gzip encoder failed", s->path);
                return TPROF_EWRITE;
            }
            int rc = write_all(s, s->out, OUT_CAP - s->z.avail_out);
            if (rc) return rc;
            if (finish ? zr == Z_STREAM_END : s->z.avail_in == 0) return 0;
        }
    }
    return TPROF_EUSAGE;
}

static void release(tprof_sink *s)
{
#ifdef TPROF_HAVE_ISAL
    pgzip_free(s->pg); /* first: its threads may hold the input buffers */
#endif
    if (s->fd >= 0) close(s->fd);
    tmp_unregister(s->slot);
    if (s->z_ready) deflateEnd(&s->z);
    ZSTD_freeCCtx(s->zstd);
#ifdef TPROF_HAVE_ISAL
    free(s->isal_level_buf);
#endif
    free(s->in);
    free(s->out);
    free(s->path);
    free(s->tmp);
    free(s);
}

/* Creates S->tmp exclusively. The name is registered for the signal handler
 * before the file exists, so no signal finds the file unregistered; a name
 * taken already is tried again with another suffix. */
static int create_temporary(tprof_sink *s, size_t tl, const char *host)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static _Atomic uint64_t counter;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t x = ((uint64_t)now.tv_nsec << 20) ^ (uint64_t)getpid() ^ (atomic_fetch_add(&counter, 1) << 40);
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[7];
        for (int i = 0; i < 6; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            suffix[i] = digits[(x >> 33) % (sizeof digits - 1)];
        }
        suffix[6] = 0;
        snprintf(s->tmp, tl, "%s" TMP_TAG "%s.%ld.%s", s->path, host, (long)getpid(), suffix);
        s->slot = tmp_register(s->tmp);
        int fd = open(s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) return fd;
        int err = errno;
        tmp_unregister(s->slot);
        s->slot = -1;
        errno = err;
        if (err != EEXIST) return -1;
    }
    return -1;
}

int tprof_sink_open(tprof_sink **out, const char *path, tprof_compression comp, int level, char *errbuf,
                    size_t errlen)
{
    *out = NULL;
    tprof_sink *s = calloc(1, sizeof *s);
    if (!s) return TPROF_ENOMEM;
    s->fd = -1;
    s->slot = -1;
    s->comp = comp;
    s->path = strdup(path);
    char host[64];
    host_tag(host, sizeof host);
    size_t tl = strlen(path) + strlen(host) + 40;
    s->tmp = malloc(tl);
    s->in = malloc(IN_CAP);
    s->out = malloc(OUT_CAP);
    int rc = 0;
    if (!s->path || !s->tmp || !s->in || !s->out) {
        rc = TPROF_ENOMEM;
        goto bad;
    }
    tprof_sink_remove_stale(path);
    /* the temporary name sits beside PATH so that rename() stays on one file system */
    s->fd = create_temporary(s, tl, host);
    if (s->fd < 0) {
        char why[128];
        snprintf(s->err, sizeof s->err, "%s: cannot create a temporary file beside it: %s", path,
                 tprof_errno_text(errno, why, sizeof why));
        rc = TPROF_EWRITE;
        goto bad;
    }
    if (comp == TPROF_COMP_ZSTD) {
        s->zstd = ZSTD_createCCtx();
        if (!s->zstd) {
            rc = TPROF_ENOMEM;
            goto bad;
        }
        ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_compressionLevel, level > 0 ? level : 1);
    } else if (comp == TPROF_COMP_GZIP) {
        level = level > 0 ? level : 1;
#ifdef TPROF_HAVE_ISAL
        /* ISA-L has levels 0-3; its level 1 is the fast one. Higher gzip levels go to zlib. */
        if (level <= 1) {
            isal_deflate_init(&s->isal);
            s->isal.level = 1;
            s->isal.gzip_flag = IGZIP_GZIP;
            s->isal.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
            s->isal_level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
            if (!s->isal_level_buf) {
                rc = TPROF_ENOMEM;
                goto bad;
            }
            s->isal.level_buf = s->isal_level_buf;
            s->use_isal = 1;
        }
        if (!s->use_isal)
#endif
        {
            if (deflateInit2(&s->z, level > 9 ? 9 : level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
                rc = TPROF_ENOMEM;
                goto bad;
            }
            s->z_ready = 1;
        }
    }
    *out = s;
    return 0;
bad:
    if (errbuf && errlen) snprintf(errbuf, errlen, "%s", s->err[0] ? s->err : tprof_strerror(rc));
    if (s->fd >= 0) unlink(s->tmp); /* before release() frees its slot: no window without a cleanup */
    release(s);
    return rc;
}

static int pg_write(void *ctx, const uint8_t *data, size_t len)
{
    tprof_sink *s = ctx;
    errno = 0;
    return write_all(s, data, len);
}

int tprof_sink_set_threads(tprof_sink *s, int threads)
{
    if (threads < 1 || s->bytes_in) return 0;
    if (s->comp == TPROF_COMP_ZSTD) {
        /* zstd's own workers, where the library was built with them */
        if (ZSTD_isError(ZSTD_CCtx_setParameter(s->zstd, ZSTD_c_nbWorkers, threads))) return 0;
        return threads;
    }
#ifdef TPROF_HAVE_ISAL
    if (s->comp == TPROF_COMP_GZIP && s->use_isal && !s->pg) {
        int rc = pgzip_new(&s->pg, threads, IN_CAP, pg_write, s);
        return rc ? rc : threads; /* TPROF_E* codes are negative */
    }
#endif
    return 0;
}

int tprof_sink_write(tprof_sink *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->bytes_in += len;
    while (len) {
        size_t room = IN_CAP - s->in_len, n = len < room ? len : room;
        memcpy(s->in + s->in_len, p, n);
        s->in_len += n;
        p += n;
        len -= n;
        if (s->in_len == IN_CAP) {
            int rc = encode(s, 0);
            if (rc) return rc;
        }
    }
    return 0;
}

int tprof_sink_commit(tprof_sink *s, char *errbuf, size_t errlen)
{
    int rc = encode(s, 1);
    errno = 0;
    if (!rc && fsync(s->fd) != 0 && errno != EINVAL) rc = fail(s, TPROF_EWRITE, "cannot flush");
    if (!rc && close(s->fd) != 0) rc = fail(s, TPROF_EWRITE, "cannot close");
    s->fd = -1;
    if (!rc && rename(s->tmp, s->path) != 0) rc = fail(s, TPROF_EWRITE, "cannot rename the temporary file");
    if (rc) {
        if (errbuf && errlen) snprintf(errbuf, errlen, "%s", s->err);
        unlink(s->tmp);
    }
    release(s);
    return rc;
}

void tprof_sink_abort(tprof_sink *s)
{
    if (!s) return;
    if (s->fd >= 0) {
        close(s->fd);
        s->fd = -1;
    }
    unlink(s->tmp);
    release(s);
}

const char *tprof_sink_errmsg(const tprof_sink *s) { return s->err; }
uint64_t tprof_sink_bytes_in(const tprof_sink *s) { return s->bytes_in; }
uint64_t tprof_sink_bytes_out(const tprof_sink *s) { return s->bytes_out; }

int tprof_sink_write_file(const char *path, const void *data, size_t len, char *errbuf, size_t errlen)
{
    tprof_sink *k;
    int rc = tprof_sink_open(&k, path, tprof_compression_for_path(path), 0, errbuf, errlen);
    if (rc) return rc;
    if ((rc = tprof_sink_write(k, data, len))) {
        if (errbuf && errlen) snprintf(errbuf, errlen, "%s", k->err[0] ? k->err : tprof_strerror(rc));
        tprof_sink_abort(k);
        return rc;
    }
    return tprof_sink_commit(k, errbuf, errlen);
}
