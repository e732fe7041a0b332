/* elementwise_copy.c — data movement ops: copy_ (the door's write-back path), fill_,
 * zero_, clone, _to_copy, where, masked_fill. */
#include <string.h>

#include "core/threadpool.h"
#include "kernels/cast.h"
#include "ops/creation_internal.h"
#include "ops/elementwise_common.h"
#include "ops/graph.h"
#include "ops/promote.h"
#include "ops/shape.h"
#include "ops/scalar_convert.h"

/* A same-dtype 2-D copy whose source is transposed relative to the destination
 * (x.t().contiguous()): the 1-D loops would read the source a cache line (and often a
 * page) per element; square tiles read and write whole lines instead. Iteration dim 0
 * is the destination's contiguous one. */
#define TN_TILE 32
typedef struct tile_copy {
    char *dst;
    const char *src;
    int64_t n0, n1, d1, s0; /* sizes; destination outer stride, source inner stride (bytes) */
    int w;
} tile_copy;

#define TN_TILE_BODY(T)                                                                   \
    for (int64_t i1 = b1; i1 < e1; i1++) {                                                \
        T *o = (T *)(t->dst + i1 * t->d1);                                                \
        const char *in = t->src + i1 * (int64_t)sizeof(T);                                \
        for (int64_t i0 = b0; i0 < e0; i0++) memcpy(&o[i0], in + i0 * t->s0, sizeof(T)); \
    }

static void tile_rows(void *vt, int64_t begin, int64_t end) {
    const tile_copy *t = (const tile_copy *)vt;
    for (int64_t bt = begin; bt < end; bt++) { /* one band of TN_TILE destination rows */
        int64_t b1 = bt * TN_TILE, e1 = b1 + TN_TILE < t->n1 ? b1 + TN_TILE : t->n1;
        for (int64_t b0 = 0; b0 < t->n0; b0 += TN_TILE) {
            int64_t e0 = b0 + TN_TILE < t->n0 ? b0 + TN_TILE : t->n0;
            switch (t->w) {
            case 1: TN_TILE_BODY(uint8_t) break;
            case 2: TN_TILE_BODY(uint16_t) break;
            case 4: TN_TILE_BODY(uint32_t) break;
            default: TN_TILE_BODY(uint64_t) break;
            }
        }
    }
}

/* Runs the tiled copy when the iterator has that shape; false otherwise. */
static bool copy_transposed(const tn_iter *it, tn_dtype dt) {
    int w = (int)tn_dtype_itemsize(dt);
    if (it->ndim != 2 || it->is_meta || (w != 1 && w != 2 && w != 4 && w != 8)) return false;
    const int64_t *so = it->strides[0], *si = it->strides[1];
    int64_t n0 = it->it_shape[0], n1 = it->it_shape[1];
    if (so[0] != w || si[1] != w || si[0] < (int64_t)w * TN_TILE || n0 < TN_TILE || n1 < TN_TILE) return false;
    tile_copy t = {(char *)tn_tensor_data(it->ops[0].tensor), (const char *)tn_tensor_data(it->ops[1].tensor),
                   n0, n1, so[1], si[0], w};
    int64_t bands = (n1 + TN_TILE - 1) / TN_TILE;
    /* grain: about 32k elements per thread, as the iterator */
    int64_t grain = (32768 + n0 * TN_TILE - 1) / (n0 * TN_TILE);
    tn_parallel_for(bands, grain < 1 ? 1 : grain, tile_rows, &t);
    return true;
}

/* aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False): src broadcast to
 * self's shape, converted to self's dtype. */
