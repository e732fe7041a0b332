/* spectral.c — aten::_fft_c2c, _fft_r2c and _fft_c2r: the shape logic around the FFT kernel
 * (kernels/fft.c). Each transform runs on a contiguous complex double copy of its input,
 * one dimension after another, then is scaled and cast to the result dtype once, so float32
 * and float64 results carry double-precision twiddles and sums. */
#include <math.h>
#include <string.h>

#include "kernels/fft.h"
#include "ops/dispatch.h"
#include "ops/promote.h"

/* upstream's fft_norm_mode */
enum { NORM_NONE = 0, NORM_BY_ROOT_N = 1, NORM_BY_N = 2 };

/* The kernel's element type for dtype d; false for dtypes the kernel does not convert. */
static bool fft_elem(tn_dtype d, tn_fft_elem *e) {
    switch (d) {
    case TN_DTYPE_FLOAT32: *e = TN_FFT_F32; return true;
    case TN_DTYPE_FLOAT64: *e = TN_FFT_F64; return true;
    case TN_DTYPE_COMPLEX64: *e = TN_FFT_C64; return true;
    case TN_DTYPE_COMPLEX128: *e = TN_FFT_C128; return true;
    default: return false;
    }
}

/* Wraps and checks the dims list of a kernel call (unique, in range, none of size 0: upstream
 * refuses a transform over an empty dimension, and the onesided cut of one would read past
 * the empty work buffer). */
static tn_status wrap_dims(const tn_tensor *x, const tn_value *v, int *dims, int *nd) {
    int64_t n = v->tag == TN_V_INT ? 1 : v->u.ilist.n;
    const int64_t *d = v->tag == TN_V_INT ? &v->u.i : v->u.ilist.data;
    if (n > TN_MAX_DIMS) return tn_error(TN_ERR_RUNTIME, "FFT dims must be unique");
    bool seen[TN_MAX_DIMS] = {0};
    for (int64_t k = 0; k < n; k++) {
        TN_TRY(tn_wrap_dim(d[k], x->ndim, &dims[k]));
        if (seen[dims[k]]) return tn_error(TN_ERR_RUNTIME, "FFT dims must be unique");
        seen[dims[k]] = true;
        if (x->sizes[dims[k]] == 0) return tn_error(TN_ERR_RUNTIME, "Invalid number of data points (0) specified");
    }
    *nd = (int)n;
    return TN_OK;
}

/* A contiguous complex double tensor of `sizes` holding x (cast), zero padded / trimmed
 * along every dimension to `sizes` (only the overlapping window is copied). */
static tn_status work_copy(tn_tensor *x, const int64_t *sizes, tn_tensor **out) {
    tn_tensor *w;
    tn_fft_elem e;
    bool same = true;
    for (int d = 0; d < x->ndim; d++) same = same && sizes[d] == x->sizes[d];
    if (same && fft_elem(x->dtype, &e) && tn_tensor_is_contiguous(x) && tn_tensor_data(x)) {
        /* the common case: one widening pass on the pool */
        TN_TRY(tn_tensor_empty(x->ndim, sizes, TN_DTYPE_COMPLEX128, tn_tensor_device(x), &w));
        tn_fft_widen(tn_tensor_data(w), tn_tensor_data(x), e, tn_tensor_numel(x));
        *out = w;
        return TN_OK;
    }
    TN_TRY(tn_tensor_zeros(x->ndim, sizes, TN_DTYPE_COMPLEX128, tn_tensor_device(x), &w));
    int64_t vs[TN_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) vs[d] = sizes[d] < x->sizes[d] ? sizes[d] : x->sizes[d];
    tn_tensor *dst = tn_tensor_new_view(w->storage, 0, x->ndim, vs, w->strides, w->dtype);
    tn_tensor *src = tn_tensor_new_view(x->storage, x->offset, x->ndim, vs, x->strides, x->dtype);
    tn_status st = TN_OK;
    if (!dst || !src) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
    else if (tn_tensor_numel(dst) > 0) {
        tn_value r, a[3] = {tn_value_tensor(dst), tn_value_tensor(src), tn_value_bool(false)};
        st = tn_dispatch(TN_OP_copy_, a, &r);
        if (st == TN_OK) tn_value_release(&r);
    }
    if (dst) tn_tensor_release(dst);
    if (src) tn_tensor_release(src);
    if (st != TN_OK) { tn_tensor_release(w); return st; }
    *out = w;
    return TN_OK;
}

