/* creation_range.c — arange, range, linspace and logspace: dtype inference, upstream's
 * size computation and error messages, then the sequence kernels of kernels/creation.c
 * over the chunks upstream's parallel_for would use (arange's rounding depends on where
 * a chunk starts, so the chunking is part of the result). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/scalar.h"
#include "core/threadpool.h"
#include "kernels/cast.h"
#include "kernels/creation.h"
#include "ops/creation_internal.h"
#include "ops/scalar_convert.h"

/* at::internal::GRAIN_SIZE */
#define TN_SEQ_GRAIN 32768

typedef struct seq_job {
    tn_seq_fn fn;
    char *out;
    int64_t n, chunk;
    const tn_seq_params *p;
} seq_job;

static void seq_run(void *ctx, int64_t b, int64_t e) {
    const seq_job *j = ctx;
    for (int64_t c = b; c < e; c++) {
        int64_t lo = c * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
        j->fn(j->out, lo, hi, j->p);
    }
}

/* Fills the contiguous 1-D tensor t: upstream's OpenMP parallel_for splits n > GRAIN_SIZE
 * into min(threads, ceil(n / GRAIN_SIZE)) equal chunks; each chunk restarts the vector
 * grouping, so we split identically. */
static void seq_fill(tn_seq_fn fn, tn_tensor *t, const tn_seq_params *p) {
    int64_t n = tn_tensor_numel(t);
    char *out = tn_tensor_data(t);
    if (!out || n == 0) return;
    int64_t nchunks = 1, chunk = n;
    int nt = tn_get_num_threads();
    if (n > TN_SEQ_GRAIN && nt > 1 && !tn_in_parallel_region()) {
        int64_t k = (n + TN_SEQ_GRAIN - 1) / TN_SEQ_GRAIN;
        if (k > nt) k = nt;
        chunk = (n + k - 1) / k;
        nchunks = (n + chunk - 1) / chunk;
    }
    /* The values depend only on the chunk boundaries, not on which thread runs them; the
     * chunks run on the pool (serially before session 47: arange(1e6) of int64 took 1.8x
     * upstream's time, linspace 2.4x, the fresh result's pages faulted in by one thread). */
    seq_job j = {fn, out, n, chunk, p};
    if (nchunks > 1) tn_parallel_for(nchunks, 1, seq_run, &j);
    else seq_run(&j, 0, 1);
}

/* Scalar::to<T> with upstream's checks, for the accumulation types. */
static tn_status to_i64(const tn_value *v, int64_t *out) { return tn_scalar_to_bytes(v, TN_DTYPE_INT64, out); }
static tn_status to_f64(const tn_value *v, double *out) { return tn_scalar_to_bytes(v, TN_DTYPE_FLOAT64, out); }
static tn_status to_f32(const tn_value *v, double *out) {
    float f;
    TN_TRY(tn_scalar_to_bytes(v, TN_DTYPE_FLOAT32, &f));
    *out = f;
    return TN_OK;
}

static bool is_reduced(tn_dtype d) { return d == TN_DTYPE_FLOAT16 || d == TN_DTYPE_BFLOAT16; }
static bool v_integral(const tn_value *v) { return tn_scalar_is_integral(v, true); }
static bool v_complex(const tn_value *v) { return v->tag == TN_V_COMPLEX; }
static double v_double(const tn_value *v) {
    return tn_scalar_as_double(v);
}

/* Reads start/end/step into the accumulation type of dtype and applies the checks shared by
 * arange and range ("step must be nonzero", finiteness, sign). */
