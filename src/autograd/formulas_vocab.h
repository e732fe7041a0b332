/* formulas_vocab.h — the vocabulary formulas generated from derivatives.yaml are written in
 * (tools/codegen/gen_derivatives.py), on top of formulas.h: value builders, geometry
 * queries, small list helpers, and one ag_<name> per upstream FunctionsManual helper the
 * generator maps a call to. Like the helpers of formulas.h, every function here accepts
 * NULL tensors (a previous step failed), returns NULL after an error, and leaves its
 * temporaries in the formula's scope. Real dtypes only: conj() is the identity. */
#ifndef TN_AUTOGRAD_FORMULAS_VOCAB_H
#define TN_AUTOGRAD_FORMULAS_VOCAB_H

#include <stdint.h>

#include "autograd/formulas.h"

/* Value builders beyond formulas.h. */
static inline tn_value VS(const char *s) {
    tn_value v = {.tag = TN_V_STRING};
    v.u.s.data = s;
    v.u.s.n = 0;
    while (s[v.u.s.n]) v.u.s.n++;
    return v;
}
static inline tn_value VBL(const bool *p, int64_t n) {
    tn_value v = {.tag = TN_V_BOOLLIST};
    v.u.blist.data = p;
    v.u.blist.n = n;
    return v;
}
#define ARGV_NONE(v) ((v).tag == TN_V_NONE)

/* Stops the formula with NotImplementedError(msg): an input whose derivative torchnative
 * cannot compute refuses by name instead of getting no gradient. */
void ag_refuse(tn_grad_ctx *c, const char *msg);

/* ---- geometry and lists ------------------------------------------------------------------ */
/* The geometry of t, valid for the formula's lifetime (an empty float geometry when t is NULL:
 * the formula has already failed and stops at its next call). */
const tn_geom *ag_geom_of(tn_grad_ctx *c, const tn_tensor *t);
/* Size of dimension k of g (k may be negative); 0 when g is NULL. */
int64_t ag_size(const tn_geom *g, int64_t k);
int64_t ag_numel(const tn_geom *g);
/* The int list l reversed / negated, in memory the formula's scope owns. */
tn_value ag_list_reverse(tn_grad_ctx *c, tn_value l);
tn_value ag_list_neg(tn_grad_ctx *c, tn_value l);

/* ---- tensors ------------------------------------------------------------------------------ */
/* A 0-dim tensor holding v in dtype dt (at::scalar_tensor(v, options)). */
tn_tensor *ag_scalar_tensor(tn_grad_ctx *c, double v, tn_dtype dt);
/* Zeros of the sizes in the int-list value `sizes`, in dtype dt. */
tn_tensor *ag_zeros_sized(tn_grad_ctx *c, tn_value sizes, tn_dtype dt);
/* Result k of a multi-result operator (the others are dropped). */
tn_tensor *ag_op_item(tn_grad_ctx *c, tn_op_id op, int k, int n, tn_value *args);
/* s / t elementwise (C++'s Scalar / Tensor: a filled tensor divided by t). */
tn_tensor *ag_rdiv(tn_grad_ctx *c, double s, tn_tensor *t);
/* t * s, skipping the product when s == 1 (upstream's maybe_multiply). */
tn_tensor *ag_maybe_multiply(tn_grad_ctx *c, tn_tensor *t, double s);

/* ---- FunctionsManual counterparts (written from the mathematics) ------------------------- */
/* atan2(self, other): out[0] = g * other / r2, out[1] = -g * self / r2, r2 = self^2 + other^2. */
void ag_atan2_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *self, tn_tensor *other, const bool *mask,
                       tn_tensor **out);
/* copysign: g * result / self, 0 where self == 0. */
tn_tensor *ag_copysign_tensor_self_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *self, tn_tensor *result);
/* prod over dim (INT64_MIN: over all elements, g and result 0-dim): the product of all the
 * other elements, correct with zeros in the input. */
tn_tensor *ag_prod_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, tn_tensor *result, int64_t dim, bool keepdim);
/* cumprod along dim. */
tn_tensor *ag_cumprod_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, int64_t dim, tn_tensor *result);
/* max()/min() over all: g shared evenly between the elements equal to value (NaN: the NaNs). */
tn_tensor *ag_evenly_distribute_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, tn_tensor *value);
/* sort/topk/kthvalue...: g scattered at indices along dim into zeros of `sizes`. */
tn_tensor *ag_value_selecting_reduction_backward(tn_grad_ctx *c, tn_tensor *g, int64_t dim, tn_tensor *indices,
                                                 tn_value sizes, bool keepdim);
