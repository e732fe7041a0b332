/* reduce_plan.c — dim lists, output shapes and upstream's reduction iteration order,
 * shared by every op of the reduction family. */
#include "ops/reduce.h"

#include <stdlib.h>

#include "core/threadpool.h"

tn_status tn_reduce_dim_mask(const tn_value *dim, int ndim, bool empty_is_all, tn_dim_mask *out) {
    tn_dim_mask all = ndim >= 32 ? 0xFFFFFFFFu : ((1u << ndim) - 1u);
    if (dim->tag == TN_V_NONE) { *out = all; return TN_OK; }
    const int64_t *d;
    int64_t n, one;
    if (dim->tag == TN_V_INT) { one = dim->u.i; d = &one; n = 1; }
    else if (dim->tag == TN_V_INTLIST) { d = dim->u.ilist.data; n = dim->u.ilist.n; }
    else return tn_error(TN_ERR_TYPE, "reduction: dim must be an int or a list of ints");
    if (n == 0) { *out = empty_is_all ? all : 0; return TN_OK; }
    tn_dim_mask m = 0;
    for (int64_t i = 0; i < n; i++) {
        int w;
        TN_TRY(tn_wrap_dim(d[i], ndim, &w));
        /* dim 0 / -1 of a 0-d tensor names the tensor itself, once: [0, -1] repeats it */
        if (m & (1u << w)) return tn_error(TN_ERR_RUNTIME, "dim %d appears multiple times in the list of dims", w);
        m |= 1u << w;
    }
    *out = ndim == 0 ? 0 : m;
    return TN_OK;
}

int tn_reduce_out_sizes(const tn_tensor *t, tn_dim_mask mask, bool keepdim, int64_t *sizes) {
    int n = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (mask & (1u << d)) { if (keepdim) sizes[n++] = 1; }
        else sizes[n++] = t->sizes[d];
    }
    return n;
}

void tn_reduce_geom_build(const tn_tensor *out, const tn_tensor *in, tn_dim_mask mask,
                          bool keepdim, tn_reduce_geom *g) {
    const int nd = in->ndim;
    const int64_t ies = tn_dtype_itemsize(in->dtype), oes = tn_dtype_itemsize(out->dtype);
    int64_t shape[TN_MAX_DIMS], st[2][TN_MAX_DIMS];
    for (int d = 0, od = 0; d < nd; d++) {
        shape[d] = in->sizes[d];
        st[1][d] = in->strides[d] * ies;
        if (mask & (1u << d)) { st[0][d] = 0; if (keepdim) od++; }
        else st[0][d] = out->strides[od++] * oes;
    }
    if (nd == 0) {
        g->ndim = 1; g->nred = 1; g->sizes[0] = 1; g->st[0][0] = g->st[1][0] = 0;
        return;
    }
    /* upstream reorder_dimensions: start from reversed order, insertion sort with the
     * reduction-aware comparison (reduced dims first, then by stride, ties by size) */
    int perm[TN_MAX_DIMS];
    for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
    for (int i = 1; i < nd; i++) {
        int dim1 = i;
        for (int dim0 = i - 1; dim0 >= 0; dim0--) {
            int a = perm[dim0], b = perm[dim1], cmp = 0;
            for (int op = 0; op < 2 && cmp == 0; op++) {
                int64_t s0 = st[op][a], s1 = st[op][b];
                if (op == 0 && ((s0 == 0) != (s1 == 0))) { cmp = s1 == 0 ? 1 : -1; break; }
                if (s0 == 0 || s1 == 0) continue;
                if (s0 < s1) { cmp = -1; break; }
                if (s0 > s1) { cmp = 1; break; }
                if (shape[a] > shape[b]) { cmp = 1; break; }
            }
            if (cmp > 0) { perm[dim0] = b; perm[dim1] = a; dim1 = dim0; }
            else if (cmp < 0) break;
        }
    }
    int64_t sh[TN_MAX_DIMS], s[2][TN_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        sh[i] = shape[perm[i]];
        s[0][i] = st[0][perm[i]];
        s[1][i] = st[1][perm[i]];
    }
    /* upstream coalesce_dimensions */
    int prev = 0;
    for (int d = 1; d < nd; d++) {
        bool can = sh[prev] == 1 || sh[d] == 1 ||
                   (sh[prev] * s[0][prev] == s[0][d] && sh[prev] * s[1][prev] == s[1][d]);
        if (can) {
            if (sh[prev] == 1) { s[0][prev] = s[0][d]; s[1][prev] = s[1][d]; }
            sh[prev] *= sh[d];
        } else {
            prev++;
            if (prev != d) { s[0][prev] = s[0][d]; s[1][prev] = s[1][d]; sh[prev] = sh[d]; }
        }
    }
    g->ndim = prev + 1;
    g->nred = 0;
    for (int i = 0; i < g->ndim; i++) {
        g->sizes[i] = sh[i];
        g->st[0][i] = s[0][i];
        g->st[1][i] = s[1][i];
        if (s[0][i] == 0 && g->nred == i) g->nred = i + 1;
    }
}

