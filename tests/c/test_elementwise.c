/* test_elementwise.c — the elementwise engine and ops: promotion spot checks against
 * values dumped from upstream torch 2.13.0, broadcasting and its error text, output
 * layout rules, casts, integer/float op semantics, copy_/fill_/where/masked_fill, and
 * sizes crossing vector widths (1, 7, 31, 33, 1000+) on contiguous and strided inputs. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cast.h"
#include "kernels/elementwise.h"
#include "kernels/ew_simd.h"
#include "ops/dispatch.h"
#include "ops/iter.h"
#include "ops/promote.h"
#include "tn_test.h"

#define CPU tn_device_cpu()

static tn_tensor *vec_f32(int n, const float *vals) {
    int64_t s = n;
    tn_tensor *t;
    tn_tensor_empty(1, &s, TN_DTYPE_FLOAT32, CPU, &t);
    memcpy(tn_tensor_data(t), vals, sizeof(float) * (size_t)n);
    return t;
}

static tn_tensor *mat(tn_dtype d, int64_t r, int64_t c) {
    int64_t s[2] = {r, c};
    tn_tensor *t;
    tn_tensor_empty(2, s, d, CPU, &t);
    return t;
}

static tn_tensor *transposed(tn_tensor *t) {
    int64_t s[2] = {t->sizes[1], t->sizes[0]}, st[2] = {t->strides[1], t->strides[0]};
    return tn_tensor_new_view(t->storage, t->offset, 2, s, st, t->dtype);
}

static float f32_at(const tn_tensor *t, int64_t i, int64_t j) {
    return ((const float *)tn_tensor_data(t))[i * t->strides[0] + j * t->strides[1]];
}

static tn_status call2(tn_op_id op, tn_value a, tn_value b, tn_value *r) {
    tn_value args[2] = {a, b};
    return tn_dispatch(op, args, r);
}

static void test_promotion(void) {
    tn_dtype d;
    struct { tn_dtype a, b, want; } cases[] = {
        {TN_DTYPE_UINT8, TN_DTYPE_INT8, TN_DTYPE_INT16},      {TN_DTYPE_BFLOAT16, TN_DTYPE_FLOAT16, TN_DTYPE_FLOAT32},
        {TN_DTYPE_UINT16, TN_DTYPE_FLOAT16, TN_DTYPE_FLOAT16}, {TN_DTYPE_COMPLEX32, TN_DTYPE_FLOAT32, TN_DTYPE_COMPLEX64},
        {TN_DTYPE_COMPLEX32, TN_DTYPE_BFLOAT16, TN_DTYPE_COMPLEX64}, {TN_DTYPE_BOOL, TN_DTYPE_INT8, TN_DTYPE_INT8},
        {TN_DTYPE_INT64, TN_DTYPE_FLOAT16, TN_DTYPE_FLOAT16},  {TN_DTYPE_UINT8, TN_DTYPE_BFLOAT16, TN_DTYPE_BFLOAT16},
        {TN_DTYPE_FLOAT64, TN_DTYPE_COMPLEX64, TN_DTYPE_COMPLEX128}, {TN_DTYPE_UINT64, TN_DTYPE_BFLOAT16, TN_DTYPE_BFLOAT16},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        TN_CHECK(tn_promote_types(cases[k].a, cases[k].b, &d) == TN_OK && d == cases[k].want, "promote %s %s",
                 tn_dtype_infos[cases[k].a].c10_name, tn_dtype_infos[cases[k].b].c10_name);
    }
    TN_CHECK(tn_promote_types(TN_DTYPE_UINT16, TN_DTYPE_BOOL, &d) == TN_ERR_RUNTIME &&
                 strstr(tn_error_message(), "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote UInt16 and Bool"),
             "uint16+bool refused: %s", tn_error_message());
    TN_CHECK(tn_promote_types(TN_DTYPE_FLOAT8_E5M2, TN_DTYPE_FLOAT32, &d) == TN_ERR_RUNTIME, "float8 refused");

    /* result_type: dimensioned tensor vs 0-dim vs Python scalar (values from upstream). */
    int64_t two = 2;
    tn_tensor *i32, *f16, *b8, *z64;
    tn_tensor_empty(1, &two, TN_DTYPE_INT32, CPU, &i32);
    tn_tensor_empty(1, &two, TN_DTYPE_FLOAT16, CPU, &f16);
    tn_tensor_empty(1, &two, TN_DTYPE_BOOL, CPU, &b8);
    tn_tensor_empty(0, NULL, TN_DTYPE_FLOAT64, CPU, &z64);
    tn_value c1[2] = {tn_value_tensor(i32), tn_value_double(1.5)};
    TN_CHECK(tn_result_type(2, c1, &d) == TN_OK && d == TN_DTYPE_FLOAT32, "int32 tensor + float -> Float");
    tn_value c2[2] = {tn_value_tensor(f16), tn_value_tensor(z64)};
    TN_CHECK(tn_result_type(2, c2, &d) == TN_OK && d == TN_DTYPE_FLOAT16, "half + 0-dim double -> Half");
    tn_value c3[2] = {tn_value_tensor(b8), tn_value_int(3)};
    TN_CHECK(tn_result_type(2, c3, &d) == TN_OK && d == TN_DTYPE_INT64, "bool + int -> Long");
    tn_value c4[2] = {tn_value_tensor(f16), {.tag = TN_V_COMPLEX}};
    TN_CHECK(tn_result_type(2, c4, &d) == TN_OK && d == TN_DTYPE_COMPLEX32, "half + complex -> ComplexHalf");
    tn_value c5[2] = {tn_value_tensor(i32), tn_value_tensor(z64)};
    TN_CHECK(tn_result_type(2, c5, &d) == TN_OK && d == TN_DTYPE_FLOAT64, "int32 + 0-dim double -> Double");
    tn_tensor_release(i32); tn_tensor_release(f16); tn_tensor_release(b8); tn_tensor_release(z64);
}

static void test_broadcast_error(void) {
    int64_t a = 3, b = 4;
    int n;
    int64_t out[TN_MAX_DIMS];
    TN_CHECK(tn_broadcast_shapes(1, &a, 1, &b, &n, out) == TN_ERR_RUNTIME &&
                 strcmp(tn_error_message(), "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0") == 0,
             "%s", tn_error_message());
    int64_t x[2] = {1, 3}, y[2] = {4, 1};
    TN_CHECK(tn_broadcast_shapes(2, x, 2, y, &n, out) == TN_OK && n == 2 && out[0] == 4 && out[1] == 3, "1x3 with 4x1");
}

