/* random.c — upstream-identical CPU sampling: the distribution transforms of
 * TransformationHelper.h / DistributionsHelper.h, the serial TensorIterator element order,
 * the 16-wide Box-Muller (scalar, and upstream's AVX2 avx_mathfun.h path on AVX2 lanes),
 * multinomial and randperm.
 *
 * Floating-point contract: this file is compiled as ISO C11, where GCC does not fuse
 * a*b+c; every fused multiply-add that upstream's AVX2 build performs (the compiler
 * contracts x*(to-from)+from, val*std+mean, median+sigma*t, and the avx_mathfun
 * polynomials) is written out as an explicit fma()/fmaf(), and only on the paths where
 * upstream's build fused it. */
#include "kernels/random.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"

/* ---- capability ----------------------------------------------------------------------- */

static _Atomic int isa_state = -1;       /* tn_random_isa, -1 = not yet detected */
static _Atomic int isa_hw = -1;          /* what the CPU supports */

static int detect_hw(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"))
        return TN_RANDOM_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return TN_RANDOM_ISA_AVX2;
    return TN_RANDOM_ISA_DEFAULT;
#else
    return TN_RANDOM_ISA_DEFAULT;
#endif
}

tn_random_isa tn_random_isa_get(void) {
    int s = atomic_load(&isa_state);
    if (s >= 0) return (tn_random_isa)s;
    int hw = detect_hw();
    atomic_store(&isa_hw, hw);
    s = hw;
    /* upstream honours ATEN_CPU_CAPABILITY; so do we, so both can be pinned in tests */
    const char *env = getenv("ATEN_CPU_CAPABILITY");
    if (env) {
        int want = -1;
        if (!strcmp(env, "default")) want = TN_RANDOM_ISA_DEFAULT;
        else if (!strcmp(env, "avx2")) want = TN_RANDOM_ISA_AVX2;
        else if (!strcmp(env, "avx512")) want = TN_RANDOM_ISA_AVX512;
        if (want >= 0 && want <= hw) s = want;
    }
    atomic_store(&isa_state, s);
    return (tn_random_isa)s;
}

void tn_random_isa_set(tn_random_isa isa) {
    (void)tn_random_isa_get();
    int hw = atomic_load(&isa_hw);
    atomic_store(&isa_state, (int)isa <= hw ? (int)isa : hw);
}

/* Upstream ships DistributionKernels only as DEFAULT and AVX2 builds (an AVX512 CPU runs
 * the AVX2 one). The AVX2 build was compiled with FMA and GCC's default contraction, the
 * x86 default build without FMA; non-x86 builds contract (FMA is baseline there). */
static bool fused(void) {
#if defined(__x86_64__) || defined(__i386__)
    return tn_random_isa_get() != TN_RANDOM_ISA_DEFAULT;
#else
    return true;
#endif
}

/* ---- element order: upstream TensorIterator's serial loop ------------------------------ */

typedef struct rnd_iter {
    int nd;                         /* loop dims, innermost first */
    int64_t size[TN_MAX_DIMS];
    int64_t stride[2][TN_MAX_DIMS]; /* elements; operand 1 optional */
    int64_t idx[TN_MAX_DIMS];
    int64_t off[2];
    int64_t numel;
} rnd_iter;

/* TensorIteratorBase::reorder_dimensions: returns 1 if dim0 should come after dim1,
 * -1 if before, 0 if ambiguous (zero strides are skipped; ties broken by size). */
static int should_swap(const tn_strided *ops[2], int nops, int d0, int d1) {
    for (int a = 0; a < nops; a++) {
        int64_t s0 = ops[a]->strides[d0], s1 = ops[a]->strides[d1];
        if (s0 == 0 || s1 == 0) continue;
        if (s0 < s1) return -1;
        if (s0 > s1) return 1;
        if (ops[0]->sizes[d0] > ops[0]->sizes[d1]) return 1;
    }
    return 0;
}

static void iter_init(rnd_iter *it, const tn_strided *out, const tn_strided *in) {
    const tn_strided *ops[2] = {out, in};
    int nops = in ? 2 : 1, nd = out->ndim, perm[TN_MAX_DIMS];
    for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
    /* insertion sort with ambiguous comparisons, exactly as upstream (the swaps it makes
     * past an ambiguous neighbour are part of the observable order) */
    for (int i = 1; i < nd; i++) {
        int dim1 = i;
        for (int dim0 = i - 1; dim0 >= 0; dim0--) {
            int c = should_swap(ops, nops, perm[dim0], perm[dim1]);
            if (c > 0) {
                int t = perm[dim0]; perm[dim0] = perm[dim1]; perm[dim1] = t;
                dim1 = dim0;
            } else if (c < 0) {
                break;
            }
        }
    }
    it->nd = nd;
    it->numel = 1;
    for (int i = 0; i < nd; i++) {
        it->size[i] = out->sizes[perm[i]];
        it->stride[0][i] = out->strides[perm[i]];
        it->stride[1][i] = in ? in->strides[perm[i]] : 0;
        it->idx[i] = 0;
        it->numel *= it->size[i];
    }
    it->off[0] = it->off[1] = 0;
}

static inline void iter_next(rnd_iter *it) {
    for (int d = 0; d < it->nd; d++) {
        it->off[0] += it->stride[0][d];
        it->off[1] += it->stride[1][d];
        if (++it->idx[d] < it->size[d]) return;
        it->off[0] -= it->stride[0][d] * it->size[d];
        it->off[1] -= it->stride[1][d] * it->size[d];
        it->idx[d] = 0;
    }
}

static bool is_contiguous(const tn_strided *t) {
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->sizes[d] == 1) continue;
        if (t->strides[d] != expect) return false;
        expect *= t->sizes[d];
    }
    return true;
}

static int64_t numel_of(const tn_strided *t) {
    int64_t n = 1;
    for (int d = 0; d < t->ndim; d++) n *= t->sizes[d];
    return n;
}

/* ---- element stores with C++ static_cast semantics ------------------------------------ */

