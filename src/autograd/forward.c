/* forward.c — forward-mode AD: dual levels, tangents in the autograd record, the dual
 * operators (_make_dual, _unpack_dual, _fw_primal) and tangent propagation at the door.
 *
 * Propagation. A door call with an argument carrying a tangent at an active level L (the
 * innermost one present) runs the operator with the L tangents of its arguments unlinked,
 * so lower levels and reverse mode are handled by the same door recursively, and then
 * gives each floating output its L tangent:
 *  - linear operators (fw_linear below, one table) apply the operator to the tangents, so
 *    a view's tangent is a view of the tangent, as upstream's;
 *  - every other operator with a reverse formula uses it twice: with x' fresh aliases of
 *    the inputs requiring grad, y' = f(x'), u = zeros_like(y') requiring grad,
 *    g = grad(y', x', u, create_graph) = J^T u (linear in u), and J t = grad(g, u, t).
 *    The calls go through the door, so tangents of lower levels ride along (nested jvp,
 *    jacfwd(jacrev) = hessian) and vmap over it composes.
 * In-place operators compute the tangent from the functional sibling before the write and
 * copy it into self's tangent (or set it when self had none). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/decompose.h"
#include "autograd/formulas.h"

#define FW_MAX_LEVELS 64
#define FW_MAX_IN 256  /* tensor arguments (list elements counted) of one call */
#define FW_MAX_OUT 256 /* tensor results of one call */
#define TN_MAX_RETS_FW 8 /* results of any operator (the door's TN_MAX_RETS) */

static int64_t fw_stack[FW_MAX_LEVELS]; /* unique ids of the active levels, innermost last */
static int fw_depth, fw_jvp_depth;
static int64_t fw_next_id = 1;
static bool fw_on = true;

int tn_fw_depth(void) { return fw_depth; }
int tn_fw_jvp_depth(void) { return fw_jvp_depth; }
bool tn_fw_enabled(void) { return fw_on; }
void tn_fw_set_enabled(bool on) { fw_on = on; }

static int level_index(int64_t id) {
    for (int i = fw_depth - 1; i >= 0; i--)
        if (fw_stack[i] == id) return i;
    return -1;
}

tn_status tn_fw_enter(bool jvp, int64_t *depth) {
    if (!jvp && fw_jvp_depth > 0) { /* forward_ad's level inside torch.func.jvp: jvp's own */
        *depth = 0;
        return TN_OK;
    }
    if (!jvp && fw_depth > 0) return tn_error(TN_ERR_RUNTIME, "Nested forward mode AD is not supported at the moment");
    if (fw_depth >= FW_MAX_LEVELS) return tn_error(TN_ERR_RUNTIME, "too many nested forward-mode levels");
    fw_stack[fw_depth++] = fw_next_id++;
    if (jvp) fw_jvp_depth++;
    *depth = fw_depth - 1;
    return TN_OK;
}

tn_status tn_fw_exit(int64_t depth, bool jvp) {
    if (!jvp && fw_jvp_depth > 0) return TN_OK;
    if (fw_depth == 0 || (!jvp && depth != fw_depth - 1))
        return tn_error(TN_ERR_RUNTIME, "Exiting a forward AD level that is not the last that was created is not "
                                        "support. Ensure they are released in the reverse order they were created.");
    fw_depth--;
    if (jvp) fw_jvp_depth--;
    return TN_OK;
}

void tn_fw_free_list(tn_fw_grad *g) {
    while (g) {
        tn_fw_grad *nx = g->next;
        tn_tensor_release(g->tangent);
        free(g);
        g = nx;
    }
}

/* The tangent of t at level id (borrowed), or NULL. */
static tn_tensor *fw_get(const tn_tensor *t, int64_t id) {
    tn_autograd_meta *m = t ? tn_autograd_meta_peek(t) : NULL;
    for (tn_fw_grad *g = m ? m->fw : NULL; g; g = g->next)
        if (g->level == id) return g->tangent;
    return NULL;
}

/* Sets t's tangent at id (retains tangent), dropping entries of dead levels. */
static tn_status fw_set(tn_tensor *t, int64_t id, tn_tensor *tangent) {
    tn_autograd_meta *m = tn_autograd_meta_get(t);
    if (!m) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (tn_fw_grad **p = &m->fw; *p;) {
        tn_fw_grad *g = *p;
        if (g->level == id || level_index(g->level) < 0) {
            *p = g->next;
            g->next = NULL;
            tn_fw_free_list(g);
        } else {
            p = &g->next;
        }
    }
    tn_fw_grad *g = malloc(sizeof *g);
    if (!g) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_tensor_retain(tangent);
    *g = (tn_fw_grad){.level = id, .tangent = tangent, .next = m->fw};
    m->fw = g;
    return TN_OK;
}

