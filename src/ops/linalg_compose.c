/* linalg_compose.c — the linear-algebra operators upstream builds on the decompositions:
 * pinv/pinverse, matrix_rank, lstsq (from the SVD or the symmetric eigenproblem, in
 * float64), matrix_exp, and the door compositions matrix_norm, norm, cond, matrix_power,
 * multi_dot, tensorinv, tensorsolve, vander, cross, vecdot. Checks and messages as
 * upstream's. Complex inputs of pinv, matrix_rank and lstsq run on complex128 scratch of
 * (re, im) pairs (w = 2 doubles an element) with the arithmetic below in complex128 for
 * both: with zero imaginary parts its real part is the real computation's, operation for
 * operation (products and sums only; the divisions are by real singular values). */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/complex_math.h"
#include "kernels/linalg_decomp.h"
#include "ops/dispatch.h"
#include "ops/linalg_decomp_internal.h"
#include "ops/shape.h"
#include "ops/scalar_convert.h"

static tn_status oom(void) { return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
static tn_value none(void) { return (tn_value){.tag = TN_V_NONE}; }
static tn_value dtype_v(tn_dtype d) {
    tn_value v = {.tag = TN_V_DTYPE};
    v.u.dtype = d;
    return v;
}

/* t converted to dtype (a new reference; t itself when it already has it) */
static tn_status to_dtype(tn_tensor *t, tn_dtype d, tn_tensor **out) {
    if (t->dtype == d) { tn_tensor_retain(t); *out = t; return TN_OK; }
    tn_value a[7] = {tn_value_tensor(t), dtype_v(d), none(), none(), none(), tn_value_bool(false), none()};
    return tn_dispatch_one(TN_OP__to_copy, a, out);
}

/* ---- element access over real or complex scratch (w doubles an element) ------------------------ */

typedef double _Complex zdouble;
static inline zdouble zget(const double *p, int64_t i, int64_t w) { return w == 2 ? CMPLX(p[2 * i], p[2 * i + 1]) : p[i]; }
static inline void zput(double *p, int64_t i, int64_t w, zdouble v) {
    if (w == 2) p[2 * i] = creal(v), p[2 * i + 1] = cimag(v);
    else p[i] = creal(v);
}
/* the conjugate, a no-op on real scratch */
static inline zdouble zconj(zdouble v, int64_t w) { return w == 2 ? conj(v) : v; }

/* ---- thin SVD of one matrix, either orientation ----------------------------------------------- */

typedef struct svd_ws { double *mt, *pu, *qv, *work; int64_t w; } svd_ws;

static tn_status svd_ws_init(svd_ws *w, int64_t m, int64_t n, int64_t wd) {
    int64_t p = m > n ? m : n, q = m > n ? n : m;
    w->w = wd;
    w->mt = tn_la_alloc(p * q * wd, sizeof(double)), w->pu = tn_la_alloc(p * q * wd, sizeof(double));
    w->qv = tn_la_alloc(q * q * wd, sizeof(double)), w->work = tn_la_alloc(q, sizeof(double));
    return w->mt && w->pu && w->qv && w->work ? TN_OK : oom();
}
static void svd_ws_free(svd_ws *w) { free(w->mt), free(w->pu), free(w->qv), free(w->work); }

/* A (m×n) = U diag(s) Vh with U m×k, Vh k×n, k = min(m, n) (w-wide elements, s real).
 * Returns the kernel's status. */
static int svd_thin(svd_ws *w, int64_t m, int64_t n, const double *a, double *s, double *u, double *vt) {
    bool tall = m >= n;
    int64_t p = tall ? m : n, q = tall ? n : m, k = q, wd = w->w;
    for (int64_t i = 0; i < p; i++)
        for (int64_t j = 0; j < q; j++) zput(w->mt, i * q + j, wd, tall ? zget(a, i * n + j, wd) : zconj(zget(a, j * n + i, wd), wd));
    int st = wd == 2 ? tn_linalg_zsvd(p, q, (zdouble *)w->mt, q, s, (zdouble *)w->pu, q, (zdouble *)w->qv, w->work)
                     : tn_linalg_svd(p, q, w->mt, q, s, w->pu, q, w->qv, w->work);
    if (tall) {
        memcpy(u, w->pu, (size_t)(m * k * wd) * sizeof(double));
        memcpy(vt, w->qv, (size_t)(k * n * wd) * sizeof(double));
    } else { /* Aᴴ = P S Qᴴ: U = Q, Vh = Pᴴ */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < k; j++) zput(u, i * k + j, wd, zconj(zget(w->qv, j * q + i, wd), wd));
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < n; j++) zput(vt, i * n + j, wd, zconj(zget(w->pu, j * q + i, wd), wd));
    }
    return st;
}

/* ---- pinv and matrix_rank ---------------------------------------------------------------------- */

/* Tolerances per batch element: atol/rtol each absent (NULL, has_x false), a double, or a
 * tensor broadcast over the batch shape. */
typedef struct tol_spec {
    tn_tensor *atol_t, *rtol_t;
    bool has_atol, has_rtol;
    double atol, rtol;
} tol_spec;

static tn_status tol_values(const tol_spec *ts, tn_tensor *A, int64_t batch, double **atol, double **rtol) {
    int nb = A->ndim - 2;
    *atol = tn_la_alloc(batch, sizeof(double)), *rtol = tn_la_alloc(batch, sizeof(double));
    if (!*atol || !*rtol) return oom();
    double *ga = NULL, *gr = NULL;
    tn_tensor *c;
    if (ts->atol_t) {
        TN_TRY(to_dtype(ts->atol_t, TN_DTYPE_FLOAT64, &c));
        tn_status st = tn_la_gather_expanded(c, nb, A->sizes, &ga);
        tn_tensor_release(c);
        TN_TRY(st);
    }
    if (ts->rtol_t) {
        TN_TRY(to_dtype(ts->rtol_t, TN_DTYPE_FLOAT64, &c));
        tn_status st = tn_la_gather_expanded(c, nb, A->sizes, &gr);
        tn_tensor_release(c);
        if (st != TN_OK) { free(ga); return st; }
    }
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    double eps = A->dtype == TN_DTYPE_FLOAT32 || A->dtype == TN_DTYPE_COMPLEX64 ? (double)FLT_EPSILON : DBL_EPSILON;
    double deflt = eps * (double)(m > n ? m : n);
    for (int64_t b = 0; b < batch; b++) {
        double at = ga ? ga[b] : ts->has_atol ? ts->atol : 0;
        double rt;
        if (gr) rt = gr[b];
        else if (ts->has_rtol) rt = ts->rtol;
        else if (ts->has_atol || ga) rt = at > 0 ? 0 : deflt; /* an absent rtol is 0 once atol > 0 */
        else rt = deflt;
        (*atol)[b] = at, (*rtol)[b] = rt;
    }
    free(ga), free(gr);
    return TN_OK;
}

/* pinv (want_pinv) or rank of every matrix of A. */
static tn_status spectral_op(const char *api, tn_tensor *A, const tol_spec *ts, bool hermitian, bool want_pinv,
                             tn_tensor **out) {
    TN_TRY(tn_la_need_matrix(api, A, "A"));
    if (!tn_dtype_is_complex(A->dtype) || A->dtype == TN_DTYPE_COMPLEX32) TN_TRY(tn_la_need_float_lp(api, A));
    if (hermitian) TN_TRY(tn_la_need_square("linalg.eigh", A, "A")); /* upstream reaches eigh first */
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    int64_t batch = tn_la_batch(A->ndim, A->sizes), sz[TN_MAX_DIMS], wd = tn_la_w(A->dtype);
    TN_TRY(tn_la_check_numel(batch, m, n, wd)); /* a batch broadcast from a huge expanded tolerance */
    double *atol = NULL, *rtol = NULL;
    tn_status st = tol_values(ts, A, batch, &atol, &rtol);
    double *a = tn_la_alloc(batch * m * n * wd, sizeof(double)), *res = tn_la_alloc(want_pinv ? batch * n * m * wd : batch, sizeof(double));
    double *s = tn_la_alloc(k, sizeof(double)), *u = tn_la_alloc(m * (hermitian ? n : k) * wd, sizeof(double)),
           *vt = tn_la_alloc(k * n * wd, sizeof(double)), *ework = tn_la_alloc(8 * n, sizeof(double));
    svd_ws w = {0};
    if (st == TN_OK && (!a || !res || !s || !u || !vt || !ework)) st = oom();
    if (st == TN_OK && !hermitian) st = svd_ws_init(&w, m, n, wd);
    if (st == TN_OK) tn_la_gather(A, a);
    for (int64_t b = 0; st == TN_OK && b < batch && !tn_tensor_is_meta(A); b++) {
        double *ab = a + b * m * n * wd;
        int bad;
        bool single = A->dtype == TN_DTYPE_FLOAT32 || A->dtype == TN_DTYPE_COMPLEX64;
        if (hermitian && wd == 2) { /* A = V diag(w) Vᴴ from the lower triangle, as upstream's eigh */
            bad = tn_linalg_zheevd(n, (zdouble *)ab, true, single, s, (zdouble *)u, ework);
        } else if (hermitian) { /* A = V diag(w) Vᵀ from the lower triangle, as upstream's eigh */
            bad = tn_linalg_syevd(n, ab, true, single, s, u, ework);
        } else {
            bad = svd_thin(&w, m, n, ab, s, u, vt);
        }
        if (bad && hermitian) { /* upstream's error is its eigh's */
            char pb[48] = "";
            if (A->ndim > 2) snprintf(pb, sizeof pb, "(Batch element %lld): ", (long long)b);
            st = tn_error(TN_ERR_LINALG, "linalg.eigh: %sThe algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated eigenvalues (error code: %d).", pb, bad);
            break;
        }
        if (bad) {
            st = bad == 2 ? oom() : tn_error(TN_ERR_LINALG, "%s: The algorithm failed to converge because the input matrix is ill-conditioned", api);
            break;
        }
        double smax = 0;
        for (int64_t i = 0; i < k; i++) smax = fmax(smax, fabs(s[i]));
        /* upstream's at::maximum propagates a NaN tolerance: then no singular value is kept */
        double rs = rtol[b] * smax, tol = isnan(atol[b]) || isnan(rs) ? NAN : fmax(atol[b], rs);
        if (!want_pinv) {
            int64_t r = 0;
            for (int64_t i = 0; i < k; i++) r += fabs(s[i]) > tol;
            res[b] = (double)r;
            continue;
        }
        double *pb = res + b * n * m * wd; /* n×m */
        if (hermitian) { /* V diag(1/w) Vᴴ over |w| > tol */
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) {
                    zdouble acc = 0;
                    for (int64_t c = 0; c < n; c++)
                        if (fabs(s[c]) > tol) acc += cmul_c128(zget(u, i * n + c, wd), zconj(zget(u, j * n + c, wd), wd)) / s[c];
                    zput(pb, i * n + j, wd, acc);
                }
        } else { /* V diag(1/s) Uᴴ over s > tol */
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < m; j++) {
                    zdouble acc = 0;
                    for (int64_t c = 0; c < k; c++)
                        if (s[c] > tol)
                            acc += cmul_c128(zconj(zget(vt, c * n + i, wd), wd), zconj(zget(u, j * k + c, wd), wd)) / s[c];
                    zput(pb, i * m + j, wd, acc);
                }
        }
    }
    if (st == TN_OK) {
        int nb = A->ndim - 2;
        memcpy(sz, A->sizes, sizeof(int64_t) * nb);
        if (want_pinv) {
            sz[nb] = n, sz[nb + 1] = m;
            st = tn_la_new(A->dtype, tn_tensor_device(A), nb + 2, sz, res, out);
        } else {
            st = tn_la_new(TN_DTYPE_INT64, tn_tensor_device(A), nb, sz, res, out);
        }
    }
    free(atol), free(rtol), free(a), free(res), free(s), free(u), free(vt), free(ework);
    svd_ws_free(&w);
    return st;
}

