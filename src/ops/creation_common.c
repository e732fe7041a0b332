/* creation_common.c — the option block, size lists, memory formats and out= handling
 * shared by every factory operator (Scalar conversion: ops/scalar_convert.c). */
#include <string.h>

#include "ops/creation_internal.h"
#include "ops/iter.h"
#include "ops/shape.h"
#include "ops/scalar_convert.h"

static const char *const layout_names[] = {"strided", "sparse_coo", "sparse_csr", "sparse_csc",
                                           "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged"};

tn_status tn_factory_opts_read(const tn_value *opts, tn_device dflt_device, tn_factory_opts *out) {
    out->dtype = opts[0].tag == TN_V_DTYPE ? opts[0].u.dtype : TN_DTYPE_UNDEFINED;
    if (opts[1].tag == TN_V_LAYOUT && opts[1].u.layout != 0) {
        int l = opts[1].u.layout;
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "layout torch.%s is not implemented by torchnative (only torch.strided)",
                        l >= 0 && l < 8 ? layout_names[l] : "?");
    }
    out->device = opts[2].tag == TN_V_DEVICE ? opts[2].u.device : dflt_device;
    if (out->device.type != TN_DEVICE_CPU && out->device.type != TN_DEVICE_META)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "device type %d is not implemented by torchnative (cpu and meta are)",
                        out->device.type);
    /* the pinned allocator is asked only for CPU memory: on meta upstream ignores the flag */
    if (opts[3].tag == TN_V_BOOL && opts[3].u.b && out->device.type == TN_DEVICE_CPU)
        return tn_error(TN_ERR_RUNTIME, "pin_memory=True requires a CUDA or other accelerator backend; no pinned "
                                        "memory allocator is available on this system.");
    return TN_OK;
}

int tn_factory_memfmt(const tn_value *v) { return v->tag == TN_V_MEMFMT ? v->u.memfmt : TN_MEMFMT_NONE; }

tn_status tn_factory_sizes(const tn_value *v, int *ndim, int64_t *sizes) {
    int64_t n = v->tag == TN_V_INTLIST ? v->u.ilist.n : 0;
    if (n > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions, got %lld", TN_MAX_DIMS,
                        (long long)n);
    for (int64_t i = 0; i < n; i++) sizes[i] = v->u.ilist.data[i];
    *ndim = (int)n;
    for (int64_t i = 0; i < n; i++)
        if (sizes[i] < 0) {
            char buf[400];
            return tn_error(TN_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                            (long long)sizes[i], tn_format_sizes((int)n, sizes, buf, sizeof buf));
        }
    return TN_OK;
}

tn_dtype tn_factory_default_complex(void) {
    return tn_default_dtype() == TN_DTYPE_FLOAT64 ? TN_DTYPE_COMPLEX128 : TN_DTYPE_COMPLEX64;
}

tn_dtype tn_factory_scalar_dtype(const tn_value *v) {
    switch (v->tag) {
    case TN_V_BOOL: return TN_DTYPE_BOOL;
    case TN_V_INT: return TN_DTYPE_INT64;
    case TN_V_UINT: return TN_DTYPE_INT64; /* upstream's full() infers Long, then fails to convert */
    case TN_V_COMPLEX: return tn_factory_default_complex();
    default: return tn_default_dtype();
    }
}

/* ---- allocation --------------------------------------------------------------------------- */

/* c10's get_channels_last_strides_2d / _3d (no max(size, 1) clamping, as upstream); the
 * products wrap as upstream's int64 ones do in practice (a size-0 tensor's other sizes may
 * multiply past int64: its storage is empty, its strides never read an element) */
static void channels_last_strides(int ndim, const int64_t *s, int64_t *st) {
    if (ndim == 4) {
        st[1] = 1; st[3] = s[1]; st[2] = tn_mul_wrap(st[3], s[3]); st[0] = tn_mul_wrap(st[2], s[2]);
    } else {
        st[1] = 1; st[4] = s[1]; st[3] = tn_mul_wrap(st[4], s[4]); st[2] = tn_mul_wrap(st[3], s[3]);
        st[0] = tn_mul_wrap(st[2], s[2]);
    }
}

tn_status tn_factory_empty(int ndim, const int64_t *sizes, tn_dtype dtype, tn_device device, int memfmt,
                           bool zero, tn_tensor **out) {
    if (memfmt == TN_MEMFMT_PRESERVE) return tn_error(TN_ERR_RUNTIME, "unsupported memory format Preserve");
    if (memfmt == TN_MEMFMT_CHANNELS_LAST && ndim != 4)
        return tn_error(TN_ERR_RUNTIME, "required rank 4 tensor to use channels_last format");
    if (memfmt == TN_MEMFMT_CHANNELS_LAST_3D && ndim != 5)
        return tn_error(TN_ERR_RUNTIME, "required rank 5 tensor to use channels_last_3d format");
    if (memfmt != TN_MEMFMT_CHANNELS_LAST && memfmt != TN_MEMFMT_CHANNELS_LAST_3D)
        return zero ? tn_tensor_zeros(ndim, sizes, dtype, device, out) : tn_tensor_empty(ndim, sizes, dtype, device, out);
    /* Same element count as contiguous: allocate it contiguous (whose size checks report an
     * overflowing element count as upstream does; a product wrapped here once gave a tiny
     * storage under huge sizes), then view it with the permuted strides. */
    int64_t st[TN_MAX_DIMS];
    tn_tensor *flat;
    TN_TRY(zero ? tn_tensor_zeros(ndim, sizes, dtype, device, &flat) : tn_tensor_empty(ndim, sizes, dtype, device, &flat));
    channels_last_strides(ndim, sizes, st);
    *out = tn_tensor_new_view(flat->storage, 0, ndim, sizes, st, dtype);
    tn_tensor_release(flat);
    return *out ? TN_OK : tn_error(TN_ERR_NO_MEMORY, "out of memory");
}

