/* autograd.h — reverse-mode automatic differentiation below the binding: the autograd
 * record of a tensor, graph nodes, recording at the door and the engine.
 *
 * How it fits together. The door (ops/dispatch.c) asks tn_autograd_should_record() for
 * every call from outside the door; when grad mode is on and a tensor argument requires
 * grad, it hands the call to tn_autograd_record(), which runs the operator with grad mode
 * off (nested door calls are part of this operator) and then creates one node: edges to
 * the gradient edges of its tensor arguments, the saved arguments and results its
 * derivative formula needs (formulas.h), and the metadata of each output. The outputs get
 * the node as their grad_fn. tn_autograd_backward() runs the graph from roots in the
 * order upstream's engine does (a ready queue by sequence number, accumulate-grad first).
 *
 * Ownership.
 *  - A tensor's record (tn_autograd_meta, `t->autograd`) is owned by the tensor and freed
 *    with it; it owns a reference to its grad_fn and to its .grad.
 *  - A node owns references to the nodes of its edges (so a graph lives while its last
 *    output does), to its saved tensors and, for AccumulateGrad, to its leaf tensor.
 *  - A leaf's meta points to its AccumulateGrad node without owning it; the node clears
 *    the pointer when it dies (the node always dies first: it owns the leaf).
 *  - Saved results are kept as aliases without a record (no cycle through grad_fn);
 *    unpacking one under create_graph gives it this node as grad_fn again.
 *  - `py` and `py_hooks` fields belong to the binding (borrowed / released through the
 *    callbacks it registers); the core never interprets them.
 * Plain C11; no Python. Not thread-safe beyond what the binding's lock (the GIL) gives. */
#ifndef TN_AUTOGRAD_H
#define TN_AUTOGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"
#include "ops/value.h"
#include "ops_generated.h"

typedef struct tn_node tn_node;

/* The gradient edge of a tensor: the node that receives its gradient and which of that
 * node's inputs it is. fn == NULL: the tensor does not take part in the graph. */
typedef struct tn_edge {
    tn_node *fn;
    int32_t input_nr;
} tn_edge;

/* Shape/dtype of a tensor as the engine validates gradients against it. */
typedef struct tn_geom {
    int32_t ndim;
    tn_dtype dtype;
    tn_device device;
    int64_t sizes[TN_MAX_DIMS];
    int64_t strides[TN_MAX_DIMS];
    int64_t offset; /* storage offset in elements */
} tn_geom;

void tn_geom_of(const tn_tensor *t, tn_geom *g);

/* A tensor saved for backward, checked against its version counter when unpacked. */
typedef struct tn_saved {
    tn_tensor *t;       /* owned; NULL when nothing was saved or when packed */
    void *packed;       /* saved-tensor hooks: the binding's packed object (owned by it) */
    int64_t version;    /* storage version at save time */
    int16_t output_nr;  /* >= 0: a result of the node saving it (kept without its record) */
    bool was_leaf_rg;   /* an input that was a leaf requiring grad (for messages) */
} tn_saved;

/* ---- the tensor's autograd record --------------------------------------------------- */
typedef struct tn_autograd_meta {
    tn_node *grad_fn;          /* owned; NULL for leaves */
    tn_node *grad_accumulator; /* leaves that require grad: borrowed (see ownership) */
    tn_tensor *grad;           /* owned .grad, or NULL */
    int32_t output_nr;
    bool retains_grad;
    tn_tensor *view_base;      /* owned: the base when this is a differentiable view */
    int64_t hist_version;      /* storage version when grad_fn was set (stale-view check) */
    void *py_hooks;            /* binding: the tensor's _backward_hooks dict (owned by binding) */
    void *py_post_acc_hooks;   /* binding: post-accumulate-grad hooks (owned by binding) */
    struct tn_acc_hook *c_hooks; /* owned list: C hooks run after accumulation (DDP's reducer) */
    bool func_grad;            /* history recorded while a torch.func.grad level was active */
    struct tn_fw_grad *fw;     /* owned list: forward-mode tangents, one per dual level (forward.c) */
} tn_autograd_meta;

/* A tangent of a tensor at one forward-mode (dual) level. The entry owns a reference to
 * its tangent. Entries of levels that have exited are dead: lookups skip them and the
 * next write to the list (or the tensor's death) frees them. */
