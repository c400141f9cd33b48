/* libFuzzer target: trainprof merge on two inputs cut from the fuzz data.
 * Whatever the inputs, a merge that succeeds must write a trace that the
 * reader accepts whole (valid JSON, not truncated), and fail cleanly
 * otherwise; the fast path (members copied as byte spans) and the token
 * path must write the same events. Options vary with the first byte; the
 * tiny memory budget makes every merge spill sorted runs.
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

/* At exit: the inputs and the directory (a merge removes its own
 * temporary files). */
static void cleanup(void)
{
    static const char *const names[] = { "a_rank0.json", "b_rank1.json", "out.json" };
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
    return 0;
}
