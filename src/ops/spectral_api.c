/* spectral_api.c — torch.fft's public operators (fft_fft ... fft_ihfftn, fftshift,
 * fftfreq) composed through the door from _fft_c2c/_fft_r2c/_fft_c2r as upstream's
 * SpectralOps.cpp composes them: argument canonicalisation, dtype promotion, zero padding
 * or trimming to n / s, normalisation modes. Autograd records the three kernels. */
#include <string.h>

#include "core/scalar.h"
#include "ops/composite_internal.h"
#include "ops/promote.h"

enum { NORM_NONE = 0, NORM_BY_ROOT_N = 1, NORM_BY_N = 2 };

/* upstream's norm_from_string: None/"backward" scale the inverse, "forward" the forward,
 * "ortho" both by 1/sqrt(n). */
static tn_status norm_mode(const tn_value *v, bool forward, int64_t *out) {
    if (v->tag == TN_V_NONE || (v->u.s.n == 8 && !memcmp(v->u.s.data, "backward", 8))) {
        *out = forward ? NORM_NONE : NORM_BY_N;
    } else if (v->u.s.n == 7 && !memcmp(v->u.s.data, "forward", 7)) {
        *out = forward ? NORM_BY_N : NORM_NONE;
    } else if (v->u.s.n == 5 && !memcmp(v->u.s.data, "ortho", 5)) {
        *out = NORM_BY_ROOT_N;
    } else {
        return tn_error(TN_ERR_RUNTIME, "Invalid normalization mode: \"%.*s\"", (int)v->u.s.n, v->u.s.data);
    }
    return TN_OK;
}

/* upstream's maybe_wrap_dim without scalar wrapping. */
static tn_status wrap_dim(const tn_tensor *x, int64_t d, int *out) { return tn_wrap_dim_strict(d, x->ndim, out); }

/* upstream's promote_tensor_fft: integers and bool become the default dtype; only Float and
 * Double (or their complexes) transform; require_complex turns reals into complex. */
static tn_tensor *promote(tn_cx *c, tn_tensor *x, bool require_complex) {
    if (!x) return NULL;
    tn_dtype d = x->dtype;
    if (!tn_dtype_is_complex(d)) {
        if (!tn_dtype_is_floating(d)) d = tn_default_dtype();
        if (d != TN_DTYPE_FLOAT32 && d != TN_DTYPE_FLOAT64) {
            tn_cx_fail(c, tn_error(TN_ERR_RUNTIME, "Unsupported dtype %s", tn_dtype_infos[d].c10_name));
            return NULL;
        }
        if (require_complex) d = tn_dtype_to_complex(d);
    } else if (d == TN_DTYPE_COMPLEX32) {
        tn_cx_fail(c, tn_error(TN_ERR_NOT_IMPLEMENTED, "torch.fft of ComplexHalf tensors is not implemented by torchnative"));
        return NULL;
    }
    if (d == x->dtype) return x;
    tn_value ta[7] = {TN_T(x), {.tag = TN_V_DTYPE}, TN_NONE, TN_NONE, TN_NONE, TN_B(false), TN_NONE};
    ta[1].u.dtype = d;
    return tn_cx_call(c, TN_OP__to_copy, ta);
}

/* upstream's resize_fft_input: each of dims trimmed or zero padded (at the end) to shape. */
static tn_tensor *resize_input(tn_cx *c, tn_tensor *x, const int *dims, const int64_t *shape, int nd) {
    if (!x) return NULL;
    int64_t pad[2 * TN_MAX_DIMS] = {0};
    bool need_pad = false;
    for (int k = 0; k < nd; k++) {
        int d = dims[k];
        if (x->sizes[d] > shape[k]) {
            x = tn_cx_call(c, TN_OP_slice_Tensor, TN_ARGS(TN_T(x), TN_I(d), TN_I(0), TN_I(shape[k]), TN_I(1)));
            if (!x) return NULL;
        } else if (x->sizes[d] < shape[k]) {
            pad[2 * (x->ndim - 1 - d) + 1] = shape[k] - x->sizes[d];
            need_pad = true;
        }
    }
    if (!need_pad) return x;
    return tn_cx_call(c, TN_OP_constant_pad_nd, TN_ARGS(TN_T(x), tn_value_intlist(pad, 2 * x->ndim), TN_I(0)));
}

