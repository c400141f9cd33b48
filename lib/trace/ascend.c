/* Ascend kernel tables read as traces: torch_npu's kernel_details.csv and
 * msprof's op_summary_*.csv, one row per device task. Each row becomes a
 * device event (a complete event on its task's stream, its category the
 * accelerator core that ran it), stored as a JSON event is, so that every
 * trace analysis reads these files unchanged; the Step Id column gives the
 * steps, each over the extent of its tasks. Column names are those of
 * msprof-analyze's parsers and Ascend's documentation; docs/METRICS.md
 * ("Ascend kernel tables") says what is read. A last row without its
 * newline is read when it has every column (else the file was cut there). */
#include "reader_internal.h"
#include "../io/csv.h"

#include "trainprof/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_NAME, C_START, C_DUR, C_CORE, C_STREAM, C_STEP, C_DEVICE, C_STATE, C_TYPE, C_BLOCK, C_WAIT, C_AIC_MAC,
       C_AIC_MTE2, C_AIV_VEC, C_AIV_MTE2, C_NCOLS };
#define C_REQUIRED 3 /* name, start and duration */

/* Each column's names across versions: kernel_details.csv's first, then op_summary's. */
static const char *const column_names[C_NCOLS][3] = {
    [C_NAME] = { "Name", "Op Name", NULL },
    [C_START] = { "Start Time(us)", "Task Start Time(us)", NULL },
    [C_DUR] = { "Duration(us)", "Task Duration(us)", NULL },
    [C_CORE] = { "Accelerator Core", "Task Type", NULL },
    [C_STREAM] = { "Stream ID", NULL, NULL },
    [C_STEP] = { "Step Id", NULL, NULL },
    [C_DEVICE] = { "Device_id", "Device ID", NULL },
    [C_STATE] = { "OP State", NULL, NULL }, /* static or dynamic shape (CANN 8.0 and later) */
    [C_TYPE] = { "Type", "OP Type", NULL },
    [C_BLOCK] = { "Block Dim", "Block Num", NULL },
    [C_WAIT] = { "Wait Time(us)", "Task Wait Time(us)", NULL },
    [C_AIC_MAC] = { "aic_mac_ratio", NULL, NULL }, /* the AI Core metrics (aic_metrics=PipeUtilization) */
    [C_AIC_MTE2] = { "aic_mte2_ratio", NULL, NULL },
    [C_AIV_VEC] = { "aiv_vec_ratio", NULL, NULL },
    [C_AIV_MTE2] = { "aiv_mte2_ratio", NULL, NULL },
};

/* The task's other columns, for the event just stored (TPROF_KEEP_TASK_INFO). */
static int add_task_info(tprof_trace *t, char **f, size_t nf, const long *col)
{
    if (tprof_grow((void **)&t->tasks, &t->taskcap, t->ntasks + 1, sizeof *t->tasks)) return TPROF_ENOMEM;
    tprof_task_info *x = &t->tasks[t->ntasks];
    *x = (tprof_task_info){ .event = t->nev - 1, .block_dim = -1, .wait_ns = -1 };
    size_t len;
    int64_t v;
    const char *s = tprof_csv_value(f, nf, col[C_TYPE], &len);
    if (s && (x->type = tprof_strtab_intern(&t->strs, s, len)) == UINT32_MAX) return TPROF_ENOMEM;
    if ((s = tprof_csv_value(f, nf, col[C_BLOCK], &len)) && !tprof_json_parse_int(s, len, &v) && v >= 0 && v < INT32_MAX)
        x->block_dim = (int32_t)v;
    if ((s = tprof_csv_value(f, nf, col[C_WAIT], &len)) && !tprof_json_parse_scaled(s, len, 3, &v) && v >= 0)
        x->wait_ns = v;
    for (int k = 0; k < TPROF_TASK_RATIOS; k++) {
        s = tprof_csv_value(f, nf, col[C_AIC_MAC + k], &len);
        double d = s ? tprof_json_parse_double(s, len) : NAN;
        x->ratio[k] = isfinite(d) && d >= 0 && d <= 1e6 ? d : NAN;
    }
    t->ntasks++;
    return 0;
}

/* The extent of each step's tasks, in the order the steps are met. */
typedef struct {
    int64_t number, lo, hi;
} step_extent;

