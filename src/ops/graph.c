/* graph.c — capture and replay of operator calls at the door (see graph.h). */
#include "ops/graph.h"
#include "ops/graph_internal.h"

#include "kernels/gemv.h"
#include "ops/iter.h"
#include "ops/shape.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Thread_local tn_graph *tl_graph;
static _Thread_local int tl_depth;
static _Thread_local tn_tensor *tl_result; /* tn_graph_take_result's tensor, or NULL */

tn_tensor *tn_graph_take_result(int ndim, const int64_t *sizes, const int64_t *strides, tn_dtype dtype) {
    tn_tensor *t = tl_result;
    if (!t || tl_depth != 1 || t->ndim != ndim || t->dtype != dtype || tn_tensor_is_meta(t) ||
        memcmp(t->sizes, sizes, sizeof(int64_t) * (size_t)ndim) || memcmp(t->strides, strides, sizeof(int64_t) * (size_t)ndim))
        return NULL;
    tl_result = NULL;
    tn_tensor_retain(t);
    return t;
}

tn_status tn_graph_empty_result(int ndim, const int64_t *sizes, const int64_t *strides, tn_dtype dtype, tn_device device,
                                tn_tensor **out) {
    if (tl_result && device.type == TN_DEVICE_CPU && ndim <= TN_MAX_DIMS) {
        int64_t cs[TN_MAX_DIMS];
        if (!strides) tn_contiguous_strides(ndim, sizes, cs);
        if ((*out = tn_graph_take_result(ndim, sizes, strides ? strides : cs, dtype))) return TN_OK;
    }
    return strides ? tn_tensor_empty_strided(ndim, sizes, strides, dtype, device, out)
                   : tn_tensor_empty(ndim, sizes, dtype, device, out);
}

bool tn_graph_capturing(void) { return tl_graph != NULL; }

static void fail(tn_graph *g, const char *why, const char *name, const char *overload) {
    if (!g || g->failure) return;
    size_t n = strlen(why) + (name ? strlen(name) + strlen(overload) + 16 : 0) + 1;
    g->failure = malloc(n);
    if (!g->failure) return;
    if (name) snprintf(g->failure, n, "%s aten::%s.%s", why, name, overload[0] ? overload : "default");
    else snprintf(g->failure, n, "%s", why);
}

void tn_graph_note_host_read(const char *what) {
    if (tl_graph && tl_depth == 0) fail(tl_graph, what, NULL, NULL);
}

tn_status tn_graph_capture_begin(void) {
    if (tl_graph) return tn_error(TN_ERR_RUNTIME, "this thread is already capturing an operator graph");
    tn_graph *g = calloc(1, sizeof *g);
    if (!g) return tn_error(TN_ERR_NO_MEMORY, "out of memory starting a graph capture");
    tl_graph = g;
    tl_depth = 0;
    return TN_OK;
}

tn_graph *tn_graph_capture_end(void) {
    tn_graph *g = tl_graph;
    tl_graph = NULL;
    return g;
}

bool tn_graph_enter(void) { return tl_depth++ == 0 && tl_graph != NULL; }
void tn_graph_leave(void) { tl_depth--; }

static void *dup_mem(const void *p, size_t n) {
    void *q = malloc(n ? n : 1);
    if (q && n) memcpy(q, p, n);
    return q;
}

static void value_free(tn_value *v) {
    switch (v->tag) {
    case TN_V_TENSOR: tn_tensor_release(v->u.t); break;
    case TN_V_TENSORLIST:
        for (int64_t i = 0; i < v->u.tlist.n; i++)
            if (v->u.tlist.data[i]) tn_tensor_release(v->u.tlist.data[i]);
        free((void *)v->u.tlist.data);
        break;
    case TN_V_INTLIST: free((void *)v->u.ilist.data); break;
    case TN_V_DOUBLELIST: free((void *)v->u.dlist.data); break;
    case TN_V_BOOLLIST: free((void *)v->u.blist.data); break;
    case TN_V_SCALARLIST: free((void *)v->u.slist.data); break;
    case TN_V_STRING: free((void *)v->u.s.data); break;
    default: break;
    }
    v->tag = TN_V_NONE;
}

/* A copy of v that the graph owns; returns -1 when v cannot be kept (out of memory or an
 * argument the graph cannot hold: a generator or an opaque object). */
