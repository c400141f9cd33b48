/* trainprof merge: every rank's trace in one timeline. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/error.h"
#include "trainprof/merge.h"
#include "trainprof/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: trainprof merge [options] TRACE|DIR... -o OUT\n\n"
            "Merges per-rank traces into one timeline for Perfetto or chrome://tracing.\n"
            "Each rank's processes get their own pids and names (\"rank 3 / CPU\",\n"
            "\"rank 3 / GPU 0 / stream 7\"); flow, correlation and external ids are made\n"
            "unique per rank; clocks are aligned; events are written in time order with\n"
            "bounded memory. A directory stands for every trace below it (by content).\n"
            "The rank comes from distributedInfo, else 'rank<N>' in the file name, else\n"
            "the argument order. docs/METRICS.md (merge) has every rule.\n\noptions:\n"
            "  -o, --output FILE     .gz: gzip, .zst: zstd, else plain JSON (written to a\n"
            "                        temporary file, then renamed; never an input)\n"
            "  --align MODE          auto (default): collective, else base-time, else none;\n"
            "                        collective: the first common NCCL collective kernel ends\n"
            "                        at the same moment on every rank; first-step: the first\n"
            "                        common ProfilerStep starts together; base-time: shift by\n"
            "                        baseTimeNanoseconds; none: as written\n"
            "  --ranks LIST          only these ranks, e.g. 0-3,7\n"
            "  --steps A..B          only events overlapping ProfilerStep#A..#B (GPU events up\n"
            "                        to the end of the GPU work those steps launched)\n"
            "  --drop-cat LIST       drop events of these categories, e.g. python_function\n"
            "  --min-dur DUR         drop complete events shorter than DUR (e.g. 2us, 500ns)\n"
            "  --level N             compression level (default: 1, the fast one)\n"
            "  --mem-budget SIZE     events held in memory before a sorted run is spilled to a\n"
            "                        temporary file (default 256M)\n"
            "  --tmp-dir DIR         where spilled runs go (default: the output's directory)\n"
            "  --format table|json   the report on stdout (no CSV: it is one file's report)\n"
            "  --token-path          re-serialize every event token by token instead of copying\n"
            "                        its members (slower; the tests compare both paths)\n"
            "  --class-rule CLASS:GLOB, --class-file FILE   as for the other commands (which\n"
            "                        kernels are collectives, for --align collective)\n"
            "  --threads N           inputs rewritten at once (0 = one per core, the default;\n"
            "                        the output is compressed on as many threads)\n"
            "  --wide                accepted as by every command (the report has no kernel\n"
            "                        names to shorten)\n"
            "  --all-ranks           the report lists every input (by default, past 8: the\n"
            "                        distribution of the clock offsets and the 3 largest)\n"
            "  --color auto|always|never\n");
}

/* "2us", "500ns", "1.5ms", "3s"; a bare number is microseconds. */
static int parse_duration(const char *s, int64_t *ns)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0) return -1;
    double mul = 1e3;
    if (!*end || strcmp(end, "us") == 0) mul = 1e3;
    else if (strcmp(end, "ns") == 0) mul = 1;
    else if (strcmp(end, "ms") == 0) mul = 1e6;
    else if (strcmp(end, "s") == 0) mul = 1e9;
    else return -1;
    if (v * mul > 9e18) return -1;
    *ns = (int64_t)(v * mul + 0.5);
    return 0;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) return -1;
    int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
    if (shift) end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end || v == 0 || v > (1ull << (63 - shift))) return -1;
    *out = (size_t)(v << shift);
    return 0;
}

/* "0-3,7" */
static int parse_ranks(const char *s, int64_t **out, size_t *n)
{
    const char *p = s;
    while (*p) {
        char *end;
        long long a = strtoll(p, &end, 10), b = a;
        if (end == p || a < 0) return -1;
        p = end;
        if (*p == '-') {
            b = strtoll(p + 1, &end, 10);
            if (end == p + 1 || b < a || b - a > 1000000) return -1;
            p = end;
        }
        for (long long r = a; r <= b; r++) {
            int64_t *v = realloc(*out, (*n + 1) * sizeof *v);
            if (!v) return -1;
            *out = v;
            v[(*n)++] = r;
        }
        if (*p == ',') p++;
        else if (*p) return -1;
    }
    return *n ? 0 : -1;
}

