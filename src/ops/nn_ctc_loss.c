/* nn_ctc_loss.c — connectionist temporal classification loss on CPU: aten::_ctc_loss (the
 * log-space alpha recursion of Graves et al. 2006, eqs. 6-8, per batch element: the negative
 * log likelihood and the alphas) and aten::ctc_loss, which composes it with zero_infinity
 * and the none / mean / sum reductions as upstream does. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "ops/composite_internal.h"
#include "ops/nn_internal.h"

/* Lengths given as int[] or as an integral tensor, read into a malloc'd int64 array. */
static tn_status read_lengths(const tn_value *v, const char *what, int64_t **out, int64_t *n) {
    if (v->tag == TN_V_INTLIST) {
        *n = v->u.ilist.n;
        *out = malloc(sizeof **out * (size_t)(*n ? *n : 1));
        if (!*out) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        if (*n > 0) memcpy(*out, v->u.ilist.data, sizeof **out * (size_t)*n);
        return TN_OK;
    }
    const tn_tensor *t = v->u.t;
    if (!tn_dtype_is_integral(t->dtype, false)) return tn_error(TN_ERR_RUNTIME, "%s must be integral", what);
    *n = tn_tensor_numel(t);
    int64_t nbytes; /* (an expanded view past int64 bytes: upstream's contiguous copy fails) */
    TN_TRY(tn_storage_nbytes_for(t->ndim, t->sizes, NULL, (int)sizeof **out, &nbytes));
    *out = malloc(sizeof **out * (size_t)(*n ? *n : 1));
    if (!*out) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t i = 0; i < *n; i++) {
        int64_t off = t->offset, rest = i;
        for (int d = t->ndim - 1; d >= 0; d--) {
            off += (rest % t->sizes[d]) * t->strides[d];
            rest /= t->sizes[d];
        }
        const void *p = t->storage->data;
        switch (t->dtype) {
        case TN_DTYPE_UINT8: (*out)[i] = ((const uint8_t *)p)[off]; break;
        case TN_DTYPE_INT8: (*out)[i] = ((const int8_t *)p)[off]; break;
        case TN_DTYPE_INT16: (*out)[i] = ((const int16_t *)p)[off]; break;
        case TN_DTYPE_INT32: (*out)[i] = ((const int32_t *)p)[off]; break;
        default: (*out)[i] = ((const int64_t *)p)[off]; break;
        }
    }
    return TN_OK;
}

/* Where each batch element's target sequence starts in targets' storage, its stride, and
 * the longest target: upstream's checks of the two target layouts (concatenated 1-D, or
 * batch x max_target_length). */
