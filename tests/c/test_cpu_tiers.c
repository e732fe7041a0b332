/* test_cpu_tiers.c — the kernel tier chosen from the host's features (cpu_features.h) and
 * the GEMV and quantised-product kernels it selects agree. Prints one line
 *   tier <name> host <name> gemv <variant> qdot <variant>
 * that tests/test_aarch64.py reads under each emulated CPU (qemu -cpu) and TN_FORCE_ISA. */
#include <string.h>

#include "kernels/cpu_features.h"
#include "kernels/gemv.h"
#include "kernels/quant.h"
#include "tn_test.h"

static bool starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }
static bool ends(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int main(void) {
    const char *cur, *names[TN_CPU_MAX_TIERS];
    int n = tn_cpu_tiers(&cur, names);
    TN_CHECK(n >= 1 && !strcmp(names[0], "scalar"), "the lowest tier is scalar (got %d tiers)", n);
    bool listed = false;
    for (int i = 0; i < n; i++) listed |= !strcmp(names[i], cur);
    TN_CHECK(listed, "the tier in effect (%s) is one the host can run", cur);
    const char *gemv = tn_gemv_variant(TN_DTYPE_FLOAT32), *qdot = tn_qdot_variant(TN_QTYPE_Q8_0);
    TN_CHECK(starts(gemv, "f32_gemv__"), "%s", gemv);
    TN_CHECK(starts(qdot, "q8_0_qdot__"), "%s", qdot);
#if defined(__aarch64__)
    tn_arm_isa t = tn_cpu_arm_isa();
    TN_CHECK(!strcmp(cur, tn_arm_isa_name(t)), "%s vs %s", cur, tn_arm_isa_name(t));
    TN_CHECK(ends(gemv, t >= TN_ARM_ISA_NEON ? "__neon" : "__scalar"), "tier %s picked %s", cur, gemv);
    TN_CHECK(ends(qdot, t >= TN_ARM_ISA_I8MM ? "__i8mm" : t >= TN_ARM_ISA_DOTPROD ? "__neon" : "__ref"), "tier %s picked %s",
             cur, qdot);
    TN_CHECK(ends(tn_qdot_variant(TN_QTYPE_Q4_K), t >= TN_ARM_ISA_DOTPROD ? "__neon" : "__ref"), "tier %s: k-quants on %s",
             cur, tn_qdot_variant(TN_QTYPE_Q4_K));
    TN_CHECK(tn_cpu_has_asimd_dot() == (t >= TN_ARM_ISA_DOTPROD), "asimd_dot at tier %s", cur);
    TN_CHECK(tn_cpu_has_i8mm() == (t >= TN_ARM_ISA_I8MM), "i8mm at tier %s", cur);
    printf("tier %s host %s gemv %s qdot %s\n", cur, tn_arm_isa_name(tn_cpu_arm_host_isa()), gemv, qdot);
#else
    tn_isa t = tn_cpu_isa();
    TN_CHECK(!strcmp(cur, tn_isa_name(t)), "%s vs %s", cur, tn_isa_name(t));
    TN_CHECK(ends(gemv, t >= TN_ISA_AVX512 ? "__avx512" : t >= TN_ISA_AVX2 ? "__avx2" : "__scalar"),
             "tier %s picked %s", cur, gemv);
    TN_CHECK(!ends(qdot, "__neon"), "%s", qdot);
    printf("tier %s host %s gemv %s qdot %s\n", cur, tn_isa_name(tn_cpu_host_isa()), gemv, qdot);
#endif
    return tn_test_summary();
}
