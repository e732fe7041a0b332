/* nn_loss_margin.c — the multi-class margin losses, multi_margin_loss and
 * multilabel_margin_loss(_forward), and their backward operators: loops over the batch laid
 * out as (nframe, dim), in upstream's order of arithmetic (each sample's sum in the input's
 * type and divided by dim there, the batch's sum in double, a gradient row written then
 * scaled by grad_output), so the values are upstream's bits. The shape and argument checks
 * are upstream's; the backward operators exist so that the rows generated from
 * derivatives.yaml (MultiMarginLossBackward0, MultilabelMarginLossForwardBackward0) apply.
 * Float32 and float64 only, as upstream. */
#include <string.h>

#include "ops/dispatch.h"
#include "ops/nn_internal.h"
#include "ops/shape.h"

enum { RED_NONE = 0, RED_MEAN = 1 };

static double scalar_of(const tn_value *v) {
    return v->tag == TN_V_INT ? (double)v->u.i : v->tag == TN_V_BOOL ? (double)v->u.b : v->u.d;
}

/* upstream reads every tensor as the input's scalar type (data_ptr<scalar_t>) */
static tn_status same_type(const tn_tensor *t, tn_dtype want) {
    if (t->dtype != want)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_dtype_infos[want].c10_name, tn_dtype_infos[t->dtype].c10_name);
    return TN_OK;
}
static tn_status long_target(const tn_tensor *t) { return same_type(t, TN_DTYPE_INT64); }

/* grad_output of an unreduced loss holds one value per sample */
static tn_status grad_rows(const tn_tensor *go, int64_t nframe) {
    if (go->ndim != 1 || go->sizes[0] != nframe)
        return tn_error(TN_ERR_RUNTIME, "Expected a tensor of dimension 1 and tensor.size[0] == %lld but got: dimension %d and tensor.size[0] = %lld",
                        (long long)nframe, go->ndim, (long long)(go->ndim ? go->sizes[0] : 1));
    return TN_OK;
}

/* The contiguous data of t (a contiguous copy kept in *hold when t is not). */
static tn_status dense(tn_tensor *t, tn_tensor **hold, const void **data) {
    TN_TRY(tn_tensor_contiguous(t, hold));
    *data = tn_tensor_data(*hold);
    return TN_OK;
}

typedef struct { int64_t nframe, dim; } margin_geom;

/* ---- multi_margin_loss ----------------------------------------------------------------- */

/* upstream's multi_margin_loss_shape_check */
static tn_status multi_margin_check(const tn_tensor *x, const tn_tensor *target, const tn_tensor *w, margin_geom *g) {
    char b1[128], b2[128];
    int nd = x->ndim;
    if (!((nd == 2 && x->sizes[1] != 0) || (nd == 1 && x->sizes[0] != 0) || nd == 0))
        return tn_error(TN_ERR_RUNTIME, "Expected non-empty vector or matrix with optional 0-dim batch size, but got: %s",
                        tn_format_sizes(x->ndim, x->sizes, b1, sizeof b1));
    g->nframe = nd <= 1 ? 1 : x->sizes[0];
    g->dim = nd == 0 ? 1 : x->sizes[nd - 1];
    if (!(target->ndim <= 1 && tn_tensor_numel(target) == g->nframe))
        return tn_error(TN_ERR_RUNTIME, "inconsistent target size, expected %lld but got %s", (long long)g->nframe,
                        tn_format_sizes(target->ndim, target->sizes, b2, sizeof b2));
    if (w && !(w->ndim <= 1 && tn_tensor_numel(w) == g->dim))
        return tn_error(TN_ERR_RUNTIME, "inconsistent weight size, expected %lld but got %s", (long long)g->dim,
                        tn_format_sizes(w->ndim, w->sizes, b2, sizeof b2));
    return TN_OK;
}

static tn_status multi_margin_args(const tn_value *a, int off, int *p, tn_tensor **w) {
    double pv = scalar_of(&a[off]);
    *w = a[off + 2].tag == TN_V_TENSOR ? a[off + 2].u.t : NULL;
    if (pv != 1 && pv != 2) return tn_error(TN_ERR_RUNTIME, "only p == 1 and p == 2 supported");
    *p = (int)pv;
    return TN_OK;
}

static tn_status check_targets(const int64_t *t, int64_t n, int64_t lo, int64_t dim, const char *msg) {
    for (int64_t i = 0; i < n; i++)
        if (t[i] < lo || t[i] >= dim) return tn_error(TN_ERR_RUNTIME, "%s", msg);
    return TN_OK;
}

