/* random.c — the random-number operators (uniform_, normal_, random_, bernoulli_,
 * exponential_, geometric_, log_normal_, cauchy_, their functional forms, the rand/randn/
 * randint/randperm factories and *_like variants, normal's tensor overloads, multinomial):
 * argument checks with upstream's messages, output allocation, then the sampling kernels.
 *
 * In-place overloads are registered themselves (not derived through copy_) because the
 * element order of the draws follows the written tensor's strides, as upstream's does.
 * Meta tensors get shapes only and consume no draws. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/generator.h"
#include "core/scalar.h"
#include "kernels/random.h"
#include "ops/iter.h"
#include "ops/dispatch.h"
#include "ops/promote.h"
#include "ops/shape.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static tn_generator *gen_of(const tn_value *v) {
    return v->tag == TN_V_GENERATOR && v->u.ptr ? (tn_generator *)v->u.ptr : tn_generator_default();
}

static double num(const tn_value *v) { return v->tag == TN_V_COMPLEX ? 0.0 : tn_scalar_as_double(v); }

static void strided_of(const tn_tensor *t, tn_strided *s) {
    s->data = tn_tensor_data(t);
    s->ndim = t->ndim;
    s->sizes = t->sizes;
    s->strides = t->strides;
    s->dtype = t->dtype;
}

/* caffe2::TypeMeta's name of a dtype, which upstream prints in these messages (dtype table). */
static const char *typemeta_name(tn_dtype d) { return tn_dtype_infos[d].cpp_name; }

static bool is_floatish(tn_dtype d) {
    return d == TN_DTYPE_FLOAT32 || d == TN_DTYPE_FLOAT64 || d == TN_DTYPE_FLOAT16 || d == TN_DTYPE_BFLOAT16;
}

/* assert_no_internal_overlap: a broadcast (stride 0) dimension of size > 1 is refused. */
static tn_status check_no_internal_overlap(const tn_tensor *t) {
    for (int d = 0; d < t->ndim; d++)
        if (t->sizes[d] > 1 && t->strides[d] == 0)
            return tn_error(TN_ERR_RUNTIME,
                            "unsupported operation: more than one element of the written-to tensor refers to a "
                            "single memory location. Please clone() the tensor before performing the operation.");
    return TN_OK;
}

static tn_status ret_self(tn_tensor *self, tn_value *rets) {
    tn_tensor_retain(self);
    rets[0] = tn_value_tensor(self);
    return TN_OK;
}

/* Whether upstream's fill runs at all: meta tensors and empty tensors draw nothing. */
static bool skip_fill(const tn_tensor *t) { return tn_tensor_is_meta(t) || tn_tensor_numel(t) == 0; }

/* view_as_real for complex outputs: the float view with a trailing dimension of 2. */
static bool real_view(const tn_tensor *t, tn_strided *s, int64_t *sz, int64_t *st) {
    if (!tn_dtype_is_complex(t->dtype)) return false;
    tn_dtype r = tn_dtype_to_real(t->dtype);
    for (int d = 0; d < t->ndim; d++) { sz[d] = t->sizes[d]; st[d] = t->strides[d] * 2; }
    sz[t->ndim] = 2;
    st[t->ndim] = 1;
    s->data = tn_tensor_data(t);
    s->ndim = t->ndim + 1;
    s->sizes = sz;
    s->strides = st;
    s->dtype = r;
    return true;
}

/* Strides empty_like(preserve_format) gives: the same strides when `t` is non-overlapping
 * and dense, else dense strides in t's dimension order (the shared helpers in iter.c). */
static void preserve_strides(const tn_tensor *t, int64_t *strides) {
    if (tn_tensor_is_non_overlapping_and_dense(t)) memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    else tn_tensor_dense_strides_like(t, strides);
}

/* New tensor of `sizes` with explicit strides (dense, starting at offset 0). */
static tn_status new_strided(int nd, const int64_t *sizes, const int64_t *strides, tn_dtype dt, tn_device dev,
                             tn_tensor **out) {
    tn_tensor *base;
    TN_TRY(tn_tensor_empty(nd, sizes, dt, dev, &base));
    if (strides) {
        tn_tensor *v = tn_tensor_new_view(base->storage, 0, nd, sizes, strides, dt);
        tn_tensor_release(base);
        if (!v) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        base = v;
    }
    *out = base;
    return TN_OK;
}

/* empty_like(self, dtype, memory_format): memfmt < 0 or 1 preserve, 0 contiguous,
 * 2 channels_last (4-D). */
static tn_status empty_like(const tn_tensor *self, tn_dtype dt, tn_device dev, int memfmt, tn_tensor **out) {
    int64_t st[TN_MAX_DIMS];
    if (memfmt == 0) return new_strided(self->ndim, self->sizes, NULL, dt, dev, out);
    if (memfmt == 2) {
        if (self->ndim != 4) return tn_error(TN_ERR_RUNTIME, "required rank 4 tensor to use channels_last format");
        const int64_t *s = self->sizes;
        int64_t c = s[1] > 1 ? s[1] : 1, w = s[3] > 1 ? s[3] : 1, h = s[2] > 1 ? s[2] : 1;
        st[1] = 1; st[3] = c; st[2] = c * w; st[0] = c * w * h;
        return new_strided(4, s, st, dt, dev, out);
    }
    if (memfmt == 3) return tn_error(TN_ERR_NOT_IMPLEMENTED, "memory_format=channels_last_3d is not implemented by torchnative for random factories");
    preserve_strides(self, st);
    return new_strided(self->ndim, self->sizes, st, dt, dev, out);
}

/* Factory options: dtype (or `fallback`), layout strided only, device cpu or meta. */
static tn_status factory_opts(const tn_value *dtype, const tn_value *layout, const tn_value *device, tn_dtype fallback,
                              tn_dtype *dt, tn_device *dev) {
    *dt = dtype->tag == TN_V_DTYPE ? dtype->u.dtype : fallback;
    if (layout->tag == TN_V_LAYOUT && layout->u.layout != 0)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "non-strided layouts are not implemented by torchnative for random factories");
    *dev = device->tag == TN_V_DEVICE ? device->u.device : tn_device_cpu();
    if (dev->type != TN_DEVICE_CPU && dev->type != TN_DEVICE_META)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "random factories on device type %d are not implemented by torchnative",
                        (int)dev->type);
    return TN_OK;
}

/* ---- uniform_ ---------------------------------------------------------------------------- */

static double dtype_lowest(tn_dtype d) {
    switch (d) {
    case TN_DTYPE_FLOAT32: return -3.4028234663852886e38;
    case TN_DTYPE_FLOAT16: return -65504.0;
    case TN_DTYPE_BFLOAT16: return -3.3895313892515355e38;
    default: return -1.7976931348623157e308;
    }
}

