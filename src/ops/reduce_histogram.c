/* reduce_histogram.c — aten::histogram (1-D, bin count or bin edges) and histogramdd with its
 * parts (_histogramdd_bin_edges, _histogramdd_from_bin_cts, _histogramdd_from_bin_tensors):
 * weighted counts of the rows of an (M, N) view of the input into an N-dimensional grid of
 * bins, optionally normalised to a density. Float and double only, as upstream. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/threadpool.h"
#include "ops/composite_internal.h"
#include "ops/dispatch.h"

#define HIST_MAX_DIMS 64

/* How a coordinate finds its bin: bin edges given as a tensor are searched (upstream's
 * BINARY_SEARCH); equal-width edges made from a bin count are first guessed by linear
 * interpolation, the guess then corrected by a search among its neighbours
 * (LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH), so an element on an edge that linspace rounded
 * lands where the edge says. */
typedef enum hist_rule { HIST_RULE_SEARCH, HIST_RULE_LINEAR_LOCAL } hist_rule;

/* One count pass over rows [r0, r1) of x (rows of n coordinates, contiguous), written once
 * per type: a row with any coordinate outside [first edge, last edge] (NaN included) is
 * skipped; the last bin of each dimension includes its right edge; the count (or the row's
 * weight) accumulates in the input's type. */
#define HIST_LOOP(T, NAME)                                                                           \
    static int64_t NAME##_upper(const T *e, int64_t lo, int64_t hi, T v) {                        \
        while (lo < hi) {                                                                          \
            int64_t mid = lo + (hi - lo) / 2;                                                      \
            if (e[mid] > v) hi = mid;                                                              \
            else lo = mid + 1;                                                                     \
        }                                                                                          \
        return lo;                                                                                 \
    }                                                                                              \
    static void NAME(const T *x, const T *w, int64_t r0, int64_t r1, int64_t n, const T *const *edges, \
                     const int64_t *ne, const int64_t *hstride, hist_rule rule, T *hist) {        \
        for (int64_t r = r0; r < r1; r++) {                                                        \
            int64_t at = 0;                                                                        \
            bool skip = false;                                                                     \
            for (int64_t d = 0; d < n && !skip; d++) {                                             \
                const T v = x[r * n + d], lo = edges[d][0], hi = edges[d][ne[d] - 1];              \
                if (!(v >= lo && v <= hi)) { skip = true; break; }                                 \
                int64_t pos;                                                                       \
                if (rule == HIST_RULE_SEARCH) {                                                    \
                    pos = NAME##_upper(edges[d], 0, ne[d], v) - 1;                                 \
                } else {                                                                           \
                    pos = (int64_t)((v - lo) * (T)(ne[d] - 1) / (hi - lo));                        \
                    int64_t pmin = pos - 1 > 0 ? pos - 1 : 0, pmax = pos + 2 < ne[d] ? pos + 2 : ne[d]; \
                    pos = NAME##_upper(edges[d], pmin, pmax, v) - 1;                               \
                }                                                                                  \
                if (pos == ne[d] - 1) pos -= 1;                                                    \
                if (pos < 0) pos = 0; /* unsorted edges only: keep the write in bounds */          \
                at += hstride[d] * pos;                                                            \
            }                                                                                      \
            if (!skip) hist[at] += w ? w[r] : (T)1;                                                \
        }                                                                                          \
    }                                                                                              \
    /* Upstream counts each thread's share of the rows (at most one share per 200 rows) into \
     * its own histogram and sums them; the same partition here keeps weighted sums in the    \
     * same order. Then density divides by the total and by each bin's width per dimension. */ \
    static tn_status NAME##_run(const T *x, const T *w, int64_t m, int64_t n, const T *const *edges, \
                                const int64_t *ne, bool density, hist_rule rule, T *hist, int64_t hn) { \
        int64_t hstride[HIST_MAX_DIMS];                                                            \
        int64_t s = 1;                                                                             \
        for (int64_t d = n - 1; d >= 0; d--) {                                                     \
            hstride[d] = s;                                                                        \
            s *= ne[d] - 1;                                                                        \
        }                                                                                          \
        int64_t nt = tn_get_num_threads(), by_grain = (m + 199) / 200;                             \
        if (nt > by_grain) nt = by_grain;                                                          \
        if (nt <= 1) {                                                                             \
            NAME(x, w, 0, m, n, edges, ne, hstride, rule, hist);                                   \
        } else {                                                                                   \
            T *part = calloc((size_t)(hn ? hn : 1), sizeof(T));                                    \
            if (!part) return tn_error(TN_ERR_NO_MEMORY, "out of memory");                         \
            int64_t chunk = (m + nt - 1) / nt;                                                     \
            for (int64_t t = 0; t < nt && t * chunk < m; t++) {                                    \
                memset(part, 0, sizeof(T) * (size_t)hn);                                           \
                int64_t r1 = (t + 1) * chunk < m ? (t + 1) * chunk : m;                            \
                NAME(x, w, t * chunk, r1, n, edges, ne, hstride, rule, part);                      \
                for (int64_t b = 0; b < hn; b++) hist[b] += part[b];                               \
            }                                                                                      \
            free(part);                                                                            \
        }                                                                                          \
        if (density) {                                                                             \
            T total = 0;                                                                           \
            for (int64_t b = 0; b < hn; b++) total += hist[b];                                     \
            for (int64_t b = 0; b < hn; b++) hist[b] /= total;                                     \
            for (int64_t d = 0; d < n; d++)                                                        \
                for (int64_t b = 0; b < hn; b++) {                                                 \
                    int64_t k = (b / hstride[d]) % (ne[d] - 1);                                    \
                    hist[b] /= (T)(edges[d][k + 1] - edges[d][k]);                                 \
                }                                                                                  \
        }                                                                                          \
        return TN_OK;                                                                              \
    }