static tn_tensor *conj_phys(tn_cx *c, tn_tensor *x) {
    return x ? tn_cx_call(c, TN_OP_conj_physical, TN_ARGS(TN_T(x))) : NULL;
}

static tn_value dims_value(const int *dims, int nd, int64_t *buf) {
    for (int k = 0; k < nd; k++) buf[k] = dims[k];
    return tn_value_intlist(buf, nd);
}

/* ---- one dimension ------------------------------------------------------------------ */

/* fft_c2c / fft_r2c / fft_c2r of upstream: kind 0 c2c, 1 r2c (onesided or not), 2 c2r. */
static tn_status one_dim(const tn_value *args, tn_value *rets, const char *fname, int kind, bool forward,
                         bool onesided) {
    tn_cx c = {0};
    tn_tensor *x = args[0].u.t;
    int64_t norm;
    int d;
    if (kind == 1 && tn_dtype_is_complex(x->dtype))
        return tn_error(TN_ERR_RUNTIME, "%s expects a real input tensor, but got %s", fname, tn_dtype_infos[x->dtype].c10_name);
    x = kind == 0 ? x : promote(&c, x, kind == 2);
    if (!x) return tn_cx_finish(&c, NULL, rets);
    tn_status st = wrap_dim(x, args[2].u.i, &d);
    if (st != TN_OK) { tn_cx_release(&c); return st; }
    bool has_n = args[1].tag != TN_V_NONE;
    int64_t n = has_n ? args[1].u.i : kind == 2 ? 2 * (x->sizes[d] - 1) : x->sizes[d];
    if (n < 1) {
        tn_cx_release(&c);
        return tn_error(TN_ERR_RUNTIME, "Invalid number of data points (%lld) specified", (long long)n);
    }
    if ((st = norm_mode(&args[3], forward, &norm)) != TN_OK) { tn_cx_release(&c); return st; }
    if (has_n) {
        int64_t len = kind == 2 ? n / 2 + 1 : n;
        x = resize_input(&c, x, &d, &len, 1);
    }
    int64_t db[1];
    tn_value dv = dims_value(&d, 1, db);
    tn_tensor *r;
    if (kind == 0) {
        r = tn_cx_call(&c, TN_OP__fft_c2c, TN_ARGS(TN_T(x), dv, TN_I(norm), TN_B(forward)));
    } else if (kind == 1) {
        r = tn_cx_call(&c, TN_OP__fft_r2c, TN_ARGS(TN_T(x), dv, TN_I(norm), TN_B(onesided)));
        if (!forward) r = conj_phys(&c, r); /* upstream returns a lazy conj view */
    } else {
        if (forward) x = conj_phys(&c, x);
        r = tn_cx_call(&c, TN_OP__fft_c2r, TN_ARGS(TN_T(x), dv, TN_I(norm), TN_I(n)));
    }
    return tn_cx_finish(&c, r, rets);
}

/* aten::fft_fft / fft_ifft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) */
tn_status tn_op_fft_fft(const tn_value *a, tn_value *r) {
    return tn_dtype_is_complex(a[0].u.t->dtype) ? one_dim(a, r, "fft", 0, true, false) : one_dim(a, r, "fft", 1, true, false);
}
tn_status tn_op_fft_ifft(const tn_value *a, tn_value *r) {
    return tn_dtype_is_complex(a[0].u.t->dtype) ? one_dim(a, r, "ifft", 0, false, false) : one_dim(a, r, "ifft", 1, false, false);
}
tn_status tn_op_fft_rfft(const tn_value *a, tn_value *r) { return one_dim(a, r, "rfft", 1, true, true); }
tn_status tn_op_fft_ihfft(const tn_value *a, tn_value *r) { return one_dim(a, r, "ihfft", 1, false, true); }
tn_status tn_op_fft_irfft(const tn_value *a, tn_value *r) { return one_dim(a, r, "irfft", 2, false, false); }
tn_status tn_op_fft_hfft(const tn_value *a, tn_value *r) { return one_dim(a, r, "hfft", 2, true, false); }

/* ---- n dimensions ------------------------------------------------------------------- */

typedef struct fft_desc {
    int nd;
    int dims[TN_MAX_DIMS];
    int64_t shape[TN_MAX_DIMS];
} fft_desc;

