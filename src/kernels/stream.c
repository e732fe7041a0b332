/* stream.c — the weight trace and the prefetcher that runs ahead along it (see stream.h).
 *
 * The trace is a ring of (address, bytes) in the order products read them, numbered from 1;
 * a lossy two-way table maps an address to its last number (a third address in one bucket
 * forgets the one noted longest ago). When weight w is noted as number t and
 * the table has it at p (t - p < RING), entries p+1 .. t-1 are what followed w the last
 * time: that range is published as the prediction, in one atomic word, and w goes in at t.
 *
 * Only one pool worker runs the idle hook (the pool calls it from worker 0's spin loop), so
 * the prefetcher's cursor is that thread's alone. A new prediction keeps the cursor when
 * it lies inside the new range (the usual case: the consumer moved one weight on) and
 * restarts it at the range's start otherwise. Each call issues prefetches over at most
 * CHUNK bytes and returns, so a region published meanwhile waits well under a microsecond.
 *
 * The prefetches ask for the outer cache levels (__builtin_prefetch locality 1: prefetcht2
 * on x86): the lines are for the GEMV's threads, not for this core's L1. Measured on
 * SmolLM2's decode: docs/PERFORMANCE.md, "What changed in session 10". */
#include "kernels/stream.h"

#include "core/threadpool.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RING 4096 /* weights remembered: 19 steps of SmolLM2's 211 products */
#define MAP 8192  /* address -> last number, in buckets of two ways */
#define CHUNK 4096
#define LINE 64

typedef struct { _Atomic uintptr_t p; _Atomic int64_t bytes; } entry;
static entry ring[RING];
static _Atomic uint64_t last_number;
static _Atomic uintptr_t map_key[MAP];
static _Atomic uint64_t map_number[MAP];
/* (first number << 16) | count, 0 for none; count < RING < 2^16 */
static _Atomic uint64_t prediction;

static _Atomic int enabled = -1; /* -1: not yet read from the environment */
static _Atomic int64_t window_bytes;
static _Atomic int64_t n_notes, n_predicted, n_prefetched;

/* the prefetching thread's cursor (one thread; see the top comment) */
static uint64_t cur_pred, cur_number;
static int64_t cur_off, cur_ahead;

static int read_enabled(void) {
    const char *e = getenv("TN_WEIGHT_PREFETCH");
    int on = !(e && (strcmp(e, "0") == 0 || strcmp(e, "off") == 0 || strcmp(e, "false") == 0));
    int expected = -1;
    atomic_compare_exchange_strong(&enabled, &expected, on);
    if (atomic_load(&enabled) == 1) tn_pool_set_idle_hook(tn_stream_idle);
    return atomic_load(&enabled);
}

bool tn_stream_enabled(void) {
    int on = atomic_load_explicit(&enabled, memory_order_relaxed);
    return (on < 0 ? read_enabled() : on) == 1;
}

bool tn_stream_set_enabled(bool on) {
    bool was = tn_stream_enabled();
    atomic_store(&enabled, on ? 1 : 0);
    if (on) tn_pool_set_idle_hook(tn_stream_idle);
    else atomic_store(&prediction, 0);
    return was;
}

int64_t tn_stream_window(void) {
    int64_t w = atomic_load_explicit(&window_bytes, memory_order_relaxed);
    if (w) return w;
    long llc = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    w = llc > 0 ? llc / 4 : 4 << 20;
    if (w > (8 << 20)) w = 8 << 20;
    if (w < (1 << 20)) w = 1 << 20;
    atomic_store_explicit(&window_bytes, w, memory_order_relaxed);
    return w;
}

static size_t slot_of(uintptr_t p) { return (size_t)((p >> 6) * 0x9E3779B97F4A7C15ull >> 51) & (MAP - 1); }

