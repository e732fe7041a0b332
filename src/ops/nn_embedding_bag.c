/* nn_embedding_bag.c — aten::embedding_bag (both overloads) and its kernels _embedding_bag /
 * _embedding_bag_forward_only on CPU: rows of weight gathered by indices and reduced per bag
 * (sum, mean or max; bags start at offsets), with per-sample weights and padding_idx, and
 * the bookkeeping tensors (offset2bag, bag_size, max_indices) shaped as upstream returns them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "ops/composite_internal.h"
#include "ops/nn_internal.h"
#include "ops/reduce.h"

enum { BAG_SUM = 0, BAG_MEAN = 1, BAG_MAX = 2 };

/* Element i of a 1-D int32 / int64 tensor at its stride. */
static int64_t idx_at(const tn_tensor *t, int64_t i) {
    int64_t off = t->offset + i * t->strides[0];
    return t->dtype == TN_DTYPE_INT32 ? ((const int32_t *)t->storage->data)[off] : ((const int64_t *)t->storage->data)[off];
}

/* Element `off` of t's storage / element i of t's data, through reduce.h's one element
 * accessor pair (float, double, half, bfloat16). */
static double load(const tn_tensor *t, int64_t off) {
    return tn_rd_get((const char *)t->storage->data + off * tn_dtype_itemsize(t->dtype), t->dtype);
}

static void store(tn_tensor *t, int64_t i, double v) {
    tn_rd_set((char *)tn_tensor_data(t) + i * tn_dtype_itemsize(t->dtype), t->dtype, v);
}

static void store_idx(tn_tensor *t, int64_t i, int64_t v) {
    if (t->dtype == TN_DTYPE_INT32) ((int32_t *)tn_tensor_data(t))[i] = (int32_t)v;
    else ((int64_t *)tn_tensor_data(t))[i] = v;
}

static tn_status expect_types(const char *arg, const tn_tensor *t, const char *allowed) {
    return tn_error(TN_ERR_RUNTIME,
                    "Expected tensor for argument #1 '%s' to have one of the following scalar types: %s; but got torch.%sTensor instead (while checking arguments for embedding_bag)",
                    arg, allowed, tn_dtype_infos[t->dtype].c10_name);
}

/* The index tensors a backward reads through idx_at / int_at2 must be int32 / int64
 * (upstream's checkScalarTypes; before, a float offset2bag was read as int64 past its
 * storage). */
static tn_status check_index_tensors(int n, const char *const *names, tn_tensor *const *ts) {
    for (int k = 0; k < n; k++)
        if (ts[k] && ts[k]->dtype != TN_DTYPE_INT32 && ts[k]->dtype != TN_DTYPE_INT64)
            return expect_types(names[k], ts[k], "Long, Int");
    return TN_OK;
}

