/* shape_index.c — data-dependent indexing: index_select, gather/scatter (+ reductions),
 * advanced indexing (index.Tensor, index_put_), masked_select/masked_scatter, nonzero,
 * where(cond), take, take_along_dim, repeat_interleave. Elements move by bytes; the few
 * reductions (scatter add/multiply/mean/amax/amin, index_put_ accumulate) combine in the
 * element's own type, as upstream's CPU loops do. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "ops/dispatch.h"
#include "ops/iter.h"
#include "ops/shape.h"
#include "ops/scalar_convert.h"

#define SIZES_BUF 512

static tn_status oom(void) { return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }

/* ---- element combination ------------------------------------------------------------ */

typedef enum { RED_ASSIGN, RED_ADD, RED_MUL, RED_MEAN, RED_AMAX, RED_AMIN } red_op;

#define COMBINE_ARITH(T, d, s, op)                                          \
    do {                                                                    \
        T a_, b_;                                                           \
        memcpy(&a_, d, sizeof(T));                                          \
        memcpy(&b_, s, sizeof(T));                                          \
        switch (op) {                                                       \
        case RED_ADD: case RED_MEAN: a_ = (T)(a_ + b_); break;              \
        case RED_MUL: a_ = (T)(a_ * b_); break;                             \
        case RED_AMAX: a_ = (b_ != b_) ? b_ : (a_ < b_ ? b_ : a_); break;   \
        case RED_AMIN: a_ = (b_ != b_) ? b_ : (b_ < a_ ? b_ : a_); break;   \
        default: a_ = b_; break;                                            \
        }                                                                   \
        memcpy(d, &a_, sizeof(T));                                          \
    } while (0)

/* d = d (op) s for one element of dtype dt. Reduced floats compute in float and round
 * back once per step, as c10::Half / BFloat16 arithmetic does. */
static void combine(tn_dtype dt, char *d, const char *s, red_op op) {
    if (op == RED_ASSIGN) { memcpy(d, s, (size_t)tn_dtype_itemsize(dt)); return; }
    switch (dt) {
    case TN_DTYPE_FLOAT32: COMBINE_ARITH(float, d, s, op); break;
    case TN_DTYPE_FLOAT64: COMBINE_ARITH(double, d, s, op); break;
    case TN_DTYPE_INT64: COMBINE_ARITH(int64_t, d, s, op); break;
    case TN_DTYPE_INT32: COMBINE_ARITH(int32_t, d, s, op); break;
    case TN_DTYPE_INT16: COMBINE_ARITH(int16_t, d, s, op); break;
    case TN_DTYPE_INT8: COMBINE_ARITH(int8_t, d, s, op); break;
    case TN_DTYPE_UINT8: COMBINE_ARITH(uint8_t, d, s, op); break;
    case TN_DTYPE_BOOL: {
        /* bool + bool and bool * bool are logical or / and. */
        uint8_t a = *(uint8_t *)d, b = *(const uint8_t *)s;
        if (op == RED_ADD || op == RED_MEAN || op == RED_AMAX) a = a || b;
        else a = a && b;
        *(uint8_t *)d = a;
        break;
    }
    case TN_DTYPE_FLOAT16:
    case TN_DTYPE_BFLOAT16: {
        uint16_t ha, hb;
        memcpy(&ha, d, 2);
        memcpy(&hb, s, 2);
        bool h = dt == TN_DTYPE_FLOAT16;
        float a = h ? tn_half_to_f32(ha) : tn_bf16_to_f32(ha), b = h ? tn_half_to_f32(hb) : tn_bf16_to_f32(hb);
        char fa[4], fb[4];
        memcpy(fa, &a, 4);
        memcpy(fb, &b, 4);
        COMBINE_ARITH(float, fa, fb, op);
        memcpy(&a, fa, 4);
        ha = h ? tn_f32_to_half(a) : tn_f32_to_bf16(a);
        memcpy(d, &ha, 2);
        break;
    }
    case TN_DTYPE_COMPLEX64: {
        float a[2], b[2];
        memcpy(a, d, 8);
        memcpy(b, s, 8);
        if (op == RED_MUL) { float re = a[0] * b[0] - a[1] * b[1]; a[1] = a[0] * b[1] + a[1] * b[0]; a[0] = re; }
        else { a[0] += b[0]; a[1] += b[1]; }
        memcpy(d, a, 8);
        break;
    }
    case TN_DTYPE_COMPLEX128: {
        double a[2], b[2];
        memcpy(a, d, 16);
        memcpy(b, s, 16);
        if (op == RED_MUL) { double re = a[0] * b[0] - a[1] * b[1]; a[1] = a[0] * b[1] + a[1] * b[0]; a[0] = re; }
        else { a[0] += b[0]; a[1] += b[1]; }
        memcpy(d, a, 16);
        break;
    }
    default: memcpy(d, s, (size_t)tn_dtype_itemsize(dt)); break;
    }
}

/* Whether a reduction is defined for dt (upstream dispatches these ops over numbers). */
static tn_status check_reducible(tn_dtype dt, red_op op, const char *opname) {
    char k = tn_dtype_infos[dt].kind;
    bool ok = k == 'i' || k == 'u' || k == 'b' || dt == TN_DTYPE_FLOAT32 || dt == TN_DTYPE_FLOAT64 ||
              dt == TN_DTYPE_FLOAT16 || dt == TN_DTYPE_BFLOAT16 ||
              ((dt == TN_DTYPE_COMPLEX64 || dt == TN_DTYPE_COMPLEX128) && (op == RED_ADD || op == RED_MUL));
    if (op == RED_ASSIGN || ok) return TN_OK;
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", opname, tn_dtype_infos[dt].c10_name);
}

/* mean's last step: divide by the count (floor division for integers, as upstream). */
static void divide_by(tn_dtype dt, char *d, int64_t c) {
    switch (dt) {
    case TN_DTYPE_FLOAT32: { float v; memcpy(&v, d, 4); v /= (float)c; memcpy(d, &v, 4); break; }
    case TN_DTYPE_FLOAT64: { double v; memcpy(&v, d, 8); v /= (double)c; memcpy(d, &v, 8); break; }
    case TN_DTYPE_FLOAT16: { uint16_t h; memcpy(&h, d, 2); h = tn_f32_to_half(tn_half_to_f32(h) / (float)c); memcpy(d, &h, 2); break; }
    case TN_DTYPE_BFLOAT16: { uint16_t h; memcpy(&h, d, 2); h = tn_f32_to_bf16(tn_bf16_to_f32(h) / (float)c); memcpy(d, &h, 2); break; }
#define FLOOR_DIV(T)                                                  \
    {                                                                 \
        T v;                                                          \
        memcpy(&v, d, sizeof(T));                                     \
        int64_t q = (int64_t)v / c, r = (int64_t)v % c;               \
        if (r != 0 && ((r < 0) != (c < 0))) q--;                      \
        v = (T)q;                                                     \
        memcpy(d, &v, sizeof(T));                                     \
        break;                                                        \
    }
    case TN_DTYPE_INT64: FLOOR_DIV(int64_t)
    case TN_DTYPE_INT32: FLOOR_DIV(int32_t)
    case TN_DTYPE_INT16: FLOOR_DIV(int16_t)
    case TN_DTYPE_INT8: FLOOR_DIV(int8_t)
    case TN_DTYPE_UINT8: FLOOR_DIV(uint8_t)
#undef FLOOR_DIV
    default: break;
    }
}

/* Reads element i (by element offset) of an int32/int64/uint8/bool index as int64. */
static inline int64_t read_index(const tn_tensor *t, const char *base, int64_t off) {
    switch (t->dtype) {
    case TN_DTYPE_INT64: { int64_t v; memcpy(&v, base + off * 8, 8); return v; }
    case TN_DTYPE_INT32: { int32_t v; memcpy(&v, base + off * 4, 4); return v; }
    case TN_DTYPE_INT16: { int16_t v; memcpy(&v, base + off * 2, 2); return v; }
    case TN_DTYPE_INT8: return ((const int8_t *)base)[off];
    default: return ((const uint8_t *)base)[off];
    }
}

/* Element offsets of a tensor's elements in row-major order of its shape, one at a time. */
typedef struct {
    int ndim;
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS], idx[TN_MAX_DIMS];
    int64_t off;
} walker;

static void walker_init(walker *w, int ndim, const int64_t *sizes, const int64_t *strides, int64_t off) {
    w->ndim = ndim;
    for (int i = 0; i < ndim; i++) { w->sizes[i] = sizes[i]; w->strides[i] = strides[i]; w->idx[i] = 0; }
    w->off = off;
}

static inline void walker_next(walker *w) {
    for (int k = w->ndim - 1; k >= 0; k--) {
        if (++w->idx[k] < w->sizes[k]) { w->off += w->strides[k]; return; }
        w->off -= w->strides[k] * (w->sizes[k] - 1);
        w->idx[k] = 0;
    }
}

static tn_status refuse_meta(const char *op) {
    return tn_error(TN_ERR_NOT_IMPLEMENTED,
                    "aten::%s on meta tensors (data-dependent output shape) is not implemented by torchnative", op);
}

/* ---- nonzero / where / masked_select ------------------------------------------------ */

/* How an element tests nonzero, as elem_nonzero: `units` words of `width` bytes, any of
 * them nonzero under `mask` (a float's sign bit is masked off; complex is two words). */
typedef struct { int width, units; uint64_t mask; } nz_test;

static nz_test nz_test_of(tn_dtype dt) {
    switch (dt) {
    case TN_DTYPE_FLOAT32: return (nz_test){4, 1, 0x7FFFFFFFu};
    case TN_DTYPE_FLOAT64: return (nz_test){8, 1, 0x7FFFFFFFFFFFFFFFull};
    case TN_DTYPE_FLOAT16: case TN_DTYPE_BFLOAT16: return (nz_test){2, 1, 0x7FFFu};
    case TN_DTYPE_COMPLEX64: return (nz_test){4, 2, 0x7FFFFFFFu};
    case TN_DTYPE_COMPLEX128: return (nz_test){8, 2, 0x7FFFFFFFFFFFFFFFull};
    case TN_DTYPE_INT16: case TN_DTYPE_UINT16: return (nz_test){2, 1, 0xFFFFu};
    case TN_DTYPE_INT32: case TN_DTYPE_UINT32: return (nz_test){4, 1, 0xFFFFFFFFu};
    case TN_DTYPE_INT64: case TN_DTYPE_UINT64: return (nz_test){8, 1, ~0ull};
    default: return (nz_test){1, tn_dtype_itemsize(dt), 0xFF}; /* any bit of any byte */
    }
}

/* Nonzero elements among n elements `step` bytes apart from p, one typed loop per width. */
static int64_t nz_count_row(nz_test t, const char *p, int64_t n, int64_t step) {
    int64_t c = 0;
#define NZ_ROW(T)                                                                   \
    for (int64_t i = 0; i < n; i++, p += step) {                                    \
        T any = 0, u;                                                               \
        for (int k = 0; k < t.units; k++) { memcpy(&u, p + k * sizeof(T), sizeof(T)); any |= u; } \
        c += (any & (T)t.mask) != 0;                                                \
    }
    switch (t.width) {
    case 1: if (t.units == 1) { for (int64_t i = 0; i < n; i++, p += step) c += *p != 0; } else { NZ_ROW(uint8_t) } break;
    case 2: NZ_ROW(uint16_t) break;
    case 4: NZ_ROW(uint32_t) break;
    default: NZ_ROW(uint64_t) break;
    }
#undef NZ_ROW
    return c;
}

/* Whether an element is nonzero: any bit set apart from a float's sign bit. */
static bool elem_nonzero(tn_dtype dt, const char *p) { return nz_count_row(nz_test_of(dt), p, 1, 0) != 0; }

/* Nonzero elements of t, visiting each distinct element once: size-1 dimensions drop out,
 * a zero-stride dimension multiplies the count of the rest by its size (an expanded view
 * of 2^31 elements answers at once, as upstream's parallel scan does in about a second),
 * dimensions contiguous with the next merge, and the innermost runs as one typed loop. */
