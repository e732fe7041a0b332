/* tensor.c — storage and tensor lifetimes and geometry helpers. */
#include "core/tensor.h"

#include "core/alloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* ---- small-object caches -------------------------------------------------------------
 * A decode step creates and drops ~1,000 small tensors; malloc/memalign/free of their
 * headers and data was a quarter of the cost of `a + b` on one element (perf). Each thread
 * keeps short free lists of tensor headers and of storage blocks: a 64-byte header with
 * its data inline right after it (classes of 0, 64, 256 and 1024 data bytes), so a small
 * tensor costs one cached block for the storage and one for the tensor, and no malloc in
 * steady state. A block may be freed on another thread than the one that made it; it then
 * joins that thread's lists. Lists are bounded, and flushed when a thread exits. */

#define TN_STORAGE_HDR 64 /* sizeof(tn_storage) rounded to the data alignment */
_Static_assert(sizeof(tn_storage) <= TN_STORAGE_HDR, "storage header fits its slot");
#if defined(__SANITIZE_ADDRESS__)
/* AddressSanitizer sees a use after free only in memory given back to the allocator, so
 * its build keeps no cached headers or blocks (a write through a stale tensor pointer
 * would otherwise corrupt a free list far from its cause). */
enum { N_CLASSES = 4, CACHE_MAX = 0 };
#else
enum { N_CLASSES = 4, CACHE_MAX = 32 };
#endif
static const int64_t class_data[N_CLASSES] = {0, 64, 256, 1024};

typedef struct free_node { struct free_node *next; } free_node;
typedef struct cache {
    free_node *tensors;
    int ntensors;
    free_node *blocks[N_CLASSES];
    int nblocks[N_CLASSES];
    int registered;
} cache;

static _Thread_local cache tl_cache;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_flush(void *p) {
    cache *c = p;
    for (free_node *n = c->tensors, *next; n; n = next) { next = n->next; free(n); }
    c->tensors = NULL;
    c->ntensors = 0;
    for (int k = 0; k < N_CLASSES; k++) {
        for (free_node *n = c->blocks[k], *next; n; n = next) { next = n->next; free(n); }
        c->blocks[k] = NULL;
        c->nblocks[k] = 0;
    }
}
static void cache_key_init(void) { pthread_key_create(&cache_key, cache_flush); }

/* The calling thread's cache, registered for flushing at thread exit on first use. */
static cache *my_cache(void) {
    cache *c = &tl_cache;
    if (!c->registered) {
        pthread_once(&cache_once, cache_key_init);
        pthread_setspecific(cache_key, c);
        c->registered = 1;
    }
    return c;
}

static void *block_get(int k) {
    cache *c = my_cache();
    free_node *n = c->blocks[k];
    if (n) { c->blocks[k] = n->next; c->nblocks[k]--; return n; }
    return aligned_alloc(64, (size_t)(TN_STORAGE_HDR + class_data[k]));
}

static void block_put(int k, void *p) {
    cache *c = my_cache();
    if (c->nblocks[k] >= CACHE_MAX) { free(p); return; }
    free_node *n = p;
    n->next = c->blocks[k];
    c->blocks[k] = n;
    c->nblocks[k]++;
}

static tn_tensor *tensor_struct_get(void) {
    cache *c = my_cache();
    free_node *n = c->tensors;
    if (n) {
        c->tensors = n->next;
        c->ntensors--;
        memset(n, 0, sizeof(tn_tensor));
        return (tn_tensor *)n;
    }
    return calloc(1, sizeof(tn_tensor));
}

static void tensor_struct_put(tn_tensor *t) {
    cache *c = my_cache();
    if (c->ntensors >= CACHE_MAX * 2) { free(t); return; }
    free_node *n = (free_node *)t;
    n->next = c->tensors;
    c->tensors = n;
    c->ntensors++;
}

static int class_for(int64_t nbytes) {
    for (int k = 1; k < N_CLASSES; k++)
        if (nbytes <= class_data[k]) return k;
    return -1;
}

