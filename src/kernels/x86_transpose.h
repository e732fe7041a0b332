/* x86_transpose.h — in-register transposes of 32-bit words shared by the x86 kernels (gemm_amx.c
 * packs activation pairs, sgemm_avx512.c packs weight panels; scan_rows.c and reduce_prod.c
 * scan and multiply eight rows at once). Each includer compiles these for its own target;
 * call the 16 x 16 forms only after tn_cpu_isa() says avx512, the 8 x 8 one after avx2. */
#ifndef TN_X86_TRANSPOSE_H
#define TN_X86_TRANSPOSE_H

#if defined(__x86_64__)
#include <immintrin.h>

/* 16×16 transpose of 32-bit words: r[i] (row i) becomes column i. */
static inline __attribute__((target("avx512f"), always_inline)) void tn_transpose16x32(__m512i r[16]) {
    __m512i t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        u[4 * i + 0] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    /* u[4i + c], 128-bit lane L = column 4L + c, rows 4i..4i+3 */
    for (int c = 0; c < 4; c++) {
        __m512i x0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44), x1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xEE);
        __m512i x2 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44), x3 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xEE);
        r[0 + c] = _mm512_shuffle_i32x4(x0, x2, 0x88);
        r[4 + c] = _mm512_shuffle_i32x4(x0, x2, 0xDD);
        r[8 + c] = _mm512_shuffle_i32x4(x1, x3, 0x88);
        r[12 + c] = _mm512_shuffle_i32x4(x1, x3, 0xDD);
    }
}

/* The 16×16 block of 32-bit words at s (row i at s + i·ld) transposed to d (row k at
 * d + k·dld: the 16 rows' words k). The lanes are assembled from memory (four 128-bit loads
 * per register, three of them inserted), so only the 4×4 transposes within the lanes
 * shuffle: 32 shuffles against tn_transpose16x32's 64 (bench/ukernel.c times both;
 * docs/GEMM.md, "Float32 engine, session 6"). */
static inline __attribute__((target("avx512f"), always_inline)) void tn_transpose16x32_mem(const float *s, int64_t ld,
                                                                                          float *d, int64_t dld) {
    __m512 z[16];
    for (int c = 0; c < 4; c++)       /* words 4c..4c+3 of each row */
        for (int q = 0; q < 4; q++) { /* rows q, q+4, q+8, q+12 in lanes 0-3 */
            __m512 x = _mm512_castps128_ps512(_mm_loadu_ps(s + q * ld + 4 * c));
            x = _mm512_insertf32x4(x, _mm_loadu_ps(s + (q + 4) * ld + 4 * c), 1);
            x = _mm512_insertf32x4(x, _mm_loadu_ps(s + (q + 8) * ld + 4 * c), 2);
            z[4 * c + q] = _mm512_insertf32x4(x, _mm_loadu_ps(s + (q + 12) * ld + 4 * c), 3);
        }
    for (int c = 0; c < 4; c++) { /* in every lane: rows q, words 4c+w -> words 4c+w, rows q */
        __m512d t0 = _mm512_castps_pd(_mm512_unpacklo_ps(z[4 * c], z[4 * c + 1]));
        __m512d t1 = _mm512_castps_pd(_mm512_unpackhi_ps(z[4 * c], z[4 * c + 1]));
        __m512d t2 = _mm512_castps_pd(_mm512_unpacklo_ps(z[4 * c + 2], z[4 * c + 3]));
        __m512d t3 = _mm512_castps_pd(_mm512_unpackhi_ps(z[4 * c + 2], z[4 * c + 3]));
        _mm512_storeu_ps(d + (4 * c + 0) * dld, _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2)));
        _mm512_storeu_ps(d + (4 * c + 1) * dld, _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2)));
        _mm512_storeu_ps(d + (4 * c + 2) * dld, _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3)));
        _mm512_storeu_ps(d + (4 * c + 3) * dld, _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3)));
    }
}

/* 8×8 transpose of floats in AVX registers: r[i] (row i) becomes column i. */
static inline __attribute__((target("avx2"), always_inline)) void tn_transpose8x8_ps(__m256 r[8]) {
    __m256 t[8], s[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int h = 0; h < 2; h++) {
        s[4 * h + 0] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
        s[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xEE);
        s[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
        s[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xEE);
    }
    for (int c = 0; c < 4; c++) {
        r[c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x20);
        r[4 + c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x31);
    }
}
#endif

#endif
