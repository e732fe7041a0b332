/* engine.c — runs a backward pass: discovers the graph from the roots, counts
 * dependencies, and executes nodes from a ready queue ordered as upstream's engine orders
 * it (highest sequence number first, so AccumulateGrad — sequence UINT64_MAX — runs as soon
 * as it is ready), validating each gradient against the metadata of the input it flows to.
 * Everything runs on the calling thread (upstream runs CPU work on the caller too). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "autograd/formulas.h"
#include "autograd/views.h"

/* ---- the node profile (tn_autograd_profile_*, autograd.h) ---------------------------- */
enum { PROF_MAX = 512 };
static struct { char name[64]; int64_t calls, ns; } prof[PROF_MAX];
static int prof_n;
static atomic_bool prof_on;
static pthread_mutex_t prof_mu = PTHREAD_MUTEX_INITIALIZER;

void tn_autograd_profile_enable(bool on) { atomic_store(&prof_on, on); }

void tn_autograd_profile_reset(void) {
    pthread_mutex_lock(&prof_mu);
    prof_n = 0;
    pthread_mutex_unlock(&prof_mu);
}

int tn_autograd_profile_get(int max, tn_autograd_profile_row *rows) {
    pthread_mutex_lock(&prof_mu);
    int n = prof_n < max ? prof_n : max;
    for (int i = 0; i < n; i++) {
        memcpy(rows[i].name, prof[i].name, sizeof rows[i].name);
        rows[i].calls = prof[i].calls;
        rows[i].ns = prof[i].ns;
    }
    pthread_mutex_unlock(&prof_mu);
    return n;
}

static int64_t prof_clock(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Adds one application of a node named `name` (names past the table's end are dropped). */
static void prof_add(const char *name, int64_t ns) {
    pthread_mutex_lock(&prof_mu);
    int i = 0;
    while (i < prof_n && strncmp(prof[i].name, name, sizeof prof[i].name - 1)) i++;
    if (i == prof_n && prof_n < PROF_MAX) {
        snprintf(prof[i].name, sizeof prof[i].name, "%s", name);
        prof[i].calls = prof[i].ns = 0;
        prof_n++;
    }
    if (i < prof_n) prof[i].calls++, prof[i].ns += ns;
    pthread_mutex_unlock(&prof_mu);
}

/* ---- per-task node table (open addressing on the node pointer) ----------------------- */
typedef struct entry {
    tn_node *node;
    int32_t deps;
    bool needed;      /* on a path to a requested input (always true without inputs) */
    bool queued;
    int32_t ncapture; /* captures at this node (grad(): inputs whose edge is here) */
    tn_tensor **buf;  /* [num_inputs] accumulated incoming gradients (owned) */
} entry;

typedef struct task {
    entry *tab;
    size_t cap, n;
    tn_node **order; /* discovery order */
    size_t norder, caporder;
    entry **heap;
    size_t nheap, capheap;
    const tn_backward_args *a;
    tn_edge *input_edges; /* [ninputs] */
} task;

static _Thread_local tn_node *current_node;
tn_node *tn_autograd_current_node(void) { return current_node; }

static size_t hash_ptr(const void *p) {
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static tn_status tab_grow(task *t) {
    size_t ncap = t->cap ? t->cap * 2 : 64;
    entry *nt = calloc(ncap, sizeof(entry));
    if (!nt) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->tab[i].node) continue;
        size_t h = hash_ptr(t->tab[i].node) & (ncap - 1);
        while (nt[h].node) h = (h + 1) & (ncap - 1);
        nt[h] = t->tab[i];
    }
    free(t->tab);
    t->tab = nt;
    t->cap = ncap;
    return TN_OK;
}

/* Entry of node, created when missing (*created set). */
static tn_status tab_get(task *t, tn_node *node, entry **out, bool *created) {
    if ((t->n + 1) * 2 > t->cap) TN_TRY(tab_grow(t));
    size_t h = hash_ptr(node) & (t->cap - 1);
    while (t->tab[h].node && t->tab[h].node != node) h = (h + 1) & (t->cap - 1);
    if (created) *created = !t->tab[h].node;
    if (!t->tab[h].node) {
        t->tab[h].node = node;
        t->tab[h].needed = true;
        t->n++;
    }
    *out = &t->tab[h];
    return TN_OK;
}

static entry *tab_find(task *t, tn_node *node) {
    if (!t->cap) return NULL;
    size_t h = hash_ptr(node) & (t->cap - 1);
    while (t->tab[h].node && t->tab[h].node != node) h = (h + 1) & (t->cap - 1);
    return t->tab[h].node ? &t->tab[h] : NULL;
}

static tn_status push_order(task *t, tn_node *n) {
    if (t->norder == t->caporder) {
        size_t nc = t->caporder ? t->caporder * 2 : 64;
        tn_node **o = realloc(t->order, nc * sizeof(tn_node *));
        if (!o) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        t->order = o;
        t->caporder = nc;
    }
    t->order[t->norder++] = n;
    return TN_OK;
}

/* Ready queue: max-heap on sequence number. */
static bool heap_before(const entry *a, const entry *b) { return a->node->seq_nr > b->node->seq_nr; }

static tn_status heap_push(task *t, entry *e) {
    if (t->nheap == t->capheap) {
        size_t nc = t->capheap ? t->capheap * 2 : 64;
        entry **h = realloc(t->heap, nc * sizeof(entry *));
        if (!h) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        t->heap = h;
        t->capheap = nc;
    }
    size_t i = t->nheap++;
    t->heap[i] = e;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!heap_before(t->heap[i], t->heap[p])) break;
        entry *x = t->heap[i];
        t->heap[i] = t->heap[p];
        t->heap[p] = x;
        i = p;
    }
    e->queued = true;
    return TN_OK;
}

