/* gemm.c — the GEMM driver: chooses BLAS, the GEMV-style dot path, the AMX-BF16 engine
 * (gemm_amx.c), the packed float32-accumulating engine or the scalar reference, and runs
 * the blocking and packing loops around the micro-kernels (BLIS/Goto structure: NC → KC →
 * pack B → MC → pack A → MR×NR micro-tiles accumulating into a float32 block of C). */
#include "kernels/gemm.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/threadpool.h"
#include "kernels/blas.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm_internal.h"
#include "kernels/gemv.h"

/* Rows of C handled per outer pass; bounds the float32 accumulator block to
 * TN_GEMM_MB × TN_GEMM_NC floats whatever M is. */
#define TN_GEMM_MB 1024
#define ALIGN 64

int tn_gemm_supports(tn_dtype d) {
    switch (d) {
    case TN_DTYPE_UINT8: case TN_DTYPE_INT8: case TN_DTYPE_INT16: case TN_DTYPE_INT32: case TN_DTYPE_INT64:
    case TN_DTYPE_FLOAT16: case TN_DTYPE_BFLOAT16: case TN_DTYPE_FLOAT32: case TN_DTYPE_FLOAT64:
    case TN_DTYPE_COMPLEX64: case TN_DTYPE_COMPLEX128:
        return 1;
    default:
        return 0;
    }
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- engine selection --------------------------------------------------------------- */

typedef struct engine {
    const char *name;
    int mr, nr;
    bool pairs; /* bf16 pair panels (VDPBF16PS) instead of float32 panels */
    tn_gemm_f32_ukernel f32;
    tn_gemm_bf16dp_ukernel bf16dp;
} engine;

static const engine ENGINE_SCALAR = {"f32_gemm_4x8__scalar", 4, 8, false, f32_gemm_4x8__scalar, NULL};
static const engine ENGINE_AVX2 = {"f32_gemm_6x16__avx2", 6, 16, false, f32_gemm_6x16__avx2, NULL};
static const engine ENGINE_AVX512 = {"f32_gemm_12x32__avx512", 12, 32, false, f32_gemm_12x32__avx512, NULL};
#if defined(__aarch64__)
static const engine ENGINE_NEON = {"f32_gemm_12x8__neon", 12, 8, false, f32_gemm_12x8__neon, NULL};
#endif
static const engine ENGINE_AVX512BF16 = {"bf16_gemm_dp_12x32__avx512bf16", 12, 32, true, NULL,
                                         bf16_gemm_dp_12x32__avx512bf16};

/* VDPBF16PS issues on one port where FMA issues on two (on the Xeon of sessions 1-8; on
 * session 9's EPYC it issues on two), so the pair kernel only wins where packing dominates
 * (few rows of A: copying bf16 pairs beats converting B to float32). Measured in
 * docs/GEMM.md; the threshold is provisional. Since session 9 this packed engine serves
 * bfloat16 on the avx512bf16 tier only for a C with no unit stride: bgemm_avx512bf16.c
 * takes the rest. */
#define TN_GEMM_BF16DP_MAX_M 64

static const engine *pick_engine(tn_dtype d, int64_t m) {
#if defined(__aarch64__)
    (void)d, (void)m;
    return tn_cpu_arm_isa() >= TN_ARM_ISA_NEON ? &ENGINE_NEON : &ENGINE_SCALAR;
#endif
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512_BF16 && d == TN_DTYPE_BFLOAT16 && m <= TN_GEMM_BF16DP_MAX_M) return &ENGINE_AVX512BF16;
    if (isa >= TN_ISA_AVX512) return &ENGINE_AVX512;
    return isa >= TN_ISA_AVX2 ? &ENGINE_AVX2 : &ENGINE_SCALAR;
}

/* ---- BLAS path ---------------------------------------------------------------------- */

/* How a rows×cols operand with strides (rs, cs) reads as a column-major BLAS matrix:
 * trans=0 with ld=cs (column-major) or trans=1 with ld=rs (row-major storage of the
 * transpose). Size-1 dimensions leave their stride free. Returns false when neither fits
 * (a copy is needed). */
static bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int *trans, int64_t *ld) {
    if (rs == 1 || rows == 1) {
        int64_t l = cols == 1 ? (rows > 1 ? rows : 1) : cs;
        if (l >= (rows > 1 ? rows : 1) && l < INT32_MAX) { *trans = 0; *ld = l; return true; }
    }
    if (cs == 1 || cols == 1) {
        int64_t l = rows == 1 ? (cols > 1 ? cols : 1) : rs;
        if (l >= (cols > 1 ? cols : 1) && l < INT32_MAX) { *trans = 1; *ld = l; return true; }
    }
    return false;
}

static bool is_blas_dtype(tn_dtype d) {
    return d == TN_DTYPE_FLOAT32 || d == TN_DTYPE_FLOAT64 || d == TN_DTYPE_COMPLEX64 || d == TN_DTYPE_COMPLEX128;
}

static bool blas_usable(const tn_gemm_desc *g) {
    const tn_blas *b = tn_blas_get();
    if (!b || !is_blas_dtype(g->dtype)) return false;
    if ((g->dtype == TN_DTYPE_COMPLEX64 && !b->cgemm) || (g->dtype == TN_DTYPE_COMPLEX128 && !b->zgemm)) return false;
    /* Sizes (and the contiguous copies we may make) must fit 32-bit BLAS indices. */
    return g->m < INT32_MAX / 2 && g->n < INT32_MAX / 2 && g->k < INT32_MAX / 2 && g->m * g->k < INT32_MAX &&
           g->k * g->n < INT32_MAX && g->m * g->n < INT32_MAX;
}

static void copy2d(void *dst, int64_t drs, int64_t dcs, const void *src, int64_t srs, int64_t scs, int64_t rows,
                   int64_t cols, int isz) {
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            memcpy((char *)dst + (i * drs + j * dcs) * isz, (const char *)src + (i * srs + j * scs) * isz, (size_t)isz);
}

static size_t blas_scratch(const tn_gemm_desc *g) {
    int t;
    int64_t ld, isz = tn_dtype_itemsize(g->dtype);
    size_t s = 0;
    if (!blas_layout(g->m, g->k, g->a_rs, g->a_cs, &t, &ld)) s += (size_t)(g->m * g->k * isz) + ALIGN;
    if (!blas_layout(g->k, g->n, g->b_rs, g->b_cs, &t, &ld)) s += (size_t)(g->k * g->n * isz) + ALIGN;
    if (!blas_layout(g->m, g->n, g->c_rs, g->c_cs, &t, &ld)) s += (size_t)(g->m * g->n * isz) + ALIGN;
    return s;
}

