/* Shared pieces of the trainprof command line (internal to the CLI). */
#ifndef TPROF_CLI_H
#define TPROF_CLI_H

#include <getopt.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>

#include "trainprof/analysis.h"
#include "trainprof/flops.h"
#include "trainprof/report.h"
#include "trainprof/result.h"
#include "trainprof/source.h"
#include "trainprof/trace.h"

/* Exit codes (docs/ARCHITECTURE.md). */
enum {
    EXIT_OK = 0,
    EXIT_CHECK = 1,
    EXIT_USAGE = 2,
    EXIT_INPUT = 3,
    EXIT_TRUNC = 4,
    EXIT_OUTPUT = 5, /* an output (stdout or a file) could not be written */
};

typedef enum { FMT_TABLE = 0, FMT_CSV, FMT_JSON } cli_format;

typedef struct {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    int distributes; /* reads its traces through cli_run (trainprof-mpi spreads them) */
} cli_command;

extern int cli_color; /* stderr diagnostics in colour */
extern int cli_notes_off; /* notes not printed (trainprof-mpi's processes but the root: each would say the same) */

/* Text output of many ranks: up to CLI_RANKS_LISTED traces get a line or
 * table each; past it, the across-ranks view (the distribution over ranks
 * and the CLI_RANKS_WORST worst by the key metric), unless --all-ranks
 * (cli_all_ranks). JSON and CSV always hold every rank. */
enum { CLI_RANKS_LISTED = 8, CLI_RANKS_WORST = 3 };
extern int cli_all_ranks;
/* --threads as cli_run read it (0: not given), for analyses that start threads of their own */
extern int cli_threads;
/* 1 when N traces are shown in the across-ranks view. */
static inline int cli_across(size_t n) { return n > CLI_RANKS_LISTED && !cli_all_ranks; }
/* "--all-ranks prints each rank, --format json has every one": what the
 * across-ranks view left out, and how to see it. */
#define CLI_ACROSS_HINT "--all-ranks prints every rank, --format json has them all"

int cli_parse_format(const char *s, cli_format *out);
/* "A..B", "A..", "..B" or "A" (ProfilerStep numbers). */
int cli_parse_steps(const char *s, long long *first, long long *last);
/* --steps ARG of a command with a step window: *FIRST and *LAST, and in
 * WINDOW the error for a trace that has none of those steps; 0, or -1
 * after saying what it takes. */
int cli_steps_option(const char *arg, int64_t *first, int64_t *last, char *window, size_t len);
/* auto|always|never; NO_COLOR honoured. Another value: says so, returns -1. */
int cli_set_color(const char *mode);
/* getopt_long, with the errors worded for trainprof: "trainprof CMD:
 * invalid option -- 'o'" and a hint line naming CMD --help (argv[0] is the
 * command); returns '?' for them (the caller exits 2). */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);
/* Set by the hidden `trainprof --list-options COMMAND` (main.c): the
 * command's first cli_getopt prints its option table, one "--name\tARG" per
 * line (ARG: none, required or optional), and ends the process. The bash
 * completion is generated from it (scripts/gen-completion.sh). */
