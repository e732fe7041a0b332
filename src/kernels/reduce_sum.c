/* reduce_sum.c — upstream-faithful cascade summation (float, double, bfloat16, half,
 * complex64, complex128).
 *
 * Upstream (ATen cpu/SumKernel.cpp) sums in a fixed pattern: rows are cut into chunks
 * summed into 4 accumulator levels, the row is read as 4 interleaved streams, and the
 * contiguous cases run over vector lanes whose partials are added at the end. Floating
 * point addition is not associative, so agreeing with upstream to the bit means adding
 * in the same order; this file reproduces that order with plain arrays standing in for
 * vector registers (the compiler vectorises the lane loops). Complex sums accumulate in
 * their own type (upstream's acc_type<complex<T>, true>) and complex addition is per
 * component, so a complex unit of w lanes is 2w real accumulators, each lane's real part
 * next to its imaginary part, exactly as they sit in memory and in upstream's vectors. */
#include "kernels/reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/cpu_features.h"

#define NLEVELS 4
#define NROWS 4
#define MAXW 16 /* widest vector in accumulator elements (AVX-512 floats) */

int tn_reduce_vec_bytes(bool avx512_kernel) {
    static int cached[2];
    if (cached[avx512_kernel]) return cached[avx512_kernel];
    int bytes = 32;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (avx512_kernel && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        bytes = 64;
#endif
    const char *force = getenv("TN_CPU_CAPABILITY");
    if (force && (!strcmp(force, "default") || !strcmp(force, "avx2") || !strcmp(force, "scalar"))) bytes = 32;
    cached[avx512_kernel] = bytes;
    return bytes;
}

/* upstream's utils::CeilLog2 */
static int64_t ceil_log2(int64_t x) {
    if (x <= 2) return 1;
    return 64 - __builtin_clzll((unsigned long long)(x - 1));
}

/* A loader reads one "unit" (w accumulator values) at p: w == 1 is a scalar element,
 * w == lanes a vector (inner: neighbouring elements folded to fit, outer: converted). */
typedef void (*load_f)(float *dst, const char *p, int w, bool nan);
typedef void (*load_d)(double *dst, const char *p, int w, bool nan);

#define DEFINE_CASCADE(acc_t, SFX, LOADT)                                                      \
    /* 0 + x + x + ... (k additions, each rounded in acc_t) */                                \
    static acc_t seq_sum_##SFX(acc_t x, int64_t k) {                                          \
        acc_t a = 0;                                                                          \
        for (int64_t i = 0; i < k; i++) a += x;                                               \
        return a;                                                                             \
    }                                                                                         \
    /* What multi_row_sum's cascade gives for `size` units all equal to x (a zero-stride     \
     * reduced dimension, e.g. an expanded view of 2**31 elements), in O(level_step) adds    \
     * instead of O(size): every full block of level_step units leaves the same sum B0 in   \
     * level 0, every level_step blocks the same B1 in level 1, every level_step**2 blocks  \
     * the same B2 in level 2, so each level's final value is a repeated sum of its block   \
     * value, added in the order the loop below adds them. Bit-identical to that loop. */   \
    static acc_t repeated_sum_##SFX(acc_t x, int64_t size, int64_t step) {                    \
        const int64_t nb = size / step;                                                       \
        const acc_t b0 = seq_sum_##SFX(x, step), b1 = seq_sum_##SFX(b0, step);                \
        const acc_t b2 = seq_sum_##SFX(b1, step);                                             \
        const acc_t l1 = seq_sum_##SFX(b0, nb % step);                                        \
        const acc_t l2 = seq_sum_##SFX(b1, (nb / step) % step);                               \
        const acc_t l3 = seq_sum_##SFX(b2, nb / step / step);                                 \
        acc_t a = seq_sum_##SFX(x, size - nb * step);                                         \
        a += l1;                                                                              \
        a += l2;                                                                              \
        a += l3;                                                                              \
        return a;                                                                             \
    }                                                                                         \
    /* sums `size` units per row for nrows rows at once (upstream multi_row_sum) */           \
    static void multi_row_sum_##SFX(acc_t *ret, const char *in, int64_t row_stride,           \
                                    int64_t col_stride, int64_t size, int nrows, int w,       \
                                    LOADT load, bool nan) {                                   \
        const int64_t level_power = ceil_log2(size) / NLEVELS > 4 ? ceil_log2(size) / NLEVELS : 4; \
        const int64_t level_step = (int64_t)1 << level_power;                                 \
        const int64_t level_mask = level_step - 1;                                            \
        const int n = nrows * w;                                                              \
        acc_t acc[NLEVELS][NROWS * MAXW];                                                     \
        acc_t tmp[MAXW];                                                                      \
        if (row_stride == 0 && size > 0) { /* every step reads the same units: closed form */ \
            for (int r = 0; r < nrows; r++) {                                                 \
                load(tmp, in + r * col_stride, w, nan);                                       \
                for (int k = 0; k < w; k++) ret[r * w + k] = repeated_sum_##SFX(tmp[k], size, level_step); \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        for (int l = 0; l < NLEVELS; l++)                                                     \
            for (int k = 0; k < n; k++) acc[l][k] = 0;                                        \
        int64_t i = 0;                                                                        \
        for (; i + level_step <= size;) {                                                     \
            for (int64_t j = 0; j < level_step; ++j, ++i) {                                   \
                const char *base = in + i * row_stride;                                       \
                for (int r = 0; r < nrows; r++) {                                             \
                    load(tmp, base + r * col_stride, w, nan);                                 \
                    for (int k = 0; k < w; k++) acc[0][r * w + k] += tmp[k];                  \
                }                                                                             \
            }                                                                                 \
            for (int j = 1; j < NLEVELS; ++j) {                                               \
                for (int k = 0; k < n; k++) {                                                 \
                    acc[j][k] += acc[j - 1][k];                                               \
                    acc[j - 1][k] = 0;                                                        \
                }                                                                             \
                const int64_t mask = level_mask << (j * level_power);                         \
                if ((i & mask) != 0) break;                                                   \
            }                                                                                 \
        }                                                                                     \
        for (; i < size; ++i) {                                                               \
            const char *base = in + i * row_stride;                                           \
            for (int r = 0; r < nrows; r++) {                                                 \
                load(tmp, base + r * col_stride, w, nan);                                     \
                for (int k = 0; k < w; k++) acc[0][r * w + k] += tmp[k];                      \
            }                                                                                 \
        }                                                                                     \
        for (int j = 1; j < NLEVELS; ++j)                                                     \
            for (int k = 0; k < n; k++) acc[0][k] += acc[j][k];                               \
        for (int k = 0; k < n; k++) ret[k] = acc[0][k];                                       \
    }                                                                                         \
    /* one row of `size` units read as 4 interleaved streams (upstream row_sum) */            \
    static void row_sum_##SFX(acc_t *ret, const char *in, int64_t in_stride, int64_t size,    \
                              int w, LOADT load, bool nan) {                                  \
        const int64_t size_ilp = size / 4;                                                    \
        acc_t part[NROWS * MAXW], tmp[MAXW];                                                  \
        multi_row_sum_##SFX(part, in, in_stride * 4, in_stride, size_ilp, 4, w, load, nan);   \
        for (int64_t i = size_ilp * 4; i < size; ++i) {                                       \
            load(tmp, in + i * in_stride, w, nan);                                            \
            for (int k = 0; k < w; k++) part[k] += tmp[k];                                    \
        }                                                                                     \
        for (int r = 1; r < 4; ++r)                                                           \
            for (int k = 0; k < w; k++) part[k] += part[r * w + k];                           \
        for (int k = 0; k < w; k++) ret[k] = part[k];                                         \
    }

DEFINE_CASCADE(float, f, load_f)
DEFINE_CASCADE(double, d, load_d)

/* ---- loaders ------------------------------------------------------------------------ */

static inline float half_at(const char *p, int64_t i) { tn_half h; memcpy(&h, p + 2 * i, 2); return tn_half_to_f32(h); }
static inline float bf16_at(const char *p, int64_t i) { tn_bfloat16 h; memcpy(&h, p + 2 * i, 2); return tn_bf16_to_f32(h); }
static inline float f32_at(const char *p, int64_t i) { float v; memcpy(&v, p + 4 * i, 4); return v; }
static inline double f64_at(const char *p, int64_t i) { double v; memcpy(&v, p + 8 * i, 8); return v; }

static void ld_f32(float *d, const char *p, int w, bool nan) {
    for (int k = 0; k < w; k++) { float v = f32_at(p, k); d[k] = nan && isnan(v) ? 0.0f : v; }
}
static void ld_f64(double *d, const char *p, int w, bool nan) {
    for (int k = 0; k < w; k++) { double v = f64_at(p, k); d[k] = nan && isnan(v) ? 0.0 : v; }
}
/* scalar and outer loads of reduced floats: one element per lane, converted */
static void ld_bf16(float *d, const char *p, int w, bool nan) {
    for (int k = 0; k < w; k++) { float v = bf16_at(p, k); d[k] = nan && isnan(v) ? 0.0f : v; }
}
static void ld_f16(float *d, const char *p, int w, bool nan) {
    for (int k = 0; k < w; k++) { float v = half_at(p, k); d[k] = nan && isnan(v) ? 0.0f : v; }
}
/* inner loads read a full vector of 2w reduced floats and fold it to w lanes. Upstream's
 * bf16 sum splits the vector in halves (lane k = x[k] + x[w+k]); its generic fold (half,
 * and bf16 nansum) adds neighbours (lane k = (0 + x[2k]) + x[2k+1]). */
static void ld_bf16_inner(float *d, const char *p, int w, bool nan) {
    if (!nan) {
        for (int k = 0; k < w; k++) d[k] = bf16_at(p, k) + bf16_at(p, w + k);
        return;
    }
    for (int k = 0; k < w; k++) {
        float a = 0.0f, x0 = bf16_at(p, 2 * k), x1 = bf16_at(p, 2 * k + 1);
        if (!isnan(x0)) a += x0;
        if (!isnan(x1)) a += x1;
        d[k] = a;
    }
}
static void ld_f16_inner(float *d, const char *p, int w, bool nan) {
    for (int k = 0; k < w; k++) {
        float a = 0.0f, x0 = half_at(p, 2 * k), x1 = half_at(p, 2 * k + 1);
        if (!(nan && isnan(x0))) a += x0;
        if (!(nan && isnan(x1))) a += x1;
        d[k] = a;
    }
}

/* ---- the 2-D loop (upstream cascade_sum's lambda), shared by every element type ------- */

typedef struct sum_kind {
    int esize;       /* element bytes */
    int comps;       /* accumulators per element: 1, or 2 for complex (real, imaginary) */
    int inner_fold;  /* elements per accumulator lane in an inner vector load (1 or 2) */
    load_f sload_f, vin_f, vout_f; /* float accumulation */
    load_d sload_d;  /* double accumulation (f64 only) */
    /* out[0] = out[0] + v (comps values) in the element type; elem_add combines two
     * elements (no-reduce path) */
    void (*out_add)(char *out, const double *v);
    void (*elem_add)(char *out, const char *in, bool nan);
} sum_kind;

static void add_f32(char *o, const double *v) { float a; memcpy(&a, o, 4); a += (float)v[0]; memcpy(o, &a, 4); }
static void add_f64(char *o, const double *v) { double a; memcpy(&a, o, 8); a += v[0]; memcpy(o, &a, 8); }
static void add_c64(char *o, const double *v) { add_f32(o, v); add_f32(o + 4, v + 1); }
static void add_c128(char *o, const double *v) { add_f64(o, v); add_f64(o + 8, v + 1); }
/* c10's BFloat16 += converts the float addend to bf16 first, then adds in float and
 * rounds again; reproduce both roundings. */
static void add_bf16(char *o, const double *v) {
    tn_bfloat16 a; memcpy(&a, o, 2);
    float b = tn_round_bf16_f32((float)v[0]);
    a = tn_f32_to_bf16(tn_bf16_to_f32(a) + b); memcpy(o, &a, 2);
}
static void add_f16(char *o, const double *v) {
    tn_half a; memcpy(&a, o, 2);
    float b = tn_round_half_f32((float)v[0]);
    a = tn_f32_to_half(tn_half_to_f32(a) + b); memcpy(o, &a, 2);
}
static void eadd_f32(char *o, const char *i, bool nan) {
    float a = f32_at(o, 0), b = f32_at(i, 0);
    if (nan) { if (isnan(a)) a = 0; if (isnan(b)) b = 0; }
    a = a + b; memcpy(o, &a, 4);
}
static void eadd_f64(char *o, const char *i, bool nan) {
    double a = f64_at(o, 0), b = f64_at(i, 0);
    if (nan) { if (isnan(a)) a = 0; if (isnan(b)) b = 0; }
    a = a + b; memcpy(o, &a, 8);
}
static void eadd_c64(char *o, const char *i, bool nan) { eadd_f32(o, i, nan); eadd_f32(o + 4, i + 4, nan); }
static void eadd_c128(char *o, const char *i, bool nan) { eadd_f64(o, i, nan); eadd_f64(o + 8, i + 8, nan); }
static void eadd_bf16(char *o, const char *i, bool nan) {
    float a = bf16_at(o, 0), b = bf16_at(i, 0);
    if (nan) { if (isnan(a)) a = 0; if (isnan(b)) b = 0; }
    tn_bfloat16 r = tn_f32_to_bf16(a + b); memcpy(o, &r, 2);
}
static void eadd_f16(char *o, const char *i, bool nan) {
    float a = half_at(o, 0), b = half_at(i, 0);
    if (nan) { if (isnan(a)) a = 0; if (isnan(b)) b = 0; }
    tn_half r = tn_f32_to_half(a + b); memcpy(o, &r, 2);
}

/* multi_row_sum's cascade for four units of 8 floats at x + u * ustride (u < 4) over `size`
 * steps of row_stride floats, the 32 sums to out32: below, on 8-float vectors */
static void f32_units4(float *out32, const float *x, int64_t row_stride, int64_t ustride, int64_t size, bool nan);
/* the same for units of one float (out4) */
static void f32_units4_1(float *out4, const float *x, int64_t row_stride, int64_t ustride, int64_t size);
static void f32_units4_1_nan(float *out4, const float *x, int64_t row_stride, int64_t ustride, int64_t size);
/* float64: units of 4 doubles (out16), and of one */
static void f64_units4(double *out16, const double *x, int64_t row_stride, int64_t ustride, int64_t size, bool nan);
static void f64_units4_1(double *out4, const double *x, int64_t row_stride, int64_t ustride, int64_t size);
static void f64_units4_1_nan(double *out4, const double *x, int64_t row_stride, int64_t ustride, int64_t size);

/* The outer branch's column groups on vectors, for elements T in W lanes (upstream's 32-byte
 * Vectorized): 4 W columns through one cascade, then W at a time as four interleaved streams
 * of rows (row_sum), the last columns alone (row_sum of one-element units); each output
 * then += its sum. The same adds in the same order as the loader-driven branch, so the same
 * bits. Uses sum_loop2d's in, in_s, out, os, size0, size1, nan. */
#define OUTER_COLS(T, W, UNITS4, UNITS4_1, UNITS4_1_NAN)                                        \
    do {                                                                                       \
        const int64_t rs = in_s[0] / (int64_t)sizeof(T), ilp = size0 / 4;                      \
        const T *x = (const T *)in;                                                            \
        T a[4 * (W)];                                                                          \
        int64_t j = 0;                                                                         \
        for (; j + 4 * (W) <= size1; j += 4 * (W)) {                                           \
            UNITS4(a, x + j, rs, (W), size0, nan);                                             \
            for (int k = 0; k < 4 * (W); k++) OUT_ADD(T, j + k, a[k]);                         \
        }                                                                                      \
        for (; j + (W) <= size1; j += (W)) {                                                   \
            UNITS4(a, x + j, 4 * rs, rs, ilp, nan);                                            \
            for (int64_t i = ilp * 4; i < size0; ++i)                                          \
                for (int k = 0; k < (W); k++) { T v = x[i * rs + j + k]; a[k] += nan && v != v ? (T)0 : v; } \
            for (int r = 1; r < 4; ++r)                                                        \
                for (int k = 0; k < (W); k++) a[k] += a[r * (W) + k];                          \
            for (int k = 0; k < (W); k++) OUT_ADD(T, j + k, a[k]);                             \
        }                                                                                      \
        for (; j < size1; j++) {                                                               \
            (nan ? UNITS4_1_NAN : UNITS4_1)(a, x + j, 4 * rs, rs, ilp);                        \
            for (int64_t i = ilp * 4; i < size0; ++i) { T v = x[i * rs + j]; a[0] += nan && v != v ? (T)0 : v; } \
            for (int r = 1; r < 4; ++r) a[0] += a[r];                                          \
            OUT_ADD(T, j, a[0]);                                                               \
        }                                                                                      \
    } while (0)
/* out element jj (of type T, at stride os) += v */
#define OUT_ADD(T, jj, v)                                                                      \
    do {                                                                                       \
        T o_;                                                                                  \
        memcpy(&o_, out + (jj) * os, sizeof(T));                                               \
        o_ += (v);                                                                             \
        memcpy(out + (jj) * os, &o_, sizeof(T));                                               \
    } while (0)

static void sum_loop2d(const sum_kind *K, char *out, const char *in, const int64_t st[4],
                       int64_t size0, int64_t size1, int lanes, bool nan) {
    int64_t in_s[2] = {st[1], st[3]}, out_s[2] = {st[0], st[2]};
    if (out_s[0] != 0 && out_s[1] == 0) { /* move the reduction to the first dim */
        int64_t t = in_s[0]; in_s[0] = in_s[1]; in_s[1] = t;
        t = out_s[0]; out_s[0] = out_s[1]; out_s[1] = t;
        t = size0; size0 = size1; size1 = t;
    }
    if (out_s[0] != 0 && out_s[1] != 0) { /* not a reduction: out = out + in */
        for (int64_t j = 0; j < size1; j++)
            for (int64_t i = 0; i < size0; i++)
                K->elem_add(out + j * st[2] + i * st[0], in + j * st[3] + i * st[1], nan);
        return;
    }
    const int64_t os = out_s[1];
    const int64_t es = K->esize;
    const int nc = K->comps; /* a unit of w elements is w * nc accumulators */
    const bool dbl = K->sload_d != NULL;
    const int vec_t_size = lanes * K->inner_fold; /* upstream Vectorized<scalar_t>::size() */
    double a_d[NROWS * MAXW], v[2];
    float a_f[NROWS * MAXW];
#define ACC(k) (dbl ? a_d[k] : (double)a_f[k])
/* out element j += the accumulators of element k */
#define PUT(j, k) do { for (int c_ = 0; c_ < nc; c_++) v[c_] = ACC((k) * nc + c_); K->out_add(out + (j) * os, v); } while (0)
    const bool f64_fast = K->sload_d == ld_f64 && K->comps == 1 && lanes == 4;
    if (f64_fast && in_s[0] == 8 && size0 >= 4) {
        /* float64 rows as the branch below sums them, on 4-double vectors: units of 4 lanes
         * read as four interleaved streams, their tail, then the row's tail and the lanes */
        const int64_t vec_size = size0 / 4, ilp = vec_size / 4;
        double a[16];
        for (int64_t j = 0; j < size1; j++) {
            const double *x = (const double *)(in + j * in_s[1]);
            f64_units4(a, x, 16, 4, ilp, nan);
            for (int64_t i = ilp * 4; i < vec_size; ++i)
                for (int k = 0; k < 4; k++) { double v = x[i * 4 + k]; a[k] += nan && v != v ? 0.0 : v; }
            for (int r = 1; r < 4; ++r)
                for (int k = 0; k < 4; k++) a[k] += a[r * 4 + k];
            double fin = 0;
            for (int64_t k = vec_size * 4; k < size0; k++) { double v = x[k]; fin += nan && v != v ? 0.0 : v; }
            for (int k = 0; k < 4; k++) fin += a[k];
            double o;
            memcpy(&o, out + j * os, 8);
            o += fin;
            memcpy(out + j * os, &o, 8);
        }
    } else if (f64_fast && in_s[1] == 8 && size1 >= 4 && in_s[0] % 8 == 0 && in_s[0] != 0) {
        OUTER_COLS(double, 4, f64_units4, f64_units4_1, f64_units4_1_nan);
    } else if (in_s[0] == es && size0 >= vec_t_size) {
        /* contiguous inner reduction: vector row sums, scalar tail, then lane partials */
        const int64_t vec_numel = vec_t_size, vec_stride = es * vec_numel;
        const int64_t vec_size = size0 / vec_numel;
        for (int64_t j = 0; j < size1; j++) {
            const char *row = in + j * in_s[1];
            if (dbl) {
                row_sum_d(a_d, row, vec_stride, vec_size, lanes * nc, K->sload_d, nan);
                double fin[2] = {0, 0}, t[2];
                for (int64_t k = vec_size * vec_numel; k < size0; k++) {
                    K->sload_d(t, row + k * es, nc, nan);
                    for (int c = 0; c < nc; c++) fin[c] += t[c];
                }
                for (int k = 0; k < lanes; k++)
                    for (int c = 0; c < nc; c++) fin[c] += a_d[k * nc + c];
                K->out_add(out + j * os, fin);
            } else {
                row_sum_f(a_f, row, vec_stride, vec_size, lanes * nc, K->vin_f, nan);
                float fin[2] = {0, 0}, t[2];
                for (int64_t k = vec_size * vec_numel; k < size0; k++) {
                    K->sload_f(t, row + k * es, nc, nan);
                    for (int c = 0; c < nc; c++) fin[c] += t[c];
                }
                for (int k = 0; k < lanes; k++)
                    for (int c = 0; c < nc; c++) fin[c] += a_f[k * nc + c];
                for (int c = 0; c < nc; c++) v[c] = fin[c];
                K->out_add(out + j * os, v);
            }
        }
    } else if (in_s[1] == es && size1 >= vec_t_size && K->vout_f == ld_f32 && K->comps == 1 && lanes == 8 && in_s[0] % 4 == 0 && in_s[0] != 0) {
        /* the branch below for float32 (28x upstream's time for sum(dim=0) of 1000 x 1000
         * through it) */
        OUTER_COLS(float, 8, f32_units4, f32_units4_1, f32_units4_1_nan);
    } else if (in_s[1] == es && size1 >= vec_t_size) {
        /* contiguous outer reduction: columns in groups of 4 vectors, then vectors, then scalars */
        const int64_t vec_stride = es * lanes;
        int64_t j = 0;
        for (; j + NROWS * lanes <= size1; j += NROWS * lanes) {
            const char *row = in + j * es;
            if (dbl) multi_row_sum_d(a_d, row, in_s[0], vec_stride, size0, NROWS, lanes * nc, K->sload_d, nan);
            else multi_row_sum_f(a_f, row, in_s[0], vec_stride, size0, NROWS, lanes * nc, K->vout_f, nan);
            for (int k = 0; k < NROWS * lanes; k++) PUT(j + k, k);
        }
        for (; j + lanes <= size1; j += lanes) {
            const char *row = in + j * es;
            if (dbl) row_sum_d(a_d, row, in_s[0], size0, lanes * nc, K->sload_d, nan);
            else row_sum_f(a_f, row, in_s[0], size0, lanes * nc, K->vout_f, nan);
            for (int k = 0; k < lanes; k++) PUT(j + k, k);
        }
        for (; j < size1; j++) {
            const char *row = in + j * es;
            if (dbl) row_sum_d(a_d, row, in_s[0], size0, nc, K->sload_d, nan);
            else row_sum_f(a_f, row, in_s[0], size0, nc, K->sload_f, nan);
            PUT(j, 0);
        }
    } else if (in_s[0] < in_s[1]) {
        for (int64_t j = 0; j < size1; j++) {
            const char *row = in + j * in_s[1];
            if (dbl) row_sum_d(a_d, row, in_s[0], size0, nc, K->sload_d, nan);
            else row_sum_f(a_f, row, in_s[0], size0, nc, K->sload_f, nan);
            PUT(j, 0);
        }
    } else {
        int64_t j = 0;
        for (; j + (NROWS - 1) < size1; j += NROWS) {
            const char *row = in + j * in_s[1];
            if (dbl) multi_row_sum_d(a_d, row, in_s[0], in_s[1], size0, NROWS, nc, K->sload_d, nan);
            else multi_row_sum_f(a_f, row, in_s[0], in_s[1], size0, NROWS, nc, K->sload_f, nan);
            for (int k = 0; k < NROWS; k++) PUT(j + k, k);
        }
        for (; j < size1; j++) {
            const char *row = in + j * in_s[1];
            if (dbl) row_sum_d(a_d, row, in_s[0], size0, nc, K->sload_d, nan);
            else row_sum_f(a_f, row, in_s[0], size0, nc, K->sload_f, nan);
            PUT(j, 0);
        }
    }
#undef PUT
#undef ACC
}
#undef OUTER_COLS
#undef OUT_ADD

static const sum_kind K_F32 = {4, 1, 1, ld_f32, ld_f32, ld_f32, NULL, add_f32, eadd_f32};
static const sum_kind K_F64 = {8, 1, 1, NULL, NULL, NULL, ld_f64, add_f64, eadd_f64};
static const sum_kind K_BF16 = {2, 1, 2, ld_bf16, ld_bf16_inner, ld_bf16, NULL, add_bf16, eadd_bf16};
static const sum_kind K_F16 = {2, 1, 2, ld_f16, ld_f16_inner, ld_f16, NULL, add_f16, eadd_f16};
/* complex: the real loaders read a unit's 2w components in memory order */
static const sum_kind K_C64 = {8, 2, 1, ld_f32, ld_f32, ld_f32, NULL, add_c64, eadd_c64};
static const sum_kind K_C128 = {16, 2, 1, NULL, NULL, NULL, ld_f64, add_c128, eadd_c128};

void f32_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                            int64_t size1, int lanes, bool ignore_nan) {
    sum_loop2d(&K_F32, out, in, st, size0, size1, lanes, ignore_nan);
}
void f64_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                            int64_t size1, int lanes, bool ignore_nan) {
    sum_loop2d(&K_F64, out, in, st, size0, size1, lanes, ignore_nan);
}
void bf16_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                             int64_t size1, int lanes, bool ignore_nan) {
    sum_loop2d(&K_BF16, out, in, st, size0, size1, lanes, ignore_nan);
}
void f16_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                            int64_t size1, int lanes, bool ignore_nan) {
    sum_loop2d(&K_F16, out, in, st, size0, size1, lanes, ignore_nan);
}
void c64_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                            int64_t size1, int lanes, bool ignore_nan) {
    sum_loop2d(&K_C64, out, in, st, size0, size1, lanes, ignore_nan);
}
void c128_sum_loop2d__scalar(char *out, const char *in, const int64_t st[4], int64_t size0,
                             int64_t size1, int lanes, bool ignore_nan) {
    sum_loop2d(&K_C128, out, in, st, size0, size1, lanes, ignore_nan);
}

