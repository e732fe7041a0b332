/* test_creation.c — the factory operators through the door: sequence values (arange,
 * range, linspace, logspace) bit-identical to upstream torch 2.13.0 at lengths crossing
 * vector widths, tails and the parallel chunk split (FNV-1a hashes of the result bytes,
 * printed by .venv-ref/bin/python; generator kept in the comment at the table), dtype
 * inference, strides of every memory format, meta tensors, and upstream's error classes
 * and messages. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "ops/dispatch.h"
#include "tn_test.h"

static tn_value V_T(tn_tensor *t) { return tn_value_tensor(t); }
static tn_value V_I(int64_t i) { return tn_value_int(i); }
static tn_value V_B(bool b) { return tn_value_bool(b); }
static tn_value V_D(double d) { return tn_value_double(d); }
static tn_value V_C(double re, double im) { tn_value v = {.tag = TN_V_COMPLEX}; v.u.c.re = re; v.u.c.im = im; return v; }
static tn_value V_N(void) { tn_value v = {.tag = TN_V_NONE}; return v; }
static tn_value V_L(const int64_t *d, int64_t n) { tn_value v = {.tag = TN_V_INTLIST}; v.u.ilist.data = d; v.u.ilist.n = n; return v; }
static tn_value V_DT(tn_dtype d) { tn_value v = {.tag = TN_V_DTYPE}; v.u.dtype = d; return v; }
static tn_value V_DEV(int type) { tn_value v = {.tag = TN_V_DEVICE}; v.u.device = (tn_device){(int16_t)type, -1}; return v; }
static tn_value V_MF(int f) { tn_value v = {.tag = TN_V_MEMFMT}; v.u.memfmt = f; return v; }
static tn_value V_LAY(int l) { tn_value v = {.tag = TN_V_LAYOUT}; v.u.layout = l; return v; }
#define L(...) V_L((const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define ARGS(...) ((tn_value[]){__VA_ARGS__})
/* option block: dtype, layout, device, pin_memory */
#define OPTS_NONE V_N(), V_N(), V_N(), V_N()
#define OPTS_DT(d) V_DT(d), V_N(), V_N(), V_N()
#define OPTS_META V_N(), V_N(), V_DEV(TN_DEVICE_META), V_N()

/* Runs op; on success returns the result tensor (owned), else NULL with the status in *st. */
static tn_tensor *run(tn_op_id op, const tn_value *args, tn_status *st) {
    tn_value r[2];
    tn_status s = tn_dispatch(op, args, r);
    if (st) *st = s;
    return s == TN_OK ? r[0].u.t : NULL;
}
static tn_tensor *ok(tn_op_id op, const tn_value *args) {
    tn_status st;
    tn_tensor *t = run(op, args, &st);
    TN_CHECK(st == TN_OK, "%s failed: %s", tn_op_schemas[op].name, tn_error_message());
    return t;
}
/* Expects failure with `code` and a message starting with `msg`. */
static void fails(tn_op_id op, const tn_value *args, tn_status code, const char *msg) {
    tn_status st;
    tn_tensor *t = run(op, args, &st);
    TN_CHECK(st == code, "%s: status %d, expected %d (%s)", tn_op_schemas[op].name, st, code, tn_error_message());
    if (st != TN_OK) TN_CHECK(strncmp(tn_error_message(), msg, strlen(msg)) == 0, "message '%s', expected '%s'", tn_error_message(), msg);
    if (t) tn_tensor_release(t);
}

static uint64_t fnv_bytes(const void *p, int64_t n) {
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int64_t i = 0; i < n; i++) { h ^= b[i]; h *= 0x100000001b3ULL; }
    return h;
}
static uint64_t hash_t(const tn_tensor *t) { return fnv_bytes(tn_tensor_data(t), tn_tensor_numel(t) * tn_dtype_itemsize(t->dtype)); }

static bool sizes_are(const tn_tensor *t, int nd, const int64_t *s) {
    return t && t->ndim == nd && (nd == 0 || memcmp(t->sizes, s, sizeof(int64_t) * (size_t)nd) == 0);
}
static bool strides_are(const tn_tensor *t, int nd, const int64_t *s) {
    return t && t->ndim == nd && (nd == 0 || memcmp(t->strides, s, sizeof(int64_t) * (size_t)nd) == 0);
}
#define SIZES(t, ...) sizes_are(t, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__})
#define STRIDES(t, ...) strides_are(t, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__})

/* ---- sequences: expected hashes from upstream ---------------------------------------------
 * Generated with .venv-ref/bin/python (torch 2.13.0, 2 threads): for arange, end = start +
 * step * n - step / 2 (the n listed is upstream's length); fnv = FNV-1a 64 of the result's
 * bytes. Kinds: arange (start, end, step), linspace (start, end, steps), logspace (start, end,
 * base, steps), range (start, end, step). */
typedef struct seq_case {
    const char *kind;
    tn_dtype dtype;
    double a, b, c;
    int64_t steps, numel;
    uint64_t fnv;
} seq_case;

