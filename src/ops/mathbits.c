/* mathbits.c — the conjugate / negative bit fallback of the door (mathbits.h): bitted
 * arguments resolved into copies, view operators carrying the bits, writes into a bitted
 * tensor made on a resolved clone and copied back through the bits. */
#include "ops/mathbits.h"

#include <stdlib.h>
#include <string.h>

/* ---- which arguments an operator writes (schema "Tensor(a!)") ------------------------- */

/* Bit i set: argument i of op's schema is written to (its type holds '!'). */
static uint64_t mutable_args(tn_op_id op) {
    static uint64_t mask[TN_OP_COUNT];
    static unsigned char known[TN_OP_COUNT];
    if (known[op]) return mask[op];
    const char *p = strchr(tn_op_schemas[op].schema, '(');
    uint64_t m = 0;
    int depth = 0, arg = 0;
    bool bang = false, star_only = true;
    for (p = p ? p + 1 : ""; *p && !(depth == 0 && *p == ')'); p++) {
        if (*p == '(' || *p == '[') depth++;
        else if (*p == ')' || *p == ']') depth--;
        else if (*p == '!') bang = true;
        else if (*p == ',' && depth == 0) {
            if (!star_only) { if (bang && arg < 64) m |= 1ull << arg; arg++; }
            bang = false, star_only = true;
            continue;
        }
        if (*p != ' ' && *p != '*') star_only = false;
    }
    if (!star_only && bang && arg < 64) m |= 1ull << arg;
    mask[op] = m;
    known[op] = 1;
    return m;
}

/* One of the operator names in `names` (NULL-terminated), memoised per op. */
static bool op_named(tn_op_id op, signed char *memo, const char *const *names) {
    if (!memo[op]) {
        memo[op] = 2;
        for (const char *const *n = names; *n; n++)
            if (!strcmp(tn_op_schemas[op].name, *n)) memo[op] = 1;
    }
    return memo[op] == 1;
}

/* Operators that read the bits themselves, or only the tensor's metadata. */
static bool sees_bits(tn_op_id op) {
    static signed char memo[TN_OP_COUNT];
    static const char *const names[] = {"is_conj", "is_neg", "conj", "_conj", "_neg_view", "resolve_conj", "resolve_neg",
                                        "size", "stride", "dim", "numel", "sym_size", "sym_stride", "sym_numel",
                                        "is_complex", "is_floating_point", "is_signed", "is_same_size", "is_set_to",
                                        "_has_compatible_shallow_copy_type", "is_nonzero_meta", "is_inference",
                                        "is_pinned", "is_distributed", "_is_zerotensor", "result_type", NULL};
    return op_named(op, memo, names);
}

/* In-place operators that change only self's geometry (the bits stay with the tensor). */
static bool inplace_geometry(tn_op_id op) {
    static signed char memo[TN_OP_COUNT];
    static const char *const names[] = {"t_", "transpose_", "squeeze_", "unsqueeze_", "as_strided_", "swapdims_",
                                        "swapaxes_", "detach_", NULL};
    return op_named(op, memo, names);
}

/* Functional operators whose results alias their first argument ("-> Tensor(a)" or
 * "-> Tensor(a)[]" after the argument list: split and unbind write "Tensor(a -> *)"). */
static bool returns_alias(tn_op_id op) {
    static signed char memo[TN_OP_COUNT];
    if (!memo[op]) {
        const tn_op_schema *s = &tn_op_schemas[op];
        const char *arrow = strstr(s->schema, ") -> ");
        memo[op] = s->kind == TN_OP_KIND_FUNCTIONAL && arrow && !strncmp(arrow + 5, "Tensor(a)", 9) ? 1 : 2;
    }
    return memo[op] == 1;
}

bool tn_mathbits_in_args(tn_op_id op, const tn_value *args) {
    const tn_op_schema *s = &tn_op_schemas[op];
    for (int i = 0; i < s->nargs; i++) {
        if (args[i].tag == TN_V_TENSOR && tn_mathbits(args[i].u.t)) return true;
        if (args[i].tag == TN_V_TENSORLIST)
            for (int64_t k = 0; k < args[i].u.tlist.n; k++)
                if (tn_mathbits(args[i].u.tlist.data[k])) return true;
    }
    return false;
}

