/* The machine's physical limits, measured in the same run as the benchmarks
 * (see ../shared/BENCHMARKS.md): memory read bandwidth and FMA peak, at 1 and all threads.
 *
 *   gcc -O2 -pthread bench/machine.c -o machine && ./machine [buffer_MiB] [seconds] [bw]
 *
 * With a third argument "bw" only the read bandwidth at all threads is measured (bench/run.py
 * runs that beside every decode run, since this VM's bandwidth moves within a run).
 *
 * Prints one JSON object on stdout. bench/run.py compiles and runs it.
 *
 * Read bandwidth: a streaming read (vector loads summed into independent accumulators) over
 * a buffer far larger than the last-level cache, split into one contiguous chunk per thread;
 * the best of several passes. FMA peak: independent chains of fused multiply-adds (enough
 * chains to cover latency x ports), AVX-512 (zmm), AVX2 (ymm) and, if present, the
 * AVX512-BF16 dot product (vdpbf16ps, counted as 2 flops per bf16 pair). */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------- read bandwidth ---------------- */

typedef struct {
    const char *p;
    size_t n;     /* bytes, multiple of 512 */
    double sink;
    int mode;     /* 0 = touch (write), 1 = read avx512, 2 = read avx2 */
} chunk_t;

__attribute__((target("avx512f"))) static double read512(const char *p, size_t n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (size_t i = 0; i < n; i += 512) {
        const float *f = (const float *)(p + i);
        a0 = _mm512_add_ps(a0, _mm512_load_ps(f + 0));
        a1 = _mm512_add_ps(a1, _mm512_load_ps(f + 16));
        a2 = _mm512_add_ps(a2, _mm512_load_ps(f + 32));
        a3 = _mm512_add_ps(a3, _mm512_load_ps(f + 48));
        a4 = _mm512_add_ps(a4, _mm512_load_ps(f + 64));
        a5 = _mm512_add_ps(a5, _mm512_load_ps(f + 80));
        a6 = _mm512_add_ps(a6, _mm512_load_ps(f + 96));
        a7 = _mm512_add_ps(a7, _mm512_load_ps(f + 112));
    }
    a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                       _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    return (double)_mm512_reduce_add_ps(a0);
}

__attribute__((target("avx2"))) static double read256(const char *p, size_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (size_t i = 0; i < n; i += 256) {
        const float *f = (const float *)(p + i);
        a0 = _mm256_add_ps(a0, _mm256_load_ps(f + 0));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(f + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(f + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(f + 24));
        a4 = _mm256_add_ps(a4, _mm256_load_ps(f + 32));
        a5 = _mm256_add_ps(a5, _mm256_load_ps(f + 40));
        a6 = _mm256_add_ps(a6, _mm256_load_ps(f + 48));
        a7 = _mm256_add_ps(a7, _mm256_load_ps(f + 56));
    }
    a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                       _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    float t[8];
    _mm256_storeu_ps(t, a0);
    double s = 0;
    for (int i = 0; i < 8; i++) s += t[i];
    return s;
}

static void *chunk_worker(void *arg) {
    chunk_t *c = arg;
    if (c->mode == 0) {
        /* first touch from the thread that will read the chunk; small values, no denormals */
        float *f = (float *)c->p;
        for (size_t i = 0; i < c->n / sizeof(float); i++) f[i] = (float)(i & 7) * 0.125f;
    } else if (c->mode == 1) {
        c->sink = read512(c->p, c->n);
    } else {
        c->sink = read256(c->p, c->n);
    }
    return NULL;
}

/* one pass over the whole buffer with `threads` threads; returns seconds */
static double pass(char *buf, size_t bytes, int threads, int mode, double *sink) {
    pthread_t tid[256];
    chunk_t ch[256];
    size_t per = (bytes / (size_t)threads) & ~(size_t)511;
    double t0 = now();
    for (int t = 0; t < threads; t++) {
        ch[t] = (chunk_t){buf + (size_t)t * per, per, 0.0, mode};
        pthread_create(&tid[t], NULL, chunk_worker, &ch[t]);
    }
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        *sink += ch[t].sink;
    }
    return now() - t0;
}

/* ---------------- FMA peak ---------------- */

typedef struct {
    int kind;      /* 0 = avx512 fp32 FMA, 1 = avx2 fp32 FMA, 2 = avx512-bf16 dot */
    long iters;
    double sink;
} fma_t;

#define CHAINS512 20
#define CHAINS256 10

__attribute__((target("avx512f,fma"))) static double fma512(long iters) {
    __m512 acc[CHAINS512];
    const __m512 m = _mm512_set1_ps(0.999f), a = _mm512_set1_ps(0.001f);
    for (int c = 0; c < CHAINS512; c++) acc[c] = _mm512_set1_ps((float)c);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 20
        for (int c = 0; c < CHAINS512; c++) acc[c] = _mm512_fmadd_ps(acc[c], m, a);
    }
    __m512 s = acc[0];
    for (int c = 1; c < CHAINS512; c++) s = _mm512_add_ps(s, acc[c]);
    return (double)_mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static double fma256(long iters) {
    __m256 acc[CHAINS256];
    const __m256 m = _mm256_set1_ps(0.999f), a = _mm256_set1_ps(0.001f);
    for (int c = 0; c < CHAINS256; c++) acc[c] = _mm256_set1_ps((float)c);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 10
        for (int c = 0; c < CHAINS256; c++) acc[c] = _mm256_fmadd_ps(acc[c], m, a);
    }
    __m256 s = acc[0];
    for (int c = 1; c < CHAINS256; c++) s = _mm256_add_ps(s, acc[c]);
    float t[8];
    _mm256_storeu_ps(t, s);
    double r = 0;
    for (int i = 0; i < 8; i++) r += t[i];
    return r;
}

