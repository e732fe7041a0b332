/* iter.c — the elementwise engine: broadcasting, promotion, output layout (upstream's
 * TensorIterator rules: fast paths for same-shape contiguous / same-strides dense
 * operands, otherwise dimensions sorted by the inputs' strides), coalescing, and the
 * strided 1-D loop driver. */
#include "ops/iter.h"

#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/cast.h"
#include "ops/graph.h"
#include "ops/promote.h"

tn_iter_config tn_iter_config_init(int noutputs, int ninputs) {
    tn_iter_config c;
    memset(&c, 0, sizeof c);
    c.noutputs = noutputs;
    c.ninputs = ninputs;
    c.check_all_same_dtype = true;
    c.check_mem_overlap = true;
    c.static_dtype = TN_DTYPE_UNDEFINED;
    c.output_dtype = TN_DTYPE_UNDEFINED;
    return c;
}

_Thread_local tn_iter_offer tn_iter_tl_offer;

tn_iter_offer tn_iter_offer_push(tn_tensor *dest, const void *rets, int functional) {
    tn_iter_offer prev = tn_iter_tl_offer;
    tn_iter_tl_offer = (tn_iter_offer){dest, rets, functional};
    return prev;
}

void tn_iter_offer_pop(tn_iter_offer previous) { tn_iter_tl_offer = previous; }


tn_tensor *tn_iter_offer_take(const void *rets) {
    if (!tn_iter_tl_offer.dest || tn_iter_tl_offer.rets != rets) return NULL;
    tn_tensor *t = tn_iter_tl_offer.dest;
    tn_iter_tl_offer.dest = NULL;
    return t;
}

tn_status tn_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out) {
    int n = na > nb ? na : nb;
    int64_t res[TN_MAX_DIMS];
    for (int i = n - 1; i >= 0; i--) {
        int off = n - 1 - i, da = na - 1 - off, db = nb - 1 - off;
        int64_t sa = da >= 0 ? a[da] : 1, sb = db >= 0 ? b[db] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return tn_error(TN_ERR_RUNTIME,
                            "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                            (long long)sa, (long long)sb, i);
        res[i] = sa == 1 ? sb : sa;
    }
    memcpy(out, res, sizeof(int64_t) * (size_t)n);
    *nout = n;
    return TN_OK;
}

bool tn_tensor_is_non_overlapping_and_dense(const tn_tensor *t) {
    int n = t->ndim;
    if (n == 0) return true;
    if (n == 1) return t->sizes[0] < 2 || t->strides[0] == 1;
    /* Sort dimensions by stride (size-1 dims last, they never matter), then require
     * each stride to be the product of the sizes before it. */
    int perm[TN_MAX_DIMS];
    for (int i = 0; i < n; i++) perm[i] = n - 1 - i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            int a = perm[j - 1], b = perm[j];
            if (t->sizes[a] < 2) { perm[j - 1] = b; perm[j] = a; continue; }
            if (t->sizes[b] < 2) break;
            if (t->strides[a] > t->strides[b]) { perm[j - 1] = b; perm[j] = a; } else break;
        }
    int64_t expected = 1;
    for (int i = 0; i < n; i++) {
        int d = perm[i];
        if (t->sizes[d] == 1) continue;
        if (t->strides[d] != expected) return false;
        expected = tn_mul_wrap(expected, t->sizes[d]); /* wraps as upstream's (sizes 2**63 - 1 by 3 of an empty result) */
    }
    return true;
}

void tn_tensor_dense_strides_like(const tn_tensor *t, int64_t *out) {
    int n = t->ndim, perm[TN_MAX_DIMS];
    for (int i = 0; i < n; i++) perm[i] = n - 1 - i;
    /* insertion sort; a zero stride is an ambiguous comparison (the order stays), equal
     * strides put the smaller size first */
    for (int i = 1; i < n; i++) {
        int d1 = i;
        for (int d0 = i - 1; d0 >= 0; d0--) {
            int64_t s0 = t->strides[perm[d0]], s1 = t->strides[perm[d1]];
            int c = (s0 == 0 || s1 == 0) ? 0 : s0 < s1 ? -1 : s0 > s1 ? 1 : t->sizes[perm[d0]] > t->sizes[perm[d1]] ? 1 : 0;
            if (c > 0) { int x = perm[d0]; perm[d0] = perm[d1]; perm[d1] = x; d1 = d0; }
            else if (c < 0) break;
        }
    }
    int64_t cur = 1;
    for (int i = 0; i < n; i++) {
        out[perm[i]] = cur;
        /* wrapping: past int64 only for a shape with a 0 size elsewhere (an empty result,
         * whose strides are never used to address an element) or one the allocation refuses */
        cur = tn_mul_wrap(cur, t->sizes[perm[i]] > 1 ? t->sizes[perm[i]] : 1);
    }
}

