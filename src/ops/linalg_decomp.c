/* linalg_decomp.c — the linear-algebra operators beyond products: LU (factor, unpack,
 * solve, solve, det, slogdet, inv), Cholesky, triangular solves, Householder QR, the
 * symmetric eigenproblem and the SVD, with upstream's argument checks, shapes and error
 * messages. Each operator gathers its (broadcast) batch of matrices into float64 row-major
 * scratch, runs the kernels of src/kernels/linalg_decomp.h on every matrix, and writes the
 * results in the input's dtype (float32 is computed in float64 and rounded once). Complex
 * inputs (LU and its users, Cholesky, triangular solves) gather into complex128 scratch,
 * two doubles an element (`w` = 2 below: offsets and sizes count doubles), and run the
 * tn_linalg_z* kernels through the la_* wrappers. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/complex_math.h"
#include "kernels/linalg_decomp.h"
#include "ops/dispatch.h"
#include "ops/shape.h"

#include "ops/linalg_decomp_internal.h"

/* ---- helpers ------------------------------------------------------------------------ */

tn_status tn_la_need_float(const char *api, const tn_tensor *t) {
    tn_dtype d = t->dtype;
    if (d == TN_DTYPE_FLOAT32 || d == TN_DTYPE_FLOAT64) return TN_OK;
    if (tn_dtype_is_complex(d) && d != TN_DTYPE_COMPLEX32)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "%s of complex tensors is not implemented by torchnative", api);
    if (tn_dtype_is_floating(d) || d == TN_DTYPE_COMPLEX32) /* past upstream's check, its LAPACK kernel has no such dtype */
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", api, tn_dtype_infos[d].c10_name);
    return tn_error(TN_ERR_RUNTIME, "%s: Expected a floating point or complex tensor as input. Got %s", api,
                    tn_dtype_infos[d].c10_name);
}

tn_status tn_la_need_float_or_complex(const char *api, const tn_tensor *t) {
    tn_dtype d = t->dtype;
    return d == TN_DTYPE_COMPLEX64 || d == TN_DTYPE_COMPLEX128 ? TN_OK : tn_la_need_float(api, t);
}

tn_status tn_la_need_float_lp(const char *api, const tn_tensor *t) {
    tn_dtype d = t->dtype;
    if (d == TN_DTYPE_FLOAT16 || d == TN_DTYPE_BFLOAT16 || d == TN_DTYPE_COMPLEX32)
        return tn_error(TN_ERR_RUNTIME, "%s: Low precision dtypes not supported. Got %s", api, tn_dtype_infos[d].c10_name);
    return tn_la_need_float(api, t);
}

tn_status tn_la_need_float_kernel(const char *kernel, const tn_tensor *t) {
    tn_dtype d = t->dtype;
    if (d == TN_DTYPE_FLOAT32 || d == TN_DTYPE_FLOAT64) return TN_OK;
    if (tn_dtype_is_complex(d))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "%s of complex tensors is not implemented by torchnative", kernel);
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tn_dtype_infos[d].c10_name);
}

tn_status tn_la_need_float_kernel_or_complex(const char *kernel, const tn_tensor *t) {
    tn_dtype d = t->dtype;
    return d == TN_DTYPE_COMPLEX64 || d == TN_DTYPE_COMPLEX128 ? TN_OK : tn_la_need_float_kernel(kernel, t);
}

tn_status tn_la_need_matrix(const char *api, const tn_tensor *t, const char *name) {
    if (t->ndim < 2)
        return tn_error(TN_ERR_RUNTIME, "%s: The input tensor %s must have at least 2 dimensions.", api, name);
    return TN_OK;
}

tn_status tn_la_need_square(const char *api, const tn_tensor *t, const char *name) {
    TN_TRY(tn_la_need_matrix(api, t, name));
    int64_t m = t->sizes[t->ndim - 2], n = t->sizes[t->ndim - 1];
    if (m != n)
        return tn_error(TN_ERR_RUNTIME, "%s: %s must be batches of square matrices, but they are %lld by %lld matrices",
                        api, name, (long long)m, (long long)n);
    return TN_OK;
}

int64_t tn_la_batch(int ndim, const int64_t *sizes) {
    int64_t b = 1;
    bool over = false;
    for (int i = 0; i < ndim - 2; i++) {
        if (sizes[i] == 0) return 0;
        over |= __builtin_mul_overflow(b, sizes[i], &b);
    }
    return over ? INT64_MAX : b; /* saturated, as tn_tensor_numel: tn_la_check_numel then refuses it */
}

void tn_la_gather(const tn_tensor *t, double *dst) {
    const char *base = tn_tensor_data(t);
    int64_t n = tn_tensor_numel(t);
    if (!base || n == 0) return;
    /* complex: (re, im) pairs, read as a real tensor of pairs (w reals an element) */
    int nd = t->ndim, w = tn_dtype_is_complex(t->dtype) ? 2 : 1;
    bool single = t->dtype == TN_DTYPE_FLOAT32 || t->dtype == TN_DTYPE_COMPLEX64;
    int64_t len = nd ? t->sizes[nd - 1] : 1, st = nd ? t->strides[nd - 1] * w : 0, rows = n / len;
    int64_t idx[TN_MAX_DIMS] = {0}, off = 0; /* the row's first element, in reals */
    for (int64_t r = 0; r < rows; r++, dst += len * w) {
        /* one row at a time, typed (the innermost loop a plain copy when contiguous) */
        if (single) {
            const float *s = (const float *)base + off;
            if (w == 1 && st == 1)
                for (int64_t e = 0; e < len; e++) dst[e] = s[e];
            else
                for (int64_t e = 0; e < len; e++)
                    for (int p = 0; p < w; p++) dst[e * w + p] = s[e * st + p];
        } else {
            const double *s = (const double *)base + off;
            if (st == w) memcpy(dst, s, sizeof(double) * (size_t)(len * w));
            else
                for (int64_t e = 0; e < len; e++)
                    for (int p = 0; p < w; p++) dst[e * w + p] = s[e * st + p];
        }
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < t->sizes[d]) { off += t->strides[d] * w; break; }
            off -= (idx[d] - 1) * t->strides[d] * w;
            idx[d] = 0;
        }
    }
}

tn_status tn_la_gather_expanded(tn_tensor *t, int ndim, const int64_t *sizes, double **dst) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= sizes[i];
    n *= tn_la_w(t->dtype);
    *dst = calloc((size_t)(n ? n : 1), sizeof(double));
    if (!*dst) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_tensor *e;
    tn_status st = tn_shape_expand_view(t, ndim, sizes, &e);
    if (st != TN_OK) { free(*dst); *dst = NULL; return st; }
    tn_la_gather(e, *dst);
    tn_tensor_release(e);
    return TN_OK;
}

tn_status tn_la_new(tn_dtype dt, tn_device dev, int ndim, const int64_t *sizes, const double *src, tn_tensor **out) {
    TN_TRY(tn_tensor_empty(ndim, sizes, dt, dev, out));
    void *p = tn_tensor_data(*out);
    int64_t n = tn_tensor_numel(*out);
    if (!p || !src) return TN_OK;
    if (dt == TN_DTYPE_FLOAT32)
        for (int64_t i = 0; i < n; i++) ((float *)p)[i] = (float)src[i];
    else if (dt == TN_DTYPE_FLOAT64)
        memcpy(p, src, (size_t)n * sizeof(double));
    else if (dt == TN_DTYPE_COMPLEX64)
        for (int64_t i = 0; i < 2 * n; i++) ((float *)p)[i] = (float)src[i];
    else if (dt == TN_DTYPE_COMPLEX128)
        memcpy(p, src, (size_t)n * 2 * sizeof(double));
    else if (dt == TN_DTYPE_INT32)
        for (int64_t i = 0; i < n; i++) ((int32_t *)p)[i] = (int32_t)src[i];
    else if (dt == TN_DTYPE_INT64)
        for (int64_t i = 0; i < n; i++) ((int64_t *)p)[i] = (int64_t)src[i];
    else if (dt == TN_DTYPE_BOOL)
        for (int64_t i = 0; i < n; i++) ((bool *)p)[i] = src[i] != 0;
    return TN_OK;
}

tn_status tn_la_new_i32(tn_device dev, int ndim, const int64_t *sizes, const int32_t *src, tn_tensor **out) {
    TN_TRY(tn_tensor_empty(ndim, sizes, TN_DTYPE_INT32, dev, out));
    void *p = tn_tensor_data(*out);
    if (p && src) memcpy(p, src, (size_t)tn_tensor_numel(*out) * sizeof(int32_t));
    return TN_OK;
}

void *tn_la_alloc(int64_t n, size_t size) { return calloc((size_t)(n > 0 ? n : 1), size); }

tn_status tn_la_check_numel(int64_t batch, int64_t rows, int64_t cols, int64_t w) {
    int64_t n;
    if (__builtin_mul_overflow(batch, rows, &n) || __builtin_mul_overflow(n, cols, &n) ||
        __builtin_mul_overflow(n, w * (int64_t)sizeof(double), &n))
        return tn_error(TN_ERR_RUNTIME, "Storage size calculation overflowed with sizes=[%lld, %lld]", (long long)rows,
                        (long long)cols);
    return TN_OK;
}

