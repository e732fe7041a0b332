/* test_random.c — generator and sampling-kernel tests. Without arguments: C unit tests
 * (mt19937 known answers, seeding, state round trip and validation, element order).
 * With `--dump CMD...`: runs each command on the default generator and prints one JSON
 * line per command with the raw result (float bit patterns, integer values), which
 * tests/test_random_c.py compares bit for bit against upstream torch.
 *
 * Commands (space-separated fields):
 *   seed S                              manual_seed(S)
 *   isa default|avx2|avx512             pin the emulated upstream kernel build
 *   state                               get_state() bytes
 *   setstate HEX                        set_state() from hex bytes
 *   fill OP DTYPE SHAPE VIEW [ARGS...]  in-place fill of a view; VIEW is "-" (contiguous),
 *                                       a permutation "1,0" of SHAPE, or "step2" (every
 *                                       other element of the last dim); OPs: uniform a b,
 *                                       normal m s, random, random_from f t|none, random_to t,
 *                                       bernoulli p, exponential l, geometric p,
 *                                       log_normal m s, cauchy m s
 *   bernoulli_t DTYPE SHAPE PDTYPE      bernoulli_(p) with p[i] = (i % 11) / 10
 *   multinomial DTYPE ROWS COLS N REPL P0,P1,...
 *   randperm N DTYPE
 *   op rand|randn DTYPE SHAPE           the factories through the door (tn_dispatch)
 *   op randint LOW HIGH DTYPE SHAPE
 *   op randperm N DTYPE */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/generator.h"
#include "core/tensor.h"
#include "kernels/random.h"
#include "ops/dispatch.h"
#include "tn_test.h"

/* ---- unit tests ------------------------------------------------------------------------ */

static void test_engine_known_answers(void) {
    /* mt19937 reference: seed 5489 gives 3499211612 first and 4123659995 as the 10000th
     * output (the C++ standard's check value for std::mt19937). */
    tn_generator *g;
    TN_CHECK(tn_generator_new(5489, &g) == TN_OK, "new");
    uint32_t first = tn_generator_random(g), v = first;
    for (int i = 1; i < 10000; i++) v = tn_generator_random(g);
    TN_CHECK(first == 3499211612u, "first draw %u", first);
    TN_CHECK(v == 4123659995u, "10000th draw %u", v);
    /* upstream seeds from the low 32 bits but reports the full seed */
    tn_generator_set_seed(g, (UINT64_C(7) << 32) | 5489);
    TN_CHECK(tn_generator_random(g) == 3499211612u, "high seed bits do not reach the engine");
    TN_CHECK(tn_generator_initial_seed(g) == ((UINT64_C(7) << 32) | 5489), "initial_seed keeps 64 bits");
    /* random64 = first draw high, second low */
    tn_generator_set_seed(g, 5489);
    uint64_t r64 = tn_generator_random64(g);
    TN_CHECK(r64 == ((uint64_t)3499211612u << 32 | 581869302u), "random64 word order %" PRIx64, r64);
    tn_generator_free(g);
    TN_CHECK(tn_generator_new(TN_GENERATOR_DEFAULT_SEED, &g) == TN_OK, "new default-seeded");
    TN_CHECK(tn_generator_initial_seed(g) == UINT64_C(67280421310721), "torch.Generator() seed");
    tn_generator_free(g);
}

