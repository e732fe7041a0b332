/* nn_pool3d.c — the float, double and int64 instances of the 3-d pooling kernels (bodies in
 * nn_pool3d.inc) and the element-type-free scatter of max unpooling. */
#include <math.h>
#include <string.h>

#include "kernels/nn_pool3d.h"

#define POOL3D_FLOAT
#define T float
#define SUM float
#define LOWEST (-INFINITY)
#define ISNAN(v) ((v) != (v))
#define FN(name) f32_##name##__scalar
#include "kernels/nn_pool3d.inc"
#undef T
#undef SUM
#undef LOWEST
#undef ISNAN
#undef FN

#define T double
#define SUM double
#define LOWEST (-INFINITY)
#define ISNAN(v) ((v) != (v))
#define FN(name) f64_##name##__scalar
#include "kernels/nn_pool3d.inc"
#undef T
#undef SUM
#undef LOWEST
#undef ISNAN
#undef FN
#undef POOL3D_FLOAT

#define T int64_t
#define SUM uint64_t
#define LOWEST INT64_MIN
#define ISNAN(v) false
#define FN(name) i64_##name##__scalar
#include "kernels/nn_pool3d.inc"
#undef T
#undef SUM
#undef LOWEST
#undef ISNAN
#undef FN

bool tn_plane_scatter_set(void *y, const void *x, const int64_t *idx, size_t esz, int64_t P, int64_t in_plane,
                          int64_t out_plane, int64_t *bad) {
    bool ok = true;
    for (int64_t p = 0; p < P; p++) {
        char *yp = (char *)y + (size_t)(p * out_plane) * esz;
        const char *xp = (const char *)x + (size_t)(p * in_plane) * esz;
        for (int64_t i = 0; i < in_plane; i++) {
            int64_t at = idx[p * in_plane + i];
            if (at < 0 || at >= out_plane) { *bad = at; ok = false; continue; }
            memcpy(yp + (size_t)at * esz, xp + (size_t)i * esz, esz);
        }
    }
    return ok;
}
