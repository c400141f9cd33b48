/* libFuzzer target: the safe pickle decoder, then the snapshot model, the
 * analysis, the timeline and the comparison over whatever it decoded. Any
 * input must give 0, TPROF_ETRUNC or an error with a message, never a crash,
 * a leak or a value handle out of range. */
#include <stdint.h>
#include <string.h>

#include "trainprof/error.h"
#include "trainprof/mem.h"
#include "trainprof/pickle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Visits values depth first, bounded (memo sharing can make cycles). */
static void walk(const tprof_pickle *p, tprof_pv v, int depth, size_t *budget)
{
    if (depth > 64 || *budget == 0) return;
    (*budget)--;
    if (!(v & 0x80000000u) && v >= tprof_pickle_nvalues(p)) __builtin_trap(); /* else an immediate int */
    size_t n;
    switch (tprof_pickle_type(p, v)) {
    case TPROF_PK_STR:
    case TPROF_PK_BYTES:
        if (!tprof_pickle_str(p, v, &n) || n > tprof_pickle_bytes(p)) __builtin_trap();
        break;
    case TPROF_PK_LIST:
    case TPROF_PK_TUPLE:
        n = tprof_pickle_len(p, v);
        for (size_t i = 0; i < n; i++) walk(p, tprof_pickle_item(p, v, i), depth + 1, budget);
        break;
    case TPROF_PK_DICT:
        n = tprof_pickle_len(p, v);
        for (size_t i = 0; i < n; i++) {
            walk(p, tprof_pickle_dict_key(p, v, i), depth + 1, budget);
            walk(p, tprof_pickle_dict_value(p, v, i), depth + 1, budget);
        }
        break;
    default:
        (void)tprof_pickle_int(p, v, 0);
        (void)tprof_pickle_float(p, v, 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    tprof_pickle *p;
    int rc = tprof_pickle_parse(&p, data, size, "fuzz", err, sizeof err);
    if (rc && rc != TPROF_ETRUNC) {
        if (p || !err[0]) __builtin_trap(); /* errors come with a message */
        return 0;
    }
    size_t budget = 100000;
    walk(p, tprof_pickle_root(p), 0, &budget);
    tprof_mem_snapshot *s;
    if (tprof_mem_snapshot_from_pickle(&s, p, "fuzz", err, sizeof err)) return 0;
    tprof_mem_opts o = { .depth = 2 };
    tprof_mem_report r, r2;
    if (tprof_mem_analyze(s, &o, &r) == 0) {
        for (size_t i = 0; i < r.ndev; i++) {
            tprof_mem_timeline t;
            if (tprof_mem_timeline_build(s, r.dev[i].device, 2, 3, 16, &t) == 0) tprof_mem_timeline_free(&t);
        }
        if (tprof_mem_analyze(s, &o, &r2) == 0) {
            tprof_mem_compare c;
            if (tprof_mem_compare_reports(&r, &r2, &c) == 0) {
                for (size_t i = 0; i < c.nrows; i++)
                    if (c.rows[i].delta != 0) __builtin_trap(); /* the same snapshot twice */
                tprof_mem_compare_free(&c);
            }
            tprof_mem_report_free(&r2);
        }
        tprof_mem_report_free(&r);
    }
    tprof_mem_snapshot_close(s);
    return 0;
}
