/* nn_conv3d.h — the column kernels of 3-d convolution (im2col / col2im over a [C, D, H, W]
 * image) and the direct integer convolution upstream's slow paths compute for 1 to 3
 * spatial dims (forward and transposed). Plain C; kernels never allocate and never see a
 * tensor. The op layer (src/ops/nn_conv3d.c) runs the GEMMs and threads channels. */
#ifndef TN_KERNELS_NN_CONV3D_H
#define TN_KERNELS_NN_CONV3D_H

#include <stdbool.h>
#include <stdint.h>

/* One image [C, img] against a column matrix [C * kvol, cols] (rows ld elements apart):
 * column (a, b, e) of channel c at output position (i, j, l) reads image element
 * (i s0 - p0 + a d0, j s1 - p1 + b d1, l s2 - p2 + e d2), zero outside the image. Each
 * array is indexed depth, height, width. */
typedef struct tn_conv3d_geom {
    int64_t img[3], k[3], cols[3], s[3], p[3], d[3];
} tn_conv3d_geom;

/* col rows [c0 * kvol, c1 * kvol) = im2col of image channels [c0, c1) */
void f32_im2col3d__scalar(float *col, int64_t ld, const float *img, const tn_conv3d_geom *g, int64_t c0, int64_t c1);
void f64_im2col3d__scalar(double *col, int64_t ld, const double *img, const tn_conv3d_geom *g, int64_t c0, int64_t c1);
/* image channels [c0, c1) += col2im of their column rows (the adjoint of im2col) */
void f32_col2im3d__scalar(float *img, const float *col, int64_t ld, const tn_conv3d_geom *g, int64_t c0, int64_t c1);
void f64_col2im3d__scalar(double *img, const double *col, int64_t ld, const tn_conv3d_geom *g, int64_t c0, int64_t c1);
/* the same with every sum rounded by rd (upstream's Half col2vol adds in Half) */
void f32_col2im3d_rounded__scalar(float *img, const float *col, int64_t ld, const tn_conv3d_geom *g, int64_t c0,
                                  int64_t c1, float (*rd)(float));

/* Direct integer convolution, sums wrapping modulo 2^64 (the op layer narrows):
 * not transposed: x [N, C, in], w [O, C/G, k], y [N, O, out];
 * transposed:     x [N, C, in], w [C, O/G, k], y [N, O, out] with out[i s - p + k d] +=.
 * bias [O] or NULL. Spatial dims as in tn_conv3d_geom with img = the input's and cols =
 * the output's extents (1 for dims a 1-d or 2-d convolution lacks). */
void i64_conv3d_direct__scalar(int64_t *y, const int64_t *x, const int64_t *w, const int64_t *bias, int64_t N,
                               int64_t C, int64_t O, int64_t G, const tn_conv3d_geom *g, bool transposed);

#endif