HIST_LOOP(float, hist_f32)
HIST_LOOP(double, hist_f64)


/* A contiguous copy (or the tensor itself) of t viewed as `ndim` sizes, owned by c. */
static tn_tensor *contig_view(tn_cx *c, tn_tensor *t, int ndim, const int64_t *sizes) {
    tn_tensor *ct = tn_cx_call(c, TN_OP_contiguous, TN_ARGS(TN_T(t), TN_MF(0)));
    if (!ct) return NULL;
    return tn_cx_call(c, TN_OP_view, TN_ARGS(TN_T(ct), tn_value_intlist(sizes, ndim)));
}

static const char *cpp_name(tn_dtype d) { return tn_dtype_infos[d].cpp_name; }

static void shape_str(const tn_tensor *t, char *buf, size_t cap) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < t->ndim && k < cap; d++)
        k += (size_t)snprintf(buf + k, cap - k, d ? ", %lld" : "%lld", (long long)t->sizes[d]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
}

/* Upstream's histogramdd_check_inputs on the (M, N) view x2: bin tensors (if any) of x2's
 * dtype, 1-D, non-empty; weight of x2's dtype with x2's leading shape. */
static tn_status check_inputs(const tn_tensor *x2, tn_tensor *const *bins, int64_t nbins, const tn_tensor *w, bool w_shape_ok) {
    for (int64_t d = 0; bins && d < nbins; d++) {
        const tn_tensor *b = bins[d];
        if (b->dtype != x2->dtype)
            return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with dtype %s and bins for dimension %lld with dtype %s",
                            cpp_name(x2->dtype), (long long)d, cpp_name(b->dtype));
        if (b->ndim != 1)
            return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: bins tensor should have one dimension, but got %d dimensions in the bins tensor for dimension %lld",
                            b->ndim, (long long)d);
        if (tn_tensor_numel(b) == 0)
            return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in the bins tensor for dimension %lld",
                            (long long)d);
    }
    if (w) {
        if (w->dtype != x2->dtype)
            return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the same dtype, but got input(%s), and weight(%s)",
                            cpp_name(x2->dtype), cpp_name(w->dtype));
        if (!w_shape_ok) {
            char a[64], b[256];
            shape_str(x2, a, sizeof a);
            shape_str(w, b, sizeof b);
            return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor excluding its innermost dimension, but got input with shape %s and weight with shape %s",
                            a, b);
        }
    }
    return TN_OK;
}

