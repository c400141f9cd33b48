/* GPU kernel breakdown: per name, class or stream; optionally limited to
 * the GPU work launched inside a ProfilerStep window. */
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "../util/i64map.h"
#include "../util/strtab.h"
#include "intervals.h"
#include "launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    tprof_strtab keys;
} kpriv;

static int new_result(tprof_kernels_result **out, tprof_group_by by)
{
    tprof_kernels_result *r = calloc(1, sizeof *r);
    kpriv *p = calloc(1, sizeof *p);
    if (!r || !p || tprof_strtab_init(&p->keys)) {
        free(r);
        free(p);
        return TPROF_ENOMEM;
    }
    r->priv = p;
    r->by = by;
    r->step_first = r->step_last = -1;
    *out = r;
    return 0;
}

void tprof_kernels_free(tprof_kernels_result *r)
{
    if (!r) return;
    kpriv *p = r->priv;
    if (p) {
        tprof_strtab_free(&p->keys);
        free(p);
    }
    free(r->rows);
    free(r);
}

static int cmp_row(const void *a, const void *b)
{
    const tprof_kernel_row *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Fills mean and share, fixes key pointers, sorts. */
static void finish_rows(tprof_kernels_result *r)
{
    kpriv *p = r->priv;
    for (size_t i = 0; i < r->nrows; i++) {
        tprof_kernel_row *row = &r->rows[i];
        row->key = tprof_strtab_get(&p->keys, (uint32_t)(uintptr_t)row->key);
        row->mean_ns = row->count ? (double)row->total_ns / (double)row->count : 0.0;
        row->share = r->total_ns > 0 ? (double)row->total_ns / (double)r->total_ns : 0.0;
    }
    if (r->nrows) qsort(r->rows, r->nrows, sizeof *r->rows, cmp_row);
}

/* Row index for an event; rows[].key holds a key id until finish_rows. */
typedef struct {
    tprof_i64map index; /* group key -> row */
} grouper;

static int row_for(tprof_kernels_result *r, grouper *g, int64_t gkey, const char *label, tprof_class k,
                   int64_t device, int64_t stream, size_t *cap)
{
    int64_t idx;
    if (tprof_i64map_get(&g->index, gkey, &idx)) return (int)idx;
    if (r->nrows == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        tprof_kernel_row *rows = realloc(r->rows, nc * sizeof *rows);
        if (!rows) return -1;
        r->rows = rows;
        *cap = nc;
    }
    kpriv *p = r->priv;
    uint32_t kid = tprof_strtab_intern(&p->keys, label, strlen(label));
    if (kid == UINT32_MAX) return -1;
    r->rows[r->nrows] = (tprof_kernel_row){ .key = (const char *)(uintptr_t)kid, .klass = k,
                                            .device = device, .stream = stream,
                                            .min_ns = INT64_MAX, .max_ns = INT64_MIN };
    if (tprof_i64map_put(&g->index, gkey, (int64_t)r->nrows)) return -1;
    return (int)r->nrows++;
}

static void add_to_row(tprof_kernel_row *row, uint64_t count, int64_t total, int64_t mn, int64_t mx)
{
    row->count += count;
    row->total_ns = tprof_sat_add(row->total_ns, total);
    if (mn < row->min_ns) row->min_ns = mn;
    if (mx > row->max_ns) row->max_ns = mx;
}

int tprof_kernels(const tprof_trace *t, const tprof_kernels_opts *opts, tprof_kernels_result **out)
{
    static const tprof_kernels_opts defaults = { .step_first = -1, .step_last = -1 };
    if (!opts) opts = &defaults;
    *out = NULL;
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    const tprof_event *ev = tprof_trace_events(t);
    size_t nev = tprof_trace_nevents(t);
    tprof_kernels_result *r;
    int rc = new_result(&r, opts->by);
    if (rc) return rc;

    /* step window: the steps numbered A..B, in time order */
    tprof_step *sel = NULL;
    size_t nsel = 0;
    const int64_t *launched = NULL;
    int windowed = opts->step_first >= 0 || opts->step_last >= 0;
    if (windowed) {
        int src = tprof_steps_select(m, opts->step_first, opts->step_last, &sel, &nsel, &r->step_first, &r->step_last);
        if (src) {
            tprof_kernels_free(r);
            return src;
        }
        r->windowed = 1;
        r->nsteps = nsel;
        if (!(launched = tprof_launch_times(t))) goto oom;
    }

    grouper g;
    if (tprof_i64map_init(&g.index, 256)) goto oom;
    size_t cap = 0, niv = 0;
    tprof_interval *iv = malloc((nev ? nev : 1) * sizeof *iv);
    if (!iv) {
        tprof_i64map_free(&g.index);
        goto oom;
    }
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t i = 0; i < nev; i++) {
        const tprof_event *e = &ev[i];
        if (e->kind != TPROF_KIND_GPU) continue;
        if (windowed) {
            if (tprof_step_at(sel, nsel, launched[i]) < 0) continue;
        }
        int idx;
        char label[64];
        switch (opts->by) {
        case TPROF_BY_CLASS:
            idx = row_for(r, &g, e->klass, tprof_class_name((tprof_class)e->klass), (tprof_class)e->klass, -1, -1,
                          &cap);
            break;
        case TPROF_BY_STREAM: {
            /* the label's string id is an exact key for (device, stream) */
            snprintf(label, sizeof label, "device %lld stream %lld", (long long)e->device, (long long)e->stream);
            uint32_t kid = tprof_strtab_intern(&((kpriv *)r->priv)->keys, label, strlen(label));
            idx = kid == UINT32_MAX ? -1
                                    : row_for(r, &g, kid, label, TPROF_CLASS_COMPUTE, e->device, e->stream, &cap);
            break;
        }
        case TPROF_BY_CATEGORY: { /* one row per category and class, as per name; an Ascend task: its type */
            uint32_t cat = e->task ? e->task : e->cat;
            idx = row_for(r, &g, (int64_t)cat * TPROF_CLASS_COUNT + e->klass, tprof_trace_str(t, cat),
                          (tprof_class)e->klass, -1, -1, &cap);
            break;
        }
        default:
            /* one row per name and class: a name can appear in two categories */
            idx = row_for(r, &g, (int64_t)e->name * TPROF_CLASS_COUNT + e->klass, tprof_trace_str(t, e->name),
                          (tprof_class)e->klass, -1, -1, &cap);
        }
        if (idx < 0) {
            free(iv);
            tprof_i64map_free(&g.index);
            goto oom;
        }
        add_to_row(&r->rows[idx], 1, e->dur, e->dur, e->dur);
        r->count++;
        r->total_ns = tprof_sat_add(r->total_ns, e->dur);
        r->class_count[e->klass]++;
        r->class_total_ns[e->klass] = tprof_sat_add(r->class_total_ns[e->klass], e->dur);
        int64_t end = tprof_end_ns(e->ts, e->dur);
        iv[niv++] = (tprof_interval){ e->ts, end };
        if (e->ts < first) first = e->ts;
        if (end > last) last = end;
    }
    r->busy_ns = tprof_interval_union(iv, niv);
    r->span_ns = niv ? tprof_span_ns(first, last) : 0;
    free(iv);
    tprof_i64map_free(&g.index);
    free(sel);
    finish_rows(r);
    *out = r;
    return 0;
oom:
    free(sel);
    tprof_kernels_free(r);
    return TPROF_ENOMEM;
}

