/* graph.h — operator-graph capture and replay at the door (the CPU analogue of a CUDA graph).
 *
 * While a thread captures, every operator call that reaches tn_dispatch from outside the
 * door (nested calls made by op implementations are not recorded) runs as usual and is
 * appended to the graph with its arguments and results. Replay runs the recorded calls
 * again, in order, on the same tensors: no Python, no argument parsing, no per-call
 * dispatch decisions. A replay step is one of
 *   - skip:    every result aliases the storage of an argument (a view, `detach`, a
 *              same-dtype `to`): the captured result already points at the right memory;
 *   - rerun:   in-place and out= overloads, run with the same arguments, writing into
 *              the same tensors;
 *   - into:    functional overloads with fresh results: run, then copy each result into
 *              the captured result tensor, so later steps (which hold that tensor) see
 *              the new values.
 * Decode-shaped linear steps on one input share one GEMV region, and a few chains of small
 * steps whose intermediates nothing else holds (RMSNorm, rotary embedding, SwiGLU, the
 * static cache's update) run as one step each, with the same bits (graph_internal.h).
 * Storages never move, so the memory every recorded step reads and writes is fixed:
 * callers change the inputs by writing into the captured input tensors in place.
 *
 * What capture cannot see makes the graph invalid instead of silently wrong: a read of
 * tensor data into the host (item(), tolist(), a tensor used as a Python number, numpy),
 * an operator returning a non-tensor result, a random operator. A failed capture keeps
 * its reason; replaying it refuses.
 *
 * Plain C11; no Python. */
#ifndef TN_GRAPH_H
#define TN_GRAPH_H

#include <stdint.h>

#include "core/tensor.h"

#include "ops/dispatch.h"

typedef struct tn_graph tn_graph;

/* Starts capturing on this thread into a new graph. Fails if this thread already captures. */
tn_status tn_graph_capture_begin(void);
/* Ends this thread's capture and hands over the graph (NULL if none was active). */
tn_graph *tn_graph_capture_end(void);
/* Whether this thread is capturing. */
bool tn_graph_capturing(void);
/* Marks the active capture (if any) as invalid: host code read tensor data (`what`). */
void tn_graph_note_host_read(const char *what);

/* Runs the recorded steps. Refuses a failed capture. Not thread-safe per graph. With
 * `profile`, each step's time (kernel, result copy, door) is added to its counter. */
tn_status tn_graph_replay(tn_graph *g, bool profile);
/* NULL when the capture is valid, else why it is not. */
const char *tn_graph_failure(const tn_graph *g);
/* Counts of recorded steps by kind (any pointer may be NULL). */
void tn_graph_counts(const tn_graph *g, int64_t *skip, int64_t *rerun, int64_t *into);
/* Of the last replay's `into` steps, how many computed straight into their captured result
 * (tn_graph_take_result) instead of being copied there. */
int64_t tn_graph_direct_steps(const tn_graph *g);
/* Of the last replay's steps, how many ran inside chains run as one step (graph_internal.h:
 * transformers' RMSNorm and rotary embedding). */
int64_t tn_graph_chained_steps(const tn_graph *g);
void tn_graph_free(tn_graph *g);
/* Number of recorded steps, and step i's operator, kind (0 skip, 1 rerun, 2 into) and
 * accumulated profiled time. */
int64_t tn_graph_size(const tn_graph *g);
void tn_graph_step_info(const tn_graph *g, int64_t i, tn_op_id *op, int *kind, double *ns);

/* During a replay, the step being run writes its fresh result straight into the tensor
 * that capture recorded for it instead of a new one that replay then copies over: an
 * operator implementation's first output allocation at the top level (not inside nested
 * operator calls) of exactly these sizes, strides and dtype takes it (retained; NULL
 * otherwise). */
tn_tensor *tn_graph_take_result(int ndim, const int64_t *sizes, const int64_t *strides, tn_dtype dtype);
/* tn_tensor_empty_strided (strides NULL: contiguous) for an operator's result, taking the
 * replayed step's captured result when tn_graph_take_result gives it. */
tn_status tn_graph_empty_result(int ndim, const int64_t *sizes, const int64_t *strides, tn_dtype dtype, tn_device device,
                                tn_tensor **out);

/* Called by the door around each call (dispatch.c). */
bool tn_graph_enter(void);
void tn_graph_record(tn_op_id op, const tn_value *args, const tn_value *rets);
void tn_graph_leave(void);

#endif