/* ---- contiguous float32 rows, vectorised --------------------------------------------- */

#pragma GCC diagnostic ignored "-Wpsabi"
typedef float tn_v8f __attribute__((vector_size(32)));
typedef float tn_v8fu __attribute__((vector_size(32), aligned(4)));
static inline tn_v8f v8_ld(const float *p) { return *(const tn_v8fu *)p; }

/* nansum's load: a NaN lane reads as +0 (the reference's load, upstream's nansum policy) */
typedef int32_t tn_v8i __attribute__((vector_size(32)));
static inline tn_v8f v8_ld_nan(const float *p) {
    tn_v8f v = v8_ld(p);
    return (tn_v8f)((tn_v8i)v & (v == v));
}

/* f32_units4 (declared above sum_loop2d): the cascade of multi_row_sum, the first level's
 * four accumulators in registers; a row's 8-lane partials are four such units too */
#define F32_UNITS4(NAME, ATTR, ET, VT, v8_ld)                                               \
    ATTR static void NAME(ET *out32, const ET *x, int64_t rs, int64_t us, int64_t size) {   \
        int64_t lp = ceil_log2(size) / NLEVELS;                                             \
        if (lp < 4) lp = 4;                                                                 \
        const int64_t step = (int64_t)1 << lp, lmask = step - 1;                            \
        VT a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                                          \
        VT acc[NLEVELS][4];                                                                 \
        /* fewer steps than one level never fill a level: the levels are zeros then, and    \
         * adding them is adding +0 (the same as three times), without clearing 16 vectors  \
         * (rows of 100 were 2x upstream's time) */                                         \
        const bool levels = size >= step;                                                   \
        if (levels) memset(acc, 0, sizeof acc);                                             \
        int64_t i = 0;                                                                      \
        for (; i + step <= size;) {                                                         \
            for (int64_t j = 0; j < step; ++j, ++i) {                                       \
                const ET *b = x + i * rs;                                                   \
                a0 += v8_ld(b);                                                             \
                a1 += v8_ld(b + us);                                                        \
                a2 += v8_ld(b + 2 * us);                                                    \
                a3 += v8_ld(b + 3 * us);                                                    \
            }                                                                               \
            acc[0][0] = a0, acc[0][1] = a1, acc[0][2] = a2, acc[0][3] = a3;                 \
            for (int j = 1; j < NLEVELS; ++j) {                                             \
                for (int r = 0; r < 4; r++) {                                               \
                    acc[j][r] += acc[j - 1][r];                                             \
                    acc[j - 1][r] = (VT){0};                                                \
                }                                                                           \
                if ((i & (lmask << (j * lp))) != 0) break;                                  \
            }                                                                               \
            a0 = acc[0][0], a1 = acc[0][1], a2 = acc[0][2], a3 = acc[0][3];                 \
        }                                                                                   \
        for (; i < size; ++i) {                                                             \
            const ET *b = x + i * rs;                                                       \
            a0 += v8_ld(b);                                                                 \
            a1 += v8_ld(b + us);                                                            \
            a2 += v8_ld(b + 2 * us);                                                        \
            a3 += v8_ld(b + 3 * us);                                                        \
        }                                                                                   \
        if (levels) {                                                                       \
            for (int j = 1; j < NLEVELS; ++j) {                                             \
                a0 += acc[j][0];                                                            \
                a1 += acc[j][1];                                                            \
                a2 += acc[j][2];                                                            \
                a3 += acc[j][3];                                                            \
            }                                                                               \
        } else {                                                                            \
            const VT z = {0};                                                               \
            a0 += z, a1 += z, a2 += z, a3 += z;                                             \
        }                                                                                   \
        const int w = (int)(sizeof(VT) / sizeof(ET));                                       \
        memcpy(out32, &a0, sizeof a0), memcpy(out32 + w, &a1, sizeof a1);                   \
        memcpy(out32 + 2 * w, &a2, sizeof a2), memcpy(out32 + 3 * w, &a3, sizeof a3);       \
    }
