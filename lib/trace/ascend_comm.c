/* Ascend communication summaries: torch_npu's communication.json and
 * communication_matrix.json (one rank's HCCL ops: step -> collective|p2p ->
 * op -> times and bytes per transport, or rank-to-rank links), and
 * msprof-analyze's cluster_communication.json (group "(0, 1)" -> step -> op
 * -> rank -> the same). Read into a trace's tprof_hccl_op / tprof_hccl_link
 * records, streamed through the tokenizer; keys and units are those of
 * msprof-analyze's parsers (docs/METRICS.md, "Ascend communication").
 * Ops named "Total..." are the file's own sums: left out, recomputed. */
#include "reader_internal.h"

#include "trainprof/error.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    tprof_trace *t;
    tprof_json *j;
    tprof_json_token tok;
    char *msg;
    size_t msglen;
} creader;

#define IS(lit) (c->tok.len == sizeof(lit) - 1 && memcmp(c->tok.text, lit, sizeof(lit) - 1) == 0)

static const char *const transport_names[TPROF_HCCL_TRANSPORTS] = { "RDMA", "HCCS", "PCIE", "SDMA", "SIO" };

const char *tprof_hccl_transport_name(tprof_hccl_transport k)
{
    return (unsigned)k < TPROF_HCCL_TRANSPORTS ? transport_names[k] : "?";
}

static int next(creader *c) { return tprof_json_next(c->j, &c->tok); }

static ssize_t source_read_fn(void *ctx, void *buf, size_t cap) { return tprof_source_read(ctx, buf, cap); }

static int fail(creader *c, const char *what)
{
    if (!c->msg[0]) snprintf(c->msg, c->msglen, "byte %llu: expected %s", (unsigned long long)c->tok.offset, what);
    return TPROF_EFORMAT;
}

/* The next token must open an object. */
static int object(creader *c, const char *what)
{
    int rc = next(c);
    if (rc) return rc;
    return c->tok.type == TPROF_JSON_OBJ_BEGIN ? 0 : fail(c, what);
}

/* After a key: its value as a number (NaN for null). */
static int number(creader *c, double *out)
{
    int rc = next(c);
    if (rc) return rc;
    if (c->tok.type == TPROF_JSON_NULL) {
        *out = NAN;
        return 0;
    }
    if (c->tok.type != TPROF_JSON_NUMBER) return fail(c, "a number");
    *out = tprof_json_parse_double(c->tok.text, c->tok.len);
    return 0;
}

static uint32_t intern_tok(creader *c)
{
    return tprof_strtab_intern(&c->t->strs, c->tok.text, c->tok.len);
}

/* "Communication Time Info": {"Elapse Time(ms)": ..., ...}; the ratios
 * are left out (recomputed from the times). */
static int time_info(creader *c, tprof_hccl_op *op)
{
    int rc = object(c, "an object of times");
    while (!rc && !(rc = next(c)) && c->tok.type == TPROF_JSON_KEY) {
        double *v = IS("Start Timestamp(us)")        ? &op->start_us
                    : IS("Elapse Time(ms)")          ? &op->elapse_ms
                    : IS("Transit Time(ms)")         ? &op->transit_ms
                    : IS("Wait Time(ms)")            ? &op->wait_ms
                    : IS("Synchronization Time(ms)") ? &op->sync_ms
                    : IS("Idle Time(ms)")            ? &op->idle_ms
                                                     : NULL;
        rc = v ? number(c, v) : tprof_json_skip_value(c->j);
    }
    return rc;
}

