/* The per-step series of one log: lines into records, records onto steps,
 * then per metric the sorted points, statistics and anomalies.
 * docs/METRICS.md, "trainprof log". */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "trainprof/error.h"
#include "trainprof/source.h"

#define LINE_MAX_BYTES ((size_t)1 << 20) /* longer lines are cut here */
#define WARN_MAX 8                       /* too-deep lines named one by one; then a count */
#define WINDOW 20                        /* rolling median: previous points */
#define WINDOW_MIN 5                     /* points needed before judging one */

typedef struct {
    int64_t step;
    double v;
    uint64_t seq;
} pt;

typedef struct {
    char *name;
    pt *p;
    size_t n, cap;
    int64_t *steps; /* after finish */
    double *vals;
    size_t m;
} metric;

struct tprof_log {
    char *name;
    metric *ms;
    size_t nm, cm;
    size_t *hash; /* open addressing: metric index + 1, 0 empty */
    size_t hcap;
    char *line;
    size_t llen, lcap;
    int have_cur;
    int64_t cur;
    uint64_t seq;
    tprof_log_counts counts;
    tprof_log_anomaly *an;
    size_t nan_, can;
    int finished;
    tprof_log_record rec;
    uint64_t lineno;    /* 1-based number of the line being read */
    uint64_t ndeep;     /* lines with a value nested deeper than TPROF_LOG_MAX_DEPTH */
    char *warn[WARN_MAX + 1];
    size_t nwarn;
    char *trunc;        /* the last line was cut and dropped: why; NULL otherwise */
    int over;           /* the line in LINE is longer than LINE_MAX_BYTES: bytes were left out */
    char tail[16];      /* then its last bytes (the end of the line as the input has it) */
    size_t ntail;
};

tprof_log *tprof_log_new(const char *name)
{
    tprof_log *lg = calloc(1, sizeof *lg);
    if (!lg) return NULL;
    if (!(lg->name = strdup(name ? name : "log"))) {
        free(lg);
        return NULL;
    }
    lg->lineno = 1;
    return lg;
}

void tprof_log_free(tprof_log *lg)
{
    if (!lg) return;
    for (size_t i = 0; i < lg->nm; i++) {
        free(lg->ms[i].name);
        free(lg->ms[i].p);
        free(lg->ms[i].steps);
        free(lg->ms[i].vals);
    }
    free(lg->ms);
    free(lg->hash);
    free(lg->line);
    free(lg->an);
    for (size_t i = 0; i < lg->nwarn; i++) free(lg->warn[i]);
    free(lg->trunc);
    free(lg->name);
    free(lg);
}

static size_t hstr(const char *s)
{
    size_t h = 1469598103934665603ULL & SIZE_MAX;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * (1099511628211ULL & SIZE_MAX);
    return h;
}

/* The index of metric NAME, created when new; SIZE_MAX when out of memory. */
static size_t metric_of(tprof_log *lg, const char *name)
{
    if (lg->hcap) {
        for (size_t h = hstr(name) & (lg->hcap - 1);; h = (h + 1) & (lg->hcap - 1)) {
            if (!lg->hash[h]) break;
            if (!strcmp(lg->ms[lg->hash[h] - 1].name, name)) return lg->hash[h] - 1;
        }
    }
    if (2 * (lg->nm + 1) > lg->hcap) { /* grow and rehash */
        size_t nc = lg->hcap ? 2 * lg->hcap : 64;
        size_t *nh = calloc(nc, sizeof *nh);
        if (!nh) return SIZE_MAX;
        for (size_t i = 0; i < lg->nm; i++) {
            size_t h = hstr(lg->ms[i].name) & (nc - 1);
            while (nh[h]) h = (h + 1) & (nc - 1);
            nh[h] = i + 1;
        }
        free(lg->hash);
        lg->hash = nh;
        lg->hcap = nc;
    }
    if (lg->nm == lg->cm) {
        size_t c = lg->cm ? 2 * lg->cm : 16;
        metric *m = realloc(lg->ms, c * sizeof *m);
        if (!m) return SIZE_MAX;
        lg->ms = m;
        lg->cm = c;
    }
    metric *m = &lg->ms[lg->nm];
    memset(m, 0, sizeof *m);
    if (!(m->name = strdup(name))) return SIZE_MAX;
    size_t h = hstr(name) & (lg->hcap - 1);
    while (lg->hash[h]) h = (h + 1) & (lg->hcap - 1);
    lg->hash[h] = ++lg->nm;
    return lg->nm - 1;
}

