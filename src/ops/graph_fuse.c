/* graph_fuse.c — chains of captured steps that replay runs as one step: transformers'
 * RMSNorm (pow, mean, add, rsqrt, mul, mul), rotary embedding (mul, neg, cat, mul, add over
 * two slices) and SwiGLU (silu, mul) in float32, and the static cache's update (arange,
 * add, add_, index_copy_ twice). A decode step of a Llama-style model is mostly such small
 * operators by count; each costs its door call and the first touch of its tensors' metadata
 * (docs/GRAPHS.md, "Chains"). A chain reads its inputs and writes its results; the
 * intermediates, which nothing else holds (graph_internal.h), are not written at all. The
 * arithmetic is kernels/fused_chain.c's, bit for bit the steps'. */
#include "ops/graph_internal.h"

#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "autograd/autograd.h"
#include "kernels/fused_chain.h"

/* ---- what a step looks like ------------------------------------------------------------ */

/* the next step after i that replay runs (views are skipped), or -1 */
static int64_t next_live(const tn_graph *g, int64_t i) {
    for (int64_t j = i + 1; j < g->n; j++)
        if (g->steps[j].kind != STEP_SKIP) return j;
    return -1;
}

/* the k steps replay runs from i0 on (i0 first, views skipped): their indices in idx, the
 * steps in s; false when fewer remain */
static bool live_run(const tn_graph *g, int64_t i0, int k, int64_t *idx, const step **s) {
    idx[0] = i0;
    for (int j = 1; j < k; j++)
        if ((idx[j] = next_live(g, idx[j - 1])) < 0) return false;
    for (int j = 0; j < k; j++) s[j] = &g->steps[idx[j]];
    return true;
}

static tn_tensor *targ(const step *st, int i) {
    return i < st->nargs && st->args[i].tag == TN_V_TENSOR ? st->args[i].u.t : NULL;
}

/* a functional step of operator op with one fresh tensor result */
static tn_tensor *into1(const step *st, tn_op_id op) {
    if (st->op != op || st->kind != STEP_INTO || st->nrets != 1 || st->fresh != 1 || st->rets[0].tag != TN_V_TENSOR)
        return NULL;
    return st->rets[0].u.t;
}

/* a dense float32 CPU tensor the kernels may read as plain numbers */
static bool plain_f32(const tn_tensor *t) {
    return t && t->dtype == TN_DTYPE_FLOAT32 && !tn_tensor_is_meta(t) && !t->batch && t->storage &&
           t->storage->device.type == TN_DEVICE_CPU &&
           !(t->flags & (TN_TENSOR_CONJ | TN_TENSOR_NEG)) && t->storage->data;
}

static bool same_geometry(const tn_tensor *a, const tn_tensor *b) {
    return a->ndim == b->ndim && !memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim);
}

static bool number_is(const tn_value *v, double x) {
    return (v->tag == TN_V_INT && (double)v->u.i == x) || (v->tag == TN_V_DOUBLE && v->u.d == x);
}

/* dim value naming t's last dimension (-1 or ndim - 1) */
static bool is_last_dim(int64_t d, const tn_tensor *t) { return d == -1 || d == t->ndim - 1; }

/* t is an intermediate of the chain steps [lo, hi] no one else holds: every reference to it
 * is one of those steps' arguments or results, and no other tensor views its storage */
static bool dead_inside(const tn_graph *g, const tn_tensor *t, int64_t lo, int64_t hi) {
    long refs = 0;
    for (int64_t i = lo; i <= hi; i++) {
        const step *st = &g->steps[i];
        for (int j = 0; j < st->nargs; j++) {
            if (st->args[j].tag == TN_V_TENSOR && st->args[j].u.t == t) refs++;
            if (st->args[j].tag == TN_V_TENSORLIST)
                for (int64_t k = 0; k < st->args[j].u.tlist.n; k++) refs += st->args[j].u.tlist.data[k] == t;
        }
        for (int k = 0; k < st->nrets; k++) refs += st->rets[k].tag == TN_V_TENSOR && st->rets[k].u.t == t;
    }
    return atomic_load(&t->refcount) == refs && t->storage && atomic_load(&t->storage->refcount) == 1;
}

