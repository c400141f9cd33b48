/* trainprof mem: CUDA memory snapshots (peak, call sites, fragmentation,
 * OOMs, timeline, two snapshots compared). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mem_cli.h"
#include "trainprof/error.h"
#include "trainprof/mem.h"
#include "trainprof/report.h"
#include "trainprof/source.h"

static void help(FILE *f)
{
    fprintf(f, "usage: trainprof mem [options] SNAPSHOT|TRACE...\n"
               "       trainprof mem --compare A B\n\n"
               "CUDA caching-allocator memory snapshots (torch.cuda.memory._dump_snapshot pickles,\n"
               "plain, gzip or zstd). Per device: peak active memory as PyTorch's memory viewer\n"
               "defines it (including memory live before the history began), when it happened\n"
               "and in which annotation, the call sites live at the peak, reserved memory and its\n"
               "peak, fragmentation, OOMs with what was live, allocator retries.\n"
               "The pickle is decoded, never executed: pickles that import or call anything are\n"
               "refused.\n"
               "A Kineto trace (JSON, recorded with profile_memory=True) is read through its\n"
               "[memory] events instead: peak allocated and reserved bytes per device, the\n"
               "ProfilerStep of the peak and each step's peak; --timeline works the same.\n"
               "A directory stands for every snapshot and trace below it (by content).\n\noptions:\n"
               "  --format table|csv|json\n"
               "  --depth N             Python frames per call site (default 4)\n"
               "  --top N               call sites shown in the table (default 10, 0 = all)\n"
               "  --timeline PREFIX     write PREFIX.csv (or .json with --format json) with the\n"
               "                        memory over time and PREFIX.svg, the top call sites stacked\n"
               "  --points N            timeline points per device (default 2000)\n"
               "  --compare             two snapshots: bytes live at the peak by call site, B - A\n"
               "  --max-memory SIZE     the most memory the decoded pickle may take, like 512M or\n"
               "                        16G (default: half the physical memory, at least 1G; 0: no\n"
               "                        limit); past it the snapshot is refused (exit 3)\n"
               "  --all-ranks           with more than 8 snapshots, tables show the distribution\n"
               "                        of peak memory across ranks and the 3 highest; this prints\n"
               "                        every one\n"
               "  --color auto|always|never\n");
}

typedef struct {
    cli_format fmt;
    int depth, top, points, compare;
    const char *timeline;
    tprof_pickle_opts pk;
} mem_args;

static const char *fmtb(char *buf, size_t n, int64_t v) { return tprof_fmt_bytes(buf, n, v); }


static void print_sites(const tprof_rows *s, int64_t whole, int top)
{
    static const char *const hdr[] = { "bytes", "share", "count", "call site (outermost;...;innermost)" };
    tprof_table *t = tprof_table_new(4, hdr, "rrrl");
    if (!t) return;
    tprof_table_limit(t, 3, 110);
    size_t n = tprof_rows_count(s);
    for (size_t i = 0; i < n && (top <= 0 || i < (size_t)top); i++) {
        char b[32], p[16], c[24];
        fmtb(b, sizeof b, tprof_rows_int(s, i, "bytes"));
        snprintf(p, sizeof p, "%.1f%%", cli_pct(tprof_rows_int(s, i, "bytes"), whole));
        snprintf(c, sizeof c, "%" PRId64, tprof_rows_int(s, i, "count"));
        char site[1024];
        const char *row[] = { b, p, c, mem_cli_short_site(tprof_rows_at(s, i, "site")->v.s, site, sizeof site) };
        tprof_table_row(t, row);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    if (top > 0 && n > (size_t)top) printf("  ... %zu more call sites (--top 0 shows all)\n", n - (size_t)top);
}

enum { CH_ACTIONS, CH_SITES, CH_OOMS };

static void print_table(const char *path, const tprof_result *res, const mem_args *a)
{
    char x[32], y[32], z[32];
    const tprof_rows *top = tprof_result_top_c(res), *dev = tprof_result_table_c(res, 0);
    printf("%s\n", path);
    printf("  format        %s, pickle protocol %" PRId64 ", %s%s\n", tprof_rows_at(top, 0, "form")->v.s, tprof_rows_int(top, 0, "protocol"),
           fmtb(x, sizeof x, tprof_rows_int(top, 0, "bytes")), tprof_rows_int(top, 0, "truncated") ? " (TRUNCATED)" : "");
    size_t ndev = tprof_rows_count(dev);
    if (!ndev) printf("  no device has segments or trace events\n");
    for (size_t i = 0; i < ndev; i++) {
        printf("\ndevice %" PRId64 "\n", tprof_rows_int(dev, i, "device"));
        printf("  events        %" PRId64, tprof_rows_int(dev, i, "events"));
        const tprof_rows *ac = tprof_rows_child_c(dev, i, CH_ACTIONS);
        for (size_t k = 0; k < tprof_rows_count(ac); k++)
            printf("%s%s %" PRId64, k ? ", " : " (", tprof_rows_at(ac, k, "action")->v.s, tprof_rows_int(ac, k, "count"));
        printf("%s\n", tprof_rows_count(ac) ? ")" : "");
        int64_t peak = tprof_rows_int(dev, i, "peak_active_bytes");
        printf("  peak active   %s (%" PRId64 " B)", fmtb(x, sizeof x, peak), peak);
        if (tprof_rows_int(dev, i, "peak_index") >= 0) {
            printf(" at event %" PRId64, tprof_rows_int(dev, i, "peak_index"));
            if (tprof_rows_int(dev, i, "peak_time_us") >= 0) printf(", time_us %" PRId64, tprof_rows_int(dev, i, "peak_time_us"));
        } else
            printf(" in the snapshot's state (no alloc or free in the history)");
        printf("\n");
        const tprof_cell *ann = tprof_rows_at(dev, i, "peak_annotation");
        if (!ann->null) printf("  annotation    %s (open at the peak)\n", ann->v.s);
        printf("  live at start %s (%" PRId64 " freed but never allocated in the history, %" PRId64
               " live blocks never allocated in it)\n",
               fmtb(x, sizeof x, tprof_rows_int(dev, i, "initial_active_bytes")), tprof_rows_int(dev, i, "initial_from_frees"),
               tprof_rows_int(dev, i, "initial_from_blocks"));
        printf("  reserved      peak %s, at start %s, at the snapshot %s in %" PRId64 " segments\n",
               fmtb(x, sizeof x, tprof_rows_int(dev, i, "reserved_peak_bytes")), fmtb(y, sizeof y, tprof_rows_int(dev, i, "reserved_initial_bytes")),
               fmtb(z, sizeof z, tprof_rows_int(dev, i, "reserved_at_end_bytes")), tprof_rows_int(dev, i, "segments"));
        printf("  snapshot      allocated %s (requested %s), fragmentation %s (reserved - allocated)\n",
               fmtb(x, sizeof x, tprof_rows_int(dev, i, "allocated_at_end_bytes")),
               fmtb(y, sizeof y, tprof_rows_int(dev, i, "requested_at_end_bytes")), fmtb(z, sizeof z, tprof_rows_int(dev, i, "fragmentation_bytes")));
        printf("  free blocks   %" PRId64 " inactive split blocks, %s; largest free block %s\n",
               tprof_rows_int(dev, i, "inactive_split_blocks"), fmtb(x, sizeof x, tprof_rows_int(dev, i, "inactive_split_bytes")),
               fmtb(y, sizeof y, tprof_rows_int(dev, i, "largest_free_block_bytes")));
        printf("  retries       %" PRId64 " (cache flushed before a cudaMalloc retry)\n", tprof_rows_int(dev, i, "retries"));
        const tprof_rows *oo = tprof_rows_child_c(dev, i, CH_OOMS);
        for (size_t j = 0; j < tprof_rows_count(oo); j++) {
            printf("  OOM           event %" PRId64 ": requested %s", tprof_rows_int(oo, j, "index"),
                   fmtb(x, sizeof x, tprof_rows_int(oo, j, "requested_bytes")));
            if (tprof_rows_int(oo, j, "device_free_bytes") >= 0)
                printf(", CUDA had %s free", fmtb(y, sizeof y, tprof_rows_int(oo, j, "device_free_bytes")));
            printf("; active %s, reserved %s; live:\n", fmtb(x, sizeof x, tprof_rows_int(oo, j, "active_bytes")),
                   fmtb(z, sizeof z, tprof_rows_int(oo, j, "reserved_bytes")));
            print_sites(tprof_rows_child_c(oo, j, 0), tprof_rows_int(oo, j, "active_bytes"), 0);
        }
        printf("  call sites live at the peak (depth %d):\n", a->depth);
        print_sites(tprof_rows_child_c(dev, i, CH_SITES), peak, a->top);
    }
}

/* Opens a snapshot, printing why not. Returns an exit code; *out is set
 * for EXIT_OK and EXIT_TRUNC. */
