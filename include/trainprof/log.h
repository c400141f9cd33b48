/* Training logs into per-step metric series: VeOmni-style metric dicts
 * (JSON or Python repr), JSON lines, tqdm bars with postfix metrics, llm.c
 * step lines and generic "key: value" / "key=value" lines that name their
 * step (key-value pairs elsewhere: config dumps, banners, are no metrics).
 * Lines that parse to nothing are counted, never errors; nothing in a log
 * is executed.
 *
 * docs/METRICS.md ("trainprof log") states how steps are assigned, the
 * summary statistics, the warm-up rule and every anomaly threshold.
 *
 * Ownership: tprof_log_new / tprof_log_read return a log the caller frees
 * with tprof_log_free. Names, points and anomalies point into the log. */
#ifndef TRAINPROF_LOG_H
#define TRAINPROF_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trainprof/result.h"
#include "trainprof/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TPROF_LOG_NONE = 0, /* nothing found */
    TPROF_LOG_JSON,     /* a line that is one JSON object */
    TPROF_LOG_DICT,     /* a {...} dict after a prefix, JSON or Python repr */
    TPROF_LOG_TQDM,     /* a tqdm progress bar: N/M [..., rate, postfix] */
    TPROF_LOG_LLMC,     /* llm.c: step N/M | loss X | X ms | X% MFU | X tok/s */
    TPROF_LOG_KV,       /* key: value, key=value anywhere in a line that names its step */
    TPROF_LOG_NFORMATS
} tprof_log_format;

const char *tprof_log_format_name(tprof_log_format f);

/* One parsed line (one \r-separated segment of it). */
#define TPROF_LOG_MAX_KV 256
#define TPROF_LOG_KEY_MAX 128
typedef struct {
    char key[TPROF_LOG_KEY_MAX];
    double value;
} tprof_log_kv;

typedef struct {
    tprof_log_format format;
    int64_t step; /* -1: the line names no step */
    size_t n;
    tprof_log_kv kv[TPROF_LOG_MAX_KV];
} tprof_log_record;

/* Parses one line without its newline ('\r' inside is not split here; ANSI
 * colour codes are skipped). Returns the count of metrics found (0: the line
 * holds none, but out->step may still be set). */
size_t tprof_log_parse_line(const char *line, size_t len, tprof_log_record *out);

typedef struct tprof_log tprof_log;

/* Dicts, lists and tuples in a metric dict nest at most this deep; a line
 * with a deeper value is not read as a dict (other formats may still take
 * it) and gets a warning (tprof_log_warnings). */
#define TPROF_LOG_MAX_DEPTH 64

tprof_log *tprof_log_new(const char *name);
/* Bytes of the log in any chunking; lines end at '\n', segments at '\r'. */
int tprof_log_feed(tprof_log *lg, const void *data, size_t len);
/* Ends the input: the last line, the points sorted by step, the anomalies.
 * Returns 0; TPROF_ETRUNC when the last line had no newline and was cut
 * inside a value (docs/METRICS.md states the rule): that line was dropped,
 * the rest is finished and tprof_log_truncation says which line;
 * TPROF_ENOMEM. */
int tprof_log_finish(tprof_log *lg);
/* Reads PATH ("-" stdin; gzip and zstd detected) and finishes it. Returns 0;
 * TPROF_ETRUNC (a cut compressed stream or a cut last line, ERRBUF says
 * which) with *out holding what was read; TPROF_EFORMAT (no metric in the
 * file, cut or not: ERRBUF names the formats expected; *out still set) or
 * TPROF_EIO / TPROF_ENOMEM (*out NULL). */
int tprof_log_read(tprof_log **out, const char *path, char *errbuf, size_t errlen);
/* The same, calling PROGRESS (may be NULL) about every 16 MiB read from the
 * file and at its end. */
int tprof_log_read_progress(tprof_log **out, const char *path, tprof_progress_fn progress, void *progress_ctx,
                            char *errbuf, size_t errlen);
void tprof_log_free(tprof_log *lg);

typedef struct {
    uint64_t lines;                         /* records: lines and \r segments that held text */
    uint64_t parsed[TPROF_LOG_NFORMATS];    /* records with a metric, per format */
    uint64_t skipped;                       /* records without a metric */
} tprof_log_counts;

const char *tprof_log_name(const tprof_log *lg);
/* "NAME: line N: the last line was cut ...: dropped" when finish dropped a
 * cut last line, else "". */
const char *tprof_log_truncation(const tprof_log *lg);
/* Warnings about lines that were read, each "NAME: line N: ...": values
 * nested deeper than TPROF_LOG_MAX_DEPTH (the first 8 such lines, then one
 * that counts the rest). Returns the count; *out points into the log. */
size_t tprof_log_warnings(const tprof_log *lg, const char *const **out);
const tprof_log_counts *tprof_log_get_counts(const tprof_log *lg);
size_t tprof_log_nmetrics(const tprof_log *lg); /* in the order first seen */
const char *tprof_log_metric(const tprof_log *lg, size_t i);
/* The points of metric I after finish: ascending unique steps, the last
 * value given for a step wins. Returns the count. */
size_t tprof_log_points(const tprof_log *lg, size_t i, const int64_t **steps, const double **values);

typedef struct {
    size_t count;      /* finite values */
    size_t nonfinite;  /* NaN and ±inf, left out of the rest */
    size_t warmup;     /* leading finite points left out of steady_mean */
    double mean, p50, min, max;
    double steady_mean; /* mean after the warm-up: max(1, count/10) points; NaN when count < 2 */
} tprof_log_stats;

void tprof_log_stats_of(const tprof_log *lg, size_t i, tprof_log_stats *out);

/* What a metric measures, from its name; the anomaly rules use it. */
typedef enum {
    TPROF_LOG_ROLE_NONE = -1,
    TPROF_LOG_ROLE_MFU = 0,
    TPROF_LOG_ROLE_THROUGHPUT,
    TPROF_LOG_ROLE_LOSS,
    TPROF_LOG_ROLE_STEP_TIME,
} tprof_log_role;
tprof_log_role tprof_log_role_of(const char *metric);
/* The first metric of ROLE in the log, or -1. */
long tprof_log_find_role(const tprof_log *lg, tprof_log_role role);

typedef enum {
    TPROF_LOG_NONFINITE = 0,
    TPROF_LOG_LOSS_SPIKE,
    TPROF_LOG_STEP_TIME_SPIKE,
    TPROF_LOG_MFU_DROP,
    TPROF_LOG_THROUGHPUT_DROP,
} tprof_log_anomaly_kind;

typedef struct {
    tprof_log_anomaly_kind kind;
    size_t metric;
    int64_t step;
    double value;
    double reference; /* the rolling median it was compared with (NaN for nonfinite) */
} tprof_log_anomaly;

const char *tprof_log_anomaly_name(tprof_log_anomaly_kind k);
size_t tprof_log_anomalies(const tprof_log *lg, const tprof_log_anomaly **out);

/* A self-contained SVG: one panel each for MFU, throughput and loss (the
 * ones any log has), a line per log, at most 2000 points per line. */
int tprof_log_svg(const tprof_log *const *logs, size_t n, FILE *f);

/* The log as result tables: line counts by format, a row per metric, the
 * anomalies and, in the second description (`log_series`: WITH_SERIES),
 * every point in long form. */
extern const tprof_result_desc tprof_log_desc[2];
int tprof_log_tables(const tprof_log *lg, int with_series, tprof_result **out);

#ifdef __cplusplus
}
#endif
#endif
