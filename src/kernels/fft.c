/* fft.c — complex double FFT of one length (fft.h): recursive decimation in time over the
 * length's factors (radix 4 and 2 first, then 3, 5 and other small primes with a direct
 * butterfly), Bluestein's algorithm when a prime factor is large. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/fft.h"

#define TN_FFT_MAX_FACTORS 64
#define TN_FFT_DIRECT_PRIME 61 /* larger prime factors go through Bluestein */

struct tn_fft_plan {
    int64_t n;
    int nf;
    int factors[TN_FFT_MAX_FACTORS];
    double complex *tw;      /* e^{-2 pi i j / n}, j < n (forward twiddles) */
    /* Bluestein (blue != NULL): length m power of two, chirp b_j = e^{-pi i j^2 / n} and
     * the forward transform of the conjugate chirp, zero padded and wrapped, of length m */
    tn_fft_plan *blue;
    double complex *chirp, *chirp_ft;
};

/* a * b without C99's Annex G checks (which call __muldc3 per product): the FFT's operands
 * are finite twiddles, and NaN/inf inputs still propagate through the plain formula. */
static inline double complex cmul(double complex a, double complex b) {
    double ar = creal(a), ai = cimag(a), br = creal(b), bi = cimag(b);
    return CMPLX(ar * br - ai * bi, ar * bi + ai * br);
}

/* e^{-2 pi i num / den} from an exact integer angle reduced modulo den. */
static double complex unit_root(int64_t num, int64_t den) {
    num %= den;
    if (num < 0) num += den;
    double a = -2.0 * M_PI * (double)num / (double)den;
    return cos(a) + I * sin(a);
}

static int factorise(int64_t n, int *f) {
    int nf = 0;
    while (n % 4 == 0) { f[nf++] = 4; n /= 4; }
    while (n % 2 == 0) { f[nf++] = 2; n /= 2; }
    for (int64_t p = 3; p * p <= n; p += 2)
        while (n % p == 0) { f[nf++] = (int)p; n /= p; }
    if (n > 1) f[nf++] = n > TN_FFT_DIRECT_PRIME ? -1 : (int)n; /* -1: a large prime */
    return nf;
}

void tn_fft_plan_free(tn_fft_plan *p) {
    if (!p) return;
    free(p->tw);
    free(p->chirp);
    free(p->chirp_ft);
    tn_fft_plan_free(p->blue);
    free(p);
}

tn_fft_plan *tn_fft_plan_new(int64_t n) {
    tn_fft_plan *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = n;
    p->nf = factorise(n, p->factors);
    bool large = p->nf > 0 && p->factors[p->nf - 1] == -1;
    if (large) {
        int64_t m = 1;
        while (m < 2 * n - 1) m *= 2;
        p->blue = tn_fft_plan_new(m);
        p->chirp = malloc(sizeof(double complex) * (size_t)n);
        p->chirp_ft = calloc((size_t)m, sizeof(double complex));
        double complex *s = malloc(sizeof(double complex) * (size_t)tn_fft_plan_scratch(p->blue));
        if (!p->blue || !p->chirp || !p->chirp_ft || !s) { free(s); tn_fft_plan_free(p); return NULL; }
        for (int64_t j = 0; j < n; j++) {
            /* j^2 / 2n reduced modulo 1 in integers, so large j keeps its precision */
            int64_t q = (int64_t)(((unsigned __int128)j * (unsigned __int128)j) % (unsigned __int128)(2 * n));
            p->chirp[j] = unit_root(q, 2 * n);
        }
        p->chirp_ft[0] = conj(p->chirp[0]);
        for (int64_t j = 1; j < n; j++) p->chirp_ft[j] = p->chirp_ft[m - j] = conj(p->chirp[j]);
        tn_fft_line(p->blue, p->chirp_ft, -1, s);
        free(s);
        return p;
    }
    p->tw = malloc(sizeof(double complex) * (size_t)n);
    if (!p->tw) { tn_fft_plan_free(p); return NULL; }
    for (int64_t j = 0; j < n; j++) p->tw[j] = unit_root(j, n);
    return p;
}

int64_t tn_fft_plan_scratch(const tn_fft_plan *p) {
    if (p->blue) return 2 * p->blue->n + tn_fft_plan_scratch(p->blue);
    return 2 * p->n + TN_FFT_DIRECT_PRIME;
}

