/* formulas_spectral.c — derivatives of the real-to-complex and complex-to-real FFT kernels
 * and of conj_physical (rows in formulas.def; _fft_c2c's row is generated). Written from the transforms'
 * structure, as upstream's fft_r2c_backward / fft_c2r_backward: every step is a door call. */
#include "autograd/formulas.h"

#define F(name) void name(tn_grad_ctx *c)

/* The last transformed dimension of dims argument i, wrapped for ndim. */
static int64_t last_dim(tn_grad_ctx *c, int i, int ndim) {
    const tn_value *v = &ARGV(i);
    int64_t d = v->tag == TN_V_INT ? v->u.i : v->u.ilist.data[v->u.ilist.n - 1];
    return d < 0 ? d + ndim : d;
}

/* _fft_r2c(self, dim, normalization, onesided): a real input seen as complex, transformed,
 * (onesided) half discarded; backward zero-fills the discarded half, runs the inverse
 * unnormalised-by-mode transform and keeps the real parts. */
F(g_fft_r2c) {
    if (!NEED(0)) return;
    tn_tensor *g = GRAD(0);
    if (BARG(3) && g) {
        int64_t last = last_dim(c, 1, g->ndim), full = GEOM(0)->sizes[last], half = g->sizes[last];
        if (full > half) {
            int64_t pad[2 * TN_MAX_DIMS] = {0};
            pad[2 * (g->ndim - 1 - last) + 1] = full - half;
            g = AG(c, constant_pad_nd, VT(g), VIL(pad, 2 * g->ndim), VI(0));
        }
    }
    g = AG(c, _fft_c2c, VT(g), ARGV(1), VI(IARG(2)), VB(false));
    SET(0, AG(c, real, VT(g)));
}

/* _fft_c2r(self, dim, normalization, last_dim_size): the half spectrum completed by
 * conjugate symmetry, inverse transformed, real parts kept; backward is the onesided
 * forward transform with the entries whose mirror image lies outside the half doubled. */
F(g_fft_c2r) {
    if (!NEED(0)) return;
    tn_tensor *g = AG(c, _fft_r2c, VT(GRAD(0)), ARGV(1), VI(IARG(2)), VB(true));
    if (!g) return;
    int64_t last = last_dim(c, 1, g->ndim);
    int64_t twice = GRAD(0)->sizes[last] - g->sizes[last];
    if (twice > 0) {
        /* scale = [1, 2 x twice, 1 ...] along the last dimension */
        int64_t n = g->sizes[last];
        tn_tensor *idx = AG(c, arange, VI(n), VDT(TN_DTYPE_INT64), VN(), VN(), VN());
        tn_tensor *lo = AG(c, ge_Scalar, VT(idx), VI(1)), *hi = AG(c, le_Scalar, VT(idx), VI(twice));
        tn_tensor *dbl = AG(c, logical_and, VT(lo), VT(hi));
        tn_tensor *scale = AG(c, add_Scalar, VT(dbl), VD(1.0), VI(1)); /* 1.0 + bool: float */
        int64_t shape[TN_MAX_DIMS];
        for (int d = 0; d < g->ndim; d++) shape[d] = d == last ? n : 1;
        scale = ag_reshape(c, scale, g->ndim, shape);
        g = ag_mul(c, g, scale);
    }
    SET(0, g);
}

/* conj_physical(self): the gradient conjugated (hfft conjugates its input on the way). */
F(g_conj_physical) {
    if (NEED(0)) SET(0, AG(c, conj_physical, VT(GRAD(0))));
}
