/* trainprof-mpi: trainprof's commands with their traces spread over MPI
 * processes (mpirun -np N trainprof-mpi COMMAND INPUT...). Each process
 * reads and analyses its share of the inputs, balanced by bytes; the root
 * (process 0) receives every input's outcome as the bytes cli_run passes
 * every result through (src/cli/outcome.c), reads them back and prints
 * exactly what trainprof prints. merge spreads its rewrite the same way
 * (tprof_merge_spread: each process streams its rewritten events, in order,
 * to the root, which merges them and writes the file); diff sends each
 * trace's part (cli_analyse_inputs) and the root compares the sides; report
 * spreads its summary of the traces. Commands that read no traces (mem,
 * log, flops, mfu) run on the root alone. docs/ARCHITECTURE.md says what
 * each process reads and sends. */
#include <mpi.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* merge: what the root has received of one peer's stream */
typedef struct {
    char *buf;
    size_t len, at, cap;
    int ended;
} peer_stream;

typedef struct {
    int rank, size;
    int local; /* --local-files: each process reads the files on its own disk */
    int merging; /* merge: a process other than the root says nothing (the root says what all found) */
    peer_stream *peers; /* the root's, by process (merge) */
    /* a peer's stream in flight (merge): two buffers, sent in turn */
    char *send_buf[2];
    size_t send_cap[2];
    MPI_Request in_flight[2];
    unsigned sending;
    /* TPROF_MPI_STATS: the root's share of the work, said on stderr */
    int stats;
    double t_gather, t_gathered; /* MPI_Wtime at the gather's start and end */
    double t_read_back;          /* of which reading the outcomes back */
    uint64_t received, outcomes;
    uint64_t merge_received; /* merge: the bytes of the peers' streams the root took */
    uint64_t exchanged;      /* collectives matched by group: the bytes this process received */
    double t_exchange;       /* and the seconds in its exchanges */
} mpi_job;

/* MPI counts are ints: bytes move in pieces of at most this. */
#define PIECE (1 << 30)

