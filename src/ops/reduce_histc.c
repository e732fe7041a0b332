/* reduce_histc.c — aten::histc on CPU: equal-width bins over [min, max] (or the data's range
 * when min == max), counted in the input's floating dtype. MoE routers (qwen2_moe, mixtral)
 * use it to count tokens per expert. */
#include <math.h>

#include "core/scalar.h"
#include "ops/dispatch.h"

static double scalar_as_double(const tn_value *v) { return tn_scalar_as_double(v); }

/* Element `linear` (row-major) of t at its strides, as an element offset. */
static int64_t offset_of(const tn_tensor *t, int64_t linear) {
    int64_t off = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (linear % t->sizes[d]) * t->strides[d];
        linear /= t->sizes[d];
    }
    return off;
}

/* The bin rule of upstream's LINEAR_INTERPOLATION histogram, written once per dtype T:
 * every element in [lo, hi] (NaN never is) lands in trunc((x - lo) * bins / (hi - lo)),
 * evaluated in T, with x == hi folded into the last bin. Counts accumulate in T too. */
#define HISTC_LOOP(T, NAME)                                                                       \
    static void NAME(const tn_tensor *self, T *hist, int64_t bins, double lo_d, double hi_d) {     \
        const T *x = (const T *)self->storage->data;                                              \
        const T lo = (T)lo_d, hi = (T)hi_d;                                                       \
        int64_t n = tn_tensor_numel(self);                                                        \
        bool contig = tn_tensor_is_contiguous(self);                                              \
        for (int64_t i = 0; i < n; i++) {                                                         \
            T e = x[contig ? self->offset + i : offset_of(self, i)];                              \
            if (!(e >= lo && e <= hi)) continue;                                                  \
            int64_t pos = (int64_t)((e - lo) * (T)bins / (hi - lo));                              \
            if (pos == bins) pos -= 1;                                                            \
            hist[pos] += (T)1;                                                                    \
        }                                                                                         \
    }
HISTC_LOOP(float, histc_count_f32)
HISTC_LOOP(double, histc_count_f64)

/* Smallest and largest element; NaN if any element is NaN (as aminmax propagates it). */
static void data_range(const tn_tensor *self, double *lo, double *hi) {
    int64_t n = tn_tensor_numel(self);
    bool contig = tn_tensor_is_contiguous(self);
    double mn = INFINITY, mx = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        int64_t off = contig ? self->offset + i : offset_of(self, i);
        double e = self->dtype == TN_DTYPE_FLOAT32 ? (double)((const float *)self->storage->data)[off]
                                                   : ((const double *)self->storage->data)[off];
        if (isnan(e)) { mn = mx = NAN; break; }
        if (e < mn) mn = e;
        if (e > mx) mx = e;
    }
    *lo = mn;
    *hi = mx;
}

/* aten::histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor */
tn_status tn_op_histc(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int64_t bins = args[1].u.i;
    if (self->dtype == TN_DTYPE_FLOAT16 || self->dtype == TN_DTYPE_BFLOAT16)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::histc.default for %s is not implemented by torchnative",
                        tn_dtype_infos[self->dtype].c10_name);
    if (self->dtype != TN_DTYPE_FLOAT32 && self->dtype != TN_DTYPE_FLOAT64)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"histogram_cpu\" not implemented for '%s'", tn_dtype_infos[self->dtype].c10_name);
    if (bins <= 0)
        return tn_error(TN_ERR_RUNTIME, "torch.histogramdd(): bins must be > 0, but got %lld for dimension 0",
                        (long long)bins);
    bool meta = tn_tensor_is_meta(self);
    double lo = scalar_as_double(&args[2]), hi = scalar_as_double(&args[3]);
    if (lo == hi && tn_tensor_numel(self) > 0 && !meta) data_range(self, &lo, &hi);
    if (lo == hi) {
        lo -= 1;
        hi += 1;
    }
    if (isinf(lo) || isinf(hi) || isnan(lo) || isnan(hi))
        return tn_error(TN_ERR_RUNTIME, "torch.histc: range of [%g, %g] is not finite", lo, hi);
    if (!(lo < hi)) return tn_error(TN_ERR_RUNTIME, "torch.histc: max must be larger than min");
    tn_tensor *out;
    TN_TRY(tn_tensor_zeros(1, &bins, self->dtype, tn_tensor_device(self), &out));
    if (!meta) {
        if (self->dtype == TN_DTYPE_FLOAT32) histc_count_f32(self, tn_tensor_data(out), bins, lo, hi);
        else histc_count_f64(self, tn_tensor_data(out), bins, lo, hi);
    }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}
