/* views.c — in-place operators on views under autograd (upstream's rebase): the base
 * gets a CopySlices node that routes the slice of its gradient through the in-place
 * operator's node, and the view gets an AsStridedBackward0 node onto the base's new
 * history. Geometry is kept relative to the base's storage offset. */
#include <stdlib.h>
#include <string.h>

#include "autograd/formulas.h"
#include "autograd/views.h"

/* How a view sits in its base: the base's geometry and the view's, offsets in elements
 * of the shared storage. */
typedef struct view_geom {
    tn_geom base, view;
    int64_t base_offset, view_offset;
    tn_node *fn; /* CopySlices: the in-place operator's node (owned) */
} view_geom;

static void vg_fill(view_geom *g, const tn_tensor *base, const tn_tensor *view) {
    tn_geom_of(base, &g->base);
    tn_geom_of(view, &g->view);
    g->base_offset = base->offset;
    g->view_offset = view->offset;
}

/* Zeros laid out like the base (its strides). */
static tn_status base_like_zeros(const view_geom *g, tn_tensor **result) {
    tn_value e[6] = {tn_value_intlist(g->base.sizes, g->base.ndim), tn_value_intlist(g->base.strides, g->base.ndim), {.tag = TN_V_DTYPE},
                     {.tag = TN_V_NONE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE}};
    e[2].u.dtype = g->base.dtype;
    tn_tensor *r;
    TN_TRY(tn_dispatch_one(TN_OP_empty_strided, e, &r));
    tn_value z[1] = {tn_value_tensor(r)}, zr[1];
    tn_status st = tn_dispatch(TN_OP_zero_, z, zr);
    if (st != TN_OK) { tn_tensor_release(r); return st; }
    tn_tensor_release(zr[0].u.t);
    *result = r;
    return TN_OK;
}

/* The view's window in a base-shaped tensor. Taken after the last write into `base` that
 * the window must see through autograd: under create_graph a view taken before its base
 * gained a history would stay outside the graph (double backward lost it). */
static tn_status window_of(const view_geom *g, tn_tensor *base, tn_tensor **window) {
    tn_value a[4] = {tn_value_tensor(base), tn_value_intlist(g->view.sizes, g->view.ndim),
                     tn_value_intlist(g->view.strides, g->view.ndim), tn_value_int(g->view_offset - g->base_offset)};
    return tn_dispatch_one(TN_OP_as_strided, a, window);
}

static tn_status copy_into(tn_tensor *dst, tn_tensor *src) {
    tn_value a[3] = {tn_value_tensor(dst), tn_value_tensor(src), tn_value_bool(false)}, r[1];
    TN_TRY(tn_dispatch(TN_OP_copy_, a, r));
    tn_tensor_release(r[0].u.t);
    return TN_OK;
}

tn_status tn_autograd_apply_as_strided(tn_node *n, tn_tensor **in, tn_tensor **out) {
    const view_geom *g = n->extra;
    tn_tensor *result, *window = NULL;
    TN_TRY(base_like_zeros(g, &result));
    tn_status st = window_of(g, result, &window);
    if (st == TN_OK) st = copy_into(window, in[0]);
    tn_tensor_release(window);
    if (st != TN_OK) { tn_tensor_release(result); return st; }
    out[0] = result;
    return TN_OK;
}

