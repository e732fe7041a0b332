/* softmax_avx512.c — the avx512 instance of the vectorised softmax rows (softmax_vec.inc).
 * Only called after tn_cpu_isa() says avx512 or above. */
#include <math.h>
#include <string.h>

#include "kernels/reduce.h"

#if defined(__x86_64__)
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
#define SV_FMA 1
#define SFX avx512
#define SM_WIDE 1
#include "kernels/softmax_vec.inc"
#else
void tn_softmax_rows__avx512(float *out, const float *in, int64_t rows, int64_t n, int mode, int lanes) {
    tn_softmax_rows__generic(out, in, rows, n, mode, lanes);
}
void tn_softmax_part__avx512(int phase, float *out, const float *in, int64_t n, tn_softmax_part *p) {
    tn_softmax_part__generic(phase, out, in, n, p);
}
void tn_softmax_cols__avx512(float *out, const float *in, int64_t n, int64_t inner, int64_t w, int log) {
    tn_softmax_cols__generic(out, in, n, inner, w, log);
}
void tn_exp_row_f64__avx512(double *out, const double *in, int64_t n, double sub) { tn_exp_row_f64__generic(out, in, n, sub); }
void tn_softmax_rows_f64__avx512(double *out, const double *in, int64_t rows, int64_t n, int mode, int lanes) {
    tn_softmax_rows_f64__generic(out, in, rows, n, mode, lanes);
}
#endif
