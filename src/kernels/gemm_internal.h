/* gemm_internal.h — what the GEMM driver (gemm.c) and its ISA-specific micro-kernel files
 * share: tile geometry and the micro-kernel / dot signatures. Not a public header. */
#ifndef TN_GEMM_INTERNAL_H
#define TN_GEMM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/status.h"

/* Blocking of the packed engine. MC is a multiple of every MR, NC of every NR, KC even
 * (the bf16 pair kernels consume k two at a time). */
#define TN_GEMM_MC 96
#define TN_GEMM_KC 256
#define TN_GEMM_NC 256

/* Float32 micro-kernel: c[r*ldc + j] (+)= sum_p ap[p*MR + r] * bp[p*NR + j] for the full
 * MR×NR tile; `acc` 0 overwrites c, 1 adds to it. ap/bp are packed panels (zero-padded). */
typedef void (*tn_gemm_f32_ukernel)(int64_t kc, const float *ap, const float *bp, float *c,
                                    int64_t ldc, int acc);
/* BFloat16 pair micro-kernel (AVX512-BF16): panels hold k in pairs, ap[(q*MR + r)*2 + t],
 * bp[(q*NR + j)*2 + t] for pair q, element t; kq = number of pairs. Same c contract. */
typedef void (*tn_gemm_bf16dp_ukernel)(int64_t kq, const uint16_t *ap, const uint16_t *bp,
                                       float *c, int64_t ldc, int acc);

void f32_gemm_4x8__scalar(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc);
void f32_gemm_6x16__avx2(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc);
void f32_gemm_12x32__avx512(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc);
void f32_gemm_12x8__neon(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc, int acc);
void bf16_gemm_dp_12x32__avx512bf16(int64_t kq, const uint16_t *ap, const uint16_t *bp, float *c,
                                    int64_t ldc, int acc);

/* Float32 engine of the avx512 tiers (sgemm_avx512.c): the whole product, threaded over
 * the pool. Usable for float32 when C has a unit stride in either dimension. Packs into
 * per-thread buffers kept between calls (no caller scratch). */
struct tn_gemm_desc;
int tn_sgemm_usable(const struct tn_gemm_desc *g);
tn_status tn_sgemm(const struct tn_gemm_desc *g);

/* The avx512 engines' threading (gemm_regions.c): C is cut into one region per worker,
 * along n or m, whichever leaves each worker fewer elements to pack (A read in place when
 * its rows run along k costs nothing); a column-major C is computed as Cᵀ = Bᵀ·Aᵀ.
 * `region` computes rows [m0, m1) × columns [n0, n1) on the calling thread (false: out
 * of memory). mr and nr are the engine's tile. */
typedef bool (*tn_gemm_region_fn)(const struct tn_gemm_desc *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
tn_status tn_gemm_by_regions(const struct tn_gemm_desc *g, int mr, int nr, tn_gemm_region_fn region);

/* bfloat16 engine of the avx512bf16 tier on hosts without AMX (bgemm_avx512bf16.c):
 * VDPBF16PS on pair panels, threaded over the pool, per-thread packing buffers. Usable
 * when the tier is exactly avx512bf16 and C has a unit stride in either dimension. */
int tn_bgemm_usable(const struct tn_gemm_desc *g);
tn_status tn_bgemm(const struct tn_gemm_desc *g);

/* AMX-BF16 engine (gemm_amx.c): the whole bfloat16 product, threaded over the pool. */
struct tn_gemm_desc;
size_t tn_gemm_bf16_amx_scratch(const struct tn_gemm_desc *g);
void tn_gemm_bf16_amx(const struct tn_gemm_desc *g, void *scratch, size_t scratch_bytes);


/* float16 -> float32, exact, branch-light so loops over it vectorise. */
static inline float tn_gemm_h2f(uint16_t h) {
    uint32_t em = (uint32_t)(h & 0x7FFF) << 13, sign = (uint32_t)(h & 0x8000) << 16, u;
    float f;
    if (em >= (0x7C00u << 13)) {
        u = em | 0x7F800000u; /* inf / NaN keep their payload */
    } else {
        /* Reinterpreting the shifted bits as a float32 and scaling by 2^112 rebiases the
         * exponent (15 -> 127) and normalises subnormals exactly. */
        memcpy(&f, &em, 4);
        f *= 0x1p112f;
        memcpy(&u, &f, 4);
    }
    u |= sign;
    memcpy(&f, &u, 4);
    return f;
}

#endif
