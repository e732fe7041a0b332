/* node.c — graph nodes, saved tensors, the tensor's autograd record and grad mode. */
#include "autograd/autograd.h"
#include "ops/vmap.h"
#include "autograd/views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tn_autograd_callbacks tn_autograd_cb;

/* ---- grad mode (per thread, as upstream's GradMode / InferenceMode) ------------------ */
static _Thread_local bool grad_disabled;
static _Thread_local bool inference_mode;

bool tn_grad_mode_enabled(void) { return !grad_disabled; }
void tn_grad_mode_set(bool enabled) { grad_disabled = !enabled; }
bool tn_inference_mode_enabled(void) { return inference_mode; }
void tn_inference_mode_set(bool enabled) { inference_mode = enabled; }

static _Atomic uint64_t seq_counter;
uint64_t tn_autograd_next_seq(void) { return atomic_fetch_add(&seq_counter, 1); }

void tn_geom_of(const tn_tensor *t, tn_geom *g) {
    g->ndim = t->ndim;
    g->dtype = t->dtype;
    g->device = tn_tensor_device(t);
    memcpy(g->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(g->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    g->offset = t->offset;
}

/* ---- the tensor's record ------------------------------------------------------------- */

static void meta_free(tn_tensor *t) {
    tn_autograd_meta *m = t->autograd;
    t->autograd = NULL;
    if (m->grad_fn) {
        tn_node *fn = m->grad_fn;
        if (fn->retain && m->output_nr < fn->num_inputs && fn->retain[m->output_nr] == t)
            fn->retain[m->output_nr] = NULL;
        tn_node_release(fn);
    }
    if (m->grad_accumulator && m->grad_accumulator->variable == t) m->grad_accumulator->variable = NULL;
    tn_tensor_release(m->grad);
    tn_tensor_release(m->view_base);
    for (tn_acc_hook *h = m->c_hooks, *nx; h; h = nx) { nx = h->next; free(h); }
    tn_fw_free_list(m->fw);
    if (tn_autograd_cb.free_meta_py && (m->py_hooks || m->py_post_acc_hooks)) tn_autograd_cb.free_meta_py(m);
    free(m);
}

void tn_autograd_init(void) { tn_tensor_autograd_free = meta_free; }

tn_status tn_autograd_add_acc_hook(tn_tensor *leaf, tn_acc_hook_fn fn, void *ctx, int64_t key) {
    tn_autograd_meta *m = tn_autograd_meta_get(leaf);
    tn_acc_hook *h = m ? calloc(1, sizeof *h) : NULL;
    if (!h) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    h->fn = fn;
    h->ctx = ctx;
    h->key = key;
    tn_acc_hook **p = &m->c_hooks;
    while (*p) p = &(*p)->next;
    *p = h;
    return TN_OK;
}

void tn_autograd_remove_acc_hooks(tn_tensor *leaf, void *ctx) {
    tn_autograd_meta *m = tn_autograd_meta_peek(leaf);
    if (!m) return;
    for (tn_acc_hook **p = &m->c_hooks; *p;) {
        tn_acc_hook *h = *p;
        if (h->ctx == ctx) { *p = h->next; free(h); }
        else p = &h->next;
    }
}

tn_autograd_meta *tn_autograd_meta_get(tn_tensor *t) {
    if (!t->autograd) {
        /* the core frees records through this hook: installed by the first record, so C
         * users of the door that never call tn_autograd_init (unit tests) free them too */
        if (!tn_tensor_autograd_free) tn_tensor_autograd_free = meta_free;
        t->autograd = calloc(1, sizeof(tn_autograd_meta));
    }
    return t->autograd;
}

tn_status tn_autograd_edge(tn_tensor *t, tn_edge *out) {
    out->fn = NULL;
    out->input_nr = 0;
    if (!tn_requires_grad(t)) return TN_OK;
    tn_autograd_meta *m = tn_autograd_meta_get(t);
    if (!m) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    if (m->grad_fn) {
        if (m->view_base && atomic_load(&t->storage->version) != m->hist_version)
            return tn_error(TN_ERR_NOT_IMPLEMENTED,
                            "using a view whose base was modified in place since the view was taken (upstream "
                            "regenerates the view's grad_fn) is not implemented by torchnative");
        out->fn = m->grad_fn;
        out->input_nr = m->output_nr;
        return TN_OK;
    }
    if (!m->grad_accumulator) {
        tn_node *acc = tn_node_new(TN_NODE_ACCUMULATE, "AccumulateGrad", 1, 0);
        if (!acc) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        acc->seq_nr = UINT64_MAX; /* upstream: accumulation runs as soon as it is ready */
        tn_geom_of(t, &acc->in_meta[0]);
        tn_tensor_retain(t);
        acc->variable = t;
        m->grad_accumulator = acc; /* borrowed: whoever takes the edge retains it */
        /* Nobody holds acc yet: the caller's edge retains it; until then it is kept alive
         * by this extra reference, dropped by tn_node_release when the count reaches it. */
        out->fn = acc;
        return TN_OK;
    }
    out->fn = m->grad_accumulator;
    return TN_OK;
}

void tn_autograd_set_history(tn_tensor *t, tn_node *fn, int nr) {
    tn_autograd_meta *m = tn_autograd_meta_get(t);
    if (!m) return;
    tn_node_retain(fn);
    if (m->grad_fn) tn_node_release(m->grad_fn);
    m->grad_fn = fn;
    m->output_nr = nr;
    m->func_grad = tn_func_grad_depth() > 0;
    t->flags |= TN_TENSOR_REQUIRES_GRAD;
}

void tn_autograd_detach_inplace(tn_tensor *t) {
    tn_autograd_meta *m = tn_autograd_meta_peek(t);
    t->flags &= ~TN_TENSOR_REQUIRES_GRAD;
    if (!m) return;
    if (m->grad_fn) { tn_node_release(m->grad_fn); m->grad_fn = NULL; }
    if (m->view_base) { tn_tensor_release(m->view_base); m->view_base = NULL; }
    m->output_nr = 0;
}

/* ---- nodes --------------------------------------------------------------------------- */

tn_node *tn_node_new(tn_node_kind kind, const char *name, int num_inputs, int num_next) {
    tn_node *n = calloc(1, sizeof(tn_node));
    if (!n) return NULL;
    atomic_init(&n->refcount, 0);
    n->kind = kind;
    n->name = name;
    n->num_inputs = num_inputs;
    n->num_next = num_next;
    n->seq_nr = tn_autograd_next_seq();
    n->next = num_next ? calloc((size_t)num_next, sizeof(tn_edge)) : NULL;
    n->in_meta = num_inputs ? calloc((size_t)num_inputs, sizeof(tn_geom)) : NULL;
    if ((num_next && !n->next) || (num_inputs && !n->in_meta)) {
        free(n->next);
        free(n->in_meta);
        free(n);
        return NULL;
    }
    return n;
}

void tn_node_retain(tn_node *n) { atomic_fetch_add(&n->refcount, 1); }

static void saved_clear(tn_saved *s) {
    tn_tensor_release(s->t);
    s->t = NULL;
    if (s->packed && tn_autograd_cb.free_packed) tn_autograd_cb.free_packed(s->packed);
    s->packed = NULL;
}

void tn_node_release_saved(tn_node *n) {
    for (int i = 0; n->saved_args && i < n->nargs; i++) saved_clear(&n->saved_args[i]);
    for (int i = 0; n->saved_res && i < n->nres; i++) saved_clear(&n->saved_res[i]);
    n->released = true;
}

static void free_values(tn_value *v, int n) {
    for (int i = 0; i < n; i++) {
        switch (v[i].tag) {
        case TN_V_INTLIST: free((void *)v[i].u.ilist.data); break;
        case TN_V_DOUBLELIST: free((void *)v[i].u.dlist.data); break;
        case TN_V_BOOLLIST: free((void *)v[i].u.blist.data); break;
        case TN_V_STRING: free((void *)v[i].u.s.data); break;
        case TN_V_SCALARLIST: free((void *)v[i].u.slist.data); break;
        case TN_V_TENSORLIST: {
            for (int64_t k = 0; k < v[i].u.tlist.n; k++) tn_tensor_release(v[i].u.tlist.data[k]);
            free((void *)v[i].u.tlist.data);
            break;
        }
        default: break;
        }
    }
    free(v);
}

/* Nodes are released iteratively: a long chain (an RNN, a 1,000-step loss) must not
 * recurse once per node. */
void tn_node_release(tn_node *n) {
    tn_node *stack_small[64], **stack = stack_small;
    int sp = 0, cap = 64;
    if (!n) return;
    if (atomic_fetch_sub(&n->refcount, 1) != 1) return;
    stack[sp++] = n;
    while (sp) {
        tn_node *x = stack[--sp];
        if (x->py_hooks && tn_autograd_cb.free_node_py) tn_autograd_cb.free_node_py(x);
        for (int i = 0; i < x->num_next; i++) {
            tn_node *c = x->next[i].fn;
            if (!c) continue;
            if (atomic_fetch_sub(&c->refcount, 1) != 1) continue;
            if (sp == cap) {
                tn_node **bigger = malloc(sizeof(tn_node *) * (size_t)cap * 2);
                if (!bigger) continue; /* leak rather than crash */
                memcpy(bigger, stack, sizeof(tn_node *) * (size_t)sp);
                if (stack != stack_small) free(stack);
                stack = bigger;
                cap *= 2;
            }
            stack[sp++] = c;
        }
        tn_node_release_saved(x);
        if (x->kind == TN_NODE_COPY_SLICES || x->kind == TN_NODE_AS_STRIDED) tn_autograd_free_view_extra(x);
        if (x->args) free_values(x->args, x->nargs);
        if (x->variable) {
            tn_autograd_meta *m = tn_autograd_meta_peek(x->variable);
            if (m && m->grad_accumulator == x) m->grad_accumulator = NULL;
            tn_tensor_release(x->variable);
        }
        free(x->saved_args);
        free(x->saved_res);
        free(x->arg_geom);
        free(x->arg_edge);
        free(x->arg_count);
        free(x->retain);
        free(x->extra);
        free(x->msg);
        free(x->next);
        free(x->in_meta);
        free(x);
    }
    if (stack != stack_small) free(stack);
}

/* ---- saved tensors ------------------------------------------------------------------- */

tn_status tn_saved_set(tn_saved *s, tn_tensor *t, int output_nr) {
    s->output_nr = (int16_t)output_nr;
    s->version = atomic_load(&t->storage->version);
    s->was_leaf_rg = tn_requires_grad(t) && tn_is_leaf(t);
    if (output_nr >= 0) {
        /* A result saved by its own node: keep the data without the record. */
        s->t = tn_tensor_alias(t);
        if (!s->t) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    } else {
        tn_tensor_retain(t);
        s->t = t;
    }
    /* as upstream, a wrapped number (a Python scalar made a 0-dim tensor) is never shown
     * to a pack hook */
    if (tn_autograd_cb.pack_saved && !(t->flags & TN_TENSOR_WRAPPED_NUMBER)) {
        void *p = NULL;
        tn_status st = tn_autograd_cb.pack_saved(s->t, &p);
        if (st != TN_OK) { tn_tensor_release(s->t); s->t = NULL; return st; }
        if (p) { tn_tensor_release(s->t); s->t = NULL; s->packed = p; }
    }
    return TN_OK;
}

static const char *legacy_name(tn_dtype d) { return tn_dtype_infos[d].c10_name; }

tn_status tn_saved_unpack(tn_node *n, const tn_saved *s, tn_tensor **out) {
    *out = NULL;
    if (s->packed) {
        /* saved-tensor hooks own the value now; upstream checks no version then */
        tn_tensor *t;
        TN_TRY(tn_autograd_cb.unpack_saved(s->packed, &t));
        if (s->output_nr >= 0 && tn_grad_mode_enabled() && tn_dtype_is_floating(t->dtype) && tn_is_leaf(t)) {
            tn_tensor *a = tn_tensor_alias(t);
            tn_tensor_release(t);
            if (!a) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
            tn_autograd_set_history(a, n, s->output_nr);
            t = a;
        }
        *out = t;
        return TN_OK;
    }
    if (!s->t) {
        if (n->released)
            return tn_error(TN_ERR_RUNTIME,
                            "Trying to backward through the graph a second time (or directly access saved "
                            "tensors after they have already been freed). Saved intermediate values of the graph "
                            "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
                            "you need to backward through the graph a second time or if you need to access saved "
                            "tensors after calling backward.");
        return TN_OK;
    }
    int64_t v = atomic_load(&s->t->storage->version);
    if (v != s->version) {
        char sz[160];
        tn_format_sizes(s->t->ndim, s->t->sizes, sz, sizeof sz);
        /* "[torch.FloatTensor [3]]" as upstream prints the tensor type and sizes. */
        char shape[170];
        snprintf(shape, sizeof shape, "%s", sz);
        if (s->output_nr >= 0)
            return tn_error(TN_ERR_RUNTIME,
                            "one of the variables needed for gradient computation has been modified by an "
                            "inplace operation: [torch.%sTensor %s], which is output %d of %s, is at version %lld; "
                            "expected version %lld instead. Hint: enable anomaly detection to find the "
                            "operation that failed to compute its gradient, with "
                            "torch.autograd.set_detect_anomaly(True).",
                            legacy_name(s->t->dtype), shape, s->output_nr, n->name, (long long)v,
                            (long long)s->version);
        return tn_error(TN_ERR_RUNTIME,
                        "one of the variables needed for gradient computation has been modified by an inplace "
                        "operation: [torch.%sTensor %s] is at version %lld; expected version %lld instead. Hint: "
                        "enable anomaly detection to find the operation that failed to compute its gradient, "
                        "with torch.autograd.set_detect_anomaly(True).",
                        legacy_name(s->t->dtype), shape, (long long)v, (long long)s->version);
    }
    if (s->output_nr >= 0 && tn_grad_mode_enabled() && tn_dtype_is_floating(s->t->dtype)) {
        /* create_graph: the saved result is this node's output again. */
        tn_tensor *a = tn_tensor_alias(s->t);
        if (!a) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        tn_autograd_set_history(a, n, s->output_nr);
        tn_status st = tn_fw_copy(a, s->t); /* its tangents too (forward over reverse) */
        if (st != TN_OK) { tn_tensor_release(a); return st; }
        *out = a;
        return TN_OK;
    }
    tn_tensor_retain(s->t);
    *out = s->t;
    return TN_OK;
}

/* ---- graph reachability (functorch's grad levels, src/python/functorch.c) ------------- */

static bool among(const tn_tensor *t, tn_tensor *const *set, int n) {
    for (int i = 0; i < n; i++)
        if (set[i] == t) return true;
    return false;
}

bool tn_autograd_reaches_other_leaf(const tn_tensor *t, tn_tensor *const *leaves, int nleaves) {
    if (!tn_requires_grad(t)) return false;
    tn_node *root = tn_grad_fn(t);
    if (!root) return !among(t, leaves, nleaves);
    /* depth-first over the nodes, each once (an open-addressed set of node pointers) */
    size_t cap = 64, nseen = 0, nstack = 0, stack_cap = 64;
    tn_node **seen = calloc(cap, sizeof *seen), **stack = malloc(stack_cap * sizeof *stack);
    bool found = false;
    if (!seen || !stack) { free(seen), free(stack); return true; } /* out of memory: keep the graph */
    stack[nstack++] = root;
    while (nstack && !found) {
        tn_node *n = stack[--nstack];
        size_t h = ((uintptr_t)n >> 4) & (cap - 1);
        while (seen[h] && seen[h] != n) h = (h + 1) & (cap - 1);
        if (seen[h]) continue;
        seen[h] = n;
        if (++nseen * 2 > cap) { /* grow and rehash */
            tn_node **bigger = calloc(cap * 2, sizeof *bigger);
            if (!bigger) { found = true; break; }
            for (size_t i = 0; i < cap; i++)
                if (seen[i]) {
                    size_t k = ((uintptr_t)seen[i] >> 4) & (cap * 2 - 1);
                    while (bigger[k]) k = (k + 1) & (cap * 2 - 1);
                    bigger[k] = seen[i];
                }
            free(seen);
            seen = bigger, cap *= 2;
        }
        if (n->kind == TN_NODE_ACCUMULATE) {
            if (n->variable && !among(n->variable, leaves, nleaves)) found = true;
            continue;
        }
        for (int i = 0; i < n->num_next; i++) {
            if (!n->next[i].fn) continue;
            if (nstack == stack_cap) {
                tn_node **s2 = realloc(stack, stack_cap * 2 * sizeof *s2);
                if (!s2) { found = true; break; }
                stack = s2, stack_cap *= 2;
            }
            stack[nstack++] = n->next[i].fn;
        }
    }
    free(seen), free(stack);
    return found;
}
