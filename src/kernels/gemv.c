/* gemv.c — the GEMV driver (see gemv.h): orients the problem as weight rows × x vectors,
 * splits the weight rows across the thread pool, runs the ISA's kernel over sub-blocks of
 * rows into a float32 buffer on the stack, and writes round(alpha*acc + beta*C). */
#include "kernels/gemv.h"

#include "core/threadpool.h"
#include "kernels/cpu_features.h"

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

typedef struct { tn_gemv_kernel fn; const char *name; } kernel;

static kernel pick(tn_dtype d) {
    tn_isa isa = tn_cpu_isa();
#if defined(__aarch64__)
    (void)isa;
    if (d == TN_DTYPE_BFLOAT16) return (kernel){bf16_gemv__neon, "bf16_gemv__neon"};
    if (d == TN_DTYPE_FLOAT16) return (kernel){f16_gemv__neon, "f16_gemv__neon"};
    return (kernel){f32_gemv__neon, "f32_gemv__neon"};
#else
    if (d == TN_DTYPE_BFLOAT16) {
        if (isa >= TN_ISA_AVX512_BF16) return (kernel){bf16_gemv__avx512bf16, "bf16_gemv__avx512bf16"};
        if (isa >= TN_ISA_AVX512) return (kernel){bf16_gemv__avx512, "bf16_gemv__avx512"};
        if (isa >= TN_ISA_AVX2) return (kernel){bf16_gemv__avx2, "bf16_gemv__avx2"};
        return (kernel){bf16_gemv__scalar, "bf16_gemv__scalar"};
    }
    if (d == TN_DTYPE_FLOAT16) {
        if (isa >= TN_ISA_AVX512) return (kernel){f16_gemv__avx512, "f16_gemv__avx512"};
        if (isa >= TN_ISA_AVX2) return (kernel){f16_gemv__avx2, "f16_gemv__avx2"};
        return (kernel){f16_gemv__scalar, "f16_gemv__scalar"};
    }
    if (isa >= TN_ISA_AVX512) return (kernel){f32_gemv__avx512, "f32_gemv__avx512"};
    if (isa >= TN_ISA_AVX2) return (kernel){f32_gemv__avx2, "f32_gemv__avx2"};
    return (kernel){f32_gemv__scalar, "f32_gemv__scalar"};
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

static int64_t grain_of(const job *jb) {
    int64_t unit_bytes = UNIT * jb->k * jb->esz;
    return MIN_TASK_BYTES / (unit_bytes > 0 ? unit_bytes : 1) + 1;
}

void tn_gemv(const tn_gemm_desc *g) {
    job jb = make_job(g);
    tn_parallel_for((jb.nrows + UNIT - 1) / UNIT, grain_of(&jb), run_units, &jb);
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
    multi mu;
    mu.n = n;
    mu.first[0] = 0;
    int64_t grain = 0;
    for (int j = 0; j < n; j++) {
        mu.jobs[j] = make_job(&gs[j]);
        mu.first[j + 1] = mu.first[j] + (mu.jobs[j].nrows + UNIT - 1) / UNIT;
        int64_t gj = grain_of(&mu.jobs[j]);
        if (!grain || gj < grain) grain = gj;
    }
    tn_parallel_for(mu.first[n], grain, run_multi, &mu);
}