/* static_cast<scalar_t>(double): Half/BFloat16 construct from float, so doubles round
 * twice (double -> float -> half), as upstream. Integers truncate through the x86
 * conversion instructions' behaviour for the widths GCC uses. */
static inline void store_f64(tn_dtype dt, void *base, int64_t i, double v) {
    switch (dt) {
    case TN_DTYPE_FLOAT64: ((double *)base)[i] = v; break;
    case TN_DTYPE_FLOAT32: ((float *)base)[i] = (float)v; break;
    case TN_DTYPE_FLOAT16: ((uint16_t *)base)[i] = tn_f32_to_half((float)v); break;
    case TN_DTYPE_BFLOAT16: ((uint16_t *)base)[i] = tn_f32_to_bf16((float)v); break;
    case TN_DTYPE_INT64: ((int64_t *)base)[i] = (int64_t)v; break;
    case TN_DTYPE_INT32: ((int32_t *)base)[i] = (int32_t)v; break;
    case TN_DTYPE_INT16: ((int16_t *)base)[i] = (int16_t)(int32_t)v; break;
    case TN_DTYPE_INT8: ((int8_t *)base)[i] = (int8_t)(int32_t)v; break;
    case TN_DTYPE_UINT8: ((uint8_t *)base)[i] = (uint8_t)(int32_t)v; break;
    case TN_DTYPE_BOOL: ((uint8_t *)base)[i] = v != 0.0; break;
    default: break;
    }
}

static inline void store_f32(tn_dtype dt, void *base, int64_t i, float v) {
    switch (dt) {
    case TN_DTYPE_FLOAT32: ((float *)base)[i] = v; break;
    case TN_DTYPE_FLOAT16: ((uint16_t *)base)[i] = tn_f32_to_half(v); break;
    case TN_DTYPE_BFLOAT16: ((uint16_t *)base)[i] = tn_f32_to_bf16(v); break;
    default: store_f64(dt, base, i, (double)v); break;
    }
}

/* static_cast<scalar_t>(int64_t): floats round from the integer (half/bf16 via float). */
static inline void store_i64(tn_dtype dt, void *base, int64_t i, int64_t v) {
    switch (dt) {
    case TN_DTYPE_FLOAT64: ((double *)base)[i] = (double)v; break;
    case TN_DTYPE_FLOAT32: ((float *)base)[i] = (float)v; break;
    case TN_DTYPE_FLOAT16: ((uint16_t *)base)[i] = tn_f32_to_half((float)v); break;
    case TN_DTYPE_BFLOAT16: ((uint16_t *)base)[i] = tn_f32_to_bf16((float)v); break;
    case TN_DTYPE_INT64: ((int64_t *)base)[i] = v; break;
    case TN_DTYPE_UINT64: ((uint64_t *)base)[i] = (uint64_t)v; break;
    case TN_DTYPE_INT32: ((int32_t *)base)[i] = (int32_t)v; break;
    case TN_DTYPE_UINT32: ((uint32_t *)base)[i] = (uint32_t)v; break;
    case TN_DTYPE_INT16: ((int16_t *)base)[i] = (int16_t)v; break;
    case TN_DTYPE_UINT16: ((uint16_t *)base)[i] = (uint16_t)v; break;
    case TN_DTYPE_INT8: ((int8_t *)base)[i] = (int8_t)v; break;
    case TN_DTYPE_UINT8: ((uint8_t *)base)[i] = (uint8_t)v; break;
    case TN_DTYPE_BOOL: ((uint8_t *)base)[i] = v != 0; break;
    default: break;
    }
}

static inline double load_f64(tn_dtype dt, const void *base, int64_t i) {
    switch (dt) {
    case TN_DTYPE_FLOAT64: return ((const double *)base)[i];
    case TN_DTYPE_FLOAT32: return ((const float *)base)[i];
    case TN_DTYPE_FLOAT16: return tn_half_to_f32(((const uint16_t *)base)[i]);
    case TN_DTYPE_BFLOAT16: return tn_bf16_to_f32(((const uint16_t *)base)[i]);
    default: return 0.0;
    }
}

static bool is_float_dtype(tn_dtype dt) {
    return dt == TN_DTYPE_FLOAT32 || dt == TN_DTYPE_FLOAT64 || dt == TN_DTYPE_FLOAT16 || dt == TN_DTYPE_BFLOAT16;
}
/* AT_ALL_TYPES: the five signed/unsigned byte..long types plus float and double. */
static bool is_all_types(tn_dtype dt) {
    return dt == TN_DTYPE_UINT8 || dt == TN_DTYPE_INT8 || dt == TN_DTYPE_INT16 || dt == TN_DTYPE_INT32 ||
           dt == TN_DTYPE_INT64 || dt == TN_DTYPE_FLOAT32 || dt == TN_DTYPE_FLOAT64;
}

static tn_status not_implemented(const char *kernel, tn_dtype dt) {
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tn_dtype_infos[dt].c10_name);
}

/* ---- the uniform building blocks (uniform_real<T> with its 24/53-bit masks) ------------- */

