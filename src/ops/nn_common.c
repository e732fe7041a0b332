/* nn_common.c — shared helpers of the nn op family: dtype checks, gathering tensors into
 * contiguous acc buffers and writing results back (see nn_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "kernels/cast.h"
#include "ops/shape.h"
#include "ops/nn_internal.h"

bool tn_nn_is_float(tn_dtype d) {
    return d == TN_DTYPE_FLOAT32 || d == TN_DTYPE_FLOAT64 || d == TN_DTYPE_FLOAT16 || d == TN_DTYPE_BFLOAT16;
}

tn_status tn_nn_check_float(const tn_tensor *t, const char *kernel) {
    if (tn_nn_is_float(t->dtype)) return TN_OK;
    /* upstream's dispatch macros raise NotImplementedError for a dtype they do not list */
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tn_dtype_infos[t->dtype].c10_name);
}

tn_status tn_nn_check_f32_f64(tn_dtype d, const char *kernel) {
    if (d == TN_DTYPE_FLOAT32 || d == TN_DTYPE_FLOAT64) return TN_OK;
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tn_dtype_infos[d].c10_name);
}

tn_status tn_nn_check_float_or_int(const tn_tensor *t, const char *kernel, bool long_only) {
    if (tn_nn_is_float(t->dtype) || (long_only ? t->dtype == TN_DTYPE_INT64 : tn_nn_is_int(t->dtype))) return TN_OK;
    /* upstream's dispatch macros raise NotImplementedError for a dtype they do not list */
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tn_dtype_infos[t->dtype].c10_name);
}

static inline double read_float(const char *p, tn_dtype d) {
    switch (d) {
    case TN_DTYPE_FLOAT32: { float f; memcpy(&f, p, 4); return f; }
    case TN_DTYPE_FLOAT64: { double f; memcpy(&f, p, 8); return f; }
    case TN_DTYPE_FLOAT16: { tn_half h; memcpy(&h, p, 2); return tn_half_to_f32(h); }
    case TN_DTYPE_BFLOAT16: { tn_bfloat16 h; memcpy(&h, p, 2); return tn_bf16_to_f32(h); }
    case TN_DTYPE_UINT8: return *(const uint8_t *)p; /* nearest upsampling's exact copies */
    default: return 0.0;
    }
}

static inline int64_t read_int(const char *p, tn_dtype d) {
    switch (d) {
    case TN_DTYPE_UINT8: return *(const uint8_t *)p;
    case TN_DTYPE_BOOL: return *(const uint8_t *)p != 0;
    case TN_DTYPE_INT8: return *(const int8_t *)p;
    case TN_DTYPE_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case TN_DTYPE_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case TN_DTYPE_INT64: { int64_t v; memcpy(&v, p, 8); return v; }
    default: return 0;
    }
}

/* Offset (elements) of the element at contiguous-order index i. */
static int64_t offset_of(const tn_tensor *t, int64_t i) {
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        int64_t s = t->sizes[d];
        if (s == 0) return 0;
        off += (i % s) * t->strides[d];
        i /= s;
    }
    return off;
}

double tn_nn_read(const tn_tensor *t, int64_t i) {
    const char *base = tn_tensor_data(t);
    return read_float(base + offset_of(t, i) * tn_dtype_itemsize(t->dtype), t->dtype);
}

/* Walks t in contiguous order, handing each element's address to the caller's body. */
#define WALK(t, BODY)                                                                   \
    do {                                                                                \
        const char *base_ = tn_tensor_data(t);                                          \
        int isz_ = tn_dtype_itemsize((t)->dtype), nd_ = (t)->ndim;                      \
        int64_t n_ = tn_tensor_numel(t), idx_[TN_MAX_DIMS] = {0}, off_ = 0;             \
        for (int64_t i = 0; i < n_; i++) {                                              \
            const char *p = base_ + off_ * isz_;                                        \
            BODY;                                                                       \
            for (int d_ = nd_ - 1; d_ >= 0; d_--) {                                     \
                off_ += (t)->strides[d_];                                               \
                if (++idx_[d_] < (t)->sizes[d_]) break;                                 \
                off_ -= (t)->strides[d_] * (t)->sizes[d_];                              \
                idx_[d_] = 0;                                                           \
            }                                                                           \
        }                                                                               \
    } while (0)

tn_status tn_nn_load(const tn_tensor *t, tn_dtype acc, tn_nn_buf *out) {
    out->data = NULL;
    out->owned = false;
    if (tn_tensor_is_meta(t)) return TN_OK;
    if (acc == TN_DTYPE_INT64) return tn_nn_load_index(t, out);
    int64_t n = tn_tensor_numel(t);
    bool contig = tn_tensor_is_contiguous(t);
    if (contig && t->dtype == acc) {
        out->data = tn_tensor_data(t);
        return TN_OK;
    }
    size_t isz = (size_t)tn_dtype_itemsize(acc);
    out->data = malloc(n > 0 ? (size_t)n * isz : 1);
    if (!out->data) return tn_error(TN_ERR_NO_MEMORY, "out of memory gathering %lld elements", (long long)n);
    out->owned = true;
    if (t->dtype == acc) { /* a strided gather of the same type: rows over the pool */
        int64_t cs[TN_MAX_DIMS], st = 1;
        for (int i = t->ndim - 1; i >= 0; i--) { cs[i] = st; st *= t->sizes[i]; }
        tn_strided_copy_bytes(out->data, cs, tn_tensor_data(t), t->strides, t->ndim, t->sizes, (int)isz);
        return TN_OK;
    }
    if (acc == TN_DTYPE_FLOAT32) {
        float *d = out->data;
        if (contig && t->dtype == TN_DTYPE_BFLOAT16) {
            const tn_bfloat16 *s = tn_tensor_data(t);
            for (int64_t i = 0; i < n; i++) d[i] = tn_bf16_to_f32(s[i]);
        } else if (contig && t->dtype == TN_DTYPE_FLOAT16) {
            const tn_half *s = tn_tensor_data(t);
            for (int64_t i = 0; i < n; i++) d[i] = tn_half_to_f32(s[i]);
        } else {
            tn_dtype dt = t->dtype;
            WALK(t, d[i] = (float)read_float(p, dt));
        }
    } else {
        double *d = out->data;
        tn_dtype dt = t->dtype;
        WALK(t, d[i] = read_float(p, dt));
    }
    return TN_OK;
}