static tn_status acc_params(tn_dtype dt, const tn_value *start, const tn_value *end, const tn_value *step,
                            tn_seq_params *p) {
    memset(p, 0, sizeof *p);
    bool integral = tn_dtype_is_integral(dt, false);
    if (integral) {
        /* upstream checks the bounds on the values as given, in double, before truncating:
         * arange(0.5, 0.2, 4) refuses in int64 though both ends truncate to 0 */
        const double ds = v_double(start), de = v_double(end), dst = v_double(step);
        if (!isfinite(ds) || !isfinite(de)) return tn_error(TN_ERR_RUNTIME, "unsupported range: %g -> %g", ds, de);
        TN_TRY(to_i64(start, &p->istart));
        TN_TRY(to_i64(end, &p->iend));
        TN_TRY(to_i64(step, &p->istep));
        if (dst == 0) return tn_error(TN_ERR_RUNTIME, "step must be nonzero");
        /* a nonzero step that truncates to 0: int64's exact size computation divides by it
         * (a ValueError upstream); the narrower integers size the result in double and
         * repeat the truncated start (arange(1.0, 3, 0.5, dtype=int8) is [1, 1, 1, 1]) */
        if (p->istep == 0 && dt == TN_DTYPE_INT64) return tn_error(TN_ERR_VALUE, "step must be nonzero");
        if (!((dst > 0 && de >= ds) || (dst < 0 && de <= ds)) ||
            (p->istep != 0 && !((p->istep > 0 && p->iend >= p->istart) || (p->istep < 0 && p->iend <= p->istart))))
            return tn_error(TN_ERR_RUNTIME, "upper bound and lower bound inconsistent with step sign");
        return TN_OK;
    }
    tn_status (*conv)(const tn_value *, double *) = is_reduced(dt) ? to_f32 : to_f64;
    TN_TRY(conv(start, &p->dstart));
    TN_TRY(conv(end, &p->dend));
    TN_TRY(conv(step, &p->dstep));
    if (!(p->dstep > 0 || p->dstep < 0)) return tn_error(TN_ERR_RUNTIME, "step must be nonzero");
    if (!isfinite(p->dstart) || !isfinite(p->dend))
        return tn_error(TN_ERR_RUNTIME, "unsupported range: %g -> %g", p->dstart, p->dend);
    if (!((p->dstep > 0 && p->dend >= p->dstart) || (p->dstep < 0 && p->dend <= p->dstart)))
        return tn_error(TN_ERR_RUNTIME, "upper bound and lower bound inconsistent with step sign");
    return TN_OK;
}

static tn_status not_for(const char *kernel, tn_dtype dt) {
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kernel, tn_dtype_infos[dt].c10_name);
}

static tn_status new_1d(int64_t n, tn_dtype dt, tn_device dev, tn_tensor **out) {
    return tn_tensor_empty(1, &n, dt, dev, out);
}

/* ---- arange --------------------------------------------------------------------------- */

static tn_status arange_impl(const tn_value *start, const tn_value *end, const tn_value *step, const tn_value *opts,
                             tn_value *rets) {
    tn_factory_opts o;
    TN_TRY(tn_factory_opts_read(opts, tn_device_cpu(), &o));
    tn_dtype dt = o.dtype;
    if (dt == TN_DTYPE_UNDEFINED)
        dt = v_integral(start) && v_integral(end) && v_integral(step) ? TN_DTYPE_INT64 : tn_default_dtype();
    tn_seq_fn fn = tn_arange_kernel(dt);
    if (!fn) return not_for("arange_cpu", dt);
    tn_seq_params p;
    TN_TRY(acc_params(dt, start, end, step, &p));
    double size_d;
    if (dt == TN_DTYPE_INT64) {
        /* exact integer ceil-division (double would lose int64 precision) */
        int64_t sgn = (p.istep > 0) - (p.istep < 0);
        int64_t num = (int64_t)((uint64_t)p.iend - (uint64_t)p.istart + (uint64_t)p.istep - (uint64_t)sgn);
        size_d = ceil((double)(num / p.istep));
    } else {
        double s, e, st;
        TN_TRY(to_f64(start, &s));
        TN_TRY(to_f64(end, &e));
        TN_TRY(to_f64(step, &st));
        size_d = ceil((e - s) / st);
    }
    if (!(size_d >= 0 && size_d <= 0x1p63)) return tn_error(TN_ERR_RUNTIME, "invalid size, possible overflow?");
    tn_tensor *t;
    TN_TRY(new_1d((int64_t)size_d, dt, o.device, &t));
    seq_fill(fn, t, &p);
    rets[0] = tn_value_tensor(t);
    return TN_OK;
}

