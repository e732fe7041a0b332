/* gemv_rows_avx512.c — a few rows of A against a row-major B, on the avx512 tiers:
 * x·W with W stored k × n (GPT-2's Conv1D keeps its weights so; torch.mm of a vector and
 * a matrix), in float32, bfloat16 and float16. gemv.c takes the other layout (B's columns
 * contiguous along k, a linear layer's weight).
 *
 * Packing B for a handful of rows would read and write all of it to use it once. Instead B
 * is cut into at most TN_ROWS_KCHUNKS equal chunks of rows (each at least 32 rows) and
 * chunks of up to TN_ROWS_NCH columns; a task streams its chunk of B in memory order, four
 * rows at a time, widened to float32, into a float32 partial product of m rows (L1/L2
 * resident), and a second pass adds the partials into C in chunk order: C =
 * round(alpha·Σ + beta·C), one rounding for bfloat16/float16 as upstream's opmath does
 * (beta == 0 never reads C). Tasks go to the pool in contiguous runs, so each thread reads
 * one contiguous stretch of B (the hardware prefetchers' best case: splitting the columns
 * instead had every thread read short runs of every row, at 10-16 GB/s from memory
 * against upstream's 22-24). The chunks do not depend on the thread count, so neither
 * does any result. docs/GEMM.md, "Float32 engine, session 5". */
#include <stdbool.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "core/threadpool.h"
#include "kernels/cpu_features.h"
#include "kernels/gemv.h"

#define TN_ROWS_MAX_M 4
#define TN_ROWS_KCHUNKS 16
#define TN_ROWS_NCH 4096

bool tn_gemv_rows_shaped(const tn_gemm_desc *g) {
    return (g->dtype == TN_DTYPE_FLOAT32 || g->dtype == TN_DTYPE_BFLOAT16 || g->dtype == TN_DTYPE_FLOAT16) &&
           !g->c_f32 && tn_cpu_isa() >= TN_ISA_AVX512 && g->m >= 1 && g->m <= TN_ROWS_MAX_M && g->n >= 1 &&
           g->k >= 1 && g->b_cs == 1 && g->c_cs == 1;
}

#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/x86_bf16.h"

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))

static int64_t rw_min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline __mmask16 rw_mask(int64_t n) {
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

typedef struct rows_job {
    const tn_gemm_desc *g;
    float *part; /* [k chunk][m][n] */
    int64_t kch, krows, nch; /* k chunks, rows per k chunk, column chunks */
} rows_job;

/* Element i of A (or B) as float32. */
static inline float rw_scalar(tn_dtype d, const void *p, int64_t i) {
    switch (d) {
    case TN_DTYPE_BFLOAT16: return tn_bf16_to_f32(((const uint16_t *)p)[i]);
    case TN_DTYPE_FLOAT16: return tn_half_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

/* 16 (masked) elements of B at p as float32. */
#define RW_LOAD_F32(p, k) _mm512_maskz_loadu_ps(k, (const float *)(p))
#define RW_LOAD_BF16(p, k) \
    _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, (const uint16_t *)(p))), 16))
#define RW_LOAD_F16(p, k) _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, (const uint16_t *)(p)))

/* part[i][j] (+)= Σ_{p0 ≤ p < p1} A[i][p]·B[p][j] for columns [j0, j1), the first rows
 * storing; T the element type of B, LOAD its widening load. */
