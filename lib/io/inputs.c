/* Arguments into input files: a directory stands for the files below it
 * that are of a kind the command reads, recognised by their first bytes
 * (include/trainprof/source.h). */
#include "trainprof/source.h"
#include "trainprof/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Compressed bytes read of each file: enough for TPROF_SOURCE_HEAD bytes of
 * JSON once decompressed (traces compress 5-20 times), little enough that a
 * directory of large traces costs a few reads. */
#define RAW_HEAD (16u << 10)
/* Decompressed bytes looked at when the head is the start of an object
 * that none of its keys so far place: a trace may open with a large
 * "metadata" object before "traceEvents" (TraceLens' traces: 26 KB). */
#define DEEP_HEAD (256u << 10)

/* ---- a set of (device, inode): each directory and file once ---- */

typedef struct {
    dev_t dev;
    ino_t ino;
    int used;
} file_id;

typedef struct {
    file_id *slot;
    size_t cap, n;
} id_set;

static size_t id_hash(dev_t dev, ino_t ino)
{
    uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)dev * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ h >> 29);
}

/* 1 when (DEV, INO) was new (and is now in), 0 when it was there, -1 out of memory. */
static int id_add(id_set *s, dev_t dev, ino_t ino)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        file_id *slot = calloc(cap, sizeof *slot);
        if (!slot) return -1;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->slot[i].used) continue;
            size_t k = id_hash(s->slot[i].dev, s->slot[i].ino) & (cap - 1);
            while (slot[k].used) k = (k + 1) & (cap - 1);
            slot[k] = s->slot[i];
        }
        free(s->slot);
        s->slot = slot;
        s->cap = cap;
    }
    size_t k = id_hash(dev, ino) & (s->cap - 1);
    for (; s->slot[k].used; k = (k + 1) & (s->cap - 1))
        if (s->slot[k].dev == dev && s->slot[k].ino == ino) return 0;
    s->slot[k] = (file_id){ dev, ino, 1 };
    s->n++;
    return 1;
}

/* ---- what a file is ---- */

/* An object not placed by the keys in its head: it is looked at further. */
static int undecided_object(const uint8_t *p, size_t n)
{
    size_t i = n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF ? 3 : 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
    return i < n && p[i] == '{';
}

/* The kind from the first DEEP_HEAD bytes, read through a source (the
 * rare case: its input buffer is up to 1 MiB). */
static int sniff_deeper(const char *path, int kind)
{
    tprof_source *src;
    uint8_t *buf = malloc(DEEP_HEAD);
    if (!buf || tprof_source_open(&src, path, NULL, 0)) {
        free(buf);
        return kind;
    }
    size_t h = 0;
    ssize_t r;
    while (h < DEEP_HEAD && (r = tprof_source_read(src, buf + h, DEEP_HEAD - h)) > 0) h += (size_t)r;
    kind = h || tprof_source_compression(src) == TPROF_COMP_NONE ? (int)tprof_input_sniff(buf, h) : -1;
    tprof_source_close(src);
    free(buf);
    return kind;
}

/* The kind of the regular file PATH from its first bytes, decompressed when
 * they are gzip or zstd (the sources' own decoders over the raw head: a
 * stream cut there still delivers what it holds). -1: unreadable. */