static int extend_step(step_extent **steps, size_t *n, size_t *cap, int64_t number, int64_t lo, int64_t hi)
{
    for (size_t i = *n; i-- > 0;) /* the same step as the rows before, mostly */
        if ((*steps)[i].number == number) {
            if (lo < (*steps)[i].lo) (*steps)[i].lo = lo;
            if (hi > (*steps)[i].hi) (*steps)[i].hi = hi;
            return 0;
        }
    if (tprof_grow((void **)steps, cap, *n + 1, sizeof **steps)) return TPROF_ENOMEM;
    (*steps)[(*n)++] = (step_extent){ number, lo, hi };
    return 0;
}

static ssize_t csv_source_read(void *ctx, void *buf, size_t cap) { return tprof_source_read(ctx, buf, cap); }

/* Reads the rows into T (FILE_SIZE bytes, -1 unknown: the event array is
 * reserved from it). 0, TPROF_ETRUNC (the last row cut: what was read
 * before it stays), or an error with MSG set. */
static int read_rows(tprof_trace *t, tprof_csv *csv, int64_t file_size, const tprof_read_opts *opts, char *msg,
                     size_t msglen)
{
    char **f;
    size_t nf;
    int rc = tprof_csv_row(csv, &f, &nf);
    if (rc <= 0) {
        snprintf(msg, msglen, "%s", rc ? tprof_csv_errmsg(csv) : "an empty file: no header row");
        return rc ? rc : TPROF_EFORMAT;
    }
    long col[C_NCOLS];
    size_t need = 0; /* fields a row must have: one past the last column read */
    for (int c = 0; c < C_NCOLS; c++) {
        col[c] = -1;
        for (size_t i = 0; i < nf && col[c] < 0; i++) {
            size_t len;
            const char *h = tprof_csv_value(f, nf, (long)i, &len);
            for (int k = 0; h && k < 3 && column_names[c][k]; k++)
                if (strlen(column_names[c][k]) == len && !memcmp(h, column_names[c][k], len)) col[c] = (long)i;
        }
        if (col[c] < 0 && c < C_REQUIRED) {
            snprintf(msg, msglen, "line 1: not an Ascend kernel table: no '%s' column", column_names[c][0]);
            return TPROF_EFORMAT;
        }
        /* the task's other columns are read where a row has them */
        if (c < C_TYPE && col[c] >= 0 && (size_t)col[c] + 1 > need) need = (size_t)col[c] + 1;
    }
    size_t header_fields = nf;
    reader r = { .t = t, .opts = opts };
    uint64_t rows = 0, reserve_at = 1024; /* room for all the rows, once their size is known */
    step_extent *steps = NULL;
    size_t nsteps = 0, stepcap = 0;
    while ((rc = tprof_csv_row(csv, &f, &nf)) > 0) {
        if (++rows == reserve_at && file_size > 0) { /* the rows' mean size so far sizes the array */
            double per_row = (double)tprof_csv_row_offset(csv) / (double)rows;
            (void)tprof_trace_reserve(t, (size_t)((double)file_size / per_row * 1.1), 0);
        }
        if (nf < need) {
            snprintf(msg, msglen, "line %llu (byte %llu): %zu fields where the header has %zu%s",
                     (unsigned long long)tprof_csv_row_line(csv), (unsigned long long)tprof_csv_row_offset(csv), nf,
                     header_fields, rc == TPROF_CSV_LAST ? " (the file ends inside this row)" : "");
            rc = rc == TPROF_CSV_LAST ? TPROF_ETRUNC : TPROF_EFORMAT;
            break;
        }
        raw_event e;
        tprof_raw_event_init(&r, &e);
        e.ph = 'X';
        e.task_type = 1; /* a device task */
        size_t len;
        const char *v = tprof_csv_value(f, nf, col[C_NAME], &len);
        if ((rc = tprof_event_set(&r, &e, K_NAME, V_STRING, v ? v : "", v ? len : 0))) break;
        v = tprof_csv_value(f, nf, col[C_CORE], &len);
        if ((rc = tprof_event_set(&r, &e, K_CAT, V_STRING, v ? v : "Ascend task", v ? len : strlen("Ascend task"))))
            break;
        if (v) e.task_cat = e.cat + 1; /* the core is the task's type, as trace_view.json's Task Type */
        if ((v = tprof_csv_value(f, nf, col[C_START], &len))) tprof_event_set(&r, &e, K_TS, V_NUMBER, v, len);
        if ((v = tprof_csv_value(f, nf, col[C_DUR], &len))) tprof_event_set(&r, &e, K_DUR, V_NUMBER, v, len);
        v = tprof_csv_value(f, nf, col[C_DEVICE], &len);
        tprof_event_set_arg(&e, A_DEVICE, V_NUMBER, v ? v : "0", v ? len : 1);
        if ((v = tprof_csv_value(f, nf, col[C_STREAM], &len))) tprof_event_set_arg(&e, A_STREAM, V_NUMBER, v, len);
        if ((v = tprof_csv_value(f, nf, col[C_STATE], &len))) {
            t->meta.op_state_static += len == 6 && !memcmp(v, "static", 6);
            t->meta.op_state_dynamic += len == 7 && !memcmp(v, "dynamic", 7);
        }
        int64_t step;
        v = tprof_csv_value(f, nf, col[C_STEP], &len);
        int stepped = v && !tprof_json_parse_int(v, len, &step) && e.has_ts && !e.ts_bad && e.has_dur &&
                      !e.dur_bad && e.dur >= 0;
        if (stepped && (rc = extend_step(&steps, &nsteps, &stepcap, step, e.ts, tprof_end_ns(e.ts, e.dur)))) break;
        size_t stored = t->nev;
        if ((rc = tprof_store_event(&r, &e, tprof_csv_row_offset(csv)))) break;
        if (t->nev > stored && opts && (opts->keep & TPROF_KEEP_TASK_INFO) && (rc = add_task_info(t, f, nf, col))) break;
    }
    if (rc < 0 && !msg[0]) snprintf(msg, msglen, "%s", tprof_csv_errmsg(csv));
    int src = 0; /* the steps of what was read, also when the file was cut */
    for (size_t i = 0; !src && i < nsteps; i++)
        src = tprof_trace_add_step(t, steps[i].number, steps[i].lo, steps[i].hi - steps[i].lo);
    free(steps);
    tprof_reader_release(&r);
    return src ? src : rc > 0 ? 0 : rc;
}