/* "Size Distribution": {"0.003072": [count, time], ...}: the counts summed. */
static int size_distribution(creader *c, uint64_t *packets)
{
    int rc = object(c, "an object of packet sizes");
    while (!rc && !(rc = next(c)) && c->tok.type == TPROF_JSON_KEY) {
        if ((rc = next(c))) break;
        if (c->tok.type != TPROF_JSON_ARR_BEGIN) return fail(c, "[count, time] for a packet size");
        if ((rc = next(c))) break;
        if (c->tok.type == TPROF_JSON_NUMBER) {
            double n = tprof_json_parse_double(c->tok.text, c->tok.len);
            if (n > 0 && n < 1e18) *packets += (uint64_t)n;
            rc = next(c);
        }
        while (!rc && c->tok.type != TPROF_JSON_ARR_END) { /* the time, and anything a later version adds */
            if (c->tok.type == TPROF_JSON_OBJ_BEGIN || c->tok.type == TPROF_JSON_ARR_BEGIN)
                rc = tprof_json_skip_container(c->j);
            if (!rc) rc = next(c);
        }
    }
    return rc;
}

/* "Communication Bandwidth Info": {"HCCS": {...}, "RDMA": {...}, ...}. */
static int bandwidth_info(creader *c, tprof_hccl_op *op)
{
    int rc = object(c, "an object of transports");
    while (!rc && !(rc = next(c)) && c->tok.type == TPROF_JSON_KEY) {
        int k = 0;
        while (k < TPROF_HCCL_TRANSPORTS &&
               !(c->tok.len == strlen(transport_names[k]) && !memcmp(c->tok.text, transport_names[k], c->tok.len)))
            k++;
        if (k == TPROF_HCCL_TRANSPORTS) {
            rc = tprof_json_skip_value(c->j);
            continue;
        }
        tprof_hccl_bandwidth *b = &op->bw[k];
        if ((rc = object(c, "an object for a transport"))) break;
        while (!rc && !(rc = next(c)) && c->tok.type == TPROF_JSON_KEY) {
            if (IS("Size Distribution")) rc = size_distribution(c, &b->packets);
            else if (IS("Transit Size(MB)")) rc = number(c, &b->size_mb);
            else if (IS("Transit Time(ms)")) rc = number(c, &b->time_ms);
            else if (IS("Large Packet Ratio")) rc = number(c, &b->large_packet_ratio);
            else rc = tprof_json_skip_value(c->j);
        }
    }
    return rc;
}

/* A matrix link's value: {"Transport Type": "HCCS", "Transit Size(MB)": ...}. */
static int link_info(creader *c, tprof_hccl_link *l)
{
    int rc = object(c, "an object for a link");
    while (!rc && !(rc = next(c)) && c->tok.type == TPROF_JSON_KEY) {
        if (IS("Transport Type")) {
            if ((rc = next(c))) break;
            if (c->tok.type != TPROF_JSON_STRING) return fail(c, "a string for the transport type");
            if ((l->transport = intern_tok(c)) == UINT32_MAX) return TPROF_ENOMEM;
        } else if (IS("Transit Size(MB)")) rc = number(c, &l->size_mb);
        else if (IS("Transit Time(ms)")) rc = number(c, &l->time_ms);
        else rc = tprof_json_skip_value(c->j);
    }
    return rc;
}

/* "3-5": 1 and the two ranks. */
static int link_key(const char *s, size_t n, int64_t *src, int64_t *dst)
{
    int64_t v[2] = { 0, 0 };
    size_t i = 0;
    for (int k = 0; k < 2; k++) {
        size_t d = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9' && d < 9) v[k] = v[k] * 10 + (s[i++] - '0'), d++;
        if (!d || (k == 0 && (i >= n || s[i++] != '-'))) return 0;
    }
    if (i != n) return 0;
    *src = v[0], *dst = v[1];
    return 1;
}

/* "12": 1 and the rank. */
static int rank_key(const char *s, size_t n, int64_t *rank)
{
    int64_t v = 0;
    if (!n || n > 9) return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    *rank = v;
    return 1;
}

typedef struct {
    uint32_t step, op, group, group_ranks;
    int p2p;
    int64_t rank;
} op_where;

/* One op's value: its times and transports (communication.json) or its
 * links (communication_matrix.json), told apart by their keys. */
