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
/* float32 sqrt where upstream calls MKL's VML (ew_avx512.c): its AVX2 sequence starts from
 * rsqrtps, whose estimates differ between vendors, so here the exact root */
static inline vf v_sqrt_vml(vf a) { return _mm256_sqrt_ps(a); }
static inline vf v_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf v_min(vf a, vf b) { return _mm256_min_ps(a, b); }
static inline vf v_and_bits(vf a, vf b) { return _mm256_and_ps(a, b); }
static inline vf v_xor_bits(vf a, vf b) { return _mm256_xor_ps(a, b); }
static inline vf v_add_bits(vf a, vf b) {
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(a), _mm256_castps_si256(b)));
}
static inline vf v_sel(vm m, vf a, vf b) { return _mm256_blendv_ps(b, a, m); }
/* the bits shifted left by n (as uint32); t[bits(i) & 31] per lane for a 32-entry table t
 * (a gather) */
static inline vf v_shl_bits(vf a, int n) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(a), n)); }
static inline vf v_lut32(const float *t, vf i) {
    return _mm256_i32gather_ps(t, _mm256_and_si256(_mm256_castps_si256(i), _mm256_set1_epi32(31)), 4);
}
static inline vm v_cmp_eq(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
static inline vm v_cmp_ne(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_NEQ_UQ); }
static inline vm v_mask_and(vm a, vm b) { return _mm256_and_ps(a, b); }
static inline vm v_mask_or(vm a, vm b) { return _mm256_or_ps(a, b); }
static inline vm v_mask_xor(vm a, vm b) { return _mm256_xor_ps(a, b); }
static inline vm v_cmp_lt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline vm v_cmp_le(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
static inline vm v_cmp_gt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline vm v_cmp_ge(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
static inline vm v_cmp_unord(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
/* lanes that are not a positive normal finite float (NaN, zeros, infinities, subnormals,
 * negatives) */
static inline vm v_not_pos_normal(vf x) {
    vm lo = _mm256_cmp_ps(x, _mm256_set1_ps(0x1p-126f), _CMP_NGE_UQ); /* below FLT_MIN or NaN */
    return _mm256_or_ps(lo, _mm256_cmp_ps(x, _mm256_set1_ps(__builtin_inff()), _CMP_EQ_OQ));
}
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
/* u = m 2^e with m in [sqrt(1/2), sqrt 2) for positive normal u (other lanes: garbage): the
 * bits of u less those of sqrt(1/2) carry e in their exponent field and m's mantissa below */
static inline void v_frexp_sqrt2(vf u, vf *m, vf *e) {
    __m256i ix = _mm256_sub_epi32(_mm256_castps_si256(u), _mm256_set1_epi32(0x3f3504f3));
    *e = _mm256_cvtepi32_ps(_mm256_srai_epi32(ix, 23));
    *m = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_and_si256(ix, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f3504f3)));
}
/* p 2^n for an integral n in [-254, 254]: 2^n as two factors 2^(n/2) and 2^(n - n/2), so
 * subnormal and overflowing results come out right (p 2^(n/2) is exact) */
static inline vf v_ldexp(vf p, vf n) {
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    __m256i bias = _mm256_set1_epi32(127);
    vf s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    vf s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
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
/* float -> int32 by truncation, the x86 "integer indefinite" INT32_MIN for NaN and out of
 * range (cvttps2dq: the scalar cast loop's cvt_i32f), stored as int32 or narrowed modulo
 * 2^16 / 2^8 (the scalar loop's (int16_t) / (int8_t) of that int32) */
static inline void v_st_cvt_i32(char *p, vf v) { _mm256_storeu_si256((__m256i *)p, _mm256_cvttps_epi32(v)); }
static inline void v_st_cvt_i16(char *p, vf v) {
    __m256i w = _mm256_and_si256(_mm256_cvttps_epi32(v), _mm256_set1_epi32(0xFFFF));
    _mm_storeu_si128((__m128i *)p, _mm_packus_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1)));
}
static inline void v_st_cvt_i8(char *p, vf v) {
    __m256i w = _mm256_and_si256(_mm256_cvttps_epi32(v), _mm256_set1_epi32(0xFF));
    __m128i h = _mm_packus_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    _mm_storel_epi64((__m128i *)p, _mm_packus_epi16(h, h));
}
/* VW uint8 / int8 / int32 elements converted to float (exactly: |v| < 2^24 for the bytes;
 * int32 rounds to nearest, as the scalar (float) conversion) */
