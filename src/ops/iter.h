/* iter.h — the elementwise engine (upstream's TensorIterator, reduced to what CPU eager
 * needs): N outputs + inputs, broadcasting, type promotion to a common dtype with input
 * conversion, output allocation that follows the inputs' memory layout, dimension
 * coalescing, and 1-D inner loops over [begin, end) ranges of the linear index.
 *
 * Usage:
 *   tn_iter_config cfg = tn_iter_config_init(1, 2);  // 1 output, 2 inputs
 *   cfg.inputs[0] = a; cfg.inputs[1] = b;            // outputs[0] NULL: allocate
 *   cfg.promote_inputs_to_common_dtype = true;
 *   tn_iter it;
 *   TN_TRY(tn_iter_build(&it, &cfg));
 *   tn_iter_for_each(&it, loop_for(it.common_dtype), &ctx);
 *   *out = tn_iter_take_output(&it, 0);
 *   tn_iter_release(&it);
 *
 * Operand order inside the iterator: outputs first, then inputs (as upstream), which is
 * also the order of `data`/`strides` handed to loops. Meta operands compute shapes and
 * allocate meta outputs; for_each then does nothing. Plain C11; no Python. */
#ifndef TN_ITER_H
#define TN_ITER_H

#include "core/tensor.h"
#include "kernels/elementwise.h"

#define TN_ITER_MAX_OPERANDS 8

typedef struct tn_iter_config {
    int noutputs, ninputs;
    tn_tensor *outputs[TN_ITER_MAX_OPERANDS]; /* NULL = allocate; given ones are never resized */
    tn_tensor *inputs[TN_ITER_MAX_OPERANDS];  /* borrowed; must be non-NULL */
    /* Convert inputs whose dtype differs from the common dtype (upstream does this
     * eagerly on CPU, and so do we). */
    bool promote_inputs_to_common_dtype;
    /* An integral/bool common dtype becomes the default float dtype (true division,
     * sqrt of ints, ...). */
    bool promote_integer_inputs_to_float;
    /* Without promotion: refuse operands whose dtypes differ ("Found dtype ..."). */
    bool check_all_same_dtype;
    /* Refuse an output overlapping itself (expanded) or partially overlapping an input. */
    bool check_mem_overlap;
    /* Compute in this dtype instead of the promoted one (Undefined = promote). */
    tn_dtype static_dtype;
    /* Dtype of allocated outputs (Undefined = the common dtype), e.g. Bool for eq. */
    tn_dtype output_dtype;
    /* Output 0 when it fits, else NULL or ignored (output 0 then allocated as usual): a CPU
     * tensor with the broadcast shape and the output's dtype, non-overlapping and dense, whose
     * storage no input shares except with exactly its geometry (the in-place case). How the
     * door's derived in-place / out= forms write straight into their tensor (tn_iter_offer). */
    tn_tensor *preferred_output;
} tn_iter_config;

/* Defaults as upstream's TensorIteratorConfig: same-dtype check and overlap check on. */
tn_iter_config tn_iter_config_init(int noutputs, int ninputs);

typedef struct tn_iter_operand {
    tn_tensor *tensor;   /* what loops touch (owned reference) */
    tn_tensor *original; /* the caller's input when `tensor` is a converted copy (owned), else NULL */
    bool is_output;
} tn_iter_operand;

typedef struct tn_iter {
    int noperands, noutputs;
    tn_iter_operand ops[TN_ITER_MAX_OPERANDS];
    tn_dtype common_dtype;
    bool is_meta;
    int64_t numel;
    /* Broadcast shape, in tensor dimension order. */
    int shape_ndim;
    int64_t shape[TN_MAX_DIMS];
    /* Iteration space after reordering and coalescing: dimension 0 moves fastest. */
    int ndim;
    int64_t it_shape[TN_MAX_DIMS];
    int64_t strides[TN_ITER_MAX_OPERANDS][TN_MAX_DIMS]; /* bytes */
} tn_iter;

/* Builds the iterator (checks, broadcasting, promotion, conversion, allocation). On
 * failure nothing is leaked and `it` needs no release. */
tn_status tn_iter_build(tn_iter *it, const tn_iter_config *cfg);
/* The iterator's memory-overlap check of a written-to tensor, shared with the door's derived
 * out=/in-place forms of TensorIterator operators: `in` NULL checks `out` for internal
 * overlap (a broadcast dim), else for a partial overlap with the input `in` (full overlap,
 * the same geometry, is allowed). RuntimeError with upstream's "unsupported operation". */
