/* linalg.c — the matrix-multiplication operators (mm, addmm, bmm, baddbmm, addbmm, mv,
 * addmv, dot, vdot, outer/ger, matmul, linear): upstream's argument checks and error
 * wording, output allocation, and the batch loops around tn_gemm. Operands are handed to
 * the kernel with their strides (transposed, sliced and expanded inputs are never copied
 * here; the kernel layer copies only what its BLAS cannot read). */
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/gemm.h"
#include "ops/dispatch.h"
#include "ops/shape.h"

/* ---- helpers ------------------------------------------------------------------------ */

/* caffe2::TypeMeta's name of a dtype, which upstream prints in these messages (dtype table). */
static const char *cpp_name(tn_dtype d) { return tn_dtype_infos[d].cpp_name; }
static const char *lower_name(tn_dtype d) { /* "float", "double", as str(torch.float) minus "torch." */
    switch (d) {
    case TN_DTYPE_FLOAT32: return "float";
    case TN_DTYPE_FLOAT64: return "double";
    case TN_DTYPE_FLOAT16: return "half";
    case TN_DTYPE_BFLOAT16: return "bfloat16";
    case TN_DTYPE_INT64: return "long";
    case TN_DTYPE_INT32: return "int";
    case TN_DTYPE_INT16: return "short";
    case TN_DTYPE_INT8: return "signed char";
    case TN_DTYPE_UINT8: return "unsigned char";
    case TN_DTYPE_COMPLEX64: return "complex<float>";
    case TN_DTYPE_COMPLEX128: return "complex<double>";
    default: return tn_dtype_infos[d].c10_name;
    }
}

static tn_status not_for_dtype(const char *kernel, tn_dtype d) {
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tn_dtype_infos[d].c10_name);
}

/* alpha / beta Scalars as the gemm descriptor wants them. */
typedef struct coef { double re, im; int64_t i; } coef;
static coef coef_of(const tn_value *v) {
    coef c = {0, 0, 0};
    switch (v->tag) {
    case TN_V_INT: c.re = (double)v->u.i, c.i = v->u.i; break;
    case TN_V_UINT: c.re = (double)v->u.u, c.i = (int64_t)v->u.u; break;
    case TN_V_BOOL: c.re = v->u.b, c.i = v->u.b; break;
    case TN_V_DOUBLE: c.re = v->u.d, c.i = (int64_t)v->u.d; break;
    case TN_V_COMPLEX: c.re = v->u.c.re, c.im = v->u.c.im, c.i = (int64_t)v->u.c.re; break;
    default: c.re = 1, c.i = 1; break;
    }
    return c;
}
static const coef ONE = {1, 0, 1}, ZERO = {0, 0, 0};
static bool coef_zero(coef c) { return c.re == 0 && c.im == 0 && c.i == 0; }

static bool is_meta(const tn_tensor *t) { return tn_tensor_is_meta(t); }

/* A strided view of t (retains its storage) with the given geometry and extra offset. */
static tn_tensor *view_of(const tn_tensor *t, int64_t offset, int ndim, const int64_t *sizes, const int64_t *strides) {
    return tn_tensor_new_view(t->storage, t->offset + offset, ndim, sizes, strides, t->dtype);
}

/* expand() with upstream's message. */
static tn_status expand_to(tn_tensor *t, int ndim, const int64_t *sizes, tn_tensor **out) {
    int64_t strides[TN_MAX_DIMS];
    char b1[256], b2[256];
    if (ndim < t->ndim)
        return tn_error(TN_ERR_RUNTIME,
                        "expand(torch.FloatTensor{%s}, size=%s): the number of sizes provided (%d) must be greater "
                        "or equal to the number of dimensions in the tensor (%d)",
                        tn_format_sizes(t->ndim, t->sizes, b1, sizeof b1), tn_format_sizes(ndim, sizes, b2, sizeof b2),
                        ndim, t->ndim);
    for (int i = ndim - 1; i >= 0; i--) {
        int j = i - (ndim - t->ndim);
        if (j < 0) { strides[i] = 0; continue; }
        if (t->sizes[j] == sizes[i]) strides[i] = t->strides[j];
        else if (t->sizes[j] == 1) strides[i] = 0;
        else
            return tn_error(TN_ERR_RUNTIME,
                            "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                            "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                            (long long)sizes[i], (long long)t->sizes[j], i, tn_format_sizes(ndim, sizes, b1, sizeof b1),
                            tn_format_sizes(t->ndim, t->sizes, b2, sizeof b2));
    }
    *out = view_of(t, 0, ndim, sizes, strides);
    return *out ? TN_OK : tn_error(TN_ERR_NO_MEMORY, "out of memory");
}

static tn_status new_out(int ndim, const int64_t *sizes, const tn_tensor *like, tn_tensor **out) {
    return tn_tensor_empty(ndim, sizes, like->dtype, tn_tensor_device(like), out);
}