static const seq_case seq_cases[] = {
    {"arange", TN_DTYPE_FLOAT32, 0.1, 0.25, 0.3, 0, 1, 0x848a69dce2401057ULL},
    {"arange", TN_DTYPE_FLOAT32, 0.1, 2.0500000000000003, 0.3, 0, 7, 0x3203ae79a5570646ULL},
    {"arange", TN_DTYPE_FLOAT32, 0.1, 9.249999999999998, 0.3, 0, 31, 0x8bbd8ec199d59b09ULL},
    {"arange", TN_DTYPE_FLOAT32, 0.1, 9.85, 0.3, 0, 33, 0x80ecb13cc92d1c84ULL},
    {"arange", TN_DTYPE_FLOAT32, 0.1, 299.95000000000005, 0.3, 0, 1000, 0x6174ae5ad902b0e9ULL},
    {"arange", TN_DTYPE_FLOAT32, 0.1, 29999.949999999997, 0.3, 0, 100000, 0xa80278df107b84eaULL},
    {"arange", TN_DTYPE_FLOAT32, -3.7, -3.6935000000000002, 0.013, 0, 1, 0x86a98cdce40cff30ULL},
    {"arange", TN_DTYPE_FLOAT32, -3.7, -3.6155, 0.013, 0, 7, 0xd750c7b9300cdaddULL},
    {"arange", TN_DTYPE_FLOAT32, -3.7, -3.3035, 0.013, 0, 31, 0x9743e443762a105bULL},
    {"arange", TN_DTYPE_FLOAT32, -3.7, -3.2775000000000003, 0.013, 0, 33, 0xe9929d1d3cc0d6f5ULL},
    {"arange", TN_DTYPE_FLOAT32, -3.7, 9.2935, 0.013, 0, 1000, 0xcf8c0fd08c063e1bULL},
    {"arange", TN_DTYPE_FLOAT32, -3.7, 1296.2935, 0.013, 0, 100000, 0x3c90a0aa3fcada53ULL},
    {"arange", TN_DTYPE_FLOAT32, 123.456, 123.0615, -0.789, 0, 1, 0x3bc5d94c286c4dd3ULL},
    {"arange", TN_DTYPE_FLOAT32, 123.456, 118.3275, -0.789, 0, 7, 0xdab26f62994729a2ULL},
    {"arange", TN_DTYPE_FLOAT32, 123.456, 99.3915, -0.789, 0, 31, 0x2dd5f2b83551244fULL},
    {"arange", TN_DTYPE_FLOAT32, 123.456, 97.81349999999999, -0.789, 0, 33, 0x980b5d40ac2db017ULL},
    {"arange", TN_DTYPE_FLOAT32, 123.456, -665.1495, -0.789, 0, 1000, 0xbe7992fc6d5d280cULL},
    {"arange", TN_DTYPE_FLOAT32, 123.456, -78776.1495, -0.789, 0, 100000, 0xe3525f00713d28d8ULL},
    {"arange", TN_DTYPE_FLOAT64, 0.1, 0.25, 0.3, 0, 1, 0x4fa09cc0eec310c4ULL},
    {"arange", TN_DTYPE_FLOAT64, 0.1, 2.0500000000000003, 0.3, 0, 7, 0x5361336d2890432aULL},
    {"arange", TN_DTYPE_FLOAT64, 0.1, 9.249999999999998, 0.3, 0, 31, 0x58ce5df089f3f9d0ULL},
    {"arange", TN_DTYPE_FLOAT64, 0.1, 9.85, 0.3, 0, 33, 0x6af9e3a06b9b153bULL},
    {"arange", TN_DTYPE_FLOAT64, 0.1, 299.95000000000005, 0.3, 0, 1000, 0xa70ef15d1e819be7ULL},
    {"arange", TN_DTYPE_FLOAT64, 0.1, 29999.949999999997, 0.3, 0, 100000, 0xe7e30418d718b4e5ULL},
    {"arange", TN_DTYPE_FLOAT64, -3.7, -3.6935000000000002, 0.013, 0, 1, 0x512b7bc0f0131b1dULL},
    {"arange", TN_DTYPE_FLOAT64, -3.7, -3.6155, 0.013, 0, 7, 0xb58001bad17fd39aULL},
    {"arange", TN_DTYPE_FLOAT64, -3.7, -3.3035, 0.013, 0, 31, 0x078a6e60725b74c3ULL},
    {"arange", TN_DTYPE_FLOAT64, -3.7, -3.2775000000000003, 0.013, 0, 33, 0x5da011c85b011135ULL},
    {"arange", TN_DTYPE_FLOAT64, -3.7, 9.2935, 0.013, 0, 1000, 0x392a76a99120bdb9ULL},
    {"arange", TN_DTYPE_FLOAT64, -3.7, 1296.2935, 0.013, 0, 100000, 0x83d8a5d3ece5ca32ULL},
    {"arange", TN_DTYPE_FLOAT64, 123.456, 123.0615, -0.789, 0, 1, 0x408c93aa57eecc77ULL},
    {"arange", TN_DTYPE_FLOAT64, 123.456, 118.3275, -0.789, 0, 7, 0x6868687ba179bf36ULL},
    {"arange", TN_DTYPE_FLOAT64, 123.456, 99.3915, -0.789, 0, 31, 0x6891a6b485fdb900ULL},
    {"arange", TN_DTYPE_FLOAT64, 123.456, 97.81349999999999, -0.789, 0, 33, 0x83bf32312f1528afULL},
    {"arange", TN_DTYPE_FLOAT64, 123.456, -665.1495, -0.789, 0, 1000, 0x9c01a39c91e7e28eULL},
    {"arange", TN_DTYPE_FLOAT64, 123.456, -78776.1495, -0.789, 0, 100000, 0x0bb87fa48cae89f5ULL},
    {"arange", TN_DTYPE_FLOAT16, 0.1, 0.25, 0.3, 0, 1, 0x08989a07b54241b5ULL},
    {"arange", TN_DTYPE_FLOAT16, 0.1, 2.0500000000000003, 0.3, 0, 7, 0xcef4f7efb5785a83ULL},
    {"arange", TN_DTYPE_FLOAT16, 0.1, 9.249999999999998, 0.3, 0, 31, 0xd9820e06f6fec82bULL},
    {"arange", TN_DTYPE_FLOAT16, 0.1, 9.85, 0.3, 0, 33, 0x4d487b2887c967edULL},
    {"arange", TN_DTYPE_FLOAT16, 0.1, 299.95000000000005, 0.3, 0, 1000, 0xe714bfa144903c7eULL},
    {"arange", TN_DTYPE_FLOAT16, -3.7, -3.6935000000000002, 0.013, 0, 1, 0x0897bd07b540ca2eULL},
    {"arange", TN_DTYPE_FLOAT16, -3.7, -3.6155, 0.013, 0, 7, 0xc61db219f852f5b6ULL},
    {"arange", TN_DTYPE_FLOAT16, -3.7, -3.3035, 0.013, 0, 31, 0x7ef695c9f7b27d68ULL},
    {"arange", TN_DTYPE_FLOAT16, -3.7, -3.2775000000000003, 0.013, 0, 33, 0x14f915f62521d33aULL},
    {"arange", TN_DTYPE_FLOAT16, -3.7, 9.2935, 0.013, 0, 1000, 0x2f80b7b528ae96d4ULL},
    {"arange", TN_DTYPE_FLOAT16, 123.456, 123.0615, -0.789, 0, 1, 0x09a52107b6267173ULL},
    {"arange", TN_DTYPE_FLOAT16, 123.456, 118.3275, -0.789, 0, 7, 0xa957c2d56606ca82ULL},
    {"arange", TN_DTYPE_FLOAT16, 123.456, 99.3915, -0.789, 0, 31, 0xe8813b5a774878a4ULL},
    {"arange", TN_DTYPE_FLOAT16, 123.456, 97.81349999999999, -0.789, 0, 33, 0x7c4c4ed4b43b9c07ULL},
    {"arange", TN_DTYPE_FLOAT16, 123.456, -665.1495, -0.789, 0, 1000, 0xe0ec48d977dac991ULL},
    {"arange", TN_DTYPE_BFLOAT16, 0.1, 0.25, 0.3, 0, 1, 0x0ac90707b71e217fULL},
    {"arange", TN_DTYPE_BFLOAT16, 0.1, 2.0500000000000003, 0.3, 0, 7, 0xd95231457ea73efaULL},
    {"arange", TN_DTYPE_BFLOAT16, 0.1, 9.249999999999998, 0.3, 0, 31, 0xd542c3674fc6ff39ULL},
    {"arange", TN_DTYPE_BFLOAT16, 0.1, 9.85, 0.3, 0, 33, 0x20cfd3fb240ff3acULL},
    {"arange", TN_DTYPE_BFLOAT16, 0.1, 299.95000000000005, 0.3, 0, 1000, 0xa6f564acac32e6efULL},
    {"arange", TN_DTYPE_BFLOAT16, -3.7, -3.6935000000000002, 0.013, 0, 1, 0x08a9ba07b550eb48ULL},
    {"arange", TN_DTYPE_BFLOAT16, -3.7, -3.6155, 0.013, 0, 7, 0xccbb2c5688a4d37dULL},
    {"arange", TN_DTYPE_BFLOAT16, -3.7, -3.3035, 0.013, 0, 31, 0x4ec99b0fa181bcc2ULL},
    {"arange", TN_DTYPE_BFLOAT16, -3.7, -3.2775000000000003, 0.013, 0, 33, 0x488f00e900cacff7ULL},
    {"arange", TN_DTYPE_BFLOAT16, -3.7, 9.2935, 0.013, 0, 1000, 0x45e1ad7a45fd3f97ULL},
    {"arange", TN_DTYPE_BFLOAT16, 123.456, 123.0615, -0.789, 0, 1, 0x0a7e3407b6de827cULL},
    {"arange", TN_DTYPE_BFLOAT16, 123.456, 118.3275, -0.789, 0, 7, 0x9e85b0e3fcd8f08cULL},
    {"arange", TN_DTYPE_BFLOAT16, 123.456, 99.3915, -0.789, 0, 31, 0x6cc4b0090dc5ecfaULL},
    {"arange", TN_DTYPE_BFLOAT16, 123.456, 97.81349999999999, -0.789, 0, 33, 0xbc34b9efea9436cfULL},
    {"arange", TN_DTYPE_BFLOAT16, 123.456, -665.1495, -0.789, 0, 1000, 0x80001cd49b8fce8aULL},
    {"arange", TN_DTYPE_INT64, 3, 1000, 7, 0, 143, 0x03ba0c04ceba3a5eULL},
    {"arange", TN_DTYPE_INT64, 0, 31, 1, 0, 31, 0xb20544573d88689aULL},
    {"arange", TN_DTYPE_INT64, 100, -5, -3, 0, 35, 0x004b757642214459ULL},
    {"arange", TN_DTYPE_INT32, 3, 1000, 7, 0, 143, 0xea7a64b121806dfeULL},
    {"arange", TN_DTYPE_INT32, 0, 31, 1, 0, 31, 0x40f147e9f4bcabcaULL},
    {"arange", TN_DTYPE_INT32, 100, -5, -3, 0, 35, 0x643b2ea50c56975dULL},
    {"arange", TN_DTYPE_INT16, 3, 1000, 7, 0, 143, 0xa386f1415388f68eULL},
    {"arange", TN_DTYPE_INT16, 0, 31, 1, 0, 31, 0x2d238e96a79f9002ULL},
    {"arange", TN_DTYPE_INT16, 100, -5, -3, 0, 35, 0xe8a8761c0b0e29e7ULL},
    {"arange", TN_DTYPE_UINT8, 3, 1000, 7, 0, 143, 0xba9384005388142bULL},
    {"arange", TN_DTYPE_UINT8, 0, 31, 1, 0, 31, 0x3169064b80f155b8ULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.1, 0.3, 0, 1, 1, 0x848a69dce2401057ULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.1, 0.3, 0, 2, 2, 0xb7f6bc95d47450b5ULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.1, 0.3, 0, 7, 7, 0x3b8deaadf4cc1415ULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.1, 0.3, 0, 31, 31, 0x007fb10786fece35ULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.1, 0.3, 0, 33, 33, 0x1508dc078682c6b3ULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.1, 0.3, 0, 1000, 1000, 0xefbb0d9910602e3aULL},
    {"linspace", TN_DTYPE_FLOAT32, -3.7, 10.013, 0, 1, 1, 0x86a98cdce40cff30ULL},
    {"linspace", TN_DTYPE_FLOAT32, -3.7, 10.013, 0, 2, 2, 0x9e94ab6d8b1abc2bULL},
    {"linspace", TN_DTYPE_FLOAT32, -3.7, 10.013, 0, 7, 7, 0x1a3367d00e5d77ddULL},
    {"linspace", TN_DTYPE_FLOAT32, -3.7, 10.013, 0, 31, 31, 0x5e431f2c664c6413ULL},
    {"linspace", TN_DTYPE_FLOAT32, -3.7, 10.013, 0, 33, 33, 0x0dc3a61843e0af38ULL},
    {"linspace", TN_DTYPE_FLOAT32, -3.7, 10.013, 0, 1000, 1000, 0xab966582e4651574ULL},
    {"linspace", TN_DTYPE_FLOAT32, 123.456, 0.789, 0, 1, 1, 0x3bc5d94c286c4dd3ULL},
    {"linspace", TN_DTYPE_FLOAT32, 123.456, 0.789, 0, 2, 2, 0xf9eb65cf5120e321ULL},
    {"linspace", TN_DTYPE_FLOAT32, 123.456, 0.789, 0, 7, 7, 0xed80a2675ce96c98ULL},
    {"linspace", TN_DTYPE_FLOAT32, 123.456, 0.789, 0, 31, 31, 0x964fc8e69210709dULL},
    {"linspace", TN_DTYPE_FLOAT32, 123.456, 0.789, 0, 33, 33, 0xd1603c980668d725ULL},
    {"linspace", TN_DTYPE_FLOAT32, 123.456, 0.789, 0, 1000, 1000, 0x1023642fa97f3204ULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.0, 1.0, 0, 1, 1, 0x4d25767f9dce13f5ULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.0, 1.0, 0, 2, 2, 0xaa7ae932298bb4c8ULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.0, 1.0, 0, 7, 7, 0x9f6e3d58f9b23b8cULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.0, 1.0, 0, 31, 31, 0x765c8c6769129a8eULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.0, 1.0, 0, 33, 33, 0xebde5140a2cf972fULL},
    {"linspace", TN_DTYPE_FLOAT32, 0.0, 1.0, 0, 1000, 1000, 0x0cae6a2e6195867fULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.1, 0.3, 0, 1, 1, 0x4fa09cc0eec310c4ULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.1, 0.3, 0, 2, 2, 0x7f4e78660137cd88ULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.1, 0.3, 0, 7, 7, 0x81ca4d6aa1fe1df2ULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.1, 0.3, 0, 31, 31, 0x3d72bbac533d929fULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.1, 0.3, 0, 33, 33, 0x6c59db20e48c289cULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.1, 0.3, 0, 1000, 1000, 0x8f6dc24532898da5ULL},
    {"linspace", TN_DTYPE_FLOAT64, -3.7, 10.013, 0, 1, 1, 0x512b7bc0f0131b1dULL},
    {"linspace", TN_DTYPE_FLOAT64, -3.7, 10.013, 0, 2, 2, 0x27fff8540dc27b7fULL},
    {"linspace", TN_DTYPE_FLOAT64, -3.7, 10.013, 0, 7, 7, 0x6a3e7722965b3f42ULL},
    {"linspace", TN_DTYPE_FLOAT64, -3.7, 10.013, 0, 31, 31, 0x84bb3a6226980053ULL},
    {"linspace", TN_DTYPE_FLOAT64, -3.7, 10.013, 0, 33, 33, 0xfa2e284fbac49ce7ULL},
    {"linspace", TN_DTYPE_FLOAT64, -3.7, 10.013, 0, 1000, 1000, 0xdd609b22674b662dULL},
    {"linspace", TN_DTYPE_FLOAT64, 123.456, 0.789, 0, 1, 1, 0x408c93aa57eecc77ULL},
    {"linspace", TN_DTYPE_FLOAT64, 123.456, 0.789, 0, 2, 2, 0xdac0626c98244d2bULL},
    {"linspace", TN_DTYPE_FLOAT64, 123.456, 0.789, 0, 7, 7, 0x76d9adb1ec0943afULL},
    {"linspace", TN_DTYPE_FLOAT64, 123.456, 0.789, 0, 31, 31, 0x5ecc1726ab282f40ULL},
    {"linspace", TN_DTYPE_FLOAT64, 123.456, 0.789, 0, 33, 33, 0x000a1c0be7ccbd46ULL},
    {"linspace", TN_DTYPE_FLOAT64, 123.456, 0.789, 0, 1000, 1000, 0x973e2091663672c2ULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.0, 1.0, 0, 1, 1, 0xa8c7f832281a39c5ULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.0, 1.0, 0, 2, 2, 0x85c9d0b95f02e858ULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.0, 1.0, 0, 7, 7, 0x8cc4db8b6ef0012eULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.0, 1.0, 0, 31, 31, 0xff238f38d1e202beULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.0, 1.0, 0, 33, 33, 0xfb1f3e781556eb8dULL},
    {"linspace", TN_DTYPE_FLOAT64, 0.0, 1.0, 0, 1000, 1000, 0x9d3133ccb99168aaULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.1, 0.3, 0, 1, 1, 0x08989a07b54241b5ULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.1, 0.3, 0, 2, 2, 0x0f92af7a4a99cfd4ULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.1, 0.3, 0, 7, 7, 0x183dc997bf4ed24cULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.1, 0.3, 0, 31, 31, 0xaba09fd7c569dc35ULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.1, 0.3, 0, 33, 33, 0x7016cec5c242988aULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.1, 0.3, 0, 1000, 1000, 0x86d324e0438b971fULL},
    {"linspace", TN_DTYPE_FLOAT16, -3.7, 10.013, 0, 1, 1, 0x0897bd07b540ca2eULL},
    {"linspace", TN_DTYPE_FLOAT16, -3.7, 10.013, 0, 2, 2, 0x960bd7760efd0797ULL},
    {"linspace", TN_DTYPE_FLOAT16, -3.7, 10.013, 0, 7, 7, 0xe0e84a9a4ff172d8ULL},
    {"linspace", TN_DTYPE_FLOAT16, -3.7, 10.013, 0, 31, 31, 0x23ff6bd00adb785bULL},
    {"linspace", TN_DTYPE_FLOAT16, -3.7, 10.013, 0, 33, 33, 0x5f313fab81aa9087ULL},
    {"linspace", TN_DTYPE_FLOAT16, -3.7, 10.013, 0, 1000, 1000, 0xf046a487eeb1e62eULL},
    {"linspace", TN_DTYPE_FLOAT16, 123.456, 0.789, 0, 1, 1, 0x09a52107b6267173ULL},
    {"linspace", TN_DTYPE_FLOAT16, 123.456, 0.789, 0, 2, 2, 0xde48490d24bfcbd9ULL},
    {"linspace", TN_DTYPE_FLOAT16, 123.456, 0.789, 0, 7, 7, 0xb7ad0d820fa4dd94ULL},
    {"linspace", TN_DTYPE_FLOAT16, 123.456, 0.789, 0, 31, 31, 0x4c53ee1ed32ebb87ULL},
    {"linspace", TN_DTYPE_FLOAT16, 123.456, 0.789, 0, 33, 33, 0xc504801637b8aaceULL},
    {"linspace", TN_DTYPE_FLOAT16, 123.456, 0.789, 0, 1000, 1000, 0x1d356b21dbd360a0ULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.0, 1.0, 0, 1, 1, 0x08328807b4eb6fedULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.0, 1.0, 0, 2, 2, 0x4d254a7f9dcdc931ULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.0, 1.0, 0, 7, 7, 0x68a2195707b0a555ULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.0, 1.0, 0, 31, 31, 0xc3ceab31fc5e5bc1ULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.0, 1.0, 0, 33, 33, 0x6f2f35a9609c95ebULL},
    {"linspace", TN_DTYPE_FLOAT16, 0.0, 1.0, 0, 1000, 1000, 0x3ed2e78c0b5807efULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.1, 0.3, 0, 1, 1, 0x0ac90707b71e217fULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.1, 0.3, 0, 2, 2, 0x70ada5d84fab8013ULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.1, 0.3, 0, 7, 7, 0x7df7970f7916d4c7ULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.1, 0.3, 0, 31, 31, 0xde0a91a83f0a03e4ULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.1, 0.3, 0, 33, 33, 0x1f5244cffdbb1935ULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.1, 0.3, 0, 1000, 1000, 0x862d45ac2688f4a7ULL},
    {"linspace", TN_DTYPE_BFLOAT16, -3.7, 10.013, 0, 1, 1, 0x08a9ba07b550eb48ULL},
    {"linspace", TN_DTYPE_BFLOAT16, -3.7, 10.013, 0, 2, 2, 0x5736bca4a1835a1bULL},
    {"linspace", TN_DTYPE_BFLOAT16, -3.7, 10.013, 0, 7, 7, 0x0a313253bf33a60eULL},
    {"linspace", TN_DTYPE_BFLOAT16, -3.7, 10.013, 0, 31, 31, 0xb541e31a0b5a15ecULL},
    {"linspace", TN_DTYPE_BFLOAT16, -3.7, 10.013, 0, 33, 33, 0x4bf150250e365c82ULL},
    {"linspace", TN_DTYPE_BFLOAT16, -3.7, 10.013, 0, 1000, 1000, 0xee8821038fe0b70eULL},
    {"linspace", TN_DTYPE_BFLOAT16, 123.456, 0.789, 0, 1, 1, 0x0a7e3407b6de827cULL},
    {"linspace", TN_DTYPE_BFLOAT16, 123.456, 0.789, 0, 2, 2, 0x2cec59209b8520e7ULL},
    {"linspace", TN_DTYPE_BFLOAT16, 123.456, 0.789, 0, 7, 7, 0xa6c51b2f2c92cac0ULL},
    {"linspace", TN_DTYPE_BFLOAT16, 123.456, 0.789, 0, 31, 31, 0x9086e21fe1efc60dULL},
    {"linspace", TN_DTYPE_BFLOAT16, 123.456, 0.789, 0, 33, 33, 0x0d68085c2753e727ULL},
    {"linspace", TN_DTYPE_BFLOAT16, 123.456, 0.789, 0, 1000, 1000, 0x7fbc4ea8ae90a303ULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.0, 1.0, 0, 1, 1, 0x08328807b4eb6fedULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.0, 1.0, 0, 2, 2, 0x4b72477f9c5c2f98ULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.0, 1.0, 0, 7, 7, 0xcc3e2b2db0e53a7aULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.0, 1.0, 0, 31, 31, 0x1a922ad784983f40ULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.0, 1.0, 0, 33, 33, 0x68da86689065e417ULL},
    {"linspace", TN_DTYPE_BFLOAT16, 0.0, 1.0, 0, 1000, 1000, 0x4640d475844bee72ULL},
    {"linspace", TN_DTYPE_INT64, 0.1, 0.3, 0, 1, 1, 0xa8c7f832281a39c5ULL},
    {"linspace", TN_DTYPE_INT64, 0.1, 0.3, 0, 2, 2, 0x88201fb960ff6465ULL},
    {"linspace", TN_DTYPE_INT64, 0.1, 0.3, 0, 7, 7, 0x8ac123d6f7dce585ULL},
    {"linspace", TN_DTYPE_INT64, 0.1, 0.3, 0, 31, 31, 0xe712000d439bb485ULL},
    {"linspace", TN_DTYPE_INT64, 0.1, 0.3, 0, 33, 33, 0x92184cc8715e4dc5ULL},
    {"linspace", TN_DTYPE_INT64, 0.1, 0.3, 0, 1000, 1000, 0x51e78e744621f425ULL},
    {"linspace", TN_DTYPE_INT64, -3.7, 10.013, 0, 1, 1, 0xf5b33f6b1d3bea7fULL},
    {"linspace", TN_DTYPE_INT64, -3.7, 10.013, 0, 2, 2, 0x2732f6778bba0b15ULL},
    {"linspace", TN_DTYPE_INT64, -3.7, 10.013, 0, 7, 7, 0xe9383baed4d0a735ULL},
    {"linspace", TN_DTYPE_INT64, -3.7, 10.013, 0, 31, 31, 0xbe53d7e1d07e9830ULL},
    {"linspace", TN_DTYPE_INT64, -3.7, 10.013, 0, 33, 33, 0xddc99f39a17f2c95ULL},
    {"linspace", TN_DTYPE_INT64, -3.7, 10.013, 0, 1000, 1000, 0xb1da32810d32c256ULL},
    {"linspace", TN_DTYPE_INT64, 123.456, 0.789, 0, 1, 1, 0x8e9e49359761bb1eULL},
    {"linspace", TN_DTYPE_INT64, 123.456, 0.789, 0, 2, 2, 0x1eb2f945a0b1cadeULL},
    {"linspace", TN_DTYPE_INT64, 123.456, 0.789, 0, 7, 7, 0x6f857427ce66e64aULL},
    {"linspace", TN_DTYPE_INT64, 123.456, 0.789, 0, 31, 31, 0x55655d418feabbbaULL},
    {"linspace", TN_DTYPE_INT64, 123.456, 0.789, 0, 33, 33, 0x9c43c52a2608295bULL},
    {"linspace", TN_DTYPE_INT64, 123.456, 0.789, 0, 1000, 1000, 0xffd64fe437e6a465ULL},
    {"linspace", TN_DTYPE_INT64, 0.0, 1.0, 0, 1, 1, 0xa8c7f832281a39c5ULL},
    {"linspace", TN_DTYPE_INT64, 0.0, 1.0, 0, 2, 2, 0x692558b056101a44ULL},
    {"linspace", TN_DTYPE_INT64, 0.0, 1.0, 0, 7, 7, 0x6bc65ccdeced9b64ULL},
    {"linspace", TN_DTYPE_INT64, 0.0, 1.0, 0, 31, 31, 0xc817390438ac6a64ULL},
    {"linspace", TN_DTYPE_INT64, 0.0, 1.0, 0, 33, 33, 0x731d85bf666f03a4ULL},
    {"linspace", TN_DTYPE_INT64, 0.0, 1.0, 0, 1000, 1000, 0x32ecc76b3b32aa04ULL},
    {"linspace", TN_DTYPE_INT32, 0.1, 0.3, 0, 1, 1, 0x4d25767f9dce13f5ULL},
    {"linspace", TN_DTYPE_INT32, 0.1, 0.3, 0, 2, 2, 0xa8c7f832281a39c5ULL},
    {"linspace", TN_DTYPE_INT32, 0.1, 0.3, 0, 7, 7, 0x17d9c15239d081d5ULL},
    {"linspace", TN_DTYPE_INT32, 0.1, 0.3, 0, 31, 31, 0x14d3936f5fbcc155ULL},
    {"linspace", TN_DTYPE_INT32, 0.1, 0.3, 0, 33, 33, 0xb189d2cab7927df5ULL},
    {"linspace", TN_DTYPE_INT32, 0.1, 0.3, 0, 1000, 1000, 0x94eb5aa73e186ba5ULL},
    {"linspace", TN_DTYPE_INT32, -3.7, 10.013, 0, 1, 1, 0x3e39765878c1e873ULL},
    {"linspace", TN_DTYPE_INT32, -3.7, 10.013, 0, 2, 2, 0xe5c1b4d0939a8889ULL},
    {"linspace", TN_DTYPE_INT32, -3.7, 10.013, 0, 7, 7, 0xd111dded0d8e6bd9ULL},
    {"linspace", TN_DTYPE_INT32, -3.7, 10.013, 0, 31, 31, 0xb3cb31f24554ed5cULL},
    {"linspace", TN_DTYPE_INT32, -3.7, 10.013, 0, 33, 33, 0xa493f9a782c0d109ULL},
    {"linspace", TN_DTYPE_INT32, -3.7, 10.013, 0, 1000, 1000, 0x07bcb4e5ce756d3eULL},
    {"linspace", TN_DTYPE_INT32, 123.456, 0.789, 0, 1, 1, 0xebf5c45acfc5103eULL},
    {"linspace", TN_DTYPE_INT32, 123.456, 0.789, 0, 2, 2, 0x8e9e49359761bb1eULL},
    {"linspace", TN_DTYPE_INT32, 123.456, 0.789, 0, 7, 7, 0x60687e9833de215aULL},
    {"linspace", TN_DTYPE_INT32, 123.456, 0.789, 0, 31, 31, 0x4af46e8d712f202aULL},
    {"linspace", TN_DTYPE_INT32, 123.456, 0.789, 0, 33, 33, 0x6c530a13fd18300bULL},
    {"linspace", TN_DTYPE_INT32, 123.456, 0.789, 0, 1000, 1000, 0xdda9a50cd42cf6c5ULL},
    {"linspace", TN_DTYPE_INT32, 0.0, 1.0, 0, 1, 1, 0x4d25767f9dce13f5ULL},
    {"linspace", TN_DTYPE_INT32, 0.0, 1.0, 0, 2, 2, 0x08cd4c29d1e47d34ULL},
    {"linspace", TN_DTYPE_INT32, 0.0, 1.0, 0, 7, 7, 0x77df1549e39ac544ULL},
    {"linspace", TN_DTYPE_INT32, 0.0, 1.0, 0, 31, 31, 0x74d8e767098704c4ULL},
    {"linspace", TN_DTYPE_INT32, 0.0, 1.0, 0, 33, 33, 0x118f26c2615cc164ULL},
    {"linspace", TN_DTYPE_INT32, 0.0, 1.0, 0, 1000, 1000, 0xf4f0ae9ee7e2af14ULL},
    {"linspace", TN_DTYPE_UINT8, 0.1, 0.3, 0, 1, 1, 0xaf63bd4c8601b7dfULL},
    {"linspace", TN_DTYPE_UINT8, 0.1, 0.3, 0, 2, 2, 0x08328807b4eb6fedULL},
    {"linspace", TN_DTYPE_UINT8, 0.1, 0.3, 0, 7, 7, 0x778b1a14b6876aa7ULL},
    {"linspace", TN_DTYPE_UINT8, 0.1, 0.3, 0, 31, 31, 0x425b7b75fa4b0f47ULL},
    {"linspace", TN_DTYPE_UINT8, 0.1, 0.3, 0, 33, 33, 0xcbf7a16bc31f675fULL},
    {"linspace", TN_DTYPE_UINT8, 0.1, 0.3, 0, 1000, 1000, 0x12633b178b17a745ULL},
    {"linspace", TN_DTYPE_UINT8, 123.456, 0.789, 0, 1, 1, 0xaf63f64c860218baULL},
    {"linspace", TN_DTYPE_UINT8, 123.456, 0.789, 0, 2, 2, 0x08f43e07b590040eULL},
    {"linspace", TN_DTYPE_UINT8, 123.456, 0.789, 0, 7, 7, 0x92ea838dc7e0f668ULL},
    {"linspace", TN_DTYPE_UINT8, 123.456, 0.789, 0, 31, 31, 0xfe46e614e69e5080ULL},
    {"linspace", TN_DTYPE_UINT8, 123.456, 0.789, 0, 33, 33, 0x6ef1a12b3f074761ULL},
    {"linspace", TN_DTYPE_UINT8, 123.456, 0.789, 0, 1000, 1000, 0x97bfdec2265f8e15ULL},
    {"linspace", TN_DTYPE_UINT8, 0.0, 1.0, 0, 1, 1, 0xaf63bd4c8601b7dfULL},
    {"linspace", TN_DTYPE_UINT8, 0.0, 1.0, 0, 2, 2, 0x08328707b4eb6e3aULL},
    {"linspace", TN_DTYPE_UINT8, 0.0, 1.0, 0, 7, 7, 0x778b1914b68768f4ULL},
    {"linspace", TN_DTYPE_UINT8, 0.0, 1.0, 0, 31, 31, 0x425b7a75fa4b0d94ULL},
    {"linspace", TN_DTYPE_UINT8, 0.0, 1.0, 0, 33, 33, 0xcbf7a06bc31f65acULL},
    {"linspace", TN_DTYPE_UINT8, 0.0, 1.0, 0, 1000, 1000, 0x12633a178b17a592ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.1, 0.3, 0, 1, 1, 0xf1d17fbbce4c2547ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.1, 0.3, 0, 2, 2, 0x1d8e4f1c331594b5ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.1, 0.3, 0, 7, 7, 0xe6c5cf588873c435ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.1, 0.3, 0, 31, 31, 0xada2dfc11e1d57f5ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.1, 0.3, 0, 33, 33, 0x439b134a56c4fcb3ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.1, 0.3, 0, 1000, 1000, 0x48877cb7a1d4e8baULL},
    {"linspace", TN_DTYPE_COMPLEX64, -3.7, 10.013, 0, 1, 1, 0x088ece81abb3ca30ULL},
    {"linspace", TN_DTYPE_COMPLEX64, -3.7, 10.013, 0, 2, 2, 0xb7973be44b69535bULL},
    {"linspace", TN_DTYPE_COMPLEX64, -3.7, 10.013, 0, 7, 7, 0x5c1278d309a96e7dULL},
    {"linspace", TN_DTYPE_COMPLEX64, -3.7, 10.013, 0, 31, 31, 0x4b1326cff80198f3ULL},
    {"linspace", TN_DTYPE_COMPLEX64, -3.7, 10.013, 0, 33, 33, 0x5c7e68444a4022a8ULL},
    {"linspace", TN_DTYPE_COMPLEX64, -3.7, 10.013, 0, 1000, 1000, 0xcc10111cf8e608f4ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 123.456, 0.789, 0, 1, 1, 0xcdb6f4fb6d2e0883ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 123.456, 0.789, 0, 2, 2, 0x9cfc6ca549aa1561ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 123.456, 0.789, 0, 7, 7, 0xa3aa43f54bd996d8ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 123.456, 0.789, 0, 31, 31, 0xeb32dca1c0ad6c5dULL},
    {"linspace", TN_DTYPE_COMPLEX64, 123.456, 0.789, 0, 33, 33, 0x5e095ad0ca2e8065ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 123.456, 0.789, 0, 1000, 1000, 0x5416c7fe6a9312f4ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.0, 1.0, 0, 1, 1, 0xa8c7f832281a39c5ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.0, 1.0, 0, 2, 2, 0x148b1c14ba625878ULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.0, 1.0, 0, 7, 7, 0xb52577af14a55f2cULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.0, 1.0, 0, 31, 31, 0x885744e2d7124c7eULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.0, 1.0, 0, 33, 33, 0xe74da211a1590b7fULL},
    {"linspace", TN_DTYPE_COMPLEX64, 0.0, 1.0, 0, 1000, 1000, 0x697e7f2d37cb54bfULL},
    {"logspace", TN_DTYPE_FLOAT32, 0.0, 2.0, 10.0, 1, 1, 0x4b72477f9c5c2f98ULL},
    {"logspace", TN_DTYPE_FLOAT32, 0.0, 2.0, 10.0, 7, 7, 0xebfc2dbe4e8f33adULL},
    {"logspace", TN_DTYPE_FLOAT32, 0.0, 2.0, 10.0, 33, 33, 0x3db9e024e1fbc11cULL},
    {"logspace", TN_DTYPE_FLOAT32, 0.0, 2.0, 10.0, 1000, 1000, 0xe4bae1ec925978e7ULL},
    {"logspace", TN_DTYPE_FLOAT32, -1.5, 3.25, 10.0, 1, 1, 0xcd2d64c895fbbc6fULL},
    {"logspace", TN_DTYPE_FLOAT32, -1.5, 3.25, 10.0, 7, 7, 0x6a8bd39194a40697ULL},
    {"logspace", TN_DTYPE_FLOAT32, -1.5, 3.25, 10.0, 33, 33, 0x6b214bac786b097dULL},
    {"logspace", TN_DTYPE_FLOAT32, -1.5, 3.25, 10.0, 1000, 1000, 0xb8468cb2841b1027ULL},
    {"logspace", TN_DTYPE_FLOAT32, 0.5, 3.0, 2.0, 31, 31, 0x9b9d9235ab782867ULL},
    {"logspace", TN_DTYPE_FLOAT64, 0.0, 2.0, 10.0, 1, 1, 0xaab1693229ba1db8ULL},
    {"logspace", TN_DTYPE_FLOAT64, 0.0, 2.0, 10.0, 7, 7, 0x878cc0ae60987b73ULL},
    {"logspace", TN_DTYPE_FLOAT64, 0.0, 2.0, 10.0, 33, 33, 0x4a52bca8977c7349ULL},
    {"logspace", TN_DTYPE_FLOAT64, 0.0, 2.0, 10.0, 1000, 1000, 0xf8db8c03fb13142fULL},
    {"logspace", TN_DTYPE_FLOAT64, -1.5, 3.25, 10.0, 1, 1, 0xbfbcbc444a958316ULL},
    {"logspace", TN_DTYPE_FLOAT64, -1.5, 3.25, 10.0, 7, 7, 0x61307b1a09de724cULL},
    {"logspace", TN_DTYPE_FLOAT64, -1.5, 3.25, 10.0, 33, 33, 0x3291d967e25cbc30ULL},
    {"logspace", TN_DTYPE_FLOAT64, -1.5, 3.25, 10.0, 1000, 1000, 0xbf9277c69cd6a4e8ULL},
    {"logspace", TN_DTYPE_FLOAT64, 0.5, 3.0, 2.0, 31, 31, 0x8bc0e2453b8d3639ULL},
    {"logspace", TN_DTYPE_FLOAT16, 0.0, 2.0, 10.0, 1, 1, 0x08328c07b4eb76b9ULL},
    {"logspace", TN_DTYPE_FLOAT16, 0.0, 2.0, 10.0, 7, 7, 0xa367fbfda2e3df41ULL},
    {"logspace", TN_DTYPE_FLOAT16, 0.0, 2.0, 10.0, 33, 33, 0x28800b7d4b19a786ULL},
    {"logspace", TN_DTYPE_FLOAT16, 0.0, 2.0, 10.0, 1000, 1000, 0x3f086bbcf8cd2547ULL},
    {"logspace", TN_DTYPE_FLOAT16, -1.5, 3.25, 10.0, 1, 1, 0x083ff807b4f6b899ULL},
    {"logspace", TN_DTYPE_FLOAT16, -1.5, 3.25, 10.0, 7, 7, 0x28bfd4f61464864bULL},
    {"logspace", TN_DTYPE_FLOAT16, -1.5, 3.25, 10.0, 33, 33, 0x93c98fef1b9af017ULL},
    {"logspace", TN_DTYPE_FLOAT16, -1.5, 3.25, 10.0, 1000, 1000, 0xa26f2979fba0cd12ULL},
    {"logspace", TN_DTYPE_FLOAT16, 0.5, 3.0, 2.0, 31, 31, 0x111b851088200e38ULL},
    {"logspace", TN_DTYPE_BFLOAT16, 0.0, 2.0, 10.0, 1, 1, 0x09e58907b65d0620ULL},
    {"logspace", TN_DTYPE_BFLOAT16, 0.0, 2.0, 10.0, 7, 7, 0xbd81e8e7d5314701ULL},
    {"logspace", TN_DTYPE_BFLOAT16, 0.0, 2.0, 10.0, 33, 33, 0xf07183cf5f648d12ULL},
    {"logspace", TN_DTYPE_BFLOAT16, 0.0, 2.0, 10.0, 1000, 1000, 0x647b592931437f71ULL},
    {"logspace", TN_DTYPE_BFLOAT16, -1.5, 3.25, 10.0, 1, 1, 0x08398707b4f18ce8ULL},
    {"logspace", TN_DTYPE_BFLOAT16, -1.5, 3.25, 10.0, 7, 7, 0xd47e2f7a9cc10cebULL},
    {"logspace", TN_DTYPE_BFLOAT16, -1.5, 3.25, 10.0, 33, 33, 0x9e31d9b8a7b37eddULL},
    {"logspace", TN_DTYPE_BFLOAT16, -1.5, 3.25, 10.0, 1000, 1000, 0x0a926fdd57270918ULL},
    {"logspace", TN_DTYPE_BFLOAT16, 0.5, 3.0, 2.0, 31, 31, 0x9a79e3d2d84bdc8dULL},
    {"logspace", TN_DTYPE_INT64, 0.0, 2.0, 10.0, 1, 1, 0x89cd31291d2aefa4ULL},
    {"logspace", TN_DTYPE_INT64, 0.0, 2.0, 10.0, 7, 7, 0x39f93db319cdc897ULL},
    {"logspace", TN_DTYPE_INT64, 0.0, 2.0, 10.0, 33, 33, 0x6f4027bb7e60d121ULL},
    {"logspace", TN_DTYPE_INT64, 0.0, 2.0, 10.0, 1000, 1000, 0x16f02ff057abd675ULL},
    {"logspace", TN_DTYPE_INT64, -1.5, 3.25, 10.0, 1, 1, 0xa8c7f832281a39c5ULL},
    {"logspace", TN_DTYPE_INT64, -1.5, 3.25, 10.0, 7, 7, 0x3521f766daff04adULL},
    {"logspace", TN_DTYPE_INT64, -1.5, 3.25, 10.0, 33, 33, 0xe3c2261ff985bb73ULL},
    {"logspace", TN_DTYPE_INT64, -1.5, 3.25, 10.0, 1000, 1000, 0x549cb945574d1c26ULL},
    {"logspace", TN_DTYPE_INT64, 0.5, 3.0, 2.0, 31, 31, 0xf2eaa72d769ea78cULL},
    {"logspace", TN_DTYPE_INT32, 0.0, 2.0, 10.0, 1, 1, 0xad2aca7747985764ULL},
    {"logspace", TN_DTYPE_INT32, 0.0, 2.0, 10.0, 7, 7, 0xa5abbc7f698bb5e7ULL},
    {"logspace", TN_DTYPE_INT32, 0.0, 2.0, 10.0, 33, 33, 0xf1d60be598faec31ULL},
    {"logspace", TN_DTYPE_INT32, 0.0, 2.0, 10.0, 1000, 1000, 0xdd28cb7d93e5dc55ULL},
    {"logspace", TN_DTYPE_INT32, -1.5, 3.25, 10.0, 1, 1, 0x4d25767f9dce13f5ULL},
    {"logspace", TN_DTYPE_INT32, -1.5, 3.25, 10.0, 7, 7, 0xd5006fa207868a6dULL},
    {"logspace", TN_DTYPE_INT32, -1.5, 3.25, 10.0, 33, 33, 0x0ef31aad5aaf97b3ULL},
    {"logspace", TN_DTYPE_INT32, -1.5, 3.25, 10.0, 1000, 1000, 0x05ea1e76de8977a6ULL},
    {"logspace", TN_DTYPE_INT32, 0.5, 3.0, 2.0, 31, 31, 0x9cb868fc15edcddcULL},
    {"range", TN_DTYPE_FLOAT32, 0.0, 1.0, 0.3, 0, 4, 0x76551b46de3597a9ULL},
    {"range", TN_DTYPE_FLOAT32, -2.5, 40.0, 0.7, 0, 61, 0xc0f5542a2a749f70ULL},
    {"range", TN_DTYPE_FLOAT32, 10.0, 0.0, -0.25, 0, 41, 0x65fbb915aa203aa8ULL},
    {"range", TN_DTYPE_FLOAT64, 0.0, 1.0, 0.3, 0, 4, 0xfa49b6556306b2acULL},
    {"range", TN_DTYPE_FLOAT64, -2.5, 40.0, 0.7, 0, 61, 0x04ff0d0943e51a80ULL},
    {"range", TN_DTYPE_FLOAT64, 10.0, 0.0, -0.25, 0, 41, 0x08219bba65354f34ULL},
    {"range", TN_DTYPE_FLOAT16, 0.0, 1.0, 0.3, 0, 4, 0x736ff3fb8f542d97ULL},
    {"range", TN_DTYPE_FLOAT16, -2.5, 40.0, 0.7, 0, 61, 0xd2463092896ccb84ULL},
    {"range", TN_DTYPE_FLOAT16, 10.0, 0.0, -0.25, 0, 41, 0x78f4e6f5fe9fdb30ULL},
    {"range", TN_DTYPE_INT64, 0.0, 100.0, 3, 0, 34, 0xabf18687c560e026ULL},
    {"range", TN_DTYPE_INT64, -7.0, 40.0, 1, 0, 48, 0x54b8c84ead8bf8a2ULL},
    {"range", TN_DTYPE_INT64, 10.0, 0.0, -2, 0, 6, 0x9e04972f19db1067ULL},
};

