/* nn_ref_i64.c — the integer instances of the reference nn kernels upstream also runs on
 * integer tensors (convolution, max / average pooling, reflection / replication padding).
 * The op layer widens every integer dtype to int64 and narrows the results: the sums wrap
 * modulo 2^64 (unsigned arithmetic), so narrowing gives upstream's wrap in the narrow type. */
#include "kernels/nn.h"

void i64_conv2d__scalar(int64_t *y, const int64_t *x, const int64_t *w, const int64_t *bias, int64_t N, int64_t C,
                        int64_t H, int64_t W, int64_t O, int64_t G, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                        int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw) {
    int64_t Cg = C / G, Og = O / G;
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < O; o++) {
            const int64_t *wo = w + o * Cg * kh * kw;
            const int64_t *xg = x + (n * C + (o / Og) * Cg) * H * W;
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    uint64_t s = bias ? (uint64_t)bias[o] : 0;
                    for (int64_t c = 0; c < Cg; c++)
                        for (int64_t a = 0; a < kh; a++) {
                            int64_t hi = i * sh - ph + a * dh;
                            if (hi < 0 || hi >= H) continue;
                            for (int64_t b = 0; b < kw; b++) {
                                int64_t wi = j * sw - pw + b * dw;
                                if (wi < 0 || wi >= W) continue;
                                s += (uint64_t)xg[(c * H + hi) * W + wi] * (uint64_t)wo[(c * kh + a) * kw + b];
                            }
                        }
                    y[((n * O + o) * oh + i) * ow + j] = (int64_t)s;
                }
        }
}

void i64_max_pool2d__scalar(int64_t *y, int64_t *idx, const int64_t *x, int64_t P, int64_t H, int64_t W, int64_t oh,
                            int64_t ow, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                            int64_t dh, int64_t dw) {
    for (int64_t p = 0; p < P; p++) {
        const int64_t *xp = x + p * H * W;
        for (int64_t i = 0; i < oh; i++) {
            int64_t hs = i * sh - ph, he = hs + (kh - 1) * dh + 1;
            if (he > H) he = H;
            while (hs < 0) hs += dh;
            for (int64_t j = 0; j < ow; j++) {
                int64_t ws = j * sw - pw, we = ws + (kw - 1) * dw + 1;
                if (we > W) we = W;
                while (ws < 0) ws += dw;
                int64_t best = hs * W + ws, mx = INT64_MIN;
                for (int64_t a = hs; a < he; a += dh)
                    for (int64_t b = ws; b < we; b += dw)
                        if (xp[a * W + b] > mx) { mx = xp[a * W + b]; best = a * W + b; }
                y[(p * oh + i) * ow + j] = mx;
                if (idx) idx[(p * oh + i) * ow + j] = best;
            }
        }
    }
}

void i64_avg_pool2d__scalar(int64_t *y, const int64_t *x, int64_t P, int64_t H, int64_t W, int64_t oh, int64_t ow,
                            int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                            bool count_include_pad, int64_t divisor) {
    for (int64_t p = 0; p < P; p++) {
        const int64_t *xp = x + p * H * W;
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                int64_t hs = i * sh - ph, ws = j * sw - pw;
                int64_t he = hs + kh < H + ph ? hs + kh : H + ph, we = ws + kw < W + pw ? ws + kw : W + pw;
                int64_t pool = (he - hs) * (we - ws);
                if (hs < 0) hs = 0;
                if (ws < 0) ws = 0;
                if (he > H) he = H;
                if (we > W) we = W;
                int64_t *dst = &y[(p * oh + i) * ow + j];
                if (hs >= he || ws >= we) { *dst = 0; continue; }
                uint64_t s = 0;
                for (int64_t a = hs; a < he; a++)
                    for (int64_t b = ws; b < we; b++) s += (uint64_t)xp[a * W + b];
                int64_t div = divisor ? divisor : count_include_pad ? pool : (he - hs) * (we - ws);
                *dst = (int64_t)s / div; /* truncates toward zero, as upstream's integer division */
            }
    }
}

void i64_pad2d__scalar(int64_t *y, const int64_t *x, int64_t P, int64_t H, int64_t W, int64_t pt, int64_t pb,
                       int64_t pl, int64_t pr, bool reflect) {
    int64_t OH = tn_pad_size(H, pt, pb), OW = tn_pad_size(W, pl, pr);
    for (int64_t p = 0; p < P; p++)
        for (int64_t i = 0; i < OH; i++) {
            int64_t si = tn_pad_src(i, pt, H, reflect);
            for (int64_t j = 0; j < OW; j++) y[(p * OH + i) * OW + j] = x[(p * H + si) * W + tn_pad_src(j, pl, W, reflect)];
        }
}