/* Upstream's check_arguments, in its order. */
static tn_status check_arguments(const tn_tensor *weight, const tn_tensor *indices, const tn_tensor *offsets, int64_t mode,
                                 const tn_tensor *psw, bool include_last) {
    if (indices->dtype != TN_DTYPE_INT32 && indices->dtype != TN_DTYPE_INT64) return expect_types("indices", indices, "Long, Int");
    if (offsets->dtype != TN_DTYPE_INT32 && offsets->dtype != TN_DTYPE_INT64) return expect_types("offsets", offsets, "Long, Int");
    if (weight->dtype != TN_DTYPE_FLOAT16 && weight->dtype != TN_DTYPE_BFLOAT16 && weight->dtype != TN_DTYPE_FLOAT32 &&
        weight->dtype != TN_DTYPE_FLOAT64)
        return expect_types("weight", weight, "Half, BFloat16, Float, Double");
    if (weight->ndim != 2) return tn_error(TN_ERR_RUNTIME, "weight has to be a 2D Tensor, but got Tensor of dimension %d", weight->ndim);
    if (indices->ndim != 1) return tn_error(TN_ERR_RUNTIME, "input has to be a 1D or 2D Tensor, but got Tensor of dimension %d", indices->ndim);
    if (offsets->ndim != 1) return tn_error(TN_ERR_RUNTIME, "offsets has to be a 1D Tensor");
    int64_t n = indices->sizes[0], no = offsets->sizes[0];
    if (no > 0) {
        int64_t first = idx_at(offsets, 0), last = idx_at(offsets, no - 1);
        if (first != 0)
            return tn_error(TN_ERR_RUNTIME, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got %lld",
                            (long long)first);
        if (last > n)
            return tn_error(TN_ERR_RUNTIME, "offsets[-1] can not be greater than input's length %lld but got offsets[-1] of %lld", (long long)n,
                            (long long)last);
    }
    if (psw) {
        if (mode != BAG_SUM) return tn_error(TN_ERR_RUNTIME, "embedding_bag: per_sample_weights only supported with mode='sum'");
        if (psw->dtype != weight->dtype)
            return tn_error(TN_ERR_RUNTIME, "Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 'per_sample_weights'; but type torch.%sTensor does not equal torch.%sTensor (while checking arguments for embedding_bag)",
                            tn_dtype_infos[weight->dtype].c10_name, tn_dtype_infos[psw->dtype].c10_name);
        if (psw->ndim != 1) return tn_error(TN_ERR_RUNTIME, "Expected per_sample_weights.value().dim() == 1 to be true, but got false.");
        if (psw->sizes[0] != n) return tn_error(TN_ERR_RUNTIME, "Expected per_sample_weights.value().numel() == indices.numel() to be true, but got false.");
    }
    if (include_last && no < 1) return tn_error(TN_ERR_RUNTIME, "include_last_offset: number of offset should be at least 1");
    return TN_OK;
}

/* The four results of _embedding_bag. requires_grad: the _embedding_bag kernel (bag_size
 * filled for every mode) rather than _forward_only (whose sum-mode bag_size upstream leaves
 * unwritten: zeros here). */