/* Per sample: the sum over classes d != y of w[y] max(0, margin - x[y] + x[d])^p, in T,
 * divided by dim; out gets each sample's (per_frame) or their sum in double (over nframe for
 * the mean). */
#define MM_FWD(T)                                                                                          \
    static void mm_fwd_##T(const T *x, const int64_t *tg, const T *w, int p, T margin, margin_geom g,      \
                           int64_t red, bool per_frame, T *out) {                                          \
        double total = 0;                                                                                  \
        for (int64_t t = 0; t < g.nframe; t++, x += g.dim) {                                               \
            int64_t y = tg[t];                                                                             \
            T xt = x[y], sum = 0;                                                                          \
            for (int64_t d = 0; d < g.dim; d++) {                                                          \
                if (d == y) continue;                                                                      \
                T z = margin - xt + x[d];                                                                  \
                if (z > 0) {                                                                               \
                    T h = p == 1 ? z : z * z;                                                              \
                    if (w) h *= w[y];                                                                      \
                    sum += h;                                                                              \
                }                                                                                          \
            }                                                                                              \
            sum /= (T)g.dim;                                                                               \
            if (per_frame) out[t] = sum;                                                                   \
            else total += sum;                                                                             \
        }                                                                                                  \
        if (per_frame) return;                                                                             \
        if (red == RED_MEAN && g.nframe > 0) total /= (double)g.nframe;                                    \
        out[0] = (T)total;                                                                                 \
    }
MM_FWD(float)
MM_FWD(double)

/* Per sample: each class d != y with z > 0 gets h = g (p = 1) or 2 g z (p = 2), times w[y],
 * the others 0, class y minus the sum of the h; then every row times grad_output (its one
 * value, or the sample's). */
#define MM_BWD(T)                                                                                          \
    static void mm_bwd_##T(T *gx, const T *go, bool go_rows, const T *x, const int64_t *tg, const T *w,    \
                           int p, T margin, T gs, margin_geom g) {                                         \
        for (int64_t t = 0; t < g.nframe; t++) {                                                           \
            int64_t y = tg[t];                                                                             \
            const T *xr = x + t * g.dim;                                                                   \
            T *gr = gx + t * g.dim, xt = xr[y], gy = 0;                                                    \
            for (int64_t d = 0; d < g.dim; d++) {                                                          \
                if (d == y) continue;                                                                      \
                T z = margin - xt + xr[d];                                                                 \
                if (z > 0) {                                                                               \
                    T h = p == 1 ? gs : 2 * gs * z;                                                        \
                    if (w) h *= w[y];                                                                      \
                    gy -= h;                                                                               \
                    gr[d] = h;                                                                             \
                } else gr[d] = 0;                                                                          \
            }                                                                                              \
            gr[y] = gy;                                                                                    \
        }                                                                                                  \
        for (int64_t t = 0; t < g.nframe; t++)                                                             \
            for (int64_t d = 0; d < g.dim; d++) gx[t * g.dim + d] *= go[go_rows ? t : 0];                  \
    }
MM_BWD(float)
MM_BWD(double)

/* aten::multi_margin_loss(self, target, p, margin, weight?, reduction) */
tn_status tn_op_multi_margin_loss(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *target = args[1].u.t, *w;
    int p;
    int64_t red = args[5].u.i;
    TN_TRY(multi_margin_args(args, 2, &p, &w));
    margin_geom g;
    TN_TRY(multi_margin_check(x, target, w, &g));
    TN_TRY(tn_nn_check_f32_f64(x->dtype, "multi_margin_loss_cpu_kernel"));
    TN_TRY(long_target(target));
    if (w) TN_TRY(same_type(w, x->dtype));
    bool per_frame = red == RED_NONE && target->ndim > 0;
    tn_tensor *o, *xc = NULL, *tc = NULL, *wc = NULL;
    TN_TRY(tn_tensor_empty(per_frame ? 1 : 0, &g.nframe, x->dtype, tn_tensor_device(x), &o));
    if (tn_tensor_is_meta(o)) { rets[0] = tn_value_tensor(o); return TN_OK; }
    const void *xd, *td, *wd = NULL;
    tn_status st = dense(x, &xc, &xd);
    if (st == TN_OK) st = dense(target, &tc, &td);
    if (st == TN_OK && w) st = dense(w, &wc, &wd);
    if (st == TN_OK) st = check_targets(td, g.nframe, 0, g.dim, "target out of range");
    if (st == TN_OK) {
        double margin = scalar_of(&args[3]);
        if (x->dtype == TN_DTYPE_FLOAT32) mm_fwd_float(xd, td, wd, p, (float)margin, g, red, per_frame, tn_tensor_data(o));
        else mm_fwd_double(xd, td, wd, p, margin, g, red, per_frame, tn_tensor_data(o));
    }
    tn_tensor_release(xc);
    tn_tensor_release(tc);
    tn_tensor_release(wc);
    if (st != TN_OK) { tn_tensor_release(o); return st; }
    rets[0] = tn_value_tensor(o);
    return TN_OK;
}

