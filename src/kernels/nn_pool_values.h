/* nn_pool_values.h — max pooling without indices, written once over an element type and
 * instantiated by the reference (nn_ref.inc, every dtype, baseline ISA) and by the float32
 * vector tiers (nn_vec.inc, compiled for AVX2 / AVX-512), so the same loop is vectorised at
 * each tier's width.
 *
 * TN_MAX_POOL_VALUES(T, NAME) defines
 *   static void NAME(T *y, const T *x, int64_t P, int64_t H, int64_t W, int64_t oh, int64_t ow,
 *                    int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
 *                    int64_t dh, int64_t dw)
 * with max_pool2d's geometry (kernels/nn.h) and no index output. Every output sees its window
 * in row-major order (kernel row a, then column b) with the update v > m ? v : m from -inf, or,
 * in a plane holding a NaN, (v > m || v != v) ? v : m (NaN wins and sticks): the values and the
 * zero chosen among -0 / +0 are the indexed kernel's. In a plane without NaN the update is one
 * max instruction; a window of constant width and stride (2, 3 or 4 columns at strides 1 to 4)
 * wholly inside its row is computed per output in one go (the compiler reads the columns as
 * interleaved vector loads), the rest a kernel position at a time over a whole output row
 * (upstream's max_pool1d order). (Before session 49 only the latter, compiled at the baseline
 * ISA: max_pool1d of 16 x 64 x 1024 with kernel 3 took 1.5x upstream's time.) */
#ifndef TN_KERNELS_NN_POOL_VALUES_H
#define TN_KERNELS_NN_POOL_VALUES_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* the outputs j0 <= j < j1 of a row whose kernel column b reads input column j * sw + off
 * inside [0, W): off = b * dw - pw */
static inline void tn_mpv_cols(int64_t W, int64_t ow, int64_t sw, int64_t off, int64_t *j0, int64_t *j1) {
    *j0 = off >= 0 ? 0 : (int64_t)(((uint64_t)-off + (uint64_t)sw - 1) / (uint64_t)sw);
    *j1 = W - 1 - off < 0 ? 0 : (W - 1 - off) / sw + 1;
    if (*j1 > ow) *j1 = ow;
    if (*j0 > *j1) *j0 = *j1;
}

