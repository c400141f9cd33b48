/* trainprof merge: plan (first read of every input), rewrite every event
 * into sorted runs (second read), then one k-way merge into the output. */
#include "merge_internal.h"
#include "trainprof/error.h"
#include "trainprof/sink.h"
#include "trainprof/version.h"

#include <libgen.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    tprof_sink *sink;
    uint64_t n;
} emitter;

static int emit(void *ctx, const char *data, size_t len)
{
    emitter *e = ctx;
    int rc = e->n++ ? tprof_sink_write(e->sink, ",\n", 2) : 0;
    return rc ? rc : tprof_sink_write(e->sink, data, len);
}

static const char *rank_source_name(tprof_rank_source s)
{
    return s == TPROF_RANK_FROM_DISTRIBUTED ? "distributedInfo" : s == TPROF_RANK_FROM_NAME ? "file name" : "argument order";
}

/* The closing members: how the merge was made, and each input's own
 * top-level metadata (deviceProperties, distributedInfo, ...). */
static int trailer(mbuf *b, const tprof_merge_report *rep, const merge_input *ins, const size_t *order, size_t n,
                   mbuf *metas)
{
    int rc = mbuf_printf(b, "\n],\n\"schemaVersion\":1,\n\"trainprofMerge\":{\"tool\":\"trainprof %s\",\"align\":\"%s\",\"ranks\":[",
                         TPROF_VERSION_STRING, tprof_align_name(rep->align));
    const merge_input *ref = NULL;
    size_t k = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const merge_input *in = &ins[order[i]];
        const tprof_merge_rank *r = in->out;
        if (!r->included) continue;
        if (!ref) ref = in;
        rc = mbuf_printf(b, "%s\n{\"rank\":%lld,\"rankFrom\":\"%s\",\"file\":", k++ ? "," : "", (long long)r->rank,
                         rank_source_name(r->rank_source));
        if (!rc) rc = mbuf_json_str(b, r->path, strlen(r->path));
        if (!rc)
            rc = mbuf_printf(b, ",\"pidBase\":%lld,\"idBase\":%lld,\"offsetNs\":%lld,\"alignedOn\":", (long long)r->pid_base,
                             (long long)in->pos * MERGE_ID_STRIDE, (long long)r->offset_ns);
        if (!rc) rc = mbuf_json_str(b, r->align_note, strlen(r->align_note));
        if (!rc)
            rc = mbuf_printf(b, ",\"eventsIn\":%llu,\"eventsOut\":%llu,\"truncated\":%s,\"metadata\":{",
                             (unsigned long long)r->events_in, (unsigned long long)r->events_out,
                             r->truncated ? "true" : "false");
        if (!rc) rc = mbuf_put(b, metas[order[i]].p ? metas[order[i]].p : "", metas[order[i]].len);
        if (!rc) rc = mbuf_puts(b, "}}");
    }
    if (!rc) rc = mbuf_puts(b, "]}");
    /* every rank's clock was moved onto the reference rank's */
    if (!rc && ref && ref->has_base && (rep->align != TPROF_ALIGN_NONE || k == 1))
        rc = mbuf_printf(b, ",\n\"baseTimeNanoseconds\":%lld", (long long)ref->base_ns);
    if (!rc) rc = mbuf_puts(b, "\n}\n");
    return rc;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void tprof_merge_report_free(tprof_merge_report *r)
{
    if (!r) return;
    free(r->ranks);
    free(r);
}

/* The second reads, on several threads: each takes the next input (in rank
 * order) and writes its rewritten events into its own run set. */
typedef struct {
    const tprof_merge_opts *o;
    merge_input *ins;
    const size_t *order;
    size_t n, next;
    mbuf *metas;
    pthread_mutex_t lock;
    int rc, trunc;
    char err[1024];
} pool;

typedef struct {
    pool *p;
    merge_runs *runs;
} worker;