/* whether the door would record any step of [lo, hi] for autograd (then they run there) */
static bool records(const tn_graph *g, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i <= hi; i++)
        if (g->steps[i].kind != STEP_SKIP && tn_autograd_should_record(g->steps[i].op, g->steps[i].args)) return true;
    return false;
}

/* ---- RMSNorm ---------------------------------------------------------------------------
 *   a = pow(x, 2); v = mean(a, [-1], keepdim=True); v2 = add(v, eps); r = rsqrt(v2);
 *   h = mul(x, r); y = mul(w, h)          (either operand order in the two products)
 * x: contiguous rows of n (TN_CHAIN_RMS_MIN_N..MAX_N) floats; w: n contiguous floats; eps a
 * 0-dim float tensor or a number, added with alpha 1. */
typedef struct rms_match {
    const tn_tensor *x, *w, *y;
    float eps;
    int64_t rows, n, end;
} rms_match;

static bool eps_value(const step *st, float *eps) {
    if (!number_is(&st->args[2], 1.0)) return false; /* alpha */
    if (st->op == TN_OP_add_Scalar) {
        const tn_value *v = &st->args[1];
        if (v->tag == TN_V_DOUBLE) { *eps = (float)v->u.d; return true; }
        if (v->tag == TN_V_INT) { *eps = (float)v->u.i; return true; }
        return false;
    }
    const tn_tensor *e = targ(st, 1);
    if (!e || e->ndim != 0 || tn_tensor_is_meta(e) || e->storage->device.type != TN_DEVICE_CPU || e->batch ||
        (e->flags & (TN_TENSOR_CONJ | TN_TENSOR_NEG)))
        return false;
    if (e->dtype == TN_DTYPE_FLOAT64) *eps = (float)*(const double *)tn_tensor_data(e);
    else if (e->dtype == TN_DTYPE_FLOAT32) *eps = *(const float *)tn_tensor_data(e);
    else return false;
    return true;
}

/* the other operand of a two-operand step (a product) one of whose operands is `one` */
static tn_tensor *other_factor(const step *st, const tn_tensor *one) {
    tn_tensor *a = targ(st, 0), *b = targ(st, 1);
    if (a == one) return b;
    if (b == one) return a;
    return NULL;
}

static bool match_rmsnorm(const tn_graph *g, int64_t i0, rms_match *m) {
    int64_t i[6];
    const step *s[6];
    if (!live_run(g, i0, 6, i, s)) return false;
    const step *s0 = s[0], *s1 = s[1], *s2 = s[2], *s3 = s[3], *s4 = s[4], *s5 = s[5];
    tn_tensor *x = targ(s0, 0), *a = into1(s0, TN_OP_pow_Tensor_Scalar);
    if (!a || !plain_f32(x) || !tn_tensor_is_contiguous(x) || x->ndim < 1 || !number_is(&s0->args[1], 2.0)) return false;
    int64_t n = x->sizes[x->ndim - 1];
    if (n < TN_CHAIN_RMS_MIN_N || n > TN_CHAIN_RMS_MAX_N) return false;
    /* mean(a, [-1], keepdim=True, dtype=None) */
    tn_tensor *v = into1(s1, TN_OP_mean_dim);
    if (!v || targ(s1, 0) != a || s1->args[1].tag != TN_V_INTLIST || s1->args[1].u.ilist.n != 1 ||
        !is_last_dim(s1->args[1].u.ilist.data[0], x) || s1->args[2].tag != TN_V_BOOL || !s1->args[2].u.b ||
        s1->args[3].tag != TN_V_NONE)
        return false;
    tn_tensor *v2 = into1(s2, s2->op == TN_OP_add_Scalar ? TN_OP_add_Scalar : TN_OP_add_Tensor);
    if (!v2 || targ(s2, 0) != v || !eps_value(s2, &m->eps)) return false;
    tn_tensor *r = into1(s3, TN_OP_rsqrt);
    if (!r || targ(s3, 0) != v2) return false;
    tn_tensor *h = into1(s4, TN_OP_mul_Tensor);
    if (!h || other_factor(s4, r) != x) return false;
    tn_tensor *y = into1(s5, TN_OP_mul_Tensor), *w = other_factor(s5, h);
    if (!y || !plain_f32(w) || w->ndim != 1 || w->sizes[0] != n || w->strides[0] != 1) return false;
    /* every result float32 of x's shape (r and v keep a 1 in the last dim) */
    const tn_tensor *res[6] = {a, v, v2, r, h, y};
    for (int k = 0; k < 6; k++)
        if (!plain_f32(res[k]) || !tn_tensor_is_contiguous(res[k]) || res[k]->ndim != x->ndim) return false;
    if (!same_geometry(a, x) || !same_geometry(h, x) || !same_geometry(y, x)) return false;
    if (!dead_inside(g, a, i[0], i[5]) || !dead_inside(g, v, i[0], i[5]) || !dead_inside(g, v2, i[0], i[5]) ||
        !dead_inside(g, r, i[0], i[5]) || !dead_inside(g, h, i[0], i[5]))
        return false;
    m->x = x, m->w = w, m->y = y, m->n = n, m->rows = tn_tensor_numel(x) / n, m->end = i[5];
    return !records(g, i[0], i[5]);
}

