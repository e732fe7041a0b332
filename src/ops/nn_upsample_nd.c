/* nn_upsample_nd.c — resampling beyond the 2-d nearest / bilinear kernels of nn_pool.c:
 * nearest over 3 dims, nearest-exact over 1 to 3, linear 1-d, trilinear, bicubic and the antialiased
 * bilinear / bicubic (2-d), with their backward
 * operators and .vec overloads. Each spatial dim gets a tap table (input positions and
 * weights) computed as upstream's UpSample.h does, in the opmath type (float arithmetic for
 * Float/Half/BFloat16, double for Double; forward weights stored in the input's dtype as
 * upstream's index/weight tensors are), and kernels/nn_upsample_nd.h applies the tables. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/nn_upsample_nd.h"
#include "ops/nn_backward_internal.h"
#include "ops/reduce.h"

enum { UP_NEAREST, UP_NEAREST_EXACT, UP_LINEAR, UP_CUBIC, UP_AA_LINEAR, UP_AA_CUBIC };

static bool is_aa(int mode) { return mode == UP_AA_LINEAR || mode == UP_AA_CUBIC; }

/* One upsampling operator: its mode and spatial dims, and whether it takes align_corners. */
typedef struct up_kind {
    int mode, nsp;
    const char *name; /* upstream's kernel name, for messages */
} up_kind;

/* v in float arithmetic when f (one correctly rounded float operation equals the double one rounded) */
static double rf(bool f, double v) { return f ? (double)(float)v : v; }

static double round_to(tn_dtype dt, double v) {
    if (dt != TN_DTYPE_BFLOAT16 && dt != TN_DTYPE_FLOAT16) return v;
    char buf[8] = {0};
    tn_rd_set(buf, dt, v);
    return tn_rd_get(buf, dt);
}

/* upstream's compute_scales_value / area_pixel_compute_scale in opmath (f: float) */
static double scale_of(bool f, const tn_value *s, int64_t in, int64_t out, bool align, bool area) {
    if (area && align) return out > 1 ? rf(f, rf(f, (double)(in - 1)) / (double)(out - 1)) : 0.0;
    if (s && s->tag == TN_V_DOUBLE && s->u.d > 0) return rf(f, 1.0 / s->u.d);
    return rf(f, rf(f, (double)in) / (double)out);
}

static void cubic_coeffs(bool f, double t, double c[4]) {
    const double A = -0.75;
#define CC1(x) rf(f, rf(f, rf(f, rf(f, rf(f, (A + 2) * (x)) - (A + 3)) * (x)) * (x)) + 1)
#define CC2(x) rf(f, rf(f, rf(f, rf(f, rf(f, rf(f, A * (x)) - 5 * A) * (x)) + 8 * A) * (x)) - 4 * A)
    double x1 = rf(f, t + 1.0), x2 = rf(f, 1.0 - t), x3 = rf(f, x2 + 1.0);
    c[0] = CC2(x1);
    c[1] = CC1(t);
    c[2] = CC1(x2);
    c[3] = CC2(x3);
#undef CC1
#undef CC2
}

/* the antialiasing filters: triangle, and the cubic with a = -0.5 */
static double aa_filter(bool f, int mode, double x) {
    x = fabs(x);
    if (mode == UP_AA_LINEAR) return x < 1 ? rf(f, 1 - x) : 0;
    const double a = -0.5;
    if (x < 1) return rf(f, rf(f, rf(f, rf(f, rf(f, (a + 2) * x) - (a + 3)) * x) * x) + 1);
    if (x < 2) return rf(f, rf(f, rf(f, rf(f, rf(f, x - 5) * x) + 8) * x) - 4) * a;
    return 0;
}

/* antialiased taps: the support half-width and the number of taps of every output */
static double aa_support(bool f, int mode, double scale) {
    double half = mode == UP_AA_LINEAR ? 1.0 : 2.0;
    return scale >= 1.0 ? rf(f, half * scale) : half;
}
/* Upstream's count, ceil(support) * 2 + 1, is capped at in + 1: a window never covers more
 * than the `in` inputs, and the one tap past them keeps upstream's zero-weight read (a NaN
 * or inf input still gives NaN). Uncapped, a tiny scale (1e-12) made 2e12 taps, past int. */
