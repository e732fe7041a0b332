/* nn_backward_internal.h — helpers shared by the backward operator files
 * (src/ops/nn_backward*.c): output_mask reading, acc-dtype scratch and result buffers,
 * 2-d products of views through the door, dtype refusals as upstream's dispatch macros.
 * Not used outside those files. Plain C11; no Python. */
#ifndef TN_OPS_NN_BACKWARD_INTERNAL_H
#define TN_OPS_NN_BACKWARD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/nn_internal.h"

/* Runs the float or double instance of a kernels/nn.h or kernels/nn_backward.h kernel. */
#define NN_KERNEL(acc, name, ...) \
    ((acc) == TN_DTYPE_FLOAT32 ? f32_##name##__scalar(__VA_ARGS__) : f64_##name##__scalar(__VA_ARGS__))

/* Elements of work per thread-pool chunk below which splitting further does not pay. */
#define TN_NNB_GRAIN ((int64_t)1 << 15)

static inline const char *tn_nnb_dname(tn_dtype d) { return tn_dtype_infos[d].c10_name; }
static inline tn_value tn_nnb_vnone(void) { tn_value v = {.tag = TN_V_NONE}; return v; }

/* output_mask entry i (a bool[N] argument; absent entries read as true). */
static inline bool tn_nnb_mask_at(const tn_value *v, int i) {
    if (v->tag == TN_V_BOOLLIST) return i < v->u.blist.n ? v->u.blist.data[i] : false;
    return true;
}

static inline bool tn_nnb_same_sizes(const tn_tensor *a, const tn_tensor *b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i]) return false;
    return true;
}

/* Whether any of the n tensors (NULL entries skipped) is a meta tensor. */
static inline bool tn_nnb_any_meta(int n, tn_tensor *const *ts) {
    for (int i = 0; i < n; i++)
        if (ts[i] && tn_tensor_is_meta(ts[i])) return true;
    return false;
}

/* Releases a partially built result triple on failure (NULL entries skipped). */
static inline void tn_nnb_release3(tn_tensor *a, tn_tensor *b, tn_tensor *c) {
    if (a) tn_tensor_release(a);
    if (b) tn_tensor_release(b);
    if (c) tn_tensor_release(c);
}

/* An acc scratch buffer of n elements (malloc'd, the caller frees), zeroed or not. */
tn_status tn_nnb_acc_alloc(tn_dtype acc, int64_t n, bool zero, void **out);
/* A convolution work buffer of n acc elements: the calling thread's scratch `slot`
 * (TN_SCRATCH_CONV_*, kept between calls: a training step's convolutions neither allocate
 * nor touch fresh pages) when it is at most 4 MiB, else malloc'd (*owned: the caller frees). */
tn_status tn_nnb_conv_buf(tn_dtype acc, int64_t n, int slot, void **out, bool *owned);
/* tn_nn_out_begin, then the acc buffer zeroed when the kernel accumulates into it. */
tn_status tn_nnb_out_begin(tn_tensor *out, tn_dtype acc, bool zero, tn_nn_buf *b);
/* NotImplementedError "\"<kernel>\" not implemented for '<dtype>'" (upstream's dispatch
 * macros) unless t is Half, BFloat16, Float or Double. */
tn_status tn_nnb_check_float(const tn_tensor *t, const char *kernel);
/* RuntimeError unless grad_out has the input's shape. */
tn_status tn_nnb_check_same_shape(const tn_tensor *gy, const tn_tensor *x, const char *what);
/* Loads an optional float tensor into acc (data NULL when absent). */
tn_status tn_nnb_load_opt(const tn_tensor *t, tn_dtype acc, tn_nn_buf *b);
/* Zeroes a result (a sum over nothing); NULL and meta tensors are left alone. */
void tn_nnb_zero_tensor(tn_tensor *t);
/* A contiguous acc-dtype CPU tensor holding the values of t (shape of t); new reference. */
tn_status tn_nnb_acc_tensor(const tn_tensor *t, tn_dtype acc, tn_tensor **out);
/* *r = a · b through the door (aten::mm), a and b 2-d views (offset, rows, cols, row
 * stride, col stride) of the acc tensors as and bs. */
tn_status tn_nnb_mm_views(tn_tensor *as, int64_t aoff, int64_t ar, int64_t ac, int64_t ars, int64_t acs,
                          tn_tensor *bs, int64_t boff, int64_t br, int64_t bc, int64_t brs, int64_t bcs, tn_tensor **r);
/* A 2-d convolution's geometry (a 1-d one is height 1): batch N, channels C of H×W images,
 * O output channels, Cg input channels per group of G, kernel kh×kw, output oh×ow,
 * stride, padding (top/left), dilation. */
typedef struct conv_geom {
    int nsp;
    int64_t N, C, H, W, O, Cg, G, kh, kw, oh, ow, sh, sw, ph, pw, dh, dw;
} conv_geom;
/* Columns per chunk of the batched convolution products (forward and gradients): a
 * [K, nb*P] column matrix stays near 256K elements (1 MB in float; at least one image), so
 * the columns a GEMM writes are still in L2 when col2im reads them (4M elements before:
 * the Tent step's 2.4 MB column matrix made col2im wait on L3). */
#define TN_CONV_CHUNK_ELEMS ((int64_t)1 << 18)
/* The row stride of a [rows, L] column buffer: L, or 64 bytes more when rows L apart would
 * be a multiple of 4 KiB apart (a batch of 64 images of 8x8 or 4x4 outputs is): writing one
 * image's block then touches one L1 set in every row and its stores alias each other. */
static inline int64_t tn_nnb_col_ld(int64_t L, size_t isz) {
    return (L * (int64_t)isz) % 4096 == 0 ? L + 64 / (int64_t)isz : L;
}
/* im2col (to_image false) or col2im (true, accumulating into the images) of n images of a
 * chunk on the pool (nn_conv.c): image j at img + j*img_stride acc elements, its block of
 * the columns [Cg*kh*kw, L] at column j*oh*ow (rows ld elements apart). */
void tn_nnb_conv_images(tn_dtype acc, const conv_geom *q, int64_t ld, int64_t img_stride, void *img, void *col, int64_t n,
                        bool to_image);
/* c = a·b + beta·c through the GEMM kernel (kernels/gemm.h) on acc-dtype buffers: a m×k,
 * b k×n, c m×n, each given by (row stride, column stride) in elements. beta 0 or 1. */
tn_status tn_nnb_gemm(tn_dtype acc, int64_t m, int64_t n, int64_t k, const void *a, int64_t a_rs, int64_t a_cs,
                      const void *b, int64_t b_rs, int64_t b_cs, void *c, int64_t c_rs, int64_t c_cs, double beta);
/* dst[0..n) += r (n acc elements of a result tensor, any layout). */
tn_status tn_nnb_add_result(tn_dtype acc, void *dst, tn_tensor *r, int64_t n);
/* *r converted to dtype (a new tensor with r's layout; the old one released), as upstream
 * writes loss gradients into a grad_input shaped and typed like self. On failure *r is
 * untouched. */
tn_status tn_nnb_cast_result(tn_tensor **r, tn_dtype dtype);

#endif
