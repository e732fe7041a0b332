/* fold.h — col2im for every dtype upstream's col2im_out_cpu dispatches (float, double,
 * BFloat16, Half, complex64 / complex128): blocks of columns summed back into images, each
 * add in the element type as upstream's loop does it. Plain C11. */
#ifndef TN_KERNELS_FOLD_H
#define TN_KERNELS_FOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

typedef struct tn_fold_geom {
    int64_t C, H, W;        /* image planes and their size */
    int64_t bh, bw;         /* the grid of sliding blocks (columns per plane row: bh * bw) */
    int64_t kh, kw, ph, pw, sh, sw, dh, dw;
} tn_fold_geom;

/* Planes [p0, p1) of a batch of images (plane p = image p / C, channel p % C): each zeroed,
 * then column row (c, a, b) of its image added for a, b in order, so every pixel sums its
 * blocks in upstream's order. `col` is [N, C * kh * kw, bh * bw] and `im` [N, C, H, W],
 * both contiguous. False when the dtype has no loop. */
bool tn_fold_planes(tn_dtype dt, void *im, const void *col, const tn_fold_geom *g, int64_t p0, int64_t p1);

#endif
