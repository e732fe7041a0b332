/* linalg_grouped_mm.c — aten::_grouped_mm on CPU, the way upstream's CPU build does it: one
 * aten::mm per group over slices chosen by the int32 offsets (MoE experts in transformers'
 * grouped_mm path: tokens sorted by expert, offs = cumulative tokens per expert). */
#include <string.h>

#include "ops/dispatch.h"

static const char *dtype_name(tn_dtype d) { return tn_dtype_infos[d].c10_name; }

/* Upstream's check_valid_strides_and_return_transposed: the last two dims must be row- or
 * column-major with a leading stride that is a multiple of 16 bytes. */
static tn_status check_strides(const tn_tensor *m) {
    int e = m->ndim - 1;
    int64_t align = 16 / tn_dtype_itemsize(m->dtype);
    int64_t s0 = m->strides[e - 1], s1 = m->strides[e];
    int64_t n0 = m->sizes[e - 1] > 1 ? m->sizes[e - 1] : 1, n1 = m->sizes[e] > 1 ? m->sizes[e] : 1;
    if (s0 == 1 && s1 >= n0) {
        if (s1 % align) return tn_error(TN_ERR_RUNTIME, "strides should be multiple of 16 bytes");
        return TN_OK;
    }
    if (s1 == 1 && s0 >= n1) {
        if (s0 % align) return tn_error(TN_ERR_RUNTIME, "strides should be multiple of 16 bytes");
        return TN_OK;
    }
    char b1[128], b2[128];
    tn_format_sizes(m->ndim, m->strides, b1, sizeof b1);
    tn_format_sizes(m->ndim, m->sizes, b2, sizeof b2);
    return tn_error(TN_ERR_RUNTIME, "Invalid strides/sizes, got %s for strides and %s for sizes", b1, b2);
}

/* A view of t restricted to [start, end) along dim (Tensor.slice clamping), or, with
 * index >= 0, t[index] (dim 0 dropped). */
static tn_tensor *view_of(const tn_tensor *t, int dim, int64_t start, int64_t end, int64_t index) {
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    int n = 0;
    int64_t off = t->offset;
    if (index >= 0) {
        off += index * t->strides[0];
        for (int d = 1; d < t->ndim; d++, n++) { sizes[n] = t->sizes[d]; strides[n] = t->strides[d]; }
        return tn_tensor_new_view(t->storage, off, n, sizes, strides, t->dtype);
    }
    int64_t size = t->sizes[dim];
    if (start < 0) start += size;
    if (end < 0) end += size;
    if (start < 0) start = 0;
    if (start > size) start = size;
    if (end < start) end = start;
    if (end > size) end = size;
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    sizes[dim] = end - start;
    off += start * t->strides[dim];
    return tn_tensor_new_view(t->storage, off, t->ndim, sizes, strides, t->dtype);
}

/* out (a view) = a @ b through the door (mm or bmm), then copied in. Consumes a and b. */
static tn_status product_into(tn_op_id op, tn_tensor *out, tn_tensor *a, tn_tensor *b) {
    tn_value args[2] = {tn_value_tensor(a), tn_value_tensor(b)}, r[1];
    tn_status st = tn_dispatch(op, args, r);
    tn_tensor_release(a);
    tn_tensor_release(b);
    if (st != TN_OK) return st;
    tn_value c[3] = {tn_value_tensor(out), r[0], tn_value_bool(false)}, r2[1];
    st = tn_dispatch(TN_OP_copy_, c, r2);
    tn_tensor_release(r[0].u.t);
    if (st == TN_OK) tn_tensor_release(r2[0].u.t);
    return st;
}

/* aten::_grouped_mm(Tensor self, Tensor mat2, Tensor? offs=None, Tensor? bias=None,
 *                   ScalarType? out_dtype=None) -> Tensor */
