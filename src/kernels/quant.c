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

typedef struct { tn_qdot_kernel fn; const char *name; tn_qkdot_kernel kfn; } kernel;
#define K(f) ((kernel){f, #f, NULL})
#define KK(f) ((kernel){NULL, #f, f})

static kernel pick(int qtype) {
#if defined(__x86_64__)
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512 && tn_cpu_features_get()->avx512_vnni) {
        if (qtype == TN_QTYPE_Q4_0_X8) return K(q4_0x8_qdot__avx512vnni);
        if (qtype == TN_QTYPE_Q4_1_X8) return K(q4_1x8_qdot__avx512vnni);
        if (qtype == TN_QTYPE_Q8_0_X8) return K(q8_0x8_qdot__avx512vnni);
    }
    if (isa >= TN_ISA_AVX2) {
        if (qtype == TN_QTYPE_Q4_0_X8) return K(q4_0x8_qdot__avx2);
        if (qtype == TN_QTYPE_Q4_1_X8) return K(q4_1x8_qdot__avx2);
        if (qtype == TN_QTYPE_Q8_0_X8) return K(q8_0x8_qdot__avx2);
    }
    if (isa >= TN_ISA_AVX512 && tn_cpu_features_get()->avx512_vnni) {
        if (qtype == TN_QTYPE_Q4_0) return K(q4_0_qdot__avx512vnni);
        if (qtype == TN_QTYPE_Q4_1) return K(q4_1_qdot__avx512vnni);
        if (qtype == TN_QTYPE_Q8_0) return K(q8_0_qdot__avx512vnni);
        if (qtype == TN_QTYPE_Q4_K) return KK(q4_k_qdot__avx512vnni);
        if (qtype == TN_QTYPE_Q6_K) return KK(q6_k_qdot__avx512vnni);
    } else if (isa >= TN_ISA_AVX2) {
        if (qtype == TN_QTYPE_Q4_0) return K(q4_0_qdot__avx2);
        if (qtype == TN_QTYPE_Q4_1) return K(q4_1_qdot__avx2);
        if (qtype == TN_QTYPE_Q8_0) return K(q8_0_qdot__avx2);
        if (qtype == TN_QTYPE_Q4_K) return KK(q4_k_qdot__avx2);
        if (qtype == TN_QTYPE_Q6_K) return KK(q6_k_qdot__avx2);
    }
#elif defined(__aarch64__)
    if (tn_cpu_has_i8mm()) {
        if (qtype == TN_QTYPE_Q4_0) return K(q4_0_qdot__i8mm);
        if (qtype == TN_QTYPE_Q4_1) return K(q4_1_qdot__i8mm);
        if (qtype == TN_QTYPE_Q8_0) return K(q8_0_qdot__i8mm);
    }
    if (tn_cpu_has_asimd_dot()) {
        if (qtype == TN_QTYPE_Q4_0) return K(q4_0_qdot__neon);
        if (qtype == TN_QTYPE_Q4_1) return K(q4_1_qdot__neon);
        if (qtype == TN_QTYPE_Q8_0) return K(q8_0_qdot__neon);
        if (qtype == TN_QTYPE_Q4_K) return KK(q4_k_qdot__neon);
        if (qtype == TN_QTYPE_Q6_K) return KK(q6_k_qdot__neon);
    }
#endif
    if (qtype == TN_QTYPE_Q4_0_X8) return K(q4_0x8_qdot__ref);
    if (qtype == TN_QTYPE_Q4_1_X8) return K(q4_1x8_qdot__ref);
    if (qtype == TN_QTYPE_Q8_0_X8) return K(q8_0x8_qdot__ref);
    if (qtype == TN_QTYPE_Q4_0) return K(q4_0_qdot__ref);
    if (qtype == TN_QTYPE_Q4_1) return K(q4_1_qdot__ref);
    if (qtype == TN_QTYPE_Q8_0) return K(q8_0_qdot__ref);
    if (qtype == TN_QTYPE_Q4_K) return KK(q4_k_qdot__ref);
    if (qtype == TN_QTYPE_Q6_K) return KK(q6_k_qdot__ref);
    return (kernel){NULL, NULL, NULL};
}

