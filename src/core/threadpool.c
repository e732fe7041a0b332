/* threadpool.c — a fixed set of worker threads woken per parallel region.
 *
 * One region runs at a time (a mutex serialises callers from different Python threads).
 * A region is published by bumping an atomic generation number; workers spin on it for a
 * while after their last region (decode runs a region every few microseconds, and a
 * futex wake-up costs tens of microseconds on a VM), then sleep on a condition variable.
 * Chunk c > 0 belongs to worker c - 1, but whoever claims it first runs it: a worker
 * claims its chunk when it sees the region, the caller, once its own chunk 0 is done,
 * claims every chunk still unclaimed. So a worker that is asleep or descheduled (a busy
 * machine, a phone's other apps) delays nothing it has not started; the chunks, and so
 * every result, stay the same whoever runs them. A claim is a compare-and-swap of the
 * chunk's word from an older generation to the region's: a worker that wakes after its
 * region ended finds the word already at that generation (every chunk of a region, and
 * each chunk the region does not use, is marked before the region can end), so it never
 * reads the region's description once the caller may rewrite it. Completion is an atomic
 * countdown of the region's chunks that the caller spins on. Workers are created lazily
 * and grown when set_num_threads asks for more.
 *
 * Lost wake-ups: a worker going to sleep increments `sleepers` and re-reads the generation
 * (both sequentially consistent) before waiting under the mutex; the caller bumps the
 * generation, then reads `sleepers` and broadcasts under the mutex when any may sleep. By
 * sequential consistency either the worker sees the new generation or the caller sees the
 * sleeper. */
#include "core/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TN_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define TN_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define TN_CPU_RELAX() ((void)0)
#endif

#define TN_MAX_THREADS 256
/* How long an idle worker keeps spinning before it sleeps. */
#define TN_SPIN_NS 2000000L

static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER; /* one region at a time */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;        /* sleeping and growth */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;

static atomic_int num_threads;     /* configured; 0 = not yet decided */
static int num_workers;            /* started worker threads (excluding callers); region_lock */
static atomic_uint_fast64_t generation; /* bumped per region */
static atomic_uint_fast64_t claim[TN_MAX_THREADS + 1]; /* chunk c: the last generation it was claimed in */
static atomic_int remaining;       /* chunks of this region not yet done */
static atomic_int sleepers;        /* workers that may be waiting on `wake` */

/* the current region: written by the caller before the generation bump (release),
 * read by workers after observing it (acquire) */
static tn_parallel_fn region_fn;
static void *region_ctx;
static int64_t region_n, region_chunk;

static _Thread_local int in_region;
static _Atomic(tn_idle_fn) idle_hook;

void tn_pool_set_idle_hook(tn_idle_fn fn) { atomic_store(&idle_hook, fn); }

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
    int n = atomic_load_explicit(&num_threads, memory_order_relaxed);
    if (n) return n;
    int expected = 0;
    atomic_compare_exchange_strong(&num_threads, &expected, default_threads());
    return atomic_load(&num_threads);
}

void tn_set_num_threads(int n) {
    if (n < 1) n = 1;
    if (n > TN_MAX_THREADS) n = TN_MAX_THREADS;
    atomic_store(&num_threads, n);
}

int tn_in_parallel_region(void) { return in_region; }

static void run_chunk(int idx) {
    int64_t b = (int64_t)idx * region_chunk;
    int64_t e = b + region_chunk < region_n ? b + region_chunk : region_n;
    in_region = 1;
    if (b < e) region_fn(region_ctx, b, e);
    in_region = 0;
}

/* Claims chunk c for generation g (true: the caller must run it, then count it done). */
static int claim_chunk(int c, uint64_t g) {
    uint64_t old = atomic_load_explicit(&claim[c], memory_order_acquire);
    return old < g && atomic_compare_exchange_strong(&claim[c], &old, g);
}

