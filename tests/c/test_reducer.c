/* test_reducer.c — DDP's reducer (src/dist/reducer.c) from plain C: the bucket assignment
 * against upstream's (expected values measured on torch 2.13's
 * _compute_bucket_assignment_by_size), and one backward pass through a world-of-one group:
 * hooks fill the buckets, finalize writes .grad back (copies, or the bucket views with
 * gradient_as_bucket_view), find_unused leaves an unreached parameter's .grad alone, and
 * hooks outside an expected backward (no_sync) reduce nothing. The reduction across
 * ranks is tested from Python (tests/test_ddp.py, 2 and 3 processes). */
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "dist/reducer.h"
#include "ops/dispatch.h"
#include "tn_test.h"

/* ---- bucket assignment ------------------------------------------------------------------ */
/* nine tensors: float32 of 300, 700, 100, 1, 2000 elements and float64 of 10, 5, 1000, 3 */
static const int64_t NB[9] = {1200, 80, 2800, 40, 400, 8000, 4, 8000, 24};
static const int32_t KEY[9] = {0, 1, 0, 1, 0, 1, 0, 0, 1};

static void check_assignment(const char *what, int nl, const int64_t *lim, const uint8_t *sparse, const char *want) {
    int nb, *start, *idx;
    int64_t *bl;
    tn_status st = tn_bucket_assignment(9, NB, KEY, sparse, nl, lim, true, &nb, &start, &idx, &bl);
    TN_CHECK(st == TN_OK, "%s: status %d", what, st);
    if (st != TN_OK) return;
    char got[256];
    int w = 0;
    for (int b = 0; b < nb; b++) {
        w += snprintf(got + w, sizeof got - (size_t)w, "[");
        for (int k = start[b]; k < start[b + 1]; k++)
            w += snprintf(got + w, sizeof got - (size_t)w, "%s%d", k > start[b] ? "," : "", idx[k]);
        w += snprintf(got + w, sizeof got - (size_t)w, "]:%lld ", (long long)bl[b]);
    }
    TN_CHECK(strcmp(got, want) == 0, "%s: got %s, want %s", what, got, want);
    free(start);
    free(idx);
    free(bl);
}

static void test_assignment(void) {
    check_assignment("1024", 1, (int64_t[]){1024}, NULL, "[0]:1024 [1,3,5]:1024 [2]:1024 [4,6,7]:1024 [8]:1024 ");
    check_assignment("1200,4000", 2, (int64_t[]){1200, 4000}, NULL, "[0]:1200 [1,3,5]:1200 [2,4,6,7]:4000 [8]:4000 ");
    check_assignment("1e9", 1, (int64_t[]){1000000000}, NULL, "[0,2,4,6,7]:1000000000 [1,3,5,8]:1000000000 ");
    check_assignment("1,4000", 2, (int64_t[]){1, 4000}, NULL, "[0]:1 [1]:1 [2,4,6,7]:4000 [3,5]:4000 [8]:4000 ");
    check_assignment("sparse", 1, (int64_t[]){1024}, (const uint8_t[]){0, 1, 0, 0, 0, 0, 0, 0, 0},
                     "[0]:1024 [1]:-1 [2]:1024 [3,5]:1024 [4,6,7]:1024 [8]:1024 ");
}

/* ---- one backward pass through a world of one ----------------------------------------------- */
static tn_tensor *leaf(int64_t n, float base) {
    tn_tensor *t;
    if (tn_tensor_empty(1, &n, TN_DTYPE_FLOAT32, tn_device_cpu(), &t) != TN_OK) return NULL;
    float *p = tn_tensor_data(t);
    for (int64_t i = 0; i < n; i++) p[i] = base + (float)i;
    t->flags |= TN_TENSOR_REQUIRES_GRAD;
    return t;
}