static entry *heap_pop(task *t) {
    entry *top = t->heap[0];
    t->heap[0] = t->heap[--t->nheap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < t->nheap && heap_before(t->heap[l], t->heap[m])) m = l;
        if (r < t->nheap && heap_before(t->heap[r], t->heap[m])) m = r;
        if (m == i) break;
        entry *x = t->heap[i];
        t->heap[i] = t->heap[m];
        t->heap[m] = x;
        i = m;
    }
    return top;
}

static void task_free(task *t) {
    for (size_t i = 0; i < t->cap; i++) {
        entry *e = &t->tab[i];
        if (!e->node || !e->buf) continue;
        for (int k = 0; k < e->node->num_inputs; k++) tn_tensor_release(e->buf[k]);
        free(e->buf);
    }
    free(t->tab);
    free(t->order);
    free(t->heap);
}

/* ---- gradient arithmetic the engine itself needs ------------------------------------ */

static tn_status run1(tn_op_id op, int n, tn_value *args, tn_tensor **out) {
    tn_value r[4];
    TN_TRY(tn_dispatch(op, args, r));
    *out = r[0].u.t;
    return TN_OK;
}

static bool same_sizes(int nd, const int64_t *a, int nd2, const int64_t *b) {
    return nd == nd2 && memcmp(a, b, sizeof(int64_t) * (size_t)nd) == 0;
}

/* upstream's is_expandable_to(shape, desired). */
static bool expandable(int nd, const int64_t *shape, int nd2, const int64_t *desired) {
    if (nd > nd2) return false;
    for (int i = 0; i < nd; i++) {
        int64_t s = shape[nd - 1 - i], d = desired[nd2 - 1 - i];
        if (s != d && s != 1) return false;
    }
    return true;
}

static tn_status add_grads(tn_tensor *a, tn_tensor *b, tn_tensor **out) {
    tn_value v[3] = {tn_value_tensor(a), tn_value_tensor(b), tn_value_int(1)};
    return run1(TN_OP_add_Tensor, 3, v, out);
}

static void ctx_release(tn_grad_ctx *c) {
    for (int i = 0; i < c->nscope; i++) tn_tensor_release(c->scope[i]);
    free(c->scope);
}

