/* Large arrays on huge pages (internal). Page faults are the main cost of
 * writing a freshly allocated array once (the tree's and the reader's
 * arrays of millions of records); on a virtual machine each 4 KiB fault
 * costs microseconds, so arrays of 8 MiB and more are put on 2 MiB pages
 * when the kernel allows it (transparent huge pages in "madvise" mode, the
 * common default). A hint only: without it the memory is ordinary. */
#ifndef TPROF_BIG_H
#define TPROF_BIG_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TPROF_HUGE_PAGE ((size_t)2 << 20)
#define TPROF_HUGE_FROM ((size_t)8 << 20) /* smaller arrays: not worth a huge page's zeroing */

/* Asks for huge pages under the whole 2 MiB pages inside [P, P + BYTES). */
static inline void tprof_huge_pages(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    uintptr_t a = ((uintptr_t)p + TPROF_HUGE_PAGE - 1) & ~(uintptr_t)(TPROF_HUGE_PAGE - 1), e = (uintptr_t)p + bytes;
    if (bytes >= TPROF_HUGE_FROM && e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)p, (void)bytes;
#endif
}

/* N elements of ELEM bytes (at least one byte), uninitialised, freed with
 * free(); NULL when out of memory or N * ELEM overflows. */
static inline void *tprof_big_alloc(size_t n, size_t elem)
{
    if (elem && n > SIZE_MAX / elem) return NULL;
    size_t bytes = n * elem;
    if (bytes < TPROF_HUGE_FROM) return malloc(bytes ? bytes : 1);
    size_t rounded = (bytes + TPROF_HUGE_PAGE - 1) & ~(TPROF_HUGE_PAGE - 1);
    void *p = aligned_alloc(TPROF_HUGE_PAGE, rounded);
    if (p) tprof_huge_pages(p, rounded);
    return p;
}

/* The same, zeroed. */
static inline void *tprof_big_calloc(size_t n, size_t elem)
{
    if (elem && n > SIZE_MAX / elem) return NULL;
    if (n * elem < TPROF_HUGE_FROM) return calloc(n ? n : 1, elem ? elem : 1);
    void *p = tprof_big_alloc(n, elem);
    if (p) memset(p, 0, n * elem);
    return p;
}

#endif
