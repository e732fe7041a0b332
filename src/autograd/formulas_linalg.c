/* formulas_linalg.c — derivatives of the linear-algebra operators (rows in formulas.def):
 * det/slogdet/logdet, inverse, solve, Cholesky (factor, solve, inverse), triangular
 * solves, QR, the symmetric eigenproblem, the SVD and the matrix exponential, for real
 * and complex dtypes; and the vocabulary helpers of two generated rows: linalg_lu_solve's LU gradient and
 * householder_product_backward. Written from the mathematics (the matrix-calculus identities named at each
 * formula); every step is a door call, so under create_graph they differentiate again. */
#include <stdlib.h>
#include <string.h>

#include "autograd/formulas.h"
#include "autograd/formulas_vocab.h"

#define F(name) void name(tn_grad_ctx *c)

static tn_tensor *mT(tn_grad_ctx *c, tn_tensor *t) { return ag_transpose(c, t, -2, -1); }
/* the adjoint (conjugate transpose; the transpose for real dtypes): the complex formulas
 * below are the real ones with every transpose an adjoint, as upstream writes them */
static tn_tensor *mH(tn_grad_ctx *c, tn_tensor *t) { return ag_conj(c, mT(c, t)); }
static tn_tensor *unsq2(tn_grad_ctx *c, tn_tensor *t) { return ag_unsqueeze(c, ag_unsqueeze(c, t, -1), -1); }
static tn_tensor *inv(tn_grad_ctx *c, tn_tensor *a) { return AG(c, linalg_inv, VT(a)); }
static tn_tensor *tril(tn_grad_ctx *c, tn_tensor *a, int64_t k) { return AG(c, tril, VT(a), VI(k)); }
static tn_tensor *triu(tn_grad_ctx *c, tn_tensor *a, int64_t k) { return AG(c, triu, VT(a), VI(k)); }
static tn_tensor *solve(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b, bool left) {
    return AG(c, linalg_solve, VT(a), VT(b), VB(left));
}
static tn_tensor *solve_tri(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b, bool upper, bool left, bool unit) {
    return AG(c, linalg_solve_triangular, VT(a), VT(b), VB(upper), VB(left), VB(unit));
}
/* diag_embed as t[..., :, None] · I (plain products, differentiable again at any order) */
static tn_tensor *diag_embed(tn_grad_ctx *c, tn_tensor *t) {
    if (c->st != TN_OK || !t) return NULL;
    int64_t n = t->sizes[t->ndim - 1];
    tn_tensor *eye = AG(c, eye, VI(n), VDT(t->dtype), VN(), VN(), VN());
    return ag_mul(c, ag_unsqueeze(c, t, -1), eye);
}
static tn_tensor *diagonal(tn_grad_ctx *c, tn_tensor *t) { return AG(c, diagonal, VT(t), VI(0), VI(-2), VI(-1)); }
static tn_tensor *narrow(tn_grad_ctx *c, tn_tensor *t, int64_t dim, int64_t start, int64_t len) {
    return AG(c, narrow, VT(t), VI(dim), VI(start), VI(len));
}
/* x / d off the diagonal, 0 on it (d's diagonal is 0: the 1/(λj - λi) matrices). The
 * diagonal of d is replaced by ones before dividing, so no inf enters a double backward. */
static tn_tensor *div_offdiag(tn_grad_ctx *c, tn_tensor *x, tn_tensor *d) {
    if (c->st != TN_OK || !x || !d) return NULL;
    int64_t n = x->sizes[x->ndim - 1];
    tn_value e[5] = {VI(n), VDT(TN_DTYPE_BOOL), VN(), VN(), VN()};
    tn_tensor *eye = AG(c, eye, e[0], e[1], e[2], e[3], e[4]);
    tn_tensor *safe = ag_where(c, eye, ag_add_s(c, ag_zeros_like(c, d), 1.0), d);
    return ag_where(c, eye, ag_zeros_like(c, x), ag_div(c, x, safe));
}
/* the tensor list value of two tensors (for cat) */
static tn_value pair(tn_tensor **p) { return tn_value_tensorlist(p, 2); }

/* d det = det · tr(A⁻¹ dA): gA = g·conj(det)·A⁻ᴴ (A invertible) */
F(g_linalg_det) {
    if (NEED(0)) SET(0, ag_mul(c, unsq2(c, ag_mul(c, GRAD(0), ag_conj(c, RES(0)))), mH(c, inv(c, ARG(0)))));
}
/* t = tr(A⁻¹ dA): d log|det| = Re t; a real sign is piecewise constant, a complex one moves
 * as d sign = sign · i Im t, so gA = (g_logabs - i Im(conj(g_sign) sign)) · A⁻ᴴ */
