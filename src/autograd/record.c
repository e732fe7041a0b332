/* record.c — recording at the door: an operator call with an input that requires grad
 * becomes one graph node (edges, saved values, output metadata) and its outputs get it as
 * grad_fn. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/decompose.h"
#include "autograd/formulas.h"
#include "autograd/views.h"

static tn_status run_no_grad(tn_run_fn run, tn_op_id op, const tn_value *args, tn_value *rets) {
    bool prev = tn_grad_mode_enabled();
    tn_grad_mode_set(false);
    tn_status st = run(op, args, rets);
    tn_grad_mode_set(prev);
    return st;
}

static bool value_requires_grad(const tn_value *v) {
    if (v->tag == TN_V_TENSOR) return v->u.t && tn_requires_grad(v->u.t);
    if (v->tag == TN_V_TENSORLIST)
        for (int64_t k = 0; k < v->u.tlist.n; k++)
            if (v->u.tlist.data[k] && tn_requires_grad(v->u.tlist.data[k])) return true;
    return false;
}

bool tn_autograd_should_record(tn_op_id op, const tn_value *args) {
    if (!tn_grad_mode_enabled()) return false;
    int n = tn_op_schemas[op].nargs;
    for (int i = 0; i < n; i++)
        if (value_requires_grad(&args[i])) return true;
    return false;
}

bool tn_op_is_view(tn_op_id op) {
    static signed char memo[TN_OP_COUNT]; /* 0 unknown, 1 view, 2 not */
    if (!memo[op]) {
        const tn_op_schema *s = &tn_op_schemas[op];
        const char *arrow = strstr(s->schema, "-> ");
        memo[op] = (s->kind == TN_OP_KIND_FUNCTIONAL && arrow && strncmp(arrow, "-> Tensor(a)", 12) == 0) ? 1 : 2;
    }
    return memo[op] == 1;
}

static bool differentiable_dtype(tn_dtype d) { return tn_dtype_is_floating(d) || tn_dtype_is_complex(d); }

/* Deep copy of a non-tensor argument value into node storage. */
static tn_status copy_value(const tn_value *src, tn_value *dst) {
    *dst = *src;
    switch (src->tag) {
    case TN_V_INTLIST: {
        int64_t *p = malloc(sizeof(int64_t) * (size_t)(src->u.ilist.n ? src->u.ilist.n : 1));
        if (!p) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        if (src->u.ilist.n) memcpy(p, src->u.ilist.data, sizeof(int64_t) * (size_t)src->u.ilist.n);
        dst->u.ilist.data = p;
        break;
    }
    case TN_V_DOUBLELIST: {
        double *p = malloc(sizeof(double) * (size_t)(src->u.dlist.n ? src->u.dlist.n : 1));
        if (!p) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        if (src->u.dlist.n) memcpy(p, src->u.dlist.data, sizeof(double) * (size_t)src->u.dlist.n);
        dst->u.dlist.data = p;
        break;
    }
    case TN_V_BOOLLIST: {
        bool *p = malloc(sizeof(bool) * (size_t)(src->u.blist.n ? src->u.blist.n : 1));
        if (!p) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        if (src->u.blist.n) memcpy(p, src->u.blist.data, sizeof(bool) * (size_t)src->u.blist.n);
        dst->u.blist.data = p;
        break;
    }
    case TN_V_STRING: {
        char *p = malloc((size_t)src->u.s.n + 1);
        if (!p) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        memcpy(p, src->u.s.data, (size_t)src->u.s.n);
        p[src->u.s.n] = 0;
        dst->u.s.data = p;
        break;
    }
    case TN_V_SCALARLIST: {
        tn_value *p = malloc(sizeof(tn_value) * (size_t)(src->u.slist.n ? src->u.slist.n : 1));
        if (!p) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        if (src->u.slist.n) memcpy(p, src->u.slist.data, sizeof(tn_value) * (size_t)src->u.slist.n);
        dst->u.slist.data = p;
        break;
    }
    case TN_V_TENSORLIST: {
        tn_tensor **p = calloc((size_t)(src->u.tlist.n ? src->u.tlist.n : 1), sizeof(tn_tensor *));
        if (!p) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        for (int64_t k = 0; k < src->u.tlist.n; k++) {
            p[k] = src->u.tlist.data[k];
            if (p[k]) tn_tensor_retain(p[k]);
        }
        dst->u.tlist.data = p;
        break;
    }
    case TN_V_GENERATOR:
    case TN_V_OPAQUE:
        dst->tag = TN_V_NONE; /* never read by a formula; not owned */
        break;
    case TN_V_TENSOR:
        dst->tag = TN_V_NONE; /* tensors live in saved_args */
        break;
    default: break;
    }
    return TN_OK;
}

