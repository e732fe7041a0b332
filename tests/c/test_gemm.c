/* test_gemm.c — the GEMM family against its scalar reference on every ISA tier the host
 * has (and OpenBLAS when TN_BLAS_PATH names it): shapes across tile edges, transposed and
 * strided operands, alpha/beta, beta == 0 over NaN, float32 accumulation of bfloat16.
 * `test_gemm --bench` times every variant instead (GFLOP/s; see docs/GEMM.md). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/blas.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm.h"
#include "ops/dispatch.h"
#include "tn_test.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) { /* xorshift64*, uniform in [-1, 1) */
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (double)((rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2 - 1;
}

static double load(tn_dtype d, const void *p, int64_t i) {
    switch (d) {
    case TN_DTYPE_FLOAT32: return ((const float *)p)[i];
    case TN_DTYPE_FLOAT64: return ((const double *)p)[i];
    case TN_DTYPE_BFLOAT16: return tn_bf16_to_f32(((const uint16_t *)p)[i]);
    case TN_DTYPE_FLOAT16: return tn_half_to_f32(((const uint16_t *)p)[i]);
    case TN_DTYPE_INT8: return ((const int8_t *)p)[i];
    case TN_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    case TN_DTYPE_INT16: return ((const int16_t *)p)[i];
    case TN_DTYPE_INT32: return ((const int32_t *)p)[i];
    case TN_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    default: return 0;
    }
}
static void store(tn_dtype d, void *p, int64_t i, double v) {
    switch (d) {
    case TN_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
    case TN_DTYPE_FLOAT64: ((double *)p)[i] = v; break;
    case TN_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = tn_f32_to_bf16((float)v); break;
    case TN_DTYPE_FLOAT16: ((uint16_t *)p)[i] = tn_f32_to_half((float)v); break;
    case TN_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case TN_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case TN_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case TN_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case TN_DTYPE_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: break;
    }
}
static double unit_roundoff(tn_dtype d) {
    return d == TN_DTYPE_FLOAT64 ? 0x1p-53 : d == TN_DTYPE_BFLOAT16 ? 0x1p-8 : d == TN_DTYPE_FLOAT16 ? 0x1p-11 : 0x1p-24;
}

/* Layout of one operand inside its buffer: transposed or not, leading-dimension padding,
 * and an element step (2 = every other element: neither stride is unit). */
typedef struct layout { int trans, pad, step; } layout;

static void geometry(int64_t rows, int64_t cols, layout l, int64_t *rs, int64_t *cs, int64_t *extent) {
    if (!l.trans) *cs = l.step, *rs = (cols * l.step + l.pad);
    else *rs = l.step, *cs = (rows * l.step + l.pad);
    *extent = (rows - 1) * *rs + (cols - 1) * *cs + 1;
}

static int failures_reported;

/* Runs tn_gemm and the reference on the same random problem; checks the two agree within
 * a bound derived from the accumulation length and the output type's rounding. */
static void check_case(tn_dtype d, int64_t m, int64_t n, int64_t k, layout la, layout lb, layout lc, double alpha,
                       double beta, const char *tag) {
    int isz = tn_dtype_itemsize(d);
    int integral = tn_dtype_is_integral(d, false);
    tn_gemm_desc g = tn_gemm_desc_init(d), r;
    int64_t ea, eb, ec;
    g.m = m, g.n = n, g.k = k;
    geometry(m, k, la, &g.a_rs, &g.a_cs, &ea);
    geometry(k, n, lb, &g.b_rs, &g.b_cs, &eb);
    geometry(m, n, lc, &g.c_rs, &g.c_cs, &ec);
    void *a = malloc((size_t)(ea * isz)), *b = malloc((size_t)(eb * isz));
    void *c = malloc((size_t)(ec * isz)), *cr = malloc((size_t)(ec * isz));
    for (int64_t i = 0; i < ea; i++) store(d, a, i, integral ? (double)(int)(urand() * 9) : urand());
    for (int64_t i = 0; i < eb; i++) store(d, b, i, integral ? (double)(int)(urand() * 9) : urand());
    for (int64_t i = 0; i < ec; i++) {
        if (beta == 0 && !integral) store(d, c, i, NAN); /* must never reach the result */
        else store(d, c, i, integral ? (double)(int)(urand() * 9) : urand());
    }
    memcpy(cr, c, (size_t)(ec * isz));
    g.a = a, g.b = b, g.c = c, g.alpha = alpha, g.beta = beta, g.ialpha = (int64_t)alpha, g.ibeta = (int64_t)beta;
    r = g;
    r.c = cr;
    size_t sb = tn_gemm_scratch_bytes(&g);
    void *scratch = sb ? malloc(sb) : NULL;
    tn_status st = tn_gemm(&g, scratch, sb);
    TN_CHECK(st == TN_OK, "%s: tn_gemm failed: %s", tag, tn_error_message());
    tn_gemm_ref(&r);
    double u = unit_roundoff(d);
    int64_t bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < m && st == TN_OK; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t ci = i * g.c_rs + j * g.c_cs;
            double got = load(d, c, ci), want = load(d, cr, ci);
            double tol = 0;
            if (!integral) {
                /* sum |a||b| bounds the float32 accumulation error of any summation order. */
                double sabs = 0;
                for (int64_t p = 0; p < k; p++)
                    sabs += fabs(load(d, a, i * g.a_rs + p * g.a_cs) * load(d, b, p * g.b_rs + j * g.b_cs));
                double acc_u = d == TN_DTYPE_FLOAT64 ? 0x1p-53 : 0x1p-24;
                tol = 2.0 * k * acc_u * fabs(alpha) * sabs + 2 * u * fabs(want) + 1e-30;
                if (beta != 0) tol += 2 * u * fabs(beta * load(d, cr, ci));
            }
            double err = fabs(got - want);
            if (!(err <= tol)) { /* NaN fails too */
                bad++;
                if (!(err <= worst)) worst = err;
            }
        }
    TN_CHECK(bad == 0, "%s %s m=%lld n=%lld k=%lld ta=%d tb=%d c(step=%d) alpha=%g beta=%g: %lld bad, worst %g",
             tag, tn_dtype_infos[d].c10_name, (long long)m, (long long)n, (long long)k, la.trans, lb.trans, lc.step,
             alpha, beta, (long long)bad, worst);
    if (bad && ++failures_reported > 20) exit(1);
    free(a), free(b), free(c), free(cr), free(scratch);
}

