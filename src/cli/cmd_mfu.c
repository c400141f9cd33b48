/* trainprof mfu: tokens/s, TFLOP/s per GPU and MFU of a step, from a given
 * step time or from the ProfilerStep spans of traces. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/error.h"

static void help(FILE *f)
{
    fprintf(f, "usage: trainprof mfu --config CONFIG.json --seqlens LIST (--step-time S | --trace TRACE...)\n"
               "                     (--device NAME | --peak-tflops X) [options]\n\n"
               "Tokens/s, achieved TFLOP/s per GPU and model FLOPs utilization (MFU) of training\n"
               "steps, as VeOmni's EnvironMeter computes them. Every rank is taken to process the\n"
               "same --seqlens (data parallelism over the whole world). docs/METRICS.md.\n\n"
               "options:\n" CLI_MODEL_HELP
               "  --step-time S         seconds of one step\n"
               "  --trace TRACE...      step times from the ProfilerStep#N spans of these traces\n"
               "                        (per step and their mean); the remaining arguments are traces\n"
               "  --device NAME         the GPU as torch names it (H100, NVIDIA H200, MI300X, ...);\n"
               "                        with --trace, the trace's device when not given\n"
               "  --peak-tflops X       one device's dense BF16 peak (overrides --device)\n"
               "  --world-size N        GPUs in the job (default: the trace's, else 1)\n"
               "  --strict              exit 1 when an MFU is above 100%% (always warned about:\n"
               "                        no run reaches it, so the peak, the world size, the\n"
               "                        seqlens or the step time given is wrong)\n"
               "  --format table|csv|json\n"
               "  --all-ranks           with more than 8 traces, the table shows the distribution\n"
               "                        of the steps' MFU and time and the 3 lowest; this prints\n"
               "                        every step\n"
               "  --color auto|always|never\n");
}

enum { OPT_STEP_TIME = 1100, OPT_TRACE, OPT_DEVICE, OPT_PEAK, OPT_WORLD, OPT_STRICT, OPT_ALL_RANKS };

typedef tprof_mfu_step step_row;

static int parse_pos(const char *flag, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v > 0) || !isfinite(v)) {
        cli_error("%s '%s': expected a positive number", flag, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* One step through the meter: every rank alike, so the DP sums are the
 * rank's numbers times the world size. */
static int measure(cli_model_args *a, double peak, int world, step_row *r)
{
    tprof_meter *mt = tprof_meter_new(a->model, peak, world, 0);
    if (!mt) return EXIT_USAGE;
    tprof_meter_set_training(mt, a->freeze_vit, a->has_lora ? &a->lora : NULL);
    char err[512];
    double local[3], sums[3];
    int rc = tprof_meter_add(mt, a->seqlens, a->nseqs, a->images, a->nimages);
    if (!rc) rc = tprof_meter_local(mt, r->seconds, local, err, sizeof err);
    if (!rc) {
        for (int i = 0; i < 3; i++) sums[i] = local[i] * world;
        rc = tprof_meter_finish(mt, r->seconds, sums, &r->m);
        r->tflops_gpu = local[0];
    }
    tprof_meter_free(mt);
    if (rc) cli_error("%s", err);
    return rc ? EXIT_INPUT : EXIT_OK;
}

/* Where each input of the MFU came from, for the warning. */
typedef struct {
    const char *peak, *world, *time;
} mfu_sources;

/* An MFU above 100% is impossible: says which inputs to suspect, with the
 * values used. Returns 1 when it warned. */