/* aten::multi_margin_loss_backward(grad_output, self, target, p, margin, weight?, reduction):
 * g = 1 / dim, or 1 / (nframe dim) for the mean, rounded to the input's type. */
tn_status tn_op_multi_margin_loss_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *go = args[0].u.t, *x = args[1].u.t, *target = args[2].u.t, *w;
    int p;
    int64_t red = args[6].u.i;
    TN_TRY(multi_margin_args(args, 3, &p, &w));
    margin_geom g;
    TN_TRY(multi_margin_check(x, target, w, &g));
    TN_TRY(tn_nn_check_f32_f64(x->dtype, "multi_margin_loss_backward_cpu_kernel"));
    TN_TRY(long_target(target));
    TN_TRY(same_type(go, x->dtype));
    if (w) TN_TRY(same_type(w, x->dtype));
    bool go_rows = !(red != RED_NONE || go->ndim == 0);
    if (go_rows) TN_TRY(grad_rows(go, g.nframe));
    tn_tensor *gx, *xc = NULL, *tc = NULL, *wc = NULL, *gc = NULL;
    TN_TRY(tn_tensor_empty(x->ndim, x->sizes, x->dtype, tn_tensor_device(x), &gx));
    if (tn_tensor_is_meta(gx)) { rets[0] = tn_value_tensor(gx); return TN_OK; }
    const void *xd, *td, *wd = NULL, *gd;
    tn_status st = dense(x, &xc, &xd);
    if (st == TN_OK) st = dense(target, &tc, &td);
    if (st == TN_OK) st = dense(go, &gc, &gd);
    if (st == TN_OK && w) st = dense(w, &wc, &wd);
    if (st == TN_OK) st = check_targets(td, g.nframe, 0, g.dim, "target out of range");
    if (st == TN_OK) {
        double margin = scalar_of(&args[4]), gs = red == RED_MEAN ? 1.0 / (double)(g.nframe * g.dim) : 1.0 / (double)g.dim;
        if (x->dtype == TN_DTYPE_FLOAT32) mm_bwd_float(tn_tensor_data(gx), gd, go_rows, xd, td, wd, p, (float)margin, (float)gs, g);
        else mm_bwd_double(tn_tensor_data(gx), gd, go_rows, xd, td, wd, p, margin, gs, g);
    }
    tn_tensor_release(xc);
    tn_tensor_release(tc);
    tn_tensor_release(wc);
    tn_tensor_release(gc);
    if (st != TN_OK) { tn_tensor_release(gx); return st; }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}

/* ---- multilabel_margin_loss ------------------------------------------------------------- */

/* upstream's multilabel_margin_loss_shape_check */
static tn_status multilabel_check(const tn_tensor *x, const tn_tensor *target, margin_geom *g) {
    char b1[128], b2[128];
    int nd = x->ndim;
    if (!((nd == 2 && x->sizes[1] != 0) || (nd == 1 && x->sizes[0] != 0) || nd == 0))
        return tn_error(TN_ERR_RUNTIME, "Expected non-empty vector or matrix with optional 0-dim batch size, but got: %s",
                        tn_format_sizes(x->ndim, x->sizes, b1, sizeof b1));
    bool ok;
    if (nd <= 1) {
        g->nframe = 1;
        g->dim = nd == 0 ? 1 : x->sizes[0];
        ok = target->ndim <= 1 && tn_tensor_numel(target) == g->dim;
    } else {
        g->nframe = x->sizes[0];
        g->dim = x->sizes[1];
        ok = target->ndim == 2 && target->sizes[0] == g->nframe && target->sizes[1] == g->dim;
    }
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "inconsistent target size: %s for input of size: %s",
                        tn_format_sizes(target->ndim, target->sizes, b2, sizeof b2), tn_format_sizes(x->ndim, x->sizes, b1, sizeof b1));
    return TN_OK;
}

/* Per sample: is_target marks the target slots before the first -1; the sum (in double,
 * returned in T) over those slots j and the non-target classes d of max(0, 1 - x[t_j] + x[d]);
 * divided by dim per sample (per_frame) or, summed in double, once for the batch. */
