/* decompose.c — composite operators autograd runs as their parts (upstream's
 * CompositeImplicitAutograd): with grad mode on, e.g. batch_norm becomes native_batch_norm
 * through the door, so the part is recorded under upstream's node name. Also the list of
 * operators whose outputs never require grad (detach, factories *_like). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/decompose.h"
#include "autograd/formulas.h"
#include "ops/cross_entropy.h"
#include "ops/iter.h"
#include "ops/quantile.h"
#include "ops/shape.h"

static tn_value none(void) { tn_value v = {.tag = TN_V_NONE}; return v; }

/* Runs op and keeps result 0, releasing the others. */
static tn_status first_of(tn_op_id op, tn_value *args, tn_value *rets) {
    tn_value r[8];
    TN_TRY(tn_dispatch(op, args, r));
    for (int k = 1; k < tn_op_schemas[op].nrets; k++) tn_value_release(&r[k]);
    rets[0] = r[0];
    return TN_OK;
}

static tn_status d_dropout(const tn_value *a, tn_value *rets) {
    double p = a[1].u.d;
    bool train = a[2].u.b;
    if (!train || p == 0.0) {
        /* upstream returns the input itself */
        tn_tensor_retain(a[0].u.t);
        rets[0] = tn_value_tensor(a[0].u.t);
        return TN_OK;
    }
    tn_value b[3] = {a[0], a[1], tn_value_bool(true)};
    return first_of(TN_OP_native_dropout, b, rets);
}

static tn_status d_batch_norm(const tn_value *a, tn_value *rets) {
    tn_value b[8] = {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]};
    return first_of(TN_OP_native_batch_norm, b, rets);
}

static tn_status d_layer_norm(const tn_value *a, tn_value *rets) {
    tn_value b[5] = {a[0], a[1], a[2], a[3], a[4]};
    return first_of(TN_OP_native_layer_norm, b, rets);
}

/* log_sigmoid as upstream's CompositeImplicitAutograd: log_sigmoid_forward's output (its
 * buffer is what the recorded node's backward reads) */
static tn_status d_log_sigmoid(const tn_value *a, tn_value *rets) {
    tn_value b[1] = {a[0]};
    return first_of(TN_OP_log_sigmoid_forward, b, rets);
}

static tn_status d_rms_norm(const tn_value *a, tn_value *rets) {
    tn_value b[4] = {a[0], a[1], a[2], a[3]};
    return first_of(TN_OP__fused_rms_norm, b, rets);
}

/* convolution(b[0..8]) of an input that may lack the batch dim (one less than the weight):
 * then unsqueeze, convolution, squeeze, as upstream's conv1d/2d/3d do. */
static tn_status conv_maybe_unbatched(tn_value *b, tn_value *rets) {
    tn_tensor *x = b[0].u.t, *w = b[1].u.t;
    if (x->ndim != w->ndim - 1) return tn_dispatch(TN_OP_convolution, b, rets);
    tn_value u[2] = {b[0], tn_value_int(0)}, xb, y;
    TN_TRY(tn_dispatch(TN_OP_unsqueeze, u, &xb));
    b[0] = xb;
    tn_status st = tn_dispatch(TN_OP_convolution, b, &y);
    tn_value_release(&xb);
    if (st != TN_OK) return st;
    tn_value q[2] = {y, tn_value_int(0)};
    st = tn_dispatch(TN_OP_squeeze_dim, q, rets);
    tn_value_release(&y);
    return st;
}

/* conv1d/conv2d/conv3d(input, weight, bias, stride, padding, dilation, groups) */
static tn_status d_conv(const tn_value *a, tn_value *rets) {
    int64_t zeros[3] = {0, 0, 0};
    int nsp = a[1].u.t->ndim - 2;
    if (nsp < 1 || nsp > 3) return tn_error(TN_ERR_RUNTIME, "convolution: weight must be 3-d or 4-d");
    tn_value op = {.tag = TN_V_INTLIST};
    op.u.ilist.data = zeros;
    op.u.ilist.n = nsp;
    tn_value b[9] = {a[0], a[1], a[2], a[3], a[4], a[5], tn_value_bool(false), op, a[6]};
    return conv_maybe_unbatched(b, rets);
}

static tn_status d_max_pool2d(const tn_value *a, tn_value *rets) {
    tn_value b[6] = {a[0], a[1], a[2], a[3], a[4], a[5]};
    return first_of(TN_OP_max_pool2d_with_indices, b, rets);
}

static tn_status d_max_pool3d(const tn_value *a, tn_value *rets) {
    tn_value b[6] = {a[0], a[1], a[2], a[3], a[4], a[5]};
    return first_of(TN_OP_max_pool3d_with_indices, b, rets);
}

/* nll_loss / nll_loss_nd / nll_loss2d(self, target, weight, reduction, ignore_index) */
static tn_status d_nll_loss(const tn_value *a, tn_value *rets) {
    tn_value b[5] = {a[0], a[1], a[2], a[3], a[4]};
    int nd = a[0].u.t->ndim;
    if (nd <= 2) return first_of(TN_OP_nll_loss_forward, b, rets);
    if (nd == 4) return first_of(TN_OP_nll_loss2d_forward, b, rets);
    return tn_error(TN_ERR_NOT_IMPLEMENTED,
                    "autograd of nll_loss on a %d-d input is not implemented by torchnative", nd);
}

/* softmax.int / log_softmax.int(self, dim, dtype): cast to dtype first, then the
 * underscore operator (`op`), whose node is upstream's. */
static tn_status softmax_family(tn_op_id op, const tn_value *a, tn_value *rets) {
    tn_tensor *x = a[0].u.t, *cast = NULL;
    if (a[2].tag == TN_V_DTYPE && a[2].u.dtype != x->dtype) {
        tn_value c[7] = {a[0], a[2], none(), none(), none(), tn_value_bool(false), none()};
        tn_value r;
        TN_TRY(tn_dispatch(TN_OP__to_copy, c, &r));
        cast = r.u.t;
    }
    tn_value b[3] = {tn_value_tensor(cast ? cast : x), a[1], tn_value_bool(false)};
    tn_status st = tn_dispatch(op, b, rets);
    tn_tensor_release(cast);
    return st;
}

static tn_status d_log_softmax(const tn_value *a, tn_value *rets) { return softmax_family(TN_OP__log_softmax, a, rets); }
static tn_status d_softmax(const tn_value *a, tn_value *rets) { return softmax_family(TN_OP__softmax, a, rets); }

/* Helper: one op, result 0 into *out (new reference). */
static tn_status run(tn_op_id op, int n, tn_value *args, tn_tensor **out) {
    (void)n;
    tn_value r[8];
    TN_TRY(tn_dispatch(op, args, r));
    for (int k = 1; k < tn_op_schemas[op].nrets; k++) tn_value_release(&r[k]);
    *out = r[0].u.t;
    return TN_OK;
}

/* cross_entropy_loss(self, target, weight, reduction, ignore_index, label_smoothing):
 * log_softmax over the class dim, then nll_loss (class indices), or the operator's own
 * composite (ops/nn_loss.c: probabilities, label smoothing). */
static tn_status d_cross_entropy(const tn_value *a, tn_value *rets) {
    bool probs;
    TN_TRY(tn_nn_cross_entropy_check(a, &probs));
    if (probs || a[5].u.d > 0) return tn_nn_cross_entropy_composite(a, probs, rets);
    tn_tensor *x = a[0].u.t, *lsm;
    tn_value b[3] = {a[0], tn_value_int(x->ndim == 1 ? 0 : 1), tn_value_bool(false)};
    TN_TRY(run(TN_OP__log_softmax, 3, b, &lsm));
    tn_value n[5] = {tn_value_tensor(lsm), a[1], a[2], a[3], a[4]};
    tn_status st = d_nll_loss(n, rets);
    tn_tensor_release(lsm);
    return st;
}

/* The operator's kernel (ops/nn_attention.c): with dropout it is upstream's math path, a
 * chain of door calls, so under autograd each step is recorded. */
tn_status tn_op_scaled_dot_product_attention(const tn_value *args, tn_value *rets);

/* scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)
 * as its math: softmax(q k^T * scale + mask) v, each step a recorded door call. */