static tn_status check_bin_cts(const int64_t *bins, int64_t n, bool dd) {
    for (int64_t d = 0; d < n; d++)
        if (bins[d] <= 0)
            return tn_error(TN_ERR_RUNTIME, "torch.%s(): bins must be > 0, but got %lld for dimension %lld",
                            dd ? "histogramdd" : "histogram", (long long)bins[d], (long long)d);
    return TN_OK;
}

static tn_status check_floating(tn_dtype dt, const char *kname) {
    if (dt == TN_DTYPE_FLOAT32 || dt == TN_DTYPE_FLOAT64) return TN_OK;
    return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"%s\" not implemented for '%s'", kname, tn_dtype_infos[dt].c10_name);
}

/* Upstream's select_outer_bin_edges: per dimension the range's pair, else the data's
 * min and max (0 and 1 for no data); finite and ordered; an empty range widened by 0.5
 * either side. */
static tn_status outer_edges(const tn_tensor *x2, const tn_value *range, double *lo, double *hi) {
    int64_t m = x2->sizes[0], n = x2->sizes[1];
    if (!tn_value_is_none(range)) {
        if (range->u.dlist.n != 2 * n)
            return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: for a %lld-dimensional histogram range should have %lld elements, but got %lld",
                            (long long)n, (long long)(2 * n), (long long)range->u.dlist.n);
        for (int64_t d = 0; d < n; d++) {
            lo[d] = range->u.dlist.data[2 * d];
            hi[d] = range->u.dlist.data[2 * d + 1];
        }
    } else {
        TN_TRY(check_floating(x2->dtype, "histogramdd"));
        for (int64_t d = 0; d < n; d++) {
            lo[d] = 0;
            hi[d] = 1;
        }
        if (m > 0) {
            const void *p = tn_tensor_data(x2);
            for (int64_t d = 0; d < n; d++) {
                double mn = INFINITY, mx = -INFINITY;
                for (int64_t r = 0; r < m; r++) {
                    double v = x2->dtype == TN_DTYPE_FLOAT32 ? (double)((const float *)p)[r * n + d] : ((const double *)p)[r * n + d];
                    if (isnan(v)) { mn = mx = NAN; break; }
                    if (v < mn) mn = v;
                    if (v > mx) mx = v;
                }
                lo[d] = mn;
                hi[d] = mx;
            }
        }
    }
    for (int64_t d = 0; d < n; d++) {
        if (!isfinite(lo[d]) || !isfinite(hi[d]))
            return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: dimension %lld's range [%g, %g] is not finite", (long long)d, lo[d], hi[d]);
        if (!(lo[d] <= hi[d]))
            return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: min should not exceed max, but got min %g max %g for dimension %lld",
                            lo[d], hi[d], (long long)d);
        if (lo[d] == hi[d]) {
            lo[d] -= 0.5;
            hi[d] += 0.5;
        }
    }
    return TN_OK;
}

/* Bin edges of every dimension: linspace(lo, hi, bins + 1) in the input's dtype, owned by c. */
static void linspace_edges(tn_cx *c, tn_dtype dt, const double *lo, const double *hi, const int64_t *bins, int64_t n, tn_tensor **edges) {
    for (int64_t d = 0; d < n; d++) {
        tn_value dtv = {.tag = TN_V_DTYPE};
        dtv.u.dtype = dt;
        /* bins + 1 wraps for bins = INT64_MAX (a UBSan report of the seed-47 fuzz run), as
         * upstream's int64 addition does: linspace then refuses the negative count */
        int64_t steps = (int64_t)((uint64_t)bins[d] + 1u);
        edges[d] = tn_cx_call(c, TN_OP_linspace, TN_ARGS(TN_D(lo[d]), TN_D(hi[d]), TN_I(steps), dtv, TN_NONE, TN_NONE, TN_NONE));
    }
}

