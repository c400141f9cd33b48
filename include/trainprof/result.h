/* Results as typed tables: one description per result type, rendered to a
 * text table, CSV and JSON from the description alone, written to and read
 * back from a versioned text form, and combined across ranks by each
 * column's rule.
 *
 * A description (static, given once per result type) names each column
 * (snake_case: the JSON key and the CSV header), its kind (which says its
 * unit) and how it combines across ranks. A result holds the rows of one
 * description: a top table of one row (the scalars) and named child tables,
 * which may have child tables per row in turn (the calls of each collective
 * type). Analyses stay pure functions; adapters fill results from their
 * structs.
 *
 * Values are int64 (counts, ns, bytes, ranks, timestamps), double (rates,
 * ratios) or strings, each possibly null. Ratios given by a numerator and a
 * denominator column are derived after combining, never combined themselves.
 *
 * Ownership: a result owns its rows and strings; descriptions are the
 * caller's (static). */
#ifndef TRAINPROF_RESULT_H
#define TRAINPROF_RESULT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trainprof/report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TPROF_COL_COUNT = 0, /* int64: events, calls */
    TPROF_COL_DURATION,  /* int64 ns: "12.3 ms" in tables */
    TPROF_COL_BYTES,     /* int64 bytes: "1.5 GiB" */
    TPROF_COL_RATIO,     /* double 0..1: "12.3%" in tables, raw in CSV and JSON */
    TPROF_COL_RATE,      /* double, unit in the title (GB/s, TFLOP/s) */
    TPROF_COL_TIMESTAMP, /* int64 ns since the trace's epoch */
    TPROF_COL_RANK,      /* int64 */
    TPROF_COL_INT,       /* int64 with no unit (a step number, a group size) */
    TPROF_COL_REAL,      /* double with no unit */
    TPROF_COL_STRING,
    TPROF_COL_ENUM, /* a string from a fixed set (a class, a phase) */
    TPROF_COL_BOOL, /* int64 0/1: true/false in JSON, 0/1 in CSV, yes/no in tables */
    TPROF_COL_MEAN_NS, /* double ns (a mean duration): "12.3 ms" in tables, rounded to the ns */
} tprof_col_kind;

/* How a column combines over ranks (rows of one key, one per rank). */
typedef enum {
    TPROF_COMBINE_SUM = 0,
    TPROF_COMBINE_MIN,
    TPROF_COMBINE_MAX,
    TPROF_COMBINE_WMEAN,    /* weighted by the column named in `weight` */
    TPROF_COMBINE_DIST,     /* a distribution: the combined cell is its p50 */
    TPROF_COMBINE_FIRST,    /* the value of the lowest rank (names, sizes every rank shares) */
    TPROF_COMBINE_PER_RANK, /* no combined value (null) */
    TPROF_COMBINE_DERIVED,  /* num / den after combining (ratios) */
} tprof_combine;

enum {
    TPROF_COLF_KEY = 1,       /* identifies the row: rows of equal keys combine */
    TPROF_COLF_METRIC = 2,    /* the key metric: "worst ranks" sort by it, highest first */
    TPROF_COLF_NO_TABLE = 4,  /* not in the text table */
    TPROF_COLF_NO_CSV = 8,    /* not in CSV */
    TPROF_COLF_NO_JSON = 16,  /* not in JSON */
    TPROF_COLF_LOW_WORST = 32, /* with METRIC: lower is worse (a throughput) */
    TPROF_COLF_OMIT_NULL = 64, /* JSON: a null cell is left out, not written as null */
    TPROF_COLF_WHOLE = 128,    /* a double count (tokens, FLOPs): a JSON integer when whole and exact */
    TPROF_COLF_SHORTEST = 256, /* CSV: the shortest of %.15g..%.17g that reads back; nan, inf, -inf */
    TPROF_COLF_NAN_NAMED = 512, /* JSON: a value that is not finite as "nan", "inf" or "-inf", not null */
    TPROF_COLF_CSV_NAN_NAMED = 1024, /* CSV: a value that is not finite as nan, inf or -inf, not empty */
    TPROF_COLF_NAMES = 2048, /* text table: kernel names, shortened and kept distinct (tprof_table_names);
                              * CSV and JSON keep them whole */
};