/* ---- rotary embedding ------------------------------------------------------------------
 *   t1 = mul(q, cos); x1 = q[..., :h]; x2 = q[..., h:] (views); nq = neg(x2);
 *   c = cat([nq, x1], -1); t2 = mul(c, sin); y = add(t1, t2)
 * q: float32 with a contiguous last dim of n = 2h; cos and sin broadcast to q's shape with
 * a contiguous last dim of n; y of q's shape with a contiguous last dim (any order of the
 * others: an elementwise result follows its input's layout). */
typedef struct rot_match {
    const tn_tensor *q, *c, *s, *y;
    int64_t cst[TN_MAX_DIMS], sst[TN_MAX_DIMS]; /* cos / sin strides aligned to q's dims (0: broadcast) */
    int64_t end;
} rot_match;

/* t's strides aligned right to q's ndim, 0 where t broadcasts; false unless t broadcasts
 * to q's shape with a contiguous full last dim */
static bool broadcast_strides(const tn_tensor *t, const tn_tensor *q, int64_t *st) {
    if (!plain_f32(t) || t->ndim > q->ndim || t->ndim < 1) return false;
    int off = q->ndim - t->ndim;
    for (int d = 0; d < q->ndim; d++) {
        if (d < off) { st[d] = 0; continue; }
        int64_t sz = t->sizes[d - off];
        if (sz == q->sizes[d]) st[d] = sz == 1 ? 0 : t->strides[d - off];
        else if (sz == 1) st[d] = 0;
        else return false;
    }
    return t->sizes[t->ndim - 1] == q->sizes[q->ndim - 1] && t->strides[t->ndim - 1] == 1;
}

/* v is the view q[..., start:start + len] */
static bool last_slice_of(const tn_tensor *v, const tn_tensor *q, int64_t start, int64_t len) {
    if (!v || v->storage != q->storage || v->dtype != q->dtype || v->ndim != q->ndim ||
        v->offset != q->offset + start * q->strides[q->ndim - 1] || v->sizes[v->ndim - 1] != len ||
        (v->flags & (TN_TENSOR_CONJ | TN_TENSOR_NEG)))
        return false;
    for (int d = 0; d < q->ndim; d++)
        if (v->strides[d] != q->strides[d] || (d < q->ndim - 1 && v->sizes[d] != q->sizes[d])) return false;
    return true;
}

