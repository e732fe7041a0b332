/* nn_misc.c — embedding, dropout / native_dropout (train-mode draws bit-identical to
 * upstream CPU through the shared bernoulli_ sampler) and glu. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/generator.h"
#include "core/threadpool.h"
#include "kernels/elementwise.h"
#include "kernels/random.h"
#include "ops/creation_internal.h"
#include "ops/shape.h"
#include "ops/nn_internal.h"
#include "ops/iter.h"

typedef struct emb_job {
    const tn_tensor *weight;
    const int64_t *idx;
    const char *w;
    char *o;
    int isz;
} emb_job;

/* output rows [b, e): weight's rows idx[i] (indices checked) */
static void emb_rows(void *ctx, int64_t b, int64_t e) {
    const emb_job *j = ctx;
    const int64_t D = j->weight->sizes[1], s0 = j->weight->strides[0], s1 = j->weight->strides[1];
    for (int64_t i = b; i < e; i++) {
        const char *src = j->w + j->idx[i] * s0 * j->isz;
        char *dst = j->o + i * D * j->isz;
        if (s1 == 1) memcpy(dst, src, (size_t)(D * j->isz));
        else
            for (int64_t c = 0; c < D; c++) memcpy(dst + c * j->isz, src + c * s1 * j->isz, (size_t)j->isz);
    }
}

/* aten::embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse) -> Tensor:
 * rows of weight gathered by indices (padding_idx only matters for the backward). */
