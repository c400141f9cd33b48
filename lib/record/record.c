/* The profiler: schedule, per-thread event buffers, memory hooks, the exit
 * and signal paths. */
#include <errno.h>
#include <execinfo.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "trainprof/error.h"

rec_state tprof__g = { .lock = PTHREAD_MUTEX_INITIALIZER, .rank = -1, .comm_lock = PTHREAD_MUTEX_INITIALIZER };
#define g tprof__g

_Static_assert(sizeof(rec_event) == 72, "docs/RECORDING.md and profiler.h state 72 bytes per event");

static _Thread_local rec_thread *tl;
static _Thread_local unsigned tl_gen;
static _Thread_local char tl_name[64];

int64_t tprof__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void log_stderr(const char *line) { fprintf(stderr, "trainprof: %s\n", line); }

static int log_set; /* set_log was called: NULL then means silent */

void tprof_profiler_set_log(void (*fn)(const char *line))
{
    g.log = fn;
    log_set = 1;
}

void tprof__log(const char *fmt, ...)
{
    if (!g.log) return;
    char line[1600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    g.log(line);
}

/* ---- schedule ------------------------------------------------------------- */

tprof_step_action tprof_schedule_action(const tprof_profile_config *c, int64_t s)
{
    if (s >= c->start_step && s < c->end_step) return s == c->end_step - 1 ? TPROF_STEP_RECORD_SAVE : TPROF_STEP_RECORD;
    if (c->start_step > 1 && s == c->start_step - 1) return TPROF_STEP_WARMUP;
    return TPROF_STEP_NONE;
}

/* ---- threads ---------------------------------------------------------------- */

static rec_thread *register_thread(void)
{
    pthread_mutex_lock(&g.lock);
    /* read under the lock: a start or stop between would tag this buffer with
     * the previous run's generation (or the next run with this one) */
    unsigned gen = atomic_load_explicit(&g.gen, memory_order_acquire);
    rec_thread *t = NULL;
    if (!g.started || !g.records) goto out;
    size_t cap = (size_t)g.cfg.max_events, evb, shb = 0, frb = 0;
    /* validation bounds max_events; checked anyway, since an overflow here
     * would make a short buffer that slot() then writes past */
    if (g.cfg.max_events < 16 || g.cfg.max_events > TPROF_MAX_EVENTS_LIMIT ||
        __builtin_mul_overflow(cap, sizeof(rec_event), &evb) ||
        __builtin_mul_overflow(cap, (size_t)4 * sizeof(int64_t), &shb) ||
        __builtin_mul_overflow(cap, (size_t)8 * sizeof(void *), &frb))
        goto out;
    t = calloc(1, sizeof *t);
    if (!t) goto out;
    t->ev = malloc(evb);
    t->cap = cap;
    if (g.cfg.record_shapes) {
        t->shape_cap = cap * 4;
        t->shapes = malloc(shb);
    }
    if (g.cfg.with_stack) {
        t->frame_cap = cap * 8;
        t->frames = malloc(frb);
    }
    if (!t->ev || (g.cfg.record_shapes && !t->shapes) || (g.cfg.with_stack && !t->frames)) {
        free(t->ev);
        free(t->shapes);
        free(t->frames);
        free(t);
        t = NULL;
        goto out;
    }
    if (!t->shapes) t->shape_cap = 0;
    if (!t->frames) t->frame_cap = 0;
    t->tid = (long)syscall(SYS_gettid);
    snprintf(t->name, sizeof t->name, "%s", tl_name[0] ? tl_name : "");
    /* appended, so the first registered thread (usually main) is listed first */
    rec_thread **pp = &g.threads;
    while (*pp) pp = &(*pp)->next;
    *pp = t;
    tl = t;
    tl_gen = gen;
out:
    if (!t) g.lost++;
    pthread_mutex_unlock(&g.lock);
    return t;
}

static inline rec_thread *cur(void)
{
    rec_thread *t = tl;
    if (__builtin_expect(t && tl_gen == atomic_load_explicit(&g.gen, memory_order_relaxed), 1)) return t;
    return register_thread();
}

void tprof_thread_name(const char *name)
{
    snprintf(tl_name, sizeof tl_name, "%s", name ? name : "");
    rec_thread *t = tl;
    if (t && tl_gen == atomic_load_explicit(&g.gen, memory_order_relaxed)) {
        pthread_mutex_lock(&g.lock);
        snprintf(t->name, sizeof t->name, "%s", tl_name);
        pthread_mutex_unlock(&g.lock);
    }
}

/* The next free slot of T, or NULL (counted as dropped). */
static inline rec_event *slot(rec_thread *t, size_t *idx)
{
    size_t n = atomic_load_explicit(&t->n, memory_order_relaxed);
    if (__builtin_expect(n >= t->cap, 0)) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return NULL;
    }
    *idx = n;
    return &t->ev[n];
}