/* Twiddle e^{sign 2 pi i j / n} for 0 <= j < n from the forward table. */
static inline double complex twiddle(const tn_fft_plan *p, int64_t j, int sign) {
    double complex w = p->tw[j];
    return sign < 0 ? w : conj(w);
}

/* out[0..n) = DFT of in[0], in[s], ..., factors f[0..nf) of n; tw holds the full length's
 * twiddles, tws = full length / n. `tmp` holds at least the largest factor. */
static void rec(const tn_fft_plan *p, int64_t n, const double complex *in, int64_t s, double complex *out,
                const int *f, int nf, int64_t tws, int sign, double complex *tmp) {
    if (n == 1) { out[0] = in[0]; return; }
    int r = f[0];
    int64_t m = n / r;
    if (m == 1) /* the sub-transforms of length 1 are the samples themselves */
        for (int q = 0; q < r; q++) out[q] = in[q * s];
    else
        for (int q = 0; q < r; q++) rec(p, m, in + q * s, s * r, out + q * m, f + 1, nf - 1, tws * r, sign, tmp);
    if (r == 2) {
        for (int64_t k = 0; k < m; k++) {
            double complex a = out[k], b = cmul(out[m + k], twiddle(p, k * tws, sign));
            out[k] = a + b;
            out[m + k] = a - b;
        }
    } else if (r == 4) {
        for (int64_t k = 0; k < m; k++) {
            double complex a0 = out[k], a1 = cmul(out[m + k], twiddle(p, k * tws, sign)),
                           a2 = cmul(out[2 * m + k], twiddle(p, 2 * k * tws, sign)),
                           a3 = cmul(out[3 * m + k], twiddle(p, 3 * k * tws, sign));
            double complex d = a1 - a3; /* times -i (forward) or i (inverse) */
            double complex t0 = a0 + a2, t1 = a0 - a2, t2 = a1 + a3,
                           t3 = sign < 0 ? CMPLX(cimag(d), -creal(d)) : CMPLX(-cimag(d), creal(d));
            out[k] = t0 + t2;
            out[m + k] = t1 + t3;
            out[2 * m + k] = t0 - t2;
            out[3 * m + k] = t1 - t3;
        }
    } else {
        /* direct radix-r butterfly: out[k + q m] = sum_u w^{u (k + q m)} out[u m + k] */
        int64_t N = n * tws; /* the plan's full length */
        for (int64_t k = 0; k < m; k++) {
            for (int u = 0; u < r; u++) tmp[u] = cmul(out[u * m + k], twiddle(p, (u * k * tws) % N, sign));
            for (int q = 0; q < r; q++) {
                double complex acc = 0;
                for (int u = 0; u < r; u++) acc += cmul(tmp[u], twiddle(p, ((int64_t)u * q % r) * m * tws, sign));
                out[q * m + k] = acc;
            }
        }
    }
}

void tn_fft_line(const tn_fft_plan *p, double complex *x, int sign, double complex *scratch) {
    int64_t n = p->n;
    if (n == 1) return;
    if (p->blue) {
        /* X_k = b_k sum_j (x_j b_j) conj(b_{k-j}), b = chirp (conjugated for the inverse) */
        int64_t m = p->blue->n;
        double complex *a = scratch, *s = scratch + 2 * m;
        for (int64_t j = 0; j < n; j++) a[j] = cmul(x[j], sign < 0 ? p->chirp[j] : conj(p->chirp[j]));
        memset(a + n, 0, sizeof(double complex) * (size_t)(m - n));
        tn_fft_line(p->blue, a, -1, s);
        /* the inverse's kernel is conj(chirp_ft) read backwards: conj(FT(conj c)) at -k */
        for (int64_t k = 0; k < m; k++) a[k] = cmul(a[k], sign < 0 ? p->chirp_ft[k] : conj(p->chirp_ft[(m - k) % m]));
        tn_fft_line(p->blue, a, 1, s);
        double inv = 1.0 / (double)m;
        for (int64_t k = 0; k < n; k++) x[k] = cmul(a[k] * inv, sign < 0 ? p->chirp[k] : conj(p->chirp[k]));
        return;
    }
    double complex *out = scratch, *tmp = scratch + n;
    rec(p, n, x, 1, out, p->factors, p->nf, 1, sign, tmp);
    memcpy(x, out, sizeof(double complex) * (size_t)n);
}

