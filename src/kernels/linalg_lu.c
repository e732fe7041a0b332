/* linalg_lu.c — LU with partial pivoting, row interchanges, triangular solves and the
 * Cholesky factorization, float64 and complex128, one matrix per call: one body
 * (linalg_lu.inc) included for each scalar type (contracts in linalg_decomp.h). */
#include <complex.h>
#include <math.h>

#include "kernels/complex_math.h"
#include "kernels/linalg_decomp.h"

/* ---- float64 ---- */
#define T double
#define R double
#define LA(x) tn_linalg_##x
#define CONJ(x) (x)
#define ABS1(x) fabs(x)
#define ABS(x) fabs(x)
#define RE(x) (x)
#define MUL(x, y) ((x) * (y))
#define DIV(x, y) ((x) / (y))
#include "kernels/linalg_lu.inc"
#undef T
#undef R
#undef LA
#undef CONJ
#undef ABS1
#undef ABS
#undef RE
#undef MUL
#undef DIV

void tn_linalg_trsm(int64_t n, int64_t nrhs, const double *t, int64_t trs, int64_t tcs, bool upper, bool unit,
                    double *b, int64_t ld) {
    tn_linalg_trsm_body(n, nrhs, t, trs, tcs, upper, unit, false, b, ld);
}

/* ---- complex128: c10::complex's product and quotient, as upstream's own loops ---- */
#define T double _Complex
#define R double
#define LA(x) tn_linalg_z##x
#define CONJ(x) conj(x)
#define ABS1(x) (fabs(creal(x)) + fabs(cimag(x)))
#define ABS(x) cabs(x)
#define RE(x) creal(x)
#define MUL(x, y) cmul_c128((x), (y))
#define DIV(x, y) cdiv_c128((x), (y))
#include "kernels/linalg_lu.inc"
#undef T
#undef R
#undef LA
#undef CONJ
#undef ABS1
#undef ABS
#undef RE
#undef MUL
#undef DIV

void tn_linalg_ztrsm(int64_t n, int64_t nrhs, const double _Complex *t, int64_t trs, int64_t tcs, bool upper,
                     bool unit, bool cj, double _Complex *b, int64_t ld) {
    tn_linalg_ztrsm_body(n, nrhs, t, trs, tcs, upper, unit, cj, b, ld);
}
