/* creation.c — sequence kernels (arange, range, linspace, logspace) per dtype, written to
 * reproduce upstream's CPU results bit for bit. Upstream's kernels compile with FMA
 * contraction in the per-ISA kernel files (arange, linspace), so their `a + b * c` is an
 * explicit fma() here, while range and logspace (baseline-compiled upstream) round twice; arange's
 * vectorised path builds 32-byte groups from a base rounded to the element type, which is
 * why the group structure is emulated and not just the formula. */
#include "kernels/creation.h"

#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cast.h"
#include "kernels/cpu_features.h"

/* Two 32-byte vectors per step, then a scalar tail (upstream's vectorized_loop). */
#define GROUP_BYTES 32

/* x rounded to the reduced dtype d (float16 or bfloat16), the core helper */
static inline float r16(tn_dtype d, float x) { return (float)tn_round_to_dtype(d, x); }
static inline void st16(tn_dtype d, char *p, float x) {
    uint16_t h = d == TN_DTYPE_FLOAT16 ? tn_f32_to_half(x) : tn_f32_to_bf16(x);
    memcpy(p, &h, 2);
}

/* ---- arange ------------------------------------------------------------------------ */

/* Integral dtypes: the int64 accumulation wraps; the element keeps the low bits. */
#define TN_INT_ARANGE(name, T)                                                                  \
    static void name##_arange__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {    \
        T *o = (T *)out;                                                                          \
        for (int64_t i = b; i < e; i++)                                                           \
            o[i] = (T)(uint64_t)((uint64_t)p->istart + (uint64_t)p->istep * (uint64_t)i);         \
    }
/* 8-byte elements (torch.arange's default int64, every generate() step over the vocabulary):
 * four lanes at a time as a scalar base plus the lane offsets j * step, in GCC's generic
 * vectors (the same sums mod 2^64). GCC 12.2 does not vectorise the plain loop, and at -O3
 * miscompiles the form with eight running values each stepped by 8 * step. */
typedef uint64_t tn_u64x4 __attribute__((vector_size(32)));
static void w64_arange(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    uint64_t *o = (uint64_t *)out;
    const uint64_t s0 = (uint64_t)p->istart, st = (uint64_t)p->istep;
    const tn_u64x4 lane = {0, st, 2 * st, 3 * st};
    int64_t i = b;
    for (; i + 4 <= e; i += 4) {
        tn_u64x4 v = (s0 + st * (uint64_t)i) + lane;
        memcpy(o + i, &v, sizeof v);
    }
    for (; i < e; i++) o[i] = s0 + st * (uint64_t)i;
}
TN_INT_ARANGE(u8, uint8_t)
TN_INT_ARANGE(i8, int8_t)
TN_INT_ARANGE(i16, int16_t)
TN_INT_ARANGE(i32, int32_t)
TN_INT_ARANGE(u16, uint16_t)
TN_INT_ARANGE(u32, uint32_t)

/* float32 accumulates in double; a vector group's base is rounded to float first and the
 * lanes are base + k * step in double again. */
static void f32_arange__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    float *o = (float *)out;
    const int w = GROUP_BYTES / 4;
    const double s = p->dstart, st = p->dstep;
    int64_t i = b;
    for (; i + 2 * w <= e; i += 2 * w)
        for (int64_t j = i; j < i + 2 * w; j += w) {
            float base = (float)fma(st, (double)j, s);
            o[j] = base;
            for (int k = 1; k < w; k++) o[j + k] = (float)fma((double)k, st, (double)base);
        }
    for (; i < e; i++) o[i] = (float)fma(st, (double)i, s);
}

static void f64_arange__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    double *o = (double *)out;
    const int w = GROUP_BYTES / 8;
    const double s = p->dstart, st = p->dstep;
    int64_t i = b;
    for (; i + 2 * w <= e; i += 2 * w)
        for (int64_t j = i; j < i + 2 * w; j += w) {
            double base = fma(st, (double)j, s);
            o[j] = base;
            for (int k = 1; k < w; k++) o[j + k] = fma((double)k, st, base);
        }
    for (; i < e; i++) o[i] = fma(st, (double)i, s);
}

/* half / bfloat16 accumulate in float (dstart/dstep hold float values). */
static void h16_arange(tn_dtype d, char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    const int w = GROUP_BYTES / 2;
    const float s = (float)p->dstart, st = (float)p->dstep;
    int64_t i = b;
    for (; i + 2 * w <= e; i += 2 * w)
        for (int64_t j = i; j < i + 2 * w; j += w) {
            float base = r16(d, fmaf(st, (float)j, s));
            st16(d, out + 2 * j, base);
            for (int k = 1; k < w; k++) st16(d, out + 2 * (j + k), fmaf((float)k, st, base));
        }
    for (; i < e; i++) st16(d, out + 2 * i, fmaf(st, (float)i, s));
}
static void f16_arange__ref(char *o, int64_t b, int64_t e, const tn_seq_params *p) { h16_arange(TN_DTYPE_FLOAT16, o, b, e, p); }
static void bf16_arange__ref(char *o, int64_t b, int64_t e, const tn_seq_params *p) { h16_arange(TN_DTYPE_BFLOAT16, o, b, e, p); }