tn_status tn_tensor_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides, tn_dtype dtype,
                                  tn_device device, tn_tensor **out) {
    int64_t nbytes;
    TN_TRY(tn_storage_nbytes_for(ndim, sizes, strides, tn_dtype_itemsize(dtype), &nbytes));
    tn_storage *s;
    TN_TRY(tn_storage_new(nbytes, device, false, &s));
    tn_tensor *t = tn_tensor_new_view(s, 0, ndim, sizes, strides, dtype);
    tn_storage_release(s);
    if (!t) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    *out = t;
    return TN_OK;
}

void tn_tensor_like_strides(const tn_tensor *t, int64_t *out) {
    if (tn_tensor_is_non_overlapping_and_dense(t)) memcpy(out, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    else tn_tensor_dense_strides_like(t, out);
}

tn_status tn_tensor_empty_like(const tn_tensor *t, tn_dtype dtype, tn_tensor **out) {
    int64_t st[TN_MAX_DIMS];
    tn_tensor_like_strides(t, st);
    return tn_tensor_empty_strided(t->ndim, t->sizes, st, dtype, tn_tensor_device(t), out);
}

void tn_iter_release(tn_iter *it) {
    for (int k = 0; k < it->noperands; k++) {
        tn_tensor_release(it->ops[k].tensor);
        tn_tensor_release(it->ops[k].original);
        it->ops[k].tensor = it->ops[k].original = NULL;
    }
    it->noperands = 0;
}

tn_tensor *tn_iter_take_output(const tn_iter *it, int i) {
    tn_tensor *t = it->ops[i].tensor;
    tn_tensor_retain(t);
    return t;
}

const tn_tensor *tn_iter_original_input(const tn_iter *it, int i) {
    const tn_iter_operand *op = &it->ops[it->noutputs + i];
    return op->original ? op->original : op->tensor;
}

/* [lo, hi) byte range a non-overlapping-dense tensor covers. */
static void byte_range(const tn_tensor *t, uintptr_t *lo, uintptr_t *hi) {
    int64_t extent = 1;
    for (int i = 0; i < t->ndim; i++) extent += (t->sizes[i] - 1) * t->strides[i];
    *lo = (uintptr_t)tn_tensor_data(t);
    *hi = *lo + (uintptr_t)(extent * tn_dtype_itemsize(t->dtype));
}

/* Upstream's get_overlap_status of a written-to tensor and an input: 0 none (or undecidable
 * layouts, let through), 1 partial, 2 full (the same tensor, or the same bytes with the same
 * strides). */
static int overlap_status(const tn_tensor *out, const tn_tensor *in) {
    if (out == in) return 2;
    if (tn_tensor_numel(out) == 0 || tn_tensor_numel(in) == 0 || !out->storage->data) return 0;
    if (in->storage != out->storage) return 0;
    if (!tn_tensor_is_non_overlapping_and_dense(out) || !tn_tensor_is_non_overlapping_and_dense(in)) return 0;
    uintptr_t a0, a1, b0, b1;
    byte_range(out, &a0, &a1);
    byte_range(in, &b0, &b1);
    if (a0 == b0 && a1 == b1)
        return out->ndim == in->ndim && memcmp(out->strides, in->strides, sizeof(int64_t) * (size_t)out->ndim) == 0 ? 2 : 1;
    return a0 < b1 && b0 < a1 ? 1 : 0;
}

static tn_status overlap_error(void) {
    return tn_error(TN_ERR_RUNTIME, "unsupported operation: some elements of the input tensor and the written-to tensor "
                                    "refer to a single memory location. Please clone() the tensor before performing the "
                                    "operation.");
}

/* Upstream's assert_no_internal_overlap / assert_no_partial_overlap (full overlap, i.e.
 * in-place on the same geometry, is allowed; undecidable layouts are let through). */
tn_status tn_iter_check_overlap(const tn_tensor *out, const tn_tensor *in) {
    if (!in) {
        if (tn_tensor_numel(out) == 0 || !out->storage->data) return TN_OK;
        if (tn_tensor_is_non_overlapping_and_dense(out)) return TN_OK;
        for (int i = 0; i < out->ndim; i++)
            if (out->sizes[i] > 1 && out->strides[i] == 0)
                return tn_error(TN_ERR_RUNTIME,
                                "unsupported operation: more than one element of the written-to tensor refers to a "
                                "single memory location. Please clone() the tensor before performing the operation.");
        return TN_OK;
    }
    return overlap_status(out, in) == 1 ? overlap_error() : TN_OK;
}

tn_status tn_check_no_overlap(const tn_tensor *out, const tn_tensor *in) {
    return overlap_status(out, in) ? overlap_error() : TN_OK;
}

/* Converted copy of `src` in `dtype`, layout preserved as Tensor.to() does. */
static tn_status convert_input(tn_tensor *src, tn_dtype dtype, tn_tensor **out) {
    tn_tensor *dst;
    TN_TRY(tn_tensor_empty_like(src, dtype, &dst));
    if (tn_tensor_is_meta(src)) { *out = dst; return TN_OK; }
    tn_iter_config c = tn_iter_config_init(1, 1);
    c.outputs[0] = dst;
    c.inputs[0] = src;
    c.check_all_same_dtype = false;
    c.check_mem_overlap = false;
    tn_iter sub;
    tn_status st = tn_iter_build(&sub, &c);
    if (st != TN_OK) { tn_tensor_release(dst); return st; }
    tn_loop_fn loop = tn_cast_loop(src->dtype, dtype);
    if (!loop) {
        tn_iter_release(&sub);
        tn_tensor_release(dst);
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "conversion from %s to %s is not implemented by torchnative",
                        tn_dtype_infos[src->dtype].c10_name, tn_dtype_infos[dtype].c10_name);
    }
    tn_iter_for_each(&sub, loop, NULL);
    tn_iter_release(&sub);
    *out = dst;
    return TN_OK;
}