static void test_sequences(void) {
    tn_set_num_threads(2); /* the reference ran with 2 threads: same chunk split */
    int n = (int)(sizeof seq_cases / sizeof seq_cases[0]);
    for (int i = 0; i < n; i++) {
        const seq_case *c = &seq_cases[i];
        bool integral = tn_dtype_is_integral(c->dtype, false);
        tn_tensor *t = NULL;
        tn_status st;
        if (!strcmp(c->kind, "arange")) {
            tn_value a = integral ? V_I((int64_t)c->a) : V_D(c->a), b = integral ? V_I((int64_t)c->b) : V_D(c->b),
                     s = integral ? V_I((int64_t)c->c) : V_D(c->c);
            t = run(TN_OP_arange_start_step, ARGS(a, b, s, OPTS_DT(c->dtype)), &st);
        } else if (!strcmp(c->kind, "range")) {
            tn_value a = integral ? V_I((int64_t)c->a) : V_D(c->a), b = integral ? V_I((int64_t)c->b) : V_D(c->b),
                     s = integral ? V_I((int64_t)c->c) : V_D(c->c);
            t = run(TN_OP_range_step, ARGS(a, b, s, OPTS_DT(c->dtype)), &st);
        } else if (!strcmp(c->kind, "linspace")) {
            t = run(TN_OP_linspace, ARGS(V_D(c->a), V_D(c->b), V_I(c->steps), OPTS_DT(c->dtype)), &st);
        } else {
            t = run(TN_OP_logspace, ARGS(V_D(c->a), V_D(c->b), V_I(c->steps), V_D(c->c), OPTS_DT(c->dtype)), &st);
        }
        TN_CHECK(t != NULL, "case %d %s failed: %s", i, c->kind, tn_error_message());
        if (!t) continue;
        TN_CHECK(t->dtype == c->dtype && t->ndim == 1 && t->sizes[0] == c->numel, "case %d %s %s: numel %lld expected %lld", i,
                 c->kind, tn_dtype_infos[c->dtype].c10_name, (long long)t->sizes[0], (long long)c->numel);
        if (t->ndim == 1 && t->sizes[0] == c->numel)
            TN_CHECK(hash_t(t) == c->fnv, "case %d %s %s (%g, %g, %g, n=%lld): values differ from upstream", i, c->kind,
                     tn_dtype_infos[c->dtype].c10_name, c->a, c->b, c->c, (long long)c->numel);
        tn_tensor_release(t);
    }
}