F32_UNITS4(f32_units4_base, , float, tn_v8f, v8_ld)
F32_UNITS4(f32_units4_nan_base, , float, tn_v8f, v8_ld_nan)
#if defined(__x86_64__)
F32_UNITS4(f32_units4_avx2, __attribute__((target("avx2"))), float, tn_v8f, v8_ld)
F32_UNITS4(f32_units4_nan_avx2, __attribute__((target("avx2"))), float, tn_v8f, v8_ld_nan)
#endif

/* The 8 lane partials sum_loop2d's contiguous-inner branch accumulates over the first
 * vec_size * 8 floats of a row: the row read as four interleaved units of 8 floats
 * (F32_UNITS4 over blocks of 32), then the units left after the last block added to the
 * first unit's lanes, then the other three units, as upstream's row_sum adds them (sum 1e6
 * floats: 185 us, 3.6x upstream, before the vector form). */
#define F32_ROW_PARTS8(NAME, ATTR, UNITS, v8_ld)                                              \
    ATTR static inline __attribute__((always_inline)) void NAME(float *out8, const float *x, int64_t vec_size) { \
        const int64_t size = vec_size / 4;                                                   \
        float a[32];                                                                         \
        UNITS(a, x, 32, 8, size);                                                            \
        tn_v8f part, t;                                                                      \
        memcpy(&part, a, sizeof part);                                                       \
        for (int64_t u = size * 4; u < vec_size; ++u) part += v8_ld(x + u * 8);              \
        for (int r = 1; r < 4; r++) {                                                        \
            memcpy(&t, a + 8 * r, sizeof t);                                                 \
            part += t;                                                                       \
        }                                                                                    \
        memcpy(out8, &part, sizeof part);                                                    \
    }
