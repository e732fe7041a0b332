/* elementwise_backward.h — loops of the pointwise backward operators (activation and
 * pointwise-loss gradients: threshold_backward, gelu_backward, mse_loss_backward, ...),
 * per floating dtype, under the elementwise loop contract of kernels/elementwise.h:
 * data[0] is grad_input, then grad_output, then the op's tensors (self / result, target).
 * Half and BFloat16 compute in float (upstream's opmath), rounded once on store. Plain C11. */
#ifndef TN_KERNELS_ELEMENTWISE_BACKWARD_H
#define TN_KERNELS_ELEMENTWISE_BACKWARD_H

#include "kernels/elementwise.h"

/* Every slot with its number of inputs (grad_output included). Constants in tn_loop_ctx:
 *   threshold    d[0] threshold                   gelu / gelu_tanh  -
 *   hardtanh     d[0] min, d[1] max                leaky_relu       d[0] negative slope
 *   elu          d[0] alpha*scale, d[1] scale, d[2] input_scale; mode 1: input is the result
 *   softplus     d[0] beta, d[1] threshold         mse              d[0] norm (2 or 2/n)
 *   smooth_l1    d[0] norm, d[1] beta              huber            d[0] norm, d[1] delta
 *   bce          -  (weight and the mean's division are applied by the op layer)
 *   dropout      d[0] scale (inputs: grad, mask)   shrink           d[0] lambda
 *   mish         -                                 logit            mode 1: d[0] eps given */
#define TN_EWB_OPS(X)                                                                    \
    X(threshold, 2) X(gelu, 2) X(gelu_tanh, 2) X(silu, 2) X(sigmoid, 2) X(tanh, 2)       \
    X(hardtanh, 2) X(leaky_relu, 2) X(elu, 2) X(softplus, 2) X(hardswish, 2)             \
    X(hardsigmoid, 2) X(mse, 3) X(smooth_l1, 3) X(huber, 3) X(bce, 3) X(dropout, 2)          \
    X(shrink, 2) X(mish, 2) X(logit, 2) X(log_sigmoid, 3)

typedef enum tn_ewb_op {
#define TN_X(op, n) TN_EWB_##op,
    TN_EWB_OPS(TN_X)
#undef TN_X
    TN_EWB_COUNT
} tn_ewb_op;

/* The loop for (op, dtype) at the current ISA tier (tn_cpu_isa(); a vector loop where one
 * exists, else the scalar reference); NULL where upstream refuses the dtype (all but the
 * floating dtypes; threshold also takes the integer ones). */
tn_loop_fn tn_ewb_loop(tn_ewb_op op, tn_dtype dtype);
/* The scalar reference loop for (op, dtype), whatever the tier. */
tn_loop_fn tn_ewb_loop_scalar(tn_ewb_op op, tn_dtype dtype);

/* float32 vector loops (ew_backward_avx2.c / ew_backward_avx512.c); contiguous operands on
 * vectors, any other layout through the scalar reference. */
void tn_ewb_silu_f32__avx2(char **data, const int64_t *strides, int64_t n, void *ctx);
void tn_ewb_silu_f32__avx512(char **data, const int64_t *strides, int64_t n, void *ctx);
void tn_ewb_threshold_f32__avx2(char **data, const int64_t *strides, int64_t n, void *ctx);
void tn_ewb_threshold_f32__avx512(char **data, const int64_t *strides, int64_t n, void *ctx);

#endif
