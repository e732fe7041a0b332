/* creation_factory.c — the shape-given factories (empty, empty_strided, zeros, ones, full,
 * scalar_tensor, eye, tril/triu_indices), their *_like and new_* forms, complex/polar,
 * and the geometry-mutating in-place ops (resize_, resize_as_, as_strided_, lift*).
 *
 * out= overloads of factories are registered here (not derived by the door) because their
 * argument lists drop the option block: the door's copy-back would misread them. */
#include <math.h>
#include <string.h>

#include "core/threadpool.h"
#include "kernels/cast.h"
#include "ops/creation_internal.h"
#include "ops/iter.h"
#include "ops/promote.h"
#include "ops/shape.h"
#include "ops/scalar_convert.h"

static tn_status ret_tensor(tn_tensor *t, tn_value *rets) {
    rets[0] = tn_value_tensor(t);
    return TN_OK;
}

/* A factory result of sizes filled with `fill` (NULL: uninitialised, zero: zeroed). */
static tn_status make_filled(int nd, const int64_t *sz, tn_dtype dt, tn_device dev, int memfmt, bool zero,
                             const tn_value *fill, tn_tensor **out) {
    tn_tensor *t;
    TN_TRY(tn_factory_empty(nd, sz, dt, dev, memfmt, zero, &t));
    if (fill) {
        tn_status st = tn_factory_fill(t, fill);
        if (st != TN_OK) { tn_tensor_release(t); return st; }
    }
    *out = t;
    return TN_OK;
}

/* Shared body of empty/zeros/ones/full: args[size_at] = size, opts at opts_at. */
static tn_status factory(const tn_value *size, const tn_value *opts, int memfmt, bool zero, const tn_value *fill,
                         tn_dtype inferred, tn_value *rets) {
    int nd;
    int64_t sz[TN_MAX_DIMS];
    tn_factory_opts o;
    TN_TRY(tn_factory_opts_read(opts, tn_device_cpu(), &o));
    TN_TRY(tn_factory_sizes(size, &nd, sz));
    tn_dtype dt = o.dtype != TN_DTYPE_UNDEFINED ? o.dtype : inferred;
    tn_tensor *t;
    TN_TRY(make_filled(nd, sz, dt, o.device, memfmt, zero, fill, &t));
    return ret_tensor(t, rets);
}

/* aten::empty.memory_format(SymInt[] size, *, dtype, layout, device, pin_memory, memory_format) */
tn_status tn_op_empty_memory_format(const tn_value *args, tn_value *rets) {
    return factory(&args[0], &args[1], tn_factory_memfmt(&args[5]), false, NULL, tn_default_dtype(), rets);
}

/* aten::zeros(SymInt[] size, *, dtype, layout, device, pin_memory) */
tn_status tn_op_zeros(const tn_value *args, tn_value *rets) {
    /* CPU's zeros checks sizes itself before allocating (meta reports the generic text) */
    bool meta = args[3].tag == TN_V_DEVICE && tn_device_is_meta(args[3].u.device);
    if (!meta && args[0].tag == TN_V_INTLIST)
        for (int64_t i = 0; i < args[0].u.ilist.n; i++)
            if (args[0].u.ilist.data[i] < 0) return tn_error(TN_ERR_RUNTIME, "zeros: Dimension size must be non-negative.");
    return factory(&args[0], &args[1], TN_MEMFMT_NONE, true, NULL, tn_default_dtype(), rets);
}

/* aten::ones(SymInt[] size, *, dtype, layout, device, pin_memory) */
tn_status tn_op_ones(const tn_value *args, tn_value *rets) {
    tn_value one = tn_value_int(1);
    return factory(&args[0], &args[1], TN_MEMFMT_NONE, false, &one, tn_default_dtype(), rets);
}

/* aten::full(SymInt[] size, Scalar fill_value, *, dtype, layout, device, pin_memory):
 * without dtype, the fill value's kind decides (bool, int64, default float/complex). */
tn_status tn_op_full(const tn_value *args, tn_value *rets) {
    return factory(&args[0], &args[2], TN_MEMFMT_NONE, false, &args[1], tn_factory_scalar_dtype(&args[1]), rets);
}

/* aten::scalar_tensor(Scalar s, *, dtype, layout, device, pin_memory): dtype None is the
 * default float dtype whatever the Scalar's kind (upstream does not infer here). */
tn_status tn_op_scalar_tensor(const tn_value *args, tn_value *rets) {
    tn_value none = {.tag = TN_V_INTLIST};
    return factory(&none, &args[1], TN_MEMFMT_NONE, false, &args[0], tn_default_dtype(), rets);
}