int tn_quant_fast_layout(int qtype) {
#if defined(__x86_64__)
    /* measured on AVX2 (docs/INFERENCE.md "The x8 layouts"; 8da4w: "Speed of the quantised float
     * model") and, session 39, on an AVX-512 VNNI host, where the x8 kernels beat the file
     * layout's VNNI kernels 1.4-2.6x at decode and prefill shapes (docs/INFERENCE.md "The x8
     * layouts on AVX-512 VNNI hosts") */
    if (tn_cpu_isa() >= TN_ISA_AVX2 &&
        (qtype == TN_QTYPE_Q4_0 || qtype == TN_QTYPE_Q4_1 || qtype == TN_QTYPE_Q8_0 || qtype == TN_QTYPE_I4))
        return TN_QTYPE_X8 | qtype;
#endif
    return qtype;
}

void tn_quant_q8x_row(const float *x, int64_t k, tn_q8x_block *out) {
#if defined(__x86_64__)
    if (tn_cpu_isa() >= TN_ISA_AVX2) {
        tn_quant_q8x_row__avx2(x, k, out);
        return;
    }
#endif
    tn_quant_q8x_row__ref(x, k, out);
}

tn_qdot_kernel tn_qdot_pick(int qtype) { return pick(qtype).fn; }
tn_qkdot_kernel tn_qkdot_pick(int qtype) { return pick(qtype).kfn; }
const char *tn_qdot_variant(int qtype) { return pick(qtype).name; }

size_t tn_qmatmul_scratch_bytes(int qtype, int64_t m, int64_t k) {
    if (tn_qtype_block_elems(qtype) == TN_QKK) return (size_t)(m * (k / TN_QKK)) * sizeof(tn_q8k_block);
    return (size_t)(m * (k / TN_QK)) * sizeof(tn_q8x_block);
}

typedef struct job {
    const tn_qmatmul_desc *d;
    kernel kn;
    int64_t nb; /* (super-)blocks per row */
} job;

static void quantize_rows(void *ctx, int64_t i0, int64_t i1) {
    const job *jb = ctx;
    const tn_qmatmul_desc *d = jb->d;
    for (int64_t i = i0; i < i1; i++) {
        if (jb->kn.kfn) tn_quant_q8k_row(d->x + i * d->ldx, d->k, (tn_q8k_block *)d->scratch + i * jb->nb);
        else tn_quant_q8x_row(d->x + i * d->ldx, d->k, (tn_q8x_block *)d->scratch + i * jb->nb);
    }
}

static void run_chunks(void *ctx, int64_t c0, int64_t c1) {
    const job *jb = ctx;
    const tn_qmatmul_desc *d = jb->d;
    for (int64_t c = c0; c < c1; c++) {
        int64_t r0 = c * CHUNK_ROWS, nr = d->n - r0 < CHUNK_ROWS ? d->n - r0 : CHUNK_ROWS;
        if (jb->kn.kfn) jb->kn.kfn(jb->nb, d->w + r0 * d->ldw, d->ldw, nr, d->scratch, jb->nb, d->m, d->y + r0, d->ldy);
        else jb->kn.fn(jb->nb, d->w + r0 * d->ldw, d->ldw, nr, d->scratch, jb->nb, d->m, d->y + r0, d->ldy);
    }
}

/* How many chunks a thread's task takes: enough weight bytes (and, for tall x, work) that
 * waking a second thread pays. */
static int64_t chunk_grain(int64_t m, int64_t row_bytes) {
    int64_t chunk_bytes = CHUNK_ROWS * row_bytes * (m < 8 ? 1 : 8);
    return MIN_TASK_BYTES / (chunk_bytes > 0 ? chunk_bytes : 1) + 1;
}

