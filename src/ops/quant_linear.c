/* quant_linear.c — the operators over quantised weights (kernels/quant.h): torchnative's own
 * GGUF and 8da4w products, and upstream's aten::_weight_int8pack_mm.
 *   aten::_tn_quant_linear(Tensor input, Tensor weight, int qtype) -> Tensor
 *       input (..., k) float32 times the block rows of weight (n, k/QK * block bytes)
 *       uint8 (QK = 32, or 256 for the k-quants Q4_K / Q6_K), transposed: (..., n) float32.
 *       Backward w.r.t. input: formulas.def.
 *   aten::_tn_quant_dequantize(Tensor weight, int qtype) -> Tensor
 *       block rows (..., k/QK * block bytes) uint8 -> (..., k) float32 (the embedding's
 *       gathered rows, the backward's weight).
 *   aten::_tn_quant_repack(Tensor weight, int qtype) -> Tensor
 *       Q4_0 / Q4_1 / Q8_0 block rows into the 8-row interleaved layout (qtype 256 | qtype),
 *       the loader's one-time repack; aten::_tn_quant_fast_layout(int qtype) -> int says
 *       which layout this host's products prefer.
 *   aten::_tn_quant_linear_8da4w(Tensor input, Tensor weight, Tensor scales, int group_size) -> Tensor
 *       input (..., k) float32; weight (n, k/2) uint8 int4 quants in quant.h's chunk layout;
 *       scales (n, k/group_size) float32 or bfloat16; int8 per-token activations: (..., n) float32.
 *   aten::_tn_quant_i4_dequantize(Tensor weight, Tensor scales, int group_size) -> Tensor
 *       the same weight as (n, k) float32.
 *   aten::_tn_quant_i4_repack(Tensor weight, Tensor scales, int group_size) -> Tensor
 *       that weight and its scales in the 8da4w x8 layout (kernels/quant.h), (n, k/2 +
 *       4k/group_size) uint8: the one-time repack where _tn_quant_fast_layout(512) says 768;
 *   aten::_tn_quant_linear_8da4w_x8(Tensor input, Tensor weight, int group_size) -> Tensor
 *       the 8da4w product over it.
 *   aten::_weight_int8pack_mm(Tensor self, Tensor mat2, Tensor scales) -> Tensor
 *       upstream's: self (m, k) float32/bfloat16/float16, mat2 (n, k) int8, scales (n,) of
 *       self's dtype: (m, n) of self's dtype; upstream's checks and exception classes.
 *   aten::_convert_weight_to_int4pack_for_cpu(Tensor self, int innerKTiles) -> Tensor
 *   aten::_weight_int4pack_mm_for_cpu(Tensor self, Tensor mat2, int qGroupSize, Tensor qScaleAndZeros) -> Tensor
 *       upstream's tinygemm-style int4 weight: packing bytes equal to upstream's (quant.h),
 *       the product in float32 with zero points, as upstream's CPU kernel.
 *   aten::_dyn_quant_pack_4bit_weight / aten::_dyn_quant_matmul_4bit
 *       upstream's CPU fallback (no KleidiAI): a float32 buffer of weight bytes, scales and
 *       bias; asymmetric int8 per-token activations, int4 weights (quant.h).
 * Declared in tools/codegen/own_operators.yaml (not upstream operators: the `_tn_`
 * prefix marks them); shape and argument checks here, loops in the kernels. */
#include <string.h>

#include "core/threadpool.h"
#include "kernels/quant.h"
#include "ops/dispatch.h"
#include "ops/elementwise_common.h"
#include "ops/graph.h"
#include "ops/nn_backward_internal.h"
#include "ops/shape.h"

/* Row bytes of a k-element row of qtype. */
static int64_t row_bytes(int qtype, int64_t k) { return k / tn_qtype_block_elems(qtype) * tn_qtype_block_bytes(qtype); }

static tn_status check_weight(const char *op, const tn_tensor *w, int64_t qtype, int min_ndim) {
    if (!tn_qtype_name((int)qtype))
        return tn_error(TN_ERR_VALUE, "%s: unsupported quantisation type %lld (supported: 2 = q4_0, 3 = q4_1, 8 = q8_0, 12 = q4_k, "
                        "14 = q6_k, and 258, 259, 264: q4_0, q4_1, q8_0 in the 8-row interleaved layout)",
                        op, (long long)qtype);
    if (w->dtype != TN_DTYPE_UINT8)
        return tn_error(TN_ERR_RUNTIME, "%s: expected the weight's blocks as a uint8 tensor, got %s", op,
                        tn_dtype_infos[w->dtype].c10_name);
    if (w->ndim < min_ndim || (min_ndim == 2 && w->ndim != 2))
        return tn_error(TN_ERR_RUNTIME, "%s: expected a %s weight of block rows, got %d dims", op,
                        min_ndim == 2 ? "2-D" : "at least 1-D", w->ndim);
    int bb = tn_qtype_block_bytes((int)qtype);
    if (w->sizes[w->ndim - 1] % bb)
        return tn_error(TN_ERR_RUNTIME, "%s: a weight row of %lld bytes is not a whole number of %s blocks (%d bytes)", op,
                        (long long)w->sizes[w->ndim - 1], tn_qtype_name((int)qtype), bb);
    if ((qtype & TN_QTYPE_X8) && (w->ndim != 2 || w->sizes[0] % 8))
        return tn_error(TN_ERR_RUNTIME, "%s: a %s weight is 2-D with a multiple of 8 rows (groups of 8 interleaved rows), "
                                        "got %d dims and %lld rows", op, tn_qtype_name((int)qtype), w->ndim,
                        (long long)w->sizes[0]);
    return TN_OK;
}

