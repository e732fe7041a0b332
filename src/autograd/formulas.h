/* formulas.h — how a derivative formula is written: the context a formula reads (saved
 * arguments and results, incoming gradients) and writes (one gradient per edge), and the
 * small vocabulary formulas are written in (AG(...) calls through the door).
 *
 * A formula is `void f(tn_grad_ctx *c)`. It reads ARG(i) (the i-th forward argument by
 * schema position: a tensor when the table saved it, else only its geometry GEOM(i) is
 * known), RES(k) (a saved result), GRAD(k) (gradient of result k, never NULL: missing
 * gradients of multi-output nodes are zeros) and writes SET(i, t) for each argument with
 * NEED(i). Every tensor a helper returns is borrowed from the context's scope and freed
 * when the formula returns; SET retains what it stores. Helpers stop at the first error
 * (c->st) and return NULL, and every helper accepts NULL inputs, so a formula is written
 * straight through without checks. Helpers call operators through the door, so under
 * create_graph the formula's own operators are recorded (double backward for free).
 *
 * Broadcasting and dtype are the engine's business: a gradient whose shape is the
 * broadcast shape is summed to the input's shape (upstream's validate_outputs), and one
 * of another dtype is cast, so formulas need not reduce what the forward broadcast. */
#ifndef TN_AUTOGRAD_FORMULAS_H
#define TN_AUTOGRAD_FORMULAS_H

#include "autograd/autograd.h"
#include "ops/dispatch.h"

typedef struct tn_grad_ctx {
    tn_node *node;
    tn_value *args;       /* [nargs] forward arguments (saved tensors unpacked) */
    tn_tensor **res;      /* [nres] saved results (unpacked) or NULL */
    tn_tensor **grads;    /* [num_inputs] gradients of the results (never NULL) */
    tn_tensor **out;      /* [num_next] gradients for the edges (owned; NULL = none) */
    tn_status st;
    tn_tensor **scope;    /* temporaries, released after the formula */
    int nscope, capscope;
} tn_grad_ctx;

typedef void (*tn_formula_fn)(tn_grad_ctx *c);

typedef struct tn_grad_formula {
    tn_formula_fn fn;
    const char *name;     /* upstream's node name: "MulBackward0" */
    uint32_t save_args;   /* bit i: keep tensor argument i (else only its geometry) */
    uint32_t save_res;    /* bit k: keep result k */
} tn_grad_formula;

/* The formula for op (its functional sibling's for in-place / out= forms), or NULL. */
const tn_grad_formula *tn_grad_formula_for(tn_op_id op);
/* f's saved-argument mask for op given which arguments need a gradient (bit i). */
uint32_t tn_grad_save_mask(const tn_grad_formula *f, tn_op_id op, uint32_t needs);
/* Whether op's outputs are views of its first argument (schema "-> Tensor(a)"). */
bool tn_op_is_view(tn_op_id op);

/* ---- the vocabulary ------------------------------------------------------------------- */
tn_tensor *ag_keep(tn_grad_ctx *c, tn_tensor *t);          /* takes ownership into the scope */
tn_tensor *ag_op(tn_grad_ctx *c, tn_op_id op, int n, tn_value *args);   /* result 0 */
/* Runs op, returning all results (scope-owned) in outs[nouts]. */
void ag_op_n(tn_grad_ctx *c, tn_op_id op, int n, tn_value *args, tn_tensor **outs, int nouts);
void ag_set(tn_grad_ctx *c, int arg, tn_tensor *g);         /* gradient of argument arg */
void ag_set_list(tn_grad_ctx *c, int arg, int k, tn_tensor *g); /* of element k of a list */
bool ag_need(const tn_grad_ctx *c, int arg);
bool ag_need_list(const tn_grad_ctx *c, int arg, int k);
int ag_list_len(const tn_grad_ctx *c, int arg);
void ag_fail(tn_grad_ctx *c, tn_status st);