/* add over sizes crossing vector widths, contiguous and transposed, against a direct sum. */
static void test_add_sizes(void) {
    int64_t sizes[] = {1, 7, 31, 33, 1000, 1031};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t n = sizes[k];
        tn_tensor *a = mat(TN_DTYPE_FLOAT32, 3, n), *b = mat(TN_DTYPE_FLOAT32, n, 3);
        float *pa = tn_tensor_data(a), *pb = tn_tensor_data(b);
        for (int64_t i = 0; i < 3 * n; i++) { pa[i] = (float)i * 0.25f - 7.0f; pb[i] = 1.0f / (float)(i + 1); }
        tn_tensor *bt = transposed(b); /* 3 x n, strided */
        tn_value r;
        tn_value args[3] = {tn_value_tensor(a), tn_value_tensor(bt), tn_value_int(1)};
        TN_CHECK(tn_dispatch(TN_OP_add_Tensor, args, &r) == TN_OK, "add n=%lld: %s", (long long)n, tn_error_message());
        int bad = 0;
        for (int64_t i = 0; i < 3; i++)
            for (int64_t j = 0; j < n; j++)
                if (f32_at(r.u.t, i, j) != pa[i * n + j] + pb[j * 3 + i]) bad++;
        TN_CHECK(bad == 0, "add n=%lld: %d wrong", (long long)n, bad);
        /* First input contiguous: output contiguous (upstream's layout rule). */
        TN_CHECK(r.u.t->strides[1] == 1, "output follows first input layout");
        tn_tensor_release(r.u.t);
        /* Both transposed: the output is transposed too. */
        tn_tensor *at = transposed(a);
        tn_value args2[3] = {tn_value_tensor(at), tn_value_tensor(b), tn_value_int(2)};
        TN_CHECK(tn_dispatch(TN_OP_add_Tensor, args2, &r) == TN_OK, "add alpha");
        bad = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < 3; j++)
                if (f32_at(r.u.t, i, j) != fmaf(pb[i * 3 + j], 2.0f, pa[j * n + i])) bad++;
        TN_CHECK(bad == 0, "add alpha=2 n=%lld: %d wrong", (long long)n, bad);
        if (n > 1) TN_CHECK(r.u.t->strides[0] == 1 && r.u.t->strides[1] == n, "transposed inputs, transposed output");
        tn_tensor_release(r.u.t);
        tn_tensor_release(at); tn_tensor_release(bt); tn_tensor_release(a); tn_tensor_release(b);
    }
}

static void test_layouts(void) {
    /* ones(3,4).t() + 1 -> strides (1, 4); ones(4,3) + ones(3,4).t() -> (3, 1) (upstream). */
    tn_tensor *a = mat(TN_DTYPE_FLOAT32, 3, 4), *c = mat(TN_DTYPE_FLOAT32, 4, 3);
    tn_tensor *at = transposed(a);
    tn_value r;
    TN_CHECK(call2(TN_OP_mul_Tensor, tn_value_tensor(at), tn_value_double(2.0), &r) == TN_OK, "mul scalar");
    TN_CHECK(r.u.t->strides[0] == 1 && r.u.t->strides[1] == 4 && r.u.t->dtype == TN_DTYPE_FLOAT32, "t()*2 strides (1,4)");
    tn_tensor_release(r.u.t);
    TN_CHECK(call2(TN_OP_mul_Tensor, tn_value_tensor(c), tn_value_tensor(at), &r) == TN_OK, "mul");
    TN_CHECK(r.u.t->strides[0] == 3 && r.u.t->strides[1] == 1, "first operand wins ties");
    tn_tensor_release(r.u.t);
    tn_tensor_release(at); tn_tensor_release(a); tn_tensor_release(c);

    /* 0-dim and empty. */
    tn_tensor *z, *e;
    tn_tensor_empty(0, NULL, TN_DTYPE_FLOAT32, CPU, &z);
    *(float *)tn_tensor_data(z) = 3.0f;
    TN_CHECK(call2(TN_OP_mul_Tensor, tn_value_tensor(z), tn_value_int(2), &r) == TN_OK && r.u.t->ndim == 0 &&
                 *(float *)tn_tensor_data(r.u.t) == 6.0f, "0-dim");
    tn_tensor_release(r.u.t);
    int64_t es[2] = {0, 5};
    tn_tensor_empty(2, es, TN_DTYPE_FLOAT32, CPU, &e);
    TN_CHECK(call2(TN_OP_mul_Tensor, tn_value_tensor(e), tn_value_tensor(z), &r) == TN_OK && r.u.t->ndim == 2 &&
                 r.u.t->sizes[0] == 0 && r.u.t->sizes[1] == 5, "empty");
    tn_tensor_release(r.u.t);
    tn_tensor_release(z); tn_tensor_release(e);

    /* meta: shapes only. */
    int64_t ms[2] = {2, 3};
    tn_tensor *m;
    tn_tensor_empty(2, ms, TN_DTYPE_BFLOAT16, (tn_device){TN_DEVICE_META, -1}, &m);
    tn_value a3[3] = {tn_value_tensor(m), tn_value_double(1.0), tn_value_int(1)};
    TN_CHECK(tn_dispatch(TN_OP_add_Scalar, a3, &r) == TN_OK && tn_tensor_is_meta(r.u.t) && r.u.t->dtype == TN_DTYPE_BFLOAT16,
             "meta add: %s", tn_error_message());
    tn_tensor_release(r.u.t);
    tn_tensor_release(m);
}

static void test_casts(void) {
    /* Values from upstream: float -> narrow ints through the 32-bit conversion. */
    const double src[] = {300.5, -1.5, 1e10, NAN, INFINITY, -129.7};
    const int64_t want_u8[] = {44, 255, 0, 0, 0, 127}, want_i32[] = {300, -1, INT32_MIN, INT32_MIN, INT32_MIN, -129};
    const uint64_t want_u64[] = {300, UINT64_MAX, 10000000000ull, 1ull << 63, 0, UINT64_MAX - 128};
    for (int k = 0; k < 6; k++) {
        uint8_t u8; int32_t i32; uint64_t u64;
        char *d[2] = {(char *)&u8, (char *)&src[k]};
        int64_t st[2] = {1, 8};
        tn_cast_loop(TN_DTYPE_FLOAT64, TN_DTYPE_UINT8)(d, st, 1, NULL);
        d[0] = (char *)&i32;
        tn_cast_loop(TN_DTYPE_FLOAT64, TN_DTYPE_INT32)(d, st, 1, NULL);
        d[0] = (char *)&u64;
        tn_cast_loop(TN_DTYPE_FLOAT64, TN_DTYPE_UINT64)(d, st, 1, NULL);
        TN_CHECK(u8 == want_u8[k] && i32 == want_i32[k] && u64 == want_u64[k], "cast %g: %u %d %llu", src[k], u8, i32,
                 (unsigned long long)u64);
    }
    /* double -> bfloat16 rounds through float (1.0000000596 -> 1.0). */
    double x = 1.0000000596046448;
    uint16_t h;
    char *d[2] = {(char *)&h, (char *)&x};
    int64_t st[2] = {2, 8};
    tn_cast_loop(TN_DTYPE_FLOAT64, TN_DTYPE_BFLOAT16)(d, st, 1, NULL);
    TN_CHECK(h == 0x3F80, "double->bf16 %04x", h);
}