/* A contiguous view (or copy) of w for a kernel; on failure the result y already made
 * is released. */
static tn_status contiguous_or_release(tn_tensor *w, tn_tensor *y, tn_tensor **wc) {
    tn_status st = tn_tensor_contiguous(w, wc);
    if (st != TN_OK) tn_tensor_release(y);
    return st;
}

tn_status tn_op__tn_quant_linear(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *w = args[1].u.t;
    int64_t qtype = args[2].u.i;
    TN_TRY(check_weight("_tn_quant_linear", w, qtype, 2));
    if (x->dtype != TN_DTYPE_FLOAT32)
        return tn_error(TN_ERR_RUNTIME, "_tn_quant_linear: expected float32 input, got %s", tn_dtype_infos[x->dtype].c10_name);
    if (x->ndim < 1) return tn_error(TN_ERR_RUNTIME, "_tn_quant_linear: input must have at least 1 dimension");
    int64_t k = x->sizes[x->ndim - 1], n = w->sizes[0];
    int qk = tn_qtype_block_elems((int)qtype);
    if (k % qk || row_bytes((int)qtype, k) != w->sizes[1])
        return tn_error(TN_ERR_RUNTIME,
                        "_tn_quant_linear: input has %lld features but the %s weight's rows hold %lld (%lld bytes)",
                        (long long)k, tn_qtype_name((int)qtype), (long long)(w->sizes[1] / tn_qtype_block_bytes((int)qtype) * qk),
                        (long long)w->sizes[1]);
    int64_t sizes[TN_MAX_DIMS];
    for (int d = 0; d < x->ndim - 1; d++) sizes[d] = x->sizes[d];
    sizes[x->ndim - 1] = n;
    tn_tensor *y;
    TN_TRY(tn_graph_empty_result(x->ndim, sizes, NULL, TN_DTYPE_FLOAT32, tn_tensor_device(x), &y));
    rets[0] = tn_value_tensor(y);
    if (tn_tensor_is_meta(x) || tn_tensor_is_meta(w)) return TN_OK;
    int64_t m = 1; /* rows of x (k == 0 still gives every row: zeros) */
    for (int d = 0; d < x->ndim - 1; d++) m *= x->sizes[d];
    tn_tensor *xc = NULL, *wc = NULL;
    tn_status st = tn_tensor_contiguous(x, &xc);
    if (st == TN_OK) st = w->strides[1] == 1 ? (tn_tensor_retain(w), wc = w, TN_OK) : tn_tensor_contiguous(w, &wc);
    if (st == TN_OK) {
        void *scratch = NULL;
        size_t bytes = tn_qmatmul_scratch_bytes((int)qtype, m, k);
        if (bytes > 0 && !(scratch = tn_thread_scratch(TN_SCRATCH_QUANT, bytes)))
            st = tn_error(TN_ERR_NO_MEMORY, "_tn_quant_linear: out of memory for %lld activation rows", (long long)m);
        if (st == TN_OK) {
            tn_qmatmul_desc d = {(int)qtype, m, n, k, tn_tensor_data(xc), k, tn_tensor_data(wc), wc->strides[0],
                                 tn_tensor_data(y), n, scratch};
            tn_qmatmul(&d);
        }
    }
    if (xc) tn_tensor_release(xc);
    if (wc) tn_tensor_release(wc);
    if (st != TN_OK) tn_tensor_release(y);
    return st;
}

tn_status tn_op__tn_quant_dequantize(const tn_value *args, tn_value *rets) {
    tn_tensor *w = args[0].u.t;
    int64_t qtype = args[1].u.i;
    TN_TRY(check_weight("_tn_quant_dequantize", w, qtype, 1));
    int bb = tn_qtype_block_bytes((int)qtype);
    int64_t sizes[TN_MAX_DIMS], rb = w->sizes[w->ndim - 1], k = rb / bb * tn_qtype_block_elems((int)qtype);
    for (int d = 0; d < w->ndim - 1; d++) sizes[d] = w->sizes[d];
    sizes[w->ndim - 1] = k;
    tn_tensor *y;
    TN_TRY(tn_graph_empty_result(w->ndim, sizes, NULL, TN_DTYPE_FLOAT32, tn_tensor_device(w), &y));
    rets[0] = tn_value_tensor(y);
    if (tn_tensor_is_meta(w)) return TN_OK;
    tn_tensor *wc;
    TN_TRY(contiguous_or_release(w, y, &wc));
    int64_t rows = rb ? tn_tensor_numel(wc) / rb : 0;
    tn_quant_dequantize((int)qtype, tn_tensor_data(wc), rb, rows, k, tn_tensor_data(y), k);
    tn_tensor_release(wc);
    return TN_OK;
}