static tn_status d_sdpa(const tn_value *a, tn_value *rets) {
    tn_tensor *q = a[0].u.t, *k = a[1].u.t, *v = a[2].u.t;
    tn_tensor *mask = a[3].tag == TN_V_TENSOR ? a[3].u.t : NULL;
    double p = a[4].u.d;
    bool causal = a[5].u.b;
    if (p != 0.0) /* upstream's math path: the operator's own composition, every step a door call */
        return tn_op_scaled_dot_product_attention(a, rets);
    int nd = q->ndim;
    if (nd == 4 && k->ndim == 4 && v->ndim == 4 && (q->sizes[1] == k->sizes[1] || (a[7].tag == TN_V_BOOL && a[7].u.b))) {
        /* upstream's CPU choice: the flash kernel, whose backward is an operator of its own */
        tn_value b[7] = {a[0], a[1], a[2], tn_value_double(0.0), a[5], mask ? a[3] : none(), a[6]};
        return first_of(TN_OP__scaled_dot_product_flash_attention_for_cpu, b, rets);
    }
    int64_t L = q->sizes[nd - 2], S = k->sizes[nd - 2], E = q->sizes[nd - 1];
    double scale = a[6].tag == TN_V_DOUBLE ? a[6].u.d : 1.0 / sqrt((double)E);
    tn_tensor *kk = k, *vv = v, *kt = NULL, *s = NULL, *s2 = NULL, *w = NULL, *tmp = NULL;
    tn_status st = TN_OK;
    bool gqa = a[7].tag == TN_V_BOOL && a[7].u.b && nd >= 3 && q->sizes[nd - 3] != k->sizes[nd - 3];
    if (gqa) {
        int64_t rep = q->sizes[nd - 3] / k->sizes[nd - 3];
        tn_value r1[4] = {tn_value_tensor(k), tn_value_int(rep), tn_value_int(nd - 3), none()};
        tn_value r2[4] = {tn_value_tensor(v), tn_value_int(rep), tn_value_int(nd - 3), none()};
        TN_TRY(run(TN_OP_repeat_interleave_self_int, 4, r1, &kk));
        st = run(TN_OP_repeat_interleave_self_int, 4, r2, &vv);
        if (st != TN_OK) { tn_tensor_release(kk); return st; }
    }
    tn_value t1[3] = {tn_value_tensor(kk), tn_value_int(-2), tn_value_int(-1)};
    st = run(TN_OP_transpose_int, 3, t1, &kt);
    tn_value m1[2] = {tn_value_tensor(q), tn_value_tensor(kt)};
    if (st == TN_OK) st = run(TN_OP_matmul, 2, m1, &s);
    tn_value m2[2] = {tn_value_tensor(s), tn_value_double(scale)};
    if (st == TN_OK) st = run(TN_OP_mul_Scalar, 2, m2, &s2);
    if (st == TN_OK && causal) {
        /* keep j <= i (+ S - L offset as upstream's tril on the [L, S] mask) */
        int64_t sz[2] = {L, S};
        tn_value o[6] = {{.tag = TN_V_INTLIST}, tn_value_bool(true), {.tag = TN_V_DTYPE}, none(), none(), none()};
        o[0].u.ilist.data = sz;
        o[0].u.ilist.n = 2;
        o[2].u.dtype = TN_DTYPE_BOOL;
        tn_tensor *ones = NULL, *tri = NULL, *inv = NULL;
        st = run(TN_OP_full, 6, o, &ones);
        tn_value tr[2] = {tn_value_tensor(ones), tn_value_int(0)};
        if (st == TN_OK) st = run(TN_OP_tril, 2, tr, &tri);
        tn_value nt[1] = {tn_value_tensor(tri)};
        if (st == TN_OK) st = run(TN_OP_logical_not, 1, nt, &inv);
        tn_value mf[3] = {tn_value_tensor(s2), tn_value_tensor(inv), tn_value_double(-INFINITY)};
        if (st == TN_OK) st = run(TN_OP_masked_fill_Scalar, 3, mf, &tmp);
        if (st == TN_OK) { tn_tensor_release(s2); s2 = tmp; tmp = NULL; }
        tn_tensor_release(ones); tn_tensor_release(tri); tn_tensor_release(inv);
    }
    if (st == TN_OK && mask) {
        if (mask->dtype == TN_DTYPE_BOOL) {
            tn_tensor *inv = NULL;
            tn_value nt[1] = {tn_value_tensor(mask)};
            st = run(TN_OP_logical_not, 1, nt, &inv);
            tn_value mf[3] = {tn_value_tensor(s2), tn_value_tensor(inv), tn_value_double(-INFINITY)};
            if (st == TN_OK) st = run(TN_OP_masked_fill_Scalar, 3, mf, &tmp);
            tn_tensor_release(inv);
        } else {
            tn_value ad[3] = {tn_value_tensor(s2), tn_value_tensor(mask), tn_value_int(1)};
            st = run(TN_OP_add_Tensor, 3, ad, &tmp);
        }
        if (st == TN_OK) { tn_tensor_release(s2); s2 = tmp; tmp = NULL; }
    }
    tn_value sm[3] = {tn_value_tensor(s2), tn_value_int(-1), tn_value_bool(false)};
    if (st == TN_OK) st = run(TN_OP__softmax, 3, sm, &w);
    tn_value m3[2] = {tn_value_tensor(w), tn_value_tensor(vv)};
    if (st == TN_OK) st = run(TN_OP_matmul, 2, m3, &tmp);
    if (st == TN_OK) rets[0] = tn_value_tensor(tmp);
    if (gqa) { tn_tensor_release(kk); tn_tensor_release(vv); }
    tn_tensor_release(kt); tn_tensor_release(s); tn_tensor_release(s2); tn_tensor_release(w);
    return st;
}

/* pad(self, pad, mode, value): mode "constant" is constant_pad_nd; the other modes run
 * their own operators (reflection_pad2d ..., _pad_circular's parts), recorded as themselves. */
static tn_status d_pad(const tn_value *a, tn_value *rets) {
    const char *mode = a[2].tag == TN_V_STRING ? a[2].u.s.data : "constant";
    size_t n = a[2].tag == TN_V_STRING ? (size_t)a[2].u.s.n : 8;
    if (n == 8 && strncmp(mode, "constant", 8) == 0) {
        tn_value b[3] = {a[0], a[1], a[3].tag == TN_V_DOUBLE ? a[3] : tn_value_double(0.0)};
        return tn_dispatch(TN_OP_constant_pad_nd, b, rets);
    }
    /* reflect / replicate over the last 1 or 2 dims: upstream's composite picks the same ops */
    int64_t np = a[1].u.ilist.n;
    bool reflect = n == 7 && strncmp(mode, "reflect", 7) == 0, replicate = n == 9 && strncmp(mode, "replicate", 9) == 0;
    int in_dim = a[0].u.t->ndim;
    bool fits = np % 2 == 0 && np >= 2 && np <= 6 && (in_dim == np / 2 + 1 || in_dim == np / 2 + 2);
    if ((reflect || replicate) && fits && (np == 2 || np == 4)) {
        tn_op_id op = reflect ? (np == 2 ? TN_OP_reflection_pad1d : TN_OP_reflection_pad2d)
                              : (np == 2 ? TN_OP_replication_pad1d : TN_OP_replication_pad2d);
        tn_value b[2] = {a[0], a[1]};
        return tn_dispatch(op, b, rets);
    }
    /* circular, over the dims upstream's pad admits (else its kernel gives the message) */
    if (n == 8 && strncmp(mode, "circular", 8) == 0 && fits) {
        tn_value b[2] = {a[0], a[1]};
        return tn_dispatch(TN_OP__pad_circular, b, rets);
    }
    if (reflect || replicate || (n == 8 && strncmp(mode, "circular", 8) == 0)) {
        tn_status tn_op_pad(const tn_value *args, tn_value *rets);
        tn_status st = tn_op_pad(a, rets); /* fails with upstream's message, or refuses by name */
        if (st == TN_OK) {
            tn_value_release(&rets[0]);
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "autograd of pad with mode '%.*s' over %lld padded dims is not "
                                                    "implemented by torchnative", (int)n, mode, (long long)(np / 2));
        }
        return st;
    }
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "autograd of pad with mode '%.*s' is not implemented by torchnative",
                    (int)n, mode);
}

/* group_norm(input, G, weight, bias, eps, cudnn_enabled) as native_group_norm (upstream's
 * composite); shapes the kernel rejects go to the kernel for its message. */
tn_status tn_op_group_norm(const tn_value *args, tn_value *rets);
static tn_status d_group_norm(const tn_value *a, tn_value *rets) {
    tn_tensor *x = a[0].u.t;
    int64_t G = a[1].u.i;
    if (x->ndim < 2 || G <= 0 || x->sizes[1] % G != 0) return tn_op_group_norm(a, rets);
    int64_t HxW = 1;
    for (int i = 2; i < x->ndim; i++) HxW *= x->sizes[i];
    tn_value b[8] = {a[0], a[2], a[3], tn_value_int(x->sizes[0]), tn_value_int(x->sizes[1]), tn_value_int(HxW),
                     tn_value_int(G), a[4]};
    return first_of(TN_OP_native_group_norm, b, rets);
}

/* var_mean / std_mean with `unbiased` as their .correction overload (upstream's composite). */
static tn_status mean_pair_correction(tn_op_id op, tn_value self, tn_value dim, tn_value unbiased, tn_value keepdim,
                                      tn_value *rets) {
    tn_value b[4] = {self, dim, tn_value_int(unbiased.tag == TN_V_BOOL && !unbiased.u.b ? 0 : 1), keepdim};
    return tn_dispatch(op, b, rets);
}
static tn_status d_var_mean(const tn_value *a, tn_value *rets) {
    return mean_pair_correction(TN_OP_var_mean_correction, a[0], none(), a[1], tn_value_bool(false), rets);
}
static tn_status d_var_mean_dim(const tn_value *a, tn_value *rets) {
    return mean_pair_correction(TN_OP_var_mean_correction, a[0], a[1], a[2], a[3], rets);
}
static tn_status d_std_mean(const tn_value *a, tn_value *rets) {
    return mean_pair_correction(TN_OP_std_mean_correction, a[0], none(), a[1], tn_value_bool(false), rets);
}
static tn_status d_std_mean_dim(const tn_value *a, tn_value *rets) {
    return mean_pair_correction(TN_OP_std_mean_correction, a[0], a[1], a[2], a[3], rets);
}

/* ---- composites with kernels of their own, run as upstream's composite under autograd ----
 * Arguments the decomposition does not handle go to the kernel, which reports the error. */
tn_status tn_op_take_along_dim(const tn_value *args, tn_value *rets);
tn_status tn_op_tile(const tn_value *args, tn_value *rets);
tn_status tn_op_movedim_intlist(const tn_value *args, tn_value *rets);
tn_status tn_op_conv_transpose1d(const tn_value *args, tn_value *rets);
tn_status tn_op_conv_transpose2d_input(const tn_value *args, tn_value *rets);
tn_status tn_op_conv_transpose3d_input(const tn_value *args, tn_value *rets);

/* take_along_dim(self, indices, dim?): gather of the two broadcast against each other
 * except along dim; without dim, of the flattened tensors. */