/* Checks an explicit (sizes, strides) geometry as upstream's empty_strided does. */
static tn_status strided_geometry(const tn_value *size, const tn_value *stride, int *nd, int64_t *sz, int64_t *st) {
    TN_TRY(tn_factory_sizes(size, nd, sz));
    if (stride->u.ilist.n != *nd)
        return tn_error(TN_ERR_RUNTIME, "dimensionality of sizes (%d) must match dimensionality of strides (%lld)", *nd,
                        (long long)stride->u.ilist.n);
    /* upstream sums stride * (size - 1) unsigned: a negative stride overflows unless its
     * size is 1 (or some size is 0, where the storage is empty) */
    bool bad = false, empty = false;
    for (int i = 0; i < *nd; i++) {
        st[i] = stride->u.ilist.data[i];
        if (st[i] < 0 && sz[i] != 1) bad = true;
        if (sz[i] == 0) empty = true;
    }
    if (bad && !empty) {
        char b1[400], b2[400];
        return tn_error(TN_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s and strides=%s",
                        tn_format_sizes(*nd, sz, b1, sizeof b1), tn_format_sizes(*nd, st, b2, sizeof b2));
    }
    /* then the tensor takes no negative stride: upstream's set_sizes_and_strides gives such a
     * dim the stride it would have if contiguous below it (1 for the innermost) */
    for (int i = *nd - 1; i >= 0; i--)
        if (st[i] < 0) st[i] = i == *nd - 1 ? 1 : tn_mul_wrap(sz[i + 1] > 1 ? sz[i + 1] : 1, st[i + 1]);
    return TN_OK;
}

static tn_status empty_strided_impl(const tn_value *size, const tn_value *stride, const tn_value *opts,
                                    tn_dtype dflt_dtype, tn_device dflt_dev, tn_value *rets) {
    int nd;
    int64_t sz[TN_MAX_DIMS], st[TN_MAX_DIMS];
    tn_factory_opts o;
    TN_TRY(tn_factory_opts_read(opts, dflt_dev, &o));
    TN_TRY(strided_geometry(size, stride, &nd, sz, st));
    tn_tensor *t;
    TN_TRY(tn_tensor_empty_strided(nd, sz, st, o.dtype != TN_DTYPE_UNDEFINED ? o.dtype : dflt_dtype, o.device, &t));
    return ret_tensor(t, rets);
}

/* aten::empty_strided(SymInt[] size, SymInt[] stride, *, dtype, layout, device, pin_memory) */
tn_status tn_op_empty_strided(const tn_value *args, tn_value *rets) {
    return empty_strided_impl(&args[0], &args[1], &args[2], tn_default_dtype(), tn_device_cpu(), rets);
}

/* ---- eye, tril_indices, triu_indices ----------------------------------------------------- */

static tn_status eye_impl(int64_t n, int64_t m, const tn_value *opts, tn_value *rets) {
    if (n < 0) return tn_error(TN_ERR_RUNTIME, "n must be greater or equal to 0, got %lld", (long long)n);
    if (m < 0) return tn_error(TN_ERR_RUNTIME, "m must be greater or equal to 0, got %lld", (long long)m);
    tn_factory_opts o;
    TN_TRY(tn_factory_opts_read(opts, tn_device_cpu(), &o));
    tn_dtype dt = o.dtype != TN_DTYPE_UNDEFINED ? o.dtype : tn_default_dtype();
    int64_t sz[2] = {n, m};
    tn_tensor *t;
    TN_TRY(tn_tensor_zeros(2, sz, dt, o.device, &t));
    char *d = tn_tensor_data(t);
    if (d) {
        unsigned char one[16];
        tn_value v = tn_value_int(1);
        tn_status st = tn_scalar_to_bytes(&v, dt, one);
        if (st != TN_OK) { tn_tensor_release(t); return st; }
        int w = tn_dtype_itemsize(dt);
        for (int64_t i = 0; i < (n < m ? n : m); i++) memcpy(d + (i * m + i) * w, one, (size_t)w);
    }
    return ret_tensor(t, rets);
}

/* aten::eye(SymInt n, *, dtype, layout, device, pin_memory) */
tn_status tn_op_eye(const tn_value *args, tn_value *rets) { return eye_impl(args[0].u.i, args[0].u.i, &args[1], rets); }