static int sniff_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    uint8_t *raw = malloc(RAW_HEAD);
    if (!raw) {
        close(fd);
        return -1;
    }
    size_t n = 0;
    while (n < RAW_HEAD) {
        ssize_t r = read(fd, raw + n, RAW_HEAD - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    int kind = -1;
    tprof_source *src;
    if (tprof_source_open_mem(&src, raw, n, path) == 0) {
        uint8_t head[TPROF_SOURCE_HEAD];
        size_t h = 0;
        ssize_t r;
        while (h < sizeof head && (r = tprof_source_read(src, head + h, sizeof head - h)) > 0) h += (size_t)r;
        int compressed = tprof_source_compression(src) != TPROF_COMP_NONE;
        if (h || !compressed) kind = (int)tprof_input_sniff(head, h);
        tprof_source_close(src);
        if (kind == TPROF_INPUT_UNKNOWN && h == sizeof head && undecided_object(head, h)) kind = sniff_deeper(path, kind);
        /* nothing from the compressed head: damaged, or a zstd window that
         * only the whole file's size allows (--long=31); the file's own
         * source decides, with the reader's limits */
        else if (compressed && !h) kind = sniff_deeper(path, -1);
    }
    free(raw);
    return kind;
}

int tprof_input_sniff_path(const char *path) { return sniff_file(path); }

/* NAME.tmp.HOST.PID.XXXXXX: an output of trainprof being written (lib/io/sink.c). */
static int is_temporary(const char *name) { return strstr(name, ".tmp.") != NULL; }

/* ---- the walk ---- */

typedef struct {
    unsigned accepts;
    tprof_inputs *out;
    size_t cap;
    id_set dirs, files;
} walk;

static int push(walk *w, const char *path)
{
    tprof_inputs *o = w->out;
    if (o->npaths == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        char **v = realloc(o->paths, cap * sizeof *v);
        if (!v) return TPROF_ENOMEM;
        o->paths = v;
        w->cap = cap;
    }
    if (!(o->paths[o->npaths] = strdup(path))) return TPROF_ENOMEM;
    o->npaths++;
    return 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names in DIR (not '.'-prefixed), sorted; NULL with *N = 0 when
 * empty. Returns 0, TPROF_EIO (cannot be listed) or TPROF_ENOMEM. */
static int list_dir(const char *dir, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return TPROF_EIO;
    size_t cap = 0;
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 32;
            char **v = realloc(*names, cap * sizeof *v);
            if (!v) {
                rc = TPROF_ENOMEM;
                break;
            }
            *names = v;
        }
        if (!((*names)[*n] = strdup(e->d_name))) rc = TPROF_ENOMEM;
        else (*n)++;
    }
    closedir(d);
    if (*n) qsort(*names, *n, sizeof **names, cmp_name);
    return rc;
}

