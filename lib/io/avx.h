/* ISA-L's inflate and deflate leave the upper halves of the AVX registers
 * dirty on the calling thread; until they are cleared, every legacy-SSE
 * instruction that thread runs next pays a transition penalty (the recording
 * library's trainer saw its steps take twice as long after writing a trace).
 * vzeroupper clears them; it exists only on CPUs with AVX, where the penalty
 * does. Internal. */
#ifndef TPROF_AVX_H
#define TPROF_AVX_H

static inline void tprof_clear_upper_avx(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("avx")) __asm__ volatile("vzeroupper" ::: "memory");
#endif
}

#endif
