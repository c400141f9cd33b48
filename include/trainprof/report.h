/* Renderers: human tables, CSV and JSON writers, unit formatting.
 * They format what analyses computed; they never compute. */
#ifndef TRAINPROF_REPORT_H
#define TRAINPROF_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "812 ns", "12.3 us", "4.56 ms", "1.234 s" */
char *tprof_fmt_duration(char *buf, size_t len, int64_t ns);
/* "512 B", "1.5 KiB", "3.2 MiB", "1.07 GiB": 3 significant digits, no exponent */
char *tprof_fmt_bytes(char *buf, size_t len, int64_t bytes);
/* A progress line: "[#####.....]  42% 1.26 GiB / 3 GiB, 350 MiB/s (8 files)"
 * when TOTAL (bytes) is known (> 0); otherwise, as on a pipe, no share but
 * the bytes read and the rate: "83.6 MiB read, 41.2 MiB/s (1 file)". RATE
 * in bytes per second, negative: not known yet (left out). WHAT, when not
 * NULL, names the phase ("rewriting"). */
char *tprof_fmt_progress(char *buf, size_t len, uint64_t done, int64_t total, double rate, int nfiles,
                         const char *what);
/* How every output names a trace: "rank R" when it says its rank (R >= 0),
 * else "trace I", I its place among the traces read. */
char *tprof_fmt_trace_label(char *buf, size_t len, int64_t rank, size_t index);
/* RANKS[0..K) in words, among the run's ALL[0..N): "rank 3", "ranks 0-63",
 * "ranks 0-63 except 17" (when ALL is one run of ranks and RANKS leaves
 * out at most 3 of it), else the runs
 * "ranks 0-3, 8, 10-12" (at most 6, then ", ... (K ranks)"). */
char *tprof_fmt_rank_set(char *buf, size_t len, const int64_t *ranks, size_t k, const int64_t *all, size_t n);

/* A text table: columns with a header and an alignment ('l' or 'r'). Cells
 * are copied. Long cells in the column marked with a width limit are cut
 * with "..." in the middle so both ends stay readable. */
typedef struct tprof_table tprof_table;
tprof_table *tprof_table_new(int ncols, const char *const *headers, const char *aligns);
void tprof_table_limit(tprof_table *t, int col, int max_width);
/* Column COL holds kernel names: printed shortened and kept distinct
 * (tprof_names_display), within its width limit or the layout's. */
void tprof_table_names(tprof_table *t, int col);
/* How every text table lays out name columns, set once by the program
 * before printing: WIDE prints names in full (no shortening, no limit);
 * COLUMNS > 0 (a terminal's width) gives the name column what the other
 * columns leave of it, instead of its fixed limit. */
void tprof_table_layout(int wide, int columns);
void tprof_table_layout_get(int *wide, int *columns);
/* The footnote printed under a table whose names were numbered. */
#define TPROF_NAMES_FOOTNOTE "#N: different kernels whose shortened names are alike, numbered in order (--wide: full names)"

/* A kernel name as tables show it (docs/METRICS.md): at LEVEL 0 its template
 * arguments collapsed to <...>, its parameter list and return type dropped
 * ("void f<4, g<float>>(int)" -> "f<...>"); at LEVEL L the template
 * arguments shown to depth L; past its deepest, the name in full. A name
 * that is no C++ signature (no '<' or '(', a "Memcpy HtoD (Pageable ->
 * Device)", an unclosed bracket) is kept as it is. malloc'd; NULL when out
 * of memory. */
char *tprof_name_short(const char *name, int level);
/* The N names of one table as it shows them, into OUT[0..N) (malloc'd):
 * each shortened (level 0) and cut to WIDTH code points with "..." in the
 * middle (WIDTH <= 5: never cut); different names that show alike get their
 * template arguments back a level at a time, then their full text, and
 * what still shows alike ends with " #1", " #2" (*NUMBERED set), in the
 * order of their first row. Equal names show equal. 0, or -1 (out of
 * memory, OUT all NULL). */
int tprof_names_display(const char *const *names, size_t n, int width, char **out, int *numbered);
int tprof_table_row(tprof_table *t, const char *const *cells);
void tprof_table_print(const tprof_table *t, FILE *f);
void tprof_table_free(tprof_table *t);

/* Axis ticks over [LO, HI]: at most MAX values, a step of 1, 2 or 5 times a
 * power of ten, into OUT; their count (0 when LO or HI is not finite). */
size_t tprof_ticks(double lo, double hi, size_t max, double *out);

/* CSV: a field quoted when it holds a comma, quote or newline (RFC 4180). */
void tprof_csv_field(FILE *f, const char *s);

/* S as XML text (SVG labels): markup characters escaped, valid UTF-8 kept,
 * control bytes and broken UTF-8 written as '?'. At most MAX bytes of S, cut
 * between characters and followed by "..." when cut. */
void tprof_xml_text(FILE *f, const char *s, size_t max);

/* A streaming JSON writer with commas and escaping handled; nesting up to
 * TPROF_JW_MAX_DEPTH levels. */
#define TPROF_JW_MAX_DEPTH 1024
typedef struct {
    FILE *f;
    int depth;
    unsigned char first[TPROF_JW_MAX_DEPTH + 1]; /* per depth: no element written yet */
    int after_key;
} tprof_jw;
void tprof_jw_init(tprof_jw *w, FILE *f);
void tprof_jw_obj(tprof_jw *w);
void tprof_jw_obj_end(tprof_jw *w);
void tprof_jw_arr(tprof_jw *w);
void tprof_jw_arr_end(tprof_jw *w);
void tprof_jw_key(tprof_jw *w, const char *k);
void tprof_jw_str(tprof_jw *w, const char *s); /* NULL writes null */
void tprof_jw_int(tprof_jw *w, int64_t v);
void tprof_jw_uint(tprof_jw *w, uint64_t v);
void tprof_jw_double(tprof_jw *w, double v);
void tprof_jw_bool(tprof_jw *w, int v);
void tprof_jw_null(tprof_jw *w);
void tprof_json_escape(FILE *f, const char *s);
/* A key and its value in one call. */
void tprof_jw_kstr(tprof_jw *w, const char *k, const char *s);
void tprof_jw_kint(tprof_jw *w, const char *k, int64_t v);
void tprof_jw_kuint(tprof_jw *w, const char *k, uint64_t v);
void tprof_jw_kdouble(tprof_jw *w, const char *k, double v);
void tprof_jw_kbool(tprof_jw *w, const char *k, int v);

#ifdef __cplusplus
}
#endif
#endif