static inline void publish(rec_thread *t, size_t idx) { atomic_store_explicit(&t->n, idx + 1, memory_order_release); }

/* A token: the generation's low 24 bits, then the event index + 1. */
static inline tprof_range token(size_t idx) { return ((uint64_t)(tl_gen & 0xffffff) << 40) | (uint64_t)(idx + 1); }

/* This thread's next event slot with what every event has, or NULL (not
 * recording, or the buffer is full: counted as dropped). */
static inline rec_event *claim(rec_thread **tp, size_t *i, int kind, const char *name, int64_t a, int64_t b,
                               int64_t c)
{
    rec_thread *t = *tp = cur();
    rec_event *e = t ? slot(t, i) : NULL;
    if (!e) return NULL;
    e->kind = (uint8_t)kind;
    e->name = name;
    e->ninputs = 0;
    e->nframes = 0;
    e->a = a;
    e->b = b;
    e->c = c;
    return e;
}

/* Frames backtrace() itself adds above its caller: 0, or 1 where a
 * sanitizer intercepts it (ASan). Measured at start; the recorder's own
 * frames are skipped by it, so that a stack starts at the program's caller. */
#define BACKTRACE_EXTRA_MAX 2
static int backtrace_extra;

__attribute__((noinline)) static int measure_backtrace_extra(void)
{
    void *buf[8];
    int n = backtrace(buf, 8); /* the first call also loads the unwinder (it allocates) */
    void *ret = __builtin_return_address(0);
    for (int i = 1; i < n; i++)
        if (buf[i] == ret) return i - 1 <= BACKTRACE_EXTRA_MAX ? i - 1 : 0; /* buf[i - 1]: this function */
    return 0;
}

__attribute__((noinline)) static tprof_range begin(int kind, const char *name, const int64_t *dims, const int *ndims, int ninputs,
                                                   int64_t a, int64_t b, int64_t c, int64_t d_field, int32_t device)
{
    rec_thread *t;
    size_t i;
    rec_event *e = claim(&t, &i, kind, name, a, b, c);
    if (!e) return 0;
    e->d = d_field;
    e->device = device;
    if (ninputs > 0 && t->shape_cap && g.cfg.record_shapes) {
        size_t need = (size_t)ninputs;
        for (int k = 0; k < ninputs; k++) need += ndims[k] > 0 ? (size_t)ndims[k] : 0;
        if (ninputs <= 0xffff && t->shape_n + need <= t->shape_cap) {
            int64_t *s = t->shapes + t->shape_n, *d = s;
            const int64_t *src = dims;
            for (int k = 0; k < ninputs; k++) {
                int nd = ndims[k] > 0 ? ndims[k] : 0;
                *d++ = nd;
                for (int j = 0; j < nd; j++) *d++ = *src++;
            }
            e->shape_off = (uint32_t)t->shape_n;
            e->ninputs = (uint16_t)ninputs;
            t->shape_n += need;
        }
    }
    if (t->frame_cap && t->frame_n + TPROF_MAX_FRAMES <= t->frame_cap) {
        /* the caller's frames: skip this function and the public entry point */
        void *buf[TPROF_MAX_FRAMES + 2 + BACKTRACE_EXTRA_MAX];
        int skip = 2 + backtrace_extra;
        int n = backtrace(buf, TPROF_MAX_FRAMES + skip);
        if (n > skip) {
            memcpy(t->frames + t->frame_n, buf + skip, (size_t)(n - skip) * sizeof(void *));
            e->frame_off = (uint32_t)t->frame_n;
            e->nframes = (uint8_t)(n - skip);
            t->frame_n += (size_t)(n - skip);
        }
    }
    atomic_store_explicit(&e->dur, -1, memory_order_relaxed);
    e->ts = tprof__now_ns();
    publish(t, i);
    return token(i);
}