static tn_status uniform_inplace(tn_tensor *self, double from, double to, tn_generator *g) {
    int64_t sz[TN_MAX_DIMS + 1], st[TN_MAX_DIMS + 1];
    tn_strided s;
    if (!real_view(self, &s, sz, st)) {
        if (!is_floatish(self->dtype) && tn_tensor_is_meta(self)) return TN_OK; /* upstream's meta kernel: no check */
        if (!is_floatish(self->dtype))
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"check_uniform_bounds\" not implemented for '%s'",
                            tn_dtype_infos[self->dtype].c10_name);
        strided_of(self, &s);
    }
    double lo = dtype_lowest(s.dtype), hi = -lo;
    const char *tm = typemeta_name(s.dtype);
    if (!(from >= lo && from <= hi)) return tn_error(TN_ERR_RUNTIME, "from is out of bounds for %s", tm);
    if (!(to >= lo && to <= hi)) return tn_error(TN_ERR_RUNTIME, "to is out of bounds for %s", tm);
    if (!(from <= to))
        return tn_error(TN_ERR_RUNTIME, "uniform_ expects to return a [from, to) range, but found from=%g > to=%g", from, to);
    if (!(to - from <= hi))
        return tn_error(TN_ERR_RUNTIME,
                        "uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found to=%g and from=%g which "
                        "result in to-from to exceed the limit",
                        tn_dtype_infos[s.dtype].c10_name, to, from);
    if (skip_fill(self)) return TN_OK;
    TN_TRY(check_no_internal_overlap(self));
    return tn_random_uniform(g, &s, from, to);
}

static tn_status normal_inplace(tn_tensor *self, double mean, double std, tn_generator *g) {
    if (!(std >= 0.0)) return tn_error(TN_ERR_RUNTIME, "normal expects std >= 0.0, but found std %g", std);
    /* the meta kernel checks the dtype (the CPU one names it as not implemented, below) */
    if (tn_tensor_is_meta(self) && !tn_dtype_is_floating(self->dtype) && !tn_dtype_is_complex(self->dtype))
        return tn_error(TN_ERR_RUNTIME, "expected a floating-point or complex dtype, but got dtype=torch.%s",
                        tn_dtype_infos[self->dtype].py_name);
    if (skip_fill(self)) return TN_OK;
    TN_TRY(check_no_internal_overlap(self));
    int64_t sz[TN_MAX_DIMS + 1], st[TN_MAX_DIMS + 1];
    tn_strided s;
    if (real_view(self, &s, sz, st)) return tn_random_normal(g, &s, mean, std / sqrt(2.0));
    strided_of(self, &s);
    return tn_random_normal(g, &s, mean, std);
}

/* ---- random_ ------------------------------------------------------------------------------ */

static int float_digits(tn_dtype d) {
    switch (d) {
    case TN_DTYPE_FLOAT32: return 24;
    case TN_DTYPE_FLOAT16: return 11;
    case TN_DTYPE_BFLOAT16: return 8;
    default: return 53;
    }
}

/* static_cast<int64_t>(static_cast<scalar_t>(v)) for the floating dtypes */
static int64_t round_trip(tn_dtype d, int64_t v) {
    switch (d) {
    case TN_DTYPE_FLOAT32: return (int64_t)(float)v;
    case TN_DTYPE_FLOAT16: return (int64_t)tn_round_half_f32((float)v);
    case TN_DTYPE_BFLOAT16: return (int64_t)tn_round_bf16_f32((float)v);
    default: return (int64_t)(double)v;
    }
}

/* update_from / update_to: move bounds inward so the cast to the dtype stays in range. */
static int64_t update_from(tn_dtype d, int64_t from) {
    /* from = INT64_MAX: upstream's from + 1 overflows and its bit count of |from + 1| never
     * ends (a hang); it stays 2**63 - 1 here, which the to_inc check then refuses */
    if (from == INT64_MAX) return from;
    int64_t fp1 = round_trip(d, from + 1);
    if (fp1 < from) {
        int64_t f = llabs(from + 1);
        int n = 0;
        while (f >>= 1) ++n;
        from = fp1 + (INT64_C(1) << (n - float_digits(d) + 1));
    }
    return from;
}

static int64_t update_to(tn_dtype d, int64_t to) {
    int64_t tm1 = round_trip(d, to - 1);
    if (tm1 >= to) {
        int64_t t = llabs(to - 1);
        int n = 0;
        while (t >>= 1) ++n;
        to = tm1 - (INT64_C(1) << (n - float_digits(d) + 1));
    }
    return to;
}

static tn_status int_bounds(tn_dtype d, int64_t *lo, int64_t *hi) {
    switch (d) {
    case TN_DTYPE_BOOL: *lo = 0; *hi = 1; return TN_OK;
    case TN_DTYPE_UINT8: *lo = 0; *hi = 255; return TN_OK;
    case TN_DTYPE_INT8: *lo = -128; *hi = 127; return TN_OK;
    case TN_DTYPE_INT16: *lo = -32768; *hi = 32767; return TN_OK;
    case TN_DTYPE_UINT16: *lo = 0; *hi = 65535; return TN_OK;
    case TN_DTYPE_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return TN_OK;
    case TN_DTYPE_UINT32: *lo = 0; *hi = UINT32_MAX; return TN_OK;
    case TN_DTYPE_INT64: *lo = INT64_MIN; *hi = INT64_MAX; return TN_OK;
    case TN_DTYPE_UINT64: *lo = 0; *hi = INT64_MAX; return TN_OK;
    default: return tn_error(TN_ERR_RUNTIME, "check_random_bounds handles only integral, floating-point and boolean types");
    }
}

static tn_status check_from_to_in_range(tn_dtype d, int64_t from, int64_t to_inc) {
    const char *tm = typemeta_name(d);
    if (is_floatish(d)) {
        double lo = dtype_lowest(d), hi = -lo;
        if (!((double)from >= lo && (double)from <= hi)) return tn_error(TN_ERR_RUNTIME, "from is out of bounds for %s", tm);
        if (!((double)to_inc >= lo && (double)to_inc <= hi))
            return tn_error(TN_ERR_RUNTIME, "to - 1 is out of bounds for %s", tm);
        return TN_OK; /* upstream only warns beyond 2^digits */
    }
    int64_t lo, hi;
    TN_TRY(int_bounds(d, &lo, &hi));
    if (!(from >= lo && from <= hi)) return tn_error(TN_ERR_RUNTIME, "from is out of bounds for %s", tm);
    if (!(to_inc >= lo && to_inc <= hi)) return tn_error(TN_ERR_RUNTIME, "to - 1 is out of bounds for %s", tm);
    return TN_OK;
}

/* random_from_to_impl: [from, to) when `has_to`, [from, max] otherwise, the full 64-bit
 * range for from == INT64_MIN without `to`. */
static tn_status random_from_to_inplace(tn_tensor *self, int64_t from, bool has_to, int64_t to, tn_generator *g) {
    tn_dtype d = self->dtype;
    /* upstream builds its TensorIterator first: a self with elements that overlap itself
     * refuses before from / to are looked at */
    if (tn_tensor_numel(self) > 0) TN_TRY(check_no_internal_overlap(self));
    tn_strided s;
    strided_of(self, &s);
    uint64_t range;
    if (has_to) {
        if (!(from < to))
            return tn_error(TN_ERR_RUNTIME, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                            (long long)from, (long long)to);
        if (is_floatish(d)) {
            from = update_from(d, from);
            to = update_to(d, to);
            if (!(from < to))
                return tn_error(TN_ERR_RUNTIME,
                                "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
                                "from=%lld >= to=%lld", (long long)from, (long long)to);
        }
        TN_TRY(check_from_to_in_range(d, from, to - 1));
        if (skip_fill(self)) return TN_OK;
        range = (uint64_t)to - (uint64_t)from;
    } else if (from != INT64_MIN) {
        int64_t to_inc;
        if (is_floatish(d)) {
            int dig = float_digits(d);
            to_inc = INT64_C(1) << dig;
            from = update_from(d, from);
            if (!(from < to_inc))
                return tn_error(TN_ERR_RUNTIME,
                                "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to "
                                "dtype, but got from=%lld > to_inc=%lld", (long long)from, (long long)to_inc);
        } else {
            int64_t lo;
            TN_TRY(int_bounds(d, &lo, &to_inc));
        }
        TN_TRY(check_from_to_in_range(d, from, to_inc));
        if (skip_fill(self)) return TN_OK;
        range = (uint64_t)to_inc - (uint64_t)from + 1;
    } else {
        if (skip_fill(self)) return TN_OK;
        TN_TRY(check_no_internal_overlap(self));
        return tn_random_full_range(g, &s);
    }
    TN_TRY(check_no_internal_overlap(self));
    return tn_random_from_to(g, &s, range, from);
}

