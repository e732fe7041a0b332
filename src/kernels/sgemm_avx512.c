/* sgemm_avx512.c — the float32 GEMM engine of the avx512 tiers (BLIS/Goto structure,
 * threaded over the pool). docs/GEMM.md "Float32 engine" has the design and measurements.
 *
 * C (row-major; a column-major C is computed as Cᵀ = Bᵀ·Aᵀ) is cut into one region per
 * worker, along n or along m, whichever leaves each worker fewer floats to pack
 * (tn_gemm_by_regions, gemm_regions.c). Each worker, in its own packing buffer (per thread, kept between calls),
 * runs: NC columns → KC of k → pack B block (KC × NC, stays in L2) → 8-row micro-panel of
 * A → 48-column micro-panel of B → micro-kernel. A is read in place when its rows are
 * contiguous along k (the micro-panel's rows come into L1 with the first column panel);
 * otherwise its rows are packed once for every k block when they fit SG_AFULL, else per
 * SG_MC rows inside the k loop. The micro-kernel keeps an 8×48 tile in 24 zmm accumulators
 * (3 vectors of B and one broadcast of A per k step; the full tile in assembly,
 * sgemm_ukr_x86.h). The first k block stores alpha·acc (+ beta·C), later blocks add
 * alpha·acc, so there is no accumulator block and no epilogue pass: full tiles with
 * alpha = 1 and no beta are written to C by the assembly itself, the others go through a
 * tile buffer and sg_store. Edge tiles use the same kernel compiled for fewer rows and
 * vectors, with a lane mask on the last vector. (A few rows of A against a row-major B
 * never get here: gemv_rows_avx512.c.) */
#include "kernels/gemm_internal.h"

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
/* A region's C larger than this does not stay in L2 between k blocks, so its next tiles
 * are prefetched; a smaller one does, and the prefetches only cost. (Prefetching A's next
 * rows, in place, cost more than it saved at every size measured: docs/GEMM.md.) */
#ifndef SG_L2
#define SG_L2 (1 << 20)
#endif
/* Weight panels are transposed with lanes assembled from memory (tn_transpose16x32_mem);
 * -DSG_TMEM=0 builds the register-only transposes for comparison (docs/GEMM.md). */
#ifndef SG_TMEM
#define SG_TMEM 1
#endif
_Static_assert(SG_NC % SG_NR == 0 && SG_MC % SG_MR == 0, "blocks hold whole micro-panels");
/* Packed A kept whole (every k block) up to this many floats per region: 6 MiB. */
#define SG_AFULL ((int64_t)3 << 19)

int tn_sgemm_usable(const tn_gemm_desc *g) {
    return g->dtype == TN_DTYPE_FLOAT32 && tn_cpu_isa() >= TN_ISA_AVX512 && (g->c_cs == 1 || g->c_rs == 1);
}


#if defined(__x86_64__)
#include <immintrin.h>

static int64_t sg_min(int64_t a, int64_t b) { return a < b ? a : b; }

#include "kernels/x86_transpose.h"

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))

/* How a tile reaches C: mode 0 C = alpha·acc, 1 C = alpha·acc + beta·C, 2 C += alpha·acc. */
typedef struct sg_ep {
    float alpha, beta;
    int mode;
} sg_ep;

/* A micro-kernel computes an MR × 16·NV tile over kc steps into t (64-byte aligned, 24
 * vectors: t[(r·3 + v)·16 + lane]). Row r of A at step p is a[r·ars + p·aks]: a packed
 * micro-panel (ars = 1, aks = SG_MR, zero padded) or A's own rows when they are contiguous
 * along k (ars = the row stride, aks = 1: "in place", nothing packed). bp is a packed
 * panel of B with row pitch SG_NR whatever NV is (zero padded). */
typedef void (*sg_ukr)(int64_t kc, const float *a, int64_t ars, int64_t aks, const float *bp, float *t);

#define SG_KBODY(MR, NV, LOAD_A, STEP_A)                                                                    \
    __m512 acc[MR][NV];                                                                                     \
    _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                                                    \
        _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();               \
    for (int64_t p = 0; p < kc; p++, bp += SG_NR) {                                                         \
        __m512 b[NV];                                                                                       \
        _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) b[v] = _mm512_loadu_ps(bp + 16 * v);           \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                              \
            __m512 x = _mm512_set1_ps(LOAD_A);                                                              \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(x, b[v], acc[r][v]); \
        }                                                                                                   \
        STEP_A;                                                                                             \
    }                                                                                                       \
    _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                                                    \
        _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) _mm512_store_ps(t + (r * 3 + v) * 16, acc[r][v]);

