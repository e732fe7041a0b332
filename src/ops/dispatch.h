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

/* The implementation registered for op, or NULL. */
tn_op_fn tn_op_impl(tn_op_id op);
/* Whether `op` can run (own implementation or a functional sibling that has one). */
bool tn_op_has_kernel(tn_op_id op);

#endif
