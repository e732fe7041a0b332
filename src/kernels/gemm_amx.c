/* gemm_amx.c — bfloat16 GEMM on AMX tiles (AMX-TILE + AMX-BF16), the tier above the
 * AVX512-BF16 pair kernel. Only called after tn_cpu_isa() says amx (the process was granted
 * the tile state); each worker loads its tile configuration at the start of its task and
 * releases the tiles at the end.
 *
 * Formulation: the product is computed transposed, Cᵀ = Bᵀ·Aᵀ, so the weight of a linear
 * layer (B = Wᵀ, W n×k row-major: b_rs == 1) is the *row* operand of TDPBF16PS and is read
 * by TILELOADD straight from memory, 16 weight rows × 32 k at a time, without packing. The
 * activations (A, m×k) are packed once per call into VNNI tiles (row q of a tile holds the
 * pair (k = 2q, 2q+1) of 16 consecutive rows of A), which is a 16×16 transpose of 32-bit
 * words. Four float32 accumulator tiles hold a 32 (features) × 32 (tokens) block of Cᵀ for
 * the whole k; at the end each block is stored, transposed back, scaled by alpha/beta in
 * float32 and rounded once to bfloat16 — upstream's opmath contract.
 *
 * Operands that do not fit the direct form (k not a multiple of 32, a partial group of 16
 * weight rows, B not k-contiguous) are packed per 16-row panel into the worker's scratch.
 * AMX flushes denormal inputs and outputs to zero, as upstream's oneDNN path does. */
#include "kernels/gemm_internal.h"

#include "core/dtype.h"
#include "core/threadpool.h"
#include "kernels/gemm.h"
#include "kernels/x86_transpose.h"
#include "kernels/x86_bf16.h"

#define ALIGN 64
#define KT 32   /* k per tile step (32 bf16 = 64 bytes per tile row) */
#define TILE 16 /* rows per tile; also columns of a float32 accumulator tile */
/* Tokens per chunk: the packed activations of a chunk stay within ~1 MiB of L2. */
#define CHUNK_BYTES (1 << 20)
/* Weights of one group of 32-row feature blocks (kept in L2 while the tokens pass). */
#define GROUP_BYTES (512 << 10)
/* Multiply-adds below which a problem stays on the calling thread. */
#define MIN_PARALLEL_MACS (4ll << 20)

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static char *align_up(char *p) { return (char *)(((uintptr_t)p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1)); }

/* Geometry shared by the scratch query and the run. */
typedef struct amx_plan {
    int64_t k32, nkt;        /* k rounded up to 32, tile steps */
    int64_t m16, mchunk;     /* rows of A rounded to 16, rows per chunk (multiple of 32) */
    bool w_direct;           /* B^T rows are readable in place by TILELOADD */
    int64_t group;           /* feature blocks (32 rows of B^T) per L2-resident group */
    int64_t wblocks;         /* packed weight blocks a worker's scratch holds */
    size_t apack_bytes;      /* packed activations of one chunk */
    size_t slot_bytes;       /* per-worker scratch */
} amx_plan;

static amx_plan plan_of(const tn_gemm_desc *g) {
    amx_plan p;
    p.k32 = round_up(g->k, KT);
    p.nkt = p.k32 / KT;
    p.m16 = round_up(g->m, TILE);
    int64_t per_row = p.k32 * 2;
    int64_t mc = (CHUNK_BYTES / per_row) / 32 * 32;
    if (mc < 32) mc = 32;
    p.mchunk = min64(mc, round_up(g->m, 32));
    p.w_direct = g->b_rs == 1 && g->k % KT == 0 && g->b_cs * 2 < INT32_MAX;
    p.group = GROUP_BYTES / (32 * per_row);
    if (p.group < 1) p.group = 1;
    if (p.group > 64) p.group = 64;
    p.apack_bytes = (size_t)round_up(p.mchunk, 32) * (size_t)p.k32 * 2;
    /* packed weight panels (32 rows × k32 per block: a whole group, or only the partial
     * last block when the weights are read in place), two 32×32 float blocks,
     * a 16×16 transpose buffer, the tile configuration */
    p.wblocks = p.w_direct ? 1 : p.group; /* direct: only the last, partial block is packed */
    p.slot_bytes = (size_t)p.wblocks * 32 * (size_t)p.k32 * 2 + 2 * 32 * 32 * 4 + 16 * 16 * 4 + 64 + 4 * ALIGN;
    return p;
}

