/* formulas.c — the formula table: formulas.def rows (hand-written) and the rows generated
 * from derivatives.yaml (build/gen/formulas_generated.def, tools/codegen/gen_derivatives.py)
 * indexed by operator, with in-place and out= overloads resolved to their functional
 * sibling's row. */
#include "autograd/formulas.h"

#define TN_SAVE_IF(op, saved, if_needed)
#define TN_GRAD(op, name, fn, sargs, sres) void fn(tn_grad_ctx *c);
#include "autograd/formulas.def"
#include "formulas_generated.def"
#undef TN_GRAD

/* No operator has both a hand row and a generated one (the generator skips hand rows):
 * each row declares an enumerator named after its operator, so a second row for the same
 * operator is a compile-time redeclaration error. */
enum tn_grad_row_once {
#define TN_GRAD(op, name, fn, sargs, sres) tn_grad_row_##op,
#include "autograd/formulas.def"
#include "formulas_generated.def"
#undef TN_GRAD
    tn_grad_row_count
};

static const tn_grad_formula table[TN_OP_COUNT] = {
#define TN_GRAD(op, name, fn, sargs, sres) [TN_OP_##op] = {fn, name, sargs, sres},
#include "autograd/formulas.def"
#include "formulas_generated.def"
#undef TN_GRAD
};
#undef TN_SAVE_IF

const tn_grad_formula *tn_grad_formula_for(tn_op_id op) {
    if ((unsigned)op >= TN_OP_COUNT) return NULL;
    if (table[op].fn) return &table[op];
    const tn_op_schema *s = &tn_op_schemas[op];
    if ((s->kind == TN_OP_KIND_INPLACE || s->kind == TN_OP_KIND_OUT) && s->functional >= 0 && table[s->functional].fn)
        return &table[s->functional];
    return NULL;
}

/* Number of rows (for the coverage test). */
uint32_t tn_grad_save_mask(const tn_grad_formula *f, tn_op_id op, uint32_t needs) {
    const tn_op_schema *s = &tn_op_schemas[op];
    tn_op_id row = (f == &table[op] || s->functional < 0) ? op : (tn_op_id)s->functional;
    uint32_t mask = f->save_args;
#undef TN_SAVE_IF
#define TN_SAVE_IF(o, saved, if_needed) \
    if (row == TN_OP_##o && !((needs >> (if_needed)) & 1u)) mask &= ~(1u << (saved));
#define TN_GRAD(op, name, fn, sargs, sres)
#include "autograd/formulas.def"
#undef TN_GRAD
#undef TN_SAVE_IF
    return mask;
}

int tn_grad_formula_count(void) {
    int n = 0;
#define TN_SAVE_IF(op, saved, if_needed)
#define TN_GRAD(op, name, fn, sargs, sres) n++;
#include "autograd/formulas.def"
#include "formulas_generated.def"
#undef TN_GRAD
    return n;
}