tn_status tn_op_embedding(const tn_value *args, tn_value *rets) {
    tn_tensor *weight = args[0].u.t, *indices = args[1].u.t;
    if (weight->ndim != 2) return tn_error(TN_ERR_RUNTIME, "'weight' must be 2-D");
    if (indices->dtype != TN_DTYPE_INT64 && indices->dtype != TN_DTYPE_INT32)
        return tn_error(TN_ERR_RUNTIME,
                        "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
                        "Int; but got CPU%sType instead (while checking arguments for embedding)",
                        tn_dtype_infos[indices->dtype].c10_name);
    int64_t sizes[TN_MAX_DIMS + 1];
    if (indices->ndim + 1 > TN_MAX_DIMS) return tn_error(TN_ERR_RUNTIME, "embedding: too many dimensions");
    for (int i = 0; i < indices->ndim; i++) sizes[i] = indices->sizes[i];
    sizes[indices->ndim] = weight->sizes[1];
    tn_tensor *out;
    TN_TRY(tn_nn_empty(indices->ndim + 1, sizes, weight->dtype, weight, &out));
    if (tn_tensor_is_meta(weight) || tn_tensor_is_meta(indices)) {
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    tn_nn_buf bi;
    tn_status st = tn_nn_load_index(indices, &bi);
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    const int64_t *idx = bi.data;
    int64_t n = tn_tensor_numel(indices), V = weight->sizes[0];
    for (int64_t i = 0; i < n; i++)
        if (idx[i] < 0 || idx[i] >= V) {
            st = tn_error(TN_ERR_INDEX, "index out of range in self");
            break;
        }
    if (st == TN_OK) {
        /* the rows on the pool (before: one after another, 2x upstream's time for 8,192
         * rows of 256 floats) */
        emb_job j = {weight, idx, tn_tensor_data(weight), tn_tensor_data(out), tn_dtype_itemsize(weight->dtype)};
        tn_parallel_for(n, 32768 / (weight->sizes[1] > 0 ? weight->sizes[1] : 1) + 1, emb_rows, &j);
    }
    tn_nn_buf_free(&bi);
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* Reads element i of a contiguous float buffer of dtype d as float/double. */
static double load_at(const void *p, tn_dtype d, int64_t i) {
    switch (d) {
    case TN_DTYPE_FLOAT32: return ((const float *)p)[i];
    case TN_DTYPE_FLOAT64: return ((const double *)p)[i];
    case TN_DTYPE_FLOAT16: return tn_half_to_f32(((const tn_half *)p)[i]);
    case TN_DTYPE_BFLOAT16: return tn_bf16_to_f32(((const tn_bfloat16 *)p)[i]);
    default: return 0;
    }
}

/* Stores v rounded to dtype d (float ops round to float first, as the kernels did). */
static void store_at(void *p, tn_dtype d, int64_t i, double v) {
    switch (d) {
    case TN_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
    case TN_DTYPE_FLOAT64: ((double *)p)[i] = v; break;
    case TN_DTYPE_FLOAT16: ((tn_half *)p)[i] = tn_f32_to_half((float)v); break;
    case TN_DTYPE_BFLOAT16: ((tn_bfloat16 *)p)[i] = tn_f32_to_bf16((float)v); break;
    default: break;
    }
}

/* One float-typed multiply in the opmath of dtype d: double for Double, float otherwise. */
static double opmul(tn_dtype d, double a, double b) {
    return d == TN_DTYPE_FLOAT64 ? a * b : (double)((float)a * (float)b);
}

/* Fills a fresh contiguous tensor with bernoulli_(p) draws from the default generator. */
static tn_status bernoulli_fill(tn_tensor *t, double p) {
    tn_strided s = {tn_tensor_data(t), t->ndim, t->sizes, t->strides, t->dtype};
    return tn_random_bernoulli_scalar(tn_generator_default(), &s, p);
}

/* aten::dropout(input, p, train) -> Tensor. Upstream CPU: noise = empty_like(input)
 * .bernoulli_(1 - p).div_(1 - p); return input * noise. Eval (or p == 0) returns input. */
tn_status tn_op_dropout(const tn_value *args, tn_value *rets) {
    tn_tensor *input = args[0].u.t;
    double p = args[1].u.d;
    bool train = args[2].u.b;
    if (!(p >= 0 && p <= 1)) return tn_error(TN_ERR_RUNTIME, "dropout probability has to be between 0 and 1, but got %g", p);
    if (p == 0 || !train || tn_tensor_numel(input) == 0) {
        tn_tensor_retain(input);
        rets[0] = tn_value_tensor(input);
        return TN_OK;
    }
    if (!tn_nn_is_float(input->dtype))
        return tn_error(TN_ERR_RUNTIME, "result type Float can't be cast to the desired output type %s",
                        tn_dtype_infos[input->dtype].c10_name);
    tn_dtype dt = input->dtype;
    tn_tensor *out, *noise = NULL;
    TN_TRY(tn_nn_empty(input->ndim, input->sizes, dt, input, &out));
    if (tn_tensor_is_meta(input)) { rets[0] = tn_value_tensor(out); return TN_OK; }
    int64_t n = tn_tensor_numel(input);
    tn_status st = TN_OK;
    if (p == 1) {
        /* input * zeros({}): 0, or NaN for infinite and NaN inputs. */
        for (int64_t i = 0; i < n; i++) store_at(tn_tensor_data(out), dt, i, opmul(dt, tn_nn_read(input, i), 0.0));
        rets[0] = tn_value_tensor(out);
        return TN_OK;
    }
    /* empty_like keeps a permuted input's strides, and bernoulli_ draws in the noise's
     * memory order, so a transposed input gets upstream's mask */
    st = tn_tensor_empty_like(input, dt, &noise);
    if (st == TN_OK) st = bernoulli_fill(noise, 1 - p);
    if (st == TN_OK) {
        void *nz = tn_tensor_data(noise), *o = tn_tensor_data(out);
        /* div_(1 - p): a division by the scalar in opmath, rounded to the noise dtype. */
        double q = dt == TN_DTYPE_FLOAT64 ? 1 - p : (double)(float)(1 - p);
        for (int64_t i = 0; i < n; i++) {
            double a = load_at(nz, dt, i);
            double v = dt == TN_DTYPE_FLOAT64 ? a / q : (double)((float)a / (float)q);
            store_at(nz, dt, i, v);
        }
        /* the division above ran in memory order over the dense noise; read it logically */
        for (int64_t i = 0; i < n; i++) store_at(o, dt, i, opmul(dt, tn_nn_read(input, i), tn_nn_read(noise, i)));
    }
    if (noise) tn_tensor_release(noise);
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::native_dropout(input, p, train?) -> (out, mask). Upstream CPU: mask (bool) =
 * bernoulli_(1 - p); out = input.mul(mask).mul_(1 / (1 - p)) (scale 0 when p == 1). */
tn_status tn_op_native_dropout(const tn_value *args, tn_value *rets) {
    tn_tensor *input = args[0].u.t;
    double p = args[1].u.d;
    bool train = args[2].tag != TN_V_BOOL || args[2].u.b;
    tn_dtype dt = input->dtype;
    int64_t n = tn_tensor_numel(input);
    tn_tensor *out = NULL, *mask = NULL;
    if (n == 0) {
        TN_TRY(tn_nn_empty(input->ndim, input->sizes, dt, input, &mask));
        tn_tensor_retain(input);
        rets[0] = tn_value_tensor(input);
        rets[1] = tn_value_tensor(mask);
        return TN_OK;
    }
    TN_TRY(tn_nn_check_float(input, "native_dropout"));
    /* upstream's bernoulli_(1 - p) checks its probability (NaN fails) */
    if (train && !(1. - p >= 0 && 1. - p <= 1))
        return tn_error(TN_ERR_RUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%g", 1. - p);
    /* out and mask are empty_like(input): a permuted or overlapping input's layout (dense
     * strides ordered as its own), so bernoulli_ draws in that memory order, as upstream's */
    TN_TRY(tn_factory_empty_like(input, dt, tn_tensor_device(input), TN_MEMFMT_PRESERVE, &out));
    tn_tensor *tmp = NULL, *mlog = NULL;
    tn_status st = tn_factory_empty_like(input, TN_DTYPE_BOOL, tn_tensor_device(input), TN_MEMFMT_PRESERVE, &mask);
    if (st != TN_OK || tn_tensor_is_meta(input)) goto done;
    /* computed in logical order into a contiguous tmp, then copied into out's layout */
    if ((st = tn_tensor_empty(input->ndim, input->sizes, dt, tn_tensor_device(input), &tmp)) != TN_OK) goto done;
    void *o = tn_tensor_data(tmp);
    if (train) {
        double p1m = 1. - p, scale = p1m == 0 ? 0. : 1. / p1m;
        if ((st = bernoulli_fill(mask, p1m)) != TN_OK) goto done;
        if ((st = tn_tensor_contiguous(mask, &mlog)) != TN_OK) goto done;
        const uint8_t *m = tn_tensor_data(mlog);
        /* the input gathered once in its opmath type (exact), not read element by element */
        tn_dtype acc = tn_nn_acc(dt);
        tn_nn_buf bi;
        if ((st = tn_nn_load(input, acc, &bi)) != TN_OK) goto done;
        for (int64_t i = 0; i < n; i++) {
            double a = acc == TN_DTYPE_FLOAT32 ? (double)((const float *)bi.data)[i] : ((const double *)bi.data)[i];
            double v = opmul(dt, a, m[i] ? 1.0 : 0.0);
            v = tn_round_to_dtype(dt, v); /* input.mul(mask) is materialised in the input dtype */
            store_at(o, dt, i, opmul(dt, v, scale));
        }
        tn_nn_buf_free(&bi);
    } else {
        memset(tn_tensor_data(mask), 1, (size_t)n); /* dense (empty_like): its n bytes are its elements */
        for (int64_t i = 0; i < n; i++) store_at(o, dt, i, tn_nn_read(input, i));
    }
    {
        tn_value cr[1];
        st = tn_dispatch(TN_OP_copy_, (tn_value[]){tn_value_tensor(out), tn_value_tensor(tmp), tn_value_bool(false)}, cr);
        if (st == TN_OK) tn_value_release(&cr[0]);
    }
done:
    if (tmp) tn_tensor_release(tmp);
    if (mlog) tn_tensor_release(mlog);
    if (st != TN_OK) {
        if (out) tn_tensor_release(out);
        if (mask) tn_tensor_release(mask);
        return st;
    }
    rets[0] = tn_value_tensor(out);
    rets[1] = tn_value_tensor(mask);
    return TN_OK;
}

/* glu of float32 / float64 in blocks on the pool: the vector sigmoid row of the second
 * half into out, then out = first half * out (the formula's order, rounded in the dtype as
 * upstream's float kernels); before, one scalar expf per element on one thread (7.5x
 * upstream at 1e6 elements) */
#define GLU_BLOCK 16384
typedef struct glu_job {
    const char *x;
    char *y;
    int64_t len, size_inner, nblk; /* per outer index: len = h * inner outputs */
    int es;
    tn_loop_fn sig, mul;
} glu_job;

static void glu_blocks(void *p, int64_t b, int64_t e) {
    const glu_job *j = p;
    tn_loop_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    for (int64_t k = b; k < e; k++) {
        int64_t o = k / j->nblk, lo = (k % j->nblk) * GLU_BLOCK;
        int64_t n = j->len - lo < GLU_BLOCK ? j->len - lo : GLU_BLOCK;
        const char *a = j->x + (o * j->size_inner + lo) * j->es, *g = a + j->len * j->es;
        char *y = j->y + (o * j->len + lo) * j->es;
        char *ds[2] = {y, (char *)g};
        int64_t s2[2] = {j->es, j->es};
        j->sig(ds, s2, n, &ctx);
        char *dm[3] = {y, (char *)a, y};
        int64_t s3[3] = {j->es, j->es, j->es};
        j->mul(dm, s3, n, &ctx);
    }
}

/* aten::glu(self, dim) -> Tensor: first half * sigmoid(second half) along dim. */
tn_status tn_op_glu(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    if (self->ndim == 0) return tn_error(TN_ERR_RUNTIME, "glu does not support scalars because halving size must be even");
    int dim;
    TN_TRY(tn_wrap_dim(args[1].u.i, self->ndim, &dim));
    int64_t size = self->sizes[dim];
    if (size % 2 != 0)
        return tn_error(TN_ERR_RUNTIME, "Halving dimension must be even, but dimension %d is size %lld", dim, (long long)size);
    TN_TRY(tn_nn_check_float(self, "glu_cpu"));
    int64_t sizes[TN_MAX_DIMS];
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    sizes[dim] = size / 2;
    tn_tensor *out;
    TN_TRY(tn_nn_empty(self->ndim, sizes, self->dtype, self, &out));
    if (tn_tensor_is_meta(self)) { rets[0] = tn_value_tensor(out); return TN_OK; }
    tn_dtype acc = tn_nn_acc(self->dtype);
    tn_nn_buf bx, by;
    tn_status st = tn_nn_load(self, acc, &bx);
    if (st == TN_OK) st = tn_nn_out_begin(out, acc, &by);
    if (st != TN_OK) { tn_nn_buf_free(&bx); tn_tensor_release(out); return st; }
    int64_t outer = 1, inner = 1, h = size / 2;
    for (int i = 0; i < dim; i++) outer *= self->sizes[i];
    for (int i = dim + 1; i < self->ndim; i++) inner *= self->sizes[i];
    if (self->dtype == acc && h * inner > 0) { /* float32 / float64: bx and by are the dtype's */
        glu_job j = {bx.data, by.data, h * inner, size * inner, (h * inner + GLU_BLOCK - 1) / GLU_BLOCK,
                     tn_dtype_itemsize(acc), tn_ew_loop(TN_EW_sigmoid, acc), tn_ew_loop(TN_EW_mul, acc)};
        tn_parallel_for(outer * j.nblk, 1, glu_blocks, &j);
        outer = 0; /* done */
    }
    for (int64_t a = 0; a < outer; a++)
        for (int64_t j = 0; j < h * inner; j++) {
            int64_t src = a * size * inner + j, dst = a * h * inner + j;
            if (acc == TN_DTYPE_FLOAT32) {
                const float *x = bx.data;
                float b = x[src + h * inner];
                ((float *)by.data)[dst] = x[src] * (1.0f / (1.0f + expf(-b)));
            } else {
                const double *x = bx.data;
                double b = x[src + h * inner];
                ((double *)by.data)[dst] = x[src] * (1.0 / (1.0 + exp(-b)));
            }
        }
    tn_nn_out_finish(out, acc, &by);
    tn_nn_buf_free(&bx);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}