static const int64_t SIZES[] = {1, 7, 15, 16, 17, 31, 33, 63, 64, 65, 127};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

static void sweep(tn_dtype d, const char *tag) {
    layout rowm = {0, 0, 1}, colm = {1, 0, 1}, padded = {0, 5, 1}, strided = {0, 3, 2};
    /* Every (m, n) pair with k cycling through the sizes, all four transpose combinations. */
    for (int im = 0; im < NSIZES; im++)
        for (int in = 0; in < NSIZES; in++) {
            int64_t k = SIZES[(im + 2 * in) % NSIZES];
            layout las[2] = {rowm, colm}, lbs[2] = {rowm, colm};
            for (int t = 0; t < 4; t++)
                check_case(d, SIZES[im], SIZES[in], k, las[t & 1], lbs[t >> 1], rowm, 1.0, 0.0, tag);
        }
    /* Strided / padded operands and C, alpha and beta, beta == 0 over NaN. */
    check_case(d, 33, 65, 31, padded, strided, strided, 2.0, 0.5, tag);
    check_case(d, 65, 33, 127, strided, padded, colm, -1.5, 1.0, tag);
    check_case(d, 7, 127, 64, colm, strided, padded, 1.0, 0.0, tag);
    /* Blocking edges: k > KC (256), m > MC (96), n > NC (256); GEMV-shaped products. */
    check_case(d, 130, 300, 600, rowm, colm, rowm, 1.0, 1.0, tag);
    check_case(d, 200, 270, 257, colm, rowm, rowm, 0.5, 0.0, tag);
    check_case(d, 1, 1030, 1000, rowm, colm, rowm, 1.0, 0.0, tag);
    check_case(d, 3, 70, 1000, rowm, colm, rowm, 1.0, 2.0, tag);
    check_case(d, 1000, 1, 513, rowm, colm, rowm, 1.0, 0.0, tag);
    check_case(d, 1, 1000, 300, rowm, rowm, rowm, 1.0, 0.0, tag);
    /* AMX engine edges: several token chunks (k = 1024 gives 512 rows a chunk) and weight
     * groups (256 features), k a multiple of 32 (weights read in place) with a partial last
     * block of 16 < n%32 < 32, tokens split across workers (n within one block), alpha/beta
     * with column-major C. */
    check_case(d, 530, 300, 1024, rowm, colm, rowm, 1.0, 0.0, tag);
    check_case(d, 600, 20, 512, rowm, colm, rowm, 1.0, 0.0, tag);
    check_case(d, 45, 90, 96, rowm, colm, rowm, 1.0, 0.0, tag);
    check_case(d, 45, 90, 96, padded, colm, colm, 0.5, -2.0, tag);
    check_case(d, 40, 50, 64, rowm, padded, strided, 1.0, 1.0, tag);
    /* Float32 engine of the avx512 tiers (sgemm_avx512.c): k > KC (384) in equal blocks,
     * n > NC (672), m > MC (256), regions split over columns (m < n) and over rows,
     * column-major C, operands that need the general packing loops. */
    check_case(d, 260, 700, 400, rowm, colm, rowm, 1.0, 0.0, tag);
    check_case(d, 700, 130, 400, colm, rowm, rowm, 1.0, 1.0, tag);
    check_case(d, 260, 500, 390, rowm, colm, colm, 0.5, -2.0, tag);
    check_case(d, 90, 400, 300, padded, strided, rowm, 1.0, 0.0, tag);
    check_case(d, 0, 5, 5, rowm, rowm, rowm, 1.0, 0.0, tag);
    check_case(d, 5, 5, 0, rowm, rowm, rowm, 1.0, 0.0, tag); /* k == 0: zeros over NaN */
    check_case(d, 5, 5, 0, rowm, rowm, rowm, 1.0, 0.5, tag);
}