static tn_status d_take_along_dim(const tn_value *a, tn_value *rets) {
    tn_tensor *x = a[0].u.t, *idx = a[1].u.t;
    if (a[2].tag == TN_V_NONE) {
        int64_t flat = -1;
        tn_tensor *xf, *if_;
        tn_value r1[2] = {a[0], tn_value_intlist(&flat, 1)}, r2[2] = {a[1], tn_value_intlist(&flat, 1)};
        TN_TRY(run(TN_OP_reshape, 2, r1, &xf));
        tn_status st = run(TN_OP_reshape, 2, r2, &if_);
        if (st == TN_OK) {
            tn_value g[4] = {tn_value_tensor(xf), tn_value_int(0), tn_value_tensor(if_), tn_value_bool(false)};
            st = tn_dispatch(TN_OP_gather, g, rets);
            tn_tensor_release(if_);
        }
        tn_tensor_release(xf);
        return st;
    }
    int nd = x->ndim;
    int64_t d = a[2].u.i < 0 ? a[2].u.i + nd : a[2].u.i;
    if (idx->ndim != nd || d < 0 || d >= nd) return tn_op_take_along_dim(a, rets);
    int64_t xs[TN_MAX_DIMS], is[TN_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        int64_t p = x->sizes[i], q = idx->sizes[i];
        if (i == d) { xs[i] = p; is[i] = q; continue; }
        if (p != q && p != 1 && q != 1) return tn_op_take_along_dim(a, rets);
        xs[i] = is[i] = p == 1 ? q : p;
    }
    /* with a dim, upstream takes the indices modulo the dim's size (-1 is the last element) */
    tn_tensor *xb, *ib, *iw = NULL;
    tn_value iv = a[1];
    if (x->sizes[d] > 0) {
        tn_value rm[2] = {a[1], tn_value_int(x->sizes[d])};
        TN_TRY(run(TN_OP_remainder_Scalar, 2, rm, &iw));
        iv = tn_value_tensor(iw);
    }
    tn_value e1[3] = {a[0], tn_value_intlist(xs, nd), tn_value_bool(false)}, e2[3] = {iv, tn_value_intlist(is, nd), tn_value_bool(false)};
    tn_status st = run(TN_OP_expand, 3, e1, &xb);
    if (st != TN_OK) { tn_tensor_release(iw); return st; }
    st = run(TN_OP_expand, 3, e2, &ib);
    tn_tensor_release(iw);
    if (st == TN_OK) {
        tn_value g[4] = {tn_value_tensor(xb), tn_value_int(d), tn_value_tensor(ib), tn_value_bool(false)};
        st = tn_dispatch(TN_OP_gather, g, rets);
        tn_tensor_release(ib);
    }
    tn_tensor_release(xb);
    return st;
}

/* special_ndtr(x) = (1 + erf(x * M_SQRT1_2)) * 0.5: upstream's composite. */
static tn_status d_special_ndtr(const tn_value *a, tn_value *rets) {
    tn_tensor *m = NULL, *e = NULL, *p = NULL;
    tn_value ma[2] = {a[0], tn_value_double(M_SQRT1_2)};
    TN_TRY(run(TN_OP_mul_Scalar, 2, ma, &m));
    tn_value ea[1] = {tn_value_tensor(m)};
    tn_status st = run(TN_OP_erf, 1, ea, &e);
    tn_value pa[3] = {tn_value_tensor(e), tn_value_int(1), tn_value_int(1)};
    if (st == TN_OK) st = run(TN_OP_add_Scalar, 3, pa, &p);
    tn_value ha[2] = {tn_value_tensor(p), tn_value_double(0.5)};
    if (st == TN_OK) st = tn_dispatch(TN_OP_mul_Scalar, ha, rets);
    tn_tensor_release(m), tn_tensor_release(e), tn_tensor_release(p);
    return st;
}

/* ---- linalg.pinv's other overloads and pinverse: upstream's composites over
 * linalg_pinv.atol_rtol_tensor (which has the derivative), with float64 tolerance tensors:
 * atol defaults to 0, rtol to eps * max(m, n) unless a positive atol was given. Inputs
 * they do not take (not a real floating matrix) go to their kernel for its error. */
tn_status tn_op_linalg_pinv_atol_rtol_float(const tn_value *args, tn_value *rets);
tn_status tn_op_linalg_pinv(const tn_value *args, tn_value *rets);
tn_status tn_op_linalg_pinv_rcond_tensor(const tn_value *args, tn_value *rets);

static tn_status scalar64(double v, tn_tensor **out) {
    tn_value dt = {.tag = TN_V_DTYPE};
    dt.u.dtype = TN_DTYPE_FLOAT64;
    tn_value f[6] = {tn_value_intlist(NULL, 0), tn_value_double(v), dt, none(), none(), none()};
    return run(TN_OP_full, 6, f, out);
}

static double pinv_default_rtol(const tn_tensor *x) {
    double eps = x->dtype == TN_DTYPE_FLOAT32 ? (double)FLT_EPSILON : DBL_EPSILON;
    int64_t m = x->sizes[x->ndim - 2], n = x->sizes[x->ndim - 1];
    return eps * (double)(m > n ? m : n);
}

static bool pinv_composable(const tn_tensor *x) {
    return x->ndim >= 2 && (x->dtype == TN_DTYPE_FLOAT32 || x->dtype == TN_DTYPE_FLOAT64);
}

/* rets[0] = linalg_pinv.atol_rtol_tensor(x, atol, rtol, hermitian): the overload with the
 * derivative (LinalgPinvBackward0) */
static tn_status pinv_tensor(tn_tensor *x, tn_tensor *atol, tn_tensor *rtol, bool hermitian, tn_value *rets) {
    tn_value b[4] = {tn_value_tensor(x), tn_value_tensor(atol), tn_value_tensor(rtol), tn_value_bool(hermitian)};
    return tn_dispatch(TN_OP_linalg_pinv_atol_rtol_tensor, b, rets);
}

/* linalg_pinv.atol_rtol_float(self, atol?, rtol?, hermitian) */
static tn_status d_pinv_float(const tn_value *a, tn_value *rets) {
    tn_tensor *x = a[0].u.t;
    if (!pinv_composable(x)) return tn_op_linalg_pinv_atol_rtol_float(a, rets);
    bool has_atol = a[1].tag == TN_V_DOUBLE;
    double atol = has_atol ? a[1].u.d : 0.0;
    double rtol = a[2].tag == TN_V_DOUBLE ? a[2].u.d : (has_atol && atol > 0.0 ? 0.0 : pinv_default_rtol(x));
    tn_tensor *at = NULL, *rt = NULL;
    tn_status st = scalar64(atol, &at);
    if (st == TN_OK) st = scalar64(rtol, &rt);
    if (st == TN_OK) st = pinv_tensor(x, at, rt, a[3].u.b, rets);
    tn_tensor_release(at), tn_tensor_release(rt);
    return st;
}

/* linalg_pinv(self, rcond, hermitian) / .rcond_tensor: rtol = rcond, atol = 0 */
static tn_status d_pinv_rcond(const tn_value *a, tn_value *rets) {
    tn_tensor *x = a[0].u.t;
    if (!pinv_composable(x))
        return a[1].tag == TN_V_TENSOR ? tn_op_linalg_pinv_rcond_tensor(a, rets) : tn_op_linalg_pinv(a, rets);
    tn_tensor *at = NULL, *rt = NULL;
    tn_status st = scalar64(0, &at);
    if (st == TN_OK && a[1].tag == TN_V_TENSOR) rt = a[1].u.t, tn_tensor_retain(rt);
    else if (st == TN_OK) st = scalar64(a[1].u.d, &rt);
    if (st == TN_OK) st = pinv_tensor(x, at, rt, a[2].u.b, rets);
    tn_tensor_release(at), tn_tensor_release(rt);
    return st;
}

/* pinverse(self, rcond) = linalg_pinv(self, rcond, hermitian=False) */
static tn_status d_pinverse(const tn_value *a, tn_value *rets) {
    tn_value b[3] = {a[0], a[1], tn_value_bool(false)};
    return d_pinv_rcond(b, rets);
}

tn_status tn_op_ctc_loss(const tn_value *args, tn_value *rets);
tn_status tn_op_embedding_bag(const tn_value *args, tn_value *rets);
tn_status tn_op_embedding_bag_padding_idx(const tn_value *args, tn_value *rets);

/* the functional forms of views (view_functional.c) are compositions through the door:
 * under autograd they run as themselves, so their parts (view, clone, copy_) are recorded */
