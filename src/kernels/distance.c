/* distance.c — upstream's pdist forward and backward kernels (see distance.h), one
 * template over float and double. */
#include "kernels/distance.h"

#include <math.h>
#include <string.h>

#include "core/threadpool.h"

enum { PD_ZERO, PD_ONE, PD_TWO, PD_INF, PD_GEN, PD_LT2 };

/* NaN-propagating min / max (upstream's vec::minimum / maximum) */
#define PD_MIN(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (a) : (b))
#define PD_MAX(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) > (b) ? (a) : (b))

/* the pair index k's rows (i, j), i < j: upstream's inversion of k = i n - i (i + 1) / 2 + j - i - 1 */
static void pair_of(int64_t k, int64_t n, int64_t *i, int64_t *j) {
    double n2 = (double)n - .5;
    *i = (int64_t)(n2 - sqrt(n2 * n2 - 2.0 * (double)k - 1.0));
    *j = k - n * *i + *i * (*i + 1) / 2 + *i + 1;
}

#define PDIST_TEMPLATE(T, SFX, SQRT, POW, CEIL, FLOOR, FABS)                                                          \
    static inline T map_##SFX(int kind, T d, T p) {                                                          \
        switch (kind) {                                                                                       \
        case PD_ZERO: {                                                                                       \
            T c = CEIL(d);                                                                                    \
            return PD_MIN(c, (T)1);                                                                           \
        }                                                                                                     \
        case PD_TWO: return d * d;                                                                            \
        case PD_GEN: return POW(d, p);                                                                        \
        default: return d;                                                                                    \
        }                                                                                                     \
    }                                                                                                         \
    static inline T red_##SFX(int kind, T a, T b) { return kind == PD_INF ? PD_MAX(a, b) : a + b; }          \
                                                                                                              \
    static T pair_##SFX(const T *a, const T *b, int64_t m, int L, int kind, T p, bool bfly) {                \
        T acc[TN_PDIST_MAX_LANES];                                                                            \
        if (m < L) { /* one partial vector, its lanes folded in order */                                     \
            T r = map_##SFX(kind, FABS(a[0] - b[0]), p);                                                      \
            for (int64_t c = 1; c < m; c++) r = red_##SFX(kind, r, map_##SFX(kind, FABS(a[c] - b[c]), p));   \
            return r;                                                                                         \
        }                                                                                                     \
        for (int l = 0; l < L; l++) acc[l] = map_##SFX(kind, FABS(a[l] - b[l]), p);                          \
        int64_t c = L, end = m - m % L;                                                                       \
        for (; c < end; c += L)                                                                               \
            for (int l = 0; l < L; l++) acc[l] = red_##SFX(kind, acc[l], map_##SFX(kind, FABS(a[c + l] - b[c + l]), p)); \
        for (int l = 0; l < m - c; l++) acc[l] = red_##SFX(kind, acc[l], map_##SFX(kind, FABS(a[c + l] - b[c + l]), p)); \
        if (bfly) {                                                                                           \
            for (int s = L / 2; s >= 1; s /= 2) {                                                             \
                T t[TN_PDIST_MAX_LANES];                                                                      \
                for (int l = 0; l < L; l++) t[l] = red_##SFX(kind, acc[l], acc[l ^ s]);                       \
                memcpy(acc, t, sizeof(T) * (size_t)L);                                                        \
            }                                                                                                 \
            return acc[0];                                                                                    \
        }                                                                                                     \
        T r = acc[0];                                                                                         \
        for (int l = 1; l < L; l++) r = red_##SFX(kind, r, acc[l]);                                           \
        return r;                                                                                             \
    }                                                                                                         \
                                                                                                              \
    typedef struct {                                                                                          \
        T *out;                                                                                               \
        const T *x;                                                                                           \
        int64_t n, m;                                                                                         \
        int kind, lanes;                                                                                      \
        T p;                                                                                                  \
        bool bfly;                                                                                            \
    } fwd_job_##SFX;                                                                                          \
                                                                                                              \
    static void fwd_chunk_##SFX(void *ctx, int64_t k0, int64_t k1) {                                          \
        const fwd_job_##SFX *j = ctx;                                                                         \
        int64_t i, jj;                                                                                        \
        pair_of(k0, j->n, &i, &jj);                                                                           \
        for (int64_t k = k0; k < k1; k++) {                                                                   \
            T agg = pair_##SFX(j->x + i * j->m, j->x + jj * j->m, j->m, j->lanes, j->kind, j->p, j->bfly);   \
            switch (j->kind) {                                                                                \
            case PD_TWO: agg = SQRT(agg); break;                                                              \
            case PD_GEN: agg = (T)pow((double)agg, 1.0 / (double)j->p); break;                               \
            default: break;                                                                                   \
            }                                                                                                 \
            j->out[k] = agg;                                                                                  \
            if (++jj == j->n) {                                                                               \
                i++;                                                                                          \
                jj = i + 1;                                                                                   \
            }                                                                                                 \
        }                                                                                                     \
    }                                                                                                         \
                                                                                                              \
    void tn_pdist_##SFX(T *out, const T *x, int64_t n, int64_t m, double pd, int lanes, bool butterfly) {    \
        const T p = (T)pd;                                                                                    \
        int kind = p == 0 ? PD_ZERO : p == 1 ? PD_ONE : p == 2 ? PD_TWO : isinf(p) ? PD_INF : PD_GEN;         \
        if (lanes < 1) lanes = 1;                                                                             \
        if (lanes > TN_PDIST_MAX_LANES) lanes = TN_PDIST_MAX_LANES;                                           \
        fwd_job_##SFX j = {out, x, n, m, kind, lanes, p, butterfly};                                          \
        int64_t combs = n * (n - 1) / 2, grain = 32768 / (16 * (m > 0 ? m : 1));                              \
        if (combs > 0) tn_parallel_for(combs, grain > 0 ? grain : 1, fwd_chunk_##SFX, &j);                    \
    }                                                                                                         \
                                                                                                              \
    static inline T sign_##SFX(T v) {                                                                         \
        T c = CEIL(v), f = FLOOR(v);                                                                          \
        T hi = PD_MAX((T)0, c), lo = PD_MAX((T)-1, f);                                                        \
        return PD_MIN(hi, (T)1) + PD_MIN(lo, (T)0);                                                           \
    }                                                                                                         \
    static inline T back_##SFX(int kind, T d, T g, T dist, T p) {                                            \
        switch (kind) {                                                                                       \
        case PD_ONE: return g * sign_##SFX(d);                                                                \
        case PD_LT2: return dist == 0 ? (T)0 : sign_##SFX(d) * POW(FABS(d), p - (T)1) * g / POW(dist, p - (T)1); \
        case PD_TWO: return dist == 0 ? (T)0 : g * d / dist;                                                  \
        case PD_INF: {                                                                                        \
            T e = CEIL(FABS(FABS(d) - dist));                                                                 \
            return g * sign_##SFX(d) * ((T)1 - PD_MIN((T)1, e));                                              \
        }                                                                                                     \
        default: return dist == 0 ? (T)0 : d * POW(FABS(d), p - (T)2) * g / POW(dist, p - (T)1);              \
        }                                                                                                     \
    }                                                                                                         \
                                                                                                              \
    typedef struct {                                                                                          \
        T *res;                                                                                               \
        const T *g, *x, *dist;                                                                                \
        int64_t gs, n, m;                                                                                     \
        int kind;                                                                                             \
        T p;                                                                                                  \
    } bwd_job_##SFX;                                                                                          \
                                                                                                              \
    /* columns [c0, c1): every pair in order, per element */                                                 \
    static void bwd_cols_##SFX(void *ctx, int64_t c0, int64_t c1) {                                           \
        const bwd_job_##SFX *j = ctx;                                                                         \
        const int64_t n = j->n, m = j->m;                                                                     \
        int64_t k = 0;                                                                                        \
        for (int64_t i = 0; i < n - 1; i++) {                                                                 \
            const T *xi = j->x + i * m;                                                                       \
            T *ri = j->res + i * m;                                                                           \
            for (int64_t jj = i + 1; jj < n; jj++, k++) {                                                     \
                const T *xj = j->x + jj * m;                                                                  \
                T *rj = j->res + jj * m;                                                                      \
                const T g = j->g[k * j->gs], dist = j->dist[k];                                               \
                for (int64_t c = c0; c < c1; c++) {                                                           \
                    T r = back_##SFX(j->kind, xi[c] - xj[c], g, dist, j->p);                                  \
                    ri[c] = ri[c] + r;                                                                        \
                    rj[c] = rj[c] - r;                                                                        \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
    }                                                                                                         \
                                                                                                              \
    void tn_pdist_backward_##SFX(T *res, const T *grad, int64_t gs, const T *x, const T *dist, int64_t n,     \
                                 int64_t m, double pd) {                                                      \
        memset(res, 0, sizeof(T) * (size_t)(n * m));                                                          \
        if (pd == 0 || n < 2 || m == 0) return;                                                               \
        int kind = pd == 1 ? PD_ONE : pd < 2 ? PD_LT2 : pd == 2 ? PD_TWO : isinf(pd) ? PD_INF : PD_GEN;       \
        bwd_job_##SFX j = {res, grad, x, dist, gs, n, m, kind, (T)pd};                                        \
        int64_t grain = 32768 / (8 * n * n);                                                                  \
        tn_parallel_for(m, grain > 0 ? grain : 1, bwd_cols_##SFX, &j);                                        \
    }

#pragma GCC push_options
#pragma GCC optimize("O3")
PDIST_TEMPLATE(float, f32, sqrtf, powf, ceilf, floorf, fabsf)
PDIST_TEMPLATE(double, f64, sqrt, pow, ceil, floor, fabs)
#pragma GCC pop_options