/* arange/range/linspace inference, sizes, out= and errors (values from upstream). */
static void test_sequence_rules(void) {
    tn_tensor *t;
    t = ok(TN_OP_arange, ARGS(V_I(5), OPTS_NONE));
    TN_CHECK(t && t->dtype == TN_DTYPE_INT64 && SIZES(t, 5), "arange(5) is int64 [5]");
    tn_tensor_release(t);
    t = ok(TN_OP_arange, ARGS(V_D(5.0), OPTS_NONE));
    TN_CHECK(t && t->dtype == TN_DTYPE_FLOAT32 && SIZES(t, 5), "arange(5.) is float32");
    tn_tensor_release(t);
    t = ok(TN_OP_arange, ARGS(V_B(true), OPTS_NONE));
    TN_CHECK(t && t->dtype == TN_DTYPE_INT64 && SIZES(t, 1), "arange(True) is int64 [1]");
    tn_tensor_release(t);
    /* int64: the end is truncated first (5.5 -> 5 elements); int32: ceil in double (6) */
    t = ok(TN_OP_arange_start_step, ARGS(V_I(0), V_D(5.5), V_I(1), OPTS_DT(TN_DTYPE_INT64)));
    TN_CHECK(t && SIZES(t, 5), "arange(0, 5.5, int64) has 5 elements");
    tn_tensor_release(t);
    t = ok(TN_OP_arange_start_step, ARGS(V_D(-1.5), V_D(5.5), V_I(1), OPTS_DT(TN_DTYPE_INT64)));
    TN_CHECK(t && SIZES(t, 6) && ((int64_t *)tn_tensor_data(t))[0] == -1, "arange(-1.5, 5.5, int64) = [-1..4]");
    tn_tensor_release(t);
    t = ok(TN_OP_arange_start_step, ARGS(V_I(0), V_D(5.5), V_I(1), OPTS_DT(TN_DTYPE_INT32)));
    TN_CHECK(t && SIZES(t, 6), "arange(0, 5.5, int32) has 6 elements");
    tn_tensor_release(t);
    t = ok(TN_OP_arange_start_step, ARGS(V_I(10), V_I(0), V_I(-3), OPTS_NONE));
    TN_CHECK(t && SIZES(t, 4) && ((int64_t *)tn_tensor_data(t))[3] == 1, "arange(10, 0, -3) = [10, 7, 4, 1]");
    tn_tensor_release(t);
    t = ok(TN_OP_arange_start_step, ARGS(V_I(0), V_I(1000000), V_I(1), OPTS_META));
    TN_CHECK(t && tn_tensor_is_meta(t) && SIZES(t, 1000000) && t->storage->data == NULL, "meta arange has shape only");
    tn_tensor_release(t);

    fails(TN_OP_arange_start_step, ARGS(V_I(0), V_I(10), V_I(0), OPTS_NONE), TN_ERR_RUNTIME, "step must be nonzero");
    fails(TN_OP_arange_start_step, ARGS(V_D(0), V_D(0.1), V_D(0.3), OPTS_DT(TN_DTYPE_INT64)), TN_ERR_VALUE, "step must be nonzero");
    fails(TN_OP_arange_start_step, ARGS(V_I(0), V_I(10), V_I(-1), OPTS_NONE), TN_ERR_RUNTIME,
          "upper bound and lower bound inconsistent with step sign");
    fails(TN_OP_arange_start, ARGS(V_I(0), V_D(INFINITY), OPTS_NONE), TN_ERR_RUNTIME, "unsupported range: 0 -> inf");
    fails(TN_OP_arange_start, ARGS(V_D(0.5), V_D(NAN), OPTS_NONE), TN_ERR_RUNTIME, "unsupported range: 0.5 -> nan");
    fails(TN_OP_arange_start_step, ARGS(V_I(0), V_D(1e30), V_D(1e-30), OPTS_NONE), TN_ERR_RUNTIME, "invalid size, possible overflow?");
    fails(TN_OP_arange_start, ARGS(V_I(0), V_I(3), OPTS_DT(TN_DTYPE_BOOL)), TN_ERR_NOT_IMPLEMENTED,
          "\"arange_cpu\" not implemented for 'Bool'");
    fails(TN_OP_arange_start, ARGS(V_I(0), V_I(3), OPTS_DT(TN_DTYPE_COMPLEX64)), TN_ERR_NOT_IMPLEMENTED,
          "\"arange_cpu\" not implemented for 'ComplexFloat'");
    fails(TN_OP_arange, ARGS(V_C(0, 1), OPTS_NONE), TN_ERR_RUNTIME, "value cannot be converted to type double without overflow");
    fails(TN_OP_arange_start, ARGS(V_I(0), V_I(3), V_N(), V_LAY(1), V_N(), V_N()), TN_ERR_NOT_IMPLEMENTED, "layout torch.sparse_coo");
    fails(TN_OP_arange_start, ARGS(V_I(0), V_I(3), V_N(), V_N(), V_N(), V_B(true)), TN_ERR_RUNTIME,
          "pin_memory=True requires a CUDA or other accelerator backend");

    /* arange.out computes in out's dtype and resizes out */
    int64_t one = 1;
    tn_tensor *out;
    tn_tensor_empty(1, &one, TN_DTYPE_FLOAT64, tn_device_cpu(), &out);
    t = ok(TN_OP_arange_start_out, ARGS(V_I(0), V_I(5), V_D(0.5), V_T(out)));
    TN_CHECK(t == out && SIZES(out, 10) && ((double *)tn_tensor_data(out))[9] == 4.5, "arange.out into float64");
    if (t) tn_tensor_release(t);
    tn_tensor_release(out);

    /* range: inclusive, default float dtype */
    t = ok(TN_OP_range, ARGS(V_I(0), V_I(5), OPTS_NONE));
    TN_CHECK(t && t->dtype == TN_DTYPE_FLOAT32 && SIZES(t, 6) && ((float *)tn_tensor_data(t))[5] == 5.0f, "range(0, 5)");
    tn_tensor_release(t);
    fails(TN_OP_range_step, ARGS(V_I(0), V_I(5), V_I(0), OPTS_NONE), TN_ERR_RUNTIME, "step must be nonzero");
    fails(TN_OP_range_step, ARGS(V_I(5), V_I(0), V_I(1), OPTS_NONE), TN_ERR_RUNTIME,
          "upper bound and lower bound inconsistent with step sign");

    /* linspace: default dtype, complex inference, 0/1 steps, Tensor endpoints */
    t = ok(TN_OP_linspace, ARGS(V_I(0), V_I(10), V_I(5), OPTS_NONE));
    TN_CHECK(t && t->dtype == TN_DTYPE_FLOAT32 && SIZES(t, 5), "linspace(0, 10, 5) is float32");
    tn_tensor_release(t);
    t = ok(TN_OP_linspace, ARGS(V_I(0), V_C(1, 1), V_I(3), OPTS_NONE));
    TN_CHECK(t && t->dtype == TN_DTYPE_COMPLEX64 && ((float *)tn_tensor_data(t))[3] == 0.5f, "complex linspace");
    tn_tensor_release(t);
    t = ok(TN_OP_linspace, ARGS(V_I(3), V_I(1), V_I(1), OPTS_NONE));
    TN_CHECK(t && SIZES(t, 1) && ((float *)tn_tensor_data(t))[0] == 3.0f, "linspace(3, 1, 1) = [3]");
    tn_tensor_release(t);
    t = ok(TN_OP_linspace, ARGS(V_I(0), V_I(1), V_I(0), OPTS_NONE));
    TN_CHECK(t && SIZES(t, 0), "linspace steps=0 is empty");
    tn_tensor_release(t);
    fails(TN_OP_linspace, ARGS(V_I(0), V_I(1), V_I(-1), OPTS_NONE), TN_ERR_RUNTIME, "number of steps must be non-negative");
    fails(TN_OP_linspace, ARGS(V_I(0), V_I(10), V_I(5), OPTS_DT(TN_DTYPE_BOOL)), TN_ERR_NOT_IMPLEMENTED,
          "\"linspace_cpu\" not implemented for 'Bool'");
    int64_t two = 2;
    tn_tensor *vec;
    tn_tensor_zeros(1, &two, TN_DTYPE_FLOAT32, tn_device_cpu(), &vec);
    fails(TN_OP_linspace_Tensor_Scalar, ARGS(V_T(vec), V_I(1), V_I(3), OPTS_NONE), TN_ERR_RUNTIME,
          "linspace only supports 0-dimensional start and end tensors, but got start with 1 dimension(s).");
    tn_tensor_release(vec);
    tn_tensor *s0, *e0;
    tn_tensor_zeros(0, NULL, TN_DTYPE_FLOAT32, tn_device_cpu(), &s0);
    tn_tensor_zeros(0, NULL, TN_DTYPE_INT32, tn_device_cpu(), &e0);
    *(int32_t *)tn_tensor_data(e0) = 1;
    t = ok(TN_OP_linspace_Tensor_Tensor, ARGS(V_T(s0), V_T(e0), V_I(3), OPTS_NONE));
    TN_CHECK(t && t->dtype == TN_DTYPE_FLOAT32 && ((float *)tn_tensor_data(t))[1] == 0.5f, "linspace of 0-dim tensors");
    tn_tensor_release(t);
    tn_tensor_release(s0);
    tn_tensor_release(e0);
    t = ok(TN_OP_logspace, ARGS(V_I(0), V_I(2), V_I(1), V_D(10), OPTS_NONE));
    TN_CHECK(t && ((float *)tn_tensor_data(t))[0] == 1.0f, "logspace steps=1 is base**start");
    tn_tensor_release(t);
}

