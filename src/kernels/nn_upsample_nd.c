/* nn_upsample_nd.c — the float and double instances of the tap-table resampling kernels
 * (nn_upsample_nd.h). */
#include "kernels/nn_upsample_nd.h"

#define UPSAMPLE_ND(T, SFX)                                                                                    \
    void SFX##_upsample_nd__scalar(T *y, const T *x, int64_t P, const tn_up_table *t) {                        \
        int64_t ID = t->in[0], IH = t->in[1], IW = t->in[2], OD = t->out[0], OH = t->out[1], OW = t->out[2];  \
        int n0 = t->taps[0], n1 = t->taps[1], n2 = t->taps[2];                                                 \
        for (int64_t p = 0; p < P; p++) {                                                                      \
            const T *xp = x + p * ID * IH * IW;                                                                \
            T *yp = y + p * OD * OH * OW;                                                                      \
            for (int64_t od = 0; od < OD; od++)                                                                \
                for (int64_t oh = 0; oh < OH; oh++)                                                            \
                    for (int64_t ow = 0; ow < OW; ow++) {                                                      \
                        T sd = 0;                                                                              \
                        for (int a = 0; a < n0; a++) {                                                         \
                            const T *xd = xp + t->idx[0][od * n0 + a] * IH * IW;                               \
                            T sh = 0;                                                                          \
                            for (int b = 0; b < n1; b++) {                                                     \
                                const T *xh = xd + t->idx[1][oh * n1 + b] * IW;                                \
                                T sw = 0;                                                                      \
                                for (int c = 0; c < n2; c++) sw += xh[t->idx[2][ow * n2 + c]] * (T)t->w[2][ow * n2 + c]; \
                                sh += sw * (T)t->w[1][oh * n1 + b];                                            \
                            }                                                                                  \
                            sd += sh * (T)t->w[0][od * n0 + a];                                                \
                        }                                                                                      \
                        yp[(od * OH + oh) * OW + ow] = sd;                                                     \
                    }                                                                                          \
        }                                                                                                      \
    }                                                                                                          \
    void SFX##_upsample_nd_backward__scalar(T *gx, const T *gy, int64_t P, const tn_up_table *t) {            \
        int64_t ID = t->in[0], IH = t->in[1], IW = t->in[2], OD = t->out[0], OH = t->out[1], OW = t->out[2];  \
        int n0 = t->taps[0], n1 = t->taps[1], n2 = t->taps[2];                                                 \
        for (int64_t p = 0; p < P; p++) {                                                                      \
            T *xp = gx + p * ID * IH * IW;                                                                     \
            const T *yp = gy + p * OD * OH * OW;                                                               \
            for (int64_t od = 0; od < OD; od++)                                                                \
                for (int64_t oh = 0; oh < OH; oh++)                                                            \
                    for (int64_t ow = 0; ow < OW; ow++) {                                                      \
                        T g = yp[(od * OH + oh) * OW + ow];                                                    \
                        for (int a = 0; a < n0; a++) {                                                         \
                            T gd = g * (T)t->w[0][od * n0 + a];                                                \
                            T *xd = xp + t->idx[0][od * n0 + a] * IH * IW;                                     \
                            for (int b = 0; b < n1; b++) {                                                     \
                                T gh = gd * (T)t->w[1][oh * n1 + b];                                           \
                                T *xh = xd + t->idx[1][oh * n1 + b] * IW;                                      \
                                for (int c = 0; c < n2; c++) xh[t->idx[2][ow * n2 + c]] += gh * (T)t->w[2][ow * n2 + c]; \
                            }                                                                                  \
                        }                                                                                      \
                    }                                                                                          \
        }                                                                                                      \
    }

UPSAMPLE_ND(float, f32)
UPSAMPLE_ND(double, f64)
