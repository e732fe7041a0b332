/* linalg_orthogonal.c — the factorizations by orthogonal transformations: Householder QR
 * (geqrf, linalg_qr/qr, householder_product/orgqr, ormqr), the symmetric eigenproblem
 * (linalg_eigh, linalg_eigvalsh) and the SVD (linalg_svd, svd, linalg_svdvals), with
 * upstream's checks, shapes and messages. Kernels: src/kernels/linalg_decomp.h. Complex QR
 * runs on complex128 scratch of (re, im) pairs (w = 2 doubles an element: offsets and sizes
 * below count doubles) through the la_* wrappers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/linalg_decomp.h"
#include "ops/dispatch.h"
#include "ops/linalg_decomp_internal.h"
#include "ops/shape.h"

static tn_status oom(void) { return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }

static void release_all(int n, tn_tensor **ts) {
    for (int i = 0; i < n; i++)
        if (ts[i]) tn_tensor_release(ts[i]), ts[i] = NULL;
}
static tn_status set_rets(tn_value *rets, int n, tn_tensor **ts) {
    for (int i = 0; i < n; i++) rets[i] = tn_value_tensor(ts[i]);
    return TN_OK;
}
/* batch dims of t followed by the given trailing sizes; returns the count */
static int with_tail(const tn_tensor *t, int nt, int64_t a, int64_t b, int64_t *out) {
    int nb = t->ndim - 2;
    memcpy(out, t->sizes, sizeof(int64_t) * nb);
    if (nt > 0) out[nb] = a;
    if (nt > 1) out[nb + 1] = b;
    return nb + nt;
}

/* ---- QR ---------------------------------------------------------------------------------- */

typedef double _Complex zdouble;
static void la_geqrf(bool z, int64_t m, int64_t n, double *a, int64_t ld, double *tau) {
    if (z) tn_linalg_zgeqrf(m, n, (zdouble *)a, ld, (zdouble *)tau);
    else tn_linalg_geqrf(m, n, a, ld, tau);
}
static void la_orgqr(bool z, int64_t m, int64_t n, int64_t k, double *a, int64_t ld, const double *tau) {
    if (z) tn_linalg_zorgqr(m, n, k, (zdouble *)a, ld, (const zdouble *)tau);
    else tn_linalg_orgqr(m, n, k, a, ld, tau);
}

/* aten::geqrf(Tensor self) -> (Tensor a, Tensor tau) */
tn_status tn_op_geqrf(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *out[2] = {0};
    if (A->ndim < 2) return tn_error(TN_ERR_RUNTIME, "torch.geqrf: input must have at least 2 dimensions.");
    TN_TRY(tn_la_need_float_kernel_or_complex("geqrf_cpu", A));
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    int64_t batch = tn_la_batch(A->ndim, A->sizes), sz[TN_MAX_DIMS], w = tn_la_w(A->dtype);
    double *a = tn_la_alloc(batch * m * n * w, sizeof(double)), *tau = tn_la_alloc(batch * k * w, sizeof(double));
    if (!a || !tau) { free(a), free(tau); return oom(); }
    tn_la_gather(A, a);
    for (int64_t b = 0; b < batch && !tn_tensor_is_meta(A); b++)
        la_geqrf(w == 2, m, n, a + b * m * n * w, n, tau + b * k * w);
    tn_status st = tn_la_new(A->dtype, tn_tensor_device(A), A->ndim, A->sizes, a, &out[0]);
    if (st == TN_OK) st = tn_la_new(A->dtype, tn_tensor_device(A), with_tail(A, 1, k, 0, sz), sz, tau, &out[1]);
    free(a), free(tau);
    if (st != TN_OK) { release_all(2, out); return st; }
    return set_rets(rets, 2, out);
}