#define ML_FWD(T)                                                                                          \
    static T ml_sum_##T(const T *x, const int64_t *tg, T *ist, int64_t dim) {                              \
        double sum = 0;                                                                                    \
        for (int64_t j = 0; j < dim && tg[j] >= 0; j++) ist[tg[j]] = 1;                                    \
        for (int64_t j = 0; j < dim && tg[j] >= 0; j++) {                                                  \
            T xt = x[tg[j]];                                                                               \
            for (int64_t d = 0; d < dim; d++)                                                              \
                if (!ist[d]) {                                                                             \
                    T z = 1 - xt + x[d];                                                                   \
                    if (z > 0) sum += z;                                                                   \
                }                                                                                          \
        }                                                                                                  \
        return (T)sum;                                                                                     \
    }                                                                                                      \
    static void ml_fwd_##T(const T *x, const int64_t *tg, T *ist, margin_geom g, int64_t red, bool per_frame, \
                           T *out) {                                                                       \
        double total = 0;                                                                                  \
        for (int64_t t = 0; t < g.nframe; t++) {                                                           \
            T s = ml_sum_##T(x + t * g.dim, tg + t * g.dim, ist + t * g.dim, g.dim);                       \
            if (per_frame) out[t] = s / (T)g.dim;                                                          \
            else total += s;                                                                               \
        }                                                                                                  \
        if (per_frame) return;                                                                             \
        total /= (double)g.dim;                                                                            \
        if (red == RED_MEAN && g.nframe > 0) total /= (double)g.nframe;                                    \
        out[0] = (T)total;                                                                                 \
    }
ML_FWD(float)
ML_FWD(double)

/* Per sample: each active (target slot j, non-target class d) pair takes g from t_j and adds
 * it to d; then every row times grad_output. */
#define ML_BWD(T)                                                                                          \
    static void ml_bwd_##T(T *gx, const T *go, bool go_rows, const T *x, const int64_t *tg, const T *ist,  \
                           T gs, margin_geom g) {                                                          \
        memset(gx, 0, sizeof(T) * (size_t)(g.nframe * g.dim));                                             \
        for (int64_t t = 0; t < g.nframe; t++) {                                                           \
            const T *xr = x + t * g.dim, *ir = ist + t * g.dim;                                            \
            const int64_t *tr = tg + t * g.dim;                                                            \
            T *gr = gx + t * g.dim;                                                                        \
            for (int64_t j = 0; j < g.dim && tr[j] >= 0; j++) {                                            \
                T xt = xr[tr[j]];                                                                          \
                for (int64_t d = 0; d < g.dim; d++)                                                        \
                    if (!ir[d]) {                                                                          \
                        T z = 1 - xt + xr[d];                                                              \
                        if (z > 0) {                                                                       \
                            gr[tr[j]] -= gs;                                                               \
                            gr[d] += gs;                                                                   \
                        }                                                                                  \
                    }                                                                                      \
            }                                                                                              \
        }                                                                                                  \
        for (int64_t t = 0; t < g.nframe; t++)                                                             \
            for (int64_t d = 0; d < g.dim; d++) gx[t * g.dim + d] *= go[go_rows ? t : 0];                  \
    }
ML_BWD(float)
ML_BWD(double)

/* aten::multilabel_margin_loss_forward(self, target, reduction) -> (output, is_target):
 * is_target marks the target classes in the input's dtype. */
tn_status tn_op_multilabel_margin_loss_forward(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *target = args[1].u.t;
    int64_t red = args[2].u.i;
    margin_geom g;
    TN_TRY(multilabel_check(x, target, &g));
    TN_TRY(long_target(target));
    TN_TRY(tn_nn_check_f32_f64(x->dtype, "multilabel_margin_loss_forward_out_frame"));
    bool per_frame = !(red != RED_NONE || target->ndim <= 1);
    tn_tensor *o, *ist, *xc = NULL, *tc = NULL;
    TN_TRY(tn_tensor_empty(per_frame ? 1 : 0, &g.nframe, x->dtype, tn_tensor_device(x), &o));
    tn_status st = tn_tensor_empty(target->ndim, target->sizes, x->dtype, tn_tensor_device(x), &ist);
    if (st != TN_OK) { tn_tensor_release(o); return st; }
    if (!tn_tensor_is_meta(o)) {
        memset(tn_tensor_data(ist), 0, (size_t)tn_tensor_numel(ist) * (size_t)tn_dtype_itemsize(x->dtype));
        const void *xd, *td;
        st = dense(x, &xc, &xd);
        if (st == TN_OK) st = dense(target, &tc, &td);
        if (st == TN_OK) st = check_targets(td, g.nframe * g.dim, -1, g.dim, "argument #2 'target' is out of range");
        if (st == TN_OK) {
            if (x->dtype == TN_DTYPE_FLOAT32) ml_fwd_float(xd, td, tn_tensor_data(ist), g, red, per_frame, tn_tensor_data(o));
            else ml_fwd_double(xd, td, tn_tensor_data(ist), g, red, per_frame, tn_tensor_data(o));
        }
        tn_tensor_release(xc);
        tn_tensor_release(tc);
    }
    if (st != TN_OK) {
        tn_tensor_release(o);
        tn_tensor_release(ist);
        return st;
    }
    rets[0] = tn_value_tensor(o);
    rets[1] = tn_value_tensor(ist);
    return TN_OK;
}