static int value_keep(const tn_value *v, tn_value *out) {
    *out = *v;
    switch (v->tag) {
    case TN_V_TENSOR: tn_tensor_retain(v->u.t); return 0;
    case TN_V_TENSORLIST: {
        tn_tensor **d = dup_mem(v->u.tlist.data, sizeof(tn_tensor *) * (size_t)v->u.tlist.n);
        if (!d) return -1;
        for (int64_t i = 0; i < v->u.tlist.n; i++)
            if (d[i]) tn_tensor_retain(d[i]);
        out->u.tlist.data = d;
        return 0;
    }
    case TN_V_INTLIST:
        return (out->u.ilist.data = dup_mem(v->u.ilist.data, sizeof(int64_t) * (size_t)v->u.ilist.n)) ? 0 : -1;
    case TN_V_DOUBLELIST:
        return (out->u.dlist.data = dup_mem(v->u.dlist.data, sizeof(double) * (size_t)v->u.dlist.n)) ? 0 : -1;
    case TN_V_BOOLLIST:
        return (out->u.blist.data = dup_mem(v->u.blist.data, sizeof(bool) * (size_t)v->u.blist.n)) ? 0 : -1;
    case TN_V_SCALARLIST:
        for (int64_t i = 0; i < v->u.slist.n; i++)
            if (v->u.slist.data[i].tag != TN_V_INT && v->u.slist.data[i].tag != TN_V_DOUBLE &&
                v->u.slist.data[i].tag != TN_V_BOOL && v->u.slist.data[i].tag != TN_V_COMPLEX &&
                v->u.slist.data[i].tag != TN_V_NONE)
                return -1;
        return (out->u.slist.data = dup_mem(v->u.slist.data, sizeof(tn_value) * (size_t)v->u.slist.n)) ? 0 : -1;
    case TN_V_STRING: {
        char *s = malloc((size_t)v->u.s.n + 1);
        if (!s) return -1;
        memcpy(s, v->u.s.data, (size_t)v->u.s.n);
        s[v->u.s.n] = 0;
        out->u.s.data = s;
        return 0;
    }
    case TN_V_GENERATOR:
    case TN_V_OPAQUE: return v->u.ptr ? -1 : 0;
    default: return 0;
    }
}

static bool storage_in_args(const tn_storage *s, const tn_value *args, int nargs) {
    for (int i = 0; i < nargs; i++) {
        if (args[i].tag == TN_V_TENSOR && args[i].u.t->storage == s) return true;
        if (args[i].tag == TN_V_TENSORLIST)
            for (int64_t j = 0; j < args[i].u.tlist.n; j++)
                if (args[i].u.tlist.data[j] && args[i].u.tlist.data[j]->storage == s) return true;
    }
    return false;
}

static bool is_empty_factory(const char *name) {
    return !strcmp(name, "empty") || !strcmp(name, "empty_like") || !strcmp(name, "empty_strided") ||
           !strcmp(name, "new_empty") || !strcmp(name, "new_empty_strided");
}

void tn_graph_record(tn_op_id op, const tn_value *args, const tn_value *rets) {
    tn_graph *g = tl_graph;
    if (!g || g->failure) return;
    const tn_op_schema *s = &tn_op_schemas[op];
    if (s->nrets > G_MAX_RETS) { fail(g, "too many results in", s->name, s->overload); return; }
    for (int k = 0; k < s->nrets; k++)
        if (rets[k].tag != TN_V_TENSOR && rets[k].tag != TN_V_TENSORLIST && rets[k].tag != TN_V_NONE) {
            fail(g, "a host value (not a tensor) was returned by", s->name, s->overload);
            return;
        }
    if (g->n == g->cap) {
        int64_t cap = g->cap ? g->cap * 2 : 256;
        step *ns = realloc(g->steps, sizeof(step) * (size_t)cap);
        if (!ns) { fail(g, "out of memory recording", s->name, s->overload); return; }
        g->steps = ns;
        g->cap = cap;
    }
    step *st = &g->steps[g->n];
    memset(st, 0, sizeof *st);
    st->op = op;
    st->nargs = s->nargs;
    st->nrets = (uint8_t)s->nrets;
    st->args = calloc((size_t)(s->nargs ? s->nargs : 1), sizeof(tn_value));
    if (!st->args) { fail(g, "out of memory recording", s->name, s->overload); return; }
    for (int i = 0; i < s->nargs; i++)
        if (value_keep(&args[i], &st->args[i]) < 0) {
            for (int j = 0; j < i; j++) value_free(&st->args[j]);
            free(st->args);
            fail(g, args[i].tag == TN_V_GENERATOR ? "a random operator was called:"
                                                  : "an argument the graph cannot hold was passed to",
                 s->name, s->overload);
            return;
        }
    for (int k = 0; k < s->nrets; k++)
        if (value_keep(&rets[k], &st->rets[k]) < 0) {
            for (int j = 0; j < k; j++) value_free(&st->rets[j]);
            for (int j = 0; j < s->nargs; j++) value_free(&st->args[j]);
            free(st->args);
            fail(g, "out of memory recording", s->name, s->overload);
            return;
        }
    if (s->kind == TN_OP_KIND_INPLACE || s->kind == TN_OP_KIND_OUT) {
        st->kind = STEP_RERUN;
    } else if (is_empty_factory(s->name)) {
        st->kind = STEP_SKIP; /* contents undefined: the captured block serves */
    } else {
        for (int k = 0; k < s->nrets; k++) {
            const tn_value *r = &rets[k];
            bool fresh = false;
            if (r->tag == TN_V_TENSOR) fresh = !storage_in_args(r->u.t->storage, args, s->nargs);
            else if (r->tag == TN_V_TENSORLIST)
                for (int64_t j = 0; j < r->u.tlist.n; j++)
                    if (r->u.tlist.data[j] && !storage_in_args(r->u.tlist.data[j]->storage, args, s->nargs))
                        fresh = true;
            if (fresh) st->fresh |= (uint8_t)(1u << k);
        }
        st->kind = st->fresh ? STEP_INTO : STEP_SKIP;
    }
    g->n++;
}

