#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trainprof/error.h"
#include "trainprof/report.h"
#include "trainprof/sink.h"
#include "trainprof/source.h"

int cli_color;
int cli_all_ranks;
int cli_threads;

int cli_set_color(const char *mode)
{
    if (!mode || !strcmp(mode, "auto"))
        cli_color = isatty(2) && !getenv("NO_COLOR");
    else if (!strcmp(mode, "always") || !strcmp(mode, "never"))
        cli_color = !strcmp(mode, "always");
    else {
        cli_error("--color must be auto, always or never, not '%s'", mode);
        return -1;
    }
    return 0;
}

int cli_list_options;

static const char *arg_kind(int has_arg)
{
    return has_arg == required_argument ? "required" : has_arg == optional_argument ? "optional" : "none";
}

/* The options as getopt sees them: long ones first (an entry shadowed by an
 * earlier one of the same name left out), then the short letters. */
static void print_option_table(const char *shortopts, const struct option *longopts)
{
    for (const struct option *o = longopts; o && o->name; o++) {
        const struct option *first = longopts;
        while (strcmp(first->name, o->name)) first++;
        if (first == o) printf("--%s\t%s\n", o->name, arg_kind(o->has_arg));
    }
    for (const char *s = shortopts + (*shortopts == '-' || *shortopts == '+'); *s; s++) {
        if (*s == ':') continue;
        int has_arg = s[1] != ':' ? no_argument : s[2] == ':' ? optional_argument : required_argument;
        printf("-%c\t%s\n", *s, arg_kind(has_arg));
    }
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    if (cli_list_options) {
        print_option_table(shortopts, longopts);
        exit(cli_finish_stdout(EXIT_OK));
    }
    /* getopt's own messages name argv[0], which is the command alone
     * ("kernels: invalid option"); these name the program and the command,
     * and say where the options are listed. A leading ':' tells a missing
     * argument (':') from an unknown option ('?'). */
    char sh[64];
    const char *mode = *shortopts == '-' || *shortopts == '+' ? shortopts : "";
    snprintf(sh, sizeof sh, "%.1s:%s", mode, shortopts + (*mode ? 1 : 0));
    opterr = 0;
    int c = getopt_long(argc, argv, sh, longopts, NULL);
    if (c != '?' && c != ':') return c;
    const char *cmd = argv[0], *arg = argv[optind - 1];
    /* inside a cluster of short options ("-Qx"), getopt has not moved past
     * it yet: the element at optind is the one in error */
    const char *next = optind < argc ? argv[optind] : NULL;
    int in_cluster = optopt && next && next[0] == '-' && next[1] && next[1] != '-' && strchr(next + 1, optopt);
    int is_long = !in_cluster && arg && arg[0] == '-' && arg[1] == '-';
    if (c == ':') {
        if (is_long) fprintf(stderr, "trainprof %s: option '%s' requires an argument\n", cmd, arg);
        else fprintf(stderr, "trainprof %s: option requires an argument -- '%c'\n", cmd, optopt);
    } else if (is_long) {
        const char *eq = strchr(arg, '=');
        int len = eq ? (int)(eq - arg) : (int)strlen(arg);
        /* a known option given a value it does not take, or one not known (or not unique) */
        int known = 0, prefixed = 0;
        for (const struct option *o = longopts; o && o->name; o++) {
            known |= (int)strlen(o->name) == len - 2 && !strncmp(o->name, arg + 2, (size_t)len - 2);
            prefixed += !strncmp(o->name, arg + 2, (size_t)len - 2);
        }
        if (known && eq) fprintf(stderr, "trainprof %s: option '%.*s' doesn't allow an argument\n", cmd, len, arg);
        else if (prefixed > 1) {
            fprintf(stderr, "trainprof %s: option '%.*s' is ambiguous; possibilities:", cmd, len, arg);
            for (const struct option *o = longopts; o->name; o++)
                if (!strncmp(o->name, arg + 2, (size_t)len - 2)) fprintf(stderr, " '--%s'", o->name);
            fputc('\n', stderr);
        } else
            fprintf(stderr, "trainprof %s: unrecognized option '%.*s'\n", cmd, len, arg);
    } else
        fprintf(stderr, "trainprof %s: invalid option -- '%c'\n", cmd, optopt);
    fprintf(stderr, "%s see 'trainprof %s --help'\n", cli_color ? "\033[1;36mtrainprof: hint:\033[0m" : "trainprof: hint:",
            cmd);
    return '?';
}

static int progress_shown; /* a progress line is on stderr's last line */

static void tag_out(const char *tag, const char *color)
{
    if (cli_color) fprintf(stderr, "%s%s\033[0m ", color, tag);
    else fprintf(stderr, "%s ", tag);
}

/* One line per message; a library message's hint (TPROF_HINT_MARK: what
 * the input is and which command reads it) on a line of its own. */
static void vmsg(const char *tag, const char *color, const char *fmt, va_list ap)
{
    char small[1024], *buf = small;
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1))) vsnprintf(buf, (size_t)n + 1, fmt, aq);
    if (!buf) buf = small; /* out of memory: the message cut */
    va_end(aq);
    char *hint = strstr(buf, TPROF_HINT_MARK);
    if (hint) *hint = 0;
    if (progress_shown) { /* a message starts its own line, not after the bar */
        fprintf(stderr, "\r%72s\r", "");
        progress_shown = 0;
    }
    tag_out(tag, color);
    fprintf(stderr, "%s\n", buf);
    if (hint) {
        tag_out("trainprof: hint:", "\033[1;36m");
        fprintf(stderr, "%s\n", hint + strlen(TPROF_HINT_MARK));
    }
    if (buf != small) free(buf);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("trainprof: error:", "\033[1;31m", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("trainprof: warning:", "\033[1;33m", fmt, ap);
    va_end(ap);
}

int cli_notes_off;

void cli_note(const char *fmt, ...)
{
    if (cli_notes_off) return;
    va_list ap;
    va_start(ap, fmt);
    vmsg("trainprof: note:", "\033[1;36m", fmt, ap);
    va_end(ap);
}

int cli_quiet_wrote;

void cli_wrote(const char *path, uint64_t bytes)
{
    if (cli_quiet_wrote) return;
    char size[32];
    tprof_fmt_bytes(size, sizeof size, (int64_t)bytes);
    fprintf(stderr, "trainprof: wrote %s (%s)\n", path, size);
}

