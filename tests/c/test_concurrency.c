/* test_concurrency.c — the thread pool and the weight stream under concurrent use, for
 * ThreadSanitizer (scripts/tsan.sh; docs/RELIABILITY.md) and as a plain stress test:
 * several caller threads run parallel regions at once (the pool serialises them) while
 * others change the thread count, note weights into the stream and read its prediction,
 * and the pool's first worker runs the stream's idle hook between regions. Every region
 * must still cover each index exactly once. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/threadpool.h"
#include "kernels/stream.h"
#include "tn_test.h"

enum { CALLERS = 3, ROUNDS = 300, WEIGHTS = 6 };

typedef struct { atomic_int *hits; int64_t n; } region_ctx;

static void mark(void *p, int64_t b, int64_t e) {
    region_ctx *c = p;
    for (int64_t i = b; i < e; i++) atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
}

static void nested(void *p, int64_t b, int64_t e) {
    region_ctx *c = p;
    tn_parallel_for(e - b, 1, mark, c); /* serial inside a region */
}

static atomic_int bad_regions, stop;
static char *weights[WEIGHTS];

/* A caller thread: regions of varied size and grain, some nested; counts bad coverage. */
static void *caller(void *arg) {
    int id = (int)(intptr_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        int64_t n = 1 + (r * 37 + id * 11) % 700;
        atomic_int *hits = calloc((size_t)n, sizeof *hits);
        if (!hits) { atomic_fetch_add(&bad_regions, 1); continue; }
        region_ctx c = {hits, n};
        tn_parallel_for(n, 1 + r % 5, (r % 7 == 0) ? nested : mark, &c);
        if (r % 7 == 0) {
            /* nested: chunk [b, e) marks 0 .. e-b-1, so index i is hit once per chunk
             * longer than i; only the total is checked */
            int64_t total = 0;
            for (int64_t i = 0; i < n; i++) total += hits[i];
            if (total != n) atomic_fetch_add(&bad_regions, 1);
        } else {
            for (int64_t i = 0; i < n; i++)
                if (hits[i] != 1) { atomic_fetch_add(&bad_regions, 1); break; }
        }
        free(hits);
    }
    return NULL;
}

/* Changes the thread count while regions run (grows the pool from another thread). */
static void *resizer(void *arg) {
    (void)arg;
    for (int r = 0; !atomic_load(&stop); r++) {
        tn_set_num_threads(1 + r % 4);
        (void)tn_get_num_threads();
        sched_yield();
    }
    return NULL;
}

/* Notes weights in a repeating order (as decode reads them) and reads the prediction
 * back, while worker 0 prefetches along it from the idle hook. */
static void *noter(void *arg) {
    (void)arg;
    for (int r = 0; !atomic_load(&stop); r++) {
        tn_stream_note(weights[r % WEIGHTS], TN_STREAM_MIN_BYTES * 2);
        (void)tn_stream_predicted(r % 3);
        if (r % 64 == 0) (void)tn_stream_stats_get();
        if (r % 1000 == 999) tn_stream_stats_reset();
        sched_yield();
    }
    return NULL;
}

int main(void) {
    for (int i = 0; i < WEIGHTS; i++) weights[i] = calloc(1, (size_t)TN_STREAM_MIN_BYTES * 2);
    tn_stream_set_enabled(true);
    tn_set_num_threads(3);
    pthread_t callers[CALLERS], rs, nt;
    pthread_create(&rs, NULL, resizer, NULL);
    pthread_create(&nt, NULL, noter, NULL);
    for (int i = 0; i < CALLERS; i++) pthread_create(&callers[i], NULL, caller, (void *)(intptr_t)i);
    for (int i = 0; i < CALLERS; i++) pthread_join(callers[i], NULL);
    atomic_store(&stop, 1);
    pthread_join(rs, NULL);
    pthread_join(nt, NULL);
    TN_CHECK(atomic_load(&bad_regions) == 0, "%d regions did not cover their indexes exactly once",
             atomic_load(&bad_regions));
    tn_stream_stats st = tn_stream_stats_get();
    TN_CHECK(st.notes >= 0 && st.prefetched_bytes >= 0, "stream stats readable");
    /* Regions after the storm still work on every thread count. */
    for (int th = 1; th <= 4; th++) {
        tn_set_num_threads(th);
        atomic_int hits[100] = {0};
        region_ctx c = {hits, 100};
        tn_parallel_for(100, 1, mark, &c);
        int bad = 0;
        for (int i = 0; i < 100; i++) bad += hits[i] != 1;
        TN_CHECK(bad == 0, "threads=%d after the concurrent phase: %d indexes wrong", th, bad);
    }
    tn_stream_set_enabled(false);
    /* the pool's workers stay parked (detached, by design); the weights must outlive
     * their prefetches, which read only addresses noted above */
    return tn_test_summary();
}
