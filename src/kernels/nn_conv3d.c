/* nn_conv3d.c — 3-d im2col / col2im (float and double instances of one body) and the direct
 * integer convolution, forward and transposed (nn_conv3d.h). */
#include <string.h>

#include "kernels/nn_conv3d.h"

#define CONV3D_COLUMNS(T, SFX)                                                                                        \
    void SFX##_im2col3d__scalar(T *col, int64_t ld, const T *img, const tn_conv3d_geom *g, int64_t c0, int64_t c1) { \
        int64_t D = g->img[0], H = g->img[1], W = g->img[2], OD = g->cols[0], OH = g->cols[1], OW = g->cols[2];      \
        for (int64_t c = c0; c < c1; c++)                                                                            \
            for (int64_t a = 0; a < g->k[0]; a++)                                                                    \
                for (int64_t b = 0; b < g->k[1]; b++)                                                                \
                    for (int64_t e = 0; e < g->k[2]; e++) {                                                          \
                        T *row = col + (((c * g->k[0] + a) * g->k[1] + b) * g->k[2] + e) * ld;                       \
                        for (int64_t i = 0; i < OD; i++) {                                                           \
                            int64_t z = i * g->s[0] - g->p[0] + a * g->d[0];                                         \
                            for (int64_t j = 0; j < OH; j++) {                                                       \
                                int64_t y = j * g->s[1] - g->p[1] + b * g->d[1];                                     \
                                T *dst = row + (i * OH + j) * OW;                                                    \
                                if (z < 0 || z >= D || y < 0 || y >= H) {                                            \
                                    memset(dst, 0, sizeof(T) * (size_t)OW);                                          \
                                    continue;                                                                        \
                                }                                                                                    \
                                const T *src = img + ((c * D + z) * H + y) * W;                                      \
                                int64_t x0 = -g->p[2] + e * g->d[2];                                                 \
                                if (g->s[2] == 1 && x0 >= 0 && x0 + OW <= W) {                                       \
                                    memcpy(dst, src + x0, sizeof(T) * (size_t)OW);                                   \
                                    continue;                                                                        \
                                }                                                                                    \
                                for (int64_t l = 0; l < OW; l++) {                                                   \
                                    int64_t x = l * g->s[2] + x0;                                                    \
                                    dst[l] = x >= 0 && x < W ? src[x] : (T)0;                                        \
                                }                                                                                    \
                            }                                                                                        \
                        }                                                                                            \
                    }                                                                                                \
    }

/* col2im over the same geometry; ADD(acc, v) is the accumulation (a plain sum, or one rounded
 * to Half for upstream's Half col2vol) */
#define CONV3D_COL2IM(T, NAME, EXTRA, ADD)                                                                            \
    void NAME(T *img, const T *col, int64_t ld, const tn_conv3d_geom *g, int64_t c0, int64_t c1 EXTRA) {          \
        int64_t D = g->img[0], H = g->img[1], W = g->img[2], OD = g->cols[0], OH = g->cols[1], OW = g->cols[2];      \
        for (int64_t c = c0; c < c1; c++)                                                                            \
            for (int64_t a = 0; a < g->k[0]; a++)                                                                    \
                for (int64_t b = 0; b < g->k[1]; b++)                                                                \
                    for (int64_t e = 0; e < g->k[2]; e++) {                                                          \
                        const T *row = col + (((c * g->k[0] + a) * g->k[1] + b) * g->k[2] + e) * ld;                 \
                        for (int64_t i = 0; i < OD; i++) {                                                           \
                            int64_t z = i * g->s[0] - g->p[0] + a * g->d[0];                                         \
                            if (z < 0 || z >= D) continue;                                                           \
                            for (int64_t j = 0; j < OH; j++) {                                                       \
                                int64_t y = j * g->s[1] - g->p[1] + b * g->d[1];                                     \
                                if (y < 0 || y >= H) continue;                                                       \
                                const T *src = row + (i * OH + j) * OW;                                              \
                                T *dst = img + ((c * D + z) * H + y) * W;                                            \
                                for (int64_t l = 0; l < OW; l++) {                                                   \
                                    int64_t x = l * g->s[2] - g->p[2] + e * g->d[2];                                 \
                                    if (x >= 0 && x < W) dst[x] = ADD(dst[x], src[l]);                                   \
                                }                                                                                    \
                            }                                                                                        \
                        }                                                                                            \
                    }                                                                                                \
    }