typedef struct {
    const char *name;  /* snake_case: JSON key, CSV header */
    tprof_col_kind kind;
    tprof_combine combine;
    const char *title; /* text-table heading; NULL: the name */
    const char *doc;   /* one line for the schema docs */
    unsigned flags;    /* TPROF_COLF_* */
    const char *weight; /* WMEAN: the weighting column */
    const char *num, *den; /* DERIVED: the ratio's columns; "top.NAME" is the top table's column
                            * (a share of the result's total) */
    double scale;          /* DERIVED: num / den times this (0: 1), for a unit (FLOPs per ns -> TFLOP/s) */
    const char *csv_name; /* the CSV header when it differs from the JSON key (NULL: name) */
    int width;          /* text table: cut longer cells in the middle (0: never) */
    int decimals;       /* RATE / REAL / RATIO in tables (0: 2, RATIO 1) */
    int csv_decimals;   /* a double in CSV with this many decimals (0: shortest exact, %.17g) */
    int csv_digits;     /* or with this many significant digits (%.*g) */
} tprof_col_desc;

/* A column given by position for the usual five fields, the rest by
 * designator: TPROF_COL("idle_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM,
 * "idle", "span minus busy", .flags = TPROF_COLF_METRIC). */
#define TPROF_COL(NAME, KIND, COMBINE, TITLE, DOC, ...)                                                    \
    { .name = (NAME), .kind = (KIND), .combine = (COMBINE), .title = (TITLE), .doc = (DOC), __VA_ARGS__ }

typedef struct tprof_table_desc {
    const char *name;  /* JSON key of the row array; "" for the top table */
    const char *title; /* heading above the text table; may be NULL */
    const char *doc;
    const tprof_col_desc *cols;
    size_t ncols;
    const struct tprof_table_desc *const *children; /* tables per row */
    size_t nchildren;
    /* JSON: an object whose members are named by each row's first key
     * column (a string), each an object of the other columns, instead of an
     * array of row objects ("phases": {"forward": {...}, ...}) */
    int json_keyed;
    /* JSON: an array of the values of the first JSON column ([0.5, 1, ...]),
     * for a series, instead of an array of row objects */
    int json_values;
    int no_json; /* a table for CSV or the text table only (a CSV with a total row) */
    /* with json_keyed, for a child table: its keyed members are written
     * into the parent row's object itself ("host_wait": {...} beside
     * "device"), not under the table's name */
    int json_inline;
    /* a ranking (kernels by time): renderers given a row limit (--top N)
     * show its first N rows; the result keeps them all */
    int limited;
    /* JSON: a table of at most one row as an object of its columns ("steps":
     * {...}), null when it has none */
    int json_single;
    int json_null_empty; /* JSON: null instead of an empty array or object */
    int json_omit_empty; /* JSON: left out when it has no row */
    /* JSON: a long-form table (key, name, value: a series) written wide, one
     * object per run of rows with the same key: {"step": 3, "loss": 2.1, ...} */
    int json_wide;
    /* with json_keyed: each member is the value of the one other JSON
     * column ({"cpu_op": 12, ...}), not an object */
    int json_keyed_value;
    /* JSON: written right after this column of the parent row (a table of
     * the result: of the top table); NULL: after all of them */
    const char *json_after;
} tprof_table_desc;

typedef struct {
    const char *name;    /* the result type: "comm", "temporal" */
    unsigned version;    /* bumped when a column changes meaning */
    const tprof_table_desc *top; /* the scalars: one row */
    const tprof_table_desc *const *tables;
    size_t ntables;
    int csv_table; /* whose rows CSV prints: 0 the top table, I+1 table I */
    int no_csv;    /* no CSV form (nested tables that do not flatten) */
    /* CSV: every table in turn (tprof_result_csv_tables), not one table's rows */
    int csv_tables;
    /* one result for the whole run (ranks side by side), not one per trace:
     * JSON is its object alone, CSV its rows without trace,file */
    int whole_run;
    int json_tables_first; /* JSON: the tables before the top table's columns */
    int json_rows_only;    /* with whole_run, JSON: the CSV table's rows alone, an array */
    /* not printed by a command: a per-rank input of cross-rank analyses,
     * described so that it can be written and read back (MPI) */
    int internal;
    /* per trace: JSON and CSV name the trace by its file alone (no label) */
    int no_label;
    const char *doc;
} tprof_result_desc;

typedef struct {
    union {
        int64_t i;
        double d;
        const char *s; /* owned by the result */
    } v;
    uint8_t null;
} tprof_cell;

typedef struct tprof_rows tprof_rows;
typedef struct tprof_result tprof_result;