int tprof_ascend_read_kernels(tprof_trace **out, tprof_source *src, const char *name, const tprof_read_opts *opts,
                              char *errbuf, size_t errlen)
{
    *out = NULL;
    tprof_trace *t = tprof_trace_new(name);
    tprof_csv *csv = NULL;
    if (!t || tprof_csv_open(&csv, csv_source_read, src)) {
        tprof_trace_free(t);
        return TPROF_ENOMEM;
    }
    char msg[300] = "";
    int rc = read_rows(t, csv, tprof_source_file_size(src), opts, msg, sizeof msg);
    tprof_csv_close(csv);
    return tprof_ascend_conclude(out, t, rc, src, TPROF_FORM_ASCEND_TABLE, name, msg, errbuf, errlen);
}

int tprof_ascend_conclude(tprof_trace **out, tprof_trace *t, int rc, tprof_source *src, tprof_form form,
                          const char *name, const char *msg, char *errbuf, size_t errlen)
{
    t->meta.form = form;
    t->meta.compression = tprof_source_compression(src);
    t->meta.bytes_in = tprof_source_bytes_in(src);
    t->meta.file_size = tprof_source_file_size(src);
    t->meta.bytes_json = tprof_source_bytes_out(src);
    tprof_trace_set_note(t, tprof_source_note(src));
    const char *src_msg = tprof_source_errmsg(src);
    char full[400];
    snprintf(full, sizeof full, "%s: %s", name, msg);
    if (rc && rc != TPROF_ETRUNC && !(src_msg && src_msg[0])) snprintf(t->trunc_msg, sizeof t->trunc_msg, "%s", full);
    return tprof_trace_conclude(out, t, rc, src_msg ? src_msg : "", full, errbuf, errlen);
}

void tprof_ascend_say_covered(tprof_trace *t, int rc, const char *what)
{
    char *cut = rc == TPROF_ETRUNC ? strstr(t->trunc_msg, "; results cover") : NULL;
    if (cut)
        snprintf(cut, sizeof t->trunc_msg - (size_t)(cut - t->trunc_msg), "; results cover the %s read before the cut",
                 what);
}