/* bfloat16 products must be summed in float32 and rounded once: 1 + 2^-8 + 2^-8 is exactly
 * 1 + 2^-7 in bfloat16; summing in bfloat16 would round each 1 + 2^-8 tie down to 1. */
static void check_bf16_rounding(const char *tag) {
    for (int k = 3; k <= 35; k += 32) {
        uint16_t a[35], b[35], c[1] = {0x7FC0};
        for (int p = 0; p < k; p++) a[p] = tn_f32_to_bf16(1.0f), b[p] = 0;
        b[0] = tn_f32_to_bf16(1.0f), b[1] = tn_f32_to_bf16(0x1p-8f), b[2] = tn_f32_to_bf16(0x1p-8f);
        for (int layout_ = 0; layout_ < 2; layout_++) {
            tn_gemm_desc g = tn_gemm_desc_init(TN_DTYPE_BFLOAT16);
            g.m = g.n = 1, g.k = k, g.a = a, g.b = b, g.c = c;
            g.a_cs = 1, g.a_rs = k, g.b_rs = layout_ ? 1 : 1, g.b_cs = layout_ ? k : 1, g.c_rs = g.c_cs = 1;
            char scratch[1 << 16];
            c[0] = 0x7FC0;
            /* layout 1 forces the packed engine via an 1x1 problem with m padded by a second row. */
            TN_CHECK(tn_gemm(&g, scratch, sizeof scratch) == TN_OK, "bf16 rounding: %s", tn_error_message());
            TN_CHECK(c[0] == tn_f32_to_bf16(1.0f + 0x1p-7f), "%s bf16 k=%d rounded more than once: got %#x", tag,
                     k, c[0]);
        }
    }
    /* The same through the packed engine (m = n = 8, every output row identical). */
    enum { K = 35, M = 8, N = 8 };
    uint16_t A[M * K], B[K * N], C[M * N];
    for (int i = 0; i < M * K; i++) A[i] = tn_f32_to_bf16(1.0f);
    for (int p = 0; p < K; p++)
        for (int j = 0; j < N; j++) B[p * N + j] = p == 0 ? 0x3F80 : p < 3 ? tn_f32_to_bf16(0x1p-8f) : 0;
    tn_gemm_desc g = tn_gemm_desc_init(TN_DTYPE_BFLOAT16);
    g.m = M, g.n = N, g.k = K, g.a = A, g.b = B, g.c = C, g.a_rs = K, g.a_cs = 1, g.b_rs = N, g.b_cs = 1, g.c_rs = N,
    g.c_cs = 1;
    size_t sb = tn_gemm_scratch_bytes(&g);
    void *s = malloc(sb);
    TN_CHECK(tn_gemm(&g, s, sb) == TN_OK, "engine bf16");
    int ok = 1;
    for (int i = 0; i < M * N; i++) ok &= C[i] == tn_f32_to_bf16(1.0f + 0x1p-7f);
    TN_CHECK(ok, "%s bf16 engine rounded more than once", tag);
    free(s);
}


