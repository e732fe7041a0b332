/* reduce.h — reduction microkernels (sum cascade, softmax rows). They see raw pointers,
 * byte strides and sizes, never a tensor; they never allocate.
 *
 * The sum kernels reproduce upstream's cascade summation (ATen cpu/SumKernel.cpp): the
 * same chunking into 4 levels, the same 4-way interleave and the same vector-lane
 * partial sums, so float32 results agree with upstream bit for bit on the same lane
 * width. `lanes` is the width of upstream's Vectorized<acc_t> (16 floats under AVX-512,
 * 8 under AVX2/default); pass tn_reduce_vec_bytes(false) / sizeof(acc). */
#ifndef TN_KERNELS_REDUCE_H
#define TN_KERNELS_REDUCE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

/* Vector width (bytes) of the upstream kernel that would run on this machine. Upstream
 * registers most kernels (sum, norm) only up to AVX2, so they use 32-byte vectors even on
 * AVX-512 hosts; a few (softmax last-dim) also have AVX-512 builds: pass avx512_kernel.
 * 64 needs avx512 f/bw/dq/vl; TN_CPU_CAPABILITY=default|avx2 forces 32. */
int tn_reduce_vec_bytes(bool avx512_kernel);

/* One 2-D step of upstream's sum loop: out[j*os1] += sum over i of in[i*is0 + j*is1]
 * with out strides (os0, os1); byte strides in st = {os0, is0, os1, is1}. The output
 * element type is the input type; accumulation is float for f16/bf16. ignore_nan turns
 * it into nansum. */
void f32_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                            int64_t size1, int lanes, bool ignore_nan);
void f64_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                            int64_t size1, int lanes, bool ignore_nan);
void bf16_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                             int64_t size1, int lanes, bool ignore_nan);
void f16_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                            int64_t size1, int lanes, bool ignore_nan);
/* complex64 / complex128: accumulated in their own type, `lanes` in complex elements
 * (upstream's Vectorized<complex<T>>::size()); ignore_nan must be false */
void c64_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                            int64_t size1, int lanes, bool ignore_nan);
void c128_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                             int64_t size1, int lanes, bool ignore_nan);

/* Upstream's float32 sum of each of `rows` contiguous rows of n >= 8 floats (8 lanes,
 * the contiguous-inner cascade of f32_sum_loop2d__scalar, bit for bit): out[r] = sum. */
void f32_sum_rows_contig(float *out, const float *in, int64_t rows, int64_t n);
/* The same for nansum (a NaN element reads as +0, as f32_sum_loop2d__scalar's ignore_nan). */
void f32_nansum_rows_contig(float *out, const float *in, int64_t rows, int64_t n);
/* The same for rows of n >= 4 complex64 (4 complex lanes; c64_sum_loop2d__scalar's order):
 * out and in hold interleaved (real, imaginary) floats. */
void c64_sum_rows_contig(float *out, const float *in, int64_t rows, int64_t n);

/* Upstream's product of one contiguous run of n >= 0 elements (binary_kernel_reduce_vec's
 * inner reduction): 4 vectors of `lanes` accumulators over the blocks of 4 * lanes, combined
 * as (v0 * v1) * (v2 * v3), their lanes multiplied in order, then the tail element by
 * element; returns `init` times that. lanes <= 16 (f32) / 8 (f64): tn_reduce_vec_bytes(false)
 * / element size, as upstream registers its prod kernel only up to AVX2. */
float f32_prod_run(float init, const float *x, int64_t n, int lanes);
double f64_prod_run(double init, const double *x, int64_t n, int lanes);
/* out[j * os bytes] = prod_run(out[...], x + j * ld, n, lanes) for j < rows (the same bits) */
void f32_prod_runs(char *out, int64_t os, const float *x, int64_t ld, int64_t rows, int64_t n, int lanes);
void f64_prod_runs(char *out, int64_t os, const double *x, int64_t ld, int64_t rows, int64_t n, int lanes);
/* out[j] *= x[r * ld + j] for every row r < rows in order, j < cols: upstream's outer
 * reduction's order per element. */
void f32_prod_cols(float *out, const float *x, int64_t ld, int64_t rows, int64_t cols);
/* Cumulative sums of 8 float32 rows of n (row k at x + k * ld, into y + k * ld), each
 * y[i] = (float)(acc += (double)x[i]) in order (scan_rows.c); false (nothing written) where the
 * tier has no vector form: the caller's scalar loop then. */
bool tn_cumsum8_f32(float *y, const float *x, int64_t n, int64_t ld);
void f64_prod_cols(double *out, const double *x, int64_t ld, int64_t rows, int64_t cols);

/* Index of the max (mx) or min of n >= 1 contiguous floats: the first occurrence, and the
 * first NaN when there is one (upstream's argmax/argmin rule). Vectorised on avx2 and up;
 * every tier gives the same index. */
int64_t tn_argext_f32(const float *x, int64_t n, bool mx);
/* The max (mx) or min of n >= 1 contiguous floats, the bits of x[tn_argext_f32(x, n, mx)]
 * (the first of equal values: -0 against +0; the first NaN), without the index work. */
float tn_ext_f32(const float *x, int64_t n, bool mx);
/* out[j] (the running max (mx) or min of column j, j < cols) against the rows x[r * ld + j],
 * r < rows, in row order: an element replaces the extreme when strictly beyond it, or when
 * it is NaN and the extreme is not (the first NaN, the earlier of equal values). */
void tn_ext_cols_f32(float *out, const float *x, int64_t ld, int64_t rows, int64_t cols, bool mx);
/* val[j], idx[j] (j < cols) = the max (mx) or min of column j of the rows x[r * ld + j],
 * r < rows, and the first row holding it (the first NaN when there is one): argext's rule
 * down columns. */
