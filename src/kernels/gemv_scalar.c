/* gemv_scalar.c — portable GEMV kernels (see gemv.h): four weight rows at a time against
 * every x vector, one float32 accumulator per output, summed in k order. They are the
 * fallback tier and the reference the vector kernels are tested against. */
#include <string.h>

#include "core/dtype.h"
#include "kernels/gemv.h"
#include "kernels/gemm_internal.h"

static inline float ld_f32(const float *p) { return *p; }
static inline float ld_bf16(const uint16_t *p) { return tn_bf16_to_f32(*p); }
/* float16 -> float32: the GEMM family's exact, vectorisable conversion. */
static inline float ld_f16(const uint16_t *p) { return tn_gemm_h2f(*p); }

#define R 4
#define DEFINE_SCALAR(NAME, T, LD)                                                            \
    void NAME(int64_t k, int m, const void *x_, int64_t ldx, const void *w_, int64_t ldw, int64_t nrows, \
              float *out, int64_t ldo) {                                                      \
        const T *x = x_, *w = w_;                                                             \
        int64_t r0 = 0;                                                                       \
        for (; r0 < nrows; r0 += R) {                                                         \
            int nr = nrows - r0 < R ? (int)(nrows - r0) : R;                                  \
            const T *wr = w + r0 * ldw;                                                       \
            for (int i = 0; i < m; i++) {                                                     \
                const T *xi = x + i * ldx;                                                    \
                float s[R] = {0};                                                             \
                if (nr == R) {                                                                \
                    for (int64_t p = 0; p < k; p++) {                                         \
                        float xv = LD(xi + p);                                                \
                        s[0] += xv * LD(wr + p);                                              \
                        s[1] += xv * LD(wr + ldw + p);                                        \
                        s[2] += xv * LD(wr + 2 * ldw + p);                                    \
                        s[3] += xv * LD(wr + 3 * ldw + p);                                    \
                    }                                                                         \
                } else {                                                                      \
                    for (int r = 0; r < nr; r++)                                              \
                        for (int64_t p = 0; p < k; p++) s[r] += LD(xi + p) * LD(wr + r * ldw + p); \
                }                                                                             \
                for (int r = 0; r < nr; r++) out[i * ldo + r0 + r] = s[r];                    \
            }                                                                                 \
        }                                                                                     \
    }

DEFINE_SCALAR(f32_gemv__scalar, float, ld_f32)
DEFINE_SCALAR(bf16_gemv__scalar, uint16_t, ld_bf16)
DEFINE_SCALAR(f16_gemv__scalar, uint16_t, ld_f16)
