/* libFuzzer target: trainprof merge on two inputs cut from the fuzz data.
 * Whatever the inputs, a merge that succeeds must write a trace that the
 * reader accepts whole (valid JSON, not truncated), and fail cleanly
 * otherwise; the fast path (members copied as byte spans) and the token
 * path must write the same events. Options vary with the first byte; the
 * tiny memory budget makes every merge spill sorted runs.
 *
 * The first input also goes through tprof_trace_copy_with_events (the
 * critical-path overlay's copy): the output must be the input's bytes with
 * the events inserted once (or, for a cut input, a prefix of them, the
 * events and the closing brackets), or nothing with a message.
 *
 * The files live in /dev/shm where there is one (the output is synced
 * before its rename: on a disk that is most of the time of a small merge),
 * and one thread merges, so a run is repeatable. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainprof/error.h"
#include "trainprof/merge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static int put(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(p, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* The merged file, which must read back whole. */
static tprof_trace *read_back(const char *out)
{
    tprof_trace *t = NULL;
    char err[512];
    tprof_read_opts ro = { .keep = TPROF_KEEP_ALL, .threads = 1 };
    if (tprof_trace_read(&t, out, &ro, err, sizeof err) != 0) {
        fprintf(stderr, "merge output unreadable: %s\n", err);
        abort();
    }
    return t;
}

static int same_events(const tprof_trace *a, const tprof_trace *b)
{
    size_t n = tprof_trace_nevents(a);
    if (n != tprof_trace_nevents(b)) {
        fprintf(stderr, "event counts differ: %zu vs %zu\n", n, tprof_trace_nevents(b));
        return 0;
    }
    const tprof_event *x = tprof_trace_events(a), *y = tprof_trace_events(b);
    for (size_t i = 0; i < n; i++) {
        if (x[i].ts != y[i].ts || x[i].dur != y[i].dur || x[i].pid != y[i].pid || x[i].ph != y[i].ph ||
            x[i].kind != y[i].kind || x[i].flags != y[i].flags || x[i].correlation != y[i].correlation ||
            x[i].flow_id != y[i].flow_id || x[i].external_id != y[i].external_id ||
            strcmp(tprof_trace_str(a, x[i].name), tprof_trace_str(b, y[i].name)) != 0 ||
            strcmp(tprof_trace_str(a, x[i].cat), tprof_trace_str(b, y[i].cat)) != 0) {
            fprintf(stderr, "event %zu differs between the fast and the token path\n", i);
            return 0;
        }
    }
    return 1;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *b = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap && !(b = realloc(b, cap = cap ? 2 * cap : 4096))) abort();
        size_t r = fread(b + len, 1, cap - len, f);
        if (!r) break;
        len += r;
    }
    fclose(f);
    *n = len;
    return b;
}

/* The copy with events: IN (N bytes) with INS inserted at one place, or
 * for a cut input a prefix of IN, INS and the closing bracket(s). */
static void check_copy(const char *in_path, const uint8_t *in, size_t n, const char *out_path)
{
    static const char events[] = "{\"ph\":\"M\",\"name\":\"added\",\"pid\":1,\"args\":{}}";
    char err[512] = "";
    int cut = 0;
    unlink(out_path);
    int rc = tprof_trace_copy_with_events(in_path, out_path, events, sizeof events - 1, &cut, err, sizeof err);
    if (rc) {
        if (!err[0] || access(out_path, F_OK) == 0) abort(); /* a message, and no file */
        return;
    }
    size_t m;
    uint8_t *out = slurp(out_path, &m);
    if (!out) abort();
    size_t p = 0; /* where the output leaves the input */
    while (p < n && p < m && out[p] == in[p]) p++;
    const char *lead = "\n", *lead2 = ",\n";
    size_t at = p, el = sizeof events - 1;
    /* the inserted text: a newline (after a comma when events came before), the events */
    int ok = 0;
    for (int k = 0; k < 2 && !ok; k++) {
        const char *l = k ? lead2 : lead;
        size_t ll = strlen(l);
        for (size_t back = 0; back <= ll + el && back <= at && !ok; back++) { /* the inserted text may match the input */
            size_t s = at - back;
            if (s + ll + el > m || memcmp(out + s, l, ll) || memcmp(out + s + ll, events, el)) continue;
            size_t rest = s + ll + el;
            if (!cut) ok = m - rest == n - s && !memcmp(out + rest, in + s, n - s);
            else ok = (m - rest == 4 && !memcmp(out + rest, "\n]}\n", 4)) || (m - rest == 3 && !memcmp(out + rest, "\n]\n", 3));
        }
    }
    if (!ok) {
        fprintf(stderr, "copy with events: %zu input bytes, %zu output bytes, they part at %zu (cut %d)\n", n, m, p, cut);
        abort();
    }
    free(out);
    unlink(out_path);
}