/* Q and R of every matrix: mode 0 reduced, 1 complete, 2 r (Q is an empty tensor). */
static tn_status qr_impl(tn_tensor *A, int mode, tn_tensor **out) {
    TN_TRY(tn_la_need_matrix("linalg.qr", A, "A"));
    TN_TRY(tn_la_need_float_or_complex("linalg.qr", A));
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n, w = tn_la_w(A->dtype);
    int64_t qc = mode == 1 ? m : k, rr = mode == 1 ? m : k; /* Q m×qc, R rr×n */
    int64_t batch = tn_la_batch(A->ndim, A->sizes), sz[TN_MAX_DIMS], zero = 0;
    TN_TRY(tn_la_check_numel(batch, m, m > n ? m : n, w)); /* A, Q m x qc and R rr x n */
    double *a = tn_la_alloc(batch * m * n * w, sizeof(double)), *tau = tn_la_alloc(k * w, sizeof(double));
    double *q = tn_la_alloc(batch * m * qc * w, sizeof(double)), *r = tn_la_alloc(batch * rr * n * w, sizeof(double));
    if (!a || !tau || !q || !r) { free(a), free(tau), free(q), free(r); return oom(); }
    tn_la_gather(A, a);
    size_t es = (size_t)w * sizeof(double);
    for (int64_t b = 0; b < batch && !tn_tensor_is_meta(A); b++) {
        double *ab = a + b * m * n * w, *qb = q + b * m * qc * w, *rb = r + b * rr * n * w;
        la_geqrf(w == 2, m, n, ab, n, tau);
        for (int64_t i = 0; i < rr && i < m; i++)
            for (int64_t j = i; j < n; j++) memcpy(rb + (i * n + j) * w, ab + (i * n + j) * w, es);
        if (mode == 2) continue;
        for (int64_t i = 0; i < m; i++) /* the reflectors into Q's first k columns */
            for (int64_t j = 0; j < k && j < qc; j++) memcpy(qb + (i * qc + j) * w, ab + (i * n + j) * w, es);
        la_orgqr(w == 2, m, qc, k, qb, qc, tau);
    }
    tn_device dev = tn_tensor_device(A);
    tn_status st = mode == 2 ? tn_la_new(A->dtype, dev, 1, &zero, NULL, &out[0])
                             : tn_la_new(A->dtype, dev, with_tail(A, 2, m, qc, sz), sz, q, &out[0]);
    if (st == TN_OK) st = tn_la_new(A->dtype, dev, with_tail(A, 2, rr, n, sz), sz, r, &out[1]);
    free(a), free(tau), free(q), free(r);
    if (st != TN_OK) release_all(2, out);
    return st;
}

/* aten::linalg_qr(Tensor A, str mode="reduced") -> (Q, R) */
tn_status tn_op_linalg_qr(const tn_value *args, tn_value *rets) {
    const char *mode = args[1].u.s.data;
    int md;
    if (!strcmp(mode, "reduced")) md = 0;
    else if (!strcmp(mode, "complete")) md = 1;
    else if (!strcmp(mode, "r")) md = 2;
    else
        return tn_error(TN_ERR_RUNTIME,
                        "qr received unrecognized mode '%s' but expected one of 'reduced' (default), 'r', or 'complete'",
                        mode);
    tn_tensor *out[2] = {0};
    TN_TRY(qr_impl(args[0].u.t, md, out));
    return set_rets(rets, 2, out);
}

/* aten::qr(Tensor self, bool some=True) -> (Q, R) */
tn_status tn_op_qr(const tn_value *args, tn_value *rets) {
    tn_tensor *out[2] = {0};
    TN_TRY(qr_impl(args[0].u.t, args[1].u.b ? 0 : 1, out));
    return set_rets(rets, 2, out);
}

/* x's batch dims (all but its matrix / vector dims) must be input's shape[:-2], in
 * upstream's words; the buffers are sized by input's batch. */
