/* reduce_histc.c — aten::histc on CPU: equal-width bins over [min, max] (or the data's range
 * when min == max), counted in the input's floating dtype. MoE routers (qwen2_moe, mixtral)
 * use it to count tokens per expert. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/scalar.h"
#include "core/threadpool.h"
#include "ops/dispatch.h"
#include "ops/shape.h"

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

/* The bin rule of upstream's LINEAR_INTERPOLATION histogram, written once per dtype: every
 * element in [lo, hi] (NaN never is) lands in trunc((x - lo) * bins / (hi - lo)), evaluated
 * in the input's type, with x == hi folded into the last bin; counts accumulate in that type
 * too. T is the arithmetic type, LD loads element i, RD rounds a result to the input's type
 * (BFloat16 / Half arithmetic in c10 rounds every operation, bins included; identity for
 * float and double). */
#define HISTC_LOOP(T, NAME, ST, LD, RD)                                                            \
    static void NAME(const tn_tensor *self, T *hist, int64_t bins, double lo_d, double hi_d, int64_t i0, int64_t i1) { \
        const ST *x = (const ST *)self->storage->data;                                            \
        const T lo = RD((T)lo_d), hi = RD((T)hi_d), nb = RD((T)bins), width = RD(hi - lo);         \
        bool contig = tn_tensor_is_contiguous(self);                                              \
        for (int64_t i = i0; i < i1; i++) {                                                       \
            T e = LD(x[contig ? self->offset + i : offset_of(self, i)]);                          \
            if (!(e >= lo && e <= hi)) continue;                                                  \
            int64_t pos = (int64_t)RD(RD(RD(e - lo) * nb) / width);                               \
            if (pos == bins) pos -= 1;                                                            \
            hist[pos] = RD(hist[pos] + (T)1);                                                     \
        }                                                                                         \
    }
#define HISTC_ID(v) (v)
#define HISTC_BF16(v) tn_round_bf16_f32(v)
#define HISTC_F16(v) tn_round_half_f32(v)
HISTC_LOOP(float, histc_count_f32, float, HISTC_ID, HISTC_ID)
HISTC_LOOP(double, histc_count_f64, double, HISTC_ID, HISTC_ID)
HISTC_LOOP(float, histc_count_bf16, uint16_t, tn_bf16_to_f32, HISTC_BF16)
HISTC_LOOP(float, histc_count_f16, uint16_t, tn_half_to_f32, HISTC_F16)

/* Smallest and largest element; NaN if any element is NaN (as aminmax propagates it). */
static void data_range(const tn_tensor *self, double *lo, double *hi) {
    int64_t n = tn_tensor_numel(self);
    bool contig = tn_tensor_is_contiguous(self);
    double mn = INFINITY, mx = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        int64_t off = contig ? self->offset + i : offset_of(self, i);
        const void *d = self->storage->data;
        double e = self->dtype == TN_DTYPE_FLOAT32    ? (double)((const float *)d)[off]
                   : self->dtype == TN_DTYPE_FLOAT64  ? ((const double *)d)[off]
                   : self->dtype == TN_DTYPE_BFLOAT16 ? (double)tn_bf16_to_f32(((const uint16_t *)d)[off])
                                                      : (double)tn_half_to_f32(((const uint16_t *)d)[off]);
        if (isnan(e)) { mn = mx = NAN; break; }
        if (e < mn) mn = e;
        if (e > mx) mx = e;
    }
    *lo = mn;
    *hi = mx;
}

static tn_status histc_run(tn_tensor *self, int64_t bins, const tn_value *args, tn_value *rets);

/* aten::histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor */
tn_status tn_op_histc(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    int64_t bins = args[1].u.i;
    if (!tn_dtype_is_floating(self->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"histogram_cpu\" not implemented for '%s'", tn_dtype_infos[self->dtype].c10_name);
    if (bins <= 0)
        return tn_error(TN_ERR_RUNTIME, "torch.histogramdd(): bins must be > 0, but got %lld for dimension 0",
                        (long long)bins);
    if (tn_tensor_is_meta(self) || tn_tensor_is_contiguous(self)) return histc_run(self, bins, args, rets);
    /* Upstream reshapes its input to (numel, 1) before looking at it: a copy of a view that
     * cannot be reshaped, whose allocation fails for an expanded view of 2**40 elements
     * (the session-32 fuzz run: ours counted them, an hour's loop). The same copy here. */
    tn_tensor *c;
    TN_TRY(tn_tensor_contiguous(self, &c));
    tn_status st = histc_run(c, bins, args, rets);
    tn_tensor_release(c);
    return st;
}

static tn_status histc_run(tn_tensor *self, int64_t bins, const tn_value *args, tn_value *rets) {
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
        if (self->dtype == TN_DTYPE_FLOAT32) histc_count_f32(self, tn_tensor_data(out), bins, lo, hi, 0, tn_tensor_numel(self));
        else if (self->dtype == TN_DTYPE_FLOAT64) histc_count_f64(self, tn_tensor_data(out), bins, lo, hi, 0, tn_tensor_numel(self));
        else {
            /* Upstream counts each thread's share of the elements (at::parallel_for with a
             * grain of 200: as many equal chunks as threads, at most one per 200 elements)
             * into a histogram of the input's type, whose counts stop growing once + 1
             * rounds away (256 in BFloat16), then sums the per-thread histograms. */
            int64_t n = tn_tensor_numel(self), nt = tn_get_num_threads();
            int64_t by_grain = (n + 199) / 200;
            if (nt > by_grain) nt = by_grain;
            if (nt < 1) nt = 1;
            int64_t chunk = (n + nt - 1) / nt;
            float *h = calloc((size_t)bins * 2, sizeof(float)), *sum = h + bins;
            if (!h) { tn_tensor_release(out); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
            bool bf = self->dtype == TN_DTYPE_BFLOAT16;
            for (int64_t t = 0; t < nt && t * chunk < n; t++) {
                int64_t i0 = t * chunk, i1 = i0 + chunk < n ? i0 + chunk : n;
                memset(h, 0, sizeof(float) * (size_t)bins);
                if (bf) histc_count_bf16(self, h, bins, lo, hi, i0, i1);
                else histc_count_f16(self, h, bins, lo, hi, i0, i1);
                for (int64_t b = 0; b < bins; b++) sum[b] += h[b];
            }
            uint16_t *o = tn_tensor_data(out);
            for (int64_t b = 0; b < bins; b++) o[b] = bf ? tn_f32_to_bf16(sum[b]) : tn_f32_to_half(sum[b]);
            free(h);
        }
    }
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}
