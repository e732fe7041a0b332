/* test_threadpool.c — parallel_for covers every index exactly once, for every thread count
 * and grain, and nested calls run serially. */
#include <stdatomic.h>
#include <stdlib.h>

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
    return tn_test_summary();
}
