/* dispatch.h — the door. Every operator call, from any Python spelling or from C, goes
 * through tn_dispatch(op, args, rets). It is the one place where autograd recording,
 * meta execution, profiling and graph capture attach, and where a missing kernel is
 * refused by name.
 *
 * An op implementation reads its arguments by schema position (all arguments, defaults
 * filled by the caller) and writes its results into `rets` (result tensors carry a
 * reference owned by the receiver). Implementations are registered in the *.def lists
 * next to this file. Plain C11; no Python. */
#ifndef TN_DISPATCH_H
#define TN_DISPATCH_H

#include "ops/value.h"
#include "ops_generated.h"

typedef tn_status (*tn_op_fn)(const tn_value *args, tn_value *rets);

/* Upstream's words when detach_ meets a view: Tensor.detach_ (the binding) and
 * torch.ops.aten.detach_ (the door) both refuse with them. */
#define TN_MSG_DETACH_VIEW_INPLACE                                                                  \
    "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "  \
    "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "     \
    "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "    \
    "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."

/* Runs `op`. For an in-place overload (name ends in '_') or an out= overload without an
 * implementation of its own, the door runs the functional sibling and copies the result
 * into self / out (resizing out as upstream does). Missing kernels raise
 * NotImplementedError "aten::<name>.<overload> is not implemented by torchnative". */
tn_status tn_dispatch(tn_op_id op, const tn_value *args, tn_value *rets);
/* tn_dispatch of an op whose first result is its only tensor: the new reference in *out. */
static inline tn_status tn_dispatch_one(tn_op_id op, const tn_value *args, tn_tensor **out) {
    tn_value r[4];
    tn_status st = tn_dispatch(op, args, r);
    if (st == TN_OK) *out = r[0].u.t;
    return st;
}

/* Runs an out= or in-place overload as the door derives it from its functional sibling: for
 * an implementation of that overload that first makes a check upstream makes only there. */
tn_status tn_dispatch_derived(tn_op_id op, const tn_value *args, tn_value *rets);

/* The implementation registered for op, or NULL. */
tn_op_fn tn_op_impl(tn_op_id op);

/* How the door writes a functional operator's result into the out= (and self of the
 * in-place) variants it derives: the optional third column of the op's TN_OP_IMPL row
 * (default TN_OUT_CAST). Each value is one of upstream's families of out= kernels. */
typedef enum tn_out_rule {
    TN_OUT_CAST = 0,     /* promoting ops: the result is cast into out when it can be
                          * ("result type Float can't be cast to the desired output type Long") */
    TN_OUT_SAME_DTYPE,   /* TensorIterator ops without promotion (abs, floor, clamp, the
                          * activations): out must have the result's dtype, "Found dtype
                          * Double but expected Float", checked before the kernel runs */
    TN_OUT_EXACT,        /* out= generated from the functional (autogen copy_arg) and
                          * structured kernels with a fixed result dtype (argmax, sort, isnan):
                          * "Expected out tensor to have dtype float, but got double instead" */
    TN_OUT_BOOL_EXACT,   /* structured kernels whose result is always bool (isin): TN_OUT_EXACT's
                          * refusal, checked before the kernel runs (an expanded input of 2**31
                          * elements would otherwise be searched first) */
    TN_OUT_POOL_OUTPUT,  /* adaptive_avg_pool2d/3d: out must have the input's dtype, after the
                          * input's own checks ("expected dtype float for `output` but got
                          * dtype double") */
    TN_OUT_BOOL_ONLY,    /* isposinf, isneginf, signbit: "<op> does not support non-boolean outputs." */
    TN_OUT_BOOL_RESULT,  /* all, any: "<op> only supports bool tensor for result, got: Float" */
    TN_OUT_AS_INPUT,     /* nan_to_num: "nan_to_num: dtype of out: Double should be same as input: Float" */
    TN_OUT_SCALAR_TYPE,  /* log_sigmoid: "expected scalar type Float but found Double" */
    TN_OUT_RESULT_DTYPE, /* float_power: out and the in-place self must have the result's dtype,
                          * "the output given to float_power has dtype Float but the
                          * operation's result requires dtype Double" */
    TN_OUT_SEARCHSORTED, /* searchsorted, bucketize: out must be int32 when out_int32 else
                          * int64, "torch.searchsorted(): output tensor's dtype is wrong, ..." */
    TN_OUT_DTYPE_ARG,    /* reductions with an optional dtype (sum.dim_IntList, mean.dim, prod.dim_int,
                          * nansum, cumsum, cumprod): without dtype= they run in out's (or the
                          * in-place self's) dtype; with it, out must have exactly that dtype
                          * ("Expected out tensor to have dtype double, but got float instead") */
    TN_OUT_HISTC,        /* histc: out must have self's dtype, checked before the kernel runs
                          * ("torch.histogram: input tensor and hist tensor should have the
                          * same dtype, but got input c10::Half and hist float") */
    TN_OUT_CONVERT_SELF, /* std, var: upstream's reduction first converts a floating self to a
                          * different out dtype (a full-size allocation, so an expanded view
                          * too large to hold fails there with RuntimeError) and checks that
                          * self's dtype casts into out's before reducing: here that allocation
                          * is reserved and the check made before the kernel runs; the kernel
                          * reduces the converted self, except for a float / double out of at
                          * most one element (upstream's CPU path over self itself) */
} tn_out_rule;
/* Joined to a row's rule (TN_OUT_CAST | TN_OUT_ITER): the operator is one of upstream's
 * TensorIterator kernels (or cat and the stacks upstream builds on it, which check the
 * same), so its derived out= may neither overlap itself nor an input partially, and its
 * derived in-place self no other input ("unsupported operation: ..."), checked before the
 * kernel runs (tn_iter_check_overlap). */