static int count_results(const tn_op_schema *s, const tn_value *rets) {
    int n = 0;
    for (int k = 0; k < s->nrets; k++) n += rets[k].tag == TN_V_TENSORLIST ? (int)rets[k].u.tlist.n : 1;
    return n;
}

/* The k-th flattened result tensor (NULL for non-tensor results). */
static tn_tensor *result_at(const tn_op_schema *s, const tn_value *rets, int k) {
    for (int i = 0; i < s->nrets; i++) {
        if (rets[i].tag == TN_V_TENSORLIST) {
            if (k < rets[i].u.tlist.n) return rets[i].u.tlist.data[k];
            k -= (int)rets[i].u.tlist.n;
        } else {
            if (k == 0) return rets[i].tag == TN_V_TENSOR ? rets[i].u.t : NULL;
            k--;
        }
    }
    return NULL;
}

static tn_status fill_node(tn_node *n, tn_op_id op, const tn_op_schema *s, const tn_grad_formula *f,
                           const tn_value *args, tn_tensor *self_orig, const tn_edge *self_edge, const tn_value *rets) {
    int nargs = s->nargs;
    n->op = op;
    n->formula = f;
    n->nargs = nargs;
    n->args = calloc((size_t)nargs + 1, sizeof(tn_value));
    n->saved_args = calloc((size_t)nargs + 1, sizeof(tn_saved));
    n->arg_geom = calloc((size_t)nargs + 1, sizeof(tn_geom));
    n->arg_edge = calloc((size_t)nargs + 1, sizeof(int32_t));
    n->arg_count = calloc((size_t)nargs + 1, sizeof(int32_t));
    if (!n->args || !n->saved_args || !n->arg_geom || !n->arg_edge || !n->arg_count)
        return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    int e = 0;
    uint32_t needs = 0;
    for (int i = 0; i < nargs; i++) {
        const tn_value *v = &args[i];
        n->arg_edge[i] = -1;
        n->arg_geom[i].ndim = -1;
        if (v->tag == TN_V_TENSOR && v->u.t) {
            n->arg_edge[i] = e;
            n->arg_count[i] = 1;
            if (i == 0 && self_edge) n->next[e] = *self_edge; /* taken before the in-place write */
            else TN_TRY(tn_autograd_edge(v->u.t, &n->next[e]));
            if (n->next[e].fn) {
                tn_node_retain(n->next[e].fn);
                if (i < 32) needs |= 1u << i;
            }
            e++;
        } else if (v->tag == TN_V_TENSORLIST) {
            n->arg_edge[i] = e;
            n->arg_count[i] = (int32_t)v->u.tlist.n;
            for (int64_t k = 0; k < v->u.tlist.n; k++, e++) {
                if (!v->u.tlist.data[k]) continue;
                TN_TRY(tn_autograd_edge(v->u.tlist.data[k], &n->next[e]));
                if (n->next[e].fn) tn_node_retain(n->next[e].fn);
            }
        }
    }
    uint32_t save = f ? tn_grad_save_mask(f, op, needs) : 0;
    n->saved_mask = save;
    for (int i = 0; i < nargs; i++) {
        const tn_value *v = &args[i];
        if (v->tag == TN_V_TENSOR && v->u.t) {
            tn_tensor *t = (i == 0 && self_orig) ? self_orig : v->u.t;
            tn_geom_of(t, &n->arg_geom[i]);
            n->args[i].tag = TN_V_TENSOR;
            n->args[i].u.t = NULL;
            if (i < 32 && (save >> i) & 1u) TN_TRY(tn_saved_set(&n->saved_args[i], t, -1));
        } else {
            TN_TRY(copy_value(v, &n->args[i]));
        }
    }
    n->nres = n->num_inputs;
    n->saved_res = calloc((size_t)n->nres + 1, sizeof(tn_saved));
    if (!n->saved_res) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int k = 0; k < n->num_inputs; k++) {
        tn_tensor *r = result_at(s, rets, k);
        if (!r) { n->in_meta[k].ndim = -1; continue; }
        tn_geom_of(r, &n->in_meta[k]);
        if (f && k < 32 && (f->save_res >> k) & 1u) TN_TRY(tn_saved_set(&n->saved_res[k], r, k));
    }
    return TN_OK;
}

