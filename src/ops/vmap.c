/* vmap.c — torch.vmap's levels, batched tensors and the batching of operator calls at the
 * door (contract in vmap.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "autograd/formulas.h"
#include "ops/vmap.h"

#define MAX_LEVELS 64

static _Thread_local struct {
    int depth;
    int in_loop; /* > 0 while calls run on the elements of a batch (tn_vmap_dispatch's loop) */
    int grad_depth; /* torch.func.grad levels active */
    int64_t size[MAX_LEVELS];
    int random[MAX_LEVELS];
} tl;


tn_status tn_vmap_push(int64_t batch_size, int randomness, int64_t *level) {
    if (tl.depth >= MAX_LEVELS) return tn_error(TN_ERR_RUNTIME, "vmap: more than %d nested levels", MAX_LEVELS);
    if (batch_size < 0) return tn_error(TN_ERR_RUNTIME, "vmap: batch size must be non-negative, got %lld", (long long)batch_size);
    tl.size[tl.depth] = batch_size;
    tl.random[tl.depth] = randomness;
    *level = ++tl.depth;
    return TN_OK;
}

tn_status tn_vmap_pop(int64_t *level) {
    if (tl.depth == 0) return tn_error(TN_ERR_RUNTIME, "vmap: no vmap level is active to leave");
    *level = tl.depth--;
    return TN_OK;
}

int tn_vmap_depth(void) { return tl.depth; }

int64_t tn_vmap_batch_size(int64_t level) { return level >= 1 && level <= tl.depth ? tl.size[level - 1] : -1; }

int64_t tn_func_grad_push(void) { return ++tl.grad_depth; }

tn_status tn_func_grad_pop(int64_t *level) {
    if (tl.grad_depth == 0) return tn_error(TN_ERR_RUNTIME, "grad: no grad level is active to leave");
    *level = tl.grad_depth--;
    return TN_OK;
}

int tn_func_grad_depth(void) { return tl.grad_depth; }