/* "(Batch element k): " when the input is batched, else "". */
static const char *batch_prefix(bool batched, int64_t k, char *buf, size_t len) {
    if (!batched) return "";
    snprintf(buf, len, "(Batch element %lld): ", (long long)k);
    return buf;
}

/* The first batch element with a nonzero info, or -1. */
static int64_t first_failure(const int32_t *info, int64_t batch) {
    for (int64_t b = 0; b < batch; b++)
        if (info[b] != 0) return b;
    return -1;
}

static tn_status singular_inv(const char *api, bool batched, int64_t b, int32_t info) {
    char pb[48];
    return tn_error(TN_ERR_LINALG,
                    "%s: %sThe diagonal element %d is zero, the inversion could not be completed because the input "
                    "matrix is singular.",
                    api, batch_prefix(batched, b, pb, sizeof pb), (int)info);
}

static tn_status not_pd(const char *api, bool batched, int64_t b, int32_t info) {
    char pb[48];
    return tn_error(TN_ERR_LINALG,
                    "%s: %sThe factorization could not be completed because the input is not positive-definite (the "
                    "leading minor of order %d is not positive-definite).",
                    api, batch_prefix(batched, b, pb, sizeof pb), (int)info);
}

static tn_status set_rets(tn_value *rets, int n, tn_tensor **ts) {
    for (int i = 0; i < n; i++) rets[i] = tn_value_tensor(ts[i]);
    return TN_OK;
}
static void release_all(int n, tn_tensor **ts) {
    for (int i = 0; i < n; i++)
        if (ts[i]) tn_tensor_release(ts[i]), ts[i] = NULL;
}

/* sizes with the last two replaced (batch dims of t + (r, c)); returns ndim */
static inline int mat_sizes(const tn_tensor *t, int64_t r, int64_t c, int64_t *out) {
    int nd = t->ndim;
    for (int i = 0; i < nd - 2; i++) out[i] = t->sizes[i];
    out[nd - 2] = r, out[nd - 1] = c;
    return nd;
}
/* batch dims of t + (k) */
static int vec_sizes(const tn_tensor *t, int64_t k, int64_t *out) {
    int nd = t->ndim;
    for (int i = 0; i < nd - 2; i++) out[i] = t->sizes[i];
    out[nd - 2] = k;
    return nd - 1;
}

/* ---- the kernels over real or complex scratch (z: the buffers hold complex128) ---------- */

typedef double _Complex zdouble;
static int64_t la_lu(bool z, int64_t m, int64_t n, double *a, int64_t ld, int32_t *piv) {
    return z ? tn_linalg_zlu(m, n, (zdouble *)a, ld, piv) : tn_linalg_lu(m, n, a, ld, piv);
}
/* adjoint: the conjugate transpose (the transpose for real) */
static void la_lu_solve(bool z, int64_t n, const double *lu, int64_t ldlu, const int32_t *piv, bool adjoint,
                        int64_t nrhs, double *b, int64_t ld) {
    if (z) tn_linalg_zlu_solve(n, (const zdouble *)lu, ldlu, piv, adjoint, nrhs, (zdouble *)b, ld);
    else tn_linalg_lu_solve(n, lu, ldlu, piv, adjoint, nrhs, b, ld);
}
/* conj: T's entries conjugated (no-op for real) */
static void la_trsm(bool z, int64_t n, int64_t nrhs, const double *t, int64_t trs, int64_t tcs, bool upper, bool unit,
                    bool cj, double *b, int64_t ld) {
    if (z) tn_linalg_ztrsm(n, nrhs, (const zdouble *)t, trs, tcs, upper, unit, cj, (zdouble *)b, ld);
    else tn_linalg_trsm(n, nrhs, t, trs, tcs, upper, unit, b, ld);
}
static int64_t la_cholesky(bool z, int64_t n, double *a, int64_t ld) {
    return z ? tn_linalg_zcholesky(n, (zdouble *)a, ld) : tn_linalg_cholesky(n, a, ld);
}

/* ---- LU ------------------------------------------------------------------------------ */

/* Factors every matrix of A: LU (float64, batch×m×n), pivots, info (owned by the caller). */
static tn_status lu_batch(const tn_tensor *A, double **lu, int32_t **piv, int32_t **info) {
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    int64_t batch = tn_la_batch(A->ndim, A->sizes), w = tn_la_w(A->dtype);
    *lu = tn_la_alloc(batch * m * n * w, sizeof(double));
    *piv = tn_la_alloc(batch * k, sizeof(int32_t));
    *info = tn_la_alloc(batch, sizeof(int32_t));
    if (!*lu || !*piv || !*info) {
        free(*lu), free(*piv), free(*info);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    tn_la_gather(A, *lu);
    if (tn_tensor_is_meta(A)) return TN_OK;
    for (int64_t b = 0; b < batch; b++)
        (*info)[b] = (int32_t)la_lu(w == 2, m, n, *lu + b * m * n * w, n, *piv + b * k);
    return TN_OK;
}

static tn_status lu_factor_common(const char *api, tn_tensor *A, bool pivot, tn_tensor **out, int32_t **info_out) {
    if (A->ndim < 2) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: %s instead",
                        tn_format_sizes(A->ndim, A->sizes, b, sizeof b));
    }
    if (tn_la_need_float_kernel_or_complex("lu_cpu", A) != TN_OK)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"lu_cpu\" not implemented for '%s'", tn_dtype_infos[A->dtype].c10_name);
    /* upstream's kernel refuses only when it runs: an empty input factors without it */
    if (!pivot && tn_tensor_numel(A) != 0)
        return tn_error(TN_ERR_RUNTIME, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
    double *lu;
    int32_t *piv, *info;
    TN_TRY(lu_batch(A, &lu, &piv, &info));
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n, sz[TN_MAX_DIMS];
    tn_device dev = tn_tensor_device(A);
    tn_status st = tn_la_new(A->dtype, dev, A->ndim, A->sizes, lu, &out[0]);
    if (st == TN_OK) st = tn_la_new_i32(dev, vec_sizes(A, k, sz), sz, piv, &out[1]);
    if (st == TN_OK) st = tn_la_new_i32(dev, A->ndim - 2, A->sizes, info, &out[2]);
    free(lu), free(piv);
    if (st != TN_OK) { free(info); release_all(3, out); return st; }
    *info_out = info;
    return TN_OK;
}

static tn_status lu_factor_check(const char *api, const tn_tensor *A, const int32_t *info) {
    int64_t batch = tn_la_batch(A->ndim, A->sizes), b = first_failure(info, batch);
    if (b < 0) return TN_OK;
    char pb[48];
    return tn_error(TN_ERR_RUNTIME,
                    "%s: %sU[%d,%d] is zero and using it on lu_solve would result in a division by zero. If you still "
                    "want to perform the factorization, consider calling linalg.lu(A, pivot) or "
                    "linalg.lu_factor_ex(A, pivot)",
                    api, batch_prefix(A->ndim > 2, b, pb, sizeof pb), info[b], info[b]);
}

/* aten::linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> (LU, pivots, info) */
tn_status tn_op_linalg_lu_factor_ex(const tn_value *args, tn_value *rets) {
    tn_tensor *out[3] = {0};
    int32_t *info;
    TN_TRY(lu_factor_common("torch.linalg.lu_factor_ex", args[0].u.t, args[1].u.b, out, &info));
    tn_status st = args[2].u.b ? lu_factor_check("torch.linalg.lu_factor_ex", args[0].u.t, info) : TN_OK;
    free(info);
    if (st != TN_OK) { release_all(3, out); return st; }
    return set_rets(rets, 3, out);
}

/* aten::linalg_lu_factor(Tensor A, *, bool pivot=True) -> (LU, pivots) */
tn_status tn_op_linalg_lu_factor(const tn_value *args, tn_value *rets) {
    tn_tensor *out[3] = {0};
    int32_t *info;
    TN_TRY(lu_factor_common("torch.linalg.lu_factor", args[0].u.t, args[1].u.b, out, &info));
    tn_status st = lu_factor_check("torch.linalg.lu_factor", args[0].u.t, info);
    free(info);
    tn_tensor_release(out[2]);
    if (st != TN_OK) { release_all(2, out); return st; }
    return set_rets(rets, 2, out);
}

/* aten::_lu_with_info(Tensor self, bool pivot=True, bool check_errors=True) -> (LU, pivots, info) */
tn_status tn_op__lu_with_info(const tn_value *args, tn_value *rets) {
    tn_tensor *out[3] = {0};
    int32_t *info;
    TN_TRY(lu_factor_common("torch.linalg.lu_factor_ex", args[0].u.t, args[1].u.b, out, &info));
    free(info);
    return set_rets(rets, 3, out);
}

