/* elementwise_access.h — private to the elementwise kernel files: per-dtype load/store
 * between storage and the native compute type (Half/BFloat16 compute in float, the
 * opmath rule), the dtype lists the kernel generators iterate, and the loop generators.
 * Plain C11. */
#ifndef TN_KERNELS_ELEMENTWISE_ACCESS_H
#define TN_KERNELS_ELEMENTWISE_ACCESS_H

#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/complex_math.h"
#include "kernels/elementwise.h"

static inline bool ld_b8(const char *p) { return *(const uint8_t *)p != 0; }
static inline void st_b8(char *p, bool v) { *(uint8_t *)p = v ? 1 : 0; }
#define TN_EW_PLAIN(name, T)                                                         \
    static inline T ld_##name(const char *p) { T v; memcpy(&v, p, sizeof v); return v; } \
    static inline void st_##name(char *p, T v) { memcpy(p, &v, sizeof v); }
TN_EW_PLAIN(u8, uint8_t) TN_EW_PLAIN(i8, int8_t) TN_EW_PLAIN(i16, int16_t) TN_EW_PLAIN(i32, int32_t)
TN_EW_PLAIN(i64, int64_t) TN_EW_PLAIN(u16, uint16_t) TN_EW_PLAIN(u32, uint32_t) TN_EW_PLAIN(u64, uint64_t)
TN_EW_PLAIN(f32, float) TN_EW_PLAIN(f64, double)
/* Complex values part by part: GCC builds a _Complex in two scalar registers, and a memcpy
 * of the whole value went through the stack as two 4-byte stores read back by one 8-byte
 * load, a failed store-to-load forward on every element (complex64 add ran 10x upstream's
 * time, session 21). */
#define TN_EW_CPLX(name, T, R, MK)                                                   \
    static inline T ld_##name(const char *p) {                                       \
        R re, im;                                                                    \
        memcpy(&re, p, sizeof re);                                                   \
        memcpy(&im, p + sizeof re, sizeof im);                                       \
        return MK(re, im);                                                           \
    }                                                                                \
    static inline void st_##name(char *p, T v) {                                     \
        R re = creal(v), im = cimag(v);                                              \
        memcpy(p, &re, sizeof re);                                                   \
        memcpy(p + sizeof re, &im, sizeof im);                                       \
    }
TN_EW_CPLX(c64, float _Complex, float, CMPLXF) TN_EW_CPLX(c128, double _Complex, double, CMPLX)
static inline float ld_f16(const char *p) { uint16_t h; memcpy(&h, p, 2); return tn_half_to_f32(h); }
static inline void st_f16(char *p, float v) { uint16_t h = tn_f32_to_half(v); memcpy(p, &h, 2); }
static inline float ld_bf16(const char *p) { uint16_t h; memcpy(&h, p, 2); return tn_bf16_to_f32(h); }
static inline void st_bf16(char *p, float v) { uint16_t h = tn_f32_to_bf16(v); memcpy(p, &h, 2); }

/* complex arithmetic as c10::complex does it (TN_CMUL / TN_CDIV): kernels/complex_math.h */

/* Dtype lists: X(suffix, TN_DTYPE enum suffix, storage type, compute type, ...). */
#define TN_EW_FLOATS(X, ...)                          \
    X(f32, FLOAT32, float, float, __VA_ARGS__)        \
    X(f64, FLOAT64, double, double, __VA_ARGS__)      \
    X(f16, FLOAT16, uint16_t, float, __VA_ARGS__)     \
    X(bf16, BFLOAT16, uint16_t, float, __VA_ARGS__)
#define TN_EW_COMPLEX(X, ...)                                      \
    X(c64, COMPLEX64, float _Complex, float _Complex, __VA_ARGS__) \
    X(c128, COMPLEX128, double _Complex, double _Complex, __VA_ARGS__)