static inline float u24(tn_generator *g) { return (float)(tn_generator_random_locked(g) & 0xffffffu) * 0x1p-24f; }
static inline double u53(tn_generator *g) {
    return (double)(tn_generator_random64_locked(g) & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
}

/* at::normal_distribution<double>: Box-Muller with the second value cached. */
static inline double normal_f64(tn_generator *g, double mean, double std, bool fma_on) {
    double ret;
    if (g->has_next_double) {
        ret = g->next_double;
        g->has_next_double = false;
    } else {
        double u1 = u53(g), u2 = u53(g);
        double r = sqrt(-2.0 * log1p(-u2));
        double theta = 2.0 * 3.14159265358979323846 * u1;
        g->next_double = r * sin(theta);
        g->has_next_double = true;
        ret = r * cos(theta);
    }
    return fma_on ? fma(ret, std, mean) : ret * std + mean;
}

/* ---- uniform_ --------------------------------------------------------------------------- */

/* The next n 32-bit draws, as n calls of tn_generator_random_locked would give them: the
 * words left in the state tempered a run at a time, twisting between runs. */
static void draw_u32(tn_generator *g, uint32_t *buf, int64_t n) {
    int64_t k = 0;
    while (k < n) {
        if (g->left == 1) { /* the next draw twists first */
            buf[k++] = tn_generator_random_locked(g);
            continue;
        }
        const int64_t run = g->left - 1 < n - k ? g->left - 1 : n - k;
        const uint32_t *st = g->state + g->next;
        for (int64_t i = 0; i < run; i++) {
            uint32_t y = st[i];
            y ^= y >> 11;
            y ^= (y << 7) & 0x9d2c5680u;
            y ^= (y << 15) & 0xefc60000u;
            y ^= y >> 18;
            buf[k + i] = y;
        }
        g->next += (uint32_t)run;
        g->left -= (int32_t)run;
        k += run;
    }
}
enum { DRAW_BLOCK = 512 };

#if defined(__x86_64__) && defined(__GNUC__)
/* A contiguous float32 uniform_ where upstream's build fused: the same steps over blocks of
 * draws, fmaf one instruction (a libm call per element otherwise: FMA is not in the
 * baseline); 1.33x upstream's time for rand(1e6) before. */
__attribute__((target("avx2,fma"))) static void f32_uniform_contig_fma(tn_generator *g, float *o, int64_t n, float from,
                                                                      float range, float to_f, float from_f) {
    uint32_t buf[DRAW_BLOCK];
    for (int64_t k = 0; k < n; k += DRAW_BLOCK) {
        const int64_t m = n - k < DRAW_BLOCK ? n - k : DRAW_BLOCK;
        draw_u32(g, buf, m);
        for (int64_t i = 0; i < m; i++) {
            const float v = fmaf((float)(buf[i] & 0xffffffu) * 0x1p-24f, range, from);
            o[k + i] = v == to_f ? from_f : v;
        }
    }
}
#endif

tn_status tn_random_uniform(tn_generator *g, const tn_strided *out, double from_, double to_) {
    tn_dtype dt = out->dtype;
    if (!is_float_dtype(dt)) return not_implemented("uniform_kernel_cpu", dt);
    bool fm = fused();
    rnd_iter it;
    iter_init(&it, out, NULL);
    tn_generator_lock(g);
    if (dt == TN_DTYPE_FLOAT64) {
        double from = from_, to = to_, range = to - from;
        for (int64_t k = 0; k < it.numel; k++, iter_next(&it)) {
            double x = u53(g);
            double v = fm ? fma(x, range, from) : x * range + from;
            ((double *)out->data)[it.off[0]] = v == to ? from : v;
        }
    } else {
        /* opmath float for float, half and bfloat16; the clamp compares in scalar_t */
        float from = (float)from_, to = (float)to_, range = to - from;
#if defined(__x86_64__) && defined(__GNUC__)
        if (dt == TN_DTYPE_FLOAT32 && fm && is_contiguous(out)) {
            f32_uniform_contig_fma(g, out->data, it.numel, from, range, (float)to_, (float)from_);
            tn_generator_unlock(g);
            return TN_OK;
        }
#endif
        for (int64_t k = 0; k < it.numel; k++, iter_next(&it)) {
            float x = u24(g);
            float v = fm ? fmaf(x, range, from) : x * range + from;
            if (dt == TN_DTYPE_FLOAT32) {
                ((float *)out->data)[it.off[0]] = v == (float)to_ ? (float)from_ : v;
            } else if (dt == TN_DTYPE_FLOAT16) {
                uint16_t h = tn_f32_to_half(v), hto = tn_f32_to_half((float)to_);
                if (tn_half_to_f32(h) == tn_half_to_f32(hto)) h = tn_f32_to_half((float)from_);
                ((uint16_t *)out->data)[it.off[0]] = h;
            } else {
                uint16_t h = tn_f32_to_bf16(v), hto = tn_f32_to_bf16((float)to_);
                if (tn_bf16_to_f32(h) == tn_bf16_to_f32(hto)) h = tn_f32_to_bf16((float)from_);
                ((uint16_t *)out->data)[it.off[0]] = h;
            }
        }
    }
    tn_generator_unlock(g);
    return TN_OK;
}

/* ---- normal_: 16-wide Box-Muller blocks --------------------------------------------------- */

/* Scalar NormalFill16 (upstream's primary template): std::log/cos/sin, explicit fma. */
static void f32_normal_fill16__scalar(float *data, float mean, float std) {
    for (int j = 0; j < 8; j++) {
        float u1 = 1.0f - data[j];
        float u2 = data[j + 8];
        float radius = sqrtf(-2.0f * logf(u1));
        float theta = (float)(2.0f * 3.14159265358979323846 * (double)u2);
        data[j] = fmaf(radius * cosf(theta), std, mean);
        data[j + 8] = fmaf(radius * sinf(theta), std, mean);
    }
}

static void f64_normal_fill16__scalar(double *data, double mean, double std) {
    for (int j = 0; j < 8; j++) {
        double u1 = 1.0 - data[j];
        double u2 = data[j + 8];
        double radius = sqrt(-2.0 * log(u1));
        double theta = 2.0 * 3.14159265358979323846 * u2;
        data[j] = fma(radius * cos(theta), std, mean);
        data[j + 8] = fma(radius * sin(theta), std, mean);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* Upstream's AVX2 normal_ block (normal_fill_16_AVX2): Box-Muller over 8 lanes with
 * avx_mathfun.h's log256_ps and sincos256_ps as upstream's GCC 13 compiled them (read from
 * the shipped libtorch_cpu.so). Which multiplies were fused into the following add is part
 * of the result, so each fusion is an explicit fmadd and every other step a separate
 * operation (ISO C11 contracts nothing, intrinsics included). Until session 47 this was a
 * lane-by-lane scalar emulation, 4x upstream's time for randn(1e6); same bits
 * (tests/test_random_c.py compares every tail length and 1e5 elements with upstream). */
#define V8 __attribute__((target("avx2,fma"))) static inline
V8 __m256 v8_bits(uint32_t u) { return _mm256_castsi256_ps(_mm256_set1_epi32((int)u)); }
V8 __m256 v8_log(__m256 x) {
    const __m256 invalid = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LE_OS);
    x = _mm256_max_ps(x, v8_bits(0x00800000u));
    __m256i imm0 = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
    x = _mm256_or_ps(_mm256_andnot_ps(v8_bits(0x7f800000u), x), _mm256_set1_ps(0.5f));
    imm0 = _mm256_sub_epi32(imm0, _mm256_set1_epi32(0x7f));
    __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(imm0), _mm256_set1_ps(1.0f));
    const __m256 lt = _mm256_cmp_ps(x, _mm256_set1_ps((float)0.707106781186547524), _CMP_LT_OS);
    const __m256 tmp = _mm256_and_ps(lt, x);
    x = _mm256_sub_ps(x, _mm256_set1_ps(1.0f));
    e = _mm256_sub_ps(e, _mm256_and_ps(lt, _mm256_set1_ps(1.0f)));
    x = _mm256_add_ps(x, tmp);
    const __m256 z = _mm256_mul_ps(x, x);
    __m256 y = _mm256_fmadd_ps(_mm256_set1_ps((float)7.0376836292E-2), x, _mm256_set1_ps((float)-1.1514610310E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)1.1676998740E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)-1.2420140846E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)+1.4249322787E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)-1.6668057665E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)+2.0000714765E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)-2.4999993993E-1));
    y = _mm256_fmadd_ps(y, x, _mm256_set1_ps((float)+3.3333331174E-1));
    y = _mm256_fmadd_ps(_mm256_mul_ps(y, x), z, _mm256_mul_ps(e, _mm256_set1_ps((float)-2.12194440e-4)));
    y = _mm256_fnmadd_ps(z, _mm256_set1_ps(0.5f), y);
    const __m256 r = _mm256_fmadd_ps(e, _mm256_set1_ps((float)0.693359375), _mm256_add_ps(x, y));
    return _mm256_or_ps(r, invalid);
}
V8 void v8_sincos(__m256 xin, __m256 *s, __m256 *c) {
    const __m256 signbit = v8_bits(0x80000000u);
    __m256 sign_sin = _mm256_and_ps(xin, signbit);
    __m256 x = _mm256_andnot_ps(signbit, xin);
    __m256i j = _mm256_cvttps_epi32(_mm256_mul_ps(x, _mm256_set1_ps((float)1.27323954473516)));
    j = _mm256_and_si256(_mm256_add_epi32(j, _mm256_set1_epi32(1)), _mm256_set1_epi32(~1));
    const __m256 y = _mm256_cvtepi32_ps(j);
    const __m256 swap_sin = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(j, _mm256_set1_epi32(4)), 29));
    const __m256 poly = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(j, _mm256_set1_epi32(2)), _mm256_setzero_si256()));
    x = _mm256_fmadd_ps(y, _mm256_set1_ps(-0.78515625f), x);
    x = _mm256_fmadd_ps(y, _mm256_set1_ps((float)-2.4187564849853515625e-4), x);
    x = _mm256_fmadd_ps(y, _mm256_set1_ps((float)-3.77489497744594108e-8), x);
    const __m256 sign_cos = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_andnot_si256(_mm256_sub_epi32(j, _mm256_set1_epi32(2)), _mm256_set1_epi32(4)), 29));
    sign_sin = _mm256_xor_ps(sign_sin, swap_sin);
    const __m256 z = _mm256_mul_ps(x, x);
    const __m256 half_z = _mm256_mul_ps(z, _mm256_set1_ps(0.5f));
    __m256 yc = _mm256_fmadd_ps(_mm256_set1_ps((float)2.443315711809948E-005), z, _mm256_set1_ps((float)-1.388731625493765E-003));
    yc = _mm256_fmadd_ps(yc, z, _mm256_set1_ps((float)4.166664568298827E-002));
    yc = _mm256_fmsub_ps(z, _mm256_mul_ps(z, yc), half_z);
    yc = _mm256_add_ps(yc, _mm256_set1_ps(1.0f));
    __m256 ys = _mm256_fmadd_ps(_mm256_set1_ps((float)-1.9515295891E-4), z, _mm256_set1_ps((float)8.3321608736E-3));
    ys = _mm256_fmadd_ps(ys, z, _mm256_set1_ps((float)-1.6666654611E-1));
    ys = _mm256_fmadd_ps(x, _mm256_mul_ps(z, ys), x);
    const __m256 ysin2 = _mm256_and_ps(poly, ys), ysin1 = _mm256_andnot_ps(poly, yc);
    const __m256 yc2 = _mm256_sub_ps(yc, ysin1), ys2 = _mm256_sub_ps(ys, ysin2);
    *s = _mm256_xor_ps(_mm256_add_ps(ysin2, ysin1), sign_sin);
    *c = _mm256_xor_ps(_mm256_add_ps(ys2, yc2), sign_cos);
}
__attribute__((target("avx2,fma"))) static void f32_normal_fill16__avx2(float *data, float mean, float std) {
    const __m256 u1 = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_loadu_ps(data));
    const __m256 theta = _mm256_mul_ps(_mm256_set1_ps((float)(2.0f * 3.14159265358979323846)), _mm256_loadu_ps(data + 8));
    const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(v8_log(u1), _mm256_set1_ps(-2.0f)));
    __m256 sn, cs;
    v8_sincos(theta, &sn, &cs);
    const __m256 vs = _mm256_set1_ps(std), vm = _mm256_set1_ps(mean);
    _mm256_storeu_ps(data, _mm256_fmadd_ps(_mm256_mul_ps(radius, cs), vs, vm));
    _mm256_storeu_ps(data + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, sn), vs, vm));
}
#undef V8
#endif

