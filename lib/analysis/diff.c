/* diff: two runs side by side, on top of the per-trace analyses (steps,
 * temporal, comm, kernels). Every figure is normalised per ProfilerStep so
 * runs of different lengths compare (docs/METRICS.md, "trainprof diff"). */
#include "trainprof/diff.h"
#include "critical_path.h"
#include "trainprof/error.h"
#include "../util/grow.h"
#include "../util/i64map.h"
#include "../util/strtab.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double tprof_diff_pct(double base, double cand)
{
    if (base == 0) return cand == 0 ? 0.0 : cand > 0 ? INFINITY : -INFINITY;
    return (cand - base) / fabs(base) * 100.0;
}

/* ---- kernel names ---- */

static int is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Appends to a bounded buffer while counting the full length. */
typedef struct {
    char *buf;
    size_t len, n;
} sink;

static void put(sink *s, const char *p, size_t k)
{
    for (size_t i = 0; i < k; i++, s->n++)
        if (s->n + 1 < s->len) s->buf[s->n] = p[i];
}

/* Skips a balanced group opened at NAME[i] (OPEN) and returns the index
 * after its closing CLOSE, or the end of the name when it is unbalanced. */
static size_t skip_group(const char *name, size_t i, char open, char close)
{
    int depth = 0;
    for (; name[i]; i++) {
        if (name[i] == open) depth++;
        else if (name[i] == close && --depth == 0) return i + 1;
    }
    return i;
}

/* A leading architecture word: the kernel libraries name one kernel per GPU
 * generation, and those should meet across hardware. */
static size_t arch_prefix(const char *s)
{
    static const char *const words[] = { "maxwell_", "pascal_", "volta_", "turing_", "ampere_", "ada_", "hopper_",
                                         "blackwell_" };
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (!strncmp(s, words[i], strlen(words[i]))) return strlen(words[i]);
    if (s[0] == 's' && s[1] == 'm' && is_digit(s[2])) {
        size_t k = 2;
        while (is_digit(s[k])) k++;
        if (s[k] == '_') return k + 1;
    }
    return 0;
}

size_t tprof_kernel_name_normalize(const char *name, char *buf, size_t len)
{
    /* pass 1: "void " and the bracketed groups (into a temporary copy) */
    size_t n = strlen(name);
    char *tmp = malloc(n + 1);
    sink out = { buf, len, 0 };
    if (!tmp) { /* no memory: the name as it is */
        put(&out, name, n);
        if (len) buf[out.n < len ? out.n : len - 1] = 0;
        return out.n;
    }
    size_t t = 0, i = 0;
    if (!strncmp(name, "void ", 5)) i = 5;
    while (name[i]) {
        char c = name[i];
        if (c == '<') {
            tmp[t++] = '<';
            tmp[t++] = '>';
            i = skip_group(name, i, '<', '>');
        } else if (c == '(' && t > 0 && (is_alnum(tmp[t - 1]) || tmp[t - 1] == '_' || tmp[t - 1] == '>' ||
                                         tmp[t - 1] == ')')) {
            /* an argument list: right after a name, a template list or another list */
            tmp[t++] = '(';
            tmp[t++] = ')';
            i = skip_group(name, i, '(', ')');
        } else
            tmp[t++] = name[i++];
    }
    while (t > 0 && tmp[t - 1] == ' ') t--;
    tmp[t] = 0;

    /* pass 2: architecture word, tile shapes, alignments */
    i = arch_prefix(tmp);
    if (i) put(&out, "{arch}_", 7);
    while (i < t) {
        int boundary = i == 0 || !is_alnum(tmp[i - 1]);
        if (boundary && is_digit(tmp[i])) {
            /* digits (x digits)+, not followed by a letter or digit */
            size_t k = i, groups = 0;
            while (is_digit(tmp[k])) k++;
            while (tmp[k] == 'x' && is_digit(tmp[k + 1])) {
                k++;
                while (is_digit(tmp[k])) k++;
                groups++;
            }
            if (groups && !is_alnum(tmp[k])) {
                put(&out, "{tile}", 6);
                i = k;
                continue;
            }
        }
        if (boundary && !strncmp(tmp + i, "align", 5) && is_digit(tmp[i + 5])) {
            size_t k = i + 5;
            while (is_digit(tmp[k])) k++;
            if (!is_alnum(tmp[k])) {
                put(&out, "align{n}", 8);
                i = k;
                continue;
            }
        }
        /* copy up to the next place a rule could start */
        size_t k = i + 1;
        while (k < t && !(is_digit(tmp[k]) || tmp[k] == 'a')) k++;
        put(&out, tmp + i, k - i);
        i = k;
    }
    free(tmp);
    if (len) buf[out.n < len ? out.n : len - 1] = 0;
    return out.n;
}

/* ---- the diff ---- */

typedef struct {
    tprof_strtab strs; /* normalised and raw names */
} dpriv;

void tprof_diff_free(tprof_diff_result *r)
{
    if (!r) return;
    dpriv *p = r->priv;
    if (p) {
        tprof_strtab_free(&p->strs);
        free(p);
    }
    for (size_t i = 0; i < r->ncomm; i++) free((char *)r->comm[i].type);
    free(r->comm);
    free(r->kernels);
    free(r->regressions);
    free(r->improvements);
    free(r->gone);
    free(r->added);
    free(r);
}

/* What diff keeps of one trace, as a result (tprof_diff_part_desc) so that
 * it travels as bytes like every per-rank result: its figures per step, its
 * collective types per step, its kernel rows, its ops by shape and modules
 * by path (direct time and launches), its critical path per sampled step,
 * and what the output says of the file. Its collective instances
 * (tprof_coll_instances) are the second result. */
