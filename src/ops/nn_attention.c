/* nn_attention.c — scaled_dot_product_attention and the op it reaches on CPU,
 * _scaled_dot_product_flash_attention_for_cpu. Float, Half and BFloat16 run the blocked
 * online-softmax kernel (kernels/attn_*.c) in float32, threaded; Double runs the exact
 * reference kernel (kernels/nn_ref.inc). Upstream's flash kernel and its math fallback
 * agree with both to rounding, fully masked rows included (zeros). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/nn.h"
#include "ops/composite_internal.h"
#include "ops/nn_internal.h"


/* caffe2::TypeMeta's name of a dtype, which upstream prints in these messages (dtype table). */
static const char *meta_name(tn_dtype d) { return tn_dtype_infos[d].cpp_name; }

typedef struct attn_args {
    tn_tensor *q, *k, *v, *mask;
    double dropout_p;
    bool causal, gqa;
    double scale; /* NAN = default 1/sqrt(E) */
} attn_args;


/* The score dim (0 b, 1 h, 2 l, 3 s) the i-th mask dim from the right lines up with: a
 * 3-D query is [B, L, E], so a 3-D mask means (B, L, S). */
static int mask_target_dim(int nd, int i) {
    if (nd == 3) return i == 0 ? 3 : i == 1 ? 2 : 0;
    return 3 - i;
}

/* Mask element strides over (b, h, l, s) from per-dim strides `str` (0 where broadcast). */
static void attn_mask_strides(const tn_tensor *mask, int nd, int64_t B, int64_t Hq, int64_t L, int64_t S,
                              const int64_t *str, int64_t ms[4]) {
    (void)B; (void)Hq; (void)L; (void)S;
    ms[0] = ms[1] = ms[2] = ms[3] = 0;
    for (int i = 0; i < mask->ndim; i++) {
        int md = mask->ndim - 1 - i;
        ms[mask_target_dim(nd, i)] = mask->sizes[md] == 1 ? 0 : str[md];
    }
}

/* Element strides of (b, h, l) of a 2-, 3- or 4-D attention operand. */
static void attn_bhl_strides(const tn_tensor *t, const int64_t *str, int64_t out[3]) {
    int nd = t->ndim;
    out[0] = nd >= 3 ? str[0] : 0;
    out[1] = nd >= 4 ? str[1] : 0;
    out[2] = str[nd - 2];
}

static int attn_kind(tn_dtype d) {
    return d == TN_DTYPE_FLOAT32 ? TN_ATTN_F32 : d == TN_DTYPE_BFLOAT16 ? TN_ATTN_BF16 : TN_ATTN_F16;
}

/* An operand the fast kernel reads in place (float32/bfloat16/float16, unit last stride),
 * or a contiguous float32 copy in *buf. */
static tn_status attn_operand(const tn_tensor *t, tn_nn_buf *buf, const void **data, int *kind, int64_t str3[3]) {
    int nd = t->ndim;
    bool direct = t->dtype != TN_DTYPE_FLOAT64 && (t->sizes[nd - 1] <= 1 || t->strides[nd - 1] == 1);
    if (direct) {
        *data = tn_tensor_data((tn_tensor *)t);
        *kind = attn_kind(t->dtype);
        attn_bhl_strides(t, t->strides, str3);
        return TN_OK;
    }
    TN_TRY(tn_nn_load(t, TN_DTYPE_FLOAT32, buf));
    int64_t cs[TN_MAX_DIMS];
    tn_contiguous_strides(nd, t->sizes, cs);
    *data = buf->data;
    *kind = TN_ATTN_F32;
    attn_bhl_strides(t, cs, str3);
    return TN_OK;
}

/* float32 / bfloat16 / float16: the blocked kernel (kernels/attn_*.c), reading the
 * operands in place where it can. */
