/* test_shape.c — the shape family through the door: views alias storage, result sizes,
 * strides, offsets and values match upstream torch 2.13.0 (expected numbers below were
 * printed by .venv-ref/bin/python on the same inputs), errors carry upstream's class and
 * text, and copies are checked against index arithmetic at sizes 1, 7, 31, 33, 1000+. */
#include <stdlib.h>
#include <string.h>

#include "ops/dispatch.h"
#include "ops/shape.h"
#include "tn_test.h"

/* ---- helpers ------------------------------------------------------------------------ */

static tn_value V_T(tn_tensor *t) { return tn_value_tensor(t); }
static tn_value V_I(int64_t i) { return tn_value_int(i); }
static tn_value V_B(bool b) { return tn_value_bool(b); }
static tn_value V_D(double d) { return tn_value_double(d); }
static tn_value V_N(void) { tn_value v = {.tag = TN_V_NONE}; return v; }
static tn_value V_L(const int64_t *d, int64_t n) { tn_value v = {.tag = TN_V_INTLIST}; v.u.ilist.data = d; v.u.ilist.n = n; return v; }
static tn_value V_TL(tn_tensor *const *d, int64_t n) { tn_value v = {.tag = TN_V_TENSORLIST}; v.u.tlist.data = d; v.u.tlist.n = n; return v; }
static tn_value V_S(const char *s) { tn_value v = {.tag = TN_V_STRING}; v.u.s.data = s; v.u.s.n = (int64_t)strlen(s); return v; }
static tn_value V_DT(tn_dtype d) { tn_value v = {.tag = TN_V_DTYPE}; v.u.dtype = d; return v; }
#define L(...) V_L((const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define L0 V_L(NULL, 0)
#define ARGS(...) ((tn_value[]){__VA_ARGS__})

/* arange(numel) in dtype (float32/float64/int64/int32/int16/bool) with the given shape. */
static tn_tensor *arange_t(tn_dtype dt, int ndim, const int64_t *sizes) {
    tn_tensor *t;
    if (tn_tensor_empty(ndim, sizes, dt, tn_device_cpu(), &t) != TN_OK) return NULL;
    int64_t n = tn_tensor_numel(t);
    void *p = tn_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case TN_DTYPE_FLOAT32: ((float *)p)[i] = (float)i; break;
        case TN_DTYPE_FLOAT64: ((double *)p)[i] = (double)i; break;
        case TN_DTYPE_INT64: ((int64_t *)p)[i] = i; break;
        case TN_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)i; break;
        case TN_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)i; break;
        case TN_DTYPE_BOOL: ((uint8_t *)p)[i] = (uint8_t)(i & 1); break;
        default: break;
        }
    }
    return t;
}
#define ARANGE(dt, ...) arange_t(dt, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__})

/* A 1-D tensor holding the given values. */
static tn_tensor *from_i64(int64_t n, const int64_t *v) {
    tn_tensor *t;
    tn_tensor_empty(1, &n, TN_DTYPE_INT64, tn_device_cpu(), &t);
    memcpy(tn_tensor_data(t), v, sizeof(int64_t) * (size_t)n);
    return t;
}
#define I64(...) from_i64(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__})

static tn_tensor *from_f32(int64_t n, const float *v) {
    tn_tensor *t;
    tn_tensor_empty(1, &n, TN_DTYPE_FLOAT32, tn_device_cpu(), &t);
    memcpy(tn_tensor_data(t), v, sizeof(float) * (size_t)n);
    return t;
}
#define F32(...) from_f32(sizeof((float[]){__VA_ARGS__}) / sizeof(float), (float[]){__VA_ARGS__})

static tn_tensor *from_bool(int64_t n, const uint8_t *v) {
    tn_tensor *t;
    tn_tensor_empty(1, &n, TN_DTYPE_BOOL, tn_device_cpu(), &t);
    memcpy(tn_tensor_data(t), v, (size_t)n);
    return t;
}
#define BOOLS(...) from_bool(sizeof((uint8_t[]){__VA_ARGS__}), (uint8_t[]){__VA_ARGS__})

/* A view of t with new sizes (contiguous strides), sharing storage: for building inputs. */
static tn_tensor *reshaped(tn_tensor *t, int ndim, const int64_t *sizes) {
    int64_t st[TN_MAX_DIMS];
    tn_contiguous_strides(ndim, sizes, st);
    tn_tensor *v = tn_tensor_new_view(t->storage, t->offset, ndim, sizes, st, t->dtype);
    tn_tensor_release(t);
    return v;
}
#define RESHAPED(t, ...) reshaped(t, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__})

static tn_tensor *run(tn_op_id op, const tn_value *args, const char *what) {
    tn_value r[2] = {{0}};
    tn_status st = tn_dispatch(op, args, r);
    TN_CHECK(st == TN_OK, "%s failed: %s", what, tn_error_message());
    if (st != TN_OK) return NULL;
    TN_CHECK(r[0].tag == TN_V_TENSOR, "%s: expected a tensor result", what);
    return r[0].u.t;
}

/* Element i (row-major over sizes) as a double. */
static double elem(const tn_tensor *t, int64_t i) {
    int64_t off = t->offset, rem = i;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (rem % t->sizes[d]) * t->strides[d];
        rem /= t->sizes[d];
    }
    const char *p = t->storage->data;
    switch (t->dtype) {
    case TN_DTYPE_FLOAT32: return ((const float *)p)[off];
    case TN_DTYPE_FLOAT64: return ((const double *)p)[off];
    case TN_DTYPE_INT64: return (double)((const int64_t *)p)[off];
    case TN_DTYPE_INT32: return ((const int32_t *)p)[off];
    case TN_DTYPE_INT16: return ((const int16_t *)p)[off];
    case TN_DTYPE_BOOL: case TN_DTYPE_UINT8: return ((const uint8_t *)p)[off];
    default: return NAN;
    }
}

/* Checks geometry (offset < 0 skips the offset check) and the first nv values. */
static void check(const char *what, tn_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides, int64_t off,
                  const double *vals, int nv) {
    if (!t) { TN_CHECK(0, "%s: no tensor", what); return; }
    char b1[256], b2[256];
    bool geo = t->ndim == ndim && !memcmp(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim) &&
               (!strides || !memcmp(t->strides, strides, sizeof(int64_t) * (size_t)ndim));
    TN_CHECK(geo, "%s: sizes %s strides %s", what, tn_format_sizes(t->ndim, t->sizes, b1, sizeof b1),
             tn_format_sizes(t->ndim, t->strides, b2, sizeof b2));
    if (off >= 0) TN_CHECK(t->offset == off, "%s: offset %lld, expected %lld", what, (long long)t->offset, (long long)off);
    if (!geo) return;
    for (int i = 0; i < nv; i++)
        if (elem(t, i) != vals[i]) {
            TN_CHECK(0, "%s: value %d is %g, expected %g", what, i, elem(t, i), vals[i]);
            return;
        }
}
#define SZ(...) (const int64_t[]){__VA_ARGS__}
#define VALS(...) (const double[]){__VA_ARGS__}, (int)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double))
#define NOVALS NULL, 0
#define CHECK_T(what, t, nd, sizes, strides, off, ...) check(what, t, nd, sizes, strides, off, __VA_ARGS__)

/* Runs an op that must fail with `code` and a message containing `text`. */
static void expect_err(tn_op_id op, const tn_value *args, tn_status code, const char *text, const char *what) {
    tn_value r[2] = {{0}};
    tn_status st = tn_dispatch(op, args, r);
    TN_CHECK(st == code, "%s: status %d, expected %d (%s)", what, st, code, st == TN_OK ? "ok" : tn_error_message());
    if (st == TN_OK) { tn_value_release(&r[0]); return; }
    TN_CHECK(strstr(tn_error_message(), text) != NULL, "%s: message '%s' lacks '%s'", what, tn_error_message(), text);
}

static void rel(tn_tensor *t) { tn_tensor_release(t); }

/* ---- views -------------------------------------------------------------------------- */

