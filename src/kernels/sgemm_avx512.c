/* sgemm_avx512.c — the float32 GEMM engine of the avx512 tiers (BLIS/Goto structure,
 * threaded over the pool). docs/GEMM.md "Float32 engine" has the design and measurements.
 *
 * C (row-major; a column-major C is computed as Cᵀ = Bᵀ·Aᵀ) is cut into one region per
 * worker, along n when m < n and there are enough columns, else along m. Each worker, in
 * its own packing buffer (per thread, kept between calls), packs its rows of A once for
 * every k block when they fit SG_AFULL, then runs: NC columns → KC of k → pack B block
 * (KC × NC, stays in L2) → 8-row micro-panel of A (stays in L1) → 48-column micro-panel
 * of B → micro-kernel (larger A is packed per SG_MC rows inside the k loop instead). The
 * micro-kernel keeps an 8×48 tile in 24 zmm accumulators (3 vectors of
 * B and one broadcast of A per k step) and writes C itself: the first k block stores
 * alpha·acc (+ beta·C), later blocks add alpha·acc, so there is no separate accumulator
 * block and no epilogue pass. Edge tiles use the same kernel instantiated for fewer rows
 * and vectors, with a lane mask on the last vector. */
#include "kernels/gemm_internal.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/threadpool.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm.h"

#define SG_MR 8
#define SG_NV 3
#define SG_NR (16 * SG_NV)
/* KC, MC and NC can be overridden with -D at build time for the tuning runs docs/GEMM.md
 * describes (NC must stay a multiple of 48, MC of 8: checked below). */
#ifndef SG_KC
#define SG_KC 384
#endif
#ifndef SG_MC
#define SG_MC 256
#endif
#ifndef SG_NC
#define SG_NC (14 * SG_NR) /* KC × NC floats = 1 MiB: half of this core's L2 */
#endif
#define SG_ALIGN 64
_Static_assert(SG_NC % SG_NR == 0 && SG_MC % SG_MR == 0, "blocks hold whole micro-panels");
/* Packed A kept whole (every k block) up to this many floats per region: 6 MiB. */
#define SG_AFULL ((int64_t)3 << 19)
/* Products below this many multiply-adds stay on the calling thread. */
#define SG_PARALLEL_MACS (1 << 20)

static int64_t sg_min(int64_t a, int64_t b) { return a < b ? a : b; }

int tn_sgemm_usable(const tn_gemm_desc *g) {
    return g->dtype == TN_DTYPE_FLOAT32 && tn_cpu_isa() >= TN_ISA_AVX512 && (g->c_cs == 1 || g->c_rs == 1);
}


#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/x86_transpose.h"

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

/* How a micro-kernel writes its tile: mode 0 C = alpha·acc, 1 C = alpha·acc + beta·C,
 * 2 C += alpha·acc; `last` masks the lanes of the tile's last vector. */
typedef struct sg_ep {
    float alpha, beta;
    int mode;
    __mmask16 last;
} sg_ep;

typedef void (*sg_ukr)(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, const sg_ep *ep);

/* MR rows × NV vectors of C over kc steps; ap/bp are packed panels with row pitch SG_MR /
 * SG_NR whatever MR and NV are (zero padded). */
#define SG_KERNEL(MR, NV)                                                                                   \
    static TGT void sg_ukr_##MR##x##NV(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, \
                                       const sg_ep *ep) {                                                   \
        __m512 acc[MR][NV];                                                                                 \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                              \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();           \
            if (ep->mode) {                                                                                 \
                _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);                                     \
                _mm_prefetch((const char *)(c + r * ldc + 16 * NV - 1), _MM_HINT_T0);                       \
            }                                                                                               \
        }                                                                                                   \
        for (int64_t p = 0; p < kc; p++, ap += SG_MR, bp += SG_NR) {                                        \
            __m512 b[NV];                                                                                   \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) b[v] = _mm512_loadu_ps(bp + 16 * v);       \
            _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                          \
                __m512 a = _mm512_set1_ps(ap[r]);                                                           \
                _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) acc[r][v] =                            \
                    _mm512_fmadd_ps(a, b[v], acc[r][v]);                                                    \
            }                                                                                               \
        }                                                                                                   \
        const __m512 al = _mm512_set1_ps(ep->alpha), be = _mm512_set1_ps(ep->beta);                        \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                              \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) {                                          \
                float *d = c + r * ldc + 16 * v;                                                            \
                __mmask16 k = v == NV - 1 ? ep->last : (__mmask16)0xFFFF;                                   \
                __m512 x = _mm512_mul_ps(acc[r][v], al);                                                    \
                if (ep->mode == 1) x = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(k, d), x);                 \
                else if (ep->mode == 2) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(k, d));                  \
                _mm512_mask_storeu_ps(d, k, x);                                                             \
            }                                                                                               \
        }                                                                                                   \
    }