static int open_snapshot(const char *path, const mem_args *a, tprof_mem_snapshot **out)
{
    char err[1024];
    /* a large snapshot takes seconds: the bytes read, on a terminal */
    cli_progress bar;
    char *paths[] = { (char *)path };
    tprof_pickle_opts pk = a->pk;
    if (cli_progress_begin(&bar, paths, 1, NULL)) pk.progress = cli_progress_update, pk.progress_ctx = &bar;
    int rc = tprof_mem_snapshot_open_opts(out, path, &pk, err, sizeof err);
    cli_progress_end(&bar);
    if (rc == TPROF_ETRUNC) {
        const tprof_mem_snapshot *s = *out;
        size_t kept = 0;
        for (size_t d = 0; d < s->ntraces; d++) kept += s->ntrace[d];
        cli_warn("%s (results cover what came before the cut: %zu complete trace entr%s kept%s)",
                 err[0] ? err : path, kept, kept == 1 ? "y" : "ies",
                 s->cut_entries ? ", the one cut in half left out" : "");
        return EXIT_TRUNC;
    }
    if (rc) {
        cli_error("%s", err[0] ? err : tprof_strerror(rc));
        return EXIT_INPUT;
    }
    return EXIT_OK;
}

static int run_compare(char **paths, const mem_args *a)
{
    tprof_mem_snapshot *s[2] = { NULL, NULL };
    tprof_mem_report r[2];
    memset(r, 0, sizeof r);
    int worst = EXIT_OK;
    tprof_mem_opts o = { .depth = a->depth };
    for (int i = 0; i < 2; i++) {
        int e = open_snapshot(paths[i], a, &s[i]);
        if (e > worst) worst = e;
        if (e == EXIT_INPUT) goto done;
        if (tprof_mem_analyze(s[i], &o, &r[i])) {
            cli_error("%s: out of memory", paths[i]);
            worst = EXIT_INPUT;
            goto done;
        }
    }
    tprof_mem_compare c;
    if (tprof_mem_compare_reports(&r[0], &r[1], &c)) {
        cli_error("out of memory");
        worst = EXIT_INPUT;
        goto done;
    }
    if (mem_cli_print_compare(paths[0], paths[1], &c, a->fmt, a->top)) {
        cli_error("out of memory");
        worst = EXIT_INPUT;
    }
    tprof_mem_compare_free(&c);
done:
    for (int i = 0; i < 2; i++) {
        tprof_mem_report_free(&r[i]);
        tprof_mem_snapshot_close(s[i]);
    }
    return worst;
}