static int check_mfu(const step_row *rows, size_t n, const step_row *mean, const cli_model_args *a, double peak,
                     int world, const mfu_sources *src)
{
    const step_row *worst = NULL;
    for (size_t i = 0; i < n; i++)
        if (!worst || rows[i].m.mfu > worst->m.mfu) worst = &rows[i];
    if (mean && (!worst || mean->m.mfu > worst->m.mfu)) worst = mean;
    if (!worst || !(worst->m.mfu > 1.0)) return 0;
    char where[600] = "";
    if (worst == mean) snprintf(where, sizeof where, " (the mean step)");
    else if (worst->trace) snprintf(where, sizeof where, " (ProfilerStep#%" PRId64 " of %.400s)", worst->step, worst->trace);
    size_t worse = 0;
    for (size_t i = 0; i < n; i++) worse += rows[i].m.mfu > 1.0;
    cli_warn("MFU %.1f%%%s is above 100%%, which no run reaches: an input is wrong%s. Suspect: the peak "
             "(%g TFLOP/s dense BF16 per GPU, from %s), the tokens of one step on one rank (%.0f, from --seqlens: "
             "per rank, not the world's batch; world size %d, %s) and the step time (%.6f s, from %s)",
             100 * worst->m.mfu, where, worse > 1 ? " (more steps are above 100%, too)" : "", peak, src->peak,
             a->flops.tokens, world, src->world, worst->seconds, src->time);
    return 1;
}

/* The run's facts, then a row per step (and the mean). */
static int print_table(const tprof_result *r)
{
    const tprof_rows *top = tprof_result_top_c(r), *rows = tprof_result_table_c(r, 2);
    const tprof_cell *device = tprof_rows_at(top, 0, "device");
    double peak = tprof_rows_real(top, 0, "peak_tflops");
    int64_t world = tprof_rows_at(top, 0, "world_size")->v.i, ntraces = tprof_rows_at(top, 0, "traces")->v.i;
    printf("model        %s (%s)\n", tprof_rows_at(top, 0, "model_type")->v.s, tprof_rows_at(top, 0, "config")->v.s);
    printf("device       %s, peak %g TFLOP/s dense BF16, world size %" PRId64 " (promised %g TFLOP/s)\n",
           device->null ? "(--peak-tflops)" : device->v.s, peak, world, peak * (double)world);
    printf("per rank     %.0f tokens, %.6f TFLOPs per step\n\n", tprof_rows_real(top, 0, "tokens_per_rank"),
           tprof_rows_real(top, 0, "flops_per_step") / 1e12);
    /* the rows listed: every step, or past CLI_RANKS_LISTED traces the 3 lowest MFU and the mean */
    size_t n = tprof_rows_count(rows), m = 0, *shown = malloc((n ? n : 1) * sizeof *shown);
    if (!shown) return TPROF_ENOMEM;
    if (cli_across((size_t)(ntraces > 0 ? ntraces : 0))) {
        double *v = malloc((n ? n : 1) * sizeof *v);
        if (!v) {
            free(shown);
            return TPROF_ENOMEM;
        }
        static const char *const what[] = { "mfu", "step_time_s" };
        printf("%" PRId64 " traces, %zu steps: the distribution over them and the %d with the lowest MFU (%s)\n", ntraces,
               n ? n - 1 : 0, CLI_RANKS_WORST, CLI_ACROSS_HINT);
        for (int k = 0; k < 2; k++) {
            for (size_t i = 0; i < n; i++)
                v[i] = strcmp(tprof_rows_at(rows, i, "step")->v.s, "mean") ? tprof_rows_real(rows, i, what[k]) : NAN;
            tprof_col_dist d;
            if (tprof_dist_of(v, NULL, n, &d) || !d.n) continue;
            double f = k ? 1 : 100;
            const char *u = k ? " s" : "%";
            printf("  %s: min %.*f%s (%s #%s), p50 %.*f%s, p90 %.*f%s, max %.*f%s (%s #%s)\n", k ? "step time" : "MFU",
                   k ? 6 : 2, d.min * f, u, tprof_rows_at(rows, (size_t)d.min_rank, "trace")->v.s,
                   tprof_rows_at(rows, (size_t)d.min_rank, "step")->v.s, k ? 6 : 2, d.p50 * f, u, k ? 6 : 2, d.p90 * f, u,
                   k ? 6 : 2, d.max * f, u, tprof_rows_at(rows, (size_t)d.max_rank, "trace")->v.s,
                   tprof_rows_at(rows, (size_t)d.max_rank, "step")->v.s);
        }
        printf("\n");
        for (size_t i = 0; i < n; i++)
            v[i] = strcmp(tprof_rows_at(rows, i, "step")->v.s, "mean") ? tprof_rows_real(rows, i, "mfu") : NAN;
        m = tprof_dist_worst(v, n, CLI_RANKS_WORST, 1, shown);
        for (size_t i = 0; i < n; i++)
            if (!strcmp(tprof_rows_at(rows, i, "step")->v.s, "mean")) shown[m++] = i;
        free(v);
    } else
        for (size_t i = 0; i < n; i++) shown[m++] = i;
    static const char *const hdr[] = { "step", "time s", "tokens/s", "TFLOP/s/GPU", "TFLOP/s total", "MFU" };
    tprof_table *t = tprof_table_new(6, hdr, "lrrrrr");
    if (!t) {
        free(shown);
        return TPROF_ENOMEM;
    }
    for (size_t j = 0; j < m; j++) {
        size_t i = shown[j];
        const char *step = tprof_rows_at(rows, i, "step")->v.s;
        char name[64] = "-"; /* --step-time */
        if (!strcmp(step, "mean")) snprintf(name, sizeof name, "mean");
        else if (ntraces == 1) snprintf(name, sizeof name, "#%s", step);
        else if (ntraces > 1) snprintf(name, sizeof name, "%.40s #%s", tprof_rows_at(rows, i, "trace")->v.s, step);
        char c[5][48];
        snprintf(c[0], sizeof c[0], "%.6f", tprof_rows_real(rows, i, "step_time_s"));
        snprintf(c[1], sizeof c[1], "%.1f", tprof_rows_real(rows, i, "tokens_per_second"));
        snprintf(c[2], sizeof c[2], "%.2f", tprof_rows_real(rows, i, "tflops_per_gpu"));
        snprintf(c[3], sizeof c[3], "%.2f", tprof_rows_real(rows, i, "flops_achieved_T"));
        snprintf(c[4], sizeof c[4], "%.2f%%", 100 * tprof_rows_real(rows, i, "mfu"));
        const char *cells[] = { name, c[0], c[1], c[2], c[3], c[4] };
        tprof_table_row(t, cells);
    }
    free(shown);
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    return 0;
}

