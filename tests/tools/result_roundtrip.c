/* For each trace given: every result type's tables (temporal, steps,
 * launch, comm, idle, kernels by name, class and stream, ops by name,
 * shape, module and category, rank facts,
 * findings, summary rows, info, [memory] events and their timeline, the
 * trace diffed against itself and diff's part of it), and
 * for each .pickle given its mem report, comparison and timeline; flops,
 * mfu, log and merge on built-in inputs. Each is written in the text form, read back and compared
 * cell by cell, and their JSON rendered from both compared byte for byte.
 * Then, per type, the traces' results combined across ranks as made and as
 * read back: equal ("reduced elsewhere" means the same); the ranks reduced
 * from the facts and the summary from its parts, likewise. Prints one line
 * per input and type; exits 1 on any difference (tests/cli/schema.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainprof/analysis.h"
#include "trainprof/diff.h"
#include "trainprof/error.h"
#include "trainprof/flops.h"
#include "trainprof/log.h"
#include "trainprof/mem.h"
#include "trainprof/merge.h"

static char *json_of(const tprof_result *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    tprof_jw w;
    tprof_jw_init(&w, f);
    tprof_jw_obj(&w);
    tprof_result_json_members(r, 0, &w);
    tprof_jw_obj_end(&w);
    fclose(f);
    return buf;
}

enum { KERNELS = 5, FACTS = 8, FINDINGS = 9, SUMMARY_TRACE = 10, INFO = 11, MEM_TRACE = 12,
       MEM_TRACE_TIMELINE = 13, DIFF = 14, OPS = 15 /* every grouping */, COLL = OPS + TPROF_OPS_GROUPINGS,
       PATH = COLL + 1, DIFF_PART = PATH + 1, NTYPES = DIFF_PART + 1 };

/* 0 when R survives the text form; prints why not. *BACK is the copy read. */
static int round_trip(const char *path, const tprof_result *r, tprof_result **back_out)
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
    *back_out = back;
    return bad;
}

static tprof_result *kernels_of(const tprof_trace *t, tprof_group_by by)
{
    tprof_kernels_opts o = { .by = by, .step_first = -1, .step_last = -1 };
    tprof_kernels_result *kr;
    tprof_result *r = NULL;
    if (tprof_kernels(t, &o, &kr) == 0) {
        tprof_kernels_tables(kr, &r);
        tprof_kernels_free(kr);
    }
    return r;
}

/* Combines N results of one type (kernels and ops re-sort their rows after). */
static tprof_result *combine(tprof_result *const *rs, size_t n)
{
    const tprof_result_desc *d = tprof_result_desc_of(rs[0]);
    if (!strncmp(d->name, "ops", 3)) {
        tprof_result *out = NULL;
        tprof_ops_combine((const tprof_result *const *)rs, NULL, n, &out);
        return out;
    }
    if (!strncmp(d->name, "kernels", 7)) {
        tprof_result *out = NULL;
        tprof_kernels_tables_combine((const tprof_result *const *)rs, NULL, n, &out);
        return out;
    }
    return tprof_ranks_combine((const tprof_result *const *)rs, NULL, n);
}

/* flops and mfu on a small built-in model: their results survive the text form too. */
static int model_results(void)
{
    static const char cfg[] = "{\"model_type\": \"llama\", \"hidden_size\": 1024, \"intermediate_size\": 2816, "
                              "\"num_hidden_layers\": 4, \"num_attention_heads\": 8, \"num_key_value_heads\": 8, "
                              "\"vocab_size\": 32000}";
    tprof_model *m;
    char err[256];
    if (tprof_model_parse(&m, cfg, sizeof cfg - 1, "built-in", err, sizeof err)) {
        printf("DIFF: the built-in config: %s\n", err);
        return 1;
    }
    static const int64_t seqs[] = { 1024, 512 };
    tprof_flops_input in = { .seqlens = seqs, .nseqs = 2 };
    tprof_flops f;
    int bad = tprof_flops_estimate(m, &in, &f, err, sizeof err) != 0;
    tprof_result *r = NULL, *back = NULL;
    if (!bad) bad = tprof_flops_tables("built-in", m, &in, &f, &r) != 0;
    if (!bad) bad = round_trip("built-in", r, &back);
    tprof_result_free(r);
    tprof_result_free(back);
    tprof_mfu_step steps[2] = { { .trace = "t.json", .step = 3, .seconds = 0.5, .tflops_gpu = 312.25 },
                                { .trace = "t.json", .step = 4, .seconds = 0.25, .tflops_gpu = 624.5 } };
    steps[0].m.mfu = 1.0 / 3;
    tprof_mfu_run run = { .config = "built-in", .model_type = "llama", .peak_tflops = 989, .world_size = 8,
                          .tokens_per_rank = f.tokens, .flops_per_step = f.total, .traces = 1 };
    r = back = NULL;
    if (!bad) bad = tprof_mfu_tables(&run, steps, 2, &steps[1], &r) != 0;
    if (!bad) bad = round_trip("built-in", r, &back);
    tprof_result_free(r);
    tprof_result_free(back);
    tprof_model_free(m);
    return bad;
}

