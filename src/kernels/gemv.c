/* gemv.c — the GEMV driver (see gemv.h): orients the problem as weight rows × x vectors,
 * splits the weight rows across the thread pool, runs the ISA's kernel over sub-blocks of
 * rows into a float32 buffer on the stack, and writes round(alpha*acc + beta*C). */
#include "kernels/gemv.h"

#include "core/threadpool.h"
#include "kernels/cpu_features.h"
#include "kernels/stream.h"

#include <stdatomic.h>

/* Rows per sub-block (stack buffer of TN_GEMV_MAX_M * SUB floats) and the unit in which
 * rows are split across threads (a multiple of every kernel's row block). */
#define SUB 64
#define UNIT 8
/* Weight bytes a task must have before a second thread is worth waking. */
#define MIN_TASK_BYTES 65536

bool tn_gemv_shaped(const tn_gemm_desc *g) {
    tn_dtype d = g->dtype;
    return (d == TN_DTYPE_FLOAT32 || d == TN_DTYPE_BFLOAT16 || d == TN_DTYPE_FLOAT16) &&
           (g->a_cs == 1 || g->k == 1) && (g->b_rs == 1 || g->k == 1) && (g->m <= TN_GEMV_MAX_M || g->n <= TN_GEMV_MAX_M);
}

/* fn prefetches the next rows; hot does not (weights already in cache; see tn_gemv). */
typedef struct { tn_gemv_kernel fn, hot; const char *name; } kernel;
#define KN(f) ((kernel){f, f, #f})           /* no software prefetch in either case */
#define KH(f) ((kernel){f, f##_hot, #f})

static kernel pick(tn_dtype d) {
#if defined(__aarch64__)
    if (tn_cpu_arm_isa() >= TN_ARM_ISA_NEON) {
        if (d == TN_DTYPE_BFLOAT16) return KN(bf16_gemv__neon);
        if (d == TN_DTYPE_FLOAT16) return KN(f16_gemv__neon);
        return KN(f32_gemv__neon);
    }
    if (d == TN_DTYPE_BFLOAT16) return KN(bf16_gemv__scalar);
    if (d == TN_DTYPE_FLOAT16) return KN(f16_gemv__scalar);
    return KN(f32_gemv__scalar);
#else
    tn_isa isa = tn_cpu_isa();
    if (d == TN_DTYPE_BFLOAT16) {
        if (isa >= TN_ISA_AVX512_BF16) return KH(bf16_gemv__avx512bf16);
        if (isa >= TN_ISA_AVX512) return KH(bf16_gemv__avx512);
        if (isa >= TN_ISA_AVX2) return KH(bf16_gemv__avx2);
        return KN(bf16_gemv__scalar);
    }
    if (d == TN_DTYPE_FLOAT16) {
        if (isa >= TN_ISA_AVX512) return KH(f16_gemv__avx512);
        if (isa >= TN_ISA_AVX2) return KH(f16_gemv__avx2);
        return KN(f16_gemv__scalar);
    }
    if (isa >= TN_ISA_AVX512) return KH(f32_gemv__avx512);
    if (isa >= TN_ISA_AVX2) return KH(f32_gemv__avx2);
    return KN(f32_gemv__scalar);
#endif
}

const char *tn_gemv_variant(tn_dtype d) { return pick(d).name; }

/* The problem as W (nrows × k, row stride ldw) times m x vectors (stride ldx); output
 * (vector i, row r) lives at c[i*c_vs + r*c_ws]. */
typedef struct job {
    tn_gemv_kernel fn;
    tn_dtype dtype;
    int esz, m;
    int64_t k, nrows;
    const char *x, *w;
    int64_t ldx, ldw;
    char *c;
    int64_t c_vs, c_ws;
    float alpha, beta;
} job;

static float h2f(uint16_t h) { return tn_half_to_f32(h); }

static void store(const job *jb, int64_t r0, int64_t nr, const float *acc) {
    float alpha = jb->alpha, beta = jb->beta;
    for (int i = 0; i < jb->m; i++) {
        const float *a = acc + i * SUB;
        int64_t cs = jb->c_ws, base = i * jb->c_vs + r0 * cs;
        switch (jb->dtype) {
        case TN_DTYPE_BFLOAT16: {
            uint16_t *c = (uint16_t *)jb->c + base;
            for (int64_t r = 0; r < nr; r++) {
                float v = alpha * a[r];
                if (beta != 0) v += beta * tn_bf16_to_f32(c[r * cs]);
                c[r * cs] = tn_f32_to_bf16(v);
            }
            break;
        }
        case TN_DTYPE_FLOAT16: {
            uint16_t *c = (uint16_t *)jb->c + base;
            for (int64_t r = 0; r < nr; r++) {
                float v = alpha * a[r];
                if (beta != 0) v += beta * h2f(c[r * cs]);
                c[r * cs] = tn_f32_to_half(v);
            }
            break;
        }
        default: {
            float *c = (float *)jb->c + base;
            if (alpha == 1 && beta == 0) {
                for (int64_t r = 0; r < nr; r++) c[r * cs] = a[r];
            } else {
                for (int64_t r = 0; r < nr; r++) {
                    float v = alpha * a[r];
                    if (beta != 0) v += beta * c[r * cs];
                    c[r * cs] = v;
                }
            }
            break;
        }
        }
    }
}

