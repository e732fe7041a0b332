/* argext.c — argmax / argmin (tn_argext_f32) and max / min (tn_ext_f32) of a contiguous
 * float32 lane (reduce.h).
 *
 * generate() takes the argmax of the vocabulary's logits every greedy step. Each vector
 * lane keeps its running extreme and the index where it first reached it (a strict
 * compare, so a later equal value never replaces an earlier one); the lanes are then
 * reduced to the extreme with the lowest index among equal values (== also equates -0 and
 * +0), which is the first occurrence in the whole lane. A NaN anywhere makes the answer
 * the first NaN, found by a second scan. The scalar tier runs the same rule one lane wide. */
#include "kernels/reduce.h"

#include "kernels/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

static int64_t first_nan(const float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (x[i] != x[i]) return i;
    return -1;
}

/* The lanes' extremes bv[] reached first at bi[]; then the tail from i on. */
static int64_t finish(const float *x, int64_t n, int64_t i, const float *bv, const int32_t *bi, int lanes, bool mx,
                      bool nan) {
    float b = bv[0];
    int64_t at = bi[0];
    for (int j = 1; j < lanes; j++)
        if ((mx ? bv[j] > b : bv[j] < b) || (bv[j] == b && bi[j] < at)) b = bv[j], at = bi[j];
    for (; i < n; i++) {
        nan |= x[i] != x[i];
        if (mx ? x[i] > b : x[i] < b) b = x[i], at = i;
    }
    return nan ? first_nan(x, n) : at;
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f"))) static int64_t argext_avx512(const float *x, int64_t n, bool mx) {
    __m512 b0 = _mm512_set1_ps(x[0]), b1 = b0;
    __m512i i0 = _mm512_setzero_si512(), i1 = i0;
    __m512i at0 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i at1 = _mm512_add_epi32(at0, _mm512_set1_epi32(16)), step = _mm512_set1_epi32(32);
    __mmask16 nan = 0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
        nan |= _mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q);
        __mmask16 t0 = mx ? _mm512_cmp_ps_mask(v0, b0, _CMP_GT_OQ) : _mm512_cmp_ps_mask(v0, b0, _CMP_LT_OQ);
        __mmask16 t1 = mx ? _mm512_cmp_ps_mask(v1, b1, _CMP_GT_OQ) : _mm512_cmp_ps_mask(v1, b1, _CMP_LT_OQ);
        b0 = _mm512_mask_mov_ps(b0, t0, v0), i0 = _mm512_mask_mov_epi32(i0, t0, at0);
        b1 = _mm512_mask_mov_ps(b1, t1, v1), i1 = _mm512_mask_mov_epi32(i1, t1, at1);
        at0 = _mm512_add_epi32(at0, step), at1 = _mm512_add_epi32(at1, step);
    }
    /* the rest 16 at a time into (b1, i1), the last part by a masked load padded with x[0]:
     * a padded lane holds x[0] with an index past the row, which never wins, since x[0] is
     * already every lane's starting value at index 0 and only a strict improvement moves */
    for (; i < n; i += 16) {
        __m512 v = n - i >= 16 ? _mm512_loadu_ps(x + i)
                               : _mm512_mask_loadu_ps(_mm512_set1_ps(x[0]), (__mmask16)((1u << (n - i)) - 1), x + i);
        nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        __mmask16 t = mx ? _mm512_cmp_ps_mask(v, b1, _CMP_GT_OQ) : _mm512_cmp_ps_mask(v, b1, _CMP_LT_OQ);
        __m512i at = _mm512_add_epi32(_mm512_set1_epi32((int)i), _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        b1 = _mm512_mask_mov_ps(b1, t, v), i1 = _mm512_mask_mov_epi32(i1, t, at);
    }
    /* the two accumulators lane by lane (the better value, the lower index among equals),
     * then the extreme over the lanes and the lowest index among the lanes holding it (==
     * equates -0 and +0: the first zero of either sign), all in registers (a store read back
     * as scalars stalled on the store: see ext_avx512) */
    __mmask16 t = mx ? _mm512_cmp_ps_mask(b1, b0, _CMP_GT_OQ) : _mm512_cmp_ps_mask(b1, b0, _CMP_LT_OQ);
    t |= _mm512_cmp_ps_mask(b1, b0, _CMP_EQ_OQ) & _mm512_cmplt_epi32_mask(i1, i0);
    b0 = _mm512_mask_mov_ps(b0, t, b1), i0 = _mm512_mask_mov_epi32(i0, t, i1);
    float best = mx ? _mm512_reduce_max_ps(b0) : _mm512_reduce_min_ps(b0);
    __mmask16 eq = _mm512_cmp_ps_mask(b0, _mm512_set1_ps(best), _CMP_EQ_OQ);
    int64_t at = _mm512_mask_reduce_min_epi32(eq, i0);
    _mm256_zeroupper(); /* see ext_avx512 */
    return nan ? first_nan(x, n) : at;
}