tn_status tn_fw_copy(tn_tensor *dst, const tn_tensor *src) {
    tn_autograd_meta *m = tn_autograd_meta_peek(src);
    for (tn_fw_grad *g = m ? m->fw : NULL; g; g = g->next)
        if (level_index(g->level) >= 0) TN_TRY(fw_set(dst, g->level, g->tangent));
    return TN_OK;
}

static tn_status call1(tn_op_id op, tn_value *a, tn_tensor **out);
static tn_status zeros_like(tn_tensor *x, tn_tensor **out);

tn_status tn_fw_detach(tn_tensor *t, tn_tensor *const *leaves, int nleaves, tn_tensor **out) {
    tn_value a[1] = {tn_value_tensor(t)};
    TN_TRY(call1(TN_OP_detach, a, out));
    tn_autograd_meta *m = tn_autograd_meta_peek(t);
    tn_status st = TN_OK;
    for (tn_fw_grad *g = m ? m->fw : NULL; g && st == TN_OK; g = g->next) {
        if (level_index(g->level) < 0) continue;
        tn_tensor *tg = g->tangent;
        if (tn_requires_grad(tg) && !tn_autograd_reaches_other_leaf(tg, leaves, nleaves)) {
            tn_tensor *d;
            st = tn_fw_detach(tg, leaves, nleaves, &d);
            if (st == TN_OK) { st = fw_set(*out, g->level, d); tn_tensor_release(d); }
        } else {
            st = fw_set(*out, g->level, tg);
        }
    }
    if (st != TN_OK) { tn_tensor_release(*out); *out = NULL; }
    return st;
}

/* Sets y's tangent at id, and on the alias y's own node saved of it (a result saved by
 * its node is kept without its record: the formula must see the tangent too). */
static tn_status fw_set_output(tn_tensor *y, int64_t id, tn_tensor *t) {
    TN_TRY(fw_set(y, id, t));
    tn_autograd_meta *m = tn_autograd_meta_peek(y);
    tn_node *n = m ? m->grad_fn : NULL;
    if (n && n->kind == TN_NODE_OP && n->saved_res && m->output_nr < n->nres && n->saved_res[m->output_nr].t)
        TN_TRY(fw_set(n->saved_res[m->output_nr].t, id, t));
    return TN_OK;
}

/* Unlinks t's entry at id (NULL when it has none); fw_link puts it back. */
static tn_fw_grad *fw_unlink(tn_tensor *t, int64_t id) {
    tn_autograd_meta *m = tn_autograd_meta_peek(t);
    for (tn_fw_grad **p = m ? &m->fw : NULL; p && *p; p = &(*p)->next)
        if ((*p)->level == id) {
            tn_fw_grad *g = *p;
            *p = g->next;
            g->next = NULL;
            return g;
        }
    return NULL;
}

static void fw_link(tn_tensor *t, tn_fw_grad *g) {
    tn_autograd_meta *m = tn_autograd_meta_peek(t);
    g->next = m->fw;
    m->fw = g;
}

/* The innermost active level at which t has a tangent (index into fw_stack), or -1. */
static int fw_top(const tn_tensor *t) {
    tn_autograd_meta *m = t ? tn_autograd_meta_peek(t) : NULL;
    int best = -1;
    for (tn_fw_grad *g = m ? m->fw : NULL; g; g = g->next) {
        int i = level_index(g->level);
        if (i > best) best = i;
    }
    return best;
}

bool tn_fw_has_tangent(const tn_tensor *t) { return fw_depth && fw_top(t) >= 0; }

static bool is_dual_op(tn_op_id op) {
    return op == TN_OP__make_dual || op == TN_OP__unpack_dual || op == TN_OP__fw_primal;
}

bool tn_fw_intercepts(tn_op_id op, const tn_value *args) {
    if (is_dual_op(op)) return true;
    if (!fw_depth || !fw_on) return false;
    const tn_op_schema *s = &tn_op_schemas[op];
    for (int i = 0; i < s->nargs; i++) {
        if (args[i].tag == TN_V_TENSOR && fw_top(args[i].u.t) >= 0) return true;
        if (args[i].tag == TN_V_TENSORLIST)
            for (int64_t k = 0; k < args[i].u.tlist.n; k++)
                if (fw_top(args[i].u.tlist.data[k]) >= 0) return true;
    }
    return false;
}