static void check_i64(const tn_tensor *t, const int64_t *want, int64_t n, const char *what) {
    bool same = t && tn_tensor_numel(t) == n && memcmp(tn_tensor_data(t), want, sizeof(int64_t) * (size_t)n) == 0;
    TN_CHECK(same, "%s values differ", what);
}

static void test_factories(void) {
    tn_tensor *t;
    /* empty: memory formats (strides printed by upstream) */
    t = ok(TN_OP_empty_memory_format, ARGS(L(2, 3, 4, 5), OPTS_NONE, V_MF(2)));
    TN_CHECK(t && t->dtype == TN_DTYPE_FLOAT32 && STRIDES(t, 60, 1, 15, 3), "channels_last strides");
    tn_tensor_release(t);
    t = ok(TN_OP_empty_memory_format, ARGS(L(2, 0, 3, 4), OPTS_NONE, V_MF(2)));
    TN_CHECK(STRIDES(t, 0, 1, 0, 0), "channels_last strides with a 0 size");
    tn_tensor_release(t);
    t = ok(TN_OP_empty_memory_format, ARGS(L(2, 1, 3, 1), OPTS_NONE, V_MF(2)));
    TN_CHECK(STRIDES(t, 3, 1, 1, 1), "channels_last strides with 1 sizes");
    tn_tensor_release(t);
    t = ok(TN_OP_empty_memory_format, ARGS(L(2, 3, 4, 5, 6), OPTS_NONE, V_MF(3)));
    TN_CHECK(STRIDES(t, 360, 1, 90, 18, 3), "channels_last_3d strides");
    tn_tensor_release(t);
    fails(TN_OP_empty_memory_format, ARGS(L(2, 3, 4), OPTS_NONE, V_MF(2)), TN_ERR_RUNTIME,
          "required rank 4 tensor to use channels_last format");
    fails(TN_OP_empty_memory_format, ARGS(L(2, 3, 4, 5), OPTS_NONE, V_MF(3)), TN_ERR_RUNTIME,
          "required rank 5 tensor to use channels_last_3d format");
    fails(TN_OP_empty_memory_format, ARGS(L(2, 3, 4, 5), OPTS_NONE, V_MF(1)), TN_ERR_RUNTIME, "unsupported memory format Preserve");
    fails(TN_OP_empty_memory_format, ARGS(L(-1, 2), OPTS_NONE, V_N()), TN_ERR_RUNTIME,
          "Trying to create tensor with negative dimension -1: [-1, 2]");
    fails(TN_OP_zeros, ARGS(L(2, -3), OPTS_NONE), TN_ERR_RUNTIME, "zeros: Dimension size must be non-negative.");
    fails(TN_OP_zeros, ARGS(L(2, -1), OPTS_META), TN_ERR_RUNTIME, "Trying to create tensor with negative dimension -1: [2, -1]");
    fails(TN_OP_ones, ARGS(L(2, -1), OPTS_DT(TN_DTYPE_INT32)), TN_ERR_RUNTIME,
          "Trying to create tensor with negative dimension -1: [2, -1]");

    /* empty_strided */
    t = ok(TN_OP_empty_strided, ARGS(L(2, 3), L(1, 2), OPTS_NONE));
    TN_CHECK(STRIDES(t, 1, 2) && t->storage->nbytes == 24, "empty_strided geometry and storage");
    tn_tensor_release(t);
    t = ok(TN_OP_empty_strided, ARGS(L(2, 3), L(0, 0), OPTS_NONE));
    TN_CHECK(t && t->storage->nbytes == 4, "empty_strided with zero strides holds one element");
    tn_tensor_release(t);
    fails(TN_OP_empty_strided, ARGS(L(2, 3), L(1), OPTS_NONE), TN_ERR_RUNTIME,
          "dimensionality of sizes (2) must match dimensionality of strides (1)");
    fails(TN_OP_empty_strided, ARGS(L(2, 3), L(-1, 2), OPTS_NONE), TN_ERR_RUNTIME,
          "Storage size calculation overflowed with sizes=[2, 3] and strides=[-1, 2]");

    /* zeros / ones / full values across sizes that cross vector widths */
    static const int64_t ns[] = {1, 7, 31, 33, 1000, 1025};
    for (int k = 0; k < 6; k++) {
        t = ok(TN_OP_ones, ARGS(V_L(&ns[k], 1), OPTS_DT(TN_DTYPE_BFLOAT16)));
        bool good = t != NULL;
        for (int64_t i = 0; good && i < ns[k]; i++) good = ((uint16_t *)tn_tensor_data(t))[i] == 0x3F80;
        TN_CHECK(good, "ones bf16 n=%lld", (long long)ns[k]);
        tn_tensor_release(t);
        t = ok(TN_OP_zeros, ARGS(V_L(&ns[k], 1), OPTS_NONE));
        good = t != NULL;
        for (int64_t i = 0; good && i < ns[k]; i++) good = ((float *)tn_tensor_data(t))[i] == 0.0f;
        TN_CHECK(good, "zeros n=%lld", (long long)ns[k]);
        tn_tensor_release(t);
        t = ok(TN_OP_full, ARGS(V_L(&ns[k], 1), V_D(2.7), OPTS_DT(TN_DTYPE_INT16)));
        good = t != NULL;
        for (int64_t i = 0; good && i < ns[k]; i++) good = ((int16_t *)tn_tensor_data(t))[i] == 2;
        TN_CHECK(good, "full int16 2.7 -> 2, n=%lld", (long long)ns[k]);
        tn_tensor_release(t);
    }
    /* full: dtype from the fill value */
    struct { tn_value v; tn_dtype want; } inf[] = {{V_B(true), TN_DTYPE_BOOL}, {V_I(3), TN_DTYPE_INT64},
                                                   {V_D(2.5), TN_DTYPE_FLOAT32}, {V_C(1, 2), TN_DTYPE_COMPLEX64}};
    for (int k = 0; k < 4; k++) {
        t = ok(TN_OP_full, ARGS(L(2), inf[k].v, OPTS_NONE));
        TN_CHECK(t && t->dtype == inf[k].want, "full dtype inference %d", k);
        if (t) tn_tensor_release(t);
    }
    tn_set_default_dtype(TN_DTYPE_FLOAT64);
    t = ok(TN_OP_full, ARGS(L(2), V_C(0, 1), OPTS_NONE));
    TN_CHECK(t && t->dtype == TN_DTYPE_COMPLEX128, "complex fill under float64 default is complex128");
    tn_tensor_release(t);
    tn_set_default_dtype(TN_DTYPE_FLOAT32);
    /* checked conversions (upstream's messages, including its type names) */
    fails(TN_OP_full, ARGS(L(2), V_I(300), OPTS_DT(TN_DTYPE_UINT8)), TN_ERR_RUNTIME,
          "value cannot be converted to type uint8_t without overflow");
    fails(TN_OP_full, ARGS(L(2), V_D(1e10), OPTS_DT(TN_DTYPE_INT32)), TN_ERR_RUNTIME,
          "value cannot be converted to type int without overflow");
    fails(TN_OP_full, ARGS(L(2), V_D(NAN), OPTS_DT(TN_DTYPE_INT32)), TN_ERR_RUNTIME,
          "value cannot be converted to type int without overflow");
    fails(TN_OP_full, ARGS(L(2), V_C(1, 1), OPTS_DT(TN_DTYPE_FLOAT32)), TN_ERR_RUNTIME,
          "value cannot be converted to type float without overflow");
    fails(TN_OP_full, ARGS(L(2), V_D(1e300), OPTS_DT(TN_DTYPE_FLOAT32)), TN_ERR_RUNTIME,
          "value cannot be converted to type float without overflow");
    fails(TN_OP_full, ARGS(L(2), V_C(1, 1), OPTS_DT(TN_DTYPE_FLOAT16)), TN_ERR_RUNTIME,
          "value cannot be converted to type c10::Half without overflow");
    fails(TN_OP_full, ARGS(L(2), V_D(1e300), OPTS_DT(TN_DTYPE_COMPLEX64)), TN_ERR_RUNTIME,
          "value cannot be converted to type c10::complex<float> without overflow");
    fails(TN_OP_full, ARGS(L(2), V_I(-256), OPTS_DT(TN_DTYPE_UINT8)), TN_ERR_RUNTIME,
          "value cannot be converted to type uint8_t without overflow");
    t = ok(TN_OP_full, ARGS(L(2), V_I(-255), OPTS_DT(TN_DTYPE_UINT8)));
    TN_CHECK(t && ((uint8_t *)tn_tensor_data(t))[1] == 1, "uint8 accepts -255 (wraps to 1)");
    tn_tensor_release(t);
    /* Half and BFloat16 are checked as float is (upstream 2.13's fill kernel:
     * Scalar::to<c10::Half>); inf itself converts. One element takes upstream's scalar_fill
     * fast path instead, through double then float: a value beyond the type becomes inf
     * (session 29, measured against upstream) */
    fails(TN_OP_full, ARGS(L(2), V_D(1e300), OPTS_DT(TN_DTYPE_FLOAT16)), TN_ERR_RUNTIME,
          "value cannot be converted to type c10::Half without overflow");
    fails(TN_OP_full, ARGS(L(2), V_D(65520.0), OPTS_DT(TN_DTYPE_FLOAT16)), TN_ERR_RUNTIME,
          "value cannot be converted to type c10::Half without overflow");
    fails(TN_OP_full, ARGS(L(2), V_D(1e39), OPTS_DT(TN_DTYPE_BFLOAT16)), TN_ERR_RUNTIME,
          "value cannot be converted to type c10::BFloat16 without overflow");
    t = ok(TN_OP_full, ARGS(L(1), V_D(1e300), OPTS_DT(TN_DTYPE_FLOAT16)));
    TN_CHECK(t && ((uint16_t *)tn_tensor_data(t))[0] == 0x7C00, "one-element half fill of 1e300 is inf");
    tn_tensor_release(t);
    t = ok(TN_OP_full, ARGS(L(1), V_D(-1e39), OPTS_DT(TN_DTYPE_BFLOAT16)));
    TN_CHECK(t && ((uint16_t *)tn_tensor_data(t))[0] == 0xFF80, "one-element bf16 fill of -1e39 is -inf");
    tn_tensor_release(t);
    fails(TN_OP_full, ARGS(L(1), V_C(1, 1), OPTS_DT(TN_DTYPE_FLOAT16)), TN_ERR_RUNTIME,
          "value cannot be converted to type double without overflow");
    t = ok(TN_OP_full, ARGS(L(1), V_D(INFINITY), OPTS_DT(TN_DTYPE_FLOAT16)));
    TN_CHECK(t && ((uint16_t *)tn_tensor_data(t))[0] == 0x7C00, "half fill of inf is inf, no error");
    tn_tensor_release(t);
    t = ok(TN_OP_full, ARGS(L(1), V_D(1e5), OPTS_DT(TN_DTYPE_BFLOAT16)));
    TN_CHECK(t && tn_bf16_to_f32(((uint16_t *)tn_tensor_data(t))[0]) == 99840.0f, "bf16 fill rounds (99840)");
    tn_tensor_release(t);
    t = ok(TN_OP_full, ARGS(L(1), V_D(1e300), OPTS_DT(TN_DTYPE_BOOL)));
    TN_CHECK(t && ((uint8_t *)tn_tensor_data(t))[0] == 1, "bool fill never overflows");
    tn_tensor_release(t);

    /* scalar_tensor: default float dtype, not inferred */
    t = ok(TN_OP_scalar_tensor, ARGS(V_I(3), OPTS_NONE));
    TN_CHECK(t && t->ndim == 0 && t->dtype == TN_DTYPE_FLOAT32 && *(float *)tn_tensor_data(t) == 3.0f, "scalar_tensor(3)");
    tn_tensor_release(t);
    t = ok(TN_OP_scalar_tensor, ARGS(V_I(-1), OPTS_DT(TN_DTYPE_UINT8)));
    TN_CHECK(t && *(uint8_t *)tn_tensor_data(t) == 255, "scalar_tensor(-1, uint8) = 255");
    tn_tensor_release(t);

    /* meta device: shapes only */
    t = ok(TN_OP_full, ARGS(L(3, 1000), V_D(1.5), OPTS_META));
    TN_CHECK(t && tn_tensor_is_meta(t) && SIZES(t, 3, 1000) && t->storage->data == NULL, "meta full");
    tn_tensor_release(t);
    t = ok(TN_OP_eye_m, ARGS(V_I(3), V_I(2), V_DT(TN_DTYPE_INT8), V_N(), V_DEV(TN_DEVICE_META), V_N()));
    TN_CHECK(t && tn_tensor_is_meta(t) && SIZES(t, 3, 2) && t->dtype == TN_DTYPE_INT8, "meta eye");
    tn_tensor_release(t);

    /* eye */
    t = ok(TN_OP_eye_m, ARGS(V_I(2), V_I(3), OPTS_NONE));
    float want_eye[6] = {1, 0, 0, 0, 1, 0};
    TN_CHECK(t && memcmp(tn_tensor_data(t), want_eye, sizeof want_eye) == 0, "eye(2, 3)");
    tn_tensor_release(t);
    t = ok(TN_OP_eye, ARGS(V_I(0), OPTS_NONE));
    TN_CHECK(SIZES(t, 0, 0), "eye(0) is [0, 0]");
    tn_tensor_release(t);
    fails(TN_OP_eye, ARGS(V_I(-1), OPTS_NONE), TN_ERR_RUNTIME, "n must be greater or equal to 0, got -1");
    fails(TN_OP_eye_m, ARGS(V_I(3), V_I(-1), OPTS_NONE), TN_ERR_RUNTIME, "m must be greater or equal to 0, got -1");

    /* tril / triu indices (upstream's output) */
    t = ok(TN_OP_tril_indices, ARGS(V_I(4), V_I(3), V_I(0), OPTS_DT(TN_DTYPE_INT64)));
    check_i64(t, (const int64_t[]){0, 1, 1, 2, 2, 2, 3, 3, 3, 0, 0, 1, 0, 1, 2, 0, 1, 2}, 18, "tril_indices(4, 3)");
    tn_tensor_release(t);
    t = ok(TN_OP_tril_indices, ARGS(V_I(4), V_I(3), V_I(-1), OPTS_DT(TN_DTYPE_INT64)));
    check_i64(t, (const int64_t[]){1, 2, 2, 3, 3, 3, 0, 0, 1, 0, 1, 2}, 12, "tril_indices(4, 3, -1)");
    tn_tensor_release(t);
    t = ok(TN_OP_triu_indices, ARGS(V_I(4), V_I(3), V_I(1), OPTS_DT(TN_DTYPE_INT64)));
    check_i64(t, (const int64_t[]){0, 0, 1, 1, 2, 2}, 6, "triu_indices(4, 3, 1)");
    tn_tensor_release(t);
    t = ok(TN_OP_triu_indices, ARGS(V_I(3), V_I(4), V_I(-10), OPTS_DT(TN_DTYPE_INT64)));
    TN_CHECK(SIZES(t, 2, 12), "triu_indices(3, 4, -10) has every position");
    tn_tensor_release(t);
    t = ok(TN_OP_tril_indices, ARGS(V_I(0), V_I(3), V_I(0), OPTS_DT(TN_DTYPE_INT64)));
    TN_CHECK(SIZES(t, 2, 0), "tril_indices(0, 3) is [2, 0]");
    tn_tensor_release(t);
    fails(TN_OP_tril_indices, ARGS(V_I(-1), V_I(3), V_I(0), OPTS_DT(TN_DTYPE_INT64)), TN_ERR_RUNTIME,
          "row must be non-negative, got-1");
    fails(TN_OP_tril_indices, ARGS(V_I(3), V_I(3), V_I(0), OPTS_DT(TN_DTYPE_FLOAT32)), TN_ERR_NOT_IMPLEMENTED,
          "\"tril_indices\" not implemented for 'Float'");
}

