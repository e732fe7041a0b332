/* shape_common.c — the shape family's shared geometry: view-size inference, the view
 * stride rule, broadcasting, the same-dtype strided copy, contiguous() and list results. */
#include "ops/shape.h"

#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/cast.h"
#include "ops/dispatch.h"
#include "ops/iter.h"

tn_status tn_view_sizes(int64_t numel, int n, const int64_t *shape, int64_t *out) {
    char buf[512];
    int infer = -1;
    int64_t known = 1;
    if (n > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions, got %d",
                        TN_MAX_DIMS, n);
    for (int i = 0; i < n; i++) {
        if (shape[i] == -1) {
            if (infer >= 0) return tn_error(TN_ERR_RUNTIME, "only one dimension can be inferred");
            infer = i;
        } else if (shape[i] >= 0) {
            known = tn_mul_wrap(known, shape[i]);
        } else {
            return tn_error(TN_ERR_RUNTIME, "invalid shape dimension %lld at index %d of shape %s",
                            (long long)shape[i], i, tn_format_sizes(n, shape, buf, sizeof buf));
        }
        out[i] = shape[i];
    }
    if (numel == known || (infer >= 0 && known > 0 && numel % known == 0)) {
        if (infer < 0) return TN_OK;
        if (known == 0)
            /* 0 elements: any value of the -1 dimension fits, so upstream refuses to guess. */
            return tn_error(TN_ERR_RUNTIME,
                            "cannot reshape tensor of 0 elements into shape %s because the unspecified "
                            "dimension size -1 can be any value and is ambiguous",
                            tn_format_sizes(n, shape, buf, sizeof buf));
        out[infer] = numel / known;
        return TN_OK;
    }
    return tn_error(TN_ERR_RUNTIME, "shape '%s' is invalid for input of size %lld",
                    tn_format_sizes(n, shape, buf, sizeof buf), (long long)numel);
}

bool tn_view_strides(int old_ndim, const int64_t *old_sizes, const int64_t *old_strides,
                     int new_ndim, const int64_t *new_sizes, int64_t *new_strides) {
    if (old_ndim == 0) {
        for (int i = 0; i < new_ndim; i++) new_strides[i] = 1;
        return true;
    }
    int64_t numel = 1;
    for (int i = 0; i < old_ndim; i++) numel *= old_sizes[i];
    if (numel == 0) {
        /* Strides of an empty tensor are arbitrary: keep them when the shape is unchanged
         * (NumPy does), otherwise use the strides resize_ would give. */
        bool same = old_ndim == new_ndim && memcmp(old_sizes, new_sizes, sizeof(int64_t) * (size_t)old_ndim) == 0;
        if (same) memcpy(new_strides, old_strides, sizeof(int64_t) * (size_t)old_ndim);
        else tn_contiguous_strides(new_ndim, new_sizes, new_strides);
        return true;
    }
    /* Walk the old dims from the innermost, cutting them into chunks that are each
     * contiguous in memory; the new dims must split into chunks of the same numels. */
    int view_d = new_ndim - 1;
    int64_t chunk_base_stride = old_strides[old_ndim - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int tensor_d = old_ndim - 1; tensor_d >= 0; tensor_d--) {
        tensor_numel *= old_sizes[tensor_d];
        bool chunk_end = tensor_d == 0 || (old_sizes[tensor_d - 1] != 1 &&
                                           old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
        if (!chunk_end) continue;
        while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
            new_strides[view_d] = view_numel * chunk_base_stride;
            view_numel *= new_sizes[view_d];
            view_d--;
        }
        if (view_numel != tensor_numel) return false;
        if (tensor_d > 0) {
            chunk_base_stride = old_strides[tensor_d - 1];
            tensor_numel = 1;
            view_numel = 1;
        }
    }
    return view_d == -1;
}

tn_status tn_shape_broadcast(int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                             int64_t *out) {
    int n = na > nb ? na : nb;
    for (int i = n - 1; i >= 0; i--) {
        int ia = i - (n - na), ib = i - (n - nb);
        int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return tn_error(TN_ERR_RUNTIME,
                            "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                            "non-singleton dimension %d", (long long)sa, (long long)sb, i);
        out[i] = sa == 1 ? sb : sa;
    }
    *nout = n;
    return TN_OK;
}

tn_status tn_shape_unexpanded_view(const tn_tensor *t, tn_tensor **out) {
    *out = NULL;
    bool any = false;
    for (int d = 0; d < t->ndim; d++) any |= t->strides[d] == 0 && t->sizes[d] > 1;
    if (!any) return TN_OK;
    if (!(*out = tn_tensor_alias(t))) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int d = 0; d < t->ndim; d++)
        if (t->strides[d] == 0) (*out)->sizes[d] = 1;
    return TN_OK;
}