/* The counting shared by every entry point: hist (new, owned by c) of the (M, N) contiguous
 * view x2 over the N contiguous edge tensors, weights w (contiguous (M,) or NULL). */
static tn_tensor *count(tn_cx *c, tn_tensor *x2, tn_tensor *const *edges, tn_tensor *w, bool density, hist_rule rule) {
    if (c->st != TN_OK) return NULL;
    int64_t n = x2->sizes[1], shape[HIST_MAX_DIMS], ne[HIST_MAX_DIMS], hn = 1;
    const void *ep[HIST_MAX_DIMS];
    tn_tensor *ce[HIST_MAX_DIMS];
    for (int64_t d = 0; d < n; d++) {
        ne[d] = tn_tensor_numel(edges[d]);
        shape[d] = ne[d] - 1;
        hn *= shape[d];
        ce[d] = contig_view(c, edges[d], 1, &ne[d]);
    }
    tn_cx_fail(c, check_floating(x2->dtype, "histogram_cpu"));
    if (c->st != TN_OK) return NULL;
    tn_tensor *hist;
    tn_status st = tn_tensor_zeros((int)n, shape, x2->dtype, tn_tensor_device(x2), &hist);
    if (st != TN_OK) { tn_cx_fail(c, st); return NULL; }
    tn_cx_keep(c, hist);
    tn_tensor_release(hist);
    if (tn_tensor_is_meta(x2)) return hist;
    for (int64_t d = 0; d < n; d++) ep[d] = tn_tensor_data(ce[d]);
    int64_t m = x2->sizes[0];
    if (x2->dtype == TN_DTYPE_FLOAT32)
        st = hist_f32_run(tn_tensor_data(x2), w ? tn_tensor_data(w) : NULL, m, n, (const float *const *)ep, ne, density, rule, tn_tensor_data(hist), hn);
    else
        st = hist_f64_run(tn_tensor_data(x2), w ? tn_tensor_data(w) : NULL, m, n, (const double *const *)ep, ne, density, rule, tn_tensor_data(hist), hn);
    tn_cx_fail(c, st);
    return c->st == TN_OK ? hist : NULL;
}

/* The (M, N) contiguous view of self for an N-dimensional histogram (N = self's last size;
 * 1 and every element for the 1-D histogram), and the weights as (M,). */
static tn_status prepare(tn_cx *c, tn_tensor *self, const tn_value *weight, bool dd, tn_tensor **x2, tn_tensor **w,
                         bool *w_shape_ok) {
    int64_t n = 1;
    if (dd) {
        if (self->ndim < 2) return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: input tensor should have at least 2 dimensions");
        n = self->sizes[self->ndim - 1];
    }
    int64_t numel = tn_tensor_numel(self);
    int64_t sz[2] = {n ? numel / n : 0, n};
    if (n > HIST_MAX_DIMS) return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: at most %d dimensions are supported", HIST_MAX_DIMS);
    *x2 = contig_view(c, self, 2, sz);
    *w = NULL;
    *w_shape_ok = true;
    if (!tn_value_is_none(weight)) {
        tn_tensor *wt = weight->u.t;
        /* histogramdd: weight's shape is self's without the innermost dim (a 0-dim weight
         * counts as [1]); histogram reshapes both, so there only the counts must agree */
        bool same = tn_tensor_numel(wt) == sz[0];
        if (dd && same) {
            int wn = wt->ndim ? wt->ndim : 1;
            same = wn == self->ndim - 1;
            for (int i = 0; same && i < wn; i++) same = (wt->ndim ? wt->sizes[i] : 1) == self->sizes[i];
        }
        *w_shape_ok = same;
        if (same) *w = contig_view(c, wt, 1, sz);
        else *w = tn_cx_keep(c, wt); /* wrong shape: check_inputs reports it with its shape */
    }
    return c->st;
}

