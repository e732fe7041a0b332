/* optim.c — the CPU fused optimizer operators (_fused_adam_, _fused_adamw_, _fused_sgd_,
 * _fused_adagrad_, with float or Tensor lr): list checks and the found_inf / grad_scale
 * protocol as upstream's FusedAdam.cpp / FusedSGD.cpp / FusedAdagrad.cpp, then the kernels
 * of kernels/optim_fused.h per parameter, its elements split across the thread pool in
 * 64-byte units as upstream splits them (no result depends on the split). */
#include <math.h>
#include <string.h>

#include "core/scalar.h"
#include "core/threadpool.h"
#include "kernels/cast.h"
#include "kernels/optim_fused.h"
#include "ops/dispatch.h"

typedef enum optim_kind { OPTIM_ADAM, OPTIM_SGD, OPTIM_ADAGRAD } optim_kind;

/* One parameter's step: element pointers (param, grad, then the optimizer's state) and
 * the constants. */
typedef struct optim_job {
    optim_kind kind;
    tn_dtype dtype;
    void *p[5];
    int64_t n, unit, vec_end;
    tn_adam_consts adam;
    tn_sgd_consts sgd;
    tn_adagrad_consts adagrad;
} optim_job;

static void job_range(void *ctx, int64_t ub, int64_t ue) {
    const optim_job *j = ctx;
    int64_t b = ub * j->unit, e = ue * j->unit < j->n ? ue * j->unit : j->n;
    void *const *p = j->p;
    switch (j->kind) {
    case OPTIM_ADAM:
        switch (j->dtype) {
        case TN_DTYPE_FLOAT32: tn_adam_f32(&j->adam, p[0], p[1], p[2], p[3], p[4], b, e, j->vec_end); break;
        case TN_DTYPE_FLOAT64: tn_adam_f64(&j->adam, p[0], p[1], p[2], p[3], p[4], b, e, j->vec_end); break;
        case TN_DTYPE_BFLOAT16: tn_adam_bf16(&j->adam, p[0], p[1], p[2], p[3], p[4], b, e, j->vec_end); break;
        default: tn_adam_f16(&j->adam, p[0], p[1], p[2], p[3], p[4], b, e, j->vec_end); break;
        }
        break;
    case OPTIM_SGD:
        switch (j->dtype) {
        case TN_DTYPE_FLOAT32: tn_sgd_f32(&j->sgd, p[0], p[1], p[2], b, e, j->vec_end); break;
        case TN_DTYPE_FLOAT64: tn_sgd_f64(&j->sgd, p[0], p[1], p[2], b, e, j->vec_end); break;
        case TN_DTYPE_BFLOAT16: tn_sgd_bf16(&j->sgd, p[0], p[1], p[2], b, e, j->vec_end); break;
        default: tn_sgd_f16(&j->sgd, p[0], p[1], p[2], b, e, j->vec_end); break;
        }
        break;
    case OPTIM_ADAGRAD:
        switch (j->dtype) {
        case TN_DTYPE_FLOAT32: tn_adagrad_f32(&j->adagrad, p[0], p[1], p[2], b, e, j->vec_end); break;
        case TN_DTYPE_FLOAT64: tn_adagrad_f64(&j->adagrad, p[0], p[1], p[2], b, e, j->vec_end); break;
        case TN_DTYPE_BFLOAT16: tn_adagrad_bf16(&j->adagrad, p[0], p[1], p[2], b, e, j->vec_end); break;
        default: tn_adagrad_f16(&j->adagrad, p[0], p[1], p[2], b, e, j->vec_end); break;
        }
        break;
    }
}

/* Runs j over its n elements; small parameters stay on the calling thread. */
static void job_run(optim_job *j) {
    j->unit = 64 / tn_dtype_itemsize(j->dtype);
    int64_t lanes = tn_optim_upstream_lanes(j->dtype);
    j->vec_end = j->n - j->n % lanes;
    int64_t units = (j->n + j->unit - 1) / j->unit;
    tn_parallel_for(units, 16384 / j->unit, job_range, j);
}