static int cmp_by_size(const void *a, const void *b, void *sizes)
{
    const int64_t *s = sizes;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (s[x] != s[y]) return s[x] > s[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Whether PATH is on this process's disk: a regular file here, and with
 * TPROF_MPI_TEST_VISIBLE (the test of --local-files on one machine) one of
 * the files this process is given to see, by a hash of the path. */
static int here(const mpi_job *j, const char *path, int64_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    if (size) *size = (int64_t)st.st_size;
    if (!getenv("TPROF_MPI_TEST_VISIBLE")) return 1;
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) h = (h ^ *p) * 1099511628211ull;
    return (int)(h % (uint64_t)j->size) == j->rank;
}

/* Every process parses the same arguments, so a usage error (or --help)
 * would be said once per process: a process other than the root holds its
 * stdout and stderr in a file until its command's inputs are listed (the
 * arguments were good), then lets them through; a command that ends before
 * that said what the root says, which is dropped. */
static int held[2] = { -1, -1 }, saved[2] = { -1, -1 }; /* by fd - 1: stdout, stderr */

static void hold_output(void)
{
    for (int fd = 1; fd <= 2; fd++) {
        FILE *t = tmpfile();
        if (!t) return;
        fflush(fd == 1 ? stdout : stderr);
        held[fd - 1] = dup(fileno(t));
        saved[fd - 1] = dup(fd);
        fclose(t);
        if (held[fd - 1] < 0 || saved[fd - 1] < 0 || dup2(held[fd - 1], fd) < 0) {
            if (saved[fd - 1] >= 0) close(saved[fd - 1]);
            if (held[fd - 1] >= 0) close(held[fd - 1]);
            held[fd - 1] = saved[fd - 1] = -1;
        }
    }
}

/* What was held goes out when SHOW, else is dropped; output flows again. */
static void release_output(int show)
{
    for (int fd = 1; fd <= 2; fd++) {
        if (saved[fd - 1] < 0) continue;
        fflush(fd == 1 ? stdout : stderr);
        dup2(saved[fd - 1], fd);
        char buf[4096];
        ssize_t got;
        if (show && lseek(held[fd - 1], 0, SEEK_SET) == 0)
            while ((got = read(held[fd - 1], buf, sizeof buf)) > 0)
                for (ssize_t at = 0, w; at < got; at += w) /* a pipe takes what it has room for */
                    if ((w = write(fd, buf + at, (size_t)(got - at))) < 0) {
                        if (errno != EINTR) break;
                        w = 0;
                    }
        close(saved[fd - 1]);
        close(held[fd - 1]);
        held[fd - 1] = saved[fd - 1] = -1;
    }
}

/* Out of memory between collective calls: the others would wait for this
 * process forever, so the job ends. */
static void *or_abort(void *p)
{
    if (!p) {
        cli_error("out of memory");
        MPI_Abort(MPI_COMM_WORLD, EXIT_INPUT);
    }
    return p;
}

/* Every process's LEN bytes at BUF, gathered in process order into *OUT
 * (malloc'ed; *LENS and *AT per process); -1 past 2 GiB in all. */
static int all_bytes(const mpi_job *j, const char *buf, int len, char **out, int **lens, int **at)
{
    *out = NULL;
    *lens = or_abort(calloc((size_t)j->size, sizeof **lens));
    *at = or_abort(calloc((size_t)j->size, sizeof **at));
    MPI_Allgather(&len, 1, MPI_INT, *lens, 1, MPI_INT, MPI_COMM_WORLD);
    int64_t total = 0;
    for (int p = 0; p < j->size; p++) (*at)[p] = (int)total, total += (*lens)[p];
    if (total > INT32_MAX) return -1; /* every process sees the same total */
    *out = or_abort(malloc(total ? (size_t)total : 1));
    MPI_Allgatherv(buf, len, MPI_CHAR, *out, *lens, *at, MPI_CHAR, MPI_COMM_WORLD);
    return 0;
}

static void add_path(tprof_inputs *in, size_t *cap, const char *p)
{
    for (size_t k = 0; k < in->npaths; k++) /* a file two processes see is listed once */
        if (!strcmp(in->paths[k], p)) return;
    if (in->npaths == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        char **np = realloc(in->paths, c * sizeof *np);
        if (!np) return;
        in->paths = np;
        *cap = c;
    }
    char *s = strdup(p);
    if (s) in->paths[in->npaths++] = s;
}

/* --local-files: each process lists what the arguments hold on its own
 * disk (directories expanded as trainprof does); the inputs are every
 * process's, once each, in process order. An argument found on no process
 * is an error naming it, said by the root; every process returns it. */
static int local_inputs(void *vctx, char *const *args, int n, tprof_inputs *out)
{
    mpi_job *j = vctx;
    release_output(1); /* the arguments were good */
    memset(out, 0, sizeof *out);
    char *mine = NULL, err[1024];
    size_t mine_len = 0;
    uint8_t *found = or_abort(calloc((size_t)(n ? n : 1), 1));
    FILE *f = or_abort(open_memstream(&mine, &mine_len));
    for (int a = 0; a < n; a++) {
        if (!strcmp(args[a], "-")) continue; /* stdin is no file on a disk */
        tprof_inputs one;
        const char *arg = args[a];
        if (tprof_inputs_expand(&arg, 1, TPROF_INPUT_BIT(TPROF_INPUT_TRACE), &one, err, sizeof err) == 0)
            for (size_t k = 0; k < one.npaths; k++)
                if (here(j, one.paths[k], NULL)) fwrite(one.paths[k], 1, strlen(one.paths[k]) + 1, f), found[a] = 1;
        tprof_inputs_free(&one);
    }
    or_abort(fclose(f) == 0 ? mine : NULL);
    if (mine_len > INT32_MAX) mine_len = 0, found[0] = 0; /* 2 GiB of file names: said below */
    /* which arguments some process found, and every process's files */
    uint8_t *anywhere = or_abort(calloc((size_t)(n ? n : 1), 1));
    MPI_Allreduce(found, anywhere, n, MPI_UINT8_T, MPI_MAX, MPI_COMM_WORLD);
    char *all = NULL;
    int *lens = NULL, *at = NULL, rc = 0;
    if (all_bytes(j, mine, (int)mine_len, &all, &lens, &at)) {
        if (j->rank == 0) cli_error("the inputs' names pass 2 GiB (--local-files)");
        rc = EXIT_INPUT;
    }
    for (int a = 0; !rc && a < n; a++)
        if (!anywhere[a]) {
            if (j->rank == 0) cli_error("%s: no trace there on any process's disk (--local-files)", args[a]);
            rc = EXIT_INPUT;
        }
    size_t cap = 0;
    for (int p = 0; !rc && p < j->size; p++)
        for (int k = at[p]; k < at[p] + lens[p]; k += (int)strlen(all + k) + 1) add_path(out, &cap, all + k);
    if (!rc && j->rank == 0)
        cli_note("--local-files: %zu traces on the disks of %d processes", out->npaths, j->size);
    free(mine), free(found), free(anywhere), free(all), free(lens), free(at);
    if (rc) tprof_inputs_free(out);
    return rc;
}

/* The inputs by bytes, largest first, each to the process with the fewest
 * bytes so far (the lowest on ties): every process computes the same
 * placement from the same sizes. TPROF_MPI_TEST_STALL=R makes process R
 * write its pid to TPROF_MPI_TEST_PIDFILE and sleep (the test that kills
 * a process mid-run). */
static int place(void *vctx, char *const *paths, const int64_t *sizes, size_t n, uint8_t *mine)
{
    mpi_job *j = vctx;
    if (!j->merging) release_output(1); /* the arguments were good */
    size_t *order = or_abort(malloc((n ? n : 1) * sizeof *order));
    int64_t *load = or_abort(calloc((size_t)j->size, sizeof *load)), *sz = or_abort(malloc((n ? n : 1) * sizeof *sz));
    /* --local-files: who holds each file (its size there) */
    uint8_t *has = NULL;
    int rc = 0;
    if (j->local) {
        uint8_t *here_v = or_abort(malloc(n ? n : 1));
        has = or_abort(malloc((n ? n : 1) * (size_t)j->size));
        int64_t *big = or_abort(malloc((n ? n : 1) * sizeof *big));
        for (size_t i = 0; i < n; i++) here_v[i] = (uint8_t)here(j, paths[i], &big[i]);
        for (size_t i = 0; i < n; i++) big[i] = here_v[i] ? big[i] : 0;
        MPI_Allgather(here_v, (int)n, MPI_UINT8_T, has, (int)n, MPI_UINT8_T, MPI_COMM_WORLD);
        MPI_Allreduce(big, sz, (int)n, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
        free(here_v), free(big);
    } else
        for (size_t i = 0; i < n; i++) sz[i] = sizes[i] > 0 ? sizes[i] : 0;
    for (size_t i = 0; i < n; i++) order[i] = i;
    qsort_r(order, n, sizeof *order, cmp_by_size, sz);
    for (size_t k = 0; !rc && k < n; k++) {
        int p = -1;
        for (int q = 0; q < j->size; q++)
            if ((!has || has[(size_t)q * n + order[k]]) && (p < 0 || load[q] < load[p])) p = q;
        if (!strcmp(paths[order[k]], "-")) p = 0; /* mpirun gives stdin to the first process */
        if (p < 0) { /* gone since it was listed */
            if (j->rank == 0) cli_error("%s: on no process's disk (--local-files)", paths[order[k]]);
            rc = EXIT_INPUT;
            break;
        }
        load[p] += sz[order[k]] + 1; /* + 1: empty files still spread */
        mine[order[k]] = p == j->rank;
        if (mine[order[k]] && j->local && !here(j, paths[order[k]], NULL)) { /* the test's check of the placement */
            cli_error("%s: placed on process %d, which does not hold it", paths[order[k]], j->rank);
            rc = EXIT_INPUT;
        }
    }
    free(order), free(load), free(sz), free(has);
    if (rc) return rc;
    const char *stall = getenv("TPROF_MPI_TEST_STALL"), *pidfile = getenv("TPROF_MPI_TEST_PIDFILE");
    if (stall && pidfile && atoi(stall) == j->rank) {
        FILE *f = fopen(pidfile, "w");
        if (f) fprintf(f, "%ld\n", (long)getpid()), fclose(f);
        sleep(600);
    }
    return 0;
}

/* The outcomes go to the root one at a time, each as a head (its input's
 * index and length; the index END after the last) sent synchronously,
 * then its bytes in pieces: the root holds one outcome at a time, and a
 * process cannot send ahead of what the root has taken (no pile of
 * unexpected messages at the root, however many ranks). */
#define END UINT64_MAX

static int send_outcome(uint64_t index, const char *b, uint64_t len)
{
    uint64_t head[2] = { index, len };
    if (MPI_Ssend(head, 2, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
    for (uint64_t at = 0; at < len; at += PIECE) {
        int piece = (int)(len - at < PIECE ? len - at : PIECE);
        if (MPI_Send(b + at, piece, MPI_CHAR, 0, 1, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
    }
    return 0;
}

/* The next outcome from process FROM: 1 with *INDEX and its bytes (*B,
 * malloc'ed), 0 after its last, -1 when MPI fails. Without memory for it
 * the job is ended (its sender would wait for the root for ever). */
static int recv_outcome(int from, uint64_t *index, char **b, uint64_t *len)
{
    uint64_t head[2];
    *b = NULL;
    if (MPI_Recv(head, 2, MPI_UINT64_T, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
    if (head[0] == END) return 0;
    *index = head[0], *len = head[1];
    char *buf = malloc(*len ? *len : 1);
    if (!buf) {
        cli_error("out of memory for the %" PRIu64 " bytes of an outcome from process %d", *len, from);
        MPI_Abort(MPI_COMM_WORLD, EXIT_INPUT);
    }
    for (uint64_t at = 0; at < *len; at += PIECE) {
        int piece = (int)(*len - at < PIECE ? *len - at : PIECE);
        if (MPI_Recv(buf + at, piece, MPI_CHAR, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            free(buf);
            return -1;
        }
    }
    *b = buf;
    return 1;
}

static int gather(void *vctx, cli_store *outbox, size_t n,
                  int (*take)(void *arg, size_t i, const char *b, size_t l), void *arg)
{
    mpi_job *j = vctx;
    if (j->rank != 0) {
        int rc = 0;
        for (size_t i = 0; !rc && i < n; i++) {
            if (!cli_store_has(outbox, i)) continue;
            char *b;
            size_t l;
            if (cli_store_get(outbox, i, &b, &l)) { /* the root must not wait for it: the job ends */
                cli_error("this process's results could not be read back from its temporary file");
                MPI_Abort(MPI_COMM_WORLD, EXIT_INPUT);
            }
            rc = send_outcome(i, b, l);
            free(b);
        }
        if (!rc) rc = send_outcome(END, NULL, 0);
        return rc ? EXIT_INPUT : 0;
    }
    int rc = 0;
    j->t_gather = MPI_Wtime();
    for (size_t i = 0; !rc && i < n; i++) {
        if (!cli_store_has(outbox, i)) continue;
        char *b;
        size_t l;
        if (cli_store_get(outbox, i, &b, &l)) {
            cli_error("the root's own results could not be read back from its temporary file");
            rc = EXIT_INPUT;
        } else
            rc = take(arg, i, b, l);
        free(b);
        j->outcomes++;
    }
    for (int from = 1; from < j->size; from++) { /* every process's, even after an error: none is left waiting */
        uint64_t index, l;
        char *b;
        int got;
        while ((got = recv_outcome(from, &index, &b, &l)) == 1) {
            if (index >= n) {
                cli_error("process %d sent a malformed message", from);
                if (!rc) rc = EXIT_INPUT;
            } else if (!rc) {
                double t0 = MPI_Wtime();
                rc = take(arg, (size_t)index, b, (size_t)l);
                j->t_read_back += MPI_Wtime() - t0;
            }
            free(b);
            j->received += 16 + l;
            j->outcomes++;
        }
        if (got < 0) {
            cli_error("process %d of %d sent no results (it failed)", from, j->size);
            if (!rc) rc = EXIT_INPUT;
        }
    }
    j->t_gathered = MPI_Wtime();
    return rc;
}

/* merge: a peer's stream to the root in messages of at most PIECE bytes
 * (stdio hands over 1 MiB at a time), an empty one ending it. */
#define TAG_MERGE 2

static int merge_send(void *vctx, const void *data, size_t len)
{
    mpi_job *j = vctx;
    size_t at = 0;
    do { /* a copy in flight while the next piece is made: the root's merge and this one's overlap */
        size_t piece = len - at < PIECE ? len - at : PIECE;
        int k = j->sending++ & 1;
        if (j->in_flight[k] != MPI_REQUEST_NULL && MPI_Wait(&j->in_flight[k], MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        if (piece > j->send_cap[k]) { /* out of memory: the root would wait for the end */
            j->send_buf[k] = or_abort(realloc(j->send_buf[k], piece));
            j->send_cap[k] = piece;
        }
        if (piece) memcpy(j->send_buf[k], (const char *)data + at, piece);
        if (MPI_Isend(j->send_buf[k], (int)piece, MPI_CHAR, 0, TAG_MERGE, MPI_COMM_WORLD, &j->in_flight[k]) != MPI_SUCCESS)
            return -1;
        at += piece;
    } while (at < len);
    if (!len) /* the end: nothing left in flight */
        for (int k = 0; k < 2; k++)
            if (j->in_flight[k] != MPI_REQUEST_NULL && MPI_Wait(&j->in_flight[k], MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return -1;
    return 0;
}

/* The root: up to CAP bytes of PEER's stream, receiving its next message
 * when what came is used up; 0 after its empty one. */
static long merge_recv(void *vctx, int peer, void *buf, size_t cap)
{
    mpi_job *j = vctx;
    peer_stream *p = &j->peers[peer];
    while (p->at == p->len) {
        if (p->ended) return 0;
        MPI_Status st;
        int count;
        if (MPI_Probe(peer, TAG_MERGE, MPI_COMM_WORLD, &st) != MPI_SUCCESS ||
            MPI_Get_count(&st, MPI_CHAR, &count) != MPI_SUCCESS || count < 0)
            return -1;
        if ((size_t)count > p->cap) { /* out of memory: the peer would wait for its bytes to be taken */
            p->buf = or_abort(realloc(p->buf, (size_t)count));
            p->cap = (size_t)count;
        }
        j->merge_received += (uint64_t)count;
        if (MPI_Recv(p->buf, count, MPI_CHAR, peer, TAG_MERGE, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        p->len = (size_t)count;
        p->at = 0;
        p->ended = count == 0;
    }
    size_t n = p->len - p->at < cap ? p->len - p->at : cap;
    memcpy(buf, p->buf + p->at, n);
    p->at += n;
    return (long)n;
}

/* merge's plan: every process's findings of its inputs to every process. */
static int merge_share(void *vctx, const void *data, size_t len, char **all, size_t *all_len)
{
    const mpi_job *j = vctx;
    int *lens = NULL, *at = NULL;
    /* every process takes part, whatever its length: the others wait for it */
    int failed = all_bytes(j, data, len > INT32_MAX ? 0 : (int)len, all, &lens, &at) || len > INT32_MAX;
    *all_len = 0;
    for (int p = 0; !failed && p < j->size; p++) *all_len += (size_t)lens[p];
    free(lens), free(at);
    return failed ? -1 : 0;
}

/* Every process's TO[p] to process p (an all-to-all of bytes); what each
 * process sent this one into FROM. -1 past 2 GiB in or out (MPI counts are
 * ints): the lengths still move, so no process is left waiting. */
static int exchange(void *vctx, char *const *to, const size_t *to_len, char **from, size_t *from_len)
{
    mpi_job *j = vctx;
    double t0 = MPI_Wtime();
    size_t np = (size_t)j->size;
    uint64_t *out = or_abort(malloc(np * sizeof *out)), *in = or_abort(malloc(np * sizeof *in));
    int *oc = or_abort(malloc(np * sizeof *oc)), *od = or_abort(malloc(np * sizeof *od));
    int *ic = or_abort(malloc(np * sizeof *ic)), *id = or_abort(malloc(np * sizeof *id));
    uint64_t total_out = 0, total_in = 0;
    for (size_t p = 0; p < np; p++) out[p] = to_len[p], total_out += to_len[p];
    MPI_Alltoall(out, 1, MPI_UINT64_T, in, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    for (size_t p = 0; p < np; p++) total_in += in[p];
    int too_big = total_out > INT32_MAX || total_in > INT32_MAX, any;
    MPI_Allreduce(&too_big, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    int rc = any ? -1 : 0;
    char *sbuf = NULL, *rbuf = NULL;
    if (!rc) {
        sbuf = or_abort(malloc(total_out ? total_out : 1));
        rbuf = or_abort(malloc(total_in ? total_in : 1));
        int a = 0, b = 0;
        for (size_t p = 0; p < np; p++) {
            if (to_len[p]) memcpy(sbuf + a, to[p], to_len[p]);
            oc[p] = (int)to_len[p], od[p] = a, a += oc[p];
            ic[p] = (int)in[p], id[p] = b, b += ic[p];
        }
        if (MPI_Alltoallv(sbuf, oc, od, MPI_CHAR, rbuf, ic, id, MPI_CHAR, MPI_COMM_WORLD) != MPI_SUCCESS) rc = -1;
    }
    for (size_t p = 0; p < np; p++) {
        from[p] = NULL, from_len[p] = 0;
        if (rc || !in[p]) continue;
        from[p] = or_abort(malloc(in[p]));
        memcpy(from[p], rbuf + id[p], in[p]);
        from_len[p] = in[p];
        j->exchanged += in[p];
    }
    free(out), free(in), free(oc), free(od), free(ic), free(id), free(sbuf), free(rbuf);
    j->t_exchange += MPI_Wtime() - t0;
    return rc;
}

static int agree(void *vctx, int rc)
{
    mpi_job *j = vctx;
    if (j->stats && j->rank == 0 && j->t_gathered > 0)
        fprintf(stderr,
                "trainprof-mpi: root: %llu outcomes, %llu bytes from %d other processes, gathered in %.3f s after "
                "its own (of which reading theirs back %.3f s); reduced and printed in %.3f s\n",
                (unsigned long long)j->outcomes, (unsigned long long)j->received, j->size - 1,
                j->t_gathered - j->t_gather, j->t_read_back, MPI_Wtime() - j->t_gathered);
    if (j->stats) { /* every process's peak: what bounds it is the question at scale */
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        fprintf(stderr, "trainprof-mpi: process %d: peak RSS %ld KiB\n", j->rank, ru.ru_maxrss);
    }
    if (j->stats && j->rank == 0 && j->t_exchange > 0)
        fprintf(stderr, "trainprof-mpi: root: collectives matched by group: %llu bytes received in exchanges, %.3f s\n",
                (unsigned long long)j->exchanged, j->t_exchange);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "trainprof-mpi: MPI_Init failed\n");
        return EXIT_INPUT;
    }
    mpi_job j = { .stats = getenv("TPROF_MPI_STATS") != NULL, .in_flight = { MPI_REQUEST_NULL, MPI_REQUEST_NULL } };
    MPI_Comm_rank(MPI_COMM_WORLD, &j.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &j.size);
    /* --local-files (ours, not the command's): taken out of the arguments */
    int k = 2;
    for (int a = 2; a < argc; a++)
        if (!strcmp(argv[a], "--local-files")) j.local = 1;
        else argv[k++] = argv[a];
    argc = argc > 2 ? k : argc;
    argv[argc] = NULL;
    cli_engine e = { .ctx = &j, .place = place, .gather = gather, .agree = agree, .root = j.rank == 0,
                     .inputs = j.local ? local_inputs : NULL, .send = merge_send, .recv = merge_recv, .share = merge_share,
                     .peers = j.size - 1, .exchange = exchange, .procs = j.size, .me = j.rank };
    /* report --local-files: each process's own list of inputs would differ, so the root alone */
    int distributed = argc >= 2 && cli_command_distributes(argv[1]) && !(j.local && !strcmp(argv[1], "report"));
    j.merging = argc >= 2 && !strcmp(argv[1], "merge") && !j.local; /* --local-files: merge on the root */
    if (j.merging && j.rank == 0) j.peers = or_abort(calloc((size_t)j.size, sizeof *j.peers));
    int rc = EXIT_OK;
    if (distributed || j.merging) {
        if (j.rank != 0) hold_output();
        cli_set_engine(&e);
        cli_notes_off = j.rank != 0; /* the inputs' notes once; a file's warnings and errors where it is read */
        rc = cli_main(argc, argv);
    } else if (j.rank == 0) {
        rc = cli_main(argc, argv); /* the root alone: its output is trainprof's */
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD); /* a usage error before any exchange, too */
    if (j.stats && j.rank == 0 && j.merging)
        fprintf(stderr, "trainprof-mpi: root: merged %llu bytes of rewritten events from %d other processes\n",
                (unsigned long long)j.merge_received, j.size - 1);
    release_output(0); /* still held: the command ended before its inputs (usage, --help), as on the root;
                          merge: the root said what every process found */
    if (j.peers)
        for (int p = 0; p < j.size; p++) free(j.peers[p].buf);
    free(j.peers);
    free(j.send_buf[0]), free(j.send_buf[1]);
    MPI_Finalize();
    return rc;
}
