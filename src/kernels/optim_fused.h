/* optim_fused.h — the CPU fused optimizer steps (Adam/AdamW, SGD, Adagrad) over one
 * parameter's contiguous elements, float32 / float64 / bfloat16 / float16, numerically as upstream's
 * fused CPU kernels.
 *
 * Upstream runs each step as a vector loop over the first vec_end = n - n % lanes
 * elements and a scalar loop over the rest (lanes = 32 bytes of the storage type:
 * measured on the 2.13.0 wheel, on an AVX-512 host too, its compiled loops split there),
 * and the two loops round differently: which multiply-adds are fused differs, and the
 * 16-bit vector loops of Adagrad round their constants to the storage type. Each kernel
 * here is one scalar loop that follows the vector arithmetic below `vec_end` and the
 * scalar arithmetic from there on, so no result depends on how elements are split across
 * threads. Constants derived from the step (bias corrections, step size) are computed in
 * double by the caller, as upstream does. Fused multiply-adds are explicit fma/fmaf calls;
 * nothing else may be contracted (ISO C: GCC does not contract).
 *
 * The kernels never see a tensor: pointers to contiguous elements, [begin, end) of a
 * parameter of n elements. No allocation; plain C11; no Python. */
#ifndef TN_OPTIM_FUSED_H
#define TN_OPTIM_FUSED_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

/* One Adam / AdamW step's constants. */
typedef struct tn_adam_consts {
    double lr, beta1, beta2, weight_decay, eps;
    double bias_correction1, bias_correction2_sqrt; /* 1 - beta1^step, sqrt(1 - beta2^step) */
    bool amsgrad, maximize, adamw;                  /* adamw: decoupled weight decay */
    const float *grad_scale;                        /* grads are divided by it (and stored) when set */
} tn_adam_consts;

/* One SGD step's constants. */
typedef struct tn_sgd_consts {
    double lr, weight_decay, momentum, dampening;
    bool nesterov, maximize, is_first_step;
    const float *grad_scale;
} tn_sgd_consts;

/* One Adagrad step's constants: clr = lr / (1 + (step - 1) * lr_decay). */
typedef struct tn_adagrad_consts {
    double clr, weight_decay, eps;
    bool maximize;
    const float *grad_scale;
} tn_adagrad_consts;

/* param, grad, exp_avg, exp_avg_sq and (amsgrad only) max_exp_avg_sq hold elements of one
 * dtype; all are updated in place over [begin, end). */
void tn_adam_f32(const tn_adam_consts *c, float *param, float *grad, float *exp_avg, float *exp_avg_sq,
                 float *max_exp_avg_sq, int64_t begin, int64_t end, int64_t vec_end);
void tn_adam_f64(const tn_adam_consts *c, double *param, double *grad, double *exp_avg, double *exp_avg_sq,
                 double *max_exp_avg_sq, int64_t begin, int64_t end, int64_t vec_end);
void tn_adam_bf16(const tn_adam_consts *c, tn_bfloat16 *param, tn_bfloat16 *grad, tn_bfloat16 *exp_avg,
                  tn_bfloat16 *exp_avg_sq, tn_bfloat16 *max_exp_avg_sq, int64_t begin, int64_t end, int64_t vec_end);
void tn_adam_f16(const tn_adam_consts *c, tn_half *param, tn_half *grad, tn_half *exp_avg, tn_half *exp_avg_sq,
                 tn_half *max_exp_avg_sq, int64_t begin, int64_t end, int64_t vec_end);

/* momentum_buf is NULL when momentum == 0. */
void tn_sgd_f32(const tn_sgd_consts *c, float *param, float *grad, float *momentum_buf, int64_t begin, int64_t end,
                int64_t vec_end);
void tn_sgd_f64(const tn_sgd_consts *c, double *param, double *grad, double *momentum_buf, int64_t begin,
                int64_t end, int64_t vec_end);
void tn_sgd_bf16(const tn_sgd_consts *c, tn_bfloat16 *param, tn_bfloat16 *grad, tn_bfloat16 *momentum_buf,
                 int64_t begin, int64_t end, int64_t vec_end);
void tn_sgd_f16(const tn_sgd_consts *c, tn_half *param, tn_half *grad, tn_half *momentum_buf, int64_t begin,
                int64_t end, int64_t vec_end);

void tn_adagrad_f32(const tn_adagrad_consts *c, float *param, float *grad, float *state_sum, int64_t begin,
                    int64_t end, int64_t vec_end);
void tn_adagrad_f64(const tn_adagrad_consts *c, double *param, double *grad, double *state_sum, int64_t begin,
                    int64_t end, int64_t vec_end);
void tn_adagrad_bf16(const tn_adagrad_consts *c, tn_bfloat16 *param, tn_bfloat16 *grad, tn_bfloat16 *state_sum,
                     int64_t begin, int64_t end, int64_t vec_end);
void tn_adagrad_f16(const tn_adagrad_consts *c, tn_half *param, tn_half *grad, tn_half *state_sum, int64_t begin,
                    int64_t end, int64_t vec_end);

/* Where upstream's fused loops switch from vector to scalar arithmetic: every
 * 32 bytes of `dtype` (measured; see above). */
int64_t tn_optim_upstream_lanes(tn_dtype dtype);

#endif
