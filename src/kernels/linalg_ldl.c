/* linalg_ldl.c — the symmetric indefinite (and complex Hermitian) factorization with
 * Bunch-Kaufman pivoting and its solve in float64 and complex128, one body
 * (linalg_ldl.inc) per scalar type. Contracts in linalg_decomp.h. */
#include <complex.h>
#include <math.h>

#include "kernels/complex_math.h"
#include "kernels/linalg_decomp.h"

#define LA_COMPLEX 0
#include "kernels/linalg_scalar.h"
#define LA(x) tn_linalg_##x
#include "kernels/linalg_ldl.inc"
#undef LA
#include "kernels/linalg_scalar_end.h"

#define LA_COMPLEX 1
#include "kernels/linalg_scalar.h"
#define LA(x) tn_linalg_z##x
#include "kernels/linalg_ldl.inc"
#undef LA
#include "kernels/linalg_scalar_end.h"
