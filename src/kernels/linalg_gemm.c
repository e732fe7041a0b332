/* linalg_gemm.c — the level-3 step of the blocked factorizations (linalg_lu.inc,
 * linalg_qr.inc): one product C = alpha·A·B + beta·C in float64 or complex128 through
 * tn_gemm (the loaded BLAS, threaded on the pool), its scratch taken here. */
#include <stdlib.h>

#include "kernels/gemm.h"
#include "kernels/linalg_decomp.h"

void tn_linalg_gemm(bool cplx, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t a_rs,
                    int64_t a_cs, const void *b, int64_t b_rs, int64_t b_cs, double beta, void *c, int64_t c_rs,
                    int64_t c_cs) {
    tn_gemm_desc g = tn_gemm_desc_init(cplx ? TN_DTYPE_COMPLEX128 : TN_DTYPE_FLOAT64);
    g.m = m, g.n = n, g.k = k;
    g.a = a, g.a_rs = a_rs, g.a_cs = a_cs;
    g.b = b, g.b_rs = b_rs, g.b_cs = b_cs;
    g.c = c, g.c_rs = c_rs, g.c_cs = c_cs;
    g.alpha = alpha, g.beta = beta;
    size_t need = tn_gemm_scratch_bytes(&g);
    void *scratch = need ? malloc(need) : NULL;
    /* tn_gemm fails only on too little scratch: the reference loop needs none */
    if ((need && !scratch) || tn_gemm(&g, scratch, need) != TN_OK) tn_gemm_ref(&g);
    free(scratch);
}