static tn_status batch_dims_match(const char *api, const char *name, const tn_tensor *x, const tn_tensor *input) {
    int nb = input->ndim - 2;
    bool same = true;
    for (int i = 0; i < nb; i++) same &= x->sizes[i] == input->sizes[i];
    if (same) return TN_OK;
    char b[256];
    return tn_error(TN_ERR_RUNTIME, "%s: Expected batch dimensions of %s to be equal to input.shape[:-2], but got %s", api, name,
                    tn_format_sizes(nb, x->sizes, b, sizeof b));
}

/* aten::linalg_householder_product(Tensor input, Tensor tau) -> Tensor (orgqr) */
tn_status tn_op_linalg_householder_product(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *T = args[1].u.t, *out;
    const char *api = "torch.linalg.householder_product";
    if (A->ndim < 2) return tn_error(TN_ERR_RUNTIME, "%s: input must have at least 2 dimensions.", api);
    if (T->ndim < 1) return tn_error(TN_ERR_RUNTIME, "%s: tau must have at least 1 dimension.", api);
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = T->sizes[T->ndim - 1];
    if (m < n)
        return tn_error(TN_ERR_RUNTIME, "%s: input.shape[-2] must be greater than or equal to input.shape[-1]", api);
    if (n < k)
        return tn_error(TN_ERR_RUNTIME, "%s: input.shape[-1] must be greater than or equal to tau.shape[-1]", api);
    if (T->ndim != A->ndim - 1)
        return tn_error(TN_ERR_RUNTIME, "%s: Expected tau to have one dimension less than input, but got tau.ndim equal to %d and input.ndim is equal to %d",
                        api, T->ndim, A->ndim);
    TN_TRY(batch_dims_match(api, "tau", T, A));
    if (A->dtype != T->dtype)
        return tn_error(TN_ERR_RUNTIME, "%s: tau dtype %s does not match input dtype %s", api,
                        tn_dtype_infos[T->dtype].c10_name, tn_dtype_infos[A->dtype].c10_name);
    TN_TRY(tn_la_need_float_kernel_or_complex("orgqr_cpu", A));
    int64_t batch = tn_la_batch(A->ndim, A->sizes), w = tn_la_w(A->dtype);
    double *a = tn_la_alloc(batch * m * n * w, sizeof(double)), *tau = tn_la_alloc(batch * k * w, sizeof(double));
    if (!a || !tau) { free(a), free(tau); return oom(); }
    tn_la_gather(A, a);
    tn_la_gather(T, tau);
    for (int64_t b = 0; b < batch && !tn_tensor_is_meta(A); b++)
        la_orgqr(w == 2, m, n, k, a + b * m * n * w, n, tau + b * k * w);
    tn_status st = tn_la_new(A->dtype, tn_tensor_device(A), A->ndim, A->sizes, a, &out);
    free(a), free(tau);
    TN_TRY(st);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}
/* aten::orgqr(Tensor self, Tensor input2) -> Tensor */
tn_status tn_op_orgqr(const tn_value *args, tn_value *rets) { return tn_op_linalg_householder_product(args, rets); }