static void int_list(const tn_value *v, const int64_t **p, int64_t *n) {
    if (v->tag == TN_V_INT) { *p = &v->u.i; *n = 1; }
    else { *p = v->u.ilist.data; *n = v->u.ilist.n; }
}

/* upstream's canonicalize_fft_shape_and_dim_args: s and dim (either may be None). */
static tn_status canon(const tn_tensor *x, const tn_value *s, const tn_value *dim, fft_desc *o) {
    bool has_s = s->tag != TN_V_NONE, has_dim = dim->tag != TN_V_NONE;
    const int64_t *sp = NULL, *dp = NULL;
    int64_t ns = 0, ndv = 0;
    if (has_dim) {
        int_list(dim, &dp, &ndv);
        if (ndv > TN_MAX_DIMS) return tn_error(TN_ERR_RUNTIME, "FFT dims must be unique");
        bool seen[TN_MAX_DIMS] = {0};
        for (int64_t k = 0; k < ndv; k++) {
            TN_TRY(wrap_dim(x, dp[k], &o->dims[k]));
            if (seen[o->dims[k]]) return tn_error(TN_ERR_RUNTIME, "FFT dims must be unique");
            seen[o->dims[k]] = true;
        }
        o->nd = (int)ndv;
    }
    if (has_s) {
        int_list(s, &sp, &ns);
        if (has_dim && ndv != ns)
            return tn_error(TN_ERR_RUNTIME, "When given, dim and shape arguments must have the same length");
        if (ns > x->ndim)
            return tn_error(TN_ERR_RUNTIME, "Got shape with %lld values but input tensor only has %d dimensions.",
                            (long long)ns, x->ndim);
        if (!has_dim) {
            o->nd = (int)ns;
            for (int k = 0; k < ns; k++) o->dims[k] = x->ndim - (int)ns + k;
        }
        for (int k = 0; k < ns; k++) o->shape[k] = sp[k] == -1 ? x->sizes[o->dims[k]] : sp[k];
    } else {
        if (!has_dim) {
            o->nd = x->ndim;
            for (int k = 0; k < x->ndim; k++) o->dims[k] = k;
        }
        for (int k = 0; k < o->nd; k++) o->shape[k] = x->sizes[o->dims[k]];
    }
    for (int k = 0; k < o->nd; k++)
        if (o->shape[k] <= 0)
            return tn_error(TN_ERR_RUNTIME, "Invalid number of data points (%lld) specified", (long long)o->shape[k]);
    return TN_OK;
}

/* upstream's canonicalize_fft_c2r_shape_and_dim_args: the last dim's output length. */
static tn_status canon_c2r(const char *fname, const tn_tensor *x, const tn_value *s, const tn_value *dim,
                           fft_desc *o, int64_t *last_dim_size) {
    TN_TRY(canon(x, s, dim, o));
    if (o->nd == 0) return tn_error(TN_ERR_RUNTIME, "%s must transform at least one axis", fname);
    const int64_t *sp = NULL;
    int64_t ns = 0;
    if (s->tag != TN_V_NONE) int_list(s, &sp, &ns);
    int64_t L = (ns == 0 || sp[ns - 1] == -1) ? 2 * (x->sizes[o->dims[o->nd - 1]] - 1) : o->shape[o->nd - 1];
    if (L < 1) return tn_error(TN_ERR_RUNTIME, "Invalid number of data points (%lld) specified", (long long)L);
    o->shape[o->nd - 1] = L / 2 + 1;
    *last_dim_size = L;
    return TN_OK;
}

