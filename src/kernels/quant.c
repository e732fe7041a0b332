/* quant.c — the quantised-product driver (quant.h): picks the ISA's kernel, quantises the
 * activation rows into the caller's scratch, then splits the weight rows across the pool
 * in chunks that keep a chunk of weight in L2 while every activation tile passes over it. */
#include "kernels/quant.h"

#include "core/threadpool.h"
#include "kernels/cpu_features.h"
#include "kernels/stream.h"

/* Weight rows per chunk (a chunk of a 1536-wide Q4_1 matrix is 61 KB) and the bytes a
 * thread's share must have before a second thread is worth waking. */
#define CHUNK_ROWS 64
#define MIN_TASK_BYTES 65536

typedef struct { tn_qdot_kernel fn; const char *name; } kernel;
#define K(f) ((kernel){f, #f})

static kernel pick(int qtype) {
#if defined(__x86_64__)
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512 && tn_cpu_features_get()->avx512_vnni) {
        if (qtype == TN_QTYPE_Q4_0) return K(q4_0_qdot__avx512vnni);
        if (qtype == TN_QTYPE_Q4_1) return K(q4_1_qdot__avx512vnni);
        if (qtype == TN_QTYPE_Q8_0) return K(q8_0_qdot__avx512vnni);
    } else if (isa >= TN_ISA_AVX2) {
        if (qtype == TN_QTYPE_Q4_0) return K(q4_0_qdot__avx2);
        if (qtype == TN_QTYPE_Q4_1) return K(q4_1_qdot__avx2);
        if (qtype == TN_QTYPE_Q8_0) return K(q8_0_qdot__avx2);
    }
#elif defined(__aarch64__)
    if (tn_cpu_has_asimd_dot()) {
        if (qtype == TN_QTYPE_Q4_0) return K(q4_0_qdot__neon);
        if (qtype == TN_QTYPE_Q4_1) return K(q4_1_qdot__neon);
        if (qtype == TN_QTYPE_Q8_0) return K(q8_0_qdot__neon);
    }
#endif
    if (qtype == TN_QTYPE_Q4_0) return K(q4_0_qdot__ref);
    if (qtype == TN_QTYPE_Q4_1) return K(q4_1_qdot__ref);
    if (qtype == TN_QTYPE_Q8_0) return K(q8_0_qdot__ref);
    return (kernel){NULL, NULL};
}

tn_qdot_kernel tn_qdot_pick(int qtype) { return pick(qtype).fn; }
const char *tn_qdot_variant(int qtype) { return pick(qtype).name; }

int64_t tn_qmatmul_scratch_blocks(int64_t m, int64_t k) { return m * (k / TN_QK); }

typedef struct job {
    const tn_qmatmul_desc *d;
    tn_qdot_kernel fn;
    int64_t nb;
} job;

static void quantize_rows(void *ctx, int64_t i0, int64_t i1) {
    const job *jb = ctx;
    for (int64_t i = i0; i < i1; i++) tn_quant_q8x_row(jb->d->x + i * jb->d->ldx, jb->d->k, jb->d->scratch + i * jb->nb);
}

static void run_chunks(void *ctx, int64_t c0, int64_t c1) {
    const job *jb = ctx;
    const tn_qmatmul_desc *d = jb->d;
    for (int64_t c = c0; c < c1; c++) {
        int64_t r0 = c * CHUNK_ROWS, nr = d->n - r0 < CHUNK_ROWS ? d->n - r0 : CHUNK_ROWS;
        jb->fn(jb->nb, d->w + r0 * d->ldw, d->ldw, nr, d->scratch, jb->nb, d->m, d->y + r0, d->ldy);
    }
}

void tn_qmatmul(const tn_qmatmul_desc *d) {
    job jb = {.d = d, .fn = pick(d->qtype).fn, .nb = d->k / TN_QK};
    if (d->m <= 0 || d->n <= 0) return;
    /* a quantised row is ~k/3 float operations; rows split when there are many */
    tn_parallel_for(d->m, d->k >= 4096 ? 1 : 4096 / (d->k > 0 ? d->k : 1), quantize_rows, &jb);
    int64_t chunks = (d->n + CHUNK_ROWS - 1) / CHUNK_ROWS;
    int64_t chunk_bytes = CHUNK_ROWS * d->ldw * (d->m < 8 ? 1 : 8);
    int64_t grain = MIN_TASK_BYTES / (chunk_bytes > 0 ? chunk_bytes : 1) + 1;
    if (d->m <= 4) tn_stream_note(d->w, d->n * d->ldw);
    tn_parallel_for(chunks, grain, run_chunks, &jb);
}