/* The public entry points must stay a frame of their own (no tail call), so
 * that with_stack can skip exactly begin() and the entry point. */
#define NO_TAIL(r) __asm__ volatile("" : "+r"(r) : : "memory")

tprof_range tprof_range_begin(const char *name)
{
    if (!atomic_load_explicit(&g.on, memory_order_acquire)) return 0;
    tprof_range r = begin(EV_RANGE, name, NULL, NULL, 0, 0, 0, 0, 0, -1);
    NO_TAIL(r);
    return r;
}

tprof_range tprof_op_begin(const char *name, const int64_t *dims, const int *ndims, int ninputs)
{
    if (!atomic_load_explicit(&g.on, memory_order_acquire)) return 0;
    tprof_range r = begin(EV_OP, name, dims, ndims, ninputs, 0, 0, 0, 0, -1);
    NO_TAIL(r);
    return r;
}

tprof_range tprof_module_begin(const char *name)
{
    if (!atomic_load_explicit(&g.on, memory_order_acquire) || !g.cfg.with_modules) return 0;
    tprof_range r = begin(EV_MODULE, name, NULL, NULL, 0, 0, 0, 0, 0, -1);
    NO_TAIL(r);
    return r;
}

/* The next number of a call in process group NAME (not copied), and the
 * group's index. */
static int64_t group_seq(const char *name, int *index)
{
    pthread_mutex_lock(&g.comm_lock);
    int k = 0;
    while (k < g.ngroups && strcmp(g.groups[k], name)) k++;
    if (k == g.ngroups) {
        if (k == TPROF_REC_GROUPS) k--;
        else {
            g.groups[k] = name;
            g.group_seq[k] = 0;
            g.ngroups++;
        }
    }
    int64_t seq = g.group_seq[k]++;
    pthread_mutex_unlock(&g.comm_lock);
    *index = k;
    return seq;
}

/* Inlined into each entry point, so that begin() skips the same frames. */
__attribute__((always_inline)) static inline tprof_range comm_begin(const char *collective, const char *dtype,
                                                                    int64_t nelems, int group_size, const char *group)
{
    int k;
    int64_t seq = group_seq(group ? group : "0", &k);
    return begin(EV_COMM, collective, NULL, NULL, 0, nelems, group_size, (int64_t)(intptr_t)dtype, seq, k);
}

tprof_range tprof_comm_begin(const char *collective, const char *dtype, int64_t nelems, int group_size)
{
    if (!atomic_load_explicit(&g.on, memory_order_acquire)) return 0;
    tprof_range r = comm_begin(collective, dtype, nelems, group_size, NULL);
    NO_TAIL(r);
    return r;
}

tprof_range tprof_comm_begin_group(const char *collective, const char *dtype, int64_t nelems, int group_size,
                                   const char *group)
{
    if (!atomic_load_explicit(&g.on, memory_order_acquire)) return 0;
    tprof_range r = comm_begin(collective, dtype, nelems, group_size, group);
    NO_TAIL(r);
    return r;
}