static void tn_free_release(void *ctx, void *data) { free(data); }
/* ctx holds the requested size (the block's class follows from it) */
static void tn_big_release(void *ctx, void *data) { tn_big_free(data, (size_t)(uintptr_t)ctx); }

/* Data of sz bytes (a multiple of 64) for a storage: a mapped block from alloc.h for large
 * sizes, aligned malloc below; *release and *ctx say how to free it. Zeroed on request. */
#if defined(__SANITIZE_ADDRESS__)
#define BIG_BLOCKS 0 /* AddressSanitizer guards malloc'd blocks, not our mappings */
#else
#define BIG_BLOCKS 1
#endif
static void *data_alloc(size_t sz, bool zero, tn_release_fn *release, void **ctx) {
    if (BIG_BLOCKS && sz >= TN_ALLOC_BIG) {
        bool fresh = false;
        void *p = tn_big_alloc(sz, &fresh);
        if (p && zero && !fresh) memset(p, 0, sz);
        *release = tn_big_release;
        *ctx = (void *)(uintptr_t)sz;
        return p;
    }
    void *p = aligned_alloc(64, sz);
    if (p && zero) memset(p, 0, sz);
    *release = tn_free_release;
    *ctx = NULL;
    return p;
}

/* ---- accounting of the data bytes storages own (tn_storage_stats_get) ---------------- */
static atomic_llong g_live, g_peak, g_allocs;

static void account(int64_t delta) {
    long long now = atomic_fetch_add_explicit(&g_live, delta, memory_order_relaxed) + delta;
    if (delta <= 0) return;
    atomic_fetch_add_explicit(&g_allocs, 1, memory_order_relaxed);
    long long pk = atomic_load_explicit(&g_peak, memory_order_relaxed);
    while (now > pk && !atomic_compare_exchange_weak_explicit(&g_peak, &pk, now, memory_order_relaxed,
                                                              memory_order_relaxed)) {
    }
}

/* Whether s's data was allocated here (and so counted): malloc'd or inline in its block. */
static bool owns_data(const tn_storage *s) {
    return s->data && (s->release == tn_free_release || s->release == tn_big_release || (s->block > 0 && s->data == (const char *)s + TN_STORAGE_HDR));
}

tn_storage_stats tn_storage_stats_get(bool reset) {
    tn_storage_stats st = {atomic_load(&g_live), atomic_load(&g_peak), atomic_load(&g_allocs)};
    if (reset) atomic_store(&g_peak, st.live);
    return st;
}

static tn_storage *storage_init(tn_storage *s, int block, void *data, int64_t nbytes, tn_device device,
                                tn_release_fn release, void *release_ctx) {
    memset(s, 0, sizeof *s);
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->block = (int8_t)block;
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    s->release = release;
    s->release_ctx = release_ctx;
    return s;
}


tn_status tn_storage_new(int64_t nbytes, tn_device device, bool zero, tn_storage **out) {
    if (nbytes < 0) return tn_error(TN_ERR_RUNTIME, "Trying to create tensor with negative dimension");
    tn_storage *s;
    int k = device.type != TN_DEVICE_META && nbytes > 0 ? class_for(nbytes) : -1;
    if (k > 0) {
        /* small: data inline after the header, from the cache */
        char *b = block_get(k);
        if (!b) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        s = storage_init((tn_storage *)b, k, b + TN_STORAGE_HDR, nbytes, device, NULL, NULL);
        if (zero) memset(s->data, 0, (size_t)nbytes);
    } else {
        void *data = NULL, *ctx = NULL;
        tn_release_fn release = NULL;
        if (device.type != TN_DEVICE_META && nbytes > 0) {
            /* 64-byte alignment: every vector width we use, and upstream's alignment. */
            size_t sz = ((size_t)nbytes + 63) & ~(size_t)63;
            data = data_alloc(sz, zero, &release, &ctx);
            if (!data)
                return tn_error(TN_ERR_NO_MEMORY,
                                "[enforce fail at alloc_cpu.cpp] . DefaultCPUAllocator: not enough memory: "
                                "you tried to allocate %lld bytes.", (long long)nbytes);
        }
        s = tn_storage_borrow(data, nbytes, device, release, ctx);
        if (!s) { if (release) release(ctx, data); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    }
    s->resizable = device.type != TN_DEVICE_META;
    if (owns_data(s)) account(nbytes);
    *out = s;
    return TN_OK;
}

tn_storage *tn_storage_borrow(void *data, int64_t nbytes, tn_device device,
                              tn_release_fn release, void *release_ctx) {
    void *b = block_get(0);
    if (!b) return NULL;
    return storage_init(b, 0, data, nbytes, device, release, release_ctx);
}

void tn_storage_retain(tn_storage *s) { atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed); }

