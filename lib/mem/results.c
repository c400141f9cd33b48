/* A memory snapshot's report as result tables (`trainprof mem`): the file,
 * and per device its events, peak active memory as PyTorch's memory viewer
 * defines it, reserved memory, the snapshot's state, the call sites live at
 * the peak and the OOMs; CSV keeps its long form (device, metric, site,
 * value). */
#include "trainprof/error.h"
#include "trainprof/mem.h"
#include "mem_internal.h"

#include <stdio.h>

enum { F_FORM, F_PROTOCOL, F_BYTES, F_TRUNCATED, F_SKIPPED, F_PEAK, F_RESERVED, F_OOMS, F_NCOLS };
/* the largest over devices: for the across-snapshots view only, JSON and CSV have each device's */
#define TEXT_ONLY (TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV)
static const tprof_col_desc file_cols[F_NCOLS] = {
    [F_FORM] = TPROF_COL("form", TPROF_COL_ENUM, TPROF_COMBINE_PER_RANK, NULL,
                         "the snapshot's shape: a dict of segments and traces, or a bare list of segments"),
    [F_PROTOCOL] = TPROF_COL("protocol", TPROF_COL_INT, TPROF_COMBINE_PER_RANK, NULL, "the pickle protocol"),
    [F_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, NULL, "pickle bytes read"),
    [F_TRUNCATED] = TPROF_COL("truncated", TPROF_COL_BOOL, TPROF_COMBINE_MAX, NULL, "the file ended early"),
    [F_SKIPPED] = TPROF_COL("skipped", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                            "trace entries or blocks without the fields needed"),
    [F_PEAK] = TPROF_COL("peak_active", TPROF_COL_BYTES, TPROF_COMBINE_MAX, "peak active",
                         "the largest device's peak active memory (text only)", .flags = TEXT_ONLY | TPROF_COLF_METRIC),
    [F_RESERVED] = TPROF_COL("reserved_peak", TPROF_COL_BYTES, TPROF_COMBINE_MAX, "peak reserved",
                             "the largest device's peak reserved memory (text only)", .flags = TEXT_ONLY),
    [F_OOMS] = TPROF_COL("ooms", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "OOMs", "OOMs on every device (text only)",
                         .flags = TEXT_ONLY),
};

enum { SITE_SITE, SITE_BYTES, SITE_COUNT, SITE_NCOLS };
static const tprof_col_desc site_cols[SITE_NCOLS] = {
    [SITE_SITE] = TPROF_COL("site", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                            "Python frames, outermost first, file:line:function joined by ;", .flags = TPROF_COLF_KEY),
    [SITE_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, NULL, "bytes live from it",
                             .flags = TPROF_COLF_METRIC),
    [SITE_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "blocks live from it"),
};
static const tprof_table_desc sites_at_peak = { .name = "sites_at_peak", .doc = "live at the peak, largest first",
                                                .cols = site_cols, .ncols = SITE_NCOLS };
static const tprof_table_desc oom_sites = { .name = "sites", .doc = "live at the OOM, largest first",
                                            .cols = site_cols, .ncols = SITE_NCOLS };