F(g_linalg_slogdet) {
    if (!NEED(0)) return;
    tn_tensor *g = GRAD(1), *gs = GRAD(0), *sign = RES(0);
    if (!g) g = ag_zeros_like(c, AG(c, abs, VT(sign)));
    if (gs && sign && tn_dtype_is_complex(sign->dtype)) {
        tn_tensor *t = ag_mul(c, ag_conj(c, gs), sign); /* i Im t = (t - conj t) / 2 */
        g = ag_sub(c, g, ag_mul_s(c, ag_sub(c, t, ag_conj(c, t)), 0.5));
    }
    SET(0, ag_mul(c, unsq2(c, g), mH(c, inv(c, ARG(0)))));
}
F(g_logdet) {
    if (NEED(0)) SET(0, ag_mul(c, unsq2(c, GRAD(0)), mH(c, inv(c, ARG(0)))));
}
/* d(A⁻¹) = -A⁻¹ dA A⁻¹: gA = -A⁻ᵀ g A⁻ᵀ */
F(g_linalg_inv) {
    if (NEED(0)) {
        tn_tensor *it = mH(c, RES(0));
        SET(0, ag_neg(c, ag_matmul(c, ag_matmul(c, it, GRAD(0)), it)));
    }
}

/* A⁺ of an m×n A, with P = A⁺ (the standard derivative of the pseudo-inverse, as
 * upstream's pinv_backward arranges it for the smaller of m, n):
 *   m ≤ n: K = gᵀP, gA = -(PK)ᵀ + KPᵀ - (AP)(KPᵀ) + (PᵀP)(gᵀ - KA)
 *   m > n: K = Pgᵀ, gA = -(KP)ᵀ + (gᵀ - AK)PPᵀ + PᵀK - (PᵀK)PA
 * (real dtypes: ᵀ is the transpose of the last two dims) */
F(g_linalg_pinv) {
    if (!NEED(0)) return;
    tn_tensor *A = ARG(0), *P = RES(0), *g = GRAD(0);
    const tn_geom *ga = GEOM(0);
    int64_t m = ga->sizes[ga->ndim - 2], n = ga->sizes[ga->ndim - 1];
    tn_tensor *Ph = mH(c, P), *gh = mH(c, g), *r;
    if (m <= n) {
        tn_tensor *K = ag_matmul(c, gh, P), *KPh = ag_matmul(c, K, Ph);
        r = ag_sub(c, KPh, mH(c, ag_matmul(c, P, K)));
        r = ag_sub(c, r, ag_matmul(c, ag_matmul(c, A, P), KPh));
        r = ag_add(c, r, ag_matmul(c, ag_matmul(c, Ph, P), ag_sub(c, gh, ag_matmul(c, K, A))));
    } else {
        tn_tensor *K = ag_matmul(c, P, gh), *PhK = ag_matmul(c, Ph, K);
        r = ag_neg(c, mH(c, ag_matmul(c, K, P)));
        r = ag_add(c, r, ag_matmul(c, ag_matmul(c, ag_sub(c, gh, ag_matmul(c, A, K)), P), Ph));
        r = ag_add(c, r, PhK);
        r = ag_sub(c, r, ag_matmul(c, ag_matmul(c, PhK, P), A));
    }
    SET(0, r);
}

/* X = A⁻¹B (left) or B A⁻¹: gB = A⁻ᵀ g (or g A⁻ᵀ), gA = -gB Xᵀ (or -Xᵀ gB); B a (batch of)
 * vector(s) when it is 1-D or A's shape without the last dim, as the forward decides */
F(g_linalg_solve) {
    const tn_geom *ga = GEOM(0), *gb = GEOM(1);
    bool left = BARG(2);
    bool vec = gb->ndim == 1;
    if (!vec && gb->ndim == ga->ndim - 1) {
        vec = true;
        for (int i = 0; i < gb->ndim; i++)
            if (gb->sizes[i] != ga->sizes[i]) vec = false;
    }
    tn_tensor *gB = solve(c, mH(c, ARG(0)), GRAD(0), left), *X = RES(0);
    if (NEED(1)) SET(1, gB);
    if (NEED(0)) {
        tn_tensor *gA;
        if (vec) gA = left ? ag_matmul(c, ag_unsqueeze(c, gB, -1), ag_unsqueeze(c, ag_conj(c, X), -2))
                           : ag_matmul(c, ag_unsqueeze(c, ag_conj(c, X), -1), ag_unsqueeze(c, gB, -2));
        else gA = left ? ag_matmul(c, gB, mH(c, X)) : ag_matmul(c, mH(c, X), gB);
        SET(0, ag_neg(c, gA));
    }
}