tn_status tn_iter_check_overlap(const tn_tensor *out, const tn_tensor *in);
/* Upstream's assert_no_overlap, which the kernels that are not TensorIterator ones
 * (index_select, gather, masked_select, the scatters' index and src, ...) call: any
 * overlap of the written-to tensor with the input `in` refuses, full overlap (the same
 * tensor, even an empty one) included. */
tn_status tn_check_no_overlap(const tn_tensor *out, const tn_tensor *in);
/* Runs `loop` over the whole iteration space (no-op for meta or empty iterators). */
void tn_iter_for_each(const tn_iter *it, tn_loop_fn loop, void *ctx);
/* Runs `loop` over linear indices [begin, end) of the iteration space: the unit a
 * thread pool hands to one worker. */
void tn_iter_run_range(const tn_iter *it, int64_t begin, int64_t end, tn_loop_fn loop, void *ctx);
/* Output i with a new reference for the caller. */
tn_tensor *tn_iter_take_output(const tn_iter *it, int i);
/* The caller's tensor behind input i (before any dtype conversion), borrowed. */
const tn_tensor *tn_iter_original_input(const tn_iter *it, int i);
/* Releases the iterator's references. */
void tn_iter_release(tn_iter *it);

/* The written-to tensor of a derived in-place / out= call, offered by the door (dispatch.c's
 * run_derived) to the functional it runs instead of copying that functional's result into it.
 * The offer is keyed by the `rets` array the door hands the functional: only a kernel that
 * returns its result through exactly that array (a tail call, possibly through a nested
 * dispatch that passes `rets` on) takes it, so an intermediate step of a composite, which
 * returns into its own array, never writes into the tensor early (an in-place composite
 * could read self again after such a step). A nested dispatch of another operator that
 * passes `rets` on keeps the offer only when that operator's out= rules are the offered
 * functional's (tn_dispatch withholds it otherwise: lt taking signbit's non-bool out would
 * write where signbit refuses). Taking clears the offer; push / pop nest with the door's
 * calls. The taker still checks the fit (tn_iter_config.preferred_output), and the door
 * copies only when the result it gets back is not its own tensor. */
typedef struct tn_iter_offer {
    tn_tensor *dest;  /* borrowed */
    const void *rets; /* the door's result array for the functional */
    int functional;   /* the operator it is offered to (a tn_op_id; -1 with no offer) */
} tn_iter_offer;
tn_iter_offer tn_iter_offer_push(tn_tensor *dest, const void *rets, int functional);
void tn_iter_offer_pop(tn_iter_offer previous);
/* The pending offer (dest NULL when there is none): read inline, since tn_dispatch looks at
 * it on every call. */
extern _Thread_local tn_iter_offer tn_iter_tl_offer;
static inline tn_iter_offer tn_iter_offer_current(void) { return tn_iter_tl_offer; }
/* The offered tensor (borrowed) when `rets` is the array it was offered for, else NULL. */
tn_tensor *tn_iter_offer_take(const void *rets);

/* Broadcasts two shapes with upstream's infer_size error text. */
tn_status tn_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out);

/* Upstream's is_non_overlapping_and_dense: the elements fill a contiguous range exactly
 * once in some dimension order. */
bool tn_tensor_is_non_overlapping_and_dense(const tn_tensor *t);

/* Upstream's infer_dense_strides: dense strides that keep t's dimension order (dims
 * sorted by stride, zero strides keeping their place), for a like-tensor of a view that
 * is not dense (overlapping, expanded or sliced). */
void tn_tensor_dense_strides_like(const tn_tensor *t, int64_t *out);
/* The strides upstream's empty_like (memory_format=preserve) gives a tensor like t: t's own
 * when t is non-overlapping and dense, else dense strides in t's dimension order
 * (infer_dense_strides). One home for empty_like, clone and _to_copy. */
void tn_tensor_like_strides(const tn_tensor *t, int64_t *out);

/* Uninitialised tensor with explicit strides (empty_strided); storage sized to fit. */
tn_status tn_tensor_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides, tn_dtype dtype,
                                  tn_device device, tn_tensor **out);

/* A tensor like `t` (same shape, dtype `dtype`) with preserve_format layout: t's strides
 * when t is non-overlapping and dense, contiguous otherwise. */
tn_status tn_tensor_empty_like(const tn_tensor *t, tn_dtype dtype, tn_tensor **out);

#endif