static void test_state_round_trip(void) {
    tn_generator *g, *h;
    tn_generator_new(42, &g);
    tn_generator_new(1, &h);
    float buf[5];
    int64_t sz[1] = {5}, st[1] = {1};
    tn_strided out = {buf, 1, sz, st, TN_DTYPE_FLOAT32};
    tn_random_normal(g, &out, 0, 1); /* leaves a cached double normal */
    uint8_t s1[TN_GENERATOR_STATE_BYTES], s2[TN_GENERATOR_STATE_BYTES];
    tn_generator_get_state(g, s1);
    TN_CHECK(g->has_next_double, "odd scalar normal count leaves a cached sample");
    TN_CHECK(tn_generator_set_state(h, s1, sizeof s1) == TN_OK, "set_state");
    tn_generator_get_state(h, s2);
    TN_CHECK(memcmp(s1, s2, sizeof s1) == 0, "state bytes round trip");
    float a[5], b[5];
    out.data = a;
    tn_random_normal(g, &out, 0, 1);
    out.data = b;
    tn_random_normal(h, &out, 0, 1);
    TN_CHECK(memcmp(a, b, sizeof a) == 0, "restored generator continues identically");
    TN_CHECK(tn_generator_set_state(h, s1, 100) == TN_ERR_RUNTIME, "wrong size refused");
    TN_CHECK(strstr(tn_error_message(), "Expected a CPUGeneratorImplState of size 5056") != NULL, "%s",
             tn_error_message());
    s1[8] = 0; s1[9] = s1[10] = s1[11] = 0; /* left = 0 is invalid */
    TN_CHECK(tn_generator_set_state(h, s1, sizeof s1) == TN_ERR_RUNTIME, "invalid state refused");
    tn_generator *c;
    tn_generator_clone(g, &c);
    TN_CHECK(tn_generator_random(c) == tn_generator_random(g), "clone continues identically");
    tn_generator_free(c);
    tn_generator_free(g);
    tn_generator_free(h);
}

static void test_element_order(void) {
    /* A transposed output is filled in memory order (upstream's TensorIterator). */
    tn_generator *g;
    tn_generator_new(3, &g);
    double plain[6], tr[6];
    int64_t sz[2] = {2, 3}, st[2] = {3, 1};
    tn_strided o = {plain, 2, sz, st, TN_DTYPE_FLOAT64};
    tn_random_uniform(g, &o, 0, 1);
    tn_generator_set_seed(g, 3);
    int64_t tsz[2] = {3, 2}, tst[2] = {1, 3};
    o = (tn_strided){tr, 2, tsz, tst, TN_DTYPE_FLOAT64};
    tn_random_uniform(g, &o, 0, 1);
    TN_CHECK(memcmp(plain, tr, sizeof plain) == 0, "transposed view drawn in memory order");
    tn_generator_free(g);
}

/* ---- dump mode --------------------------------------------------------------------------- */

static tn_dtype parse_dtype(const char *s) {
    static const struct { const char *n; tn_dtype d; } m[] = {
        {"float32", TN_DTYPE_FLOAT32}, {"float64", TN_DTYPE_FLOAT64}, {"float16", TN_DTYPE_FLOAT16},
        {"bfloat16", TN_DTYPE_BFLOAT16}, {"int64", TN_DTYPE_INT64}, {"int32", TN_DTYPE_INT32},
        {"int16", TN_DTYPE_INT16}, {"int8", TN_DTYPE_INT8}, {"uint8", TN_DTYPE_UINT8}, {"bool", TN_DTYPE_BOOL},
        {"uint16", TN_DTYPE_UINT16}, {"uint32", TN_DTYPE_UINT32}, {"uint64", TN_DTYPE_UINT64}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (!strcmp(m[i].n, s)) return m[i].d;
    fprintf(stderr, "unknown dtype %s\n", s);
    exit(2);
}

static int parse_ints(const char *s, int64_t *out) {
    int n = 0;
    if (!strcmp(s, "scalar")) return 0;
    while (*s) {
        out[n++] = strtoll(s, (char **)&s, 10);
        if (*s == ',') s++;
    }
    return n;
}

/* Prints elements of a strided buffer in logical row-major order as integers (float bits). */
static void print_elems(void *base, int nd, const int64_t *sz, const int64_t *st, tn_dtype dt) {
    int64_t n = 1, idx[TN_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++) n *= sz[d];
    int isz = tn_dtype_itemsize(dt);
    printf("[");
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += idx[d] * st[d];
        const char *p = (const char *)base + off * isz;
        long long v = 0;
        switch (dt) {
        case TN_DTYPE_FLOAT64: case TN_DTYPE_INT64: case TN_DTYPE_UINT64: { int64_t x; memcpy(&x, p, 8); v = x; break; }
        case TN_DTYPE_FLOAT32: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
        case TN_DTYPE_INT32: { int32_t x; memcpy(&x, p, 4); v = x; break; }
        case TN_DTYPE_UINT32: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
        case TN_DTYPE_FLOAT16: case TN_DTYPE_BFLOAT16: case TN_DTYPE_UINT16: { uint16_t x; memcpy(&x, p, 2); v = x; break; }
        case TN_DTYPE_INT16: { int16_t x; memcpy(&x, p, 2); v = x; break; }
        case TN_DTYPE_INT8: v = *(const int8_t *)p; break;
        default: v = *(const uint8_t *)p; break;
        }
        printf("%s%lld", k ? "," : "", v);
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < sz[d]) break;
            idx[d] = 0;
        }
    }
    printf("]\n");
}

