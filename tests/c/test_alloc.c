/* test_alloc.c — the large-block allocator (core/alloc.h): size classes, reuse of freed
 * blocks, zeroing, the cache's byte cap and its eviction order, emptying, concurrent use,
 * and the storage byte accounting built on it (core/tensor.h tn_storage_stats_get). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/tensor.h"
#include "tn_test.h"

#define MB ((size_t)1 << 20)

static void *worker(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < 2000; i++) {
        size_t n = MB + (size_t)(rand_r(&seed) % (4 * MB));
        bool z;
        unsigned char *p = tn_big_alloc(n, &z);
        if (!p) return (void *)1;
        p[0] = 1;
        p[n - 1] = 2;
        tn_big_free(p, n);
    }
    return NULL;
}

int main(void) {
    setenv("TN_ALLOC_CACHE_MB", "8", 1); /* read once, at the first call */
    bool zeroed = false;

    /* a fresh block is zero; freed and asked again within its class, the same block returns */
    unsigned char *a = tn_big_alloc(MB + 1, &zeroed);
    TN_CHECK(a && zeroed, "fresh block mapped and zeroed");
    TN_CHECK(((uintptr_t)a & 4095) == 0, "page aligned");
    int nonzero = 0;
    for (size_t i = 0; i < MB + 1; i += 4096) nonzero += a[i] != 0;
    TN_CHECK(nonzero == 0, "fresh mapping reads zero");
    memset(a, 0xAB, MB + 1);
    tn_big_free(a, MB + 1);
    tn_big_stats s0 = tn_big_stats_get();
    TN_CHECK(s0.cached == (int64_t)(MB + MB / 8), "class of 1 MiB + 1 byte is 9/8 MiB (cached %lld)", (long long)s0.cached);
    unsigned char *b = tn_big_alloc(MB + MB / 8, &zeroed);
    TN_CHECK(b == a && !zeroed, "same class reuses the freed block, not known zero");
    TN_CHECK(tn_big_stats_get().hits == s0.hits + 1 && tn_big_stats_get().cached == 0, "a hit empties the slot");
    /* a request of another class does not take it */
    tn_big_free(b, MB + MB / 8);
    unsigned char *c = tn_big_alloc(2 * MB, &zeroed);
    TN_CHECK(c != b && zeroed, "another class maps a new block");
    tn_big_free(c, 2 * MB);

    /* the cap (8 MiB): blocks freed longest ago are unmapped first */
    TN_CHECK(tn_big_empty_cache() == (size_t)(MB + MB / 8 + 2 * MB), "empty_cache returns the cached bytes");
    TN_CHECK(tn_big_stats_get().cached == 0, "empty after empty_cache");
    void *blk[5];
    for (int i = 0; i < 5; i++) blk[i] = tn_big_alloc(2 * MB, &zeroed);
    for (int i = 0; i < 5; i++) tn_big_free(blk[i], 2 * MB); /* 10 MiB freed: the first one goes */
    TN_CHECK(tn_big_stats_get().cached == (int64_t)(8 * MB), "cache bounded at its cap (%lld)",
             (long long)tn_big_stats_get().cached);
    int64_t maps0 = tn_big_stats_get().maps;
    void *got[4];
    for (int i = 0; i < 4; i++) {
        got[i] = tn_big_alloc(2 * MB, &zeroed);
        TN_CHECK(got[i] == blk[4 - i], "most recently freed first (%d)", i);
    }
    TN_CHECK(tn_big_stats_get().maps == maps0, "four hits, nothing mapped");
    for (int i = 0; i < 4; i++) tn_big_free(got[i], 2 * MB);
    /* a block larger than the cap is never cached */
    void *big = tn_big_alloc(16 * MB, &zeroed);
    tn_big_free(big, 16 * MB);
    TN_CHECK(tn_big_stats_get().cached == (int64_t)(8 * MB), "a block above the cap goes back to the system");
    tn_big_empty_cache();

    /* threads allocating and freeing at once */
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    int failed = 0;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        failed += r != NULL;
    }
    TN_CHECK(failed == 0, "concurrent allocations all succeed");
    TN_CHECK(tn_big_stats_get().cached <= (int64_t)(8 * MB), "cap holds under concurrency");

    /* storages: large and small data counted while alive, zeroed on request from a reused block */
    tn_storage_stats st0 = tn_storage_stats_get(false);
    tn_storage *s1, *s2;
    TN_CHECK(tn_storage_new(3 * MB, tn_device_cpu(), false, &s1) == TN_OK, "large storage");
    memset(s1->data, 0x5A, 3 * MB);
    TN_CHECK(tn_storage_new(100, tn_device_cpu(), false, &s2) == TN_OK, "small storage");
    TN_CHECK(tn_storage_stats_get(false).live == st0.live + (int64_t)(3 * MB) + 100, "live counts both");
    tn_storage_release(s1);
    TN_CHECK(tn_storage_new(3 * MB, tn_device_cpu(), true, &s1) == TN_OK, "large zeroed storage");
    nonzero = 0;
    for (size_t i = 0; i < 3 * MB; i++) nonzero += ((unsigned char *)s1->data)[i] != 0;
    TN_CHECK(nonzero == 0, "a reused block asked zeroed is zeroed");
    TN_CHECK(tn_storage_resize(s2, 2 * MB) == TN_OK, "small storage grows into a large block");
    TN_CHECK(tn_storage_stats_get(false).live == st0.live + (int64_t)(5 * MB), "resize moves the count");
    tn_storage_release(s1);
    tn_storage_release(s2);
    TN_CHECK(tn_storage_stats_get(false).live == st0.live, "everything released");
    TN_CHECK(tn_storage_stats_get(false).peak >= st0.live + (int64_t)(5 * MB), "peak kept");
    tn_big_empty_cache();
    return tn_test_summary();
}