void tprof_range_end(tprof_range r)
{
    if (!r) return;
    int64_t now = tprof__now_ns();
    rec_thread *t = tl;
    if (!t || tl_gen != atomic_load_explicit(&g.gen, memory_order_relaxed) || (r >> 40) != (tl_gen & 0xffffff))
        return;
    size_t i = (size_t)(r & 0xffffffffffULL) - 1;
    if (i >= atomic_load_explicit(&t->n, memory_order_relaxed)) return;
    rec_event *e = &t->ev[i];
    if (atomic_load_explicit(&e->dur, memory_order_relaxed) < 0)
        atomic_store_explicit(&e->dur, now - e->ts, memory_order_relaxed);
}

void tprof__range_cleanup(tprof_range *r) { tprof_range_end(*r); }

static void point(int kind, const char *name, int64_t a, int64_t b, int64_t c, int64_t d, int32_t dev)
{
    rec_thread *t;
    size_t i;
    rec_event *e = claim(&t, &i, kind, name, a, b, c);
    if (!e) return;
    e->d = d;
    e->device = dev;
    atomic_store_explicit(&e->dur, 0, memory_order_relaxed);
    e->ts = tprof__now_ns();
    publish(t, i);
}

void tprof_instant(const char *name)
{
    if (!atomic_load_explicit(&g.on, memory_order_acquire)) return;
    point(EV_INSTANT, name, 0, 0, 0, 0, 0);
}

void tprof_counter(const char *name, double value)
{
    if (!atomic_load_explicit(&g.on, memory_order_acquire)) return;
    int64_t bits;
    memcpy(&bits, &value, sizeof bits);
    point(EV_COUNTER, name, bits, 0, 0, 0, 0);
}

/* ---- memory --------------------------------------------------------------- */

static size_t hash_ptr(int64_t p, size_t n) { return (size_t)(((uint64_t)p * 0x9E3779B97F4A7C15ULL) >> 17) & (n - 1); }

static rec_mem_slot *mem_find(int64_t addr)
{
    if (!g.nslots) return NULL;
    for (size_t i = hash_ptr(addr, g.nslots), k = 0; k < g.nslots; i = (i + 1) & (g.nslots - 1), k++) {
        if (g.slots[i].used == 0) return NULL;
        if (g.slots[i].used == 1 && g.slots[i].addr == addr && !g.slots[i].segment) return &g.slots[i];
    }
    return NULL;
}

static rec_mem_slot *mem_insert(int64_t addr, int64_t size, int32_t dev, int segment)
{
    if ((g.used_slots + 1) * 2 > g.nslots) { /* grow (rehash also drops tombstones) */
        size_t n = g.nslots ? g.nslots * 2 : 4096;
        rec_mem_slot *s = calloc(n, sizeof *s), *old = g.slots;
        if (!s) return NULL;
        size_t on = g.nslots, used = 0;
        g.slots = s;
        g.nslots = n;
        for (size_t i = 0; i < on; i++)
            if (old[i].used == 1) {
                size_t j = hash_ptr(old[i].addr, n);
                while (s[j].used) j = (j + 1) & (n - 1);
                s[j] = old[i];
                used++;
            }
        g.used_slots = used;
        free(old);
    }
    size_t j = hash_ptr(addr, g.nslots);
    while (g.slots[j].used == 1) j = (j + 1) & (g.nslots - 1);
    g.slots[j] = (rec_mem_slot){ .addr = addr, .size = size, .hist = -1, .device = dev, .segment = (uint8_t)segment,
                                 .used = 1 };
    g.used_slots++;
    return &g.slots[j];
}

