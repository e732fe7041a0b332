/* nn_grid_sample.c — float, double and bfloat16/float16-rounding instances of grid sampling
 * (nn_grid_sample.h): the coordinate arithmetic (unnormalise, clip, reflect) and the weights
 * in the element type, as upstream's kernels compute them. Compiled at O3 (the corner and tap
 * loops unrolled; part of session 43's grid_sampler_3d 2.5x -> 0.85-1.06x in bench/opspeed.py,
 * docs/PERFORMANCE.md; no change to any value, as O3 reassociates no floating-point
 * arithmetic). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/nn_grid_sample.h"

enum { GRID_BLOCK = 16 };

/* fmod(a, b) for a >= 0 (or NaN) and b > 0, exactly. For floats with a / b < 2^28 the double
 * quotient truncates to the exact quotient's integer part (a multiple of b exceeds a by at least
 * b 2^-24, more than half an ulp of a quotient below 2^28) and a - q b is exact in double (q b
 * has at most 52 significant bits); else libm's, a loop. */
static inline double grid_fmod_pos(double a, double b, bool floats) {
    if (!floats || !(a / b < 268435456.0)) return fmod(a, b);
    return a - (double)(int64_t)(a / b) * b;
}

/* nearbyint of a padded coordinate (finite, |c| < 2^31: _pad sends anything else to -100): adding and
 * subtracting 1.5 2^52 rounds to an integer, half to even, in the default rounding mode, as nearbyint
 * does, without libm's call (which saves and restores the floating-point environment) */
static inline double grid_rint(double c) {
    const double big = 6755399441055744.0; /* kept: IEEE arithmetic, no reassociation */
    return (c + big) - big;
}

#pragma GCC optimize("O3")

/* R rounds every intermediate: the identity for float and double; for bfloat16 the kernel
 * (float16) computes in float and rounds each operation to bfloat16 (float16), as upstream's
 * kernels do in their scalar_t arithmetic (checked against upstream element by element). */