static void test_views(void) {
    tn_tensor *x = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 24), 2, 3, 4), *r, *tr;

    r = run(TN_OP_view, ARGS(V_T(x), L(6, -1)), "view");
    CHECK_T("view", r, 2, SZ(6, 4), SZ(4, 1), 0, VALS(0, 1, 2, 3, 4));
    TN_CHECK(r && r->storage == x->storage, "view aliases storage");
    rel(r);

    tr = run(TN_OP_transpose_int, ARGS(V_T(x), V_I(0), V_I(2)), "transpose");
    CHECK_T("transpose", tr, 3, SZ(4, 3, 2), SZ(1, 4, 12), 0, NOVALS);
    r = run(TN_OP_reshape, ARGS(V_T(tr), L(4, 6)), "reshape copy");
    CHECK_T("reshape copy", r, 2, SZ(4, 6), SZ(6, 1), 0, VALS(0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21));
    TN_CHECK(r && r->storage != x->storage, "non-viewable reshape copies");
    rel(r);
    rel(tr);

    tr = run(TN_OP_transpose_int, ARGS(V_T(x), V_I(0), V_I(1)), "transpose01");
    r = run(TN_OP_reshape, ARGS(V_T(tr), L(3, 2, 2, 2)), "reshape view");
    CHECK_T("reshape view", r, 4, SZ(3, 2, 2, 2), SZ(4, 12, 2, 1), 0, VALS(0, 1, 2, 3, 12, 13, 14, 15, 4));
    TN_CHECK(r && r->storage == x->storage, "viewable reshape aliases");
    rel(r);
    expect_err(TN_OP_view, ARGS(V_T(tr), L(24)), TN_ERR_RUNTIME,
               "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
               "two contiguous subspaces). Use .reshape(...) instead.", "view of transpose");
    rel(tr);

    r = run(TN_OP_permute, ARGS(V_T(x), L(2, 0, -2)), "permute");
    CHECK_T("permute", r, 3, SZ(4, 2, 3), SZ(1, 12, 4), 0, VALS(0, 4, 8, 12, 16, 20, 1, 5));
    rel(r);

    tn_tensor *c3 = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 3), 3, 1);
    r = run(TN_OP_expand, ARGS(V_T(c3), L(2, -1, 4), V_B(false)), "expand");
    CHECK_T("expand", r, 3, SZ(2, 3, 4), SZ(0, 1, 0), 0, VALS(0, 0, 0, 0, 1, 1, 1, 1, 2));
    rel(r);
    tn_tensor *v3 = ARANGE(TN_DTYPE_FLOAT32, 3);
    r = run(TN_OP_expand, ARGS(V_T(v3), L(1, 3), V_B(false)), "expand new leading 1");
    CHECK_T("expand lead", r, 2, SZ(1, 3), SZ(3, 1), 0, NOVALS);
    rel(r);
    rel(v3);
    rel(c3);

    r = run(TN_OP_unsqueeze, ARGS(V_T(x), V_I(1)), "unsqueeze");
    CHECK_T("unsqueeze", r, 4, SZ(2, 1, 3, 4), SZ(12, 12, 4, 1), 0, NOVALS);
    tn_tensor *sq = run(TN_OP_squeeze, ARGS(V_T(r)), "squeeze");
    CHECK_T("squeeze", sq, 3, SZ(2, 3, 4), SZ(12, 4, 1), 0, NOVALS);
    rel(sq);
    sq = run(TN_OP_squeeze_dims, ARGS(V_T(r), L(1, 2)), "squeeze dims");
    CHECK_T("squeeze dims", sq, 3, SZ(2, 3, 4), SZ(12, 4, 1), 0, NOVALS);
    rel(sq);
    rel(r);
    r = run(TN_OP_unsqueeze, ARGS(V_T(x), V_I(-1)), "unsqueeze -1");
    CHECK_T("unsqueeze -1", r, 4, SZ(2, 3, 4, 1), SZ(12, 4, 1, 1), 0, NOVALS);
    rel(r);

    r = run(TN_OP_slice_Tensor, ARGS(V_T(x), V_I(1), V_I(1), V_N(), V_I(1)), "slice1");
    tn_tensor *r2 = run(TN_OP_slice_Tensor, ARGS(V_T(r), V_I(2), V_N(), V_I(INT64_MAX), V_I(3)), "slice2");
    CHECK_T("slice", r2, 3, SZ(2, 2, 2), SZ(12, 4, 3), 4, VALS(4, 7, 8, 11, 16, 19, 20, 23));
    rel(r2);
    rel(r);
    r = run(TN_OP_slice_Tensor, ARGS(V_T(x), V_I(-1), V_I(-3), V_I(-1), V_I(2)), "slice neg");
    CHECK_T("slice neg", r, 3, SZ(2, 3, 1), SZ(12, 4, 2), 1, VALS(1, 5, 9, 13, 17, 21));
    rel(r);
    r = run(TN_OP_slice_Tensor, ARGS(V_T(x), V_I(0), V_I(5), V_I(100), V_I(1)), "slice clamp");
    CHECK_T("slice clamp", r, 3, SZ(0, 3, 4), SZ(12, 4, 1), 24, NOVALS);
    rel(r);

    r = run(TN_OP_narrow, ARGS(V_T(x), V_I(2), V_I(-3), V_I(2)), "narrow");
    CHECK_T("narrow", r, 3, SZ(2, 3, 2), SZ(12, 4, 1), 1, VALS(1, 2, 5, 6, 9, 10, 13, 14));
    rel(r);
    r = run(TN_OP_select_int, ARGS(V_T(x), V_I(1), V_I(-1)), "select");
    CHECK_T("select", r, 2, SZ(2, 4), SZ(12, 1), 8, VALS(8, 9, 10, 11, 20, 21, 22, 23));
    rel(r);
    r = run(TN_OP_diagonal, ARGS(V_T(x), V_I(1), V_I(0), V_I(2)), "diagonal");
    CHECK_T("diagonal", r, 2, SZ(3, 2), SZ(4, 13), 1, VALS(1, 14, 5, 18, 9, 22));
    rel(r);
    r = run(TN_OP_diagonal, ARGS(V_T(x), V_I(-1), V_I(2), V_I(1)), "diagonal neg");
    CHECK_T("diagonal neg", r, 2, SZ(2, 3), SZ(12, 5), 1, NOVALS);
    rel(r);
    r = run(TN_OP_unfold, ARGS(V_T(x), V_I(2), V_I(2), V_I(1)), "unfold");
    CHECK_T("unfold", r, 4, SZ(2, 3, 3, 2), SZ(12, 4, 1, 1), 0, VALS(0, 1, 1, 2, 2, 3, 4, 5));
    rel(r);
    r = run(TN_OP_as_strided, ARGS(V_T(x), L(3, 3), L(4, 1), V_I(2)), "as_strided");
    CHECK_T("as_strided", r, 2, SZ(3, 3), SZ(4, 1), 2, VALS(2, 3, 4, 6, 7, 8, 10, 11, 12));
    rel(r);
    r = run(TN_OP_movedim_intlist, ARGS(V_T(x), L(0, 1), L(2, 0)), "movedim");
    CHECK_T("movedim", r, 3, SZ(3, 4, 2), SZ(4, 1, 12), 0, VALS(0, 12, 1, 13, 2, 14));
    rel(r);
    r = run(TN_OP_numpy_T, ARGS(V_T(x)), "numpy_T");
    CHECK_T("numpy_T", r, 3, SZ(4, 3, 2), SZ(1, 4, 12), 0, NOVALS);
    rel(r);
    r = run(TN_OP_mT, ARGS(V_T(x)), "mT");
    CHECK_T("mT", r, 3, SZ(2, 4, 3), SZ(12, 1, 4), 0, NOVALS);
    rel(r);

    /* flatten of a strided-but-mergeable view stays a view */
    r = run(TN_OP_slice_Tensor, ARGS(V_T(x), V_I(2), V_N(), V_N(), V_I(2)), "slice step2");
    r2 = run(TN_OP_flatten_using_ints, ARGS(V_T(r), V_I(1), V_I(-1)), "flatten");
    CHECK_T("flatten", r2, 2, SZ(2, 6), SZ(12, 2), 0, VALS(0, 2, 4, 6, 8, 10));
    TN_CHECK(r2 && r2->storage == x->storage, "flatten view aliases");
    rel(r2);
    r2 = run(TN_OP_flatten_using_ints, ARGS(V_T(r), V_I(1), V_I(1)), "flatten same dim");
    TN_CHECK(r2 == r, "flatten(d, d) returns self");
    rel(r2);
    rel(r);
    r = run(TN_OP_unflatten_int, ARGS(V_T(x), V_I(-1), L(2, -1)), "unflatten");
    CHECK_T("unflatten", r, 4, SZ(2, 3, 2, 2), SZ(12, 4, 2, 1), 0, NOVALS);
    rel(r);

    /* view.dtype: reinterpret bytes; float32 1.0 is 0x3F800000 -> int16 [0, 16256] */
    tn_tensor *ones = F32(1.0f, 2.0f);
    r = run(TN_OP_view_dtype, ARGS(V_T(ones), V_DT(TN_DTYPE_INT16)), "view dtype down");
    CHECK_T("view dtype down", r, 1, SZ(4), SZ(1), 0, VALS(0, 16256, 0, 16384));
    r2 = run(TN_OP_view_dtype, ARGS(V_T(r), V_DT(TN_DTYPE_FLOAT64)), "view dtype up");
    CHECK_T("view dtype up", r2, 1, SZ(1), SZ(1), 0, NOVALS);
    rel(r2);
    rel(r);
    rel(ones);
    r = run(TN_OP_view_dtype, ARGS(V_T(x), V_DT(TN_DTYPE_FLOAT64)), "view dtype x");
    CHECK_T("view dtype x", r, 3, SZ(2, 3, 2), SZ(6, 2, 1), 0, NOVALS);
    rel(r);

    /* 0-dim and empty */
    tn_tensor *s;
    tn_tensor_zeros(0, NULL, TN_DTYPE_FLOAT32, tn_device_cpu(), &s);
    r = run(TN_OP_view, ARGS(V_T(s), L(1, 1, 1)), "view 0-d");
    CHECK_T("view 0-d", r, 3, SZ(1, 1, 1), SZ(1, 1, 1), 0, NOVALS);
    rel(r);
    r = run(TN_OP_t, ARGS(V_T(s)), "t 0-d");
    CHECK_T("t 0-d", r, 0, SZ(0), SZ(0), 0, NOVALS);
    rel(r);
    r = run(TN_OP_flatten_using_ints, ARGS(V_T(s), V_I(0), V_I(-1)), "flatten 0-d");
    CHECK_T("flatten 0-d", r, 1, SZ(1), SZ(1), 0, NOVALS);
    rel(r);
    rel(s);
    tn_tensor *e;
    tn_tensor_empty(2, SZ(0, 3), TN_DTYPE_FLOAT32, tn_device_cpu(), &e);
    tn_tensor *et = run(TN_OP_t, ARGS(V_T(e)), "t empty");
    r = run(TN_OP_view, ARGS(V_T(et), L(3, 0)), "view empty");
    CHECK_T("view empty", r, 2, SZ(3, 0), SZ(1, 3), 0, NOVALS);
    rel(r);
    rel(et);
    expect_err(TN_OP_view, ARGS(V_T(e), L(0, -1)), TN_ERR_RUNTIME,
               "cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified dimension size -1 can be "
               "any value and is ambiguous", "view 0 elements -1");
    rel(e);

    /* detach/alias share storage */
    r = run(TN_OP_detach, ARGS(V_T(x)), "detach");
    TN_CHECK(r && r != x && r->storage == x->storage, "detach shares storage");
    rel(r);

    /* contiguous: self when contiguous, else a copy */
    tn_value mf = {.tag = TN_V_MEMFMT};
    r = run(TN_OP_contiguous, ARGS(V_T(x), mf), "contiguous");
    TN_CHECK(r == x, "contiguous returns self");
    rel(r);
    tr = run(TN_OP_transpose_int, ARGS(V_T(x), V_I(1), V_I(2)), "tr12");
    r = run(TN_OP_contiguous, ARGS(V_T(tr), mf), "contiguous copy");
    CHECK_T("contiguous copy", r, 3, SZ(2, 4, 3), SZ(12, 3, 1), 0, VALS(0, 4, 8, 1, 5, 9));
    rel(r);
    rel(tr);
    rel(x);
}