/* aten::eye.m(SymInt n, SymInt m, *, dtype, layout, device, pin_memory) */
tn_status tn_op_eye_m(const tn_value *args, tn_value *rets) { return eye_impl(args[0].u.i, args[1].u.i, &args[2], rets); }

/* Entries of rows [0, row) of a row x col matrix with clamp(r + a, 0, col) entries in row
 * r, in closed form: the rows before the first full one form a trapezoid, the rest a
 * rectangle. Exact in 128 bits for any int64 arguments (a loop over the rows would take
 * forever for row = 2**63 - 1, and int64 arithmetic would wrap). */
static unsigned __int128 tri_prefix_count(int64_t row, int64_t col, __int128 a) {
    __int128 lo = a, hi = a + row - 1, sum = 0; /* the values r + a over the rows */
    __int128 p = lo > 0 ? lo : 0, q = hi < col ? hi : col;
    if (q >= p) sum += (unsigned __int128)(p + q) * (unsigned __int128)(q - p + 1) / 2;
    __int128 f = lo > (__int128)col + 1 ? lo : (__int128)col + 1;
    if (hi >= f) sum += (unsigned __int128)col * (unsigned __int128)(hi - f + 1);
    return (unsigned __int128)sum;
}

/* Upstream writes the (row, col) pairs of the triangle in row-major order into a 2 x N
 * tensor; tril keeps col <= row + offset, triu keeps col >= row + offset. The count is
 * exact (upstream's meta path computes it with Python ints; its CPU path wraps in int64),
 * and only rows with entries are visited, so the work is bounded by the result's size. */
static tn_status tri_indices(const tn_value *args, bool lower, const char *name, tn_value *rets) {
    int64_t row = args[0].u.i, col = args[1].u.i, off = args[2].u.i;
    if (row < 0) return tn_error(TN_ERR_RUNTIME, "row must be non-negative, got%lld", (long long)row);
    if (col < 0) return tn_error(TN_ERR_RUNTIME, "col must be non-negative, got%lld", (long long)col);
    tn_factory_opts o;
    TN_TRY(tn_factory_opts_read(&args[3], tn_device_cpu(), &o));
    tn_dtype dt = o.dtype != TN_DTYPE_UNDEFINED ? o.dtype : TN_DTYPE_INT64;
    if (dt != TN_DTYPE_INT64 && dt != TN_DTYPE_INT32)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", name, tn_dtype_infos[dt].c10_name);
    /* tril: row r has clamp(r + off + 1, 0, col) entries; triu: col - clamp(r + off, 0, col) */
    unsigned __int128 n = lower ? tri_prefix_count(row, col, (__int128)off + 1)
                                : (unsigned __int128)row * (unsigned __int128)col - tri_prefix_count(row, col, off);
    if (n > (unsigned __int128)INT64_MAX) /* smaller counts: the allocation reports the overflow */
        return tn_error(TN_ERR_RUNTIME, "Storage size calculation overflowed: %s(%lld, %lld, %lld) has more than "
                        "2**63 - 1 entries", name, (long long)row, (long long)col, (long long)off);
    int64_t count = (int64_t)n, sz[2] = {2, count};
    tn_tensor *t;
    TN_TRY(tn_tensor_empty(2, sz, dt, o.device, &t));
    char *d = tn_tensor_data(t);
    if (d && count) {
        /* rows with entries: tril from r = -off on (each to the end), triu up to r < col - off */
        __int128 r0 = lower && off < 0 ? -(__int128)off : 0, r1 = row;
        if (!lower && (__int128)col - off < r1) r1 = (__int128)col - off;
        int64_t k = 0;
        for (__int128 r = r0; r < r1; r++) {
            __int128 lo = lower ? 0 : r + off, hi = lower ? r + off + 1 : col;
            if (lo < 0) lo = 0;
            if (hi > col) hi = col;
            for (int64_t c = (int64_t)lo; c < (int64_t)hi; c++, k++) {
                if (dt == TN_DTYPE_INT64) { ((int64_t *)d)[k] = (int64_t)r; ((int64_t *)d)[count + k] = c; }
                else { ((int32_t *)d)[k] = (int32_t)r; ((int32_t *)d)[count + k] = (int32_t)c; }
            }
        }
    }
    return ret_tensor(t, rets);
}

/* aten::tril_indices(int row, int col, int offset=0, *, dtype=long, layout, device, pin_memory) */
tn_status tn_op_tril_indices(const tn_value *args, tn_value *rets) { return tri_indices(args, true, "tril_indices", rets); }