static int count_edges(const tn_op_schema *s, const tn_value *args) {
    int e = 0;
    for (int i = 0; i < s->nargs; i++) {
        if (args[i].tag == TN_V_TENSOR && args[i].u.t) e++;
        else if (args[i].tag == TN_V_TENSORLIST) e += (int)args[i].u.tlist.n;
    }
    return e;
}

/* Arguments derivatives.yaml marks non_differentiable: upstream refuses them at forward
 * time when they require grad. (op, argument index) */
static const struct { tn_op_id op; int arg; const char *name; } nondiff_args[] = {
    {TN_OP_nll_loss_forward, 2, "weight"},
    {TN_OP_nll_loss2d_forward, 2, "weight"},
    {TN_OP_nll_loss_forward, 1, "target"},
    {TN_OP_nll_loss2d_forward, 1, "target"},
};

static tn_status check_nondifferentiable_args(tn_op_id op, const tn_op_schema *s, const tn_value *args) {
    for (size_t i = 0; i < sizeof nondiff_args / sizeof nondiff_args[0]; i++) {
        if (nondiff_args[i].op != op) continue;
        const tn_value *v = &args[nondiff_args[i].arg];
        if (v->tag == TN_V_TENSOR && v->u.t && tn_requires_grad(v->u.t))
            return tn_error(TN_ERR_RUNTIME, "The function '%s' is not differentiable with respect to argument '%s'. "
                                            "This input cannot have requires_grad True.", s->name, nondiff_args[i].name);
    }
    return TN_OK;
}

static void release_rets(const tn_op_schema *s, tn_value *rets) {
    for (int k = 0; k < s->nrets; k++) tn_value_release(&rets[k]);
}

/* An in-place operator without a formula of its own whose functional autograd runs as its
 * parts (index_copy_, index_add_, index_fill_, put_, renorm_, ...): the functional's parts,
 * then copy_ of their result into self, so self's history is the parts' behind copy_'s node
 * (upstream records one node with the operator's formula; the gradients are the same).
 * The door's checks of a derived in-place form keep their order around it (dispatch.h):
 * first, as for any in-place operator, self must not be a leaf requiring grad. */
static tn_status inplace_as_parts(tn_op_id op, const tn_op_schema *s, tn_decomp_fn decomp, const tn_value *args,
                                  tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    if (tn_requires_grad(self) && tn_is_leaf(self))
        return tn_error(TN_ERR_RUNTIME, "a leaf Variable that requires grad is being used in an in-place operation.");
    TN_TRY(tn_op_inplace_checks(op, args, false)); /* the door's checks, in its order */
    /* the parts run on a recorded clone of self (upstream's original_self): a part that
     * saves self for its backward must not see it overwritten by the copy_ below */
    tn_value ca[2] = {tn_value_tensor(self), {.tag = TN_V_NONE}}, orig, fargs[64], r[8];
    if (s->nargs > 64) return tn_error(TN_ERR_RUNTIME, "too many arguments (internal)");
    TN_TRY(tn_dispatch(TN_OP_clone, ca, &orig));
    memcpy(fargs, args, sizeof(tn_value) * (size_t)s->nargs);
    fargs[0] = orig;
    tn_status dst = decomp(fargs, r);
    tn_value_release(&orig);
    TN_TRY(dst);
    tn_tensor *res = r[0].tag == TN_V_TENSOR ? r[0].u.t : NULL;
    tn_status st = tn_op_inplace_checks(op, args, true);
    if (st == TN_OK && !res)
        st = tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::%s%s%s under autograd is not implemented by torchnative", s->name,
                      s->overload[0] ? "." : "", s->overload);
    if (st == TN_OK) st = tn_op_inplace_result_check(op, self, res);
    if (st == TN_OK) {
        tn_value a[3] = {tn_value_tensor(self), tn_value_tensor(res), tn_value_bool(false)};
        st = tn_dispatch(TN_OP_copy_, a, rets);
    }
    for (int k = 0; k < tn_op_schemas[s->functional].nrets; k++) tn_value_release(&r[k]);
    return st;
}