static void test_view_errors(void) {
    tn_tensor *x = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 24), 2, 3, 4), *s;
    tn_tensor_zeros(0, NULL, TN_DTYPE_FLOAT32, tn_device_cpu(), &s);
    expect_err(TN_OP_view, ARGS(V_T(x), L(5, 5)), TN_ERR_RUNTIME, "shape '[5, 5]' is invalid for input of size 24", "view bad");
    expect_err(TN_OP_view, ARGS(V_T(x), L(-1, -1)), TN_ERR_RUNTIME, "only one dimension can be inferred", "two -1");
    expect_err(TN_OP_view, ARGS(V_T(x), L(-2, 12)), TN_ERR_RUNTIME, "invalid shape dimension -2 at index 0 of shape [-2, 12]", "neg");
    expect_err(TN_OP_view_dtype, ARGS(V_T(s), V_DT(TN_DTYPE_FLOAT64)), TN_ERR_RUNTIME,
               "self.dim() cannot be 0 to view Float as Double (different element sizes)", "view dtype 0-d");
    tn_tensor *x3 = run(TN_OP_slice_Tensor, ARGS(V_T(x), V_I(2), V_I(0), V_I(3), V_I(1)), "x[..., :3]");
    expect_err(TN_OP_view_dtype, ARGS(V_T(x3), V_DT(TN_DTYPE_FLOAT64)), TN_ERR_RUNTIME,
               "self.size(-1) must be divisible by 2 to view Float as Double (different element sizes), but got 3", "odd");
    rel(x3);
    expect_err(TN_OP_as_strided, ARGS(V_T(x), L(5, 5), L(5, 1), V_N()), TN_ERR_RUNTIME,
               "setStorage: sizes [5, 5], strides [5, 1], storage offset 0, and itemsize 4 requiring a storage size of 100 "
               "are out of bounds for storage of size 96", "as_strided oob");
    expect_err(TN_OP_as_strided, ARGS(V_T(x), L(2), L(-1), V_N()), TN_ERR_RUNTIME,
               "as_strided: Negative strides are not supported at the moment, got strides: [-1]", "as_strided neg");
    expect_err(TN_OP_as_strided, ARGS(V_T(x), L(2), L(1), V_I(-1)), TN_ERR_RUNTIME, "Tensor: invalid storage offset -1", "off");
    expect_err(TN_OP_transpose_int, ARGS(V_T(x), V_I(0), V_I(3)), TN_ERR_INDEX,
               "Dimension out of range (expected to be in range of [-3, 2], but got 3)", "transpose oob");
    expect_err(TN_OP_t, ARGS(V_T(x)), TN_ERR_RUNTIME, "t() expects a tensor with <= 2 dimensions, but self is 3D", "t 3d");
    expect_err(TN_OP_permute, ARGS(V_T(x), L(0, 1, 1)), TN_ERR_RUNTIME, "permute(): duplicate dims are not allowed.", "perm dup");
    expect_err(TN_OP_permute, ARGS(V_T(x), L(0, 1)), TN_ERR_RUNTIME, "input.dim() = 3 is not equal to len(dims) = 2", "perm len");
    expect_err(TN_OP_expand, ARGS(V_T(x), L(3, 4), V_B(false)), TN_ERR_RUNTIME,
               "expand(torch.FloatTensor{[2, 3, 4]}, size=[3, 4]): the number of sizes provided (2) must be greater or "
               "equal to the number of dimensions in the tensor (3)", "expand fewer");
    expect_err(TN_OP_expand, ARGS(V_T(x), L(2, 5, 4), V_B(false)), TN_ERR_RUNTIME,
               "The expanded size of the tensor (5) must match the existing size (3) at non-singleton dimension 1.  "
               "Target sizes: [2, 5, 4].  Tensor sizes: [2, 3, 4]", "expand bad");
    expect_err(TN_OP_expand, ARGS(V_T(x), L(-1, 2, 3, 4), V_B(false)), TN_ERR_RUNTIME,
               "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0", "expand -1");
    expect_err(TN_OP_squeeze_dims, ARGS(V_T(x), L(0, 0)), TN_ERR_RUNTIME, "dim 0 appears multiple times in the list of dims", "sq");
    expect_err(TN_OP_unsqueeze, ARGS(V_T(x), V_I(4)), TN_ERR_INDEX,
               "Dimension out of range (expected to be in range of [-4, 3], but got 4)", "unsqueeze oob");
    expect_err(TN_OP_flatten_using_ints, ARGS(V_T(x), V_I(2), V_I(1)), TN_ERR_RUNTIME,
               "flatten() has invalid args: start_dim cannot come after end_dim", "flatten");
    expect_err(TN_OP_unflatten_int, ARGS(V_T(x), V_I(1), L(2, 2)), TN_ERR_RUNTIME,
               "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input tensor", "unflatten");
    expect_err(TN_OP_unflatten_int, ARGS(V_T(x), V_I(1), L(-1, -1)), TN_ERR_RUNTIME,
               "unflatten got an unexpected error:\nonly one dimension can be inferred", "unflatten two");
    expect_err(TN_OP_narrow, ARGS(V_T(x), V_I(1), V_I(2), V_I(2)), TN_ERR_RUNTIME,
               "start (2) + length (2) exceeds dimension size (3).", "narrow");
    expect_err(TN_OP_narrow, ARGS(V_T(x), V_I(1), V_I(4), V_I(0)), TN_ERR_INDEX,
               "start out of range (expected to be in range of [-3, 3], but got 4)", "narrow start");
    expect_err(TN_OP_narrow, ARGS(V_T(s), V_I(0), V_I(0), V_I(1)), TN_ERR_RUNTIME, "narrow() cannot be applied to a 0-dim tensor.", "n0");
    expect_err(TN_OP_select_int, ARGS(V_T(x), V_I(1), V_I(3)), TN_ERR_INDEX,
               "select(): index 3 out of range for tensor of size [2, 3, 4] at dimension 1", "select oob");
    expect_err(TN_OP_select_int, ARGS(V_T(s), V_I(0), V_I(0)), TN_ERR_INDEX, "select() cannot be applied to a 0-dim tensor.", "s0");
    expect_err(TN_OP_slice_Tensor, ARGS(V_T(x), V_I(1), V_I(0), V_I(3), V_I(0)), TN_ERR_RUNTIME, "slice step must be positive", "step0");
    expect_err(TN_OP_slice_Tensor, ARGS(V_T(s), V_I(0), V_I(0), V_I(1), V_I(1)), TN_ERR_INDEX,
               "slice() cannot be applied to a 0-dim tensor.", "slice 0d");
    expect_err(TN_OP_diagonal, ARGS(V_T(x), V_I(0), V_I(1), V_I(1)), TN_ERR_RUNTIME, "diagonal dimensions cannot be identical 1, 1", "diag");
    expect_err(TN_OP_unfold, ARGS(V_T(x), V_I(1), V_I(4), V_I(1)), TN_ERR_RUNTIME,
               "maximum size for tensor at dimension 1 is 3 but size is 4", "unfold");
    expect_err(TN_OP_unfold, ARGS(V_T(x), V_I(1), V_I(2), V_I(0)), TN_ERR_RUNTIME, "step is 0 but must be > 0", "unfold step");
    expect_err(TN_OP_movedim_intlist, ARGS(V_T(x), L(0, 0), L(1, 2)), TN_ERR_RUNTIME, "movedim: repeated dim in `source` ([0, 0])", "md");
    tn_tensor *v3 = ARANGE(TN_DTYPE_FLOAT32, 3);
    expect_err(TN_OP_mT, ARGS(V_T(v3)), TN_ERR_RUNTIME,
               "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.", "mT 1d");
    rel(v3);
    rel(s);
    rel(x);
}

