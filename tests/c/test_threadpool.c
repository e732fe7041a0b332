/* test_threadpool.c — parallel_for covers every index exactly once, for every thread count
 * and grain, nested calls run serially, and a worker that is held up before it starts its
 * chunk delays nothing: the caller runs that chunk. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "core/threadpool.h"
#include "tn_test.h"

typedef struct { atomic_int *hits; int nested_ok; } ctx_t;

static void mark(void *p, int64_t b, int64_t e) {
    ctx_t *c = p;
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&c->hits[i], 1);
}

static void nested(void *p, int64_t b, int64_t e) {
    ctx_t *c = p;
    if (!tn_in_parallel_region()) c->nested_ok = 0;
    tn_parallel_for(e - b, 1, mark, c); /* runs serially: indexes 0..(e-b) */
}

/* Worker 0 runs the idle hook while it spins between regions: held inside it, the worker
 * stands for one a busy machine has descheduled. */
static atomic_int hold_worker, worker_held;
static int holding_hook(void) {
    if (!atomic_load(&hold_worker)) return 0;
    atomic_store(&worker_held, 1);
    while (atomic_load(&hold_worker)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 1;
}

typedef struct { atomic_int hits[2]; pthread_t runner[2]; } who_t;
static void who(void *p, int64_t b, int64_t e) {
    who_t *w = p;
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&w->hits[i], 1), w->runner[i] = pthread_self();
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_held_worker(void) {
    tn_set_num_threads(2);
    who_t w0 = {{0, 0}, {0, 0}};
    tn_parallel_for(2, 1, who, &w0); /* worker 0 exists and spins */
    atomic_store(&hold_worker, 1);
    tn_pool_set_idle_hook(holding_hook);
    for (double t = now_s(); !atomic_load(&worker_held) && now_s() - t < 5;) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    TN_CHECK(atomic_load(&worker_held), "worker 0 entered the idle hook");
    who_t w = {{0, 0}, {0, 0}};
    double t0 = now_s();
    tn_parallel_for(2, 1, who, &w);
    double dt = now_s() - t0;
    TN_CHECK(w.hits[0] == 1 && w.hits[1] == 1, "each index once while the worker is held (%d, %d)", w.hits[0],
             w.hits[1]);
    TN_CHECK(pthread_equal(w.runner[1], pthread_self()), "the caller ran the held worker's chunk");
    TN_CHECK(dt < 1.0, "the region did not wait for the held worker (%.3f s)", dt);
    atomic_store(&hold_worker, 0);
    tn_pool_set_idle_hook(NULL);
    /* the worker comes back: it must not rerun the region it missed, and takes part again */
    for (int r = 0; r < 200; r++) {
        who_t v = {{0, 0}, {0, 0}};
        tn_parallel_for(2, 1, who, &v);
        TN_CHECK(v.hits[0] == 1 && v.hits[1] == 1, "region %d after the hold: each index once", r);
    }
    TN_CHECK(w.hits[0] == 1 && w.hits[1] == 1, "the missed region was not rerun");
}

int main(void) {
    const int64_t sizes[] = {1, 2, 7, 31, 33, 1000, 100003};
    for (int th = 1; th <= 5; th++) {
        tn_set_num_threads(th);
        TN_CHECK(tn_get_num_threads() == th, "thread count %d", th);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            for (int64_t grain = 1; grain <= 4096; grain *= 64) {
                int64_t n = sizes[s];
                atomic_int *hits = calloc((size_t)n, sizeof *hits);
                ctx_t c = {hits, 1};
                tn_parallel_for(n, grain, mark, &c);
                int bad = 0;
                for (int64_t i = 0; i < n; i++) bad += hits[i] != 1;
                TN_CHECK(bad == 0, "n=%lld grain=%lld threads=%d: %d indexes not hit exactly once", (long long)n,
                         (long long)grain, th, bad);
                free(hits);
            }
        }
    }
    tn_set_num_threads(3);
    atomic_int *hits = calloc(64, sizeof *hits);
    ctx_t c = {hits, 1};
    tn_parallel_for(64, 1, nested, &c);
    TN_CHECK(c.nested_ok, "nested region flag");
    TN_CHECK(!tn_in_parallel_region(), "flag cleared after region");
    free(hits);
    test_held_worker();
    return tn_test_summary();
}