/* packed A (ars = 1, aks = SG_MR) and A in place (aks = 1; one pointer per row) */
#define SG_KERNEL(MR, NV)                                                                                   \
    static TGT void sg_ukr_##MR##x##NV(int64_t kc, const float *a, int64_t ars, int64_t aks, const float *bp, \
                                       float *t) {                                                          \
        SG_KBODY(MR, NV, a[r], a += SG_MR)                                                                  \
    }                                                                                                       \
    static TGT void sg_uki_##MR##x##NV(int64_t kc, const float *a, int64_t ars, int64_t aks, const float *bp, \
                                       float *t) {                                                          \
        const float *ar[MR];                                                                                \
        for (int r = 0; r < MR; r++) ar[r] = a + r * ars;                                                   \
        SG_KBODY(MR, NV, ar[r][p], (void)0)                                                                 \
    }

#define SG_KERNELS(MR) SG_KERNEL(MR, 1) SG_KERNEL(MR, 2) SG_KERNEL(MR, 3)
SG_KERNELS(1) SG_KERNELS(2) SG_KERNELS(3) SG_KERNELS(4) SG_KERNELS(5) SG_KERNELS(6) SG_KERNELS(7)
SG_KERNEL(8, 1) SG_KERNEL(8, 2) /* 8×3 is the assembly below */

#include "kernels/sgemm_ukr_x86.h"

#define SG_ROW(MR) {sg_ukr_##MR##x1, sg_ukr_##MR##x2, sg_ukr_##MR##x3}
#define SG_IROW(MR) {sg_uki_##MR##x1, sg_uki_##MR##x2, sg_uki_##MR##x3}
/* [A in place][rows - 1][vectors - 1] */
static const sg_ukr SG_UKR[2][SG_MR][SG_NV] = {
    {SG_ROW(1), SG_ROW(2), SG_ROW(3), SG_ROW(4), SG_ROW(5), SG_ROW(6), SG_ROW(7), {sg_ukr_8x1, sg_ukr_8x2, sg_ukr_8x3_packed}},
    {SG_IROW(1), SG_IROW(2), SG_IROW(3), SG_IROW(4), SG_IROW(5), SG_IROW(6), SG_IROW(7), {sg_uki_8x1, sg_uki_8x2, sg_ukr_8x3_rows}}};

/* Lanes [0, n) of a 16-lane vector (none when n <= 0). */
static inline __mmask16 sg_mask(int64_t n) {
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

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
                if (SG_TMEM && nv == 16 && kr == 16) {
                    tn_transpose16x32_mem(b + (j0 + 16 * v) * cs + p0 + pb, cs, dst + pb * SG_NR + 16 * v, SG_NR);
                    continue;
                }
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

/* Writes an mr × nj tile from t to the row-major C at c. */
static TGT void sg_store(const float *t, float *c, int64_t ldc, int64_t mr, int64_t nj, const sg_ep *ep) {
    const int64_t nv = (nj + 15) / 16;
    const __m512 al = _mm512_set1_ps(ep->alpha), be = _mm512_set1_ps(ep->beta);
    for (int64_t r = 0; r < mr; r++)
        for (int64_t v = 0; v < nv; v++) {
            float *d = c + r * ldc + 16 * v;
            __mmask16 k = sg_mask(nj - 16 * v);
            __m512 x = _mm512_load_ps(t + (r * 3 + v) * 16);
            if (ep->alpha != 1.0f) x = _mm512_mul_ps(x, al);
            if (ep->mode == 1) x = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(k, d), x);
            else if (ep->mode == 2) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(k, d));
            _mm512_mask_storeu_ps(d, k, x);
        }
}

/* Brings an mr × nj tile of the row-major C at c into L2 ahead of its sg_store. */
static inline void sg_prefetch_c(const float *c, int64_t ldc, int64_t mr, int64_t nj) {
    for (int64_t r = 0; r < mr; r++)
        for (int64_t j = 0; j < nj; j += 16) _mm_prefetch((const char *)(c + r * ldc + j), _MM_HINT_T1);
}

/* Rows [m0, m1) × columns [n0, n1) of C on the calling thread. When A's rows are
 * contiguous along k they are read in place by the micro-kernels (the first column panel
 * brings a micro-panel's rows into L1, the rest reuse them). Otherwise, when the region's
 * rows of A fit SG_AFULL floats they are packed once, for every k block, before the column
 * loop (a product with many columns, such as the vocabulary projection, would otherwise
 * repack A for every block of NC columns), else per (column block, k block, SG_MC rows). */
