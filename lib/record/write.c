/* Writing: the Kineto-style trace (*.pt.trace.json.gz, through the sink:
 * temporary file, renamed when complete) and the memory snapshot (*.pkl). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "pickle.h"
#include "trainprof/error.h"

#define g tprof__g

typedef struct {
    tprof_sink *s;
    char buf[1 << 16];
    size_t n;
    int rc;
} out_t;

static void flush(out_t *o)
{
    if (o->n && !o->rc) o->rc = tprof_sink_write(o->s, o->buf, o->n);
    o->n = 0;
}

static void emit(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(out_t *o, const char *fmt, ...)
{
    va_list ap;
    for (int tries = 0; tries < 2; tries++) {
        va_start(ap, fmt);
        int k = vsnprintf(o->buf + o->n, sizeof o->buf - o->n, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if ((size_t)k < sizeof o->buf - o->n) {
            o->n += (size_t)k;
            return;
        }
        flush(o);
        if ((size_t)k >= sizeof o->buf) return; /* longer than a buffer: callers keep lines short */
    }
}

/* A JSON string (quotes included). */
static void jstr(out_t *o, const char *s)
{
    if (sizeof o->buf - o->n < 8) flush(o);
    o->buf[o->n++] = '"';
    for (; s && *s; s++) {
        if (sizeof o->buf - o->n < 8) flush(o);
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            o->buf[o->n++] = '\\';
            o->buf[o->n++] = (char)c;
        } else if (c < 0x20) {
            o->n += (size_t)snprintf(o->buf + o->n, 8, "\\u%04x", c);
        } else if (c < 0x80) {
            o->buf[o->n++] = (char)c;
        } else {
            int k = tprof__utf8_len((const unsigned char *)s); /* 0: replaced by U+FFFD */
            if (k) {
                memcpy(o->buf + o->n, s, (size_t)k);
                o->n += (size_t)k;
                s += k - 1;
            } else {
                memcpy(o->buf + o->n, "\xEF\xBF\xBD", 3);
                o->n += 3;
            }
        }
    }
    o->buf[o->n++] = '"';
}

/* Kineto times: microseconds with three decimals, relative to baseTimeNanoseconds. */
static void us(out_t *o, int64_t ns) { emit(o, "%" PRId64 ".%03d", ns / 1000, (int)(ns % 1000)); }

static int mkdirs(const char *dir)
{
    char p[1200];
    snprintf(p, sizeof p, "%s", dir);
    for (char *q = p + 1; *q; q++)
        if (*q == '/') {
            *q = 0;
            if (mkdir(p, 0777) && errno != EEXIST) return -1;
            *q = '/';
        }
    return mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
}

/* A trace's "Call stack": innermost first, "function (file:line)" per frame
 * (the file's base name: the snapshot has the full path), ';' between. */
static void call_stack(out_t *o, void *const *frames, int n)
{
    emit(o, ",\"Call stack\":\"");
    int first = 1;
    for (int i = 0; i < n; i++) {
        int k;
        const rec_sym *sym = tprof__symbolize(frames[i], &k);
        for (int j = 0; j < k; j++) {
            const char *slash = strrchr(sym[j].file, '/'), *base = slash ? slash + 1 : sym[j].file;
            char name[600];
            if (sym[j].line)
                snprintf(name, sizeof name, "%s (%s:%d)", sym[j].function, base, sym[j].line);
            else
                snprintf(name, sizeof name, "%s", sym[j].function);
            for (char *c = name; *c; c++)
                if (*c == '"' || *c == '\\' || *c == ';' || (unsigned char)*c < 0x20) *c = '_';
            emit(o, "%s%s", first ? "" : ";", name);
            first = 0;
        }
    }
    emit(o, "\"");
}

static const char *kind_cat(int k)
{
    switch (k) {
    case EV_OP:
    case EV_COMM: return "cpu_op";
    case EV_MODULE: return "python_function";
    default: return "user_annotation";
    }
}