static int push(metric *m, int64_t step, double v, uint64_t seq)
{
    if (m->n == m->cap) {
        size_t c = m->cap ? 2 * m->cap : 16;
        pt *p = realloc(m->p, c * sizeof *p);
        if (!p) return TPROF_ENOMEM;
        m->p = p;
        m->cap = c;
    }
    m->p[m->n++] = (pt){ step, v, seq };
    return 0;
}

static char *fmt_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *m = NULL;
    if (vasprintf(&m, fmt, ap) < 0) m = NULL;
    va_end(ap);
    return m;
}

/* 1 when a line that stops here without a newline ends where a token
 * cannot go on: after a space, a closing ) ] } |, a , ; or a quote, or a
 * complete ANSI sequence. Anything else (a digit, a letter, '.', '-', ':',
 * '=', a byte of a UTF-8 character) may be the cut middle of a value:
 * "2.15e-05" cut to "2.15", "loss: 2.15e" read as loss(e). */
static int ends_clean(const char *s, size_t n)
{
    if (!n) return 1;
    unsigned char c = (unsigned char)s[n - 1];
    if (lg_space(c) || memchr(")]}|,;\"'", c, 8)) return 1;
    if (c >= 0x40 && c <= 0x7e) { /* ESC [ parameters final byte */
        size_t i = n - 1;
        while (i > 0 && (unsigned char)s[i - 1] >= 0x20 && (unsigned char)s[i - 1] <= 0x3f) i--;
        return i >= 2 && s[i - 1] == '[' && s[i - 2] == 0x1b;
    }
    return 0;
}

/* One record (a line or a \r segment). LAST: the final segment of a last
 * line without a newline, dropped when it was cut (docs/METRICS.md). A line
 * over LINE_MAX_BYTES is cut there by the reader, not by the input: it is
 * judged by its real last bytes, as any long line is read from its first MiB. */
static int record(tprof_log *lg, const char *s, size_t n, int last)
{
    size_t i = 0;
    while (i < n && (lg_space(s[i]) || s[i] == '\r')) i++;
    if (i == n) return 0;
    tprof_log_record *r = &lg->rec;
    lg_info info;
    size_t k = lg_parse_line(s, n, r, &info);
    if (info.too_deep && ++lg->ndeep <= WARN_MAX) {
        char *m = fmt_msg("%s: line %llu: a value nested deeper than %d levels; the line is not read as a dict",
                          lg->name, (unsigned long long)lg->lineno, TPROF_LOG_MAX_DEPTH);
        if (!m) return TPROF_ENOMEM;
        lg->warn[lg->nwarn++] = m;
    }
    if (last && lg->over) info.open_at_end = 0;
    if (last && (k || r->step >= 0 || info.open_at_end) &&
        (info.open_at_end || (r->format != TPROF_LOG_JSON && r->format != TPROF_LOG_DICT &&
                              !(lg->over ? ends_clean(lg->tail, lg->ntail) : ends_clean(s, n))))) {
        free(lg->trunc);
        lg->trunc = fmt_msg("%s: line %llu: the last line was cut (no newline, it ends inside %s): dropped",
                            lg->name, (unsigned long long)lg->lineno, info.open_at_end ? "a {...}" : "a value");
        return lg->trunc ? 0 : TPROF_ENOMEM;
    }
    lg->counts.lines++;
    if (r->step >= 0) {
        lg->cur = r->step;
        lg->have_cur = 1;
    }
    if (!k) {
        lg->counts.skipped++;
        return 0;
    }
    lg->counts.parsed[r->format]++;
    size_t idx[TPROF_LOG_MAX_KV];
    int clash = 0;
    for (size_t j = 0; j < k; j++) {
        if ((idx[j] = metric_of(lg, r->kv[j].key)) == SIZE_MAX) return TPROF_ENOMEM;
        const metric *m = &lg->ms[idx[j]];
        clash |= m->n && m->p[m->n - 1].step == lg->cur;
    }
    /* a line without a step: the current step, or the next one when it
     * already holds one of these metrics; before any step, step 1 */
    if (r->step < 0) {
        if (!lg->have_cur) lg->cur = 1, lg->have_cur = 1;
        else if (clash) lg->cur++;
    }
    for (size_t j = 0; j < k; j++)
        if (push(&lg->ms[idx[j]], lg->cur, r->kv[j].value, lg->seq++)) return TPROF_ENOMEM;
    return 0;
}