/* aten::_tn_quant_repack(Tensor weight, int qtype) -> Tensor: Q4_0 / Q4_1 / Q8_0 block rows
 * (n % 8 == 0) rewritten into the 8-row interleaved layout (kernels/quant.h), same shape;
 * its qtype is TN_QTYPE_X8 | qtype. */
tn_status tn_op__tn_quant_repack(const tn_value *args, tn_value *rets) {
    tn_tensor *w = args[0].u.t;
    int64_t qtype = args[1].u.i;
    TN_TRY(check_weight("_tn_quant_repack", w, qtype, 2));
    if (qtype != TN_QTYPE_Q4_0 && qtype != TN_QTYPE_Q4_1 && qtype != TN_QTYPE_Q8_0)
        return tn_error(TN_ERR_VALUE, "_tn_quant_repack: the 8-row interleaved layout exists for q4_0, q4_1 and q8_0, "
                                      "not %s", tn_qtype_name((int)qtype));
    if (w->sizes[0] % 8)
        return tn_error(TN_ERR_RUNTIME, "_tn_quant_repack: the weight has %lld rows, not a multiple of 8",
                        (long long)w->sizes[0]);
    tn_tensor *y;
    TN_TRY(tn_graph_empty_result(2, w->sizes, NULL, TN_DTYPE_UINT8, tn_tensor_device(w), &y));
    rets[0] = tn_value_tensor(y);
    if (tn_tensor_is_meta(w)) return TN_OK;
    tn_tensor *wc;
    TN_TRY(contiguous_or_release(w, y, &wc));
    tn_quant_repack_x8((int)qtype, tn_tensor_data(wc), w->sizes[1], w->sizes[0],
                       w->sizes[1] / tn_qtype_block_bytes((int)qtype), tn_tensor_data(y));
    tn_tensor_release(wc);
    return TN_OK;
}

/* aten::_tn_quant_fast_layout(int qtype) -> int: the qtype whose layout this host's
 * products run fastest from (kernels/quant.h tn_quant_fast_layout); the loader repacks
 * into it when it differs. */
tn_status tn_op__tn_quant_fast_layout(const tn_value *args, tn_value *rets) {
    int64_t qtype = args[0].u.i;
    if (!tn_qtype_name((int)qtype) && qtype != TN_QTYPE_I4)
        return tn_error(TN_ERR_VALUE, "_tn_quant_fast_layout: unsupported quantisation type %lld", (long long)qtype);
    rets[0] = tn_value_int(tn_quant_fast_layout((int)qtype));
    return TN_OK;
}

/* ---- 8da4w ------------------------------------------------------------------------------ */
/* Checks an int4 weight (n, k/2) uint8 and its scales (n, k/g) float32/bfloat16 for a
 * k-element row (k < 0: taken from the weight) and returns them as contiguous uint8 and
 * float32 tensors (new references) and k. */
static tn_status i4_operands(const char *op, tn_tensor *w, tn_tensor *sc, int64_t g, int64_t *k, tn_tensor **wc,
                             tn_tensor **sf) {
    if (w->dtype != TN_DTYPE_UINT8 || w->ndim != 2)
        return tn_error(TN_ERR_RUNTIME, "%s: expected the int4 weight as a 2-D uint8 tensor (n, k/2), got %d-D %s", op,
                        w->ndim, tn_dtype_infos[w->dtype].c10_name);
    if (g <= 0 || g % TN_QK)
        return tn_error(TN_ERR_RUNTIME, "%s: group_size must be a positive multiple of %d, got %lld", op, TN_QK, (long long)g);
    if (*k < 0) *k = w->sizes[1] * 2;
    if (*k % g || w->sizes[1] * 2 != *k)
        return tn_error(TN_ERR_RUNTIME, "%s: the weight's rows hold %lld int4 values, expected %lld in groups of %lld", op,
                        (long long)(w->sizes[1] * 2), (long long)*k, (long long)g);
    if ((sc->dtype != TN_DTYPE_FLOAT32 && sc->dtype != TN_DTYPE_BFLOAT16) || sc->ndim != 2 || sc->sizes[0] != w->sizes[0] ||
        sc->sizes[1] != *k / g)
        return tn_error(TN_ERR_RUNTIME, "%s: expected scales (%lld, %lld) float32 or bfloat16, got %d-D %s", op,
                        (long long)w->sizes[0], (long long)(*k / g), sc->ndim, tn_dtype_infos[sc->dtype].c10_name);
    *wc = *sf = NULL;
    tn_tensor *s32 = NULL;
    tn_status st = tn_tensor_contiguous(w, wc);
    if (st == TN_OK) st = tn_ew_to_dtype(sc, TN_DTYPE_FLOAT32, &s32);
    if (st == TN_OK) st = tn_tensor_contiguous(s32, sf);
    if (s32) tn_tensor_release(s32);
    if (st != TN_OK && *wc) tn_tensor_release(*wc), *wc = NULL;
    return st;
}

