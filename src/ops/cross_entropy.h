/* cross_entropy.h — cross_entropy_loss's parts (src/ops/nn_loss.c) that its autograd
 * decomposition (src/autograd/decompose.c) shares, so the checks and the label-smoothing
 * composite have one home. Both take the operator's own argument array. */
#ifndef TN_OPS_CROSS_ENTROPY_H
#define TN_OPS_CROSS_ENTROPY_H

#include <stdbool.h>

#include "ops/value.h"

/* The argument checks in upstream's order; sets *probs when the target is shaped like self
 * (class probabilities) rather than class indices. */
tn_status tn_nn_cross_entropy_check(const tn_value *args, bool *probs);

/* Class probabilities (probs), or class indices with label_smoothing > 0: upstream's
 * composites as chains of door calls (autograd records the parts). Call after
 * tn_nn_cross_entropy_check. */
tn_status tn_nn_cross_entropy_composite(const tn_value *args, bool probs, tn_value *rets);

#endif