tn_status tn_shape_expand_view(tn_tensor *t, int ndim, const int64_t *sizes, tn_tensor **out) {
    int64_t strides[TN_MAX_DIMS];
    char b1[256], b2[256];
    if (ndim < t->ndim) goto bad;
    for (int i = ndim - 1; i >= 0; i--) {
        int j = i - (ndim - t->ndim);
        if (j < 0) { strides[i] = 0; continue; }
        if (t->sizes[j] == sizes[i]) strides[i] = t->strides[j];
        else if (t->sizes[j] == 1) strides[i] = 0;
        else goto bad;
    }
    *out = tn_tensor_new_view(t->storage, t->offset, ndim, sizes, strides, t->dtype);
    return *out ? TN_OK : tn_error(TN_ERR_NO_MEMORY, "out of memory");
bad:
    return tn_error(TN_ERR_RUNTIME, "The expanded size of the tensor must match: cannot broadcast %s to %s",
                    tn_format_sizes(t->ndim, t->sizes, b1, sizeof b1), tn_format_sizes(ndim, sizes, b2, sizeof b2));
}

/* Per-element moves by width: a plain load/store for the common widths. */
static inline void move_elem(char *d, const char *s, int w) {
    switch (w) {
    case 1: *d = *s; break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    default: memcpy(d, s, (size_t)w); break;
    }
}

/* A coalesced copy plan: nd dims (the last the innermost), strides in elements. */
typedef struct {
    char *d;
    const char *s;
    int64_t sz[TN_STRIDED_MAX_DIMS], ds[TN_STRIDED_MAX_DIMS], ss[TN_STRIDED_MAX_DIMS];
    int nd, w;
} strided_plan;

/* Copies rows [o0, o1) of the plan (a row: the innermost dim). */
static void strided_rows(void *ctx, int64_t o0, int64_t o1) {
    const strided_plan *P = ctx;
    int nd = P->nd, w = P->w;
    int64_t inner = P->sz[nd - 1], dsi = P->ds[nd - 1] * w, ssi = P->ss[nd - 1] * w;
    bool rows = P->ds[nd - 1] == 1 && P->ss[nd - 1] == 1;
    /* the outer multi-index (dims 0..nd-2) of row o0, and its addresses */
    int64_t idx[TN_STRIDED_MAX_DIMS] = {0}, rem = o0;
    char *dp = P->d;
    const char *sp = P->s;
    for (int k = nd - 2; k >= 0; k--) {
        idx[k] = rem % P->sz[k];
        rem /= P->sz[k];
        dp += idx[k] * P->ds[k] * w;
        sp += idx[k] * P->ss[k] * w;
    }
    const int64_t a = P->ds[nd - 1], b = P->ss[nd - 1];
    for (int64_t o = o0; o < o1; o++) {
        if (rows) {
            memcpy(dp, sp, (size_t)(inner * w));
        } else if (w == 1 || w == 2 || w == 4 || w == 8) {
            /* typed rows: a reversed source (flip) or a dense destination get loops of
             * their own (a width switch per element before: flip 1.5x upstream's time) */
#define STRIDED_ROW(T)                                                                        \
    do {                                                                                      \
        T *dq = (T *)(void *)dp;                                                              \
        const T *sq = (const T *)(const void *)sp;                                            \
        if (a == 1 && b == -1) for (int64_t k = 0; k < inner; k++) dq[k] = sq[-k];           \
        else if (a == 1) for (int64_t k = 0; k < inner; k++) dq[k] = sq[k * b];              \
        else for (int64_t k = 0; k < inner; k++) dq[k * a] = sq[k * b];                      \
    } while (0)
            switch (w) {
            case 1: STRIDED_ROW(uint8_t); break;
            case 2: STRIDED_ROW(uint16_t); break;
            case 4: STRIDED_ROW(uint32_t); break;
            default: STRIDED_ROW(uint64_t); break;
            }
#undef STRIDED_ROW
        } else {
            char *dq = dp;
            const char *sq = sp;
            for (int64_t k = 0; k < inner; k++, dq += dsi, sq += ssi) move_elem(dq, sq, w);
        }
        /* Advance the outer multi-index like an odometer. */
        for (int k = nd - 2; k >= 0; k--) {
            if (++idx[k] < P->sz[k]) { dp += P->ds[k] * w; sp += P->ss[k] * w; break; }
            dp -= P->ds[k] * w * (P->sz[k] - 1);
            sp -= P->ss[k] * w * (P->sz[k] - 1);
            idx[k] = 0;
        }
    }
}