#define TN_EW_SINTS(X, ...)                         \
    X(i8, INT8, int8_t, int8_t, __VA_ARGS__)        \
    X(i16, INT16, int16_t, int16_t, __VA_ARGS__)    \
    X(i32, INT32, int32_t, int32_t, __VA_ARGS__)    \
    X(i64, INT64, int64_t, int64_t, __VA_ARGS__)
/* uint8 plus the signed types: upstream's AT_INTEGRAL_TYPES. */
#define TN_EW_INTS(X, ...) X(u8, UINT8, uint8_t, uint8_t, __VA_ARGS__) TN_EW_SINTS(X, __VA_ARGS__)
/* uint16/32/64: only some ops accept them upstream. */
#define TN_EW_UINTS_EXT(X, ...)                       \
    X(u16, UINT16, uint16_t, uint16_t, __VA_ARGS__)   \
    X(u32, UINT32, uint32_t, uint32_t, __VA_ARGS__)   \
    X(u64, UINT64, uint64_t, uint64_t, __VA_ARGS__)
#define TN_EW_BOOL(X, ...) X(b8, BOOL, uint8_t, bool, __VA_ARGS__)

/* ---- loop generators --------------------------------------------------------------
 * EXPR sees `x` (and `y`, `z`) in the compute type T, `ctx` (tn_loop_ctx *). The first
 * branch is the contiguous fast path the compiler can vectorise. */
#define TN_EW_LOOP1(fn, AST, ANT, LDA, OST, STO, ...) TN_EW_LOOP1_ATTR(, fn, AST, ANT, LDA, OST, STO, __VA_ARGS__)
#define TN_EW_LOOP1_ATTR(ATTR, fn, AST, ANT, LDA, OST, STO, ...)                              \
    ATTR static void fn(char **data, const int64_t *strides, int64_t n, void *vctx) {         \
        tn_loop_ctx *ctx = (tn_loop_ctx *)vctx; (void)ctx;                                     \
        typedef ANT T;                                                                         \
        char *po = data[0]; const char *pa = data[1];                                          \
        const int64_t so = strides[0], sa = strides[1];                                        \
        if (so == (int64_t)sizeof(OST) && sa == (int64_t)sizeof(AST)) {                        \
            for (int64_t k = 0; k < n; k++) {                                                  \
                T x = LDA(pa + k * (int64_t)sizeof(AST)); (void)x;                             \
                STO(po + k * (int64_t)sizeof(OST), (__VA_ARGS__));                             \
            }                                                                                  \
        } else {                                                                               \
            for (int64_t k = 0; k < n; k++) {                                                  \
                T x = LDA(pa + k * sa); (void)x;                                               \
                STO(po + k * so, (__VA_ARGS__));                                               \
            }                                                                                  \
        }                                                                                      \
    }

/* ATTR: attributes of the loop function (a target clone list), or nothing */
#define TN_EW_LOOP2(fn, AST, ANT, LDA, OST, STO, ...) TN_EW_LOOP2_ATTR(, fn, AST, ANT, LDA, OST, STO, __VA_ARGS__)
#define TN_EW_LOOP2_ATTR(ATTR, fn, AST, ANT, LDA, OST, STO, ...)                              \
    ATTR static void fn(char **data, const int64_t *strides, int64_t n, void *vctx) {         \
        tn_loop_ctx *ctx = (tn_loop_ctx *)vctx; (void)ctx;                                     \
        typedef ANT T;                                                                         \
        char *po = data[0]; const char *pa = data[1], *pb = data[2];                           \
        const int64_t so = strides[0], sa = strides[1], sb = strides[2];                       \
        const int64_t W = (int64_t)sizeof(AST);                                                \
        if (so == (int64_t)sizeof(OST) && sa == W && sb == W) {                                \
            for (int64_t k = 0; k < n; k++) {                                                  \
                T x = LDA(pa + k * W), y = LDA(pb + k * W);                                     \
                STO(po + k * (int64_t)sizeof(OST), (__VA_ARGS__));                             \
            }                                                                                  \
        } else if (so == (int64_t)sizeof(OST) && sa == W && sb == 0) {                         \
            const T y = LDA(pb);                                                               \
            for (int64_t k = 0; k < n; k++) {                                                  \
                T x = LDA(pa + k * W);                                                         \
                STO(po + k * (int64_t)sizeof(OST), (__VA_ARGS__));                             \
            }                                                                                  \
        } else {                                                                               \
            for (int64_t k = 0; k < n; k++) {                                                  \
                T x = LDA(pa + k * sa), y = LDA(pb + k * sb);                                   \
                STO(po + k * so, (__VA_ARGS__));                                               \
            }                                                                                  \
        }                                                                                      \
    }