tn_seq_fn tn_arange_kernel(tn_dtype dtype) {
    switch (dtype) {
    case TN_DTYPE_UINT8: return u8_arange__ref;
    case TN_DTYPE_INT8: return i8_arange__ref;
    case TN_DTYPE_INT16: return i16_arange__ref;
    case TN_DTYPE_INT32: return i32_arange__ref;
    case TN_DTYPE_INT64: return w64_arange;
    case TN_DTYPE_UINT16: return u16_arange__ref;
    case TN_DTYPE_UINT32: return u32_arange__ref;
    case TN_DTYPE_UINT64: return w64_arange;
    case TN_DTYPE_FLOAT32: return f32_arange__ref;
    case TN_DTYPE_FLOAT64: return f64_arange__ref;
    case TN_DTYPE_FLOAT16: return f16_arange__ref;
    case TN_DTYPE_BFLOAT16: return bf16_arange__ref;
    default: return NULL;
    }
}

/* ---- range: a plain scalar loop upstream, `start + is * step` with `is` in acc type.
 * range and logspace live in upstream's baseline-compiled RangeFactories.cpp (no FMA), so
 * here the multiply and the add round separately (-std=c11 keeps GCC from fusing them). */

static void f32_range__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    for (int64_t i = b; i < e; i++) ((float *)out)[i] = (float)(p->dstart + (double)i * p->dstep);
}
static void f64_range__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    for (int64_t i = b; i < e; i++) ((double *)out)[i] = p->dstart + (double)i * p->dstep;
}
static void f16_range__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    for (int64_t i = b; i < e; i++) st16(TN_DTYPE_FLOAT16, out + 2 * i, (float)p->dstart + (float)i * (float)p->dstep);
}
static void bf16_range__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    for (int64_t i = b; i < e; i++) st16(TN_DTYPE_BFLOAT16, out + 2 * i, (float)p->dstart + (float)i * (float)p->dstep);
}

tn_seq_fn tn_range_kernel(tn_dtype dtype) {
    switch (dtype) {
    case TN_DTYPE_FLOAT32: return f32_range__ref;
    case TN_DTYPE_FLOAT64: return f64_range__ref;
    case TN_DTYPE_FLOAT16: return f16_range__ref;
    case TN_DTYPE_BFLOAT16: return bf16_range__ref;
    default: return tn_dtype_is_integral(dtype, false) ? tn_arange_kernel(dtype) : NULL;
    }
}

/* ---- linspace ------------------------------------------------------------------------
 * Upstream computes in the element type (double for integral ones): step = (end - start) /
 * (steps - 1); the first steps/2 elements are start + step * i, the rest end - step *
 * (steps - 1 - i), which makes the sequence end exactly at `end`. */

static void f32_linspace__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    const float s = (float)p->dstart, en = (float)p->dend;
    const float st = (en - s) / (float)(p->steps - 1);
    const int64_t half = p->steps / 2;
    for (int64_t i = b; i < e; i++)
        ((float *)out)[i] = i < half ? fmaf(st, (float)i, s) : fmaf(-st, (float)(p->steps - i - 1), en);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same values with the two halves as separate loops over int32 counters (an int32
 * converts to float as the int64 does: one rounding of the same integer), which GCC puts
 * on AVX2 lanes with FMA; lengths of 2^31 or more keep the reference. 2.4x upstream's
 * time at 1e6 elements before (the per-element branch kept the loop scalar). */
#pragma GCC push_options
#pragma GCC optimize("O3")
__attribute__((target("avx2,fma"))) static void f32_linspace_fma(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    if (p->steps >= INT32_MAX) {
        f32_linspace__ref(out, b, e, p);
        return;
    }
    float *o = (float *)out;
    const float s = (float)p->dstart, en = (float)p->dend;
    const float st = (en - s) / (float)(p->steps - 1), nst = -st;
    const int32_t half = (int32_t)(p->steps / 2), last = (int32_t)(p->steps - 1);
    const int32_t lo = (int32_t)b, hi = (int32_t)e, mid = hi < half ? hi : lo > half ? lo : half;
    for (int32_t i = lo; i < mid; i++) o[i] = fmaf(st, (float)i, s);
    for (int32_t i = mid; i < hi; i++) o[i] = fmaf(nst, (float)(last - i), en);
}
#pragma GCC pop_options
#endif