typedef struct lines_ctx {
    const tn_fft_plan *p;
    double complex *data;
    int64_t outer_stride, ninner, line_stride, scratch;
    int sign;
    int failed;
} lines_ctx;

static void lines_range(void *vctx, int64_t begin, int64_t end) {
    lines_ctx *c = vctx;
    int64_t n = c->p->n;
    double complex *buf = malloc(sizeof(double complex) * (size_t)(n + c->scratch));
    if (!buf) { c->failed = 1; return; }
    for (int64_t l = begin; l < end; l++) {
        double complex *base = c->data + (l / c->ninner) * c->outer_stride + (l % c->ninner);
        if (c->line_stride == 1) {
            tn_fft_line(c->p, base, c->sign, buf + n);
            continue;
        }
        for (int64_t j = 0; j < n; j++) buf[j] = base[j * c->line_stride];
        tn_fft_line(c->p, buf, c->sign, buf + n);
        for (int64_t j = 0; j < n; j++) base[j * c->line_stride] = buf[j];
    }
    free(buf);
}

int tn_fft_lines(const tn_fft_plan *p, double complex *data, int64_t nouter, int64_t outer_stride,
                 int64_t ninner, int64_t line_stride, int sign) {
    lines_ctx c = {p, data, outer_stride, ninner, line_stride, tn_fft_plan_scratch(p), sign, 0};
    int64_t lines = nouter * ninner;
    /* a grain of about 32k points per task: small transforms stay on the caller */
    int64_t grain = 32768 / (p->n > 0 ? p->n : 1);
    tn_parallel_for(lines, grain > 1 ? grain : 1, lines_range, &c);
    return c.failed ? -1 : 0;
}

typedef struct conv_ctx {
    void *dst;
    const void *src;
    tn_fft_elem elem;
    int64_t row_len, src_row_stride;
} conv_ctx;

static void widen_range(void *vc, int64_t b, int64_t e) {
    conv_ctx *c = vc;
    double complex *d = c->dst;
    switch (c->elem) {
    case TN_FFT_F32: for (int64_t i = b; i < e; i++) d[i] = CMPLX(((const float *)c->src)[i], 0.0); break;
    case TN_FFT_F64: for (int64_t i = b; i < e; i++) d[i] = CMPLX(((const double *)c->src)[i], 0.0); break;
    case TN_FFT_C64: for (int64_t i = b; i < e; i++) d[i] = CMPLX(((const float *)c->src)[2 * i], ((const float *)c->src)[2 * i + 1]); break;
    case TN_FFT_C128: memcpy(d + b, (const double complex *)c->src + b, sizeof(double complex) * (size_t)(e - b)); break;
    }
}

void tn_fft_widen(double complex *dst, const void *src, tn_fft_elem from, int64_t n) {
    conv_ctx c = {dst, src, from, 0, 0};
    tn_parallel_for(n, 1 << 16, widen_range, &c);
}

static void narrow_range(void *vc, int64_t b, int64_t e) {
    conv_ctx *c = vc;
    int64_t L = c->row_len;
    for (int64_t r = b; r < e; r++) {
        const double complex *s = (const double complex *)c->src + r * c->src_row_stride;
        switch (c->elem) {
        case TN_FFT_F32: { float *d = (float *)c->dst + r * L; for (int64_t j = 0; j < L; j++) d[j] = (float)creal(s[j]); break; }
        case TN_FFT_F64: { double *d = (double *)c->dst + r * L; for (int64_t j = 0; j < L; j++) d[j] = creal(s[j]); break; }
        case TN_FFT_C64: {
            float *d = (float *)c->dst + 2 * r * L;
            for (int64_t j = 0; j < L; j++) { d[2 * j] = (float)creal(s[j]); d[2 * j + 1] = (float)cimag(s[j]); }
            break;
        }
        case TN_FFT_C128: memcpy((double complex *)c->dst + r * L, s, sizeof(double complex) * (size_t)L); break;
        }
    }
}

void tn_fft_narrow_rows(void *dst, tn_fft_elem to, const double complex *src, int64_t rows, int64_t row_len,
                        int64_t src_row_stride) {
    conv_ctx c = {dst, src, to, row_len, src_row_stride};
    int64_t grain = (1 << 16) / (row_len > 0 ? row_len : 1);
    tn_parallel_for(rows, grain > 1 ? grain : 1, narrow_range, &c);
}