/* ---- in-place operators --------------------------------------------------------------------- */

/* aten::uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) */
static tn_status op_uniform_(const tn_value *a, tn_value *r) {
    TN_TRY(uniform_inplace(a[0].u.t, num(&a[1]), num(&a[2]), gen_of(&a[3])));
    return ret_self(a[0].u.t, r);
}

static tn_status op_normal_(const tn_value *a, tn_value *r) {
    TN_TRY(normal_inplace(a[0].u.t, num(&a[1]), num(&a[2]), gen_of(&a[3])));
    return ret_self(a[0].u.t, r);
}

static tn_status op_random_(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t;
    if (!skip_fill(self)) {
        TN_TRY(check_no_internal_overlap(self));
        tn_strided s;
        strided_of(self, &s);
        TN_TRY(tn_random_random(gen_of(&a[1]), &s));
    }
    return ret_self(self, r);
}

static tn_status op_random__from(const tn_value *a, tn_value *r) {
    bool has_to = a[2].tag != TN_V_NONE;
    TN_TRY(random_from_to_inplace(a[0].u.t, a[1].u.i, has_to, has_to ? a[2].u.i : 0, gen_of(&a[3])));
    return ret_self(a[0].u.t, r);
}

static tn_status op_random__to(const tn_value *a, tn_value *r) {
    TN_TRY(random_from_to_inplace(a[0].u.t, 0, true, a[1].u.i, gen_of(&a[2])));
    return ret_self(a[0].u.t, r);
}