/* masked_select: g placed where mask (broadcast with x) is true, zeros elsewhere. */
tn_tensor *ag_masked_select_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, tn_tensor *mask);
/* masked_scatter with respect to the source: the masked elements of g in order, zero-padded
 * to the source's element count and shaped like it. */
tn_tensor *ag_masked_scatter_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *mask, tn_value sizes);
/* norm(x, p[, dim, keepdim]) with result = the norm; p None is 2; dim NULL/None: all. */
tn_tensor *ag_norm_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *p, tn_tensor *result,
                            const tn_value *dim, bool keepdim);
/* logit(x, eps): g / (x (1 - x)), 0 outside [eps, 1 - eps] when eps is given, NaN outside
 * [0, 1] otherwise; differentiable again. */
tn_tensor *ag_logit_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *eps);
/* mish(x) = x tanh(softplus(x)): g (tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)). */
tn_tensor *ag_mish_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x);
/* binary_cross_entropy with respect to the target: g w (log(1 - x) - log(x)), reduced. */
tn_tensor *ag_bce_target_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, tn_tensor *target, const tn_value *weight,
                                  int64_t reduction);
/* div(self, other, rounding_mode): g / other without rounding, zeros with it. */
tn_tensor *ag_div_tensor_self_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *other, tn_dtype self_dtype,
                                       const tn_value *rounding_mode);
tn_tensor *ag_div_tensor_other_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *self, tn_tensor *other,
                                        const tn_value *rounding_mode);
/* sgn of a real tensor: the derivative is zero. */
tn_tensor *ag_sgn_backward(tn_grad_ctx *c, tn_tensor *x, tn_tensor *g, tn_tensor *result);
/* pow(Scalar base, Tensor exponent) with respect to the exponent: g result log(base); 0 where
 * base == 0 and exponent >= 0. */
tn_tensor *ag_pow_backward_exponent(tn_grad_ctx *c, tn_tensor *g, const tn_value *base, tn_tensor *exponent, tn_tensor *result);
/* clamp(self, Tensor? min, Tensor? max) with respect to self / to min and max. */
tn_tensor *ag_clamp_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *min, const tn_value *max);
void ag_clamp_backward_min_max(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *min, const tn_value *max,
                               const bool *mask, tn_tensor **out);


/* Reductions: dim is an `int[1]?` or `int?` value (NULL / None: all dims); correction a
 * Scalar? (None: 1). */
tn_tensor *ag_nansum_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *x, const tn_value *dim, bool keepdim);
tn_tensor *ag_var_mean_backward(tn_grad_ctx *c, tn_tensor *gvar, tn_tensor *gmean, tn_tensor *x, const tn_value *dim,
                                const tn_value *corr, bool keepdim);
tn_tensor *ag_std_mean_backward(tn_grad_ctx *c, tn_tensor *gstd, tn_tensor *gmean, tn_tensor *x, tn_tensor *std,
                                const tn_value *dim, const tn_value *corr, bool keepdim);
tn_tensor *ag_aminmax_backward(tn_grad_ctx *c, tn_tensor *x, const tn_value *dim, bool keepdim, tn_tensor *gmin,
                               tn_tensor *gmax, tn_tensor *min, tn_tensor *max);

/* Second derivatives: the gradients of upstream's backward operators (glu_backward,
 * huber/mse/smooth_l1/binary_cross_entropy loss backward, softplus/elu/gelu backward,
 * _softmax_backward_data, max_pool2d_with_indices_backward, embedding_dense_backward,
 * native_dropout_backward), derived from the first derivatives they compute. reduction:
 * 0 none, 1 mean, 2 sum. */
tn_tensor *ag_glu_double_backward_grad_output(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, int64_t dim);
tn_tensor *ag_glu_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, tn_tensor *x, int64_t dim);
tn_tensor *ag_huber_loss_double_backward_grad_output(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, tn_tensor *x,
                                                     tn_tensor *t, int64_t reduction, double delta);
tn_tensor *ag_huber_loss_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, tn_tensor *t, int64_t reduction,
                                         double delta);