int cli_write_file(const char *path, const void *buf, size_t len)
{
    char err[1024];
    if (tprof_sink_write_file(path, buf, len, err, sizeof err) == 0) { /* renamed into place */
        cli_wrote(path, len);
        return EXIT_OK;
    }
    cli_error("%s", err);
    return EXIT_OUTPUT;
}

int cli_finish_stdout(int rc)
{
    errno = 0;
    int bad = fflush(stdout) != 0;
    int err = errno;
    bad |= ferror(stdout) != 0;
    errno = 0;
    if (fclose(stdout) != 0) {
        bad = 1;
        if (!err) err = errno;
    }
    if (!bad) return rc;
    char why[128];
    cli_error("cannot write the standard output: %s; the output is incomplete",
              err ? tprof_errno_text(err, why, sizeof why) : "write error");
    return EXIT_OUTPUT;
}

int cli_parse_threads(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end || v < 0 || v > 4096) return -1;
    *out = (int)v;
    return 0;
}

int cli_parse_format(const char *s, cli_format *out)
{
    if (!strcmp(s, "table")) *out = FMT_TABLE;
    else if (!strcmp(s, "csv")) *out = FMT_CSV;
    else if (!strcmp(s, "json")) *out = FMT_JSON;
    else return -1;
    return 0;
}

int cli_parse_definition(const char *s, tprof_definition *out)
{
    if (!strcmp(s, "trainprof")) *out = TPROF_DEFINITION_TRAINPROF;
    else if (!strcmp(s, "hta"))
        *out = TPROF_DEFINITION_HTA;
    else {
        cli_error("--definition takes trainprof or hta, not '%s'", s);
        return -1;
    }
    return 0;
}

static int parse_num(const char *s, const char *end, long long *v)
{
    if (s == end) return -1;
    long long x = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9' || x > 1000000000000LL) return -1;
        x = x * 10 + (*p - '0');
    }
    *v = x;
    return 0;
}

int cli_parse_steps(const char *s, long long *first, long long *last)
{
    const char *dots = strstr(s, "..");
    *first = *last = -1;
    if (!dots) {
        if (parse_num(s, s + strlen(s), first)) return -1;
        *last = *first;
        return 0;
    }
    if (dots > s && parse_num(s, dots, first)) return -1;
    if (dots[2] && parse_num(dots + 2, dots + strlen(dots), last)) return -1;
    if (*first < 0 && *last < 0) return -1;
    if (*first >= 0 && *last >= 0 && *last < *first) return -1;
    return 0;
}

int cli_steps_option(const char *arg, int64_t *first, int64_t *last, char *window, size_t len)
{
    long long a, b;
    if (cli_parse_steps(arg, &a, &b)) {
        cli_error("--steps takes A..B, A.., ..B or A (ProfilerStep numbers), not '%s'", arg);
        return -1;
    }
    *first = a;
    *last = b;
    snprintf(window, len, "steps %.40s not in this trace", arg);
    return 0;
}

/* ---- progress ---- */

/* Drawn only on a terminal (TPROF_PROGRESS=always draws it anyway, so that
 * tests can see it; =never keeps it off). */
static int progress_wanted(void)
{
    const char *e = getenv("TPROF_PROGRESS");
    if (e && !strcmp(e, "always")) return 1;
    if (e && !strcmp(e, "never")) return 0;
    return isatty(2);
}

int cli_progress_begin(cli_progress *p, char **paths, int n, const char *what)
{
    *p = (cli_progress){ .paths = paths, .n = n, .what = what };
    if (!progress_wanted()) return 0;
    p->done = calloc((size_t)n, sizeof *p->done);
    p->size = calloc((size_t)n, sizeof *p->size);
    if (!p->done || !p->size) {
        free(p->done);
        free(p->size);
        p->done = NULL;
        p->size = NULL;
        return 0;
    }
    for (int i = 0; i < n; i++) { /* sizes up front, so that the share counts the files not begun */
        struct stat st;
        p->size[i] = strcmp(paths[i], "-") && !stat(paths[i], &st) && S_ISREG(st.st_mode) ? (int64_t)st.st_size : -1;
    }
    pthread_mutex_init(&p->mu, NULL);
    p->on = 1;
    return 1;
}

static double since(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

void cli_progress_update(void *ctx, const char *path, uint64_t bytes_in, int64_t file_size)
{
    cli_progress *p = ctx;
    if (!p->on) return;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->paths[i], path) || (!strcmp(path, "<stdin>") && !strcmp(p->paths[i], "-"))) {
            p->done[i] = bytes_in;
            p->size[i] = file_size;
            break;
        }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t done = 0;
    for (int i = 0; i < p->n; i++) done += p->done[i];
    if (!p->started || done < p->start_done) { /* the pace from the first report on, or from the start
                                                   * of a read begun again (a parallel read falling back) */
        p->started = 1;
        p->start = now;
        p->start_done = done;
    }
    if (!p->drawn || since(&p->last, &now) >= 0.2) {
        p->last = now;
        int64_t total = 0;
        int unknown = 0;
        for (int i = 0; i < p->n; i++) {
            if (p->size[i] >= 0) total += p->size[i];
            else unknown = 1; /* a pipe: the share is not known */
        }
        double dt = since(&p->start, &now); /* no rate from the first instants: noise */
        double rate = dt >= 0.1 ? (double)(done - p->start_done) / dt : -1;
        char line[160];
        tprof_fmt_progress(line, sizeof line, done, unknown ? -1 : total, rate, p->n, p->what);
        fprintf(stderr, "\r%-72s", line); /* padded: a shorter line covers a longer one */
        p->drawn = progress_shown = 1;
    }
    pthread_mutex_unlock(&p->mu);
}

void cli_progress_end(cli_progress *p)
{
    if (!p->on) return;
    if (p->drawn && progress_shown) fprintf(stderr, "\r%72s\r", "");
    progress_shown = 0;
    free(p->done);
    free(p->size);
    pthread_mutex_destroy(&p->mu);
    p->on = 0;
}