typedef void (*f32_fill16_fn)(float *, float, float);

static f32_fill16_fn pick_f32_fill16(void) {
    switch (tn_random_isa_get()) {
    case TN_RANDOM_ISA_DEFAULT: return f32_normal_fill16__scalar;
#if defined(__x86_64__) && defined(__GNUC__)
    default: return f32_normal_fill16__avx2;
#else
    default: return f32_normal_fill16__scalar; /* unreachable: only x86 detects AVX2 */
#endif
    }
}

/* normal_fill<scalar_t>: uniforms first (in place for float/double, 16 at a time through a
 * float buffer for half/bfloat16), then the blocks, then the tail block recomputed from
 * 16 fresh uniforms over the last 16 elements. */
static void normal_fill_contiguous(tn_generator *g, const tn_strided *out, int64_t size, double mean, double std) {
    tn_dtype dt = out->dtype;
    if (dt == TN_DTYPE_FLOAT64) {
        double *data = out->data;
        for (int64_t i = 0; i < size; i++) data[i] = u53(g);
        for (int64_t i = 0; i < size - 15; i += 16) f64_normal_fill16__scalar(data + i, mean, std);
        if (size % 16 != 0) {
            data += size - 16;
            for (int i = 0; i < 16; i++) data[i] = u53(g);
            f64_normal_fill16__scalar(data, mean, std);
        }
        return;
    }
    f32_fill16_fn fill = pick_f32_fill16();
    float m = (float)mean, s = (float)std;
    if (dt == TN_DTYPE_FLOAT32) {
        float *data = out->data;
        for (int64_t i = 0; i < size; i++) data[i] = u24(g);
        for (int64_t i = 0; i < size - 15; i += 16) fill(data + i, m, s);
        if (size % 16 != 0) {
            data += size - 16;
            for (int i = 0; i < 16; i++) data[i] = u24(g);
            fill(data, m, s);
        }
        return;
    }
    float buf[16];
    for (int64_t i = 0; i < size - 15; i += 16) {
        for (int j = 0; j < 16; j++) buf[j] = u24(g);
        fill(buf, m, s);
        for (int j = 0; j < 16; j++) store_f32(dt, out->data, i + j, buf[j]);
    }
    if (size % 16 != 0) {
        for (int j = 0; j < 16; j++) buf[j] = u24(g);
        fill(buf, m, s);
        for (int j = 0; j < 16; j++) store_f32(dt, out->data, size - 16 + j, buf[j]);
    }
}