/* spectral_op over the batch shape broadcast from A's batch dims and the tolerance tensors'
 * shapes (a batch of tolerances applies to one matrix as upstream's broadcasting does) */
static tn_status spectral_bcast(const char *api, tn_tensor *A, const tol_spec *ts, bool hermitian, bool want_pinv,
                                tn_tensor **out) {
    /* upstream's pinv and matrix_rank answer an empty input ([batch, n, m] empty, or a batch
     * of zero ranks) after checking A and before reading the tolerances at all; that
     * answer is the SVD's, so hermitian does not ask for square matrices there */
    if (A->ndim >= 2 && tn_tensor_numel(A) == 0) {
        tol_spec none = {0};
        return spectral_op(api, A, &none, false, want_pinv, out);
    }
    if (A->ndim < 2 || (!ts->atol_t && !ts->rtol_t)) return spectral_op(api, A, ts, hermitian, want_pinv, out);
    int nd = A->ndim - 2;
    int64_t bs[TN_MAX_DIMS];
    memcpy(bs, A->sizes, sizeof(int64_t) * nd);
    tn_tensor *tols[2] = {ts->atol_t, ts->rtol_t};
    for (int i = 0; i < 2; i++) {
        if (!tols[i]) continue;
        int64_t nb[TN_MAX_DIMS];
        int nn;
        TN_TRY(tn_shape_broadcast(nd, bs, tols[i]->ndim, tols[i]->sizes, &nn, nb));
        if (nn + 2 > TN_MAX_DIMS) return tn_error(TN_ERR_RUNTIME, "%s: too many dimensions", api);
        memcpy(bs, nb, sizeof(int64_t) * nn), nd = nn;
    }
    if (nd == A->ndim - 2) return spectral_op(api, A, ts, hermitian, want_pinv, out);
    bs[nd] = A->sizes[A->ndim - 2], bs[nd + 1] = A->sizes[A->ndim - 1];
    tn_tensor *e;
    TN_TRY(tn_shape_expand_view(A, nd + 2, bs, &e));
    tn_status st = spectral_bcast(api, e, ts, hermitian, want_pinv, out);
    tn_tensor_release(e);
    return st;
}

static tol_spec tol_from_values(const tn_value *atol, const tn_value *rtol) {
    tol_spec t = {0};
    if (atol->tag == TN_V_TENSOR) t.atol_t = atol->u.t;
    else if (atol->tag == TN_V_DOUBLE) t.has_atol = true, t.atol = atol->u.d;
    if (rtol->tag == TN_V_TENSOR) t.rtol_t = rtol->u.t;
    else if (rtol->tag == TN_V_DOUBLE) t.has_rtol = true, t.rtol = rtol->u.d;
    return t;
}

static tn_status ret1(tn_status st, tn_tensor *const *t, tn_value *rets) {
    if (st == TN_OK) rets[0] = tn_value_tensor(*t);
    return st;
}

/* upstream's pinv and matrix_rank read their tolerance tensors as real numbers, checked
 * before anything else (an empty input too); pinv's rcond overloads name the rtol "rcond" */
static tn_status tols_real(const char *api, const tol_spec *t, const char *rtol_name) {
    const tn_tensor *tt[2] = {t->atol_t, t->rtol_t};
    for (int i = 0; i < 2; i++)
        if (tt[i] && tn_dtype_is_complex(tt[i]->dtype))
            return tn_error(TN_ERR_RUNTIME, "torch.%s: %s tensor of complex type is not supported. Got %s", api,
                            i ? rtol_name : "atol", tn_dtype_infos[tt[i]->dtype].c10_name);
    return TN_OK;
}

/* aten::linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False)
 * aten::linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) */
tn_status tn_op_linalg_pinv_atol_rtol_tensor(const tn_value *args, tn_value *rets) {
    tol_spec t = tol_from_values(&args[1], &args[2]);
    TN_TRY(tols_real("linalg.pinv", &t, "rtol"));
    tn_tensor *out = NULL;
    tn_status st = spectral_bcast("linalg.pinv", args[0].u.t, &t, args[3].u.b, true, &out);
    return ret1(st, &out, rets);
}
tn_status tn_op_linalg_pinv_atol_rtol_float(const tn_value *args, tn_value *rets) {
    return tn_op_linalg_pinv_atol_rtol_tensor(args, rets);
}
/* aten::linalg_pinv(Tensor self, float rcond, bool hermitian=False): rtol = rcond, atol = 0
 * aten::linalg_pinv.rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False) */
tn_status tn_op_linalg_pinv(const tn_value *args, tn_value *rets) {
    tn_value z = tn_value_double(0);
    tol_spec t = tol_from_values(&z, &args[1]);
    t.has_atol = false; /* atol 0 given: rtol is rcond as given */
    TN_TRY(tols_real("linalg.pinv", &t, "rcond"));
    tn_tensor *out = NULL;
    tn_status st = spectral_bcast("linalg.pinv", args[0].u.t, &t, args[2].u.b, true, &out);
    return ret1(st, &out, rets);
}
tn_status tn_op_linalg_pinv_rcond_tensor(const tn_value *args, tn_value *rets) { return tn_op_linalg_pinv(args, rets); }
/* aten::pinverse(Tensor self, float rcond=1e-15) */
tn_status tn_op_pinverse(const tn_value *args, tn_value *rets) {
    tn_value a[3] = {args[0], args[1], tn_value_bool(false)};
    return tn_op_linalg_pinv(a, rets);
}

/* aten::linalg_matrix_rank.atol_rtol_tensor / .atol_rtol_float (input, *, atol, rtol, hermitian) */
tn_status tn_op_linalg_matrix_rank_atol_rtol_tensor(const tn_value *args, tn_value *rets) {
    tol_spec t = tol_from_values(&args[1], &args[2]);
    TN_TRY(tols_real("linalg.matrix_rank", &t, "rtol"));
    tn_tensor *out = NULL;
    tn_status st = spectral_bcast("linalg.matrix_rank", args[0].u.t, &t, args[3].u.b, false, &out);
    return ret1(st, &out, rets);
}
tn_status tn_op_linalg_matrix_rank_atol_rtol_float(const tn_value *args, tn_value *rets) {
    return tn_op_linalg_matrix_rank_atol_rtol_tensor(args, rets);
}
/* aten::linalg_matrix_rank(Tensor self, float tol, bool hermitian=False): atol = tol, rtol = 0
 * aten::linalg_matrix_rank.tol_tensor(Tensor input, Tensor tol, bool hermitian=False) */
tn_status tn_op_linalg_matrix_rank(const tn_value *args, tn_value *rets) {
    tn_value z = tn_value_double(0);
    tol_spec t = tol_from_values(&args[1], &z);
    TN_TRY(tols_real("linalg.matrix_rank", &t, "rtol"));
    tn_tensor *out = NULL;
    tn_status st = spectral_bcast("linalg.matrix_rank", args[0].u.t, &t, args[2].u.b, false, &out);
    return ret1(st, &out, rets);
}
tn_status tn_op_linalg_matrix_rank_tol_tensor(const tn_value *args, tn_value *rets) {
    return tn_op_linalg_matrix_rank(args, rets);
}

/* ---- lstsq ---------------------------------------------------------------------------------------- */