void tn_storage_release(tn_storage *s) {
    if (!s) return;
    if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
    if (owns_data(s)) account(-s->nbytes);
    if (s->release) s->release(s->release_ctx, s->data);
    if (s->block >= 0) block_put(s->block, s);
    else free(s);
}

tn_tensor *tn_tensor_meta_like(const tn_tensor *t) {
    tn_storage *ms;
    if (tn_storage_new(0, (tn_device){TN_DEVICE_META, -1}, false, &ms) != TN_OK) return NULL;
    tn_tensor *m = tn_tensor_new_view(ms, t->offset, t->ndim, t->sizes, t->strides, t->dtype);
    tn_storage_release(ms);
    return m;
}

bool tn_storage_can_grow(const tn_storage *s, int64_t nbytes) {
    return nbytes <= s->nbytes || s->device.type == TN_DEVICE_META || (s->resizable && (!s->data || owns_data(s)));
}

tn_status tn_storage_resize(tn_storage *s, int64_t nbytes) {
    /* upstream's alloc_cpu enforces this (its message shows the size as size_t); a
     * negative size accepted here would make the storage's length negative */
    if (nbytes < 0)
        return tn_error(TN_ERR_RUNTIME, "alloc_cpu() seems to have been called with negative number: %llu",
                        (unsigned long long)nbytes);
    if (nbytes <= s->nbytes) return TN_OK; /* never shrinks */
    if (s->device.type == TN_DEVICE_META) { s->nbytes = nbytes; return TN_OK; }
    if (!tn_storage_can_grow(s, nbytes)) return tn_error(TN_ERR_RUNTIME, "Trying to resize storage that is not resizable");
    size_t sz = ((size_t)nbytes + 63) & ~(size_t)63;
    tn_release_fn release;
    void *ctx;
    void *data = data_alloc(sz, false, &release, &ctx);
    if (!data) return tn_error(TN_ERR_NO_MEMORY, "DefaultCPUAllocator: not enough memory: you tried to allocate %lld bytes.", (long long)nbytes);
    if (s->data) memcpy(data, s->data, (size_t)s->nbytes);
    if (owns_data(s)) account(-s->nbytes);
    account(nbytes);
    if (s->release) s->release(s->release_ctx, s->data); /* inline data stays in its block */
    s->data = data;
    s->nbytes = nbytes;
    s->release = release;
    s->release_ctx = ctx;
    return TN_OK;
}

bool tn_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides) {
    int64_t st = 1;
    bool saturated = false;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = st;
        /* saturates instead of overflowing: such sizes can never be allocated, and the
         * allocation (tn_storage_nbytes_for) reports the overflow */
        if (__builtin_mul_overflow(st, sizes[i] > 1 ? sizes[i] : 1, &st)) {
            st = INT64_MAX;
            saturated |= i >= 1; /* a stride that is stored */
        }
    }
    return saturated;
}

/* The element count in unsigned 64 bits, as upstream's safe_multiplies_u64: [2, INT64_MAX, 0]
 * has 0 elements, [4, INT64_MAX, 0] overflows. Returns true on overflow. */
static bool sizes_product_u64(int ndim, const int64_t *sizes, uint64_t *out) {
    uint64_t n = 1;
    bool over = false;
    for (int i = 0; i < ndim; i++) over |= __builtin_mul_overflow(n, (uint64_t)sizes[i], &n);
    *out = n;
    return over || n > (uint64_t)INT64_MAX;
}