#define MAX_SLOTS 64

static int want_slots(void) {
    int t = tn_get_num_threads();
    return t < 1 ? 1 : t > MAX_SLOTS ? MAX_SLOTS : t;
}

size_t tn_gemm_bf16_amx_scratch(const tn_gemm_desc *g) {
    amx_plan p = plan_of(g);
    return p.apack_bytes + ALIGN + (size_t)want_slots() * p.slot_bytes;
}

#if defined(__x86_64__)
#include <immintrin.h>

#define TGT __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma,f16c")))
#define TGT512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))

typedef struct tilecfg {
    uint8_t palette, start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tilecfg;

/* Tiles 0-3: float32 accumulators (16 × 16); 4-5: weight rows (16 × 32 bf16); 6-7: packed
 * activations (16 pairs × 16 tokens). Every tile is 16 rows of 64 bytes. */
static TGT void tiles_begin(void *cfg_mem) {
    tilecfg *cfg = cfg_mem;
    memset(cfg, 0, sizeof *cfg);
    cfg->palette = 1;
    for (int t = 0; t < 8; t++) cfg->colsb[t] = 64, cfg->rows[t] = TILE;
    _tile_loadconfig(cfg);
}
static TGT void tiles_end(void) { _tile_release(); }

/* Packs rows [i0, i0+16) of A (zero beyond m) into nkt VNNI tiles at dst (1 KiB each):
 * dst[kt][q][r][t] = A(i0 + r, kt*32 + 2q + t), zero beyond k. */
static TGT512 void pack_act_group(const tn_gemm_desc *g, int64_t i0, int64_t nkt, uint16_t *dst) {
    const uint16_t *a = g->a;
    int64_t rows = min64(TILE, g->m - i0);
    for (int64_t kt = 0; kt < nkt; kt++, dst += 512) {
        int64_t p0 = kt * KT;
        if (g->a_cs == 1 && rows == TILE && p0 + KT <= g->k) {
            __m512i r[16];
            for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_si512(a + (i0 + i) * g->a_rs + p0);
            tn_transpose16x32(r);
            for (int q = 0; q < 16; q++) _mm512_storeu_si512(dst + q * 32, r[q]);
        } else {
            for (int q = 0; q < 16; q++)
                for (int r = 0; r < 16; r++)
                    for (int t = 0; t < 2; t++) {
                        int64_t p = p0 + 2 * q + t;
                        dst[q * 32 + r * 2 + t] = r < rows && p < g->k ? a[(i0 + r) * g->a_rs + p * g->a_cs] : 0;
                    }
        }
    }
}

/* Packs weight rows [j0, j0+16) of Bᵀ (element (j, p) = B(p, j)) row-major, k32 wide, zero
 * beyond n and k. */
/* pack_w_panel for a row-major B (b_cs == 1, e.g. the V of attention's P·V): 32 k at a
 * time, rows k and k+1 interleave into 32-bit pairs and one 16×16 transpose of those pairs
 * gives 16 rows of B^T × 32 k. */
static TGT512 void pack_w_panel_rows(const tn_gemm_desc *g, int64_t j0, int64_t k32, uint16_t *dst) {
    const uint16_t *b = g->b;
    int64_t rows = min64(TILE, g->n - j0);
    __mmask16 mk = (__mmask16)((1u << rows) - 1);
    for (int64_t p0 = 0; p0 < k32; p0 += KT) {
        __m512i w[16];
        for (int q = 0; q < 16; q++) {
            int64_t p = p0 + 2 * q;
            __m256i lo = p < g->k ? _mm256_maskz_loadu_epi16(mk, b + p * g->b_rs + j0) : _mm256_setzero_si256();
            __m256i hi = p + 1 < g->k ? _mm256_maskz_loadu_epi16(mk, b + (p + 1) * g->b_rs + j0) : _mm256_setzero_si256();
            w[q] = _mm512_or_si512(_mm512_cvtepu16_epi32(lo), _mm512_slli_epi32(_mm512_cvtepu16_epi32(hi), 16));
        }
        tn_transpose16x32(w);
        for (int r = 0; r < TILE; r++) _mm512_storeu_si512(dst + r * k32 + p0, w[r]);
    }
}

static void pack_w_panel(const tn_gemm_desc *g, int64_t j0, int64_t k32, uint16_t *dst) {
    const uint16_t *b = g->b;
    int64_t rows = min64(TILE, g->n - j0);
    if (g->b_cs == 1 && g->b_rs != 1) {
        pack_w_panel_rows(g, j0, k32, dst);
        return;
    }
    for (int64_t r = 0; r < TILE; r++) {
        uint16_t *d = dst + r * k32;
        if (r >= rows) {
            memset(d, 0, (size_t)k32 * 2);
            continue;
        }
        const uint16_t *s = b + (j0 + r) * g->b_cs;
        if (g->b_rs == 1) memcpy(d, s, (size_t)g->k * 2);
        else
            for (int64_t p = 0; p < g->k; p++) d[p] = s[p * g->b_rs];
        for (int64_t p = g->k; p < k32; p++) d[p] = 0;
    }
}

/* The tile loop: C tiles (f-half, token-half) accumulate over nkt steps. w0/w1 point at
 * weight rows (stride wst bytes), x0/x1 at packed activation tiles (1 KiB per step). nw/nx
 * (1 or 2) say which halves exist. block_store then puts the block in cb[f][token], 32
 * floats a row. */
static TGT void block_kernel(int64_t nkt, const uint16_t *w0, const uint16_t *w1, int64_t wst, const uint16_t *x0,
                             const uint16_t *x1, int nw, int nx) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    if (nw == 2 && nx == 2) {
        for (int64_t kt = 0; kt < nkt; kt++) {
            _tile_loadd(4, w0 + kt * KT, wst);
            _tile_loadd(6, x0 + kt * 512, 64);
            _tile_loadd(7, x1 + kt * 512, 64);
            _tile_loadd(5, w1 + kt * KT, wst);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
    } else if (nw == 2) {
        for (int64_t kt = 0; kt < nkt; kt++) {
            _tile_loadd(4, w0 + kt * KT, wst);
            _tile_loadd(6, x0 + kt * 512, 64);
            _tile_loadd(5, w1 + kt * KT, wst);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(2, 5, 6);
        }
    } else if (nx == 2) {
        for (int64_t kt = 0; kt < nkt; kt++) {
            _tile_loadd(4, w0 + kt * KT, wst);
            _tile_loadd(6, x0 + kt * 512, 64);
            _tile_loadd(7, x1 + kt * 512, 64);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
        }
    } else {
        for (int64_t kt = 0; kt < nkt; kt++) {
            _tile_loadd(4, w0 + kt * KT, wst);
            _tile_loadd(6, x0 + kt * 512, 64);
            _tile_dpbf16ps(0, 4, 6);
        }
    }
}

static TGT void block_store(float *cb) {
    _tile_stored(0, cb, 128);
    _tile_stored(1, cb + 16, 128);
    _tile_stored(2, cb + 16 * 32, 128);
    _tile_stored(3, cb + 16 * 32 + 16, 128);
}

/* Writes the block cb[f][t] (f < nf features from j0, t < nt tokens from i0) into C. */
static TGT512 void write_block(const tn_gemm_desc *g, int64_t i0, int64_t j0, int nt, int nf, const float *cb,
                               float *tb) {
    float alpha = (float)g->alpha, beta = (float)g->beta;
    uint16_t *C = g->c;
    if (g->c_f32 && g->c_cs == 1) { /* float32 C: transpose [f][t] to [t][f], no rounding */
        float *Cf = g->c;
        for (int th = 0; th * 16 < nt; th++)
            for (int fh = 0; fh * 16 < nf; fh++) {
                __m512i r[16];
                for (int f = 0; f < 16; f++) r[f] = _mm512_loadu_si512(cb + (fh * 16 + f) * 32 + th * 16);
                tn_transpose16x32(r);
                int cols = nf - fh * 16 < 16 ? nf - fh * 16 : 16;
                __mmask16 mk = (__mmask16)((1u << cols) - 1);
                int rows = nt - th * 16 < 16 ? nt - th * 16 : 16;
                for (int t = 0; t < rows; t++) {
                    __m512 v = _mm512_mul_ps(_mm512_castsi512_ps(r[t]), _mm512_set1_ps(alpha));
                    float *d = Cf + (i0 + th * 16 + t) * g->c_rs + j0 + fh * 16;
                    if (beta != 0.0f) v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mk, d), _mm512_set1_ps(beta), v);
                    _mm512_mask_storeu_ps(d, mk, v);
                }
            }
        (void)tb;
        return;
    }
    if (g->c_f32) {
        float *Cf = g->c;
        for (int t = 0; t < nt; t++)
            for (int f = 0; f < nf; f++) {
                float *d = Cf + (i0 + t) * g->c_rs + (j0 + f) * g->c_cs;
                float v = alpha * cb[f * 32 + t];
                if (beta != 0) v += beta * *d;
                *d = v;
            }
        return;
    }
    if (g->c_cs == 1 && alpha == 1.0f && beta == 0.0f) {
        /* Plain product (a linear layer without bias): round first, pair features (f, f+1)
         * into one 32-bit lane, then a single 16×16 transpose gives 32 features of a token
         * per vector — one 64-byte store per row of C. */
        __mmask32 mk = nf >= 32 ? (__mmask32)~0u : (__mmask32)((1u << nf) - 1);
        for (int th = 0; th * 16 < nt; th++) {
            __m512i d[16];
            for (int fp = 0; fp < 16; fp++) {
                __m512i lo = tn_round_bf16_lanes(_mm512_loadu_ps(cb + (2 * fp) * 32 + th * 16));
                __m512i hi = tn_round_bf16_lanes(_mm512_loadu_ps(cb + (2 * fp + 1) * 32 + th * 16));
                d[fp] = _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
            }
            tn_transpose16x32(d);
            int rows = nt - th * 16 < 16 ? nt - th * 16 : 16;
            for (int t = 0; t < rows; t++) _mm512_mask_storeu_epi16(C + (i0 + th * 16 + t) * g->c_rs + j0, mk, d[t]);
        }
        (void)tb;
        return;
    }
    if (g->c_cs == 1) {
        for (int th = 0; th * 16 < nt; th++)
            for (int fh = 0; fh * 16 < nf; fh++) {
                /* 16×16 sub-block: transpose [f][t] to [t][f]. */
                __m512i r[16];
                for (int f = 0; f < 16; f++)
                    r[f] = _mm512_loadu_si512(cb + (fh * 16 + f) * 32 + th * 16);
                tn_transpose16x32(r);
                int cols = nf - fh * 16 < 16 ? nf - fh * 16 : 16;
                __mmask16 mk = (__mmask16)((1u << cols) - 1);
                int rows = nt - th * 16 < 16 ? nt - th * 16 : 16;
                for (int t = 0; t < rows; t++) {
                    __m512 v = _mm512_castsi512_ps(r[t]);
                    uint16_t *d = C + (i0 + th * 16 + t) * g->c_rs + j0 + fh * 16;
                    if (alpha != 1.0f) v = _mm512_mul_ps(v, _mm512_set1_ps(alpha));
                    if (beta != 0.0f) {
                        __m512i old = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mk, d));
                        v = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(old, 16)), _mm512_set1_ps(beta), v);
                    }
                    _mm256_mask_storeu_epi16(d, mk, tn_round_bf16(v));
                }
            }
        (void)tb;
        return;
    }
    for (int t = 0; t < nt; t++)
        for (int f = 0; f < nf; f++) {
            uint16_t *d = C + (i0 + t) * g->c_rs + (j0 + f) * g->c_cs;
            float v = alpha * cb[f * 32 + t];
            if (beta != 0) v += beta * tn_bf16_to_f32(*d);
            *d = tn_f32_to_bf16(v);
        }
}