/* DIR/NAME (malloc'd; NULL when out of memory). */
static char *child_path(const char *dir, const char *name)
{
    size_t dl = strlen(dir), len = dl + strlen(name) + 2;
    char *path = malloc(len);
    if (path) snprintf(path, len, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", name);
    return path;
}

/* An Ascend communication summary or step table the reader takes from
 * beside the trace or table in its directory, or the matrix and the step
 * table from beside communication.json (BESIDE_COMM: read as an input;
 * lib/trace/ascend_comm.c: tprof_ascend_sidecars), or operator_memory.csv
 * from beside memory_record.csv: not an input of its own. */
static int is_sidecar(const char *name, int beside_trace, int beside_comm, int beside_memory)
{
    if (!strcmp(name, "operator_memory.csv")) return beside_memory; /* read with memory_record.csv (lib/mem/ascend.c) */
    if (!strcmp(name, "step_trace_time.csv")) return beside_trace || beside_comm; /* with whichever is read */
    int comm = !strcmp(name, "communication.json"), matrix = !strcmp(name, "communication_matrix.json");
    return (beside_trace && (comm || matrix || !strcmp(name, "analysis.db"))) || (beside_comm && matrix);
}

/* The names Ascend's databases have: ascend_pytorch_profiler[_N].db,
 * msprof_*.db, analysis.db (compressed too). */
static int ascend_db_name(const char *name)
{
    return !strncmp(name, "ascend_pytorch_profiler", 23) || !strncmp(name, "msprof_", 7) ||
           !strncmp(name, "analysis.db", 11);
}

static int walk_dir(walk *w, tprof_input_dir *d, const char *dir)
{
    char **names;
    size_t n;
    int rc = list_dir(dir, &names, &n);
    if (rc == TPROF_EIO) {
        d->unreadable++;
        return 0;
    }
    /* the kinds of the regular files first: an Ascend profiler's output
     * directory holds its timeline (trace_view.json), its kernel table
     * (kernel_details.csv) and in newer versions its database
     * (ascend_pytorch_profiler_N.db) of the same tasks: the timeline is the
     * one read, else the database */
    int *kinds = malloc((n ? n : 1) * sizeof *kinds), has_trace = 0, has_table = 0, has_comm = 0, has_db = 0,
        has_memory = 0;
    if (!kinds) rc = TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        char *path = child_path(dir, names[i]);
        if (!path) {
            rc = TPROF_ENOMEM;
            break;
        }
        struct stat st;
        kinds[i] = stat(path, &st) == 0 && S_ISREG(st.st_mode) && !is_temporary(names[i]) ? sniff_file(path) : -1;
        has_trace |= kinds[i] == TPROF_INPUT_TRACE;
        has_table |= kinds[i] == TPROF_INPUT_ASCEND_KERNELS;
        /* an SQLite file is one of Ascend's by its name (a run directory may hold another
         * program's database); analysis.db goes with the profiler database or trace beside it */
        if (kinds[i] == TPROF_INPUT_ASCEND_DB && !ascend_db_name(names[i])) kinds[i] = TPROF_INPUT_UNKNOWN;
        has_db |= kinds[i] == TPROF_INPUT_ASCEND_DB && strcmp(names[i], "analysis.db") != 0;
        has_memory |= kinds[i] == TPROF_INPUT_ASCEND_MEMORY && !strcmp(names[i], "memory_record.csv");
        has_comm |= kinds[i] == TPROF_INPUT_ASCEND_JSON && !strcmp(names[i], "communication.json");
        free(path);
    }
    for (size_t i = 0; !rc && i < n; i++) {
        char *path = child_path(dir, names[i]);
        if (!path) {
            rc = TPROF_ENOMEM;
            break;
        }
        struct stat st;
        if (stat(path, &st) != 0) d->unreadable++; /* a dangling link, a race */
        else if (S_ISDIR(st.st_mode)) {
            int added = id_add(&w->dirs, st.st_dev, st.st_ino);
            if (added < 0) rc = TPROF_ENOMEM;
            else if (added) rc = walk_dir(w, d, path); /* else: a loop or a second link to it */
        } else if (!S_ISREG(st.st_mode)) d->special++;
        else if (is_temporary(names[i])) d->temporary++;
        else {
            int added = id_add(&w->files, st.st_dev, st.st_ino);
            if (added < 0) rc = TPROF_ENOMEM;
            else if (!added) d->repeated++;
            else {
                int kind = kinds[i];
                if (kind < 0) d->unreadable++;
                else if (kind == TPROF_INPUT_ASCEND_DB && !strcmp(names[i], "analysis.db") &&
                         !(w->accepts & TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_JSON)))
                    d->skipped[TPROF_INPUT_ASCEND_JSON]++; /* communication analysis: the commands that read it */
                else if ((((kind == TPROF_INPUT_ASCEND_JSON || kind == TPROF_INPUT_ASCEND_MEMORY ||
                            kind == TPROF_INPUT_ASCEND_STEPS) &&
                           (w->accepts & TPROF_INPUT_BIT(kind))) ||
                          kind == TPROF_INPUT_ASCEND_DB) &&
                         is_sidecar(names[i], has_trace || has_table || has_db,
                                    has_comm && (w->accepts & TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_JSON)), has_memory))
                    d->sidecars++;
                else if (((kind == TPROF_INPUT_ASCEND_KERNELS && (has_trace || has_db)) ||
                          (kind == TPROF_INPUT_ASCEND_DB && has_trace)) &&
                         (w->accepts & TPROF_INPUT_BIT(TPROF_INPUT_TRACE)))
                    d->beside_trace++; /* the same tasks as the timeline (or the database) beside it */
                else if (kind == TPROF_INPUT_ASCEND_DB && has_memory &&
                         (w->accepts & TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_MEMORY)))
                    d->beside_trace++; /* the same memory view as memory_record.csv beside it */
                else if (w->accepts & TPROF_INPUT_BIT(kind)) {
                    d->kept[kind]++;
                    d->nkept++;
                    rc = push(w, path);
                } else d->skipped[kind]++;
            }
        }
        free(path);
    }
    free(kinds);
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

