/* trainprof report: one self-contained HTML page of a run (traces of every
 * rank, memory snapshots, training logs), with charts.
 *
 * The page's numbers are the commands' own: the report runs `summary`
 * (and `mfu`, `diff` when asked), `mem` and `log` over the inputs with
 * --format json, each with its standard output in memory, and puts their
 * JSON into the page unchanged; the page's script (report/report.js) only
 * draws it. The charting library
 * (Apache ECharts, pinned in package.json) and the script are inlined at
 * build time (report/embed.c), so the page needs nothing beside it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "trainprof/json.h"
#include "trainprof/version.h"

extern const unsigned char tprof_asset_page[], tprof_asset_css[], tprof_asset_js[];
extern const size_t tprof_asset_page_len, tprof_asset_css_len, tprof_asset_js_len;
#ifdef TPROF_HAVE_ECHARTS
extern const unsigned char tprof_asset_echarts[];
extern const size_t tprof_asset_echarts_len;
#endif

static void help(FILE *f)
{
    fprintf(f,
            "usage: trainprof report [options] INPUT... -o REPORT.html [--vs BASE...]\n\n"
            "One HTML file that shows a training run: traces (one per rank, or a directory),\n"
            "CUDA memory snapshots, training logs and a model's config.json (with --seqlens),\n"
            "in any mix, each recognised by its content. It works offline from file://\n"
            "(the charting library is inside it).\n"
            "Its numbers are those of trainprof summary, mfu, diff, mem and log with\n"
            "--format json, which the page holds unchanged.\n\n"
            "options:\n"
            "  -o, --output FILE     the page (written atomically; required)\n"
            "  --title TEXT          the page's title (default: the first input's name)\n"
            "  --top N               kernels and ops per rank in the tables (default 20)\n"
            "  --points N            memory timeline points per device (default 2000)\n"
            "  --threads N           threads that parse one large file (0 = one per core)\n"
            "  --vs BASE...          a before/after report: the traces after it are the base\n"
            "                        run, the inputs' traces the run shown (trainprof diff)\n"
            "MFU, when a model's config.json is among the inputs (trainprof mfu at the\n"
            "median rank's mean step time):\n"
            "  --seqlens LIST        tokens of each sequence in one step on one rank\n"
            "                        (required with a config: 4096,4096 or 4096x2)\n"
            "  --device NAME         the GPU (default: the traces' device)\n"
            "  --peak-tflops X       one device's dense BF16 peak (overrides --device)\n"
            "  --world-size N        GPUs in the job (default 1: MFU per GPU is the same)\n"
            "  --color auto|always|never\n");
}

typedef struct {
    char **v;
    size_t n, cap;
} args;

static int arg_push(args *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        char **v = realloc(a->v, cap * sizeof *v);
        if (!v) return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = (char *)s;
    a->v[a->n] = NULL;
    return 0;
}

/* The inputs by kind. */
typedef struct {
    args traces, snapshots, logs;
    const char *config; /* a model's config.json, for MFU */
    args base;          /* --vs: the base run's traces */
} inputs;

/* What one command printed (its JSON) and its exit code. */
typedef struct {
    char *buf;
    size_t len;
    int rc;
} captured;

/* Runs CMD over A (a->v[0] its name) with the standard output in memory:
 * glibc's stdout is an ordinary variable, so the command prints exactly
 * what it prints on a terminal, through its own code. */
static int capture(int (*cmd)(int, char **), const args *a, captured *out)
{
    *out = (captured){ 0 };
    fflush(stdout);
    FILE *m = open_memstream(&out->buf, &out->len);
    if (!m) return -1;
    FILE *saved = stdout;
    stdout = m;
    out->rc = cmd((int)a->n, a->v);
    stdout = saved;
    int bad = ferror(m) != 0;
    if (fclose(m) || bad) {
        free(out->buf);
        out->buf = NULL;
        return -1;
    }
    return 0;
}