static tn_status bernoulli_scalar_inplace(tn_tensor *self, double p, tn_generator *g) {
    if (!(0 <= p && p <= 1)) return tn_error(TN_ERR_RUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
    if (skip_fill(self)) return TN_OK;
    TN_TRY(check_no_internal_overlap(self));
    tn_strided s;
    strided_of(self, &s);
    return tn_random_bernoulli_scalar(g, &s, p);
}

/* bernoulli_(p tensor): p is expanded to self's shape (expand_inplace). */
static tn_status bernoulli_tensor_inplace(tn_tensor *self, const tn_tensor *p, tn_generator *g) {
    if (skip_fill(self)) return TN_OK;
    TN_TRY(check_no_internal_overlap(self));
    if (p->ndim > self->ndim) goto bad_shape;
    int64_t psz[TN_MAX_DIMS], pst[TN_MAX_DIMS];
    for (int d = 0; d < self->ndim; d++) {
        int pd = d - (self->ndim - p->ndim);
        int64_t ps = pd >= 0 ? p->sizes[pd] : 1;
        if (ps != self->sizes[d] && ps != 1) goto bad_shape;
        psz[d] = self->sizes[d];
        pst[d] = (pd >= 0 && ps == self->sizes[d]) ? p->strides[pd] : 0;
    }
    if (tn_tensor_is_meta(p)) return tn_error(TN_ERR_NOT_IMPLEMENTED, "bernoulli_ with a meta p on a CPU tensor is not implemented by torchnative");
    tn_strided s, ps = {tn_tensor_data(p), self->ndim, psz, pst, p->dtype};
    strided_of(self, &s);
    return tn_random_bernoulli_tensor(g, &s, &ps);
bad_shape: {
        char b1[160], b2[160];
        return tn_error(TN_ERR_RUNTIME, "The size of tensor a (%s) must match the size of tensor b (%s)",
                        tn_format_sizes(p->ndim, p->sizes, b1, sizeof b1),
                        tn_format_sizes(self->ndim, self->sizes, b2, sizeof b2));
    }
}

static tn_status op_bernoulli__float(const tn_value *a, tn_value *r) {
    TN_TRY(bernoulli_scalar_inplace(a[0].u.t, num(&a[1]), gen_of(&a[2])));
    return ret_self(a[0].u.t, r);
}

static tn_status op_bernoulli__Tensor(const tn_value *a, tn_value *r) {
    TN_TRY(bernoulli_tensor_inplace(a[0].u.t, a[1].u.t, gen_of(&a[2])));
    return ret_self(a[0].u.t, r);
}

static tn_status op_exponential_(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t;
    double l = num(&a[1]);
    if (!(l > 0.0)) return tn_error(TN_ERR_RUNTIME, "exponential_ expects lambda > 0.0, but found lambda=%g", l);
    /* the meta kernel checks the dtype too; an empty CPU tensor is returned first */
    if (!skip_fill(self) || tn_tensor_is_meta(self)) {
        if (!is_floatish(self->dtype))
            return tn_error(TN_ERR_RUNTIME, "Exponential distribution is a continuous probability distribution. dtype "
                            "must be a floating point but you specified %s", tn_dtype_infos[self->dtype].c10_name);
        if (tn_tensor_is_meta(self)) return ret_self(self, r);
        TN_TRY(check_no_internal_overlap(self));
        tn_strided s;
        strided_of(self, &s);
        TN_TRY(tn_random_exponential(gen_of(&a[2]), &s, l));
    }
    return ret_self(self, r);
}

static tn_status op_geometric_(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t;
    double p = num(&a[1]);
    if (!(0 < p && p < 1)) return tn_error(TN_ERR_RUNTIME, "geometric_ expects p to be in (0, 1), but got p=%g", p);
    if (!skip_fill(self)) {
        TN_TRY(check_no_internal_overlap(self));
        tn_strided s;
        strided_of(self, &s);
        TN_TRY(tn_random_geometric(gen_of(&a[2]), &s, p));
    }
    return ret_self(self, r);
}

static tn_status op_log_normal_(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t;
    double mean = num(&a[1]), std = num(&a[2]);
    if (!(std > 0.0)) return tn_error(TN_ERR_RUNTIME, "log_normal_ expects std > 0.0, but found std=%g", std);
    if (tn_tensor_is_meta(self) && !is_floatish(self->dtype))
        return tn_error(TN_ERR_RUNTIME, "log_normal not implemented for torch.%s", tn_dtype_infos[self->dtype].py_name);
    if (!skip_fill(self)) {
        TN_TRY(check_no_internal_overlap(self));
        tn_strided s;
        strided_of(self, &s);
        TN_TRY(tn_random_log_normal(gen_of(&a[3]), &s, mean, std));
    }
    return ret_self(self, r);
}

static tn_status op_cauchy_(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t;
    double median = num(&a[1]), sigma = num(&a[2]);
    if (!(sigma > 0.0)) return tn_error(TN_ERR_RUNTIME, "cauchy_ expects sigma > 0.0, but found sigma=%g", sigma);
    if (!is_floatish(self->dtype))
        return tn_error(TN_ERR_RUNTIME, "Cauchy distribution is a continuous probability distribution. dtype must be a "
                        "floating point but you specified %s", typemeta_name(self->dtype));
    if (!skip_fill(self)) {
        TN_TRY(check_no_internal_overlap(self));
        tn_strided s;
        strided_of(self, &s);
        TN_TRY(tn_random_cauchy(gen_of(&a[3]), &s, median, sigma));
    }
    return ret_self(self, r);
}

/* ---- functional forms: a fresh tensor shaped like self (strides preserved, as clone()
 *      does), filled by the in-place operator ------------------------------------------------ */

typedef tn_status (*inplace_fn)(const tn_value *, tn_value *);

static tn_status functional_via(const tn_value *a, tn_value *r, int nargs, inplace_fn fn, int memfmt) {
    tn_tensor *self = a[0].u.t, *out;
    TN_TRY(empty_like(self, self->dtype, tn_tensor_device(self), memfmt, &out));
    tn_value args[8];
    memcpy(args, a, sizeof(tn_value) * (size_t)nargs);
    args[0] = tn_value_tensor(out);
    tn_value tmp[1];
    tn_status st = fn(args, tmp);
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    tn_tensor_release(tmp[0].u.t);
    r[0] = tn_value_tensor(out);
    return TN_OK;
}

static tn_status op_uniform(const tn_value *a, tn_value *r) { return functional_via(a, r, 4, op_uniform_, 1); }
static tn_status op_normal_functional(const tn_value *a, tn_value *r) { return functional_via(a, r, 4, op_normal_, 1); }
static tn_status op_random(const tn_value *a, tn_value *r) { return functional_via(a, r, 2, op_random_, 1); }
static tn_status op_random_from(const tn_value *a, tn_value *r) { return functional_via(a, r, 4, op_random__from, 1); }
static tn_status op_random_to(const tn_value *a, tn_value *r) { return functional_via(a, r, 3, op_random__to, 1); }
static tn_status op_exponential(const tn_value *a, tn_value *r) { return functional_via(a, r, 3, op_exponential_, 1); }
static tn_status op_geometric(const tn_value *a, tn_value *r) { return functional_via(a, r, 3, op_geometric_, 1); }
static tn_status op_log_normal(const tn_value *a, tn_value *r) { return functional_via(a, r, 4, op_log_normal_, 1); }
static tn_status op_cauchy(const tn_value *a, tn_value *r) { return functional_via(a, r, 4, op_cauchy_, 1); }
static tn_status op_bernoulli_Tensor(const tn_value *a, tn_value *r) {
    return functional_via(a, r, 3, op_bernoulli__Tensor, 1);
}
/* bernoulli.p(self, p): empty_like(self, LEGACY_CONTIGUOUS).bernoulli_(p) */
static tn_status op_bernoulli_p(const tn_value *a, tn_value *r) { return functional_via(a, r, 3, op_bernoulli__float, 0); }

/* bernoulli(self): self holds the probabilities; result = empty_like(self, contiguous). */
static tn_status op_bernoulli(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t, *out;
    TN_TRY(empty_like(self, self->dtype, tn_tensor_device(self), 0, &out));
    tn_status st = bernoulli_tensor_inplace(out, self, gen_of(&a[1]));
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    r[0] = tn_value_tensor(out);
    return TN_OK;
}

/* ---- factories ------------------------------------------------------------------------------ */

static tn_status new_filled(const tn_value *size, tn_dtype dt, tn_device dev, tn_tensor **out) {
    if (size->u.ilist.n > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions", TN_MAX_DIMS);
    return tn_tensor_empty((int)size->u.ilist.n, size->u.ilist.data, dt, dev, out);
}

/* shared tail: run `fill` on a fresh tensor and hand it out */
static tn_status finish(tn_tensor *out, tn_status st, tn_value *r) {
    if (st != TN_OK) { tn_tensor_release(out); return st; }
    r[0] = tn_value_tensor(out);
    return TN_OK;
}

/* rand(size, [generator], dtype, layout, device, pin_memory); gen_at < 0: no generator */
static tn_status rand_common(const tn_value *a, tn_value *r, int gen_at, bool normal) {
    int o = gen_at < 0 ? 1 : 2;
    tn_dtype dt;
    tn_device dev;
    TN_TRY(factory_opts(&a[o], &a[o + 1], &a[o + 2], tn_default_dtype(), &dt, &dev));
    tn_tensor *out;
    TN_TRY(new_filled(&a[0], dt, dev, &out));
    tn_generator *g = gen_at < 0 ? tn_generator_default() : gen_of(&a[gen_at]);
    return finish(out, normal ? normal_inplace(out, 0, 1, g) : uniform_inplace(out, 0, 1, g), r);
}

static tn_status op_rand(const tn_value *a, tn_value *r) { return rand_common(a, r, -1, false); }
static tn_status op_rand_generator(const tn_value *a, tn_value *r) { return rand_common(a, r, 1, false); }
static tn_status op_randn(const tn_value *a, tn_value *r) { return rand_common(a, r, -1, true); }
static tn_status op_randn_generator(const tn_value *a, tn_value *r) { return rand_common(a, r, 1, true); }

/* randint([low,] high, size, [generator], dtype=long, ...) */
static tn_status randint_common(const tn_value *a, tn_value *r, bool has_low, bool has_gen) {
    int i = 0;
    int64_t low = has_low ? a[i++].u.i : 0;
    int64_t high = a[i++].u.i;
    const tn_value *size = &a[i++];
    tn_generator *g = has_gen ? gen_of(&a[i++]) : tn_generator_default();
    tn_dtype dt;
    tn_device dev;
    /* the schema's default is long (filled in when dtype is omitted); an explicit None is the
     * factory default, the default float dtype, as upstream's aten op (torch.randint's own
     * Python signature maps None to long before it calls the op) */
    TN_TRY(factory_opts(&a[i], &a[i + 1], &a[i + 2], tn_default_dtype(), &dt, &dev));
    tn_tensor *out;
    TN_TRY(new_filled(size, dt, dev, &out));
    return finish(out, random_from_to_inplace(out, low, true, high, g), r);
}

static tn_status op_randint(const tn_value *a, tn_value *r) { return randint_common(a, r, false, false); }
static tn_status op_randint_generator(const tn_value *a, tn_value *r) { return randint_common(a, r, false, true); }
static tn_status op_randint_low(const tn_value *a, tn_value *r) { return randint_common(a, r, true, false); }
static tn_status op_randint_low_generator(const tn_value *a, tn_value *r) { return randint_common(a, r, true, true); }

/* normal.float_float(mean, std, size, *, generator, dtype, layout, device, pin_memory) */
static tn_status op_normal_float_float(const tn_value *a, tn_value *r) {
    tn_dtype dt;
    tn_device dev;
    TN_TRY(factory_opts(&a[4], &a[5], &a[6], tn_default_dtype(), &dt, &dev));
    tn_tensor *out;
    TN_TRY(new_filled(&a[2], dt, dev, &out));
    return finish(out, normal_inplace(out, num(&a[0]), num(&a[1]), gen_of(&a[3])), r);
}

/* randperm(n, [generator], dtype=long, ...) */
static tn_status randperm_common(const tn_value *a, tn_value *r, bool has_gen) {
    int64_t n = a[0].u.i;
    int o = has_gen ? 2 : 1;
    tn_generator *g = has_gen ? gen_of(&a[1]) : tn_generator_default();
    tn_dtype dt;
    tn_device dev;
    TN_TRY(factory_opts(&a[o], &a[o + 1], &a[o + 2], TN_DTYPE_INT64, &dt, &dev));
    if (n < 0) return tn_error(TN_ERR_RUNTIME, "n must be non-negative, got%lld", (long long)n);
    if (dt == TN_DTYPE_FLOAT16 && n > (INT64_C(1) << 11) + 1)
        return tn_error(TN_ERR_RUNTIME, "n cannot be greater than 2049 for Half type.");
    if (dt == TN_DTYPE_FLOAT32 && n > (INT64_C(1) << 24) + 1)
        return tn_error(TN_ERR_RUNTIME, "n cannot be greater than 2^24+1 for Float type.");
    if (dt == TN_DTYPE_FLOAT64 && n > (INT64_C(1) << 53) + 1)
        return tn_error(TN_ERR_RUNTIME, "n cannot be greater than 2^53+1 for Double type.");
    if (!is_floatish(dt)) {
        int64_t lo, hi;
        if (dt == TN_DTYPE_BOOL || int_bounds(dt, &lo, &hi) != TN_OK)
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"randperm\" not implemented for '%s'", tn_dtype_infos[dt].c10_name);
        if (n > 0 && n - 1 > hi)
            return tn_error(TN_ERR_RUNTIME, "n is too large for result tensor type: '%s'", tn_dtype_infos[dt].c10_name);
    }
    tn_tensor *out;
    TN_TRY(tn_tensor_empty(1, &n, dt, dev, &out));
    tn_status st = TN_OK;
    if (!tn_tensor_is_meta(out)) {
        tn_strided s;
        strided_of(out, &s);
        st = tn_random_randperm(g, &s, n);
    }
    return finish(out, st, r);
}

static tn_status op_randperm(const tn_value *a, tn_value *r) { return randperm_common(a, r, false); }
static tn_status op_randperm_generator(const tn_value *a, tn_value *r) { return randperm_common(a, r, true); }

/* ---- *_like ---------------------------------------------------------------------------------- */

enum { LIKE_RAND, LIKE_RANDN, LIKE_RANDINT };

/* (self, [low,] [high], [generator], dtype, layout, device, pin_memory, memory_format) */
static tn_status like_common(const tn_value *a, tn_value *r, int kind, int nbounds, bool high_tensor, bool has_gen) {
    tn_tensor *self = a[0].u.t;
    int i = 1;
    int64_t low = 0, high = 0;
    if (nbounds == 2) low = a[i++].u.i;
    if (nbounds >= 1) {
        if (high_tensor) {
            const tn_tensor *h = a[i++].u.t;
            if (h->ndim != 0 || tn_tensor_is_meta(h))
                return tn_error(TN_ERR_RUNTIME, "high must be a scalar tensor and on CPU");
            if (tn_tensor_numel(h) != 1)
                return tn_error(TN_ERR_RUNTIME, "a Tensor with %lld elements cannot be converted to Scalar",
                                (long long)tn_tensor_numel(h));
            tn_strided hs;
            strided_of(h, &hs);
            switch (h->dtype) {
            case TN_DTYPE_INT64: high = *(const int64_t *)hs.data; break;
            case TN_DTYPE_INT32: high = *(const int32_t *)hs.data; break;
            case TN_DTYPE_INT16: high = *(const int16_t *)hs.data; break;
            case TN_DTYPE_INT8: high = *(const int8_t *)hs.data; break;
            case TN_DTYPE_UINT8: high = *(const uint8_t *)hs.data; break;
            default: return tn_error(TN_ERR_NOT_IMPLEMENTED, "randint_like with a %s high tensor is not implemented by torchnative", tn_dtype_infos[h->dtype].c10_name);
            }
        } else {
            high = a[i++].u.i;
        }
    }
    tn_generator *g = has_gen ? gen_of(&a[i++]) : tn_generator_default();
    tn_dtype dt;
    tn_device dev;
    tn_value nodev = {.tag = TN_V_NONE};
    TN_TRY(factory_opts(&a[i], &a[i + 1], &nodev, self->dtype, &dt, &dev));
    dev = a[i + 2].tag == TN_V_DEVICE ? a[i + 2].u.device : tn_tensor_device(self);
    int memfmt = a[i + 4].tag == TN_V_MEMFMT ? a[i + 4].u.memfmt : 1;
    tn_tensor *out;
    TN_TRY(empty_like(self, dt, dev, memfmt, &out));
    tn_status st;
    if (kind == LIKE_RAND) st = uniform_inplace(out, 0, 1, g);
    else if (kind == LIKE_RANDN) st = normal_inplace(out, 0, 1, g);
    else st = random_from_to_inplace(out, low, true, high, g);
    return finish(out, st, r);
}

static tn_status op_rand_like(const tn_value *a, tn_value *r) { return like_common(a, r, LIKE_RAND, 0, false, false); }
static tn_status op_rand_like_generator(const tn_value *a, tn_value *r) { return like_common(a, r, LIKE_RAND, 0, false, true); }
static tn_status op_randn_like(const tn_value *a, tn_value *r) { return like_common(a, r, LIKE_RANDN, 0, false, false); }
static tn_status op_randn_like_generator(const tn_value *a, tn_value *r) { return like_common(a, r, LIKE_RANDN, 0, false, true); }
static tn_status op_randint_like(const tn_value *a, tn_value *r) { return like_common(a, r, LIKE_RANDINT, 1, false, false); }
static tn_status op_randint_like_generator(const tn_value *a, tn_value *r) { return like_common(a, r, LIKE_RANDINT, 1, false, true); }
static tn_status op_randint_like_Tensor(const tn_value *a, tn_value *r) { return like_common(a, r, LIKE_RANDINT, 1, true, false); }
static tn_status op_randint_like_Tensor_generator(const tn_value *a, tn_value *r) { return like_common(a, r, LIKE_RANDINT, 1, true, true); }
static tn_status op_randint_like_low_dtype(const tn_value *a, tn_value *r) { return like_common(a, r, LIKE_RANDINT, 2, false, false); }
static tn_status op_randint_like_low_generator_dtype(const tn_value *a, tn_value *r) { return like_common(a, r, LIKE_RANDINT, 2, false, true); }

/* ---- normal with tensor mean/std ---------------------------------------------------------------- */


static double load_elem(const tn_tensor *t, int64_t off) {
    const char *p = (const char *)tn_tensor_data(t);
    switch (t->dtype) {
    case TN_DTYPE_FLOAT64: return ((const double *)p)[off];
    case TN_DTYPE_FLOAT32: return ((const float *)p)[off];
    case TN_DTYPE_FLOAT16: return tn_half_to_f32(((const uint16_t *)p)[off]);
    default: return tn_bf16_to_f32(((const uint16_t *)p)[off]);
    }
}

static void store_elem(tn_tensor *t, int64_t off, double v) {
    char *p = (char *)tn_tensor_data(t);
    switch (t->dtype) {
    case TN_DTYPE_FLOAT64: ((double *)p)[off] = v; break;
    case TN_DTYPE_FLOAT32: ((float *)p)[off] = (float)v; break;
    case TN_DTYPE_FLOAT16: ((uint16_t *)p)[off] = tn_f32_to_half((float)v); break;
    default: ((uint16_t *)p)[off] = tn_f32_to_bf16((float)v); break;
    }
}

/* Offset of logical element `idx` (row-major over out's shape) in a tensor broadcast to it. */
static int64_t bcast_off(const tn_tensor *t, int nd, const int64_t *idx) {
    int64_t off = 0;
    for (int d = 0; d < t->ndim; d++) {
        int od = d + nd - t->ndim;
        if (t->sizes[d] != 1) off += idx[od] * t->strides[d];
    }
    return off;
}

static tn_status bcast_shape(const tn_tensor *a, const tn_tensor *b, int *nd, int64_t *out) {
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < n; i++) {
        int da = i - (n - a->ndim), db = i - (n - b->ndim);
        int64_t sa = da >= 0 ? a->sizes[da] : 1, sb = db >= 0 ? b->sizes[db] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return tn_error(TN_ERR_RUNTIME,
                            "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                            (long long)sa, (long long)sb, i);
        out[i] = sa == 1 ? sb : sa;
    }
    *nd = n;
    return TN_OK;
}

static tn_status check_std_tensor(const tn_tensor *std) {
    if (tn_dtype_is_complex(std->dtype)) return tn_error(TN_ERR_RUNTIME, "normal expects standard deviation to be non-complex");
    if (tn_tensor_is_meta(std) || tn_tensor_numel(std) == 0) return TN_OK;
    if (!is_floatish(std->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "normal with a %s std tensor is not implemented by torchnative",
                        tn_dtype_infos[std->dtype].c10_name);
    /* upstream's std.min() >= 0: a minimum reads a zero-stride (expanded) dim once */
    int64_t idx[TN_MAX_DIMS] = {0}, span[TN_MAX_DIMS], n = 1;
    for (int d = 0; d < std->ndim; d++) { span[d] = std->strides[d] ? std->sizes[d] : 1; n *= span[d]; }
    for (int64_t k = 0; k < n; k++) {
        if (!(load_elem(std, bcast_off(std, std->ndim, idx)) >= 0))
            return tn_error(TN_ERR_RUNTIME, "normal expects all elements of std >= 0.0");
        for (int d = std->ndim - 1; d >= 0; d--) { if (++idx[d] < span[d]) break; idx[d] = 0; }
    }
    return TN_OK;
}

/* out (contiguous, fresh) = normal(0, s0) then optionally *= std then += mean. */
static tn_status normal_tensor_common(const tn_tensor *mean_t, double mean_s, const tn_tensor *std_t, double std_s,
                                      tn_generator *g, tn_value *r) {
    const tn_tensor *like = mean_t ? mean_t : std_t;
    int nd = 0;
    int64_t shape[TN_MAX_DIMS];
    if (mean_t && std_t) TN_TRY(bcast_shape(mean_t, std_t, &nd, shape));
    else { nd = like->ndim; memcpy(shape, like->sizes, sizeof(int64_t) * (size_t)nd); }
    tn_dtype dt = like->dtype;
    if (!is_floatish(dt))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"normal_kernel_cpu\" not implemented for '%s'", tn_dtype_infos[dt].c10_name);
    if ((mean_t && mean_t->dtype != dt) || (std_t && std_t->dtype != dt))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "normal with mean and std of different dtypes is not implemented by torchnative");
    tn_tensor *out;
    TN_TRY(tn_tensor_empty(nd, shape, dt, tn_tensor_device(like), &out));
    tn_status st = normal_inplace(out, 0, std_t ? 1.0 : std_s, g);
    if (st != TN_OK || tn_tensor_is_meta(out)) return finish(out, st, r);
    double mean_rounded = tn_round_to_dtype(dt, mean_s); /* at::full({}, mean, output.options()) */
    int64_t idx[TN_MAX_DIMS] = {0}, n = tn_tensor_numel(out);
    for (int64_t k = 0; k < n; k++) {
        double v = load_elem(out, k);
        /* out * std (when std) then + mean, each rounded to the dtype as upstream's separate
         * mul_ and add_ kernels do */
        if (std_t) v = tn_round_to_dtype(dt, v * load_elem(std_t, bcast_off(std_t, nd, idx)));
        double m = mean_t ? load_elem(mean_t, bcast_off(mean_t, nd, idx)) : mean_rounded;
        store_elem(out, k, tn_round_to_dtype(dt, v + m));
        for (int d = nd - 1; d >= 0; d--) { if (++idx[d] < shape[d]) break; idx[d] = 0; }
    }
    return finish(out, TN_OK, r);
}

/* normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) */
static tn_status op_normal_Tensor_float(const tn_value *a, tn_value *r) {
    double std = num(&a[1]);
    if (!(std >= 0.0)) return tn_error(TN_ERR_RUNTIME, "normal expects std >= 0.0, but found std %g", std);
    return normal_tensor_common(a[0].u.t, 0, NULL, std, gen_of(&a[2]), r);
}

/* normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) */
static tn_status op_normal_float_Tensor(const tn_value *a, tn_value *r) {
    TN_TRY(check_std_tensor(a[1].u.t));
    return normal_tensor_common(NULL, num(&a[0]), a[1].u.t, 1, gen_of(&a[2]), r);
}

/* normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) */
static tn_status op_normal_Tensor_Tensor(const tn_value *a, tn_value *r) {
    TN_TRY(check_std_tensor(a[1].u.t));
    return normal_tensor_common(a[0].u.t, 0, a[1].u.t, 1, gen_of(&a[2]), r);
}

/* ---- normal and bernoulli out= forms, composed as upstream's ---------------------------------- */

/* Upstream's resize_output: out keeps its geometry when it has the shape already. */
static tn_status resize_output(tn_tensor *out, int nd, const int64_t *shape) {
    if (out->ndim == nd && !memcmp(out->sizes, shape, sizeof(int64_t) * (size_t)nd)) return TN_OK;
    return tn_tensor_resize(out, nd, shape);
}