/* kind 0 fftn/ifftn, 1 rfftn, 2 irfftn, 3 hfftn, 4 ihfftn; args (self, s, dim, norm). */
static tn_status n_dim(const tn_value *args, tn_value *rets, const char *fname, int kind, bool forward) {
    tn_tensor *x = args[0].u.t;
    fft_desc o = {0};
    int64_t L = 0, norm, db[TN_MAX_DIMS];
    if ((kind == 1 || kind == 4) && tn_dtype_is_complex(x->dtype))
        return tn_error(TN_ERR_RUNTIME, "%s expects a real-valued input tensor, but got %s", fname,
                        tn_dtype_infos[x->dtype].c10_name);
    if (kind == 2 || kind == 3) TN_TRY(canon_c2r(fname, x, &args[1], &args[2], &o, &L));
    else TN_TRY(canon(x, &args[1], &args[2], &o));
    if ((kind == 1 || kind == 4) && o.nd == 0)
        return tn_error(TN_ERR_RUNTIME, "%s must transform at least one axis", fname);
    TN_TRY(norm_mode(&args[3], forward, &norm));
    tn_cx c = {0};
    x = promote(&c, x, kind != 1 && kind != 4);
    x = resize_input(&c, x, o.dims, o.shape, o.nd);
    tn_value dv = dims_value(o.dims, o.nd, db), lastv = dims_value(&o.dims[o.nd - (o.nd > 0)], 1, db + TN_MAX_DIMS - 1);
    tn_value restv = dims_value(o.dims, o.nd > 0 ? o.nd - 1 : 0, db);
    tn_tensor *r = NULL;
    switch (kind) {
    case 0: r = tn_cx_call(&c, TN_OP__fft_c2c, TN_ARGS(TN_T(x), dv, TN_I(norm), TN_B(forward))); break;
    case 1: r = tn_cx_call(&c, TN_OP__fft_r2c, TN_ARGS(TN_T(x), dv, TN_I(norm), TN_B(true))); break;
    case 2: r = tn_cx_call(&c, TN_OP__fft_c2r, TN_ARGS(TN_T(x), dv, TN_I(norm), TN_I(L))); break;
    case 3: {
        tn_tensor *t = o.nd > 1 ? tn_cx_call(&c, TN_OP__fft_c2c, TN_ARGS(TN_T(x), restv, TN_I(norm), TN_B(true))) : x;
        t = conj_phys(&c, t);
        r = tn_cx_call(&c, TN_OP__fft_c2r, TN_ARGS(TN_T(t), lastv, TN_I(norm), TN_I(L)));
        break;
    }
    case 4: {
        tn_tensor *t = tn_cx_call(&c, TN_OP__fft_r2c, TN_ARGS(TN_T(x), lastv, TN_I(norm), TN_B(true)));
        t = conj_phys(&c, t);
        r = o.nd > 1 ? tn_cx_call(&c, TN_OP__fft_c2c, TN_ARGS(TN_T(t), restv, TN_I(norm), TN_B(false))) : t;
        break;
    }
    }
    return tn_cx_finish(&c, r, rets);
}

/* aten::fft_fftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) and kin;
 * the 2-d spellings are the same with dim defaulting to [-2, -1]. */
tn_status tn_op_fft_fftn(const tn_value *a, tn_value *r) { return n_dim(a, r, "fftn", 0, true); }
tn_status tn_op_fft_ifftn(const tn_value *a, tn_value *r) { return n_dim(a, r, "ifftn", 0, false); }
tn_status tn_op_fft_rfftn(const tn_value *a, tn_value *r) { return n_dim(a, r, "rfftn", 1, true); }
tn_status tn_op_fft_irfftn(const tn_value *a, tn_value *r) { return n_dim(a, r, "irfftn", 2, false); }
tn_status tn_op_fft_hfftn(const tn_value *a, tn_value *r) { return n_dim(a, r, "hfftn", 3, true); }
tn_status tn_op_fft_ihfftn(const tn_value *a, tn_value *r) { return n_dim(a, r, "ihfftn", 4, false); }
tn_status tn_op_fft_fft2(const tn_value *a, tn_value *r) { return n_dim(a, r, "fftn", 0, true); }
tn_status tn_op_fft_ifft2(const tn_value *a, tn_value *r) { return n_dim(a, r, "ifftn", 0, false); }
tn_status tn_op_fft_rfft2(const tn_value *a, tn_value *r) { return n_dim(a, r, "rfftn", 1, true); }
tn_status tn_op_fft_irfft2(const tn_value *a, tn_value *r) { return n_dim(a, r, "irfftn", 2, false); }
tn_status tn_op_fft_hfft2(const tn_value *a, tn_value *r) { return n_dim(a, r, "hfftn", 3, true); }
tn_status tn_op_fft_ihfft2(const tn_value *a, tn_value *r) { return n_dim(a, r, "ihfftn", 4, false); }

/* ---- shifts and frequencies ---------------------------------------------------------- */

