/* nn_backward_common.c — the helpers shared by the backward operator files (see
 * nn_backward_internal.h for the contracts). */
#include <stdlib.h>
#include <string.h>

#include "kernels/cast.h"
#include "kernels/gemm.h"
#include "ops/iter.h"
#include "core/threadpool.h"
#include "ops/nn_backward_internal.h"

tn_status tn_nnb_acc_alloc(tn_dtype acc, int64_t n, bool zero, void **out) {
    size_t bytes = (size_t)(n > 0 ? n : 1) * (size_t)tn_dtype_itemsize(acc);
    *out = zero ? calloc(1, bytes) : malloc(bytes);
    if (!*out) return tn_error(TN_ERR_NO_MEMORY, "out of memory allocating %lld elements", (long long)n);
    return TN_OK;
}

tn_status tn_nnb_conv_buf(tn_dtype acc, int64_t n, int slot, void **out, bool *owned) {
    size_t bytes = (size_t)(n > 0 ? n : 1) * (size_t)tn_dtype_itemsize(acc);
    *owned = bytes > ((size_t)4 << 20);
    *out = *owned ? malloc(bytes) : tn_thread_scratch(slot, bytes);
    if (!*out) return tn_error(TN_ERR_NO_MEMORY, "out of memory allocating %lld elements", (long long)n);
    return TN_OK;
}

tn_status tn_nnb_out_begin(tn_tensor *out, tn_dtype acc, bool zero, tn_nn_buf *b) {
    TN_TRY(tn_nn_out_begin(out, acc, b));
    if (zero && b->data) memset(b->data, 0, (size_t)tn_tensor_numel(out) * (size_t)tn_dtype_itemsize(acc));
    return TN_OK;
}

tn_status tn_nnb_check_float(const tn_tensor *t, const char *kernel) {
    if (tn_nn_is_float(t->dtype)) return TN_OK;
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tn_nnb_dname(t->dtype));
}

tn_status tn_nnb_load_opt(const tn_tensor *t, tn_dtype acc, tn_nn_buf *b) {
    b->data = NULL;
    b->owned = false;
    return t ? tn_nn_load(t, acc, b) : TN_OK;
}

tn_status tn_nnb_check_same_shape(const tn_tensor *gy, const tn_tensor *x, const char *what) {
    if (tn_nnb_same_sizes(gy, x)) return TN_OK;
    char b1[256], b2[256];
    return tn_error(TN_ERR_RUNTIME, "%s: expected grad_out of size %s but got %s", what, TN_NN_FMT(x, b1),
                    TN_NN_FMT(gy, b2));
}

void tn_nnb_zero_tensor(tn_tensor *t) {
    /* an empty tensor may have no storage: memset of NULL is undefined even for 0 bytes */
    if (t && !tn_tensor_is_meta(t) && tn_tensor_numel(t) > 0)
        memset(tn_tensor_data(t), 0, (size_t)tn_tensor_numel(t) * (size_t)tn_dtype_itemsize(t->dtype));
}

tn_status tn_nnb_acc_tensor(const tn_tensor *t, tn_dtype acc, tn_tensor **out) {
    tn_tensor *r;
    TN_TRY(tn_tensor_empty(t->ndim, t->sizes, acc, tn_device_cpu(), &r));
    tn_nn_buf b;
    tn_status st = tn_nn_load(t, acc, &b);
    if (st != TN_OK) { tn_tensor_release(r); return st; }
    memcpy(tn_tensor_data(r), b.data, (size_t)tn_tensor_numel(t) * (size_t)tn_dtype_itemsize(acc));
    tn_nn_buf_free(&b);
    *out = r;
    return TN_OK;
}

tn_status tn_nnb_mm_views(tn_tensor *as, int64_t aoff, int64_t ar, int64_t ac, int64_t ars, int64_t acs,
                          tn_tensor *bs, int64_t boff, int64_t br, int64_t bc, int64_t brs, int64_t bcs, tn_tensor **r) {
    int64_t asz[2] = {ar, ac}, ast[2] = {ars, acs}, bsz[2] = {br, bc}, bst[2] = {brs, bcs};
    tn_tensor *a = tn_tensor_new_view(as->storage, as->offset + aoff, 2, asz, ast, as->dtype);
    tn_tensor *b = tn_tensor_new_view(bs->storage, bs->offset + boff, 2, bsz, bst, bs->dtype);
    tn_status st = (a && b) ? TN_OK : tn_error(TN_ERR_NO_MEMORY, "out of memory creating a view");
    if (st == TN_OK) {
        tn_value args[2] = {tn_value_tensor(a), tn_value_tensor(b)};
        st = tn_nn_call1(TN_OP_mm, args, r);
    }
    if (a) tn_tensor_release(a);
    if (b) tn_tensor_release(b);
    return st;
}

tn_status tn_nnb_add_result(tn_dtype acc, void *dst, tn_tensor *r, int64_t n) {
    tn_nn_buf b;
    TN_TRY(tn_nn_load(r, acc, &b));
    if (acc == TN_DTYPE_FLOAT32) {
        float *d = dst;
        const float *s = b.data;
        for (int64_t i = 0; i < n; i++) d[i] += s[i];
    } else {
        double *d = dst;
        const double *s = b.data;
        for (int64_t i = 0; i < n; i++) d[i] += s[i];
    }
    tn_nn_buf_free(&b);
    return TN_OK;
}

tn_status tn_nnb_cast_result(tn_tensor **r, tn_dtype dtype) {
    tn_tensor *src = *r, *dst;
    if (src->dtype == dtype) return TN_OK;
    TN_TRY(tn_tensor_empty_like(src, dtype, &dst));
    if (!tn_tensor_is_meta(src)) {
        tn_loop_fn loop = tn_cast_loop(src->dtype, dtype);
        tn_iter_config c = tn_iter_config_init(1, 1);
        c.outputs[0] = dst;
        c.inputs[0] = src;
        c.check_all_same_dtype = false;
        c.check_mem_overlap = false;
        tn_iter it;
        tn_status st = loop ? tn_iter_build(&it, &c)
                            : tn_error(TN_ERR_NOT_IMPLEMENTED, "conversion from %s to %s is not implemented by torchnative",
                                       tn_nnb_dname(src->dtype), tn_nnb_dname(dtype));
        if (st != TN_OK) { tn_tensor_release(dst); return st; }
        tn_iter_for_each(&it, loop, NULL);
        tn_iter_release(&it);
    }
    tn_tensor_release(src);
    *r = dst;
    return TN_OK;
}

tn_status tn_nnb_gemm(tn_dtype acc, int64_t m, int64_t n, int64_t k, const void *a, int64_t a_rs, int64_t a_cs,
                      const void *b, int64_t b_rs, int64_t b_cs, void *c, int64_t c_rs, int64_t c_cs, double beta) {
    if (m == 0 || n == 0) return TN_OK;
    tn_gemm_desc g = tn_gemm_desc_init(acc);
    g.m = m, g.n = n, g.k = k;
    g.a = a, g.a_rs = a_rs, g.a_cs = a_cs;
    g.b = b, g.b_rs = b_rs, g.b_cs = b_cs;
    g.c = c, g.c_rs = c_rs, g.c_cs = c_cs;
    g.beta = beta;
    size_t sb = tn_gemm_scratch_bytes(&g);
    void *scratch = NULL;
    if (sb && !(scratch = malloc(sb))) return tn_error(TN_ERR_NO_MEMORY, "out of memory allocating %zu bytes", sb);
    tn_status st = tn_gemm(&g, scratch, sb);
    free(scratch);
    return st;
}