#define RW_KERNEL(NAME, M, T, LOAD)                                                                            \
    static TGT void NAME(const tn_gemm_desc *g, float *part, int64_t p0, int64_t p1, int64_t j0, int64_t j1) { \
        const T *B = g->b;                                                                                     \
        const int64_t n = g->n;                                                                                \
        for (int64_t p = p0; p < p1; p += 4) {                                                                 \
            const int64_t q = rw_min(4, p1 - p);                                                               \
            __m512 x[M][4];                                                                                    \
            for (int i = 0; i < M; i++)                                                                        \
                for (int u = 0; u < 4; u++)                                                                    \
                    x[i][u] = _mm512_set1_ps(u < q ? rw_scalar(g->dtype, g->a, i * g->a_rs + (p + u) * g->a_cs) : 0.0f); \
            /* rows past p1 repeat row p (their x is 0) */                                                     \
            const T *b0 = B + p * g->b_rs, *b1 = b0 + (q > 1) * g->b_rs, *b2 = b0 + (q > 2) * 2 * g->b_rs,     \
                    *b3 = b0 + (q > 3) * 3 * g->b_rs;                                                          \
            for (int64_t j = j0; j < j1; j += 16) {                                                            \
                const __mmask16 k = rw_mask(j1 - j);                                                           \
                __m512 v0 = LOAD(b0 + j, k), v1 = LOAD(b1 + j, k), v2 = LOAD(b2 + j, k), v3 = LOAD(b3 + j, k); \
                for (int i = 0; i < M; i++) {                                                                  \
                    float *d = part + i * n + j;                                                               \
                    __m512 acc = p == p0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(k, d);                  \
                    acc = _mm512_fmadd_ps(x[i][0], v0, acc);                                                   \
                    acc = _mm512_fmadd_ps(x[i][1], v1, acc);                                                   \
                    acc = _mm512_fmadd_ps(x[i][2], v2, acc);                                                   \
                    acc = _mm512_fmadd_ps(x[i][3], v3, acc);                                                   \
                    _mm512_mask_storeu_ps(d, k, acc);                                                          \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }
#define RW_KERNELS(SUF, T, LOAD)                                                                    \
    RW_KERNEL(rows_##SUF##_1, 1, T, LOAD) RW_KERNEL(rows_##SUF##_2, 2, T, LOAD)                     \
    RW_KERNEL(rows_##SUF##_3, 3, T, LOAD) RW_KERNEL(rows_##SUF##_4, 4, T, LOAD)
RW_KERNELS(f32, float, RW_LOAD_F32)
RW_KERNELS(bf16, uint16_t, RW_LOAD_BF16)
RW_KERNELS(f16, uint16_t, RW_LOAD_F16)

typedef void (*rows_fn)(const tn_gemm_desc *g, float *part, int64_t p0, int64_t p1, int64_t j0, int64_t j1);
static const rows_fn ROWS_F32[TN_ROWS_MAX_M] = {rows_f32_1, rows_f32_2, rows_f32_3, rows_f32_4};
static const rows_fn ROWS_BF16[TN_ROWS_MAX_M] = {rows_bf16_1, rows_bf16_2, rows_bf16_3, rows_bf16_4};
static const rows_fn ROWS_F16[TN_ROWS_MAX_M] = {rows_f16_1, rows_f16_2, rows_f16_3, rows_f16_4};

/* task t = (k chunk t / nch, column chunk t % nch) */
static void rows_worker(void *ctx, int64_t b, int64_t e) {
    const rows_job *j = ctx;
    const tn_gemm_desc *g = j->g;
    const rows_fn *fn = g->dtype == TN_DTYPE_BFLOAT16 ? ROWS_BF16 : g->dtype == TN_DTYPE_FLOAT16 ? ROWS_F16 : ROWS_F32;
    for (int64_t t = b; t < e; t++) {
        int64_t kc = t / j->nch, nc = t % j->nch;
        fn[g->m - 1](g, j->part + kc * g->m * g->n, kc * j->krows, rw_min(g->k, (kc + 1) * j->krows), nc * TN_ROWS_NCH,
                     rw_min(g->n, (nc + 1) * TN_ROWS_NCH));
    }
}

/* C = round(alpha · Σ partials (chunk order) + beta · C) over columns [16b, 16e) */
static TGT void rows_sum(void *ctx, int64_t b, int64_t e) {
    const rows_job *j = ctx;
    const tn_gemm_desc *g = j->g;
    const __m512 al = _mm512_set1_ps((float)g->alpha), be = _mm512_set1_ps((float)g->beta);
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t c = 16 * b; c < rw_min(g->n, 16 * e); c += 16) {
            const __mmask16 k = rw_mask(g->n - c);
            __m512 acc = _mm512_maskz_loadu_ps(k, j->part + i * g->n + c);
            for (int64_t q = 1; q < j->kch; q++)
                acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(k, j->part + (q * g->m + i) * g->n + c));
            acc = _mm512_mul_ps(acc, al);
            if (g->dtype == TN_DTYPE_FLOAT32) {
                float *d = (float *)g->c + i * g->c_rs + c;
                if (g->beta != 0) acc = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(k, d), acc);
                _mm512_mask_storeu_ps(d, k, acc);
            } else if (g->dtype == TN_DTYPE_BFLOAT16) {
                uint16_t *d = (uint16_t *)g->c + i * g->c_rs + c;
                if (g->beta != 0) acc = _mm512_fmadd_ps(be, RW_LOAD_BF16(d, k), acc);
                _mm256_mask_storeu_epi16(d, k, tn_round_bf16(acc));
            } else { /* float16: the exact scalar rounding every float16 path shares */
                uint16_t *d = (uint16_t *)g->c + i * g->c_rs + c;
                _Alignas(64) float v[16];
                if (g->beta != 0) acc = _mm512_fmadd_ps(be, RW_LOAD_F16(d, k), acc);
                _mm512_store_ps(v, acc);
                for (int l = 0; l < 16 && c + l < g->n; l++) d[l] = tn_f32_to_half(v[l]);
            }
        }
}

tn_status tn_gemv_rows(const tn_gemm_desc *g) {
    rows_job job = {g, NULL, rw_min(TN_ROWS_KCHUNKS, (g->k + 31) / 32), 0, (g->n + TN_ROWS_NCH - 1) / TN_ROWS_NCH};
    job.krows = ((g->k + job.kch - 1) / job.kch + 3) / 4 * 4;
    job.kch = (g->k + job.krows - 1) / job.krows;
    job.part = malloc((size_t)(job.kch * g->m * g->n) * sizeof(float));
    if (!job.part) return tn_error(TN_ERR_NO_MEMORY, "gemm: out of memory for partial products");
    const bool par = !tn_in_parallel_region() && g->n * g->k >= 65536;
    const int64_t tasks = job.kch * job.nch, vecs = (g->n + 15) / 16;
    if (par) tn_parallel_for(tasks, 1, rows_worker, &job);
    else rows_worker(&job, 0, tasks);
    if (par && vecs > 1) tn_parallel_for(vecs, 64, rows_sum, &job);
    else rows_sum(&job, 0, vecs);
    free(job.part);
    return TN_OK;
}

#else
tn_status tn_gemv_rows(const tn_gemm_desc *g) {
    (void)g;
    return tn_error(TN_ERR_RUNTIME, "gemm: the row-major GEMV path is x86-64 only");
}
#endif