/* JSON inside a <script> element: every '<' as \u003c ('<' only occurs
 * inside JSON strings), so that no "</script>" or "<!--" ends it early. */
static void script_json(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '<') fputs("\\u003c", f);
        else fputc(s[i], f);
    }
}

/* One command's output as the value of KEY in the data object, or null
 * when it printed nothing. */
static void put_output(FILE *f, const char *key, const captured *c, int *first)
{
    fprintf(f, "%s\"%s\":", *first ? "" : ",", key);
    *first = 0;
    size_t n = c->len;
    while (n && (c->buf[n - 1] == '\n' || c->buf[n - 1] == ' ')) n--;
    if (n) script_json(f, c->buf, n);
    else fputs("null", f);
}

/* The worse of two exit codes: a failure (usage, input, output) over
 * truncation (results of what was read) over success. */
static int severity(int rc) { return rc == EXIT_OK || rc == EXIT_CHECK ? 0 : rc == EXIT_TRUNC ? 1 : 2; }
static int worse(int a, int b) { return severity(b) > severity(a) ? b : a; }

/* Runs CMD over A (when BAD is 0: A was built) and puts its JSON as KEY;
 * A is freed. KEEP, when not NULL, gets the output (the caller frees it). */
static int put_command(FILE *f, const char *key, int (*cmd)(int, char **), args *a, int bad, int *rc, int *first,
                       captured *keep)
{
    captured c = { 0 };
    if (!bad) bad = capture(cmd, a, &c);
    free(a->v);
    *a = (args){ 0 };
    if (bad) {
        cli_error("out of memory");
        return -1;
    }
    *rc = worse(*rc, c.rc);
    put_output(f, key, &c, first);
    if (keep) *keep = c;
    else free(c.buf);
    return 0;
}

/* A's paths as the JSON array KEY. */
static void put_paths(FILE *f, const char *key, const args *a, int last)
{
    fprintf(f, "\"%s\":[", key);
    for (size_t i = 0; i < a->n; i++) {
        if (i) fputc(',', f);
        /* a path is JSON-escaped, then made safe inside the script */
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (m) {
            tprof_jw w;
            tprof_jw_init(&w, m);
            tprof_jw_str(&w, a->v[i]);
            fclose(m);
            script_json(f, buf, len);
        }
        free(buf);
    }
    fprintf(f, "]%s", last ? "" : ",");
}


typedef struct {
    const char *output, *title;
    const char *top, *points, *threads;
    /* MFU (mfu's options, passed on): the model config is an input */
    const char *seqlens, *device, *peak_tflops, *world_size;
} report_opts;

/* Reads the whole file PATH (malloc'd) into C's buffer; -1 when it cannot. */
static int slurp(const char *path, captured *c)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    FILE *m = open_memstream(&c->buf, &c->len);
    if (!m) {
        fclose(f);
        return -1;
    }
    char b[1 << 16];
    size_t n;
    while ((n = fread(b, 1, sizeof b, f)) > 0) fwrite(b, 1, n, m);
    int bad = ferror(f);
    fclose(f);
    if (fclose(m) || bad) {
        free(c->buf);
        c->buf = NULL;
        return -1;
    }
    return 0;
}

/* The memory part: for each snapshot, `mem --format json --timeline` into
 * a temporary directory ($TMPDIR, else /tmp; removed after), both outputs
 * into the data as {"result", "timeline"} (the timeline null when mem
 * wrote none). */