/* upstream's validate_outputs: shape (summed to the input's when expandable), dtype.
 * Replaces *g. The reduction and the cast are the formulas' own helpers (ag_sum_to,
 * ag_cast), so under create_graph they are recorded like any formula operator. */
static tn_status validate(tn_node *n, int i, const tn_geom *m, tn_tensor **g) {
    tn_tensor *x = *g;
    if (m->ndim < 0) return TN_OK;
    bool reshape = !same_sizes(x->ndim, x->sizes, m->ndim, m->sizes);
    if (reshape && !expandable(m->ndim, m->sizes, x->ndim, x->sizes)) {
        char b1[160], b2[160];
        return tn_error(TN_ERR_RUNTIME,
                        "Function %s returned an invalid gradient at index %d - got %s but expected shape "
                        "compatible with %s", n->name, i, tn_format_sizes(x->ndim, x->sizes, b1, sizeof b1),
                        tn_format_sizes(m->ndim, m->sizes, b2, sizeof b2));
    }
    if (!reshape && x->dtype == m->dtype) return TN_OK;
    tn_grad_ctx c = {.node = n};
    tn_tensor *r = reshape ? ag_sum_to(&c, x, m->ndim, m->sizes) : x;
    /* a complex gradient of a real input: its real part (upstream's formulas take it,
     * handle_r_to_c, before this check; a plain cast would warn about the imaginary part) */
    if (tn_dtype_is_complex(r->dtype) && !tn_dtype_is_complex(m->dtype)) r = AG(&c, real, VT(r));
    r = ag_cast(&c, r, m->dtype);
    tn_status st = c.st;
    if (st == TN_OK) {
        tn_tensor_retain(r);
        tn_tensor_release(x);
        *g = r;
    }
    ctx_release(&c);
    return st;
}

/* ---- node application ---------------------------------------------------------------- */