/* An in-place write gave y (which had no tangent) tangent t. When y is a view of a base,
 * upstream gives the base a tangent too (zeros outside the window) and y a view of it:
 * the window is y's geometry relative to the base, over a base tangent laid out as the
 * base (otherwise y alone gets t). */
static tn_status set_through_view(tn_tensor *y, int64_t id, tn_tensor *t) {
    tn_autograd_meta *m = tn_autograd_meta_peek(y);
    tn_tensor *base = (y->flags & TN_TENSOR_IS_VIEW) && m ? m->view_base : NULL;
    if (!base || base->storage != y->storage) return fw_set_output(y, id, t);
    tn_tensor *bt = fw_get(base, id), *made = NULL;
    if (!bt) {
        TN_TRY(zeros_like(base, &made));
        bt = made;
    }
    bool same = bt->ndim == base->ndim;
    for (int d = 0; same && d < base->ndim; d++) same = bt->strides[d] == base->strides[d] || base->sizes[d] == 1;
    if (!same) { tn_tensor_release(made); return fw_set_output(y, id, t); }
    tn_value a[4] = {tn_value_tensor(bt), tn_value_intlist(y->sizes, y->ndim), tn_value_intlist(y->strides, y->ndim),
                     tn_value_int(bt->offset + (y->offset - base->offset))};
    tn_tensor *win;
    tn_status st = call1(TN_OP_as_strided, a, &win);
    if (st == TN_OK) {
        tn_value c[3] = {tn_value_tensor(win), tn_value_tensor(t), tn_value_bool(false)}, rr[1];
        st = tn_dispatch(TN_OP_copy_, c, rr);
        if (st == TN_OK) tn_value_release(&rr[0]);
    }
    if (st == TN_OK && made) st = fw_set(base, id, made);
    if (st == TN_OK) st = fw_set_output(y, id, win);
    if (st == TN_OK) tn_tensor_release(win);
    tn_tensor_release(made);
    return st;
}

/* ---- the dual operators -------------------------------------------------------------- */

static tn_status level_id(int64_t depth, const char *who, int64_t *id) {
    if (depth < 0 || depth >= fw_depth) return tn_error(TN_ERR_RUNTIME, "Invalid level given to %s", who);
    *id = fw_stack[fw_depth - 1]; /* inside torch.func.jvp, level 0 names the innermost jvp */
    return TN_OK;
}

static tn_status call1(tn_op_id op, tn_value *a, tn_tensor **out) {
    tn_value r[TN_MAX_RETS_FW];
    memset(r, 0, sizeof r);
    TN_TRY(tn_dispatch(op, a, r));
    *out = r[0].u.t;
    for (int k = 1; k < tn_op_schemas[op].nrets; k++) tn_value_release(&r[k]);
    return TN_OK;
}

static tn_status alias_of(tn_tensor *t, tn_tensor **out) {
    tn_value a[2] = {tn_value_tensor(t), {.tag = TN_V_NONE}};
    return call1(TN_OP_alias, a, out);
}

/* t's view without its tangent at id (lower levels and reverse mode kept). */
static tn_status fw_primal(tn_tensor *t, int64_t id, tn_tensor **out) {
    tn_fw_grad *g = fw_unlink(t, id);
    tn_status st = alias_of(t, out);
    if (g) fw_link(t, g);
    return st;
}

static const char *dtype_name(tn_dtype d) {
    switch (d) {
    case TN_DTYPE_BOOL: return "torch.bool";
    case TN_DTYPE_UINT8: return "torch.uint8";
    case TN_DTYPE_INT8: return "torch.int8";
    case TN_DTYPE_INT16: return "torch.int16";
    case TN_DTYPE_INT32: return "torch.int32";
    case TN_DTYPE_INT64: return "torch.int64";
    default: return "a non-floating dtype";
    }
}

static bool differentiable(tn_dtype d) { return tn_dtype_is_floating(d) || tn_dtype_is_complex(d); }