/* gels / gelsy of one real m×n matrix by Householder QR (of A when m >= n, of Aᵀ for the
 * minimum-norm solution otherwise), when the QR proves the SVD route would give the same
 * answer: gels needs R nonsingular (the SVD route drops only exact zeros), gelsy needs
 * cond₂(A) < 1/rcond, certified by an upper bound, σ_max² <= ‖RᵀR‖_∞ (a symmetric matrix's
 * spectral radius under any induced norm) and 1/σ_min <= ‖R⁻¹‖_F; then gelsy's rank is full
 * (its incremental estimate of each leading block's condition is at most cond₂(A)) and the
 * solution the QR one. x: n × nr; res (m > n): the squared norms of Qᵀb's last m - n rows,
 * which are gels' residuals. Returns false, nothing written, when not certified. */
static bool lstsq_qr(bool gelsy, int64_t m, int64_t n, const double *a, const double *b, int64_t nr, double rcond,
                     double *x, double *res) {
    bool tall = m >= n;
    int64_t p = tall ? m : n, k = tall ? n : m, wk = (p > nr ? p : nr);
    double *qa = malloc(sizeof(double) * (size_t)(p * k)), *tau = malloc(sizeof(double) * (size_t)k);
    double *r = malloc(sizeof(double) * (size_t)(k * k)), *ri = calloc((size_t)(k * k), sizeof(double));
    double *y = malloc(sizeof(double) * (size_t)(p * nr)), *work = malloc(sizeof(double) * (size_t)wk);
    bool ok = qa && tau && r && ri && y && work;
    if (ok) {
        for (int64_t i = 0; i < p; i++) /* A, or Aᵀ */
            for (int64_t j = 0; j < k; j++) qa[i * k + j] = tall ? a[i * n + j] : a[j * n + i];
        tn_linalg_geqrf(p, k, qa, k, tau);
        for (int64_t i = 0; i < k; i++) {
            for (int64_t j = 0; j < k; j++) r[i * k + j] = j >= i ? qa[i * k + j] : 0;
            ok &= r[i * k + i] != 0 && isfinite(r[i * k + i]);
            ri[i * k + i] = 1;
        }
    }
    if (ok) {
        tn_linalg_trsm(k, k, r, k, 1, true, false, ri, k); /* R⁻¹ */
        double f2 = 0;
        for (int64_t i = 0; i < k * k; i++) f2 += ri[i] * ri[i];
        ok = isfinite(f2);
        if (ok && gelsy) {
            tn_linalg_gemm(false, k, k, k, 1.0, r, 1, k, r, k, 1, 0.0, ri, k, 1); /* RᵀR */
            double g = 0;
            for (int64_t i = 0; i < k; i++) {
                double row = 0;
                for (int64_t j = 0; j < k; j++) row += fabs(ri[i * k + j]);
                g = row > g ? row : g;
            }
            ok = sqrt(g) * sqrt(f2) * rcond < 0.5; /* and not nan */
        }
    }
    if (ok && tall) { /* x = R⁻¹ (Qᵀb)[:n] */
        memcpy(y, b, sizeof(double) * (size_t)(m * nr));
        tn_linalg_ormqr(true, true, m, nr, n, qa, n, tau, y, nr, work);
        for (int64_t j = 0; j < nr && res; j++) {
            double acc = 0;
            for (int64_t i = n; i < m; i++) acc += y[i * nr + j] * y[i * nr + j];
            res[j] = acc;
        }
        tn_linalg_trsm(n, nr, r, n, 1, true, false, y, nr);
        memcpy(x, y, sizeof(double) * (size_t)(n * nr));
    } else if (ok) { /* A = Rᵀ Qᵀ: x = Q [R⁻ᵀ b; 0] */
        memset(y, 0, sizeof(double) * (size_t)(n * nr));
        memcpy(y, b, sizeof(double) * (size_t)(m * nr));
        tn_linalg_trsm(m, nr, r, 1, m, false, false, y, nr);
        tn_linalg_ormqr(true, false, n, nr, m, qa, m, tau, y, nr, work);
        memcpy(x, y, sizeof(double) * (size_t)(n * nr));
    }
    free(qa), free(tau), free(r), free(ri), free(y), free(work);
    return ok;
}

/* aten::linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None)
 *   -> (solution, residuals, rank, singular_values)
 * The minimum-norm least-squares solution from the SVD (what gelsd/gelss compute, and what
 * gels/gelsy give for the full-rank problems they are meant for); gels and gelsy of a real
 * matrix by QR instead wherever lstsq_qr certifies the two agree (most calls: 1,000x faster
 * at 256 x 256); which of residuals, rank and singular values are filled depends on the
 * driver, as upstream's. */
