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
               "  --format table|csv|json\n"
               "  --color auto|always|never\n");
}

enum { OPT_STEP_TIME = 1100, OPT_TRACE, OPT_DEVICE, OPT_PEAK, OPT_WORLD };

typedef struct {
    const char *label; /* the trace, or NULL for --step-time */
    int64_t number;    /* ProfilerStep#N, -1 for none */
    double seconds;
    tprof_meter_metrics m;
    double tflops_gpu; /* achieved per rank */
} row;

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
static int measure(cli_model_args *a, double peak, int world, row *r)
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

static void json_row(tprof_jw *w, const row *r)
{
    const char *names[TPROF_METER_NMETRICS];
    double v[TPROF_METER_NMETRICS];
    tprof_jw_obj(w);
    if (r->label) tprof_jw_kstr(w, "trace", r->label);
    if (r->number >= 0) tprof_jw_kint(w, "step", r->number);
    tprof_jw_kdouble(w, "step_time_s", r->seconds);
    tprof_jw_kdouble(w, "tflops_per_gpu", r->tflops_gpu);
    size_t n = tprof_meter_list(&r->m, names, v);
    for (size_t i = 0; i < n; i++)
        if (strncmp(names[i], "consume", 7) && strcmp(names[i], "training/avg_effective_len"))
            tprof_jw_kdouble(w, names[i], v[i]);
    tprof_jw_obj_end(w);
}

static void table_row(tprof_table *t, const char *name, const row *r)
{
    char c[6][48];
    snprintf(c[0], sizeof c[0], "%.6f", r->seconds);
    snprintf(c[1], sizeof c[1], "%.1f", r->m.tokens_per_second_M * 1e6);
    snprintf(c[2], sizeof c[2], "%.2f", r->tflops_gpu);
    snprintf(c[3], sizeof c[3], "%.2f", r->m.flops_achieved_T);
    snprintf(c[4], sizeof c[4], "%.2f%%", 100 * r->m.mfu);
    const char *cells[] = { name, c[0], c[1], c[2], c[3], c[4] };
    tprof_table_row(t, cells);
}