enum { O_INDEX, O_TIME, O_REQUESTED, O_FREE, O_ACTIVE, O_RESERVED, O_NCOLS };
static const tprof_col_desc oom_cols[O_NCOLS] = {
    [O_INDEX] = TPROF_COL("index", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "its place in the device's trace"),
    [O_TIME] = TPROF_COL("time_us", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "when, -1 unknown"),
    [O_REQUESTED] = TPROF_COL("requested_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "the request that failed"),
    [O_FREE] = TPROF_COL("device_free_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL,
                         "what CUDA had free, -1 unknown"),
    [O_ACTIVE] = TPROF_COL("active_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "active at the OOM"),
    [O_RESERVED] = TPROF_COL("reserved_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "reserved at the OOM"),
};
static const tprof_table_desc *const oom_children[] = { &oom_sites };
static const tprof_table_desc ooms = { .name = "ooms", .doc = "out-of-memory events", .cols = oom_cols,
                                       .ncols = O_NCOLS, .children = oom_children, .nchildren = 1 };

enum { AC_ACTION, AC_COUNT, AC_NCOLS };
static const tprof_col_desc action_cols[AC_NCOLS] = {
    [AC_ACTION] = TPROF_COL("action", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL,
                            "alloc, free_requested, free_completed, segment_alloc, ...", .flags = TPROF_COLF_KEY),
    [AC_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "trace entries of the action"),
};
static const tprof_table_desc actions = { .name = "actions", .doc = "the actions that occur", .cols = action_cols,
                                          .ncols = AC_NCOLS, .json_keyed = 1, .json_keyed_value = 1,
                                          .json_after = "events" };

enum {
    D_DEVICE, D_EVENTS, D_PEAK, D_PEAK_INDEX, D_PEAK_TIME, D_PEAK_ANNOTATION, D_INITIAL, D_FROM_FREES, D_FROM_BLOCKS,
    D_ACTIVE_END, D_RES_INITIAL, D_RES_PEAK, D_RES_PEAK_INDEX, D_RES_END, D_SEGMENTS, D_ALLOC_END, D_REQ_END,
    D_FRAG, D_SPLIT_BLOCKS, D_SPLIT_BYTES, D_LARGEST_FREE, D_RETRIES, D_NCOLS
};
#define DCOL(I, NAME, KIND, COMBINE, DOC) [I] = TPROF_COL(NAME, KIND, COMBINE, NULL, DOC)
static const tprof_col_desc device_cols[D_NCOLS] = {
    DCOL(D_DEVICE, "device", TPROF_COL_INT, TPROF_COMBINE_FIRST, "the CUDA device"),
    DCOL(D_EVENTS, "events", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "trace entries"),
    [D_PEAK] = TPROF_COL("peak_active_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, NULL,
                         "peak active memory, the memory viewer's definition", .flags = TPROF_COLF_METRIC),
    DCOL(D_PEAK_INDEX, "peak_index", TPROF_COL_INT, TPROF_COMBINE_PER_RANK,
         "the trace entry of the peak, -1: the snapshot's state"),
    DCOL(D_PEAK_TIME, "peak_time_us", TPROF_COL_INT, TPROF_COMBINE_PER_RANK, "when, -1 unknown"),
    DCOL(D_PEAK_ANNOTATION, "peak_annotation", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK,
         "the innermost annotation open at the peak, or null"),
    DCOL(D_INITIAL, "initial_active_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "live when the history begins"),
    DCOL(D_FROM_FREES, "initial_from_frees", TPROF_COL_COUNT, TPROF_COMBINE_SUM,
         "frees without an alloc in the history"),
    DCOL(D_FROM_BLOCKS, "initial_from_blocks", TPROF_COL_COUNT, TPROF_COMBINE_SUM,
         "live blocks never allocated in it"),
    DCOL(D_ACTIVE_END, "active_at_end_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "active after the last entry"),
    DCOL(D_RES_INITIAL, "reserved_initial_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "reserved when it begins"),
    DCOL(D_RES_PEAK, "reserved_peak_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, "peak reserved memory"),
    DCOL(D_RES_PEAK_INDEX, "reserved_peak_index", TPROF_COL_INT, TPROF_COMBINE_PER_RANK,
         "its trace entry, -1: before the history"),
    DCOL(D_RES_END, "reserved_at_end_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "reserved in the snapshot"),
    DCOL(D_SEGMENTS, "segments", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "segments in the snapshot"),
    DCOL(D_ALLOC_END, "allocated_at_end_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "blocks in an active state"),
    DCOL(D_REQ_END, "requested_at_end_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "their requested sizes"),
    DCOL(D_FRAG, "fragmentation_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "reserved - allocated"),
    DCOL(D_SPLIT_BLOCKS, "inactive_split_blocks", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "inactive split blocks"),
    DCOL(D_SPLIT_BYTES, "inactive_split_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, "their bytes"),
    DCOL(D_LARGEST_FREE, "largest_free_block_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, "the largest free block"),
    DCOL(D_RETRIES, "retries", TPROF_COL_COUNT, TPROF_COMBINE_SUM, "cache flushes before a cudaMalloc retry"),
};
static const tprof_table_desc *const device_children[] = { &actions, &sites_at_peak, &ooms };
static const tprof_table_desc devices = { .name = "devices", .doc = "devices with segments or trace entries",
                                          .cols = device_cols, .ncols = D_NCOLS, .children = device_children,
                                          .nchildren = 3 };

enum { V_DEVICE, V_METRIC, V_SITE, V_VALUE, V_NCOLS };
static const tprof_col_desc value_cols[V_NCOLS] = {
    [V_DEVICE] = TPROF_COL("device", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the device", .flags = TPROF_COLF_KEY),
    [V_METRIC] = TPROF_COL("metric", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                           "a devices column, ooms (their count) or site_bytes; for Ascend's memory view "
                           "COMPONENT.peak_allocated_bytes (reserved, active, final) or peak_op_bytes",
                           .flags = TPROF_COLF_KEY),
    [V_SITE] = TPROF_COL("site", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                         "the call site of a site_bytes row (the op of a peak_op_bytes row)",
                         .flags = TPROF_COLF_KEY),
    [V_VALUE] = TPROF_COL("value", TPROF_COL_INT, TPROF_COMBINE_SUM, NULL, "the number"),
};
const tprof_table_desc tprof_mem_values_table = { .name = "values",
                                                 .doc = "the numbers as device/metric/value rows (CSV)",
                                         .cols = value_cols, .ncols = V_NCOLS, .no_json = 1 };
static const tprof_table_desc mem_top = { .name = "", .cols = file_cols, .ncols = F_NCOLS };
static const tprof_table_desc *const mem_tables[] = { &devices, &tprof_mem_values_table };
const tprof_result_desc tprof_mem_desc = { .name = "mem", .version = 1, .top = &mem_top, .tables = mem_tables,
                                           .ntables = 2, .csv_table = 2, .no_label = 1 };

static int add_sites(tprof_rows *t, const tprof_mem_site *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        long k = tprof_rows_add(t);
        if (k < 0 || tprof_rows_set_s(t, (size_t)k, SITE_SITE, s[i].site)) return TPROF_ENOMEM;
        tprof_rows_set_i(t, (size_t)k, SITE_BYTES, s[i].bytes);
        tprof_rows_set_i(t, (size_t)k, SITE_COUNT, (int64_t)s[i].count);
    }
    return 0;
}

int tprof_mem_add_value(tprof_rows *t, int64_t device, const char *metric, const char *site, int64_t v)
{
    long k = tprof_rows_add(t);
    if (k < 0 || tprof_rows_set_s(t, (size_t)k, V_METRIC, metric) ||
        (site && tprof_rows_set_s(t, (size_t)k, V_SITE, site)))
        return TPROF_ENOMEM;
    tprof_rows_set_i(t, (size_t)k, V_DEVICE, device);
    tprof_rows_set_i(t, (size_t)k, V_VALUE, v);
    return 0;
}

/* One device's row, its children and its long-form rows. */
static int add_device(tprof_rows *devs, tprof_rows *vals, const tprof_mem_device *d)
{
    long i = tprof_rows_add(devs);
    if (i < 0 || (d->peak_annotation && tprof_rows_set_s(devs, (size_t)i, D_PEAK_ANNOTATION, d->peak_annotation)))
        return TPROF_ENOMEM;
    const int64_t v[D_NCOLS] = {
        [D_DEVICE] = d->device, [D_EVENTS] = (int64_t)d->events, [D_PEAK] = d->peak_active,
        [D_PEAK_INDEX] = d->peak_index, [D_PEAK_TIME] = d->peak_time_us, [D_INITIAL] = d->initial_active,
        [D_FROM_FREES] = (int64_t)d->initial_from_frees, [D_FROM_BLOCKS] = (int64_t)d->initial_from_blocks,
        [D_ACTIVE_END] = d->active_at_end, [D_RES_INITIAL] = d->reserved_initial, [D_RES_PEAK] = d->reserved_peak,
        [D_RES_PEAK_INDEX] = d->reserved_peak_index, [D_RES_END] = d->reserved_at_end,
        [D_SEGMENTS] = (int64_t)d->nsegments, [D_ALLOC_END] = d->allocated_at_end, [D_REQ_END] = d->requested_at_end,
        [D_FRAG] = d->fragmentation, [D_SPLIT_BLOCKS] = (int64_t)d->inactive_split_blocks,
        [D_SPLIT_BYTES] = d->inactive_split_bytes, [D_LARGEST_FREE] = d->largest_free_block,
        [D_RETRIES] = (int64_t)d->retries,
    };
    for (size_t c = 0; c < D_NCOLS; c++)
        if (c != D_PEAK_ANNOTATION) tprof_rows_set_i(devs, (size_t)i, c, v[c]);
    tprof_rows *ac = tprof_rows_child(devs, (size_t)i, 0), *st = tprof_rows_child(devs, (size_t)i, 1);
    tprof_rows *oo = tprof_rows_child(devs, (size_t)i, 2);
    if (!ac || !st || !oo) return TPROF_ENOMEM;
    for (int k = 0; k < TPROF_MEM_ACTION_COUNT; k++) {
        if (!d->counts[k]) continue;
        long a = tprof_rows_add(ac);
        if (a < 0 || tprof_rows_set_s(ac, (size_t)a, AC_ACTION, tprof_mem_action_name((tprof_mem_action)k)))
            return TPROF_ENOMEM;
        tprof_rows_set_i(ac, (size_t)a, AC_COUNT, (int64_t)d->counts[k]);
    }
    int rc = add_sites(st, d->sites, d->nsites);
    for (size_t j = 0; !rc && j < d->nooms; j++) {
        const tprof_mem_oom *o = &d->ooms[j];
        long k = tprof_rows_add(oo);
        tprof_rows *os = k < 0 ? NULL : tprof_rows_child(oo, (size_t)k, 0);
        if (!os) return TPROF_ENOMEM;
        const int64_t ov[O_NCOLS] = { (int64_t)o->index, o->time_us, o->size, o->device_free, o->active, o->reserved };
        for (size_t c = 0; c < O_NCOLS; c++) tprof_rows_set_i(oo, (size_t)k, c, ov[c]);
        rc = add_sites(os, o->sites, o->nsites);
    }
    /* the long form CSV has always had */
    static const int long_form[] = { D_EVENTS,    D_PEAK,      D_PEAK_INDEX, D_PEAK_TIME,     D_INITIAL,
                                     D_ACTIVE_END, D_RES_INITIAL, D_RES_PEAK, D_RES_END,       D_ALLOC_END,
                                     D_FRAG,      D_SPLIT_BLOCKS, D_SPLIT_BYTES, D_RETRIES };
    for (size_t k = 0; !rc && k < sizeof long_form / sizeof *long_form; k++)
        rc = tprof_mem_add_value(vals, d->device, device_cols[long_form[k]].name, NULL, v[long_form[k]]);
    if (!rc) rc = tprof_mem_add_value(vals, d->device, "ooms", NULL, (int64_t)d->nooms);
    for (size_t j = 0; !rc && j < d->nsites; j++) rc = tprof_mem_add_value(vals, d->device, "site_bytes", d->sites[j].site, d->sites[j].bytes);
    return rc;
}

int tprof_mem_tables(const tprof_mem_snapshot *s, const tprof_mem_report *r, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_mem_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res);
    int rc = tprof_rows_set_s(top, 0, F_FORM, tprof_snap_form_name(s->form));
    tprof_rows_set_i(top, 0, F_PROTOCOL, tprof_pickle_protocol(s->pk));
    tprof_rows_set_i(top, 0, F_BYTES, (int64_t)tprof_pickle_bytes(s->pk));
    tprof_rows_set_i(top, 0, F_TRUNCATED, s->truncated != 0);
    tprof_rows_set_i(top, 0, F_SKIPPED, (int64_t)s->skipped);
    int64_t peak = 0, reserved = 0, nooms = 0;
    for (size_t d = 0; d < r->ndev; d++) {
        if (r->dev[d].peak_active > peak) peak = r->dev[d].peak_active;
        if (r->dev[d].reserved_peak > reserved) reserved = r->dev[d].reserved_peak;
        nooms += (int64_t)r->dev[d].nooms;
    }
    tprof_rows_set_i(top, 0, F_PEAK, peak);
    tprof_rows_set_i(top, 0, F_RESERVED, reserved);
    tprof_rows_set_i(top, 0, F_OOMS, nooms);
    for (size_t i = 0; !rc && i < r->ndev; i++)
        rc = add_device(tprof_result_table(res, 0), tprof_result_table(res, 1), &r->dev[i]);
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

/* ---- two snapshots compared ---- */

enum { C_A, C_B, C_PEAK_A, C_PEAK_B, C_PEAK_DELTA, C_NCOLS };
static const tprof_col_desc compare_cols[C_NCOLS] = {
    [C_A] = TPROF_COL("a", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "snapshot A's path"),
    [C_B] = TPROF_COL("b", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "snapshot B's path"),
    [C_PEAK_A] = TPROF_COL("peak_a_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL,
                           "A's peak active memory, all devices"),
    [C_PEAK_B] = TPROF_COL("peak_b_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "B's"),
    [C_PEAK_DELTA] = TPROF_COL("peak_delta_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "B - A"),
};
enum { CS_SITE, CS_A, CS_B, CS_DELTA, CS_SITE_A, CS_NCOLS };
static const tprof_col_desc compare_site_cols[CS_NCOLS] = {
    [CS_SITE] = TPROF_COL("site", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                          "a call site live at either peak (B's spelling when both have it); (peak) in CSV: the peaks", .flags = TPROF_COLF_KEY),
    [CS_A] = TPROF_COL("a_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "live from it at A's peak"),
    [CS_B] = TPROF_COL("b_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "at B's"),
    [CS_DELTA] = TPROF_COL("delta_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "B - A",
                           .flags = TPROF_COLF_METRIC),
    [CS_SITE_A] = TPROF_COL("site_a", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                            "A's spelling of the site when its line numbers differ (same files and functions); "
                            "left out (JSON) or empty (CSV) otherwise",
                            .flags = TPROF_COLF_OMIT_NULL),
};
static const tprof_table_desc compare_sites = { .name = "sites", .doc = "by the size of the change, largest first",
                                                .cols = compare_site_cols, .ncols = CS_NCOLS };
static const tprof_table_desc compare_csv = { .name = "rows", .doc = "the peaks as a (peak) row, then the sites (CSV)",
                                              .cols = compare_site_cols, .ncols = CS_NCOLS, .no_json = 1 };
static const tprof_table_desc compare_top = { .name = "", .cols = compare_cols, .ncols = C_NCOLS };
static const tprof_table_desc *const compare_tables[] = { &compare_sites, &compare_csv };
const tprof_result_desc tprof_mem_compare_desc = { .name = "mem_compare", .version = 2, .top = &compare_top,
                                                   .tables = compare_tables, .ntables = 2, .csv_table = 2,
                                                   .whole_run = 1 };

static int delta_row(tprof_rows *t, const char *site, const char *site_a, int64_t a, int64_t b, int64_t delta)
{
    long i = tprof_rows_add(t);
    if (i < 0 || tprof_rows_set_s(t, (size_t)i, CS_SITE, site)) return TPROF_ENOMEM;
    if (site_a && tprof_rows_set_s(t, (size_t)i, CS_SITE_A, site_a)) return TPROF_ENOMEM;
    tprof_rows_set_i(t, (size_t)i, CS_A, a);
    tprof_rows_set_i(t, (size_t)i, CS_B, b);
    tprof_rows_set_i(t, (size_t)i, CS_DELTA, delta);
    return 0;
}

int tprof_mem_compare_tables(const char *a, const char *b, const tprof_mem_compare *c, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_mem_compare_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res);
    int rc = tprof_rows_set_s(top, 0, C_A, a);
    if (!rc) rc = tprof_rows_set_s(top, 0, C_B, b);
    tprof_rows_set_i(top, 0, C_PEAK_A, c->peak_a);
    tprof_rows_set_i(top, 0, C_PEAK_B, c->peak_b);
    tprof_rows_set_i(top, 0, C_PEAK_DELTA, c->peak_b - c->peak_a);
    if (!rc) rc = delta_row(tprof_result_table(res, 1), "(peak)", NULL, c->peak_a, c->peak_b, c->peak_b - c->peak_a);
    for (size_t i = 0; !rc && i < c->nrows; i++) {
        const tprof_mem_delta *d = &c->rows[i];
        rc = delta_row(tprof_result_table(res, 0), d->site, d->site_a, d->a, d->b, d->delta);
        if (!rc) rc = delta_row(tprof_result_table(res, 1), d->site, d->site_a, d->a, d->b, d->delta);
    }
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

/* ---- a trace's [memory] events ---- */

enum { K_FORM, K_TRUNCATED, K_NCOLS };
static const tprof_col_desc ktrace_cols[K_NCOLS] = {
    [K_FORM] = TPROF_COL("form", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "Kineto trace ([memory] events)"),
    [K_TRUNCATED] = TPROF_COL("truncated", TPROF_COL_BOOL, TPROF_COMBINE_MAX, NULL, "the trace ended early"),
};
enum { KS_STEP, KS_ALLOC, KS_RESERVED, KS_NCOLS };
static const tprof_col_desc kstep_cols[KS_NCOLS] = {
    [KS_STEP] = TPROF_COL("step", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "N of ProfilerStep#N",
                          .flags = TPROF_COLF_KEY),
    [KS_ALLOC] = TPROF_COL("peak_allocated_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, NULL,
                           "peak allocated in the step, -1: no sample"),
    [KS_RESERVED] = TPROF_COL("peak_reserved_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, NULL,
                              "peak reserved in the step, -1: unknown"),
};
enum { KD_DEVICE, KD_SAMPLES, KD_TOTALS, KD_PEAK, KD_PEAK_TS, KD_PEAK_STEP, KD_RES_PEAK, KD_RES_PEAK_TS, KD_ALLOC_END,
       KD_RES_END, KD_NCOLS };
static const tprof_col_desc kdevice_cols[KD_NCOLS] = {
    [KD_DEVICE] = TPROF_COL("device", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "Device Id (negative: the host)",
                            .flags = TPROF_COLF_KEY),
    [KD_SAMPLES] = TPROF_COL("samples", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "[memory] events"),
    [KD_TOTALS] = TPROF_COL("has_totals", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, NULL,
                            "Total Allocated present (else a running sum of Bytes)"),
    [KD_PEAK] = TPROF_COL("peak_allocated_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, NULL, "peak allocated memory",
                          .flags = TPROF_COLF_METRIC),
    [KD_PEAK_TS] = TPROF_COL("peak_allocated_ts_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_PER_RANK, NULL, "when"),
    [KD_PEAK_STEP] = TPROF_COL("peak_step", TPROF_COL_INT, TPROF_COMBINE_PER_RANK, NULL,
                               "the ProfilerStep it fell in, -1: outside steps"),
    [KD_RES_PEAK] = TPROF_COL("peak_reserved_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, NULL,
                              "peak reserved memory, -1: unknown"),
    [KD_RES_PEAK_TS] = TPROF_COL("peak_reserved_ts_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_PER_RANK, NULL, "when"),
    [KD_ALLOC_END] = TPROF_COL("allocated_at_end_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, NULL,
                               "allocated after the last sample"),
    [KD_RES_END] = TPROF_COL("reserved_at_end_bytes", TPROF_COL_BYTES, TPROF_COMBINE_SUM, NULL,
                             "reserved after it, -1: unknown"),
};
static const tprof_table_desc ksteps = { .name = "steps", .doc = "each ProfilerStep's peaks", .cols = kstep_cols,
                                         .ncols = KS_NCOLS };
static const tprof_table_desc *const kdevice_children[] = { &ksteps };
static const tprof_table_desc kdevices = { .name = "devices", .doc = "devices with [memory] events",
                                           .cols = kdevice_cols, .ncols = KD_NCOLS, .children = kdevice_children,
                                           .nchildren = 1 };
static const tprof_table_desc ktrace_top = { .name = "", .cols = ktrace_cols, .ncols = K_NCOLS };
static const tprof_table_desc *const ktrace_tables[] = { &kdevices, &tprof_mem_values_table };
const tprof_result_desc tprof_mem_trace_desc = { .name = "mem_trace", .version = 1, .top = &ktrace_top,
                                                 .tables = ktrace_tables, .ntables = 2, .csv_table = 2,
                                                 .no_label = 1,
                                                 .doc = "`trainprof mem` on a trace recorded with profile_memory=True." };

int tprof_mem_trace_tables(const tprof_mem_kreport *r, int truncated, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_mem_trace_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *top = tprof_result_top(res), *devs = tprof_result_table(res, 0), *vals = tprof_result_table(res, 1);
    int rc = tprof_rows_set_s(top, 0, K_FORM, "Kineto trace ([memory] events)");
    tprof_rows_set_i(top, 0, K_TRUNCATED, truncated != 0);
    for (size_t i = 0; !rc && i < r->ndev; i++) {
        const tprof_mem_kdevice *d = &r->dev[i];
        long k = tprof_rows_add(devs);
        tprof_rows *st = k < 0 ? NULL : tprof_rows_child(devs, (size_t)k, 0);
        if (!st) {
            rc = TPROF_ENOMEM;
            break;
        }
        const int64_t v[KD_NCOLS] = { d->device,           (int64_t)d->samples, d->has_totals != 0,
                                      d->peak_allocated,   d->peak_allocated_ts, d->peak_step,
                                      d->peak_reserved,    d->peak_reserved_ts,  d->allocated_at_end,
                                      d->reserved_at_end };
        for (size_t c = 0; c < KD_NCOLS; c++) tprof_rows_set_i(devs, (size_t)k, c, v[c]);
        /* the long form CSV has always had */
        static const int long_form[] = { KD_SAMPLES, KD_PEAK, KD_PEAK_TS, KD_PEAK_STEP, KD_RES_PEAK };
        for (size_t j = 0; !rc && j < sizeof long_form / sizeof *long_form; j++)
            rc = tprof_mem_add_value(vals, d->device, kdevice_cols[long_form[j]].name, NULL, v[long_form[j]]);
        for (size_t j = 0; !rc && j < d->nsteps; j++) {
            long s = tprof_rows_add(st);
            if (s < 0) {
                rc = TPROF_ENOMEM;
                break;
            }
            tprof_rows_set_i(st, (size_t)s, KS_STEP, d->steps[j].number);
            tprof_rows_set_i(st, (size_t)s, KS_ALLOC, d->steps[j].peak_allocated);
            tprof_rows_set_i(st, (size_t)s, KS_RESERVED, d->steps[j].peak_reserved);
            char name[40];
            snprintf(name, sizeof name, "ProfilerStep#%lld", (long long)d->steps[j].number);
            rc = tprof_mem_add_value(vals, d->device, "step_peak_allocated_bytes", name, d->steps[j].peak_allocated);
        }
    }
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

/* ---- timelines (the --timeline files) ---- */

enum { TL_DEVICE, TL_NCOLS };
static const tprof_col_desc tl_device_cols[TL_NCOLS] = {
    [TL_DEVICE] = TPROF_COL("device", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the device", .flags = TPROF_COLF_KEY),
};
static const tprof_col_desc layer_cols[] = {
    TPROF_COL("layer", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "a call site stacked, then other"),
};
static const tprof_col_desc layer_bytes_cols[] = {
    TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "live bytes of each layer, in layers' order"),
};
/* a timeline point: in the devices' points (JSON) and in CSV's rows */
#define TPOINT_COLS(INDEX, TIME, ACTIVE, RESERVED)                                                                    \
    [INDEX] = TPROF_COL("index", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the bucket's last trace entry"),         \
    [TIME] = TPROF_COL("time_us", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "its time"),                            \
    [ACTIVE] = TPROF_COL("active_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, NULL, "the bucket's highest active"),  \
    [RESERVED] = TPROF_COL("reserved_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, NULL, "reserved then")
enum { TP_INDEX, TP_TIME, TP_ACTIVE, TP_RESERVED, TP_NCOLS };
static const tprof_col_desc tl_point_cols[TP_NCOLS] = { TPOINT_COLS(TP_INDEX, TP_TIME, TP_ACTIVE, TP_RESERVED) };
static const tprof_table_desc tl_layers = { .name = "layers", .doc = "the top call sites, then other",
                                            .cols = layer_cols, .ncols = 1, .json_values = 1 };
static const tprof_table_desc tl_layer_bytes = { .name = "layer_bytes", .doc = "per layer",
                                                 .cols = layer_bytes_cols, .ncols = 1, .json_values = 1 };
static const tprof_table_desc *const tl_point_children[] = { &tl_layer_bytes };
static const tprof_table_desc tl_points = { .name = "points", .doc = "at most --points buckets",
                                            .cols = tl_point_cols, .ncols = TP_NCOLS, .children = tl_point_children,
                                            .nchildren = 1 };
static const tprof_table_desc *const tl_device_children[] = { &tl_layers, &tl_points };
static const tprof_table_desc tl_devices = { .name = "devices", .doc = "one timeline per device",
                                             .cols = tl_device_cols, .ncols = TL_NCOLS,
                                             .children = tl_device_children, .nchildren = 2 };
enum { TR_DEVICE, TR_INDEX, TR_TIME, TR_ACTIVE, TR_RESERVED, TR_LAYER, TR_BYTES, TR_NCOLS };
static const tprof_col_desc tl_row_cols[TR_NCOLS] = {
    [TR_DEVICE] = TPROF_COL("device", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the device"),
    TPOINT_COLS(TR_INDEX, TR_TIME, TR_ACTIVE, TR_RESERVED),
    [TR_LAYER] = TPROF_COL("layer", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "a layer"),
    [TR_BYTES] = TPROF_COL("layer_bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "its live bytes"),
};
static const tprof_table_desc tl_rows = { .name = "rows", .doc = "a row per point and layer (CSV)",
                                          .cols = tl_row_cols, .ncols = TR_NCOLS, .no_json = 1 };
static const tprof_table_desc tl_top = { .name = "" };
static const tprof_table_desc *const tl_tables[] = { &tl_devices, &tl_rows };
const tprof_result_desc tprof_mem_timeline_desc = {
    .name = "mem_timeline", .version = 1, .top = &tl_top, .tables = tl_tables, .ntables = 2, .csv_table = 2,
    .no_label = 1, .doc = "`trainprof mem --timeline PREFIX`: PREFIX.csv, or PREFIX.json with --format json.",
};

int tprof_mem_timeline_add(tprof_result *res, const tprof_mem_timeline *t)
{
    tprof_rows *devs = tprof_result_table(res, 0), *rows = tprof_result_table(res, 1);
    long d = tprof_rows_add(devs);
    tprof_rows *layers = d < 0 ? NULL : tprof_rows_child(devs, (size_t)d, 0);
    tprof_rows *pts = d < 0 ? NULL : tprof_rows_child(devs, (size_t)d, 1);
    if (!layers || !pts) return TPROF_ENOMEM;
    tprof_rows_set_i(devs, (size_t)d, TL_DEVICE, t->device);
    for (size_t j = 0; j <= t->ntop; j++) {
        long k = tprof_rows_add(layers);
        if (k < 0 || tprof_rows_set_s(layers, (size_t)k, 0, j < t->ntop ? t->top[j] : "other")) return TPROF_ENOMEM;
    }
    for (size_t p = 0; p < t->npts; p++) {
        const tprof_mem_point *pt = &t->pts[p];
        long k = tprof_rows_add(pts);
        tprof_rows *lb = k < 0 ? NULL : tprof_rows_child(pts, (size_t)k, 0);
        if (!lb) return TPROF_ENOMEM;
        const int64_t v[TP_NCOLS] = { pt->index, pt->time_us, pt->active, pt->reserved };
        for (size_t c = 0; c < TP_NCOLS; c++) tprof_rows_set_i(pts, (size_t)k, c, v[c]);
        for (size_t j = 0; j <= t->ntop; j++) {
            long b = tprof_rows_add(lb), r = tprof_rows_add(rows);
            if (b < 0 || r < 0 || tprof_rows_set_s(rows, (size_t)r, TR_LAYER, j < t->ntop ? t->top[j] : "other"))
                return TPROF_ENOMEM;
            tprof_rows_set_i(lb, (size_t)b, 0, pt->site_bytes[j]);
            const int64_t rv[] = { t->device, pt->index, pt->time_us, pt->active, pt->reserved };
            for (size_t c = 0; c < 5; c++) tprof_rows_set_i(rows, (size_t)r, c, rv[c]);
            tprof_rows_set_i(rows, (size_t)r, TR_BYTES, pt->site_bytes[j]);
        }
    }
    return 0;
}

/* a [memory] point: in the devices' points (JSON) and after the device in CSV's rows */
#define KPOINT_COLS(TS, ALLOC, RESERVED)                                                                              \
    [TS] = TPROF_COL("ts_ns", TPROF_COL_TIMESTAMP, TPROF_COMBINE_FIRST, NULL, "the bucket's highest point"),        \
    [ALLOC] = TPROF_COL("allocated_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, NULL, "allocated then"),           \
    [RESERVED] = TPROF_COL("reserved_bytes", TPROF_COL_BYTES, TPROF_COMBINE_MAX, NULL, "reserved, -1: unknown")
enum { KP_TS, KP_ALLOC, KP_RESERVED, KP_NCOLS };
static const tprof_col_desc kp_cols[KP_NCOLS] = { KPOINT_COLS(KP_TS, KP_ALLOC, KP_RESERVED) };
enum { KR_DEVICE, KR_TS, KR_ALLOC, KR_RESERVED, KR_NCOLS };
static const tprof_col_desc kr_cols[KR_NCOLS] = {
    [KR_DEVICE] = TPROF_COL("device", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "the device"),
    KPOINT_COLS(KR_TS, KR_ALLOC, KR_RESERVED),
};
static const tprof_table_desc kt_points = { .name = "points", .doc = "at most --points buckets", .cols = kp_cols,
                                            .ncols = KP_NCOLS };
static const tprof_table_desc *const kt_device_children[] = { &kt_points };
static const tprof_table_desc kt_devices = { .name = "devices", .doc = "one timeline per device",
                                             .cols = tl_device_cols, .ncols = TL_NCOLS,
                                             .children = kt_device_children, .nchildren = 1 };
static const tprof_table_desc kt_rows = { .name = "rows", .doc = "a row per point (CSV)", .cols = kr_cols,
                                          .ncols = KR_NCOLS, .no_json = 1 };
static const tprof_table_desc *const kt_tables[] = { &kt_devices, &kt_rows };
const tprof_result_desc tprof_mem_trace_timeline_desc = {
    .name = "mem_trace_timeline", .version = 1, .top = &tl_top, .tables = kt_tables, .ntables = 2, .csv_table = 2,
    .no_label = 1, .doc = "`trainprof mem --timeline PREFIX` on a trace's [memory] events.",
};

int tprof_mem_trace_timeline_tables(const tprof_mem_kreport *r, tprof_result **out)
{
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_mem_trace_timeline_desc);
    if (!res) return TPROF_ENOMEM;
    tprof_rows *devs = tprof_result_table(res, 0), *rows = tprof_result_table(res, 1);
    int rc = 0;
    for (size_t i = 0; !rc && i < r->ndev; i++) {
        const tprof_mem_kdevice *d = &r->dev[i];
        long k = tprof_rows_add(devs);
        tprof_rows *pts = k < 0 ? NULL : tprof_rows_child(devs, (size_t)k, 0);
        if (!pts) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(devs, (size_t)k, TL_DEVICE, d->device);
        for (size_t j = 0; !rc && j < d->npts; j++) {
            long p = tprof_rows_add(pts), q = tprof_rows_add(rows);
            if (p < 0 || q < 0) {
                rc = TPROF_ENOMEM;
                break;
            }
            const int64_t v[] = { d->pts[j].ts, d->pts[j].allocated, d->pts[j].reserved };
            for (size_t c = 0; c < KP_NCOLS; c++) tprof_rows_set_i(pts, (size_t)p, c, v[c]);
            tprof_rows_set_i(rows, (size_t)q, KR_DEVICE, d->device);
            for (size_t c = 0; c < KP_NCOLS; c++) tprof_rows_set_i(rows, (size_t)q, c + 1, v[c]);
        }
    }
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
