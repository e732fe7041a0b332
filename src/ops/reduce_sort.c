/* reduce_sort.c — sort, argsort and topk along one dim. NaN sorts above every number
 * (last ascending, first descending), as upstream. A stable sort keeps equal keys in index
 * order (a merge sort); an unstable one (stable=False, the default) leaves them where
 * libstdc++'s std::sort, which upstream calls, leaves them (reduce_stdsort.inc). */
#include "ops/reduce.h"

#include <stdlib.h>

#include "core/threadpool.h"

/* ---- order keys ----------------------------------------------------------------------------
 * Every element is sorted by an unsigned key whose ascending order is the wanted order and
 * whose equal keys are exactly the comparator's ties: floats by their bits made monotone,
 * -0 and +0 one key (upstream's `<` does not tell them apart), every NaN one key above +inf;
 * signed integers with the sign bit flipped. Descending order complements the key, which
 * puts NaN first, as upstream's descending comparator does. So upstream's two comparators
 * (KeyValueCompAsc / Desc) become one integer compare, inlined into the sort. */
static inline uint64_t key_ieee(uint64_t b, uint64_t sign, uint64_t inf) {
    uint64_t all = sign * 2 - 1, mag = b & (sign - 1);
    uint64_t k = (b & sign) ? ~b & all : b | sign;
    k = mag == 0 ? sign : k;
    return mag > inf ? all : k; /* selects, not branches: the fill loop vectorises */
}
#define KEY_F16(b) key_ieee(b, 0x8000u, 0x7c00u)
#define KEY_BF16(b) key_ieee(b, 0x8000u, 0x7f80u)
#define KEY_F32(b) key_ieee(b, 0x80000000u, 0x7f800000u)
#define KEY_F64(b) key_ieee(b, 1ull << 63, 0x7ffull << 52)

/* Whether a dtype's keys need 64 bits (else they fit 32). */
static bool key_wide(tn_dtype dt) { return dt == TN_DTYPE_FLOAT64 || dt == TN_DTYPE_INT64 || dt == TN_DTYPE_UINT64; }

/* The two element forms: a 32-bit key and a 32-bit index packed in one word (key high), or
 * a 64-bit key beside a 64-bit index (64-bit keys, or lanes of 2^32 elements or more). */
typedef struct sort_kv {
    uint64_t key;
    int64_t idx;
} sort_kv;

#define SS_ELEM uint64_t
#define SS_LESS(a, b) (((a) >> 32) < ((b) >> 32))
#define SS_NAME(x) packed_##x
#include "ops/reduce_stdsort.inc"

#define SS_ELEM sort_kv
#define SS_LESS(a, b) ((a).key < (b).key)
#define SS_NAME(x) kv_##x
#include "ops/reduce_stdsort.inc"

/* Fills the lane's n elements (packed when !wide) from p with stride `is` (bytes). O3: the
 * contiguous loop vectorises. */
#pragma GCC push_options
#pragma GCC optimize("O3")
static void lane_fill(const char *p, int64_t is, int64_t n, tn_dtype dt, bool desc, bool wide, void *elems) {
    uint64_t flip = desc ? (key_wide(dt) ? UINT64_MAX : UINT32_MAX) : 0;
    uint64_t *pk = elems;
    sort_kv *kv = elems;
#define FILL(T, KEY)                                                                                 \
    do {                                                                                             \
        if (!wide && is == (int64_t)sizeof(T)) /* the contiguous lane, its own loop */               \
            for (int64_t i = 0; i < n; i++) {                                                        \
                T v;                                                                                 \
                memcpy(&v, p + i * (int64_t)sizeof(T), sizeof v);                                    \
                pk[i] = ((KEY) ^ flip) << 32 | (uint64_t)i;                                          \
            }                                                                                        \
        else if (wide)                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                        \
                T v;                                                                                 \
                memcpy(&v, p + i * is, sizeof v);                                                    \
                kv[i].key = (KEY) ^ flip;                                                            \
                kv[i].idx = i;                                                                       \
            }                                                                                        \
        else                                                                                         \
            for (int64_t i = 0; i < n; i++) {                                                        \
                T v;                                                                                 \
                memcpy(&v, p + i * is, sizeof v);                                                    \
                pk[i] = ((KEY) ^ flip) << 32 | (uint64_t)i;                                          \
            }                                                                                        \
    } while (0)
    switch (dt) {
    case TN_DTYPE_FLOAT32: FILL(uint32_t, KEY_F32(v)); break;
    case TN_DTYPE_FLOAT64: FILL(uint64_t, KEY_F64(v)); break;
    case TN_DTYPE_FLOAT16: FILL(uint16_t, KEY_F16(v)); break;
    case TN_DTYPE_BFLOAT16: FILL(uint16_t, KEY_BF16(v)); break;
    case TN_DTYPE_BOOL: FILL(uint8_t, (uint64_t)(v != 0)); break;
    case TN_DTYPE_UINT8: FILL(uint8_t, (uint64_t)v); break;
    case TN_DTYPE_INT8: FILL(int8_t, (uint64_t)((uint32_t)v ^ 0x80000000u)); break;
    case TN_DTYPE_INT16: FILL(int16_t, (uint64_t)((uint32_t)v ^ 0x80000000u)); break;
    case TN_DTYPE_INT32: FILL(int32_t, (uint64_t)((uint32_t)v ^ 0x80000000u)); break;
    case TN_DTYPE_UINT16: FILL(uint16_t, (uint64_t)v); break;
    case TN_DTYPE_UINT32: FILL(uint32_t, (uint64_t)v); break;
    case TN_DTYPE_INT64: FILL(int64_t, (uint64_t)v ^ (1ull << 63)); break;
    case TN_DTYPE_UINT64: FILL(uint64_t, v); break;
    default: break; /* refused by tn_reduce_check_dtype */
    }