/* P, L, U from LU factors (float64 batch×m×n) and pivots: P m×m, L m×k, U k×n. */
static tn_status unpack(const tn_tensor *like, int nd, const int64_t *bsz, int64_t batch, int64_t m, int64_t n,
                        const double *lu, const int32_t *piv, bool data, bool pivots, tn_tensor **out) {
    int64_t k = m < n ? m : n, sz[TN_MAX_DIMS], zero = 0;
    tn_device dev = tn_tensor_device(like);
    tn_dtype dt = like->dtype;
    int64_t w = tn_la_w(dt);
    memcpy(sz, bsz, sizeof(int64_t) * (nd - 2));
    tn_status st = TN_OK;
    if (pivots) {
        double *P = tn_la_alloc(batch * m * m * w, sizeof(double));
        int64_t *perm = tn_la_alloc(m, sizeof(int64_t));
        if (!P || !perm) { free(P), free(perm); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
        for (int64_t b = 0; b < batch && lu; b++) {
            for (int64_t i = 0; i < m; i++) perm[i] = i;
            for (int64_t i = 0; i < k; i++) {
                int64_t p = piv[b * k + i] - 1, t;
                if (p < 0 || p >= m) continue;
                t = perm[i], perm[i] = perm[p], perm[p] = t;
            }
            /* A = P L U: row i of L U is row perm[i] of A, so P[perm[i]][i] = 1 */
            for (int64_t i = 0; i < m; i++) P[(b * m * m + perm[i] * m + i) * w] = 1;
        }
        sz[nd - 2] = m, sz[nd - 1] = m;
        st = tn_la_new(dt, dev, nd, sz, P, &out[0]);
        free(P), free(perm);
    } else {
        st = tn_la_new(dt, dev, 1, &zero, NULL, &out[0]);
    }
    if (st != TN_OK) return st;
    if (!data) {
        st = tn_la_new(dt, dev, 1, &zero, NULL, &out[1]);
        if (st == TN_OK) st = tn_la_new(dt, dev, 1, &zero, NULL, &out[2]);
        if (st != TN_OK) release_all(3, out);
        return st;
    }
    double *L = tn_la_alloc(batch * m * k * w, sizeof(double)), *U = tn_la_alloc(batch * k * n * w, sizeof(double));
    if (!L || !U) { free(L), free(U); release_all(3, out); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    for (int64_t b = 0; b < batch && lu; b++) {
        const double *a = lu + b * m * n * w;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < k; j++) {
                double *l = L + (b * m * k + i * k + j) * w; /* zeros from the calloc */
                if (i == j) l[0] = 1.0;
                else if (i > j) memcpy(l, a + (i * n + j) * w, (size_t)w * sizeof(double));
            }
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = i; j < n; j++) memcpy(U + (b * k * n + i * n + j) * w, a + (i * n + j) * w, (size_t)w * sizeof(double));
    }
    sz[nd - 2] = m, sz[nd - 1] = k;
    st = tn_la_new(dt, dev, nd, sz, L, &out[1]);
    sz[nd - 2] = k, sz[nd - 1] = n;
    if (st == TN_OK) st = tn_la_new(dt, dev, nd, sz, U, &out[2]);
    free(L), free(U);
    if (st != TN_OK) release_all(3, out);
    return st;
}

/* aten::linalg_lu(Tensor A, *, bool pivot=True) -> (P, L, U) */
tn_status tn_op_linalg_lu(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *out[3] = {0};
    if (A->ndim < 2) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "linalg.lu: Expected tensor with 2 or more dimensions. Got size: %s instead",
                        tn_format_sizes(A->ndim, A->sizes, b, sizeof b));
    }
    if (tn_la_need_float_kernel_or_complex("lu_cpu", A) != TN_OK)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"lu_cpu\" not implemented for '%s'", tn_dtype_infos[A->dtype].c10_name);
    if (!args[1].u.b) return tn_error(TN_ERR_RUNTIME, "linalg.lu: LU without pivoting is not implemented on the CPU");
    double *lu;
    int32_t *piv, *info;
    TN_TRY(lu_batch(A, &lu, &piv, &info));
    int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    tn_status st = unpack(A, A->ndim, A->sizes, tn_la_batch(A->ndim, A->sizes), m, n, !tn_tensor_is_meta(A) ? lu : NULL,
                          piv, true, true, out);
    free(lu), free(piv), free(info);
    TN_TRY(st);
    return set_rets(rets, 3, out);
}

/* aten::lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True) -> (P, L, U) */
tn_status tn_op_lu_unpack(const tn_value *args, tn_value *rets) {
    tn_tensor *LU = args[0].u.t, *pv = args[1].u.t, *out[3] = {0};
    if (LU->ndim < 2)
        return tn_error(TN_ERR_RUNTIME,
                        "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: [%lld] instead",
                        (long long)(LU->ndim ? LU->sizes[0] : 0));
    if (LU->dtype == TN_DTYPE_COMPLEX32) return tn_la_need_float("torch.lu_unpack", LU);
    if (tn_la_need_float_kernel_or_complex("lu_unpack", LU) != TN_OK) { /* any real dtype: unpacked in float64, cast back */
        tn_tensor *f, *o[3] = {0};
        tn_value ta[7] = {args[0], {.tag = TN_V_DTYPE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE},
                          tn_value_bool(false), {.tag = TN_V_NONE}};
        ta[1].u.dtype = TN_DTYPE_FLOAT64;
        TN_TRY(tn_dispatch_one(TN_OP__to_copy, ta, &f));
        tn_value ua[4] = {tn_value_tensor(f), args[1], args[2], args[3]}, ur[3];
        tn_status st = tn_op_lu_unpack(ua, ur);
        tn_tensor_release(f);
        TN_TRY(st);
        for (int i = 0; i < 3; i++) {
            ta[0] = ur[i], ta[1].u.dtype = LU->dtype;
            if (st == TN_OK) st = tn_dispatch_one(TN_OP__to_copy, ta, &o[i]);
            tn_value_release(&ur[i]);
        }
        if (st != TN_OK) { release_all(3, o); return st; }
        return set_rets(rets, 3, o);
    }
    int64_t m = LU->sizes[LU->ndim - 2], n = LU->sizes[LU->ndim - 1], k = m < n ? m : n;
    if (pv->dtype != TN_DTYPE_INT32)
        return tn_error(TN_ERR_RUNTIME, "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.\n"
                                        "Note: this function is intended to be used with the output produced by torch.linalg.lu_factor");
    /* the batch dims too: upstream does not check them and reads past the pivots (a wrong
     * permutation, or heap corruption for an expanded LU: RELIABILITY "Where upstream itself
     * fails"); ours copied batch * k pivots out of a smaller tensor */
    bool pv_ok = pv->ndim == LU->ndim - 1 && pv->sizes[pv->ndim - 1] == k;
    for (int i = 0; pv_ok && i < LU->ndim - 2; i++) pv_ok = pv->sizes[i] == LU->sizes[i];
    if (!pv_ok) return tn_error(TN_ERR_RUNTIME, "torch.lu_unpack: LU_pivots must have shape batch + (min(m, n),)");
    int64_t batch = tn_la_batch(LU->ndim, LU->sizes);
    double *lu = tn_la_alloc(batch * m * n * tn_la_w(LU->dtype), sizeof(double));
    int32_t *piv = tn_la_alloc(batch * k, sizeof(int32_t));
    if (!lu || !piv) { free(lu), free(piv); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    tn_la_gather(LU, lu);
    tn_tensor *pc; /* any integer dtype of pivots, read as int32 */
    tn_value ta[7] = {tn_value_tensor(pv), {.tag = TN_V_DTYPE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE},
                      {.tag = TN_V_NONE}, tn_value_bool(false), {.tag = TN_V_MEMFMT}};
    ta[1].u.dtype = TN_DTYPE_INT32, ta[6].u.memfmt = 0;
    tn_status st = tn_dispatch_one(TN_OP__to_copy, ta, &pc);
    if (st == TN_OK) {
        if (!tn_tensor_is_meta(pc) && batch * k != 0) memcpy(piv, tn_tensor_data(pc), (size_t)(batch * k) * sizeof(int32_t));
        tn_tensor_release(pc);
        st = unpack(LU, LU->ndim, LU->sizes, batch, m, n, !tn_tensor_is_meta(LU) ? lu : NULL, piv, args[2].u.b,
                    args[3].u.b, out);
    }
    free(lu), free(piv);
    TN_TRY(st);
    return set_rets(rets, 3, out);
}

/* Solves op(A_b) X = B_b for every batch element; A factored in lu/piv (batch_a each),
 * B float64 batch×n×nrhs in place. Batch dims already broadcast by the caller. */
static void lu_solve_all(int64_t w, int64_t batch, int64_t n, int64_t nrhs, const double *lu, const int32_t *piv,
                         bool adjoint, double *B) {
    for (int64_t b = 0; b < batch; b++)
        la_lu_solve(w == 2, n, lu + b * n * n * w, n, piv + b * n, adjoint, nrhs, B + b * n * nrhs * w, nrhs);
}

/* Broadcast batch shape of a's and b's batch dims (matrices). */
static tn_status batch_broadcast(const tn_tensor *a, int a_mat, const tn_tensor *b, int b_mat, int *nd, int64_t *out) {
    return tn_shape_broadcast(a->ndim - a_mat, a->sizes, b->ndim - b_mat, b->sizes, nd, out);
}

/* Transposes the last two dims of a batch (r×c → c×r) of w doubles an element; cj (w = 2):
 * the conjugate transpose. */
static void transpose_batch(int64_t w, bool cj, int64_t batch, int64_t r, int64_t c, const double *src, double *dst) {
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < r; i++)
            for (int64_t j = 0; j < c; j++) {
                const double *e = src + (b * r * c + i * c + j) * w;
                double *d = dst + (b * r * c + j * r + i) * w;
                d[0] = e[0];
                if (w == 2) d[1] = cj ? -e[1] : e[1];
            }
}
/* Conjugates n complex elements (re, im pairs) in place. */
static void conj_all(int64_t n, double *x) {
    for (int64_t i = 0; i < n; i++) x[2 * i + 1] = -x[2 * i + 1];
}