__attribute__((target("avx512f,avx512bf16"))) static double dot512bf16(long iters) {
    __m512 acc[CHAINS512];
    /* bf16 pairs of small values: the sums grow slowly and stay finite */
    const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3a83); /* ~0.001 */
    const __m512bh y = (__m512bh)_mm512_set1_epi16(0x3f80); /* 1.0 */
    for (int c = 0; c < CHAINS512; c++) acc[c] = _mm512_set1_ps((float)c);
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 20
        for (int c = 0; c < CHAINS512; c++) acc[c] = _mm512_dpbf16_ps(acc[c], x, y);
    }
    __m512 s = acc[0];
    for (int c = 1; c < CHAINS512; c++) s = _mm512_add_ps(s, acc[c]);
    return (double)_mm512_reduce_add_ps(s);
}

static void *fma_worker(void *arg) {
    fma_t *f = arg;
    f->sink = f->kind == 0 ? fma512(f->iters) : f->kind == 1 ? fma256(f->iters) : dot512bf16(f->iters);
    return NULL;
}

static double flops_per_iter(int kind) {
    /* per loop iteration of one thread */
    return kind == 0 ? 2.0 * 16 * CHAINS512 : kind == 1 ? 2.0 * 8 * CHAINS256 : 2.0 * 32 * CHAINS512;
}

/* GFLOP/s with `threads` threads, best of `reps` */
static double fma_peak(int kind, int threads, double seconds, int reps, double *sink) {
    /* calibrate the iteration count on one thread */
    long iters = 1 << 16;
    for (;;) {
        fma_t f = {kind, iters, 0};
        double t0 = now();
        fma_worker(&f);
        double dt = now() - t0;
        *sink += f.sink;
        if (dt > 0.05) {
            iters = (long)((double)iters * seconds / dt) + 1;
            break;
        }
        iters *= 4;
    }
    double best = 0;
    for (int r = 0; r < reps; r++) {
        pthread_t tid[256];
        fma_t f[256];
        double t0 = now();
        for (int t = 0; t < threads; t++) {
            f[t] = (fma_t){kind, iters, 0};
            pthread_create(&tid[t], NULL, fma_worker, &f[t]);
        }
        for (int t = 0; t < threads; t++) {
            pthread_join(tid[t], NULL);
            *sink += f[t].sink;
        }
        double dt = now() - t0;
        double g = flops_per_iter(kind) * (double)iters * threads / dt * 1e-9;
        if (g > best) best = g;
    }
    return best;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 4096;
    double seconds = argc > 2 ? atof(argv[2]) : 0.25;
    int all = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (all < 1) all = 1;
    if (all > 256) all = 256;
    __builtin_cpu_init();
    int has512 = __builtin_cpu_supports("avx512f");
    int has2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int hasbf16 = has512 && __builtin_cpu_supports("avx512bf16");
    double sink = 0;

    size_t bytes = mib << 20;
    char *buf = aligned_alloc(4096, bytes);
    if (!buf) {
        fprintf(stderr, "machine: cannot allocate %zu MiB\n", mib);
        return 1;
    }
    int mode = has512 ? 1 : 2;
    pass(buf, bytes, all, 0, &sink); /* touch every page, spread over the threads */
    if (argc > 3 && !strcmp(argv[3], "bw")) { /* the read bandwidth at all threads only */
        double best = 0;
        for (int r = 0; r < 4; r++) {
            double dt = pass(buf, bytes, all, mode, &sink);
            double g = (double)((bytes / (size_t)all) & ~(size_t)511) * all / dt * 1e-9;
            if (g > best) best = g;
        }
        free(buf);
        printf("{\"threads_all\": %d, \"buffer_mib\": %zu, \"read_gb_s_all\": %.3f, \"sink\": %g}\n", all, mib, best,
               sink != sink ? 0.0 : 1.0);
        return 0;
    }
    double bw[2] = {0, 0};
    int tcount[2] = {1, all};
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < 4; r++) {
            double dt = pass(buf, bytes, tcount[k], mode, &sink);
            double g = (double)((bytes / (size_t)tcount[k]) & ~(size_t)511) * tcount[k] / dt * 1e-9;
            if (g > bw[k]) bw[k] = g;
        }
    }
    free(buf);

    double peak[3][2] = {{0}};
    int present[3] = {has512, has2, hasbf16};
    for (int kind = 0; kind < 3; kind++)
        for (int k = 0; k < 2; k++)
            if (present[kind]) peak[kind][k] = fma_peak(kind, tcount[k], seconds, 3, &sink);

    printf("{\"threads_all\": %d, \"buffer_mib\": %zu, \"read_vector\": \"%s\",\n"
           " \"read_gb_s_1\": %.3f, \"read_gb_s_all\": %.3f,\n"
           " \"fma_avx512_gflops_1\": %.2f, \"fma_avx512_gflops_all\": %.2f,\n"
           " \"fma_avx2_gflops_1\": %.2f, \"fma_avx2_gflops_all\": %.2f,\n"
           " \"dot_avx512bf16_gflops_1\": %.2f, \"dot_avx512bf16_gflops_all\": %.2f,\n"
           " \"sink\": %g}\n",
           all, mib, mode == 1 ? "avx512" : "avx2", bw[0], bw[1], peak[0][0], peak[0][1], peak[1][0], peak[1][1],
           peak[2][0], peak[2][1], sink != sink ? 0.0 : 1.0);
    return 0;
}