tn_status tn_random_normal(tn_generator *g, const tn_strided *out, double mean, double std) {
    tn_dtype dt = out->dtype;
    if (!is_float_dtype(dt)) return not_implemented("normal_kernel_cpu", dt);
    int64_t size = numel_of(out);
    tn_generator_lock(g);
    if (size >= 16 && is_contiguous(out)) {
        normal_fill_contiguous(g, out, size, mean, std);
    } else {
        bool fm = fused();
        rnd_iter it;
        iter_init(&it, out, NULL);
        for (int64_t k = 0; k < it.numel; k++, iter_next(&it))
            store_f64(dt, out->data, it.off[0], normal_f64(g, mean, std, fm));
    }
    tn_generator_unlock(g);
    return TN_OK;
}

/* ---- random_ ----------------------------------------------------------------------------- */

tn_status tn_random_random(tn_generator *g, const tn_strided *out) {
    tn_dtype dt = out->dtype;
    if (!is_all_types(dt) && dt != TN_DTYPE_FLOAT16 && dt != TN_DTYPE_BFLOAT16 && dt != TN_DTYPE_BOOL)
        return not_implemented("random_kernel_cpu", dt);
    rnd_iter it;
    iter_init(&it, out, NULL);
    tn_generator_lock(g);
    for (int64_t k = 0; k < it.numel; k++, iter_next(&it)) {
        int64_t o = it.off[0];
        switch (dt) {
        case TN_DTYPE_BOOL: ((uint8_t *)out->data)[o] = tn_generator_random_locked(g) & 1u; break;
        case TN_DTYPE_INT64:
            ((int64_t *)out->data)[o] = (int64_t)(tn_generator_random64_locked(g) % ((uint64_t)INT64_MAX + 1));
            break;
        case TN_DTYPE_FLOAT64:
            ((double *)out->data)[o] = (double)(tn_generator_random64_locked(g) % ((UINT64_C(1) << 53) + 1));
            break;
        case TN_DTYPE_FLOAT32:
            ((float *)out->data)[o] = (float)(tn_generator_random_locked(g) % ((UINT64_C(1) << 24) + 1));
            break;
        case TN_DTYPE_FLOAT16:
            store_i64(dt, out->data, o, (int64_t)(tn_generator_random_locked(g) % ((UINT64_C(1) << 11) + 1)));
            break;
        case TN_DTYPE_BFLOAT16:
            store_i64(dt, out->data, o, (int64_t)(tn_generator_random_locked(g) % ((UINT64_C(1) << 8) + 1)));
            break;
        case TN_DTYPE_UINT8: ((uint8_t *)out->data)[o] = (uint8_t)(tn_generator_random_locked(g) % 256u); break;
        case TN_DTYPE_INT8: ((int8_t *)out->data)[o] = (int8_t)(tn_generator_random_locked(g) % 128u); break;
        case TN_DTYPE_INT16: ((int16_t *)out->data)[o] = (int16_t)(tn_generator_random_locked(g) % 32768u); break;
        case TN_DTYPE_INT32:
            ((int32_t *)out->data)[o] = (int32_t)(tn_generator_random_locked(g) % ((uint64_t)INT32_MAX + 1));
            break;
        default: break;
        }
    }
    tn_generator_unlock(g);
    return TN_OK;
}