static void write_event(out_t *o, const rec_thread *t, const rec_event *e, int pid, int64_t extid, int *first)
{
    int64_t ts = e->ts - g.base_mono;
    emit(o, "%s\n  {", *first ? "" : ",");
    *first = 0;
    switch (e->kind) {
    case EV_RANGE:
    case EV_OP:
    case EV_MODULE:
    case EV_COMM:
    case EV_STEP: {
        int64_t dur = atomic_load_explicit(&e->dur, memory_order_relaxed);
        int open = dur < 0;
        if (open) dur = g.window_end - e->ts;
        emit(o, "\"ph\":\"X\",\"cat\":\"%s\",\"name\":", kind_cat(e->kind));
        if (e->kind == EV_STEP) {
            emit(o, "\"ProfilerStep#%" PRId64 "\"", e->a);
        } else if (e->kind == EV_COMM) {
            emit(o, "\"record_param_comms\""); /* c10d's name, which the comm analysis looks for */
        } else if (e->kind == EV_MODULE) {
            char m[300];
            snprintf(m, sizeof m, "nn.Module: %s", e->name ? e->name : "");
            jstr(o, m);
        } else {
            jstr(o, e->name);
        }
        emit(o, ",\"pid\":%d,\"tid\":%ld,\"ts\":", pid, t->tid);
        us(o, ts);
        emit(o, ",\"dur\":");
        us(o, dur);
        emit(o, ",\"args\":{\"External id\":%" PRId64, extid);
        if (open) emit(o, ",\"trainprof truncated\":1");
        if (e->kind == EV_COMM) {
            const char *dtype = (const char *)(intptr_t)e->c;
            emit(o, ",\"Collective name\":");
            jstr(o, e->name ? e->name : "");
            emit(o, ",\"dtype\":");
            jstr(o, dtype ? dtype : "");
            emit(o, ",\"In msg nelems\":%" PRId64 ",\"Out msg nelems\":%" PRId64 ",\"Group size\":%" PRId64, e->a, e->a,
                 e->b);
            /* its process group and number in it, as c10d writes them (the default group "0" with its ranks) */
            pthread_mutex_lock(&g.comm_lock); /* a thread may be naming another group */
            const char *group = e->device >= 0 && e->device < g.ngroups ? g.groups[e->device] : "0";
            pthread_mutex_unlock(&g.comm_lock);
            emit(o, ",\"Process Group Name\":");
            jstr(o, group);
            if (!strcmp(group, "0") && g.world > 0) {
                emit(o, ",\"Process Group Ranks\":\"[");
                for (int r = 0; r < g.world; r++) emit(o, "%s%d", r ? ", " : "", r);
                emit(o, "]\"");
            }
            emit(o, ",\"Seq\":%" PRId64, e->d);
        }
        if (e->ninputs) {
            emit(o, ",\"Input Dims\":[");
            const int64_t *s = t->shapes + e->shape_off;
            for (int i = 0; i < e->ninputs; i++) {
                int64_t nd = *s++;
                emit(o, "%s[", i ? "," : "");
                for (int64_t j = 0; j < nd; j++) emit(o, "%s%" PRId64, j ? "," : "", *s++);
                emit(o, "]");
            }
            emit(o, "]");
        }
        if (e->nframes) call_stack(o, (void *const *)t->frames + e->frame_off, e->nframes);
        emit(o, "}}");
        break;
    }
    case EV_INSTANT:
        emit(o, "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":");
        jstr(o, e->name);
        emit(o, ",\"pid\":%d,\"tid\":%ld,\"ts\":", pid, t->tid);
        us(o, ts);
        emit(o, "}");
        break;
    case EV_COUNTER: {
        double v;
        memcpy(&v, &e->a, sizeof v);
        emit(o, "\"ph\":\"C\",\"cat\":\"counter\",\"name\":");
        jstr(o, e->name);
        emit(o, ",\"pid\":%d,\"tid\":%ld,\"ts\":", pid, t->tid);
        us(o, ts);
        emit(o, ",\"args\":{");
        jstr(o, e->name);
        emit(o, ":%.17g}}", v == v && v - v == 0 ? v : 0.0);
        break;
    }
    case EV_MEM:
        emit(o, "\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":%d,\"tid\":%ld,\"ts\":",
             pid, t->tid);
        us(o, ts);
        emit(o,
             ",\"args\":{\"Total Reserved\":%" PRId64 ",\"Total Allocated\":%" PRId64 ",\"Bytes\":%" PRId64
             ",\"Addr\":%" PRId64 ",\"Device Id\":%d,\"Device Type\":%d}}",
             e->d, e->c, e->b, e->a, (int)e->device, e->device < 0 ? 0 : 1);
        break;
    }
}

/* ---- GPU activity (TPROF_CUDA builds) -------------------------------------- */

/* The External id of the innermost range of thread TID holding [a, b]: the
 * range a runtime call (and so its kernels) ran under. 0 when none. */
static int64_t range_at(long tid, int64_t a, int64_t b)
{
    int64_t base = 0;
    for (rec_thread *t = g.threads; t; t = t->next) {
        size_t n = atomic_load_explicit(&t->n, memory_order_acquire);
        if (t->tid == tid) {
            size_t lo = 0, hi = n; /* events are in time order: the last one starting at or before A */
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (t->ev[mid].ts <= a)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (size_t i = lo, k = 0; i-- > 0 && k < 4096; k++) {
                const rec_event *e = &t->ev[i];
                if (e->kind > EV_STEP) continue;
                int64_t d = atomic_load_explicit(&e->dur, memory_order_relaxed);
                if (d < 0 || e->ts + d >= b) return base + (int64_t)i + 1;
            }
            return 0;
        }
        base += (int64_t)n;
    }
    return 0;
}

typedef struct {
    uint32_t corr;
    int64_t ext;
} corr_ext;

static int by_corr(const void *a, const void *b)
{
    const corr_ext *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static void write_gpu(out_t *o, int pid)
{
    size_t n;
    rec_gpu *ge = tprof__gpu_events(&n);
    if (!ge) return;
    corr_ext *map = malloc(n * sizeof *map);
    size_t nm = 0;
    uint32_t seen_dev = 0;
    for (size_t i = 0; i < n; i++) {
        const rec_gpu *e = &ge[i];
        if (e->start < g.window_start || e->start > g.window_end) continue;
        if (e->kind == 4) {
            int64_t ext = range_at((long)e->thread, e->start, e->end);
            if (map) map[nm++] = (corr_ext){ e->correlation, ext };
            emit(o, ",\n  {\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":");
            jstr(o, e->name);
            emit(o, ",\"pid\":%d,\"tid\":%u,\"ts\":", pid, e->thread);
            us(o, e->start - g.base_mono);
            emit(o, ",\"dur\":");
            us(o, e->end - e->start);
            emit(o, ",\"args\":{\"cbid\":%u,\"correlation\":%u,\"External id\":%" PRId64 "}}", e->cbid,
                 e->correlation, ext);
            emit(o, ",\n  {\"ph\":\"s\",\"id\":%u,\"pid\":%d,\"tid\":%u,\"ts\":", e->correlation, pid, e->thread);
            us(o, e->start - g.base_mono);
            emit(o, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
        }
    }
    if (map) qsort(map, nm, sizeof *map, by_corr);
    for (size_t i = 0; i < n; i++) {
        const rec_gpu *e = &ge[i];
        if (e->kind == 4) continue;
        corr_ext key = { e->correlation, 0 }, *hit = map ? bsearch(&key, map, nm, sizeof *map, by_corr) : NULL;
        /* work launched in the window is kept even where the GPU ran it after
         * the window's end (the last step's kernels, asynchronous) */
        if (!hit && (e->start < g.window_start || e->start > g.window_end)) continue;
        if (e->device < 32) seen_dev |= 1u << e->device;
        int64_t ext = hit ? hit->ext : 0;
        emit(o, ",\n  {\"ph\":\"X\",\"cat\":\"%s\",\"name\":",
             e->kind == 1 ? "kernel" : e->kind == 2 ? "gpu_memcpy" : "gpu_memset");
        if (e->kind == 1) {
            jstr(o, e->name);
        } else if (e->kind == 2) {
            emit(o, "\"Memcpy %s\"", tprof__gpu_memcpy_kind(e->copy_kind));
        } else {
            emit(o, "\"Memset (Device)\"");
        }
        emit(o, ",\"pid\":%u,\"tid\":%u,\"ts\":", e->device, e->stream);
        us(o, e->start - g.base_mono);
        emit(o, ",\"dur\":");
        us(o, e->end - e->start);
        emit(o, ",\"args\":{\"device\":%u,\"stream\":%u,\"correlation\":%u,\"External id\":%" PRId64, e->device,
             e->stream, e->correlation, ext);
        if (e->kind == 1)
            emit(o, ",\"registers per thread\":%u,\"shared memory\":%d,\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d]", e->regs,
                 e->smem, e->grid[0], e->grid[1], e->grid[2], e->block[0], e->block[1], e->block[2]);
        else
            emit(o, ",\"bytes\":%" PRId64 ",\"memory bandwidth (GB/s)\":%.3f", e->bytes,
                 e->end > e->start ? (double)e->bytes / (double)(e->end - e->start) : 0.0);
        emit(o, "}}");
        emit(o, ",\n  {\"ph\":\"f\",\"id\":%u,\"pid\":%u,\"tid\":%u,\"ts\":", e->correlation, e->device, e->stream);
        us(o, e->start - g.base_mono);
        emit(o, ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
    }
    for (uint32_t d = 0; d < 32; d++)
        if (seen_dev & (1u << d))
            emit(o, ",\n  {\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,\"args\":{\"name\":\"GPU %u\"}}", d, d);
    free(map);
    free(ge);
}

int tprof__check_trace_dir(const char *dir, char *errbuf, size_t errlen)
{
    char why[128];
    if (mkdirs(dir)) {
        snprintf(errbuf, errlen, "trace_dir %s: cannot create it: %s", dir, tprof_errno_text(errno, why, sizeof why));
        return TPROF_EWRITE;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(errbuf, errlen, "trace_dir %s: not a directory", dir);
        return TPROF_EWRITE;
    }
    /* a byte written and synced: a read-only, full or pseudo file system fails here, not at the window's end */
    char probe[1200];
    snprintf(probe, sizeof probe, "%s/.trainprof-probe.%ld.XXXXXX", dir, (long)getpid());
    int fd = mkstemp(probe);
    if (fd < 0) {
        snprintf(errbuf, errlen, "trace_dir %s: cannot create a file in it: %s", dir,
                 tprof_errno_text(errno, why, sizeof why));
        return TPROF_EWRITE;
    }
    int bad = write(fd, "p", 1) != 1 || fsync(fd) != 0;
    int err = errno;
    bad |= close(fd) != 0;
    unlink(probe);
    if (bad) {
        snprintf(errbuf, errlen, "trace_dir %s: cannot write a file in it: %s", dir,
                 tprof_errno_text(err ? err : errno, why, sizeof why));
        return TPROF_EWRITE;
    }
    return 0;
}

static int write_trace_files(char *errbuf, size_t errlen)
{
    g.window_end = tprof__now_ns();
    if (mkdirs(g.cfg.trace_dir)) {
        char why[128];
        snprintf(errbuf, errlen, "%s: cannot create the trace directory: %s", g.cfg.trace_dir,
                 tprof_errno_text(errno, why, sizeof why));
        return TPROF_EWRITE;
    }
    long now = (long)time(NULL);
    char stem[1150];
    snprintf(stem, sizeof stem, "%s/%s_rank%d_%ld", g.cfg.trace_dir, g.cfg.prefix, g.rank, now);
    snprintf(g.trace_path, sizeof g.trace_path, "%s.pt.trace.json.gz", stem);
    out_t *o = calloc(1, sizeof *o);
    if (!o) return TPROF_ENOMEM;
    int rc = tprof_sink_open(&o->s, g.trace_path, TPROF_COMP_GZIP, 0, errbuf, errlen);
    if (rc) {
        free(o);
        g.trace_path[0] = 0;
        return rc;
    }
    uint64_t dropped = g.lost;
    for (rec_thread *t = g.threads; t; t = t->next) dropped += atomic_load(&t->dropped);
    int pid = (int)getpid();
    tprof__gpu_flush(); /* the activity buffers CUPTI still holds (the trace is written once) */
    emit(o, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [");
    rec_gpu_device dev[16];
    size_t ndev = tprof__gpu_devices(dev, sizeof dev / sizeof dev[0]);
    for (size_t i = 0; i < ndev; i++) {
        emit(o, "%s\n    {\"id\": %u, \"name\": ", i ? "," : "", dev[i].id);
        jstr(o, dev[i].name);
        emit(o, ", \"totalGlobalMem\": %" PRIu64 ", \"computeMajor\": %u, \"computeMinor\": %u, \"numSms\": %u}",
             dev[i].mem, dev[i].cc_major, dev[i].cc_minor, dev[i].sms);
    }
    emit(o, "%s],\n", ndev ? "\n  " : "");
    emit(o, "  \"distributedInfo\": {\"backend\": \"%s\", \"rank\": %d, \"world_size\": %d},\n",
         g.world > 1 ? "mpi" : "none", g.rank, g.world);
    emit(o, "  \"record_shapes\": %d,\n  \"profile_memory\": %d,\n  \"with_stack\": %d,\n  \"with_modules\": %d,\n",
         g.cfg.record_shapes, g.cfg.profile_memory, g.cfg.with_stack, g.cfg.with_modules);
    emit(o, "  \"trainprof_dropped_events\": %" PRIu64 ",\n", dropped);
    emit(o, "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": %" PRId64 ",\n  \"traceEvents\": [", g.base_wall);
    int first = 1;
    int64_t extbase = 0;
    emit(o, "\n  {\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":", pid);
    jstr(o, program_invocation_short_name);
    emit(o, "}},\n  {\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%d,\"tid\":0,\"args\":{\"labels\":\"CPU\"}}", pid);
    emit(o, ",\n  {\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,\"args\":{\"sort_index\":%d}}", pid,
         pid);
    first = 0;
    for (rec_thread *t = g.threads; t; t = t->next) {
        emit(o, ",\n  {\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%ld,\"args\":{\"name\":", pid, t->tid);
        if (t->name[0]) {
            jstr(o, t->name);
        } else {
            emit(o, "\"thread %ld\"", t->tid);
        }
        emit(o, "}}");
        size_t n = atomic_load_explicit(&t->n, memory_order_acquire);
        for (size_t i = 0; i < n && !o->rc; i++) {
            const rec_event *e = &t->ev[i];
            if (e->ts < g.window_start || e->ts > g.window_end) continue; /* warm-up, or after the window */
            write_event(o, t, e, pid, extbase + (int64_t)i + 1, &first);
        }
        extbase += (int64_t)n;
    }
    write_gpu(o, pid);
    if (dropped) {
        emit(o, ",\n  {\"ph\":\"i\",\"s\":\"g\",\"cat\":\"trainprof\",\"name\":\"trainprof: events dropped\",\"pid\":%d,"
                "\"tid\":0,\"ts\":", pid);
        us(o, g.window_end - g.base_mono);
        emit(o, ",\"args\":{\"dropped\":%" PRIu64 ",\"max_events\":%" PRId64 "}}", dropped, g.cfg.max_events);
    }
    emit(o, "\n  ],\n  \"traceName\": ");
    jstr(o, g.trace_path);
    emit(o, "\n}\n");
    flush(o);
    rc = o->rc;
    if (rc) {
        snprintf(errbuf, errlen, "%s: %s", g.trace_path, tprof_sink_errmsg(o->s));
        tprof_sink_abort(o->s);
    } else {
        rc = tprof_sink_commit(o->s, errbuf, errlen);
    }
    free(o);
    if (rc) {
        g.trace_path[0] = 0;
        return rc;
    }
    tprof__log("profiling result saved at %s%s", g.trace_path, dropped ? " (events dropped: buffers full)" : "");
    if (dropped) tprof__log("%" PRIu64 " events dropped (max_events = %" PRId64 " per thread)", dropped, g.cfg.max_events);
    if (g.cfg.profile_memory) {
        char sp[1200];
        snprintf(sp, sizeof sp, "%s.pkl", stem);
        rc = tprof__write_snapshot(sp, errbuf, errlen);
        if (rc) return rc;
        snprintf(g.snap_path, sizeof g.snap_path, "%s", sp);
        tprof__log("profiling memory snapshot saved at %s", g.snap_path);
    }
    return 0;
}

int tprof__write_trace(char *errbuf, size_t errlen)
{
    int rc = write_trace_files(errbuf, errlen);
    tprof__symbols_release(); /* names are looked up again at the next write */
    return rc;
}

/* ---- the memory snapshot -------------------------------------------------- */

static void pk_key_int(pk_buf *b, const char *k, int64_t v)
{
    pk_str(b, k);
    pk_int(b, v);
}

static void pk_key_str(pk_buf *b, const char *k, const char *v)
{
    pk_str(b, k);
    pk_str(b, v);
}

/* Frames as PyTorch's snapshot holds them: {filename, line, name}, innermost
 * first. Its memory viewer shows a block with no frames as <non-python>. */
static void pk_frames(pk_buf *b, void *const *frames, int n)
{
    pk_list(b);
    if (!n) return;
    pk_mark(b);
    for (int i = 0; i < n; i++) {
        int k;
        const rec_sym *sym = tprof__symbolize(frames[i], &k);
        for (int j = 0; j < k; j++) {
            pk_dict(b);
            pk_mark(b);
            pk_key_str(b, "filename", sym[j].file);
            pk_key_int(b, "line", sym[j].line);
            pk_key_str(b, "name", sym[j].function);
            pk_setitems(b);
        }
    }
    pk_appends(b);
}

/* The frames of the history entry that allocated SLOT (none when that entry
 * was not kept: history full, or with_stack off). */
static void pk_slot_frames(pk_buf *b, const rec_mem_slot *slot)
{
    const rec_mem_entry *e = NULL;
    if (slot && slot->hist >= 0 && (size_t)slot->hist < g.hist_n) {
        e = &g.hist[slot->hist];
        if (e->addr != slot->addr || e->action == 1) e = NULL; /* a stale index from an earlier run */
    }
    pk_frames(b, e ? e->frames : NULL, e ? e->nframes : 0);
}

static int by_addr(const void *a, const void *b)
{
    const rec_mem_slot *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void pk_block(pk_buf *b, int64_t addr, int64_t size, const rec_mem_slot *active)
{
    pk_dict(b);
    pk_mark(b);
    pk_key_int(b, "address", addr);
    pk_key_int(b, "size", size);
    pk_key_int(b, "requested_size", active ? size : 0);
    pk_key_str(b, "state", active ? "active_allocated" : "inactive");
    pk_str(b, "frames");
    pk_slot_frames(b, active);
    pk_setitems(b);
}

/* SEG: the declared segment, or NULL for a block outside any (its own segment) */
static void pk_segment(pk_buf *b, const rec_mem_slot *seg, int dev, int64_t addr, int64_t size,
                       const rec_mem_slot *blk, size_t nblk)
{
    int64_t allocated = 0;
    for (size_t i = 0; i < nblk; i++) allocated += blk[i].size;
    pk_dict(b);
    pk_mark(b);
    pk_key_int(b, "device", dev);
    pk_key_int(b, "address", addr);
    pk_key_int(b, "total_size", size);
    pk_key_int(b, "allocated_size", allocated);
    pk_key_int(b, "active_size", allocated);
    pk_key_int(b, "requested_size", allocated);
    pk_key_int(b, "stream", 0);
    pk_key_str(b, "segment_type", size >= (1 << 20) ? "large" : "small");
    pk_str(b, "segment_pool_id");
    pk_int(b, 0);
    pk_int(b, 0);
    pk_tuple2(b);
    pk_str(b, "is_expandable");
    pk_bool(b, 0);
    pk_str(b, "frames");
    pk_slot_frames(b, seg ? seg : nblk ? blk : NULL);
    pk_str(b, "blocks");
    pk_list(b);
    pk_mark(b);
    int64_t at = addr;
    for (size_t i = 0; i < nblk; i++) {
        if (blk[i].addr > at) pk_block(b, at, blk[i].addr - at, NULL);
        pk_block(b, blk[i].addr, blk[i].size, &blk[i]);
        at = blk[i].addr + blk[i].size;
    }
    if (addr + size > at) pk_block(b, at, addr + size - at, NULL);
    pk_appends(b);
    pk_setitems(b);
}

static int snap_dev(int d) { return d < 0 ? 0 : d; }

int tprof__write_snapshot(const char *path, char *errbuf, size_t errlen)
{
    /* live blocks and segments, sorted by address */
    size_t nb = 0, ns = 0;
    for (size_t i = 0; i < g.nslots; i++)
        if (g.slots[i].used == 1) *(g.slots[i].segment ? &ns : &nb) += 1;
    rec_mem_slot *blk = malloc((nb + 1) * sizeof *blk), *seg = malloc((ns + 1) * sizeof *seg);
    if (!blk || !seg) {
        free(blk);
        free(seg);
        return TPROF_ENOMEM;
    }
    nb = ns = 0;
    for (size_t i = 0; i < g.nslots; i++)
        if (g.slots[i].used == 1) {
            if (g.slots[i].segment)
                seg[ns++] = g.slots[i];
            else
                blk[nb++] = g.slots[i];
        }
    qsort(blk, nb, sizeof *blk, by_addr);
    qsort(seg, ns, sizeof *seg, by_addr);
    int maxdev = 0;
    for (size_t i = 0; i < g.hist_n; i++)
        if (snap_dev(g.hist[i].device) > maxdev) maxdev = snap_dev(g.hist[i].device);

    pk_buf b = { 0 };
    pk_begin(&b);
    pk_dict(&b);
    pk_mark(&b);
    pk_str(&b, "segments");
    pk_list(&b);
    pk_mark(&b);
    size_t bi = 0;
    for (size_t s = 0; s < ns; s++) {
        /* blocks before this segment that no segment holds are segments of their own */
        while (bi < nb && blk[bi].addr < seg[s].addr) {
            pk_segment(&b, NULL, snap_dev(blk[bi].device), blk[bi].addr, blk[bi].size, &blk[bi], 1);
            bi++;
        }
        size_t from = bi;
        while (bi < nb && blk[bi].addr + blk[bi].size <= seg[s].addr + seg[s].size) bi++;
        pk_segment(&b, &seg[s], snap_dev(seg[s].device), seg[s].addr, seg[s].size, blk + from, bi - from);
    }
    for (; bi < nb; bi++) pk_segment(&b, NULL, snap_dev(blk[bi].device), blk[bi].addr, blk[bi].size, &blk[bi], 1);
    pk_appends(&b);
    pk_str(&b, "device_traces");
    pk_list(&b);
    pk_mark(&b);
    static const char *const actions[] = { "alloc", "free_completed", "segment_alloc" };
    for (int d = 0; d <= maxdev; d++) {
        pk_list(&b);
        pk_mark(&b);
        for (size_t i = 0; i < g.hist_n; i++) {
            const rec_mem_entry *e = &g.hist[i];
            if (snap_dev(e->device) != d) continue;
            pk_dict(&b);
            pk_mark(&b);
            pk_key_str(&b, "action", actions[e->action]);
            pk_key_int(&b, "addr", e->addr);
            pk_key_int(&b, "size", e->size);
            pk_key_int(&b, "stream", 0);
            pk_key_int(&b, "time_us", (e->time_ns - g.base_mono + g.base_wall) / 1000);
            pk_str(&b, "frames");
            pk_frames(&b, e->frames, e->nframes);
            pk_setitems(&b);
        }
        pk_appends(&b);
    }
    pk_appends(&b);
    pk_str(&b, "allocator_settings");
    pk_dict(&b);
    pk_key_int(&b, "trainprof_history_dropped", (int64_t)g.hist_dropped);
    pk_setitem(&b);
    pk_setitems(&b); /* the top-level dict */
    pk_end(&b);
    free(blk);
    free(seg);
    if (b.err) {
        pk_free(&b);
        return TPROF_ENOMEM;
    }
    tprof_sink *s;
    int rc = tprof_sink_open(&s, path, TPROF_COMP_NONE, 0, errbuf, errlen);
    if (!rc) {
        rc = tprof_sink_write(s, b.p, b.len);
        if (rc) {
            snprintf(errbuf, errlen, "%s: %s", path, tprof_sink_errmsg(s));
            tprof_sink_abort(s);
        } else {
            rc = tprof_sink_commit(s, errbuf, errlen);
        }
    }
    pk_free(&b);
    return rc;
}