static int op_value(creader *c, const op_where *w)
{
    int rc = object(c, "an object for a communication op");
    tprof_trace *t = c->t;
    long slot = -1; /* the op record once a time or bandwidth key is met */
    while (!rc && !(rc = next(c)) && c->tok.type == TPROF_JSON_KEY) {
        int times = IS("Communication Time Info"), bw = IS("Communication Bandwidth Info");
        int64_t src, dst;
        if (times || bw) {
            if (slot < 0) {
                if (tprof_grow_items((void **)&t->hccl_ops, &t->hccl_opcap, t->nhccl_ops + 1, sizeof *t->hccl_ops))
                    return TPROF_ENOMEM;
                slot = (long)t->nhccl_ops++;
                tprof_hccl_op *op = &t->hccl_ops[slot];
                memset(op, 0, sizeof *op);
                *op = (tprof_hccl_op){ .step = w->step, .op = w->op, .group = w->group,
                                       .group_ranks = w->group_ranks, .p2p = w->p2p, .rank = w->rank,
                                       .start_us = NAN };
                for (int k = 0; k < TPROF_HCCL_TRANSPORTS; k++) op->bw[k].large_packet_ratio = NAN;
            }
            rc = times ? time_info(c, &t->hccl_ops[slot]) : bandwidth_info(c, &t->hccl_ops[slot]);
        } else if (w->group_ranks && w->rank < 0 && rank_key(c->tok.text, c->tok.len, &src)) {
            op_where at = *w; /* a cluster file's rank: its own times under it */
            at.rank = src;
            rc = op_value(c, &at);
        } else if (link_key(c->tok.text, c->tok.len, &src, &dst)) {
            if (tprof_grow_items((void **)&t->hccl_links, &t->hccl_linkcap, t->nhccl_links + 1,
                                 sizeof *t->hccl_links))
                return TPROF_ENOMEM;
            tprof_hccl_link *l = &t->hccl_links[t->nhccl_links];
            *l = (tprof_hccl_link){ .step = w->step, .op = w->op, .group = w->group, .group_ranks = w->group_ranks,
                                    .p2p = w->p2p, .src = src, .dst = dst };
            if (!(rc = link_info(c, l))) t->nhccl_links++;
        } else
            rc = tprof_json_skip_value(c->j);
    }
    return rc;
}

/* The op named by the key token: its group after the last '@'. */
static int name_op(creader *c, op_where *w)
{
    const char *at = NULL;
    for (size_t i = c->tok.len; i-- > 0;)
        if (c->tok.text[i] == '@') {
            at = c->tok.text + i;
            break;
        }
    w->op = intern_tok(c);
    w->group = at ? tprof_strtab_intern(&c->t->strs, at + 1, (size_t)(c->tok.text + c->tok.len - at - 1))
                  : tprof_strtab_intern(&c->t->strs, "", 0);
    return w->op == UINT32_MAX || w->group == UINT32_MAX ? TPROF_ENOMEM : 0;
}

static int is_total(const creader *c) { return c->tok.len >= 5 && !memcmp(c->tok.text, "Total", 5); }

/* {op: value, ...} under a step and a type (communication.json). */
static int ops(creader *c, op_where *w)
{
    int rc = object(c, "an object of communication ops");
    while (!rc && !(rc = next(c)) && c->tok.type == TPROF_JSON_KEY) {
        if (is_total(c)) {
            rc = tprof_json_skip_value(c->j);
            continue;
        }
        if (!(rc = name_op(c, w))) rc = op_value(c, w);
    }
    return rc;
}

/* A p2p op in a cluster file, where no "p2p" level says so. */
static int p2p_name(const char *s)
{
    return strstr(s, "send") || strstr(s, "receive") || strstr(s, "Send") || strstr(s, "Receive");
}

/* {step: {op: {rank: value}}} under a group (cluster_communication.json). */
static int cluster_group(creader *c, op_where *w)
{
    int rc = object(c, "an object of steps");
    while (!rc && !(rc = next(c)) && c->tok.type == TPROF_JSON_KEY) {
        if ((w->step = intern_tok(c)) == UINT32_MAX) return TPROF_ENOMEM;
        if ((rc = object(c, "an object of communication ops"))) break;
        while (!rc && !(rc = next(c)) && c->tok.type == TPROF_JSON_KEY) {
            if (is_total(c)) {
                rc = tprof_json_skip_value(c->j);
                continue;
            }
            if ((rc = name_op(c, w))) break;
            w->p2p = p2p_name(tprof_strtab_get(&c->t->strs, w->op));
            w->rank = -1;
            rc = op_value(c, w); /* {rank: times} (cluster_communication.json) or {"src-dst": link} (its matrix) */
        }
    }
    return rc;
}

