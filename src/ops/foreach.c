/* foreach.c — the _foreach_* operators: list checks as upstream's ForeachUtils.h, then one
 * call through the door per list element to the single-tensor operator (what upstream's
 * CPU "slow" kernels do), so every result equals the single-tensor op's bit for bit. The
 * overloads are described in foreach.def. */
#include <stdlib.h>
#include <string.h>

#include "kernels/cast.h"
#include "ops/dispatch.h"
#include "ops/shape.h"

/* Where one argument of the per-element call comes from. */
typedef enum fe_src_kind {
    FE_SRC_LIST,    /* element i of a Tensor[] argument */
    FE_SRC_VALUE,   /* the argument itself */
    FE_SRC_SCALARS, /* element i of a Scalar[] argument */
    FE_SRC_PACKED,  /* element i of a 1-D tensor of scalars, as a Scalar */
    FE_SRC_ZERODIM, /* a tensor argument that must be 0-dim with one element */
    FE_SRC_ONE,     /* literal 1 (alpha) */
    FE_SRC_NONE,    /* None */
    FE_SRC_FALSE,   /* False */
} fe_src_kind;

typedef struct fe_src {
    fe_src_kind kind;
    int arg;
} fe_src;

typedef enum fe_result {
    FE_LIST,   /* functional: one new tensor per element, returned as Tensor[] */
    FE_VOID,   /* in place: the per-element op mutates its first argument */
    FE_CLONED, /* functional form of an in-place op: runs it on a clone of self[i] */
} fe_result;

typedef struct fe_spec {
    tn_op_id op;   /* the foreach overload (for its name in messages) */
    tn_op_id each; /* the single-tensor operator applied per element */
    fe_result result;
    int nsrc;
    const fe_src *src;
} fe_spec;

#define FE_MAX_ARGS 8

#define L(k) {FE_SRC_LIST, k}
#define V(k) {FE_SRC_VALUE, k}
#define S(k) {FE_SRC_SCALARS, k}
#define T(k) {FE_SRC_PACKED, k}
#define Z(k) {FE_SRC_ZERODIM, k}
#define ONE {FE_SRC_ONE, -1}
#define NONE {FE_SRC_NONE, -1}
#define NO {FE_SRC_FALSE, -1}

/* Upstream's check_foreach_api_restrictions: every tensor list non-empty and as long as
 * the first; scalar lists and packed scalars as long as the tensor lists. */
static tn_status check_lists(const fe_spec *sp, const tn_value *args, int64_t *n_out) {
    int64_t n = -1;
    for (int k = 0; k < sp->nsrc; k++) {
        const fe_src *s = &sp->src[k];
        if (s->kind != FE_SRC_LIST) continue;
        const tn_value *v = &args[s->arg];
        if (v->tag != TN_V_TENSORLIST)
            return tn_error(TN_ERR_TYPE, "%s: expected a list of tensors", tn_op_schemas[sp->op].name);
        if (v->u.tlist.n == 0) return tn_error(TN_ERR_RUNTIME, "Tensor list must have at least one tensor.");
        if (n < 0) n = v->u.tlist.n;
        else if (v->u.tlist.n != n)
            return tn_error(TN_ERR_RUNTIME, "Tensor lists must have the same number of tensors, got %lld and %lld",
                            (long long)n, (long long)v->u.tlist.n);
        for (int64_t i = 0; i < v->u.tlist.n; i++)
            if (!v->u.tlist.data[i])
                return tn_error(TN_ERR_RUNTIME, "%s: element %lld of a tensor list is None", tn_op_schemas[sp->op].name,
                                (long long)i);
    }
    for (int k = 0; k < sp->nsrc; k++) {
        const fe_src *s = &sp->src[k];
        const tn_value *v = &args[s->arg];
        if (s->kind == FE_SRC_SCALARS && v->u.slist.n != n)
            return tn_error(TN_ERR_RUNTIME, "Tensor list must have same number of elements as scalar list.");
        if (s->kind == FE_SRC_PACKED) {
            const tn_tensor *t = v->u.t;
            if (tn_tensor_is_meta(t))
                return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::%s with meta scalars is not implemented by torchnative",
                                tn_op_schemas[sp->op].name);
            if (!tn_tensor_is_contiguous(t)) return tn_error(TN_ERR_RUNTIME, "Expected scalars to be contiguous.");
            if (t->ndim != 1)
                return tn_error(TN_ERR_RUNTIME, "Expected packed scalar Tensor to be of dimension 1. Got %d instead.",
                                (int)t->ndim);
            if (t->sizes[0] != n)
                return tn_error(TN_ERR_RUNTIME, "Expected length of scalars to match input of length %lld but got %lld instead.",
                                (long long)n, (long long)t->sizes[0]);
        }
        if (s->kind == FE_SRC_ZERODIM) {
            const tn_tensor *t = v->u.t;
            int64_t numel = tn_tensor_numel(t);
            if (t->ndim != 0 || numel != 1)
                return tn_error(TN_ERR_RUNTIME, "scalar tensor expected to be 0 dim but it has %d dimensions and %lld elements.",
                                (int)t->ndim, (long long)numel);
        }
    }
    if (n < 0) return tn_error(TN_ERR_RUNTIME, "Tensor list must have at least one tensor.");
    *n_out = n;
    return TN_OK;
}