static double num(const tn_value *v) {
    return tn_scalar_as_double(v);
}

static tn_status expect(bool ok, const char *what) {
    return ok ? TN_OK : tn_error(TN_ERR_RUNTIME, "Expected %s to be true, but got false.", what);
}

/* A list argument's tensors, with its length checked against n (n < 0: any length). */
static tn_status list_arg(const tn_value *v, int64_t n, const char *cond, tn_tensor *const **out, int64_t *len) {
    if (v->tag != TN_V_TENSORLIST) return tn_error(TN_ERR_TYPE, "expected a list of tensors");
    if (n >= 0) TN_TRY(expect(v->u.tlist.n == n, cond));
    *out = v->u.tlist.data;
    if (len) *len = v->u.tlist.n;
    return TN_OK;
}

/* The float data of an optional grad_scale / found_inf tensor (upstream reads
 * data_ptr<float>()), or NULL when absent. */
static tn_status float_ptr(const tn_value *v, const float **out) {
    *out = NULL;
    if (v->tag != TN_V_TENSOR || !v->u.t) return TN_OK;
    const tn_tensor *t = v->u.t;
    if (t->dtype != TN_DTYPE_FLOAT32)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type Float but found %s", tn_dtype_infos[t->dtype].c10_name);
    if (tn_tensor_is_meta(t) || tn_tensor_numel(t) < 1)
        return tn_error(TN_ERR_RUNTIME, "grad_scale and found_inf must be CPU tensors holding one float");
    *out = (const float *)tn_tensor_data(t);
    return TN_OK;
}

/* lr as a float argument or a one-element CPU tensor (the .tensor_lr overloads). */
static tn_status lr_arg(const tn_value *v, double *lr) {
    if (v->tag != TN_V_TENSOR) {
        *lr = num(v);
        return TN_OK;
    }
    const tn_tensor *t = v->u.t;
    if (tn_tensor_is_meta(t)) return tn_error(TN_ERR_RUNTIME, "lr must be on cpu, got meta");
    if (tn_tensor_numel(t) != 1)
        return tn_error(TN_ERR_RUNTIME, "a Tensor with %lld elements cannot be converted to Scalar",
                        (long long)tn_tensor_numel(t));
    *lr = tn_cast_load_double(tn_tensor_data(t), t->dtype);
    return TN_OK;
}

/* step = state_step.item<float>() */
static tn_status step_of(const tn_tensor *t, double *step) {
    if (tn_tensor_is_meta(t) || tn_tensor_numel(t) != 1)
        return tn_error(TN_ERR_RUNTIME, "a Tensor with %lld elements cannot be converted to Scalar",
                        (long long)tn_tensor_numel(t));
    *step = (float)tn_cast_load_double(tn_tensor_data(t), t->dtype);
    return TN_OK;
}

/* Checks the i-th tensors of one step: a floating dtype the kernels have, each tensor of
 * param's dtype and size and contiguous, then fills j->p. */
static tn_status job_tensors(optim_job *j, const char *kname, tn_tensor *const *ts, int nt) {
    tn_tensor *param = ts[0];
    tn_dtype d = param->dtype;
    if (d != TN_DTYPE_FLOAT32 && d != TN_DTYPE_FLOAT64 && d != TN_DTYPE_BFLOAT16 && d != TN_DTYPE_FLOAT16)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kname, tn_dtype_infos[d].c10_name);
    int64_t n = tn_tensor_numel(param);
    for (int k = 0; k < nt; k++) {
        tn_tensor *t = ts[k];
        if (!t) return tn_error(TN_ERR_RUNTIME, "%s: a tensor of the step is None", kname);
        if (t->dtype != d)
            return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_dtype_infos[d].c10_name,
                            tn_dtype_infos[t->dtype].c10_name);
        if (tn_tensor_numel(t) != n)
            return tn_error(TN_ERR_RUNTIME, "%s: the tensors of one parameter must have the same number of elements, got %lld and %lld",
                            kname, (long long)n, (long long)tn_tensor_numel(t));
        if (tn_tensor_is_meta(t))
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::%s on meta tensors is not implemented by torchnative", kname);
        if (!tn_tensor_is_contiguous(t))
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "%s on non-contiguous tensors is not implemented by torchnative", kname);
        j->p[k] = tn_tensor_data(t);
    }
    for (int k = nt; k < 5; k++) j->p[k] = NULL;
    j->dtype = d;
    j->n = n;
    return TN_OK;
}