/* Runs an in-place operator on out and drops the reference it returns. */
static tn_status inplace_on(tn_op_id op, const tn_value *args) {
    tn_value res[2];
    TN_TRY(tn_dispatch(op, args, res));
    tn_tensor_release(res[0].u.t);
    return TN_OK;
}

/* Upstream's normal out= forms resize out, draw normal(0, s) into it in out's own dtype and
 * then scale by std and shift by mean in place: out's dtype, not mean's, sets the draws and
 * the arithmetic. The shape: mean broadcast with out (Tensor_float_out), std's
 * (float_Tensor_out), mean broadcast with std (Tensor_Tensor_out). */
static tn_status normal_out_compose(tn_tensor *out, const tn_tensor *shape_a, const tn_tensor *shape_b, const tn_value *mean,
                                    const tn_value *std, double s, const tn_value *gen, tn_value *r) {
    int nd = shape_a->ndim;
    int64_t shape[TN_MAX_DIMS];
    if (shape_b) TN_TRY(bcast_shape(shape_a, shape_b, &nd, shape));
    else memcpy(shape, shape_a->sizes, sizeof(int64_t) * (size_t)nd);
    TN_TRY(resize_output(out, nd, shape));
    tn_value o = tn_value_tensor(out);
    tn_value n[4] = {o, tn_value_double(0), tn_value_double(s), *gen};
    TN_TRY(inplace_on(TN_OP_normal_, n));
    if (std) {
        tn_value m[2] = {o, *std};
        TN_TRY(inplace_on(TN_OP_mul__Tensor, m));
    }
    tn_value ad[3] = {o, *mean, tn_value_int(1)};
    TN_TRY(inplace_on(mean->tag == TN_V_TENSOR ? TN_OP_add__Tensor : TN_OP_add__Scalar, ad));
    return ret_self(out, r);
}

