/* What an input is, from its first bytes (include/trainprof/source.h).
 *
 * Called on a read that failed, and by `log` on its first bytes (a trace,
 * a snapshot or a config is refused before its keys read as metrics), over
 * the bytes the source already delivered: nothing is read again and nothing
 * in the input is run. The
 * rules are deliberately narrow (a wrong hint is worse than none): each
 * kind is named only on a mark that the others cannot have. */
#include "trainprof/source.h"

#include <stdio.h>
#include <string.h>

static int is_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* WORD (any case) followed by a number a few separators on, as logs write
 * a metric: "loss 2.5", "loss=2.5", "'loss': 2.5", "step 10", "iter 5"
 * (not merely the word, which source code and prose have). */
static int metric_word(const uint8_t *p, size_t n, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w < n; i++) {
        size_t k = 0;
        while (k < w && (p[i + k] | 0x20) == (uint8_t)word[k]) k++;
        if (k < w) continue;
        size_t j = i + w, stop = j + 4 < n ? j + 4 : n;
        while (j < stop && strchr(" :='\"#[", p[j]) && p[j]) j++;
        if (j > i + w && j < n && p[j] >= '0' && p[j] <= '9') return 1;
    }
    return 0;
}

/* The keys of the top-level object that lie within the head, as
 * "\1key\1key\1" in OUT (a key cut at the end of the head is left out), and
 * whether a second top-level value follows the first (JSON lines). */
static void top_keys(const uint8_t *p, size_t n, char *out, size_t cap, int *second_value)
{
    size_t o = 0, i = 0;
    int depth = 0, after_value = 0;
    out[o++] = 1;
    *second_value = 0;
    while (i < n) {
        uint8_t c = p[i];
        if (c == '"') {
            size_t s = ++i;
            while (i < n && p[i] != '"') i += p[i] == '\\' ? 2 : 1;
            if (i >= n) break;
            size_t e = i++;
            while (i < n && is_ws(p[i])) i++;
            if (depth == 1 && i < n && p[i] == ':' && o + (e - s) + 2 < cap) {
                memcpy(out + o, p + s, e - s);
                o += e - s;
                out[o++] = 1;
            }
            continue;
        }
        if (c == '{' || c == '[') {
            if (depth == 0 && after_value) {
                *second_value = 1;
                break;
            }
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) after_value = 1;
            if (depth < 0) break;
        }
        i++;
    }
    out[o] = 0;
}

static int key_in(const char *keys, const char *k)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\1%s\1", k);
    return strstr(keys, pat) != NULL;
}

/* Whether the header line P[0..E) has a cell (quotes and spaces around it
 * dropped) that is one of NAMES. */
static int header_cell(const uint8_t *p, size_t e, const char *const *names)
{
    for (size_t a = 0; a < e;) {
        size_t b = a;
        while (b < e && p[b] != ',') b++;
        size_t s = a, t = b;
        while (s < t && (p[s] == ' ' || p[s] == '"')) s++;
        while (t > s && (p[t - 1] == ' ' || p[t - 1] == '"' || p[t - 1] == '\r')) t--;
        for (const char *const *k = names; *k; k++)
            if (strlen(*k) == t - s && !memcmp(p + s, *k, t - s)) return 1;
        a = b + 1;
    }
    return 0;
}

/* Columns of the Ascend profiler's CSV files (kernel_details.csv,
 * op_summary, the cluster step-trace table) that no other tool writes
 * together: TPROF_INPUT_ASCEND_KERNELS for a table of device tasks (a
 * name, a start and a duration per row: lib/trace/ascend.c reads it as a
 * trace), TPROF_INPUT_ASCEND_CSV for the others, else 0. */