tprof_result *tprof_result_new(const tprof_result_desc *d);
void tprof_result_free(tprof_result *r);
const tprof_result_desc *tprof_result_desc_of(const tprof_result *r);
/* The top table (one row, created empty: null cells). */
tprof_rows *tprof_result_top(tprof_result *r);
/* Child table I of the result. */
tprof_rows *tprof_result_table(tprof_result *r, size_t i);
const tprof_rows *tprof_result_table_c(const tprof_result *r, size_t i);
const tprof_rows *tprof_result_top_c(const tprof_result *r);

/* Appends a row of null cells; returns its index or -1 (out of memory). */
long tprof_rows_add(tprof_rows *t);
size_t tprof_rows_count(const tprof_rows *t);
const tprof_table_desc *tprof_rows_desc(const tprof_rows *t);
/* Child table C of row ROW (created on first use). NULL when out of memory. */
tprof_rows *tprof_rows_child(tprof_rows *t, size_t row, size_t c);
const tprof_rows *tprof_rows_child_c(const tprof_rows *t, size_t row, size_t c);
/* Setters by column index; a string is copied. 0 or TPROF_ENOMEM. */
void tprof_rows_set_i(tprof_rows *t, size_t row, size_t col, int64_t v);
void tprof_rows_set_d(tprof_rows *t, size_t row, size_t col, double v);
int tprof_rows_set_s(tprof_rows *t, size_t row, size_t col, const char *s);
void tprof_rows_set_null(tprof_rows *t, size_t row, size_t col);
const tprof_cell *tprof_rows_cell(const tprof_rows *t, size_t row, size_t col);
/* Column index of NAME, or -1. */
int tprof_table_col(const tprof_table_desc *d, const char *name);
/* Cell COL (by name) of row ROW, or NULL when T has no such column or row;
 * and its value: 0, NAN or NULL when the cell is null or absent. */
const tprof_cell *tprof_rows_at(const tprof_rows *t, size_t row, const char *col);
int64_t tprof_rows_int(const tprof_rows *t, size_t row, const char *col);
double tprof_rows_real(const tprof_rows *t, size_t row, const char *col);
const char *tprof_rows_str(const tprof_rows *t, size_t row, const char *col);
/* A copy of R's top row alone, in a result of R's description (what an
 * across-ranks view keeps of each rank). 0 or TPROF_ENOMEM. */
int tprof_result_top_only(const tprof_result *r, tprof_result **out);
/* Derives every DERIVED column (num / den; null when den is 0 or null). */
void tprof_result_derive(tprof_result *r);
/* The same for one table (and its child tables). */
void tprof_rows_derive(tprof_rows *t);
/* Appends copies of SRC's rows (with their child tables) to DST, a table of
 * the same columns in another result: 0, TPROF_EUSAGE (other columns) or
 * TPROF_ENOMEM. */
int tprof_rows_append(tprof_rows *dst, const tprof_rows *src);
/* Sorts T's rows (with their child tables) by the columns COLS[0..N), the
 * first deciding, each descending where DESC[i]; nulls last. */
int tprof_rows_sort(tprof_rows *t, const int *cols, const int *desc, size_t n);

/* ---- renderers ----------------------------------------------------------- */

/* The text table of T's first LIMIT rows (0: all): headings from titles,
 * human units, aligned. */
int tprof_rows_print_table(const tprof_rows *t, size_t limit, FILE *f);
/* The top rows of N results of one description as one text table, each
 * row after its label (a first column headed LABEL_TITLE). */
int tprof_results_print_top(const tprof_result *const *rs, const char *const *labels, size_t n,
                            const char *label_title, FILE *f);
/* The across-ranks view of N results' top rows: per numeric column shown
 * in tables, min / p50 / p90 / max over the results, each extreme after
 * the label of the result holding it (LABELS[i] names RS[i]). */
int tprof_results_print_dist(const tprof_result *const *rs, const char *const *labels, size_t n, FILE *f);
/* The top rows of RS[WHICH[0..K)] as one text table, as
 * tprof_results_print_top does for all of them. */
int tprof_results_print_some(const tprof_result *const *rs, const char *const *labels, const size_t *which,
                             size_t k, const char *label_title, FILE *f);
/* The CSV header (PREFIX, then T's CSV columns) and T's first LIMIT rows
 * (0: all) after the PREFIX cells (each row's label, file); raw base units. */
void tprof_rows_csv_header(const tprof_table_desc *d, const char *prefix, FILE *f);
void tprof_rows_csv(const tprof_rows *t, const char *const *prefix, size_t nprefix, size_t limit, FILE *f);
/* Every table of R (of description D; R NULL: the headers alone) as CSV,
 * one after another, each after a line "# table: NAME"; a child table as
 * "# table: PARENT.CHILD" with its rows after the keys of their parent rows
 * (the parent's key columns; a table of the result without any: its first
 * column). `limited` tables show their first LIMIT rows (0: all). */