#define CONV3D_SUM(a, v) ((a) + (v))
#define CONV3D_SUM_RD(a, v) rd((a) + (v))
#define COMMA_RD , float (*rd)(float)

CONV3D_COLUMNS(float, f32)
CONV3D_COLUMNS(double, f64)
CONV3D_COL2IM(float, f32_col2im3d__scalar, , CONV3D_SUM)
CONV3D_COL2IM(double, f64_col2im3d__scalar, , CONV3D_SUM)
CONV3D_COL2IM(float, f32_col2im3d_rounded__scalar, COMMA_RD, CONV3D_SUM_RD)

void i64_conv3d_direct__scalar(int64_t *y, const int64_t *x, const int64_t *w, const int64_t *bias, int64_t N,
                               int64_t C, int64_t O, int64_t G, const tn_conv3d_geom *g, bool transposed) {
    int64_t in_vol = g->img[0] * g->img[1] * g->img[2], out_vol = g->cols[0] * g->cols[1] * g->cols[2];
    int64_t kvol = g->k[0] * g->k[1] * g->k[2], Cg = C / G, Og = O / G;
    uint64_t *yu = (uint64_t *)y;
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++)
            for (int64_t q = 0; q < out_vol; q++) yu[(n * O + o) * out_vol + q] = bias ? (uint64_t)bias[o] : 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t gi = 0; gi < G; gi++)
            for (int64_t ci = 0; ci < Cg; ci++) {
                int64_t c = gi * Cg + ci;
                const int64_t *xc = x + (n * C + c) * in_vol;
                for (int64_t oi = 0; oi < Og; oi++) {
                    int64_t o = gi * Og + oi;
                    /* weight [O, C/G, k] or, transposed, [C, O/G, k] */
                    const int64_t *wk = transposed ? w + (c * Og + oi) * kvol : w + (o * Cg + ci) * kvol;
                    uint64_t *yo = yu + (n * O + o) * out_vol;
                    for (int64_t a = 0; a < g->k[0]; a++)
                        for (int64_t b = 0; b < g->k[1]; b++)
                            for (int64_t e = 0; e < g->k[2]; e++) {
                                uint64_t wv = (uint64_t)wk[(a * g->k[1] + b) * g->k[2] + e];
                                /* not transposed: output (i, j, l) reads input i s - p + a d;
                                 * transposed: input (i, j, l) adds into output i s - p + a d */
                                const int64_t *lim = transposed ? g->cols : g->img;
                                const int64_t *it = transposed ? g->img : g->cols;
                                for (int64_t i = 0; i < it[0]; i++) {
                                    int64_t z = i * g->s[0] - g->p[0] + a * g->d[0];
                                    if (z < 0 || z >= lim[0]) continue;
                                    for (int64_t j = 0; j < it[1]; j++) {
                                        int64_t yy = j * g->s[1] - g->p[1] + b * g->d[1];
                                        if (yy < 0 || yy >= lim[1]) continue;
                                        for (int64_t l = 0; l < it[2]; l++) {
                                            int64_t xx = l * g->s[2] - g->p[2] + e * g->d[2];
                                            if (xx < 0 || xx >= lim[2]) continue;
                                            int64_t far = (z * lim[1] + yy) * lim[2] + xx, near = (i * it[1] + j) * it[2] + l;
                                            if (transposed) yo[far] += (uint64_t)xc[near] * wv;
                                            else yo[near] += (uint64_t)xc[far] * wv;
                                        }
                                    }
                                }
                            }
                }
            }
}