static int cmp_rank_index(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* What the report after reading needs of each trace, kept before an
 * analysis that runs on the reading thread may free it. */
typedef struct {
    int64_t rank; /* -1: none claimed */
    char *note, *truncation;
} read_facts;

typedef struct {
    read_facts *facts;
    cli_read_done_fn done;
    void *ctx;
} read_job;

static void on_read(void *vjob, size_t i, tprof_read_result *r)
{
    read_job *j = vjob;
    read_facts *f = &j->facts[i];
    f->rank = -1;
    if (r->trace) {
        const tprof_trace_meta *m = tprof_trace_meta_get(r->trace);
        f->rank = m->rank;
        if (m->note) f->note = strdup(m->note);
        if (r->rc == TPROF_ETRUNC) f->truncation = strdup(tprof_trace_truncation(r->trace));
    }
    if (j->done) j->done(j->ctx, i, r);
}

/* Files whose distributedInfo claims the same rank: usually the traces of
 * several runs, or of one rank, given together. One line per shared rank,
 * at most 3, then one line counting the others. */
static void warn_shared_ranks(char *const *paths, int n, const int64_t *claimed)
{
    int shared = 0;
    int64_t (*rk)[2] = malloc((size_t)n * sizeof *rk);
    if (!rk) return;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (claimed[i] >= 0) {
            rk[m][0] = claimed[i];
            rk[m++][1] = i;
        }
    qsort(rk, (size_t)m, sizeof *rk, cmp_rank_index);
    for (int i = 0; i < m;) {
        int j = i;
        while (j < m && rk[j][0] == rk[i][0]) j++;
        if (j - i > 1 && shared++ < 3)
            cli_warn("%d files claim rank %lld in their distributedInfo (%s, %s%s): traces of several runs "
                     "given together? each is analysed as its own trace", j - i, (long long)rk[i][0],
                     paths[rk[i][1]], paths[rk[i + 1][1]], j - i > 2 ? ", ..." : "");
        i = j;
    }
    if (shared > 3) cli_warn("... %d ranks in all are claimed by more than one file", shared);
    free(rk);
}

int cli_expand_inputs(char *const *args, int n, unsigned accepts, tprof_inputs *out)
{
    char err[1024];
    if (tprof_inputs_expand((const char *const *)args, (size_t)(n > 0 ? n : 0), accepts, out, err, sizeof err)) {
        cli_error("%s", err);
        tprof_inputs_free(out);
        return EXIT_INPUT;
    }
    int rc = EXIT_OK;
    for (size_t i = 0; i < out->ndirs; i++) {
        tprof_input_dir_describe(&out->dirs[i], accepts, err, sizeof err);
        if (out->dirs[i].nkept) cli_note("%s", err);
        else {
            cli_error("%s", err);
            rc = EXIT_INPUT;
        }
    }
    if (rc) tprof_inputs_free(out);
    return rc;
}

int cli_read_traces(char **paths, int n, const tprof_read_opts *opts_in, tprof_read_result *out)
{
    return cli_read_traces_each(paths, n, opts_in, out, NULL, NULL);
}

int cli_read_traces_each(char **paths, int n, const tprof_read_opts *opts_in, tprof_read_result *out,
                         cli_read_done_fn done, void *ctx)
{
    return cli_read_traces_split(paths, n, n, opts_in, out, done, ctx);
}

/* cli_read_traces_split, saying the ranks several files claim when WARN_RANKS
 * (cli_run says them once every process's files are known). */
static int read_traces(char **paths, int n, int split, const tprof_read_opts *opts_in, tprof_read_result *out,
                       cli_read_done_fn done, void *ctx, int warn_ranks)
{
    int stdin_uses = 0;
    for (int i = 0; i < n; i++) stdin_uses += strcmp(paths[i], "-") == 0;
    if (stdin_uses > 1) {
        cli_error("'-' (stdin) can be read only once, it is given %d times", stdin_uses);
        return EXIT_USAGE;
    }
    read_job job = { .facts = calloc((size_t)n, sizeof *job.facts), .done = done, .ctx = ctx };
    if (!job.facts) {
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    tprof_read_opts opts = *opts_in;
    cli_progress p;
    if (cli_progress_begin(&p, paths, n, NULL)) {
        opts.progress = cli_progress_update;
        opts.progress_ctx = &p;
    }
    tprof_trace_read_each((const char *const *)paths, (size_t)n, &opts, 0, out, on_read, &job);
    cli_progress_end(&p);
    int worst = EXIT_OK;
    for (int i = 0; i < n; i++) {
        if (job.facts[i].note) cli_warn("%s", job.facts[i].note);
        if (out[i].rc == TPROF_ETRUNC) {
            cli_warn("%s", job.facts[i].truncation ? job.facts[i].truncation : "input truncated");
            if (worst == EXIT_OK) worst = EXIT_TRUNC;
        } else if (out[i].rc) {
            cli_error("%s", out[i].err[0] ? out[i].err : tprof_strerror(out[i].rc));
            worst = EXIT_INPUT;
        }
    }
    int64_t *claimed = warn_ranks ? malloc((size_t)n * sizeof *claimed) : NULL;
    for (int i = 0; claimed && i < n; i++) claimed[i] = job.facts[i].rank;
    if (claimed) warn_shared_ranks(paths, split, claimed);
    if (claimed && split < n) warn_shared_ranks(paths + split, n - split, claimed + split);
    free(claimed);
    for (int i = 0; i < n; i++) {
        free(job.facts[i].note);
        free(job.facts[i].truncation);
    }
    free(job.facts);
    return worst;
}

int cli_read_traces_split(char **paths, int n, int split, const tprof_read_opts *opts_in, tprof_read_result *out,
                          cli_read_done_fn done, void *ctx)
{
    return read_traces(paths, n, split, opts_in, out, done, ctx, 1);
}

int cli_add_class_rule(tprof_classifier **c, const char *spec)
{
    const char *colon = strchr(spec, ':');
    if (!colon || !colon[1]) return -1;
    char cls[32];
    size_t n = (size_t)(colon - spec);
    if (n >= sizeof cls) return -1;
    memcpy(cls, spec, n);
    cls[n] = 0;
    if (!*c && !(*c = tprof_classifier_new())) return -1;
    return tprof_classifier_add_rule(*c, cls, colon + 1) ? -1 : 0;
}

int cli_add_class_file(tprof_classifier **c, const char *path)
{
    if (!*c && !(*c = tprof_classifier_new())) return -1;
    char err[512];
    if (tprof_classifier_load(*c, path, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
}

int cli_common_option(int c, const char *arg, cli_common *co)
{
    switch (c) {
    case 'f':
        if (cli_parse_format(arg, &co->fmt) == 0) return 1;
        cli_error("--format must be table, csv or json, not '%s'", arg);
        return -1;
    case 'c':
        return cli_set_color(arg) == 0 ? 1 : -1;
    case 'j':
        if (cli_parse_threads(arg, &co->threads) == 0) return 1;
        cli_error("--threads takes a count (0 = one per core), not '%s'", arg);
        return -1;
    case 'r':
        if (cli_add_class_rule(&co->cls, arg) == 0) return 1;
        cli_error("--class-rule takes CLASS:GLOB with CLASS one of compute, communication, memory, other, "
                  "data, forward, backward, optimizer, gemm, attention, convolution, elementwise, reduction, "
                  "normalization, not '%s'", arg);
        return -1;
    case 'F':
        return cli_add_class_file(&co->cls, arg) == 0 ? 1 : -1;
    case 'A':
        cli_all_ranks = 1;
        return 1;
    case 'W': {
        int wide, columns;
        tprof_table_layout_get(&wide, &columns);
        tprof_table_layout(1, columns);
        return 1;
    }
    default:
        return 0;
    }
}

void cli_common_free(cli_common *co)
{
    tprof_classifier_free(co->cls);
    co->cls = NULL;
}

/* ---- the frame shared by the trace commands ---- */

/* The results each trace is analysed into. */
static size_t cli_parts(const cli_spec *spec) { return spec->nparts ? spec->nparts : 1; }

static const cli_engine *engine; /* NULL: this process analyses every input */

/* The result path of cli_run: analyse on the reading thread, free, keep
 * the results as bytes. */
typedef struct {
    const cli_spec *spec;
    void *ctx;
    tprof_result **res; /* scratch: each trace's parts until written */
    int *rc;
    int64_t *rank;
    char **held; /* after a usage error (a step window matching none): the steps the trace holds */
    int64_t *claimed; /* the rank its distributedInfo claims, -1 */
    /* the results as bytes (cli_parts_write), into the store (with an
       engine, the outbox) by the input's index in the whole list, INDEX[k] */
    cli_store *store;
    const int *index;
} analyse_job;

static void analyse_read(void *vjob, size_t i, tprof_read_result *r)
{
    analyse_job *j = vjob;
    if (!r->trace) return;
    size_t np = cli_parts(j->spec);
    tprof_result **parts = &j->res[i * np];
    j->rank[i] = tprof_trace_rank(r->trace);
    j->claimed[i] = tprof_trace_meta_get(r->trace)->rank;
    j->rc[i] = j->spec->analyse(j->ctx, r->trace, parts);
    if (j->rc[i] == TPROF_EUSAGE) { /* said after reading, when the trace is gone */
        const tprof_trace_meta *m = tprof_trace_meta_get(r->trace);
        char held[256];
        j->held[i] = strdup(tprof_steps_held(m->steps, m->nsteps, held, sizeof held));
    }
    tprof_trace_free(r->trace);
    r->trace = NULL;
    for (size_t p = 0; !j->rc[i] && p < np; p++)
        if (!parts[p]) j->rc[i] = TPROF_ENOMEM; /* every part is made, or the analysis failed */
    /* the results through their bytes, as every run passes them */
    char *b;
    size_t l;
    int e = cli_parts_write(parts, np, &b, &l);
    for (size_t p = 0; p < np; p++) tprof_result_free(parts[p]), parts[p] = NULL;
    if (!e) e = cli_store_put(j->store, (size_t)j->index[i], b, l);
    if (e && !j->rc[i]) j->rc[i] = e;
}

int cli_print_whole(const tprof_result *r, cli_format fmt, size_t limit)
{
    const tprof_result_desc *d = tprof_result_desc_of(r);
    size_t t = (size_t)d->csv_table;
    if (fmt == FMT_JSON) {
        tprof_jw w;
        tprof_jw_init(&w, stdout);
        if (d->json_rows_only) tprof_rows_json(tprof_result_table_c(r, t - 1), limit, &w);
        else {
            tprof_jw_obj(&w);
            tprof_result_json_members(r, limit, &w);
            tprof_jw_obj_end(&w);
        }
    } else if (fmt == FMT_CSV && d->csv_tables) {
        tprof_result_csv_tables(d, r, limit, stdout);
    } else if (fmt == FMT_CSV) {
        tprof_rows_csv_header(t ? d->tables[t - 1] : d->top, NULL, stdout);
        tprof_rows_csv(t ? tprof_result_table_c(r, t - 1) : tprof_result_top_c(r), NULL, 0, limit, stdout);
    } else
        return tprof_rows_print_table(tprof_result_top_c(r), 0, stdout);
    return 0;
}

/* The traces shown, in rank order: each one's results read back from the
 * store when it is printed or folded. */
typedef struct {
    const cli_spec *spec;
    size_t np;
    cli_store *store;
    size_t n;
    const size_t *input; /* shown trace k -> its input */
    char **paths;        /* by shown trace */
    const char *const *lab;
    const int64_t *rank;
    /* the collectives' matching (trainprof-mpi): joined onto the parts of input CARRIER */
    const cli_coll_matching *spread;
    size_t carrier;
} shown_set;

/* Shown trace K's parts, read back into PARTS[0..np); 0, or an exit code
 * after saying why. */
static int shown_load(const shown_set *s, size_t k, tprof_result **parts)
{
    size_t i = s->input[k];
    char *b = NULL, err[256] = "";
    size_t l = 0;
    int e = cli_store_get(s->store, i, &b, &l);
    if (e) snprintf(err, sizeof err, "%s", tprof_strerror(e));
    else e = cli_parts_read(b, l, parts, s->np, err, sizeof err);
    free(b);
    if (e) {
        cli_error("%s: its results could not be read back: %s", s->paths[k], err);
        return EXIT_INPUT;
    }
    tprof_result *coll = s->spread && i == s->carrier ? parts[s->spec->coll_part - 1] : NULL;
    if (coll && cli_coll_spread_join(s->spread, coll)) {
        for (size_t p = 0; p < s->np; p++) tprof_result_free(parts[p]), parts[p] = NULL;
        cli_error("the collectives could not be matched across the processes");
        return EXIT_INPUT;
    }
    return 0;
}

/* R into *FOLD (made on the first), in rank order; 0 or a TPROF_E* code. */
static int fold_in(tprof_fold **fold, const tprof_result *r)
{
    if (!*fold && !(*fold = tprof_fold_new(tprof_result_desc_of(r)))) return TPROF_ENOMEM;
    return tprof_fold_add(*fold, r);
}

/* The fold's combination, finished as part PART; NULL with *RC set on failure. */
static tprof_result *fold_end(const cli_spec *spec, void *ctx, size_t part, tprof_fold *fold, int *rc)
{
    tprof_result *r = NULL;
    *rc = fold ? tprof_fold_end(fold, &r) : TPROF_EUSAGE;
    if (!*rc && spec->finish_part) *rc = spec->finish_part(ctx, part, r);
    if (*rc) {
        tprof_result_free(r);
        r = NULL;
    }
    return r;
}

/* The one result of a cross-rank command, from every trace's facts (the
 * folded parts folded as they are read back). */
static int print_whole_run(const cli_spec *spec, void *ctx, cli_format fmt, const shown_set *s, size_t limit)
{
    const tprof_result_desc *d = spec->result;
    size_t t = (size_t)d->csv_table, n = s->n, np = s->np;
    if (!n) { /* nothing was read: CSV still says its columns */
        if (fmt == FMT_CSV && d->csv_tables) tprof_result_csv_tables(d, NULL, limit, stdout);
        else if (fmt == FMT_CSV) tprof_rows_csv_header(t ? d->tables[t - 1] : d->top, NULL, stdout);
        return EXIT_OK;
    }
    tprof_result **held = calloc(n * np, sizeof *held), **folded = calloc(np, sizeof *folded);
    tprof_fold **folds = calloc(np, sizeof *folds);
    int rc = held && folded && folds ? EXIT_OK : EXIT_INPUT, e = 0;
    if (rc) cli_error("out of memory");
    for (size_t k = 0; !rc && !e && k < n; k++) {
        tprof_result **parts = &held[k * np];
        rc = shown_load(s, k, parts);
        for (size_t p = 0; !rc && p < np; p++) {
            if (!(spec->folded_parts >> p & 1)) continue;
            int fe = fold_in(&folds[p], parts[p]); /* the first error stays */
            if (!e) e = fe;
            tprof_result_free(parts[p]);
            parts[p] = NULL;
        }
    }
    for (size_t p = 0; !rc && !e && p < np; p++)
        if (spec->folded_parts >> p & 1) {
            folded[p] = fold_end(spec, ctx, p, folds[p], &e);
            folds[p] = NULL;
        }
    tprof_result *r = NULL;
    if (!rc && !e) e = spec->reduce(ctx, (const tprof_result *const *)held, n, folded, &r);
    if (!rc && e) {
        cli_error("%s", tprof_strerror(e));
        rc = EXIT_INPUT;
    }
    if (!rc) {
        if (fmt == FMT_TABLE && spec->print) e = spec->print(ctx, r, NULL, NULL);
        else e = cli_print_whole(r, fmt, limit);
        if (e) {
            cli_error("%s", tprof_strerror(e));
            rc = EXIT_INPUT;
        }
    }
    tprof_result_free(r);
    for (size_t i = 0; held && i < n * np; i++) tprof_result_free(held[i]);
    for (size_t p = 0; folds && folded && p < np; p++) tprof_fold_free(folds[p]), tprof_result_free(folded[p]);
    free(held);
    free(folded);
    free(folds);
    return rc;
}

/* The key metric of results of D (NULL: none). */
static const tprof_col_desc *metric_of(const tprof_result_desc *d)
{
    for (size_t c = 0; c < d->top->ncols; c++)
        if (d->top->cols[c].flags & TPROF_COLF_METRIC) return &d->top->cols[c];
    return NULL;
}

/* The text of many traces: the distribution across them (TOPS: each
 * one's top row), the worst few by the key metric (each as PRINT shows a
 * trace, read back again, or their rows), then ALL. */
static int print_across(const cli_spec *spec, void *ctx, const shown_set *s, const tprof_result *const *tops,
                        const tprof_result *all, const char *all_label)
{
    size_t n = s->n, worst[CLI_RANKS_WORST];
    size_t k = tprof_ranks_worst(tops, NULL, n, CLI_RANKS_WORST, worst);
    const tprof_col_desc *metric = metric_of(tprof_result_desc_of(tops[0]));
    printf("%zu traces: their distribution across ranks", n);
    if (k)
        printf(" and the %zu with the %s %s", k, (metric->flags & TPROF_COLF_LOW_WORST) ? "lowest" : "highest",
               metric->title ? metric->title : metric->name);
    printf(" (%s)\n\n", CLI_ACROSS_HINT);
    int e = tprof_results_print_dist(tops, s->lab, n, stdout);
    if (!e && k) {
        printf("\n");
        if (spec->print)
            for (size_t i = 0; !e && i < k; i++) {
                tprof_result *r = NULL;
                if (shown_load(s, worst[i], &r)) return EXIT_INPUT;
                if (i) printf("\n");
                e = spec->print(ctx, r, s->lab[worst[i]], s->paths[worst[i]]);
                tprof_result_free(r);
            }
        else
            e = tprof_results_print_some(tops, s->lab, worst, k, "trace", stdout);
    }
    if (!e && all && spec->print) {
        printf("\n");
        e = spec->print(ctx, all, all_label, NULL);
    }
    if (e) cli_error("%s", tprof_strerror(e));
    return e ? EXIT_INPUT : EXIT_OK;
}

/* Prints the results in rank order, each read back as it is printed (and,
 * for a command that combines, folded: their combination after them).
 * Returns an exit code. */
static int print_results(const cli_spec *spec, void *ctx, cli_format fmt, const shown_set *s)
{
    int rc = EXIT_OK;
    size_t n = s->n, limit = spec->limit ? spec->limit(ctx) : 0;
    if (spec->reduce) return print_whole_run(spec, ctx, fmt, s, limit);
    const tprof_result_desc *d = spec->result_for ? spec->result_for(ctx) : spec->result;
    char all_label[64];
    snprintf(all_label, sizeof all_label, "all %zu traces", n);
    int each = fmt != FMT_TABLE || (spec->print && !cli_across(n)); /* printed as read back */
    tprof_result **tops = each ? NULL : calloc(n ? n : 1, sizeof *tops); /* the text's top rows */
    if (!each && !tops) {
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    tprof_jw w;
    size_t t = (size_t)d->csv_table;
    if (fmt == FMT_JSON) {
        tprof_jw_init(&w, stdout);
        if (spec->combines) { /* {"traces": [...], "combined": {...}} */
            tprof_jw_obj(&w);
            tprof_jw_key(&w, "traces");
        }
        tprof_jw_arr(&w);
    } else if (fmt == FMT_CSV)
        tprof_rows_csv_header(t ? d->tables[t - 1] : d->top, d->no_label ? "file" : "trace,file", stdout);
    tprof_fold *fold = NULL;
    int fold_rc = 0;
    size_t shown = 0; /* the traces read back */
    for (size_t k = 0; k < n; k++, shown++) {
        tprof_result *r = NULL;
        if ((rc = shown_load(s, k, &r))) break;
        if (spec->combines && n > 1 && !fold_rc) fold_rc = fold_in(&fold, r);
        if (fmt == FMT_JSON && d->no_label) { /* the trace named by its file alone */
            cli_json_file_result(&w, s->paths[k], r, limit);
        } else if (fmt == FMT_JSON) {
            cli_json_begin(&w, s->lab[k], s->paths[k]);
            tprof_result_json_members(r, limit, &w);
            tprof_jw_obj_end(&w);
        } else if (fmt == FMT_CSV) {
            const char *prefix[] = { s->lab[k], s->paths[k] };
            tprof_rows_csv(t ? tprof_result_table_c(r, t - 1) : tprof_result_top_c(r), prefix + d->no_label,
                           2 - (size_t)d->no_label, limit, stdout);
        } else if (each) {
            if (k) printf("\n");
            int e = spec->print(ctx, r, s->lab[k], s->paths[k]);
            if (e) {
                cli_error("%s: %s", s->paths[k], tprof_strerror(e));
                rc = EXIT_INPUT;
            }
        } else if (tprof_result_top_only(r, &tops[k])) {
            tprof_result_free(r);
            cli_error("out of memory");
            rc = EXIT_INPUT;
            break;
        }
        tprof_result_free(r);
    }
    rc = rc == EXIT_INPUT || shown < n ? EXIT_INPUT : EXIT_OK;
    tprof_result *all = NULL;
    if (fold || fold_rc) {
        all = shown == n && !fold_rc ? fold_end(spec, ctx, 0, fold, &fold_rc) : (tprof_fold_free(fold), NULL);
        if (fold_rc) {
            cli_error("combining the traces: %s", tprof_strerror(fold_rc));
            rc = EXIT_INPUT;
        }
    }
    if (fmt == FMT_JSON) {
        tprof_jw_arr_end(&w);
        if (all) {
            tprof_jw_key(&w, "combined");
            cli_json_begin(&w, all_label, NULL);
            tprof_result_json_members(all, limit, &w);
            tprof_jw_obj_end(&w);
        }
        if (spec->combines) tprof_jw_obj_end(&w);
    } else if (fmt == FMT_CSV) {
        const char *prefix[] = { "all", "" };
        if (all)
            tprof_rows_csv(t ? tprof_result_table_c(all, t - 1) : tprof_result_top_c(all), prefix + d->no_label,
                           2 - (size_t)d->no_label, limit, stdout);
    } else if (each) {
        if (all) {
            printf("\n");
            int e = spec->print(ctx, all, all_label, NULL);
            if (e) {
                cli_error("%s: %s", all_label, tprof_strerror(e));
                rc = EXIT_INPUT;
            }
        }
    } else if (shown == n && cli_across(n)) {
        int e = print_across(spec, ctx, s, (const tprof_result *const *)tops, all, all_label);
        if (e > rc) rc = e;
    } else if (shown == n && n && tprof_results_print_top((const tprof_result *const *)tops, s->lab, n, "trace", stdout)) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
    }
    for (size_t k = 0; tops && k < n; k++) tprof_result_free(tops[k]);
    free(tops);
    tprof_result_free(all);
    return rc;
}

int cli_agree_worst(int rc)
{
    if (!engine || !engine->share) return rc;
    char mine[16], *all = NULL;
    size_t len = 0;
    int n = snprintf(mine, sizeof mine, "%d;", rc), worst = rc;
    if (engine->share(engine->ctx, mine, (size_t)n, &all, &len)) return rc ? rc : EXIT_INPUT;
    for (char *p = all, *end = all + len; p < end;) { /* "rc;" per process */
        char *next;
        long v = strtol(p, &next, 10);
        if (next == p || next >= end || *next != ';') break;
        worst = cli_worse_exit(worst, (int)v);
        p = next + 1;
    }
    free(all);
    if (worst != EXIT_OK && rc == EXIT_OK && engine->root)
        cli_error("another process failed before the traces were read (exit %d)", worst);
    return worst;
}

void cli_set_engine(const cli_engine *e) { engine = e; }
const cli_engine *cli_get_engine(void) { return engine; }

int cli_place_inputs(char *const *paths, size_t n, uint8_t *mine)
{
    if (!engine) {
        memset(mine, 1, n);
        return 0;
    }
    int64_t *sizes = malloc((n ? n : 1) * sizeof *sizes);
    if (!sizes) {
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    for (size_t i = 0; i < n; i++) {
        struct stat st; /* the sizes the engine balances by */
        sizes[i] = strcmp(paths[i], "-") && stat(paths[i], &st) == 0 ? (int64_t)st.st_size : -1;
    }
    int rc = engine->place(engine->ctx, paths, sizes, n, mine);
    free(sizes);
    return rc;
}

/* Where the outcomes are read back (at the root): each input's outcome
 * into OC, its results' bytes into the store. */
typedef struct {
    const char *const *paths;
    cli_outcome *oc;
    cli_store *store;  /* the results' bytes, read back when printed */
    cli_store *outbox; /* with an engine: this process's outcomes until they are sent */
    uint8_t *got;
} take_job;

/* Input I's outcome, from its bytes. */
static int take_outcome(void *arg, size_t i, const char *b, size_t l)
{
    take_job *t = arg;
    char err[256];
    size_t at;
    if (t->got[i]) return 0;
    if (cli_outcome_head(b, l, &t->oc[i], &at, err, sizeof err)) {
        cli_error("%s: its results could not be read back: %s", t->paths[i], err);
        return EXIT_INPUT;
    }
    char *parts = at < l ? malloc(l - at) : NULL;
    if (at < l && !parts) {
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    if (parts) {
        memcpy(parts, b + at, l - at);
        cli_store_put(t->store, i, parts, l - at);
    }
    t->got[i] = 1;
    return 0;
}

/* The inputs this process analyses (every one without an engine), read
 * and analysed: their outcomes into TAKE without an engine, else as bytes
 * into TAKE's outbox for it. Returns 0 or an exit code. */
static int analyse_mine(const cli_spec *spec, void *ctx, char **paths, int n, const tprof_read_opts *ro,
                        take_job *take)
{
    size_t np = cli_parts(spec);
    uint8_t *mine = malloc((size_t)n);
    char **my_paths = malloc((size_t)n * sizeof *my_paths);
    int *idx = malloc((size_t)n * sizeof *idx);
    if (!mine || !my_paths || !idx) {
        free(mine), free(my_paths), free(idx);
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    int rc = cli_place_inputs(paths, (size_t)n, mine);
    int m = 0;
    for (int i = 0; !rc && i < n; i++)
        if (mine[i]) idx[m] = i, my_paths[m++] = paths[i];
    size_t m1 = (size_t)(m ? m : 1);
    tprof_read_result *rr = calloc(m1, sizeof *rr);
    analyse_job job = { spec, ctx, calloc(m1 * np, sizeof *job.res), calloc(m1, sizeof *job.rc),
                        calloc(m1, sizeof *job.rank), calloc(m1, sizeof *job.held), calloc(m1, sizeof *job.claimed),
                        engine ? take->outbox : take->store, idx };
    if (!rc && (!rr || !job.res || !job.rc || !job.rank || !job.held || !job.claimed)) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
    }
    if (!rc) {
        for (int k = 0; k < m; k++) {
            rr[k].rc = TPROF_EIO; /* a slot never read (usage error) shows nothing */
            job.rank[k] = job.claimed[k] = -1;
        }
        int read_exit = m ? read_traces(my_paths, m, m, ro, rr, analyse_read, &job, 0) : EXIT_OK;
        for (int k = 0; !rc && k < m; k++) {
            int i = idx[k];
            cli_outcome o = { rr[k].rc, read_exit, job.rc[k], job.rank[k], job.claimed[k], job.held[k] };
            if (!engine) { /* the results are in the store already */
                take->oc[i] = o;
                job.held[k] = NULL;
                take->got[i] = 1;
            } else { /* its results in the outbox become its outcome there, until it is sent */
                char *pb = NULL, *ob = NULL;
                size_t pl = 0, obl;
                if ((cli_store_has(take->outbox, (size_t)i) && cli_store_get(take->outbox, (size_t)i, &pb, &pl)) ||
                    cli_outcome_write(&o, pb, pl, &ob, &obl)) {
                    cli_error("out of memory");
                    rc = EXIT_INPUT;
                } else
                    cli_store_put(take->outbox, (size_t)i, ob, obl);
                free(pb);
            }
        }
    }
    for (size_t i = 0; job.res && i < m1 * np; i++) tprof_result_free(job.res[i]);
    for (int k = 0; job.held && k < m; k++) free(job.held[k]);
    free(job.res), free(job.rc), free(job.rank), free(job.held), free(job.claimed);
    free(rr);
    free(mine), free(my_paths), free(idx);
    return rc;
}

/* Every input analysed where the engine places it (here, without one) and
 * its outcome at the root: OC[i] (GOT[i] set), its results' bytes in
 * STORE, the worst of the reads' exit codes in *READS; with
 * SPEC->coll_part and an engine, the collectives of inputs [0, SPLIT)
 * matched by group into SPREAD[0] first, and those of [SPLIT, N) into
 * SPREAD[1]. The ranks several files claim are said for the two groups
 * apart. Every process calls it. 0, or an exit code when the outcomes are
 * not all there (the root's is the one that counts). */
static int gather_outcomes(const cli_spec *spec, void *ctx, char **paths, int n, int split, const tprof_read_opts *ro,
                           cli_outcome *oc, uint8_t *got, cli_store *store, cli_coll_matching *spread[2], int *reads)
{
    *reads = EXIT_OK;
    cli_store *outbox = engine ? cli_store_new((size_t)n) : NULL;
    if (engine && !outbox) {
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    take_job take = { (const char *const *)paths, oc, store, outbox, got };
    int rc = analyse_mine(spec, ctx, paths, n, ro, &take);
    for (int g = 0; g < 2 && engine && engine->exchange && spec->coll_part; g++) { /* every process, even after
                                                                                        an error here */
        size_t lo = g ? (size_t)split : 0, hi = g ? (size_t)n : (size_t)split;
        if (lo == hi) continue;
        int s = cli_coll_spread(engine, cli_parts(spec), spec->coll_part - 1, outbox, lo, hi, (size_t)n, &spread[g]);
        if (!rc && s && engine->root) {
            cli_error("the collectives could not be matched across the processes");
            rc = s;
        }
    }
    if (engine) { /* even after an error here: the root waits for every process */
        int g = engine->gather(engine->ctx, outbox, (size_t)n, take_outcome, &take);
        if (!rc) rc = g;
    }
    cli_store_free(outbox); /* sent, or in the store now */
    if (rc || (engine && !engine->root)) return rc;
    for (int i = 0; i < n; i++) {
        if (!got[i]) {
            cli_error("%s: no results came for it", paths[i]);
            return EXIT_INPUT;
        }
        *reads = cli_worse_exit(*reads, oc[i].read_exit);
    }
    /* the ranks several files claim, said once every input is known */
    int64_t *claimed = malloc((size_t)n * sizeof *claimed);
    for (int i = 0; claimed && i < n; i++) claimed[i] = oc[i].claimed;
    if (claimed) warn_shared_ranks(paths, split, claimed);
    if (claimed && split < n) warn_shared_ranks(paths + split, n - split, claimed + split);
    free(claimed);
    return rc;
}

int cli_analyse_inputs(const cli_spec *spec, void *ctx, char **paths, int n, int split, const tprof_read_opts *ro,
                       cli_outcome *oc, cli_store **store, cli_coll_matching *spread[2])
{
    *store = NULL;
    spread[0] = spread[1] = NULL;
    uint8_t *got = calloc((size_t)(n ? n : 1), 1);
    cli_store *st = cli_store_new((size_t)n);
    if (!got || !st) {
        free(got);
        cli_store_free(st);
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    int reads, rc = gather_outcomes(spec, ctx, paths, n, split, ro, oc, got, st, spread, &reads);
    free(got);
    if (rc || (engine && !engine->root)) { /* outcomes missing (said), or not the root: nothing to show */
        cli_store_free(st);
        cli_coll_spread_free(spread[0]), cli_coll_spread_free(spread[1]);
        spread[0] = spread[1] = NULL;
        return rc;
    }
    *store = st;
    return reads;
}

static int run_results(const cli_spec *spec, void *ctx, char **paths, int n, const tprof_read_opts *ro,
                       cli_format fmt)
{
    size_t np = cli_parts(spec);
    cli_outcome *oc = calloc((size_t)n, sizeof *oc);
    uint8_t *got = calloc((size_t)n, 1);
    cli_store *store = cli_store_new((size_t)n);
    size_t *shown_input = calloc((size_t)n, sizeof *shown_input);
    int64_t *rank = calloc((size_t)n, sizeof *rank), *shown_rank = calloc((size_t)n, sizeof *shown_rank);
    char (*labels)[64] = calloc((size_t)n, sizeof *labels);
    const char **lab = calloc((size_t)n, sizeof *lab);
    char **shown_path = calloc((size_t)n, sizeof *shown_path);
    cli_coll_matching *spread[2] = { NULL, NULL }; /* one group of inputs: [0] */
    int rc = EXIT_INPUT;
    if (!oc || !got || !store || !shown_input || !rank || !shown_rank || !labels || !lab || !shown_path) {
        cli_error("out of memory");
        goto done;
    }
    int reads;
    rc = gather_outcomes(spec, ctx, paths, n, n, ro, oc, got, store, spread, &reads);
    if (rc || (engine && !engine->root)) goto done;
    rc = reads; /* and on: what was read is shown */
    for (int i = 0; i < n; i++) rank[i] = oc[i].rank;
    /* labels: "rank R" when a trace says its rank, else "trace N", N its place in rank order */
    size_t *order = calloc((size_t)n, sizeof *order);
    if (!order || tprof_rank_order(rank, (size_t)n, order)) {
        free(order);
        cli_error("out of memory");
        rc = EXIT_INPUT;
        goto done;
    }
    size_t ns = 0;
    for (int o = 0; o < n; o++) { /* the results in rank order, one rule for every command */
        int i = (int)order[o];
        if (oc[i].read_rc && oc[i].read_rc != TPROF_ETRUNC) continue;
        if (oc[i].job_rc) {
            const char *why = spec->usage_error_for ? spec->usage_error_for(ctx) : spec->usage_error;
            if (oc[i].job_rc == TPROF_EUSAGE && why)
                cli_error("%s: %s%s%s", paths[i], why, oc[i].held ? ": it holds " : "", oc[i].held ? oc[i].held : "");
            else cli_error("%s: %s", paths[i], tprof_strerror(oc[i].job_rc));
            if (rc < EXIT_INPUT) rc = oc[i].job_rc == TPROF_EUSAGE ? EXIT_USAGE : EXIT_INPUT;
            continue;
        }
        /* "trace N": N the place in rank order, as summary, ranks and advice count it */
        tprof_fmt_trace_label(labels[ns], sizeof labels[ns], rank[i], ns);
        lab[ns] = labels[ns];
        shown_path[ns] = paths[i];
        shown_rank[ns] = rank[i];
        shown_input[ns++] = (size_t)i;
    }
    free(order);
    shown_set shown = { spec, np, store, ns, shown_input, shown_path, lab, shown_rank, spread[0],
                        spread[0] ? cli_coll_spread_first(spread[0]) : 0 };
    int e = print_results(spec, ctx, fmt, &shown);
    if (e > rc) rc = e;
done:
    cli_coll_spread_free(spread[0]);
    for (int i = 0; oc && i < n; i++) cli_outcome_free(&oc[i], NULL, 0);
    cli_store_free(store);
    free(oc);
    free(got);
    free(rank);
    free(shown_input);
    free(shown_rank);
    free(labels);
    free(lab);
    free(shown_path);
    return engine ? engine->agree(engine->ctx, rc) : rc;
}

int cli_run(int argc, char **argv, const cli_spec *spec, void *ctx)
{
    static const struct option common[] = { CLI_COMMON_LONGOPTS };
    size_t nextra = 0;
    while (spec->opts && spec->opts[nextra].name) nextra++;
    size_t ncommon = sizeof common / sizeof *common;
    struct option *opts = calloc(nextra + ncommon + 1, sizeof *opts);
    if (!opts) return EXIT_INPUT;
    if (nextra) memcpy(opts, spec->opts, nextra * sizeof *opts);
    memcpy(opts + nextra, common, ncommon * sizeof *opts);
    cli_common co = { 0 };
    int c, rc = EXIT_OK;
    optind = 0; /* 0, not 1: getopt starts afresh, its ordering mode too (report runs commands in turn) */
    while (!rc && (c = cli_getopt(argc, argv, "h", opts)) != -1) {
        int k = cli_common_option(c, optarg, &co);
        if (k) {
            if (k < 0) rc = EXIT_USAGE;
        } else if (c == 'h') {
            spec->help(stdout);
            free(opts);
            cli_common_free(&co);
            return EXIT_OK;
        } else if (c == '?' || !spec->option || spec->option(ctx, c, optarg))
            rc = EXIT_USAGE;
    }
    free(opts);
    int n = argc - optind;
    if (!rc && n < 1) {
        spec->help(stderr);
        rc = EXIT_USAGE;
    }
    if (!rc && co.fmt == FMT_CSV && spec->result->no_csv) {
        cli_error("this command has no CSV form (use --format json)");
        rc = EXIT_USAGE;
    }
    if (rc) {
        cli_common_free(&co);
        return rc;
    }
    tprof_inputs in;
    rc = engine && engine->inputs ? engine->inputs(engine->ctx, argv + optind, n, &in)
                                  : cli_expand_inputs(argv + optind, n, CLI_TRACES | spec->accepts, &in);
    /* run_results reorders its list in place: a copy of the pointers, freed through IN */
    char **paths = rc ? NULL : malloc(in.npaths * sizeof *paths);
    if (!rc && !paths) {
        cli_error("out of memory");
        rc = EXIT_INPUT;
    }
    if (!rc) {
        memcpy(paths, in.paths, in.npaths * sizeof *paths);
        tprof_read_opts ro = { .keep = spec->keep_for ? spec->keep_for(ctx) : spec->keep, .classifier = co.cls,
                               .threads = co.threads };
        cli_threads = co.threads;
        if (spec->classifier) spec->classifier(ctx, co.cls);
        rc = run_results(spec, ctx, paths, (int)in.npaths, &ro, co.fmt);
    }
    free(paths);
    tprof_inputs_free(&in);
    cli_common_free(&co);
    return rc;
}

void cli_json_begin(tprof_jw *w, const char *label, const char *path)
{
    tprof_jw_obj(w);
    tprof_jw_kstr(w, "label", label);
    tprof_jw_kstr(w, "file", path);
}

void cli_json_file_result(tprof_jw *w, const char *path, const tprof_result *r, size_t limit)
{
    tprof_jw_obj(w);
    tprof_jw_kstr(w, "file", path);
    tprof_result_json_members(r, limit, w);
    tprof_jw_obj_end(w);
}