static void *rewrite_worker(void *arg)
{
    worker *wk = arg;
    pool *p = wk->p;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t i = p->next;
        while (i < p->n && (!p->ins[p->order[i]].out->included ||
                            (p->o->spread && !p->o->spread->mine[p->order[i]]))) /* another process's */
            i++;
        p->next = i + 1;
        int stop = p->rc != 0 || i >= p->n;
        pthread_mutex_unlock(&p->lock);
        if (stop) return NULL;
        char err[1024] = "";
        int rc = merge_rewrite_input(p->o, &p->ins[p->order[i]], wk->runs, &p->metas[p->order[i]], err, sizeof err);
        pthread_mutex_lock(&p->lock);
        if (rc == TPROF_ETRUNC) p->trunc = 1;
        else if (rc && !p->rc) {
            p->rc = rc;
            snprintf(p->err, sizeof p->err, "%s", err);
        }
        pthread_mutex_unlock(&p->lock);
    }
}

/* Threads for the second reads: one per core, at most one per input. */
static size_t rewrite_threads(const tprof_merge_opts *o, const merge_input *ins, size_t n)
{
    size_t included = 0;
    for (size_t i = 0; i < n; i++) included += ins[i].out->included && (!o->spread || o->spread->mine[i]);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t t = o->threads > 0 ? (size_t)o->threads : cores > 0 ? (size_t)cores : 1;
    if (t > included) t = included;
    return t ? t : 1;
}

/* ---- a merge spread over processes: a peer's stream to the root ----
 * Its rewritten events in the output's order (merge_stream_put), the end
 * (merge_stream_end), then what its reads found: its outcome and error, and
 * per input it rewrote the counts the report holds and the input's own
 * metadata for the trailer. */

typedef struct {
    const tprof_merge_spread *s;
    int peer;
} peer_io;

static ssize_t peer_read(void *c, char *buf, size_t size)
{
    const peer_io *p = c;
    long got = p->s->recv(p->s->ctx, p->peer, buf, size);
    return got < 0 ? -1 : (ssize_t)got;
}

static ssize_t peer_write(void *c, const char *buf, size_t size)
{
    const peer_io *p = c;
    return p->s->send(p->s->ctx, buf, size) ? -1 : (ssize_t)size;
}

static int peer_close(void *c)
{
    peer_io *p = c;
    int rc = p->peer ? 0 : p->s->send(p->s->ctx, NULL, 0); /* a peer's end */
    free(p);
    return rc;
}

/* PEER's stream (the root reads it), or this peer's (PEER 0: written). */
static FILE *peer_open(const tprof_merge_spread *s, int peer)
{
    peer_io *p = malloc(sizeof *p);
    if (!p) return NULL;
    *p = (peer_io){ s, peer };
    cookie_io_functions_t io = { .read = peer ? peer_read : NULL, .write = peer ? NULL : peer_write, .close = peer_close };
    FILE *f = fopencookie(p, peer ? "r" : "w", io);
    if (!f) free(p);
    else setvbuf(f, NULL, _IOFBF, 1 << 20);
    return f;
}

static int emit_to_stream(void *ctx, int64_t key, uint32_t pos, uint64_t seq, const char *data, size_t len)
{
    return merge_stream_put(ctx, key, pos, seq, data, len);
}

static int put_u64(FILE *f, uint64_t v) { return fwrite(&v, sizeof v, 1, f) == 1 ? 0 : TPROF_EIO; }
static int get_u64(FILE *f, uint64_t *v) { return fread(v, sizeof *v, 1, f) == 1 ? 0 : TPROF_EIO; }

/* A peer: its inputs' events and what it found, to the root. RC and ERR:
 * its rewrite's failure (then no events), TRUNC: an input was cut. */