/* aten::triu_indices(int row, int col, int offset=0, *, dtype=long, layout, device, pin_memory) */
tn_status tn_op_triu_indices(const tn_value *args, tn_value *rets) { return tri_indices(args, false, "triu_indices", rets); }

/* ---- *_like and new_* --------------------------------------------------------------------- */

/* Body of the *_like factories: options default to self's dtype and device. */
static tn_status like(const tn_value *args, const tn_value *opts, int memfmt, bool zero, const tn_value *fill,
                      tn_value *rets) {
    const tn_tensor *self = args[0].u.t;
    tn_factory_opts o;
    TN_TRY(tn_factory_opts_read(opts, tn_tensor_device(self), &o));
    tn_dtype dt = o.dtype != TN_DTYPE_UNDEFINED ? o.dtype : self->dtype;
    tn_tensor *t;
    TN_TRY(tn_factory_empty_like(self, dt, o.device, memfmt, &t));
    tn_status st = TN_OK;
    if (zero) {
        tn_value z = tn_value_int(0);
        st = tn_factory_fill(t, &z);
    } else if (fill) {
        st = tn_factory_fill(t, fill);
    }
    if (st != TN_OK) { tn_tensor_release(t); return st; }
    return ret_tensor(t, rets);
}

/* aten::empty_like(Tensor self, *, dtype, layout, device, pin_memory, memory_format) */
tn_status tn_op_empty_like(const tn_value *args, tn_value *rets) {
    return like(args, &args[1], tn_factory_memfmt(&args[5]), false, NULL, rets);
}
/* aten::zeros_like(Tensor self, *, dtype, layout, device, pin_memory, memory_format) */
tn_status tn_op_zeros_like(const tn_value *args, tn_value *rets) {
    return like(args, &args[1], tn_factory_memfmt(&args[5]), true, NULL, rets);
}
/* aten::ones_like(Tensor self, *, dtype, layout, device, pin_memory, memory_format) */
tn_status tn_op_ones_like(const tn_value *args, tn_value *rets) {
    tn_value one = tn_value_int(1);
    return like(args, &args[1], tn_factory_memfmt(&args[5]), false, &one, rets);
}
/* aten::full_like(Tensor self, Scalar fill_value, *, dtype, layout, device, pin_memory, memory_format) */
tn_status tn_op_full_like(const tn_value *args, tn_value *rets) {
    return like(args, &args[2], tn_factory_memfmt(&args[6]), false, &args[1], rets);
}

/* Body of new_empty/new_zeros/new_ones/new_full: a fresh contiguous tensor of `size` whose
 * dtype and device default to self's. */
static tn_status new_factory(const tn_value *args, const tn_value *opts, bool zero, const tn_value *fill,
                             tn_value *rets) {
    const tn_tensor *self = args[0].u.t;
    int nd;
    int64_t sz[TN_MAX_DIMS];
    tn_factory_opts o;
    TN_TRY(tn_factory_opts_read(opts, tn_tensor_device(self), &o));
    TN_TRY(tn_factory_sizes(&args[1], &nd, sz));
    tn_tensor *t;
    TN_TRY(make_filled(nd, sz, o.dtype != TN_DTYPE_UNDEFINED ? o.dtype : self->dtype, o.device, TN_MEMFMT_NONE, zero,
                       fill, &t));
    return ret_tensor(t, rets);
}

/* aten::new_empty(Tensor self, SymInt[] size, *, dtype, layout, device, pin_memory) */
tn_status tn_op_new_empty(const tn_value *args, tn_value *rets) { return new_factory(args, &args[2], false, NULL, rets); }
/* aten::new_zeros(Tensor self, SymInt[] size, *, dtype, layout, device, pin_memory) */
tn_status tn_op_new_zeros(const tn_value *args, tn_value *rets) { return new_factory(args, &args[2], true, NULL, rets); }
/* aten::new_ones(Tensor self, SymInt[] size, *, dtype, layout, device, pin_memory) */
tn_status tn_op_new_ones(const tn_value *args, tn_value *rets) {
    tn_value one = tn_value_int(1);
    return new_factory(args, &args[2], false, &one, rets);
}
/* aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, dtype, layout, device, pin_memory) */
tn_status tn_op_new_full(const tn_value *args, tn_value *rets) { return new_factory(args, &args[3], false, &args[2], rets); }
/* aten::new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, dtype, layout, device, pin_memory) */
tn_status tn_op_new_empty_strided(const tn_value *args, tn_value *rets) {
    const tn_tensor *self = args[0].u.t;
    return empty_strided_impl(&args[1], &args[2], &args[3], self->dtype, tn_tensor_device(self), rets);
}