int tprof_inputs_expand(const char *const *args, size_t n, unsigned accepts, tprof_inputs *out, char *errbuf,
                        size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (errbuf && errlen) errbuf[0] = 0;
    walk w = { .accepts = accepts, .out = out };
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        struct stat st;
        if (strcmp(args[i], "-") == 0 || stat(args[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            rc = push(&w, args[i]); /* the reader says what is wrong with it */
            continue;
        }
        tprof_input_dir *dirs = realloc(out->dirs, (out->ndirs + 1) * sizeof *dirs);
        if (!dirs) {
            rc = TPROF_ENOMEM;
            break;
        }
        out->dirs = dirs;
        tprof_input_dir *d = &dirs[out->ndirs++];
        memset(d, 0, sizeof *d);
        d->arg = args[i];
        d->first = out->npaths;
        /* each argument is walked on its own: DIR given twice is read twice, as a file is */
        free(w.dirs.slot);
        free(w.files.slot);
        w.dirs = w.files = (id_set){ 0 };
        if (id_add(&w.dirs, st.st_dev, st.st_ino) < 0) {
            rc = TPROF_ENOMEM;
            break;
        }
        DIR *probe = opendir(args[i]);
        if (!probe) {
            if (errbuf) snprintf(errbuf, errlen, "%s: cannot list the directory: %s", args[i], strerror(errno));
            rc = TPROF_EIO;
            break;
        }
        closedir(probe);
        rc = walk_dir(&w, d, args[i]);
    }
    free(w.dirs.slot);
    free(w.files.slot);
    if (rc == TPROF_ENOMEM && errbuf && !errbuf[0]) snprintf(errbuf, errlen, "out of memory listing the inputs");
    return rc;
}

void tprof_inputs_free(tprof_inputs *in)
{
    for (size_t i = 0; i < in->npaths; i++) free(in->paths[i]);
    free(in->paths);
    free(in->dirs);
    memset(in, 0, sizeof *in);
}

/* ---- the line on a directory ---- */

/* singular, plural, and the command that reads the kind (NULL: none) */
static const char *const kind_names[TPROF_INPUT_KINDS][3] = {
    [TPROF_INPUT_UNKNOWN] = { "not recognised", "not recognised", NULL },
    [TPROF_INPUT_TRACE] = { "trace", "traces", "trainprof kernels, summary or another trace command" },
    [TPROF_INPUT_SNAPSHOT] = { "memory snapshot", "memory snapshots", "trainprof mem" },
    [TPROF_INPUT_EXEC_TRACE] = { "execution trace", "execution traces", NULL },
    [TPROF_INPUT_ASCEND_CSV] = { "Ascend CSV file", "Ascend CSV files", NULL },
    [TPROF_INPUT_LOG] = { "training log", "training logs", "trainprof log" },
    [TPROF_INPUT_CONFIG] = { "model config", "model configs", "trainprof flops or mfu (--config)" },
    [TPROF_INPUT_ASCEND_JSON] = { "Ascend communication summary", "Ascend communication summaries",
                                  "trainprof comm or collectives" },
    [TPROF_INPUT_ASCEND_KERNELS] = { "Ascend kernel table", "Ascend kernel tables",
                                     "trainprof kernels, summary or another trace command" },
    [TPROF_INPUT_ASCEND_DB] = { "Ascend profiler database", "Ascend profiler databases",
                                "trainprof kernels, summary or another trace command" },
    [TPROF_INPUT_ASCEND_MEMORY] = { "Ascend memory table", "Ascend memory tables", "trainprof mem" },
    [TPROF_INPUT_ASCEND_STEPS] = { "Ascend step table", "Ascend step tables", "trainprof steps, ranks or advice" },
};

typedef struct {
    char *buf;
    size_t len, at;
} text;

static void add(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(text *t, const char *fmt, ...)
{
    if (t->at + 1 >= t->len) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->buf + t->at, t->len - t->at, fmt, ap);
    va_end(ap);
    if (k > 0) t->at = t->at + (size_t)k < t->len ? t->at + (size_t)k : t->len - 1;
}

static void add_count(text *t, const char *sep, size_t n, const char *const name[2])
{
    add(t, "%s%zu %s", sep, n, name[n != 1]);
}

/* What was skipped: " (2 memory snapshots, 1 model config, 2 not
 * recognised)" into T, and its count. */
static size_t add_skipped(const tprof_input_dir *d, text *t)
{
    static const char *const extra_names[][2] = { { "unreadable", "unreadable" },
                                                  { "not a regular file", "not regular files" },
                                                  { "temporary output", "temporary outputs" },
                                                  { "link to a file already listed", "links to files already listed" },
                                                  { "Ascend table or database beside its trace",
                                                    "Ascend tables or databases beside their traces" },
                                                  { "Ascend summary or step table read with the file beside it",
                                                    "Ascend summaries and step tables read with the files beside "
                                                    "them" } };
    const size_t extra[] = { d->unreadable, d->special, d->temporary, d->repeated, d->beside_trace, d->sidecars };
    size_t total = 0;
    for (int k = 0; k < TPROF_INPUT_KINDS; k++) total += d->skipped[k];
    for (size_t k = 0; k < sizeof extra / sizeof *extra; k++) total += extra[k];
    if (!total) return 0;
    const char *sep = " (";
    /* the known kinds first, then what is not recognised, then the rest */
    for (int k = 1; k <= TPROF_INPUT_KINDS; k++) {
        int kind = k % TPROF_INPUT_KINDS;
        if (!d->skipped[kind]) continue;
        add_count(t, sep, d->skipped[kind], kind_names[kind]);
        sep = ", ";
    }
    for (size_t k = 0; k < sizeof extra / sizeof *extra; k++) {
        if (!extra[k]) continue;
        add_count(t, sep, extra[k], extra_names[k]);
        sep = ", ";
    }
    add(t, ")");
    return total;
}

void tprof_input_dir_describe(const tprof_input_dir *d, unsigned accepts, char *buf, size_t len)
{
    if (!buf || !len) return;
    buf[0] = 0;
    text t = { buf, len, 0 };
    char list[512] = "";
    text l = { list, sizeof list, 0 };
    size_t total = add_skipped(d, &l);
    static const char *const files[2] = { "file", "files" };
    add(&t, "%s: ", d->arg);
    if (d->nkept) {
        const char *sep = "";
        for (int k = 1; k < TPROF_INPUT_KINDS; k++) {
            if (!d->kept[k]) continue;
            add_count(&t, sep, d->kept[k], kind_names[k]);
            sep = ", ";
        }
        if (total) {
            add_count(&t, "; skipped ", total, files);
            add(&t, "%s", list);
        }
        return;
    }
    /* nothing kept: "no trace or memory snapshot below the directory" (an
     * Ascend kernel table is a trace here: not named apart) */
    if (accepts & TPROF_INPUT_BIT(TPROF_INPUT_TRACE))
        accepts &= ~(TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_KERNELS) | TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_DB));
    int wanted = 0, seen = 0;
    for (int k = 1; k < TPROF_INPUT_KINDS; k++) wanted += (accepts & TPROF_INPUT_BIT(k)) != 0;
    add(&t, "no ");
    for (int k = 1; k < TPROF_INPUT_KINDS; k++) {
        if (!(accepts & TPROF_INPUT_BIT(k))) continue;
        add(&t, "%s%s", !seen ? "" : seen + 1 == wanted ? " or " : ", ", kind_names[k][0]);
        seen++;
    }
    if (!total) {
        add(&t, " below the directory: it holds no files");
        return;
    }
    add_count(&t, " below the directory; it holds ", total, files);
    add(&t, "%s", list);
    /* which command reads the commonest kind found */
    int best = -1;
    for (int k = 1; k < TPROF_INPUT_KINDS; k++)
        if (d->skipped[k] && kind_names[k][2] && (best < 0 || d->skipped[k] > d->skipped[best])) best = k;
    if (best >= 0) add(&t, "%sthe %s are read by %s", TPROF_HINT_MARK, kind_names[best][1], kind_names[best][2]);
}