static void test_int_semantics(void) {
    int64_t n = 4;
    tn_tensor *a, *b;
    tn_tensor_empty(1, &n, TN_DTYPE_INT64, CPU, &a);
    tn_tensor_empty(1, &n, TN_DTYPE_INT64, CPU, &b);
    int64_t av[4] = {7, -7, 7, -7}, bv[4] = {2, 2, -2, -2};
    memcpy(tn_tensor_data(a), av, 32);
    memcpy(tn_tensor_data(b), bv, 32);
    tn_value r;
    TN_CHECK(call2(TN_OP_floor_divide, tn_value_tensor(a), tn_value_tensor(b), &r) == TN_OK, "floor_divide");
    int64_t *q = tn_tensor_data(r.u.t);
    TN_CHECK(q[0] == 3 && q[1] == -4 && q[2] == -4 && q[3] == 3, "floor_divide values");
    tn_tensor_release(r.u.t);
    TN_CHECK(call2(TN_OP_remainder_Tensor, tn_value_tensor(a), tn_value_tensor(b), &r) == TN_OK, "remainder");
    q = tn_tensor_data(r.u.t);
    TN_CHECK(q[0] == 1 && q[1] == 1 && q[2] == -1 && q[3] == -1, "remainder values");
    tn_tensor_release(r.u.t);
    TN_CHECK(call2(TN_OP_div_Tensor, tn_value_tensor(a), tn_value_tensor(b), &r) == TN_OK && r.u.t->dtype == TN_DTYPE_FLOAT32 &&
                 ((float *)tn_tensor_data(r.u.t))[1] == -3.5f, "int true division -> float");
    tn_tensor_release(r.u.t);
    bv[1] = 0;
    memcpy(tn_tensor_data(b), bv, 32);
    TN_CHECK(call2(TN_OP_floor_divide, tn_value_tensor(a), tn_value_tensor(b), &r) == TN_ERR_RUNTIME &&
                 strcmp(tn_error_message(), "ZeroDivisionError") == 0, "ZeroDivisionError");
    /* int8 wraps: 100 * 3 = 44; abs(-128) = -128 (upstream). */
    int64_t one = 1;
    tn_tensor *i8;
    tn_tensor_empty(1, &one, TN_DTYPE_INT8, CPU, &i8);
    *(int8_t *)tn_tensor_data(i8) = 100;
    TN_CHECK(call2(TN_OP_mul_Tensor, tn_value_tensor(i8), tn_value_int(3), &r) == TN_OK && r.u.t->dtype == TN_DTYPE_INT8 &&
                 *(int8_t *)tn_tensor_data(r.u.t) == 44, "int8 wrap");
    tn_tensor_release(r.u.t);
    /* bool - bool is refused with upstream's text. */
    tn_tensor *bb;
    tn_tensor_zeros(1, &one, TN_DTYPE_BOOL, CPU, &bb);
    tn_value sargs[3] = {tn_value_tensor(bb), tn_value_tensor(bb), tn_value_int(1)};
    TN_CHECK(tn_dispatch(TN_OP_sub_Tensor, sargs, &r) == TN_ERR_RUNTIME && strstr(tn_error_message(), "with two bool tensors"),
             "bool sub");
    tn_value na[1] = {tn_value_tensor(bb)};
    TN_CHECK(tn_dispatch(TN_OP_abs, na, &r) == TN_ERR_NOT_IMPLEMENTED &&
                 strcmp(tn_error_message(), "\"abs_cpu\" not implemented for 'Bool'") == 0, "%s", tn_error_message());
    tn_tensor_release(bb); tn_tensor_release(i8); tn_tensor_release(a); tn_tensor_release(b);
}

static void test_float_semantics(void) {
    /* bf16 add/mul/div bit patterns from upstream. */
    int64_t n = 3;
    tn_tensor *x, *y;
    tn_tensor_empty(1, &n, TN_DTYPE_BFLOAT16, CPU, &x);
    tn_tensor_empty(1, &n, TN_DTYPE_BFLOAT16, CPU, &y);
    float xv[3] = {1.0f, 2.5f, -3.25f}, yv[3] = {0.1f, 0.2f, 0.3f};
    for (int i = 0; i < 3; i++) {
        ((uint16_t *)tn_tensor_data(x))[i] = tn_f32_to_bf16(xv[i]);
        ((uint16_t *)tn_tensor_data(y))[i] = tn_f32_to_bf16(yv[i]);
    }
    const int16_t want[3][3] = {{16269, 16429, -16323}, {15821, 16128, -16518}, {16672, 16712, -16083}};
    tn_op_id ops[3] = {TN_OP_add_Tensor, TN_OP_mul_Tensor, TN_OP_div_Tensor};
    for (int k = 0; k < 3; k++) {
        tn_value args[3] = {tn_value_tensor(x), tn_value_tensor(y), tn_value_int(1)}, r;
        TN_CHECK(tn_dispatch(ops[k], args, &r) == TN_OK, "bf16 op %d", k);
        const int16_t *p = tn_tensor_data(r.u.t);
        TN_CHECK(p[0] == want[k][0] && p[1] == want[k][1] && p[2] == want[k][2], "bf16 op %d bits %d %d %d", k, p[0], p[1], p[2]);
        tn_tensor_release(r.u.t);
    }
    /* relu keeps -0.0 and NaN; maximum propagates NaN; sign(NaN) = 0 (upstream). */
    float v[4] = {NAN, -0.0f, -2.5f, 2.5f};
    tn_tensor *t = vec_f32(4, v);
    tn_value a1[1] = {tn_value_tensor(t)}, r;
    TN_CHECK(tn_dispatch(TN_OP_relu, a1, &r) == TN_OK, "relu");
    float *o = tn_tensor_data(r.u.t);
    TN_CHECK(isnan(o[0]) && o[1] == 0 && signbit(o[1]) && o[2] == 0 && o[3] == 2.5f, "relu values");
    tn_tensor_release(r.u.t);
    TN_CHECK(tn_dispatch(TN_OP_sign, a1, &r) == TN_OK, "sign");
    o = tn_tensor_data(r.u.t);
    TN_CHECK(o[0] == 0 && o[1] == 0 && o[2] == -1 && o[3] == 1, "sign values");
    tn_tensor_release(r.u.t);
    /* pow(x, 2) is x*x exactly; pow(x, 0.5) is sqrt. */
    TN_CHECK(call2(TN_OP_pow_Tensor_Scalar, tn_value_tensor(t), tn_value_int(2), &r) == TN_OK, "pow 2");
    o = tn_tensor_data(r.u.t);
    TN_CHECK(o[2] == 6.25f && o[3] == 6.25f, "pow 2 values");
    tn_tensor_release(r.u.t);
    /* Comparisons return Bool. */
    TN_CHECK(call2(TN_OP_gt_Scalar, tn_value_tensor(t), tn_value_int(0), &r) == TN_OK && r.u.t->dtype == TN_DTYPE_BOOL, "gt");
    const uint8_t *bo = tn_tensor_data(r.u.t);
    TN_CHECK(bo[0] == 0 && bo[1] == 0 && bo[2] == 0 && bo[3] == 1, "gt values");
    tn_tensor_release(r.u.t);
    tn_tensor_release(t); tn_tensor_release(x); tn_tensor_release(y);
}

