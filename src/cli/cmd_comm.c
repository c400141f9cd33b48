/* trainprof comm: communication time, its overlap with compute, the exposed part. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trainprof/analysis.h"
#include "trainprof/error.h"
#include "trainprof/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: trainprof comm [options] TRACE...\n\n"
            "Communication per trace (rank) and per collective type: time (union of the\n"
            "communication kernels' intervals), overlap with compute (time both ran /\n"
            "communication time) and exposed communication (time no compute kernel hid).\n\n"
            "options:\n" CLI_COMMON_HELP);
}

/* The recorded calls (record_param_comms) joined to their kernels. */
static void print_calls(const tprof_comm_result *r)
{
    if (!r->ncalls) return;
    printf("\nrecorded collective calls (record_param_comms):\n");
    const char *hdr[] = { "collective", "calls", "with kernels", "bytes", "kernel time", "group", "algorithm",
                          "algbw GB/s", "busbw GB/s" };
    tprof_table *t = tprof_table_new(9, hdr, "lrrrrrlrr");
    for (size_t i = 0; t && i < r->ncalls; i++) {
        const tprof_comm_call *x = &r->calls[i];
        char c[32], m[32], b[32], k[32], g[32], a[32], bb[32];
        snprintf(c, sizeof c, "%" PRIu64, x->calls);
        snprintf(m, sizeof m, "%" PRIu64, x->matched);
        tprof_fmt_bytes(b, sizeof b, x->bytes);
        tprof_fmt_duration(k, sizeof k, x->kernel_ns);
        snprintf(g, sizeof g, "%" PRId64, x->group_size);
        snprintf(a, sizeof a, "%.2f", x->algbw);
        snprintf(bb, sizeof bb, "%.2f", x->busbw);
        const char *cells[] = { x->name, c, m, b, k, g, x->algorithm[0] ? x->algorithm : "-", a, bb };
        tprof_table_row(t, cells);
    }
    if (t) tprof_table_print(t, stdout);
    tprof_table_free(t);
}

static void print_table(const char *label, const char *path, const tprof_comm_result *r)
{
    char a[32], b[32], c[32];
    printf("== %s: %s ==\n", label, path);
    if (!r->comm_ns) {
        printf("no communication kernels\n");
        print_calls(r);
        return;
    }
    printf("communication %s, overlapped with compute %s (%.1f%%), exposed %s (%.1f%%)\n\n",
           tprof_fmt_duration(a, sizeof a, r->comm_ns), tprof_fmt_duration(b, sizeof b, r->overlap_ns),
           r->overlap * 100, tprof_fmt_duration(c, sizeof c, r->exposed_ns), cli_pct(r->exposed_ns, r->comm_ns));
    const char *hdr[] = { "collective", "kernels", "time", "sum", "exposed", "exposed %" };
    tprof_table *t = tprof_table_new(6, hdr, "lrrrrr");
    if (!t) return;
    for (size_t i = 0; i < r->ntypes; i++) {
        const tprof_comm_type *y = &r->types[i];
        char n[32], tm[32], sum[32], ex[32], p[16];
        snprintf(n, sizeof n, "%" PRIu64, y->count);
        tprof_fmt_duration(tm, sizeof tm, y->time_ns);
        tprof_fmt_duration(sum, sizeof sum, y->total_ns);
        tprof_fmt_duration(ex, sizeof ex, y->exposed_ns);
        snprintf(p, sizeof p, "%.1f%%", cli_pct(y->exposed_ns, y->time_ns));
        const char *cells[] = { y->type, n, tm, sum, ex, p };
        tprof_table_row(t, cells);
    }
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    print_calls(r);
}

static void print_json(tprof_jw *w, const char *label, const char *path, const tprof_comm_result *r)
{
    cli_json_begin(w, label, path);
    tprof_jw_kint(w, "comm_ns", r->comm_ns);
    tprof_jw_kint(w, "compute_ns", r->compute_ns);
    tprof_jw_kint(w, "overlap_ns", r->overlap_ns);
    tprof_jw_kint(w, "exposed_ns", r->exposed_ns);
    tprof_jw_kdouble(w, "overlap", r->overlap);
    tprof_jw_key(w, "types");
    tprof_jw_arr(w);
    for (size_t i = 0; i < r->ntypes; i++) {
        const tprof_comm_type *y = &r->types[i];
        tprof_jw_obj(w);
        tprof_jw_kstr(w, "type", y->type);
        tprof_jw_kuint(w, "count", y->count);
        tprof_jw_kint(w, "time_ns", y->time_ns);
        tprof_jw_kint(w, "total_ns", y->total_ns);
        tprof_jw_kint(w, "exposed_ns", y->exposed_ns);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
    tprof_jw_key(w, "calls");
    tprof_jw_arr(w);
    for (size_t i = 0; i < r->ncalls; i++) {
        const tprof_comm_call *x = &r->calls[i];
        tprof_jw_obj(w);
        tprof_jw_kstr(w, "name", x->name);
        tprof_jw_kuint(w, "calls", x->calls);
        tprof_jw_kuint(w, "matched", x->matched);
        tprof_jw_kint(w, "bytes", x->bytes);
        tprof_jw_kint(w, "matched_bytes", x->matched_bytes);
        tprof_jw_kint(w, "kernel_ns", x->kernel_ns);
        tprof_jw_kint(w, "group_size", x->group_size);
        tprof_jw_kstr(w, "algorithm", x->algorithm);
        tprof_jw_kdouble(w, "algbw_gbps", x->algbw);
        tprof_jw_kdouble(w, "busbw_gbps", x->busbw);
        tprof_jw_obj_end(w);
    }
    tprof_jw_arr_end(w);
    tprof_jw_obj_end(w);
}


static int each(void *ctx, const tprof_trace *t, cli_out *out)
{
    (void)ctx;
    tprof_comm_result *r;
    int rc = tprof_comm(t, &r);
    if (rc) return rc;
    if (out->fmt == FMT_TABLE) {
        if (out->shown) printf("\n");
        print_table(out->label, out->path, r);
    } else if (out->fmt == FMT_JSON)
        print_json(&out->jw, out->label, out->path, r);
    else {
        /* one row per collective type, then the whole as "all" */
        tprof_comm_type all = { "all", 0, 0, r->comm_ns, r->exposed_ns };
        for (size_t q = 0; q < r->ntypes; q++) {
            all.count += r->types[q].count;
            all.total_ns = tprof_sat_add(all.total_ns, r->types[q].total_ns);
        }
        for (size_t k = 0; k <= r->ntypes; k++) {
            const tprof_comm_type *y = k < r->ntypes ? &r->types[k] : &all;
            tprof_csv_field(stdout, out->label);
            fputc(',', stdout);
            tprof_csv_field(stdout, out->path);
            printf(",%s,%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "\n", y->type, y->count, y->time_ns, y->total_ns,
                   y->exposed_ns);
        }
    }
    tprof_comm_free(r);
    return 0;
}

int cmd_comm(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = TPROF_COMM_KEEP, .each = each,
        .csv_header = "trace,file,collective,kernels,time_ns,total_ns,exposed_ns",
    };
    return cli_run(argc, argv, &spec, NULL);
}