tn_status tn_vmap_add_batch_dim(tn_tensor *t, int64_t bdim, int64_t level, tn_tensor **out) {
    if (bdim < 0 || bdim >= t->ndim)
        return tn_error(TN_ERR_INDEX, "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                        -(t->ndim ? t->ndim : 1), (t->ndim ? t->ndim : 1) - 1, (long long)bdim);
    if (level < 1) return tn_error(TN_ERR_RUNTIME, "vmap: level must be at least 1, got %lld", (long long)level);
    int64_t sizes[TN_MAX_DIMS], strides[TN_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < t->ndim; d++)
        if (d != bdim) sizes[nd] = t->sizes[d], strides[nd++] = t->strides[d];
    tn_storage *ms;
    TN_TRY(tn_storage_new(0, (tn_device){TN_DEVICE_META, -1}, false, &ms));
    tn_tensor *lt = tn_tensor_new_view(ms, 0, nd, sizes, strides, t->dtype);
    tn_storage_release(ms);
    if (!lt || !tn_tensor_attach_batch(lt, t, bdim, level)) {
        tn_tensor_release(lt);
        return tn_error(TN_ERR_NO_MEMORY, "vmap: out of memory");
    }
    /* requires_grad stays false: as upstream's, a batched tensor carries no autograd of its
     * own; the operators on its value are recorded (a graph through vmap is the value's) */
    lt->flags |= t->flags & (TN_TENSOR_CONJ | TN_TENSOR_NEG);
    *out = lt;
    return TN_OK;
}

/* ---- door calls used here ------------------------------------------------------------ */

static tn_status movedim(tn_tensor *t, int64_t from, int64_t to, tn_tensor **out) {
    tn_value a[3] = {tn_value_tensor(t), tn_value_int(from), tn_value_int(to)};
    return tn_dispatch_one(TN_OP_movedim_int, a, out);
}

static tn_status stack0(tn_tensor **ts, int64_t n, tn_tensor **out) {
    tn_value a[2] = {{.tag = TN_V_TENSORLIST}, tn_value_int(0)};
    a[0].u.tlist.data = ts;
    a[0].u.tlist.n = n;
    return tn_dispatch_one(TN_OP_stack, a, out);
}

tn_status tn_vmap_remove_batch_dim(tn_tensor *t, int64_t level, int64_t batch_size, int64_t out_dim, tn_tensor **out) {
    if (t->batch && t->batch->level == level) return movedim(t->batch->value, t->batch->bdim, out_dim, out);
    if (out_dim < 0 || out_dim > t->ndim)
        return tn_error(TN_ERR_INDEX, "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                        -(t->ndim + 1), t->ndim, (long long)out_dim);
    tn_tensor *u;
    tn_value a[2] = {tn_value_tensor(t), tn_value_int(out_dim)};
    TN_TRY(tn_dispatch_one(TN_OP_unsqueeze, a, &u));
    int64_t sz[TN_MAX_DIMS];
    memcpy(sz, u->sizes, sizeof(int64_t) * (size_t)u->ndim);
    sz[out_dim] = batch_size;
    tn_value e[3] = {tn_value_tensor(u), tn_value_intlist(sz, u->ndim), tn_value_bool(false)};
    tn_status st = tn_dispatch_one(TN_OP_expand, e, out);
    tn_tensor_release(u);
    return st;
}

/* ---- which calls are batched ----------------------------------------------------------- */

/* The operators that draw: those taking a generator, the rand* factories and the fused
 * dropouts (upstream's nondeterministic_seeded operators less the composites that reach
 * one of these only when they draw: dropout in training, rrelu, the RNNs, attention). */
static bool op_is_random(tn_op_id op, const tn_value *args) {
    static signed char memo[TN_OP_COUNT]; /* 0 unknown, 1 random, 2 not, 3 a dropout */
    if (!memo[op]) {
        const tn_op_schema *s = &tn_op_schemas[op];
        bool r = strstr(s->schema, "Generator?") || !strncmp(s->name, "rand", 4) ||
                 !strcmp(s->name, "native_dropout") || !strcmp(s->name, "_fused_dropout");
        /* dropout, feature_dropout, alpha_dropout, ... (input, p, train): ours draw in the kernel */
        bool d = !r && strstr(s->name, "dropout") && strncmp(s->name, "native_", 7) && s->nargs == 3 &&
                 strstr(s->schema, "float p, bool train");
        memo[op] = r ? 1 : d ? 3 : 2;
    }
    if (memo[op] == 3) /* draws only in training with 0 < p, on a non-empty input, as upstream's */
        return args[2].u.b && args[1].u.d != 0 && args[0].tag == TN_V_TENSOR && tn_tensor_numel(args[0].u.t) > 0;
    return memo[op] == 1;
}

static int64_t value_level(const tn_value *v) {
    if (v->tag == TN_V_TENSOR) return v->u.t && v->u.t->batch ? v->u.t->batch->level : 0;
    int64_t l = 0;
    if (v->tag == TN_V_TENSORLIST)
        for (int64_t k = 0; k < v->u.tlist.n; k++) {
            const tn_tensor *t = v->u.tlist.data[k];
            if (t && t->batch && t->batch->level > l) l = t->batch->level;
        }
    return l;
}

static int64_t call_level(tn_op_id op, const tn_value *args) {
    int64_t l = 0;
    for (int k = 0; k < tn_op_schemas[op].nargs; k++) {
        int64_t v = value_level(&args[k]);
        if (v > l) l = v;
    }
    return l;
}

bool tn_vmap_intercepts(tn_op_id op, const tn_value *args) {
    if (!tl.depth && !tn_tensor_batched_alive()) return false;
    if (call_level(op, args)) return true;
    if (!tl.depth || !op_is_random(op, args)) return false;
    /* a random operator on unbatched arguments: "error" raises; "same" runs it once, except
     * on a batch element, where it would draw per element (refused); "different" draws a
     * batch, except on a batch element, where the loop already draws per element */
    switch (tl.random[tl.depth - 1]) {
    case TN_VMAP_RANDOM_ERROR: return true;
    case TN_VMAP_RANDOM_SAME: return tl.in_loop > 0;
    default: return tl.in_loop == 0;
    }
}

/* ---- the batching loop ------------------------------------------------------------------ */

static const char *op_label(tn_op_id op, char *buf, size_t n) {
    const tn_op_schema *s = &tn_op_schemas[op];
    snprintf(buf, n, "aten::%s%s%s", s->name, s->overload[0] ? "." : "", s->overload);
    return buf;
}

/* The elements of every tensor batched at `level` among args (argument order, list
 * elements in order): one unbind of its value per tensor (its backward is one stack, where
 * a select per element would write a whole zero-filled gradient each). parts[] receives the
 * element lists (owned results); *nparts their count. */
static tn_status unbind_all(tn_op_id op, const tn_value *args, int64_t level, tn_value *parts, int *nparts) {
    for (int k = 0; k < tn_op_schemas[op].nargs; k++) {
        if (value_level(&args[k]) != level) continue;
        int64_t n = args[k].tag == TN_V_TENSOR ? 1 : args[k].u.tlist.n;
        for (int64_t j = 0; j < n; j++) {
            const tn_tensor *t = args[k].tag == TN_V_TENSOR ? args[k].u.t : args[k].u.tlist.data[j];
            if (!t || !t->batch || t->batch->level != level) continue;
            tn_value a[2] = {tn_value_tensor(t->batch->value), tn_value_int(t->batch->bdim)};
            TN_TRY(tn_dispatch(TN_OP_unbind_int, a, &parts[*nparts]));
            (*nparts)++;
        }
    }
    return TN_OK;
}

/* args with every tensor batched at `level` replaced by its element i (borrowed from
 * parts[], in unbind_all's order); element lists in lists[] */
static tn_status slice_args(tn_op_id op, const tn_value *args, int64_t level, int64_t i, tn_value *ai,
                            const tn_value *parts, tn_tensor ***lists, int *nlists) {
    int nargs = tn_op_schemas[op].nargs, s = 0;
    for (int k = 0; k < nargs; k++) {
        ai[k] = args[k];
        if (value_level(&args[k]) != level) continue;
        if (args[k].tag == TN_V_TENSOR) {
            ai[k].u.t = parts[s++].u.tlist.data[i];
        } else {
            int64_t n = args[k].u.tlist.n;
            tn_tensor **l = calloc((size_t)(n ? n : 1), sizeof *l);
            if (!l) return tn_error(TN_ERR_NO_MEMORY, "vmap: out of memory");
            lists[(*nlists)++] = l;
            for (int64_t j = 0; j < n; j++) {
                tn_tensor *t = args[k].u.tlist.data[j];
                l[j] = t && t->batch && t->batch->level == level ? parts[s++].u.tlist.data[i] : t;
            }
            ai[k].u.tlist.data = l;
        }
    }
    return TN_OK;
}

/* Rebuilds the per-element views r[0..B) of `value` as one strided view of it with the
 * batch dimension first, when they are views of its storage laid out at a constant step;
 * NULL in *out otherwise. */
static tn_status view_rebuild(tn_tensor *value, tn_tensor *const *r, int64_t B, tn_tensor **out) {
    *out = NULL;
    const tn_tensor *r0 = r[0];
    if (value->batch || r0->batch || r0->storage != value->storage || r0->ndim + 1 > TN_MAX_DIMS ||
        (r0->flags & (TN_TENSOR_CONJ | TN_TENSOR_NEG)) != (value->flags & (TN_TENSOR_CONJ | TN_TENSOR_NEG)))
        return TN_OK;
    int64_t step = B > 1 ? r[1]->offset - r0->offset : 0;
    for (int64_t i = 1; i < B; i++) {
        const tn_tensor *ri = r[i];
        if (ri->batch || ri->storage != r0->storage || ri->ndim != r0->ndim || ri->dtype != r0->dtype ||
            ri->flags != r0->flags || ri->offset != r0->offset + i * step ||
            memcmp(ri->sizes, r0->sizes, sizeof(int64_t) * (size_t)r0->ndim) ||
            memcmp(ri->strides, r0->strides, sizeof(int64_t) * (size_t)r0->ndim))
            return TN_OK;
    }
    if (r0->dtype != value->dtype) return TN_OK; /* view(dtype): left to the copy */
    int64_t sz[TN_MAX_DIMS], st[TN_MAX_DIMS];
    sz[0] = B, st[0] = step;
    memcpy(sz + 1, r0->sizes, sizeof(int64_t) * (size_t)r0->ndim);
    memcpy(st + 1, r0->strides, sizeof(int64_t) * (size_t)r0->ndim);
    tn_value a[4] = {tn_value_tensor(value), tn_value_intlist(sz, r0->ndim + 1), tn_value_intlist(st, r0->ndim + 1),
                     tn_value_int(r0->offset)};
    /* the per-element views decide whether the result is differentiable (detach, alias) */
    bool grad = tn_grad_mode_enabled();
    bool keep = grad && tn_requires_grad(r0);
    if (grad && !keep) tn_grad_mode_set(false);
    tn_status s = tn_dispatch_one(TN_OP_as_strided, a, out);
    if (grad && !keep) tn_grad_mode_set(true);
    return s;
}

static tn_status wrap0(tn_tensor *phys, int64_t level, tn_tensor **out) {
    tn_status st = tn_vmap_add_batch_dim(phys, 0, level, out);
    tn_tensor_release(phys);
    return st;
}

/* one result of the batched call from its B per-element values */
static tn_status combine(tn_op_id op, const tn_value *args, int64_t level, int r, tn_value *all, int nrets, int64_t B,
                         tn_value *ret) {
    char lbl[160];
    tn_value *v0 = &all[r];
    if (v0->tag == TN_V_NONE) {
        *ret = *v0;
        return TN_OK;
    }
    if (v0->tag != TN_V_TENSOR && v0->tag != TN_V_TENSORLIST) {
        /* answers from the dtype or the math bits, the same for every element (forward_ad's
         * make_dual asks is_floating_point of a batched primal) */
        if (op == TN_OP_is_floating_point || op == TN_OP_is_complex || op == TN_OP_is_signed || op == TN_OP_is_conj ||
            op == TN_OP_is_neg || op == TN_OP__is_zerotensor) {
            *ret = *v0;
            return TN_OK;
        }
        if (op == TN_OP__local_scalar_dense)
            return tn_error(TN_ERR_RUNTIME, "%s", TN_MSG_VMAP_ITEM);
        if (op == TN_OP_is_nonzero)
            return tn_error(TN_ERR_RUNTIME, "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                                            "control flow. We don't support that yet, please shout over at "
                                            "https://github.com/pytorch/functorch/issues/257 .");
        return tn_error(TN_ERR_RUNTIME, "vmap: %s returns a number, which cannot be batched",
                        op_label(op, lbl, sizeof lbl));
    }
    tn_tensor **col = calloc((size_t)B, sizeof *col);
    if (!col) return tn_error(TN_ERR_NO_MEMORY, "vmap: out of memory");
    tn_status st = TN_OK;
    if (v0->tag == TN_V_TENSOR) {
        for (int64_t i = 0; i < B; i++) col[i] = all[i * nrets + r].u.t;
        tn_tensor *phys = NULL;
        /* (not when the elements carry forward-mode tangents: the rebuilt view would not,
         * forward.c; the results are stacked instead) */
        bool tangents = false;
        for (int64_t i = 0; i < B && tn_fw_depth(); i++) tangents |= tn_fw_has_tangent(col[i]);
        if (tn_op_is_view(op) && args[0].tag == TN_V_TENSOR && value_level(&args[0]) == level && !tangents)
            st = view_rebuild(args[0].u.t->batch->value, col, B, &phys);
        if (st == TN_OK && !phys) st = stack0(col, B, &phys);
        tn_tensor *t;
        if (st == TN_OK && (st = wrap0(phys, level, &t)) == TN_OK) *ret = tn_value_tensor(t);
    } else {
        int64_t n = v0->u.tlist.n;
        for (int64_t i = 1; i < B && st == TN_OK; i++)
            if (all[i * nrets + r].u.tlist.n != n)
                st = tn_error(TN_ERR_RUNTIME, "vmap: %s returned lists of different lengths for different batch elements",
                              op_label(op, lbl, sizeof lbl));
        tn_tensor **list = st == TN_OK ? calloc((size_t)(n ? n : 1), sizeof *list) : NULL;
        if (st == TN_OK && !list) st = tn_error(TN_ERR_NO_MEMORY, "vmap: out of memory");
        for (int64_t j = 0; j < n && st == TN_OK; j++) {
            for (int64_t i = 0; i < B; i++) col[i] = all[i * nrets + r].u.tlist.data[j];
            tn_tensor *phys;
            if ((st = stack0(col, B, &phys)) == TN_OK) st = wrap0(phys, level, &list[j]);
        }
        if (st == TN_OK) *ret = tn_value_tensorlist(list, n);
        else if (list) tn_tensorlist_discard(list, n);
    }
    free(col);
    return st;
}

static tn_status check_mutation(tn_op_id op, const tn_value *args, int64_t level) {
    const tn_op_schema *s = &tn_op_schemas[op];
    char lbl[160];
    if (s->kind == TN_OP_KIND_INPLACE && value_level(&args[0]) != level)
        return tn_error(TN_ERR_RUNTIME,
                        "vmap: %s(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args "
                        "that has more elements than `self`. This happened due to `other` being vmapped over but `self` "
                        "not being vmapped over in a vmap. Please try to use out-of-place operators instead of %s. If "
                        "said operator is being called inside the PyTorch framework, please file a bug report instead.",
                        s->name, s->name);
    if (s->kind == TN_OP_KIND_OUT) {
        for (int k = s->nargs - s->nout; k < s->nargs; k++)
            if (value_level(&args[k]) != level)
                return tn_error(TN_ERR_RUNTIME,
                                "Batching rule not implemented for %s; the fallback path doesn't work on out= or view ops.",
                                op_label(op, lbl, sizeof lbl));
    }
    if (s->kind == TN_OP_KIND_MUTABLE || s->kind == TN_OP_KIND_SCRATCH)
        return tn_error(TN_ERR_NOT_IMPLEMENTED, "vmap over %s (an operator mutating its arguments) is not implemented by "
                                                "torchnative", op_label(op, lbl, sizeof lbl));
    return TN_OK;
}


/* The physical result of a batch of none: run on meta stand-ins of the elements for the
 * result's shape and dtype, then an empty tensor with a batch dimension of 0. */
static tn_status empty_result(const tn_tensor *m, tn_device dev, int64_t level, tn_tensor **out) {
    int64_t sz[TN_MAX_DIMS];
    if (m->ndim + 1 > TN_MAX_DIMS) return tn_error(TN_ERR_RUNTIME, "vmap: too many dimensions");
    sz[0] = 0;
    memcpy(sz + 1, m->sizes, sizeof(int64_t) * (size_t)m->ndim);
    tn_tensor *phys;
    TN_TRY(tn_tensor_empty(m->ndim + 1, sz, m->dtype, dev, &phys));
    return wrap0(phys, level, out);
}

static tn_status empty_batch(tn_op_id op, const tn_value *args, int64_t level, tn_value *rets) {
    const tn_op_schema *s = &tn_op_schemas[op];
    char lbl[160];
    int nargs = s->nargs, nrets = s->nrets;
    tn_device dev = {TN_DEVICE_CPU, -1};
    int ntens = 0;
    for (int k = 0; k < nargs; k++)
        ntens += args[k].tag == TN_V_TENSOR ? 1 : args[k].tag == TN_V_TENSORLIST ? (int)args[k].u.tlist.n : 0;
    tn_value *ma = calloc((size_t)nargs + 1, sizeof *ma), *mr = calloc((size_t)nrets + 1, sizeof *mr);
    tn_tensor **owned = calloc((size_t)ntens + 1, sizeof *owned), ***lists = calloc((size_t)nargs + 1, sizeof *lists);
    int nowned = 0, nlists = 0;
    tn_status st = ma && mr && owned && lists ? TN_OK : tn_error(TN_ERR_NO_MEMORY, "vmap: out of memory");
    for (int k = 0; k < nargs && st == TN_OK; k++) {
        ma[k] = args[k];
        int64_t n = args[k].tag == TN_V_TENSOR ? 1 : args[k].tag == TN_V_TENSORLIST ? args[k].u.tlist.n : 0;
        tn_tensor *const *src = args[k].tag == TN_V_TENSOR ? &args[k].u.t : n ? args[k].u.tlist.data : NULL;
        tn_tensor **dst = args[k].tag == TN_V_TENSOR ? &ma[k].u.t : NULL;
        if (args[k].tag == TN_V_TENSORLIST && n) {
            if (!(dst = calloc((size_t)n, sizeof *dst))) {
                st = tn_error(TN_ERR_NO_MEMORY, "vmap: out of memory");
                break;
            }
            lists[nlists++] = dst;
            ma[k].u.tlist.data = dst;
        }
        for (int64_t j = 0; j < n && st == TN_OK; j++) {
            const tn_tensor *t = src[j];
            if (!t) { dst[j] = NULL; continue; }
            if (t->batch && t->batch->level != level)
                st = tn_error(TN_ERR_NOT_IMPLEMENTED, "vmap over a batch of size 0 nested in another vmap (%s) is not "
                                                      "implemented by torchnative", op_label(op, lbl, sizeof lbl));
            else if (!(dst[j] = owned[nowned++] = tn_tensor_meta_like(t))) /* t's logical geometry */
                st = tn_error(TN_ERR_NO_MEMORY, "vmap: out of memory");
            else if (!t->batch) dev = tn_tensor_device(t);
        }
    }
    if (st == TN_OK) st = tn_dispatch(op, ma, mr);
    if (st == TN_OK) {
        int r = 0;
        for (; r < nrets && st == TN_OK; r++) {
            if (s->kind == TN_OP_KIND_INPLACE && r == 0) {
                tn_tensor_retain(args[0].u.t);
                rets[0] = tn_value_tensor(args[0].u.t);
            } else if (s->kind == TN_OP_KIND_OUT && r < s->nout) {
                tn_tensor *o = args[s->nargs - s->nout + r].u.t;
                tn_tensor_retain(o);
                rets[r] = tn_value_tensor(o);
            } else if (mr[r].tag == TN_V_TENSOR) {
                tn_tensor *t;
                if ((st = empty_result(mr[r].u.t, dev, level, &t)) == TN_OK) rets[r] = tn_value_tensor(t);
            } else if (mr[r].tag == TN_V_TENSORLIST) {
                int64_t n = mr[r].u.tlist.n;
                tn_tensor **l = calloc((size_t)(n ? n : 1), sizeof *l);
                if (!l) st = tn_error(TN_ERR_NO_MEMORY, "vmap: out of memory");
                for (int64_t j = 0; j < n && st == TN_OK; j++) st = empty_result(mr[r].u.tlist.data[j], dev, level, &l[j]);
                if (st == TN_OK) rets[r] = tn_value_tensorlist(l, n);
                else if (l) tn_tensorlist_discard(l, n);
            } else if (mr[r].tag == TN_V_NONE) {
                rets[r] = mr[r];
            } else {
                st = tn_error(TN_ERR_RUNTIME, "vmap: %s returns a number, which cannot be batched",
                              op_label(op, lbl, sizeof lbl));
            }
        }
        if (st != TN_OK)
            for (int k = 0; k < r - 1; k++) tn_value_release(&rets[k]);
        for (int k = 0; k < nrets; k++) tn_value_release(&mr[k]);
    }
    for (int k = 0; k < nowned; k++) tn_tensor_release(owned[k]);
    for (int k = 0; k < nlists; k++) free(lists[k]);
    free(ma), free(mr), free(owned), free(lists);
    return st;
}

/* Upstream's `pointwise` operators in one call on the values: each argument batched at
 * `level` with its batch dimension first and size-1 dimensions after it up to the logical
 * rank of the call (right-aligned broadcasting then pairs the elements), the result batched
 * at dimension 0. Not taken (false) for tensor lists, several results, and a batched
 * argument of logical rank 0 (its value's dimension would change type promotion and
 * arguments upstream requires 0-dim). */
static bool pointwise_rule(tn_op_id op, const tn_value *args, int64_t level, tn_value *rets, tn_status *st) {
    const tn_op_schema *s = &tn_op_schemas[op];
    if (s->nrets != 1 || (s->kind != TN_OP_KIND_FUNCTIONAL && s->kind != TN_OP_KIND_INPLACE)) return false;
    int nargs = s->nargs, rank = 0;
    for (int k = 0; k < nargs; k++) {
        if (args[k].tag == TN_V_TENSORLIST) return false;
        if (args[k].tag != TN_V_TENSOR || !args[k].u.t) continue;
        const tn_tensor *t = args[k].u.t;
        if (t->batch && t->batch->level == level && t->ndim == 0) return false;
        if (t->ndim > rank) rank = t->ndim;
    }
    if (rank + 1 > TN_MAX_DIMS) return false;
    tn_value pa[64];
    tn_tensor *owned[64];
    int nowned = 0;
    if (nargs > 64) return false;
    *st = TN_OK;
    for (int k = 0; k < nargs && *st == TN_OK; k++) {
        pa[k] = args[k];
        if (value_level(&args[k]) != level) continue;
        const tn_tensor *t = args[k].u.t;
        tn_tensor *v;
        *st = movedim(t->batch->value, t->batch->bdim, 0, &v);
        for (int d = t->ndim; d < rank && *st == TN_OK; d++) {
            tn_value a[2] = {tn_value_tensor(v), tn_value_int(1)};
            tn_tensor *u;
            *st = tn_dispatch_one(TN_OP_unsqueeze, a, &u);
            tn_tensor_release(v);
            v = *st == TN_OK ? u : NULL;
        }
        if (*st == TN_OK) pa[k].u.t = owned[nowned++] = v;
    }
    tn_value r[1];
    if (*st == TN_OK) *st = tn_dispatch(op, pa, r);
    for (int k = 0; k < nowned; k++) tn_tensor_release(owned[k]);
    if (*st != TN_OK) return true;
    if (s->kind == TN_OP_KIND_INPLACE) { /* written through self's value */
        tn_value_release(&r[0]);
        tn_tensor_retain(args[0].u.t);
        rets[0] = tn_value_tensor(args[0].u.t);
        return true;
    }
    tn_tensor *t;
    if ((*st = wrap0(r[0].u.t, level, &t)) == TN_OK) rets[0] = tn_value_tensor(t);
    return true;
}

tn_status tn_vmap_dispatch(tn_op_id op, const tn_value *args, tn_value *rets) {
    const tn_op_schema *s = &tn_op_schemas[op];
    char lbl[160];
    int64_t level = call_level(op, args);
    if (level > tl.depth)
        return tn_error(TN_ERR_RUNTIME, "vmap: %s was called with a tensor batched at level %lld outside that vmap (a "
                                        "batched tensor escaped its vmapped function)",
                        op_label(op, lbl, sizeof lbl), (long long)level);
    if (tl.depth && op_is_random(op, args)) {
        int mode = tl.random[tl.depth - 1];
        if (mode == TN_VMAP_RANDOM_ERROR)
            return tn_error(TN_ERR_RUNTIME, "vmap: called random operation while in randomness error mode. Please either "
                                            "use the 'same' or 'different' randomness flags on vmap or perform the "
                                            "randomness operation out of vmap");
        if (mode == TN_VMAP_RANDOM_SAME)
            return tn_error(TN_ERR_NOT_IMPLEMENTED, "vmap(randomness='same') of %s with a batched argument is not "
                                                    "implemented by torchnative", op_label(op, lbl, sizeof lbl));
        if (!level) level = tl.depth; /* "different": a batch of independent draws */
    }
    TN_TRY(check_mutation(op, args, level));
    int64_t B = tl.size[level - 1];
    if (B == 0) return empty_batch(op, args, level, rets);
    tn_status pst;
    if (tn_op_schemas[op].pointwise && !op_is_random(op, args) && pointwise_rule(op, args, level, rets, &pst)) return pst;
    int nargs = s->nargs, nrets = s->nrets, ntens = 0;
    for (int k = 0; k < nargs; k++)
        ntens += args[k].tag == TN_V_TENSOR ? 1 : args[k].tag == TN_V_TENSORLIST ? (int)args[k].u.tlist.n : 0;
    tn_value *ai = calloc((size_t)nargs + 1, sizeof *ai);
    tn_value *all = calloc((size_t)(B * (nrets ? nrets : 1)), sizeof *all);
    tn_value *parts = calloc((size_t)ntens + 1, sizeof *parts);
    tn_tensor ***lists = calloc((size_t)nargs + 1, sizeof *lists);
    if (!ai || !all || !parts || !lists) {
        free(ai), free(all), free(parts), free(lists);
        return tn_error(TN_ERR_NO_MEMORY, "vmap: out of memory");
    }
    int nparts = 0;
    tn_status st = unbind_all(op, args, level, parts, &nparts);
    int64_t done = 0;
    tl.in_loop++;
    for (int64_t i = 0; i < B && st == TN_OK; i++) {
        int nlists = 0;
        st = slice_args(op, args, level, i, ai, parts, lists, &nlists);
        if (st == TN_OK) st = tn_dispatch(op, ai, &all[i * nrets]);
        if (st == TN_OK) done++;
        for (int k = 0; k < nlists; k++) free(lists[k]);
    }
    tl.in_loop--;
    for (int k = 0; k < nparts; k++) tn_value_release(&parts[k]);
    if (st == TN_OK) {
        int r = 0;
        for (; r < nrets && st == TN_OK; r++) {
            if (s->kind == TN_OP_KIND_INPLACE && r == 0) {
                tn_tensor_retain(args[0].u.t); /* in-place: self, written through its elements */
                rets[0] = tn_value_tensor(args[0].u.t);
            } else if (s->kind == TN_OP_KIND_OUT && r < s->nout) {
                tn_tensor *o = args[s->nargs - s->nout + r].u.t;
                tn_tensor_retain(o);
                rets[r] = tn_value_tensor(o);
            } else {
                st = combine(op, args, level, r, all, nrets, B, &rets[r]);
            }
        }
        if (st != TN_OK)
            for (int k = 0; k < r - 1; k++) tn_value_release(&rets[k]); /* result r - 1 failed */
    }
    for (int64_t i = 0; i < done; i++)
        for (int r = 0; r < nrets; r++) tn_value_release(&all[i * nrets + r]);
    free(ai), free(all), free(parts), free(lists);
    return st;
}