static int send_stream(const tprof_merge_opts *o, merge_runs *const *runs, size_t nr, const merge_input *ins,
                       const mbuf *metas, int rc, const char *err, int trunc)
{
    FILE *f = peer_open(o->spread, 0);
    if (!f) {
        o->spread->send(o->spread->ctx, NULL, 0); /* the root sees a stream cut short */
        return TPROF_ENOMEM;
    }
    int wrc = rc ? 0 : merge_runs_finish_with(runs, nr, NULL, 0, NULL, emit_to_stream, f);
    char why[1024];
    snprintf(why, sizeof why, "%s", rc ? err : wrc && runs[0] && merge_runs_errmsg(runs[0])[0] ? merge_runs_errmsg(runs[0]) : "");
    if (!rc) rc = wrc;
    int w = merge_stream_end(f);
    size_t mine = 0; /* after a failure no input's findings are sent: some may never have been read */
    for (size_t i = 0; !rc && i < o->ninputs; i++) mine += o->spread->mine[i] && ins[i].out->included;
    uint64_t spilled = 0;
    for (size_t t = 0; t < nr; t++) spilled += merge_runs_spilled(runs[t]);
    if (!w) w = put_u64(f, (uint64_t)(int64_t)rc) || put_u64(f, (uint64_t)trunc) || put_u64(f, spilled) ||
                put_u64(f, strlen(why)) ||
                fwrite(why, 1, strlen(why), f) != strlen(why) || put_u64(f, mine);
    for (size_t i = 0; !w && !rc && i < o->ninputs; i++) {
        const tprof_merge_rank *r = ins[i].out;
        if (!o->spread->mine[i] || !r->included) continue;
        w = put_u64(f, i) || put_u64(f, r->events_in) || put_u64(f, r->events_out) || put_u64(f, r->dropped) ||
            put_u64(f, r->ids_kept) || put_u64(f, (uint64_t)r->truncated) || put_u64(f, metas[i].len) ||
            fwrite(metas[i].p ? metas[i].p : "", 1, metas[i].len, f) != metas[i].len;
    }
    if (fclose(f) && !w) w = TPROF_EIO;
    return rc ? rc : w ? TPROF_EIO : 0;
}

/* The root: PEER's findings (after its events) into INS and METAS; *RC and
 * ERRBUF its failure, *TRUNC when an input was cut. 0 or TPROF_EIO (the
 * stream ended early). */
static int read_peer_findings(FILE *f, int peer, merge_input *ins, size_t n, mbuf *metas, int *rc, int *trunc,
                              uint64_t *spilled, char *errbuf, size_t errlen)
{
    uint64_t prc, ptrunc, pspilled, len, count;
    if (get_u64(f, &prc) || get_u64(f, &ptrunc) || get_u64(f, &pspilled) || get_u64(f, &len) || len > 1 << 20)
        return TPROF_EIO;
    *spilled += pspilled;
    char *why = malloc(len + 1);
    if (!why || fread(why, 1, len, f) != len) {
        free(why);
        return why ? TPROF_EIO : TPROF_ENOMEM;
    }
    why[len] = 0;
    if (prc && !*rc) {
        *rc = (int)(int64_t)prc;
        snprintf(errbuf, errlen, "%s", why[0] ? why : "");
        if (!why[0]) snprintf(errbuf, errlen, "process %d: merge: %s", peer, tprof_strerror(*rc));
    }
    free(why);
    if (ptrunc) *trunc = 1;
    if (get_u64(f, &count)) return TPROF_EIO;
    for (uint64_t k = 0; k < count; k++) {
        uint64_t i, in, out, dropped, kept, cut;
        if (get_u64(f, &i) || i >= n || get_u64(f, &in) || get_u64(f, &out) || get_u64(f, &dropped) ||
            get_u64(f, &kept) || get_u64(f, &cut) || get_u64(f, &len))
            return TPROF_EIO;
        tprof_merge_rank *r = ins[i].out;
        r->events_in = in, r->events_out = out, r->dropped = dropped, r->ids_kept = kept, r->truncated = (int)cut;
        metas[i].len = 0;
        if (len && mbuf_grow(&metas[i], len + 1)) return TPROF_ENOMEM;
        if (len && fread(metas[i].p, 1, len, f) != len) return TPROF_EIO;
        metas[i].len = len;
        if (len) metas[i].p[len] = 0;
    }
    return 0;
}

/* Reads what is left of every stream (a peer blocks until the root takes
 * its bytes) and closes them. */
