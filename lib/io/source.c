/* Byte sources with magic-byte detection and streaming decompression. */
#include "trainprof/source.h"
#include "avx.h"
#include "trainprof/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>
#ifdef TPROF_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define IN_CAP (1u << 20) /* compressed input buffer: 1 MiB */
#define IN_MIN (1u << 12) /* for an input of known size: its size, from 4 KiB */

/* zstd windows: up to 2^27 always (zstd's own default limit); above, up to
 * 2^31 (what zstd --long=31 writes) when the input is large enough to need
 * it: a window at most 1024 times the compressed size, or any when the size
 * is unknown (a pipe). A frame declaring a window is allocated that window at
 * once, so a 150-byte file must not make the reader reserve 2 GiB. */
#define TPROF_ZSTD_WINDOW_LOG_MIN 27
#define TPROF_ZSTD_WINDOW_LOG_MAX 31

static int zstd_window_log_max(int64_t compressed_size)
{
    if (compressed_size < 0) return TPROF_ZSTD_WINDOW_LOG_MAX;
    int lg = TPROF_ZSTD_WINDOW_LOG_MIN;
    while (lg < TPROF_ZSTD_WINDOW_LOG_MAX && ((uint64_t)1 << (lg + 1)) <= (uint64_t)compressed_size * 1024) lg++;
    return lg;
}

struct tprof_source {
    char *name;
    int fd;                 /* -1 for memory sources */
    int own_fd;
    const uint8_t *mem;     /* memory source */
    size_t mem_len, mem_pos;
    uint8_t *in;            /* compressed input window */
    size_t in_pos, in_len, in_cap;
    int in_eof;
    tprof_compression comp;
    int stream_done;        /* current gzip member / zstd frame finished */
    int finished;           /* whole input consumed cleanly */
    uint64_t bytes_in, bytes_out;
    int64_t file_size;
    int zstd_wlog; /* the zstd window log accepted for this input */
    char err[256];
    char note[256]; /* something odd that did not stop the read (trailing bytes) */
    uint8_t head[TPROF_SOURCE_HEAD]; /* the first bytes delivered, for a failed read's hint */
    size_t head_len;
#ifdef TPROF_HAVE_ISAL
    struct inflate_state *isal;
#endif
    z_stream *zs;
    ZSTD_DStream *zd;
};

const char *tprof_strerror(int err)
{
    switch (err) {
    case TPROF_OK: return "ok";
    case TPROF_EIO: return "input/output error";
    case TPROF_ENOMEM: return "out of memory";
    case TPROF_EFORMAT: return "invalid data";
    case TPROF_ETRUNC: return "input truncated";
    case TPROF_EUSAGE: return "invalid argument";
    case TPROF_ENOTTRACE: return "not a trace";
    case TPROF_ELIMIT: return "limit exceeded";
    case TPROF_EWRITE: return "output not written";
    default: return "unknown error";
    }
}

const char *tprof_errno_text(int err, char *buf, size_t len)
{
    if (!err) {
        snprintf(buf, len, "failed");
        return buf;
    }
    const char *name = strerrorname_np(err);
    if (name) snprintf(buf, len, "%s (%s)", strerror(err), name);
    else snprintf(buf, len, "%s", strerror(err));
    return buf;
}

const char *tprof_compression_name(tprof_compression c)
{
    switch (c) {
    case TPROF_COMP_GZIP: return "gzip";
    case TPROF_COMP_ZSTD: return "zstd";
    default: return "none";
    }
}

const char *tprof_source_gzip_backend(void)
{
#ifdef TPROF_HAVE_ISAL
    return getenv("TPROF_FORCE_ZLIB") ? "zlib" : "isa-l";
#else
    return "zlib";
#endif
}

static void seterr(tprof_source *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
}

/* Refills the compressed window, keeping unconsumed bytes. Returns bytes
 * available, 0 at end of input, negative on error. */
