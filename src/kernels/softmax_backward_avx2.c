/* softmax_backward_avx2.c — the avx2 instance of the vectorised softmax / log-softmax
 * gradient rows (softmax_backward_vec.inc). Only called after tn_cpu_isa() says avx2 or above. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/nn_backward.h"

#if defined(__x86_64__)
#pragma GCC target("avx2,fma,f16c")
#define SFX avx2
#include "kernels/softmax_backward_vec.inc"
#else
void tn_softmax_backward_rows__avx2(float *gx, const float *gy, const float *y, int64_t rows, int64_t n, bool is_log) {
    tn_softmax_backward_rows__generic(gx, gy, y, rows, n, is_log);
}
#endif