/* LAST: the line has no newline (the end of the input). */
static int line(tprof_log *lg, const char *s, size_t n, int last)
{
    /* tqdm redraws with \r: each segment is a record of its own */
    const char *end = s + n;
    while (s < end) {
        const char *cr = memchr(s, '\r', (size_t)(end - s));
        if (!cr) cr = end;
        int rc = record(lg, s, (size_t)(cr - s), last && cr == end);
        if (rc) return rc;
        s = cr + 1;
    }
    return 0;
}

/* The bytes left out of a line over LINE_MAX_BYTES: only its last ones are kept. */
static void over(tprof_log *lg, const char *s, size_t n)
{
    if (!n) return;
    lg->over = 1;
    if (n >= sizeof lg->tail) {
        memcpy(lg->tail, s + n - sizeof lg->tail, sizeof lg->tail);
        lg->ntail = sizeof lg->tail;
        return;
    }
    size_t k = lg->ntail + n > sizeof lg->tail ? lg->ntail + n - sizeof lg->tail : 0; /* oldest dropped */
    memmove(lg->tail, lg->tail + k, lg->ntail - k);
    memcpy(lg->tail + lg->ntail - k, s, n);
    lg->ntail += n - k;
}

static int keep(tprof_log *lg, const char *s, size_t n)
{
    if (lg->llen >= LINE_MAX_BYTES) {
        over(lg, s, n);
        return 0;
    }
    if (n > LINE_MAX_BYTES - lg->llen) {
        over(lg, s + (LINE_MAX_BYTES - lg->llen), n - (LINE_MAX_BYTES - lg->llen));
        n = LINE_MAX_BYTES - lg->llen;
    }
    if (lg->llen + n > lg->lcap) {
        size_t c = lg->lcap ? lg->lcap : 4096;
        while (c < lg->llen + n) c *= 2;
        char *p = realloc(lg->line, c);
        if (!p) return TPROF_ENOMEM;
        lg->line = p;
        lg->lcap = c;
    }
    memcpy(lg->line + lg->llen, s, n);
    lg->llen += n;
    return 0;
}

int tprof_log_feed(tprof_log *lg, const void *data, size_t len)
{
    if (lg->finished) return TPROF_EUSAGE;
    const char *s = data, *end = s + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl) return keep(lg, s, (size_t)(end - s));
        int rc;
        if (lg->llen) {
            if ((rc = keep(lg, s, (size_t)(nl - s)))) return rc;
            rc = line(lg, lg->line, lg->llen, 0);
            lg->llen = 0;
            lg->over = 0;
            lg->ntail = 0;
        } else {
            rc = line(lg, s, (size_t)(nl - s) > LINE_MAX_BYTES ? LINE_MAX_BYTES : (size_t)(nl - s), 0);
        }
        lg->lineno++;
        if (rc) return rc;
        s = nl + 1;
    }
    return 0;
}