static tn_status check_bin_count_len(const tn_tensor *x2, int64_t nbins) {
    if (nbins != x2->sizes[1])
        return tn_error(TN_ERR_RUNTIME, "histogramdd: The size of bins must be equal to the innermost dimension of the input.");
    return TN_OK;
}

/* The hist of self over bin counts (LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH) and, when
 * edges_out is given, the N edge tensors (new references). */
static tn_status from_bin_cts(tn_tensor *self, const int64_t *bins, int64_t nbins, const tn_value *range, const tn_value *weight,
                              bool density, bool dd, tn_tensor **hist_out, tn_tensor **edges_out) {
    tn_cx c = {0};
    tn_tensor *x2, *w, *edges[HIST_MAX_DIMS];
    bool w_ok;
    double lo[HIST_MAX_DIMS], hi[HIST_MAX_DIMS];
    tn_cx_fail(&c, prepare(&c, self, weight, dd, &x2, &w, &w_ok));
    if (c.st == TN_OK) tn_cx_fail(&c, check_bin_count_len(x2, nbins));
    if (c.st == TN_OK) tn_cx_fail(&c, check_bin_cts(bins, nbins, dd));
    if (c.st == TN_OK) tn_cx_fail(&c, outer_edges(x2, range, lo, hi));
    if (c.st == TN_OK) linspace_edges(&c, x2->dtype, lo, hi, bins, nbins, edges);
    if (c.st == TN_OK) tn_cx_fail(&c, check_inputs(x2, NULL, 0, w, w_ok));
    tn_tensor *hist = hist_out ? count(&c, x2, edges, w, density, HIST_RULE_LINEAR_LOCAL) : NULL;
    if (c.st == TN_OK) {
        if (hist_out) { tn_tensor_retain(hist); *hist_out = hist; }
        for (int64_t d = 0; edges_out && d < nbins; d++) { tn_tensor_retain(edges[d]); edges_out[d] = edges[d]; }
    }
    tn_cx_release(&c);
    return c.st;
}

/* The hist of self over given edge tensors (BINARY_SEARCH); edges_out: copies of them. */
static tn_status from_bin_tensors(tn_tensor *self, tn_tensor *const *bins, int64_t nbins, const tn_value *weight, bool density,
                                  bool dd, tn_tensor **hist_out, tn_tensor **edges_out) {
    tn_cx c = {0};
    tn_tensor *x2, *w, *edges[HIST_MAX_DIMS];
    bool w_ok;
    tn_cx_fail(&c, prepare(&c, self, weight, dd, &x2, &w, &w_ok));
    if (c.st == TN_OK) tn_cx_fail(&c, check_bin_count_len(x2, nbins));
    if (c.st == TN_OK) tn_cx_fail(&c, check_inputs(x2, bins, nbins, w, w_ok));
    for (int64_t d = 0; c.st == TN_OK && d < nbins; d++) {
        int64_t k = tn_tensor_numel(bins[d]) - 1;
        tn_cx_fail(&c, check_bin_cts(&k, 1, dd));
        edges[d] = edges_out ? tn_cx_call(&c, TN_OP_clone, TN_ARGS(TN_T(bins[d]), TN_MF(0))) : bins[d];
    }
    tn_tensor *hist = count(&c, x2, edges, w, density, HIST_RULE_SEARCH);
    if (c.st == TN_OK) {
        tn_tensor_retain(hist);
        *hist_out = hist;
        for (int64_t d = 0; edges_out && d < nbins; d++) { tn_tensor_retain(edges[d]); edges_out[d] = edges[d]; }
    }
    tn_cx_release(&c);
    return c.st;
}