/* aten::ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor */
tn_status tn_op_ormqr(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *T = args[1].u.t, *C = args[2].u.t, *out;
    bool left = args[3].u.b, trans = args[4].u.b;
    const char *api = "torch.ormqr";
    if (A->ndim < 2) return tn_error(TN_ERR_RUNTIME, "%s: input must have at least 2 dimensions.", api);
    if (C->ndim < 2) return tn_error(TN_ERR_RUNTIME, "%s: other must have at least 2 dimensions.", api);
    int64_t m = C->sizes[C->ndim - 2], n = C->sizes[C->ndim - 1], nq = left ? m : n;
    int64_t ar = A->sizes[A->ndim - 2], k = T->ndim ? T->sizes[T->ndim - 1] : 0;
    int64_t kmax = nq < A->sizes[A->ndim - 1] ? nq : A->sizes[A->ndim - 1];
    if (T->ndim != A->ndim - 1)
        return tn_error(TN_ERR_RUNTIME, "%s: Expected tau to have one dimension less than input, but got tau.ndim equal to %d and input.ndim is equal to %d",
                        api, T->ndim, A->ndim);
    if (k != kmax)
        return tn_error(TN_ERR_RUNTIME, "%s: tau.shape[-1] must be equal to min(other.shape[%d], input.shape[-1])", api,
                        left ? -2 : -1);
    if (ar != nq)
        return tn_error(TN_ERR_RUNTIME, "%s: input.shape[-2] must be equal to other.shape[%d]", api, left ? -2 : -1);
    if (C->ndim != A->ndim)
        return tn_error(TN_ERR_RUNTIME, "%s: input and other must have the same number of dimensions.", api);
    /* before, a tau or other of another batch overran the buffers sized by input's */
    TN_TRY(batch_dims_match(api, "tau", T, A));
    TN_TRY(batch_dims_match(api, "other", C, A));
    if (A->dtype != C->dtype || A->dtype != T->dtype)
        return tn_error(TN_ERR_RUNTIME, "%s: Expected input and other to have the same dtype", api);
    TN_TRY(tn_la_need_float_kernel_or_complex("ormqr_cpu", A));
    int64_t an = A->sizes[A->ndim - 1], batch = tn_la_batch(C->ndim, C->sizes), w = tn_la_w(A->dtype);
    double *a = tn_la_alloc(batch * ar * an * w, sizeof(double)), *tau = tn_la_alloc(batch * k * w, sizeof(double));
    double *c = tn_la_alloc(batch * m * n * w, sizeof(double)), *work = tn_la_alloc((m > n ? m : n) * w, sizeof(double));
    if (!a || !tau || !c || !work) { free(a), free(tau), free(c), free(work); return oom(); }
    tn_la_gather(A, a), tn_la_gather(T, tau), tn_la_gather(C, c);
    for (int64_t b = 0; b < batch && !tn_tensor_is_meta(C); b++) { /* transpose: the adjoint for complex, as upstream's */
        if (w == 2)
            tn_linalg_zormqr(left, trans, m, n, k, (const zdouble *)a + b * ar * an, an, (const zdouble *)tau + b * k,
                             (zdouble *)c + b * m * n, n, (zdouble *)work);
        else
            tn_linalg_ormqr(left, trans, m, n, k, a + b * ar * an, an, tau + b * k, c + b * m * n, n, work);
    }
    tn_status st = tn_la_new(C->dtype, tn_tensor_device(C), C->ndim, C->sizes, c, &out);
    free(a), free(tau), free(c), free(work);
    TN_TRY(st);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- symmetric eigenproblem ----------------------------------------------------------------- */

/* eigenvalues (and eigenvectors when out[1] is requested) of the triangle UPLO names */
static tn_status eigh_impl(const char *api, tn_tensor *A, const char *uplo, bool vectors, tn_tensor **out) {
    if (strlen(uplo) != 1 || (uplo[0] != 'L' && uplo[0] != 'U' && uplo[0] != 'l' && uplo[0] != 'u'))
        return tn_error(TN_ERR_RUNTIME, "Expected UPLO argument to be 'L' or 'U', but got %s", uplo);
    TN_TRY(tn_la_need_square(api, A, "A"));
    TN_TRY(tn_la_need_float_kernel_or_complex("linalg_eigh_cpu", A));
    bool lower = uplo[0] == 'L' || uplo[0] == 'l';
    int64_t n = A->sizes[A->ndim - 1], batch = tn_la_batch(A->ndim, A->sizes), sz[TN_MAX_DIMS], wd = tn_la_w(A->dtype);
    double *a = tn_la_alloc(batch * n * n * wd, sizeof(double)), *w = tn_la_alloc(batch * n, sizeof(double));
    double *v = tn_la_alloc((vectors ? batch * n * n : n * n) * wd, sizeof(double)), *work = tn_la_alloc(8 * n, sizeof(double));
    if (!a || !w || !v || !work) { free(a), free(w), free(v), free(work); return oom(); }
    tn_la_gather(A, a);
    tn_status st = TN_OK;
    bool single = A->dtype == TN_DTYPE_FLOAT32 || A->dtype == TN_DTYPE_COMPLEX64;
    for (int64_t b = 0; b < batch && !tn_tensor_is_meta(A); b++) {
        /* LAPACK's syevd / heevd steps, so that eigenvector signs (phases) are upstream's */
        double *vb = vectors ? v + b * n * n * wd : v;
        int info = wd == 2 ? tn_linalg_zheevd(n, (zdouble *)a + b * n * n, lower, single, w + b * n, (zdouble *)vb, work)
                           : tn_linalg_syevd(n, a + b * n * n, lower, single, w + b * n, vb, work);
        if (info != 0) { /* upstream's eigvalsh is its eigh: the message names linalg.eigh */
            char pb[48] = "";
            if (A->ndim > 2) snprintf(pb, sizeof pb, "(Batch element %lld): ", (long long)b);
            st = tn_error(TN_ERR_LINALG, "linalg.eigh: %sThe algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues (error code: %d).", pb, info);
            break;
        }
    }
    free(work);
    tn_dtype wdt = A->dtype == TN_DTYPE_COMPLEX64 ? TN_DTYPE_FLOAT32 : A->dtype == TN_DTYPE_COMPLEX128 ? TN_DTYPE_FLOAT64 : A->dtype;
    if (st == TN_OK) st = tn_la_new(wdt, tn_tensor_device(A), with_tail(A, 1, n, 0, sz), sz, w, &out[0]);
    if (st == TN_OK && vectors) {
        st = tn_la_new(A->dtype, tn_tensor_device(A), A->ndim, A->sizes, v, &out[1]);
        if (st != TN_OK) release_all(1, out);
    }
    free(a), free(w), free(v);
    return st;
}

/* aten::linalg_eigh(Tensor self, str UPLO="L") -> (eigenvalues, eigenvectors) */
tn_status tn_op_linalg_eigh(const tn_value *args, tn_value *rets) {
    tn_tensor *out[2] = {0};
    TN_TRY(eigh_impl("linalg.eigh", args[0].u.t, args[1].u.s.data, true, out));
    return set_rets(rets, 2, out);
}
/* aten::linalg_eigvalsh(Tensor self, str UPLO="L") -> Tensor */
tn_status tn_op_linalg_eigvalsh(const tn_value *args, tn_value *rets) {
    tn_tensor *out[2] = {0};
    TN_TRY(eigh_impl("linalg.eigvalsh", args[0].u.t, args[1].u.s.data, false, out));
    rets[0] = tn_value_tensor(out[0]);
    return TN_OK;
}

/* ---- SVD ------------------------------------------------------------------------------------- */

/* U, S, Vh of every matrix (full: U m×m, Vh n×n; else m×k, k×n); uv false: S only
 * (out[0], out[2] left NULL). */
static tn_status svd_impl(const char *api, tn_tensor *A, bool full, bool uv, tn_tensor **out) {
    TN_TRY(tn_la_need_matrix(api, A, "A"));
    TN_TRY(tn_la_need_float_or_complex(api, A));
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n, w = tn_la_w(A->dtype);
    bool tall = m >= n; /* Jacobi runs on the tall orientation: M = A or Aᴴ, M is p×q, p >= q */
    int64_t p = tall ? m : n, q = tall ? n : m;
    int64_t ucols = full ? m : k, vrows = full ? n : k, pc = full ? p : q;
    int64_t batch = tn_la_batch(A->ndim, A->sizes), sz[TN_MAX_DIMS];
    /* every buffer below (the per-matrix ones too, whatever the batch) */
    TN_TRY(tn_la_check_numel(batch > 1 ? batch : 1, m, n, w));
    if (uv) TN_TRY(tn_la_check_numel(batch > 1 ? batch : 1, m > n ? m : n, pc > vrows ? pc : vrows, w));
    double *a = tn_la_alloc(batch * m * n * w, sizeof(double)), *mt = tn_la_alloc(p * q * w, sizeof(double));
    double *s = tn_la_alloc(batch * k, sizeof(double)), *work = tn_la_alloc(q, sizeof(double));
    double *pu = uv ? tn_la_alloc(p * pc * w, sizeof(double)) : NULL, *qv = uv ? tn_la_alloc(q * q * w, sizeof(double)) : NULL;
    double *U = uv ? tn_la_alloc(batch * m * ucols * w, sizeof(double)) : NULL;
    double *V = uv ? tn_la_alloc(batch * vrows * n * w, sizeof(double)) : NULL;
    tn_status st = TN_OK;
    if (!a || !mt || !s || !work || (uv && (!pu || !qv || !U || !V))) st = oom();
    if (st == TN_OK) tn_la_gather(A, a);
    /* element (i, j) of a w-wide matrix with `cols` columns; `cj`: conjugated */
#define EL(base, i, j, cols) ((base) + ((i) * (cols) + (j)) * w)
#define PUT(dst, src, cj) ((dst)[0] = (src)[0], w == 2 ? (void)((dst)[1] = (cj) ? -(src)[1] : (src)[1]) : (void)0)
    for (int64_t b = 0; st == TN_OK && b < batch && !tn_tensor_is_meta(A); b++) {
        const double *ab = a + b * m * n * w;
        for (int64_t i = 0; i < p; i++)
            for (int64_t j = 0; j < q; j++) PUT(EL(mt, i, j, q), tall ? EL(ab, i, j, n) : EL(ab, j, i, n), !tall);
        int bad = w == 2 ? tn_linalg_zsvd(p, q, (zdouble *)mt, q, s + b * k, (zdouble *)pu, pc, (zdouble *)qv, work)
                         : tn_linalg_svd(p, q, mt, q, s + b * k, pu, pc, qv, work);
        if (bad != 0) {
            st = bad == 2 ? tn_error(TN_ERR_NO_MEMORY, "out of memory")
                          : tn_error(TN_ERR_LINALG, "%s: The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated singular values", api);
            break;
        }
        if (!uv) continue;
        /* M = P S Qᴴ with P p×pc, Qᴴ q×q. tall: U = P, Vh = Qᴴ (completed to n×n when full
         * is asked: q = n already). wide: A = Mᴴ = Q S Pᴴ, so U = Q (m×m = q×q), Vh = Pᴴ. */
        double *Ub = U + b * m * ucols * w, *Vb = V + b * vrows * n * w;
        if (tall) {
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < ucols; j++) PUT(EL(Ub, i, j, ucols), EL(pu, i, j, pc), false);
            for (int64_t i = 0; i < vrows; i++)
                for (int64_t j = 0; j < n; j++) PUT(EL(Vb, i, j, n), EL(qv, i, j, q), false);
        } else {
            for (int64_t i = 0; i < m; i++) /* Q = (Qᴴ)ᴴ */
                for (int64_t j = 0; j < ucols; j++) PUT(EL(Ub, i, j, ucols), EL(qv, j, i, q), true);
            for (int64_t i = 0; i < vrows; i++)
                for (int64_t j = 0; j < n; j++) PUT(EL(Vb, i, j, n), EL(pu, j, i, pc), true);
        }
    }
#undef EL
#undef PUT
    tn_device dev = tn_tensor_device(A);
    tn_dtype sdt = A->dtype == TN_DTYPE_COMPLEX64 ? TN_DTYPE_FLOAT32 : A->dtype == TN_DTYPE_COMPLEX128 ? TN_DTYPE_FLOAT64 : A->dtype;
    if (st == TN_OK) st = tn_la_new(sdt, dev, with_tail(A, 1, k, 0, sz), sz, s, &out[1]);
    if (st == TN_OK && uv) {
        st = tn_la_new(A->dtype, dev, with_tail(A, 2, m, ucols, sz), sz, U, &out[0]);
        if (st == TN_OK) st = tn_la_new(A->dtype, dev, with_tail(A, 2, vrows, n, sz), sz, V, &out[2]);
        if (st != TN_OK) release_all(3, out);
    }
    free(a), free(mt), free(s), free(work), free(pu), free(qv), free(U), free(V);
    return st;
}

