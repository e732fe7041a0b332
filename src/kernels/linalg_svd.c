/* linalg_svd.c — the SVD by one-sided Jacobi rotations in float64 and complex128, one body
 * (linalg_svd.inc) per scalar type, one matrix per call (contract in linalg_decomp.h):
 * chosen for the small matrices these operators mostly see (every singular value to high
 * relative accuracy); from order 32 the sweeps start from the eigenvectors of AᴴA (4 sweeps
 * instead of 11 at 256, and LAPACK's accuracy: 11 sweeps' rounding made U S Vᵀ 20x and VᵀV
 * 30x further from A and I than upstream's). The symmetric eigenproblem is linalg_syevd.c's. */
/* The bodies' loops at -O3, where GCC vectorises the row and column updates (at -O2 they
 * stayed scalar: linalg.inv / solve of 256 x 256 took 20x upstream's time, session 47). Each
 * element's arithmetic is unchanged (ISO C11 contracts nothing, and GCC reorders no
 * floating-point sum without -fassociative-math), so the same bits. */
#pragma GCC optimize("O3")
#include <complex.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/complex_math.h"
#include "kernels/linalg_decomp.h"

#define MAX_SWEEPS 100

/* ---- the SVD and its basis completion, once per scalar type (linalg_svd.inc) ---- */
#define LA_COMPLEX 0
#include "kernels/linalg_scalar.h"
#define LA(x) tn_linalg_##x
#define MAGN(g) (g)
#define ROT_PHASE(g) 1.0
#define UNIT_PHASE(x) ((x) < 0 ? -1.0 : 1.0)
#include "kernels/linalg_svd.inc"
#undef LA
#undef MAGN
#undef ROT_PHASE
#undef UNIT_PHASE
#include "kernels/linalg_scalar_end.h"

#define LA_COMPLEX 1
#include "kernels/linalg_scalar.h"
#define LA(x) tn_linalg_z##x
#define MAGN(g) cabs(g)
#define ROT_PHASE(g) (conj(g) / cabs(g))
#define UNIT_PHASE(x) (cabs(x) > 0 ? conj(x) / cabs(x) : 1.0)
#include "kernels/linalg_svd.inc"
#include "kernels/linalg_scalar_end.h"