static tn_status embedding_bag_kernel(const tn_value *args, tn_value *rets, bool requires_grad) {
    tn_tensor *weight = args[0].u.t, *indices = args[1].u.t, *offsets = args[2].u.t;
    int64_t mode = args[4].u.i, padding_idx = args[8].u.i;
    tn_tensor *psw = tn_value_is_none(&args[6]) ? NULL : args[6].u.t;
    bool include_last = args[7].u.b;
    if (mode < 0 || mode > 2) return tn_error(TN_ERR_RUNTIME, "`mode` must be sum, mean, or max.");
    /* indices and offsets promoted to their common type (Int with Long: Long) */
    tn_dtype ity = indices->dtype == TN_DTYPE_INT32 && offsets->dtype == TN_DTYPE_INT32 ? TN_DTYPE_INT32 : TN_DTYPE_INT64;
    TN_TRY(check_arguments(weight, indices, offsets, mode, psw, include_last));
    int64_t n = indices->sizes[0], no = offsets->sizes[0], nbags = include_last ? no - 1 : no, dim = weight->sizes[1],
            nw = weight->sizes[0];
    bool meta = tn_tensor_is_meta(weight) || tn_tensor_is_meta(indices) || tn_tensor_is_meta(offsets);
    for (int64_t i = 0; i < n && !meta; i++) {
        int64_t ix = idx_at(indices, i);
        if (ix < 0 || ix >= nw) return tn_error(TN_ERR_RUNTIME, "Expected i < index_size to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)");
    }
    /* upstream's fast path for sum and mean (float / half / bfloat16 rows, no padding) bounds
     * each bag by the offsets, so with include_last_offset the indices past the last offset
     * count nowhere (elsewhere they join the last bag); in sum mode it never fills offset2bag */
    bool fast = mode != BAG_MAX && weight->dtype != TN_DTYPE_FLOAT64 && (weight->strides[1] == 1 || dim <= 1) &&
                (!psw || psw->strides[0] == 1 || n <= 1) && padding_idx < 0;
    bool fast_sum = fast && mode == BAG_SUM;
    int64_t fast_end = fast && include_last && !meta ? idx_at(offsets, nbags) : n;
    /* bag_size (and max_indices outside max mode) has one entry per offset where upstream
     * leaves it unwritten (sum mode, forward only), one per bag otherwise */
    int64_t bs_n = mode == BAG_SUM && !requires_grad ? no : nbags;
    int64_t osz[2] = {nbags, dim}, o2b_n = fast_sum ? 0 : n, mi_sz[2] = {mode == BAG_MAX ? nbags : bs_n, dim};
    tn_tensor *out = NULL, *o2b = NULL, *bag_size = NULL, *max_idx = NULL;
    tn_device dev = tn_tensor_device(weight);
    tn_status st = tn_tensor_zeros(2, osz, weight->dtype, dev, &out);
    if (st == TN_OK) st = tn_tensor_zeros(1, &o2b_n, ity, dev, &o2b);
    if (st == TN_OK) st = tn_tensor_zeros(1, &bs_n, ity, dev, &bag_size);
    if (st == TN_OK) st = tn_tensor_zeros(mode == BAG_MAX ? 2 : 1, mi_sz, ity, dev, &max_idx);
    int64_t *bag_of = NULL;
    double *acc = NULL;
    bool *seen = NULL;
    if (st == TN_OK && !meta) {
        bag_of = malloc(sizeof *bag_of * (size_t)(n + 1));
        acc = calloc((size_t)(nbags * dim + 1), sizeof *acc);
        seen = calloc((size_t)(nbags + 1), sizeof *seen);
        if (!bag_of || !acc || !seen) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    if (st != TN_OK || meta) goto done;
    /* bag of index i: how many bag starts are <= i, less one (empty bags are skipped over) */
    {
        int64_t b = -1, k = 0;
        for (int64_t i = 0; i < n; i++) {
            while (k < nbags && idx_at(offsets, k) <= i) { b++; k++; }
            bag_of[i] = b; /* -1 when there is no bag at all */
            if (!fast_sum) store_idx(o2b, i, bag_of[i]);
        }
    }
    if (mode != BAG_SUM || requires_grad) {
        for (int64_t b = 0; b < nbags; b++) {
            int64_t size = (b + 1 < nbags ? idx_at(offsets, b + 1) : n) - idx_at(offsets, b);
            if (mode == BAG_SUM) size = 0; /* upstream's _embedding_bag leaves sum-mode sizes at zero */
            store_idx(bag_size, b, size);
        }
    }
    {
        tn_dtype dt = weight->dtype;
        bool f64 = dt == TN_DTYPE_FLOAT64;
        for (int64_t i = 0; i < n; i++) {
            int64_t ix = idx_at(indices, i), b = bag_of[i];
            if (i >= fast_end || b < 0) break;
            if (ix == padding_idx) {
                if (mode != BAG_SUM) store_idx(bag_size, b, (ity == TN_DTYPE_INT32 ? ((int32_t *)tn_tensor_data(bag_size))[b] : ((int64_t *)tn_tensor_data(bag_size))[b]) - 1);
                continue;
            }
            int64_t row = weight->offset + ix * weight->strides[0];
            double *a = acc + b * dim;
            if (mode == BAG_MAX) {
                for (int64_t d = 0; d < dim; d++) {
                    double v = load(weight, row + d * weight->strides[1]);
                    if (!seen[b] || v > a[d]) {
                        a[d] = v;
                        store_idx(max_idx, b * dim + d, ix);
                    }
                }
                seen[b] = true;
            } else if (psw) {
                double s = load(psw, psw->offset + i * psw->strides[0]);
                for (int64_t d = 0; d < dim; d++) {
                    double v = load(weight, row + d * weight->strides[1]);
                    a[d] = f64 ? a[d] + v * s : (double)fmaf((float)s, (float)v, (float)a[d]);
                }
            } else {
                /* float, half and bfloat16 sums accumulate in float, rounded once at the end */
                for (int64_t d = 0; d < dim; d++) {
                    double v = load(weight, row + d * weight->strides[1]);
                    a[d] = f64 ? a[d] + v : (double)((float)a[d] + (float)v);
                }
            }
        }
        /* outside max mode, max_indices is a copy of the final bag sizes */
        if (mode != BAG_MAX && bs_n > 0) memcpy(tn_tensor_data(max_idx), tn_tensor_data(bag_size), (size_t)bs_n * (size_t)tn_dtype_itemsize(ity));
        for (int64_t b = 0; b < nbags; b++) {
            int64_t bs = 0;
            if (mode == BAG_MEAN) {
                bs = ity == TN_DTYPE_INT32 ? ((int32_t *)tn_tensor_data(bag_size))[b] : ((int64_t *)tn_tensor_data(bag_size))[b];
                if (bs < 1) bs = 1;
            }
            for (int64_t d = 0; d < dim; d++) {
                double v = acc[b * dim + d];
                if (mode == BAG_MEAN) v = tn_round_to_dtype(dt, tn_round_to_dtype(dt, v) / tn_round_to_dtype(dt, (double)bs));
                store(out, b * dim + d, v);
            }
        }
    }
done:
    free(bag_of);
    free(acc);
    free(seen);
    if (st != TN_OK) {
        if (out) tn_tensor_release(out);
        if (o2b) tn_tensor_release(o2b);
        if (bag_size) tn_tensor_release(bag_size);
        if (max_idx) tn_tensor_release(max_idx);
        return st;
    }
    rets[0] = tn_value_tensor(out);
    rets[1] = tn_value_tensor(o2b);
    rets[2] = tn_value_tensor(bag_size);
    rets[3] = tn_value_tensor(max_idx);
    return TN_OK;
}

/* aten::_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False,
 *   int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False,
 *   int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor) */
tn_status tn_op__embedding_bag(const tn_value *args, tn_value *rets) { return embedding_bag_kernel(args, rets, true); }

/* aten::_embedding_bag_forward_only: the same, as run when no gradient is wanted. */
tn_status tn_op__embedding_bag_forward_only(const tn_value *args, tn_value *rets) { return embedding_bag_kernel(args, rets, false); }

/* aten::embedding_bag.padding_idx(..., int? padding_idx): padding_idx checked and wrapped
 * (None: -1, no padding), then the forward-only kernel unless weight or the per-sample
 * weights require grad. */
tn_status tn_op_embedding_bag_padding_idx(const tn_value *args, tn_value *rets) {
    tn_tensor *weight = args[0].u.t;
    int64_t pad = -1;
    if (!tn_value_is_none(&args[8])) {
        int64_t ne = weight->ndim > 0 ? weight->sizes[0] : 1;
        pad = args[8].u.i;
        if (pad < -ne || pad >= ne)
            return tn_error(TN_ERR_RUNTIME, "padding_idx must be within the number of embeddings, -%lld through %lld, but got %lld", (long long)ne,
                            (long long)(ne - 1), (long long)pad);
        if (pad < 0) pad += ne;
    }
    tn_value a[9];
    memcpy(a, args, sizeof a);
    a[8] = tn_value_int(pad);
    bool grad = tn_requires_grad(weight) || (args[6].tag == TN_V_TENSOR && tn_requires_grad(args[6].u.t));
    return tn_dispatch(grad ? TN_OP__embedding_bag : TN_OP__embedding_bag_forward_only, a, rets);
}

/* aten::embedding_bag(...) without padding_idx: the padding_idx overload with None. */
tn_status tn_op_embedding_bag(const tn_value *args, tn_value *rets) {
    tn_value a[9];
    memcpy(a, args, sizeof(tn_value) * 8);
    a[8] = (tn_value){.tag = TN_V_NONE};
    return tn_dispatch(TN_OP_embedding_bag_padding_idx, a, rets);
}

/* ---- backward ---------------------------------------------------------------------------- */

static int64_t int_at2(const tn_tensor *t, int64_t i, int64_t j) {
    int64_t off = t->offset + i * t->strides[0] + (t->ndim > 1 ? j * t->strides[1] : 0);
    return t->dtype == TN_DTYPE_INT32 ? ((const int32_t *)t->storage->data)[off] : ((const int64_t *)t->storage->data)[off];
}

/* offset2bag as the forward makes it, into a malloc'd array (the fast sum path returns it empty). */
static tn_status bag_of_indices(const tn_tensor *indices, const tn_tensor *offsets, const tn_tensor *o2b, int64_t **out) {
    int64_t n = indices->sizes[0];
    *out = malloc(sizeof **out * (size_t)(n + 1));
    if (!*out) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    if (o2b->ndim != 1) return TN_OK; /* checked by the callers */
    if (tn_tensor_numel(o2b) >= n && n > 0) {
        for (int64_t i = 0; i < n; i++) (*out)[i] = idx_at(o2b, i);
        return TN_OK;
    }
    int64_t b = -1, k = 0, no = offsets->sizes[0];
    for (int64_t i = 0; i < n; i++) {
        while (k < no && idx_at(offsets, k) <= i) { b++; k++; }
        (*out)[i] = b;
    }
    return TN_OK;
}

/* aten::_embedding_bag_dense_backward(Tensor grad, Tensor indices, Tensor offset2bag, Tensor bag_size,
 *   Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, int mode,
 *   Tensor? per_sample_weights, int padding_idx=-1) -> Tensor: the weight gradient. Sum / mean:
 * each (non-padding) index receives its bag's gradient row times its per-sample weight, over
 * its count (scale_grad_by_freq) and over its bag's size (mean, when nonzero); max: each
 * non-empty bag's gradient goes to the rows its maxima came from. */
tn_status tn_op__embedding_bag_dense_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *grad = args[0].u.t, *indices = args[1].u.t, *o2b = args[2].u.t, *bag_size = args[3].u.t, *max_idx = args[4].u.t;
    int64_t nw = args[5].u.i, mode = args[7].u.i, pad = args[9].u.i;
    bool by_freq = args[6].u.b;
    tn_tensor *psw = tn_value_is_none(&args[8]) ? NULL : args[8].u.t;
    tn_dtype dt = grad->dtype;
    if (dt != TN_DTYPE_FLOAT16 && dt != TN_DTYPE_BFLOAT16 && dt != TN_DTYPE_FLOAT32 && dt != TN_DTYPE_FLOAT64)
        return expect_types("grad_", grad, "Half, BFloat16, Float, Double");
    TN_TRY(check_index_tensors(4, (const char *const[]){"indices", "offset2bag", "bag_size", "max_indices"},
                               (tn_tensor *const[]){indices, o2b, bag_size, mode == BAG_MAX ? max_idx : NULL}));
    if (grad->ndim != 2 || indices->ndim != 1 || o2b->ndim != 1 || bag_size->ndim != 1 || nw < 0)
        return tn_error(TN_ERR_RUNTIME, "embedding_bag_backward: arguments do not match an embedding_bag forward");
    int64_t n = indices->sizes[0], nb = grad->sizes[0], dim = grad->sizes[1], sz[2] = {nw, dim};
    tn_tensor *gw;
    TN_TRY(tn_tensor_zeros(2, sz, dt, tn_tensor_device(grad), &gw));
    if (tn_tensor_is_meta(grad)) {
        rets[0] = tn_value_tensor(gw);
        return TN_OK;
    }
    double *acc = calloc((size_t)(nw * dim + 1), sizeof *acc);
    int64_t *counts = calloc((size_t)(nw + 1), sizeof *counts);
    tn_status st = acc && counts ? TN_OK : tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t i = 0; st == TN_OK && i < n; i++) {
        int64_t ix = idx_at(indices, i);
        if (ix < 0 || ix >= nw) st = tn_error(TN_ERR_INDEX, "embedding_bag_backward: index %lld is out of bounds for %lld rows", (long long)ix, (long long)nw);
        else counts[ix]++;
    }
    if (st == TN_OK && mode == BAG_MAX) {
        if (max_idx->ndim != 2 || max_idx->sizes[0] < nb || max_idx->sizes[1] < dim || bag_size->sizes[0] < nb)
            st = tn_error(TN_ERR_RUNTIME, "embedding_bag_backward: arguments do not match an embedding_bag forward");
        for (int64_t b = 0; st == TN_OK && b < nb; b++) {
            if (idx_at(bag_size, b) == 0) continue;
            for (int64_t d = 0; d < dim; d++) {
                int64_t row = int_at2(max_idx, b, d);
                if (row < 0 || row >= nw) { st = tn_error(TN_ERR_INDEX, "embedding_bag_backward: index out of bounds"); break; }
                double *w = &acc[row * dim + d];
                *w = tn_round_to_dtype(dt, *w + load(grad, grad->offset + b * grad->strides[0] + d * grad->strides[1]));
            }
        }
    } else if (st == TN_OK) {
        /* The divisor of scale_grad_by_freq, as upstream's kernel computes it: walking the
         * distinct indices in ascending order, the g-th one is divided by the count of the
         * g-th element of the sorted index list (not by its own count unless they agree). */
        int64_t *freq = by_freq ? calloc((size_t)(nw + 1), sizeof *freq) : NULL, *sorted = by_freq ? malloc(sizeof *sorted * (size_t)(n + 1)) : NULL;
        if (by_freq && (!freq || !sorted)) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
        if (by_freq && st == TN_OK) {
            for (int64_t v = 0, k = 0; v < nw; v++)
                for (int64_t r = 0; r < counts[v]; r++) sorted[k++] = v;
            for (int64_t v = 0, g = 0; v < nw; v++)
                if (counts[v]) freq[v] = counts[sorted[g++]];
        }
        if (st == TN_OK && o2b->sizes[0] < n) st = tn_error(TN_ERR_RUNTIME, "embedding_bag_backward: arguments do not match an embedding_bag forward");
        for (int64_t i = 0; st == TN_OK && i < n; i++) {
            int64_t ix = idx_at(indices, i), src = idx_at(o2b, i);
            if (ix == pad) continue;
            if (src < 0 || src >= nb) { st = tn_error(TN_ERR_INDEX, "embedding_bag_backward: bag out of bounds"); break; }
            double scale = psw ? load(psw, psw->offset + i * psw->strides[0]) : 1.0;
            if (by_freq) scale /= (double)freq[ix];
            if (mode == BAG_MEAN && src < bag_size->sizes[0]) {
                int64_t bs = idx_at(bag_size, src);
                if (bs != 0) scale /= (double)bs;
            }
            double s = tn_round_to_dtype(dt, scale);
            for (int64_t d = 0; d < dim; d++) {
                double *w = &acc[ix * dim + d];
                *w = tn_round_to_dtype(dt, *w + tn_round_to_dtype(dt, s * load(grad, grad->offset + src * grad->strides[0] + d * grad->strides[1])));
            }
        }
        free(freq);
        free(sorted);
    }
    if (st == TN_OK)
        for (int64_t k = 0; k < nw * dim; k++) store(gw, k, acc[k]);
    free(acc);
    free(counts);
    if (st != TN_OK) {
        tn_tensor_release(gw);
        return st;
    }
    rets[0] = tn_value_tensor(gw);
    return TN_OK;
}