tn_status tn_shape_copy_view(tn_tensor *dst, const int64_t *dst_strides, tn_tensor *src, const int64_t *src_strides,
                             int ndim, const int64_t *sizes) {
    if (!tn_cast_supported(src->dtype)) { /* (bits and other byte types copy_ has no loop for) */
        const int w = tn_dtype_itemsize(src->dtype);
        tn_strided_copy_bytes(tn_tensor_data(dst), dst_strides, tn_tensor_data(src), src_strides, ndim, sizes, w);
        return TN_OK;
    }
    tn_tensor *sv = tn_tensor_new_view(src->storage, src->offset, ndim, sizes, src_strides, src->dtype);
    tn_tensor *dv = tn_tensor_new_view(dst->storage, dst->offset, ndim, sizes, dst_strides, dst->dtype);
    tn_status st = TN_OK;
    if (!sv || !dv) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
    else {
        tn_value a[3] = {tn_value_tensor(dv), tn_value_tensor(sv), tn_value_bool(false)}, r;
        st = tn_dispatch(TN_OP_copy_, a, &r);
        if (st == TN_OK) tn_tensor_release(r.u.t);
    }
    if (sv) tn_tensor_release(sv);
    if (dv) tn_tensor_release(dv);
    return st;
}

/* Copies of at least this many bytes are split by rows over the pool. */
#define STRIDED_PARALLEL_BYTES ((int64_t)1 << 18)

void tn_strided_copy_bytes(char *d, const int64_t *dst_strides, const char *s, const int64_t *src_strides,
                           int ndim, const int64_t *sizes, int w) {
    for (int i = 0; i < ndim; i++) /* before the count: sizes beside a 0 may multiply past int64 */
        if (sizes[i] == 0) return;
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= sizes[i];
    if (!d || !s) return;
    /* Coalesce: drop size-1 dims and merge neighbours that are contiguous in both
     * tensors, so most copies become a few long rows. */
    strided_plan P = {.d = d, .s = s, .w = w};
    int nd = 0;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 1) continue;
        if (nd > 0 && P.ds[nd - 1] == dst_strides[i] * sizes[i] && P.ss[nd - 1] == src_strides[i] * sizes[i]) {
            P.sz[nd - 1] *= sizes[i];
            P.ds[nd - 1] = dst_strides[i];
            P.ss[nd - 1] = src_strides[i];
            continue;
        }
        P.sz[nd] = sizes[i]; P.ds[nd] = dst_strides[i]; P.ss[nd] = src_strides[i];
        nd++;
    }
    if (nd == 0) { move_elem(d, s, w); return; }
    P.nd = nd;
    int64_t outer = n / P.sz[nd - 1];
    if (n * w >= STRIDED_PARALLEL_BYTES && outer > 1) {
        /* rows of at least ~64 KB per chunk, so the split pays for the hand-off */
        int64_t row_bytes = P.sz[nd - 1] * w, grain = ((int64_t)1 << 16) / (row_bytes ? row_bytes : 1);
        tn_parallel_for(outer, grain > 1 ? grain : 1, strided_rows, &P);
    } else {
        strided_rows(&P, 0, outer);
    }
}

void tn_shape_copy_same_dtype(tn_tensor *dst, const tn_tensor *src) {
    tn_strided_copy_bytes(tn_tensor_data(dst), dst->strides, tn_tensor_data(src), src->strides, dst->ndim,
                          dst->sizes, tn_dtype_itemsize(dst->dtype));
}

tn_status tn_shape_self_or_copy(tn_tensor *self, bool in_place, const tn_tensor *index, const tn_tensor *src, tn_tensor **out) {
    if (in_place) {
        if (index) TN_TRY(tn_check_no_overlap(self, index));
        if (src) TN_TRY(tn_check_no_overlap(self, src));
        tn_tensor_retain(self);
        *out = self;
        return TN_OK;
    }
    TN_TRY(tn_tensor_empty(self->ndim, self->sizes, self->dtype, tn_tensor_device(self), out));
    tn_shape_copy_same_dtype(*out, self);
    return TN_OK;
}

tn_status tn_shape_copy(tn_tensor *dst, tn_tensor *src) {
    if (tn_tensor_is_meta(dst)) return TN_OK;
    if (dst->dtype == src->dtype) {
        tn_shape_copy_same_dtype(dst, src);
        return TN_OK;
    }
    tn_value a[3] = {tn_value_tensor(dst), tn_value_tensor(src), tn_value_bool(false)};
    tn_value r[1];
    TN_TRY(tn_dispatch(TN_OP_copy_, a, r));
    tn_tensor_release(r[0].u.t);
    return TN_OK;
}