static int memory_part(FILE *f, const inputs *in, const report_opts *o, int *rc, int *first)
{
    fprintf(f, "%s\"memory\":[", *first ? "" : ",");
    *first = 0;
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/trainprof-report.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (in->snapshots.n && !mkdtemp(dir)) {
        cli_error("cannot make a temporary directory (%s) for the memory timelines: %s", dir, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < in->snapshots.n; i++) {
        char prefix[sizeof dir + 32], path[sizeof prefix + 8];
        snprintf(prefix, sizeof prefix, "%s/memory_%zu", dir, i);
        args a = { 0 };
        int bad = arg_push(&a, "mem") || arg_push(&a, "--format") || arg_push(&a, "json") ||
                  arg_push(&a, "--timeline") || arg_push(&a, prefix) || arg_push(&a, "--top") || arg_push(&a, "0") ||
                  (o->points && (arg_push(&a, "--points") || arg_push(&a, o->points))) ||
                  arg_push(&a, in->snapshots.v[i]);
        captured c = { 0 }, tl = { 0 };
        cli_quiet_wrote = 1;
        if (!bad) bad = capture(cmd_mem, &a, &c);
        cli_quiet_wrote = 0;
        free(a.v);
        snprintf(path, sizeof path, "%s.json", prefix);
        if (!bad && c.len && slurp(path, &tl)) tl = (captured){ 0 }; /* none written: null */
        unlink(path);
        snprintf(path, sizeof path, "%s.svg", prefix);
        unlink(path);
        if (bad) {
            free(c.buf);
            free(tl.buf);
            rmdir(dir);
            cli_error("out of memory");
            return -1;
        }
        *rc = worse(*rc, c.rc);
        if (i) fputc(',', f);
        /* mem prints an array of one object per snapshot */
        int at_first = 1;
        fputc('{', f);
        put_output(f, "result", &c, &at_first);
        put_output(f, "timeline", &tl, &at_first);
        fputc('}', f);
        free(c.buf);
        free(tl.buf);
    }
    if (in->snapshots.n) rmdir(dir);
    fputc(']', f);
    return 0;
}

/* A trace command over every trace (one read of each), as JSON; its output
 * stays in *C for the parts that read it (the caller frees it). */
static int traces_part(FILE *f, const char *key, int (*cmd)(int, char **), const inputs *in, const report_opts *o,
                       int *rc, int *first, captured *out)
{
    *out = (captured){ 0 };
    if (!in->traces.n) { /* no trace: null */
        put_output(f, key, out, first);
        return 0;
    }
    args a = { 0 };
    int bad = arg_push(&a, key) || arg_push(&a, "--format") || arg_push(&a, "json") || arg_push(&a, "--top") ||
              arg_push(&a, o->top ? o->top : "20") ||
              (o->threads && (arg_push(&a, "--threads") || arg_push(&a, o->threads)));
    for (size_t i = 0; !bad && i < in->traces.n; i++) bad = arg_push(&a, in->traces.v[i]);
    return put_command(f, key, cmd, &a, bad, rc, first, out);
}

/* What MFU takes of summary's JSON: the mean step time of the median rank
 * (the headline's: the lower middle of the traces' steps.mean_ns) and the
 * device of its roofline. 0, or -1 when no trace has a ProfilerStep. */
static int summary_step_time(const captured *sum, int64_t *step_ns, char *device, size_t devlen)
{
    tprof_json *j;
    if (!sum->len || tprof_json_open_mem(&j, sum->buf, sum->len, "summary")) return -1;
    int64_t *means = NULL, count = 0;
    size_t n = 0, cap = 0;
    int in_steps = 0, in_device = 0, bad = 0;
    char key[32] = "";
    tprof_json_token t;
    *device = 0;
    while (!bad && tprof_json_next(j, &t) == 0 && t.type != TPROF_JSON_EOF) {
        if (t.type == TPROF_JSON_KEY) {
            snprintf(key, sizeof key, "%.*s", (int)(t.len < 31 ? t.len : 31), t.text);
            if (t.depth == 3 && !strcmp(key, "steps")) in_steps = 1, count = 0;
            if (t.depth == 1) in_device = !strcmp(key, "roofline_device");
            continue;
        }
        if (in_steps && t.depth == 3) in_steps = 0; /* the steps object closed */
        if (in_steps && t.depth == 4 && t.type == TPROF_JSON_NUMBER) {
            int64_t v;
            if (tprof_json_parse_int(t.text, t.len, &v)) continue;
            if (!strcmp(key, "count")) count = v;
            else if (!strcmp(key, "mean_ns") && count > 0) {
                if (n == cap) {
                    int64_t *m = realloc(means, (cap = cap ? 2 * cap : 64) * sizeof *m);
                    if (!m) bad = 1;
                    else means = m;
                }
                if (!bad) means[n++] = v;
            }
        }
        if (in_device && t.depth == 2 && t.type == TPROF_JSON_STRING && !strcmp(key, "device"))
            snprintf(device, devlen, "%.*s", (int)t.len, t.text);
    }
    tprof_json_close(j);
    if (bad || !n) {
        free(means);
        return -1;
    }
    for (size_t i = 1; i < n; i++) /* insertion sort: one value per rank, sorted once */
        for (size_t k = i; k > 0 && means[k - 1] > means[k]; k--) {
            int64_t x = means[k];
            means[k] = means[k - 1];
            means[k - 1] = x;
        }
    *step_ns = means[(n - 1) / 2];
    free(means);
    return 0;
}

/* MFU at the headline's step time: `mfu --config --seqlens --step-time` with
 * the device given, else the traces' (summary's roofline device). The data
 * gets mfu's JSON and the step time used. */
static int mfu_part(FILE *f, const inputs *in, const report_opts *o, const captured *sum, int *rc, int *first)
{
    if (!in->config) return 0;
    int64_t step_ns;
    char device[128], step_s[64];
    if (summary_step_time(sum, &step_ns, device, sizeof device)) {
        cli_error("%s: MFU needs the step time of a trace with ProfilerStep spans, and none has them", in->config);
        *rc = worse(*rc, EXIT_INPUT);
        return 0;
    }
    snprintf(step_s, sizeof step_s, "%.9f", (double)step_ns / 1e9);
    args a = { 0 };
    int bad = arg_push(&a, "mfu") || arg_push(&a, "--config") || arg_push(&a, in->config) ||
              arg_push(&a, "--seqlens") || arg_push(&a, o->seqlens) || arg_push(&a, "--step-time") ||
              arg_push(&a, step_s) || arg_push(&a, "--format") || arg_push(&a, "json") ||
              (o->peak_tflops && (arg_push(&a, "--peak-tflops") || arg_push(&a, o->peak_tflops))) ||
              (!o->peak_tflops && (o->device || device[0]) &&
               (arg_push(&a, "--device") || arg_push(&a, o->device ? o->device : device))) ||
              (o->world_size && (arg_push(&a, "--world-size") || arg_push(&a, o->world_size)));
    if (put_command(f, "mfu", cmd_mfu, &a, bad, rc, first, NULL)) return -1;
    fprintf(f, ",\"mfu_step_time_ns\":%lld", (long long)step_ns);
    return 0;
}

/* --vs: `diff BASE... --vs TRACES...` as JSON (the run's traces are the
 * candidate). */
static int diff_part(FILE *f, const inputs *in, const report_opts *o, int *rc, int *first)
{
    if (!in->base.n) return 0;
    args a = { 0 };
    int bad = arg_push(&a, "diff") || arg_push(&a, "--format") || arg_push(&a, "json") ||
              (o->threads && (arg_push(&a, "--threads") || arg_push(&a, o->threads)));
    for (size_t i = 0; !bad && i < in->base.n; i++) bad = arg_push(&a, in->base.v[i]);
    bad = bad || arg_push(&a, "--vs");
    for (size_t i = 0; !bad && i < in->traces.n; i++) bad = arg_push(&a, in->traces.v[i]);
    return put_command(f, "diff", cmd_diff, &a, bad, rc, first, NULL);
}

static int logs_part(FILE *f, const inputs *in, int *rc, int *first)
{
    static const char *const keys[] = { "log", "log_series" };
    for (int series = 0; series < 2; series++) {
        if (!in->logs.n) { /* no log: null */
            captured none = { 0 };
            put_output(f, keys[series], &none, first);
            continue;
        }
        args a = { 0 };
        int bad = arg_push(&a, "log") || (series && arg_push(&a, "--series")) || arg_push(&a, "--format") ||
                  arg_push(&a, "json");
        for (size_t i = 0; !bad && i < in->logs.n; i++) bad = arg_push(&a, in->logs.v[i]);
        if (put_command(f, keys[series], cmd_log, &a, bad, rc, first, NULL)) return -1;
    }
    return 0;
}

/* Sorts the inputs by kind; an input of no kind the report reads is an
 * error naming it (and the command that reads it). */
static int classify(char **paths, size_t n, inputs *in, int with_config)
{
    const unsigned accepts = CLI_TRACES | TPROF_INPUT_BIT(TPROF_INPUT_SNAPSHOT) | TPROF_INPUT_BIT(TPROF_INPUT_LOG);
    int rc = EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(paths[i], "-")) {
            cli_error("report reads files, not the standard input ('-'): it tells each input's kind by its content");
            return EXIT_USAGE;
        }
        int kind = tprof_input_sniff_path(paths[i]);
        if (kind == TPROF_INPUT_CONFIG && !with_config) {
            cli_error("%s: a model config: the report gives MFU from it with --seqlens (tokens of each sequence in "
                      "one step on one rank); `trainprof flops` gives its FLOPs alone",
                      paths[i]);
            return EXIT_USAGE;
        }
        if (kind == TPROF_INPUT_CONFIG) {
            if (in->config) {
                cli_error("%s: a second model config (the first: %s); the report takes one", paths[i], in->config);
                return EXIT_USAGE;
            }
            in->config = paths[i];
            continue;
        }
        args *to = kind == TPROF_INPUT_TRACE || kind == TPROF_INPUT_ASCEND_KERNELS ? &in->traces
                   : kind == TPROF_INPUT_SNAPSHOT ? &in->snapshots
                   : kind == TPROF_INPUT_LOG ? &in->logs
                                              : NULL;
        if (to) {
            if (arg_push(to, paths[i])) return EXIT_INPUT;
            continue;
        }
        if (kind < 0) cli_error("%s: cannot be read (or decompressed)", paths[i]);
        else {
            const char *hint = tprof_input_hint((tprof_input_kind)kind, accepts);
            cli_error("%s: not a trace, a memory snapshot or a training log%s%s", paths[i], hint ? "; " : "",
                      hint ? hint : "");
        }
        rc = EXIT_INPUT;
    }
    return rc;
}

