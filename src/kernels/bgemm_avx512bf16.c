/* bgemm_avx512bf16.c — the bfloat16 GEMM engine of the avx512bf16 tier on hosts without
 * AMX (docs/GEMM.md "bfloat16 engine without AMX"), threaded over the pool like the float32
 * engine (sgemm_avx512.c), whose structure it follows.
 *
 * VDPBF16PS multiplies 16 pairs of bfloat16 and adds both products into 16 float32 lanes.
 * A pair (k, k+1) of a row of A is one 32-bit word when A's rows run along k, so A is read
 * in place: the micro-kernel broadcasts the word. B is packed into pair panels: for each
 * pair step q, 48 columns of 32-bit words (B(2q, j) in the low half, B(2q+1, j) in the
 * high half). For a linear layer's weight (W n×k, k contiguous) a panel is the 16×16
 * transpose of 32-bit words the float32 engine uses for its weights, here moving pairs.
 *
 * k is not blocked: each 8×48 tile accumulates the whole k in 24 zmm registers (float32)
 * and is rounded once to bfloat16 (round to nearest even, as tn_f32_to_bf16), or stored
 * as float32 for a float32 C. Column blocks are sized so a block of packed B stays in L2.
 * Each worker computes a region of C (split along n or m, whichever packs less:
 * tn_gemm_by_regions, gemm_regions.c). */
#include "kernels/gemm_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm.h"

#define BG_MR 8
#define BG_NV 3
#define BG_NR (16 * BG_NV)
/* Bytes of packed B per column block: half of a 1 MiB L2 (EPYC Zen 5; a 2 MiB L2 holds it
 * twice over). */
#ifndef BG_BBLOCK
#define BG_BBLOCK (512 * 1024)
#endif

int tn_bgemm_usable(const tn_gemm_desc *g) {
    return g->dtype == TN_DTYPE_BFLOAT16 && tn_cpu_isa() == TN_ISA_AVX512_BF16 && (g->c_cs == 1 || g->c_rs == 1);
}

#if defined(__x86_64__)
#include <immintrin.h>

static int64_t bg_min(int64_t a, int64_t b) { return a < b ? a : b; }

/* A bf16 pair as one 32-bit word. A in place is only 2-byte aligned when a row starts at
 * an odd column (k odd, or a view's offset), so the load goes through memcpy: one
 * unaligned mov, without the undefined behaviour of dereferencing a misaligned int32_t*
 * (UBSan, docs/RELIABILITY.md). */
static inline int32_t bg_pair(const char *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

#include "kernels/x86_bf16.h"
#include "kernels/x86_transpose.h"

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma")))

/* A micro-kernel computes an MR × 16·NV tile over kq pair steps into t (64-byte aligned,
 * t[(r·3 + v)·16 + lane]). Row r's pair q is the 32-bit word at a + r·ars + q·aks (bytes):
 * A in place (aks = 4) or a packed panel (ars = 4, aks = 4·BG_MR). With `odd`, one more
 * step takes only the low half of the next word (k odd, A in place: the word's high half
 * is past the row). bp is a pair panel with row pitch BG_NR words. */
typedef void (*bg_ukr)(int64_t kq, int odd, const char *a, int64_t ars, int64_t aks, const uint32_t *bp, float *t);

#define BG_STEP(MR, NV, LOADA)                                                                                          \
    {                                                                                                           \
        __m512bh b[NV];                                                                                         \
        _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) b[v] = (__m512bh)_mm512_loadu_si512(bp + 16 * v); \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++) {                                                  \
            __m512bh x = (__m512bh)_mm512_set1_epi32(LOADA);                                                    \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], x, b[v]); \
        }                                                                                                       \
    }

#define BG_KERNEL(MR, NV)                                                                                       \
    static TGT void bg_ukr_##MR##x##NV(int64_t kq, int odd, const char *a, int64_t ars, int64_t aks,            \
                                       const uint32_t *bp, float *t) {                                          \
        __m512 acc[MR][NV];                                                                                     \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                                                    \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();               \
        for (int64_t q = 0; q < kq; q++, a += aks, bp += BG_NR) BG_STEP(MR, NV, bg_pair(a + r * ars))                  \
        if (odd) BG_STEP(MR, NV, (int32_t) * (const uint16_t *)(a + r * ars))                                           \
        _Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                                                    \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) _mm512_store_ps(t + (r * 3 + v) * 16, acc[r][v]); \
    }

#define BG_KERNELS(MR) BG_KERNEL(MR, 1) BG_KERNEL(MR, 2) BG_KERNEL(MR, 3)
BG_KERNELS(1) BG_KERNELS(2) BG_KERNELS(3) BG_KERNELS(4) BG_KERNELS(5) BG_KERNELS(6) BG_KERNELS(7) BG_KERNELS(8)