/* ---- the operators (through the door) ------------------------------------------------ */

static tn_tensor *rand_tensor(tn_dtype d, int ndim, const int64_t *sizes) {
    tn_tensor *t;
    if (tn_tensor_empty(ndim, sizes, d, tn_device_cpu(), &t) != TN_OK) return NULL;
    int64_t n = tn_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) store(d, tn_tensor_data(t), i, urand());
    return t;
}

/* Element at multi-index idx (broadcast: size-1 dims read index 0, missing dims ignored). */
static double at(const tn_tensor *t, int nidx, const int64_t *idx) {
    int64_t off = 0;
    for (int i = 0; i < t->ndim; i++) {
        int64_t j = idx[nidx - t->ndim + i];
        off += (t->sizes[i] == 1 ? 0 : j) * t->strides[i];
    }
    return load(t->dtype, tn_tensor_data(t), off);
}

static tn_tensor *transpose_view(tn_tensor *t) {
    int64_t s[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int n = t->ndim;
    memcpy(s, t->sizes, sizeof s), memcpy(st, t->strides, sizeof st);
    int64_t x = s[n - 1]; s[n - 1] = s[n - 2]; s[n - 2] = x;
    x = st[n - 1]; st[n - 1] = st[n - 2]; st[n - 2] = x;
    return tn_tensor_new_view(t->storage, t->offset, n, s, st, t->dtype);
}

/* matmul of x (shape xs) and y (shape ys) against a naive broadcast loop. */
static void check_matmul(tn_dtype d, int nx, const int64_t *xs, int ny, const int64_t *ys, int transpose_y,
                         int nexp, const int64_t *exp_sizes) {
    tn_tensor *x = rand_tensor(d, nx, xs), *y0 = rand_tensor(d, ny, ys);
    tn_tensor *y = transpose_y ? transpose_view(y0) : y0;
    tn_value a[2] = {tn_value_tensor(x), tn_value_tensor(y)}, r[1];
    tn_status st = tn_dispatch(TN_OP_matmul, a, r);
    char b1[128], b2[128];
    TN_CHECK(st == TN_OK, "matmul %s @ %s: %s", tn_format_sizes(nx, xs, b1, sizeof b1),
             tn_format_sizes(y->ndim, y->sizes, b2, sizeof b2), tn_error_message());
    if (st != TN_OK) goto done;
    tn_tensor *o = r[0].u.t;
    int shape_ok = o->ndim == nexp && (nexp == 0 || !memcmp(o->sizes, exp_sizes, sizeof(int64_t) * (size_t)nexp)) &&
                   tn_tensor_is_contiguous(o);
    TN_CHECK(shape_ok, "matmul result shape %s", tn_format_sizes(o->ndim, o->sizes, b1, sizeof b1));
    if (shape_ok) {
        /* Treat 1-D operands as upstream does: x as a row, y as a column. */
        int64_t k = xs[nx - 1], numel = tn_tensor_numel(o), idx[TN_MAX_DIMS + 2];
        int bad = 0;
        for (int64_t e = 0; e < numel; e++) {
            int64_t rem = e;
            for (int i = o->ndim - 1; i >= 0; i--) idx[i] = rem % o->sizes[i], rem /= o->sizes[i];
            int nbatch = o->ndim - (nx > 1) - (y->ndim > 1);
            int64_t row = nx > 1 ? idx[nbatch] : 0, col = y->ndim > 1 ? idx[o->ndim - 1] : 0;
            double want = 0, sabs = 0;
            for (int64_t p = 0; p < k; p++) {
                int64_t ix[TN_MAX_DIMS + 2], iy[TN_MAX_DIMS + 2];
                memcpy(ix, idx, sizeof(int64_t) * (size_t)nbatch), memcpy(iy, idx, sizeof(int64_t) * (size_t)nbatch);
                int jx = nbatch, jy = nbatch;
                if (nx > 1) ix[jx++] = row;
                ix[jx++] = p;
                iy[jy++] = p;
                if (y->ndim > 1) iy[jy++] = col;
                double u = at(x, jx, ix), v = at(y, jy, iy);
                want += u * v, sabs += fabs(u * v);
            }
            double got = load(d, tn_tensor_data(o), e);
            if (!(fabs(got - want) <= 2 * k * 0x1p-24 * sabs + 2 * unit_roundoff(d) * fabs(want) + 1e-6)) bad++;
        }
        TN_CHECK(bad == 0, "matmul %s @ %s (%s): %d wrong values", tn_format_sizes(nx, xs, b1, sizeof b1),
                 tn_format_sizes(y->ndim, y->sizes, b2, sizeof b2), tn_dtype_infos[d].c10_name, bad);
    }
    tn_tensor_release(o);
done:
    tn_tensor_release(x);
    if (y != y0) tn_tensor_release(y);
    tn_tensor_release(y0);
}

static void expect_error(tn_op_id op, tn_tensor *x, tn_tensor *y, const char *msg) {
    tn_value a[5] = {tn_value_tensor(x), tn_value_tensor(y), tn_value_int(1), tn_value_int(1), tn_value_int(1)}, r[1];
    tn_status st = tn_dispatch(op, a, r);
    if (st == TN_OK) tn_tensor_release(r[0].u.t);
    TN_CHECK(st != TN_OK && !strcmp(tn_error_message(), msg), "%s: expected \"%s\", got \"%s\"",
             tn_op_schemas[op].name, msg, st == TN_OK ? "(success)" : tn_error_message());
}

static void test_ops(void) {
#define S(...) (const int64_t[]){__VA_ARGS__}
    static const tn_dtype dts[] = {TN_DTYPE_FLOAT32, TN_DTYPE_BFLOAT16, TN_DTYPE_FLOAT64, TN_DTYPE_FLOAT16};
    for (int di = 0; di < 4; di++) {
        tn_dtype d = dts[di];
        check_matmul(d, 1, S(33), 1, S(33), 0, 0, NULL);                         /* dot */
        check_matmul(d, 2, S(7, 33), 1, S(33), 0, 1, S(7));                      /* mv */
        check_matmul(d, 1, S(33), 2, S(33, 5), 0, 1, S(5));                      /* vector·matrix */
        check_matmul(d, 2, S(65, 31), 2, S(31, 127), 0, 2, S(65, 127));          /* mm */
        check_matmul(d, 2, S(65, 31), 2, S(127, 31), 1, 2, S(65, 127));          /* mm, transposed */
        check_matmul(d, 3, S(4, 7, 33), 2, S(33, 5), 0, 3, S(4, 7, 5));          /* fold into mm */
        check_matmul(d, 3, S(4, 7, 33), 1, S(33), 0, 2, S(4, 7));                /* fold into mv */
        check_matmul(d, 1, S(7), 3, S(4, 7, 5), 0, 2, S(4, 5));                  /* fold, transposed */
        check_matmul(d, 2, S(7, 33), 3, S(4, 33, 5), 0, 3, S(4, 7, 5));          /* broadcast batch */
        check_matmul(d, 4, S(2, 1, 7, 33), 3, S(3, 33, 5), 0, 4, S(2, 3, 7, 5)); /* 4-D broadcast */
        check_matmul(d, 3, S(3, 7, 33), 3, S(3, 5, 33), 1, 3, S(3, 7, 5));       /* bmm, transposed */
        check_matmul(d, 3, S(2, 7, 0), 2, S(0, 5), 0, 3, S(2, 7, 5));            /* empty k */
    }
    check_matmul(TN_DTYPE_INT32, 3, S(2, 7, 33), 2, S(33, 5), 0, 3, S(2, 7, 5));

    tn_tensor *a23 = rand_tensor(TN_DTYPE_FLOAT32, 2, S(2, 3)), *a45 = rand_tensor(TN_DTYPE_FLOAT32, 2, S(4, 5));
    tn_tensor *d35 = rand_tensor(TN_DTYPE_FLOAT64, 2, S(3, 5)), *v3 = rand_tensor(TN_DTYPE_FLOAT32, 1, S(3));
    tn_tensor *v4 = rand_tensor(TN_DTYPE_FLOAT32, 1, S(4)), *e0 = rand_tensor(TN_DTYPE_FLOAT32, 0, NULL);
    tn_tensor *b234 = rand_tensor(TN_DTYPE_FLOAT32, 3, S(2, 3, 4)), *b345 = rand_tensor(TN_DTYPE_FLOAT32, 3, S(3, 4, 5));
    expect_error(TN_OP_mm, a23, a45, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
    expect_error(TN_OP_mm, a23, d35, "expected m1 and m2 to have the same dtype, but got: float != double");
    expect_error(TN_OP_mm, b234, d35, "self must be a matrix");
    expect_error(TN_OP_mm, a23, v3, "mat2 must be a matrix");
    expect_error(TN_OP_bmm, b234, b345, "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4].");
    expect_error(TN_OP_bmm, a23, b345, "batch1 must be a 3D tensor");
    expect_error(TN_OP_mv, a23, v4, "size mismatch, got input (2), mat (2x3), vec (4)");
    expect_error(TN_OP_mv, v3, v3, "vector + matrix @ vector expected, got 1, 1, 1");
    expect_error(TN_OP_dot, v3, v4, "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements respectively");
    expect_error(TN_OP_dot, v3, a23, "1D tensors expected, but got 1D and 2D tensors");
    expect_error(TN_OP_matmul, e0, v4, "both arguments to matmul need to be at least 1D, but they are 0D and 1D");
    expect_error(TN_OP_matmul, a23, v4, "size mismatch, got input (2), mat (2x3), vec (4)");

    /* addmm: beta == 0 ignores NaN in self; alpha/beta scale; linear with bias. */
    tn_tensor *nan = rand_tensor(TN_DTYPE_FLOAT32, 2, S(2, 5)), *m35 = rand_tensor(TN_DTYPE_FLOAT32, 2, S(3, 5));
    for (int i = 0; i < 10; i++) ((float *)tn_tensor_data(nan))[i] = NAN;
    tn_value a[5] = {tn_value_tensor(nan), tn_value_tensor(a23), tn_value_tensor(m35), tn_value_int(0), tn_value_double(2.0)}, r[1];
    TN_CHECK(tn_dispatch(TN_OP_addmm, a, r) == TN_OK, "addmm: %s", tn_error_message());
    int ok = 1;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 5; j++) {
            double want = 0;
            for (int p = 0; p < 3; p++)
                want += 2.0 * ((float *)tn_tensor_data(a23))[i * 3 + p] * ((float *)tn_tensor_data(m35))[p * 5 + j];
            ok &= fabs(((float *)tn_tensor_data(r[0].u.t))[i * 5 + j] - want) < 1e-5;
        }
    TN_CHECK(ok, "addmm beta=0 over NaN self");
    tn_tensor_release(r[0].u.t);
    tn_tensor *w = rand_tensor(TN_DTYPE_FLOAT32, 2, S(5, 3)), *bias = rand_tensor(TN_DTYPE_FLOAT32, 1, S(5));
    tn_tensor *x3 = rand_tensor(TN_DTYPE_FLOAT32, 3, S(2, 4, 3));
    tn_value la[3] = {tn_value_tensor(x3), tn_value_tensor(w), tn_value_tensor(bias)};
    TN_CHECK(tn_dispatch(TN_OP_linear, la, r) == TN_OK, "linear: %s", tn_error_message());
    ok = r[0].u.t->ndim == 3 && r[0].u.t->sizes[2] == 5;
    for (int i = 0; ok && i < 8; i++)
        for (int j = 0; j < 5; j++) {
            double want = ((float *)tn_tensor_data(bias))[j];
            for (int p = 0; p < 3; p++)
                want += ((float *)tn_tensor_data(x3))[i * 3 + p] * ((float *)tn_tensor_data(w))[j * 3 + p];
            ok &= fabs(((float *)tn_tensor_data(r[0].u.t))[i * 5 + j] - want) < 1e-5;
        }
    TN_CHECK(ok, "linear 3-D input with bias");
    tn_tensor_release(r[0].u.t);
    tn_tensor *all[] = {a23, a45, d35, v3, v4, e0, b234, b345, nan, m35, w, bias, x3};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tn_tensor_release(all[i]);
#undef S
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* GFLOP/s of tn_gemm for C = A·B (A row-major m×k, B stored n×k as a linear layer's
 * weight, C row-major), best of several runs after a warm-up. */
static double bench(tn_dtype d, int64_t m, int64_t n, int64_t k) {
    int isz = tn_dtype_itemsize(d);
    void *a = malloc((size_t)(m * k * isz)), *b = malloc((size_t)(k * n * isz)), *c = malloc((size_t)(m * n * isz));
    for (int64_t i = 0; i < m * k; i++) store(d, a, i, urand());
    for (int64_t i = 0; i < k * n; i++) store(d, b, i, urand());
    tn_gemm_desc g = tn_gemm_desc_init(d);
    g.m = m, g.n = n, g.k = k, g.a = a, g.b = b, g.c = c;
    g.a_rs = k, g.a_cs = 1, g.b_rs = 1, g.b_cs = k, g.c_rs = n, g.c_cs = 1;
    size_t sb = tn_gemm_scratch_bytes(&g);
    void *s = sb ? aligned_alloc(64, (sb + 63) / 64 * 64) : NULL;
    tn_gemm(&g, s, sb);
    double best = 1e30, flops = 2.0 * m * n * k;
    int reps = (int)(2e9 / flops) + 1;
    if (reps > 50) reps = 50;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        for (int i = 0; i < reps; i++) tn_gemm(&g, s, sb);
        double t = (now() - t0) / reps;
        if (t < best) best = t;
    }
    free(a), free(b), free(c), free(s);
    return flops / best * 1e-9;
}

static void run_bench(void) {
    static const int64_t shapes[][3] = {{512, 512, 512}, {1024, 1024, 1024}, {128, 2048, 2048}, {1, 4096, 4096},
                                        {16, 4096, 4096}};
    static const tn_dtype dts[] = {TN_DTYPE_FLOAT32, TN_DTYPE_BFLOAT16, TN_DTYPE_FLOAT16, TN_DTYPE_FLOAT64};
    tn_isa host = tn_cpu_isa();
    printf("BLAS: %s\n", tn_blas_config() ? tn_blas_config() : "(none)");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++)
            for (int blas = 1; blas >= 0; blas--)
                for (int isa = (int)host; isa >= 0; isa--) {
                    tn_dtype d = dts[di];
                    tn_blas_enable(blas);
                    tn_cpu_isa_set((tn_isa)isa);
                    if (blas && !tn_blas_get()) continue; /* no BLAS loaded: one pass is enough */
                    int uses_blas = !strcmp(tn_gemm_variant(d), "openblas");
                    if (blas && !uses_blas && tn_blas_get()) continue; /* printed in the blas=0 pass */
                    if (uses_blas && isa != (int)host) continue;      /* ISA does not apply to BLAS */
                    if (!blas && tn_blas_get() == NULL && !strcmp(tn_gemm_variant(d), "ref") && isa != (int)host)
                        continue;
                    if (!strcmp(tn_gemm_variant(d), "ref") && shapes[s][0] * shapes[s][1] * shapes[s][2] > (1 << 28))
                        continue;
                    const char *engine_name = tn_gemm_variant(d);
                    if (!uses_blas && (shapes[s][0] <= 4 || shapes[s][1] <= 4)) engine_name = "dot (GEMV path)";
                    printf("%-9s m=%-5lld n=%-5lld k=%-5lld %-8s isa=%-10s %-32s %8.2f GFLOP/s\n",
                           tn_dtype_infos[d].c10_name, (long long)shapes[s][0], (long long)shapes[s][1],
                           (long long)shapes[s][2], uses_blas ? "blas" : "own", tn_isa_name((tn_isa)isa), engine_name,
                           bench(d, shapes[s][0], shapes[s][1], shapes[s][2]));
                    fflush(stdout);
                }
    tn_blas_enable(true);
    tn_cpu_isa_set(host);
}