static int aa_taps(bool f, int mode, const tn_value *s, int64_t in, int64_t out, bool align) {
    double taps = ceil(aa_support(f, mode, scale_of(f, s, in, out, align, true))) * 2 + 1;
    return taps < (double)in + 1 ? (int)taps : (int)(in + 1);
}

/* Fills dim d's table (idx, w have out * taps entries). backward: opmath weights, else
 * rounded to dt. */
static void build_dim(int mode, tn_dtype dt, bool backward, int64_t in, int64_t out, const tn_value *s, bool align,
                      int taps, int64_t *idx, double *w) {
    bool f = dt != TN_DTYPE_FLOAT64;
    if (is_aa(mode)) { /* upstream's _compute_indices_min_size_weights_aa, unused taps weight 0 */
        double sc = scale_of(f, s, in, out, align, true), support = aa_support(f, mode, sc);
        double inv = sc >= 1.0 ? rf(f, 1.0 / sc) : 1.0;
        for (int64_t o = 0; o < out; o++) {
            /* (i + 0.5) and the + 0.5 below are double arithmetic upstream; the rest opmath */
            double center = rf(f, sc * ((double)o + 0.5));
            int64_t lo = (int64_t)(rf(f, center - support) + 0.5);
            if (lo < 0) lo = 0;
            int64_t hi = (int64_t)(rf(f, center + support) + 0.5);
            if (hi > in) hi = in;
            int64_t n = hi - lo;
            double total = 0, *wo = w + o * taps;
            for (int j = 0; j < taps; j++) {
                idx[o * taps + j] = j < n ? lo + j : (lo < in ? lo : in - 1);
                wo[j] = j < n ? aa_filter(f, mode, rf(f, rf(f, rf(f, (double)(j + lo) - center) + 0.5) * inv)) : 0;
                if (j < n) total = rf(f, total + wo[j]);
            }
            for (int j = 0; j < n && total != 0; j++) wo[j] = rf(f, wo[j] / total);
            if (!backward)
                for (int j = 0; j < n; j++) wo[j] = round_to(dt, wo[j]);
        }
        return;
    }
    if (mode == UP_NEAREST || mode == UP_NEAREST_EXACT) {
        float sc = (float)scale_of(true, s, in, out, false, false);
        for (int64_t o = 0; o < out; o++) {
            int64_t i;
            /* upstream's 1-d / 3-d nearest forward takes floor(o * scale) even for an
             * unresized dim (a given scale_factor of 0.5 reads 0, 2, 3, 3); its backward
             * copies it, and halves a doubled one */
            if (mode == UP_NEAREST)
                i = backward && out == in ? o : backward && out == 2 * in ? o >> 1 : (int64_t)floorf((float)o * sc);
            else
                i = (int64_t)floorf((float)(((double)o + 0.5) * (double)sc));
            idx[o] = i < in - 1 ? i : in - 1;
            w[o] = 1.0;
        }
        return;
    }
    double sc = scale_of(f, s, in, out, align, true);
    for (int64_t o = 0; o < out; o++) {
        double real = align ? rf(f, sc * (double)o) : rf(f, rf(f, sc * rf(f, (double)o + 0.5)) - 0.5);
        if (mode == UP_LINEAR) {
            if (!align && real < 0) real = 0;
            int64_t i0, i1;
            double l0, l1;
            if (out == in) {
                i0 = i1 = o; l0 = 1; l1 = 0;
            } else {
                i0 = (int64_t)floorf((float)real);
                if (i0 > in - 1) i0 = in - 1;
                l1 = rf(f, real - (double)i0);
                l1 = l1 < 0 ? 0 : l1 > 1 ? 1 : l1;
                i1 = i0 + (i0 < in - 1 ? 1 : 0);
                l0 = rf(f, 1.0 - l1);
            }
            /* the forward stores lambda1 in the input's dtype and takes lambda0 = 1 - that */
            if (!backward && out != in) {
                l1 = round_to(dt, l1);
                l0 = round_to(dt, rf(f, 1.0 - l1));
            }
            idx[2 * o] = i0; idx[2 * o + 1] = i1;
            w[2 * o] = l0;
            w[2 * o + 1] = l1;
        } else { /* cubic: guard_index_and_lambda, then upstream's A = -0.75 coefficients */
            int64_t i0 = (int64_t)floorf((float)real);
            if (i0 > in - 1) i0 = in - 1;
            double t = rf(f, real - (double)i0);
            t = t < 0 ? 0 : t > 1 ? 1 : t;
            double c[4];
            cubic_coeffs(f, t, c);
            for (int j = 0; j < 4; j++) {
                int64_t k = i0 - 1 + j;
                idx[4 * o + j] = k < 0 ? 0 : k > in - 1 ? in - 1 : k;
                w[4 * o + j] = backward ? c[j] : round_to(dt, c[j]);
            }
        }
    }
}

