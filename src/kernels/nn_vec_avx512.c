/* nn_vec_avx512.c — the AVX-512 instance of the vectorised CNN kernels (nn_vec.inc). Only
 * reached when tn_cpu_isa() >= TN_ISA_AVX512. */
#include "kernels/nn_vec.h"

#if defined(__x86_64__)
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
#define SFX avx512
#include "kernels/nn_vec.inc"
#endif