static tn_tensor *call2(tn_op_id op, tn_tensor *a, tn_tensor *b) {
    tn_value args[3] = {tn_value_tensor(a), tn_value_tensor(b), tn_value_int(1)}, r[2] = {{0}};
    return tn_dispatch(op, args, r) == TN_OK ? r[0].u.t : NULL;
}

static tn_tensor *sum(tn_tensor *a) {
    tn_value args[2] = {tn_value_tensor(a), {.tag = TN_V_NONE}}, r[2] = {{0}};
    return tn_dispatch(TN_OP_sum, args, r) == TN_OK ? r[0].u.t : NULL;
}

/* loss = sum(w0 * x0) + sum(w1 * x1); w2 takes no part. d loss / d w_i = x_i. */
static tn_status backward(tn_tensor **w, tn_tensor **x, tn_reducer *r, bool prepare) {
    tn_tensor *m0 = call2(TN_OP_mul_Tensor, w[0], x[0]), *m1 = call2(TN_OP_mul_Tensor, w[1], x[1]);
    tn_tensor *s0 = sum(m0), *s1 = sum(m1), *loss = call2(TN_OP_add_Tensor, s0, s1);
    tn_status st = TN_OK;
    if (prepare) st = tn_reducer_prepare_for_backward(r, 1, &loss);
    if (st == TN_OK) {
        tn_tensor *roots[1] = {loss};
        tn_backward_args a = {.nroots = 1, .roots = roots, .accumulate = true};
        st = tn_autograd_backward(&a);
    }
    tn_tensor_release(m0);
    tn_tensor_release(m1);
    tn_tensor_release(s0);
    tn_tensor_release(s1);
    tn_tensor_release(loss);
    return st;
}

static tn_tensor *grad_of(tn_tensor *t) {
    tn_autograd_meta *m = tn_autograd_meta_peek(t);
    return m ? m->grad : NULL;
}

static bool grad_is(tn_tensor *w, const tn_tensor *x, float times) {
    tn_tensor *g = grad_of(w);
    if (!g || tn_tensor_numel(g) != tn_tensor_numel(x)) return false;
    const float *a = tn_tensor_data(g), *b = tn_tensor_data(x);
    for (int64_t i = 0; i < tn_tensor_numel(x); i++)
        if (a[i] != b[i] * times) return false;
    return true;
}

static void test_backward(bool as_view) {
    tn_pg *pg;
    TN_CHECK(tn_pg_new(0, 1, 5000, &pg) == TN_OK && tn_pg_start(pg) == TN_OK, "group of one");
    tn_tensor *w[3] = {leaf(3, 1), leaf(4, 2), leaf(2, 3)}, *x[2];
    x[0] = leaf(3, 10);
    x[1] = leaf(4, 20);
    x[0]->flags = x[1]->flags = 0;
    /* buckets as DDP builds them (reversed): {w2, w1} then {w0} */
    int start[3] = {0, 2, 3}, idx[3] = {2, 1, 0};
    tn_reducer *r = NULL;
    tn_status st = tn_reducer_new(pg, 3, w, 2, start, idx, true, as_view, NULL, &r);
    TN_CHECK(st == TN_OK, "reducer_new: %s", tn_error_message());
    if (st != TN_OK) return;
    st = backward(w, x, r, true);
    TN_CHECK(st == TN_OK, "backward: %s", tn_error_message());
    TN_CHECK(grad_is(w[0], x[0], 1) && grad_is(w[1], x[1], 1), "reduced gradients (as_view %d)", as_view);
    TN_CHECK(grad_of(w[2]) == NULL, "an unused parameter keeps .grad None (find_unused)");
    int nv;
    const int *vars;
    tn_tensor *contents;
    tn_tensor *const *views;
    tn_reducer_bucket(r, 0, &nv, &vars, &contents, &views);
    TN_CHECK(nv == 2 && vars[0] == 2 && vars[1] == 1, "bucket 0 holds w2, w1");
    TN_CHECK((grad_of(w[1])->storage == contents->storage) == as_view, "w1's .grad is the bucket view iff as_view");
    TN_CHECK(((const float *)tn_tensor_data(contents))[2] == 20.0f, "bucket contents: w2 zeros then w1's grad");
    /* no_sync: hooks fire without prepare_for_backward; the gradient just accumulates */
    st = backward(w, x, r, false);
    TN_CHECK(st == TN_OK && grad_is(w[0], x[0], 2), "no_sync accumulates locally: %s", tn_error_message());
    /* the next synced pass reduces the accumulated sum */
    st = backward(w, x, r, true);
    TN_CHECK(st == TN_OK && grad_is(w[0], x[0], 3) && grad_is(w[1], x[1], 3), "synced after no_sync");
    TN_CHECK(tn_reducer_check_finalized(r) == TN_OK, "iteration finalized");
    tn_reducer_free(r);
    for (int i = 0; i < 3; i++) tn_tensor_release(w[i]);
    tn_tensor_release(x[0]);
    tn_tensor_release(x[1]);
    tn_pg_free(pg);
}