F32_ROW_PARTS8(f32_row_parts8_base, , f32_units4_base, v8_ld)
F32_ROW_PARTS8(f32_row_parts8_nan_base, , f32_units4_nan_base, v8_ld_nan)
#if defined(__x86_64__)
F32_ROW_PARTS8(f32_row_parts8_avx2, __attribute__((target("avx2"))), f32_units4_avx2, v8_ld)
F32_ROW_PARTS8(f32_row_parts8_nan_avx2, __attribute__((target("avx2"))), f32_units4_nan_avx2, v8_ld_nan)
#endif
/* rows of n >= 8 floats summed one after another in one call per ISA (out[r] = 0 + the
 * row's sum, f32_row_sum8's order): a call and a dispatch per row cost more than a short
 * row's adds (rows of 100: 2.7x upstream's time, session 46) */
#define F32_ROWS_SUM(NAME, ATTR, PARTS, NANF)                                                 \
    ATTR static void NAME(float *out, const float *in, int64_t rows, int64_t n) {            \
        const int64_t vec_size = n / 8;                                                      \
        for (int64_t r = 0; r < rows; r++) {                                                 \
            const float *x = in + r * n;                                                     \
            float part[8];                                                                   \
            PARTS(part, x, vec_size);                                                        \
            float fin = 0;                                                                   \
            for (int64_t k = vec_size * 8; k < n; k++) fin += NANF && x[k] != x[k] ? 0.0f : x[k]; \
            for (int k = 0; k < 8; k++) fin += part[k];                                      \
            out[r] = 0.0f + fin;                                                             \
        }                                                                                    \
    }