/* ---- splitting ---------------------------------------------------------------------- */

static void test_splits(void) {
    tn_tensor *x = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 10), 5, 2);
    tn_value r[1];
    TN_CHECK(tn_dispatch(TN_OP_chunk, ARGS(V_T(x), V_I(3), V_I(0)), r) == TN_OK, "chunk");
    TN_CHECK(r[0].tag == TN_V_TENSORLIST && r[0].u.tlist.n == 3, "chunk count");
    if (r[0].tag == TN_V_TENSORLIST && r[0].u.tlist.n == 3) {
        CHECK_T("chunk0", r[0].u.tlist.data[0], 2, SZ(2, 2), SZ(2, 1), 0, NOVALS);
        CHECK_T("chunk2", r[0].u.tlist.data[2], 2, SZ(1, 2), SZ(2, 1), 8, VALS(8, 9));
        TN_CHECK(r[0].u.tlist.data[2]->storage == x->storage, "chunk aliases");
    }
    tn_value_release(&r[0]);
    TN_CHECK(tn_dispatch(TN_OP_chunk, ARGS(V_T(x), V_I(7), V_I(1)), r) == TN_OK && r[0].u.tlist.n == 2, "chunk > size");
    tn_value_release(&r[0]);
    TN_CHECK(tn_dispatch(TN_OP_split_with_sizes, ARGS(V_T(x), L(1, 0, 4), V_I(0)), r) == TN_OK && r[0].u.tlist.n == 3,
             "split_with_sizes");
    if (r[0].tag == TN_V_TENSORLIST && r[0].u.tlist.n == 3) CHECK_T("sws2", r[0].u.tlist.data[2], 2, SZ(4, 2), SZ(2, 1), 2, VALS(2, 3));
    tn_value_release(&r[0]);
    TN_CHECK(tn_dispatch(TN_OP_unbind_int, ARGS(V_T(x), V_I(1)), r) == TN_OK && r[0].u.tlist.n == 2, "unbind");
    if (r[0].tag == TN_V_TENSORLIST && r[0].u.tlist.n == 2) CHECK_T("unbind1", r[0].u.tlist.data[1], 1, SZ(5), SZ(2), 1, VALS(1, 3, 5, 7, 9));
    tn_value_release(&r[0]);
    TN_CHECK(tn_dispatch(TN_OP_tensor_split_sections, ARGS(V_T(x), V_I(3), V_I(0)), r) == TN_OK && r[0].u.tlist.n == 3, "ts");
    if (r[0].tag == TN_V_TENSORLIST && r[0].u.tlist.n == 3) {
        CHECK_T("ts0", r[0].u.tlist.data[0], 2, SZ(2, 2), SZ(2, 1), 0, NOVALS);
        CHECK_T("ts2", r[0].u.tlist.data[2], 2, SZ(1, 2), SZ(2, 1), 8, NOVALS);
    }
    tn_value_release(&r[0]);
    TN_CHECK(tn_dispatch(TN_OP_tensor_split_indices, ARGS(V_T(x), L(1, -1, 7), V_I(0)), r) == TN_OK && r[0].u.tlist.n == 4, "tsi");
    if (r[0].tag == TN_V_TENSORLIST && r[0].u.tlist.n == 4) {
        CHECK_T("tsi1", r[0].u.tlist.data[1], 2, SZ(3, 2), SZ(2, 1), 2, NOVALS);
        CHECK_T("tsi3", r[0].u.tlist.data[3], 2, SZ(0, 2), SZ(2, 1), -1, NOVALS);
    }
    tn_value_release(&r[0]);
    tn_tensor *e;
    tn_tensor_empty(2, SZ(0, 2), TN_DTYPE_FLOAT32, tn_device_cpu(), &e);
    TN_CHECK(tn_dispatch(TN_OP_chunk, ARGS(V_T(e), V_I(3), V_I(0)), r) == TN_OK && r[0].u.tlist.n == 3, "chunk empty keeps 3");
    tn_value_release(&r[0]);
    rel(e);
    expect_err(TN_OP_split_Tensor, ARGS(V_T(x), V_I(-1), V_I(1)), TN_ERR_RUNTIME,
               "split expects split_size be non-negative, but got split_size=-1", "split neg");
    expect_err(TN_OP_split_Tensor, ARGS(V_T(x), V_I(0), V_I(1)), TN_ERR_RUNTIME,
               "split_size can only be 0 if dimension size is 0, but got dimension size of 2", "split 0");
    expect_err(TN_OP_split_with_sizes, ARGS(V_T(x), L(1, 2), V_I(1)), TN_ERR_RUNTIME,
               "split_with_sizes expects split_sizes to sum exactly to 2 (input tensor's size at dimension 1), but got "
               "split_sizes=[1, 2]", "sws");
    expect_err(TN_OP_chunk, ARGS(V_T(x), V_I(0), V_I(1)), TN_ERR_RUNTIME, "chunk expects `chunks` to be greater than 0, got: 0", "c0");
    tn_tensor *s;
    tn_tensor_zeros(0, NULL, TN_DTYPE_FLOAT32, tn_device_cpu(), &s);
    expect_err(TN_OP_unbind_int, ARGS(V_T(s), V_I(0)), TN_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions", "ub0");
    rel(s);
    rel(x);
}