tn_status tn_random_from_to(tn_generator *g, const tn_strided *out, uint64_t range, int64_t base) {
    tn_dtype dt = out->dtype;
    if (!is_all_types(dt) && dt != TN_DTYPE_FLOAT16 && dt != TN_DTYPE_BFLOAT16 && dt != TN_DTYPE_BOOL &&
        dt != TN_DTYPE_UINT16 && dt != TN_DTYPE_UINT32 && dt != TN_DTYPE_UINT64)
        return not_implemented("random_from_to_kernel_cpu", dt);
    /* uniform_int_from_to_distribution (non-fbcode builds): 64-bit draws for any dtype once
     * the range reaches 2^28, to keep the modulo skew small */
    bool wide = range >= (UINT64_C(1) << 28);
    rnd_iter it;
    iter_init(&it, out, NULL);
    tn_generator_lock(g);
    if (!wide && dt == TN_DTYPE_INT64 && is_contiguous(out)) {
        /* 32-bit draws into a contiguous int64 result: blocks of draws, the remainder by
         * Lemire's exact fastmod (for a 32-bit numerator and divisor) instead of a 64-bit
         * division per element (1.23x upstream's time for randint(1e6) before) */
        const uint64_t M = UINT64_MAX / range + 1;
        uint32_t buf[DRAW_BLOCK];
        int64_t *o = out->data;
        for (int64_t k = 0; k < it.numel; k += DRAW_BLOCK) {
            const int64_t m = it.numel - k < DRAW_BLOCK ? it.numel - k : DRAW_BLOCK;
            draw_u32(g, buf, m);
            for (int64_t i = 0; i < m; i++) {
                const uint64_t r = (uint64_t)(((unsigned __int128)(M * buf[i]) * range) >> 64);
                o[k + i] = (int64_t)(r + (uint64_t)base);
            }
        }
        tn_generator_unlock(g);
        return TN_OK;
    }
    for (int64_t k = 0; k < it.numel; k++, iter_next(&it)) {
        uint64_t v = wide ? tn_generator_random64_locked(g) : tn_generator_random_locked(g);
        store_i64(dt, out->data, it.off[0], (int64_t)((v % range) + (uint64_t)base));
    }
    tn_generator_unlock(g);
    return TN_OK;
}

tn_status tn_random_full_range(tn_generator *g, const tn_strided *out) {
    tn_dtype dt = out->dtype;
    if (!is_all_types(dt) && dt != TN_DTYPE_BFLOAT16)
        return not_implemented("random_full_64_bits_range_kernel_cpu", dt);
    if (dt != TN_DTYPE_INT64 && dt != TN_DTYPE_FLOAT64 && dt != TN_DTYPE_FLOAT32 && dt != TN_DTYPE_BFLOAT16)
        return tn_error(TN_ERR_RUNTIME,
                        "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16");
    rnd_iter it;
    iter_init(&it, out, NULL);
    tn_generator_lock(g);
    for (int64_t k = 0; k < it.numel; k++, iter_next(&it))
        store_i64(dt, out->data, it.off[0], (int64_t)tn_generator_random64_locked(g));
    tn_generator_unlock(g);
    return TN_OK;
}

/* ---- bernoulli_ -------------------------------------------------------------------------- */

/* Older upstream releases sent bernoulli_(float p) on Intel CPUs through MKL's VSL; the
 * 2.13 binary's bernoulli_scalar_kernel calls the template kernel directly (checked by
 * disassembly), so there is one path here. */
static bool bernoulli_dtype_ok(tn_dtype dt) {
    return is_all_types(dt) || dt == TN_DTYPE_BOOL || dt == TN_DTYPE_BFLOAT16 || dt == TN_DTYPE_FLOAT16;
}

tn_status tn_random_bernoulli_scalar(tn_generator *g, const tn_strided *out, double p) {
    tn_dtype dt = out->dtype;
    if (!bernoulli_dtype_ok(dt)) return not_implemented("bernoulli_scalar_cpu_", dt);
    rnd_iter it;
    iter_init(&it, out, NULL);
    tn_generator_lock(g);
    for (int64_t k = 0; k < it.numel; k++, iter_next(&it))
        store_f64(dt, out->data, it.off[0], u53(g) < p ? 1.0 : 0.0);
    tn_generator_unlock(g);
    return TN_OK;
}

tn_status tn_random_bernoulli_tensor(tn_generator *g, const tn_strided *out, const tn_strided *p) {
    tn_dtype dt = out->dtype;
    if (!bernoulli_dtype_ok(dt)) return not_implemented("bernoulli_tensor_cpu_self_", dt);
    if (!is_float_dtype(p->dtype)) return not_implemented("bernoulli_tensor_cpu_p_", p->dtype);
    rnd_iter it;
    iter_init(&it, out, p);
    tn_generator_lock(g);
    for (int64_t k = 0; k < it.numel; k++, iter_next(&it)) {
        double pv = load_f64(p->dtype, p->data, it.off[1]);
        /* upstream's bernoulli_distribution checks each probability as it is drawn */
        if (!(pv >= 0 && pv <= 1)) {
            tn_generator_unlock(g);
            return tn_error(TN_ERR_RUNTIME, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this "
                                            "error message be improved?  If so, please report an enhancement request "
                                            "to PyTorch.)");
        }
        /* double p draws 53 bits; float/half/bfloat16 p samples bernoulli_distribution<float> */
        bool hit = p->dtype == TN_DTYPE_FLOAT64 ? u53(g) < pv : u24(g) < (float)pv;
        store_f64(dt, out->data, it.off[0], hit ? 1.0 : 0.0);
    }
    tn_generator_unlock(g);
    return TN_OK;
}

/* ---- exponential_ / geometric_ / log_normal_ / cauchy_ ----------------------------------- */

tn_status tn_random_exponential(tn_generator *g, const tn_strided *out, double lambd) {
    tn_dtype dt = out->dtype;
    if (!is_float_dtype(dt)) return not_implemented("exponential_cpu", dt);
    rnd_iter it;
    iter_init(&it, out, NULL);
    tn_generator_lock(g);
    for (int64_t k = 0; k < it.numel; k++, iter_next(&it)) {
        double u = u53(g);
        store_f64(dt, out->data, it.off[0], -1.0 / lambd * log1p(-u));
    }
    tn_generator_unlock(g);
    return TN_OK;
}

