/* registry.c — the op implementation table and the out= rule column, filled from the
 * per-family *.def lists. Adding a kernel is one TN_OP_IMPL line in the family's .def plus
 * the function; a row is TN_OP_IMPL(op, fn) or TN_OP_IMPL(op, fn, out rule). */
#include "ops/dispatch.h"

/* The row's columns: the function, and the out= rule (TN_OUT_CAST when absent). The
 * trailing empty argument keeps every variadic use non-empty (C11). */
#define TN_ROW_FN(fn, ...) fn
#define TN_ROW_RULE_(fn, rule, ...) rule
#define TN_ROW_RULE(...) TN_ROW_RULE_(__VA_ARGS__, TN_OUT_CAST, )

#define TN_OP_IMPL(op, ...) tn_status TN_ROW_FN(__VA_ARGS__, )(const tn_value *args, tn_value *rets);
#include "ops/all_ops.def"
#undef TN_OP_IMPL

static const tn_op_fn tn_op_table[TN_OP_COUNT] = {
#define TN_OP_IMPL(op, ...) [TN_OP_##op] = TN_ROW_FN(__VA_ARGS__, ),
#include "ops/all_ops.def"
#undef TN_OP_IMPL
};

static const unsigned char tn_op_out_rules[TN_OP_COUNT] = {
#define TN_OP_IMPL(op, ...) [TN_OP_##op] = TN_ROW_RULE(__VA_ARGS__),
#include "ops/all_ops.def"
#undef TN_OP_IMPL
};

/* An alias row's target + 1 (0: not an alias). An alias's out= rule is its target's: the
 * door writes what the target computed, so upstream's checks are the target's. */
static const unsigned short tn_op_alias_target[TN_OP_COUNT] = {
#define TN_OP_IMPL(op, ...)
#define TN_OP_ALIAS(op, target) [TN_OP_##op] = TN_OP_##target + 1,
#include "ops/all_ops.def"
#undef TN_OP_ALIAS
#undef TN_OP_IMPL
};

tn_op_fn tn_op_impl(tn_op_id op) { return (unsigned)op < TN_OP_COUNT ? tn_op_table[op] : NULL; }

tn_op_id tn_op_resolve_alias(tn_op_id op) {
    return (unsigned)op < TN_OP_COUNT && tn_op_alias_target[op] ? (tn_op_id)(tn_op_alias_target[op] - 1) : op;
}

/* The rule column of an operator's row, through an alias to its target; TN_OUT_CAST
 * for an id outside the table. */
static unsigned rule_row(tn_op_id functional) {
    return (unsigned)functional < TN_OP_COUNT ? tn_op_out_rules[tn_op_resolve_alias(functional)] : TN_OUT_CAST;
}

tn_out_rule tn_op_out_rule(tn_op_id functional) { return (tn_out_rule)(rule_row(functional) & ~TN_OUT_FLAGS); }

bool tn_op_out_iter(tn_op_id functional) { return rule_row(functional) & TN_OUT_ITER; }

bool tn_op_offer_passes(tn_op_id nested, tn_op_id functional) {
    unsigned n = rule_row(nested), f = rule_row(functional);
    return n == f || (n == (f | TN_OUT_ITER) && !(f & TN_OUT_FLAGS));
}

unsigned tn_op_out_overlap_flags(tn_op_id functional) {
    return rule_row(functional) & (TN_OUT_DISJOINT | TN_OUT_COPIES_SELF | TN_OUT_DISJOINT_FIRST);
}