static tn_status attention_fast(const attn_args *a, int nd, int64_t B, int64_t Hq, int64_t Hk, int64_t L, int64_t S,
                                int64_t E, int64_t Ev, double scale, tn_tensor **out_o, tn_tensor **lse_o) {
    tn_tensor *q = a->q, *k = a->k, *v = a->v, *mask = a->mask;
    int64_t osz[TN_MAX_DIMS], lsz[TN_MAX_DIMS];
    memcpy(osz, q->sizes, sizeof(int64_t) * (size_t)nd);
    osz[nd - 1] = Ev;
    memcpy(lsz, q->sizes, sizeof(int64_t) * (size_t)(nd - 1));
    tn_tensor *out = NULL, *lse = NULL;
    tn_nn_buf bq = {0}, bk = {0}, bv = {0}, bm = {0};
    void *scratch = NULL;
    tn_status st = tn_nn_empty(nd, osz, q->dtype, q, &out);
    if (st == TN_OK && lse_o) st = tn_nn_empty(nd - 1, lsz, TN_DTYPE_FLOAT32, q, &lse);
    if (st != TN_OK || tn_tensor_is_meta(q)) goto done;
    if (tn_tensor_numel(out) == 0) goto done;
    tn_attn_desc d;
    memset(&d, 0, sizeof d);
    if ((st = attn_operand(q, &bq, &d.q, &d.qk, d.qs)) != TN_OK) goto done;
    if ((st = attn_operand(k, &bk, &d.k, &d.kk, d.ks)) != TN_OK) goto done;
    if ((st = attn_operand(v, &bv, &d.v, &d.vk, d.vs)) != TN_OK) goto done;
    d.out = tn_tensor_data(out);
    d.ok = attn_kind(out->dtype);
    attn_bhl_strides(out, out->strides, d.os);
    d.lse = lse ? tn_tensor_data(lse) : NULL;
    if (mask) {
        if (mask->dtype == TN_DTYPE_BOOL) {
            d.mask = tn_tensor_data(mask);
            d.mk = TN_ATTN_MASK_BOOL;
            attn_mask_strides(mask, nd, B, Hq, L, S, mask->strides, d.ms);
        } else if (mask->dtype == TN_DTYPE_FLOAT32) {
            d.mask = tn_tensor_data(mask);
            d.mk = TN_ATTN_MASK_F32;
            attn_mask_strides(mask, nd, B, Hq, L, S, mask->strides, d.ms);
        } else {
            if ((st = tn_nn_load(mask, TN_DTYPE_FLOAT32, &bm)) != TN_OK) goto done;
            int64_t cs[TN_MAX_DIMS];
            tn_contiguous_strides(mask->ndim, mask->sizes, cs);
            d.mask = bm.data;
            d.mk = TN_ATTN_MASK_F32;
            attn_mask_strides(mask, nd, B, Hq, L, S, cs, d.ms);
        }
    }
    d.B = B; d.Hq = Hq; d.Hk = Hk; d.L = L; d.S = S; d.E = E; d.Ev = Ev;
    d.scale = (float)scale;
    d.causal = a->causal;
    int workers = tn_attn_workers(&d);
    size_t nbytes = tn_attn_scratch_bytes(&d, workers);
    scratch = malloc(nbytes);
    if (!scratch) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); goto done; }
    tn_attn_run(&d, scratch, workers);
done:
    free(scratch);
    tn_nn_buf_free(&bq); tn_nn_buf_free(&bk); tn_nn_buf_free(&bv); tn_nn_buf_free(&bm);
    if (st != TN_OK) {
        if (out) tn_tensor_release(out);
        if (lse) tn_tensor_release(lse);
        return st;
    }
    *out_o = out;
    if (lse_o) *lse_o = lse;
    return TN_OK;
}

/* With dropout: upstream's math path (its fused CPU kernel has no dropout), composed through
 * the door so the dropout mask draws from the generator as upstream's at::dropout does:
 * Half / BFloat16 computed in float; q and kᵀ each scaled by sqrt(scale); the causal mask
 * (or a boolean one) as an additive 0 / -inf; _safe_softmax; dropout; times v. */