/* ---- resolving ------------------------------------------------------------------------ */

tn_status tn_mathbits_view(tn_tensor *t, uint32_t toggle, tn_tensor **out) {
    tn_tensor *v = tn_tensor_alias(t);
    if (!v) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    v->flags = (v->flags & ~TN_MATHBITS) | ((t->flags & TN_MATHBITS) ^ toggle);
    *out = v;
    return TN_OK;
}

tn_status tn_mathbits_resolve(tn_tensor *t, uint32_t which, tn_tensor **out) {
    const uint32_t bits = tn_mathbits(t), apply = bits & which;
    if (!apply) { tn_tensor_retain(t); *out = t; return TN_OK; }
    /* each applied bit is one out-of-place operator on the storage as it is (no bits), so
     * the first already makes the fresh tensor: no clone before it */
    tn_tensor *r = NULL;
    TN_TRY(tn_mathbits_view(t, bits, &r));
    static const struct { uint32_t bit; tn_op_id op; } steps[2] = {{TN_TENSOR_CONJ, TN_OP_conj_physical},
                                                                  {TN_TENSOR_NEG, TN_OP_neg}};
    for (int k = 0; k < 2; k++) {
        if (!(apply & steps[k].bit)) continue;
        if (steps[k].bit == TN_TENSOR_NEG && r->dtype == TN_DTYPE_BOOL) {
            /* a negative bool view is allowed; upstream's resolution runs the neg kernel, which
             * has no Bool loop (an empty tensor never reaches it) */
            if (tn_tensor_numel(r) == 0) continue;
            tn_tensor_release(r);
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "\"neg_cpu\" not implemented for 'Bool'");
        }
        tn_value a[2] = {tn_value_tensor(r), {.tag = TN_V_NONE}};
        tn_tensor *x = NULL;
        tn_status st = tn_dispatch_one(steps[k].op, a, &x);
        tn_tensor_release(r);
        TN_TRY(st);
        r = x;
    }
    r->flags |= bits & ~which;
    *out = r;
    return TN_OK;
}

/* ---- the fallback ---------------------------------------------------------------------- */

/* The bits a view's result of dtype `rd` carries from a source with `bits`: a complex source
 * viewed as real keeps its negative bit, and imag turns a conjugate bit into a negation. */
static tn_status result_bits(tn_op_id op, const tn_tensor *src, tn_dtype rd, uint32_t bits, uint32_t *out) {
    *out = bits;
    if (!tn_dtype_is_complex(src->dtype) || tn_dtype_is_complex(rd)) return TN_OK;
    const char *name = tn_op_schemas[op].name;
    bool neg = (bits & TN_TENSOR_NEG) != 0, conj = (bits & TN_TENSOR_CONJ) != 0;
    if (!strcmp(name, "imag")) neg = neg != conj;
    else if (conj && strcmp(name, "real"))
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::%s of a tensor with the conjugate bit is not implemented by "
                        "torchnative (resolve_conj() it first)", name);
    *out = neg ? TN_TENSOR_NEG : 0;
    return TN_OK;
}

/* One result of a view operator: a view of the source gets the bits; a copy made of the
 * physical values (reshape of a non-viewable layout) gets them applied to its data. */
static tn_status finish_view_result(tn_op_id op, tn_tensor *src, uint32_t bits, tn_tensor **slot) {
    tn_tensor *r = *slot;
    if (!r || r == src) return TN_OK;
    uint32_t b, own = r->flags & TN_MATHBITS; /* bits the operator set itself (mH's conjugate) */
    TN_TRY(result_bits(op, src, r->dtype, bits, &b));
    r->flags = (r->flags & ~TN_MATHBITS) | (b ^ own);
    b ^= own;
    if (r->storage == src->storage || !b) return TN_OK;
    tn_tensor *res;
    TN_TRY(tn_mathbits_resolve(r, TN_MATHBITS, &res));
    tn_tensor_release(r);
    *slot = res;
    return TN_OK;
}

