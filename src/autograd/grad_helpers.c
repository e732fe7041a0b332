/* grad_helpers.c — the vocabulary derivative formulas are written in (formulas.h): door
 * calls whose results live in the formula's scope, with errors that stop the formula. */
#include <stdlib.h>
#include <string.h>

#include "autograd/formulas.h"
#include "core/scalar.h"

void ag_fail(tn_grad_ctx *c, tn_status st) {
    if (c->st == TN_OK) c->st = st;
}

tn_tensor *ag_keep(tn_grad_ctx *c, tn_tensor *t) {
    if (!t) return NULL;
    if (c->nscope == c->capscope) {
        int nc = c->capscope ? c->capscope * 2 : 16;
        tn_tensor **s = realloc(c->scope, sizeof(tn_tensor *) * (size_t)nc);
        if (!s) {
            tn_tensor_release(t);
            ag_fail(c, tn_error(TN_ERR_NO_MEMORY, "out of memory"));
            return NULL;
        }
        c->scope = s;
        c->capscope = nc;
    }
    c->scope[c->nscope++] = t;
    return t;
}

void ag_op_n(tn_grad_ctx *c, tn_op_id op, int n, tn_value *args, tn_tensor **outs, int nouts) {
    for (int k = 0; k < nouts; k++) outs[k] = NULL;
    if (c->st != TN_OK) return;
    for (int i = 0; i < n; i++)
        if (args[i].tag == TN_V_TENSOR && !args[i].u.t) {
            /* An input a previous helper failed to make; the failure is already recorded. */
            if (c->st == TN_OK)
                ag_fail(c, tn_error(TN_ERR_RUNTIME, "internal: undefined tensor in a derivative of %s",
                                    c->node->name));
            return;
        }
    if (n != tn_op_schemas[op].nargs) {
        ag_fail(c, tn_error(TN_ERR_RUNTIME, "internal: %s called aten::%s.%s with %d of %d arguments",
                            c->node->name, tn_op_schemas[op].name, tn_op_schemas[op].overload, n,
                            tn_op_schemas[op].nargs));
        return;
    }
    tn_value r[8];
    int nr = tn_op_schemas[op].nrets;
    tn_status st = tn_dispatch(op, args, r);
    if (st != TN_OK) { ag_fail(c, st); return; }
    for (int k = 0; k < nr; k++) {
        if (r[k].tag != TN_V_TENSOR) { tn_value_release(&r[k]); continue; }
        if (k < nouts) outs[k] = ag_keep(c, r[k].u.t);
        else tn_tensor_release(r[k].u.t);
    }
}

tn_tensor *ag_op(tn_grad_ctx *c, tn_op_id op, int n, tn_value *args) {
    tn_tensor *o;
    ag_op_n(c, op, n, args, &o, 1);
    return o;
}

bool ag_need(const tn_grad_ctx *c, int arg) {
    int e = c->node->arg_edge[arg];
    return e >= 0 && c->node->next[e].fn != NULL;
}

bool ag_need_list(const tn_grad_ctx *c, int arg, int k) {
    int e = c->node->arg_edge[arg];
    return e >= 0 && k < c->node->arg_count[arg] && c->node->next[e + k].fn != NULL;
}

int ag_list_len(const tn_grad_ctx *c, int arg) { return c->node->arg_count[arg]; }

void ag_set_list(tn_grad_ctx *c, int arg, int k, tn_tensor *g) {
    int e = c->node->arg_edge[arg];
    if (!g || e < 0 || c->st != TN_OK) return;
    e += k;
    if (c->out[e]) tn_tensor_release(c->out[e]);
    tn_tensor_retain(g);
    c->out[e] = g;
}

void ag_set(tn_grad_ctx *c, int arg, tn_tensor *g) { ag_set_list(c, arg, 0, g); }

double ag_scalar(const tn_value *v) { return tn_scalar_as_double(v); }