#define GRID_SAMPLE(T, SFX, R, BITS)                                                                                       \
    static T SFX##_unnormalize(T c, int64_t size, bool align) {                                                     \
        return align ? R(R(R(c + 1) / 2) * R((T)(size - 1))) : R(R(R(R(c + 1) * R((T)size)) - 1) / 2);              \
    }                                                                                                                \
    /* a coordinate that is not finite or lies outside int32 becomes -100 (read as outside) */                      \
    static inline __attribute__((always_inline)) T SFX##_in_int32(T c) {                                           \
        return (double)c >= -2147483648.0 && (double)c <= 2147483647.0 ? c : (T)-100;                                \
    }                                                                                                                \
    static inline T SFX##_clip(T c, int64_t size) {                                                                  \
        T hi = R((T)(size - 1));                                                                                     \
        return c < 0 ? (T)0 : c > hi ? hi : c;                                                                       \
    }                                                                                                                \
    static T SFX##_reflect(T c, int64_t twice_low, int64_t twice_high) {                                             \
        if (twice_low == twice_high) return (T)0;                                                                    \
        T mn = R(R((T)twice_low) / 2), span = R(R((T)(twice_high - twice_low)) / 2);                                 \
        c = R((T)fabs((double)R(c - mn)));                                                                           \
        T extra = R((T)grid_fmod_pos((double)c, (double)span, sizeof(T) == 4));                                      \
        int flips = (int)(double)R(c / span); /* c >= 0 (or NaN): the truncation is the floor */                    \
        return flips % 2 == 0 ? R(extra + mn) : R(R(span - extra) + mn);                                             \
    }                                                                                                                \
    /* padding applied to an unnormalised coordinate; a non-finite or huge one becomes -100 */                       \
    static inline __attribute__((always_inline)) T SFX##_pad(T c, int64_t size, int padding, bool align) {           \
        if (padding == TN_GRID_BORDER) {                                                                             \
            c = SFX##_clip(c, size);                                                                                 \
        } else if (padding == TN_GRID_REFLECTION) {                                                                  \
            c = align ? SFX##_reflect(c, 0, 2 * (size - 1)) : SFX##_reflect(c, -1, 2 * size - 1);                    \
            c = SFX##_clip(c, size);                                                                                 \
        }                                                                                                            \
        return SFX##_in_int32(c);                                                                                    \
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
    /* x0 c[0] + x1 c[1] + x2 c[2] + x3 c[3], summed left to right (the coefficients of one t) */                  \
    static T SFX##_cubic_sum(T x0, T x1, T x2, T x3, const T c[4]) {                                                 \
        return R(R(R(R(x0 * c[0]) + R(x1 * c[1])) + R(x2 * c[2])) + R(x3 * c[3]));                                   \
    }                                                                                                                \
    /* Bicubic and nearest, one grid point (every channel): the coordinates and taps worked out once. */          \
    static void SFX##_point(T *dst, int64_t ov, const T *xn, int64_t iv, const T *pt, const tn_grid_geom *g) {       \
        T gx = pt[0], gy = pt[1], gz = g->nsp == 3 ? pt[2] : (T)0;                                                   \
        if (g->interp == TN_GRID_BICUBIC) {                                                                          \
            T ix = SFX##_unnormalize(gx, g->in[2], g->align_corners);                                                \
            T iy = SFX##_unnormalize(gy, g->in[1], g->align_corners);                                                \
            T fx = (T)floor((double)ix), fy = (T)floor((double)iy);                                                  \
            int64_t x0 = (int64_t)fx, y0 = (int64_t)fy, px[4], py[4];                                                \
            T cx[4], cy[4];                                                                                          \
            SFX##_cubic_coef(R(ix - fx), cx);                                                                        \
            SFX##_cubic_coef(R(iy - fy), cy);                                                                        \
            /* a tap's coordinates padded, then read with zeros outside */                                           \
            for (int i = 0; i < 4; i++) {                                                                            \
                px[i] = (int64_t)SFX##_pad((T)(x0 - 1 + i), g->in[2], g->padding, g->align_corners);                 \
                py[i] = (int64_t)SFX##_pad((T)(y0 - 1 + i), g->in[1], g->padding, g->align_corners);                 \
            }                                                                                                        \
            for (int64_t c = 0; c < g->C; c++, dst += ov) {                                                          \
                const T *xc = xn + c * iv;                                                                           \
                T rows[4];                                                                                           \
                for (int i = 0; i < 4; i++)                                                                          \
                    rows[i] = SFX##_cubic_sum(SFX##_at(xc, g, 0, py[i], px[0]), SFX##_at(xc, g, 0, py[i], px[1]),    \
                                              SFX##_at(xc, g, 0, py[i], px[2]), SFX##_at(xc, g, 0, py[i], px[3]), cx); \
                *dst = SFX##_cubic_sum(rows[0], rows[1], rows[2], rows[3], cy);                                      \
            }                                                                                                        \
            return;                                                                                                  \
        }                                                                                                            \
        T ix = SFX##_pad(SFX##_unnormalize(gx, g->in[2], g->align_corners), g->in[2], g->padding, g->align_corners); \
        T iy = SFX##_pad(SFX##_unnormalize(gy, g->in[1], g->align_corners), g->in[1], g->padding, g->align_corners); \
        T iz = g->nsp == 3 ? SFX##_pad(SFX##_unnormalize(gz, g->in[0], g->align_corners), g->in[0], g->padding,      \
                                       g->align_corners)                                                             \
                           : (T)0;                                                                                   \
        int64_t nz = (int64_t)grid_rint((double)iz), ny = (int64_t)grid_rint((double)iy), nx = (int64_t)grid_rint((double)ix); \
        for (int64_t c = 0; c < g->C; c++, dst += ov) *dst = SFX##_at(xn + c * iv, g, nz, ny, nx);                   \
    }                                                                                                                \
    /* floor of a padded coordinate (finite, within int32: _pad sends anything else to -100), without libm */     \
    static inline int64_t SFX##_floor(T c) {                                                                         \
        int64_t i = (int64_t)c;                                                                                      \
        return (T)i > c ? i - 1 : i;                                                                                 \
    }                                                                                                                \
    /* Bilinear / trilinear, one grid point's corners: offsets, weights and a mask of the value's bits  \
     * (all ones inside, zero outside: a corner outside reads +0 from offset 0, without a branch), in      \
     * upstream's order of summation (2-d: nw ne sw se; 3-d: tnw tne tsw tse bnw bne bsw bse). */                    \
    static void SFX##_corners(const T *pt, const tn_grid_geom *g, int64_t off[8], T w[8], BITS mask[8]) {            \
        T ix = SFX##_pad(SFX##_unnormalize(pt[0], g->in[2], g->align_corners), g->in[2], g->padding, g->align_corners); \
        T iy = SFX##_pad(SFX##_unnormalize(pt[1], g->in[1], g->align_corners), g->in[1], g->padding, g->align_corners); \
        T iz = g->nsp == 3 ? SFX##_pad(SFX##_unnormalize(pt[2], g->in[0], g->align_corners), g->in[0], g->padding,   \
                                       g->align_corners)                                                             \
                           : (T)0;                                                                                   \
        int64_t x0 = SFX##_floor(ix), y0 = SFX##_floor(iy), z0 = SFX##_floor(iz);                                    \
        T wx1 = R(ix - R((T)x0)), wx0 = R(R((T)(x0 + 1)) - ix), wy1 = R(iy - R((T)y0)), wy0 = R(R((T)(y0 + 1)) - iy); \
        int nc = g->nsp == 2 ? 4 : 8;                                                                                \
        if (g->nsp == 2) {                                                                                           \
            w[0] = R(wx0 * wy0), w[1] = R(wx1 * wy0), w[2] = R(wx0 * wy1), w[3] = R(wx1 * wy1);                      \
        } else {                                                                                                     \
            T wz1 = R(iz - R((T)z0)), wz0 = R(R((T)(z0 + 1)) - iz);                                                  \
            for (int k = 0; k < 8; k++) w[k] = R(R(((k & 1) ? wx1 : wx0) * ((k & 2) ? wy1 : wy0)) * ((k & 4) ? wz1 : wz0)); \
        }                                                                                                            \
        for (int k = 0; k < nc; k++) {                                                                               \
            int64_t zz = g->nsp == 2 ? 0 : z0 + (k >> 2), yy = y0 + ((k >> 1) & 1), xx = x0 + (k & 1);              \
            bool in = zz >= 0 && zz < g->in[0] && yy >= 0 && yy < g->in[1] && xx >= 0 && xx < g->in[2];             \
            off[k] = in ? (zz * g->in[1] + yy) * g->in[2] + xx : 0;                                                  \
            mask[k] = in ? (BITS)-1 : 0;                                                                             \
        }                                                                                                            \
    }                                                                                                                \
    /* Bilinear 2-d, a block of points at once: the coordinates (reflection: per point, through _pad), then the     \
     * weights, offsets and masks as arrays over the block (corner k of point b at [k][b]) without branches, so the  \
     * compiler runs the points in vector lanes; the same operations in the same order as _corners and _pad. */      \
    static void SFX##_block2(const T *pts, int nb, const tn_grid_geom *g, int64_t o4[4][GRID_BLOCK],               \
                             T w4[4][GRID_BLOCK], BITS m4[4][GRID_BLOCK]) {                                         \
        const int64_t H = g->in[1], W = g->in[2];                                                                    \
        const bool align = g->align_corners, border = g->padding == TN_GRID_BORDER;                                  \
        T ixs[GRID_BLOCK], iys[GRID_BLOCK];                                                                          \
        if (g->padding == TN_GRID_REFLECTION) {                                                                      \
            for (int b = 0; b < nb; b++) {                                                                           \
                ixs[b] = SFX##_pad(SFX##_unnormalize(pts[2 * b], W, align), W, g->padding, align);                  \
                iys[b] = SFX##_pad(SFX##_unnormalize(pts[2 * b + 1], H, align), H, g->padding, align);              \
            }                                                                                                        \
        } else {                                                                                                     \
            for (int b = 0; b < nb; b++) {                                                                           \
                T ix = SFX##_unnormalize(pts[2 * b], W, align), iy = SFX##_unnormalize(pts[2 * b + 1], H, align);    \
                if (border) ix = SFX##_clip(ix, W), iy = SFX##_clip(iy, H);                                          \
                ixs[b] = SFX##_in_int32(ix), iys[b] = SFX##_in_int32(iy);                                            \
            }                                                                                                        \
        }                                                                                                            \
        for (int b = 0; b < nb; b++) {                                                                               \
            T ix = ixs[b], iy = iys[b];                                                                              \
            int32_t x0 = (int32_t)ix, y0 = (int32_t)iy;                                                              \
            x0 -= (T)x0 > ix;                                                                                        \
            y0 -= (T)y0 > iy;                                                                                        \
            int64_t x1 = (int64_t)x0 + 1, y1 = (int64_t)y0 + 1;                                                      \
            T wx1 = R(ix - R((T)x0)), wx0 = R(R((T)x1) - ix), wy1 = R(iy - R((T)y0)), wy0 = R(R((T)y1) - iy);        \
            w4[0][b] = R(wx0 * wy0), w4[1][b] = R(wx1 * wy0), w4[2][b] = R(wx0 * wy1), w4[3][b] = R(wx1 * wy1);      \
            for (int k = 0; k < 4; k++) {                                                                            \
                int64_t yy = (int64_t)y0 + (k >> 1), xx = (int64_t)x0 + (k & 1);                                     \
                bool in = yy >= 0 && yy < H && xx >= 0 && xx < W;                                                    \
                o4[k][b] = in ? yy * W + xx : 0;                                                                     \
                m4[k][b] = in ? (BITS)-1 : 0;                                                                        \
            }                                                                                                        \
        }                                                                                                            \
    }                                                                                                                \
    /* the sum over a point's nc corners, left to right (nc a constant where it is inlined) */                     \
    static inline __attribute__((always_inline)) T SFX##_taps(const T *xc, const int64_t *off, const T *w,           \
                                                              const BITS *mask, int nc) {                            \
        T out = 0;                                                                                                   \
        for (int k = 0; k < nc; k++) {                                                                               \
            BITS u;                                                                                                  \
            T v;                                                                                                     \
            memcpy(&u, &xc[off[k]], sizeof u);                                                                       \
            u &= mask[k];                                                                                            \
            memcpy(&v, &u, sizeof v);                                                                                \
            out = R(out + R(v * w[k]));                                                                              \
        }                                                                                                            \
        return out;                                                                                                  \
    }                                                                                                                \
    /* Bilinear / trilinear points are taken GRID_BLOCK at a time: their corners first, then each                   \
     * channel over the block, so the points' sums (each a chain of dependent adds) overlap. */                      \
    void SFX##_grid_sample__scalar(T *y, const T *x, const T *grid, const tn_grid_geom *g, int64_t n0, int64_t n1) { \
        int64_t iv = g->in[0] * g->in[1] * g->in[2], ov = g->out[0] * g->out[1] * g->out[2];                         \
        int nc = g->nsp == 2 ? 4 : 8;                                                                                \
        for (int64_t n = n0; n < n1; n++) {                                                                          \
            const T *xn = x + n * g->C * iv, *gn = grid + n * ov * g->nsp;                                           \
            T *yn = y + n * g->C * ov;                                                                               \
            if (g->interp != TN_GRID_BILINEAR) {                                                                     \
                for (int64_t o = 0; o < ov; o++) SFX##_point(yn + o, ov, xn, iv, gn + o * g->nsp, g);                \
                continue;                                                                                            \
            }                                                                                                        \
            if (g->nsp == 2) {                                                   \
                for (int64_t o0 = 0; o0 < ov; o0 += GRID_BLOCK) {                                                    \
                    int nb = ov - o0 < GRID_BLOCK ? (int)(ov - o0) : GRID_BLOCK;                                     \
                    int64_t o4[4][GRID_BLOCK];                                                                       \
                    T w4[4][GRID_BLOCK];                                                                             \
                    BITS m4[4][GRID_BLOCK];                                                                          \
                    SFX##_block2(gn + o0 * 2, nb, g, o4, w4, m4);                                                    \
                    for (int64_t c = 0; c < g->C; c++) {                                                             \
                        const T *xc = xn + c * iv;                                                                   \
                        T *dst = yn + c * ov + o0;                                                                   \
                        for (int b = 0; b < nb; b++) {                                                               \
                            T out = 0;                                                                               \
                            for (int k = 0; k < 4; k++) {                                                            \
                                BITS u;                                                                              \
                                T v;                                                                                 \
                                memcpy(&u, &xc[o4[k][b]], sizeof u);                                                 \
                                u &= m4[k][b];                                                                       \
                                memcpy(&v, &u, sizeof v);                                                            \
                                out = R(out + R(v * w4[k][b]));                                                      \
                            }                                                                                        \
                            dst[b] = out;                                                                            \
                        }                                                                                            \
                    }                                                                                                \
                }                                                                                                    \
                continue;                                                                                            \
            }                                                                                                        \
            for (int64_t o0 = 0; o0 < ov; o0 += GRID_BLOCK) {                                                        \
                int nb = ov - o0 < GRID_BLOCK ? (int)(ov - o0) : GRID_BLOCK;                                         \
                int64_t off[GRID_BLOCK][8];                                                                          \
                T w[GRID_BLOCK][8];                                                                                  \
                BITS mask[GRID_BLOCK][8];                                                                            \
                for (int b = 0; b < nb; b++) SFX##_corners(gn + (o0 + b) * g->nsp, g, off[b], w[b], mask[b]);        \
                for (int64_t c = 0; c < g->C; c++) {                                                                 \
                    const T *xc = xn + c * iv;                                                                       \
                    T *dst = yn + c * ov + o0;                                                                       \
                    if (nc == 4)                                                                                     \
                        for (int b = 0; b < nb; b++) dst[b] = SFX##_taps(xc, off[b], w[b], mask[b], 4);              \
                    else                                                                                             \
                        for (int b = 0; b < nb; b++) dst[b] = SFX##_taps(xc, off[b], w[b], mask[b], 8);              \
                }                                                                                                    \
            }                                                                                                        \
        }                                                                                                            \
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
GRID_SAMPLE(float, f32, round_f32, uint32_t)
GRID_SAMPLE(double, f64, round_f64, uint64_t)
GRID_SAMPLE(float, bf16, tn_round_bf16_f32, uint32_t)
GRID_SAMPLE(float, f16, tn_round_half_f32, uint32_t)
GRID_SAMPLE_BACKWARD(float, f32)
GRID_SAMPLE_BACKWARD(double, f64)