/* ---- out= overloads: the functional op in out's dtype and device, then moved into out --- */

/* Runs `fn` on fargs (whose option block at opts_at is set from out) and moves the result.
 * `autogen`: the out= form upstream generates from the functional (the *_like and new_*
 * factories), which copies the result into out with copy_, whose iterator refuses an out
 * that overlaps itself when out keeps its shape (a resized out has fresh strides). */
static tn_status via_out(tn_op_fn fn, tn_value *fargs, int opts_at, tn_tensor *out, tn_value *rets, bool autogen) {
    fargs[opts_at] = tn_factory_dtype_value(out->dtype);
    fargs[opts_at + 1] = tn_factory_none();
    fargs[opts_at + 2] = tn_factory_device_value(tn_tensor_device(out));
    fargs[opts_at + 3] = tn_factory_none();
    tn_value r;
    TN_TRY(fn(fargs, &r));
    const tn_tensor *res = r.u.t;
    if (autogen && out->ndim == res->ndim && memcmp(out->sizes, res->sizes, sizeof(int64_t) * (size_t)res->ndim) == 0) {
        tn_status st = tn_iter_check_overlap(out, NULL);
        if (st != TN_OK) { tn_tensor_release(r.u.t); return st; }
    }
    return tn_factory_into_out(r.u.t, out, rets);
}

/* aten::empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) */
tn_status tn_op_empty_out(const tn_value *args, tn_value *rets) {
    tn_tensor *out = args[2].u.t;
    int nd;
    int64_t sz[TN_MAX_DIMS];
    if (args[1].tag != TN_V_NONE)
        return tn_error(TN_ERR_RUNTIME, "'memory_format' argument is incompatible with 'out' tensor argument");
    TN_TRY(tn_factory_sizes(&args[0], &nd, sz));
    /* resize only, and only to another shape (upstream's resize_output): the contents and
     * geometry of an out of the requested shape stay as they are */
    bool same = out->ndim == nd;
    for (int i = 0; same && i < nd; i++) same = out->sizes[i] == sz[i];
    if (!same) TN_TRY(tn_tensor_resize(out, nd, sz));
    tn_tensor_retain(out);
    return ret_tensor(out, rets);
}
/* aten::zeros.out(SymInt[] size, *, Tensor(a!) out) */
tn_status tn_op_zeros_out(const tn_value *args, tn_value *rets) {
    tn_value f[5] = {args[0]};
    return via_out(tn_op_zeros, f, 1, args[1].u.t, rets, false);
}
/* aten::ones.out(SymInt[] size, *, Tensor(a!) out) */
tn_status tn_op_ones_out(const tn_value *args, tn_value *rets) {
    tn_value f[5] = {args[0]};
    return via_out(tn_op_ones, f, 1, args[1].u.t, rets, false);
}
/* aten::full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out) */
tn_status tn_op_full_out(const tn_value *args, tn_value *rets) {
    tn_value f[6] = {args[0], args[1]};
    return via_out(tn_op_full, f, 2, args[2].u.t, rets, false);
}
/* aten::scalar_tensor.out(Scalar s, *, Tensor(a!) out) */
tn_status tn_op_scalar_tensor_out(const tn_value *args, tn_value *rets) {
    tn_value f[5] = {args[0]};
    return via_out(tn_op_scalar_tensor, f, 1, args[1].u.t, rets, false);
}
/* aten::empty_strided.out(SymInt[] size, SymInt[] stride, *, Tensor(a!) out) */
tn_status tn_op_empty_strided_out(const tn_value *args, tn_value *rets) {
    tn_value f[6] = {args[0], args[1]};
    return via_out(tn_op_empty_strided, f, 2, args[2].u.t, rets, false);
}
/* aten::eye.out(SymInt n, *, Tensor(a!) out) */
tn_status tn_op_eye_out(const tn_value *args, tn_value *rets) {
    tn_value f[5] = {args[0]};
    return via_out(tn_op_eye, f, 1, args[1].u.t, rets, false);
}
/* aten::eye.m_out(SymInt n, SymInt m, *, Tensor(a!) out) */
tn_status tn_op_eye_m_out(const tn_value *args, tn_value *rets) {
    tn_value f[6] = {args[0], args[1]};
    return via_out(tn_op_eye_m, f, 2, args[2].u.t, rets, false);
}

