/* alloc.c — large tensor data as page mappings in size classes, with a bounded cache of
 * freed blocks (the contract is in alloc.h). */
#include "core/alloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* A cached block carries its own list links in its first bytes (the memory is ours and
 * idle): one list per class (most recently freed first) and one across classes in the
 * order blocks were freed, whose tail is evicted first. */
typedef struct node {
    struct node *bin_next, *bin_prev, *lru_next, *lru_prev;
    size_t size;
    int cls;
} node;

enum { STEPS = 8, MAX_LOG = 48 }; /* eight classes per doubling, blocks below 2^48 bytes */
#define N_CLASSES ((MAX_LOG - 20 + 1) * STEPS)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static node *bins[N_CLASSES];
static node *lru_head, *lru_tail;
static size_t cached, cap;
static int64_t hits, maps;

static void init_cap(void) {
    const char *e = getenv("TN_ALLOC_CACHE_MB");
    long long mb = 1024;
    if (e && *e) {
        char *end;
        long long v = strtoll(e, &end, 10);
        if (*end == '\0' && v >= 0) mb = v;
    }
    cap = (size_t)mb << 20;
}

/* The class of a request: its size rounded up to the next of eight steps between powers
 * of two (2^k, 9/8·2^k, ..., 15/8·2^k), a multiple of the page size since 2^k >= 1 MiB.
 * Returns the class index, or -1 beyond the table (served uncached). */
static int class_of(size_t n, size_t *size) {
    int k = 63 - __builtin_clzll((unsigned long long)n); /* 2^k <= n < 2^(k+1) */
    size_t step = ((size_t)1 << k) / STEPS;
    size_t j = (n + step - 1) / step; /* 8 .. 16 */
    if (j == 2 * STEPS) { k++; j = STEPS; step *= 2; }
    *size = j * step;
    if (k < 20 || k > MAX_LOG) return -1;
    return (k - 20) * STEPS + (int)(j - STEPS);
}

static void unlink_node(node *b) {
    if (b->bin_prev) b->bin_prev->bin_next = b->bin_next;
    else bins[b->cls] = b->bin_next;
    if (b->bin_next) b->bin_next->bin_prev = b->bin_prev;
    if (b->lru_prev) b->lru_prev->lru_next = b->lru_next;
    else lru_head = b->lru_next;
    if (b->lru_next) b->lru_next->lru_prev = b->lru_prev;
    else lru_tail = b->lru_prev;
    cached -= b->size;
}

static void *map(size_t size) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *tn_big_alloc(size_t nbytes, bool *zeroed) {
    pthread_once(&once, init_cap);
    size_t size;
    int c = class_of(nbytes, &size);
    if (c < 0) size = (nbytes + 4095) & ~(size_t)4095;
    if (c >= 0) {
        pthread_mutex_lock(&mu);
        node *b = bins[c];
        if (b) {
            unlink_node(b);
            hits++;
        }
        pthread_mutex_unlock(&mu);
        if (b) {
            *zeroed = false;
            return b;
        }
    }
    void *p = map(size);
    if (!p && tn_big_empty_cache() > 0) p = map(size);
    if (p) {
        pthread_mutex_lock(&mu);
        maps++;
        pthread_mutex_unlock(&mu);
    }
    *zeroed = p != NULL;
    return p;
}

void tn_big_free(void *p, size_t nbytes) {
    if (!p) return;
    pthread_once(&once, init_cap);
    size_t size;
    int c = class_of(nbytes, &size);
    if (c < 0) size = (nbytes + 4095) & ~(size_t)4095;
    if (c < 0 || size > cap) {
        munmap(p, size);
        return;
    }
    node *b = p;
    b->size = size;
    b->cls = c;
    pthread_mutex_lock(&mu);
    b->bin_prev = NULL;
    b->bin_next = bins[c];
    if (bins[c]) bins[c]->bin_prev = b;
    bins[c] = b;
    b->lru_prev = NULL;
    b->lru_next = lru_head;
    if (lru_head) lru_head->lru_prev = b;
    else lru_tail = b;
    lru_head = b;
    cached += size;
    while (cached > cap) { /* evict the blocks freed longest ago */
        node *old = lru_tail;
        unlink_node(old);
        munmap(old, old->size);
    }
    pthread_mutex_unlock(&mu);
}

size_t tn_big_empty_cache(void) {
    pthread_mutex_lock(&mu);
    size_t freed = cached;
    while (lru_tail) {
        node *old = lru_tail;
        unlink_node(old);
        munmap(old, old->size);
    }
    pthread_mutex_unlock(&mu);
    return freed;
}

tn_big_stats tn_big_stats_get(void) {
    pthread_mutex_lock(&mu);
    tn_big_stats s = {(int64_t)cached, hits, maps};
    pthread_mutex_unlock(&mu);
    return s;
}

void tn_alloc_tune_malloc(void) {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    const char *e = getenv("TN_MALLOC_TUNE");
    if (e && strcmp(e, "0") == 0) return;
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}