/* A = L Lᴴ: gA = L⁻ᴴ Φ L⁻¹ with P = Lᴴ gL and Φ = (tril(P) + tril(P, -1)ᴴ) / 2, the
 * Hermitian part of P's lower triangle with the diagonal halved, as upstream arranges it
 * (its diagonal keeps P's imaginary part) (Murray, "Differentiation of the Cholesky
 * decomposition", 2016); upper: U = Lᴴ */
F(g_cholesky) {
    if (!NEED(0)) return;
    bool upper = BARG(1);
    tn_tensor *L = upper ? mH(c, RES(0)) : RES(0), *gL = upper ? mH(c, GRAD(0)) : GRAD(0);
    tn_tensor *P = ag_matmul(c, mH(c, L), gL);
    tn_tensor *phi = ag_mul_s(c, ag_add(c, tril(c, P, 0), mH(c, tril(c, P, -1))), 0.5);
    SET(0, solve_tri(c, mH(c, L), solve_tri(c, L, phi, false, false, false), true, true, false));
}

/* X = (L Lᵀ)⁻¹ B: gB = cholesky_solve(g, L); gL = -(gB Xᵀ + X gBᵀ) L (upper: -U(...)) */
F(g_cholesky_solve) {
    bool upper = BARG(2);
    tn_tensor *gB = AG(c, cholesky_solve, VT(GRAD(0)), VT(ARG(1)), VB(upper)), *X = RES(0);
    if (NEED(0)) SET(0, gB);
    if (NEED(1)) {
        tn_tensor *cm = ag_matmul(c, gB, mH(c, X));
        cm = ag_add(c, cm, mH(c, cm));
        SET(1, ag_neg(c, upper ? ag_matmul(c, ARG(1), cm) : ag_matmul(c, cm, ARG(1))));
    }
}

/* Y = (L Lᵀ)⁻¹: gL = -Y (g + gᵀ) Y L (upper: -U Y (g + gᵀ) Y) */
F(g_cholesky_inverse) {
    if (!NEED(0)) return;
    bool upper = BARG(1);
    tn_tensor *Y = RES(0), *cm = ag_matmul(c, ag_matmul(c, Y, ag_add(c, GRAD(0), mH(c, GRAD(0)))), Y);
    SET(0, ag_neg(c, upper ? ag_matmul(c, ARG(0), cm) : ag_matmul(c, cm, ARG(0))));
}

/* triangular_solve(B, A, upper, transpose, unit): op(A) X = B; gB solves with op(A)ᵀ, gA is
 * -gB Xᵀ (or -X gBᵀ) restricted to A's triangle (its diagonal excluded when unit) */
F(g_triangular_solve) {
    bool upper = BARG(2), trans = BARG(3), unit = BARG(4);
    /* op(A) is A or Aᵀ (not Aᴴ), so op(A)⁻ᴴ g = conj(op(A)⁻ᵀ conj(g)) */
    tn_value a[5] = {VT(ag_conj(c, GRAD(0))), VT(ARG(1)), VB(upper), VB(!trans), VB(unit)};
    tn_tensor *o[2] = {0};
    if (c->st != TN_OK) return;
    ag_op_n(c, TN_OP_triangular_solve, 5, a, o, 2);
    tn_tensor *gB = ag_conj(c, o[0]), *X = RES(0);
    if (NEED(0)) SET(0, gB);
    if (NEED(1)) {
        /* op(A) = Aᵀ: gA = (-gB Xᴴ)ᵀ = -conj(X gBᴴ) */
        tn_tensor *gA = ag_neg(c, trans ? ag_conj(c, ag_matmul(c, X, mH(c, gB))) : ag_matmul(c, gB, mH(c, X)));
        gA = upper ? triu(c, gA, unit) : tril(c, gA, -(int64_t)unit);
        SET(1, ag_add(c, gA, GRAD(1)));
    }
}

/* linalg_solve_triangular(A, B, upper, left, unit) */
F(g_linalg_solve_triangular) {
    bool upper = BARG(2), left = BARG(3), unit = BARG(4);
    tn_tensor *gB = solve_tri(c, mH(c, ARG(0)), GRAD(0), !upper, left, unit), *X = RES(0);
    if (NEED(1)) SET(1, gB);
    if (NEED(0)) {
        tn_tensor *gA = ag_neg(c, left ? ag_matmul(c, gB, mH(c, X)) : ag_matmul(c, mH(c, X), gB));
        SET(0, upper ? triu(c, gA, unit) : tril(c, gA, -(int64_t)unit));
    }
}