/* Prints the error as JSON: {"error": "<message with quotes and backslashes escaped>"} */
static void fail_status(tn_status st) {
    if (st == TN_OK) return;
    printf("{\"error\": \"");
    for (const char *m = tn_error_message(); *m; m++) {
        if (*m == '"' || *m == '\\') putchar('\\');
        putchar(*m);
    }
    printf("\"}\n");
}

static void run_fill(char **f, int nf) {
    tn_generator *g = tn_generator_default();
    tn_dtype dt = parse_dtype(f[2]);
    int64_t shape[TN_MAX_DIMS], sz[TN_MAX_DIMS], st[TN_MAX_DIMS], cst[TN_MAX_DIMS];
    int nd = parse_ints(f[3], shape);
    int64_t storage_shape[TN_MAX_DIMS];
    memcpy(storage_shape, shape, sizeof shape);
    bool step2 = !strcmp(f[4], "step2");
    if (step2) storage_shape[nd - 1] *= 2;
    tn_contiguous_strides(nd, storage_shape, cst);
    int64_t total = 1;
    for (int d = 0; d < nd; d++) total *= storage_shape[d];
    void *buf = calloc((size_t)(total + 1), 8);
    if (step2) {
        memcpy(sz, shape, sizeof shape);
        memcpy(st, cst, sizeof cst);
        st[nd - 1] *= 2;
    } else if (strcmp(f[4], "-")) {
        int64_t perm[TN_MAX_DIMS];
        parse_ints(f[4], perm);
        for (int d = 0; d < nd; d++) { sz[d] = shape[perm[d]]; st[d] = cst[perm[d]]; }
    } else {
        memcpy(sz, shape, sizeof shape);
        memcpy(st, cst, sizeof cst);
    }
    tn_strided o = {buf, nd, sz, st, dt};
    const char *op = f[1];
    double a = nf > 5 ? atof(f[5]) : 0, b = nf > 6 ? atof(f[6]) : 0;
    tn_status s;
    if (!strcmp(op, "uniform")) s = tn_random_uniform(g, &o, a, b);
    else if (!strcmp(op, "normal")) s = tn_random_normal(g, &o, a, b);
    else if (!strcmp(op, "random")) s = tn_random_random(g, &o);
    else if (!strcmp(op, "random_to")) s = tn_random_from_to(g, &o, (uint64_t)strtoll(f[5], NULL, 10), 0);
    else if (!strcmp(op, "random_from")) {
        int64_t from = strtoll(f[5], NULL, 10);
        if (!strcmp(f[6], "none")) s = tn_random_full_range(g, &o); /* only used with INT64_MIN */
        else s = tn_random_from_to(g, &o, (uint64_t)strtoll(f[6], NULL, 10) - (uint64_t)from, from);
    } else if (!strcmp(op, "bernoulli")) s = tn_random_bernoulli_scalar(g, &o, a);
    else if (!strcmp(op, "exponential")) s = tn_random_exponential(g, &o, a);
    else if (!strcmp(op, "geometric")) s = tn_random_geometric(g, &o, a);
    else if (!strcmp(op, "log_normal")) s = tn_random_log_normal(g, &o, a, b);
    else if (!strcmp(op, "cauchy")) s = tn_random_cauchy(g, &o, a, b);
    else { fprintf(stderr, "unknown op %s\n", op); exit(2); }
    if (s != TN_OK) fail_status(s);
    else print_elems(buf, nd, sz, st, dt);
    free(buf);
}