F32_ROWS_SUM(f32_rows_sum_base, , f32_row_parts8_base, 0)
F32_ROWS_SUM(f32_rows_nansum_base, , f32_row_parts8_nan_base, 1)
#if defined(__x86_64__)
F32_ROWS_SUM(f32_rows_sum_avx2, __attribute__((target("avx2"))), f32_row_parts8_avx2, 0)
F32_ROWS_SUM(f32_rows_nansum_avx2, __attribute__((target("avx2"))), f32_row_parts8_nan_avx2, 1)
#endif
/* float64: units of 4 doubles (upstream's 32-byte Vectorized<double>), and of one */
typedef double tn_v4d __attribute__((vector_size(32)));
typedef double tn_v4du __attribute__((vector_size(32), aligned(8)));
static inline tn_v4d v4d_ld(const double *p) { return *(const tn_v4du *)p; }
typedef int64_t tn_v4l __attribute__((vector_size(32)));
static inline tn_v4d v4d_ld_nan(const double *p) {
    tn_v4d v = v4d_ld(p);
    return (tn_v4d)((tn_v4l)v & (v == v));
}
static inline double d1_ld(const double *p) { return *p; }
static inline double d1_ld_nan(const double *p) { return *p != *p ? 0.0 : *p; }
F32_UNITS4(f64_units4_base, , double, tn_v4d, v4d_ld)
F32_UNITS4(f64_units4_nan_base, , double, tn_v4d, v4d_ld_nan)
#if defined(__x86_64__)
F32_UNITS4(f64_units4_avx2, __attribute__((target("avx2"))), double, tn_v4d, v4d_ld)
F32_UNITS4(f64_units4_nan_avx2, __attribute__((target("avx2"))), double, tn_v4d, v4d_ld_nan)
#endif
F32_UNITS4(f64_units4_1, , double, double, d1_ld)
F32_UNITS4(f64_units4_1_nan, , double, double, d1_ld_nan)
static void f64_units4(double *out16, const double *x, int64_t row_stride, int64_t ustride, int64_t size, bool nan) {
#if defined(__x86_64__)
    if (tn_cpu_isa() >= TN_ISA_AVX2) { (nan ? f64_units4_nan_avx2 : f64_units4_avx2)(out16, x, row_stride, ustride, size); return; }
#endif
    (nan ? f64_units4_nan_base : f64_units4_base)(out16, x, row_stride, ustride, size);
}
/* one-float units (a column a unit): the last columns of an outer sum */
static inline float f1_ld(const float *p) { return *p; }
static inline float f1_ld_nan(const float *p) { return *p != *p ? 0.0f : *p; }
F32_UNITS4(f32_units4_1, , float, float, f1_ld)
F32_UNITS4(f32_units4_1_nan, , float, float, f1_ld_nan)
static void f32_units4(float *out32, const float *x, int64_t row_stride, int64_t ustride, int64_t size, bool nan) {
#if defined(__x86_64__)
    if (tn_cpu_isa() >= TN_ISA_AVX2) { (nan ? f32_units4_nan_avx2 : f32_units4_avx2)(out32, x, row_stride, ustride, size); return; }
#endif
    (nan ? f32_units4_nan_base : f32_units4_base)(out32, x, row_stride, ustride, size);
}