#define TN_MAX_POOL_VALUES(T, NAME)                                                            \
    static bool NAME##_any_nan(const T *x, int64_t n) {                                        \
        int nan = 0;                                                                           \
        for (int64_t e = 0; e < n; e++) nan |= x[e] != x[e];                                   \
        return nan != 0;                                                                       \
    }                                                                                          \
    /* outputs [j0, j1) of row yr over one kernel row xr, windows of KW columns at stride SW  \
     * starting at column j * SW - pw, all inside the row */                                  \
    static inline void NAME##_fused(T *yr, const T *xr, int64_t j0, int64_t j1, int64_t pw,    \
                                    int64_t KW, int64_t SW) {                                  \
        for (int64_t j = j0; j < j1; j++) {                                                    \
            const T *w = xr + j * SW - pw;                                                     \
            T m = yr[j];                                                                       \
            for (int64_t b = 0; b < KW; b++) m = w[b] > m ? w[b] : m;                          \
            yr[j] = m;                                                                         \
        }                                                                                      \
    }                                                                                          \
    /* outputs [j0, j1) whose windows may reach outside the row: the columns inside it */      \
    static inline void NAME##_edge(T *yr, const T *xr, int64_t j0, int64_t j1, int64_t W, int64_t kw, \
                                   int64_t sw, int64_t pw) {                                   \
        for (int64_t j = j0; j < j1; j++) {                                                    \
            T m = yr[j];                                                                       \
            for (int64_t b = 0; b < kw; b++) {                                                 \
                const int64_t c = j * sw - pw + b;                                             \
                if (c >= 0 && c < W) m = xr[c] > m ? xr[c] : m;                                \
            }                                                                                  \
            yr[j] = m;                                                                         \
        }                                                                                      \
    }                                                                                          \
    static void NAME(T *y, const T *x, int64_t P, int64_t H, int64_t W, int64_t oh, int64_t ow, \
                     int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,   \
                     int64_t dh, int64_t dw) {                                                 \
        /* the outputs whose whole window lies inside the row (dilation 1) */                  \
        int64_t fa = 0, fb = 0;                                                                \
        const bool fuse = dw == 1 && kw >= 2 && kw <= 4 && sw <= 4;                            \
        if (fuse) {                                                                            \
            int64_t a0, a1, b0, b1;                                                            \
            tn_mpv_cols(W, ow, sw, -pw, &a0, &a1);                                             \
            tn_mpv_cols(W, ow, sw, kw - 1 - pw, &b0, &b1);                                     \
            fa = a0 > b0 ? a0 : b0;                                                            \
            fb = a1 < b1 ? a1 : b1;                                                            \
            if (fb < fa) fb = fa;                                                              \
        }                                                                                      \
        for (int64_t p = 0; p < P; p++) {                                                      \
            const bool nan = NAME##_any_nan(x + p * H * W, H * W);                             \
            for (int64_t i = 0; i < oh; i++) {                                                 \
                T *yr = y + (p * oh + i) * ow;                                                 \
                for (int64_t j = 0; j < ow; j++) yr[j] = -INFINITY;                            \
                for (int64_t a = 0; a < kh; a++) {                                             \
                    const int64_t h = i * sh - ph + a * dh;                                    \
                    if (h < 0 || h >= H) continue;                                             \
                    const T *xr = x + (p * H + h) * W;                                         \
                    if (!nan && fuse) {                                                        \
                        /* the edges column by column, the inside per output */              \
                        NAME##_edge(yr, xr, 0, fa, W, kw, sw, pw);                             \
                        NAME##_edge(yr, xr, fb, ow, W, kw, sw, pw);                            \
                        /* constant widths and strides, so the loads vectorise */             \
                        switch (kw * 8 + sw) {                                                 \
                        case 2 * 8 + 1: NAME##_fused(yr, xr, fa, fb, pw, 2, 1); break;         \
                        case 2 * 8 + 2: NAME##_fused(yr, xr, fa, fb, pw, 2, 2); break;         \
                        case 3 * 8 + 1: NAME##_fused(yr, xr, fa, fb, pw, 3, 1); break;         \
                        case 3 * 8 + 2: NAME##_fused(yr, xr, fa, fb, pw, 3, 2); break;         \
                        case 3 * 8 + 3: NAME##_fused(yr, xr, fa, fb, pw, 3, 3); break;         \
                        case 4 * 8 + 2: NAME##_fused(yr, xr, fa, fb, pw, 4, 2); break;         \
                        case 4 * 8 + 4: NAME##_fused(yr, xr, fa, fb, pw, 4, 4); break;         \
                        default: NAME##_fused(yr, xr, fa, fb, pw, kw, sw); break;              \
                        }                                                                      \
                        continue;                                                              \
                    }                                                                          \
                    for (int64_t b = 0; b < kw; b++) {                                         \
                        const int64_t off = b * dw - pw;                                       \
                        int64_t j0, j1;                                                        \
                        tn_mpv_cols(W, ow, sw, off, &j0, &j1);                                 \
                        if (!nan)                                                              \
                            for (int64_t j = j0; j < j1; j++) {                                \
                                const T v = xr[j * sw + off];                                  \
                                yr[j] = v > yr[j] ? v : yr[j];                                 \
                            }                                                                  \
                        else                                                                   \
                            for (int64_t j = j0; j < j1; j++) {                                \
                                const T v = xr[j * sw + off];                                  \
                                yr[j] = (v > yr[j] || v != v) ? v : yr[j];                     \
                            }                                                                  \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }

/* the same with NAME macro-expanded first (NAME may be FN(name)) */
#define TN_MAX_POOL_VALUES_OF(T, NAME) TN_MAX_POOL_VALUES(T, NAME)

#endif
