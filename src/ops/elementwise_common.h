/* elementwise_common.h — helpers shared by the elementwise op files (private to
 * src/ops/elementwise*.c): scalar operands as wrapped-number tensors, scalars converted
 * to a dtype, and the generic "build iterator, pick loop, run" driver. */
#ifndef TN_OPS_ELEMENTWISE_COMMON_H
#define TN_OPS_ELEMENTWISE_COMMON_H

#include "kernels/elementwise.h"
#include "ops/iter.h"
#include "ops/value.h"

/* A 0-dim wrapped-number tensor holding a Python scalar (int -> Long, float -> Double,
 * bool -> Bool, complex -> ComplexDouble), as upstream's wrapped_scalar_tensor. */
tn_status tn_ew_scalar_tensor(const tn_value *v, tn_tensor **out);

/* A scalar value rounded into `dtype` and read back as double / int64 (so a Half
 * clamp bound compares like upstream's `min.to<Half>()`); NotImplementedError for a
 * dtype without a cast (complex32, the quantised types). */
tn_status tn_ew_scalar_in_dtype(const tn_value *v, tn_dtype dtype, double *d, int64_t *i);

/* Converted copy of t in `dtype` with preserved layout; a new reference to t itself
 * when the dtype already matches. */
tn_status tn_ew_to_dtype(tn_tensor *t, tn_dtype dtype, tn_tensor **out);

/* NotImplementedError "\"<kname>\" not implemented for '<Dtype>'" as upstream's dispatch macros. */
tn_status tn_ew_refuse_dtype(const char *kname, tn_dtype dtype);

/* Options of one elementwise run. */
typedef struct tn_ew_run {
    tn_ew_op op;
    const char *kname;       /* upstream kernel name for dtype refusals ("add_stub") */
    bool int_to_float;       /* integral common dtype -> default float dtype */
    bool bool_out;           /* comparisons: Bool output, compute in the common dtype */
    tn_dtype static_dtype;   /* compute in this dtype (Undefined = promote) */
} tn_ew_run;

/* Builds an iterator over `ins` (promoted to the common dtype), runs the op's loop and
 * stores the new output in rets[0]: the tensor the door offered for `rets` when it fits
 * (tn_iter_offer: a derived in-place / out= form computed straight into its tensor), else a
 * new one. ctx may be NULL. Maps loop status to errors. */
tn_status tn_ew_execute(const tn_ew_run *run, int nin, tn_tensor **ins, tn_loop_ctx *ctx, tn_value *rets);

#endif