static tn_status apply_op(tn_node *n, tn_tensor **grads, tn_tensor **out) {
    tn_grad_ctx c = {.node = n, .grads = grads, .out = out};
    tn_value *args = calloc((size_t)n->nargs + 1, sizeof(tn_value));
    tn_tensor **res = calloc((size_t)n->nres + 1, sizeof(tn_tensor *));
    tn_status st = TN_OK;
    if (!args || !res) { free(args); free(res); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    for (int i = 0; st == TN_OK && i < n->nargs; i++) {
        args[i] = n->args[i];
        if (n->args[i].tag == TN_V_TENSOR) {
            args[i].u.t = NULL;
            if (i < 32 && (n->saved_mask >> i) & 1u) st = tn_saved_unpack(n, &n->saved_args[i], &args[i].u.t);
        }
    }
    for (int k = 0; st == TN_OK && k < n->nres; k++)
        if (k < 32 && (n->formula->save_res >> k) & 1u) st = tn_saved_unpack(n, &n->saved_res[k], &res[k]);
    if (st == TN_OK) {
        c.args = args;
        c.res = res;
        n->formula->fn(&c);
        st = c.st;
    }
    for (int i = 0; i < n->nargs; i++)
        if (n->args[i].tag == TN_V_TENSOR) tn_tensor_release(args[i].u.t);
    for (int k = 0; k < n->nres; k++) tn_tensor_release(res[k]);
    ctx_release(&c);
    free(args);
    free(res);
    return st;
}

tn_status tn_autograd_apply_node(tn_node *n, tn_tensor **in, tn_tensor **out) {
    int ni = n->num_inputs;
    bool any = false;
    for (int k = 0; k < ni; k++) any |= in[k] != NULL;
    if (!any) return TN_OK;
    for (int k = 0; k < ni; k++)
        if (!in[k] && n->in_meta[k].ndim >= 0)
            TN_TRY(tn_tensor_zeros(n->in_meta[k].ndim, n->in_meta[k].sizes, n->in_meta[k].dtype, n->in_meta[k].device, &in[k]));
    if (n->kind == TN_NODE_ERROR)
        return tn_error(n->msg_upstream ? TN_ERR_RUNTIME : TN_ERR_NOT_IMPLEMENTED, "%s",
                        n->msg ? n->msg : "derivative not implemented by torchnative");
    return apply_op(n, in, out);
}

/* Accumulates g into the leaf's .grad. Takes ownership of the caller's reference to g (the
 * input buffer's, moved out), so a gradient nobody else holds has refcount 1 here and is
 * stolen rather than copied, as upstream's AccumulateGrad steals a use_count-1 gradient. */
static tn_status accumulate(tn_node *n, tn_tensor *g, bool create_graph) {
    tn_tensor *var = n->variable;
    if (!var) { tn_tensor_release(g); return TN_OK; }
    tn_autograd_meta *m = tn_autograd_meta_get(var);
    if (!m) { tn_tensor_release(g); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    if (m->py_hooks && tn_autograd_cb.leaf_hooks) {
        tn_status st = tn_autograd_cb.leaf_hooks(var, &g);
        if (st != TN_OK) { tn_tensor_release(g); return st; }
        if (!g) return TN_OK;
    }
    tn_status st = TN_OK;
    if (!m->grad) {
        /* Steal the buffer when nobody else sees it; otherwise keep a copy of our own. */
        if (atomic_load(&g->refcount) == 1 && !tn_grad_fn(g) && tn_tensor_is_contiguous(g) && !create_graph) {
            m->grad = g;
        } else if (create_graph) {
            m->grad = g;
        } else {
            tn_value a[2] = {tn_value_tensor(g), {.tag = TN_V_NONE}}, r;
            st = tn_dispatch(TN_OP_clone, a, &r);
            tn_tensor_release(g);
            if (st != TN_OK) return st;
            m->grad = r.u.t;
        }
    } else if (!create_graph) {
        tn_value a[3] = {tn_value_tensor(m->grad), tn_value_tensor(g), tn_value_int(1)}, r;
        st = tn_dispatch(TN_OP_add__Tensor, a, &r);
        if (st == TN_OK) tn_tensor_release(r.u.t);
        tn_tensor_release(g);
    } else {
        tn_tensor *sum;
        st = add_grads(m->grad, g, &sum);
        tn_tensor_release(g);
        if (st == TN_OK) { tn_tensor_release(m->grad); m->grad = sum; }
    }
    if (st == TN_OK && m->py_post_acc_hooks && tn_autograd_cb.post_acc_hooks) st = tn_autograd_cb.post_acc_hooks(var);
    return st;
}

/* The leaf's C hooks (tn_autograd_add_acc_hook), also when no gradient arrived. */
static tn_status run_acc_hooks(tn_node *n, bool has_grad) {
    tn_tensor *var = n->variable;
    tn_autograd_meta *m = var ? tn_autograd_meta_peek(var) : NULL;
    if (!m) return TN_OK;
    for (tn_acc_hook *h = m->c_hooks; h; h = h->next) TN_TRY(h->fn(h->ctx, h->key, var, has_grad));
    return TN_OK;
}

/* ---- final callbacks (Engine::queue_callback) ----------------------------------------- */
typedef struct final_cb {
    tn_final_callback fn;
    void *ctx;
    void (*free_ctx)(void *);
    struct final_cb *next;
} final_cb;

typedef struct cb_queue {
    final_cb *head, **tail;
} cb_queue;

/* The queue of the backward pass running on this thread (NULL outside one); a nested
 * backward (a hook calling backward) has its own and restores the outer one. */
static _Thread_local cb_queue *current_callbacks;

/* The id of the backward pass (graph task) running on this thread, -1 outside one; each
 * pass takes the next of a process-wide counter from 0, as upstream's GraphTask::id_.
 * torch.utils.checkpoint keys its recomputation on it: with a constant -1 every unpack of
 * a saved activation recomputed its whole region (a LoRA step with gradient checkpointing
 * took 12x upstream's time). */
static _Thread_local int64_t current_task_id = -1;
static _Atomic int64_t next_task_id;
int64_t tn_autograd_current_task_id(void) { return current_task_id; }

tn_status tn_autograd_queue_callback(tn_final_callback fn, void *ctx, void (*free_ctx)(void *)) {
    if (!current_callbacks) {
        if (free_ctx) free_ctx(ctx);
        return tn_error(TN_ERR_RUNTIME, "Final callbacks can only be installed during backward pass.");
    }
    final_cb *c = calloc(1, sizeof *c);
    if (!c) {
        if (free_ctx) free_ctx(ctx);
        return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    c->fn = fn;
    c->ctx = ctx;
    c->free_ctx = free_ctx;
    *current_callbacks->tail = c;
    current_callbacks->tail = &c->next;
    return TN_OK;
}

/* Runs (run = true) or drops the queued callbacks in order, including ones queued while
 * they run; the first failure drops the rest. */
static tn_status drain_callbacks(cb_queue *q, bool run) {
    tn_status st = TN_OK;
    while (q->head) {
        final_cb *c = q->head;
        q->head = c->next;
        if (!q->head) q->tail = &q->head;
        if (run && st == TN_OK) st = c->fn(c->ctx);
        if (c->free_ctx) c->free_ctx(c->ctx);
        free(c);
    }
    return st;
}

static tn_status make_root_grad(tn_tensor *root, tn_tensor *given, tn_tensor **out) {
    if (given) {
        tn_tensor_retain(given);
        *out = given;
        return TN_OK;
    }
    if (tn_tensor_numel(root) != 1)
        return tn_error(TN_ERR_RUNTIME, "grad can be implicitly created only for scalar outputs");
    tn_value a[6] = {tn_value_tensor(root), {.tag = TN_V_NONE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE},
                     {.tag = TN_V_NONE}, {.tag = TN_V_NONE}};
    return run1(TN_OP_ones_like, 6, a, out);
}

static tn_status buf_add(entry *e, int k, tn_tensor *g) {
    if (!e->buf) {
        e->buf = calloc((size_t)e->node->num_inputs + 1, sizeof(tn_tensor *));
        if (!e->buf) { tn_tensor_release(g); return tn_error(TN_ERR_NO_MEMORY, "out of memory"); }
    }
    if (!e->buf[k]) { e->buf[k] = g; return TN_OK; }
    tn_tensor *s;
    tn_status st = add_grads(e->buf[k], g, &s);
    tn_tensor_release(g);
    if (st != TN_OK) return st;
    tn_tensor_release(e->buf[k]);
    e->buf[k] = s;
    return TN_OK;
}

/* Retained-grad tensors of n receive the gradient they are about to pass on. */
static tn_status retain_grads(tn_node *n, tn_tensor **g) {
    for (int k = 0; n->retain && k < n->num_inputs; k++) {
        tn_tensor *t = n->retain[k];
        if (!t || !g[k]) continue;
        tn_autograd_meta *m = tn_autograd_meta_get(t);
        if (!m) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
        if (!m->grad) {
            tn_value a[2] = {tn_value_tensor(g[k]), {.tag = TN_V_NONE}}, r;
            TN_TRY(tn_dispatch(TN_OP_clone, a, &r));
            m->grad = r.u.t;
        } else {
            tn_tensor *s;
            TN_TRY(add_grads(m->grad, g[k], &s));
            tn_tensor_release(m->grad);
            m->grad = s;
        }
    }
    return TN_OK;
}

static tn_status execute(task *t, entry *e) {
    const tn_backward_args *a = t->a;
    tn_node *n = e->node;
    int ni = n->num_inputs, nn = n->num_next;
    tn_tensor **in = e->buf;
    tn_status st = TN_OK;
    if (!in) {
        in = e->buf = calloc((size_t)ni + 1, sizeof(tn_tensor *));
        if (!in) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    }
    if (n->py_hooks && tn_autograd_cb.pre_hooks) TN_TRY(tn_autograd_cb.pre_hooks(n, in));
    TN_TRY(retain_grads(n, in));
    /* grad(): capture what flows into a requested input's edge; backward(inputs=) with a
     * non-leaf input: accumulate into its .grad. */
    for (int i = 0; e->ncapture && i < a->ninputs; i++) {
        tn_tensor *g = t->input_edges[i].fn == n ? in[t->input_edges[i].input_nr] : NULL;
        if (!g) continue;
        if (!a->accumulate) {
            if (!a->results[i]) { tn_tensor_retain(g); a->results[i] = g; }
        } else if (n->kind != TN_NODE_ACCUMULATE) {
            tn_autograd_meta *m = tn_autograd_meta_get(a->inputs[i]);
            if (!m) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
            if (!m->grad) {
                tn_value v[2] = {tn_value_tensor(g), {.tag = TN_V_NONE}}, r;
                TN_TRY(tn_dispatch(TN_OP_clone, v, &r));
                m->grad = r.u.t;
            } else {
                tn_tensor *s2;
                TN_TRY(add_grads(m->grad, g, &s2));
                tn_tensor_release(m->grad);
                m->grad = s2;
            }
        }
    }
    if (n->kind == TN_NODE_ACCUMULATE) {
        if (!a->accumulate) return TN_OK;
        int64_t ta = atomic_load_explicit(&prof_on, memory_order_relaxed) ? prof_clock() : 0;
        tn_tensor *g = in[0]; /* moved into accumulate(), which may steal it */
        in[0] = NULL;
        if (g) TN_TRY(accumulate(n, g, a->create_graph));
        st = run_acc_hooks(n, g != NULL);
        if (ta) prof_add(n->name ? n->name : "?", prof_clock() - ta);
        return st;
    }
    if (e->ncapture) {
        /* Nothing below a captured edge is needed unless another input lies below it. */
        bool below = false;
        for (int i = 0; i < nn && !below; i++) {
            entry *c = n->next[i].fn ? tab_find(t, n->next[i].fn) : NULL;
            below = c && c->needed;
        }
        if (!below) return TN_OK;
    }
    tn_tensor **out = calloc((size_t)nn + 1, sizeof(tn_tensor *));
    if (!out) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_node *prev = current_node;
    current_node = n;
    int64_t t0 = atomic_load_explicit(&prof_on, memory_order_relaxed) ? prof_clock() : 0;
    switch (n->kind) {
    case TN_NODE_OP:
        st = tn_autograd_apply_node(n, in, out);
        break;
    case TN_NODE_PYTHON:
        st = tn_autograd_cb.apply_python ? tn_autograd_cb.apply_python(n, in, out)
                                         : tn_error(TN_ERR_RUNTIME, "no Python callback for %s", n->name);
        break;
    case TN_NODE_COPY_SLICES:
        st = tn_autograd_apply_copy_slices(n, in, out, a->keep_graph);
        break;
    case TN_NODE_AS_STRIDED:
        st = tn_autograd_apply_as_strided(n, in, out);
        break;
    case TN_NODE_IDENTITY:
        for (int k = 0; k < nn && k < ni; k++) {
            out[k] = in[k];
            if (out[k]) tn_tensor_retain(out[k]);
        }
        break;
    case TN_NODE_ERROR:
        st = tn_error(n->msg_upstream ? TN_ERR_RUNTIME : TN_ERR_NOT_IMPLEMENTED, "%s",
                      n->msg ? n->msg : "derivative not implemented by torchnative");
        break;
    default: break;
    }
    if (t0) prof_add(n->name ? n->name : "?", prof_clock() - t0);
    current_node = prev;
    if (st == TN_OK && n->py_hooks && tn_autograd_cb.post_hooks) st = tn_autograd_cb.post_hooks(n, out, in);
    if (!a->keep_graph && n->kind == TN_NODE_OP) tn_node_release_saved(n);
    for (int i = 0; i < nn && st == TN_OK; i++) {
        tn_edge *ed = &n->next[i];
        if (!out[i]) continue;
        if (!ed->fn) continue;
        entry *c = tab_find(t, ed->fn);
        if (!c || !c->needed) continue;
        st = validate(n, i, &ed->fn->in_meta[ed->input_nr], &out[i]);
        if (st != TN_OK) break;
        st = buf_add(c, ed->input_nr, out[i]);
        out[i] = NULL;
    }
    for (int i = 0; i < nn; i++) tn_tensor_release(out[i]);
    free(out);
    /* Free this node's incoming buffers now: large activations' gradients go early. */
    for (int k = 0; k < ni; k++) { tn_tensor_release(in[k]); in[k] = NULL; }
    return st;
}

tn_status tn_autograd_backward(tn_backward_args *a) {
    task t = {.a = a};
    tn_status st = TN_OK;
    bool prev_mode = tn_grad_mode_enabled();
    tn_tensor **root_grads = calloc((size_t)a->nroots + 1, sizeof(tn_tensor *));
    tn_edge *root_edges = calloc((size_t)a->nroots + 1, sizeof(tn_edge));
    if (!root_grads || !root_edges) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); goto done; }
    for (int i = 0; i < a->nroots && st == TN_OK; i++) {
        tn_tensor *r = a->roots[i];
        if (!tn_requires_grad(r)) {
            st = tn_error(TN_ERR_RUNTIME, "element %d of tensors does not require grad and does not have a grad_fn", i);
            break;
        }
        st = tn_autograd_edge(r, &root_edges[i]);
        if (st == TN_OK) tn_node_retain(root_edges[i].fn);
        tn_tensor *g = a->grad_roots ? a->grad_roots[i] : NULL;
        if (st == TN_OK && g && !same_sizes(g->ndim, g->sizes, r->ndim, r->sizes)) {
            char b1[160], b2[160];
            st = tn_error(TN_ERR_RUNTIME, "Mismatch in shape: grad_output[%d] has a shape of %s and output[%d] has a shape of %s.",
                          i, tn_format_sizes(g->ndim, g->sizes, b1, sizeof b1), i,
                          tn_format_sizes(r->ndim, r->sizes, b2, sizeof b2));
        }
        if (st == TN_OK) st = make_root_grad(r, g, &root_grads[i]);
    }
    if (st != TN_OK) goto done;
    if (a->ninputs) {
        t.input_edges = calloc((size_t)a->ninputs, sizeof(tn_edge));
        if (!t.input_edges) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); goto done; }
        for (int i = 0; i < a->ninputs && st == TN_OK; i++) {
            tn_tensor *x = a->inputs[i];
            if (!tn_requires_grad(x)) {
                st = tn_error(TN_ERR_RUNTIME, "One of the differentiated Tensors does not require grad");
                break;
            }
            st = tn_autograd_edge(x, &t.input_edges[i]);
            if (st == TN_OK) tn_node_retain(t.input_edges[i].fn);
        }
        if (st != TN_OK) goto done;
    }
    /* Discover the graph and count dependencies. */
    for (int i = 0; i < a->nroots && st == TN_OK; i++) {
        entry *e;
        bool created;
        st = tab_get(&t, root_edges[i].fn, &e, &created);
        if (st == TN_OK && created) st = push_order(&t, root_edges[i].fn);
    }
    for (size_t q = 0; q < t.norder && st == TN_OK; q++) {
        tn_node *n = t.order[q];
        for (int i = 0; i < n->num_next && st == TN_OK; i++) {
            tn_node *c = n->next[i].fn;
            if (!c) continue;
            entry *e;
            bool created;
            st = tab_get(&t, c, &e, &created);
            if (st == TN_OK && created) st = push_order(&t, c);
        }
    }
    if (st != TN_OK) goto done;
    if (a->ninputs) {
        /* needed = is a capture target or reaches one. Reverse discovery order is not a
         * topological order in general, so iterate to a fixed point (graphs are shallow in
         * this respect: one or two passes). */
        for (size_t q = 0; q < t.norder; q++) tab_find(&t, t.order[q])->needed = false;
        for (int i = 0; i < a->ninputs; i++) {
            entry *e = tab_find(&t, t.input_edges[i].fn);
            if (e) { e->needed = true; e->ncapture++; }
        }
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t q = t.norder; q-- > 0;) {
                tn_node *n = t.order[q];
                entry *e = tab_find(&t, n);
                if (e->needed) continue;
                for (int i = 0; i < n->num_next; i++) {
                    entry *c = n->next[i].fn ? tab_find(&t, n->next[i].fn) : NULL;
                    if (c && c->needed) { e->needed = true; changed = true; break; }
                }
            }
        }
    }
    for (size_t q = 0; q < t.norder; q++) {
        tn_node *n = t.order[q];
        entry *e = tab_find(&t, n);
        if (!e->needed) continue;
        for (int i = 0; i < n->num_next; i++) {
            entry *c = n->next[i].fn ? tab_find(&t, n->next[i].fn) : NULL;
            if (c && c->needed) c->deps++;
        }
    }
    for (int i = 0; i < a->nroots && st == TN_OK; i++) {
        entry *e = tab_find(&t, root_edges[i].fn);
        tn_tensor *g = root_grads[i];
        root_grads[i] = NULL;
        st = buf_add(e, root_edges[i].input_nr, g);
    }
    for (int i = 0; i < a->nroots && st == TN_OK; i++) {
        entry *e = tab_find(&t, root_edges[i].fn);
        if (e->needed && e->deps == 0 && !e->queued) st = heap_push(&t, e);
    }
    tn_grad_mode_set(a->create_graph);
    cb_queue callbacks = {NULL, &callbacks.head}, *outer_callbacks = current_callbacks;
    current_callbacks = &callbacks;
    int64_t outer_task_id = current_task_id;
    current_task_id = next_task_id++;
    while (st == TN_OK && t.nheap) {
        entry *e = heap_pop(&t);
        tn_node *n = e->node;
        st = execute(&t, e);
        for (int i = 0; st == TN_OK && i < n->num_next; i++) {
            entry *c = n->next[i].fn ? tab_find(&t, n->next[i].fn) : NULL;
            if (!c || !c->needed) continue;
            if (--c->deps == 0 && !c->queued) st = heap_push(&t, c);
        }
    }
    /* upstream runs final callbacks once the graph task's nodes are done, only on success */
    if (st == TN_OK) st = drain_callbacks(&callbacks, true);
    drain_callbacks(&callbacks, false);
    current_callbacks = outer_callbacks;
    current_task_id = outer_task_id;
    tn_grad_mode_set(prev_mode);
    if (st == TN_OK && a->ninputs && !a->accumulate && !a->allow_unused)
        for (int i = 0; i < a->ninputs; i++)
            if (!a->results[i]) {
                st = tn_error(TN_ERR_RUNTIME, "The differentiated Tensor at index %d appears to not have been used "
                                              "in the graph. Set allow_unused=True if this is the desired behavior.", i);
                break;
            }
done:
    tn_grad_mode_set(prev_mode);
    if (st != TN_OK && a->results)
        for (int i = 0; i < a->ninputs; i++) { tn_tensor_release(a->results[i]); a->results[i] = NULL; }
    for (int i = 0; root_grads && i < a->nroots; i++) tn_tensor_release(root_grads[i]);
    /* the table's entries read their nodes, which the root and input edges may hold the
     * last references to (a leaf's AccumulateGrad made for this call): table first */
    task_free(&t);
    for (int i = 0; root_edges && i < a->nroots; i++)
        if (root_edges[i].fn) tn_node_release(root_edges[i].fn);
    for (int i = 0; t.input_edges && i < a->ninputs; i++)
        if (t.input_edges[i].fn) tn_node_release(t.input_edges[i].fn);
    free(t.input_edges);
    free(root_grads);
    free(root_edges);
    return st;
}