/* ---- assembly ----------------------------------------------------------------------- */

static void test_assembly(void) {
    tn_tensor *x = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 24), 2, 3, 4), *r;
    tn_tensor *a = run(TN_OP_slice_Tensor, ARGS(V_T(x), V_I(1), V_N(), V_I(1), V_I(1)), "x[:, :1]");
    tn_tensor *b = run(TN_OP_slice_Tensor, ARGS(V_T(x), V_I(1), V_N(), V_N(), V_I(2)), "x[:, ::2]");
    tn_tensor *z0;
    tn_tensor_empty(1, SZ(0), TN_DTYPE_FLOAT32, tn_device_cpu(), &z0);
    tn_tensor *list[3] = {a, z0, b};
    r = run(TN_OP_cat, ARGS(V_TL(list, 3), V_I(1)), "cat (skips (0,))");
    CHECK_T("cat", r, 3, SZ(2, 3, 4), SZ(12, 4, 1), 0, VALS(0, 1, 2, 3, 0, 1, 2, 3, 8, 9, 10, 11, 12));
    rel(r);
    /* promotion across inputs (upstream: Float + Long -> Float, Int + Long -> Long) */
    tn_tensor *fl = F32(0.5f, 1.5f), *lg = I64(7, -8), *i32 = ARANGE(TN_DTYPE_INT32, 2);
    tn_tensor *mix1[2] = {fl, lg}, *mix2[2] = {i32, lg};
    r = run(TN_OP_cat, ARGS(V_TL(mix1, 2), V_I(0)), "cat float+long");
    CHECK_T("cat float+long", r, 1, SZ(4), SZ(1), 0, VALS(0.5, 1.5, 7, -8));
    TN_CHECK(r && r->dtype == TN_DTYPE_FLOAT32, "cat float+long is Float");
    rel(r);
    r = run(TN_OP_stack, ARGS(V_TL(mix2, 2), V_I(1)), "stack int+long");
    CHECK_T("stack int+long", r, 2, SZ(2, 2), SZ(2, 1), 0, VALS(0, 7, 1, -8));
    TN_CHECK(r && r->dtype == TN_DTYPE_INT64, "stack int+long is Long");
    rel(r);
    rel(fl);
    rel(lg);
    rel(i32);
    tn_tensor *two[2] = {x, x};
    r = run(TN_OP_stack, ARGS(V_TL(two, 2), V_I(2)), "stack");
    CHECK_T("stack", r, 4, SZ(2, 3, 2, 4), SZ(24, 8, 4, 1), 0, VALS(0, 1, 2, 3, 0, 1, 2, 3, 4));
    rel(r);
    tn_tensor *v2 = ARANGE(TN_DTYPE_FLOAT32, 2), *v3 = ARANGE(TN_DTYPE_FLOAT32, 3);
    tn_tensor *hl[2] = {v2, v3}, *vl[2] = {v3, v3};
    r = run(TN_OP_hstack, ARGS(V_TL(hl, 2)), "hstack");
    CHECK_T("hstack", r, 1, SZ(5), SZ(1), 0, VALS(0, 1, 0, 1, 2));
    rel(r);
    r = run(TN_OP_vstack, ARGS(V_TL(vl, 2)), "vstack");
    CHECK_T("vstack", r, 2, SZ(2, 3), SZ(3, 1), 0, VALS(0, 1, 2, 0, 1, 2));
    rel(r);
    r = run(TN_OP_dstack, ARGS(V_TL(vl, 2)), "dstack");
    CHECK_T("dstack", r, 3, SZ(1, 3, 2), SZ(6, 2, 1), 0, VALS(0, 0, 1, 1, 2, 2));
    rel(r);

    tn_tensor *m = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 12), 3, 4);
    r = run(TN_OP_tril, ARGS(V_T(m), V_I(-1)), "tril");
    CHECK_T("tril", r, 2, SZ(3, 4), SZ(4, 1), 0, VALS(0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0));
    rel(r);
    r = run(TN_OP_triu, ARGS(V_T(m), V_I(1)), "triu");
    CHECK_T("triu", r, 2, SZ(3, 4), SZ(4, 1), 0, VALS(0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11));
    rel(r);
    tn_tensor *row = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 3), 1, 3);
    r = run(TN_OP_repeat, ARGS(V_T(row), L(2, 1, 2)), "repeat");
    CHECK_T("repeat", r, 3, SZ(2, 1, 6), SZ(6, 6, 1), 0, VALS(0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2));
    rel(r);
    r = run(TN_OP_tile, ARGS(V_T(x), L(2)), "tile");
    CHECK_T("tile", r, 3, SZ(2, 3, 8), SZ(24, 8, 1), 0, VALS(0, 1, 2, 3, 0, 1, 2, 3, 4));
    rel(r);
    rel(row);
    r = run(TN_OP_flip, ARGS(V_T(x), L(0, 2)), "flip");
    CHECK_T("flip", r, 3, SZ(2, 3, 4), SZ(12, 4, 1), 0, VALS(15, 14, 13, 12, 19, 18, 17, 16, 23));
    rel(r);
    tn_tensor *mt = run(TN_OP_t, ARGS(V_T(m)), "m.t()");
    r = run(TN_OP_flip, ARGS(V_T(mt), L(0)), "flip keeps dense strides");
    CHECK_T("flip t", r, 2, SZ(4, 3), SZ(1, 4), 0, VALS(3, 7, 11, 2, 6, 10));
    rel(r);
    r = run(TN_OP_roll, ARGS(V_T(mt), L(1), L(0)), "roll t");
    CHECK_T("roll t", r, 2, SZ(4, 3), SZ(3, 1), 0, VALS(3, 7, 11, 0, 4, 8));
    rel(r);
    rel(mt);
    tn_tensor *r25 = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 10), 2, 5);
    r = run(TN_OP_roll, ARGS(V_T(r25), L(2), L(1)), "roll");
    CHECK_T("roll", r, 2, SZ(2, 5), SZ(5, 1), 0, VALS(3, 4, 0, 1, 2, 8, 9, 5, 6, 7));
    rel(r);
    r = run(TN_OP_roll, ARGS(V_T(r25), L(-3), L0), "roll flat");
    CHECK_T("roll flat", r, 2, SZ(2, 5), SZ(5, 1), 0, VALS(3, 4, 5, 6, 7, 8, 9, 0, 1, 2));
    rel(r);
    rel(r25);
    tn_tensor *p23 = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 6), 2, 3);
    r = run(TN_OP_constant_pad_nd, ARGS(V_T(p23), L(1, -1, 0, 1), V_D(9.0)), "pad");
    CHECK_T("pad", r, 2, SZ(3, 3), SZ(3, 1), 0, VALS(9, 0, 1, 9, 3, 4, 9, 9, 9));
    rel(r);
    expect_err(TN_OP_constant_pad_nd, ARGS(V_T(p23), L(1), V_I(0)), TN_ERR_RUNTIME,
               "Length of pad must be even but instead it equals 1", "pad odd");
    expect_err(TN_OP_constant_pad_nd, ARGS(V_T(x), L(-3, -2), V_I(0)), TN_ERR_RUNTIME, "narrow(): length must be non-negative.", "pn");
    tn_tensor *u8;
    tn_tensor_zeros(1, SZ(2), TN_DTYPE_UINT8, tn_device_cpu(), &u8);
    expect_err(TN_OP_constant_pad_nd, ARGS(V_T(u8), L(1, 1), V_I(300)), TN_ERR_RUNTIME,
               "value cannot be converted to type uint8_t without overflow", "pad overflow");
    rel(u8);
    rel(p23);

    /* errors */
    expect_err(TN_OP_cat, ARGS(V_TL(NULL, 0), V_I(0)), TN_ERR_VALUE, "torch.cat(): expected a non-empty list of Tensors", "cat []");
    tn_tensor *bad = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 32), 2, 4, 4);
    tn_tensor *bl[2] = {x, bad};
    expect_err(TN_OP_cat, ARGS(V_TL(bl, 2), V_I(2)), TN_ERR_RUNTIME,
               "Sizes of tensors must match except in dimension 2. Expected size 3 but got size 4 for tensor number 1 in the list.", "cat");
    expect_err(TN_OP_cat, ARGS(V_TL(two, 2), V_I(3)), TN_ERR_INDEX,
               "Dimension out of range (expected to be in range of [-3, 2], but got 3)", "cat dim");
    expect_err(TN_OP_stack, ARGS(V_TL(bl, 2), V_I(0)), TN_ERR_RUNTIME,
               "stack expects each tensor to be equal size, but got [2, 3, 4] at entry 0 and [2, 4, 4] at entry 1", "stack");
    expect_err(TN_OP_tril, ARGS(V_T(v3), V_I(0)), TN_ERR_RUNTIME, "tril: input tensor must have at least 2 dimensions", "tril 1d");
    expect_err(TN_OP_repeat, ARGS(V_T(x), L(2, 2)), TN_ERR_RUNTIME,
               "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor", "repeat");
    expect_err(TN_OP_flip, ARGS(V_T(x), L(0, 0)), TN_ERR_RUNTIME, "dim 0 appears multiple times in the list of dims", "flip");
    expect_err(TN_OP_roll, ARGS(V_T(x), L(1, 2), L0), TN_ERR_RUNTIME, "shifts and dimensions must align. shifts: 2, dims:0", "roll");
    rel(bad);
    rel(v2);
    rel(v3);
    rel(m);
    rel(z0);
    rel(a);
    rel(b);
    rel(x);
}