__attribute__((target("avx2"))) static int64_t argext_avx2(const float *x, int64_t n, bool mx) {
    __m256 b0 = _mm256_set1_ps(x[0]), b1 = b0, nan = _mm256_setzero_ps();
    __m256i i0 = _mm256_setzero_si256(), i1 = i0;
    __m256i at0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), at1 = _mm256_add_epi32(at0, _mm256_set1_epi32(8));
    __m256i step = _mm256_set1_epi32(16);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q));
        __m256 t0 = mx ? _mm256_cmp_ps(v0, b0, _CMP_GT_OQ) : _mm256_cmp_ps(v0, b0, _CMP_LT_OQ);
        __m256 t1 = mx ? _mm256_cmp_ps(v1, b1, _CMP_GT_OQ) : _mm256_cmp_ps(v1, b1, _CMP_LT_OQ);
        b0 = _mm256_blendv_ps(b0, v0, t0), b1 = _mm256_blendv_ps(b1, v1, t1);
        i0 = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(i0), _mm256_castsi256_ps(at0), t0));
        i1 = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(i1), _mm256_castsi256_ps(at1), t1));
        at0 = _mm256_add_epi32(at0, step), at1 = _mm256_add_epi32(at1, step);
    }
    float bv[16];
    int32_t bi[16];
    _mm256_storeu_ps(bv, b0), _mm256_storeu_ps(bv + 8, b1);
    _mm256_storeu_si256((__m256i *)bi, i0), _mm256_storeu_si256((__m256i *)(bi + 8), i1);
    const bool any_nan = _mm256_movemask_ps(nan) != 0;
    _mm256_zeroupper(); /* see ext_avx512 */
    return finish(x, n, i, bv, bi, 16, mx, any_nan);
}
#endif

int64_t tn_argext_f32(const float *x, int64_t n, bool mx) {
#if defined(__x86_64__) || defined(__i386__)
    if (n < INT32_MAX) {
        tn_isa isa = tn_cpu_isa();
        if (isa >= TN_ISA_AVX512) return argext_avx512(x, n, mx);
        if (isa >= TN_ISA_AVX2) return argext_avx2(x, n, mx);
    }
#endif
    float b = x[0];
    int32_t at = 0;
    return finish(x, n, 1, &b, &at, 1, mx, x[0] != x[0]);
}

/* ---- max / min: the value alone ------------------------------------------------------
 * Per-lane extremes by vmaxps / vminps over four independent vectors (no index to carry,
 * so about half of argext's work per element), NaN noted on the side. The value is the
 * same whatever the order except for the sign of a zero and for NaN: a zero extreme is
 * replaced by the first element equal to it and a NaN anywhere by the first NaN, which are
 * what a sequential scan keeping the earlier of equal values gives. */