#define TN_VIEW_FUNCTIONAL(op) tn_status tn_op_##op(const tn_value *args, tn_value *rets);
#define TN_VIEW_FUNCTIONAL_OPS(X)                                                                                \
    X(alias_copy) X(as_strided_copy) X(detach_copy) X(diagonal_copy) X(expand_copy) X(permute_copy)              \
    X(select_copy_int) X(slice_copy_Tensor) X(split_copy_Tensor) X(split_with_sizes_copy) X(squeeze_copy)        \
    X(squeeze_copy_dim) X(squeeze_copy_dims) X(t_copy) X(transpose_copy_int) X(unbind_copy_int) X(unfold_copy)   \
    X(unsqueeze_copy) X(view_copy) X(view_copy_dtype) X(_reshape_alias_copy) X(slice_scatter) X(select_scatter)  \
    X(diagonal_scatter) /* as_strided_scatter: upstream's own formula (generated row), whose self gradient   \
                           keeps the window rather than zeroing it, is what upstream computes */            \
    /* composite.c */                                                                                            \
    X(divide_Tensor) X(divide_Scalar) X(divide_Tensor_mode) X(divide_Scalar_mode) X(positive) X(fliplr)          \
    X(flipud) X(deg2rad) X(rad2deg) X(diag_embed) X(diag) X(meshgrid) X(meshgrid_indexing) /* ldexp: its generated row */ \
    X(subtract_Tensor) X(subtract_Scalar) X(unsafe_chunk) X(unsafe_split_Tensor) X(unsafe_split_with_sizes)       \
    X(linalg_diagonal) X(ravel) X(diagflat) X(msort) X(relu6) X(selu) X(celu) X(atleast_1d) X(atleast_2d)         \
    X(atleast_3d) X(atleast_1d_Sequence) X(atleast_2d_Sequence) X(atleast_3d_Sequence) X(hsplit_int)              \
    X(hsplit_array) X(vsplit_int) X(vsplit_array) X(dsplit_int) X(dsplit_array) X(column_stack)                   \
    X(float_power_Tensor_Tensor) X(float_power_Tensor_Scalar) X(float_power_Scalar) X(trace) \
    X(rot90) X(fill_Scalar) X(fill_Tensor) X(dist) X(special_polygamma) X(special_psi) X(special_digamma) X(special_gammaln) X(special_i0) X(special_erfinv) X(special_multigammaln) X(special_gammainc) \
    X(special_gammaincc) X(special_expit) X(special_exp2) X(special_expm1) X(special_erf) X(special_erfc) X(special_log1p) X(special_sinc) \
    /* composite_nn.c */ X(margin_ranking_loss) X(hinge_embedding_loss) X(cosine_embedding_loss) X(pairwise_distance) X(triplet_margin_loss) X(kl_div) X(poisson_nll_loss) X(soft_margin_loss) X(cosine_similarity) \
    X(prelu) X(rrelu) X(feature_dropout) X(alpha_dropout) X(feature_alpha_dropout) X(one_hot) X(pixel_shuffle) X(pixel_unshuffle) X(channel_shuffle) X(_pad_circular) \
    /* composite_shape.c */ X(tensordot) X(inner) X(kron) X(block_diag) X(cartesian_prod) X(combinations) X(argwhere) X(nanmean) X(addr) X(bilinear) X(instance_norm) \
    X(index_add) X(index_copy) X(index_fill_int_Scalar) X(index_fill_int_Tensor) X(put) X(trapezoid_x) X(trapezoid_dx) X(trapz_x) X(trapz_dx) X(cumulative_trapezoid_x) X(cumulative_trapezoid_dx) \
    X(cummaxmin_backward) X(avg_pool1d) X(max_pool1d_with_indices) X(max_pool1d) X(adaptive_avg_pool1d) X(upsample_nearest1d_vec) X(upsample_linear1d_vec) X(upsample_nearest3d_vec) X(_upsample_nearest_exact1d_vec) X(_upsample_nearest_exact2d_vec) X(_upsample_nearest_exact3d_vec) X(upsample_trilinear3d_vec) X(upsample_bicubic2d_vec) X(_upsample_bilinear2d_aa_vec) X(_upsample_bicubic2d_aa_vec) X(grid_sampler) X(cov) X(corrcoef) X(index_reduce) X(cdist) X(pdist) X(sum_to_size) X(renorm) \
    /* nn_loss_margin.c (the losses and their backward: generated rows) */ X(multilabel_margin_loss) /* composite_einsum.c */ X(einsum) /* composite_gradient.c */ X(gradient_scalarint) X(gradient_scalararray) X(gradient_array) X(gradient_scalarrayint) X(gradient_scalarrayarray) X(gradient_tensorarrayint) X(gradient_tensorarray) \
    /* composite_private.c (_safe_softmax, _unsafe_masked_index(_put_accumulate): generated rows; _chunk_cat: none, upstream refuses its derivative) */ X(_batch_norm_with_update) \
    /* spectral_api.c, complex_parts.c */ X(fft_fft) X(fft_ifft) X(fft_rfft) X(fft_irfft) X(fft_hfft) X(fft_ihfft) X(fft_fft2) X(fft_ifft2) \
    X(fft_rfft2) X(fft_irfft2) X(fft_hfft2) X(fft_ihfft2) X(fft_fftn) X(fft_ifftn) X(fft_rfftn) X(fft_irfftn) X(fft_hfftn) X(fft_ihfftn) \
    X(fft_fftshift) X(fft_ifftshift) X(stft) X(istft) X(real) X(imag) \
    /* misc_ops.c */ X(diff)
TN_VIEW_FUNCTIONAL_OPS(TN_VIEW_FUNCTIONAL)
#undef TN_VIEW_FUNCTIONAL

static tn_status d_ger(const tn_value *a, tn_value *rets) { return tn_dispatch(TN_OP_outer, a, rets); }
static tn_status d_max_other(const tn_value *a, tn_value *rets) { return tn_dispatch(TN_OP_maximum, a, rets); }
static tn_status d_min_other(const tn_value *a, tn_value *rets) { return tn_dispatch(TN_OP_minimum, a, rets); }

/* type_as: self itself when the dtypes agree (upstream's to() returns it), else a copy. */
static tn_status d_type_as(const tn_value *a, tn_value *rets) {
    tn_tensor *x = a[0].u.t;
    if (x->dtype == a[1].u.t->dtype) {
        tn_tensor_retain(x);
        rets[0] = tn_value_tensor(x);
        return TN_OK;
    }
    tn_value d = {.tag = TN_V_DTYPE};
    d.u.dtype = a[1].u.t->dtype;
    tn_value c[7] = {a[0], d, none(), none(), none(), tn_value_bool(false), none()};
    return tn_dispatch(TN_OP__to_copy, c, rets);
}

/* tile: repeat with the dims padded by leading ones to the tensor's rank. */
static tn_status d_tile(const tn_value *a, tn_value *rets) {
    tn_tensor *x = a[0].u.t;
    int64_t n = a[1].u.ilist.n, nd = x->ndim > n ? x->ndim : n;
    if (nd > TN_MAX_DIMS) return tn_op_tile(a, rets);
    int64_t reps[TN_MAX_DIMS];
    for (int64_t i = 0; i < nd; i++) reps[i] = i < nd - n ? 1 : a[1].u.ilist.data[i - (nd - n)];
    tn_value b[2] = {a[0], tn_value_intlist(reps, nd)};
    return tn_dispatch(TN_OP_repeat, b, rets);
}

/* movedim / moveaxis: a permute putting source dims at their destinations, the others in
 * order in the remaining places. */
static tn_status movedim_perm(const tn_value *a, const int64_t *src, const int64_t *dst, int64_t n, tn_value *rets) {
    tn_tensor *x = a[0].u.t;
    int nd = x->ndim, ndw = nd > 0 ? nd : 1;
    int64_t order[TN_MAX_DIMS];
    bool used_src[TN_MAX_DIMS] = {0}, used_dst[TN_MAX_DIMS] = {0};
    if (nd == 0 || n > nd) return TN_ERR_RUNTIME;
    for (int64_t i = 0; i < n; i++) {
        int64_t s = src[i] < 0 ? src[i] + ndw : src[i], d = dst[i] < 0 ? dst[i] + ndw : dst[i];
        if (s < 0 || s >= nd || d < 0 || d >= nd || used_src[s] || used_dst[d]) return TN_ERR_RUNTIME;
        used_src[s] = used_dst[d] = true;
        order[d] = s;
    }
    int64_t next = 0;
    for (int d = 0; d < nd; d++) {
        if (used_dst[d]) continue;
        while (used_src[next]) next++;
        order[d] = next++;
    }
    tn_value b[2] = {a[0], tn_value_intlist(order, nd)};
    return tn_dispatch(TN_OP_permute, b, rets);
}
static tn_status d_movedim_int(const tn_value *a, tn_value *rets) {
    int64_t s = a[1].u.i, d = a[2].u.i;
    tn_status st = movedim_perm(a, &s, &d, 1, rets);
    if (st == TN_ERR_RUNTIME) {
        tn_value b[3] = {a[0], tn_value_intlist(&s, 1), tn_value_intlist(&d, 1)};
        return tn_op_movedim_intlist(b, rets);
    }
    return st;
}
static tn_status d_movedim_intlist(const tn_value *a, tn_value *rets) {
    if (a[1].u.ilist.n != a[2].u.ilist.n) return tn_op_movedim_intlist(a, rets);
    tn_status st = movedim_perm(a, a[1].u.ilist.data, a[2].u.ilist.data, a[1].u.ilist.n, rets);
    return st == TN_ERR_RUNTIME ? tn_op_movedim_intlist(a, rets) : st;
}

/* conv_transpose1d/2d(input, weight, bias, stride, padding, output_padding, groups, dilation)
 * as convolution(transposed = true); an unbatched input gets a batch dim of one. */
static tn_status d_conv_transpose(const tn_value *a, tn_value *rets, tn_status (*kernel)(const tn_value *, tn_value *)) {
    tn_tensor *x = a[0].u.t, *w = a[1].u.t, *xb = NULL;
    if (x->ndim != w->ndim && x->ndim != w->ndim - 1) return kernel(a, rets);
    bool unbatched = x->ndim == w->ndim - 1;
    tn_value in = a[0];
    if (unbatched) {
        tn_value u[2] = {a[0], tn_value_int(0)};
        TN_TRY(run(TN_OP_unsqueeze, 2, u, &xb));
        in = tn_value_tensor(xb);
    }
    tn_value b[9] = {in, a[1], a[2], a[3], a[4], a[7], tn_value_bool(true), a[5], a[6]};
    tn_value r;
    tn_status st = tn_dispatch(TN_OP_convolution, b, &r);
    tn_tensor_release(xb);
    if (st != TN_OK || !unbatched) {
        if (st == TN_OK) rets[0] = r;
        return st;
    }
    tn_value q[2] = {r, tn_value_int(0)};
    st = tn_dispatch(TN_OP_squeeze_dim, q, rets);
    tn_value_release(&r);
    return st;
}
static tn_status d_conv_transpose1d(const tn_value *a, tn_value *rets) {
    return d_conv_transpose(a, rets, tn_op_conv_transpose1d);
}
static tn_status d_conv_transpose2d(const tn_value *a, tn_value *rets) {
    return d_conv_transpose(a, rets, tn_op_conv_transpose2d_input);
}
static tn_status d_conv_transpose3d(const tn_value *a, tn_value *rets) {
    return d_conv_transpose(a, rets, tn_op_conv_transpose3d_input);
}

/* where with a Scalar branch: the scalar as a 0-dim tensor of the other branch's dtype. */
static tn_status d_where_scalar(const tn_value *a, tn_value *rets, int scalar_at) {
    tn_tensor *other = a[scalar_at == 1 ? 2 : 1].u.t, *s;
    tn_value dt = {.tag = TN_V_DTYPE};
    dt.u.dtype = other->dtype;
    tn_value f[6] = {tn_value_intlist(NULL, 0), a[scalar_at], dt, none(), none(), none()};
    TN_TRY(run(TN_OP_full, 6, f, &s));
    tn_value b[3] = {a[0], scalar_at == 1 ? tn_value_tensor(s) : a[1], scalar_at == 2 ? tn_value_tensor(s) : a[2]};
    tn_status st = tn_dispatch(TN_OP_where_self, b, rets);
    tn_tensor_release(s);
    return st;
}
static tn_status d_where_scalar_self(const tn_value *a, tn_value *rets) { return d_where_scalar(a, rets, 1); }
static tn_status d_where_scalar_other(const tn_value *a, tn_value *rets) { return d_where_scalar(a, rets, 2); }