tn_tensor *ag_unary(tn_grad_ctx *c, tn_op_id op, tn_tensor *a) { return ag_op(c, op, 1, (tn_value[]){VT(a)}); }
tn_tensor *ag_binary(tn_grad_ctx *c, tn_op_id op, tn_tensor *a, tn_tensor *b) {
    return ag_op(c, op, 2, (tn_value[]){VT(a), VT(b)});
}
tn_tensor *ag_mul(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b) { return AG(c, mul_Tensor, VT(a), VT(b)); }
tn_tensor *ag_mul_s(tn_grad_ctx *c, tn_tensor *a, double s) { return AG(c, mul_Scalar, VT(a), VD(s)); }
tn_tensor *ag_div(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b) { return AG(c, div_Tensor, VT(a), VT(b)); }
tn_tensor *ag_add(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b) { return AG(c, add_Tensor, VT(a), VT(b), VI(1)); }
tn_tensor *ag_sub(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b) { return AG(c, sub_Tensor, VT(a), VT(b), VI(1)); }
tn_tensor *ag_neg(tn_grad_ctx *c, tn_tensor *a) { return AG(c, neg, VT(a)); }
tn_tensor *ag_conj(tn_grad_ctx *c, tn_tensor *a) {
    return a && tn_dtype_is_complex(a->dtype) ? AG(c, conj_physical, VT(a)) : a;
}
tn_tensor *ag_add_s(tn_grad_ctx *c, tn_tensor *a, double s) { return AG(c, add_Scalar, VT(a), VD(s), VI(1)); }
tn_tensor *ag_mm(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b) { return AG(c, mm, VT(a), VT(b)); }
tn_tensor *ag_t(tn_grad_ctx *c, tn_tensor *a) { return AG(c, t, VT(a)); }
tn_tensor *ag_transpose(tn_grad_ctx *c, tn_tensor *a, int64_t d0, int64_t d1) {
    return AG(c, transpose_int, VT(a), VI(d0), VI(d1));
}
tn_tensor *ag_matmul(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b) { return AG(c, matmul, VT(a), VT(b)); }
tn_tensor *ag_reshape(tn_grad_ctx *c, tn_tensor *a, int ndim, const int64_t *sizes) {
    return AG(c, reshape, VT(a), VIL(sizes, ndim));
}
tn_tensor *ag_expand(tn_grad_ctx *c, tn_tensor *a, int ndim, const int64_t *sizes) {
    return AG(c, expand, VT(a), VIL(sizes, ndim), VB(false));
}
tn_tensor *ag_sum_dims(tn_grad_ctx *c, tn_tensor *a, int n, const int64_t *dims, bool keepdim) {
    return AG(c, sum_dim_IntList, VT(a), VIL(dims, n), VB(keepdim), VN());
}
tn_tensor *ag_unsqueeze(tn_grad_ctx *c, tn_tensor *a, int64_t dim) { return AG(c, unsqueeze, VT(a), VI(dim)); }
tn_tensor *ag_where(tn_grad_ctx *c, tn_tensor *cond, tn_tensor *a, tn_tensor *b) {
    return AG(c, where_self, VT(cond), VT(a), VT(b));
}
tn_tensor *ag_contiguous(tn_grad_ctx *c, tn_tensor *a) {
    if (!a || tn_tensor_is_contiguous(a)) return a;
    return AG(c, clone, VT(a), VN());
}

tn_tensor *ag_sum_to(tn_grad_ctx *c, tn_tensor *a, int ndim, const int64_t *sizes) {
    if (!a) return NULL;
    int64_t dims[TN_MAX_DIMS];
    int nred = 0, lead = a->ndim - ndim;
    for (int i = 0; i < a->ndim; i++)
        if (i < lead || (sizes[i - lead] == 1 && a->sizes[i] != 1)) dims[nred++] = i;
    tn_tensor *s = nred ? ag_sum_dims(c, a, nred, dims, true) : a;
    if (s && (s->ndim != ndim || memcmp(s->sizes, sizes, sizeof(int64_t) * (size_t)ndim)))
        s = ag_reshape(c, s, ndim, sizes);
    return s;
}

tn_tensor *ag_zeros(tn_grad_ctx *c, const tn_geom *g) {
    if (c->st != TN_OK) return NULL;
    tn_tensor *z;
    tn_status st = tn_tensor_zeros(g->ndim, g->sizes, g->dtype, g->device, &z);
    if (st != TN_OK) { ag_fail(c, st); return NULL; }
    return ag_keep(c, z);
}

tn_tensor *ag_zeros_like(tn_grad_ctx *c, tn_tensor *a) {
    if (!a) return NULL;
    tn_geom g;
    tn_geom_of(a, &g);
    return ag_zeros(c, &g);
}

tn_tensor *ag_cast(tn_grad_ctx *c, tn_tensor *a, tn_dtype d) {
    if (!a || a->dtype == d) return a;
    return AG(c, _to_copy, VT(a), VDT(d), VN(), VN(), VN(), VB(false), VN());
}

tn_tensor *ag_scalar_like(tn_grad_ctx *c, tn_tensor *like, double v) {
    if (!like) return NULL;
    return AG(c, full, VIL(NULL, 0), VD(v), VDT(like->dtype), VN(), VN(), VN());
}