/* The history entry's index, -1 when none was kept. */
__attribute__((noinline)) static int64_t mem_history(int action, int64_t addr, int64_t size, int32_t dev)
{
    if (!g.cfg.profile_memory) return -1;
    if (g.hist_n == g.hist_cap) {
        size_t max = (size_t)g.cfg.max_events;
        if (g.hist_cap >= max) {
            g.hist_dropped++;
            return -1;
        }
        size_t c = g.hist_cap ? g.hist_cap * 2 : 1024;
        if (c > max) c = max;
        rec_mem_entry *h = realloc(g.hist, c * sizeof *h);
        if (!h) {
            g.hist_dropped++;
            return -1;
        }
        g.hist = h;
        g.hist_cap = c;
    }
    rec_mem_entry *e = &g.hist[g.hist_n++];
    e->time_ns = tprof__now_ns();
    e->addr = addr;
    e->size = size;
    e->device = dev;
    e->action = (uint8_t)action;
    e->nframes = 0;
    if (g.cfg.with_stack) {
        /* skip this function and the public entry point */
        void *buf[8 + 2 + BACKTRACE_EXTRA_MAX];
        int skip = 2 + backtrace_extra;
        int n = backtrace(buf, 8 + skip);
        if (n > skip) {
            memcpy(e->frames, buf + skip, (size_t)(n - skip) * sizeof(void *));
            e->nframes = (uint8_t)(n - skip);
        }
    }
    return (int64_t)(e - g.hist);
}

static int dev_index(int d) { return d < -1 ? 0 : d > 15 ? 16 : d + 1; }

/* Reserved memory: declared segments, or what is allocated outside them. */
static int64_t reserved(int d)
{
    int64_t r = g.total_reserved[d];
    return r > 0 ? r : g.total_alloc[d];
}

void tprof_mem_segment(void *ptr, size_t size, int device)
{
    if (!g.records || !ptr) return;
    pthread_mutex_lock(&g.lock);
    rec_mem_slot *s = g.started ? mem_insert((int64_t)(intptr_t)ptr, (int64_t)size, device, 1) : NULL;
    if (s) {
        g.total_reserved[dev_index(device)] += (int64_t)size;
        s->hist = mem_history(2, (int64_t)(intptr_t)ptr, (int64_t)size, device);
    }
    pthread_mutex_unlock(&g.lock);
}

void tprof_mem_alloc(void *ptr, size_t size, int device)
{
    if (!g.records || !ptr) return;
    int64_t tot, res;
    pthread_mutex_lock(&g.lock);
    rec_mem_slot *s = g.started ? mem_insert((int64_t)(intptr_t)ptr, (int64_t)size, device, 0) : NULL;
    if (!s) {
        pthread_mutex_unlock(&g.lock);
        return;
    }
    int d = dev_index(device);
    tot = g.total_alloc[d] += (int64_t)size;
    res = reserved(d);
    s->hist = mem_history(0, (int64_t)(intptr_t)ptr, (int64_t)size, device); /* the block's frames in the snapshot */
    pthread_mutex_unlock(&g.lock);
    if (g.cfg.profile_memory && atomic_load_explicit(&g.on, memory_order_acquire))
        point(EV_MEM, "[memory]", (int64_t)(intptr_t)ptr, (int64_t)size, tot, res, device);
}

void tprof_mem_free(void *ptr)
{
    if (!g.records || !ptr) return;
    pthread_mutex_lock(&g.lock);
    rec_mem_slot *s = g.started ? mem_find((int64_t)(intptr_t)ptr) : NULL;
    if (!s) {
        pthread_mutex_unlock(&g.lock);
        return;
    }
    int64_t size = s->size;
    int32_t device = s->device;
    s->used = 2; /* a tombstone: still counted in used_slots until the next growth rehashes */
    int d = dev_index(device);
    int64_t tot = g.total_alloc[d] -= size, res = reserved(d);
    mem_history(1, (int64_t)(intptr_t)ptr, size, device);
    pthread_mutex_unlock(&g.lock);
    if (g.cfg.profile_memory && atomic_load_explicit(&g.on, memory_order_acquire))
        point(EV_MEM, "[memory]", (int64_t)(intptr_t)ptr, -size, tot, res, device);
}