tn_status tn_op_copy_(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *src = args[1].u.t;
    if (self == src || (self->storage == src->storage && self->offset == src->offset && self->dtype == src->dtype &&
                        self->ndim == src->ndim &&
                        !memcmp(self->sizes, src->sizes, sizeof(int64_t) * (size_t)self->ndim) &&
                        !memcmp(self->strides, src->strides, sizeof(int64_t) * (size_t)self->ndim))) {
        tn_tensor_retain(self);
        rets[0] = tn_value_tensor(self);
        return TN_OK;
    }
    if (tn_tensor_is_meta(src) && !tn_tensor_is_meta(self))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
    if (tn_tensor_is_meta(self)) {
        /* Nothing to move: only the broadcast check is observable. */
        int n;
        int64_t shape[TN_MAX_DIMS];
        char b1[200], b2[200];
        TN_TRY(tn_broadcast_shapes(self->ndim, self->sizes, src->ndim, src->sizes, &n, shape));
        if (n != self->ndim || memcmp(shape, self->sizes, sizeof(int64_t) * (size_t)n) != 0)
            return tn_error(TN_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                            tn_format_sizes(self->ndim, self->sizes, b1, sizeof b1), tn_format_sizes(n, shape, b2, sizeof b2));
        tn_tensor_retain(self);
        rets[0] = tn_value_tensor(self);
        return TN_OK;
    }
    if (tn_dtype_is_complex(src->dtype) && !tn_dtype_is_complex(self->dtype)) {
        static int warned;
        tn_warn_once(&warned, "Casting complex values to real discards the imaginary part");
    }
    tn_iter_config c = tn_iter_config_init(1, 1);
    c.outputs[0] = self;
    c.inputs[0] = src;
    c.check_all_same_dtype = false;
    tn_iter it;
    TN_TRY(tn_iter_build(&it, &c));
    tn_loop_fn loop = tn_cast_loop(src->dtype, self->dtype);
    if (!loop) {
        tn_iter_release(&it);
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "copy_ from %s to %s is not implemented by torchnative",
                        tn_dtype_infos[src->dtype].c10_name, tn_dtype_infos[self->dtype].c10_name);
    }
    /* a transposed source gets the tiled copy (sharing storage keeps the 1-D order) */
    if (src->dtype != self->dtype || src->storage == self->storage || !copy_transposed(&it, self->dtype))
        tn_iter_for_each(&it, loop, NULL);
    tn_iter_release(&it);
    tn_tensor_retain(self);
    rets[0] = tn_value_tensor(self);
    return TN_OK;
}

/* Writes a scalar into every element of self (fill_ / zero_). */
static tn_status fill_with(tn_tensor *self, const tn_value *v, tn_value *rets) {
    if (!tn_cast_supported(self->dtype))
        return tn_ew_refuse_dtype("fill_cpu", self->dtype);
    tn_loop_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    /* upstream's fill kernel: value.to<scalar_t>(), checked (NaN into an integer, 70000
     * into Half, a complex with an imaginary part into a real type refuse); one element of
     * Half/BFloat16 is its unchecked fast path (tn_fill_value_bytes) */
    TN_TRY(tn_fill_value_bytes(v, self->dtype, tn_tensor_numel(self), ctx.bytes));
    /* a dimension of stride 0 writes the same elements again with the same value: filled
     * once (an expanded 2**62-element view is its one element; upstream writes it 2**62
     * times, a hang, the seed-35 fuzz run) */
    tn_tensor *cut = NULL;
    if (!tn_tensor_is_meta(self)) TN_TRY(tn_shape_unexpanded_view(self, &cut));
    tn_tensor *dst = cut ? cut : self;
    tn_iter_config c = tn_iter_config_init(1, 0);
    c.outputs[0] = dst;
    c.check_mem_overlap = false;
    tn_iter it;
    tn_status st = tn_iter_build(&it, &c);
    if (st == TN_OK) {
        tn_iter_for_each(&it, tn_ew_fill_loop(tn_dtype_itemsize(self->dtype)), &ctx);
        tn_iter_release(&it);
    }
    if (cut) tn_tensor_release(cut);
    TN_TRY(st);
    tn_tensor_retain(self);
    rets[0] = tn_value_tensor(self);
    return TN_OK;
}

/* Reads a 0-dim tensor's value as a scalar tn_value of its category. */
static tn_status item_value(const tn_tensor *t, tn_value *v) {
    if (tn_tensor_is_meta(t)) return tn_error(TN_ERR_NOT_IMPLEMENTED, "Tensor.item() cannot be called on meta tensors");
    const void *p = tn_tensor_data(t);
    if (tn_dtype_is_complex(t->dtype)) {
        v->tag = TN_V_COMPLEX;
        tn_cast_load_complex(p, t->dtype, &v->u.c.re, &v->u.c.im);
    } else if (tn_dtype_is_floating(t->dtype)) {
        *v = tn_value_double(tn_cast_load_double(p, t->dtype));
    } else if (t->dtype == TN_DTYPE_BOOL) {
        *v = tn_value_bool(*(const uint8_t *)p != 0);
    } else {
        *v = tn_value_int(tn_cast_load_int64(p, t->dtype));
    }
    return TN_OK;
}

/* aten::fill_.Scalar(Tensor(a!) self, Scalar value) */
tn_status tn_op_fill__Scalar(const tn_value *args, tn_value *rets) { return fill_with(args[0].u.t, &args[1], rets); }

