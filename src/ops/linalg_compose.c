/* linalg_compose.c — the linear-algebra operators upstream builds on the decompositions:
 * pinv/pinverse, matrix_rank, lstsq (from the SVD or the symmetric eigenproblem, in
 * float64), matrix_exp, and the door compositions matrix_norm, norm, cond, matrix_power,
 * multi_dot, tensorinv, tensorsolve, vander, cross, vecdot. Checks and messages as
 * upstream's. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/linalg_decomp.h"
#include "ops/dispatch.h"
#include "ops/linalg_decomp_internal.h"
#include "ops/shape.h"

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

/* ---- thin SVD of one matrix, either orientation ----------------------------------------------- */

typedef struct svd_ws { double *mt, *pu, *qv, *work; } svd_ws;

static tn_status svd_ws_init(svd_ws *w, int64_t m, int64_t n) {
    int64_t p = m > n ? m : n, q = m > n ? n : m;
    w->mt = tn_la_alloc(p * q, sizeof(double)), w->pu = tn_la_alloc(p * q, sizeof(double));
    w->qv = tn_la_alloc(q * q, sizeof(double)), w->work = tn_la_alloc(q, sizeof(double));
    return w->mt && w->pu && w->qv && w->work ? TN_OK : oom();
}
static void svd_ws_free(svd_ws *w) { free(w->mt), free(w->pu), free(w->qv), free(w->work); }