enum {
    PT_METRIC = 0, /* TPROF_DIFF_METRICS columns, in tprof_diff_metric order */
    PT_STEPS = PT_METRIC + TPROF_DIFF_METRICS,
    PT_PHASES,
    PT_HAS_PATH,
    PT_PATH, /* 2 + TPROF_CPB_COUNT columns: the path, the step, each bound */
    PT_RANK = PT_PATH + 2 + TPROF_CPB_COUNT,
    PT_TRUNCATED,
    PT_FILE,
    PT_NCOLS
};
#define PT_REAL(NAME, DOC) TPROF_COL(NAME, TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, DOC)
static const tprof_col_desc part_top_cols[PT_NCOLS] = {
    [PT_METRIC + TPROF_DIFF_STEP_TIME] = PT_REAL("step_time", "ns per step: the mean ProfilerStep"),
    [PT_METRIC + TPROF_DIFF_KERNEL_TIME] = PT_REAL("kernel_time", "ns per step: GPU event durations summed"),
    [PT_METRIC + TPROF_DIFF_GPU_BUSY] = PT_REAL("gpu_busy", "ns per step"),
    [PT_METRIC + TPROF_DIFF_GPU_IDLE] = PT_REAL("gpu_idle", "ns per step"),
    [PT_METRIC + TPROF_DIFF_COMPUTE] = PT_REAL("compute", "ns per step"),
    [PT_METRIC + TPROF_DIFF_NON_COMPUTE] = PT_REAL("non_compute", "ns per step"),
    [PT_METRIC + TPROF_DIFF_COMM] = PT_REAL("comm", "ns per step"),
    [PT_METRIC + TPROF_DIFF_COMM_EXPOSED] = PT_REAL("comm_exposed", "ns per step"),
    [PT_METRIC + TPROF_DIFF_CPU_DATA] = PT_REAL("cpu_data", "ns per step"),
    [PT_METRIC + TPROF_DIFF_CPU_FORWARD] = PT_REAL("cpu_forward", "ns per step"),
    [PT_METRIC + TPROF_DIFF_CPU_BACKWARD] = PT_REAL("cpu_backward", "ns per step"),
    [PT_METRIC + TPROF_DIFF_CPU_OPTIMIZER] = PT_REAL("cpu_optimizer", "ns per step"),
    [PT_METRIC + TPROF_DIFF_CPU_OTHER] = PT_REAL("cpu_other", "ns per step"),
    [PT_METRIC + TPROF_DIFF_GPU_DATA] = PT_REAL("gpu_data", "ns per step"),
    [PT_METRIC + TPROF_DIFF_GPU_FORWARD] = PT_REAL("gpu_forward", "ns per step"),
    [PT_METRIC + TPROF_DIFF_GPU_BACKWARD] = PT_REAL("gpu_backward", "ns per step"),
    [PT_METRIC + TPROF_DIFF_GPU_OPTIMIZER] = PT_REAL("gpu_optimizer", "ns per step"),
    [PT_METRIC + TPROF_DIFF_GPU_OTHER] = PT_REAL("gpu_other", "ns per step"),
    [PT_STEPS] = TPROF_COL("steps", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "ProfilerSteps, 0 when none"),
    [PT_PHASES] = TPROF_COL("phases_found", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, NULL, "phase markers found"),
    [PT_HAS_PATH] = TPROF_COL("has_path", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, NULL,
                              "a critical path was found over the sampled steps"),
    [PT_PATH + 0] = PT_REAL("path_ns", "the critical path per sampled step"),
    [PT_PATH + 1] = PT_REAL("span_ns", "the sampled step's span"),
    [PT_PATH + 2] = PT_REAL("cpu_op_ns", "the path's CPU-op time per step"),
    [PT_PATH + 3] = PT_REAL("runtime_ns", "its runtime-call time per step"),
    [PT_PATH + 4] = PT_REAL("launch_ns", "its launch delays per step"),
    [PT_PATH + 5] = PT_REAL("kernel_gap_ns", "its gaps between kernels per step"),
    [PT_PATH + 6] = PT_REAL("compute_ns", "its compute kernels per step"),
    [PT_PATH + 7] = PT_REAL("memory_ns", "its memory kernels per step"),
    [PT_PATH + 8] = PT_REAL("comm_ns", "its communication kernels per step"),
    [PT_RANK] = TPROF_COL("rank", TPROF_COL_RANK, TPROF_COMBINE_FIRST, NULL, "the trace's rank, -1 unknown"),
    [PT_TRUNCATED] = TPROF_COL("truncated", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, NULL, "the file ended early"),
    [PT_FILE] = TPROF_COL("file", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the trace's path"),
};
_Static_assert(PT_PATH + 8 + 1 == PT_RANK, "one column per critical-path bound");

/* The metrics' names are their columns' in the part. */
const char *tprof_diff_metric_name(tprof_diff_metric m)
{
    return (unsigned)m < TPROF_DIFF_METRICS ? part_top_cols[PT_METRIC + m].name : NULL;
}

int tprof_diff_metric_parse(const char *s, tprof_diff_metric *out)
{
    for (int i = 0; i < TPROF_DIFF_METRICS; i++)
        if (!strcmp(s, part_top_cols[PT_METRIC + i].name)) {
            *out = (tprof_diff_metric)i;
            return 0;
        }
    return -1;
}
enum { PC_TYPE, PC_TIME, PC_EXPOSED, PC_NCOLS };
static const tprof_col_desc part_comm_cols[PC_NCOLS] = {
    [PC_TYPE] = TPROF_COL("type", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the collective type"),
    [PC_TIME] = PT_REAL("time_ns", "its kernels' time per step"),
    [PC_EXPOSED] = PT_REAL("exposed_ns", "of that, the time no compute ran, per step"),
};
enum { PK_NAME, PK_CLASS, PK_COUNT, PK_TOTAL, PK_NCOLS };
static const tprof_col_desc part_kernel_cols[PK_NCOLS] = {
    [PK_NAME] = TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the kernel's name"),
    [PK_CLASS] = TPROF_COL("class", TPROF_COL_INT, TPROF_COMBINE_FIRST, NULL, "its tprof_class"),
    [PK_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "its launches"),
    [PK_TOTAL] = TPROF_COL("total_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "its time"),
};
/* ops by shape: the key's three texts; modules: the path, then two empty */
enum { PO_A, PO_B, PO_C, PO_DIRECT, PO_COUNT, PO_NCOLS };
static const tprof_col_desc part_op_cols[PO_NCOLS] = {
    [PO_A] = TPROF_COL("key", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the op's name, or the module's path"),
    [PO_B] = TPROF_COL("input_dims", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the op's Input Dims (\"\" for a module)"),
    [PO_C] = TPROF_COL("input_types", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the op's Input type (\"\" for a module)"),
    [PO_DIRECT] = TPROF_COL("direct_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL, "direct kernel time"),
    [PO_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "instances"),
};
enum { PT_TB_COMM, PT_TB_KERNELS, PT_TB_OPS, PT_TB_MODULES, PT_TB_COUNT };
static const tprof_table_desc part_top = { .name = "", .cols = part_top_cols, .ncols = PT_NCOLS };
static const tprof_table_desc part_comm = { .name = "comm", .doc = "collective types", .cols = part_comm_cols,
                                            .ncols = PC_NCOLS };
static const tprof_table_desc part_kernels = { .name = "kernels", .doc = "kernels by name", .cols = part_kernel_cols,
                                               .ncols = PK_NCOLS };
static const tprof_table_desc part_ops = { .name = "ops", .doc = "ops by name and input shapes",
                                           .cols = part_op_cols, .ncols = PO_NCOLS };
static const tprof_table_desc part_modules = { .name = "modules", .doc = "nn.Modules by path",
                                               .cols = part_op_cols, .ncols = PO_NCOLS };
static const tprof_table_desc *const part_tables[PT_TB_COUNT] = {
    [PT_TB_COMM] = &part_comm, [PT_TB_KERNELS] = &part_kernels, [PT_TB_OPS] = &part_ops,
    [PT_TB_MODULES] = &part_modules,
};
const tprof_result_desc tprof_diff_part_desc = {
    .name = "diff_part", .version = 1, .top = &part_top, .tables = part_tables, .ntables = PT_TB_COUNT,
    .internal = 1,
    .doc = "What diff keeps of one trace (tprof_diff_part_results): its figures per step, collective types, "
           "kernels, ops and modules, critical path and file; its collective instances travel beside it.",
};

/* A string cell's text; "" when null. */
static const char *cell_str(const tprof_rows *t, size_t row, size_t col)
{
    const tprof_cell *c = tprof_rows_cell(t, row, col);
    return c->null || !c->v.s ? "" : c->v.s;
}

struct tprof_diff_part {
    tprof_result *facts; /* tprof_diff_part_desc: what follows points into it */
    double metric[TPROF_DIFF_METRICS]; /* per step */
    size_t steps;                      /* ProfilerSteps, 0 when none */
    int phases_found;
    const tprof_rows *comm, *kernels, *ops[2]; /* ops by shape, modules by path */
    tprof_result *coll; /* its collective instances (tprof_coll_instances), matched across the side's ranks */
    double cp[2 + TPROF_CPB_COUNT]; /* its critical path per sampled step; has_path 0 when it has none */
    int has_path;
    const char *path;
    int64_t rank;
    int truncated;
};

void tprof_diff_part_free(tprof_diff_part *p)
{
    if (!p) return;
    tprof_result_free(p->facts);
    tprof_result_free(p->coll);
    free(p);
}

static const char *const path_rows[2 + TPROF_CPB_COUNT] = { "path", "step", "cpu_op", "runtime", "launch",
                                                            "kernel_gap", "compute", "memory", "comm" };

/* The trace's critical path over the sampled steps, per step, into the top row. */
static int part_path(const tprof_trace *t, tprof_rows *top)
{
    tprof_cp_opts o = { .step_first = -1, .step_last = -1, .instance_first = -1, .instance_last = -1,
                        .max_windows = TPROF_ADVICE_PATH_SAMPLE };
    tprof_result *r = NULL;
    int rc = tprof_critical_path(t, &o, &r);
    if (rc == TPROF_ENOMEM) return rc;
    const tprof_rows *cp = r ? tprof_result_top_c(r) : NULL;
    int64_t windows = cp ? tprof_rows_int(cp, 0, "windows") : 0;
    int has = windows > 0 && tprof_rows_int(cp, 0, "path_ns") > 0;
    tprof_rows_set_i(top, 0, PT_HAS_PATH, has);
    for (size_t k = 0; k < 2 + TPROF_CPB_COUNT; k++)
        tprof_rows_set_d(top, 0, PT_PATH + k,
                         has ? (double)tprof_rows_int(cp, 0, part_top_cols[PT_PATH + k].name) / (double)windows : 0.0);
    tprof_result_free(r);
    return 0;
}

/* The rows of R (ops by shape, or by module when MODULE) into T. */
static int part_ops_of(const tprof_result *r, int module, tprof_rows *t)
{
    const tprof_rows *rows = tprof_result_table_c(r, 0);
    static const char *const cols[2][3] = { { "op", "input_dims", "input_types" }, { "module", NULL, NULL } };
    for (size_t i = 0, n = tprof_rows_count(rows); i < n; i++) {
        long k = tprof_rows_add(t);
        if (k < 0) return TPROF_ENOMEM;
        for (int c = 0; c < 3; c++)
            if (tprof_rows_set_s(t, (size_t)k, PO_A + (size_t)c,
                                 cols[module][c] ? tprof_rows_str(rows, i, cols[module][c]) : ""))
                return TPROF_ENOMEM;
        tprof_rows_set_i(t, (size_t)k, PO_DIRECT, tprof_rows_int(rows, i, "direct_ns"));
        tprof_rows_set_i(t, (size_t)k, PO_COUNT, tprof_rows_int(rows, i, "count"));
    }
    return 0;
}

static int part_kernels_of(const tprof_kernels_result *kr, tprof_rows *t)
{
    for (size_t j = 0; j < kr->nrows; j++) {
        const tprof_kernel_row *row = &kr->rows[j];
        long k = tprof_rows_add(t);
        if (k < 0 || tprof_rows_set_s(t, (size_t)k, PK_NAME, row->key)) return TPROF_ENOMEM;
        tprof_rows_set_i(t, (size_t)k, PK_CLASS, (int64_t)row->klass);
        tprof_rows_set_i(t, (size_t)k, PK_COUNT, (int64_t)row->count);
        tprof_rows_set_i(t, (size_t)k, PK_TOTAL, row->total_ns);
    }
    return 0;
}

int tprof_diff_part_results(const tprof_trace *t, tprof_result *out[TPROF_DIFF_PART_RESULTS])
{
    out[0] = out[1] = NULL;
    const tprof_trace_meta *m = tprof_trace_meta_get(t);
    tprof_result *facts = tprof_result_new(&tprof_diff_part_desc);
    tprof_rows *top = facts ? tprof_result_top(facts) : NULL;
    if (!top || tprof_rows_set_s(top, 0, PT_FILE, m->path ? m->path : "")) { /* the top table has its row */
        tprof_result_free(facts);
        return TPROF_ENOMEM;
    }
    tprof_rows_set_i(top, 0, PT_RANK, tprof_trace_rank(t));
    tprof_rows_set_i(top, 0, PT_TRUNCATED, m->truncated != 0);
    tprof_steps_result *st = NULL;
    tprof_comm_result *cm = NULL;
    tprof_kernels_result *kr = NULL;
    tprof_temporal_result tp;
    /* per-step figures: every step's work, divided by every step */
    tprof_temporal_opts to = { .keep_last_step = 1, .skip_hta = 1 };
    int rc = tprof_steps(t, &st);
    if (!rc) rc = tprof_comm(t, &cm);
    if (!rc) rc = tprof_temporal(t, &to, &tp);
    if (!rc) rc = tprof_kernels(t, NULL, &kr);
    if (!rc) rc = part_kernels_of(kr, tprof_result_table(facts, PT_TB_KERNELS));
    tprof_kernels_free(kr);
    if (!rc) rc = tprof_coll_instances(t, &out[1]);
    if (!rc) rc = part_path(t, top);
    for (int which = 0; !rc && which < 2; which++) {
        tprof_ops_opts oo = { .by = which ? TPROF_OPS_BY_MODULE : TPROF_OPS_BY_SHAPE, .step_first = -1,
                              .step_last = -1 };
        tprof_result *ops = NULL;
        rc = tprof_ops(t, &oo, &ops);
        if (!rc) rc = part_ops_of(ops, which, tprof_result_table(facts, which ? PT_TB_MODULES : PT_TB_OPS));
        tprof_result_free(ops);
    }
    if (!rc) {
        double steps = st->nsteps ? (double)st->nsteps : 1.0, v[TPROF_DIFF_METRICS];
        if (st->nsteps)
            v[TPROF_DIFF_STEP_TIME] = (double)st->mean_ns;
        else /* one step: the whole trace */
            v[TPROF_DIFF_STEP_TIME] = m->ts_max > m->ts_min ? (double)tprof_span_ns(m->ts_min, m->ts_max) : 0.0;
        int64_t ktotal = 0;
        const tprof_event *ev = tprof_trace_events(t);
        for (size_t e = 0, ne = tprof_trace_nevents(t); e < ne; e++)
            if (ev[e].kind == TPROF_KIND_GPU) ktotal = tprof_sat_add(ktotal, ev[e].dur);
        v[TPROF_DIFF_KERNEL_TIME] = (double)ktotal / steps;
        v[TPROF_DIFF_GPU_BUSY] = (double)tp.busy_ns / steps;
        v[TPROF_DIFF_GPU_IDLE] = (double)tp.idle_ns / steps;
        v[TPROF_DIFF_COMPUTE] = (double)tp.compute_ns / steps;
        v[TPROF_DIFF_NON_COMPUTE] = (double)tp.non_compute_ns / steps;
        v[TPROF_DIFF_COMM] = (double)cm->comm_ns / steps;
        v[TPROF_DIFF_COMM_EXPOSED] = (double)cm->exposed_ns / steps;
        for (int ph = 0; ph < TPROF_PHASE_COUNT; ph++) {
            v[TPROF_DIFF_CPU_DATA + ph] = (double)st->phase_cpu_ns[ph] / steps;
            v[TPROF_DIFF_GPU_DATA + ph] = (double)st->phase_gpu_ns[ph] / steps;
        }
        for (int k = 0; k < TPROF_DIFF_METRICS; k++) tprof_rows_set_d(top, 0, PT_METRIC + (size_t)k, v[k]);
        tprof_rows_set_i(top, 0, PT_STEPS, (int64_t)st->nsteps);
        tprof_rows_set_i(top, 0, PT_PHASES, st->phases_found != 0);
        tprof_rows *comm = tprof_result_table(facts, PT_TB_COMM);
        for (size_t y = 0; !rc && y < cm->ntypes; y++) {
            long k = tprof_rows_add(comm);
            if (k < 0 || tprof_rows_set_s(comm, (size_t)k, PC_TYPE, cm->types[y].type)) {
                rc = TPROF_ENOMEM;
                break;
            }
            tprof_rows_set_d(comm, (size_t)k, PC_TIME, (double)cm->types[y].time_ns / steps);
            tprof_rows_set_d(comm, (size_t)k, PC_EXPOSED, (double)cm->types[y].exposed_ns / steps);
        }
    }
    tprof_steps_free(st);
    tprof_comm_free(cm);
    if (rc) {
        tprof_result_free(facts);
        tprof_result_free(out[1]);
        out[1] = NULL;
        return rc;
    }
    out[0] = facts;
    return 0;
}

int tprof_diff_part_from(tprof_result *in[TPROF_DIFF_PART_RESULTS], tprof_diff_part **out)
{
    *out = NULL;
    if (!in[0] || !in[1] || tprof_result_desc_of(in[0]) != &tprof_diff_part_desc ||
        tprof_result_desc_of(in[1]) != &tprof_coll_instances_desc ||
        tprof_rows_count(tprof_result_top_c(in[0])) != 1)
        return TPROF_EFORMAT;
    tprof_diff_part *p = calloc(1, sizeof *p);
    if (!p) return TPROF_ENOMEM;
    p->facts = in[0];
    p->coll = in[1];
    in[0] = in[1] = NULL;
    const tprof_rows *top = tprof_result_top_c(p->facts);
    for (size_t k = 0; k < TPROF_DIFF_METRICS; k++) p->metric[k] = tprof_rows_cell(top, 0, PT_METRIC + k)->v.d;
    int64_t steps = tprof_rows_cell(top, 0, PT_STEPS)->v.i;
    p->steps = steps > 0 ? (size_t)steps : 0;
    p->phases_found = tprof_rows_cell(top, 0, PT_PHASES)->v.i != 0;
    p->has_path = tprof_rows_cell(top, 0, PT_HAS_PATH)->v.i != 0;
    for (size_t k = 0; k < 2 + TPROF_CPB_COUNT; k++) p->cp[k] = tprof_rows_cell(top, 0, PT_PATH + k)->v.d;
    p->rank = tprof_rows_cell(top, 0, PT_RANK)->v.i;
    p->truncated = tprof_rows_cell(top, 0, PT_TRUNCATED)->v.i != 0;
    p->path = cell_str(top, 0, PT_FILE);
    p->comm = tprof_result_table_c(p->facts, PT_TB_COMM);
    p->kernels = tprof_result_table_c(p->facts, PT_TB_KERNELS);
    p->ops[0] = tprof_result_table_c(p->facts, PT_TB_OPS);
    p->ops[1] = tprof_result_table_c(p->facts, PT_TB_MODULES);
    *out = p;
    return 0;
}

int tprof_diff_part_of(const tprof_trace *t, tprof_diff_part **out)
{
    *out = NULL;
    tprof_result *r[TPROF_DIFF_PART_RESULTS];
    int rc = tprof_diff_part_results(t, r);
    if (!rc) rc = tprof_diff_part_from(r, out);
    tprof_result_free(r[0]);
    tprof_result_free(r[1]);
    return rc;
}

/* One trace's figures into its side's S (already per step, averaged over
 * the side's N traces as they come); collective types merged by name. */
static int add_metrics(tprof_diff_side *s, size_t n, tprof_diff_comm **comm, size_t *ncomm, size_t which,
                       const tprof_diff_part *p)
{
    s->traces = n;
    for (int k = 0; k < TPROF_DIFF_METRICS; k++) s->metric[k] += p->metric[k] / (double)n;
    s->steps += p->steps ? p->steps : 1;
    s->traces_no_steps += p->steps == 0;
    s->phases_found |= p->phases_found;
    for (size_t y = 0, ny = tprof_rows_count(p->comm); y < ny; y++) {
        const char *type = cell_str(p->comm, y, PC_TYPE);
        size_t k = 0;
        while (k < *ncomm && strcmp((*comm)[k].type, type)) k++;
        if (k == *ncomm) {
            tprof_diff_comm *nc = realloc(*comm, (*ncomm + 1) * sizeof *nc);
            char *own = strdup(type); /* the result outlives the parts */
            if (nc) *comm = nc;
            if (!nc || !own) {
                free(own);
                return TPROF_ENOMEM;
            }
            nc[k] = (tprof_diff_comm){ .type = own };
            (*ncomm)++;
        }
        (*comm)[k].time_ns[which] += tprof_rows_cell(p->comm, y, PC_TIME)->v.d / (double)n;
        (*comm)[k].exposed_ns[which] += tprof_rows_cell(p->comm, y, PC_EXPOSED)->v.d / (double)n;
    }
    return 0;
}

/* A raw name's totals on one side, to find each kernel's largest variant. */
typedef struct {
    uint32_t raw;  /* string id */
    size_t kernel; /* index in kernels */
    int side;
    tprof_class klass;
    int64_t total_ns;
} variant;

typedef struct {
    tprof_diff_result *r;
    dpriv *p;
    tprof_i64map by_norm;    /* normalised id -> kernel index */
    tprof_i64map by_variant; /* raw id x side -> variant index */
    variant *vars;
    size_t nvars, capvars, capk;
    char *buf;
    size_t buflen;
} kbuild;

static int add_row(kbuild *b, const tprof_kernel_row *row, size_t side)
{
    size_t need = tprof_kernel_name_normalize(row->key, b->buf, b->buflen) + 1;
    if (need > b->buflen) {
        char *nb = realloc(b->buf, need);
        if (!nb) return TPROF_ENOMEM;
        b->buf = nb;
        b->buflen = need;
        tprof_kernel_name_normalize(row->key, b->buf, b->buflen);
    }
    uint32_t nid = tprof_strtab_intern(&b->p->strs, b->buf, need - 1);
    uint32_t rid = tprof_strtab_intern(&b->p->strs, row->key, strlen(row->key));
    if (nid == UINT32_MAX || rid == UINT32_MAX) return TPROF_ENOMEM;
    tprof_diff_result *r = b->r;
    int64_t k;
    if (!tprof_i64map_get(&b->by_norm, nid, &k)) {
        if (r->nkernels == b->capk) {
            size_t nc = b->capk ? b->capk * 2 : 128;
            tprof_diff_kernel *nk = realloc(r->kernels, nc * sizeof *nk);
            if (!nk) return TPROF_ENOMEM;
            r->kernels = nk;
            b->capk = nc;
        }
        k = (int64_t)r->nkernels;
        /* name holds the string id until the strings stop moving */
        r->kernels[r->nkernels++] = (tprof_diff_kernel){ .name = (const char *)(uintptr_t)nid };
        if (tprof_i64map_put(&b->by_norm, nid, k)) return TPROF_ENOMEM;
    }
    tprof_diff_kernel *x = &r->kernels[k];
    x->count[side] += row->count;
    x->total_ns[side] = tprof_sat_add(x->total_ns[side], row->total_ns);
    int64_t v;
    if (!tprof_i64map_get(&b->by_variant, (int64_t)rid * 2 + (int64_t)side, &v)) {
        if (b->nvars == b->capvars) {
            size_t nc = b->capvars ? b->capvars * 2 : 256;
            variant *nv = realloc(b->vars, nc * sizeof *nv);
            if (!nv) return TPROF_ENOMEM;
            b->vars = nv;
            b->capvars = nc;
        }
        v = (int64_t)b->nvars;
        b->vars[b->nvars++] = (variant){ .raw = rid, .kernel = (size_t)k, .side = (int)side, .klass = row->klass };
        if (tprof_i64map_put(&b->by_variant, (int64_t)rid * 2 + (int64_t)side, v)) return TPROF_ENOMEM;
        x->variants[side]++;
    }
    b->vars[v].total_ns = tprof_sat_add(b->vars[v].total_ns, row->total_ns);
    return 0;
}

static int add_kernels(kbuild *b, const tprof_diff_part *p, size_t side)
{
    const tprof_rows *kr = p->kernels;
    for (size_t j = 0, nj = tprof_rows_count(kr); j < nj; j++) {
        tprof_kernel_row row = { .key = cell_str(kr, j, PK_NAME),
                                 .klass = (tprof_class)tprof_rows_cell(kr, j, PK_CLASS)->v.i,
                                 .count = (uint64_t)tprof_rows_cell(kr, j, PK_COUNT)->v.i,
                                 .total_ns = tprof_rows_cell(kr, j, PK_TOTAL)->v.i };
        int rc = add_row(b, &row, side);
        if (rc) return rc;
    }
    return 0;
}

static void kbuild_free(kbuild *b)
{
    if (b->by_norm.keys) tprof_i64map_free(&b->by_norm);
    if (b->by_variant.keys) tprof_i64map_free(&b->by_variant);
    free(b->vars);
    free(b->buf);
    memset(b, 0, sizeof *b);
}

static double kmax(const tprof_diff_kernel *k)
{
    return k->total_per_step[0] > k->total_per_step[1] ? k->total_per_step[0] : k->total_per_step[1];
}

static int cmp_kernel(const void *a, const void *b)
{
    const tprof_diff_kernel *x = a, *y = b;
    double mx = kmax(x), my = kmax(y);
    if (mx != my) return mx > my ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Index lists are sorted as pointers into the kernels array (no global
 * context, so diffs may run on several threads). */
static int cmp_delta_desc(const void *a, const void *b)
{
    const tprof_diff_kernel *x = *(const tprof_diff_kernel *const *)a, *y = *(const tprof_diff_kernel *const *)b;
    if (x->delta_ns != y->delta_ns) return x->delta_ns > y->delta_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_delta_asc(const void *a, const void *b) { return cmp_delta_desc(b, a); }

static int cmp_size(const void *a, const void *b)
{
    return cmp_kernel(*(const tprof_diff_kernel *const *)a, *(const tprof_diff_kernel *const *)b);
}

static int cmp_comm(const void *a, const void *b)
{
    const tprof_diff_comm *x = a, *y = b;
    double sx = x->time_ns[0] + x->time_ns[1], sy = y->time_ns[0] + y->time_ns[1];
    if (sx != sy) return sx > sy ? -1 : 1;
    return strcmp(x->type, y->type);
}

/* The indexes of the kernels that KEEP, sorted by CMP, at most TOP. */
static int pick(const tprof_diff_result *r, int (*keep)(const tprof_diff_kernel *), int (*cmp)(const void *, const void *),
                size_t top, size_t **out, size_t *nout)
{
    size_t n = 0, cap = r->nkernels ? r->nkernels : 1;
    const tprof_diff_kernel **px = malloc(cap * sizeof *px);
    size_t *ix = malloc(cap * sizeof *ix);
    if (!px || !ix) {
        free(px);
        free(ix);
        return TPROF_ENOMEM;
    }
    for (size_t i = 0; i < r->nkernels; i++)
        if (keep(&r->kernels[i])) px[n++] = &r->kernels[i];
    if (n) qsort(px, n, sizeof *px, cmp);
    for (size_t i = 0; i < n; i++) ix[i] = (size_t)(px[i] - r->kernels);
    free(px);
    *out = ix;
    *nout = top && top < n ? top : n;
    return 0;
}

static int is_worse(const tprof_diff_kernel *k) { return k->delta_ns > 0; }
static int is_better(const tprof_diff_kernel *k) { return k->delta_ns < 0; }
static int is_gone(const tprof_diff_kernel *k) { return k->count[0] && !k->count[1]; }
static int is_added(const tprof_diff_kernel *k) { return !k->count[0] && k->count[1]; }

/* Each side's kernels once all are added: each kernel's largest variant,
 * its figures per step, the lists of the TOP largest changes. */
static int kernels_finish(kbuild *b, size_t top)
{
    tprof_diff_result *r = b->r;
    int rc = 0;
    /* each kernel's largest variant per side (first seen on ties); its class
     * is that of the largest variant of either side */
    int64_t *best = malloc((r->nkernels ? r->nkernels : 1) * sizeof *best);
    if (!rc && !best) rc = TPROF_ENOMEM;
    for (size_t i = 0; best && i < r->nkernels; i++) best[i] = -1;
    for (size_t v = 0; !rc && v < b->nvars; v++) {
        const variant *x = &b->vars[v];
        tprof_diff_kernel *k = &r->kernels[x->kernel];
        size_t cur = (size_t)(uintptr_t)k->top[x->side];
        if (!cur || x->total_ns > b->vars[cur - 1].total_ns) k->top[x->side] = (const char *)(uintptr_t)(v + 1);
        if (x->total_ns > best[x->kernel]) {
            best[x->kernel] = x->total_ns;
            k->klass = x->klass;
        }
    }
    free(best);
    for (size_t i = 0; !rc && i < r->nkernels; i++) {
        tprof_diff_kernel *k = &r->kernels[i];
        k->name = tprof_strtab_get(&b->p->strs, (uint32_t)(uintptr_t)k->name);
        for (int s = 0; s < 2; s++) {
            size_t v = (size_t)(uintptr_t)k->top[s];
            k->top[s] = v ? tprof_strtab_get(&b->p->strs, b->vars[v - 1].raw) : NULL;
            double steps = (double)r->side[s].steps;
            k->count_per_step[s] = (double)k->count[s] / steps;
            k->total_per_step[s] = (double)k->total_ns[s] / steps;
            k->mean_ns[s] = k->count[s] ? (double)k->total_ns[s] / (double)k->count[s] : 0.0;
        }
        k->delta_ns = k->total_per_step[1] - k->total_per_step[0];
        k->delta_pct = tprof_diff_pct(k->total_per_step[0], k->total_per_step[1]);
        if (k->count[0] && k->count[1]) r->matched++;
        else if (k->count[0]) r->only_base++;
        else r->only_cand++;
    }
    kbuild_free(b);
    if (!rc && r->nkernels) qsort(r->kernels, r->nkernels, sizeof *r->kernels, cmp_kernel);
    if (!rc) rc = pick(r, is_worse, cmp_delta_desc, top, &r->regressions, &r->nregressions);
    if (!rc) rc = pick(r, is_better, cmp_delta_asc, top, &r->improvements, &r->nimprovements);
    if (!rc) rc = pick(r, is_gone, cmp_size, top, &r->gone, &r->ngone);
    if (!rc) rc = pick(r, is_added, cmp_size, top, &r->added, &r->nadded);
    return rc;
}

/* ---- result tables ---- */

enum { SD_TRACES, SD_STEPS, SD_NO_STEPS, SD_PHASES, SD_NCOLS };
static const tprof_col_desc side_cols[SD_NCOLS] = {
    [SD_TRACES] = TPROF_COL("traces", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "traces read on the side"),
    [SD_STEPS] = TPROF_COL("steps", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                           "ProfilerSteps over them (a trace without any counts as 1)"),
    [SD_NO_STEPS] = TPROF_COL("traces_without_steps", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL,
                              "traces without ProfilerStep"),
    [SD_PHASES] = TPROF_COL("phases_found", TPROF_COL_BOOL, TPROF_COMBINE_MAX, NULL, "some trace has phase markers"),
};
enum { FL_LABEL, FL_FILE, FL_STEPS, FL_TRUNCATED, FL_NCOLS };
static const tprof_col_desc file_cols[FL_NCOLS] = {
    [FL_LABEL] = TPROF_COL("label", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "\"rank R\", else \"trace I\""),
    [FL_FILE] = TPROF_COL("file", TPROF_COL_STRING, TPROF_COMBINE_PER_RANK, NULL, "the trace's path"),
    [FL_STEPS] = TPROF_COL("steps", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "its ProfilerSteps"),
    [FL_TRUNCATED] = TPROF_COL("truncated", TPROF_COL_BOOL, TPROF_COMBINE_MAX, NULL, "it ended early"),
};
static const tprof_table_desc files_desc = { .name = "files", .doc = "the side's traces", .cols = file_cols,
                                             .ncols = FL_NCOLS };
static const tprof_table_desc *const side_children[] = { &files_desc };
#define SIDE_TABLE(NAME) { .name = NAME, .doc = "the " NAME " run", .cols = side_cols, .ncols = SD_NCOLS, \
                           .children = side_children, .nchildren = 1, .json_single = 1 }
static const tprof_table_desc base_desc = SIDE_TABLE("base"), cand_desc = SIDE_TABLE("candidate");

enum { PR_NAME, PR_BASE, PR_CAND, PR_DELTA, PR_PCT, PR_NCOLS };
static const tprof_col_desc pair_cols[PR_NCOLS] = {
    [PR_NAME] = TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the metric", .flags = TPROF_COLF_KEY),
    [PR_BASE] = TPROF_COL("base", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "per step, ns"),
    [PR_CAND] = TPROF_COL("candidate", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "per step, ns"),
    [PR_DELTA] = TPROF_COL("delta", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "candidate - base"),
    [PR_PCT] = TPROF_COL("delta_pct", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                         "delta / base in percent (null when the base is 0)", .flags = TPROF_COLF_METRIC),
};
static const tprof_table_desc metrics_desc = { .name = "metrics", .doc = "per step: each trace's figure / its steps, "
                                               "mean over the side's traces", .cols = pair_cols, .ncols = PR_NCOLS };
static const tprof_table_desc time_desc = { .name = "time", .doc = "communication time (union) per step",
                                            .cols = pair_cols, .ncols = PR_NCOLS, .json_single = 1 };
static const tprof_table_desc exposed_desc = { .name = "exposed", .doc = "of it, not under compute",
                                               .cols = pair_cols, .ncols = PR_NCOLS, .json_single = 1 };
static const tprof_col_desc comm_type_cols[] = {
    TPROF_COL("type", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "the collective type", .flags = TPROF_COLF_KEY),
};
static const tprof_table_desc *const comm_children[] = { &time_desc, &exposed_desc };
static const tprof_table_desc comm_types_desc = { .name = "comm_types", .doc = "seen on either side",
                                                  .cols = comm_type_cols, .ncols = 1, .children = comm_children,
                                                  .nchildren = 2 };

enum { KS_COUNT, KS_TOTAL, KS_COUNT_PER_STEP, KS_TOTAL_PER_STEP, KS_MEAN, KS_VARIANTS, KS_TOP, KS_NCOLS };
static const tprof_col_desc kside_cols[KS_NCOLS] = {
    [KS_COUNT] = TPROF_COL("count", TPROF_COL_COUNT, TPROF_COMBINE_SUM, NULL, "launches, summed over ranks"),
    [KS_TOTAL] = TPROF_COL("total_ns", TPROF_COL_DURATION, TPROF_COMBINE_SUM, NULL, "their time, summed over ranks"),
    [KS_COUNT_PER_STEP] = TPROF_COL("count_per_step", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                                    "divided by the side's steps"),
    [KS_TOTAL_PER_STEP] = TPROF_COL("total_per_step_ns", TPROF_COL_MEAN_NS, TPROF_COMBINE_FIRST, NULL,
                                    "divided by the side's steps"),
    [KS_MEAN] = TPROF_COL("mean_ns", TPROF_COL_MEAN_NS, TPROF_COMBINE_FIRST, NULL, "per launch (0 when absent)"),
    [KS_VARIANTS] = TPROF_COL("variants", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "raw names folded into it"),
    [KS_TOP] = TPROF_COL("top_variant", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                         "the largest raw name, null when absent"),
};
#define KSIDE_TABLE(NAME) { .name = NAME, .doc = "on the " NAME " side", .cols = kside_cols, .ncols = KS_NCOLS, \
                            .json_single = 1, .json_after = "class" }
static const tprof_table_desc kbase_desc = KSIDE_TABLE("base"), kcand_desc = KSIDE_TABLE("candidate");
static const tprof_table_desc *const kernel_children[] = { &kbase_desc, &kcand_desc };
enum { KR_NAME, KR_CLASS, KR_DELTA, KR_PCT, KR_NCOLS };
static const tprof_col_desc kernel_cols[KR_NCOLS] = {
    [KR_NAME] = TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the normalised name",
                          .flags = TPROF_COLF_KEY),
    [KR_CLASS] = TPROF_COL("class", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "of its largest variant"),
    [KR_DELTA] = TPROF_COL("delta_per_step_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                           "candidate - base, total per step", .flags = TPROF_COLF_METRIC),
    [KR_PCT] = TPROF_COL("delta_pct", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "in percent (null: new)"),
};
#define KERNEL_TABLE(NAME, DOC) { .name = NAME, .doc = DOC, .cols = kernel_cols, .ncols = KR_NCOLS, \
                                  .children = kernel_children, .nchildren = 2 }
static const tprof_table_desc regressions_desc = KERNEL_TABLE("regressions", "--top of the total per step that grew");
static const tprof_table_desc improvements_desc = KERNEL_TABLE("improvements", "--top of those that shrank");
static const tprof_table_desc gone_desc = KERNEL_TABLE("only_in_base", "--top of those only in base");
static const tprof_table_desc added_desc = KERNEL_TABLE("only_in_candidate", "--top of those only in candidate");
static const tprof_table_desc rows_desc = KERNEL_TABLE("rows", "every normalised name, largest first");
static const tprof_table_desc *const kernels_children[] = { &regressions_desc, &improvements_desc, &gone_desc,
                                                            &added_desc, &rows_desc };
enum { KT_MATCHED, KT_ONLY_BASE, KT_ONLY_CAND, KT_NCOLS };
static const tprof_col_desc kernels_cols[KT_NCOLS] = {
    [KT_MATCHED] = TPROF_COL("matched", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "names in both runs"),
    [KT_ONLY_BASE] = TPROF_COL("only_base", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "only in base"),
    [KT_ONLY_CAND] = TPROF_COL("only_candidate", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "only in candidate"),
};
static const tprof_table_desc kernels_desc = { .name = "kernels", .doc = "kernels by normalised name",
                                               .cols = kernels_cols, .ncols = KT_NCOLS, .children = kernels_children,
                                               .nchildren = 5, .json_single = 1 };
enum { CK_METRIC, CK_LIMIT, CK_PCT, CK_FAILED, CK_NCOLS };
static const tprof_col_desc check_cols[CK_NCOLS] = {
    [CK_METRIC] = TPROF_COL("metric", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "the metric --fail-above checks"),
    [CK_LIMIT] = TPROF_COL("fail_above_pct", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "the limit, percent"),
    [CK_PCT] = TPROF_COL("delta_pct", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "the metric's change, percent"),
    [CK_FAILED] = TPROF_COL("failed", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, NULL, "the change is above the limit"),
};
static const tprof_table_desc check_desc = { .name = "check", .doc = "with --fail-above (else null)",
                                             .cols = check_cols, .ncols = CK_NCOLS, .json_single = 1 };

/* CSV: one flat table of every section */
#define NAMED (TPROF_COLF_CSV_NAN_NAMED)
enum { CV_SECTION, CV_NAME, CV_CLASS, CV_BASE, CV_CAND, CV_DELTA, CV_PCT, CV_BCOUNT, CV_CCOUNT, CV_BCPS, CV_CCPS,
       CV_BMEAN, CV_CMEAN, CV_BVAR, CV_CVAR, CV_BTOP, CV_CTOP, CV_NCOLS };
static const tprof_col_desc csv_cols[CV_NCOLS] = {
    [CV_SECTION] = TPROF_COL("section", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL,
                             "side, metric, comm, comm_exposed, kernel, op or module"),
    [CV_NAME] = TPROF_COL("name", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "what the row is"),
    [CV_CLASS] = TPROF_COL("class", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "a kernel's class"),
    [CV_BASE] = TPROF_COL("base", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "per step", .csv_decimals = 6, .flags = NAMED),
    [CV_CAND] = TPROF_COL("candidate", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "per step", .csv_decimals = 6,
                          .flags = NAMED),
    [CV_DELTA] = TPROF_COL("delta", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "candidate - base", .csv_decimals = 6,
                           .flags = NAMED),
    [CV_PCT] = TPROF_COL("delta_pct", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "percent (inf: new)",
                         .csv_decimals = 6, .flags = NAMED),
    [CV_BCOUNT] = TPROF_COL("base_count", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "a kernel's launches"),
    [CV_CCOUNT] = TPROF_COL("candidate_count", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "a kernel's launches"),
    [CV_BCPS] = TPROF_COL("base_count_per_step", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "per step",
                          .csv_decimals = 6, .flags = NAMED),
    [CV_CCPS] = TPROF_COL("candidate_count_per_step", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "per step",
                          .csv_decimals = 6, .flags = NAMED),
    [CV_BMEAN] = TPROF_COL("base_mean_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "per launch", .csv_decimals = 6,
                           .flags = NAMED),
    [CV_CMEAN] = TPROF_COL("candidate_mean_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "per launch",
                           .csv_decimals = 6, .flags = NAMED),
    [CV_BVAR] = TPROF_COL("base_variants", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "raw names folded"),
    [CV_CVAR] = TPROF_COL("candidate_variants", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "raw names folded"),
    [CV_BTOP] = TPROF_COL("base_top_variant", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the largest raw name"),
    [CV_CTOP] = TPROF_COL("candidate_top_variant", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the largest raw name"),
};
static const tprof_table_desc csv_desc = { .name = "csv_rows", .doc = "every section as one table (CSV)",
                                           .cols = csv_cols, .ncols = CV_NCOLS, .no_json = 1 };
/* Ops matched by name and shapes, modules by path: per step on each side. */
enum { OD_OP, OD_DIMS, OD_TYPES, OD_MODULE, OD_BASE, OD_CAND, OD_DELTA, OD_PCT, OD_BCPS, OD_CCPS, OD_BMEAN, OD_CMEAN,
       OD_NCOLS };
#define OD_HIDDEN (TPROF_COLF_NO_JSON | TPROF_COLF_NO_CSV | TPROF_COLF_NO_TABLE)
#define OP_DELTA_COLS(OPF, MODF)                                                                                    \
    {                                                                                                               \
        [OD_OP] = TPROF_COL("op", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the op's name", .flags = (OPF)),   \
        [OD_DIMS] = TPROF_COL("input_dims", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "its Input Dims",        \
                              .flags = (OPF)),                                                                      \
        [OD_TYPES] = TPROF_COL("input_types", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "its Input type",      \
                               .flags = (OPF)),                                                                     \
        [OD_MODULE] = TPROF_COL("module", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the nn.Module class path", \
                                .flags = (MODF)),                                                                   \
        [OD_BASE] = TPROF_COL("base_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,                               \
                              "direct kernel time per step, base", .csv_decimals = 3),                              \
        [OD_CAND] = TPROF_COL("candidate_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "the same, candidate",   \
                              .csv_decimals = 3),                                                                   \
        [OD_DELTA] = TPROF_COL("delta_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "candidate - base",         \
                               .csv_decimals = 3),                                                                  \
        [OD_PCT] = TPROF_COL("delta_pct", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "percent (inf: new)",        \
                             .csv_decimals = 6, .flags = NAMED),                                                    \
        [OD_BCPS] = TPROF_COL("base_count_per_step", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "launches per step", \
                              .csv_decimals = 6),                                                                   \
        [OD_CCPS] = TPROF_COL("candidate_count_per_step", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,              \
                              "launches per step", .csv_decimals = 6),                                              \
        [OD_BMEAN] = TPROF_COL("base_mean_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,                         \
                               "direct time per launch (null: none)", .csv_decimals = 3),                           \
        [OD_CMEAN] = TPROF_COL("candidate_mean_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,                    \
                               "direct time per launch (null: none)", .csv_decimals = 3),                           \
    }
static const tprof_col_desc op_delta_cols[2][OD_NCOLS] = { OP_DELTA_COLS(0, OD_HIDDEN), OP_DELTA_COLS(OD_HIDDEN, 0) };
static const tprof_table_desc op_deltas_desc = { .name = "ops",
                                                 .doc = "ops matched by name, Input Dims and Input type, largest change "
                                                        "first",
                                                 .cols = op_delta_cols[0], .ncols = OD_NCOLS, .limited = 1 };
static const tprof_table_desc module_deltas_desc = { .name = "modules",
                                                     .doc = "nn.Modules matched by class path, largest change first",
                                                     .cols = op_delta_cols[1], .ncols = OD_NCOLS, .limited = 1 };
/* Collectives matched across each side's ranks (tprof_collectives_reduce), then across the sides. */
enum { CR_SIDE, CR_RANKS, CR_MATCHED, CR_MATCHING, CR_STEPS, CR_STRAGGLER, CR_COST, CR_WAIT, CR_SKEW, CR_NCOLS };
static const tprof_col_desc coll_run_cols[CR_NCOLS] = {
    [CR_SIDE] = TPROF_COL("side", TPROF_COL_ENUM, TPROF_COMBINE_FIRST, NULL, "base or candidate", .flags = TPROF_COLF_KEY),
    [CR_RANKS] = TPROF_COL("traces", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL, "the side's traces (ranks)"),
    [CR_MATCHED] = TPROF_COL("matched", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                             "collective instances matched across the side's ranks"),
    [CR_MATCHING] = TPROF_COL("matching", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL,
                              "how they were matched, as `collectives` says"),
    [CR_STEPS] = TPROF_COL("common_steps", TPROF_COL_COUNT, TPROF_COMBINE_FIRST, NULL,
                           "the ProfilerSteps every rank of the side has (the per-step figures' divisor; 1 without)"),
    [CR_STRAGGLER] = TPROF_COL("straggler", TPROF_COL_RANK, TPROF_COMBINE_FIRST, NULL,
                               "the rank whose late arrivals cost the others the most waiting; null when nobody waited"),
    [CR_COST] = TPROF_COL("straggler_cost_per_step_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                          "the others' waits it caused, per step", .csv_decimals = 3),
    [CR_WAIT] = TPROF_COL("wait_per_step_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                          "a rank's wait in collectives per step, the mean over the side's ranks", .csv_decimals = 3),
    [CR_SKEW] = TPROF_COL("skew_computed", TPROF_COL_BOOL, TPROF_COMBINE_FIRST, NULL,
                          "arrival skew was computed (every clock fitted within 50 us)"),
};
enum { CD_TYPE, CD_GROUP, CD_DTYPE, CD_BYTES, CD_BASE, CD_CAND, CD_DELTA, CD_PCT, CD_BCPS, CD_CCPS, CD_BP50, CD_CP50,
       CD_BBUS, CD_CBUS, CD_BWAIT, CD_CWAIT, CD_NCOLS };
static const tprof_col_desc coll_delta_cols[CD_NCOLS] = {
    [CD_TYPE] = TPROF_COL("type", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "the collective", .flags = TPROF_COLF_KEY),
    [CD_GROUP] = TPROF_COL("group", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "its process group (\"\": not recorded)",
                           .flags = TPROF_COLF_KEY),
    [CD_DTYPE] = TPROF_COL("dtype", TPROF_COL_STRING, TPROF_COMBINE_FIRST, NULL, "as recorded", .flags = TPROF_COLF_KEY),
    [CD_BYTES] = TPROF_COL("bytes", TPROF_COL_BYTES, TPROF_COMBINE_FIRST, NULL, "message size, null when not recorded",
                           .flags = TPROF_COLF_KEY),
    [CD_BASE] = TPROF_COL("base_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                          "transfer time per step (the shortest duration across the ranks, summed), base",
                          .csv_decimals = 3),
    [CD_CAND] = TPROF_COL("candidate_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "the same, candidate",
                          .csv_decimals = 3),
    [CD_DELTA] = TPROF_COL("delta_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "candidate - base", .csv_decimals = 3),
    [CD_PCT] = TPROF_COL("delta_pct", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "percent (inf: new)", .csv_decimals = 6,
                         .flags = NAMED),
    [CD_BCPS] = TPROF_COL("base_count_per_step", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "instances per step",
                          .csv_decimals = 6),
    [CD_CCPS] = TPROF_COL("candidate_count_per_step", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL, "instances per step",
                          .csv_decimals = 6),
    [CD_BP50] = TPROF_COL("base_transfer_p50_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                          "median transfer time of an instance, base (null: none)"),
    [CD_CP50] = TPROF_COL("candidate_transfer_p50_ns", TPROF_COL_DURATION, TPROF_COMBINE_FIRST, NULL,
                          "the same, candidate"),
    [CD_BBUS] = TPROF_COL("base_busbw", TPROF_COL_RATE, TPROF_COMBINE_FIRST, "busbw GB/s",
                          "busbw from the median transfer time, base (null without a size)"),
    [CD_CBUS] = TPROF_COL("candidate_busbw", TPROF_COL_RATE, TPROF_COMBINE_FIRST, "busbw GB/s", "the same, candidate"),
    [CD_BWAIT] = TPROF_COL("base_wait_per_step_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                           "the ranks' waits in it per step, summed over the ranks, base", .csv_decimals = 3),
    [CD_CWAIT] = TPROF_COL("candidate_wait_per_step_ns", TPROF_COL_REAL, TPROF_COMBINE_FIRST, NULL,
                           "the same, candidate", .csv_decimals = 3),
};
static const tprof_table_desc coll_run_desc = { .name = "collectives_run",
                                                .doc = "each side's collectives matched across its ranks (sides of "
                                                       "2 traces or more; empty otherwise)",
                                                .cols = coll_run_cols, .ncols = CR_NCOLS };
static const tprof_table_desc coll_deltas_desc = { .name = "collectives",
                                                   .doc = "collectives matched by type, group, dtype and size across "
                                                          "the sides (when both have a matching), largest change in "
                                                          "transfer time first",
                                                   .cols = coll_delta_cols, .ncols = CD_NCOLS, .limited = 1 };
static const tprof_table_desc path_deltas_desc = {
    .name = "critical_path", .doc = "the critical path per sampled step (up to 4 a trace, as summary samples them), "
                                    "mean over the side's traces: path, step, then each bound (empty unless both "
                                    "sides have one)",
    .cols = pair_cols, .ncols = PR_NCOLS };
static const tprof_table_desc diff_top = { .name = "" };
static const tprof_table_desc *const diff_tables[] = { &base_desc,   &cand_desc,  &metrics_desc, &comm_types_desc,
                                                       &kernels_desc, &check_desc, &csv_desc, &op_deltas_desc,
                                                       &module_deltas_desc, &coll_run_desc, &coll_deltas_desc,
                                                       &path_deltas_desc };
enum { TB_BASE, TB_CAND, TB_METRICS, TB_COMM, TB_KERNELS, TB_CHECK, TB_CSV, TB_OPS, TB_MODULES, TB_COLL_RUN,
       TB_COLLS, TB_PATH };
const tprof_result_desc tprof_diff_desc = { .name = "diff", .version = 3, .top = &diff_top, .tables = diff_tables,
                                            .ntables = 12, .csv_table = TB_CSV + 1, .whole_run = 1 };

static int pair_row(tprof_rows *t, const char *name, double base, double cand)
{
    long i = tprof_rows_add(t);
    if (i < 0 || tprof_rows_set_s(t, (size_t)i, PR_NAME, name)) return TPROF_ENOMEM;
    const double v[] = { [PR_BASE] = base, [PR_CAND] = cand, [PR_DELTA] = cand - base,
                         [PR_PCT] = tprof_diff_pct(base, cand) };
    for (size_t c = PR_BASE; c < PR_NCOLS; c++) tprof_rows_set_d(t, (size_t)i, c, v[c]);
    return 0;
}

/* A CSV row of a section: name, class and the four numbers (the rest empty). */
static long csv_row(tprof_rows *t, const char *section, const char *name, const char *klass, double base, double cand)
{
    long i = tprof_rows_add(t);
    if (i < 0 || tprof_rows_set_s(t, (size_t)i, CV_SECTION, section) || tprof_rows_set_s(t, (size_t)i, CV_NAME, name) ||
        tprof_rows_set_s(t, (size_t)i, CV_CLASS, klass))
        return -1;
    const double v[] = { [CV_BASE] = base, [CV_CAND] = cand, [CV_DELTA] = cand - base,
                         [CV_PCT] = tprof_diff_pct(base, cand) };
    for (size_t c = CV_BASE; c <= CV_PCT; c++) tprof_rows_set_d(t, (size_t)i, c, v[c]);
    return i;
}

static int kernel_row(tprof_rows *t, const tprof_diff_kernel *k)
{
    long i = tprof_rows_add(t);
    if (i < 0 || tprof_rows_set_s(t, (size_t)i, KR_NAME, k->name) ||
        tprof_rows_set_s(t, (size_t)i, KR_CLASS, tprof_class_name(k->klass)))
        return TPROF_ENOMEM;
    tprof_rows_set_d(t, (size_t)i, KR_DELTA, k->delta_ns);
    tprof_rows_set_d(t, (size_t)i, KR_PCT, k->delta_pct);
    for (size_t s = 0; s < 2; s++) {
        tprof_rows *x = tprof_rows_child(t, (size_t)i, s);
        if (!x || tprof_rows_add(x) != 0 || (k->top[s] && tprof_rows_set_s(x, 0, KS_TOP, k->top[s])))
            return TPROF_ENOMEM;
        tprof_rows_set_i(x, 0, KS_COUNT, (int64_t)k->count[s]);
        tprof_rows_set_i(x, 0, KS_TOTAL, k->total_ns[s]);
        tprof_rows_set_d(x, 0, KS_COUNT_PER_STEP, k->count_per_step[s]);
        tprof_rows_set_d(x, 0, KS_TOTAL_PER_STEP, k->total_per_step[s]);
        tprof_rows_set_d(x, 0, KS_MEAN, k->mean_ns[s]);
        tprof_rows_set_i(x, 0, KS_VARIANTS, (int64_t)k->variants[s]);
    }
    return 0;
}

/* One key's sums on each side. */
typedef struct {
    uint32_t key, a, b, c; /* string ids: the key, and op, dims, types (or the module) */
    double ns[2], count[2];
} op_delta;

static int cmp_op_delta(const void *x, const void *y)
{
    const op_delta *a = x, *b = y;
    double da = fabs(a->ns[1] - a->ns[0]), db = fabs(b->ns[1] - b->ns[0]);
    if (da != db) return da > db ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* The ops (by name and shapes, or modules) of both sides, matched by their
 * key's texts as each trace's are added: sums per side, in the order the
 * keys were first met (which breaks ties in the sort). */
typedef struct {
    tprof_strtab strs;
    tprof_i64map at; /* key id -> index in d */
    op_delta *d;
    size_t n, cap;
    char *key;
    size_t keycap;
} op_acc;

static int op_acc_init(op_acc *o)
{
    memset(o, 0, sizeof *o);
    if (tprof_strtab_init(&o->strs)) return TPROF_ENOMEM;
    if (tprof_i64map_init(&o->at, 256)) {
        tprof_strtab_free(&o->strs);
        memset(o, 0, sizeof *o);
        return TPROF_ENOMEM;
    }
    return 0;
}

static void op_acc_free(op_acc *o)
{
    if (o->at.keys) {
        tprof_strtab_free(&o->strs);
        tprof_i64map_free(&o->at);
    }
    free(o->d);
    free(o->key);
    memset(o, 0, sizeof *o);
}

/* Rows PO (a part's ops or modules) into side S's sums. */
static int op_acc_add(op_acc *o, const tprof_rows *po, int s)
{
    int rc = 0;
    for (size_t j = 0, nj = tprof_rows_count(po); !rc && j < nj; j++) {
        const char *a = cell_str(po, j, PO_A), *b = cell_str(po, j, PO_B), *c = cell_str(po, j, PO_C);
        size_t la = strlen(a), lb = strlen(b), lc = strlen(c), len = la + lb + lc + 2;
        if ((rc = tprof_grow_items((void **)&o->key, &o->keycap, len + 1, 1))) break;
        snprintf(o->key, o->keycap, "%s\x1f%s\x1f%s", a, b, c);
        uint32_t id = tprof_strtab_intern(&o->strs, o->key, len);
        int64_t k;
        if (id == UINT32_MAX) rc = TPROF_ENOMEM;
        else if (!tprof_i64map_get(&o->at, id, &k)) {
            if ((rc = tprof_grow_items((void **)&o->d, &o->cap, o->n + 1, sizeof *o->d))) break;
            op_delta *x = &o->d[o->n];
            *x = (op_delta){ .key = id, .a = tprof_strtab_intern(&o->strs, a, la),
                             .b = tprof_strtab_intern(&o->strs, b, lb), .c = tprof_strtab_intern(&o->strs, c, lc) };
            if (x->a == UINT32_MAX || x->b == UINT32_MAX || x->c == UINT32_MAX || tprof_i64map_put(&o->at, id, (int64_t)o->n))
                rc = TPROF_ENOMEM;
            k = (int64_t)o->n++;
        }
        if (!rc) {
            o->d[k].ns[s] += (double)tprof_rows_cell(po, j, PO_DIRECT)->v.i;
            o->d[k].count[s] += (double)tprof_rows_cell(po, j, PO_COUNT)->v.i;
        }
    }
    return rc;
}

/* The matched ops (sorted: op_acc_sort), per step, into table T and the CSV
 * rows (section "op", or "module" when WHICH). */
static int op_deltas(tprof_rows *t, tprof_rows *csv, const op_acc *o, const double steps[2], int which)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < o->n; i++) {
        const op_delta *x = &o->d[i];
        double v[2] = { x->ns[0] / steps[0], x->ns[1] / steps[1] };
        long r = tprof_rows_add(t);
        if (r < 0) {
            rc = TPROF_ENOMEM;
            break;
        }
        const char *a = tprof_strtab_get(&o->strs, x->a);
        if (which) rc = tprof_rows_set_s(t, (size_t)r, OD_MODULE, a);
        else
            rc = tprof_rows_set_s(t, (size_t)r, OD_OP, a) ||
                 tprof_rows_set_s(t, (size_t)r, OD_DIMS, tprof_strtab_get(&o->strs, x->b)) ||
                 tprof_rows_set_s(t, (size_t)r, OD_TYPES, tprof_strtab_get(&o->strs, x->c));
        if (rc) {
            rc = TPROF_ENOMEM;
            break;
        }
        const double cells[] = { [OD_BASE] = v[0], [OD_CAND] = v[1], [OD_DELTA] = v[1] - v[0],
                                 [OD_PCT] = tprof_diff_pct(v[0], v[1]), [OD_BCPS] = x->count[0] / steps[0],
                                 [OD_CCPS] = x->count[1] / steps[1] };
        for (size_t c = OD_BASE; c <= OD_CCPS; c++) tprof_rows_set_d(t, (size_t)r, c, cells[c]);
        if (x->count[0]) tprof_rows_set_d(t, (size_t)r, OD_BMEAN, x->ns[0] / x->count[0]);
        if (x->count[1]) tprof_rows_set_d(t, (size_t)r, OD_CMEAN, x->ns[1] / x->count[1]);
        /* CSV: the key in one name ("aten::mm [[8,4],[4,2]] [\"float\",\"float\"]") */
        char name[512];
        if (which) snprintf(name, sizeof name, "%s", a);
        else snprintf(name, sizeof name, "%s %s %s", a, tprof_strtab_get(&o->strs, x->b), tprof_strtab_get(&o->strs, x->c));
        long c = csv_row(csv, which ? "module" : "op", name, "", v[0], v[1]);
        if (c < 0) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_d(csv, (size_t)c, CV_BCPS, x->count[0] / steps[0]);
        tprof_rows_set_d(csv, (size_t)c, CV_CCPS, x->count[1] / steps[1]);
        if (x->count[0]) tprof_rows_set_d(csv, (size_t)c, CV_BMEAN, x->ns[0] / x->count[0]);
        if (x->count[1]) tprof_rows_set_d(csv, (size_t)c, CV_CMEAN, x->ns[1] / x->count[1]);
    }
    return rc;
}

/* ---- the fold: each trace's part added as it comes, then compared ---- */

/* What the files table says of a trace. */
typedef struct {
    int64_t rank;
    char *path;
    size_t steps;
    int truncated;
} part_file;

struct tprof_diff_fold {
    size_t want[2], got[2]; /* parts per side: announced, added */
    tprof_diff_result *r;   /* the side figures and kernels so far */
    kbuild kernels;
    op_acc ops[2];          /* by name and shapes; modules */
    double path[2][2 + TPROF_CPB_COUNT];
    int every_path;         /* every trace so far has a critical path */
    part_file *files[2];
    tprof_result **coll[2]; /* each trace's collective instances, matched per side at the end */
    int failed, ended;
};

void tprof_diff_fold_free(tprof_diff_fold *f)
{
    if (!f) return;
    tprof_diff_free(f->r);
    kbuild_free(&f->kernels);
    for (int s = 0; s < 2; s++) {
        op_acc_free(&f->ops[s]);
        for (size_t i = 0; i < f->got[s]; i++) {
            free(f->files[s][i].path);
            tprof_result_free(f->coll[s][i]);
        }
        free(f->files[s]);
        free(f->coll[s]);
    }
    free(f);
}

tprof_diff_fold *tprof_diff_fold_new(const size_t nparts[2])
{
    tprof_diff_fold *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->every_path = 1;
    dpriv *p = calloc(1, sizeof *p);
    f->r = calloc(1, sizeof *f->r);
    int bad = !p || !f->r || tprof_strtab_init(&p->strs);
    if (bad) {
        free(p);
        tprof_diff_fold_free(f);
        return NULL;
    }
    f->r->priv = p; /* the kernels' names: the result's */
    f->kernels = (kbuild){ .r = f->r, .p = p };
    bad = tprof_i64map_init(&f->kernels.by_norm, 256) || tprof_i64map_init(&f->kernels.by_variant, 512);
    for (int s = 0; s < 2 && !bad; s++) {
        f->want[s] = nparts[s];
        bad = op_acc_init(&f->ops[s]) || !(f->files[s] = calloc(nparts[s] ? nparts[s] : 1, sizeof *f->files[s])) ||
              !(f->coll[s] = calloc(nparts[s] ? nparts[s] : 1, sizeof *f->coll[s]));
    }
    if (bad) {
        tprof_diff_fold_free(f);
        return NULL;
    }
    return f;
}

int tprof_diff_fold_add(tprof_diff_fold *f, int side, tprof_diff_part *p)
{
    int rc = 0;
    size_t s = side != 0;
    if (!p) rc = TPROF_EUSAGE;
    else if (f->failed || f->ended) rc = TPROF_EIO;
    else if (f->got[s] == f->want[s] || (!s && f->got[1])) rc = TPROF_EUSAGE; /* too many, or the base after */
    if (!rc) rc = add_metrics(&f->r->side[s], f->want[s], &f->r->comm, &f->r->ncomm, s, p);
    if (!rc) rc = add_kernels(&f->kernels, p, s);
    for (int which = 0; !rc && which < 2; which++) rc = op_acc_add(&f->ops[which], p->ops[which], (int)s);
    if (!rc) {
        f->every_path &= p->has_path;
        for (size_t k = 0; k < 2 + TPROF_CPB_COUNT; k++) f->path[s][k] += p->cp[k] / (double)f->want[s];
        part_file *pf = &f->files[s][f->got[s]];
        *pf = (part_file){ .rank = p->rank, .path = strdup(p->path), .steps = p->steps, .truncated = p->truncated };
        f->coll[s][f->got[s]++] = p->coll; /* counted now, so that it is freed with the fold */
        p->coll = NULL;
        if (!pf->path) rc = TPROF_ENOMEM;
    }
    tprof_diff_part_free(p);
    if (rc && rc != TPROF_EUSAGE && rc != TPROF_EIO) f->failed = 1;
    return rc;
}

int tprof_diff_fold_end(tprof_diff_fold *f, const tprof_diff_opts *opts, tprof_diff_result **out)
{
    *out = NULL;
    if (f->failed || f->ended) return TPROF_EIO;
    if (!f->want[0] || !f->want[1] || f->got[0] != f->want[0] || f->got[1] != f->want[1]) return TPROF_EUSAGE;
    f->ended = 1;
    tprof_diff_result *r = f->r;
    if (r->ncomm) qsort(r->comm, r->ncomm, sizeof *r->comm, cmp_comm);
    for (int which = 0; which < 2; which++)
        if (f->ops[which].n) qsort(f->ops[which].d, f->ops[which].n, sizeof *f->ops[which].d, cmp_op_delta);
    int rc = kernels_finish(&f->kernels, opts ? opts->top : 0);
    if (rc) {
        f->failed = 1;
        return rc;
    }
    *out = r;
    f->r = NULL; /* the caller's */
    return 0;
}

int tprof_diff(const tprof_trace *const *base, size_t nbase, const tprof_trace *const *cand, size_t ncand,
               const tprof_diff_opts *opts, tprof_diff_result **out)
{
    *out = NULL;
    if (!nbase || !ncand) return TPROF_EUSAGE;
    const size_t n[2] = { nbase, ncand };
    tprof_diff_fold *f = tprof_diff_fold_new(n);
    int rc = f ? 0 : TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < nbase + ncand; i++) {
        tprof_diff_part *p;
        rc = tprof_diff_part_of(i < nbase ? base[i] : cand[i - nbase], &p);
        if (!rc) rc = tprof_diff_fold_add(f, i >= nbase, p);
    }
    if (!rc) rc = tprof_diff_fold_end(f, opts, out);
    tprof_diff_fold_free(f);
    return rc;
}

/* Side S's collectives matched across its ranks into *OUT (NULL: fewer
 * than two traces, or no instance recorded). */
static int side_collectives(tprof_result *const *inst, size_t n, tprof_result **out)
{
    *out = NULL;
    if (n < 2) return 0;
    int rc = tprof_collectives_reduce((const tprof_result *const *)inst, n, out);
    if (!rc && tprof_rows_int(tprof_result_top_c(*out), 0, "matched") <= 0) {
        tprof_result_free(*out);
        *out = NULL;
    }
    return rc;
}

static int coll_run_row(tprof_rows *t, const char *side, const tprof_result *c, size_t traces)
{
    const tprof_rows *top = tprof_result_top_c(c), *ranks = tprof_result_table_c(c, 1);
    long i = tprof_rows_add(t);
    if (i < 0 || tprof_rows_set_s(t, (size_t)i, CR_SIDE, side) ||
        tprof_rows_set_s(t, (size_t)i, CR_MATCHING, tprof_rows_str(top, 0, "matching")))
        return TPROF_ENOMEM;
    size_t r = (size_t)i;
    double steps = tprof_rows_int(top, 0, "common_steps") > 0 ? (double)tprof_rows_int(top, 0, "common_steps") : 1.0;
    tprof_rows_set_i(t, r, CR_RANKS, (int64_t)traces);
    tprof_rows_set_i(t, r, CR_MATCHED, tprof_rows_int(top, 0, "matched"));
    tprof_rows_set_i(t, r, CR_STEPS, (int64_t)steps);
    if (!tprof_rows_at(top, 0, "straggler")->null) {
        tprof_rows_set_i(t, r, CR_STRAGGLER, tprof_rows_int(top, 0, "straggler"));
        tprof_rows_set_d(t, r, CR_COST, (double)tprof_rows_int(top, 0, "straggler_cost_ns") / steps);
    }
    double wait = 0;
    size_t nr = tprof_rows_count(ranks);
    for (size_t k = 0; k < nr; k++) wait += (double)tprof_rows_int(ranks, k, "wait_per_step_ns");
    tprof_rows_set_d(t, r, CR_WAIT, nr ? wait / (double)nr : 0.0);
    tprof_rows_set_i(t, r, CR_SKEW, tprof_rows_int(top, 0, "skew_computed") != 0);
    return 0;
}

/* One collective key's figures on each side. */
typedef struct {
    char key[320];
    long row[2]; /* its row in each side's collectives table, -1: absent */
    double change; /* |candidate - base| of the transfer time per step: the order */
} coll_key;

static void coll_key_of(const tprof_rows *g, size_t i, char *out, size_t cap)
{
    const tprof_cell *b = tprof_rows_at(g, i, "bytes");
    snprintf(out, cap, "%s\x1f%s\x1f%s\x1f%lld", tprof_rows_str(g, i, "type"), tprof_rows_str(g, i, "group"),
             tprof_rows_str(g, i, "dtype"), b->null ? -1LL : (long long)b->v.i);
}

static double coll_per_step(const tprof_result *c, long row, const char *col)
{
    if (!c || row < 0) return 0.0;
    const tprof_rows *top = tprof_result_top_c(c);
    double steps = tprof_rows_int(top, 0, "common_steps") > 0 ? (double)tprof_rows_int(top, 0, "common_steps") : 1.0;
    return (double)tprof_rows_int(tprof_result_table_c(c, 0), (size_t)row, col) / steps;
}

static int cmp_coll_delta(const void *x, const void *y)
{
    const coll_key *a = x, *b = y;
    if (a->change != b->change) return a->change > b->change ? -1 : 1;
    return strcmp(a->key, b->key);
}

/* The collectives of both sides: each side's run facts, and the keys matched. */
static int coll_deltas(tprof_result *res, tprof_rows *csv, const tprof_diff_fold *f)
{
    tprof_result *c[2] = { NULL, NULL };
    const size_t *nparts = f->got;
    int rc = side_collectives(f->coll[0], nparts[0], &c[0]);
    if (!rc) rc = side_collectives(f->coll[1], nparts[1], &c[1]);
    static const char *const side_name[2] = { "base", "candidate" };
    tprof_rows *run = tprof_result_table(res, TB_COLL_RUN);
    double wait[2] = { 0, 0 }, cost[2] = { 0, 0 };
    for (int s = 0; !rc && s < 2; s++) {
        if (!c[s]) continue;
        rc = coll_run_row(run, side_name[s], c[s], nparts[s]);
        size_t last = tprof_rows_count(run) - 1;
        wait[s] = tprof_rows_real(run, last, "wait_per_step_ns");
        cost[s] = tprof_rows_real(run, last, "straggler_cost_per_step_ns");
        if (cost[s] != cost[s]) cost[s] = 0; /* no straggler: nobody waited */
    }
    if (!rc && c[0] && c[1] &&
        (csv_row(csv, "collectives", "wait_per_step", "communication", wait[0], wait[1]) < 0 ||
         csv_row(csv, "collectives", "straggler_cost_per_step", "communication", cost[0], cost[1]) < 0))
        rc = TPROF_ENOMEM;
    coll_key *k = NULL;
    size_t n = 0;
    /* the keys compare two matchings: with one side alone there is nothing to compare */
    size_t cap = c[0] && c[1] ? tprof_rows_count(tprof_result_table_c(c[0], 0)) +
                                    tprof_rows_count(tprof_result_table_c(c[1], 0))
                              : 0;
    if (!rc && cap && !(k = malloc(cap * sizeof *k))) rc = TPROF_ENOMEM;
    for (int s = 0; !rc && cap && s < 2; s++) {
        const tprof_rows *g = tprof_result_table_c(c[s], 0);
        for (size_t i = 0; i < tprof_rows_count(g); i++) {
            char key[320];
            coll_key_of(g, i, key, sizeof key);
            size_t j = 0;
            while (j < n && strcmp(k[j].key, key)) j++; /* a run has a few dozen keys at most */
            if (j == n) {
                snprintf(k[n].key, sizeof k[n].key, "%s", key);
                k[n].row[0] = k[n].row[1] = -1;
                n++;
            }
            k[j].row[s] = (long)i;
        }
    }
    for (size_t i = 0; i < n; i++)
        k[i].change = fabs(coll_per_step(c[1], k[i].row[1], "transfer_ns") - coll_per_step(c[0], k[i].row[0], "transfer_ns"));
    if (!rc && n) qsort(k, n, sizeof *k, cmp_coll_delta);
    tprof_rows *t = tprof_result_table(res, TB_COLLS);
    for (size_t i = 0; !rc && i < n; i++) {
        int s0 = k[i].row[0] >= 0 ? 0 : 1; /* a side that has it, for the key's texts */
        const tprof_rows *g = tprof_result_table_c(c[s0], 0);
        size_t gr = (size_t)k[i].row[s0];
        long r = tprof_rows_add(t);
        if (r < 0 || tprof_rows_set_s(t, (size_t)r, CD_TYPE, tprof_rows_str(g, gr, "type")) ||
            tprof_rows_set_s(t, (size_t)r, CD_GROUP, tprof_rows_str(g, gr, "group")) ||
            tprof_rows_set_s(t, (size_t)r, CD_DTYPE, tprof_rows_str(g, gr, "dtype"))) {
            rc = TPROF_ENOMEM;
            break;
        }
        if (!tprof_rows_at(g, gr, "bytes")->null) tprof_rows_set_i(t, (size_t)r, CD_BYTES, tprof_rows_int(g, gr, "bytes"));
        double v[2], cps[2];
        for (int s = 0; s < 2; s++) {
            v[s] = coll_per_step(c[s], k[i].row[s], "transfer_ns");
            cps[s] = coll_per_step(c[s], k[i].row[s], "count");
            if (k[i].row[s] < 0) continue;
            const tprof_rows *gs = tprof_result_table_c(c[s], 0);
            size_t row = (size_t)k[i].row[s];
            tprof_rows_set_i(t, (size_t)r, s ? CD_CP50 : CD_BP50, tprof_rows_int(gs, row, "transfer_p50_ns"));
            if (!tprof_rows_at(gs, row, "busbw")->null)
                tprof_rows_set_d(t, (size_t)r, s ? CD_CBUS : CD_BBUS, tprof_rows_real(gs, row, "busbw"));
            tprof_rows_set_d(t, (size_t)r, s ? CD_CWAIT : CD_BWAIT, coll_per_step(c[s], k[i].row[s], "wait_ns"));
        }
        tprof_rows_set_d(t, (size_t)r, CD_BASE, v[0]);
        tprof_rows_set_d(t, (size_t)r, CD_CAND, v[1]);
        tprof_rows_set_d(t, (size_t)r, CD_DELTA, v[1] - v[0]);
        tprof_rows_set_d(t, (size_t)r, CD_PCT, tprof_diff_pct(v[0], v[1]));
        tprof_rows_set_d(t, (size_t)r, CD_BCPS, cps[0]);
        tprof_rows_set_d(t, (size_t)r, CD_CCPS, cps[1]);
        char name[400];
        const tprof_cell *b = tprof_rows_at(g, gr, "bytes");
        snprintf(name, sizeof name, "%s %s %s %lld", tprof_rows_str(g, gr, "type"), tprof_rows_str(g, gr, "group"),
                 tprof_rows_str(g, gr, "dtype"), b->null ? -1LL : (long long)b->v.i);
        long cr = csv_row(csv, "collective", name, "communication", v[0], v[1]);
        if (cr < 0) rc = TPROF_ENOMEM;
        else {
            tprof_rows_set_d(csv, (size_t)cr, CV_BCPS, cps[0]);
            tprof_rows_set_d(csv, (size_t)cr, CV_CCPS, cps[1]);
        }
    }
    free(k);
    tprof_result_free(c[0]);
    tprof_result_free(c[1]);
    return rc;
}

int tprof_diff_tables(const tprof_diff_result *r, const tprof_diff_fold *f, const tprof_diff_check *ck,
                      tprof_result **out)
{
    *out = NULL;
    if (!f->ended || f->failed) return TPROF_EIO;
    const size_t *nparts = f->got;
    *out = NULL;
    tprof_result *res = tprof_result_new(&tprof_diff_desc);
    if (!res) return TPROF_ENOMEM;
    int rc = 0;
    tprof_rows *csv = tprof_result_table(res, TB_CSV);
    for (size_t s = 0; !rc && s < 2; s++) {
        const tprof_diff_side *x = &r->side[s];
        tprof_rows *t = tprof_result_table(res, s ? TB_CAND : TB_BASE);
        tprof_rows *files = tprof_rows_add(t) == 0 ? tprof_rows_child(t, 0, 0) : NULL;
        if (!files) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(t, 0, SD_TRACES, (int64_t)x->traces);
        tprof_rows_set_i(t, 0, SD_STEPS, (int64_t)x->steps);
        tprof_rows_set_i(t, 0, SD_NO_STEPS, (int64_t)x->traces_no_steps);
        tprof_rows_set_i(t, 0, SD_PHASES, x->phases_found != 0);
        for (size_t i = 0; !rc && i < nparts[s]; i++) {
            const part_file *p = &f->files[s][i];
            char label[64];
            tprof_fmt_trace_label(label, sizeof label, p->rank, i);
            long k = tprof_rows_add(files);
            if (k < 0 || tprof_rows_set_s(files, (size_t)k, FL_LABEL, label) ||
                tprof_rows_set_s(files, (size_t)k, FL_FILE, p->path)) {
                rc = TPROF_ENOMEM;
                break;
            }
            tprof_rows_set_i(files, (size_t)k, FL_STEPS, (int64_t)p->steps);
            tprof_rows_set_i(files, (size_t)k, FL_TRUNCATED, p->truncated);
        }
    }
    static const char *const side_rows[] = { "traces", "steps", "traces_without_steps" };
    for (int i = 0; !rc && i < 3; i++) {
        const tprof_diff_side *s = r->side;
        double v[2];
        for (int k = 0; k < 2; k++)
            v[k] = (double)(i == 0 ? s[k].traces : i == 1 ? s[k].steps : s[k].traces_no_steps);
        if (csv_row(csv, "side", side_rows[i], "", v[0], v[1]) < 0) rc = TPROF_ENOMEM;
    }
    for (int m = 0; !rc && m < TPROF_DIFF_METRICS; m++) {
        const char *name = tprof_diff_metric_name((tprof_diff_metric)m);
        rc = pair_row(tprof_result_table(res, TB_METRICS), name, r->side[0].metric[m], r->side[1].metric[m]);
        if (!rc && csv_row(csv, "metric", name, "", r->side[0].metric[m], r->side[1].metric[m]) < 0) rc = TPROF_ENOMEM;
    }
    tprof_rows *comm = tprof_result_table(res, TB_COMM);
    for (size_t i = 0; !rc && i < r->ncomm; i++) {
        const tprof_diff_comm *x = &r->comm[i];
        long k = tprof_rows_add(comm);
        tprof_rows *tm = k < 0 ? NULL : tprof_rows_child(comm, (size_t)k, 0);
        tprof_rows *ex = k < 0 ? NULL : tprof_rows_child(comm, (size_t)k, 1);
        if (!tm || !ex || tprof_rows_set_s(comm, (size_t)k, 0, x->type)) {
            rc = TPROF_ENOMEM;
            break;
        }
        rc = pair_row(tm, "time", x->time_ns[0], x->time_ns[1]);
        if (!rc) rc = pair_row(ex, "exposed", x->exposed_ns[0], x->exposed_ns[1]);
        if (!rc && (csv_row(csv, "comm", x->type, "communication", x->time_ns[0], x->time_ns[1]) < 0 ||
                    csv_row(csv, "comm_exposed", x->type, "communication", x->exposed_ns[0], x->exposed_ns[1]) < 0))
            rc = TPROF_ENOMEM;
    }
    tprof_rows *kt = tprof_result_table(res, TB_KERNELS);
    if (!rc && tprof_rows_add(kt) != 0) rc = TPROF_ENOMEM;
    if (!rc) {
        tprof_rows_set_i(kt, 0, KT_MATCHED, (int64_t)r->matched);
        tprof_rows_set_i(kt, 0, KT_ONLY_BASE, (int64_t)r->only_base);
        tprof_rows_set_i(kt, 0, KT_ONLY_CAND, (int64_t)r->only_cand);
    }
    const size_t *lists[] = { r->regressions, r->improvements, r->gone, r->added };
    const size_t nlists[] = { r->nregressions, r->nimprovements, r->ngone, r->nadded };
    for (size_t l = 0; !rc && l < 4; l++) {
        tprof_rows *t = tprof_rows_child(kt, 0, l);
        if (!t) rc = TPROF_ENOMEM;
        for (size_t i = 0; !rc && i < nlists[l]; i++) rc = kernel_row(t, &r->kernels[lists[l][i]]);
    }
    tprof_rows *rows = rc ? NULL : tprof_rows_child(kt, 0, 4);
    if (!rc && !rows) rc = TPROF_ENOMEM;
    for (size_t i = 0; !rc && i < r->nkernels; i++) {
        const tprof_diff_kernel *k = &r->kernels[i];
        rc = kernel_row(rows, k);
        long c = rc ? -1 : csv_row(csv, "kernel", k->name, tprof_class_name(k->klass), k->total_per_step[0],
                                   k->total_per_step[1]);
        if (c < 0) {
            rc = TPROF_ENOMEM;
            break;
        }
        tprof_rows_set_i(csv, (size_t)c, CV_BCOUNT, (int64_t)k->count[0]);
        tprof_rows_set_i(csv, (size_t)c, CV_CCOUNT, (int64_t)k->count[1]);
        tprof_rows_set_d(csv, (size_t)c, CV_BCPS, k->count_per_step[0]);
        tprof_rows_set_d(csv, (size_t)c, CV_CCPS, k->count_per_step[1]);
        tprof_rows_set_d(csv, (size_t)c, CV_BMEAN, k->mean_ns[0]);
        tprof_rows_set_d(csv, (size_t)c, CV_CMEAN, k->mean_ns[1]);
        tprof_rows_set_i(csv, (size_t)c, CV_BVAR, (int64_t)k->variants[0]);
        tprof_rows_set_i(csv, (size_t)c, CV_CVAR, (int64_t)k->variants[1]);
        if (tprof_rows_set_s(csv, (size_t)c, CV_BTOP, k->top[0] ? k->top[0] : "") ||
            tprof_rows_set_s(csv, (size_t)c, CV_CTOP, k->top[1] ? k->top[1] : ""))
            rc = TPROF_ENOMEM;
    }
    const double steps[2] = { r->side[0].steps ? (double)r->side[0].steps : 1.0,
                              r->side[1].steps ? (double)r->side[1].steps : 1.0 };
    for (int which = 0; !rc && which < 2; which++)
        rc = op_deltas(tprof_result_table(res, which ? TB_MODULES : TB_OPS), csv, &f->ops[which], steps, which);
    if (!rc) rc = coll_deltas(res, csv, f);
    /* the critical path per sampled step: each side's traces averaged, when every trace of both has one */
    const double(*path)[2 + TPROF_CPB_COUNT] = f->path;
    int both = nparts[0] && nparts[1] && f->every_path;
    for (size_t k = 0; !rc && both && k < 2 + TPROF_CPB_COUNT; k++) {
        rc = pair_row(tprof_result_table(res, TB_PATH), path_rows[k], path[0][k], path[1][k]);
        if (!rc && csv_row(csv, "critical_path", path_rows[k], "", path[0][k], path[1][k]) < 0) rc = TPROF_ENOMEM;
    }
    if (!rc && ck && ck->on) {
        tprof_rows *t = tprof_result_table(res, TB_CHECK);
        if (tprof_rows_add(t) != 0 || tprof_rows_set_s(t, 0, CK_METRIC, tprof_diff_metric_name(ck->metric)))
            rc = TPROF_ENOMEM;
        else {
            tprof_rows_set_d(t, 0, CK_LIMIT, ck->limit);
            tprof_rows_set_d(t, 0, CK_PCT, ck->pct);
            tprof_rows_set_i(t, 0, CK_FAILED, ck->failed != 0);
        }
    }
    if (rc) {
        tprof_result_free(res);
        return rc;
    }
    *out = res;
    return 0;
}
