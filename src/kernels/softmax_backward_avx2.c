/* softmax_backward_avx2.c — the avx2 instance of the vectorised softmax / log-softmax
 * gradient rows (softmax_backward_vec.inc). Only called after tn_cpu_isa() says avx2 or above. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/nn_backward.h"

#if defined(__x86_64__)
#pragma GCC target("avx2,fma,f16c")
#define SV_FMA 1
#define SFX avx2
#include "kernels/softmax_backward_vec.inc"
#else
void tn_softmax_backward_rows__avx2(float *gx, const float *gy, const float *y, int64_t rows, int64_t n, bool is_log) {
    tn_softmax_backward_rows__generic(gx, gy, y, rows, n, is_log);
}
void tn_attn_bwd_prob_row__avx2(float *p, int64_t n, int64_t lim, float scale, float lse) {
    tn_attn_bwd_prob_row__generic(p, n, lim, scale, lse);
}
void tn_attn_bwd_ds_row__avx2(float *p, const float *dp, int64_t n, float D, float scale) {
    tn_attn_bwd_ds_row__generic(p, dp, n, D, scale);
}
#endif
