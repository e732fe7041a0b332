/* linalg_decomp.h — dense matrix decompositions in float64 for the linear-algebra operators
 * (src/ops/linalg_decomp.c): LU with partial pivoting, triangular solves, Cholesky,
 * Householder QR (geqrf / orgqr / ormqr), the symmetric eigenproblem and the SVD.
 *
 * Conventions shared by every function here:
 * - one matrix per call (the caller loops over batches), row-major storage: element (i, j)
 *   of a matrix with leading dimension `ld` is a[i * ld + j]. Read-only operands may be
 *   given as (row stride, column stride) instead, so a transposed operand costs nothing;
 * - float64: the operators compute float32 in float64 and round once at the end (what
 *   makes small float32 problems agree with upstream's LAPACK within tolerance); the
 *   tn_linalg_z* twins do the same for complex64 / complex128 in complex128, from one body
 *   per family written over the scalar type (linalg_lu.inc), with LAPACK's complex
 *   conventions: the adjoint (conjugate transpose) where the real form transposes, izamax's
 *   |re| + |im| for the pivot, the Hermitian Cholesky A = L Lᴴ;
 * - results follow LAPACK's conventions where they define the answer: 1-based pivots as
 *   getrf writes them, info = the 1-based index of the first failure (0 = success),
 *   Householder reflectors H = I - tau v vᵀ with v[0] = 1 and beta = -sign(alpha)·‖x‖ as
 *   dlarfg chooses them (so R's diagonal signs are LAPACK's);
 * - no allocation except where a contract says `work`: the caller passes scratch space; the
 *   blocked forms (matrices of order >= TN_LA_BLOCKED, below) take their panel copies and
 *   the product's scratch with malloc, and fall back to unblocked loops when it fails;
 * - blocked forms, each trailing update one tn_linalg_gemm: LU from order TN_LA_BLOCKED
 *   recursively (LAPACK's getrf2, panels of 16 columns); triangular solves with at least
 *   TN_LA_NB right-hand sides recursively from order 17; Cholesky and the real QR family
 *   (geqrf / orgqr / ormqr, larfb's block reflectors) from order TN_LA_BLOCKED in panels of
 *   TN_LA_NB columns. The same answers as the unblocked loops up to rounding (not the same
 *   bits); below those orders the unblocked loops run, bit for bit as before.
 * Plain C11; no Python. */
#ifndef TN_LINALG_DECOMP_H
#define TN_LINALG_DECOMP_H

#include <stdbool.h>
#include <stdint.h>

/* The bodies' innermost row and column loops, cloned for AVX-512 and AVX2 and chosen at load
 * time: without contraction (ISO C11) each element's arithmetic is the baseline's, so the
 * same bits at a wider vector (not in the sanitizer builds: their load-time resolvers run
 * before the runtime is up). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define TN_LA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TN_LA_CLONES
#endif

/* The SVD's Jacobi rounds split their pairs among the pool's threads from this many matrix
 * entries (each pair's arithmetic its own: the same bits at any thread count). eigh's loops
 * stay on one thread: on 2 vCPUs sharing a core that was 2.4x faster (session 48). */
#define TN_LA_PARALLEL 16384

/* Panel width of the blocked forms, and the order from which they run. */
#define TN_LA_NB 32
#define TN_LA_BLOCKED 96

/* C = alpha·A·B + beta·C, float64 or (cplx) complex128, operands strided as tn_gemm_desc's
 * (row stride, column stride, in elements); C must not overlap A or B. Cannot fail: without
 * memory for the product's scratch it runs tn_gemm_ref (linalg_gemm.c). */
void tn_linalg_gemm(bool cplx, int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t a_rs,
                    int64_t a_cs, const void *b, int64_t b_rs, int64_t b_cs, double beta, void *c, int64_t c_rs,
                    int64_t c_cs);

/* ---- LU, triangular solves, Cholesky (linalg_lu.c) ----------------------------------- */

/* LU with partial pivoting of the m×n matrix a, in place (L unit lower below the diagonal,
 * U on and above): piv[i] (i < min(m, n)) is the 1-based row swapped with row i at step i.
 * Returns 0, or the 1-based index of the first exactly zero pivot (the factorization still
 * completes, as getrf's does). */
int64_t tn_linalg_lu(int64_t m, int64_t n, double *a, int64_t ld, int32_t *piv);

/* Applies the row interchanges of piv[0..k) to the m×nrhs matrix b (forward order), or
 * undoes them (reverse order) when `inverse`. */
void tn_linalg_swap_rows(int64_t k, const int32_t *piv, bool inverse, int64_t nrhs, double *b, int64_t ld);

/* Solves T X = B in place of the n×nrhs matrix b, T n×n triangular (upper or lower),
 * read at element (i, j) = t[i * trs + j * tcs] (pass swapped strides for Tᵀ); unit:
 * the diagonal is taken as ones and not read. Division by a zero diagonal gives inf/nan,
 * as LAPACK's trsm does. */
