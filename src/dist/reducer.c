/* reducer.c — DDP's gradient reducer (contract and iteration in reducer.h): buckets,
 * the AccumulateGrad hook, in-order asynchronous bucket all-reduce on the group's
 * worker thread, unused-parameter search and finalize; plus the bucket assignment. */
#include "dist/reducer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "dist/net.h"
#include "ops/dispatch.h"

typedef struct rbucket {
    int nvars;
    int *vars;           /* parameter indices, in bucket order */
    tn_tensor *contents; /* owned flat buffer */
    tn_tensor **views;   /* [nvars] owned views of contents, shaped as the parameters */
    tn_tensor *wire;     /* owned: the fp16 copy the FP16_COMPRESS hook sends, or NULL */
    int pending;         /* parameters not yet ready this iteration */
    tn_pg_work *work;    /* built-in communication in flight */
    void *handle;        /* user hook communication in flight */
    bool launched;
} rbucket;

struct tn_reducer {
    tn_pg *pg;
    int nparams, nbuckets;
    tn_tensor **params;  /* owned */
    rbucket *buckets;
    int *loc_bucket, *loc_intra;
    bool find_unused, grad_as_view;
    tn_reducer_host host;
    int builtin;
    bool has_comm;
    tn_reducer_comm comm;
    /* per iteration */
    bool expect_hooks, require_finalize, has_marked_unused, finalize_queued;
    int next_bucket;
    uint8_t *ready;      /* [nparams] marked ready this iteration */
    int nunused;
    int *unused;         /* [nparams] */
    tn_tensor *local_used;   /* int32 [nparams]: this rank used param i since the last sync */
    tn_tensor *used_wire;    /* int32 [nparams]: its all-reduced copy */
    tn_pg_work *used_work;
    /* bucket rebuilding (upstream's rebuild_buckets): gradient-ready order of the first
     * synced iteration, when every parameter is expected to get a gradient */
    bool has_rebuilt;
    int nrebuilt;
    int *rebuilt;        /* [nparams] */
};

/* ---- door helpers -------------------------------------------------------------------- */
static tn_status door(tn_op_id op, tn_value *a) {
    tn_value r[2] = {{0}};
    TN_TRY(tn_dispatch(op, a, r));
    if (r[0].tag == TN_V_TENSOR) tn_tensor_release(r[0].u.t);
    return TN_OK;
}

static tn_status t_copy(tn_tensor *dst, tn_tensor *src) {
    tn_value a[3] = {tn_value_tensor(dst), tn_value_tensor(src), tn_value_bool(false)};
    return door(TN_OP_copy_, a);
}

static tn_status t_zero(tn_tensor *t) {
    tn_value a[1] = {tn_value_tensor(t)};
    return door(TN_OP_zero_, a);
}

static tn_status t_div(tn_tensor *t, int64_t d) {
    tn_value a[2] = {tn_value_tensor(t), tn_value_int(d)};
    return door(TN_OP_div__Scalar, a);
}

static tn_status t_mul(tn_tensor *t, double s) {
    tn_value a[2] = {tn_value_tensor(t), tn_value_double(s)};
    return door(TN_OP_mul__Scalar, a);
}

static bool aliases(const tn_tensor *a, const tn_tensor *b) { return a->storage == b->storage; }

/* dst (a contiguous bucket view) = src * (1 / div), as upstream's
 * mul_out(view, grad, wrapped_scalar(1. / div)): the factor is rounded to the tensor's
 * dtype first (float32: (float)(1.0 / div)). */
static tn_status scale_copy(tn_tensor *dst, tn_tensor *src, int64_t div) {
    int64_t n = tn_tensor_numel(dst);
    if (src->dtype == dst->dtype && tn_tensor_is_contiguous(src) && tn_tensor_numel(src) == n) {
        if (dst->dtype == TN_DTYPE_FLOAT32) {
            const float *s = tn_tensor_data(src);
            float *d = tn_tensor_data(dst), f = (float)(1.0 / (double)div);
            for (int64_t k = 0; k < n; k++) d[k] = s[k] * f;
            atomic_fetch_add(&dst->storage->version, 1);
            return TN_OK;
        }
        if (dst->dtype == TN_DTYPE_FLOAT64) {
            const double *s = tn_tensor_data(src);
            double *d = tn_tensor_data(dst), f = 1.0 / (double)div;
            for (int64_t k = 0; k < n; k++) d[k] = s[k] * f;
            atomic_fetch_add(&dst->storage->version, 1);
            return TN_OK;
        }
    }
    TN_TRY(t_copy(dst, src));
    return t_mul(dst, 1.0 / (double)div);
}

