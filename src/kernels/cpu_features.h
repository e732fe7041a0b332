/* cpu_features.h — what the host CPU can run, detected once (cpuid + xgetbv on x86-64, the
 * auxiliary vector's HWCAPs on aarch64), and the ISA tier kernels dispatch on.
 * TN_FORCE_ISA caps the tier (never raises it) so tests and benchmarks can exercise every
 * lower variant on a bigger machine: scalar|avx2|avx512|avx512bf16 on x86-64,
 * scalar|neon|dotprod on aarch64. */
#ifndef TN_CPU_FEATURES_H
#define TN_CPU_FEATURES_H

#include <stdbool.h>

typedef struct tn_cpu_features {
    bool avx2, fma, f16c;
    bool avx512f, avx512bw, avx512vl, avx512_bf16, avx512_vnni, avx512_fp16;
    /* read only to predict upstream's oneDNN choice (tn_cpu_upstream_onednn_lowp), not
     * used by our kernels: AVX512DQ, AVX-VNNI, AVX-VNNI-INT8, AVX-NE-CONVERT */
    bool avx512dq, avx_vnni, avx_vnni_int8, avx_ne_convert;
    /* AMX: the CPU has the tiles and BF16 tile products, the OS enabled the tile state
     * (XCR0 bits 17/18), and this process was granted it (arch_prctl ARCH_REQ_XCOMP_PERM,
     * asked once at detection; refused means amx_ok stays false and nothing uses tiles). */
    bool amx_tile, amx_bf16, amx_ok;
    /* aarch64: Advanced SIMD (HWCAP_ASIMD), the dot-product extension (SDOT/UDOT,
     * HWCAP_ASIMDDP) and the int8 matrix multiply (SMMLA/UMMLA/USDOT, HWCAP2_I8MM). */
    bool asimd, asimd_dot, asimd_i8mm;
} tn_cpu_features;

/* Kernel tiers in increasing order; a tier implies every feature its kernels use
 * (avx2 = AVX2+FMA+F16C, avx512 = that + F+BW+VL, avx512bf16 = that + AVX512-BF16,
 * amx = that + AMX-TILE + AMX-BF16, usable by this process).
 * Kernels test `tn_cpu_isa() >= TN_ISA_...`. */
typedef enum tn_isa {
    TN_ISA_SCALAR = 0,
    TN_ISA_AVX2 = 1,
    TN_ISA_AVX512 = 2,
    TN_ISA_AVX512_BF16 = 3,
    TN_ISA_AMX = 4, /* avx512bf16 + AMX-TILE/AMX-BF16 with the OS permission granted */
} tn_isa;

/* Features the hardware and OS support (ignores TN_FORCE_ISA). Thread-safe, cached. */
const tn_cpu_features *tn_cpu_features_get(void);
/* The highest tier the host supports, lowered by TN_FORCE_ISA when set. Cached at first
 * call; tn_cpu_isa_set overrides it (tests use this to walk every tier). */
tn_isa tn_cpu_isa(void);
/* The host's best tier, ignoring TN_FORCE_ISA and overrides. */
tn_isa tn_cpu_host_isa(void);
/* Forces the tier (clamped to what the host supports); returns the tier in effect. */
tn_isa tn_cpu_isa_set(tn_isa isa);
/* Whether upstream's oneDNN (ideep's has_bf16_type_support / has_fp16_type_support)
 * takes BFloat16 (half=false) or Half (half=true) work on this host: oneDNN's ISA at least
 * avx512_core (F+BW+VL+DQ; for Half avx512_core_fp16, which adds VNNI, BF16 and FP16), or
 * avx2_vnni_2 (AVX-VNNI + AVX-VNNI-INT8 + AVX-NE-CONVERT). Upstream's results differ by
 * path (oneDNN rounds once where its slow paths round intermediates), so operators that
 * follow upstream's rounding ask this. Host features: TN_FORCE_ISA does not change it, as
 * it does not change upstream. */
bool tn_cpu_upstream_onednn_lowp(bool half);
/* "scalar" / "avx2" / "avx512" / "avx512bf16" / "amx". */
const char *tn_isa_name(tn_isa isa);
/* Whether kernels may use AVX512-BF16 instructions (tier in effect is avx512bf16). */
static inline bool tn_cpu_has_avx512_bf16(void) { return tn_cpu_isa() >= TN_ISA_AVX512_BF16; }
/* Whether kernels may use AMX tile instructions (tier in effect is amx). Each thread must
 * still load a tile configuration before its first tile instruction. */
static inline bool tn_cpu_has_amx(void) { return tn_cpu_isa() >= TN_ISA_AMX; }
/* aarch64 kernel tiers in increasing order; a tier implies the features of those below:
 * neon = Advanced SIMD (the GEMV), dotprod = + SDOT (the quantised products), i8mm = +
 * SMMLA (the Q4_0/Q4_1/Q8_0 and 8da4w products; the k-quants and int8 weight-only stay on
 * the dotprod kernels). scalar = the portable reference kernels. On other architectures the tier is scalar. */
typedef enum tn_arm_isa {
    TN_ARM_ISA_SCALAR = 0,
    TN_ARM_ISA_NEON = 1,
    TN_ARM_ISA_DOTPROD = 2,
    TN_ARM_ISA_I8MM = 3,
} tn_arm_isa;
/* The aarch64 tier: the host's best, lowered by TN_FORCE_ISA (scalar|neon|dotprod), cached
 * at first call. */
tn_arm_isa tn_cpu_arm_isa(void);
/* Forces the aarch64 tier (clamped to what the host supports); returns the tier in
 * effect (tests use this to walk every tier). */
tn_arm_isa tn_cpu_arm_isa_set(tn_arm_isa isa);
/* The host's best aarch64 tier, ignoring TN_FORCE_ISA. */
tn_arm_isa tn_cpu_arm_host_isa(void);
/* "scalar" / "neon" / "dotprod" / "i8mm". */
const char *tn_arm_isa_name(tn_arm_isa isa);
/* Whether kernels may use the aarch64 dot-product instructions (tier dotprod or above). */
static inline bool tn_cpu_has_asimd_dot(void) { return tn_cpu_arm_isa() >= TN_ARM_ISA_DOTPROD; }
/* Whether kernels may use the aarch64 int8 matrix multiply (tier i8mm). */
static inline bool tn_cpu_has_i8mm(void) { return tn_cpu_arm_isa() >= TN_ARM_ISA_I8MM; }
/* The host architecture's tiers as names, for reports (torch._C._tn_isa, scripts/test.sh):
 * *cur the tier in effect; names[] every tier the host can run, lowest first. Returns how
 * many names were written (at most TN_CPU_MAX_TIERS): x86-64's tn_isa tiers there,
 * aarch64's tn_arm_isa tiers there. */
enum { TN_CPU_MAX_TIERS = 8 };
int tn_cpu_tiers(const char **cur, const char *names[TN_CPU_MAX_TIERS]);

#endif