void tn_linalg_trsm(int64_t n, int64_t nrhs, const double *t, int64_t trs, int64_t tcs, bool upper, bool unit,
                    double *b, int64_t ld);

/* Solves A X = B (or Aᵀ X = B when `transpose`) in place of b, given the LU factors and
 * pivots tn_linalg_lu produced for the n×n matrix A. */
void tn_linalg_lu_solve(int64_t n, const double *lu, int64_t ldlu, const int32_t *piv, bool transpose, int64_t nrhs,
                        double *b, int64_t ld);

/* Cholesky factor L (A = L Lᵀ) of the symmetric n×n matrix a, whose lower triangle is read;
 * L replaces it (the strict upper triangle is set to zero). Returns 0, or the order of the
 * first leading minor that is not positive definite (the factorization stops there). */
int64_t tn_linalg_cholesky(int64_t n, double *a, int64_t ld);

/* The complex128 forms of the above: the same contracts, with "transpose" read as the
 * adjoint (lu_solve's `adjoint`), and ztrsm reading T's entries conjugated when `cj`
 * (pass swapped strides and cj for Tᴴ). zcholesky: A = L Lᴴ, the diagonal's imaginary
 * part ignored as potrf does. */
int64_t tn_linalg_zlu(int64_t m, int64_t n, double _Complex *a, int64_t ld, int32_t *piv);
void tn_linalg_zswap_rows(int64_t k, const int32_t *piv, bool inverse, int64_t nrhs, double _Complex *b, int64_t ld);
void tn_linalg_ztrsm(int64_t n, int64_t nrhs, const double _Complex *t, int64_t trs, int64_t tcs, bool upper,
                     bool unit, bool cj, double _Complex *b, int64_t ld);
void tn_linalg_zlu_solve(int64_t n, const double _Complex *lu, int64_t ldlu, const int32_t *piv, bool adjoint,
                         int64_t nrhs, double _Complex *b, int64_t ld);
int64_t tn_linalg_zcholesky(int64_t n, double _Complex *a, int64_t ld);

/* ---- symmetric indefinite LDLᵀ (linalg_ldl.c) ---------------------------------------- */

/* A = P L D Lᵀ Pᵀ by Bunch-Kaufman diagonal pivoting (sytf2, lower): the lower triangle of a
 * is read and replaced by L (unit, below the diagonal) and D (1×1 and 2×2 blocks on and
 * just below the diagonal), the strict upper triangle zeroed. piv[k] > 0: a 1×1 block,
 * rows k and piv[k]-1 interchanged; piv[k] = piv[k+1] < 0: a 2×2 block, rows k+1 and
 * -piv[k]-1 interchanged (1-based, as LAPACK writes them). Returns 0, or the 1-based index
 * of the first exactly zero 1×1 block (D singular). single: every operation rounded to
 * float32 (both parts), in sytf2's order (a float32 / complex64 input: upstream factors it
 * in float32 arithmetic, and the factors of an ill-conditioned matrix follow that
 * rounding). herm (complex only; ignored for real): A = P L D Lᴴ Pᵀ of a Hermitian matrix
 * (hetf2: the diagonal's imaginary parts are not read and D's diagonal is real); otherwise
 * a complex matrix is factored as symmetric (Lᵀ, no conjugation). */
int64_t tn_linalg_ldl(int64_t n, double *a, int64_t ld, int32_t *piv, bool single, bool herm);
int64_t tn_linalg_zldl(int64_t n, double _Complex *a, int64_t ld, int32_t *piv, bool single, bool herm);
/* Solves A X = B in place of the n×nrhs matrix b with the factors above (sytrs / hetrs). */
void tn_linalg_ldl_solve(int64_t n, const double *a, int64_t ld, const int32_t *piv, int64_t nrhs, double *b,
                         int64_t ldb, bool herm);
void tn_linalg_zldl_solve(int64_t n, const double _Complex *a, int64_t ld, const int32_t *piv, int64_t nrhs,
                          double _Complex *b, int64_t ldb, bool herm);

/* ---- Householder QR (linalg_qr.c) ----------------------------------------------------- */

/* QR of the m×n matrix a in place, as geqrf: R on and above the diagonal, reflector i's
 * vector below the diagonal of column i (v[i] = 1 implied), tau[i] for i < min(m, n). */
void tn_linalg_geqrf(int64_t m, int64_t n, double *a, int64_t ld, double *tau);

/* The first n columns of Q = H(0)·H(1)···H(k-1), m >= n >= k, formed in place of the
 * m×n matrix a that holds the k reflectors' vectors in its first k columns (orgqr). */
void tn_linalg_orgqr(int64_t m, int64_t n, int64_t k, double *a, int64_t ld, const double *tau);

