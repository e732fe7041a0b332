/* linalg_expm.c — the matrix exponential in float64 and complex128: scaling and squaring
 * with the degree-13 Padé approximant (Higham, "The scaling and squaring method for the
 * matrix exponential revisited", 2005), one body (linalg_expm.inc) per scalar type.
 * Contract in linalg_decomp.h. */
/* The bodies' loops at -O3, where GCC vectorises the row and column updates (at -O2 they
 * stayed scalar: linalg.inv / solve of 256 x 256 took 20x upstream's time, session 47). Each
 * element's arithmetic is unchanged (ISO C11 contracts nothing, and GCC reorders no
 * floating-point sum without -fassociative-math), so the same bits. */
#pragma GCC optimize("O3")
#include <complex.h>
#include <math.h>
#include <string.h>

#include "kernels/complex_math.h"
#include "kernels/linalg_decomp.h"

#define LA_COMPLEX 0
#include "kernels/linalg_scalar.h"
#define LA(x) tn_linalg_##x
#include "kernels/linalg_expm.inc"
#undef LA
#include "kernels/linalg_scalar_end.h"

#define LA_COMPLEX 1
#include "kernels/linalg_scalar.h"
#define LA(x) tn_linalg_z##x
#include "kernels/linalg_expm.inc"
#include "kernels/linalg_scalar_end.h"