static void test_copy_fill_where(void) {
    /* copy_ broadcasts src into self and converts dtype. */
    tn_tensor *dst = mat(TN_DTYPE_INT32, 2, 3);
    float sv[3] = {1.9f, -2.9f, 3.5f};
    tn_tensor *src = vec_f32(3, sv);
    tn_value a[3] = {tn_value_tensor(dst), tn_value_tensor(src), tn_value_bool(false)}, r;
    TN_CHECK(tn_dispatch(TN_OP_copy_, a, &r) == TN_OK, "copy_");
    const int32_t *p = tn_tensor_data(dst);
    TN_CHECK(p[0] == 1 && p[1] == -2 && p[2] == 3 && p[3] == 1 && p[5] == 3, "copy_ values");
    tn_tensor_release(r.u.t);
    tn_value bad[3] = {tn_value_tensor(src), tn_value_tensor(dst), tn_value_bool(false)};
    TN_CHECK(tn_dispatch(TN_OP_copy_, bad, &r) == TN_ERR_RUNTIME &&
                 strcmp(tn_error_message(), "output with shape [3] doesn't match the broadcast shape [2, 3]") == 0,
             "%s", tn_error_message());
    /* fill_ on a transposed view. */
    tn_tensor *dt = transposed(dst);
    tn_value f[2] = {tn_value_tensor(dt), tn_value_double(7.7)};
    TN_CHECK(tn_dispatch(TN_OP_fill__Scalar, f, &r) == TN_OK && p[4] == 7, "fill_");
    tn_tensor_release(r.u.t);
    /* in-place add through the door: the result lands in self. */
    tn_value ia[3] = {tn_value_tensor(dst), tn_value_int(1), tn_value_int(1)};
    TN_CHECK(tn_dispatch(TN_OP_add__Scalar, ia, &r) == TN_OK && p[0] == 8, "add_ via copy_: %s", tn_error_message());
    tn_tensor_release(r.u.t);
    /* where(cond, tensor, scalar) and masked_fill. */
    int64_t n = 3;
    tn_tensor *cond;
    tn_tensor_empty(1, &n, TN_DTYPE_BOOL, CPU, &cond);
    uint8_t cv[3] = {1, 0, 1};
    memcpy(tn_tensor_data(cond), cv, 3);
    tn_value w[3] = {tn_value_tensor(cond), tn_value_tensor(src), tn_value_int(-1)};
    TN_CHECK(tn_dispatch(TN_OP_where_ScalarOther, w, &r) == TN_OK && r.u.t->dtype == TN_DTYPE_FLOAT32, "where");
    const float *wo = tn_tensor_data(r.u.t);
    TN_CHECK(wo[0] == 1.9f && wo[1] == -1.0f && wo[2] == 3.5f, "where values");
    tn_tensor_release(r.u.t);
    tn_value m[3] = {tn_value_tensor(src), tn_value_tensor(cond), tn_value_double(-INFINITY)};
    TN_CHECK(tn_dispatch(TN_OP_masked_fill_Scalar, m, &r) == TN_OK, "masked_fill");
    wo = tn_tensor_data(r.u.t);
    TN_CHECK(isinf(wo[0]) && wo[1] == -2.9f && isinf(wo[2]), "masked_fill values");
    tn_tensor_release(r.u.t);
    tn_tensor_release(cond); tn_tensor_release(dt); tn_tensor_release(src); tn_tensor_release(dst);
}

static void test_unary_sizes(void) {
    /* exp / silu / gelu against libm in double, sizes crossing vector widths; strided input. */
    int64_t sizes[] = {1, 7, 31, 33, 1000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t n = sizes[k], n2 = 2 * n;
        tn_tensor *base;
        tn_tensor_empty(1, &n2, TN_DTYPE_FLOAT32, CPU, &base);
        float *pb = tn_tensor_data(base);
        for (int64_t i = 0; i < n2; i++) pb[i] = (float)(i % 17) * 0.37f - 3.0f;
        int64_t st = 2;
        tn_tensor *x = tn_tensor_new_view(base->storage, 0, 1, &n, &st, TN_DTYPE_FLOAT32);
        tn_value a[2] = {tn_value_tensor(x), {.tag = TN_V_STRING}}, r;
        a[1].u.s.data = "tanh";
        a[1].u.s.n = 4;
        TN_CHECK(tn_dispatch(TN_OP_silu, a, &r) == TN_OK, "silu");
        const float *o = tn_tensor_data(r.u.t);
        int bad = 0;
        for (int64_t i = 0; i < n; i++) {
            float v = pb[2 * i];
            if (o[i] != v / (1.0f + expf(-v))) bad++;
        }
        TN_CHECK(bad == 0 && r.u.t->strides[0] == 1, "silu n=%lld bad=%d", (long long)n, bad);
        tn_tensor_release(r.u.t);
        TN_CHECK(tn_dispatch(TN_OP_gelu, a, &r) == TN_OK, "gelu tanh");
        tn_tensor_release(r.u.t);
        tn_tensor_release(x); tn_tensor_release(base);
    }
}