/* ---- bucket assignment ---------------------------------------------------------------- */
tn_status tn_bucket_assignment(int n, const int64_t *nbytes, const int32_t *key, const uint8_t *sparse,
                               int nlimits, const int64_t *limits, bool sort, int *nb_out, int **start_out, int **idx_out,
                               int64_t **limit_out) {
    /* open buckets per key, in order of first appearance */
    int *open_key = calloc((size_t)n + 1, sizeof(int)), nkeys = 0;
    int *open_lim = calloc((size_t)n + 1, sizeof(int));       /* index into limits per key */
    int64_t *open_size = calloc((size_t)n + 1, sizeof(int64_t));
    int *open_first = calloc((size_t)n + 1, sizeof(int));     /* first member (list head) */
    int *next = calloc((size_t)n + 1, sizeof(int));           /* member chains */
    int *open_last = calloc((size_t)n + 1, sizeof(int));
    int *bhead = calloc((size_t)n + 1, sizeof(int)), *bcount = calloc((size_t)n + 1, sizeof(int));
    int64_t *blim = calloc((size_t)n + 1, sizeof(int64_t));
    int nb = 0;
    tn_status st = TN_OK;
    if (!open_key || !open_lim || !open_size || !open_first || !next || !open_last || !bhead || !bcount || !blim) {
        st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    if (nlimits < 1) { st = tn_error(TN_ERR_RUNTIME, "bucket_size_limits must not be empty"); goto done; }
    for (int i = 0; i < n; i++) next[i] = -1;
    for (int i = 0; i < n; i++) {
        if (sparse && sparse[i]) {
            bhead[nb] = i;
            bcount[nb] = 1;
            blim[nb++] = -1;
            continue;
        }
        int k = 0;
        while (k < nkeys && open_key[k] != key[i]) k++;
        if (k == nkeys) {
            open_key[nkeys] = key[i];
            open_lim[nkeys] = 0;
            open_size[nkeys] = 0;
            open_first[nkeys] = -1;
            nkeys++;
        }
        if (open_first[k] < 0) open_first[k] = i;
        else next[open_last[k]] = i;
        open_last[k] = i;
        open_size[k] += nbytes[i];
        int64_t lim = limits[open_lim[k]];
        if (open_size[k] >= lim) {
            int c = 0;
            for (int j = open_first[k]; j >= 0; j = next[j]) c++;
            bhead[nb] = open_first[k];
            bcount[nb] = c;
            blim[nb++] = lim;
            open_first[k] = -1;
            open_size[k] = 0;
            if (open_lim[k] + 1 < nlimits) open_lim[k]++;
        }
    }
    for (int k = 0; k < nkeys; k++) {
        if (open_first[k] < 0) continue;
        int c = 0;
        for (int j = open_first[k]; j >= 0; j = next[j]) c++;
        bhead[nb] = open_first[k];
        bcount[nb] = c;
        blim[nb++] = limits[open_lim[k]];
    }
    /* a bucket's smallest index is its head (members join in increasing order): sort
     * the buckets by head (insertion sort; bucket counts are small) */
    for (int a = 1; sort && a < nb; a++)
        for (int b = a; b > 0 && bhead[b - 1] > bhead[b]; b--) {
            int th = bhead[b], tc = bcount[b];
            int64_t tl = blim[b];
            bhead[b] = bhead[b - 1]; bcount[b] = bcount[b - 1]; blim[b] = blim[b - 1];
            bhead[b - 1] = th; bcount[b - 1] = tc; blim[b - 1] = tl;
        }
    int *start = malloc(sizeof(int) * ((size_t)nb + 1)), *idx = malloc(sizeof(int) * ((size_t)n + 1));
    int64_t *lim = malloc(sizeof(int64_t) * ((size_t)nb + 1));
    if (!start || !idx || !lim) {
        free(start); free(idx); free(lim);
        st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    int w = 0;
    for (int b = 0; b < nb; b++) {
        start[b] = w;
        lim[b] = blim[b];
        int j = bhead[b];
        for (int c = 0; c < bcount[b]; c++, j = next[j]) idx[w++] = j;
    }
    start[nb] = w;
    *nb_out = nb;
    *start_out = start;
    *idx_out = idx;
    *limit_out = lim;
done:
    free(open_key); free(open_lim); free(open_size); free(open_first); free(next); free(open_last);
    free(bhead); free(bcount); free(blim);
    return st;
}

/* Builds the buckets (flat contents, views) from bucket_idx[bucket_start[b]..]; with
 * gradient_as_bucket_view an existing .grad moves into its view. r->buckets is empty. */
static tn_status init_buckets(tn_reducer *r, int nbuckets, const int *bucket_start, const int *bucket_idx) {
    tn_status st = TN_OK;
    r->buckets = calloc((size_t)nbuckets + 1, sizeof(rbucket));
    if (!r->buckets) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    r->nbuckets = nbuckets;
    for (int i = 0; i < r->nparams; i++) r->loc_bucket[i] = -1;
    for (int b = 0; b < nbuckets; b++) {
        rbucket *bk = &r->buckets[b];
        int nv = bucket_start[b + 1] - bucket_start[b];
        if (nv <= 0) { st = tn_error(TN_ERR_RUNTIME, "Empty bucket specified."); return st; }
        bk->nvars = nv;
        bk->vars = malloc(sizeof(int) * (size_t)nv);
        bk->views = calloc((size_t)nv, sizeof(tn_tensor *));
        if (!bk->vars || !bk->views) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); return st; }
        int64_t total = 0;
        tn_dtype dt = TN_DTYPE_FLOAT32;
        for (int k = 0; k < nv; k++) {
            int i = bucket_idx[bucket_start[b] + k];
            if (i < 0 || i >= r->nparams) { st = tn_error(TN_ERR_RUNTIME, "Out of range variable index specified."); return st; }
            if (r->loc_bucket[i] >= 0) {
                st = tn_error(TN_ERR_RUNTIME, "Parameter %d appears in more than one bucket.", i);
                return st;
            }
            if (tn_tensor_device(r->params[i]).type != TN_DEVICE_CPU) {
                st = tn_error(TN_ERR_NOT_IMPLEMENTED, "DistributedDataParallel with parameters not on the CPU is not implemented by torchnative");
                return st;
            }
            if (k == 0) dt = r->params[i]->dtype;
            else if (r->params[i]->dtype != dt) {
                st = tn_error(TN_ERR_RUNTIME, "All parameters in a bucket must have the same dtype.");
                return st;
            }
            bk->vars[k] = i;
            r->loc_bucket[i] = b;
            r->loc_intra[i] = k;
            total += tn_tensor_numel(r->params[i]);
        }
        if ((st = tn_tensor_zeros(1, &total, dt, tn_device_cpu(), &bk->contents)) != TN_OK) return st;
        int64_t off = 0;
        for (int k = 0; k < nv; k++) {
            tn_tensor *p = r->params[bk->vars[k]];
            int64_t strides[TN_MAX_DIMS];
            tn_contiguous_strides(p->ndim, p->sizes, strides);
            bk->views[k] = tn_tensor_new_view(bk->contents->storage, off, p->ndim, p->sizes, strides, dt);
            if (!bk->views[k]) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); return st; }
            off += tn_tensor_numel(p);
            /* gradient_as_bucket_view: an existing .grad moves into its view */
            tn_autograd_meta *m = tn_autograd_meta_peek(p);
            if (r->grad_as_view && m && m->grad && !aliases(m->grad, bk->views[k])) {
                if ((st = t_copy(bk->views[k], m->grad)) != TN_OK) return st;
                tn_tensor_release(m->grad);
                tn_tensor_retain(bk->views[k]);
                m->grad = bk->views[k];
            }
        }
    }
    for (int i = 0; i < r->nparams; i++)
        if (r->loc_bucket[i] < 0) return tn_error(TN_ERR_RUNTIME, "Parameter %d is not in any bucket.", i);
    return TN_OK;
}