static tn_status attention_math_dropout(const attn_args *a, int64_t Hq, int64_t Hk, tn_tensor **out_o) {
    tn_cx c = {0};
    tn_tensor *q = a->q, *k = a->k, *v = a->v, *mask = a->mask;
    tn_dtype od = q->dtype;
    if (od == TN_DTYPE_FLOAT16 || od == TN_DTYPE_BFLOAT16) {
        tn_tensor **t[3] = {&q, &k, &v};
        for (int i = 0; i < 3; i++)
            *t[i] = tn_cx_call(&c, TN_OP__to_copy, TN_ARGS(TN_T(*t[i]), TN_DT(TN_DTYPE_FLOAT32), TN_NONE, TN_NONE, TN_NONE, TN_B(false), TN_NONE));
    }
    if (c.st != TN_OK) return tn_cx_finish(&c, NULL, (tn_value[1]){0});
    int nd = q->ndim;
    int64_t L = q->sizes[nd - 2], S = k->sizes[nd - 2], E = q->sizes[nd - 1];
    double sf = sqrt(isnan(a->scale) ? 1.0 / sqrt((double)E) : fabs(a->scale));
    tn_tensor *qs = tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(q), TN_D(!isnan(a->scale) && a->scale < 0 ? -sf : sf)));
    if (a->gqa && Hq != Hk && Hk > 0) { /* key and value heads repeated to the query's */
        k = tn_cx_call(&c, TN_OP_repeat_interleave_self_int, TN_ARGS(TN_T(k), TN_I(Hq / Hk), TN_I(-3), TN_NONE));
        v = tn_cx_call(&c, TN_OP_repeat_interleave_self_int, TN_ARGS(TN_T(v), TN_I(Hq / Hk), TN_I(-3), TN_NONE));
    }
    tn_tensor *kt = tn_cx_call(&c, TN_OP_transpose_int, TN_ARGS(TN_T(k), TN_I(-2), TN_I(-1)));
    tn_tensor *attn = tn_cx_call(&c, TN_OP_matmul, TN_ARGS(TN_T(qs), TN_T(tn_cx_call(&c, TN_OP_mul_Scalar, TN_ARGS(TN_T(kt), TN_D(sf))))));
    tn_tensor *bias = NULL, *keep = NULL;
    if (a->causal) {
        int64_t ls[2] = {L, S};
        tn_tensor *ones = tn_cx_call(&c, TN_OP_ones, TN_ARGS(tn_value_intlist(ls, 2), TN_DT(TN_DTYPE_BOOL), TN_NONE, TN_NONE, TN_NONE));
        keep = tn_cx_call(&c, TN_OP_tril, TN_ARGS(TN_T(ones), TN_I(0)));
    } else if (mask && mask->dtype == TN_DTYPE_BOOL) {
        keep = mask;
    } else if (mask) {
        bias = mask;
    }
    if (keep) {
        tn_tensor *z = tn_cx_call(&c, TN_OP_zeros_like, TN_ARGS(TN_T(keep), TN_DT(q->dtype), TN_NONE, TN_NONE, TN_NONE, TN_NONE));
        bias = tn_cx_call(&c, TN_OP_masked_fill_Scalar, TN_ARGS(TN_T(z), TN_T(tn_cx_call(&c, TN_OP_logical_not, TN_ARGS(TN_T(keep)))), TN_D(-INFINITY)));
    }
    if (bias) attn = tn_cx_call(&c, TN_OP_add_Tensor, TN_ARGS(TN_T(attn), TN_T(bias), TN_I(1)));
    attn = tn_cx_call(&c, TN_OP__safe_softmax, TN_ARGS(TN_T(attn), TN_I(-1), TN_NONE));
    attn = tn_cx_call(&c, TN_OP_dropout, TN_ARGS(TN_T(attn), TN_D(a->dropout_p), TN_B(true)));
    tn_tensor *o = tn_cx_call(&c, TN_OP_matmul, TN_ARGS(TN_T(attn), TN_T(v)));
    if (o && o->dtype != od)
        o = tn_cx_call(&c, TN_OP__to_copy, TN_ARGS(TN_T(o), TN_DT(od), TN_NONE, TN_NONE, TN_NONE, TN_B(false), TN_NONE));
    tn_value r = {0};
    TN_TRY(tn_cx_finish(&c, o, &r));
    *out_o = r.u.t;
    return TN_OK;
}