/* aten::fill_.Tensor(Tensor(a!) self, Tensor value): value must be 0-dim. */
tn_status tn_op_fill__Tensor(const tn_value *args, tn_value *rets) {
    const tn_tensor *value = args[1].u.t;
    if (value->ndim != 0)
        return tn_error(TN_ERR_RUNTIME, "fill_ only supports 0-dimension value tensor but got tensor with %d dimensions.",
                        value->ndim);
    tn_value v;
    TN_TRY(item_value(value, &v));
    return fill_with(args[0].u.t, &v, rets);
}

/* aten::zero_(Tensor(a!) self) */
tn_status tn_op_zero_(const tn_value *args, tn_value *rets) {
    tn_value zero = tn_value_int(0);
    return fill_with(args[0].u.t, &zero, rets);
}

/* A copy of self in `dtype` on `device` with `memfmt` (TN_V_NONE/1 preserve, 0 contiguous). */
static tn_status copy_as(tn_tensor *self, tn_dtype dtype, tn_device device, const tn_value *memfmt, tn_value *rets) {
    int fmt = memfmt->tag == TN_V_MEMFMT ? memfmt->u.memfmt : 1;
    if (fmt != 0 && fmt != 1)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "channels_last memory formats are not implemented by torchnative");
    tn_tensor *out;
    int64_t st[TN_MAX_DIMS]; /* preserve: upstream's empty_like strides */
    if (fmt == 1) tn_tensor_like_strides(self, st);
    TN_TRY(tn_graph_empty_result(self->ndim, self->sizes, fmt == 1 ? st : NULL, dtype, device, &out));
    if (!tn_device_is_meta(device)) {
        tn_value a[3] = {tn_value_tensor(out), tn_value_tensor(self), tn_value_bool(false)}, r;
        tn_status st = tn_op_copy_(a, &r);
        if (st != TN_OK) { tn_tensor_release(out); return st; }
        tn_tensor_release(r.u.t);
    }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::clone(Tensor self, *, MemoryFormat? memory_format=None) */
tn_status tn_op_clone(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    return copy_as(self, self->dtype, tn_tensor_device(self), &args[1], rets);
}

/* aten::_to_copy(Tensor self, *, ScalarType? dtype, Layout? layout, Device? device,
 * bool? pin_memory, bool non_blocking, MemoryFormat? memory_format) */
tn_status tn_op__to_copy(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    tn_dtype dtype = args[1].tag == TN_V_DTYPE ? args[1].u.dtype : self->dtype;
    if (args[2].tag == TN_V_LAYOUT && args[2].u.layout != 0)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "_to_copy to a non-strided layout is not implemented by torchnative");
    tn_device device = args[3].tag == TN_V_DEVICE ? args[3].u.device : tn_tensor_device(self);
    if (device.type != TN_DEVICE_CPU && device.type != TN_DEVICE_META)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "_to_copy to device type %d is not implemented by torchnative", device.type);
    if (tn_tensor_is_meta(self) && device.type == TN_DEVICE_CPU)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
    if (!tn_cast_supported(dtype) || !tn_cast_supported(self->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "conversion from %s to %s is not implemented by torchnative",
                        tn_dtype_infos[self->dtype].c10_name, tn_dtype_infos[dtype].c10_name);
    return copy_as(self, dtype, device, &args[6], rets);
}