static bool match_rotary(const tn_graph *g, int64_t i0, rot_match *m) {
    int64_t i[5];
    const step *s[5];
    if (!live_run(g, i0, 5, i, s)) return false;
    const step *s0 = s[0], *s1 = s[1], *s2 = s[2], *s3 = s[3], *s4 = s[4];
    tn_tensor *t1 = into1(s0, TN_OP_mul_Tensor), *q = targ(s0, 0), *cs = targ(s0, 1);
    if (!t1 || !plain_f32(q) || q->ndim < 1 || q->ndim > TN_MAX_DIMS || q->strides[q->ndim - 1] != 1) return false;
    int64_t n = q->sizes[q->ndim - 1], h = n / 2;
    if (n < 2 || n % 2) return false;
    tn_tensor *nq = into1(s1, TN_OP_neg);
    if (!nq || !last_slice_of(targ(s1, 0), q, h, h)) return false;
    /* cat([nq, x1], dim) */
    tn_tensor *c = into1(s2, TN_OP_cat);
    if (!c || s2->args[0].tag != TN_V_TENSORLIST || s2->args[0].u.tlist.n != 2 || s2->args[0].u.tlist.data[0] != nq ||
        !last_slice_of(s2->args[0].u.tlist.data[1], q, 0, h) || s2->args[1].tag != TN_V_INT ||
        !is_last_dim(s2->args[1].u.i, q))
        return false;
    tn_tensor *t2 = into1(s3, TN_OP_mul_Tensor), *sn = targ(s3, 1);
    if (!t2 || targ(s3, 0) != c) return false;
    tn_tensor *y = into1(s4, TN_OP_add_Tensor);
    if (!y || targ(s4, 0) != t1 || targ(s4, 1) != t2 || !number_is(&s4->args[2], 1.0)) return false;
    if (!broadcast_strides(cs, q, m->cst) || !broadcast_strides(sn, q, m->sst)) return false;
    const tn_tensor *res[5] = {t1, nq, c, t2, y};
    for (int k = 0; k < 5; k++)
        if (!plain_f32(res[k]) || res[k]->ndim != q->ndim) return false;
    if (y->strides[y->ndim - 1] != 1) return false; /* y takes q's layout (elementwise results follow it) */
    if (!same_geometry(t1, q) || !same_geometry(c, q) || !same_geometry(t2, q) || !same_geometry(y, q)) return false;
    if (!dead_inside(g, t1, i[0], i[4]) || !dead_inside(g, nq, i[0], i[4]) || !dead_inside(g, c, i[0], i[4]) ||
        !dead_inside(g, t2, i[0], i[4]))
        return false;
    m->q = q, m->c = cs, m->s = sn, m->y = y, m->end = i[4];
    return !records(g, i[0], i[4]);
}

/* ---- SwiGLU ----------------------------------------------------------------------------
 *   a = silu(g); y = mul(a, u)   (either operand order), g, u, y contiguous of one shape */
typedef struct swiglu_match {
    const tn_tensor *g, *u, *y;
    int64_t end;
} swiglu_match;

static bool match_swiglu(const tn_graph *g, int64_t i0, swiglu_match *m) {
    int64_t i1 = next_live(g, i0);
    if (i1 < 0) return false;
    const step *s0 = &g->steps[i0], *s1 = &g->steps[i1];
    tn_tensor *gt = targ(s0, 0), *a = into1(s0, TN_OP_silu), *y = into1(s1, TN_OP_mul_Tensor);
    if (!a || !y || !plain_f32(gt) || !tn_tensor_is_contiguous(gt)) return false;
    tn_tensor *u = other_factor(s1, a);
    if (!plain_f32(u) || !tn_tensor_is_contiguous(u) || !same_geometry(u, gt) || !plain_f32(a) ||
        !same_geometry(a, gt) || !plain_f32(y) || !tn_tensor_is_contiguous(y) || !same_geometry(y, gt))
        return false;
    if (!dead_inside(g, a, i0, i1)) return false;
    m->g = gt, m->u = u, m->y = y, m->end = i1;
    return !records(g, i0, i1);
}

/* ---- the static cache's update (transformers' StaticLayer.update) ---------------------
 *   a = arange(L); pos = add(a, cum); cum.add_(L); K.index_copy_(d, pos, k); V.index_copy_(d, pos, v)
 * cum: one int64; K and V of one dtype with k and v theirs, a contiguous last dim that is
 * not d, k / v of K / V's sizes but L along d; no two of cum, K, V, k, v share storage. */
typedef struct kv_match {
    const tn_tensor *cum, *K, *V, *k, *v;
    int64_t L, dim, end;
} kv_match;