typedef struct tn_fw_grad {
    int64_t level;             /* the level's unique id (never reused), not its depth */
    tn_tensor *tangent;        /* owned */
    struct tn_fw_grad *next;
} tn_fw_grad;

/* A C hook a leaf's AccumulateGrad runs after accumulating, and also when the node runs
 * without a gradient (has_grad false): upstream's post hooks on the grad accumulator,
 * which is what DDP's reducer registers. `key` is the registrant's own index. */
typedef tn_status (*tn_acc_hook_fn)(void *ctx, int64_t key, tn_tensor *leaf, bool has_grad);
typedef struct tn_acc_hook {
    tn_acc_hook_fn fn;
    void *ctx;                 /* borrowed: the registrant removes its hooks before it dies */
    int64_t key;
    struct tn_acc_hook *next;
} tn_acc_hook;

/* Appends a hook to leaf's record (run in registration order). */
tn_status tn_autograd_add_acc_hook(tn_tensor *leaf, tn_acc_hook_fn fn, void *ctx, int64_t key);
/* Removes every hook of leaf registered with ctx. */
void tn_autograd_remove_acc_hooks(tn_tensor *leaf, void *ctx);

/* The record of t, created on first use (NULL on allocation failure). */
tn_autograd_meta *tn_autograd_meta_get(tn_tensor *t);
static inline tn_autograd_meta *tn_autograd_meta_peek(const tn_tensor *t) { return (tn_autograd_meta *)t->autograd; }
/* requires_grad as upstream reports it: a leaf flag or a grad_fn. */
static inline bool tn_requires_grad(const tn_tensor *t) {
    return (t->flags & TN_TENSOR_REQUIRES_GRAD) != 0;
}
static inline tn_node *tn_grad_fn(const tn_tensor *t) {
    tn_autograd_meta *m = tn_autograd_meta_peek(t);
    return m ? m->grad_fn : NULL;
}
static inline bool tn_is_leaf(const tn_tensor *t) { return tn_grad_fn(t) == NULL; }
/* The edge gradients of t flow into (creates a leaf's AccumulateGrad when missing).
 * Returns fn NULL when t does not require grad. The edge's fn is borrowed. */
tn_status tn_autograd_edge(tn_tensor *t, tn_edge *out);
/* Makes t a leaf: drops grad_fn and view base (detach_). */
void tn_autograd_detach_inplace(tn_tensor *t);
/* Sets t's history: grad_fn = fn (retained), output number nr, requires_grad on. */
void tn_autograd_set_history(tn_tensor *t, tn_node *fn, int nr);

/* ---- nodes --------------------------------------------------------------------------- */
typedef enum tn_node_kind {
    TN_NODE_OP,          /* an aten operator's backward (formula from formulas.def) */
    TN_NODE_ACCUMULATE,  /* AccumulateGrad of a leaf */
    TN_NODE_PYTHON,      /* torch.autograd.Function's backward (the binding applies it) */
    TN_NODE_ERROR,       /* backward refuses with a stored message */
    TN_NODE_IDENTITY,    /* passes gradients through */
    TN_NODE_COPY_SLICES, /* a base written in place through a view (views.c) */
    TN_NODE_AS_STRIDED,  /* a view rebased onto its base's new history (views.c) */
} tn_node_kind;

struct tn_grad_formula;

struct tn_node {
    atomic_long refcount;
    tn_node_kind kind;
    uint64_t seq_nr;
    int32_t num_inputs;       /* gradients it receives: one per forward output */
    int32_t num_next;         /* edges: one per forward tensor argument (lists flattened) */
    tn_edge *next;            /* [num_next], fns owned */
    tn_geom *in_meta;         /* [num_inputs] */
    tn_tensor **retain;       /* [num_inputs] or NULL: tensors whose .grad is retained (borrowed) */
    void *py;                 /* binding's grad_fn object, borrowed; the binding clears it */
    void *py_hooks;           /* binding-owned hooks state; freed by tn_autograd_callbacks */
    const char *name;         /* "MulBackward0" */
    char *msg;                /* TN_NODE_ERROR: owned message */
    bool msg_upstream;        /* TN_NODE_ERROR: upstream refuses too (RuntimeError, its message) */
    /* TN_NODE_OP */
    tn_op_id op;
    const struct tn_grad_formula *formula;
    int32_t nargs, nres;
    tn_value *args;           /* [nargs] saved arguments; tensors in saved_args */
    tn_saved *saved_args;     /* [nargs] */
    uint32_t saved_mask;      /* bit i: argument i was saved (the row's mask narrowed by need) */
    tn_geom *arg_geom;        /* [nargs] geometry of tensor arguments (ndim -1 otherwise) */
    int32_t *arg_edge;        /* [nargs] first edge index of argument i, -1 when none */
    int32_t *arg_count;       /* [nargs] number of edges of argument i (list length) */
    tn_saved *saved_res;      /* [nres] */
    void *extra;              /* formula-owned state (freed with free()) */
    bool released;            /* saved variables freed after a backward without retain_graph */
    /* TN_NODE_ACCUMULATE */
    tn_tensor *variable;      /* owned */
};

