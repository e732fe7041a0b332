/* ew_avx512.c — the AVX-512 (F+BW+VL) instantiation of ew_vec.inc: 16 float32 lanes,
 * lane masks in k registers. Only reached when tn_cpu_isa() >= TN_ISA_AVX512. */
#include "kernels/ew_simd.h"
#include "kernels/cast.h"
#include "kernels/cpu_features.h"

#if defined(__x86_64__)
#pragma GCC target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")
#include <immintrin.h>

#define TGT
#define VW 16
typedef __m512 vf;
typedef __mmask16 vm;

static inline vf v_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void v_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
static inline vf v_set1(float x) { return _mm512_set1_ps(x); }
static inline vf v_set1_bits(uint32_t b) { return _mm512_castsi512_ps(_mm512_set1_epi32((int)b)); }
static inline vf v_add(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf v_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf v_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf v_div(vf a, vf b) { return _mm512_div_ps(a, b); }
static inline vf v_fma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf v_sqrt(vf a) { return _mm512_sqrt_ps(a); }
/* float32 sqrt as upstream computes it on Intel AVX-512 hosts: MKL's VML (vsSqrt, HA), which
 * its float32 torch.sqrt calls there, any layout; the sequence as its instructions do it: r =
 * rsqrt14(x) (its values specified by the SDM), h = r / 2, s = x r, y = s + (x - s^2) h, each
 * step rounded once (from any estimate within 2^-14 that is within 1 ulp of the root); lanes
 * with r > 2^39 (x below about 2^-78) scale x by 2^78, s by 2^39 and h by 2^-78 (exact) for
 * the residual, which would underflow. Not correctly rounded (1 ulp from the root on 0.6 % of
 * positive floats), but upstream's bits on all of them (tools/sqrt_upstream_bits.py; a sample
 * in tests/test_ops.py). Zeros, negatives, infinities and NaN take the exact instruction. */
static inline vf v_sqrt_vml(vf x) {
    __m512 r = _mm512_rsqrt14_ps(x), h = _mm512_mul_ps(r, _mm512_set1_ps(0.5f)), s = _mm512_mul_ps(x, r);
    __mmask16 tiny = _mm512_cmp_ps_mask(_mm512_set1_ps(0x1p39f), r, _CMP_LT_OQ);
    __m512 y;
    if (__builtin_expect(tiny != 0, 0)) {
        __m512 xs = _mm512_mask_mul_ps(x, tiny, x, _mm512_set1_ps(0x1p78f));
        __m512 ss = _mm512_mask_mul_ps(s, tiny, s, _mm512_set1_ps(0x1p39f));
        __m512 hs = _mm512_mask_mul_ps(h, tiny, h, _mm512_set1_ps(0x1p-78f));
        y = _mm512_fmadd_ps(_mm512_fnmadd_ps(ss, ss, xs), hs, s);
    } else {
        y = _mm512_fmadd_ps(_mm512_fnmadd_ps(s, s, x), h, s);
    }
    __mmask16 ok = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ) &
                   _mm512_cmp_ps_mask(x, _mm512_set1_ps(__builtin_inff()), _CMP_LT_OQ);
    if (__builtin_expect(ok != 0xFFFF, 0)) y = _mm512_mask_sqrt_ps(y, (__mmask16)~ok, x);
    return y;
}
static inline vf v_max(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vf v_min(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline vf v_and_bits(vf a, vf b) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
static inline vf v_xor_bits(vf a, vf b) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
static inline vf v_add_bits(vf a, vf b) {
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
static inline vf v_sel(vm m, vf a, vf b) { return _mm512_mask_blend_ps(m, b, a); }
/* the bits shifted left by n (as uint32); t[bits(i) & 31] per lane for a 32-entry table t
 * (vpermt2ps reads only the index's low five bits; the two table halves are loop invariants) */
static inline vf v_shl_bits(vf a, int n) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(a), (unsigned)n)); }
static inline vf v_lut32(const float *t, vf i) {
    return _mm512_permutex2var_ps(_mm512_loadu_ps(t), _mm512_castps_si512(i), _mm512_loadu_ps(t + 16));
}
/* the lookup is one instruction here: ew_vec.inc's interval-table forms (tanh, erf, erfc) take it */
#define V_LUT32_CHEAP 1
static inline vf v_shr_bits(vf a, int n) { return _mm512_castsi512_ps(_mm512_srli_epi32(_mm512_castps_si512(a), (unsigned)n)); }
static inline vm v_cmp_eq(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
static inline vm v_cmp_ne(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_NEQ_UQ); }
static inline vm v_mask_and(vm a, vm b) { return (vm)(a & b); }
static inline vm v_mask_or(vm a, vm b) { return (vm)(a | b); }
static inline vm v_mask_xor(vm a, vm b) { return (vm)(a ^ b); }
static inline vm v_cmp_lt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
static inline vm v_cmp_le(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
static inline vm v_cmp_gt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
static inline vm v_cmp_ge(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
static inline vm v_cmp_unord(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
/* lanes that are not a positive normal finite float (NaN, zeros, infinities, subnormals,
 * negatives): the bits less those of FLT_MIN, unsigned, at or past those of inf less FLT_MIN */
static inline vm v_not_pos_normal(vf x) {
    __m512i b = _mm512_sub_epi32(_mm512_castps_si512(x), _mm512_set1_epi32(0x00800000));
    return _mm512_cmp_epu32_mask(b, _mm512_set1_epi32(0x7F000000), _MM_CMPINT_NLT);
}
static inline void v_st_b8(char *p, vm m) { _mm_storeu_si128((__m128i *)p, _mm_maskz_set1_epi8(m, 1)); }
static inline vf v_round(vf x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vf v_floor(vf x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
static inline vf v_ceil(vf x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
static inline vf v_trunc(vf x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
/* 2^n for integral n in [-150, 128] as two normal factors 2^(n>>1) * 2^(n - (n>>1)) */
/* p 2^n for an integral n: one rounding, subnormal and overflowing results included */
static inline vf v_ldexp(vf p, vf n) { return _mm512_scalef_ps(p, n); }
/* u = m 2^e with m in [sqrt(1/2), sqrt 2) for positive normal u (other lanes: garbage): the
 * bits of u less those of sqrt(1/2) carry e in their exponent field and m's mantissa below */
static inline void v_frexp_sqrt2(vf u, vf *m, vf *e) {
    __m512i ix = _mm512_sub_epi32(_mm512_castps_si512(u), _mm512_set1_epi32(0x3f3504f3));
    *e = _mm512_cvtepi32_ps(_mm512_srai_epi32(ix, 23));
    *m = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_and_si512(ix, _mm512_set1_epi32(0x007fffff)), _mm512_set1_epi32(0x3f3504f3)));
}
/* float -> int32 by truncation with INT32_MIN for NaN and out of range (the scalar cast
 * loop's cvt_i32f), stored as int32 or narrowed modulo 2^16 / 2^8 (vpmovdw / vpmovdb
 * truncate) */
static inline void v_st_cvt_i32(char *p, vf v) { _mm512_storeu_si512(p, _mm512_cvttps_epi32(v)); }
static inline void v_st_cvt_i16(char *p, vf v) { _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(_mm512_cvttps_epi32(v))); }
static inline void v_st_cvt_i8(char *p, vf v) { _mm_storeu_si128((__m128i *)p, _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v))); }
static inline vf v_ld_bf16(const char *p) {
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
/* round to nearest even on the bits; NaN -> 0x7FC0 (c10's canonical bfloat16 NaN) */
static inline void v_st_bf16(char *p, vf v) {
    __m512i u = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF))), 16);
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7FC0));
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(r));
}
/* VW uint8 / int8 / int32 elements converted to float (exactly: |v| < 2^24 for the bytes;
 * int32 rounds to nearest, as the scalar (float) conversion) */