tn_status tn_nn_load_index(const tn_tensor *t, tn_nn_buf *out) {
    out->data = NULL;
    out->owned = false;
    if (tn_tensor_is_meta(t)) return TN_OK;
    int64_t n = tn_tensor_numel(t);
    if (tn_tensor_is_contiguous(t) && t->dtype == TN_DTYPE_INT64) {
        out->data = tn_tensor_data(t);
        return TN_OK;
    }
    out->data = malloc(n > 0 ? (size_t)n * 8 : 1);
    if (!out->data) return tn_error(TN_ERR_NO_MEMORY, "out of memory gathering %lld indices", (long long)n);
    out->owned = true;
    int64_t *d = out->data;
    tn_dtype dt = t->dtype;
    WALK(t, d[i] = read_int(p, dt));
    return TN_OK;
}

void tn_nn_buf_free(tn_nn_buf *b) {
    if (b->owned) free(b->data);
    b->data = NULL;
    b->owned = false;
}

tn_status tn_nn_out_begin(tn_tensor *out, tn_dtype acc, tn_nn_buf *buf) {
    buf->data = NULL;
    buf->owned = false;
    if (tn_tensor_is_meta(out)) return TN_OK;
    if (out->dtype == acc) {
        buf->data = tn_tensor_data(out);
        return TN_OK;
    }
    int64_t n = tn_tensor_numel(out);
    buf->data = malloc(n > 0 ? (size_t)n * (size_t)tn_dtype_itemsize(acc) : 1);
    if (!buf->data) return tn_error(TN_ERR_NO_MEMORY, "out of memory for %lld results", (long long)n);
    buf->owned = true;
    return TN_OK;
}

void tn_nn_out_finish(tn_tensor *out, tn_dtype acc, tn_nn_buf *buf) {
    if (!buf->owned) return;
    int64_t n = tn_tensor_numel(out);
    void *dst = tn_tensor_data(out);
    if (acc == TN_DTYPE_INT64) { /* narrowing an integer result: c10's conversion, wrapping */
        char *data[2] = {dst, buf->data};
        int64_t strides[2] = {tn_dtype_itemsize(out->dtype), 8};
        tn_cast_loop(TN_DTYPE_INT64, out->dtype)(data, strides, n, NULL);
        tn_nn_buf_free(buf);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        double v = acc == TN_DTYPE_FLOAT32 ? ((const float *)buf->data)[i] : ((const double *)buf->data)[i];
        switch (out->dtype) {
        case TN_DTYPE_FLOAT32: ((float *)dst)[i] = (float)v; break;
        case TN_DTYPE_FLOAT64: ((double *)dst)[i] = v; break;
        /* double -> half/bfloat16 rounds through float, as c10 does. */
        case TN_DTYPE_FLOAT16: ((tn_half *)dst)[i] = tn_f32_to_half((float)v); break;
        case TN_DTYPE_BFLOAT16: ((tn_bfloat16 *)dst)[i] = tn_f32_to_bf16((float)v); break;
        /* uint8 values copied through a float buffer (nearest upsampling): exact */
        case TN_DTYPE_UINT8: ((uint8_t *)dst)[i] = (uint8_t)v; break;
        default: break;
        }
    }
    tn_nn_buf_free(buf);
}

tn_status tn_nn_empty(int ndim, const int64_t *sizes, tn_dtype dtype, const tn_tensor *like, tn_tensor **out) {
    return tn_tensor_empty(ndim, sizes, dtype, tn_tensor_device(like), out);
}

tn_status tn_nn_check_upsample_nonempty(const tn_tensor *x) {
    int64_t rest = 1;
    for (int d = 1; d < x->ndim; d++) rest *= x->sizes[d];
    if (tn_tensor_numel(x) != 0 || rest != 0) return TN_OK;
    char b[256];
    return tn_error(TN_ERR_RUNTIME, "Non-empty %dD data tensor expected but got a tensor with sizes %s", x->ndim,
                    TN_NN_FMT(x, b));
}

bool tn_nn_int_list(const tn_value *v, int n, int64_t *out) {
    if (v->tag == TN_V_INT) {
        for (int i = 0; i < n; i++) out[i] = v->u.i;
        return true;
    }
    if (v->tag != TN_V_INTLIST) return false;
    if (v->u.ilist.n == 1) {
        for (int i = 0; i < n; i++) out[i] = v->u.ilist.data[0];
        return true;
    }
    if (v->u.ilist.n != n) return false;
    for (int i = 0; i < n; i++) out[i] = v->u.ilist.data[i];
    return true;
}

tn_status tn_nn_call1(tn_op_id op, const tn_value *args, tn_tensor **out) {
    tn_value r[4];
    TN_TRY(tn_dispatch(op, args, r));
    *out = r[0].u.t;
    for (int k = 1; k < tn_op_schemas[op].nrets && k < 4; k++) tn_value_release(&r[k]);
    return TN_OK;
}
