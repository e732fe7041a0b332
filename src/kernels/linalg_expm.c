/* linalg_expm.c — the matrix exponential in float64 and complex128: scaling and squaring
 * with the degree-13 Padé approximant (Higham, "The scaling and squaring method for the
 * matrix exponential revisited", 2005), one body (linalg_expm.inc) per scalar type.
 * Contract in linalg_decomp.h. */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "kernels/complex_math.h"
#include "kernels/linalg_decomp.h"

#define SCALAR double
#define LA(x) tn_linalg_##x
#define ABS(x) fabs(x)
#define MUL(x, y) ((x) * (y))
#include "kernels/linalg_expm.inc"
#undef SCALAR
#undef LA
#undef ABS
#undef MUL

#define SCALAR double _Complex
#define LA(x) tn_linalg_z##x
#define ABS(x) cabs(x)
#define MUL(x, y) cmul_c128((x), (y))
#include "kernels/linalg_expm.inc"
