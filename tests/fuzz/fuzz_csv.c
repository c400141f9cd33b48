/* libFuzzer target: the CSV reader (lib/io/csv.c) fed a few bytes per read,
 * so that quotes, CRLFs and the byte order mark fall across reads, and the
 * Ascend kernel table and step table readers over the same bytes
 * (lib/trace/ascend.c, ascend_steps.c, through tprof_trace_read_mem, whose
 * JSON reader hands a table on to them),
 * and Ascend's memory view (lib/mem/ascend.c: the bytes as memory_record.csv,
 * and as the operator_memory.csv beside it, through an in-memory file).
 * The rows read through small reads must equal those read at once. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/io/csv.h"
#include "trainprof/analysis.h"
#include "trainprof/mem.h"
#include "trainprof/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    const uint8_t *p;
    size_t n, at, step;
} feed;

static ssize_t feed_read(void *ctx, void *buf, size_t cap)
{
    feed *f = ctx;
    size_t k = f->n - f->at < cap ? f->n - f->at : cap;
    if (f->step && k > f->step) k = f->step;
    memcpy(buf, f->p + f->at, k);
    f->at += k;
    return (ssize_t)k;
}

/* A digest of every row and field read with reads of STEP bytes (0: as many as asked). */
static uint64_t rows_digest(const uint8_t *data, size_t size, size_t step, int *last_rc)
{
    feed f = { data, size, 0, step };
    tprof_csv *c;
    if (tprof_csv_open(&c, feed_read, &f)) return 0;
    uint64_t h = 1469598103934665603ull;
    char **fields;
    size_t n;
    int rc;
    while ((rc = tprof_csv_row(c, &fields, &n)) > 0) {
        h = (h ^ (uint64_t)n) * 1099511628211ull;
        for (size_t i = 0; i < n; i++)
            for (const char *s = fields[i];; s++) {
                h = (h ^ (uint8_t)*s) * 1099511628211ull;
                if (!*s) break;
            }
    }
    *last_rc = rc;
    tprof_csv_close(c);
    return h;
}

static char mem_dir[64];

static void remove_mem_dir(void)
{
    char p[96];
    snprintf(p, sizeof p, "%s/memory_record.csv", mem_dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/operator_memory.csv", mem_dir);
    unlink(p);
    rmdir(mem_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc_whole, rc_small;
    uint64_t whole = rows_digest(data, size, 0, &rc_whole);
    uint64_t small = rows_digest(data, size, 1 + (size % 7), &rc_small);
    if (whole != small || rc_whole != rc_small) abort(); /* the split of the reads changed what was read */

    tprof_trace *t = NULL;
    char err[512];
    tprof_read_opts o = { .keep = TPROF_KEEP_ALL };
    int rc = tprof_trace_read_mem(&t, data, size, "fuzz.csv", &o, err, sizeof err);
    if (t) {
        tprof_kernels_result *r;
        tprof_kernels_opts ko = { .by = TPROF_BY_NAME, .step_first = -1, .step_last = -1 };
        if (tprof_kernels(t, &ko, &r) == 0) tprof_kernels_free(r);
        tprof_result *tasks = tprof_result_new(&tprof_kernels_desc[TPROF_BY_NAME]); /* the task columns per kernel */
        if (tasks) (void)tprof_ascend_task_rows(t, &ko, tprof_result_table(tasks, 2));
        tprof_result_free(tasks);
        tprof_steps_result *sr;
        if (tprof_steps(t, &sr) == 0) tprof_steps_free(sr);
        tprof_ranks_result *rr; /* a step table's splits through the slow-rank check */
        if (tprof_ranks((const tprof_trace *const *)&t, 1, &rr) == 0) tprof_ranks_free(rr);
        tprof_trace_free(t);
    }
    (void)rc;

    /* the memory view: a directory of memory_record.csv and operator_memory.csv, both these bytes */
    if (!mem_dir[0]) {
        snprintf(mem_dir, sizeof mem_dir, "/tmp/fuzz_csv_mem.%d", (int)getpid());
        if (mkdir(mem_dir, 0700) && access(mem_dir, W_OK)) return 0;
        atexit(remove_mem_dir);
    }
    char rec[96], ops[96];
    snprintf(rec, sizeof rec, "%s/memory_record.csv", mem_dir);
    snprintf(ops, sizeof ops, "%s/operator_memory.csv", mem_dir);
    FILE *f = fopen(rec, "wb"), *g = fopen(ops, "wb");
    if (f && g && fwrite(data, 1, size, f) == size && fwrite(data, 1, size, g) == size) {
        fclose(f), fclose(g);
        f = g = NULL;
        tprof_result *m;
        if (tprof_mem_ascend(rec, &m, err, sizeof err) == 0 || m) tprof_result_free(m);
    }
    if (f) fclose(f);
    if (g) fclose(g);
    return 0;
}