static tn_status compute_shape(tn_iter *it) {
    bool first = true;
    for (int k = 0; k < it->noperands; k++) {
        const tn_tensor *t = it->ops[k].tensor;
        if (!t) continue; /* outputs still to allocate do not take part */
        if (first) {
            it->shape_ndim = t->ndim;
            memcpy(it->shape, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
            first = false;
        } else {
            TN_TRY(tn_broadcast_shapes(it->shape_ndim, it->shape, t->ndim, t->sizes, &it->shape_ndim, it->shape));
        }
    }
    char b1[200], b2[200];
    for (int k = 0; k < it->noutputs; k++) {
        const tn_tensor *t = it->ops[k].tensor;
        if (t && (t->ndim != it->shape_ndim ||
                  memcmp(t->sizes, it->shape, sizeof(int64_t) * (size_t)t->ndim) != 0))
            return tn_error(TN_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                            tn_format_sizes(t->ndim, t->sizes, b1, sizeof b1),
                            tn_format_sizes(it->shape_ndim, it->shape, b2, sizeof b2));
    }
    return TN_OK;
}

static tn_status compute_types(tn_iter *it, const tn_iter_config *cfg) {
    int nin = cfg->ninputs;
    tn_dtype common = cfg->static_dtype;
    if (common == TN_DTYPE_UNDEFINED) {
        if (cfg->promote_inputs_to_common_dtype) {
            tn_result_type_state st = tn_result_type_state_init();
            for (int i = 0; i < nin; i++) TN_TRY(tn_result_type_update_tensor(&st, cfg->inputs[i]));
            TN_TRY(tn_result_type_finish(&st, &common));
        } else {
            common = nin > 0 ? cfg->inputs[0]->dtype : cfg->outputs[0] ? cfg->outputs[0]->dtype : TN_DTYPE_FLOAT32;
        }
        if (cfg->promote_integer_inputs_to_float && tn_dtype_is_integral(common, true)) common = tn_default_dtype();
    }
    it->common_dtype = common;
    if (cfg->check_all_same_dtype && !cfg->promote_inputs_to_common_dtype) {
        for (int k = 0; k < it->noperands; k++) {
            const tn_tensor *t = it->ops[k].tensor;
            if (!t) continue;
            if (t->dtype != common)
                return tn_error(TN_ERR_RUNTIME, "Found dtype %s but expected %s", tn_dtype_infos[t->dtype].c10_name,
                                tn_dtype_infos[common].c10_name);
        }
    }
    if (cfg->promote_inputs_to_common_dtype) {
        for (int k = it->noutputs; k < it->noperands; k++) {
            tn_iter_operand *op = &it->ops[k];
            if (op->tensor->dtype == common) continue;
            tn_tensor *conv;
            TN_TRY(convert_input(op->tensor, common, &conv));
            op->original = op->tensor;
            op->tensor = conv;
        }
    }
    return TN_OK;
}

/* Upstream's reorder_dimensions comparator over iteration dims (0 = fastest). */
static int should_swap(const tn_iter *it, const bool *has_strides, int d0, int d1) {
    for (int k = 0; k < it->noperands; k++) {
        if (!has_strides[k]) continue;
        int64_t s0 = it->strides[k][d0], s1 = it->strides[k][d1];
        if (s0 == 0 || s1 == 0) continue;
        if (s0 < s1) return -1;
        if (s0 > s1) return 1;
        if (it->it_shape[d0] > it->it_shape[d1]) return 1;
    }
    return 0;
}

/* tn_iter_config.preferred_output's rule, checked once the inputs are converted (a converted
 * copy shares nothing with it) */
static bool preferred_fits(const tn_iter *it, const tn_tensor *t, tn_dtype dt, tn_device device) {
    int n = it->shape_ndim;
    if (!t || device.type != TN_DEVICE_CPU || tn_tensor_is_meta(t) || t->dtype != dt || t->ndim != n ||
        memcmp(t->sizes, it->shape, sizeof(int64_t) * (size_t)n) != 0 || !tn_tensor_is_non_overlapping_and_dense(t) ||
        (tn_tensor_numel(t) > 0 && !t->storage->data))
        return false;
    for (int j = it->noutputs; j < it->noperands; j++) {
        const tn_tensor *in = it->ops[j].tensor;
        if (in->storage != t->storage) continue;
        if (in->dtype != t->dtype || in->offset != t->offset || in->ndim != n || memcmp(in->sizes, t->sizes, sizeof(int64_t) * (size_t)n) != 0 ||
            memcmp(in->strides, t->strides, sizeof(int64_t) * (size_t)n) != 0)
            return false;
    }
    return true;
}

static tn_status allocate_outputs(tn_iter *it, const tn_iter_config *cfg, tn_device device) {
    int n = it->shape_ndim;
    bool all_same_shape = true, all_contig = true, all_dense_same = true;
    const tn_tensor *first = NULL;
    for (int k = 0; k < it->noperands; k++) {
        const tn_tensor *t = it->ops[k].tensor;
        if (!t) continue;
        if (t->ndim != n || memcmp(t->sizes, it->shape, sizeof(int64_t) * (size_t)n) != 0) all_same_shape = false;
        if (!tn_tensor_is_contiguous(t)) all_contig = false;
        if (!first) first = t;
        if (!tn_tensor_is_non_overlapping_and_dense(t) ||
            (first != t && memcmp(first->strides, t->strides, sizeof(int64_t) * (size_t)n) != 0))
            all_dense_same = false;
    }

    /* Byte strides in iteration order (dim 0 fastest) for every known operand. */
    bool has_strides[TN_ITER_MAX_OPERANDS];
    for (int d = 0; d < n; d++) it->it_shape[d] = it->shape[n - 1 - d];
    for (int k = 0; k < it->noperands; k++) {
        const tn_tensor *t = it->ops[k].tensor;
        has_strides[k] = t != NULL;
        if (!t) continue;
        int64_t isz = tn_dtype_itemsize(t->dtype);
        for (int d = 0; d < n; d++) {
            int td = t->ndim - 1 - d; /* tensor dim aligned right */
            /* wrapping: a huge stride of a size-0/1 dim (never stepped along) must not overflow */
            it->strides[k][d] = (td < 0 || (t->sizes[td] == 1 && it->it_shape[d] != 1)) ? 0 : tn_mul_wrap(t->strides[td], isz);
        }
    }

    int perm[TN_MAX_DIMS]; /* perm[iteration dim] = original iteration dim */
    for (int d = 0; d < n; d++) perm[d] = d;
    /* Same-shape operands that are all contiguous, or all dense with equal strides, give
     * their layout to the outputs (upstream's fast setup); otherwise the sorted order
     * decides. The sort runs either way: it makes coalescing find long inner runs. */
    bool fast = all_same_shape && (all_contig || all_dense_same);
    {
        /* Insertion sort tolerant of ambiguous comparisons, as upstream. */
        for (int i = 1; i < n; i++) {
            int d1 = i;
            for (int d0 = i - 1; d0 >= 0; d0--) {
                int c = should_swap(it, has_strides, perm[d0], perm[d1]);
                if (c > 0) { int tmp = perm[d0]; perm[d0] = perm[d1]; perm[d1] = tmp; d1 = d0; }
                else if (c < 0) break;
            }
        }
        int64_t shape2[TN_MAX_DIMS], str2[TN_MAX_DIMS];
        for (int d = 0; d < n; d++) shape2[d] = it->it_shape[perm[d]];
        memcpy(it->it_shape, shape2, sizeof(int64_t) * (size_t)n);
        for (int k = 0; k < it->noperands; k++) {
            if (!has_strides[k]) continue;
            for (int d = 0; d < n; d++) str2[d] = it->strides[k][perm[d]];
            memcpy(it->strides[k], str2, sizeof(int64_t) * (size_t)n);
        }
    }

    for (int k = 0; k < it->noutputs; k++) {
        if (it->ops[k].tensor) continue;
        tn_dtype dt = cfg->output_dtype != TN_DTYPE_UNDEFINED ? cfg->output_dtype : it->common_dtype;
        int64_t isz = tn_dtype_itemsize(dt);
        if (k == 0 && preferred_fits(it, cfg->preferred_output, dt, device)) {
            tn_tensor *t = cfg->preferred_output;
            tn_tensor_retain(t);
            it->ops[0].tensor = t;
            for (int d = 0; d < n; d++) it->strides[0][d] = t->strides[n - 1 - perm[d]] * isz;
            continue;
        }
        int64_t strides[TN_MAX_DIMS];
        bool inverted = true; /* sorted order is plain C order */
        for (int d = 0; d < n; d++) inverted &= perm[d] == d;
        if (fast && !all_contig) {
            memcpy(strides, first->strides, sizeof(int64_t) * (size_t)n);
        } else if (fast || inverted) {
            /* upstream allocates a contiguous output here, whose restride refuses a stride
             * past int64 even when the result is empty ([0, 5, 2**62, 2]) */
            if (tn_contiguous_strides(n, it->shape, strides)) return tn_error(TN_ERR_RUNTIME, "Stride calculation overflowed");
        } else {
            /* Strides compatible with the sorted iteration order, mapped back to tensor
             * dims (iteration dim d was tensor dim n-1-perm[d]). */
            int64_t next = 1;
            for (int d = 0; d < n; d++) {
                strides[n - 1 - perm[d]] = next;
                /* a stride past int64 (a result of 2**63+ elements) must refuse here, never
                 * wrap into a small allocation */
                if (__builtin_mul_overflow(next, it->it_shape[d], &next)) {
                    char sb[256];
                    return tn_error(TN_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s",
                                    tn_format_sizes(n, it->shape, sb, sizeof sb));
                }
            }
        }
        tn_tensor *t;
        TN_TRY(tn_graph_empty_result(n, it->shape, strides, dt, device, &t));
        it->ops[k].tensor = t;
        for (int d = 0; d < n; d++) {
            int td = n - 1 - perm[d];
            it->strides[k][d] = tn_mul_wrap(strides[td], isz); /* (past int64 only when empty) */
        }
    }
    return TN_OK;
}

static void coalesce(tn_iter *it) {
    int n = it->shape_ndim;
    if (n <= 1) { it->ndim = n; return; }
    int prev = 0;
    for (int d = 1; d < n; d++) {
        bool ok = it->it_shape[prev] == 1 || it->it_shape[d] == 1;
        if (!ok) {
            ok = true;
            for (int k = 0; k < it->noperands; k++)
                /* wrapping: only an empty iteration (never walked) can pass int64 here */
                if (tn_mul_wrap(it->it_shape[prev], it->strides[k][prev]) != it->strides[k][d]) { ok = false; break; }
        }
        if (ok) {
            if (it->it_shape[prev] == 1)
                for (int k = 0; k < it->noperands; k++) it->strides[k][prev] = it->strides[k][d];
            it->it_shape[prev] = tn_mul_wrap(it->it_shape[prev], it->it_shape[d]);
        } else {
            prev++;
            if (prev != d) {
                for (int k = 0; k < it->noperands; k++) it->strides[k][prev] = it->strides[k][d];
                it->it_shape[prev] = it->it_shape[d];
            }
        }
    }
    it->ndim = prev + 1;
}

tn_status tn_iter_build(tn_iter *it, const tn_iter_config *cfg) {
    memset(it, 0, sizeof *it);
    if (cfg->noutputs + cfg->ninputs > TN_ITER_MAX_OPERANDS || cfg->noutputs < 0 || cfg->ninputs < 0)
        return tn_error(TN_ERR_RUNTIME, "tn_iter: too many operands");
    it->noutputs = cfg->noutputs;
    it->noperands = cfg->noutputs + cfg->ninputs;
    tn_device device = tn_device_cpu();
    bool has_cpu_dims = false, has_meta = false;
    for (int k = 0; k < it->noperands; k++) {
        tn_tensor *t = k < cfg->noutputs ? cfg->outputs[k] : cfg->inputs[k - cfg->noutputs];
        it->ops[k].is_output = k < cfg->noutputs;
        if (!t) {
            if (!it->ops[k].is_output) { tn_iter_release(it); return tn_error(TN_ERR_RUNTIME, "tn_iter: undefined input tensor"); }
            continue;
        }
        tn_tensor_retain(t);
        it->ops[k].tensor = t;
        if (tn_tensor_is_meta(t)) has_meta = true;
        else if (t->ndim > 0 || it->ops[k].is_output) has_cpu_dims = true;
    }
    if (has_meta && has_cpu_dims) {
        tn_iter_release(it);
        return tn_error(TN_ERR_RUNTIME,
                        "Expected all tensors to be on the same device, but found at least two devices, meta and cpu!");
    }
    if (has_meta) device = (tn_device){TN_DEVICE_META, -1};
    it->is_meta = has_meta;

    tn_status st = compute_shape(it);
    if (st == TN_OK && cfg->check_mem_overlap) {
        for (int k = 0; k < it->noutputs && st == TN_OK; k++) {
            if (!it->ops[k].tensor) continue;
            st = tn_iter_check_overlap(it->ops[k].tensor, NULL);
            for (int j = it->noutputs; j < it->noperands && st == TN_OK; j++)
                st = tn_iter_check_overlap(it->ops[k].tensor, it->ops[j].tensor);
        }
    }
    if (st == TN_OK) st = compute_types(it, cfg);
    if (st == TN_OK) st = allocate_outputs(it, cfg, device);
    if (st != TN_OK) { tn_iter_release(it); return st; }
    /* a zero size makes the count 0 whatever the others multiply to (a [2**62, 2, 5, 0]
     * repeat is empty: its product must not overflow first, a UBSan report of the seed-36
     * fuzz run); without one, every operand's own count fits int64, and so does the
     * broadcast shape's unless it is refused here */
    it->numel = 1;
    for (int d = 0; d < it->shape_ndim; d++)
        if (it->shape[d] == 0) it->numel = 0;
    for (int d = 0; d < it->shape_ndim && it->numel; d++)
        if (__builtin_mul_overflow(it->numel, it->shape[d], &it->numel)) {
            tn_iter_release(it);
            return tn_error(TN_ERR_RUNTIME, "numel: integer multiplication overflow");
        }
    coalesce(it);
    return TN_OK;
}

/* run_range with the loop's rows form (NULL: none): whole runs of dim 0 go to it as many at
 * a time as dim 1 has left, the rest (a partial first or last run) to the 1-D loop */
static void run_range_rows(const tn_iter *it, int64_t begin, int64_t end, tn_loop_fn loop, tn_loop_rows_fn rows,
                           void *ctx) {
    if (it->is_meta || begin >= end) return;
    int nops = it->noperands;
    char *base[TN_ITER_MAX_OPERANDS], *ptrs[TN_ITER_MAX_OPERANDS];
    int64_t inner[TN_ITER_MAX_OPERANDS], outer[TN_ITER_MAX_OPERANDS];
    for (int k = 0; k < nops; k++) base[k] = (char *)tn_tensor_data(it->ops[k].tensor);
    if (it->ndim == 0) {
        for (int k = 0; k < nops; k++) inner[k] = 0;
        loop(base, inner, 1, ctx);
        return;
    }
    for (int k = 0; k < nops; k++) inner[k] = it->strides[k][0], outer[k] = it->ndim > 1 ? it->strides[k][1] : 0;
    int64_t counter[TN_MAX_DIMS], idx = begin;
    for (int d = 0; d < it->ndim; d++) {
        counter[d] = idx % it->it_shape[d];
        idx /= it->it_shape[d];
    }
    /* row[k]: operand k at the start of the current run of dim 0 (counter[0] = 0); moving to
     * the next run adds the stride of dim 1 when only it advanced, else recomputes from the
     * counters */
    char *row[TN_ITER_MAX_OPERANDS];
    for (int k = 0; k < nops; k++) {
        char *p = base[k];
        for (int d = 1; d < it->ndim; d++) p += counter[d] * it->strides[k][d];
        row[k] = p;
    }
    int64_t pos = begin, n0 = it->it_shape[0];
    while (pos < end) {
        int64_t n;
        if (rows && counter[0] == 0 && it->ndim > 1 && end - pos >= 2 * n0) {
            int64_t m = it->it_shape[1] - counter[1], whole = (end - pos) / n0;
            if (m > whole) m = whole;
            rows(row, inner, n0, m, outer, ctx);
            pos += m * n0;
            counter[1] += m;
            if (counter[1] < it->it_shape[1]) {
                for (int k = 0; k < nops; k++) row[k] += m * outer[k];
                continue;
            }
            counter[1] -= 1; /* as if the last of the m runs had just ended: the carry below */
            counter[0] = n0;
        } else {
            n = n0 - counter[0];
            if (n > end - pos) n = end - pos;
            for (int k = 0; k < nops; k++) ptrs[k] = row[k] + counter[0] * inner[k];
            loop(ptrs, inner, n, ctx);
            pos += n;
            counter[0] += n;
            if (counter[0] < n0 || it->ndim == 1) continue;
        }
        counter[0] = 0;
        if (++counter[1] < it->it_shape[1]) {
            for (int k = 0; k < nops; k++) row[k] += it->strides[k][1];
            continue;
        }
        for (int d = 1; d < it->ndim - 1 && counter[d] >= it->it_shape[d]; d++) {
            counter[d] = 0;
            counter[d + 1]++;
        }
        for (int k = 0; k < nops; k++) {
            char *p = base[k];
            for (int d = 1; d < it->ndim; d++) p += counter[d] * it->strides[k][d];
            row[k] = p;
        }
    }
}

void tn_iter_run_range(const tn_iter *it, int64_t begin, int64_t end, tn_loop_fn loop, void *ctx) {
    run_range_rows(it, begin, end, loop, NULL, ctx);
}

/* Problems at least this large are split across the thread pool; smaller ones run on the
 * calling thread with no extra cost. */
#define TN_ITER_GRAIN 32768

typedef struct iter_task {
    const tn_iter *it;
    tn_loop_fn loop;
    tn_loop_rows_fn rows;
    void *ctx;
} iter_task;

static void iter_chunk(void *vt, int64_t begin, int64_t end) {
    const iter_task *t = (const iter_task *)vt;
    run_range_rows(t->it, begin, end, t->loop, t->rows, t->ctx);
}

void tn_iter_for_each(const tn_iter *it, tn_loop_fn loop, void *ctx) {
    if (it->numel <= 0) return;
    /* runs of dim 0 shorter than the whole: the loop's rows form, if it has one, takes many at a call */
    tn_loop_rows_fn rows = it->ndim > 1 && !it->is_meta ? tn_ew_loop_rows(loop) : NULL;
    if (it->numel >= 2 * TN_ITER_GRAIN && !it->is_meta && tn_get_num_threads() > 1 && !tn_in_parallel_region()) {
        /* Loops are pure functions of their slices (results never depend on where a
         * slice starts), so splitting changes nothing but the time. */
        iter_task t = {it, loop, rows, ctx};
        tn_parallel_for(it->numel, TN_ITER_GRAIN, iter_chunk, &t);
        return;
    }
    run_range_rows(it, 0, it->numel, loop, rows, ctx);
}