/* A = V diag(λ) Vᵀ: gA = V (diag(gλ) + skew(Vᵀ gV) / E) Vᵀ, E_ij = λj - λi off the diagonal,
 * skew(X) = (X - Xᵀ)/2: the gradient is symmetric, as upstream's (the input is read as
 * the symmetric matrix of one triangle, and a symmetric gradient is what it returns) */
static tn_tensor *eigh_back(tn_grad_ctx *c, tn_tensor *L, tn_tensor *V, tn_tensor *gL, tn_tensor *gV) {
    tn_tensor *E = ag_sub(c, ag_unsqueeze(c, L, -2), ag_unsqueeze(c, L, -1));
    tn_tensor *inner = diag_embed(c, gL);
    if (c->st == TN_OK && tn_dtype_is_complex(V->dtype)) inner = ag_cast(c, inner, V->dtype); /* gλ is real */
    if (gV) {
        tn_tensor *x = ag_matmul(c, mH(c, V), gV);
        inner = ag_add(c, inner, div_offdiag(c, ag_mul_s(c, ag_sub(c, x, mH(c, x)), 0.5), E));
    }
    return ag_matmul(c, ag_matmul(c, V, inner), mH(c, V));
}
F(g_linalg_eigh) {
    if (NEED(0)) SET(0, eigh_back(c, RES(0), RES(1), GRAD(0), GRAD(1)));
}
F(g_linalg_eigvalsh) {
    if (!NEED(0)) return;
    tn_value a[2] = {VT(ARG(0)), ARGV(1)};
    tn_tensor *o[2] = {0};
    ag_op_n(c, TN_OP_linalg_eigh, 2, a, o, 2);
    SET(0, eigh_back(c, o[0], o[1], GRAD(0), NULL));
}

/* The thin SVD A = U diag(S) Vh (U m×k, Vh k×n): with F_ij = 1/(sj² - si²) off the diagonal,
 * gA = U [diag(gS) + (F∘(UᵀgU - gUᵀU)) S + S (F∘(VᵀgV - gVᵀV))] Vh
 *      + (I - UUᵀ) gU S⁻¹ Vh + U S⁻¹ (gVh - gVh V Vh)   (Townsend, "Differentiating the SVD").
 * Complex: ᵀ is ᴴ, and the diagonal gains i Im(diag(Uᴴ gU)) / S, the part of gU along each
 * singular pair's phase (a loss that depends on the phase is ill-defined; upstream's check
 * for it, which raises, is not reproduced: ours returns this formula's value).
 * gU / gVh NULL: only the singular values are differentiated. */
