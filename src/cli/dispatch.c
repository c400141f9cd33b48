/* trainprof: the command table and global flags (cli_main, run by
 * trainprof's main and by trainprof-mpi's). Each command lives in its own
 * cmd_<name>.c and is a thin layer over libtrainprof. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli.h"
#include "trainprof/sink.h"
#include "trainprof/version.h"

static const cli_command commands[] = {
    { "summary", "the first screen: steps, phases, GPU time, communication, top kernels, ranks, advice",
      cmd_summary, 1 },
    { "info", "what a trace holds: format, devices, rank, steps, event counts, warnings", cmd_info, 1 },
    { "kernels", "GPU kernel breakdown: top kernels, classes, streams", cmd_kernels, 1 },
    { "ops", "the operator view: GPU time per op, op and input shapes, or nn.Module", cmd_ops, 1 },
    { "steps", "each ProfilerStep: CPU time, GPU work launched, statistics, phase split", cmd_steps, 1 },
    { "temporal", "GPU time split into idle, compute and non-compute (HTA's temporal breakdown)", cmd_temporal, 1 },
    { "idle", "why each GPU stream is idle: host wait, kernel wait, other", cmd_idle, 1 },
    { "comm", "communication time, overlap with compute, exposed communication, per collective", cmd_comm, 1 },
    { "launch", "launch overhead, launch queue, CPU-bound detection", cmd_launch, 1 },
    { "ranks", "ranks side by side: stragglers, step-time skew, exposed communication", cmd_ranks, 1 },
    { "collectives", "each collective matched across ranks: waits, transfer time, bandwidth, the straggler",
      cmd_collectives, 1 },
    { "critical-path", "the critical path of each step (HTA's graph): what bounds it, the events on it",
      cmd_critical_path, 1 },
    { "merge", "every rank's trace in one timeline: own pids, unique ids, aligned clocks", cmd_merge, 0 },
    { "flops", "FLOPs of one training step from a model's config.json: linear, attention, vision", cmd_flops, 0 },
    { "mfu", "tokens/s, TFLOP/s per GPU and MFU from a step time or the ProfilerSteps of traces", cmd_mfu, 0 },
    { "log", "training logs into per-step series: metric summary, anomalies, CSV/JSON, SVG plot", cmd_log, 0 },
    { "advice", "findings over documented thresholds, with their numbers and the usual remedy", cmd_advice, 1 },
    { "diff", "two runs side by side: step time, phases, GPU time, communication, kernels; --fail-above", cmd_diff, 1 },
    { "mem", "CUDA memory snapshots: peak and who holds it, reserved, fragmentation, OOMs; --timeline, --compare",
      cmd_mem, 0 },
    /* report: its summary of the traces is spread (the heavy part); the rest runs on the root */
    { "report", "one self-contained HTML page of a run: traces, memory snapshots, logs, with charts", cmd_report, 1 },
};

int cli_command_distributes(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(name, commands[i].name)) return commands[i].distributes;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainprof [--version] [--help] COMMAND [ARGS]\n\n"
            "Profiles deep-learning training runs from PyTorch/Kineto traces and CUDA memory snapshots.\n\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "\nRun 'trainprof COMMAND --help' for a command's options.\n"
            "Inputs: a file path or '-' (stdin); gzip and zstd are detected by their magic bytes.\n"
            "Exit codes: 0 ok, 1 a requested check failed, 2 usage, 3 unreadable or invalid input,\n"
            "            4 input truncated (results cover what was read), 5 an output could not be\n"
            "            written (stdout or a file: a full disk, a read-only directory).\n"
            "\nenvironment:\n"
            "  NO_COLOR          when set, diagnostics are not coloured (--color auto)\n"
            "  TPROF_PROGRESS    always|never: the progress bar on stderr (default: shown when\n"
            "                    stderr is a terminal)\n"
            "  COLUMNS           the width tables fit on a terminal that does not report its size\n"
            "  TPROF_FORCE_ZLIB  when set, gzip is decompressed by zlib instead of ISA-L\n");
}

static void sink_notice(const char *msg) { cli_note("%s", msg); }

/* The terminal's width when stdout is one (TIOCGWINSZ, else COLUMNS);
 * 0 otherwise: tables keep their fixed widths in files and pipes. */
static int terminal_columns(void)
{
    if (!isatty(STDOUT_FILENO)) return 0;
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    const char *c = getenv("COLUMNS");
    long n = c ? strtol(c, NULL, 10) : 0;
    return n > 0 && n < 100000 ? (int)n : 0;
}

/* Where transparent huge pages are "always" (RHEL's default, some clouds'),
 * every 2 MiB region a thread touches is a whole huge page: the threads'
 * stacks and malloc arenas, the chunk buffers' tails. The peak of kernels on
 * a 323 MiB trace went from 44 MiB to 46-57 MiB, varying by run. Linux 6.18
 * can keep huge pages to the regions that ask for them (the big arrays,
 * util/big.h), as in the "madvise" mode; older kernels refuse the flag and
 * keep the system's mode. */
static void keep_huge_pages_to_advised(void)
{
#ifdef PR_SET_THP_DISABLE
    const unsigned long except_advised = 1ul << 1; /* PR_THP_DISABLE_EXCEPT_ADVISED, not in older headers */
    (void)prctl(PR_SET_THP_DISABLE, 1ul, except_advised, 0ul, 0ul);
#endif
}

int cli_main(int argc, char **argv)
{
    /* Traces analysed and freed one after another on the reading threads
     * (the result commands) would otherwise get their arrays as fresh
     * mappings each time and give them back with munmap while the other
     * thread runs: page faults and TLB shootdowns tripled the system time of
     * temporal over 1,000 ranks (docs/PERFORMANCE.md). Arrays under 32 MiB
     * come from the heap, where freed memory is reused; larger arrays still
     * grow by mremap. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 32 << 20);
    keep_huge_pages_to_advised();
    cli_set_color("auto");
    /* an interrupted write leaves no temporary file; one a killed run left is removed, with a note */
    tprof_sink_handle_signals();
    tprof_sink_set_notice(sink_notice);
    tprof_table_layout(0, terminal_columns()); /* --wide (common.c) prints names in full */
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return cli_finish_stdout(EXIT_OK);
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        printf("trainprof %s (library %s)\n", TPROF_VERSION_STRING, tprof_version());
        return cli_finish_stdout(EXIT_OK);
    }
    /* Hidden, for the generated bash completion and man page (scripts/gen-*.sh):
     * the command names, and a command's option table (cli.h). */
    if (!strcmp(cmd, "--list-commands")) {
        for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) printf("%s\n", commands[i].name);
        return cli_finish_stdout(EXIT_OK);
    }
    if (!strcmp(cmd, "--list-options") && argc == 3) {
        cli_list_options = 1; /* the command's first cli_getopt prints them and exits */
        argc--;
        argv++;
        cmd = argv[1];
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(cmd, commands[i].name)) return cli_finish_stdout(commands[i].run(argc - 1, argv + 1));
    cli_error("unknown command '%s' (see trainprof --help)", cmd);
    return EXIT_USAGE;
}