static tn_status attention_run(const attn_args *a, tn_tensor **out_o, tn_tensor **lse_o) {
    tn_tensor *q = a->q, *k = a->k, *v = a->v, *mask = a->mask;
    char b1[256], b2[256], b3[256];
    if (q->dtype != k->dtype || q->dtype != v->dtype)
        return tn_error(TN_ERR_RUNTIME, "Expected query, key, and value to have the same dtype, but got query.dtype: %s "
                                        "key.dtype: %s and value.dtype: %s instead.",
                        meta_name(q->dtype), meta_name(k->dtype), meta_name(v->dtype));
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
        return tn_error(TN_ERR_RUNTIME, "Expected query, key, and value to all be  at least 2 dimensional, but got "
                                        "query.dim: %d key.dim: %d and value.dim: %d instead.", q->ndim, k->ndim, v->ndim);
    if (mask && mask->dtype != TN_DTYPE_BOOL && mask->dtype != q->dtype && !tn_nn_is_float(mask->dtype))
        return tn_error(TN_ERR_RUNTIME, "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                                        "attn_mask.dtype: %s and  query.dtype: %s instead.",
                        meta_name(mask->dtype), meta_name(q->dtype));
    TN_TRY(tn_nn_check_float(q, "scaled_dot_product_attention"));
    /* enable_gqa reads the head count at dim -3 of query and key: upstream's IndexError there */
    if (a->gqa) {
        int hd;
        TN_TRY(tn_wrap_dim(-3, q->ndim, &hd));
        TN_TRY(tn_wrap_dim(-3, k->ndim, &hd));
    }
    if (!(a->dropout_p >= 0)) /* negative or NaN: upstream's dropout (or its flash kernel) refuses it */
        return tn_error(TN_ERR_RUNTIME, "dropout probability has to be between 0 and 1, but got %g", a->dropout_p);
    if (q->ndim > 4 || q->ndim != k->ndim || q->ndim != v->ndim)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::scaled_dot_product_attention for query %s, key %s, value %s is "
                                                "not implemented by torchnative",
                        TN_NN_FMT(q, b1), TN_NN_FMT(k, b2), TN_NN_FMT(v, b3));
    int nd = q->ndim;
    int64_t L = q->sizes[nd - 2], E = q->sizes[nd - 1], S = k->sizes[nd - 2], Ev = v->sizes[nd - 1];
    int64_t B = nd >= 4 ? q->sizes[0] : nd == 3 ? q->sizes[0] : 1;
    int64_t Hq = nd >= 4 ? q->sizes[1] : 1, Hk = nd >= 4 ? k->sizes[1] : 1;
    if (k->sizes[nd - 1] != E || v->sizes[nd - 2] != S)
        return tn_error(TN_ERR_RUNTIME, "Expected key of shape %s and value of shape %s to match query %s",
                        TN_NN_FMT(k, b2), TN_NN_FMT(v, b3), TN_NN_FMT(q, b1));
    for (int d = 0; d < nd - 2; d++) {
        bool head = nd >= 4 && d == 1;
        if (head) continue;
        if (k->sizes[d] != q->sizes[d] || v->sizes[d] != q->sizes[d])
            return tn_error(TN_ERR_RUNTIME, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                                            "non-singleton dimension %d",
                            (long long)q->sizes[d], (long long)k->sizes[d], d);
    }
    if (nd >= 4) {
        if (v->sizes[1] != Hk)
            return tn_error(TN_ERR_RUNTIME, "Expected key and value to have the same number of heads");
        if (Hq != Hk) {
            if (!a->gqa)
                return tn_error(TN_ERR_RUNTIME, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                                                "non-singleton dimension 1", (long long)Hq, (long long)Hk);
            if (Hk == 0 || Hq % Hk != 0)
                return tn_error(TN_ERR_RUNTIME, "Number of heads in key and value must divide the number of heads in "
                                                "query");
        }
    }
    /* Mask strides over (b, h, l, s), right-aligned and broadcast. */
    int64_t ms[4] = {0, 0, 0, 0};
    int64_t target[4] = {B, Hq, L, S};
    if (nd == 3) { target[0] = B; target[1] = 1; }
    if (mask) {
        if (mask->ndim > 4 || mask->ndim > (nd < 2 ? 2 : (nd == 3 ? 3 : 4)))
            return tn_error(TN_ERR_RUNTIME, "attn_mask of shape %s does not broadcast to the attention scores",
                            TN_NN_FMT(mask, b1));
        for (int i = 0; i < mask->ndim; i++) {
            int md = mask->ndim - 1 - i, td = mask_target_dim(nd, i);
            if (mask->sizes[md] != target[td] && mask->sizes[md] != 1)
                return tn_error(TN_ERR_RUNTIME, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                                                "non-singleton dimension %d",
                                (long long)mask->sizes[md], (long long)target[td], md);
        }
    }
    if (a->dropout_p > 0 && !lse_o) return attention_math_dropout(a, Hq, Hk, out_o);
    tn_dtype acc = tn_nn_acc(q->dtype);
    double scale = isnan(a->scale) ? 1.0 / sqrt((double)E) : a->scale;
    if (acc == TN_DTYPE_FLOAT32)
        return attention_fast(a, nd, B, Hq, Hk, L, S, E, Ev, scale, out_o, lse_o);
    /* float64: the reference kernel on contiguous double buffers */
    int64_t cstr[TN_MAX_DIMS];
    if (mask) {
        tn_contiguous_strides(mask->ndim, mask->sizes, cstr);
        attn_mask_strides(mask, nd, B, Hq, L, S, cstr, ms);
    }
    int64_t osz[TN_MAX_DIMS], lsz[TN_MAX_DIMS];
    memcpy(osz, q->sizes, sizeof(int64_t) * (size_t)nd);
    osz[nd - 1] = Ev;
    memcpy(lsz, q->sizes, sizeof(int64_t) * (size_t)(nd - 1));
    tn_tensor *out = NULL, *lse = NULL;
    tn_nn_buf bq = {0}, bk = {0}, bv = {0}, bm = {0}, bo = {0}, bl = {0};
    void *scratch = NULL;
    tn_status st = tn_nn_empty(nd, osz, q->dtype, q, &out);
    if (st == TN_OK) st = tn_nn_empty(nd - 1, lsz, acc, q, &lse);
    if (st != TN_OK || tn_tensor_is_meta(q)) goto done;
    if ((st = tn_nn_load(q, acc, &bq)) != TN_OK) goto done;
    if ((st = tn_nn_load(k, acc, &bk)) != TN_OK) goto done;
    if ((st = tn_nn_load(v, acc, &bv)) != TN_OK) goto done;
    if (mask) {
        if (mask->dtype == TN_DTYPE_BOOL) {
            /* A boolean mask keeps True positions: additive 0 / -inf. */
            tn_nn_buf mi;
            if ((st = tn_nn_load_index(mask, &mi)) != TN_OK) goto done;
            int64_t n = tn_tensor_numel(mask);
            bm.data = malloc((size_t)(n > 0 ? n : 1) * (size_t)tn_dtype_itemsize(acc));
            bm.owned = true;
            if (!bm.data) { tn_nn_buf_free(&mi); st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); goto done; }
            for (int64_t i = 0; i < n; i++) ((double *)bm.data)[i] = ((int64_t *)mi.data)[i] ? 0.0 : -INFINITY;
            tn_nn_buf_free(&mi);
        } else if ((st = tn_nn_load(mask, acc, &bm)) != TN_OK) {
            goto done;
        }
    }
    if ((st = tn_nn_out_begin(out, acc, &bo)) != TN_OK) goto done;
    if ((st = tn_nn_out_begin(lse, acc, &bl)) != TN_OK) goto done;
    scratch = malloc((size_t)(S > 0 ? S : 1) * (size_t)tn_dtype_itemsize(acc));
    if (!scratch) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); goto done; }
    f64_attention__scalar(bo.data, bl.data, bq.data, bk.data, bv.data, bm.data, ms, B, Hq, Hk, L, S, E, Ev, scale,
                          a->causal, scratch);
    tn_nn_out_finish(out, acc, &bo);