typedef struct up_job {
    tn_dtype acc;
    bool backward;
    size_t isz;
    char *dst;
    const char *src;
    const tn_up_table *t;
} up_job;

static void up_planes(void *vj, int64_t p0, int64_t p1) {
    const up_job *j = vj;
    const tn_up_table *t = j->t;
    int64_t iv = t->in[0] * t->in[1] * t->in[2], ov = t->out[0] * t->out[1] * t->out[2];
    int64_t dv = j->backward ? iv : ov, sv = j->backward ? ov : iv;
    void *d = j->dst + (size_t)(p0 * dv) * j->isz;
    const void *s = j->src + (size_t)(p0 * sv) * j->isz;
    if (j->backward) {
        if (j->acc == TN_DTYPE_FLOAT32) f32_upsample_nd_backward__scalar(d, s, p1 - p0, t);
        else f64_upsample_nd_backward__scalar(d, s, p1 - p0, t);
    } else {
        if (j->acc == TN_DTYPE_FLOAT32) f32_upsample_nd__scalar(d, s, p1 - p0, t);
        else f64_upsample_nd__scalar(d, s, p1 - p0, t);
    }
}

/* Runs the resampling (or its adjoint) of src into a fresh tensor of sizes dsz. */
static tn_status up_run(const up_kind *k, tn_tensor *src, int nd, const int64_t *dsz, const int64_t in[3],
                        const int64_t out[3], const tn_value *scales, bool align, bool backward, tn_tensor **res) {
    tn_tensor *y;
    TN_TRY(tn_nn_empty(nd, dsz, src->dtype, src, &y));
    if (tn_tensor_is_meta(src) || tn_tensor_numel(y) == 0) { *res = y; return TN_OK; }
    int taps[3];
    tn_up_table t;
    int64_t *idx = NULL;
    double *w = NULL;
    int64_t total = 0;
    bool f = src->dtype != TN_DTYPE_FLOAT64;
    for (int d = 0; d < 3; d++) {
        int sd = d - (3 - k->nsp);
        taps[d] = sd < 0 ? 1 : is_aa(k->mode) ? aa_taps(f, k->mode, &scales[sd], in[d], out[d], align)
                 : k->mode == UP_LINEAR ? 2 : k->mode == UP_CUBIC ? 4 : 1;
        total += out[d] * taps[d];
    }
    idx = malloc(sizeof(int64_t) * (size_t)(total + 3));
    w = malloc(sizeof(double) * (size_t)(total + 3));
    if (!idx || !w) { free(idx); free(w); tn_tensor_release(y); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    int64_t at = 0;
    for (int d = 0; d < 3; d++) {
        t.in[d] = in[d];
        t.out[d] = out[d];
        int sd = d - (3 - k->nsp); /* the op's spatial dim, or < 0 for a padding dim */
        t.idx[d] = idx + at;
        t.w[d] = w + at;
        if (sd < 0) {
            t.taps[d] = 1;
            idx[at] = 0;
            w[at] = 1.0;
            at += 1;
        } else {
            t.taps[d] = taps[d];
            build_dim(k->mode, src->dtype, backward, in[d], out[d], &scales[sd], align, taps[d], idx + at, w + at);
            /* Upstream's antialiased forward kernels, for an output one column wide whose
             * height is resampled, give every output row the first row's value (measured:
             * [1, 2, 3, 1] from [1, 2, 2, 2] is three copies of row 0, bilinear and bicubic,
             * either align_corners; their separable height pass over a width-1 output). Their
             * backward kernels do not: reproduced in the forward only. */
            if (!backward && is_aa(k->mode) && d == 1 && k->nsp == 2 && out[2] == 1 && in[1] != out[1])
                for (int64_t o = 1; o < out[1]; o++) {
                    memcpy(idx + at + o * taps[d], idx + at, sizeof(int64_t) * (size_t)taps[d]);
                    memcpy(w + at + o * taps[d], w + at, sizeof(double) * (size_t)taps[d]);
                }
            at += out[d] * taps[d];
        }
    }
    tn_dtype acc = tn_nn_acc(src->dtype);
    tn_nn_buf bs = {0}, bd = {0};
    tn_status st = tn_nn_load(src, acc, &bs);
    if (st == TN_OK) st = backward ? tn_nnb_out_begin(y, acc, true, &bd) : tn_nn_out_begin(y, acc, &bd);
    if (st == TN_OK) {
        int64_t P = 1;
        for (int i = 0; i < nd - k->nsp; i++) P *= dsz[i];
        up_job j = {acc, backward, (size_t)tn_dtype_itemsize(acc), bd.data, bs.data, &t};
        int64_t per = (out[0] * out[1] * out[2]) * (int64_t)taps[1] * taps[2];
        /* the adjoint accumulates within a plane only, so planes still run independently */
        tn_parallel_for(P, per > 0 && per < TN_NNB_GRAIN ? TN_NNB_GRAIN / per : 1, up_planes, &j);
        tn_nn_out_finish(y, acc, &bd);
    } else {
        tn_nn_buf_free(&bd);
    }
    tn_nn_buf_free(&bs);
    free(idx);
    free(w);
    if (st != TN_OK) { tn_tensor_release(y); return st; }
    *res = y;
    return TN_OK;
}

static const char *dim_names(int nsp, int i) {
    static const char *n3[] = {"D", "H", "W"}, *n2[] = {"H", "W"}, *n1[] = {"W"};
    return nsp == 3 ? n3[i] : nsp == 2 ? n2[i] : n1[i];
}

/* upstream's upsample_Nd_common_check: sizes positive, the input of nsp + 2 dims */
static tn_status check_sizes(const up_kind *k, const int64_t *insz, int in_nd, const int64_t *osz) {
    bool ok = true;
    for (int i = 0; i < k->nsp; i++) ok = ok && insz[in_nd - k->nsp + i] > 0 && osz[i] > 0;
    if (ok) return TN_OK;
    char ib[128] = "", ob[128] = "";
    for (int i = 0; i < k->nsp; i++) {
        char t[48];
        snprintf(t, sizeof t, "%s%s: %lld", i ? ", " : "", dim_names(k->nsp, i), (long long)insz[in_nd - k->nsp + i]);
        strcat(ib, t);
        snprintf(t, sizeof t, "%s%s: %lld", i ? ", " : "", dim_names(k->nsp, i), (long long)osz[i]);
        strcat(ob, t);
    }
    return tn_error(TN_ERR_RUNTIME, "Input and output sizes should be greater than 0, but got input (%s) output (%s)", ib, ob);
}

static tn_status read_osz(const up_kind *k, const tn_value *v, int64_t *osz) {
    if (v->tag != TN_V_INTLIST || v->u.ilist.n != k->nsp)
        return tn_error(TN_ERR_RUNTIME, "It is expected output_size equals to %d, but got size %lld", k->nsp,
                        (long long)(v->tag == TN_V_INTLIST ? v->u.ilist.n : 0));
    memcpy(osz, v->u.ilist.data, sizeof(int64_t) * (size_t)k->nsp);
    return TN_OK;
}

/* forward: (self, output_size, [align_corners,] scales...) */
static tn_status up_forward(const up_kind *k, const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    bool has_align = k->mode != UP_NEAREST && k->mode != UP_NEAREST_EXACT;
    int64_t osz[3];
    TN_TRY(read_osz(k, &args[1], osz));
    if (x->ndim != k->nsp + 2) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "Non-empty %dD data tensor expected but got a tensor with sizes %s", k->nsp + 2,
                        TN_NN_FMT(x, b));
    }
    TN_TRY(check_sizes(k, x->sizes, x->ndim, osz));
    TN_TRY(tn_nn_check_upsample_nonempty(x));
    bool same = true;
    for (int i = 0; i < k->nsp; i++) same = same && osz[i] == x->sizes[2 + i];
    /* the antialiased kernels have Float and Double (and Byte, not built) weights only; an
     * unchanged size skips them upstream (the copy below is exact) */
    bool aa_refused = is_aa(k->mode) && x->dtype != TN_DTYPE_FLOAT32 && x->dtype != TN_DTYPE_FLOAT64 && !same;
    /* nearest and nearest-exact also copy uint8 values (through float32, exactly) */
    bool byte_nearest = x->dtype == TN_DTYPE_UINT8 && (k->mode == UP_NEAREST || k->mode == UP_NEAREST_EXACT);
    if ((!tn_nn_is_float(x->dtype) && !byte_nearest) || aa_refused) /* upstream's index/weight computation names the refusal */
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'",
                        k->mode == UP_LINEAR ? "compute_indices_weights_linear"
                        : k->mode == UP_CUBIC ? "compute_indices_weights_cubic"
                        : is_aa(k->mode) ? "compute_index_ranges_weights" : "compute_indices_weights_nearest",
                        tn_nnb_dname(x->dtype));
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, dsz[5] = {x->sizes[0], x->sizes[1]};
    for (int i = 0; i < k->nsp; i++) {
        in[3 - k->nsp + i] = x->sizes[2 + i];
        out[3 - k->nsp + i] = osz[i];
        dsz[2 + i] = osz[i];
    }
    tn_tensor *y;
    TN_TRY(up_run(k, x, x->ndim, dsz, in, out, &args[has_align ? 3 : 2], has_align && args[2].u.b, false, &y));
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* backward: (grad_output, output_size, input_size, [align_corners,] scales...) */
static tn_status up_backward(const up_kind *k, const tn_value *args, tn_value *rets) {
    tn_tensor *gy = args[0].u.t;
    bool has_align = k->mode != UP_NEAREST && k->mode != UP_NEAREST_EXACT;
    int64_t osz[3];
    TN_TRY(read_osz(k, &args[1], osz));
    const tn_value *isv = &args[2];
    if (isv->tag != TN_V_INTLIST || isv->u.ilist.n != k->nsp + 2)
        return tn_error(TN_ERR_RUNTIME, "It is expected input_size equals to %d, but got size %lld", k->nsp + 2,
                        (long long)(isv->tag == TN_V_INTLIST ? isv->u.ilist.n : 0));
    const int64_t *isz = isv->u.ilist.data;
    TN_TRY(check_sizes(k, isz, k->nsp + 2, osz));
    bool ok = gy->ndim == k->nsp + 2 && gy->sizes[0] == isz[0] && gy->sizes[1] == isz[1];
    for (int i = 0; ok && i < k->nsp; i++) ok = gy->sizes[2 + i] == osz[i];
    if (!ok) {
        char b[256];
        return tn_error(TN_ERR_RUNTIME, "Expected grad_output to have the output's sizes, but got %s", TN_NN_FMT(gy, b));
    }
    TN_TRY(tn_nnb_check_float(gy, k->name));
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
    for (int i = 0; i < k->nsp; i++) {
        in[3 - k->nsp + i] = isz[2 + i];
        out[3 - k->nsp + i] = osz[i];
    }
    tn_tensor *gx;
    TN_TRY(up_run(k, gy, k->nsp + 2, isz, in, out, &args[has_align ? 4 : 3], has_align && args[3].u.b, true, &gx));
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

/* .vec: (input, output_size?, [align_corners,] scale_factors?) -> the sized operator */
static tn_status up_vec(const up_kind *k, tn_op_id sized, const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t;
    bool has_align = k->mode != UP_NEAREST && k->mode != UP_NEAREST_EXACT;
    const tn_value *osv = &args[1], *sfv = &args[has_align ? 3 : 2];
    bool has_os = osv->tag == TN_V_INTLIST, has_sf = sfv->tag == TN_V_DOUBLELIST;
    if (has_os == has_sf) return tn_error(TN_ERR_RUNTIME, "Must specify exactly one of output_size and scale_factors");
    int64_t osz[3];
    tn_value b[7];
    b[0] = args[0];
    int at = 2;
    if (has_align) b[at++] = args[2];
    if (has_os) {
        if (osv->u.ilist.n != k->nsp)
            return tn_error(TN_ERR_RUNTIME, "It is expected output_size equals to %d, but got size %lld", k->nsp,
                            (long long)osv->u.ilist.n);
        memcpy(osz, osv->u.ilist.data, sizeof(int64_t) * (size_t)k->nsp);
        for (int i = 0; i < k->nsp; i++) b[at++] = (tn_value){.tag = TN_V_NONE};
    } else {
        if (sfv->u.dlist.n != k->nsp)
            return tn_error(TN_ERR_RUNTIME, "It is expected scale_factors equals to %d, but got size %lld", k->nsp,
                            (long long)sfv->u.dlist.n);
        if (x->ndim < k->nsp)
            return tn_error(TN_ERR_RUNTIME, "Non-empty %dD data tensor expected", k->nsp + 2);
        for (int i = 0; i < k->nsp; i++) {
            osz[i] = (int64_t)floor((double)x->sizes[x->ndim - k->nsp + i] * sfv->u.dlist.data[i]);
            b[at++] = tn_value_double(sfv->u.dlist.data[i]);
        }
    }
    b[1] = tn_value_intlist(osz, k->nsp);
    return tn_dispatch(sized, b, rets);
}

#define UP_OPS(op, mode, nsp, kname)                                                                          \
    static const up_kind k_##op = {mode, nsp, kname};                                                         \
    tn_status tn_op_##op(const tn_value *a, tn_value *r) { return up_forward(&k_##op, a, r); }                \
    tn_status tn_op_##op##_vec(const tn_value *a, tn_value *r) { return up_vec(&k_##op, TN_OP_##op, a, r); }  \
    tn_status tn_op_##op##_backward(const tn_value *a, tn_value *r) { return up_backward(&k_##op, a, r); }

/* aten::upsample_nearest1d(self, output_size[1], scales?), .vec, _backward */
UP_OPS(upsample_nearest1d, UP_NEAREST, 1, "upsample_nearest1d_out_frame")
/* aten::upsample_nearest3d(self, output_size[3], scales_d?, scales_h?, scales_w?), .vec, _backward */
UP_OPS(upsample_nearest3d, UP_NEAREST, 3, "upsample_nearest3d_out_frame")
/* aten::_upsample_nearest_exact1d / 2d / 3d(self, output_size, scales...), .vec, _backward */
UP_OPS(_upsample_nearest_exact1d, UP_NEAREST_EXACT, 1, "_upsample_nearest_exact1d_out_frame")
UP_OPS(_upsample_nearest_exact2d, UP_NEAREST_EXACT, 2, "_upsample_nearest_exact2d_out_frame")
UP_OPS(_upsample_nearest_exact3d, UP_NEAREST_EXACT, 3, "_upsample_nearest_exact3d_out_frame")
/* aten::upsample_linear1d(self, output_size[1], align_corners, scales?), .vec, _backward */
UP_OPS(upsample_linear1d, UP_LINEAR, 1, "upsample_linear1d_out_frame")
/* aten::upsample_trilinear3d(self, output_size[3], align_corners, scales_d?, scales_h?, scales_w?), .vec, _backward */
UP_OPS(upsample_trilinear3d, UP_LINEAR, 3, "upsample_trilinear3d_out_frame")
/* aten::upsample_bicubic2d(self, output_size[2], align_corners, scales_h?, scales_w?), .vec, _backward */
UP_OPS(upsample_bicubic2d, UP_CUBIC, 2, "upsample_bicubic2d_out_frame")
/* aten::_upsample_bilinear2d_aa / _upsample_bicubic2d_aa(self, output_size[2], align_corners,
 * scales_h?, scales_w?), .vec, _backward: antialiased (the filter widened by the downscale) */
UP_OPS(_upsample_bilinear2d_aa, UP_AA_LINEAR, 2, "_upsample_bilinear2d_aa_out_frame")
UP_OPS(_upsample_bicubic2d_aa, UP_AA_CUBIC, 2, "_upsample_bicubic2d_aa_out_frame")