static tn_status ret_list(tn_tensor **edges, int64_t n, tn_value *ret) {
    tn_tensor **p = calloc((size_t)(n ? n : 1), sizeof *p);
    if (!p) {
        for (int64_t d = 0; d < n; d++) tn_tensor_release(edges[d]);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    if (n > 0) memcpy(p, edges, sizeof *p * (size_t)n);
    *ret = tn_value_tensorlist(p, n);
    return TN_OK;
}

/* Upstream has no Meta kernel for the histogram family (histc aside): its dispatcher
 * refuses a call with any meta tensor argument before the kernel; ours would read the
 * meta tensor's (absent) data. */
static tn_status no_meta_kernel(const char *op, const tn_value *args, int nargs) {
    for (int i = 0; i < nargs; i++) {
        bool meta = args[i].tag == TN_V_TENSOR && args[i].u.t && tn_tensor_is_meta(args[i].u.t);
        for (int64_t k = 0; !meta && args[i].tag == TN_V_TENSORLIST && k < args[i].u.tlist.n; k++)
            meta = args[i].u.tlist.data[k] && tn_tensor_is_meta(args[i].u.tlist.data[k]);
        if (meta)
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::%s: attempted to run this operator with Meta tensors, but "
                                                    "there was no fake impl or Meta kernel registered.", op);
    }
    return TN_OK;
}

/* aten::histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None,
 *                        bool density=False) -> (Tensor hist, Tensor bin_edges) */
tn_status tn_op_histogram_bin_ct(const tn_value *args, tn_value *rets) {
    TN_TRY(no_meta_kernel("histogram.bin_ct", args, 4));
    tn_tensor *hist, *edges;
    TN_TRY(from_bin_cts(args[0].u.t, &args[1].u.i, 1, &args[2], &args[3], args[4].u.b, false, &hist, &edges));
    rets[0] = tn_value_tensor(hist);
    rets[1] = tn_value_tensor(edges);
    return TN_OK;
}

/* aten::histogram.bins_tensor(Tensor self, Tensor bins, *, Tensor? weight=None, bool density=False)
 *                             -> (Tensor hist, Tensor bin_edges) */
tn_status tn_op_histogram_bins_tensor(const tn_value *args, tn_value *rets) {
    TN_TRY(no_meta_kernel("histogram.bins_tensor", args, 3));
    tn_tensor *hist, *edges;
    TN_TRY(from_bin_tensors(args[0].u.t, &args[1].u.t, 1, &args[2], args[3].u.b, false, &hist, &edges));
    rets[0] = tn_value_tensor(hist);
    rets[1] = tn_value_tensor(edges);
    return TN_OK;
}

/* aten::_histogramdd_bin_edges(Tensor self, int[] bins, *, float[]? range=None, Tensor? weight=None,
 *                              bool density=False) -> Tensor[] */
tn_status tn_op__histogramdd_bin_edges(const tn_value *args, tn_value *rets) {
    TN_TRY(no_meta_kernel("_histogramdd_bin_edges", args, 4));
    tn_tensor *edges[HIST_MAX_DIMS];
    int64_t n = args[1].u.ilist.n;
    TN_TRY(from_bin_cts(args[0].u.t, args[1].u.ilist.data, n, &args[2], &args[3], args[4].u.b, true, NULL, edges));
    return ret_list(edges, n, &rets[0]);
}

/* aten::_histogramdd_from_bin_cts(Tensor self, int[] bins, *, float[]? range=None, Tensor? weight=None,
 *                                 bool density=False) -> Tensor */
tn_status tn_op__histogramdd_from_bin_cts(const tn_value *args, tn_value *rets) {
    TN_TRY(no_meta_kernel("_histogramdd_from_bin_cts", args, 4));
    tn_tensor *hist;
    TN_TRY(from_bin_cts(args[0].u.t, args[1].u.ilist.data, args[1].u.ilist.n, &args[2], &args[3], args[4].u.b, true, &hist, NULL));
    rets[0] = tn_value_tensor(hist);
    return TN_OK;
}