/* Whether a backward pass from t would reach a leaf requiring grad other than leaves[0..n)
 * (t itself when it is such a leaf): functorch's grad levels detach a result that depends on
 * their own leaves only. */
bool tn_autograd_reaches_other_leaf(const tn_tensor *t, tn_tensor *const *leaves, int nleaves);

void tn_node_retain(tn_node *n);
void tn_node_release(tn_node *n);
/* A node of `kind` with num_inputs / num_next slots (edges empty). */
tn_node *tn_node_new(tn_node_kind kind, const char *name, int num_inputs, int num_next);
/* Frees what backward needs only (saved tensors); later backward through n refuses. */
void tn_node_release_saved(tn_node *n);
/* Unpacks a saved tensor: version check, and grad_fn restored for saved outputs when
 * grad mode is on. Returns a new reference in *out (NULL when nothing was saved). */
tn_status tn_saved_unpack(tn_node *n, const tn_saved *s, tn_tensor **out);
/* Fills s from t (retained) with its current version; output_nr >= 0 for n's own result. */
tn_status tn_saved_set(tn_saved *s, tn_tensor *t, int output_nr);

/* ---- grad mode ----------------------------------------------------------------------- */
bool tn_grad_mode_enabled(void);
void tn_grad_mode_set(bool enabled);
bool tn_inference_mode_enabled(void);
void tn_inference_mode_set(bool enabled);

/* ---- recording at the door ----------------------------------------------------------- */
/* Whether a call of op with args must go through tn_autograd_record. */
bool tn_autograd_should_record(tn_op_id op, const tn_value *args);
/* Runs op through `run` with grad mode off, then records its node. */
typedef tn_status (*tn_run_fn)(tn_op_id op, const tn_value *args, tn_value *rets);
tn_status tn_autograd_record(tn_op_id op, const tn_value *args, tn_value *rets, tn_run_fn run);
/* Sequence numbers of new nodes (upstream: thread-local counter). */
uint64_t tn_autograd_next_seq(void);

/* ---- the engine ---------------------------------------------------------------------- */
typedef struct tn_backward_args {
    int nroots;
    tn_tensor *const *roots;      /* outputs to differentiate */
    tn_tensor *const *grad_roots; /* gradients of roots (NULL entry: ones for a scalar) */
    bool keep_graph, create_graph;
    int ninputs;                  /* > 0: only these inputs (grad() or backward(inputs=)) */
    tn_tensor *const *inputs;
    bool accumulate;              /* backward(): into .grad; grad(): return them */
    bool allow_unused;
    tn_tensor **results;          /* [ninputs] when !accumulate: new references or NULL */
} tn_backward_args;

tn_status tn_autograd_backward(tn_backward_args *a);
/* Runs one operator node's backward: in[num_inputs] (NULL entries are zeros) to
 * out[num_next] (new references or NULL). */
tn_status tn_autograd_apply_node(tn_node *n, tn_tensor **in, tn_tensor **out);

/* Hooks the binding registers so the engine can call Python code. Each returns TN_OK or
 * TN_ERR_PYTHON with the Python exception set. */