static ssize_t fill_in(tprof_source *s)
{
    if (s->in_pos < s->in_len)
        return (ssize_t)(s->in_len - s->in_pos);
    if (s->in_eof)
        return 0;
    if (s->mem) {
        size_t n = s->mem_len - s->mem_pos;
        if (n > s->in_cap) n = s->in_cap;
        memcpy(s->in, s->mem + s->mem_pos, n);
        s->mem_pos += n;
        s->in_pos = 0;
        s->in_len = n;
        if (n == 0) s->in_eof = 1;
        return (ssize_t)n;
    }
    for (;;) {
        ssize_t n = read(s->fd, s->in, s->in_cap);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            seterr(s, "%s: read failed after %llu bytes: %s", s->name,
                   (unsigned long long)s->bytes_in, strerror(errno));
            return TPROF_EIO;
        }
        s->in_pos = 0;
        s->in_len = (size_t)n;
        if (n == 0) s->in_eof = 1;
        return n;
    }
}

/* Reads at least n bytes into the window start (for magic detection). */
static int peek_in(tprof_source *s, size_t n)
{
    while (s->in_len < n && !s->in_eof) {
        ssize_t r;
        if (s->mem) {
            size_t k = s->mem_len - s->mem_pos;
            if (k > s->in_cap - s->in_len) k = s->in_cap - s->in_len;
            memcpy(s->in + s->in_len, s->mem + s->mem_pos, k);
            s->mem_pos += k;
            r = (ssize_t)k;
        } else {
            r = read(s->fd, s->in + s->in_len, s->in_cap - s->in_len);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) {
                seterr(s, "%s: read failed: %s", s->name, strerror(errno));
                return TPROF_EIO;
            }
        }
        if (r == 0) s->in_eof = 1;
        s->in_len += (size_t)r;
    }
    return 0;
}

static int use_isal(void)
{
#ifdef TPROF_HAVE_ISAL
    return getenv("TPROF_FORCE_ZLIB") == NULL;
#else
    return 0;
#endif
}

static int setup_decoder(tprof_source *s)
{
    const uint8_t *b = s->in;
    if (s->in_len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
        s->comp = TPROF_COMP_GZIP;
#ifdef TPROF_HAVE_ISAL
        if (use_isal()) {
            s->isal = malloc(sizeof *s->isal);
            if (!s->isal) return TPROF_ENOMEM;
            isal_inflate_init(s->isal);
            s->isal->crc_flag = ISAL_GZIP;
            return 0;
        }
#endif
        s->zs = calloc(1, sizeof *s->zs);
        if (!s->zs) return TPROF_ENOMEM;
        if (inflateInit2(s->zs, 16 + MAX_WBITS) != Z_OK) return TPROF_ENOMEM;
        return 0;
    }
    if (s->in_len >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) {
        s->comp = TPROF_COMP_ZSTD;
        s->zd = ZSTD_createDStream();
        if (!s->zd) return TPROF_ENOMEM;
        ZSTD_initDStream(s->zd);
        s->zstd_wlog = zstd_window_log_max(s->file_size);
        ZSTD_DCtx_setParameter(s->zd, ZSTD_d_windowLogMax, s->zstd_wlog);
        return 0;
    }
    s->comp = TPROF_COMP_NONE;
    return 0;
}

static int source_init(tprof_source *s)
{
    /* a small input of known size needs no 1 MiB buffer (a file that grows
     * meanwhile is still read whole, a buffer at a time) */
    s->in_cap = IN_CAP;
    if (s->file_size >= 0 && (uint64_t)s->file_size < IN_CAP)
        for (s->in_cap = IN_MIN; s->in_cap <= (uint64_t)s->file_size;) s->in_cap *= 2;
    s->in = malloc(s->in_cap);
    if (!s->in) return TPROF_ENOMEM;
    int rc = peek_in(s, 4);
    if (rc) return rc;
    return setup_decoder(s);
}