static void test_like_and_new(void) {
    int64_t sz[2] = {3, 4};
    tn_tensor *base, *t;
    tn_tensor_zeros(2, sz, TN_DTYPE_INT32, tn_device_cpu(), &base);
    /* transposed: dense, so the strides are kept */
    tn_tensor *tr = tn_tensor_new_view(base->storage, 0, 2, (int64_t[]){4, 3}, (int64_t[]){1, 4}, TN_DTYPE_INT32);
    t = ok(TN_OP_empty_like, ARGS(V_T(tr), OPTS_NONE, V_N()));
    TN_CHECK(STRIDES(t, 1, 4) && t->dtype == TN_DTYPE_INT32, "empty_like keeps dense strides");
    tn_tensor_release(t);
    t = ok(TN_OP_zeros_like, ARGS(V_T(tr), OPTS_NONE, V_MF(0)));
    TN_CHECK(STRIDES(t, 3, 1), "zeros_like contiguous_format");
    tn_tensor_release(t);
    /* every other column: not dense, so contiguous */
    tn_tensor *sl = tn_tensor_new_view(base->storage, 0, 2, (int64_t[]){3, 2}, (int64_t[]){4, 2}, TN_DTYPE_INT32);
    t = ok(TN_OP_ones_like, ARGS(V_T(sl), OPTS_DT(TN_DTYPE_FLOAT64), V_N()));
    TN_CHECK(STRIDES(t, 2, 1) && t->dtype == TN_DTYPE_FLOAT64 && ((double *)tn_tensor_data(t))[5] == 1.0, "ones_like of a slice");
    tn_tensor_release(t);
    t = ok(TN_OP_full_like, ARGS(V_T(tr), V_D(2.7), OPTS_NONE, V_N()));
    TN_CHECK(t && t->dtype == TN_DTYPE_INT32 && ((int32_t *)tn_tensor_data(t))[11] == 2, "full_like keeps self's dtype");
    tn_tensor_release(t);
    fails(TN_OP_full_like, ARGS(V_T(tr), V_D(1e10), OPTS_NONE, V_N()), TN_ERR_RUNTIME,
          "value cannot be converted to type int without overflow");
    t = ok(TN_OP_empty_like, ARGS(V_T(tr), OPTS_META, V_N()));
    TN_CHECK(t && tn_tensor_is_meta(t) && STRIDES(t, 1, 4), "empty_like to meta");
    tn_tensor_release(t);
    /* channels-last-like but not dense (a slice of the batch dim of an NHWC buffer) */
    int64_t big = 2 * 3 * 4 * 5 * 2;
    tn_tensor *flat;
    tn_tensor_empty(1, &big, TN_DTYPE_FLOAT32, tn_device_cpu(), &flat);
    tn_tensor *cl = tn_tensor_new_view(flat->storage, 0, 4, (int64_t[]){2, 3, 4, 5}, (int64_t[]){120, 1, 15, 3}, TN_DTYPE_FLOAT32);
    t = ok(TN_OP_empty_like, ARGS(V_T(cl), OPTS_NONE, V_N()));
    TN_CHECK(STRIDES(t, 60, 1, 15, 3), "empty_like of a non-dense channels-last tensor is channels_last");
    tn_tensor_release(t);
    tn_tensor_release(cl);
    tn_tensor_release(flat);

    /* new_*: dtype and device from self; no inference from the fill value */
    t = ok(TN_OP_new_full, ARGS(V_T(base), L(2), V_D(2.5), OPTS_NONE));
    TN_CHECK(t && t->dtype == TN_DTYPE_INT32 && ((int32_t *)tn_tensor_data(t))[1] == 2, "new_full(int32, 2.5) = 2");
    tn_tensor_release(t);
    t = ok(TN_OP_new_ones, ARGS(V_T(base), L(2, 2), OPTS_DT(TN_DTYPE_BOOL)));
    TN_CHECK(t && t->dtype == TN_DTYPE_BOOL && ((uint8_t *)tn_tensor_data(t))[3] == 1, "new_ones bool");
    tn_tensor_release(t);
    t = ok(TN_OP_new_zeros, ARGS(V_T(base), L(33), OPTS_NONE));
    TN_CHECK(t && SIZES(t, 33) && ((int32_t *)tn_tensor_data(t))[32] == 0, "new_zeros");
    tn_tensor_release(t);
    t = ok(TN_OP_new_empty_strided, ARGS(V_T(base), L(2, 3), L(1, 2), OPTS_NONE));
    TN_CHECK(STRIDES(t, 1, 2) && t->dtype == TN_DTYPE_INT32, "new_empty_strided");
    tn_tensor_release(t);
    t = ok(TN_OP_new_empty, ARGS(V_T(base), L(5), OPTS_META));
    TN_CHECK(t && tn_tensor_is_meta(t) && t->dtype == TN_DTYPE_INT32, "new_empty on meta");
    tn_tensor_release(t);

    /* out= forms */
    int64_t one = 1;
    tn_tensor *out;
    tn_tensor_empty(1, &one, TN_DTYPE_INT16, tn_device_cpu(), &out);
    t = ok(TN_OP_zeros_out, ARGS(L(2, 3), V_T(out)));
    TN_CHECK(t == out && SIZES(out, 2, 3) && out->dtype == TN_DTYPE_INT16, "zeros.out resizes out");
    if (t) tn_tensor_release(t);
    t = ok(TN_OP_full_like_out, ARGS(V_T(tr), V_I(7), V_N(), V_T(out)));
    TN_CHECK(t == out && SIZES(out, 4, 3) && ((int16_t *)tn_tensor_data(out))[11] == 7, "full_like.out");
    if (t) tn_tensor_release(t);
    t = ok(TN_OP_eye_m_out, ARGS(V_I(2), V_I(2), V_T(out)));
    TN_CHECK(t == out && ((int16_t *)tn_tensor_data(out))[3] == 1 && ((int16_t *)tn_tensor_data(out))[1] == 0, "eye.m_out");
    if (t) tn_tensor_release(t);
    tn_tensor_release(out);

    tn_tensor_release(tr);
    tn_tensor_release(sl);
    tn_tensor_release(base);
}