/* Copies `self` broadcast to out's shape into out (the beta*self term's starting value). */
static tn_status init_from_self(tn_tensor *out, tn_tensor *self) {
    tn_tensor *e;
    TN_TRY(expand_to(self, out->ndim, out->sizes, &e));
    if (!is_meta(out)) tn_shape_copy_same_dtype(out, e);
    tn_tensor_release(e);
    return TN_OK;
}

/* One batched product: for every index of the nb batch dims, C = alpha*A·B + beta*C with
 * A m×k, B k×n, C m×n at the given element strides (batch strides per operand; 0 =
 * broadcast). Scratch is allocated once for the whole batch. */
typedef struct operand { const tn_tensor *t; int64_t bs[TN_MAX_DIMS]; int64_t rs, cs; } operand;

typedef struct gemm_batch_job {
    const tn_gemm_desc *g;
    int nb;
    const int64_t *bsizes;
    const operand *A, *B, *C;
    int isz;
    tn_status st; /* the first failure (written under no lock: any failure is reported) */
} gemm_batch_job;
static void gemm_batch_part(void *ctx, int64_t b0, int64_t b1) {
    gemm_batch_job *J = ctx;
    tn_gemm_desc g = *J->g;
    const size_t sb = tn_gemm_scratch_bytes(&g);
    void *scratch = sb ? malloc(sb) : NULL;
    if (sb && !scratch) { J->st = tn_error(TN_ERR_NO_MEMORY, "out of memory allocating %zu bytes", sb); return; }
    for (int64_t it = b0; it < b1; it++) {
        int64_t oa = 0, ob = 0, oc = 0, rem = it;
        for (int i = J->nb - 1; i >= 0; i--) {
            const int64_t c = rem % J->bsizes[i];
            rem /= J->bsizes[i];
            oa += c * J->A->bs[i], ob += c * J->B->bs[i], oc += c * J->C->bs[i];
        }
        g.a = (const char *)tn_tensor_data(J->A->t) + oa * J->isz;
        g.b = (const char *)tn_tensor_data(J->B->t) + ob * J->isz;
        g.c = (char *)tn_tensor_data(J->C->t) + oc * J->isz;
        tn_status st = tn_gemm(&g, scratch, sb);
        if (st != TN_OK) { J->st = st; break; }
    }
    free(scratch);
}

static tn_status run_gemm(int nb, const int64_t *bsizes, const operand *A, const operand *B, const operand *C,
                          int64_t m, int64_t n, int64_t k, coef alpha, coef beta) {
    tn_dtype d = C->t->dtype;
    int64_t total = 1;
    for (int i = 0; i < nb; i++) total *= bsizes[i];
    if (total == 0 || m == 0 || n == 0 || is_meta(C->t)) return TN_OK;
    int isz = tn_dtype_itemsize(d);
    tn_gemm_desc g = tn_gemm_desc_init(d);
    g.m = m, g.n = n, g.k = k;
    g.a_rs = A->rs, g.a_cs = A->cs, g.b_rs = B->rs, g.b_cs = B->cs, g.c_rs = C->rs, g.c_cs = C->cs;
    g.alpha = alpha.re, g.alpha_im = alpha.im, g.ialpha = alpha.i;
    g.beta = beta.re, g.beta_im = beta.im, g.ibeta = beta.i;
    /* Sizes are the same for every batch element, so one scratch query serves all. */
    g.a = tn_tensor_data(A->t), g.b = tn_tensor_data(B->t), g.c = tn_tensor_data(C->t);
    if (total > 1 && (double)m * (double)n * (double)k < (double)(1 << 20) && tn_get_num_threads() > 1 &&
        !tn_in_parallel_region()) {
        /* many small products: batch elements cut among the threads, each product on one
         * thread (one after another, each too small to split: 2.2x upstream's time for
         * 64 products of 64 x 64 x 64); each element's sums are the same either way */
        gemm_batch_job J = {&g, nb, bsizes, A, B, C, isz, TN_OK};
        tn_parallel_for(total, 1, gemm_batch_part, &J);
        return J.st;
    }
    size_t sb = tn_gemm_scratch_bytes(&g);
    void *scratch = NULL;
    if (sb && !(scratch = malloc(sb))) return tn_error(TN_ERR_NO_MEMORY, "out of memory allocating %zu bytes", sb);
    int64_t idx[TN_MAX_DIMS] = {0};
    tn_status st = TN_OK;
    for (int64_t it = 0; it < total && st == TN_OK; it++) {
        int64_t oa = 0, ob = 0, oc = 0;
        for (int i = 0; i < nb; i++) oa += idx[i] * A->bs[i], ob += idx[i] * B->bs[i], oc += idx[i] * C->bs[i];
        g.a = (const char *)tn_tensor_data(A->t) + oa * isz;
        g.b = (const char *)tn_tensor_data(B->t) + ob * isz;
        g.c = (char *)tn_tensor_data(C->t) + oc * isz;
        st = tn_gemm(&g, scratch, sb);
        for (int i = nb - 1; i >= 0; i--) {
            if (++idx[i] < bsizes[i]) break;
            idx[i] = 0;
        }
    }
    free(scratch);
    return st;
}