/* Common compositions. */
tn_tensor *ag_mul(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b);
tn_tensor *ag_mul_s(tn_grad_ctx *c, tn_tensor *a, double s);
tn_tensor *ag_div(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b);
tn_tensor *ag_add(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b);
tn_tensor *ag_sub(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b);
tn_tensor *ag_neg(tn_grad_ctx *c, tn_tensor *a);
tn_tensor *ag_add_s(tn_grad_ctx *c, tn_tensor *a, double s);
tn_tensor *ag_mm(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b);
tn_tensor *ag_t(tn_grad_ctx *c, tn_tensor *a);               /* 2-D transpose */
tn_tensor *ag_transpose(tn_grad_ctx *c, tn_tensor *a, int64_t d0, int64_t d1);
tn_tensor *ag_matmul(tn_grad_ctx *c, tn_tensor *a, tn_tensor *b);
tn_tensor *ag_reshape(tn_grad_ctx *c, tn_tensor *a, int ndim, const int64_t *sizes);
tn_tensor *ag_expand(tn_grad_ctx *c, tn_tensor *a, int ndim, const int64_t *sizes);
tn_tensor *ag_sum_dims(tn_grad_ctx *c, tn_tensor *a, int n, const int64_t *dims, bool keepdim);
tn_tensor *ag_sum_to(tn_grad_ctx *c, tn_tensor *a, int ndim, const int64_t *sizes);
tn_tensor *ag_zeros(tn_grad_ctx *c, const tn_geom *g);
tn_tensor *ag_zeros_like(tn_grad_ctx *c, tn_tensor *a);
tn_tensor *ag_cast(tn_grad_ctx *c, tn_tensor *a, tn_dtype d);
tn_tensor *ag_unsqueeze(tn_grad_ctx *c, tn_tensor *a, int64_t dim);
tn_tensor *ag_where(tn_grad_ctx *c, tn_tensor *cond, tn_tensor *a, tn_tensor *b);
tn_tensor *ag_scalar_like(tn_grad_ctx *c, tn_tensor *like, double v); /* 0-dim of like's dtype */
tn_tensor *ag_unary(tn_grad_ctx *c, tn_op_id op, tn_tensor *a);
tn_tensor *ag_binary(tn_grad_ctx *c, tn_op_id op, tn_tensor *a, tn_tensor *b);
tn_tensor *ag_contiguous(tn_grad_ctx *c, tn_tensor *a);
/* the complex conjugate of a complex a (materialised); a itself for real dtypes */
tn_tensor *ag_conj(tn_grad_ctx *c, tn_tensor *a);

/* Value builders for AG(...). */
static inline tn_value VT(tn_tensor *t) { return tn_value_tensor(t); }
static inline tn_value VI(int64_t i) { return tn_value_int(i); }
static inline tn_value VD(double d) { return tn_value_double(d); }
static inline tn_value VB(bool b) { return tn_value_bool(b); }
static inline tn_value VN(void) { tn_value v = {.tag = TN_V_NONE}; return v; }
static inline tn_value VIL(const int64_t *p, int64_t n) {
    tn_value v = {.tag = TN_V_INTLIST};
    v.u.ilist.data = p;
    v.u.ilist.n = n;
    return v;
}
static inline tn_value VDT(tn_dtype d) { tn_value v = {.tag = TN_V_DTYPE}; v.u.dtype = d; return v; }

#define AG_NARGS(...) ((int)(sizeof((tn_value[]){__VA_ARGS__}) / sizeof(tn_value)))
/* AG(c, mul_Tensor, VT(a), VT(b)): runs aten::mul.Tensor, returns result 0 (scope-owned).
 * Every schema argument must be given (the door's convention: defaults filled). */
#define AG(c, OP, ...) ag_op((c), TN_OP_##OP, AG_NARGS(__VA_ARGS__), (tn_value[]){__VA_ARGS__})

/* Shorthands inside formulas (the context is named c). */
#define ARG(i) (c->args[i].u.t)
#define ARGV(i) (c->args[i])
#define GEOM(i) (&c->node->arg_geom[i])
#define RES(k) (c->res[k])
#define GRAD(k) (c->grads[k])
#define NEED(i) ag_need(c, (i))
#define SET(i, t) ag_set(c, (i), (t))
#define IARG(n) (c->args[n].u.i)
#define BARG(n) (c->args[n].u.b)
/* A Scalar argument as a double (int, float or bool). */
double ag_scalar(const tn_value *v);

#endif