/* conj of a real tensor: the tensor itself, as upstream; of a complex one _conj. */
static tn_status d_self_if_real(const tn_value *a, tn_value *rets) {
    tn_tensor *x = a[0].u.t;
    if (tn_dtype_is_complex(x->dtype)) return tn_dispatch(TN_OP__conj, a, rets);
    tn_tensor_retain(x);
    rets[0] = tn_value_tensor(x);
    return TN_OK;
}

/* resolve_conj / resolve_neg: the tensor itself without the bit, else a clone (whose copy
 * reads through the bits; upstream's resolution is a conj-aware copy_ too). */
static tn_status d_resolve(const tn_value *a, tn_value *rets, uint32_t bit) {
    if (!(a[0].u.t->flags & bit)) {
        tn_tensor_retain(a[0].u.t);
        rets[0] = tn_value_tensor(a[0].u.t);
        return TN_OK;
    }
    tn_value b[2] = {a[0], {.tag = TN_V_NONE}};
    return tn_dispatch(TN_OP_clone, b, rets);
}
static tn_status d_resolve_conj(const tn_value *a, tn_value *rets) { return d_resolve(a, rets, TN_TENSOR_CONJ); }
static tn_status d_resolve_neg(const tn_value *a, tn_value *rets) { return d_resolve(a, rets, TN_TENSOR_NEG); }

/* adjoint / mH / matrix_H: transpose(-2, -1), of a complex tensor then its conjugate view. */
tn_status tn_op_adjoint(const tn_value *args, tn_value *rets);
static tn_status d_adjoint(const tn_value *a, tn_value *rets) {
    tn_tensor *x = a[0].u.t;
    if (x->ndim < 2) return tn_op_adjoint(a, rets);
    tn_value b[3] = {a[0], tn_value_int(-2), tn_value_int(-1)};
    if (!tn_dtype_is_complex(x->dtype)) return tn_dispatch(TN_OP_transpose_int, b, rets);
    tn_tensor *t; /* complex: the transpose's conjugate view */
    TN_TRY(tn_dispatch_one(TN_OP_transpose_int, b, &t));
    tn_value c[1] = {tn_value_tensor(t)};
    tn_status st = tn_dispatch(TN_OP__conj, c, rets);
    tn_tensor_release(t);
    return st;
}

tn_status tn_op_matrix_H(const tn_value *args, tn_value *rets);
static tn_status d_matrix_H(const tn_value *a, tn_value *rets) {
    return a[0].u.t->ndim == 2 ? d_adjoint(a, rets) : tn_op_matrix_H(a, rets); /* 2-D only, as upstream */
}

static tn_status d_split_sizes(const tn_value *a, tn_value *rets) { return tn_dispatch(TN_OP_split_with_sizes, a, rets); }

/* narrow.Tensor: the start read from its 0-dim tensor, then narrow. */
tn_status tn_op_narrow_tensor(const tn_value *args, tn_value *rets);
static tn_status d_narrow_tensor(const tn_value *a, tn_value *rets) {
    tn_tensor *st = a[2].u.t;
    if (st->ndim != 0 || (st->dtype != TN_DTYPE_INT64 && st->dtype != TN_DTYPE_INT32)) return tn_op_narrow_tensor(a, rets);
    int64_t start = st->dtype == TN_DTYPE_INT64 ? *(const int64_t *)tn_tensor_data(st) : *(const int32_t *)tn_tensor_data(st);
    tn_value b[4] = {a[0], a[1], tn_value_int(start), a[3]};
    return tn_dispatch(TN_OP_narrow, b, rets);
}

/* hstack / vstack / dstack: cat of the tensors made at least 1-, 2- or 3-d (upstream's
 * atleast_nd shapes), along 0 or 1 (hstack: 0 for 1-d tensors), 0, 2. */
tn_status tn_op_hstack(const tn_value *args, tn_value *rets);
tn_status tn_op_vstack(const tn_value *args, tn_value *rets);
tn_status tn_op_dstack(const tn_value *args, tn_value *rets);
static tn_status d_stack_nd(const tn_value *a, tn_value *rets, int rank, tn_status (*kernel)(const tn_value *, tn_value *)) {
    int64_t n = a[0].u.tlist.n;
    if (n == 0 || n > 4096) return kernel(a, rets);
    tn_tensor **ts = calloc((size_t)n, sizeof(tn_tensor *));
    if (!ts) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_status st = TN_OK;
    for (int64_t k = 0; k < n && st == TN_OK; k++) {
        tn_tensor *x = a[0].u.tlist.data[k];
        int64_t sz[3];
        int nd = -1;
        if (x->ndim == 0) { sz[0] = sz[1] = sz[2] = 1; nd = rank; }
        else if (x->ndim == 1 && rank >= 2) { sz[0] = 1; sz[1] = x->sizes[0]; sz[2] = 1; nd = rank; }
        else if (x->ndim == 2 && rank == 3) { sz[0] = x->sizes[0]; sz[1] = x->sizes[1]; sz[2] = 1; nd = 3; }
        if (nd < 0) {
            tn_tensor_retain(x);
            ts[k] = x;
        } else {
            tn_value r[2] = {tn_value_tensor(x), tn_value_intlist(sz, nd)};
            st = run(TN_OP_reshape, 2, r, &ts[k]);
        }
    }
    if (st == TN_OK) {
        int64_t dim = rank == 1 ? (ts[0]->ndim == 1 ? 0 : 1) : rank == 2 ? 0 : 2;
        tn_value l = {.tag = TN_V_TENSORLIST};
        l.u.tlist.data = ts;
        l.u.tlist.n = n;
        tn_value b[2] = {l, tn_value_int(dim)};
        st = tn_dispatch(TN_OP_cat, b, rets);
    }
    for (int64_t k = 0; k < n; k++) tn_tensor_release(ts[k]);
    free(ts);
    return st;
}
static tn_status d_hstack(const tn_value *a, tn_value *rets) { return d_stack_nd(a, rets, 1, tn_op_hstack); }
static tn_status d_vstack(const tn_value *a, tn_value *rets) { return d_stack_nd(a, rets, 2, tn_op_vstack); }
static tn_status d_dstack(const tn_value *a, tn_value *rets) { return d_stack_nd(a, rets, 3, tn_op_dstack); }

/* conv1d/conv2d.padding(input, weight, bias, stride, padding: "valid" | "same", dilation,
 * groups): "valid" is padding 0; "same" pads dilation * (k - 1) in total per spatial dim, the
 * odd element on the right (a constant_pad_nd first when any total is odd), as upstream. */
tn_status tn_op_conv1d_padding(const tn_value *args, tn_value *rets);
tn_status tn_op_conv2d_padding(const tn_value *args, tn_value *rets);
tn_status tn_op_conv3d_padding(const tn_value *args, tn_value *rets);
static tn_status d_conv_padding(const tn_value *a, tn_value *rets, tn_status (*kernel)(const tn_value *, tn_value *)) {
    tn_tensor *x = a[0].u.t, *w = a[1].u.t, *xp = NULL;
    int nsp = w->ndim - 2;
    const char *mode = a[4].tag == TN_V_STRING ? a[4].u.s.data : "";
    int64_t mn = a[4].tag == TN_V_STRING ? a[4].u.s.n : 0;
    bool valid = mn == 5 && memcmp(mode, "valid", 5) == 0, same = mn == 4 && memcmp(mode, "same", 4) == 0;
    if (nsp < 1 || nsp > 3 || (!valid && !same) || a[5].u.ilist.n != nsp || x->ndim < nsp + 1) return kernel(a, rets);
    int64_t sym[3] = {0, 0, 0}, pad[6] = {0, 0, 0, 0, 0, 0}, zeros[3] = {0, 0, 0};
    bool odd = false;
    if (same) {
        for (int i = 0; i < nsp; i++)
            if (a[3].u.ilist.data[i] != 1) return kernel(a, rets); /* "same" needs stride 1: the kernel says so */
        for (int i = 0; i < nsp; i++) {
            int64_t total = a[5].u.ilist.data[i] * (w->sizes[2 + i] - 1);
            sym[i] = total / 2;
            int64_t extra = total - 2 * sym[i];
            odd |= extra != 0;
            pad[2 * (nsp - 1 - i) + 1] = extra; /* constant_pad_nd lists the last dim first */
        }
    }
    tn_value in = a[0];
    if (odd) {
        tn_value p[3] = {a[0], tn_value_intlist(pad, 2 * nsp), tn_value_double(0.0)};
        TN_TRY(run(TN_OP_constant_pad_nd, 3, p, &xp));
        in = tn_value_tensor(xp);
    }
    tn_value b[9] = {in, a[1], a[2], a[3], tn_value_intlist(sym, nsp), a[5], tn_value_bool(false), tn_value_intlist(zeros, nsp), a[6]};
    tn_status st = conv_maybe_unbatched(b, rets);
    tn_tensor_release(xp);
    return st;
}
static tn_status d_conv1d_padding(const tn_value *a, tn_value *rets) { return d_conv_padding(a, rets, tn_op_conv1d_padding); }
static tn_status d_conv2d_padding(const tn_value *a, tn_value *rets) { return d_conv_padding(a, rets, tn_op_conv2d_padding); }
static tn_status d_conv3d_padding(const tn_value *a, tn_value *rets) { return d_conv_padding(a, rets, tn_op_conv3d_padding); }

/* tensor_split (all overloads): the kernel's pieces, rebuilt as narrow views through the door
 * so that each is recorded (upstream's composite is slices and narrows). */