static void free_buckets(tn_reducer *r) {
    for (int b = 0; r->buckets && b < r->nbuckets; b++) {
        rbucket *bk = &r->buckets[b];
        for (int k = 0; bk->views && k < bk->nvars; k++) tn_tensor_release(bk->views[k]);
        free(bk->views);
        free(bk->vars);
        tn_tensor_release(bk->contents);
        tn_tensor_release(bk->wire);
    }
    free(r->buckets);
    r->buckets = NULL;
    r->nbuckets = 0;
}

/* ---- construction --------------------------------------------------------------------- */
static tn_status hook_fn(void *ctx, int64_t key, tn_tensor *leaf, bool has_grad) {
    (void)leaf;
    return tn_reducer_autograd_hook(ctx, (int)key, has_grad);
}

static void drop_work(tn_reducer *r) {
    for (int b = 0; b < r->nbuckets; b++) {
        rbucket *bk = &r->buckets[b];
        if (bk->work) {
            void *u = r->host.unlock ? r->host.unlock() : NULL;
            tn_pg_work_wait(bk->work, 0);
            if (r->host.relock) r->host.relock(u);
            tn_pg_work_release(bk->work);
            bk->work = NULL;
        }
        if (bk->handle && r->comm.free_handle) r->comm.free_handle(r->comm.ctx, bk->handle);
        bk->handle = NULL;
        bk->launched = false;
        tn_tensor_release(bk->wire);
        bk->wire = NULL;
    }
    if (r->used_work) {
        void *u = r->host.unlock ? r->host.unlock() : NULL;
        tn_pg_work_wait(r->used_work, 0);
        if (r->host.relock) r->host.relock(u);
        tn_pg_work_release(r->used_work);
        r->used_work = NULL;
    }
    tn_dist_clear();
}