/* The 8da4w product of x (float32, checked) with n rows of the contiguous weight wc (plain:
 * with the float32 scales sf; packed: sf NULL) into a new (..., n) result y. */
static tn_status i4_product(const char *op, tn_tensor *x, tn_tensor *wc, tn_tensor *sf, int64_t n, int64_t k, int64_t g,
                            tn_tensor **y) {
    int64_t sizes[TN_MAX_DIMS], m = 1;
    for (int d = 0; d < x->ndim - 1; d++) sizes[d] = x->sizes[d], m *= x->sizes[d];
    sizes[x->ndim - 1] = n;
    tn_tensor *xc = NULL;
    TN_TRY(tn_graph_empty_result(x->ndim, sizes, NULL, TN_DTYPE_FLOAT32, tn_tensor_device(x), y));
    tn_status st = TN_OK;
    if (!tn_tensor_is_meta(x) && !tn_tensor_is_meta(wc)) {
        st = tn_tensor_contiguous(x, &xc);
        size_t bytes = tn_i4matmul_scratch_bytes(m, k);
        void *scratch = NULL;
        if (st == TN_OK && m > 0 && !(scratch = tn_thread_scratch(TN_SCRATCH_QUANT, bytes)))
            st = tn_error(TN_ERR_NO_MEMORY, "%s: out of memory for %lld activation rows", op, (long long)m);
        if (st == TN_OK) {
            tn_i4matmul_desc d = {m, n, k, g, tn_tensor_data(xc), k, tn_tensor_data(wc), k / 2, sf ? tn_tensor_data(sf) : NULL,
                                  k / g, tn_tensor_data(*y), n, scratch, sf == NULL};
            tn_i4matmul(&d);
        }
    }
    if (xc) tn_tensor_release(xc);
    if (st != TN_OK) tn_tensor_release(*y), *y = NULL;
    return st;
}

static tn_status check_i4_input(const char *op, const tn_tensor *x) {
    if (x->dtype != TN_DTYPE_FLOAT32)
        return tn_error(TN_ERR_RUNTIME, "%s: expected float32 input, got %s", op, tn_dtype_infos[x->dtype].c10_name);
    if (x->ndim < 1) return tn_error(TN_ERR_RUNTIME, "%s: input must have at least 1 dimension", op);
    return TN_OK;
}

tn_status tn_op__tn_quant_linear_8da4w(const tn_value *args, tn_value *rets) {
    static const char op[] = "_tn_quant_linear_8da4w";
    tn_tensor *x = args[0].u.t, *w = args[1].u.t, *sc = args[2].u.t, *wc, *sf, *y;
    int64_t g = args[3].u.i;
    TN_TRY(check_i4_input(op, x));
    int64_t k = x->sizes[x->ndim - 1], n = w->ndim == 2 ? w->sizes[0] : 0;
    TN_TRY(i4_operands(op, w, sc, g, &k, &wc, &sf));
    tn_status st = i4_product(op, x, wc, sf, n, k, g, &y);
    tn_tensor_release(wc), tn_tensor_release(sf);
    if (st == TN_OK) rets[0] = tn_value_tensor(y);
    return st;
}

/* aten::_tn_quant_i4_repack(Tensor weight, Tensor scales, int group_size) -> Tensor: the
 * weight and scales of _tn_quant_linear_8da4w packed into kernels/quant.h's 8da4w x8 layout,
 * (n, k/2 + 4k/group_size) uint8. */
