/* nn_backward_attention.c — _scaled_dot_product_flash_attention_for_cpu_backward: the
 * attention gradient rebuilt from the forward's logsumexp, its products on the GEMM kernel.
 * Plain C11; no Python. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "ops/nn_backward_internal.h"

/* ================================ attention ============================================ */

/* Gradient of softmax(scale·Q·Kᵀ + mask)·V per (batch, query head) from the forward's
 * logsumexp: P = exp(scale·QKᵀ + mask - lse) (causal: key j > query i gets 0),
 * dV += Pᵀ·dO, dP = dO·Vᵀ, dS = scale·P ∘ (dP - rowsum(dO ∘ O)), dQ = dS·K, dK += dSᵀ·Q;
 * a key head shared by several query heads (GQA) sums theirs. The four products run on the
 * GEMM kernel, accumulating in place; the elementwise steps run here in acc. */
typedef struct sdpa_bufs {
    const void *q, *k, *v, *o, *go, *lse, *mask; /* contiguous acc buffers (mask additive or NULL) */
    int64_t ms[4];
} sdpa_bufs;

/* One backward job: the operands, the shapes, and the outputs (accumulated into). */
typedef struct sdpa_job {
    const sdpa_bufs *t;
    tn_dtype acc;
    int64_t B, Hq, Hk, L, S, E, Ev;
    double scale;
    bool causal;
    void *gq, *gk, *gv;
    atomic_int failed;
} sdpa_job;

/* Query head h of batch b, with p and dp ([L, S] each) as scratch. */
static tn_status sdpa_head(const sdpa_job *job, int64_t b, int64_t h, void *p, void *dp) {
    const sdpa_bufs *t = job->t;
    const tn_dtype acc = job->acc;
    const int64_t Hq = job->Hq, Hk = job->Hk, L = job->L, S = job->S, E = job->E, Ev = job->Ev;
    const double scale = job->scale;
    const bool causal = job->causal;
    void *gq = job->gq, *gk = job->gk, *gv = job->gv;
    bool f = acc == TN_DTYPE_FLOAT32;
    size_t isz = (size_t)tn_dtype_itemsize(acc);
    int64_t rep = Hq / Hk;
    tn_status st;
#define AT(ptr, off) ((const char *)(ptr) + (size_t)(off) * isz)
#define ATW(ptr, off) ((char *)(ptr) + (size_t)(off) * isz)
    int64_t hk = h / rep, qo = (b * Hq + h) * L * E, ko = (b * Hk + hk) * S * E;
    int64_t vo = (b * Hk + hk) * S * Ev, oo = (b * Hq + h) * L * Ev, lo = (b * Hq + h) * L;
    /* scores Q·Kᵀ into p, then P in place */
    st = tn_nnb_gemm(acc, L, S, E, AT(t->q, qo), E, 1, AT(t->k, ko), 1, E, p, S, 1, 0.0);
    if (st != TN_OK) return st;
    for (int64_t i = 0; i < L && f; i++) { /* float32: vector rows (kernels/nn_backward.h) */
        float *row = (float *)p + i * S, sc = (float)scale;
        int64_t lim = causal ? (i + 1 < S ? i + 1 : S) : S;
        if (t->mask) {
            const float *m = (const float *)t->mask + b * t->ms[0] + h * t->ms[1] + i * t->ms[2];
            for (int64_t j = 0; j < lim; j++) row[j] = row[j] * sc + m[j * t->ms[3]];
            sc = 1.0f;
        }
        tn_attn_bwd_prob_row_f32(row, S, lim, sc, ((const float *)t->lse)[lo + i]);
    }
    for (int64_t i = 0; i < L && !f; i++) {
        double l = ((const double *)t->lse)[lo + i];
        for (int64_t j = 0; j < S; j++) {
            double s = f ? (double)((float *)p)[i * S + j] : ((double *)p)[i * S + j], m = 0;
            if (t->mask) {
                int64_t mi = b * t->ms[0] + h * t->ms[1] + i * t->ms[2] + j * t->ms[3];
                m = f ? ((const float *)t->mask)[mi] : ((const double *)t->mask)[mi];
            }
            double pv = (causal && j > i) ? 0.0 : exp(s * scale + m - l);
            if (pv != pv) pv = 0; /* fully masked row: -inf - lse */
            if (f) ((float *)p)[i * S + j] = (float)pv;
            else ((double *)p)[i * S + j] = pv;
        }
    }
    /* dV += Pᵀ · dO */
    st = tn_nnb_gemm(acc, S, Ev, L, p, 1, S, AT(t->go, oo), Ev, 1, ATW(gv, vo), Ev, 1, 1.0);
    if (st != TN_OK) return st;
    /* dS = scale · P ∘ (dO·Vᵀ - D) */
    st = tn_nnb_gemm(acc, L, S, Ev, AT(t->go, oo), Ev, 1, AT(t->v, vo), 1, Ev, dp, S, 1, 0.0);
    if (st != TN_OK) return st;
    for (int64_t i = 0; i < L; i++) {
        double D = 0;
        for (int64_t e = 0; e < Ev; e++) {
            int64_t k = oo + i * Ev + e;
            D += f ? (double)((const float *)t->go)[k] * ((const float *)t->o)[k]
                   : ((const double *)t->go)[k] * ((const double *)t->o)[k];
        }
        if (f) {
            tn_attn_bwd_ds_row_f32((float *)p + i * S, (const float *)dp + i * S, S, (float)D, (float)scale);
            continue;
        }
        for (int64_t j = 0; j < S; j++) {
            if (f) {
                float *pp = (float *)p + i * S + j;
                *pp = (float)((double)*pp * ((double)((const float *)dp)[i * S + j] - D) * scale);
            } else {
                double *pp = (double *)p + i * S + j;
                *pp = *pp * (((const double *)dp)[i * S + j] - D) * scale;
            }
        }
    }
    /* dQ += dS·K, dK += dSᵀ·Q */
    st = tn_nnb_gemm(acc, L, E, S, p, S, 1, AT(t->k, ko), E, 1, ATW(gq, qo), E, 1, 1.0);
    if (st != TN_OK) return st;
    st = tn_nnb_gemm(acc, S, E, L, p, 1, S, AT(t->q, qo), E, 1, ATW(gk, ko), E, 1, 1.0);
    return st;
#undef AT
#undef ATW
}