static int ascend_csv_header(const uint8_t *p, size_t n)
{
    size_t e = 0, commas = 0;
    while (e < n && p[e] != '\n') commas += p[e++] == ',';
    if (commas < 2) return 0;
    static const char *const name[] = { "Name", "Op Name", NULL },
                             *const start[] = { "Start Time(us)", "Task Start Time(us)", NULL },
                             *const dur[] = { "Duration(us)", "Task Duration(us)", NULL };
    static const char *const component[] = { "Component", NULL }, *const allocated[] = { "Total Allocated(MB)", NULL },
                             *const size[] = { "Size(KB)", NULL }, *const made[] = { "Allocation Time(us)", NULL };
    if ((header_cell(p, e, component) && header_cell(p, e, allocated)) ||
        (header_cell(p, e, size) && header_cell(p, e, made)))
        return TPROF_INPUT_ASCEND_MEMORY; /* memory_record.csv, operator_memory.csv */
    static const char *const computing[] = { "Computing", NULL }, *const free_time[] = { "Free", NULL },
                             *const exposed[] = { "Communication(Not Overlapped)", NULL };
    if (header_cell(p, e, computing) && header_cell(p, e, free_time) && header_cell(p, e, exposed))
        return TPROF_INPUT_ASCEND_STEPS; /* step_trace_time.csv, cluster_step_trace_time.csv */
    int kernels = header_cell(p, e, name) && header_cell(p, e, start) && header_cell(p, e, dur);
    static const char *const cols[] = { "Step Id,",          "Op Name,",   "OP Type,",
                                        "Accelerator Core,", "Task Type,", "Task Duration(us)" };
    for (size_t k = 0; k < sizeof cols / sizeof *cols; k++)
        if (memmem(p, e, cols[k], strlen(cols[k]))) return kernels ? TPROF_INPUT_ASCEND_KERNELS : TPROF_INPUT_ASCEND_CSV;
    return 0;
}

/* Mostly text: no NUL and few control bytes other than whitespace and ESC
 * (colour codes in logs). */
static int is_text(const uint8_t *p, size_t n)
{
    size_t odd = 0;
    for (size_t i = 0; i < n; i++) {
        if (!p[i]) return 0;
        odd += p[i] < 0x20 && !is_ws(p[i]) && p[i] != 0x1b;
    }
    return odd * 50 <= n;
}

tprof_input_kind tprof_input_sniff(const void *head, size_t n)
{
    const uint8_t *p = head;
    if (n >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5) return TPROF_INPUT_SNAPSHOT; /* pickle PROTO 2..5 */
    if (n >= 16 && !memcmp(p, "SQLite format 3", 16)) return TPROF_INPUT_ASCEND_DB; /* the header string, NUL included */
    if (n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) p += 3, n -= 3;      /* a BOM: look past it */
    size_t i = 0;
    while (i < n && is_ws(p[i])) i++;
    if (i == n) return TPROF_INPUT_UNKNOWN;
    if (p[i] == '{' && i + 1 < n && p[i + 1] != '\'') {
        char keys[1024];
        int more;
        top_keys(p + i, n - i, keys, sizeof keys, &more);
        if (key_in(keys, "traceEvents") || key_in(keys, "schemaVersion") || key_in(keys, "deviceProperties") ||
            key_in(keys, "distributedInfo") || key_in(keys, "baseTimeNanoseconds") || key_in(keys, "displayTimeUnit"))
            return TPROF_INPUT_TRACE;
        if (key_in(keys, "nodes") && (key_in(keys, "schema") || key_in(keys, "pid")))
            return TPROF_INPUT_EXEC_TRACE;
        /* one record per line (JSON lines): a log, even when its first
         * record is the run's config */
        if (more) return TPROF_INPUT_LOG;
        if (key_in(keys, "architectures") || key_in(keys, "hidden_size") ||
            (key_in(keys, "model_type") && key_in(keys, "vocab_size")))
            return TPROF_INPUT_CONFIG;
        if (strstr(keys, "loss")) return TPROF_INPUT_LOG;
        /* Ascend's communication.json / cluster_communication.json /
         * communication_matrix.json: nested groups whose leaves carry these
         * keys, with units in their names */
        static const char *const ascend_keys[] = { "\"Communication Time Info\"", "\"Communication Bandwidth Info\"",
                                                   "\"Bandwidth(GB/s)\"" };
        for (size_t k = 0; k < sizeof ascend_keys / sizeof *ascend_keys; k++)
            if (memmem(p + i, n - i, ascend_keys[k], strlen(ascend_keys[k]))) return TPROF_INPUT_ASCEND_JSON;
        return TPROF_INPUT_UNKNOWN;
    }
    if (p[i] == '[') /* a bare event array: its events have a phase */
        return memmem(p + i, n - i, "\"ph\"", 4) ? TPROF_INPUT_TRACE : TPROF_INPUT_UNKNOWN;
    if (!is_text(p, n)) return TPROF_INPUT_UNKNOWN;
    int ascend = ascend_csv_header(p + i, n - i);
    if (ascend) return (tprof_input_kind)ascend;
    /* text with a loss or a step counter (a Python-repr dict line, tqdm,
     * "step 10 | loss 2.1", "iter 5: loss=...") */
    if (metric_word(p, n, "loss") || metric_word(p, n, "step") || metric_word(p, n, "iter"))
        return TPROF_INPUT_LOG;
    return TPROF_INPUT_UNKNOWN;
}