int tprof_kernels_combine(const tprof_kernels_result *const *parts, size_t n, tprof_kernels_result **out)
{
    *out = NULL;
    if (n == 0) return TPROF_EUSAGE;
    tprof_kernels_result *r;
    int rc = new_result(&r, parts[0]->by);
    if (rc) return rc;
    grouper g;
    if (tprof_i64map_init(&g.index, 256)) {
        tprof_kernels_free(r);
        return TPROF_ENOMEM;
    }
    kpriv *p = r->priv;
    size_t cap = 0;
    for (size_t k = 0; k < n; k++) {
        const tprof_kernels_result *s = parts[k];
        for (size_t i = 0; i < s->nrows; i++) {
            const tprof_kernel_row *row = &s->rows[i];
            /* group by the key text: intern it first so equal names meet */
            uint32_t kid = tprof_strtab_intern(&p->keys, row->key, strlen(row->key));
            int idx = kid == UINT32_MAX ? -1
                                        : row_for(r, &g, (int64_t)kid * TPROF_CLASS_COUNT + row->klass, row->key, row->klass,
                                                 row->device, row->stream, &cap);
            if (idx < 0) {
                tprof_i64map_free(&g.index);
                tprof_kernels_free(r);
                return TPROF_ENOMEM;
            }
            add_to_row(&r->rows[idx], row->count, row->total_ns, row->min_ns, row->max_ns);
        }
        r->count += s->count;
        r->total_ns = tprof_sat_add(r->total_ns, s->total_ns);
        r->busy_ns = tprof_sat_add(r->busy_ns, s->busy_ns);
        if (s->span_ns > r->span_ns) r->span_ns = s->span_ns;
        for (int c = 0; c < TPROF_CLASS_COUNT; c++) {
            r->class_count[c] += s->class_count[c];
            r->class_total_ns[c] = tprof_sat_add(r->class_total_ns[c], s->class_total_ns[c]);
        }
        if (s->windowed) { /* the window as found: the first and last step of any rank */
            if (!r->windowed || s->step_first < r->step_first) r->step_first = s->step_first;
            if (!r->windowed || s->step_last > r->step_last) r->step_last = s->step_last;
            r->windowed = 1;
        }
        r->nsteps += s->nsteps;
    }
    tprof_i64map_free(&g.index);
    finish_rows(r);
    *out = r;
    return 0;
}

