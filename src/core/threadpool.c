/* threadpool.c — a fixed set of worker threads woken per parallel region.
 *
 * One region runs at a time (a mutex serialises callers from different Python threads);
 * workers wait on a condition variable for a new generation number, run their chunk, and
 * the last one to finish signals the caller. Workers are created lazily and grown when
 * set_num_threads asks for more; extra workers simply sit out regions they are not in. */
#include "core/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#define TN_MAX_THREADS 256

static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER; /* one region at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;

static int num_threads;     /* configured; 0 = not yet decided */
static int num_workers;     /* started worker threads (excluding callers) */
static uint64_t generation; /* bumped per region */
static int pending;         /* chunks not yet finished in this region */

/* the current region */
static tn_parallel_fn region_fn;
static void *region_ctx;
static int64_t region_n, region_chunk;
static int region_chunks;

static _Thread_local int in_region;

static int default_threads(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int c = CPU_COUNT(&set);
        if (c > 0) return c;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int tn_get_num_threads(void) {
    pthread_mutex_lock(&lock);
    if (!num_threads) num_threads = default_threads();
    int n = num_threads;
    pthread_mutex_unlock(&lock);
    return n;
}

void tn_set_num_threads(int n) {
    if (n < 1) n = 1;
    if (n > TN_MAX_THREADS) n = TN_MAX_THREADS;
    pthread_mutex_lock(&lock);
    num_threads = n;
    pthread_mutex_unlock(&lock);
}

int tn_in_parallel_region(void) { return in_region; }

static void run_chunk(int idx) {
    int64_t b = (int64_t)idx * region_chunk;
    int64_t e = b + region_chunk < region_n ? b + region_chunk : region_n;
    in_region = 1;
    if (b < e) region_fn(region_ctx, b, e);
    in_region = 0;
}

typedef struct { int id; uint64_t seen; } worker_arg;

static void *worker_main(void *p) {
    /* The generation current at creation is passed in: reading it here would race with the
     * caller, which bumps it for the very region this worker was created for. */
    worker_arg a = *(worker_arg *)p;
    free(p);
    int id = a.id; /* worker id: runs chunk id + 1 */
    uint64_t seen = a.seen;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (generation == seen) pthread_cond_wait(&wake, &lock);
        seen = generation;
        if (id + 1 >= region_chunks) continue;
        pthread_mutex_unlock(&lock);
        run_chunk(id + 1);
        pthread_mutex_lock(&lock);
        if (--pending == 0) pthread_cond_signal(&done);
    }
    return NULL;
}

void tn_parallel_for(int64_t n, int64_t grain, tn_parallel_fn fn, void *ctx) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int threads = tn_get_num_threads();
    int64_t max_chunks = (n + grain - 1) / grain;
    int chunks = (int)(max_chunks < threads ? max_chunks : threads);
    if (chunks <= 1 || in_region) {
        int was = in_region;
        in_region = 1;
        fn(ctx, 0, n);
        in_region = was;
        return;
    }
    pthread_mutex_lock(&region_lock);
    pthread_mutex_lock(&lock);
    while (num_workers < chunks - 1) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa) { pthread_attr_destroy(&attr); break; }
        wa->id = num_workers;
        wa->seen = generation;
        if (pthread_create(&th, &attr, worker_main, wa) != 0) {
            free(wa);
            pthread_attr_destroy(&attr);
            break;
        }
        pthread_attr_destroy(&attr);
        num_workers++;
    }
    if (chunks - 1 > num_workers) chunks = num_workers + 1;
    region_fn = fn;
    region_ctx = ctx;
    region_n = n;
    region_chunk = (n + chunks - 1) / chunks;
    region_chunks = chunks;
    pending = chunks - 1;
    generation++;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);

    run_chunk(0);

    pthread_mutex_lock(&lock);
    while (pending > 0) pthread_cond_wait(&done, &lock);
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&region_lock);
}