static int split_list(const char *s, char ***out, size_t *n)
{
    char *copy = strdup(s);
    if (!copy) return -1;
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        char **v = realloc(*out, (*n + 1) * sizeof *v);
        if (!v || !(v[*n] = strdup(tok))) {
            free(copy);
            return -1;
        }
        *out = v;
        (*n)++;
    }
    free(copy);
    return 0;
}

static int print_table(const tprof_result *res)
{
    char a[32], b[32], c[32];
    const tprof_rows *top = tprof_result_top_c(res), *ranks = tprof_result_table_c(res, 0);
    size_t n = tprof_rows_count(ranks);
    printf("%s: %" PRId64 " events from %zu trace%s, aligned by %s\n", tprof_rows_at(top, 0, "output")->v.s,
           tprof_rows_int(top, 0, "events"), n, n == 1 ? "" : "s", tprof_rows_at(top, 0, "align")->v.s);
    printf("  %s of JSON, %s written", tprof_fmt_bytes(a, sizeof a, tprof_rows_int(top, 0, "json_bytes")),
           tprof_fmt_bytes(b, sizeof b, tprof_rows_int(top, 0, "file_bytes")));
    if (tprof_rows_int(top, 0, "runs_spilled")) printf(", %" PRId64 " sorted runs spilled", tprof_rows_int(top, 0, "runs_spilled"));
    printf("\n\n");
    /* the rows listed: all, or past CLI_RANKS_LISTED the largest clock offsets and any cut or left out */
    size_t *shown = malloc((n ? n : 1) * sizeof *shown), m = 0;
    if (!shown) return TPROF_ENOMEM;
    if (cli_across(n)) {
        double *v = malloc(n * sizeof *v);
        const char **lab = malloc(n * sizeof *lab);
        char (*labels)[32] = malloc(n * sizeof *labels);
        if (!v || !lab || !labels) {
            free(v), free(lab), free(labels), free(shown);
            return TPROF_ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
            int64_t off = tprof_rows_int(ranks, i, "offset_ns");
            v[i] = tprof_rows_int(ranks, i, "included") ? (double)(off < 0 ? -off : off) : NAN;
            snprintf(labels[i], sizeof labels[i], "rank %" PRId64, tprof_rows_int(ranks, i, "rank"));
            lab[i] = labels[i];
        }
        tprof_col_dist d;
        char hi[32];
        if (!tprof_dist_of(v, NULL, n, &d) && d.n)
            printf("clock offsets across %zu ranks (absolute): min %s (%s), p50 %s, p90 %s, max %s (%s)\n", d.n,
                   tprof_fmt_duration(a, sizeof a, (int64_t)d.min), lab[d.min_rank],
                   tprof_fmt_duration(b, sizeof b, (int64_t)d.p50), tprof_fmt_duration(c, sizeof c, (int64_t)d.p90),
                   tprof_fmt_duration(hi, sizeof hi, (int64_t)d.max), lab[d.max_rank]);
        char *taken = calloc(n, 1);
        if (!taken) {
            free(v), free(lab), free(labels), free(shown);
            return TPROF_ENOMEM;
        }
        m = tprof_dist_worst(v, n, CLI_RANKS_WORST, 0, shown);
        for (size_t j = 0; j < m; j++) taken[shown[j]] = 1;
        for (size_t i = 0; i < n; i++)
            if ((!tprof_rows_int(ranks, i, "included") || tprof_rows_int(ranks, i, "truncated")) && !taken[i])
                shown[m++] = i;
        free(taken);
        printf("the %zu largest offsets%s (%s):\n\n", m < CLI_RANKS_WORST ? m : (size_t)CLI_RANKS_WORST,
               m > CLI_RANKS_WORST ? ", and the inputs cut or not selected" : "", CLI_ACROSS_HINT);
        free(v), free(lab), free(labels);
    } else
        for (size_t i = 0; i < n; i++) shown[m++] = i;
    static const char *const hdr[] = { "rank", "from", "pids", "offset", "aligned on", "events in", "kept", "file" };
    tprof_table *t = tprof_table_new(8, hdr, "llrrlrrl");
    if (!t) {
        free(shown);
        return TPROF_ENOMEM;
    }
    tprof_table_limit(t, 4, 48);
    for (size_t j = 0; j < m; j++) {
        size_t i = shown[j];
        char rank[32], pid[32], in[32], kept[32], off[40];
        int64_t offset = tprof_rows_int(ranks, i, "offset_ns");
        snprintf(rank, sizeof rank, "%" PRId64 "%s", tprof_rows_int(ranks, i, "rank"), tprof_rows_int(ranks, i, "truncated") ? " (cut)" : "");
        snprintf(pid, sizeof pid, "%" PRId64 "+", tprof_rows_int(ranks, i, "pid_base"));
        snprintf(in, sizeof in, "%" PRId64, tprof_rows_int(ranks, i, "events_in"));
        snprintf(kept, sizeof kept, "%" PRId64, tprof_rows_int(ranks, i, "events_out"));
        if (offset < 0) snprintf(off, sizeof off, "-%s", tprof_fmt_duration(c, sizeof c, -offset));
        else snprintf(off, sizeof off, "%s%s", offset ? "+" : "", tprof_fmt_duration(c, sizeof c, offset));
        const char *from = tprof_rows_at(ranks, i, "rank_from")->v.s;
        if (!strcmp(from, "argument order")) from = "order";
        const char *file = tprof_rows_at(ranks, i, "file")->v.s;
        const char *row[] = { rank, from, pid, off, tprof_rows_at(ranks, i, "aligned_on")->v.s, in, kept, file };
        const char *skip[] = { rank, from, "-", "-", "not selected (--ranks)", "-", "-", file };
        tprof_table_row(t, tprof_rows_int(ranks, i, "included") ? row : skip);
    }
    free(shown);
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    return 0;
}