static void test_complex_polar(void) {
    int64_t two = 2, three = 3;
    tn_tensor *a, *b, *t;
    tn_tensor_empty(2, (int64_t[]){2, 1}, TN_DTYPE_FLOAT32, tn_device_cpu(), &a);
    tn_tensor_empty(1, &three, TN_DTYPE_FLOAT32, tn_device_cpu(), &b);
    float *pa = tn_tensor_data(a), *pb = tn_tensor_data(b);
    pa[0] = 1; pa[1] = 2; pb[0] = 0.5f; pb[1] = 3; pb[2] = -1;
    t = ok(TN_OP_complex, ARGS(V_T(a), V_T(b)));
    TN_CHECK(t && t->dtype == TN_DTYPE_COMPLEX64 && SIZES(t, 2, 3), "complex broadcasts to [2, 3]");
    if (t) {
        float *o = tn_tensor_data(t);
        TN_CHECK(o[0] == 1 && o[1] == 0.5f && o[10] == 2 && o[11] == -1, "complex parts");
        tn_tensor_release(t);
    }
    t = ok(TN_OP_polar, ARGS(V_T(a), V_T(b)));
    if (t) {
        float *o = tn_tensor_data(t);
        TN_CHECK(o[2] == 1 * cosf(3) && o[3] == 1 * sinf(3) && o[8] == 2 * cosf(3), "polar values");
        tn_tensor_release(t);
    }
    tn_tensor *d, *i32;
    tn_tensor_empty(1, &two, TN_DTYPE_FLOAT64, tn_device_cpu(), &d);
    tn_tensor_empty(1, &two, TN_DTYPE_INT32, tn_device_cpu(), &i32);
    fails(TN_OP_complex, ARGS(V_T(b), V_T(d)), TN_ERR_RUNTIME,
          "Expected object of scalar type Float but got scalar type Double for second argument");
    fails(TN_OP_complex, ARGS(V_T(i32), V_T(i32)), TN_ERR_RUNTIME,
          "Expected both inputs to be Half, Float or Double tensors but got Int and Int");
    tn_tensor_release(d);
    tn_tensor_release(i32);
    tn_tensor_release(a);
    tn_tensor_release(b);
}

