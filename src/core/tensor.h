/* tensor.h — storage and tensor: the data model of the whole core.
 *
 * A storage is a refcounted byte buffer (owned, borrowed from another owner such as an
 * mmap'd file or a numpy array, or absent for `meta` tensors). A tensor is a strided
 * view of one storage: (storage, element offset, sizes, strides, dtype, device), plus a
 * slot for its autograd record and a back-pointer for the binding's Python object.
 *
 * Ownership: tn_tensor_* constructors return a tensor holding one reference; the caller
 * releases it with tn_tensor_release(). A tensor holds one reference on its storage.
 * Views retain the same storage, so the storage outlives every view of it.
 * Refcounts are atomic: kernels on pool threads may retain/release.
 *
 * Plain C11; no Python. */
#ifndef TN_TENSOR_H
#define TN_TENSOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/status.h"

#define TN_MAX_DIMS 16

/* Numbered as c10::DeviceType. */
typedef enum tn_device_type {
    TN_DEVICE_CPU = 0,
    TN_DEVICE_CUDA = 1,
    TN_DEVICE_META = 14,
} tn_device_type;

typedef struct tn_device {
    int16_t type;  /* tn_device_type */
    int16_t index; /* -1 = none */
} tn_device;

/* int64 sums and products of sizes as upstream's C++ computes them in practice: wrapping
 * modulo 2^64 (a wrapped size then fails the check it meets, as upstream's does); in C a
 * signed overflow is undefined, so every size arithmetic that can overflow uses these */
