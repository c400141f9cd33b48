/* Overhead of the recording hot path: ns per range begin/end pair with the
 * profiler recording and with it off, on 1 and 2 threads.
 *
 *   trainprof-recbench [pairs per thread]     (default 1000000)
 *
 * Each thread records PAIRS ranges into its own preallocated buffer
 * (max_events = PAIRS + slack, so nothing is dropped); the best of 10 rounds
 * is reported, as the machine is shared. The buffer's pages are touched for
 * the first time by the timed loop, so page faults are included. Wall time
 * and the thread's CPU time are both shown: on a shared machine the second
 * leaves out the time the thread waited for a core. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trainprof/profiler.h"

static long pairs = 1000000;
static pthread_barrier_t bar;
static double ns_per_pair[2], cpu_per_pair[2];

static double clk(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    pthread_barrier_wait(&bar);
    double t0 = clk(CLOCK_MONOTONIC), c0 = clk(CLOCK_THREAD_CPUTIME_ID);
    for (long i = 0; i < pairs; i++) {
        tprof_range r = tprof_range_begin("bench");
        tprof_range_end(r);
    }
    ns_per_pair[id] = (clk(CLOCK_MONOTONIC) - t0) / (double)pairs;
    cpu_per_pair[id] = (clk(CLOCK_THREAD_CPUTIME_ID) - c0) / (double)pairs;
    return NULL;
}

static double round_ns(int threads, int on, double *cpu)
{
    tprof_profile_config c;
    tprof_config_default(&c);
    c.enable = on;
    c.start_step = 1;
    c.end_step = 2;
    c.with_stack = false;
    c.record_shapes = false;
    c.profile_memory = false;
    c.max_events = pairs + 64;
    snprintf(c.trace_dir, sizeof c.trace_dir, "/tmp/trainprof-recbench");
    tprof_profiler_set_log(NULL);
    if (tprof_profiler_start(&c, NULL, 0)) exit(1);
    tprof_step_begin(1); /* recording from here when ON */
    pthread_barrier_init(&bar, NULL, (unsigned)threads);
    pthread_t t[2];
    for (int i = 1; i < threads; i++) pthread_create(&t[i], NULL, worker, (void *)(long)i);
    worker((void *)0);
    for (int i = 1; i < threads; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&bar);
    if (on && tprof_profiler_dropped()) fprintf(stderr, "recbench: events were dropped\n");
    tprof_profiler_stop(); /* not timed: the trace is written here */
    double worst = 0;
    *cpu = 0;
    for (int i = 0; i < threads; i++) {
        worst = ns_per_pair[i] > worst ? ns_per_pair[i] : worst;
        *cpu = cpu_per_pair[i] > *cpu ? cpu_per_pair[i] : *cpu;
    }
    return worst;
}

int main(int argc, char **argv)
{
    if (argc > 1) pairs = atol(argv[1]);
    if (pairs < 1000) pairs = 1000;
    printf("ns per begin/end pair, best of 10 rounds of %ld pairs per thread, slowest thread\n", pairs);
    printf("%-10s %-8s %10s %10s\n", "profiling", "threads", "wall", "thread cpu");
    for (int on = 0; on <= 1; on++)
        for (int threads = 1; threads <= 2; threads++) {
            double best = 1e30, bcpu = 1e30, cpu;
            for (int r = 0; r < 10; r++) {
                double x = round_ns(threads, on, &cpu);
                best = x < best ? x : best;
                bcpu = cpu < bcpu ? cpu : bcpu;
            }
            printf("%-10s %-8d %10.1f %10.1f\n", on ? "on" : "off", threads, best, bcpu);
        }
    return 0;
}