tn_status tn_autograd_apply_copy_slices(tn_node *n, tn_tensor **in, tn_tensor **out, bool keep_graph) {
    const view_geom *g = n->extra;
    tn_node *fn = g->fn;
    tn_tensor *result, *window = NULL, *slice = NULL;
    TN_TRY(base_like_zeros(g, &result));
    tn_status st = copy_into(result, in[0]);
    if (st == TN_OK) st = window_of(g, result, &window);
    tn_value c[2] = {tn_value_tensor(window), {.tag = TN_V_NONE}};
    if (st == TN_OK) st = tn_dispatch_one(TN_OP_clone, c, &slice);
    /* the in-place operator's backward on the slice of the gradient */
    tn_tensor **fin = calloc((size_t)fn->num_inputs + 1, sizeof(tn_tensor *));
    tn_tensor **fout = calloc((size_t)fn->num_next + 1, sizeof(tn_tensor *));
    if (!fin || !fout) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
    if (st == TN_OK) {
        fin[0] = slice;
        slice = NULL;
        for (int k = 1; k < fn->num_inputs && st == TN_OK; k++)
            st = tn_tensor_zeros(fn->in_meta[k].ndim, fn->in_meta[k].sizes, fn->in_meta[k].dtype, fn->in_meta[k].device, &fin[k]);
        if (st == TN_OK) st = tn_autograd_apply_node(fn, fin, fout);
    }
    if (st == TN_OK) {
        if (fout[0]) {
            st = copy_into(window, fout[0]);
        } else {
            tn_value z[1] = {tn_value_tensor(window)}, zr[1];
            st = tn_dispatch(TN_OP_zero_, z, zr);
            if (st == TN_OK) tn_tensor_release(zr[0].u.t);
        }
    }
    if (st == TN_OK) {
        out[0] = result;
        result = NULL;
        for (int i = 1; i < fn->num_next; i++) { out[i] = fout[i]; fout[i] = NULL; }
    }
    if (!keep_graph) tn_node_release_saved(fn);
    for (int k = 0; fin && k < fn->num_inputs; k++) tn_tensor_release(fin[k]);
    for (int i = 0; fout && i < fn->num_next; i++) tn_tensor_release(fout[i]);
    free(fin);
    free(fout);
    tn_tensor_release(slice);
    tn_tensor_release(window);
    tn_tensor_release(result);
    return st;
}

void tn_autograd_free_view_extra(tn_node *n) {
    view_geom *g = n->extra;
    if (g && g->fn) tn_node_release(g->fn);
}

tn_status tn_autograd_rebase(tn_tensor *view, tn_node *fn) {
    tn_autograd_meta *vm = tn_autograd_meta_peek(view);
    tn_tensor *base = vm ? vm->view_base : NULL;
    if (!base) return tn_error(TN_ERR_RUNTIME, "internal: rebase without a view base");
    /* CopySlices: edge 0 is the base's previous history, the rest are fn's other edges */
    tn_node *cs = tn_node_new(TN_NODE_COPY_SLICES, "CopySlices", 1, fn->num_next);
    view_geom *g = calloc(1, sizeof(view_geom));
    if (!cs || !g) { free(g); if (cs) { tn_node_retain(cs); tn_node_release(cs); } return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    tn_node_retain(cs);
    cs->extra = g;
    vg_fill(g, base, view);
    tn_node_retain(fn);
    g->fn = fn;
    tn_status st = tn_autograd_edge(base, &cs->next[0]);
    if (st != TN_OK) { tn_node_release(cs); return st; }
    if (cs->next[0].fn) tn_node_retain(cs->next[0].fn);
    for (int i = 1; i < fn->num_next; i++) {
        cs->next[i] = fn->next[i];
        if (cs->next[i].fn) tn_node_retain(cs->next[i].fn);
    }
    /* fn keeps its self edge so its formula computes the self gradient (NEED(0)); the
     * engine never follows it: CopySlices routes that gradient into the base's window. */
    cs->in_meta[0] = g->base;
    tn_autograd_set_history(base, cs, 0);
    tn_autograd_meta *bm = tn_autograd_meta_peek(base);
    if (bm) bm->hist_version = atomic_load(&base->storage->version);
    /* the view: its gradient lands in the base's new history */
    tn_node *as = tn_node_new(TN_NODE_AS_STRIDED, "AsStridedBackward0", 1, 1);
    view_geom *vg = calloc(1, sizeof(view_geom));
    if (!as || !vg) {
        free(vg);
        if (as) { tn_node_retain(as); tn_node_release(as); }
        tn_node_release(cs);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    tn_node_retain(as);
    as->extra = vg;
    vg_fill(vg, base, view);
    as->next[0].fn = cs;
    tn_node_retain(cs);
    as->in_meta[0] = vg->view;
    tn_autograd_set_history(view, as, 0);
    vm->hist_version = atomic_load(&view->storage->version);
    tn_node_release(as);
    tn_node_release(cs);
    return TN_OK;
}