void tn_qmatmul(const tn_qmatmul_desc *d) {
    job jb = {.d = d, .kn = pick(d->qtype), .nb = d->k / tn_qtype_block_elems(d->qtype)};
    if (d->m <= 0 || d->n <= 0) return;
    /* a quantised row is ~k/3 float operations; rows split when there are many */
    tn_parallel_for(d->m, d->k >= 4096 ? 1 : 4096 / (d->k > 0 ? d->k : 1), quantize_rows, &jb);
    if (d->m <= 4) tn_stream_note(d->w, d->n * d->ldw);
    tn_parallel_for((d->n + CHUNK_ROWS - 1) / CHUNK_ROWS, chunk_grain(d->m, d->ldw), run_chunks, &jb);
}

/* ---- 8da4w and int8 weight-only (quant.h) ---------------------------------------------- */
typedef struct { tn_i4dot_kernel fn; const char *name; } i4_kernel;
typedef struct { tn_w8dot_kernel fn; const char *name; } w8_kernel;

static i4_kernel pick_i4(void) {
#if defined(__x86_64__)
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512 && tn_cpu_features_get()->avx512_vnni) return (i4_kernel){i4_qdot__avx512vnni, "i4_qdot__avx512vnni"};
    if (isa >= TN_ISA_AVX2) return (i4_kernel){i4_qdot__avx2, "i4_qdot__avx2"};
#elif defined(__aarch64__)
    if (tn_cpu_has_i8mm()) return (i4_kernel){i4_qdot__i8mm, "i4_qdot__i8mm"};
    if (tn_cpu_has_asimd_dot()) return (i4_kernel){i4_qdot__neon, "i4_qdot__neon"};
#endif
    return (i4_kernel){i4_qdot__ref, "i4_qdot__ref"};
}

static w8_kernel pick_w8(void) {
#if defined(__x86_64__)
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512 && tn_cpu_features_get()->avx512_vnni) return (w8_kernel){w8_dot__avx512vnni, "w8_dot__avx512vnni"};
    if (isa >= TN_ISA_AVX2) return (w8_kernel){w8_dot__avx2, "w8_dot__avx2"};
#elif defined(__aarch64__)
    if (tn_cpu_has_asimd_dot()) return (w8_kernel){w8_dot__neon, "w8_dot__neon"};
#endif
    return (w8_kernel){w8_dot__ref, "w8_dot__ref"};
}

typedef struct { tn_i4x8dot_kernel fn; const char *name; } i4x8_kernel;
static i4x8_kernel pick_i4x8(void) {
#if defined(__x86_64__)
    if (tn_cpu_isa() >= TN_ISA_AVX512 && tn_cpu_features_get()->avx512_vnni)
        return (i4x8_kernel){i4x8_qdot__avx512vnni, "i4x8_qdot__avx512vnni"};
    if (tn_cpu_isa() >= TN_ISA_AVX2) return (i4x8_kernel){i4x8_qdot__avx2, "i4x8_qdot__avx2"};
#endif
    return (i4x8_kernel){i4x8_qdot__ref, "i4x8_qdot__ref"};
}
tn_i4x8dot_kernel tn_i4x8dot_pick(void) { return pick_i4x8().fn; }
const char *tn_i4x8dot_variant(void) { return pick_i4x8().name; }

tn_i4dot_kernel tn_i4dot_pick(void) { return pick_i4().fn; }
const char *tn_i4dot_variant(void) { return pick_i4().name; }
tn_w8dot_kernel tn_w8dot_pick(void) { return pick_w8().fn; }
const char *tn_w8dot_variant(void) { return pick_w8().name; }

/* The quants of x first (64-byte aligned rows' worth), then the m per-token scales, then
 * (x8) the m × k/g group sums of the quants (k/TN_QK per row at most). */
static size_t i4_quants_bytes(int64_t m, int64_t k) { return ((size_t)(m * k) + 63) & ~(size_t)63; }
size_t tn_i4matmul_scratch_bytes(int64_t m, int64_t k) {
    return i4_quants_bytes(m, k) + (size_t)m * sizeof(float) + (size_t)(m * (k / TN_QK)) * sizeof(int32_t);
}

typedef struct i4_job {
    const tn_i4matmul_desc *d;
    tn_i4dot_kernel fn;
    tn_i4x8dot_kernel fn8;
    int8_t *xq;
    float *xd;
    int32_t *xs;
} i4_job;

