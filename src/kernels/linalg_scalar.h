/* linalg_scalar.h — the scalar vocabulary the linear-algebra bodies (linalg_*.inc) are
 * written in, defined in one place for both of their instances. Not guarded: a file
 * includes it once per instance, with LA_COMPLEX 0 (float64) or 1 (complex128, with
 * c10::complex's product and quotient, as upstream's own loops: complex_math.h), and
 * includes linalg_scalar_end.h after that instance's bodies. Defines:
 *   T        the scalar type           R        its real type
 *   NPARTS   reals per scalar          T_NAN    a NaN of type T
 *   CONJ(x)  conjugate (identity for real T)
 *   RE(x), IM(x)  the parts            ABS(x)   the modulus
 *   ABS1(x)  |re| + |im| (LAPACK's i?amax pivot magnitude; |x| for real T)
 *   MUL(x, y), DIV(x, y)  product and quotient
 *   LA_CLONES  the AVX clones of an innermost loop (linalg_decomp.h's TN_LA_CLONES) for
 *            float64 only: in complex128 bodies GCC 12's vectorizer fuses the products'
 *            multiply and add into vfmaddsub in the AVX clones, a contraction ISO C forbids
 *            that changes the bits, so those stay at the baseline
 * The includer adds what is particular to its body (the function names, LA(x), ...). */
#if !defined(LA_COMPLEX)
#error "define LA_COMPLEX (0: float64, 1: complex128) before including linalg_scalar.h"
#elif LA_COMPLEX
#define T double _Complex
#define R double
#define NPARTS 2
#define T_NAN CMPLX(NAN, NAN)
#define CONJ(x) conj(x)
#define RE(x) creal(x)
#define IM(x) cimag(x)
#define ABS(x) cabs(x)
#define ABS1(x) (fabs(creal(x)) + fabs(cimag(x)))
#define MUL(x, y) cmul_c128((x), (y))
#define DIV(x, y) cdiv_c128((x), (y))
#define LA_CLONES
#else
#define T double
#define R double
#define NPARTS 1
#define T_NAN NAN
#define CONJ(x) (x)
#define RE(x) (x)
#define IM(x) 0.0
#define ABS(x) fabs(x)
#define ABS1(x) fabs(x)
#define MUL(x, y) ((x) * (y))
#define DIV(x, y) ((x) / (y))
#define LA_CLONES TN_LA_CLONES
#endif