int tprof_source_open(tprof_source **out, const char *path, char *errbuf, size_t errlen)
{
    *out = NULL;
    tprof_source *s = calloc(1, sizeof *s);
    if (!s) return TPROF_ENOMEM;
    s->file_size = -1;
    int is_stdin = strcmp(path, "-") == 0;
    s->name = strdup(is_stdin ? "<stdin>" : path);
    if (!s->name) { free(s); return TPROF_ENOMEM; }
    int rc = 0;
    if (is_stdin) {
        s->fd = 0;
    } else {
        s->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0) {
            if (errbuf) snprintf(errbuf, errlen, "%s: cannot open: %s", path, strerror(errno));
            rc = TPROF_EIO;
            goto fail;
        }
        s->own_fd = 1;
        struct stat st;
        if (fstat(s->fd, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                if (errbuf) snprintf(errbuf, errlen, "%s: is a directory, expected a trace file", path);
                rc = TPROF_EIO;
                goto fail;
            }
            if (S_ISREG(st.st_mode)) {
                s->file_size = (int64_t)st.st_size;
#ifdef POSIX_FADV_SEQUENTIAL
                posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
            }
        }
    }
    rc = source_init(s);
    if (rc) {
        if (errbuf) snprintf(errbuf, errlen, "%s", s->err[0] ? s->err : tprof_strerror(rc));
        goto fail;
    }
    *out = s;
    return 0;
fail:
    tprof_source_close(s);
    return rc;
}