static tn_status make_dual(const tn_value *args, tn_value *rets) {
    tn_tensor *p = args[0].u.t, *t = args[1].u.t;
    int64_t id = 0;
    TN_TRY(level_id(args[2].u.i, "_make_dual", &id));
    if (!differentiable(p->dtype))
        return tn_error(TN_ERR_VALUE, "Expected primal to be floating point or complex, but got: %s", dtype_name(p->dtype));
    if (!differentiable(t->dtype))
        return tn_error(TN_ERR_VALUE, "Expected tangent to be floating point or complex, but got: %s", dtype_name(t->dtype));
    if (fw_get(p, id))
        return tn_error(TN_ERR_RUNTIME, "Making a dual Tensor based on a Tensor that already has a forward gradient at "
                                        "the same level %lld is not supported.", (long long)args[2].u.i);
    bool same = p->ndim == t->ndim;
    for (int d = 0; same && d < p->ndim; d++) same = p->sizes[d] == t->sizes[d];
    if (!same) {
        char b1[160], b2[160];
        return tn_error(TN_ERR_RUNTIME, "Trying to set a forward gradient that has a different size than that of the "
                        "original Tensor, this is not supported. Tensor is of size %s while the given forward gradient "
                        "is of size %s.", tn_format_sizes(p->ndim, p->sizes, b1, sizeof b1),
                        tn_format_sizes(t->ndim, t->sizes, b2, sizeof b2));
    }
    tn_tensor *r;
    TN_TRY(alias_of(p, &r));
    tn_status st = fw_set(r, id, t);
    if (st != TN_OK) { tn_tensor_release(r); return st; }
    rets[0] = tn_value_tensor(r);
    return TN_OK;
}

static tn_status unpack_dual(const tn_value *args, tn_value *rets) {
    int64_t id = 0;
    if (!tn_fw_has_tangent(args[0].u.t)) { /* nothing to unpack: no level is needed (upstream) */
        TN_TRY(alias_of(args[0].u.t, &rets[0].u.t));
        rets[0].tag = TN_V_TENSOR;
        rets[1].tag = TN_V_NONE;
        return TN_OK;
    }
    TN_TRY(level_id(args[1].u.i, "_fw_primal", &id));
    tn_tensor *d = args[0].u.t, *p;
    TN_TRY(fw_primal(d, id, &p));
    rets[0] = tn_value_tensor(p);
    tn_tensor *t = fw_get(d, id);
    if (t) {
        tn_tensor_retain(t);
        rets[1] = tn_value_tensor(t);
    } else {
        rets[1].tag = TN_V_NONE; /* undefined tangent: None */
    }
    return TN_OK;
}

/* ---- propagation --------------------------------------------------------------------- */

/* Linear operators whose tangent is the operator applied to the tangents (absent ones as
 * zeros): views with self as their only tensor, and this list. */
static bool fw_linear(tn_op_id op) {
    static signed char memo[TN_OP_COUNT]; /* 0 unknown, 1 yes, 2 no */
    if (!memo[op]) {
        static const tn_op_id list[] = {
            TN_OP_neg, TN_OP_clone, TN_OP_sum, TN_OP_sum_dim_IntList, TN_OP_mean, TN_OP_mean_dim,
            TN_OP_add_Tensor, TN_OP_sub_Tensor, TN_OP_cat, TN_OP_stack, TN_OP__to_copy, TN_OP_repeat,
            TN_OP_mul_Scalar, TN_OP_div_Scalar, TN_OP_contiguous, TN_OP_expand_copy, TN_OP_permute_copy,
        };
        memo[op] = 2;
        for (size_t i = 0; i < sizeof list / sizeof *list; i++)
            if (list[i] == op) memo[op] = 1;
        if (memo[op] == 2 && tn_op_is_view(op)) {
            const tn_op_schema *s = &tn_op_schemas[op];
            int ntensor = 0;
            for (const char *c = s->schema; (c = strstr(c, "Tensor")); c += 6) ntensor++;
            /* "Tensor(a) self ... -> Tensor(a)": exactly one tensor argument */
            memo[op] = ntensor == 2 ? 1 : 2;
        }
    }
    return memo[op] == 1;
}

/* A pair (argument position, its tangent) for the level being propagated. */
typedef struct {
    int arg;         /* argument index */
    int64_t k;       /* list element, -1 for a tensor argument */
    tn_tensor *x;    /* borrowed: the argument */
    tn_fw_grad *g;   /* unlinked entry (owned while unlinked); NULL for a repeated tensor */
    tn_tensor *t;    /* borrowed tangent */
} fw_in;

static tn_status zeros_like(tn_tensor *x, tn_tensor **out) {
    tn_value a[6] = {tn_value_tensor(x)};
    return call1(TN_OP_zeros_like, a, out);
}