typedef struct amx_job {
    const tn_gemm_desc *g;
    amx_plan p;
    const uint16_t *apack; /* packed activations of the current chunk */
    int64_t c0, c1;        /* token rows of the chunk */
    char *slots;
    int nslots;
    bool split_tokens;     /* partition token pairs instead of feature blocks */
    int64_t nfb, ntb;      /* feature blocks (32) and token blocks (32) in the chunk */
} amx_job;

static TGT void run_slot(const amx_job *job, int s) {
    const tn_gemm_desc *g = job->g;
    const amx_plan *p = &job->p;
    char *mem = align_up(job->slots + (size_t)s * p->slot_bytes);
    uint16_t *wpack = (uint16_t *)mem;
    float *cb = (float *)align_up(mem + (size_t)p->wblocks * 32 * (size_t)p->k32 * 2);
    float *tb = (float *)align_up((char *)(cb + 2 * 32 * 32));
    char *cfg = align_up((char *)(tb + 16 * 16));
    int64_t f0 = 0, f1 = job->nfb, t0 = 0, t1 = job->ntb;
    int64_t nparts = job->nslots;
    if (job->split_tokens) t0 = job->ntb * s / nparts, t1 = job->ntb * (s + 1) / nparts;
    else f0 = job->nfb * s / nparts, f1 = job->nfb * (s + 1) / nparts;
    if (f0 >= f1 || t0 >= t1) return;
    tiles_begin(cfg);
    bool have_prev = false;
    int64_t prev_i0 = 0, prev_j0 = 0;
    int prev_nt = 0, prev_nf = 0, cur = 0;
    const uint16_t *B = g->b;
    const int64_t panel = TILE * p->k32; /* elements of one packed 16-row weight panel */
    /* Feature blocks go in groups whose weights stay in L2; within a group the token
     * blocks are outer, so the activation tiles stay in L1 and each row of C is written
     * in one contiguous run. */
    for (int64_t gf0 = f0; gf0 < f1; gf0 += p->group) {
        int64_t gf1 = min64(f1, gf0 + p->group);
        const uint16_t *w0s[64], *w1s[64];
        int64_t wsts[64];
        for (int64_t fb = gf0; fb < gf1; fb++) {
            int64_t j0 = fb * 32, i = fb - gf0;
            int nf = (int)min64(32, g->n - j0);
            if (p->w_direct && nf == 32) {
                w0s[i] = B + j0 * g->b_cs, w1s[i] = B + (j0 + 16) * g->b_cs, wsts[i] = g->b_cs * 2;
            } else {
                uint16_t *d = wpack + (p->w_direct ? 0 : (size_t)i * 2 * (size_t)panel);
                pack_w_panel(g, j0, p->k32, d);
                if (nf > 16) pack_w_panel(g, j0 + 16, p->k32, d + panel);
                w0s[i] = d, w1s[i] = d + panel, wsts[i] = p->k32 * 2;
            }
        }
        /* The next group's weight rows come from memory once: prefetch them into L2,
         * spread over this group's blocks, so DRAM latency overlaps the tile work. */
        int64_t pf_first = gf1 * 32, pf_rows = p->w_direct && gf1 < f1 ? min64(min64(f1, gf1 + p->group) * 32, g->n) - pf_first : 0;
        int64_t iters = (t1 - t0) * (gf1 - gf0), it = 0;
        for (int64_t tb_ = t0; tb_ < t1; tb_++) {
            int64_t i0 = job->c0 + tb_ * 32;
            int nt = (int)min64(32, job->c1 - i0), nx = nt > 16 ? 2 : 1;
            const uint16_t *x0 = job->apack + (size_t)(tb_ * 2) * (size_t)p->nkt * 512;
            const uint16_t *x1 = x0 + (size_t)p->nkt * 512;
            for (int64_t fb = gf0; fb < gf1; fb++, it++) {
                for (int64_t r = pf_rows * it / iters; r < pf_rows * (it + 1) / iters; r++) {
                    const char *row = (const char *)(B + (pf_first + r) * g->b_cs);
                    for (int64_t off = 0; off < g->k * 2; off += 64) _mm_prefetch(row + off, _MM_HINT_T1);
                }
                int64_t j0 = fb * 32, i = fb - gf0;
                int nf = (int)min64(32, g->n - j0), nw = nf > 16 ? 2 : 1;
                /* Software pipeline: the tile products of this block are queued first, the
                 * previous block's epilogue (vector work) runs while they execute, then this
                 * block's accumulators are stored for the next round. */
                block_kernel(p->nkt, w0s[i], w1s[i], wsts[i], x0, x1, nw, nx);
                if (have_prev) write_block(g, prev_i0, prev_j0, prev_nt, prev_nf, cb + 1024 * (1 - cur), tb);
                block_store(cb + 1024 * cur);
                have_prev = true, prev_i0 = i0, prev_j0 = j0, prev_nt = nt, prev_nf = nf, cur = 1 - cur;
            }
        }
    }
    if (have_prev) write_block(g, prev_i0, prev_j0, prev_nt, prev_nf, cb + 1024 * (1 - cur), tb);
    tiles_end();
}