#define BG_ROW(MR) {bg_ukr_##MR##x1, bg_ukr_##MR##x2, bg_ukr_##MR##x3}
/* [rows - 1][vectors - 1] */
static const bg_ukr BG_UKR[BG_MR][BG_NV] = {BG_ROW(1), BG_ROW(2), BG_ROW(3), BG_ROW(4),
                                            BG_ROW(5), BG_ROW(6), BG_ROW(7), BG_ROW(8)};

/* Lanes [0, n) of a 16-lane vector (none when n <= 0). */
static inline __mmask16 bg_mask(int64_t n) {
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* The pair panel of columns [j0, j0 + nj) (nj <= BG_NR): dst[q·BG_NR + j] = B(2q, j0+j) |
 * B(2q+1, j0+j) << 16 for q < ceil(k/2); zero for j >= nj and for the high half past k. */
static TGT void bg_pack_b(const tn_gemm_desc *g, int64_t j0, int64_t nj, uint32_t *dst) {
    const uint16_t *b = g->b;
    const int64_t rs = g->b_rs, cs = g->b_cs, k = g->k, kp = k / 2, kq = (k + 1) / 2;
    if (rs == 1 && cs % 2 == 0) { /* a linear layer's weight: 16×16 transposes of pair words */
        const int64_t ldw = cs / 2;
        for (int v = 0; v < BG_NV; v++) {
            const int64_t nv = bg_min(16, nj - 16 * v);
            const uint32_t *src = (const uint32_t *)(b + (j0 + 16 * v) * cs);
            int64_t nxt = j0 + 16 * v + 16, npf = bg_min(16, g->n - nxt);
            for (int64_t qb = 0; qb < kq; qb += 16) {
                const int64_t kr = bg_min(16, kq - qb), full = bg_min(16, kp - qb);
                for (int64_t t = 0; t < npf; t++) _mm_prefetch((const char *)(b + (nxt + t) * cs + 2 * qb), _MM_HINT_T1);
                if (nv == 16 && full == 16) {
                    tn_transpose16x32_mem((const float *)(src + qb), ldw, (float *)(dst + qb * BG_NR + 16 * v), BG_NR);
                    continue;
                }
                __m512i r[16];
                for (int t = 0; t < 16; t++) {
                    if (t >= nv) { r[t] = _mm512_setzero_si512(); continue; }
                    r[t] = _mm512_maskz_loadu_epi32(bg_mask(full), src + t * ldw + qb);
                    if (kr > full) /* k odd: the last pair is (B(k-1, j), 0) */
                        r[t] = _mm512_mask_set1_epi32(r[t], (__mmask16)(1u << full), b[(j0 + 16 * v + t) * cs + k - 1]);
                }
                tn_transpose16x32(r);
                for (int64_t q = 0; q < kr; q++) _mm512_storeu_si512(dst + (qb + q) * BG_NR + 16 * v, r[q]);
            }
        }
    } else if (cs == 1) { /* rows of B contiguous: interleave two rows */
        for (int64_t q = 0; q < kq; q++) {
            const uint16_t *s0 = b + 2 * q * rs + j0, *s1 = s0 + rs;
            const bool two = 2 * q + 1 < k;
            for (int v = 0; v < BG_NV; v++) {
                const __mmask16 m = bg_mask(nj - 16 * v);
                __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, s0 + 16 * v));
                __m512i hi = two ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, s1 + 16 * v)) : _mm512_setzero_si512();
                _mm512_storeu_si512(dst + q * BG_NR + 16 * v, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
            }
        }
    } else {
        for (int64_t q = 0; q < kq; q++)
            for (int64_t j = 0; j < BG_NR; j++) {
                uint32_t lo = j < nj ? b[2 * q * rs + (j0 + j) * cs] : 0;
                uint32_t hi = j < nj && 2 * q + 1 < k ? b[(2 * q + 1) * rs + (j0 + j) * cs] : 0;
                dst[q * BG_NR + j] = lo | hi << 16;
            }
    }
}

/* A's rows [i0, i0 + nr) as a packed panel (when they do not run along k):
 * dst[q·BG_MR + r] = A(i0+r, 2q) | A(i0+r, 2q+1) << 16, zero padded. */
