/* linalg_lu.c — LU with partial pivoting, row interchanges, triangular solves and the
 * Cholesky factorization, float64 and complex128, one matrix per call: one body
 * (linalg_lu.inc) included for each scalar type (contracts in linalg_decomp.h). */
/* The bodies' loops at -O3, where GCC vectorises the row and column updates (at -O2 they
 * stayed scalar: linalg.inv / solve of 256 x 256 took 20x upstream's time, session 47). Each
 * element's arithmetic is unchanged (ISO C11 contracts nothing, and GCC reorders no
 * floating-point sum without -fassociative-math), so the same bits. */
#pragma GCC optimize("O3")
#include <complex.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/complex_math.h"
#include "kernels/linalg_decomp.h"

/* ---- float64 ---- */
#define LA_COMPLEX 0
#include "kernels/linalg_scalar.h"
#define LA(x) tn_linalg_##x
#include "kernels/linalg_lu.inc"
#undef LA
#include "kernels/linalg_scalar_end.h"

void tn_linalg_trsm(int64_t n, int64_t nrhs, const double *t, int64_t trs, int64_t tcs, bool upper, bool unit,
                    double *b, int64_t ld) {
    tn_linalg_trsm_body(n, nrhs, t, trs, tcs, upper, unit, false, b, ld);
}

/* ---- complex128: c10::complex's product and quotient, as upstream's own loops ---- */
#define LA_COMPLEX 1
#include "kernels/linalg_scalar.h"
#define LA(x) tn_linalg_z##x
#include "kernels/linalg_lu.inc"
#undef LA
#include "kernels/linalg_scalar_end.h"

void tn_linalg_ztrsm(int64_t n, int64_t nrhs, const double _Complex *t, int64_t trs, int64_t tcs, bool upper,
                     bool unit, bool cj, double _Complex *b, int64_t ld) {
    tn_linalg_ztrsm_body(n, nrhs, t, trs, tcs, upper, unit, cj, b, ld);
}