static void slot_task(void *ctx, int64_t b, int64_t e) {
    for (int64_t s = b; s < e; s++) run_slot(ctx, (int)s);
}

typedef struct pack_job { const tn_gemm_desc *g; int64_t c0, nkt; uint16_t *dst; } pack_job;
static void pack_task(void *ctx, int64_t b, int64_t e) {
    const pack_job *pj = ctx;
    for (int64_t grp = b; grp < e; grp++)
        pack_act_group(pj->g, pj->c0 + grp * TILE, pj->nkt, pj->dst + (size_t)grp * (size_t)pj->nkt * 512);
}

void tn_gemm_bf16_amx(const tn_gemm_desc *g, void *scratch, size_t scratch_bytes) {
    amx_job job;
    job.g = g;
    job.p = plan_of(g);
    char *base = align_up(scratch);
    uint16_t *apack = (uint16_t *)base;
    job.slots = base + job.p.apack_bytes;
    size_t avail = scratch_bytes - (size_t)(job.slots - (char *)scratch);
    int cap = (int)(avail / job.p.slot_bytes);
    int threads = want_slots();
    if (cap > threads) cap = threads;
    if (cap < 1) cap = 1;
    for (int64_t c0 = 0; c0 < g->m; c0 += job.p.mchunk) {
        int64_t c1 = min64(g->m, c0 + job.p.mchunk), rows = c1 - c0;
        int64_t ngroups = (rows + TILE - 1) / TILE;
        pack_job pj = {g, c0, job.p.nkt, apack};
        int64_t pack_elems = rows * job.p.k32;
        tn_parallel_for(ngroups, pack_elems > (256 << 10) ? 1 : ngroups, pack_task, &pj);
        job.apack = apack;
        job.c0 = c0, job.c1 = c1;
        job.nfb = (g->n + 31) / 32;
        job.ntb = (rows + 31) / 32;
        int64_t macs = rows * g->n * g->k;
        int64_t useful = macs / MIN_PARALLEL_MACS;
        int ns = cap;
        if (useful < ns) ns = useful < 1 ? 1 : (int)useful;
        job.split_tokens = job.nfb < ns && job.ntb > job.nfb;
        int64_t parts = job.split_tokens ? job.ntb : job.nfb;
        if (parts < ns) ns = (int)parts;
        job.nslots = ns;
        if (ns == 1) run_slot(&job, 0);
        else tn_parallel_for(ns, 1, slot_task, &job);
    }
}

#else
void tn_gemm_bf16_amx(const tn_gemm_desc *g, void *scratch, size_t scratch_bytes) {
    (void)scratch, (void)scratch_bytes;
    tn_gemm_ref(g);
}
#endif
