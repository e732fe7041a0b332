/* linalg_qr.c — Householder QR with LAPACK's reflector conventions: geqrf, orgqr (forming
 * Q) and ormqr (applying Q), float64 and complex128, one matrix per call: one body
 * (linalg_qr.inc) included for each scalar type (contracts in linalg_decomp.h). */
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
#include "kernels/linalg_qr.inc"
#undef LA
#include "kernels/linalg_scalar_end.h"

/* ---- complex128: c10::complex's product and quotient ---- */
#define LA_COMPLEX 1
#include "kernels/linalg_scalar.h"
#define LA(x) tn_linalg_z##x
#include "kernels/linalg_qr.inc"
#include "kernels/linalg_scalar_end.h"