/* Without find_unused, the buckets are rebuilt once after the first synced iteration, in
 * gradient-ready order; gradients keep flowing through the new buckets. */
static void test_rebuild(void) {
    tn_pg *pg;
    TN_CHECK(tn_pg_new(0, 1, 5000, &pg) == TN_OK && tn_pg_start(pg) == TN_OK, "group of one");
    tn_tensor *w[3] = {leaf(3, 1), leaf(4, 2), leaf(2, 3)}, *x[2];
    x[0] = leaf(3, 10);
    x[1] = leaf(4, 20);
    x[0]->flags = x[1]->flags = 0;
    int start[2] = {0, 2}, idx[2] = {1, 0};
    tn_reducer *r = NULL;
    /* w2 takes no part: without find_unused only w0 and w1 are handed to the reducer */
    TN_CHECK(tn_reducer_new(pg, 2, w, 1, start, idx, false, true, NULL, &r) == TN_OK, "reducer_new: %s",
             tn_error_message());
    if (!r) return;
    bool rebuilt = true;
    TN_CHECK(tn_reducer_rebuild_buckets(r, 1, (int64_t[]){8}, &rebuilt) == TN_OK && !rebuilt, "nothing to rebuild yet");
    TN_CHECK(backward(w, x, r, true) == TN_OK, "first iteration: %s", tn_error_message());
    TN_CHECK(tn_reducer_rebuild_buckets(r, 1, (int64_t[]){8}, &rebuilt) == TN_OK && rebuilt, "rebuilt: %s",
             tn_error_message());
    TN_CHECK(tn_reducer_num_buckets(r) == 2, "8-byte limit: one bucket per parameter (%d)", tn_reducer_num_buckets(r));
    TN_CHECK(tn_reducer_rebuild_buckets(r, 1, (int64_t[]){8}, &rebuilt) == TN_OK && !rebuilt, "only once");
    /* gradient_as_bucket_view: the .grads moved into the new buckets' views */
    for (int b = 0; b < 2; b++) {
        int nv;
        const int *vars;
        tn_tensor *contents;
        tn_tensor *const *views;
        tn_reducer_bucket(r, b, &nv, &vars, &contents, &views);
        TN_CHECK(nv == 1 && grad_of(w[vars[0]])->storage == contents->storage, "bucket %d holds its .grad", b);
    }
    TN_CHECK(backward(w, x, r, true) == TN_OK && grad_is(w[0], x[0], 2) && grad_is(w[1], x[1], 2),
             "second iteration through the rebuilt buckets");
    tn_reducer_free(r);
    for (int i = 0; i < 3; i++) tn_tensor_release(w[i]);
    tn_tensor_release(x[0]);
    tn_tensor_release(x[1]);
    tn_pg_free(pg);
}

int main(void) {
    test_assignment();
    test_backward(false);
    test_backward(true);
    test_rebuild();
    return tn_test_summary();
}