static bool kv_pair_ok(const tn_tensor *K, const tn_tensor *k, int64_t d, int64_t L) {
    if (!K || !k || K->dtype != k->dtype || K->ndim != k->ndim || K->ndim < 2 || d >= K->ndim - 1 || tn_tensor_is_meta(K) ||
        tn_tensor_is_meta(k) || K->batch || k->batch || ((K->flags | k->flags) & (TN_TENSOR_CONJ | TN_TENSOR_NEG)) ||
        !K->storage->data || !k->storage->data || K->strides[K->ndim - 1] != 1 || k->strides[k->ndim - 1] != 1 ||
        K->storage->device.type != TN_DEVICE_CPU || k->storage->device.type != TN_DEVICE_CPU)
        return false;
    for (int e = 0; e < K->ndim; e++)
        if (k->sizes[e] != (e == d ? L : K->sizes[e])) return false;
    return true;
}

static bool match_kv_update(const tn_graph *g, int64_t i0, kv_match *m) {
    int64_t i[5];
    const step *s[5];
    if (!live_run(g, i0, 5, i, s)) return false;
    const step *s0 = s[0], *s1 = s[1], *s2 = s[2], *s3 = s[3], *s4 = s[4];
    tn_tensor *a = into1(s0, TN_OP_arange);
    if (!a || s0->args[0].tag != TN_V_INT || a->dtype != TN_DTYPE_INT64 || a->ndim != 1 || a->sizes[0] != s0->args[0].u.i ||
        !tn_tensor_is_contiguous(a) || tn_tensor_is_meta(a))
        return false;
    int64_t L = a->sizes[0];
    tn_tensor *pos = into1(s1, TN_OP_add_Tensor), *cum = other_factor(s1, a);
    if (!pos || !cum || targ(s1, 0) != a || !number_is(&s1->args[2], 1.0) || cum->dtype != TN_DTYPE_INT64 ||
        tn_tensor_numel(cum) != 1 || cum->ndim > 1 || tn_tensor_is_meta(cum) || cum->batch || !cum->storage->data ||
        pos->dtype != TN_DTYPE_INT64 || !same_geometry(pos, a) || !tn_tensor_is_contiguous(pos))
        return false;
    /* cum.add_(L): the number as a wrapped 0-dim int64 tensor or a Scalar, alpha 1 */
    if (s2->kind != STEP_RERUN || targ(s2, 0) != cum || !number_is(&s2->args[2], 1.0)) return false;
    if (s2->op == TN_OP_add__Tensor) {
        const tn_tensor *l = targ(s2, 1);
        if (!l || l->ndim != 0 || l->dtype != TN_DTYPE_INT64 || tn_tensor_is_meta(l) || !l->storage->data ||
            *(const int64_t *)tn_tensor_data(l) != L)
            return false;
    } else if (s2->op != TN_OP_add__Scalar || s2->args[1].tag != TN_V_INT || s2->args[1].u.i != L) {
        return false;
    }
    const step *cp[2] = {s3, s4};
    const tn_tensor *dst[2], *src[2];
    m->dim = -1;
    for (int c = 0; c < 2; c++) {
        if (cp[c]->op != TN_OP_index_copy_ || cp[c]->kind != STEP_RERUN || cp[c]->args[1].tag != TN_V_INT ||
            targ(cp[c], 2) != pos)
            return false;
        dst[c] = targ(cp[c], 0), src[c] = targ(cp[c], 3);
        if (!dst[c] || !src[c]) return false;
        int64_t d = cp[c]->args[1].u.i;
        if (d < 0) d += dst[c]->ndim;
        if (c == 0) m->dim = d;
        if (d != m->dim || d < 0 || !kv_pair_ok(dst[c], src[c], d, L)) return false;
    }
    const tn_storage *sg[5] = {cum->storage, dst[0]->storage, dst[1]->storage, src[0]->storage, src[1]->storage};
    for (int x = 0; x < 5; x++)
        for (int y = x + 1; y < 5; y++)
            if (sg[x] == sg[y]) return false;
    if (!dead_inside(g, a, i[0], i[4]) || !dead_inside(g, pos, i[0], i[4])) return false;
    m->cum = cum, m->K = dst[0], m->V = dst[1], m->k = src[0], m->v = src[1], m->L = L, m->end = i[4];
    return !records(g, i[0], i[4]);
}