static void drain(FILE **streams, size_t ns)
{
    char buf[1 << 16];
    for (size_t k = 0; k < ns; k++) {
        if (!streams[k]) continue;
        while (fread(buf, 1, sizeof buf, streams[k]) == sizeof buf) {}
        fclose(streams[k]);
        streams[k] = NULL;
    }
}

int tprof_merge(const tprof_merge_opts *o, tprof_merge_report **report, char *errbuf, size_t errlen)
{
    *report = NULL;
    if (!o->ninputs || !o->output) {
        snprintf(errbuf, errlen, "merge: %s", o->ninputs ? "no output file" : "no input trace");
        return TPROF_EUSAGE;
    }
    for (size_t i = 0; i < o->ninputs; i++)
        if (strcmp(o->inputs[i], o->output) == 0 || same_file(o->inputs[i], o->output)) {
            snprintf(errbuf, errlen, "%s: the output is one of the inputs; it is never overwritten", o->output);
            return TPROF_EUSAGE;
        }
    size_t n = o->ninputs;
    tprof_merge_report *rep = calloc(1, sizeof *rep);
    merge_input *ins = calloc(n, sizeof *ins);
    size_t *order = calloc(n, sizeof *order);
    mbuf *metas = calloc(n, sizeof *metas);
    char *outdir = strdup(o->output);
    merge_runs **runs = NULL;
    size_t nthreads = 0;
    tprof_sink *sink = NULL;
    mbuf tail = { 0 };
    int rc = 0, trunc = 0, sent = 0, peer_rc = 0;
    FILE **streams = NULL; /* the root's: the peers' */
    size_t nstreams = 0;
    if (!rep || !ins || !order || !metas || !outdir || !(rep->ranks = calloc(n, sizeof *rep->ranks))) {
        merge_plan_skip(o);
        rc = TPROF_ENOMEM;
        goto done;
    }
    rep->nranks = n;
    if ((rc = merge_plan(o, ins, order, rep, errbuf, errlen))) goto done;
    /* the memory budget is shared by the threads */
    nthreads = rewrite_threads(o, ins, n);
    size_t budget = (o->mem_budget ? o->mem_budget : (size_t)256 << 20) / nthreads;
    if (!(runs = calloc(nthreads, sizeof *runs))) {
        rc = TPROF_ENOMEM;
        goto done;
    }
    for (size_t t = 0; t < nthreads; t++)
        if ((rc = merge_runs_new(&runs[t], budget, o->tmp_dir ? o->tmp_dir : dirname(outdir)))) goto done;
    {
        pool p = { .o = o, .ins = ins, .order = order, .n = n, .metas = metas };
        pthread_mutex_init(&p.lock, NULL);
        worker *wk = calloc(nthreads, sizeof *wk);
        pthread_t *tid = calloc(nthreads, sizeof *tid);
        char *started = calloc(nthreads, 1);
        if (wk && tid && started) {
            for (size_t t = 0; t < nthreads; t++) wk[t] = (worker){ &p, runs[t] };
            /* this thread is worker 0; a thread that cannot start leaves its share to the others */
            for (size_t t = 1; t < nthreads; t++) started[t] = pthread_create(&tid[t], NULL, rewrite_worker, &wk[t]) == 0;
            rewrite_worker(&wk[0]);
            for (size_t t = 1; t < nthreads; t++)
                if (started[t]) pthread_join(tid[t], NULL);
        } else {
            p.rc = TPROF_ENOMEM;
        }
        free(started);
        free(wk);
        free(tid);
        pthread_mutex_destroy(&p.lock);
        rc = p.rc;
        trunc = p.trunc;
        if (rc) snprintf(errbuf, errlen, "%s", p.err);
    }
    if (o->spread && !o->spread->root) { /* a peer: its events to the root, which writes */
        rc = send_stream(o, runs, nthreads, ins, metas, rc, errbuf, trunc);
        sent = 1;
        goto done;
    }
    if (rc) goto done;
    if (o->spread && o->spread->peers > 0) { /* the root: the peers' streams beside its own runs */
        if (!(streams = calloc((size_t)o->spread->peers, sizeof *streams))) {
            rc = TPROF_ENOMEM;
            goto done;
        }
        for (int k = 0; k < o->spread->peers; k++)
            if (!(streams[k] = peer_open(o->spread, k + 1))) {
                rc = TPROF_ENOMEM;
                goto done;
            }
        nstreams = (size_t)o->spread->peers;
    }
    if ((rc = tprof_sink_open(&sink, o->output, tprof_compression_for_path(o->output), o->level, errbuf, errlen)))
        goto done;
    /* the output is compressed on the rewrite threads' cores while this one
     * merges; in the same pieces whatever their number, so that the file is
     * the same byte for byte whatever --threads says */
    if ((rc = tprof_sink_set_threads(sink, (int)nthreads)) < 0) goto sink_failed;
    rc = 0;
    static const char head[] = "{\"traceEvents\":[\n";
    emitter em = { sink, 0 };
    if ((rc = tprof_sink_write(sink, head, sizeof head - 1))) goto sink_failed;
    if ((rc = merge_runs_finish_with(runs, nthreads, streams, nstreams, emit, NULL, &em))) {
        /* a run that could not be read back says so; else the output failed and the sink says why */
        if (merge_runs_errmsg(runs[0])[0]) snprintf(errbuf, errlen, "%s", merge_runs_errmsg(runs[0]));
        goto sink_failed;
    }
    for (size_t k = 0; k < nstreams; k++) /* each peer's findings follow its events */
        if ((rc = read_peer_findings(streams[k], (int)k + 1, ins, n, metas, &peer_rc, &trunc, &rep->runs_spilled,
                                     errbuf, errlen))) {
            snprintf(errbuf, errlen, "process %zu's findings ended early", k + 1);
            goto sink_failed;
        }
    if ((rc = peer_rc)) goto sink_failed;
    for (size_t i = 0; i < n; i++)
        if (ins[i].out->included) rep->events_out += ins[i].out->events_out;
    if ((rc = trailer(&tail, rep, ins, order, n, metas))) goto sink_failed;
    if ((rc = tprof_sink_write(sink, tail.p, tail.len))) goto sink_failed;
    rep->bytes_out = tprof_sink_bytes_in(sink);
    rc = tprof_sink_commit(sink, errbuf, errlen);
    sink = NULL;
    if (rc) goto done;
    struct stat st;
    if (stat(o->output, &st) == 0) rep->file_bytes = (uint64_t)st.st_size;
    for (size_t t = 0; t < nthreads; t++) rep->runs_spilled += merge_runs_spilled(runs[t]);
    goto done;
sink_failed:
    if (!errbuf[0] && sink) snprintf(errbuf, errlen, "%s", tprof_sink_errmsg(sink));
    tprof_sink_abort(sink);
    sink = NULL;
done:
    if (o->spread && !o->spread->root && !sent) /* failed before its events: the root must not wait for them */
        (void)send_stream(o, runs, 0, ins, metas, rc ? rc : TPROF_EIO, errbuf, trunc);
    if (o->spread && o->spread->root && o->spread->peers > 0) { /* what the peers still send, read and dropped */
        if (!streams) streams = calloc((size_t)o->spread->peers, sizeof *streams);
        for (int k = 0; streams && k < o->spread->peers; k++)
            if (!streams[k]) streams[k] = peer_open(o->spread, k + 1);
        drain(streams, streams ? (size_t)o->spread->peers : 0);
        free(streams);
    }
    if (rc == 0 && trunc) rc = TPROF_ETRUNC;
    if ((rc == 0 || rc == TPROF_ETRUNC) && rep) {
        *report = rep;
        rep = NULL;
    } else if (errbuf && !errbuf[0]) {
        snprintf(errbuf, errlen, "merge: %s", tprof_strerror(rc));
    }
    for (size_t i = 0; ins && i < n; i++) merge_input_free(&ins[i]);
    for (size_t i = 0; metas && i < n; i++) free(metas[i].p);
    free(metas);
    free(ins);
    free(order);
    free(outdir);
    free(tail.p);
    for (size_t t = 0; runs && t < nthreads; t++) merge_runs_free(runs[t]);
    free(runs);
    tprof_merge_report_free(rep);
    return rc;
}