/* aten::arange(Scalar end, *, dtype, layout, device, pin_memory) */
tn_status tn_op_arange(const tn_value *args, tn_value *rets) {
    tn_value zero = tn_value_int(0), one = tn_value_int(1);
    return arange_impl(&zero, &args[0], &one, &args[1], rets);
}
/* aten::arange.start(Scalar start, Scalar end, *, dtype, layout, device, pin_memory) */
tn_status tn_op_arange_start(const tn_value *args, tn_value *rets) {
    tn_value one = tn_value_int(1);
    return arange_impl(&args[0], &args[1], &one, &args[2], rets);
}
/* aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, dtype, layout, device, pin_memory) */
tn_status tn_op_arange_start_step(const tn_value *args, tn_value *rets) {
    return arange_impl(&args[0], &args[1], &args[2], &args[3], rets);
}

/* The option block of an out= call: out's dtype and device. */
static void out_opts(const tn_tensor *out, tn_value *opts) {
    opts[0] = tn_factory_dtype_value(out->dtype);
    opts[1] = tn_factory_none();
    opts[2] = tn_factory_device_value(tn_tensor_device(out));
    opts[3] = tn_factory_none();
}

/* aten::arange.out(Scalar end, *, Tensor(a!) out): computed in out's dtype. */
tn_status tn_op_arange_out(const tn_value *args, tn_value *rets) {
    tn_value zero = tn_value_int(0), one = tn_value_int(1), opts[4], r;
    out_opts(args[1].u.t, opts);
    TN_TRY(arange_impl(&zero, &args[0], &one, opts, &r));
    return tn_factory_into_seq_out(r.u.t, args[1].u.t, rets);
}
/* aten::arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) */
tn_status tn_op_arange_start_out(const tn_value *args, tn_value *rets) {
    tn_value opts[4], r;
    out_opts(args[3].u.t, opts);
    TN_TRY(arange_impl(&args[0], &args[1], &args[2], opts, &r));
    return tn_factory_into_seq_out(r.u.t, args[3].u.t, rets);
}

/* ---- range (deprecated; inclusive end) ------------------------------------------------- */

static tn_status range_impl(const tn_value *start, const tn_value *end, const tn_value *step, const tn_value *opts,
                            tn_value *rets) {
    tn_factory_opts o;
    TN_TRY(tn_factory_opts_read(opts, tn_device_cpu(), &o));
    tn_dtype dt = o.dtype != TN_DTYPE_UNDEFINED ? o.dtype : tn_default_dtype();
    tn_seq_fn fn = tn_range_kernel(dt);
    if (!fn) return not_for("range_cpu", dt);
    tn_seq_params p;
    TN_TRY(acc_params(dt, start, end, step, &p));
    int64_t size;
    if (tn_dtype_is_integral(dt, false)) {
        /* a step that truncates to 0: upstream's range divides by it (SIGFPE, RELIABILITY
         * "Where upstream itself fails"); refused as arange's int64 form refuses it */
        if (p.istep == 0) return tn_error(TN_ERR_VALUE, "step must be nonzero");
        /* end - start and the + 1 wrap as upstream's (range(-2**63, 0) sizes itself
         * -2**63 + 1, which the allocation refuses); INT64_MIN / -1 would trap */
        int64_t diff = tn_add_wrap(p.iend, tn_mul_wrap(p.istart, -1));
        if (diff == INT64_MIN && p.istep == -1) return tn_error(TN_ERR_RUNTIME, "range: the number of steps overflows int64");
        size = tn_add_wrap(diff / p.istep, 1);
    } else if (is_reduced(dt)) {
        size = (int64_t)(((float)p.dend - (float)p.dstart) / (float)p.dstep + 1.0f);
    } else {
        size = (int64_t)((p.dend - p.dstart) / p.dstep + 1);
    }
    tn_tensor *t;
    TN_TRY(new_1d(size, dt, o.device, &t));
    seq_fill(fn, t, &p);
    rets[0] = tn_value_tensor(t);
    return TN_OK;
}