/* ---- signals -------------------------------------------------------------- */

static sem_t sig_sem;
static volatile sig_atomic_t sig_no, sig_quit;
static pthread_t sig_thread;
static int sig_installed;
static struct sigaction old_int, old_term;

/* Async-signal-safe: only a flag and sem_post. The watcher thread writes. */
static void on_signal(int s)
{
    sig_no = s;
    sem_post(&sig_sem);
}

/* Puts OLD back on SIG only while our handler is still there: one the
 * program installed after tprof_profiler_start stays. Returns 1 if ours was. */
static int restore_if_ours(int sig, const struct sigaction *old)
{
    struct sigaction now;
    if (sigaction(sig, NULL, &now) || (now.sa_flags & SA_SIGINFO) || now.sa_handler != on_signal) return 0;
    sigaction(sig, old, NULL);
    return 1;
}

/* Writes the window once (under g.lock); a failure is logged and kept for
 * tprof_profiler_stop. WHEN says what triggered it ("" at a step's end). */
static int write_window(const char *when)
{
    char eb[512];
    atomic_store(&g.on, 0);
    int rc = tprof__write_trace(eb, sizeof eb);
    g.written = 1;
    if (rc) {
        tprof__log("%s%s", when, eb);
        if (!g.write_rc) g.write_rc = rc;
    }
    return rc;
}

static void *sig_watch(void *arg)
{
    (void)arg;
    for (;;) {
        while (sem_wait(&sig_sem) != 0 && errno == EINTR) {
        }
        if (sig_quit) return NULL;
        int s = sig_no;
        if (!s) continue;
        char when[32];
        snprintf(when, sizeof when, "on signal %d: ", s);
        pthread_mutex_lock(&g.lock);
        if (g.started && g.records && !g.written && g.window_started) write_window(when);
        pthread_mutex_unlock(&g.lock);
        /* the default action now: the process ends as the signal meant; where
         * the program has put its own handler since, the signal goes to it */
        int ours = restore_if_ours(s, s == SIGINT ? &old_int : &old_term);
        restore_if_ours(s == SIGINT ? SIGTERM : SIGINT, s == SIGINT ? &old_term : &old_int);
        if (ours) signal(s, SIG_DFL);
        kill(getpid(), s);
        return NULL;
    }
}