static int64_t nz_count(const tn_tensor *t) {
    int w = tn_dtype_itemsize(t->dtype), m = 0;
    int64_t sz[TN_MAX_DIMS], st[TN_MAX_DIMS], mult = 1;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 0) return 0;
        if (t->sizes[d] == 1) continue;
        if (t->strides[d] == 0) { mult *= t->sizes[d]; continue; }
        if (m > 0 && st[m - 1] == t->strides[d] * t->sizes[d]) { sz[m - 1] *= t->sizes[d]; st[m - 1] = t->strides[d]; continue; }
        sz[m] = t->sizes[d];
        st[m++] = t->strides[d];
    }
    nz_test tt = nz_test_of(t->dtype);
    const char *base = tn_tensor_data(t);
    if (m == 0) return mult * nz_count_row(tt, base, 1, w);
    int64_t rows = 1, c = 0;
    for (int d = 0; d < m - 1; d++) rows *= sz[d];
    walker it;
    walker_init(&it, m - 1, sz, st, 0);
    for (int64_t r = 0; r < rows; r++, walker_next(&it))
        c += nz_count_row(tt, base + it.off * w, sz[m - 1], st[m - 1] * w);
    return mult * c;
}

/* Row-major coordinates of t's nonzero elements as a (nnz, ndim) int64 tensor laid out
 * like upstream's CPU result (strides (1, nnz)). */
static tn_status nonzero_of(tn_tensor *t, tn_tensor **out) {
    if (tn_tensor_is_meta(t)) return refuse_meta("nonzero.default");
    int64_t numel = tn_tensor_numel(t), nnz = numel ? nz_count(t) : 0;
    int w = tn_dtype_itemsize(t->dtype), nd = t->ndim;
    const char *base = tn_tensor_data(t);
    int64_t sizes[2] = {nd, nnz};
    tn_tensor *buf;
    TN_TRY(tn_tensor_empty(2, sizes, TN_DTYPE_INT64, tn_tensor_device(t), &buf));
    int64_t *o = tn_tensor_data(buf), k = 0;
    if (nd >= 1 && nnz > 0 && tn_tensor_is_contiguous(t) && (w == 1 || t->dtype == TN_DTYPE_FLOAT32)) {
        /* contiguous bytes (bool, the 8-bit integers) or float32: a row of the last dim at a
         * time, its test inline (before: a test call per element, 3.8x upstream's time) */
        const int64_t last = t->sizes[nd - 1], rows = numel / last;
        int64_t idx[TN_MAX_DIMS] = {0};
        enum { NZ_BLOCK = 512 };
        int64_t jb[NZ_BLOCK]; /* a block's nonzero columns, gathered without a branch */
        for (int64_t r = 0; r < rows; r++) {
            const char *row = base + r * last * w;
            for (int64_t j0 = 0; j0 < last; j0 += NZ_BLOCK) {
                const int64_t j1 = j0 + NZ_BLOCK < last ? j0 + NZ_BLOCK : last;
                int64_t c = 0;
                if (w == 1)
                    for (int64_t j = j0; j < j1; j++) { jb[c] = j; c += row[j] != 0; }
                else
                    for (int64_t j = j0; j < j1; j++) { jb[c] = j; c += ((const float *)row)[j] != 0.0f; }
                for (int d = 0; d < nd - 1; d++)
                    for (int64_t q = 0; q < c; q++) o[d * nnz + k + q] = idx[d];
                memcpy(o + (nd - 1) * nnz + k, jb, (size_t)c * sizeof(int64_t));
                k += c;
            }
            for (int d = nd - 2; d >= 0; d--) { if (++idx[d] < t->sizes[d]) break; idx[d] = 0; }
        }
        numel = 0; /* done */
    }
    walker it;
    walker_init(&it, nd, t->sizes, t->strides, 0);
    for (int64_t i = 0; i < numel && k < nnz; i++, walker_next(&it)) {
        if (!elem_nonzero(t->dtype, base + it.off * w)) continue;
        for (int d = 0; d < nd; d++) o[d * nnz + k] = it.idx[d];
        k++;
    }
    int64_t osizes[2] = {nnz, nd}, ostrides[2] = {1, nnz};
    *out = tn_tensor_new_view(buf->storage, 0, 2, osizes, ostrides, TN_DTYPE_INT64);
    tn_tensor_release(buf);
    return *out ? TN_OK : oom();
}