void tn_reduce_for_each(const tn_reduce_geom *g, char *out, const char *in, tn_reduce_loop2d fn, void *ctx) {
    int64_t st[4] = {g->st[0][0], g->st[1][0], g->ndim > 1 ? g->st[0][1] : 0, g->ndim > 1 ? g->st[1][1] : 0};
    int64_t size0 = g->sizes[0], size1 = g->ndim > 1 ? g->sizes[1] : 1;
    int64_t idx[TN_MAX_DIMS] = {0};
    for (int i = 0; i < g->ndim; i++) if (g->sizes[i] == 0) return;
    for (;;) {
        fn(out, in, st, size0, size1, ctx);
        int d = 2;
        for (; d < g->ndim; d++) {
            out += g->st[0][d];
            in += g->st[1][d];
            if (++idx[d] < g->sizes[d]) break;
            out -= g->st[0][d] * g->sizes[d];
            in -= g->st[1][d] * g->sizes[d];
            idx[d] = 0;
        }
        if (d >= g->ndim) return;
    }
}

/* tn_reduce_for_each over parts of the outermost dim (kept), cut as upstream's
 * parallel_dim_reduction cuts: `parts` equal parts, each end rounded down to a multiple of
 * `round` columns but the last */
typedef struct par_job {
    const tn_reduce_geom *g;
    char *out;
    const char *in;
    tn_reduce_loop2d fn;
    void *ctx;
    int64_t parts, round;
} par_job;

static int64_t par_cut(const par_job *j, int64_t p) {
    const int64_t cols = j->g->sizes[j->g->ndim - 1];
    if (p >= j->parts) return cols;
    int64_t c = (cols + j->parts - 1) / j->parts * p;
    if (c > cols) c = cols;
    return c - c % j->round;
}

static void par_worker(void *p, int64_t b, int64_t e) {
    const par_job *j = p;
    for (int64_t q = b; q < e; q++) {
        int64_t lo = par_cut(j, q), hi = par_cut(j, q + 1);
        if (lo >= hi) continue;
        tn_reduce_geom part = *j->g;
        const int last = part.ndim - 1;
        part.sizes[last] = hi - lo;
        tn_reduce_for_each(&part, j->out + lo * part.st[0][last], j->in + lo * part.st[1][last], j->fn, j->ctx);
    }
}

void tn_reduce_for_each_par(const tn_reduce_geom *g, char *out, const char *in, int64_t in_esize, tn_reduce_loop2d fn,
                            void *ctx) {
    const int last = g->ndim - 1;
    int64_t total = 1;
    for (int i = 0; i < g->ndim; i++) total *= g->sizes[i];
    const int64_t threads = tn_get_num_threads();
    if (g->ndim < 2 || g->nred > last || g->sizes[last] < 2 || total < 32768 || threads < 2 || tn_in_parallel_region()) {
        tn_reduce_for_each(g, out, in, fn, ctx);
        return;
    }
    par_job j = {g, out, in, fn, ctx, threads < g->sizes[last] ? threads : g->sizes[last], 1};
    /* adjacent columns in memory: parts of whole 128-byte lines (upstream's round_columns) */
    if (g->st[1][last] == in_esize) j.round = 128 / in_esize;
    tn_parallel_for(j.parts, 1, par_worker, &j);
}

void tn_reduce_for_range(const tn_reduce_geom *g, char *out, const char *in, int64_t begin, int64_t end,
                         tn_reduce_loop2d fn, void *ctx) {
    int64_t idx[TN_MAX_DIMS], rest = begin;
    for (int d = 0; d < g->ndim; d++) { idx[d] = rest % g->sizes[d]; rest /= g->sizes[d]; }
    const int64_t st[4] = {g->st[0][0], g->st[1][0], 0, 0};
    for (int64_t pos = begin; pos < end;) {
        char *o = out;
        const char *i = in;
        for (int d = 0; d < g->ndim; d++) { o += idx[d] * g->st[0][d]; i += idx[d] * g->st[1][d]; }
        int64_t n = g->sizes[0] - idx[0] < end - pos ? g->sizes[0] - idx[0] : end - pos;
        fn(o, i, st, n, 1, ctx);
        pos += n;
        idx[0] = 0;
        for (int d = 1; d < g->ndim; d++) {
            if (++idx[d] < g->sizes[d]) break;
            idx[d] = 0;
        }
    }
}