/* X solving A X = B (left) or X A = B (right), A given by LU factors gathered on the
 * broadcast batch. Writes result tensor. */
static tn_status lu_solve_impl(const char *api, tn_tensor *LU, tn_tensor *pv, tn_tensor *B, bool left, bool adjoint,
                               tn_tensor **out) {
    TN_TRY(tn_la_need_square(api, LU, "A"));
    TN_TRY(tn_la_need_matrix("torch.linalg.lu_solve", B, "B"));
    if (pv->dtype != TN_DTYPE_INT32)
        return tn_error(TN_ERR_RUNTIME, "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32");
    int64_t n = LU->sizes[LU->ndim - 1];
    int64_t br = B->sizes[B->ndim - 2], bc = B->sizes[B->ndim - 1];
    if ((left ? br : bc) != n)
        return tn_error(TN_ERR_RUNTIME, "linalg.lu_solve: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
                        left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)br, (long long)bc);
    if (LU->dtype != B->dtype)
        return tn_error(TN_ERR_RUNTIME, "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type %s and B of type %s instead",
                        tn_dtype_infos[LU->dtype].c10_name, tn_dtype_infos[B->dtype].c10_name);
    TN_TRY(tn_la_need_float_or_complex("linalg.lu_solve", LU));
    int64_t w = tn_la_w(LU->dtype);
    int nd;
    int64_t bs[TN_MAX_DIMS];
    TN_TRY(batch_broadcast(LU, 2, B, 2, &nd, bs));
    int64_t batch = 1;
    for (int i = 0; i < nd; i++) batch *= bs[i];
    int64_t sz[TN_MAX_DIMS];
    memcpy(sz, bs, sizeof(int64_t) * nd);
    sz[nd] = n, sz[nd + 1] = n;
    double *lu = NULL, *bd = NULL, *piv_d = NULL, *tmp = NULL;
    int32_t *piv = tn_la_alloc(batch * n, sizeof(int32_t));
    tn_status st = piv ? tn_la_gather_expanded(LU, nd + 2, sz, &lu) : tn_error(TN_ERR_NO_MEMORY, "out of memory");
    /* pivots broadcast as doubles (exact for int32) */
    int64_t psz[TN_MAX_DIMS];
    memcpy(psz, bs, sizeof(int64_t) * nd);
    psz[nd] = n;
    if (st == TN_OK && (pv->ndim != LU->ndim - 1 || pv->sizes[pv->ndim - 1] != n))
        st = tn_error(TN_ERR_RUNTIME, "linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots with shape [...] instead");
    if (st == TN_OK) {
        tn_tensor *pf;
        tn_value ta[7] = {tn_value_tensor(pv), {.tag = TN_V_DTYPE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE},
                          {.tag = TN_V_NONE}, tn_value_bool(false), {.tag = TN_V_NONE}};
        ta[1].u.dtype = TN_DTYPE_FLOAT64;
        st = tn_dispatch_one(TN_OP__to_copy, ta, &pf);
        if (st == TN_OK) {
            st = tn_la_gather_expanded(pf, nd + 1, psz, &piv_d);
            tn_tensor_release(pf);
        }
    }
    if (st == TN_OK)
        for (int64_t i = 0; i < batch * n; i++) piv[i] = (int32_t)piv_d[i];
    sz[nd] = br, sz[nd + 1] = bc;
    if (st == TN_OK) st = tn_la_gather_expanded(B, nd + 2, sz, &bd);
    if (st == TN_OK && !tn_tensor_is_meta(B) && !tn_tensor_is_meta(LU)) {
        if (left) {
            lu_solve_all(w, batch, n, bc, lu, piv, adjoint, bd);
        } else { /* X A = B  ⇔  Aᴴ Xᴴ = Bᴴ (and X Aᴴ = B ⇔ A Xᴴ = Bᴴ) */
            tmp = tn_la_alloc(batch * br * bc * w, sizeof(double));
            if (!tmp) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
            else {
                transpose_batch(w, true, batch, br, bc, bd, tmp);
                lu_solve_all(w, batch, n, br, lu, piv, !adjoint, tmp);
                transpose_batch(w, true, batch, bc, br, tmp, bd);
            }
        }
    }
    if (st == TN_OK) st = tn_la_new(B->dtype, tn_tensor_device(B), nd + 2, sz, bd, out);
    free(lu), free(bd), free(piv), free(piv_d), free(tmp);
    return st;
}