/* The same for rows of n >= 4 complex64 (4 complex lanes = the 8 floats of a vector): the
 * tail and the lanes fold per part, real and imaginary (K_C64's order). */
#define C64_ROWS_SUM(NAME, ATTR, PARTS)                                                       \
    ATTR static void NAME(float *out, const float *in, int64_t rows, int64_t n) {            \
        const int64_t vec_size = n / 4;                                                      \
        for (int64_t r = 0; r < rows; r++) {                                                 \
            const float *x = in + 2 * r * n;                                                 \
            float part[8], re = 0, im = 0;                                                   \
            PARTS(part, x, vec_size);                                                        \
            for (int64_t k = vec_size * 4; k < n; k++) re += x[2 * k], im += x[2 * k + 1];   \
            for (int k = 0; k < 4; k++) re += part[2 * k], im += part[2 * k + 1];            \
            out[2 * r] = 0.0f + re;                                                          \
            out[2 * r + 1] = 0.0f + im;                                                      \
        }                                                                                    \
    }
C64_ROWS_SUM(c64_rows_sum_base, , f32_row_parts8_base)
#if defined(__x86_64__)
C64_ROWS_SUM(c64_rows_sum_avx2, __attribute__((target("avx2"))), f32_row_parts8_avx2)
#endif

void c64_sum_rows_contig(float *out, const float *in, int64_t rows, int64_t n) {
#if defined(__x86_64__)
    if (tn_cpu_isa() >= TN_ISA_AVX2) { c64_rows_sum_avx2(out, in, rows, n); return; }
#endif
    c64_rows_sum_base(out, in, rows, n);
}

void f32_sum_rows_contig(float *out, const float *in, int64_t rows, int64_t n) {
#if defined(__x86_64__)
    if (tn_cpu_isa() >= TN_ISA_AVX2) { f32_rows_sum_avx2(out, in, rows, n); return; }
#endif
    f32_rows_sum_base(out, in, rows, n);
}

void f32_nansum_rows_contig(float *out, const float *in, int64_t rows, int64_t n) {
#if defined(__x86_64__)
    if (tn_cpu_isa() >= TN_ISA_AVX2) { f32_rows_nansum_avx2(out, in, rows, n); return; }
#endif
    f32_rows_nansum_base(out, in, rows, n);
}