tn_status tn_random_geometric(tn_generator *g, const tn_strided *out, double p) {
    tn_dtype dt = out->dtype;
    if (!is_all_types(dt) && dt != TN_DTYPE_FLOAT16 && dt != TN_DTYPE_BFLOAT16) return not_implemented("geometric_cpu", dt);
    double denom = log1p(-p);
    rnd_iter it;
    iter_init(&it, out, NULL);
    tn_generator_lock(g);
    for (int64_t k = 0; k < it.numel; k++, iter_next(&it)) {
        double u = u53(g);
        store_f64(dt, out->data, it.off[0], ceil(log(u) / denom));
    }
    tn_generator_unlock(g);
    return TN_OK;
}

tn_status tn_random_log_normal(tn_generator *g, const tn_strided *out, double mean, double std) {
    tn_dtype dt = out->dtype;
    if (!is_float_dtype(dt)) return not_implemented("log_normal_cpu", dt);
    bool fm = fused();
    rnd_iter it;
    iter_init(&it, out, NULL);
    tn_generator_lock(g);
    for (int64_t k = 0; k < it.numel; k++, iter_next(&it))
        store_f64(dt, out->data, it.off[0], exp(normal_f64(g, mean, std, fm)));
    tn_generator_unlock(g);
    return TN_OK;
}

tn_status tn_random_cauchy(tn_generator *g, const tn_strided *out, double median, double sigma) {
    tn_dtype dt = out->dtype;
    if (!is_float_dtype(dt)) return not_implemented("cauchy_cpu", dt);
    bool fm = fused();
    rnd_iter it;
    iter_init(&it, out, NULL);
    tn_generator_lock(g);
    for (int64_t k = 0; k < it.numel; k++, iter_next(&it)) {
        /* upstream clips the uniform into [eps, 1 - eps] so tan stays finite */
        double u = u53(g);
        u = u > 1.0 - 0x1p-52 ? 1.0 - 0x1p-52 : u;
        u = u < 0x1p-52 ? 0x1p-52 : u;
        double t = tan(3.14159265358979323846 * (u - 0.5));
        store_f64(dt, out->data, it.off[0], fm ? fma(sigma, t, median) : median + sigma * t);
    }
    tn_generator_unlock(g);
    return TN_OK;
}

/* ---- multinomial ------------------------------------------------------------------------- */