/* The page: the template's head, the style, the data, the scripts. */
static int write_page(FILE *f, const report_opts *o, const char *data, size_t len)
{
    const char *page = (const char *)tprof_asset_page, *data_at = strstr(page, "<!--DATA-->"),
               *title_at = strstr(page, "<!--TITLE-->"), *style_at = strstr(page, "<!--STYLE-->"),
               *scripts_at = strstr(page, "<!--SCRIPTS-->");
    if (!data_at || !title_at || !style_at || !scripts_at || !(title_at < style_at && style_at < data_at &&
                                                                data_at < scripts_at))
        return -1; /* the template is the build's: checked by the tests */
    fwrite(page, 1, (size_t)(title_at - page), f);
    tprof_xml_text(f, o->title, SIZE_MAX); /* markup escaped, broken UTF-8 as '?' */
    const char *p = title_at + strlen("<!--TITLE-->");
    fwrite(p, 1, (size_t)(style_at - p), f);
    fwrite(tprof_asset_css, 1, tprof_asset_css_len, f);
    p = style_at + strlen("<!--STYLE-->");
    fwrite(p, 1, (size_t)(data_at - p), f);
    fwrite(data, 1, len, f);
    p = data_at + strlen("<!--DATA-->");
    fwrite(p, 1, (size_t)(scripts_at - p), f);
#ifdef TPROF_HAVE_ECHARTS
    fputs("<script>\n", f);
    fwrite(tprof_asset_echarts, 1, tprof_asset_echarts_len, f);
    fputs("\n</script>\n", f);
#endif
    fputs("<script>\n", f);
    fwrite(tprof_asset_js, 1, tprof_asset_js_len, f);
    fputs("\n</script>\n", f);
    p = scripts_at + strlen("<!--SCRIPTS-->");
    fputs(p, f);
    return ferror(f) ? -1 : 0;
}

