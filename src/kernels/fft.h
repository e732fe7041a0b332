/* fft.h — discrete Fourier transforms of complex double lines: mixed radix (2, 3, 4, 5 and
 * any small prime by a direct butterfly) with Bluestein's chirp-z convolution for lengths
 * with a large prime factor. Twiddles are computed in double from integer angles.
 *
 *   tn_fft_plan *p = tn_fft_plan_new(n);          // once per length
 *   tn_fft_lines(p, data, nlines, ...);           // many lines, on the pool
 *   tn_fft_plan_free(p);
 *
 * Unnormalised: sign -1 is the forward transform X_k = sum_j x_j e^{-2 pi i jk/n}, sign +1
 * the inverse without the 1/n. Plain C11; never sees a tensor. */
#ifndef TN_KERNELS_FFT_H
#define TN_KERNELS_FFT_H

#include <complex.h>
#include <stdint.h>

typedef struct tn_fft_plan tn_fft_plan;

/* A plan for length n >= 1; NULL when out of memory. */
tn_fft_plan *tn_fft_plan_new(int64_t n);
void tn_fft_plan_free(tn_fft_plan *p);
/* Complex doubles of scratch one line's transform needs (the caller passes it). */
int64_t tn_fft_plan_scratch(const tn_fft_plan *p);
/* One line in place: x[0..n) with unit stride; scratch holds tn_fft_plan_scratch(p). */
void tn_fft_line(const tn_fft_plan *p, double complex *x, int sign, double complex *scratch);

/* Transforms every line of a strided buffer in place, in parallel on the pool: line l
 * (0 <= l < nouter * ninner) starts at data + (l / ninner) * outer_stride + (l % ninner)
 * and steps by line_stride (all in complex elements). Returns 0, or -1 when out of memory. */
int tn_fft_lines(const tn_fft_plan *p, double complex *data, int64_t nouter, int64_t outer_stride,
                 int64_t ninner, int64_t line_stride, int sign);

#endif

/* Element types the conversions below read or write. */
typedef enum tn_fft_elem { TN_FFT_F32, TN_FFT_F64, TN_FFT_C64, TN_FFT_C128 } tn_fft_elem;

/* dst[i] = src[i] widened to complex double, i < n (a real source gets zero imaginary
 * parts); src is contiguous of element type `from`. On the pool. */
void tn_fft_widen(double complex *dst, const void *src, tn_fft_elem from, int64_t n);
/* rows x row_len elements of dst (contiguous, type `to`: complex, or real taking the real
 * parts) from src rows that start every src_row_stride complex elements. On the pool. */
void tn_fft_narrow_rows(void *dst, tn_fft_elem to, const double complex *src, int64_t rows, int64_t row_len,
                        int64_t src_row_stride);
