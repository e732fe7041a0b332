/* nn_grid_sample.c — float, double and bfloat16/float16-rounding instances of grid sampling
 * (nn_grid_sample.h): the coordinate arithmetic (unnormalise, clip, reflect) and the weights
 * in the element type, as upstream's kernels compute them. */
#include <math.h>
#include <stddef.h>

#include "core/dtype.h"
#include "kernels/nn_grid_sample.h"

/* R rounds every intermediate: the identity for float and double; for bfloat16 the kernel
 * (float16) computes in float and rounds each operation to bfloat16 (float16), as upstream's
 * kernels do in their scalar_t arithmetic (checked against upstream element by element). */
#define GRID_SAMPLE(T, SFX, R)                                                                                       \
    static T SFX##_unnormalize(T c, int64_t size, bool align) {                                                     \
        return align ? R(R(R(c + 1) / 2) * R((T)(size - 1))) : R(R(R(R(c + 1) * R((T)size)) - 1) / 2);              \
    }                                                                                                                \
    static T SFX##_clip(T c, int64_t size) {                                                                         \
        T hi = R((T)(size - 1));                                                                                     \
        return c < 0 ? (T)0 : c > hi ? hi : c;                                                                       \
    }                                                                                                                \
    static T SFX##_reflect(T c, int64_t twice_low, int64_t twice_high) {                                             \
        if (twice_low == twice_high) return (T)0;                                                                    \
        T mn = R(R((T)twice_low) / 2), span = R(R((T)(twice_high - twice_low)) / 2);                                 \
        c = R((T)fabs((double)R(c - mn)));                                                                           \
        T extra = R((T)fmod((double)c, (double)span));                                                               \
        int flips = (int)floor((double)R(c / span));                                                                 \
        return flips % 2 == 0 ? R(extra + mn) : R(R(span - extra) + mn);                                             \
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
    static T SFX##_cubic1(T x, T A) { return R(R(R(R(R(R(A + 2) * x) - R(A + 3)) * x) * x) + 1); }                   \
    static T SFX##_cubic2(T x, T A) { return R(R(R(R(R(R(A * x) - R(5 * A)) * x) + R(8 * A)) * x) - R(4 * A)); }     \
    /* upstream's coefficients: t + 1, t, 1 - t and (1 - t) + 1 */                                                   \
    static void SFX##_cubic_coef(T t, T c[4]) {                                                                      \
        const T A = (T)-0.75;                                                                                        \
        T x2 = R(1 - t);                                                                                             \
        c[0] = SFX##_cubic2(R(t + 1), A);                                                                            \
        c[1] = SFX##_cubic1(t, A);                                                                                   \
        c[2] = SFX##_cubic1(x2, A);                                                                                  \
        c[3] = SFX##_cubic2(R(x2 + 1), A);                                                                           \
    }                                                                                                                \
    static T SFX##_cubic_interp(T x0, T x1, T x2, T x3, T t) {                                                       \
        T c[4];                                                                                                      \
        SFX##_cubic_coef(t, c);                                                                                      \
        return R(R(R(R(x0 * c[0]) + R(x1 * c[1])) + R(x2 * c[2])) + R(x3 * c[3]));                                   \
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
                        T tx = R(ix - fx), ty = R(iy - fy);                                                          \
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
                    T wx1 = R(ix - R((T)x0)), wx0 = R(R((T)(x0 + 1)) - ix), wy1 = R(iy - R((T)y0)),                  \
                      wy0 = R(R((T)(y0 + 1)) - iy);                                                                  \
                    T out = 0;                                                                                       \
                    if (g->nsp == 2) {                                                                               \
                        T nw = R(wx0 * wy0), ne = R(wx1 * wy0), sw = R(wx0 * wy1), se = R(wx1 * wy1);                \
                        out = R(out + R(SFX##_at(xc, g, 0, y0, x0) * nw));                                           \
                        out = R(out + R(SFX##_at(xc, g, 0, y0, x0 + 1) * ne));                                       \
                        out = R(out + R(SFX##_at(xc, g, 0, y0 + 1, x0) * sw));                                       \
                        out = R(out + R(SFX##_at(xc, g, 0, y0 + 1, x0 + 1) * se));                                   \
                    } else {                                                                                         \
                        T wz1 = R(iz - R((T)z0)), wz0 = R(R((T)(z0 + 1)) - iz);                                      \
                        /* upstream's order: tnw tne tsw tse bnw bne bsw bse */                                      \
                        for (int a = 0; a < 2; a++)                                                                  \
                            for (int b = 0; b < 2; b++)                                                              \
                                for (int e = 0; e < 2; e++) {                                                        \
                                    T w = R(R((e ? wx1 : wx0) * (b ? wy1 : wy0)) * (a ? wz1 : wz0));                 \
                                    out = R(out + R(SFX##_at(xc, g, z0 + a, y0 + b, x0 + e) * w));                   \
                                }                                                                                    \
                    }                                                                                                \
                    *dst = out;                                                                                      \
                }                                                                                                    \
            }                                                                                                        \
    }

/* The backward: padding functions that also give d(coordinate)/d(input coordinate). */
#define GRID_SAMPLE_BACKWARD(T, SFX)                                                                                 \
    static T SFX##_clip_g(T c, int64_t size, T *g) {                                                                 \
        if (c <= 0) { *g = 0; return 0; }                                                                            \
        T hi = (T)(size - 1);                                                                                        \
        if (c >= hi) { *g = 0; return hi; }                                                                          \
        *g = 1;                                                                                                      \
        return c;                                                                                                    \
    }                                                                                                                \
    static T SFX##_reflect_g(T c, int64_t twice_low, int64_t twice_high, T *g) {                                     \
        if (twice_low == twice_high) { *g = 0; return 0; }                                                           \
        T mn = (T)twice_low / 2, span = (T)(twice_high - twice_low) / 2, m = 1;                                      \
        c = c - mn;                                                                                                  \
        if (c < 0) { m = -1; c = -c; }                                                                               \
        T extra = (T)fmod((double)c, (double)span);                                                                  \
        int flips = (int)floor((double)(c / span));                                                                  \
        if (flips % 2 == 0) { *g = m; return extra + mn; }                                                           \
        *g = -m;                                                                                                     \
        return span - extra + mn;                                                                                    \
    }                                                                                                                \
    /* the source coordinate of normalised c and its derivative (*g) */                                              \
    static T SFX##_source_g(T c, int64_t size, const tn_grid_geom *gm, T *g) {                                       \
        T gc, gr;                                                                                                    \
        if (gm->align_corners) { *g = (T)(size - 1) / 2; c = ((c + 1) / 2) * (T)(size - 1); }                        \
        else { *g = (T)size / 2; c = ((c + 1) * (T)size - 1) / 2; }                                                  \
        if (gm->interp == TN_GRID_BICUBIC) return c;                                                                 \
        if (gm->padding == TN_GRID_BORDER) {                                                                         \
            c = SFX##_clip_g(c, size, &gc);                                                                          \
            *g = *g * gc;                                                                                            \
        } else if (gm->padding == TN_GRID_REFLECTION) {                                                              \
            c = gm->align_corners ? SFX##_reflect_g(c, 0, 2 * (size - 1), &gr) : SFX##_reflect_g(c, -1, 2 * size - 1, &gr); \
            c = SFX##_clip_g(c, size, &gc);                                                                          \
            *g = (*g * gr) * gc;                                                                                     \
        }                                                                                                            \
        return c;                                                                                                    \
    }                                                                                                                \
    static void SFX##_add(T *gc, const tn_grid_geom *g, int64_t z, int64_t y, int64_t x, T v) {                      \
        if (z < 0 || z >= g->in[0] || y < 0 || y >= g->in[1] || x < 0 || x >= g->in[2]) return;                     \
        gc[(z * g->in[1] + y) * g->in[2] + x] += v;                                                                  \
    }                                                                                                                \
    static void SFX##_cubic_grad(T t, T c[4]) {                                                                      \
        const T A = (T)-0.75;                                                                                        \
        T x = -1 - t;                                                                                                \
        c[0] = (-3 * A * x - 10 * A) * x - 8 * A;                                                                    \
        x = -t;                                                                                                      \
        c[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;                                                                 \
        x = 1 - t;                                                                                                   \
        c[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;                                                                  \
        x = 2 - t;                                                                                                   \
        c[3] = (3 * A * x - 10 * A) * x + 8 * A;                                                                     \
    }                                                                                                                \
    /* a bicubic tap's padded position, for reading and for adding */                                               \
    static void SFX##_tap_pos(const tn_grid_geom *g, int64_t y, int64_t x, int64_t *py, int64_t *px) {              \
        *px = (int64_t)SFX##_pad((T)x, g->in[2], g->padding, g->align_corners);                                      \
        *py = (int64_t)SFX##_pad((T)y, g->in[1], g->padding, g->align_corners);                                      \
    }                                                                                                                \
    void SFX##_grid_sample_backward__scalar(T *gx, T *ggrid, const T *gy, const T *x, const T *grid,                 \
                                            const tn_grid_geom *g, int64_t n0, int64_t n1) {                         \
        int64_t iv = g->in[0] * g->in[1] * g->in[2], ov = g->out[0] * g->out[1] * g->out[2];                         \
        for (int64_t n = n0; n < n1; n++)                                                                            \
            for (int64_t o = 0; o < ov; o++) {                                                                       \
                const T *pt = grid + (n * ov + o) * g->nsp;                                                          \
                T *gpt = ggrid + (n * ov + o) * g->nsp;                                                              \
                T mx, my, mz = 0;                                                                                    \
                T ix = SFX##_source_g(pt[0], g->in[2], g, &mx), iy = SFX##_source_g(pt[1], g->in[1], g, &my);        \
                T iz = g->nsp == 3 ? SFX##_source_g(pt[2], g->in[0], g, &mz) : (T)0;                                 \
                T gix = 0, giy = 0, giz = 0;                                                                         \
                for (int64_t c = 0; c < g->C; c++) {                                                                 \
                    const T *xc = x + (n * g->C + c) * iv;                                                           \
                    T *gc = gx ? gx + (n * g->C + c) * iv : NULL;                                                    \
                    T go = gy[(n * g->C + c) * ov + o];                                                              \
                    if (g->interp == TN_GRID_NEAREST) {                                                              \
                        if (gc)                                                                                      \
                            SFX##_add(gc, g, (int64_t)nearbyint((double)iz), (int64_t)nearbyint((double)iy),         \
                                      (int64_t)nearbyint((double)ix), go);                                           \
                        continue;                                                                                    \
                    }                                                                                                \
                    if (g->interp == TN_GRID_BICUBIC) {                                                              \
                        T fx = (T)floor((double)ix), fy = (T)floor((double)iy);                                      \
                        T cx[4], cy[4], dx[4], dy[4];                                                                \
                        SFX##_cubic_coef(ix - fx, cx); SFX##_cubic_coef(iy - fy, cy);                                 \
                        SFX##_cubic_grad(ix - fx, dx); SFX##_cubic_grad(iy - fy, dy);                                 \
                        int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;                                                  \
                        for (int i = 0; i < 4; i++)                                                                  \
                            for (int j = 0; j < 4; j++) {                                                            \
                                int64_t py, px;                                                                      \
                                SFX##_tap_pos(g, y0 - 1 + j, x0 - 1 + i, &py, &px);                                  \
                                if (gc) SFX##_add(gc, g, 0, py, px, go * cx[i] * cy[j]);                             \
                                T v = SFX##_at(xc, g, 0, py, px);                                                    \
                                gix -= v * dx[i] * cy[j] * go;                                                       \
                                giy -= v * dy[j] * cx[i] * go;                                                       \
                            }                                                                                        \
                        continue;                                                                                    \
                    }                                                                                                \
                    int64_t x0 = (int64_t)floor((double)ix), y0 = (int64_t)floor((double)iy),                        \
                            z0 = g->nsp == 3 ? (int64_t)floor((double)iz) : 0;                                       \
                    T wx[2] = {(T)(x0 + 1) - ix, ix - (T)x0}, wy[2] = {(T)(y0 + 1) - iy, iy - (T)y0};                \
                    T wz[2] = {g->nsp == 3 ? (T)(z0 + 1) - iz : (T)1, g->nsp == 3 ? iz - (T)z0 : (T)0};              \
                    for (int a = 0; a < (g->nsp == 3 ? 2 : 1); a++)                                                  \
                        for (int b = 0; b < 2; b++)                                                                  \
                            for (int e = 0; e < 2; e++) {                                                            \
                                int64_t z = z0 + a, y = y0 + b, xx = x0 + e;                                         \
                                if (gc) SFX##_add(gc, g, z, y, xx, wx[e] * wy[b] * wz[a] * go);                      \
                                if (z < 0 || z >= g->in[0] || y < 0 || y >= g->in[1] || xx < 0 || xx >= g->in[2])   \
                                    continue;                                                                        \
                                T v = xc[(z * g->in[1] + y) * g->in[2] + xx] * go;                                   \
                                gix += (e ? v : -v) * wy[b] * wz[a];                                                 \
                                giy += (b ? v : -v) * wx[e] * wz[a];                                                 \
                                giz += (a ? v : -v) * wx[e] * wy[b];                                                 \
                            }                                                                                        \
                }                                                                                                    \
                gpt[0] = mx * gix;                                                                                   \
                gpt[1] = my * giy;                                                                                   \
                if (g->nsp == 3) gpt[2] = mz * giz;                                                                  \
            }                                                                                                        \
    }

static inline float round_f32(float v) { return v; }
static inline double round_f64(double v) { return v; }
GRID_SAMPLE(float, f32, round_f32)
GRID_SAMPLE(double, f64, round_f64)
GRID_SAMPLE(float, bf16, tn_round_bf16_f32)
GRID_SAMPLE(float, f16, tn_round_half_f32)
GRID_SAMPLE_BACKWARD(float, f32)
GRID_SAMPLE_BACKWARD(double, f64)