/* Copies args with every tensor (element) replaced by repl(i, k) (NULL: kept). New list
 * arrays are allocated; *lists collects them for free_args. */
typedef struct {
    tn_value v[64];
    tn_tensor **lists[64];
    int nlists;
} argbuf;

static void argbuf_free(argbuf *b) {
    for (int i = 0; i < b->nlists; i++) free(b->lists[i]);
}

static tn_status argbuf_copy(argbuf *b, const tn_op_schema *s, const tn_value *args) {
    b->nlists = 0;
    if (s->nargs > 64) return tn_error(TN_ERR_NOT_IMPLEMENTED, "forward AD: too many arguments for aten::%s", s->name);
    for (int i = 0; i < s->nargs; i++) {
        b->v[i] = args[i];
        if (args[i].tag == TN_V_TENSORLIST) {
            int64_t n = args[i].u.tlist.n;
            tn_tensor **p = calloc((size_t)(n ? n : 1), sizeof *p);
            if (!p) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
            if (n) memcpy(p, args[i].u.tlist.data, sizeof *p * (size_t)n);
            b->v[i].u.tlist.data = p;
            b->lists[b->nlists++] = p;
        }
    }
    return TN_OK;
}

static tn_tensor **argbuf_slot(argbuf *b, int i, int64_t k) {
    /* a list's array is argbuf's own copy (argbuf_copy), writable whatever the value type says */
    return k < 0 ? &b->v[i].u.t : &((tn_tensor **)b->v[i].u.tlist.data)[k];
}

/* Fills out[0..max) with the flattened results; returns their total count (may exceed max). */
static int flat_results(const tn_op_schema *s, tn_value *rets, tn_tensor **out, int max) {
    int n = 0, total = 0;
    for (int k = 0; k < s->nrets; k++) total += rets[k].tag == TN_V_TENSORLIST ? (int)rets[k].u.tlist.n : 1;
    for (int k = 0; k < s->nrets; k++) {
        if (rets[k].tag == TN_V_TENSORLIST) {
            for (int64_t i = 0; i < rets[k].u.tlist.n && n < max; i++) out[n++] = rets[k].u.tlist.data[i];
        } else if (n < max) {
            out[n++] = rets[k].tag == TN_V_TENSOR ? rets[k].u.t : NULL;
        }
    }
    return total;
}


/* Tangents of fop(args) given the inputs' tangents, by the linear rule. */
static tn_status tangents_linear(tn_op_id fop, const tn_value *args, fw_in *in, int nin, tn_tensor **tan, int *ntan) {
    const tn_op_schema *s = &tn_op_schemas[fop];
    argbuf b;
    tn_tensor *zeros[FW_MAX_IN];
    int nz = 0;
    tn_status st = argbuf_copy(&b, s, args);
    for (int i = 0; st == TN_OK && i < s->nargs; i++) {
        if (args[i].tag == TN_V_TENSOR && args[i].u.t) {
            tn_tensor *t = NULL;
            for (int j = 0; j < nin; j++)
                if (in[j].arg == i) t = in[j].t;
            if (!t && nz < FW_MAX_IN) { st = zeros_like(args[i].u.t, &zeros[nz]); t = zeros[nz++]; }
            b.v[i].u.t = t;
        } else if (args[i].tag == TN_V_TENSORLIST) {
            for (int64_t k = 0; st == TN_OK && k < args[i].u.tlist.n; k++) {
                tn_tensor *t = NULL;
                for (int j = 0; j < nin; j++)
                    if (in[j].arg == i && in[j].k == k) t = in[j].t;
                if (!t && args[i].u.tlist.data[k] && nz < FW_MAX_IN) {
                    st = zeros_like(args[i].u.tlist.data[k], &zeros[nz]);
                    t = zeros[nz++];
                }
                *argbuf_slot(&b, i, k) = t;
            }
        }
    }
    tn_value r[TN_MAX_RETS_FW];
    memset(r, 0, sizeof r);
    if (st == TN_OK) st = tn_dispatch(fop, b.v, r);
    if (st == TN_OK) {
        *ntan = flat_results(s, r, tan, FW_MAX_OUT);
        if (*ntan > FW_MAX_OUT) *ntan = FW_MAX_OUT; /* the caller refuses such a call */
        for (int k = 0; k < *ntan; k++)
            if (tan[k]) tn_tensor_retain(tan[k]);
        for (int k = 0; k < s->nrets; k++) tn_value_release(&r[k]);
    }
    for (int i = 0; i < nz; i++) tn_tensor_release(zeros[i]);
    argbuf_free(&b);
    return st;
}

