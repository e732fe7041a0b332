/* shape_copy.c — shape operators that assemble new memory: cat/stack (and h/v/dstack),
 * tril/triu, repeat/tile, flip, roll, constant padding. Data moves by bytes through the
 * strided copy in shape_common.c (same dtype); a dtype change goes through aten::copy_. */
#include <stdlib.h>
#include <string.h>

#include "core/scalar.h"
#include "core/threadpool.h"
#include "ops/dispatch.h"
#include "ops/graph.h"
#include "ops/promote.h"
#include "ops/shape.h"
#include "ops/scalar_convert.h"

#define SIZES_BUF 512

static tn_tensor *narrow_view(tn_tensor *t, int d, int64_t start, int64_t len) {
    int64_t sizes[TN_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof sizes);
    sizes[d] = len;
    return tn_tensor_new_view(t->storage, t->offset + start * t->strides[d], t->ndim, sizes, t->strides, t->dtype);
}

/* Copies src into the [start, start+len) slab of dst along d. */
static tn_status copy_into_slab(tn_tensor *dst, int d, int64_t start, int64_t len, tn_tensor *src) {
    tn_tensor *slab = narrow_view(dst, d, start, len);
    if (!slab) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_status st = tn_shape_copy(slab, src);
    tn_tensor_release(slab);
    return st;
}

/* ---- cat / stack -------------------------------------------------------------------- */