tn_status tn_op_linalg_lstsq(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *B = args[1].u.t, *out[4] = {0};
    const char *drv = args[3].tag == TN_V_STRING ? args[3].u.s.data : "gelsy";
    int d; /* 0 gels, 1 gelsy, 2 gelsd, 3 gelss */
    if (!strcmp(drv, "gels")) d = 0;
    else if (!strcmp(drv, "gelsy")) d = 1;
    else if (!strcmp(drv, "gelsd")) d = 2;
    else if (!strcmp(drv, "gelss")) d = 3;
    else
        return tn_error(TN_ERR_RUNTIME, "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
    TN_TRY(tn_la_need_matrix("torch.linalg.lstsq", A, "A"));
    if (A->dtype != B->dtype)
        return tn_error(TN_ERR_RUNTIME, "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype %s and other's dtype %s",
                        tn_dtype_infos[A->dtype].c10_name, tn_dtype_infos[B->dtype].c10_name);
    if (!tn_dtype_is_complex(A->dtype) || A->dtype == TN_DTYPE_COMPLEX32) TN_TRY(tn_la_need_float_lp("torch.linalg.lstsq", A));
    bool vec = B->ndim == A->ndim - 1;
    if (!vec && B->ndim < 2)
        return tn_error(TN_ERR_RUNTIME, "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1");
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    int64_t br = vec ? B->sizes[B->ndim - 1] : B->sizes[B->ndim - 2], nr = vec ? 1 : B->sizes[B->ndim - 1];
    if (br != m)
        return tn_error(TN_ERR_RUNTIME, "torch.linalg.lstsq: input.size(-2) should match other.size(-%d)", vec ? 1 : 2);
    int nd;
    int64_t bs[TN_MAX_DIMS], asz[TN_MAX_DIMS], bsz[TN_MAX_DIMS], sz[TN_MAX_DIMS];
    TN_TRY(tn_shape_broadcast(A->ndim - 2, A->sizes, B->ndim - (vec ? 1 : 2), B->sizes, &nd, bs));
    int64_t batch = 1;
    for (int i = 0; i < nd; i++) batch *= bs[i];
    memcpy(asz, bs, sizeof(int64_t) * nd), memcpy(bsz, bs, sizeof(int64_t) * nd), memcpy(sz, bs, sizeof(int64_t) * nd);
    asz[nd] = m, asz[nd + 1] = n, bsz[nd] = m, bsz[nd + 1] = nr;
    double eps = A->dtype == TN_DTYPE_FLOAT32 || A->dtype == TN_DTYPE_COMPLEX64 ? (double)FLT_EPSILON : DBL_EPSILON;
    double rcond = args[2].tag == TN_V_DOUBLE ? args[2].u.d : eps * (double)(m > n ? m : n);
    int64_t wd = tn_la_w(A->dtype);
    tn_dtype rdt = A->dtype == TN_DTYPE_COMPLEX64 ? TN_DTYPE_FLOAT32 : A->dtype == TN_DTYPE_COMPLEX128 ? TN_DTYPE_FLOAT64 : A->dtype;
    double *a = NULL, *b = NULL;
    double *x = tn_la_alloc(batch * n * nr * wd, sizeof(double)), *res = tn_la_alloc(batch * nr, sizeof(double));
    double *sv = tn_la_alloc(batch * k, sizeof(double)), *rank = tn_la_alloc(batch, sizeof(double));
    double *u = tn_la_alloc(m * k * wd, sizeof(double)), *vt = tn_la_alloc(k * n * wd, sizeof(double)),
           *y = tn_la_alloc(k * nr * wd, sizeof(double));
    svd_ws w = {0};
    tn_status st = x && res && sv && rank && u && vt && y ? svd_ws_init(&w, m, n, wd) : oom();
    if (st == TN_OK) st = tn_la_gather_expanded(A, nd + 2, asz, &a);
    if (st == TN_OK) {
        if (vec) {
            int64_t vs[TN_MAX_DIMS];
            memcpy(vs, bs, sizeof(int64_t) * nd);
            vs[nd] = m;
            st = tn_la_gather_expanded(B, nd + 1, vs, &b);
        } else {
            st = tn_la_gather_expanded(B, nd + 2, bsz, &b);
        }
    }
    bool full_rank = true;
    for (int64_t i = 0; st == TN_OK && i < batch && !tn_tensor_is_meta(A); i++) {
        const double *ai = a + i * m * n * wd, *bi = b + i * m * nr * wd;
        double *s = sv + i * k;
        if (wd == 1 && d <= 1 && k > 0 && lstsq_qr(d == 1, m, n, ai, bi, nr, rcond, x + i * n * nr, res + i * nr)) {
            rank[i] = (double)k;
            if (k < n) full_rank = false;
            continue;
        }
        int bad = svd_thin(&w, m, n, ai, s, u, vt);
        if (bad) {
            st = bad == 2 ? oom() : tn_error(TN_ERR_LINALG, "torch.linalg.lstsq: The algorithm failed to converge");
            break;
        }
        double tol = d == 0 ? 0 : rcond * (k ? s[0] : 0);
        int64_t r = 0;
        for (int64_t c = 0; c < k; c++) { /* y = diag(1/s) Uᴴ b over s > tol */
            bool keep = d == 0 ? s[c] != 0 : s[c] > tol;
            r += keep;
            for (int64_t j = 0; j < nr; j++) {
                zdouble acc = 0;
                for (int64_t q = 0; q < m && keep; q++) acc += cmul_c128(zconj(zget(u, q * k + c, wd), wd), zget(bi, q * nr + j, wd));
                zput(y, c * nr + j, wd, keep ? acc / s[c] : 0);
            }
        }
        rank[i] = (double)r;
        if (r < n) full_rank = false;
        double *xi = x + i * n * nr * wd;
        for (int64_t q = 0; q < n; q++) /* x = V y */
            for (int64_t j = 0; j < nr; j++) {
                zdouble acc = 0;
                for (int64_t c = 0; c < k; c++) acc += cmul_c128(zconj(zget(vt, c * n + q, wd), wd), zget(y, c * nr + j, wd));
                zput(xi, q * nr + j, wd, acc);
            }
        for (int64_t j = 0; j < nr; j++) { /* squared residual norms of every column */
            double acc = 0;
            for (int64_t q = 0; q < m; q++) {
                zdouble rr = -zget(bi, q * nr + j, wd);
                for (int64_t c = 0; c < n; c++) rr += cmul_c128(zget(ai, q * n + c, wd), zget(xi, c * nr + j, wd));
                acc += creal(rr) * creal(rr) + cimag(rr) * cimag(rr);
            }
            res[i * nr + j] = acc;
        }
    }
    tn_device dev = tn_tensor_device(A);
    int64_t zero = 0;
    bool want_res = m > n && d != 1 && full_rank;
    if (st == TN_OK) {
        sz[nd] = n, sz[nd + 1] = nr;
        st = tn_la_new(A->dtype, dev, vec ? nd + 1 : nd + 2, sz, x, &out[0]);
    }
    if (st == TN_OK) {
        sz[nd] = nr;
        st = want_res ? tn_la_new(rdt, dev, vec ? nd : nd + 1, sz, res, &out[1]) : tn_la_new(rdt, dev, 1, &zero, NULL, &out[1]);
    }
    if (st == TN_OK) st = d == 0 ? tn_la_new(TN_DTYPE_INT64, dev, 1, &zero, NULL, &out[2]) : tn_la_new(TN_DTYPE_INT64, dev, nd, sz, rank, &out[2]);
    if (st == TN_OK) {
        sz[nd] = k;
        st = d >= 2 ? tn_la_new(rdt, dev, nd + 1, sz, sv, &out[3]) : tn_la_new(rdt, dev, 1, &zero, NULL, &out[3]);
    }
    free(a), free(b), free(x), free(res), free(sv), free(rank), free(u), free(vt), free(y);
    svd_ws_free(&w);
    if (st != TN_OK) {
        for (int i = 0; i < 4; i++)
            if (out[i]) tn_tensor_release(out[i]);
        return st;
    }
    for (int i = 0; i < 4; i++) rets[i] = tn_value_tensor(out[i]);
    return TN_OK;
}

/* ---- matrix_exp ---------------------------------------------------------------------------------- */

/* aten::linalg_matrix_exp(Tensor self) ; aten::matrix_exp(Tensor self). bfloat16/float16
 * are computed in float64 from their float32 values and rounded once. */
tn_status tn_op_linalg_matrix_exp(const tn_value *args, tn_value *rets) {
    tn_tensor *A0 = args[0].u.t, *A = NULL, *out = NULL;
    TN_TRY(tn_la_need_square("linalg.matrix_exp", A0, "A"));
    bool low = A0->dtype == TN_DTYPE_BFLOAT16 || A0->dtype == TN_DTYPE_FLOAT16;
    if (!low) TN_TRY(tn_la_need_float_or_complex("linalg.matrix_exp", A0));
    TN_TRY(to_dtype(A0, low ? TN_DTYPE_FLOAT32 : A0->dtype, &A));
    int64_t n = A->sizes[A->ndim - 1], batch = tn_la_batch(A->ndim, A->sizes), wd = tn_la_w(A->dtype);
    double *a = tn_la_alloc(batch * n * n * wd, sizeof(double)), *x = tn_la_alloc(batch * n * n * wd, sizeof(double));
    double *work = tn_la_alloc(8 * n * n * wd, sizeof(double));
    int32_t *piv = tn_la_alloc(n, sizeof(int32_t));
    tn_status st = a && x && work && piv ? TN_OK : oom();
    if (st == TN_OK) tn_la_gather(A, a);
    for (int64_t b = 0; st == TN_OK && b < batch && !tn_tensor_is_meta(A); b++) {
        if (wd == 2)
            tn_linalg_zexpm(n, (const zdouble *)a + b * n * n, (zdouble *)x + b * n * n, (zdouble *)work, piv);
        else
            tn_linalg_expm(n, a + b * n * n, x + b * n * n, work, piv);
    }
    if (st == TN_OK) st = tn_la_new(A->dtype, tn_tensor_device(A), A->ndim, A->sizes, x, &out);
    free(a), free(x), free(work), free(piv);
    tn_tensor_release(A);
    if (st == TN_OK && low) {
        tn_tensor *r = NULL;
        st = to_dtype(out, A0->dtype, &r);
        tn_tensor_release(out);
        out = r;
    }
    return ret1(st, &out, rets);
}
tn_status tn_op_matrix_exp(const tn_value *args, tn_value *rets) { return tn_op_linalg_matrix_exp(args, rets); }

/* ---- door compositions ----------------------------------------------------------------------------- */

static tn_status d_binary(tn_op_id op, tn_tensor *a, tn_tensor *b, tn_tensor **o) {
    tn_value v[2] = {tn_value_tensor(a), tn_value_tensor(b)};
    return tn_dispatch_one(op, v, o);
}
static tn_status d_sum_dim(tn_tensor *t, int64_t dim, bool keepdim, tn_tensor **o) {
    tn_value v[4] = {tn_value_tensor(t), tn_value_intlist(&dim, 1), tn_value_bool(keepdim), none()};
    return tn_dispatch_one(TN_OP_sum_dim_IntList, v, o);
}
static tn_status d_maxmin(tn_tensor *t, int64_t dim, bool keepdim, bool max, tn_tensor **o) {
    tn_value v[3] = {tn_value_tensor(t), tn_value_intlist(&dim, 1), tn_value_bool(keepdim)};
    return tn_dispatch_one(max ? TN_OP_amax : TN_OP_amin, v, o);
}
static tn_status d_permute(tn_tensor *t, const int64_t *perm, tn_tensor **o) {
    tn_value v[2] = {tn_value_tensor(t), tn_value_intlist(perm, t->ndim)};
    return tn_dispatch_one(TN_OP_permute, v, o);
}
static tn_status d_unsqueeze(tn_tensor *t, int64_t dim, tn_tensor **o) {
    tn_value v[2] = {tn_value_tensor(t), tn_value_int(dim)};
    return tn_dispatch_one(TN_OP_unsqueeze, v, o);
}
static tn_status d_reshape(tn_tensor *t, int n, const int64_t *sizes, tn_tensor **o) {
    tn_value v[2] = {tn_value_tensor(t), tn_value_intlist(sizes, n)};
    return tn_dispatch_one(TN_OP_reshape, v, o);
}
static tn_status d_clone(tn_tensor *t, tn_tensor **o) {
    tn_value v[2] = {tn_value_tensor(t), {.tag = TN_V_MEMFMT}};
    v[1].u.memfmt = 0;
    return tn_dispatch_one(TN_OP_clone, v, o);
}
/* r = f(t) then release t: chains door calls that consume their input */
#define CHAIN(call, t)                   \
    do {                                 \
        tn_tensor *chain_in_ = (t), *chain_out_; \
        tn_status chain_st_ = (call);    \
        tn_tensor_release(chain_in_);    \
        if (chain_st_ != TN_OK) return chain_st_; \
        (t) = chain_out_;                \
    } while (0)
#define IN chain_in_
#define OUT (&chain_out_)

/* aten::linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor: (x * y).sum(dim) */
tn_status tn_op_linalg_vecdot(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *y = args[1].u.t, *p;
    if (x->dtype != y->dtype)
        return tn_error(TN_ERR_RUNTIME, "linalg.vecdot: Expected x and y to have the same dtype, but found x of type %s and y of type %s instead",
                        tn_dtype_infos[x->dtype].c10_name, tn_dtype_infos[y->dtype].c10_name);
    if (!tn_dtype_is_floating(x->dtype) && !tn_dtype_is_complex(x->dtype))
        return tn_error(TN_ERR_RUNTIME, "linalg.vecdot: Expected a floating point or complex tensor as input. Got %s",
                        tn_dtype_infos[x->dtype].c10_name);
    /* upstream runs two real vectors through dot, which does not broadcast */
    if (x->ndim == 1 && y->ndim == 1 && x->sizes[0] != y->sizes[0])
        return tn_error(TN_ERR_RUNTIME,
                        "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of "
                        "elements, but got %lld and %lld elements respectively",
                        (long long)x->sizes[0], (long long)y->sizes[0], (long long)x->sizes[0], (long long)y->sizes[0]);
    if (tn_dtype_is_complex(x->dtype)) { /* xᴴ y: the first operand conjugated */
        tn_value cv[1] = {tn_value_tensor(x)};
        tn_tensor *xc;
        TN_TRY(tn_dispatch_one(TN_OP_conj_physical, cv, &xc));
        tn_status st = d_binary(TN_OP_mul_Tensor, xc, y, &p);
        tn_tensor_release(xc);
        TN_TRY(st);
    } else {
        TN_TRY(d_binary(TN_OP_mul_Tensor, x, y, &p));
    }
    CHAIN(d_sum_dim(IN, args[2].u.i, false, OUT), p);
    rets[0] = tn_value_tensor(p);
    return TN_OK;
}

/* One cross product c = a × b of 3-vectors at element strides sa, sb, sc, in T arithmetic
 * (bfloat16/half: each product and the difference rounded, as upstream's scalar type does). */
#define CROSS_LOOP(T, LOAD, STORE) CROSS_LOOP_OPS(T, LOAD, STORE, MUL_PLAIN, SUB_PLAIN)
/* the wide integers wrap as upstream's (in unsigned arithmetic: no signed overflow) */
#define CROSS_LOOP_WRAP(T, U) CROSS_LOOP_OPS(T, ID, ID, MUL_WRAP_##U, SUB_WRAP_##U)
#define MUL_PLAIN(x, y) ((x) * (y))
#define SUB_PLAIN(x, y) ((x) - (y))
#define MUL_WRAP_64(x, y) ((int64_t)((uint64_t)(x) * (uint64_t)(y)))
#define SUB_WRAP_64(x, y) ((int64_t)((uint64_t)(x) - (uint64_t)(y)))
#define MUL_WRAP_32(x, y) ((int32_t)((uint32_t)(x) * (uint32_t)(y)))
#define SUB_WRAP_32(x, y) ((int32_t)((uint32_t)(x) - (uint32_t)(y)))
#define CROSS_LOOP_OPS(T, LOAD, STORE, MUL, SUB)                                                      \
    for (int64_t it = 0; it < total; it++) {                                                          \
        const T *pa = (const T *)a0 + oa, *pb = (const T *)b0 + ob;                                   \
        T *pc = (T *)c0 + oc;                                                                         \
        for (int i = 0; i < 3; i++) {                                                                 \
            int j = (i + 1) % 3, k = (i + 2) % 3;                                                     \
            pc[i * sc] = STORE(SUB(LOAD(STORE(MUL(LOAD(pa[j * sa]), LOAD(pb[k * sb])))),             \
                                   LOAD(STORE(MUL(LOAD(pa[k * sa]), LOAD(pb[j * sb]))))));           \
        }                                                                                             \
        for (int q = nd - 1; q >= 0; q--) {                                                           \
            if (q == d) continue;                                                                     \
            if (++idx[q] < sz[q]) { oa += A->strides[q], ob += B->strides[q], oc += C->strides[q]; break; } \
            oa -= (idx[q] - 1) * A->strides[q], ob -= (idx[q] - 1) * B->strides[q];                   \
            oc -= (idx[q] - 1) * C->strides[q], idx[q] = 0;                                           \
        }                                                                                             \
    }
#define ID(x) (x)
#define BF_LOAD(x) tn_bf16_to_f32(x)
#define BF_STORE(x) tn_f32_to_bf16(x)
#define H_LOAD(x) tn_half_to_f32(x)
#define H_STORE(x) tn_f32_to_half(x)

/* aten::linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor: c_i = a_{i+1} b_{i+2} -
 * a_{i+2} b_{i+1} along dim, the other dims broadcast */
tn_status tn_op_linalg_cross(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t, *b = args[1].u.t;
    if (a->ndim != b->ndim) return tn_error(TN_ERR_RUNTIME, "linalg.cross: inputs must have the same number of dimensions.");
    int d;
    TN_TRY(tn_wrap_dim(args[2].u.i, a->ndim, &d));
    if (a->sizes[d] != 3 || b->sizes[d] != 3)
        return tn_error(TN_ERR_RUNTIME, "linalg.cross: inputs dimension %lld must have length 3. Got %lld and %lld",
                        (long long)args[2].u.i, (long long)a->sizes[d], (long long)b->sizes[d]);
    if (a->dtype != b->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_dtype_infos[a->dtype].c10_name,
                        tn_dtype_infos[b->dtype].c10_name);
    tn_dtype dt = a->dtype;
    if (dt != TN_DTYPE_FLOAT32 && dt != TN_DTYPE_FLOAT64 && dt != TN_DTYPE_BFLOAT16 && dt != TN_DTYPE_FLOAT16 &&
        dt != TN_DTYPE_COMPLEX64 && dt != TN_DTYPE_COMPLEX128 && dt != TN_DTYPE_INT64 && dt != TN_DTYPE_INT32 &&
        dt != TN_DTYPE_INT16 && dt != TN_DTYPE_INT8 && dt != TN_DTYPE_UINT8) /* upstream's "all types" */
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"cross\" not implemented for '%s'", tn_dtype_infos[dt].c10_name);
    int nd;
    int64_t sz[TN_MAX_DIMS];
    TN_TRY(tn_shape_broadcast(a->ndim, a->sizes, b->ndim, b->sizes, &nd, sz));
    tn_tensor *A, *B, *C;
    TN_TRY(tn_shape_expand_view(a, nd, sz, &A));
    tn_status st = tn_shape_expand_view(b, nd, sz, &B);
    if (st != TN_OK) { tn_tensor_release(A); return st; }
    st = tn_tensor_empty(nd, sz, dt, tn_tensor_device(a), &C);
    if (st != TN_OK) { tn_tensor_release(A), tn_tensor_release(B); return st; }
    int64_t total = tn_tensor_numel(C) / 3;
    if (total > 0 && !tn_tensor_is_meta(C)) {
        const char *a0 = tn_tensor_data(A), *b0 = tn_tensor_data(B);
        char *c0 = tn_tensor_data(C);
        int64_t sa = A->strides[d], sb = B->strides[d], sc = C->strides[d], oa = 0, ob = 0, oc = 0, idx[TN_MAX_DIMS] = {0};
        switch (dt) {
        case TN_DTYPE_FLOAT32: CROSS_LOOP(float, ID, ID) break;
        case TN_DTYPE_FLOAT64: CROSS_LOOP(double, ID, ID) break;
        case TN_DTYPE_INT64: CROSS_LOOP_WRAP(int64_t, 64) break;
        case TN_DTYPE_INT32: CROSS_LOOP_WRAP(int32_t, 32) break;
        case TN_DTYPE_INT16: CROSS_LOOP(int16_t, ID, ID) break; /* the narrow integers wrap as upstream's */
        case TN_DTYPE_INT8: CROSS_LOOP(int8_t, ID, ID) break;
        case TN_DTYPE_UINT8: CROSS_LOOP(uint8_t, ID, ID) break;
        case TN_DTYPE_BFLOAT16: CROSS_LOOP(tn_bfloat16, BF_LOAD, BF_STORE) break;
        case TN_DTYPE_COMPLEX64: CROSS_LOOP(float _Complex, ID, ID) break;
        case TN_DTYPE_COMPLEX128: CROSS_LOOP(double _Complex, ID, ID) break;
        default: CROSS_LOOP(tn_half, H_LOAD, H_STORE) break;
        }
    }
    tn_tensor_release(A), tn_tensor_release(B);
    rets[0] = tn_value_tensor(C);
    return TN_OK;
}