static tn_status target_layout(const tn_tensor *targets, const int64_t *tl, int64_t batch, int64_t *tg_off, int64_t *tg_stride,
                               int64_t *max_tl) {
    *max_tl = 0;
    int64_t pos = 0;
    for (int64_t b = 0; b < batch; b++) {
        if (tl[b] < 0)
            return tn_error(TN_ERR_RUNTIME, "Expected target_lengths to have value at least 0, but got value %lld (while checking arguments for ctc_loss_cpu)",
                            (long long)tl[b]);
        if (tl[b] > *max_tl) *max_tl = tl[b];
    }
    if (targets->ndim == 1) {
        for (int64_t b = 0; b < batch; b++) {
            tg_off[b] = targets->offset + pos * targets->strides[0];
            pos += tl[b];
        }
        *tg_stride = targets->strides[0];
        if (targets->sizes[0] != pos)
            return tn_error(TN_ERR_RUNTIME, "Expected tensor to have size %lld at dimension 0, but got size %lld for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                            (long long)pos, (long long)targets->sizes[0]);
    } else {
        for (int64_t b = 0; b < batch; b++) tg_off[b] = targets->offset + b * targets->strides[0];
        *tg_stride = targets->strides[1];
        if (targets->sizes[0] != batch)
            return tn_error(TN_ERR_RUNTIME, "Expected tensor to have size %lld at dimension 0, but got size %lld for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                            (long long)batch, (long long)targets->sizes[0]);
        if (targets->sizes[1] < *max_tl)
            return tn_error(TN_ERR_RUNTIME, "Expected tensor to have size at least %lld at dimension 1, but got size %lld for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                            (long long)*max_tl, (long long)targets->sizes[1]);
    }
    return TN_OK;
}

typedef struct ctc_problem {
    const tn_tensor *lp, *targets;
    const int64_t *il, *tl, *tg_off;
    int64_t tg_stride, blank, batch, alpha_t, alpha_s; /* alpha is batch x alpha_t x alpha_s */
} ctc_problem;

static int64_t target_at(const ctc_problem *p, int64_t b, int64_t k) {
    int64_t off = p->tg_off[b] + k * p->tg_stride;
    return p->targets->dtype == TN_DTYPE_INT64 ? ((const int64_t *)p->targets->storage->data)[off]
                                               : ((const int32_t *)p->targets->storage->data)[off];
}

/* The extended label sequence l' of eq. 6: blanks between (and around) the targets. */
static int64_t target_prime(const ctc_problem *p, int64_t b, int64_t s) { return s % 2 == 0 ? p->blank : target_at(p, b, s / 2); }

/* Forward recursion written once per type (EXP / LOG of that type, as upstream's std::exp /
 * std::log on scalar_t): alpha rows past an input's length and states past its target stay
 * -inf; nll[b] = -log(alpha_{T-1}(S') + alpha_{T-1}(S'-1)) (eq. 8). */
#define CTC_FORWARD(T, NAME, EXP, LOG)                                                              \
    static void NAME(const ctc_problem *p, T *nll, T *alpha, int64_t b0, int64_t b1) {            \
        const tn_tensor *lp = p->lp;                                                              \
        const T *lpd = (const T *)lp->storage->data;                                              \
        const T neginf = -(T)INFINITY;                                                            \
        for (int64_t b = b0; b < b1; b++) {                                                       \
            int64_t in_len = p->il[b], tg_len = p->tl[b], ns = 2 * tg_len + 1;                    \
            T *la = alpha + b * p->alpha_t * p->alpha_s;                                          \
            for (int64_t i = 0; i < p->alpha_t * p->alpha_s; i++) la[i] = neginf;                \
            const T *lpb = lpd + lp->offset + b * lp->strides[1];                                 \
            if (in_len == 0) {                                                                    \
                nll[b] = tg_len == 0 ? (T)0 : -neginf;                                            \
                continue;                                                                         \
            }                                                                                     \
            la[0] = lpb[p->blank * lp->strides[2]];                                               \
            if (tg_len > 0) la[1] = lpb[target_prime(p, b, 1) * lp->strides[2]];                  \
            for (int64_t t = 1; t < in_len; t++) {                                                \
                const T *prev = la + (t - 1) * p->alpha_s;                                        \
                T *cur = la + t * p->alpha_s;                                                     \
                const T *lpt = lpb + t * lp->strides[0];                                          \
                for (int64_t s = 0; s < ns; s++) {                                                \
                    int64_t ct = target_prime(p, b, s);                                           \
                    T la1 = prev[s], lamax = la1, la2 = neginf, la3 = neginf;                     \
                    if (s > 0) {                                                                  \
                        la2 = prev[s - 1];                                                        \
                        if (la2 > lamax) lamax = la2;                                             \
                    }                                                                             \
                    if (s > 1 && target_prime(p, b, s - 2) != ct) {                               \
                        la3 = prev[s - 2];                                                        \
                        if (la3 > lamax) lamax = la3;                                             \
                    }                                                                             \
                    if (lamax == neginf) lamax = 0;                                               \
                    cur[s] = LOG(EXP(la1 - lamax) + EXP(la2 - lamax) + EXP(la3 - lamax)) + lamax + lpt[ct * lp->strides[2]]; \
                }                                                                                 \
            }                                                                                     \
            const T *last = la + (in_len - 1) * p->alpha_s;                                       \
            if (tg_len == 0) {                                                                    \
                nll[b] = -last[0];                                                                \
            } else {                                                                              \
                T l1 = last[2 * tg_len], l2 = last[2 * tg_len - 1], m = l1 > l2 ? l1 : l2;        \
                if (m == neginf) m = 0;                                                           \
                nll[b] = -(LOG(EXP(l1 - m) + EXP(l2 - m)) + m);                                   \
            }                                                                                     \
        }                                                                                         \
    }
CTC_FORWARD(float, ctc_forward_f32, expf, logf)
CTC_FORWARD(double, ctc_forward_f64, exp, log)

/* The batch elements are independent: both recursions run over them on the pool, as
 * upstream's parallel_for over the batch. */
typedef struct ctc_job {
    const ctc_problem *p;
    bool f32;
    void *nll, *alpha;
} ctc_job;
static void ctc_forward_chunk(void *ctx, int64_t b0, int64_t b1) {
    const ctc_job *j = ctx;
    if (j->f32) ctc_forward_f32(j->p, j->nll, j->alpha, b0, b1);
    else ctc_forward_f64(j->p, j->nll, j->alpha, b0, b1);
}

/* aten::_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths,
 *                 int blank=0, bool zero_infinity=False) -> (Tensor, Tensor); and its .Tensor
 * overload (lengths as tensors). Results: neg_log_likelihood (batch), log_alpha
 * (batch, input_len, 2 * max_target_len + 1). */
tn_status tn_op__ctc_loss(const tn_value *args, tn_value *rets) {
    tn_tensor *lp = args[0].u.t, *targets = args[1].u.t;
    int64_t blank = args[4].u.i;
    if (lp->dtype != TN_DTYPE_FLOAT32 && lp->dtype != TN_DTYPE_FLOAT64)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"ctc_loss_cpu\" not implemented for '%s'", tn_dtype_infos[lp->dtype].c10_name);
    if (targets->dtype != TN_DTYPE_INT64 && targets->dtype != TN_DTYPE_INT32)
        return tn_error(TN_ERR_RUNTIME, "Expected tensor for argument #2 'targets' to have scalar type Int; but got CPU%sType instead (while checking arguments for ctc_loss_cpu)",
                        tn_dtype_infos[targets->dtype].c10_name);
    if (lp->ndim != 3)
        return tn_error(TN_ERR_RUNTIME, "Expected 3-dimensional tensor, but got %d-dimensional tensor for argument #1 'log_probs' (while checking arguments for ctc_loss_cpu)",
                        lp->ndim);
    if (targets->ndim < 1 || targets->ndim > 2)
        return tn_error(TN_ERR_RUNTIME, "Expected 1 to 2 dimensions, but got %d-dimensional tensor for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                        targets->ndim);
    int64_t batch = lp->sizes[1], labels = lp->sizes[2], max_in = lp->sizes[0];
    if (!(blank >= 0 && blank < labels)) return tn_error(TN_ERR_RUNTIME, "blank must be in label range");
    int64_t *il = NULL, *tl = NULL, *tg_off = NULL, nil, ntl, tg_stride = 0, max_tl = 0;
    tn_tensor *nll = NULL, *alpha = NULL;
    tn_status st = read_lengths(&args[2], "input_lengths", &il, &nil);
    if (st == TN_OK) st = read_lengths(&args[3], "target_lengths", &tl, &ntl);
    if (st == TN_OK && nil != batch) st = tn_error(TN_ERR_RUNTIME, "input_lengths must be of size batch_size");
    if (st == TN_OK && ntl != batch) st = tn_error(TN_ERR_RUNTIME, "target_lengths must be of size batch_size");
    if (st == TN_OK && !(tg_off = malloc(sizeof *tg_off * (size_t)(batch + 1)))) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
    if (st == TN_OK) st = target_layout(targets, tl, batch, tg_off, &tg_stride, &max_tl);
    for (int64_t b = 0; st == TN_OK && b < batch; b++) {
        if (il[b] < 0)
            st = tn_error(TN_ERR_RUNTIME, "Expected input_lengths to have value at least 0, but got value %lld (while checking arguments for ctc_loss_cpu)", (long long)il[b]);
        else if (il[b] > max_in)
            st = tn_error(TN_ERR_RUNTIME, "Expected input_lengths to have value at most %lld, but got value %lld (while checking arguments for ctc_loss_cpu)",
                          (long long)max_in, (long long)il[b]);
    }
    ctc_problem p = {lp, targets, il, tl, tg_off, tg_stride, blank, batch, max_in, 2 * max_tl + 1};
    /* a label outside [0, labels) would index past log_probs: refused rather than read */
    for (int64_t b = 0; st == TN_OK && b < batch && !tn_tensor_is_meta(targets); b++)
        for (int64_t k = 0; k < tl[b]; k++) {
            int64_t v = target_at(&p, b, k);
            if (v < 0 || v >= labels) {
                st = tn_error(TN_ERR_INDEX, "ctc_loss: target %lld is out of bounds for %lld labels", (long long)v, (long long)labels);
                break;
            }
        }
    int64_t asz[3] = {batch, max_in, 2 * max_tl + 1};
    if (st == TN_OK) st = tn_nn_empty(1, &batch, lp->dtype, lp, &nll);
    if (st == TN_OK) st = tn_nn_empty(3, asz, lp->dtype, lp, &alpha);
    if (st == TN_OK && !tn_tensor_is_meta(lp)) {
        ctc_job j = {&p, lp->dtype == TN_DTYPE_FLOAT32, tn_tensor_data(nll), tn_tensor_data(alpha)};
        tn_parallel_for(batch, 1, ctc_forward_chunk, &j);
    }
    free(il);
    free(tl);
    free(tg_off);
    if (st != TN_OK) {
        if (nll) tn_tensor_release(nll);
        if (alpha) tn_tensor_release(alpha);
        return st;
    }
    rets[0] = tn_value_tensor(nll);
    rets[1] = tn_value_tensor(alpha);
    return TN_OK;
}

/* Backward recursion written once per type: beta (eqs. 10-11) from each input's last step,
 * the log-sum over states of alpha + beta per (t, label) (eq. 16), then
 * grad[t][b][c] = (exp(lp) - exp(collected + nll - lp)) * grad_out[b]; rows past an input's
 * length are zero, and so is a whole batch element whose loss is infinite under
 * zero_infinity. grad is (T, B, C) contiguous; beta scratch is batch x alpha_t x alpha_s. */
#define CTC_BACKWARD(T, NAME, EXP, LOG)                                                             \
    static void NAME(const ctc_problem *p, const T *gout, int64_t gout_stride, const T *nll, int64_t nll_stride, \
                     const tn_tensor *alpha_t, bool zero_inf, T *grad, T *beta, int64_t b0, int64_t b1) { \
        const tn_tensor *lp = p->lp;                                                              \
        const T *lpd = (const T *)lp->storage->data, *ad = (const T *)alpha_t->storage->data;     \
        const T neginf = -(T)INFINITY;                                                            \
        int64_t maxT = lp->sizes[0], B = lp->sizes[1], C = lp->sizes[2];                          \
        for (int64_t b = b0; b < b1; b++) {                                                       \
            int64_t in_len = p->il[b], tg_len = p->tl[b];                                         \
            for (int64_t t = 0; t < maxT; t++)                                                    \
                for (int64_t k = 0; k < C; k++) grad[(t * B + b) * C + k] = neginf;              \
            T gr = gout[b * gout_stride], nl = nll[b * nll_stride];                               \
            const T *lpb = lpd + lp->offset + b * lp->strides[1];                                 \
            T *lb = beta + b * p->alpha_t * p->alpha_s;                                           \
            if (zero_inf && nl == (T)INFINITY) {                                                  \
                for (int64_t t = 0; t < maxT; t++)                                                \
                    for (int64_t k = 0; k < C; k++) grad[(t * B + b) * C + k] = 0;               \
                continue;                                                                         \
            }                                                                                     \
            /* alpha[b][t][s] at its strides */                                                   \
            const T *la = ad + alpha_t->offset + b * alpha_t->strides[0];                         \
            int64_t as_t = alpha_t->strides[1], as_s = alpha_t->strides[2];                       \
            if (in_len > 0) {                                                                     \
                int64_t t = in_len - 1;                                                           \
                for (int64_t s = 0; s < p->alpha_s; s++) lb[t * p->alpha_s + s] = neginf;         \
                lb[t * p->alpha_s + 2 * tg_len] = lpb[t * lp->strides[0] + p->blank * lp->strides[2]]; \
                grad[(t * B + b) * C + p->blank] = la[t * as_t + 2 * tg_len * as_s] + lb[t * p->alpha_s + 2 * tg_len]; \
                if (tg_len > 0) {                                                                 \
                    int64_t ct = target_prime(p, b, 2 * tg_len - 1);                              \
                    lb[t * p->alpha_s + 2 * tg_len - 1] = lpb[t * lp->strides[0] + ct * lp->strides[2]]; \
                    grad[(t * B + b) * C + ct] = la[t * as_t + (2 * tg_len - 1) * as_s] + lb[t * p->alpha_s + 2 * tg_len - 1]; \
                }                                                                                 \
            }                                                                                     \
            for (int64_t t = in_len - 2; t >= 0; t--) {                                           \
                const T *next = lb + (t + 1) * p->alpha_s;                                        \
                T *cur = lb + t * p->alpha_s;                                                     \
                for (int64_t s = 2 * tg_len; s >= 0; s--) {                                       \
                    int64_t ct = target_prime(p, b, s);                                           \
                    T lb1 = next[s], lbmax = lb1, lb2 = neginf, lb3 = neginf;                     \
                    if (s < 2 * tg_len) {                                                         \
                        lb2 = next[s + 1];                                                        \
                        if (lb2 > lbmax) lbmax = lb2;                                             \
                    }                                                                             \
                    if (s < 2 * tg_len - 1 && target_prime(p, b, s + 2) != ct) {                  \
                        lb3 = next[s + 2];                                                        \
                        if (lb3 > lbmax) lbmax = lb3;                                             \
                    }                                                                             \
                    if (lbmax == neginf) lbmax = 0;                                               \
                    cur[s] = LOG(EXP(lb1 - lbmax) + EXP(lb2 - lbmax) + EXP(lb3 - lbmax)) + lbmax + \
                             lpb[t * lp->strides[0] + ct * lp->strides[2]];                       \
                    T lab = la[t * as_t + s * as_s] + cur[s];                                     \
                    T *lc = &grad[(t * B + b) * C + ct];                                          \
                    if (*lc == neginf) {                                                          \
                        *lc = lab;                                                                \
                    } else {                                                                      \
                        T mx = *lc > lab ? *lc : lab;                                             \
                        *lc = LOG(EXP(*lc - mx) + EXP(lab - mx)) + mx;                            \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
            for (int64_t t = 0; t < in_len; t++)                                                  \
                for (int64_t k = 0; k < C; k++) {                                                 \
                    T *r = &grad[(t * B + b) * C + k];                                            \
                    T l = lpb[t * lp->strides[0] + k * lp->strides[2]];                           \
                    *r = (EXP(l) - EXP(*r + nl - l)) * gr;                                        \
                }                                                                                 \
            for (int64_t t = in_len; t < maxT; t++)                                               \
                for (int64_t k = 0; k < C; k++) grad[(t * B + b) * C + k] = 0;                    \
        }                                                                                         \
    }
CTC_BACKWARD(float, ctc_backward_f32, expf, logf)
CTC_BACKWARD(double, ctc_backward_f64, exp, log)

typedef struct ctc_bwd_job {
    const ctc_problem *p;
    bool f32;
    const void *gout;
    int64_t gout_stride;
    const void *nll;
    int64_t nll_stride;
    const tn_tensor *alpha;
    bool zero_inf;
    void *grad, *beta;
} ctc_bwd_job;
static void ctc_backward_chunk(void *ctx, int64_t b0, int64_t b1) {
    const ctc_bwd_job *j = ctx;
    if (j->f32) ctc_backward_f32(j->p, j->gout, j->gout_stride, j->nll, j->nll_stride, j->alpha, j->zero_inf, j->grad, j->beta, b0, b1);
    else ctc_backward_f64(j->p, j->gout, j->gout_stride, j->nll, j->nll_stride, j->alpha, j->zero_inf, j->grad, j->beta, b0, b1);
}

/* aten::_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths,
 *   int[] target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank,
 *   bool zero_infinity=False) -> Tensor; and its .Tensor overload. The forward's checks are
 * assumed made (as upstream assumes them). */
tn_status tn_op__ctc_loss_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *gout = args[0].u.t, *lp = args[1].u.t, *targets = args[2].u.t, *nll = args[5].u.t, *alpha = args[6].u.t;
    int64_t blank = args[7].u.i;
    bool zero_inf = args[8].u.b;
    if (lp->dtype != TN_DTYPE_FLOAT32 && lp->dtype != TN_DTYPE_FLOAT64)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"ctc_loss_backward_cpu\" not implemented for '%s'", tn_dtype_infos[lp->dtype].c10_name);
    if (lp->ndim != 3 || alpha->ndim != 3 || gout->ndim != 1 || nll->ndim != 1 || gout->dtype != lp->dtype || nll->dtype != lp->dtype ||
        alpha->dtype != lp->dtype || (targets->dtype != TN_DTYPE_INT64 && targets->dtype != TN_DTYPE_INT32) || targets->ndim < 1 || targets->ndim > 2)
        return tn_error(TN_ERR_RUNTIME, "ctc_loss_backward_cpu: arguments do not match a ctc_loss forward");
    int64_t batch = lp->sizes[1], *il = NULL, *tl = NULL, *tg_off = NULL, nil, ntl, tg_stride = 0, max_tl = 0;
    tn_tensor *grad = NULL;
    tn_status st = read_lengths(&args[3], "input_lengths", &il, &nil);
    if (st == TN_OK) st = read_lengths(&args[4], "target_lengths", &tl, &ntl);
    if (st == TN_OK && (nil != batch || ntl != batch || gout->sizes[0] != batch || nll->sizes[0] != batch || alpha->sizes[0] != batch))
        st = tn_error(TN_ERR_RUNTIME, "ctc_loss_backward_cpu: arguments do not match a ctc_loss forward");
    if (st == TN_OK && !(tg_off = malloc(sizeof *tg_off * (size_t)(batch + 1)))) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
    if (st == TN_OK) st = target_layout(targets, tl, batch, tg_off, &tg_stride, &max_tl);
    for (int64_t b = 0; st == TN_OK && b < batch; b++)
        if (il[b] < 0 || il[b] > lp->sizes[0] || il[b] > alpha->sizes[1] || 2 * tl[b] + 1 > alpha->sizes[2])
            st = tn_error(TN_ERR_RUNTIME, "ctc_loss_backward_cpu: arguments do not match a ctc_loss forward");
    ctc_problem p = {lp, targets, il, tl, tg_off, tg_stride, blank, batch, alpha->sizes[1], alpha->sizes[2]};
    if (st == TN_OK && !(blank >= 0 && blank < lp->sizes[2])) st = tn_error(TN_ERR_RUNTIME, "blank must be in label range");
    if (st == TN_OK) st = tn_nn_empty(3, lp->sizes, lp->dtype, lp, &grad);
    if (st == TN_OK && !tn_tensor_is_meta(lp)) {
        size_t n = (size_t)(batch * p.alpha_t * p.alpha_s + 1);
        void *beta = malloc(n * (size_t)tn_dtype_itemsize(lp->dtype));
        if (!beta) st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
        else {
            int es = tn_dtype_itemsize(lp->dtype);
            ctc_bwd_job j = {&p, lp->dtype == TN_DTYPE_FLOAT32, (const char *)gout->storage->data + gout->offset * es, gout->strides[0],
                             (const char *)nll->storage->data + nll->offset * es, nll->strides[0], alpha, zero_inf, tn_tensor_data(grad), beta};
            tn_parallel_for(batch, 1, ctc_backward_chunk, &j);
        }
        free(beta);
    }
    free(il);
    free(tl);
    free(tg_off);
    if (st != TN_OK) {
        if (grad) tn_tensor_release(grad);
        return st;
    }
    rets[0] = tn_value_tensor(grad);
    return TN_OK;
}

/* aten::ctc_loss(Tensor log_probs, Tensor targets, int[] / Tensor input_lengths, int[] / Tensor
 * target_lengths, int blank=0, int reduction=Mean, bool zero_infinity=False) -> Tensor:
 * unbatched log_probs (2-D) get a batch of one; targets are taken as int64; infinite losses
 * become 0 under zero_infinity; mean divides each loss by its target length (at least 1). */
tn_status tn_op_ctc_loss(const tn_value *args, tn_value *rets) {
    tn_tensor *lp = args[0].u.t;
    int64_t reduction = args[5].u.i;
    bool zero_inf = args[6].u.b, batched = lp->ndim == 3;
    if (args[2].tag == TN_V_TENSOR && !tn_dtype_is_integral(args[2].u.t->dtype, false))
        return tn_error(TN_ERR_RUNTIME, "input_lengths must be integral");
    if (args[3].tag == TN_V_TENSOR && !tn_dtype_is_integral(args[3].u.t->dtype, false))
        return tn_error(TN_ERR_RUNTIME, "target_lengths must be integral");
    tn_cx c = {0};
    tn_tensor *lp3 = batched ? lp : tn_cx_call(&c, TN_OP_unsqueeze, TN_ARGS(TN_T(lp), TN_I(1)));
    tn_value to = {.tag = TN_V_DTYPE};
    to.u.dtype = TN_DTYPE_INT64;
    tn_tensor *tg = args[1].u.t->dtype == TN_DTYPE_INT64
                        ? args[1].u.t
                        : tn_cx_call(&c, TN_OP__to_copy, TN_ARGS(args[1], to, TN_NONE, TN_NONE, TN_NONE, TN_B(false), TN_NONE));
    /* lengths given as tensors are read into lists: upstream runs _ctc_loss.default for both */
    int64_t *il = NULL, *tl = NULL, nil = 0, ntl = 0;
    tn_cx_fail(&c, read_lengths(&args[2], "input_lengths", &il, &nil));
    if (c.st == TN_OK) tn_cx_fail(&c, read_lengths(&args[3], "target_lengths", &tl, &ntl));
    tn_tensor *res = tn_cx_call(&c, TN_OP__ctc_loss, TN_ARGS(TN_T(lp3), TN_T(tg), tn_value_intlist(il, nil), tn_value_intlist(tl, ntl), args[4], TN_B(zero_inf)));
    free(il);
    free(tl);
    if (zero_inf && res) {
        tn_tensor *isinf = tn_cx_call(&c, TN_OP_eq_Scalar, TN_ARGS(TN_T(res), TN_D(INFINITY)));
        tn_tensor *zero = tn_cx_call(&c, TN_OP_zeros_like, TN_ARGS(TN_T(res), TN_NONE, TN_NONE, TN_NONE, TN_NONE, TN_NONE));
        res = tn_cx_call(&c, TN_OP_where_self, TN_ARGS(TN_T(isinf), TN_T(zero), TN_T(res)));
    }
    if (reduction == 1 && res) {
        tn_tensor *tl;
        if (args[3].tag == TN_V_TENSOR) {
            tl = args[3].u.t;
        } else {
            tn_value lo = {.tag = TN_V_DTYPE};
            lo.u.dtype = TN_DTYPE_INT64;
            int64_t n = args[3].u.ilist.n;
            tl = tn_cx_call(&c, TN_OP_empty_memory_format, TN_ARGS(tn_value_intlist(&n, 1), lo, TN_NONE, TN_NONE, TN_NONE, TN_NONE));
            if (tl)
                for (int64_t i = 0; i < n; i++) ((int64_t *)tn_tensor_data(tl))[i] = args[3].u.ilist.data[i];
        }
        tn_tensor *den = tn_cx_call(&c, TN_OP_clamp_min, TN_ARGS(TN_T(tl), TN_I(1)));
        res = tn_cx_call(&c, TN_OP_mean, TN_ARGS(TN_T(tn_cx_call(&c, TN_OP_div_Tensor, TN_ARGS(TN_T(res), TN_T(den)))), TN_NONE));
    } else if (reduction == 2 && res) {
        res = tn_cx_call(&c, TN_OP_sum, TN_ARGS(TN_T(res), TN_NONE));
    } else if (!batched && res) {
        res = tn_cx_call(&c, TN_OP_squeeze_dim, TN_ARGS(TN_T(res), TN_I(0)));
    }
    return tn_cx_finish(&c, res, rets);
}