void tn_reducer_free(tn_reducer *r) {
    if (!r) return;
    drop_work(r);
    for (int i = 0; i < r->nparams; i++)
        if (r->params[i]) {
            tn_autograd_remove_acc_hooks(r->params[i], r);
            tn_tensor_release(r->params[i]);
        }
    free_buckets(r);
    tn_tensor_release(r->local_used);
    tn_tensor_release(r->used_wire);
    free(r->params);
    free(r->rebuilt);
    free(r->loc_bucket);
    free(r->loc_intra);
    free(r->ready);
    free(r->unused);
    free(r);
}

tn_status tn_reducer_new(tn_pg *pg, int nparams, tn_tensor *const *params, int nbuckets, const int *bucket_start,
                         const int *bucket_idx, bool find_unused, bool grad_as_view, const tn_reducer_host *host,
                         tn_reducer **out) {
    *out = NULL;
    tn_reducer *r = calloc(1, sizeof *r);
    if (!r) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    r->pg = pg;
    r->nparams = nparams;
    r->find_unused = find_unused;
    r->grad_as_view = grad_as_view;
    if (host) r->host = *host;
    r->params = calloc((size_t)nparams + 1, sizeof(tn_tensor *));
    r->rebuilt = calloc((size_t)nparams + 1, sizeof(int));
    r->loc_bucket = malloc(sizeof(int) * ((size_t)nparams + 1));
    r->loc_intra = malloc(sizeof(int) * ((size_t)nparams + 1));
    r->ready = calloc((size_t)nparams + 1, 1);
    r->unused = calloc((size_t)nparams + 1, sizeof(int));
    tn_status st = TN_OK;
    if (!r->params || !r->rebuilt || !r->loc_bucket || !r->loc_intra || !r->ready || !r->unused) {
        st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
        goto error;
    }
    for (int i = 0; i < nparams; i++) {
        tn_tensor_retain(params[i]);
        r->params[i] = params[i];
        r->loc_bucket[i] = -1;
    }
    int64_t n1 = nparams;
    if ((st = tn_tensor_zeros(1, &n1, TN_DTYPE_INT32, tn_device_cpu(), &r->local_used)) != TN_OK) goto error;
    if ((st = tn_tensor_zeros(1, &n1, TN_DTYPE_INT32, tn_device_cpu(), &r->used_wire)) != TN_OK) goto error;
    if ((st = init_buckets(r, nbuckets, bucket_start, bucket_idx)) != TN_OK) goto error;
    for (int i = 0; i < nparams; i++)
        if ((st = tn_autograd_add_acc_hook(params[i], hook_fn, r, i)) != TN_OK) goto error;
    *out = r;
    return TN_OK;
error:
    tn_reducer_free(r);
    return st;
}

/* ---- accessors ------------------------------------------------------------------------ */
int tn_reducer_num_buckets(const tn_reducer *r) { return r->nbuckets; }
tn_tensor *tn_reducer_param(const tn_reducer *r, int i) { return r->params[i]; }
tn_pg *tn_reducer_pg(const tn_reducer *r) { return r->pg; }
int64_t tn_reducer_bucket_bytes(const tn_reducer *r, int b) {
    const tn_tensor *c = r->buckets[b].contents;
    return tn_tensor_numel(c) * (int64_t)tn_dtype_itemsize(c->dtype);
}
void tn_reducer_bucket(const tn_reducer *r, int b, int *nvars, const int **vars, tn_tensor **contents,
                       tn_tensor *const **views) {
    const rbucket *bk = &r->buckets[b];
    *nvars = bk->nvars;
    *vars = bk->vars;
    *contents = bk->contents;
    *views = bk->views;
}

tn_status tn_reducer_set_comm(tn_reducer *r, int builtin, const tn_reducer_comm *comm) {
    if (r->builtin || r->has_comm)
        return tn_error(TN_ERR_RUNTIME, "register_comm_hook or register_builtin_comm_hook can only be called once.");
    if (comm) {
        r->comm = *comm;
        r->has_comm = true;
    } else if (builtin == TN_REDUCER_HOOK_ALLREDUCE || builtin == TN_REDUCER_HOOK_FP16_COMPRESS) {
        r->builtin = builtin;
    } else {
        return tn_error(TN_ERR_RUNTIME, "Unknown comm hook type.");
    }
    return TN_OK;
}

/* ---- one iteration ---------------------------------------------------------------------- */

/* Pointer set (open addressing) for the graph walk. */
typedef struct pset {
    const void **k;
    size_t cap, n;
} pset;