static inline vf v_ld_u8(const char *p) { return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p))); }
static inline vf v_ld_i8(const char *p) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p))); }
static inline vf v_ld_i32(const char *p) { return _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)p)); }
static inline vf v_ld_f16(const char *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
static inline void v_st_f16(char *p, vf v) {
    _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* ---- float64 lanes (ew_vec_dmath.inc computes float32 functions in them) ---- */
typedef __m256d vd;
typedef __m256d dm;
static inline int v_any(vm m) { return _mm256_movemask_ps(m); }
static inline void v_widen(vf x, vd *lo, vd *hi) {
    *lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x));
    *hi = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
}
static inline vf v_narrow(vd lo, vd hi) {
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}
static inline int d_any(dm m) { return _mm256_movemask_pd(m) != 0; }
static inline int d_all(dm m) { return _mm256_movemask_pd(m) == 0xF; }
static inline vd d_set1(double x) { return _mm256_set1_pd(x); }
static inline vd d_load(const char *p) { return _mm256_loadu_pd((const double *)p); }
static inline void d_store(char *p, vd v) { _mm256_storeu_pd((double *)p, v); }
static inline vd d_set1_bits(uint64_t b) { return _mm256_castsi256_pd(_mm256_set1_epi64x((long long)b)); }
static inline vd d_add(vd a, vd b) { return _mm256_add_pd(a, b); }
static inline vd d_sub(vd a, vd b) { return _mm256_sub_pd(a, b); }
static inline vd d_mul(vd a, vd b) { return _mm256_mul_pd(a, b); }
static inline vd d_div(vd a, vd b) { return _mm256_div_pd(a, b); }
static inline vd d_fma(vd a, vd b, vd c) { return _mm256_fmadd_pd(a, b, c); }
static inline vd d_sqrt(vd a) { return _mm256_sqrt_pd(a); }
static inline vd d_round(vd x) { return _mm256_round_pd(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vd d_and_bits(vd a, vd b) { return _mm256_and_pd(a, b); }
static inline vd d_xor_bits(vd a, vd b) { return _mm256_xor_pd(a, b); }
static inline vd d_sel(dm m, vd a, vd b) { return _mm256_blendv_pd(b, a, m); }
static inline dm d_cmp_eq(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
static inline dm d_cmp_lt(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
static inline dm d_cmp_gt(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
static inline dm d_cmp_nge(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_NGE_UQ); }
/* 2^n for integral n in [-1022, 1023]: the bits of 2^52 + 1023 + n shifted into the exponent */
static inline vd d_pow2(vd n) {
    __m256i b = _mm256_castpd_si256(_mm256_add_pd(n, _mm256_set1_pd(4503599627371519.0)));
    return _mm256_castsi256_pd(_mm256_slli_epi64(b, 52));
}
/* u = m * 2^e with m in [sqrt(1/2), sqrt 2), for positive normal finite u (other lanes:
 * garbage): with b = bits(u) + bits(1) - bits(sqrt(1/2)), the exponent field of b is e's
 * (it carries exactly when u's mantissa is >= sqrt 2 / 2 of the next power), and the low
 * 52 bits of b plus bits(sqrt(1/2)) are m's bits */
static inline void d_frexp(vd u, vd *m, vd *e) {
    __m256i b = _mm256_add_epi64(_mm256_castpd_si256(u), _mm256_set1_epi64x(0x00095F619980C433LL));
    __m256i eb = _mm256_or_si256(_mm256_srli_epi64(b, 52), _mm256_set1_epi64x(0x4330000000000000LL));
    *e = _mm256_sub_pd(_mm256_castsi256_pd(eb), _mm256_set1_pd(4503599627371519.0));
    *m = _mm256_castsi256_pd(_mm256_add_epi64(_mm256_and_si256(b, _mm256_set1_epi64x(0x000FFFFFFFFFFFFFLL)),
                                             _mm256_set1_epi64x(0x3FE6A09E667F3BCDLL)));
}
/* lanes whose integral n (|n| < 2^31) has bit `bit` set */
static inline dm d_bit(vd n, int bit) {
    __m256i b = _mm256_castpd_si256(_mm256_add_pd(n, _mm256_set1_pd(6755399441055744.0)));
    __m256i k = _mm256_set1_epi64x(1LL << bit);
    return _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(b, k), k));
}

/* ew_vec.inc's tails (see there) for 4- and 8-byte elements: one masked load blended with the
 * first element and one 32-byte store (buf holds 32 bytes); written out by a masked store.
 * 1- and 2-byte elements (no masked form in AVX2) are staged by copies. */
#define V_HAS_TAIL 1
static inline __m256i tail_mask(int64_t r, int es) {
    return es == 4 ? _mm256_cmpgt_epi32(_mm256_set1_epi32((int)r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
                   : _mm256_cmpgt_epi64(_mm256_set1_epi64x(r), _mm256_setr_epi64x(0, 1, 2, 3));
}
static inline __attribute__((always_inline)) bool v_tail_stage(char *buf, const char *src, int64_t r, int es) {
    if (r * es >= 32) return false;
    __m256i v;
    if (es == 4) {
        int32_t f;
        memcpy(&f, src, 4);
        __m256i m = tail_mask(r, 4);
        v = _mm256_blendv_epi8(_mm256_set1_epi32(f), _mm256_maskload_epi32((const int *)src, m), m);
    } else if (es == 8) {
        long long f;
        memcpy(&f, src, 8);
        __m256i m = tail_mask(r, 8);
        v = _mm256_blendv_epi8(_mm256_set1_epi64x(f), _mm256_maskload_epi64((const long long *)src, m), m);
    } else {
        return false;
    }
    _mm256_store_si256((__m256i *)buf, v);
    return true;
}
static inline __attribute__((always_inline)) bool v_tail_put(char *dst, const char *buf, int64_t r, int es) {
    if (es == 4) _mm256_maskstore_epi32((int *)dst, tail_mask(r, 4), _mm256_load_si256((const __m256i *)buf));
    else if (es == 8) _mm256_maskstore_epi64((long long *)dst, tail_mask(r, 8), _mm256_load_si256((const __m256i *)buf));
    else return false;
    return true;
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