/* ---- indexing ----------------------------------------------------------------------- */

static void test_indexing(void) {
    tn_tensor *x = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 24), 2, 3, 4), *r;
    tn_tensor *i303 = I64(3, 0, 3);
    r = run(TN_OP_index_select, ARGS(V_T(x), V_I(2), V_T(i303)), "index_select");
    CHECK_T("index_select", r, 3, SZ(2, 3, 3), SZ(9, 3, 1), 0, VALS(3, 0, 3, 7, 4, 7, 11, 8, 11, 15, 12, 15));
    rel(r);
    tn_tensor *m = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 12), 3, 4);
    tn_tensor *gi = RESHAPED(I64(3, 0, 1, 1, 2, 0), 3, 2);
    r = run(TN_OP_gather, ARGS(V_T(m), V_I(1), V_T(gi), V_B(false)), "gather");
    CHECK_T("gather", r, 2, SZ(3, 2), SZ(2, 1), 0, VALS(3, 0, 5, 5, 10, 8));
    rel(r);
    tn_tensor *z34;
    tn_tensor_zeros(2, SZ(3, 4), TN_DTYPE_FLOAT32, tn_device_cpu(), &z34);
    tn_tensor *si = RESHAPED(I64(3, 3, 0, 1, 2, 2), 3, 2), *ones = RESHAPED(F32(1, 1, 1, 1, 1, 1), 3, 2);
    r = run(TN_OP_scatter_add, ARGS(V_T(z34), V_I(1), V_T(si), V_T(ones)), "scatter_add");
    CHECK_T("scatter_add", r, 2, SZ(3, 4), SZ(4, 1), 0, VALS(0, 0, 0, 2, 1, 1, 0, 0, 0, 0, 2, 0));
    rel(r);
    r = run(TN_OP_scatter_value, ARGS(V_T(z34), V_I(1), V_T(si), V_D(5.0)), "scatter value");
    CHECK_T("scatter value", r, 2, SZ(3, 4), SZ(4, 1), 0, VALS(0, 0, 0, 5, 5, 5, 0, 0, 0, 0, 5, 0));
    rel(r);
    tn_tensor *s3 = F32(5, 7, 1), *ix3 = I64(0, 0, 1), *src3 = F32(2, 3, -4);
    r = run(TN_OP_scatter_reduce_two, ARGS(V_T(s3), V_I(0), V_T(ix3), V_T(src3), V_S("mean"), V_B(true)), "sr mean");
    CHECK_T("sr mean", r, 1, SZ(3), SZ(1), 0, VALS(10.0f / 3.0f, 1.5, 1));
    rel(r);
    r = run(TN_OP_scatter_reduce_two, ARGS(V_T(s3), V_I(0), V_T(ix3), V_T(src3), V_S("amin"), V_B(false)), "sr amin");
    CHECK_T("sr amin", r, 1, SZ(3), SZ(1), 0, VALS(2, -4, 1));
    rel(r);
    tn_tensor *si3 = I64(5, 7, 1), *isrc = I64(2, 3, -4);
    r = run(TN_OP_scatter_reduce_two, ARGS(V_T(si3), V_I(0), V_T(ix3), V_T(isrc), V_S("mean"), V_B(true)), "sr mean int");
    CHECK_T("sr mean int", r, 1, SZ(3), SZ(1), 0, VALS(3, 1, 1));
    rel(r);
    r = run(TN_OP_scatter_reduce_two, ARGS(V_T(si3), V_I(0), V_T(ix3), V_T(isrc), V_S("mean"), V_B(false)), "sr mean int ns");
    CHECK_T("sr mean int noself", r, 1, SZ(3), SZ(1), 0, VALS(2, -4, 1));
    rel(r);

    /* advanced indexing: adjacent (result in place) and non-adjacent (moved to front) */
    tn_tensor *i20 = I64(2, 0), *i13 = RESHAPED(I64(1, 3), 2, 1);
    tn_tensor *idx_adj[3] = {NULL, i20, i13};
    r = run(TN_OP_index_Tensor, ARGS(V_T(x), V_TL(idx_adj, 3)), "index adjacent");
    CHECK_T("index adj", r, 3, SZ(2, 2, 2), SZ(4, 2, 1), 0, VALS(9, 1, 11, 3, 21, 13, 23, 15));
    rel(r);
    tn_tensor *i10 = I64(1, 0), *i32 = I64(3, 2);
    tn_tensor *idx_na[3] = {i10, NULL, i32};
    r = run(TN_OP_index_Tensor, ARGS(V_T(x), V_TL(idx_na, 3)), "index non-adjacent");
    CHECK_T("index nonadj", r, 2, SZ(2, 3), SZ(3, 1), 0, VALS(15, 19, 23, 2, 6, 10));
    rel(r);
    tn_tensor *mask = RESHAPED(BOOLS(0, 1, 1, 1, 1, 1), 2, 3);
    tn_tensor *idx_m[1] = {mask};
    r = run(TN_OP_index_Tensor, ARGS(V_T(x), V_TL(idx_m, 1)), "index mask");
    CHECK_T("index mask", r, 2, SZ(5, 4), SZ(4, 1), 0, VALS(4, 5, 6, 7, 8, 9, 10, 11, 12));
    rel(r);
    tn_tensor *neg = I64(-1);
    tn_tensor *idx_n[1] = {neg};
    r = run(TN_OP_index_Tensor, ARGS(V_T(x), V_TL(idx_n, 1)), "index -1");
    CHECK_T("index -1", r, 3, SZ(1, 3, 4), SZ(12, 4, 1), 0, VALS(12, 13, 14));
    rel(r);

    /* index_put_ accumulates duplicates; mask assignment */
    tn_tensor *y; /* a copy of x (clone belongs to the elementwise family) */
    tn_tensor_empty(3, x->sizes, x->dtype, tn_device_cpu(), &y);
    tn_shape_copy_same_dtype(y, x);
    tn_tensor *i00 = I64(0, 0), *i11 = I64(1, 1), *v4 = F32(1, 2, 3, 4);
    tn_tensor *idx_p[2] = {i00, i11};
    long ver = atomic_load(&y->storage->version);
    r = run(TN_OP_index_put_, ARGS(V_T(y), V_TL(idx_p, 2), V_T(v4), V_B(true)), "index_put_ acc");
    TN_CHECK(r == y, "index_put_ returns self");
    TN_CHECK(atomic_load(&y->storage->version) == ver + 1, "index_put_ bumps the version");
    rel(r);
    r = run(TN_OP_select_int, ARGS(V_T(y), V_I(0), V_I(0)), "y[0]");
    tn_tensor *r1 = run(TN_OP_select_int, ARGS(V_T(r), V_I(0), V_I(1)), "y[0,1]");
    CHECK_T("ip acc", r1, 1, SZ(4), SZ(1), 4, VALS(6, 9, 12, 15));
    rel(r1);
    rel(r);
    tn_tensor *neg1 = F32(-1);
    tn_tensor *scalar = run(TN_OP_view, ARGS(V_T(neg1), L0), "scalar");
    tn_tensor *xm = RESHAPED(BOOLS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1), 2, 3, 4);
    tn_tensor *idx_xm[1] = {xm};
    r = run(TN_OP_index_put, ARGS(V_T(x), V_TL(idx_xm, 1), V_T(scalar), V_B(false)), "index_put mask");
    CHECK_T("ip mask", r, 3, SZ(2, 3, 4), SZ(12, 4, 1), 0, VALS(0, 1, 2));
    if (r) TN_CHECK(elem(r, 20) == 20 && elem(r, 21) == -1 && elem(r, 23) == -1, "mask assignment");
    rel(r);
    expect_err(TN_OP_index_put_, ARGS(V_T(y), V_TL(idx_p, 2), V_T(i00), V_B(false)), TN_ERR_RUNTIME,
               "Index put requires the source and destination dtypes match, got Float for the destination and Long for the source.", "ip dt");

    /* masked_select / nonzero / where / masked_scatter / take_along_dim */
    tn_tensor *m4 = BOOLS(1, 0, 1, 0);
    r = run(TN_OP_masked_select, ARGS(V_T(x), V_T(m4)), "masked_select");
    CHECK_T("masked_select", r, 1, SZ(12), SZ(1), 0, VALS(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22));
    rel(r);
    tn_tensor *nzin = RESHAPED(I64(0, 1, 0, 2, 0, 3), 2, 3);
    r = run(TN_OP_nonzero, ARGS(V_T(nzin)), "nonzero");
    CHECK_T("nonzero", r, 2, SZ(3, 2), SZ(1, 3), 0, VALS(0, 1, 1, 0, 1, 2));
    rel(r);
    tn_value w[1];
    TN_CHECK(tn_dispatch(TN_OP_where, ARGS(V_T(nzin)), w) == TN_OK && w[0].u.tlist.n == 2, "where(cond)");
    if (w[0].tag == TN_V_TENSORLIST && w[0].u.tlist.n == 2) CHECK_T("where1", w[0].u.tlist.data[1], 1, SZ(3), SZ(1), 3, VALS(1, 0, 2));
    tn_value_release(&w[0]);
    tn_tensor *z23, *msk = RESHAPED(BOOLS(1, 0, 1, 0, 1, 0), 2, 3), *src5 = ARANGE(TN_DTYPE_FLOAT32, 5);
    tn_tensor_zeros(2, SZ(2, 3), TN_DTYPE_FLOAT32, tn_device_cpu(), &z23);
    r = run(TN_OP_masked_scatter, ARGS(V_T(z23), V_T(msk), V_T(src5)), "masked_scatter");
    CHECK_T("masked_scatter", r, 2, SZ(2, 3), SZ(3, 1), 0, VALS(0, 0, 1, 0, 2, 0));
    rel(r);
    tn_tensor *tadi = RESHAPED(I64(0, 3, 1), 3, 1);
    r = run(TN_OP_take_along_dim, ARGS(V_T(m), V_T(tadi), V_I(1)), "take_along_dim");
    CHECK_T("tad", r, 2, SZ(3, 1), SZ(1, 1), 0, VALS(0, 7, 9));
    rel(r);

    /* repeat_interleave */
    tn_tensor *rep = I64(2, 0, 1);
    r = run(TN_OP_repeat_interleave_Tensor, ARGS(V_T(rep), V_N()), "ri");
    CHECK_T("ri", r, 1, SZ(3), SZ(1), 0, VALS(0, 0, 2));
    rel(r);
    tn_tensor *m23 = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 6), 2, 3), *rep2 = I64(1, 2, 0);
    r = run(TN_OP_repeat_interleave_self_Tensor, ARGS(V_T(m23), V_T(rep2), V_I(1), V_N()), "ri self");
    CHECK_T("ri self", r, 2, SZ(2, 3), SZ(3, 1), 0, VALS(0, 1, 1, 3, 4, 4));
    rel(r);
    r = run(TN_OP_repeat_interleave_self_int, ARGS(V_T(m23), V_I(2), V_I(0), V_N()), "ri int");
    CHECK_T("ri int", r, 2, SZ(4, 3), SZ(3, 1), 0, VALS(0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5));
    rel(r);

    /* errors */
    tn_tensor *oob = I64(5), *i2d = RESHAPED(I64(0), 1, 1), *fidx = F32(1);
    tn_tensor *idx_oob[1] = {oob}, *idx_f[1] = {fidx}, *idx_many[4] = {neg, neg, neg, neg};
    tn_tensor *b01 = I64(0, 1), *b012 = I64(0, 1, 2), *idx_bc[2] = {b01, b012};
    tn_tensor *m3 = BOOLS(1, 1, 1), *idx_m3[1] = {m3};
    expect_err(TN_OP_index_Tensor, ARGS(V_T(x), V_TL(idx_oob, 1)), TN_ERR_INDEX, "index 5 is out of bounds for dimension 0 with size 2", "oob");
    expect_err(TN_OP_index_Tensor, ARGS(V_T(x), V_TL(idx_many, 4)), TN_ERR_INDEX, "too many indices for tensor of dimension 3", "many");
    expect_err(TN_OP_index_Tensor, ARGS(V_T(x), V_TL(idx_f, 1)), TN_ERR_INDEX,
               "tensors used as indices must be long, int, byte or bool tensors", "float idx");
    expect_err(TN_OP_index_Tensor, ARGS(V_T(x), V_TL(idx_bc, 2)), TN_ERR_INDEX,
               "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]", "bcast");
    expect_err(TN_OP_index_Tensor, ARGS(V_T(x), V_TL(idx_m3, 1)), TN_ERR_INDEX,
               "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [2, 3, 4] at index 0", "mask");
    expect_err(TN_OP_index_select, ARGS(V_T(x), V_I(1), V_T(i2d)), TN_ERR_INDEX, "index_select(): Index is supposed to be a vector", "is");
    expect_err(TN_OP_index_select, ARGS(V_T(x), V_I(1), V_T(i303)), TN_ERR_RUNTIME,
               "INDICES element is out of DATA bounds, id=3 axis_dim=3", "is oob");
    expect_err(TN_OP_index_select, ARGS(V_T(x), V_I(1), V_T(fidx)), TN_ERR_RUNTIME,
               "index_select(): Expected dtype int32 or int64 for index", "is dt");
    tn_tensor *g5 = RESHAPED(I64(5, 5, 5), 1, 3, 1);
    expect_err(TN_OP_gather, ARGS(V_T(x), V_I(1), V_T(g5), V_B(false)), TN_ERR_RUNTIME,
               "index 5 is out of bounds for dimension 1 with size 3", "gather oob");
    expect_err(TN_OP_gather, ARGS(V_T(x), V_I(1), V_T(gi), V_B(false)), TN_ERR_RUNTIME,
               "Index tensor must have the same number of dimensions as input tensor", "gather dims");
    expect_err(TN_OP_scatter_reduce_two, ARGS(V_T(s3), V_I(0), V_T(ix3), V_T(src3), V_S("foo"), V_B(true)), TN_ERR_RUNTIME,
               "reduce argument must be either sum, prod, mean, amax or amin, got foo", "sr foo");
    expect_err(TN_OP_scatter_src, ARGS(V_T(s3), V_I(0), V_T(ix3), V_T(isrc)), TN_ERR_RUNTIME,
               "scatter(): Expected self.dtype to be equal to src.dtype", "scatter dtype");
    expect_err(TN_OP_masked_select, ARGS(V_T(x), V_T(fidx)), TN_ERR_RUNTIME, "masked_select: expected BoolTensor for mask", "msel");
    tn_tensor *src1 = F32(1);
    expect_err(TN_OP_masked_scatter, ARGS(V_T(z23), V_T(msk), V_T(src1)), TN_ERR_RUNTIME,
               "Number of elements of source < number of ones in mask", "mscat");
    expect_err(TN_OP_repeat_interleave_Tensor, ARGS(V_T(isrc), V_N()), TN_ERR_RUNTIME, "repeats can not be negative", "ri neg");

    tn_tensor *all[] = {oob, i2d, fidx, b01, b012, m3, g5, src1, rep, m23, rep2, tadi, z23, msk, src5, nzin, m4, xm,
                        scalar, neg1, i00, i11, v4, y, neg, mask, i10, i32, i20, i13, si3, isrc, s3, ix3, src3,
                        si, ones, z34, gi, m, i303, x};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) rel(all[i]);
}