static int run_report(inputs *in, const report_opts *o)
{
    int rc = EXIT_OK;
    char *data = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&data, &len);
    if (!f) {
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    fprintf(f, "{\"report\":{\"version\":1,\"trainprof\":\"%s\",\"top\":%s},\"inputs\":{", TPROF_VERSION_STRING,
            o->top ? o->top : "20");
    put_paths(f, "traces", &in->traces, 0);
    put_paths(f, "snapshots", &in->snapshots, 0);
    put_paths(f, "logs", &in->logs, 0);
    put_paths(f, "base", &in->base, 1);
    fputs("},", f);
    captured sum = { 0 };
    int first = 1, bad = traces_part(f, "summary", cmd_summary, in, o, &rc, &first, &sum);
    /* trainprof-mpi: the summary's traces were spread over the processes
       (cli_run); the rest is the root's alone (mfu from the summary, the
       base run's diff, snapshots, logs), and the root writes the page */
    const cli_engine *eng = cli_get_engine();
    if (eng && !eng->root) {
        fclose(f);
        free(data);
        free(sum.buf);
        return rc;
    }
    cli_set_engine(NULL);
    if (!bad) bad = mfu_part(f, in, o, &sum, &rc, &first);
    if (!bad) bad = diff_part(f, in, o, &rc, &first);
    free(sum.buf);
    if (!bad) bad = memory_part(f, in, o, &rc, &first);
    if (!bad) bad = logs_part(f, in, &rc, &first);
    fputc('}', f);
    if (fclose(f) || bad) { /* what failed was said */
        free(data);
        return EXIT_INPUT;
    }
    if (severity(rc) > 1) { /* a command failed: its error was said; no page that hides it */
        free(data);
        cli_error("no report written: an input could not be analysed (above)");
        return rc;
    }
    char *page = NULL;
    size_t plen = 0;
    FILE *pf = open_memstream(&page, &plen);
    int e = !pf || write_page(pf, o, data, len);
    if (pf && fclose(pf)) e = 1;
    free(data);
    if (e) {
        free(page);
        cli_error("out of memory writing the page");
        return EXIT_INPUT;
    }
    int w = cli_write_file(o->output, page, plen);
    free(page);
    return w ? w : rc;
}