static operand mat2d(const tn_tensor *t) { return (operand){.t = t, .rs = t->strides[0], .cs = t->strides[1]}; }
static operand mat3d(const tn_tensor *t) {
    operand o = {.t = t, .rs = t->strides[1], .cs = t->strides[2]};
    o.bs[0] = t->strides[0];
    return o;
}

/* ---- mm / addmm --------------------------------------------------------------------- */

static tn_status check_mm(const tn_tensor *a, const tn_tensor *b, const char *an, const char *bn) {
    if (a->ndim != 2) return tn_error(TN_ERR_RUNTIME, "%s must be a matrix, got %d-D tensor", an, a->ndim);
    if (b->ndim != 2) return tn_error(TN_ERR_RUNTIME, "%s must be a matrix, got %d-D tensor", bn, b->ndim);
    if (a->sizes[1] != b->sizes[0])
        return tn_error(TN_ERR_RUNTIME, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                        (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0], (long long)b->sizes[1]);
    if (a->dtype != b->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                        cpp_name(a->dtype), cpp_name(b->dtype));
    if (!tn_gemm_supports(a->dtype)) return not_for_dtype("addmm_impl_cpu_", a->dtype);
    return TN_OK;
}

/* out = beta*self + alpha*a·b (self already checked/expanded by the caller, or NULL). */
static tn_status addmm_impl(tn_tensor *self, tn_tensor *a, tn_tensor *b, coef beta, coef alpha, tn_tensor **out) {
    int64_t sizes[2] = {a->sizes[0], b->sizes[1]};
    TN_TRY(new_out(2, sizes, a, out));
    bool use_self = self && !coef_zero(beta);
    tn_status st = use_self ? init_from_self(*out, self) : TN_OK;
    operand A = mat2d(a), B = mat2d(b), C = mat2d(*out);
    /* alpha == 0: upstream's gemm leaves the product out (a NaN or inf in a or b does not
     * reach the result), as a product of no terms does */
    int64_t k = coef_zero(alpha) ? 0 : a->sizes[1];
    if (st == TN_OK) st = run_gemm(0, NULL, &A, &B, &C, sizes[0], sizes[1], k, alpha, use_self ? beta : ZERO);
    if (st != TN_OK) tn_tensor_release(*out);
    return st;
}