tn_status tn_op__tn_quant_i4_repack(const tn_value *args, tn_value *rets) {
    static const char op[] = "_tn_quant_i4_repack";
    tn_tensor *w = args[0].u.t, *sc = args[1].u.t, *wc, *sf, *y = NULL;
    int64_t g = args[2].u.i, k = -1;
    TN_TRY(i4_operands(op, w, sc, g, &k, &wc, &sf));
    int64_t sizes[2] = {w->sizes[0], tn_quant_i4x8_row_bytes(k, g)};
    tn_status st = tn_graph_empty_result(2, sizes, NULL, TN_DTYPE_UINT8, tn_tensor_device(w), &y);
    if (st == TN_OK && !tn_tensor_is_meta(w))
        tn_quant_i4_repack_x8(tn_tensor_data(wc), k / 2, tn_tensor_data(sf), k / g, sizes[0], k, g, tn_tensor_data(y));
    tn_tensor_release(wc), tn_tensor_release(sf);
    if (st != TN_OK) return st;
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* aten::_tn_quant_linear_8da4w_x8(Tensor input, Tensor weight, int group_size) -> Tensor:
 * _tn_quant_linear_8da4w over the packed weight _tn_quant_i4_repack made. */
tn_status tn_op__tn_quant_linear_8da4w_x8(const tn_value *args, tn_value *rets) {
    static const char op[] = "_tn_quant_linear_8da4w_x8";
    tn_tensor *x = args[0].u.t, *w = args[1].u.t, *wc, *y;
    int64_t g = args[2].u.i;
    TN_TRY(check_i4_input(op, x));
    int64_t k = x->sizes[x->ndim - 1];
    if (w->dtype != TN_DTYPE_UINT8 || w->ndim != 2)
        return tn_error(TN_ERR_RUNTIME, "%s: expected the packed weight as a 2-D uint8 tensor, got %d-D %s", op, w->ndim,
                        tn_dtype_infos[w->dtype].c10_name);
    if (g <= 0 || g % TN_QK)
        return tn_error(TN_ERR_RUNTIME, "%s: group_size must be a positive multiple of %d, got %lld", op, TN_QK, (long long)g);
    if (k % g)
        return tn_error(TN_ERR_RUNTIME, "%s: input has %lld features, not a multiple of group_size %lld", op, (long long)k,
                        (long long)g);
    if (tn_quant_i4x8_row_bytes(k, g) != w->sizes[1])
        return tn_error(TN_ERR_RUNTIME, "%s: input has %lld features: packed rows of %lld bytes expected (group_size "
                        "%lld), got %lld", op, (long long)k, (long long)tn_quant_i4x8_row_bytes(k, g), (long long)g,
                        (long long)w->sizes[1]);
    TN_TRY(tn_tensor_contiguous(w, &wc));
    tn_status st = i4_product(op, x, wc, NULL, w->sizes[0], k, g, &y);
    tn_tensor_release(wc);
    if (st == TN_OK) rets[0] = tn_value_tensor(y);
    return st;
}

tn_status tn_op__tn_quant_i4_dequantize(const tn_value *args, tn_value *rets) {
    tn_tensor *w = args[0].u.t, *sc = args[1].u.t, *wc, *sf, *y = NULL;
    int64_t g = args[2].u.i, k = -1;
    TN_TRY(i4_operands("_tn_quant_i4_dequantize", w, sc, g, &k, &wc, &sf));
    int64_t sizes[2] = {w->sizes[0], k};
    tn_status st = tn_graph_empty_result(2, sizes, NULL, TN_DTYPE_FLOAT32, tn_tensor_device(w), &y);
    if (st == TN_OK && !tn_tensor_is_meta(w))
        tn_quant_i4_dequantize(tn_tensor_data(wc), k / 2, tn_tensor_data(sf), k / g, sizes[0], k, g, tn_tensor_data(y), k);
    tn_tensor_release(wc), tn_tensor_release(sf);
    if (st != TN_OK) return st;
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* ---- upstream's int8 weight-only product ------------------------------------------------ */
tn_status tn_op__weight_int8pack_mm(const tn_value *args, tn_value *rets) {
    static const char op[] = "_weight_int8pack_mm_cpu";
    tn_tensor *a = args[0].u.t, *b = args[1].u.t, *sc = args[2].u.t;
    /* upstream reads A.size(1) and B.size(0) before any check */
    if (a->ndim < 2 || b->ndim < 1)
        return tn_error(TN_ERR_INDEX, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
    tn_dtype dt = a->dtype;
    if (dt != TN_DTYPE_FLOAT32 && dt != TN_DTYPE_BFLOAT16 && dt != TN_DTYPE_FLOAT16)
        return tn_error(TN_ERR_RUNTIME, "%s : expect A to be either 32-bit or 16-bit float tensor.", op);
    if (a->ndim != 2) return tn_error(TN_ERR_RUNTIME, "%s : expect A to be 2D tensor.", op);
    if (a->strides[1] != 1)
        return tn_error(TN_ERR_RUNTIME, "%s : A must be contiguous on the last dimension.", op);
    if (b->dtype != TN_DTYPE_INT8) return tn_error(TN_ERR_RUNTIME, "%s : expect B to be int8 tensor.", op);
    if (!tn_tensor_is_contiguous(b)) return tn_error(TN_ERR_RUNTIME, "%s : expect B to be contiguous.", op);
    if (b->ndim < 2) return tn_error(TN_ERR_INDEX, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
    int64_t m = a->sizes[0], k = a->sizes[1], n = b->sizes[0];
    if (b->sizes[1] != k) return tn_error(TN_ERR_RUNTIME, "%s : expect B.size(1) == %lld", op, (long long)k);
    if (sc->ndim != 1 || sc->sizes[0] != n)
        return tn_error(TN_ERR_RUNTIME, "%s : expect scales to be 1d tensor with size %lld", op, (long long)n);
    if (sc->dtype != dt)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_dtype_infos[dt].c10_name,
                        tn_dtype_infos[sc->dtype].c10_name);
    int64_t sizes[2] = {m, n};
    tn_tensor *y = NULL, *a32 = NULL, *ac = NULL, *s32 = NULL, *sc32 = NULL, *y32 = NULL;
    tn_status st = tn_graph_empty_result(2, sizes, NULL, dt, tn_tensor_device(a), &y);
    if (st == TN_OK && !tn_tensor_is_meta(a) && !tn_tensor_is_meta(b)) {
        /* 16-bit inputs are widened to float32 (as upstream's kernel does per element), the
         * float32 result rounded once into the output's dtype */
        st = tn_ew_to_dtype(a, TN_DTYPE_FLOAT32, &a32);
        if (st == TN_OK) st = tn_tensor_contiguous(a32, &ac);
        if (st == TN_OK) st = tn_ew_to_dtype(sc, TN_DTYPE_FLOAT32, &s32);
        if (st == TN_OK) st = tn_tensor_contiguous(s32, &sc32);
        if (st == TN_OK) st = dt == TN_DTYPE_FLOAT32 ? (tn_tensor_retain(y), y32 = y, TN_OK)
                                                     : tn_tensor_empty(2, sizes, TN_DTYPE_FLOAT32, tn_tensor_device(a), &y32);
        if (st == TN_OK) {
            tn_w8matmul_desc d = {m, n, k, tn_tensor_data(ac), k, tn_tensor_data(b), k, tn_tensor_data(sc32),
                                  tn_tensor_data(y32), n};
            tn_w8matmul(&d);
            if (y32 != y) {
                tn_tensor *conv = NULL;
                st = tn_ew_to_dtype(y32, dt, &conv);
                if (st == TN_OK) memcpy(tn_tensor_data(y), tn_tensor_data(conv), (size_t)(m * n) * tn_dtype_infos[dt].itemsize);
                if (conv) tn_tensor_release(conv);
            }
        }
    }
    tn_tensor *tmp[] = {a32, ac, s32, sc32, y32};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++)
        if (tmp[i]) tn_tensor_release(tmp[i]);
    if (st != TN_OK) {
        if (y) tn_tensor_release(y);
        return st;
    }
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* ---- upstream's CPU int4 weight (tinygemm layout, kernels/quant.h) ---------------------- */
tn_status tn_op__convert_weight_to_int4pack_for_cpu(const tn_value *args, tn_value *rets) {
    static const char op[] = "_convert_weight_to_int4pack_cpu";
    tn_tensor *w = args[0].u.t, *wc = NULL, *y = NULL;
    if (w->dtype != TN_DTYPE_INT32) return tn_error(TN_ERR_RUNTIME, "%s : expect weight to be kInt.", op);
    if (w->ndim != 2) return tn_error(TN_ERR_RUNTIME, "%s : expect weight to be 2D tensor.", op);
    int64_t n = w->sizes[0], k = w->sizes[1];
    if (n % 16) return tn_error(TN_ERR_RUNTIME, "%s : expect N to be dividable by 16", op);
    if (k % 2) return tn_error(TN_ERR_RUNTIME, "_convert_weight_to_int4pack: expect K to be dividable by 2");
    int64_t sizes[2] = {n, k / 2};
    TN_TRY(tn_graph_empty_result(2, sizes, NULL, TN_DTYPE_UINT8, tn_tensor_device(w), &y));
    if (!tn_tensor_is_meta(w)) {
        tn_status st = tn_tensor_contiguous(w, &wc);
        if (st != TN_OK) {
            tn_tensor_release(y);
            return st;
        }
        tn_quant_int4pack(tn_tensor_data(wc), n, k, tn_tensor_data(y));
        tn_tensor_release(wc);
    }
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* y = A · Wᵀ in float32 with W dequantised from upstream's packing (quant.h), the result in
 * A's dtype: upstream's CPU kernel computes in float as well (no activation rounding). */
tn_status tn_op__weight_int4pack_mm_for_cpu(const tn_value *args, tn_value *rets) {
    static const char op[] = "_weight_int4pack_mm_cpu";
    tn_tensor *a = args[0].u.t, *b = args[1].u.t, *sz = args[3].u.t;
    int64_t g = args[2].u.i;
    if (a->ndim < 2 || b->ndim < 1)
        return tn_error(TN_ERR_INDEX, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
    tn_dtype dt = a->dtype;
    if (dt != TN_DTYPE_FLOAT32 && dt != TN_DTYPE_BFLOAT16 && dt != TN_DTYPE_FLOAT16)
        return tn_error(TN_ERR_RUNTIME, "%s : expect A to be either 32-bit or 16-bit float tensor.", op);
    if (!tn_tensor_is_contiguous(a)) return tn_error(TN_ERR_RUNTIME, "%s : expect A to be contiguous.", op);
    if (a->ndim != 2) return tn_error(TN_ERR_RUNTIME, "%s : expect A to be 2D tensor.", op);
    if (b->dtype != TN_DTYPE_UINT8) return tn_error(TN_ERR_RUNTIME, "%s : expect B to be uint8 tensor.", op);
    if (!tn_tensor_is_contiguous(b)) return tn_error(TN_ERR_RUNTIME, "%s : expect B to be contiguous.", op);
    if (b->ndim < 2) return tn_error(TN_ERR_INDEX, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
    int64_t m = a->sizes[0], k = a->sizes[1], n = b->sizes[0];
    if (b->sizes[1] * 2 != k) return tn_error(TN_ERR_RUNTIME, "%s : expect B.size(1) to be K/2, got %lld", op, (long long)b->sizes[1]);
    if (g != 32 && g != 64 && g != 128 && g != 256)
        return tn_error(TN_ERR_RUNTIME, "%s: expect qGroupSize to be 32, 64, 128 or 256, got %lld", op, (long long)g);
    if (k % g)
        return tn_error(TN_ERR_RUNTIME, "%s: expect K to be divisible by qGroupSize, got K:%lld, qGroupSize:%lld", op,
                        (long long)k, (long long)g);
    if (sz->ndim != 3 || sz->sizes[1] != n || sz->sizes[2] != 2)
        return tn_error(TN_ERR_RUNTIME, "%s: expect qScaleAndZeros to be 3d tensor with sizes [:, %lld, 2]", op, (long long)n);
    /* upstream reads rows k/g of qScaleAndZeros without checking there are that many */
    if (sz->sizes[0] < k / g)
        return tn_error(TN_ERR_RUNTIME, "%s: qScaleAndZeros has %lld groups, K/qGroupSize is %lld", op,
                        (long long)sz->sizes[0], (long long)(k / g));
    if (b->ndim != 2) return tn_error(TN_ERR_RUNTIME, "%s : expect B to be 2D tensor.", op);
    if (sz->dtype != dt)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_dtype_infos[dt].c10_name,
                        tn_dtype_infos[sz->dtype].c10_name);
    int64_t sizes[2] = {m, n}, wsizes[2] = {n, k};
    tn_tensor *y = NULL, *a32 = NULL, *s32 = NULL, *w32 = NULL, *y32 = NULL;
    tn_status st = tn_graph_empty_result(2, sizes, NULL, dt, tn_tensor_device(a), &y);
    if (st == TN_OK && !tn_tensor_is_meta(a) && !tn_tensor_is_meta(b)) {
        st = tn_nnb_acc_tensor(a, TN_DTYPE_FLOAT32, &a32);
        if (st == TN_OK) st = tn_nnb_acc_tensor(sz, TN_DTYPE_FLOAT32, &s32);
        if (st == TN_OK) st = tn_tensor_empty(2, wsizes, TN_DTYPE_FLOAT32, tn_tensor_device(a), &w32);
        if (st == TN_OK) st = dt == TN_DTYPE_FLOAT32 ? (tn_tensor_retain(y), y32 = y, TN_OK)
                                                     : tn_tensor_empty(2, sizes, TN_DTYPE_FLOAT32, tn_tensor_device(a), &y32);
        if (st == TN_OK) {
            tn_quant_int4pack_dequantize(tn_tensor_data(b), n, k, g, tn_tensor_data(s32), tn_tensor_data(w32));
            st = tn_nnb_gemm(TN_DTYPE_FLOAT32, m, n, k, tn_tensor_data(a32), k, 1, tn_tensor_data(w32), 1, k,
                             tn_tensor_data(y32), n, 1, 0.0);
        }
        if (st == TN_OK && y32 != y) {
            tn_tensor *conv = NULL;
            st = tn_ew_to_dtype(y32, dt, &conv);
            if (st == TN_OK) memcpy(tn_tensor_data(y), tn_tensor_data(conv), (size_t)(m * n) * tn_dtype_infos[dt].itemsize);
            if (conv) tn_tensor_release(conv);
        }
    }
    tn_tensor *tmp[] = {a32, s32, w32, y32};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++)
        if (tmp[i]) tn_tensor_release(tmp[i]);
    if (st != TN_OK) {
        if (y) tn_tensor_release(y);
        return st;
    }
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

/* ---- upstream's _dyn_quant_* without KleidiAI (kernels/quant.h) -------------------------
 * The packed weight is upstream's fallback buffer: float32 [weight bytes (n*k/2), scales
 * (n*k/g), bias (n) when given]. Upstream does not check that the pieces have those sizes
 * (it computes from whatever it is given); here a size that does not fit is a RuntimeError. */
/* A contiguous float32 copy of t (any real dtype, integers included); new reference. */
static tn_status f32_contiguous(tn_tensor *t, tn_tensor **out) {
    tn_tensor *c = NULL;
    TN_TRY(tn_ew_to_dtype(t, TN_DTYPE_FLOAT32, &c));
    tn_status st = tn_tensor_contiguous(c, out);
    tn_tensor_release(c);
    return st;
}

tn_status tn_op__dyn_quant_pack_4bit_weight(const tn_value *args, tn_value *rets) {
    static const char op[] = "_dyn_quant_pack_4bit_weight_cpu";
    tn_tensor *w = args[0].u.t, *sc = args[1].u.t, *bias = args[2].tag == TN_V_TENSOR ? args[2].u.t : NULL;
    int64_t g = args[3].u.i, k = args[4].u.i, n = args[5].u.i;
    if (w->dtype != TN_DTYPE_UINT8) return tn_error(TN_ERR_RUNTIME, "%s : expect weight to be kByte.", op);
    if (g <= 0 || (g % 32 && g != k) || k % g)
        return tn_error(TN_ERR_RUNTIME, "%s: Group size should be multiple of 32, in_features [%lld]. Provided %lld", op,
                        (long long)k, (long long)g);
    if (n < 0 || k % 2 || tn_tensor_numel(w) != n * k / 2 || tn_tensor_numel(sc) != n * (k / g) ||
        (bias && tn_tensor_numel(bias) != n))
        return tn_error(TN_ERR_RUNTIME, "%s: expected weights of %lld bytes, %lld scales and %s for in_features %lld, "
                        "out_features %lld, block_size %lld", op, (long long)(n * k / 2), (long long)(n * (k / g)),
                        bias ? "a bias of out_features" : "no bias", (long long)k, (long long)n, (long long)g);
    int64_t nw = n * k / 2, ns = n * (k / g), size = nw + ns + (bias ? n : 0);
    tn_tensor *y = NULL, *parts[3] = {NULL, NULL, NULL};
    TN_TRY(tn_graph_empty_result(1, &size, NULL, TN_DTYPE_FLOAT32, tn_tensor_device(w), &y));
    tn_status st = TN_OK;
    if (!tn_tensor_is_meta(w)) {
        st = f32_contiguous(w, &parts[0]);
        if (st == TN_OK) st = f32_contiguous(sc, &parts[1]);
        if (st == TN_OK && bias) st = f32_contiguous(bias, &parts[2]);
        if (st == TN_OK) {
            float *o = tn_tensor_data(y);
            memcpy(o, tn_tensor_data(parts[0]), (size_t)nw * sizeof(float));
            memcpy(o + nw, tn_tensor_data(parts[1]), (size_t)ns * sizeof(float));
            if (bias) memcpy(o + nw + ns, tn_tensor_data(parts[2]), (size_t)n * sizeof(float));
        }
    }
    for (int i = 0; i < 3; i++)
        if (parts[i]) tn_tensor_release(parts[i]);
    if (st != TN_OK) {
        tn_tensor_release(y);
        return st;
    }
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}

tn_status tn_op__dyn_quant_matmul_4bit(const tn_value *args, tn_value *rets) {
    static const char op[] = "_dyn_quant_matmul_4bit_cpu";
    tn_tensor *x = args[0].u.t, *p = args[1].u.t;
    int64_t g = args[2].u.i, k = args[3].u.i, n = args[4].u.i;
    if (x->dtype != TN_DTYPE_FLOAT32)
        return tn_error(TN_ERR_RUNTIME, "%s : expect input to be float32 or bfloat16 tensor.", op);
    if (g <= 0 || k <= 0 || n < 0 || k % g || k % 2)
        return tn_error(TN_ERR_RUNTIME, "%s: block_size %lld does not divide in_features %lld", op, (long long)g, (long long)k);
    int64_t nw = n * k / 2, ns = n * (k / g), total = tn_tensor_numel(p);
    bool has_bias = total == nw + ns + n;
    if (p->dtype != TN_DTYPE_FLOAT32 || (!has_bias && total != nw + ns))
        return tn_error(TN_ERR_RUNTIME, "Expected bias length to match output dimension");
    if (x->ndim != 2 || x->sizes[1] != k)
        return tn_error(TN_ERR_RUNTIME, "%s: expected input (M, %lld), got %d-D with %lld features", op, (long long)k,
                        x->ndim, (long long)(x->ndim ? x->sizes[x->ndim - 1] : 0));
    int64_t m = x->sizes[0], sizes[2] = {m, n}, wsizes[2] = {n, k};
    tn_tensor *y = NULL, *xc = NULL, *pc = NULL, *xq = NULL, *w32 = NULL;
    tn_status st = tn_graph_empty_result(2, sizes, NULL, TN_DTYPE_FLOAT32, tn_tensor_device(x), &y);
    if (st == TN_OK && !tn_tensor_is_meta(x) && !tn_tensor_is_meta(p)) {
        st = tn_tensor_contiguous(x, &xc);
        if (st == TN_OK) st = tn_tensor_contiguous(p, &pc);
        if (st == TN_OK) st = tn_tensor_empty(2, x->sizes, TN_DTYPE_FLOAT32, tn_tensor_device(x), &xq);
        if (st == TN_OK) st = tn_tensor_empty(2, wsizes, TN_DTYPE_FLOAT32, tn_tensor_device(x), &w32);
        if (st == TN_OK) {
            const float *pd = tn_tensor_data(pc), *xd = tn_tensor_data(xc);
            float *q = tn_tensor_data(xq), *yd = tn_tensor_data(y);
            for (int64_t i = 0; i < m; i++) tn_quant_dyn4_activation_row(xd + i * k, k, q + i * k);
            tn_quant_dyn4_dequantize(pd, pd + nw, n, k, g, tn_tensor_data(w32));
            st = tn_nnb_gemm(TN_DTYPE_FLOAT32, m, n, k, q, k, 1, tn_tensor_data(w32), 1, k, yd, n, 1, 0.0);
            if (st == TN_OK && has_bias)
                for (int64_t i = 0; i < m; i++)
                    for (int64_t r = 0; r < n; r++) yd[i * n + r] += pd[nw + ns + r];
        }
    }
    tn_tensor *tmp[] = {xc, pc, xq, w32};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++)
        if (tmp[i]) tn_tensor_release(tmp[i]);
    if (st != TN_OK) {
        if (y) tn_tensor_release(y);
        return st;
    }
    rets[0] = tn_value_tensor(y);
    return TN_OK;
}