/* ---- result tables ---------------------------------------------------------- */

enum { K_BY, K_COUNT, K_TOTAL, K_BUSY, K_SPAN, K_STEP_FIRST, K_STEP_LAST, K_NSTEPS, K_NCOLS };
enum { C_CLASS, C_COUNT, C_TOTAL, C_NCOLS };
enum { R_KEY, R_CLASS, R_DEVICE, R_STREAM, R_COUNT, R_TOTAL, R_MEAN, R_MIN, R_MAX, R_SHARE, R_NCOLS };

static const tprof_col_desc kernels_top_cols[K_NCOLS] = {
    [K_BY] = TPROF_COL("by", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "the grouping: kernel, class, stream or category",
                       .flags = TPROF_COLF_NO_TABLE),
    [K_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "GPU events", "GPU events in the window"),
    [K_TOTAL] = TPROF_COL("total_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "total", "their durations summed"),
    [K_BUSY] = TPROF_COL("busy_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "busy",
                         "the union of their intervals (across ranks: the sum of each rank's)"),
    [K_SPAN] = TPROF_COL("span_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, "span",
                         "first start to last end (across ranks: the longest)"),
    [K_STEP_FIRST] = TPROF_COL("step_first", TPROF_COL_INT, TPROF_COMBINE_MIN, NULL,
                               "with --steps: the first ProfilerStep found in the window",
                               .flags = TPROF_COLF_OMIT_NULL | TPROF_COLF_NO_TABLE),
    [K_STEP_LAST] = TPROF_COL("step_last", TPROF_COL_INT, TPROF_COMBINE_MAX, NULL,
                              "with --steps: the last ProfilerStep found in the window",
                              .flags = TPROF_COLF_OMIT_NULL | TPROF_COLF_NO_TABLE),
    [K_NSTEPS] = TPROF_COL("steps", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "with --steps: steps in the window",
                           .flags = TPROF_COLF_NO_JSON | TPROF_COLF_NO_TABLE),
};

static const tprof_col_desc kernels_class_cols[C_NCOLS] = {
    [C_CLASS] = TPROF_COL("class", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, "class",
                          "compute, communication, memory or other", .flags = TPROF_COLF_KEY),
    [C_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "count", "GPU events of the class"),
    [C_TOTAL] = TPROF_COL("total_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "total", "their durations summed"),
};

/* The row columns of one grouping: the key's heading, and which of class,
 * device and stream it shows. */
#define HIDDEN (TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV | TPROF_COLF_NO_TABLE)
#define KERNEL_ROW_COLS(KEY, KEY_DOC, CLASS_FLAGS, STREAM_FLAGS)                                                     \
    {                                                                                                                \
        [R_KEY] = TPROF_COL("key", TPROF_COL_STRING, TPROF_COMBINE_FIRST, KEY, KEY_DOC, .csv_name = KEY,           \
                            .flags = TPROF_COLF_KEY | TPROF_COLF_NAMES, .width = 90),                               \
        [R_CLASS] = TPROF_COL("class", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, "class",                               \
                              "the class of its events (by name; empty otherwise)",                                 \
                              .flags = TPROF_COLF_KEY | (CLASS_FLAGS)),                                             \
        [R_DEVICE] = TPROF_COL("device", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "by stream: the device",          \
                               .flags = (STREAM_FLAGS)),                                                            \
        [R_STREAM] = TPROF_COL("stream", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "by stream: the stream",          \
                               .flags = (STREAM_FLAGS)),                                                            \
        [R_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "count", "GPU events"),                   \
        [R_TOTAL] = TPROF_COL("total_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, "total", "their durations summed",  \
                              .flags = TPROF_COLF_METRIC),                                                          \
        [R_MEAN] = TPROF_COL("mean_ns", TPROF_COL_MEAN_NS, TPROF_COMBINE_DERIVED, "mean", "total_ns / count",       \
                             .num = "total_ns", .den = "count", .csv_decimals = 3),                                 \
        [R_MIN] = TPROF_COL("min_ns", TPROF_COL_DURATION, TPROF_COMBINE_MIN, "min", "the shortest event"),          \
        [R_MAX] = TPROF_COL("max_ns", TPROF_COL_DURATION, TPROF_COMBINE_MAX, "max", "the longest event"),           \
        [R_SHARE] = TPROF_COL("share", TPROF_COL_RATIO, TPROF_COMBINE_DERIVED, "share",                             \
                              "total_ns / all GPU event time in the window", .num = "total_ns",                    \
                              .den = "top.total_ns", .decimals = 2, .csv_decimals = 6),                             \
    }

static const tprof_col_desc kernels_row_cols[TPROF_BY_COUNT][R_NCOLS] = {
    [TPROF_BY_NAME] = KERNEL_ROW_COLS("kernel", "the kernel's name", 0, HIDDEN),
    [TPROF_BY_CLASS] = KERNEL_ROW_COLS("class", "the class", TPROF_COLF_NO_JSON | TPROF_COLF_NO_TABLE, HIDDEN),
    [TPROF_BY_STREAM] = KERNEL_ROW_COLS("stream", "\"device D stream S\"", TPROF_COLF_NO_JSON | TPROF_COLF_NO_TABLE,
                                        TPROF_COLF_NO_CSV | TPROF_COLF_NO_TABLE),
    [TPROF_BY_CATEGORY] = KERNEL_ROW_COLS("category", "the events' category (an Ascend task: its type, the accelerator core)",
                                          0, HIDDEN),
};

static const tprof_table_desc kernels_classes = { .name = "classes", .doc = "GPU events per class",
                                                  .cols = kernels_class_cols, .ncols = C_NCOLS, .json_keyed = 1 };
#define KERNEL_ROWS(BY)                                                                                              \
    { .name = "rows", .doc = "by total time, longest first (--top limits them)", .cols = kernels_row_cols[BY],      \
      .ncols = R_NCOLS, .limited = 1 }
static const tprof_table_desc kernels_rows[TPROF_BY_COUNT] = { KERNEL_ROWS(TPROF_BY_NAME), KERNEL_ROWS(TPROF_BY_CLASS),
                                                               KERNEL_ROWS(TPROF_BY_STREAM),
                                                               KERNEL_ROWS(TPROF_BY_CATEGORY) };
static const tprof_table_desc kernels_top = { .name = "", .cols = kernels_top_cols, .ncols = K_NCOLS };
/* the Ascend task columns per kernel (ascend_tasks.c): filled by kernels --by name where a kernel table has them */
static const tprof_table_desc *const kernels_tables[TPROF_BY_COUNT][3] = {
    { &kernels_classes, &kernels_rows[0], &tprof_ascend_tasks_desc },
    { &kernels_classes, &kernels_rows[1], &tprof_ascend_tasks_desc },
    { &kernels_classes, &kernels_rows[2], &tprof_ascend_tasks_desc },
    { &kernels_classes, &kernels_rows[3], &tprof_ascend_tasks_desc }
};
#define KERNELS_DESC(NAME, BY) { .name = NAME, .version = 2, .top = &kernels_top, .tables = kernels_tables[BY], \
                                 .ntables = 3, .csv_table = 2 }
const tprof_result_desc tprof_kernels_desc[TPROF_BY_COUNT] = { KERNELS_DESC("kernels", TPROF_BY_NAME),
                                                               KERNELS_DESC("kernels_by_class", TPROF_BY_CLASS),
                                                               KERNELS_DESC("kernels_by_stream", TPROF_BY_STREAM),
                                                               KERNELS_DESC("kernels_by_category", TPROF_BY_CATEGORY) };

static const char *by_label(tprof_group_by by)
{
    return by == TPROF_BY_CLASS ? "class" : by == TPROF_BY_STREAM ? "stream" : by == TPROF_BY_CATEGORY ? "category" : "kernel";
}

int tprof_kernels_tables(const tprof_kernels_result *r, tprof_result **out)
{
    *out = NULL;
    if ((unsigned)r->by >= TPROF_BY_COUNT) return TPROF_EUSAGE;
    tprof_result *res = tprof_result_new(&tprof_kernels_desc[r->by]);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res);
    int rc = tprof_rows_set_s(top, 0, K_BY, by_label(r->by));
    tprof_rows_set_i(top, 0, K_COUNT, (int64_t)r->count);
    tprof_rows_set_i(top, 0, K_TOTAL, r->total_ns);
    tprof_rows_set_i(top, 0, K_BUSY, r->busy_ns);
    tprof_rows_set_i(top, 0, K_SPAN, r->span_ns);
    if (r->windowed) {
        tprof_rows_set_i(top, 0, K_STEP_FIRST, r->step_first);
        tprof_rows_set_i(top, 0, K_STEP_LAST, r->step_last);
        tprof_rows_set_i(top, 0, K_NSTEPS, (int64_t)r->nsteps);
    }
    tprof_rows *classes = tprof_result_table(res, 0);
    for (int k = 0; !rc && k < TPROF_CLASS_COUNT; k++) {
        long i = tprof_rows_add(classes);
        if (i < 0 || tprof_rows_set_s(classes, (size_t)i, C_CLASS, tprof_class_name((tprof_class)k))) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(classes, (size_t)i, C_COUNT, (int64_t)r->class_count[k]);
        tprof_rows_set_i(classes, (size_t)i, C_TOTAL, r->class_total_ns[k]);
    }
    tprof_rows *rows = tprof_result_table(res, 1);
    for (size_t j = 0; !rc && j < r->nrows; j++) {
        const tprof_kernel_row *x = &r->rows[j];
        long i = tprof_rows_add(rows);
        if (i < 0 || tprof_rows_set_s(rows, (size_t)i, R_KEY, x->key) ||
            ((r->by == TPROF_BY_NAME || r->by == TPROF_BY_CATEGORY) &&
             tprof_rows_set_s(rows, (size_t)i, R_CLASS, tprof_class_name(x->klass)))) {
            rc = TPROF_ENOMEM;
            break;
        }
        if (r->by == TPROF_BY_STREAM) {
            tprof_rows_set_i(rows, (size_t)i, R_DEVICE, x->device);
            tprof_rows_set_i(rows, (size_t)i, R_STREAM, x->stream);
        }
        tprof_rows_set_i(rows, (size_t)i, R_COUNT, (int64_t)x->count);
        tprof_rows_set_i(rows, (size_t)i, R_TOTAL, x->total_ns);
        tprof_rows_set_i(rows, (size_t)i, R_MIN, x->min_ns);
        tprof_rows_set_i(rows, (size_t)i, R_MAX, x->max_ns);
    }
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    tprof_result_derive(res); /* mean and share, as the analysis computes them */
    *out = res;
    return 0;
}

int tprof_kernels_tables_finish(tprof_result *r)
{
    static const int cols[] = { R_TOTAL, R_KEY, R_CLASS }, desc[] = { 1, 0, 0 };
    return tprof_rows_sort(tprof_result_table(r, 1), cols, desc, 3);
}

int tprof_kernels_tables_combine(const tprof_result *const *parts, const int64_t *ranks, size_t n,
                                 tprof_result **out)
{
    *out = n ? tprof_ranks_combine(parts, ranks, n) : NULL;
    if (!*out) return n ? TPROF_ENOMEM : TPROF_EUSAGE;
    int rc = tprof_kernels_tables_finish(*out);
    if (rc) {
        tprof_result_free(*out);
        *out = NULL;
    }
    return rc;
}
