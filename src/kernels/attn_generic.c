/* attn_generic.c — the baseline-ISA instance of the blocked attention kernel
 * (attn_flash.inc, 4-float vectors), the scratch sizing and the threaded driver that picks
 * the AVX-512 / AVX2 / baseline instance from tn_cpu_isa(). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/threadpool.h"
#include "kernels/cpu_features.h"
#include "kernels/nn.h"

#define VW 4
#define SFX generic
#include "kernels/attn_flash.inc"

static size_t per_worker_floats(const tn_attn_desc *d) {
    int64_t ep = tn_attn_pad(d->E), evp = tn_attn_pad(d->Ev);
    return (size_t)(ATTN_BR * ep + ATTN_BK * ep + ATTN_BK * evp + ATTN_BR * ATTN_BK + ATTN_BR * evp + 3 * ATTN_BR + 16);
}

static int64_t n_tasks(const tn_attn_desc *d) {
    int64_t R = d->Hq / d->Hk * d->L;
    return d->B * d->Hk * ((R + ATTN_BR - 1) / ATTN_BR);
}

size_t tn_attn_scratch_bytes(const tn_attn_desc *d, int workers) {
    return per_worker_floats(d) * sizeof(float) * (size_t)(workers > 0 ? workers : 1) + 64;
}

int tn_attn_workers(const tn_attn_desc *d) {
    int64_t nt = n_tasks(d);
    double s_eff = d->causal ? (double)d->S * 0.5 + 1 : (double)d->S;
    double flops = 2.0 * (double)d->B * (double)d->Hq * (double)d->L * s_eff * (double)(d->E + d->Ev);
    int th = tn_get_num_threads();
    if (flops < 4e5 || nt < 2 || th < 2) return 1;
    int64_t w = th < nt ? th : nt;
    return (int)w;
}

typedef struct attn_job {
    const tn_attn_desc *d;
    float *scratch;
    size_t stride;
    int workers;
    void (*fn)(const tn_attn_desc *, float *, int64_t, int64_t);
} attn_job;

static void attn_worker(void *ctx, int64_t begin, int64_t end) {
    attn_job *j = ctx;
    for (int64_t w = begin; w < end; w++) j->fn(j->d, j->scratch + (size_t)w * j->stride, w, j->workers);
}

void tn_attn_run(const tn_attn_desc *d, void *scratch, int workers) {
    if (tn_attn_gemm_usable(d) && tn_attn_gemm_run(d)) return;
    if (workers < 1) workers = 1;
    attn_job j = {d, (float *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63), per_worker_floats(d), workers,
                  tn_attn_tasks__generic};
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) j.fn = tn_attn_tasks__avx512;
    else if (isa >= TN_ISA_AVX2) j.fn = tn_attn_tasks__avx2;
    if (workers == 1) j.fn(d, j.scratch, 0, 1);
    else tn_parallel_for(workers, 1, attn_worker, &j);
}