static void f64_linspace__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    const double s = p->dstart, en = p->dend;
    const double st = (en - s) / (double)(p->steps - 1);
    const int64_t half = p->steps / 2;
    for (int64_t i = b; i < e; i++)
        ((double *)out)[i] = i < half ? fma(st, (double)i, s) : fma(-st, (double)(p->steps - i - 1), en);
}

/* c10::Half / BFloat16 arithmetic rounds after every operation, integer operands included. */
static void h16_linspace(tn_dtype d, char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    const float s = r16(d, (float)p->dstart), en = r16(d, (float)p->dend);
    const float st = r16(d, r16(d, en - s) / r16(d, (float)(p->steps - 1)));
    const int64_t half = p->steps / 2;
    for (int64_t i = b; i < e; i++) {
        float v = i < half ? s + r16(d, st * r16(d, (float)i)) : en - r16(d, st * r16(d, (float)(p->steps - i - 1)));
        st16(d, out + 2 * i, v);
    }
}
static void f16_linspace__ref(char *o, int64_t b, int64_t e, const tn_seq_params *p) { h16_linspace(TN_DTYPE_FLOAT16, o, b, e, p); }
static void bf16_linspace__ref(char *o, int64_t b, int64_t e, const tn_seq_params *p) { h16_linspace(TN_DTYPE_BFLOAT16, o, b, e, p); }

/* Integral dtypes: istart/iend are the endpoints already converted to the element type;
 * the step is double and each element is converted back with upstream's cast rules. */
#define TN_INT_LINSPACE(name, D)                                                                   \
    static void name##_linspace__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {     \
        const double s = (double)p->istart, en = (double)p->iend;                                    \
        const double st = (en - s) / (double)(p->steps - 1);                                          \
        const int64_t half = p->steps / 2;                                                            \
        const int w = tn_dtype_itemsize(D);                                                           \
        for (int64_t i = b; i < e; i++) {                                                             \
            double v = i < half ? fma(st, (double)i, s) : fma(-st, (double)(p->steps - i - 1), en);   \
            tn_cast_store_scalar(out + w * i, D, 'f', 0, v, 0);                                       \
        }                                                                                             \
    }
TN_INT_LINSPACE(u8, TN_DTYPE_UINT8)
TN_INT_LINSPACE(i8, TN_DTYPE_INT8)
TN_INT_LINSPACE(i16, TN_DTYPE_INT16)
TN_INT_LINSPACE(i32, TN_DTYPE_INT32)
TN_INT_LINSPACE(i64, TN_DTYPE_INT64)

/* Complex: step = (end - start) / (steps - 1) divides both parts by a real; each part then
 * follows the real formula. */
static void c64_linspace__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    const float sr = (float)p->re_start, si = (float)p->im_start, er = (float)p->re_end, ei = (float)p->im_end;
    const float n1 = (float)(p->steps - 1), str = (er - sr) / n1, sti = (ei - si) / n1;
    const int64_t half = p->steps / 2;
    float *o = (float *)out;
    for (int64_t i = b; i < e; i++) {
        if (i < half) {
            o[2 * i] = fmaf(str, (float)i, sr);
            o[2 * i + 1] = fmaf(sti, (float)i, si);
        } else {
            float k = (float)(p->steps - i - 1);
            o[2 * i] = fmaf(-str, k, er);
            o[2 * i + 1] = fmaf(-sti, k, ei);
        }
    }
}
static void c128_linspace__ref(char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    const double n1 = (double)(p->steps - 1);
    const double str = (p->re_end - p->re_start) / n1, sti = (p->im_end - p->im_start) / n1;
    const int64_t half = p->steps / 2;
    double *o = (double *)out;
    for (int64_t i = b; i < e; i++) {
        if (i < half) {
            o[2 * i] = fma(str, (double)i, p->re_start);
            o[2 * i + 1] = fma(sti, (double)i, p->im_start);
        } else {
            double k = (double)(p->steps - i - 1);
            o[2 * i] = fma(-str, k, p->re_end);
            o[2 * i + 1] = fma(-sti, k, p->im_end);
        }
    }
}

tn_seq_fn tn_linspace_kernel(tn_dtype dtype) {
    switch (dtype) {
    case TN_DTYPE_UINT8: return u8_linspace__ref;
    case TN_DTYPE_INT8: return i8_linspace__ref;
    case TN_DTYPE_INT16: return i16_linspace__ref;
    case TN_DTYPE_INT32: return i32_linspace__ref;
    case TN_DTYPE_INT64: return i64_linspace__ref;
#if defined(__x86_64__) && defined(__GNUC__)
    case TN_DTYPE_FLOAT32: return tn_cpu_isa() >= TN_ISA_AVX2 ? f32_linspace_fma : f32_linspace__ref;
#else
    case TN_DTYPE_FLOAT32: return f32_linspace__ref;
#endif
    case TN_DTYPE_FLOAT64: return f64_linspace__ref;
    case TN_DTYPE_FLOAT16: return f16_linspace__ref;
    case TN_DTYPE_BFLOAT16: return bf16_linspace__ref;
    case TN_DTYPE_COMPLEX64: return c64_linspace__ref;
    case TN_DTYPE_COMPLEX128: return c128_linspace__ref;
    default: return NULL;
    }
}

