/* nn.h — neural-network microkernels: normalisation, attention, im2col, pooling, padding,
 * upsampling and losses. Each kernel exists for float (f32_*, also the opmath of Half and
 * BFloat16) and double (f64_*), works on contiguous buffers handed in by the op layer
 * (src/ops/nn_*.c), never sees a tensor and never allocates: scratch comes from the caller.
 *
 * Shapes are given in the first comment of each kernel group; outputs come first, then
 * inputs, then dimensions (llm.c's order). Plain C11. */
#ifndef TN_KERNELS_NN_H
#define TN_KERNELS_NN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Padding's index arithmetic, shared by the float, int64 and backward kernels. Sizes and
 * indices wrap in int64 as upstream's (a pad of INT64_MAX is legal input:
 * replication_pad1d(x, 2**63 - 1) has width 3 + 2 (2**63 - 1) = 1 there). */
static inline int64_t tn_pad_size(int64_t n, int64_t before, int64_t after) {
    return (int64_t)((uint64_t)n + (uint64_t)before + (uint64_t)after);
}
/* The source index along a dim of n for output position o with `pad` before it: reflected
 * or clamped (replication). */
static inline int64_t tn_pad_src(int64_t o, int64_t pad, int64_t n, bool reflect) {
    int64_t i = (int64_t)((uint64_t)o - (uint64_t)pad);
    if (reflect) {
        if (i < 0) i = -i;
        if (i >= n) i = 2 * (n - 1) - i;
    } else {
        if (i < 0) i = 0;
        if (i >= n) i = n - 1;
    }
    return i;
}

/* Every kernel as X(name, (argument list)), the list spelled with `T` for the element type;
 * expanded below into the f32 and f64 declarations and, in nn_ref.inc, the definitions. */
#define TN_NN_KERNELS(X)                                                                         \
    /* layer norm: x, y [M, N]; gamma, beta [N] or NULL; mean, rstd [M] (population var). */     \
    X(layer_norm, (T * y, T * mean, T * rstd, const T *x, const T *gamma, const T *beta,          \
                   int64_t M, int64_t N, double eps))                                            \
    /* rms norm: y = x * rsqrt(mean(x^2) + eps) * w; rstd [M]. */                                \
    X(rms_norm, (T * y, T * rstd, const T *x, const T *w, int64_t M, int64_t N, double eps))      \
    /* group norm: x, y [N, C, HxW]; gamma, beta [C] or NULL; mean, rstd [N, G]. */              \
    X(group_norm, (T * y, T * mean, T * rstd, const T *x, const T *gamma, const T *beta,          \
                   int64_t N, int64_t C, int64_t HxW, int64_t G, double eps))                    \
    /* batch statistics over [N, C, S] of channels [c0, c1): mean [C], biased var [C]. */       \
    X(batch_stats, (T * mean, T * var, const T *x, int64_t N, int64_t C, int64_t S, int64_t c0,   \
                    int64_t c1))                                                                 \
    /* y = x * alpha[c] + beta[c] over [N, C, S]. */                                             \
    X(channel_affine, (T * y, const T *x, const T *alpha, const T *beta, int64_t N, int64_t C,    \
                       int64_t S))                                                               \
    /* attention: q [B, Hq, L, E], k [B, Hk, S, E], v [B, Hk, S, Ev], out [B, Hq, L, Ev],        \
     * lse [B, Hq, L]; mask additive with element strides ms[4] over (b, h, l, s) or NULL;       \
     * Hq a multiple of Hk (query head h reads key head h / (Hq / Hk)); scratch S values. */      \
    X(attention, (T * out, T * lse, const T *q, const T *k, const T *v, const T *mask,            \
                  const int64_t *ms, int64_t B, int64_t Hq, int64_t Hk, int64_t L, int64_t S,     \
                  int64_t E, int64_t Ev, double scale, bool causal, T *scratch))                 \
    /* max pool over planes x [P, H, W] -> y, idx [P, oh, ow] (index h*W + w in the plane). */   \
    X(max_pool2d, (T * y, int64_t *idx, const T *x, int64_t P, int64_t H, int64_t W, int64_t oh,   \
                   int64_t ow, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph,          \
                   int64_t pw, int64_t dh, int64_t dw))                                          \
    /* avg pool over planes; divisor 0 = none. */                                                \
    X(avg_pool2d, (T * y, const T *x, int64_t P, int64_t H, int64_t W, int64_t oh, int64_t ow,     \
                   int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,          \
                   bool count_include_pad, int64_t divisor))                                     \
    /* adaptive average pool over planes. */                                                     \
    X(adaptive_avg_pool2d, (T * y, const T *x, int64_t P, int64_t H, int64_t W, int64_t oh,        \
                            int64_t ow))                                                         \
    /* reflection (reflect = true) or replication padding of planes [P, H, W] (H = 1 for 1d). */ \
    X(pad2d, (T * y, const T *x, int64_t P, int64_t H, int64_t W, int64_t pt, int64_t pb,          \
              int64_t pl, int64_t pr, bool reflect))                                             \
    /* nearest (mode 0) or bilinear (mode 1) upsampling of planes; rh, rw are upstream's        \
     * source-index scales already resolved by the op layer. */                                  \
    X(upsample2d, (T * y, const T *x, int64_t P, int64_t H, int64_t W, int64_t oh, int64_t ow,     \
                   double rh, double rw, int mode, bool align_corners))