static void run_units(void *ctx, int64_t u0, int64_t u1) {
    const job *jb = ctx;
    int64_t end = u1 * UNIT < jb->nrows ? u1 * UNIT : jb->nrows;
    float acc[TN_GEMV_MAX_M * SUB];
    for (int64_t r0 = u0 * UNIT; r0 < end; r0 += SUB) {
        int64_t nr = end - r0 < SUB ? end - r0 : SUB;
        jb->fn(jb->k, jb->m, jb->x, jb->ldx, jb->w + r0 * jb->ldw * jb->esz, jb->ldw, nr, acc, SUB);
        store(jb, r0, nr, acc);
    }
}

static job make_job(const tn_gemm_desc *g) {
    job jb = {.fn = pick(g->dtype).fn, .dtype = g->dtype, .esz = tn_dtype_itemsize(g->dtype), .k = g->k,
              .c = g->c, .alpha = (float)g->alpha, .beta = (float)g->beta};
    if (g->m <= TN_GEMV_MAX_M) { /* W = Bᵀ: rows are B's columns; x = A's rows */
        jb.m = (int)g->m, jb.nrows = g->n;
        jb.w = g->b, jb.ldw = g->b_cs, jb.x = g->a, jb.ldx = g->a_rs;
        jb.c_vs = g->c_rs, jb.c_ws = g->c_cs;
    } else { /* W = A; x = B's columns; C transposed */
        jb.m = (int)g->n, jb.nrows = g->m;
        jb.w = g->a, jb.ldw = g->a_rs, jb.x = g->b, jb.ldx = g->b_cs;
        jb.c_vs = g->c_cs, jb.c_ws = g->c_rs;
    }
    return jb;
}

/* Bytes of weight the job reads. */
static int64_t weight_bytes(const job *jb) { return jb->nrows > 0 ? ((jb->nrows - 1) * jb->ldw + jb->k) * jb->esz : 0; }

static int64_t grain_of(const job *jb) {
    int64_t unit_bytes = UNIT * jb->k * jb->esz;
    return MIN_TASK_BYTES / (unit_bytes > 0 ? unit_bytes : 1) + 1;
}

/* The weight of the last tn_gemv call and the thread count it ran with. The same weight
 * again, on as many threads and small enough that each thread's rows fit in half of its
 * L2, is read from cache: each thread gets the same rows as last time (the split depends
 * only on the shape and the thread count). There the kernels' prefetch of the next rows
 * only takes load slots, so the kernel without it runs (a weight applied again and again,
 * as in a recurrent cell). A weight streamed from memory, every decode-step product, keeps
 * the prefetch. A wrong guess (something evicted the weight in between) costs speed, never
 * a different result: both kernels compute the same sums. */
#define HOT_BYTES_PER_THREAD (1 << 20)
static _Atomic uintptr_t last_w;
static _Atomic int last_threads;

void tn_gemv(const tn_gemm_desc *g) {
    job jb = make_job(g);
    int64_t units = (jb.nrows + UNIT - 1) / UNIT, grain = grain_of(&jb);
    int threads = tn_get_num_threads();
    int64_t chunks = (units + grain - 1) / grain < threads ? (units + grain - 1) / grain : threads;
    bool same_w = atomic_exchange_explicit(&last_w, (uintptr_t)jb.w, memory_order_relaxed) == (uintptr_t)jb.w;
    bool same_t = atomic_exchange_explicit(&last_threads, threads, memory_order_relaxed) == threads;
    if (same_w && same_t && jb.nrows * jb.k * jb.esz <= chunks * HOT_BYTES_PER_THREAD) jb.fn = pick(g->dtype).hot;
    else tn_stream_note(jb.w, weight_bytes(&jb));
    tn_parallel_for(units, grain, run_units, &jb);
}

typedef struct multi {
    job jobs[TN_GEMV_MULTI_MAX];
    int64_t first[TN_GEMV_MULTI_MAX + 1]; /* first unit of each job in the joint range */
    int n;
} multi;

static void run_multi(void *ctx, int64_t u0, int64_t u1) {
    const multi *mu = ctx;
    for (int j = 0; j < mu->n; j++) {
        int64_t a = u0 > mu->first[j] ? u0 : mu->first[j], b = u1 < mu->first[j + 1] ? u1 : mu->first[j + 1];
        if (a < b) run_units((void *)&mu->jobs[j], a - mu->first[j], b - mu->first[j]);
    }
}

void tn_gemv_multi(const tn_gemm_desc *gs, int n) {
    atomic_store_explicit(&last_w, 0, memory_order_relaxed);
    multi mu;
    mu.n = n;
    mu.first[0] = 0;
    int64_t grain = 0;
    for (int j = 0; j < n; j++) {
        mu.jobs[j] = make_job(&gs[j]);
        tn_stream_note(mu.jobs[j].w, weight_bytes(&mu.jobs[j]));
        mu.first[j + 1] = mu.first[j] + (mu.jobs[j].nrows + UNIT - 1) / UNIT;
        int64_t gj = grain_of(&mu.jobs[j]);
        if (!grain || gj < grain) grain = gj;
    }
    tn_parallel_for(mu.first[n], grain, run_multi, &mu);
}
