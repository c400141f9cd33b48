/* trainprof launch: launch overhead, the launch queue, CPU-bound detection. */
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
            "usage: trainprof launch [options] TRACE...\n\n"
            "Launch overhead per trace: delay from each runtime launch call to the start\n"
            "of its GPU work (mean, p50, p90, max), the share of kernels shorter than their\n"
            "launch call, GPU work per step, the queue of launched-but-unfinished work, and\n"
            "whether the run is CPU-bound (GPU idle >= 20%% of its span, host waits >= half\n"
            "of the streams' idle time). The idle is `trainprof temporal`'s: with two or\n"
            "more steps, the last step's work left out.\n\noptions:\n" CLI_COMMON_HELP);
}

static int analyse(void *ctx, const tprof_trace *t, tprof_result **out)
{
    (void)ctx;
    tprof_launch_result r;
    int rc = tprof_launch_overhead(t, &r);
    return rc ? rc : tprof_launch_tables(&r, out);
}

int cmd_launch(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = TPROF_LAUNCH_KEEP, .result = &tprof_launch_desc, .analyse = analyse,
    };
    return cli_run(argc, argv, &spec, NULL);
}