/* The report of a memory snapshot, its comparison with itself, its timeline. */
static int mem_result(const char *path)
{
    tprof_mem_snapshot *s;
    char err[512];
    if (tprof_mem_snapshot_open(&s, path, err, sizeof err)) {
        printf("DIFF: %s: %s\n", path, err);
        return 1;
    }
    tprof_mem_report rep;
    tprof_mem_opts o = { .depth = 4 };
    tprof_result *r = NULL, *back = NULL;
    int bad = tprof_mem_analyze(s, &o, &rep) != 0;
    if (!bad) {
        bad = tprof_mem_tables(s, &rep, &r) != 0;
        if (!bad) bad = round_trip(path, r, &back);
        tprof_mem_compare c;
        if (!bad) bad = tprof_mem_compare_reports(&rep, &rep, &c) != 0;
        if (!bad) {
            tprof_result_free(r);
            tprof_result_free(back);
            r = back = NULL;
            bad = tprof_mem_compare_tables(path, path, &c, &r) != 0;
            if (!bad) bad = round_trip(path, r, &back);
            tprof_mem_compare_free(&c);
        }
        tprof_result *tl = bad ? NULL : tprof_result_new(&tprof_mem_timeline_desc), *tl_back = NULL;
        for (size_t d = 0; tl && !bad && d < rep.ndev; d++) {
            tprof_mem_timeline t;
            bad = tprof_mem_timeline_build(s, rep.dev[d].device, 4, 8, 200, &t) != 0;
            if (!bad) {
                bad = tprof_mem_timeline_add(tl, &t) != 0;
                tprof_mem_timeline_free(&t);
            }
        }
        if (tl && !bad) bad = round_trip(path, tl, &tl_back);
        tprof_result_free(tl);
        tprof_result_free(tl_back);
        tprof_mem_report_free(&rep);
    }
    tprof_result_free(r);
    tprof_result_free(back);
    tprof_mem_snapshot_close(s);
    return bad;
}

/* A merge report of two inputs, one left out. */
static int merge_result(void)
{
    tprof_merge_rank ranks[2] = {
        { .path = "r0.json", .rank = 0, .included = 1, .offset_ns = -1500, .pid_base = 0, .events_in = 10,
          .events_out = 9, .dropped = 1, .align_note = "first ProfilerStep" },
        { .path = "r1.json", .rank = 1, .rank_source = TPROF_RANK_FROM_NAME, .truncated = 1, .pid_base = 100 },
    };
    tprof_merge_report rep = { .align = TPROF_ALIGN_FIRST_STEP, .nranks = 2, .ranks = ranks, .events_out = 9,
                               .bytes_out = 1234, .file_bytes = 456, .problems = "rank 1: cut\n" };
    tprof_result *r = NULL, *back = NULL;
    int bad = tprof_merge_tables(&rep, "merged.json", &r) != 0;
    if (!bad) bad = round_trip("merge", r, &back);
    tprof_result_free(r);
    tprof_result_free(back);
    return bad;
}