/* aten::cross(Tensor self, Tensor other, int? dim=None): linalg_cross, dim defaulting to the
 * first dimension of size 3 */
tn_status tn_op_cross(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t;
    int64_t dim = -1;
    if (args[2].tag == TN_V_INT) {
        dim = args[2].u.i;
    } else {
        int i = 0;
        while (i < a->ndim && a->sizes[i] != 3) i++;
        if (i == a->ndim) return tn_error(TN_ERR_RUNTIME, "no dimension of size 3 in input");
        dim = i;
    }
    tn_value v[3] = {args[0], args[1], tn_value_int(dim)};
    return tn_dispatch(TN_OP_linalg_cross, v, rets); /* through the door: recorded under autograd */
}

/* aten::linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor: [1, x, x², ...] along a new last dim */
tn_status tn_op_linalg_vander(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    if (x->dtype == TN_DTYPE_BOOL || x->dtype == TN_DTYPE_FLOAT16 || x->dtype == TN_DTYPE_BFLOAT16)
        return tn_error(TN_ERR_RUNTIME, "linalg.vander supports floating point, complex, and integer tensors, but got %s",
                        tn_dtype_infos[x->dtype].c10_name);
    int nd = x->ndim ? x->ndim : 1;
    int64_t shape[TN_MAX_DIMS + 1];
    if (x->ndim) memcpy(shape, x->sizes, sizeof(int64_t) * x->ndim);
    else shape[0] = 1;
    int64_t n = args[1].tag == TN_V_INT ? args[1].u.i : shape[nd - 1];
    if (n <= 1) return tn_error(TN_ERR_RUNTIME, "N must be greater than 1.");
    tn_tensor *t;
    TN_TRY(d_reshape(x, nd, shape, &t));
    CHAIN(d_unsqueeze(IN, -1, OUT), t);
    shape[nd] = n - 1;
    {
        tn_value v[3] = {tn_value_tensor(t), tn_value_intlist(shape, nd + 1), tn_value_bool(false)};
        tn_tensor *e;
        tn_status st = tn_dispatch_one(TN_OP_expand, v, &e);
        tn_tensor_release(t);
        TN_TRY(st);
        t = e;
    }
    {
        tn_value v[3] = {tn_value_tensor(t), tn_value_int(-1), none()};
        tn_tensor *c;
        tn_status st = tn_dispatch_one(TN_OP_cumprod, v, &c);
        tn_tensor_release(t);
        TN_TRY(st);
        t = c;
    }
    shape[nd] = 1;
    tn_tensor *ones;
    tn_status st = tn_tensor_empty(nd + 1, shape, t->dtype, tn_tensor_device(t), &ones);
    if (st == TN_OK) {
        double one = 1;
        unsigned char elem[16];
        tn_value ov = tn_value_double(one);
        st = tn_scalar_to_bytes(&ov, t->dtype, elem);
        if (st == TN_OK) tn_shape_fill_bytes(ones, elem);
    }
    if (st != TN_OK) { tn_tensor_release(t); return st; }
    tn_tensor *parts[2] = {ones, t};
    tn_value v[2] = {tn_value_tensorlist(parts, 2), tn_value_int(-1)};
    st = tn_dispatch(TN_OP_cat, v, rets);
    tn_tensor_release(ones), tn_tensor_release(t);
    return st;
}

