/* Internal to lib/log: the scanners every line parser shares. */
#ifndef TPROF_LOG_INTERNAL_H
#define TPROF_LOG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "trainprof/log.h"

/* Length of the number at S (0 if none) and its value: decimal with an
 * optional sign, fraction and exponent, or nan / inf / infinity in any case.
 * Hex and digit groups are not numbers. */
size_t lg_number(const char *s, size_t n, double *v);
/* Appends KEY = V (KEY cut to fit; dropped when the record is full). A step
 * key (step, global_step, iter, iteration, _step) sets the step instead. */
void lg_add(tprof_log_record *r, const char *key, size_t klen, double v);
int lg_is_step_key(const char *k, size_t n);
/* The first "step N", "step=N", "Step: N", "global_step N", "iter N",
 * "iteration N" in S. Returns 1 and sets *step, else 0. */
int lg_find_step(const char *s, size_t n, int64_t *step);
int lg_keychar(int c);
int lg_space(int c);

/* What a parse saw besides the record, for the reader's warnings and its
 * rule for a last line without a newline (docs/METRICS.md). */
typedef struct {
    int too_deep;    /* a {...} nested deeper than TPROF_LOG_MAX_DEPTH: not read as a dict */
    int open_at_end; /* a {...} still open where the line ends (cut inside it) */
} lg_info;

/* tprof_log_parse_line, also filling INFO (which may be NULL). */
size_t lg_parse_line(const char *line, size_t len, tprof_log_record *out, lg_info *info);

/* Per format: 1 when the line is of this format (R filled), else 0 with R
 * unchanged. */
int lg_parse_dict(const char *s, size_t n, tprof_log_record *r, lg_info *info);
int lg_parse_tqdm(const char *s, size_t n, tprof_log_record *r);
int lg_parse_llmc(const char *s, size_t n, tprof_log_record *r);
/* key: value / key=value anywhere; always "succeeds" (maybe with nothing). */
void lg_parse_kv(const char *s, size_t n, tprof_log_record *r);

#endif