/* roll by size/2 (fftshift) or (size+1)/2 (ifftshift) along dim (None: every dim). */
static tn_status shift(const tn_value *args, tn_value *rets, bool inverse) {
    tn_tensor *x = args[0].u.t;
    int64_t shifts[TN_MAX_DIMS], dims[TN_MAX_DIMS], n = 0;
    if (args[1].tag == TN_V_NONE) {
        for (int d = 0; d < x->ndim; d++) dims[n++] = d;
    } else {
        const int64_t *p;
        int64_t m;
        int_list(&args[1], &p, &m);
        for (int64_t k = 0; k < m && k < TN_MAX_DIMS; k++) {
            int d;
            TN_TRY(wrap_dim(x, p[k], &d));
            dims[n++] = d;
        }
    }
    for (int64_t k = 0; k < n; k++) shifts[k] = (x->sizes[dims[k]] + (inverse ? 1 : 0)) / 2;
    tn_value ra[3] = {args[0], tn_value_intlist(shifts, n), tn_value_intlist(dims, n)};
    return tn_dispatch(TN_OP_roll, ra, rets);
}
/* aten::fft_fftshift / fft_ifftshift(Tensor self, int[1]? dim=None) */
tn_status tn_op_fft_fftshift(const tn_value *a, tn_value *r) { return shift(a, r, false); }
tn_status tn_op_fft_ifftshift(const tn_value *a, tn_value *r) { return shift(a, r, true); }

/* arange(count) in the requested (or default) dtype, the upper half shifted down by n when
 * `wrap`, times 1 / (n d). args: (n, d, dtype, layout, device, pin_memory). */
static tn_status freqs(const tn_value *args, tn_value *rets, int64_t count, bool wrap) {
    int64_t n = args[0].u.i;
    tn_cx c = {0};
    tn_value aa[5] = {TN_I(count), args[2], args[3], args[4], args[5]};
    if (aa[1].tag == TN_V_NONE) {
        aa[1].tag = TN_V_DTYPE;
        aa[1].u.dtype = tn_default_dtype();
    }
    if (!tn_dtype_is_floating(aa[1].u.dtype) && !tn_dtype_is_complex(aa[1].u.dtype))
        return tn_error(TN_ERR_RUNTIME, "%s requires a floating point or complex dtype", wrap ? "fftfreq" : "rfftfreq");
    tn_tensor *r = tn_cx_call(&c, TN_OP_arange, aa);
    if (wrap && r) {
        tn_tensor *right = tn_cx_call(&c, TN_OP_slice_Tensor, TN_ARGS(TN_T(r), TN_I(0), TN_I((n + 1) / 2), TN_NONE, TN_I(1)));
        tn_cx_call(&c, TN_OP_sub__Scalar, TN_ARGS(TN_T(right), TN_I(n), TN_I(1)));
    }
    r = tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(r), TN_D(1.0 / ((double)n * args[1].u.d))));
    return tn_cx_finish(&c, r, rets);
}
/* aten::fft_fftfreq / fft_rfftfreq(int n, float d=1., *, dtype, layout, device, pin_memory) */
tn_status tn_op_fft_fftfreq(const tn_value *a, tn_value *r) { return freqs(a, r, a[0].u.i, true); }
tn_status tn_op_fft_rfftfreq(const tn_value *a, tn_value *r) { return freqs(a, r, a[0].u.i / 2 + 1, false); }

/* ---- short-time transform ------------------------------------------------------------ */

/* aten::stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None,
 * Tensor? window=None, bool normalized=False, bool? onesided=None, bool? return_complex=None,
 * bool? align_to_window=None): frames of n_fft every hop_length (as a strided view), times
 * the window centred in n_fft, transformed along the frame; (batch,) freq x frames. The
 * centre padding of torch.stft happens in Python before this call. */