tn_status tn_op_tensor_split_sections(const tn_value *args, tn_value *rets);
tn_status tn_op_tensor_split_indices(const tn_value *args, tn_value *rets);
tn_status tn_op_tensor_split_tensor(const tn_value *args, tn_value *rets);
static tn_status d_tensor_split(const tn_value *a, tn_value *rets, tn_status (*kernel)(const tn_value *, tn_value *)) {
    tn_value parts;
    TN_TRY(kernel(a, &parts));
    tn_tensor *x = a[0].u.t;
    int64_t d = a[2].u.i < 0 ? a[2].u.i + (x->ndim > 0 ? x->ndim : 1) : a[2].u.i, n = parts.u.tlist.n, off = 0;
    tn_tensor **out = calloc((size_t)(n ? n : 1), sizeof(tn_tensor *));
    tn_status st = out ? TN_OK : tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t k = 0; k < n && st == TN_OK; k++) {
        int64_t len = parts.u.tlist.data[k]->sizes[d];
        tn_value b[4] = {a[0], tn_value_int(d), tn_value_int(off), tn_value_int(len)};
        st = run(TN_OP_narrow, 4, b, &out[k]);
        off += len;
    }
    tn_value_release(&parts);
    if (st != TN_OK) {
        tn_tensorlist_discard(out, n);
        return st;
    }
    rets[0] = tn_value_tensorlist(out, n);
    return TN_OK;
}
static tn_status d_tensor_split_sections(const tn_value *a, tn_value *rets) {
    return d_tensor_split(a, rets, tn_op_tensor_split_sections);
}
static tn_status d_tensor_split_indices(const tn_value *a, tn_value *rets) {
    return d_tensor_split(a, rets, tn_op_tensor_split_indices);
}
static tn_status d_tensor_split_tensor(const tn_value *a, tn_value *rets) {
    return d_tensor_split(a, rets, tn_op_tensor_split_tensor);
}

/* repeat_interleave.self_Tensor(self, repeats, dim?, output_size?): index_select of self (or
 * of its flattening) at repeat_interleave(repeats), a single repeat applying to every slice. */
tn_status tn_op_repeat_interleave_self_tensor(const tn_value *args, tn_value *rets);
static tn_status d_repeat_interleave_tensor(const tn_value *a, tn_value *rets) {
    tn_tensor *x = a[0].u.t, *rep = a[1].u.t, *xf = NULL, *r1 = NULL, *idx = NULL;
    int64_t flat = -1, d = 0;
    if (rep->ndim > 1) return tn_op_repeat_interleave_self_tensor(a, rets);
    tn_value src = a[0];
    if (a[2].tag == TN_V_NONE) {
        tn_value r[2] = {a[0], tn_value_intlist(&flat, 1)};
        TN_TRY(run(TN_OP_reshape, 2, r, &xf));
        src = tn_value_tensor(xf);
    } else {
        d = a[2].u.i < 0 ? a[2].u.i + (x->ndim > 0 ? x->ndim : 1) : a[2].u.i;
        if (d < 0 || d >= (x->ndim > 0 ? x->ndim : 1)) return tn_op_repeat_interleave_self_tensor(a, rets);
    }
    tn_tensor *s = src.u.t;
    int64_t len = s->ndim > 0 ? s->sizes[d] : 1;
    tn_status st = TN_OK;
    tn_value reps = a[1];
    if (tn_tensor_numel(rep) == 1 && len != 1) {
        int64_t one = 1;
        tn_value r[2] = {a[1], tn_value_intlist(&one, 1)};
        tn_tensor *rr;
        st = run(TN_OP_reshape, 2, r, &rr);
        if (st == TN_OK) {
            tn_value e[3] = {tn_value_tensor(rr), tn_value_intlist(&len, 1), tn_value_bool(false)};
            st = run(TN_OP_expand, 3, e, &r1);
            tn_tensor_release(rr);
            reps = tn_value_tensor(r1);
        }
    }
    if (st == TN_OK) {
        tn_value ri[2] = {reps, a[3]};
        st = run(TN_OP_repeat_interleave_Tensor, 2, ri, &idx);
    }
    if (st == TN_OK) {
        tn_value b[3] = {src, tn_value_int(d), tn_value_tensor(idx)};
        st = tn_dispatch(TN_OP_index_select, b, rets);
    }
    tn_tensor_release(xf);
    tn_tensor_release(r1);
    tn_tensor_release(idx);
    return st;
}

static tn_status d_adaptive_avg_pool2d(const tn_value *a, tn_value *rets) {
    tn_value b[2] = {a[0], a[1]};
    return tn_dispatch(TN_OP__adaptive_avg_pool2d, b, rets);
}

/* upsample_*2d.vec(input, output_size?, [align_corners,] scale_factors?): upstream's
 * composite computes the output size (floor(in * scale)) and passes the scales on. */
static tn_status upsample_vec_parts(const tn_value *x, const tn_value *osv, const tn_value *sfv, int64_t *osz,
                                    tn_value *sh, tn_value *sw) {
    tn_tensor *t = x->u.t;
    sh->tag = sw->tag = TN_V_NONE;
    if ((osv->tag == TN_V_INTLIST) == (sfv->tag == TN_V_DOUBLELIST))
        return tn_error(TN_ERR_RUNTIME, "Must specify exactly one of output_size and scale_factors");
    if (t->ndim != 4)
        return tn_error(TN_ERR_RUNTIME, "Non-empty 4D data tensor expected but got a tensor with %d dims", t->ndim);
    if (osv->tag == TN_V_INTLIST) {
        if (osv->u.ilist.n != 2)
            return tn_error(TN_ERR_RUNTIME, "It is expected output_size equals to 2, but got size %lld",
                            (long long)osv->u.ilist.n);
        osz[0] = osv->u.ilist.data[0];
        osz[1] = osv->u.ilist.data[1];
    } else {
        if (sfv->u.dlist.n != 2)
            return tn_error(TN_ERR_RUNTIME, "It is expected scale_factors equals to 2, but got size %lld",
                            (long long)sfv->u.dlist.n);
        osz[0] = (int64_t)floor((double)t->sizes[2] * sfv->u.dlist.data[0]);
        osz[1] = (int64_t)floor((double)t->sizes[3] * sfv->u.dlist.data[1]);
        *sh = tn_value_double(sfv->u.dlist.data[0]);
        *sw = tn_value_double(sfv->u.dlist.data[1]);
    }
    return TN_OK;
}

static tn_status d_upsample_nearest2d_vec(const tn_value *a, tn_value *rets) {
    int64_t osz[2];
    tn_value sh, sw;
    TN_TRY(upsample_vec_parts(&a[0], &a[1], &a[2], osz, &sh, &sw));
    tn_value os = {.tag = TN_V_INTLIST};
    os.u.ilist.data = osz;
    os.u.ilist.n = 2;
    tn_value b[4] = {a[0], os, sh, sw};
    return tn_dispatch(TN_OP_upsample_nearest2d, b, rets);
}

static tn_status d_upsample_bilinear2d_vec(const tn_value *a, tn_value *rets) {
    int64_t osz[2];
    tn_value sh, sw;
    TN_TRY(upsample_vec_parts(&a[0], &a[1], &a[3], osz, &sh, &sw));
    tn_value os = {.tag = TN_V_INTLIST};
    os.u.ilist.data = osz;
    os.u.ilist.n = 2;
    tn_value b[5] = {a[0], os, a[2], sh, sw};
    return tn_dispatch(TN_OP_upsample_bilinear2d, b, rets);
}

/* lu_solve(self, LU_data, LU_pivots) = linalg_lu_solve(LU_data, LU_pivots, self), upstream's
 * composite (the deprecated spelling), so both LU and B get linalg_lu_solve's gradients. */
static tn_status d_lu_solve(const tn_value *a, tn_value *rets) {
    tn_value b[5] = {a[1], a[2], a[0], tn_value_bool(true), tn_value_bool(false)};
    return tn_dispatch(TN_OP_linalg_lu_solve, b, rets);
}

/* orgqr(self, input2) = linalg_householder_product(self, input2), upstream's composite */
static tn_status d_orgqr(const tn_value *a, tn_value *rets) {
    tn_value b[2] = {a[0], a[1]};
    return tn_dispatch(TN_OP_linalg_householder_product, b, rets);
}

tn_status tn_op_linalg_ldl_factor(const tn_value *args, tn_value *rets);

/* linalg_ldl_factor(self, hermitian) = linalg_ldl_factor_ex(self, hermitian, False) and a
 * check of info, upstream's composite (so its node is linalg_ldl_factor_ex's, which upstream
 * cannot differentiate); a nonzero info reruns the kernel for its error. */
static tn_status d_linalg_ldl_factor(const tn_value *a, tn_value *rets) {
    tn_value b[3] = {a[0], a[1], tn_value_bool(false)}, r[3];
    TN_TRY(tn_dispatch(TN_OP_linalg_ldl_factor_ex, b, r));
    tn_tensor *info = r[2].u.t;
    bool bad = false;
    if (!tn_tensor_is_meta(info)) {
        tn_tensor *ic;
        tn_status st = tn_tensor_contiguous(info, &ic);
        if (st != TN_OK) { for (int k = 0; k < 3; k++) tn_value_release(&r[k]); return st; }
        const int32_t *iv = tn_tensor_data(ic);
        for (int64_t i = 0, n = tn_tensor_numel(ic); i < n && !bad; i++) bad = iv[i] != 0;
        tn_tensor_release(ic);
    }
    tn_value_release(&r[2]);
    if (bad) {
        tn_value_release(&r[0]);
        tn_value_release(&r[1]);
        return tn_op_linalg_ldl_factor(a, rets);
    }
    rets[0] = r[0];
    rets[1] = r[1];
    return TN_OK;
}

/* ---- adaptive pooling: upstream's composites ---------------------------------------------- */

tn_status tn_op_adaptive_max_pool1d(const tn_value *args, tn_value *rets);

/* adaptive_max_pool1d(self, output_size) = adaptive_max_pool2d of self.unsqueeze(-2) at
 * (1, output_size), both results squeezed at -2. Arguments upstream's checks refuse go to
 * the kernel, for its error. */
static tn_status d_adaptive_max_pool1d(const tn_value *a, tn_value *rets) {
    tn_tensor *x = a[0].u.t;
    bool fine = (x->ndim == 2 || x->ndim == 3) && a[1].tag == TN_V_INTLIST && a[1].u.ilist.n == 1;
    for (int d = 1; fine && d < x->ndim; d++) fine = x->sizes[d] > 0;
    if (!fine) return tn_op_adaptive_max_pool1d(a, rets);
    int64_t os[2] = {1, a[1].u.ilist.data[0]};
    tn_tensor *xu;
    tn_value u[2] = {a[0], tn_value_int(-2)}, r[2];
    TN_TRY(run(TN_OP_unsqueeze, 2, u, &xu));
    tn_value p[2] = {tn_value_tensor(xu), tn_value_intlist(os, 2)};
    tn_status st = tn_dispatch(TN_OP_adaptive_max_pool2d, p, r);
    tn_tensor_release(xu);
    if (st != TN_OK) return st;
    for (int k = 0; k < 2; k++) {
        tn_value q[2] = {r[k], tn_value_int(-2)};
        if (st == TN_OK) st = tn_dispatch(TN_OP_squeeze_dim, q, &rets[k]);
        if (st != TN_OK && k == 1) tn_value_release(&rets[0]);
    }
    tn_value_release(&r[0]);
    tn_value_release(&r[1]);
    return st;
}