#undef FILL
}
#pragma GCC pop_options

/* Rewrites the sorted elements' first k indices in place as int64 (a packed element is one
 * word; a wide one is two, and slot i is written after element i is read). */
static int64_t *lane_indices(void *elems, int64_t k, bool wide) {
    int64_t *out = elems;
    for (int64_t i = 0; i < k; i++) out[i] = wide ? ((sort_kv *)elems)[i].idx : (int64_t)(((uint64_t *)elems)[i] & UINT32_MAX);
    return out;
}

static int64_t lane_off(const tn_tensor *t, int dim, int64_t k) {
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (d == dim) continue;
        off += (k % t->sizes[d]) * t->strides[d];
        k /= t->sizes[d];
    }
    return off * tn_dtype_itemsize(t->dtype);
}

/* How a lane is ordered: stably, as std::sort, or as upstream's topk (sorted or not). */
enum { ORDER_STABLE, ORDER_STD_SORT, ORDER_TOPK_SORTED, ORDER_TOPK };

typedef struct sort_job {
    tn_tensor *self, *v, *ix;
    int dim, order;
    bool desc, wide, failed;
    int64_t n, k;
} sort_job;

/* Lanes [begin, end) of a sort_job, with scratch of their own (a chunk of the pool). */
static void sort_lanes(void *ctx, int64_t begin, int64_t end) {
    sort_job *j = ctx;
    tn_tensor *self = j->self, *v = j->v, *ix = j->ix;
    int64_t n = j->n, k = j->k;
    int es = tn_dtype_itemsize(self->dtype), nd = self->ndim, dim = j->dim;
    int64_t is = (nd ? self->strides[dim] : 0) * es;
    int64_t vs = v ? (nd ? v->strides[dim] : 0) * es : 0, xs = (nd ? ix->strides[dim] : 0) * 8;
    size_t esz = j->wide ? sizeof(sort_kv) : sizeof(uint64_t);
    char *elems = malloc((size_t)n * esz * (j->order == ORDER_STABLE ? 2 : 1));
    if (!elems) { j->failed = true; return; }
    for (int64_t l = begin; l < end; l++) {
        const char *p = (const char *)tn_tensor_data(self) + (nd ? lane_off(self, dim, l) : 0);
        lane_fill(p, is, n, self->dtype, j->desc, j->wide, elems);
        /* upstream returns the identity order for a lane of stride 0 (an expanded dim) */
        if (nd && self->strides[dim] == 0 && j->order <= ORDER_STD_SORT) (void)0;
        else if (j->wide) {
            sort_kv *e = (sort_kv *)elems;
            if (j->order >= ORDER_TOPK_SORTED) kv_topk(e, n, k, j->order == ORDER_TOPK_SORTED);
            else if (j->order == ORDER_STABLE) kv_stable(e, e + n, n);
            else kv_sort(e, n);
        } else {
            uint64_t *e = (uint64_t *)elems;
            if (j->order >= ORDER_TOPK_SORTED) packed_topk(e, n, k, j->order == ORDER_TOPK_SORTED);
            else if (j->order == ORDER_STABLE) packed_stable(e, e + n, n);
            else packed_sort(e, n);
        }
        const int64_t *perm = lane_indices(elems, k, j->wide);
        char *q = (char *)tn_tensor_data(ix) + (nd ? lane_off(ix, dim, l) : 0);
        for (int64_t i = 0; i < k; i++) memcpy(q + i * xs, &perm[i], 8);
        if (!v) continue;
        char *w = (char *)tn_tensor_data(v) + (nd ? lane_off(v, dim, l) : 0);
#define COPY(T) for (int64_t i = 0; i < k; i++) memcpy(w + i * vs, p + perm[i] * is, sizeof(T))
        switch (es) {
        case 1: COPY(uint8_t); break;
        case 2: COPY(uint16_t); break;
        case 4: COPY(uint32_t); break;
        default: COPY(uint64_t); break;
        }
#undef COPY
    }
    free(elems);
}