tn_status tn_op_stft(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *win = args[4].tag == TN_V_TENSOR ? args[4].u.t : NULL;
    int64_t n_fft = args[1].u.i;
    int64_t hop = args[2].tag == TN_V_NONE ? n_fft / 4 : args[2].u.i;
    int64_t wl = args[3].tag == TN_V_NONE ? n_fft : args[3].u.i;
    bool cplx_in = tn_dtype_is_complex(x->dtype) || (win && tn_dtype_is_complex(win->dtype));
    bool return_complex = args[7].tag == TN_V_NONE ? cplx_in : args[7].u.b;
    if (!return_complex && args[7].tag == TN_V_NONE)
        return tn_error(TN_ERR_RUNTIME, "stft requires the return_complex parameter be given for real inputs, and will "
                        "further require that return_complex=True in a future PyTorch release.");
    if (args[8].tag == TN_V_BOOL && args[8].u.b)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::stft with align_to_window=True is not implemented by torchnative");
    if (!tn_dtype_is_floating(x->dtype) && !tn_dtype_is_complex(x->dtype))
        return tn_error(TN_ERR_RUNTIME, "stft: expected a tensor of floating point or complex values");
    if (x->ndim != 1 && x->ndim != 2) return tn_error(TN_ERR_RUNTIME, "stft: expected a 1D or 2D tensor");
    int64_t len = x->sizes[x->ndim - 1];
    if (n_fft <= 0 || n_fft > len)
        return tn_error(TN_ERR_RUNTIME, "stft: expected 0 < n_fft < %lld, but got n_fft=%lld", (long long)len, (long long)n_fft);
    if (hop <= 0) return tn_error(TN_ERR_RUNTIME, "stft: expected hop_length > 0, but got hop_length=%lld", (long long)hop);
    if (wl <= 0 || wl > n_fft)
        return tn_error(TN_ERR_RUNTIME, "stft: expected 0 < win_length <= n_fft, but got win_length=%lld", (long long)wl);
    if (win && (win->ndim != 1 || win->sizes[0] != wl))
        return tn_error(TN_ERR_RUNTIME, "stft: expected a 1D window tensor of size equal to win_length=%lld", (long long)wl);
    bool onesided = args[6].tag == TN_V_NONE ? !cplx_in : args[6].u.b;
    if (cplx_in && onesided) return tn_error(TN_ERR_RUNTIME, "Cannot have onesided output if window or input is complex");
    tn_cx c = {0};
    tn_tensor *in = x->ndim == 1 ? tn_cx_call(&c, TN_OP_unsqueeze, TN_ARGS(TN_T(x), TN_I(0))) : x;
    tn_tensor *w = win;
    if (in && wl < n_fft) {
        /* the window centred in n_fft zeros (a window of ones when none is given) */
        int64_t left = (n_fft - wl) / 2, pad[2] = {left, n_fft - wl - left};
        tn_value oa[5] = {TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_NONE};
        int64_t one = wl;
        oa[0] = tn_value_intlist(&one, 1);
        oa[1].tag = TN_V_DTYPE;
        oa[1].u.dtype = tn_dtype_to_real(in->dtype);
        tn_tensor *base = win ? win : tn_cx_call(&c, TN_OP_ones, oa);
        w = base ? tn_cx_call(&c, TN_OP_constant_pad_nd, TN_ARGS(TN_T(base), tn_value_intlist(pad, 2), TN_I(0))) : NULL;
    }
    tn_tensor *frames = NULL;
    if (in) {
        int64_t n_frames = 1 + (len - n_fft) / hop;
        int64_t sz[3] = {in->sizes[0], n_frames, n_fft}, st[3] = {in->strides[0], hop * in->strides[1], in->strides[1]};
        frames = tn_cx_call(&c, TN_OP_as_strided, TN_ARGS(TN_T(in), tn_value_intlist(sz, 3), tn_value_intlist(st, 3), TN_I(in->offset)));
    }
    if (frames && w) frames = tn_cx_call(&c, TN_OP_mul_Tensor, TN_ARGS(TN_T(frames), TN_T(w)));
    int64_t last = 2, norm = args[5].u.b ? NORM_BY_ROOT_N : NORM_NONE;
    tn_tensor *out = NULL;
    if (frames) {
        if (tn_dtype_is_complex(frames->dtype))
            out = tn_cx_call(&c, TN_OP__fft_c2c, TN_ARGS(TN_T(frames), tn_value_intlist(&last, 1), TN_I(norm), TN_B(true)));
        else
            out = tn_cx_call(&c, TN_OP__fft_r2c, TN_ARGS(TN_T(frames), tn_value_intlist(&last, 1), TN_I(norm), TN_B(onesided)));
    }
    if (out) out = tn_cx_call(&c, TN_OP_transpose_int, TN_ARGS(TN_T(out), TN_I(1), TN_I(2)));
    if (out && x->ndim == 1) out = tn_cx_call(&c, TN_OP_squeeze_dim, TN_ARGS(TN_T(out), TN_I(0)));
    if (out && !return_complex) out = tn_cx_call(&c, TN_OP_view_as_real, TN_ARGS(TN_T(out)));
    return tn_cx_finish(&c, out, rets);
}