tn_status tn_op__grouped_mm(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t, *b = args[1].u.t;
    tn_tensor *offs = args[2].tag == TN_V_TENSOR ? args[2].u.t : NULL;
    if (a->dtype != TN_DTYPE_BFLOAT16 && a->dtype != TN_DTYPE_FLOAT32 && a->dtype != TN_DTYPE_FLOAT16)
        return tn_error(TN_ERR_RUNTIME, "Expected mat_a to be Float32, BFloat16 or Float16 matrix, got %s", dtype_name(a->dtype));
    if (b->dtype != TN_DTYPE_BFLOAT16 && b->dtype != TN_DTYPE_FLOAT32 && b->dtype != TN_DTYPE_FLOAT16)
        return tn_error(TN_ERR_RUNTIME, "Expected mat_b to be Float32, BFloat16 or Float16 matrix, got %s", dtype_name(b->dtype));
    if (a->ndim != 2 && a->ndim != 3) return tn_error(TN_ERR_RUNTIME, "mat_a has to be 2 or 3d");
    if (b->ndim != 2 && b->ndim != 3) return tn_error(TN_ERR_RUNTIME, "mat_b has to be 2 or 3d");
    bool a2 = a->ndim == 2, b2 = b->ndim == 2;
    if ((!a2 || !b2) && a->sizes[a->ndim - 1] != b->sizes[b->ndim - 2])
        return tn_error(TN_ERR_RUNTIME, "contraction dimension of mat_a and mat_b must match");
    TN_TRY(check_strides(a));
    TN_TRY(check_strides(b));
    if ((offs != NULL) != (a2 || b2))
        return tn_error(TN_ERR_RUNTIME, "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d");
    if (offs) {
        if (offs->ndim != 1) return tn_error(TN_ERR_RUNTIME, "offs has to be 1D");
        if (offs->dtype != TN_DTYPE_INT32) return tn_error(TN_ERR_RUNTIME, "Offsets have to be int32");
    }
    if (args[3].tag == TN_V_TENSOR) return tn_error(TN_ERR_RUNTIME, "Bias not supported yet");
    if (args[4].tag == TN_V_DTYPE && args[4].u.dtype != a->dtype)
        return tn_error(TN_ERR_RUNTIME, "Grouped gemm output dtype must match `mat_a` dtype");
    if (a->dtype != b->dtype)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::_grouped_mm.default with mixed dtypes %s and %s is not implemented by torchnative",
                        dtype_name(a->dtype), dtype_name(b->dtype));

    /* Output geometry as upstream's create_grouped_gemm_output_tensor, rows padded to 16 bytes. */
    int64_t groups = offs ? offs->sizes[0] : 0, sizes[3];
    int n;
    if (a2 && b2) { n = 3; sizes[0] = groups; sizes[1] = a->sizes[0]; sizes[2] = b->sizes[1]; }
    else if (a2) {
        if (groups != b->sizes[0]) return tn_error(TN_ERR_RUNTIME, "matrix batch sizes have to match");
        n = 2; sizes[0] = a->sizes[0]; sizes[1] = b->sizes[2];
    } else if (b2) {
        if (groups != a->sizes[0]) return tn_error(TN_ERR_RUNTIME, "matrix batch sizes have to match");
        n = 2; sizes[0] = a->sizes[1]; sizes[1] = b->sizes[1];
    } else {
        if (a->sizes[0] != b->sizes[0]) return tn_error(TN_ERR_RUNTIME, "batched dimension has to match");
        n = 3; sizes[0] = a->sizes[0]; sizes[1] = a->sizes[1]; sizes[2] = b->sizes[2];
    }
    int64_t align = 16 / tn_dtype_itemsize(a->dtype);
    int64_t padded = (sizes[n - 1] + align - 1) / align * align, strides[3];
    strides[n - 1] = 1;
    strides[n - 2] = padded;
    if (n == 3) strides[0] = sizes[1] * padded;
    int64_t numel = 1;
    for (int d = 0; d < n; d++) numel *= sizes[d];
    int64_t extent = numel ? (sizes[0] - 1) * strides[0] + (sizes[1] - 1) * strides[1] + (n == 3 ? sizes[2] - 1 : 0) + 1 : 0;
    tn_storage *s;
    /* zeroed: rows no group covers are unspecified upstream (empty_strided); zero is one value */
    TN_TRY(tn_storage_new(extent * tn_dtype_itemsize(a->dtype), tn_tensor_device(a), true, &s));
    tn_tensor *out = tn_tensor_new_view(s, 0, n, sizes, strides, a->dtype);
    tn_storage_release(s);
    if (!out) return tn_error(TN_ERR_NO_MEMORY, "out of memory");

    tn_status st = TN_OK;
    if (!tn_tensor_is_meta(out) && numel > 0) {
        if (!offs) {
            tn_tensor *ov = tn_tensor_alias(out);
            st = product_into(TN_OP_bmm, ov, tn_tensor_alias(a), tn_tensor_alias(b));
            tn_tensor_release(ov);
        } else if (tn_tensor_is_meta(offs)) {
            st = tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::_grouped_mm.default with meta offsets is not implemented by torchnative");
        } else {
            int64_t start = 0;
            for (int64_t g = 0; g < groups && st == TN_OK; g++) {
                const int32_t *o = (const int32_t *)offs->storage->data;
                int64_t end = o[offs->offset + g * offs->strides[0]];
                tn_tensor *ov, *av, *bv;
                if (a2 && !b2) {
                    ov = view_of(out, 0, start, end, -1);
                    av = view_of(a, 0, start, end, -1);
                    bv = view_of(b, 0, 0, 0, g);
                } else if (!a2 && b2) {
                    ov = view_of(out, 1, start, end, -1);
                    av = view_of(a, 0, 0, 0, g);
                    bv = view_of(b, 1, start, end, -1);
                } else {
                    ov = view_of(out, 0, 0, 0, g);
                    av = view_of(a, 1, start, end, -1);
                    bv = view_of(b, 0, start, end, -1);
                }
                st = product_into(TN_OP_mm, ov, av, bv);
                tn_tensor_release(ov);
                start = end;
            }
        }
    }
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}
