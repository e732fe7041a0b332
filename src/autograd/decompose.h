/* decompose.h — composite operators that autograd runs as their parts, and operators
 * whose outputs never require grad. Plain C11; no Python. */
#ifndef TN_AUTOGRAD_DECOMPOSE_H
#define TN_AUTOGRAD_DECOMPOSE_H

#include <stdbool.h>

#include "ops/value.h"
#include "ops_generated.h"

/* Runs a composite operator as door calls of its parts (grad mode stays on). */
typedef tn_status (*tn_decomp_fn)(const tn_value *args, tn_value *rets);
/* The decomposition of op under autograd, or NULL. */
tn_decomp_fn tn_autograd_decomp_for(tn_op_id op);
/* Whether op's outputs never require grad (detach, factories, samplers, argmax ...). */
bool tn_autograd_nondifferentiable(tn_op_id op);
/* Whether upstream has no derivative for op either (generated list): backward through its
 * node raises upstream's RuntimeError rather than refusing by torchnative's name. */
bool tn_autograd_upstream_refuses(tn_op_id op);

#endif