static tn_tensor *svd_back(tn_grad_ctx *c, tn_tensor *U, tn_tensor *S, tn_tensor *Vh, tn_tensor *gU, tn_tensor *gS,
                           tn_tensor *gVh) {
    if (c->st != TN_OK) return NULL;
    int64_t m = U->sizes[U->ndim - 2], n = Vh->sizes[Vh->ndim - 1], k = S->sizes[S->ndim - 1];
    tn_tensor *inner = diag_embed(c, gS);
    if (tn_dtype_is_complex(U->dtype)) inner = ag_cast(c, inner, U->dtype);
    if (!gU && !gVh) return ag_matmul(c, ag_matmul(c, U, inner), Vh);
    tn_tensor *S2 = ag_mul(c, S, S), *D = ag_sub(c, ag_unsqueeze(c, S2, -2), ag_unsqueeze(c, S2, -1));
    tn_tensor *V = mH(c, Vh), *gV = mH(c, gVh);
    tn_tensor *UtgU = ag_matmul(c, mH(c, U), gU), *VtgV = ag_matmul(c, mH(c, V), gV);
    tn_tensor *J = div_offdiag(c, ag_sub(c, UtgU, mH(c, UtgU)), D);
    tn_tensor *K = div_offdiag(c, ag_sub(c, VtgV, mH(c, VtgV)), D);
    inner = ag_add(c, inner, ag_mul(c, J, ag_unsqueeze(c, S, -2)));
    inner = ag_add(c, inner, ag_mul(c, ag_unsqueeze(c, S, -1), K));
    if (tn_dtype_is_complex(U->dtype)) { /* the phase of each pair: i Im(diag(Uᴴ gU)) / S on the diagonal */
        tn_tensor *d = diagonal(c, UtgU);
        inner = ag_add(c, inner, diag_embed(c, ag_div(c, ag_mul_s(c, ag_sub(c, d, ag_conj(c, d)), 0.5), S)));
    }
    tn_tensor *gA = ag_matmul(c, ag_matmul(c, U, inner), Vh);
    tn_tensor *Sinv = AG(c, reciprocal, VT(S));
    if (m > k) {
        tn_tensor *t = ag_sub(c, gU, ag_matmul(c, U, UtgU));
        gA = ag_add(c, gA, ag_matmul(c, ag_mul(c, t, ag_unsqueeze(c, Sinv, -2)), Vh));
    }
    if (n > k) {
        tn_tensor *t = ag_sub(c, gVh, ag_matmul(c, mH(c, VtgV), Vh));
        gA = ag_add(c, gA, ag_matmul(c, U, ag_mul(c, ag_unsqueeze(c, Sinv, -1), t)));
    }
    return gA;
}
/* results narrowed to the thin factors (full_matrices: the completion does not enter A) */
static void thin(tn_grad_ctx *c, tn_tensor **U, tn_tensor **Vh, tn_tensor **gU, tn_tensor **gVh, int64_t k) {
    *U = narrow(c, *U, -1, 0, k), *gU = narrow(c, *gU, -1, 0, k);
    *Vh = narrow(c, *Vh, -2, 0, k), *gVh = narrow(c, *gVh, -2, 0, k);
}
/* linalg_svd(A, full_matrices, driver) -> (U, S, Vh) */
F(g_linalg_svd) {
    if (!NEED(0)) return;
    tn_tensor *U = RES(0), *S = RES(1), *Vh = RES(2), *gU = GRAD(0), *gVh = GRAD(2);
    thin(c, &U, &Vh, &gU, &gVh, S->sizes[S->ndim - 1]);
    SET(0, svd_back(c, U, S, Vh, gU, GRAD(1), gVh));
}
/* _linalg_svd(A, full_matrices, compute_uv, driver) */
F(g__linalg_svd) {
    if (!NEED(0)) return;
    if (!BARG(2)) { /* only S: recompute the vectors */
        tn_value a[3] = {VT(ARG(0)), VB(false), VN()};
        tn_tensor *o[3] = {0};
        ag_op_n(c, TN_OP_linalg_svd, 3, a, o, 3);
        SET(0, svd_back(c, o[0], o[1], o[2], NULL, GRAD(1), NULL));
        return;
    }
    g_linalg_svd(c);
}
/* svd(self, some, compute_uv) -> (U, S, V) */
F(g_svd) {
    if (!NEED(0)) return;
    if (!BARG(2)) {
        ag_fail(c, tn_error(TN_ERR_RUNTIME, "torch.svd: Setting compute_uv to False in torch.svd doesn't compute singular "
                                            "matrices, and hence we cannot compute backward. Please use "
                                            "torch.svd(compute_uv=True)"));
        return;
    }
    tn_tensor *U = RES(0), *S = RES(1), *Vh = mH(c, RES(2)), *gU = GRAD(0), *gVh = mH(c, GRAD(2));
    thin(c, &U, &Vh, &gU, &gVh, S->sizes[S->ndim - 1]);
    SET(0, svd_back(c, U, S, Vh, gU, GRAD(1), gVh));
}
/* linalg_svdvals(A, driver): U diag(g) Vh from a recomputed thin SVD */
F(g_linalg_svdvals) {
    if (!NEED(0)) return;
    tn_value a[3] = {VT(ARG(0)), VB(false), VN()};
    tn_tensor *o[3] = {0};
    ag_op_n(c, TN_OP_linalg_svd, 3, a, o, 3);
    SET(0, svd_back(c, o[0], o[1], o[2], NULL, GRAD(0), NULL));
}

/* A = QR with m >= n (Q m×n, R n×n): M = R gRᵀ - gQᵀ Q, gA = (gQ + Q copyltu(M)) R⁻ᵀ where
 * copyltu(M) is the symmetric matrix of M's lower triangle (Walter & Lehmann 2018); complex:
 * ᵀ is ᴴ and copyltu takes the real part of M's diagonal (derived for R with a real diagonal,
 * as geqrf leaves it). */
