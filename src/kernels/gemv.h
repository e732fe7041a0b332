/* gemv.h — matrix-vector products: the GEMM shapes where one side has at most 4 rows
 * (decode-time `linear`, m == 1). Memory-bound: every weight element is read once, so the
 * kernels stream several weight rows at a time against x vectors held in registers.
 *
 * In GEMM terms (see gemm.h), a problem is GEMV-shaped when the dtype is float32, bfloat16
 * or float16, A's rows and B's columns are contiguous along k (a_cs == 1 and b_rs == 1, or
 * k == 1), and m <= 4 or n <= 4. With m <= 4 the "weight" W is Bᵀ (n rows of k, row stride
 * b_cs) and the x vectors are A's rows; otherwise W is A (m rows, stride a_rs) and the x
 * vectors are B's columns. Each output is then one float32-accumulated dot product
 * followed by C = round(alpha*acc + beta*C) (beta == 0 never reads C): bfloat16/float16
 * round exactly once, as upstream's opmath does.
 *
 * Rows of W split across the thread pool (tn_parallel_for) in tasks of at least ~64 KB of
 * weight, so tiny problems stay on the calling thread; no result depends on the split.
 * No allocation; plain C11; no Python. */
#ifndef TN_GEMV_H
#define TN_GEMV_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/gemm.h"

/* Whether tn_gemv can run this GEMM problem (the conditions above). */
bool tn_gemv_shaped(const tn_gemm_desc *g);
/* Runs a GEMV-shaped problem (precondition: tn_gemv_shaped(g)). */
void tn_gemv(const tn_gemm_desc *g);
/* Runs n (<= TN_GEMV_MULTI_MAX) GEMV-shaped problems as one parallel region, their rows
 * split jointly across the pool: one wake-up and one tail instead of n (the q/k/v or
 * gate/up projections of a decode step, replayed by an operator graph). Each output is
 * bit-identical to tn_gemv's for the same problem. */
#define TN_GEMV_MULTI_MAX 8
void tn_gemv_multi(const tn_gemm_desc *gs, int n);
/* The other layout, on the avx512 tiers (gemv_rows_avx512.c): 1 <= m <= 4 rows of A
 * against a row-major B (b_cs == 1: x·W with W stored k × n) and a row-major C, float32,
 * bfloat16 or float16. Streams B in memory order in fixed chunks of rows and adds the
 * float32 partial products in chunk order, so no result depends on the thread count. */
bool tn_gemv_rows_shaped(const tn_gemm_desc *g);
tn_status tn_gemv_rows(const tn_gemm_desc *g);
/* Name of the kernel tn_gemv uses for `dtype` on this host right now, e.g.
 * "bf16_gemv__avx512bf16", "f32_gemv__avx2", "f16_gemv__scalar". */
const char *tn_gemv_variant(tn_dtype dtype);

/* ---- kernels (shared with the per-ISA files) ----------------------------------------
 * out[i*ldo + r] = sum_{p<k} x[i*ldx + p] * w[r*ldw + p], summed in float32, for the m x
 * vectors (1 <= m <= TN_GEMV_MAX_M) and the nrows weight rows. Elements are float32,
 * bfloat16 or float16 bits by kernel. Reads nothing beyond the k elements of each row. */
#define TN_GEMV_MAX_M 4
typedef void (*tn_gemv_kernel)(int64_t k, int m, const void *x, int64_t ldx, const void *w, int64_t ldw,
                               int64_t nrows, float *out, int64_t ldo);

#define TN_GEMV_DECLARE(name)                                                                  \
    void name(int64_t k, int m, const void *x, int64_t ldx, const void *w, int64_t ldw, int64_t nrows, \
              float *out, int64_t ldo)
TN_GEMV_DECLARE(f32_gemv__scalar);
TN_GEMV_DECLARE(bf16_gemv__scalar);
TN_GEMV_DECLARE(f16_gemv__scalar);
TN_GEMV_DECLARE(f32_gemv__avx2);
TN_GEMV_DECLARE(bf16_gemv__avx2);
TN_GEMV_DECLARE(f16_gemv__avx2);
TN_GEMV_DECLARE(f32_gemv__avx512);
TN_GEMV_DECLARE(bf16_gemv__avx512);
TN_GEMV_DECLARE(f16_gemv__avx512);
TN_GEMV_DECLARE(bf16_gemv__avx512bf16);
/* The same without software prefetch, for weights already in the cores' caches (the x86
 * kernels prefetch the next block of rows, which only takes load slots then). */
TN_GEMV_DECLARE(f32_gemv__avx2_hot);
TN_GEMV_DECLARE(bf16_gemv__avx2_hot);
TN_GEMV_DECLARE(f16_gemv__avx2_hot);
TN_GEMV_DECLARE(f32_gemv__avx512_hot);
TN_GEMV_DECLARE(bf16_gemv__avx512_hot);
TN_GEMV_DECLARE(f16_gemv__avx512_hot);
TN_GEMV_DECLARE(bf16_gemv__avx512bf16_hot);
/* aarch64 only (gemv_neon.c); absent elsewhere. */
TN_GEMV_DECLARE(f32_gemv__neon);
TN_GEMV_DECLARE(bf16_gemv__neon);
TN_GEMV_DECLARE(f16_gemv__neon);

#endif