/* aten::multilabel_margin_loss(self, target, reduction): the forward's output */
tn_status tn_op_multilabel_margin_loss(const tn_value *args, tn_value *rets) {
    tn_value r[2];
    TN_TRY(tn_dispatch(TN_OP_multilabel_margin_loss_forward, args, r));
    tn_value_release(&r[1]);
    rets[0] = r[0];
    return TN_OK;
}

/* aten::multilabel_margin_loss_backward(grad_output, self, target, reduction, is_target):
 * g = 1 / dim, or 1 / (nframe dim) for the mean, rounded to the input's type. */
tn_status tn_op_multilabel_margin_loss_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *go = args[0].u.t, *x = args[1].u.t, *target = args[2].u.t, *ist = args[4].u.t;
    int64_t red = args[3].u.i;
    margin_geom g;
    TN_TRY(multilabel_check(x, target, &g));
    if (tn_tensor_numel(ist) != g.nframe * g.dim) {
        char b1[128], b2[128];
        return tn_error(TN_ERR_RUNTIME, "inconsistent is_target size: %s for target of size: %s",
                        tn_format_sizes(ist->ndim, ist->sizes, b1, sizeof b1), tn_format_sizes(target->ndim, target->sizes, b2, sizeof b2));
    }
    tn_tensor *gx, *xc = NULL, *tc = NULL, *ic = NULL, *gc = NULL;
    if (tn_tensor_numel(x) == 0) { /* upstream returns the empty grad_input before its dtype checks */
        TN_TRY(tn_tensor_empty(x->ndim, x->sizes, x->dtype, tn_tensor_device(x), &gx));
        rets[0] = tn_value_tensor(gx);
        return TN_OK;
    }
    TN_TRY(tn_nn_check_f32_f64(x->dtype, "multilabel_margin_loss_backward_out_frame"));
    TN_TRY(long_target(target));
    TN_TRY(same_type(ist, x->dtype));
    TN_TRY(same_type(go, x->dtype));
    bool go_rows = !(red != RED_NONE || go->ndim == 0);
    if (go_rows) TN_TRY(grad_rows(go, g.nframe));
    TN_TRY(tn_tensor_empty(x->ndim, x->sizes, x->dtype, tn_tensor_device(x), &gx));
    if (tn_tensor_is_meta(gx)) { rets[0] = tn_value_tensor(gx); return TN_OK; }
    const void *xd, *td, *id, *gd;
    tn_status st = dense(x, &xc, &xd);
    if (st == TN_OK) st = dense(target, &tc, &td);
    if (st == TN_OK) st = dense(ist, &ic, &id);
    if (st == TN_OK) st = dense(go, &gc, &gd);
    if (st == TN_OK) st = check_targets(td, g.nframe * g.dim, -1, g.dim, "argument #3 'target' is out of range");
    for (int64_t i = 0; st == TN_OK && i < g.nframe * g.dim; i++) {
        double v = x->dtype == TN_DTYPE_FLOAT32 ? ((const float *)id)[i] : ((const double *)id)[i];
        if (!(v >= 0 && v <= 1)) st = tn_error(TN_ERR_RUNTIME, "argument #5 'is_target' is out of range");
    }
    if (st == TN_OK) {
        double gs = red == RED_MEAN ? 1.0 / (double)(g.nframe * g.dim) : 1.0 / (double)g.dim;
        if (x->dtype == TN_DTYPE_FLOAT32) ml_bwd_float(tn_tensor_data(gx), gd, go_rows, xd, td, id, (float)gs, g);
        else ml_bwd_double(tn_tensor_data(gx), gd, go_rows, xd, td, id, gs, g);
    }
    tn_tensor_release(xc);
    tn_tensor_release(tc);
    tn_tensor_release(ic);
    tn_tensor_release(gc);
    if (st != TN_OK) { tn_tensor_release(gx); return st; }
    rets[0] = tn_value_tensor(gx);
    return TN_OK;
}
