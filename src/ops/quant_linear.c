/* quant_linear.c — torchnative's own operators over GGUF-quantised weights (kernels/quant.h):
 *   aten::_tn_quant_linear(Tensor input, Tensor weight, int qtype) -> Tensor
 *       input (..., k) float32 times the block rows of weight (n, k/32 * block bytes)
 *       uint8, transposed: (..., n) float32. Backward w.r.t. input: formulas.def.
 *   aten::_tn_quant_dequantize(Tensor weight, int qtype) -> Tensor
 *       block rows (..., k/32 * block bytes) uint8 -> (..., k) float32 (the embedding's
 *       gathered rows, the backward's weight).
 * Declared in tools/codegen/own_operators.yaml (not upstream operators: the `_tn_`
 * prefix marks them); shape and argument checks here, loops in the kernels. */
#include "core/threadpool.h"
#include "kernels/quant.h"
#include "ops/dispatch.h"
#include "ops/graph.h"
#include "ops/shape.h"

/* Row bytes of a k-element row of qtype. */
static int64_t row_bytes(int qtype, int64_t k) { return k / TN_QK * tn_qtype_block_bytes(qtype); }

static tn_status check_weight(const char *op, const tn_tensor *w, int64_t qtype, int min_ndim) {
    if (!tn_qtype_name((int)qtype))
        return tn_error(TN_ERR_VALUE, "%s: unsupported quantisation type %lld (supported: 2 = q4_0, 3 = q4_1, 8 = q8_0)",
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
    return TN_OK;
}

tn_status tn_op__tn_quant_linear(const tn_value *args, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *w = args[1].u.t;
    int64_t qtype = args[2].u.i;
    TN_TRY(check_weight("_tn_quant_linear", w, qtype, 2));
    if (x->dtype != TN_DTYPE_FLOAT32)
        return tn_error(TN_ERR_RUNTIME, "_tn_quant_linear: expected float32 input, got %s", tn_dtype_infos[x->dtype].c10_name);
    if (x->ndim < 1) return tn_error(TN_ERR_RUNTIME, "_tn_quant_linear: input must have at least 1 dimension");
    int64_t k = x->sizes[x->ndim - 1], n = w->sizes[0];
    if (k % TN_QK || row_bytes((int)qtype, k) != w->sizes[1])
        return tn_error(TN_ERR_RUNTIME,
                        "_tn_quant_linear: input has %lld features but the %s weight's rows hold %lld (%lld bytes)",
                        (long long)k, tn_qtype_name((int)qtype), (long long)(w->sizes[1] / tn_qtype_block_bytes((int)qtype) * TN_QK),
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
        tn_q8x_block *scratch = NULL;
        int64_t blocks = tn_qmatmul_scratch_blocks(m, k);
        if (blocks > 0 && !(scratch = tn_thread_scratch(TN_SCRATCH_QUANT, (size_t)blocks * sizeof(tn_q8x_block))))
            st = tn_error(TN_ERR_NO_MEMORY, "_tn_quant_linear: out of memory for %lld activation blocks", (long long)blocks);
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
    int64_t sizes[TN_MAX_DIMS], rb = w->sizes[w->ndim - 1], k = rb / bb * TN_QK;
    for (int d = 0; d < w->ndim - 1; d++) sizes[d] = w->sizes[d];
    sizes[w->ndim - 1] = k;
    tn_tensor *y;
    TN_TRY(tn_graph_empty_result(w->ndim, sizes, NULL, TN_DTYPE_FLOAT32, tn_tensor_device(w), &y));
    rets[0] = tn_value_tensor(y);
    if (tn_tensor_is_meta(w)) return TN_OK;
    tn_tensor *wc;
    tn_status st = tn_tensor_contiguous(w, &wc);
    if (st != TN_OK) {
        tn_tensor_release(y);
        return st;
    }
    int64_t rows = rb ? tn_tensor_numel(wc) / rb : 0;
    tn_quant_dequantize((int)qtype, tn_tensor_data(wc), rb, rows, k, tn_tensor_data(y), k);
    tn_tensor_release(wc);
    return TN_OK;
}