static size_t phash(const void *p) {
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

/* 1: inserted, 0: present, -1: out of memory */
static int pset_add(pset *s, const void *p) {
    if ((s->n + 1) * 2 > s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 256;
        const void **nk = calloc(nc, sizeof(void *));
        if (!nk) return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->k[i]) {
                size_t h = phash(s->k[i]) & (nc - 1);
                while (nk[h]) h = (h + 1) & (nc - 1);
                nk[h] = s->k[i];
            }
        free(s->k);
        s->k = nk;
        s->cap = nc;
    }
    size_t h = phash(p) & (s->cap - 1);
    while (s->k[h]) {
        if (s->k[h] == p) return 0;
        h = (h + 1) & (s->cap - 1);
    }
    s->k[h] = p;
    s->n++;
    return 1;
}

static bool pset_has(const pset *s, const void *p) {
    if (!s->cap) return false;
    size_t h = phash(p) & (s->cap - 1);
    while (s->k[h]) {
        if (s->k[h] == p) return true;
        h = (h + 1) & (s->cap - 1);
    }
    return false;
}

/* upstream's search_unused_parameters: parameters whose AccumulateGrad the graph of the
 * outputs does not reach. Compared by the leaf tensor, since a leaf's AccumulateGrad
 * node lives only as long as some graph holds it. */
static tn_status search_unused(tn_reducer *r, int nout, tn_tensor *const *outs) {
    pset seen = {0}, leaves = {0};
    tn_node **queue = NULL;
    size_t nq = 0, capq = 0;
    tn_status st = TN_OK;
    for (int i = 0; i < nout && st == TN_OK; i++) {
        tn_node *fn = tn_grad_fn(outs[i]);
        if (!fn) continue;
        int a = pset_add(&seen, fn);
        if (a < 0) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); break; }
        if (!a) continue;
        if (nq == capq) {
            capq = capq ? capq * 2 : 64;
            tn_node **q = realloc(queue, capq * sizeof *q);
            if (!q) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); break; }
            queue = q;
        }
        queue[nq++] = fn;
    }
    for (size_t q = 0; q < nq && st == TN_OK; q++) {
        tn_node *n = queue[q];
        if (n->kind == TN_NODE_ACCUMULATE && n->variable && pset_add(&leaves, n->variable) < 0) {
            st = tn_error(TN_ERR_NO_MEMORY, "out of memory");
            break;
        }
        for (int e = 0; e < n->num_next; e++) {
            tn_node *c = n->next[e].fn;
            if (!c) continue;
            int a = pset_add(&seen, c);
            if (a < 0) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); break; }
            if (!a) continue;
            if (nq == capq) {
                capq = capq ? capq * 2 : 64;
                tn_node **nqp = realloc(queue, capq * sizeof *nqp);
                if (!nqp) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); break; }
                queue = nqp;
            }
            queue[nq++] = c;
        }
    }
    r->nunused = 0;
    if (st == TN_OK)
        for (int i = 0; i < r->nparams; i++)
            if (!pset_has(&leaves, r->params[i])) r->unused[r->nunused++] = i;
    free(seen.k);
    free(leaves.k);
    free(queue);
    return st;
}

tn_status tn_reducer_prepare_for_backward(tn_reducer *r, int nout, tn_tensor *const *outs) {
    r->expect_hooks = true;
    r->next_bucket = 0;
    for (int b = 0; b < r->nbuckets; b++) r->buckets[b].pending = r->buckets[b].nvars;
    r->has_marked_unused = false;
    r->finalize_queued = false;
    memset(r->ready, 0, (size_t)r->nparams);
    if (r->find_unused) TN_TRY(search_unused(r, nout, outs));
    else r->nunused = 0;
    return TN_OK;
}

tn_status tn_reducer_check_finalized(tn_reducer *r) {
    if (!r->require_finalize) return TN_OK;
    char idx[512];
    int w = 0;
    idx[0] = 0;
    for (int i = 0; i < r->nparams && w < (int)sizeof idx - 16; i++)
        if (!r->ready[i]) w += snprintf(idx + w, sizeof idx - (size_t)w, "%s%d", w ? ", " : "", i);
    return tn_error(TN_ERR_RUNTIME,
                    "Expected to have finished reduction in the prior iteration before starting a new one. This "
                    "error indicates that your module has parameters that were not used in producing loss. %s"
                    "\nParameter indices which did not receive grad for rank %d: %s",
                    r->find_unused ? "Since `find_unused_parameters=True` is enabled, this likely  means that not "
                                     "all `forward` outputs participate in computing loss. You can fix this by "
                                     "making sure all `forward` function outputs participate in calculating loss."
                                   : "You can enable unused parameter detection by passing the keyword argument "
                                     "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, "
                                     "and by \nmaking sure all `forward` function outputs participate in calculating "
                                     "loss.",
                    tn_pg_rank(r->pg), idx);
}

/* Work on the group's worker thread: all-reduce (SUM) of t. */
typedef struct ar_ctx {
    tn_tensor *t;
    uint64_t seq;
} ar_ctx;