done:
    free(scratch);
    tn_nn_buf_free(&bq); tn_nn_buf_free(&bk); tn_nn_buf_free(&bv); tn_nn_buf_free(&bm);
    tn_nn_buf_free(&bo); tn_nn_buf_free(&bl);
    if (st != TN_OK) {
        if (out) tn_tensor_release(out);
        if (lse) tn_tensor_release(lse);
        return st;
    }
    *out_o = out;
    if (lse_o) *lse_o = lse; else tn_tensor_release(lse);
    return TN_OK;
}

/* aten::scaled_dot_product_attention(query, key, value, attn_mask?, dropout_p, is_causal,
 * *, scale?, enable_gqa) -> Tensor */
tn_status tn_op_scaled_dot_product_attention(const tn_value *args, tn_value *rets) {
    attn_args a = {args[0].u.t, args[1].u.t, args[2].u.t, tn_nn_opt_tensor(&args[3]), args[4].u.d, args[5].u.b,
                   args[7].tag == TN_V_BOOL && args[7].u.b, tn_nn_opt_double(&args[6], NAN)};
    tn_tensor *out;
    TN_TRY(attention_run(&a, &out, NULL));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::_scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p,
 * is_causal, *, attn_mask?, scale?) -> (output, logsumexp) */
tn_status tn_op__scaled_dot_product_flash_attention_for_cpu(const tn_value *args, tn_value *rets) {
    tn_tensor *q = args[0].u.t, *k = args[1].u.t, *v = args[2].u.t;
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
        return tn_error(TN_ERR_RUNTIME, "scaled_dot_product_attention_flash_attention: Accept only 4 dims inputs "
                                        "shape of {B, H, T, K}");
    if (!(args[3].u.d == 0.0)) /* upstream's CPU flash kernel has no dropout: any other p, NaN included */
        return tn_error(TN_ERR_RUNTIME, "scaled_dot_product_attention_flash_attention: Currently do not support dropout > 0");
    tn_tensor *mask = tn_nn_opt_tensor(&args[5]);
    /* the flash kernel reads a float32 mask or one of the query's dtype: no bool mask (the
     * public scaled_dot_product_attention converts one first); upstream's words */
    if (mask && mask->dtype != TN_DTYPE_FLOAT32 && mask->dtype != q->dtype)
        return tn_error(TN_ERR_RUNTIME, "scaled_dot_product_attention_flash_attention: Attention mask is the same data type as query");
    attn_args a = {q, k, v, tn_nn_opt_tensor(&args[5]), args[3].u.d, args[4].u.b, true,
                   tn_nn_opt_double(&args[6], NAN)};
    tn_tensor *out, *lse;
    TN_TRY(attention_run(&a, &out, &lse));
    rets[0] = tn_value_tensor(out);
    rets[1] = tn_value_tensor(lse);
    return TN_OK;
}