/* *_like.out(self, [fill,] *, memory_format, out) and new_*.out(self, size, [...], out). */
static tn_status like_out(tn_op_fn fn, const tn_value *args, int nlead, tn_value *rets) {
    tn_value f[8];
    for (int i = 0; i < nlead; i++) f[i] = args[i];
    f[nlead + 4] = args[nlead]; /* memory_format */
    return via_out(fn, f, nlead, args[nlead + 1].u.t, rets, true);
}
/* aten::empty_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) */
tn_status tn_op_empty_like_out(const tn_value *args, tn_value *rets) { return like_out(tn_op_empty_like, args, 1, rets); }
/* aten::zeros_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) */
tn_status tn_op_zeros_like_out(const tn_value *args, tn_value *rets) { return like_out(tn_op_zeros_like, args, 1, rets); }
/* aten::ones_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) */
tn_status tn_op_ones_like_out(const tn_value *args, tn_value *rets) { return like_out(tn_op_ones_like, args, 1, rets); }
/* aten::full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? memory_format=None, Tensor(a!) out) */
tn_status tn_op_full_like_out(const tn_value *args, tn_value *rets) { return like_out(tn_op_full_like, args, 2, rets); }

static tn_status new_out(tn_op_fn fn, const tn_value *args, int nlead, tn_value *rets) {
    tn_value f[8];
    for (int i = 0; i < nlead; i++) f[i] = args[i];
    return via_out(fn, f, nlead, args[nlead].u.t, rets, true);
}
/* aten::new_empty.out(Tensor self, SymInt[] size, *, Tensor(a!) out) */
tn_status tn_op_new_empty_out(const tn_value *args, tn_value *rets) { return new_out(tn_op_new_empty, args, 2, rets); }
/* aten::new_zeros.out(Tensor self, SymInt[] size, *, Tensor(a!) out) */
tn_status tn_op_new_zeros_out(const tn_value *args, tn_value *rets) { return new_out(tn_op_new_zeros, args, 2, rets); }
/* aten::new_ones.out(Tensor self, SymInt[] size, *, Tensor(a!) out) */
tn_status tn_op_new_ones_out(const tn_value *args, tn_value *rets) { return new_out(tn_op_new_ones, args, 2, rets); }
/* aten::new_full.out(Tensor self, SymInt[] size, Scalar fill_value, *, Tensor(a!) out) */
tn_status tn_op_new_full_out(const tn_value *args, tn_value *rets) { return new_out(tn_op_new_full, args, 3, rets); }
/* aten::new_empty_strided.out(Tensor self, SymInt[] size, SymInt[] stride, *, Tensor(a!) out) */
tn_status tn_op_new_empty_strided_out(const tn_value *args, tn_value *rets) {
    return new_out(tn_op_new_empty_strided, args, 3, rets);
}

/* ---- complex, polar -----------------------------------------------------------------------
 * Upstream's TensorIterator kernels over (out, a, b): the parts broadcast, the result
 * allocated in the complex dtype with the iterator's layout, split across the pool; a derived
 * out= form's tensor taken when it fits (iter.h, tn_iter_offer). */

/* complex / polar's parts: both floating (Half too for complex) and of one dtype, in
 * upstream's words. */
static tn_status parts_check(const tn_tensor *x, const tn_tensor *y, bool half_ok) {
    tn_dtype a = x->dtype, b = y->dtype;
    bool fa = (half_ok && a == TN_DTYPE_FLOAT16) || a == TN_DTYPE_FLOAT32 || a == TN_DTYPE_FLOAT64;
    bool fb = (half_ok && b == TN_DTYPE_FLOAT16) || b == TN_DTYPE_FLOAT32 || b == TN_DTYPE_FLOAT64;
    if (!fa || !fb)
        return tn_error(TN_ERR_RUNTIME, "Expected both inputs to be %sFloat or Double tensors but got %s and %s",
                        half_ok ? "Half, " : "", tn_dtype_infos[a].c10_name, tn_dtype_infos[b].c10_name);
    if (a != b)
        return tn_error(TN_ERR_RUNTIME, "Expected object of scalar type %s but got scalar type %s for second argument",
                        tn_dtype_infos[a].c10_name, tn_dtype_infos[b].c10_name);
    return TN_OK;
}

/* complex.out / polar.out: out must be the parts' complex dtype exactly (upstream's
 * complex_check_dtype), after the parts' own checks; the rest is the derived out=. */