/* ---- vector loops against the scalar references, every ISA tier ---------------------- */

#include "core/threadpool.h"
#include "kernels/cpu_features.h"

/* Deterministic inputs: a spread of magnitudes plus specials every few elements. */
static float ew_input(int64_t i, int kind) {
    static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -3e-39f, 88.7f, -103.5f, 1e30f, 0.5f, -2.5f};
    if (kind == 0 && i % 13 == 5) return specials[(i / 13) % 12];
    float v = (float)((i * 7919) % 2001 - 1000) / 97.0f; /* about [-10.3, 10.3] */
    if (kind == 1) v = fabsf(v) + 0.01f;                  /* positive domain */
    return v;
}

static void store_as(char *p, tn_dtype d, float v) {
    if (d == TN_DTYPE_FLOAT32) memcpy(p, &v, 4);
    else { uint16_t h = d == TN_DTYPE_BFLOAT16 ? tn_f32_to_bf16(v) : tn_f32_to_half(v); memcpy(p, &h, 2); }
}
static float load_as(const char *p, tn_dtype d) {
    if (d == TN_DTYPE_FLOAT32) { float v; memcpy(&v, p, 4); return v; }
    uint16_t h; memcpy(&h, p, 2);
    return d == TN_DTYPE_BFLOAT16 ? tn_bf16_to_f32(h) : tn_half_to_f32(h);
}

/* |got - want| within `ulps` units of the output dtype's last place (NaN matches NaN). */
static int ew_close(float got, float want, tn_dtype d, float ulps) {
    if (want != want) return got != got;
    if (isinf(want) || isinf(got)) return got == want;
    float eps = d == TN_DTYPE_FLOAT32 ? 0x1p-23f : d == TN_DTYPE_BFLOAT16 ? 0x1p-7f : 0x1p-10f;
    float tiny = d == TN_DTYPE_FLOAT32 ? 0x1p-126f : d == TN_DTYPE_BFLOAT16 ? 0x1p-126f : 0x1p-14f;
    return fabsf(got - want) <= ulps * eps * fmaxf(fabsf(want), tiny);
}

typedef struct { tn_ew_op op; int nin; int kind; float ulps; int mode; double d0; } ew_case;

static void run_ew_case(const ew_case *c, tn_dtype d, int64_t n, int bcast) {
    const bool bool_out = (c->op >= TN_EW_eq && c->op <= TN_EW_ge) || c->op == TN_EW_isnan || c->op == TN_EW_isinf ||
                          c->op == TN_EW_isfinite || c->op == TN_EW_isposinf || c->op == TN_EW_isneginf ||
                          c->op == TN_EW_logical_not;
    int es = tn_dtype_itemsize(d), oes = bool_out ? 1 : es;
    char *a = malloc((size_t)n * 4 + 64), *b = malloc((size_t)n * 4 + 64), *w = malloc((size_t)n * 4 + 64);
    char *o1 = calloc((size_t)n + 1, 4), *o2 = calloc((size_t)n + 1, 4), *o3 = calloc((size_t)n + 1, 4);
    for (int64_t i = 0; i < n; i++) {
        store_as(a + i * es, d, ew_input(i, c->kind));
        store_as(b + i * es, d, ew_input(i * 3 + 1, c->kind) * 0.5f + 0.25f);
        /* the third input (lerp's weight): about [-1, 1], both sides of |w| = 1/2, specials */
        store_as(w + i * es, d, i % 11 == 3 ? ew_input(i, 0) : ew_input(i * 5 + 2, 0) / 10.3f);
    }
    tn_loop_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.mode = c->mode;
    ctx.d[0] = c->d0;
    if (c->op == TN_EW_clamp) { ctx.has_min = ctx.has_max = true; ctx.d[0] = -1.5; ctx.d[1] = 2.25; }
    char *data[4] = {o1, a, b, w};
    int64_t st[4] = {oes, es, bcast ? 0 : es, es};
    tn_ew_loop_scalar(c->op, d)(data, st, n, &ctx);
    data[0] = o2;
    tn_loop_fn vec = tn_ew_loop(c->op, d);
    vec(data, st, n, &ctx);
    /* the same loop over uneven pieces: results must not depend on the split */
    for (int64_t b0 = 0, step = 1; b0 < n; b0 += step, step = step * 3 + 2) {
        int64_t len = b0 + step <= n ? step : n - b0;
        char *dp[4] = {o3 + b0 * oes, a + b0 * es, bcast ? b : b + b0 * es, w + b0 * es};
        vec(dp, st, len, &ctx);
    }
    int bad = 0, split = memcmp(o2, o3, (size_t)(n * oes)) != 0;
    for (int64_t i = 0; i < n && bad < 3; i++) {
        if (oes == 1) { if (o1[i] != o2[i]) bad++; continue; }
        float w = load_as(o1 + i * es, d), g = load_as(o2 + i * es, d);
        /* logaddexp cancels (max(x, y) near -log1p(e^-|x-y|) leaves a small sum): its error is
         * bounded by ulps of the larger input, not of the result (upstream's float kernel
         * cancels the same way) */
        /* gelu_tanh likewise: x/2 (1 + tanh u) cancels for negative x, so tanh's last place
         * (1 ulp of ours from libm's) is bounded by ulps of x/2, not of the result */
        float scale = c->op == TN_EW_logaddexp ? fmaxf(fabsf(load_as(a + i * es, d)), fabsf(load_as(b + (bcast ? 0 : i) * es, d)))
                      : c->op == TN_EW_gelu_tanh ? 0.5f * fabsf(load_as(a + i * es, d)) : 0;
        if (scale > 0 && fabsf(g - w) <= c->ulps * FLT_EPSILON * scale) continue;
        if (!ew_close(g, w, d, c->ulps)) {
            bad++;
            fprintf(stderr, "  %s %s n=%lld i=%lld x=%g: vec %.9g ref %.9g\n", tn_ew_name(c->op), tn_dtype_infos[d].c10_name,
                    (long long)n, (long long)i, (double)load_as(a + i * es, d), (double)g, (double)w);
        }
    }
    TN_CHECK(bad == 0 && !split, "%s %s n=%lld bcast=%d isa=%s bad=%d split=%d", tn_ew_name(c->op),
             tn_dtype_infos[d].c10_name, (long long)n, bcast, tn_isa_name(tn_cpu_isa()), bad, split);
    free(a); free(b); free(w); free(o1); free(o2); free(o3);
}

