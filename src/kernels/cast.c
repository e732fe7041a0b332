/* cast.c — one conversion loop per (source, destination) computation dtype pair,
 * generated from the dtype lists below, plus single-element helpers. */
#include "kernels/cast.h"

#include <complex.h>
#include <string.h>

#include "kernels/cpu_features.h"
#include "kernels/elementwise.h"
#include "kernels/ew_simd.h"

/* (enum suffix, short name, storage type, native compute type) */
#define TN_CAST_DTYPES(X)                              \
    X(BOOL, b8, uint8_t, bool)                         \
    X(UINT8, u8, uint8_t, uint8_t)                     \
    X(INT8, i8, int8_t, int8_t)                        \
    X(INT16, i16, int16_t, int16_t)                    \
    X(INT32, i32, int32_t, int32_t)                    \
    X(INT64, i64, int64_t, int64_t)                    \
    X(UINT16, u16, uint16_t, uint16_t)                 \
    X(UINT32, u32, uint32_t, uint32_t)                 \
    X(UINT64, u64, uint64_t, uint64_t)                 \
    X(FLOAT16, f16, uint16_t, float)                   \
    X(BFLOAT16, bf16, uint16_t, float)                 \
    X(FLOAT32, f32, float, float)                      \
    X(FLOAT64, f64, double, double)                    \
    X(COMPLEX32, c32, uint32_t, float _Complex)        \
    X(COMPLEX64, c64, float _Complex, float _Complex)  \
    X(COMPLEX128, c128, double _Complex, double _Complex)

/* O3 and no-trapping-math, from here to the loops' end (the helpers too: a function is
 * not inlined into one compiled with other options), let the compiler vectorise the
 * contiguous loops (the range checks of the integer conversions become selects instead of
 * branches); neither changes a result (no fast-math: every conversion is still the exact
 * IEEE / C one). Before: float32 -> complex64 of 1e6 elements 3-6 ms, -> int16 0.9 ms
 * (20x and 12x upstream, bench/opspeed.py). */
#pragma GCC push_options
#pragma GCC optimize("O3", "no-trapping-math")

/* ---- loads: storage -> native ----------------------------------------------------- */
static inline bool ld_b8(const char *p) { return *(const uint8_t *)p != 0; }
#define TN_PLAIN_LD(name, T) static inline T ld_##name(const char *p) { T v; memcpy(&v, p, sizeof v); return v; }
TN_PLAIN_LD(u8, uint8_t) TN_PLAIN_LD(i8, int8_t) TN_PLAIN_LD(i16, int16_t) TN_PLAIN_LD(i32, int32_t)
TN_PLAIN_LD(i64, int64_t) TN_PLAIN_LD(u16, uint16_t) TN_PLAIN_LD(u32, uint32_t) TN_PLAIN_LD(u64, uint64_t)
TN_PLAIN_LD(f32, float) TN_PLAIN_LD(f64, double) TN_PLAIN_LD(c64, float _Complex) TN_PLAIN_LD(c128, double _Complex)
static inline float ld_f16(const char *p) { uint16_t h; memcpy(&h, p, 2); return tn_half_to_f32(h); }
static inline float ld_bf16(const char *p) { uint16_t h; memcpy(&h, p, 2); return tn_bf16_to_f32(h); }
/* ComplexHalf: two binary16 parts, computed as float complex */
static inline float _Complex ld_c32(const char *p) {
    uint16_t h[2];
    memcpy(h, p, 4);
    return CMPLXF(tn_half_to_f32(h[0]), tn_half_to_f32(h[1]));
}

/* ---- stores: native -> storage ---------------------------------------------------- */
static inline void st_b8(char *p, bool v) { *(uint8_t *)p = v ? 1 : 0; }
#define TN_PLAIN_ST(name, T) static inline void st_##name(char *p, T v) { memcpy(p, &v, sizeof v); }
TN_PLAIN_ST(u8, uint8_t) TN_PLAIN_ST(i8, int8_t) TN_PLAIN_ST(i16, int16_t) TN_PLAIN_ST(i32, int32_t)
TN_PLAIN_ST(i64, int64_t) TN_PLAIN_ST(u16, uint16_t) TN_PLAIN_ST(u32, uint32_t) TN_PLAIN_ST(u64, uint64_t)
TN_PLAIN_ST(f32, float) TN_PLAIN_ST(f64, double)
/* complex parts stored one by one: the whole value through memcpy built it on the stack
 * and reloaded it as one 8-byte word, a store-forwarding stall per element (float32 ->
 * complex64 of 1e6 elements: 3 ms, 20x upstream) */