/* aten::mm(Tensor self, Tensor mat2) -> Tensor */
tn_status tn_op_mm(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t, *b = args[1].u.t, *out;
    if (a->ndim != 2) return tn_error(TN_ERR_RUNTIME, "self must be a matrix");
    if (b->ndim != 2) return tn_error(TN_ERR_RUNTIME, "mat2 must be a matrix");
    TN_TRY(check_mm(a, b, "self", "mat2"));
    TN_TRY(addmm_impl(NULL, a, b, ZERO, ONE, &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor */
tn_status tn_op_addmm(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *a = args[1].u.t, *b = args[2].u.t, *out;
    TN_TRY(check_mm(a, b, "mat1", "mat2"));
    if (self->dtype != a->dtype)
        return tn_error(TN_ERR_RUNTIME, "self and mat2 must have the same dtype, but got %s and %s",
                        tn_dtype_infos[self->dtype].c10_name, tn_dtype_infos[a->dtype].c10_name);
    int64_t sizes[2] = {a->sizes[0], b->sizes[1]};
    tn_tensor *e;
    TN_TRY(expand_to(self, 2, sizes, &e)); /* shape error even when beta == 0, as upstream */
    tn_tensor_release(e);
    TN_TRY(addmm_impl(self, a, b, coef_of(&args[3]), coef_of(&args[4]), &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- bmm / baddbmm / addbmm --------------------------------------------------------- */

static tn_status check_bmm(const tn_tensor *a, const tn_tensor *b) {
    char b1[64], b2[64];
    if (a->ndim != 3) return tn_error(TN_ERR_RUNTIME, "batch1 must be a 3D tensor");
    if (b->ndim != 3) return tn_error(TN_ERR_RUNTIME, "batch2 must be a 3D tensor");
    if (b->sizes[0] != a->sizes[0] || b->sizes[1] != a->sizes[2]) {
        int64_t want[2] = {a->sizes[0], a->sizes[2]};
        return tn_error(TN_ERR_RUNTIME, "Expected size for first two dimensions of batch2 tensor to be: %s but got: %s.",
                        tn_format_sizes(2, want, b1, sizeof b1), tn_format_sizes(2, b->sizes, b2, sizeof b2));
    }
    return TN_OK;
}

static tn_status baddbmm_impl(tn_tensor *self, tn_tensor *a, tn_tensor *b, coef beta, coef alpha, tn_tensor **out) {
    int64_t sizes[3] = {a->sizes[0], a->sizes[1], b->sizes[2]};
    TN_TRY(new_out(3, sizes, a, out));
    bool use_self = self && !coef_zero(beta);
    tn_status st = use_self ? init_from_self(*out, self) : TN_OK;
    operand A = mat3d(a), B = mat3d(b), C = mat3d(*out);
    /* alpha == 0, one rule for every kernel tier: upstream's small-product kernel (k*m*n
     * under 400; any size for half / bfloat16, whose large path keeps it too) computes
     * beta*self + 0*(a·b), so a NaN or inf of the batches reaches the result; its BLAS path
     * (larger float / double / complex products) leaves the product out */
    int64_t k = a->sizes[2];
    bool zero_alpha = coef_zero(alpha), reduced = a->dtype == TN_DTYPE_FLOAT16 || a->dtype == TN_DTYPE_BFLOAT16;
    bool keep = zero_alpha && !tn_dtype_is_integral(a->dtype, true) && (reduced || (double)k * (double)sizes[1] * (double)sizes[2] < 400);
    if (st == TN_OK)
        st = run_gemm(1, sizes, &A, &B, &C, sizes[1], sizes[2], zero_alpha ? 0 : k, alpha, use_self ? beta : ZERO);
    if (st == TN_OK && keep && k > 0 && !is_meta(*out)) {
        tn_tensor *p = NULL;
        st = new_out(3, sizes, a, &p);
        if (st == TN_OK) {
            operand P = mat3d(p);
            st = run_gemm(1, sizes, &A, &B, &P, sizes[1], sizes[2], k, ONE, ZERO);
        }
        tn_value r, aa[3] = {tn_value_tensor(*out), tn_value_tensor(p), tn_value_int(0)};
        if (st == TN_OK) st = tn_dispatch(TN_OP_add__Tensor, aa, &r); /* out + 0 * product */
        if (st == TN_OK) tn_value_release(&r);
        if (p) tn_tensor_release(p);
    }
    if (st != TN_OK) tn_tensor_release(*out);
    return st;
}

/* aten::bmm(Tensor self, Tensor mat2) -> Tensor */
tn_status tn_op_bmm(const tn_value *args, tn_value *rets) {
    tn_tensor *a = args[0].u.t, *b = args[1].u.t, *out;
    TN_TRY(check_bmm(a, b));
    if (a->dtype != b->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_dtype_infos[a->dtype].c10_name,
                        tn_dtype_infos[b->dtype].c10_name);
    if (!tn_gemm_supports(a->dtype)) return not_for_dtype("bmm", a->dtype);
    TN_TRY(baddbmm_impl(NULL, a, b, ZERO, ONE, &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor */
tn_status tn_op_baddbmm(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *a = args[1].u.t, *b = args[2].u.t, *out;
    TN_TRY(check_bmm(a, b));
    if (self->dtype != a->dtype || a->dtype != b->dtype)
        return tn_error(TN_ERR_RUNTIME, "Input dtypes must be the same, got: input %s, batch1: %s, batch2: %s",
                        lower_name(self->dtype), lower_name(a->dtype), lower_name(b->dtype));
    if (!tn_gemm_supports(a->dtype)) return not_for_dtype("baddbmm", a->dtype);
    int64_t sizes[3] = {a->sizes[0], a->sizes[1], b->sizes[2]};
    tn_tensor *e;
    TN_TRY(expand_to(self, 3, sizes, &e));
    tn_tensor_release(e);
    TN_TRY(baddbmm_impl(self, a, b, coef_of(&args[3]), coef_of(&args[4]), &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
 * beta*self + alpha*sum_b batch1[b]·batch2[b], accumulated batch by batch into the output
 * as upstream does (one rounding per batch for reduced types). */
tn_status tn_op_addbmm(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t, *a = args[1].u.t, *b = args[2].u.t, *out;
    if (a->ndim != 3) return tn_error(TN_ERR_RUNTIME, "batch1 must be a 3D tensor");
    if (b->ndim != 3) return tn_error(TN_ERR_RUNTIME, "batch2 must be a 3D tensor");
    if (a->sizes[0] != b->sizes[0])
        return tn_error(TN_ERR_RUNTIME, "batch1 and batch2 must have same number of batches, got %lld and %lld",
                        (long long)a->sizes[0], (long long)b->sizes[0]);
    if (a->sizes[2] != b->sizes[1])
        return tn_error(TN_ERR_RUNTIME, "Incompatible matrix sizes for bmm (%lldx%lld and %lldx%lld)",
                        (long long)a->sizes[1], (long long)a->sizes[2], (long long)b->sizes[1], (long long)b->sizes[2]);
    if (self->dtype != a->dtype || a->dtype != b->dtype) {
        tn_dtype other = self->dtype != a->dtype ? a->dtype : b->dtype;
        tn_dtype first = self->dtype != a->dtype ? self->dtype : a->dtype;
        return tn_error(TN_ERR_RUNTIME, "self and mat2 must have the same dtype, but got %s and %s",
                        tn_dtype_infos[first].c10_name, tn_dtype_infos[other].c10_name);
    }
    if (!tn_gemm_supports(a->dtype)) return not_for_dtype("addmm_impl_cpu_", a->dtype);
    int64_t sizes[2] = {a->sizes[1], b->sizes[2]};
    TN_TRY(new_out(2, sizes, a, &out));
    coef beta = coef_of(&args[3]), alpha = coef_of(&args[4]);
    tn_status st;
    if (coef_zero(beta)) { /* self is not read, but upstream still expands it to the result */
        tn_tensor *e;
        if ((st = expand_to(self, out->ndim, out->sizes, &e)) == TN_OK) tn_tensor_release(e);
    } else {
        st = init_from_self(out, self);
    }
    operand C = mat2d(out);
    if (st == TN_OK && a->sizes[0] == 0) {
        /* No batches: beta*self (zeros when beta == 0); a k == 0 product computes exactly that. */
        operand A = {.t = a, .rs = 1, .cs = 1}, B = A;
        st = run_gemm(0, NULL, &A, &B, &C, sizes[0], sizes[1], 0, ONE, coef_zero(beta) ? ZERO : beta);
    }
    for (int64_t i = 0; i < a->sizes[0] && st == TN_OK; i++) {
        operand A = {.t = a, .rs = a->strides[1], .cs = a->strides[2]}, B = {.t = b, .rs = b->strides[1], .cs = b->strides[2]};
        tn_tensor *ai = view_of(a, i * a->strides[0], 2, a->sizes + 1, a->strides + 1);
        tn_tensor *bi = view_of(b, i * b->strides[0], 2, b->sizes + 1, b->strides + 1);
        A.t = ai, B.t = bi;
        coef bt = i > 0 ? ONE : coef_zero(beta) ? ZERO : beta;
        st = run_gemm(0, NULL, &A, &B, &C, sizes[0], sizes[1], coef_zero(alpha) ? 0 : a->sizes[2], alpha, bt); /* (as addmm) */
        tn_tensor_release(ai), tn_tensor_release(bi);
    }
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- mv / addmv / dot / vdot -------------------------------------------------------- */

static tn_status addmv_impl(tn_tensor *self, tn_tensor *mat, tn_tensor *vec, coef beta, coef alpha, tn_tensor **out) {
    if (mat->ndim != 2 || vec->ndim != 1 || (self && self->ndim > 1))
        return tn_error(TN_ERR_RUNTIME, "vector + matrix @ vector expected, got %d, %d, %d", self ? self->ndim : 1,
                        mat->ndim, vec->ndim);
    int64_t m = mat->sizes[0], k = mat->sizes[1];
    bool self_ok = !self || (self->ndim == 1 && (self->sizes[0] == m || self->sizes[0] == 1)) ||
                   self->ndim == 0; /* a 0-dim self broadcasts, as upstream's expand_size */
    if (!self_ok || vec->sizes[0] != k)
        return tn_error(TN_ERR_RUNTIME, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                        (long long)(self ? (self->ndim ? self->sizes[0] : 1) : m), (long long)m, (long long)k,
                        (long long)vec->sizes[0]);
    if ((self && self->dtype != mat->dtype) || mat->dtype != vec->dtype)
        return tn_error(TN_ERR_RUNTIME, "addmv input tensors must have the same dtype, but got %s, %s, and %s",
                        tn_dtype_infos[self ? self->dtype : mat->dtype].c10_name, tn_dtype_infos[mat->dtype].c10_name,
                        tn_dtype_infos[vec->dtype].c10_name);
    if (!tn_gemm_supports(mat->dtype)) return not_for_dtype("addmv_impl_cpu", mat->dtype);
    TN_TRY(new_out(1, &m, mat, out));
    bool use_self = self && !coef_zero(beta);
    tn_status st = use_self ? init_from_self(*out, self) : TN_OK;
    operand A = mat2d(mat), B = {.t = vec, .rs = vec->strides[0], .cs = 1}, C = {.t = *out, .rs = 1, .cs = 1};
    if (st == TN_OK) st = run_gemm(0, NULL, &A, &B, &C, m, 1, coef_zero(alpha) ? 0 : k, alpha, use_self ? beta : ZERO); /* (as addmm) */
    if (st != TN_OK) tn_tensor_release(*out);
    return st;
}

/* aten::mv(Tensor self, Tensor vec) -> Tensor */
tn_status tn_op_mv(const tn_value *args, tn_value *rets) {
    tn_tensor *out;
    int d0; /* upstream sizes its result by self.size(0) before addmv's checks */
    TN_TRY(tn_wrap_dim_strict(0, args[0].u.t->ndim, &d0));
    TN_TRY(addmv_impl(NULL, args[0].u.t, args[1].u.t, ZERO, ONE, &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor */
tn_status tn_op_addmv(const tn_value *args, tn_value *rets) {
    tn_tensor *out;
    TN_TRY(addmv_impl(args[0].u.t, args[1].u.t, args[2].u.t, coef_of(&args[3]), coef_of(&args[4]), &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

static tn_status dot_impl(tn_tensor *x, tn_tensor *y, bool conj, tn_tensor **out) {
    if (x->ndim != 1 || y->ndim != 1)
        return tn_error(TN_ERR_RUNTIME, "1D tensors expected, but got %dD and %dD tensors", x->ndim, y->ndim);
    if (x->dtype != y->dtype)
        return tn_error(TN_ERR_RUNTIME, "dot : expected both vectors to have same dtype, but found %s and %s",
                        tn_dtype_infos[x->dtype].c10_name, tn_dtype_infos[y->dtype].c10_name);
    if (x->sizes[0] != y->sizes[0])
        return tn_error(TN_ERR_RUNTIME,
                        "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of "
                        "elements, but got %lld and %lld elements respectively",
                        (long long)x->sizes[0], (long long)y->sizes[0], (long long)x->sizes[0], (long long)y->sizes[0]);
    if (!tn_gemm_supports(x->dtype)) return not_for_dtype("dot", x->dtype);
    TN_TRY(new_out(0, NULL, x, out));
    tn_tensor *xc = x;
    tn_status st = TN_OK;
    if (conj && tn_dtype_is_complex(x->dtype) && !is_meta(x)) {
        /* vdot conjugates its first argument: a conjugated contiguous copy of x. */
        st = tn_tensor_empty(1, x->sizes, x->dtype, tn_tensor_device(x), &xc);
        if (st == TN_OK) {
            tn_shape_copy_same_dtype(xc, x);
            int64_t n = x->sizes[0];
            if (x->dtype == TN_DTYPE_COMPLEX64)
                for (float *p = tn_tensor_data(xc); n-- > 0; p += 2) p[1] = -p[1];
            else
                for (double *p = tn_tensor_data(xc); n-- > 0; p += 2) p[1] = -p[1];
        }
    }
    operand A = {.t = xc, .rs = 1, .cs = xc->strides[0]}, B = {.t = y, .rs = y->strides[0], .cs = 1},
            C = {.t = *out, .rs = 1, .cs = 1};
    if (st == TN_OK) st = run_gemm(0, NULL, &A, &B, &C, 1, 1, x->sizes[0], ONE, ZERO);
    if (xc != x && st != TN_ERR_NO_MEMORY) tn_tensor_release(xc);
    if (st != TN_OK) tn_tensor_release(*out);
    return st;
}

/* aten::dot(Tensor self, Tensor tensor) -> Tensor */
tn_status tn_op_dot(const tn_value *args, tn_value *rets) {
    tn_tensor *out;
    TN_TRY(dot_impl(args[0].u.t, args[1].u.t, false, &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* aten::vdot(Tensor self, Tensor other) -> Tensor */
tn_status tn_op_vdot(const tn_value *args, tn_value *rets) {
    tn_tensor *out;
    TN_TRY(dot_impl(args[0].u.t, args[1].u.t, true, &out));
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- outer / ger: an elementwise product of a column and a row (upstream composes it
 * from mul, so type promotion and bool work as there) ---------------------------------- */

static tn_status outer_impl(tn_tensor *x, tn_tensor *y, const char *name, tn_value *rets) {
    if (x->ndim != 1) return tn_error(TN_ERR_RUNTIME, "%s: Expected 1-D argument self, but got %d-D", name, x->ndim);
    if (y->ndim != 1) return tn_error(TN_ERR_RUNTIME, "%s: Expected 1-D argument vec2, but got %d-D", name, y->ndim);
    int64_t cs[2] = {x->sizes[0], 1}, cst[2] = {x->strides[0], 0};
    tn_tensor *col = view_of(x, 0, 2, cs, cst);
    tn_value a[2] = {tn_value_tensor(col), tn_value_tensor(y)};
    tn_status st = tn_dispatch(TN_OP_mul_Tensor, a, rets);
    tn_tensor_release(col);
    return st;
}

/* aten::outer(Tensor self, Tensor vec2) -> Tensor */
tn_status tn_op_outer(const tn_value *args, tn_value *rets) { return outer_impl(args[0].u.t, args[1].u.t, "outer", rets); }
/* aten::ger(Tensor self, Tensor vec2) -> Tensor (deprecated alias of outer) */
tn_status tn_op_ger(const tn_value *args, tn_value *rets) { return outer_impl(args[0].u.t, args[1].u.t, "outer", rets); }

/* ---- matmul ------------------------------------------------------------------------- */

/* A tensor's last-two-dims transpose as a view (mT). */
static tn_tensor *mT(const tn_tensor *t) {
    int64_t s[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int n = t->ndim;
    memcpy(s, t->sizes, sizeof(int64_t) * (size_t)n), memcpy(st, t->strides, sizeof(int64_t) * (size_t)n);
    if (n >= 2) {
        int64_t x = s[n - 1]; s[n - 1] = s[n - 2]; s[n - 2] = x;
        x = st[n - 1]; st[n - 1] = st[n - 2]; st[n - 2] = x;
    }
    return view_of(t, 0, n, s, st);
}

/* upstream's should_fold for has_out == false and no input requiring grad (wave 1 has no
 * autograd; when it lands, a requires_grad t2 must fold too, copying t1 if needed). */
static bool should_fold(const tn_tensor *t1_, const tn_tensor *t2_) {
    bool larger = t1_->ndim >= t2_->ndim;
    int dim_t1 = larger ? t1_->ndim : t2_->ndim, dim_t2 = larger ? t2_->ndim : t1_->ndim;
    if (!(dim_t1 >= 3 && dim_t2 <= 2)) return false;
    if (t1_->ndim == 2) return false;
    const tn_tensor *big = larger ? t1_ : t2_;
    if (tn_tensor_numel(big) == 0) return true;
    /* big.mT() keeps the leading dims, so their contiguity test reads big's strides. */
    for (int i = 0; i < dim_t1 - 2; i++) {
        int64_t next_size = i + 1 < dim_t1 - 2 ? big->sizes[i + 1] : (larger ? big->sizes[dim_t1 - 2] : big->sizes[dim_t1 - 1]);
        int64_t next_stride = i + 1 < dim_t1 - 2 ? big->strides[i + 1] : (larger ? big->strides[dim_t1 - 2] : big->strides[dim_t1 - 1]);
        if (big->strides[i] != next_stride * next_size) return false;
    }
    return true;
}

static tn_status reshape_result(tn_tensor *r, int ndim, const int64_t *sizes, tn_value *ret) {
    /* r is a fresh contiguous tensor: any same-numel shape is a view of it. */
    int64_t st[TN_MAX_DIMS];
    tn_contiguous_strides(ndim, sizes, st);
    tn_tensor *v = view_of(r, 0, ndim, sizes, st);
    tn_tensor_release(r);
    if (!v) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    *ret = tn_value_tensor(v);
    return TN_OK;
}

/* aten::matmul(Tensor self, Tensor other) -> Tensor — upstream's _matmul_impl case by case:
 * dot, mv, vector·matrix, mm, folding the batch of the larger operand into mm/mv when that
 * is a view, and otherwise a broadcast batched product (expanded operands are read in
 * place through stride-0 batch dims instead of being materialised). */
tn_status tn_op_matmul(const tn_value *args, tn_value *rets) {
    tn_tensor *t1 = args[0].u.t, *t2 = args[1].u.t, *out;
    int d1 = t1->ndim, d2 = t2->ndim;
    if (d1 == 0 || d2 == 0)
        return tn_error(TN_ERR_RUNTIME, "both arguments to matmul need to be at least 1D, but they are %dD and %dD", d1, d2);
    if (d1 == 1 && d2 == 1) return tn_op_dot(args, rets);
    if (d1 == 2 && d2 == 1) return tn_op_mv(args, rets);
    if (d1 == 1 && d2 == 2) {
        int64_t s[2] = {1, t1->sizes[0]}, st[2] = {0, t1->strides[0]};
        tn_tensor *row = view_of(t1, 0, 2, s, st);
        tn_value a[2] = {tn_value_tensor(row), tn_value_tensor(t2)};
        tn_status r = tn_op_mm(a, rets);
        tn_tensor_release(row);
        if (r != TN_OK) return r;
        return reshape_result(rets[0].u.t, 1, &rets[0].u.t->sizes[1], rets);
    }
    if (d1 == 2 && d2 == 2) return tn_op_mm(args, rets);
    if (should_fold(t1, t2)) {
        bool transpose = d2 > d1;
        tn_tensor *a = transpose ? mT(t2) : t1, *b = transpose ? t1 : t2; /* here d1 == 1 when transposed */
        int64_t osz[TN_MAX_DIMS], folded = 1;
        int on = a->ndim - 1;
        for (int i = 0; i < on; i++) osz[i] = a->sizes[i], folded *= a->sizes[i];
        if (b->ndim == 2) osz[on++] = b->sizes[1];
        int64_t fs[2] = {folded, a->sizes[a->ndim - 1]}, fst[2];
        if (!tn_view_strides(a->ndim, a->sizes, a->strides, 2, fs, fst)) {
            if (transpose) tn_tensor_release(a);
            return tn_error(TN_ERR_RUNTIME, "matmul: internal error: fold is not a view");
        }
        tn_tensor *af = view_of(a, 0, 2, fs, fst);
        tn_value x[2] = {tn_value_tensor(af), tn_value_tensor(b)};
        tn_status st = b->ndim == 2 ? tn_op_mm(x, rets) : tn_op_mv(x, rets);
        tn_tensor_release(af);
        if (transpose) tn_tensor_release(a);
        if (st != TN_OK) return st;
        return reshape_result(rets[0].u.t, on, osz, rets);
        /* (transpose with a 2-D t1 never folds, so the result never needs the mT copy.) */
    }
    /* Broadcast batched product. */
    int64_t n = d1 > 1 ? t1->sizes[d1 - 2] : 1, m1 = t1->sizes[d1 - 1];
    int64_t m2 = d2 > 1 ? t2->sizes[d2 - 2] : t2->sizes[0], p = d2 > 1 ? t2->sizes[d2 - 1] : 1;
    int nb1 = d1 > 2 ? d1 - 2 : 0, nb2 = d2 > 2 ? d2 - 2 : 0, nb;
    int64_t bsz[TN_MAX_DIMS];
    TN_TRY(tn_shape_broadcast(nb1, t1->sizes, nb2, t2->sizes, &nb, bsz));
    if (m1 != m2) {
        /* upstream reaches bmm with expanded operands; its message names the folded shapes. */
        int64_t total = 1;
        for (int i = 0; i < nb; i++) total *= bsz[i];
        char b1[64], b2[64];
        int64_t want[2] = {total, m1}, got[2] = {total, m2};
        return tn_error(TN_ERR_RUNTIME, "Expected size for first two dimensions of batch2 tensor to be: %s but got: %s.",
                        tn_format_sizes(2, want, b1, sizeof b1), tn_format_sizes(2, got, b2, sizeof b2));
    }
    if (t1->dtype != t2->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_dtype_infos[t1->dtype].c10_name,
                        tn_dtype_infos[t2->dtype].c10_name);
    if (!tn_gemm_supports(t1->dtype)) return not_for_dtype("bmm", t1->dtype);
    int64_t osz[TN_MAX_DIMS];
    int on = nb;
    memcpy(osz, bsz, sizeof(int64_t) * (size_t)nb);
    if (d1 > 1) osz[on++] = n;
    if (d2 > 1) osz[on++] = p;
    TN_TRY(new_out(on, osz, t1, &out));
    operand A = {.t = t1, .rs = d1 > 1 ? t1->strides[d1 - 2] : 0, .cs = t1->strides[d1 - 1]};
    operand B = {.t = t2, .rs = d2 > 1 ? t2->strides[d2 - 2] : t2->strides[0], .cs = d2 > 1 ? t2->strides[d2 - 1] : 0};
    int64_t ocs[TN_MAX_DIMS];
    tn_contiguous_strides(on, osz, ocs);
    operand C = {.t = out, .rs = d1 > 1 ? ocs[nb] : 0, .cs = d2 > 1 ? ocs[on - 1] : 0};
    for (int i = 0; i < nb; i++) {
        int i1 = i - (nb - nb1), i2 = i - (nb - nb2);
        A.bs[i] = i1 >= 0 && t1->sizes[i1] != 1 ? t1->strides[i1] : 0;
        B.bs[i] = i2 >= 0 && t2->sizes[i2] != 1 ? t2->strides[i2] : 0;
        C.bs[i] = ocs[i];
    }
    tn_status st = run_gemm(nb, bsz, &A, &B, &C, n, p, m1, ONE, ZERO);
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- linear ------------------------------------------------------------------------- */

/* aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor — upstream's
 * decomposition: addmm for 2-D input with bias, addmm on the flattened input when it is
 * contiguous (bias fused, one rounding), otherwise matmul(input, weight.t()) then add_. */
tn_status tn_op_linear(const tn_value *args, tn_value *rets) {
    tn_tensor *input = args[0].u.t, *weight = args[1].u.t;
    tn_tensor *bias = args[2].tag == TN_V_TENSOR ? args[2].u.t : NULL;
    tn_tensor *wt = weight->ndim == 2 ? mT(weight) : (tn_tensor_retain(weight), weight);
    if (weight->ndim > 2) {
        tn_tensor_release(wt);
        return tn_error(TN_ERR_RUNTIME, "t() expects a tensor with <= 2 dimensions, but self is %dD", weight->ndim);
    }
    tn_status st;
    if (bias && input->ndim == 2) {
        tn_value a[5] = {tn_value_tensor(bias), tn_value_tensor(input), tn_value_tensor(wt), tn_value_int(1), tn_value_int(1)};
        st = tn_op_addmm(a, rets);
        tn_tensor_release(wt);
        return st;
    }
    if (bias && tn_tensor_is_contiguous(input) && input->ndim >= 2 && (input->ndim == 3 || bias->ndim == 1)) {
        int64_t fs[2] = {tn_tensor_numel(input) / (input->sizes[input->ndim - 1] ? input->sizes[input->ndim - 1] : 1),
                         input->sizes[input->ndim - 1]}, fst[2] = {fs[1], 1};
        if (fs[1] == 0) { /* view(-1, 0) is ambiguous upstream too; flatten by the leading dims */
            fs[0] = 1;
            for (int i = 0; i < input->ndim - 1; i++) fs[0] *= input->sizes[i];
        }
        tn_tensor *flat = view_of(input, 0, 2, fs, fst);
        tn_value a[5] = {tn_value_tensor(bias), tn_value_tensor(flat), tn_value_tensor(wt), tn_value_int(1), tn_value_int(1)};
        st = tn_op_addmm(a, rets);
        tn_tensor_release(flat);
        tn_tensor_release(wt);
        if (st != TN_OK) return st;
        int64_t osz[TN_MAX_DIMS];
        memcpy(osz, input->sizes, sizeof(int64_t) * (size_t)input->ndim);
        osz[input->ndim - 1] = rets[0].u.t->sizes[1];
        return reshape_result(rets[0].u.t, input->ndim, osz, rets);
    }
    tn_value a[2] = {tn_value_tensor(input), tn_value_tensor(wt)};
    st = tn_op_matmul(a, rets);
    tn_tensor_release(wt);
    if (st != TN_OK || !bias) return st;
    tn_value b[3] = {rets[0], tn_value_tensor(bias), tn_value_int(1)}, r[1];
    st = tn_dispatch(TN_OP_add__Tensor, b, r);
    if (st != TN_OK) { tn_tensor_release(rets[0].u.t); return st; }
    tn_tensor_release(r[0].u.t);
    return TN_OK;
}