static tn_status run_allreduce(tn_pg *pg, void *p) {
    ar_ctx *c = p;
    return tn_pg_allreduce(pg, c->seq, tn_tensor_data(c->t), (size_t)tn_tensor_numel(c->t), c->t->dtype,
                           TN_REDOP_SUM);
}

static void ar_free(void *p) {
    ar_ctx *c = p;
    tn_tensor_release(c->t);
    free(c);
}

static tn_status enqueue_allreduce(tn_pg *pg, tn_tensor *t, tn_pg_work **out) {
    TN_TRY(tn_dist_check_reduce(t->dtype, TN_REDOP_SUM));
    ar_ctx *c = calloc(1, sizeof *c);
    if (!c) return tn_error(TN_ERR_NO_MEMORY, "out of memory");
    tn_tensor_retain(t);
    c->t = t;
    c->seq = tn_pg_next_seq(pg);
    return tn_pg_enqueue(pg, run_allreduce, c, ar_free, out);
}

static tn_status launch_bucket(tn_reducer *r, int b) {
    rbucket *bk = &r->buckets[b];
    bk->launched = true;
    if (r->has_comm) return r->comm.launch(r->comm.ctx, r, b, &bk->handle);
    int ws = tn_pg_size(r->pg);
    if (r->builtin == TN_REDUCER_HOOK_ALLREDUCE) {
        /* upstream's AllReduceCommHook: divide first (avoids fp16 overflow), then sum */
        TN_TRY(t_div(bk->contents, ws));
    } else if (r->builtin == TN_REDUCER_HOOK_FP16_COMPRESS) {
        /* FP16CompressCommHook: to float16, divide, sum in float16, copy back at finalize */
        tn_value a[7] = {tn_value_tensor(bk->contents), {.tag = TN_V_DTYPE}, {.tag = TN_V_NONE}, {.tag = TN_V_NONE},
                         {.tag = TN_V_NONE}, tn_value_bool(false), {.tag = TN_V_NONE}}, res[2] = {{0}};
        a[1].u.dtype = TN_DTYPE_FLOAT16;
        TN_TRY(tn_dispatch(TN_OP__to_copy, a, res));
        tn_tensor_release(bk->wire);
        bk->wire = res[0].u.t;
        TN_TRY(t_div(bk->wire, ws));
        return enqueue_allreduce(r->pg, bk->wire, &bk->work);
    }
    return enqueue_allreduce(r->pg, bk->contents, &bk->work);
}

/* upstream's finalize callback, as the engine sees it */
static tn_status finalize_cb(void *p) { return tn_reducer_finalize(p); }

static tn_status mark_ready(tn_reducer *r, int i) {
    if (r->ready[i])
        return tn_error(TN_ERR_RUNTIME,
                        "Expected to mark a variable ready only once. This error is caused by one of the following "
                        "reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model "
                        "parameters are not shared across multiple concurrent forward-backward passes. or try to use "
                        "_set_static_graph() as a workaround if this module graph does not change during training "
                        "loop.2) Reused parameters in multiple reentrant backward passes. For example, if you use "
                        "multiple `checkpoint` functions to wrap the same part of your model, it would result in the "
                        "same set of parameters been used by different reentrant backward passes multiple times, and "
                        "hence marking a variable ready multiple times. DDP does not support such use cases in "
                        "default. You can try to use _set_static_graph() as a workaround if your module graph does "
                        "not change over iterations.\nParameter at index %d has been marked as ready twice. This "
                        "means that multiple autograd engine  hooks have fired for this particular parameter during "
                        "this iteration.",
                        i);
    r->ready[i] = 1;
    r->require_finalize = true;
    rbucket *bk = &r->buckets[r->loc_bucket[i]];
    tn_tensor *view = bk->views[r->loc_intra[i]];
    tn_tensor *p = r->params[i];
    tn_autograd_meta *m = tn_autograd_meta_peek(p);
    tn_tensor *grad = m ? m->grad : NULL;
    bool prescale = !r->builtin && !r->has_comm;
    int ws = tn_pg_size(r->pg);
    if (grad) {
        if (tn_tensor_numel(grad) != tn_tensor_numel(view) || grad->dtype != view->dtype)
            return tn_error(TN_ERR_RUNTIME, "The gradient of parameter %d does not match the parameter's shape or dtype", i);
        if (!aliases(grad, view)) {
            TN_TRY(prescale ? scale_copy(view, grad, ws) : t_copy(view, grad));
            if (r->grad_as_view) {
                tn_tensor_retain(view);
                tn_tensor_release(m->grad);
                m->grad = view;
            }
        } else if (prescale) {
            TN_TRY(t_div(view, ws));
        }
    } else {
        TN_TRY(t_zero(view));
    }
    if (--bk->pending == 0 && r->loc_bucket[i] == r->next_bucket) {
        /* buckets are launched in order: this one and every following ready one */
        while (r->next_bucket < r->nbuckets && r->buckets[r->next_bucket].pending == 0)
            TN_TRY(launch_bucket(r, r->next_bucket++));
    }
    if (r->next_bucket == r->nbuckets && !r->finalize_queued) {
        /* every bucket is launched: all-reduce the used map after them (the same order on
         * every rank), and finalize once the engine has run every node */
        r->finalize_queued = true;
        if (r->find_unused) {
            TN_TRY(t_copy(r->used_wire, r->local_used));
            TN_TRY(enqueue_allreduce(r->pg, r->used_wire, &r->used_work));
        }
        TN_TRY(tn_autograd_queue_callback(r->host.finalize_cb ? r->host.finalize_cb : finalize_cb, r, NULL));
    }
    return TN_OK;
}