typedef struct tn_autograd_callbacks {
    /* Node pre-hooks and tensor pre-hooks: may replace entries of grads[num_inputs]. */
    tn_status (*pre_hooks)(tn_node *n, tn_tensor **grads);
    /* Node post-hooks: (grad_inputs = grads of edges, grad_outputs = grads received). */
    tn_status (*post_hooks)(tn_node *n, tn_tensor **grad_in, tn_tensor **grad_out);
    /* A leaf's tensor hooks before accumulation (may replace *grad). */
    tn_status (*leaf_hooks)(tn_tensor *leaf, tn_tensor **grad);
    /* Post-accumulate-grad hooks of a leaf. */
    tn_status (*post_acc_hooks)(tn_tensor *leaf);
    /* TN_NODE_PYTHON: runs the Function's backward. */
    tn_status (*apply_python)(tn_node *n, tn_tensor **grads_in, tn_tensor **grads_out);
    /* Saved-tensor hooks: pack t (returns TN_OK with *packed NULL when no hooks are
     * active), unpack into a new tensor reference, free a packed object. */
    tn_status (*pack_saved)(tn_tensor *t, void **packed);
    tn_status (*unpack_saved)(void *packed, tn_tensor **out);
    void (*free_packed)(void *packed);
    /* Frees a node's py_hooks / a meta's py fields. */
    void (*free_node_py)(tn_node *n);
    void (*free_meta_py)(tn_autograd_meta *m);
} tn_autograd_callbacks;

extern tn_autograd_callbacks tn_autograd_cb;

/* Installs the tensor-release hook of the core (call once at start-up). */
void tn_autograd_init(void);

/* Queues fn(ctx) to run once the current backward pass has run every node (upstream's
 * Engine::queue_callback; callbacks may queue more, they run in order). Outside a
 * backward pass: TN_ERR_RUNTIME. free_ctx(ctx) runs after the callback ran or was dropped
 * (a failed backward drops its callbacks without running them). */
typedef tn_status (*tn_final_callback)(void *ctx);
tn_status tn_autograd_queue_callback(tn_final_callback fn, void *ctx, void (*free_ctx)(void *));

/* The node profile (the binding's TN_PROFILE / torch._C._tn_profile): while enabled, the
 * engine adds each node's application time (its formula, including the operators the
 * formula dispatches) under the node's name. get copies up to max rows, in order of first
 * appearance; returns how many. */
typedef struct tn_autograd_profile_row {
    char name[64];
    int64_t calls, ns;
} tn_autograd_profile_row;
void tn_autograd_profile_enable(bool on);
void tn_autograd_profile_reset(void);
int tn_autograd_profile_get(int max, tn_autograd_profile_row *rows);

/* ---- forward mode (forward.c) ----------------------------------------------------------
 * Dual levels form a stack; a tensor's tangent at a level is an entry of its record's `fw`
 * list. The door hands a call with a tangent at an active level to tn_fw_dispatch, which
 * runs the operator without that level's tangents (lower levels and reverse mode recurse
 * through the door) and computes the outputs' tangents: a direct rule for linear operators
 * (one table) and otherwise the reverse formulas twice (J t = d/du <J^T u, t>). */
/* Enters a level: `jvp` levels (torch.func.jvp) nest; forward_ad's refuse to nest.
 * *depth: the level's index as Python sees it. */
tn_status tn_fw_enter(bool jvp, int64_t *depth);
/* Exits the innermost level (depth must name it); its tangents die. */
tn_status tn_fw_exit(int64_t depth, bool jvp);
/* Number of active levels / levels entered by torch.func.jvp. */
int tn_fw_depth(void);
int tn_fw_jvp_depth(void);
/* Forward grad mode (torch._C._set_fwd_grad_enabled): off, no tangent propagates. */
bool tn_fw_enabled(void);
void tn_fw_set_enabled(bool on);
/* Whether the door must hand this call to tn_fw_dispatch. */
bool tn_fw_intercepts(tn_op_id op, const tn_value *args);
tn_status tn_fw_dispatch(tn_op_id op, const tn_value *args, tn_value *rets);
/* Whether t has a tangent at an active level. */
bool tn_fw_has_tangent(const tn_tensor *t);
/* Gives dst every live tangent of src (shared, not copied). */
tn_status tn_fw_copy(tn_tensor *dst, const tn_tensor *src);
/* detach() of t keeping its live tangents, each detached as well (recursively) unless it
 * reaches a leaf requiring grad other than leaves[0..n): a new reference in *out. */
tn_status tn_fw_detach(tn_tensor *t, tn_tensor *const *leaves, int nleaves, tn_tensor **out);
/* Frees a record's tangent list (node.c, when the record dies). */
void tn_fw_free_list(tn_fw_grad *g);

/* Node currently executing in this thread's backward (NULL outside backward). */
tn_node *tn_autograd_current_node(void);
/* Id of the backward pass running on this thread (-1 outside backward): upstream's
 * torch._C._current_graph_task_id. */
int64_t tn_autograd_current_task_id(void);

#endif