#define TN_EW_LOOP3(fn, AST, ANT, LDA, OST, STO, ...)                                         \
    static void fn(char **data, const int64_t *strides, int64_t n, void *vctx) {              \
        tn_loop_ctx *ctx = (tn_loop_ctx *)vctx; (void)ctx;                                     \
        typedef ANT T;                                                                         \
        const int64_t W = (int64_t)sizeof(AST);                                                \
        if (strides[0] == (int64_t)sizeof(OST) && strides[1] == W && strides[2] == W &&        \
            strides[3] == W) {                                                                 \
            char *po = data[0];                                                                \
            const char *pa = data[1], *pb = data[2], *pc = data[3];                            \
            for (int64_t k = 0; k < n; k++) {                                                  \
                T x = LDA(pa + k * W), y = LDA(pb + k * W), z = LDA(pc + k * W);               \
                STO(po + k * (int64_t)sizeof(OST), (__VA_ARGS__));                             \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        for (int64_t k = 0; k < n; k++) {                                                      \
            T x = LDA(data[1] + k * strides[1]), y = LDA(data[2] + k * strides[2]),            \
              z = LDA(data[3] + k * strides[3]);                                               \
            STO(data[0] + k * strides[0], (__VA_ARGS__));                                      \
        }                                                                                      \
    }

/* Instantiators for the dtype lists: same-type result, or Bool result. */
#define TN_EW_U_SAME(sfx, E, ST, NT, op, ...) TN_EW_LOOP1(sfx##_##op##__scalar, ST, NT, ld_##sfx, ST, st_##sfx, __VA_ARGS__)
#define TN_EW_U_BOOL(sfx, E, ST, NT, op, ...) TN_EW_LOOP1(sfx##_##op##__scalar, ST, NT, ld_##sfx, uint8_t, st_b8, __VA_ARGS__)
#define TN_EW_B_SAME(sfx, E, ST, NT, op, ...) TN_EW_LOOP2(sfx##_##op##__scalar, ST, NT, ld_##sfx, ST, st_##sfx, __VA_ARGS__)
/* Rows whose intermediate results round to the storage type, as upstream's arithmetic in
 * c10::Half / BFloat16 does (its math functions of a reduced type return that type):
 * EXPR is a function-like macro of R, the row's rounding TN_EW_RND_<sfx> (the identity for
 * float and double, whose arithmetic rounds by itself). */
#define TN_EW_RND_f32(v) (v)
#define TN_EW_RND_f64(v) (v)
#define TN_EW_RND_f16(v) tn_round_half_f32(v)
#define TN_EW_RND_bf16(v) tn_round_bf16_f32(v)
#define TN_EW_B_SAME_RND(sfx, E, ST, NT, op, EXPR) TN_EW_B_SAME(sfx, E, ST, NT, op, EXPR(TN_EW_RND_##sfx))
#define TN_EW_B_BOOL(sfx, E, ST, NT, op, ...) TN_EW_LOOP2(sfx##_##op##__scalar, ST, NT, ld_##sfx, uint8_t, st_b8, __VA_ARGS__)
#define TN_EW_T_SAME(sfx, E, ST, NT, op, ...) TN_EW_LOOP3(sfx##_##op##__scalar, ST, NT, ld_##sfx, ST, st_##sfx, __VA_ARGS__)
#define TN_EW_REG(sfx, E, ST, NT, op, ...) t[TN_EW_##op][TN_DTYPE_##E] = sfx##_##op##__scalar;

#endif