/* A small log, with and without its series. */
static int log_results(void)
{
    static const char text[] = "{\"step\": 1, \"loss\": 2.5, \"mfu\": 0.41}\n{\"step\": 2, \"loss\": 2.25}\n"
                               "{\"step\": 3, \"loss\": NaN, \"mfu\": 0.12}\nstep=4: {'loss': 2.0}\n";
    tprof_log *lg = tprof_log_new("built-in.log");
    int bad = !lg || tprof_log_feed(lg, text, sizeof text - 1) || tprof_log_finish(lg);
    for (int series = 0; !bad && series < 2; series++) {
        tprof_result *r = NULL, *back = NULL;
        bad = tprof_log_tables(lg, series, &r) != 0;
        if (!bad) bad = round_trip("built-in.log", r, &back);
        tprof_result_free(r);
        tprof_result_free(back);
    }
    tprof_log_free(lg);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = model_results() | log_results() | merge_result();
    tprof_result **made[NTYPES], **read_back[NTYPES];
    size_t nmade[NTYPES] = { 0 };
    for (int k = 0; k < NTYPES; k++) {
        made[k] = calloc((size_t)argc, sizeof *made[k]);
        read_back[k] = calloc((size_t)argc, sizeof *read_back[k]);
        if (!made[k] || !read_back[k]) return 2;
    }
    for (int i = 1; i < argc; i++) {
        size_t len = strlen(argv[i]);
        if (len > 7 && !strcmp(argv[i] + len - 7, ".pickle")) { /* a memory snapshot */
            bad |= mem_result(argv[i]);
            continue;
        }
        tprof_trace *t;
        char err[512];
        tprof_read_opts o = { .keep = TPROF_KEEP_ALL };
        int rc = tprof_trace_read(&t, argv[i], &o, err, sizeof err);
        if (rc && rc != TPROF_ETRUNC) {
            printf("skip %s: %s\n", argv[i], err);
            continue;
        }
        tprof_result *r[NTYPES] = { 0 };
        tprof_temporal_result tr;
        if (tprof_temporal(t, NULL, &tr) == 0) tprof_temporal_tables(&tr, TPROF_DEFINITION_TRAINPROF, &r[0]);
        tprof_steps_result *sr;
        if (tprof_steps(t, &sr) == 0) {
            tprof_steps_tables(sr, &r[1]);
            tprof_steps_free(sr);
        }
        tprof_launch_result lr;
        if (tprof_launch_overhead(t, &lr) == 0) tprof_launch_tables(&lr, &r[2]);
        tprof_comm_result *cr;
        if (tprof_comm(t, &cr) == 0) {
            tprof_comm_tables(cr, t, &r[3]);
            tprof_comm_free(cr);
        }
        tprof_idle_result *ir;
        if (tprof_idle(t, NULL, &ir) == 0) {
            tprof_idle_tables(ir, &r[4]);
            tprof_idle_free(ir);
        }
        r[5] = kernels_of(t, TPROF_BY_NAME);
        r[6] = kernels_of(t, TPROF_BY_CLASS);
        r[7] = kernels_of(t, TPROF_BY_STREAM);
        for (int by = 0; by < TPROF_OPS_GROUPINGS; by++) {
            tprof_ops_opts oo = { .by = (tprof_ops_by)by, .step_first = -1, .step_last = -1 };
            tprof_ops(t, &oo, &r[OPS + by]);
        }
        tprof_rank_facts(t, &r[FACTS]);
        tprof_coll_instances(t, &r[COLL]);
        tprof_cp_opts po = { .step_first = -1, .step_last = -1, .instance_first = -1, .instance_last = -1,
                             .max_windows = TPROF_ADVICE_PATH_SAMPLE, .path = 1 };
        tprof_critical_path(t, &po, &r[PATH]);
        tprof_advise_rank(t, &r[FINDINGS]);
        tprof_info_tables(t, &r[INFO]);
        tprof_diff_result *dr;
        tprof_diff_part *part, *again;
        tprof_diff_opts dop = { .top = 3 };
        tprof_result *pr[TPROF_DIFF_PART_RESULTS];
        if (tprof_diff_part_results(t, pr) == 0) { /* what diff sends of a trace (its instances are COLL's) */
            r[DIFF_PART] = pr[0];
            tprof_result_free(pr[1]);
        }
        const size_t one[2] = { 1, 1 };
        tprof_diff_fold *f = tprof_diff_fold_new(one);
        if (tprof_diff_part_of(t, &part)) part = NULL;
        if (tprof_diff_part_of(t, &again)) again = NULL;
        if (f && part && again) { /* the trace against itself; the fold frees each part it is given */
            int added = tprof_diff_fold_add(f, 0, part);
            added = tprof_diff_fold_add(f, 1, again) || added;
            part = again = NULL;
            if (!added && !tprof_diff_fold_end(f, &dop, &dr)) {
                tprof_diff_check ck = { .on = 1, .limit = 5 };
                tprof_diff_tables(dr, f, &ck, &r[DIFF]);
                tprof_diff_free(dr);
            }
        }
        tprof_diff_part_free(part);
        tprof_diff_part_free(again);
        tprof_diff_fold_free(f);
        tprof_mem_kreport kr;
        if (tprof_mem_from_trace(t, 100, &kr) == 0) {
            tprof_mem_trace_tables(&kr, tprof_trace_meta_get(t)->truncated, &r[MEM_TRACE]);
            tprof_mem_trace_timeline_tables(&kr, &r[MEM_TRACE_TIMELINE]);
            tprof_mem_kreport_free(&kr);
        }
        tprof_temporal_result tt;
        tprof_steps_result *ss = NULL;
        tprof_comm_result *cc = NULL;
        if (!tprof_steps(t, &ss) && !tprof_temporal(t, NULL, &tt) && !tprof_comm(t, &cc))
            tprof_summary_trace(t, ss, &tt, cc, &r[SUMMARY_TRACE]);
        tprof_steps_free(ss);
        tprof_comm_free(cc);
        for (int k = 0; k < NTYPES; k++) {
            if (!r[k]) {
                printf("DIFF: %s: result %d was not made\n", argv[i], k);
                bad = 1;
                continue;
            }
            tprof_result *back = NULL;
            bad |= round_trip(argv[i], r[k], &back);
            if (back) {
                made[k][nmade[k]] = r[k];
                read_back[k][nmade[k]++] = back;
            } else
                tprof_result_free(r[k]);
        }
        tprof_trace_free(t);
    }
    if (nmade[FACTS]) {
        tprof_ranks_result *ra = NULL, *rb = NULL;
        tprof_result *a = NULL, *b = NULL;
        int same = !tprof_ranks_reduce((const tprof_result *const *)made[FACTS], nmade[FACTS], &ra) &&
                   !tprof_ranks_reduce((const tprof_result *const *)read_back[FACTS], nmade[FACTS], &rb) &&
                   !tprof_ranks_tables(ra, &a) && !tprof_ranks_tables(rb, &b) && tprof_result_equal(a, b);
        printf("%s ranks: reduced from %zu traces' facts, as made and as read back\n", same ? "same" : "DIFF",
               nmade[FACTS]);
        bad |= !same;
        tprof_ranks_free(ra);
        tprof_ranks_free(rb);
        tprof_result_free(a);
        tprof_result_free(b);
    }
    if (nmade[COLL]) {
        tprof_result *a = NULL, *b = NULL;
        int same = !tprof_collectives_reduce((const tprof_result *const *)made[COLL], nmade[COLL], &a) &&
                   !tprof_collectives_reduce((const tprof_result *const *)read_back[COLL], nmade[COLL], &b) &&
                   tprof_result_equal(a, b);
        printf("%s collectives: matched over %zu traces' instances, as made and as read back\n", same ? "same" : "DIFF",
               nmade[COLL]);
        bad |= !same;
        tprof_result_free(a);
        tprof_result_free(b);
    }
    if (nmade[FACTS] && nmade[FACTS] == nmade[FINDINGS] && nmade[FACTS] == nmade[SUMMARY_TRACE] &&
        nmade[FACTS] == nmade[KERNELS] && nmade[FACTS] == nmade[OPS] &&
        nmade[FACTS] == nmade[OPS + TPROF_OPS_BY_MODULE] && nmade[FACTS] == nmade[COLL] &&
        nmade[FACTS] == nmade[PATH]) {
        size_t n = nmade[FACTS];
        tprof_summary_part *pa = calloc(n, sizeof *pa), *pb = calloc(n, sizeof *pb);
        for (size_t i = 0; pa && pb && i < n; i++) {
            pa[i] = (tprof_summary_part){ made[SUMMARY_TRACE][i], made[KERNELS][i], made[FACTS][i], made[FINDINGS][i],
                                          made[OPS][i], made[OPS + TPROF_OPS_BY_MODULE][i], made[COLL][i],
                                          made[PATH][i] };
            pb[i] = (tprof_summary_part){ read_back[SUMMARY_TRACE][i], read_back[KERNELS][i], read_back[FACTS][i],
                                          read_back[FINDINGS][i], read_back[OPS][i],
                                          read_back[OPS + TPROF_OPS_BY_MODULE][i], read_back[COLL][i], read_back[PATH][i] };
        }
        tprof_result *a = NULL, *b = NULL;
        int same = pa && pb && !tprof_summary_reduce(pa, n, &a) && !tprof_summary_reduce(pb, n, &b) &&
                   tprof_result_equal(a, b);
        printf("%s summary: of %zu traces, from their parts as made and as read back\n", same ? "same" : "DIFF", n);
        bad |= !same;
        tprof_result_free(a);
        tprof_result_free(b);
        free(pa);
        free(pb);
    }
    for (int k = 0; k < NTYPES; k++) {
        if (nmade[k] > 1) {
            tprof_result *a = combine(made[k], nmade[k]), *b = combine(read_back[k], nmade[k]);
            int same = a && b && tprof_result_equal(a, b);
            char *ja = a ? json_of(a) : NULL, *jb = b ? json_of(b) : NULL;
            same = same && ja && jb && !strcmp(ja, jb);
            printf("%s %s: combined over %zu traces, as made and as read back\n", same ? "same" : "DIFF",
                   a ? tprof_result_desc_of(a)->name : "?", nmade[k]);
            bad |= !same;
            free(ja);
            free(jb);
            tprof_result_free(a);
            tprof_result_free(b);
        }
        for (size_t i = 0; i < nmade[k]; i++) {
            tprof_result_free(made[k][i]);
            tprof_result_free(read_back[k][i]);
        }
        free(made[k]);
        free(read_back[k]);
    }
    return bad;
}