#define SG_KERNELS(MR) SG_KERNEL(MR, 1) SG_KERNEL(MR, 2) SG_KERNEL(MR, 3)
SG_KERNELS(1) SG_KERNELS(2) SG_KERNELS(3) SG_KERNELS(4) SG_KERNELS(5) SG_KERNELS(6) SG_KERNELS(7) SG_KERNELS(8)

#define SG_ROW(MR) {sg_ukr_##MR##x1, sg_ukr_##MR##x2, sg_ukr_##MR##x3}
static const sg_ukr SG_UKR[SG_MR][SG_NV] = {SG_ROW(1), SG_ROW(2), SG_ROW(3), SG_ROW(4),
                                            SG_ROW(5), SG_ROW(6), SG_ROW(7), SG_ROW(8)};

static inline __mmask16 sg_mask(int64_t n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1); }

/* dst[p*SG_NR + j] = B(p0 + p, j0 + j) for p < kc, j < nj (nj <= SG_NR), zero for j >= nj. */
static TGT void sg_pack_b(const tn_gemm_desc *g, int64_t p0, int64_t kc, int64_t j0, int64_t nj, float *dst) {
    const float *b = g->b;
    const int64_t rs = g->b_rs, cs = g->b_cs;
    if (cs == 1) { /* rows of B contiguous: copy */
        for (int64_t p = 0; p < kc; p++) {
            const float *s = b + (p0 + p) * rs + j0;
            for (int v = 0; v < SG_NV; v++)
                _mm512_storeu_ps(dst + p * SG_NR + 16 * v, _mm512_maskz_loadu_ps(sg_mask(nj - 16 * v), s + 16 * v));
        }
    } else if (rs == 1) { /* columns contiguous along k (a linear layer's weight): 16×16 transposes */
        for (int v = 0; v < SG_NV; v++) {
            int64_t nv = sg_min(16, nj - 16 * v);
            /* The weight usually comes from memory, 16 short row streams at a time: fetch
             * the next 16 rows' lines into L2 while these are transposed. */
            int64_t nxt = j0 + 16 * v + 16, npf = sg_min(16, g->n - nxt);
            for (int64_t pb = 0; pb < kc; pb += 16) {
                int64_t kr = sg_min(16, kc - pb);
                for (int64_t t = 0; t < npf; t++) _mm_prefetch((const char *)(b + (nxt + t) * cs + p0 + pb), _MM_HINT_T1);
                __m512i r[16];
                for (int t = 0; t < 16; t++)
                    r[t] = t < nv ? _mm512_maskz_loadu_epi32(sg_mask(kr), b + (j0 + 16 * v + t) * cs + p0 + pb)
                                  : _mm512_setzero_si512();
                tn_transpose16x32(r);
                for (int64_t q = 0; q < kr; q++) _mm512_storeu_si512(dst + (pb + q) * SG_NR + 16 * v, r[q]);
            }
        }
    } else {
        for (int64_t p = 0; p < kc; p++)
            for (int64_t j = 0; j < SG_NR; j++) dst[p * SG_NR + j] = j < nj ? b[(p0 + p) * rs + (j0 + j) * cs] : 0.0f;
    }
}