tn_status tn_check_view_numel(int ndim, const int64_t *sizes) {
    uint64_t n;
    if (sizes_product_u64(ndim, sizes, &n)) return tn_error(TN_ERR_RUNTIME, "numel: integer multiplication overflow");
    return TN_OK;
}

tn_status tn_check_sizes_nonnegative(int ndim, const int64_t *sizes) {
    for (int i = 0; i < ndim; i++)
        if (sizes[i] < 0) {
            char sb[256];
            return tn_error(TN_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                            (long long)sizes[i], tn_format_sizes(ndim, sizes, sb, sizeof sb));
        }
    return TN_OK;
}

static tn_status numel_of(int ndim, const int64_t *sizes, int64_t *out) {
    if (ndim < 0 || ndim > TN_MAX_DIMS)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "torchnative supports at most %d dimensions, got %d", TN_MAX_DIMS, ndim);
    TN_TRY(tn_check_sizes_nonnegative(ndim, sizes));
    uint64_t n;
    if (sizes_product_u64(ndim, sizes, &n)) {
        char sb[256];
        return tn_error(TN_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s",
                        tn_format_sizes(ndim, sizes, sb, sizeof sb));
    }
    *out = (int64_t)n;
    return TN_OK;
}

tn_tensor *tn_tensor_new_view(tn_storage *storage, int64_t offset, int ndim,
                              const int64_t *sizes, const int64_t *strides, tn_dtype dtype) {
    tn_tensor *t = tensor_struct_get();
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

tn_status tn_storage_nbytes_for(int ndim, const int64_t *sizes, const int64_t *strides, int itemsize,
                                int64_t *out) {
    int64_t n = 1;
    bool over = false;
    if (!strides) {
        uint64_t u;
        over |= sizes_product_u64(ndim, sizes, &u);
        n = (int64_t)u;
    } else {
        for (int i = 0; i < ndim; i++)
            if (sizes[i] == 0) { *out = 0; return TN_OK; }
        for (int i = 0; i < ndim; i++) {
            int64_t span;
            over |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &span);
            over |= __builtin_add_overflow(n, span, &n);
        }
    }
    over |= __builtin_mul_overflow(n, (int64_t)itemsize, &n);
    if (!over) {
        *out = n;
        return TN_OK;
    }
    char sb[256], tb[256];
    tn_format_sizes(ndim, sizes, sb, sizeof sb);
    if (!strides) return tn_error(TN_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s", sb);
    tn_format_sizes(ndim, strides, tb, sizeof tb);
    return tn_error(TN_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s and strides=%s", sb, tb);
}

static tn_status tensor_alloc(int ndim, const int64_t *sizes, tn_dtype dtype, tn_device device,
                              bool zero, tn_tensor **out) {
    int64_t n;
    TN_TRY(numel_of(ndim, sizes, &n));
    int64_t nbytes = 0;
    TN_TRY(tn_storage_nbytes_for(ndim, sizes, NULL, tn_dtype_itemsize(dtype), &nbytes));
    /* upstream's restride computes every stride even when a size is 0 (no elements, no
     * bytes) and refuses one that overflows: zeros(0, 2**62, 4) */
    int64_t strides[TN_MAX_DIMS];
    if (tn_contiguous_strides(ndim, sizes, strides)) return tn_error(TN_ERR_RUNTIME, "Stride calculation overflowed");
    tn_storage *s;
    TN_TRY(tn_storage_new(nbytes, device, zero, &s));
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
    tn_tensor *a = tn_tensor_new_view(t->storage, t->offset, t->ndim, t->sizes, t->strides, t->dtype);
    if (a) a->flags |= t->flags & (TN_TENSOR_CONJ | TN_TENSOR_NEG); /* the same elements, read the same way */
    if (a && t->batch) { /* a batched tensor's alias is batched over an alias of its value */
        tn_tensor *v = tn_tensor_alias(t->batch->value);
        bool ok = v && tn_tensor_attach_batch(a, v, t->batch->bdim, t->batch->level);
        tn_tensor_release(v);
        if (!ok) {
            tn_tensor_release(a);
            return NULL;
        }
    }
    return a;
}

void tn_tensor_retain(tn_tensor *t) { atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed); }

void (*tn_tensor_autograd_free)(tn_tensor *t);

atomic_long tn_tensor_batched_live;

bool tn_tensor_attach_batch(tn_tensor *t, tn_tensor *value, int64_t bdim, int64_t level) {
    tn_batch *b = malloc(sizeof *b);
    if (!b) return false;
    tn_tensor_retain(value);
    *b = (tn_batch){value, bdim, level};
    t->batch = b;
    atomic_fetch_add_explicit(&tn_tensor_batched_live, 1, memory_order_relaxed);
    return true;
}

void tn_tensor_release(tn_tensor *t) {
    if (!t) return;
    if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1) return;
    if (t->autograd && tn_tensor_autograd_free) tn_tensor_autograd_free(t);
    if (t->batch) {
        tn_tensor_release(t->batch->value);
        free(t->batch);
        atomic_fetch_sub_explicit(&tn_tensor_batched_live, 1, memory_order_relaxed);
    }
    tn_storage_release(t->storage);
    tensor_struct_put(t);
}

