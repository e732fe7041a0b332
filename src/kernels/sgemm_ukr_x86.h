/* sgemm_ukr_x86.h — the float32 engine's full 8×48 micro-kernels in inline assembly, for
 * sgemm_avx512.c and for bench/ukernel.c (which measures them against the compiled
 * intrinsics and the FMA-only loop: `gcc -O2 -Isrc bench/ukernel.c`). x86-64, AVX-512F;
 * callers check the ISA first.
 *
 * sg_ukr_8x3_packed(kc, a, ars, aks, bp, t) and sg_ukr_8x3_rows(...): 8 rows of A by 48
 * columns over kc steps into t (64-byte aligned, 24 vectors, t[(r·3 + v)·16 + lane]). bp is
 * a packed panel of B, 48 floats per k step. "packed": A is a packed micro-panel, 8 floats
 * per k step (ars, aks ignored). "rows": A's rows read in place, row r at a + r·ars,
 * contiguous along k (aks ignored). */
#ifndef TN_SGEMM_UKR_X86_H
#define TN_SGEMM_UKR_X86_H

#include <stdint.h>

#ifndef TGT
#define TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))
#endif

/* The full 8×48 tile, which does nearly all the work, in inline assembly (two variants:
 * A packed, A in place). `bench/ukernel.c` times them on L1-resident panels against the
 * same tile compiled from intrinsics and the FMA-only loop (docs/GEMM.md). Per k step: three loads of B (zmm24-26), eight broadcasts of A (zmm31),
 * 24 FMAs into zmm0-23; k unrolled by 4, then single steps. (A software prefetch of the B
 * panel 0.5-2 KiB ahead was dropped in session 6: in the engine, without it, the hardware
 * prefetchers did as well or better at every shape measured, docs/GEMM.md.) */
#define SG_FMA3(c0, c1, c2)                          \
    "vfmadd231ps %%zmm24, %%zmm31, %%zmm" #c0 "\n\t" \
    "vfmadd231ps %%zmm25, %%zmm31, %%zmm" #c1 "\n\t" \
    "vfmadd231ps %%zmm26, %%zmm31, %%zmm" #c2 "\n\t"
#define SG_LOADB(u)                                                \
    "vmovups " #u "*192(%[b]), %%zmm24\n\t"                        \
    "vmovups " #u "*192+64(%[b]), %%zmm25\n\t"                     \
    "vmovups " #u "*192+128(%[b]), %%zmm26\n\t"
/* packed A: row r of step u at u*32 + r*4 */
#define SG_PR(u, r, c0, c1, c2) "vbroadcastss " #u "*32+" #r "*4(%[a]), %%zmm31\n\t" SG_FMA3(c0, c1, c2)
#define SG_PSTEP(u)                                                                                \
    SG_LOADB(u) SG_PR(u, 0, 0, 1, 2) SG_PR(u, 1, 3, 4, 5) SG_PR(u, 2, 6, 7, 8) SG_PR(u, 3, 9, 10, 11) \
        SG_PR(u, 4, 12, 13, 14) SG_PR(u, 5, 15, 16, 17) SG_PR(u, 6, 18, 19, 20) SG_PR(u, 7, 21, 22, 23)
/* A in place: rows 0-4 from a (a, a+ld, a+2ld, a+3ld, a+4ld), rows 5-7 from a5 = a + 5ld */
#define SG_IR(u, addr, c0, c1, c2) "vbroadcastss " #u "*4" addr ", %%zmm31\n\t" SG_FMA3(c0, c1, c2)
#define SG_ISTEP(u)                                                                                          \
    SG_LOADB(u) SG_IR(u, "(%[a])", 0, 1, 2) SG_IR(u, "(%[a],%[ld],1)", 3, 4, 5)                            \
        SG_IR(u, "(%[a],%[ld],2)", 6, 7, 8) SG_IR(u, "(%[a],%[ld3],1)", 9, 10, 11)                         \
            SG_IR(u, "(%[a],%[ld],4)", 12, 13, 14) SG_IR(u, "(%[a5])", 15, 16, 17)                         \
                SG_IR(u, "(%[a5],%[ld],1)", 18, 19, 20) SG_IR(u, "(%[a5],%[ld],2)", 21, 22, 23)
#define SG_ZERO(i) "vpxord %%zmm" #i ", %%zmm" #i ", %%zmm" #i "\n\t"
#define SG_ZERO_ALL                                                                                         \
    SG_ZERO(0) SG_ZERO(1) SG_ZERO(2) SG_ZERO(3) SG_ZERO(4) SG_ZERO(5) SG_ZERO(6) SG_ZERO(7) SG_ZERO(8)     \
        SG_ZERO(9) SG_ZERO(10) SG_ZERO(11) SG_ZERO(12) SG_ZERO(13) SG_ZERO(14) SG_ZERO(15) SG_ZERO(16)     \
            SG_ZERO(17) SG_ZERO(18) SG_ZERO(19) SG_ZERO(20) SG_ZERO(21) SG_ZERO(22) SG_ZERO(23)
