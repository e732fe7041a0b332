/* gemm_ref.c — the portable layer of the GEMM family: the scalar reference (every dtype,
 * the tests' oracle) and the scalar micro-kernel the packed engine starts from before
 * faster variants override it. (Dot products for GEMV shapes live in gemv*.c.) */
#include <complex.h>

#include "kernels/gemm.h"
#include "kernels/gemm_internal.h"

#define A_AT(T, i, p) (((const T *)g->a)[(i) * g->a_rs + (p) * g->a_cs])
#define B_AT(T, p, j) (((const T *)g->b)[(p) * g->b_rs + (j) * g->b_cs])
#define C_AT(T, i, j) (((T *)g->c)[(i) * g->c_rs + (j) * g->c_cs])

/* Floating types: products summed in ACC, alpha/beta applied in ACC, one rounding. */
#define REF_FLOAT(T, ACC, LOAD, STORE)                                              \
    for (int64_t i = 0; i < g->m; i++)                                              \
        for (int64_t j = 0; j < g->n; j++) {                                        \
            ACC s = 0;                                                              \
            for (int64_t p = 0; p < g->k; p++)                                      \
                s += (ACC)LOAD(A_AT(T, i, p)) * (ACC)LOAD(B_AT(T, p, j));           \
            ACC v = (ACC)g->alpha * s;                                              \
            if (g->beta != 0) v += (ACC)g->beta * (ACC)LOAD(C_AT(T, i, j));         \
            C_AT(T, i, j) = STORE(v);                                               \
        }

/* Integral types: unsigned 64-bit arithmetic wraps exactly like the narrower types do
 * once truncated, without signed-overflow UB. */
#define REF_INT(T)                                                                  \
    for (int64_t i = 0; i < g->m; i++)                                              \
        for (int64_t j = 0; j < g->n; j++) {                                        \
            uint64_t s = 0;                                                         \
            for (int64_t p = 0; p < g->k; p++)                                      \
                s += (uint64_t)(int64_t)A_AT(T, i, p) * (uint64_t)(int64_t)B_AT(T, p, j); \
            uint64_t v = (uint64_t)g->ialpha * s;                                   \
            if (g->ibeta != 0) v += (uint64_t)g->ibeta * (uint64_t)(int64_t)C_AT(T, i, j); \
            C_AT(T, i, j) = (T)v;                                                   \
        }

#define REF_COMPLEX(T, ACC)                                                         \
    for (int64_t i = 0; i < g->m; i++)                                              \
        for (int64_t j = 0; j < g->n; j++) {                                        \
            ACC s = 0;                                                              \
            for (int64_t p = 0; p < g->k; p++) s += (ACC)A_AT(T, i, p) * (ACC)B_AT(T, p, j); \
            ACC alpha = CMPLX(g->alpha, g->alpha_im), beta = CMPLX(g->beta, g->beta_im); \
            ACC v = alpha * s;                                                      \
            if (beta != 0) v += beta * (ACC)C_AT(T, i, j);                          \
            C_AT(T, i, j) = (T)v;                                                   \
        }

#define ID(x) (x)
#define BF_LOAD(x) tn_bf16_to_f32(x)
#define H_LOAD(x) tn_gemm_h2f(x)

tn_status tn_gemm_ref(const tn_gemm_desc *g) {
    switch (g->dtype) {
    case TN_DTYPE_FLOAT32: REF_FLOAT(float, double, ID, (float)); break;
    case TN_DTYPE_FLOAT64: REF_FLOAT(double, double, ID, (double)); break;
    case TN_DTYPE_BFLOAT16: REF_FLOAT(uint16_t, float, BF_LOAD, tn_f32_to_bf16); break;
    case TN_DTYPE_FLOAT16: REF_FLOAT(uint16_t, float, H_LOAD, tn_f32_to_half); break;
    case TN_DTYPE_UINT8: REF_INT(uint8_t); break;
    case TN_DTYPE_INT8: REF_INT(int8_t); break;
    case TN_DTYPE_INT16: REF_INT(int16_t); break;
    case TN_DTYPE_INT32: REF_INT(int32_t); break;
    case TN_DTYPE_INT64: REF_INT(int64_t); break;
    case TN_DTYPE_COMPLEX64: REF_COMPLEX(float complex, double complex); break;
    case TN_DTYPE_COMPLEX128: REF_COMPLEX(double complex, double complex); break;
    default:
        return tn_error(TN_ERR_RUNTIME, "gemm: unsupported dtype %s", tn_dtype_infos[g->dtype].c10_name);
    }
    return TN_OK;
}

/* Portable 4×8 tile; plain loops the compiler may vectorise with the baseline ISA. */
void f32_gemm_4x8__scalar(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc) {
    float t[4][8] = {{0}};
    for (int64_t p = 0; p < kc; p++, ap += 4, bp += 8)
        for (int r = 0; r < 4; r++)
            for (int j = 0; j < 8; j++) t[r][j] += ap[r] * bp[j];
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 8; j++) c[r * ldc + j] = acc ? c[r * ldc + j] + t[r][j] : t[r][j];
}