/* the optimal parenthesization of a chain of n matrices of sizes p[i] × p[i+1] (split[i*n+j]) */
static void chain_order(int64_t n, const int64_t *p, int64_t *split, double *cost) {
    for (int64_t i = 0; i < n; i++) cost[i * n + i] = 0;
    for (int64_t len = 1; len < n; len++)
        for (int64_t i = 0; i + len < n; i++) {
            int64_t j = i + len;
            cost[i * n + j] = INFINITY;
            for (int64_t k = i; k < j; k++) {
                double c = cost[i * n + k] + cost[(k + 1) * n + j] + (double)p[i] * (double)p[k + 1] * (double)p[j + 1];
                if (c < cost[i * n + j]) cost[i * n + j] = c, split[i * n + j] = k;
            }
        }
}
static tn_status chain_mult(tn_tensor **ts, int64_t n, const int64_t *split, int64_t i, int64_t j, tn_tensor **out) {
    if (i == j) { tn_tensor_retain(ts[i]); *out = ts[i]; return TN_OK; }
    tn_tensor *l, *r;
    TN_TRY(chain_mult(ts, n, split, i, split[i * n + j], &l));
    tn_status st = chain_mult(ts, n, split, split[i * n + j] + 1, j, &r);
    if (st == TN_OK) {
        st = d_binary(TN_OP_mm, l, r, out);
        tn_tensor_release(r);
    }
    tn_tensor_release(l);
    return st;
}

/* aten::linalg_multi_dot(Tensor[] tensors) -> Tensor: the chain in its cheapest order */
tn_status tn_op_linalg_multi_dot(const tn_value *args, tn_value *rets) {
    int64_t n = args[0].u.tlist.n;
    tn_tensor *const *in = args[0].u.tlist.data;
    if (n < 2) return tn_error(TN_ERR_RUNTIME, "multi_dot(): expected at least 2 tensors but got %lld", (long long)n);
    if (in[0]->ndim != 1 && in[0]->ndim != 2)
        return tn_error(TN_ERR_RUNTIME, "multi_dot(): the first tensor must be 1D or 2D but got %dD", in[0]->ndim);
    if (in[n - 1]->ndim != 1 && in[n - 1]->ndim != 2)
        return tn_error(TN_ERR_RUNTIME, "multi_dot(): the last tensor must be 1D or 2D but got %dD", in[n - 1]->ndim);
    for (int64_t i = 1; i < n - 1; i++)
        if (in[i]->ndim != 2)
            return tn_error(TN_ERR_RUNTIME, "multi_dot(): tensor %lld must be 2D but got %dD", (long long)i, in[i]->ndim);
    for (int64_t i = 1; i < n; i++)
        if (in[i]->dtype != in[0]->dtype)
            return tn_error(TN_ERR_RUNTIME, "multi_dot(): all tensors must have be the same dtype but tensor 0 is %s and tensor %lld %s",
                            tn_dtype_infos[in[0]->dtype].c10_name, (long long)i, tn_dtype_infos[in[i]->dtype].c10_name);
    tn_tensor **ts = calloc((size_t)n, sizeof *ts);
    int64_t *p = calloc((size_t)n + 1, sizeof *p), *split = calloc((size_t)(n * n), sizeof *split);
    double *cost = calloc((size_t)(n * n), sizeof *cost);
    tn_status st = ts && p && split && cost ? TN_OK : oom();
    for (int64_t i = 0; st == TN_OK && i < n; i++) {
        tn_tensor *t = in[i];
        if (t->ndim == 1) st = d_unsqueeze(t, i == 0 ? 0 : -1, &ts[i]);
        else tn_tensor_retain(t), ts[i] = t;
    }
    for (int64_t i = 1; st == TN_OK && i < n; i++)
        if (ts[i - 1]->sizes[1] != ts[i]->sizes[0]) {
            char b1[128], b2[128];
            st = tn_error(TN_ERR_RUNTIME, "multi_dot(): tensors %lld and %lld with shapes %s and %s cannot be multiplied",
                          (long long)(i - 1), (long long)i, tn_format_sizes(in[i - 1]->ndim, in[i - 1]->sizes, b1, sizeof b1),
                          tn_format_sizes(in[i]->ndim, in[i]->sizes, b2, sizeof b2));
        }
    tn_tensor *r = NULL;
    if (st == TN_OK) {
        for (int64_t i = 0; i < n; i++) p[i] = ts[i]->sizes[0];
        p[n] = ts[n - 1]->sizes[1];
        if (n == 3) { /* the two orders compared as upstream does (ties: left first) */
            int64_t a = p[0], b = p[1], c = p[2], d = p[3];
            split[0 * n + 2] = (a * c) * (b + d) > (b * d) * (a + c) ? 0 : 1;
            split[0 * n + 1] = 0, split[1 * n + 2] = 1;
        } else {
            chain_order(n, p, split, cost);
        }
        st = chain_mult(ts, n, split, 0, n - 1, &r);
    }
    if (st == TN_OK && (in[0]->ndim == 1 || in[n - 1]->ndim == 1)) {
        int64_t shape[2];
        int k = 0;
        if (in[0]->ndim == 2) shape[k++] = in[0]->sizes[0];
        if (in[n - 1]->ndim == 2) shape[k++] = in[n - 1]->sizes[1];
        tn_tensor *v;
        st = d_reshape(r, k, shape, &v);
        tn_tensor_release(r);
        r = st == TN_OK ? v : NULL;
    }
    for (int64_t i = 0; ts && i < n; i++)
        if (ts[i]) tn_tensor_release(ts[i]);
    free(ts), free(p), free(split), free(cost);
    TN_TRY(st);
    rets[0] = tn_value_tensor(r);
    return TN_OK;
}