int tprof_source_open_mem(tprof_source **out, const void *data, size_t len, const char *name)
{
    *out = NULL;
    tprof_source *s = calloc(1, sizeof *s);
    if (!s) return TPROF_ENOMEM;
    s->fd = -1;
    s->mem = data;
    s->mem_len = len;
    s->file_size = (int64_t)len;
    s->name = strdup(name ? name : "<memory>");
    int rc = s->name ? source_init(s) : TPROF_ENOMEM;
    if (rc) {
        tprof_source_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* After a gzip member ends: another member may follow; zero padding is
 * tolerated, anything else is reported as trailing garbage and ignored. */
static int next_gzip_member(tprof_source *s)
{
    ssize_t n = fill_in(s);
    if (n < 0) return (int)n;
    if (n == 0) { s->finished = 1; return 0; }
    if (s->in_len - s->in_pos < 2) {
        /* a lone trailing byte: keep it and look once more */
        uint8_t c = s->in[s->in_pos];
        s->in[0] = c; s->in_pos = 0; s->in_len = 1;
        if (peek_in(s, 2)) return TPROF_EIO;
    }
    const uint8_t *b = s->in + s->in_pos;
    size_t avail = s->in_len - s->in_pos;
    if (avail >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
        s->stream_done = 0;
#ifdef TPROF_HAVE_ISAL
        if (s->isal) {
            isal_inflate_reset(s->isal);
            s->isal->crc_flag = ISAL_GZIP;
            return 0;
        }
#endif
        inflateReset(s->zs);
        return 0;
    }
    for (size_t i = 0; i < avail; i++)
        if (b[i] != 0) {
            snprintf(s->note, sizeof s->note,
                     "%s: ignored trailing bytes after the gzip stream at compressed byte %llu", s->name,
                     (unsigned long long)(s->bytes_in + i));
            break;
        }
    s->finished = 1;
    return 0;
}

static ssize_t read_plain(tprof_source *s, uint8_t *buf, size_t cap)
{
    if (s->in_pos < s->in_len) { /* bytes already peeked */
        size_t n = s->in_len - s->in_pos;
        if (n > cap) n = cap;
        memcpy(buf, s->in + s->in_pos, n);
        s->in_pos += n;
        __atomic_fetch_add(&s->bytes_in, (uint64_t)(n), __ATOMIC_RELAXED);
        return (ssize_t)n;
    }
    if (s->in_eof) return 0;
    if (s->mem) {
        size_t n = s->mem_len - s->mem_pos;
        if (n > cap) n = cap;
        memcpy(buf, s->mem + s->mem_pos, n);
        s->mem_pos += n;
        __atomic_fetch_add(&s->bytes_in, (uint64_t)(n), __ATOMIC_RELAXED);
        if (n == 0) s->in_eof = 1;
        return (ssize_t)n;
    }
    for (;;) {
        ssize_t n = read(s->fd, buf, cap);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            seterr(s, "%s: read failed after %llu bytes: %s", s->name,
                   (unsigned long long)s->bytes_in, strerror(errno));
            return TPROF_EIO;
        }
        if (n == 0) s->in_eof = 1;
        __atomic_fetch_add(&s->bytes_in, (uint64_t)((uint64_t)n), __ATOMIC_RELAXED);
        return n;
    }
}

#ifdef TPROF_HAVE_ISAL
static ssize_t read_isal(tprof_source *s, uint8_t *buf, size_t cap)
{
    struct inflate_state *st = s->isal;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    while (!s->finished) {
        if (s->stream_done) {
            int rc = next_gzip_member(s);
            if (rc) return rc;
            continue;
        }
        ssize_t n = fill_in(s);
        if (n < 0) return n;
        st->next_in = s->in + s->in_pos;
        st->avail_in = (uint32_t)(s->in_len - s->in_pos);
        st->next_out = buf;
        st->avail_out = (uint32_t)cap;
        int ret = isal_inflate(st);
        tprof_clear_upper_avx();
        size_t used = (s->in_len - s->in_pos) - st->avail_in;
        s->in_pos += used;
        __atomic_fetch_add(&s->bytes_in, (uint64_t)(used), __ATOMIC_RELAXED);
        size_t got = cap - st->avail_out;
        if (ret < 0) {
            seterr(s, "%s: corrupt gzip data near compressed byte %llu (isa-l error %d)",
                   s->name, (unsigned long long)s->bytes_in, ret);
            return TPROF_EFORMAT;
        }
        if (st->block_state == ISAL_BLOCK_FINISH) s->stream_done = 1;
        if (got) {
            s->bytes_out += got;
            return (ssize_t)got;
        }
        if (n == 0 && !s->stream_done) {
            seterr(s, "%s: gzip stream truncated at compressed byte %llu (expected more deflate data)",
                   s->name, (unsigned long long)s->bytes_in);
            return TPROF_ETRUNC;
        }
    }
    return 0;
}
#endif

static ssize_t read_zlib(tprof_source *s, uint8_t *buf, size_t cap)
{
    z_stream *z = s->zs;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    while (!s->finished) {
        if (s->stream_done) {
            int rc = next_gzip_member(s);
            if (rc) return rc;
            continue;
        }
        ssize_t n = fill_in(s);
        if (n < 0) return n;
        z->next_in = s->in + s->in_pos;
        z->avail_in = (uInt)(s->in_len - s->in_pos);
        z->next_out = buf;
        z->avail_out = (uInt)cap;
        int ret = inflate(z, Z_NO_FLUSH);
        size_t used = (s->in_len - s->in_pos) - z->avail_in;
        s->in_pos += used;
        __atomic_fetch_add(&s->bytes_in, (uint64_t)(used), __ATOMIC_RELAXED);
        size_t got = cap - z->avail_out;
        if (ret == Z_STREAM_END) s->stream_done = 1;
        else if (ret == Z_BUF_ERROR && n == 0) {
            seterr(s, "%s: gzip stream truncated at compressed byte %llu (expected more deflate data)",
                   s->name, (unsigned long long)s->bytes_in);
            if (got) { s->bytes_out += got; return (ssize_t)got; }
            return TPROF_ETRUNC;
        } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
            seterr(s, "%s: corrupt gzip data near compressed byte %llu (%s)", s->name,
                   (unsigned long long)s->bytes_in, z->msg ? z->msg : "zlib error");
            return TPROF_EFORMAT;
        }
        if (got) {
            s->bytes_out += got;
            return (ssize_t)got;
        }
        if (n == 0 && !s->stream_done) {
            seterr(s, "%s: gzip stream truncated at compressed byte %llu (expected more deflate data)",
                   s->name, (unsigned long long)s->bytes_in);
            return TPROF_ETRUNC;
        }
    }
    return 0;
}

