/* test_fft.c — the FFT kernel (src/kernels/fft.c) against a direct O(n^2) DFT in long
 * double at lengths through every path (radix 4 and 2, 3, 5, other small primes by the
 * direct butterfly, mixed lengths, Bluestein for large primes and lengths with one), both
 * signs, strided lines on the pool, the inverse undoing the forward, and the conversions. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fft.h"
#include "tn_test.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) { /* xorshift64*, uniform in [-1, 1) */
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (double)((rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2 - 1;
}

/* max |fft - dft| / max |dft| for one random line of length n and the given sign */
static double line_error(int64_t n, int sign) {
    double complex *x = malloc(sizeof *x * (size_t)n), *y = malloc(sizeof *y * (size_t)n);
    for (int64_t j = 0; j < n; j++) x[j] = y[j] = CMPLX(urand(), urand());
    tn_fft_plan *p = tn_fft_plan_new(n);
    double complex *s = malloc(sizeof *s * (size_t)tn_fft_plan_scratch(p));
    tn_fft_line(p, y, sign, s);
    double err = 0, mag = 0;
    for (int64_t k = 0; k < n; k++) {
        long double re = 0, im = 0;
        for (int64_t j = 0; j < n; j++) {
            long double a = sign * 2.0L * 3.14159265358979323846264338327950288L * (long double)((j * k) % n) / (long double)n;
            re += creal(x[j]) * cosl(a) - cimag(x[j]) * sinl(a);
            im += creal(x[j]) * sinl(a) + cimag(x[j]) * cosl(a);
        }
        double dr = (double)re - creal(y[k]), di = (double)im - cimag(y[k]);
        err = fmax(err, sqrt(dr * dr + di * di));
        mag = fmax(mag, (double)sqrtl(re * re + im * im));
    }
    tn_fft_plan_free(p);
    free(x), free(y), free(s);
    return err / mag;
}

int main(void) {
    static const int64_t lengths[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 25, 27, 32, 49, 59, 60, 61, 64, 67, 97,
                                      120, 127, 128, 131, 210, 243, 256, 257, 500, 509, 512, 1000, 1009, 1024, 2 * 67, 4 * 101};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++)
        for (int sign = -1; sign <= 1; sign += 2) {
            double e = line_error(lengths[i], sign);
            TN_CHECK(e < 1e-14 * (1 + log2((double)lengths[i])), "n=%lld sign=%d error %.3g", (long long)lengths[i], sign, e);
        }

    /* strided lines on the pool: 3 outer x 37 inner lines of length 50, stride 37, then the
     * inverse brings back n times the input */
    int64_t outer = 3, inner = 37, n = 50, total = outer * n * inner;
    double complex *d = malloc(sizeof *d * (size_t)total), *orig = malloc(sizeof *d * (size_t)total);
    for (int64_t i = 0; i < total; i++) d[i] = orig[i] = CMPLX(urand(), urand());
    tn_fft_plan *p = tn_fft_plan_new(n);
    TN_CHECK(tn_fft_lines(p, d, outer, n * inner, inner, inner, -1) == 0, "forward lines");
    /* line (1, 5) against a single-line transform of the same samples */
    double complex line[50], *s = malloc(sizeof *s * (size_t)tn_fft_plan_scratch(p));
    for (int64_t j = 0; j < n; j++) line[j] = orig[1 * n * inner + j * inner + 5];
    tn_fft_line(p, line, -1, s);
    double worst = 0;
    for (int64_t j = 0; j < n; j++) worst = fmax(worst, cabs(line[j] - d[1 * n * inner + j * inner + 5]));
    TN_CHECK(worst == 0, "a strided line differs from the same line alone by %.3g", worst);
    TN_CHECK(tn_fft_lines(p, d, outer, n * inner, inner, inner, 1) == 0, "inverse lines");
    worst = 0;
    for (int64_t i = 0; i < total; i++) worst = fmax(worst, cabs(d[i] / (double)n - orig[i]));
    TN_CHECK(worst < 1e-14, "inverse(forward(x)) / n differs from x by %.3g", worst);

    /* widening and narrowing: float32 rows in, complex64 rows of a cut row out */
    float f[6] = {1, -2, 3.5f, 4, 5, 6}, back[4];
    double complex w[6];
    tn_fft_widen(w, f, TN_FFT_F32, 6);
    TN_CHECK(creal(w[2]) == 3.5 && cimag(w[2]) == 0, "widened %g%+gi", creal(w[2]), cimag(w[2]));
    tn_fft_narrow_rows(back, TN_FFT_C64, w, 2, 1, 3); /* element 0 of each row of 3 */
    TN_CHECK(back[0] == 1 && back[1] == 0 && back[2] == 4 && back[3] == 0, "narrowed %g %g %g %g", back[0], back[1], back[2], back[3]);
    tn_fft_plan_free(p);
    free(d), free(orig), free(s);
    return tn_test_summary();
}
