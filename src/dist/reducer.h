/* reducer.h — DistributedDataParallel's gradient reducer: parameters grouped into flat
 * buckets, filled by hooks on each parameter's AccumulateGrad as backward produces its
 * gradient, each bucket's all-reduce launched on the group's worker thread as soon as
 * the bucket is full (so communication overlaps the rest of backward), and the averaged
 * gradients written back to .grad by a callback that runs when the backward pass ends.
 *
 * One iteration, as upstream's Reducer (torch/csrc/distributed/c10d/reducer.cpp) runs it:
 *   prepare_for_backward(outputs)  expect hooks; with find_unused, walk the graph from the
 *                                  outputs and note the parameters it does not reach
 *   hook(i)                        copy param i's .grad (x 1/world, or raw under a comm
 *                                  hook) into its bucket view; the first hook also marks
 *                                  the unused parameters ready (zeros); a bucket whose
 *                                  last parameter is ready — and every earlier bucket —
 *                                  is launched, in bucket order
 *   (last bucket launched)         the used-parameter map is all-reduced (find_unused) and
 *                                  finalize is queued on the autograd engine
 *   finalize                       wait for each bucket, copy it back to .grad (or make
 *                                  .grad the bucket view: gradient_as_bucket_view);
 *                                  parameters unused on every rank keep their .grad
 * Hooks that fire while no backward is expected (DDP.no_sync) only record use.
 *
 * Ownership: the reducer owns a reference to every parameter, the bucket contents and
 * their views; it registers C hooks on the parameters' autograd records with itself as
 * context and removes them in tn_reducer_free. The group is borrowed: the binding keeps
 * it alive while the reducer lives. Not thread-safe: every entry point runs under the
 * binding's lock (the GIL), except the waits, which the host may unlock around.
 * Plain C11; no Python. */
#ifndef TN_DIST_REDUCER_H
#define TN_DIST_REDUCER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"
#include "dist/pg.h"

typedef struct tn_reducer tn_reducer;

/* Built-in communication, numbered as upstream's BuiltinCommHookType (0: none, the
 * default all-reduce with gradients pre-divided as they are copied into the bucket). */
enum { TN_REDUCER_HOOK_NONE = 0, TN_REDUCER_HOOK_ALLREDUCE = 1, TN_REDUCER_HOOK_FP16_COMPRESS = 2 };

/* A user communication hook (DDP.register_comm_hook): launch starts bucket b's
 * communication and returns a handle; wait finishes it and gives the tensor holding the
 * bucket's reduced values (a new reference; the bucket's own contents or another tensor
 * of the same numel); free_handle drops a handle that was never waited. */
typedef struct tn_reducer_comm {
    tn_status (*launch)(void *ctx, tn_reducer *r, int bucket, void **handle);
    tn_status (*wait)(void *ctx, void *handle, tn_tensor **result);
    void (*free_handle)(void *ctx, void *handle);
    void *ctx;
} tn_reducer_comm;

/* What the host (the binding) provides: unlock/relock around blocking waits (releasing
 * the GIL), and the engine callback that runs finalize (lets the host map errors). */
typedef struct tn_reducer_host {
    void *(*unlock)(void);
    void (*relock)(void *);
    tn_status (*finalize_cb)(void *reducer); /* NULL: tn_reducer_finalize */
} tn_reducer_host;

/* A reducer over params[nparams] (retained) in nbuckets buckets: bucket b holds the
 * parameters bucket_idx[bucket_start[b] .. bucket_start[b+1]) in that order. Every
 * parameter must be in exactly one bucket, and a bucket's parameters share a dtype. */
tn_status tn_reducer_new(tn_pg *pg, int nparams, tn_tensor *const *params, int nbuckets, const int *bucket_start,
                         const int *bucket_idx, bool find_unused, bool grad_as_bucket_view,
                         const tn_reducer_host *host, tn_reducer **out);
/* Removes the hooks, drops pending work (after waiting for it) and frees. */
void tn_reducer_free(tn_reducer *r);

/* Starts an iteration whose backward will run from outputs (find_unused walks them). */
tn_status tn_reducer_prepare_for_backward(tn_reducer *r, int noutputs, tn_tensor *const *outputs);
/* The hook of param i (called by the autograd engine; exposed for DDP's _autograd_hook). */
tn_status tn_reducer_autograd_hook(tn_reducer *r, int i, bool has_grad);
/* Waits for every bucket and writes the gradients back (queued on the engine). */
tn_status tn_reducer_finalize(tn_reducer *r);
/* Raises upstream's "Expected to have finished reduction in the prior iteration ..."
 * when the previous backward marked parameters ready without finishing. */
tn_status tn_reducer_check_finalized(tn_reducer *r);
/* upstream's rebuild_buckets, called before a forward: once, after the first synced
 * iteration without find_unused, the buckets are rebuilt from the order in which the
 * gradients became ready (tn_bucket_assignment with limits, unsorted), rank 0's layout
 * broadcast to every rank. *rebuilt tells whether it happened. Checks first that the
 * previous iteration finished (tn_reducer_check_finalized). */
tn_status tn_reducer_rebuild_buckets(tn_reducer *r, int nlimits, const int64_t *limits, bool *rebuilt);
/* Sets a built-in hook or a user hook (comm non-NULL); only once, as upstream. */
tn_status tn_reducer_set_comm(tn_reducer *r, int builtin, const tn_reducer_comm *comm);

/* Bucket b: its parameters (indices into params), flat contents and per-parameter views
 * (borrowed, valid while the reducer lives). */
int tn_reducer_num_buckets(const tn_reducer *r);
void tn_reducer_bucket(const tn_reducer *r, int b, int *nvars, const int **vars, tn_tensor **contents,
                       tn_tensor *const **views);
tn_tensor *tn_reducer_param(const tn_reducer *r, int i);
tn_pg *tn_reducer_pg(const tn_reducer *r);
/* Per-bucket byte sizes of the reducer's current layout. */
int64_t tn_reducer_bucket_bytes(const tn_reducer *r, int b);

/* upstream's compute_bucket_assignment_by_size: tensors (nbytes[i], group key[i] — dtype
 * and device — and whether a sparse gradient is expected) are put into buckets per key,
 * a bucket closing once its size reaches the current limit (limits[0] for a key's first
 * bucket, then limits[1], ... the last one repeating). Sparse tensors get a bucket each.
 * With `sort`, buckets come out sorted by their smallest index (upstream sorts unless
 * it was given tensor indices); otherwise closed buckets first, in closing order, then
 * the open ones by key in order of first appearance. Outputs (malloc'd, caller frees):
 * *bucket_start [nb + 1], *bucket_idx [n], *bucket_limit [nb] (SIZE_MAX-like -1: none). */
tn_status tn_bucket_assignment(int n, const int64_t *nbytes, const int32_t *key, const uint8_t *sparse,
                               int nlimits, const int64_t *limits, bool sort, int *nb, int **bucket_start,
                               int **bucket_idx, int64_t **bucket_limit);

#endif