extern int cli_list_options;
/* --threads N: 0 = one per core. Returns -1 when N is not a count. */
int cli_parse_threads(const char *s, int *out);
/* --definition trainprof|hta; says what it takes and returns -1 otherwise. */
int cli_parse_definition(const char *s, tprof_definition *out);
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "trainprof: wrote PATH (SIZE)" on stderr: an output file is in place
 * (after the sink's rename; never for stdout). */
void cli_wrote(const char *path, uint64_t bytes);
/* Set while a command writes files of another's (report's temporary
 * timeline): no "wrote" line. */
extern int cli_quiet_wrote;
/* Writes BUF as the whole file PATH through the atomic sink (and says so);
 * prints why not. Returns EXIT_OK or EXIT_OUTPUT. */
int cli_write_file(const char *path, const void *buf, size_t len);
/* Flushes and closes stdout; on a write error (a full disk, /dev/full) says
 * so and returns EXIT_OUTPUT, else RC. */
int cli_finish_stdout(int rc);

/* Progress of reading PATHS[0..N), on stderr when it is a terminal
 * (TPROF_PROGRESS=always|never overrides): a bar and a share when the sizes
 * are known, else the bytes read and the rate; WHAT names the phase, or
 * NULL. cli_progress_update is a tprof_progress_fn over CTX = the
 * cli_progress; _end clears the line. _begin returns 1 when it is shown. */
typedef struct {
    pthread_mutex_t mu;
    char **paths;
    int n, on, drawn, started;
    const char *what;
    uint64_t *done, start_done;
    int64_t *size; /* -1: a pipe */
    struct timespec start, last;
} cli_progress;
int cli_progress_begin(cli_progress *p, char **paths, int n, const char *what);
void cli_progress_update(void *ctx, const char *path, uint64_t bytes_in, int64_t file_size);
void cli_progress_end(cli_progress *p);

/* ARGS[0..N) with every directory replaced by the files below it of the
 * kinds in ACCEPTS (TPROF_INPUT_BIT masks; tprof_inputs_expand), with one
 * note per directory on what it held. A directory holding none of them is
 * an error, said with what it does hold. Returns EXIT_OK, or EXIT_INPUT
 * after printing why (OUT is then empty). */
int cli_expand_inputs(char *const *args, int n, unsigned accepts, tprof_inputs *out);
#define CLI_TRACES                                                                                             \
    (TPROF_INPUT_BIT(TPROF_INPUT_TRACE) | TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_KERNELS) |                           \
     TPROF_INPUT_BIT(TPROF_INPUT_ASCEND_DB))

/* Reads the given traces in parallel with a progress bar (stderr is a
 * terminal only). Prints one line per failed or truncated file. Returns the
 * worst exit code: EXIT_OK, EXIT_TRUNC or EXIT_INPUT. */
int cli_read_traces(char **paths, int n, const tprof_read_opts *opts, tprof_read_result *out);
/* Same, calling DONE(CTX, I, &out[I]) on the reading thread as each file
 * is read; DONE may analyse the trace and free it (out[I].trace = NULL):
 * the warnings printed after reading do not need it. */
typedef void (*cli_read_done_fn)(void *ctx, size_t i, tprof_read_result *r);
int cli_read_traces_each(char **paths, int n, const tprof_read_opts *opts, tprof_read_result *out,
                         cli_read_done_fn done, void *ctx);
/* Same, PATHS[0..SPLIT) and [SPLIT..N) two sets of ranks (diff's sides):
 * a rank claimed in both is not warned about. */
int cli_read_traces_split(char **paths, int n, int split, const tprof_read_opts *opts, tprof_read_result *out,
                          cli_read_done_fn done, void *ctx);

/* Options every trace command takes. */
typedef struct {
    cli_format fmt;
    int threads;          /* --threads, 0 = one per core */
    tprof_classifier *cls; /* --class-rule / --class-file, NULL = built-in rules */
} cli_common;

#define CLI_COMMON_LONGOPTS                                                                           \
    { "format", required_argument, 0, 'f' }, { "color", required_argument, 0, 'c' },                  \
        { "threads", required_argument, 0, 'j' }, { "class-rule", required_argument, 0, 'r' },       \
        { "class-file", required_argument, 0, 'F' }, { "wide", no_argument, 0, 'W' },                \
        { "all-ranks", no_argument, 0, 'A' }, { "help", no_argument, 0, 'h' }

#define CLI_COMMON_HELP                                                                               \
    "  --format table|csv|json\n"                                                                     \
    "  --class-rule CLASS:GLOB  GPU events matching GLOB are of CLASS (compute,\n"                  \
    "                        communication, memory, other); CPU spans matching GLOB\n"               \
    "                        mark a phase when CLASS is data, forward, backward or\n"               \
    "                        optimizer; ops matching GLOB are of an op category (ops\n"           \
    "                        --by category) when CLASS is gemm, attention,\n"                     \
    "                        convolution, elementwise, reduction or normalization\n"             \
    "                        (communication, memory, other: ops too); repeatable\n"              \
    "  --class-file FILE     rules, one 'CLASS GLOB' per line\n"                                     \
    "  --threads N           threads that parse one large file (0 = one per core, the\n"     \
    "                        default; several files share the cores)\n"                  \
    "  --wide                kernel names in full in tables (by default shortened:\n"          \
    "                        template arguments as <...>, no parameters or return type;\n"   \
    "                        fitted to the terminal's width when printing to one)\n"           \
    "  --all-ranks           with more than 8 traces, tables show the distribution\n"       \
    "                        across ranks and the 3 worst; this prints every rank\n"          \
    "  --color auto|always|never\n"