/* ---- moving a step next to its consumer ------------------------------------------------
 * transformers' MLP computes silu(gate_proj(x)) * up_proj(x): the up product runs between
 * the silu and its product. A functional step (kind "into") writes only its own fresh
 * results, so a silu whose result nothing but the product reads can run right before it,
 * after the functional steps in between, with the same results; then the two are a chain. */
#define MOVE_MAX_GAP 8

static bool references(const step *st, const tn_tensor *t) {
    for (int j = 0; j < st->nargs; j++) {
        if (st->args[j].tag == TN_V_TENSOR && st->args[j].u.t == t) return true;
        if (st->args[j].tag == TN_V_TENSORLIST)
            for (int64_t k = 0; k < st->args[j].u.tlist.n; k++)
                if (st->args[j].u.tlist.data[k] == t) return true;
    }
    return false;
}

static void move_silu_steps(tn_graph *g) {
    for (int64_t i = 0; i < g->n; i++) {
        tn_tensor *a = into1(&g->steps[i], TN_OP_silu);
        if (!a) continue;
        int64_t j = i + 1;
        for (; j < g->n && j - i <= MOVE_MAX_GAP; j++) {
            const step *sj = &g->steps[j];
            if (references(sj, a)) break;
            if (sj->kind != STEP_INTO && sj->kind != STEP_SKIP) { j = g->n; break; }
        }
        if (j >= g->n || j - i > MOVE_MAX_GAP || j == i + 1) continue;
        const step *mul = &g->steps[j];
        if (!into1(mul, TN_OP_mul_Tensor) || !other_factor(mul, a)) continue;
        step moved = g->steps[i];
        memmove(&g->steps[i], &g->steps[i + 1], sizeof(step) * (size_t)(j - 1 - i));
        g->steps[j - 1] = moved;
        i = j - 1;
    }
}

void tn_graph_reorder_for_chains(tn_graph *g) {
    const char *env = getenv("TN_GRAPH_CHAINS");
    if (env && !strcmp(env, "0")) return;
    move_silu_steps(g);
}

/* ---- planning and running --------------------------------------------------------------- */

/* What a chain reads and writes, resolved at planning: its tensors (inputs, then the
 * output), the memory and geometry each had then, and the constants. */
#define CHAIN_TENSORS 5
#define KV_MAX_L 64 /* longest update chained (a decode step writes 1 position) */
struct chain_plan {
    int nt;
    int64_t live; /* steps of the chain replay would run one by one */
    tn_tensor *t[CHAIN_TENSORS];
    const void *data[CHAIN_TENSORS];
    uint64_t geo[CHAIN_TENSORS];
    float eps;              /* RMSNorm */
    int64_t rows, n;        /* RMSNorm, rotary: rows of n; SwiGLU: n elements */
    int64_t L, dim;         /* the cache update: positions written, along dim */
    int64_t cst[TN_MAX_DIMS], sst[TN_MAX_DIMS]; /* rotary: cos / sin strides on q's dims */
};

/* a hash of t's dims and strides (FNV-1a over the words) */
static uint64_t geometry(const tn_tensor *t) {
    uint64_t h = 1469598103934665603ull ^ (uint64_t)t->ndim;
    for (int d = 0; d < t->ndim; d++) {
        h = (h ^ (uint64_t)t->sizes[d]) * 1099511628211ull;
        h = (h ^ (uint64_t)t->strides[d]) * 1099511628211ull;
    }
    return h;
}

static struct chain_plan *new_plan(int nt, const tn_tensor *const *ts) {
    struct chain_plan *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->nt = nt;
    for (int k = 0; k < nt; k++) {
        p->t[k] = (tn_tensor *)ts[k];
        p->data[k] = tn_tensor_data(ts[k]);
        p->geo[k] = geometry(ts[k]);
    }
    return p;
}

