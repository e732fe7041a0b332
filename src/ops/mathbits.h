/* mathbits.h — the conjugate and negative bits of a tensor: upstream's lazy conj() and
 * _neg_view(), views of the same storage whose elements read conjugated / negated.
 *
 * Kernels never see a bit. The door (dispatch.c) hands an operator call with a bitted
 * tensor argument to tn_mathbits_run, upstream's math-bit fallback: view operators run on
 * the physical tensor and their results carry the bits (real / imag turn a conjugate bit
 * into a negative one on the imaginary part); operators that read the bits (conj, _conj,
 * _neg_view, resolve_conj, resolve_neg, is_conj, is_neg) and metadata-only ones see the
 * tensor as it is; every other operator reads a resolved copy. An operator writing into a
 * bitted tensor (in place or as out=) writes into a resolved clone that is copied back
 * through the bits (more than one such tensor, or a resize, refuses by name). Plain C11;
 * no Python. */
#ifndef TN_OPS_MATHBITS_H
#define TN_OPS_MATHBITS_H

#include "ops/dispatch.h"

#define TN_MATHBITS (TN_TENSOR_CONJ | TN_TENSOR_NEG)

static inline uint32_t tn_mathbits(const tn_tensor *t) { return t ? t->flags & TN_MATHBITS : 0; }

/* Whether any tensor argument of op (lists included) carries a bit. */
bool tn_mathbits_in_args(tn_op_id op, const tn_value *args);

/* Runs op on args that carry bits, calling `run` for the operator itself (see above). */
tn_status tn_mathbits_run(tn_op_id op, const tn_value *args, tn_value *rets,
                          tn_status (*run)(tn_op_id, const tn_value *, tn_value *));

/* A tensor with t's values where the bits in `which` are applied to the data (a new
 * tensor, the bits of t outside `which` kept as bits); t itself (retained) when none of
 * `which` is set. */
tn_status tn_mathbits_resolve(tn_tensor *t, uint32_t which, tn_tensor **out);

/* A view of t (same storage and geometry) whose bits are t's with `toggle` flipped. */
tn_status tn_mathbits_view(tn_tensor *t, uint32_t toggle, tn_tensor **out);

#endif
