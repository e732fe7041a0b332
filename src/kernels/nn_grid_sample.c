/* nn_grid_sample.c — float and double instances of grid sampling (nn_grid_sample.h): the
 * coordinate arithmetic (unnormalise, clip, reflect) in the element type, as upstream's
 * scalar kernels compute it. */
#include <math.h>

#include "kernels/nn_grid_sample.h"

#define GRID_SAMPLE(T, SFX)                                                                                          \
    static T SFX##_unnormalize(T c, int64_t size, bool align) {                                                     \
        return align ? ((c + 1) / 2) * (T)(size - 1) : ((c + 1) * (T)size - 1) / 2;                                  \
    }                                                                                                                \
    static T SFX##_clip(T c, int64_t size) {                                                                         \
        T hi = (T)(size - 1);                                                                                        \
        return c < 0 ? (T)0 : c > hi ? hi : c;                                                                       \
    }                                                                                                                \
    static T SFX##_reflect(T c, int64_t twice_low, int64_t twice_high) {                                             \
        if (twice_low == twice_high) return (T)0;                                                                    \
        T mn = (T)twice_low / 2, span = (T)(twice_high - twice_low) / 2;                                             \
        c = (T)fabs((double)(c - mn));                                                                               \
        T extra = (T)fmod((double)c, (double)span);                                                                  \
        int flips = (int)floor((double)(c / span));                                                                  \
        return flips % 2 == 0 ? extra + mn : span - extra + mn;                                                      \
    }                                                                                                                \
    /* padding applied to an unnormalised coordinate; a non-finite or huge one becomes -100 */                       \
    static T SFX##_pad(T c, int64_t size, int padding, bool align) {                                                 \
        if (padding == TN_GRID_BORDER) {                                                                             \
            c = SFX##_clip(c, size);                                                                                 \
        } else if (padding == TN_GRID_REFLECTION) {                                                                  \
            c = align ? SFX##_reflect(c, 0, 2 * (size - 1)) : SFX##_reflect(c, -1, 2 * size - 1);                    \
            c = SFX##_clip(c, size);                                                                                 \
        }                                                                                                            \
        if (!isfinite((double)c) || (double)c > 2147483647.0 || (double)c < -2147483648.0) c = (T)-100;              \
        return c;                                                                                                    \
    }                                                                                                                \
    static T SFX##_at(const T *xc, const tn_grid_geom *g, int64_t z, int64_t y, int64_t x) {                         \
        if (z < 0 || z >= g->in[0] || y < 0 || y >= g->in[1] || x < 0 || x >= g->in[2]) return (T)0;                \
        return xc[(z * g->in[1] + y) * g->in[2] + x];                                                                \
    }                                                                                                                \
    static T SFX##_cubic1(T x, T A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }                                  \
    static T SFX##_cubic2(T x, T A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }                            \
    static T SFX##_cubic_interp(T x0, T x1, T x2, T x3, T t) {                                                       \
        const T A = (T)-0.75;                                                                                        \
        T c0 = SFX##_cubic2(t + 1, A), c1 = SFX##_cubic1(t, A), c2 = SFX##_cubic1(1 - t, A),                          \
          c3 = SFX##_cubic2(2 - t, A);                                                                               \
        return x0 * c0 + x1 * c1 + x2 * c2 + x3 * c3;                                                                \
    }                                                                                                                \
    /* a bicubic tap: its coordinates padded, then read with zeros outside */                                        \
    static T SFX##_tap(const T *xc, const tn_grid_geom *g, int64_t y, int64_t x) {                                   \
        T fx = SFX##_pad((T)x, g->in[2], g->padding, g->align_corners);                                              \
        T fy = SFX##_pad((T)y, g->in[1], g->padding, g->align_corners);                                              \
        return SFX##_at(xc, g, 0, (int64_t)fy, (int64_t)fx);                                                         \
    }                                                                                                                \
    void SFX##_grid_sample__scalar(T *y, const T *x, const T *grid, const tn_grid_geom *g, int64_t n0, int64_t n1) { \
        int64_t iv = g->in[0] * g->in[1] * g->in[2], ov = g->out[0] * g->out[1] * g->out[2];                         \
        for (int64_t n = n0; n < n1; n++)                                                                            \
            for (int64_t o = 0; o < ov; o++) {                                                                       \
                const T *pt = grid + (n * ov + o) * g->nsp;                                                          \
                T gx = pt[0], gy = pt[1], gz = g->nsp == 3 ? pt[2] : (T)0;                                           \
                for (int64_t c = 0; c < g->C; c++) {                                                                 \
                    const T *xc = x + (n * g->C + c) * iv;                                                           \
                    T *dst = y + (n * g->C + c) * ov + o;                                                            \
                    if (g->interp == TN_GRID_BICUBIC) {                                                              \
                        T ix = SFX##_unnormalize(gx, g->in[2], g->align_corners);                                    \
                        T iy = SFX##_unnormalize(gy, g->in[1], g->align_corners);                                    \
                        T fx = (T)floor((double)ix), fy = (T)floor((double)iy);                                      \
                        T tx = ix - fx, ty = iy - fy;                                                                \
                        int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;                                                  \
                        T rows[4];                                                                                   \
                        for (int i = 0; i < 4; i++)                                                                  \
                            rows[i] = SFX##_cubic_interp(SFX##_tap(xc, g, y0 - 1 + i, x0 - 1),                        \
                                                         SFX##_tap(xc, g, y0 - 1 + i, x0),                            \
                                                         SFX##_tap(xc, g, y0 - 1 + i, x0 + 1),                        \
                                                         SFX##_tap(xc, g, y0 - 1 + i, x0 + 2), tx);                   \
                        *dst = SFX##_cubic_interp(rows[0], rows[1], rows[2], rows[3], ty);                           \
                        continue;                                                                                    \
                    }                                                                                                \
                    T ix = SFX##_pad(SFX##_unnormalize(gx, g->in[2], g->align_corners), g->in[2], g->padding,        \
                                     g->align_corners);                                                              \
                    T iy = SFX##_pad(SFX##_unnormalize(gy, g->in[1], g->align_corners), g->in[1], g->padding,        \
                                     g->align_corners);                                                              \
                    T iz = g->nsp == 3 ? SFX##_pad(SFX##_unnormalize(gz, g->in[0], g->align_corners), g->in[0],      \
                                                   g->padding, g->align_corners)                                     \
                                       : (T)0;                                                                       \
                    if (g->interp == TN_GRID_NEAREST) {                                                              \
                        *dst = SFX##_at(xc, g, (int64_t)nearbyint((double)iz), (int64_t)nearbyint((double)iy),       \
                                        (int64_t)nearbyint((double)ix));                                             \
                        continue;                                                                                    \
                    }                                                                                                \
                    int64_t x0 = (int64_t)floor((double)ix), y0 = (int64_t)floor((double)iy),                        \
                            z0 = (int64_t)floor((double)iz);                                                         \
                    T wx1 = ix - (T)x0, wx0 = (T)(x0 + 1) - ix, wy1 = iy - (T)y0, wy0 = (T)(y0 + 1) - iy;            \
                    if (g->nsp == 2) {                                                                               \
                        T nw = wx0 * wy0, ne = wx1 * wy0, sw = wx0 * wy1, se = wx1 * wy1;                            \
                        T out = 0;                                                                                   \
                        out += SFX##_at(xc, g, 0, y0, x0) * nw;                                                      \
                        out += SFX##_at(xc, g, 0, y0, x0 + 1) * ne;                                                  \
                        out += SFX##_at(xc, g, 0, y0 + 1, x0) * sw;                                                  \
                        out += SFX##_at(xc, g, 0, y0 + 1, x0 + 1) * se;                                              \
                        *dst = out;                                                                                  \
                    } else {                                                                                         \
                        T wz1 = iz - (T)z0, wz0 = (T)(z0 + 1) - iz;                                                  \
                        T out = 0;                                                                                   \
                        /* upstream's order: tnw tne tsw tse bnw bne bsw bse */                                      \
                        out += SFX##_at(xc, g, z0, y0, x0) * (wx0 * wy0 * wz0);                                      \
                        out += SFX##_at(xc, g, z0, y0, x0 + 1) * (wx1 * wy0 * wz0);                                  \
                        out += SFX##_at(xc, g, z0, y0 + 1, x0) * (wx0 * wy1 * wz0);                                  \
                        out += SFX##_at(xc, g, z0, y0 + 1, x0 + 1) * (wx1 * wy1 * wz0);                              \
                        out += SFX##_at(xc, g, z0 + 1, y0, x0) * (wx0 * wy0 * wz1);                                  \
                        out += SFX##_at(xc, g, z0 + 1, y0, x0 + 1) * (wx1 * wy0 * wz1);                              \
                        out += SFX##_at(xc, g, z0 + 1, y0 + 1, x0) * (wx0 * wy1 * wz1);                              \
                        out += SFX##_at(xc, g, z0 + 1, y0 + 1, x0 + 1) * (wx1 * wy1 * wz1);                          \
                        *dst = out;                                                                                  \
                    }                                                                                                \
                }                                                                                                    \
            }                                                                                                        \
    }

GRID_SAMPLE(float, f32)
GRID_SAMPLE(double, f64)