/* Tasks are (batch, key head) pairs: the query heads sharing a key head run in one task, in
 * increasing order (the order the serial loop had), so dK and dV are accumulated by one
 * thread each and the result does not depend on the thread count. Products inside a task
 * run on the calling thread (a parallel region does not nest). */
static void sdpa_task(void *ctx, int64_t begin, int64_t end) {
    sdpa_job *j = ctx;
    void *p = NULL, *dp = NULL;
    if (tn_nnb_acc_alloc(j->acc, j->L * j->S, false, &p) != TN_OK ||
        tn_nnb_acc_alloc(j->acc, j->L * j->S, false, &dp) != TN_OK) {
        atomic_store(&j->failed, 1);
    } else {
        int64_t rep = j->Hq / j->Hk;
        for (int64_t i = begin; i < end && !atomic_load(&j->failed); i++) {
            int64_t b = i / j->Hk, hk = i % j->Hk;
            for (int64_t r = 0; r < rep; r++)
                if (sdpa_head(j, b, hk * rep + r, p, dp) != TN_OK) {
                    atomic_store(&j->failed, 1);
                    break;
                }
        }
    }
    free(p);
    free(dp);
}

/* aten::_scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value,
 * out, logsumexp, dropout_p, is_causal, *, attn_mask?, scale?) -> (grad_query, grad_key,
 * grad_value). Operands [B, H, L|S, E]; a key/value head may serve several query heads. */
