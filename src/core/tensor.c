/* tensor.c — storage and tensor lifetimes and geometry helpers. */
#include "core/tensor.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static void tn_free_release(void *ctx, void *data) { free(data); }

tn_status tn_storage_new(int64_t nbytes, tn_device device, bool zero, tn_storage **out) {
    if (nbytes < 0) return tn_error(TN_ERR_RUNTIME, "Trying to create tensor with negative dimension");
    void *data = NULL;
    if (device.type != TN_DEVICE_META && nbytes > 0) {
        /* 64-byte alignment: every vector width we use, and upstream's alignment. */
        size_t sz = ((size_t)nbytes + 63) & ~(size_t)63;
        data = aligned_alloc(64, sz);
        if (!data)
            return tn_error(TN_ERR_NO_MEMORY,
                            "[enforce fail at alloc_cpu.cpp] . DefaultCPUAllocator: not enough memory: "
                            "you tried to allocate %lld bytes.", (long long)nbytes);
        if (zero) memset(data, 0, (size_t)nbytes);
    }
    tn_storage *s = tn_storage_borrow(data, nbytes, device, data ? tn_free_release : NULL, NULL);
    if (!s) { free(data); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    s->resizable = device.type != TN_DEVICE_META;
    *out = s;
    return TN_OK;
}

tn_storage *tn_storage_borrow(void *data, int64_t nbytes, tn_device device,
                              tn_release_fn release, void *release_ctx) {
    tn_storage *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    s->release = release;
    s->release_ctx = release_ctx;
    return s;
}

void tn_storage_retain(tn_storage *s) { atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed); }

void tn_storage_release(tn_storage *s) {
    if (!s) return;
    if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
    if (s->release) s->release(s->release_ctx, s->data);
    free(s);
}

tn_status tn_storage_resize(tn_storage *s, int64_t nbytes) {
    if (nbytes <= s->nbytes) return TN_OK; /* never shrinks */
    if (s->device.type == TN_DEVICE_META) { s->nbytes = nbytes; return TN_OK; }
    if (!s->resizable || (s->release != tn_free_release && s->data))
        return tn_error(TN_ERR_RUNTIME, "Trying to resize storage that is not resizable");
    size_t sz = ((size_t)nbytes + 63) & ~(size_t)63;
    void *data = aligned_alloc(64, sz);
    if (!data) return tn_error(TN_ERR_NO_MEMORY, "DefaultCPUAllocator: not enough memory: you tried to allocate %lld bytes.", (long long)nbytes);
    if (s->data) memcpy(data, s->data, (size_t)s->nbytes);
    free(s->data);
    s->data = data;
    s->nbytes = nbytes;
    s->release = tn_free_release;
    return TN_OK;
}

void tn_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides) {
    int64_t st = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = st;
        st *= sizes[i] > 1 ? sizes[i] : 1;
    }
}

static tn_status numel_of(int ndim, const int64_t *sizes, int64_t *out) {
    if (ndim < 0 || ndim > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions, got %d", TN_MAX_DIMS, ndim);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0)
            return tn_error(TN_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: [%lld]",
                            (long long)sizes[i], (long long)sizes[i]);
        if (__builtin_mul_overflow(n, sizes[i], &n))
            return tn_error(TN_ERR_RUNTIME, "numel: integer multiplication overflow");
    }
    *out = n;
    return TN_OK;
}

tn_tensor *tn_tensor_new_view(tn_storage *storage, int64_t offset, int ndim,
                              const int64_t *sizes, const int64_t *strides, tn_dtype dtype) {
    tn_tensor *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    atomic_init(&t->refcount, 1);
    tn_storage_retain(storage);
    t->storage = storage;
    t->offset = offset;
    t->ndim = ndim;
    t->dtype = dtype;
    if (ndim) {
        memcpy(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim);
        memcpy(t->strides, strides, sizeof(int64_t) * (size_t)ndim);
    }
    return t;
}