#define T float
#define TN_NN_DECL_F32(name, args) void f32_##name##__scalar args;
TN_NN_KERNELS(TN_NN_DECL_F32)
#undef T
#define T double
#define TN_NN_DECL_F64(name, args) void f64_##name##__scalar args;
TN_NN_KERNELS(TN_NN_DECL_F64)
#undef T

/* ---- integer instances (nn_ref_i64.c): the kernels upstream also runs on integer dtypes,
 * on int64 buffers the op layer widens every integer dtype into; sums wrap modulo 2^64.
 * Same arguments as the float kernels above; conv2d is a direct loop over x [N, C, H, W],
 * w [O, C/G, kh, kw], bias [O] or NULL into y [N, O, oh, ow] (1-d: H = kh = oh = 1). */
void i64_conv2d__scalar(int64_t *y, const int64_t *x, const int64_t *w, const int64_t *bias, int64_t N, int64_t C,
                        int64_t H, int64_t W, int64_t O, int64_t G, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                        int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw);
void i64_max_pool2d__scalar(int64_t *y, int64_t *idx, const int64_t *x, int64_t P, int64_t H, int64_t W, int64_t oh,
                            int64_t ow, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                            int64_t dh, int64_t dw);
void i64_avg_pool2d__scalar(int64_t *y, const int64_t *x, int64_t P, int64_t H, int64_t W, int64_t oh, int64_t ow,
                            int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                            bool count_include_pad, int64_t divisor);
void i64_pad2d__scalar(int64_t *y, const int64_t *x, int64_t P, int64_t H, int64_t W, int64_t pt, int64_t pb,
                       int64_t pl, int64_t pr, bool reflect);

/* ---- float32 layer / RMS norm over rows, vectorised and threaded (norm_rows.c); same
 * arguments and results (to double-sum rounding) as f32_layer_norm__scalar / f32_rms_norm__scalar. */
void f32_layer_norm_rows(float *y, float *mean, float *rstd, const float *x, const float *gamma, const float *beta,
                         int64_t M, int64_t N, double eps);
void f32_rms_norm_rows(float *y, float *rstd, const float *x, const float *w, int64_t M, int64_t N, double eps);
void f32_group_norm_rows(float *y, float *mean, float *rstd, const float *x, const float *gamma, const float *beta,
                         int64_t N, int64_t C, int64_t HxW, int64_t G, double eps);