static void test_simd_vs_scalar(void) {
    /* ulps: 0 where both sides round the same correctly-rounded operations; the vector
     * exp/tanh are within ~2 ulp of libm; half types may round a near-tie differently. */
    const ew_case cases[] = {
        {TN_EW_exp, 1, 0, 4, 0, 0},        {TN_EW_sigmoid, 1, 0, 4, 0, 0},   {TN_EW_silu, 1, 0, 4, 0, 0},
        /* the float64-lane functions (ew_vec_dmath.inc): 1 ulp from libm's double, libm's
         * float ones 1 ulp from that; their sweeps are tests/c/test_ew_math.c */
        {TN_EW_expm1, 1, 0, 2, 0, 0},      {TN_EW_log1p, 1, 0, 2, 0, 0},     {TN_EW_sin, 1, 0, 2, 0, 0},
        {TN_EW_cos, 1, 0, 2, 0, 0},        {TN_EW_tan, 1, 0, 2, 0, 0},       {TN_EW_asin, 1, 0, 2, 0, 0},
        {TN_EW_acos, 1, 0, 2, 0, 0},       {TN_EW_atan, 1, 0, 2, 0, 0},      {TN_EW_sinh, 1, 0, 2, 0, 0},
        {TN_EW_cosh, 1, 0, 2, 0, 0},       {TN_EW_atanh, 1, 0, 2, 0, 0},     {TN_EW_erf, 1, 0, 2, 0, 0},
        {TN_EW_erfc, 1, 0, 2, 0, 0},       {TN_EW_erfinv, 1, 0, 2, 0, 0},    {TN_EW_angle, 1, 0, 0, 0, 0},
        {TN_EW_logit, 1, 0, 2, 0, 0},      {TN_EW_mish, 1, 0, 8, 0, 0},      {TN_EW_softplus, 1, 0, 8, 0, 1.5},
        {TN_EW_i0, 1, 0, 2, 0, 0},         {TN_EW_i0e, 1, 0, 2, 0, 0},       {TN_EW_i1, 1, 0, 2, 0, 0},
        {TN_EW_i1e, 1, 0, 2, 0, 0},        {TN_EW_log, 1, 1, 2, 0, 0},       {TN_EW_log2, 1, 1, 2, 0, 0},
        {TN_EW_log10, 1, 1, 2, 0, 0},      {TN_EW_exp2, 1, 0, 2, 0, 0},      {TN_EW_atan2, 2, 0, 2, 0, 0},
        {TN_EW_logaddexp, 2, 0, 2, 0, 0},  {TN_EW_nextafter, 2, 0, 0, 0, 0}, {TN_EW_frac, 1, 0, 0, 0, 0},      {TN_EW_nan_to_num, 1, 0, 0, 0, 0},
        {TN_EW_isnan, 1, 0, 0, 0, 0},      {TN_EW_isinf, 1, 0, 0, 0, 0},     {TN_EW_isfinite, 1, 0, 0, 0, 0},
        {TN_EW_isposinf, 1, 0, 0, 0, 0},   {TN_EW_isneginf, 1, 0, 0, 0, 0},  {TN_EW_logical_not, 1, 0, 0, 0, 0},
        {TN_EW_tanh, 1, 0, 4, 0, 0},       {TN_EW_gelu_tanh, 1, 0, 8, 0, 0}, {TN_EW_neg, 1, 0, 0, 0, 0},
        {TN_EW_abs, 1, 0, 0, 0, 0},        {TN_EW_relu, 1, 0, 0, 0, 0},      {TN_EW_square, 1, 0, 0, 0, 0},
        /* sqrt: 1 ulp, as float32 on AVX-512 takes MKL's sequence for upstream's bits (ew_avx512.c) */
        {TN_EW_sqrt, 1, 1, 1, 0, 0},       {TN_EW_rsqrt, 1, 1, 0, 0, 0},     {TN_EW_reciprocal, 1, 0, 0, 0, 0},
        {TN_EW_mul_scalar, 1, 0, 0, 0, 0.3}, {TN_EW_div_scalar, 1, 0, 0, 0, 0.3}, {TN_EW_clamp, 1, 0, 0, 0, 0},
        {TN_EW_pow_scalar, 1, 1, 0, 1, 0.5}, {TN_EW_pow_scalar, 1, 0, 0, 2, 2}, {TN_EW_pow_scalar, 1, 0, 0, 3, 3},
        {TN_EW_pow_scalar, 1, 1, 0, 4, -0.5}, {TN_EW_pow_scalar, 1, 0, 0, 5, -1}, {TN_EW_pow_scalar, 1, 0, 0, 6, -2},
        {TN_EW_pow_scalar, 1, 1, 2, 0, 1.7},
        {TN_EW_add, 2, 0, 0, 0, 1},        {TN_EW_add, 2, 0, 1, 1, 0.7},     {TN_EW_mul, 2, 0, 0, 0, 0},
        {TN_EW_div, 2, 0, 0, 0, 0},        {TN_EW_maximum, 2, 0, 0, 0, 0},   {TN_EW_minimum, 2, 0, 0, 0, 0},
        /* fmod is exact: the AVX2 loops (kernels/fmod_f32.c) must give fmodf's bits, and floor division the scalar row's */
        {TN_EW_fmod, 2, 0, 0, 0, 0},       {TN_EW_remainder, 2, 0, 0, 0, 0},  {TN_EW_div_floor, 2, 0, 0, 0, 0},
        {TN_EW_eq, 2, 0, 0, 0, 0}, {TN_EW_ne, 2, 0, 0, 0, 0}, {TN_EW_lt, 2, 0, 0, 0, 0},
        {TN_EW_le, 2, 0, 0, 0, 0}, {TN_EW_gt, 2, 0, 0, 0, 0}, {TN_EW_ge, 2, 0, 0, 0, 0},
        /* ternary (all three contiguous; bcast=1 checks the fallback to the reference) */
        {TN_EW_addcmul, 3, 0, 0, 0, 1},    {TN_EW_addcmul, 3, 0, 0, 0, -0.37}, {TN_EW_addcdiv, 3, 0, 0, 0, 0.6},
        {TN_EW_lerp, 3, 0, 0, 0, 0},
    };
    const int64_t sizes[] = {1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1000};
    const tn_dtype dts[] = {TN_DTYPE_FLOAT32, TN_DTYPE_BFLOAT16, TN_DTYPE_FLOAT16};
    tn_isa host = tn_cpu_isa();
    for (int isa = TN_ISA_SCALAR; isa <= (int)host; isa++) {
        tn_cpu_isa_set((tn_isa)isa);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (size_t di = 0; di < 3; di++)
                for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                    run_ew_case(&cases[c], dts[di], sizes[k], 0);
                    if (cases[c].nin >= 2) run_ew_case(&cases[c], dts[di], sizes[k], 1);
                }
    }
    tn_cpu_isa_set(host);
}