tn_status tn_reducer_autograd_hook(tn_reducer *r, int i, bool has_grad) {
    if (i < 0 || i >= r->nparams) return tn_error(TN_ERR_RUNTIME, "Out of range variable index.");
    if (r->find_unused && has_grad) {
        tn_autograd_meta *m = tn_autograd_meta_peek(r->params[i]);
        if (m && m->grad) ((int32_t *)tn_tensor_data(r->local_used))[i] = 1;
    }
    if (!r->expect_hooks) return TN_OK;
    if (!r->has_rebuilt && !r->find_unused && r->nrebuilt < r->nparams) r->rebuilt[r->nrebuilt++] = i;
    if (!r->has_marked_unused) {
        r->has_marked_unused = true;
        for (int k = 0; k < r->nunused; k++) TN_TRY(mark_ready(r, r->unused[k]));
    }
    return mark_ready(r, i);
}

static tn_status wait_work(tn_reducer *r, tn_pg_work **w) {
    void *u = r->host.unlock ? r->host.unlock() : NULL;
    tn_status st = tn_pg_work_wait(*w, 0);
    if (r->host.relock) r->host.relock(u);
    tn_pg_work_release(*w);
    *w = NULL;
    return st;
}

tn_status tn_reducer_finalize(tn_reducer *r) {
    tn_status st = TN_OK;
    r->expect_hooks = false;
    r->require_finalize = false;
    /* wait for every bucket (in order) and the used map, before touching any .grad */
    for (int b = 0; b < r->nbuckets && st == TN_OK; b++) {
        rbucket *bk = &r->buckets[b];
        if (r->has_comm) {
            tn_tensor *res = NULL;
            void *h = bk->handle;
            bk->handle = NULL;
            st = h ? r->comm.wait(r->comm.ctx, h, &res) : tn_error(TN_ERR_RUNTIME, "bucket %d was not launched", b);
            if (st == TN_OK && !res) st = tn_error(TN_ERR_RUNTIME, "the communication hook returned no tensor");
            if (st == TN_OK && !aliases(res, bk->contents)) {
                /* upstream reads the result as a flat buffer of the bucket's layout */
                int64_t n = tn_tensor_numel(res);
                if (n != tn_tensor_numel(bk->contents) || !tn_tensor_is_contiguous(res))
                    st = tn_error(TN_ERR_RUNTIME, "the communication hook must return a contiguous tensor of the "
                                                  "bucket's %lld elements (got %lld)",
                                  (long long)tn_tensor_numel(bk->contents), (long long)n);
                else {
                    int64_t one = 1;
                    tn_tensor *rf = tn_tensor_new_view(res->storage, res->offset, 1, &n, &one, res->dtype);
                    st = rf ? t_copy(bk->contents, rf) : tn_error(TN_ERR_NO_MEMORY, "out of memory");
                    tn_tensor_release(rf);
                }
            }
            tn_tensor_release(res);
        } else if (bk->work) {
            st = wait_work(r, &bk->work);
            if (st == TN_OK && bk->wire) st = t_copy(bk->contents, bk->wire);
        } else {
            st = tn_error(TN_ERR_RUNTIME, "bucket %d was not launched", b);
        }
        tn_tensor_release(bk->wire);
        bk->wire = NULL;
        bk->launched = false;
    }
    if (st == TN_OK && r->used_work) st = wait_work(r, &r->used_work);
    if (st != TN_OK) {
        drop_work(r);
        return st;
    }
    const int32_t *used = tn_tensor_data(r->used_wire);
    for (int b = 0; b < r->nbuckets && st == TN_OK; b++) {
        rbucket *bk = &r->buckets[b];
        for (int k = 0; k < bk->nvars && st == TN_OK; k++) {
            int i = bk->vars[k];
            if (r->find_unused && used[i] == 0) continue; /* unused on every rank: .grad untouched */
            tn_tensor *p = r->params[i], *view = bk->views[k];
            tn_autograd_meta *m = tn_autograd_meta_get(p);
            if (!m) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); break; }
            if (r->grad_as_view) {
                if (!m->grad) {
                    tn_tensor_retain(view);
                    m->grad = view;
                } else if (!aliases(m->grad, view)) {
                    st = tn_error(TN_ERR_RUNTIME, "Detected at least one parameter gradient is not the expected DDP "
                                                  "bucket view with gradient_as_bucket_view=True. This may happen "
                                                  "(for example) if multiple allreduce hooks were registered onto "
                                                  "the same parameter. If you hit this error, please file an issue "
                                                  "with a minimal repro.");
                }
            } else if (!m->grad) {
                tn_value a[2] = {tn_value_tensor(view), {.tag = TN_V_NONE}}, res[2] = {{0}};
                st = tn_dispatch(TN_OP_clone, a, res);
                if (st == TN_OK) m->grad = res[0].u.t;
            } else {
                st = t_copy(m->grad, view);
            }
        }
    }
    if (r->find_unused) {
        memset(tn_tensor_data(r->local_used), 0, sizeof(int32_t) * (size_t)r->nparams);
        memset(tn_tensor_data(r->used_wire), 0, sizeof(int32_t) * (size_t)r->nparams);
    }
    return st;
}

