#ifndef MIXFX_CPU_FEATURES_H
#define MIXFX_CPU_FEATURES_H

/// 1 when the CPU and the OS support AVX2 and FMA (cpuid and xgetbv, through the compiler's
/// __builtin_cpu_supports): the AVX2 copy of the DSP kernels may run. Else 0.
int mixfx_cpu_has_avx2_fma(void);

#endif