#define TN_OUT_ITER 0x40
/* Joined to a row's rule: the operator's kernel is not a TensorIterator one and calls
 * upstream's assert_no_overlap (index_select, gather, take, masked_select, index.Tensor, cat and the stacks,
 * linalg_cross): its derived out= may not overlap itself nor any tensor input at all, full overlap
 * included; its derived in-place self no other input. Checked once the functional has
 * validated the arguments, before anything is written (tn_check_no_overlap). */
#define TN_OUT_DISJOINT 0x80
/* With TN_OUT_DISJOINT: out starts as a copy of self (the scatters, index_add, index_copy),
 * so out and self may overlap fully (same geometry) but not partially, as upstream's copy. */
#define TN_OUT_COPIES_SELF 0x20
/* With TN_OUT_DISJOINT: upstream's kernel (a legacy, not structured, one: index_select,
 * masked_select, take, index.Tensor) checks before its other checks and before resizing
 * out, so the same tensor as out and input refuses whatever its shape. Without it the
 * check follows the functional's and compares an out that is resized as upstream's
 * structured kernels do, after their meta function resized it. */
#define TN_OUT_DISJOINT_FIRST 0x10
#define TN_OUT_FLAGS (TN_OUT_ITER | TN_OUT_DISJOINT | TN_OUT_COPIES_SELF | TN_OUT_DISJOINT_FIRST)

/* The operator an alias row (TN_OP_ALIAS, composite.def) calls; any other operator itself. */
tn_op_id tn_op_resolve_alias(tn_op_id op);
/* The out= rule of a functional operator's row (an alias's: its target's). */
tn_out_rule tn_op_out_rule(tn_op_id functional);
/* Whether the row of a functional operator carries TN_OUT_ITER. */
bool tn_op_out_iter(tn_op_id functional);
/* The TN_OUT_DISJOINT / TN_OUT_COPIES_SELF / TN_OUT_DISJOINT_FIRST bits of a functional operator's row. */
unsigned tn_op_out_overlap_flags(tn_op_id functional);
/* Whether an operator a functional's kernel calls with its own `rets` may take the door's
 * offer made for that functional (iter.h): their rows carry the same out= rule and flags, or
 * the nested one is a TensorIterator row (TN_OUT_ITER) of the same rule under a functional
 * without flags (ldexp's mul): an iterator takes an offered tensor only when it shares no
 * memory with an input but in the same geometry (iter.c, preferred_fits), so the flag's
 * overlap checks would add nothing to that write, and anything else still goes through the
 * door's copy. */
bool tn_op_offer_passes(tn_op_id nested, tn_op_id functional);
/* The checks the door makes around a derived in-place form's functional, for a caller that
 * runs the functional's work itself (autograd's in-place-as-parts path, record.c): before
 * (after = false) self's internal overlap and, for TensorIterator rows, self against the
 * inputs; after, a TN_OUT_DISJOINT row's self against its other inputs. TN_OK for
 * anything but an in-place operator. */
tn_status tn_op_inplace_checks(tn_op_id op, const tn_value *args, bool after);
/* The door's checks of a derived in-place form's result against self, after the functional:
 * the row's out rule, the same shape, a dtype that casts into self's. */
tn_status tn_op_inplace_result_check(tn_op_id op, const tn_tensor *self, const tn_tensor *res);
/* Whether `op` can run (own implementation or a functional sibling that has one). */
bool tn_op_has_kernel(tn_op_id op);

#endif