/* normal.Tensor_float_out(Tensor mean, float std=1, *, Generator? generator=None, Tensor(a!) out) */
static tn_status op_normal_Tensor_float_out(const tn_value *a, tn_value *r) {
    double std = num(&a[1]);
    if (!(std >= 0.0)) return tn_error(TN_ERR_RUNTIME, "normal expects std >= 0.0, but found std %g", std);
    return normal_out_compose(a[3].u.t, a[0].u.t, a[3].u.t, &a[0], NULL, std, &a[2], r);
}

/* normal.float_Tensor_out(float mean, Tensor std, *, Generator? generator=None, Tensor(a!) out) */
static tn_status op_normal_float_Tensor_out(const tn_value *a, tn_value *r) {
    TN_TRY(check_std_tensor(a[1].u.t));
    return normal_out_compose(a[3].u.t, a[1].u.t, NULL, &a[0], &a[1], 1, &a[2], r);
}

/* normal.Tensor_Tensor_out(Tensor mean, Tensor std, *, Generator? generator=None, Tensor(a!) out) */
static tn_status op_normal_Tensor_Tensor_out(const tn_value *a, tn_value *r) {
    TN_TRY(check_std_tensor(a[1].u.t));
    return normal_out_compose(a[3].u.t, a[0].u.t, a[1].u.t, &a[0], &a[1], 1, &a[2], r);
}

/* bernoulli.out(Tensor self, *, Generator? generator=None, Tensor(a!) out): upstream resizes out
 * to self's shape and runs bernoulli_(out, self) there, so out may have any dtype the
 * in-place kernel fills (an integer out receives 0/1). */
static tn_status op_bernoulli_out(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t, *out = a[2].u.t;
    TN_TRY(resize_output(out, self->ndim, self->sizes));
    tn_value b[3] = {tn_value_tensor(out), a[0], a[1]};
    TN_TRY(inplace_on(TN_OP_bernoulli__Tensor, b));
    return ret_self(out, r);
}

/* ---- multinomial -------------------------------------------------------------------------------- */

/* aten::multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, Generator? generator=None) */
static tn_status op_multinomial(const tn_value *a, tn_value *r) {
    const tn_tensor *self = a[0].u.t;
    int64_t ns = a[1].u.i;
    bool repl = a[2].tag == TN_V_BOOL && a[2].u.b;
    tn_generator *g = gen_of(&a[3]);
    if (!(self->ndim > 0 && self->ndim <= 2)) return tn_error(TN_ERR_RUNTIME, "prob_dist must be 1 or 2 dim");
    if (!is_floatish(self->dtype))
        return tn_error(TN_ERR_RUNTIME, "multinomial only supports floating-point dtypes for input, got: %s",
                        tn_dtype_infos[self->dtype].c10_name);
    if (!(ns > 0)) return tn_error(TN_ERR_RUNTIME, "cannot sample n_sample <= 0 samples");
    int64_t n_cat = self->sizes[self->ndim - 1];
    if (!(repl || ns <= n_cat))
        return tn_error(TN_ERR_RUNTIME, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    if (n_cat > (INT64_C(1) << 24)) return tn_error(TN_ERR_RUNTIME, "number of categories cannot exceed 2^24");
    int64_t n_dist = self->ndim == 2 ? self->sizes[0] : 1;
    int64_t rsz[2] = {n_dist, ns};
    tn_tensor *out;
    if (self->ndim == 1) TN_TRY(tn_tensor_empty(1, &ns, TN_DTYPE_INT64, tn_tensor_device(self), &out));
    else TN_TRY(tn_tensor_empty(2, rsz, TN_DTYPE_INT64, tn_tensor_device(self), &out));
    if (tn_tensor_is_meta(out) || tn_tensor_numel(out) == 0) return finish(out, TN_OK, r);
    int64_t ps0 = self->ndim == 2 ? self->strides[0] : 0, ps1 = self->strides[self->ndim - 1];
    const void *probs = tn_tensor_data(self);
    int64_t *res = tn_tensor_data(out);
    tn_status st;
    if (!repl || ns == 1) {
        /* upstream's checks before any draw: finite, non-negative, no all-zero row */
        for (int64_t i = 0; i < n_dist; i++) {
            double sum = 0;
            for (int64_t j = 0; j < n_cat; j++) {
                double v = load_elem(self, i * ps0 + j * ps1);
                if (!(v < INFINITY && v >= 0))
                    return finish(out, tn_error(TN_ERR_RUNTIME, "probability tensor contains either `inf`, `nan` or element < 0"), r);
                sum += v;
            }
            if (sum == 0)
                return finish(out, tn_error(TN_ERR_RUNTIME, "invalid multinomial distribution (sum of probabilities <= 0)"), r);
        }
        /* q = empty_like(self).exponential_(1): drawn in self's memory order */
        int64_t qst[TN_MAX_DIMS];
        preserve_strides(self, qst);
        tn_tensor *q;
        st = new_strided(self->ndim, self->sizes, qst, self->dtype, tn_tensor_device(self), &q);
        if (st != TN_OK) return finish(out, st, r);
        tn_strided qs;
        strided_of(q, &qs);
        st = tn_random_exponential(g, &qs, 1.0);
        /* the pick reads q as contiguous [n_dist, n_cat]; copy if q was laid out otherwise */
        void *qc = NULL, *scratch = malloc(sizeof(int64_t) * (size_t)(2 * n_cat));
        if (st == TN_OK && scratch) {
            bool contig = tn_tensor_is_contiguous(q);
            if (!contig) {
                int isz = tn_dtype_itemsize(q->dtype);
                qc = malloc((size_t)(n_dist * n_cat * isz));
                if (qc) {
                    int64_t qs0 = self->ndim == 2 ? q->strides[0] : 0, qs1 = q->strides[q->ndim - 1];
                    for (int64_t i = 0; i < n_dist; i++)
                        for (int64_t j = 0; j < n_cat; j++)
                            memcpy((char *)qc + (i * n_cat + j) * isz,
                                   (char *)tn_tensor_data(q) + (i * qs0 + j * qs1) * isz, (size_t)isz);
                }
            }
            if (contig || qc)
                st = tn_random_multinomial_pick(res, ns, 1, probs, self->dtype, ps0, ps1, contig ? tn_tensor_data(q) : qc,
                                                n_dist, n_cat, ns, scratch);
            else st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
        } else if (st == TN_OK) {
            st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
        }
        free(qc);
        free(scratch);
        tn_tensor_release(q);
        return finish(out, st, r);
    }
    double *scratch = malloc(sizeof(double) * (size_t)n_cat);
    if (!scratch) return finish(out, tn_error(TN_ERR_NO_MEMORY, "out of memory"), r);
    st = tn_random_multinomial_with_replacement(g, res, ns, 1, probs, self->dtype, ps0, ps1, n_dist, n_cat, ns, scratch);
    free(scratch);
    return finish(out, st, r);
}

/* ---- registration entry points (named in random.def) --------------------------------------------- */

/* ---- rrelu_with_noise -------------------------------------------------------------------- */

/* aten::rrelu_with_noise(self, Tensor(b!) noise, lower, upper, training, generator): in
 * training a random slope per non-positive element, recorded in noise (upstream's
 * _rrelu_with_noise_train: draws in self's contiguous element order); in evaluation a leaky
 * relu with the mean slope, noise untouched. */
static tn_status op_rrelu_with_noise(const tn_value *a, tn_value *r) {
    tn_tensor *self = a[0].u.t, *noise = a[1].u.t;
    /* a complex bound gives its real part (upstream's Scalar::to<double>) */
    double lo = tn_scalar_as_double(&a[2]), hi = tn_scalar_as_double(&a[3]);
    /* upstream checks only the shapes here (rrelu checks the bounds; a draw checks its range) */
    if (noise->ndim != self->ndim || memcmp(noise->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim) != 0)
        return tn_error(TN_ERR_RUNTIME, "noise tensor shape must match self tensor shape");
    if (!a[4].u.b) {
        tn_value la[2] = {a[0], tn_value_double(tn_scalar_midpoint(&a[2], &a[3]))};
        return tn_dispatch(TN_OP_leaky_relu, la, r);
    }
    if (!is_floatish(self->dtype) || self->dtype == TN_DTYPE_FLOAT16) /* upstream's dispatch has no Half */
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"rrelu_with_noise_out_cpu\" not implemented for '%s'", tn_dtype_infos[self->dtype].c10_name);
    if (noise->dtype != self->dtype)
        return tn_error(TN_ERR_RUNTIME, "expected scalar type %s but found %s", tn_dtype_infos[self->dtype].c10_name,
                        tn_dtype_infos[noise->dtype].c10_name);
    tn_tensor *x = NULL, *y = NULL, *nz = NULL;
    tn_status st = tn_tensor_contiguous(self, &x);
    if (st == TN_OK) st = tn_tensor_empty(self->ndim, self->sizes, self->dtype, tn_tensor_device(self), &y);
    if (st == TN_OK) st = tn_tensor_empty(self->ndim, self->sizes, self->dtype, tn_tensor_device(self), &nz);
    if (st == TN_OK && !skip_fill(self)) {
        /* upstream's opmath bounds: float below double */
        double l = self->dtype == TN_DTYPE_FLOAT64 ? lo : (float)lo, h = self->dtype == TN_DTYPE_FLOAT64 ? hi : (float)hi;
        st = tn_random_rrelu_train(gen_of(&a[5]), tn_tensor_data(y), tn_tensor_data(nz), tn_tensor_data(x), self->dtype,
                                   tn_tensor_numel(self), l, h);
        tn_value cr[1];
        if (st == TN_OK) st = tn_dispatch(TN_OP_copy_, (tn_value[]){tn_value_tensor(noise), tn_value_tensor(nz), tn_value_bool(false)}, cr);
        if (st == TN_OK) tn_value_release(&cr[0]);
    }
    if (x) tn_tensor_release(x);
    if (nz) tn_tensor_release(nz);
    if (st != TN_OK) { if (y) tn_tensor_release(y); return st; }
    r[0] = tn_value_tensor(y);
    return TN_OK;
}