void tn_argext_cols_f32(float *val, int64_t *idx, const float *x, int64_t ld, int64_t rows, int64_t cols, bool mx);
/* the same rule for one element: o against v */
float tn_ext_step_f32(float o, float v, bool mx);

/* What the softmax row kernels compute. The reduced-precision log-softmax modes follow
 * upstream's last-dim kernel for BFloat16 / Half (LogSoftmaxKernelImpl.h), which keeps the
 * sum of exp(x - max) and then its log in buffers of the input's type: both are rounded to
 * that type before use. Softmax, and log-softmax of float / double, round nothing. */
typedef enum tn_softmax_mode {
    TN_SOFTMAX_PLAIN = 0,      /* exp(x - max) / sum */
    TN_SOFTMAX_LOG = 1,        /* x - max - log(sum) */
    TN_SOFTMAX_LOG_BF16 = 2,   /* the same, sum and log(sum) rounded to bfloat16 */
    TN_SOFTMAX_LOG_F16 = 3,    /* the same, sum and log(sum) rounded to float16 */
} tn_softmax_mode;

/* v rounded to the reduced type of `mode` (v itself for the unrounded modes) */
static inline float tn_softmax_round(float v, int mode) {
    if (mode == TN_SOFTMAX_LOG_BF16) return tn_round_bf16_f32(v);
    if (mode == TN_SOFTMAX_LOG_F16) return tn_round_half_f32(v);
    return v;
}

/* Softmax / log-softmax of `rows` contiguous rows of n floats (row stride n): max, then
 * exp(x - max) and its sum, then scale (softmax) or subtract log-sum (log_softmax);
 * `mode` is a tn_softmax_mode (the f64 kernel knows only PLAIN and LOG). */
void f32_softmax_lastdim__scalar(float *out, const float *in, int64_t rows, int64_t n, int mode);
void f64_softmax_lastdim__scalar(double *out, const double *in, int64_t rows, int64_t n, int mode);
/* out[i] = exp(in[i] - sub), i < n, lane-wise (the same bits on every ISA): the ISA's
 * instance of softmax_vec.inc's double exp, chosen by tn_cpu_isa(). */
void tn_exp_row_f64(double *out, const double *in, int64_t n, double sub);
void tn_exp_row_f64__generic(double *out, const double *in, int64_t n, double sub);
void tn_exp_row_f64__avx2(double *out, const double *in, int64_t n, double sub);
void tn_exp_row_f64__avx512(double *out, const double *in, int64_t n, double sub);

/* The same over `rows` rows on vectors (the reference's order with the reference's lanes,
 * tn_reduce_vec_bytes(true) / 4: 16 where upstream runs its AVX-512 kernel, else 8; its own
 * vectorised exp, within 2 ulp of libm's), threaded over rows and dispatched on tn_cpu_isa(). */
void tn_softmax_rows_f32(float *out, const float *in, int64_t rows, int64_t n, int mode);
void tn_softmax_rows__generic(float *out, const float *in, int64_t rows, int64_t n, int mode, int lanes);
void tn_softmax_rows__avx2(float *out, const float *in, int64_t rows, int64_t n, int mode, int lanes);
void tn_softmax_rows__avx512(float *out, const float *in, int64_t rows, int64_t n, int mode, int lanes);
/* A phase of one long row split across the pool (softmax_vec.inc, tn_softmax_part): 0 the
 * max and NaN flag of a piece, 1 exp(x - mx) of a piece, 2 the whole row's sum (once, in
 * the lane order above), 3 the scale or log-sum subtraction of a piece. */
typedef struct tn_softmax_part { float mx, total; bool nan; int mode, lanes; } tn_softmax_part;
void tn_softmax_part__generic(int phase, float *out, const float *in, int64_t n, tn_softmax_part *p);
void tn_softmax_part__avx2(int phase, float *out, const float *in, int64_t n, tn_softmax_part *p);
void tn_softmax_part__avx512(int phase, float *out, const float *in, int64_t n, tn_softmax_part *p);
/* Softmax (log = 0) or log-softmax (log = 1) of a contiguous [outer, n, inner] float32
 * tensor along its middle dim, threaded over blocks of columns: upstream's non-last-dim
 * order (running max, exp and a sequential sum, then scale or subtract log-sum), the exp
 * through the vector exp row */
void tn_softmax_cols_f32(float *out, const float *in, int64_t outer, int64_t n, int64_t inner, int log);
/* One block of w (<= 256) columns of tn_softmax_cols_f32, per ISA (softmax_vec.inc). */
void tn_softmax_cols__generic(float *out, const float *in, int64_t n, int64_t inner, int64_t w, int log);
void tn_softmax_cols__avx2(float *out, const float *in, int64_t n, int64_t inner, int64_t w, int log);
void tn_softmax_cols__avx512(float *out, const float *in, int64_t n, int64_t inner, int64_t w, int log);
/* f64_softmax_lastdim__scalar's results over chunks of contiguous rows on the pool, through
 * the ISA's instance of softmax_vec.inc's float64 rows (the same bits; `lanes` =
 * tn_reduce_vec_bytes(true) / 8) */
void tn_softmax_rows_f64(double *out, const double *in, int64_t rows, int64_t n, int mode);
void tn_softmax_rows_f64__generic(double *out, const double *in, int64_t rows, int64_t n, int mode, int lanes);
void tn_softmax_rows_f64__avx2(double *out, const double *in, int64_t rows, int64_t n, int mode, int lanes);
void tn_softmax_rows_f64__avx512(double *out, const double *in, int64_t rows, int64_t n, int mode, int lanes);

#endif