static int count_option(const char *name, const char *arg)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*arg && !*end && v >= 0) return 0;
    cli_error("%s takes a count, not '%s'", name, arg);
    return -1;
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = { { "output", required_argument, 0, 'o' },
                                          { "title", required_argument, 0, 'T' },
                                          { "top", required_argument, 0, 't' },
                                          { "points", required_argument, 0, 'p' },
                                          { "threads", required_argument, 0, 'j' },
                                          { "seqlens", required_argument, 0, 'S' },
                                          { "device", required_argument, 0, 'D' },
                                          { "peak-tflops", required_argument, 0, 'P' },
                                          { "world-size", required_argument, 0, 'W' },
                                          { "vs", no_argument, 0, 'v' },
                                          { "color", required_argument, 0, 'c' },
                                          { "help", no_argument, 0, 'h' },
                                          { 0, 0, 0, 0 } };
    report_opts o = { 0 };
    args given = { 0 }, base = { 0 }; /* the operands, and those after --vs */
    int c, rc = EXIT_OK, threads, vs = 0;
    optind = 0; /* 0, not 1: getopt starts afresh, its ordering mode too (report runs commands in turn) */
    /* "-": operands come back in order as option 1, so --vs splits them */
    while (!rc && (c = cli_getopt(argc, argv, "-ho:", opts)) != -1) {
        switch (c) {
        case 1: rc = arg_push(vs ? &base : &given, optarg) ? EXIT_INPUT : 0; break;
        case 'h':
            help(stdout);
            free(given.v);
            free(base.v);
            return EXIT_OK;
        case 'o': o.output = optarg; break;
        case 'T': o.title = optarg; break;
        case 't': rc = count_option("--top", optarg) ? EXIT_USAGE : 0, o.top = optarg; break;
        case 'p': rc = count_option("--points", optarg) ? EXIT_USAGE : 0, o.points = optarg; break;
        case 'j': rc = cli_parse_threads(optarg, &threads) ? EXIT_USAGE : 0, o.threads = optarg; break;
        case 'c': rc = cli_set_color(optarg) ? EXIT_USAGE : 0; break;
        case 'S': o.seqlens = optarg; break; /* mfu checks these when it runs */
        case 'D': o.device = optarg; break;
        case 'P': o.peak_tflops = optarg; break;
        case 'W': o.world_size = optarg; break;
        case 'v':
            if (vs) cli_error("--vs is given twice");
            rc = vs ? EXIT_USAGE : 0;
            vs = 1;
            break;
        default: rc = EXIT_USAGE;
        }
    }
    if (!rc && (!given.n || !o.output || (vs && !base.n))) {
        cli_error(!given.n ? "report needs at least one input"
                  : !o.output ? "report needs an output file: -o REPORT.html"
                              : "--vs needs the base run's traces after it");
        help(stderr);
        rc = EXIT_USAGE;
    }
