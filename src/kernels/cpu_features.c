/* cpu_features.c — detection of the CPU features our kernels use (cpuid/xgetbv on x86-64,
 * HWCAPs on aarch64), the tiers they map to, and the TN_FORCE_ISA override. */
#include "kernels/cpu_features.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* Linux asks a process to request the AMX tile data state (xfeature 18) before using it. */
static bool request_amx(void) {
#if defined(__linux__) && defined(SYS_arch_prctl)
    enum { ARCH_GET_XCOMP_PERM = 0x1022, ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
    if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) != 0) return false;
    unsigned long bits = 0;
    if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &bits) != 0) return false;
    return (bits >> XFEATURE_XTILEDATA) & 1;
#else
    return false;
#endif
}

static uint64_t xgetbv0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void detect(tn_cpu_features *f) {
    unsigned a, b, c, d;
    memset(f, 0, sizeof *f);
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    bool osxsave = (c >> 27) & 1, fma = (c >> 12) & 1, f16c = (c >> 29) & 1, avx = (c >> 28) & 1;
    if (!osxsave || !avx) return;
    uint64_t xcr0 = xgetbv0();
    /* The OS must save YMM (bits 1,2) for AVX and opmask/ZMM state (bits 5,6,7) for AVX-512. */
    bool ymm_ok = (xcr0 & 0x6) == 0x6, zmm_ok = (xcr0 & 0xE6) == 0xE6;
    if (!ymm_ok) return;
    unsigned maxleaf = __get_cpuid_max(0, NULL);
    if (maxleaf < 7) return;
    __cpuid_count(7, 0, a, b, c, d);
    f->avx2 = (b >> 5) & 1;
    f->fma = fma;
    f->f16c = f16c;
    unsigned a1, b1, c1, d1; /* leaf 7, subleaf 1 */
    __cpuid_count(7, 1, a1, b1, c1, d1);
    f->avx_vnni = (a1 >> 4) & 1;
    f->avx_vnni_int8 = (d1 >> 4) & 1;
    f->avx_ne_convert = (d1 >> 5) & 1;
    if (zmm_ok) {
        f->avx512f = (b >> 16) & 1;
        f->avx512bw = (b >> 30) & 1;
        f->avx512vl = (b >> 31) & 1;
        f->avx512dq = (b >> 17) & 1;
        f->avx512_vnni = (c >> 11) & 1;
        f->avx512_fp16 = (d >> 23) & 1;
        f->avx512_bf16 = (a1 >> 5) & 1;
        f->amx_bf16 = (d >> 22) & 1;
        f->amx_tile = (d >> 24) & 1;
        bool tiles_on = ((xcr0 >> 17) & 3) == 3; /* XTILECFG and XTILEDATA enabled by the OS */
        if (tiles_on && f->amx_tile && f->amx_bf16 && f->avx512_bf16) f->amx_ok = request_amx();
    }
}
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
static void detect(tn_cpu_features *f) {
    memset(f, 0, sizeof *f);
    unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    f->asimd = (hw >> 1) & 1;          /* HWCAP_ASIMD */
    f->asimd_dot = (hw >> 20) & 1;     /* HWCAP_ASIMDDP */
    f->asimd_i8mm = (hw2 >> 13) & 1;   /* HWCAP2_I8MM */
}
#else
static void detect(tn_cpu_features *f) { memset(f, 0, sizeof *f); }
#endif

static tn_cpu_features g_features;
static atomic_int g_state; /* 0 unknown, 1 detecting, 2 ready */
static atomic_int g_isa = -1;

const tn_cpu_features *tn_cpu_features_get(void) {
    if (atomic_load_explicit(&g_state, memory_order_acquire) == 2) return &g_features;
    int expect = 0;
    if (atomic_compare_exchange_strong(&g_state, &expect, 1)) {
        detect(&g_features);
        atomic_store_explicit(&g_state, 2, memory_order_release);
    } else {
        while (atomic_load_explicit(&g_state, memory_order_acquire) != 2) {
        }
    }
    return &g_features;
}

static tn_isa host_isa(void) {
    const tn_cpu_features *f = tn_cpu_features_get();
    if (f->avx512f && f->avx512bw && f->avx512vl && f->avx2 && f->fma && f->f16c)
        return f->avx512_bf16 ? (f->amx_ok ? TN_ISA_AMX : TN_ISA_AVX512_BF16) : TN_ISA_AVX512;
    if (f->avx2 && f->fma && f->f16c) return TN_ISA_AVX2;
    return TN_ISA_SCALAR;
}

tn_isa tn_cpu_host_isa(void) { return host_isa(); }