/* float32 <-> bfloat16 / float16 conversions: vector loops bit-identical to the scalar ones
 * (rounding ties, subnormals, inf, NaN -> canonical bfloat16 NaN). */
static void test_simd_casts(void) {
    const int64_t n = 4099;
    uint32_t *f = malloc(n * 4);
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)(i * 2654435761u);
        if (i % 5 == 0) u = (u & 0xFFFF0000u) | 0x8000u;       /* exact ties for bfloat16 */
        if (i % 11 == 0) u = 0x7F800000u | (u & 0x807FFFFFu);  /* inf / NaN payloads */
        if (i % 17 == 0) u &= 0x807FFFFFu;                     /* subnormals */
        if (i % 7 == 0) u = (u & 0x80000000u) | (0x38000000u + (u & 0x07FFFFFu)); /* float16 range */
        f[i] = u;
    }
    uint16_t *h1 = malloc(n * 2), *h2 = malloc(n * 2);
    uint32_t *g1 = malloc(n * 4), *g2 = malloc(n * 4);
    tn_isa host = tn_cpu_isa();
    const tn_dtype half[] = {TN_DTYPE_BFLOAT16, TN_DTYPE_FLOAT16};
    for (int isa = TN_ISA_SCALAR; isa <= (int)host; isa++) {
        tn_cpu_isa_set((tn_isa)isa);
        for (int k = 0; k < 2; k++) {
            int64_t s24[2] = {2, 4}, s42[2] = {4, 2};
            char *d1[2] = {(char *)h1, (char *)f}, *d2[2] = {(char *)h2, (char *)f};
            tn_cast_loop_scalar(TN_DTYPE_FLOAT32, half[k])(d1, s24, n, NULL);
            tn_cast_loop(TN_DTYPE_FLOAT32, half[k])(d2, s24, n, NULL);
            int bad = 0;
            for (int64_t i = 0; i < n; i++) {
                bool nan = (f[i] & 0x7FFFFFFFu) > 0x7F800000u;
                if (h1[i] != h2[i] && !(nan && k == 1 && (h2[i] & 0x7FFF) > 0x7C00)) bad++;
            }
            TN_CHECK(bad == 0, "f32->%s isa=%s bad=%d", tn_dtype_infos[half[k]].c10_name, tn_isa_name(tn_cpu_isa()), bad);
            char *e1[2] = {(char *)g1, (char *)h1}, *e2[2] = {(char *)g2, (char *)h1};
            tn_cast_loop_scalar(half[k], TN_DTYPE_FLOAT32)(e1, s42, n, NULL);
            tn_cast_loop(half[k], TN_DTYPE_FLOAT32)(e2, s42, n, NULL);
            bad = 0;
            for (int64_t i = 0; i < n; i++) {
                float a, b;
                memcpy(&a, &g1[i], 4); memcpy(&b, &g2[i], 4);
                if (g1[i] != g2[i] && !(a != a && b != b)) bad++;
            }
            TN_CHECK(bad == 0, "%s->f32 isa=%s bad=%d", tn_dtype_infos[half[k]].c10_name, tn_isa_name(tn_cpu_isa()), bad);
        }
    }
    tn_cpu_isa_set(host);
    /* float32 -> int32 / int16 / int8 / uint8 (session 30's vector rows): the scalar loop's
     * bytes at every tier, over the bit patterns above (NaN, inf, out of range, subnormal)
     * and a ramp of in-range values, lengths with tails */
    for (int64_t i = 0; i < n; i += 3) {
        float v = (float)(i - n / 2) * 37.25f; /* crosses the int8 / int16 wrap points */
        memcpy(&f[i], &v, 4);
    }
    const tn_dtype ints[] = {TN_DTYPE_INT32, TN_DTYPE_INT16, TN_DTYPE_INT8, TN_DTYPE_UINT8};
    char *q1 = malloc(n * 4), *q2 = malloc(n * 4);
    for (int isa = TN_ISA_SCALAR; isa <= (int)host; isa++) {
        tn_cpu_isa_set((tn_isa)isa);
        for (int k = 0; k < 4; k++)
            for (int64_t len = n - 3; len <= n; len++) {
                int64_t es = tn_dtype_itemsize(ints[k]), st[2] = {es, 4};
                char *d1[2] = {q1, (char *)f}, *d2[2] = {q2, (char *)f};
                memset(q1, 0x5A, n * 4); memset(q2, 0x5A, n * 4);
                tn_cast_loop_scalar(TN_DTYPE_FLOAT32, ints[k])(d1, st, len, NULL);
                tn_cast_loop(TN_DTYPE_FLOAT32, ints[k])(d2, st, len, NULL);
                TN_CHECK(memcmp(q1, q2, n * 4) == 0, "f32->%s isa=%s len=%lld", tn_dtype_infos[ints[k]].c10_name,
                         tn_isa_name(tn_cpu_isa()), (long long)len);
            }
    }
    tn_cpu_isa_set(host);
    free(q1); free(q2);
    free(f); free(h1); free(h2); free(g1); free(g2);
}