static void bump(tn_tensor *const *ts, int nt) {
    for (int k = 0; k < nt; k++)
        if (ts[k]) atomic_fetch_add(&ts[k]->storage->version, 1);
}

/* _fused_adam(w)_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr,
 * beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None) */
static tn_status fused_adam(const tn_value *a, bool adamw) {
    optim_job j = {.kind = OPTIM_ADAM};
    TN_TRY(lr_arg(&a[6], &j.adam.lr)); /* .tensor_lr: lr.item() before anything else, as upstream */
    const float *scale, *found_inf;
    TN_TRY(float_ptr(&a[13], &scale));
    TN_TRY(float_ptr(&a[14], &found_inf));
    if (found_inf && *found_inf == 1.0f) return TN_OK;
    tn_tensor *const *params = NULL, *const *grads = NULL, *const *m = NULL, *const *v = NULL, *const *vmax = NULL,
                     *const *steps = NULL;
    int64_t n = 0;
    bool amsgrad = a[11].u.b;
    TN_TRY(list_arg(&a[0], -1, NULL, &params, &n));
    TN_TRY(list_arg(&a[1], n, "grads.size() == n_tensors", &grads, NULL));
    TN_TRY(list_arg(&a[2], n, "exp_avgs.size() == n_tensors", &m, NULL));
    TN_TRY(list_arg(&a[3], n, "exp_avg_sqs.size() == n_tensors", &v, NULL));
    TN_TRY(list_arg(&a[4], amsgrad ? n : 0, amsgrad ? "max_exp_avg_sqs.size() == n_tensors" : "max_exp_avg_sqs.size() == 0",
                    &vmax, NULL));
    TN_TRY(list_arg(&a[5], n, "state_steps.size() == n_tensors", &steps, NULL));
    j.adam.beta1 = num(&a[7]);
    j.adam.beta2 = num(&a[8]);
    j.adam.weight_decay = num(&a[9]);
    j.adam.eps = num(&a[10]);
    j.adam.amsgrad = amsgrad;
    j.adam.maximize = a[12].u.b;
    j.adam.adamw = adamw;
    j.adam.grad_scale = scale;
    for (int64_t i = 0; i < n; i++) {
        tn_tensor *ts[5] = {params[i], grads[i], m[i], v[i], amsgrad ? vmax[i] : NULL};
        TN_TRY(job_tensors(&j, "fused_adam_kernel", ts, amsgrad ? 5 : 4));
        double step;
        TN_TRY(step_of(steps[i], &step));
        /* in double, as upstream's "align with non-fused adam" */
        j.adam.bias_correction1 = 1 - pow(j.adam.beta1, step);
        j.adam.bias_correction2_sqrt = sqrt(1 - pow(j.adam.beta2, step));
        job_run(&j);
        bump(ts, 5);
    }
    return TN_OK;
}

/* aten::_fused_adam_ / _fused_adam_.tensor_lr */
tn_status tn_op__fused_adam_(const tn_value *args, tn_value *rets) { return fused_adam(args, false); }
/* aten::_fused_adamw_ / _fused_adamw_.tensor_lr */
tn_status tn_op__fused_adamw_(const tn_value *args, tn_value *rets) { return fused_adam(args, true); }