#ifndef TPROF_HAVE_ECHARTS
    if (!rc) {
        cli_error("this build has no charting library: run scripts/install-deps.sh (it installs the pinned one with "
                  "npm), then build again");
        rc = EXIT_USAGE;
    }
#endif
    const unsigned accepts = CLI_TRACES | TPROF_INPUT_BIT(TPROF_INPUT_SNAPSHOT) | TPROF_INPUT_BIT(TPROF_INPUT_LOG) |
                             (o.seqlens ? TPROF_INPUT_BIT(TPROF_INPUT_CONFIG) : 0);
    tprof_inputs ex = { 0 }, bx = { 0 };
    inputs in = { 0 };
    if (!rc) rc = cli_expand_inputs(given.v, (int)given.n, accepts, &ex);
    if (!rc && vs && (rc = cli_expand_inputs(base.v, (int)base.n, CLI_TRACES, &bx)) == 0)
        for (size_t i = 0; !rc && i < bx.npaths; i++) rc = arg_push(&in.base, bx.paths[i]) ? EXIT_INPUT : 0;
    if (!rc) rc = classify(ex.paths, ex.npaths, &in, o.seqlens != NULL);
    if (!rc && o.seqlens && !in.config) {
        cli_error("--seqlens is for MFU: give the model's config.json among the inputs");
        rc = EXIT_USAGE;
    }
    if (!rc && vs && !in.traces.n) {
        cli_error("--vs compares traces: give the run's traces before it");
        rc = EXIT_USAGE;
    }
    /* trainprof-mpi: the inputs were listed and read for their kinds on every
       process; all go on to the summary's exchanges, or none does */
    rc = cli_agree_worst(rc);
    if (!rc) {
        char name[256];
        if (!o.title) { /* the first argument's last component: a file's or a directory's name */
            snprintf(name, sizeof name, "%s", given.v[0]);
            size_t n = strlen(name);
            while (n > 1 && name[n - 1] == '/') name[--n] = 0;
            const char *slash = strrchr(name, '/');
            o.title = slash && slash[1] ? slash + 1 : name;
        }
        rc = run_report(&in, &o);
    }
    free(in.traces.v);
    free(in.snapshots.v);
    free(in.logs.v);
    free(in.base.v);
    free(given.v);
    free(base.v);
    tprof_inputs_free(&ex);
    tprof_inputs_free(&bx);
    return rc;
}
