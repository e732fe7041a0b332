/* linalg_qr.c — Householder QR with LAPACK's reflector conventions: geqrf, orgqr (forming
 * Q) and ormqr (applying Q), float64 and complex128, one matrix per call: one body
 * (linalg_qr.inc) included for each scalar type (contracts in linalg_decomp.h). */
#include <complex.h>
#include <math.h>

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