static float ext_finish(const float *x, int64_t n, int64_t i, float b, bool mx, bool nan) {
    for (; i < n; i++) {
        nan |= x[i] != x[i];
        if (mx ? x[i] > b : x[i] < b) b = x[i];
    }
    if (nan) return x[first_nan(x, n)];
    if (b == 0)
        for (i = 0; i < n; i++)
            if (x[i] == 0) return x[i];
    return b;
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f"))) static float ext_avx512(const float *x, int64_t n, bool mx) {
    __m512 a0 = _mm512_set1_ps(x[0]), a1 = a0, a2 = a0, a3 = a0;
    __mmask16 nan = 0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
        __m512 v2 = _mm512_loadu_ps(x + i + 32), v3 = _mm512_loadu_ps(x + i + 48);
        nan |= _mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(v2, v3, _CMP_UNORD_Q);
        if (mx) a0 = _mm512_max_ps(v0, a0), a1 = _mm512_max_ps(v1, a1), a2 = _mm512_max_ps(v2, a2), a3 = _mm512_max_ps(v3, a3);
        else a0 = _mm512_min_ps(v0, a0), a1 = _mm512_min_ps(v1, a1), a2 = _mm512_min_ps(v2, a2), a3 = _mm512_min_ps(v3, a3);
    }
    /* the rest 16 at a time, the last part by a masked load padded with x[0] (an element of
     * the row, so it changes nothing): a row of 100 had 36 scalar steps before */
    for (; i < n; i += 16) {
        __m512 v = n - i >= 16 ? _mm512_loadu_ps(x + i)
                               : _mm512_mask_loadu_ps(_mm512_set1_ps(x[0]), (__mmask16)((1u << (n - i)) - 1), x + i);
        nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        a0 = mx ? _mm512_max_ps(v, a0) : _mm512_min_ps(v, a0);
    }
    a0 = mx ? _mm512_max_ps(_mm512_max_ps(a0, a1), _mm512_max_ps(a2, a3)) : _mm512_min_ps(_mm512_min_ps(a0, a1), _mm512_min_ps(a2, a3));
    /* the lanes reduced in registers (a store of the vector read back as 16 floats stalls
     * each load on the store: 155 ns a row of 100, session 46); the order cannot show but in
     * a zero's sign or a NaN, which ext_finish settles */
    float b = mx ? _mm512_reduce_max_ps(a0) : _mm512_reduce_min_ps(a0);
    /* gcc emits no vzeroupper before a tail call: ext_finish's SSE code then ran with the
     * upper halves dirty, 148 ns a row of 100 floats against 25 after (session 46) */
    _mm256_zeroupper();
    return ext_finish(x, n, n, b, mx, nan != 0);
}

__attribute__((target("avx2"))) static float ext_avx2(const float *x, int64_t n, bool mx) {
    __m256 a0 = _mm256_set1_ps(x[0]), a1 = a0, a2 = a0, a3 = a0, nan = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
        nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(v0, v1, _CMP_UNORD_Q), _mm256_cmp_ps(v2, v3, _CMP_UNORD_Q)));
        if (mx) a0 = _mm256_max_ps(v0, a0), a1 = _mm256_max_ps(v1, a1), a2 = _mm256_max_ps(v2, a2), a3 = _mm256_max_ps(v3, a3);
        else a0 = _mm256_min_ps(v0, a0), a1 = _mm256_min_ps(v1, a1), a2 = _mm256_min_ps(v2, a2), a3 = _mm256_min_ps(v3, a3);
    }
    a0 = mx ? _mm256_max_ps(_mm256_max_ps(a0, a1), _mm256_max_ps(a2, a3)) : _mm256_min_ps(_mm256_min_ps(a0, a1), _mm256_min_ps(a2, a3));
    float l[8], b = x[0];
    _mm256_storeu_ps(l, a0);
    for (int k = 0; k < 8; k++) b = mx ? (l[k] > b ? l[k] : b) : (l[k] < b ? l[k] : b);
    const bool any_nan = _mm256_movemask_ps(nan) != 0;
    _mm256_zeroupper(); /* see ext_avx512 */
    return ext_finish(x, n, i, b, mx, any_nan);
}
#endif

/* ---- max / min down columns: out[j] against x[0][j], x[1][j], ... ------------------------
 * The reduction over a dim that is not the innermost (amax(dim=0) of a matrix): each output
 * lane keeps its running extreme and takes a row's element when that is strictly beyond it,
 * or NaN while the extreme is not: the generic loop's rule (the first NaN, the earlier of
 * equal values), so the same bits, a vector of columns at a time. */
static inline float ext_step(float o, float v, bool mx) {
    if (o != o) return o;
    return (v != v || (mx ? v > o : v < o)) ? v : o;
}
static void ext_cols_scalar(float *out, const float *x, int64_t ld, int64_t rows, int64_t cols, bool mx) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols; j++) out[j] = ext_step(out[j], x[r * ld + j], mx);
}