int cmd_mfu(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_MODEL_LONGOPTS,
        { "step-time", required_argument, 0, OPT_STEP_TIME },
        { "trace", no_argument, 0, OPT_TRACE },
        { "device", required_argument, 0, OPT_DEVICE },
        { "peak-tflops", required_argument, 0, OPT_PEAK },
        { "world-size", required_argument, 0, OPT_WORLD },
        { "strict", no_argument, 0, OPT_STRICT },
        { "all-ranks", no_argument, 0, OPT_ALL_RANKS },
        { "format", required_argument, 0, 'f' },
        { "color", required_argument, 0, 'c' },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    cli_model_args a = { 0 };
    cli_format fmt = FMT_TABLE;
    double step_time = 0, peak = 0, wsd = 0;
    int traces = 0, strict = 0, peak_given = 0, device_given = 0;
    const char *device = NULL;
    mfu_sources src = { "--peak-tflops", "--world-size", "--step-time" };
    int c, rc = EXIT_OK;
    optind = 0; /* 0, not 1: getopt starts afresh, its ordering mode too (report runs commands in turn) */
    while (!rc && (c = cli_getopt(argc, argv, "h", longopts)) != -1) {
        int k = cli_model_option(c, optarg, &a);
        if (k) {
            if (k < 0) rc = EXIT_USAGE;
            continue;
        }
        switch (c) {
        case OPT_STEP_TIME: rc = parse_pos("--step-time", optarg, &step_time) ? EXIT_USAGE : 0; break;
        case OPT_TRACE: traces = 1; break;
        case OPT_STRICT: strict = 1; break;
        case OPT_ALL_RANKS: cli_all_ranks = 1; break;
        case OPT_DEVICE:
            device = optarg;
            device_given = 1;
            break;
        case OPT_PEAK:
            rc = parse_pos("--peak-tflops", optarg, &peak) ? EXIT_USAGE : 0;
            peak_given = 1;
            break;
        case OPT_WORLD:
            rc = parse_pos("--world-size", optarg, &wsd) || wsd != floor(wsd) || wsd > 1e7 ? EXIT_USAGE : 0;
            if (rc && wsd > 0) cli_error("--world-size '%s': expected a whole number of GPUs", optarg);
            break;
        case 'f':
            if (cli_parse_format(optarg, &fmt)) {
                cli_error("--format '%s': expected table, csv or json", optarg);
                rc = EXIT_USAGE;
            }
            break;
        case 'c': rc = cli_set_color(optarg) ? EXIT_USAGE : 0; break;
        case 'h':
            help(stdout);
            cli_model_free(&a);
            return EXIT_OK;
        default: rc = EXIT_USAGE;
        }
    }
    int ntraces = argc - optind;
    if (!rc && traces && ntraces < 1) {
        cli_error("--trace needs at least one trace file");
        rc = EXIT_USAGE;
    } else if (!rc && !traces && ntraces > 0) {
        cli_error("unexpected argument '%s' (traces follow --trace)", argv[optind]);
        rc = EXIT_USAGE;
    } else if (!rc && traces == (step_time > 0)) {
        cli_error(traces ? "--step-time and --trace exclude each other" : "--step-time S or --trace TRACE... is required");
        rc = EXIT_USAGE;
    }
    if (!rc) rc = cli_model_load(&a);

    /* the traces (a directory: the traces below it): step times, and the device and world size they record */
    tprof_trace **tr = NULL;
    size_t nsteps = 0, *order = NULL;
    tprof_inputs in = { 0 };
    char **paths = NULL;
    if (!rc && traces) {
        rc = cli_expand_inputs(argv + optind, ntraces, CLI_TRACES, &in);
        paths = in.paths;
        ntraces = (int)in.npaths;
    }
    if (!rc && traces) {
        tr = calloc((size_t)ntraces, sizeof *tr);
        if (!tr) rc = EXIT_INPUT;
        cli_progress prog;
        int shown = cli_progress_begin(&prog, paths, ntraces, NULL);
        for (int i = 0; !rc && i < ntraces; i++) {
            tprof_read_opts ro = { .keep = 0, .progress = shown ? cli_progress_update : NULL,
                                   .progress_ctx = &prog };
            char err[512];
            int r = tprof_trace_read(&tr[i], paths[i], &ro, err, sizeof err);
            if (r == TPROF_ETRUNC) cli_warn("%s", err);
            else if (r) {
                cli_error("%s", err);
                rc = EXIT_INPUT;
                break;
            }
            const tprof_trace_meta *m = tprof_trace_meta_get(tr[i]);
            if (!m->nsteps) {
                cli_error("%s: no ProfilerStep#N spans, so no step times (use --step-time)", paths[i]);
                rc = EXIT_INPUT;
            }
            nsteps += m->nsteps;
            if (!device && peak <= 0 && m->ndevices) {
                device = m->devices[0].name;
            }
            if (wsd <= 0 && m->world_size > 0) {
                wsd = (double)m->world_size;
                src.world = "trace";
            }
        }
        cli_progress_end(&prog);
        /* the rows in rank order, as every command shows ranks */
        int64_t *rank = malloc((size_t)(ntraces > 0 ? ntraces : 1) * sizeof *rank);
        order = malloc((size_t)(ntraces > 0 ? ntraces : 1) * sizeof *order);
        if (!rc && (!rank || !order)) rc = EXIT_INPUT;
        for (int i = 0; !rc && i < ntraces; i++) rank[i] = tprof_trace_rank(tr[i]);
        if (!rc && tprof_rank_order(rank, (size_t)ntraces, order)) rc = EXIT_INPUT;
        free(rank);
    }
    if (!rc && peak <= 0) {
        if (!device) {
            cli_error("--device NAME or --peak-tflops X is required (MFU needs the device's peak)");
            rc = EXIT_USAGE;
        } else if (tprof_device_peak(device, &peak)) {
            cli_error("device '%s' is not in the peak table (trainprof mfu --help; docs/METRICS.md); "
                      "give its dense BF16 peak with --peak-tflops X", device);
            rc = EXIT_USAGE;
        }
    }
    int world = wsd > 0 ? (int)wsd : 1;
    if (wsd <= 0) src.world = "by default";
    else if (!strcmp(src.world, "--world-size")) src.world = "from --world-size";
    else src.world = "from the trace";
    if (traces) src.time = "the ProfilerStep spans";
    char peak_src[300];
    if (!peak_given && device) {
        snprintf(peak_src, sizeof peak_src, "%s %.200s", traces && !device_given ? "the trace's device" : "--device",
                 device);
        src.peak = peak_src;
    }

    step_row *rows = NULL;
    size_t nrows = 0;
    step_row mean = { .step = -1 };
    if (!rc) {
        rows = calloc(nsteps ? nsteps : 1, sizeof *rows);
        if (!rows) rc = EXIT_INPUT;
    }
    if (!rc && !traces) {
        rows[0] = (step_row){ .step = -1, .seconds = step_time };
        rc = measure(&a, peak, world, &rows[0]);
        nrows = 1;
    }
    double sum = 0;
    for (int o = 0; !rc && traces && o < ntraces; o++) {
        size_t i = order[o];
        const tprof_trace_meta *m = tprof_trace_meta_get(tr[i]);
        for (size_t s = 0; !rc && s < m->nsteps; s++) {
            step_row *r = &rows[nrows++];
            *r = (step_row){ .trace = paths[i], .step = m->steps[s].number, .seconds = m->steps[s].dur / 1e9 };
            if (!(r->seconds > 0)) {
                cli_error("%s: ProfilerStep#%" PRId64 " has no duration", r->trace, r->step);
                rc = EXIT_INPUT;
            } else
                rc = measure(&a, peak, world, r);
            sum += r->seconds;
        }
    }
    if (!rc && traces) {
        mean.seconds = sum / (double)nrows;
        rc = measure(&a, peak, world, &mean);
    }

    if (!rc) {
        tprof_mfu_run run = { .config = a.config, .model_type = tprof_model_type(a.model), .device = device,
                              .peak_tflops = peak, .world_size = world, .tokens_per_rank = a.flops.tokens,
                              .flops_per_step = a.flops.total, .traces = (size_t)(traces ? ntraces : 0) };
        tprof_result *res;
        int e = tprof_mfu_tables(&run, rows, nrows, traces ? &mean : NULL, &res);
        if (!e) e = fmt == FMT_TABLE ? print_table(res) : cli_print_whole(res, fmt, 0);
        if (e) {
            cli_error("%s", tprof_strerror(e));
            rc = EXIT_INPUT;
        } else if (check_mfu(rows, nrows, traces ? &mean : NULL, &a, peak, world, &src) && strict)
            rc = EXIT_CHECK;
        if (!e) tprof_result_free(res);
    }
    free(rows);
    for (int i = 0; tr && i < ntraces; i++) tprof_trace_free(tr[i]);
    free(tr);
    free(order);
    tprof_inputs_free(&in);
    cli_model_free(&a);
    return rc;
}