static inline void st_c64(char *p, float _Complex v) {
    float re = crealf(v), im = cimagf(v);
    memcpy(p, &re, 4);
    memcpy(p + 4, &im, 4);
}
static inline void st_c128(char *p, double _Complex v) {
    double re = creal(v), im = cimag(v);
    memcpy(p, &re, 8);
    memcpy(p + 8, &im, 8);
}
static inline void st_f16(char *p, float v) { uint16_t h = tn_f32_to_half(v); memcpy(p, &h, 2); }
static inline void st_bf16(char *p, float v) { uint16_t h = tn_f32_to_bf16(v); memcpy(p, &h, 2); }
static inline void st_c32(char *p, float _Complex v) {
    uint16_t h[2] = {tn_f32_to_half(crealf(v)), tn_f32_to_half(cimagf(v))};
    memcpy(p, h, 4);
}

/* ---- float -> integer as upstream's x86 build behaves ------------------------------
 * cvttsd2si returns the "integer indefinite" value (INT_MIN) for NaN and out-of-range
 * input; narrow integer types are produced from the 32-bit conversion, uint32 from the
 * 64-bit one (upstream's scalar path), uint64 by the compiler's unsigned sequence. */
static inline int32_t cvt_i32(double x) { return (x >= -2147483648.0 && x < 2147483648.0) ? (int32_t)x : INT32_MIN; }
static inline int64_t cvt_i64(double x) {
    return (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (int64_t)x : INT64_MIN;
}
static inline uint64_t cvt_u64(double x) {
    if (x >= 9223372036854775808.0) return (uint64_t)cvt_i64(x - 9223372036854775808.0) ^ (UINT64_C(1) << 63);
    return (uint64_t)cvt_i64(x);
}
/* From float, the same conversions with the range checked in float (both bounds are
 * exact floats, so the results are those of the double forms); the float -> int32 form
 * vectorises as cvttps2dq and a select (before, through double: float32 -> int16 of 1e6
 * elements 3.2x upstream's time). */
static inline int32_t cvt_i32f(float x) { return (x >= -2147483648.0f && x < 2147483648.0f) ? (int32_t)x : INT32_MIN; }
static inline int64_t cvt_i64f(float x) {
    return (x >= -9223372036854775808.0f && x < 9223372036854775808.0f) ? (int64_t)x : INT64_MIN;
}
static inline uint64_t cvt_u64f(float x) { return cvt_u64((double)x); }
static inline double re_of_cf(float _Complex z) { return crealf(z); }
static inline double re_of_cd(double _Complex z) { return creal(z); }

/* Integer destination T with float conversion CVT. Integer sources convert modulo 2^N. */
#define TN_TO_INT(T, CVT, v)                                          \
    _Generic((v), float: (T)CVT##f(v), double: (T)CVT((double)(v)), \
             float _Complex: (T)CVT(re_of_cf(v)), double _Complex: (T)CVT(re_of_cd(v)), default: (T)(v))

#define cv_b8(v) _Generic((v), float _Complex: (v) != 0, double _Complex: (v) != 0, default: (v) != 0)
#define cv_u8(v) TN_TO_INT(uint8_t, cvt_i32, v)
#define cv_i8(v) TN_TO_INT(int8_t, cvt_i32, v)
#define cv_i16(v) TN_TO_INT(int16_t, cvt_i32, v)
#define cv_i32(v) TN_TO_INT(int32_t, cvt_i32, v)
#define cv_u16(v) TN_TO_INT(uint16_t, cvt_i32, v)
#define cv_i64(v) TN_TO_INT(int64_t, cvt_i64, v)
#define cv_u32(v) TN_TO_INT(uint32_t, cvt_i64, v)
#define cv_u64(v) TN_TO_INT(uint64_t, cvt_u64, v)
/* Real floating destinations take the real part of complex sources; half/bfloat16 go
 * through float (c10 constructs them from float, so double rounds twice, as upstream). */
#define TN_TO_REAL(T, v) _Generic((v), float _Complex: (T)re_of_cf(v), double _Complex: (T)re_of_cd(v), default: (T)(v))
#define cv_f16(v) TN_TO_REAL(float, v)
#define cv_bf16(v) TN_TO_REAL(float, v)
#define cv_f32(v) TN_TO_REAL(float, v)
#define cv_f64(v) TN_TO_REAL(double, v)
#define cv_c32(v) ((float _Complex)(v))
#define cv_c64(v) ((float _Complex)(v))
#define cv_c128(v) ((double _Complex)(v))

/* ---- the loops -------------------------------------------------------------------- */
#define TN_CAST_LOOP(SE, S, SST, SNT, DE, D, DST, DNT)                                            \
    static void cast_##S##_to_##D(char **data, const int64_t *strides, int64_t n, void *ctx) {   \
        (void)ctx;                                                                               \
        char *out = data[0];                                                                     \
        const char *in = data[1];                                                                \
        int64_t so = strides[0], si = strides[1];                                                \
        if (so == (int64_t)sizeof(DST) && si == (int64_t)sizeof(SST)) {                          \
            for (int64_t k = 0; k < n; k++)                                                      \
                st_##D(out + k * (int64_t)sizeof(DST), cv_##D(ld_##S(in + k * (int64_t)sizeof(SST)))); \
        } else {                                                                                 \
            for (int64_t k = 0; k < n; k++) st_##D(out + k * so, cv_##D(ld_##S(in + k * si)));  \
        }                                                                                        \
    }