/* A (m×n) = U diag(s) Vt with U m×k, Vt k×n, k = min(m, n). Returns the kernel's status. */
static int svd_thin(svd_ws *w, int64_t m, int64_t n, const double *a, double *s, double *u, double *vt) {
    bool tall = m >= n;
    int64_t p = tall ? m : n, q = tall ? n : m, k = q;
    for (int64_t i = 0; i < p; i++)
        for (int64_t j = 0; j < q; j++) w->mt[i * q + j] = tall ? a[i * n + j] : a[j * n + i];
    int st = tn_linalg_svd(p, q, w->mt, q, s, w->pu, q, w->qv, w->work);
    if (tall) {
        memcpy(u, w->pu, (size_t)(m * k) * sizeof(double));
        memcpy(vt, w->qv, (size_t)(k * n) * sizeof(double));
    } else { /* Aᵀ = P S Qᵀ: U = Q, Vt = Pᵀ */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < k; j++) u[i * k + j] = w->qv[j * q + i];
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < n; j++) vt[i * n + j] = w->pu[j * q + i];
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
    double eps = A->dtype == TN_DTYPE_FLOAT32 ? (double)FLT_EPSILON : DBL_EPSILON;
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
    TN_TRY(tn_la_need_float(api, A));
    if (hermitian) TN_TRY(tn_la_need_square(api, A, "A"));
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    int64_t batch = tn_la_batch(A->ndim, A->sizes), sz[TN_MAX_DIMS];
    double *atol = NULL, *rtol = NULL;
    tn_status st = tol_values(ts, A, batch, &atol, &rtol);
    double *a = tn_la_alloc(batch * m * n, sizeof(double)), *res = tn_la_alloc(want_pinv ? batch * n * m : batch, sizeof(double));
    double *s = tn_la_alloc(k, sizeof(double)), *u = tn_la_alloc(m * k, sizeof(double)), *vt = tn_la_alloc(k * n, sizeof(double));
    svd_ws w = {0};
    if (st == TN_OK && (!a || !res || !s || !u || !vt)) st = oom();
    if (st == TN_OK && !hermitian) st = svd_ws_init(&w, m, n);
    if (st == TN_OK) tn_la_gather(A, a);
    for (int64_t b = 0; st == TN_OK && b < batch && !tn_tensor_is_meta(A); b++) {
        double *ab = a + b * m * n;
        int bad;
        if (hermitian) { /* eigenvalues w and vectors V: A = V diag(w) Vᵀ, the lower triangle read */
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = i + 1; j < n; j++) ab[i * n + j] = ab[j * n + i];
            bad = tn_linalg_syev(n, ab, n, s, want_pinv ? u : NULL);
        } else {
            bad = svd_thin(&w, m, n, ab, s, u, vt);
        }
        if (bad) {
            st = tn_error(TN_ERR_LINALG, "%s: The algorithm failed to converge because the input matrix is ill-conditioned", api);
            break;
        }
        double smax = 0;
        for (int64_t i = 0; i < k; i++) smax = fmax(smax, fabs(s[i]));
        double tol = fmax(atol[b], rtol[b] * smax);
        if (!want_pinv) {
            int64_t r = 0;
            for (int64_t i = 0; i < k; i++) r += fabs(s[i]) > tol;
            res[b] = (double)r;
            continue;
        }
        double *pb = res + b * n * m; /* n×m */
        if (hermitian) { /* V diag(1/w) Vᵀ over |w| > tol */
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) {
                    double acc = 0;
                    for (int64_t c = 0; c < n; c++)
                        if (fabs(s[c]) > tol) acc += u[i * n + c] * u[j * n + c] / s[c];
                    pb[i * n + j] = acc;
                }
        } else { /* V diag(1/s) Uᵀ over s > tol */
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < m; j++) {
                    double acc = 0;
                    for (int64_t c = 0; c < k; c++)
                        if (s[c] > tol) acc += vt[c * n + i] * u[j * k + c] / s[c];
                    pb[i * m + j] = acc;
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
    free(atol), free(rtol), free(a), free(res), free(s), free(u), free(vt);
    svd_ws_free(&w);
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

/* aten::linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False)
 * aten::linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) */
tn_status tn_op_linalg_pinv_atol_rtol_tensor(const tn_value *args, tn_value *rets) {
    tol_spec t = tol_from_values(&args[1], &args[2]);
    tn_tensor *out = NULL;
    tn_status st = spectral_op("linalg.pinv", args[0].u.t, &t, args[3].u.b, true, &out);
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
    tn_tensor *out = NULL;
    tn_status st = spectral_op("linalg.pinv", args[0].u.t, &t, args[2].u.b, true, &out);
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
    tn_tensor *out = NULL;
    tn_status st = spectral_op("linalg.matrix_rank", args[0].u.t, &t, args[3].u.b, false, &out);
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
    tn_tensor *out = NULL;
    tn_status st = spectral_op("linalg.matrix_rank", args[0].u.t, &t, args[2].u.b, false, &out);
    return ret1(st, &out, rets);
}
tn_status tn_op_linalg_matrix_rank_tol_tensor(const tn_value *args, tn_value *rets) {
    return tn_op_linalg_matrix_rank(args, rets);
}

/* ---- lstsq ---------------------------------------------------------------------------------------- */

/* aten::linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None)
 *   -> (solution, residuals, rank, singular_values)
 * The minimum-norm least-squares solution from the SVD (what gelsd/gelss compute, and what
 * gels/gelsy give for the full-rank problems they are meant for); which of residuals, rank
 * and singular values are filled depends on the driver, as upstream's. */
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
    TN_TRY(tn_la_need_float("torch.linalg.lstsq", A));
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
    double eps = A->dtype == TN_DTYPE_FLOAT32 ? (double)FLT_EPSILON : DBL_EPSILON;
    double rcond = args[2].tag == TN_V_DOUBLE ? args[2].u.d : eps * (double)(m > n ? m : n);
    double *a = NULL, *b = NULL;
    double *x = tn_la_alloc(batch * n * nr, sizeof(double)), *res = tn_la_alloc(batch * nr, sizeof(double));
    double *sv = tn_la_alloc(batch * k, sizeof(double)), *rank = tn_la_alloc(batch, sizeof(double));
    double *u = tn_la_alloc(m * k, sizeof(double)), *vt = tn_la_alloc(k * n, sizeof(double)), *y = tn_la_alloc(k * nr, sizeof(double));
    svd_ws w = {0};
    tn_status st = x && res && sv && rank && u && vt && y ? svd_ws_init(&w, m, n) : oom();
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
        const double *ai = a + i * m * n, *bi = b + i * m * nr;
        double *s = sv + i * k;
        if (svd_thin(&w, m, n, ai, s, u, vt)) {
            st = tn_error(TN_ERR_LINALG, "torch.linalg.lstsq: The algorithm failed to converge");
            break;
        }
        double tol = d == 0 ? 0 : rcond * (k ? s[0] : 0);
        int64_t r = 0;
        for (int64_t c = 0; c < k; c++) { /* y = diag(1/s) Uᵀ b over s > tol */
            bool keep = d == 0 ? s[c] != 0 : s[c] > tol;
            r += keep;
            for (int64_t j = 0; j < nr; j++) {
                double acc = 0;
                for (int64_t q = 0; q < m && keep; q++) acc += u[q * k + c] * bi[q * nr + j];
                y[c * nr + j] = keep ? acc / s[c] : 0;
            }
        }
        rank[i] = (double)r;
        if (r < n) full_rank = false;
        double *xi = x + i * n * nr;
        for (int64_t q = 0; q < n; q++)
            for (int64_t j = 0; j < nr; j++) {
                double acc = 0;
                for (int64_t c = 0; c < k; c++) acc += vt[c * n + q] * y[c * nr + j];
                xi[q * nr + j] = acc;
            }
        for (int64_t j = 0; j < nr; j++) { /* squared residual norms of every column */
            double acc = 0;
            for (int64_t q = 0; q < m; q++) {
                double rr = -bi[q * nr + j];
                for (int64_t c = 0; c < n; c++) rr += ai[q * n + c] * xi[c * nr + j];
                acc += rr * rr;
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
        st = want_res ? tn_la_new(A->dtype, dev, vec ? nd : nd + 1, sz, res, &out[1]) : tn_la_new(A->dtype, dev, 1, &zero, NULL, &out[1]);
    }
    if (st == TN_OK) st = d == 0 ? tn_la_new(TN_DTYPE_INT64, dev, 1, &zero, NULL, &out[2]) : tn_la_new(TN_DTYPE_INT64, dev, nd, sz, rank, &out[2]);
    if (st == TN_OK) {
        sz[nd] = k;
        st = d >= 2 ? tn_la_new(A->dtype, dev, nd + 1, sz, sv, &out[3]) : tn_la_new(A->dtype, dev, 1, &zero, NULL, &out[3]);
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
    if (!low) TN_TRY(tn_la_need_float("linalg.matrix_exp", A0));
    TN_TRY(to_dtype(A0, low ? TN_DTYPE_FLOAT32 : A0->dtype, &A));
    int64_t n = A->sizes[A->ndim - 1], batch = tn_la_batch(A->ndim, A->sizes);
    double *a = tn_la_alloc(batch * n * n, sizeof(double)), *x = tn_la_alloc(batch * n * n, sizeof(double));
    double *work = tn_la_alloc(8 * n * n, sizeof(double));
    int32_t *piv = tn_la_alloc(n, sizeof(int32_t));
    tn_status st = a && x && work && piv ? TN_OK : oom();
    if (st == TN_OK) tn_la_gather(A, a);
    for (int64_t b = 0; st == TN_OK && b < batch && !tn_tensor_is_meta(A); b++)
        tn_linalg_expm(n, a + b * n * n, x + b * n * n, work, piv);
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
