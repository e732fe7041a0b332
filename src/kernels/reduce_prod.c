/* reduce_prod.c — upstream-ordered product of a contiguous run (float32, float64): the
 * accumulator layout of its vectorised inner reduction with plain arrays standing in for
 * the vector registers (the compiler vectorises the block loop), so the same bits. */
#include <stdint.h>

#include "kernels/reduce.h"

#pragma GCC push_options
#pragma GCC optimize("O3")
/* acc[k] for k < 4 * lanes is lane k % lanes of vector k / lanes: a block's element k
 * multiplies acc[k], as upstream's four loads of one block feed its four vectors. */
#define PROD_RUN(T, NAME, MAXL)                                                              \
    T NAME(T init, const T *x, int64_t n, int lanes) {                                       \
        const int64_t blk = 4 * (int64_t)lanes, count = n / blk;                             \
        T r = init;                                                                          \
        if (count > 0) {                                                                     \
            T acc[4 * MAXL] = {0};                                                               \
            for (int64_t k = 0; k < blk; k++) acc[k] = x[k];                                 \
            if (blk == 4 * MAXL / 2) { /* the usual width: a constant trip count */          \
                for (int64_t i = 1; i < count; i++)                                          \
                    for (int k = 0; k < 4 * MAXL / 2; k++) acc[k] *= x[i * (4 * MAXL / 2) + k]; \
            } else {                                                                         \
                for (int64_t i = 1; i < count; i++)                                          \
                    for (int64_t k = 0; k < blk; k++) acc[k] *= x[i * blk + k];              \
            }                                                                                \
            /* lane l of (v0 * v1) * (v2 * v3), the lanes multiplied in order */             \
            T b = (acc[0] * acc[lanes]) * (acc[2 * lanes] * acc[3 * lanes]);                 \
            for (int l = 1; l < lanes; l++)                                                  \
                b *= (acc[l] * acc[lanes + l]) * (acc[2 * lanes + l] * acc[3 * lanes + l]);  \
            r = r * b;                                                                       \
        }                                                                                    \
        for (int64_t k = count * blk; k < n; k++) r = r * x[k];                              \
        return r;                                                                            \
    }
PROD_RUN(float, f32_prod_run, 16)
PROD_RUN(double, f64_prod_run, 8)
#pragma GCC pop_options