static void signals_install(void)
{
    struct sigaction cur_int, cur_term;
    sigaction(SIGINT, NULL, &cur_int);
    sigaction(SIGTERM, NULL, &cur_term);
    /* only where the program kept the default: its own handlers stay its own */
    int do_int = cur_int.sa_handler == SIG_DFL, do_term = cur_term.sa_handler == SIG_DFL;
    if (!do_int && !do_term) return;
    if (sem_init(&sig_sem, 0, 0)) return;
    sig_no = 0;
    sig_quit = 0;
    if (pthread_create(&sig_thread, NULL, sig_watch, NULL)) {
        sem_destroy(&sig_sem);
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    old_int = cur_int;
    old_term = cur_term;
    if (do_int) sigaction(SIGINT, &sa, NULL);
    if (do_term) sigaction(SIGTERM, &sa, NULL);
    sig_installed = 1;
}

static void signals_remove(void)
{
    if (!sig_installed) return;
    restore_if_ours(SIGINT, &old_int);
    restore_if_ours(SIGTERM, &old_term);
    sig_quit = 1;
    sem_post(&sig_sem);
    pthread_join(sig_thread, NULL);
    sem_destroy(&sig_sem);
    sig_installed = 0;
}

/* ---- start, steps, stop ------------------------------------------------------ */

void tprof_profiler_set_rank(int rank, int world_size)
{
    g.rank = rank;
    g.world = world_size;
    g.rank_set = 1;
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < 0 || x > 1 << 30 ? dflt : (int)x;
}

static void at_exit(void)
{
    /* other threads may still run: write, but free nothing */
    pthread_mutex_lock(&g.lock);
    if (g.started && g.records && !g.written && g.window_started) write_window("at exit: ");
    pthread_mutex_unlock(&g.lock);
    signals_remove();
}

int tprof_profiler_start(const tprof_profile_config *c, char *errbuf, size_t errlen)
{
    static int atexit_done;
    int rc = tprof_config_validate(c, errbuf, errlen);
    if (rc) return rc;
    if (g.started) {
        if (errbuf && errlen) snprintf(errbuf, errlen, "the profiler is already started");
        return TPROF_EUSAGE;
    }
    if (c->enable && c->with_stack) backtrace_extra = measure_backtrace_extra();
    pthread_mutex_lock(&g.lock);
    if (!g.rank_set) {
        g.rank = env_int("RANK", 0);
        g.world = env_int("WORLD_SIZE", 1);
    }
    if (g.world < 1) g.world = 1;
    if (!log_set) g.log = getenv("TPROF_QUIET") ? NULL : log_stderr;
    g.cfg = *c;
    g.records = c->enable && (!c->rank0_only || g.rank == 0);
    if (g.records) {
        /* fail now, not when the window ends hours later */
        rc = tprof__check_trace_dir(c->trace_dir, errbuf, errlen);
        if (rc) {
            g.records = 0;
            pthread_mutex_unlock(&g.lock);
            return rc;
        }
    }
    g.written = g.window_started = 0;
    pthread_mutex_lock(&g.comm_lock);
    g.ngroups = 0; /* each run numbers its collectives from 0 */
    pthread_mutex_unlock(&g.comm_lock);
    g.write_rc = 0;
    g.threads = NULL;
    g.lost = 0;
    g.trace_path[0] = g.snap_path[0] = 0;
    g.step_tok = 0;
    g.step_thr = NULL;
    g.step_open = -1;
    memset(g.total_alloc, 0, sizeof g.total_alloc);
    memset(g.total_reserved, 0, sizeof g.total_reserved);
    g.hist_n = 0;
    g.hist_dropped = 0;
    struct timespec w, m;
    clock_gettime(CLOCK_REALTIME, &w);
    clock_gettime(CLOCK_MONOTONIC, &m);
    g.base_wall = (int64_t)w.tv_sec * 1000000000 + w.tv_nsec;
    g.base_mono = (int64_t)m.tv_sec * 1000000000 + m.tv_nsec;
    atomic_fetch_add(&g.gen, 1);
    g.started = 1;
    pthread_mutex_unlock(&g.lock);
    if (g.records) {
        if (!c->rank0_only && g.rank == 0)
            tprof__log("profiling on ALL ranks is enabled: this saves a file per rank, which takes time and space");
        tprof__log("profiler schedule: steps [%d, %d) recorded%s, trace written at the end of step %d", c->start_step,
                   c->end_step, c->start_step > 1 ? ", one warm-up step before" : "", c->end_step - 1);
#ifdef TPROF_HAVE_CUPTI
        if (tprof__gpu_start() == 0)
            tprof__log("CUDA activity (kernels, memcpys, runtime calls) recorded through CUPTI");
        else
            tprof__log("no GPU or CUDA driver: CPU events only");
#endif
        signals_install();
        if (!atexit_done) {
            atexit(at_exit);
            atexit_done = 1;
        }
    }
    return 0;
}

bool tprof_profiler_active(void) { return g.started && g.records; }

/* The step calls take the lock (once per step, not the hot path): the signal
 * watcher reads the window and sets `written` under it. */
int tprof_step_begin(int64_t s)
{
    if (!g.started || !g.records) return 0;
    tprof_step_action a = tprof_schedule_action(&g.cfg, s);
    if (a == TPROF_STEP_NONE) return 0;
    pthread_mutex_lock(&g.lock);
    int written = g.written;
    if (!written && a != TPROF_STEP_WARMUP && !g.window_started) {
        /* what the warm-up recorded is before this and is not written */
        g.window_start = tprof__now_ns();
        g.window_started = 1;
    }
    pthread_mutex_unlock(&g.lock);
    if (written) return 0;
    atomic_store_explicit(&g.on, 1, memory_order_release);
    if (a != TPROF_STEP_WARMUP) {
        tprof_range tok = begin(EV_STEP, NULL, NULL, NULL, 0, s - 1, 0, 0, 0, -1); /* may register this thread: outside the lock */
        /* the buffer the span is in, so that step_end can close it from any thread */
        pthread_mutex_lock(&g.lock);
        g.step_tok = tok;
        g.step_thr = tok ? tl : NULL;
        g.step_open = s;
        pthread_mutex_unlock(&g.lock);
    }
    return 0;
}

int tprof_step_end(int64_t s)
{
    if (!g.started || !g.records) return 0;
    int64_t now = tprof__now_ns();
    pthread_mutex_lock(&g.lock);
    if (g.step_open == s) {
        /* closed in the buffer of the thread that began it (not the caller's),
         * if it is still this run's: thread buffers are never freed */
        rec_thread *t = g.step_thr;
        tprof_range r = g.step_tok;
        unsigned gen = atomic_load_explicit(&g.gen, memory_order_relaxed);
        if (t && r && (r >> 40) == (gen & 0xffffff)) {
            size_t i = (size_t)(r & 0xffffffffffULL) - 1;
            if (i < atomic_load_explicit(&t->n, memory_order_acquire)) {
                rec_event *e = &t->ev[i];
                if (atomic_load_explicit(&e->dur, memory_order_relaxed) < 0)
                    atomic_store_explicit(&e->dur, now - e->ts, memory_order_relaxed);
            }
        }
        g.step_tok = 0;
        g.step_thr = NULL;
        g.step_open = -1;
    }
    pthread_mutex_unlock(&g.lock);
    if (tprof_schedule_action(&g.cfg, s) != TPROF_STEP_RECORD_SAVE) return 0;
    int rc = 0;
    pthread_mutex_lock(&g.lock);
    if (!g.written && g.window_started) rc = write_window("");
    pthread_mutex_unlock(&g.lock);
    return rc;
}

int tprof_profiler_stop(void)
{
    if (!g.started) return 0;
    signals_remove();
    atomic_store(&g.on, 0);
    pthread_mutex_lock(&g.lock);
    if (g.records && !g.written && g.window_started) write_window("");
    int rc = g.write_rc; /* this write's or an earlier one's */
    tprof__gpu_stop();
    /* stale thread pointers re-register from here on, and find it stopped */
    atomic_fetch_add(&g.gen, 1);
    /* Another thread may have passed its generation check and still be inside
     * begin(), point() or tprof_range_end with its buffer: nothing tells when
     * it leaves, so the buffers are retired (reachable, kept until the process
     * exits), never freed. Only the pages that were written cost memory. */
    if (g.threads) {
        rec_thread *last = g.threads;
        while (last->next) last = last->next;
        last->next = g.retired;
        g.retired = g.threads;
    }
    g.threads = NULL;
    free(g.slots);
    g.slots = NULL;
    g.nslots = g.used_slots = 0;
    free(g.hist);
    g.hist = NULL;
    g.hist_n = g.hist_cap = 0;
    g.started = 0;
    g.records = 0;
    pthread_mutex_unlock(&g.lock);
    return rc;
}

const char *tprof_profiler_trace_path(void) { return g.trace_path; }
const char *tprof_profiler_snapshot_path(void) { return g.snap_path; }

uint64_t tprof_profiler_dropped(void)
{
    uint64_t d = 0;
    pthread_mutex_lock(&g.lock);
    for (rec_thread *t = g.threads; t; t = t->next) d += atomic_load(&t->dropped);
    d += g.lost;
    pthread_mutex_unlock(&g.lock);
    return d;
}
