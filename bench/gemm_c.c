/* gemm_c.c — float32 tn_gemm timed in C, without Python or tensor allocation in the loop:
 * the harness behind the engine measurements in docs/GEMM.md ("Float32 engine, session 5")
 * and the `perf record` profiles there. Build after scripts/build.py, from the repository:
 *   gcc -O2 -Isrc bench/gemm_c.c build/libtncore.a -o /tmp/gemm_c -lm -lpthread -ldl
 *   /tmp/gemm_c M K N lin|mm THREADS SECONDS [NB]
 * lin: B is a linear layer's weight (n × k, read transposed, as F.linear); mm: B is a
 * row-major k × n matrix (torch.mm). A is row-major m × k, C row-major m × n. Prints the
 * best single call and the mean over SECONDS of back-to-back calls, in GFLOP/s (the suite,
 * bench/run.py, times means of call loops). NB > 1 cycles through NB different B matrices,
 * so that B comes from memory as a model's weights do (bench/micro.py linear does the same
 * through torch). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/threadpool.h"
#include "kernels/gemm.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s M K N lin|mm THREADS SECONDS [NB]\n", argv[0]);
        return 2;
    }
    const int64_t m = atoll(argv[1]), k = atoll(argv[2]), n = atoll(argv[3]);
    const int lin = !strcmp(argv[4], "lin");
    const int threads = atoi(argv[5]);
    const double secs = atof(argv[6]);
    const int64_t nb = argc > 7 && atoll(argv[7]) > 1 ? atoll(argv[7]) : 1;
    tn_set_num_threads(threads);
    float *a = aligned_alloc(64, (size_t)(m * k) * 4), *bs = aligned_alloc(64, (size_t)(nb * k * n) * 4),
          *c = aligned_alloc(64, (size_t)(m * n) * 4), *b = bs;
    if (!a || !bs || !c) return 1;
    for (int64_t i = 0; i < m * k; i++) a[i] = (float)(i % 13) * 0.01f;
    for (int64_t i = 0; i < nb * k * n; i++) bs[i] = (float)(i % 7) * 0.01f;
    tn_gemm_desc g = tn_gemm_desc_init(TN_DTYPE_FLOAT32);
    g.m = m, g.n = n, g.k = k, g.a = a, g.b = b, g.c = c;
    g.a_rs = k, g.a_cs = 1, g.c_rs = n, g.c_cs = 1;
    g.b_rs = lin ? 1 : n;
    g.b_cs = lin ? k : 1;
    if (tn_gemm(&g, NULL, 0) != TN_OK) return 1;
    /* a wrong engine must not be timed: 64 entries of C against double-precision sums */
    for (int t = 0; t < 64; t++) {
        const int64_t i = (t * 7919) % m, j = (t * 104729) % n;
        double s = 0, sa = 0;
        for (int64_t p = 0; p < k; p++) {
            const double x = (double)a[i * k + p] * (double)b[lin ? j * k + p : p * n + j];
            s += x, sa += x < 0 ? -x : x;
        }
        if (fabs(c[i * n + j] - s) > 1e-5 * sa + 1e-30) {
            fprintf(stderr, "C(%lld, %lld) = %g, expected %g\n", (long long)i, (long long)j, c[i * n + j], s);
            return 1;
        }
    }
    double best = 1e30, t0 = now(), total;
    long calls = 0;
    while (now() - t0 < secs) {
        g.b = bs + calls % nb * k * n;
        double t = now();
        tn_gemm(&g, NULL, 0);
        t = now() - t;
        if (t < best) best = t;
        calls++;
    }
    total = now() - t0;
    const double flop = 2.0 * (double)(m * n * k);
    printf("%s %lldx%lldx%lld threads=%d%s: best %.1f mean %.1f GFLOP/s (%ld calls, variant %s)\n", argv[4],
           (long long)m, (long long)k, (long long)n, threads, nb > 1 ? " (B cycled)" : "", flop / best * 1e-9, flop * calls / total * 1e-9, calls,
           tn_gemm_variant(TN_DTYPE_FLOAT32));
    free(a), free(bs), free(c);
    return 0;
}