#define TN_CAST_OUTER(SE, S, SST, SNT)                                              \
    TN_CAST_LOOP(SE, S, SST, SNT, BOOL, b8, uint8_t, bool)                          \
    TN_CAST_LOOP(SE, S, SST, SNT, UINT8, u8, uint8_t, uint8_t)                      \
    TN_CAST_LOOP(SE, S, SST, SNT, INT8, i8, int8_t, int8_t)                         \
    TN_CAST_LOOP(SE, S, SST, SNT, INT16, i16, int16_t, int16_t)                     \
    TN_CAST_LOOP(SE, S, SST, SNT, INT32, i32, int32_t, int32_t)                     \
    TN_CAST_LOOP(SE, S, SST, SNT, INT64, i64, int64_t, int64_t)                     \
    TN_CAST_LOOP(SE, S, SST, SNT, UINT16, u16, uint16_t, uint16_t)                  \
    TN_CAST_LOOP(SE, S, SST, SNT, UINT32, u32, uint32_t, uint32_t)                  \
    TN_CAST_LOOP(SE, S, SST, SNT, UINT64, u64, uint64_t, uint64_t)                  \
    TN_CAST_LOOP(SE, S, SST, SNT, FLOAT16, f16, uint16_t, float)                    \
    TN_CAST_LOOP(SE, S, SST, SNT, BFLOAT16, bf16, uint16_t, float)                  \
    TN_CAST_LOOP(SE, S, SST, SNT, FLOAT32, f32, float, float)                       \
    TN_CAST_LOOP(SE, S, SST, SNT, FLOAT64, f64, double, double)                     \
    TN_CAST_LOOP(SE, S, SST, SNT, COMPLEX32, c32, uint32_t, float _Complex)         \
    TN_CAST_LOOP(SE, S, SST, SNT, COMPLEX64, c64, float _Complex, float _Complex)   \
    TN_CAST_LOOP(SE, S, SST, SNT, COMPLEX128, c128, double _Complex, double _Complex)
TN_CAST_DTYPES(TN_CAST_OUTER)
#pragma GCC pop_options

/* Same-dtype copies move bytes, so NaN payloads and -0.0 survive exactly. A broadcast source
 * into a dense run is a fill of its one value. The rows form runs the 1-D loop over `rows`
 * runs in one call: short runs of a broadcast copy (repeat_interleave's expanded view, runs of
 * 10) paid a call and its setup per run, 3x upstream's time. */
#define TN_COPY_LOOP(E, S, ST, NT)                                                              \
    static inline __attribute__((always_inline)) void copy_run_##S(char *o, const char *i, int64_t so, int64_t si, \
                                                                   int64_t n) {                 \
        if (so == (int64_t)sizeof(ST) && si == (int64_t)sizeof(ST)) {                           \
            memmove(o, i, (size_t)n * sizeof(ST));                                              \
        } else if (so == (int64_t)sizeof(ST) && si == 0) {                                      \
            ST v;                                                                               \
            memcpy(&v, i, sizeof(ST));                                                          \
            for (int64_t k = 0; k < n; k++) memcpy(o + k * (int64_t)sizeof(ST), &v, sizeof(ST)); \
        } else {                                                                                \
            for (int64_t k = 0; k < n; k++) memcpy(o + k * so, i + k * si, sizeof(ST));         \
        }                                                                                       \
    }                                                                                           \
    static void copy_##S(char **data, const int64_t *strides, int64_t n, void *ctx) {           \
        (void)ctx;                                                                              \
        copy_run_##S(data[0], data[1], strides[0], strides[1], n);                              \
    }                                                                                           \
    static void copy_rows_##S(char **data, const int64_t *strides, int64_t n, int64_t rows,     \
                              const int64_t *outer, void *ctx) {                                \
        (void)ctx;                                                                              \
        for (int64_t r = 0; r < rows; r++)                                                      \
            copy_run_##S(data[0] + r * outer[0], data[1] + r * outer[1], strides[0], strides[1], n); \
    }