static tn_tensor *qr_back_tall(tn_grad_ctx *c, tn_tensor *Q, tn_tensor *R, tn_tensor *gQ, tn_tensor *gR) {
    tn_tensor *M = ag_sub(c, ag_matmul(c, R, mH(c, gR)), ag_matmul(c, mH(c, gQ), Q));
    tn_tensor *lo = tril(c, M, -1), *d = diagonal(c, M);
    /* complex: the diagonal's real part (R's diagonal is real, so Qᴴ dQ's imaginary diagonal
     * is not free: it cancels against that of dR R⁻¹) */
    if (c->st == TN_OK && tn_dtype_is_complex(M->dtype)) d = ag_mul_s(c, ag_add(c, d, ag_conj(c, d)), 0.5);
    tn_tensor *sym = ag_add(c, ag_add(c, lo, mH(c, lo)), diag_embed(c, d));
    tn_tensor *b = ag_add(c, gQ, ag_matmul(c, Q, sym));
    return solve_tri(c, mH(c, R), b, false, false, false); /* b R⁻ᵀ: X Rᵀ = b */
}
static void qr_back(tn_grad_ctx *c, bool complete) {
    if (!NEED(0)) return;
    tn_tensor *Q = RES(0), *R = RES(1), *gQ = GRAD(0), *gR = GRAD(1), *A = ARG(0);
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    if (complete && m > n) {
        ag_fail(c, tn_error(TN_ERR_RUNTIME, "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."));
        return;
    }
    if (m >= n) {
        SET(0, qr_back_tall(c, Q, R, gQ, gR));
        return;
    }
    /* m < n: A = [X | Y] with X = Q R1 (m×m), Y = Q R2; gY = Q gR2, X's part as above
     * with gQ + Y gR2ᵀ */
    tn_tensor *R1 = narrow(c, R, -1, 0, m), *gR1 = narrow(c, gR, -1, 0, m), *gR2 = narrow(c, gR, -1, m, n - m);
    tn_tensor *Y = narrow(c, A, -1, m, n - m);
    tn_tensor *gX = qr_back_tall(c, Q, R1, ag_add(c, gQ, ag_matmul(c, Y, mH(c, gR2))), gR1);
    tn_tensor *gY = ag_matmul(c, Q, gR2);
    tn_tensor *p[2] = {gX, gY};
    if (c->st == TN_OK) SET(0, AG(c, cat, pair(p), VI(-1)));
}
/* linalg_qr(A, mode) */
F(g_linalg_qr) {
    const char *mode = ARGV(1).u.s.data;
    if (!strcmp(mode, "r")) {
        ag_fail(c, tn_error(TN_ERR_RUNTIME, "The derivative of linalg.qr depends on Q, which is not computed when "
                                            "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                                            "differentiate through linalg.qr."));
        return;
    }
    qr_back(c, !strcmp(mode, "complete"));
}
/* qr(self, some) */
F(g_qr) { qr_back(c, !BARG(1)); }

/* exp'(A)ᵀ[g] is the upper-right block of exp([[Aᵀ, g], [0, Aᵀ]]) (Najfeld & Havel 1995) */
F(g_matrix_exp) {
    if (!NEED(0)) return;
    tn_tensor *At = mH(c, ARG(0)), *g = GRAD(0);
    int64_t n = At->sizes[At->ndim - 1];
    tn_tensor *top[2] = {At, g}, *z = ag_zeros_like(c, At);
    tn_tensor *bot[2] = {z, At};
    if (c->st != TN_OK) return;
    tn_tensor *t = AG(c, cat, pair(top), VI(-1));
    tn_tensor *b = AG(c, cat, pair(bot), VI(-1));
    if (c->st != TN_OK) return;
    tn_tensor *rows[2] = {t, b};
    tn_tensor *M = AG(c, cat, pair(rows), VI(-2));
    tn_tensor *E = AG(c, linalg_matrix_exp, VT(M));
    SET(0, narrow(c, narrow(c, E, -2, 0, n), -1, n, n));
}

/* A = P L U, square: gA = P L⁻ᵀ (tril(Lᵀ gL, -1) + triu(gU Uᵀ)) U⁻ᵀ (the LU differential
 * solved for dL (strictly lower) and dU (upper)). Rectangular LU refuses by name. */
static tn_tensor *lu_back(tn_grad_ctx *c, tn_tensor *P, tn_tensor *L, tn_tensor *U, tn_tensor *gL, tn_tensor *gU) {
    if (c->st != TN_OK) return NULL;
    if (L->sizes[L->ndim - 2] != U->sizes[U->ndim - 1]) {
        ag_fail(c, tn_error(TN_ERR_NOT_IMPLEMENTED, "the derivative of the LU decomposition of a non-square matrix is not implemented by torchnative"));
        return NULL;
    }
    tn_tensor *g = ag_add(c, tril(c, ag_matmul(c, mH(c, L), gL), -1), triu(c, ag_matmul(c, gU, mH(c, U)), 0));
    g = solve_tri(c, mH(c, U), g, false, false, false);  /* g U⁻ᵀ */
    g = solve_tri(c, mH(c, L), g, true, true, true);     /* L⁻ᵀ g */
    return ag_matmul(c, P, g);
}
/* linalg_lu_solve's gradient for the packed LU (derivatives.yaml's linalg_lu_solve_LU):
 * X = op(A)⁻¹ B (left) or B op(A)⁻¹ (right), op(A) = A or Aᴴ, A = P L U. The gradient of A
 * is -A⁻ᴴ G Xᴴ (left), -X (A⁻¹ G)ᴴ (left, adjoint), -Xᴴ G A⁻ᴴ (right), -(G A⁻¹)ᴴ X
 * (right, adjoint), each inverse applied by linalg_lu_solve itself; then dA = P (dL U + L dU) gives
 * L's part tril(Pᵀ gA Uᵀ, -1) and U's part triu(Lᵀ Pᵀ gA), packed as the LU (complex: ᵀ is ᴴ). */
tn_tensor *ag_linalg_lu_solve_LU(tn_grad_ctx *c, tn_tensor *g, tn_tensor *LU, tn_tensor *pivots, tn_tensor *X,
                                 bool left, bool adjoint) {
    if (c->st != TN_OK || !g) return NULL;
    tn_tensor *gA;
    if (left) {
        tn_tensor *s = AG(c, linalg_lu_solve, VT(LU), VT(pivots), VT(g), VB(true), VB(!adjoint));
        gA = adjoint ? ag_matmul(c, X, mH(c, s)) : ag_matmul(c, s, mH(c, X));
    } else {
        tn_tensor *s = AG(c, linalg_lu_solve, VT(LU), VT(pivots), VT(g), VB(false), VB(!adjoint));
        gA = adjoint ? ag_matmul(c, mH(c, s), X) : ag_matmul(c, mH(c, X), s);
    }
    gA = ag_neg(c, gA);
    if (c->st != TN_OK) return NULL;
    /* P from the pivots alone (not differentiable); L and U by tril/triu of LU */
    tn_tensor *plain = AG(c, detach, VT(LU));
    tn_value a[4] = {VT(plain), VT(pivots), VB(false), VB(true)};
    tn_tensor *o[3] = {0};
    ag_op_n(c, TN_OP_lu_unpack, 4, a, o, 3);
    if (c->st != TN_OK) return NULL;
    int64_t n = LU->sizes[LU->ndim - 1];
    tn_tensor *eye = AG(c, eye, VI(n), VDT(LU->dtype), VN(), VN(), VN());
    tn_tensor *L = ag_add(c, tril(c, LU, -1), eye), *U = triu(c, LU, 0);
    tn_tensor *PtgA = ag_matmul(c, mH(c, o[0]), gA);
    tn_tensor *r = ag_add(c, tril(c, ag_matmul(c, PtgA, mH(c, U)), -1), triu(c, ag_matmul(c, mH(c, L), PtgA), 0));
    if (c->st != TN_OK) return NULL;
    return ag_sum_to(c, r, LU->ndim, LU->sizes);
}

/* linalg_householder_product's gradients (derivatives.yaml's householder_product_backward):
 * Q = H₀ H₁ … H_{k-1} E, E the first n columns of I_m, H_i = I - τ_i v_i v_iᵀ with v_i column
 * i of tril(V, -1) + I (1 at row i, V's entries below). With P_i = H₀ … H_{i-1} and
 * S_i = H_{i+1} … H_{k-1} E, dQ = Σ P_i dH_i S_i, so for a = S_iᵀ v_i, b = P_i v_i:
 * g_τ_i = -bᵀ G a and g_v_i = -τ_i (P_iᵀ G a + S_i Gᵀ b), of which V keeps the entries below
 * the diagonal (columns from k on: zero). P and S are built by rank-one updates; every step is
 * a door call, so the gradient differentiates again. Complex: H_i = I - τ_i v_i v_iᴴ, ᵀ is ᴴ,
 * and g_v_i's first term takes conj(τ_i). out = {g_V, g_τ}. */
void ag_householder_product_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *Q, tn_tensor *V, tn_tensor *tau,
                                     tn_tensor **out) {
    (void)Q;
    out[0] = out[1] = NULL;
    if (c->st != TN_OK || !g) return;
    int64_t m = V->sizes[V->ndim - 2], n = V->sizes[V->ndim - 1], k = tau->sizes[tau->ndim - 1];
    if (k == 0) {
        out[0] = ag_zeros_like(c, V);
        out[1] = ag_zeros_like(c, tau);
        return;
    }
    tn_tensor **vs = calloc((size_t)(4 * k + 1), sizeof(tn_tensor *));
    if (!vs) { ag_fail(c, tn_error(TN_ERR_NO_MEMORY, "out of memory")); return; }
    tn_tensor **ts = vs + k, **S = ts + k, **gv = S + k;
    tn_tensor *E = AG(c, eye_m, VI(m), VI(n), VDT(V->dtype), VN(), VN(), VN());
    tn_tensor *Vl = ag_add(c, tril(c, V, -1), E);
    for (int64_t i = 0; i < k && c->st == TN_OK; i++) {
        vs[i] = narrow(c, Vl, -1, i, 1);
        ts[i] = ag_unsqueeze(c, narrow(c, tau, -1, i, 1), -1);
    }
    S[k - 1] = E;
    for (int64_t i = k - 2; i >= 0 && c->st == TN_OK; i--) /* S_i = H_{i+1} S_{i+1} */
        S[i] = ag_sub(c, S[i + 1], ag_mul(c, ts[i + 1], ag_matmul(c, vs[i + 1], ag_matmul(c, mH(c, vs[i + 1]), S[i + 1]))));
    tn_tensor *P = AG(c, eye, VI(m), VDT(V->dtype), VN(), VN(), VN());
    tn_tensor **gt = vs; /* g_τ_i overwrites v_i once P has moved past it */
    for (int64_t i = 0; i < k && c->st == TN_OK; i++) {
        tn_tensor *v = vs[i], *t = ts[i];
        tn_tensor *a = ag_matmul(c, mH(c, S[i]), v), *b = ag_matmul(c, P, v);
        tn_tensor *Ga = ag_matmul(c, g, a), *Gtb = ag_matmul(c, mH(c, g), b);
        /* complex: -(conj(τ) Pᴴ G a + τ S Gᴴ b) (the two terms of dH = -τ (dv vᴴ + v dvᴴ)) */
        gv[i] = ag_neg(c, ag_add(c, ag_mul(c, ag_conj(c, t), ag_matmul(c, mH(c, P), Ga)), ag_mul(c, t, ag_matmul(c, S[i], Gtb))));
        P = ag_sub(c, P, ag_mul(c, t, ag_matmul(c, b, mH(c, v))));
        gt[i] = ag_neg(c, ag_matmul(c, mH(c, b), Ga));
    }
    int ncols = (int)k;
    if (n > k && c->st == TN_OK) gv[ncols++] = ag_zeros_like(c, narrow(c, V, -1, k, n - k));
    if (c->st == TN_OK) {
        out[0] = tril(c, AG(c, cat, tn_value_tensorlist(gv, ncols), VI(-1)), -1);
        tn_tensor *gtc = AG(c, cat, tn_value_tensorlist(gt, (int)k), VI(-1));
        if (c->st == TN_OK) out[1] = ag_reshape(c, gtc, tau->ndim, tau->sizes);
    }
    free(vs);
}

/* linalg_lu(A, pivot) -> (P, L, U) */
F(g_linalg_lu) {
    if (NEED(0)) SET(0, lu_back(c, RES(0), RES(1), RES(2), GRAD(1), GRAD(2)));
}
/* linalg_lu_factor_ex(A, pivot, check_errors) -> (LU, pivots, info): the packed gradient's
 * strict lower part is L's, its upper part U's */
F(g_linalg_lu_factor_ex) {
    if (!NEED(0)) return;
    tn_tensor *LU = RES(0);
    if (c->st != TN_OK || !LU) return;
    if (LU->sizes[LU->ndim - 2] != LU->sizes[LU->ndim - 1]) {
        ag_fail(c, tn_error(TN_ERR_NOT_IMPLEMENTED, "the derivative of the LU decomposition of a non-square matrix is not implemented by torchnative"));
        return;
    }
    /* P from the pivots alone (not differentiable); L and U by tril/triu of LU, so that a
     * second derivative flows through them */
    tn_tensor *plain = AG(c, detach, VT(LU));
    tn_value a[4] = {VT(plain), VT(RES(1)), VB(false), VB(true)};
    tn_tensor *o[3] = {0};
    ag_op_n(c, TN_OP_lu_unpack, 4, a, o, 3);
    int64_t n = LU->sizes[LU->ndim - 1];
    tn_tensor *eye = AG(c, eye, VI(n), VDT(LU->dtype), VN(), VN(), VN());
    tn_tensor *L = ag_add(c, tril(c, LU, -1), eye), *U = triu(c, LU, 0);
    SET(0, lu_back(c, o[0], L, U, tril(c, GRAD(0), -1), triu(c, GRAD(0), 0)));
}