/* Handles option C when it is a common one: 1 handled, 0 not a common
 * option, -1 a bad value (the message is printed). */
int cli_common_option(int c, const char *arg, cli_common *co);
void cli_common_free(cli_common *co);

/* A trace command: its options and help, what it keeps of each trace, and
 * its result (include/trainprof/result.h). ANALYSE runs on the reading
 * thread as soon as a trace is read (CTX only read there) and the trace is
 * freed at once, so memory holds the compact results, not the traces. They
 * are printed in input order: JSON an array of {label, file, members}, CSV
 * the CSV table's rows after trace,file, the text table every trace's top
 * row in one table after a "trace" column (or PRINT, per trace). ANALYSE
 * and PRINT return 0 or a TPROF_E* code. */
typedef struct {
    void (*help)(FILE *f);
    uint32_t keep;
    unsigned accepts; /* input kinds read besides traces and kernel tables (TPROF_INPUT_BIT masks) */
    const struct option *opts; /* the command's own, ending with a zero entry; may be NULL */
    int (*option)(void *ctx, int c, const char *arg); /* 0, or -1 after printing why */
    const tprof_result_desc *result;
    /* the description when the options choose it (NULL: RESULT) */
    const tprof_result_desc *(*result_for)(void *ctx);
    int (*analyse)(void *ctx, const tprof_trace *t, tprof_result **out);
    /* The text form of one trace's result, when it is not the shared table
     * of top rows (a blank line is printed between traces). */
    int (*print)(void *ctx, const tprof_result *r, const char *label, const char *path);
    /* With several traces, their combination, printed after them (label
     * "all N traces", path NULL); JSON is then {"traces": [...], "combined":
     * {...}}, and CSV ends with its rows after all,"". The traces' results
     * are folded in rank order as they are printed (tprof_fold: one trace's
     * results held at a time), then finished by FINISH_PART (part 0). */
    int combines;
    /* Or one result for the whole run from every trace's (a cross-rank
     * analysis: ANALYSE gives each trace's facts): printed alone, JSON its
     * object, CSV its rows, the text by PRINT with label and path NULL.
     * RESULTS[i * nparts + p] is trace i's part p, in rank order, except
     * for the FOLDED_PARTS: those are folded across the traces as they are
     * read back (their RESULTS entries NULL) and given as FOLDED[p],
     * finished by FINISH_PART, so that the tables that grow with each
     * trace's work (kernels, ops) are never held for every rank. */
    int (*reduce)(void *ctx, const tprof_result *const *results, size_t n, tprof_result *const *folded,
                  tprof_result **out);
    uint32_t folded_parts; /* bit p: part p is folded */
    /* A folded part's finish (sorting, derived columns): 0 or a TPROF_E* code. */
    int (*finish_part)(void *ctx, size_t part, tprof_result *folded);
    /* Results ANALYSE makes of each trace (0: one), into OUT[0..NPARTS);
     * REDUCE then gets N * NPARTS of them, trace by trace. */
    size_t nparts;
    /* The rows shown of each `limited` table (--top N; 0: all); NULL: all. */
    size_t (*limit)(void *ctx);
    /* What an analysis's TPROF_EUSAGE means for this command (exit 2),
     * or from the options (USAGE_ERROR_FOR, when set); the error adds the
     * steps the trace holds. */
    const char *usage_error;
    const char *(*usage_error_for)(void *ctx);
    /* Given the --class-rule / --class-file rules (NULL: none) before the
     * traces are read, for an analysis that classifies by itself. */
    void (*classifier)(void *ctx, const tprof_classifier *cls);
    /* What to keep when the options decide it (NULL: KEEP). */
    uint32_t (*keep_for)(void *ctx);
    /* The part (+ 1; 0: none) that holds each trace's collective instances
     * (tprof_coll_instances), which REDUCE matches across the ranks: under
     * trainprof-mpi they are matched by group where they were read
     * (coll_spread.c), never gathered at the root. */
    size_t coll_part;
} cli_spec;