/* Copies src into dst elementwise with conversion (same shape). */
static void copy_convert(tn_tensor *dst, const tn_tensor *src) {
    int64_t n = tn_tensor_numel(src);
    if (n == 0) return;
    if (dst->dtype == TN_DTYPE_FLOAT32 && tn_tensor_is_contiguous(src) && tn_tensor_is_contiguous(dst) &&
        (src->dtype == TN_DTYPE_BFLOAT16 || src->dtype == TN_DTYPE_FLOAT16)) {
        /* the common widening of a reduced-float input, exact */
        const tn_bfloat16 *s = tn_tensor_data((tn_tensor *)src);
        float *d = tn_tensor_data(dst);
        if (src->dtype == TN_DTYPE_BFLOAT16)
            for (int64_t i = 0; i < n; i++) d[i] = tn_bf16_to_f32(s[i]);
        else
            for (int64_t i = 0; i < n; i++) d[i] = tn_half_to_f32(s[i]);
        return;
    }
    /* the elementwise copy (upstream's .to(dtype)): vectorised and threaded, where the loop
     * below reads each element through a conversion to double (minutes for 2**31 elements) */
    tn_value a[3] = {tn_value_tensor(dst), tn_value_tensor((tn_tensor *)src), tn_value_bool(false)}, r;
    if (tn_dispatch(TN_OP_copy_, a, &r) == TN_OK) { tn_tensor_release(r.u.t); return; }
    int nd = src->ndim;
    int64_t idx[TN_MAX_DIMS] = {0};
    const int64_t ses = tn_dtype_itemsize(src->dtype), des = tn_dtype_itemsize(dst->dtype);
    const char *sp = tn_tensor_data(src);
    char *dp = tn_tensor_data(dst);
    bool ints = tn_dtype_is_integral(src->dtype, true);
    for (int64_t k = 0; k < n; k++) {
        if (ints) tn_rd_set_i(dp, dst->dtype, tn_rd_get_i(sp, src->dtype));
        else tn_rd_set(dp, dst->dtype, tn_rd_get(sp, src->dtype));
        for (int d = nd - 1; d >= 0; d--) {
            sp += src->strides[d] * ses;
            dp += dst->strides[d] * des;
            if (++idx[d] < src->sizes[d]) break;
            sp -= src->strides[d] * src->sizes[d] * ses;
            dp -= dst->strides[d] * dst->sizes[d] * des;
            idx[d] = 0;
        }
    }
}

/* Whether t's strides describe a dense, non-overlapping layout (some dim permutation of
 * contiguous), so a copy may keep them. */
static bool is_dense(const tn_tensor *t) {
    int order[TN_MAX_DIMS], n = 0;
    for (int d = 0; d < t->ndim; d++) if (t->sizes[d] != 1) order[n++] = d;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t->strides[order[j]] < t->strides[order[j - 1]]; j--) {
            int x = order[j]; order[j] = order[j - 1]; order[j - 1] = x;
        }
    int64_t expect = 1;
    for (int i = 0; i < n; i++) {
        if (t->strides[order[i]] != expect) return false;
        expect *= t->sizes[order[i]];
    }
    return true;
}

tn_status tn_reduce_to_dtype(tn_tensor *t, tn_dtype dtype, tn_tensor **out) {
    if (t->dtype == dtype) { tn_tensor_retain(t); *out = t; return TN_OK; }
    tn_tensor *r;
    TN_TRY(tn_tensor_empty(t->ndim, t->sizes, dtype, tn_tensor_device(t), &r));
    if (!tn_tensor_is_contiguous(t) && is_dense(t) && tn_tensor_numel(t) > 0) {
        /* keep the layout (memory_format=preserve), as the reduction order depends on it */
        int64_t need = 0;
        for (int d = 0; d < t->ndim; d++) need += (t->sizes[d] - 1) * t->strides[d];
        (void)need;
        memcpy(r->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    }
    if (!tn_tensor_is_meta(t)) copy_convert(r, t);
    *out = r;
    return TN_OK;
}

tn_status tn_reduce_check_dtype(const char *op, tn_dtype dt) {
    char k = tn_dtype_infos[dt].kind;
    if (k == 'c')
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "%s of complex tensors is not implemented by torchnative", op);
    if (k == 'q' || k == 'x' || (k == 'f' && tn_dtype_itemsize(dt) == 1) || (dt >= TN_DTYPE_UINT1 && dt <= TN_DTYPE_INT7))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "%s is not implemented by torchnative for dtype %s", op,
                        tn_dtype_infos[dt].c10_name);
    return TN_OK;
}