void tprof_result_csv_tables(const tprof_result_desc *d, const tprof_result *r, size_t limit, FILE *f);
/* One cell as CSV writes it in column C (nothing when null). */
void tprof_csv_cell(const tprof_col_desc *c, const tprof_cell *v, FILE *f);
/* The result as JSON members of an object the caller opened (the top
 * table's columns, then each table as an array of row objects); tables
 * marked `limited` show their first LIMIT rows (0: all). */
void tprof_result_json_members(const tprof_result *r, size_t limit, tprof_jw *w);
/* T alone as a JSON value (an array of row objects, or as its description
 * says), its first LIMIT rows when it is `limited` (0: all). */
void tprof_rows_json(const tprof_rows *t, size_t limit, tprof_jw *w);

/* The description as Markdown: a section per table, a row per column
 * (name, kind, rule across ranks, formats it is in, meaning); docs/SCHEMA.md
 * is made of these. */
void tprof_result_desc_markdown(const tprof_result_desc *d, FILE *f);

/* ---- serialisation -------------------------------------------------------- */

/* A versioned text form: integers exact, doubles as C99 hex floats (exact),
 * strings JSON-escaped. Reading needs the description the result was
 * written with (name and version must match). */
int tprof_result_write(const tprof_result *r, FILE *f);
int tprof_result_read(tprof_result **out, const tprof_result_desc *d, FILE *f, char *errbuf, size_t errlen);
/* Same values, same shape (doubles compared bit for bit). */
int tprof_result_equal(const tprof_result *a, const tprof_result *b);

/* ---- across ranks ------------------------------------------------------------ */

/* The distribution of one numeric column over ranks. */
typedef struct {
    size_t n;                /* ranks with a value */
    double min, p50, p90, max;
    int64_t min_rank, max_rank; /* the rank holding each extreme (the lowest one on ties) */
} tprof_col_dist;

/* The distribution of VALUES[0..N) (NaN: no value), RANKS[i] naming each
 * (NULL: the index i). */
int tprof_dist_of(const double *values, const int64_t *ranks, size_t n, tprof_col_dist *out);
/* The indexes of the K highest of VALUES[0..N) (LOWEST: the K lowest), NaN
 * skipped, worst first, a tie in index order, into OUT; returns how many. */
size_t tprof_dist_worst(const double *values, size_t n, size_t k, int lowest, size_t *out);
/* Over N results of one description (RANKS[i] the rank of RESULTS[i]), for
 * the top table: the distribution of column COL. p50 and p90 are the
 * nearest-rank percentiles (the value at ceil(p*n) in sorted order). */
int tprof_ranks_dist(const tprof_result *const *results, const int64_t *ranks, size_t n, int col,
                     tprof_col_dist *out);
/* The K ranks worst by the top table's metric column (RANKS NULL: ranked by index): indexes into RESULTS,
 * worst first (ties: lower rank first). Returns how many were written. */
size_t tprof_ranks_worst(const tprof_result *const *results, const int64_t *ranks, size_t n, size_t k,
                         size_t *out);
/* One result combining N results by the columns' rules: the top row, and
 * each table's rows matched by their key columns (order: first seen, in
 * rank order). Ratios are derived afterwards. NULL when out of memory. */
tprof_result *tprof_ranks_combine(const tprof_result *const *results, const int64_t *ranks, size_t n);

/* The same, one result at a time: results of one description added in
 * rank order make what tprof_ranks_combine makes of them, while the fold
 * holds per row key and column only what the rules need (sums, extremes,
 * first values, a distribution's values), never the results. */
typedef struct tprof_fold tprof_fold;
tprof_fold *tprof_fold_new(const tprof_result_desc *d); /* NULL: out of memory */
/* 0, TPROF_ENOMEM, TPROF_EUSAGE (another description) or TPROF_ELIMIT
 * (tables nested too deep); after an error the fold takes no more. */
int tprof_fold_add(tprof_fold *f, const tprof_result *r);
size_t tprof_fold_count(const tprof_fold *f); /* results added */
/* The combined result (ratios derived) into *OUT, F freed either way: 0,
 * the first error of the adds, or TPROF_EUSAGE when none was added. */
int tprof_fold_end(tprof_fold *f, tprof_result **out);
void tprof_fold_free(tprof_fold *f);

#ifdef __cplusplus
}
#endif
#endif