/* ---- logspace ------------------------------------------------------------------------
 * Exponents in double: step = double(end - start computed in the element type) /
 * (steps - 1); element = pow(base, start + step * i) for the first half and pow(base,
 * end - step * (steps - 1 - i)) after, converted to the element type. The caller stores
 * the element-type endpoints in dstart/dend and end - start (in element arithmetic) in
 * dstep. */
static void logspace_any(tn_dtype d, char *out, int64_t b, int64_t e, const tn_seq_params *p) {
    const double st = p->dstep / (double)(p->steps - 1);
    const int64_t half = p->steps / 2;
    const int w = tn_dtype_itemsize(d);
    for (int64_t i = b; i < e; i++) {
        double x = i < half ? p->dstart + st * (double)i : p->dend - st * (double)(p->steps - i - 1);
        tn_cast_store_scalar(out + (int64_t)w * i, d, 'f', 0, pow(p->base, x), 0);
    }
}
#define TN_LOGSPACE(name, D) \
    static void name##_logspace__ref(char *o, int64_t b, int64_t e, const tn_seq_params *p) { logspace_any(D, o, b, e, p); }
TN_LOGSPACE(u8, TN_DTYPE_UINT8)
TN_LOGSPACE(i8, TN_DTYPE_INT8)
TN_LOGSPACE(i16, TN_DTYPE_INT16)
TN_LOGSPACE(i32, TN_DTYPE_INT32)
TN_LOGSPACE(i64, TN_DTYPE_INT64)
TN_LOGSPACE(f16, TN_DTYPE_FLOAT16)
TN_LOGSPACE(bf16, TN_DTYPE_BFLOAT16)
TN_LOGSPACE(f32, TN_DTYPE_FLOAT32)
TN_LOGSPACE(f64, TN_DTYPE_FLOAT64)

/* complex: the step (end - start) / (steps - 1) and each exponent in the element type's
 * complex arithmetic, from the nearer end as above (one step: start); base^x as the
 * element type's complex power of (base + 0i), exp(x log base) */
#define TN_CLOGSPACE(name, R, C, MK, POW)                                                        \
    static void name##_logspace__ref(char *o, int64_t b, int64_t e, const tn_seq_params *p) {   \
        R sr = (R)p->re_start, si = (R)p->im_start, er = (R)p->re_end, ei = (R)p->im_end;         \
        R n1 = (R)(p->steps > 1 ? p->steps - 1 : 1), tr = (er - sr) / n1, ti = (ei - si) / n1;   \
        const int64_t half = p->steps > 1 ? p->steps / 2 : 1;                                    \
        for (int64_t i = b; i < e; i++) {                                                        \
            R k = (R)(i < half ? i : p->steps - i - 1);                                          \
            C x = i < half ? MK(sr + tr * k, si + ti * k) : MK(er - tr * k, ei - ti * k);        \
            C v = POW(MK((R)p->base, 0), x);                                                     \
            memcpy(o + (int64_t)sizeof(C) * i, &v, sizeof v);                                    \
        }                                                                                        \
    }
TN_CLOGSPACE(c64, float, float _Complex, CMPLXF, cpowf)
TN_CLOGSPACE(c128, double, double _Complex, CMPLX, cpow)

tn_seq_fn tn_logspace_kernel(tn_dtype dtype) {
    switch (dtype) {
    case TN_DTYPE_COMPLEX64: return c64_logspace__ref;
    case TN_DTYPE_COMPLEX128: return c128_logspace__ref;
    case TN_DTYPE_UINT8: return u8_logspace__ref;
    case TN_DTYPE_INT8: return i8_logspace__ref;
    case TN_DTYPE_INT16: return i16_logspace__ref;
    case TN_DTYPE_INT32: return i32_logspace__ref;
    case TN_DTYPE_INT64: return i64_logspace__ref;
    case TN_DTYPE_FLOAT16: return f16_logspace__ref;
    case TN_DTYPE_BFLOAT16: return bf16_logspace__ref;
    case TN_DTYPE_FLOAT32: return f32_logspace__ref;
    case TN_DTYPE_FLOAT64: return f64_logspace__ref;
    default: return NULL;
    }
}