/* aten::_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor offset2bag,
 *   Tensor bag_size, Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, int mode,
 *   bool sparse, Tensor? per_sample_weights, int padding_idx=-1) -> Tensor: offset2bag rebuilt
 * when the forward's fast path left it empty, then the dense backward (sparse gradients are
 * not built here). */
tn_status tn_op__embedding_bag_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *indices = args[1].u.t, *offsets = args[2].u.t, *o2b = args[3].u.t;
    if (args[9].u.b) return tn_error(TN_ERR_NOT_IMPLEMENTED, "embedding_bag with sparse=True: sparse gradients are not implemented by torchnative");
    TN_TRY(check_index_tensors(3, (const char *const[]){"indices", "offsets", "offset2bag"}, (tn_tensor *const[]){indices, offsets, o2b}));
    if (indices->ndim != 1 || offsets->ndim != 1 || o2b->ndim != 1)
        return tn_error(TN_ERR_RUNTIME, "embedding_bag_backward: arguments do not match an embedding_bag forward");
    int64_t n = indices->sizes[0], *bags;
    TN_TRY(bag_of_indices(indices, offsets, o2b, &bags));
    tn_tensor *o2b_full;
    tn_status st = tn_tensor_empty(1, &n, TN_DTYPE_INT64, tn_tensor_device(indices), &o2b_full);
    if (st == TN_OK) {
        if (!tn_tensor_is_meta(o2b_full) && n > 0) memcpy(tn_tensor_data(o2b_full), bags, sizeof *bags * (size_t)n);
        tn_value a[10] = {args[0], args[1], tn_value_tensor(o2b_full), args[4], args[5], args[6], args[7], args[8], args[10], args[11]};
        st = tn_dispatch(TN_OP__embedding_bag_dense_backward, a, rets);
        tn_tensor_release(o2b_full);
    }
    free(bags);
    return st;
}