static void test_inplace_geometry(void) {
    int64_t n = 6;
    tn_tensor *t, *r;
    tn_tensor_zeros(1, &n, TN_DTYPE_FLOAT32, tn_device_cpu(), &t);
    r = ok(TN_OP_resize_, ARGS(V_T(t), L(2, 3), V_N()));
    TN_CHECK(r == t && SIZES(t, 2, 3) && STRIDES(t, 3, 1), "resize_ to [2, 3]");
    if (r) tn_tensor_release(r);
    r = ok(TN_OP_resize_, ARGS(V_T(t), L(10, 100), V_N()));
    TN_CHECK(r == t && t->storage->nbytes >= 4000, "resize_ grows storage");
    if (r) tn_tensor_release(r);
    r = ok(TN_OP_resize_, ARGS(V_T(t), L(2, 3, 4, 5), V_MF(2)));
    TN_CHECK(STRIDES(t, 60, 1, 15, 3), "resize_ channels_last");
    if (r) tn_tensor_release(r);
    fails(TN_OP_resize_, ARGS(V_T(t), L(-1), V_N()), TN_ERR_RUNTIME, "Trying to create tensor with negative dimension -1: [-1]");
    /* same sizes, no format: strides untouched */
    t->strides[0] = 1; t->strides[1] = 2; t->ndim = 2; t->sizes[0] = 2; t->sizes[1] = 3;
    r = ok(TN_OP_resize_, ARGS(V_T(t), L(2, 3), V_N()));
    TN_CHECK(STRIDES(t, 1, 2), "resize_ to the same sizes keeps strides");
    if (r) tn_tensor_release(r);
    tn_tensor *tpl;
    tn_tensor_empty(3, (int64_t[]){4, 1, 2}, TN_DTYPE_INT8, tn_device_cpu(), &tpl);
    r = ok(TN_OP_resize_as_, ARGS(V_T(t), V_T(tpl), V_N()));
    TN_CHECK(SIZES(t, 4, 1, 2) && STRIDES(t, 2, 2, 1), "resize_as_");
    if (r) tn_tensor_release(r);
    tn_tensor_release(tpl);
    r = ok(TN_OP_as_strided_, ARGS(V_T(t), L(3, 2), L(1, 3), V_I(2)));
    TN_CHECK(r == t && SIZES(t, 3, 2) && STRIDES(t, 1, 3) && t->offset == 2, "as_strided_ in place");
    if (r) tn_tensor_release(r);
    r = ok(TN_OP_lift_fresh, ARGS(V_T(t)));
    TN_CHECK(r == t, "lift_fresh is identity");
    if (r) tn_tensor_release(r);
    tn_tensor_release(t);
}

int main(void) {
    test_sequences();
    test_sequence_rules();
    test_factories();
    test_like_and_new();
    test_complex_polar();
    test_inplace_geometry();
    return tn_test_summary();
}
