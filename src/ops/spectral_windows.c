/* spectral_windows.c — the window functions of signal processing (hann, hamming, blackman,
 * bartlett, kaiser), composed through the door from arange in the requested dtype exactly as
 * upstream's TensorFactories compose them, in-place steps included (mul_.Scalar rounds its
 * scalar to a half / bfloat16 self), so every dtype's windows round as upstream's do. */
#include <math.h>

#include "ops/composite_internal.h"

typedef enum { WIN_HAMMING, WIN_BLACKMAN, WIN_BARTLETT, WIN_KAISER } win_kind;

/* N, periodic, the hamming coefficients (kaiser's beta as alpha), and the trailing (dtype,
 * layout, device, pin). */
static tn_status window(const char *name, win_kind kind, int64_t n, bool periodic, double alpha, double beta,
                        const tn_value *opts, tn_value *rets) {
    tn_dtype dt = opts[0].tag == TN_V_DTYPE ? opts[0].u.dtype : tn_default_dtype();
    if (n < 0)
        return tn_error(TN_ERR_RUNTIME, "%s requires non-negative window_length, got window_length=%lld", name, (long long)n);
    if (!tn_dtype_is_floating(dt) && !tn_dtype_is_complex(dt)) /* complex: ones of length 1, else arange refuses */
        return tn_error(TN_ERR_RUNTIME, "%s expects floating point dtypes, got: %s", name, tn_dtype_infos[dt].c10_name);
    tn_value fo[6] = {TN_NONE, {.tag = TN_V_DTYPE}, opts[1], opts[2], opts[3], TN_NONE};
    fo[1].u.dtype = dt;
    if (n <= 1) {
        fo[0] = tn_value_intlist(&n, 1);
        return tn_dispatch(n == 0 ? TN_OP_empty_memory_format : TN_OP_ones, fo, rets);
    }
    /* n + 1 wraps at INT64_MAX as upstream's does (its arange then refuses the range) */
    int64_t m = periodic ? tn_add_wrap(n, 1) : n;
    tn_cx c = {0};
    /* kaiser's kernel computes in the opmath type (float for half / bfloat16) and rounds once */
    tn_dtype ct = kind == WIN_KAISER && (dt == TN_DTYPE_FLOAT16 || dt == TN_DTYPE_BFLOAT16) ? TN_DTYPE_FLOAT32 : dt;
    fo[0] = TN_I(m);
    fo[1].u.dtype = ct;
    tn_tensor *w = tn_cx_call(&c, TN_OP_arange, fo);
    double d = (double)tn_add_wrap(m, -1);
    switch (kind) {
    case WIN_KAISER: { /* i0(beta * sqrt(|1 - ((k - a) / a)^2|)) / i0(beta), a = (m - 1) / 2 */
        double a = d / 2.0;
        if (ct == TN_DTYPE_FLOAT32) a = (float)a;
        tn_tensor *q = tn_cx_call(&c, TN_OP_sub_Scalar, TN_ARGS(TN_T(w), TN_D(a), TN_I(1)));
        q = tn_cx_call(&c, TN_OP_div_Scalar, TN_ARGS(TN_T(q), TN_D(a)));
        q = tn_cx_call(&c, TN_OP_pow_Tensor_Scalar, TN_ARGS(TN_T(q), TN_D(2.0)));
        q = tn_cx_call(&c, TN_OP_rsub_Scalar, TN_ARGS(TN_T(q), TN_I(1), TN_I(1)));
        q = tn_cx_call(&c, TN_OP_abs, TN_ARGS(TN_T(q)));
        q = tn_cx_call(&c, TN_OP_sqrt, TN_ARGS(TN_T(q)));
        q = tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(q), TN_D(alpha)));
        q = tn_cx_call(&c, TN_OP_i0, TN_ARGS(TN_T(q)));
        tn_value bo[6] = {TN_D(alpha), TN_DT(ct), TN_NONE, TN_NONE, TN_NONE, TN_NONE};
        tn_tensor *ib = tn_cx_call(&c, TN_OP_i0, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_scalar_tensor, bo))));
        w = tn_cx_call(&c, TN_OP_div_Tensor, TN_ARGS(TN_T(q), TN_T(ib)));
        if (ct != dt) w = tn_cx_call(&c, TN_OP__to_copy, TN_ARGS(TN_T(w), TN_DT(dt), TN_NONE, TN_NONE, TN_NONE, TN_B(false), TN_NONE));
        break;
    }
    case WIN_HAMMING:
        w = tn_cx_call(&c, TN_OP_mul__Scalar, TN_ARGS(TN_T(w), TN_D(M_PI * 2.0 / d)));
        w = tn_cx_call(&c, TN_OP_cos_, TN_ARGS(TN_T(w)));
        w = tn_cx_call(&c, TN_OP_mul__Scalar, TN_ARGS(TN_T(w), TN_D(-beta)));
        w = tn_cx_call(&c, TN_OP_add__Scalar, TN_ARGS(TN_T(w), TN_D(alpha), TN_I(1)));
        break;
    case WIN_BLACKMAN: {
        w = tn_cx_call(&c, TN_OP_mul__Scalar, TN_ARGS(TN_T(w), TN_D(M_PI / d)));
        tn_tensor *a = tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(w), TN_I(4)));
        a = tn_cx_call(&c, TN_OP_cos_, TN_ARGS(TN_T(a)));
        a = tn_cx_call(&c, TN_OP_mul__Scalar, TN_ARGS(TN_T(a), TN_D(0.08)));
        tn_tensor *b = tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(w), TN_I(2)));
        b = tn_cx_call(&c, TN_OP_cos_, TN_ARGS(TN_T(b)));
        b = tn_cx_call(&c, TN_OP_mul__Scalar, TN_ARGS(TN_T(b), TN_D(0.5)));
        w = tn_cx_call(&c, TN_OP_sub_Tensor, TN_ARGS(TN_T(a), TN_T(b), TN_I(1)));
        w = tn_cx_call(&c, TN_OP_add_Scalar, TN_ARGS(TN_T(w), TN_D(0.42), TN_I(1)));
        break;
    }
    case WIN_BARTLETT: {
        w = tn_cx_call(&c, TN_OP_mul__Scalar, TN_ARGS(TN_T(w), TN_D(2.0 / d)));
        /* wrapping: at m = INT64_MIN the arange above has failed and these are not used */
        int64_t first = (tn_add_wrap(m, -1) >> 1) + 1;
        tn_tensor *tail = tn_cx_call(&c, TN_OP_narrow, TN_ARGS(TN_T(w), TN_I(0), TN_I(first), TN_I(tn_add_wrap(m, -first))));
        tail = tn_cx_call(&c, TN_OP_mul__Scalar, TN_ARGS(TN_T(tail), TN_I(-1)));
        tn_cx_call(&c, TN_OP_add__Scalar, TN_ARGS(TN_T(tail), TN_I(2), TN_I(1)));
        break;
    }
    }
    if (periodic && w) w = tn_cx_call(&c, TN_OP_narrow, TN_ARGS(TN_T(w), TN_I(0), TN_I(0), TN_I(n)));
    return tn_cx_finish(&c, w, rets);
}