/* aten::rrelu_with_noise_(self, noise, ...): the functional result written back into self */
static tn_status op_rrelu_with_noise_(const tn_value *a, tn_value *r) {
    tn_value y[1], cr[1];
    TN_TRY(op_rrelu_with_noise(a, y));
    tn_status st = tn_dispatch(TN_OP_copy_, (tn_value[]){a[0], y[0], tn_value_bool(false)}, cr);
    tn_value_release(&y[0]);
    TN_TRY(st);
    tn_value_release(&cr[0]);
    return ret_self(a[0].u.t, r);
}

#define TN_RANDOM_EXPORT(name) \
    tn_status tn_random_op_##name(const tn_value *a, tn_value *r); \
    tn_status tn_random_op_##name(const tn_value *a, tn_value *r) { return op_##name(a, r); }

TN_RANDOM_EXPORT(uniform_)
TN_RANDOM_EXPORT(uniform)
TN_RANDOM_EXPORT(normal_)
TN_RANDOM_EXPORT(normal_functional)
TN_RANDOM_EXPORT(normal_Tensor_float)
TN_RANDOM_EXPORT(normal_float_Tensor)
TN_RANDOM_EXPORT(normal_Tensor_Tensor)
TN_RANDOM_EXPORT(normal_Tensor_float_out)
TN_RANDOM_EXPORT(normal_float_Tensor_out)
TN_RANDOM_EXPORT(normal_Tensor_Tensor_out)
TN_RANDOM_EXPORT(bernoulli_out)
TN_RANDOM_EXPORT(normal_float_float)
TN_RANDOM_EXPORT(random_)
TN_RANDOM_EXPORT(random__from)
TN_RANDOM_EXPORT(random__to)
TN_RANDOM_EXPORT(random)
TN_RANDOM_EXPORT(random_from)
TN_RANDOM_EXPORT(random_to)
TN_RANDOM_EXPORT(bernoulli__float)
TN_RANDOM_EXPORT(bernoulli__Tensor)
TN_RANDOM_EXPORT(bernoulli)
TN_RANDOM_EXPORT(bernoulli_p)
TN_RANDOM_EXPORT(bernoulli_Tensor)
TN_RANDOM_EXPORT(exponential_)
TN_RANDOM_EXPORT(rrelu_with_noise)
TN_RANDOM_EXPORT(rrelu_with_noise_)
TN_RANDOM_EXPORT(exponential)
TN_RANDOM_EXPORT(geometric_)
TN_RANDOM_EXPORT(geometric)
TN_RANDOM_EXPORT(log_normal_)
TN_RANDOM_EXPORT(log_normal)
TN_RANDOM_EXPORT(cauchy_)
TN_RANDOM_EXPORT(cauchy)
TN_RANDOM_EXPORT(rand)
TN_RANDOM_EXPORT(rand_generator)
TN_RANDOM_EXPORT(randn)
TN_RANDOM_EXPORT(randn_generator)
TN_RANDOM_EXPORT(randint)
TN_RANDOM_EXPORT(randint_generator)
TN_RANDOM_EXPORT(randint_low)
TN_RANDOM_EXPORT(randint_low_generator)
TN_RANDOM_EXPORT(randperm)
TN_RANDOM_EXPORT(randperm_generator)
TN_RANDOM_EXPORT(rand_like)
TN_RANDOM_EXPORT(rand_like_generator)
TN_RANDOM_EXPORT(randn_like)
TN_RANDOM_EXPORT(randn_like_generator)
TN_RANDOM_EXPORT(randint_like)
TN_RANDOM_EXPORT(randint_like_generator)
TN_RANDOM_EXPORT(randint_like_Tensor)
TN_RANDOM_EXPORT(randint_like_Tensor_generator)
TN_RANDOM_EXPORT(randint_like_low_dtype)
TN_RANDOM_EXPORT(randint_like_low_generator_dtype)
TN_RANDOM_EXPORT(multinomial)