bool tn_cpu_upstream_onednn_lowp(bool half) {
    const tn_cpu_features *f = tn_cpu_features_get();
    bool avx2_vnni_2 = f->avx2 && f->avx_vnni && f->avx_vnni_int8 && f->avx_ne_convert;
    bool core = f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq;
    if (half) core = core && f->avx512_vnni && f->avx512_bf16 && f->avx512_fp16;
    return core || avx2_vnni_2;
}

tn_isa tn_cpu_isa_set(tn_isa isa) {
    tn_isa host = host_isa();
    if (isa > host) isa = host;
    atomic_store(&g_isa, (int)isa);
    return isa;
}

tn_isa tn_cpu_isa(void) {
    int v = atomic_load_explicit(&g_isa, memory_order_relaxed);
    if (v >= 0) return (tn_isa)v;
    tn_isa isa = host_isa();
    const char *force = getenv("TN_FORCE_ISA");
    if (force) {
        if (!strcmp(force, "scalar")) isa = TN_ISA_SCALAR;
        else if (!strcmp(force, "avx2") && isa > TN_ISA_AVX2) isa = TN_ISA_AVX2;
        else if (!strcmp(force, "avx512") && isa > TN_ISA_AVX512) isa = TN_ISA_AVX512;
        else if (!strcmp(force, "avx512bf16") && isa > TN_ISA_AVX512_BF16) isa = TN_ISA_AVX512_BF16;
        /* "amx" or anything unknown leaves the host tier: the variable only lowers. */
    }
    return tn_cpu_isa_set(isa);
}

tn_arm_isa tn_cpu_arm_host_isa(void) {
    const tn_cpu_features *f = tn_cpu_features_get();
    if (!f->asimd) return TN_ARM_ISA_SCALAR;
    if (!f->asimd_dot) return TN_ARM_ISA_NEON;
    return f->asimd_i8mm ? TN_ARM_ISA_I8MM : TN_ARM_ISA_DOTPROD;
}

static atomic_int g_arm_isa = -1;

tn_arm_isa tn_cpu_arm_isa(void) {
    int v = atomic_load_explicit(&g_arm_isa, memory_order_relaxed);
    if (v >= 0) return (tn_arm_isa)v;
    tn_arm_isa isa = tn_cpu_arm_host_isa();
    const char *force = getenv("TN_FORCE_ISA");
    if (force) {
        if (!strcmp(force, "scalar")) isa = TN_ARM_ISA_SCALAR;
        else if (!strcmp(force, "neon") && isa > TN_ARM_ISA_NEON) isa = TN_ARM_ISA_NEON;
        else if (!strcmp(force, "dotprod") && isa > TN_ARM_ISA_DOTPROD) isa = TN_ARM_ISA_DOTPROD;
        /* "i8mm", an x86 name or anything unknown leaves the host tier: the variable only lowers. */
    }
    atomic_store(&g_arm_isa, (int)isa);
    return isa;
}

tn_arm_isa tn_cpu_arm_isa_set(tn_arm_isa isa) {
    tn_arm_isa host = tn_cpu_arm_host_isa();
    if (isa > host) isa = host;
    atomic_store(&g_arm_isa, (int)isa);
    return isa;
}

const char *tn_arm_isa_name(tn_arm_isa isa) {
    switch (isa) {
    case TN_ARM_ISA_NEON: return "neon";
    case TN_ARM_ISA_DOTPROD: return "dotprod";
    case TN_ARM_ISA_I8MM: return "i8mm";
    default: return "scalar";
    }
}

int tn_cpu_tiers(const char **cur, const char *names[TN_CPU_MAX_TIERS]) {
    int n = 0;
#if defined(__aarch64__)
    *cur = tn_arm_isa_name(tn_cpu_arm_isa());
    for (int t = TN_ARM_ISA_SCALAR; t <= (int)tn_cpu_arm_host_isa() && n < TN_CPU_MAX_TIERS; t++)
        names[n++] = tn_arm_isa_name((tn_arm_isa)t);
#else
    *cur = tn_isa_name(tn_cpu_isa());
    for (int t = TN_ISA_SCALAR; t <= (int)tn_cpu_host_isa() && n < TN_CPU_MAX_TIERS; t++)
        names[n++] = tn_isa_name((tn_isa)t);
#endif
    return n;
}

const char *tn_isa_name(tn_isa isa) {
    switch (isa) {
    case TN_ISA_AVX2: return "avx2";
    case TN_ISA_AVX512: return "avx512";
    case TN_ISA_AVX512_BF16: return "avx512bf16";
    case TN_ISA_AMX: return "amx";
    default: return "scalar";
    }
}