static tn_status parts_out(tn_op_id op, const tn_value *args, bool half_ok, tn_value *rets) {
    tn_tensor *x = args[0].u.t, *out = args[2].u.t;
    TN_TRY(parts_check(x, args[1].u.t, half_ok));
    tn_dtype want = tn_dtype_to_complex(x->dtype);
    if (out->dtype != want)
        return tn_error(TN_ERR_RUNTIME, "Expected object of scalar type %s but got scalar type %s for argument 'out'",
                        tn_dtype_infos[want].c10_name, tn_dtype_infos[out->dtype].c10_name);
    return tn_dispatch_derived(op, args, rets);
}
tn_status tn_op_complex_out(const tn_value *args, tn_value *rets) { return parts_out(TN_OP_complex_out, args, true, rets); }
tn_status tn_op_polar_out(const tn_value *args, tn_value *rets) { return parts_out(TN_OP_polar_out, args, false, rets); }

/* out[k] = (a[k], b[k]) by part width: a copy of each part's bits (O3: the contiguous loop
 * vectorises into interleaving stores; at O2 complex() took 1.45x upstream's time at 1e6) */
#pragma GCC push_options
#pragma GCC optimize("O3")
#define TN_PARTS_LOOP(name, UT)                                                                    \
    static void name(char **d, const int64_t *s, int64_t n, void *ctx) {                           \
        (void)ctx;                                                                                 \
        if (s[0] == 2 * (int64_t)sizeof(UT) && s[1] == (int64_t)sizeof(UT) && s[2] == (int64_t)sizeof(UT)) { \
            UT *o = (UT *)d[0];                                                                    \
            const UT *a = (const UT *)d[1], *b = (const UT *)d[2];                                 \
            for (int64_t k = 0; k < n; k++) o[2 * k] = a[k], o[2 * k + 1] = b[k];                  \
            return;                                                                                \
        }                                                                                          \
        for (int64_t k = 0; k < n; k++) {                                                          \
            UT re, im;                                                                             \
            memcpy(&re, d[1] + k * s[1], sizeof re);                                               \
            memcpy(&im, d[2] + k * s[2], sizeof im);                                               \
            memcpy(d[0] + k * s[0], &re, sizeof re);                                               \
            memcpy(d[0] + k * s[0] + sizeof re, &im, sizeof im);                                   \
        }                                                                                          \
    }
TN_PARTS_LOOP(complex_loop_2, uint16_t)
TN_PARTS_LOOP(complex_loop_4, uint32_t)
TN_PARTS_LOOP(complex_loop_8, uint64_t)
#pragma GCC pop_options
/* out[k] = a[k] cos b[k] + i a[k] sin b[k] in the parts' type (float math for float32, as
 * upstream's std::cos(float)) */
#define TN_POLAR_LOOP(name, T, COS, SIN)                                                           \
    static void name(char **d, const int64_t *s, int64_t n, void *ctx) {                           \
        (void)ctx;                                                                                 \
        for (int64_t k = 0; k < n; k++) {                                                          \
            T r, t, v[2];                                                                          \
            memcpy(&r, d[1] + k * s[1], sizeof r);                                                 \
            memcpy(&t, d[2] + k * s[2], sizeof t);                                                 \
            v[0] = r * COS(t);                                                                     \
            v[1] = r * SIN(t);                                                                     \
            memcpy(d[0] + k * s[0], v, sizeof v);                                                  \
        }                                                                                          \
    }
TN_POLAR_LOOP(polar_loop_f32, float, cosf, sinf)
TN_POLAR_LOOP(polar_loop_f64, double, cos, sin)

static tn_status parts_run(tn_tensor *a, tn_tensor *b, tn_loop_fn loop, tn_value *rets) {
    tn_iter_config c = tn_iter_config_init(1, 2);
    c.inputs[0] = a;
    c.inputs[1] = b;
    c.check_all_same_dtype = false;
    c.output_dtype = tn_dtype_to_complex(a->dtype);
    c.preferred_output = tn_iter_offer_take(rets);
    tn_iter it;
    TN_TRY(tn_iter_build(&it, &c));
    tn_iter_for_each(&it, loop, NULL);
    rets[0] = tn_value_tensor(tn_iter_take_output(&it, 0));
    tn_iter_release(&it);
    return TN_OK;
}

/* aten::complex(Tensor real, Tensor imag): the parts' bits side by side. */
tn_status tn_op_complex(const tn_value *args, tn_value *rets) {
    tn_tensor *re = args[0].u.t, *im = args[1].u.t;
    TN_TRY(parts_check(re, im, true));
    int w = tn_dtype_itemsize(re->dtype);
    return parts_run(re, im, w == 2 ? complex_loop_2 : w == 4 ? complex_loop_4 : complex_loop_8, rets);
}

