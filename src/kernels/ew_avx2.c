/* ew_avx2.c — the AVX2+FMA+F16C instantiation of ew_vec.inc: 8 float32 lanes, lane masks
 * as all-ones float lanes. Only reached when tn_cpu_isa() >= TN_ISA_AVX2. */
#include "kernels/ew_simd.h"

#if defined(__x86_64__)
#pragma GCC target("avx2,fma,f16c")
#include <immintrin.h>

#define TGT
#define VW 8
typedef __m256 vf;
typedef __m256 vm;

static inline vf v_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void v_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline vf v_set1(float x) { return _mm256_set1_ps(x); }
static inline vf v_set1_bits(uint32_t b) { return _mm256_castsi256_ps(_mm256_set1_epi32((int)b)); }
static inline vf v_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf v_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf v_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf v_div(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf v_fma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf v_sqrt(vf a) { return _mm256_sqrt_ps(a); }
static inline vf v_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf v_min(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf v_and_bits(vf a, vf b) { return _mm256_and_ps(a, b); }
static inline vf v_xor_bits(vf a, vf b) { return _mm256_xor_ps(a, b); }
static inline vf v_sel(vm m, vf a, vf b) { return _mm256_blendv_ps(b, a, m); }
static inline vm v_cmp_eq(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
static inline vm v_cmp_ne(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_NEQ_UQ); }
static inline vm v_cmp_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline vm v_cmp_le(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
static inline vm v_cmp_gt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline vm v_cmp_ge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
static inline vm v_cmp_unord(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
/* 8 lanes of 0/-1 -> 8 bytes of 0/1 */
static inline void v_st_b8(char *p, vm m) {
    __m256i w = _mm256_and_si256(_mm256_castps_si256(m), _mm256_set1_epi32(1));
    __m128i lo = _mm256_castsi256_si128(w), hi = _mm256_extracti128_si256(w, 1);
    __m128i b = _mm_packus_epi16(_mm_packus_epi32(lo, hi), _mm_setzero_si128());
    _mm_storel_epi64((__m128i *)p, b);
}
static inline vf v_round(vf x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vf v_floor(vf x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
static inline vf v_ceil(vf x) { return _mm256_round_ps(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
static inline vf v_trunc(vf x) { return _mm256_round_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
static inline void v_pow2_split(vf n, vf *s1, vf *s2) {
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    __m256i bias = _mm256_set1_epi32(127);
    *s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    *s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
}
static inline vf v_ld_bf16(const char *p) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
static inline void v_st_bf16(char *p, vf v) {
    __m256i u = _mm256_castps_si256(v);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7FFF))), 16);
    r = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC0)),
                                             _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    __m128i lo = _mm256_castsi256_si128(r), hi = _mm256_extracti128_si256(r, 1);
    _mm_storeu_si128((__m128i *)p, _mm_packus_epi32(lo, hi));
}
static inline vf v_ld_f16(const char *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
static inline void v_st_f16(char *p, vf v) {
    _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

#define EW_REGISTER tn_ew_register_avx2
#define EW_CAST_LOOKUP tn_cast_vec_avx2
#define EW_BYTE_LOOPS tn_ew_byte_loops_avx2
#include "kernels/ew_vec.inc"

#else
void tn_ew_register_avx2(tn_loop_fn (*t)[TN_DTYPE_COUNT], tn_loop_fn (*ref)[TN_DTYPE_COUNT]) { (void)t; (void)ref; }
tn_loop_fn tn_cast_vec_avx2(tn_dtype from, tn_dtype to) { (void)from; (void)to; return NULL; }
void tn_ew_byte_loops_avx2(int itemsize, tn_loop_fn out[3]) { (void)itemsize; out[0] = out[1] = out[2] = NULL; }
#endif
