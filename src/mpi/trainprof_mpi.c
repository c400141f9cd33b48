/* trainprof-mpi: trainprof's commands with their traces spread over MPI
 * processes (mpirun -np N trainprof-mpi COMMAND INPUT...). Each process
 * reads and analyses its share of the inputs, balanced by bytes; the root
 * (process 0) receives every input's outcome as the bytes cli_run passes
 * every result through (src/cli/outcome.c), reads them back and prints
 * exactly what trainprof prints. Commands that do not read their traces
 * through cli_run (merge, diff, report, mem, log, flops, mfu) run on the
 * root alone. docs/ARCHITECTURE.md says what each process reads and sends. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

typedef struct {
    int rank, size;
    /* TPROF_MPI_STATS: the root's share of the work, said on stderr */
    int stats;
    double t_gather, t_gathered; /* MPI_Wtime at the gather's start and end */
    double t_read_back;          /* of which reading the outcomes back */
    uint64_t received, outcomes;
} mpi_job;

/* MPI counts are ints: bytes move in pieces of at most this. */
#define PIECE (1 << 30)
/* A process that could not make its outcomes sends this length. */
#define FAILED UINT64_MAX

static int cmp_by_size(const void *a, const void *b, void *sizes)
{
    const int64_t *s = sizes;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (s[x] != s[y]) return s[x] > s[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The inputs by bytes, largest first, each to the process with the fewest
 * bytes so far (the lowest on ties): every process computes the same
 * placement from the same sizes. TPROF_MPI_TEST_STALL=R makes process R
 * write its pid to TPROF_MPI_TEST_PIDFILE and sleep (the test that kills
 * a process mid-run). */
static int place(void *vctx, char *const *paths, const int64_t *sizes, size_t n, uint8_t *mine)
{
    (void)paths;
    mpi_job *j = vctx;
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    int64_t *load = calloc((size_t)j->size, sizeof *load), *sz = malloc((n ? n : 1) * sizeof *sz);
    if (!order || !load || !sz) {
        free(order), free(load), free(sz);
        cli_error("out of memory");
        return EXIT_INPUT;
    }
    for (size_t i = 0; i < n; i++) order[i] = i, sz[i] = sizes[i] > 0 ? sizes[i] : 0;
    qsort_r(order, n, sizeof *order, cmp_by_size, sz);
    for (size_t k = 0; k < n; k++) {
        int p = 0;
        for (int q = 1; q < j->size; q++)
            if (load[q] < load[p]) p = q;
        load[p] += sz[order[k]] + 1; /* + 1: empty files still spread */
        mine[order[k]] = p == j->rank;
    }
    free(order), free(load), free(sz);
    const char *stall = getenv("TPROF_MPI_TEST_STALL"), *pidfile = getenv("TPROF_MPI_TEST_PIDFILE");
    if (stall && pidfile && atoi(stall) == j->rank) {
        FILE *f = fopen(pidfile, "w");
        if (f) fprintf(f, "%ld\n", (long)getpid()), fclose(f);
        sleep(600);
    }
    return 0;
}

static int send_bytes(const char *b, uint64_t len)
{
    if (MPI_Send(&len, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
    for (uint64_t at = 0; len != FAILED && at < len; at += PIECE) {
        int piece = (int)(len - at < PIECE ? len - at : PIECE);
        if (MPI_Send(b + at, piece, MPI_CHAR, 0, 1, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
    }
    return 0;
}

static char *recv_bytes(int from, uint64_t *len)
{
    if (MPI_Recv(len, 1, MPI_UINT64_T, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS || *len == FAILED)
        return NULL;
    char *b = malloc(*len ? *len : 1);
    for (uint64_t at = 0; b && at < *len; at += PIECE) {
        int piece = (int)(*len - at < PIECE ? *len - at : PIECE);
        if (MPI_Recv(b + at, piece, MPI_CHAR, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            free(b);
            return NULL;
        }
    }
    return b;
}

/* A process's outcomes as one message: per input its index, its length
 * and its bytes. */
static char *pack(char *const *buf, const size_t *len, size_t n, uint64_t *out_len)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (buf[i]) total += 16 + len[i];
    char *m = malloc(total ? total : 1), *p = m;
    for (size_t i = 0; m && i < n; i++) {
        if (!buf[i]) continue;
        uint64_t head[2] = { i, len[i] };
        memcpy(p, head, 16);
        memcpy(p + 16, buf[i], len[i]);
        p += 16 + len[i];
    }
    *out_len = total;
    return m;
}

static int gather(void *vctx, char *const *buf, const size_t *len, size_t n,
                  int (*take)(void *arg, size_t i, const char *b, size_t l), void *arg)
{
    mpi_job *j = vctx;
    if (j->rank != 0) {
        uint64_t total;
        char *m = pack(buf, len, n, &total);
        int rc = send_bytes(m, m ? total : FAILED);
        free(m);
        return rc ? EXIT_INPUT : 0;
    }
    int rc = 0;
    j->t_gather = MPI_Wtime();
    for (size_t i = 0; i < n; i++)
        if (buf[i] && !rc) rc = take(arg, i, buf[i], len[i]), j->outcomes++;
    for (int from = 1; from < j->size; from++) { /* every process's, even after an error: none is left waiting */
        uint64_t total;
        char *m = recv_bytes(from, &total);
        if (!m) {
            cli_error("process %d of %d sent no results (out of memory, or it failed)", from, j->size);
            if (!rc) rc = EXIT_INPUT;
            continue;
        }
        for (uint64_t at = 0; !rc && at + 16 <= total;) {
            uint64_t head[2];
            memcpy(head, m + at, 16);
            if (head[0] >= n || head[1] > total - at - 16) {
                cli_error("process %d sent a malformed message", from);
                rc = EXIT_INPUT;
                break;
            }
            double t0 = MPI_Wtime();
            rc = take(arg, (size_t)head[0], m + at + 16, (size_t)head[1]);
            j->t_read_back += MPI_Wtime() - t0;
            at += 16 + head[1];
            j->outcomes++;
        }
        j->received += total;
        free(m);
    }
    j->t_gathered = MPI_Wtime();
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
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "trainprof-mpi: MPI_Init failed\n");
        return EXIT_INPUT;
    }
    mpi_job j = { .stats = getenv("TPROF_MPI_STATS") != NULL };
    MPI_Comm_rank(MPI_COMM_WORLD, &j.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &j.size);
    cli_engine e = { .ctx = &j, .place = place, .gather = gather, .agree = agree, .root = j.rank == 0 };
    int distributed = argc >= 2 && cli_command_distributes(argv[1]);
    int rc = EXIT_OK;
    if (distributed) {
        cli_set_engine(&e);
        cli_notes_off = j.rank != 0; /* the inputs' notes once; a file's warnings and errors where it is read */
        rc = cli_main(argc, argv);
    } else if (j.rank == 0) {
        rc = cli_main(argc, argv); /* the root alone: its output is trainprof's */
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD); /* a usage error before any exchange, too */
    MPI_Finalize();
    return rc;
}