/* adaptive_avg_pool3d(self, output_size): mean over the last three dims (keepdim) for an
 * output of 1x1x1, else _adaptive_avg_pool3d, as upstream's composite. */
static tn_status d_adaptive_avg_pool3d(const tn_value *a, tn_value *rets) {
    const tn_value *os = &a[1];
    if (os->tag != TN_V_INTLIST || os->u.ilist.n != 3)
        return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool3d: output_size must be 3");
    const int64_t *o = os->u.ilist.data;
    if (o[0] < 0 || o[1] < 0 || o[2] < 0)
        return tn_error(TN_ERR_RUNTIME, "adaptive_avg_pool3d: elements of output_size must be greater than or equal to "
                                        "0 but received {%lld, %lld, %lld}", (long long)o[0], (long long)o[1], (long long)o[2]);
    if (o[0] == 1 && o[1] == 1 && o[2] == 1) {
        int64_t dims[3] = {-1, -2, -3};
        tn_value m[4] = {a[0], tn_value_intlist(dims, 3), tn_value_bool(true), none()};
        return tn_dispatch(TN_OP_mean_dim, m, rets);
    }
    tn_value b[2] = {a[0], a[1]};
    return tn_dispatch(TN_OP__adaptive_avg_pool3d, b, rets);
}

/* ---- quantile / nanquantile: upstream's composite, sort then gather and lerp --------------- */

static tn_value dtype_value(tn_dtype d) {
    tn_value v = {.tag = TN_V_DTYPE};
    v.u.dtype = d;
    return v;
}

/* _to_copy(t, dtype) */
static tn_status to_dtype(tn_tensor *t, tn_dtype d, tn_tensor **out) {
    tn_value c[7] = {tn_value_tensor(t), dtype_value(d), none(), none(), none(), tn_value_bool(false), none()};
    return run(TN_OP__to_copy, 7, c, out);
}

/* gather(sorted, -1, index) */
static tn_status gather_last(tn_tensor *sorted, tn_tensor *index, tn_tensor **out) {
    tn_value g[4] = {tn_value_tensor(sorted), tn_value_int(-1), tn_value_tensor(index), tn_value_bool(false)};
    return run(TN_OP_gather, 4, g, out);
}

/* a = (self, q, dim, keepdim, interpolation); q a double when q_scalar. The steps are
 * upstream's: the reduced dim moved last and sorted, viewed as (out_shape[1:], n); ranks
 * q * (n - 1) (n - 1 where the row holds a NaN), or for nanquantile q * (non-NaN count - 1)
 * (0 when negative); rounded per mode; values gathered at floor and ceil and lerped by the
 * rank's fraction (0.5 for midpoint); q's dim moved first. */
static tn_status quantile_parts(const tn_value *a, bool q_scalar, bool ignore_nan, tn_value *rets) {
    int mode, wd;
    TN_TRY(tn_quantile_check(a, q_scalar, &mode, &wd));
    tn_tensor *self = a[0].u.t, *T[32] = {0}, *q = NULL, *t = NULL;
    int nt = 0;
    tn_status st = TN_OK;
#define Q_STEP(op, n, ...)                                                       \
    do {                                                                         \
        tn_value args_[] = {__VA_ARGS__};                                        \
        if (st == TN_OK) st = run(op, n, args_, &t);                             \
        if (st == TN_OK) T[nt++] = t;                                            \
    } while (0)
#define TV(x) tn_value_tensor(x)
    if (q_scalar) {
        Q_STEP(TN_OP_full, 6, tn_value_intlist(NULL, 0), tn_value_double(a[1].u.d), dtype_value(self->dtype), none(),
               none(), none());
        q = t;
    } else {
        q = a[1].u.t;
    }
    bool has_dim = a[2].tag != TN_V_NONE, keepdim = a[3].u.b;
    int64_t os[TN_MAX_DIMS + 2];
    int no = 0;
    os[no++] = q->ndim == 0 ? 1 : q->sizes[0];
    if (has_dim && self->ndim > 0) {
        for (int d = 0; d < self->ndim; d++)
            if (d != wd) os[no++] = self->sizes[d];
            else if (keepdim) os[no++] = 1;
    } else if (keepdim) {
        for (int d = 0; d < self->ndim; d++) os[no++] = 1;
    }
    tn_tensor *src = self, *sorted = NULL;
    if (!has_dim) {
        Q_STEP(TN_OP_flatten_using_ints, 3, TV(self), tn_value_int(0), tn_value_int(-1));
        src = t;
    } else if (wd != self->ndim - 1) {
        Q_STEP(TN_OP_unsqueeze, 2, TV(self), tn_value_int(-1));
        Q_STEP(TN_OP_transpose_int, 3, TV(t), tn_value_int(wd), tn_value_int(-1));
        src = t;
    }
    Q_STEP(TN_OP_sort, 3, TV(src), tn_value_int(-1), tn_value_bool(false));
    if (st != TN_OK) goto done;
    int64_t n = t->sizes[t->ndim - 1], in_shape[TN_MAX_DIMS + 2];
    for (int d = 0; d + 1 < no; d++) in_shape[d] = os[d + 1];
    in_shape[no - 1] = n;
    Q_STEP(TN_OP_reshape, 2, TV(t), tn_value_intlist(in_shape, no));
    sorted = t;
    if (st == TN_OK && n > (1 << 24)) st = tn_error(TN_ERR_RUNTIME, "quantile() input tensor is too large");
    tn_tensor *ranks = NULL;
    Q_STEP(TN_OP_isnan, 1, TV(sorted));
    tn_tensor *nan = t;
    if (ignore_nan) {
        int64_t last = -1;
        Q_STEP(TN_OP_logical_not, 1, TV(nan));
        Q_STEP(TN_OP_sum_dim_IntList, 4, TV(t), tn_value_intlist(&last, 1), tn_value_bool(true), none());
        Q_STEP(TN_OP_sub_Scalar, 3, TV(t), tn_value_int(1), tn_value_int(1));
        Q_STEP(TN_OP_mul_Tensor, 2, TV(q), TV(t));
        tn_tensor *r0 = t;
        Q_STEP(TN_OP_lt_Scalar, 2, TV(r0), tn_value_int(0));
        Q_STEP(TN_OP_masked_fill_Scalar, 3, TV(r0), TV(t), tn_value_int(0));
        ranks = t;
    } else {
        Q_STEP(TN_OP_any_dim, 3, TV(nan), tn_value_int(-1), tn_value_bool(true));
        tn_tensor *any = t;
        Q_STEP(TN_OP_mul_Scalar, 2, TV(q), tn_value_int(n - 1));
        tn_tensor *ql = t;
        int nb = 0;
        int64_t bs[TN_MAX_DIMS + 2];
        if (st == TN_OK) st = tn_broadcast_shapes(ql->ndim, ql->sizes, any->ndim, any->sizes, &nb, bs);
        Q_STEP(TN_OP_expand, 3, TV(ql), tn_value_intlist(bs, nb), tn_value_bool(false));
        ql = t;
        Q_STEP(TN_OP_expand, 3, TV(any), tn_value_intlist(bs, nb), tn_value_bool(false));
        Q_STEP(TN_OP_masked_fill_Scalar, 3, TV(ql), TV(t), tn_value_int(n - 1));
        ranks = t;
    }
    if (mode == TN_Q_LOWER) Q_STEP(TN_OP_floor, 1, TV(ranks));
    else if (mode == TN_Q_HIGHER) Q_STEP(TN_OP_ceil, 1, TV(ranks));
    else if (mode == TN_Q_NEAREST) Q_STEP(TN_OP_round, 1, TV(ranks));
    if (mode == TN_Q_LOWER || mode == TN_Q_HIGHER || mode == TN_Q_NEAREST) ranks = t;
    if (st == TN_OK && (st = to_dtype(ranks, TN_DTYPE_INT64, &t)) == TN_OK) T[nt++] = t;
    tn_tensor *below = t;
    if (st == TN_OK && (st = gather_last(sorted, below, &t)) == TN_OK) T[nt++] = t;
    tn_tensor *res = t;
    if (mode == TN_Q_LINEAR || mode == TN_Q_MIDPOINT) {
        tn_tensor *w;
        if (mode == TN_Q_MIDPOINT)
            Q_STEP(TN_OP_full, 6, tn_value_intlist(ranks->sizes, ranks->ndim), tn_value_double(0.5),
                   dtype_value(sorted->dtype), none(), none(), none());
        else
            Q_STEP(TN_OP_sub_Tensor, 3, TV(ranks), TV(below), tn_value_int(1));
        w = t;
        Q_STEP(TN_OP_ceil, 1, TV(ranks));
        if (st == TN_OK && (st = to_dtype(t, TN_DTYPE_INT64, &t)) == TN_OK) T[nt++] = t;
        if (st == TN_OK && (st = gather_last(sorted, t, &t)) == TN_OK) T[nt++] = t;
        Q_STEP(TN_OP_lerp_Tensor, 3, TV(res), TV(t), TV(w));
        res = t;
    }
    if (st != TN_OK) goto done;
    if (q->ndim == 0) {
        tn_value s[2] = {TV(res), tn_value_int(-1)};
        st = tn_dispatch(TN_OP_squeeze_dim, s, rets);
    } else {
        Q_STEP(TN_OP_unsqueeze, 2, TV(res), tn_value_int(0));
        Q_STEP(TN_OP_transpose_int, 3, TV(t), tn_value_int(0), tn_value_int(-1));
        tn_value s[2] = {TV(t), tn_value_int(-1)};
        if (st == TN_OK) st = tn_dispatch(TN_OP_squeeze_dim, s, rets);
    }
done:
    for (int k = 0; k < nt; k++) tn_tensor_release(T[k]);
    return st;
#undef Q_STEP
#undef TV
}