/* c10's is_channels_last_strides_2d_s4 / _3d_s5: strides ordered C fastest, then W, H, (D),
 * N, with ambiguous size-1 cases falling back to contiguous. */
static bool strides_like_channels_last(const tn_tensor *t) {
    static const int order4[] = {1, 3, 2, 0}, order5[] = {1, 4, 3, 2, 0};
    const int *order;
    int n;
    if (t->ndim == 4) { order = order4; n = 4; }
    else if (t->ndim == 5) { order = order5; n = 5; }
    else return false;
    if (t->strides[1] == 0) return false;
    int64_t min = 0;
    for (int k = 0; k < n; k++) {
        int d = order[k];
        if (t->sizes[d] == 0 || t->strides[d] < min) return false;
        if (d == 0 && min == t->strides[1]) return false;
        min = t->strides[d];
        if (t->sizes[d] > 1) min *= t->sizes[d];
    }
    return true;
}

int tn_factory_suggest_memfmt(const tn_tensor *t) {
    if (!strides_like_channels_last(t)) return TN_MEMFMT_CONTIGUOUS;
    return t->ndim == 4 ? TN_MEMFMT_CHANNELS_LAST : TN_MEMFMT_CHANNELS_LAST_3D;
}

tn_status tn_factory_empty_like(const tn_tensor *self, tn_dtype dtype, tn_device device, int memfmt,
                                tn_tensor **out) {
    if (memfmt == TN_MEMFMT_NONE || memfmt == TN_MEMFMT_PRESERVE) {
        int64_t st[TN_MAX_DIMS];
        tn_tensor_like_strides(self, st);
        return tn_tensor_empty_strided(self->ndim, self->sizes, st, dtype, device, out);
    }
    return tn_factory_empty(self->ndim, self->sizes, dtype, device, memfmt, false, out);
}

tn_status tn_fill_value_bytes(const tn_value *v, tn_dtype dt, int64_t numel, unsigned char out[16]) {
    if (numel != 1 || (dt != TN_DTYPE_FLOAT16 && dt != TN_DTYPE_BFLOAT16)) return tn_scalar_to_bytes(v, dt, out);
    double d;
    TN_TRY(tn_scalar_to_bytes(v, TN_DTYPE_FLOAT64, (unsigned char *)&d));
    if (dt == TN_DTYPE_FLOAT16) {
        tn_half h = tn_f32_to_half((float)d);
        memcpy(out, &h, sizeof h);
    } else {
        tn_bfloat16 b = tn_f32_to_bf16((float)d);
        memcpy(out, &b, sizeof b);
    }
    return TN_OK;
}

tn_status tn_factory_fill(tn_tensor *t, const tn_value *v) {
    unsigned char elem[16];
    TN_TRY(tn_fill_value_bytes(v, t->dtype, tn_tensor_numel(t), elem));
    tn_shape_fill_bytes(t, elem);
    return TN_OK;
}

tn_status tn_factory_into_out(tn_tensor *res, tn_tensor *out, tn_value *rets) {
    tn_status st = TN_OK;
    bool same = out->ndim == res->ndim && memcmp(out->sizes, res->sizes, sizeof(int64_t) * (size_t)res->ndim) == 0;
    if (!same) st = tn_tensor_resize(out, res->ndim, res->sizes);
    if (st == TN_OK && !tn_tensor_is_meta(out) && !tn_tensor_is_meta(res)) st = tn_shape_copy(out, res);
    tn_tensor_release(res);
    if (st != TN_OK) return st;
    tn_tensor_retain(out);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

tn_status tn_factory_into_seq_out(tn_tensor *res, tn_tensor *out, tn_value *rets) {
    if (tn_tensor_numel(out) != tn_tensor_numel(res) || out->ndim == res->ndim)
        return tn_factory_into_out(res, out, rets);
    int64_t st[TN_MAX_DIMS];
    tn_contiguous_strides(out->ndim, out->sizes, st);
    tn_tensor *v = tn_tensor_new_view(res->storage, res->offset, out->ndim, out->sizes, st, res->dtype);
    tn_tensor_release(res);
    if (!v) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    return tn_factory_into_out(v, out, rets);
}

tn_value tn_factory_dtype_value(tn_dtype d) {
    tn_value v = {.tag = TN_V_DTYPE};
    v.u.dtype = d;
    return v;
}

tn_value tn_factory_device_value(tn_device d) {
    tn_value v = {.tag = TN_V_DEVICE};
    v.u.device = d;
    return v;
}