tn_status tn_op__scaled_dot_product_flash_attention_for_cpu_backward(const tn_value *args, tn_value *rets) {
    tn_tensor *go = args[0].u.t, *q = args[1].u.t, *k = args[2].u.t, *v = args[3].u.t, *o = args[4].u.t;
    tn_tensor *lse = args[5].u.t, *mask = tn_nn_opt_tensor(&args[8]);
    double dropout_p = args[6].u.d;
    bool causal = args[7].u.b;
    char b1[256], b2[256], b3[256];
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4 || o->ndim != 4 || go->ndim != 4)
        return tn_error(TN_ERR_RUNTIME, "scaled_dot_product_attention_flash_attention_backward: Accept only 4 dims "
                                        "inputs shape of {B, H, T, K}");
    if (dropout_p > 0)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::_scaled_dot_product_flash_attention_for_cpu_backward with "
                                                "dropout_p > 0 is not implemented by torchnative");
    if (q->dtype != k->dtype || q->dtype != v->dtype || go->dtype != q->dtype || o->dtype != q->dtype)
        return tn_error(TN_ERR_RUNTIME, "Expected query, key, value, out and grad_out to have the same dtype");
    TN_TRY(tn_nnb_check_float(q, "flash_attention_backward"));
    int64_t B = q->sizes[0], Hq = q->sizes[1], L = q->sizes[2], E = q->sizes[3];
    int64_t Hk = k->sizes[1], S = k->sizes[2], Ev = v->sizes[3];
    bool ok = k->sizes[0] == B && v->sizes[0] == B && k->sizes[3] == E && v->sizes[1] == Hk && v->sizes[2] == S &&
              Hk > 0 && Hq % Hk == 0;
    int64_t osz[4] = {B, Hq, L, Ev};
    for (int i = 0; ok && i < 4; i++) ok = o->sizes[i] == osz[i] && go->sizes[i] == osz[i];
    if (ok) ok = tn_tensor_numel(lse) == B * Hq * L;
    if (!ok)
        return tn_error(TN_ERR_RUNTIME, "flash_attention_backward: inconsistent shapes: query %s, key %s, value %s",
                        TN_NN_FMT(q, b1), TN_NN_FMT(k, b2), TN_NN_FMT(v, b3));
    int64_t target[4] = {B, Hq, L, S}, ms[4] = {0, 0, 0, 0};
    if (mask) {
        if (mask->ndim > 4)
            return tn_error(TN_ERR_RUNTIME, "attn_mask of shape %s does not broadcast to the attention scores",
                            TN_NN_FMT(mask, b1));
        int64_t cs[TN_MAX_DIMS];
        tn_contiguous_strides(mask->ndim, mask->sizes, cs);
        for (int i = 0; i < mask->ndim; i++) {
            int md = mask->ndim - 1 - i;
            if (mask->sizes[md] != target[3 - i] && mask->sizes[md] != 1)
                return tn_error(TN_ERR_RUNTIME, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                                                "non-singleton dimension %d",
                                (long long)mask->sizes[md], (long long)target[3 - i], md);
            ms[3 - i] = mask->sizes[md] == 1 ? 0 : cs[md];
        }
    }
    double scale = tn_nn_opt_double(&args[9], NAN);
    if (isnan(scale)) scale = 1.0 / sqrt((double)E);
    tn_tensor *gq = NULL, *gk = NULL, *gv = NULL;
    tn_status st = tn_nn_empty(4, q->sizes, q->dtype, q, &gq);
    if (st == TN_OK) st = tn_nn_empty(4, k->sizes, k->dtype, k, &gk);
    if (st == TN_OK) st = tn_nn_empty(4, v->sizes, v->dtype, v, &gv);
    tn_tensor *all[7] = {go, q, k, v, o, lse, mask};
    if (st == TN_OK && !tn_nnb_any_meta(7, all)) {
        tn_dtype acc = tn_nn_acc(q->dtype);
        sdpa_bufs t = {0};
        tn_nn_buf bq = {0}, bk = {0}, bv = {0}, bo = {0}, bgo = {0}, bl = {0}, bm = {0}, ogq = {0}, ogk = {0}, ogv = {0};
        st = tn_nn_load(q, acc, &bq);
        if (st == TN_OK) st = tn_nn_load(k, acc, &bk);
        if (st == TN_OK) st = tn_nn_load(v, acc, &bv);
        if (st == TN_OK) st = tn_nn_load(o, acc, &bo);
        if (st == TN_OK) st = tn_nn_load(go, acc, &bgo);
        if (st == TN_OK) st = tn_nn_is_float(lse->dtype) ? tn_nn_load(lse, acc, &bl)
                                                          : tn_error(TN_ERR_RUNTIME, "logsumexp must be floating point");
        if (st == TN_OK && mask) {
            if (mask->dtype == TN_DTYPE_BOOL) {
                tn_nn_buf mi;
                st = tn_nn_load_index(mask, &mi);
                int64_t n = tn_tensor_numel(mask);
                if (st == TN_OK) st = tn_nnb_acc_alloc(acc, n, false, &bm.data);
                if (st == TN_OK) {
                    bm.owned = true;
                    for (int64_t i = 0; i < n; i++) {
                        double mv = ((const int64_t *)mi.data)[i] ? 0.0 : -INFINITY;
                        if (acc == TN_DTYPE_FLOAT32) ((float *)bm.data)[i] = (float)mv;
                        else ((double *)bm.data)[i] = mv;
                    }
                }
                tn_nn_buf_free(&mi);
            } else {
                st = tn_nn_load(mask, acc, &bm);
            }
        }
        if (st == TN_OK) st = tn_nnb_out_begin(gq, acc, true, &ogq);
        if (st == TN_OK) st = tn_nnb_out_begin(gk, acc, true, &ogk);
        if (st == TN_OK) st = tn_nnb_out_begin(gv, acc, true, &ogv);
        if (st == TN_OK && tn_tensor_numel(gq) + tn_tensor_numel(gk) + tn_tensor_numel(gv) > 0) {
            t.q = bq.data; t.k = bk.data; t.v = bv.data; t.o = bo.data; t.go = bgo.data;
            t.lse = bl.data;
            t.mask = mask ? bm.data : NULL;
            memcpy(t.ms, ms, sizeof ms);
            sdpa_job job = {&t, acc, B, Hq, Hk, L, S, E, Ev, scale, causal, ogq.data, ogk.data, ogv.data, 0};
            tn_parallel_for(B * Hk, 1, sdpa_task, &job);
            if (atomic_load(&job.failed)) st = tn_error(TN_ERR_NO_MEMORY, "flash_attention_backward: out of memory");
        }
        if (st == TN_OK) {
            tn_nn_out_finish(gq, acc, &ogq);
            tn_nn_out_finish(gk, acc, &ogk);
            tn_nn_out_finish(gv, acc, &ogv);
        }
        tn_nn_buf_free(&bq); tn_nn_buf_free(&bk); tn_nn_buf_free(&bv); tn_nn_buf_free(&bo); tn_nn_buf_free(&bgo);
        tn_nn_buf_free(&bl); tn_nn_buf_free(&bm); tn_nn_buf_free(&ogq); tn_nn_buf_free(&ogk); tn_nn_buf_free(&ogv);
    }
    if (st != TN_OK) { tn_nnb_release3(gq, gk, gv); return st; }
    rets[0] = tn_value_tensor(gq);
    rets[1] = tn_value_tensor(gk);
    rets[2] = tn_value_tensor(gv);
    return TN_OK;
}