/* aten::istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None,
 * Tensor? window=None, bool center=True, bool normalized=False, bool? onesided=None,
 * int? length=None, bool return_complex=False): inverse transforms of each frame, windowed,
 * overlap-added (unfold_backward) and divided by the overlap-added squared window, the
 * centre padding trimmed; upstream's checks in its order. */
tn_status tn_op_istft(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *win = args[4].tag == TN_V_TENSOR ? args[4].u.t : NULL;
    int64_t n_fft = args[1].u.i;
    int64_t hop = args[2].tag == TN_V_NONE ? n_fft / 4 : args[2].u.i;
    int64_t wl = args[3].tag == TN_V_NONE ? n_fft : args[3].u.i;
    bool center = args[5].u.b, normalized = args[6].u.b, return_complex = args[9].u.b;
    if (!tn_dtype_is_complex(x->dtype))
        return tn_error(TN_ERR_RUNTIME, "istft requires a complex-valued input tensor matching the output from stft with "
                        "return_complex=True.");
    if (tn_tensor_numel(x) == 0) return tn_error(TN_ERR_RUNTIME, "istft: input tensor cannot be empty.");
    if (x->ndim != 2 && x->ndim != 3)
        return tn_error(TN_ERR_RUNTIME, "istft: expected a tensor with 3 or 4 dimensions of complex, but got %d", x->ndim + 1);
    int64_t n_frames = x->sizes[x->ndim - 1], fft_size = x->sizes[x->ndim - 2];
    bool onesided = args[7].tag == TN_V_NONE ? fft_size != n_fft : args[7].u.b;
    if (onesided && n_fft / 2 + 1 != fft_size)
        return tn_error(TN_ERR_RUNTIME, "istft: expected the frequency dimension (3rd to the last) of the input tensor to "
                        "match n_fft / 2 + 1 when onesided=True, but got %lld", (long long)fft_size);
    if (!onesided && n_fft != fft_size)
        return tn_error(TN_ERR_RUNTIME, "istft: expected the frequency dimension (3rd to the last) of the input tensor to "
                        "match n_fft when onesided=False, but got %lld", (long long)fft_size);
    if (!(0 < hop && hop <= wl)) return tn_error(TN_ERR_RUNTIME, "istft: expected 0 < hop_length <= win_length");
    if (!(0 < wl && wl <= n_fft)) return tn_error(TN_ERR_RUNTIME, "istft: expected 0 < win_length <= n_fft");
    if (win && (win->ndim != 1 || win->sizes[0] != wl))
        return tn_error(TN_ERR_RUNTIME, "istft: expected a 1D window tensor of size equal to win_length=%lld", (long long)wl);
    if (return_complex && onesided) return tn_error(TN_ERR_RUNTIME, "Cannot have onesided output if window or input is complex");
    if (!return_complex && win && tn_dtype_is_complex(win->dtype))
        return tn_error(TN_ERR_RUNTIME, "Complex windows are incompatible with return_complex=False");
    int64_t len = n_fft + hop * (n_frames - 1);
    tn_cx c = {0};
    tn_tensor *w = win;
    if (!w) {
        tn_value oa[5] = {tn_value_intlist(&wl, 1), {.tag = TN_V_DTYPE}, TN_NONE, TN_NONE, TN_NONE};
        oa[1].u.dtype = tn_dtype_to_real(x->dtype);
        w = tn_cx_call(&c, TN_OP_ones, oa);
    }
    if (w && wl != n_fft) {
        int64_t left = (n_fft - wl) / 2, pad[2] = {left, n_fft - wl - left};
        w = tn_cx_call(&c, TN_OP_constant_pad_nd, TN_ARGS(TN_T(w), tn_value_intlist(pad, 2), TN_I(0)));
    }
    tn_tensor *in = x->ndim == 2 ? tn_cx_call(&c, TN_OP_unsqueeze, TN_ARGS(TN_T(x), TN_I(0))) : x;
    if (in) in = tn_cx_call(&c, TN_OP_transpose_int, TN_ARGS(TN_T(in), TN_I(1), TN_I(2))); /* channel, frames, freq */
    int64_t last = 2, norm = normalized ? NORM_BY_ROOT_N : NORM_BY_N;
    if (in && return_complex) {
        in = tn_cx_call(&c, TN_OP__fft_c2c, TN_ARGS(TN_T(in), tn_value_intlist(&last, 1), TN_I(norm), TN_B(false)));
    } else if (in) {
        if (!onesided) in = tn_cx_call(&c, TN_OP_narrow, TN_ARGS(TN_T(in), TN_I(-1), TN_I(0), TN_I(n_fft / 2 + 1)));
        in = tn_cx_call(&c, TN_OP__fft_c2r, TN_ARGS(TN_T(in), tn_value_intlist(&last, 1), TN_I(norm), TN_I(n_fft)));
    }
    int64_t wv[3] = {1, 1, n_fft};
    tn_tensor *w3 = w ? tn_cx_call(&c, TN_OP_view, TN_ARGS(TN_T(w), tn_value_intlist(wv, 3))) : NULL;
    tn_tensor *yt = in && w3 ? tn_cx_call(&c, TN_OP_mul_Tensor, TN_ARGS(TN_T(in), TN_T(w3))) : NULL;
    int64_t ysz[2] = {yt ? yt->sizes[0] : 0, len}, esz[2] = {1, len}, ex[3] = {1, n_frames, n_fft};
    tn_tensor *y = yt ? tn_cx_call(&c, TN_OP_unfold_backward, TN_ARGS(TN_T(yt), tn_value_intlist(ysz, 2), TN_I(1), TN_I(n_fft), TN_I(hop))) : NULL;
    tn_tensor *w2 = w3 ? tn_cx_call(&c, TN_OP_pow_Tensor_Scalar, TN_ARGS(TN_T(w3), TN_I(2))) : NULL;
    if (w2) w2 = tn_cx_call(&c, TN_OP_expand, TN_ARGS(TN_T(w2), tn_value_intlist(ex, 3), TN_B(false)));
    tn_tensor *env = w2 ? tn_cx_call(&c, TN_OP_unfold_backward, TN_ARGS(TN_T(w2), tn_value_intlist(esz, 2), TN_I(1), TN_I(n_fft), TN_I(hop))) : NULL;
    int64_t start = center ? n_fft / 2 : 0;
    int64_t end = args[8].tag != TN_V_NONE ? start + args[8].u.i : center ? len - n_fft / 2 : len;
    int64_t cut = end < len ? end : len;
    if (y) y = tn_cx_call(&c, TN_OP_slice_Tensor, TN_ARGS(TN_T(y), TN_I(1), TN_I(start), TN_I(cut), TN_I(1)));
    if (env) env = tn_cx_call(&c, TN_OP_slice_Tensor, TN_ARGS(TN_T(env), TN_I(1), TN_I(start), TN_I(cut), TN_I(1)));
    tn_tensor *m = env ? tn_cx_call(&c, TN_OP_abs, TN_ARGS(TN_T(env))) : NULL;
    if (m) m = tn_cx_call(&c, TN_OP_min, TN_ARGS(TN_T(m)));
    if (m) {
        tn_value v;
        tn_status st = tn_dispatch(TN_OP__local_scalar_dense, TN_ARGS(TN_T(m)), &v);
        if (st != TN_OK) tn_cx_fail(&c, st);
        else if (tn_scalar_as_double(&v) < 1e-11)
            tn_cx_fail(&c, tn_error(TN_ERR_RUNTIME, "istft: window overlap add min: %g", tn_scalar_as_double(&v)));
    }
    if (y && env) y = tn_cx_call(&c, TN_OP_div_Tensor, TN_ARGS(TN_T(y), TN_T(env)));
    if (y && x->ndim == 2) y = tn_cx_call(&c, TN_OP_squeeze_dim, TN_ARGS(TN_T(y), TN_I(0)));
    if (y && end > len) {
        int64_t pad[2] = {0, end - len};
        y = tn_cx_call(&c, TN_OP_constant_pad_nd, TN_ARGS(TN_T(y), tn_value_intlist(pad, 2), TN_I(0)));
    }
    return tn_cx_finish(&c, y, rets);
}
