/* reduce_segment.c — aten::segment_reduce on CPU: data reduced over consecutive segments
 * along `axis`, the segments given by lengths or offsets (leading dims batched, axis the
 * last dim of lengths), each segment started from `initial` (or the reduction's identity),
 * in the data's type as upstream's kernel does: every step rounded to it, mean dividing
 * the accumulated value by the segment's length. */
#include "core/scalar.h"
#include "ops/reduce.h"

#include <stdlib.h>

enum { SEG_MAX, SEG_MEAN, SEG_MIN, SEG_SUM, SEG_PROD };

static int64_t read_int(const tn_tensor *t, int64_t lin) { return tn_rd_get_i(tn_rd_addr(t, lin), t->dtype); }

/* aten::segment_reduce(data, reduce, *, lengths?, indices?, offsets?, axis, unsafe, initial?) */
tn_status tn_op_segment_reduce(const tn_value *args, tn_value *rets) {
    tn_tensor *data = args[0].u.t;
    const char *r = args[1].u.s.data;
    int64_t rn = args[1].u.s.n;
    int red;
    if (rn == 3 && !strncmp(r, "max", 3)) red = SEG_MAX;
    else if (rn == 4 && !strncmp(r, "mean", 4)) red = SEG_MEAN;
    else if (rn == 3 && !strncmp(r, "min", 3)) red = SEG_MIN;
    else if (rn == 3 && !strncmp(r, "sum", 3)) red = SEG_SUM;
    else if (rn == 4 && !strncmp(r, "prod", 4)) red = SEG_PROD;
    else return tn_error(TN_ERR_RUNTIME, "reduce argument must be either sum, prod, mean, amax or amin, got %.*s", (int)rn, r);
    tn_tensor *lengths = args[2].tag == TN_V_TENSOR ? args[2].u.t : NULL, *offsets = args[4].tag == TN_V_TENSOR ? args[4].u.t : NULL;
    int axis;
    TN_TRY(tn_wrap_dim(args[5].u.i, data->ndim, &axis));
    if (args[3].tag == TN_V_TENSOR) return tn_error(TN_ERR_RUNTIME, "segment_reduce(): indices based reduction is not supported yet.");
    if (!lengths && !offsets) return tn_error(TN_ERR_RUNTIME, "segment_reduce(): Either lengths or offsets must be defined.");
    tn_tensor *seg = lengths ? lengths : offsets;
    if (axis != seg->ndim - 1)
        return tn_error(TN_ERR_RUNTIME, "segment_reduce(): Expected axis to be the last dimension of %s but got %d.", lengths ? "lengths" : "offsets", axis);
    if (!tn_dtype_is_floating(data->dtype))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"_segment_reduce_cpu\" not implemented for '%s'", tn_dtype_infos[data->dtype].c10_name);
    if (seg->dtype != TN_DTYPE_INT64 && seg->dtype != TN_DTYPE_INT32)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"_segment_reduce_%s_cpu_kernel1\" not implemented for '%s'", lengths ? "lengths" : "offsets",
                        tn_dtype_infos[seg->dtype].c10_name);
    for (int d = 0; d < axis; d++)
        if (seg->sizes[d] != data->sizes[d])
            return tn_error(TN_ERR_RUNTIME, "segment_reduce(): the leading dims of %s must match data's", lengths ? "lengths" : "offsets");
    int64_t outer = 1, inner = 1, N = data->sizes[axis], S = seg->sizes[axis] - (offsets && !lengths ? 1 : 0);
    if (S < 0) S = 0;
    for (int d = 0; d < axis; d++) outer *= data->sizes[d];
    for (int d = axis + 1; d < data->ndim; d++) inner *= data->sizes[d];
    int64_t ss = seg->sizes[axis];
    /* segment starts: offsets given, or the running sum of lengths (checked when !unsafe) */
    int64_t *start = malloc(sizeof(int64_t) * (size_t)(outer * (S + 1) + 1));
    if (!start) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (int64_t o = 0; o < outer; o++) {
        int64_t *st = start + o * (S + 1);
        if (lengths) {
            st[0] = 0;
            for (int64_t s = 0; s < S; s++) {
                int64_t l = read_int(seg, o * ss + s);
                if (l < 0 && !args[6].u.b) { free(start); return tn_error(TN_ERR_RUNTIME, "lengths contains negative value!"); }
                st[s + 1] = st[s] + l;
            }
            if (!args[6].u.b && st[S] != N) {
                free(start);
                return tn_error(TN_ERR_RUNTIME, "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when !unsafe.");
            }
        } else
            for (int64_t s = 0; s <= S; s++) st[s] = read_int(seg, o * ss + s);
    }
    int64_t osz[TN_MAX_DIMS];
    memcpy(osz, data->sizes, sizeof(int64_t) * (size_t)data->ndim);
    osz[axis] = S;
    tn_tensor *out;
    tn_status st0 = tn_tensor_empty(data->ndim, osz, data->dtype, tn_tensor_device(data), &out);
    if (st0 != TN_OK) { free(start); return st0; }
    bool has_init = args[7].tag != TN_V_NONE;
    double init = has_init ? tn_scalar_as_double(&args[7]) : 0;
    tn_dtype dt = data->dtype;
    if (!tn_tensor_is_meta(data))
        for (int64_t o = 0; o < outer; o++)
            for (int64_t s = 0; s < S; s++) {
                int64_t b = start[o * (S + 1) + s], e = start[o * (S + 1) + s + 1], len = e - b;
                if (len < 0 || b < 0 || e > N) {
                    tn_tensor_release(out);
                    free(start);
                    return tn_error(TN_ERR_RUNTIME, "segment_reduce(): segment out of range");
                }
                for (int64_t i = 0; i < inner; i++) {
                    double acc = has_init ? tn_round_to_dtype(dt, init)
                                 : red == SEG_MAX ? -INFINITY : red == SEG_MIN ? INFINITY : red == SEG_PROD ? 1.0 : 0.0;
                    for (int64_t j = b; j < e; j++) {
                        double v = tn_rd_get(tn_rd_addr(data, (o * N + j) * inner + i), dt);
                        if (red == SEG_MAX) acc = isnan(v) ? v : (acc < v ? v : acc);
                        else if (red == SEG_MIN) acc = isnan(v) ? v : (v < acc ? v : acc);
                        else if (red == SEG_PROD) acc = tn_round_to_dtype(dt, acc * v);
                        else acc = tn_round_to_dtype(dt, acc + v);
                    }
                    if (red == SEG_MEAN) {
                        if (len == 0 && !has_init) acc = NAN;
                        else if (len > 0 && !isnan(acc)) acc = tn_round_to_dtype(dt, acc / (double)tn_round_to_dtype(dt, (double)len));
                    }
                    tn_rd_set(tn_rd_addr(out, (o * S + s) * inner + i), dt, acc);
                }
            }
    free(start);
    rets[0] = tn_value_tensor(out);
    return TN_OK;
}
