/* trainprof comm: communication time, its overlap with compute, the exposed part. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
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
            "communication time) and exposed communication (time no compute kernel hid).\n"
            "HTA's comp/comm overlap for the trace (hta_overlap; docs/METRICS.md) is shown\n"
            "where it differs.\n\n"
            "Ascend: a profiler directory's communication.json and communication_matrix.json\n"
            "(read with its trace_view.json or kernel_details.csv, or given alone) add each\n"
            "HCCL op's elapse, transit, wait, synchronisation and idle time, their totals\n"
            "per step and group (msprof-analyze's Total Op Info), the bytes and bandwidth\n"
            "per transport (RDMA, HCCS, PCIE, SDMA, SIO) and per rank-to-rank link.\n\n"
            "options:\n"
            "  --definition D        the overlap headline: trainprof (default) or hta\n" CLI_COMMON_HELP);
}

static int option(void *ctx, int c, const char *arg)
{
    if (c != 'D') return -1;
    return cli_parse_definition(arg, ctx) ? -1 : 0;
}

static int64_t ival(const tprof_rows *t, size_t r, size_t c) { return tprof_rows_cell(t, r, c)->v.i; }
static const char *sval(const tprof_rows *t, size_t r, size_t c) { return tprof_rows_cell(t, r, c)->v.s; }

/* The recorded calls (record_param_comms) joined to their kernels. */
static void print_calls(const tprof_rows *calls)
{
    size_t n = tprof_rows_count(calls);
    if (!n) return;
    const tprof_table_desc *d = tprof_rows_desc(calls);
#define COL(name) (size_t) tprof_table_col(d, name)
    printf("\nrecorded collective calls (record_param_comms):\n");
    const char *hdr[] = { "collective", "calls", "with kernels", "bytes", "kernel time", "group", "algorithm",
                          "algbw GB/s", "busbw GB/s" };
    tprof_table *t = tprof_table_new(9, hdr, "lrrrrrlrr");
    size_t unsized = 0, unnamed = 0;
    for (size_t i = 0; t && i < n; i++) {
        char c[32], m[32], b[32] = "-", k[32], g[32], a[32] = "-", bb[32] = "-";
        snprintf(c, sizeof c, "%" PRId64, ival(calls, i, COL("calls")));
        snprintf(m, sizeof m, "%" PRId64, ival(calls, i, COL("matched")));
        const tprof_cell *bytes = tprof_rows_cell(calls, i, COL("bytes"));
        if (!bytes->null) tprof_fmt_bytes(b, sizeof b, bytes->v.i);
        else unsized += (size_t)ival(calls, i, COL("calls"));
        tprof_fmt_duration(k, sizeof k, ival(calls, i, COL("kernel_ns")));
        snprintf(g, sizeof g, "%" PRId64, ival(calls, i, COL("group_size")));
        const tprof_cell *alg = tprof_rows_cell(calls, i, COL("algbw_gbps")), *bus = tprof_rows_cell(calls, i, COL("busbw_gbps"));
        if (!alg->null) snprintf(a, sizeof a, "%.2f", alg->v.d);
        if (!bus->null) snprintf(bb, sizeof bb, "%.2f", bus->v.d);
        const char *algo = sval(calls, i, COL("algorithm"));
        unnamed += sval(calls, i, COL("name"))[0] == '[';
        const char *cells[] = { sval(calls, i, COL("name")), c, m, b, k, g, algo[0] ? algo : "-", a, bb };
        tprof_table_row(t, cells);
    }
#undef COL
    if (t) tprof_table_print(t, stdout);
    tprof_table_free(t);
    if (unsized) printf("-: sizes not recorded for %zu call%s, so no bytes and no bandwidth\n", unsized, unsized == 1 ? "" : "s");
    if (unnamed) printf("[TYPE]: calls recorded without their collective's name, named by their kernels' type\n");
}

/* Ascend's communication summaries (communication.json and its matrix):
 * the totals per step and group, the transports, the links, the ops. */
static int print_hccl(const tprof_result *res)
{
    enum { OPS_SHOWN = 20 };
    const tprof_rows *ops = tprof_result_table_c(res, 3);
    size_t nops = tprof_rows_count(ops);
    if (!nops && !tprof_rows_count(tprof_result_table_c(res, 6))) return 0;
    printf("\nAscend communication summaries: %zu HCCL op%s\n", nops, nops == 1 ? "" : "s");
    for (size_t i = 4; i <= 6; i++) {
        const tprof_rows *t = tprof_result_table_c(res, i);
        if (!tprof_rows_count(t)) continue;
        printf("\n%s:\n", tprof_rows_desc(t)->title);
        if (tprof_rows_print_table(t, 0, stdout)) return TPROF_ENOMEM;
    }
    if (!nops) return 0;
    printf("\n%s:\n", tprof_rows_desc(ops)->title);
    if (tprof_rows_print_table(ops, OPS_SHOWN, stdout)) return TPROF_ENOMEM;
    if (nops > OPS_SHOWN) printf("(the first %d of %zu ops; --format json or csv has them all)\n", OPS_SHOWN, nops);
    return 0;
}