static void csv_row(const char *trace, const char *step, const row *r)
{
    tprof_csv_field(stdout, trace);
    printf(",%s,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", step, r->seconds, r->m.tokens_per_second_M * 1e6,
           r->tflops_gpu, r->m.flops_achieved_T, r->m.flops_promised_T, r->m.mfu);
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
        { "format", required_argument, 0, 'f' },
        { "color", required_argument, 0, 'c' },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    cli_model_args a = { 0 };
    cli_format fmt = FMT_TABLE;
    double step_time = 0, peak = 0, wsd = 0;
    int traces = 0;
    const char *device = NULL;
    int c, rc = EXIT_OK;
    optind = 1;
    while (!rc && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int k = cli_model_option(c, optarg, &a);
        if (k) {
            if (k < 0) rc = EXIT_USAGE;
            continue;
        }
        switch (c) {
        case OPT_STEP_TIME: rc = parse_pos("--step-time", optarg, &step_time) ? EXIT_USAGE : 0; break;
        case OPT_TRACE: traces = 1; break;
        case OPT_DEVICE: device = optarg; break;
        case OPT_PEAK: rc = parse_pos("--peak-tflops", optarg, &peak) ? EXIT_USAGE : 0; break;
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
        case 'c': cli_set_color(optarg); break;
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

    /* the traces: step times, and the device and world size they record */
    tprof_trace **tr = NULL;
    size_t nsteps = 0;
    if (!rc && traces) {
        tr = calloc((size_t)ntraces, sizeof *tr);
        if (!tr) rc = EXIT_INPUT;
        for (int i = 0; !rc && i < ntraces; i++) {
            tprof_read_opts ro = { .keep = 0 };
            char err[512];
            int r = tprof_trace_read(&tr[i], argv[optind + i], &ro, err, sizeof err);
            if (r == TPROF_ETRUNC) cli_warn("%s", err);
            else if (r) {
                cli_error("%s", err);
                rc = EXIT_INPUT;
                break;
            }
            const tprof_trace_meta *m = tprof_trace_meta_get(tr[i]);
            if (!m->nsteps) {
                cli_error("%s: no ProfilerStep#N spans, so no step times (use --step-time)", argv[optind + i]);
                rc = EXIT_INPUT;
            }
            nsteps += m->nsteps;
            if (!device && peak <= 0 && m->ndevices) device = m->devices[0].name;
            if (wsd <= 0 && m->world_size > 0) wsd = (double)m->world_size;
        }
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

    row *rows = NULL;
    size_t nrows = 0;
    row mean = { .number = -1 };
    if (!rc) {
        rows = calloc(nsteps ? nsteps : 1, sizeof *rows);
        if (!rows) rc = EXIT_INPUT;
    }
    if (!rc && !traces) {
        rows[0] = (row){ .number = -1, .seconds = step_time };
        rc = measure(&a, peak, world, &rows[0]);
        nrows = 1;
    }
    double sum = 0;
    for (int i = 0; !rc && traces && i < ntraces; i++) {
        const tprof_trace_meta *m = tprof_trace_meta_get(tr[i]);
        for (size_t s = 0; !rc && s < m->nsteps; s++) {
            row *r = &rows[nrows++];
            *r = (row){ .label = argv[optind + i], .number = m->steps[s].number, .seconds = m->steps[s].dur / 1e9 };
            if (!(r->seconds > 0)) {
                cli_error("%s: ProfilerStep#%" PRId64 " has no duration", r->label, r->number);
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

    if (!rc && fmt == FMT_JSON) {
        tprof_jw w;
        tprof_jw_init(&w, stdout);
        tprof_jw_obj(&w);
        tprof_jw_kstr(&w, "config", a.config);
        tprof_jw_kstr(&w, "model_type", tprof_model_type(a.model));
        tprof_jw_kstr(&w, "device", device);
        tprof_jw_kdouble(&w, "peak_tflops", peak);
        tprof_jw_kint(&w, "world_size", world);
        cli_jw_count(&w, "tokens_per_rank", a.flops.tokens);
        cli_jw_count(&w, "flops_per_step", a.flops.total);
        tprof_jw_key(&w, "steps");
        tprof_jw_arr(&w);
        for (size_t i = 0; i < nrows; i++) json_row(&w, &rows[i]);
        tprof_jw_arr_end(&w);
        if (traces) {
            tprof_jw_key(&w, "mean");
            json_row(&w, &mean);
        }
        tprof_jw_obj_end(&w);
    } else if (!rc && fmt == FMT_CSV) {
        printf("trace,step,step_time_s,tokens_per_second,tflops_per_gpu,flops_achieved_T,flops_promised_T,mfu\n");
        for (size_t i = 0; i < nrows; i++) {
            char st[32] = "";
            if (rows[i].number >= 0) snprintf(st, sizeof st, "%" PRId64, rows[i].number);
            csv_row(rows[i].label ? rows[i].label : "", st, &rows[i]);
        }
        if (traces) csv_row("", "mean", &mean);
    } else if (!rc) {
        printf("model        %s (%s)\n", tprof_model_type(a.model), a.config);
        printf("device       %s, peak %g TFLOP/s dense BF16, world size %d (promised %g TFLOP/s)\n",
               device ? device : "(--peak-tflops)", peak, world, peak * world);
        printf("per rank     %.0f tokens, %.6f TFLOPs per step\n\n", a.flops.tokens, a.flops.total / 1e12);
        static const char *const hdr[] = { "step", "time s", "tokens/s", "TFLOP/s/GPU", "TFLOP/s total", "MFU" };
        tprof_table *t = tprof_table_new(6, hdr, "lrrrrr");
        for (size_t i = 0; t && i < nrows; i++) {
            char name[64] = "-"; /* --step-time */
            if (ntraces == 1) snprintf(name, sizeof name, "#%" PRId64, rows[i].number);
            else if (ntraces > 1) snprintf(name, sizeof name, "%.40s #%" PRId64, rows[i].label, rows[i].number);
            table_row(t, name, &rows[i]);
        }
        if (t && traces) table_row(t, "mean", &mean);
        if (t) tprof_table_print(t, stdout);
        tprof_table_free(t);
    }
    free(rows);
    for (int i = 0; tr && i < ntraces; i++) tprof_trace_free(tr[i]);
    free(tr);
    cli_model_free(&a);
    return rc;
}
