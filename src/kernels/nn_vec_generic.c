/* nn_vec_generic.c — the baseline-ISA instance of the vectorised CNN kernels (nn_vec.inc)
 * and the choice of instance per tier. */
#include "kernels/nn_vec.h"

#define SFX generic
#include "kernels/nn_vec.inc"

const tn_nn_vec *tn_nn_vec_for(tn_isa isa) {
#if defined(__x86_64__)
    if (isa >= TN_ISA_AVX512) return &tn_nn_vec__avx512;
    if (isa >= TN_ISA_AVX2) return &tn_nn_vec__avx2;
#else
    (void)isa;
#endif
    return &tn_nn_vec__generic;
}
