/* For each trace given: every result type's tables (temporal, steps,
 * launch, comm, idle) written in the text form, read back and compared cell by
 * cell, and their JSON rendered from both compared byte for byte. Prints one
 * line per trace and type; exits 1 on any difference (tests/cli/schema.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/analysis.h"
#include "trainprof/error.h"

static char *json_of(const tprof_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    tprof_jw w;
    tprof_jw_init(&w, f);
    tprof_jw_obj(&w);
    tprof_result_json_members(r, &w);
    tprof_jw_obj_end(&w);
    fclose(f);
    return buf;
}

/* 0 when R survives the text form; prints why not. */
static int round_trip(const char *path, const tprof_result *r)
{
    const tprof_result_desc *d = tprof_result_desc_of(r);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f || tprof_result_write(r, f)) return 1;
    fclose(f);
    f = fmemopen(buf, len, "r");
    tprof_result *back = NULL;
    char err[256] = "";
    int rc = f ? tprof_result_read(&back, tprof_result_desc_find(d->name), f, err, sizeof err) : TPROF_EIO;
    if (f) fclose(f);
    int bad = rc || !tprof_result_equal(r, back);
    char *a = json_of(r), *b = back ? json_of(back) : NULL;
    bad |= !a || !b || strcmp(a, b) != 0;
    printf("%s %s: %s (%zu bytes)%s%s\n", bad ? "DIFF" : "same", d->name, path, len, err[0] ? " " : "", err);
    free(a);
    free(b);
    free(buf);
    tprof_result_free(back);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        tprof_trace *t;
        char err[512];
        tprof_read_opts o = { .keep = TPROF_KEEP_ALL };
        int rc = tprof_trace_read(&t, argv[i], &o, err, sizeof err);
        if (rc && rc != TPROF_ETRUNC) {
            printf("skip %s: %s\n", argv[i], err);
            continue;
        }
        tprof_result *r[5] = { 0 };
        tprof_temporal_result tr;
        if (tprof_temporal(t, NULL, &tr) == 0) tprof_temporal_tables(&tr, &r[0]);
        tprof_steps_result *sr;
        if (tprof_steps(t, &sr) == 0) {
            tprof_steps_tables(sr, &r[1]);
            tprof_steps_free(sr);
        }
        tprof_launch_result lr;
        if (tprof_launch_overhead(t, &lr) == 0) tprof_launch_tables(&lr, &r[2]);
        tprof_comm_result *cr;
        if (tprof_comm(t, &cr) == 0) {
            tprof_comm_tables(cr, &r[3]);
            tprof_comm_free(cr);
        }
        tprof_idle_result *ir;
        if (tprof_idle(t, NULL, &ir) == 0) {
            tprof_idle_tables(ir, &r[4]);
            tprof_idle_free(ir);
        }
        for (int k = 0; k < 5; k++) {
            if (!r[k]) {
                printf("DIFF: %s: result %d was not made\n", argv[i], k);
                bad = 1;
                continue;
            }
            bad |= round_trip(argv[i], r[k]);
            tprof_result_free(r[k]);
        }
        tprof_trace_free(t);
    }
    return bad;
}