/* The whole document. */
static int document(creader *c)
{
    int rc = object(c, "an object (a communication summary)");
    while (!rc && !(rc = next(c)) && c->tok.type == TPROF_JSON_KEY) {
        op_where w = { .rank = -1 };
        if (c->tok.len && c->tok.text[0] == '(') { /* a cluster file's rank group */
            if ((w.group_ranks = intern_tok(c)) == UINT32_MAX) return TPROF_ENOMEM;
            rc = cluster_group(c, &w);
            continue;
        }
        if ((w.step = intern_tok(c)) == UINT32_MAX) return TPROF_ENOMEM;
        if ((rc = object(c, "an object of op types (collective, p2p)"))) break;
        while (!rc && !(rc = next(c)) && c->tok.type == TPROF_JSON_KEY) {
            w.p2p = IS("p2p");
            rc = ops(c, &w);
        }
    }
    if (!rc) rc = next(c); /* past the end: anything after the document is an error */
    if (!rc && c->tok.type != TPROF_JSON_EOF) return fail(c, "the end of the document");
    return rc;
}

/* Parses one summary from SRC into T; MSG gets what went wrong. */
static int parse_into(tprof_trace *t, tprof_source *src, char *msg, size_t msglen)
{
    tprof_json *j;
    msg[0] = 0;
    int rc = tprof_json_open_sized(&j, source_read_fn, src, tprof_source_name(src), 0);
    if (rc) return rc;
    creader c = { .t = t, .j = j, .msg = msg, .msglen = msglen };
    rc = document(&c);
    if (rc && !msg[0]) snprintf(msg, msglen, "%s", tprof_json_errmsg(j));
    tprof_json_close(j);
    return rc;
}

int tprof_ascend_read_comm(tprof_trace **out, tprof_source *src, const char *name, char *errbuf, size_t errlen)
{
    *out = NULL;
    tprof_trace *t = tprof_trace_new(name);
    if (!t) return TPROF_ENOMEM;
    char msg[300];
    int rc = parse_into(t, src, msg, sizeof msg);
    size_t nops = t->nhccl_ops, nlinks = t->nhccl_links;
    rc = tprof_ascend_conclude(out, t, rc, src, TPROF_FORM_ASCEND_COMM, name, msg, errbuf, errlen);
    char what[80];
    snprintf(what, sizeof what, "%zu ops and %zu links", nops, nlinks);
    if (*out) tprof_ascend_say_covered(*out, rc, what);
    return rc;
}

/* The rank of a profiler output directory (DIR/ASCEND_PROFILER_OUTPUT/FILE):
 * the N of DIR/profiler_info_N.json, as torch_npu names it. */
static int64_t profiler_info_rank(const char *dir)
{
    size_t n = strlen(dir);
    static const char sub[] = "/ASCEND_PROFILER_OUTPUT";
    if (n < sizeof sub - 1 || strcmp(dir + n - (sizeof sub - 1), sub) != 0) return -1;
    char *parent = strndup(dir, n - (sizeof sub - 1));
    DIR *d = parent ? opendir(parent[0] ? parent : "/") : NULL;
    int64_t rank = -1;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        const char *p = e->d_name;
        if (strncmp(p, "profiler_info_", 14) != 0) continue;
        int64_t v = 0;
        size_t k = 14;
        while (p[k] >= '0' && p[k] <= '9' && v < 100000000) v = v * 10 + (p[k++] - '0');
        if (k > 14 && !strcmp(p + k, ".json")) {
            rank = v;
            break;
        }
    }
    if (d) closedir(d);
    free(parent);
    return rank;
}