int cmd_merge(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, 0, 'o' },  { "align", required_argument, 0, 'a' },
        { "ranks", required_argument, 0, 'R' },   { "steps", required_argument, 0, 's' },
        { "drop-cat", required_argument, 0, 'd' }, { "min-dur", required_argument, 0, 'm' },
        { "level", required_argument, 0, 'l' },   { "mem-budget", required_argument, 0, 'b' },
        { "tmp-dir", required_argument, 0, 't' }, { "token-path", no_argument, 0, 'T' }, CLI_COMMON_LONGOPTS,
        { 0, 0, 0, 0 },
    };
    tprof_merge_opts o = { 0 };
    cli_common co = { 0 };
    int64_t *ranks = NULL;
    size_t nranks = 0, ndrop = 0, nin = 0;
    char **drop = NULL, **inputs = NULL;
    tprof_inputs in = { 0 };
    int status = EXIT_USAGE, c;
    optind = 0; /* 0, not 1: getopt starts afresh, its ordering mode too (report runs commands in turn) */
    while ((c = cli_getopt(argc, argv, "o:h", longopts)) != -1) {
        long long a, b;
        int h = cli_common_option(c, optarg, &co);
        if (h == 1) continue;
        if (h < 0) goto out;
        switch (c) {
        case 'o': o.output = optarg; break;
        case 'a':
            if (tprof_align_parse(optarg, &o.align) != 0) {
                cli_error("--align takes auto, none, base-time, first-step or collective, not '%s'", optarg);
                goto out;
            }
            break;
        case 'R':
            if (parse_ranks(optarg, &ranks, &nranks) != 0) {
                cli_error("--ranks takes a list like 0-3,7, not '%s'", optarg);
                goto out;
            }
            break;
        case 's':
            if (cli_parse_steps(optarg, &a, &b) != 0) {
                cli_error("--steps takes A..B (ProfilerStep numbers), not '%s'", optarg);
                goto out;
            }
            o.has_steps = 1;
            o.step_first = a;
            o.step_last = b;
            break;
        case 'd':
            if (split_list(optarg, &drop, &ndrop) != 0) goto out;
            break;
        case 'm':
            if (parse_duration(optarg, &o.min_dur_ns) != 0) {
                cli_error("--min-dur takes a duration like 2us, 500ns or 1ms, not '%s'", optarg);
                goto out;
            }
            break;
        case 'l':
            o.level = atoi(optarg);
            if (o.level < 1 || o.level > 22) {
                cli_error("--level takes 1..9 (gzip) or 1..22 (zstd), not '%s'", optarg);
                goto out;
            }
            break;
        case 'b':
            if (parse_size(optarg, &o.mem_budget) != 0 || o.mem_budget < (1u << 20)) {
                cli_error("--mem-budget takes a size of at least 1M, like 256M or 2G, not '%s'", optarg);
                goto out;
            }
            break;
        case 't': o.tmp_dir = optarg; break;
        case 'T': o.generic_only = 1; break;
        case 'h':
            help(stdout);
            status = EXIT_OK;
            goto out;
        default: goto out; /* said by cli_getopt */
        }
    }
    if (co.fmt == FMT_CSV) {
        cli_error("merge reports as a table or JSON (--format table|json)");
        goto out;
    }
    if (optind >= argc || !o.output) {
        cli_error(optind < argc ? "merge needs an output file: -o OUT.json.gz" : "merge needs at least one trace");
        help(stderr);
        goto out;
    }
    if (!strcmp(o.output, "-")) { /* stdout holds the report: "-" would silently become a file of that name */
        cli_error("merge writes its trace to a file, not to stdout (which has its report): -o OUT.json.gz");
        goto out;
    }
    /* traces only: merge rewrites JSON events, an Ascend table has none */
    if (cli_expand_inputs(argv + optind, argc - optind, TPROF_INPUT_BIT(TPROF_INPUT_TRACE), &in)) {
        status = EXIT_INPUT;
        goto out;
    }
    inputs = in.paths;
    nin = in.npaths;
    o.inputs = (const char *const *)inputs;
    o.ninputs = nin;
    o.ranks = ranks;
    o.nranks = nranks;
    o.drop_cats = (const char *const *)drop;
    o.ndrop_cats = ndrop;
    o.classifier = co.cls;
    o.threads = co.threads;
    /* under trainprof-mpi: this process rewrites its share of the inputs, balanced by bytes as the other
       commands' are; the root writes the output and says what every process found */
    const cli_engine *eng = cli_get_engine();
    tprof_merge_spread spread = { 0 };
    if (eng) {
        uint8_t *mine = calloc(nin ? nin : 1, 1);
        int placed = mine ? cli_place_inputs(inputs, nin, mine) : EXIT_INPUT;
        if (placed) {
            free(mine);
            status = placed;
            goto out;
        }
        spread = (tprof_merge_spread){ .ctx = eng->ctx, .mine = mine, .root = eng->root, .peers = eng->peers,
                                       .send = eng->send, .recv = eng->recv, .share = eng->share };
        o.spread = &spread;
    }
    tprof_merge_report *rep;
    char err[1024] = "";
    /* two reads of every input: each pass its own line */
    cli_progress plan, rewrite;
    if (cli_progress_begin(&plan, inputs, (int)nin, "reading")) {
        o.progress = cli_progress_update;
        o.progress_ctx = &plan;
    }
    if (cli_progress_begin(&rewrite, inputs, (int)nin, "rewriting")) {
        o.rewrite_progress = cli_progress_update;
        o.rewrite_progress_ctx = &rewrite;
    }
    int rc = tprof_merge(&o, &rep, err, sizeof err);
    cli_progress_end(&rewrite);
    cli_progress_end(&plan);
    free((void *)spread.mine);
    if (eng && !eng->root) { /* the root says it all */
        if (!rc || rc == TPROF_ETRUNC) tprof_merge_report_free(rep);
        status = rc && rc != TPROF_ETRUNC ? EXIT_INPUT : EXIT_OK;
        goto out;
    }
    if (rc && rc != TPROF_ETRUNC) {
        cli_error("%s", err[0] ? err : tprof_strerror(rc));
        status = rc == TPROF_EUSAGE ? EXIT_USAGE : rc == TPROF_EWRITE ? EXIT_OUTPUT : EXIT_INPUT;
        goto out;
    }
    cli_wrote(o.output, rep->file_bytes); /* tprof_merge returns after the rename */
    for (char *p = rep->problems; *p;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        cli_warn("%s", p);
        p = nl ? nl + 1 : p + strlen(p);
    }
    for (size_t i = 0; i < rep->nranks; i++)
        if (rep->ranks[i].truncated)
            cli_warn("%s: the input ended early: the events read before the cut are merged", rep->ranks[i].path);
    tprof_result *res;
    int e = tprof_merge_tables(rep, o.output, &res);
    if (!e) {
        e = co.fmt == FMT_JSON ? cli_print_whole(res, FMT_JSON, 0) : print_table(res);
        tprof_result_free(res);
    }
    tprof_merge_report_free(rep);
    status = rc == TPROF_ETRUNC ? EXIT_TRUNC : EXIT_OK;
    if (e) {
        cli_error("%s", tprof_strerror(e));
        status = EXIT_INPUT;
    }
out:
    tprof_inputs_free(&in);
    for (size_t i = 0; i < ndrop; i++) free(drop[i]);
    free(drop);
    free(ranks);
    cli_common_free(&co);
    return status;
}