static void run_claimed(int c) {
    run_chunk(c);
    atomic_fetch_sub_explicit(&remaining, 1, memory_order_acq_rel);
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Waits until the generation differs from `seen`; returns the new one. Worker 0 runs the
 * idle hook while it spins. */
static uint64_t await_generation(int id, uint64_t seen) {
    int64_t deadline = 0;
    for (unsigned spins = 0;; spins++) {
        uint64_t g = atomic_load_explicit(&generation, memory_order_acquire);
        if (g != seen) return g;
        tn_idle_fn hook = id == 0 ? atomic_load_explicit(&idle_hook, memory_order_relaxed) : NULL;
        if (!hook || !hook()) TN_CPU_RELAX();
        if ((spins & 1023) == 1023) {
            /* Let a runnable thread have this core: when the caller was descheduled onto
             * the worker's core (a busy machine), spinning would hold up the very region
             * the worker waits for (measured: 2.4 ms instead of 0.4 ms per region). */
            sched_yield();
            int64_t t = now_ns();
            if (!deadline) deadline = t + TN_SPIN_NS;
            else if (t > deadline) break;
        }
    }
    pthread_mutex_lock(&lock);
    atomic_fetch_add(&sleepers, 1);
    uint64_t g;
    while ((g = atomic_load(&generation)) == seen) pthread_cond_wait(&wake, &lock);
    atomic_fetch_sub(&sleepers, 1);
    pthread_mutex_unlock(&lock);
    return g;
}

typedef struct { int id; uint64_t seen; } worker_arg;

static void *worker_main(void *p) {
    /* The generation current at creation is passed in: reading it here would race with the
     * caller, which bumps it for the very region this worker was created for. */
    worker_arg a = *(worker_arg *)p;
    free(p);
    int id = a.id; /* worker id: runs chunk id + 1 */
    uint64_t seen = a.seen;
    pthread_setname_np(pthread_self(), "tn-pool"); /* visible in /proc and debuggers */
    for (;;) {
        seen = await_generation(id, seen);
        /* The region's description is read only after the claim succeeded (top comment). */
        if (claim_chunk(id + 1, seen)) run_claimed(id + 1);
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
    if (num_workers < chunks - 1) {
        pthread_mutex_lock(&lock);
        while (num_workers < chunks - 1) {
            pthread_t th;
            pthread_attr_t attr;
            pthread_attr_init(&attr);
            pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
            worker_arg *wa = malloc(sizeof *wa);
            if (!wa) { pthread_attr_destroy(&attr); break; }
            wa->id = num_workers;
            wa->seen = atomic_load(&generation);
            if (pthread_create(&th, &attr, worker_main, wa) != 0) {
                free(wa);
                pthread_attr_destroy(&attr);
                break;
            }
            pthread_attr_destroy(&attr);
            num_workers++;
        }
        pthread_mutex_unlock(&lock);
    }
    if (chunks - 1 > num_workers) chunks = num_workers + 1;
    region_fn = fn;
    region_ctx = ctx;
    region_n = n;
    region_chunk = (n + chunks - 1) / chunks;
    uint64_t g = atomic_load_explicit(&generation, memory_order_relaxed) + 1;
    /* Chunks past this region's count are marked taken, so their workers sit it out. */
    for (int c = chunks; c <= num_workers; c++) atomic_store_explicit(&claim[c], g, memory_order_relaxed);
    atomic_store_explicit(&remaining, chunks - 1, memory_order_relaxed);
    atomic_fetch_add(&generation, 1); /* seq_cst: publishes the region (see top comment) */
    if (atomic_load(&sleepers) > 0) {
        pthread_mutex_lock(&lock);
        pthread_cond_broadcast(&wake);
        pthread_mutex_unlock(&lock);
    }

    run_chunk(0);
    /* Chunks whose worker has not started them yet: run them here. */
    for (int c = chunks - 1; c >= 1; c--)
        if (claim_chunk(c, g)) run_claimed(c);

    for (unsigned spins = 0; atomic_load_explicit(&remaining, memory_order_acquire) > 0; spins++) {
        TN_CPU_RELAX();
        if (spins > 4096) sched_yield(); /* a descheduled worker mid-chunk: give it the core */
    }
    pthread_mutex_unlock(&region_lock);
}

/* ---- per-thread scratch (tn_thread_scratch) ---- */

typedef struct thread_scratch {
    void *p[TN_THREAD_SCRATCH_SLOTS];
    size_t cap[TN_THREAD_SCRATCH_SLOTS];
} thread_scratch;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static __thread thread_scratch *tls_scratch;

static void scratch_free(void *v) {
    thread_scratch *t = v;
    for (int i = 0; i < TN_THREAD_SCRATCH_SLOTS; i++) free(t->p[i]);
    free(t);
}

static void scratch_key_init(void) { pthread_key_create(&scratch_key, scratch_free); }

void *tn_thread_scratch(int slot, size_t bytes) {
    thread_scratch *t = tls_scratch;
    if (!t) {
        pthread_once(&scratch_once, scratch_key_init);
        t = calloc(1, sizeof *t);
        if (!t) return NULL;
        tls_scratch = t;
        pthread_setspecific(scratch_key, t);
    }
    if (bytes > t->cap[slot]) {
        free(t->p[slot]);
        t->cap[slot] = 0;
        t->p[slot] = aligned_alloc(64, (bytes + 63) / 64 * 64);
        if (!t->p[slot]) return NULL;
        t->cap[slot] = bytes;
    }
    return t->p[slot];
}