tn_status tn_autograd_record(tn_op_id op, const tn_value *args, tn_value *rets, tn_run_fn run) {
    const tn_op_schema *s = &tn_op_schemas[op];
    tn_decomp_fn decomp = tn_autograd_decomp_for(op);
    if (decomp) return decomp(args, rets); /* its parts record themselves */
    if (s->kind == TN_OP_KIND_INPLACE && s->functional >= 0 && args[0].tag == TN_V_TENSOR && !tn_grad_formula_for(op) &&
        (decomp = tn_autograd_decomp_for((tn_op_id)s->functional)) && tn_op_schemas[s->functional].nargs == s->nargs)
        return inplace_as_parts(op, s, decomp, args, rets);
    if (tn_autograd_nondifferentiable(op)) return run_no_grad(run, op, args, rets);
    const tn_grad_formula *f = tn_grad_formula_for(op);
    tn_tensor *self_orig = NULL;
    bool through_view = false;
    if (s->kind == TN_OP_KIND_OUT)
        return tn_error(TN_ERR_RUNTIME,
                        "%s(): functions with out=... arguments don't support automatic differentiation, but "
                        "one of the arguments requires grad.", s->name);
    if (s->kind == TN_OP_KIND_INPLACE && args[0].tag == TN_V_TENSOR) {
        tn_tensor *self = args[0].u.t;
        if (tn_requires_grad(self) && tn_is_leaf(self))
            return tn_error(TN_ERR_RUNTIME, "a leaf Variable that requires grad is being used in an in-place operation.");
        if (self->flags & TN_TENSOR_IS_VIEW) {
            tn_autograd_meta *vm = tn_autograd_meta_peek(self);
            if (!vm || !vm->view_base)
                return tn_error(TN_ERR_NOT_IMPLEMENTED,
                                "aten::%s%s%s on a view taken while grad mode was off, with autograd, is not "
                                "implemented by torchnative", s->name, s->overload[0] ? "." : "", s->overload);
            if (tn_requires_grad(vm->view_base) && tn_is_leaf(vm->view_base))
                return tn_error(TN_ERR_RUNTIME, "a view of a leaf Variable that requires grad is being used in an "
                                                "in-place operation.");
            through_view = true;
        }
        if (f && (f->save_args & 1u)) {
            /* The formula reads self as it was before the operator overwrote it: a clone
             * recorded as upstream's original_self = self.clone(), so a double backward
             * through the formula reaches self's history before the write. */
            tn_value a[2] = {tn_value_tensor(self), {.tag = TN_V_NONE}}, r;
            TN_TRY(tn_requires_grad(self) ? tn_dispatch(TN_OP_clone, a, &r) : run_no_grad(run, TN_OP_clone, a, &r));
            self_orig = r.u.t;
        }
    }
    /* an operator that writes an argument other than self gets no formula, except
     * rrelu_with_noise: its noise is an output its formula reads, saved after the write */
    if ((s->kind == TN_OP_KIND_MUTABLE && op != TN_OP_rrelu_with_noise) || s->kind == TN_OP_KIND_SCRATCH) f = NULL;
    tn_status cst = check_nondifferentiable_args(op, s, args);
    tn_edge self_edge = {0}, *self_edge_p = NULL;
    if (cst == TN_OK && s->kind == TN_OP_KIND_INPLACE && args[0].tag == TN_V_TENSOR) {
        cst = tn_autograd_edge(args[0].u.t, &self_edge);
        if (self_edge.fn) tn_node_retain(self_edge.fn); /* held across the write */
        self_edge_p = &self_edge;
    }
    if (cst != TN_OK) { tn_tensor_release(self_orig); return cst; }
    tn_status st = run_no_grad(run, op, args, rets);
    if (st != TN_OK) {
        tn_tensor_release(self_orig);
        if (self_edge.fn) tn_node_release(self_edge.fn);
        return st;
    }

    int nres = count_results(s, rets);
    bool any_diff_out = false, complex_out = false;
    for (int k = 0; k < nres; k++) {
        tn_tensor *r = result_at(s, rets, k);
        if (r && differentiable_dtype(r->dtype)) any_diff_out = true;
        if (r && tn_dtype_is_complex(r->dtype)) complex_out = true;
    }
    /* operators upstream computes for complex inputs but whose autograd it refuses for a
     * complex output (outside its complex-gradient allowlist) */
    if (complex_out && op == TN_OP_silu) { /* (silu_ records: upstream differentiates it) */
        tn_tensor_release(self_orig);
        if (self_edge.fn) tn_node_release(self_edge.fn);
        release_rets(s, rets);
        return tn_error(TN_ERR_RUNTIME, "silu does not support automatic differentiation for outputs with complex dtype.");
    }
    if (!any_diff_out) {
        tn_tensor_release(self_orig);
        if (self_edge.fn) tn_node_release(self_edge.fn);
        return TN_OK;
    }

    tn_node *n = tn_node_new(f ? TN_NODE_OP : TN_NODE_ERROR, f ? f->name : "NotImplemented", nres, count_edges(s, args));
    if (!n) {
        tn_tensor_release(self_orig);
        if (self_edge.fn) tn_node_release(self_edge.fn);
        release_rets(s, rets);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    tn_node_retain(n);
    st = fill_node(n, op, s, f, args, self_orig, self_edge_p, rets);
    tn_tensor_release(self_orig);
    if (self_edge.fn) tn_node_release(self_edge.fn);
    if (st != TN_OK) { tn_node_release(n); release_rets(s, rets); return st; }
    if (!f) {
        size_t len = strlen(s->name) + strlen(s->overload) + 96;
        n->msg = malloc(len);
        n->msg_upstream = tn_autograd_upstream_refuses(op);
        if (n->msg && n->msg_upstream) /* upstream's NotImplemented node, word for word */
            snprintf(n->msg, len, "derivative for aten::%s is not implemented", s->name);
        else if (n->msg)
            snprintf(n->msg, len, "the derivative for 'aten::%s%s%s' is not implemented by torchnative", s->name,
                     s->overload[0] ? "." : "", s->overload);
    }
    bool view = tn_op_is_view(op);
    tn_tensor *a0 = s->nargs && args[0].tag == TN_V_TENSOR ? args[0].u.t : NULL;
    for (int k = 0; k < nres; k++) {
        tn_tensor *r = result_at(s, rets, k);
        if (!r || !differentiable_dtype(r->dtype)) continue;
        bool is_input = false;
        for (int i = 0; i < s->nargs && !is_input; i++)
            is_input = args[i].tag == TN_V_TENSOR && args[i].u.t == r;
        if (is_input && !(s->kind == TN_OP_KIND_INPLACE && k == 0)) continue; /* op returned its input */
        if (through_view && k == 0) {
            st = tn_autograd_rebase(r, n);
            if (st != TN_OK) { tn_node_release(n); return st; }
            continue;
        }
        tn_autograd_set_history(r, n, k);
        tn_autograd_meta *m = tn_autograd_meta_peek(r);
        if (!m) continue;
        m->hist_version = atomic_load(&r->storage->version);
        if (view && a0 && r->storage == a0->storage && !m->view_base) {
            tn_autograd_meta *am = tn_autograd_meta_peek(a0);
            tn_tensor *base = am && am->view_base ? am->view_base : a0;
            tn_tensor_retain(base);
            m->view_base = base;
        }
    }
    tn_node_release(n); /* the outputs hold it now */
    return TN_OK;
}
