/* formulas_shape.c — derivatives of views, indexing and joining operators (rows in
 * formulas.def). A gradient that lands in part of an input is written into zeros of the
 * input's shape by functional operators (pad, scatter_add, as_strided_scatter), so it is
 * differentiable again. */
#include <stdlib.h>
#include <string.h>

#include "autograd/formulas.h"

#define F(name) void name(tn_grad_ctx *c)

F(g_reshape_back) { if (NEED(0)) SET(0, ag_reshape(c, ag_contiguous(c, GRAD(0)), GEOM(0)->ndim, GEOM(0)->sizes)); }

F(g_sum_to_self) { if (NEED(0)) SET(0, ag_sum_to(c, GRAD(0), GEOM(0)->ndim, GEOM(0)->sizes)); }

F(g_t) { if (NEED(0)) SET(0, ag_t(c, GRAD(0))); }

F(g_transpose) { if (NEED(0)) SET(0, ag_transpose(c, GRAD(0), IARG(1), IARG(2))); }

F(g_mT) { if (NEED(0)) SET(0, ag_transpose(c, GRAD(0), -2, -1)); }

F(g_numpy_T) {
    if (!NEED(0)) return;
    int nd = GEOM(0)->ndim;
    int64_t p[TN_MAX_DIMS];
    for (int i = 0; i < nd; i++) p[i] = nd - 1 - i;
    SET(0, AG(c, permute, VT(GRAD(0)), VIL(p, nd)));
}

F(g_permute) {
    if (!NEED(0)) return;
    int nd = GEOM(0)->ndim;
    int64_t inv[TN_MAX_DIMS];
    const int64_t *p = ARGV(1).u.ilist.data;
    for (int i = 0; i < nd; i++) {
        int64_t d = p[i] < 0 ? p[i] + nd : p[i];
        inv[d] = i;
    }
    SET(0, AG(c, permute, VT(GRAD(0)), VIL(inv, nd)));
}

/* The gradient of a view that takes [start, start + len) of dim d (every step-th element)
 * of an input of geometry gm, written into zeros of that geometry without in-place ops, so
 * it is itself differentiable (double backward): a constant pad for contiguous ranges, a
 * scatter_add for strided ones. `g` has the view's shape with dim d kept (unsqueezed for
 * select). */
static tn_tensor *embed(tn_grad_ctx *c, const tn_geom *gm, tn_tensor *g, int64_t d, int64_t start, int64_t len,
                        int64_t step) {
    if (!g) return NULL;
    int nd = gm->ndim;
    int64_t n = gm->sizes[d];
    if (len <= 0) return ag_zeros(c, gm);
    if (step == 1) {
        int64_t pad[2 * TN_MAX_DIMS] = {0};
        int np = 2 * (nd - (int)d);
        pad[np - 2] = start;
        pad[np - 1] = n - start - len;
        return AG(c, constant_pad_nd, VT(g), VIL(pad, np), VD(0.0));
    }
    tn_tensor *idx = AG(c, arange_start_step, VI(start), VI(start + (len - 1) * step + 1), VI(step), VDT(TN_DTYPE_INT64),
                        VN(), VN(), VN());
    int64_t shape[TN_MAX_DIMS];
    for (int i = 0; i < nd; i++) shape[i] = i == d ? -1 : 1;
    tn_tensor *ie = ag_expand(c, ag_reshape(c, idx, nd, shape), g->ndim, g->sizes);
    return AG(c, scatter_add, VT(ag_zeros(c, gm)), VI(d), VT(ie), VT(g));
}

static int64_t wrapd(int64_t d, int nd) { return d < 0 ? d + nd : d; }

F(g_select) {
    if (!NEED(0)) return;
    const tn_geom *gm = GEOM(0);
    int64_t d = wrapd(IARG(1), gm->ndim), i = IARG(2);
    if (i < 0) i += gm->sizes[d];
    SET(0, embed(c, gm, ag_unsqueeze(c, GRAD(0), d), d, i, 1, 1));
}

F(g_slice) {
    if (!NEED(0)) return;
    const tn_geom *gm = GEOM(0);
    int64_t d = wrapd(IARG(1), gm->ndim), n = gm->sizes[d];
    int64_t st = ARGV(2).tag == TN_V_INT ? ARGV(2).u.i : 0, en = ARGV(3).tag == TN_V_INT ? ARGV(3).u.i : n;
    int64_t step = ARGV(4).u.i;
    if (st < 0) st += n;
    if (en < 0) en += n;
    st = st < 0 ? 0 : st > n ? n : st;
    en = en < st ? st : en > n ? n : en;
    int64_t len = step > 0 ? (en - st + step - 1) / step : 0;
    SET(0, embed(c, gm, GRAD(0), d, st, len, step));
}

