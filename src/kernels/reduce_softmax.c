/* reduce_softmax.c — softmax / log-softmax over contiguous rows, in upstream's order:
 * a lane-wise max, exp(x - max), a lane-wise sum folded by a butterfly across lanes (as
 * upstream's vec_reduce_all does), then a multiply by the reciprocal (softmax) or a
 * subtraction of max and log-sum (log_softmax). float's exp comes from libm, double's from
 * a lane-wise vector polynomial (softmax_vec.inc), so single elements may differ from
 * upstream's SLEEF exp by an ulp. */
#include <math.h>

#include "kernels/reduce.h"

#define MAXL 16

#define DEFINE_SOFTMAX(T, NAME, EXPROW, LOG, ESIZE)                                           \
    /* upstream vec::reduce_all(+) over y[0..n) with `lanes` lanes */                         \
    static T NAME##_sum(const T *y, int64_t n, int lanes) {                                   \
        T acc[MAXL];                                                                          \
        if (n < lanes) {                                                                      \
            T s = y[0];                                                                       \
            for (int64_t i = 1; i < n; i++) s = s + y[i];                                     \
            return s;                                                                         \
        }                                                                                     \
        for (int l = 0; l < lanes; l++) acc[l] = y[l];                                        \
        int64_t d = lanes;                                                                    \
        for (; d < n - (n % lanes); d += lanes)                                               \
            for (int l = 0; l < lanes; l++) acc[l] = acc[l] + y[d + l];                       \
        for (int l = 0; d + l < n; l++) acc[l] = acc[l] + y[d + l];                           \
        for (int s = lanes / 2; s >= 1; s /= 2) {                                             \
            T nx[MAXL];                                                                       \
            for (int l = 0; l < lanes; l++) nx[l] = acc[l] + acc[l ^ s];                      \
            for (int l = 0; l < lanes; l++) acc[l] = nx[l];                                   \
        }                                                                                     \
        return acc[0];                                                                        \
    }                                                                                         \
    void NAME##_softmax_lastdim__scalar(T *out, const T *in, int64_t rows, int64_t n, int mode) {   \
        int lanes = tn_reduce_vec_bytes(true) / ESIZE;                                            \
        for (int64_t r = 0; r < rows; r++, in += n, out += n) {                               \
            T mx = in[0];                                                                     \
            for (int64_t i = 1; i < n; i++)                                                   \
                if (isnan(in[i]) || in[i] > mx) { if (!isnan(mx)) mx = in[i]; }               \
            if (mode != TN_SOFTMAX_PLAIN) {                                                   \
                EXPROW(out, in, n, mx);                                                       \
                T ls = ROUND(LOG(ROUND(NAME##_sum(out, n, lanes), mode)), mode);              \
                for (int64_t i = 0; i < n; i++) out[i] = in[i] - mx - ls;                     \
            } else {                                                                          \
                EXPROW(out, in, n, mx);                                                       \
                T inv = (T)1 / NAME##_sum(out, n, lanes);                                     \
                for (int64_t i = 0; i < n; i++) out[i] = out[i] * inv;                        \
            }                                                                                 \
        }                                                                                     \
    }

/* float: libm's expf per element; double: the lane-wise vector exp of softmax_vec.inc
 * (tn_exp_row_f64, the same bits on every ISA), as upstream's vectorised double kernel */
#define F32_EXPROW(out, in, n, mx) for (int64_t i = 0; i < n; i++) out[i] = expf(in[i] - mx)
#define ROUND(v, mode) tn_softmax_round(v, mode)
DEFINE_SOFTMAX(float, f32, F32_EXPROW, logf, 4)
#undef ROUND
#define ROUND(v, mode) (v)
DEFINE_SOFTMAX(double, f64, tn_exp_row_f64, log, 8)
#undef ROUND