#if defined(__x86_64__) || defined(__i386__)
/* v beyond a (or NaN) where a is not NaN */
#define EXT_TAKE512(v, a) \
    ((mx ? _mm512_cmp_ps_mask((v), (a), _CMP_NLE_UQ) : _mm512_cmp_ps_mask((v), (a), _CMP_NGE_UQ)) & \
     _mm512_cmp_ps_mask((a), (a), _CMP_ORD_Q))
__attribute__((target("avx512f"))) static void ext_cols_avx512(float *out, const float *x, int64_t ld, int64_t rows,
                                                               int64_t cols, bool mx) {
    int64_t j = 0;
    for (; j + 64 <= cols; j += 64) { /* four independent chains per row */
        __m512 a0 = _mm512_loadu_ps(out + j), a1 = _mm512_loadu_ps(out + j + 16);
        __m512 a2 = _mm512_loadu_ps(out + j + 32), a3 = _mm512_loadu_ps(out + j + 48);
        for (int64_t r = 0; r < rows; r++) {
            const float *p = x + r * ld + j;
            __m512 v0 = _mm512_loadu_ps(p), v1 = _mm512_loadu_ps(p + 16), v2 = _mm512_loadu_ps(p + 32), v3 = _mm512_loadu_ps(p + 48);
            a0 = _mm512_mask_mov_ps(a0, EXT_TAKE512(v0, a0), v0);
            a1 = _mm512_mask_mov_ps(a1, EXT_TAKE512(v1, a1), v1);
            a2 = _mm512_mask_mov_ps(a2, EXT_TAKE512(v2, a2), v2);
            a3 = _mm512_mask_mov_ps(a3, EXT_TAKE512(v3, a3), v3);
        }
        _mm512_storeu_ps(out + j, a0), _mm512_storeu_ps(out + j + 16, a1);
        _mm512_storeu_ps(out + j + 32, a2), _mm512_storeu_ps(out + j + 48, a3);
    }
    for (; j < cols; j += 16) { /* the last part masked */
        __mmask16 m = cols - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (cols - j)) - 1);
        __m512 a = _mm512_maskz_loadu_ps(m, out + j);
        for (int64_t r = 0; r < rows; r++) {
            __m512 v = _mm512_maskz_loadu_ps(m, x + r * ld + j);
            a = _mm512_mask_mov_ps(a, EXT_TAKE512(v, a), v);
        }
        _mm512_mask_storeu_ps(out + j, m, a);
    }
}
#undef EXT_TAKE512

#define EXT_TAKE256(v, a) \
    _mm256_and_ps(mx ? _mm256_cmp_ps((v), (a), _CMP_NLE_UQ) : _mm256_cmp_ps((v), (a), _CMP_NGE_UQ), \
                  _mm256_cmp_ps((a), (a), _CMP_ORD_Q))
__attribute__((target("avx2"))) static void ext_cols_avx2(float *out, const float *x, int64_t ld, int64_t rows,
                                                          int64_t cols, bool mx) {
    int64_t j = 0;
    for (; j + 32 <= cols; j += 32) {
        __m256 a0 = _mm256_loadu_ps(out + j), a1 = _mm256_loadu_ps(out + j + 8);
        __m256 a2 = _mm256_loadu_ps(out + j + 16), a3 = _mm256_loadu_ps(out + j + 24);
        for (int64_t r = 0; r < rows; r++) {
            const float *p = x + r * ld + j;
            __m256 v0 = _mm256_loadu_ps(p), v1 = _mm256_loadu_ps(p + 8), v2 = _mm256_loadu_ps(p + 16), v3 = _mm256_loadu_ps(p + 24);
            a0 = _mm256_blendv_ps(a0, v0, EXT_TAKE256(v0, a0));
            a1 = _mm256_blendv_ps(a1, v1, EXT_TAKE256(v1, a1));
            a2 = _mm256_blendv_ps(a2, v2, EXT_TAKE256(v2, a2));
            a3 = _mm256_blendv_ps(a3, v3, EXT_TAKE256(v3, a3));
        }
        _mm256_storeu_ps(out + j, a0), _mm256_storeu_ps(out + j + 8, a1);
        _mm256_storeu_ps(out + j + 16, a2), _mm256_storeu_ps(out + j + 24, a3);
    }
    for (; j + 8 <= cols; j += 8) {
        __m256 a = _mm256_loadu_ps(out + j);
        for (int64_t r = 0; r < rows; r++) {
            __m256 v = _mm256_loadu_ps(x + r * ld + j);
            a = _mm256_blendv_ps(a, v, EXT_TAKE256(v, a));
        }
        _mm256_storeu_ps(out + j, a);
    }
    if (j < cols) {
        _mm256_zeroupper(); /* see ext_avx512 */
        ext_cols_scalar(out + j, x + j, ld, rows, cols - j, mx);
    }
}
#undef EXT_TAKE256
#endif

