/* nn_grid_sample.h — grid sampling of [N, C, (D,) H, W] images at the normalised points of a
 * [N, (Do,) Ho, Wo, nsp] grid: bilinear / trilinear, nearest and (2-d) bicubic
 * interpolation, zeros / border / reflection padding, as upstream's GridSampler.h. The op
 * layer is src/ops/nn_grid_sample.c. */
#ifndef TN_KERNELS_NN_GRID_SAMPLE_H
#define TN_KERNELS_NN_GRID_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

enum { TN_GRID_BILINEAR = 0, TN_GRID_NEAREST = 1, TN_GRID_BICUBIC = 2 };
enum { TN_GRID_ZEROS = 0, TN_GRID_BORDER = 1, TN_GRID_REFLECTION = 2 };

typedef struct tn_grid_geom {
    int nsp;                 /* 2 or 3; a 2-d sample has in[0] = out[0] = 1 */
    int64_t N, C, in[3], out[3];
    int interp, padding;
    bool align_corners;
} tn_grid_geom;

/* y [N, C, out] sampled from x [N, C, in] at grid [N, out, nsp] (x, y, z order: width first) */
void f32_grid_sample__scalar(float *y, const float *x, const float *grid, const tn_grid_geom *g, int64_t n0, int64_t n1);
void f64_grid_sample__scalar(double *y, const double *x, const double *grid, const tn_grid_geom *g, int64_t n0, int64_t n1);
/* the bfloat16 and float16 kernels: float buffers, every intermediate rounded to the type */
void bf16_grid_sample__scalar(float *y, const float *x, const float *grid, const tn_grid_geom *g, int64_t n0, int64_t n1);
void f16_grid_sample__scalar(float *y, const float *x, const float *grid, const tn_grid_geom *g, int64_t n0, int64_t n1);

/* The adjoint for grad y [N, C, out]: gx [N, C, in] += (NULL: not wanted; zeroed by the
 * caller), ggrid [N, out, nsp] = d loss / d grid (written; 0 for nearest, as upstream). */
void f32_grid_sample_backward__scalar(float *gx, float *ggrid, const float *gy, const float *x, const float *grid,
                                      const tn_grid_geom *g, int64_t n0, int64_t n1);
void f64_grid_sample_backward__scalar(double *gx, double *ggrid, const double *gy, const double *x, const double *grid,
                                      const tn_grid_geom *g, int64_t n0, int64_t n1);

#endif