/* dst[p*SG_MR + r] = A(i0 + r, p0 + p) for p < kc, r < nr (nr <= SG_MR), zero for r >= nr. */
static TGT void sg_pack_a(const tn_gemm_desc *g, int64_t i0, int64_t nr, int64_t p0, int64_t kc, float *dst) {
    const float *a = g->a;
    const int64_t rs = g->a_rs, cs = g->a_cs;
    if (cs == 1) { /* rows of A contiguous: 8×8 transposes */
        for (int64_t pb = 0; pb < kc; pb += 8) {
            int64_t kr = sg_min(8, kc - pb);
            __m256 r[8];
            for (int t = 0; t < 8; t++)
                r[t] = t < nr ? _mm256_maskz_loadu_ps((__mmask8)sg_mask(kr), a + (i0 + t) * rs + p0 + pb)
                              : _mm256_setzero_ps();
            tn_transpose8x8_ps(r);
            for (int64_t q = 0; q < kr; q++) _mm256_storeu_ps(dst + (pb + q) * SG_MR, r[q]);
        }
    } else if (rs == 1) { /* columns contiguous: copy */
        for (int64_t p = 0; p < kc; p++)
            _mm256_storeu_ps(dst + p * SG_MR, _mm256_maskz_loadu_ps((__mmask8)sg_mask(nr), a + (p0 + p) * cs + i0));
    } else {
        for (int64_t p = 0; p < kc; p++)
            for (int64_t r = 0; r < SG_MR; r++) dst[p * SG_MR + r] = r < nr ? a[(i0 + r) * rs + (p0 + p) * cs] : 0.0f;
    }
}

/* Rows [m0, m1) × columns [n0, n1) of C on the calling thread. When the region's rows of
 * A fit SG_AFULL floats they are packed once, for every k block, before the column loop
 * (a product with many columns, such as the vocabulary projection, would otherwise repack
 * A for every block of NC columns); otherwise A is packed per (column block, k block,
 * SG_MC rows). */
static bool sg_region(const tn_gemm_desc *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    const int64_t mpad = (m1 - m0 + SG_MR - 1) / SG_MR * SG_MR;
    const bool afull = mpad * g->k <= SG_AFULL;
    const size_t abytes = afull ? (size_t)(mpad * g->k) : (size_t)SG_MC * SG_KC;
    float *apack = tn_thread_scratch(TN_SCRATCH_SGEMM, (abytes + (size_t)SG_KC * SG_NC) * sizeof(float));
    if (!apack) return false;
    float *bpack = apack + abytes;
    float *C = g->c;
    /* Equal column blocks of at most SG_NC (a 16-column remainder block would cost a full
     * pass for a sliver of work) and equal k blocks of at most SG_KC. */
    int64_t nblk = (n1 - n0 + SG_NC - 1) / SG_NC, ncb = ((n1 - n0 + nblk - 1) / nblk + 15) / 16 * 16;
    int64_t kblk = (g->k + SG_KC - 1) / SG_KC, kcb = ((g->k + kblk - 1) / kblk + 7) / 8 * 8;
    if (afull)
        for (int64_t pc = 0; pc < g->k; pc += kcb) {
            int64_t kc = sg_min(kcb, g->k - pc);
            for (int64_t ir = 0; ir < mpad; ir += SG_MR)
                sg_pack_a(g, m0 + ir, sg_min(SG_MR, m1 - m0 - ir), pc, kc, apack + pc * mpad + ir * kc);
        }
    for (int64_t jc = n0; jc < n1; jc += ncb) {
        int64_t nc = sg_min(ncb, n1 - jc);
        for (int64_t pc = 0; pc < g->k; pc += kcb) {
            int64_t kc = sg_min(kcb, g->k - pc);
            sg_ep ep = {(float)g->alpha, (float)g->beta, pc > 0 ? 2 : g->beta != 0 ? 1 : 0, 0xFFFF};
            for (int64_t jr = 0; jr < nc; jr += SG_NR)
                sg_pack_b(g, pc, kc, jc + jr, sg_min(SG_NR, nc - jr), bpack + jr * kc);
            for (int64_t ic = m0; ic < m1; ic += SG_MC) {
                int64_t mc = sg_min(SG_MC, m1 - ic);
                const float *ablk = afull ? apack + pc * mpad + (ic - m0) * kc : apack;
                if (!afull)
                    for (int64_t ir = 0; ir < mc; ir += SG_MR)
                        sg_pack_a(g, ic + ir, sg_min(SG_MR, mc - ir), pc, kc, apack + ir * kc);
                for (int64_t ir = 0; ir < mc; ir += SG_MR) {
                    int64_t mr = sg_min(SG_MR, mc - ir);
                    const float *ap = ablk + ir * kc;
                    float *crow = C + (ic + ir) * g->c_rs + jc;
                    for (int64_t jr = 0; jr < nc; jr += SG_NR) {
                        int64_t nj = sg_min(SG_NR, nc - jr), nv = (nj + 15) / 16;
                        ep.last = sg_mask(nj - 16 * (nv - 1));
                        SG_UKR[mr - 1][nv - 1](kc, ap, bpack + jr * kc, crow + jr, g->c_rs, &ep);
                    }
                }
            }
        }
    }
    return true;
}