void tprof_ascend_sidecars(tprof_trace *t, const char *path, const tprof_read_opts *opts)
{
    if (!path || !strcmp(path, "-")) return;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    if (!dir) return;
    const char *base = slash ? slash + 1 : path;
    if (t->meta.rank < 0) t->meta.rank = profiler_info_rank(dir);
    /* the JSON summaries, or torch_npu's analysis.db (the database form) */
    static const char *const names[] = { "communication.json", "communication_matrix.json", "analysis.db" };
    for (size_t i = 0; opts && (opts->keep & TPROF_KEEP_CALLS) && i < 3; i++) {
        if (!strcmp(base, names[i])) continue;
        /* a summary the file itself held already is not read twice */
        if (i == 1 ? t->nhccl_links > 0 : t->nhccl_ops > 0) continue;
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *side = malloc(len);
        struct stat st;
        if (!side) break;
        snprintf(side, len, "%s/%s", dir, names[i]);
        if (stat(side, &st) == 0 && S_ISREG(st.st_mode)) {
            tprof_source *src;
            char err[300] = "", note[400];
            size_t ops0 = t->nhccl_ops, links0 = t->nhccl_links;
            int rc = i == 2 ? tprof_ascend_read_analysis(t, side, TPROF_KEEP_CALLS, err, sizeof err)
                            : tprof_source_open(&src, side, err, sizeof err);
            if (!rc && i < 2) {
                rc = parse_into(t, src, err, sizeof err);
                tprof_source_close(src);
            }
            if (rc && rc != TPROF_ETRUNC) t->nhccl_ops = ops0, t->nhccl_links = links0; /* all or nothing */
            if (rc) {
                snprintf(note, sizeof note, "%s beside it %s: %s", names[i],
                         rc == TPROF_ETRUNC ? "is cut short (what was read is used)" : "was not read", err);
                tprof_trace_set_note(t, note);
            }
        }
        free(side);
    }
    /* the profiler's own step split, for the commands that look at steps */
    static const char steps_name[] = "step_trace_time.csv";
    size_t len = strlen(dir) + sizeof steps_name + 1;
    char *side = opts && (opts->keep & TPROF_KEEP_STEP_SPLITS) && !t->nsplits && strcmp(base, steps_name) != 0
                     ? malloc(len)
                     : NULL;
    struct stat st;
    if (side) snprintf(side, len, "%s/%s", dir, steps_name);
    if (side && stat(side, &st) == 0 && S_ISREG(st.st_mode)) {
        tprof_source *src;
        char err[300] = "", note[400];
        int rc = tprof_source_open(&src, side, err, sizeof err);
        if (!rc) {
            rc = tprof_ascend_steps_into(t, src, err, sizeof err);
            tprof_source_close(src);
        }
        if (rc && rc != TPROF_ETRUNC) t->nsplits = 0; /* all or nothing */
        if (rc) {
            snprintf(note, sizeof note, "%s beside it %s: %s", steps_name,
                     rc == TPROF_ETRUNC ? "is cut short (what was read is used)" : "was not read", err);
            tprof_trace_set_note(t, note);
        }
    }
    free(side);
    /* the database form's split: analysis.db's StepTraceTime */
    static const char analysis_name[] = "analysis.db";
    len = strlen(dir) + sizeof analysis_name + 1;
    side = opts && (opts->keep & TPROF_KEEP_STEP_SPLITS) && !t->nsplits && strcmp(base, analysis_name) != 0
               ? malloc(len)
               : NULL;
    if (side) snprintf(side, len, "%s/%s", dir, analysis_name);
    if (side && stat(side, &st) == 0 && S_ISREG(st.st_mode)) {
        char err[300] = "", note[400];
        int rc = tprof_ascend_read_analysis(t, side, TPROF_KEEP_STEP_SPLITS, err, sizeof err);
        if (rc) {
            t->nsplits = 0;
            snprintf(note, sizeof note, "%s beside it was not read: %s", analysis_name, err);
            tprof_trace_set_note(t, note);
        }
    }
    free(side);
    free(dir);
}