tn_status tn_random_multinomial_with_replacement(tn_generator *g, int64_t *result, int64_t rs0, int64_t rs1,
                                                 const void *probs, tn_dtype dt, int64_t ps0, int64_t ps1,
                                                 int64_t n_dist, int64_t n_cat, int64_t n_sample,
                                                 double *scratch) {
    if (!is_float_dtype(dt)) return not_implemented("multinomial", dt);
    /* double rows accumulate in double; float, half and bfloat16 rows in float */
    bool dbl = dt == TN_DTYPE_FLOAT64;
    float *cumf = (float *)scratch;
    double *cumd = scratch;
    tn_status st = TN_OK;
    tn_generator_lock(g);
    for (int64_t i = 0; i < n_dist && st == TN_OK; i++) {
        double sumd = 0;
        float sumf = 0;
        for (int64_t j = 0; j < n_cat; j++) {
            double v = load_f64(dt, probs, i * ps0 + j * ps1);
            if (!(v >= 0)) {
                st = tn_error(TN_ERR_RUNTIME, "invalid multinomial distribution (encountering probability entry < 0)");
                break;
            }
            if (!isfinite(v)) {
                st = tn_error(TN_ERR_RUNTIME,
                              "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
                break;
            }
            if (dbl) cumd[j] = sumd += v;
            else cumf[j] = sumf += (float)v;
        }
        if (st != TN_OK) break;
        if (!(dbl ? sumd > 0 : sumf > 0)) {
            st = tn_error(TN_ERR_RUNTIME, "invalid multinomial distribution (sum of probabilities <= 0)");
            break;
        }
        for (int64_t j = 0; j < n_cat; j++) {
            if (dbl) cumd[j] /= sumd;
            else cumf[j] /= sumf;
        }
        for (int64_t s = 0; s < n_sample; s++) {
            double u = u53(g);
            int64_t left = 0, right = n_cat;
            if (dbl) cumd[n_cat - 1] = 1;
            else cumf[n_cat - 1] = 1;
            while (right - left > 0) {
                int64_t mid = left + (right - left) / 2;
                double cp = dbl ? cumd[mid] : (double)cumf[mid];
                if (cp < u) left = mid + 1;
                else right = mid;
            }
            result[i * rs0 + s * rs1] = left;
        }
    }
    tn_generator_unlock(g);
    return st;
}

/* probs / q in the dtype's arithmetic (half/bfloat16 compute in float and round). */
static double ratio_in_dtype(tn_dtype dt, double p, double q) {
    switch (dt) {
    case TN_DTYPE_FLOAT64: return p / q;
    case TN_DTYPE_FLOAT32: return (float)p / (float)q;
    case TN_DTYPE_FLOAT16: return tn_round_half_f32((float)p / (float)q);
    default: return tn_round_bf16_f32((float)p / (float)q);
    }
}

/* topk/argmax order: larger first, NaN above everything, equal values by lower index. */
static inline bool ranks_before(double a, int64_t ia, double b, int64_t ib) {
    bool na = a != a, nb = b != b;
    if (na != nb) return na;
    if (!na && a != b) return a > b;
    return ia < ib;
}

tn_status tn_random_multinomial_pick(int64_t *result, int64_t rs0, int64_t rs1, const void *probs, tn_dtype dt,
                                     int64_t ps0, int64_t ps1, void *q, int64_t n_dist, int64_t n_cat,
                                     int64_t n_sample, int64_t *scratch) {
    if (!is_float_dtype(dt)) return not_implemented("multinomial", dt);
    int64_t *order = scratch;
    for (int64_t i = 0; i < n_dist; i++) {
        /* q = probs / q, stored back into q in the dtype (upstream's div_out(q, self, q)) */
        for (int64_t j = 0; j < n_cat; j++) {
            int64_t qi = i * n_cat + j;
            double r = ratio_in_dtype(dt, load_f64(dt, probs, i * ps0 + j * ps1), load_f64(dt, q, qi));
            store_f64(dt, q, qi, r);
        }
        /* partial selection sort of the n_sample best: n_sample is small in practice and
         * the ordering rule stays explicit */
        for (int64_t j = 0; j < n_cat; j++) order[j] = j;
        for (int64_t s = 0; s < n_sample; s++) {
            int64_t best = s;
            for (int64_t j = s + 1; j < n_cat; j++) {
                double vb = load_f64(dt, q, i * n_cat + order[best]), vj = load_f64(dt, q, i * n_cat + order[j]);
                if (ranks_before(vj, order[j], vb, order[best])) best = j;
            }
            int64_t t = order[s]; order[s] = order[best]; order[best] = t;
            result[i * rs0 + s * rs1] = order[s];
        }
    }
    return TN_OK;
}

/* ---- randperm ---------------------------------------------------------------------------- */

static inline void swap_elems(char *base, int64_t stride_bytes, int itemsize, int64_t a, int64_t b) {
    char t[8];
    memcpy(t, base + a * stride_bytes, (size_t)itemsize);
    memcpy(base + a * stride_bytes, base + b * stride_bytes, (size_t)itemsize);
    memcpy(base + b * stride_bytes, t, (size_t)itemsize);
}

tn_status tn_random_randperm(tn_generator *g, const tn_strided *out, int64_t n) {
    tn_dtype dt = out->dtype;
    if (!is_all_types(dt) && dt != TN_DTYPE_FLOAT16 && dt != TN_DTYPE_BFLOAT16) return not_implemented("randperm", dt);
    int isz = tn_dtype_itemsize(dt);
    int64_t st = n > 0 ? out->strides[0] : 1;
    char *base = out->data;
    tn_generator_lock(g);
    if (n < (int64_t)(UINT32_MAX / 20)) {
        /* the historical algorithm: identity, then swap position i with i + random() % (n-i) */
        for (int64_t i = 0; i < n; i++) store_i64(dt, base, i * st, i);
        if (dt == TN_DTYPE_INT64 && st == 1) {
            /* the same steps on a dense int64 result, the remainder of two values below
             * 2^32 by a 32-bit division (a 64-bit one and byte copies per swap before:
             * 1.9x upstream's time for randperm(1e5)) */
            int64_t *o = out->data;
            uint32_t buf[DRAW_BLOCK];
            for (int64_t i0 = 0; i0 < n - 1; i0 += DRAW_BLOCK) {
                const int64_t m = n - 1 - i0 < DRAW_BLOCK ? n - 1 - i0 : DRAW_BLOCK;
                draw_u32(g, buf, m);
                for (int64_t k = 0; k < m; k++) {
                    const int64_t i = i0 + k, z = i + (int64_t)(buf[k] % (uint32_t)(n - i));
                    const int64_t t = o[i];
                    o[i] = o[z];
                    o[z] = t;
                }
            }
            tn_generator_unlock(g);
            return TN_OK;
        }
        for (int64_t i = 0; i < n - 1; i++) {
            int64_t z = (int64_t)tn_generator_random_locked(g) % (n - i);
            swap_elems(base, st * isz, isz, i, z + i);
        }
    } else {
        /* inside-out Fisher-Yates with 64-bit draws for huge n */
        for (int64_t i = 0; i < n; i++) {
            int64_t z = (int64_t)(tn_generator_random64_locked(g) % (uint64_t)(i + 1));
            memmove(base + i * st * isz, base + z * st * isz, (size_t)isz);
            store_i64(dt, base, z * st, i);
        }
    }
    tn_generator_unlock(g);
    return TN_OK;
}

/* ---- rrelu_with_noise, training ---------------------------------------------------------- */

tn_status tn_random_rrelu_train(tn_generator *g, void *y, void *noise, const void *x, tn_dtype dt, int64_t n,
                                double lower, double upper) {
    if (!is_float_dtype(dt)) return not_implemented("rrelu_with_noise_out_cpu", dt);
    tn_generator_lock(g);
    for (int64_t i = 0; i < n; i++) {
        double v, r = 1;
        switch (dt) {
        case TN_DTYPE_FLOAT32: v = ((const float *)x)[i]; break;
        case TN_DTYPE_FLOAT64: v = ((const double *)x)[i]; break;
        case TN_DTYPE_FLOAT16: v = tn_half_to_f32(((const tn_half *)x)[i]); break;
        default: v = tn_bf16_to_f32(((const tn_bfloat16 *)x)[i]); break;
        }
        double out = v;
        if (v <= 0) { /* at::uniform_real_distribution's checks, made at each draw */
            if (!(lower <= upper) || !(upper - lower <= DBL_MAX)) {
                tn_generator_unlock(g);
                return tn_error(TN_ERR_RUNTIME, !(lower <= upper) ? "Expected from <= to to be true, but got false."
                                                                   : "Expected to - from <= std::numeric_limits<T>::max() to be true, but got false.");
            }
            r = u53(g) * (upper - lower) + lower;
            if (dt != TN_DTYPE_FLOAT64) { /* opmath float: r and the product in float */
                r = (float)r;
                out = (float)((float)v * (float)r);
            } else {
                out = v * r;
            }
        }
        switch (dt) {
        case TN_DTYPE_FLOAT32: ((float *)y)[i] = (float)out, ((float *)noise)[i] = (float)r; break;
        case TN_DTYPE_FLOAT64: ((double *)y)[i] = out, ((double *)noise)[i] = r; break;
        case TN_DTYPE_FLOAT16:
            ((tn_half *)y)[i] = tn_f32_to_half((float)out), ((tn_half *)noise)[i] = tn_f32_to_half((float)r);
            break;
        default:
            ((tn_bfloat16 *)y)[i] = tn_f32_to_bf16((float)out), ((tn_bfloat16 *)noise)[i] = tn_f32_to_bf16((float)r);
            break;
        }
    }
    tn_generator_unlock(g);
    return TN_OK;
}