/* the number of steps replay runs in [lo, hi] */
static int64_t live_steps(const tn_graph *g, int64_t lo, int64_t hi) {
    int64_t c = 0;
    for (int64_t i = lo; i <= hi; i++) c += g->steps[i].kind != STEP_SKIP;
    return c;
}

void tn_graph_plan_chains(tn_graph *g) {
    const char *env = getenv("TN_GRAPH_CHAINS");
    if (env && !strcmp(env, "0")) return;
    int64_t need = 0;
    for (int64_t i = 0; i < g->n; i++) {
        step *st = &g->steps[i];
        if (st->kind == STEP_SKIP || st->group) continue;
        rms_match rm;
        rot_match ro;
        swiglu_match sw;
        kv_match kv;
        struct chain_plan *p = NULL;
        int64_t end = -1;
        if (st->op == TN_OP_pow_Tensor_Scalar && match_rmsnorm(g, i, &rm) && rm.end - i < INT32_MAX) {
            const tn_tensor *ts[3] = {rm.x, rm.w, rm.y};
            if ((p = new_plan(3, ts))) {
                p->eps = rm.eps, p->rows = rm.rows, p->n = rm.n;
                st->chain = CHAIN_RMSNORM;
                if (rm.rows * (rm.n + 1) > need) need = rm.rows * (rm.n + 1);
            }
            end = rm.end;
        } else if (st->op == TN_OP_silu && match_swiglu(g, i, &sw) && sw.end - i < INT32_MAX) {
            const tn_tensor *ts[3] = {sw.g, sw.u, sw.y};
            if ((p = new_plan(3, ts))) {
                p->n = tn_tensor_numel(sw.g);
                st->chain = CHAIN_SWIGLU;
            }
            end = sw.end;
        } else if (st->op == TN_OP_arange && match_kv_update(g, i, &kv) && kv.L <= KV_MAX_L && kv.end - i < INT32_MAX) {
            const tn_tensor *ts[5] = {kv.cum, kv.K, kv.V, kv.k, kv.v};
            if ((p = new_plan(5, ts))) {
                p->L = kv.L, p->dim = kv.dim;
                st->chain = CHAIN_KV_UPDATE;
            }
            end = kv.end;
        } else if (st->op == TN_OP_mul_Tensor && match_rotary(g, i, &ro) && ro.end - i < INT32_MAX) {
            const tn_tensor *ts[4] = {ro.q, ro.c, ro.s, ro.y};
            if ((p = new_plan(4, ts))) {
                memcpy(p->cst, ro.cst, sizeof p->cst);
                memcpy(p->sst, ro.sst, sizeof p->sst);
                p->n = ro.q->sizes[ro.q->ndim - 1];
                p->rows = tn_tensor_numel(ro.q) / p->n;
                st->chain = CHAIN_ROTARY;
            }
            end = ro.end;
        }
        if (p) {
            p->live = live_steps(g, i, end);
            st->plan = p;
            st->chain_end = (int32_t)end;
            i = end;
        }
    }
    if (need > 0 && (g->scratch = malloc(sizeof(float) * (size_t)need))) {
        g->scratch_n = need;
    } else if (need > 0) { /* no memory for the scratch: the RMSNorm steps run one by one */
        for (int64_t i = 0; i < g->n; i++)
            if (g->steps[i].chain == CHAIN_RMSNORM) g->steps[i].chain = CHAIN_NONE;
    }
}

/* the plan's tensors still have the memory and geometry they had at planning, and the door
 * would not record the chain for autograd (no input requires grad while grad mode is on;
 * planning checked the steps themselves) */
static bool plan_holds(const struct chain_plan *p) {
    bool grad = tn_grad_mode_enabled();
    for (int k = 0; k < p->nt; k++) {
        const tn_tensor *t = p->t[k];
        if (tn_tensor_data(t) != p->data[k] || geometry(t) != p->geo[k] || t->batch ||
            (t->flags & (TN_TENSOR_CONJ | TN_TENSOR_NEG)))
            return false;
        if (grad && ((t->flags & TN_TENSOR_REQUIRES_GRAD) || t->autograd)) return false;
    }
    return true;
}

