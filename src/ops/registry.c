/* registry.c — the op implementation table, filled from the per-family *.def lists.
 * Adding a kernel is one TN_OP_IMPL line in the family's .def plus the function. */
#include "ops/dispatch.h"

#define TN_OP_IMPL(op, fn) tn_status fn(const tn_value *args, tn_value *rets);
#include "ops/all_ops.def"
#undef TN_OP_IMPL

static const tn_op_fn tn_op_table[TN_OP_COUNT] = {
#define TN_OP_IMPL(op, fn) [TN_OP_##op] = fn,
#include "ops/all_ops.def"
#undef TN_OP_IMPL
};

tn_op_fn tn_op_impl(tn_op_id op) { return (unsigned)op < TN_OP_COUNT ? tn_op_table[op] : NULL; }