static ssize_t read_zstd(tprof_source *s, uint8_t *buf, size_t cap)
{
    size_t hint = 1; /* ZSTD's "more input needed" hint; 0 means a frame ended */
    while (!s->finished) {
        ssize_t n = fill_in(s);
        if (n < 0) return n;
        if (n == 0) {
            if (s->stream_done) { s->finished = 1; break; }
            seterr(s, "%s: zstd stream truncated at compressed byte %llu (expected more frame data)",
                   s->name, (unsigned long long)s->bytes_in);
            return TPROF_ETRUNC;
        }
        ZSTD_inBuffer in = { s->in + s->in_pos, s->in_len - s->in_pos, 0 };
        ZSTD_outBuffer out = { buf, cap, 0 };
        hint = ZSTD_decompressStream(s->zd, &out, &in);
        s->in_pos += in.pos;
        __atomic_fetch_add(&s->bytes_in, (uint64_t)(in.pos), __ATOMIC_RELAXED);
        if (ZSTD_isError(hint)) {
            if (ZSTD_getErrorCode(hint) == ZSTD_error_frameParameter_windowTooLarge) {
                seterr(s, "%s: zstd window too large: the frame asks for more than 2^%d bytes of window, "
                       "more than a %s of this size needs (written with zstd --long from a pipe?); "
                       "decompress it first: zstd -d --long=31", s->name, s->zstd_wlog,
                       s->file_size < 0 ? "stream" : "file");
                return TPROF_ELIMIT;
            }
            seterr(s, "%s: corrupt zstd data near compressed byte %llu (%s)", s->name,
                   (unsigned long long)s->bytes_in, ZSTD_getErrorName(hint));
            return TPROF_EFORMAT;
        }
        s->stream_done = hint == 0;
        if (out.pos) {
            s->bytes_out += out.pos;
            return (ssize_t)out.pos;
        }
    }
    return 0;
}

ssize_t tprof_source_read(tprof_source *s, void *buf, size_t cap)
{
    if (!s || !buf) return TPROF_EUSAGE;
    ssize_t n;
    switch (s->comp) {
    case TPROF_COMP_GZIP:
#ifdef TPROF_HAVE_ISAL
        if (s->isal) {
            n = read_isal(s, buf, cap);
            break;
        }
#endif
        n = read_zlib(s, buf, cap);
        break;
    case TPROF_COMP_ZSTD: n = read_zstd(s, buf, cap); break;
    default:
        n = read_plain(s, buf, cap);
        if (n > 0) s->bytes_out += (uint64_t)n;
        break;
    }
    if (n > 0 && s->head_len < sizeof s->head) {
        size_t k = sizeof s->head - s->head_len < (size_t)n ? sizeof s->head - s->head_len : (size_t)n;
        memcpy(s->head + s->head_len, buf, k);
        s->head_len += k;
    }
    return n;
}

const uint8_t *tprof_source_head(const tprof_source *s, size_t *len)
{
    *len = s->head_len;
    return s->head;
}

const char *tprof_source_name(const tprof_source *s) { return s->name; }
const char *tprof_source_errmsg(const tprof_source *s) { return s->err; }
const char *tprof_source_note(const tprof_source *s) { return s->note; }
tprof_compression tprof_source_compression(const tprof_source *s) { return s->comp; }
/* read by the parsing thread for progress while a pipe thread decompresses */
uint64_t tprof_source_bytes_in(const tprof_source *s) { return __atomic_load_n(&s->bytes_in, __ATOMIC_RELAXED); }
uint64_t tprof_source_bytes_out(const tprof_source *s) { return s->bytes_out; }
int64_t tprof_source_file_size(const tprof_source *s) { return s->file_size; }

void tprof_source_close(tprof_source *s)
{
    if (!s) return;
    if (s->own_fd && s->fd >= 0) close(s->fd);
#ifdef TPROF_HAVE_ISAL
    free(s->isal);
#endif
    if (s->zs) { inflateEnd(s->zs); free(s->zs); }
    if (s->zd) ZSTD_freeDStream(s->zd);
    free(s->in);
    free(s->name);
    free(s);
}