static tn_status run_view(tn_op_id op, const tn_value *args, tn_value *rets,
                          tn_status (*run)(tn_op_id, const tn_value *, tn_value *)) {
    const tn_op_schema *s = &tn_op_schemas[op];
    tn_tensor *src = args[0].u.t;
    const uint32_t bits = tn_mathbits(src);
    if ((bits & TN_TENSOR_CONJ) && !strcmp(s->name, "view_as_real"))
        return tn_error(TN_ERR_RUNTIME, "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
                        "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                        "resulting tensor will NOT alias the original.");
    src->flags &= ~TN_MATHBITS; /* the operator sees the storage as it is */
    tn_status st = run(op, args, rets);
    src->flags |= bits;
    if (st != TN_OK) return st;
    for (int k = 0; k < s->nrets && st == TN_OK; k++) {
        if (rets[k].tag == TN_V_TENSOR) st = finish_view_result(op, src, bits, &rets[k].u.t);
        else if (rets[k].tag == TN_V_TENSORLIST)
            for (int64_t i = 0; i < rets[k].u.tlist.n && st == TN_OK; i++)
                st = finish_view_result(op, src, bits, (tn_tensor **)&rets[k].u.tlist.data[i]); /* the receiver's list */
    }
    if (st != TN_OK)
        for (int k = 0; k < s->nrets; k++) tn_value_release(&rets[k]);
    return st;
}

static tn_status run_resolved(tn_op_id op, const tn_value *args, tn_value *rets,
                              tn_status (*run)(tn_op_id, const tn_value *, tn_value *));

/* An operator writing into a bitted tensor t (in place or out=), as upstream's fallback:
 * it writes into a resolved clone, whose values are then copied back into t's storage
 * through t's bits (conjugated / negated again), and t is returned where the clone was. */
static tn_status run_written(tn_op_id op, const tn_value *args, tn_value *rets,
                             tn_status (*run)(tn_op_id, const tn_value *, tn_value *), int w) {
    const tn_op_schema *s = &tn_op_schemas[op];
    tn_tensor *t = args[w].u.t, *r, *back = NULL, *phys = NULL;
    TN_TRY(tn_mathbits_resolve(t, TN_MATHBITS, &r));
    tn_value *a = malloc(sizeof(tn_value) * (size_t)s->nargs);
    if (!a) { tn_tensor_release(r); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    memcpy(a, args, sizeof(tn_value) * (size_t)s->nargs);
    a[w] = tn_value_tensor(r);
    tn_status st = run_resolved(op, a, rets, run);
    free(a);
    if (st == TN_OK && (r->ndim != t->ndim || memcmp(r->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim)))
        st = tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::%s.%s resizing a tensor with the conjugate or negative bit is not "
                      "implemented by torchnative", s->name, s->overload[0] ? s->overload : "default");
    if (st == TN_OK) {
        /* r's values through t's bits are what t's storage must hold */
        r->flags = (r->flags & ~TN_MATHBITS) | tn_mathbits(t);
        st = tn_mathbits_resolve(r, TN_MATHBITS, &back);
        if (st == TN_OK) st = tn_mathbits_view(t, tn_mathbits(t), &phys);
        if (st == TN_OK) {
            tn_value c[3] = {tn_value_tensor(phys), tn_value_tensor(back), tn_value_bool(false)}, cr;
            st = tn_dispatch(TN_OP_copy_, c, &cr);
            if (st == TN_OK) tn_tensor_release(cr.u.t);
        }
        r->flags &= ~TN_MATHBITS;
    }
    tn_tensor_release(back);
    tn_tensor_release(phys);
    for (int k = 0; k < s->nrets; k++) {
        if (st != TN_OK) { tn_value_release(&rets[k]); continue; }
        if (rets[k].tag == TN_V_TENSOR && rets[k].u.t == r) {
            tn_tensor_release(r);
            tn_tensor_retain(t);
            rets[k].u.t = t;
        }
    }
    tn_tensor_release(r);
    return st;
}

tn_status tn_mathbits_run(tn_op_id op, const tn_value *args, tn_value *rets,
                          tn_status (*run)(tn_op_id, const tn_value *, tn_value *)) {
    const tn_op_schema *s = &tn_op_schemas[op];
    if (sees_bits(op)) return run(op, args, rets);
    const uint64_t mut = mutable_args(op);
    int written = -1; /* the one bitted argument the operator writes */
    for (int i = 0; i < s->nargs && i < 64; i++) {
        if (!(mut & (1ull << i))) continue;
        bool bitted = args[i].tag == TN_V_TENSOR && tn_mathbits(args[i].u.t);
        bool listed = false;
        for (int64_t k = 0; args[i].tag == TN_V_TENSORLIST && k < args[i].u.tlist.n; k++)
            listed |= tn_mathbits(args[i].u.tlist.data[k]) != 0;
        if (!bitted && !listed) continue;
        if (inplace_geometry(op)) return run(op, args, rets);
        if (listed || written >= 0)
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "aten::%s.%s writing into more than one tensor with the conjugate "
                            "or negative bit is not implemented by torchnative", s->name,
                            s->overload[0] ? s->overload : "default");
        written = i;
    }
    if (written >= 0) return run_written(op, args, rets, run, written);
    if (returns_alias(op) && s->nargs && args[0].tag == TN_V_TENSOR && tn_mathbits(args[0].u.t)) {
        bool others = false; /* another bitted argument of a view operator: resolved below first */
        for (int i = 1; i < s->nargs; i++) others |= args[i].tag == TN_V_TENSOR && tn_mathbits(args[i].u.t);
        if (!others) return run_view(op, args, rets, run);
    }
    return run_resolved(op, args, rets, run);
}

