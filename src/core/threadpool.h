/* threadpool.h — the one persistent thread pool every kernel shares (pthreads).
 * torch.set_num_threads / get_num_threads govern it (and the BLAS, through the binding).
 *
 * tn_parallel_for splits [0, n) into at most num_threads contiguous chunks of at least
 * `grain` iterations and runs fn on them, the calling thread taking the first chunk.
 * Calls from inside a parallel region run serially (no nested parallelism), as upstream's
 * at::parallel_for does. Plain C11; no Python. */
#ifndef TN_THREADPOOL_H
#define TN_THREADPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef void (*tn_parallel_fn)(void *ctx, int64_t begin, int64_t end);

/* Threads used by tn_parallel_for (>= 1). Default: the CPUs this process may run on. */
int tn_get_num_threads(void);
/* Sets the thread count (>= 1); takes effect at the next parallel region. */
void tn_set_num_threads(int n);
/* Whether the caller is running inside a parallel region. */
int tn_in_parallel_region(void);
/* Runs fn over [0, n) as described above; returns when every chunk is done. */
void tn_parallel_for(int64_t n, int64_t grain, tn_parallel_fn fn, void *ctx);

/* Work for an idle worker: the first worker calls fn from its spin loop between regions
 * (never while it sleeps); fn does one bounded piece of work (well under a microsecond)
 * and returns nonzero when it did any. One hook; setting it again replaces it. Used by
 * the weight stream (kernels/stream.h). */
typedef int (*tn_idle_fn)(void);
void tn_pool_set_idle_hook(tn_idle_fn fn);

/* Per-thread scratch buffers for kernels that pack or stage data (GEMM packing, attention
 * score rows): slot s (< TN_THREAD_SCRATCH_SLOTS) of the calling thread, at least `bytes`
 * long and 64-byte aligned, kept between calls so hot kernels neither allocate nor touch
 * fresh pages; grown (contents not kept) when asked for more; freed when the thread
 * exits. NULL when the allocation fails. Distinct slots let a kernel that holds one call
 * another that uses a different one. */
enum {
    TN_SCRATCH_SGEMM = 0,
    TN_SCRATCH_ATTN_ROWS = 1,
    TN_SCRATCH_ATTN_GEMM = 2,
    TN_SCRATCH_BGEMM = 3,
    TN_SCRATCH_CONV_COL = 4, /* a convolution's column matrix (ops/nn_conv.c, nn_backward_conv.c) */
    TN_SCRATCH_CONV_AUX = 5, /* its product or regrouped gradient beside it */
    TN_SCRATCH_QUANT = 6,    /* quantised activation rows of a quantised product (ops/quant_linear.c) */
    TN_THREAD_SCRATCH_SLOTS = 7
};
void *tn_thread_scratch(int slot, size_t bytes);

#endif