/* aten::linalg_matrix_power(Tensor self, int n) -> Tensor (binary powering; n < 0 inverts first) */
tn_status tn_op_linalg_matrix_power(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *a;
    int64_t n = args[1].u.i;
    TN_TRY(tn_la_need_square("linalg.matrix_power", A, "A"));
    if (n == 0) { /* the identity in every batch element */
        tn_tensor *out;
        TN_TRY(tn_tensor_zeros(A->ndim, A->sizes, A->dtype, tn_tensor_device(A), &out));
        tn_tensor *diag;
        tn_value dv[4] = {tn_value_tensor(out), tn_value_int(0), tn_value_int(-2), tn_value_int(-1)};
        tn_status st = tn_dispatch_one(TN_OP_diagonal, dv, &diag);
        if (st == TN_OK) {
            tn_value fv[2] = {tn_value_tensor(diag), tn_value_int(1)};
            tn_value r[1];
            st = tn_dispatch(TN_OP_fill__Scalar, fv, r);
            if (st == TN_OK) tn_value_release(&r[0]);
            tn_tensor_release(diag);
        }
        if (st != TN_OK) { tn_tensor_release(out); return st; }
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    uint64_t un = (uint64_t)n;
    if (n < 0) {
        tn_tensor *out[2] = {0};
        tn_value iv[1] = {tn_value_tensor(A)};
        TN_TRY(tn_dispatch_one(TN_OP_linalg_inv, iv, &out[0]));
        a = out[0];
        un = (uint64_t)0 - (uint64_t)n; /* the magnitude, 2**63 for INT64_MIN */
    } else {
        tn_tensor_retain(A);
        a = A;
    }
    tn_tensor *res = NULL, *z = NULL;
    tn_status st = TN_OK;
    if (un == 1) st = d_clone(a, &res);
    else if (un == 2) st = d_binary(TN_OP_matmul, a, a, &res);
    else if (un == 3) {
        tn_tensor *t;
        st = d_binary(TN_OP_matmul, a, a, &t);
        if (st == TN_OK) st = d_binary(TN_OP_matmul, t, a, &res), tn_tensor_release(t);
    } else {
        while (st == TN_OK && un > 0) {
            uint64_t bit = un % 2;
            un /= 2;
            tn_tensor *nz;
            if (z) st = d_binary(TN_OP_matmul, z, z, &nz), tn_tensor_release(z);
            else tn_tensor_retain(a), nz = a, st = TN_OK;
            z = st == TN_OK ? nz : NULL;
            if (st == TN_OK && bit) {
                if (res) {
                    tn_tensor *nr;
                    st = d_binary(TN_OP_matmul, res, z, &nr);
                    tn_tensor_release(res);
                    res = st == TN_OK ? nr : NULL;
                } else {
                    tn_tensor_retain(z);
                    res = z;
                }
            }
        }
    }
    if (z) tn_tensor_release(z);
    tn_tensor_release(a);
    if (st != TN_OK) { if (res) tn_tensor_release(res); return st; }
    rets[0] = tn_value_tensor(res);
    return TN_OK;
}
tn_status tn_op_matrix_power(const tn_value *args, tn_value *rets) { return tn_op_linalg_matrix_power(args, rets); }

/* aten::linalg_tensorinv(Tensor self, int ind=2) -> Tensor */
tn_status tn_op_linalg_tensorinv(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *t;
    int64_t ind = args[1].u.i;
    if (ind <= 0) return tn_error(TN_ERR_RUNTIME, "Expected a strictly positive integer for 'ind', but got %lld", (long long)ind);
    if (ind > A->ndim)
        return tn_error(TN_ERR_RUNTIME, "linalg.tensorinv: ind (%lld) is larger than the number of dimensions (%d)", (long long)ind, A->ndim);
    int64_t p = 1, q = 1, shape[TN_MAX_DIMS];
    for (int i = 0; i < A->ndim; i++) {
        if (i < ind) p *= A->sizes[i];
        else q *= A->sizes[i];
    }
    if (ind > A->ndim) ind = A->ndim;
    if (p != q)
        return tn_error(TN_ERR_RUNTIME, "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got %lld != %lld",
                        (long long)q, (long long)p);
    int64_t sq[2] = {p, q};
    TN_TRY(d_reshape(A, 2, sq, &t));
    tn_value iv[2] = {tn_value_tensor(t), tn_value_bool(false)}, r[2];
    tn_status st = tn_dispatch(TN_OP_linalg_inv_ex, iv, r);
    tn_tensor_release(t);
    TN_TRY(st);
    tn_tensor *inv = r[0].u.t, *info = r[1].u.t;
    int32_t code = tn_tensor_is_meta(info) ? 0 : *(int32_t *)tn_tensor_data(info);
    tn_tensor_release(info);
    if (code) {
        tn_tensor_release(inv);
        return tn_error(TN_ERR_LINALG, "inv: The diagonal element %d is zero, the inversion could not be completed because the input matrix is singular.", code);
    }
    int k = 0;
    for (int i = (int)ind; i < A->ndim; i++) shape[k++] = A->sizes[i];
    for (int i = 0; i < ind; i++) shape[k++] = A->sizes[i];
    st = d_reshape(inv, k, shape, &t);
    tn_tensor_release(inv);
    TN_TRY(st);
    rets[0] = tn_value_tensor(t);
    return TN_OK;
}

/* aten::linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor */
tn_status tn_op_linalg_tensorsolve(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *B = args[1].u.t, *a;
    int nd = A->ndim;
    if (args[2].tag == TN_V_INTLIST && args[2].u.ilist.n > 0) { /* the named dims moved to the end, in order */
        int64_t perm[TN_MAX_DIMS];
        bool used[TN_MAX_DIMS] = {0};
        int64_t nm = args[2].u.ilist.n, k = 0;
        int moved[TN_MAX_DIMS];
        for (int64_t i = 0; i < nm; i++) {
            int d;
            TN_TRY(tn_wrap_dim(args[2].u.ilist.data[i], nd, &d));
            if (used[d]) return tn_error(TN_ERR_RUNTIME, "movedim: repeated dim in `source` (%lld)", (long long)args[2].u.ilist.data[i]);
            used[d] = true, moved[i] = d;
        }
        for (int i = 0; i < nd; i++)
            if (!used[i]) perm[k++] = i;
        for (int64_t i = 0; i < nm; i++) perm[k++] = moved[i];
        TN_TRY(d_permute(A, perm, &a));
    } else {
        tn_tensor_retain(A);
        a = A;
    }
    int64_t rs[TN_MAX_DIMS], rp = 1, op = 1;
    int nr = 0;
    for (int i = B->ndim; i < nd; i++) rs[nr++] = a->sizes[i], rp *= a->sizes[i];
    for (int i = 0; i < B->ndim; i++) op *= B->sizes[i];
    if (rp != op) {
        tn_tensor_release(a);
        return tn_error(TN_ERR_RUNTIME, "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but got %lld != %lld",
                        (long long)rp, (long long)op);
    }
    int64_t sq[2] = {rp, rp}, flat = -1;
    CHAIN(d_reshape(IN, 2, sq, OUT), a);
    tn_tensor *b;
    tn_status st = d_reshape(B, 1, &flat, &b);
    if (st != TN_OK) { tn_tensor_release(a); return st; }
    tn_value sv[3] = {tn_value_tensor(a), tn_value_tensor(b), tn_value_bool(true)};
    tn_tensor *x;
    st = tn_dispatch_one(TN_OP_linalg_solve, sv, &x);
    tn_tensor_release(a), tn_tensor_release(b);
    TN_TRY(st);
    CHAIN(d_reshape(IN, nr, rs, OUT), x);
    rets[0] = tn_value_tensor(x);
    return TN_OK;
}

/* ---- norms and the condition number --------------------------------------------------------------- */

/* d0, d1 wrapped and checked as upstream's matrix-norm checks; low: whether bfloat16/half pass */
static tn_status matrix_norm_checks(tn_tensor *A, const tn_value *dim, const tn_value *dtype, bool low, int *d0, int *d1) {
    TN_TRY(tn_la_need_matrix("linalg.matrix_norm", A, "A"));
    tn_dtype dt = A->dtype;
    bool half = dt == TN_DTYPE_BFLOAT16 || dt == TN_DTYPE_FLOAT16 || dt == TN_DTYPE_COMPLEX32;
    if (half && !low)
        return tn_error(TN_ERR_RUNTIME, "linalg.matrix_norm: Low precision dtypes not supported. Got %s", tn_dtype_infos[dt].c10_name);
    if (!half) TN_TRY(tn_la_need_float_or_complex("linalg.matrix_norm", A));
    if (dim->u.ilist.n != 2) {
        char b[256];
        int off = 0;
        b[0] = 0;
        for (int64_t i = 0; i < dim->u.ilist.n && off < 200; i++)
            off += snprintf(b + off, sizeof b - off, "%s%lld", i ? " " : "", (long long)dim->u.ilist.data[i]);
        return tn_error(TN_ERR_RUNTIME, "linalg.matrix_norm: dim must be a 2-tuple. Got %s", b);
    }
    if (dtype->tag == TN_V_DTYPE && !tn_dtype_is_floating(dtype->u.dtype) && !tn_dtype_is_complex(dtype->u.dtype))
        return tn_error(TN_ERR_RUNTIME, "linalg.matrix_norm: dtype should be floating point or complex, but got %s",
                        tn_dtype_infos[dtype->u.dtype].c10_name);
    TN_TRY(tn_wrap_dim(dim->u.ilist.data[0], A->ndim, d0));
    TN_TRY(tn_wrap_dim(dim->u.ilist.data[1], A->ndim, d1));
    if (*d0 == *d1) return tn_error(TN_ERR_RUNTIME, "linalg.matrix_norm: dims must be different. Got (%d, %d)", *d0, *d1);
    return TN_OK;
}

/* svdvals of A with dims d0, d1 moved to the end, reduced over the last dim by sum (nuc),
 * amax (2) or amin (-2); keepdim puts the two dims back as size 1 */
static tn_status spectral_norm(tn_tensor *A, int d0, int d1, int kind, bool keepdim, const tn_value *dtype, tn_value *rets) {
    int nd = A->ndim;
    int64_t perm[TN_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < nd; i++)
        if (i != d0 && i != d1) perm[k++] = i;
    perm[k++] = d0, perm[k++] = d1;
    tn_tensor *t;
    if (dtype->tag == TN_V_DTYPE) TN_TRY(to_dtype(A, dtype->u.dtype, &t));
    else tn_tensor_retain(A), t = A;
    CHAIN(d_permute(IN, perm, OUT), t);
    {
        tn_value v[2] = {tn_value_tensor(t), none()};
        tn_tensor *s;
        tn_status st = tn_dispatch_one(TN_OP_linalg_svdvals, v, &s);
        tn_tensor_release(t);
        TN_TRY(st);
        t = s;
    }
    if (kind == 0) CHAIN(d_sum_dim(IN, -1, false, OUT), t);
    else CHAIN(d_maxmin(IN, -1, false, kind > 0, OUT), t);
    if (keepdim) { /* unsqueeze at the two dims, lower first */
        int lo = d0 < d1 ? d0 : d1, hi = d0 < d1 ? d1 : d0;
        CHAIN(d_unsqueeze(IN, lo, OUT), t);
        CHAIN(d_unsqueeze(IN, hi, OUT), t);
    }
    rets[0] = tn_value_tensor(t);
    return TN_OK;
}

/* aten::linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2, -1], bool keepdim=False, *, ScalarType? dtype=None) */
tn_status tn_op_linalg_matrix_norm(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t;
    if (args[1].tag == TN_V_COMPLEX) return tn_error(TN_ERR_RUNTIME, "linalg.matrix_norm: Expected a non-complex scalar as the order of norm.");
    double ord = args[1].tag == TN_V_INT ? (double)args[1].u.i : args[1].tag == TN_V_BOOL ? args[1].u.b : args[1].u.d;
    double ab = fabs(ord);
    if (!(ab == 2 || ab == 1 || ab == INFINITY)) {
        if (args[1].tag == TN_V_INT) return tn_error(TN_ERR_RUNTIME, "linalg.matrix_norm: Order %lld not supported.", (long long)args[1].u.i);
        return tn_error(TN_ERR_RUNTIME, "linalg.matrix_norm: Order %g not supported.", ord);
    }
    int d0, d1;
    bool keepdim = args[3].u.b;
    TN_TRY(matrix_norm_checks(A, &args[2], &args[4], ab != 2, &d0, &d1));
    if (ab == 2) return spectral_norm(A, d0, d1, ord > 0 ? 1 : -1, keepdim, &args[4], rets);
    if (ab == INFINITY) { int t = d0; d0 = d1, d1 = t; }
    if (!keepdim && d0 < d1) d1--;
    int64_t dd = d0;
    tn_value v[5] = {tn_value_tensor(A), tn_value_double(1.0), tn_value_intlist(&dd, 1), tn_value_bool(keepdim), args[4]};
    tn_tensor *t;
    TN_TRY(tn_dispatch_one(TN_OP_linalg_vector_norm, v, &t));
    CHAIN(d_maxmin(IN, d1, keepdim, ord > 0, OUT), t);
    rets[0] = tn_value_tensor(t);
    return TN_OK;
}

/* aten::linalg_matrix_norm.str_ord(Tensor self, str ord="fro", int[] dim=[-2, -1], bool keepdim=False, *, ScalarType? dtype=None) */
tn_status tn_op_linalg_matrix_norm_str_ord(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t;
    const char *ord = args[1].u.s.data;
    bool fro = !strcmp(ord, "fro"), nuc = !strcmp(ord, "nuc");
    if (!fro && !nuc) return tn_error(TN_ERR_RUNTIME, "linalg.matrix_norm: Order %s not supported.", ord);
    int d0, d1;
    TN_TRY(matrix_norm_checks(A, &args[2], &args[4], !nuc, &d0, &d1));
    if (nuc) return spectral_norm(A, d0, d1, 0, args[3].u.b, &args[4], rets);
    tn_value v[5] = {tn_value_tensor(A), tn_value_double(2.0), args[2], args[3], args[4]};
    return tn_dispatch(TN_OP_linalg_vector_norm, v, rets);
}

/* aten::linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) */
tn_status tn_op_linalg_norm(const tn_value *args, tn_value *rets) {
    tn_tensor *X = args[0].u.t;
    bool has_ord = args[1].tag != TN_V_NONE, has_dim = args[2].tag == TN_V_INTLIST;
    int64_t ndim = has_dim ? args[2].u.ilist.n : 0;
    if (has_dim && ndim != 1 && ndim != 2) {
        char b[256];
        int off = snprintf(b, sizeof b, "[");
        for (int64_t i = 0; i < ndim && off < 200; i++)
            off += snprintf(b + off, sizeof b - off, "%s%lld", i ? ", " : "", (long long)args[2].u.ilist.data[i]);
        snprintf(b + off, sizeof b - off, "]");
        return tn_error(TN_ERR_RUNTIME, "linalg.norm: If dim is specified, it must be of length 1 or 2. Got %s", b);
    }
    if (!has_dim && has_ord && X->ndim != 1 && X->ndim != 2)
        return tn_error(TN_ERR_RUNTIME, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.", X->ndim);
    if (has_ord && ((has_dim && ndim == 2) || (!has_dim && X->ndim == 2))) {
        int64_t d01[2] = {0, 1};
        tn_value v[5] = {args[0], args[1], has_dim ? args[2] : tn_value_intlist(d01, 2), args[3], args[4]};
        return tn_op_linalg_matrix_norm(v, rets);
    }
    tn_value v[5] = {args[0], has_ord ? args[1] : tn_value_double(2.0), args[2], args[3], args[4]};
    return tn_dispatch(TN_OP_linalg_vector_norm, v, rets);
}

/* aten::linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) */
tn_status tn_op_linalg_norm_ord_str(const tn_value *args, tn_value *rets) {
    tn_tensor *X = args[0].u.t;
    if (args[2].tag != TN_V_INTLIST && X->ndim != 2)
        return tn_error(TN_ERR_RUNTIME, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.", X->ndim);
    int64_t d01[2] = {0, 1};
    tn_value v[5] = {args[0], args[1], args[2].tag == TN_V_INTLIST ? args[2] : tn_value_intlist(d01, 2), args[3], args[4]};
    return tn_op_linalg_matrix_norm_str_ord(v, rets);
}

/* ‖A‖·‖A⁻¹‖ in the given norm (ord: a Scalar value or a string), inf where A is singular */
static tn_status cond_by_norms(tn_tensor *A, const tn_value *ord, tn_value *rets) {
    tn_value iv[2] = {tn_value_tensor(A), tn_value_bool(false)}, r[2];
    TN_TRY(tn_dispatch(TN_OP_linalg_inv_ex, iv, r));
    tn_tensor *inv = r[0].u.t, *info = r[1].u.t, *na = NULL, *ni = NULL, *prod = NULL;
    int64_t dims[2] = {-2, -1};
    tn_value nv[5] = {tn_value_tensor(A), *ord, tn_value_intlist(dims, 2), tn_value_bool(false), none()};
    bool str = ord->tag == TN_V_STRING;
    tn_status st = str ? tn_dispatch_one(TN_OP_linalg_norm_ord_str, nv, &na) : tn_dispatch_one(TN_OP_linalg_norm, nv, &na);
    nv[0] = tn_value_tensor(inv);
    if (st == TN_OK) st = str ? tn_dispatch_one(TN_OP_linalg_norm_ord_str, nv, &ni) : tn_dispatch_one(TN_OP_linalg_norm, nv, &ni);
    if (st == TN_OK) st = d_binary(TN_OP_mul_Tensor, na, ni, &prod);
    if (st == TN_OK && !tn_tensor_is_meta(prod)) { /* singular: inf */
        tn_tensor *c, *ic;
        st = tn_tensor_contiguous(prod, &c);
        if (st == TN_OK) st = tn_tensor_contiguous(info, &ic);
        if (st == TN_OK) {
            int64_t n = tn_tensor_numel(c);
            const int32_t *iv32 = tn_tensor_data(ic);
            for (int64_t i = 0; i < n; i++)
                if (iv32[i] > 0) {
                    if (c->dtype == TN_DTYPE_FLOAT32) ((float *)tn_tensor_data(c))[i] = INFINITY;
                    else ((double *)tn_tensor_data(c))[i] = INFINITY;
                }
            tn_tensor_release(ic);
            tn_tensor_release(prod);
            prod = c;
        } else if (c != prod) {
            tn_tensor_release(c);
        }
    }
    tn_tensor_release(inv), tn_tensor_release(info);
    if (na) tn_tensor_release(na);
    if (ni) tn_tensor_release(ni);
    if (st != TN_OK) { if (prod) tn_tensor_release(prod); return st; }
    rets[0] = tn_value_tensor(prod);
    return TN_OK;
}

/* zeros of the batch shape (upstream's condition number of empty matrices) */
static tn_status cond_empty(tn_tensor *A, tn_value *rets) {
    tn_tensor *z;
    TN_TRY(tn_tensor_zeros(A->ndim - 2, A->sizes, A->dtype, tn_tensor_device(A), &z));
    rets[0] = tn_value_tensor(z);
    return TN_OK;
}

/* aten::linalg_cond(Tensor self, Scalar? p=None) -> Tensor */
tn_status tn_op_linalg_cond(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t;
    if (A->ndim < 2) return tn_error(TN_ERR_RUNTIME, "linalg.cond: The input tensor must have at least 2 dimensions.");
    tn_value ord = args[1].tag == TN_V_NONE ? tn_value_int(2) : args[1];
    double p = ord.tag == TN_V_INT ? (double)ord.u.i : ord.tag == TN_V_BOOL ? ord.u.b : ord.u.d;
    double ab = fabs(p);
    if (!(ab == 2 || ab == 1 || ab == INFINITY)) {
        if (ord.tag == TN_V_INT) return tn_error(TN_ERR_RUNTIME, "linalg.cond got an invalid norm type: %lld", (long long)ord.u.i);
        return tn_error(TN_ERR_RUNTIME, "linalg.cond got an invalid norm type: %g", p);
    }
    if (tn_tensor_numel(A) == 0) return cond_empty(A, rets);
    if (ab == 2) { /* s_max / s_min (or the inverse for -2) */
        tn_value v[2] = {args[0], none()};
        tn_tensor *s, *hi = NULL, *lo = NULL, *q = NULL;
        TN_TRY(tn_dispatch_one(TN_OP_linalg_svdvals, v, &s));
        int64_t k = s->sizes[s->ndim - 1];
        tn_value n0[4] = {tn_value_tensor(s), tn_value_int(-1), tn_value_int(0), tn_value_int(1)};
        tn_value n1[4] = {tn_value_tensor(s), tn_value_int(-1), tn_value_int(k - 1), tn_value_int(1)};
        tn_status st = tn_dispatch_one(TN_OP_narrow, n0, &hi);
        if (st == TN_OK) st = tn_dispatch_one(TN_OP_narrow, n1, &lo);
        if (st == TN_OK) st = p > 0 ? d_binary(TN_OP_div_Tensor, hi, lo, &q) : d_binary(TN_OP_div_Tensor, lo, hi, &q);
        tn_tensor_release(s);
        if (hi) tn_tensor_release(hi);
        if (lo) tn_tensor_release(lo);
        TN_TRY(st);
        int64_t last = -1;
        tn_value sq[2] = {tn_value_tensor(q), tn_value_intlist(&last, 1)};
        st = tn_dispatch(TN_OP_squeeze_dims, sq, rets);
        tn_tensor_release(q);
        return st;
    }
    char api[64];
    if (ord.tag == TN_V_INT) snprintf(api, sizeof api, "linalg.cond(ord=%lld)", (long long)ord.u.i);
    else snprintf(api, sizeof api, "linalg.cond(ord=%f)", p);
    TN_TRY(tn_la_need_square(api, A, "A"));
    return cond_by_norms(A, &ord, rets);
}

/* aten::linalg_cond.p_str(Tensor self, str p) -> Tensor */
tn_status tn_op_linalg_cond_p_str(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t;
    const char *p = args[1].u.s.data;
    if (A->ndim < 2) return tn_error(TN_ERR_RUNTIME, "linalg.cond: The input tensor must have at least 2 dimensions.");
    if (strcmp(p, "fro") && strcmp(p, "nuc")) return tn_error(TN_ERR_RUNTIME, "linalg.cond got an invalid norm type: %s", p);
    if (tn_tensor_numel(A) == 0) return cond_empty(A, rets);
    char api[64];
    snprintf(api, sizeof api, "linalg.cond(ord=%s)", p);
    TN_TRY(tn_la_need_square(api, A, "A"));
    return cond_by_norms(A, &args[1], rets);
}