/* The operator on resolved copies of its bitted arguments (each holds a reference). */
static tn_status run_resolved(tn_op_id op, const tn_value *args, tn_value *rets,
                              tn_status (*run)(tn_op_id, const tn_value *, tn_value *)) {
    const tn_op_schema *s = &tn_op_schemas[op];
    tn_value *a = malloc(sizeof(tn_value) * (size_t)(s->nargs ? s->nargs : 1));
    if (!a) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    memcpy(a, args, sizeof(tn_value) * (size_t)s->nargs);
    tn_status st = TN_OK;
    int done = 0;
    for (; done < s->nargs && st == TN_OK; done++) {
        if (a[done].tag == TN_V_TENSOR && tn_mathbits(a[done].u.t)) {
            tn_tensor *r;
            st = tn_mathbits_resolve(a[done].u.t, TN_MATHBITS, &r);
            if (st == TN_OK) a[done].u.t = r;
            else a[done].tag = TN_V_NONE;
        } else if (a[done].tag == TN_V_TENSORLIST) {
            int64_t n = a[done].u.tlist.n;
            tn_tensor **l = calloc((size_t)(n ? n : 1), sizeof(tn_tensor *));
            if (!l) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); a[done].tag = TN_V_NONE; break; }
            for (int64_t k = 0; k < n; k++) {
                tn_tensor *e = args[done].u.tlist.data[k];
                if (!e) continue;
                if (st == TN_OK) st = tn_mathbits_resolve(e, TN_MATHBITS, &l[k]);
            }
            a[done].u.tlist.data = l;
        }
    }
    if (st == TN_OK) st = run(op, a, rets);
    for (int i = 0; i < done; i++) {
        if (args[i].tag == TN_V_TENSOR && tn_mathbits(args[i].u.t) && a[i].tag == TN_V_TENSOR) tn_tensor_release(a[i].u.t);
        else if (args[i].tag == TN_V_TENSORLIST && a[i].tag == TN_V_TENSORLIST) {
            for (int64_t k = 0; k < a[i].u.tlist.n; k++)
                if (a[i].u.tlist.data[k]) tn_tensor_release(a[i].u.tlist.data[k]);
            free((void *)a[i].u.tlist.data);
        }
    }
    free(a);
    return st;
}
