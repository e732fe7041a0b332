/* ukernel.c — float32 micro-kernel shapes on L1-resident packed panels, one thread: the
 * measurement behind the 8x48 choice in docs/GEMM.md ("Float32 engine"), and the engine's
 * assembly 8x48 kernels (src/kernels/sgemm_ukr_x86.h) against the same shape compiled from
 * intrinsics. Compare with the FMA-only loop of bench/machine.c (fma_avx512_gflops_1).
 *   gcc -O2 -Isrc bench/ukernel.c -o /tmp/ukernel && /tmp/ukernel [kc]
 * Each intrinsics kernel: MR rows x (NV*16) columns, 24 or more zmm accumulators, k
 * unrolled by U. Last, the two 16x16 transposes the engine packs weight panels with
 * (src/kernels/x86_transpose.h), on an L1-resident 16 x 256 block. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))
#define GEN(NAME, MR, NV, U)                                                                          \
    TGT void NAME(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc) {             \
        __m512 cc[MR][NV];                                                                            \
        for (int r = 0; r < MR; r++)                                                                  \
            for (int v = 0; v < NV; v++) cc[r][v] = _mm512_setzero_ps();                              \
        int64_t p = 0;                                                                                \
        for (; p + U <= kc; p += U) {                                                                 \
            _Pragma("GCC unroll 8") for (int u = 0; u < U; u++) {                                     \
                __m512 b[NV];                                                                         \
                for (int v = 0; v < NV; v++) b[v] = _mm512_loadu_ps(bp + v * 16);                    \
                _Pragma("GCC unroll 16") for (int r = 0; r < MR; r++) {                               \
                    __m512 a = _mm512_set1_ps(ap[r]);                                                 \
                    _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) cc[r][v] =                   \
                        _mm512_fmadd_ps(a, b[v], cc[r][v]);                                           \
                }                                                                                     \
                ap += MR;                                                                             \
                bp += NV * 16;                                                                        \
            }                                                                                         \
        }                                                                                             \
        for (int r = 0; r < MR; r++)                                                                  \
            for (int v = 0; v < NV; v++) {                                                            \
                float *d = c + r * ldc + v * 16;                                                      \
                _mm512_storeu_ps(d, _mm512_add_ps(cc[r][v], _mm512_loadu_ps(d)));                     \
            }                                                                                         \
    }
GEN(k12x32, 12, 2, 1)
GEN(k14x32, 14, 2, 4)
GEN(k8x48, 8, 3, 4)
GEN(k6x64, 6, 4, 4)
GEN(k4x96, 4, 6, 4)

#include "kernels/sgemm_ukr_x86.h"

/* The engine's kernels write a tile buffer; add it to C as the others do. */
static TGT void add_tile(const float *t, float *c) {
    for (int i = 0; i < 24; i++) _mm512_storeu_ps(c + 16 * i, _mm512_add_ps(_mm512_load_ps(t + 16 * i), _mm512_loadu_ps(c + 16 * i)));
}
static void asm_packed(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc) {
    _Alignas(64) float t[384];
    sg_ukr_8x3_packed(kc, ap, 1, 8, bp, t);
    add_tile(t, c);
}
static void asm_rows(int64_t kc, const float *ap, const float *bp, float *c, int64_t ldc) {
    _Alignas(64) float t[384];
    sg_ukr_8x3_rows(kc, ap, kc, 1, bp, t); /* the 8 x kc block read as 8 rows of A */
    add_tile(t, c);
}

typedef void (*kf)(int64_t, const float *, const float *, float *, int64_t);
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static void run(const char *nm, kf f, int MR, int NR, int kc) {
    float *a = aligned_alloc(64, (size_t)kc * MR * 4), *b = aligned_alloc(64, (size_t)kc * NR * 4),
          *c = aligned_alloc(64, (size_t)MR * NR * 4);
    for (int i = 0; i < kc * MR; i++) a[i] = 1e-3f * (i % 7);
    for (int i = 0; i < kc * NR; i++) b[i] = 1e-3f * (i % 5);
    for (int i = 0; i < MR * NR; i++) c[i] = 0;
    long it = 4000000000L / ((long)kc * MR * NR);
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t = now();
        for (long i = 0; i < it; i++) f(kc, a, b, c, NR);
        t = now() - t;
        double g = 2.0 * kc * MR * NR * it / t / 1e9;
        if (g > best) best = g;
    }
    printf("%-18s kc=%d %6.1f GFLOP/s (checksum %g)\n", nm, kc, best, (double)c[0]);
    free(a), free(b), free(c);
}
#include "kernels/x86_transpose.h"

/* GB/s of transposing a 16 x 256 block of floats (16 KiB, L1-resident) into 16-float rows,
 * 16x16 at a time: registers only (tn_transpose16x32) or lanes assembled from memory
 * (tn_transpose16x32_mem). */
static TGT void transposes(void) {
    float *s = aligned_alloc(64, 16 * 256 * 4), *d = aligned_alloc(64, 256 * 16 * 4);
    for (int i = 0; i < 16 * 256; i++) s[i] = (float)i;
    for (int mem = 0; mem < 2; mem++) {
        double best = 0;
        for (int rep = 0; rep < 5; rep++) {
            const long it = 200000;
            double t = now();
            for (long r = 0; r < it; r++) {
                for (int pb = 0; pb < 256; pb += 16) {
                    if (mem) {
                        tn_transpose16x32_mem(s + pb, 256, d + pb * 16, 16);
                        continue;
                    }
                    __m512i x[16];
                    for (int i = 0; i < 16; i++) x[i] = _mm512_loadu_si512(s + i * 256 + pb);
                    tn_transpose16x32(x);
                    for (int q = 0; q < 16; q++) _mm512_storeu_si512(d + (pb + q) * 16, x[q]);
                }
                __asm__ volatile("" ::: "memory");
            }
            t = now() - t;
            if (16.0 * 256 * 4 * it / t / 1e9 > best) best = 16.0 * 256 * 4 * it / t / 1e9;
        }
        for (int k = 0; k < 256; k++)
            for (int r = 0; r < 16; r++)
                if (d[k * 16 + r] != s[r * 256 + k]) { printf("transpose %d wrong\n", mem); exit(1); }
        printf("transpose16x32%-4s %6.1f GB/s\n", mem ? "_mem" : "", best);
    }
    free(s), free(d);
}

int main(int argc, char **argv) {
    int kc = argc > 1 ? atoi(argv[1]) : 256;
    if (!__builtin_cpu_supports("avx512f")) { puts("no AVX-512"); return 0; }
    run("12x32", k12x32, 12, 32, kc);
    run("14x32", k14x32, 14, 32, kc);
    run("8x48", k8x48, 8, 48, kc);
    run("6x64", k6x64, 6, 64, kc);
    run("4x96", k4x96, 4, 96, kc);
    run("8x48 asm, A packed", asm_packed, 8, 48, kc);
    run("8x48 asm, A rows", asm_rows, 8, 48, kc);
    transposes();
    return 0;
}