static tn_status d_quantile(const tn_value *a, tn_value *rets) { return quantile_parts(a, false, false, rets); }
static tn_status d_quantile_scalar(const tn_value *a, tn_value *rets) { return quantile_parts(a, true, false, rets); }
static tn_status d_nanquantile(const tn_value *a, tn_value *rets) { return quantile_parts(a, false, true, rets); }
static tn_status d_nanquantile_scalar(const tn_value *a, tn_value *rets) { return quantile_parts(a, true, true, rets); }

/* The _foreach_* family (ops/foreach.c) is already door calls of its per-element
 * operators: under autograd each element records that operator's node, as upstream's
 * per-element foreach derivatives do (and an in-place one on a leaf refuses alike). */
#define TN_FOREACH(op, each, result, ...) tn_status tn_op_##op(const tn_value *args, tn_value *rets);
#include "ops/foreach.def"
#undef TN_FOREACH

/* The linear-algebra compositions of ops/linalg_compose.c are door calls of their parts
 * (linalg_svdvals, linalg_vector_norm, linalg_inv_ex, linalg_solve, matmul, mul, sum...):
 * under autograd the parts are recorded, as upstream's composites are differentiated. */
#define TN_LA_COMPOSED(X)                                                                          \
    X(linalg_vecdot) X(cross) X(linalg_vander) X(linalg_multi_dot) X(linalg_matrix_power)        \
    X(matrix_power) X(linalg_tensorinv) X(linalg_tensorsolve) X(linalg_matrix_norm)               \
    X(linalg_matrix_norm_str_ord) X(linalg_norm) X(linalg_norm_ord_str) X(linalg_cond)            \
    X(linalg_cond_p_str)
#define TN_LA_DECL(op) tn_status tn_op_##op(const tn_value *args, tn_value *rets);
TN_LA_COMPOSED(TN_LA_DECL)
#undef TN_LA_DECL

static const tn_decomp_fn decomps[TN_OP_COUNT] = {
#define TN_FOREACH(op, each, result, ...) [TN_OP_##op] = tn_op_##op,
#include "ops/foreach.def"
#undef TN_FOREACH
    [TN_OP_pad] = d_pad,
    [TN_OP_adaptive_avg_pool2d] = d_adaptive_avg_pool2d,
    [TN_OP_adaptive_avg_pool3d] = d_adaptive_avg_pool3d,
    [TN_OP_lu_solve] = d_lu_solve,
    [TN_OP_orgqr] = d_orgqr,
    [TN_OP_linalg_ldl_factor] = d_linalg_ldl_factor,
    [TN_OP_adaptive_max_pool1d] = d_adaptive_max_pool1d,
    [TN_OP_quantile] = d_quantile,
    [TN_OP_quantile_scalar] = d_quantile_scalar,
    [TN_OP_nanquantile] = d_nanquantile,
    [TN_OP_nanquantile_scalar] = d_nanquantile_scalar,
    [TN_OP_special_ndtr] = d_special_ndtr,
    [TN_OP_linalg_pinv_atol_rtol_float] = d_pinv_float,
    [TN_OP_linalg_pinv] = d_pinv_rcond,
    [TN_OP_linalg_pinv_rcond_tensor] = d_pinv_rcond,
    [TN_OP_pinverse] = d_pinverse,
    [TN_OP_group_norm] = d_group_norm,
    [TN_OP_tensor_split_sections] = d_tensor_split_sections,
    [TN_OP_tensor_split_indices] = d_tensor_split_indices,
    [TN_OP_tensor_split_tensor_indices_or_sections] = d_tensor_split_tensor,
    [TN_OP_repeat_interleave_self_Tensor] = d_repeat_interleave_tensor,
    [TN_OP_conv1d_padding] = d_conv1d_padding,
    [TN_OP_conv2d_padding] = d_conv2d_padding,
    [TN_OP_conv3d_padding] = d_conv3d_padding,
    [TN_OP_conj] = d_self_if_real,
    [TN_OP_resolve_conj] = d_resolve_conj,
    [TN_OP_resolve_neg] = d_resolve_neg,
    [TN_OP_adjoint] = d_adjoint,
    [TN_OP_mH] = d_adjoint,
    [TN_OP_matrix_H] = d_matrix_H,
    [TN_OP_split_sizes] = d_split_sizes,
    [TN_OP_narrow_Tensor] = d_narrow_tensor,
    [TN_OP_hstack] = d_hstack,
    [TN_OP_vstack] = d_vstack,
    [TN_OP_dstack] = d_dstack,
    [TN_OP_take_along_dim] = d_take_along_dim,
#define TN_VIEW_FUNCTIONAL(op) [TN_OP_##op] = tn_op_##op,
    TN_VIEW_FUNCTIONAL_OPS(TN_VIEW_FUNCTIONAL)
#undef TN_VIEW_FUNCTIONAL
    /* nn_ctc_loss.c: ctc_loss composes _ctc_loss (CtcLossBackward0/1) and the reduction */
    [TN_OP_ctc_loss_IntList] = tn_op_ctc_loss,
    [TN_OP_ctc_loss_Tensor] = tn_op_ctc_loss,
    /* nn_embedding_bag.c: embedding_bag runs _embedding_bag (EmbeddingBagBackward0) when weight requires grad */
    [TN_OP_embedding_bag] = tn_op_embedding_bag,
    [TN_OP_embedding_bag_padding_idx] = tn_op_embedding_bag_padding_idx,
    [TN_OP_ger] = d_ger,
    [TN_OP_max_other] = d_max_other,
    [TN_OP_min_other] = d_min_other,
    [TN_OP_type_as] = d_type_as,
    [TN_OP_tile] = d_tile,
    [TN_OP_movedim_int] = d_movedim_int,
    [TN_OP_moveaxis_int] = d_movedim_int,
    [TN_OP_movedim_intlist] = d_movedim_intlist,
    [TN_OP_moveaxis_intlist] = d_movedim_intlist,
    [TN_OP_conv_transpose1d] = d_conv_transpose1d,
    [TN_OP_conv_transpose2d_input] = d_conv_transpose2d,
    [TN_OP_conv_transpose3d_input] = d_conv_transpose3d,
    [TN_OP_where_ScalarSelf] = d_where_scalar_self,
    [TN_OP_where_ScalarOther] = d_where_scalar_other,
    [TN_OP_var_mean] = d_var_mean,
    [TN_OP_var_mean_dim] = d_var_mean_dim,
    [TN_OP_std_mean] = d_std_mean,
    [TN_OP_std_mean_dim] = d_std_mean_dim,
    [TN_OP_upsample_nearest2d_vec] = d_upsample_nearest2d_vec,
    [TN_OP_upsample_bilinear2d_vec] = d_upsample_bilinear2d_vec,
    [TN_OP_scaled_dot_product_attention] = d_sdpa,
    [TN_OP_dropout] = d_dropout,
    [TN_OP_batch_norm] = d_batch_norm,
    [TN_OP_layer_norm] = d_layer_norm,
    [TN_OP_log_sigmoid] = d_log_sigmoid,
    [TN_OP_rms_norm] = d_rms_norm,
    [TN_OP_conv1d] = d_conv,
    [TN_OP_conv2d] = d_conv,
    [TN_OP_conv3d] = d_conv,
    [TN_OP_max_pool2d] = d_max_pool2d,
    [TN_OP_max_pool3d] = d_max_pool3d,
    [TN_OP_nll_loss] = d_nll_loss,
    [TN_OP_nll_loss_nd] = d_nll_loss,
    [TN_OP_nll_loss2d] = d_nll_loss,
    [TN_OP_cross_entropy_loss] = d_cross_entropy,
    [TN_OP_log_softmax_int] = d_log_softmax,
    [TN_OP_softmax_int] = d_softmax,
#define TN_LA_ROW(op) [TN_OP_##op] = tn_op_##op,
    TN_LA_COMPOSED(TN_LA_ROW)
#undef TN_LA_ROW
};

tn_decomp_fn tn_autograd_decomp_for(tn_op_id op) { return (unsigned)op < TN_OP_COUNT ? decomps[op] : NULL; }

/* Operators derivatives.yaml lists without a formula (histc, view.dtype, comparisons, ...),
 * generated by tools/codegen/gen_derivatives.py. */
static const bool nodiff_generated[TN_OP_COUNT] = {
#define TN_NODIFF_GENERATED(op) [TN_OP_##op] = true,
#include "formulas_generated_nodiff.def"
#undef TN_NODIFF_GENERATED
};

static const bool upstream_refuses[TN_OP_COUNT] = {
#define TN_UPSTREAM_REFUSES(op) [TN_OP_##op] = true,
#include "formulas_generated_refused.def"
#undef TN_UPSTREAM_REFUSES
};

bool tn_autograd_upstream_refuses(tn_op_id op) { return (unsigned)op < TN_OP_COUNT && upstream_refuses[op]; }

bool tn_autograd_nondifferentiable(tn_op_id op) {
    static signed char memo[TN_OP_COUNT];
    if (nodiff_generated[op]) return true;
    if (!memo[op]) {
        const char *n = tn_op_schemas[op].name;
        size_t len = strlen(n);
        bool nd = strcmp(n, "detach") == 0 || strcmp(n, "detach_") == 0 ||
                  (len > 5 && strcmp(n + len - 5, "_like") == 0) || strncmp(n, "new_", 4) == 0 ||
                  strncmp(n, "empty", 5) == 0 ||
                  strncmp(n, "rand", 4) == 0 || strcmp(n, "_local_scalar_dense") == 0 ||
                  strcmp(n, "bernoulli") == 0 || strcmp(n, "multinomial") == 0 || strcmp(n, "normal_") == 0 ||
                  strcmp(n, "uniform_") == 0 || strcmp(n, "lift_fresh") == 0 || strcmp(n, "argmax") == 0 ||
                  strcmp(n, "argmin") == 0 || strcmp(n, "nonzero") == 0 || strcmp(n, "_to_dense") == 0 ||
                  strcmp(n, "isin") == 0;
        memo[op] = nd ? 1 : 2;
    }
    return memo[op] == 1;
}