TN_CAST_DTYPES(TN_COPY_LOOP)

void tn_cast_register_rows(void) {
#define TN_COPY_ROWS(E, S, ST, NT) tn_ew_register_rows(copy_##S, copy_rows_##S);
    TN_CAST_DTYPES(TN_COPY_ROWS)
#undef TN_COPY_ROWS
}

/* The diagonal is written twice on purpose: byte copies replace same-type conversion. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
static const tn_loop_fn cast_table[TN_DTYPE_COUNT][TN_DTYPE_COUNT] = {
#define TN_ROW(SE, S, SST, SNT)                                                                  \
    [TN_DTYPE_##SE] = {                                                                          \
        [TN_DTYPE_BOOL] = cast_##S##_to_b8, [TN_DTYPE_UINT8] = cast_##S##_to_u8,                 \
        [TN_DTYPE_INT8] = cast_##S##_to_i8, [TN_DTYPE_INT16] = cast_##S##_to_i16,                \
        [TN_DTYPE_INT32] = cast_##S##_to_i32, [TN_DTYPE_INT64] = cast_##S##_to_i64,              \
        [TN_DTYPE_UINT16] = cast_##S##_to_u16, [TN_DTYPE_UINT32] = cast_##S##_to_u32,            \
        [TN_DTYPE_UINT64] = cast_##S##_to_u64, [TN_DTYPE_FLOAT16] = cast_##S##_to_f16,           \
        [TN_DTYPE_BFLOAT16] = cast_##S##_to_bf16, [TN_DTYPE_FLOAT32] = cast_##S##_to_f32,        \
        [TN_DTYPE_FLOAT64] = cast_##S##_to_f64, [TN_DTYPE_COMPLEX64] = cast_##S##_to_c64,        \
        [TN_DTYPE_COMPLEX128] = cast_##S##_to_c128, [TN_DTYPE_COMPLEX32] = cast_##S##_to_c32,    \
        [TN_DTYPE_##SE] = copy_##S,                                                              \
    },
    TN_CAST_DTYPES(TN_ROW)
#undef TN_ROW
};
#pragma GCC diagnostic pop

tn_loop_fn tn_cast_loop_scalar(tn_dtype from, tn_dtype to) {
    if ((unsigned)from >= TN_DTYPE_COUNT || (unsigned)to >= TN_DTYPE_COUNT) return NULL;
    return cast_table[from][to];
}

tn_loop_fn tn_cast_loop(tn_dtype from, tn_dtype to) {
    if ((unsigned)from >= TN_DTYPE_COUNT || (unsigned)to >= TN_DTYPE_COUNT) return NULL;
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX2) {
        tn_loop_fn v = isa >= TN_ISA_AVX512 ? tn_cast_vec_avx512(from, to) : tn_cast_vec_avx2(from, to);
        if (v) return v;
    }
    return cast_table[from][to];
}

bool tn_cast_supported(tn_dtype d) { return (unsigned)d < TN_DTYPE_COUNT && cast_table[d][d] != NULL; }

static void cast_one(void *dst, tn_dtype dd, const void *src, tn_dtype sd) {
    char *data[2] = {(char *)dst, (char *)src};
    int64_t strides[2] = {0, 0};
    cast_table[sd][dd](data, strides, 1, NULL);
}

double tn_cast_load_double(const void *p, tn_dtype d) {
    double v;
    cast_one(&v, TN_DTYPE_FLOAT64, p, d);
    return v;
}

int64_t tn_cast_load_int64(const void *p, tn_dtype d) {
    int64_t v;
    cast_one(&v, TN_DTYPE_INT64, p, d);
    return v;
}

void tn_cast_load_complex(const void *p, tn_dtype d, double *re, double *im) {
    double _Complex v;
    cast_one(&v, TN_DTYPE_COMPLEX128, p, d);
    *re = creal(v);
    *im = cimag(v);
}

void tn_cast_store_scalar(void *p, tn_dtype d, char kind, int64_t i, double re, double im) {
    switch (kind) {
    case 'i': cast_one(p, d, &i, TN_DTYPE_INT64); break;
    case 'u': { uint64_t u = (uint64_t)i; cast_one(p, d, &u, TN_DTYPE_UINT64); break; }
    case 'b': { uint8_t b = i != 0; cast_one(p, d, &b, TN_DTYPE_BOOL); break; }
    case 'f': cast_one(p, d, &re, TN_DTYPE_FLOAT64); break;
    default: { double _Complex z = CMPLX(re, im); cast_one(p, d, &z, TN_DTYPE_COMPLEX128); break; }
    }
}