/* A JSON document (a Kineto trace) rather than a pickle: its first
 * non-blank byte, after decompression, is '{' or '['. stdin is never
 * sniffed (it can be read once): it is taken as a pickle. */
static int is_json(const char *path)
{
    if (!strcmp(path, "-")) return 0;
    tprof_source *src;
    if (tprof_source_open(&src, path, NULL, 0)) return 0;
    unsigned char b[256];
    ssize_t n = tprof_source_read(src, b, sizeof b);
    tprof_source_close(src);
    for (ssize_t i = 0; i < n; i++) {
        if (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') continue;
        return b[i] == '{' || b[i] == '[';
    }
    return 0;
}

/* Ascend's memory tables (by their header row) or profiler database. */
static int is_ascend_memory(const char *path)
{
    if (!strcmp(path, "-")) return 0;
    tprof_source *src;
    if (tprof_source_open(&src, path, NULL, 0)) return 0;
    unsigned char b[TPROF_SOURCE_HEAD];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof b && (r = tprof_source_read(src, b + n, sizeof b - n)) > 0) n += (size_t)r;
    tprof_source_close(src);
    tprof_input_kind k = tprof_input_sniff(b, n);
    return k == TPROF_INPUT_ASCEND_MEMORY || k == TPROF_INPUT_ASCEND_DB; /* the database's MEMORY_RECORD */
}

static int parse_count(const char *opt, const char *v, int lo, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < lo || n > 1000000) {
        cli_error("%s takes a count >= %d, not '%s'", opt, lo, v);
        return -1;
    }
    *out = (int)n;
    return 0;
}