/* Copies a fresh replay result into the captured tensor (same shape and dtype). */
static tn_status copy_result(const tn_op_schema *s, tn_tensor *dst, tn_tensor *src) {
    if (dst == src) return TN_OK; /* computed in place (tn_graph_take_result) */
    char b1[160], b2[160];
    if (dst->ndim != src->ndim || memcmp(dst->sizes, src->sizes, sizeof(int64_t) * (size_t)dst->ndim) ||
        dst->dtype != src->dtype)
        return tn_error(TN_ERR_RUNTIME,
                        "graph replay: aten::%s.%s returned shape %s, captured %s (data-dependent shapes cannot "
                        "be replayed)",
                        s->name, s->overload[0] ? s->overload : "default",
                        tn_format_sizes(src->ndim, src->sizes, b1, sizeof b1),
                        tn_format_sizes(dst->ndim, dst->sizes, b2, sizeof b2));
    return tn_shape_copy(dst, src);
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static tn_status replay_steps(tn_graph *g, bool profile);

/* ---- decode-shaped linear steps -------------------------------------------------------
 * aten::linear without bias on at most 4 rows of a contiguous input and a row-major weight
 * is a GEMV (gemm.c sends every such problem to tn_gemv). At replay it can skip the door:
 * the product is written straight into the captured result, and consecutive linear steps
 * reading the same input (q/k/v, gate/up) share one parallel region. tn_gemv_multi gives
 * each product the bits tn_gemv gives it, so the replay stays identical to eager. */
static bool linear_gemv(const step *st, tn_gemm_desc *d) {
    if (st->op != TN_OP_linear || st->kind != STEP_INTO || st->args[2].tag != TN_V_NONE ||
        st->args[0].tag != TN_V_TENSOR || st->args[1].tag != TN_V_TENSOR || st->rets[0].tag != TN_V_TENSOR)
        return false;
    const tn_tensor *x = st->args[0].u.t, *w = st->args[1].u.t, *out = st->rets[0].u.t;
    tn_dtype dt = x->dtype;
    if ((dt != TN_DTYPE_FLOAT32 && dt != TN_DTYPE_BFLOAT16 && dt != TN_DTYPE_FLOAT16) || w->dtype != dt ||
        out->dtype != dt || w->ndim != 2 || x->ndim < 1 || tn_tensor_is_meta(x) || tn_tensor_is_meta(w))
        return false;
    int64_t n = w->sizes[0], k = w->sizes[1];
    if (k < 1 || n < 1 || w->strides[1] != 1 || w->strides[0] != k || x->sizes[x->ndim - 1] != k ||
        !tn_tensor_is_contiguous(x) || !tn_tensor_is_contiguous(out))
        return false;
    int64_t m = tn_tensor_numel(x) / k;
    if (m < 1 || m > TN_GEMV_MAX_M || tn_tensor_numel(out) != m * n) return false;
    *d = tn_gemm_desc_init(dt);
    d->m = m, d->n = n, d->k = k;
    d->a = tn_tensor_data(x), d->a_rs = k, d->a_cs = 1;
    d->b = tn_tensor_data(w), d->b_rs = 1, d->b_cs = k;
    d->c = tn_tensor_data(out), d->c_rs = n, d->c_cs = 1;
    return tn_gemv_shaped(d);
}

static void plan_groups(tn_graph *g) {
    tn_gemm_desc d;
    tn_graph_reorder_for_chains(g);
    for (int64_t i = 0; i < g->n; i++) {
        step *st = &g->steps[i];
        if (st->group < 0 || !linear_gemv(st, &d)) continue;
        /* members: later linear steps on the same input, past views only (skip steps do
         * nothing at replay, so nothing in between reads or writes what the group does) */
        int n = 1;
        step *last = st;
        for (int64_t j = i + 1; j < g->n && n < TN_GEMV_MULTI_MAX && j - i < INT32_MAX; j++) {
            step *sj = &g->steps[j];
            if (sj->kind == STEP_SKIP) continue;
            if (sj->args[0].tag != TN_V_TENSOR || sj->args[0].u.t != st->args[0].u.t || !linear_gemv(sj, &d)) break;
            sj->group = -1;
            last->next = (int32_t)j;
            last = sj;
            n++;
        }
        st->group = (int8_t)n;
    }
    tn_graph_plan_chains(g);
    g->planned = true;
}

/* Runs the group led by step i; false (nothing run) if a tensor changed geometry. */
static bool run_group(tn_graph *g, int64_t i) {
    tn_gemm_desc ds[TN_GEMV_MULTI_MAX];
    int n = 0;
    for (int64_t j = i; n == 0 || j != 0; j = g->steps[j].next)
        if (!linear_gemv(&g->steps[j], &ds[n++])) return false;
    if (n == 1) tn_gemv(&ds[0]);
    else tn_gemv_multi(ds, n);
    for (int64_t j = g->steps[i].next; j != 0; j = g->steps[j].next) g->steps[j].covered = 1;
    return true;
}

tn_status tn_graph_replay(tn_graph *g, bool profile) {
    if (g->failure) return tn_error(TN_ERR_RUNTIME, "this graph cannot be replayed: %s", g->failure);
    if (tl_graph) return tn_error(TN_ERR_RUNTIME, "a graph cannot be replayed while this thread captures");
    if (atomic_exchange(&g->busy, 1))
        return tn_error(TN_ERR_RUNTIME, "this graph is being replayed by another thread");
    tn_status st = replay_steps(g, profile);
    atomic_store(&g->busy, 0);
    return st;
}

/* Prefetch of the steps ahead, software-pipelined over three levels: the step's argument
 * array (three steps ahead), its tensors' structs (two ahead), their storages and the first
 * lines of their data (the next step). The first two levels read only what the level
 * before asked for a step earlier; the last reads each storage struct as it asks for it,
 * so one dependent miss per tensor remains there. In a
 * decode step every small operator follows a product that streamed megabytes of weights
 * through the caches, and its metadata comes back from memory one dependent miss after
 * another unless it is asked for early. */
#define PF_DATA_BYTES 4096
static inline void pf_args(const step *st) {
    for (int j = 0; j < st->nargs; j += 2) __builtin_prefetch(&st->args[j]);
}
static inline void pf_tensor_struct(const tn_tensor *t) {
    __builtin_prefetch(t);
    __builtin_prefetch((const char *)t + offsetof(tn_tensor, strides));
    __builtin_prefetch((const char *)t + offsetof(tn_tensor, flags));
}
static inline void pf_tensor_data(const tn_tensor *t) {
    const tn_storage *sg = t->storage;
    if (!sg || !sg->data) return;
    const char *d = (const char *)sg->data + t->offset * (int64_t)tn_dtype_itemsize(t->dtype);
    int64_t n = sg->nbytes < PF_DATA_BYTES ? sg->nbytes : PF_DATA_BYTES;
    for (int64_t b = 0; b < n; b += 64) __builtin_prefetch(d + b);
}
static inline void pf_structs(const step *st) {
    for (int j = 0; j < st->nargs; j++)
        if (st->args[j].tag == TN_V_TENSOR && st->args[j].u.t) pf_tensor_struct(st->args[j].u.t);
    for (int k = 0; k < st->nrets; k++)
        if (st->rets[k].tag == TN_V_TENSOR && st->rets[k].u.t) pf_tensor_struct(st->rets[k].u.t);
}
static inline void pf_data(const step *st) {
    for (int j = 0; j < st->nargs; j++)
        if (st->args[j].tag == TN_V_TENSOR && st->args[j].u.t) {
            __builtin_prefetch(st->args[j].u.t->storage);
            pf_tensor_data(st->args[j].u.t);
        }
    for (int k = 0; k < st->nrets; k++)
        if (st->rets[k].tag == TN_V_TENSOR && st->rets[k].u.t) pf_tensor_data(st->rets[k].u.t);
}

static tn_status replay_steps(tn_graph *g, bool profile) {
    if (profile && !g->step_ns && g->n) {
        g->step_ns = calloc((size_t)g->n, sizeof(double));
        if (!g->step_ns) return tn_error(TN_ERR_NO_MEMORY, "out of memory profiling a graph");
    }
    if (!g->planned) plan_groups(g);
    g->direct = 0;
    g->chained = 0;
    tn_value tmp[G_MAX_RETS];
    for (int64_t i = 0; i < g->n; i++) {
        step *st = &g->steps[i];
        if (i + 3 < g->n) pf_args(&g->steps[i + 3]);
        if (i + 2 < g->n) pf_structs(&g->steps[i + 2]);
        if (i + 1 < g->n) pf_data(&g->steps[i + 1]);
        if (st->kind == STEP_SKIP) continue;
        double t0 = profile ? now_ns() : 0;
        if (st->covered) { st->covered = 0; continue; }
        if (st->group > 0 && run_group(g, i)) {
            if (profile) g->step_ns[i] += now_ns() - t0;
            continue;
        }
        if (st->chain && tn_graph_run_chain(g, i)) {
            if (profile) g->step_ns[i] += now_ns() - t0;
            i = st->chain_end; /* the steps in between ran inside the chain */
            continue;
        }
        /* a step with one fresh tensor result computes straight into the captured one */
        tl_result = st->kind == STEP_INTO && st->nrets == 1 && st->fresh == 1 && st->rets[0].tag == TN_V_TENSOR
                        ? st->rets[0].u.t
                        : NULL;
        tn_status rd = tn_dispatch(st->op, st->args, tmp);
        tl_result = NULL;
        TN_TRY(rd);
        tn_status rc = TN_OK;
        if (st->kind == STEP_INTO) {
            const tn_op_schema *s = &tn_op_schemas[st->op];
            for (int k = 0; k < st->nrets && rc == TN_OK; k++) {
                if (!(st->fresh & (1u << k))) continue;
                if (tmp[k].tag == TN_V_TENSOR) {
                    g->direct += st->rets[k].u.t == tmp[k].u.t;
                    rc = copy_result(s, st->rets[k].u.t, tmp[k].u.t);
                } else if (tmp[k].tag == TN_V_TENSORLIST && tmp[k].u.tlist.n == st->rets[k].u.tlist.n) {
                    for (int64_t j = 0; j < tmp[k].u.tlist.n && rc == TN_OK; j++)
                        if (tmp[k].u.tlist.data[j]) rc = copy_result(s, st->rets[k].u.tlist.data[j], tmp[k].u.tlist.data[j]);
                } else {
                    rc = tn_error(TN_ERR_RUNTIME, "graph replay: aten::%s.%s returned another kind of result",
                                  s->name, s->overload[0] ? s->overload : "default");
                }
            }
        }
        for (int k = 0; k < st->nrets; k++) tn_value_release(&tmp[k]);
        if (profile) g->step_ns[i] += now_ns() - t0;
        TN_TRY(rc);
    }
    return TN_OK;
}

const char *tn_graph_failure(const tn_graph *g) { return g->failure; }

int64_t tn_graph_size(const tn_graph *g) { return g->n; }

void tn_graph_step_info(const tn_graph *g, int64_t i, tn_op_id *op, int *kind, double *ns) {
    *op = g->steps[i].op;
    *kind = g->steps[i].kind;
    *ns = g->step_ns ? g->step_ns[i] : 0;
}

int64_t tn_graph_direct_steps(const tn_graph *g) { return g->direct; }

int64_t tn_graph_chained_steps(const tn_graph *g) { return g->chained; }

void tn_graph_counts(const tn_graph *g, int64_t *skip, int64_t *rerun, int64_t *into) {
    int64_t c[3] = {0, 0, 0};
    for (int64_t i = 0; i < g->n; i++) c[g->steps[i].kind]++;
    if (skip) *skip = c[STEP_SKIP];
    if (rerun) *rerun = c[STEP_RERUN];
    if (into) *into = c[STEP_INTO];
}

void tn_graph_free(tn_graph *g) {
    if (!g) return;
    for (int64_t i = 0; i < g->n; i++) {
        step *st = &g->steps[i];
        for (int j = 0; j < st->nargs; j++) value_free(&st->args[j]);
        free(st->args);
        for (int k = 0; k < st->nrets; k++) value_free(&st->rets[k]);
        free(st->plan);
    }
    free(g->steps);
    free(g->step_ns);
    free(g->scratch);
    free(g->failure);
    free(g);
}
