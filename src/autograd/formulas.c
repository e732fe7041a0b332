/* formulas.c — the formula table: formulas.def rows (hand-written) and the rows generated
 * from derivatives.yaml (build/gen/formulas_generated.def, tools/codegen/gen_derivatives.py)
 * indexed by operator, with in-place and out= overloads resolved to their functional
 * sibling's row. */
#include "autograd/formulas.h"

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

const tn_grad_formula *tn_grad_formula_for(tn_op_id op) {
    if ((unsigned)op >= TN_OP_COUNT) return NULL;
    if (table[op].fn) return &table[op];
    const tn_op_schema *s = &tn_op_schemas[op];
    if ((s->kind == TN_OP_KIND_INPLACE || s->kind == TN_OP_KIND_OUT) && s->functional >= 0 && table[s->functional].fn)
        return &table[s->functional];
    return NULL;
}

/* Number of rows (for the coverage test). */
int tn_grad_formula_count(void) {
    int n = 0;
#define TN_GRAD(op, name, fn, sargs, sres) n++;
#include "autograd/formulas.def"
#include "formulas_generated.def"
#undef TN_GRAD
    return n;
}
