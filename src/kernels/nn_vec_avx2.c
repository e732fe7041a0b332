/* nn_vec_avx2.c — the AVX2+FMA instance of the vectorised CNN kernels (nn_vec.inc). Only
 * reached when tn_cpu_isa() >= TN_ISA_AVX2. */
#include "kernels/nn_vec.h"

#if defined(__x86_64__)
#pragma GCC target("avx2,fma,f16c")
#define SFX avx2
#include "kernels/nn_vec.inc"
#endif
