/* ew_backward_avx512.c — the avx512 instance of the vectorised float32 pointwise gradients
 * (ew_backward_vec.inc). Only called after tn_cpu_isa() says avx512 or above. */
#include <math.h>
#include <stdint.h>

#include "kernels/elementwise_backward.h"

#if defined(__x86_64__)
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
#define SFX avx512
#define EWB_LANES 16
#include "kernels/ew_backward_vec.inc"
#else
void tn_ewb_silu_f32__avx512(char **data, const int64_t *strides, int64_t n, void *ctx) {
    tn_ewb_loop_scalar(TN_EWB_silu, TN_DTYPE_FLOAT32)(data, strides, n, ctx);
}
void tn_ewb_threshold_f32__avx512(char **data, const int64_t *strides, int64_t n, void *ctx) {
    tn_ewb_loop_scalar(TN_EWB_threshold, TN_DTYPE_FLOAT32)(data, strides, n, ctx);
}
#endif
