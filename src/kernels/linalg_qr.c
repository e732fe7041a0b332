/* linalg_qr.c — Householder QR with LAPACK's reflector conventions: geqrf, orgqr (forming
 * Q) and ormqr (applying Q), float64 and complex128, one matrix per call: one body
 * (linalg_qr.inc) included for each scalar type (contracts in linalg_decomp.h). */
#include <complex.h>
#include <math.h>

#include "kernels/complex_math.h"
#include "kernels/linalg_decomp.h"

/* ---- float64 ---- */
#define T double
#define R double
#define NPARTS 1
#define LA(x) tn_linalg_##x
#define CONJ(x) (x)
#define RE(x) (x)
#define IM(x) 0.0
#define MUL(x, y) ((x) * (y))
#define DIV(x, y) ((x) / (y))
#include "kernels/linalg_qr.inc"
#undef T
#undef R
#undef NPARTS
#undef LA
#undef CONJ
#undef RE
#undef IM
#undef MUL
#undef DIV

/* ---- complex128: c10::complex's product and quotient ---- */
#define T double _Complex
#define R double
#define NPARTS 2
#define LA(x) tn_linalg_z##x
#define CONJ(x) conj(x)
#define RE(x) creal(x)
#define IM(x) cimag(x)
#define MUL(x, y) cmul_c128((x), (y))
#define DIV(x, y) cdiv_c128((x), (y))
#include "kernels/linalg_qr.inc"
