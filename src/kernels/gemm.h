/* gemm.h — general matrix multiply over strided operands, every dtype upstream's CPU mm
 * accepts: C = alpha * A·B + beta * C.
 *
 *   A is m×k, element (i,p) at a[i*a_rs + p*a_cs]
 *   B is k×n, element (p,j) at b[p*b_rs + j*b_cs]
 *   C is m×n, element (i,j) at c[i*c_rs + j*c_cs]
 * Strides are in elements and non-negative; 0 is allowed (a broadcast operand). C must
 * not overlap A or B.
 *
 * beta == 0 means C is write-only: its old contents (NaN included) never reach the result,
 * as upstream guarantees. Floating types accumulate in at least float32 and round once
 * (bfloat16/float16 products are summed in float32, then alpha/beta are applied in
 * float32, then one rounding to the storage type — upstream's opmath rule). Integral types
 * wrap modulo 2^bits like upstream's integer gemm.
 *
 * Which code runs: float32/float64/complex go to the loaded BLAS (see blas.h) when the
 * operand layouts allow it (otherwise operands are first copied into the scratch space);
 * bfloat16 runs on AMX tiles when the tier is amx (gemm_amx.c, threaded over the pool);
 * otherwise bfloat16/float16 (and float32 without a BLAS) run our packed float32-accumulating
 * engine, picking the AVX-512(+BF16) / AVX2 / scalar micro-kernel from tn_cpu_isa();
 * everything else runs the scalar reference, which is also the tests' oracle.
 *
 * Kernels never allocate: ask tn_gemm_scratch_bytes() and pass that much scratch (64-byte
 * aligned is best; any alignment works). Plain C11; no Python. */
#ifndef TN_GEMM_H
#define TN_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/status.h"

typedef struct tn_gemm_desc {
    tn_dtype dtype; /* of A, B and C alike */
    int64_t m, n, k;
    const void *a;
    int64_t a_rs, a_cs;
    const void *b;
    int64_t b_rs, b_cs;
    void *c;
    int64_t c_rs, c_cs;
    double alpha, beta;       /* floating types (real part for complex) */
    double alpha_im, beta_im; /* complex types only */
    int64_t ialpha, ibeta;    /* integral types */
    /* bfloat16 A and B with a float32 C (attention scores, kept unrounded): taken by the
     * AMX engine and the packed engine; tn_gemm refuses it for other dtypes. */
    int c_f32;
} tn_gemm_desc;

/* A descriptor with alpha = 1, beta = 0 and everything else zero. */
static inline tn_gemm_desc tn_gemm_desc_init(tn_dtype dtype) {
    tn_gemm_desc g = {0};
    g.dtype = dtype;
    g.alpha = 1.0;
    g.ialpha = 1;
    return g;
}

/* Whether tn_gemm supports `dtype` (upstream's CPU addmm set: all integral except bool,
 * float16, bfloat16, float32, float64, complex64, complex128). */
int tn_gemm_supports(tn_dtype dtype);
/* Bytes of scratch tn_gemm needs for this problem (0 when none). */
size_t tn_gemm_scratch_bytes(const tn_gemm_desc *g);
/* C = alpha*A·B + beta*C. Fails (TN_ERR_RUNTIME) only on an unsupported dtype, too little
 * scratch, or a dimension above the BLAS's 32-bit index range (those run on our kernels
 * instead, so in practice never). */
tn_status tn_gemm(const tn_gemm_desc *g, void *scratch, size_t scratch_bytes);
/* The scalar reference (the oracle of the tests): plain triple loop, double accumulation
 * for float32/float64, float32 for bfloat16/float16, wrapping integers. No scratch. */
tn_status tn_gemm_ref(const tn_gemm_desc *g);
/* Name of the path tn_gemm takes for this dtype on this host right now, e.g.
 * "openblas", "bf16_gemm_amx_32x32", "bf16_gemm_dp_12x32__avx512bf16", "f32_gemm_6x16__avx2",
 * "ref". */
const char *tn_gemm_variant(tn_dtype dtype);

#endif