/* aten::polar(Tensor abs, Tensor angle): abs * cos(angle) + i abs * sin(angle) in the
 * parts' precision. */
tn_status tn_op_polar(const tn_value *args, tn_value *rets) {
    tn_tensor *ab = args[0].u.t, *an = args[1].u.t;
    TN_TRY(parts_check(ab, an, false));
    return parts_run(ab, an, ab->dtype == TN_DTYPE_FLOAT32 ? polar_loop_f32 : polar_loop_f64, rets);
}

/* ---- geometry in place --------------------------------------------------------------------- */

static tn_status resize_impl(tn_tensor *self, int nd, const int64_t *sz, int memfmt) {
    if (memfmt == TN_MEMFMT_PRESERVE) return tn_error(TN_ERR_RUNTIME, "Unsupported memory formatPreserve");
    bool same = self->ndim == nd && memcmp(self->sizes, sz, sizeof(int64_t) * (size_t)nd) == 0;
    /* Same sizes and no format request: upstream keeps the strides (no restride). */
    if (!same || memfmt != TN_MEMFMT_NONE) {
        if (memfmt == TN_MEMFMT_CHANNELS_LAST && nd != 4)
            return tn_error(TN_ERR_RUNTIME, "required rank 4 tensor to use channels_last format");
        if (memfmt == TN_MEMFMT_CHANNELS_LAST_3D && nd != 5)
            return tn_error(TN_ERR_RUNTIME, "required rank 5 tensor to use channels_last_3d format");
        TN_TRY(tn_tensor_resize(self, nd, sz));
        if (memfmt == TN_MEMFMT_CHANNELS_LAST || memfmt == TN_MEMFMT_CHANNELS_LAST_3D) {
            tn_tensor *probe;
            /* the strides of a fresh tensor in that format (meta: no memory) */
            TN_TRY(tn_factory_empty(nd, sz, self->dtype, (tn_device){TN_DEVICE_META, -1}, memfmt, false, &probe));
            memcpy(self->strides, probe->strides, sizeof(int64_t) * (size_t)nd);
            tn_tensor_release(probe);
        }
    }
    return TN_OK;
}

/* aten::resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) */
tn_status tn_op_resize_(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int nd;
    int64_t sz[TN_MAX_DIMS];
    TN_TRY(tn_factory_sizes(&args[1], &nd, sz));
    TN_TRY(resize_impl(self, nd, sz, tn_factory_memfmt(&args[2])));
    tn_tensor_retain(self);
    return ret_tensor(self, rets);
}

/* aten::resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? memory_format=None) */
tn_status tn_op_resize_as_(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    const tn_tensor *tpl = args[1].u.t;
    int memfmt = tn_factory_memfmt(&args[2]);
    if (memfmt == TN_MEMFMT_PRESERVE) memfmt = tn_factory_suggest_memfmt(tpl);
    TN_TRY(resize_impl(self, tpl->ndim, tpl->sizes, memfmt));
    tn_tensor_retain(self);
    return ret_tensor(self, rets);
}

/* aten::as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None):
 * the checks of as_strided (shape family), then self takes the geometry. */
tn_status tn_op_as_strided_(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    tn_value r;
    TN_TRY(tn_dispatch(TN_OP_as_strided, args, &r));
    tn_tensor *v = r.u.t;
    self->ndim = v->ndim;
    memcpy(self->sizes, v->sizes, sizeof(int64_t) * (size_t)v->ndim);
    memcpy(self->strides, v->strides, sizeof(int64_t) * (size_t)v->ndim);
    self->offset = v->offset;
    tn_tensor_release(v);
    tn_tensor_retain(self);
    return ret_tensor(self, rets);
}

/* aten::lift(Tensor self) / aten::lift_fresh(Tensor(a) self): identity outside functorch. */
tn_status tn_op_lift(const tn_value *args, tn_value *rets) {
    tn_tensor_retain(args[0].u.t);
    return ret_tensor(args[0].u.t, rets);
}
tn_status tn_op_lift_fresh(const tn_value *args, tn_value *rets) { return tn_op_lift(args, rets); }

/* aten::lift_fresh_copy(Tensor self): a clone. */
tn_status tn_op_lift_fresh_copy(const tn_value *args, tn_value *rets) {
    tn_value a[2] = {args[0], tn_factory_none()};
    return tn_dispatch(TN_OP_clone, a, rets);
}