/* Tangents of fop(args) by the reverse formulas applied twice (see the file comment). */
static tn_status tangents_double_vjp(tn_op_id fop, const tn_value *args, fw_in *in, int nin, tn_tensor **tan,
                                     int *ntan) {
    const tn_op_schema *s = &tn_op_schemas[fop];
    bool prev = tn_grad_mode_enabled();
    bool outer_graph = false; /* the tangent is differentiated in reverse mode too */
    for (int j = 0; j < nin; j++) outer_graph |= prev && (tn_requires_grad(in[j].x) || tn_requires_grad(in[j].t));
    tn_grad_mode_set(true);
    argbuf b;
    tn_tensor *xs[FW_MAX_IN] = {0}, *ts[FW_MAX_IN] = {0}, *us[FW_MAX_OUT] = {0}, *gs[FW_MAX_IN] = {0};
    int ny = 0, nx = 0;
    tn_value r[TN_MAX_RETS_FW];
    memset(r, 0, sizeof r);
    bool ran = false;
    tn_status st = argbuf_copy(&b, s, args);
    for (int j = 0; st == TN_OK && j < nin && nx < FW_MAX_IN; j++) {
        tn_tensor *xa;
        st = alias_of(in[j].x, &xa);
        if (st != TN_OK) break;
        if (!tn_requires_grad(xa)) xa->flags |= TN_TENSOR_REQUIRES_GRAD; /* a fresh leaf */
        xs[nx] = xa;
        ts[nx++] = in[j].t;
        *argbuf_slot(&b, in[j].arg, in[j].k) = xa;
    }
    if (st == TN_OK) { st = tn_dispatch(fop, b.v, r); ran = st == TN_OK; }
    tn_tensor *outs[FW_MAX_OUT];
    int nout = ran ? flat_results(s, r, outs, FW_MAX_OUT) : 0;
    if (nout > FW_MAX_OUT) nout = FW_MAX_OUT; /* the caller refuses such a call */
    tn_tensor *roots[FW_MAX_OUT];
    int where[FW_MAX_OUT];
    for (int k = 0; st == TN_OK && k < nout; k++) {
        tan[k] = NULL;
        if (!outs[k] || !differentiable(outs[k]->dtype) || !tn_requires_grad(outs[k])) continue;
        st = zeros_like(outs[k], &us[ny]);
        if (st != TN_OK) break;
        us[ny]->flags |= TN_TENSOR_REQUIRES_GRAD;
        roots[ny] = outs[k];
        where[ny++] = k;
    }
    *ntan = nout;
    if (st == TN_OK && ny > 0) {
        tn_backward_args a1 = {.nroots = ny, .roots = roots, .grad_roots = us, .keep_graph = true,
                               .create_graph = true, .ninputs = nx, .inputs = xs, .accumulate = false,
                               .allow_unused = true, .results = gs};
        st = tn_autograd_backward(&a1);
        tn_tensor *groots[FW_MAX_IN], *gt[FW_MAX_IN];
        int ng = 0;
        for (int i = 0; st == TN_OK && i < nx; i++)
            if (gs[i] && tn_requires_grad(gs[i])) { groots[ng] = gs[i]; gt[ng++] = ts[i]; }
        tn_tensor *res[FW_MAX_OUT] = {0};
        if (st == TN_OK && ng > 0) {
            tn_backward_args a2 = {.nroots = ng, .roots = groots, .grad_roots = gt, .keep_graph = outer_graph,
                                   .create_graph = outer_graph, .ninputs = ny, .inputs = us, .accumulate = false,
                                   .allow_unused = true, .results = res};
            tn_grad_mode_set(prev);
            st = tn_autograd_backward(&a2);
        }
        /* a tangent whose graph reaches no leaf requiring grad but this function's fresh
         * ones (x' of inputs not requiring grad, u) is detached: nothing can ask for it */
        tn_tensor *fresh[FW_MAX_IN + FW_MAX_OUT];
        int nf = 0;
        for (int i = 0; i < nx; i++)
            if (tn_is_leaf(xs[i])) fresh[nf++] = xs[i];
        for (int i = 0; i < ny; i++) fresh[nf++] = us[i];
        for (int i = 0; i < ny; i++) {
            tan[where[i]] = res[i];
            if (st == TN_OK && !res[i]) st = zeros_like(roots[i], &tan[where[i]]);
            tn_tensor *r0 = tan[where[i]];
            if (st == TN_OK && r0 && tn_requires_grad(r0) && !tn_autograd_reaches_other_leaf(r0, fresh, nf)) {
                tn_value a[1] = {tn_value_tensor(r0)};
                tn_tensor *dt;
                st = call1(TN_OP_detach, a, &dt);
                if (st == TN_OK) st = tn_fw_copy(dt, r0);
                if (st == TN_OK) { tn_tensor_release(r0); tan[where[i]] = dt; }
            }
        }
    }
    tn_grad_mode_set(prev);
    for (int i = 0; i < nx; i++) { tn_tensor_release(xs[i]); tn_tensor_release(gs[i]); }
    for (int i = 0; i < ny; i++) tn_tensor_release(us[i]);
    if (ran) for (int k = 0; k < s->nrets; k++) tn_value_release(&r[k]);
    argbuf_free(&b);
    return st;
}