/* In place: unnormalised transforms of contiguous complex double w along each of dims. */
static tn_status transform(tn_tensor *w, const int *dims, int nd, int sign) {
    double complex *data = tn_tensor_data(w);
    if (!data || tn_tensor_numel(w) == 0) return TN_OK;
    for (int k = 0; k < nd; k++) {
        int d = dims[k];
        int64_t n = w->sizes[d], outer = 1, inner = 1;
        if (n <= 1) continue;
        for (int j = 0; j < d; j++) outer *= w->sizes[j];
        for (int j = d + 1; j < w->ndim; j++) inner *= w->sizes[j];
        tn_fft_plan *p = tn_fft_plan_new(n);
        if (!p) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        int rc = tn_fft_lines(p, data, outer, n * inner, inner, inner, sign);
        tn_fft_plan_free(p);
        if (rc) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    return TN_OK;
}

/* The factor normalization mode `norm` applies for a transform over `count` points. */
static double norm_scale(int64_t norm, double count) {
    return norm == NORM_BY_N ? 1.0 / count : norm == NORM_BY_ROOT_N ? 1.0 / sqrt(count) : 1.0;
}

static void scale_all(tn_tensor *w, double s) {
    if (s == 1.0) return;
    double *p = tn_tensor_data(w);
    int64_t n = 2 * tn_tensor_numel(w);
    for (int64_t i = 0; p && i < n; i++) p[i] *= s;
}

/* rets[0] = src (complex double, or its real parts when `real_part`) cast to `dtype`. */
static tn_status finish(tn_tensor *src, bool real_part, tn_dtype dtype, tn_value *rets) {
    tn_tensor *from = src, *out;
    tn_fft_elem e;
    /* the common case, one narrowing pass on the pool: rows of the last dimension that lie
     * row_stride apart (the contiguous work, or its onesided cut along the last dimension) */
    int nd = src->ndim;
    int64_t n = nd ? src->sizes[nd - 1] : 1, rows = 1;
    for (int d = 0; d + 1 < nd; d++) rows *= src->sizes[d];
    int64_t row_stride = nd > 1 ? src->strides[nd - 2] : n;
    bool dense_rows = nd > 0 && tn_tensor_data(src) != NULL && src->strides[nd - 1] == 1 && row_stride >= n;
    for (int d = nd - 3; dense_rows && d >= 0; d--)
        dense_rows = src->strides[d] == src->strides[d + 1] * src->sizes[d + 1];
    if (dense_rows && fft_elem(dtype, &e) && tn_dtype_is_complex(dtype) != real_part) {
        TN_TRY(tn_tensor_empty(src->ndim, src->sizes, dtype, tn_tensor_device(src), &out));
        if (rows > 0 && n > 0) tn_fft_narrow_rows(tn_tensor_data(out), e, tn_tensor_data(src), rows, n, row_stride);
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    if (real_part) {
        int64_t st[TN_MAX_DIMS];
        for (int d = 0; d < src->ndim; d++) st[d] = src->strides[d] * 2;
        from = tn_tensor_new_view(src->storage, src->offset * 2, src->ndim, src->sizes, st, TN_DTYPE_FLOAT64);
        if (!from) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    } else {
        tn_tensor_retain(from);
    }
    tn_status st = tn_tensor_empty(src->ndim, src->sizes, dtype, tn_tensor_device(src), &out);
    if (st == TN_OK && tn_tensor_numel(out) > 0) {
        tn_value r, a[3] = {tn_value_tensor(out), tn_value_tensor(from), tn_value_bool(false)};
        st = tn_dispatch(TN_OP_copy_, a, &r);
        if (st == TN_OK) tn_value_release(&r);
        if (st != TN_OK) tn_tensor_release(out);
    }
    tn_tensor_release(from);
    if (st == TN_OK) rets[0] = tn_value_tensor(out);
    return st;
}

static double signal_points(const tn_tensor *t, const int *dims, int nd) {
    double c = 1;
    for (int k = 0; k < nd; k++) c *= (double)t->sizes[dims[k]];
    return c;
}

/* aten::_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor */
tn_status tn_op__fft_c2c(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *w;
    if (!tn_dtype_is_complex(x->dtype))
        return tn_error(TN_ERR_RUNTIME, "_fft_c2c expects a complex input tensor, but got %s", tn_dtype_infos[x->dtype].c10_name);
    if (x->dtype == TN_DTYPE_COMPLEX32)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::_fft_c2c of ComplexHalf tensors is not implemented by torchnative");
    int dims[TN_MAX_DIMS], nd;
    TN_TRY(wrap_dims(x, &args[1], dims, &nd));
    TN_TRY(work_copy(x, x->sizes, &w));
    tn_status st = transform(w, dims, nd, args[3].u.b ? -1 : 1);
    if (st == TN_OK) {
        scale_all(w, norm_scale(args[2].u.i, signal_points(x, dims, nd)));
        st = finish(w, false, x->dtype, rets);
    }
    tn_tensor_release(w);
    return st;
}

/* aten::_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor:
 * the full complex transform of real input, the last of dims cut to n/2 + 1 when onesided. */
tn_status tn_op__fft_r2c(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *w;
    if (x->dtype != TN_DTYPE_FLOAT32 && x->dtype != TN_DTYPE_FLOAT64)
        return tn_error(TN_ERR_RUNTIME, "Unsupported dtype %s", tn_dtype_infos[x->dtype].c10_name);
    int dims[TN_MAX_DIMS], nd;
    TN_TRY(wrap_dims(x, &args[1], dims, &nd));
    if (nd == 0) return tn_error(TN_ERR_RUNTIME, "_fft_r2c must transform at least one axis");
    TN_TRY(work_copy(x, x->sizes, &w));
    tn_status st = transform(w, dims, nd, -1);
    if (st == TN_OK) {
        scale_all(w, norm_scale(args[2].u.i, signal_points(x, dims, nd)));
        tn_tensor *v = w;
        if (args[3].u.b) {
            int last = dims[nd - 1];
            int64_t sz[TN_MAX_DIMS];
            memcpy(sz, w->sizes, sizeof(int64_t) * (size_t)w->ndim);
            sz[last] = w->sizes[last] / 2 + 1;
            v = tn_tensor_new_view(w->storage, 0, w->ndim, sz, w->strides, w->dtype);
        }
        st = v ? finish(v, false, tn_dtype_to_complex(x->dtype), rets) : tn_error(TN_ERR_NO_MEMORY, "out of memory");
        if (v && v != w) tn_tensor_release(v);
    }
    tn_tensor_release(w);
    return st;
}

/* aten::_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor:
 * inverse transforms over dims, the last one Hermitian: its first last_dim_size/2 + 1
 * entries are read, the rest is their conjugate mirror, and the real parts are the result. */
tn_status tn_op__fft_c2r(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *w;
    if (!tn_dtype_is_complex(x->dtype))
        return tn_error(TN_ERR_RUNTIME, "_fft_c2r expects a complex input tensor, but got %s", tn_dtype_infos[x->dtype].c10_name);
    if (x->dtype == TN_DTYPE_COMPLEX32)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::_fft_c2r of ComplexHalf tensors is not implemented by torchnative");
    int dims[TN_MAX_DIMS], nd;
    TN_TRY(wrap_dims(x, &args[1], dims, &nd));
    if (nd == 0) return tn_error(TN_ERR_RUNTIME, "_fft_c2r must transform at least one axis");
    int64_t L = args[3].u.i;
    if (L < 1) return tn_error(TN_ERR_RUNTIME, "Invalid number of data points (%lld) specified", (long long)L);
    int last = dims[nd - 1];
    int64_t sz[TN_MAX_DIMS];
    memcpy(sz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    int64_t half = L / 2 + 1;
    /* upstream's kernel accepts the half spectrum or a full one (whose upper part it ignores) */
    if (x->sizes[last] != half && x->sizes[last] != L)
        return tn_error(TN_ERR_RUNTIME, "_fft_c2r: the last transformed dimension has %lld entries where "
                        "last_dim_size %lld needs %lld (or %lld)", (long long)x->sizes[last], (long long)L,
                        (long long)half, (long long)L);
    sz[last] = L;
    /* only the first `half` entries of the last dimension are read */
    tn_tensor *xin = x;
    int64_t xs[TN_MAX_DIMS];
    memcpy(xs, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    if (xs[last] > half) {
        xs[last] = half;
        xin = tn_tensor_new_view(x->storage, x->offset, x->ndim, xs, x->strides, x->dtype);
        if (!xin) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    tn_status st = work_copy(xin, sz, &w);
    if (xin != x) tn_tensor_release(xin);
    TN_TRY(st);
    st = transform(w, dims, nd - 1, 1);
    double complex *p = tn_tensor_data(w);
    if (st == TN_OK && p) {
        int64_t outer = 1, inner = 1;
        for (int j = 0; j < last; j++) outer *= w->sizes[j];
        for (int j = last + 1; j < w->ndim; j++) inner *= w->sizes[j];
        for (int64_t o = 0; o < outer; o++)
            for (int64_t j = half; j < L; j++)
                for (int64_t i = 0; i < inner; i++)
                    p[(o * L + j) * inner + i] = conj(p[(o * L + (L - j)) * inner + i]);
        st = transform(w, &last, 1, 1);
    }
    if (st == TN_OK) {
        scale_all(w, norm_scale(args[2].u.i, signal_points(w, dims, nd)));
        st = finish(w, true, tn_dtype_to_real(x->dtype), rets);
    }
    tn_tensor_release(w);
    return st;
}