#define SG_ZMM_ALL                                                                                          \
    "zmm0", "zmm1", "zmm2", "zmm3", "zmm4", "zmm5", "zmm6", "zmm7", "zmm8", "zmm9", "zmm10", "zmm11", "zmm12", \
        "zmm13", "zmm14", "zmm15", "zmm16", "zmm17", "zmm18", "zmm19", "zmm20", "zmm21", "zmm22", "zmm23",     \
        "zmm24", "zmm25", "zmm26", "zmm31"

/* The loop the kernels share: zero the tile, k in steps of 4 (STEP(0..3), then ADV4 moves
 * the pointers), the remaining steps one by one (ADV1), then END (SG_C_END: the tile to
 * C). */
#define SG_LOOP_END(STEP, ADV4, ADV1, END)                                                      \
    SG_ZERO_ALL "testq %[n4], %[n4]\n\t"                                                        \
                "jz 2f\n\t"                                                                     \
                "1:\n\t" STEP(0) STEP(1) STEP(2) STEP(3) ADV4 "decq %[n4]\n\t"                 \
                "jnz 1b\n\t"                                                                    \
                "2:\n\t"                                                                        \
                "testq %[n1], %[n1]\n\t"                                                        \
                "jz 4f\n\t"                                                                     \
                "3:\n\t" STEP(0) ADV1 "decq %[n1]\n\t"                                         \
                "jnz 3b\n\t"                                                                    \
                "4:\n\t" END

/* Writing the tile straight to a row-major C (row pitch ldc bytes), no tile buffer: with
 * add != 0 C += acc, else C = acc (alpha = 1, no beta: sg_region's common case). */
#define SG_CROW_ST(c0, c1, c2)                                                                              \
    "vmovups %%zmm" #c0 ", (%[c])\n\tvmovups %%zmm" #c1 ", 64(%[c])\n\tvmovups %%zmm" #c2 ", 128(%[c])\n\t"     \
    "addq %[ldc], %[c]\n\t"
#define SG_CROW_ADD(c0, c1, c2)                                                                             \
    "vaddps (%[c]), %%zmm" #c0 ", %%zmm" #c0 "\n\tvaddps 64(%[c]), %%zmm" #c1 ", %%zmm" #c1 "\n\t"              \
    "vaddps 128(%[c]), %%zmm" #c2 ", %%zmm" #c2 "\n\t" SG_CROW_ST(c0, c1, c2)
#define SG_CROWS(R)                                                                                         \
    R(0, 1, 2) R(3, 4, 5) R(6, 7, 8) R(9, 10, 11) R(12, 13, 14) R(15, 16, 17) R(18, 19, 20) R(21, 22, 23)
#define SG_C_END "cmpq $0, %[add]\n\tje 5f\n\t" SG_CROWS(SG_CROW_ADD) "jmp 6f\n\t5:\n\t" SG_CROWS(SG_CROW_ST) "6:\n\t"

/* The two kernels, writing the tile straight to a row-major C (SG_C_END): c is the tile's
 * first element, ldc C's row stride in floats. */
static TGT void sg_ukc_8x3_packed(int64_t kc, const float *a, const float *bp, float *c, int64_t ldc, int64_t add) {
    int64_t n4 = kc >> 2, n1 = kc & 3, ldcb = ldc * 4;
    __asm__ volatile(SG_LOOP_END(SG_PSTEP, "addq $128, %[a]\n\taddq $768, %[b]\n\t",
                                 "addq $32, %[a]\n\taddq $192, %[b]\n\t", SG_C_END)
                     : [a] "+r"(a), [b] "+r"(bp), [n4] "+r"(n4), [n1] "+r"(n1), [c] "+r"(c)
                     : [ldc] "r"(ldcb), [add] "r"(add)
                     : SG_ZMM_ALL, "memory", "cc");
}

static TGT void sg_ukc_8x3_rows(int64_t kc, const float *a, int64_t ars, const float *bp, float *c, int64_t ldc,
                                int64_t add) {
    int64_t n4 = kc >> 2, n1 = kc & 3, ld = ars * 4, ld3 = ars * 12, ldcb = ldc * 4;
    const float *a5 = a + 5 * ars;
    __asm__ volatile(SG_LOOP_END(SG_ISTEP, "addq $16, %[a]\n\taddq $16, %[a5]\n\taddq $768, %[b]\n\t",
                                 "addq $4, %[a]\n\taddq $4, %[a5]\n\taddq $192, %[b]\n\t", SG_C_END)
                     : [a] "+r"(a), [a5] "+r"(a5), [b] "+r"(bp), [n4] "+r"(n4), [n1] "+r"(n1), [c] "+r"(c)
                     : [ld] "r"(ld), [ld3] "r"(ld3), [ldc] "m"(ldcb), [add] "m"(add)
                     : SG_ZMM_ALL, "memory", "cc");
}

/* The same kernels with the sg_ukr signature, for sg_region's tile path and bench/ukernel.c:
 * the tile buffer t is itself a row-major 8 × 48 block. */
static TGT void sg_ukr_8x3_packed(int64_t kc, const float *a, int64_t ars, int64_t aks, const float *bp, float *t) {
    sg_ukc_8x3_packed(kc, a, bp, t, 48, 0);
}

static TGT void sg_ukr_8x3_rows(int64_t kc, const float *a, int64_t ars, int64_t aks, const float *bp, float *t) {
    sg_ukc_8x3_rows(kc, a, ars, bp, t, 48, 0);
}

#endif