static void run_rotary(const struct chain_plan *p) {
    const tn_tensor *q = p->t[0], *y = p->t[3];
    const int nd = q->ndim;
    const int64_t n = p->n;
    const float *qd = p->data[0], *cd = p->data[1], *sd = p->data[2];
    float *yd = (float *)p->data[3];
    int64_t idx[TN_MAX_DIMS] = {0};
    for (int64_t r = 0; r < p->rows; r++) {
        int64_t oq = 0, oc = 0, os = 0, oy = 0;
        for (int d = 0; d < nd - 1; d++)
            oq += idx[d] * q->strides[d], oc += idx[d] * p->cst[d], os += idx[d] * p->sst[d], oy += idx[d] * y->strides[d];
        tn_chain_rotary_row_f32(yd + oy, qd + oq, cd + oc, sd + os, n);
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < q->sizes[d]) break;
            idx[d] = 0;
        }
    }
}

/* the rows of src (all dims but the last) copied into dst at positions pos[] along dim */
static void copy_rows_at(const tn_tensor *dst, const tn_tensor *src, int64_t dim, const int64_t *pos) {
    const int nd = src->ndim;
    const int64_t es = tn_dtype_itemsize(src->dtype), rowb = src->sizes[nd - 1] * es;
    const int64_t rows = rowb ? tn_tensor_numel(src) / src->sizes[nd - 1] : 0;
    char *dd = tn_tensor_data(dst);
    const char *sd = tn_tensor_data(src);
    int64_t idx[TN_MAX_DIMS] = {0};
    for (int64_t r = 0; r < rows; r++) {
        int64_t od = 0, os = 0;
        for (int d = 0; d < nd - 1; d++) {
            od += (d == dim ? pos[idx[d]] : idx[d]) * dst->strides[d];
            os += idx[d] * src->strides[d];
        }
        memcpy(dd + od * es, sd + os * es, (size_t)rowb);
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < src->sizes[d]) break;
            idx[d] = 0;
        }
    }
}

/* false (nothing written) when a position falls outside the cache: the steps then run and
 * index_copy_ raises its IndexError */
static bool run_kv_update(const struct chain_plan *p) {
    int64_t *cum = (int64_t *)p->data[0];
    const tn_tensor *K = p->t[1], *V = p->t[2];
    int64_t pos[KV_MAX_L];
    for (int64_t j = 0; j < p->L; j++) {
        pos[j] = (int64_t)((uint64_t)j + (uint64_t)*cum); /* arange + cum, int64 wrapping as the add */
        if (pos[j] < 0 || pos[j] >= K->sizes[p->dim] || pos[j] >= V->sizes[p->dim]) return false;
    }
    *cum = (int64_t)((uint64_t)*cum + (uint64_t)p->L); /* cum.add_(L) */
    copy_rows_at(K, p->t[3], p->dim, pos);
    copy_rows_at(V, p->t[4], p->dim, pos);
    /* each in-place step's write bumps its self's `_version`, as the door does */
    atomic_fetch_add(&p->t[0]->storage->version, 1);
    atomic_fetch_add(&K->storage->version, 1);
    atomic_fetch_add(&V->storage->version, 1);
    return true;
}

bool tn_graph_run_chain(tn_graph *g, int64_t i) {
    const step *st = &g->steps[i];
    const struct chain_plan *p = st->plan;
    if (!p || !plan_holds(p)) return false;
    switch (st->chain) {
    case CHAIN_RMSNORM:
        tn_chain_rmsnorm_f32((float *)p->data[2], p->data[0], p->data[1], p->eps, p->rows, p->n, g->scratch,
                             g->scratch + p->rows * p->n);
        break;
    case CHAIN_ROTARY: run_rotary(p); break;
    case CHAIN_SWIGLU: tn_chain_swiglu_f32((float *)p->data[2], p->data[0], p->data[1], p->n); break;
    case CHAIN_KV_UPDATE:
        if (!run_kv_update(p)) return false;
        break;
    default: return false;
    }
    g->chained += p->live;
    return true;
}