/* where(condition, self, other) once self/other are tensors (scalars wrapped). */
static tn_status where_impl(tn_tensor *cond, tn_tensor *a, tn_tensor *b, tn_value *rets) {
    if (cond->dtype == TN_DTYPE_UINT8) {
        /* upstream still accepts (deprecated) uint8 conditions by converting them to bool */
        tn_tensor *cb = NULL;
        TN_TRY(tn_ew_to_dtype(cond, TN_DTYPE_BOOL, &cb));
        tn_status st = where_impl(cb, a, b, rets);
        tn_tensor_release(cb);
        return st;
    }
    if (cond->dtype != TN_DTYPE_BOOL)
        return tn_error(TN_ERR_RUNTIME, "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                        tn_dtype_infos[cond->dtype].c10_name);
    tn_result_type_state rs = tn_result_type_state_init();
    tn_dtype common;
    TN_TRY(tn_result_type_update_tensor(&rs, a));
    TN_TRY(tn_result_type_update_tensor(&rs, b));
    TN_TRY(tn_result_type_finish(&rs, &common));
    tn_tensor *ca = NULL, *cb = NULL;
    tn_status st = tn_ew_to_dtype(a, common, &ca);
    if (st == TN_OK) st = tn_ew_to_dtype(b, common, &cb);
    if (st == TN_OK) {
        tn_iter_config c = tn_iter_config_init(1, 3);
        c.inputs[0] = cond;
        c.inputs[1] = ca;
        c.inputs[2] = cb;
        c.check_all_same_dtype = false;
        c.output_dtype = common;
        c.static_dtype = common;
        tn_iter it;
        st = tn_iter_build(&it, &c);
        if (st == TN_OK) {
            tn_iter_for_each(&it, tn_ew_where_loop(tn_dtype_itemsize(common)), NULL);
            rets[0] = tn_value_tensor(tn_iter_take_output(&it, 0));
            tn_iter_release(&it);
        }
    }
    tn_tensor_release(ca);
    tn_tensor_release(cb);
    return st;
}

static tn_status where_values(const tn_value *args, tn_value *rets) {
    /* upstream makes a Scalar operand a tensor of the result dtype through Scalar::to (checked):
     * 300 next to a uint8 tensor, 1e40 next to a bool one (float32) or a uint Scalar next to an
     * int32 tensor refuse; into Half and BFloat16 it converts unchecked (1e40 is inf there) */
    for (int k = 1; k <= 2; k++)
        if (args[k].tag != TN_V_TENSOR) {
            tn_dtype common;
            unsigned char elem[16];
            TN_TRY(tn_result_type(2, &args[1], &common));
            if (common != TN_DTYPE_FLOAT16 && common != TN_DTYPE_BFLOAT16) TN_TRY(tn_scalar_to_bytes(&args[k], common, elem));
        }
    tn_tensor *a = NULL, *b = NULL;
    tn_status st = tn_ew_scalar_tensor(&args[1], &a);
    if (st == TN_OK) st = tn_ew_scalar_tensor(&args[2], &b);
    if (st == TN_OK) st = where_impl(args[0].u.t, a, b, rets);
    tn_tensor_release(a);
    tn_tensor_release(b);
    return st;
}

/* aten::where.self(Tensor condition, Tensor self, Tensor other) and the Scalar overloads. */
tn_status tn_op_where_self(const tn_value *args, tn_value *rets) { return where_values(args, rets); }
tn_status tn_op_where_ScalarSelf(const tn_value *args, tn_value *rets) { return where_values(args, rets); }
tn_status tn_op_where_ScalarOther(const tn_value *args, tn_value *rets) { return where_values(args, rets); }
tn_status tn_op_where_Scalar(const tn_value *args, tn_value *rets) { return where_values(args, rets); }

static tn_status masked_fill_impl(tn_tensor *self, tn_tensor *mask, const tn_value *value, tn_value *rets) {
    if (mask->dtype != TN_DTYPE_BOOL)
        return tn_error(TN_ERR_RUNTIME, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                        tn_dtype_infos[mask->dtype].c10_name);
    if (!tn_cast_supported(self->dtype)) return tn_ew_refuse_dtype("masked_fill", self->dtype);
    tn_loop_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    /* upstream's kernel takes value.to<scalar_t>() (checked) before its loop, empty or not;
     * the meta kernel converts nothing */
    if (!tn_tensor_is_meta(self)) TN_TRY(tn_scalar_to_bytes(value, self->dtype, ctx.bytes));
    tn_iter_config c = tn_iter_config_init(1, 2);
    c.inputs[0] = self;
    c.inputs[1] = mask;
    c.check_all_same_dtype = false;
    c.static_dtype = self->dtype;
    c.output_dtype = self->dtype;
    tn_iter it;
    TN_TRY(tn_iter_build(&it, &c));
    tn_iter_for_each(&it, tn_ew_masked_fill_loop(tn_dtype_itemsize(self->dtype)), &ctx);
    rets[0] = tn_value_tensor(tn_iter_take_output(&it, 0));
    tn_iter_release(&it);
    return TN_OK;
}

/* aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) */
tn_status tn_op_masked_fill_Scalar(const tn_value *args, tn_value *rets) {
    return masked_fill_impl(args[0].u.t, args[1].u.t, &args[2], rets);
}

/* aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value): value is 0-dim. */
tn_status tn_op_masked_fill_Tensor(const tn_value *args, tn_value *rets) {
    const tn_tensor *value = args[2].u.t;
    if (value->ndim != 0)
        return tn_error(TN_ERR_RUNTIME,
                        "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                        value->ndim);
    tn_value v;
    TN_TRY(item_value(value, &v));
    return masked_fill_impl(args[0].u.t, args[1].u.t, &v, rets);
}
