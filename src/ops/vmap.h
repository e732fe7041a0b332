/* vmap.h — torch.vmap at the door: the per-thread stack of vmap levels, batched tensors
 * (core/tensor.h's tn_batch) made and taken apart, and the batching of an operator call.
 *
 * Contract:
 * - A batched tensor never reaches a kernel. tn_dispatch hands every call that has one
 *   among its tensor arguments (or tensor-list elements) to tn_vmap_dispatch, which batches
 *   it at the highest level present: one call of the operator per batch element on
 *   `select(value, bdim, i)` of each argument batched at that level (other arguments as
 *   given), each through the door (so autograd records the physical computation and nested
 *   levels batch recursively), the results stacked on a new dimension 0 and wrapped as
 *   batched at that level. View operators' results are rebuilt as one strided view of the
 *   input's value when the per-element views allow it, so writes through them reach the
 *   input as upstream's view batching rules make them.
 * - Upstream's `pointwise` operators (the tag of native_functions.yaml) skip the loop: one
 *   call on the values, batch dimensions first and aligned for broadcasting.
 * - In-place operators write through the per-element views of a batched self; a self not
 *   batched where another argument is raises upstream's RuntimeError. out= and other
 *   mutating overloads with a batched argument, and operators returning numbers (.item(),
 *   data-dependent control flow), raise RuntimeError as upstream's vmap does.
 * - Random operators inside vmap: randomness="error" raises upstream's RuntimeError;
 *   "different" draws per batch element (the loop), "same" runs unbatched when no argument
 *   is batched and refuses by name otherwise.
 * Plain C11; no Python. */
#ifndef TN_OPS_VMAP_H
#define TN_OPS_VMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/dispatch.h"

/* upstream's words when a batched tensor is read as a number (.item(), a Scalar argument) */
#define TN_MSG_VMAP_ITEM                                                                                     \
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on " \
    "a Tensor, please try to rewrite what you're doing with other operations. If error is occurring "        \
    "somewhere inside PyTorch internals, please file a bug report."

enum { TN_VMAP_RANDOM_ERROR = 0, TN_VMAP_RANDOM_SAME = 1, TN_VMAP_RANDOM_DIFFERENT = 2 };

/* Enters a vmap level of `batch_size` with a randomness mode; *level = its number (1 for
 * the outermost). */
tn_status tn_vmap_push(int64_t batch_size, int randomness, int64_t *level);
/* Leaves the innermost level; *level = its number. RuntimeError when none is active. */
tn_status tn_vmap_pop(int64_t *level);
/* Levels active on this thread (0 outside vmap). */
int tn_vmap_depth(void);

/* The batch size of an active vmap level (1..depth). */
int64_t tn_vmap_batch_size(int64_t level);

/* torch.func.grad's levels (functorch.py builds the transform on them): while one is active,
 * a batched tensor reports its value's requires_grad and requires_grad_() reaches the value,
 * as upstream's grad wrappers under vmap do; outside, a batched tensor never requires grad. */
int64_t tn_func_grad_push(void);
tn_status tn_func_grad_pop(int64_t *level);
int tn_func_grad_depth(void);

/* A batched tensor at `level` whose value is t with the batch dimension at bdim (t is
 * retained; 0 <= bdim < t->ndim, the batch size t->sizes[bdim]). */
tn_status tn_vmap_add_batch_dim(tn_tensor *t, int64_t bdim, int64_t level, tn_tensor **out);
/* The physical tensor of t for `level` with its batch dimension at out_dim: t's value moved
 * when t is batched at `level`, else t broadcast along a new dimension of batch_size. */
tn_status tn_vmap_remove_batch_dim(tn_tensor *t, int64_t level, int64_t batch_size, int64_t out_dim,
                                   tn_tensor **out);

/* Whether tn_dispatch must hand this call to tn_vmap_dispatch (a cheap test outside vmap). */
bool tn_vmap_intercepts(tn_op_id op, const tn_value *args);
tn_status tn_vmap_dispatch(tn_op_id op, const tn_value *args, tn_value *rets);

#endif
