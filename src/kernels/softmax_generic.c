/* softmax_generic.c — the baseline-ISA instance of the vectorised softmax rows
 * (softmax_vec.inc) and the threaded driver that picks the AVX-512 / AVX2 / baseline
 * instance from tn_cpu_isa(); the softmax along a non-last dim (column blocks) and the float64
 * rows on the pool. */
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

/* A row this long, with fewer rows than threads, is split across the pool: the max, exp and
 * scale passes in pieces, the sum once over the row (its lane order fixes the bits). */
#define SM_SPLIT_MIN 65536
#define SM_PIECES 16
typedef struct sm_part_job {
    float *out;
    const float *in;
    int64_t n, piece;
    int phase;
    tn_softmax_part part[SM_PIECES];
    void (*fn)(int, float *, const float *, int64_t, tn_softmax_part *);
} sm_part_job;

static void sm_part_worker(void *ctx, int64_t b, int64_t e) {
    sm_part_job *j = ctx;
    for (int64_t k = b; k < e; k++) {
        int64_t lo = k * j->piece, hi = lo + j->piece < j->n ? lo + j->piece : j->n;
        if (lo < hi) j->fn(j->phase, j->out + lo, j->in + lo, hi - lo, &j->part[k]);
    }
}

static void softmax_long_row(float *out, const float *in, int64_t n, int mode, int lanes,
                             void (*fn)(int, float *, const float *, int64_t, tn_softmax_part *)) {
    sm_part_job j = {.out = out, .in = in, .n = n, .fn = fn};
    j.piece = (n + SM_PIECES - 1) / SM_PIECES;
    j.piece = (j.piece + 15) / 16 * 16; /* pieces start at multiples of 16 lanes */
    int64_t pieces = (n + j.piece - 1) / j.piece;
    for (int k = 0; k < SM_PIECES; k++) j.part[k] = (tn_softmax_part){-INFINITY, 0, false, mode, lanes};
    j.phase = 0;
    tn_parallel_for(pieces, 1, sm_part_worker, &j);
    tn_softmax_part whole = {-INFINITY, 0, false, mode, lanes};
    for (int64_t k = 0; k < pieces; k++) {
        whole.nan |= j.part[k].nan;
        whole.mx = j.part[k].mx > whole.mx ? j.part[k].mx : whole.mx;
    }
    if (whole.nan) whole.mx = NAN;
    for (int k = 0; k < SM_PIECES; k++) j.part[k] = whole;
    j.phase = 1;
    tn_parallel_for(pieces, 1, sm_part_worker, &j);
    fn(2, out, in, n, &whole);
    for (int k = 0; k < SM_PIECES; k++) j.part[k] = whole;
    j.phase = 3;
    tn_parallel_for(pieces, 1, sm_part_worker, &j);
}

void tn_softmax_rows_f32(float *out, const float *in, int64_t rows, int64_t n, int mode) {
    /* the lanes of upstream's vector softmax on this host: its order of additions */
    sm_job j = {out, in, n, mode, tn_reduce_vec_bytes(true) / 4, tn_softmax_rows__generic};
    void (*part)(int, float *, const float *, int64_t, tn_softmax_part *) = tn_softmax_part__generic;
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) j.fn = tn_softmax_rows__avx512, part = tn_softmax_part__avx512;
    else if (isa >= TN_ISA_AVX2) j.fn = tn_softmax_rows__avx2, part = tn_softmax_part__avx2;
    if (n >= SM_SPLIT_MIN && rows < tn_get_num_threads()) {
        for (int64_t r = 0; r < rows; r++) softmax_long_row(out + r * n, in + r * n, n, mode, j.lanes, part);
        return;
    }
    int64_t grain = 32768 / (n > 0 ? n : 1);
    tn_parallel_for(rows, grain < 1 ? 1 : grain, sm_worker, &j);
}

/* ---- softmax along a dim that is not the last: columns ---------------------------------- */

/* Blocks of up to SM_CB columns (inner positions) of one outer index, one pool item each,
 * through the ISA's tn_softmax_cols (softmax_vec.inc). */
#define SM_CB 256
typedef struct sm_cols_job {
    float *out;
    const float *in;
    int64_t n, inner, nblk;
    int log;
    void (*fn)(float *, const float *, int64_t, int64_t, int64_t, int);
} sm_cols_job;

static void sm_cols_worker(void *ctx, int64_t b, int64_t e) {
    const sm_cols_job *j = ctx;
    for (int64_t item = b; item < e; item++) {
        int64_t o = item / j->nblk, c0 = (item % j->nblk) * SM_CB;
        int64_t w = j->inner - c0 < SM_CB ? j->inner - c0 : SM_CB;
        j->fn(j->out + o * j->n * j->inner + c0, j->in + o * j->n * j->inner + c0, j->n, j->inner, w, j->log);
    }
}

void tn_softmax_cols_f32(float *out, const float *in, int64_t outer, int64_t n, int64_t inner, int log) {
    sm_cols_job j = {out, in, n, inner, (inner + SM_CB - 1) / SM_CB, log, tn_softmax_cols__generic};
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) j.fn = tn_softmax_cols__avx512;
    else if (isa >= TN_ISA_AVX2) j.fn = tn_softmax_cols__avx2;
    int64_t work = n * SM_CB, grain = 32768 / (work > 0 ? work : 1);
    tn_parallel_for(outer * j.nblk, grain < 1 ? 1 : grain, sm_cols_worker, &j);
}

void tn_exp_row_f64(double *out, const double *in, int64_t n, double sub) {
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) tn_exp_row_f64__avx512(out, in, n, sub);
    else if (isa >= TN_ISA_AVX2) tn_exp_row_f64__avx2(out, in, n, sub);
    else tn_exp_row_f64__generic(out, in, n, sub);
}

/* float64 rows: the ISA's row kernel over chunks of rows on the pool */
typedef struct sm64_job {
    double *out;
    const double *in;
    int64_t n;
    int mode, lanes;
    void (*fn)(double *, const double *, int64_t, int64_t, int, int);
} sm64_job;
static void sm64_worker(void *ctx, int64_t b, int64_t e) {
    const sm64_job *j = ctx;
    j->fn(j->out + b * j->n, j->in + b * j->n, e - b, j->n, j->mode, j->lanes);
}
void tn_softmax_rows_f64(double *out, const double *in, int64_t rows, int64_t n, int mode) {
    sm64_job j = {out, in, n, mode, tn_reduce_vec_bytes(true) / 8, tn_softmax_rows_f64__generic};
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) j.fn = tn_softmax_rows_f64__avx512;
    else if (isa >= TN_ISA_AVX2) j.fn = tn_softmax_rows_f64__avx2;
    int64_t grain = 16384 / (n > 0 ? n : 1);
    tn_parallel_for(rows, grain < 1 ? 1 : grain, sm64_worker, &j);
}
