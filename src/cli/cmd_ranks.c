/* trainprof ranks: the ranks side by side, the straggler, step-time skew. */
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
            "usage: trainprof ranks [options] TRACE...\n\n"
            "One row per rank (one trace each): steps, mean step time, kernel span, idle,\n"
            "compute, communication and exposed communication; the straggler (the rank\n"
            "whose compute is at least 10%% above the ranks' median, while the others\n"
            "wait in collectives) and the skew of each step's time across ranks.\n\n"
            "options:\n" CLI_COMMON_HELP);
}

static int all(void *ctx, const tprof_trace *const *tr, size_t nt, cli_out *out)
{
    (void)ctx;
    tprof_ranks_result *r;
    int rc = tprof_ranks(tr, nt, &r);
    if (rc) return rc;
    if (out->fmt == FMT_JSON) {
        tprof_jw *w = &out->jw;
        tprof_jw_obj(w);
        tprof_jw_key(w, "ranks");
        tprof_jw_arr(w);
        for (size_t i = 0; i < r->nranks; i++) {
            const tprof_rank_row *x = &r->ranks[i];
            tprof_jw_obj(w);
            tprof_jw_kint(w, "rank", x->rank);
            tprof_jw_kstr(w, "file", tprof_trace_meta_get(tr[i])->path);
            tprof_jw_kuint(w, "steps", x->nsteps);
            tprof_jw_kint(w, "step_mean_ns", x->step_mean_ns);
            tprof_jw_kint(w, "span_ns", x->temporal.span_ns);
            tprof_jw_kint(w, "idle_ns", x->temporal.idle_ns);
            tprof_jw_kint(w, "compute_ns", x->temporal.compute_ns);
            tprof_jw_kint(w, "comm_ns", x->comm_ns);
            tprof_jw_kint(w, "exposed_comm_ns", x->exposed_comm_ns);
            tprof_jw_obj_end(w);
        }
        tprof_jw_arr_end(w);
        tprof_jw_kint(w, "compute_median_ns", r->compute_median_ns);
        tprof_jw_kint(w, "others_exposed_mean_ns", r->others_exposed_mean_ns);
        tprof_jw_key(w, "straggler");
        if (r->straggler >= 0) tprof_jw_int(w, r->ranks[r->straggler].rank); else tprof_jw_null(w);
        tprof_jw_kdouble(w, "straggler_excess", r->straggler_excess);
        tprof_jw_kuint(w, "common_steps", r->common_steps);
        tprof_jw_kint(w, "skew_max_ns", r->skew_max_ns);
        tprof_jw_kint(w, "skew_mean_ns", r->skew_mean_ns);
        tprof_jw_key(w, "skew_max_step");
        if (r->common_steps) tprof_jw_int(w, r->skew_max_step); else tprof_jw_null(w);
        tprof_jw_obj_end(w);
    } else if (out->fmt == FMT_CSV) {
        for (size_t i = 0; i < r->nranks; i++) {
            const tprof_rank_row *x = &r->ranks[i];
            printf("%" PRId64 ",", x->rank);
            tprof_csv_field(stdout, tprof_trace_meta_get(tr[i])->path);
            printf(",%zu,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%d\n", x->nsteps,
                   x->step_mean_ns, x->temporal.span_ns, x->temporal.idle_ns, x->temporal.compute_ns, x->comm_ns,
                   x->exposed_comm_ns, (long)i == r->straggler);
        }
    } else {
        const char *hdr[] = { "rank", "steps", "step mean", "span", "idle", "compute", "comm", "exposed comm" };
        tprof_table *t = tprof_table_new(8, hdr, "lrrrrrrr");
        for (size_t i = 0; t && i < r->nranks; i++) {
            const tprof_rank_row *x = &r->ranks[i];
            char rk[48], st[32], sm[32], sp[32], id[48], cp[48], cm[32], ex[48], d[32];
            snprintf(rk, sizeof rk, "%" PRId64 "%s", x->rank, (long)i == r->straggler ? " (straggler)" : "");
            snprintf(st, sizeof st, "%zu", x->nsteps);
            tprof_fmt_duration(sm, sizeof sm, x->step_mean_ns);
            tprof_fmt_duration(sp, sizeof sp, x->temporal.span_ns);
            snprintf(id, sizeof id, "%s %.0f%%", tprof_fmt_duration(d, sizeof d, x->temporal.idle_ns),
                     cli_pct(x->temporal.idle_ns, x->temporal.span_ns));
            snprintf(cp, sizeof cp, "%s %.0f%%", tprof_fmt_duration(d, sizeof d, x->temporal.compute_ns),
                     cli_pct(x->temporal.compute_ns, x->temporal.span_ns));
            tprof_fmt_duration(cm, sizeof cm, x->comm_ns);
            snprintf(ex, sizeof ex, "%s %.0f%%", tprof_fmt_duration(d, sizeof d, x->exposed_comm_ns),
                     cli_pct(x->exposed_comm_ns, x->comm_ns));
            const char *cells[] = { rk, st, sm, sp, id, cp, cm, ex };
            tprof_table_row(t, cells);
        }
        if (t) tprof_table_print(t, stdout);
        tprof_table_free(t);
        char a[32], b[32];
        if (r->straggler >= 0)
            printf("\nstraggler: rank %" PRId64 ", compute %s, %.0f%% above the other ranks' median %s, while they "
                   "wait longer in collectives\n",
                   r->ranks[r->straggler].rank, tprof_fmt_duration(a, sizeof a, r->ranks[r->straggler].temporal.compute_ns),
                   r->straggler_excess * 100, tprof_fmt_duration(b, sizeof b, r->compute_median_ns));
        else
            printf("\nno straggler: the rank with the most compute is not %.0f%% above the others' median with "
                   "less exposed communication than theirs\n",
                   TPROF_STRAGGLER_MIN * 100);
        if (r->common_steps)
            printf("step-time skew across ranks over %zu common steps: max %s (ProfilerStep#%" PRId64 "), mean %s\n",
                   r->common_steps, tprof_fmt_duration(a, sizeof a, r->skew_max_ns), r->skew_max_step,
                   tprof_fmt_duration(b, sizeof b, r->skew_mean_ns));
        else
            printf("step-time skew: no step number common to all ranks\n");
    }
    tprof_ranks_free(r);
    return 0;
}

int cmd_ranks(int argc, char **argv)
{
    static const cli_spec spec = {
        .help = help, .keep = TPROF_RANKS_KEEP, .all = all,
        .csv_header = "rank,file,steps,step_mean_ns,span_ns,idle_ns,compute_ns,comm_ns,exposed_comm_ns,straggler",
    };
    return cli_run(argc, argv, &spec, NULL);
}