/* aten::_embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices,
 *   Tensor offsets, Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor: per index, the dot
 * of its bag's gradient row with its weight row (0 for padding). */
tn_status tn_op__embedding_bag_per_sample_weights_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *grad = args[0].u.t, *weight = args[1].u.t, *indices = args[2].u.t, *offsets = args[3].u.t, *o2b = args[4].u.t;
    int64_t mode = args[5].u.i, pad = args[6].u.i;
    if (mode != BAG_SUM) return tn_error(TN_ERR_RUNTIME, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
    if (grad->ndim != 2 || weight->ndim != 2 || indices->ndim != 1 || offsets->ndim != 1 || o2b->ndim != 1 ||
        weight->sizes[1] != grad->sizes[1] || grad->dtype != weight->dtype)
        return tn_error(TN_ERR_RUNTIME, "embedding_bag_backward: arguments do not match an embedding_bag forward");
    TN_TRY(check_index_tensors(3, (const char *const[]){"indices", "offsets", "offset2bag"}, (tn_tensor *const[]){indices, offsets, o2b}));
    int64_t n = indices->sizes[0], dim = grad->sizes[1], nb = grad->sizes[0], *bags = NULL;
    tn_tensor *out;
    TN_TRY(tn_tensor_zeros(1, &n, grad->dtype, tn_tensor_device(grad), &out));
    if (tn_tensor_is_meta(grad)) {
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    tn_status st = bag_of_indices(indices, offsets, o2b, &bags);
    for (int64_t i = 0; st == TN_OK && i < n; i++) {
        int64_t ix = idx_at(indices, i), b = bags[i];
        if (ix == pad) continue;
        if (ix < 0 || ix >= weight->sizes[0] || b < 0 || b >= nb) { st = tn_error(TN_ERR_INDEX, "embedding_bag_backward: index out of bounds"); break; }
        double acc = 0;
        for (int64_t d = 0; d < dim; d++)
            acc += load(grad, grad->offset + b * grad->strides[0] + d * grad->strides[1]) *
                   load(weight, weight->offset + ix * weight->strides[0] + d * weight->strides[1]);
        store(out, i, acc);
    }
    free(bags);
    if (st != TN_OK) {
        tn_tensor_release(out);
        return st;
    }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}
