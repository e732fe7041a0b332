/* nn_internal.h — helpers shared by the neural-network op files (src/ops/nn_*.c): dtype
 * checks, gathering any-strided tensors into contiguous float/double working buffers and
 * writing results back, argument readers. Not used outside the nn family.
 *
 * The nn ops compute in an accumulation dtype ("acc"): Double for Double inputs, Float
 * for Float, Half and BFloat16 (upstream's opmath type). Inputs are gathered into acc
 * buffers, kernels (src/kernels/nn.h) run on those, outputs are rounded once at the end.
 * Plain C11; no Python. */
#ifndef TN_OPS_NN_INTERNAL_H
#define TN_OPS_NN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/scalar.h"
#include "core/tensor.h"
#include "kernels/cpu_features.h"
#include "kernels/nn_vec.h"
#include "ops/dispatch.h"
#include "ops/value.h"

/* Runs a kernel that has a vector instance (kernels/nn_vec.h): the tier's float32 one, or
 * the double reference. */
#define NN_KERNEL_VEC(acc, name, ...) \
    ((acc) == TN_DTYPE_FLOAT32 ? tn_nn_vec_f32()->name(__VA_ARGS__) : f64_##name##__scalar(__VA_ARGS__))

/* Half, BFloat16, Float or Double: the dtypes the nn kernels compute. */
bool tn_nn_is_float(tn_dtype d);
/* Upstream's opmath type for a float dtype: Double stays Double, the rest use Float. */
static inline tn_dtype tn_nn_acc(tn_dtype d) { return d == TN_DTYPE_FLOAT64 ? TN_DTYPE_FLOAT64 : TN_DTYPE_FLOAT32; }
/* RuntimeError "\"<kernel>\" not implemented for '<dtype>'" unless t is a float dtype. */
tn_status tn_nn_check_float(const tn_tensor *t, const char *kernel);
/* The same check for kernels upstream also runs on integer dtypes (not Bool): `ints`
 * admits Byte/Char/Short/Int/Long, `long_only` only Long (avg_pool2d). Their acc dtype is
 * tn_nn_acc_any's: integers compute in int64 (tn_nn_load / tn_nn_out_finish widen and narrow). */
/* float32 / float64 only (upstream's AT_DISPATCH_FLOATING_TYPES), else its NotImplementedError */
tn_status tn_nn_check_f32_f64(tn_dtype d, const char *kernel);
tn_status tn_nn_check_float_or_int(const tn_tensor *t, const char *kernel, bool long_only);
static inline bool tn_nn_is_int(tn_dtype d) {
    return d == TN_DTYPE_UINT8 || d == TN_DTYPE_INT8 || d == TN_DTYPE_INT16 || d == TN_DTYPE_INT32 || d == TN_DTYPE_INT64;
}
static inline tn_dtype tn_nn_acc_any(tn_dtype d) { return tn_nn_is_int(d) ? TN_DTYPE_INT64 : tn_nn_acc(d); }

/* Upstream's pooling_output_shape, one home for the 1-d/2-d/3-d pools and their backward:
 * floor or ceil mode, and a last window must start inside the input or the left padding.
 * stride > 0. In int64 arithmetic that wraps as upstream's does (no undefined overflow for
 * the huge sizes and paddings a caller may pass before its shape checks refuse them). */
static inline int64_t tn_nn_pool_out(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                                     bool ceil_mode) {
    int64_t num = tn_sub_wrap(tn_add_wrap(in, tn_mul_wrap(2, pad)), tn_add_wrap(tn_mul_wrap(dil, k - 1), 1));
    if (ceil_mode) num = tn_add_wrap(num, stride - 1);
    /* floor division; -num taken in unsigned arithmetic (num may be INT64_MIN) */
    uint64_t neg = (uint64_t)0 - (uint64_t)num;
    int64_t o = (num >= 0 ? num / stride : -(int64_t)((neg + (uint64_t)stride - 1) / (uint64_t)stride)) + 1;
    if (ceil_mode && tn_mul_wrap(o - 1, stride) >= tn_add_wrap(in, pad)) o--;
    return o;
}

/* How a Half / BFloat16 transposed convolution rounds, as upstream's backend choice on this
 * host: its slow path (slow_conv_transpose2d/3d) keeps the columns, col2im's sums and the
 * bias sum in the dtype, so the returned function rounds each of them; its oneDNN path
 * (use_mkldnn: the host supports the dtype there and no output_padding reaches its stride,
 * is_output_padding_big) rounds once at the end, and NULL is returned. op and s hold nsp
 * entries. Measured against upstream on an AVX2 host (slow path) and an AVX-512/AMX host
 * (oneDNN), docs/STATUS.md "Known gaps" session 28. */
static inline float (*tn_nn_convt_rounding(tn_dtype dt, int nsp, const int64_t *op, const int64_t *s))(float) {
    if (dt != TN_DTYPE_FLOAT16 && dt != TN_DTYPE_BFLOAT16) return NULL;
    bool big = false;
    for (int i = 0; i < nsp; i++) big = big || op[i] >= s[i];
    if (!big && tn_cpu_upstream_onednn_lowp(dt == TN_DTYPE_FLOAT16)) return NULL;
    return dt == TN_DTYPE_FLOAT16 ? tn_round_half_f32 : tn_round_bf16_f32;
}

/* The 2-d nearest (mode 0) / bilinear source-index scales of upstream's upsampling, forward
 * and backward alike, in the opmath type (f: float). compute_scales_value is 1/scale for a
 * positive scale, else in/out; bilinear with align_corners is (in-1)/(out-1). Both ignore
 * a given scale for an unchanged size (measured: the dim is copied), and nearest (always
 * float) for a doubled one (nearest_idx: o >> 1, which the scale 1/2 gives exactly). */
static inline double tn_nn_up_scale(int mode, bool align, bool f, const tn_value *s, int64_t in, int64_t out) {
    if (out == in) return 1.0; /* upstream's 2-D nearest and bilinear copy an unresized dim, scale or not */
    if (mode == 0 && out == 2 * in) return 0.5;
    if (mode != 0 && align)
        return out > 1 ? (f ? (double)((float)(in - 1) / (float)(out - 1)) : (double)(in - 1) / (double)(out - 1)) : 0;
    double r = (s && s->tag == TN_V_DOUBLE && s->u.d > 0) ? 1.0 / s->u.d : (double)in / (double)out;
    return mode == 0 || f ? (double)(float)r : r;
}

/* The result dtype of upstream's Empty convolution backend (an input with no elements):
 * input * weight.view(-1)[0], where the weight's 0-dim element promotes the input only
 * from a higher category (bool < integer < floating < complex). */
static inline tn_dtype tn_nn_conv_empty_dtype(tn_dtype x, tn_dtype w) {
    char kx = tn_dtype_infos[x].kind, kw = tn_dtype_infos[w].kind;
    int cx = kx == 'b' ? 0 : kx == 'f' ? 2 : kx == 'c' ? 3 : 1, cw = kw == 'b' ? 0 : kw == 'f' ? 2 : kw == 'c' ? 3 : 1;
    return cw > cx ? w : x;
}

/* A contiguous working copy of a tensor in an acc dtype. `data` may point straight into
 * the tensor's storage (owned == false) when no conversion or gather is needed. */
typedef struct tn_nn_buf {
    void *data;
    bool owned;
} tn_nn_buf;

/* Gathers t (any strides; Half/BFloat16/Float/Double) into acc (Float or Double). */
tn_status tn_nn_load(const tn_tensor *t, tn_dtype acc, tn_nn_buf *out);
/* Gathers an integral tensor (Byte/Char/Short/Int/Long/Bool) into contiguous int64. */
tn_status tn_nn_load_index(const tn_tensor *t, tn_nn_buf *out);
void tn_nn_buf_free(tn_nn_buf *b);

/* A buffer a kernel can write acc results into for `out` (a contiguous tensor): the
 * tensor's own memory when its dtype is acc, else fresh scratch. tn_nn_out_finish
 * converts scratch into the tensor and frees it. */
tn_status tn_nn_out_begin(tn_tensor *out, tn_dtype acc, tn_nn_buf *buf);
void tn_nn_out_finish(tn_tensor *out, tn_dtype acc, tn_nn_buf *buf);

/* Contiguous uninitialised tensor on the device of `like` (meta stays meta). */
tn_status tn_nn_empty(int ndim, const int64_t *sizes, tn_dtype dtype, const tn_tensor *like, tn_tensor **out);
/* Element of a float tensor at linear (contiguous-order) index i as double (any strides). */
double tn_nn_read(const tn_tensor *t, int64_t i);

/* Optional tensor argument: NULL for None. */
static inline tn_tensor *tn_nn_opt_tensor(const tn_value *v) { return v->tag == TN_V_TENSOR ? v->u.t : NULL; }
/* Optional float argument: `dflt` for None. */
static inline double tn_nn_opt_double(const tn_value *v, double dflt) {
    return v->tag == TN_V_DOUBLE || tn_scalar_is_integral(v, false) ? tn_scalar_as_double(v) : dflt;
}
/* Reads an int[N] argument that may be given as one int (broadcast to n) or a list of
 * n; writes n entries. Returns false if the list has a different length. */
bool tn_nn_int_list(const tn_value *v, int n, int64_t *out);

/* Upstream's upsample meta check after the sizes': a batch of 0 is allowed, any other
 * empty dimension is not ("Non-empty 4D data tensor expected but got a tensor with sizes ..."). */
tn_status tn_nn_check_upsample_nonempty(const tn_tensor *x);

/* Formats sizes "[2, 3]" into a caller's buffer (tn_format_sizes wrapper). */
#define TN_NN_FMT(t, buf) tn_format_sizes((t)->ndim, (t)->sizes, buf, (int)sizeof buf)

/* Transposed convolution (1-d or 2-d, batched input [N, Cin, (H,) W], weight
 * [Cin, Cout/groups, (kh,) kw]), the col2im machinery of the convolution gradients
 * (nn_backward_conv.c). stride/padding/output_padding/dilation are int[] arguments. */
tn_status tn_nn_conv_transposed(tn_tensor *x, tn_tensor *w, tn_tensor *bias, const tn_value *stride,
                                const tn_value *padding, const tn_value *output_padding, const tn_value *dilation,
                                int64_t groups, tn_tensor **out);
/* conv_transpose1d/2d/3d's arguments (input replaced by x, batched): complex operands by
 * real transposed convolutions of their parts (upstream's entries), else
 * tn_nn_conv_transposed. */
tn_status tn_nn_conv_transposed_complex(tn_tensor *x, const tn_value *args, tn_tensor **out);

/* 3-d convolution (nn_conv3d.c): input [N, C, D, H, W], weight [O, C/G, kd, kh, kw];
 * s, p, d per spatial dim, extra = zero rows added after the input (padding='same' with an
 * odd total). */
tn_status tn_nn_conv3d(tn_tensor *x, tn_tensor *w, tn_tensor *bias, const int64_t s[3], const int64_t p[3],
                       const int64_t extra[3], const int64_t d[3], int64_t G, tn_tensor **out);
/* Transposed convolution of 3 spatial dims, or of an integer input of 1 to 3 (nn_conv3d.c);
 * arguments as tn_nn_conv_transposed. */
tn_status tn_nn_conv_transposed3d(tn_tensor *x, tn_tensor *w, tn_tensor *bias, const tn_value *stride,
                                  const tn_value *padding, const tn_value *output_padding, const tn_value *dilation,
                                  int64_t groups, tn_tensor **out);
/* aten::convolution (its arguments) for a 3-d weight, not transposed (nn_conv3d.c). */
tn_status tn_nn_convolution3d(const tn_value *args, tn_tensor **out);
/* aten::convolution_backward for a 3-d weight (nn_conv3d.c); same arguments and results. */
tn_status tn_nn_conv3d_backward(const tn_value *args, tn_value *rets);

/* Runs an op at the door and returns its single tensor result in *out. */
tn_status tn_nn_call1(tn_op_id op, const tn_value *args, tn_tensor **out);

#endif