/* One result for the run as JSON (its object, or its CSV table's rows when
 * json_rows_only) or CSV (its CSV table: header and rows),
 * tables marked `limited` cut to LIMIT rows (0: all); the text form is the
 * top table. Returns 0 or a TPROF_E* code. */
int cli_print_whole(const tprof_result *r, cli_format fmt, size_t limit);

/* PART as a percentage of WHOLE (0 when WHOLE is not positive). */
static inline double cli_pct(int64_t part, int64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Opens a trace's JSON object with its "label" and "file". */
void cli_json_begin(tprof_jw *w, const char *label, const char *path);
/* One input's result as a JSON object named by its file alone:
 * {"file": PATH, members...}. */
void cli_json_file_result(tprof_jw *w, const char *path, const tprof_result *r, size_t limit);

/* trainprof's command line: ARGV[1] the command (dispatch.c). */
int cli_main(int argc, char **argv);
/* Whether command NAME reads its traces through cli_run (so that
 * trainprof-mpi spreads them over its processes). */
int cli_command_distributes(const char *name);

/* Parses the options, reads the traces (in parallel), runs the command. */
int cli_run(int argc, char **argv, const cli_spec *spec, void *ctx);

/* One input's outcome in cli_run (outcome.c): how its read and its
 * analysis went, its rank, and (beside it) its results. Every run passes
 * them through their bytes, so that the printed results are read back
 * from the same bytes whichever process analysed the input. */
typedef struct {
    int read_rc;   /* the read's TPROF_E* code (0, TPROF_ETRUNC: results) */
    int read_exit; /* the exit code the reading process's reads came to (all of its inputs) */
    int job_rc;    /* the analysis's TPROF_E* code */
    int64_t rank;  /* the trace's rank, -1 unknown */
    int64_t claimed; /* the rank its distributedInfo claims, -1 none */
    char *held;    /* after a usage error: the steps the trace holds; NULL */
} cli_outcome;
/* A trace's results (PARTS[0..NP), NULL ones too) as bytes, and back. */
int cli_parts_write(tprof_result *const *parts, size_t np, char **buf, size_t *len);
int cli_parts_read(const char *buf, size_t len, tprof_result **parts, size_t np, char *err, size_t errlen);
/* The outcome O with its results' bytes PARTS (cli_parts_write), and back
 * (an input that was not read has none); cli_outcome_head reads the
 * outcome alone, its parts' bytes from *PARTS_AT (LEN: none). */
int cli_outcome_write(const cli_outcome *o, const char *parts, size_t parts_len, char **buf, size_t *len);
int cli_outcome_read(const char *buf, size_t len, cli_outcome *o, tprof_result **parts, size_t np, char *err,
                     size_t errlen);
int cli_outcome_head(const char *buf, size_t len, cli_outcome *o, size_t *parts_at, char *err, size_t errlen);
void cli_outcome_free(cli_outcome *o, tprof_result **parts, size_t np);

/* cli_run's reading, for a command that compares its inputs by itself
 * (diff): PATHS[0..N) spread over the engine's processes (every one here
 * without an engine), each trace analysed by SPEC->analyse into
 * SPEC->nparts results on the thread that read it, and at the root every
 * input's outcome in OC[i] (free with cli_outcome_free) and its results'
 * bytes in *STORE (read back with cli_store_get and cli_parts_read), which
 * the caller frees; NULL on the other processes, and when some outcome is
 * missing (said; nothing to show). Inputs [0, SPLIT) and
 * [SPLIT, N) are two groups (a run's ranks each): the ranks several files
 * claim are said per group, and under trainprof-mpi with SPEC->coll_part
 * each group's collectives are matched by group of processes into
 * SPREAD[g] (the root's, for cli_coll_spread_join onto the instances of
 * input cli_coll_spread_first; free with cli_coll_spread_free), NULL
 * otherwise. Every process calls it. 0 or an exit code (the reads' worst
 * at the root). */
typedef struct cli_store cli_store;
typedef struct cli_coll_matching cli_coll_matching;
int cli_analyse_inputs(const cli_spec *spec, void *ctx, char **paths, int n, int split, const tprof_read_opts *ro,
                       cli_outcome *oc, cli_store **store, cli_coll_matching *spread[2]);

/* The worse of two exit codes: a usage error, then unreadable input, then
 * a truncated one, then success. */
int cli_worse_exit(int a, int b);

/* The inputs' results as bytes until they are printed (store.c): in memory
 * up to a bound, then in an unlinked temporary file, so that printing many
 * ranks holds one rank's results at a time. */
cli_store *cli_store_new(size_t n); /* for inputs 0..N); NULL: out of memory */
/* Input I's bytes B (malloc'ed, the store's from now on; replacing any
 * it had); any thread, one call per input at a time. 0. */
int cli_store_put(cli_store *s, size_t i, char *b, size_t l);
int cli_store_has(const cli_store *s, size_t i);
/* A copy of input I's bytes (malloc'ed; an input never put: none, 0
 * bytes): 0, TPROF_ENOMEM or TPROF_EIO. */
int cli_store_get(cli_store *s, size_t i, char **b, size_t *l);
void cli_store_free(cli_store *s);

/* Where a trace command's inputs are analysed: by default this process
 * analyses every one; trainprof-mpi spreads them over its processes. */
typedef struct {
    void *ctx;
    /* Which of the N inputs (SIZES[i] bytes, -1 unknown) this process
     * analyses: MINE[i] = 1. 0, or an exit code after saying why. */
    int (*place)(void *ctx, char *const *paths, const int64_t *sizes, size_t n, uint8_t *mine);
    /* Every input's outcome to the root: OUTBOX holds this process's
     * inputs' (cli_store_has; read one at a time with cli_store_get); the
     * root calls TAKE(ARG, i, bytes, length) on every input's (its own and
     * those it receives, each once, in any order). 0, or an exit code after
     * saying why. */
    int (*gather)(void *ctx, cli_store *outbox, size_t n,
                  int (*take)(void *arg, size_t i, const char *b, size_t l), void *arg);
    /* The root's exit code RC, the same on every process. */
    int (*agree)(void *ctx, int rc);
    /* When set, the inputs from ARGS[0..N) instead of cli_expand_inputs
     * (trainprof-mpi --local-files: the union of every process's files).
     * 0, or an exit code after saying why. */
    int (*inputs)(void *ctx, char *const *args, int n, tprof_inputs *out);
    int root; /* this process prints the results */
    /* merge (tprof_merge_spread): a process's stream to the root (LEN 0: its
     * end), the root's read of PEER's (0 at its end); PEERS: the processes
     * besides the root */
    int (*send)(void *ctx, const void *data, size_t len);
    long (*recv)(void *ctx, int peer, void *buf, size_t cap);
    /* every process's bytes to every process, in process order (merge's plan) */
    int (*share)(void *ctx, const void *data, size_t len, char **all, size_t *all_len);
    int peers;
    /* every process's TO[p] (TO_LEN[p] bytes) to process p; what each
     * process q sent this one into FROM[q] (malloc'ed), FROM_LEN[q]. Every
     * process calls it. 0, or -1 (this process's share not exchanged). */
    int (*exchange)(void *ctx, char *const *to, const size_t *to_len, char **from, size_t *from_len);
    int procs, me; /* the processes, and this one's number (the root's is 0) */
} cli_engine;

/* The collectives' matching spread by group over E's processes
 * (coll_spread.c): the instances of part PART of this process's outcomes
 * of inputs [LO, HI) of the N (those OUTBOX has) matched by the owners of
 * their groups, and those outcomes rewritten without their rows. Every
 * process calls it; the root keeps *OUT for cli_coll_spread_join. 0, or
 * an exit code (the root's: some process failed). */
typedef struct cli_coll_matching cli_coll_matching;
int cli_coll_spread(const cli_engine *e, size_t np, size_t part, cli_store *outbox, size_t lo, size_t hi, size_t n,
                    cli_coll_matching **out);
/* The input whose instances carry the outcome, and the join onto them. */
size_t cli_coll_spread_first(const cli_coll_matching *s);
int cli_coll_spread_join(const cli_coll_matching *s, tprof_result *carrier);
void cli_coll_spread_free(cli_coll_matching *s);
/* The worst of every process's RC (cli_worse_exit; this one's alone
 * without an engine): where a command may fail on some processes before
 * the exchanges of cli_run, so that all of them go on, or none. Every
 * process calls it; the root says when another failed where it did not. */
int cli_agree_worst(int rc);
/* E for the commands run after (NULL: this process alone). */
void cli_set_engine(const cli_engine *e);
const cli_engine *cli_get_engine(void);
/* Which of the N inputs this process reads: MINE[i] = 1 (every one without
 * an engine; the engine balances by the files' sizes). 0 or an exit code. */
int cli_place_inputs(char *const *paths, size_t n, uint8_t *mine);

/* Class rules from --class-rule CLASS:GLOB and --class-file FILE. */
int cli_add_class_rule(tprof_classifier **c, const char *spec);
int cli_add_class_file(tprof_classifier **c, const char *path);

/* Commands (one cmd_<name>.c each). */
int cmd_info(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_temporal(int argc, char **argv);
int cmd_steps(int argc, char **argv);
int cmd_idle(int argc, char **argv);
int cmd_comm(int argc, char **argv);
int cmd_launch(int argc, char **argv);
int cmd_ranks(int argc, char **argv);
int cmd_collectives(int argc, char **argv);
int cmd_critical_path(int argc, char **argv);
int cmd_advice(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_flops(int argc, char **argv);
int cmd_mfu(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_mem(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* The findings of an "advice" result as a list, each with its remedy; the
 * findings of one rule and remedy on several ranks as one line naming them
 * among the run's ALL_RANKS[0..NALL) ("ranks 0-63 except 17"), with the
 * evidence of the rank where its number is highest. */
int cli_print_findings(const tprof_rows *findings, const int64_t *all_ranks, size_t nall);


/* The model options of flops and mfu (model_args.c). */
enum { CLI_OPT_CONFIG = 1000, CLI_OPT_SEQLENS, CLI_OPT_IMAGES, CLI_OPT_FREEZE_VIT, CLI_OPT_LORA };
#define CLI_MODEL_LONGOPTS                                                                            \
    { "config", required_argument, 0, CLI_OPT_CONFIG }, { "seqlens", required_argument, 0, CLI_OPT_SEQLENS }, \
        { "images", required_argument, 0, CLI_OPT_IMAGES }, { "freeze-vit", no_argument, 0, CLI_OPT_FREEZE_VIT }, \
        { "lora", required_argument, 0, CLI_OPT_LORA }
#define CLI_MODEL_HELP                                                                                \
    "  --config FILE         the model's Hugging Face config.json (required)\n"                       \
    "  --seqlens LIST        tokens of each sequence in one step on one rank, all\n"                 \
    "                        micro-batches: 4096,4096 or 4096x2 (required)\n"                       \
    "  --images LIST         pre-merge patches of each image or video frame (h*w per\n"              \
    "                        frame of a grid_thw row) for the vision tower\n"                        \
    "  --freeze-vit          the vision tower is frozen (forward only)\n"                            \
    "  --lora SPEC           LoRA fine-tuning: r=R[,targets=M+M...][,params=P+P...]\n"               \
    "                        [,moe_mode=shared|independent][,bias=none|all|lora_only], e.g.\n"     \
    "                        r=16,targets=q_proj+k_proj+v_proj+o_proj (docs/METRICS.md)\n"

typedef struct {
    const char *config;
    int64_t *seqlens, *images;
    size_t nseqs, nimages;
    int freeze_vit;
    int has_lora;
    tprof_lora lora;      /* --lora; its strings point into lora_buf */
    char *lora_buf;
    const char *lora_names[64];
    tprof_model *model;
    tprof_flops flops; /* of one step, after cli_model_load */
} cli_model_args;

/* 1 handled, 0 not a model option, -1 a bad value (printed). */
int cli_model_option(int c, const char *arg, cli_model_args *a);
/* Loads the config and estimates one step; prints why not. Returns an exit code. */
int cli_model_load(cli_model_args *a);
void cli_model_free(cli_model_args *a);

#endif
