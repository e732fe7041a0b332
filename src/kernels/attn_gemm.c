/* attn_gemm.c — prefill-sized attention as blocked matrix products (nn.h, tn_attn_gemm_*).
 *
 * A task is (batch, query head, block of AG_BR query rows). It computes the scores of its
 * rows against every key they can see in one GEMM (scale folded into alpha; float32 on the
 * float32 engine, bfloat16 on AMX tiles with a float32 C), turns each row into
 * unnormalised probabilities (tn_attn_prob_row: mask, causal limit, max, exp), multiplies
 * them by V with one more GEMM and scales each output row by 1 / sum. For bfloat16 the
 * probabilities are rounded to bfloat16 before P·V, as upstream's flash kernel rounds
 * them, and the output is rounded once from float32.
 *
 * Against the flash kernel (attn_flash.inc) this trades the online softmax for a scores
 * row of every visible key (AG_BR × S floats per worker) and gains the GEMM engines: the
 * flash kernel repacks (and for bfloat16, widens) every key block for every row block,
 * and its float32 tiles reach a fraction of the FMA rate. Measured in docs/PERFORMANCE.md. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm.h"
#include "kernels/nn.h"

/* Row-block heights; -D overrides are for tuning runs (docs/GEMM.md). */
#ifndef AG_BR
#define AG_BR 64
#endif
#ifndef AG_BR_BF16
#define AG_BR_BF16 256
#endif
#define AG_MIN_L 32     /* fewer query rows: the flash kernel (decode, short prompts) */
#define AG_MAX_S 16384  /* more keys: the flash kernel (a worker's scores stay <= 4 MiB) */

typedef float (*prob_row_fn)(float *, int64_t, int64_t, const void *, int, int64_t, uint16_t *, float *);
typedef void (*finish_rows_fn)(void *, int64_t, int, const float *, int64_t, const float *, int64_t, int64_t);

bool tn_attn_gemm_usable(const tn_attn_desc *d) {
    if (d->qk != d->kk || d->qk != d->vk || d->qk != d->ok) return false;
    if (d->L < AG_MIN_L || d->S < 1 || d->S > AG_MAX_S || d->E < 1 || d->Ev < 1) return false;
    tn_isa isa = tn_cpu_isa();
    if (d->qk == TN_ATTN_F32) return isa >= TN_ISA_AVX512;
    if (d->qk == TN_ATTN_BF16) return isa >= TN_ISA_AMX;
    return false;
}

typedef struct ag_job {
    const tn_attn_desc *d;
    int64_t br, nrb, skp; /* rows per block, row blocks per head, scores row pitch */
    prob_row_fn prob;
    finish_rows_fn finish;
    atomic_int failed;
} ag_job;

static int64_t ag_keys(const tn_attn_desc *d, int64_t l_last) {
    return d->causal && l_last + 1 < d->S ? l_last + 1 : d->S;
}

/* tn_gemm with the thread's GEMM scratch slot (the packing buffers of the AMX engine). */
static bool ag_run_gemm(const tn_gemm_desc *g) {
    size_t need = tn_gemm_scratch_bytes(g);
    void *s = need ? tn_thread_scratch(TN_SCRATCH_ATTN_GEMM, need) : NULL;
    if (need && !s) return false;
    return tn_gemm(g, s, need) == TN_OK;
}