/* aten::linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False) -> Tensor */
tn_status tn_op_linalg_lu_solve(const tn_value *args, tn_value *rets) {
    tn_tensor *out;
    TN_TRY(lu_solve_impl("torch.linalg.lu_solve", args[0].u.t, args[1].u.t, args[2].u.t, args[3].u.b, args[4].u.b, &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor */
tn_status tn_op_lu_solve(const tn_value *args, tn_value *rets) {
    tn_tensor *out;
    TN_TRY(lu_solve_impl("torch.linalg.lu_solve", args[1].u.t, args[2].u.t, args[0].u.t, true, false, &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- solve ----------------------------------------------------------------------------- */

/* X of A X = B (left) or X A = B, with info per batch element; B may be a (batch of)
 * vector(s). out[0] = result, out[1] = info. */
static tn_status solve_impl(tn_tensor *A, tn_tensor *B, bool left, tn_tensor **out, int32_t **info_out,
                            int64_t *batch_out) {
    TN_TRY(tn_la_need_square("linalg.solve", A, "A"));
    if (A->dtype != B->dtype)
        return tn_error(TN_ERR_RUNTIME, "linalg.solve: Expected A and B to have the same dtype, but found A of type %s and B of type %s instead",
                        tn_dtype_infos[A->dtype].c10_name, tn_dtype_infos[B->dtype].c10_name);
    TN_TRY(tn_la_need_float_or_complex("linalg.solve", A));
    int64_t n = A->sizes[A->ndim - 1], w = tn_la_w(A->dtype);
    bool vec = B->ndim == 1;
    if (!vec && B->ndim == A->ndim - 1) {
        vec = true;
        for (int i = 0; i < B->ndim; i++)
            if (B->sizes[i] != A->sizes[i]) vec = false;
    }
    if (!vec && B->ndim < 2) return tn_la_need_matrix("linalg.solve", B, "B");
    int64_t br = vec ? B->sizes[B->ndim - 1] : B->sizes[B->ndim - 2], bc = vec ? 1 : B->sizes[B->ndim - 1];
    if (vec && br != n)
        return tn_error(TN_ERR_RUNTIME, "linalg.solve: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
                        left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)br, (long long)1);
    if (!vec && (left ? br : bc) != n)
        return tn_error(TN_ERR_RUNTIME, "linalg.solve: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
                        left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)br, (long long)bc);
    int nd;
    int64_t bs[TN_MAX_DIMS];
    TN_TRY(batch_broadcast(B, vec ? 1 : 2, A, 2, &nd, bs)); /* upstream names B's batch 'a' */
    int64_t batch = 1;
    for (int i = 0; i < nd; i++) batch *= bs[i];
    int64_t asz[TN_MAX_DIMS], bsz[TN_MAX_DIMS];
    memcpy(asz, bs, sizeof(int64_t) * nd), memcpy(bsz, bs, sizeof(int64_t) * nd);
    asz[nd] = n, asz[nd + 1] = n;
    bsz[nd] = br, bsz[nd + 1] = bc;
    int bnd = vec ? nd + 1 : nd + 2;
    double *a = NULL, *b = NULL, *tmp = NULL;
    int32_t *piv = tn_la_alloc(batch * n, sizeof(int32_t)), *info = tn_la_alloc(batch, sizeof(int32_t));
    tn_status st = piv && info ? tn_la_gather_expanded(A, nd + 2, asz, &a) : tn_error(TN_ERR_NO_MEMORY, "out of memory");
    if (st == TN_OK) st = tn_la_gather_expanded(B, bnd, bsz, &b);
    bool run = st == TN_OK && !tn_tensor_is_meta(A) && !tn_tensor_is_meta(B);
    /* X A = B ⇔ Aᴴ Xᴴ = Bᴴ: a vector b is its own transpose, conjugated */
    if (run && !left && !vec) {
        tmp = tn_la_alloc(batch * br * bc * w, sizeof(double));
        if (!tmp) st = tn_error(TN_ERR_NO_MEMORY, "out of memory"), run = false;
        else transpose_batch(w, true, batch, br, bc, b, tmp);
    }
    if (run && !left && vec && w == 2) conj_all(batch * n, b);
    bool z = w == 2;
    for (int64_t i = 0; run && i < batch; i++) {
        double *ai = a + i * n * n * w;
        info[i] = (int32_t)la_lu(z, n, n, ai, n, piv + i * n);
        if (left) la_lu_solve(z, n, ai, n, piv + i * n, false, bc, b + i * n * bc * w, bc);
        else if (vec) la_lu_solve(z, n, ai, n, piv + i * n, true, 1, b + i * n * w, 1);
        else la_lu_solve(z, n, ai, n, piv + i * n, true, br, tmp + i * n * br * w, br);
    }
    if (run && !left && !vec) transpose_batch(w, true, batch, bc, br, tmp, b);
    if (run && !left && vec && w == 2) conj_all(batch * n, b);
    /* info has A's own batch shape, as upstream's (it comes from A's LU factorisation, which
     * the broadcast batch repeats): each broadcast element's info lands on its A element */
    int na = A->ndim - 2;
    int64_t abatch = 1;
    for (int i = 0; i < na; i++) abatch *= A->sizes[i];
    if (st == TN_OK && abatch != batch) {
        int32_t *ia = tn_la_alloc(abatch ? abatch : 1, sizeof(int32_t));
        if (!ia) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
        for (int64_t i = 0; ia && i < batch; i++) {
            int64_t rest = i, ai = 0, mul = 1;
            for (int d = nd - 1, k = na - 1; d >= 0; d--, k--) {
                int64_t c = rest % bs[d];
                rest /= bs[d];
                if (k >= 0) { ai += (A->sizes[k] == 1 ? 0 : c) * mul; mul *= A->sizes[k]; }
            }
            ia[ai] = info[i];
        }
        if (ia) { free(info); info = ia; batch = abatch; }
    }
    if (st == TN_OK) st = tn_la_new(A->dtype, tn_tensor_device(A), bnd, bsz, b, &out[0]);
    if (st == TN_OK) st = tn_la_new_i32(tn_tensor_device(A), na, A->sizes, info, &out[1]);
    free(a), free(b), free(tmp), free(piv);
    if (st != TN_OK) { free(info); release_all(2, out); return st; }
    *info_out = info, *batch_out = batch;
    return TN_OK;
}

static tn_status solve_check(const char *api, bool batched, const int32_t *info, int64_t batch) {
    int64_t b = first_failure(info, batch);
    if (b < 0) return TN_OK;
    char pb[48];
    return tn_error(TN_ERR_LINALG, "%s: %sThe solver failed because the input matrix is singular.", api,
                    batch_prefix(batched, b, pb, sizeof pb));
}

/* aten::linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (result, info) */
tn_status tn_op_linalg_solve_ex(const tn_value *args, tn_value *rets) {
    tn_tensor *out[2] = {0};
    int32_t *info;
    int64_t batch;
    TN_TRY(solve_impl(args[0].u.t, args[1].u.t, args[2].u.b, out, &info, &batch));
    tn_status st = args[3].u.b ? solve_check("torch.linalg.solve_ex", out[1]->ndim > 0, info, batch) : TN_OK;
    free(info);
    if (st != TN_OK) { release_all(2, out); return st; }
    return set_rets(rets, 2, out);
}

/* aten::linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor */
tn_status tn_op_linalg_solve(const tn_value *args, tn_value *rets) {
    tn_tensor *out[2] = {0};
    int32_t *info;
    int64_t batch;
    TN_TRY(solve_impl(args[0].u.t, args[1].u.t, args[2].u.b, out, &info, &batch));
    tn_status st = solve_check("torch.linalg.solve", out[1]->ndim > 0, info, batch);
    free(info);
    tn_tensor_release(out[1]);
    if (st != TN_OK) { tn_tensor_release(out[0]); return st; }
    rets[0] = tn_value_tensor(out[0]);
    return TN_OK;
}

/* ---- det, slogdet, logdet -------------------------------------------------------------- */

/* The complex form of det_common's loop: det = ±∏ u_ii, sign = ±∏ u_ii/|u_ii| (upstream's
 * sgn, 0 at a zero pivot), log|det| = Σ log|u_ii|; s and d hold (re, im) pairs. */
static void det_complex(int64_t batch, int64_t n, const double *lu, const int32_t *piv, double *s, double *l,
                        double *d) {
    for (int64_t b = 0; b < batch; b++) {
        const zdouble *a = (const zdouble *)lu + b * n * n;
        zdouble sg = 1, p = 1;
        double la = 0;
        for (int64_t i = 0; i < n; i++) {
            zdouble u = a[i * n + i];
            double au = cabs(u);
            if (piv[b * n + i] != i + 1) sg = -sg, p = -p;
            p = cmul_c128(p, u);
            sg = cmul_c128(sg, au == 0 ? 0 : u / au);
            la += log(au);
        }
        if (la != la) sg = CMPLX(NAN, NAN);
        s[2 * b] = creal(sg), s[2 * b + 1] = cimag(sg), l[b] = la;
        d[2 * b] = creal(p), d[2 * b + 1] = cimag(p);
    }
}

/* sign and log|det| (or det itself) of every matrix of A, from its LU factors; sign and det
 * in A's dtype (pairs for complex), log|det| real. */
static tn_status det_common(const char *api, tn_tensor *A, double **sign, double **logabs, double **det) {
    TN_TRY(tn_la_need_square(api, A, "A"));
    if (!tn_dtype_is_complex(A->dtype) || A->dtype == TN_DTYPE_COMPLEX32) /* slogdet checks low precision first */
        TN_TRY(det ? tn_la_need_float(api, A) : tn_la_need_float_lp(api, A));
    double *lu;
    int32_t *piv, *info;
    TN_TRY(lu_batch(A, &lu, &piv, &info));
    int64_t n = A->sizes[A->ndim - 1], batch = tn_la_batch(A->ndim, A->sizes), w = tn_la_w(A->dtype);
    double *s = tn_la_alloc(batch * w, sizeof(double)), *l = tn_la_alloc(batch, sizeof(double)),
           *d = tn_la_alloc(batch * w, sizeof(double));
    if (w == 2 && s && l && d && !tn_tensor_is_meta(A)) det_complex(batch, n, lu, piv, s, l, d);
    for (int64_t b = 0; w == 1 && s && l && d && b < batch; b++) {
        double sg = 1, la = 0, p = 1;
        for (int64_t i = 0; i < n; i++) {
            double u = lu[b * n * n + i * n + i];
            if (piv[b * n + i] != i + 1) sg = -sg, p = -p;
            p *= u;
            if (u < 0) sg = -sg;
            la += log(fabs(u));
        }
        if (la == -INFINITY || la != la) { /* a zero (or nan) pivot */
            bool nan = la != la;
            s[b] = nan ? NAN : 0, l[b] = nan ? NAN : -INFINITY;
        } else {
            s[b] = sg, l[b] = la;
        }
        d[b] = p;
    }
    free(lu), free(piv), free(info);
    if (!s || !l || !d) { free(s), free(l), free(d); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    *sign = s, *logabs = l;
    if (det) *det = d;
    else free(d);
    return TN_OK;
}

static tn_status det_op(const char *api, const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *out;
    double *s, *l, *d;
    TN_TRY(det_common(api, A, &s, &l, &d));
    tn_status st = tn_la_new(A->dtype, tn_tensor_device(A), A->ndim - 2, A->sizes, d, &out);
    free(s), free(l), free(d);
    TN_TRY(st);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}
/* aten::linalg_det(Tensor A) -> Tensor ; aten::det(Tensor self) -> Tensor */
tn_status tn_op_linalg_det(const tn_value *args, tn_value *rets) { return det_op("linalg.det", args, rets); }
tn_status tn_op_det(const tn_value *args, tn_value *rets) { return det_op("linalg.det", args, rets); }

/* The real dtype of a complex one (itself for real dtypes): log|det|'s. */
static tn_dtype real_of(tn_dtype d) {
    return d == TN_DTYPE_COMPLEX64 ? TN_DTYPE_FLOAT32 : d == TN_DTYPE_COMPLEX128 ? TN_DTYPE_FLOAT64 : d;
}

static tn_status slogdet_op(const char *api, const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *out[2] = {0};
    double *s, *l;
    TN_TRY(det_common(api, A, &s, &l, NULL));
    tn_status st = tn_la_new(A->dtype, tn_tensor_device(A), A->ndim - 2, A->sizes, s, &out[0]);
    if (st == TN_OK) st = tn_la_new(real_of(A->dtype), tn_tensor_device(A), A->ndim - 2, A->sizes, l, &out[1]);
    free(s), free(l);
    if (st != TN_OK) { release_all(2, out); return st; }
    return set_rets(rets, 2, out);
}
/* aten::linalg_slogdet(Tensor A) -> (sign, logabsdet) ; aten::slogdet(Tensor self) */
tn_status tn_op_linalg_slogdet(const tn_value *args, tn_value *rets) { return slogdet_op("linalg.slogdet", args, rets); }
tn_status tn_op_slogdet(const tn_value *args, tn_value *rets) { return slogdet_op("linalg.slogdet", args, rets); }

/* aten::logdet(Tensor self) -> Tensor: log|det| where det > 0, nan where det < 0, -inf at 0;
 * complex: log(sign) + log|det|, as upstream's */
tn_status tn_op_logdet(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *out;
    double *s, *l;
    TN_TRY(det_common("logdet", A, &s, &l, NULL));
    int64_t batch = tn_la_batch(A->ndim, A->sizes);
    if (tn_dtype_is_complex(A->dtype)) { /* s becomes the result, pairs */
        for (int64_t b = 0; b < batch; b++) {
            zdouble r = clog(CMPLX(s[2 * b], s[2 * b + 1])) + l[b];
            s[2 * b] = creal(r), s[2 * b + 1] = cimag(r);
        }
        double *t = s;
        s = l, l = t;
    } else {
        for (int64_t b = 0; b < batch; b++)
            if (s[b] < 0) l[b] = NAN;
    }
    tn_status st = tn_la_new(A->dtype, tn_tensor_device(A), A->ndim - 2, A->sizes, l, &out);
    free(s), free(l);
    TN_TRY(st);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- inverse ----------------------------------------------------------------------------- */

static tn_status inv_impl(const char *api, tn_tensor *A, bool check, tn_tensor **out) {
    TN_TRY(tn_la_need_square(api, A, "A"));
    if (!tn_dtype_is_complex(A->dtype) || A->dtype == TN_DTYPE_COMPLEX32) TN_TRY(tn_la_need_float_lp("linalg.inv", A));
    double *lu;
    int32_t *piv, *info;
    TN_TRY(lu_batch(A, &lu, &piv, &info));
    int64_t n = A->sizes[A->ndim - 1], batch = tn_la_batch(A->ndim, A->sizes), w = tn_la_w(A->dtype);
    double *x = tn_la_alloc(batch * n * n * w, sizeof(double));
    tn_status st = x ? TN_OK : tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t b = 0; st == TN_OK && b < batch; b++) {
        double *xb = x + b * n * n * w;
        for (int64_t i = 0; i < n; i++) xb[(i * n + i) * w] = 1;
        if (!tn_tensor_is_meta(A)) la_lu_solve(w == 2, n, lu + b * n * n * w, n, piv + b * n, false, n, xb, n);
    }
    if (st == TN_OK && check) {
        int64_t b = first_failure(info, batch);
        if (b >= 0) st = singular_inv(api, A->ndim > 2, b, info[b]);
    }
    if (st == TN_OK) st = tn_la_new(A->dtype, tn_tensor_device(A), A->ndim, A->sizes, x, &out[0]);
    if (st == TN_OK && out[1] != NULL) { /* the caller asked for info */
        out[1] = NULL;
        st = tn_la_new_i32(tn_tensor_device(A), A->ndim - 2, A->sizes, info, &out[1]);
        if (st != TN_OK) release_all(1, out);
    }
    free(lu), free(piv), free(info), free(x);
    return st;
}

/* aten::linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (inverse, info) */
tn_status tn_op_linalg_inv_ex(const tn_value *args, tn_value *rets) {
    tn_tensor *out[2] = {NULL, (tn_tensor *)1};
    TN_TRY(inv_impl(args[1].u.b ? "linalg.inv_ex" : "linalg.inv", args[0].u.t, args[1].u.b, out));
    return set_rets(rets, 2, out);
}
/* aten::linalg_inv(Tensor A) -> Tensor ; aten::inverse(Tensor self) -> Tensor */
tn_status tn_op_linalg_inv(const tn_value *args, tn_value *rets) {
    tn_tensor *out[2] = {0};
    TN_TRY(inv_impl("linalg.inv", args[0].u.t, true, out));
    rets[0] = tn_value_tensor(out[0]);
    return TN_OK;
}
tn_status tn_op_inverse(const tn_value *args, tn_value *rets) { return tn_op_linalg_inv(args, rets); }

/* ---- Cholesky ------------------------------------------------------------------------------ */

/* L (or U = Lᴴ when upper) of every matrix, reading the lower (upper) triangle. */
static tn_status cholesky_impl(const char *api, tn_tensor *A, bool upper, tn_tensor **out, int32_t **info_out) {
    TN_TRY(tn_la_need_square(api, A, "A"));
    TN_TRY(tn_la_need_float_or_complex(api, A));
    int64_t n = A->sizes[A->ndim - 1], batch = tn_la_batch(A->ndim, A->sizes), w = tn_la_w(A->dtype);
    double *a = tn_la_alloc(batch * n * n * w, sizeof(double)), *t = tn_la_alloc(n * n * w, sizeof(double));
    int32_t *info = tn_la_alloc(batch, sizeof(int32_t));
    if (!a || !info || !t) { free(a), free(info), free(t); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    tn_la_gather(A, a);
    size_t bytes = (size_t)(n * n * w) * sizeof(double);
    for (int64_t b = 0; b < batch && !tn_tensor_is_meta(A); b++) {
        double *ab = a + b * n * n * w;
        if (upper) { /* the upper triangle read as the lower one of Aᴴ */
            transpose_batch(w, true, 1, n, n, ab, t);
            memcpy(ab, t, bytes);
        }
        info[b] = (int32_t)la_cholesky(w == 2, n, ab, n);
        if (info[b]) /* potrf leaves the original entries above the failure: tril, as upstream */
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = i + 1; j < n; j++) memset(ab + (i * n + j) * w, 0, (size_t)w * sizeof(double));
        if (upper) {
            transpose_batch(w, true, 1, n, n, ab, t);
            memcpy(ab, t, bytes);
        }
    }
    free(t);
    tn_status st = tn_la_new(A->dtype, tn_tensor_device(A), A->ndim, A->sizes, a, out);
    free(a);
    if (st != TN_OK) { free(info); return st; }
    *info_out = info;
    return TN_OK;
}

static tn_status cholesky_check(const char *api, const tn_tensor *A, const int32_t *info) {
    int64_t batch = tn_la_batch(A->ndim, A->sizes), b = first_failure(info, batch);
    return b < 0 ? TN_OK : not_pd(api, A->ndim > 2, b, info[b]);
}

/* aten::linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> (L, info) */
tn_status tn_op_linalg_cholesky_ex(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *out[2] = {0};
    int32_t *info;
    TN_TRY(cholesky_impl("linalg.cholesky_ex", A, args[1].u.b, &out[0], &info));
    tn_status st = args[2].u.b ? cholesky_check("linalg.cholesky_ex", A, info) : TN_OK;
    if (st == TN_OK) st = tn_la_new_i32(tn_tensor_device(A), A->ndim - 2, A->sizes, info, &out[1]);
    free(info);
    if (st != TN_OK) { release_all(2, out); return st; }
    return set_rets(rets, 2, out);
}

static tn_status cholesky_op(const char *api, const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *out;
    if (!strcmp(api, "cholesky")) TN_TRY(tn_la_need_float_kernel_or_complex("cholesky_cpu", A)); /* no front-end check */
    int32_t *info;
    TN_TRY(cholesky_impl(api, A, args[1].u.b, &out, &info));
    tn_status st = cholesky_check(api, A, info);
    free(info);
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}
/* aten::linalg_cholesky(Tensor self, *, bool upper=False) ; aten::cholesky(Tensor self, bool upper=False) */
tn_status tn_op_linalg_cholesky(const tn_value *args, tn_value *rets) { return cholesky_op("linalg.cholesky", args, rets); }
tn_status tn_op_cholesky(const tn_value *args, tn_value *rets) { return cholesky_op("cholesky", args, rets); }

/* aten::cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor: X with
 * (L Lᵀ) X = self, L = input2 (or Uᵀ U with U = input2 when upper). */
tn_status tn_op_cholesky_solve(const tn_value *args, tn_value *rets) {
    tn_tensor *B = args[0].u.t, *L = args[1].u.t, *out;
    bool upper = args[2].u.b;
    if (B->ndim < 2)
        return tn_error(TN_ERR_RUNTIME, "b should have at least 2 dimensions, but has %d dimensions instead", B->ndim);
    if (L->ndim < 2)
        return tn_error(TN_ERR_RUNTIME, "u should have at least 2 dimensions, but has %d dimensions instead", L->ndim);
    if (B->dtype != L->dtype)
        return tn_error(TN_ERR_RUNTIME, "Expected b and A to have the same dtype, but found b of type %s and A of type %s instead.",
                        tn_dtype_infos[B->dtype].c10_name, tn_dtype_infos[L->dtype].c10_name);
    TN_TRY(tn_la_need_square("cholesky_solve", L, "A"));
    TN_TRY(tn_la_need_float_kernel_or_complex("cholesky_solve_cpu", B));
    int64_t n = L->sizes[L->ndim - 1], br = B->sizes[B->ndim - 2], bc = B->sizes[B->ndim - 1];
    if (br != n)
        return tn_error(TN_ERR_RUNTIME, "Incompatible matrix sizes for cholesky_solve: each A matrix is %lld by %lld but each b matrix is %lld by %lld",
                        (long long)n, (long long)n, (long long)br, (long long)bc);
    int nd;
    int64_t bs[TN_MAX_DIMS], lsz[TN_MAX_DIMS], bsz[TN_MAX_DIMS];
    TN_TRY(batch_broadcast(B, 2, L, 2, &nd, bs));
    int64_t batch = 1;
    for (int i = 0; i < nd; i++) batch *= bs[i];
    memcpy(lsz, bs, sizeof(int64_t) * nd), memcpy(bsz, bs, sizeof(int64_t) * nd);
    lsz[nd] = n, lsz[nd + 1] = n, bsz[nd] = br, bsz[nd + 1] = bc;
    double *l = NULL, *b = NULL;
    tn_status st = tn_la_gather_expanded(L, nd + 2, lsz, &l);
    if (st == TN_OK) st = tn_la_gather_expanded(B, nd + 2, bsz, &b);
    int64_t w = tn_la_w(B->dtype);
    bool z = w == 2;
    for (int64_t i = 0; st == TN_OK && i < batch && !tn_tensor_is_meta(B) && !tn_tensor_is_meta(L); i++) {
        const double *li = l + i * n * n * w;
        double *bi = b + i * n * bc * w;
        if (!upper) { /* L y = b, Lᴴ x = y */
            la_trsm(z, n, bc, li, n, 1, false, false, false, bi, bc);
            la_trsm(z, n, bc, li, 1, n, true, false, true, bi, bc);
        } else { /* Uᴴ y = b, U x = y */
            la_trsm(z, n, bc, li, 1, n, false, false, true, bi, bc);
            la_trsm(z, n, bc, li, n, 1, true, false, false, bi, bc);
        }
    }
    if (st == TN_OK) st = tn_la_new(B->dtype, tn_tensor_device(B), nd + 2, bsz, b, &out);
    free(l), free(b);
    TN_TRY(st);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::cholesky_inverse(Tensor self, bool upper=False) -> Tensor: (L Lᵀ)⁻¹ (or (Uᵀ U)⁻¹) */
tn_status tn_op_cholesky_inverse(const tn_value *args, tn_value *rets) {
    tn_tensor *L = args[0].u.t, *out;
    bool upper = args[1].u.b;
    TN_TRY(tn_la_need_square("cholesky_inverse", L, "A"));
    TN_TRY(tn_la_need_float_kernel_or_complex("cholesky_inverse_cpu", L));
    int64_t n = L->sizes[L->ndim - 1], batch = tn_la_batch(L->ndim, L->sizes), w = tn_la_w(L->dtype);
    bool z = w == 2;
    double *l = tn_la_alloc(batch * n * n * w, sizeof(double)), *x = tn_la_alloc(batch * n * n * w, sizeof(double));
    if (!l || !x) { free(l), free(x); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    tn_la_gather(L, l);
    tn_status st = TN_OK;
    for (int64_t i = 0; i < batch && !tn_tensor_is_meta(L); i++) {
        const double *li = l + i * n * n * w;
        for (int64_t d = 0; d < n; d++)
            if (li[(d * n + d) * w] == 0 && (w == 1 || li[(d * n + d) * w + 1] == 0)) {
                st = singular_inv("cholesky_inverse", L->ndim > 2, i, (int32_t)(d + 1));
                break;
            }
        if (st != TN_OK) break;
        double *xi = x + i * n * n * w;
        for (int64_t d = 0; d < n; d++) xi[(d * n + d) * w] = 1;
        if (!upper) {
            la_trsm(z, n, n, li, n, 1, false, false, false, xi, n);
            la_trsm(z, n, n, li, 1, n, true, false, true, xi, n);
        } else {
            la_trsm(z, n, n, li, 1, n, false, false, true, xi, n);
            la_trsm(z, n, n, li, n, 1, true, false, false, xi, n);
        }
    }
    if (st == TN_OK) st = tn_la_new(L->dtype, tn_tensor_device(L), L->ndim, L->sizes, x, &out);
    free(l), free(x);
    TN_TRY(st);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- triangular solves ------------------------------------------------------------------------ */

/* X with op(A) X = B (left) or X op(A) = B, A triangular (upper/lower as given for A). */
static tn_status trsolve(const char *api, tn_tensor *A, tn_tensor *B, bool upper, bool left, bool trans, bool unit,
                         tn_tensor **out, tn_tensor **a_out) {
    TN_TRY(tn_la_need_square(api, A, "A"));
    int64_t n = A->sizes[A->ndim - 1], br = B->sizes[B->ndim - 2], bc = B->sizes[B->ndim - 1];
    int nd;
    int64_t bs[TN_MAX_DIMS], asz[TN_MAX_DIMS], bsz[TN_MAX_DIMS], w = tn_la_w(A->dtype);
    TN_TRY(batch_broadcast(A, 2, B, 2, &nd, bs));
    int64_t batch = 1;
    for (int i = 0; i < nd; i++) batch *= bs[i];
    memcpy(asz, bs, sizeof(int64_t) * nd), memcpy(bsz, bs, sizeof(int64_t) * nd);
    asz[nd] = n, asz[nd + 1] = n, bsz[nd] = br, bsz[nd + 1] = bc;
    double *a = NULL, *b = NULL, *t = NULL;
    tn_status st = tn_la_gather_expanded(A, nd + 2, asz, &a);
    if (st == TN_OK) st = tn_la_gather_expanded(B, nd + 2, bsz, &b);
    if (st == TN_OK && !left && !(t = tn_la_alloc(batch * br * bc * w, sizeof(double))))
        st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
    if (st == TN_OK && !tn_tensor_is_meta(A) && !tn_tensor_is_meta(B)) {
        if (!left) transpose_batch(w, false, batch, br, bc, b, t);
        for (int64_t i = 0; i < batch; i++) {
            const double *ai = a + i * n * n * w;
            /* X op(A) = B ⇔ op(A)ᵀ Xᵀ = Bᵀ (op: the plain transpose, complex too) */
            bool tr = left ? trans : !trans;
            bool up = tr ? !upper : upper;
            if (left) la_trsm(w == 2, n, bc, ai, tr ? 1 : n, tr ? n : 1, up, unit, false, b + i * n * bc * w, bc);
            else la_trsm(w == 2, n, br, ai, tr ? 1 : n, tr ? n : 1, up, unit, false, t + i * n * br * w, br);
        }
        if (!left) transpose_batch(w, false, batch, bc, br, t, b);
    }
    if (st == TN_OK) st = tn_la_new(B->dtype, tn_tensor_device(B), nd + 2, bsz, b, out);
    if (st == TN_OK && a_out) {
        st = tn_la_new(A->dtype, tn_tensor_device(A), nd + 2, asz, a, a_out);
        if (st != TN_OK) tn_tensor_release(*out);
    }
    free(a), free(b), free(t);
    return st;
}

/* aten::triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False,
 *                        bool unitriangular=False) -> (solution, cloned_coefficient) */
tn_status tn_op_triangular_solve(const tn_value *args, tn_value *rets) {
    tn_tensor *B = args[0].u.t, *A = args[1].u.t, *out[2] = {0};
    if (B->ndim < 2)
        return tn_error(TN_ERR_RUNTIME, "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has %d dimensions instead", B->ndim);
    if (A->ndim < 2)
        return tn_error(TN_ERR_RUNTIME, "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has %d dimensions instead", A->ndim);
    if (A->sizes[A->ndim - 1] != A->sizes[A->ndim - 2])
        return tn_error(TN_ERR_RUNTIME, "A must be batches of square matrices, but they are %lld by %lld matrices",
                        (long long)A->sizes[A->ndim - 2], (long long)A->sizes[A->ndim - 1]);
    if (A->sizes[A->ndim - 1] != B->sizes[B->ndim - 2])
        return tn_error(TN_ERR_RUNTIME, "Incompatible matrix sizes for triangular_solve: each A matrix is %lld by %lld but each b matrix is %lld by %lld",
                        (long long)A->sizes[A->ndim - 2], (long long)A->sizes[A->ndim - 1],
                        (long long)B->sizes[B->ndim - 2], (long long)B->sizes[B->ndim - 1]);
    if (A->dtype != B->dtype)
        return tn_error(TN_ERR_RUNTIME, "Expected b and A to have the same dtype, but found b of type %s and A of type %s instead.",
                        tn_dtype_infos[B->dtype].c10_name, tn_dtype_infos[A->dtype].c10_name);
    TN_TRY(tn_la_need_float_kernel_or_complex("triangular_solve_cpu", A));
    TN_TRY(trsolve("triangular_solve", A, B, args[2].u.b, true, args[3].u.b, args[4].u.b, &out[0], &out[1]));
    return set_rets(rets, 2, out);
}

/* aten::linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True,
 *                               bool unitriangular=False) -> Tensor */
tn_status tn_op_linalg_solve_triangular(const tn_value *args, tn_value *rets) {
    tn_tensor *A = args[0].u.t, *B = args[1].u.t, *out;
    bool left = args[3].u.b;
    TN_TRY(tn_la_need_matrix("linalg.solve_triangular", A, "A"));
    TN_TRY(tn_la_need_matrix("linalg.solve_triangular", B, "B"));
    TN_TRY(tn_la_need_square("linalg.solve_triangular", A, "A"));
    int64_t n = A->sizes[A->ndim - 1], br = B->sizes[B->ndim - 2], bc = B->sizes[B->ndim - 1];
    if ((left ? br : bc) != n)
        return tn_error(TN_ERR_RUNTIME, "linalg.solve_triangular: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
                        left ? "AX = B" : "XA = B", (long long)n, (long long)n, (long long)br, (long long)bc);
    if (A->dtype != B->dtype)
        return tn_error(TN_ERR_RUNTIME, "linalg.solve_triangular: Expected A and B to have the same dtype, but found A of type %s and B of type %s instead",
                        tn_dtype_infos[A->dtype].c10_name, tn_dtype_infos[B->dtype].c10_name);
    TN_TRY(tn_la_need_float_kernel_or_complex("triangular_solve_cpu", A));
    TN_TRY(trsolve("linalg.solve_triangular", A, B, args[2].u.b, left, false, args[4].u.b, &out, NULL));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- LDLᵀ (Bunch-Kaufman) --------------------------------------------------------------------- */

/* LD, pivots and info of every matrix (the lower triangle read; hermitian is the same for
 * real dtypes). out[0..2] */
static tn_status ldl_impl(tn_tensor *A, bool herm, tn_tensor **out, int32_t **info_out) {
    const char *api = "torch.linalg.ldl_factor_ex";
    TN_TRY(tn_la_need_square(api, A, "A"));
    TN_TRY(tn_la_need_float_or_complex(api, A));
    int64_t n = A->sizes[A->ndim - 1], batch = tn_la_batch(A->ndim, A->sizes), sz[TN_MAX_DIMS], w = tn_la_w(A->dtype);
    double *a = tn_la_alloc(batch * n * n * w, sizeof(double));
    int32_t *piv = tn_la_alloc(batch * n, sizeof(int32_t)), *info = tn_la_alloc(batch, sizeof(int32_t));
    if (!a || !piv || !info) { free(a), free(piv), free(info); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    tn_la_gather(A, a);
    bool single = A->dtype == TN_DTYPE_FLOAT32 || A->dtype == TN_DTYPE_COMPLEX64;
    for (int64_t b = 0; b < batch && !tn_tensor_is_meta(A); b++)
        info[b] = (int32_t)(w == 2 ? tn_linalg_zldl(n, (zdouble *)a + b * n * n, n, piv + b * n, single, herm)
                                   : tn_linalg_ldl(n, a + b * n * n, n, piv + b * n, single, false));
    tn_device dev = tn_tensor_device(A);
    tn_status st = tn_la_new(A->dtype, dev, A->ndim, A->sizes, a, &out[0]);
    if (st == TN_OK) st = tn_la_new_i32(dev, vec_sizes(A, n, sz), sz, piv, &out[1]);
    if (st == TN_OK) st = tn_la_new_i32(dev, A->ndim - 2, A->sizes, info, &out[2]);
    free(a), free(piv);
    if (st != TN_OK) { free(info); release_all(3, out); return st; }
    *info_out = info;
    return TN_OK;
}

static tn_status ldl_check(const char *api, const tn_tensor *A, const int32_t *info) {
    int64_t batch = tn_la_batch(A->ndim, A->sizes), b = first_failure(info, batch);
    if (b < 0) return TN_OK;
    char pb[48];
    return tn_error(TN_ERR_RUNTIME, "%s: %sThe factorization could not be completed because the block diagonal matrix D is singular (D(%d, %d) is zero).",
                    api, batch_prefix(A->ndim > 2, b, pb, sizeof pb), info[b], info[b]);
}

/* aten::linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> (LD, pivots, info) */
tn_status tn_op_linalg_ldl_factor_ex(const tn_value *args, tn_value *rets) {
    tn_tensor *out[3] = {0};
    int32_t *info;
    TN_TRY(ldl_impl(args[0].u.t, args[1].u.b, out, &info));
    tn_status st = args[2].u.b ? ldl_check("torch.linalg.ldl_factor_ex", args[0].u.t, info) : TN_OK;
    free(info);
    if (st != TN_OK) { release_all(3, out); return st; }
    return set_rets(rets, 3, out);
}

/* aten::linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (LD, pivots) */
tn_status tn_op_linalg_ldl_factor(const tn_value *args, tn_value *rets) {
    tn_tensor *out[3] = {0};
    int32_t *info;
    TN_TRY(ldl_impl(args[0].u.t, args[1].u.b, out, &info));
    tn_status st = ldl_check("torch.linalg.ldl_factor", args[0].u.t, info);
    free(info);
    tn_tensor_release(out[2]);
    if (st != TN_OK) { release_all(2, out); return st; }
    return set_rets(rets, 2, out);
}

/* aten::linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor */
tn_status tn_op_linalg_ldl_solve(const tn_value *args, tn_value *rets) {
    tn_tensor *LD = args[0].u.t, *pv = args[1].u.t, *B = args[2].u.t, *out = NULL;
    const char *api = "torch.linalg.ldl_solve";
    TN_TRY(tn_la_need_square(api, LD, "LD"));
    if (B->ndim < 2) return tn_la_need_matrix(api, B, "B");
    if (pv->dtype != TN_DTYPE_INT32 && pv->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "%s: Expected pivots to be integers. Got %s", api, tn_dtype_infos[pv->dtype].c10_name);
    if (LD->dtype != B->dtype)
        return tn_error(TN_ERR_RUNTIME, "%s: LD dtype %s does not match b dtype %s", api, tn_dtype_infos[LD->dtype].c10_name,
                        tn_dtype_infos[B->dtype].c10_name);
    TN_TRY(tn_la_need_float_or_complex(api, LD));
    int64_t n = LD->sizes[LD->ndim - 1], br = B->sizes[B->ndim - 2], bc = B->sizes[B->ndim - 1], w = tn_la_w(LD->dtype);
    bool herm = args[3].u.b;
    if (br != n)
        return tn_error(TN_ERR_RUNTIME, "Incompatible matrix sizes for %s: each A matrix is %lld by %lld but each b matrix is %lld by %lld",
                        api, (long long)n, (long long)n, (long long)br, (long long)bc);
    if (pv->ndim != LD->ndim - 1 || pv->sizes[pv->ndim - 1] != n)
        return tn_error(TN_ERR_RUNTIME, "%s: Expected LD.shape[:-1] and pivots.shape to be the same", api);
    int nd;
    int64_t bs[TN_MAX_DIMS], lsz[TN_MAX_DIMS], psz[TN_MAX_DIMS], bsz[TN_MAX_DIMS];
    TN_TRY(batch_broadcast(LD, 2, B, 2, &nd, bs));
    int64_t batch = 1;
    for (int i = 0; i < nd; i++) batch *= bs[i];
    memcpy(lsz, bs, sizeof(int64_t) * nd), memcpy(psz, bs, sizeof(int64_t) * nd), memcpy(bsz, bs, sizeof(int64_t) * nd);
    lsz[nd] = lsz[nd + 1] = n, psz[nd] = n, bsz[nd] = br, bsz[nd + 1] = bc;
    double *l = NULL, *b = NULL, *pd = NULL;
    int32_t *piv = tn_la_alloc(batch * n, sizeof(int32_t));
    tn_tensor *pf = NULL;
    tn_value ta[7] = {tn_value_tensor(pv), {.tag = TN_V_DTYPE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE},
                      {.tag = TN_V_NONE}, tn_value_bool(false), {.tag = TN_V_NONE}};
    ta[1].u.dtype = TN_DTYPE_FLOAT64;
    tn_status st = piv ? tn_dispatch_one(TN_OP__to_copy, ta, &pf) : tn_error(TN_ERR_NO_MEMORY, "out of memory");
    if (st == TN_OK) st = tn_la_gather_expanded(pf, nd + 1, psz, &pd);
    if (st == TN_OK) st = tn_la_gather_expanded(LD, nd + 2, lsz, &l);
    if (st == TN_OK) st = tn_la_gather_expanded(B, nd + 2, bsz, &b);
    if (st == TN_OK && !tn_tensor_is_meta(B)) {
        for (int64_t i = 0; i < batch * n; i++) piv[i] = (int32_t)pd[i];
        for (int64_t i = 0; i < batch * n; i++) /* pivots out of range would index outside the matrix */
            if (piv[i] == 0 || piv[i] > n || piv[i] < -n) {
                st = tn_error(TN_ERR_RUNTIME, "%s: pivots must be in [-n, -1] or [1, n] (got %d)", api, (int)piv[i]);
                break;
            }
        for (int64_t i = 0; st == TN_OK && i < batch; i++)
            if (w == 2) tn_linalg_zldl_solve(n, (zdouble *)l + i * n * n, n, piv + i * n, bc, (zdouble *)b + i * n * bc, bc, herm);
            else tn_linalg_ldl_solve(n, l + i * n * n, n, piv + i * n, bc, b + i * n * bc, bc, false);
    }
    if (st == TN_OK) st = tn_la_new(B->dtype, tn_tensor_device(B), nd + 2, bsz, b, &out);
    if (pf) tn_tensor_release(pf);
    free(l), free(b), free(pd), free(piv);
    TN_TRY(st);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}