static tn_status tensor_alloc(int ndim, const int64_t *sizes, tn_dtype dtype, tn_device device,
                              bool zero, tn_tensor **out) {
    int64_t n;
    TN_TRY(numel_of(ndim, sizes, &n));
    int64_t nbytes;
    if (__builtin_mul_overflow(n, (int64_t)tn_dtype_itemsize(dtype), &nbytes))
        return tn_error(TN_ERR_RUNTIME, "Storage size calculation overflowed");
    tn_storage *s;
    TN_TRY(tn_storage_new(nbytes, device, zero, &s));
    int64_t strides[TN_MAX_DIMS];
    tn_contiguous_strides(ndim, sizes, strides);
    tn_tensor *t = tn_tensor_new_view(s, 0, ndim, sizes, strides, dtype);
    tn_storage_release(s);
    if (!t) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    *out = t;
    return TN_OK;
}

tn_status tn_tensor_empty(int ndim, const int64_t *sizes, tn_dtype dtype, tn_device device, tn_tensor **out) {
    return tensor_alloc(ndim, sizes, dtype, device, false, out);
}

tn_status tn_tensor_zeros(int ndim, const int64_t *sizes, tn_dtype dtype, tn_device device, tn_tensor **out) {
    return tensor_alloc(ndim, sizes, dtype, device, true, out);
}

tn_tensor *tn_tensor_alias(const tn_tensor *t) {
    return tn_tensor_new_view(t->storage, t->offset, t->ndim, t->sizes, t->strides, t->dtype);
}

void tn_tensor_retain(tn_tensor *t) { atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed); }

void tn_tensor_release(tn_tensor *t) {
    if (!t) return;
    if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1) return;
    tn_storage_release(t->storage);
    free(t);
}

int64_t tn_tensor_numel(const tn_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->sizes[i];
    return n;
}

bool tn_tensor_is_contiguous(const tn_tensor *t) {
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] == 0) return true;
        if (t->sizes[i] != 1) {
            if (t->strides[i] != expected) return false;
            expected *= t->sizes[i];
        }
    }
    return true;
}

tn_status tn_check_storage_bounds(int ndim, const int64_t *sizes, const int64_t *strides,
                                  int64_t offset, int itemsize, int64_t storage_nbytes) {
    int64_t hi = 0;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) return TN_OK;
        if (strides[i] < 0) return tn_error(TN_ERR_RUNTIME, "as_strided: Negative strides are not supported at the moment, got strides: [%lld]", (long long)strides[i]);
        hi += (sizes[i] - 1) * strides[i];
    }
    int64_t need = (offset + hi + 1) * itemsize;
    if (offset < 0) return tn_error(TN_ERR_RUNTIME, "Tensor: invalid storage offset %lld", (long long)offset);
    if (need > storage_nbytes)
        return tn_error(TN_ERR_RUNTIME,
                        "setStorage: sizes, strides and storage offset require %lld bytes but the storage "
                        "has only %lld bytes", (long long)need, (long long)storage_nbytes);
    return TN_OK;
}

tn_status tn_wrap_dim(int64_t dim, int ndim, int *out) {
    int64_t n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n)
        return tn_error(TN_ERR_INDEX, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                        (long long)-n, (long long)(n - 1), (long long)dim);
    *out = (int)(dim < 0 ? dim + n : dim);
    return TN_OK;
}

tn_status tn_tensor_resize(tn_tensor *t, int ndim, const int64_t *sizes) {
    int64_t n;
    TN_TRY(numel_of(ndim, sizes, &n));
    int64_t need = (t->offset + n) * tn_dtype_itemsize(t->dtype);
    if (need > t->storage->nbytes) TN_TRY(tn_storage_resize(t->storage, need));
    t->ndim = ndim;
    if (ndim) memcpy(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim);
    tn_contiguous_strides(ndim, sizes, t->strides);
    return TN_OK;
}

bool tn_dtype_can_cast(tn_dtype from, tn_dtype to) {
    char f = tn_dtype_infos[from].kind, k = tn_dtype_infos[to].kind;
    if (f == 'c' && k != 'c') return false;
    if (f == 'f' && (k == 'i' || k == 'u' || k == 'b')) return false;
    if (f != 'b' && k == 'b') return false;
    return true;
}

const char *tn_format_sizes(int ndim, const int64_t *sizes, char *buf, int buflen) {
    int pos = snprintf(buf, (size_t)buflen, "[");
    for (int i = 0; i < ndim && pos < buflen; i++)
        pos += snprintf(buf + pos, (size_t)(buflen - pos), i ? ", %lld" : "%lld", (long long)sizes[i]);
    if (pos < buflen) snprintf(buf + pos, (size_t)(buflen - pos), "]");
    return buf;
}