static tn_status refuse_fw(const tn_op_schema *s) {
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "Trying to use forward AD with %s that does not support it because it has "
                    "not been implemented yet (torchnative: aten::%s%s%s has no derivative formula).", s->name,
                    s->name, s->overload[0] ? "." : "", s->overload);
}

tn_status tn_fw_dispatch(tn_op_id op, const tn_value *args, tn_value *rets) {
    if (op == TN_OP__make_dual) return make_dual(args, rets);
    if (op == TN_OP__unpack_dual) return unpack_dual(args, rets);
    if (op == TN_OP__fw_primal) {
        int64_t id = 0;
        TN_TRY(level_id(args[1].u.i, "_fw_primal", &id));
        tn_tensor *p;
        TN_TRY(fw_primal(args[0].u.t, id, &p));
        rets[0] = tn_value_tensor(p);
        return TN_OK;
    }
    const tn_op_schema *s = &tn_op_schemas[op];
    tn_decomp_fn decomp = tn_autograd_decomp_for(op);
    if (decomp && s->kind == TN_OP_KIND_FUNCTIONAL) return decomp(args, rets); /* the parts propagate */
    /* the innermost level any argument has a tangent at */
    int top = -1;
    for (int i = 0; i < s->nargs; i++) {
        if (args[i].tag == TN_V_TENSOR) { int l = fw_top(args[i].u.t); if (l > top) top = l; }
        else if (args[i].tag == TN_V_TENSORLIST)
            for (int64_t k = 0; k < args[i].u.tlist.n; k++) { int l = fw_top(args[i].u.tlist.data[k]); if (l > top) top = l; }
    }
    int64_t id = fw_stack[top];
    int64_t ntensors = 0;
    for (int i = 0; i < s->nargs; i++)
        ntensors += args[i].tag == TN_V_TENSORLIST ? args[i].u.tlist.n : args[i].tag == TN_V_TENSOR;
    if (ntensors > FW_MAX_IN)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "forward AD of aten::%s with more than %d tensor arguments is not "
                        "implemented by torchnative", s->name, FW_MAX_IN);
    fw_in in[FW_MAX_IN];
    int nin = 0;
    for (int i = 0; i < s->nargs && nin < FW_MAX_IN; i++) {
        int64_t n = args[i].tag == TN_V_TENSORLIST ? args[i].u.tlist.n : args[i].tag == TN_V_TENSOR ? 1 : 0;
        for (int64_t k = 0; k < n && nin < FW_MAX_IN; k++) {
            tn_tensor *x = args[i].tag == TN_V_TENSOR ? args[i].u.t : args[i].u.tlist.data[k];
            tn_tensor *t = fw_get(x, id);
            if (!t) continue;
            in[nin++] = (fw_in){.arg = i, .k = args[i].tag == TN_V_TENSOR ? -1 : k, .x = x, .g = NULL, .t = t};
        }
    }
    /* unlink the level's entries (each tensor once), keeping the tangents alive */
    for (int j = 0; j < nin; j++) {
        bool seen = false;
        for (int q = 0; q < j; q++) seen |= in[q].x == in[j].x;
        if (!seen) in[j].g = fw_unlink(in[j].x, id);
    }
    tn_op_id fop = (s->kind == TN_OP_KIND_INPLACE && s->functional >= 0) ? (tn_op_id)s->functional : op;
    tn_tensor *tan[FW_MAX_OUT] = {0};
    int ntan = 0;
    tn_status st = TN_OK;
    bool nondiff = tn_autograd_nondifferentiable(op) || tn_autograd_nondifferentiable(fop);
    if (s->kind == TN_OP_KIND_OUT || s->kind == TN_OP_KIND_MUTABLE || s->kind == TN_OP_KIND_SCRATCH)
        st = nondiff ? TN_OK : refuse_fw(s);
    else if (nondiff)
        ;
    else if (op == TN_OP_copy_) { /* self's new tangent: src's, broadcast and cast as the data is */
        tn_tensor *tsrc = NULL;
        for (int j = 0; j < nin; j++)
            if (in[j].arg == 1) tsrc = in[j].t;
        st = zeros_like(args[0].u.t, &tan[0]);
        ntan = 1;
        if (st == TN_OK && tsrc) {
            tn_value a[3] = {tn_value_tensor(tan[0]), tn_value_tensor(tsrc), tn_value_bool(false)}, rr[1];
            st = tn_dispatch(TN_OP_copy_, a, rr);
            if (st == TN_OK) tn_value_release(&rr[0]);
        }
    } else if (fw_linear(fop))
        st = tangents_linear(fop, args, in, nin, tan, &ntan);
    else if (tn_grad_formula_for(fop) || tn_grad_formula_for(op))
        st = tangents_double_vjp(fop, args, in, nin, tan, &ntan);
    else if (tn_autograd_decomp_for(fop) && s->kind == TN_OP_KIND_INPLACE)
        st = tn_error(TN_ERR_NOT_IMPLEMENTED, "forward AD of the in-place composite aten::%s_ is not implemented by "
                                              "torchnative", tn_op_schemas[fop].name);
    else
        st = refuse_fw(s);
    bool refuse_if_diff = false; /* no formula: refuse only when an output could carry a tangent */
    if (st != TN_OK && st == TN_ERR_NOT_IMPLEMENTED && s->kind == TN_OP_KIND_FUNCTIONAL) {
        refuse_if_diff = true;
        st = TN_OK;
    }
    if (st == TN_OK) st = tn_dispatch(op, args, rets);
    if (st == TN_OK && refuse_if_diff) {
        tn_tensor *outs[FW_MAX_OUT];
        int nout = flat_results(s, rets, outs, FW_MAX_OUT);
        if (nout > FW_MAX_OUT) nout = FW_MAX_OUT;
        bool diff = false;
        for (int k = 0; k < nout; k++) diff |= outs[k] && differentiable(outs[k]->dtype);
        if (diff) {
            for (int k = 0; k < s->nrets; k++) tn_value_release(&rets[k]);
            st = refuse_fw(s);
        }
    }
    for (int j = 0; j < nin; j++)
        if (in[j].g) fw_link(in[j].x, in[j].g);
    if (st == TN_OK) {
        tn_tensor *outs[FW_MAX_OUT];
        int nout = flat_results(s, rets, outs, FW_MAX_OUT);
        if (nout > FW_MAX_OUT && ntan > 0)
            st = tn_error(TN_ERR_NOT_IMPLEMENTED, "forward AD of aten::%s with more than %d tensor results is not "
                          "implemented by torchnative", s->name, FW_MAX_OUT);
        for (int k = 0; st == TN_OK && k < nout && k < ntan; k++) {
            tn_tensor *y = outs[k], *t = tan[k];
            if (!y || !t || !differentiable(y->dtype)) continue;
            if (s->kind == TN_OP_KIND_INPLACE && k == 0) {
                tn_tensor *old = fw_get(y, id);
                if (old && old != t) {
                    tn_value a[3] = {tn_value_tensor(old), tn_value_tensor(t), tn_value_bool(false)}, rr[1];
                    st = tn_dispatch(TN_OP_copy_, a, rr);
                    if (st == TN_OK) tn_value_release(&rr[0]);
                } else if (!old) {
                    st = set_through_view(y, id, t);
                }
                continue;
            }
            bool is_input = false;
            for (int i = 0; i < s->nargs; i++) is_input |= args[i].tag == TN_V_TENSOR && args[i].u.t == y;
            if (is_input) continue; /* an operator that returned its input keeps its tangent */
            st = fw_set_output(y, id, t);
        }
        if (st != TN_OK) for (int k = 0; k < s->nrets; k++) tn_value_release(&rets[k]);
    }
    for (int k = 0; k < ntan; k++) tn_tensor_release(tan[k]);
    return st;
}