/* ---- rebuilding in gradient-ready order ---------------------------------------------- */
tn_status tn_reducer_rebuild_buckets(tn_reducer *r, int nlimits, const int64_t *limits, bool *rebuilt) {
    *rebuilt = false;
    TN_TRY(tn_reducer_check_finalized(r));
    if (r->has_rebuilt || r->find_unused || r->nrebuilt == 0) return TN_OK;
    if (r->nrebuilt != r->nparams)
        return tn_error(TN_ERR_RUNTIME, "bucket rebuilding: %d of %d parameters had their gradient ready",
                        r->nrebuilt, r->nparams);
    int n = r->nparams, nb = 0, *bstart = NULL, *bidx = NULL;
    int64_t *blim = NULL, *nbytes = malloc(sizeof(int64_t) * ((size_t)n + 1));
    int32_t *key = malloc(sizeof(int32_t) * ((size_t)n + 1));
    int64_t *wire = calloc((size_t)(1 + 2 * n), sizeof(int64_t));
    int *start = malloc(sizeof(int) * ((size_t)n + 2)), *idx = malloc(sizeof(int) * ((size_t)n + 1));
    tn_status st = TN_OK;
    if (!nbytes || !key || !wire || !start || !idx) { st = tn_error(TN_ERR_NO_MEMORY, "out of memory"); goto done; }
    for (int k = 0; k < n; k++) {
        tn_tensor *p = r->params[r->rebuilt[k]];
        nbytes[k] = tn_tensor_numel(p) * (int64_t)tn_dtype_itemsize(p->dtype);
        key[k] = (int32_t)p->dtype;
    }
    st = tn_bucket_assignment(n, nbytes, key, NULL, nlimits, limits, false, &nb, &bstart, &bidx, &blim);
    if (st != TN_OK) goto done;
    /* rank 0's assignment is everyone's (upstream's sync_bucket_indices): [nb, size of
     * each bucket ..., parameter indices ...] broadcast from rank 0 */
    wire[0] = nb;
    for (int b = 0; b < nb; b++) wire[1 + b] = bstart[b + 1] - bstart[b];
    for (int k = 0; k < n; k++) wire[1 + n + k] = r->rebuilt[bidx[k]];
    {
        void *u = r->host.unlock ? r->host.unlock() : NULL;
        st = tn_pg_broadcast(r->pg, tn_pg_next_seq(r->pg), wire, sizeof(int64_t) * (size_t)(1 + 2 * n), 0);
        if (r->host.relock) r->host.relock(u);
    }
    if (st != TN_OK) goto done;
    nb = (int)wire[0];
    if (nb < 1 || nb > n) { st = tn_error(TN_ERR_RUNTIME, "bucket rebuilding: bad bucket count %d from rank 0", nb); goto done; }
    start[0] = 0;
    for (int b = 0; b < nb; b++) start[b + 1] = start[b] + (int)wire[1 + b];
    if (start[nb] != n) { st = tn_error(TN_ERR_RUNTIME, "bucket rebuilding: rank 0 has another parameter count"); goto done; }
    for (int k = 0; k < n; k++) idx[k] = (int)wire[1 + n + k];
    free_buckets(r);
    st = init_buckets(r, nb, start, idx);
    if (st == TN_OK) {
        r->has_rebuilt = true;
        *rebuilt = true;
    }
done:
    free(nbytes); free(key); free(wire); free(start); free(idx); free(bstart); free(bidx); free(blim);
    return st;
}
