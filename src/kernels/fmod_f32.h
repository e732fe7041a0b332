/* fmod_f32.h — float32 fmod and remainder (upstream's Python-style modulo built on fmod)
 * on AVX2 vectors: fmod is exact, so computing it another way gives fmodf's bits. */
#ifndef TN_KERNELS_FMOD_F32_H
#define TN_KERNELS_FMOD_F32_H

#include "kernels/elementwise.h"

/* Overwrites the float32 fmod and remainder entries of the AVX2 tier's table `t`; their
 * loops take contiguous or broadcast-scalar operands and hand other layouts to `ref`, the
 * scalar reference table. No-op off x86-64. */
void tn_ew_register_fmod_avx2(tn_loop_fn (*t)[TN_DTYPE_COUNT], tn_loop_fn (*ref)[TN_DTYPE_COUNT]);

#endif