/* "512M", "16G", "1048576"; 0 is no limit. */
static int parse_size(const char *v, uint64_t *out)
{
    char *end;
    if (*v < '0' || *v > '9') return -1;
    unsigned long long n = strtoull(v, &end, 10);
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: break;
    }
    if (shift) end++;
    if (*end == 'b' || *end == 'B') end++;
    if (*end || n > (UINT64_MAX >> shift) / 2) return -1;
    *out = n ? (uint64_t)n << shift : TPROF_PICKLE_NO_LIMIT;
    return 0;
}

/* Snapshots of many ranks: in rank order (the file names' rank<N>), the
 * distribution of peak memory across them, then the 3 highest in full. */
static int print_across(tprof_result **res, char **paths, size_t n, const mem_args *a)
{
    if (!n) return EXIT_OK;
    int64_t *rank = malloc(n * sizeof *rank);
    size_t *order = malloc(n * sizeof *order);
    const tprof_result **sorted = malloc(n * sizeof *sorted);
    char (*labels)[64] = malloc(n * sizeof *labels);
    const char **lab = malloc(n * sizeof *lab);
    int rc = rank && order && sorted && labels && lab ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++)
        if (!tprof_rank_from_name(paths[i], &rank[i])) rank[i] = -1;
    if (!rc) rc = tprof_rank_order(rank, n, order);
    for (size_t i = 0; !rc && i < n; i++) {
        sorted[i] = res[order[i]];
        tprof_fmt_trace_label(labels[i], sizeof labels[i], rank[order[i]], order[i]);
        lab[i] = labels[i];
    }
    size_t worst[CLI_RANKS_WORST], k = 0;
    if (!rc) {
        printf("%zu snapshots: their distribution across ranks and the %d with the highest peak (%s)\n\n", n,
               CLI_RANKS_WORST, CLI_ACROSS_HINT);
        rc = tprof_results_print_dist(sorted, lab, n, stdout);
        k = tprof_ranks_worst(sorted, NULL, n, CLI_RANKS_WORST, worst);
    }
    for (size_t i = 0; !rc && i < k; i++) {
        printf("\n");
        print_table(paths[order[worst[i]]], sorted[worst[i]], a);
    }
    free(rank);
    free(order);
    free(sorted);
    free(labels);
    free(lab);
    if (rc) cli_error("out of memory");
    return rc ? EXIT_INPUT : EXIT_OK;
}

