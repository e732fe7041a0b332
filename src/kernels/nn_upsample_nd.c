/* nn_upsample_nd.c — the float and double instances of the tap-table resampling kernels
 * (nn_upsample_nd.h). */
#include "kernels/nn_upsample_nd.h"

#include <stdlib.h>

#define UPSAMPLE_ND(T, SFX)                                                                                    \
    void SFX##_upsample_nd__scalar(T *y, const T *x, int64_t P, const tn_up_table *t) {                        \
        int64_t ID = t->in[0], IH = t->in[1], IW = t->in[2], OD = t->out[0], OH = t->out[1], OW = t->out[2];  \
        int n0 = t->taps[0], n1 = t->taps[1], n2 = t->taps[2];                                                 \
        T *wt = n0 == 1 && n1 == 1 ? malloc(sizeof(T) * (size_t)(OW * n2)) : NULL;                   \
        if (wt) { /* one tap on the outer dims (1-d, or 2-d nearest-like rows): the same sums, the    \
                   * inner weights in T once and the outer ones hoisted per row (the generic loops   \
                   * per output: 5x upstream's time for linear 1-d) */                                 \
            for (int64_t q = 0; q < OW * n2; q++) wt[q] = (T)t->w[2][q];                              \
            for (int64_t p = 0; p < P; p++)                                                            \
                for (int64_t od = 0; od < OD; od++)                                                    \
                    for (int64_t oh = 0; oh < OH; oh++) {                                              \
                        const T *xh = x + p * ID * IH * IW + t->idx[0][od] * IH * IW + t->idx[1][oh] * IW; \
                        const T w0 = (T)t->w[0][od], w1 = (T)t->w[1][oh];                            \
                        T *yr = y + ((p * OD + od) * OH + oh) * OW;                                    \
                        if (n2 == 2) /* linear: the two taps' sum spelled out, same order */          \
                            for (int64_t ow = 0; ow < OW; ow++) {                                      \
                                const int64_t *ix = t->idx[2] + 2 * ow;                                \
                                const T sw = ((T)0 + xh[ix[0]] * wt[2 * ow]) + xh[ix[1]] * wt[2 * ow + 1]; \
                                const T sh = (T)0 + sw * w1;                                           \
                                yr[ow] = (T)0 + sh * w0;                                               \
                            }                                                                          \
                        else                                                                           \
                        for (int64_t ow = 0; ow < OW; ow++) {                                          \
                            T sw = 0;                                                                  \
                            for (int c = 0; c < n2; c++) sw += xh[t->idx[2][ow * n2 + c]] * wt[ow * n2 + c]; \
                            const T sh = (T)0 + sw * w1;                                               \
                            yr[ow] = (T)0 + sh * w0;                                                   \
                        }                                                                              \
                    }                                                                                  \
            free(wt);                                                                                  \
            return;                                                                                    \
        }                                                                                              \
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