static inline vf v_ld_u8(const char *p) { return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p))); }
static inline vf v_ld_i8(const char *p) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p))); }
static inline vf v_ld_i32(const char *p) { return _mm512_cvtepi32_ps(_mm512_loadu_si512(p)); }
static inline vf v_ld_f16(const char *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
static inline void v_st_f16(char *p, vf v) {
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* ---- float64 lanes (ew_vec_dmath.inc computes float32 functions in them) ---- */
typedef __m512d vd;
typedef __mmask8 dm;
static inline int v_any(vm m) { return m != 0; }
static inline void v_widen(vf x, vd *lo, vd *hi) {
    *lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x));
    *hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
}
static inline vf v_narrow(vd lo, vd hi) {
    __m512d w = _mm512_castpd256_pd512(_mm256_castps_pd(_mm512_cvtpd_ps(lo)));
    return _mm512_castpd_ps(_mm512_insertf64x4(w, _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1));
}
static inline int d_any(dm m) { return m != 0; }
static inline int d_all(dm m) { return m == 0xFF; }
static inline vd d_set1(double x) { return _mm512_set1_pd(x); }
static inline vd d_load(const char *p) { return _mm512_loadu_pd(p); }
static inline void d_store(char *p, vd v) { _mm512_storeu_pd(p, v); }
static inline vd d_set1_bits(uint64_t b) { return _mm512_castsi512_pd(_mm512_set1_epi64((long long)b)); }
static inline vd d_add(vd a, vd b) { return _mm512_add_pd(a, b); }
static inline vd d_sub(vd a, vd b) { return _mm512_sub_pd(a, b); }
static inline vd d_mul(vd a, vd b) { return _mm512_mul_pd(a, b); }
static inline vd d_div(vd a, vd b) { return _mm512_div_pd(a, b); }
static inline vd d_fma(vd a, vd b, vd c) { return _mm512_fmadd_pd(a, b, c); }
static inline vd d_sqrt(vd a) { return _mm512_sqrt_pd(a); }
static inline vd d_round(vd x) { return _mm512_roundscale_pd(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vd d_and_bits(vd a, vd b) {
    return _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(a), _mm512_castpd_si512(b)));
}
static inline vd d_xor_bits(vd a, vd b) {
    return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(a), _mm512_castpd_si512(b)));
}
static inline vd d_sel(dm m, vd a, vd b) { return _mm512_mask_blend_pd(m, b, a); }
static inline dm d_cmp_eq(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
static inline dm d_cmp_lt(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
static inline dm d_cmp_gt(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
static inline dm d_cmp_nge(vd a, vd b) { return _mm512_cmp_pd_mask(a, b, _CMP_NGE_UQ); }
/* 2^n for integral n in [-1022, 1023]: the bits of 2^52 + 1023 + n shifted into the exponent */
static inline vd d_pow2(vd n) {
    __m512i b = _mm512_castpd_si512(_mm512_add_pd(n, _mm512_set1_pd(4503599627371519.0)));
    return _mm512_castsi512_pd(_mm512_slli_epi64(b, 52));
}
/* u = m * 2^e with m in [sqrt(1/2), sqrt 2), for positive normal finite u (other lanes:
 * garbage): with b = bits(u) + bits(1) - bits(sqrt(1/2)), the exponent field of b is e's
 * (it carries exactly when u's mantissa is >= sqrt 2 / 2 of the next power), and the low
 * 52 bits of b plus bits(sqrt(1/2)) are m's bits */
static inline void d_frexp(vd u, vd *m, vd *e) {
    __m512i b = _mm512_add_epi64(_mm512_castpd_si512(u), _mm512_set1_epi64(0x00095F619980C433LL));
    __m512i eb = _mm512_or_si512(_mm512_srli_epi64(b, 52), _mm512_set1_epi64(0x4330000000000000LL));
    *e = _mm512_sub_pd(_mm512_castsi512_pd(eb), _mm512_set1_pd(4503599627371519.0));
    *m = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_and_si512(b, _mm512_set1_epi64(0x000FFFFFFFFFFFFFLL)),
                                             _mm512_set1_epi64(0x3FE6A09E667F3BCDLL)));
}
/* lanes whose integral n (|n| < 2^31) has bit `bit` set */
static inline dm d_bit(vd n, int bit) {
    __m512i b = _mm512_castpd_si512(_mm512_add_pd(n, _mm512_set1_pd(6755399441055744.0)));
    return _mm512_test_epi64_mask(b, _mm512_set1_epi64(1LL << bit));
}

/* ew_vec.inc's tails: r (< the vector's lanes) elements of size es, padded with the first,
 * by one masked load and one 64-byte store (buf holds 64 bytes); written out by masked
 * stores. Masked-off lanes are not read, so no byte past the tensor is touched. */
#define V_HAS_TAIL 1
static inline __attribute__((always_inline)) bool v_tail_stage(char *buf, const char *src, int64_t r, int es) {
    if (r * es >= 64) return false;
    __m512i v;
    switch (es) {
    case 4: { int32_t f; memcpy(&f, src, 4); v = _mm512_mask_loadu_epi32(_mm512_set1_epi32(f), (__mmask16)((1u << r) - 1), src); break; }
    case 2: { int16_t f; memcpy(&f, src, 2); v = _mm512_mask_loadu_epi16(_mm512_set1_epi16(f), (__mmask32)((1u << r) - 1), src); break; }
    case 8: { int64_t f; memcpy(&f, src, 8); v = _mm512_mask_loadu_epi64(_mm512_set1_epi64(f), (__mmask8)((1u << r) - 1), src); break; }
    case 1: v = _mm512_mask_loadu_epi8(_mm512_set1_epi8(*src), (__mmask64)((1ull << r) - 1), src); break;
    default: return false;
    }
    _mm512_store_si512((void *)buf, v);
    return true;
}
static inline __attribute__((always_inline)) bool v_tail_put(char *dst, const char *buf, int64_t r, int es) {
    switch (es) {
    case 4: { __mmask16 m = (__mmask16)((1u << r) - 1); _mm512_mask_storeu_epi32(dst, m, _mm512_maskz_loadu_epi32(m, buf)); return true; }
    case 2: { __mmask32 m = (__mmask32)((1u << r) - 1); _mm512_mask_storeu_epi16(dst, m, _mm512_maskz_loadu_epi16(m, buf)); return true; }
    case 8: { __mmask8 m = (__mmask8)((1u << r) - 1); _mm512_mask_storeu_epi64(dst, m, _mm512_maskz_loadu_epi64(m, buf)); return true; }
    case 1: { __mmask64 m = (__mmask64)((1ull << r) - 1); _mm512_mask_storeu_epi8(dst, m, _mm512_maskz_loadu_epi8(m, buf)); return true; }
    default: return false;
    }
}

#define EW_REGISTER tn_ew_register_avx512
#define EW_CAST_LOOKUP tn_cast_vec_avx512
#define EW_BYTE_LOOPS tn_ew_byte_loops_avx512
/* float32 -> int64 by truncation: cvttps2qq gives INT64_MIN (the "integer indefinite")
 * for NaN and out of range, as the scalar loop's cvt_i64f. AVX-512DQ, which the AVX-512
 * tier does not require: ew_vec.inc's cast lookup asks for this loop only when the host
 * has it. The tail goes to the scalar loop, whose results are the same bits. */
__attribute__((target("avx512dq"))) static void vcast_f32_i64_dq(char **d, const int64_t *s, int64_t n, void *ctx) {
    if (s[0] != 8 || s[1] != 4) {
        tn_cast_loop_scalar(TN_DTYPE_FLOAT32, TN_DTYPE_INT64)(d, s, n, ctx);
        return;
    }
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        __m512 v = _mm512_loadu_ps((const float *)(d[1] + 4 * k));
        _mm512_storeu_si512(d[0] + 8 * k, _mm512_cvttps_epi64(_mm512_castps512_ps256(v)));
        _mm512_storeu_si512(d[0] + 8 * k + 64, _mm512_cvttps_epi64(_mm512_extractf32x8_ps(v, 1)));
    }
    if (k < n) {
        char *dd[2] = {d[0] + 8 * k, d[1] + 4 * k};
        tn_cast_loop_scalar(TN_DTYPE_FLOAT32, TN_DTYPE_INT64)(dd, s, n - k, ctx);
    }
}
static tn_loop_fn ew_cast_extra(tn_dtype from, tn_dtype to) {
    if (from == TN_DTYPE_FLOAT32 && to == TN_DTYPE_INT64 && tn_cpu_features_get()->avx512dq) return vcast_f32_i64_dq;
    return NULL;
}
#define EW_CAST_EXTRA ew_cast_extra
#include "kernels/ew_vec.inc"

#else
void tn_ew_register_avx512(tn_loop_fn (*t)[TN_DTYPE_COUNT], tn_loop_fn (*ref)[TN_DTYPE_COUNT]) { (void)t; (void)ref; }
tn_loop_fn tn_cast_vec_avx512(tn_dtype from, tn_dtype to) { (void)from; (void)to; return NULL; }
void tn_ew_byte_loops_avx512(int itemsize, tn_loop_fn out[3]) { (void)itemsize; out[0] = out[1] = out[2] = NULL; }
#endif