static char *take(char **cursor, size_t bytes) {
    char *p = (char *)(((uintptr_t)*cursor + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
    *cursor = p + bytes;
    return p;
}

/* One column-major BLAS product C = alpha*op(X)*op(Y) + beta*C, M x N over K. */
typedef struct blas_call {
    const tn_blas *bl;
    tn_dtype dtype;
    int isz, tx, ty;
    int64_t m, n, k;
    const void *x;
    int64_t ldx;
    const void *y;
    int64_t ldy;
    void *c;
    int64_t ldc;
    double alpha, alpha_im, beta, beta_im;
    int split_rows; /* blocks of rows of C (else of columns) */
} blas_call;

/* Rows (or columns) [b, e) of C: row i of op(X) starts at X + i (no transpose) or
 * X + i*ldx (transposed); column j of op(Y) at Y + j*ldy or Y + j; C is column-major. */
static void blas_block(void *ctx, int64_t b, int64_t e) {
    const blas_call *q = ctx;
    const char *xb = q->x, *yb = q->y;
    char *cb = q->c;
    int64_t M = q->m, N = q->n;
    if (q->split_rows) {
        xb += (q->tx == TN_CBLAS_NO_TRANS ? b : b * q->ldx) * q->isz;
        cb += b * q->isz;
        M = e - b;
    } else {
        yb += (q->ty == TN_CBLAS_NO_TRANS ? b * q->ldy : b) * q->isz;
        cb += b * q->ldc * q->isz;
        N = e - b;
    }
    const void *x = xb, *y = yb;
    void *c = cb;
    int o = TN_CBLAS_COL_MAJOR;
    switch (q->dtype) {
    case TN_DTYPE_FLOAT32:
        q->bl->sgemm(o, q->tx, q->ty, (int)M, (int)N, (int)q->k, (float)q->alpha, x, (int)q->ldx, y, (int)q->ldy,
                     (float)q->beta, c, (int)q->ldc);
        break;
    case TN_DTYPE_FLOAT64:
        q->bl->dgemm(o, q->tx, q->ty, (int)M, (int)N, (int)q->k, q->alpha, x, (int)q->ldx, y, (int)q->ldy, q->beta,
                     c, (int)q->ldc);
        break;
    case TN_DTYPE_COMPLEX64: {
        float al[2] = {(float)q->alpha, (float)q->alpha_im}, be[2] = {(float)q->beta, (float)q->beta_im};
        q->bl->cgemm(o, q->tx, q->ty, (int)M, (int)N, (int)q->k, al, x, (int)q->ldx, y, (int)q->ldy, be, c,
                     (int)q->ldc);
        break;
    }
    default: {
        double al[2] = {q->alpha, q->alpha_im}, be[2] = {q->beta, q->beta_im};
        q->bl->zgemm(o, q->tx, q->ty, (int)M, (int)N, (int)q->k, al, x, (int)q->ldx, y, (int)q->ldy, be, c,
                     (int)q->ldc);
        break;
    }
    }
}

static void run_blas(const tn_gemm_desc *g0, char *scratch) {
    const tn_blas *bl = tn_blas_get();
    tn_gemm_desc g = *g0;
    int isz = tn_dtype_itemsize(g.dtype), ta, tb, tc;
    int64_t lda, ldb, ldc;
    void *c_orig = NULL;
    if (!blas_layout(g.m, g.k, g.a_rs, g.a_cs, &ta, &lda)) {
        void *p = take(&scratch, (size_t)(g.m * g.k * isz));
        copy2d(p, g.k, 1, g.a, g.a_rs, g.a_cs, g.m, g.k, isz);
        g.a = p, g.a_rs = g.k, g.a_cs = 1;
        blas_layout(g.m, g.k, g.a_rs, g.a_cs, &ta, &lda);
    }
    if (!blas_layout(g.k, g.n, g.b_rs, g.b_cs, &tb, &ldb)) {
        void *p = take(&scratch, (size_t)(g.k * g.n * isz));
        copy2d(p, g.n, 1, g.b, g.b_rs, g.b_cs, g.k, g.n, isz);
        g.b = p, g.b_rs = g.n, g.b_cs = 1;
        blas_layout(g.k, g.n, g.b_rs, g.b_cs, &tb, &ldb);
    }
    if (!blas_layout(g.m, g.n, g.c_rs, g.c_cs, &tc, &ldc)) {
        void *p = take(&scratch, (size_t)(g.m * g.n * isz));
        if (g.beta != 0 || g.beta_im != 0) copy2d(p, g.n, 1, g.c, g.c_rs, g.c_cs, g.m, g.n, isz);
        c_orig = g.c;
        g.c = p, g.c_rs = g.n, g.c_cs = 1;
        blas_layout(g.m, g.n, g.c_rs, g.c_cs, &tc, &ldc);
    }
    /* BLAS writes C column-major (tc == 0). A row-major C (tc == 1) is the column-major
     * C^T = B^T·A^T: swap the operands and flip their transposes. */
    const void *x = g.a, *y = g.b;
    int tx = ta ? TN_CBLAS_TRANS : TN_CBLAS_NO_TRANS, ty = tb ? TN_CBLAS_TRANS : TN_CBLAS_NO_TRANS;
    int64_t ldx = lda, ldy = ldb, mm = g.m, nn = g.n;
    if (tc) {
        x = g.b, y = g.a, ldx = ldb, ldy = lda, mm = g.n, nn = g.m;
        tx = tb ? TN_CBLAS_NO_TRANS : TN_CBLAS_TRANS;
        ty = ta ? TN_CBLAS_NO_TRANS : TN_CBLAS_TRANS;
    }
    blas_call call = {bl, g.dtype, isz, tx, ty, mm, nn, g.k, x, ldx, y, ldy, g.c, ldc,
                      g.alpha, g.alpha_im, g.beta, g.beta_im, 0};
    /* One thread pool: the BLAS itself runs single-threaded (blas.c), and big products
     * split the larger output dimension across our pool, each worker calling the BLAS on
     * its block of C (every element still sums its full k inside one BLAS call). */
    call.split_rows = mm >= nn;
    int64_t extent = call.split_rows ? mm : nn;
    int threads = tn_get_num_threads();
    if (threads > 1 && (double)mm * (double)nn * (double)g.k >= (double)(1 << 20) && extent >= 32) {
        int64_t chunk = (extent + threads - 1) / threads;
        chunk = (chunk + 15) & ~(int64_t)15; /* whole 16-wide panels per worker */
        tn_parallel_for(extent, chunk, blas_block, &call);
    } else {
        blas_block(&call, 0, extent);
    }
    if (c_orig) copy2d(c_orig, g0->c_rs, g0->c_cs, g.c, g.n, 1, g.m, g.n, isz);
}

/* ---- packing and epilogue of the float32-accumulating engine ------------------------- */

#define LD_F32(p) (*(const float *)(p))
#define LD_BF16(p) tn_bf16_to_f32(*(const uint16_t *)(p))
#define LD_F16(p) tn_gemm_h2f(*(const uint16_t *)(p))

/* dst[p*W + r] = src[r*ss + p*sk] as float32 for r < nv, p < kc; zero padding to W rows.
 * The loop order follows whichever source stride is unit. */
#define DEFINE_PACK(NAME, T, LD)                                                            \
    static void NAME(const void *src_, int64_t ss, int64_t sk, int64_t kc, int64_t nv, int W, float *dst) { \
        const T *src = src_;                                                                \
        if (sk == 1 && ss != 1) {                                                           \
            for (int64_t r = 0; r < nv; r++)                                                \
                for (int64_t p = 0; p < kc; p++) dst[p * W + r] = LD(src + r * ss + p);     \
        } else {                                                                            \
            for (int64_t p = 0; p < kc; p++)                                                \
                for (int64_t r = 0; r < nv; r++) dst[p * W + r] = LD(src + r * ss + p * sk); \
        }                                                                                   \
        if (nv < W)                                                                         \
            for (int64_t p = 0; p < kc; p++)                                                \
                for (int64_t r = nv; r < W; r++) dst[p * W + r] = 0;                        \
    }
DEFINE_PACK(pack_f32, float, LD_F32)
DEFINE_PACK(pack_bf16, uint16_t, LD_BF16)
DEFINE_PACK(pack_f16, uint16_t, LD_F16)

/* Pair panels for VDPBF16PS: dst[(q*W + r)*2 + t] = src[r*ss + (2q+t)*sk], zero padded in
 * both r (to W) and k (to even). The bits are copied, never converted. */
static void pack_bf16_pairs(const uint16_t *src, int64_t ss, int64_t sk, int64_t kc, int64_t nv, int W,
                            uint16_t *dst) {
    int64_t kq = (kc + 1) / 2;
    for (int64_t q = 0; q < kq; q++) {
        uint16_t *d = dst + q * W * 2;
        int64_t p0 = 2 * q;
        bool two = p0 + 1 < kc;
        for (int64_t r = 0; r < nv; r++) {
            const uint16_t *s = src + r * ss + p0 * sk;
            d[2 * r] = s[0];
            d[2 * r + 1] = two ? s[sk] : 0;
        }
        for (int64_t r = nv; r < W; r++) d[2 * r] = d[2 * r + 1] = 0;
    }
}

static void pack(tn_dtype d, bool pairs, const void *src, int64_t ss, int64_t sk, int64_t kc, int64_t nv, int W,
                 void *dst) {
    if (pairs) pack_bf16_pairs(src, ss, sk, kc, nv, W, dst);
    else if (d == TN_DTYPE_BFLOAT16) pack_bf16(src, ss, sk, kc, nv, W, dst);
    else if (d == TN_DTYPE_FLOAT16) pack_f16(src, ss, sk, kc, nv, W, dst);
    else pack_f32(src, ss, sk, kc, nv, W, dst);
}

/* C[i,j] = round(alpha*acc + beta*C[i,j]) for a rows×cols block; beta == 0 never reads C. */
static void epilogue(const tn_gemm_desc *g, int64_t i0, int64_t j0, int64_t rows, int64_t cols, const float *acc,
                     int64_t ldacc) {
    float alpha = (float)g->alpha, beta = (float)g->beta;
    for (int64_t i = 0; i < rows; i++) {
        const float *a = acc + i * ldacc;
        int64_t base = (i0 + i) * g->c_rs + j0 * g->c_cs, cs = g->c_cs;
        switch (g->c_f32 ? TN_DTYPE_FLOAT32 : g->dtype) {
        case TN_DTYPE_BFLOAT16: {
            uint16_t *c = (uint16_t *)g->c + base;
            for (int64_t j = 0; j < cols; j++) {
                float v = alpha * a[j];
                if (beta != 0) v += beta * tn_bf16_to_f32(c[j * cs]);
                c[j * cs] = tn_f32_to_bf16(v);
            }
            break;
        }
        case TN_DTYPE_FLOAT16: {
            uint16_t *c = (uint16_t *)g->c + base;
            for (int64_t j = 0; j < cols; j++) {
                float v = alpha * a[j];
                if (beta != 0) v += beta * tn_gemm_h2f(c[j * cs]);
                c[j * cs] = tn_f32_to_half(v);
            }
            break;
        }
        default: {
            float *c = (float *)g->c + base;
            for (int64_t j = 0; j < cols; j++) {
                float v = alpha * a[j];
                if (beta != 0) v += beta * c[j * cs];
                c[j * cs] = v;
            }
            break;
        }
        }
    }
}

static bool engine_dtype(tn_dtype d) {
    return d == TN_DTYPE_BFLOAT16 || d == TN_DTYPE_FLOAT16 || d == TN_DTYPE_FLOAT32;
}

static size_t engine_scratch(const tn_gemm_desc *g, const engine *e) {
    int64_t nc = min64(TN_GEMM_NC, round_up(g->n, e->nr)), mb = min64(TN_GEMM_MB, round_up(g->m, e->mr));
    size_t a = (size_t)TN_GEMM_MC * TN_GEMM_KC * 4, b = (size_t)TN_GEMM_KC * (size_t)nc * 4,
           c = (size_t)round_up(mb, e->mr) * (size_t)nc * 4;
    return a + b + c + 3 * ALIGN;
}

static void run_engine(const tn_gemm_desc *g, const engine *e, char *scratch) {
    const int MR = e->mr, NR = e->nr;
    const int64_t nc_max = min64(TN_GEMM_NC, round_up(g->n, NR)), mb_max = min64(TN_GEMM_MB, round_up(g->m, MR));
    const int esz = tn_dtype_itemsize(g->dtype);
    const int kunit = e->pairs ? 2 : 1; /* packed k-steps per micro-kernel step */
    const int pbytes = e->pairs ? 2 : 4; /* bytes per packed element */
    char *apack = take(&scratch, (size_t)TN_GEMM_MC * TN_GEMM_KC * 4);
    char *bpack = take(&scratch, (size_t)TN_GEMM_KC * (size_t)nc_max * 4);
    float *cacc = (float *)take(&scratch, (size_t)round_up(mb_max, MR) * (size_t)nc_max * 4);
    const char *A = g->a, *B = g->b;
    for (int64_t ib = 0; ib < g->m; ib += TN_GEMM_MB) {
        int64_t mb = min64(TN_GEMM_MB, g->m - ib);
        for (int64_t jc = 0; jc < g->n; jc += TN_GEMM_NC) {
            int64_t nc = min64(TN_GEMM_NC, g->n - jc), ncp = round_up(nc, NR);
            for (int64_t pc = 0; pc < g->k; pc += TN_GEMM_KC) {
                int64_t kc = min64(TN_GEMM_KC, g->k - pc), ksteps = (kc + kunit - 1) / kunit;
                /* B panels: NR columns each, k along the panel. */
                for (int64_t jr = 0; jr < nc; jr += NR)
                    pack(g->dtype, e->pairs, B + ((pc)*g->b_rs + (jc + jr) * g->b_cs) * esz, g->b_cs, g->b_rs, kc,
                         min64(NR, nc - jr), NR, bpack + (size_t)(jr * ksteps * kunit) * pbytes);
                for (int64_t ic = 0; ic < mb; ic += TN_GEMM_MC) {
                    int64_t mc = min64(TN_GEMM_MC, mb - ic);
                    for (int64_t ir = 0; ir < mc; ir += MR)
                        pack(g->dtype, e->pairs, A + ((ib + ic + ir) * g->a_rs + pc * g->a_cs) * esz, g->a_rs, g->a_cs,
                             kc, min64(MR, mc - ir), MR, apack + (size_t)(ir * ksteps * kunit) * pbytes);
                    for (int64_t jr = 0; jr < nc; jr += NR)
                        for (int64_t ir = 0; ir < mc; ir += MR) {
                            float *ct = cacc + (ic + ir) * ncp + jr;
                            const char *ap = apack + (size_t)(ir * ksteps * kunit) * pbytes;
                            const char *bp = bpack + (size_t)(jr * ksteps * kunit) * pbytes;
                            if (e->pairs)
                                e->bf16dp(ksteps, (const uint16_t *)ap, (const uint16_t *)bp, ct, ncp, pc > 0);
                            else
                                e->f32(kc, (const float *)ap, (const float *)bp, ct, ncp, pc > 0);
                        }
                }
            }
            epilogue(g, ib, jc, mb, nc, cacc, ncp);
        }
    }
}

/* GEMV-shaped problems (m <= 4 or n <= 4, k contiguous) run on gemv.c: tn_gemv_shaped / tn_gemv. */

/* ---- public entry ------------------------------------------------------------------- */

typedef enum path { PATH_TRIVIAL, PATH_BLAS, PATH_DOT, PATH_ROWS, PATH_SGEMM, PATH_BGEMM, PATH_AMX, PATH_ENGINE, PATH_REF } path;

/* bfloat16 on AMX tiles whenever the tier allows (gemm_amx.c). */
static bool amx_usable(const tn_gemm_desc *g) {
    return g->dtype == TN_DTYPE_BFLOAT16 && tn_cpu_isa() >= TN_ISA_AMX;
}

/* The float32 engine of the avx512 tiers runs ahead of OpenBLAS (docs/GEMM.md, "Float32
 * engine"); TN_F32_GEMM=openblas routes float32 to OpenBLAS instead, for the benchmark's
 * side-by-side comparison. Read once. */
static bool f32_prefers_blas(void) {
    /* atomic: pool workers choose paths too (attention's per-head GEMMs), and the first
     * read could race the first write (ThreadSanitizer; docs/RELIABILITY.md). Every
     * thread computes the same value, so a relaxed store-if-unset is enough. */
    static _Atomic int v = -1;
    int x = atomic_load_explicit(&v, memory_order_relaxed);
    if (x < 0) {
        const char *e = getenv("TN_F32_GEMM");
        x = e && !strcmp(e, "openblas") && tn_blas_get() != NULL;
        atomic_store_explicit(&v, x, memory_order_relaxed);
    }
    return x == 1;
}

static path choose(const tn_gemm_desc *g) {
    if (g->m == 0 || g->n == 0 || g->k == 0) return PATH_TRIVIAL;
    /* float32 C from bfloat16 operands: the float32-accumulating engines only */
    if (g->c_f32) return amx_usable(g) ? PATH_AMX : tn_bgemm_usable(g) ? PATH_BGEMM : PATH_ENGINE;
    /* GEMV shapes (m or n <= 4, e.g. decode) go to gemv.c before BLAS: measured 1.1-3x
     * faster than OpenBLAS's sgemm at m = 1..4 (docs/GEMM.md, section GEMV). */
    if (tn_gemv_shaped(g)) return PATH_DOT;
    /* a few rows against a row-major B: streamed without packing (gemv_rows_avx512.c) */
    if (tn_gemv_rows_shaped(g)) return PATH_ROWS;
    if (tn_sgemm_usable(g) && !f32_prefers_blas()) return PATH_SGEMM;
    if (blas_usable(g)) return PATH_BLAS;
    if (amx_usable(g)) return PATH_AMX;
    /* bfloat16 on AVX512-BF16 without AMX: the threaded pair engine (bgemm_avx512bf16.c) */
    if (tn_bgemm_usable(g)) return PATH_BGEMM;
    if (engine_dtype(g->dtype)) return PATH_ENGINE;
    return PATH_REF;
}

size_t tn_gemm_scratch_bytes(const tn_gemm_desc *g) {
    switch (choose(g)) {
    case PATH_BLAS: return blas_scratch(g);
    case PATH_AMX: return tn_gemm_bf16_amx_scratch(g);
    case PATH_ENGINE: return engine_scratch(g, pick_engine(g->dtype, g->m));
    default: return 0;
    }
}

tn_status tn_gemm(const tn_gemm_desc *g, void *scratch, size_t scratch_bytes) {
    if (!tn_gemm_supports(g->dtype))
        return tn_error(TN_ERR_RUNTIME, "gemm: unsupported dtype %s", tn_dtype_infos[g->dtype].c10_name);
    if (g->c_f32 && g->dtype != TN_DTYPE_BFLOAT16)
        return tn_error(TN_ERR_RUNTIME, "gemm: a float32 C is for bfloat16 operands, not %s",
                        tn_dtype_infos[g->dtype].c10_name);
    path p = choose(g);
    size_t need = p == PATH_BLAS     ? blas_scratch(g)
                  : p == PATH_AMX    ? tn_gemm_bf16_amx_scratch(g)
                  : p == PATH_ENGINE ? engine_scratch(g, pick_engine(g->dtype, g->m))
                                     : 0;
    if (scratch_bytes < need)
        return tn_error(TN_ERR_RUNTIME, "gemm: scratch of %zu bytes given, %zu needed", scratch_bytes, need);
    switch (p) {
    case PATH_TRIVIAL:
        if (g->c_f32) {
            for (int64_t i = 0; i < g->m; i++)
                for (int64_t j = 0; j < g->n; j++) {
                    float *c = (float *)g->c + i * g->c_rs + j * g->c_cs;
                    *c = g->beta == 0 ? 0.0f : (float)g->beta * *c;
                }
            return TN_OK;
        }
        /* k == 0 leaves beta*C (zeros when beta == 0): the reference does exactly that. */
        return g->m == 0 || g->n == 0 ? TN_OK : tn_gemm_ref(g);
    case PATH_BLAS: run_blas(g, scratch); return TN_OK;
    case PATH_DOT: tn_gemv(g); return TN_OK;
    case PATH_ROWS: return tn_gemv_rows(g);
    case PATH_AMX: tn_gemm_bf16_amx(g, scratch, scratch_bytes); return TN_OK;
    case PATH_SGEMM: return tn_sgemm(g);
    case PATH_BGEMM: return tn_bgemm(g);
    case PATH_ENGINE: run_engine(g, pick_engine(g->dtype, g->m), scratch); return TN_OK;
    default: return tn_gemm_ref(g);
    }
}

const char *tn_gemm_variant(tn_dtype d) {
    tn_gemm_desc g = tn_gemm_desc_init(d);
    g.m = g.n = g.k = 64;
    g.a_rs = g.b_rs = g.c_rs = 64;
    g.a_cs = g.b_cs = g.c_cs = 1;
    switch (choose(&g)) {
    case PATH_BLAS: return "openblas";
    case PATH_AMX: return "bf16_gemm_amx_32x32";
    case PATH_SGEMM: return "f32_sgemm_8x48__avx512";
    case PATH_BGEMM: return "bf16_bgemm_8x48__avx512bf16";
    case PATH_ENGINE: return pick_engine(d, g.m)->name;
    default: return "ref";
    }
}