const char *tprof_input_hint(tprof_input_kind seen, unsigned accepts)
{
    if (accepts & TPROF_INPUT_BIT(seen)) return NULL;
    switch (seen) {
    case TPROF_INPUT_TRACE:
        return "this is a Chrome/PyTorch profiler trace: use trainprof kernels, summary or another trace command";
    case TPROF_INPUT_SNAPSHOT: return "this is a CUDA memory snapshot (pickle): use trainprof mem";
    case TPROF_INPUT_EXEC_TRACE:
        return "this is a PyTorch execution trace (not a profiler trace): give the Kineto trace recorded "
               "beside it (torch.profiler's *.pt.trace.json)";
    case TPROF_INPUT_ASCEND_CSV:
        return "this is an Ascend profiler CSV (like op_statistic.csv): not read yet; "
               "give the run's kernel_details.csv or trace_view.json";
    case TPROF_INPUT_ASCEND_KERNELS:
        return "this is an Ascend kernel table (kernel_details.csv): use trainprof kernels, summary or another "
               "trace command";
    case TPROF_INPUT_LOG: return "this looks like a training log: use trainprof log";
    case TPROF_INPUT_CONFIG: return "this is a model config: use trainprof flops or mfu (--config)";
    case TPROF_INPUT_ASCEND_STEPS:
        return "this is Ascend's step split (step_trace_time.csv or msprof-analyze's cluster_step_trace_time.csv): "
               "use trainprof steps, ranks or advice";
    case TPROF_INPUT_ASCEND_MEMORY:
        return "this is Ascend's memory view (memory_record.csv or operator_memory.csv): use trainprof mem on "
               "memory_record.csv";
    case TPROF_INPUT_ASCEND_DB:
        return "this is an SQLite database (like Ascend's ascend_pytorch_profiler_0.db): use trainprof kernels, "
               "summary or another trace command";
    case TPROF_INPUT_ASCEND_JSON:
        return "this is an Ascend profiler communication summary (like communication.json): use trainprof comm or collectives";
    default: return NULL;
    }
}

void tprof_input_hint_append(const void *head, size_t n, unsigned accepts, char *errbuf, size_t errlen)
{
    if (!errbuf || !errlen || !head) return;
    const char *h = tprof_input_hint(tprof_input_sniff(head, n), accepts);
    if (!h || strstr(errbuf, TPROF_HINT_MARK)) return;
    size_t l = strlen(errbuf), need = strlen(TPROF_HINT_MARK) + strlen(h) + 1;
    if (l + need > errlen) return; /* only whole: a cut hint misleads */
    snprintf(errbuf + l, errlen - l, "%s%s", TPROF_HINT_MARK, h);
}