/* Sorts every lane of self along dim and writes the first k of each into new tensors
 * (values may be NULL when only indices are wanted). Lanes run on the pool in chunks of at
 * least 32,768 / n lanes, upstream's grain for its sorting loop. */
static tn_status sort_core(tn_tensor *self, int dim, bool desc, int order, int64_t k, tn_tensor **vals, tn_tensor **idxs) {
    TN_TRY(tn_reduce_check_dtype("sort", self->dtype));
    int64_t sizes[TN_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    if (self->ndim) sizes[dim] = k;
    tn_tensor *v = NULL, *ix;
    if (vals) TN_TRY(tn_tensor_empty(self->ndim, sizes, self->dtype, tn_tensor_device(self), &v));
    tn_status st = tn_tensor_empty(self->ndim, sizes, TN_DTYPE_INT64, tn_tensor_device(self), &ix);
    if (st != TN_OK) { tn_tensor_release(v); return st; }
    int64_t numel = tn_tensor_numel(self);
    int64_t n = self->ndim ? self->sizes[dim] : 1;
    if (!tn_tensor_is_meta(self) && numel > 0 && k > 0) {
        sort_job j = {self, v, ix, dim, order, desc, key_wide(self->dtype) || n > (int64_t)UINT32_MAX, false, n, k};
        int64_t grain = 32768 / n;
        tn_parallel_for(numel / n, grain < 1 ? 1 : grain, sort_lanes, &j);
        if (j.failed) {
            tn_tensor_release(v);
            tn_tensor_release(ix);
            return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        }
    }
    if (vals) *vals = v;
    *idxs = ix;
    return TN_OK;
}

/* The stable ascending order of n integers as a least-significant-digit radix sort over
 * 8-bit digits of the order-preserving key (the value as uint64 with its sign bit flipped),
 * skipping a digit every key shares: values (when wanted) and indices of self into v / ix
 * (contiguous 1-d results). The same order as the stable merge sort, in a few passes. */
static tn_status radix_sort_1d(tn_tensor *self, tn_tensor *v, tn_tensor *ix) {
    const int64_t n = self->sizes[0];
    uint64_t *key = malloc(sizeof(uint64_t) * (size_t)n * 2);
    int64_t *id = malloc(sizeof(int64_t) * (size_t)n * 2);
    if (!key || !id) { free(key); free(id); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    const char *p = tn_tensor_data(self);
    const int es = tn_dtype_itemsize(self->dtype);
    const int64_t st = self->strides[0] * es;
    for (int64_t i = 0; i < n; i++) key[i] = (uint64_t)tn_rd_get_i(p + i * st, self->dtype) ^ (1ull << 63), id[i] = i;
    uint64_t *k0 = key, *k1 = key + n;
    int64_t *i0 = id, *i1 = id + n;
    for (int shift = 0; shift < 64; shift += 8) {
        int64_t cnt[256] = {0};
        for (int64_t i = 0; i < n; i++) cnt[(k0[i] >> shift) & 0xFF]++;
        if (cnt[(k0[0] >> shift) & 0xFF] == n) continue; /* every key has this digit */
        int64_t pos = 0;
        for (int b = 0; b < 256; b++) { int64_t c = cnt[b]; cnt[b] = pos; pos += c; }
        for (int64_t i = 0; i < n; i++) {
            int64_t at = cnt[(k0[i] >> shift) & 0xFF]++;
            k1[at] = k0[i], i1[at] = i0[i];
        }
        uint64_t *tk = k0; k0 = k1; k1 = tk;
        int64_t *ti = i0; i0 = i1; i1 = ti;
    }
    int64_t *ox = tn_tensor_data(ix);
    memcpy(ox, i0, sizeof(int64_t) * (size_t)n);
    if (v) {
        char *ov = tn_tensor_data(v);
        for (int64_t i = 0; i < n; i++) tn_rd_set_i(ov + i * es, self->dtype, (int64_t)(k0[i] ^ (1ull << 63)));
    }
    free(key);
    free(id);
    return TN_OK;
}

static tn_status sort_op(tn_tensor *self, int64_t dim_arg, bool desc, bool stable, tn_value *r, bool values) {
    int dim;
    TN_TRY(tn_wrap_dim(dim_arg, self->ndim, &dim));
    /* upstream sorts a 1-d tensor of at least 32,768 integers ascending by fbgemm's radix
     * sort (its parallel_sort1d_kernel), which is stable whatever `stable` asks, and which
     * refuses the wide unsigned types (measured on the 2.13.0 wheel: from 32,768 elements the
     * default sort's indices are the stable ones, below they are std::sort's) */
    if (self->ndim == 1 && !desc && self->sizes[0] >= 32768 && tn_dtype_is_integral(self->dtype, false)) {
        if (self->dtype == TN_DTYPE_UINT16 || self->dtype == TN_DTYPE_UINT32 || self->dtype == TN_DTYPE_UINT64)
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"parallel_sort1d_kernel\" not implemented for '%s'",
                            tn_dtype_infos[self->dtype].c10_name);
        if (!tn_tensor_is_meta(self)) {
            tn_tensor *v = NULL, *ix = NULL;
            TN_TRY(tn_reduce_check_dtype("sort", self->dtype));
            if (values) TN_TRY(tn_tensor_empty(1, self->sizes, self->dtype, tn_tensor_device(self), &v));
            tn_status st = tn_tensor_empty(1, self->sizes, TN_DTYPE_INT64, tn_tensor_device(self), &ix);
            if (st == TN_OK) st = radix_sort_1d(self, v, ix);
            if (st != TN_OK) { tn_tensor_release(v); tn_tensor_release(ix); return st; }
            if (values) { r[0] = tn_value_tensor(v); r[1] = tn_value_tensor(ix); }
            else r[0] = tn_value_tensor(ix);
            return TN_OK;
        }
        stable = true;
    }
    tn_tensor *v = NULL, *ix;
    TN_TRY(sort_core(self, dim, desc, stable ? ORDER_STABLE : ORDER_STD_SORT, self->ndim ? self->sizes[dim] : 1, values ? &v : NULL, &ix));
    if (values) { r[0] = tn_value_tensor(v); r[1] = tn_value_tensor(ix); }
    else r[0] = tn_value_tensor(ix);
    return TN_OK;
}

static bool b_arg(const tn_value *v, bool d) { return v->tag == TN_V_BOOL ? v->u.b : d; }

/* aten::sort(Tensor self, int dim=-1, bool descending=False) -> (values, indices) */
tn_status tn_op_sort(const tn_value *a, tn_value *r) { return sort_op(a[0].u.t, a[1].u.i, b_arg(&a[2], false), false, r, true); }
/* aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) */
tn_status tn_op_sort_stable(const tn_value *a, tn_value *r) { return sort_op(a[0].u.t, a[2].u.i, b_arg(&a[3], false), b_arg(&a[1], false), r, true); }
/* aten::argsort(Tensor self, int dim=-1, bool descending=False) */
tn_status tn_op_argsort(const tn_value *a, tn_value *r) { return sort_op(a[0].u.t, a[1].u.i, b_arg(&a[2], false), false, r, false); }
/* aten::argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) */
tn_status tn_op_argsort_stable(const tn_value *a, tn_value *r) { return sort_op(a[0].u.t, a[2].u.i, b_arg(&a[3], false), b_arg(&a[1], false), r, false); }

/* aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) */
tn_status tn_op_topk(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t, *v, *ix;
    int dim;
    TN_TRY(tn_wrap_dim(a[2].u.i, self->ndim, &dim));
    int64_t k = a[1].u.i, n = self->ndim ? self->sizes[dim] : 1;
    if (k < 0 || k > n) return tn_error(TN_ERR_RUNTIME, "selected index k out of range");
    if (self->dtype == TN_DTYPE_BOOL) return tn_error(TN_ERR_RUNTIME, "topk does not support bool dtypes on CPU");
    TN_TRY(sort_core(self, dim, b_arg(&a[3], true), b_arg(&a[4], true) ? ORDER_TOPK_SORTED : ORDER_TOPK, k, &v, &ix));
    r[0] = tn_value_tensor(v);
    r[1] = tn_value_tensor(ix);
    return TN_OK;
}