/* Legacy rule: 1-D tensors of shape (0,) are ignored by cat's shape checks. */
static bool cat_skip(const tn_tensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

/* Inputs of the output's dtype whose slab from dim d on is contiguous and whose leading
 * dims collapse to one row stride: each of `outer` rows of the output is the inputs' rows
 * side by side, one memcpy per input (rotary embeddings cat two halves of the head
 * dimension, one a strided view, this way), split over the pool when large. */
typedef struct cat_rows_job {
    tn_tensor *const *ts;
    int64_t n, row_bytes;
    const int64_t *chunk, *rstride; /* bytes of one row of each input (0: skipped), row stride */
    char *out;
} cat_rows_job;

static void cat_rows(void *ctx, int64_t b, int64_t e) {
    const cat_rows_job *j = ctx;
    for (int64_t o = b; o < e; o++) {
        char *dst = j->out + o * j->row_bytes;
        for (int64_t i = 0; i < j->n; i++) {
            if (!j->chunk[i]) continue;
            memcpy(dst, (const char *)tn_tensor_data(j->ts[i]) + o * j->rstride[i], (size_t)j->chunk[i]);
            dst += j->chunk[i];
        }
    }
}

#define CAT_FAST_MAX 64
#define CAT_PARALLEL_BYTES (1 << 20)

/* Element stride between consecutive rows (dims < d flattened) of t when its dims from d
 * on are contiguous and the leading dims collapse; -1 otherwise. */
static int64_t cat_row_stride(const tn_tensor *t, int d) {
    int64_t expect = 1;
    for (int k = t->ndim - 1; k >= d; k--) {
        if (t->sizes[k] != 1 && t->strides[k] != expect) return -1;
        expect *= t->sizes[k];
    }
    int64_t rs = -1, span = 1; /* rows of the dims after k, walking outward */
    for (int k = d - 1; k >= 0; k--) {
        if (t->sizes[k] == 1) continue;
        if (rs < 0) rs = t->strides[k];
        else if (t->strides[k] != rs * span) return -1;
        span *= t->sizes[k];
    }
    return rs < 0 ? expect : rs;
}

/* Returns true when it did the copy (every input of dtype dt and row-strided as above, at
 * most CAT_FAST_MAX inputs, CPU). */
static bool cat_fast(tn_tensor *const *ts, int64_t n, int d, tn_tensor *out) {
    if (n > CAT_FAST_MAX || tn_tensor_is_meta(out) || !tn_tensor_is_contiguous(out)) return false;
    int64_t chunk[CAT_FAST_MAX], rstride[CAT_FAST_MAX], isz = tn_dtype_itemsize(out->dtype), inner = isz, outer = 1;
    for (int k = d + 1; k < out->ndim; k++) inner *= out->sizes[k];
    for (int k = 0; k < d; k++) outer *= out->sizes[k];
    for (int64_t i = 0; i < n; i++) {
        chunk[i] = rstride[i] = 0;
        if (cat_skip(ts[i]) || ts[i]->sizes[d] == 0) continue;
        int64_t rs = ts[i]->dtype == out->dtype ? cat_row_stride(ts[i], d) : -1;
        if (rs < 0) return false;
        chunk[i] = ts[i]->sizes[d] * inner;
        rstride[i] = rs * isz;
    }
    cat_rows_job j = {ts, n, out->sizes[d] * inner, chunk, rstride, tn_tensor_data(out)};
    if (outer * j.row_bytes >= CAT_PARALLEL_BYTES) tn_parallel_for(outer, 64, cat_rows, &j);
    else cat_rows(&j, 0, outer);
    return true;
}

/* at::result_type over a tensor list (all dimensioned here, so plain promotion). */
static tn_status result_dtype(tn_tensor *const *ts, int64_t n, tn_dtype *out) {
    tn_result_type_state rs = tn_result_type_state_init();
    for (int64_t i = 0; i < n; i++) TN_TRY(tn_result_type_update_tensor(&rs, ts[i]));
    return tn_result_type_finish(&rs, out);
}


static tn_status cat_impl(tn_tensor *const *ts, int64_t n, int64_t dim, tn_value *rets) {
    char b1[SIZES_BUF];
    if (n == 0) return tn_error(TN_ERR_VALUE, "torch.cat(): expected a non-empty list of Tensors");
    for (int64_t i = 0; i < n; i++)
        if (ts[i]->ndim == 0)
            return tn_error(TN_ERR_RUNTIME, "zero-dimensional tensor (at position %lld) cannot be concatenated", (long long)i);
    int64_t valid = -1;
    for (int64_t i = 0; i < n && valid < 0; i++)
        if (!cat_skip(ts[i])) valid = i;
    for (int64_t i = 1; i < n; i++)
        if (tn_tensor_device(ts[i]).type != tn_tensor_device(ts[0]).type)
            return tn_error(TN_ERR_RUNTIME, "Tensor on device %s is not on the expected device %s!",
                            tn_tensor_is_meta(ts[i]) ? "meta" : "cpu", tn_tensor_is_meta(ts[0]) ? "meta" : "cpu");
    /* The result dtype promotes over every input (skipped (0,) ones included, as upstream). */
    tn_dtype dt;
    TN_TRY(result_dtype(ts, n, &dt));
    if (valid < 0) {
        /* Every input is (0,): the result is (0,) too, whatever dim (upstream's
         * legacy_cat_wrap_dim wraps it against no tensor at all) */
        tn_tensor *out;
        int64_t zero = 0;
        TN_TRY(tn_tensor_empty(1, &zero, dt, tn_tensor_device(ts[0]), &out));
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    const tn_tensor *ref = ts[valid];
    int d;
    TN_TRY(tn_wrap_dim(dim, ref->ndim, &d));
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        const tn_tensor *t = ts[i];
        if (cat_skip(t)) continue;
        if (t->ndim != ref->ndim)
            return tn_error(TN_ERR_RUNTIME, "Tensors must have same number of dimensions: got %d and %d", ref->ndim, t->ndim);
        for (int k = 0; k < ref->ndim; k++)
            if (k != d && t->sizes[k] != ref->sizes[k])
                return tn_error(TN_ERR_RUNTIME,
                                "Sizes of tensors must match except in dimension %d. Expected size %lld but got size "
                                "%lld for tensor number %lld in the list.",
                                d, (long long)ref->sizes[k], (long long)t->sizes[k], (long long)i);
        total += t->sizes[d];
    }
    (void)b1;
    int64_t sizes[TN_MAX_DIMS];
    memcpy(sizes, ref->sizes, sizeof sizes);
    sizes[d] = total;
    tn_tensor *out;
    TN_TRY(tn_graph_empty_result(ref->ndim, sizes, NULL, dt, tn_tensor_device(ref), &out));
    if (tn_tensor_numel(out) == 0 || cat_fast(ts, n, d, out)) {
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    int64_t pos = 0;
    for (int64_t i = 0; i < n; i++) {
        if (cat_skip(ts[i])) continue;
        tn_status st = copy_into_slab(out, d, pos, ts[i]->sizes[d], ts[i]);
        if (st != TN_OK) { tn_tensor_release(out); return st; }
        pos += ts[i]->sizes[d];
    }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::cat(Tensor[] tensors, int dim=0) -> Tensor */
tn_status tn_op_cat(const tn_value *args, tn_value *rets) {
    return cat_impl(args[0].u.tlist.data, args[0].u.tlist.n, args[1].u.i, rets);
}

/* stack of contiguous inputs of out's dtype: out is [outer, n, inner] with input i's block
 * b at (b, i), so every block is one copy, all of them in one parallel region (a strided
 * copy per input before, 1.5x upstream's time for 10 x 1e5 floats). False: nothing done. */
typedef struct stack_job {
    tn_tensor *const *ts;
    int64_t n, inner_bytes;
    char *out;
} stack_job;
static void stack_blocks(void *ctx, int64_t p0, int64_t p1) {
    const stack_job *J = ctx;
    for (int64_t p = p0; p < p1; p++) {
        const int64_t b = p / J->n, i = p % J->n;
        memcpy(J->out + p * J->inner_bytes, (const char *)tn_tensor_data(J->ts[i]) + b * J->inner_bytes,
               (size_t)J->inner_bytes);
    }
}
static bool stack_dense(tn_tensor *const *ts, int64_t n, int d, tn_tensor *out) {
    if (tn_tensor_is_meta(out) || tn_tensor_numel(out) == 0) return false;
    for (int64_t i = 0; i < n; i++)
        if (ts[i]->dtype != out->dtype || !tn_tensor_is_contiguous(ts[i]) || tn_tensor_is_meta(ts[i])) return false;
    int64_t inner = 1, outer = 1;
    for (int k = 0; k < ts[0]->ndim; k++) {
        if (k < d) outer *= ts[0]->sizes[k];
        else inner *= ts[0]->sizes[k];
    }
    stack_job J = {ts, n, inner * tn_dtype_itemsize(out->dtype), tn_tensor_data(out)};
    const int64_t grain = ((int64_t)1 << 16) / (J.inner_bytes > 0 ? J.inner_bytes : 1) + 1;
    tn_parallel_for(outer * n, grain, stack_blocks, &J);
    return true;
}

/* aten::stack(Tensor[] tensors, int dim=0) -> Tensor: cat of unsqueezed equal shapes. */
tn_status tn_op_stack(const tn_value *args, tn_value *rets) {
    tn_tensor *const *ts = args[0].u.tlist.data;
    int64_t n = args[0].u.tlist.n;
    char b1[SIZES_BUF], b2[SIZES_BUF];
    if (n == 0) return tn_error(TN_ERR_RUNTIME, "stack expects a non-empty TensorList");
    const tn_tensor *ref = ts[0];
    int d;
    TN_TRY(tn_wrap_dim(args[1].u.i, ref->ndim + 1, &d));
    for (int64_t i = 1; i < n; i++)
        if (ts[i]->ndim != ref->ndim || memcmp(ts[i]->sizes, ref->sizes, sizeof(int64_t) * (size_t)ref->ndim))
            return tn_error(TN_ERR_RUNTIME, "stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %lld",
                            tn_format_sizes(ref->ndim, ref->sizes, b1, sizeof b1),
                            tn_format_sizes(ts[i]->ndim, ts[i]->sizes, b2, sizeof b2), (long long)i);
    if (ref->ndim + 1 > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions", TN_MAX_DIMS);
    tn_dtype dt;
    TN_TRY(result_dtype(ts, n, &dt));
    int64_t sizes[TN_MAX_DIMS];
    for (int i = 0, j = 0; i <= ref->ndim; i++) sizes[i] = i == d ? n : ref->sizes[j++];
    tn_tensor *out;
    TN_TRY(tn_tensor_empty(ref->ndim + 1, sizes, dt, tn_tensor_device(ref), &out));
    if (stack_dense(ts, n, d, out)) {
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    /* Each input lands in out.select(d, i): a view with dim d removed. */
    int64_t vs[TN_MAX_DIMS], vst[TN_MAX_DIMS];
    for (int i = 0, j = 0; i <= ref->ndim; i++)
        if (i != d) { vs[j] = out->sizes[i]; vst[j] = out->strides[i]; j++; }
    for (int64_t i = 0; i < n; i++) {
        tn_tensor *slot = tn_tensor_new_view(out->storage, i * out->strides[d], ref->ndim, vs, vst, out->dtype);
        if (!slot) { tn_tensor_release(out); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
        tn_status st = tn_shape_copy(slot, ts[i]);
        tn_tensor_release(slot);
        if (st != TN_OK) { tn_tensor_release(out); return st; }
    }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* atleast_{1,2,3}d as views (NumPy's rules), for h/v/dstack. */
static tn_tensor *atleast(tn_tensor *t, int k) {
    int64_t sizes[3], strides[3] = {0, 0, 0};
    if (t->ndim >= k) return tn_tensor_alias(t);
    if (t->ndim == 0) {
        for (int i = 0; i < k; i++) { sizes[i] = 1; strides[i] = 1; }
    } else if (t->ndim == 1) {
        /* [n] -> [1, n] (2-D) or [1, n, 1] (3-D) */
        sizes[0] = 1; strides[0] = t->sizes[0] * t->strides[0];
        sizes[1] = t->sizes[0]; strides[1] = t->strides[0];
        sizes[2] = 1; strides[2] = 1;
    } else {
        /* [a, b] -> [a, b, 1] */
        sizes[0] = t->sizes[0]; strides[0] = t->strides[0];
        sizes[1] = t->sizes[1]; strides[1] = t->strides[1];
        sizes[2] = 1; strides[2] = 1;
    }
    return tn_tensor_new_view(t->storage, t->offset, k, sizes, strides, t->dtype);
}

static tn_status stack_family(const tn_value *args, const char *name, int k, int dim_of_first(int), tn_value *rets) {
    tn_tensor *const *ts = args[0].u.tlist.data;
    int64_t n = args[0].u.tlist.n;
    if (n == 0) return tn_error(TN_ERR_RUNTIME, "%s expects a non-empty TensorList", name);
    tn_tensor **views = malloc(sizeof(tn_tensor *) * (size_t)n);
    if (!views) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_status st = TN_OK;
    int64_t made = 0;
    for (; made < n; made++) {
        views[made] = atleast(ts[made], k);
        if (!views[made]) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); break; }
    }
    if (st == TN_OK) st = cat_impl(views, n, dim_of_first(views[0]->ndim), rets);
    for (int64_t i = 0; i < made; i++) tn_tensor_release(views[i]);
    free(views);
    return st;
}

static int hstack_dim(int ndim) { return ndim == 1 ? 0 : 1; }
static int vstack_dim(int ndim) { (void)ndim; return 0; }
static int dstack_dim(int ndim) { (void)ndim; return 2; }

/* aten::hstack(Tensor[] tensors) -> Tensor */
tn_status tn_op_hstack(const tn_value *args, tn_value *rets) { return stack_family(args, "hstack", 1, hstack_dim, rets); }
/* aten::vstack(Tensor[] tensors) -> Tensor */
tn_status tn_op_vstack(const tn_value *args, tn_value *rets) { return stack_family(args, "vstack", 2, vstack_dim, rets); }
/* aten::dstack(Tensor[] tensors) -> Tensor */
tn_status tn_op_dstack(const tn_value *args, tn_value *rets) { return stack_family(args, "dstack", 3, dstack_dim, rets); }

/* ---- tril / triu -------------------------------------------------------------------- */

/* Zeroes the elements of each trailing matrix with (col - row) above k (lower=true) or
 * below k; `out` is contiguous. All-zero bytes are zero in every dtype. */
static void zero_triangle(tn_tensor *out, int64_t k, bool lower) {
    char *d = tn_tensor_data(out);
    if (!d) return;
    int w = tn_dtype_itemsize(out->dtype);
    int64_t rows = out->sizes[out->ndim - 2], cols = out->sizes[out->ndim - 1];
    int64_t mats = (rows * cols != 0) ? tn_tensor_numel(out) / (rows * cols) : 0;
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < rows; i++) {
            char *row = d + (m * rows + i) * cols * w;
            __int128 lo, hi; /* zero columns [lo, hi); 128 bits: k may be +-2**63 */
            if (lower) { lo = (__int128)i + k + 1; hi = cols; }
            else { lo = 0; hi = (__int128)i + k; }
            if (lo < 0) lo = 0;
            if (hi > cols) hi = cols;
            if (lo > cols) lo = cols;
            if (lo < hi) memset(row + lo * w, 0, (size_t)((hi - lo) * w));
        }
}

/* A contiguous self: each row's kept part copied and the rest zeroed in one pass, rows on
 * the pool (a whole copy, then a zeroing pass on one thread before: 1.4x upstream's time
 * for 1000 x 1000). */
typedef struct tri_job {
    const char *x;
    char *y;
    int64_t rows, cols, k;
    int w;
    bool lower;
} tri_job;
static void tri_rows(void *ctx, int64_t r0, int64_t r1) {
    const tri_job *J = ctx;
    const int64_t cols = J->cols, w = J->w;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i = r % J->rows;
        __int128 lo, hi; /* zeroed columns [lo, hi), clamped to [0, cols]; k may be +-2**63 */
        if (J->lower) { lo = (__int128)i + J->k + 1; hi = cols; }
        else { lo = 0; hi = (__int128)i + J->k; }
        lo = lo < 0 ? 0 : lo > cols ? cols : lo;
        hi = hi < lo ? lo : hi > cols ? cols : hi;
        const char *src = J->x + r * cols * w;
        char *dst = J->y + r * cols * w;
        memcpy(dst, src, (size_t)(lo * w));
        memset(dst + lo * w, 0, (size_t)((hi - lo) * w));
        memcpy(dst + hi * w, src + hi * w, (size_t)((cols - hi) * w));
    }
}

static tn_status tri(const tn_value *args, bool lower, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *out;
    if (self->ndim < 2)
        return tn_error(TN_ERR_RUNTIME, "%s: input tensor must have at least 2 dimensions", lower ? "tril" : "triu");
    TN_TRY(tn_tensor_empty(self->ndim, self->sizes, self->dtype, tn_tensor_device(self), &out));
    const int64_t rows = self->sizes[self->ndim - 2], cols = self->sizes[self->ndim - 1];
    if (tn_tensor_is_contiguous(self) && !tn_tensor_is_meta(self) && rows * cols > 0) {
        tri_job J = {tn_tensor_data(self), tn_tensor_data(out), rows, cols, args[1].u.i, tn_dtype_itemsize(self->dtype), lower};
        tn_parallel_for(tn_tensor_numel(self) / cols, 16384 / cols + 1, tri_rows, &J);
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    tn_shape_copy_same_dtype(out, self);
    zero_triangle(out, args[1].u.i, lower);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::tril(Tensor self, SymInt diagonal=0) -> Tensor */
tn_status tn_op_tril(const tn_value *args, tn_value *rets) { return tri(args, true, rets); }
/* aten::triu(Tensor self, SymInt diagonal=0) -> Tensor */
tn_status tn_op_triu(const tn_value *args, tn_value *rets) { return tri(args, false, rets); }

/* ---- repeat / tile ------------------------------------------------------------------ */

static tn_status repeat_of(tn_tensor *self, const int64_t *reps, int64_t nr, tn_value *rets) {
    if (nr < self->ndim)
        return tn_error(TN_ERR_RUNTIME,
                        "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
    if (nr > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions, got %lld", TN_MAX_DIMS, (long long)nr);
    int n = (int)nr, lead = n - self->ndim;
    int64_t src_sizes[TN_MAX_DIMS], src_strides[TN_MAX_DIMS], sizes[TN_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++)
        if (reps[i] < 0) {
            /* upstream's empty() of the target size refuses a negative size; a negative
             * repeat of an empty dim gives size 0, which upstream's CPU path accepts and its
             * meta path refuses */
            for (int k = 0; k < n; k++) sizes[k] = tn_mul_wrap(k < lead ? 1 : self->sizes[k - lead], reps[k]);
            TN_TRY(tn_check_sizes_nonnegative(n, sizes));
            if (tn_tensor_is_meta(self))
                return tn_error(TN_ERR_RUNTIME, "Repeats cannot be negative, found %lld at index %d", (long long)reps[i], i);
        }
    for (int i = 0; i < n; i++) {
        src_sizes[i] = i < lead ? 1 : self->sizes[i - lead];
        src_strides[i] = i < lead ? 0 : self->strides[i - lead];
        /* upstream's size wraps (4 * 2**62 is 0) and its unfold then refuses; a wrapped size
         * must never reach the copy below, which walks the repeats as given */
        if (__builtin_mul_overflow(src_sizes[i], reps[i], &sizes[i]))
            return tn_error(TN_ERR_RUNTIME, "repeat: size %lld repeated %lld times at dimension %d overflows int64",
                            (long long)src_sizes[i], (long long)reps[i], i);
    }
    tn_tensor *out;
    TN_TRY(tn_tensor_empty(n, sizes, self->dtype, tn_tensor_device(self), &out));
    /* Out viewed as [r0, s0, r1, s1, ...]; the source is the same shape with stride 0
     * over each repeat dim, so one strided copy fills everything. */
    int64_t bs[TN_STRIDED_MAX_DIMS], ds[TN_STRIDED_MAX_DIMS], ss[TN_STRIDED_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        bs[2 * i] = reps[i]; ds[2 * i] = src_sizes[i] * out->strides[i]; ss[2 * i] = 0;
        bs[2 * i + 1] = src_sizes[i]; ds[2 * i + 1] = out->strides[i]; ss[2 * i + 1] = src_strides[i];
    }
    if (tn_tensor_numel(out) > 0) /* (an empty result may come from a negative repeat of an empty dim) */
        tn_strided_copy_bytes(tn_tensor_data(out), ds, tn_tensor_data(self), ss, 2 * n, bs, tn_dtype_itemsize(self->dtype));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::repeat(Tensor self, SymInt[] repeats) -> Tensor */
tn_status tn_op_repeat(const tn_value *args, tn_value *rets) {
    return repeat_of(args[0].u.t, args[1].u.ilist.data, args[1].u.ilist.n, rets);
}

/* aten::tile(Tensor self, SymInt[] dims) -> Tensor: repeat with dims padded by leading 1s. */
tn_status tn_op_tile(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    const int64_t *dims = args[1].u.ilist.data;
    int64_t nd = args[1].u.ilist.n;
    if (nd >= self->ndim) return repeat_of(self, dims, nd, rets);
    int64_t reps[TN_MAX_DIMS];
    int pad = self->ndim - (int)nd;
    for (int i = 0; i < self->ndim; i++) reps[i] = i < pad ? 1 : dims[i - pad];
    return repeat_of(self, reps, self->ndim, rets);
}

/* ---- flip / roll -------------------------------------------------------------------- */

/* aten::flip(Tensor self, int[] dims) -> Tensor */
tn_status tn_op_flip(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    const int64_t *dims = args[1].u.ilist.data;
    int64_t nd = args[1].u.ilist.n;
    bool mask[TN_MAX_DIMS] = {false};
    for (int64_t i = 0; i < nd; i++) {
        int d;
        TN_TRY(tn_wrap_dim(dims[i], self->ndim, &d));
        if (mask[d]) return tn_error(TN_ERR_RUNTIME, "dim %d appears multiple times in the list of dims", d);
        mask[d] = true;
    }
    tn_tensor *out;
    TN_TRY(tn_shape_empty_like(self, &out));
    /* The source read backwards along each flipped dim: negative strides. */
    int64_t strides[TN_MAX_DIMS];
    int64_t off = self->offset;
    for (int i = 0; i < self->ndim; i++) {
        strides[i] = mask[i] ? -self->strides[i] : self->strides[i];
        if (mask[i] && self->sizes[i] > 0) off += (self->sizes[i] - 1) * self->strides[i];
    }
    int w = tn_dtype_itemsize(self->dtype);
    char *src = self->storage->data ? (char *)self->storage->data + off * w : NULL;
    tn_strided_copy_bytes(tn_tensor_data(out), out->strides, src, strides, self->ndim, self->sizes, w);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* out = self rolled by `shift` along d (both contiguous-or-strided, same shape). */
static tn_status roll_one(tn_tensor *out, tn_tensor *self, int d, int64_t shift) {
    int64_t size = self->sizes[d];
    if (size == 0) return TN_OK;
    int64_t s = ((shift % size) + size) % size;
    tn_tensor *a = narrow_view(self, d, size - s, s), *b = narrow_view(self, d, 0, size - s);
    tn_status st = (a && b) ? TN_OK : tn_error(TN_ERR_NO_MEMORY, "out of memory");
    if (st == TN_OK) st = copy_into_slab(out, d, 0, s, a);
    if (st == TN_OK) st = copy_into_slab(out, d, s, size - s, b);
    tn_tensor_release(a);
    tn_tensor_release(b);
    return st;
}

/* aten::roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor */
tn_status tn_op_roll(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    const int64_t *shifts, *dims;
    int64_t ns, nd;
    if (args[1].tag == TN_V_INT) { shifts = &args[1].u.i; ns = 1; } else { shifts = args[1].u.ilist.data; ns = args[1].u.ilist.n; }
    if (args[2].tag == TN_V_INT) { dims = &args[2].u.i; nd = 1; } else { dims = args[2].u.ilist.data; nd = args[2].u.ilist.n; }
    if (ns == 0) return tn_error(TN_ERR_RUNTIME, "`shifts` required");
    if (ns != nd && !(nd == 0 && ns == 1))
        return tn_error(TN_ERR_RUNTIME, "shifts and dimensions must align. shifts: %lld, dims:%lld", (long long)ns, (long long)nd);
    tn_tensor *out;
    if (nd == 0) {
        /* Roll the flattened tensor, then give it self's shape back. */
        int64_t numel = tn_tensor_numel(self);
        tn_tensor *flat_src, *contig;
        TN_TRY(tn_tensor_contiguous(self, &contig));
        flat_src = tn_tensor_new_view(contig->storage, contig->offset, 1, &numel, (int64_t[]){1}, self->dtype);
        tn_tensor_release(contig);
        if (!flat_src) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        tn_status st = tn_tensor_empty(self->ndim, self->sizes, self->dtype, tn_tensor_device(self), &out);
        if (st == TN_OK) {
            tn_tensor *flat_out = tn_tensor_new_view(out->storage, 0, 1, &numel, (int64_t[]){1}, self->dtype);
            st = flat_out ? roll_one(flat_out, flat_src, 0, shifts[0]) : tn_error(TN_ERR_NO_MEMORY, "out of memory");
            tn_tensor_release(flat_out);
            if (st != TN_OK) tn_tensor_release(out);
        }
        tn_tensor_release(flat_src);
        if (st == TN_OK) rets[0] = tn_value_tensor(out);
        return st;
    }
    int wrapped[TN_MAX_DIMS];
    if (nd > TN_MAX_DIMS) return tn_error(TN_ERR_INDEX, "roll: too many dims");
    /* upstream's roll_cpu returns an empty self's copy before it reads a dim, and reads the
     * dim's size without wrapping a scalar (a 0-dim self has no dim 0) */
    if (tn_tensor_numel(self) == 0) {
        TN_TRY(tn_tensor_empty(self->ndim, self->sizes, self->dtype, tn_tensor_device(self), &out));
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    for (int64_t i = 0; i < nd; i++) TN_TRY(tn_wrap_dim_strict(dims[i], self->ndim, &wrapped[i]));
    TN_TRY(tn_tensor_empty(self->ndim, self->sizes, self->dtype, tn_tensor_device(self), &out));
    tn_status st = roll_one(out, self, wrapped[0], shifts[0]);
    /* Further dims roll the previous result (upstream rolls one dim at a time too). */
    for (int64_t i = 1; i < nd && st == TN_OK; i++) {
        tn_tensor *next;
        st = tn_tensor_empty(self->ndim, self->sizes, self->dtype, tn_tensor_device(self), &next);
        if (st != TN_OK) break;
        st = roll_one(next, out, wrapped[i], shifts[i]);
        tn_tensor_release(out);
        out = next;
    }
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- padding ------------------------------------------------------------------------ */

static tn_status constant_pad(tn_tensor *self, const int64_t *pad, int64_t np, const tn_value *value, tn_value *rets) {
    if (np % 2)
        return tn_error(TN_ERR_RUNTIME, "Length of pad must be even but instead it equals %lld", (long long)np);
    int64_t l_pad = np / 2;
    if (l_pad > self->ndim)
        return tn_error(TN_ERR_RUNTIME,
                        "Length of pad should be no more than twice the number of dimensions of the input. Pad length "
                        "is %lldwhile the input has %ddimensions.", (long long)np, self->ndim);
    int n = self->ndim, l_diff = n - (int)l_pad;
    /* Negative pads crop: narrow the input first, as upstream does. */
    int64_t off = self->offset, csizes[TN_MAX_DIMS];
    memcpy(csizes, self->sizes, sizeof csizes);
    bool all_non_positive = true;
    for (int i = l_diff; i < n; i++) {
        int64_t lo = pad[2 * (n - i - 1)], hi = pad[2 * (n - i - 1) + 1];
        if (lo < 0) {
            if (csizes[i] + lo < 0) return tn_error(TN_ERR_RUNTIME, "narrow(): length must be non-negative.");
            off += -lo * self->strides[i];
            csizes[i] += lo;
        } else if (lo != 0) {
            all_non_positive = false;
        }
        if (hi < 0) {
            if (csizes[i] + hi < 0) return tn_error(TN_ERR_RUNTIME, "narrow(): length must be non-negative.");
            csizes[i] += hi;
        } else if (hi != 0) {
            all_non_positive = false;
        }
    }
    tn_tensor *crop = tn_tensor_new_view(self->storage, off, n, csizes, self->strides, self->dtype), *out;
    if (!crop) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    unsigned char elem[16];
    /* upstream converts the value only when it pads (no positive pad: a copy of the crop) */
    tn_status st = all_non_positive ? TN_OK : tn_scalar_to_bytes(value, self->dtype, elem);
    if (st != TN_OK) { tn_tensor_release(crop); return st; }
    if (all_non_positive) {
        st = tn_shape_empty_like(crop, &out);
        if (st == TN_OK) tn_shape_copy_same_dtype(out, crop);
    } else {
        int64_t sizes[TN_MAX_DIMS];
        for (int i = 0; i < n; i++) {
            sizes[i] = self->sizes[i];
            if (i >= l_diff) /* wrapping as upstream's sum (7 + INT64_MAX - 3 refuses as negative) */
                sizes[i] = tn_add_wrap(tn_add_wrap(sizes[i], pad[2 * (n - i - 1)]), pad[2 * (n - i - 1) + 1]);
            if (sizes[i] < 0) {
                st = tn_error(TN_ERR_RUNTIME,
                              "The input size %lld, plus negative padding %lld and %lld resulted in a negative output "
                              "size, which is invalid. Check dimension %d of your input.",
                              (long long)self->sizes[i], (long long)pad[2 * (n - i - 1)],
                              (long long)pad[2 * (n - i - 1) + 1], i);
                break;
            }
        }
        if (st == TN_OK) st = tn_tensor_empty(n, sizes, self->dtype, tn_tensor_device(self), &out);
        if (st == TN_OK) {
            tn_shape_fill_bytes(out, elem);
            /* The cropped input lands at offset max(pad_lo, 0) in each padded dim. */
            int64_t ioff = 0;
            for (int i = l_diff; i < n; i++) {
                int64_t lo = pad[2 * (n - i - 1)];
                if (lo > 0) ioff += lo * out->strides[i];
            }
            tn_tensor *inner = tn_tensor_new_view(out->storage, ioff, n, csizes, out->strides, out->dtype);
            if (inner) { tn_shape_copy_same_dtype(inner, crop); tn_tensor_release(inner); }
            else { tn_tensor_release(out); st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
        }
    }
    tn_tensor_release(crop);
    if (st == TN_OK) rets[0] = tn_value_tensor(out);
    return st;
}

/* aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor */
tn_status tn_op_constant_pad_nd(const tn_value *args, tn_value *rets) {
    return constant_pad(args[0].u.t, args[1].u.ilist.data, args[1].u.ilist.n, &args[2], rets);
}

/* constant pads here; reflect and replicate go to their kernels, circular to _pad_circular. */
static tn_status pad_mode(const tn_value *args, int mode, const char *op, tn_value *rets) {
    static const char *names[] = {"constant", "reflect", "replicate", "circular"};
    /* upstream lets a zero value through (it is the constant mode's default) */
    if (mode != 0 && mode > 0 && mode < 4 && !tn_value_is_none(&args[3]) && tn_scalar_as_double(&args[3]) != 0)
        return tn_error(TN_ERR_RUNTIME, "Padding mode \"%s\" doesn't take in value argument", names[mode]);
    if (mode == 1 || mode == 2 || mode == 3) {
        /* reflect / replicate: upstream's pad routes to {reflection,replication}_pad{1,2,3}d
         * by the number of padded dimensions */
        int64_t npad = args[1].u.ilist.n;
        int nd = (int)(npad / 2), in_dim = args[0].u.t->ndim;
        if (npad % 2 || nd < 1 || nd > 3)
            return tn_error(TN_ERR_RUNTIME, "Padding length must be divisible by 2");
        if (npad > 2 * in_dim)
            return tn_error(TN_ERR_RUNTIME, "Padding length should be less than or equal to two times the input "
                                            "dimension but got padding length %lld and input of dimension %d",
                            (long long)npad, in_dim);
        if (in_dim != nd + 1 && in_dim != nd + 2)
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "Padding size %lld is not supported for %dD input tensor.",
                            (long long)npad, in_dim);
        static const tn_op_id reflect[3] = {TN_OP_reflection_pad1d, TN_OP_reflection_pad2d, TN_OP_reflection_pad3d};
        static const tn_op_id replicate[3] = {TN_OP_replication_pad1d, TN_OP_replication_pad2d,
                                              TN_OP_replication_pad3d};
        tn_value a[2] = {args[0], args[1]};
        if (mode == 3) return tn_dispatch(TN_OP__pad_circular, a, rets);
        return tn_dispatch(mode == 1 ? reflect[nd - 1] : replicate[nd - 1], a, rets);
    }
    if (mode != 0)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::%s with mode '%s' is not implemented by torchnative", op,
                        mode > 0 && mode < 4 ? names[mode] : "?");
    tn_value zero = tn_value_int(0);
    return constant_pad(args[0].u.t, args[1].u.ilist.data, args[1].u.ilist.n,
                        tn_value_is_none(&args[3]) ? &zero : &args[3], rets);
}

/* aten::_pad_enum(Tensor self, SymInt[] pad, int mode, float? value=None) -> Tensor */
tn_status tn_op_pad_enum(const tn_value *args, tn_value *rets) {
    /* upstream's at::padding_mode numbers reflect 0, replicate 1, circular 2, constant 3;
     * pad_mode takes the string order (constant 0, reflect 1, replicate 2, circular 3) */
    int64_t e = args[2].u.i;
    int mode = e == 3 ? 0 : e >= 0 && e < 3 ? (int)e + 1 : -1;
    if (mode < 0) return tn_error(TN_ERR_RUNTIME, "Unrecognised padding mode %lld", (long long)e);
    return pad_mode(args, mode, "_pad_enum.default", rets);
}

/* aten::pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor */
tn_status tn_op_pad(const tn_value *args, tn_value *rets) {
    const char *m = args[2].tag == TN_V_STRING ? args[2].u.s.data : "constant";
    int64_t ml = args[2].tag == TN_V_STRING ? args[2].u.s.n : 8;
    int mode = -1;
    static const char *names[] = {"constant", "reflect", "replicate", "circular"};
    for (int i = 0; i < 4; i++)
        if ((int64_t)strlen(names[i]) == ml && !strncmp(m, names[i], (size_t)ml)) mode = i;
    if (mode < 0)
        return tn_error(TN_ERR_RUNTIME, "Unrecognised padding mode %.*s", (int)ml, m);
    return pad_mode(args, mode, "pad.default", rets);
}