tn_tensor *ag_mse_loss_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, int64_t reduction);
tn_tensor *ag_smooth_l1_loss_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, tn_tensor *t,
                                             int64_t reduction, double beta);
tn_tensor *ag_softplus_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, double beta, double threshold);
tn_tensor *ag_elu_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, double alpha, double scale,
                                  double input_scale, bool is_result, tn_tensor *y);
tn_tensor *ag_gelu_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, tn_tensor *x,
                                   const tn_value *approximate);
tn_tensor *ag_softmax_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, int64_t dim, tn_tensor *y);
tn_tensor *ag_log_sigmoid_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x);
tn_tensor *ag_max_pool_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *indices, int64_t dim);
/* formulas_linalg.c */
tn_tensor *ag_linalg_lu_solve_LU(tn_grad_ctx *c, tn_tensor *g, tn_tensor *LU, tn_tensor *pivots, tn_tensor *X,
                                 bool left, bool adjoint);
void ag_householder_product_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *Q, tn_tensor *V, tn_tensor *tau,
                                     tn_tensor **out);
tn_tensor *ag_embedding_dense_double_backward(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *indices, int64_t padding_idx);
tn_tensor *ag_native_dropout_double_backward(tn_grad_ctx *c, tn_tensor *ggi, tn_tensor *grad, tn_tensor *mask,
                                             double scale);
tn_tensor *ag_bce_double_backward_grad_output(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *x, tn_tensor *t,
                                              const tn_value *w, int64_t reduction);
tn_tensor *ag_bce_double_backward(tn_grad_ctx *c, tn_tensor *go, tn_tensor *grad, tn_tensor *x, tn_tensor *t,
                                  const tn_value *w, int64_t reduction);
tn_tensor *ag_bce_double_backward_target(tn_grad_ctx *c, tn_tensor *grad, tn_tensor *go, tn_tensor *x, tn_tensor *t,
                                         const tn_value *w, int64_t reduction);

/* native_group_norm with respect to input, weight and bias (mask), including the gradients
 * of its mean and rstd outputs; out[3]. */
void ag_group_norm_backward(tn_grad_ctx *c, tn_tensor *dy, tn_tensor *dmean, tn_tensor *drstd, tn_tensor *x,
                            tn_tensor *mean, tn_tensor *rstd, const tn_value *gamma, int64_t N, int64_t C,
                            int64_t HxW, int64_t G, double eps, const bool *mask, tn_tensor **out);

/* scatter_reduce.two with respect to self and src (out[2]); reduce "prod" refuses. */
void ag_scatter_reduce_backward(tn_grad_ctx *c, tn_tensor *g, tn_tensor *self, int64_t dim, tn_tensor *index,
                                tn_tensor *src, const tn_value *reduce, bool include_self, tn_tensor *result,
                                tn_tensor **out);

/* Second derivatives of native_layer_norm_backward / native_batch_norm_backward with respect
 * to (input, weight, grad_out), out[3], given the gradients of its three results. */
void ag_layer_norm_double_backward(tn_grad_ctx *c, tn_tensor *x, const tn_value *gamma, tn_tensor *ggx, tn_tensor *ggw,
                                   tn_tensor *ggb, tn_tensor *go, tn_tensor *mean, tn_tensor *rstd,
                                   tn_value normalized_shape, const bool *mask, tn_tensor **out);
void ag_batchnorm_double_backward(tn_grad_ctx *c, tn_tensor *x, const tn_value *gamma, tn_tensor *ggx, tn_tensor *ggw,
                                  tn_tensor *ggb, tn_tensor *go, const tn_value *running_mean,
                                  const tn_value *running_var, bool train, double eps, const tn_value *save_mean,
                                  const tn_value *save_invstd, const bool *mask, tn_tensor **out);

/* Second derivatives of convolution_backward with respect to (grad_output, input, weight),
 * out[3], through the convolution operators (the backward is bilinear). */
void ag_convolution_double_backward(tn_grad_ctx *c, tn_tensor *ggx, tn_tensor *ggw, tn_tensor *ggb, tn_tensor *go,
                                    tn_tensor *w, tn_tensor *x, const tn_value *stride, const tn_value *padding,
                                    const tn_value *dilation, bool transposed, const tn_value *output_padding,
                                    int64_t groups, const bool *mask, tn_tensor **out);

#endif