static int print(void *ctx, const tprof_result *res, const char *label, const char *path)
{
    int hta_first = *(const tprof_definition *)ctx == TPROF_DEFINITION_HTA;
    const tprof_rows *top = tprof_result_top_c(res), *types = tprof_result_table_c(res, 0);
    const tprof_table_desc *td = tprof_comm_desc.top, *yd = tprof_comm_desc.tables[0];
#define TOP(name) ival(top, 0, (size_t)tprof_table_col(td, name))
#define TY(r, name) ival(types, r, (size_t)tprof_table_col(yd, name))
    char a[32], b[32], c[32];
    printf("== %s: %s ==\n", label, path);
    int64_t comm = TOP("comm_ns"), exposed = TOP("exposed_ns");
    if (!comm) {
        if (!tprof_rows_count(tprof_result_table_c(res, 3)) && !tprof_rows_count(tprof_result_table_c(res, 6)))
            printf("no communication kernels\n");
        print_calls(tprof_result_table_c(res, 1));
        return print_hccl(res);
    }
    double overlap = tprof_rows_real(top, 0, "overlap"), hta = tprof_rows_real(top, 0, "hta_overlap");
    int differ = hta == hta && fabs(hta - overlap) > 0.005;
    if (hta_first && hta == hta) printf("HTA's comp/comm overlap for this trace: %.1f%%\n", hta * 100);
    printf("%scommunication %s, overlapped with compute %s (%.1f%%), exposed %s (%.1f%%)\n",
           hta_first && differ ? "trainprof: " : "",
           tprof_fmt_duration(a, sizeof a, comm), tprof_fmt_duration(b, sizeof b, TOP("overlap_ns")), overlap * 100,
           tprof_fmt_duration(c, sizeof c, exposed), cli_pct(exposed, comm));
    /* HTA's comp/comm overlap, where it differs (its event set and kernel
     * types: see `temporal`) */
    if (differ && !hta_first)
        printf("HTA's comp/comm overlap for this trace: %.1f%% (see trainprof temporal for why they differ)\n",
               hta * 100);
    printf("\n");
    const char *hdr[] = { "collective", "kernels", "time", "sum", "exposed", "exposed %" };
    tprof_table *t = tprof_table_new(6, hdr, "lrrrrr");
    if (!t) return TPROF_ENOMEM;
    for (size_t i = 0; i < tprof_rows_count(types); i++) {
        char n[32], tm[32], sum[32], ex[32], p[16];
        snprintf(n, sizeof n, "%" PRId64, TY(i, "count"));
        tprof_fmt_duration(tm, sizeof tm, TY(i, "time_ns"));
        tprof_fmt_duration(sum, sizeof sum, TY(i, "total_ns"));
        tprof_fmt_duration(ex, sizeof ex, TY(i, "exposed_ns"));
        snprintf(p, sizeof p, "%.1f%%", cli_pct(TY(i, "exposed_ns"), TY(i, "time_ns")));
        const char *cells[] = { sval(types, i, 0), n, tm, sum, ex, p };
        tprof_table_row(t, cells);
    }
#undef TOP
#undef TY
    tprof_table_print(t, stdout);
    tprof_table_free(t);
    print_calls(tprof_result_table_c(res, 1));
    return print_hccl(res);
}

static int analyse(void *ctx, const tprof_trace *t, tprof_result **out)
{
    (void)ctx;
    tprof_comm_result *r;
    int rc = tprof_comm(t, &r);
    if (rc) return rc;
    tprof_hta_figures hta;
    if ((rc = tprof_hta_figures_of(t, &hta))) {
        tprof_comm_free(r);
        return rc;
    }
    r->hta_overlap = hta.computed ? hta.comm_overlap : NAN;
    rc = tprof_comm_tables(r, t, out);
    tprof_comm_free(r);
    return rc;
}

int cmd_comm(int argc, char **argv)
{
    static const struct option opts[] = { { "definition", required_argument, 0, 'D' }, { 0, 0, 0, 0 } };
    static const cli_spec spec = {
        .help = help, .keep = TPROF_COMM_KEEP, .accepts = TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_JSON), .opts = opts,
        .option = option, .result = &tprof_comm_desc,
        .analyse = analyse, .print = print,
    };
    tprof_definition headline = TPROF_DEFINITION_TRAINPROF;
    return cli_run(argc, argv, &spec, &headline);
}