/* aten::range(Scalar start, Scalar end, *, dtype, layout, device, pin_memory) */
tn_status tn_op_range(const tn_value *args, tn_value *rets) {
    tn_value one = tn_value_int(1);
    return range_impl(&args[0], &args[1], &one, &args[2], rets);
}
/* aten::range.step(Scalar start, Scalar end, Scalar step=1, *, dtype, layout, device, pin_memory) */
tn_status tn_op_range_step(const tn_value *args, tn_value *rets) {
    return range_impl(&args[0], &args[1], &args[2], &args[3], rets);
}
/* aten::range.out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) */
tn_status tn_op_range_out(const tn_value *args, tn_value *rets) {
    tn_value opts[4], r;
    out_opts(args[3].u.t, opts);
    TN_TRY(range_impl(&args[0], &args[1], &args[2], opts, &r));
    return tn_factory_into_seq_out(r.u.t, args[3].u.t, rets);
}
/* aten::range.out_(Scalar start, Scalar end, *, Tensor(a!) out) */
tn_status tn_op_range_out_(const tn_value *args, tn_value *rets) {
    tn_value opts[4], r, one = tn_value_int(1);
    out_opts(args[2].u.t, opts);
    TN_TRY(range_impl(&args[0], &args[1], &one, opts, &r));
    return tn_factory_into_seq_out(r.u.t, args[2].u.t, rets);
}

/* ---- linspace / logspace ----------------------------------------------------------------- */


/* Endpoints converted to the element type (checked), read back for the kernels. */
static tn_status endpoints(tn_dtype dt, const tn_value *start, const tn_value *end, tn_seq_params *p) {
    unsigned char s[16], e[16];
    TN_TRY(tn_scalar_to_bytes(start, dt, s));
    TN_TRY(tn_scalar_to_bytes(end, dt, e));
    if (tn_dtype_is_complex(dt)) {
        tn_cast_load_complex(s, dt, &p->re_start, &p->im_start);
        tn_cast_load_complex(e, dt, &p->re_end, &p->im_end);
    } else if (tn_dtype_is_integral(dt, false)) {
        p->istart = tn_cast_load_int64(s, dt);
        p->iend = tn_cast_load_int64(e, dt);
        p->dstart = (double)p->istart;
        p->dend = (double)p->iend;
    } else {
        p->dstart = tn_cast_load_double(s, dt);
        p->dend = tn_cast_load_double(e, dt);
    }
    return TN_OK;
}

static tn_status space_impl(const tn_value *start, const tn_value *end, int64_t steps, bool log, double base,
                            const tn_value *opts, tn_value *rets) {
    const char *kname = log ? "logspace_cpu" : "linspace_cpu";
    tn_factory_opts o;
    TN_TRY(tn_factory_opts_read(opts, tn_device_cpu(), &o));
    tn_dtype dt = o.dtype;
    if (dt == TN_DTYPE_UNDEFINED)
        dt = v_complex(start) || v_complex(end) ? tn_factory_default_complex() : tn_default_dtype();
    if (steps < 0) return tn_error(TN_ERR_RUNTIME, "number of steps must be non-negative");
    tn_seq_fn fn = log ? tn_logspace_kernel(dt) : tn_linspace_kernel(dt);
    if (!fn && steps >= 2) return not_for(kname, dt);
    tn_tensor *t;
    TN_TRY(new_1d(steps, dt, o.device, &t));
    tn_status st = TN_OK;
    if (tn_tensor_is_meta(t) || steps == 0) {
        /* shape only */
    } else if (steps == 1 && !(log && tn_dtype_is_complex(dt))) { /* (complex: the kernel, from start) */
        if (log) {
            double s;
            st = to_f64(start, &s);
            tn_value v = tn_value_double(pow(base, s));
            if (st == TN_OK) st = tn_factory_fill(t, &v);
        } else {
            st = tn_factory_fill(t, start);
        }
    } else {
        tn_seq_params p;
        memset(&p, 0, sizeof p);
        p.steps = steps;
        p.base = base;
        st = endpoints(dt, start, end, &p);
        if (st == TN_OK && log) {
            /* end - start in the element type's own arithmetic, as upstream computes it */
            switch (dt) {
            case TN_DTYPE_FLOAT32: p.dstep = (double)((float)p.dend - (float)p.dstart); break;
            case TN_DTYPE_FLOAT64: p.dstep = p.dend - p.dstart; break;
            case TN_DTYPE_FLOAT16:
            case TN_DTYPE_BFLOAT16: p.dstep = (float)tn_round_to_dtype(dt, (float)p.dend - (float)p.dstart); break;
            case TN_DTYPE_INT64: p.dstep = (double)(int64_t)((uint64_t)p.iend - (uint64_t)p.istart); break;
            default: p.dstep = (double)(p.iend - p.istart); break;
            }
        }
        if (st == TN_OK) seq_fill(fn, t, &p);
    }
    if (st != TN_OK) { tn_tensor_release(t); return st; }
    rets[0] = tn_value_tensor(t);
    return TN_OK;
}