static void run_bernoulli_t(char **f) {
    tn_dtype dt = parse_dtype(f[1]), pdt = parse_dtype(f[3]);
    int64_t sz[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int nd = parse_ints(f[2], sz);
    tn_contiguous_strides(nd, sz, st);
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= sz[d];
    void *out = calloc((size_t)n + 1, 8), *p = calloc((size_t)n + 1, 8);
    for (int64_t i = 0; i < n; i++) {
        double v = (double)(i % 11) / 10.0;
        switch (pdt) {
        case TN_DTYPE_FLOAT64: ((double *)p)[i] = v; break;
        case TN_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
        case TN_DTYPE_FLOAT16: ((uint16_t *)p)[i] = tn_f32_to_half((float)v); break;
        default: ((uint16_t *)p)[i] = tn_f32_to_bf16((float)v); break;
        }
    }
    tn_strided o = {out, nd, sz, st, dt}, ps = {p, nd, sz, st, pdt};
    tn_status s = tn_random_bernoulli_tensor(tn_generator_default(), &o, &ps);
    if (s != TN_OK) fail_status(s);
    else print_elems(out, nd, sz, st, dt);
    free(out);
    free(p);
}

static void run_multinomial(char **f) {
    tn_dtype dt = parse_dtype(f[1]);
    int64_t rows = atoll(f[2]), cols = atoll(f[3]), ns = atoll(f[4]);
    bool repl = atoi(f[5]) != 0;
    double *pv = calloc((size_t)(rows * cols), 8);
    const char *s = f[6];
    for (int64_t i = 0; i < rows * cols; i++) {
        pv[i] = strtod(s, (char **)&s);
        if (*s == ',') s++;
    }
    void *probs = calloc((size_t)(rows * cols), 8), *q = calloc((size_t)(rows * cols), 8);
    for (int64_t i = 0; i < rows * cols; i++) {
        switch (dt) {
        case TN_DTYPE_FLOAT64: ((double *)probs)[i] = pv[i]; break;
        case TN_DTYPE_FLOAT32: ((float *)probs)[i] = (float)pv[i]; break;
        case TN_DTYPE_FLOAT16: ((uint16_t *)probs)[i] = tn_f32_to_half((float)pv[i]); break;
        default: ((uint16_t *)probs)[i] = tn_f32_to_bf16((float)pv[i]); break;
        }
    }
    int64_t *res = calloc((size_t)(rows * ns), 8);
    int64_t *scratch = calloc((size_t)(2 * cols), 8);
    tn_generator *g = tn_generator_default();
    tn_status st;
    if (!repl || ns == 1) {
        int64_t qsz[2] = {rows, cols}, qst[2] = {cols, 1};
        tn_strided qs = {q, 2, qsz, qst, dt};
        st = tn_random_exponential(g, &qs, 1.0);
        if (st == TN_OK)
            st = tn_random_multinomial_pick(res, ns, 1, probs, dt, cols, 1, q, rows, cols, ns, scratch);
    } else {
        st = tn_random_multinomial_with_replacement(g, res, ns, 1, probs, dt, cols, 1, rows, cols, ns,
                                                    (double *)scratch);
    }
    if (st != TN_OK) fail_status(st);
    else {
        int64_t sz[2] = {rows, ns}, sst[2] = {ns, 1};
        print_elems(res, 2, sz, sst, TN_DTYPE_INT64);
    }
    free(pv); free(probs); free(q); free(res); free(scratch);
}

static void run_randperm(char **f) {
    int64_t n = atoll(f[1]);
    tn_dtype dt = parse_dtype(f[2]);
    void *buf = calloc((size_t)n + 1, 8);
    int64_t sz[1] = {n}, st[1] = {1};
    tn_strided o = {buf, 1, sz, st, dt};
    tn_status s = tn_random_randperm(tn_generator_default(), &o, n);
    if (s != TN_OK) fail_status(s);
    else print_elems(buf, 1, sz, st, dt);
    free(buf);
}

/* Factories through tn_dispatch, so argument handling is covered too. */
static void run_op(char **f) {
    tn_value a[8] = {0}, r[1];
    int64_t shape[TN_MAX_DIMS];
    tn_status st;
    tn_value none = {.tag = TN_V_NONE};
    for (int i = 0; i < 8; i++) a[i] = none;
    if (!strcmp(f[1], "rand") || !strcmp(f[1], "randn")) {
        int nd = parse_ints(f[3], shape);
        a[0].tag = TN_V_INTLIST; a[0].u.ilist.data = shape; a[0].u.ilist.n = nd;
        a[1].tag = TN_V_DTYPE; a[1].u.dtype = parse_dtype(f[2]);
        st = tn_dispatch(!strcmp(f[1], "rand") ? TN_OP_rand : TN_OP_randn, a, r);
    } else if (!strcmp(f[1], "randint")) {
        int nd = parse_ints(f[5], shape);
        a[0] = tn_value_int(atoll(f[2]));
        a[1] = tn_value_int(atoll(f[3]));
        a[2].tag = TN_V_INTLIST; a[2].u.ilist.data = shape; a[2].u.ilist.n = nd;
        a[3].tag = TN_V_DTYPE; a[3].u.dtype = parse_dtype(f[4]);
        st = tn_dispatch(TN_OP_randint_low, a, r);
    } else {
        a[0] = tn_value_int(atoll(f[2]));
        a[1].tag = TN_V_DTYPE; a[1].u.dtype = parse_dtype(f[3]);
        st = tn_dispatch(TN_OP_randperm, a, r);
    }
    if (st != TN_OK) { fail_status(st); return; }
    tn_tensor *t = r[0].u.t;
    print_elems(tn_tensor_data(t), t->ndim, t->sizes, t->strides, t->dtype);
    tn_tensor_release(t);
}

static int dump(int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        char *line = strdup(argv[i]), *f[64];
        int nf = 0;
        for (char *t = strtok(line, " "); t && nf < 64; t = strtok(NULL, " ")) f[nf++] = t;
        if (nf == 0) { free(line); continue; }
        if (!strcmp(f[0], "seed")) {
            tn_generator_set_seed(tn_generator_default(), strtoull(f[1], NULL, 10));
            printf("null\n");
        } else if (!strcmp(f[0], "isa")) {
            tn_random_isa_set(!strcmp(f[1], "default") ? TN_RANDOM_ISA_DEFAULT
                              : !strcmp(f[1], "avx2")  ? TN_RANDOM_ISA_AVX2
                                                       : TN_RANDOM_ISA_AVX512);
            printf("null\n");
        } else if (!strcmp(f[0], "state")) {
            uint8_t s[TN_GENERATOR_STATE_BYTES];
            tn_generator_get_state(tn_generator_default(), s);
            int64_t sz[1] = {TN_GENERATOR_STATE_BYTES}, st[1] = {1};
            print_elems(s, 1, sz, st, TN_DTYPE_UINT8);
        } else if (!strcmp(f[0], "setstate")) {
            uint8_t s[TN_GENERATOR_STATE_BYTES];
            for (int k = 0; k < TN_GENERATOR_STATE_BYTES; k++) sscanf(f[1] + 2 * k, "%2hhx", &s[k]);
            fail_status(tn_generator_set_state(tn_generator_default(), s, sizeof s));
            printf("null\n");
        } else if (!strcmp(f[0], "fill")) run_fill(f, nf);
        else if (!strcmp(f[0], "bernoulli_t")) run_bernoulli_t(f);
        else if (!strcmp(f[0], "multinomial")) run_multinomial(f);
        else if (!strcmp(f[0], "randperm")) run_randperm(f);
        else if (!strcmp(f[0], "op")) run_op(f);
        else { fprintf(stderr, "unknown command %s\n", f[0]); return 2; }
        free(line);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--dump")) return dump(argc - 2, argv + 2);
    test_engine_known_answers();
    test_state_round_trip();
    test_element_order();
    return tn_test_summary();
}