/* ---- fast attention (attn_generic.c, attn_avx2.c, attn_avx512.c) ----------------------
 * Blocked flash-style attention in float32: per (batch, kv head, block of query rows),
 * Q·K^T on key blocks, online softmax (running max and sum), ·V, causal blocks past the
 * diagonal skipped. Element kinds of q/k/v/out: float32, bfloat16 or float16 (widened to
 * float32, output rounded once). Strides are in elements over (b, h, l|s, e) and the last
 * dim must be contiguous. The GQA group of a kv head is Hq / Hk consecutive query heads. */
enum { TN_ATTN_F32 = 0, TN_ATTN_BF16 = 1, TN_ATTN_F16 = 2 };
enum { TN_ATTN_MASK_NONE = 0, TN_ATTN_MASK_BOOL = 1, TN_ATTN_MASK_F32 = 2 };
#define ATTN_BR 64 /* query rows per task */
#define ATTN_BK 64 /* keys per block */
typedef struct tn_attn_desc {
    const void *q, *k, *v;
    void *out;
    float *lse;            /* [B, Hq, L] contiguous, or NULL */
    int qk, kk, vk, ok;    /* TN_ATTN_F32 / BF16 / F16 */
    int64_t qs[3], ks[3], vs[3], os[3]; /* element strides of b, h, l (s) */
    const void *mask;      /* bool (1 byte, true = keep) or float32 additive, or NULL */
    int mk;                /* TN_ATTN_MASK_* */
    int64_t ms[4];         /* mask element strides over (b, h, l, s); 0 broadcasts */
    int64_t B, Hq, Hk, L, S, E, Ev;
    float scale;
    bool causal;           /* key j visible from query l iff j <= l */
} tn_attn_desc;
static inline int64_t tn_attn_pad(int64_t n) { return (n + 15) / 16 * 16; }
/* Bytes of scratch tn_attn_run needs with `workers` workers (tn_attn_workers). */
size_t tn_attn_scratch_bytes(const tn_attn_desc *d, int workers);
/* How many workers tn_attn_run will use (1 for small problems). */
int tn_attn_workers(const tn_attn_desc *d);
/* Runs the attention on tn_parallel_for, the ISA variant chosen by tn_cpu_isa(). */
void tn_attn_run(const tn_attn_desc *d, void *scratch, int workers);
void tn_attn_tasks__generic(const tn_attn_desc *d, float *scratch, int64_t first, int64_t step);
void tn_attn_tasks__avx2(const tn_attn_desc *d, float *scratch, int64_t first, int64_t step);
void tn_attn_tasks__avx512(const tn_attn_desc *d, float *scratch, int64_t first, int64_t step);
/* Prefill-sized attention as blocked matrix products (attn_gemm.c): per (batch, query head,
 * block of query rows) the scores against every visible key in one GEMM (float32, or
 * bfloat16 on AMX tiles with float32 scores), a softmax row pass, then P·V in one GEMM
 * (bfloat16: P rounded once, as upstream's flash kernel does). tn_attn_run takes it when
 * usable; it returns false (nothing written) when its buffers cannot be allocated. */
bool tn_attn_gemm_usable(const tn_attn_desc *d);
bool tn_attn_gemm_run(const tn_attn_desc *d);
#define TN_ATTN_ROW_FNS(SFX)                                                                                    \
    float tn_attn_prob_row__##SFX(float *s, int64_t n, int64_t lim, const void *mrow, int mk, int64_t ms,      \
                                  uint16_t *pb, float *inv);                                                  \
    void tn_attn_finish_rows__##SFX(void *out, int64_t ors, int ok, const float *o, int64_t opitch,           \
                                    const float *inv, int64_t nr, int64_t ev);
TN_ATTN_ROW_FNS(generic)
TN_ATTN_ROW_FNS(avx2)
TN_ATTN_ROW_FNS(avx512)

#endif