/* aten::hann_window(int window_length, [bool periodic,] *, dtype, layout, device, pin) */
tn_status tn_op_hann_window(const tn_value *a, tn_value *r) { return window("hann_window", WIN_HAMMING, a[0].u.i, true, 0.5, 0.5, a + 1, r); }
tn_status tn_op_hann_window_periodic(const tn_value *a, tn_value *r) { return window("hann_window", WIN_HAMMING, a[0].u.i, a[1].u.b, 0.5, 0.5, a + 2, r); }
/* aten::hamming_window(int window_length, [bool periodic, [float alpha, [float beta]]], *, ...) */
tn_status tn_op_hamming_window(const tn_value *a, tn_value *r) { return window("hamming_window", WIN_HAMMING, a[0].u.i, true, 0.54, 0.46, a + 1, r); }
tn_status tn_op_hamming_window_periodic(const tn_value *a, tn_value *r) { return window("hamming_window", WIN_HAMMING, a[0].u.i, a[1].u.b, 0.54, 0.46, a + 2, r); }
tn_status tn_op_hamming_window_periodic_alpha(const tn_value *a, tn_value *r) { return window("hamming_window", WIN_HAMMING, a[0].u.i, a[1].u.b, a[2].u.d, 0.46, a + 3, r); }
tn_status tn_op_hamming_window_periodic_alpha_beta(const tn_value *a, tn_value *r) { return window("hamming_window", WIN_HAMMING, a[0].u.i, a[1].u.b, a[2].u.d, a[3].u.d, a + 4, r); }
/* aten::blackman_window / bartlett_window(int window_length, [bool periodic,] *, ...) */
tn_status tn_op_blackman_window(const tn_value *a, tn_value *r) { return window("blackman_window", WIN_BLACKMAN, a[0].u.i, true, 0, 0, a + 1, r); }
tn_status tn_op_blackman_window_periodic(const tn_value *a, tn_value *r) { return window("blackman_window", WIN_BLACKMAN, a[0].u.i, a[1].u.b, 0, 0, a + 2, r); }
tn_status tn_op_bartlett_window(const tn_value *a, tn_value *r) { return window("bartlett_window", WIN_BARTLETT, a[0].u.i, true, 0, 0, a + 1, r); }
tn_status tn_op_bartlett_window_periodic(const tn_value *a, tn_value *r) { return window("bartlett_window", WIN_BARTLETT, a[0].u.i, a[1].u.b, 0, 0, a + 2, r); }
/* aten::kaiser_window(int window_length, [bool periodic, [float beta=12.0]], *, ...) */
tn_status tn_op_kaiser_window(const tn_value *a, tn_value *r) { return window("kaiser_window", WIN_KAISER, a[0].u.i, true, 12.0, 0, a + 1, r); }
tn_status tn_op_kaiser_window_periodic(const tn_value *a, tn_value *r) { return window("kaiser_window", WIN_KAISER, a[0].u.i, a[1].u.b, 12.0, 0, a + 2, r); }
tn_status tn_op_kaiser_window_beta(const tn_value *a, tn_value *r) { return window("kaiser_window", WIN_KAISER, a[0].u.i, a[1].u.b, a[2].u.d, 0, a + 3, r); }