/* ---- sizes crossing vector widths: copies checked against index arithmetic ---------- */

static void test_sizes(void) {
    const int64_t ns[] = {1, 7, 31, 33, 1000, 1031};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
        int64_t n = ns[k];
        /* A (3, n) float32 and a (3, n) int64: transposed copies, cat, flip, narrow_copy. */
        tn_tensor *a = RESHAPED(ARANGE(TN_DTYPE_FLOAT32, 3 * n), 3, n), *r;
        tn_tensor *at = run(TN_OP_t, ARGS(V_T(a)), "t");
        r = run(TN_OP_contiguous, ARGS(V_T(at), (tn_value){.tag = TN_V_MEMFMT}), "contiguous");
        bool ok = r && r->ndim == 2 && r->sizes[0] == n;
        for (int64_t i = 0; ok && i < n; i++)
            for (int64_t j = 0; j < 3; j++) ok = ok && ((float *)tn_tensor_data(r))[i * 3 + j] == (float)(j * n + i);
        TN_CHECK(ok, "contiguous of transpose n=%lld", (long long)n);
        rel(r);
        tn_tensor *pair[2] = {at, at};
        r = run(TN_OP_cat, ARGS(V_TL(pair, 2), V_I(1)), "cat");
        ok = r && r->sizes[0] == n && r->sizes[1] == 6;
        for (int64_t i = 0; ok && i < n; i++)
            for (int64_t j = 0; j < 6; j++) ok = ok && elem(r, i * 6 + j) == (double)((j % 3) * n + i);
        TN_CHECK(ok, "cat n=%lld", (long long)n);
        rel(r);
        r = run(TN_OP_flip, ARGS(V_T(a), L(1)), "flip");
        ok = r != NULL;
        for (int64_t i = 0; ok && i < 3 * n; i++) ok = elem(r, i) == (double)((i / n) * n + (n - 1 - i % n));
        TN_CHECK(ok, "flip n=%lld", (long long)n);
        rel(r);
        r = run(TN_OP_narrow_copy, ARGS(V_T(a), V_I(1), V_I(n / 2), V_I(n - n / 2)), "narrow_copy");
        ok = r && r->storage != a->storage && tn_tensor_is_contiguous(r);
        for (int64_t i = 0; ok && i < 3 * (n - n / 2); i++)
            ok = elem(r, i) == (double)((i / (n - n / 2)) * n + n / 2 + i % (n - n / 2));
        TN_CHECK(ok, "narrow_copy n=%lld", (long long)n);
        rel(r);
        r = run(TN_OP_repeat, ARGS(V_T(a), L(2, 1)), "repeat");
        ok = r && r->sizes[0] == 6;
        for (int64_t i = 0; ok && i < 6 * n; i++) ok = elem(r, i) == (double)(i % (3 * n));
        TN_CHECK(ok, "repeat n=%lld", (long long)n);
        rel(r);
        /* index_select / gather with reversed indices, int64 */
        tn_tensor *b = RESHAPED(ARANGE(TN_DTYPE_INT64, 3 * n), 3, n);
        int64_t *rv = malloc(sizeof(int64_t) * (size_t)n);
        for (int64_t i = 0; i < n; i++) rv[i] = n - 1 - i;
        tn_tensor *rix = from_i64(n, rv);
        free(rv);
        r = run(TN_OP_index_select, ARGS(V_T(b), V_I(1), V_T(rix)), "index_select");
        ok = r != NULL;
        for (int64_t i = 0; ok && i < 3 * n; i++) ok = elem(r, i) == (double)((i / n) * n + (n - 1 - i % n));
        TN_CHECK(ok, "index_select n=%lld", (long long)n);
        rel(r);
        tn_tensor *rix2 = run(TN_OP_expand, ARGS(V_T(rix), L(3, n), V_B(false)), "expand idx");
        r = run(TN_OP_gather, ARGS(V_T(b), V_I(1), V_T(rix2), V_B(false)), "gather");
        ok = r != NULL;
        for (int64_t i = 0; ok && i < 3 * n; i++) ok = elem(r, i) == (double)((i / n) * n + (n - 1 - i % n));
        TN_CHECK(ok, "gather n=%lld", (long long)n);
        rel(r);
        tn_tensor *idx1[2] = {NULL, rix};
        r = run(TN_OP_index_Tensor, ARGS(V_T(b), V_TL(idx1, 2)), "index");
        ok = r != NULL;
        for (int64_t i = 0; ok && i < 3 * n; i++) ok = elem(r, i) == (double)((i / n) * n + (n - 1 - i % n));
        TN_CHECK(ok, "index n=%lld", (long long)n);
        rel(r);
        rel(rix2);
        rel(rix);
        rel(b);
        rel(at);
        rel(a);
    }
}