tn_status tn_tensor_contiguous(tn_tensor *t, tn_tensor **out) {
    if (tn_tensor_is_contiguous(t)) {
        tn_tensor_retain(t);
        *out = t;
        return TN_OK;
    }
    TN_TRY(tn_tensor_empty(t->ndim, t->sizes, t->dtype, tn_tensor_device(t), out));
    tn_shape_copy_same_dtype(*out, t);
    return TN_OK;
}

tn_status tn_value_tensorlist_result(tn_tensor **tensors, int64_t n, tn_value *ret) {
    tn_tensor **arr = malloc(sizeof(tn_tensor *) * (size_t)(n > 0 ? n : 1));
    if (!arr) {
        for (int64_t i = 0; i < n; i++) tn_tensor_release(tensors[i]);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    if (n) memcpy(arr, tensors, sizeof(tn_tensor *) * (size_t)n);
    ret->tag = TN_V_TENSORLIST;
    ret->u.tlist.data = arr;
    ret->u.tlist.n = n;
    return TN_OK;
}

void tn_value_release(tn_value *v) {
    if (v->tag == TN_V_TENSOR) {
        tn_tensor_release(v->u.t);
    } else if (v->tag == TN_V_TENSORLIST) {
        for (int64_t i = 0; i < v->u.tlist.n; i++) tn_tensor_release(v->u.tlist.data[i]);
        free((void *)v->u.tlist.data);
    }
    v->tag = TN_V_NONE;
}

tn_status tn_shape_empty_like(const tn_tensor *t, tn_tensor **out) {
    /* Dense and non-overlapping: the dims sorted by stride tile memory exactly. */
    int order[TN_MAX_DIMS], n = 0;
    for (int i = 0; i < t->ndim; i++)
        if (t->sizes[i] != 1) order[n++] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t->strides[order[j - 1]] > t->strides[order[j]]; j--) {
            int tmp = order[j]; order[j] = order[j - 1]; order[j - 1] = tmp;
        }
    bool dense = true;
    int64_t expected = 1;
    for (int i = 0; i < n; i++) {
        if (t->strides[order[i]] != expected) { dense = false; break; }
        expected *= t->sizes[order[i]];
    }
    if (!dense || tn_tensor_numel(t) == 0 || tn_tensor_is_contiguous(t))
        return tn_tensor_empty(t->ndim, t->sizes, t->dtype, tn_tensor_device(t), out);
    int64_t numel = tn_tensor_numel(t);
    tn_tensor *flat;
    TN_TRY(tn_tensor_empty(1, &numel, t->dtype, tn_tensor_device(t), &flat));
    *out = tn_tensor_new_view(flat->storage, 0, t->ndim, t->sizes, t->strides, t->dtype);
    tn_tensor_release(flat);
    return *out ? TN_OK : tn_error(TN_ERR_NO_MEMORY, "out of memory");
}

/* A contiguous fill's piece: elements [b, e) of the run, through a 256-byte block of the
 * repeated element (every item size divides 256), or memset for all-zero bytes. */
#define FILL_BLOCK 256
typedef struct fill_job {
    char *d;
    int w;
    bool zero;
    _Alignas(64) char block[FILL_BLOCK];
} fill_job;
static void fill_piece(void *ctx, int64_t b, int64_t e) {
    const fill_job *j = ctx;
    char *p = j->d + (size_t)b * (size_t)j->w, *end = j->d + (size_t)e * (size_t)j->w;
    if (j->zero) { memset(p, 0, (size_t)(end - p)); return; }
    for (; end - p >= FILL_BLOCK; p += FILL_BLOCK) memcpy(p, j->block, FILL_BLOCK);
    memcpy(p, j->block, (size_t)(end - p)); /* a whole number of elements: the block starts on one */
}

void tn_shape_fill_bytes(tn_tensor *t, const void *elem) {
    char *d = tn_tensor_data(t);
    int64_t n = tn_tensor_numel(t);
    if (!d || n == 0) return;
    int w = tn_dtype_itemsize(t->dtype);
    if (tn_tensor_is_contiguous(t) && FILL_BLOCK % w == 0) {
        /* on the pool from 256 KiB (as fill_'s loops): a factory's fresh storage is written
         * once here (ones / full of 1e6 floats: 101 us on one thread, 25 on two) */
        fill_job j = {.d = d, .w = w, .zero = true};
        for (int i = 0; i < w; i++) j.zero = j.zero && ((const char *)elem)[i] == 0;
        for (int k = 0; k < FILL_BLOCK; k += w) memcpy(j.block + k, elem, (size_t)w);
        tn_parallel_for(n, (256 << 10) / w, fill_piece, &j);
        return;
    }
    /* Fill one element, then copy it over the rest with stride 0 as the source. */
    int64_t zero[TN_MAX_DIMS] = {0};
    tn_strided_copy_bytes(d, t->strides, elem, zero, t->ndim, t->sizes, w);
}