/* A 0-dim tensor endpoint as a Scalar value (upstream calls .item()); a meta endpoint has
 * no value: a zero of its kind, and *meta is set. */
static tn_status endpoint_value(const tn_tensor *t, const char *op, const char *which, tn_value *v, bool *meta) {
    if (t->ndim != 0)
        return tn_error(TN_ERR_RUNTIME, "%s only supports 0-dimensional start and end tensors, but got %s with %d dimension(s).",
                        op, which, t->ndim);
    static const uint8_t zero[16];
    const void *p = tn_tensor_data(t);
    if (!p) {
        *meta = true;
        p = zero;
    }
    if (tn_dtype_is_complex(t->dtype)) {
        v->tag = TN_V_COMPLEX;
        tn_cast_load_complex(p, t->dtype, &v->u.c.re, &v->u.c.im);
    } else if (tn_dtype_is_floating(t->dtype)) {
        *v = tn_value_double(tn_cast_load_double(p, t->dtype));
    } else if (t->dtype == TN_DTYPE_BOOL) {
        *v = tn_value_bool(*(const uint8_t *)p != 0);
    } else {
        *v = tn_value_int(tn_cast_load_int64(p, t->dtype));
    }
    return TN_OK;
}

/* linspace/logspace with any mix of Scalar and 0-dim Tensor endpoints. */
static tn_status space_any(const tn_value *args, bool log, const tn_value *opts, tn_value *rets) {
    const char *op = log ? "logspace" : "linspace";
    tn_value s = args[0], e = args[1];
    bool meta = false;
    if (s.tag == TN_V_TENSOR) TN_TRY(endpoint_value(args[0].u.t, op, "start", &s, &meta));
    if (e.tag == TN_V_TENSOR) TN_TRY(endpoint_value(args[1].u.t, op, "end", &e, &meta));
    /* a meta endpoint makes the result meta, as upstream's decomposition (shape only) */
    tn_value mo[4] = {opts[0], opts[1], {.tag = TN_V_DEVICE}, opts[3]};
    mo[2].u.device = (tn_device){TN_DEVICE_META, -1};
    return space_impl(&s, &e, args[2].u.i, log, log ? args[3].u.d : 0, meta ? mo : opts, rets);
}

/* aten::linspace(Scalar start, Scalar end, int steps, *, dtype, layout, device, pin_memory)
 * and its Tensor_Tensor / Tensor_Scalar / Scalar_Tensor overloads (same positions). */
tn_status tn_op_linspace(const tn_value *args, tn_value *rets) { return space_any(args, false, &args[3], rets); }
/* aten::logspace(Scalar start, Scalar end, int steps, float base=10., *, dtype, layout, device,
 * pin_memory) and its Tensor overloads. */
tn_status tn_op_logspace(const tn_value *args, tn_value *rets) { return space_any(args, true, &args[4], rets); }

/* out= forms: (start, end, steps, [base,] out) computed in out's dtype. */
static tn_status space_out(const tn_value *args, bool log, tn_value *rets) {
    int out_at = log ? 4 : 3;
    tn_tensor *out = args[out_at].u.t;
    tn_value opts[4], r;
    out_opts(out, opts);
    TN_TRY(space_any(args, log, opts, &r));
    return tn_factory_into_seq_out(r.u.t, out, rets);
}
/* aten::linspace.out(Scalar start, Scalar end, int steps, *, Tensor(a!) out) and Tensor forms */
tn_status tn_op_linspace_out(const tn_value *args, tn_value *rets) { return space_out(args, false, rets); }
/* aten::logspace.out(Scalar start, Scalar end, int steps, float base=10., *, Tensor(a!) out) and Tensor forms */
tn_status tn_op_logspace_out(const tn_value *args, tn_value *rets) { return space_out(args, true, rets); }