static int by_step_seq(const void *a, const void *b)
{
    const pt *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int add_anomaly(tprof_log *lg, tprof_log_anomaly_kind k, size_t mi, int64_t step, double v, double ref)
{
    if (lg->nan_ == lg->can) {
        size_t c = lg->can ? 2 * lg->can : 16;
        tprof_log_anomaly *a = realloc(lg->an, c * sizeof *a);
        if (!a) return TPROF_ENOMEM;
        lg->an = a;
        lg->can = c;
    }
    lg->an[lg->nan_++] = (tprof_log_anomaly){ k, mi, step, v, ref };
    return 0;
}

/* The rules of docs/METRICS.md: against the median of the previous WINDOW
 * finite points (at least WINDOW_MIN of them). */
static int anomalies(tprof_log *lg, size_t mi)
{
    const metric *m = &lg->ms[mi];
    tprof_log_role role = tprof_log_role_of(m->name);
    double win[WINDOW], tmp[WINDOW];
    size_t nw = 0, head = 0;
    for (size_t i = 0; i < m->m; i++) {
        double v = m->vals[i];
        if (!isfinite(v)) {
            if (add_anomaly(lg, TPROF_LOG_NONFINITE, mi, m->steps[i], v, NAN)) return TPROF_ENOMEM;
            continue;
        }
        if (nw >= WINDOW_MIN && role != TPROF_LOG_ROLE_NONE) {
            memcpy(tmp, win, nw * sizeof *tmp);
            double med = median(tmp, nw);
            int hit = -1;
            if (med > 0) {
                if (role == TPROF_LOG_ROLE_LOSS && v > 1.5 * med) hit = TPROF_LOG_LOSS_SPIKE;
                if (role == TPROF_LOG_ROLE_STEP_TIME && v > 2 * med) hit = TPROF_LOG_STEP_TIME_SPIKE;
                if (role == TPROF_LOG_ROLE_MFU && v < 0.7 * med) hit = TPROF_LOG_MFU_DROP;
                if (role == TPROF_LOG_ROLE_THROUGHPUT && v < 0.7 * med) hit = TPROF_LOG_THROUGHPUT_DROP;
            }
            if (hit >= 0 && add_anomaly(lg, (tprof_log_anomaly_kind)hit, mi, m->steps[i], v, med))
                return TPROF_ENOMEM;
        }
        if (nw < WINDOW) win[nw++] = v;
        else {
            win[head] = v;
            head = (head + 1) % WINDOW;
        }
    }
    return 0;
}

int tprof_log_finish(tprof_log *lg)
{
    if (lg->finished) return 0;
    int rc = 0;
    if (lg->llen) {
        rc = line(lg, lg->line, lg->llen, 1);
        lg->llen = 0;
    }
    if (!rc && lg->ndeep > WARN_MAX) {
        char *m = fmt_msg("%s: %llu more lines with a value nested deeper than %d levels, not read as dicts",
                          lg->name, (unsigned long long)(lg->ndeep - WARN_MAX), TPROF_LOG_MAX_DEPTH);
        if (!m) rc = TPROF_ENOMEM;
        else lg->warn[lg->nwarn++] = m;
    }
    lg->finished = 1;
    for (size_t i = 0; !rc && i < lg->nm; i++) {
        metric *m = &lg->ms[i];
        qsort(m->p, m->n, sizeof *m->p, by_step_seq);
        m->steps = malloc((m->n ? m->n : 1) * sizeof *m->steps);
        m->vals = malloc((m->n ? m->n : 1) * sizeof *m->vals);
        if (!m->steps || !m->vals) return TPROF_ENOMEM;
        m->m = 0;
        for (size_t j = 0; j < m->n; j++) {
            if (j + 1 < m->n && m->p[j + 1].step == m->p[j].step) continue; /* the last value of a step */
            m->steps[m->m] = m->p[j].step;
            m->vals[m->m++] = m->p[j].v;
        }
        free(m->p);
        m->p = NULL;
        m->n = m->cap = 0;
        rc = anomalies(lg, i);
    }
    return rc ? rc : lg->trunc ? TPROF_ETRUNC : 0;
}

int tprof_log_read(tprof_log **out, const char *path, char *errbuf, size_t errlen)
{
    return tprof_log_read_progress(out, path, NULL, NULL, errbuf, errlen);
}

int tprof_log_read_progress(tprof_log **out, const char *path, tprof_progress_fn progress, void *progress_ctx,
                            char *errbuf, size_t errlen)
{
    *out = NULL;
    uint64_t progress_next = 0;
    if (errlen) errbuf[0] = 0;
    tprof_source *src = NULL;
    int rc = tprof_source_open(&src, path, errbuf, errlen);
    if (rc) return rc;
    tprof_log *lg = tprof_log_new(path);
    char *buf = malloc(1 << 16);
    if (!lg || !buf) {
        free(buf);
        tprof_log_free(lg);
        tprof_source_close(src);
        snprintf(errbuf, errlen, "%s: out of memory", path);
        return TPROF_ENOMEM;
    }
    int first = 1;
    for (;;) {
        ssize_t n = tprof_source_read(src, buf, 1 << 16);
        if (progress && (n <= 0 || tprof_source_bytes_in(src) >= progress_next)) {
            progress_next = tprof_source_bytes_in(src) + (16u << 20);
            progress(progress_ctx, path, tprof_source_bytes_in(src), tprof_source_file_size(src));
        }
        if (n <= 0) {
            rc = (int)n;
            break;
        }
        if (first) { /* the first bytes: another kind of file, whose keys would read as metrics? */
            first = 0;
            tprof_input_kind k = tprof_input_sniff(buf, (size_t)n);
            if (k != TPROF_INPUT_LOG && k != TPROF_INPUT_UNKNOWN) {
                snprintf(errbuf, errlen, "%s: not a training log", path);
                tprof_input_hint_append(buf, (size_t)n, TPROF_INPUT_BIT(TPROF_INPUT_LOG), errbuf, errlen);
                free(buf);
                tprof_log_free(lg);
                tprof_source_close(src);
                return TPROF_EFORMAT;
            }
        }
        if ((rc = tprof_log_feed(lg, buf, (size_t)n))) break;
    }
    free(buf);
    if (rc && rc != TPROF_ENOMEM) snprintf(errbuf, errlen, "%s", tprof_source_errmsg(src));
    tprof_source_close(src);
    int frc = tprof_log_finish(lg);
    if (rc == TPROF_ENOMEM || frc == TPROF_ENOMEM || (rc && rc != TPROF_ETRUNC)) {
        if (rc == TPROF_ENOMEM || frc == TPROF_ENOMEM) snprintf(errbuf, errlen, "%s: out of memory", path);
        tprof_log_free(lg);
        return rc ? rc : frc;
    }
    *out = lg;
    if (rc == TPROF_ETRUNC && lg->trunc) { /* a cut stream: its message, then the cut line's */
        size_t l = strlen(errbuf);
        if (l < errlen)
            snprintf(errbuf + l, errlen - l, "; line %llu, the last, was cut: dropped", (unsigned long long)lg->lineno);
    } else if (frc == TPROF_ETRUNC) {
        snprintf(errbuf, errlen, "%s", lg->trunc);
    }
    int cut = rc == TPROF_ETRUNC || frc == TPROF_ETRUNC;
    if (lg->nm == 0) { /* not a training log, cut or not: the cut is said after why */
        char why[1024];
        snprintf(why, sizeof why, "%s", cut ? errbuf : "");
        snprintf(errbuf, errlen,
                 "%s: no metric found: none of its %llu line%s is a training-log step record; expected lines "
                 "such as 'step 10: loss=2.31 lr=3e-4', '{\"step\": 10, \"loss\": 2.31}' (JSON lines, metric "
                 "dicts), 'iteration 10/100 | lm loss: 2.31 |' (Megatron), 'step 10/100 | loss 2.31 | 120 ms' "
                 "(llm.c) or tqdm bars with postfix metrics (config lines and banners are not metrics)%s%s",
                 path, (unsigned long long)lg->counts.lines, lg->counts.lines == 1 ? "" : "s", why[0] ? "; " : "",
                 why);
        return TPROF_EFORMAT;
    }
    return cut ? TPROF_ETRUNC : 0;
}

const char *tprof_log_name(const tprof_log *lg) { return lg->name; }
const tprof_log_counts *tprof_log_get_counts(const tprof_log *lg) { return &lg->counts; }
size_t tprof_log_nmetrics(const tprof_log *lg) { return lg->nm; }
const char *tprof_log_truncation(const tprof_log *lg) { return lg->trunc ? lg->trunc : ""; }

size_t tprof_log_warnings(const tprof_log *lg, const char *const **out)
{
    *out = (const char *const *)lg->warn;
    return lg->nwarn;
}
const char *tprof_log_metric(const tprof_log *lg, size_t i) { return i < lg->nm ? lg->ms[i].name : NULL; }

size_t tprof_log_points(const tprof_log *lg, size_t i, const int64_t **steps, const double **values)
{
    if (i >= lg->nm || !lg->finished) {
        *steps = NULL;
        *values = NULL;
        return 0;
    }
    *steps = lg->ms[i].steps;
    *values = lg->ms[i].vals;
    return lg->ms[i].m;
}

void tprof_log_stats_of(const tprof_log *lg, size_t i, tprof_log_stats *o)
{
    memset(o, 0, sizeof *o);
    o->mean = o->p50 = o->min = o->max = o->steady_mean = NAN;
    const int64_t *st;
    const double *v;
    size_t n = tprof_log_points(lg, i, &st, &v);
    double *f = malloc((n ? n : 1) * sizeof *f);
    if (!f) return;
    double sum = 0;
    for (size_t j = 0; j < n; j++) {
        if (!isfinite(v[j])) {
            o->nonfinite++;
            continue;
        }
        f[o->count++] = v[j];
        sum += v[j];
    }
    if (o->count) {
        o->mean = sum / (double)o->count;
        o->min = o->max = f[0];
        for (size_t j = 1; j < o->count; j++) {
            if (f[j] < o->min) o->min = f[j];
            if (f[j] > o->max) o->max = f[j];
        }
    }
    if (o->count >= 2) { /* warm-up: the first max(1, count/10) finite points */
        o->warmup = o->count / 10 > 1 ? o->count / 10 : 1;
        double s = 0;
        for (size_t j = o->warmup; j < o->count; j++) s += f[j];
        o->steady_mean = s / (double)(o->count - o->warmup);
    }
    if (o->count) o->p50 = median(f, o->count);
    free(f);
}

static int has(const char *s, const char *w) { return strstr(s, w) != NULL; }

tprof_log_role tprof_log_role_of(const char *name)
{
    char low[TPROF_LOG_KEY_MAX];
    size_t n = 0;
    for (; name[n] && n < sizeof low - 1; n++) low[n] = (char)tolower((unsigned char)name[n]);
    low[n] = 0;
    const char *last = strrchr(low, '/');
    last = last && last[1] && strcmp(last, "/s") ? last + 1 : low;
    if (!strncmp(last, "mfu", 3)) return TPROF_LOG_ROLE_MFU;
    if (has(low, "tokens_per_second") || has(low, "tok/s") || has(low, "tokens/s") || has(low, "tokens_per_sec") ||
        !strncmp(last, "throughput", 10))
        return TPROF_LOG_ROLE_THROUGHPUT;
    if (!strncmp(last, "step_time", 9) || has(last, "time_per_iteration") || has(last, "iter_time") ||
        !strcmp(last, "dt") || !strncmp(last, "dt(", 3))
        return TPROF_LOG_ROLE_STEP_TIME;
    if (has(last, "loss") && !has(last, "scale")) return TPROF_LOG_ROLE_LOSS;
    return TPROF_LOG_ROLE_NONE;
}

long tprof_log_find_role(const tprof_log *lg, tprof_log_role role)
{
    for (size_t i = 0; i < lg->nm; i++)
        if (tprof_log_role_of(lg->ms[i].name) == role) return (long)i;
    return -1;
}

const char *tprof_log_anomaly_name(tprof_log_anomaly_kind k)
{
    static const char *const names[] = { "nonfinite", "loss_spike", "step_time_spike", "mfu_drop",
                                         "throughput_drop" };
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

size_t tprof_log_anomalies(const tprof_log *lg, const tprof_log_anomaly **out)
{
    *out = lg->an;
    return lg->nan_;
}
