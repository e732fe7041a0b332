/* softmax_generic.c — the baseline-ISA instance of the vectorised softmax rows
 * (softmax_vec.inc) and the threaded driver that picks the AVX-512 / AVX2 / baseline
 * instance from tn_cpu_isa(). */
#include <math.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/cpu_features.h"
#include "kernels/reduce.h"

#define SFX generic
#include "kernels/softmax_vec.inc"

typedef struct sm_job {
    float *out;
    const float *in;
    int64_t n;
    int mode, lanes;
    void (*fn)(float *, const float *, int64_t, int64_t, int, int);
} sm_job;

static void sm_worker(void *ctx, int64_t b, int64_t e) {
    const sm_job *j = ctx;
    j->fn(j->out + b * j->n, j->in + b * j->n, e - b, j->n, j->mode, j->lanes);
}

void tn_softmax_rows_f32(float *out, const float *in, int64_t rows, int64_t n, int mode) {
    /* the lanes of upstream's vector softmax on this host: its order of additions */
    sm_job j = {out, in, n, mode, tn_reduce_vec_bytes(true) / 4, tn_softmax_rows__generic};
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) j.fn = tn_softmax_rows__avx512;
    else if (isa >= TN_ISA_AVX2) j.fn = tn_softmax_rows__avx2;
    int64_t grain = 32768 / (n > 0 ? n : 1);
    tn_parallel_for(rows, grain < 1 ? 1 : grain, sm_worker, &j);
}