/* where / masked_fill / fill: the vector loops move the same bytes as the byte loops. */
static void test_simd_select(void) {
    const int64_t n = 1037;
    uint8_t *c = malloc(n), *a = malloc(n * 8), *b = malloc(n * 8), *o1 = malloc(n * 8), *o2 = malloc(n * 8);
    for (int64_t i = 0; i < n * 8; i++) { a[i] = (uint8_t)(i * 31 + 7); b[i] = (uint8_t)(i * 17 + 3); }
    for (int64_t i = 0; i < n; i++) c[i] = (i * 7) % 5 < 2;
    tn_loop_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    memset(ctx.bytes, 0xA5, sizeof ctx.bytes);
    tn_isa host = tn_cpu_isa();
    const int ws[] = {1, 2, 4, 8};
    for (int isa = TN_ISA_SCALAR; isa <= (int)host; isa++) {
        tn_cpu_isa_set((tn_isa)isa);
        for (int k = 0; k < 4; k++) {
            int64_t W = ws[k];
            for (int64_t len = 1; len <= n; len += len < 70 ? 1 : 301) {
                int64_t sw[4] = {W, 1, W, W}, sm[3] = {W, W, 1}, sf[1] = {W};
                char *dw1[4] = {(char *)o1, (char *)c, (char *)a, (char *)b}, *dw2[4] = {(char *)o2, (char *)c, (char *)a, (char *)b};
                tn_ew_where_loop_scalar((int)W)(dw1, sw, len, NULL);
                tn_ew_where_loop((int)W)(dw2, sw, len, NULL);
                int bad = memcmp(o1, o2, (size_t)(len * W)) != 0;
                for (int bc = 1; bc < 4; bc++) { /* a and/or b broadcast */
                    int64_t sb[4] = {W, 1, bc & 1 ? 0 : W, bc & 2 ? 0 : W};
                    tn_ew_where_loop_scalar((int)W)(dw1, sb, len, NULL);
                    tn_ew_where_loop((int)W)(dw2, sb, len, NULL);
                    bad |= memcmp(o1, o2, (size_t)(len * W)) != 0;
                }
                char *dm1[3] = {(char *)o1, (char *)a, (char *)c}, *dm2[3] = {(char *)o2, (char *)a, (char *)c};
                tn_ew_masked_fill_loop_scalar((int)W)(dm1, sm, len, &ctx);
                tn_ew_masked_fill_loop((int)W)(dm2, sm, len, &ctx);
                bad |= (memcmp(o1, o2, (size_t)(len * W)) != 0) << 1;
                tn_ew_fill_loop_scalar((int)W)(dm1, sf, len, &ctx);
                tn_ew_fill_loop((int)W)(dm2, sf, len, &ctx);
                bad |= (memcmp(o1, o2, (size_t)(len * W)) != 0) << 2;
                TN_CHECK(!bad, "select W=%lld len=%lld isa=%s bad=%d", (long long)W, (long long)len, tn_isa_name(tn_cpu_isa()), bad);
                if (bad) break;
            }
        }
    }
    tn_cpu_isa_set(host);
    free(c); free(a); free(b); free(o1); free(o2);
}

/* Large problems are split across threads: results identical to one thread. */
static void test_threaded_iter(void) {
    int64_t n = 100003;
    tn_tensor *a, *b;
    tn_tensor_empty(1, &n, TN_DTYPE_FLOAT32, CPU, &a);
    tn_tensor_empty(1, &n, TN_DTYPE_FLOAT32, CPU, &b);
    float *pa = tn_tensor_data(a), *pb = tn_tensor_data(b);
    for (int64_t i = 0; i < n; i++) { pa[i] = ew_input(i, 0); pb[i] = ew_input(i + 5, 0); }
    int saved = tn_get_num_threads();
    tn_tensor *res[2][3];
    for (int t = 0; t < 2; t++) {
        tn_set_num_threads(t + 1);
        tn_value r;
        /* add.Tensor takes three arguments (alpha); passing two read past the array
         * (ASan: stack-buffer-overflow in check_alpha, docs/RELIABILITY.md) */
        tn_value s0[3] = {tn_value_tensor(a), tn_value_tensor(b), tn_value_int(1)};
        TN_CHECK(tn_dispatch(TN_OP_add_Tensor, s0, &r) == TN_OK, "add");
        res[t][0] = r.u.t;
        tn_value s1[1] = {tn_value_tensor(a)};
        TN_CHECK(tn_dispatch(TN_OP_silu, s1, &r) == TN_OK, "silu");
        res[t][1] = r.u.t;
        tn_value s2[1] = {tn_value_tensor(a)};
        TN_CHECK(tn_dispatch(TN_OP_exp, s2, &r) == TN_OK, "exp");
        res[t][2] = r.u.t;
    }
    for (int k = 0; k < 3; k++)
        TN_CHECK(memcmp(tn_tensor_data(res[0][k]), tn_tensor_data(res[1][k]), (size_t)n * 4) == 0, "threads change result %d", k);
    for (int t = 0; t < 2; t++) for (int k = 0; k < 3; k++) tn_tensor_release(res[t][k]);
    tn_set_num_threads(saved);
    tn_tensor_release(a); tn_tensor_release(b);
}

/* frexp by the bits (elementwise_special.c) against libm's frexpf / frexp: every 61st float32
 * bit pattern plus the subnormal, zero, infinite and NaN ones around the edges, and 2^22
 * float64 patterns from a xorshift stream with their exponent field swept */
static void test_frexp_bits(void) {
    bool ok = true;
    uint32_t bad32 = 0;
    for (uint64_t b = 0; b <= 0xffffffffull && ok; b += (b & 0x7f800000u) == 0 || (b & 0x7f800000u) == 0x7f800000u ? 1 : 61) {
        uint32_t u = (uint32_t)b;
        float x, m0, m1;
        int e0 = 0, e1 = -1;
        memcpy(&x, &u, 4);
        m0 = frexpf(x, &e0);
        m1 = tn_frexp_f32(x, &e1);
        if (memcmp(&m0, &m1, 4) || e0 != e1) { ok = false; bad32 = u; }
    }
    TN_CHECK(ok, "frexp float32 by the bits differs from frexpf at 0x%08x", bad32);
    uint64_t st = 0x9E3779B97F4A7C15ull, bad64 = 0;
    ok = true;
    for (int i = 0; i < (1 << 22) && ok; i++) {
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        uint64_t u = (st & 0x800fffffffffffffull) | ((uint64_t)(i & 0x7ff) << 52);
        double x, m0, m1;
        int e0 = 0, e1 = -1;
        memcpy(&x, &u, 8);
        m0 = frexp(x, &e0);
        m1 = tn_frexp_f64(x, &e1);
        if (memcmp(&m0, &m1, 8) || e0 != e1) { ok = false; bad64 = u; }
    }
    TN_CHECK(ok, "frexp float64 by the bits differs from frexp at 0x%016llx", (unsigned long long)bad64);
}

int main(void) {
    test_frexp_bits();
    test_promotion();
    test_broadcast_error();
    test_add_sizes();
    test_layouts();
    test_casts();
    test_int_semantics();
    test_float_semantics();
    test_copy_fill_where();
    test_unary_sizes();
    test_simd_vs_scalar();
    test_simd_casts();
    test_simd_select();
    test_threaded_iter();
    return tn_test_summary();
}