/* c := op(Q)·c (left) or c·op(Q) (right), op = transpose or identity, c m×n, Q = H(0)···
 * H(k-1) of order m (left) or n (right) given by k reflectors in the columns of v (element
 * (i, j) at v[i * ld_v + j], below the diagonal) and tau (ormqr). work: max(m, n) doubles. */
void tn_linalg_ormqr(bool left, bool transpose, int64_t m, int64_t n, int64_t k, const double *v, int64_t ld_v,
                     const double *tau, double *c, int64_t ld, double *work);

/* The complex128 forms: reflectors H = I - tau v vᴴ (tau complex, R's diagonal real as
 * zgeqrf leaves it); zormqr's `adjoint` applies Qᴴ. work: max(m, n) complex values. */
void tn_linalg_zgeqrf(int64_t m, int64_t n, double _Complex *a, int64_t ld, double _Complex *tau);
void tn_linalg_zorgqr(int64_t m, int64_t n, int64_t k, double _Complex *a, int64_t ld, const double _Complex *tau);
void tn_linalg_zormqr(bool left, bool adjoint, int64_t m, int64_t n, int64_t k, const double _Complex *v, int64_t ld_v,
                      const double _Complex *tau, double _Complex *c, int64_t ld, double _Complex *work);

/* ---- symmetric eigenproblem (linalg_syevd.c) and SVD (linalg_svd.c) ------------------- */

/* Eigenvalues w[0..n) (ascending) and eigenvectors z (n×n, columns; required) of the
 * symmetric matrix whose lower (or upper) triangle a holds, by LAPACK's syevd steps for
 * small matrices: sytd2, steqr from the identity, ormtr (so eigenvector signs follow
 * upstream's LAPACK). a is destroyed. work: 6·n doubles. Returns 0, or (steqr's info) the
 * number of off-diagonal elements that did not converge to zero; a nan input never
 * converges, as upstream's. single: deflate with float32's thresholds (a float32 input). */
int tn_linalg_syevd(int64_t n, double *a, bool lower, bool single, double *w, double *z, double *work);
/* The Hermitian form (heevd's steps: hetd2, the same real steqr, unmtr): eigenvalues real,
 * eigenvectors z complex (n×n, required); the diagonal's imaginary part is not read. work:
 * 8·n doubles (16-byte aligned). */
int tn_linalg_zheevd(int64_t n, double _Complex *a, bool lower, bool single, double *w, double _Complex *z,
                     double *work);

/* Singular values s[0..k) (descending, k = min(m, n)) of the m×n matrix a, by one-sided
 * Jacobi rotations on a's columns (m >= n; the caller passes the transpose otherwise).
 * When u / vt are not NULL: u m×ucols (ucols = n, or m for the complete basis) and vt
 * n×n receive A = U·diag(s)·Vᵀ, the columns of u that belong to zero singular values
 * (and the completion) filled with an orthonormal complement. a is only read (the sweeps
 * run on a transposed copy, taken with malloc with V's). work: n doubles. Returns 0, 1 if
 * the sweeps did not converge, 2 without memory for the copies.
 * An inf or nan anywhere in a makes every result nan, as upstream's gesdd. */
int tn_linalg_svd(int64_t m, int64_t n, double *a, int64_t ld, double *s, double *u, int64_t ucols, double *vt,
                  double *work);

/* Fills columns r..ncols of the m×ncols matrix q (leading dimension ld, ncols <= m), whose
 * first r columns are orthonormal, with an orthonormal complement (Gram-Schmidt against
 * the unit vectors, twice). */
void tn_linalg_complete_basis(int64_t m, int64_t ncols, int64_t r, double *q, int64_t ld);
/* The complex128 forms: A = U·diag(s)·Vᴴ (vt receives Vᴴ), each left singular vector's
 * largest entry made real and positive (the right one turned alike); the completion is
 * orthonormal in the Hermitian inner product. */
int tn_linalg_zsvd(int64_t m, int64_t n, double _Complex *a, int64_t ld, double *s, double _Complex *u, int64_t ucols,
                   double _Complex *vt, double *work);
void tn_linalg_zcomplete_basis(int64_t m, int64_t ncols, int64_t r, double _Complex *q, int64_t ld);

/* ---- matrix exponential (linalg_expm.c) -------------------------------------------------- */

/* out = exp(a) for the n×n matrix a (leading dimension n for both), by scaling and squaring
 * with the degree-13 Padé approximant (Higham 2005). work: 8·n·n doubles, piv: n ints. */
void tn_linalg_expm(int64_t n, const double *a, double *out, double *work, int32_t *piv);
/* The complex128 form (work: 8·n·n complex values). */
void tn_linalg_zexpm(int64_t n, const double _Complex *a, double _Complex *out, double _Complex *work, int32_t *piv);

#endif