int64_t tn_tensor_numel(const tn_tensor *t) {
    int64_t n = 1;
    bool over = false;
    for (int i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == 0) return 0;
        over |= __builtin_mul_overflow(n, t->sizes[i], &n);
    }
    return over ? INT64_MAX : n;
}

bool tn_tensor_is_contiguous(const tn_tensor *t) {
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] == 0) return true;
        if (t->sizes[i] != 1) {
            if (t->strides[i] != expected) return false;
            /* past int64 no stride can match: saturate (an expanded view of 2**62 rows) */
            if (__builtin_mul_overflow(expected, t->sizes[i], &expected)) expected = INT64_MAX;
        }
    }
    return true;
}

tn_status tn_check_storage_bounds(int ndim, const int64_t *sizes, const int64_t *strides,
                                  int64_t offset, int itemsize, int64_t storage_nbytes) {
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) return TN_OK;
        if (strides[i] < 0) return tn_error(TN_ERR_RUNTIME, "as_strided: Negative strides are not supported at the moment, got strides: [%lld]", (long long)strides[i]);
    }
    if (offset < 0) return tn_error(TN_ERR_RUNTIME, "Tensor: invalid storage offset %lld", (long long)offset);
    int64_t span, need;
    TN_TRY(tn_storage_nbytes_for(ndim, sizes, strides, itemsize, &span));
    if (__builtin_mul_overflow(offset, (int64_t)itemsize, &need) || __builtin_add_overflow(need, span, &need))
        return tn_error(TN_ERR_RUNTIME, "Storage size calculation overflowed with storage offset %lld",
                        (long long)offset);
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

tn_status tn_wrap_dim_strict(int64_t dim, int ndim, int *out) {
    if (ndim == 0)
        return tn_error(TN_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)dim);
    return tn_wrap_dim(dim, ndim, out);
}

tn_status tn_tensor_resize(tn_tensor *t, int ndim, const int64_t *sizes) {
    int64_t n, need = 0, off;
    TN_TRY(numel_of(ndim, sizes, &n));
    TN_TRY(tn_storage_nbytes_for(ndim, sizes, NULL, tn_dtype_itemsize(t->dtype), &need));
    if ((__builtin_mul_overflow(t->offset, (int64_t)tn_dtype_itemsize(t->dtype), &off) ||
              __builtin_add_overflow(need, off, &need)))
        return tn_error(TN_ERR_RUNTIME, "Storage size calculation overflowed with storage offset %lld",
                        (long long)t->offset);
    /* upstream's set_sizes_contiguous refuses a stride past int64 even with a 0 size */
    int64_t strides[TN_MAX_DIMS];
    if (tn_contiguous_strides(ndim, sizes, strides)) return tn_error(TN_ERR_RUNTIME, "Stride calculation overflowed");
    if (need > t->storage->nbytes) TN_TRY(tn_storage_resize(t->storage, need));
    t->ndim = ndim;
    if (ndim) memcpy(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim);
    if (ndim) memcpy(t->strides, strides, sizeof(int64_t) * (size_t)ndim);
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