/* aten::nonzero(Tensor self) -> Tensor */
tn_status tn_op_nonzero(const tn_value *args, tn_value *rets) {
    tn_tensor *out;
    TN_TRY(nonzero_of(args[0].u.t, &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::where(Tensor condition) -> Tensor[]: nonzero(condition) split into columns
 * (views of one nonzero result, as upstream's unbind gives); 0-D counts as 1-D. */
tn_status tn_op_where(const tn_value *args, tn_value *rets) {
    tn_tensor *c = args[0].u.t, *nz;
    tn_tensor *c1 = c;
    int64_t one = 1, st1 = 1;
    if (c->ndim == 0) {
        c1 = tn_tensor_new_view(c->storage, c->offset, 1, &one, &st1, c->dtype);
        if (!c1) return oom();
    }
    tn_status st = nonzero_of(c1, &nz);
    if (c1 != c) tn_tensor_release(c1);
    TN_TRY(st);
    int64_t nd = nz->sizes[1];
    tn_tensor *cols[TN_MAX_DIMS];
    for (int64_t j = 0; j < nd; j++) {
        cols[j] = tn_tensor_new_view(nz->storage, nz->offset + j * nz->strides[1], 1, &nz->sizes[0], &nz->strides[0],
                                     TN_DTYPE_INT64);
        if (!cols[j]) {
            for (int64_t k = 0; k < j; k++) tn_tensor_release(cols[k]);
            tn_tensor_release(nz);
            return oom();
        }
    }
    tn_tensor_release(nz);
    return tn_value_tensorlist_result(cols, nd, &rets[0]);
}

/* Upstream's GRAIN_SIZE: from this many elements its masked_select takes the parallel path. */
#define MASKED_SELECT_GRAIN 32768

/* aten::masked_select(Tensor self, Tensor mask) -> Tensor: the elements where the
 * (broadcast) mask is true, as a 1-D tensor in row-major order. */
tn_status tn_op_masked_select(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *mask = args[1].u.t;
    if (mask->dtype != TN_DTYPE_BOOL) return tn_error(TN_ERR_RUNTIME, "masked_select: expected BoolTensor for mask");
    int n;
    int64_t shape[TN_MAX_DIMS];
    TN_TRY(tn_shape_broadcast(mask->ndim, mask->sizes, self->ndim, self->sizes, &n, shape));
    if (tn_tensor_is_meta(self) || tn_tensor_is_meta(mask)) return refuse_meta("masked_select.default");
    tn_tensor *s, *m;
    TN_TRY(tn_shape_expand_view(self, n, shape, &s));
    tn_status st = tn_shape_expand_view(mask, n, shape, &m);
    if (st != TN_OK) { tn_tensor_release(s); return st; }
    int64_t numel = 1, cnt = 0;
    for (int i = 0; i < n; i++) numel *= shape[i];
    if (numel >= MASKED_SELECT_GRAIN) {
        /* Upstream's parallel kernel (inputs of a grain or more, or not contiguous) holds
         * an int64 prefix sum of the broadcast shape; ours needs none, but a shape that
         * cannot be held fails here as there (RuntimeError: the storage size overflows,
         * or the allocation fails) instead of scanning 2**62 elements of an expanded view. */
        tn_tensor *scratch;
        st = tn_tensor_empty(1, &numel, TN_DTYPE_INT64, tn_tensor_device(self), &scratch);
        if (st != TN_OK) { tn_tensor_release(s); tn_tensor_release(m); return st; }
        tn_tensor_release(scratch);
    }
    const uint8_t *mp = tn_tensor_data(m);
    const int w = tn_dtype_itemsize(self->dtype);
    /* both contiguous (the common self[mask] of one shape): a count over the bytes, then
     * blocks gathered into a buffer without a branch (a random mask mispredicts half its
     * elements) and copied out; 2.4x upstream's time at 1e6 elements before */
    const bool dense = tn_tensor_is_contiguous(s) && tn_tensor_is_contiguous(m) && (w == 1 || w == 2 || w == 4 || w == 8);
    walker wm, ws;
    if (dense) {
        for (int64_t i = 0; i < numel; i++) cnt += mp[i] != 0;
    } else {
        walker_init(&wm, n, m->sizes, m->strides, 0);
        for (int64_t i = 0; i < numel; i++, walker_next(&wm)) cnt += mp[wm.off] != 0;
    }
    tn_tensor *out;
    st = tn_tensor_empty(1, &cnt, self->dtype, tn_tensor_device(self), &out);
    if (st == TN_OK) {
        char *o = tn_tensor_data(out);
        const char *sp = tn_tensor_data(s);
        if (dense && cnt > 0) { /* (an empty result has no data to copy into) */
            enum { MS_BLOCK = 256 };
            _Alignas(64) char buf[MS_BLOCK * 8];
#define MS_GATHER(T)                                                                          \
    for (int64_t b = 0; b < numel; b += MS_BLOCK) {                                           \
        const int64_t e = b + MS_BLOCK < numel ? b + MS_BLOCK : numel;                        \
        int64_t c = 0;                                                                        \
        for (int64_t i = b; i < e; i++) { ((T *)buf)[c] = ((const T *)sp)[i]; c += mp[i] != 0; } \
        memcpy(o, buf, (size_t)c * sizeof(T));                                                \
        o += c * (int64_t)sizeof(T);                                                          \
    }
            switch (w) {
            case 1: MS_GATHER(uint8_t) break;
            case 2: MS_GATHER(uint16_t) break;
            case 4: MS_GATHER(uint32_t) break;
            default: MS_GATHER(uint64_t) break;
            }
#undef MS_GATHER
        } else if (!dense) {
            walker_init(&wm, n, m->sizes, m->strides, 0);
            walker_init(&ws, n, s->sizes, s->strides, 0);
            for (int64_t i = 0; i < numel; i++, walker_next(&wm), walker_next(&ws))
                if (mp[wm.off]) { memcpy(o, sp + ws.off * w, (size_t)w); o += w; }
        }
        rets[0] = tn_value_tensor(out);
    }
    tn_tensor_release(s);
    tn_tensor_release(m);
    return st;
}

/* aten::masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor: a contiguous
 * copy of self (broadcast with mask) whose masked elements take source's elements in order. */
tn_status tn_op_masked_scatter(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *mask = args[1].u.t, *src = args[2].u.t;
    if (mask->dtype != TN_DTYPE_BOOL)
        return tn_error(TN_ERR_RUNTIME, "masked_scatter_ only supports boolean masks, but got mask with dtype %s",
                        tn_dtype_infos[mask->dtype].c10_name);
    if (self->dtype != src->dtype)
        return tn_error(TN_ERR_RUNTIME, "masked_scatter: expected self and source to have same dtypes but got%s and %s",
                        tn_dtype_infos[self->dtype].c10_name, tn_dtype_infos[src->dtype].c10_name);
    int n;
    int64_t shape[TN_MAX_DIMS];
    TN_TRY(tn_shape_broadcast(mask->ndim, mask->sizes, self->ndim, self->sizes, &n, shape));
    tn_tensor *s, *m, *out;
    TN_TRY(tn_shape_expand_view(self, n, shape, &s));
    tn_status st = tn_shape_expand_view(mask, n, shape, &m);
    if (st != TN_OK) { tn_tensor_release(s); return st; }
    st = tn_tensor_empty(n, shape, self->dtype, tn_tensor_device(self), &out);
    if (st == TN_OK && !tn_tensor_is_meta(out)) {
        tn_shape_copy_same_dtype(out, s);
        int w = tn_dtype_itemsize(self->dtype);
        int64_t numel = tn_tensor_numel(out), used = 0, avail = tn_tensor_numel(src);
        const uint8_t *mp = tn_tensor_data(m);
        char *o = tn_tensor_data(out);
        const char *sp = tn_tensor_data(src);
        walker wm, wsrc;
        walker_init(&wm, n, m->sizes, m->strides, 0);
        walker_init(&wsrc, src->ndim, src->sizes, src->strides, 0);
        for (int64_t i = 0; i < numel; i++, walker_next(&wm)) {
            if (!mp[wm.off]) continue;
            if (used >= avail) {
                st = tn_error(TN_ERR_RUNTIME, "Number of elements of source < number of ones in mask");
                break;
            }
            memcpy(o + i * w, sp + wsrc.off * w, (size_t)w);
            walker_next(&wsrc);
            used++;
        }
        if (st != TN_OK) tn_tensor_release(out);
    }
    if (st == TN_OK) rets[0] = tn_value_tensor(out);
    tn_tensor_release(s);
    tn_tensor_release(m);
    return st;
}

/* ---- index_select ------------------------------------------------------------------- */

/* Copies self.select(d, idx[k]) into out.select(d, k) for each k (indices pre-checked), the
 * slices on the pool; with d the last dim of a contiguous self and out, row by row instead
 * (each output row gathers from its input row: a column slice strides across the whole
 * tensor). Before: one slice after another on one thread, 2x upstream's time for an
 * embedding lookup and 4x for columns. */
typedef struct sel_job {
    tn_tensor *out, *self;
    int d, k, w;
    const int64_t *idx;
    int64_t n, sz[TN_MAX_DIMS], ost[TN_MAX_DIMS], sst[TN_MAX_DIMS];
} sel_job;

static void sel_slices(void *p, int64_t b, int64_t e) {
    const sel_job *j = p;
    char *o = tn_tensor_data(j->out);
    const char *s = tn_tensor_data(j->self);
    for (int64_t r = b; r < e; r++)
        tn_strided_copy_bytes(o + r * j->out->strides[j->d] * j->w, j->ost, s + j->idx[r] * j->self->strides[j->d] * j->w, j->sst,
                              j->k, j->sz, j->w);
}

static void sel_last_rows(void *p, int64_t b, int64_t e) {
    const sel_job *j = p;
    const int64_t in_w = j->self->sizes[j->d];
    for (int64_t r = b; r < e; r++) {
        char *o = (char *)tn_tensor_data(j->out) + r * j->n * j->w;
        const char *s = (const char *)tn_tensor_data(j->self) + r * in_w * j->w;
        if (j->w == 4) for (int64_t c = 0; c < j->n; c++) ((uint32_t *)o)[c] = ((const uint32_t *)s)[j->idx[c]];
        else if (j->w == 8) for (int64_t c = 0; c < j->n; c++) ((uint64_t *)o)[c] = ((const uint64_t *)s)[j->idx[c]];
        else for (int64_t c = 0; c < j->n; c++) memcpy(o + c * j->w, s + j->idx[c] * j->w, (size_t)j->w);
    }
}

/* dense self and out: blocks [b, e) of (outer o, position k), each the inner elements at
 * self[o, idx[k]] (sz[0] outer, sz[1] inner); one element by type (a strided copy call
 * per index before: a 1-d index_select took 10x upstream's time) */
static void sel_blocks(void *p, int64_t b, int64_t e) {
    const sel_job *j = p;
    const int64_t inner = j->sz[1], in_d = j->self->sizes[j->d], bytes = inner * j->w, n = j->n;
    char *o = tn_tensor_data(j->out);
    const char *s = tn_tensor_data(j->self);
    int64_t oo = b / n, k = b % n;
    for (int64_t t = b; t < e; oo++, k = 0) {
        const int64_t kend = k + (e - t) < n ? k + (e - t) : n, base = oo * in_d;
        const int64_t *ix = j->idx;
        if (j->w == 8 && inner == 1)
            for (int64_t q = k; q < kend; q++) ((uint64_t *)o)[t + q - k] = ((const uint64_t *)s)[base + ix[q]];
        else if (j->w == 4 && inner == 1)
            for (int64_t q = k; q < kend; q++) ((uint32_t *)o)[t + q - k] = ((const uint32_t *)s)[base + ix[q]];
        else
            for (int64_t q = k; q < kend; q++)
                memcpy(o + (t + q - k) * bytes, s + (base + ix[q]) * bytes, (size_t)bytes);
        t += kend - k;
    }
}

static void select_rows(tn_tensor *out, tn_tensor *self, int d, const int64_t *idx, int64_t n) {
    if (!tn_tensor_data(out) || !tn_tensor_data(self)) return;
    sel_job j = {out, self, d, 0, tn_dtype_itemsize(self->dtype), idx, n, {0}, {0}, {0}};
    int64_t slice = 1;
    for (int i = 0; i < self->ndim; i++) {
        if (i == d) continue;
        j.sz[j.k] = out->sizes[i], j.ost[j.k] = out->strides[i], j.sst[j.k] = self->strides[i];
        slice *= out->sizes[i];
        j.k++;
    }
    if (d == self->ndim - 1 && self->ndim > 1 && tn_tensor_is_contiguous(self) && tn_tensor_is_contiguous(out) && n > 0) {
        tn_parallel_for(slice, 32768 / n + 1, sel_last_rows, &j);
        return;
    }
    if (tn_tensor_is_contiguous(self) && tn_tensor_is_contiguous(out) && n > 0 && slice > 0) {
        /* dense both: out[o, k, :] = self[o, idx[k], :], a block per (o, k) */
        int64_t inner = 1;
        for (int i = d + 1; i < self->ndim; i++) inner *= self->sizes[i];
        j.sz[0] = slice / inner; /* outer */
        j.sz[1] = inner;
        tn_parallel_for(j.sz[0] * n, 32768 / inner + 1, sel_blocks, &j);
        return;
    }
    tn_parallel_for(n, 32768 / (slice > 0 ? slice : 1) + 1, sel_slices, &j);
}

/* Reads a 0-D/1-D integer index tensor into a malloc'd int64 array. */
static tn_status read_index_vector(const tn_tensor *index, int64_t **out, int64_t *n) {
    *n = tn_tensor_numel(index);
    *out = malloc(sizeof(int64_t) * (size_t)(*n > 0 ? *n : 1));
    if (!*out) return oom();
    const char *p = tn_tensor_data(index);
    int64_t st = index->ndim ? index->strides[0] : 0;
    if (p && index->dtype == TN_DTYPE_INT64 && (st == 1 || *n <= 1)) {
        if (*n > 0) memcpy(*out, p, sizeof(int64_t) * (size_t)*n);
        return TN_OK;
    }
    for (int64_t i = 0; i < *n; i++) (*out)[i] = p ? read_index(index, p, i * st) : 0;
    return TN_OK;
}

static tn_status index_select_of(tn_tensor *self, int64_t dim, tn_tensor *index, tn_tensor **result) {
    int d;
    TN_TRY(tn_wrap_dim(dim, self->ndim, &d));
    if (index->ndim > 1) return tn_error(TN_ERR_INDEX, "index_select(): Index is supposed to be a vector");
    if (index->dtype != TN_DTYPE_INT64 && index->dtype != TN_DTYPE_INT32)
        return tn_error(TN_ERR_RUNTIME, "index_select(): Expected dtype int32 or int64 for index");
    int64_t n = tn_tensor_numel(index), *idx;
    if (self->ndim == 0) {
        if (n != 1)
            return tn_error(TN_ERR_RUNTIME, "index_select(): Index to scalar can have only 1 value, got %lld value(s)",
                            (long long)n);
    }
    int64_t sizes[TN_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof sizes);
    if (self->ndim) sizes[d] = n;
    tn_tensor *out;
    TN_TRY(tn_tensor_empty(self->ndim, sizes, self->dtype, tn_tensor_device(self), &out));
    if (tn_tensor_is_meta(out) || tn_tensor_is_meta(index)) { *result = out; return TN_OK; }
    tn_status st = read_index_vector(index, &idx, &n);
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    int64_t lim = self->ndim ? self->sizes[d] : 1;
    bool any_bad = false; /* a branch-free scan first; the message from the first after */
    for (int64_t i = 0; i < n; i++) any_bad |= (uint64_t)idx[i] >= (uint64_t)lim;
    for (int64_t i = 0; any_bad && i < n && st == TN_OK; i++)
        if (idx[i] < 0 || idx[i] >= lim)
            /* upstream's dim-1 fast path checks with its own RuntimeError; every other
             * path raises IndexError */
            st = self->ndim > 1 && d == 1
                     ? tn_error(TN_ERR_RUNTIME, "INDICES element is out of DATA bounds, id=%lld axis_dim=%lld",
                                       (long long)idx[i], (long long)lim)
                            : tn_error(TN_ERR_INDEX, "index out of range in self");
    if (st == TN_OK) {
        if (self->ndim) select_rows(out, self, d, idx, n);
        else tn_shape_copy_same_dtype(out, self);
        *result = out;
    } else {
        tn_tensor_release(out);
    }
    free(idx);
    return st;
}

/* aten::index_select(Tensor self, int dim, Tensor index) -> Tensor */
tn_status tn_op_index_select(const tn_value *args, tn_value *rets) {
    tn_tensor *out;
    TN_TRY(index_select_of(args[0].u.t, args[1].u.i, args[2].u.t, &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- gather / scatter --------------------------------------------------------------- */

static int64_t size_or_1(const tn_tensor *t, int d) { return t->ndim ? t->sizes[d] : 1; }
static int64_t stride_or_0(const tn_tensor *t, int d) { return t->ndim ? t->strides[d] : 0; }

static tn_status check_index_dtype(const tn_tensor *index, const char *method) {
    /* upstream checks the dtype only of an index with elements: an empty index of any dtype passes */
    if (tn_tensor_numel(index) != 0 && index->dtype != TN_DTYPE_INT64 && index->dtype != TN_DTYPE_INT32)
        return tn_error(TN_ERR_RUNTIME, "%s(): Expected dtype int32/int64 for index", method);
    return TN_OK;
}

/* What the walk does at each index element: a callback, or one of the common cases inline
 * (a copy of an element of 4 / 8 bytes, or float32 scatter_add) */
typedef void (*gs_fn)(void *ctx, int64_t self_off, int64_t other_off);
typedef enum { GS_CALL, GS_GATHER, GS_SCATTER_SET, GS_SCATTER_ADD_F32 } gs_kind;

typedef struct {
    tn_dtype dt;
    int w;
    char *self_base;        /* storage base of the tensor written (scatter) or read (gather) */
    char *other_base;       /* storage base of src/out */
    const char *value;      /* scalar element, when scattering a value */
    red_op op;
    bool include_self;
    uint8_t *touched;       /* per self-storage element, for include_self=False / mean */
    int64_t *counts;
} gs_ctx;

/* The walk's geometry: the index's rows (every dim but the last, row-major) and, per row,
 * the offsets in self (without dim d's coordinate) and in other. */
typedef struct {
    const tn_tensor *self, *index, *other;
    int n, d;
    int64_t rows, len, sizes[TN_MAX_DIMS], istr[TN_MAX_DIMS];
    gs_kind kind;
    gs_fn fn;
    void *ctx;
    int64_t lim;       /* self's size along d */
    int64_t first_bad; /* GS_GATHER: the first element (row-major) out of range, or INT64_MAX */
} gs_walk;

/* a gather element out of range: kept if it is the first in row-major order so far */
static void gs_note_bad(gs_walk *g, int64_t e) {
    int64_t cur = __atomic_load_n(&g->first_bad, __ATOMIC_RELAXED);
    while (e < cur && !__atomic_compare_exchange_n(&g->first_bad, &cur, e, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static void gs_row_offsets(const gs_walk *g, int64_t r, int64_t *so, int64_t *oo, int64_t *io) {
    *so = g->self->offset, *oo = g->other ? g->other->offset : 0, *io = 0;
    for (int i = g->n - 2; i >= 0; i--) {
        int64_t c = r % g->sizes[i];
        r /= g->sizes[i];
        if (i != g->d) *so += c * stride_or_0(g->self, i);
        if (g->other) *oo += c * stride_or_0(g->other, i);
        *io += c * g->istr[i];
    }
}

/* rows [b, e) of the walk (indices already checked): one loop per kind, the index read as
 * int64 when it is */
#define GS_LOOP(BODY)                                                                          \
    for (int64_t r = b; r < e; r++) {                                                          \
        int64_t so, oo, io;                                                                    \
        gs_row_offsets(g, r, &so, &oo, &io);                                                   \
        for (int64_t j = 0; j < g->len; j++) {                                                 \
            int64_t at = io + j * il, v = i64 ? ((const int64_t *)ip)[at] : read_index(g->index, ip, at); \
            int64_t s_ = so + (last ? v * sl : j * sl + v * sd), o_ = oo + j * ol;              \
            BODY;                                                                              \
        }                                                                                      \
    }
static void gs_rows(void *p, int64_t b, int64_t e) {
    gs_walk *g = p;
    const int L = g->n - 1;
    const int64_t sl = stride_or_0(g->self, L), sd = stride_or_0(g->self, g->d), ol = g->other ? stride_or_0(g->other, L) : 0;
    const int64_t il = g->istr[L];
    const bool last = g->d == L, i64 = g->index->dtype == TN_DTYPE_INT64;
    const char *ip = tn_tensor_data((tn_tensor *)g->index);
    const gs_ctx *c = g->ctx;
    char *sb = c->self_base, *ob = c->other_base;
    const char *val = c->value;
    /* gather checks as it copies (into a fresh result: an element out of range only spoils
     * what is then discarded) */
#define GS_CHECKED(STORE) if ((uint64_t)v >= (uint64_t)g->lim) gs_note_bad(g, r * g->len + j); else STORE
    if (g->kind == GS_GATHER && last && sl == 1 && ol == 1 && il == 1 && i64 && g->lim > 0 && (c->w == 4 || c->w == 8)) {
        /* rows along a contiguous last dim: a plain gather loop per row */
        for (int64_t r = b; r < e; r++) {
            int64_t so, oo, io;
            gs_row_offsets(g, r, &so, &oo, &io);
            const int64_t *ix = (const int64_t *)ip + io;
            bool bad = false;
            if (c->w == 4) {
                const uint32_t *src = (const uint32_t *)sb + so;
                uint32_t *dst = (uint32_t *)ob + oo;
                for (int64_t j = 0; j < g->len; j++) { bad |= (uint64_t)ix[j] >= (uint64_t)g->lim; dst[j] = src[(uint64_t)ix[j] < (uint64_t)g->lim ? ix[j] : 0]; }
            } else {
                const uint64_t *src = (const uint64_t *)sb + so;
                uint64_t *dst = (uint64_t *)ob + oo;
                for (int64_t j = 0; j < g->len; j++) { bad |= (uint64_t)ix[j] >= (uint64_t)g->lim; dst[j] = src[(uint64_t)ix[j] < (uint64_t)g->lim ? ix[j] : 0]; }
            }
            if (bad)
                for (int64_t j = 0; j < g->len; j++)
                    if ((uint64_t)ix[j] >= (uint64_t)g->lim) { gs_note_bad(g, r * g->len + j); break; }
        }
        return;
    }
    if (g->kind == GS_SCATTER_ADD_F32 && last && sl == 1 && ol == 1 && il == 1 && i64 && !val) {
        /* rows along a contiguous last dim (indices checked before) */
        for (int64_t r = b; r < e; r++) {
            int64_t so, oo, io;
            gs_row_offsets(g, r, &so, &oo, &io);
            const int64_t *ix = (const int64_t *)ip + io;
            float *dst = (float *)sb + so;
            const float *src = (const float *)ob + oo;
            for (int64_t j = 0; j < g->len; j++) dst[ix[j]] += src[j];
        }
        return;
    }
    if (g->kind == GS_GATHER && c->w == 4) GS_LOOP(GS_CHECKED(((uint32_t *)ob)[o_] = ((const uint32_t *)sb)[s_]))
    else if (g->kind == GS_GATHER) GS_LOOP(GS_CHECKED(((uint64_t *)ob)[o_] = ((const uint64_t *)sb)[s_]))
    else if (g->kind == GS_SCATTER_SET && c->w == 4) GS_LOOP(((uint32_t *)sb)[s_] = val ? *(const uint32_t *)val : ((const uint32_t *)ob)[o_])
    else if (g->kind == GS_SCATTER_SET) GS_LOOP(((uint64_t *)sb)[s_] = val ? *(const uint64_t *)val : ((const uint64_t *)ob)[o_])
    else if (g->kind == GS_SCATTER_ADD_F32) GS_LOOP(((float *)sb)[s_] += val ? *(const float *)val : ((const float *)ob)[o_])
    else GS_LOOP(g->fn(g->ctx, s_, o_))
#undef GS_CHECKED
}
#undef GS_LOOP

/* rows [b, e): the first index out of range in each (row-major), noted in first_bad */
static void gs_check_rows(void *p, int64_t b, int64_t e) {
    gs_walk *g = p;
    const int L = g->n - 1;
    const int64_t il = g->istr[L], lim = g->lim;
    const bool i64 = g->index->dtype == TN_DTYPE_INT64;
    const char *ip = tn_tensor_data((tn_tensor *)g->index);
    for (int64_t r = b; r < e; r++) {
        int64_t so, oo, io;
        gs_row_offsets(g, r, &so, &oo, &io);
        if (i64) { /* a branch-free scan first (vectorised when contiguous) */
            const int64_t *x = (const int64_t *)ip + io;
            uint64_t worst = 0;
            if (il == 1)
                for (int64_t j = 0; j < g->len; j++) worst |= (uint64_t)x[j] >= (uint64_t)lim;
            else
                for (int64_t j = 0; j < g->len; j++) worst |= (uint64_t)x[j * il] >= (uint64_t)lim;
            if (!worst) continue;
        }
        for (int64_t j = 0; j < g->len; j++) {
            int64_t v = read_index(g->index, ip, io + j * il);
            if (v < 0 || v >= lim) { gs_note_bad(g, r * g->len + j); break; }
        }
    }
}

/* Walks every element of `index` in row-major order, with the element offsets in self (the
 * indexed coordinate substituted) and in index-shaped `other` (src or out): first checks
 * every index value (upstream's error for the first out of range), then runs the rows, on
 * the pool when `parallel` (the rows write disjoint elements: gather). Row by row with the
 * common kinds inline; before: offsets rebuilt and a callback per element, 10x upstream's
 * time for gather of (1000, 100) from (1000, 1000). */
static tn_status gather_scatter_walk_kind(const tn_tensor *self, int d, const tn_tensor *index, const tn_tensor *other,
                                          gs_kind kind, gs_fn fn, void *ctx, bool parallel) {
    int n = index->ndim ? index->ndim : 1;
    int64_t numel = tn_tensor_numel(index), lim = size_or_1(self, d);
    const char *ip = tn_tensor_data((tn_tensor *)index);
    if (numel == 0 || !ip) return TN_OK;
    gs_walk g = {self, index, other, n, d, 1, size_or_1(index, n - 1), {0}, {0}, kind, fn, ctx, lim, INT64_MAX};
    for (int i = 0; i < n; i++) g.sizes[i] = size_or_1(index, i), g.istr[i] = stride_or_0(index, i);
    for (int i = 0; i < n - 1; i++) g.rows *= g.sizes[i];
    if (kind == GS_GATHER) { /* checked while copying (gs_rows) */
        if (parallel) tn_parallel_for(g.rows, 16384 / g.len + 1, gs_rows, &g);
        else gs_rows(&g, 0, g.rows);
        if (g.first_bad == INT64_MAX) return TN_OK;
        int64_t so, oo, io;
        gs_row_offsets(&g, g.first_bad / g.len, &so, &oo, &io);
        int64_t v = read_index(index, ip, io + g.first_bad % g.len * g.istr[n - 1]);
        return tn_error(TN_ERR_RUNTIME, "index %lld is out of bounds for dimension %d with size %lld", (long long)v, d,
                        (long long)lim);
    }
    /* every index checked first (upstream's message for the first out of range, nothing
     * written), the rows on the pool */
    tn_parallel_for(g.rows, 16384 / g.len + 1, gs_check_rows, &g);
    if (g.first_bad != INT64_MAX) {
        int64_t so, oo, io;
        gs_row_offsets(&g, g.first_bad / g.len, &so, &oo, &io);
        int64_t v = read_index(index, ip, io + g.first_bad % g.len * g.istr[n - 1]);
        return tn_error(TN_ERR_RUNTIME, "index %lld is out of bounds for dimension %d with size %lld", (long long)v, d,
                        (long long)lim);
    }
    /* along the last dim each index row writes only its own row of self: rows on the pool
     * then too (each element still sees its writes in order) */
    if (parallel || d == n - 1) tn_parallel_for(g.rows, 16384 / g.len + 1, gs_rows, &g);
    else gs_rows(&g, 0, g.rows);
    return TN_OK;
}


static void gather_one(void *c, int64_t so, int64_t oo) {
    gs_ctx *g = c;
    memcpy(g->other_base + oo * g->w, g->self_base + so * g->w, (size_t)g->w);
}

static void scatter_one(void *c, int64_t so, int64_t oo) {
    gs_ctx *g = c;
    const char *s = g->value ? g->value : g->other_base + oo * g->w;
    char *d = g->self_base + so * g->w;
    if (g->touched) {
        if (!g->touched[so]) {
            g->touched[so] = 1;
            if (!g->include_self) { memcpy(d, s, (size_t)g->w); if (g->counts) g->counts[so] = 1; return; }
        }
        if (g->counts) g->counts[so]++;
    }
    combine(g->dt, d, s, g->op);
}

/* gather's shape rule: same ndim, index no larger than self outside dim. */
static tn_status gather_shape_check(const tn_tensor *self, int d, const tn_tensor *index) {
    char b1[SIZES_BUF], b2[SIZES_BUF];
    if (tn_tensor_numel(index) == 0) return TN_OK; /* upstream checks an empty index for nothing */
    int n = self->ndim ? self->ndim : 1;
    if (n != (index->ndim ? index->ndim : 1))
        return tn_error(TN_ERR_RUNTIME, "Index tensor must have the same number of dimensions as input tensor");
    for (int i = 0; i < n; i++)
        if (i != d && size_or_1(index, i) > size_or_1(self, i))
            return tn_error(TN_ERR_RUNTIME,
                            "Size does not match at dimension %d expected index %s to be no larger than self %s apart "
                            "from dimension %d", i, tn_format_sizes(index->ndim, index->sizes, b1, sizeof b1),
                            tn_format_sizes(self->ndim, self->sizes, b2, sizeof b2), d);
    return TN_OK;
}

static tn_status gather_of(tn_tensor *self, int64_t dim, tn_tensor *index, tn_tensor **result) {
    int d;
    TN_TRY(tn_wrap_dim(dim, self->ndim, &d));
    TN_TRY(check_index_dtype(index, "gather"));
    TN_TRY(gather_shape_check(self, d, index));
    tn_tensor *out;
    TN_TRY(tn_tensor_empty(index->ndim, index->sizes, self->dtype, tn_tensor_device(self), &out));
    if (!tn_tensor_is_meta(out) && !tn_tensor_is_meta(self)) {
        gs_ctx g = {.dt = self->dtype, .w = tn_dtype_itemsize(self->dtype), .self_base = self->storage->data,
                    .other_base = out->storage->data};
        tn_status st = gather_scatter_walk_kind(self, d, index, out, g.w == 4 || g.w == 8 ? GS_GATHER : GS_CALL, gather_one, &g, true);
        if (st != TN_OK) { tn_tensor_release(out); return st; }
    }
    *result = out;
    return TN_OK;
}

/* aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor */
tn_status tn_op_gather(const tn_value *args, tn_value *rets) {
    tn_tensor *out;
    TN_TRY(gather_of(args[0].u.t, args[1].u.i, args[2].u.t, &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* scatter's shape rule: index no larger than self outside dim and than src everywhere. */
static tn_status scatter_shape_check(const tn_tensor *self, int d, const tn_tensor *index, const tn_tensor *src) {
    char b1[SIZES_BUF], b2[SIZES_BUF], b3[SIZES_BUF];
    if (tn_tensor_numel(index) == 0) return TN_OK;
    int n = self->ndim ? self->ndim : 1;
    if (n != (index->ndim ? index->ndim : 1))
        return tn_error(TN_ERR_RUNTIME, "Index tensor must have the same number of dimensions as self tensor");
    if (src && (src->ndim ? src->ndim : 1) != n) /* before: an empty src of more dims was read (NULL data) */
        return tn_error(TN_ERR_RUNTIME, "Index tensor must have the same number of dimensions as src tensor");
    bool wrong = false;
    for (int i = 0; i < n; i++)
        if (i != d && size_or_1(index, i) > size_or_1(self, i)) wrong = true;
    if (!wrong && src)
        for (int i = 0; i < n; i++)
            if (size_or_1(index, i) > (i < (src->ndim ? src->ndim : 1) ? size_or_1(src, i) : 1)) wrong = true;
    if (!wrong) return TN_OK;
    if (src)
        return tn_error(TN_ERR_RUNTIME,
                        "Expected index %s to be no larger than self %s apart from dimension %d and to be no larger "
                        "size than src %s", tn_format_sizes(index->ndim, index->sizes, b1, sizeof b1),
                        tn_format_sizes(self->ndim, self->sizes, b2, sizeof b2), d,
                        tn_format_sizes(src->ndim, src->sizes, b3, sizeof b3));
    return tn_error(TN_ERR_RUNTIME, "Expected index %s to be no larger than self %s apart from dimension %d",
                    tn_format_sizes(index->ndim, index->sizes, b1, sizeof b1),
                    tn_format_sizes(self->ndim, self->sizes, b2, sizeof b2), d);
}

/* The scatter family: out = self.clone(); out[index] op= src (or value). */
static tn_status scatter_impl(tn_tensor *self, int64_t dim, tn_tensor *index, tn_tensor *src, const tn_value *value,
                              red_op op, bool include_self, const char *opname, tn_value *rets) {
    int d;
    tn_tensor *into = tn_iter_offer_take(rets);
    TN_TRY(tn_wrap_dim(dim, self->ndim, &d));
    TN_TRY(check_index_dtype(index, "scatter"));
    if (src && src->dtype != self->dtype)
        return tn_error(TN_ERR_RUNTIME, "scatter(): Expected self.dtype to be equal to src.dtype");
    TN_TRY(scatter_shape_check(self, d, index, src));
    TN_TRY(check_reducible(self->dtype, op, opname));
    unsigned char elem[16];
    if (value) TN_TRY(tn_scalar_to_bytes(value, self->dtype, elem));
    bool track = !include_self || op == RED_MEAN;
    /* the in-place forms (scatter_, scatter_add_, scatter_reduce_): the door offers self
     * (dispatch.c); a dense self is then written directly, after upstream's overlap checks of
     * self against index and src, instead of a copy of self scattered into and copied back
     * (6x upstream's time for scatter_add_ into 1000 x 1000). The tracking forms index their
     * bookkeeping by storage element: only from offset 0. */
    bool in_place = into == self && !tn_tensor_is_meta(self) && !tn_tensor_is_meta(index) &&
                    tn_tensor_is_non_overlapping_and_dense(self) && (!track || (self->offset == 0 && tn_tensor_is_contiguous(self)));
    tn_tensor *out;
    TN_TRY(tn_shape_self_or_copy(self, in_place, index, src, &out));
    tn_status st = TN_OK;
    if (!tn_tensor_is_meta(out) && !tn_tensor_is_meta(index)) {
        int64_t numel = tn_tensor_numel(out);
        gs_ctx g = {.dt = self->dtype, .w = tn_dtype_itemsize(self->dtype), .self_base = out->storage->data,
                    .other_base = src ? src->storage->data : NULL, .value = value ? (const char *)elem : NULL,
                    .op = op, .include_self = include_self};
        if (track) {
            g.touched = calloc((size_t)(numel > 0 ? numel : 1), 1);
            if (op == RED_MEAN) g.counts = calloc((size_t)(numel > 0 ? numel : 1), sizeof(int64_t));
            if (!g.touched || (op == RED_MEAN && !g.counts)) st = oom();
        }
        gs_kind kind = GS_CALL;
        if (!track && op == RED_ASSIGN && (g.w == 4 || g.w == 8)) kind = GS_SCATTER_SET;
        if (!track && op == RED_ADD && self->dtype == TN_DTYPE_FLOAT32) kind = GS_SCATTER_ADD_F32;
        if (st == TN_OK) st = gather_scatter_walk_kind(out, d, index, src, kind, scatter_one, &g, false);
        if (st == TN_OK && op == RED_MEAN) {
            /* Mean = sum / count, where self counts once when included. */
            char *base = out->storage->data;
            for (int64_t i = 0; i < numel; i++)
                if (g.touched[i]) divide_by(self->dtype, base + i * g.w, g.counts[i] + (include_self ? 1 : 0));
        }
        free(g.touched);
        free(g.counts);
    }
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

static tn_status legacy_reduce(const tn_value *v, red_op *op) {
    const char *s = v->u.s.data;
    int64_t n = v->u.s.n;
    if (n == 3 && !strncmp(s, "add", 3)) { *op = RED_ADD; return TN_OK; }
    if (n == 8 && !strncmp(s, "multiply", 8)) { *op = RED_MUL; return TN_OK; }
    return tn_error(TN_ERR_RUNTIME, "reduce argument must be either add or multiply.");
}

/* aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor */
tn_status tn_op_scatter_src(const tn_value *args, tn_value *rets) {
    return scatter_impl(args[0].u.t, args[1].u.i, args[2].u.t, args[3].u.t, NULL, RED_ASSIGN, true, "scatter", rets);
}

/* aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor */
tn_status tn_op_scatter_value(const tn_value *args, tn_value *rets) {
    return scatter_impl(args[0].u.t, args[1].u.i, args[2].u.t, NULL, &args[3], RED_ASSIGN, true, "scatter", rets);
}

/* aten::scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor */
tn_status tn_op_scatter_reduce_legacy(const tn_value *args, tn_value *rets) {
    red_op op;
    TN_TRY(legacy_reduce(&args[4], &op));
    return scatter_impl(args[0].u.t, args[1].u.i, args[2].u.t, args[3].u.t, NULL, op, true, "scatter", rets);
}

/* aten::scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) */
tn_status tn_op_scatter_value_reduce(const tn_value *args, tn_value *rets) {
    red_op op;
    TN_TRY(legacy_reduce(&args[4], &op));
    return scatter_impl(args[0].u.t, args[1].u.i, args[2].u.t, NULL, &args[3], op, true, "scatter", rets);
}

/* aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor */
tn_status tn_op_scatter_add(const tn_value *args, tn_value *rets) {
    return scatter_impl(args[0].u.t, args[1].u.i, args[2].u.t, args[3].u.t, NULL, RED_ADD, true, "scatter_add", rets);
}

/* aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *,
 * bool include_self=True) -> Tensor */
tn_status tn_op_scatter_reduce_two(const tn_value *args, tn_value *rets) {
    static const struct { const char *name; red_op op; } ops[] = {
        {"sum", RED_ADD}, {"prod", RED_MUL}, {"mean", RED_MEAN}, {"amax", RED_AMAX}, {"amin", RED_AMIN},
        /* upstream's get_reduction_enum also takes the spellings "max" and "min" */
        {"max", RED_AMAX}, {"min", RED_AMIN}};
    const char *s = args[4].u.s.data;
    int64_t n = args[4].u.s.n;
    for (int i = 0; i < 7; i++)
        if ((int64_t)strlen(ops[i].name) == n && !strncmp(s, ops[i].name, (size_t)n))
            return scatter_impl(args[0].u.t, args[1].u.i, args[2].u.t, args[3].u.t, NULL, ops[i].op, args[5].u.b,
                                "scatter_reduce", rets);
    return tn_error(TN_ERR_RUNTIME, "reduce argument must be either sum, prod, mean, amax or amin, got %.*s", (int)n, s);
}

/* aten::take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor */
tn_status tn_op_take_along_dim(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *idx = args[1].u.t, *out;
    if (idx->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "torch.take_along_dim(): dtype of indices should be Long but got %s",
                        tn_dtype_infos[idx->dtype].c10_name);
    if (tn_value_is_none(&args[2])) {
        /* Both flattened, then gather along the only dim. */
        int64_t n1 = tn_tensor_numel(self), n2 = tn_tensor_numel(idx);
        tn_tensor *fs, *fi;
        TN_TRY(tn_tensor_contiguous(self, &fs));
        tn_status st = tn_tensor_contiguous(idx, &fi);
        if (st != TN_OK) { tn_tensor_release(fs); return st; }
        int64_t one = 1;
        tn_tensor *vs = tn_tensor_new_view(fs->storage, fs->offset, 1, &n1, &one, fs->dtype);
        tn_tensor *vi = tn_tensor_new_view(fi->storage, fi->offset, 1, &n2, &one, fi->dtype);
        st = vs && vi ? gather_of(vs, 0, vi, &out) : oom();
        tn_tensor_release(vs); tn_tensor_release(vi); tn_tensor_release(fs); tn_tensor_release(fi);
        TN_TRY(st);
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    int d;
    TN_TRY(tn_wrap_dim(args[2].u.i, self->ndim, &d));
    if (self->ndim != idx->ndim)
        return tn_error(TN_ERR_RUNTIME,
                        "torch.take_along_dim(): input and indices should have the same number of dimensions, but got "
                        "%d dimensions for input, and %d dimensions for indices", self->ndim, idx->ndim);
    /* With a dim, upstream takes every index modulo the dim's size (Python's sign rule:
     * -1 is the last element, 5 wraps to 0 for size 5), so a wrapped copy replaces idx. */
    tn_tensor *wrapped = NULL;
    int64_t lim = self->ndim ? self->sizes[d] : 1;
    if (lim > 0 && !tn_tensor_is_meta(idx) && tn_tensor_numel(idx) > 0) {
        TN_TRY(tn_tensor_empty(idx->ndim, idx->sizes, TN_DTYPE_INT64, tn_tensor_device(idx), &wrapped));
        tn_shape_copy_same_dtype(wrapped, idx);
        int64_t *w = tn_tensor_data(wrapped), n = tn_tensor_numel(wrapped);
        for (int64_t i = 0; i < n; i++) w[i] = ((w[i] % lim) + lim) % lim;
        idx = wrapped;
    }
    /* Broadcast everything but dim. */
    int64_t ss[TN_MAX_DIMS], bshape[TN_MAX_DIMS];
    int n;
    memcpy(ss, self->sizes, sizeof ss);
    if (self->ndim) ss[d] = idx->sizes[d];
    tn_status bst = tn_shape_broadcast(self->ndim, ss, idx->ndim, idx->sizes, &n, bshape);
    tn_tensor *bi = NULL, *bs;
    if (bst == TN_OK) bst = tn_shape_expand_view(idx, n, bshape, &bi);
    if (bst != TN_OK) {
        if (wrapped) tn_tensor_release(wrapped);
        return bst;
    }
    if (n) bshape[d] = self->sizes[d];
    tn_status st = tn_shape_expand_view(self, n, bshape, &bs);
    if (st == TN_OK) {
        st = gather_of(bs, d, bi, &out);
        tn_tensor_release(bs);
    }
    tn_tensor_release(bi);
    if (wrapped) tn_tensor_release(wrapped);
    TN_TRY(st);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::take(Tensor self, Tensor index) -> Tensor: self viewed as flat (row-major, whatever
 * its strides) indexed by `index`; the result has index's shape and self's dtype. Negative
 * indices count from the end; out of range raises IndexError with upstream's text (its
 * CPU take kernel checks each index as it goes). */
typedef struct take_job {
    const char *sp;
    const int64_t *ix;
    char *op;
    int64_t numel;
    int w;
} take_job;
static void take_part(void *ctx, int64_t e0, int64_t e1) {
    const take_job *J = ctx;
    const int64_t *ix = J->ix, numel = J->numel;
    if (J->w == 4)
        for (int64_t e = e0; e < e1; e++) ((uint32_t *)J->op)[e] = ((const uint32_t *)J->sp)[ix[e] < 0 ? ix[e] + numel : ix[e]];
    else
        for (int64_t e = e0; e < e1; e++) ((uint64_t *)J->op)[e] = ((const uint64_t *)J->sp)[ix[e] < 0 ? ix[e] + numel : ix[e]];
}

tn_status tn_op_take(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *index = args[1].u.t, *out;
    if (index->dtype != TN_DTYPE_INT64)
        return tn_error(TN_ERR_RUNTIME, "take(): Expected a long tensor for index, but got %s",
                        tn_dtype_infos[index->dtype].c10_name);
    int64_t numel = tn_tensor_numel(self), n = tn_tensor_numel(index);
    if (numel == 0 && n != 0) return tn_error(TN_ERR_INDEX, "take(): tried to take from an empty tensor");
    TN_TRY(tn_tensor_empty(index->ndim, index->sizes, self->dtype, tn_tensor_device(self), &out));
    if (n == 0 || tn_tensor_is_meta(out) || tn_tensor_is_meta(self) || tn_tensor_is_meta(index)) {
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    /* Flat position -> element offset in self: self's own row-major walk is not random
     * access, so non-contiguous self is first made contiguous (one copy). */
    tn_tensor *src = self;
    if (!tn_tensor_is_contiguous(self)) {
        tn_status st = tn_tensor_contiguous(self, &src);
        if (st != TN_OK) { tn_tensor_release(out); return st; }
    }
    int w = tn_dtype_itemsize(self->dtype);
    const char *sp = tn_tensor_data(src), *ip = tn_tensor_data(index);
    char *op = tn_tensor_data(out);
    if (tn_tensor_is_contiguous(index) && (w == 4 || w == 8)) {
        /* a contiguous index: checked in one branch-free pass (the message from the loop
         * below when one is out of range), then copied directly (before: the walker and a
         * copy call per element, 4x upstream's time) */
        const int64_t *ix = (const int64_t *)ip;
        bool bad = false;
        for (int64_t e = 0; e < n; e++) bad |= (uint64_t)ix[e] + (uint64_t)numel >= 2 * (uint64_t)numel;
        if (!bad) {
            /* on the pool from upstream's grain (random reads: 1.6x upstream's time for 1e5
             * of 1e6 on one thread) */
            take_job J = {sp, ix, op, numel, w};
            tn_parallel_for(n, 32768, take_part, &J);
            if (src != self) tn_tensor_release(src);
            rets[0] = tn_value_tensor(out);
            return TN_OK;
        }
    }
    walker wi;
    walker_init(&wi, index->ndim, index->sizes, index->strides, 0);
    tn_status st = TN_OK;
    for (int64_t e = 0; e < n; e++, walker_next(&wi)) {
        int64_t v = read_index(index, ip, wi.off);
        if (v < -numel || v >= numel) {
            st = tn_error(TN_ERR_INDEX, "out of range: tried to access index %lld on a tensor of %lld elements.",
                          (long long)v, (long long)numel);
            break;
        }
        if (v < 0) v += numel;
        memcpy(op + e * w, sp + v * w, (size_t)w);
    }
    if (src != self) tn_tensor_release(src);
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- advanced indexing -------------------------------------------------------------- */

/* The geometry of self[indices]: self (possibly with 0-D bool masks unsqueezed and dims
 * permuted so the indexed dims form one block), the block position, and the index
 * tensors materialised as broadcast int64 arrays over `bshape`. */
typedef struct {
    tn_tensor *src;                    /* view of self with indexed dims as one block */
    int block, nidx;                   /* block start and length in src's dims */
    int nb;                            /* broadcast index shape */
    int64_t bshape[TN_MAX_DIMS];
    int64_t m;                         /* numel of bshape */
    int64_t *vals[TN_MAX_DIMS];        /* per indexed dim: m wrapped index values */
    int out_ndim;                      /* result dims: src[:block] + bshape + src[block+nidx:] */
    int64_t out_sizes[TN_MAX_DIMS];
} adv_index;

static void adv_free(adv_index *a) {
    for (int i = 0; i < a->nidx; i++) free(a->vals[i]);
    tn_tensor_release(a->src);
    a->src = NULL;
}

/* Expands masks into index tensors (via nonzero), checks dtypes and shapes, broadcasts,
 * bounds-checks and wraps negative indices. `check_bounds` false for _unsafe_index. */
static tn_status adv_prepare(tn_tensor *self, tn_tensor *const *indices, int64_t nin, adv_index *a) {
    char b1[SIZES_BUF], b2[SIZES_BUF];
    memset(a, 0, sizeof *a);
    tn_tensor *owned[TN_MAX_DIMS * 4]; /* nonzero results and their column views */
    int nowned = 0;
    tn_tensor *per_dim[TN_MAX_DIMS + 8] = {0};  /* index tensor per (unsqueezed) self dim */
    int64_t vsizes[TN_MAX_DIMS], vstrides[TN_MAX_DIMS];
    int vnd = 0;
    int dim = 0; /* next self dim */
    tn_status st = TN_OK;
    for (int64_t i = 0; i < nin; i++) {
        tn_tensor *ix = indices[i];
        if (ix && ix->dtype != TN_DTYPE_INT64 && ix->dtype != TN_DTYPE_INT32 && ix->dtype != TN_DTYPE_UINT8 &&
            ix->dtype != TN_DTYPE_BOOL) {
            st = tn_error(TN_ERR_INDEX, "tensors used as indices must be long, int, byte or bool tensors");
            goto fail;
        }
    }
    for (int64_t i = 0; i < nin; i++) {
        tn_tensor *ix = indices[i];
        bool is_mask = ix && (ix->dtype == TN_DTYPE_BOOL || ix->dtype == TN_DTYPE_UINT8);
        int consumes = !ix ? 1 : is_mask ? ix->ndim : 1;
        if (ix && is_mask && ix->ndim == 0) {
            /* A 0-D mask adds a dim of size 1 (indexed by [0] or nothing). */
            if (vnd >= TN_MAX_DIMS) { st = tn_error(TN_ERR_NOT_IMPLEMENTED, "too many dimensions"); goto fail; }
            vsizes[vnd] = 1; vstrides[vnd] = 1;
            tn_tensor *nz;
            st = nonzero_of(ix, &nz); /* (nnz, 0) */
            if (st != TN_OK) goto fail;
            int64_t nnz = nz->sizes[0], one = 1;
            tn_tensor_release(nz);
            tn_tensor *col;
            st = tn_tensor_zeros(1, &nnz, TN_DTYPE_INT64, tn_device_cpu(), &col);
            (void)one;
            if (st != TN_OK) goto fail;
            owned[nowned++] = col;
            per_dim[vnd++] = col;
            continue;
        }
        if (dim + consumes > self->ndim) {
            st = tn_error(TN_ERR_INDEX, "too many indices for tensor of dimension %d", self->ndim);
            goto fail;
        }
        if (is_mask) {
            for (int j = 0; j < ix->ndim; j++)
                if (ix->sizes[j] != self->sizes[dim + j]) {
                    st = tn_error(TN_ERR_INDEX,
                                  "The shape of the mask %s at index %d does not match the shape of the indexed tensor "
                                  "%s at index %d", tn_format_sizes(ix->ndim, ix->sizes, b1, sizeof b1), j,
                                  tn_format_sizes(self->ndim, self->sizes, b2, sizeof b2), dim + j);
                    goto fail;
                }
            tn_tensor *nz;
            st = nonzero_of(ix, &nz);
            if (st != TN_OK) goto fail;
            owned[nowned++] = nz;
            for (int j = 0; j < ix->ndim; j++) {
                tn_tensor *col = tn_tensor_new_view(nz->storage, nz->offset + j * nz->strides[1], 1, &nz->sizes[0],
                                                    &nz->strides[0], TN_DTYPE_INT64);
                if (!col) { st = oom(); goto fail; }
                owned[nowned++] = col;
                vsizes[vnd] = self->sizes[dim]; vstrides[vnd] = self->strides[dim];
                per_dim[vnd++] = col;
                dim++;
            }
        } else {
            vsizes[vnd] = self->sizes[dim]; vstrides[vnd] = self->strides[dim];
            per_dim[vnd++] = ix;
            dim++;
        }
    }
    for (; dim < self->ndim; dim++) {
        if (vnd >= TN_MAX_DIMS) { st = tn_error(TN_ERR_NOT_IMPLEMENTED, "too many dimensions"); goto fail; }
        vsizes[vnd] = self->sizes[dim]; vstrides[vnd] = self->strides[dim];
        per_dim[vnd++] = NULL;
    }
    /* Broadcast the index shapes. */
    int nb = 0, first = -1, last = -1, count = 0;
    int64_t bshape[TN_MAX_DIMS];
    for (int i = 0; i < vnd; i++) {
        if (!per_dim[i]) continue;
        if (first < 0) first = i;
        last = i;
        count++;
        int nn;
        int64_t tmp[TN_MAX_DIMS];
        if (tn_shape_broadcast(nb, bshape, per_dim[i]->ndim, per_dim[i]->sizes, &nn, tmp) != TN_OK) {
            /* upstream lists every index shape */
            int pos = snprintf(b1, sizeof b1, "shape mismatch: indexing tensors could not be broadcast together with shapes ");
            bool firstp = true;
            for (int k = 0; k < vnd && pos < (int)sizeof b1; k++) {
                if (!per_dim[k]) continue;
                pos += snprintf(b1 + pos, sizeof b1 - (size_t)pos, "%s%s", firstp ? "" : ", ",
                                tn_format_sizes(per_dim[k]->ndim, per_dim[k]->sizes, b2, sizeof b2));
                firstp = false;
            }
            st = tn_error(TN_ERR_INDEX, "%s", b1);
            goto fail;
        }
        nb = nn;
        memcpy(bshape, tmp, sizeof(int64_t) * (size_t)nn);
    }
    if (count == 0) {
        st = tn_error(TN_ERR_RUNTIME, "aten::index needs at least one index tensor");
        goto fail;
    }
    bool adjacent = last - first + 1 == count;
    /* Permute: indexed dims in order form the block; non-adjacent moves it to the front. */
    int order[TN_MAX_DIMS], k = 0;
    if (adjacent) {
        for (int i = 0; i < vnd; i++) order[k++] = i;
        a->block = first;
    } else {
        for (int i = 0; i < vnd; i++) if (per_dim[i]) order[k++] = i;
        for (int i = 0; i < vnd; i++) if (!per_dim[i]) order[k++] = i;
        a->block = 0;
    }
    int64_t ps[TN_MAX_DIMS], pst[TN_MAX_DIMS];
    for (int i = 0; i < vnd; i++) { ps[i] = vsizes[order[i]]; pst[i] = vstrides[order[i]]; }
    a->src = tn_tensor_new_view(self->storage, self->offset, vnd, ps, pst, self->dtype);
    if (!a->src) { st = oom(); goto fail; }
    a->nidx = count;
    a->nb = nb;
    memcpy(a->bshape, bshape, sizeof(int64_t) * (size_t)nb);
    a->m = 1;
    for (int i = 0; i < nb; i++) a->m *= bshape[i];
    if (vnd - count + nb > TN_MAX_DIMS) { st = tn_error(TN_ERR_NOT_IMPLEMENTED, "too many dimensions"); goto fail; }
    int on = 0;
    for (int i = 0; i < a->block; i++) a->out_sizes[on++] = ps[i];
    for (int i = 0; i < nb; i++) a->out_sizes[on++] = bshape[i];
    for (int i = a->block + count; i < vnd; i++) a->out_sizes[on++] = ps[i];
    a->out_ndim = on;
    /* Materialise each index over bshape, wrapped and bounds-checked. */
    for (int j = 0; j < count; j++) {
        int sd = a->block + j;              /* dim of src */
        tn_tensor *ix = per_dim[order[sd]];
        int64_t lim = ps[sd];
        a->vals[j] = malloc(sizeof(int64_t) * (size_t)(a->m > 0 ? a->m : 1));
        if (!a->vals[j]) { st = oom(); goto fail; }
        if (a->m == 0) continue;
        tn_tensor *ex;
        st = tn_shape_expand_view(ix, nb, bshape, &ex);
        if (st != TN_OK) goto fail;
        if (tn_tensor_is_meta(ex)) { tn_tensor_release(ex); st = refuse_meta("index.Tensor"); goto fail; }
        const char *p = tn_tensor_data(ex);
        if (ex->dtype == TN_DTYPE_INT64 && tn_tensor_is_contiguous(ex)) {
            /* a dense int64 index: wrapped and checked without a branch per element (the
             * first out of range named by the loop below) */
            const int64_t *iv = (const int64_t *)p;
            int64_t *dst = a->vals[j];
            uint64_t bad = 0;
            for (int64_t e = 0; e < a->m; e++) {
                const int64_t v = iv[e];
                bad |= (uint64_t)v + (uint64_t)lim >= 2 * (uint64_t)lim;
                dst[e] = v + (v < 0 ? lim : 0);
            }
            if (!bad) {
                tn_tensor_release(ex);
                continue;
            }
        }
        walker w;
        walker_init(&w, nb, ex->sizes, ex->strides, 0);
        for (int64_t e = 0; e < a->m; e++, walker_next(&w)) {
            int64_t v = read_index(ex, p, w.off);
            if (v < -lim || v >= lim) {
                tn_tensor_release(ex);
                st = tn_error(TN_ERR_INDEX, "index %lld is out of bounds for dimension %d with size %lld", (long long)v,
                              order[sd], (long long)lim);
                goto fail;
            }
            a->vals[j][e] = v < 0 ? v + lim : v;
        }
        tn_tensor_release(ex);
    }
    for (int i = 0; i < nowned; i++) tn_tensor_release(owned[i]);
    return TN_OK;
fail:
    for (int i = 0; i < nowned; i++) tn_tensor_release(owned[i]);
    adv_free(a);
    return st;
}

/* Calls fn(ctx, src_offset, out_block_index) for each (pre, m) pair; the post dims are
 * the caller's (a strided block with src's trailing strides). */
typedef void (*adv_fn)(void *ctx, int64_t src_off, int64_t pre_i, int64_t m);

static void adv_walk(const adv_index *a, adv_fn fn, void *ctx) {
    const tn_tensor *s = a->src;
    int64_t pre = 1;
    for (int i = 0; i < a->block; i++) pre *= s->sizes[i];
    walker w;
    walker_init(&w, a->block, s->sizes, s->strides, s->offset);
    for (int64_t p = 0; p < pre; p++, walker_next(&w))
        for (int64_t m = 0; m < a->m; m++) {
            int64_t off = w.off;
            for (int j = 0; j < a->nidx; j++) off += a->vals[j][m] * s->strides[a->block + j];
            fn(ctx, off, p, m);
        }
}

typedef struct {
    const adv_index *a;
    int w;
    int npost;
    int64_t post_sizes[TN_MAX_DIMS], src_post[TN_MAX_DIMS], other_post[TN_MAX_DIMS];
    char *src_base;          /* storage base of the indexed tensor */
    char *other_base;        /* result (index) or values (index_put) data at offset */
    int64_t other_pre_stride, other_m_stride; /* element strides of the (pre, m) block */
    bool put, accumulate;
    tn_dtype dt;
    walker *pre_walk;        /* values are broadcast: walk their pre dims with strides */
} adv_copy_ctx;

static void index_copy_one(void *c, int64_t src_off, int64_t p, int64_t m) {
    adv_copy_ctx *x = c;
    char *o = x->other_base + (p * x->other_pre_stride + m * x->other_m_stride) * x->w;
    tn_strided_copy_bytes(o, x->other_post, x->src_base + src_off * x->w, x->src_post, x->npost, x->post_sizes, x->w);
}

/* src's element offset (from the pre block's) of broadcast index m */
static inline int64_t adv_elem_off(const adv_index *a, const int64_t *st, int64_t m) {
    int64_t off = 0;
    for (int j = 0; j < a->nidx; j++) off += a->vals[j][m] * st[j];
    return off;
}

/* index's gather without a call per element, where the trailing (unindexed) dims are
 * absent or contiguous in src: elements of 1, 2, 4 or 8 bytes assigned by type, or one
 * copy of the trailing block; the (pre, m) pairs split over the pool as upstream's index
 * kernel splits its iteration (x[idx] of 2e5 from 1e6 float32 on one thread was 1.4x
 * upstream's two). False (nothing done) otherwise: adv_walk then. Before session 47, every
 * element went through index_copy_one and tn_strided_copy_bytes: self[mask] of 1e6
 * float32 4.6x upstream's time. */
typedef struct {
    const adv_index *a;
    const adv_copy_ctx *x;
    int64_t st[TN_MAX_DIMS];
    int64_t bytes;
} ig_job;
static void ig_part(void *c, int64_t t0, int64_t t1) {
    const ig_job *J = c;
    const adv_index *a = J->a;
    const tn_tensor *s = a->src;
    const int w = J->x->w;
    const int64_t bytes = J->bytes, m_n = a->m;
    walker wp;
    walker_init(&wp, a->block, s->sizes, s->strides, s->offset);
    int64_t p = t0 / m_n, rest = p; /* position the walker at pre index p */
    for (int k = a->block - 1; k >= 0; k--) {
        wp.idx[k] = rest % s->sizes[k];
        rest /= s->sizes[k];
        wp.off += wp.idx[k] * s->strides[k];
    }
    for (int64_t t = t0; t < t1; p++, walker_next(&wp)) {
        const int64_t m0 = t - p * m_n, m1 = t1 - p * m_n < m_n ? t1 - p * m_n : m_n;
        const char *base = J->x->src_base + wp.off * w;
        char *o = J->x->other_base + p * m_n * bytes;
#define IG_OFF(m) adv_elem_off(a, J->st, m)
#define IG_TYPED(T) for (int64_t m = m0; m < m1; m++) ((T *)o)[m] = *(const T *)(base + IG_OFF(m) * (int64_t)sizeof(T));
        if (bytes == 1) { IG_TYPED(uint8_t) }
        else if (bytes == 2 && w == 2) { IG_TYPED(uint16_t) }
        else if (bytes == 4 && w == 4) { IG_TYPED(uint32_t) }
        else if (bytes == 8 && w == 8) { IG_TYPED(uint64_t) }
        else
            for (int64_t m = m0; m < m1; m++) memcpy(o + m * bytes, base + IG_OFF(m) * w, (size_t)bytes);
#undef IG_TYPED
#undef IG_OFF
        t += m1 - m0;
    }
}
static bool index_gather_direct(const adv_index *a, const adv_copy_ctx *x, int64_t post_n) {
    const tn_tensor *s = a->src;
    int64_t expect = 1;
    for (int i = x->npost - 1; i >= 0; i--) {
        if (x->post_sizes[i] != 1 && x->src_post[i] != expect) return false;
        expect *= x->post_sizes[i];
    }
    ig_job J = {a, x, {0}, post_n * x->w};
    for (int j = 0; j < a->nidx; j++) J.st[j] = s->strides[a->block + j];
    int64_t pre = 1;
    for (int i = 0; i < a->block; i++) pre *= s->sizes[i];
    /* upstream's grain (32,768 iterations), in rows of the trailing block */
    const int64_t grain = post_n >= 32768 ? 1 : 32768 / post_n;
    tn_parallel_for(pre * a->m, grain, ig_part, &J);
    return true;
}

/* Sizes, strides and block bookkeeping shared by index and index_put. */
static void adv_post(const adv_index *a, adv_copy_ctx *x) {
    const tn_tensor *s = a->src;
    x->npost = 0;
    for (int i = a->block + a->nidx; i < s->ndim; i++) {
        x->post_sizes[x->npost] = s->sizes[i];
        x->src_post[x->npost] = s->strides[i];
        x->npost++;
    }
}

static tn_status index_of(tn_tensor *self, tn_tensor *const *indices, int64_t nin, tn_tensor **result) {
    adv_index a;
    TN_TRY(adv_prepare(self, indices, nin, &a));
    tn_tensor *out;
    tn_status st = tn_tensor_empty(a.out_ndim, a.out_sizes, self->dtype, tn_tensor_device(self), &out);
    if (st == TN_OK && tn_tensor_numel(out) > 0 && !tn_tensor_is_meta(out)) {
        adv_copy_ctx x = {.a = &a, .w = tn_dtype_itemsize(self->dtype), .src_base = self->storage->data,
                          .other_base = tn_tensor_data(out)};
        adv_post(&a, &x);
        /* out is contiguous over [pre..., bshape..., post...]. */
        int64_t post_n = 1;
        for (int i = 0; i < x.npost; i++) post_n *= x.post_sizes[i];
        tn_contiguous_strides(x.npost, x.post_sizes, x.other_post);
        x.other_m_stride = post_n;
        x.other_pre_stride = post_n * a.m;
        if (!index_gather_direct(&a, &x, post_n)) adv_walk(&a, index_copy_one, &x);
    }
    adv_free(&a);
    if (st == TN_OK) *result = out;
    return st;
}

/* aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor */
tn_status tn_op_index(const tn_value *args, tn_value *rets) {
    tn_tensor *out;
    TN_TRY(index_of(args[0].u.t, args[1].u.tlist.data, args[1].u.tlist.n, &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::_unsafe_index.Tensor(Tensor self, Tensor?[] indices) -> Tensor: index's gather (bounds
 * still checked) over integer indices only, as upstream's kernel (no bool or byte masks). */
tn_status tn_op__unsafe_index(const tn_value *args, tn_value *rets) {
    for (int64_t i = 0; i < args[1].u.tlist.n; i++) {
        const tn_tensor *ix = args[1].u.tlist.data[i];
        if (ix && ix->dtype != TN_DTYPE_INT64 && ix->dtype != TN_DTYPE_INT32)
            return tn_error(TN_ERR_RUNTIME, "_unsafe_index found unexpected index type %s", tn_dtype_infos[ix->dtype].c10_name);
    }
    return tn_op_index(args, rets);
}

typedef struct {
    adv_copy_ctx base;
    const tn_tensor *vals;   /* values expanded to the out shape */
    int pre_nd;
    int64_t pre_sizes[TN_MAX_DIMS];
} put_ctx;

static void put_one(void *c, int64_t dst_off, int64_t p, int64_t m) {
    put_ctx *x = c;
    const tn_tensor *v = x->vals;
    const adv_index *a = x->base.a;
    int w = x->base.w;
    /* Offset of values at (pre index p, broadcast index m). */
    int64_t voff = v->offset, rem = p;
    for (int i = a->block - 1; i >= 0; i--) { voff += (rem % x->pre_sizes[i]) * v->strides[i]; rem /= x->pre_sizes[i]; }
    rem = m;
    for (int i = a->nb - 1; i >= 0; i--) { voff += (rem % a->bshape[i]) * v->strides[a->block + i]; rem /= a->bshape[i]; }
    char *d = x->base.src_base + dst_off * w;
    const char *s = (const char *)v->storage->data + voff * w;
    if (!x->base.accumulate) {
        tn_strided_copy_bytes(d, x->base.src_post, s, x->base.other_post, x->base.npost, x->base.post_sizes, w);
        return;
    }
    int64_t n = 1;
    for (int i = 0; i < x->base.npost; i++) n *= x->base.post_sizes[i];
    walker wd, ws;
    walker_init(&wd, x->base.npost, x->base.post_sizes, x->base.src_post, 0);
    walker_init(&ws, x->base.npost, x->base.post_sizes, x->base.other_post, 0);
    for (int64_t e = 0; e < n; e++, walker_next(&wd), walker_next(&ws))
        combine(x->base.dt, d + wd.off * w, s + ws.off * w, RED_ADD);
}

/* index_put without a call per element, for one broadcast index dim in front (no pre
 * block) and trailing dims absent or contiguous in both self and values: elements of 1, 2,
 * 4 or 8 bytes assigned by type or blocks copied, in index order (the last of repeated
 * indices wins, as before); with accumulate, float32 / float64 / int64 elements added in
 * index order. False (nothing done) otherwise. Before: offsets rebuilt and a strided copy
 * per element, 9x upstream's time for x[idx] = v of 2e5 into 1e6. */
static bool index_put_direct(const adv_index *a, const adv_copy_ctx *x, const tn_tensor *ev) {
    if (a->block != 0 || a->nb != 1) return false;
    int64_t expect = 1;
    bool one_value = ev->strides[0] == 0; /* a broadcast scalar (index_fill's value) */
    for (int i = x->npost - 1; i >= 0; i--) {
        one_value &= x->post_sizes[i] == 1 || x->other_post[i] == 0;
        if (x->post_sizes[i] != 1 && x->src_post[i] != expect) return false;
        expect *= x->post_sizes[i];
    }
    const int w = x->w;
    if (!x->accumulate && one_value && (w == 4 || w == 8)) { /* every block filled with the one value */
        int64_t st[TN_MAX_DIMS];
        for (int j = 0; j < a->nidx; j++) st[j] = a->src->strides[j];
        char *base = x->src_base + a->src->offset * w;
        const char *vp = (const char *)ev->storage->data + ev->offset * w;
        for (int64_t m = 0; m < a->m; m++) {
            char *d = base + adv_elem_off(a, st, m) * w;
            if (w == 4) { uint32_t v; memcpy(&v, vp, 4); for (int64_t e = 0; e < expect; e++) ((uint32_t *)(void *)d)[e] = v; }
            else { uint64_t v; memcpy(&v, vp, 8); for (int64_t e = 0; e < expect; e++) ((uint64_t *)(void *)d)[e] = v; }
        }
        return true;
    }
    for (int64_t i = x->npost - 1, ex = 1; i >= 0; ex *= x->post_sizes[i], i--) /* values' blocks dense too */
        if (x->post_sizes[i] != 1 && x->other_post[i] != ex) return false;
    const int64_t post_n = expect, bytes = post_n * w, vstep = ev->strides[0];
    if (x->accumulate && !(post_n == 1 && (x->dt == TN_DTYPE_FLOAT32 || x->dt == TN_DTYPE_FLOAT64 || x->dt == TN_DTYPE_INT64)))
        return false;
    if (!x->accumulate && post_n > 1 && vstep != post_n && vstep != 0) return false;
    int64_t st[TN_MAX_DIMS];
    for (int j = 0; j < a->nidx; j++) st[j] = a->src->strides[j];
    char *base = x->src_base + a->src->offset * w;
    const char *vb = (const char *)ev->storage->data + ev->offset * w;
#define IP_LOOP(BODY) for (int64_t m = 0; m < a->m; m++) { const int64_t off_ = adv_elem_off(a, st, m); BODY; }
    if (x->accumulate) {
        if (x->dt == TN_DTYPE_FLOAT32) IP_LOOP(((float *)(void *)base)[off_] += ((const float *)(const void *)vb)[m * vstep])
        else if (x->dt == TN_DTYPE_FLOAT64) IP_LOOP(((double *)(void *)base)[off_] += ((const double *)(const void *)vb)[m * vstep])
        else IP_LOOP(((int64_t *)(void *)base)[off_] = (int64_t)((uint64_t)((int64_t *)(void *)base)[off_] + (uint64_t)((const int64_t *)(const void *)vb)[m * vstep]))
    } else if (bytes == 4 && w == 4) {
        IP_LOOP(((uint32_t *)(void *)base)[off_] = ((const uint32_t *)(const void *)vb)[m * vstep])
    } else if (bytes == 8 && w == 8) {
        IP_LOOP(((uint64_t *)(void *)base)[off_] = ((const uint64_t *)(const void *)vb)[m * vstep])
    } else {
        const int64_t vbytes = post_n > 1 ? (vstep ? bytes : 0) : vstep * w;
        IP_LOOP(memcpy(base + off_ * w, vb + m * vbytes, (size_t)bytes))
    }
#undef IP_LOOP
    return true;
}

/* self[indices] = values (or += with accumulate), in place. */
static tn_status index_put_inplace(tn_tensor *self, tn_tensor *const *indices, int64_t nin, tn_tensor *values,
                                   bool accumulate) {
    char b1[SIZES_BUF], b2[SIZES_BUF];
    if (values->dtype != self->dtype)
        return tn_error(TN_ERR_RUNTIME,
                        "Index put requires the source and destination dtypes match, got %s for the destination and %s "
                        "for the source.", tn_dtype_infos[self->dtype].c10_name, tn_dtype_infos[values->dtype].c10_name);
    if (accumulate) TN_TRY(check_reducible(self->dtype, RED_ADD, "index_put"));
    adv_index a;
    TN_TRY(adv_prepare(self, indices, nin, &a));
    tn_tensor *ev = NULL;
    int nn;
    int64_t tmp[TN_MAX_DIMS];
    tn_status st = TN_OK;
    if (tn_shape_broadcast(values->ndim, values->sizes, a.out_ndim, a.out_sizes, &nn, tmp) != TN_OK || nn != a.out_ndim ||
        memcmp(tmp, a.out_sizes, sizeof(int64_t) * (size_t)nn))
        st = tn_error(TN_ERR_RUNTIME, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
                      tn_format_sizes(values->ndim, values->sizes, b1, sizeof b1),
                      tn_format_sizes(a.out_ndim, a.out_sizes, b2, sizeof b2));
    if (st == TN_OK) st = tn_shape_expand_view(values, a.out_ndim, a.out_sizes, &ev);
    if (st == TN_OK && !tn_tensor_is_meta(self) && !tn_tensor_is_meta(values) && a.m > 0) {
        put_ctx x = {.base = {.a = &a, .w = tn_dtype_itemsize(self->dtype), .src_base = self->storage->data,
                              .accumulate = accumulate, .dt = self->dtype},
                     .vals = ev, .pre_nd = a.block};
        adv_post(&a, &x.base);
        for (int i = 0; i < x.base.npost; i++) x.base.other_post[i] = ev->strides[a.block + a.nb + i];
        for (int i = 0; i < a.block; i++) x.pre_sizes[i] = a.src->sizes[i];
        if (!index_put_direct(&a, &x.base, ev)) adv_walk(&a, put_one, &x);
    }
    tn_tensor_release(ev);
    adv_free(&a);
    return st;
}

/* aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False)
 * -> Tensor(a!): its own in-place kernel (the functional-then-copy route would copy all
 * of self for a few writes). */
tn_status tn_op_index_put_(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    TN_TRY(index_put_inplace(self, args[1].u.tlist.data, args[1].u.tlist.n, args[2].u.t, args[3].u.b));
    tn_tensor_retain(self);
    rets[0] = tn_value_tensor(self);
    return TN_OK;
}

/* aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor */
tn_status tn_op_index_put(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *out;
    TN_TRY(tn_shape_empty_like(self, &out));
    tn_shape_copy_same_dtype(out, self);
    tn_status st = index_put_inplace(out, args[1].u.tlist.data, args[1].u.tlist.n, args[2].u.t, args[3].u.b);
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- repeat_interleave -------------------------------------------------------------- */

/* repeat_interleave's counts [i0, i1) written out: count rv[i] copies of i from start[i0] (0
 * when start is NULL and i0 is 0) */
typedef struct {
    const int64_t *rv;
    int64_t *out;
    const int64_t *start;
} ri_job;
static void ri_part(void *c, int64_t i0, int64_t i1) {
    const ri_job *J = c;
    int64_t k = J->start ? J->start[i0] : 0;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t j = 0; j < J->rv[i]; j++) J->out[k++] = i;
}

/* repeat_interleave(repeats): [0]*r0 + [1]*r1 + ... in repeats' dtype (int32/int64). */
static tn_status repeat_interleave_counts(tn_tensor *rep, const tn_value *output_size, tn_tensor **out) {
    if (rep->ndim != 1) return tn_error(TN_ERR_RUNTIME, "repeat_interleave only accept 1D vector as repeat");
    if (rep->dtype != TN_DTYPE_INT64 && rep->dtype != TN_DTYPE_INT32)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"repeat_interleave_cpu\" not implemented for '%s'",
                        tn_dtype_infos[rep->dtype].c10_name);
    if (tn_tensor_is_meta(rep)) {
        if (!output_size || tn_value_is_none(output_size))
            return tn_error(TN_ERR_RUNTIME, "cannot repeat_interleave a meta tensor without output_size");
        int64_t n = output_size->u.i;
        return tn_tensor_empty(1, &n, rep->dtype, tn_tensor_device(rep), out);
    }
    int64_t n = rep->sizes[0], total = 0;
    const char *p = tn_tensor_data(rep);
    for (int64_t i = 0; i < n; i++) {
        int64_t r = read_index(rep, p, i * rep->strides[0]);
        if (r < 0) return tn_error(TN_ERR_RUNTIME, "repeats can not be negative");
        total += r;
    }
    /* no counts: upstream returns before it looks at output_size */
    if (n > 0 && output_size && !tn_value_is_none(output_size) && output_size->u.i != total)
        return tn_error(TN_ERR_RUNTIME, "allocated size does not match required size");
    TN_TRY(tn_tensor_empty(1, &total, rep->dtype, tn_tensor_device(rep), out));
    char *o = tn_tensor_data(*out);
    int64_t k = 0;
    if (rep->dtype == TN_DTYPE_INT64 && rep->strides[0] == 1) {
        /* typed runs (a dtype test per element before), on the pool from upstream's grain: each
         * part starts at the sum of the counts before it */
        ri_job J = {(const int64_t *)p, (int64_t *)o, NULL};
        int64_t *start = n >= 32768 && tn_get_num_threads() > 1 && !tn_in_parallel_region() ? malloc((size_t)n * sizeof(int64_t)) : NULL;
        if (start) {
            for (int64_t i = 0, acc = 0; i < n; i++) { start[i] = acc; acc += J.rv[i]; }
            J.start = start;
            tn_parallel_for(n, 32768, ri_part, &J);
            free(start);
        } else
            ri_part(&J, 0, n);
        return TN_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t r = read_index(rep, p, i * rep->strides[0]);
        for (int64_t j = 0; j < r; j++, k++) {
            if (rep->dtype == TN_DTYPE_INT64) ((int64_t *)o)[k] = i;
            else ((int32_t *)o)[k] = (int32_t)i;
        }
    }
    return TN_OK;
}

/* aten::repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor */
tn_status tn_op_repeat_interleave_tensor(const tn_value *args, tn_value *rets) {
    tn_tensor *out;
    TN_TRY(repeat_interleave_counts(args[0].u.t, &args[1], &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* self flattened to 1-D (a view when possible, else a contiguous copy). */
static tn_status flat_of(tn_tensor *self, tn_tensor **out) {
    int64_t n = tn_tensor_numel(self), st1;
    if (tn_view_strides(self->ndim, self->sizes, self->strides, 1, &n, &st1)) {
        *out = tn_tensor_new_view(self->storage, self->offset, 1, &n, &st1, self->dtype);
        return *out ? TN_OK : oom();
    }
    tn_tensor *c;
    TN_TRY(tn_tensor_contiguous(self, &c));
    int64_t one = 1;
    *out = tn_tensor_new_view(c->storage, c->offset, 1, &n, &one, self->dtype);
    tn_tensor_release(c);
    return *out ? TN_OK : oom();
}

/* aten::repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *,
 * SymInt? output_size=None) -> Tensor */
tn_status tn_op_repeat_interleave_self_tensor(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *rep = args[1].u.t, *input, *counts = NULL, *out = NULL;
    bool flat = tn_value_is_none(&args[2]);
    int d = 0;
    if (flat) TN_TRY(flat_of(self, &input));
    else {
        TN_TRY(tn_wrap_dim(args[2].u.i, self->ndim, &d));
        tn_tensor_retain(self);
        input = self;
    }
    tn_status st = TN_OK;
    int64_t dsize = input->ndim ? input->sizes[d] : 1;
    tn_tensor *r = rep;
    if (rep->ndim == 0 || (rep->ndim == 1 && rep->sizes[0] == 1)) {
        /* One count for every slice along dim. */
        int64_t zero = 0;
        r = tn_tensor_new_view(rep->storage, rep->offset, 1, &dsize, &zero, rep->dtype);
        if (!r) st = oom();
    } else if (rep->ndim == 1 && rep->sizes[0] != dsize) {
        st = tn_error(TN_ERR_RUNTIME,
                      "repeats must have the same size as input along dim, but got repeats.size(0) = %lld and "
                      "input.size(%d) = %lld", (long long)rep->sizes[0], d, (long long)dsize);
    }
    if (st == TN_OK) st = repeat_interleave_counts(r, &args[3], &counts);
    if (st == TN_OK) st = index_select_of(input, d, counts, &out);
    if (r != rep) tn_tensor_release(r);
    tn_tensor_release(counts);
    tn_tensor_release(input);
    if (st != TN_OK) return st;
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *,
 * SymInt? output_size=None) -> Tensor: each slice along dim repeated `repeats` times. */
tn_status tn_op_repeat_interleave_self_int(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *input, *out;
    int64_t r = args[1].u.i;
    if (r < 0) return tn_error(TN_ERR_RUNTIME, "Repeats must be non-negative");
    bool flat = tn_value_is_none(&args[2]);
    int d = 0;
    if (flat) TN_TRY(flat_of(self, &input));
    else {
        TN_TRY(tn_wrap_dim(args[2].u.i, self->ndim, &d));
        tn_tensor_retain(self);
        input = self;
    }
    if (input->ndim == 0) {
        /* A 0-D self with a dim: upstream unsqueezes at dim + 1, out of a 0-D tensor's range */
        int bad;
        tn_status st = tn_wrap_dim(d + 1, 0, &bad);
        tn_tensor_release(input);
        return st != TN_OK ? st : tn_error(TN_ERR_INDEX, "Dimension out of range");
    }
    int64_t want;
    if (__builtin_mul_overflow(input->sizes[d], r, &want)) {
        tn_tensor_release(input);
        return tn_error(TN_ERR_RUNTIME, "numel: integer multiplication overflow");
    }
    /* upstream's output_size check: the given size of dim against the computed one */
    if (!tn_value_is_none(&args[3]) && args[3].u.i != want) {
        tn_tensor_release(input);
        return tn_error(TN_ERR_RUNTIME, "repeat_interleave: Invalid output_size, expected %lld but got %lld",
                        (long long)want, (long long)args[3].u.i);
    }
    if (input->ndim + 1 > TN_MAX_DIMS) {
        tn_tensor_release(input);
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "repeat_interleave of a tensor with %d dims is not implemented by "
                        "torchnative", TN_MAX_DIMS);
    }
    /* input.unsqueeze(d+1).expand(..., r, ...) copied contiguous, then merged dims. */
    int n = input->ndim;
    int64_t es[TN_MAX_DIMS], est[TN_MAX_DIMS], os[TN_MAX_DIMS];
    for (int i = 0, j = 0; i <= n; i++) {
        if (i == d + 1) { es[i] = r; est[i] = 0; }
        else { es[i] = input->sizes[j]; est[i] = input->strides[j]; j++; }
    }
    for (int i = 0; i < n; i++) os[i] = input->sizes[i] * (i == d ? r : 1);
    tn_status st = tn_tensor_empty(n, os, input->dtype, tn_tensor_device(input), &out);
    if (st == TN_OK && tn_tensor_numel(out) > 0 && !tn_tensor_is_meta(out)) {
        /* copy_'s iterator (vector loops, the pool) from the expanded view; before, a strided
         * copy of one element at a time: repeat_interleave(10) of 1e5 float32 3x upstream's
         * time */
        int64_t ost[TN_MAX_DIMS];
        tn_contiguous_strides(n + 1, es, ost);
        st = tn_shape_copy_view(out, ost, input, est, n + 1, es);
        if (st != TN_OK) tn_tensor_release(out);
    }
    tn_tensor_release(input);
    TN_TRY(st);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False,
 * bool unsafe=False) -> Tensor(a!): index_put_ (the `unsafe` hint skips nothing here). */
tn_status tn_op_index_put_impl_(const tn_value *args, tn_value *rets) { return tn_op_index_put_(args, rets); }

/* aten::_index_put_impl(...) -> Tensor: the functional form. */
tn_status tn_op_index_put_impl(const tn_value *args, tn_value *rets) { return tn_op_index_put(args, rets); }