/* At exit: the inputs and the directory (a merge removes its own
 * temporary files). */
static void cleanup(void)
{
    static const char *const names[] = { "a_rank0.json", "b_rank1.json", "out.json", "copy.json" };
    char p[96];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/dev/shm/tprof-fuzz-merge.XXXXXX");
        if (!mkdtemp(dir)) {
            snprintf(dir, sizeof dir, "/tmp/tprof-fuzz-merge.XXXXXX");
            if (!mkdtemp(dir)) abort();
        }
        atexit(cleanup);
    }
    uint8_t flags = data[0];
    data++, size--;
    /* two inputs: split at the first 0xFF byte, else in the middle */
    const uint8_t *cut = memchr(data, 0xFF, size);
    size_t n1 = cut ? (size_t)(cut - data) : size / 2, n2 = size - n1 - (cut ? 1 : 0);
    char a[96], b[96], out[96];
    snprintf(a, sizeof a, "%s/a_rank0.json", dir);
    snprintf(b, sizeof b, "%s/b_rank1.json", dir);
    snprintf(out, sizeof out, "%s/out.json", dir);
    if (put(a, data, n1) || put(b, data + n1 + (cut ? 1 : 0), n2)) abort();
    const char *in[] = { a, b };
    const char *drop[] = { "cpu_op" };
    int64_t ranks[] = { 1 };
    tprof_merge_opts o = { .inputs = in, .ninputs = 2, .output = out, .mem_budget = 4096, .threads = 1 };
    o.align = (tprof_align)(flags % 5);
    if (flags & 0x08) o.min_dur_ns = 1000;
    if (flags & 0x10) o.drop_cats = drop, o.ndrop_cats = 1;
    if (flags & 0x20) o.has_steps = 1, o.step_first = 1, o.step_last = 2;
    if (flags & 0x40) o.ranks = ranks, o.nranks = 1;
    if (flags & 0x80) o.ninputs = 1;
    tprof_merge_report *rep = NULL;
    char err[1024] = "";
    int rc = tprof_merge(&o, &rep, err, sizeof err);
    tprof_trace *t = NULL;
    if (rc == 0 || rc == TPROF_ETRUNC) {
        if (!rep) abort();
        t = read_back(out);
        tprof_merge_report_free(rep);
    } else if (rep || !err[0]) {
        abort(); /* a failure carries a message and no report */
    }
    /* the token path */
    o.generic_only = 1;
    char err2[1024] = "";
    rep = NULL;
    int rc2 = tprof_merge(&o, &rep, err2, sizeof err2);
    if (rc2 != rc) {
        fprintf(stderr, "fast path %d (%s), token path %d (%s)\n", rc, err, rc2, err2);
        abort();
    }
    if (rep) {
        tprof_trace *t2 = read_back(out);
        if (!same_events(t, t2)) abort();
        tprof_trace_free(t2);
        tprof_merge_report_free(rep);
    }
    tprof_trace_free(t);
    unlink(out);
    char copy[96];
    snprintf(copy, sizeof copy, "%s/copy.json", dir);
    check_copy(a, data, n1, copy);
    return 0;
}
