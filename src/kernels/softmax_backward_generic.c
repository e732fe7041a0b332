/* softmax_backward_generic.c — the baseline-ISA instance of the vectorised softmax /
 * log-softmax gradient rows (softmax_backward_vec.inc) and the entry point that picks the
 * AVX-512 / AVX2 / baseline instance from tn_cpu_isa(); likewise the attention backward's rows. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu_features.h"
#include "kernels/nn_backward.h"

#define SFX generic
#include "kernels/softmax_backward_vec.inc"

void tn_softmax_backward_rows_f32(float *gx, const float *gy, const float *y, int64_t rows, int64_t n, bool is_log) {
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) tn_softmax_backward_rows__avx512(gx, gy, y, rows, n, is_log);
    else if (isa >= TN_ISA_AVX2) tn_softmax_backward_rows__avx2(gx, gy, y, rows, n, is_log);
    else tn_softmax_backward_rows__generic(gx, gy, y, rows, n, is_log);
}

void tn_attn_bwd_prob_row_f32(float *p, int64_t n, int64_t lim, float scale, float lse) {
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) tn_attn_bwd_prob_row__avx512(p, n, lim, scale, lse);
    else if (isa >= TN_ISA_AVX2) tn_attn_bwd_prob_row__avx2(p, n, lim, scale, lse);
    else tn_attn_bwd_prob_row__generic(p, n, lim, scale, lse);
}

void tn_attn_bwd_ds_row_f32(float *p, const float *dp, int64_t n, float D, float scale) {
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) tn_attn_bwd_ds_row__avx512(p, dp, n, D, scale);
    else if (isa >= TN_ISA_AVX2) tn_attn_bwd_ds_row__avx2(p, dp, n, D, scale);
    else tn_attn_bwd_ds_row__generic(p, dp, n, D, scale);
}