static void ag_tasks(void *ctx, int64_t begin, int64_t end) {
    ag_job *j = ctx;
    const tn_attn_desc *d = j->d;
    const bool bf16 = d->qk == TN_ATTN_BF16;
    const int esz = bf16 ? 2 : 4;
    const tn_dtype dt = bf16 ? TN_DTYPE_BFLOAT16 : TN_DTYPE_FLOAT32;
    /* the thread's rows slot: scores (float32), probabilities (bfloat16), the float32
     * output block (bfloat16 only) and the row scales */
    size_t nsc = (size_t)(j->br * j->skp), nob = bf16 ? (size_t)(j->br * d->Ev) : 0;
    float *sc = tn_thread_scratch(TN_SCRATCH_ATTN_ROWS, (nsc + nob + (size_t)j->br + 16) * sizeof(float) +
                                                            (bf16 ? nsc * sizeof(uint16_t) : 0) + 64);
    if (!sc) {
        atomic_store(&j->failed, 1); /* the caller then runs the flash kernel over everything */
        return;
    }
    float *ob = sc + nsc, *inv = ob + nob;
    uint16_t *pb = bf16 ? (uint16_t *)(((uintptr_t)(inv + j->br) + 63) & ~(uintptr_t)63) : NULL;
    const int64_t rep = d->Hq / d->Hk;
    for (int64_t t = begin; t < end && !atomic_load(&j->failed); t++) {
        int64_t rb = t % j->nrb, bh = t / j->nrb, h = bh % d->Hq, b = bh / d->Hq, hk = h / rep;
        int64_t l0 = rb * j->br, nr = d->L - l0 < j->br ? d->L - l0 : j->br;
        int64_t nk = ag_keys(d, l0 + nr - 1);
        /* scores: sc[r][j] = scale · q[l0 + r] · k[j] */
        tn_gemm_desc g = tn_gemm_desc_init(dt);
        g.m = nr, g.n = nk, g.k = d->E;
        g.a = (const char *)d->q + (b * d->qs[0] + h * d->qs[1] + l0 * d->qs[2]) * esz, g.a_rs = d->qs[2], g.a_cs = 1;
        g.b = (const char *)d->k + (b * d->ks[0] + hk * d->ks[1]) * esz, g.b_rs = 1, g.b_cs = d->ks[2];
        g.c = sc, g.c_rs = j->skp, g.c_cs = 1;
        g.alpha = d->scale;
        g.c_f32 = bf16;
        if (!ag_run_gemm(&g)) { atomic_store(&j->failed, 1); break; }
        for (int64_t r = 0; r < nr; r++) {
            int64_t l = l0 + r, lim = d->causal && l < nk - 1 ? l : nk - 1;
            const void *mrow = NULL;
            if (d->mk != TN_ATTN_MASK_NONE)
                mrow = (const char *)d->mask +
                       (b * d->ms[0] + h * d->ms[1] + l * d->ms[2]) * (d->mk == TN_ATTN_MASK_BOOL ? 1 : 4);
            float lse = j->prob(sc + r * j->skp, nk, lim, mrow, d->mk, d->ms[3], bf16 ? pb + r * j->skp : NULL, inv + r);
            if (d->lse) d->lse[(b * d->Hq + h) * d->L + l] = lse;
        }
        /* out[l0 + r] = (P[r] · v) / sum[r]: float32 in place, bfloat16 through a float32
         * block so the output is rounded once */
        void *orow = (char *)d->out + (b * d->os[0] + h * d->os[1] + l0 * d->os[2]) * esz;
        g = tn_gemm_desc_init(dt);
        g.m = nr, g.n = d->Ev, g.k = nk;
        g.a = bf16 ? (const void *)pb : (const void *)sc, g.a_rs = j->skp, g.a_cs = 1;
        g.b = (const char *)d->v + (b * d->vs[0] + hk * d->vs[1]) * esz, g.b_rs = d->vs[2], g.b_cs = 1;
        g.c = bf16 ? (void *)ob : orow, g.c_rs = bf16 ? d->Ev : d->os[2], g.c_cs = 1;
        g.c_f32 = bf16;
        if (!ag_run_gemm(&g)) { atomic_store(&j->failed, 1); break; }
        j->finish(orow, d->os[2], d->ok, bf16 ? ob : (const float *)orow, bf16 ? d->Ev : d->os[2], inv, nr, d->Ev);
    }
}

bool tn_attn_gemm_run(const tn_attn_desc *d) {
    /* bfloat16 blocks are taller: P·V packs V into VNNI pairs once per block (AMX tiles are
     * cheap, the packing is not), at the price of more masked scores on the diagonal. */
    int64_t br = d->qk == TN_ATTN_BF16 ? AG_BR_BF16 : AG_BR;
    ag_job j = {d, br, (d->L + br - 1) / br, (d->S + 31) / 16 * 16, tn_attn_prob_row__generic,
                tn_attn_finish_rows__generic, 0};
#if defined(__x86_64__) /* the x86 instances exist only there (attn_avx2.c, attn_avx512.c) */
    tn_isa isa = tn_cpu_isa();
    if (isa >= TN_ISA_AVX512) j.prob = tn_attn_prob_row__avx512, j.finish = tn_attn_finish_rows__avx512;
    else if (isa >= TN_ISA_AVX2) j.prob = tn_attn_prob_row__avx2, j.finish = tn_attn_finish_rows__avx2;
#endif
    int64_t ntasks = d->B * d->Hq * j.nrb;
    if (tn_get_num_threads() > 1 && ntasks > 1) tn_parallel_for(ntasks, 1, ag_tasks, &j);
    else ag_tasks(&j, 0, ntasks);
    return !atomic_load(&j.failed);
}