static void i4_quantize_rows(void *ctx, int64_t i0, int64_t i1) {
    const i4_job *jb = ctx;
    const tn_i4matmul_desc *d = jb->d;
    for (int64_t i = i0; i < i1; i++) {
        int8_t *q = jb->xq + i * d->k;
        tn_quant_i8_row(d->x + i * d->ldx, d->k, q, jb->xd + i);
        if (d->x8)
            for (int64_t h = 0; h < d->k / d->g; h++) {
                int32_t sum = 0;
                for (int64_t j = h * d->g; j < (h + 1) * d->g; j++) sum += q[j];
                jb->xs[i * (d->k / d->g) + h] = sum;
            }
    }
}

static void i4_run_chunks(void *ctx, int64_t c0, int64_t c1) {
    const i4_job *jb = ctx;
    const tn_i4matmul_desc *d = jb->d;
    for (int64_t c = c0; c < c1; c++) {
        int64_t r0 = c * CHUNK_ROWS, nr = d->n - r0 < CHUNK_ROWS ? d->n - r0 : CHUNK_ROWS;
        if (d->x8) /* CHUNK_ROWS is a multiple of 8: a chunk starts a row group */
            jb->fn8(d->k, d->g, d->w + r0 * tn_quant_i4x8_row_bytes(d->k, d->g), nr, jb->xq, jb->xd, d->k, jb->xs,
                    d->k / d->g, d->m, d->y + r0, d->ldy);
        else
            jb->fn(d->k, d->g, d->w + r0 * d->ldw, d->ldw, d->s + r0 * d->lds, d->lds, nr, jb->xq, jb->xd, d->k, d->m,
                   d->y + r0, d->ldy);
    }
}

void tn_i4matmul(const tn_i4matmul_desc *d) {
    if (d->m <= 0 || d->n <= 0) return;
    _Static_assert(CHUNK_ROWS % 8 == 0, "an x8 chunk starts a group of 8 rows");
    i4_job jb = {.d = d, .fn = pick_i4().fn, .fn8 = pick_i4x8().fn, .xq = d->scratch,
                 .xd = (float *)((char *)d->scratch + i4_quants_bytes(d->m, d->k))};
    jb.xs = (int32_t *)(jb.xd + d->m);
    int64_t rb = d->x8 ? tn_quant_i4x8_row_bytes(d->k, d->g) : d->ldw;
    tn_parallel_for(d->m, d->k >= 4096 ? 1 : 4096 / (d->k > 0 ? d->k : 1), i4_quantize_rows, &jb);
    if (d->m <= 4) tn_stream_note(d->w, d->n * rb);
    tn_parallel_for((d->n + CHUNK_ROWS - 1) / CHUNK_ROWS, chunk_grain(d->m, rb), i4_run_chunks, &jb);
}

typedef struct w8_job {
    const tn_w8matmul_desc *d;
    tn_w8dot_kernel fn;
} w8_job;

static void w8_run_chunks(void *ctx, int64_t c0, int64_t c1) {
    const w8_job *jb = ctx;
    const tn_w8matmul_desc *d = jb->d;
    for (int64_t c = c0; c < c1; c++) {
        int64_t r0 = c * CHUNK_ROWS, nr = d->n - r0 < CHUNK_ROWS ? d->n - r0 : CHUNK_ROWS;
        jb->fn(d->k, d->w + r0 * d->ldw, d->ldw, d->s + r0, nr, d->x, d->ldx, d->m, d->y + r0, d->ldy);
    }
}

void tn_w8matmul(const tn_w8matmul_desc *d) {
    if (d->m <= 0 || d->n <= 0) return;
    w8_job jb = {.d = d, .fn = pick_w8().fn};
    if (d->m <= 4) tn_stream_note(d->w, d->n * d->ldw);
    tn_parallel_for((d->n + CHUNK_ROWS - 1) / CHUNK_ROWS, chunk_grain(d->m, d->ldw), w8_run_chunks, &jb);
}