void tn_ext_cols_f32(float *out, const float *x, int64_t ld, int64_t rows, int64_t cols, bool mx) {
#if defined(__x86_64__) || defined(__i386__)
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) { ext_cols_avx512(out, x, ld, rows, cols, mx); return; }
    if (isa >= TN_ISA_AVX2) { ext_cols_avx2(out, x, ld, rows, cols, mx); return; }
#endif
    ext_cols_scalar(out, x, ld, rows, cols, mx);
}

float tn_ext_step_f32(float o, float v, bool mx) { return ext_step(o, v, mx); }

/* ---- argmax / argmin down columns ------------------------------------------------------
 * val[j], idx[j] = the extreme of column j of x (rows < 2^31) and the first row holding it
 * (the first NaN when there is one): each lane takes row r's element when strictly beyond
 * its extreme, or NaN while the extreme is not, so it keeps the first occurrence. */
static void argext_cols_scalar(float *val, int64_t *idx, const float *x, int64_t ld, int64_t rows, int64_t cols, bool mx) {
    for (int64_t j = 0; j < cols; j++) val[j] = x[j], idx[j] = 0;
    for (int64_t r = 1; r < rows; r++)
        for (int64_t j = 0; j < cols; j++) {
            float o = val[j], v = x[r * ld + j];
            if (o == o && (v != v || (mx ? v > o : v < o))) val[j] = v, idx[j] = r;
        }
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f"))) static void argext_cols_avx512(float *val, int64_t *idx, const float *x, int64_t ld,
                                                                  int64_t rows, int64_t cols, bool mx) {
    for (int64_t j = 0; j < cols; j += 16) {
        __mmask16 m = cols - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (cols - j)) - 1);
        __m512 a = _mm512_maskz_loadu_ps(m, x + j);
        __m512i at = _mm512_setzero_si512(), r_ = _mm512_setzero_si512();
        const __m512i one = _mm512_set1_epi32(1);
        for (int64_t r = 1; r < rows; r++) {
            __m512 v = _mm512_maskz_loadu_ps(m, x + r * ld + j);
            r_ = _mm512_add_epi32(r_, one);
            __mmask16 t = (mx ? _mm512_cmp_ps_mask(v, a, _CMP_NLE_UQ) : _mm512_cmp_ps_mask(v, a, _CMP_NGE_UQ)) &
                          _mm512_cmp_ps_mask(a, a, _CMP_ORD_Q);
            a = _mm512_mask_mov_ps(a, t, v);
            at = _mm512_mask_mov_epi32(at, t, r_);
        }
        _mm512_mask_storeu_ps(val + j, m, a);
        _mm512_mask_storeu_epi64(idx + j, (__mmask8)m, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(at)));
        _mm512_mask_storeu_epi64(idx + j + 8, (__mmask8)(m >> 8), _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(at, 1)));
    }
}
#endif

void tn_argext_cols_f32(float *val, int64_t *idx, const float *x, int64_t ld, int64_t rows, int64_t cols, bool mx) {
#if defined(__x86_64__) || defined(__i386__)
    if (tn_cpu_isa() >= TN_ISA_AVX512 && rows < INT32_MAX) { argext_cols_avx512(val, idx, x, ld, rows, cols, mx); return; }
#endif
    argext_cols_scalar(val, idx, x, ld, rows, cols, mx);
}

float tn_ext_f32(const float *x, int64_t n, bool mx) {
#if defined(__x86_64__) || defined(__i386__)
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) return ext_avx512(x, n, mx);
    if (isa >= TN_ISA_AVX2) return ext_avx2(x, n, mx);
#endif
    return ext_finish(x, n, 1, x[0], mx, x[0] != x[0]);
}
