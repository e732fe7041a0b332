/* distance.h — upstream's pdist kernels (ATen's DistanceOpsKernel): the p-norm distance of
 * every pair of rows i < j of a contiguous n x m matrix, and its gradient.
 *
 * Forward, per pair: the differences' map (p = 0: min(ceil|d|, 1); 1: |d|; 2: d^2; inf: |d|;
 * else |d|^p) accumulated in `lanes` partial results over the columns (lane l takes
 * columns l, l + lanes, ...; the tail's first lanes take the rest), the lanes then folded:
 * by a butterfly (lane l with lane l ^ s, s = lanes / 2 .. 1) when `butterfly`, else in
 * order; rows shorter than `lanes` fold their columns in order. Sum for every p but inf
 * (max, NaN-propagating); then sqrt for p = 2, pow(., 1 / p) in double for a general p.
 * p is the kernel's scalar type first (a float32 p of 1e-50 is the 0-norm), as upstream.
 * `lanes` is upstream's Vectorized width for this kernel (8 floats / 4 doubles: it is
 * registered up to AVX2) and `butterfly` its float32 SIMD fold (its AVX2 build's; the
 * DEFAULT build folds in order); double folds in order.
 *
 * Backward: res (n x m, written whole) gets, for each pair (i, j) in order, r = F(x_i - x_j)
 * added to row i and subtracted from row j, accumulated in that order per element; F is
 * upstream's per p (0: nothing; 1: grad sign(d); < 2: sign(d) |d|^(p-1) grad / dist^(p-1);
 * 2: grad d / dist; inf: grad sign(d) (1 - min(1, ceil||d| - dist|)); else d |d|^(p-2) grad
 * / dist^(p-1); a zero dist gives 0). Here the kind follows the double p, as upstream's.
 * pow is libm's where upstream's vector pow (SLEEF, 1 ulp) runs: general p may differ from
 * upstream in the last bit; p = 0, 1, 2 and inf give upstream's bits.
 *
 * Pairs (forward) and column blocks (backward) split across the pool; no result depends on
 * the split. Raw pointers; no allocation; plain C11; no Python. */
#ifndef TN_KERNELS_DISTANCE_H
#define TN_KERNELS_DISTANCE_H

#include <stdbool.h>
#include <stdint.h>

#define TN_PDIST_MAX_LANES 16

void tn_pdist_f32(float *out, const float *x, int64_t n, int64_t m, double p, int lanes, bool butterfly);
void tn_pdist_f64(double *out, const double *x, int64_t n, int64_t m, double p, int lanes, bool butterfly);
/* grad: the n (n - 1) / 2 pair gradients at stride gs; dist: the forward's result */
void tn_pdist_backward_f32(float *res, const float *grad, int64_t gs, const float *x, const float *dist, int64_t n,
                           int64_t m, double p);
void tn_pdist_backward_f64(double *res, const double *grad, int64_t gs, const double *x, const double *dist, int64_t n,
                           int64_t m, double p);

#endif
