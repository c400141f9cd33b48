/* Ascend's step split read as a trace of no events: torch_npu's
 * step_trace_time.csv (one rank: Device_id, Step, Computing, ...) and
 * msprof-analyze's cluster_step_trace_time.csv (Step, Type, Index, ...).
 * The cluster file's "rank" rows are kept, Index their rank; its "stage"
 * rows (column maxima over a pipeline stage's ranks) are left out: the
 * cross-rank numbers are made from the rank rows, as msprof-analyze's
 * advisor makes its slow-rank check. Column names are those torch_npu's
 * _trace_step_time_parser.py writes; older versions lack Device_id and
 * Preparing. docs/METRICS.md ("Ascend step split"). */
#include "reader_internal.h"
#include "../io/csv.h"

#include "trainprof/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const split_names[TPROF_SPLIT_COLS] = {
    [TPROF_SPLIT_COMPUTING] = "Computing",
    [TPROF_SPLIT_COMM_NOT_OVERLAPPED] = "Communication(Not Overlapped)",
    [TPROF_SPLIT_OVERLAPPED] = "Overlapped",
    [TPROF_SPLIT_COMMUNICATION] = "Communication",
    [TPROF_SPLIT_FREE] = "Free",
    [TPROF_SPLIT_STAGE] = "Stage",
    [TPROF_SPLIT_BUBBLE] = "Bubble",
    [TPROF_SPLIT_COMM_NO_RECV] = "Communication(Not Overlapped and Exclude Receive)",
    [TPROF_SPLIT_PREPARING] = "Preparing",
};

const char *tprof_split_col_name(tprof_split_col c)
{
    return (unsigned)c < TPROF_SPLIT_COLS ? split_names[c] : "";
}

enum { H_STEP = TPROF_SPLIT_COLS, H_TYPE, H_INDEX, H_NCOLS };

static ssize_t source_read_fn(void *ctx, void *buf, size_t cap) { return tprof_source_read(ctx, buf, cap); }

/* Row problems: the line, the byte, what was expected. */
static int bad_row(const tprof_csv *csv, char *msg, size_t msglen, const char *what, const char *v, size_t len)
{
    snprintf(msg, msglen, "line %llu (byte %llu): %s, not '%.*s'", (unsigned long long)tprof_csv_row_line(csv),
             (unsigned long long)tprof_csv_row_offset(csv), what, (int)(len > 40 ? 40 : len), v);
    return TPROF_EFORMAT;
}

/* Reads the rows of CSV into T's step splits: 0, TPROF_ETRUNC (the last
 * row cut: the rows before it stay), or an error with MSG set. */
static int read_rows(tprof_trace *t, tprof_csv *csv, char *msg, size_t msglen)
{
    char **f;
    size_t nf;
    int rc = tprof_csv_row(csv, &f, &nf);
    if (rc <= 0) {
        snprintf(msg, msglen, "%s", rc ? tprof_csv_errmsg(csv) : "an empty file: no header row");
        return rc ? rc : TPROF_EFORMAT;
    }
    const char *names[H_NCOLS];
    for (int c = 0; c < TPROF_SPLIT_COLS; c++) names[c] = split_names[c];
    names[H_STEP] = "Step", names[H_TYPE] = "Type", names[H_INDEX] = "Index";
    long col[H_NCOLS];
    tprof_csv_header_columns(f, nf, names, H_NCOLS, col);
    static const int required[] = { TPROF_SPLIT_COMPUTING, TPROF_SPLIT_COMM_NOT_OVERLAPPED, TPROF_SPLIT_FREE, H_STEP };
    for (size_t k = 0; k < sizeof required / sizeof *required; k++)
        if (col[required[k]] < 0) {
            snprintf(msg, msglen, "line 1: not an Ascend step table: no '%s' column", names[required[k]]);
            return TPROF_EFORMAT;
        }
    int cluster = col[H_TYPE] >= 0;
    if (cluster && col[H_INDEX] < 0) {
        snprintf(msg, msglen, "line 1: a cluster step table (a Type column) without its Index column");
        return TPROF_EFORMAT;
    }
    size_t need = 0, header_fields = nf; /* fields a row must have: one past the last column read */
    for (int c = 0; c < H_NCOLS; c++)
        if (col[c] >= 0 && (size_t)col[c] + 1 > need) need = (size_t)col[c] + 1;
    while ((rc = tprof_csv_row(csv, &f, &nf)) > 0) {
        if (nf < need) {
            snprintf(msg, msglen, "line %llu (byte %llu): %zu fields where the header has %zu%s",
                     (unsigned long long)tprof_csv_row_line(csv), (unsigned long long)tprof_csv_row_offset(csv), nf,
                     header_fields, rc == TPROF_CSV_LAST ? " (the file ends inside this row)" : "");
            return rc == TPROF_CSV_LAST ? TPROF_ETRUNC : TPROF_EFORMAT;
        }
        tprof_step_split s = { .step = -1, .rank = -1 };
        size_t len;
        const char *v;
        if (cluster) {
            v = tprof_csv_value(f, nf, col[H_TYPE], &len);
            if (!v || len != 4 || memcmp(v, "rank", 4) != 0) continue; /* a stage's maxima */
            v = tprof_csv_value(f, nf, col[H_INDEX], &len);
            if (!v || tprof_json_parse_int(v, len, &s.rank) || s.rank < 0)
                return bad_row(csv, msg, msglen, "a rank row's Index is its rank", v ? v : "", v ? len : 0);
        }
        /* an empty Step: a run without a step schedule (msprof-analyze keys it -1) */
        if ((v = tprof_csv_value(f, nf, col[H_STEP], &len)) && tprof_json_parse_int(v, len, &s.step))
            return bad_row(csv, msg, msglen, "Step is a step number", v, len);
        for (int c = 0; c < TPROF_SPLIT_COLS; c++) {
            s.ns[c] = INT64_MIN;
            if ((v = tprof_csv_value(f, nf, col[c], &len)) && tprof_json_parse_scaled(v, len, 3, &s.ns[c])) {
                char what[96];
                snprintf(what, sizeof what, "%s is a time in us", split_names[c]);
                return bad_row(csv, msg, msglen, what, v, len);
            }
        }
        if (tprof_grow((void **)&t->splits, &t->splitcap, t->nsplits + 1, sizeof *t->splits)) return TPROF_ENOMEM;
        t->splits[t->nsplits++] = s;
    }
    if (rc < 0 && !msg[0]) snprintf(msg, msglen, "%s", tprof_csv_errmsg(csv));
    return rc;
}

int tprof_ascend_steps_into(tprof_trace *t, tprof_source *src, char *msg, size_t msglen)
{
    tprof_csv *csv;
    msg[0] = 0;
    if (tprof_csv_open(&csv, source_read_fn, src)) return TPROF_ENOMEM;
    int rc = read_rows(t, csv, msg, msglen);
    tprof_csv_close(csv);
    return rc;
}

int tprof_ascend_read_steps(tprof_trace **out, tprof_source *src, const char *name, char *errbuf, size_t errlen)
{
    *out = NULL;
    tprof_trace *t = tprof_trace_new(name);
    if (!t) return TPROF_ENOMEM;
    char msg[300];
    int rc = tprof_ascend_steps_into(t, src, msg, sizeof msg);
    size_t rows = t->nsplits;
    rc = tprof_ascend_conclude(out, t, rc, src, TPROF_FORM_ASCEND_STEPS, name, msg, errbuf, errlen);
    char what[64];
    snprintf(what, sizeof what, "%zu step rows", rows);
    if (*out) tprof_ascend_say_covered(*out, rc, what);
    return rc;
}