/* Element i of a packed scalars tensor as the Scalar upstream builds from it. */
static tn_value packed_scalar(const tn_tensor *t, int64_t i) {
    const char *p = (const char *)tn_tensor_data(t) + i * t->strides[0] * tn_dtype_itemsize(t->dtype);
    if (t->dtype == TN_DTYPE_BOOL) return tn_value_bool(*(const bool *)p);
    if (tn_dtype_is_integral(t->dtype, false)) return tn_value_int(tn_cast_load_int64(p, t->dtype));
    if (tn_dtype_is_complex(t->dtype)) {
        tn_value v = {.tag = TN_V_COMPLEX};
        tn_cast_load_complex(p, t->dtype, &v.u.c.re, &v.u.c.im);
        return v;
    }
    return tn_value_double(tn_cast_load_double(p, t->dtype));
}

static void build_args(const fe_spec *sp, const tn_value *args, int64_t i, tn_value *a) {
    for (int k = 0; k < sp->nsrc; k++) {
        const fe_src *s = &sp->src[k];
        switch (s->kind) {
        case FE_SRC_LIST: a[k] = tn_value_tensor(args[s->arg].u.tlist.data[i]); break;
        case FE_SRC_VALUE:
        case FE_SRC_ZERODIM: a[k] = args[s->arg]; break;
        case FE_SRC_SCALARS: a[k] = args[s->arg].u.slist.data[i]; break;
        case FE_SRC_PACKED: a[k] = packed_scalar(args[s->arg].u.t, i); break;
        case FE_SRC_ONE: a[k] = tn_value_int(1); break;
        case FE_SRC_NONE: a[k] = (tn_value){.tag = TN_V_NONE}; break;
        case FE_SRC_FALSE: a[k] = tn_value_bool(false); break;
        }
    }
}

/* Runs one foreach overload: checks, then the per-element op through the door. A failure
 * part-way leaves the elements already done updated, as upstream's loop does. */
static tn_status fe_run(const fe_spec *sp, const tn_value *args, tn_value *rets) {
    int64_t n = 0;
    TN_TRY(check_lists(sp, args, &n));
    /* upstream's slow norm takes an int or float ord only (linalg_vector_norm alone reads a bool as 1) */
    if (sp->op == TN_OP__foreach_norm_Scalar && (args[1].tag == TN_V_BOOL || args[1].tag == TN_V_COMPLEX))
        return tn_error(TN_ERR_RUNTIME, "foreach_tensor_norm_slow expects ord to be integer or float");
    if (sp->nsrc != tn_op_schemas[sp->each].nargs || sp->nsrc > FE_MAX_ARGS)
        return tn_error(TN_ERR_RUNTIME, "internal: %s describes %d arguments for aten::%s, which takes %d",
                        tn_op_schemas[sp->op].name, sp->nsrc, tn_op_schemas[sp->each].name,
                        (int)tn_op_schemas[sp->each].nargs);
    tn_tensor **out = NULL;
    if (sp->result != FE_VOID) {
        out = calloc((size_t)n, sizeof *out);
        if (!out) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    tn_status st = TN_OK;
    int64_t done = 0;
    for (int64_t i = 0; i < n && st == TN_OK; i++) {
        tn_value a[FE_MAX_ARGS], r[4];
        build_args(sp, args, i, a);
        if (sp->result == FE_CLONED) {
            tn_value c[2] = {a[0], {.tag = TN_V_NONE}}, cr[1];
            st = tn_dispatch(TN_OP_clone, c, cr);
            if (st != TN_OK) break;
            out[i] = cr[0].u.t;
            done = i + 1;
            a[0] = tn_value_tensor(out[i]);
        }
        st = tn_dispatch(sp->each, a, r);
        if (st != TN_OK) break;
        if (sp->result == FE_LIST) {
            out[i] = r[0].u.t;
            done = i + 1;
        } else {
            for (int k = 0; k < tn_op_schemas[sp->each].nrets; k++) tn_value_release(&r[k]);
        }
    }
    if (sp->result == FE_VOID) return st;
    if (st != TN_OK) {
        for (int64_t i = 0; i < done; i++) tn_tensor_release(out[i]);
        free(out);
        return st;
    }
    st = tn_value_tensorlist_result(out, n, &rets[0]);
    free(out);
    return st;
}

#define TN_FOREACH(ident, each_op, res, ...)                                                      \
    tn_status tn_op_##ident(const tn_value *args, tn_value *rets);                                \
    tn_status tn_op_##ident(const tn_value *args, tn_value *rets) {                               \
        static const fe_src src[] = {__VA_ARGS__};                                               \
        static const fe_spec spec = {TN_OP_##ident, TN_OP_##each_op, res,                        \
                                     (int)(sizeof src / sizeof src[0]), src};                    \
        return fe_run(&spec, args, rets);                                                        \
    }
#include "ops/foreach.def"
#undef TN_FOREACH