/* aten::_fused_sgd_(self, grads, momentum_buffer_list, *, weight_decay, momentum, lr,
 * dampening, nesterov, maximize, is_first_step, grad_scale=None, found_inf=None), and its
 * .tensor_lr overload */
tn_status tn_op__fused_sgd_(const tn_value *a, tn_value *rets) {
    optim_job j = {.kind = OPTIM_SGD};
    TN_TRY(lr_arg(&a[5], &j.sgd.lr)); /* .tensor_lr: lr.item() first */
    const float *scale, *found_inf;
    TN_TRY(float_ptr(&a[10], &scale));
    TN_TRY(float_ptr(&a[11], &found_inf));
    if (found_inf && *found_inf == 1.0f) return TN_OK;
    tn_tensor *const *params = NULL, *const *grads = NULL, *const *bufs = NULL;
    int64_t n = 0;
    j.sgd.weight_decay = num(&a[3]);
    j.sgd.momentum = num(&a[4]);
    j.sgd.dampening = num(&a[6]);
    j.sgd.nesterov = a[7].u.b;
    j.sgd.maximize = a[8].u.b;
    j.sgd.is_first_step = a[9].u.b;
    j.sgd.grad_scale = scale;
    bool no_buf = j.sgd.momentum == 0;
    TN_TRY(list_arg(&a[0], -1, NULL, &params, &n));
    TN_TRY(list_arg(&a[1], n, "grads.size() == n_tensors", &grads, NULL));
    TN_TRY(list_arg(&a[2], no_buf ? 0 : n,
                    no_buf ? "momentum_buffer_list.size() == 0" : "momentum_buffer_list.size() == n_tensors", &bufs,
                    NULL));
    for (int64_t i = 0; i < n; i++) {
        tn_tensor *ts[3] = {params[i], grads[i], no_buf ? NULL : bufs[i]};
        TN_TRY(job_tensors(&j, "fused_sgd_kernel", ts, no_buf ? 2 : 3));
        job_run(&j);
        bump(ts, 3);
    }
    return TN_OK;
}

/* aten::_fused_adagrad_(self, grads, state_sums, state_steps, *, lr, lr_decay,
 * weight_decay, eps, maximize, grad_scale=None, found_inf=None), and .tensor_lr */
tn_status tn_op__fused_adagrad_(const tn_value *a, tn_value *rets) {
    double lr;
    TN_TRY(lr_arg(&a[4], &lr)); /* .tensor_lr: lr.item() first */
    const float *scale, *found_inf;
    TN_TRY(float_ptr(&a[9], &scale));
    TN_TRY(float_ptr(&a[10], &found_inf));
    if (found_inf && *found_inf == 1.0f) return TN_OK;
    tn_tensor *const *params = NULL, *const *grads = NULL, *const *sums = NULL, *const *steps = NULL;
    int64_t n = 0;
    TN_TRY(list_arg(&a[0], -1, NULL, &params, &n));
    TN_TRY(list_arg(&a[1], n, "grads.size() == n_tensors", &grads, NULL));
    TN_TRY(list_arg(&a[2], n, "state_sums.size() == n_tensors", &sums, NULL));
    TN_TRY(list_arg(&a[3], n, "state_steps.size() == n_tensors", &steps, NULL));
    optim_job j = {.kind = OPTIM_ADAGRAD};
    double lr_decay = num(&a[5]);
    j.adagrad.weight_decay = num(&a[6]);
    j.adagrad.eps = num(&a[7]);
    j.adagrad.maximize = a[8].u.b;
    j.adagrad.grad_scale = scale;
    for (int64_t i = 0; i < n; i++) {
        tn_tensor *ts[3] = {params[i], grads[i], sums[i]};
        TN_TRY(job_tensors(&j, "fused_adagrad_kernel", ts, 3));
        double step;
        TN_TRY(step_of(steps[i], &step));
        j.adagrad.clr = lr / (1.0 + (step - 1.0) * lr_decay);
        job_run(&j);
        bump(ts, 3);
    }
    return TN_OK;
}