/* ---- meta tensors: geometry without data -------------------------------------------- */

static void test_meta(void) {
    tn_tensor *x, *r;
    tn_device meta = {TN_DEVICE_META, -1};
    tn_tensor_empty(3, SZ(2, 3, 4), TN_DTYPE_BFLOAT16, meta, &x);
    r = run(TN_OP_view, ARGS(V_T(x), L(6, 4)), "meta view");
    CHECK_T("meta view", r, 2, SZ(6, 4), SZ(4, 1), 0, NOVALS);
    rel(r);
    tn_tensor *tr = run(TN_OP_transpose_int, ARGS(V_T(x), V_I(1), V_I(2)), "meta t");
    r = run(TN_OP_reshape, ARGS(V_T(tr), L(-1)), "meta reshape copy");
    CHECK_T("meta reshape", r, 1, SZ(24), SZ(1), 0, NOVALS);
    TN_CHECK(r && tn_tensor_is_meta(r), "meta stays meta");
    rel(r);
    tn_tensor *l[2] = {x, x};
    r = run(TN_OP_cat, ARGS(V_TL(l, 2), V_I(-1)), "meta cat");
    CHECK_T("meta cat", r, 3, SZ(2, 3, 8), SZ(24, 8, 1), 0, NOVALS);
    rel(r);
    r = run(TN_OP_constant_pad_nd, ARGS(V_T(x), L(1, 1), V_I(0)), "meta pad");
    CHECK_T("meta pad", r, 3, SZ(2, 3, 6), SZ(18, 6, 1), 0, NOVALS);
    rel(r);
    rel(tr);
    rel(x);
}

int main(void) {
    test_views();
    test_view_errors();
    test_splits();
    test_assembly();
    test_indexing();
    test_sizes();
    test_meta();
    return tn_test_summary();
}