static bool sg_region(const tn_gemm_desc *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    const bool inplace = g->a_cs == 1;
    const int64_t mpad = (m1 - m0 + SG_MR - 1) / SG_MR * SG_MR;
    const bool afull = !inplace && mpad * g->k <= SG_AFULL;
    /* Equal column blocks of at most SG_NC (a 16-column remainder block would cost a full
     * pass for a sliver of work) and equal k blocks of at most SG_KC. (Longer k blocks for
     * narrow column blocks were tried: each output then sums k in fewer, longer runs, and
     * SmolLM2's logits drifted to twice upstream's float32 error against float64, which
     * tests/test_inference.py refuses. docs/GEMM.md.) */
    const int64_t nblk = (n1 - n0 + SG_NC - 1) / SG_NC, ncb = ((n1 - n0 + nblk - 1) / nblk + 15) / 16 * 16;
    const int64_t kblk = (g->k + SG_KC - 1) / SG_KC, kcb = ((g->k + kblk - 1) / kblk + 7) / 8 * 8;
    const size_t abytes = inplace ? 0 : afull ? (size_t)(mpad * g->k) : (size_t)(SG_MC * kcb);
    const size_t bbytes = (size_t)(kcb * ((ncb + SG_NR - 1) / SG_NR * SG_NR));
    float *apack = tn_thread_scratch(TN_SCRATCH_SGEMM, (abytes + bbytes) * sizeof(float));
    if (!apack) return false;
    float *bpack = apack + abytes;
    _Alignas(64) float tile[SG_MR * SG_NR];
    const bool pfc = (m1 - m0) * (n1 - n0) * (int64_t)sizeof(float) > SG_L2;
    const float *A = g->a;
    float *C = g->c;
    if (afull)
        for (int64_t pc = 0; pc < g->k; pc += kcb) {
            int64_t kc = sg_min(kcb, g->k - pc);
            for (int64_t ir = 0; ir < mpad; ir += SG_MR)
                sg_pack_a(g, m0 + ir, sg_min(SG_MR, m1 - m0 - ir), pc, kc, apack + pc * mpad + ir * kc);
        }
    for (int64_t jc = n0; jc < n1; jc += ncb) {
        const int64_t nc = sg_min(ncb, n1 - jc);
        for (int64_t pc = 0; pc < g->k; pc += kcb) {
            const int64_t kc = sg_min(kcb, g->k - pc);
            const sg_ep ep = {(float)g->alpha, (float)g->beta, pc > 0 ? 2 : g->beta != 0 ? 1 : 0};
            /* full tiles go straight to C when there is nothing to scale */
            const bool direct = ep.alpha == 1.0f && ep.mode != 1;
            for (int64_t jr = 0; jr < nc; jr += SG_NR)
                sg_pack_b(g, pc, kc, jc + jr, sg_min(SG_NR, nc - jr), bpack + jr * kc);
            for (int64_t ic = m0; ic < m1; ic += SG_MC) {
                const int64_t mc = sg_min(SG_MC, m1 - ic);
                const float *ablk = afull ? apack + pc * mpad + (ic - m0) * kc : apack;
                if (!afull && !inplace)
                    for (int64_t ir = 0; ir < mc; ir += SG_MR)
                        sg_pack_a(g, ic + ir, sg_min(SG_MR, mc - ir), pc, kc, apack + ir * kc);
                for (int64_t ir = 0; ir < mc; ir += SG_MR) {
                    const int64_t mr = sg_min(SG_MR, mc - ir);
                    const float *ap = inplace ? A + (ic + ir) * g->a_rs + pc : ablk + ir * kc;
                    for (int64_t jr = 0; jr < nc; jr += SG_NR) {
                        const int64_t nj = sg_min(SG_NR, nc - jr), nv = (nj + 15) / 16;
                        float *ct = C + (ic + ir) * g->c_rs + jc + jr;
                        const float *bp = bpack + jr * kc;
                        /* C of the tile one row panel down (same columns) into L2, a row
                         * panel's worth of tiles ahead of its store */
                        if (pfc && ir + SG_MR < mc) sg_prefetch_c(ct + SG_MR * g->c_rs, g->c_rs, sg_min(SG_MR, mc - ir - SG_MR), nj);
                        if (direct && mr == SG_MR && nj == SG_NR) {
                            if (inplace) sg_ukc_8x3_rows(kc, ap, g->a_rs, bp, ct, g->c_rs, ep.mode);
                            else sg_ukc_8x3_packed(kc, ap, bp, ct, g->c_rs, ep.mode);
                        } else {
                            SG_UKR[inplace][mr - 1][nv - 1](kc, ap, inplace ? g->a_rs : 1, inplace ? 1 : SG_MR, bp, tile);
                            sg_store(tile, ct, g->c_rs, mr, nj, &ep);
                        }
                    }
                }
            }
        }
    }
    return true;
}

tn_status tn_sgemm(const tn_gemm_desc *g0) {
    /* (Turning the product to read a linear layer's weight in place was tried; its C,
     * written through transposes, cost more than the packing it saved: docs/GEMM.md.) */
    return tn_gemm_by_regions(g0, SG_MR, SG_NR, sg_region);
}

#else
tn_status tn_sgemm(const tn_gemm_desc *g) {
    (void)g;
    return tn_error(TN_ERR_RUNTIME, "gemm: the float32 avx512 engine is x86-64 only");
}
#endif