F(g_narrow) {
    if (!NEED(0)) return;
    const tn_geom *gm = GEOM(0);
    int64_t d = wrapd(IARG(1), gm->ndim), st = IARG(2);
    if (st < 0) st += gm->sizes[d];
    SET(0, embed(c, gm, GRAD(0), d, st, IARG(3), 1));
}

/* constant_pad_nd(self, pad, value): the gradient is the unpadded window. */
F(g_constant_pad_nd) {
    if (!NEED(0)) return;
    const tn_geom *gm = GEOM(0);
    const int64_t *p = ARGV(1).u.ilist.data;
    int np = (int)ARGV(1).u.ilist.n;
    tn_tensor *g = GRAD(0);
    for (int k = 0; k < np / 2; k++) {
        int64_t d = gm->ndim - 1 - k;
        if (p[2 * k] < 0 || p[2 * k + 1] < 0) {
            ag_fail(c, tn_error(TN_ERR_NOT_IMPLEMENTED, "the derivative of constant_pad_nd with negative padding is "
                                                        "not implemented by torchnative"));
            return;
        }
        if (p[2 * k] || p[2 * k + 1]) g = AG(c, narrow, VT(g), VI(d), VI(p[2 * k]), VI(gm->sizes[d]));
    }
    SET(0, g);
}

/* scatter_add(self, dim, index, src) / scatter.src: self keeps the gradient (scatter.src:
 * except where src overwrote it), src gathers it. */
F(g_scatter_add) {
    if (NEED(0)) SET(0, GRAD(0));
    if (NEED(3)) SET(3, AG(c, gather, VT(GRAD(0)), ARGV(1), VT(ARG(2)), VB(false)));
}

F(g_scatter_src) {
    if (NEED(0)) SET(0, AG(c, scatter_value, VT(GRAD(0)), ARGV(1), VT(ARG(2)), VD(0.0)));
    if (NEED(3)) SET(3, AG(c, gather, VT(GRAD(0)), ARGV(1), VT(ARG(2)), VB(false)));
}

/* index_select(self, dim, index): scatter_add of the gradient rows. */
F(g_index_select) {
    if (!NEED(0)) return;
    const tn_geom *gm = GEOM(0);
    tn_tensor *g = GRAD(0), *idx = ARG(2);
    if (gm->ndim == 0) { SET(0, AG(c, sum, VT(g), VN())); return; }
    int64_t d = IARG(1) < 0 ? IARG(1) + gm->ndim : IARG(1);
    int64_t shape[TN_MAX_DIMS];
    for (int i = 0; i < g->ndim; i++) shape[i] = i == d ? -1 : 1;
    tn_tensor *iv = ag_reshape(c, idx, g->ndim, shape);
    tn_tensor *ie = ag_expand(c, iv, g->ndim, g->sizes);
    SET(0, AG(c, scatter_add, VT(ag_zeros(c, gm)), VI(d), VT(ie), VT(g)));
}

F(g_gather) {
    if (NEED(0)) SET(0, AG(c, scatter_add, VT(ag_zeros(c, GEOM(0))), ARGV(1), VT(ARG(2)), VT(GRAD(0))));
}

/* index.Tensor(self, indices): accumulate the gradient back through index_put. */
F(g_index) {
    if (!NEED(0)) return;
    SET(0, AG(c, index_put, VT(ag_zeros(c, GEOM(0))), ARGV(1), VT(GRAD(0)), VB(true)));
}

/* cat(tensors, dim): each input gets its slice (1-D empty inputs are skipped, as by cat). */
F(g_cat) {
    int n = ag_list_len(c, 0);
    tn_tensor *const *ts = ARGV(0).u.tlist.data;
    tn_tensor *g = GRAD(0);
    int64_t off = 0;
    int nd = g->ndim;
    int64_t d = IARG(1) < 0 ? IARG(1) + nd : IARG(1);
    for (int k = 0; k < n; k++) {
        tn_tensor *t = ts[k];
        if (!t) continue;
        if (t->ndim == 1 && t->sizes[0] == 0 && nd != 1) {
            if (ag_need_list(c, 0, k)) ag_set_list(c, 0, k, ag_zeros_like(c, t));
            continue;
        }
        int64_t len = t->sizes[d];
        if (ag_need_list(c, 0, k)) ag_set_list(c, 0, k, AG(c, narrow, VT(g), VI(d), VI(off), VI(len)));
        off += len;
    }
}