typedef struct sg_job {
    const tn_gemm_desc *g;
    int64_t per; /* rows (split_n == 0) or columns per region */
    int split_n;
    atomic_int failed;
} sg_job;

static void sg_worker(void *ctx, int64_t b, int64_t e) {
    sg_job *j = ctx;
    for (int64_t t = b; t < e; t++) {
        int64_t lo = t * j->per;
        bool ok = j->split_n ? sg_region(j->g, 0, j->g->m, lo, sg_min(j->g->n, lo + j->per))
                             : sg_region(j->g, lo, sg_min(j->g->m, lo + j->per), 0, j->g->n);
        if (!ok) atomic_store(&j->failed, 1);
    }
}

tn_status tn_sgemm(const tn_gemm_desc *g0) {
    tn_gemm_desc g = *g0;
    if (g.c_cs != 1) { /* column-major C: Cᵀ = Bᵀ·Aᵀ is row-major */
        int64_t t;
        const void *p = g.a;
        g.a = g.b, g.b = p;
        t = g.m, g.m = g.n, g.n = t;
        t = g.a_rs, g.a_rs = g.b_cs, g.b_cs = t;
        t = g.a_cs, g.a_cs = g.b_rs, g.b_rs = t;
        g.c_rs = g0->c_cs, g.c_cs = 1;
    }
    int64_t parts = (int64_t)tn_get_num_threads();
    if ((double)g.m * (double)g.n * (double)g.k < SG_PARALLEL_MACS || tn_in_parallel_region()) parts = 1;
    sg_job job = {&g, g.n, 1, 0};
    /* Every region packs all of the operand along the dimension not split, so split the
     * larger of m and n (the columns when m < n and every region still gets two
     * micro-panels' worth), else the rows. */
    int64_t ncol16 = (g.n + 15) / 16, nrow8 = (g.m + SG_MR - 1) / SG_MR, nparts = 1;
    if (parts > 1 && ncol16 >= parts * 2 * SG_NV && (g.m < g.n || nrow8 < parts)) {
        job.per = (ncol16 + parts - 1) / parts * 16;
        nparts = (g.n + job.per - 1) / job.per;
    } else if (parts > 1 && nrow8 >= parts) {
        job.split_n = 0;
        job.per = (nrow8 + parts - 1) / parts * SG_MR;
        nparts = (g.m + job.per - 1) / job.per;
    }
    if (nparts > 1) tn_parallel_for(nparts, 1, sg_worker, &job);
    else sg_worker(&job, 0, 1);
    if (atomic_load(&job.failed)) return tn_error(TN_ERR_RUNTIME, "gemm: out of memory for packing buffers");
    return TN_OK;
}

#else
tn_status tn_sgemm(const tn_gemm_desc *g) {
    (void)g;
    return tn_error(TN_ERR_RUNTIME, "gemm: the float32 avx512 engine is x86-64 only");
}
#endif