int main(int argc, char **argv) {
    int have_blas = tn_blas_load(NULL) == TN_OK;
    if (argc > 1 && !strcmp(argv[1], "--bench")) {
        run_bench();
        return 0;
    }
    printf("host tier %s, BLAS %s\n", tn_isa_name(tn_cpu_isa()), have_blas ? "loaded" : "absent (set TN_BLAS_PATH)");
    static const tn_dtype own[] = {TN_DTYPE_BFLOAT16, TN_DTYPE_FLOAT16, TN_DTYPE_FLOAT32};
    tn_isa host = tn_cpu_isa();
    /* Our kernels on every tier, with BLAS off so float32 runs them too. */
    tn_blas_enable(false);
#if defined(__aarch64__)
    /* aarch64: the NEON engine (every tier from neon up picks it) and the scalar one */
    (void)host;
    tn_arm_isa arm_host = tn_cpu_arm_host_isa(), arm_tiers[2] = {arm_host, TN_ARM_ISA_SCALAR};
    for (int t = 0; t < (arm_host > TN_ARM_ISA_SCALAR ? 2 : 1); t++) {
        const char *tag = tn_arm_isa_name(tn_cpu_arm_isa_set(arm_tiers[t]));
        for (int i = 0; i < 3; i++) sweep(own[i], tag);
        check_bf16_rounding(tag);
        printf("tier %-10s (%s) done: %d passed, %d failed so far\n", tag, tn_gemm_variant(TN_DTYPE_FLOAT32),
               tn_test_passed, tn_test_failed);
    }
    tn_cpu_arm_isa_set(arm_host);
#else
    for (int isa = (int)host; isa >= 0; isa--) {
        tn_cpu_isa_set((tn_isa)isa);
        for (int i = 0; i < 3; i++) sweep(own[i], tn_isa_name((tn_isa)isa));
        check_bf16_rounding(tn_isa_name((tn_isa)isa));
        printf("tier %-10s done: %d passed, %d failed so far\n", tn_isa_name((tn_isa)isa), tn_test_passed,
               tn_test_failed);
    }
    tn_cpu_isa_set(host);
#endif
    /* The reference-only dtypes, and float64 without BLAS. */
    static const tn_dtype refd[] = {TN_DTYPE_FLOAT64, TN_DTYPE_INT8, TN_DTYPE_UINT8, TN_DTYPE_INT32, TN_DTYPE_INT64};
    for (int i = 0; i < 5; i++) sweep(refd[i], "ref");
    tn_blas_enable(true);
    if (have_blas) {
        sweep(TN_DTYPE_FLOAT32, "openblas");
        sweep(TN_DTYPE_FLOAT64, "openblas");
    }
    test_ops();
    return tn_test_summary();
}
