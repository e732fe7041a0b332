/* fold.c — col2im per element type (kernels/fold.h): the adds of upstream's col2im<T> loop
 * (BFloat16 and Half round each sum to the type). */
#include "kernels/fold.h"

#include <string.h>

typedef struct { float re, im; } cpx64;
typedef struct { double re, im; } cpx128;

#define ADD_PLAIN(a, b) ((a) + (b))
#define ADD_BF16(a, b) tn_f32_to_bf16(tn_bf16_to_f32(a) + tn_bf16_to_f32(b))
#define ADD_HALF(a, b) tn_f32_to_half(tn_half_to_f32(a) + tn_half_to_f32(b))
#define ADD_C64(a, b) ((cpx64){(a).re + (b).re, (a).im + (b).im})
#define ADD_C128(a, b) ((cpx128){(a).re + (b).re, (a).im + (b).im})

#define FOLD_LOOP(NAME, T, ADD)                                                                   \
    static void NAME(T *im, const T *col, const tn_fold_geom *g, int64_t p0, int64_t p1) {       \
        const int64_t L = g->bh * g->bw, K = g->kh * g->kw;                                       \
        for (int64_t p = p0; p < p1; p++) {                                                       \
            const int64_t n = p / g->C, c = p % g->C;                                             \
            T *plane = im + p * g->H * g->W;                                                      \
            memset(plane, 0, sizeof(T) * (size_t)(g->H * g->W));                                  \
            const T *cc = col + (n * g->C * K + c * K) * L;                                       \
            for (int64_t a = 0; a < g->kh; a++)                                                   \
                for (int64_t b = 0; b < g->kw; b++, cc += L)                                      \
                    for (int64_t i = 0; i < g->bh; i++) {                                         \
                        const int64_t h = i * g->sh - g->ph + a * g->dh;                          \
                        if (h < 0 || h >= g->H) continue;                                         \
                        T *row = plane + h * g->W;                                                \
                        const T *src = cc + i * g->bw;                                            \
                        for (int64_t j = 0; j < g->bw; j++) {                                     \
                            const int64_t w = j * g->sw - g->pw + b * g->dw;                      \
                            if (w >= 0 && w < g->W) row[w] = ADD(row[w], src[j]);                 \
                        }                                                                         \
                    }                                                                             \
        }                                                                                         \
    }
FOLD_LOOP(fold_f32, float, ADD_PLAIN)
FOLD_LOOP(fold_f64, double, ADD_PLAIN)
FOLD_LOOP(fold_bf16, tn_bfloat16, ADD_BF16)
FOLD_LOOP(fold_f16, tn_half, ADD_HALF)
FOLD_LOOP(fold_c64, cpx64, ADD_C64)
FOLD_LOOP(fold_c128, cpx128, ADD_C128)

bool tn_fold_planes(tn_dtype dt, void *im, const void *col, const tn_fold_geom *g, int64_t p0, int64_t p1) {
    switch (dt) {
    case TN_DTYPE_FLOAT32: fold_f32(im, col, g, p0, p1); return true;
    case TN_DTYPE_FLOAT64: fold_f64(im, col, g, p0, p1); return true;
    case TN_DTYPE_BFLOAT16: fold_bf16(im, col, g, p0, p1); return true;
    case TN_DTYPE_FLOAT16: fold_f16(im, col, g, p0, p1); return true;
    case TN_DTYPE_COMPLEX64: fold_c64(im, col, g, p0, p1); return true;
    case TN_DTYPE_COMPLEX128: fold_c128(im, col, g, p0, p1); return true;
    default: return false;
    }
}