F(g_stack) {
    int n = ag_list_len(c, 0);
    int64_t d = IARG(1) < 0 ? IARG(1) + GRAD(0)->ndim : IARG(1);
    for (int k = 0; k < n; k++)
        if (ag_need_list(c, 0, k)) ag_set_list(c, 0, k, AG(c, select_int, VT(GRAD(0)), VI(d), VI(k)));
}

/* The gradients of a node's outputs joined by `op` (cat or stack) along `dim`. */
static tn_tensor *join_grads(tn_grad_ctx *c, tn_op_id op, tn_value dim) {
    int n = c->node->num_inputs;
    tn_tensor **gs = malloc(sizeof(tn_tensor *) * (size_t)(n ? n : 1));
    if (!gs) { ag_fail(c, tn_error(TN_ERR_NO_MEMORY, "out of memory")); return NULL; }
    for (int k = 0; k < n; k++) gs[k] = GRAD(k);
    tn_value lst = {.tag = TN_V_TENSORLIST};
    lst.u.tlist.data = gs;
    lst.u.tlist.n = n;
    tn_tensor *r = ag_op(c, op, 2, (tn_value[]){lst, dim});
    free(gs);
    return r;
}

/* split / split_with_sizes / chunk: the pieces' gradients are concatenated again. */
F(g_split_cat) { if (NEED(0)) SET(0, join_grads(c, TN_OP_cat, VI(IARG(2)))); }

/* unbind: the slices' gradients are stacked again. */
F(g_unbind) { if (NEED(0)) SET(0, join_grads(c, TN_OP_stack, ARGV(1))); }

/* broadcast_tensors(tensors): each output's gradient goes to its input (the engine sums
 * it back to the input's shape). */
F(g_broadcast_tensors) {
    int n = ag_list_len(c, 0);
    for (int k = 0; k < n && k < c->node->num_inputs; k++)
        if (ag_need_list(c, 0, k)) ag_set_list(c, 0, k, GRAD(k));
}

/* repeat_interleave(self, repeats, dim, output_size): each element's copies summed. */
F(g_repeat_interleave) {
    if (!NEED(0)) return;
    const tn_geom *gm = GEOM(0);
    int64_t r = IARG(1);
    if (ARGV(2).tag != TN_V_INT) {
        int64_t shape[2] = {-1, r};
        SET(0, ag_reshape(c, ag_sum_dims(c, ag_reshape(c, ag_contiguous(c, GRAD(0)), 2, shape), 1, (int64_t[]){1}, false),
                          gm->ndim, gm->sizes));
        return;
    }
    int64_t d = ARGV(2).u.i < 0 ? ARGV(2).u.i + gm->ndim : ARGV(2).u.i;
    int64_t shape[TN_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < gm->ndim && n < TN_MAX_DIMS - 1; i++) {
        shape[n++] = gm->sizes[i];
        if (i == d) shape[n++] = r;
    }
    int64_t sd = d + 1;
    SET(0, ag_sum_dims(c, ag_reshape(c, ag_contiguous(c, GRAD(0)), n, shape), 1, &sd, false));
}

/* repeat(self, repeats): the tiles' gradients summed (g viewed as [r0, s0, r1, s1, ...]). */
F(g_repeat) {
    if (!NEED(0)) return;
    const tn_geom *gm = GEOM(0);
    const int64_t *r = ARGV(1).u.ilist.data;
    int nr = (int)ARGV(1).u.ilist.n, lead = nr - gm->ndim;
    if (2 * nr > TN_MAX_DIMS) {
        ag_fail(c, tn_error(TN_ERR_NOT_IMPLEMENTED, "the derivative of repeat over more than %d dims is not implemented by torchnative", TN_MAX_DIMS / 2));
        return;
    }
    int64_t shape[TN_MAX_DIMS], dims[TN_MAX_DIMS];
    int ns = 0, nd = 0;
    for (int i = 0; i < nr; i++) {
        int64_t s = i < lead ? 1 : gm->sizes[i - lead];
        dims[nd++] = ns;
        shape[ns++] = r[i];
        shape[ns++] = s;
    }
    tn_tensor *v = ag_reshape(c, ag_contiguous(c, GRAD(0)), ns, shape);
    tn_tensor *s = ag_sum_dims(c, v, nd, dims, false);
    SET(0, ag_reshape(c, s, gm->ndim, gm->sizes));
}

/* embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse) */
F(g_embedding) {
    if (!NEED(0)) return;
    if (BARG(3)) {
        ag_fail(c, tn_error(TN_ERR_NOT_IMPLEMENTED,
                            "the derivative of embedding with scale_grad_by_freq=True is not implemented by torchnative"));
        return;
    }
    const tn_geom *w = GEOM(0);
    if (!tn_grad_mode_enabled()) {
        SET(0, AG(c, embedding_dense_backward, VT(GRAD(0)), VT(ARG(1)), VI(w->sizes[0]), ARGV(2), ARGV(3)));
        return;
    }
    int64_t D = w->sizes[w->ndim - 1];
    tn_tensor *idx = ARG(1), *g = GRAD(0);
    int64_t flat[2] = {-1, 1}, rows[2] = {-1, D};
    tn_tensor *iv = ag_reshape(c, ag_contiguous(c, idx), 2, flat);
    tn_tensor *gv = ag_reshape(c, ag_contiguous(c, g), 2, rows);
    int64_t n = gv ? gv->sizes[0] : 0, esz[2] = {n, D};
    tn_tensor *ie = ag_expand(c, iv, 2, esz);
    int64_t pad = IARG(2);
    if (pad >= 0) {
        /* rows of padding_idx take no gradient */
        tn_tensor *keep = AG(c, ne_Scalar, VT(ie), VI(pad));
        gv = ag_mul(c, gv, keep);
    }
    SET(0, AG(c, scatter_add, VT(ag_zeros(c, w)), VI(0), VT(ie), VT(gv)));
}

/* Whether a view of sizes / strides maps two of its indices onto one element. */
static bool view_overlaps_itself(int n, const int64_t *sizes, const int64_t *strides) {
    int64_t sz[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] == 0) return false;
        if (sizes[i] == 1) continue;
        if (strides[i] <= 0) return true;
        int j = k++;
        while (j > 0 && st[j - 1] > strides[i]) sz[j] = sz[j - 1], st[j] = st[j - 1], j--;
        sz[j] = sizes[i], st[j] = strides[i];
    }
    int64_t span = 0; /* largest offset reached by the dims below */
    for (int i = 0; i < k; i++) {
        if (st[i] <= span) return true;
        span += (sz[i] - 1) * st[i];
    }
    return false;
}

/* as_strided(self, size, stride, storage_offset=None): the gradient lands in zeros laid out
 * as self (zeros_like keeps a dense self's strides) through as_strided_scatter at the view's
 * offset relative to self's, so it is differentiable again (the window of a CopySlices /
 * AsStridedBackward0 node under create_graph takes this path). Only self's geometry is
 * kept: its data may change afterwards (CopySlices writes into the window). Upstream's
 * general as_strided_backward also sums a view that overlaps itself and handles a self
 * that is not dense: those refuse by name. */
F(g_as_strided) {
    if (!NEED(0)) return;
    const tn_geom *gm = GEOM(0);
    const tn_value *sz = &ARGV(1), *sd = &ARGV(2);
    int64_t off = ARGV(3).tag == TN_V_INT ? ARGV(3).u.i : gm->offset, numel = 1, span = 0;
    for (int i = 0; i < gm->ndim; i++) numel *= gm->sizes[i], span += (gm->sizes[i] - 1) * gm->strides[i];
    bool dense = numel == 0 || (!view_overlaps_itself(gm->ndim, gm->sizes, gm->strides) && span + 1 == numel);
    if (!dense || sz->u.ilist.n != sd->u.ilist.n ||
        view_overlaps_itself((int)sz->u.ilist.n, sz->u.ilist.data, sd->u.ilist.data)) {
        ag_fail(c, tn_error(TN_ERR_NOT_IMPLEMENTED, "the derivative of as_strided over an input that is not dense or a "
                                                    "view that overlaps itself is not implemented by torchnative"));
        return;
    }
    tn_value e[6] = {VIL(gm->sizes, gm->ndim), VIL(gm->strides, gm->ndim), VDT(gm->dtype), VN(), VN(), VN()};
    tn_tensor *z = ag_op(c, TN_OP_empty_strided, 6, e);
    if (z) z = AG(c, zero_, VT(z));
    SET(0, AG(c, as_strided_scatter, VT(z), VT(GRAD(0)), *sz, *sd, VI(off - gm->offset)));
}
