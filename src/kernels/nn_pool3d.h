/* nn_pool3d.h — plane kernels of 3-d max / average pooling and their gradients, and the
 * index scatters of max unpooling and of the max-pool gradient. Planes are contiguous
 * [P, D, H, W] (in) and [P, od, oh, ow] (out) buffers in the op's acc dtype; indices are
 * flat positions inside one input plane (upstream's convention). Kernels never allocate
 * and never see a tensor; the op layer (src/ops/nn_pool3d.c) threads them over planes. */
#ifndef TN_KERNELS_NN_POOL3D_H
#define TN_KERNELS_NN_POOL3D_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Window geometry, each array indexed depth, height, width. */
typedef struct tn_pool3d_geom {
    int64_t in[3], out[3], k[3], s[3], pad[3], dil[3];
    bool count_include_pad;
    int64_t divisor; /* 0: none */
} tn_pool3d_geom;

#define TN_POOL3D_KERNELS(T, SFX)                                                                                    \
    /* y, idx [P, out]: the maximum of each window (NaN wins and sticks) and its index */                            \
    void SFX##_max_pool3d__scalar(T *y, int64_t *idx, const T *x, int64_t P, const tn_pool3d_geom *g);              \
    /* y [P, out]: the mean of each window (upstream's divisor rules) */                                              \
    void SFX##_avg_pool3d__scalar(T *y, const T *x, int64_t P, const tn_pool3d_geom *g);                          \
    /* fractional max pooling: y, idx [P, out] over windows of g->k starting, per plane, at  \
     * starts [P, out[0] + out[1] + out[2]] (depth starts, then height, then width) */        \
    void SFX##_max_pool3d_starts__scalar(T *y, int64_t *idx, const T *x, int64_t P, const tn_pool3d_geom *g,        \
                                         const int64_t *starts);
TN_POOL3D_KERNELS(float, f32)
TN_POOL3D_KERNELS(double, f64)
TN_POOL3D_KERNELS(int64_t, i64)
#undef TN_POOL3D_KERNELS

/* gx [P, in] = the gradient of avg_pool3d for gy [P, out] (gx is overwritten). */
void f32_avg_pool3d_backward__scalar(float *gx, const float *gy, int64_t P, const tn_pool3d_geom *g);
void f64_avg_pool3d_backward__scalar(double *gx, const double *gy, int64_t P, const tn_pool3d_geom *g);

/* gx [P, in_plane] += gy [P, out_plane] at idx [P, out_plane] (max-pool gradient). gx is
 * not cleared. Returns false, with the offending index in *bad, if an index lies outside
 * [0, in_plane); the planes before it are already written. */
bool f32_plane_scatter_add__scalar(float *gx, const float *gy, const int64_t *idx, int64_t P, int64_t in_plane,
                                   int64_t out_plane, int64_t *bad);
bool f64_plane_scatter_add__scalar(double *gx, const double *gy, const int64_t *idx, int64_t P, int64_t in_plane,
                                   int64_t out_plane, int64_t *bad);

/* y [P, out_plane] (elements of esz bytes, zeroed by the caller) at idx [P, in_plane] =
 * x [P, in_plane]: max unpooling, any element type; the last write to a position wins,
 * as upstream's sequential plane loop. Returns false if an index lies outside [0, out_plane),
 * with the last such index in *bad (upstream reports the last one its loop met). */
bool tn_plane_scatter_set(void *y, const void *x, const int64_t *idx, size_t esz, int64_t P, int64_t in_plane,
                          int64_t out_plane, int64_t *bad);

#endif