/* aten::_histogramdd_from_bin_tensors(Tensor self, Tensor[] bins, *, Tensor? weight=None,
 *                                     bool density=False) -> Tensor */
tn_status tn_op__histogramdd_from_bin_tensors(const tn_value *args, tn_value *rets) {
    TN_TRY(no_meta_kernel("_histogramdd_from_bin_tensors", args, 3));
    tn_tensor *hist;
    TN_TRY(from_bin_tensors(args[0].u.t, args[1].u.tlist.data, args[1].u.tlist.n, &args[2], args[3].u.b, true, &hist, NULL));
    rets[0] = tn_value_tensor(hist);
    return TN_OK;
}

/* histogramdd over bin counts: the hist and the edges, each a door call as upstream composes it. */
static tn_status histogramdd_cts(const tn_value *args, const int64_t *bins, int64_t n, tn_value *rets) {
    tn_value a[5] = {args[0], tn_value_intlist(bins, n), args[2], args[3], args[4]};
    tn_value edges, hist;
    TN_TRY(tn_dispatch(TN_OP__histogramdd_bin_edges, a, &edges));
    tn_status st = tn_dispatch(TN_OP__histogramdd_from_bin_cts, a, &hist);
    if (st != TN_OK) {
        tn_value_release(&edges);
        return st;
    }
    rets[0] = hist;
    rets[1] = edges;
    return TN_OK;
}

/* aten::histogramdd(Tensor self, int[] bins, float[]? range=None, Tensor? weight=None,
 *                   bool density=False) -> (Tensor hist, Tensor[] bin_edges) */
tn_status tn_op_histogramdd(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    if (self->ndim < 2) return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: input tensor should have at least 2 dimensions");
    if (args[1].u.ilist.n != self->sizes[self->ndim - 1])
        return tn_error(TN_ERR_RUNTIME, "histogramdd: The size of bins must be equal to the innermost dimension of the input.");
    return histogramdd_cts(args, args[1].u.ilist.data, args[1].u.ilist.n, rets);
}

/* aten::histogramdd.int_bins(Tensor self, int bins, ...): the same count in every dimension. */
tn_status tn_op_histogramdd_int_bins(const tn_value *args, tn_value *rets) {
    tn_tensor *self = args[0].u.t;
    if (self->ndim < 2) return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: input tensor should have at least 2 dimensions");
    int64_t n = self->sizes[self->ndim - 1], bins[HIST_MAX_DIMS];
    if (n > HIST_MAX_DIMS) return tn_error(TN_ERR_RUNTIME, "torch.histogramdd: at most %d dimensions are supported", HIST_MAX_DIMS);
    for (int64_t d = 0; d < n; d++) bins[d] = args[1].u.i;
    return histogramdd_cts(args, bins, n, rets);
}

/* aten::histogramdd.TensorList_bins(Tensor self, Tensor[] bins, float[]? range=None, Tensor? weight=None,
 *                                   bool density=False): the hist, and the given bins themselves
 * as the edges (range is not used). */
tn_status tn_op_histogramdd_TensorList_bins(const tn_value *args, tn_value *rets) {
    tn_value a[4] = {args[0], args[1], args[3], args[4]};
    TN_TRY(tn_dispatch(TN_OP__histogramdd_from_bin_tensors, a, rets));
    int64_t n = args[1].u.tlist.n;
    tn_tensor *edges[HIST_MAX_DIMS];
    for (int64_t d = 0; d < n; d++) {
        edges[d] = args[1].u.tlist.data[d];
        tn_tensor_retain(edges[d]);
    }
    tn_status st = ret_list(edges, n, &rets[1]);
    if (st != TN_OK) tn_value_release(&rets[0]);
    return st;
}