int cmd_mem(int argc, char **argv)
{
    static const struct option opts[] = {
        { "format", required_argument, 0, 'f' }, { "color", required_argument, 0, 'c' },
        { "depth", required_argument, 0, 'd' },  { "top", required_argument, 0, 't' },
        { "timeline", required_argument, 0, 'T' }, { "points", required_argument, 0, 'p' },
        { "compare", no_argument, 0, 'C' },      { "help", no_argument, 0, 'h' },
        { "max-memory", required_argument, 0, 'M' }, { "all-ranks", no_argument, 0, 'A' },
        { 0, 0, 0, 0 },
    };
    mem_args a = { .fmt = FMT_TABLE, .depth = 4, .top = 10, .points = 2000 };
    int c;
    optind = 0; /* 0, not 1: getopt starts afresh, its ordering mode too (report runs commands in turn) */
    while ((c = cli_getopt(argc, argv, "h", opts)) != -1) {
        switch (c) {
        case 'f':
            if (cli_parse_format(optarg, &a.fmt)) {
                cli_error("--format must be table, csv or json, not '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'c': if (cli_set_color(optarg)) return EXIT_USAGE; break;
        case 'd': if (parse_count("--depth", optarg, 1, &a.depth)) return EXIT_USAGE; break;
        case 't': if (parse_count("--top", optarg, 0, &a.top)) return EXIT_USAGE; break;
        case 'p': if (parse_count("--points", optarg, 2, &a.points)) return EXIT_USAGE; break;
        case 'T': a.timeline = optarg; break;
        case 'C': a.compare = 1; break;
        case 'M':
            if (parse_size(optarg, &a.pk.max_memory)) {
                cli_error("--max-memory takes a size like 512M or 16G (0: no limit), not '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'A': cli_all_ranks = 1; break;
        case 'h': help(stdout); return EXIT_OK;
        default: return EXIT_USAGE; /* said by cli_getopt */
        }
    }
    int nfiles = argc - optind;
    char **files = argv + optind;
    if (a.compare) {
        if (nfiles != 2) {
            cli_error("--compare takes two snapshots, A and B (%d given)", nfiles);
            return EXIT_USAGE;
        }
        return run_compare(files, &a);
    }
    if (nfiles < 1) {
        cli_error("mem needs a snapshot file (see trainprof mem --help)");
        return EXIT_USAGE;
    }
    /* a directory: the snapshots and traces below it (not Ascend kernel tables: no memory in them) */
    tprof_inputs in;
    const unsigned accepts = TPROF_INPUT_BIT(TPROF_INPUT_SNAPSHOT) | TPROF_INPUT_BIT(TPROF_INPUT_TRACE) |
                             TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_MEMORY) | TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_DB);
    if (cli_expand_inputs(files, nfiles, accepts, &in)) return EXIT_INPUT;
    files = in.paths;
    nfiles = (int)in.npaths;
    if (a.timeline && nfiles != 1) {
        cli_error("--timeline takes one snapshot (%d given)", nfiles);
        tprof_inputs_free(&in);
        return EXIT_USAGE;
    }
    int worst = EXIT_OK;
    /* many snapshots (one per rank) in a table: kept, then shown across ranks */
    int across = a.fmt == FMT_TABLE && cli_across((size_t)nfiles);
    tprof_result **kept = across ? calloc((size_t)nfiles, sizeof *kept) : NULL;
    char **kept_path = across ? calloc((size_t)nfiles, sizeof *kept_path) : NULL;
    size_t nkept = 0;
    if (across && (!kept || !kept_path)) {
        free(kept);
        free(kept_path);
        tprof_inputs_free(&in);
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    tprof_jw jw;
    if (a.fmt == FMT_JSON) {
        tprof_jw_init(&jw, stdout);
        tprof_jw_arr(&jw);
    } else if (a.fmt == FMT_CSV)
        printf("file,device,metric,site,value\n");
    for (int i = 0; i < nfiles; i++) {
        if (is_ascend_memory(files[i])) { /* Ascend's memory_record.csv */
            if (a.fmt == FMT_TABLE && i) printf("\n");
            int e = mem_cli_ascend(files[i], a.fmt, &jw);
            if (e > worst) worst = e;
            continue;
        }
        if (is_json(files[i])) { /* a Kineto trace: its [memory] events */
            if (a.fmt == FMT_TABLE && i) printf("\n");
            int e = mem_cli_trace(files[i], a.fmt, &jw, a.timeline, (size_t)a.points);
            if (e > worst) worst = e;
            continue;
        }
        tprof_mem_snapshot *s;
        int e = open_snapshot(files[i], &a, &s);
        if (e > worst) worst = e;
        if (e == EXIT_INPUT) continue;
        tprof_mem_report r;
        tprof_mem_opts o = { .depth = a.depth };
        if (tprof_mem_analyze(s, &o, &r)) {
            cli_error("%s: out of memory", files[i]);
            worst = EXIT_INPUT;
            tprof_mem_snapshot_close(s);
            continue;
        }
        tprof_result *res;
        if (tprof_mem_tables(s, &r, &res)) {
            cli_error("%s: out of memory", files[i]);
            worst = EXIT_INPUT;
            tprof_mem_report_free(&r);
            tprof_mem_snapshot_close(s);
            continue;
        }
        if (a.fmt == FMT_JSON)
            cli_json_file_result(&jw, s->path, res, 0);
        else if (a.fmt == FMT_CSV)
            tprof_rows_csv(tprof_result_table_c(res, 1), (const char *const *)&s->path, 1, 0, stdout);
        else if (across && (kept_path[nkept] = strdup(s->path))) {
            kept[nkept++] = res;
            res = NULL;
        } else {
            if (i) printf("\n");
            print_table(s->path, res, &a);
        }
        tprof_result_free(res);
        if (a.timeline) {
            int te = mem_cli_write_timeline(s, &r, a.timeline, a.fmt == FMT_JSON, a.depth, (size_t)a.points);
            if (te > worst) worst = te;
        }
        tprof_mem_report_free(&r);
        tprof_mem_snapshot_close(s);
    }
    if (a.fmt == FMT_JSON) tprof_jw_arr_end(&jw);
    if (across) {
        int e = print_across(kept, kept_path, nkept, &a);
        if (e > worst) worst = e;
        for (size_t i = 0; i < nkept; i++) {
            tprof_result_free(kept[i]);
            free(kept_path[i]);
        }
        free(kept);
        free(kept_path);
    }
    tprof_inputs_free(&in);
    return worst;
}