void tn_stream_note(const void *p, int64_t bytes) {
    if (bytes < TN_STREAM_MIN_BYTES || !tn_stream_enabled()) return;
    uintptr_t a = (uintptr_t)p;
    uint64_t t = atomic_fetch_add_explicit(&last_number, 1, memory_order_relaxed) + 1;
    /* two ways per bucket: the address's own way if it has one, else the way noted longer ago */
    size_t s = slot_of(a) & ~(size_t)1, way = s;
    uint64_t prev = 0;
    for (size_t k = s; k < s + 2; k++)
        if (atomic_load_explicit(&map_key[k], memory_order_relaxed) == a) {
            prev = atomic_load_explicit(&map_number[k], memory_order_relaxed), way = k;
            break;
        }
    if (!prev && atomic_load_explicit(&map_number[s + 1], memory_order_relaxed) <
                     atomic_load_explicit(&map_number[s], memory_order_relaxed))
        way = s + 1;
    entry *e = &ring[t % RING];
    atomic_store_explicit(&e->p, a, memory_order_relaxed);
    atomic_store_explicit(&e->bytes, bytes, memory_order_relaxed);
    atomic_store_explicit(&map_key[way], a, memory_order_relaxed);
    atomic_store_explicit(&map_number[way], t, memory_order_relaxed);
    atomic_fetch_add_explicit(&n_notes, 1, memory_order_relaxed);
    uint64_t pred = 0;
    if (prev && t - prev > 1 && t - prev < RING) {
        pred = (prev + 1) << 16 | (t - prev - 1);
        atomic_fetch_add_explicit(&n_predicted, 1, memory_order_relaxed);
    }
    atomic_store_explicit(&prediction, pred, memory_order_release);
}

static int64_t entry_bytes(uint64_t n) { return atomic_load_explicit(&ring[n % RING].bytes, memory_order_relaxed); }

int tn_stream_idle(void) {
    uint64_t pr = atomic_load_explicit(&prediction, memory_order_acquire);
    if (!pr) return 0;
    uint64_t first = pr >> 16, end = first + (pr & 0xffff);
    int64_t window = tn_stream_window();
    if (pr != cur_pred) {
        if (cur_pred && cur_number >= first && cur_number < end) {
            int64_t ahead = cur_off;
            for (uint64_t n = first; n < cur_number && ahead < window; n++) ahead += entry_bytes(n);
            cur_ahead = ahead;
        } else {
            cur_number = first, cur_off = 0, cur_ahead = 0;
        }
        cur_pred = pr;
    }
    if (cur_number >= end || cur_ahead >= window) return 0;
    const char *p = (const char *)atomic_load_explicit(&ring[cur_number % RING].p, memory_order_relaxed);
    int64_t n = entry_bytes(cur_number);
    int64_t len = n - cur_off < CHUNK ? n - cur_off : CHUNK;
    for (int64_t o = 0; o < len; o += LINE) __builtin_prefetch(p + cur_off + o, 0, 1);
    cur_off += len > 0 ? len : 0;
    cur_ahead += len > 0 ? len : 0;
    if (cur_off >= n) cur_number++, cur_off = 0;
    atomic_fetch_add_explicit(&n_prefetched, len > 0 ? len : 0, memory_order_relaxed);
    return 1;
}

const void *tn_stream_predicted(int i) {
    uint64_t pr = atomic_load_explicit(&prediction, memory_order_acquire);
    if (!pr || i < 0 || (uint64_t)i >= (pr & 0xffff)) return NULL;
    return (const void *)atomic_load_explicit(&ring[((pr >> 16) + (uint64_t)i) % RING].p, memory_order_relaxed);
}

size_t tn_stream_bucket(const void *p) { return slot_of((uintptr_t)p) >> 1; }

tn_stream_stats tn_stream_stats_get(void) {
    return (tn_stream_stats){atomic_load(&n_notes), atomic_load(&n_predicted), atomic_load(&n_prefetched)};
}

void tn_stream_stats_reset(void) {
    atomic_store(&n_notes, 0);
    atomic_store(&n_predicted, 0);
    atomic_store(&n_prefetched, 0);
}