static inline int64_t tn_mul_wrap(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t tn_add_wrap(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t tn_sub_wrap(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }

static inline tn_device tn_device_cpu(void) { return (tn_device){TN_DEVICE_CPU, -1}; }
static inline bool tn_device_is_meta(tn_device d) { return d.type == TN_DEVICE_META; }

typedef struct tn_storage tn_storage;
typedef void (*tn_release_fn)(void *ctx, void *data);

struct tn_storage {
    atomic_long refcount;
    void *data;          /* NULL for meta storages and zero-byte storages */
    int64_t nbytes;
    tn_device device;
    bool resizable;      /* owned, malloc'd memory we may realloc */
    int8_t block;        /* allocation class of this struct (tensor.c's caches); -1 = malloc */
    tn_release_fn release; /* frees `data`; NULL if the memory is not ours */
    void *release_ctx;
    atomic_long version; /* in-place modification counter shared by all views (`_version`) */
    void *pyobj;         /* binding's UntypedStorage object, borrowed; binding clears it */
};

typedef struct tn_batch tn_batch;

typedef struct tn_tensor {
    atomic_long refcount;
    tn_storage *storage;
    int64_t offset;      /* in elements of dtype */
    int32_t ndim;
    tn_dtype dtype;
    int64_t sizes[TN_MAX_DIMS];
    int64_t strides[TN_MAX_DIMS]; /* in elements */
    void *autograd;      /* autograd record (autograd/autograd.h), NULL until needed */
    void *pyobj;         /* binding's Tensor object, borrowed; binding clears it */
    uint32_t flags;      /* TN_TENSOR_* */
    tn_batch *batch;     /* a vmap batched tensor's physical value (below), NULL otherwise */
} tn_tensor;

/* A functorch batched tensor (torch.vmap; src/ops/vmap.c makes and reads them). Its own
 * sizes and strides are the logical ones (the batch dimension hidden) over a meta storage,
 * so no kernel can read it by mistake: the door sends every operator call with one to the
 * vmap layer. `value` (one owned reference, released with the tensor) holds the elements with
 * the batch dimension at `bdim`; `level` is the vmap level it is batched at (1 = outermost).
 * `value` may itself be batched at a lower level (nested vmap). */
struct tn_batch {
    tn_tensor *value;
    int64_t bdim, level;
};

enum {
    TN_TENSOR_REQUIRES_GRAD = 1u << 0,
    TN_TENSOR_IS_VIEW = 1u << 1, /* made by a view operator (the door marks it; autograd reads it) */
    /* A 0-dim tensor made from a Python number (upstream's is_wrapped_number): type
     * promotion treats it as a scalar of its category only. */
    TN_TENSOR_WRAPPED_NUMBER = 1u << 2,
    /* upstream's conjugate / negative bits: the elements read conjugated / negated (set and
     * read by src/ops/mathbits.h; kernels never see them) */
    TN_TENSOR_CONJ = 1u << 3,
    TN_TENSOR_NEG = 1u << 4,
};

/* --- process defaults (src/core/defaults.c) ------------------------------------------ */

/* torch.get_default_dtype(): float32 unless set; read by promotion of Python floats. */
tn_dtype tn_default_dtype(void);
/* torch.set_default_dtype(); the caller has checked d is a floating dtype. */
void tn_set_default_dtype(tn_dtype d);

/* --- storage ----------------------------------------------------------------------- */

/* New owned storage of nbytes (zeroed when `zero`); meta storages own no memory. */
tn_status tn_storage_new(int64_t nbytes, tn_device device, bool zero, tn_storage **out);
/* New storage over memory owned elsewhere; `release(ctx, data)` runs when the last
 * reference goes (pass NULL to never free). */
tn_storage *tn_storage_borrow(void *data, int64_t nbytes, tn_device device,
                              tn_release_fn release, void *release_ctx);
void tn_storage_retain(tn_storage *s);
void tn_storage_release(tn_storage *s);
/* Grows an owned storage (resize_ semantics); fails for borrowed memory and for a
 * negative size (RuntimeError, as upstream's allocator). */
tn_status tn_storage_resize(tn_storage *s, int64_t nbytes);
/* A new meta tensor of t's geometry (sizes, strides, offset, dtype), or NULL for lack of
 * memory: a stand-in on which an operator runs its checks and shape logic only. */
tn_tensor *tn_tensor_meta_like(const tn_tensor *t);
/* Whether tn_storage_resize(s, nbytes) would succeed for lack of nothing but memory: the
 * storage is large enough already, meta, or ours to grow. */
bool tn_storage_can_grow(const tn_storage *s, int64_t nbytes);
/* Bytes of tensor data this process holds in storages it allocated (tn_storage_new,
 * tn_storage_resize; borrowed memory such as mapped files is not counted): now, the
 * highest since the last reset, and the allocations made. Diagnostics for memory
 * measurements (torch._C._tn_storage_stats); `reset` sets the peak to the live bytes. */
typedef struct tn_storage_stats { int64_t live, peak, allocations; } tn_storage_stats;
tn_storage_stats tn_storage_stats_get(bool reset);

/* --- tensor ------------------------------------------------------------------------ */

/* Uninitialised contiguous tensor. */
tn_status tn_tensor_empty(int ndim, const int64_t *sizes, tn_dtype dtype, tn_device device,
                          tn_tensor **out);
/* Zero-filled contiguous tensor. */
tn_status tn_tensor_zeros(int ndim, const int64_t *sizes, tn_dtype dtype, tn_device device,
                          tn_tensor **out);
/* Tensor viewing `storage` (retained) with the given geometry; no bounds check. */
tn_tensor *tn_tensor_new_view(tn_storage *storage, int64_t offset, int ndim,
                              const int64_t *sizes, const int64_t *strides, tn_dtype dtype);
/* A view of t sharing its storage (a fresh tensor object with the same geometry and the same
 * conjugate / negative bits). */
tn_tensor *tn_tensor_alias(const tn_tensor *t);
void tn_tensor_retain(tn_tensor *t);
void tn_tensor_release(tn_tensor *t);
/* Makes t batched over `value` (retained) at bdim and level; false when out of memory. */
bool tn_tensor_attach_batch(tn_tensor *t, tn_tensor *value, int64_t bdim, int64_t level);
/* Batched tensors alive in the process (the door's test outside vmap is this one load). */
extern atomic_long tn_tensor_batched_live;
static inline bool tn_tensor_batched_alive(void) {
    return atomic_load_explicit(&tn_tensor_batched_live, memory_order_relaxed) != 0;
}

/* Frees a dying tensor's autograd record; set by the autograd layer (core knows nothing
 * of autograd but that the slot needs freeing). */
extern void (*tn_tensor_autograd_free)(tn_tensor *t);

/* The element count: 0 when any size is 0, INT64_MAX for a view of more elements than
 * int64 holds (an expanded view of 2**62 x 4, say; never a wrapped count, so never a false
 * 0). */
int64_t tn_tensor_numel(const tn_tensor *t);
bool tn_tensor_is_contiguous(const tn_tensor *t);
static inline tn_device tn_tensor_device(const tn_tensor *t) {
    while (t->batch) t = t->batch->value; /* a batched tensor lives where its value does */
    return t->storage->device;
}
static inline bool tn_tensor_is_meta(const tn_tensor *t) { return t->storage->device.type == TN_DEVICE_META; }
/* Address of element 0 (storage data + offset); NULL for meta tensors. */
static inline void *tn_tensor_data(const tn_tensor *t) {
    return t->storage->data ? (char *)t->storage->data + t->offset * tn_dtype_itemsize(t->dtype) : NULL;
}
/* resize_ semantics: new sizes, contiguous strides, storage grown if needed (never shrunk). */
tn_status tn_tensor_resize(tn_tensor *t, int ndim, const int64_t *sizes);
/* Upstream's canCast: no complex->real, float->integral or non-bool->bool. */
bool tn_dtype_can_cast(tn_dtype from, tn_dtype to);
/* Writes "[2, 3]" into buf (for error messages); returns buf. */
const char *tn_format_sizes(int ndim, const int64_t *sizes, char *buf, int buflen);
/* Fills contiguous strides for sizes; returns true when a stride overflowed int64 (it is
 * then saturated at INT64_MAX; sizes of 0 count as 1, as upstream's restride does). */
bool tn_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides);
/* Bytes a tensor of sizes/strides (NULL: contiguous) from element 0 spans, as upstream's
 * computeStorageNbytes: RuntimeError "Storage size calculation overflowed ..." when the
 * product does not fit int64 (never a wrapped, too-small size). Negative sizes are the
 * caller's to refuse. */
tn_status tn_storage_nbytes_for(int ndim, const int64_t *sizes, const int64_t *strides, int itemsize,
                                int64_t *out);
/* RuntimeError "Trying to create tensor with negative dimension d: [sizes]" (upstream's,
 * from its allocation) when a size is negative. */
/* A view's element count, as upstream's refresh_numel: the sizes' product in unsigned 64
 * bits, left to right, must neither overflow nor pass INT64_MAX, whatever the strides
 * ("numel: integer multiplication overflow"; [0, 2**62, 4] passes, [2**62, 4, 0] does not). */
tn_status tn_check_view_numel(int ndim, const int64_t *sizes);
tn_status tn_check_sizes_nonnegative(int ndim, const int64_t *sizes);
/* Checks that [offset, offset + extent of sizes/strides) fits storage of nbytes. */
tn_status tn_check_storage_bounds(int ndim, const int64_t *sizes, const int64_t *strides,
                                  int64_t offset, int itemsize, int64_t storage_nbytes);
/* Wraps a negative dimension and checks range; `ndim` 0 behaves as 1 (upstream rule). */
tn_status tn_wrap_dim(int64_t dim, int ndim, int *out);
/* As tn_wrap_dim without the 0-dim rule (upstream's Tensor::size(dim) and
 * maybe_wrap_dim(wrap_scalar=false)): a 0-dim tensor has no dim to name (IndexError). */
tn_status tn_wrap_dim_strict(int64_t dim, int ndim, int *out);

#endif
