/* fused_chain.h — the arithmetic of operator chains that an operator-graph replay runs as
 * one step (ops/graph_fuse.c): transformers' RMSNorm, rotary embedding and SwiGLU, float32.
 *
 * Contract: every output element is bit for bit what the chain's operators give when run
 * one by one: each element goes through the same IEEE operations in the same order (this
 * file is built without FMA contraction, as -std=c11 implies), and the one reduction,
 * RMSNorm's mean, is the mean operator's own cascade (f32_sum_rows_contig, which
 * aten::mean.dim runs for contiguous float32 rows of 8 to 32,767 elements at any row
 * count). Raw pointers; no allocation; plain C11; no Python. */
#ifndef TN_KERNELS_FUSED_CHAIN_H
#define TN_KERNELS_FUSED_CHAIN_H

#include <stdint.h>

/* Shortest and longest rows tn_chain_rmsnorm_f32 reproduces mean.dim for. */
#define TN_CHAIN_RMS_MIN_N 8
#define TN_CHAIN_RMS_MAX_N 32767

/* transformers' RMSNorm over `rows` contiguous rows of n floats:
 *   a = x.pow(2); v = a.mean(-1, keepdim=True); r = (v + eps).rsqrt(); y = w * (x * r)
 * with w a row of n floats. sq: scratch of rows * n floats, sums: of rows floats. */
void tn_chain_rmsnorm_f32(float *y, const float *x, const float *w, float eps, int64_t rows, int64_t n, float *sq,
                          float *sums);

/* transformers' apply_rotary_pos_emb on one row of n = 2h floats (x contiguous):
 *   y = x * c + cat(-x[h:], x[:h]) * s
 * c and s are this row's cos and sin (contiguous, n floats). */
void tn_chain_rotary_row_f32(float *y, const float *x, const float *c, const float *s, int64_t n);

/* SwiGLU's product: y = silu(g) * u over n contiguous floats, silu by the elementwise
 * family's own loop for this host (kernels/elementwise.h). */
void tn_chain_swiglu_f32(float *y, const float *g, const float *u, int64_t n);

#endif