static void bg_pack_a(const tn_gemm_desc *g, int64_t i0, int64_t nr, uint32_t *dst) {
    const uint16_t *a = g->a;
    const int64_t rs = g->a_rs, cs = g->a_cs, k = g->k, kq = (k + 1) / 2;
    for (int64_t q = 0; q < kq; q++)
        for (int64_t r = 0; r < BG_MR; r++) {
            uint32_t lo = r < nr ? a[(i0 + r) * rs + 2 * q * cs] : 0;
            uint32_t hi = r < nr && 2 * q + 1 < k ? a[(i0 + r) * rs + (2 * q + 1) * cs] : 0;
            dst[q * BG_MR + r] = lo | hi << 16;
        }
}

/* Writes an mr × nj tile from t to C at c (row-major, ldc elements): alpha·acc (+ beta·C),
 * rounded once to bfloat16, or float32 for a float32 C. */
static TGT void bg_store(const tn_gemm_desc *g, const float *t, int64_t i, int64_t j, int64_t mr, int64_t nj) {
    const int64_t nv = (nj + 15) / 16, ldc = g->c_rs;
    const float alpha = (float)g->alpha, beta = (float)g->beta;
    const __m512 al = _mm512_set1_ps(alpha), be = _mm512_set1_ps(beta);
    for (int64_t r = 0; r < mr; r++)
        for (int64_t v = 0; v < nv; v++) {
            const __mmask16 k = bg_mask(nj - 16 * v);
            __m512 x = _mm512_load_ps(t + (r * 3 + v) * 16);
            if (alpha != 1.0f) x = _mm512_mul_ps(x, al);
            if (g->c_f32) {
                float *d = (float *)g->c + (i + r) * ldc + j + 16 * v;
                if (beta != 0) x = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(k, d), x);
                _mm512_mask_storeu_ps(d, k, x);
            } else {
                uint16_t *d = (uint16_t *)g->c + (i + r) * ldc + j + 16 * v;
                if (beta != 0) {
                    __m512i old = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, d));
                    x = _mm512_fmadd_ps(be, _mm512_castsi512_ps(_mm512_slli_epi32(old, 16)), x);
                }
                _mm256_mask_storeu_epi16(d, k, tn_round_bf16(x));
            }
        }
}

/* Rows [m0, m1) × columns [n0, n1) of C on the calling thread. */
static bool bg_region(const tn_gemm_desc *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    const bool inplace = g->a_cs == 1;
    const int64_t k = g->k, kq = (k + 1) / 2;
    /* equal column blocks whose packed pairs fit BG_BBLOCK */
    const int64_t per = BG_BBLOCK / (kq * 4 * BG_NR) * BG_NR, ncmax = per < BG_NR ? BG_NR : per;
    const int64_t nblk = (n1 - n0 + ncmax - 1) / ncmax, ncb = ((n1 - n0 + nblk - 1) / nblk + 15) / 16 * 16;
    const size_t bwords = (size_t)kq * (size_t)((ncb + BG_NR - 1) / BG_NR * BG_NR), awords = inplace ? 0 : (size_t)kq * BG_MR;
    uint32_t *bpack = tn_thread_scratch(TN_SCRATCH_BGEMM, (bwords + awords) * sizeof(uint32_t));
    if (!bpack) return false;
    uint32_t *apack = bpack + bwords;
    _Alignas(64) float tile[BG_MR * BG_NR];
    const int64_t ars = inplace ? g->a_rs * 2 : 4, aks = inplace ? 4 : 4 * BG_MR;
    for (int64_t jc = n0; jc < n1; jc += ncb) {
        const int64_t nc = bg_min(ncb, n1 - jc);
        for (int64_t jr = 0; jr < nc; jr += BG_NR) bg_pack_b(g, jc + jr, bg_min(BG_NR, nc - jr), bpack + jr * kq);
        for (int64_t ir = m0; ir < m1; ir += BG_MR) {
            const int64_t mr = bg_min(BG_MR, m1 - ir);
            const char *ap;
            if (inplace) ap = (const char *)g->a + ir * g->a_rs * 2;
            else {
                bg_pack_a(g, ir, mr, apack);
                ap = (const char *)apack;
            }
            for (int64_t jr = 0; jr < nc; jr += BG_NR) {
                const int64_t nj = bg_min(BG_NR, nc - jr), nv = (nj + 15) / 16;
                BG_UKR[mr - 1][nv - 1](inplace ? k / 2 : kq, inplace && (k & 1), ap, ars, aks, bpack + jr * kq, tile);
                bg_store(g, tile, ir, jc + jr, mr, nj);
            }
        }
    }
    return true;
}

tn_status tn_bgemm(const tn_gemm_desc *g0) { return tn_gemm_by_regions(g0, BG_MR, BG_NR, bg_region); }

#else
tn_status tn_bgemm(const tn_gemm_desc *g) {
    (void)g;
    return tn_error(TN_ERR_RUNTIME, "gemm: the bfloat16 avx512bf16 engine is x86-64 only");
}
#endif