static tn_status no_driver(const tn_value *v, const tn_tensor *A) {
    if (v->tag == TN_V_NONE || tn_tensor_numel(A) == 0) return TN_OK; /* upstream returns empty results first */
    return tn_error(TN_ERR_RUNTIME, "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
}

/* aten::linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (U, S, Vh) */
tn_status tn_op_linalg_svd(const tn_value *args, tn_value *rets) {
    TN_TRY(no_driver(&args[2], args[0].u.t));
    tn_tensor *out[3] = {0};
    TN_TRY(svd_impl("linalg.svd", args[0].u.t, args[1].u.b, true, out));
    return set_rets(rets, 3, out);
}
/* aten::_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True, *, str? driver=None) */
tn_status tn_op__linalg_svd(const tn_value *args, tn_value *rets) {
    TN_TRY(no_driver(&args[3], args[0].u.t));
    tn_tensor *A = args[0].u.t, *out[3] = {0};
    bool uv = args[2].u.b;
    TN_TRY(svd_impl("linalg.svd", A, args[1].u.b, uv, out));
    if (!uv) { /* U and Vh are empty tensors, as upstream returns them */
        int64_t zero = 0;
        tn_status st = tn_la_new(A->dtype, tn_tensor_device(A), 1, &zero, NULL, &out[0]);
        if (st == TN_OK) st = tn_la_new(A->dtype, tn_tensor_device(A), 1, &zero, NULL, &out[2]);
        if (st != TN_OK) { release_all(3, out); return st; }
    }
    return set_rets(rets, 3, out);
}
/* aten::linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor */
tn_status tn_op_linalg_svdvals(const tn_value *args, tn_value *rets) {
    TN_TRY(no_driver(&args[1], args[0].u.t));
    tn_tensor *out[3] = {0};
    TN_TRY(svd_impl("linalg.svd", args[0].u.t, false, false, out));
    rets[0] = tn_value_tensor(out[1]);
    return TN_OK;
}

/* aten::svd(Tensor self, bool some=True, bool compute_uv=True) -> (U, S, V): V, not Vh;
 * without compute_uv, U (m×m) and V (n×n) are zeros. */
tn_status tn_op_svd(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *out[3] = {0};
    bool some = args[1].u.b, uv = args[2].u.b;
    TN_TRY(svd_impl("linalg.svd", A, !some && uv, uv, out));
    tn_status st = TN_OK;
    if (uv) { /* V = Vhᴴ */
        tn_value ta[3] = {tn_value_tensor(out[2]), tn_value_int(-2), tn_value_int(-1)};
        tn_tensor *vt = out[2], *v;
        st = tn_dispatch_one(TN_OP_transpose_int, ta, &v);
        if (st == TN_OK && tn_dtype_is_complex(vt->dtype)) {
            tn_value ca[1] = {tn_value_tensor(v)};
            tn_tensor *vc;
            st = tn_dispatch_one(TN_OP_conj_physical, ca, &vc);
            tn_tensor_release(v);
            v = st == TN_OK ? vc : NULL;
        }
        if (st == TN_OK) {
            tn_tensor *c;
            st = tn_tensor_contiguous(v, &c);
            tn_tensor_release(v);
            if (st == TN_OK) tn_tensor_release(vt), out[2] = c;
        }
    } else {
        int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], sz[TN_MAX_DIMS];
        st = tn_tensor_zeros(with_tail(A, 2, m, m, sz), sz, A->dtype, tn_tensor_device(A), &out[0]);
        if (st == TN_OK) st = tn_tensor_zeros(with_tail(A, 2, n, n, sz), sz, A->dtype, tn_tensor_device(A), &out[2]);
    }
    if (st != TN_OK) { release_all(3, out); return st; }
    return set_rets(rets, 3, out);
}
